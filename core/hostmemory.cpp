#include "hostmemory.h"

#include "dtype.h"
#include "memory.h"
#include "plan.h"

#include <algorithm>

namespace shardscope {

HostMemory estimateHostMemory(const Plan &plan, const std::vector<RankMemory> &offloaded,
                              const std::vector<RankMemory> &kept, double capacity)
{
    HostMemory out;
    out.capacity_bytes = capacity;
    const Offload &off = plan.memory.offload;
    const Precision &pr = plan.precision;
    const size_t stages = std::min(offloaded.size(), kept.size());
    for (size_t s = 0; s < stages; ++s) {
        const Breakdown &step = kept[s].phases[size_t(Phase::OptimizerStep)];
        HostRankMemory h;
        h.stage = kept[s].stage;
        if (off.optimizer) {
            const double master = step[Component::MasterWeights];
            const double states = step[Component::OptimizerStates];
            h.pageable += master + states;
            // The optimizer shard's element count, from the bytes it takes per element.
            const double perElement =
                (master > 0 ? bytesOf(pr.master_weights) : 0.0) +
                optimizerStateCount(pr.optimizer) * bytesOf(pr.optimizer_state);
            if (!off.grads && perElement > 0)
                h.pinned += (master + states) / perElement * bytesOf(DType::FP32);
        }
        if (off.params)
            h.pinned += step[Component::Parameters];
        if (off.grads)
            h.pinned += step[Component::Gradients];
        // Offloaded activations, or swap-attention's pinned host copies (SwapTensor.tensor_cpu)
        // of every layer in flight: what the device no longer keeps at the forward peak.
        if (off.activations || plan.memory.swap_attention) {
            const Phase f = Phase::Forward;
            h.pinned += std::max(0.0, kept[s].phases[size_t(f)][Component::Activations] -
                                          offloaded[s].phases[size_t(f)][Component::Activations]);
        }
        h.pageable += offloaded[s].host_paged_bytes; // paged optimizer states
        out.ranks.push_back(h);
    }

    // Megatron rank order: a stage is ranksPerStage consecutive ranks; node k holds ranks
    // [k * perNode, (k + 1) * perNode).
    const int64_t perStage = int64_t(plan.parallel.dp) * plan.parallel.tp * plan.parallel.cp;
    const int64_t perNode = plan.cluster.devices_per_node;
    const int64_t world = perStage * int64_t(out.ranks.size());
    auto consider = [&](int64_t node, double pinned, double pageable) {
        if (pinned + pageable > out.bytesPerNode()) {
            out.pinned_per_node = pinned;
            out.pageable_per_node = pageable;
            out.fullest_node = int(node);
        }
    };
    if (perStage % perNode == 0) {
        // Every node holds ranks of one stage only.
        for (size_t s = 0; s < out.ranks.size(); ++s)
            consider(int64_t(s) * (perStage / perNode), double(perNode) * out.ranks[s].pinned,
                     double(perNode) * out.ranks[s].pageable);
    } else {
        for (int64_t node = 0; node * perNode < world; ++node) {
            const int64_t first = node * perNode, last = std::min(world, first + perNode);
            double pinned = 0, pageable = 0;
            for (int64_t s = first / perStage; s * perStage < last; ++s) {
                const int64_t lo = std::max(first, s * perStage);
                const int64_t hi = std::min(last, (s + 1) * perStage);
                pinned += double(hi - lo) * out.ranks[size_t(s)].pinned;
                pageable += double(hi - lo) * out.ranks[size_t(s)].pageable;
            }
            consider(node, pinned, pageable);
        }
    }
    out.fits = capacity <= 0 || out.bytesPerNode() <= capacity;
    return out;
}

} // namespace shardscope
