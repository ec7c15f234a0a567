#pragma once

// MindSpeed's --reuse-fp32-param under the distributed optimizer, the transient side (the
// saving, the bf16 parameters kept in the fp32 master's memory, is counted with the
// parameters in memory.cpp).
//
// The fp32 master shards and the bf16 parameters with their 16-bit residuals share one buffer
// (mindspeed/core/memory/reuse_param/adaptor.py reuse_buffer_single / reuse_buffer_dis). Around
// each optimizer step the buffer is turned from bf16 + residual into fp32 and back after it
// (reuse_distrib_optimizer.py fp16_tensor_convert_to_fp32_tensor_dis and
// fp32_tensor_convert_to_fp16_tensor_dis) by transposing a bf16 view of it into a contiguous
// copy:
// - with one rank in the optimizer's data-parallel group, parameter by parameter: a copy of
//   2 x numel bf16 values, 4 B per element of the largest parameter;
// - with more, bucket by bucket through a workspace of 2 x 4096 x 4096 bf16 values (64 MiB)
//   zeroed once per bucket, each block transposed into a copy of up to the same size.
// The copy after the step exists beside the Adam states from the first step on.

namespace shardscope {

/// Bytes the conversion holds at once on a rank whose optimizer's data-parallel group has
/// `shardGroup` ranks (dp x cp), whose largest parameter has `largestElements` elements and whose
/// share of the stage's parameter buffer is `shardElements` elements.
double reuseFp32ConversionBytes(double shardGroup, double largestElements, double shardElements);

} // namespace shardscope
