// The memory engine's `pytorch` profile against real measurements: TinyLlama-1.1B training
// steps on one H200 (shared/calibration/h200_tinyllama_and_kernels.jsonl). Every steady-state
// row (steps 1+) must be predicted within 5% of the measured peak allocated; the forward and
// backward peaks are checked too. The rows are a check, not something the engine is fitted to:
// the engine derives activations op by op (see core/memory.cpp). Every figure is compared as
// measured: the engine counts PyTorch's cuBLAS workspaces (core/workspace.h), which are all a
// row's `base_gib` holds.
#include "calibrationdata.h"
#include "core/catalog.h"
#include "core/estimate.h"
#include "core/units.h"
#include "core/workspace.h"

#include <QFile>
#include <QTest>
#include <nlohmann/json.hpp>

using namespace shardscope;
using nlohmann::json;

namespace {

std::vector<json> smallRows() { return testing::calibrationStepRows(); }

Plan planFor(const json &row)
{
    return parsePlan(testing::calibrationPlanJson(row), Catalog::builtin());
}

QByteArray rowName(const json &row)
{
    return QStringLiteral("%1 seq%2 mbs%3 %4 %5")
        .arg(QString::fromStdString(row["mode"].get<std::string>()))
        .arg(row["seq"].get<int>())
        .arg(row["mbs"].get<int>())
        .arg(row["ckpt"].get<bool>() ? QStringLiteral("ckpt") : QStringLiteral("no-ckpt"))
        .arg(QString::fromStdString(row["attn"].get<std::string>()))
        .toUtf8();
}

} // namespace

class TestCalibration : public QObject
{
    Q_OBJECT

private slots:
    void parameterCountMatchesMeasurement()
    {
        const auto rows = smallRows();
        if (rows.empty())
            QSKIP("shared/calibration is not beside the checkout");
        for (const json &row : rows) {
            const Plan plan = planFor(row);
            QCOMPARE(countParameters(plan.model).total, row["params"].get<int64_t>());
        }
    }

    // What a row finds allocated before it starts is what the rows before it left: the cuBLAS
    // workspaces of the first one (the model and its states are freed between rows). The engine
    // names the same bytes.
    void baseIsTheGemmWorkspaces()
    {
        const auto rows = smallRows();
        if (rows.empty())
            QSKIP("shared/calibration is not beside the checkout");
        const Catalog &catalog = Catalog::builtin();
        for (size_t i = 0; i < rows.size(); ++i) {
            const Plan plan = planFor(rows[i]);
            const GemmWorkspaces ws = gemmWorkspaces(*catalog.device(plan.cluster.device),
                                                     *catalog.framework(plan.framework));
            QCOMPARE(ws.count, 2);
            const double base = rows[i]["base_gib"].get<double>() * kGiB;
            QCOMPARE(base, i == 0 ? 0.0 : ws.total());
        }
    }

    void steadyStatePeak_data()
    {
        QTest::addColumn<QString>("record");
        const auto rows = smallRows();
        if (rows.empty())
            QSKIP("shared/calibration is not beside the checkout");
        for (const json &row : rows)
            QTest::newRow(rowName(row).constData()) << QString::fromStdString(row.dump());
    }

    // Peak allocated over a whole steady-state step, within 5%.
    void steadyStatePeak()
    {
        QFETCH(QString, record);
        const json row = json::parse(record.toStdString());
        const Plan plan = planFor(row);
        const MemoryEstimate m = estimateMemory(plan, Catalog::builtin());
        QCOMPARE(m.ranks.size(), size_t(1));
        const RankMemory &r = m.ranks.front();
        for (const json &step : row["steps"]) {
            if (step["step"].get<int>() == 0)
                continue; // step 0 allocates the optimizer states: not the steady state
            const double measured = step["peak_alloc"].get<double>() * kGiB;
            const double predicted = r.peak_bytes;
            const double err = (predicted - measured) / measured;
            qInfo("%s step %d: predicted %.3f GiB, measured %.3f GiB, error %+.2f%% (peak in %s)",
                  rowName(row).constData(), step["step"].get<int>(), predicted / kGiB,
                  measured / kGiB, 100 * err, std::string(phaseKey(r.peak_phase)).c_str());
            QVERIFY2(std::fabs(err) <= 0.05,
                     qPrintable(QStringLiteral("error %1%").arg(100 * err, 0, 'f', 2)));
        }
    }

    void afterStep_data() { steadyStatePeak_data(); }

    // What stays allocated after a steady step (torch.cuda.memory_allocated() once the optimizer
    // step is done and the gradients are set to None): the parameters and the optimizer states.
    // Within 1% (the optimizer states, parameters and cuBLAS's workspaces).
    void afterStep()
    {
        QFETCH(QString, record);
        const json row = json::parse(record.toStdString());
        const Plan plan = planFor(row);
        const RankMemory r = estimateMemory(plan, Catalog::builtin()).ranks.front();
        const double predicted = r.after_step.total();
        QCOMPARE(r.after_step[Component::Gradients], 0.0);
        QCOMPARE(r.after_step[Component::Activations], 0.0);
        for (const json &step : row["steps"]) {
            if (step["step"].get<int>() == 0)
                continue;
            const double measured = step["alloc"].get<double>() * kGiB;
            const double err = (predicted - measured) / measured;
            qInfo("%s step %d: after the step %.3f GiB predicted, %.3f measured (%+.2f%%)", rowName(row).constData(),
                  step["step"].get<int>(), predicted / kGiB, measured / kGiB, 100 * err);
            QVERIFY2(std::fabs(err) <= 0.01, qPrintable(QStringLiteral("error %1%").arg(100 * err, 0, 'f', 2)));
        }
    }

    // Reserved: the caching allocator replayed over the step's timeline against what
    // torch.cuda.max_memory_reserved() measured. A check of the allocator model, not a fit:
    // within 5% on average over the rows, and no row beyond 20% (today's worst: -15%, bf16
    // with checkpointing at 32K, where the measured cache grows in step 1 by more than the
    // model's).
    void reservedPeak()
    {
        const auto rows = smallRows();
        if (rows.empty())
            QSKIP("shared/calibration is not beside the checkout");
        double sumAbs = 0, sumAlloc = 0;
        int n = 0;
        QString beyond;
        for (const json &row : rows) {
            const Plan plan = planFor(row);
            const Estimate e = estimate(plan, Catalog::builtin());
            const RankMemory &r = e.memory.ranks.front();
            const json &step = row["steps"][1];
            const double measured = step["peak_reserved"].get<double>() * kGiB;
            const double measuredAlloc = step["peak_alloc"].get<double>() * kGiB;
            const double err = (r.reserved_bytes - measured) / measured;
            // What a flat 5% of the allocated peak (the old reserve) would have said.
            const double flat = (1.05 * measuredAlloc - measured) / measured;
            qInfo("%s: reserved %.3f GiB predicted, %.3f measured (%+.2f%%; allocated %.3f, flat 5%% %+.2f%%)",
                  rowName(row).constData(), r.reserved_bytes / kGiB, measured / kGiB, 100 * err,
                  measuredAlloc / kGiB, 100 * flat);
            if (std::fabs(err) > 0.20)
                beyond += QString::fromUtf8(rowName(row)) + QStringLiteral("; ");
            sumAbs += std::fabs(err);
            sumAlloc += std::fabs(flat);
            ++n;
        }
        qInfo("mean |error| of reserved: %.2f%% (a flat 5%%: %.2f%%) over %d rows", 100 * sumAbs / n,
              100 * sumAlloc / n, n);
        QVERIFY2(beyond.isEmpty(), qPrintable(QStringLiteral("beyond 20%: ") + beyond));
        QVERIFY(sumAbs / n <= 0.05);
    }

    void phasePeaks_data() { steadyStatePeak_data(); }

    // The forward peak (peak up to the end of forward) and the peak up to the end of backward.
    void phasePeaks()
    {
        QFETCH(QString, record);
        const json row = json::parse(record.toStdString());
        const Plan plan = planFor(row);
        const RankMemory r = estimateMemory(plan, Catalog::builtin()).ranks.front();
        const json &step = row["steps"][1];
        const double fwd = r.phases[size_t(Phase::Forward)].total();
        const double bwd = std::max(fwd, r.phases[size_t(Phase::Backward)].total());
        const double mFwd = step["peak_fwd"].get<double>() * kGiB;
        const double mBwd = step["peak_bwd"].get<double>() * kGiB;
        qInfo("%s: forward %.3f vs %.3f GiB (%+.2f%%), to end of backward %.3f vs %.3f GiB (%+.2f%%)",
              rowName(row).constData(), fwd / kGiB, mFwd / kGiB, 100 * (fwd - mFwd) / mFwd,
              bwd / kGiB, mBwd / kGiB, 100 * (bwd - mBwd) / mBwd);
        QVERIFY(std::fabs(fwd - mFwd) / mFwd <= 0.05);
        QVERIFY(std::fabs(bwd - mBwd) / mBwd <= 0.05);
    }
};

QTEST_APPLESS_MAIN(TestCalibration)
#include "tst_calibration.moc"
