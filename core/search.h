#pragma once

#include "estimate.h"
#include "plan.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <vector>

namespace shardscope {

class Catalog;

/// Axes the search varies beyond tp, pp, cp, dp, ep, sharding, sp, recompute, offload,
/// micro-batch and virtual stages (SearchRequest::axes).
enum SearchAxis : uint32_t {
    kSearchExpertTp = 1u << 0,       ///< MoE: etp 1 beside tp's (when the plan leaves etp to tp)
    kSearchCpAlgo = 1u << 1,         ///< cp > 1: ring, Ulysses, the hybrids
    kSearchDpShard = 1u << 2,        ///< full sharding: HSDP groups of 1, 2, 4 nodes' ranks
    kSearchRecomputeBlock = 1u << 3, ///< Megatron: full recompute of 1/4, 1/2, 3/4 of a chunk's layers
    kSearchUnevenStages = 1u << 4,   ///< pp not dividing the layers: uneven first / last stages
    /// framework megatron: MindSpeed's swap-attention beside none (recompute none or selective,
    /// activations not offloaded)
    kSearchSwapAttention = 1u << 5,
    /// framework megatron, recompute none or selective: MindSpeed's activation-function and
    /// norm recompute (both) beside neither
    kSearchMindSpeedRecompute = 1u << 6,
    kSearchAllAxes = 0x7fu,
};

/// What the layout search varies. The base plan fixes the model, sequence length, precision,
/// framework and cluster; the search enumerates tp, pp (and uneven stages), cp (and its
/// algorithm), dp (and HSDP groups), ep and etp, sharding, sp, recompute (and Megatron's block
/// method), offload, micro-batch and virtual stages.
struct SearchRequest
{
    Plan base;
    /// Sequences per optimizer step across all DP ranks (global batch). 0: dp * micro_batch *
    /// grad_accum of the base plan.
    int64_t global_batch = 0;
    int top = 20;            ///< results kept, best step time first
    /// Offload sets tried besides none: optimizer; optimizer + params + grads (full sharding);
    /// activations.
    bool allow_offload = true;
    /// Constraints on the layouts returned (0 or an empty set: no constraint).
    int fixed_tp = 0;    ///< only this tensor-parallel degree
    int fixed_pp = 0;    ///< only this pipeline degree
    int fixed_cp = 0;    ///< only this context-parallel degree
    /// At most this many devices: the base cluster is cut to the largest whole number of its
    /// nodes within it (or, below one node, to the largest divisor of a node's devices). Every
    /// layout uses the whole (cut) cluster.
    int max_devices = 0;
    /// Bytes each rank keeps free: a layout fits when peak + runtime reserve + this <= HBM.
    double min_headroom_bytes = 0;
    /// Recompute modes tried, bit i for Recompute(i) (none, selective, full).
    uint8_t allowed_recompute = 0b111;
    /// Offload sets tried when allow_offload: bit 0 optimizer, bit 1 optimizer + params + grads
    /// (full sharding), bit 2 activations. No offload is always tried.
    uint8_t allowed_offload = 0b111;
    int max_micro_batch = 16;    ///< largest micro-batch tried (divisors of the per-replica batch)
    int max_virtual_stages = 8;  ///< largest interleaved virtual-stage count tried
    /// Skip the memory estimate of layouts whose model states alone (plus the context reserve)
    /// exceed HBM; the results are the same either way (tst_search checks it).
    bool prune = true;
    /// Estimate every layout that passes the bounds, so that `fitting` counts every layout that
    /// fits. Without it (and with `prune`) the search walks the layouts by step time and
    /// estimates only those that can still reach the ranking or the Pareto front: the same
    /// `ranked` and `pareto` (tst_search checks it), far fewer estimates, and `fitting` counts
    /// the fitting layouts among those estimated. Under LoRA, QLoRA or freezing there is no
    /// memory bound to walk by: every layout is estimated.
    bool count_all_fitting = false;
    /// Threads the search runs on (0: one per hardware thread). The outcome is the same for any
    /// number (tst_search checks it).
    int threads = 0;
    /// SearchAxis bits. Without an axis the plan's own choice holds (its etp, its cp algorithm
    /// for cp > 1, dp_shard 0, full recompute of every layer, even stages only, its swap-
    /// attention where a layout allows it: not with full recompute or offloaded activations, its
    /// activation-function and norm recompute except under full recompute).
    uint32_t axes = kSearchAllAxes;
    /// Context parallelism only while each rank keeps at least this many tokens of a sequence
    /// (below, its attention chunks are too small to hide the K/V exchange); 0: any cp.
    /// `fixed_cp` overrides it.
    int64_t min_tokens_per_cp_rank = 1024;
};

struct SearchResult
{
    Plan plan;
    double peak_bytes = 0;      ///< largest per-rank peak allocated
    double required_bytes = 0;  ///< peak + runtime reserve of the worst rank
    double step_s = 0;
    double tokens_per_s = 0;
    double mfu = 0;
    bool pareto = false;        ///< on the memory / step-time Pareto front
    StepEstimate step;          ///< the step-time breakdown
};

struct SearchOutcome
{
    std::vector<SearchResult> ranked; ///< fitting layouts, fastest first (at most `top`)
    std::vector<SearchResult> pareto; ///< memory/time Pareto front of all fitting layouts
    uint64_t evaluated = 0;           ///< layouts evaluated (enumerated and checked)
    uint64_t estimated = 0;           ///< layouts the memory engine estimated (valid, not pruned)
    uint64_t fitting = 0;             ///< within the bound: allocated peak + reserve <= HBM
    /// `fitting` counts every layout that fits (SearchRequest::count_all_fitting, or without
    /// pruning); otherwise those of the estimated layouts that fit, a lower bound.
    bool fitting_complete = true;
    uint64_t replayed = 0;            ///< layouts the allocator was replayed on
    uint64_t rejected_by_allocator = 0; ///< of those, ran out of memory (fragmentation)
    double seconds = 0;               ///< wall time of the search
    bool cancelled = false;
};

/// The cross-field rules of validatePlan that the search varies (world size, divisibility by
/// tp, pp x virtual stages, cp, sp, ep, offload of parameters, tokens per micro-batch), without
/// building messages: true exactly when validatePlan would accept a plan whose fixed part
/// (device, framework, dtypes) it already accepted. `fw`: the plan's framework profile (its
/// defaults decide some rules, as in validatePlan).
bool quickValidate(const Plan &plan, const FrameworkProfile &fw);
/// The two halves of quickValidate (it is their conjunction): the rules on the layout's degrees,
/// layer layout, sharding and micro-batch, and those that read the memory options the search
/// varies within them (recompute, offload, swap-attention, MindSpeed's recompute, hpZ).
bool quickValidateLayout(const Plan &plan, const FrameworkProfile &fw);
bool quickValidateMemory(const Plan &plan);

/// The cluster a search with `max_devices` runs on (see SearchRequest::max_devices).
Cluster searchCluster(const Cluster &cluster, int max_devices);

/// The largest sequence length and micro-batch with which the plan's layout still fits (the
/// memory engine plus the allocator replay, with `min_headroom_bytes` kept free): a question of
/// its own, apart from the layout search. Sequence lengths are multiples of what the layout
/// needs (cp, and tp under SP), micro-batch and grad_accum otherwise as in the plan; the micro-
/// batch is searched with the plan's sequence length. 0 when not even the smallest fits.
struct LargestFit
{
    int64_t seq_len = 0;     ///< largest fitting sequence length at the plan's micro-batch
    int64_t micro_batch = 0; ///< largest fitting micro-batch at the plan's sequence length
    int64_t seq_step = 1;    ///< the granularity searched (cp, x tp under SP)
};
LargestFit largestFit(const Plan &plan, const Catalog &catalog, double min_headroom_bytes = 0);

/// Progress callback: (evaluated so far, total to evaluate). Called from the searching thread.
using SearchProgress = std::function<void(uint64_t done, uint64_t total)>;

/// Enumerates every layout, keeps those that fit with the device's runtime reserve and ranks
/// them by step time. `cancel` (may be null) is polled; a cancelled search returns what it has.
SearchOutcome searchLayouts(const SearchRequest &request, const Catalog &catalog,
                            const SearchProgress &progress = {},
                            const std::atomic<bool> *cancel = nullptr);

} // namespace shardscope
