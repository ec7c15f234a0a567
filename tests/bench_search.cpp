// The layout search on its target case: llama3-70b at 32K tokens on 1024 Ascend 910B2 NPUs
// (128 nodes x 8), global batch 512 sequences, every layout (tp, pp, cp, dp, sharding, sp,
// recompute, offload, micro-batch, virtual stages). Target: the whole space in at most 200 ms
// single-threaded; the `evals/s` counter reports evaluations per second.
#include "core/catalog.h"
#include "core/search.h"
#include "planvariants.h"

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>

using namespace shardscope;

namespace {

SearchRequest targetRequest()
{
    nlohmann::json j = testing::variantBase();
    j.merge_patch({{"name", "llama3-70b 32K on 1024 x 910B2"},
                   {"model", {{"preset", "llama3-70b"}}},
                   {"training", {{"seq_len", 32768}}},
                   {"parallel", {{"dp", 1024}}},
                   {"framework", "megatron"},
                   {"cluster", {{"nodes", 128}}}});
    SearchRequest r;
    r.base = parsePlan(j, Catalog::builtin());
    r.global_batch = 512;
    r.top = 20;
    return r;
}

void BM_SearchLlama3_70b_1024(benchmark::State &state)
{
    SearchRequest req = targetRequest();
    req.prune = state.range(0) != 0;
    req.threads = int(state.range(1));
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
// Arguments: 1 with the model-state pruning (the default), 0 without; the threads (0: one per
// hardware thread, the default).
BENCHMARK(BM_SearchLlama3_70b_1024)
    ->Args({1, 0})
    ->Args({1, 1})
    ->Args({0, 0})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(1.0);

} // namespace

BENCHMARK_MAIN();
