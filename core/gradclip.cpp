#include "gradclip.h"

#include "device.h"
#include "framework.h"
#include "layers.h"
#include "plan.h"

#include <algorithm>

namespace shardscope {

bool scalesByCopy(const FrameworkProfile &fw, const DeviceProfile &dev)
{
    return fw.multi_tensor_scale_copies && dev.vendor != "nvidia";
}

double largestMegatronTensor(const Plan &plan, int stage)
{
    return largestMegatronTensor(plan, stage, *rankShape(plan.model, plan.parallel));
}

double largestMegatronTensor(const Plan &plan, int stage, const RankShape &shape)
{
    const ModelShape &m = plan.model;
    const ParameterCounts &pc = shape.counts;
    const double tp = plan.parallel.tp;
    const int pp = std::max(1, plan.parallel.pp);
    const LayerMix &mix = shape.mixes[size_t(stage)];
    double largest = 0;
    if (mix.dense > 0)
        largest = std::max(largest, shape.denseLargest);
    if (mix.moe > 0)
        largest = std::max(largest, shape.moeLargest);
    if (stage == 0)
        largest = std::max({largest, double(pc.embedding) / tp, double(pc.position)});
    if (stage == pp - 1) {
        // The output layer, or the embedding it shares (a copy on the last stage under pp).
        largest = std::max(largest, double(m.tied_embeddings ? pc.embedding : pc.lm_head) / tp);
        if (m.mtp_layers > 0) {
            const double h = double(m.hidden);
            largest = std::max({largest, 2.0 * h * h / tp, double(pc.embedding) / tp});
            largest = std::max(largest, m.moeLayer(int(m.layers) - 1) ? shape.moeLargest
                                                                      : shape.denseLargest);
        }
    }
    return largest;
}

} // namespace shardscope
