// The layout search on its target case: llama3-70b at 32K tokens on 1024 Ascend 910B2 NPUs
// (128 nodes x 8), global batch 512 sequences, every layout (tp, pp, cp, dp, sharding, sp,
// recompute, offload, micro-batch, virtual stages). Target: the whole space in at most 200 ms;
// the `evals/s` counter reports evaluations per second. By default the search walks the layouts by
// step time and estimates only those that can reach the ranking or the front; a last argument of 1
// estimates every layout (SearchRequest::count_all_fitting), with the same results.
#include "core/catalog.h"
#include "core/search.h"
#include "planvariants.h"

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>

using namespace shardscope;

namespace {

/// A search of `preset` at `seq` tokens on `nodes` x 8 910B2 NPUs under the megatron profile.
SearchRequest caseRequest(const char *name, const char *preset, int64_t seq, int nodes, int64_t globalBatch)
{
    nlohmann::json j = testing::variantBase();
    j.merge_patch({{"name", name},
                   {"model", {{"preset", preset}}},
                   {"training", {{"seq_len", seq}}},
                   {"parallel", {{"dp", 8 * nodes}}},
                   {"framework", "megatron"},
                   {"cluster", {{"nodes", nodes}}}});
    SearchRequest r;
    r.base = parsePlan(j, Catalog::builtin());
    r.global_batch = globalBatch;
    r.top = 20;
    return r;
}

/// Runs the search and reports layouts, estimated, fitting, replayed and evaluations per second.
void timeSearch(benchmark::State &state, const SearchRequest &req)
{
    const Catalog &cat = Catalog::builtin();
    uint64_t evaluated = 0, fitting = 0, estimated = 0, replayed = 0;
    for (auto _ : state) {
        const SearchOutcome out = searchLayouts(req, cat);
        benchmark::DoNotOptimize(out.ranked.data());
        evaluated += out.evaluated;
        fitting = out.fitting;
        estimated = out.estimated;
        replayed = out.replayed;
    }
    state.counters["layouts"] = double(evaluated) / double(state.iterations());
    state.counters["fitting"] = double(fitting);
    state.counters["estimated"] = double(estimated);
    state.counters["replayed"] = double(replayed);
    state.counters["evals/s"] = benchmark::Counter(double(evaluated), benchmark::Counter::kIsRate);
}

void BM_SearchLlama3_70b_1024(benchmark::State &state)
{
    SearchRequest req = caseRequest("llama3-70b 32K on 1024 x 910B2", "llama3-70b", 32768, 128, 512);
    req.prune = state.range(0) != 0;
    req.threads = int(state.range(1));
    req.axes = uint32_t(state.range(2));
    req.count_all_fitting = state.range(3) != 0;
    timeSearch(state, req);
}
// Arguments: 1 with the memory bounds' pruning (the default), 0 without (every layout
// estimated); the threads (0: one per hardware thread, the default); the axes beyond the classic
// ones (SearchAxis bits); 1 to estimate every layout that passes the bounds.
BENCHMARK(BM_SearchLlama3_70b_1024)
    ->Args({1, 0, 0, 0})
    ->Args({1, 1, 0, 0})
    ->Args({1, 0, 0, 1})
    ->Args({0, 0, 0, 0})
    ->Args({1, 0, kSearchAllAxes, 0})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(1.0);

// DeepSeek-V3 (61 layers, MLA, 256 routed experts, MTP) at 4K tokens on 2,048 Ascend 910B2 NPUs
// (256 nodes x 8), global batch 1,024 sequences, megatron profile, every axis: ep and etp, the CP
// algorithms, HSDP groups, block recompute, uneven first / last stages. Target: at most 1 s.
void BM_SearchDeepSeekV3_2048(benchmark::State &state)
{
    SearchRequest req = caseRequest("deepseek-v3 4K on 2048 x 910B2", "deepseek-v3", 4096, 256, 1024);
    req.axes = uint32_t(state.range(0));
    req.threads = int(state.range(1));
    req.count_all_fitting = state.range(2) != 0;
    timeSearch(state, req);
}
// Arguments: the axes (SearchAxis bits; 31: etp, CP algorithms, HSDP, block recompute and
// uneven stages, without MindSpeed's swap-attention and activation / norm recompute), the threads
// (0: one per hardware thread), 1 to estimate every layout that passes the bounds.
BENCHMARK(BM_SearchDeepSeekV3_2048)
    ->Args({kSearchExpertTp | kSearchCpAlgo | kSearchDpShard | kSearchRecomputeBlock | kSearchUnevenStages, 0, 0})
    ->Args({kSearchAllAxes, 0, 0})
    ->Args({kSearchAllAxes, 1, 0})
    ->Args({kSearchAllAxes, 0, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(1.0);

} // namespace

BENCHMARK_MAIN();
