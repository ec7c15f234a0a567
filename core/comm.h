#pragma once

#include "estimate.h"
#include "plan.h"

#include <vector>

namespace shardscope {

struct ComputeEstimate;
struct DeviceProfile;
struct FrameworkProfile;
struct LinkProfile;

enum class CollectiveKind
{
    AllReduce,
    AllGather,
    ReduceScatter,
    AllToAll,
    SendRecv
};
enum class CommGroup
{
    DP,
    TP,
    CP,
    PP,
    EP,
    ETP,     ///< expert tensor parallel (Megatron's expert_tensor_parallel_size)
    ExpertDP ///< the routed experts' data-parallel group (world / (ep x etp x pp) ranks)
};
enum class CommPhase
{
    Forward,
    Backward,
    OptimizerStep
};

std::string_view collectiveKey(CollectiveKind k); ///< "all_reduce", "all_gather", ...
std::string_view groupKey(CommGroup g);           ///< "dp", "tp", "cp", "pp", "ep"
std::string_view commPhaseKey(CommPhase p);       ///< "forward", "backward", "optimizer_step"

/// Bus-bandwidth factor of nccl-tests (doc/PERFORMANCE.md; hccl_test reports the same S):
/// busbw = algbw x factor, algbw = S / t. All-reduce 2(n-1)/n; all-gather, reduce-scatter and
/// all-to-all (n-1)/n; send/recv 1. S is the whole buffer (all-gather: the output, reduce-scatter:
/// the input). 0 for n <= 1 (no transfer).
double busBandwidthFactor(CollectiveKind k, int n);
/// Latency terms of a ring (or pairwise) algorithm: all-reduce 2(n-1) steps (reduce-scatter then
/// all-gather), all-gather / reduce-scatter / all-to-all n-1, send/recv 1.
int latencySteps(CollectiveKind k, int n);

/// Where a group of `size` ranks, `stride` apart in Megatron rank order (tp fastest, then cp,
/// dp, pp), sits on the cluster: within one node or across nodes, and the share of the node's
/// intra-node bandwidth it can use.
struct GroupPlacement
{
    int size = 1;
    bool inter_node = false;
    /// Fraction of the intra-node tier's bandwidth the group uses: 1 on a switch (NVSwitch);
    /// on a full mesh (910B HCCS: one link to each peer) the links to the group's peers only,
    /// (size - 1) / (devices_per_node - 1).
    double bandwidth_share = 1.0;
};

GroupPlacement placeGroup(int size, int stride, const Cluster &cluster, const LinkProfile &intra);

/// Time of one call (s): latency x steps + S x busbw factor / (bandwidth x share x efficiency),
/// with the link of the group's tier (a group spanning nodes runs at the inter-node link's
/// rate, the slowest hop of its ring).
double collectiveTime(CollectiveKind k, const GroupPlacement &g, double bytes,
                      const DeviceProfile &dev);

/// One collective of a step, without strings (the search's hot path uses these).
struct CommItem
{
    CollectiveKind kind = CollectiveKind::AllReduce;
    CommGroup group = CommGroup::DP;
    int group_size = 1;
    double bytes = 0;     ///< S, nccl-tests convention
    double count = 0;     ///< calls per step on this rank
    double time_s = 0;    ///< one call
    double exposed_s = 0; ///< per step, not hidden behind compute
    CommPhase phase = CommPhase::Forward;
    /// What it carries: an English phrase marked QT_TRANSLATE_NOOP("Collective", ...), translated
    /// where it is shown (context kCollectiveContext); reports in JSON keep the English.
    const char *note = "";
    /// Issued once per decoder layer and micro-batch (count = layers x micro-batches x
    /// per_layer_count); false for per-step or per-micro-batch collectives.
    bool per_layer = false;
    double per_layer_count = 0; ///< calls per layer and micro-batch
};

/// Receives the collectives of a step one by one.
class CommSink
{
public:
    virtual ~CommSink() = default;
    virtual void add(const CommItem &item) = 0;
};

/// Every collective of one training step on a rank of the slowest stage, with its overlap:
///  - DDP: gradient all-reduce in buckets of the framework's ddp_bucket_bytes, once per step
///    (no_sync on accumulation micro-batches), overlapped with the last micro-batch's backward
///    (the last bucket always exposed);
///  - ZeRO-1/2: gradient reduce-scatter in reduce buckets (overlapped like DDP) and the
///    parameter all-gather after the optimizer step (exposed);
///  - FSDP / ZeRO-3: per layer and micro-batch, all-gather in forward (prefetched one layer ahead:
///    exposed only beyond the previous layer's forward), all-gather in backward when
///    reshard_after_forward, reduce-scatter of the layer's gradients (both hidden behind the
///    layer's backward); the root module (embedding, head) gathered once per micro-batch;
///  - TP: per layer and micro-batch 2 all-reduces forward and 2 backward of T x h x c, or under
///    SP all-gather + reduce-scatter pairs of the same buffers (Korthikanti et al. 2022); full
///    recompute repeats the forward ones; all exposed (on the critical path);
///  - CP: ring exchange of the K/V block (GQA: kv_heads, not heads), cp-1 steps per layer
///    forward, K/V and dK/dV (2 (cp-1)) in backward, hidden behind the block attention
///    (Megatron context_parallel.md);
///  - PP: activations forward and gradients backward, one send/recv pair per micro-batch and
///    model chunk, exposed;
///  - EP: all-to-all dispatch and combine per layer, forward and backward, exposed.
/// T = seq_len x micro_batch / cp tokens on the rank; c = compute dtype bytes.
void forEachCollective(const Plan &plan, const DeviceProfile &dev, const FrameworkProfile &fw,
                       const ComputeEstimate &compute, CommSink &sink);

/// The inventory as report structs (plan-format.md `communication`).
std::vector<Collective> communicationInventory(const Plan &plan, const DeviceProfile &dev,
                                               const FrameworkProfile &fw,
                                               const ComputeEstimate &compute);

/// Exposed communication per step (s): the sum of exposed_s, without building strings.
double exposedCommunication(const Plan &plan, const DeviceProfile &dev, const FrameworkProfile &fw,
                            const ComputeEstimate &compute);

/// The exposed time of every collective but the data-parallel groups' (TP, CP, PP, EP, ETP):
/// what the sharding, dp_shard and offload do not touch. The data-parallel ones come first in
/// forEachCollective's order and none is negative, so this sum is at most exposedCommunication
/// of the same plan, in floating point too (the search's lower bound of a step).
double modelParallelCommunication(const Plan &plan, const DeviceProfile &dev, const FrameworkProfile &fw,
                                  const ComputeEstimate &compute);

} // namespace shardscope
