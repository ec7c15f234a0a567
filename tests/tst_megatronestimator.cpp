// The megatron profile against Megatron-LM's own theoretical estimator
// (megatron/training/theoretical_memory_usage.py: compute_weight_and_optimizer_memory and
// compute_activation_memory), on the shapes it covers: a GPT layer (GELU, ffn 4h, LayerNorm,
// learned positions), Megatron's distributed optimizer, SP with selective recompute, 1F1B and
// interleaved pipelines. The estimator describes the first pipeline stage, the fullest; its
// formulas are restated here, with the terms it leaves out added by hand and named.
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

/// Megatron GPT 6.7B (h 4096, 32 layers, ffn 16384, vocab 50304) at 4096 tokens, micro-batch 1,
/// 8 micro-batches, selective recompute, the distributed optimizer over dp 2, bf16 with fp32 main
/// grads, master weights and AdamW states, on nodes of 8 H100s: the estimator is Megatron's, for
/// CUDA's flash kernels (on Ascend torch_npu's fused attention keeps more per head, tst_shapes).
Plan gptPlan(int pp, int v, bool sp)
{
    json j = testing::variantBase();
    json parallel = {{"dp", 2}, {"tp", 4}, {"pp", pp}, {"sp", sp}, {"sharding", "optimizer"}};
    if (v > 1) {
        parallel["pp_schedule"] = "interleaved";
        parallel["virtual_stages"] = v;
    }
    j["parallel"] = parallel;
    j.merge_patch({{"name", "gpt 6.7b"},
                   {"model", {{"preset", "megatron-gpt-7b"}}},
                   {"training", {{"seq_len", 4096}, {"micro_batch", 1}, {"grad_accum", 8}}},
                   {"memory", {{"recompute", "selective"}}},
                   {"framework", "megatron"},
                   {"cluster", {{"device", "h100-80g"}, {"devices_per_node", 8}, {"nodes", pp}}}});
    return parsePlan(j, Catalog::builtin());
}

/// The first stage's micro-batches whose embedding ran and whose embedding backward has not, at
/// its peak (the moments with the most model chunks in flight): Megatron's interleaved 1F1B
/// order (warm-up (pp - 1) x 2 + (v - 1) x pp forwards, then forward / backward pairs) walked
/// through; 1F1B holds pp.
int embeddingMasksAtPeak(int pp, int v, int m)
{
    if (v == 1)
        return std::min(pp, m);
    const int units = m * v, warm = std::min(units, (pp - 1) * 2 + (v - 1) * pp);
    int f = 0, b = 0, inFlight = 0, chunk0 = 0, mostInFlight = 0, masks = 0;
    auto forward = [&] {
        chunk0 += (f / pp) % v == 0;
        ++f;
        ++inFlight;
        if (inFlight > mostInFlight || (inFlight == mostInFlight && chunk0 > masks)) {
            mostInFlight = inFlight;
            masks = chunk0;
        }
    };
    auto backward = [&] {
        chunk0 -= v - 1 - (b / pp) % v == 0;
        ++b;
        --inFlight;
    };
    for (int i = 0; i < warm; ++i)
        forward();
    while (f < units) {
        forward();
        backward();
    }
    return masks;
}

} // namespace

class TestMegatronEstimator : public QObject
{
    Q_OBJECT

private slots:
    void firstStage_data()
    {
        QTest::addColumn<int>("pp");
        QTest::addColumn<int>("v");
        QTest::addColumn<bool>("sp");
        QTest::addRow("sp pp4 1f1b") << 4 << 1 << true;
        QTest::addRow("sp pp4 interleaved v2") << 4 << 2 << true;
        QTest::addRow("sp pp2 interleaved v4") << 2 << 4 << true;
        // TP without SP: the estimator assumes SP; Korthikanti et al.'s Table 2 gives the layer
        // (s b h (10 + 24 / t), selective recompute), the embedding terms then not split by tp.
        QTest::addRow("no sp pp4 1f1b") << 4 << 1 << false;
        QTest::addRow("no sp pp4 interleaved v2") << 4 << 2 << false;
    }
    void firstStage()
    {
        QFETCH(int, pp);
        QFETCH(int, v);
        QFETCH(bool, sp);
        const Plan plan = gptPlan(pp, v, sp);
        const MemoryEstimate m = estimateMemory(plan, Catalog::builtin());
        const RankMemory *first = nullptr;
        for (const RankMemory &r : m.ranks)
            if (r.stage == 0)
                first = &r;
        QVERIFY(first);
        const Breakdown &at = first->peak();

        const double s = 4096, b = 1, h = 4096, L = 32, ffn = 16384, tp = 4, dp = 2, m_ = 8;
        const double P = pp, V = v;
        const double paddedVocab = 50688; // 50304 to a multiple of 128 x tp
        // compute_weight_and_optimizer_memory: the transformer layers' 2 L h^2 (2 + ffn / h +
        // 2 / h) (qkv and projection, the MLP, two LayerNorms; no biases) over pp, the word
        // embedding, all over tp; 6 + 12 / dp bytes each under the distributed optimizer (bf16
        // parameter, fp32 main grad, and the fp32 master copy and two AdamW moments sharded).
        const double layers = 2 * L * h * h * (2 + ffn / h + 2 / h);
        const double estimatorParams = (layers / P + h * paddedVocab) / tp;
        // What it leaves out or splits where Megatron does not: the learned position table
        // (4096 x h on the first stage, not split by tp), the linear biases (qkv and fc1 split
        // by tp, projection and fc2 whole) of the stage's L / pp layers, and their LayerNorms'
        // 4h, which every tp rank holds whole (the estimator divides them by tp).
        const double positions = 4096 * h;
        const double biases = L / P * (3 * h / tp + h + ffn / tp + h);
        const double norms = L / P * 4 * h * (1 - 1 / tp);
        const double weightsAndOptimizer = (estimatorParams + positions + biases + norms) * (6 + 12 / dp);
        const double ours = at[Component::Parameters] + at[Component::Gradients] + at[Component::MasterWeights] +
                            at[Component::OptimizerStates];
        QVERIFY2(std::abs(ours / weightsAndOptimizer - 1) < 1e-4,
                 qPrintable(QStringLiteral("weights and optimizer %1 B, estimator + positions, biases, norms %2 B")
                                .arg(ours, 0, 'f', 0)
                                .arg(weightsAndOptimizer, 0, 'f', 0)));

        // compute_activation_memory (SP + selective): s b h (18 + 4 ffn / h) a layer, times L
        // (the first stage holds pp micro-batches of L / pp layers), plus the embedding's input
        // ids (8 s b) and dropout mask (s b h) for pp micro-batches; interleaving multiplies it
        // by 1 + (pp - 1) / (pp v); 1F1B by min(1, m / pp); all over tp. Without SP the layer is
        // s b h (10 + 24 / t) and nothing else is split.
        const double factor = v > 1 ? 1 + (P - 1) / (P * V) : std::min(1.0, m_ / P);
        const double split = sp ? tp : 1.0; // what SP splits the token-wise tensors by
        const double layer = sp ? s * b * h * (18 + 4 * ffn / h) / tp : s * b * h * (10 + 24 / tp);
        const double act = (layer * L + (8 * s * b + s * b * h) * P / split) * factor;
        // Where the engine differs, by mechanism: per layer it keeps also flash attention's
        // log-sum-exp (4 B per head, 8 heads a rank) and LayerNorm's fp32 mean and rstd (2 x 8 B
        // a token, split by SP); it keeps no input ids (8 B a token: the first layer saves the
        // embedding's output instead); and it counts the embedding's dropout masks (s b h bytes,
        // split by SP) as the schedule holds them at the peak, where the estimator takes pp
        // micro-batches times its interleaving factor.
        const double perLayerExtra = s * b * (4 * 32 / tp + 2 * 8 / split);
        const double mask = s * b * h / split;
        const double expected = act + L * factor * perLayerExtra - 8 * s * b * P * factor / split -
                                mask * P * factor + mask * embeddingMasksAtPeak(pp, v, int(m_));
        const double got = at[Component::Activations];
        QVERIFY2(std::abs(got / expected - 1) < 1e-9,
                 qPrintable(QStringLiteral("activations %1 B, expected %2 B; estimator %3 B (%4%)")
                                .arg(got, 0, 'f', 0)
                                .arg(expected, 0, 'f', 0)
                                .arg(act, 0, 'f', 0)
                                .arg(100.0 * (got / act - 1), 0, 'f', 2)));
    }
};

QTEST_APPLESS_MAIN(TestMegatronEstimator)
#include "tst_megatronestimator.moc"
