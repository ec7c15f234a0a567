// The optimizer step's scaled copies where Megatron runs without apex (core/gradclip.h): the
// largest tensor as Megatron-Core fuses the layers, and what the memory engine makes of it in the
// optimizer step, the first step and the explanation.
#include "core/catalog.h"
#include "core/errors.h"
#include "core/framework.h"
#include "core/gradclip.h"
#include "core/memory.h"
#include "core/plan.h"
#include "core/text.h"
#include "planvariants.h"

#include <QTest>
#include <nlohmann/json.hpp>

using namespace shardscope;
using nlohmann::json;

namespace {

/// Llama-2-7B (or `model`) at 4096 tokens on one node of 8 devices, full recompute (the
/// plan variants' base, tests/planvariants.h).
json plan(const std::string &device, const std::string &framework, int tp, int pp,
          const char *sharding, json model = {{"preset", "llama2-7b"}})
{
    json j = testing::variantBase();
    j["model"] = std::move(model);
    j["training"]["grad_accum"] = 4;
    j["parallel"] = {{"dp", 8 / (tp * pp)}, {"tp", tp}, {"pp", pp}, {"sharding", sharding}};
    j["framework"] = framework;
    j["cluster"]["device"] = device;
    return j;
}

/// The built-in catalog with the 910B copied as "ascend-apex": an NVIDIA vendor (apex's fused
/// multi_tensor_scale) and no GEMM workspaces, otherwise the same device.
Catalog withApexCopy()
{
    Catalog c = Catalog::builtin();
    DeviceProfile d = *c.device("ascend-910b2");
    d.id = "ascend-apex";
    d.vendor = "nvidia";
    d.gemm_workspace_bytes = 0;
    d.te_gemm_workspace_bytes = 0;
    c.addDevice(d);
    return c;
}

double largest(const json &j, int stage)
{
    const Catalog &c = Catalog::builtin();
    const Plan p = parsePlan(j, c);
    return largestMegatronTensor(paddedVocabPlan(p, *c.framework(p.framework)), stage);
}

} // namespace

class TestGradClip : public QObject
{
    Q_OBJECT

private slots:
    void scalesByCopyOnlyWithoutApex()
    {
        const Catalog &c = Catalog::builtin();
        QVERIFY(scalesByCopy(*c.framework("megatron"), *c.device("ascend-910b2")));
        QVERIFY(scalesByCopy(*c.framework("megatron-legacy"), *c.device("ascend-910b4")));
        QVERIFY(!scalesByCopy(*c.framework("megatron"), *c.device("h100-80g")));
        QVERIFY(!scalesByCopy(*c.framework("pytorch"), *c.device("ascend-910b2")));
        QVERIFY(!scalesByCopy(*c.framework("deepspeed"), *c.device("ascend-910b2")));
    }

    // Llama-2-7B: linear_fc1 (gate and up, 2 x 11008 x 4096) inside the layers, the embedding
    // (32000 x 4096) on the first stage and the output layer on the last.
    void largestTensorAsMegatronFuses()
    {
        const json p8 = plan("ascend-910b2", "megatron", 1, 8, "optimizer");
        QCOMPARE(largest(p8, 0), 32000.0 * 4096);
        QCOMPARE(largest(p8, 1), 2.0 * 11008 * 4096);
        QCOMPARE(largest(p8, 7), 32000.0 * 4096);
        const json tp2 = plan("ascend-910b2", "megatron", 2, 4, "optimizer");
        QCOMPARE(largest(tp2, 2), 11008.0 * 4096);
        // A GeLU GPT with grouped queries: fc1 and fc2 (16384 x 4096) beat linear_qkv
        // (4096 x 6144); the padded vocabulary's embedding beats both on the first stage.
        const json gpt = {{"layers", 32},  {"hidden", 4096},  {"heads", 32},
                          {"kv_heads", 8}, {"head_dim", 128}, {"ffn_hidden", 16384},
                          {"ffn", "gelu"}, {"vocab", 131073}};
        QCOMPARE(largest(plan("ascend-910b2", "megatron", 1, 4, "optimizer", gpt), 1),
                 16384.0 * 4096);
        QCOMPARE(largest(plan("ascend-910b2", "megatron", 2, 4, "optimizer", gpt), 0),
                 131328.0 * 4096 / 2);
        // Wide attention: linear_qkv is the fused q, k and v (MHA: 3 h x h).
        const json wide = {{"layers", 8},        {"hidden", 4096}, {"heads", 32},
                           {"ffn_hidden", 4096}, {"ffn", "gelu"},  {"vocab", 1024}};
        QCOMPARE(largest(plan("ascend-910b2", "megatron", 1, 2, "optimizer", wide), 1),
                 3.0 * 4096 * 4096);
    }

    // Each stage's optimizer step holds, beside what stays after the step, the clip's scaled
    // copy of its largest gradient (fp32 main grads); the first step's peak is untouched, since
    // the clip runs before Adam's states exist; without apex only.
    void optimizerStepHoldsTheScaledCopy()
    {
        const Catalog c = withApexCopy();
        const Plan ascend = parsePlan(plan("ascend-910b2", "megatron", 1, 8, "optimizer"), c);
        const Plan apex = parsePlan(plan("ascend-apex", "megatron", 1, 8, "optimizer"), c);
        MemoryEstimate a = estimateMemory(ascend, c);
        MemoryEstimate b = estimateMemory(apex, c);
        replayAllocator(ascend, c, a);
        replayAllocator(apex, c, b);
        QCOMPARE(a.ranks.size(), b.ranks.size());
        const double expected[] = {32000.0 * 4096 * 4, 2.0 * 11008 * 4096 * 4};
        for (size_t i = 0; i < a.ranks.size(); ++i) {
            const RankMemory &x = a.ranks[i], &y = b.ranks[i];
            const double copy = x.stage == 0 || x.stage == 7 ? expected[0] : expected[1];
            const size_t opt = size_t(Phase::OptimizerStep);
            QCOMPARE(x.after_step.total(), y.after_step.total());
            QCOMPARE(x.phases[opt].total(), x.after_step.total() + copy);
            QCOMPARE(y.phases[opt].total(), y.after_step.total());
            QCOMPARE(x.phases[opt][Component::Transient], copy);
            QCOMPARE(x.first_step_peak_bytes, y.first_step_peak_bytes);
        }
    }

    // Under the distributed optimizer the clip scales each parameter's part of the rank's shard:
    // never more than the shard (here 1/8 of the model's 2 layers is below linear_fc1).
    void shardCapsTheCopy()
    {
        const Catalog &c = Catalog::builtin();
        const json tiny = {{"layers", 2},        {"hidden", 1024},  {"heads", 8},
                           {"ffn_hidden", 4096}, {"ffn", "swiglu"}, {"vocab", 512}};
        json j = plan("ascend-910b2", "megatron", 1, 1, "optimizer", tiny);
        const MemoryEstimate me = estimateMemory(parsePlan(j, c), c);
        const RankMemory &r = me.ranks.front();
        const double layers = 2.0 * (4.0 * 1024 * 1024 + 3.0 * 1024 * 4096 + 2 * 1024);
        const double shard = (layers + 2.0 * 512 * 1024 + 1024) / 8.0; // untied embedding and head
        QVERIFY(shard < 2.0 * 4096 * 1024);
        QCOMPARE(r.phases[size_t(Phase::OptimizerStep)][Component::Transient], shard * 4.0);
    }

    // Without the distributed optimizer the master parameters are copied into the model the
    // same way after the step: as large as the clip's copy (fp32), one after the other.
    void unshardedOptimizerCopiesParametersToo()
    {
        const Catalog &c = Catalog::builtin();
        const Plan p = parsePlan(plan("ascend-910b2", "megatron", 1, 8, "none"), c);
        const MemoryEstimate me = estimateMemory(p, c);
        const RankMemory &r = me.ranks[1];
        QCOMPARE(r.phases[size_t(Phase::OptimizerStep)][Component::Transient],
                 2.0 * 11008 * 4096 * 4);
        const MemoryExplanation e = explainMemory(p, c, r, Phase::OptimizerStep);
        const QString formula =
            QString::fromStdString(e[size_t(Component::Transient)].formula.english());
        const QString assumptions =
            QString::fromStdString(e[size_t(Component::Transient)].assumptions.english());
        QVERIFY2(assumptions.contains(QLatin1String("dst.copy_(src * scale)")),
                 qPrintable(assumptions));
        QVERIFY2(formula.contains(QLatin1String(
                     "the gradient clip's scaled copy of the largest gradient 0.34 GiB")),
                 qPrintable(formula));
        QVERIFY2(formula.contains(QLatin1String("the largest master parameter's copy 0.34 GiB")),
                 qPrintable(formula));
    }

    void badProfileField()
    {
        json j = Catalog::builtin().framework("megatron")->raw;
        j["multi_tensor_scale_copies"] = "yes";
        try {
            frameworkFromJson(j);
            QFAIL("accepted");
        } catch (const PlanError &e) {
            QVERIFY2(
                QString::fromUtf8(e.what()).contains(QLatin1String("multi_tensor_scale_copies")),
                e.what());
        }
    }
};

QTEST_APPLESS_MAIN(TestGradClip)
#include "tst_gradclip.moc"
