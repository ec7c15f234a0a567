// The PyTorch worker for real, on the CPU with Debian's python3-torch: GEMM, attention,
// memory-bound ops, gloo collectives across two processes, the memory probe, the protocol.
// Skipped (with the reason) only when /usr/bin/python3 cannot import torch.
#include "core/catalog.h"
#include "core/measurement.h"
#include "core/workload.h"
#include "runner/benchmarkrunner.h"
#include "testdata.h"

#include <QFileInfo>
#include <QProcess>
#include <QSignalSpy>
#include <QTest>
#include <nlohmann/json.hpp>

using namespace shardscope;

namespace {

const QString kPython = QStringLiteral("/usr/bin/python3");

} // namespace

class TestTorchWorker : public QObject
{
    Q_OBJECT

    RunResults m_results;
    QString m_error;
    QString m_started;
    Plan m_plan;

    /// Runs the plan's memory probe alone on the CPU through the torch worker.
    void runProbeAlone(const Plan &plan, RunResults &out)
    {
        Workload w = buildWorkload(plan, WorkloadOptions{}, &Catalog::builtin());
        w.kernels.clear();
        RunOptions o;
        o.backend = QStringLiteral("torch");
        o.device = QStringLiteral("cpu");
        o.python = kPython;
        o.probeBudgetBytes = 1e9;
        BenchmarkRunner runner;
        QSignalSpy finished(&runner, &BenchmarkRunner::finished);
        QSignalSpy failed(&runner, &BenchmarkRunner::failed);
        QVERIFY(runner.start(plan, w, o));
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() + failed.count() > 0, 120000);
        QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.first().at(0).toString()));
        out = runner.results();
    }

private slots:
    void initTestCase()
    {
        QProcess p;
        p.start(kPython, {QStringLiteral("-c"), QStringLiteral("import torch")});
        if (!p.waitForFinished(60000) || p.exitStatus() != QProcess::NormalExit ||
            p.exitCode() != 0)
            QSKIP("torch is not importable by /usr/bin/python3 (install python3-torch): the "
                  "PyTorch worker cannot be tested here");
        m_plan = testing::tinyRunnerPlan();
        WorkloadOptions wo;
        const Workload w = buildWorkload(m_plan, wo, &Catalog::builtin());
        RunOptions o;
        o.backend = QStringLiteral("torch");
        o.device = QStringLiteral("cpu");
        o.python = kPython;
        o.nproc = 2; // gloo collectives across two processes
        o.warmup = 1;
        o.repeats = 3;
        o.reference = true;
        o.probeBudgetBytes = 1e9;
        BenchmarkRunner runner;
        QSignalSpy started(&runner, &BenchmarkRunner::started);
        QSignalSpy finished(&runner, &BenchmarkRunner::finished);
        QSignalSpy failed(&runner, &BenchmarkRunner::failed);
        QVERIFY(runner.start(m_plan, w, o));
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() + failed.count() > 0, 240000);
        if (failed.count())
            m_error = failed.first().at(0).toString();
        QVERIFY2(m_error.isEmpty(), qPrintable(m_error));
        QCOMPARE(started.count(), 1);
        m_started = started.first().at(0).toString();
        m_results = runner.results();
    }

    void hello()
    {
        QCOMPARE(m_results.info.backend, std::string("torch"));
        QCOMPARE(m_results.info.device, std::string("cpu"));
        QCOMPARE(m_results.info.interpreter, kPython.toStdString()); // says which Python ran
        QVERIFY(m_results.info.versions.find("torch") != std::string::npos);
        QCOMPARE(m_results.info.world_size, 2);
        QVERIFY(m_started.contains(kPython));
    }

    void kernels_data()
    {
        QTest::addColumn<int>("index");
        for (size_t i = 0; i < m_results.kernels.size(); ++i)
            QTest::addRow("%s", m_results.kernels[i].name.c_str()) << int(i);
    }
    void kernels()
    {
        QFETCH(int, index);
        const Kernel &k = m_results.kernels[size_t(index)];
        const KernelMeasurement &m = m_results.measurements[size_t(index)];
        QVERIFY2(m.ok(), (m.status + ": " + m.message).c_str());
        QVERIFY(m.time_s > 0);
        QCOMPARE(m.repeats, 3);
        switch (k.kind) {
        case KernelKind::Gemm:
            QVERIFY(m.flops_per_s > 0);
            QVERIFY(m.reference_time_s > 0);
            break;
        case KernelKind::Attention:
            QVERIFY(m.flops_per_s > 0);
            break;
        case KernelKind::Elementwise:
            QVERIFY(m.bytes_per_s > 0);
            break;
        case KernelKind::Collective:
            QCOMPARE(m.ranks, 2);
            QVERIFY(m.algbw > 0);
            // nccl-tests: busbw = algbw x factor(n).
            if (m.message.find("emulated") == std::string::npos)
                QCOMPARE(m.busbw, m.algbw * busBandwidthFactor(k.collective, 2));
            break;
        }
    }

    void collectivesPresent()
    {
        int n = 0;
        for (const Kernel &k : m_results.kernels)
            n += k.kind == KernelKind::Collective ? 1 : 0;
        QVERIFY2(n >= 2, "the tiny plan (tp 2 x dp 2) has TP and DP collectives");
    }

    void memoryProbe()
    {
        const ProbeMeasurement &p = m_results.probe_result;
        QVERIFY2(p.ran(), (p.status + ": " + p.message).c_str());
        QCOMPARE(p.layers, 2);
        QVERIFY(p.peak_allocated > 0);
        QVERIFY(!p.method.empty());
        const MemoryComparison mc = compareProbe(m_plan, m_results, Catalog::builtin());
        QVERIFY(mc.available);
        QVERIFY(mc.predicted_peak > 0);
        qInfo("memory probe on CPU: predicted %.0f B, measured %.0f B (%.2fx), %s attention (%s)",
              mc.predicted_peak, mc.measured_peak, mc.ratio, p.attention.c_str(),
              p.attention_impl.c_str());
        // Same configuration on both sides: the engine within a factor of two of the step.
        QVERIFY2(mc.ratio > 0.5 && mc.ratio < 2.0, qPrintable(QString::number(mc.ratio)));
    }

    // The probe runs the plan's training method (plain-PyTorch adapters, frozen layers) and the
    // engine predicts the same configuration: the two agree as for full training, and they
    // move the same way against it.
    void methodProbes_data()
    {
        QTest::addColumn<QString>("method");
        QTest::addRow("lora") << "lora";
        QTest::addRow("dora") << "dora";
        QTest::addRow("freeze") << "freeze";
        QTest::addRow("qlora") << "qlora";
    }

    void methodProbes()
    {
        QFETCH(QString, method);
        Plan plan = m_plan;
        plan.training.method.method = method == QLatin1String("lora")    ? TrainingMethod::LoRA
                                      : method == QLatin1String("dora")  ? TrainingMethod::DoRA
                                      : method == QLatin1String("qlora") ? TrainingMethod::QLoRA
                                                                         : TrainingMethod::Freeze;
        plan.training.method.lora.targets = kTargetAllLinear;
        plan.training.method.freeze.last_layers = 1;
        RunResults r;
        runProbeAlone(plan, r);
        if (QTest::currentTestFailed())
            return;
        if (method == QLatin1String("qlora")) {
            // bitsandbytes' k-bit layers need CUDA: on this CPU the probe says so and skips.
            QCOMPARE(r.probe_result.status, std::string("skipped"));
            QVERIFY2(r.probe_result.message.find("bitsandbytes") != std::string::npos,
                     r.probe_result.message.c_str());
            return;
        }
        QVERIFY2(r.probe_result.ran(), (r.probe_result.status + ": " + r.probe_result.message).c_str());
        QVERIFY2(r.probe_result.method.find(method.toStdString() + ":") != std::string::npos,
                 r.probe_result.method.c_str());
        const MemoryComparison mc = compareProbe(plan, r, Catalog::builtin());
        const MemoryComparison full = compareProbe(m_plan, m_results, Catalog::builtin());
        qInfo("%s probe on CPU: predicted %.0f B, measured %.0f B (%.2fx); full training "
              "predicted %.0f B, measured %.0f B",
              qPrintable(method), mc.predicted_peak, mc.measured_peak, mc.ratio, full.predicted_peak,
              full.measured_peak);
        // DoRA's weight norms and saved results outweigh what freezing the base saves on this
        // tiny model (hidden 64, rank 8), on both sides.
        if (method != QLatin1String("dora")) {
            QVERIFY(mc.predicted_peak < full.predicted_peak);
            QVERIFY(mc.measured_peak < full.measured_peak);
        } else {
            QVERIFY(mc.predicted_peak > full.predicted_peak && mc.measured_peak > full.measured_peak);
        }
        QVERIFY2(mc.ratio > 0.5 && mc.ratio < 2.0, qPrintable(QString::number(mc.ratio)));
    }

    // The probe builds the 2025-26 shapes (MLA, QK norms, MoE with shared experts and a dense
    // first layer, fp32 router; LayerNorm, biases, learned positions and dropout; squared ReLU)
    // and measures a real step of each on the CPU beside the engine's prediction of it.
    void shapeProbes_data()
    {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("extra");
        QTest::addRow("mla-moe") << R"({"layers": 2, "hidden": 256, "heads": 4, "vocab": 512,
            "ffn_hidden": 512, "attention": "mla", "mla": {"q_lora_rank": 96, "kv_lora_rank": 64,
            "qk_nope_head_dim": 32, "qk_rope_head_dim": 16, "v_head_dim": 32},
            "moe": {"experts": 4, "top_k": 2, "expert_ffn_hidden": 128, "shared_experts": 1,
                    "first_dense_layers": 1, "router_fp32": true}})" << "{}";
        QTest::addRow("qwen3-moe") << R"({"layers": 2, "hidden": 256, "heads": 4, "kv_heads": 2,
            "head_dim": 64, "vocab": 512, "ffn_hidden": 512, "qk_norm": true,
            "moe": {"experts": 8, "top_k": 2, "expert_ffn_hidden": 128}})" << "{}";
        QTest::addRow("gpt-dropout") << R"({"layers": 2, "hidden": 256, "heads": 4, "vocab": 512,
            "ffn_hidden": 1024, "ffn": "gelu", "position_embedding": "learned", "max_positions": 512,
            "tied_embeddings": true})"
                                     << R"({"training": {"dropout": {"hidden": 0.1, "attention": 0.1}},
                                           "memory": {"attention": "eager"}})";
        QTest::addRow("squared-relu") << R"({"layers": 2, "hidden": 256, "heads": 4, "vocab": 512,
            "ffn_hidden": 1024, "ffn": "squared_relu", "norm": "layernorm", "linear_bias": true})"
                                      << "{}";
    }

    void shapeProbes()
    {
        QFETCH(QString, model);
        QFETCH(QString, extra);
        nlohmann::json j = planToJson(m_plan);
        j["model"] = nlohmann::json::parse(model.toStdString());
        j["training"]["seq_len"] = 256;
        j["parallel"] = {{"dp", 4}};
        j.merge_patch(nlohmann::json::parse(extra.toStdString()));
        const Plan plan = parsePlan(j, Catalog::builtin());
        RunResults r;
        runProbeAlone(plan, r);
        if (QTest::currentTestFailed())
            return;
        QVERIFY2(r.probe_result.ran(), (r.probe_result.status + ": " + r.probe_result.message).c_str());
        QCOMPARE(r.probe_result.layers, 2);
        const MemoryComparison mc = compareProbe(plan, r, Catalog::builtin());
        qInfo("%s probe on CPU: predicted %.0f B, measured %.0f B (%.2fx)", QTest::currentDataTag(),
              mc.predicted_peak, mc.measured_peak, mc.ratio);
        QVERIFY2(mc.ratio > 0.5 && mc.ratio < 2.0, qPrintable(QString::number(mc.ratio)));
    }

    void resultsAndProfile()
    {
        const nlohmann::json j = resultsToJson(m_plan, m_results, Catalog::builtin());
        QCOMPARE(j["format"].get<std::string>(), std::string("shardscope-bench"));
        QCOMPARE(j["kernels"].size(), m_results.kernels.size());
        QVERIFY(j["memory_probe"].contains("predicted_peak"));
        const DeviceProfile d = deviceFromJson(j["calibrated_device"]);
        QVERIFY(d.calibration.present);
        QVERIFY(!d.calibration.gemm_flops.empty());
        QVERIFY(!d.calibration.busbw.empty());
    }

    /// An interpreter that cannot import torch (/usr/bin/python3 -I -S, without dist-packages):
    /// the real worker stops before its hello, and the error names the interpreter that ran,
    /// the worker's interpreter and version, the missing module and how to get it.
    void missingTorch()
    {
        const QString python = qEnvironmentVariable("SHARDSCOPE_TEST_DATA") +
                               QStringLiteral("/runner/fake_python_without_torch.sh");
        QVERIFY2(QFileInfo(python).isExecutable(), qPrintable(python));
        const Workload w = buildWorkload(m_plan, WorkloadOptions{}, &Catalog::builtin());
        RunOptions o;
        o.backend = QStringLiteral("torch");
        o.device = QStringLiteral("cpu");
        o.python = python;
        o.startTimeoutMs = 60000;
        BenchmarkRunner runner;
        QSignalSpy started(&runner, &BenchmarkRunner::started);
        QSignalSpy finished(&runner, &BenchmarkRunner::finished);
        QSignalSpy failed(&runner, &BenchmarkRunner::failed);
        QVERIFY(runner.start(m_plan, w, o));
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() + failed.count() > 0, 60000);
        QCOMPARE(started.count(), 0);
        QCOMPARE(failed.count(), 1);
        const QString error = failed.first().at(0).toString();
        qInfo("%s", qPrintable(error));
        QVERIFY2(error.startsWith(QStringLiteral("the Python interpreter \"%1\" cannot run the "
                                                 "worker: ")
                                      .arg(python)),
                 qPrintable(error));
        QVERIFY2(error.contains(kPython + QStringLiteral(" (Python 3.")), qPrintable(error));
        QVERIFY2(error.contains(QStringLiteral("cannot import torch (No module named 'torch')")),
                 qPrintable(error));
        QVERIFY2(error.contains(QStringLiteral("apt-get install python3-torch")),
                 qPrintable(error));
        QVERIFY2(!error.contains(QStringLiteral("Traceback")), qPrintable(error));
    }
};

QTEST_GUILESS_MAIN(TestTorchWorker)
#include "tst_torchworker.moc"
