// The optimizer family (core/optimizers.cpp), hand-checked on Llama 2 7B on one H200 with
// DDP-style unsharded states: SGD without momentum, Adafactor's factored second moment,
// bitsandbytes' 8-bit and paged AdamW, Muon.
#include "core/catalog.h"
#include "core/errors.h"
#include "core/estimate.h"
#include "core/files.h"
#include "core/optimizers.h"
#include "core/plan.h"
#include "core/workspace.h"
#include "testdata.h"

#include <QTest>
#include <nlohmann/json.hpp>

using namespace shardscope;
using nlohmann::json;

namespace {

Plan plan(const char *optimizer)
{
    json j = json::parse(readTextFile(testing::casePath("hcie-ai-fsdp").toStdString()));
    j["training"] = {{"seq_len", 4096}};
    j["parallel"] = {{"dp", 1}};
    j["memory"] = {{"recompute", "full"}};
    j["cluster"] = {{"device", "h200"}, {"devices_per_node", 1}, {"nodes", 1}};
    j["precision"]["optimizer"] = optimizer;
    return parsePlan(j, Catalog::builtin());
}

const Breakdown &step(const Estimate &e)
{
    return e.memory.ranks.front().phases[size_t(Phase::OptimizerStep)];
}

constexpr double P = 6738415616.0;                  // Llama 2 7B
constexpr double hidden = 32.0 * 202375168.0;       // q, k, v, o, gate, up, down of 32 layers
constexpr double tables = 2.0 * 32000 * 4096;       // embedding and head
constexpr double norms = 65.0 * 4096;

} // namespace

class TestOptimizers : public QObject
{
    Q_OBJECT

private slots:
    void states_data()
    {
        QTest::addColumn<QString>("optimizer");
        QTest::addColumn<double>("states");
        QTest::addRow("adamw") << "adamw" << P * 8;
        QTest::addRow("sgd (momentum)") << "sgd" << P * 4;
        // Matrices: 4 x (4096 + 4096) + 3 x (11008 + 4096) per layer, and two 32000 x 4096 tables.
        QTest::addRow("adafactor") << "adafactor" << (32.0 * (4 * 8192 + 3 * 15104) + 2 * 36096 + norms) * 4;
        // 1 B per state and an fp32 absmax per 2048 elements; no tensor of 7B is under 4096.
        QTest::addRow("adamw8bit") << "adamw8bit" << P * 2 * (1 + 4.0 / 2048);
        QTest::addRow("paged_adamw") << "paged_adamw" << 0.0;
        QTest::addRow("muon") << "muon" << (hidden + 2 * (tables + norms)) * 4;
    }

    void states()
    {
        QFETCH(QString, optimizer);
        QFETCH(double, states);
        const Estimate e = estimate(plan(optimizer.toUtf8().constData()), Catalog::builtin());
        QVERIFY2(std::abs(step(e)[Component::OptimizerStates] - states) < 1.0,
                 qPrintable(QString::number(step(e)[Component::OptimizerStates], 'f', 0)));
    }

    void adafactorFirstMoment()
    {
        json j = json::parse(readTextFile(testing::casePath("hcie-ai-fsdp").toStdString()));
        j["training"] = {{"seq_len", 4096}};
        j["parallel"] = {{"dp", 1}};
        j["cluster"] = {{"device", "h200"}, {"devices_per_node", 1}, {"nodes", 1}};
        j["precision"]["optimizer"] = "adafactor";
        const double without = step(estimate(parsePlan(j, Catalog::builtin()), Catalog::builtin()))[Component::OptimizerStates];
        j["precision"]["first_moment"] = true;
        const double with = step(estimate(parsePlan(j, Catalog::builtin()), Catalog::builtin()))[Component::OptimizerStates];
        QCOMPARE(with - without, P * 4);
        j["precision"]["optimizer"] = "adamw";
        QVERIFY_THROWS_EXCEPTION(PlanError, parsePlan(j, Catalog::builtin()));
    }

    void sgdWithoutMomentum()
    {
        json j = json::parse(readTextFile(testing::casePath("hcie-ai-fsdp").toStdString()));
        j["precision"]["optimizer"] = "sgd";
        j["precision"]["momentum"] = false;
        const Plan p = parsePlan(j, Catalog::builtin());
        QCOMPARE(step(estimate(p, Catalog::builtin()))[Component::OptimizerStates], 0.0);
        QVERIFY(planToJson(p)["precision"]["momentum"] == false);
        j["precision"]["optimizer"] = "adamw";
        QVERIFY_THROWS_EXCEPTION(PlanError, parsePlan(j, Catalog::builtin()));
    }

    // Paged states are not on the device at the peak: they are in host-backed memory.
    void pagedStatesAreOnTheHost()
    {
        const Estimate e = estimate(plan("paged_adamw"), Catalog::builtin());
        QCOMPARE(e.memory.ranks.front().host_paged_bytes, P * 8);
        QCOMPARE(e.memory.host.pageable_per_node, P * 8);
        QVERIFY(e.memory.host.fits); // 54 GB of a DGX's 2 TB
        const Estimate b8 = estimate(plan("paged_adamw8bit"), Catalog::builtin());
        QCOMPARE(b8.memory.ranks.front().host_paged_bytes, P * 2 * (1 + 4.0 / 2048));
    }

    // Step temporaries: Adafactor's fp32 for-loop works on the largest matrix (the 32000 x 4096
    // table) four times; Muon's Newton-Schulz on it in bf16 (X twice, and three 4096^2 squares).
    // The GEMM libraries' workspaces (core/workspace.h) are transient memory held throughout.
    void temporaries()
    {
        const Catalog &c = Catalog::builtin();
        const Plan p = plan("adafactor");
        const double W =
            gemmWorkspaces(*c.device(p.cluster.device), *c.framework(p.framework)).total();
        QVERIFY(W > 0);
        QCOMPARE(step(estimate(p, c))[Component::Transient] - W, 4.0 * 32000 * 4096 * 4);
        QCOMPARE(step(estimate(plan("muon"), c))[Component::Transient] - W,
                 2.0 * 32000 * 4096 * 2 + 3.0 * 4096 * 4096 * 2);
        QCOMPARE(step(estimate(plan("adamw8bit"), c))[Component::Transient] - W, 0.0);
    }

    // Megatron's precision-aware optimizer / MindSpeed O2: bf16 main gradients (and, with
    // optimizer_state bf16, bf16 moments) halve what the fp32 main_grad buffer holds.
    void bf16MainGradients()
    {
        json j = json::parse(readTextFile(testing::casePath("hcie-ai-fsdp").toStdString()));
        j["framework"] = "megatron";
        j["parallel"] = {{"dp", 8}, {"sharding", "optimizer"}};
        const Plan fp32 = parsePlan(j, Catalog::builtin());
        j["precision"]["main_grads"] = "bf16";
        j["precision"]["optimizer_state"] = "bf16";
        const Plan o2 = parsePlan(j, Catalog::builtin());
        const Estimate ea = estimate(fp32, Catalog::builtin()), eb = estimate(o2, Catalog::builtin());
        const Breakdown &a = step(ea);
        const Breakdown &b = step(eb);
        QCOMPARE(a[Component::Gradients], P * 4);
        QCOMPARE(b[Component::Gradients], P * 2);
        QCOMPARE(b[Component::OptimizerStates], a[Component::OptimizerStates] / 2);
        QVERIFY(planToJson(o2)["precision"]["main_grads"] == "bf16");
        // The pytorch profile keeps no main-gradient buffer to set.
        j["framework"] = "pytorch";
        QVERIFY_THROWS_EXCEPTION(PlanError, parsePlan(j, Catalog::builtin()));
    }

    // The step time follows the optimizer: 8-bit states move less than fp32 ones; paged states
    // cross the host link; Muon's Newton-Schulz iteration costs matmul time (5 iterations of
    // 4 lo^2 hi + 2 lo^3 FLOPs per matrix; 4096 x 4096 and 4096 x 11008 for Llama 2 7B).
    void stepTime()
    {
        auto optimizerTime = [](const char *o) {
            return estimate(plan(o), Catalog::builtin()).step.compute_s;
        };
        const double adamw = optimizerTime("adamw");
        QVERIFY(optimizerTime("adamw8bit") < adamw);
        QVERIFY(optimizerTime("paged_adamw") > adamw);
        const double ns = 32.0 * 5 * (4 * (4.0 * 4096 * 4096 * 4096 + 2.0 * 4096 * 4096 * 4096) +
                                      3 * (4.0 * 4096 * 4096 * 11008 + 2.0 * 4096 * 4096 * 4096));
        QCOMPARE(stageElements(plan("muon"), 0).newtonSchulzFlops, ns);
        QVERIFY(optimizerTime("muon") > adamw + 0.5 * ns / 989e12);
    }

    // MindSpeed's reuse-fp32-param: 2 B per parameter less, / dp with the distributed optimizer
    // (MindSpeed's feature documentation).
    void reuseFp32Param()
    {
        json j = json::parse(readTextFile(testing::casePath("hcie-ai-fsdp").toStdString()));
        j["framework"] = "megatron";
        j["parallel"] = {{"dp", 8}, {"sharding", "optimizer"}};
        const Estimate before = estimate(parsePlan(j, Catalog::builtin()), Catalog::builtin());
        j["precision"]["reuse_fp32_param"] = true;
        const Plan p = parsePlan(j, Catalog::builtin());
        const Estimate after = estimate(p, Catalog::builtin());
        QCOMPARE(step(after)[Component::Parameters], step(before)[Component::Parameters] - P * 2 / 8);
        QVERIFY(planToJson(p)["precision"]["reuse_fp32_param"] == true);
        j["parallel"]["sharding"] = "full";
        QVERIFY_THROWS_EXCEPTION(PlanError, parsePlan(j, Catalog::builtin()));
        j["parallel"]["sharding"] = "optimizer";
        j["framework"] = "pytorch";
        QVERIFY_THROWS_EXCEPTION(PlanError, parsePlan(j, Catalog::builtin()));
    }

    // Under LoRA the structured optimizers see the adapters' matrices: Adafactor factors each
    // A (8 x 4096) and B (4096 x 8).
    void structureOfTheAdapters()
    {
        Plan p = plan("adafactor");
        p.training.method.method = TrainingMethod::LoRA;
        const Estimate e = estimate(p, Catalog::builtin());
        QCOMPARE(step(e)[Component::OptimizerStates], 32.0 * 2 * 2 * (8 + 4096) * 4);
    }
};

QTEST_APPLESS_MAIN(TestOptimizers)
#include "tst_optimizers.moc"
