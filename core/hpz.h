#pragma once
// DeepSpeed ZeRO++ hierarchical partitioning (hpZ, `zero_hpz_partition_size`;
// `parallel.zero_hpz_partition_size`). Read from DeepSpeed (github.com/microsoft/DeepSpeed,
// commit 38327e07): deepspeed/runtime/zero/partition_parameters.py (Init._partition calls
// _partition_param_sec for every parameter it releases: a secondary partition of
// aligned_numel / num_ranks_in_param_group elements in param.dtype, ds_secondary_tensor, kept
// while the primary shard is over all of dp), partitioned_param_coordinator.py (fetch: the
// parameters with a secondary tensor are all-gathered over the hpZ group) and stage3.py
// (_post_step: invalidate_secondary_tensor drops them after the optimizer step, so the first
// forward of a step gathers over all of dp and every later gather, the other micro-batches'
// forwards and every backward, stays in the hpZ group).

namespace shardscope {

struct Plan;

/// The hpZ group size, 0 when hpZ is off (unset, 0 or 1).
int hpzGroup(const Plan &plan);

/// Device bytes of the secondary partitions of `elements` parameters (the rank's, before
/// ZeRO-3 sharding) stored at `bytesPerElement`: elements / hpz x bytes (DeepSpeed pads each
/// tensor to a multiple of dp first, not modelled); 0 when hpZ is off.
double hpzSecondaryBytes(const Plan &plan, double elements, double bytesPerElement);

/// Of `microBatches` forward passes of a step, how many gather the parameters within the hpZ
/// group (all but the first: the secondary partitions are made when the first forward
/// releases each layer); 0 when hpZ is off.
int hpzForwardGathers(const Plan &plan, int microBatches);

} // namespace shardscope
