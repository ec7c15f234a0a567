// shardscope-cli in process: exit statuses, the JSON contract of plan-format.md, the table's
// units, and errors that name the field.
#include "cli/cli.h"
#include "core/catalog.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>
#include <nlohmann/json.hpp>
#include <sstream>

using namespace shardscope;
using nlohmann::json;

namespace {

struct Result
{
    int code;
    std::string out, err;
};

Result runCli(std::vector<std::string> args)
{
    std::ostringstream out, err;
    const int code = cli::run(args, out, err);
    return {code, out.str(), err.str()};
}

std::string casePath(const char *name)
{
    return Catalog::builtin().dataDir() + "/cases/" + name;
}

} // namespace

class TestCli : public QObject
{
    Q_OBJECT

private slots:
    void versionAndHelp()
    {
        Result r = runCli({"--version"});
        QCOMPARE(r.code, 0);
        QVERIFY(QString::fromStdString(r.out).startsWith(QStringLiteral("shardscope-cli ")));
        r = runCli({"--help"});
        QCOMPARE(r.code, 0);
        QVERIFY(r.out.find("estimate PLAN") != std::string::npos);
        r = runCli({});
        QCOMPARE(r.code, 2);
        r = runCli({"frobnicate"});
        QCOMPARE(r.code, 2);
        QVERIFY(r.err.find("unknown command") != std::string::npos);
    }

    void estimateJsonContract()
    {
        const Result r = runCli({"estimate", casePath("hcie-ai-ddp.plan.json"), "--format", "json"});
        QCOMPARE(r.code, 0);
        QVERIFY(r.err.empty());
        const json j = json::parse(r.out);
        for (const char *k : {"plan", "hbm_bytes", "usable_bytes", "fits", "peak_rank", "peak_bytes",
                              "ranks", "communication", "step"})
            QVERIFY2(j.contains(k), k);
        QCOMPARE(j["hbm_bytes"].get<double>(), 68719476736.0);
        QCOMPARE(j["fits"].get<bool>(), false);
        const json &rank = j["ranks"][0];
        double sum = 0;
        for (const char *c : {"parameters", "gradients", "master_weights", "optimizer_states",
                              "activations", "logits_and_loss", "communication_buffers", "transient"}) {
            QVERIFY2(rank["components"].contains(c), c);
            sum += rank["components"][c].get<double>();
        }
        QVERIFY(qFuzzyCompare(sum, rank["peak_bytes"].get<double>()));
        QVERIFY(rank.contains("runtime_reserved_bytes"));
        QCOMPARE(QString::fromStdString(rank["peak_phase"].get<std::string>()),
                 QStringLiteral("optimizer_step"));
        // usable = hbm - the largest reserve
        QVERIFY(qFuzzyCompare(j["usable_bytes"].get<double>(),
                              j["hbm_bytes"].get<double>() - rank["runtime_reserved_bytes"].get<double>()));
        for (const char *k : {"compute_s", "communication_s", "step_s", "tokens_per_s", "mfu"})
            QVERIFY2(j["step"].contains(k), k);
    }

    void estimateTableLabelsUnits()
    {
        const Result r = runCli({"estimate", casePath("hcie-ai-fsdp.plan.json")});
        QCOMPARE(r.code, 0);
        const QString out = QString::fromStdString(r.out);
        QVERIFY(out.contains(QStringLiteral(" GiB")));
        QVERIFY(out.contains(QStringLiteral(" GB")));
        QVERIFY(out.contains(QStringLiteral("Verdict: FITS")));
        // The case's rough accounting: 16 bytes per parameter, 112 GB at a nominal 7B.
        QVERIFY(out.contains(QStringLiteral("112 GB")));
        QVERIFY(out.contains(QStringLiteral("(nominal: 14 GB)")));
    }

    void badInput_data()
    {
        QTest::addColumn<QString>("content");
        QTest::addColumn<QString>("expected"); // on stderr
        QTest::addRow("malformed") << QStringLiteral("{\"model\": ") << QStringLiteral("malformed JSON");
        QTest::addRow("wrong type") << QStringLiteral(R"({"model": {"preset": "llama2-7b"}, "training": {"seq_len": "long"}, "cluster": {"device": "h200", "devices_per_node": 1}})")
                                    << QStringLiteral("training.seq_len: must be an integer");
        QTest::addRow("world size") << QStringLiteral(R"({"model": {"preset": "llama2-7b"}, "training": {"seq_len": 4096}, "parallel": {"dp": 4}, "cluster": {"device": "h200", "devices_per_node": 8}})")
                                    << QStringLiteral("parallel: dp * tp * pp * cp = 4");
        QTest::addRow("empty") << QString() << QStringLiteral("malformed JSON");
    }

    void badInput()
    {
        QFETCH(QString, content);
        QFETCH(QString, expected);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("bad.plan.json"));
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(content.toUtf8());
        f.close();
        for (const char *format : {"table", "json"}) {
            const Result r = runCli({"estimate", path.toStdString(), "--format", format});
            QCOMPARE(r.code, 2);
            QVERIFY(r.out.empty());
            QVERIFY2(QString::fromStdString(r.err).contains(expected), r.err.c_str());
        }
    }

    void badArguments()
    {
        QCOMPARE(runCli({"estimate"}).code, 2);
        QCOMPARE(runCli({"estimate", "/nonexistent.plan.json"}).code, 2);
        QVERIFY(runCli({"estimate", "/nonexistent.plan.json"}).err.find("cannot be read") != std::string::npos);
        QCOMPARE(runCli({"estimate", casePath("hcie-ai-ddp.plan.json"), "--format", "xml"}).code, 2);
        QCOMPARE(runCli({"estimate", casePath("hcie-ai-ddp.plan.json"), "--bogus"}).code, 2);
    }
};

QTEST_APPLESS_MAIN(TestCli)
#include "tst_cli.moc"
