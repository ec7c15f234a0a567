// The megatron-legacy profile against published measurements of legacy Megatron-LM (2023):
// NVIDIA/Megatron-LM pull request #482, tools/get_training_info/README.md, peaks read with
// torch.cuda.max_memory_allocated on H800 80 GB. The runs train a Llama-2-7B-shaped GPT through
// megatron/model (h 4096, 32 layers, 32 heads, SwiGLU with ffn 10880, LayerNorm, biases, learned
// positions, the GPT-2 vocabulary 50257 padded to 50304, embedding and output shared, dropout
// 0.1) at 2048 tokens with flash attention, bf16 and the distributed optimizer.
//
// The profile's terms come from that code, not from these rows: SwiGLU unfused (torch.chunk,
// silu(x1) * x2), FlashSelfAttention's rearrange(...).contiguous() of its output back to (s, b),
// the vocab-parallel cross entropy subtracting the maximum out of place. The rows only judge.
#include "core/catalog.h"
#include "core/memory.h"
#include "core/plan.h"

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

Plan runPlan(const Run &r, const char *framework)
{
    const json j = {
        {"format", "shardscope-plan"},
        {"version", 1},
        {"name", r.name},
        {"model",
         {{"layers", 32}, {"hidden", 4096}, {"heads", 32}, {"kv_heads", 32}, {"head_dim", 128},
          {"ffn_hidden", 10880}, {"ffn", "swiglu"}, {"norm", "layernorm"}, {"linear_bias", true},
          {"vocab", 50257}, {"tied_embeddings", true}, {"position_embedding", "learned"},
          {"max_positions", 2048}}},
        {"training",
         {{"seq_len", 2048}, {"micro_batch", r.microBatch},
          {"grad_accum", r.globalBatch / (r.microBatch * r.dp)}}},
        {"precision",
         {{"params", "bf16"}, {"grads", "bf16"}, {"master_weights", "fp32"}, {"optimizer", "adamw"},
          {"optimizer_state", "fp32"}, {"compute", "bf16"}}},
        {"parallel", {{"dp", r.dp}, {"tp", r.tp}, {"pp", r.pp}, {"sharding", "optimizer"}}},
        {"memory", {{"recompute", "none"}, {"attention", "flash"}}},
        {"framework", framework},
        {"cluster", {{"device", "h100-80g"}, {"devices_per_node", 8}, {"nodes", 1}}},
    };
    return parsePlan(j, Catalog::builtin());
}

double firstRankPeakGiB(const Plan &plan)
{
    return estimateMemory(plan, Catalog::builtin()).ranks.front().peak_bytes / double(1ull << 30);
}

} // namespace

class TestMegatronMeasured : public QObject
{
    Q_OBJECT

private slots:
    void peaks_data()
    {
        QTest::addColumn<int>("run");
        for (int i = 0; i < int(std::size(kRuns)); ++i)
            QTest::addRow("%s", kRuns[i].name) << i;
    }

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
        qInfo("%s: measured %.1f GiB, megatron-legacy %.2f GiB (%+.1f%%), megatron %.2f GiB (%+.1f%%)",
              r.name, r.measuredGiB, legacy, 100.0 * error, current,
              100.0 * (current - r.measuredGiB) / r.measuredGiB);
        QVERIFY2(std::abs(error) < 0.015, qPrintable(QStringLiteral("%1 GiB").arg(legacy)));
        QVERIFY(current < legacy);
        QVERIFY((legacy - current) / r.measuredGiB > 0.015);
    }
};

QTEST_GUILESS_MAIN(TestMegatronMeasured)
#include "tst_megatronmeasured.moc"
