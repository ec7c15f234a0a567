#pragma once

#include "estimate.h"
#include "plan.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <vector>

namespace shardscope {

class Catalog;

/// What the layout search varies. The base plan fixes the model, sequence length, precision,
/// framework and cluster; the search enumerates tp, pp, cp, dp, sharding, sp, recompute,
/// offload, micro-batch and virtual stages.
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
    int max_micro_batch = 16;    ///< largest micro-batch tried (divisors of the per-replica batch)
    int max_virtual_stages = 8;  ///< largest interleaved virtual-stage count tried
    /// Skip the memory estimate of layouts whose model states alone (plus the context reserve)
    /// exceed HBM; the results are the same either way (tst_search checks it).
    bool prune = true;
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
    uint64_t fitting = 0;             ///< within the bound: allocated peak + reserve <= HBM
    uint64_t replayed = 0;            ///< layouts the allocator was replayed on
    uint64_t rejected_by_allocator = 0; ///< of those, ran out of memory (fragmentation)
    double seconds = 0;               ///< wall time of the search
    bool cancelled = false;
};

/// The cross-field rules of validatePlan that the search varies (world size, divisibility by
/// tp, pp x virtual stages, cp, sp, ep, offload of parameters, tokens per micro-batch), without
/// building messages: true exactly when validatePlan would accept a plan whose fixed part
/// (device, framework, dtypes) it already accepted.
bool quickValidate(const Plan &plan);

/// Progress callback: (evaluated so far, total to evaluate). Called from the searching thread.
using SearchProgress = std::function<void(uint64_t done, uint64_t total)>;

/// Enumerates every layout, keeps those that fit with the device's runtime reserve and ranks
/// them by step time. `cancel` (may be null) is polled; a cancelled search returns what it has.
SearchOutcome searchLayouts(const SearchRequest &request, const Catalog &catalog,
                            const SearchProgress &progress = {},
                            const std::atomic<bool> *cancel = nullptr);

} // namespace shardscope
