#pragma once

// How an MoE layer's tokens travel on one rank: what the token dispatcher (Megatron-Core's
// MoEAlltoAllTokenDispatcher / MoEAllGatherTokenDispatcher, the Hugging Face loops) hands to
// the local experts under expert parallelism (ep), expert tensor parallelism (etp) and
// sequence parallelism, the busiest rank's load, and the buffers the dispatch needs.
#include "model.h"

namespace shardscope {

struct Parallel;

struct MoeRouting
{
    /// Tokens entering the MoE block on this rank, per token of the rank's micro-batch
    /// (s x b / cp): 1 / tp under sequence parallelism, else 1.
    double tokensIn = 1;
    /// The busiest rank's routed copies over the balanced share: moe.imbalance when dropless,
    /// moe.capacity_factor (the cap) otherwise.
    double load = 1;
    /// Routed token copies this rank's local experts process, per token of the micro-batch:
    /// tokensIn x top_k x load, gathered over the etp group (Megatron all-gathers the
    /// dispatched tokens across expert-tensor-parallel ranks).
    double copies = 0;
    double localExperts = 0; ///< experts / ep
    double expertWidth = 0;  ///< one routed expert's FFN width on this rank (/ etp)
    double sharedWidth = 0;  ///< all shared experts' FFN width on this rank (/ tp)
    /// Bytes per token of the micro-batch (per hidden element: multiply by hidden x dtype) of
    /// one dispatch (all-to-all send or all-gather output) on this rank.
    double dispatchCopies = 0;
};

MoeRouting moeRouting(const ModelShape &m, const Parallel &pa);

/// Transient elements per token of the micro-batch, in units of `hidden`, that the dispatch
/// (and its combine) hold beside the expert inputs: the all-to-all's send and receive buffers
/// (ep > 1), or the all-gather's gathered hidden states.
double dispatchTransientHiddens(const ModelShape &m, const Parallel &pa);

} // namespace shardscope
