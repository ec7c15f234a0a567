#pragma once

// Megatron-Core's contiguous parameter and gradient buffers and the distributed optimizer's
// shards of them, element by element (Megatron-LM d98e8a6, 2026-08):
//  - megatron/core/distributed/distributed_data_parallel.py, DistributedDataParallel.__init__:
//    bucket_size defaults to max(40000000, 1000000 x dp) elements, becomes None (one bucket)
//    without overlap_grad_reduce, and on every pipeline stage but the first.
//  - megatron/core/optimizer/distrib_optimizer.py, _compute_per_buffer_param_layout: the
//    parameters in backprop (reverse) order, each start aligned to 64 elements
//    (param_layout.pad_param_start); a bucket closes once it reaches bucket_size elements or
//    at a shared embedding (which gets a bucket of its own); each bucket end padded to a
//    multiple of lcm(dp, 128), or lcm(dp, 128, 2^16) with pad_buckets_for_high_nccl_busbw
//    (param_layout.pad_bucket_end).
//  - megatron/core/distributed/param_and_grad_buffer.py, _ParamAndGradBuffer.__init__: one
//    grad_data of the padded size in the grad dtype (fp32 under grad_reduce_in_fp32), and under
//    the distributed optimizer one param_data of the same size in the parameter dtype; the
//    reduce-scatter (start_grad_sync) writes into the rank's shard of grad_data and the
//    all-gather (start_param_sync) into param_data: no further copy.
//  - distrib_optimizer.py, _build_model_gbuf_range_map: each rank owns 1/dp of every bucket;
//    its fp32 master copy (shard_fp32_from_float16_groups) and the Adam states cover only the
//    parameter elements inside that shard, not the padding.
// Without the distributed optimizer (plain Megatron DDP) the default layout has no padding.
// MindSpeed's --param-and-grad-buffer-pad B (mindspeed/core/distributed, the Megatron 0.18
// layout: _bucket_end_divisor) pads bucket ends to lcm(dp x B / gcd(B, element size), 128) (and
// 2^16 with the busbw option); 512 on Ascend.

#include <vector>

namespace shardscope {

/// One parameter tensor of a buffer, in forward (module) order.
struct BufferTensor
{
    double elements = 0;
    bool sharedEmbedding = false; ///< Megatron's `shared_embedding` attribute: its own bucket
};

struct BufferOptions
{
    int dp = 1;                   ///< the data-parallel group the buffer is sharded over
    double bucketElements = 0;    ///< bucket_size; 0: one bucket (None)
    bool distributedOptimizer = true; ///< the padded layout; false: DDP's unpadded one
    bool padForHighBusbw = false; ///< pad_buckets_for_high_nccl_busbw
    int padBytes = 0;             ///< MindSpeed's --param-and-grad-buffer-pad; 0: off
    int elementBytes = 2;         ///< the buffer's parameter element size
};

struct BufferLayout
{
    double unpadded = 0;     ///< parameter elements
    double padded = 0;       ///< elements of grad_data / param_data (64-alignment and bucket ends)
    int buckets = 0;
    double largestBucket = 0; ///< padded elements of the largest bucket
    /// The distributed optimizer's shard on the rank that owns the most parameter elements:
    /// what its master copy and states cover (parameter elements only).
    double shardElements = 0;
    /// The same rank's shard of grad_data including padding (padded / dp).
    double shardPadded = 0;
};

/// max(40M, 1M x dp): Megatron-Core's default bucket_size in elements.
double defaultBucketElements(int dp);
/// lcm(dp, 128) or lcm(dp, 128, 65536): what every bucket end is padded to; with MindSpeed's
/// pad of `padBytes`, dp x padBytes / gcd(padBytes, elementBytes) joins the lcm in place of dp.
double bucketEndDivisor(int dp, bool padForHighBusbw, int padBytes = 0, int elementBytes = 2);

/// The buffer of `tensors` (forward order; laid out in reverse) under `o`.
BufferLayout layoutBuffer(const std::vector<BufferTensor> &tensors, const BufferOptions &o);

} // namespace shardscope

namespace shardscope {

struct Plan;
struct ParameterCounts;
struct StageLayout;
struct LayerSpec;

/// Megatron-Core's DDP options a plan trains with.
struct MegatronDdp
{
    bool distributedOptimizer = true; ///< --use-distributed-optimizer (parallel.sharding "optimizer")
    bool overlapGradReduce = false;   ///< --overlap-grad-reduce: bucketing on the first stage
    double bucketElements = 0;        ///< --ddp-bucket-size; 0: defaultBucketElements(dp)
    bool padForHighBusbw = false;     ///< --ddp-pad-buckets-for-high-nccl-busbw
    int padBytes = 0;                 ///< MindSpeed's --param-and-grad-buffer-pad
};

/// The buffers of one pipeline stage's rank: one per model chunk (interleaving) and per kind
/// (dense parameters over the dp x cp group, routed experts over the expert data-parallel one),
/// summed. `plan` has its vocabulary already padded (framework.h paddedVocabPlan).
struct StageBuffers
{
    BufferLayout dense, expert;
    int chunks = 1;
};

StageBuffers megatronStageBuffers(const Plan &plan, int stage, const MegatronDdp &ddp);

/// The same, from what a caller has already derived of the plan: its parameter counts, stage
/// layout and one layer of each kind (core/model.h, core/layers.h), all of `plan.model`;
/// `moeSpec` is read only for MoE models. The last few results are kept per thread.
StageBuffers megatronStageBuffers(const Plan &plan, int stage, const MegatronDdp &ddp, const ParameterCounts &pc,
                                  const StageLayout &layout, const LayerSpec &denseSpec, const LayerSpec &moeSpec);

} // namespace shardscope
