#pragma once

#include "memory.h"
#include "plan.h"

namespace shardscope {

/// The rough model-state accounting people do before any tool (the HCIE-AI case's worked
/// answer): parameters + gradients + master weights + optimizer states, each the parameter
/// count times its dtype's bytes, on one rank without sharding; then what full sharding over
/// dp x cp leaves, and what this layout places on its fullest rank. It leaves out
/// activations, logits and loss, communication buffers, optimizer temporaries and the runtime
/// reserve: the memory engine's full accounting has those.
struct RoughStateAccounting
{
    double parameters = 0;         ///< parameter count (MTP modules included)
    double nominal_parameters = 0; ///< the count rounded to whole billions ("7B")
    /// True when the nominal count differs from the real one by more than 1% (then the
    /// nominal figures are worth printing too).
    bool nominal_differs = false;
    double params_bytes = 0;       ///< unsharded, bytes
    double grads_bytes = 0;
    double master_bytes = 0;       ///< 0 without separate master weights
    double optimizer_bytes = 0;    ///< optimizer states (8-bit, factored, paged: device bytes)
    double total_bytes = 0;        ///< the four together
    double bytes_per_param = 0;
    int shard_ranks = 1;           ///< dp x cp, the ranks full sharding splits the states over
    double fully_sharded_bytes = 0; ///< total_bytes / shard_ranks
    /// The four states as this layout places them on its fullest rank at the optimizer step
    /// (from the memory estimate); meaningful when `layout_shards`.
    double placed_bytes = 0;
    bool layout_shards = false;    ///< sharding, tp > 1 or pp > 1: the layout splits the states
    /// Under LoRA, QLoRA or freezing: the trained parameters and their gradients and optimizer
    /// states (with master weights) at these dtypes.
    double trained_parameters = 0;
    double trained_states_bytes = 0;

    /// A figure at the nominal parameter count (bytes scaled by nominal / real).
    double nominal(double bytes) const
    {
        return parameters > 0 ? bytes * nominal_parameters / parameters : 0.0;
    }
};

RoughStateAccounting roughStateAccounting(const Plan &plan, const MemoryEstimate &memory);

} // namespace shardscope
