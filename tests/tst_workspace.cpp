// GEMM library workspaces (core/workspace.h): PyTorch's cuBLAS workspaces and Transformer
// Engine's, held in the caching allocator for the whole run, as the profiles size them and as the
// memory engine composes them into every phase, the memory after the step and the allocator's
// replay.
#include "core/catalog.h"
#include "core/errors.h"
#include "core/estimate.h"
#include "core/memory.h"
#include "core/plan.h"
#include "core/timeline.h"
#include "core/workspace.h"
#include "planvariants.h"

#include <QTest>
#include <nlohmann/json.hpp>

using namespace shardscope;
using nlohmann::json;

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

GemmWorkspaces of(const std::string &device, const std::string &framework)
{
    const Catalog &c = Catalog::builtin();
    return gemmWorkspaces(*c.device(device), *c.framework(framework));
}

/// Llama-2-7B on one node of 8 devices: dp 8, the optimizer states sharded, seq 4096 (the plan
/// variants' base, tests/planvariants.h).
json plan(const std::string &device, const std::string &framework)
{
    json j = testing::variantBase();
    j["name"] = "workspaces";
    j["training"]["grad_accum"] = 2;
    j["parallel"]["sharding"] = "optimizer";
    j["framework"] = framework;
    j["cluster"]["device"] = device;
    return j;
}

/// The built-in catalog with `device` copied as "<device>-bare", which keeps no workspace.
Catalog withBareCopy(const std::string &device)
{
    Catalog c = Catalog::builtin();
    DeviceProfile d = *c.device(device);
    d.id = device + "-bare";
    d.gemm_workspace_bytes = 0;
    d.te_gemm_workspace_bytes = 0;
    c.addDevice(d);
    return c;
}

} // namespace

class TestWorkspace : public QObject
{
    Q_OBJECT

private slots:
    // What each built-in device and framework keep, from PyTorch's CublasHandlePool and
    // Transformer Engine's get_cublas_workspace_size_bytes.
    void sizesByDeviceAndFramework_data()
    {
        QTest::addColumn<QString>("device");
        QTest::addColumn<QString>("framework");
        QTest::addColumn<int>("count");
        QTest::addColumn<double>("each");
        QTest::addColumn<double>("te");
        // Hopper: ":4096:8" = 32 MiB; two handles (the forward's thread, autograd's).
        QTest::newRow("h200 pytorch") << "h200"
                                      << "pytorch" << 2 << 32 * kMiB << 0.0;
        QTest::newRow("h100 deepspeed") << "h100-80g"
                                        << "deepspeed" << 2 << 32 * kMiB << 0.0;
        QTest::newRow("h100 megatron-legacy") << "h100-80g"
                                              << "megatron-legacy" << 2 << 32 * kMiB << 0.0;
        // Megatron-Core's Transformer Engine layers keep one more.
        QTest::newRow("h100 megatron") << "h100-80g"
                                       << "megatron" << 2 << 32 * kMiB << 32 * kMiB;
        // Before Hopper: ":4096:2:16:8" = 8 MiB + 128 KiB; Transformer Engine's is 4 MiB.
        QTest::newRow("a100 megatron") << "a100-80g"
                                       << "megatron" << 2 << 8 * kMiB + 128 * 1024.0 << 4 * kMiB;
        // torch_npu keeps operator workspaces outside its caching allocator.
        QTest::newRow("910b2 megatron") << "ascend-910b2"
                                        << "megatron" << 0 << 0.0 << 0.0;
        QTest::newRow("910b3 pytorch") << "ascend-910b3"
                                       << "pytorch" << 0 << 0.0 << 0.0;
    }
    void sizesByDeviceAndFramework()
    {
        QFETCH(QString, device);
        QFETCH(QString, framework);
        QFETCH(int, count);
        QFETCH(double, each);
        QFETCH(double, te);
        const GemmWorkspaces w = of(device.toStdString(), framework.toStdString());
        QCOMPARE(w.count, count);
        QCOMPARE(w.bytes, each);
        QCOMPARE(w.teBytes, te);
        QCOMPARE(w.total(), count * each + te);
    }

    // The estimate holds the workspaces in every phase and after the step, as transient working
    // memory: exactly the difference to the same device without them.
    void heldInEveryPhaseAndAfterTheStep_data()
    {
        QTest::addColumn<QString>("device");
        QTest::addColumn<QString>("framework");
        QTest::addColumn<double>("bytes");
        QTest::newRow("h200 pytorch") << "h200"
                                      << "pytorch" << 64 * kMiB;
        QTest::newRow("h100 megatron") << "h100-80g"
                                       << "megatron" << 96 * kMiB;
        QTest::newRow("a100 megatron") << "a100-80g"
                                       << "megatron" << 2 * (8 * kMiB + 128 * 1024.0) + 4 * kMiB;
    }
    void heldInEveryPhaseAndAfterTheStep()
    {
        QFETCH(QString, device);
        QFETCH(QString, framework);
        QFETCH(double, bytes);
        const Catalog c = withBareCopy(device.toStdString());
        const MemoryEstimate with =
            estimateMemory(parsePlan(plan(device.toStdString(), framework.toStdString()), c), c);
        const MemoryEstimate bare = estimateMemory(
            parsePlan(plan(device.toStdString() + "-bare", framework.toStdString()), c), c);
        QCOMPARE(with.ranks.size(), bare.ranks.size());
        for (size_t i = 0; i < with.ranks.size(); ++i) {
            const RankMemory &w = with.ranks[i], &b = bare.ranks[i];
            for (int p = 0; p < kPhaseCount; ++p) {
                QCOMPARE(w.phases[size_t(p)][Component::Transient] -
                             b.phases[size_t(p)][Component::Transient],
                         bytes);
                QCOMPARE(w.phases[size_t(p)].total() - b.phases[size_t(p)].total(), bytes);
            }
            QCOMPARE(w.peak_bytes - b.peak_bytes, bytes);
            // After the step nothing transient is left but the workspaces.
            QCOMPARE(w.after_step[Component::Transient], bytes);
            QCOMPARE(b.after_step[Component::Transient], 0.0);
            QCOMPARE(w.after_step.total() - b.after_step.total(), bytes);
        }
        // The search's memory floor counts them as well (it stays a bound of the peak).
        const Plan pw = parsePlan(plan(device.toStdString(), framework.toStdString()), c);
        const Plan pb = parsePlan(plan(device.toStdString() + "-bare", framework.toStdString()), c);
        QCOMPARE(memoryFloorBytes(pw, c) - memoryFloorBytes(pb, c), bytes);
    }

    // In the timeline: one tensor per workspace, allocated in the setup and never freed; the
    // caching allocator gives each its own segment (a request of 10 MiB or more is rounded to
    // 2 MiB), so the reserved peak grows by as much.
    void timelineAndReplay()
    {
        const Catalog c = withBareCopy("h100-80g");
        const Plan p = parsePlan(plan("h100-80g", "megatron"), c);
        const StepTimeline t = memoryTimeline(p, c, 0);
        int found = 0;
        double total = 0;
        for (const TimelineTensor &x : t.tensors) {
            if (x.kind != TensorKind::GemmWorkspace)
                continue;
            ++found;
            total += x.bytes;
            QCOMPARE(x.part, StepPart::Setup);
            QCOMPARE(x.free_event, -1);
            QCOMPARE(x.bytes, 32 * kMiB);
        }
        QCOMPARE(found, 3);
        QCOMPARE(total, 96 * kMiB);
        QCOMPARE(tensorKindKey(TensorKind::GemmWorkspace), std::string_view("gemm_workspace"));
        QCOMPARE(componentOf(TensorKind::GemmWorkspace), Component::Transient);

        const Estimate with = estimate(p, c);
        const Estimate bare = estimate(parsePlan(plan("h100-80g-bare", "megatron"), c), c);
        QCOMPARE(with.memory.ranks.front().reserved_bytes -
                     bare.memory.ranks.front().reserved_bytes,
                 96 * kMiB);
    }

    // The profiles' fields are checked like every other.
    void badProfileFields_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QString>("patch");
        QTest::addColumn<QString>("field");
        QTest::newRow("negative device workspace") << "device"
                                                   << R"({"gemm_workspace_bytes": -1})"
                                                   << "gemm_workspace_bytes";
        QTest::newRow("text device workspace") << "device"
                                               << R"({"te_gemm_workspace_bytes": "32 MiB"})"
                                               << "te_gemm_workspace_bytes";
        QTest::newRow("workspace beyond the device") << "device"
                                                     << R"({"gemm_workspace_bytes": 1e15})"
                                                     << "gemm_workspace_bytes";
        QTest::newRow("negative count") << "framework"
                                        << R"({"gemm_workspaces": -2})"
                                        << "gemm_workspaces";
        QTest::newRow("fractional count") << "framework"
                                          << R"({"gemm_workspaces": 1.5})"
                                          << "gemm_workspaces";
        QTest::newRow("sp gather buffer unknown") << "framework"
                                                  << R"({"sp_gather_buffer": "sometimes"})"
                                                  << "sp_gather_buffer";
        QTest::newRow("te not a boolean") << "framework"
                                          << R"({"transformer_engine": 1})"
                                          << "transformer_engine";
    }
    void badProfileFields()
    {
        QFETCH(QString, kind);
        QFETCH(QString, patch);
        QFETCH(QString, field);
        const Catalog &c = Catalog::builtin();
        const bool device = kind == QLatin1String("device");
        json j = device ? c.device("h100-80g")->raw : c.framework("pytorch")->raw;
        j.merge_patch(json::parse(patch.toStdString()));
        try {
            if (device)
                deviceFromJson(j);
            else
                frameworkFromJson(j);
            QFAIL("accepted");
        } catch (const PlanError &e) {
            QVERIFY2(QString::fromUtf8(e.what()).contains(field), e.what());
        }
    }
};

QTEST_APPLESS_MAIN(TestWorkspace)
#include "tst_workspace.moc"
