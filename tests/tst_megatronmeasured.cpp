// The megatron profiles against published measurements.
//
// The megatron-legacy profile against legacy Megatron-LM (2023):
// NVIDIA/Megatron-LM pull request #482, tools/get_training_info/README.md, peaks read with
// torch.cuda.max_memory_allocated on H800 80 GB. The runs train a Llama-2-7B-shaped GPT through
// megatron/model (h 4096, 32 layers, 32 heads, SwiGLU with ffn 10880, LayerNorm, biases, learned
// positions, the GPT-2 vocabulary 50257 padded to 50304, embedding and output shared, dropout
// 0.1) at 2048 tokens with flash attention, bf16 and the distributed optimizer.
//
// The profile's terms come from that code, not from these rows: SwiGLU unfused (torch.chunk,
// silu(x1) * x2), FlashSelfAttention's rearrange(...).contiguous() of its output back to (s, b),
// the vocab-parallel cross entropy subtracting the maximum out of place. The rows only judge.
//
// The megatron profile against Megatron-LM's own functional tests gpt3_7b_tp4_pp1_memory_speed
// and gpt3_7b_tp1_pp4_memory_speed (tests/functional_tests/test_cases/gpt/, Megatron-LM main of
// 2025-10 to 2026-08): their model_config.yaml is the command line, and their
// golden_values_dev_dgx_h100.json log, from the last rank, torch.cuda.memory_stats()'s
// allocated_bytes current (after the optimizer step) and peak (a running maximum: iteration 1,
// then the steady state) at every iteration, in bytes. A GPT of 32 layers, hidden 4096, 32 heads
// in 8 query groups, GeLU FFN 16384, LayerNorm, linear biases, learned positions, vocabulary
// 131073 untied, dropout 0.1, 8192 tokens, bf16, Transformer Engine, the distributed optimizer
// with --overlap-grad-reduce and --overlap-param-gather, no recompute, 8 H100s, and
// CUBLAS_WORKSPACE_CONFIG=:4096:8 (the H100's default). The figures before and after the
// Transformer Engine 2.16 update (2026-05-29) are both kept.
//
// And against MindSpeed-LLM's CI baselines llama2_tp1_pp8_patch_gloo_ptd,
// llama2_tp2_pp4_vpp2_swap, llama2_tp2_cp4_general_double_ring, tune_llama2_tp1_pp1_lora_ptd,
// llama2_tp2_pp4_vpp2_ptd, llama3_tp2_pp2_vpp1, llama3_mcore_tp2_pp2_vpp2_noop_layer,
// seed_oss_36b_tp2pp2, qwen3_8b_tp2_pp4_vpp2_swap and qwen3_8b_tp2_pp4_vpp2 (tests/pipeline/,
// tests/st/, Ascend NPUs):
// Megatron's report_memory after iteration 1, whose "allocated" is the steady after-step figure
// (the Adam states exist from the first step on). The first two's "max allocated" is not checked:
// on every stage of both it lies one largest fp32 parameter tensor (the rank's shard of it) above
// "allocated", most likely the contiguous copy op-plugin's npu_apply_adam_w makes of a parameter
// that is a view of a larger buffer (MindSpeed's AdamW called it until 2025-04-22; not modelled,
// docs/memory-model.md). A baseline there is a ceiling (its CI passes whatever is lower), so only
// those a run recorded as they are checked: llama2_tp2_pp4_vpp2_ptd's, recorded before
// --o2-optimizer and --o2-gradient were added to its script, is not.
#include "core/catalog.h"
#include "core/memory.h"
#include "core/plan.h"
#include "planvariants.h"

#include <QTest>
#include <cmath>
#include <nlohmann/json.hpp>

using namespace shardscope;
using nlohmann::json;

namespace {

struct Run
{
    const char *name;
    int microBatch, globalBatch, dp, pp, tp;
    double measuredGiB; ///< max_memory_allocated of the fullest rank (stage 0 under pp)
};

// (MBS, GBS, DP, PP, TP) -> GiB as the README's table gives them.
const Run kRuns[] = {
    {"mbs2 dp8", 2, 2048, 8, 1, 1, 69.1},
    {"mbs4 dp4 tp2", 4, 512, 4, 1, 2, 55.7},
    {"mbs2 dp4 pp2", 2, 2048, 4, 2, 1, 49.8},
    {"mbs4 tp8", 4, 128, 1, 1, 8, 28.8},
};

/// A bf16 plan with fp32 master weights and AdamW states (what every run here trains with),
/// with `precision`'s fields on top.
Plan megatronPlan(const char *name, const json &model, const json &training, const json &parallel,
                  const json &memory, const char *framework, const char *device,
                  const json &precision = json::object())
{
    json j = testing::variantBase();
    j["precision"].merge_patch(precision);
    j["name"] = name;
    j["model"] = model;
    j["training"] = training;
    j["parallel"] = parallel;
    j["memory"] = memory;
    j["framework"] = framework;
    j["cluster"]["device"] = device;
    return parsePlan(j, Catalog::builtin());
}

/// One data row per run, by its name.
template <class Runs> void addRuns(const Runs &runs)
{
    QTest::addColumn<int>("run");
    for (int i = 0; i < int(std::size(runs)); ++i)
        QTest::addRow("%s", runs[i].name) << i;
}

Plan runPlan(const Run &r, const char *framework)
{
    return megatronPlan(r.name,
                        {{"layers", 32},
                         {"hidden", 4096},
                         {"heads", 32},
                         {"kv_heads", 32},
                         {"head_dim", 128},
                         {"ffn_hidden", 10880},
                         {"ffn", "swiglu"},
                         {"norm", "layernorm"},
                         {"linear_bias", true},
                         {"vocab", 50257},
                         {"tied_embeddings", true},
                         {"position_embedding", "learned"},
                         {"max_positions", 2048}},
                        {{"seq_len", 2048},
                         {"micro_batch", r.microBatch},
                         {"grad_accum", r.globalBatch / (r.microBatch * r.dp)}},
                        {{"dp", r.dp}, {"tp", r.tp}, {"pp", r.pp}, {"sharding", "optimizer"}},
                        {{"recompute", "none"}, {"attention", "flash"}}, framework, "h100-80g");
}

double firstRankPeakGiB(const Plan &plan)
{
    return estimateMemory(plan, Catalog::builtin()).ranks.front().peak_bytes / double(1ull << 30);
}

/// A Megatron-LM functional test as its model_config.yaml runs it, with H100 golden values
/// (MiB: bytes / 2^20).
struct FunctionalTest
{
    const char *name;
    int tp, pp, virtualStages, microBatch;
    double afterStepMiB, firstStepPeakMiB, steadyPeakMiB;
};

const FunctionalTest kFunctionalTests[] = {
    {"gpt3_7b_tp4_pp1_memory_speed", 4, 1, 1, 2, 19706.27, 47959.79, 54496.57},
    {"gpt3_7b_tp1_pp4_memory_speed (TE 2.16)", 1, 4, 8, 1, 23659.70, 50479.18, 57907.92},
    {"gpt3_7b_tp1_pp4_memory_speed", 1, 4, 8, 1, 23403.33, 50288.02, 57715.87},
};

Plan functionalTestPlan(const FunctionalTest &r)
{
    const int dp = 8 / (r.tp * r.pp);
    json parallel = {{"dp", dp}, {"tp", r.tp}, {"pp", r.pp}, {"sharding", "optimizer"}};
    if (r.virtualStages > 1) {
        parallel["pp_schedule"] = "interleaved";
        parallel["virtual_stages"] = r.virtualStages;
    }
    return megatronPlan(
        r.name,
        {{"layers", 32},
         {"hidden", 4096},
         {"heads", 32},
         {"kv_heads", 8},
         {"head_dim", 128},
         {"ffn_hidden", 16384},
         {"ffn", "gelu"},
         {"norm", "layernorm"},
         {"linear_bias", true},
         {"vocab", 131073},
         {"tied_embeddings", false},
         {"position_embedding", "learned"},
         {"max_positions", 8192}},
        {{"seq_len", 8192}, {"micro_batch", r.microBatch}, {"grad_accum", 8 / (r.microBatch * dp)}},
        parallel,
        {{"recompute", "none"},
         {"attention", "flash"},
         {"overlap_grad_reduce", true},
         {"overlap_param_gather", true}},
        "megatron", "h100-80g");
}

/// MindSpeed-LLM's Llama-3-8B CI runs of 2024 (a shortened model at 8192 tokens, tp 2 with SP, pp
/// 2 interleaved, dp 2, 8 micro-batches, the vocabulary padded to 16032 x tp, no dropout): the
/// layers, the model chunks per stage and their layout (empty: even) vary, and the memory block.
Plan llama3CiPlan(const char *name, int layers, int virtualStages, const char *layout,
                  const json &memory)
{
    json training = testing::ciTraining(8);
    training["seq_len"] = 8192;
    json parallel = {{"dp", 2},
                     {"tp", 2},
                     {"pp", 2},
                     {"sp", true},
                     {"sharding", "none"},
                     {"pp_schedule", "interleaved"},
                     {"virtual_stages", virtualStages}};
    if (*layout)
        parallel["pipeline_layout"] = layout;
    return megatronPlan(
        name, {{"preset", "llama3-8b"}, {"layers", layers}, {"vocab_divisible_by", 16032}},
        training, parallel, memory, "megatron", "ascend-910b2");
}

/// MindSpeed-LLM's Qwen3 CI runs of 2026: Qwen3-8B cut to 16 layers (vocabulary 151936 as given,
/// `model` on top), tp 2 with SP, pp 4 of 2 chunks, dp 1, 16 micro-batches of `seqLen` tokens,
/// the distributed optimizer with --overlap-grad-reduce and --overlap-param-gather.
Plan qwen3CiPlan(const char *name, const json &model, int seqLen, json memory,
                 const json &precision)
{
    json shape = {
        {"preset", "qwen3-8b"}, {"layers", 16}, {"vocab", 151936}, {"vocab_divisible_by", 1}};
    shape.merge_patch(model);
    json training = testing::ciTraining(16);
    training["seq_len"] = seqLen;
    memory.merge_patch(
        {{"attention", "flash"}, {"overlap_grad_reduce", true}, {"overlap_param_gather", true}});
    return megatronPlan(name, shape, training,
                        {{"dp", 1},
                         {"tp", 2},
                         {"pp", 4},
                         {"sp", true},
                         {"sharding", "optimizer"},
                         {"pp_schedule", "interleaved"},
                         {"virtual_stages", 2}},
                        memory, "megatron", "ascend-910b2", precision);
}

/// The estimate with the caching allocator replayed over the step (what gives the first step's
/// peak).
MemoryEstimate replayed(const Plan &plan)
{
    MemoryEstimate me = estimateMemory(plan, Catalog::builtin());
    replayAllocator(plan, Catalog::builtin(), me);
    return me;
}

double mib(double bytes)
{
    return bytes / double(1 << 20);
}

double relative(double predicted, double measured)
{
    return (predicted - measured) / measured;
}

/// A stage's relative errors against report_memory's "allocated" (after the step) and "max
/// allocated" (iteration 1's peak), logged.
struct StageErrors
{
    double after, peak;
};
StageErrors stageErrors(const RankMemory &rank, double allocated, double maxAllocated)
{
    const StageErrors e{relative(mib(rank.after_step.total()), allocated),
                        relative(mib(rank.first_step_peak_bytes), maxAllocated)};
    qInfo("stage %d: after the step %+.2f%%, first step's peak %+.2f%%", rank.stage,
          100.0 * e.after, 100.0 * e.peak);
    return e;
}

/// Whether a stage's after-step figure is within 1.5% and its first step's peak within
/// `peakTolerance` (logged).
bool stageWithin(const RankMemory &rank, double allocated, double maxAllocated,
                 double peakTolerance)
{
    const auto [after, peak] = stageErrors(rank, allocated, maxAllocated);
    return std::abs(after) < 0.015 && std::abs(peak) < peakTolerance;
}

} // namespace

class TestMegatronMeasured : public QObject
{
    Q_OBJECT

private slots:
    void peaks_data() { addRuns(kRuns); }

    // Each run's peak within 1.5% of the measured one (the pytorch profile's accuracy on FSDP
    // and DDP runs); the current megatron profile, which has none of the three legacy terms,
    // comes out lower, and by more than the tolerance: the terms are what closes the gap.
    void peaks()
    {
        QFETCH(int, run);
        const Run &r = kRuns[run];
        const double legacy = firstRankPeakGiB(runPlan(r, "megatron-legacy"));
        const double current = firstRankPeakGiB(runPlan(r, "megatron"));
        const double error = (legacy - r.measuredGiB) / r.measuredGiB;
        qInfo("%s: measured %.1f GiB, megatron-legacy %.2f GiB (%+.1f%%), megatron %.2f GiB "
              "(%+.1f%%)",
              r.name, r.measuredGiB, legacy, 100.0 * error, current,
              100.0 * (current - r.measuredGiB) / r.measuredGiB);
        QVERIFY2(std::abs(error) < 0.015, qPrintable(QStringLiteral("%1 GiB").arg(legacy)));
        QVERIFY(current < legacy);
        QVERIFY((legacy - current) / r.measuredGiB > 0.015);
    }

    void functionalTests_data() { addRuns(kFunctionalTests); }

    // The last rank (rank 7: the last pipeline stage under pp) of each run: the steady and the
    // first step's peaks and what stays allocated after the step, each within 1.5%.
    void functionalTests()
    {
        QFETCH(int, run);
        const FunctionalTest &r = kFunctionalTests[run];
        const Plan plan = functionalTestPlan(r);
        const MemoryEstimate me = replayed(plan);
        const RankMemory &rank = me.ranks.back();
        QCOMPARE(rank.stage, r.pp - 1);
        const double after = mib(rank.after_step.total());
        const double first = mib(rank.first_step_peak_bytes);
        const double peak = mib(rank.peak_bytes);
        qInfo("%s: after the step %.1f MiB against %.2f (%+.2f%%), first step's peak %.1f against "
              "%.2f (%+.2f%%), steady peak %.1f against %.2f (%+.2f%%)",
              r.name, after, r.afterStepMiB, 100.0 * relative(after, r.afterStepMiB), first,
              r.firstStepPeakMiB, 100.0 * relative(first, r.firstStepPeakMiB), peak,
              r.steadyPeakMiB, 100.0 * relative(peak, r.steadyPeakMiB));
        QVERIFY2(std::abs(relative(peak, r.steadyPeakMiB)) < 0.015,
                 qPrintable(QString::number(peak)));
        QVERIFY2(std::abs(relative(first, r.firstStepPeakMiB)) < 0.015,
                 qPrintable(QString::number(first)));
        // The interleaved run's last stage: its 8 chunks each keep their last received input
        // and its gradient after the step (Megatron's set_input_tensor; 1 GiB at 8192 tokens).
        // Without them it read -4.1% (-5.1% under Transformer Engine 2.16).
        QVERIFY2(std::abs(relative(after, r.afterStepMiB)) < 0.015,
                 qPrintable(QString::number(after)));
    }

    // MindSpeed-LLM's llama2_tp1_pp8_patch_gloo_ptd baseline (Llama-2-7B, pp 8, dp 1, 4096
    // tokens, the distributed optimizer, flash attention, no dropout): after iteration 1,
    // allocated 16150.6 MiB on rank 0, 13964.6 on ranks 1-6 and 16214.7 on rank 7. Each stage
    // within 1.5%.
    void mindSpeedBaseline()
    {
        const Plan plan = megatronPlan(
            "llama2_tp1_pp8_patch_gloo_ptd", {{"preset", "llama2-7b"}}, testing::ciTraining(1),
            {{"dp", 1}, {"tp", 1}, {"pp", 8}, {"sharding", "optimizer"}},
            {{"recompute", "none"}, {"attention", "flash"}, {"overlap_grad_reduce", true}},
            "megatron", "ascend-910b2");
        const MemoryEstimate me = estimateMemory(plan, Catalog::builtin());
        QCOMPARE(int(me.ranks.size()), 8);
        const std::pair<int, double> measured[] = {{0, 16150.6}, {1, 13964.6}, {7, 16214.7}};
        for (const auto &[stage, allocated] : measured) {
            const double after = mib(me.ranks[size_t(stage)].after_step.total());
            qInfo("stage %d: after the step %.1f MiB against %.1f (%+.2f%%)", stage, after,
                  allocated, 100.0 * relative(after, allocated));
            QVERIFY2(std::abs(relative(after, allocated)) < 0.015,
                     qPrintable(QString::number(after)));
        }
    }

    // MindSpeed-LLM's llama2_tp2_pp4_vpp2_swap baseline as its CI first recorded it (2024-09-29,
    // tests/st/shell_scripts/, now tests/pipeline/legacy/): Llama-2-7B at 4096 tokens, tp 2 with
    // SP, pp 4 of 4 model chunks (2 layers each), dp 1, 32 micro-batches, no dropout, the
    // distributed optimizer with --overlap-grad-reduce, and MindSpeed's --reuse-fp32-param,
    // --swap-attention and --recompute-activation-function (its --recompute-num-layers 1 with
    // --enable-recompute-layers-per-pp-rank recomputes one layer's MLP per stage: not modelled,
    // it changes no after-step figure). Report_memory after iteration 1: allocated 13485.06 MiB
    // on stage 0, 12517.06 on stages 1-2, 13517.12 on stage 3. Each within 1.5%.
    //
    // With dp 1 reuse-fp32-param keeps no bf16 parameter apart from the fp32 master: the master
    // copy and the Adam moments (16 of the 16 B per parameter with the fp32 main grads) must
    // not go with it.
    void mindSpeedReuseAndSwapBaseline()
    {
        const Plan plan =
            megatronPlan("llama2_tp2_pp4_vpp2_swap", {{"preset", "llama2-7b"}},
                         testing::ciTraining(32), testing::tp2Pp4Interleaved4("optimizer"),
                         {{"recompute", "none"},
                          {"recompute_activation_function", true},
                          {"swap_attention", true},
                          {"attention", "flash"},
                          {"overlap_grad_reduce", true},
                          {"allocator", {{"expandable_segments", true}}}},
                         "megatron", "ascend-910b2", {{"reuse_fp32_param", true}});
        const MemoryEstimate me = replayed(plan);
        QCOMPARE(int(me.ranks.size()), 4);
        const double measured[] = {13485.06, 12517.06, 12517.06, 13517.12};
        for (const RankMemory &rank : me.ranks) {
            const double allocated = measured[rank.stage];
            const double after = mib(rank.after_step.total());
            qInfo("stage %d: after the step %.1f MiB against %.2f (%+.2f%%); first step's peak "
                  "%.1f MiB",
                  rank.stage, after, allocated, 100.0 * relative(after, allocated),
                  mib(rank.first_step_peak_bytes));
            QVERIFY2(std::abs(relative(after, allocated)) < 0.015,
                     qPrintable(QString::number(after)));
        }
    }

    // MindSpeed-LLM's tune_llama2_tp1_pp1_lora_ptd baseline as first recorded (2024-08-31,
    // tests/st/): Llama-2-7B on one NPU, LoRA rank 16 on the fused query_key_value / linear_qkv,
    // dense, dense_h_to_4h and dense_4h_to_h, bf16 adapters with the fp32 master copy and main
    // gradients of Megatron's mixed-precision optimizer (no distributed optimizer). After
    // iteration 1: allocated 13431.56 MiB, within 1.5%. (Its peak is not checked: the
    // instruction dataset's samples are not padded to the 4096 tokens, so what a micro-batch
    // holds depends on the data.)
    void mindSpeedLoraBaseline()
    {
        json j = testing::variantBase();
        j["name"] = "tune_llama2_tp1_pp1_lora_ptd";
        j["training"] = {{"seq_len", 4096},  {"micro_batch", 4},
                         {"grad_accum", 8},  {"dropout", {{"hidden", 0}, {"attention", 0}}},
                         {"method", "lora"}, {"lora", {{"rank", 16}, {"targets", "all_linear"}}}};
        j["parallel"] = {{"dp", 1}, {"tp", 1}, {"pp", 1}, {"sharding", "none"}};
        j["memory"] = {{"recompute", "none"},
                       {"attention", "flash"},
                       {"allocator", {{"expandable_segments", true}}}};
        j["framework"] = "megatron";
        j["cluster"]["devices_per_node"] = 1;
        const Plan plan = parsePlan(j, Catalog::builtin());
        const MemoryEstimate me = replayed(plan);
        const double after = mib(me.ranks.front().after_step.total());
        qInfo("after the step %.1f MiB against 13431.56 (%+.2f%%)", after,
              100.0 * relative(after, 13431.56));
        QVERIFY2(std::abs(relative(after, 13431.56)) < 0.015, qPrintable(QString::number(after)));
    }

    // MindSpeed-LLM's llama2_tp2_cp4_general_double_ring baseline (recorded 2026-01-06,
    // tests/pipeline/legacy/): Llama-2-7B at 4096 tokens over tp 2 with SP and cp 4 (Megatron's
    // ring, MindSpeed's double ring with window 2), dp 1, the distributed optimizer over the
    // dp x cp = 4 ranks with both overlaps, reuse-fp32-param, activation-function recompute,
    // no dropout. After iteration 1 rank 0 holds 27320.79 MiB and peaked at 27511.30: each
    // within 1.5%.
    void mindSpeedContextParallelBaseline()
    {
        const Plan plan = megatronPlan("llama2_tp2_cp4_general_double_ring",
                                       {{"preset", "llama2-7b"}}, testing::ciTraining(8),
                                       {{"dp", 1},
                                        {"tp", 2},
                                        {"sp", true},
                                        {"cp", 4},
                                        {"cp_algo", "ring"},
                                        {"sharding", "optimizer"}},
                                       {{"recompute", "none"},
                                        {"recompute_activation_function", true},
                                        {"attention", "flash"},
                                        {"overlap_grad_reduce", true},
                                        {"overlap_param_gather", true},
                                        {"allocator", {{"expandable_segments", true}}}},
                                       "megatron", "ascend-910b2", {{"reuse_fp32_param", true}});
        const MemoryEstimate me = replayed(plan);
        const RankMemory &rank = me.ranks.front();
        const double after = mib(rank.after_step.total()), first = mib(rank.first_step_peak_bytes);
        qInfo("after the step %.1f MiB against 27320.79 (%+.2f%%), first step's peak %.1f against "
              "27511.30 (%+.2f%%)",
              after, 100.0 * relative(after, 27320.79), first, 100.0 * relative(first, 27511.30));
        QVERIFY2(std::abs(relative(after, 27320.79)) < 0.015, qPrintable(QString::number(after)));
        QVERIFY2(std::abs(relative(first, 27511.30)) < 0.015, qPrintable(QString::number(first)));
    }

    // MindSpeed-LLM's llama3_tp2_pp2_vpp1 baseline as first recorded (2024-10-29, 7378bc1f,
    // tests/st/): a 16-layer Llama-3-8B at 8192 tokens, tp 2 with SP (--use-mc2), pp 2 of 8 model
    // chunks of one layer, dp 2, 8 micro-batches, no recompute, no distributed optimizer, no
    // dropout, on Megatron core_r0.6.0 and MindSpeed 969686ff. After iteration 1: allocated
    // 20003.24 MiB on stage 0 and 20067.31 on stage 1; max allocated 22943.82 and 25605.88, the
    // forward and backward of iteration 1 (the Adam states come after). That software ran two
    // kernels that keep more than today's (their sources, docs/memory-model.md): ModelLink's
    // fused RoPE called torch_npu.npu_rotary_mul, which saves the q and k it rotates (k a view of
    // linear_qkv's whole output), and Megatron's cross entropy on logits.float() subtracted the
    // maximum out of place (memory.loss fused_fp32_copy). With both the peaks must be within 4%
    // and the after-step figures within 1.5%; with today's kernels the peaks are 9-13% low.
    void mindSpeedOlderKernels()
    {
        auto plan = [](bool older) {
            json memory = {{"recompute", "none"},
                           {"attention", "flash"},
                           {"allocator", {{"expandable_segments", true}}}};
            if (older) {
                memory["rope"] = "keeps_input";
                memory["loss"] = "fused_fp32_copy";
            }
            return llama3CiPlan("llama3_tp2_pp2_vpp1", 16, 8, "", memory);
        };
        const Plan older = plan(true), today = plan(false);
        const MemoryEstimate me = replayed(older);
        const MemoryEstimate now = replayed(today);
        QCOMPARE(int(me.ranks.size()), 2);
        const double allocated[] = {20003.24, 20067.31};
        const double maxAllocated[] = {22943.82, 25605.88};
        for (const RankMemory &rank : me.ranks) {
            const int s = rank.stage;
            const auto [after, peak] = stageErrors(rank, allocated[s], maxAllocated[s]);
            const double peakToday =
                relative(mib(now.ranks[size_t(s)].first_step_peak_bytes), maxAllocated[s]);
            qInfo("stage %d: first step's peak with today's kernels %+.2f%%", s, 100.0 * peakToday);
            QVERIFY2(std::abs(after) < 0.015, qPrintable(QString::number(after)));
            QVERIFY2(std::abs(peak) < 0.04, qPrintable(QString::number(peak)));
            QVERIFY(peakToday < -0.08);
        }
    }

    // MindSpeed-LLM's llama3_mcore_tp2_pp2_vpp2_noop_layer baseline as first recorded
    // (2024-11-25, 03d237b2, tests/st/; Megatron core_r0.7.0, MindSpeed f3332571): the run above
    // with --noop-layers 1,15 and 2 layers per model chunk, so 4 chunks per stage, the first
    // stage's first and the last stage's last holding one real layer (pipeline_layout). After
    // iteration 1: allocated 17875.08 / 17939.15 MiB; max allocated on stage 0 17875.08 + 1001.55
    // MiB, one largest fp32 tensor above (the optimizer step's transient, as the engine counts
    // it), 25065.35 on stage 1. Checked: after the step within 1.5% on both stages, stage 0's
    // first-step peak within 1.5%. Not checked: stage 1's peak, 11.4% above the engine's even
    // with that software's cross entropy. With its RoPE (keeps_input) stage 0's forward and
    // backward would exceed the measured maximum by 5.5%: of the three runs of MindSpeed-LLM
    // before 2024-12-21 checked here, only mindSpeedOlderKernels' fits that kernel's source.
    void mindSpeedNoopLayers()
    {
        const Plan plan =
            llama3CiPlan("llama3_mcore_tp2_pp2_vpp2_noop_layer", 14, 4, "Et|tt|tt|tt|tt|tt|tt|tL",
                         {{"recompute", "none"},
                          {"attention", "flash"},
                          {"loss", "fused_fp32_copy"},
                          {"allocator", {{"expandable_segments", true}}}});
        const MemoryEstimate me = replayed(plan);
        QCOMPARE(int(me.ranks.size()), 2);
        const double allocated[] = {17875.08, 17939.15};
        for (const RankMemory &rank : me.ranks) {
            const double after = relative(mib(rank.after_step.total()), allocated[rank.stage]);
            qInfo("stage %d: after the step %+.2f%%", rank.stage, 100.0 * after);
            QVERIFY2(std::abs(after) < 0.015, qPrintable(QString::number(after)));
        }
        const double peak = relative(mib(me.ranks[0].first_step_peak_bytes), 18876.63);
        qInfo("stage 0: first step's peak %+.2f%%", 100.0 * peak);
        QVERIFY2(std::abs(peak) < 0.015, qPrintable(QString::number(peak)));
    }

    // MindSpeed-LLM's seed_oss_36b_tp2pp2 baseline (recorded 2026-03-23, c75d49f9,
    // tests/pipeline/st/): Seed-OSS-36B cut to 4 layers (hidden 5120, 80 heads of 128 in 8 KV
    // groups, q/k/v biases, FFN 27648, vocabulary 155136 untied) at 2048 tokens, tp 2 without SP,
    // pp 2, dp 2, 16 micro-batches, the distributed optimizer, no recompute. After iteration 1:
    // allocated 10732.20 / 10773.73 MiB, max allocated 16 MiB above (its optimizer step: the
    // Adam states made, nothing else of size). Each within 1.5%. MindSpeed's AdamW has been
    // torch._fused_adamw_ since 2025-04-22 (cbe43635): no fp32 copy of the updated tensor here,
    // unlike the runs of npu_apply_adam_w (qwen3_8b_tp2_pp4_vpp2 below, docs/memory-model.md).
    void mindSpeedSeedOss()
    {
        json training = testing::ciTraining(16);
        training["seq_len"] = 2048;
        const Plan plan = megatronPlan(
            "seed_oss_36b_tp2pp2",
            {{"preset", "qwen3-8b"},
             {"layers", 4},
             {"hidden", 5120},
             {"heads", 80},
             {"kv_heads", 8},
             {"head_dim", 128},
             {"ffn_hidden", 27648},
             {"vocab", 155136},
             {"vocab_divisible_by", 1},
             {"qk_norm", false},
             {"attention_bias", true}},
            training, {{"dp", 2}, {"tp", 2}, {"pp", 2}, {"sharding", "optimizer"}},
            {{"recompute", "none"}, {"attention", "flash"}}, "megatron", "ascend-910b2");
        const MemoryEstimate me = replayed(plan);
        QCOMPARE(int(me.ranks.size()), 2);
        const double allocated[] = {10732.20, 10773.73};
        const double maxAllocated[] = {10748.20, 10789.73};
        for (const RankMemory &rank : me.ranks)
            QVERIFY(stageWithin(rank, allocated[rank.stage], maxAllocated[rank.stage], 0.015));
    }

    // MindSpeed-LLM's qwen3_8b_tp2_pp4_vpp2_swap baseline (recorded 2026-06-09, a5fc689b,
    // tests/st/): a 16-layer Qwen3-8B (QK norms, vocabulary 151936 untied) at 4096 tokens, tp 2
    // with SP, pp 4 of 2 chunks, dp 1, 16 micro-batches, the distributed optimizer with
    // --reuse-fp32-param, --swap-attention and --recompute-activation-function. After iteration
    // 1: allocated 10708.42 / 5988.56 / 5988.56 / 10740.46 MiB; max allocated 1188.0 MiB above
    // on the first and last stages and 192.0 on the middle ones: 4 B per element of the stage's
    // largest parameter (the embedding's / output layer's tp shard, linear_fc1's), the
    // reuse-fp32-param conversion after the step (core/reuseparam.h). Each within 1.5%.
    void mindSpeedReuseConversion()
    {
        const Plan plan = qwen3CiPlan("qwen3_8b_tp2_pp4_vpp2_swap", {{"ffn_hidden", 12288}}, 4096,
                                      {{"recompute", "none"},
                                       {"recompute_activation_function", true},
                                       {"swap_attention", true}},
                                      {{"reuse_fp32_param", true}});
        const MemoryEstimate me = replayed(plan);
        QCOMPARE(int(me.ranks.size()), 4);
        const double allocated[] = {10708.42, 5988.56, 5988.56, 10740.46};
        const double maxAllocated[] = {11896.43, 6180.56, 6180.56, 11928.47};
        for (const RankMemory &rank : me.ranks)
            QVERIFY(stageWithin(rank, allocated[rank.stage], maxAllocated[rank.stage], 0.015));
    }

    // MindSpeed-LLM's qwen3_8b_tp2_pp4_vpp2 baseline (recorded 2026-06-08, 8592a57e,
    // tests/st/): a 16-layer Qwen3 of hidden 2048 (32 heads of 64, 8 KV groups, QK norms, FFN
    // 12288, vocabulary 151936 untied) at 2048 tokens, tp 2 with SP, pp 4 of 2 chunks, dp 1, 16
    // micro-batches, the distributed optimizer with --reuse-fp32-param, --o2-optimizer (O2AdamW:
    // bf16 moments, each made fp32 in turn for npu_apply_adam_w, mindspeed_llm/tasks/models/
    // common/adamw.py: optimizer_impl for_loop) and --o2-gradient, full block recompute of one
    // layer per stage (--enable-recompute-layers-per-pp-rank). --o2-gradient has set nothing since
    // MindSpeed-LLM a05e91c2 (2026-03-16) removed the code that read it: the main gradients stay
    // fp32. After the step 3768.73 / 1992.23 / 1992.23 / 3776.76 MiB (12 B per parameter: the
    // fp32 master holding the bf16 parameters, fp32 main gradients, bf16 moments), each within
    // 1.5%; with bf16 main gradients the engine read 16.5% low. Iteration 1's peak on the middle
    // stages is its forward and backward (2871.92, 2624.28): within 2%. On the first and last
    // stages it is the optimizer step, 12 B per element of the embedding's (output layer's) tp
    // shard above the after-step figure: O2AdamW's two fp32 moments (8 B, counted) and 4 B
    // more while they exist, not counted (not checked): most likely op-plugin's
    // npu_apply_adam_w running on a contiguous copy of a parameter that is a view of a larger
    // buffer (acl_op npu_apply_adam_w_out, check_match), as reuse-fp32-param's fp32 master
    // shards are (docs/memory-model.md). The reuse conversion's 4 B after the step is counted.
    void mindSpeedO2Optimizer()
    {
        const Plan plan = qwen3CiPlan("qwen3_8b_tp2_pp4_vpp2",
                                      {{"hidden", 2048},
                                       {"heads", 32},
                                       {"kv_heads", 8},
                                       {"head_dim", 64},
                                       {"ffn_hidden", 12288}},
                                      2048,
                                      {{"recompute", "full"},
                                       {"recompute_method", "block"},
                                       {"recompute_num_layers", 1},
                                       {"recompute_layers_per_pp_rank", true},
                                       {"allocator", {{"expandable_segments", true}}}},
                                      {{"optimizer_state", "bf16"},
                                       {"optimizer_impl", "for_loop"},
                                       {"reuse_fp32_param", true}});
        const MemoryEstimate me = replayed(plan);
        QCOMPARE(int(me.ranks.size()), 4);
        const double allocated[] = {3768.73, 1992.23, 1992.23, 3776.76};
        const double maxAllocated[] = {5549.16, 2871.92, 2624.28, 5557.27};
        for (const RankMemory &rank : me.ranks) {
            const int s = rank.stage;
            const auto [after, peak] = stageErrors(rank, allocated[s], maxAllocated[s]);
            QVERIFY2(std::abs(after) < 0.015, qPrintable(QString::number(after)));
            if (s == 1 || s == 2)
                QVERIFY2(std::abs(peak) < 0.02, qPrintable(QString::number(peak)));
        }
    }

    // MindSpeed-LLM's llama2_tp2_pp4_vpp2_ptd baseline as recorded on 2024-09-05 (commit
    // c20bcea3, tests/st/): the same model and layout as the swap run above, without the
    // distributed optimizer (Float16OptimizerWithFloat16Params: 18 B per parameter), full
    // recompute with --recompute-method block, --recompute-num-layers 1 and
    // --enable-recompute-layers-per-pp-rank (one layer per stage recomputed, in chunk 0), flash
    // attention in the TND layout (--reset-position-ids). After the step 15154.2 / 14061.2 /
    // 14061.2 / 15186.3 MiB, each within 1.5%. Iteration 1's peak on stages 0-2 is its forward and
    // backward (no Adam states yet): 17954.7 / 16731.4 / 15806.3 MiB. Counting the recomputed
    // layers per chunk instead (plain block) misses 10-15% of it; counted per stage the engine is
    // 4.1-4.5% low (about 6.6 KB per token of each kept layer, not identified). The RoPE of that
    // software (memory.rope keeps_input, see mindSpeedOlderKernels) would make it 4.1% high:
    // docs/memory-model.md. Checked: per stage at least halves the error of per chunk.
    void mindSpeedRecomputePerPipelineRank()
    {
        auto plan = [](bool perPpRank) {
            json memory = {
                {"recompute", "full"},         {"recompute_method", "block"},
                {"recompute_num_layers", 1},   {"attention", "flash"},
                {"overlap_grad_reduce", true}, {"allocator", {{"expandable_segments", true}}}};
            if (perPpRank)
                memory["recompute_layers_per_pp_rank"] = true;
            return megatronPlan("llama2_tp2_pp4_vpp2_ptd", {{"preset", "llama2-7b"}},
                                testing::ciTraining(32), testing::tp2Pp4Interleaved4("none"),
                                memory, "megatron", "ascend-910b2");
        };
        const Plan perStage = plan(true), perChunk = plan(false);
        const MemoryEstimate me = replayed(perStage);
        const MemoryEstimate block = replayed(perChunk);
        const double allocated[] = {15154.2, 14061.2, 14061.2, 15186.3};
        const double maxAllocated[] = {17954.7, 16731.4, 15806.3};
        for (const RankMemory &rank : me.ranks) {
            const int s = rank.stage;
            const double after = mib(rank.after_step.total());
            QVERIFY2(std::abs(relative(after, allocated[s])) < 0.015,
                     qPrintable(QString::number(after)));
            if (s == 3) {
                qInfo("stage 3: after the step %.1f MiB against %.1f (%+.2f%%)", after,
                      allocated[s], 100.0 * relative(after, allocated[s]));
                continue;
            }
            const double first = relative(mib(rank.first_step_peak_bytes), maxAllocated[s]);
            const double firstBlock =
                relative(mib(block.ranks[size_t(s)].first_step_peak_bytes), maxAllocated[s]);
            qInfo("stage %d: after the step %.1f MiB against %.1f (%+.2f%%); first step's peak "
                  "%+.2f%% (per chunk %+.2f%%)",
                  s, after, allocated[s], 100.0 * relative(after, allocated[s]), 100.0 * first,
                  100.0 * firstBlock);
            QVERIFY(std::abs(first) < std::abs(firstBlock) / 2);
        }
    }
};

QTEST_GUILESS_MAIN(TestMegatronMeasured)
#include "tst_megatronmeasured.moc"
