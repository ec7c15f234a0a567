// The memory engine's `pytorch` profile against real measurements: TinyLlama-1.1B training
// steps on one H200 (shared/calibration/h200_tinyllama_and_kernels.jsonl). Every steady-state
// row (steps 1+) must be predicted within 5% of the measured peak allocated; the forward and
// backward peaks are checked too. The rows are a check, not something the engine is fitted to:
// the engine derives activations op by op (see core/memory.cpp).
#include "core/catalog.h"
#include "core/estimate.h"
#include "core/units.h"
#include "testdata.h"

#include <QFile>
#include <QTest>
#include <nlohmann/json.hpp>

using namespace shardscope;
using nlohmann::json;

namespace {

struct Row
{
    json record;
    double base = 0;
};

std::vector<json> smallRows()
{
    QFile f(testing::sharedDir() + QStringLiteral("/calibration/h200_tinyllama_and_kernels.jsonl"));
    if (!f.open(QIODevice::ReadOnly))
        return {};
    std::vector<json> rows;
    while (!f.atEnd()) {
        const QByteArray line = f.readLine().trimmed();
        if (line.isEmpty())
            continue;
        json j = json::parse(line.toStdString());
        if (j.value("group", "") == "small" && j.value("ok", false))
            rows.push_back(j);
    }
    return rows;
}

Plan planFor(const json &row)
{
    const bool amp = row.at("mode") == "amp";
    json p = {
        {"format", "shardscope-plan"},
        {"version", 1},
        {"name", "calibration row"},
        {"model",
         {{"preset", "tinyllama-1.1b"},
          {"hidden", row["shape"]["hidden_size"]},
          {"ffn_hidden", row["shape"]["intermediate_size"]},
          {"layers", row["shape"]["num_hidden_layers"]},
          {"heads", row["shape"]["num_attention_heads"]},
          {"kv_heads", row["shape"]["num_key_value_heads"]},
          {"vocab", row["shape"]["vocab_size"]},
          {"tied_embeddings", row["shape"]["tie_word_embeddings"]}}},
        {"training", {{"seq_len", row["seq"]}, {"micro_batch", row["mbs"]}, {"grad_accum", 1}}},
        {"precision",
         {{"params", amp ? "fp32" : "bf16"},
          {"grads", amp ? "fp32" : "bf16"},
          {"master_weights", "none"},
          {"optimizer", "adamw"},
          {"optimizer_state", amp ? "fp32" : "bf16"},
          {"compute", "bf16"}}},
        {"parallel", {{"dp", 1}, {"tp", 1}, {"pp", 1}, {"cp", 1}}},
        {"memory",
         {{"recompute", row["ckpt"].get<bool>() ? "full" : "none"},
          {"attention", row["attn"] == "eager" ? "eager" : "flash"}}},
        {"framework", "pytorch"},
        {"cluster", {{"device", "h200"}, {"devices_per_node", 1}, {"nodes", 1}}}};
    return parsePlan(p, Catalog::builtin());
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
        const double base = row["base_gib"].get<double>();
        for (const json &step : row["steps"]) {
            if (step["step"].get<int>() == 0)
                continue; // step 0 allocates the optimizer states: not the steady state
            const double measured = (step["peak_alloc"].get<double>() - base) * kGiB;
            const double predicted = r.peak_bytes;
            const double err = (predicted - measured) / measured;
            qInfo("%s step %d: predicted %.3f GiB, measured %.3f GiB, error %+.2f%% (peak in %s)",
                  rowName(row).constData(), step["step"].get<int>(), predicted / kGiB,
                  measured / kGiB, 100 * err, std::string(phaseKey(r.peak_phase)).c_str());
            QVERIFY2(std::fabs(err) <= 0.05,
                     qPrintable(QStringLiteral("error %1%").arg(100 * err, 0, 'f', 2)));
        }
    }

    void phasePeaks_data() { steadyStatePeak_data(); }

    // The forward peak (peak up to the end of forward) and the peak up to the end of backward.
    void phasePeaks()
    {
        QFETCH(QString, record);
        const json row = json::parse(record.toStdString());
        const Plan plan = planFor(row);
        const RankMemory r = estimateMemory(plan, Catalog::builtin()).ranks.front();
        const double base = row["base_gib"].get<double>();
        const json &step = row["steps"][1];
        const double fwd = r.phases[size_t(Phase::Forward)].total();
        const double bwd = std::max(fwd, r.phases[size_t(Phase::Backward)].total());
        const double mFwd = (step["peak_fwd"].get<double>() - base) * kGiB;
        const double mBwd = (step["peak_bwd"].get<double>() - base) * kGiB;
        qInfo("%s: forward %.3f vs %.3f GiB (%+.2f%%), to end of backward %.3f vs %.3f GiB (%+.2f%%)",
              rowName(row).constData(), fwd / kGiB, mFwd / kGiB, 100 * (fwd - mFwd) / mFwd,
              bwd / kGiB, mBwd / kGiB, 100 * (bwd - mBwd) / mBwd);
        QVERIFY(std::fabs(fwd - mFwd) / mFwd <= 0.05);
        QVERIFY(std::fabs(bwd - mBwd) / mBwd <= 0.05);
    }
};

QTEST_APPLESS_MAIN(TestCalibration)
#include "tst_calibration.moc"
