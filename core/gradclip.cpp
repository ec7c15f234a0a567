#include "gradclip.h"

#include "device.h"
#include "framework.h"
#include "layers.h"
#include "model.h"
#include "plan.h"

#include <algorithm>

namespace shardscope {

bool scalesByCopy(const FrameworkProfile &fw, const DeviceProfile &dev)
{
    return fw.multi_tensor_scale_copies && dev.vendor != "nvidia";
}

double largestMegatronTensor(const Plan &plan, int stage)
{
    const ModelShape &m = plan.model;
    bool dense = false, moe = false;
    for (int layer = 0; layer < int(m.layers); ++layer)
        if (stageOfLayer(plan.parallel, int(m.layers), layer) == stage)
            (m.moeLayer(layer) ? moe : dense) = true;
    const Parallel &pa = plan.parallel;
    return largestMegatronTensor(
        plan, stage, countParameters(m),
        largestFusedTensor(layerSpec(m, LayerKind::Dense), pa.tp, pa.expertTp()),
        m.moe.enabled() ? largestFusedTensor(layerSpec(m, LayerKind::Moe), pa.tp, pa.expertTp())
                        : 0.0,
        dense, moe);
}

double largestMegatronTensor(const Plan &plan, int stage, const ParameterCounts &pc,
                             double denseLargest, double moeLargest, bool denseHere, bool moeHere)
{
    const ModelShape &m = plan.model;
    const Parallel &pa = plan.parallel;
    const double tp = pa.tp;
    const int pp = std::max(1, pa.pp);
    double largest = 0;
    if (denseHere)
        largest = std::max(largest, denseLargest);
    if (moeHere)
        largest = std::max(largest, moeLargest);
    if (stage == 0)
        largest = std::max({largest, double(pc.embedding) / tp, double(pc.position)});
    if (stage == pp - 1) {
        // The output layer, or the embedding it shares (a copy on the last stage under pp).
        largest = std::max(largest, double(m.tied_embeddings ? pc.embedding : pc.lm_head) / tp);
        if (m.mtp_layers > 0) {
            const double h = double(m.hidden);
            largest = std::max({largest, 2.0 * h * h / tp, double(pc.embedding) / tp});
            largest = std::max(largest, m.moeLayer(int(m.layers) - 1) ? moeLargest : denseLargest);
        }
    }
    return largest;
}

} // namespace shardscope
