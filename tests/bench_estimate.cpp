// One plan's evaluation. Targets on a 2-core machine: at most 5 us median for an 8-rank plan's
// memory estimate (no timeline, what the search evaluates); at most 1 ms for the timeline and
// the caching-allocator replay of the 8-rank case (what the workbench redraws on every change).
// Run: ./bench_estimate --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include "core/catalog.h"
#include "core/estimate.h"
#include "core/memory.h"
#include "core/allocator.h"
#include "core/timeline.h"

#include <benchmark/benchmark.h>
#include <cstdlib>
#include <fstream>
#include <sstream>

using namespace shardscope;

namespace {

Plan loadCase(const char *name)
{
    const Catalog &cat = Catalog::builtin();
    std::ifstream in(cat.dataDir() + "/cases/" + name);
    std::stringstream ss;
    ss << in.rdbuf();
    return parsePlanText(ss.str(), cat);
}

Plan pipelinePlan()
{
    // 8 ranks, every one a different pipeline stage: 8 distinct rank evaluations.
    Plan p = loadCase("hcie-ai-ddp.plan.json");
    p.parallel.dp = 1;
    p.parallel.pp = 8;
    p.training.grad_accum = 16;
    validatePlan(p, Catalog::builtin());
    return p;
}

void BM_MemoryCaseDdp8(benchmark::State &state)
{
    const Plan plan = loadCase("hcie-ai-ddp.plan.json");
    const Catalog &cat = Catalog::builtin();
    for (auto _ : state)
        benchmark::DoNotOptimize(estimateMemory(plan, cat));
}
BENCHMARK(BM_MemoryCaseDdp8);

void BM_MemoryPipeline8Stages(benchmark::State &state)
{
    const Plan plan = pipelinePlan();
    const Catalog &cat = Catalog::builtin();
    for (auto _ : state)
        benchmark::DoNotOptimize(estimateMemory(plan, cat));
}
BENCHMARK(BM_MemoryPipeline8Stages);

// The timeline of every rank kind and the allocator replayed over it (room, then the device).
void timelineAndReplay(benchmark::State &state, const Plan &plan)
{
    const Catalog &cat = Catalog::builtin();
    for (auto _ : state) {
        MemoryEstimate m = estimateMemory(plan, cat);
        replayAllocator(plan, cat, m);
        benchmark::DoNotOptimize(m);
    }
}
void BM_TimelineReplayCaseDdp8(benchmark::State &state) { timelineAndReplay(state, loadCase("hcie-ai-ddp.plan.json")); }
BENCHMARK(BM_TimelineReplayCaseDdp8)->Unit(benchmark::kMicrosecond);
void BM_TimelineReplayCaseFsdp8(benchmark::State &state) { timelineAndReplay(state, loadCase("hcie-ai-fsdp.plan.json")); }
BENCHMARK(BM_TimelineReplayCaseFsdp8)->Unit(benchmark::kMicrosecond);
void BM_TimelineReplayPipeline8Stages(benchmark::State &state) { timelineAndReplay(state, pipelinePlan()); }
BENCHMARK(BM_TimelineReplayPipeline8Stages)->Unit(benchmark::kMicrosecond);

// The caching allocator alone: every stage's timeline of the 8-stage plan listed once, then
// replayed at the device's capacity as the search replays a layout (time per event reported).
void BM_AllocatorReplayPipeline8Stages(benchmark::State &state)
{
    const Plan plan = pipelinePlan();
    const Catalog &cat = Catalog::builtin();
    const double capacity = cat.device(plan.cluster.device)->hbm_bytes;
    std::vector<StepTimeline> timelines;
    size_t events = 0;
    for (int stage = 0; stage < plan.parallel.pp; ++stage) {
        timelines.push_back(memoryTimeline(plan, cat, stage));
        events += timelines.back().events.size();
    }
    for (auto _ : state) {
        for (const StepTimeline &t : timelines)
            benchmark::DoNotOptimize(replayOnDevice(t, AllocatorRules::Npu, plan.memory.allocator, capacity));
    }
    state.counters["events"] = double(events);
    state.counters["s/event"] = benchmark::Counter(double(events) * double(state.iterations()),
                                                    benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_AllocatorReplayPipeline8Stages)->Unit(benchmark::kMicrosecond);

void BM_FullEstimateCaseFsdp8(benchmark::State &state)
{
    const Plan plan = loadCase("hcie-ai-fsdp.plan.json");
    const Catalog &cat = Catalog::builtin();
    for (auto _ : state)
        benchmark::DoNotOptimize(estimate(plan, cat));
}
BENCHMARK(BM_FullEstimateCaseFsdp8);

void BM_FullEstimatePipeline8Stages(benchmark::State &state)
{
    const Plan plan = pipelinePlan();
    const Catalog &cat = Catalog::builtin();
    for (auto _ : state)
        benchmark::DoNotOptimize(estimate(plan, cat));
}
BENCHMARK(BM_FullEstimatePipeline8Stages);

// The case under LoRA r16 on all linear layers, and QLoRA: the training method's per-layer
// accounting on top of the memory engine.
Plan methodPlan(TrainingMethod method)
{
    Plan plan = loadCase("hcie-ai-ddp.plan.json");
    plan.training.method.method = method;
    plan.training.method.lora.rank = 16;
    plan.training.method.lora.targets = kTargetAllLinear;
    return plan;
}

void BM_FullEstimateCaseMethod8(benchmark::State &state)
{
    const Plan plan = methodPlan(TrainingMethod(state.range(0)));
    const Catalog &cat = Catalog::builtin();
    for (auto _ : state)
        benchmark::DoNotOptimize(estimate(plan, cat));
}
BENCHMARK(BM_FullEstimateCaseMethod8)
    ->ArgName("method")
    ->Arg(int(TrainingMethod::LoRA))
    ->Arg(int(TrainingMethod::QLoRA));

} // namespace

BENCHMARK_MAIN();
