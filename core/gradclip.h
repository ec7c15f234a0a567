#pragma once
// The optimizer step's scaled copies where Megatron runs without apex.
//
// Megatron-LM scales tensors in its optimizer step through multi_tensor_applier(
// multi_tensor_scale, ...): clip_grad_by_total_norm_fp32 (megatron/core/optimizer/clip_grads.py)
// multiplies every main gradient by max_norm / norm whenever the global norm exceeds --clip-grad
// (1.0 by default), and the mixed-precision optimizer without the distributed one copies its fp32
// main parameters into the model's (_multi_tensor_copy_this_to_that, scale 1.0) after every step.
// On NVIDIA devices that is apex's or Transformer Engine's fused kernel, in place. Without either
// (Ascend NPUs) it is Megatron-Core's local_multi_tensor_scale (megatron/core/utils.py) or
// MindSpeed's patch of amp_C.multi_tensor_scale (mindspeed/core/megatron_basic/
// requirements_basic.py), both `dst.copy_(src * scale)`: the product is a new tensor, one at a
// time, so the step holds one temporary the size of the largest tensor it scales.
//
// The largest tensor is counted as Megatron-Core builds the layers: q, k and v are one
// linear_qkv, the gate and up projections one linear_fc1 (a shared-expert MLP one tensor of all
// its shared experts), each routed expert its own (TEGroupedMLP, SequentialMLP). Under the
// distributed optimizer the clip scales each parameter's part of the rank's shard, at most the
// shard. The clip is assumed to act: it does whenever the gradient norm is above --clip-grad,
// as it is through the first steps of a run.

namespace shardscope {

struct DeviceProfile;
struct FrameworkProfile;
struct Plan;
struct RankShape;

/// Whether the optimizer step scales by copies: the profile's `multi_tensor_scale_copies` on a
/// device other than NVIDIA's.
bool scalesByCopy(const FrameworkProfile &fw, const DeviceProfile &dev);

/// Elements of the largest parameter tensor a rank of `stage` holds, in Megatron-Core's layout
/// (above; core/layers.h largestFusedTensor). `plan` is validated, with its vocabulary padded
/// (framework.h paddedVocabPlan).
double largestMegatronTensor(const Plan &plan, int stage);
/// The same, from the plan's RankShape (core/layers.h rankShape) that a caller already holds.
double largestMegatronTensor(const Plan &plan, int stage, const RankShape &shape);

} // namespace shardscope
