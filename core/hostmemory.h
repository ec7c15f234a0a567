#pragma once

#include <vector>

namespace shardscope {

struct Plan;
struct RankMemory;

/// Host (CPU) memory one rank holds for what the plan offloads, bytes.
struct HostRankMemory
{
    int stage = 0;
    double pinned = 0;   ///< page-locked: DMA staging of offloaded params, grads, activations
    double pageable = 0; ///< ordinary memory: the optimizer's master weights and states
    double total() const { return pinned + pageable; }
};

/// What offloading asks of each node's host memory, against its capacity.
struct HostMemory
{
    std::vector<HostRankMemory> ranks; ///< one per pipeline stage, like MemoryEstimate::ranks
    int fullest_node = 0;
    double pinned_per_node = 0;   ///< on the fullest node, all its ranks together
    double pageable_per_node = 0;
    double capacity_bytes = 0;    ///< host memory of one node; 0: not known, not checked
    bool fits = true;             ///< bytes per node <= capacity (true when not known)
    double bytesPerNode() const { return pinned_per_node + pageable_per_node; }
    bool offloads() const { return bytesPerNode() > 0; }
};

/// The host memory of `plan`'s offload (core/hostmemory.cpp). `offloaded` is the memory
/// estimate of the plan, `kept` that of the same plan without any offload: what leaves the
/// device is the difference, placed on the host the way the frameworks place it:
///  - optimizer offload (DeepSpeed ZeRO-Offload, offload_optimizer): the rank's shard of the
///    master weights and optimizer states in ordinary memory (CPU Adam updates them there),
///    and an fp32 copy of its gradient shard that the device copies into (pinned);
///  - parameter offload (FSDP CPUOffloadPolicy, ZeRO-3 offload_param): the parameter shard in
///    its storage dtype, pinned (FSDP2 pins by default) so that it can be copied in per layer;
///  - gradient offload: the gradient shard, pinned;
///  - activation offload (torch.autograd.graph.save_on_cpu(pin_memory=True)): the activations
///    saved during forward beyond the two layers kept on the device, pinned.
/// Ranks are placed on nodes in Megatron order (tp, cp, dp, pp): a node holds consecutive ranks,
/// so it may hold several pipeline stages. The training processes' own host memory (Python,
/// the framework, the driver's host side) is not counted.
/// `capacity` is one node's host memory in bytes (0: unknown).
HostMemory estimateHostMemory(const Plan &plan, const std::vector<RankMemory> &offloaded,
                              const std::vector<RankMemory> &kept, double capacity);

} // namespace shardscope
