// `shardscope-cli search` and `shardscope-cli compare`, run in-process: output shapes, the seed
// case's figures (message sizes checked by hand in tst_comm), and exit status 2 with a message
// naming the field or option on bad input.
#include "cli/cli.h"
#include "core/files.h"
#include "testdata.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>
#include <nlohmann/json.hpp>
#include <sstream>

using namespace shardscope;
using nlohmann::json;

namespace {

std::string casePath(const char *name)
{
    return (testing::sourceDir() + QStringLiteral("/resources/cases/") + QString::fromUtf8(name))
        .toStdString();
}

int runCli(const std::vector<std::string> &args, std::string &out, std::string &err)
{
    std::ostringstream o, e;
    const int rc = cli::run(args, o, e);
    out = o.str();
    err = e.str();
    return rc;
}

} // namespace

class TestCliSearch : public QObject
{
    Q_OBJECT

private slots:
    void searchJson();
    void searchTable();
    void searchConstraints();
    void compareJson();
    void compareTable();
    void badInput_data();
    void badInput();
};

void TestCliSearch::searchJson()
{
    std::string out, err;
    QCOMPARE(
        runCli({"search", casePath("hcie-ai-fsdp.plan.json"), "--top", "5", "--format", "json"},
               out, err),
        0);
    const json j = json::parse(out);
    QVERIFY(j["evaluated"].get<uint64_t>() > 0);
    QVERIFY(j["fitting"].get<uint64_t>() >= 5);
    QCOMPARE(j["global_batch"].get<int>(), 8); // dp 8 x micro-batch 1 x grad_accum 1
    QCOMPARE(j["ranked"].size(), size_t(5));
    double previous = 0;
    for (const json &r : j["ranked"]) {
        QVERIFY(r["required_bytes"].get<double>() <= 64.0 * 1024 * 1024 * 1024);
        QVERIFY(r["step_s"].get<double>() >= previous);
        previous = r["step_s"].get<double>();
        const json &pa = r["parallel"];
        QCOMPARE(pa["dp"].get<int>() * pa["tp"].get<int>() * pa["pp"].get<int>() *
                     pa["cp"].get<int>(),
                 8);
    }
    QVERIFY(!j["pareto"].empty());
    // By default only the layouts that can reach the ranking or the front are estimated;
    // --count-fitting estimates every one, with the same results.
    QCOMPARE(j["fitting_complete"].get<bool>(), false);
    std::string outAll;
    QCOMPARE(runCli({"search", casePath("hcie-ai-fsdp.plan.json"), "--top", "5", "--format", "json",
                     "--count-fitting"},
                    outAll, err),
             0);
    const json all = json::parse(outAll);
    QCOMPARE(all["fitting_complete"].get<bool>(), true);
    QVERIFY(all["fitting"].get<uint64_t>() >= j["fitting"].get<uint64_t>());
    QVERIFY(all["estimated"].get<uint64_t>() > j["estimated"].get<uint64_t>());
    QCOMPARE(all["ranked"].size(), j["ranked"].size());
    for (size_t i = 0; i < j["ranked"].size(); ++i) {
        QCOMPARE(all["ranked"][i]["layout"].get<std::string>(), j["ranked"][i]["layout"].get<std::string>());
        QCOMPARE(all["ranked"][i]["step_s"].get<double>(), j["ranked"][i]["step_s"].get<double>());
    }
    QCOMPARE(all["pareto"].size(), j["pareto"].size());
}

void TestCliSearch::searchTable()
{
    std::string out, err;
    QCOMPARE(runCli({"search", casePath("hcie-ai-tp8.plan.json"), "--top=3", "--global-batch", "2",
                     "--no-offload"},
                    out, err),
             0);
    QVERIFY2(out.find("Fastest layouts") != std::string::npos, out.c_str());
    QVERIFY(out.find("Pareto front") != std::string::npos);
    QVERIFY(out.find("global batch 2 sequences") != std::string::npos);
    QVERIFY(out.find("off:") == std::string::npos); // --no-offload
}

void TestCliSearch::searchConstraints()
{
    // 262,144 tokens of 32K: 8 sequences; tp 2 only; full recompute only; 4 GiB kept free.
    std::string out, err;
    QCOMPARE(runCli({"search", casePath("hcie-ai-ddp.plan.json"), "--global-tokens", "262144",
                     "--tp", "2", "--recompute", "full", "--offload", "none", "--min-headroom",
                     "4", "--format", "json"},
                    out, err),
             0);
    const json j = json::parse(out);
    QCOMPARE(j["global_batch"].get<int>(), 8);
    QCOMPARE(j["constraints"]["tp"].get<int>(), 2);
    QVERIFY(!j["ranked"].empty());
    for (const json &r : j["ranked"]) {
        QCOMPARE(r["parallel"]["tp"].get<int>(), 2);
        QCOMPARE(r["memory"]["recompute"].get<std::string>(), std::string("full"));
        QVERIFY(r["required_bytes"].get<double>() + 4.0 * 1024 * 1024 * 1024 <=
                64.0 * 1024 * 1024 * 1024);
        QVERIFY(r.dump().find("\"optimizer\":true") == std::string::npos);
    }
    // At most 4 devices: half the node.
    QCOMPARE(runCli({"search", casePath("hcie-ai-fsdp.plan.json"), "--global-batch", "8",
                     "--max-devices", "4", "--top", "3", "--no-offload"},
                    out, err),
             0);
    QVERIFY2(out.find("1 x 4 ascend-910b2") != std::string::npos, out.c_str());
    QVERIFY(out.find("Constraints: at most 4 devices") != std::string::npos);
    // No axis beyond the classic ones: every layout keeps ring CP, full sharding over all of dp,
    // full recompute of every layer; with them, some layout differs.
    auto axesUsed = [&](const std::vector<std::string> &extra) {
        std::vector<std::string> args = {"search", casePath("hcie-ai-fsdp-cp.plan.json"), "--top", "300",
                                         "--format", "json"};
        args.insert(args.end(), extra.begin(), extra.end());
        if (runCli(args, out, err) != 0)
            return -1;
        const json result = json::parse(out);
        int other = 0;
        for (const json &r : result["ranked"]) {
            const json &pa = r["parallel"];
            if (pa.value("cp_algo", std::string("ring")) != "ring" || pa.value("dp_shard", 0) > 0)
                ++other;
        }
        return other;
    };
    QCOMPARE(axesUsed({"--axes", "none"}), 0);
    QVERIFY(axesUsed({"--axes", "cp-algo,hsdp"}) > 0);
}

void TestCliSearch::compareJson()
{
    std::string out, err;
    QCOMPARE(
        runCli({"compare", casePath("hcie-ai-fsdp.plan.json"), casePath("hcie-ai-tp8.plan.json"),
                casePath("hcie-ai-ddp.plan.json"), "--format", "json"},
               out, err),
        0);
    const json j = json::parse(out)["plans"];
    QCOMPARE(j.size(), size_t(3));
    // FSDP: a Llama-2-7B layer (202,383,360 parameters) gathered in bf16 = 404,766,720 B, once
    // per layer forward.
    const json &fsdp = j[0]["collectives"][0];
    QCOMPARE(fsdp["collective"].get<std::string>(), std::string("all_gather"));
    QCOMPARE(fsdp["bytes"].get<double>(), 404766720.0);
    QCOMPARE(fsdp["count_per_layer"].get<double>(), 1.0);
    QVERIFY(j[0]["fits"].get<bool>());
    // TP8 + SP: 32768 x 4096 x 2 B = 268,435,456 B, 2 all-gathers per layer forward.
    const json &tp = j[1]["collectives"][0];
    QCOMPARE(tp["group"].get<std::string>(), std::string("tp"));
    QCOMPARE(tp["bytes"].get<double>(), 268435456.0);
    QCOMPARE(tp["count_per_layer"].get<double>(), 2.0);
    QCOMPARE(tp["exposed_time_s"].get<double>(), 64 * tp["time_s"].get<double>());
    // DDP does not fit (the case's starting point).
    QVERIFY(!j[2]["fits"].get<bool>());
    QCOMPARE(j[2]["collectives"][0]["per_layer"].get<bool>(), false);
    for (const json &p : j)
        QVERIFY(p["step"]["step_s"].get<double>() > 0);
}

void TestCliSearch::compareTable()
{
    std::string out, err;
    QCOMPARE(runCli({"compare", casePath("hcie-ai-fsdp-cp.plan.json"),
                     casePath("hcie-ai-tp4-fsdp2.plan.json")},
                    out, err),
             0);
    QVERIFY(out.find("send_recv") != std::string::npos); // the CP ring
    QVERIFY(out.find("reduce_scatter") != std::string::npos);
    QVERIFY(out.find("Summary") != std::string::npos);
}

void TestCliSearch::badInput_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("message");
    const QString fsdp = QString::fromStdString(casePath("hcie-ai-fsdp.plan.json"));
    QTest::addRow("search without plan")
        << QStringList{QStringLiteral("search")} << QStringLiteral("missing PLAN");
    QTest::addRow("search two plans")
        << QStringList{QStringLiteral("search"), fsdp, fsdp} << QStringLiteral("one plan file");
    QTest::addRow("search --top text")
        << QStringList{QStringLiteral("search"), fsdp, QStringLiteral("--top"),
                       QStringLiteral("many")}
        << QStringLiteral("--top must be an integer");
    QTest::addRow("search --axes unknown")
        << QStringList{QStringLiteral("search"), fsdp, QStringLiteral("--axes"), QStringLiteral("etp,tp")}
        << QStringLiteral("--axes takes all, none or a list of etp");
    QTest::addRow("search --min-cp-tokens negative")
        << QStringList{QStringLiteral("search"), fsdp, QStringLiteral("--min-cp-tokens=-1")}
        << QStringLiteral("--min-cp-tokens must be an integer between 0");
    QTest::addRow("search --top 0")
        << QStringList{QStringLiteral("search"), fsdp, QStringLiteral("--top=0")}
        << QStringLiteral("--top must be an integer between 1");
    QTest::addRow("search --global-batch missing")
        << QStringList{QStringLiteral("search"), fsdp, QStringLiteral("--global-batch")}
        << QStringLiteral("--global-batch needs a value");
    QTest::addRow("search --format xml")
        << QStringList{QStringLiteral("search"), fsdp, QStringLiteral("--format"),
                       QStringLiteral("xml")}
        << QStringLiteral("--format must be table or json");
    QTest::addRow("search unknown option")
        << QStringList{QStringLiteral("search"), fsdp, QStringLiteral("--fast")}
        << QStringLiteral("unknown option --fast");
    QTest::addRow("search missing file")
        << QStringList{QStringLiteral("search"), QStringLiteral("/nonexistent.plan.json")}
        << QStringLiteral("cannot be read");
    QTest::addRow("search bad plan")
        << QStringList{QStringLiteral("search"), QStringLiteral("@BADTP@")}
        << QStringLiteral("parallel.tp");
    // 3e9 sequences overflowed the per-replica grad_accum (an int): negative step times ranked
    // first, exit 0.
    QTest::addRow("search --global-batch overflow")
        << QStringList{QStringLiteral("search"), fsdp, QStringLiteral("--global-batch"),
                       QStringLiteral("3000000000")}
        << QStringLiteral("global_batch: must be at most 2147483647 sequences");
    QTest::addRow("search --global-batch tokens")
        << QStringList{QStringLiteral("search"), fsdp, QStringLiteral("--global-batch"),
                       QStringLiteral("100000000")}
        << QStringLiteral("beyond any run");
    QTest::addRow("search --recompute unknown")
        << QStringList{QStringLiteral("search"), fsdp, QStringLiteral("--recompute"),
                       QStringLiteral("full,some")}
        << QStringLiteral("--recompute takes a list of none, selective, full");
    QTest::addRow("search --offload unknown")
        << QStringList{QStringLiteral("search"), fsdp, QStringLiteral("--offload"),
                       QStringLiteral("params")}
        << QStringLiteral("--offload takes none or a list");
    QTest::addRow("search --min-headroom negative")
        << QStringList{QStringLiteral("search"), fsdp, QStringLiteral("--min-headroom"),
                       QStringLiteral("-1")}
        << QStringLiteral("--min-headroom must be a number of GiB");
    QTest::addRow("search batch and tokens")
        << QStringList{QStringLiteral("search"), fsdp, QStringLiteral("--global-batch"),
                       QStringLiteral("8"), QStringLiteral("--global-tokens"), QStringLiteral("8")}
        << QStringLiteral("exclude each other");
    QTest::addRow("compare one plan") << QStringList{QStringLiteral("compare"), fsdp}
                                      << QStringLiteral("at least two plan files");
    QTest::addRow("compare bad plan")
        << QStringList{QStringLiteral("compare"), fsdp, QStringLiteral("@BADTP@")}
        << QStringLiteral("parallel.tp");
    QTest::addRow("compare --top") << QStringList{QStringLiteral("compare"), fsdp, fsdp,
                                                  QStringLiteral("--top"), QStringLiteral("3")}
                                   << QStringLiteral("unknown option --top");
}

void TestCliSearch::badInput()
{
    QFETCH(QStringList, args);
    QFETCH(QString, message);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString bad = dir.filePath(QStringLiteral("bad.plan.json"));
    {
        json j = json::parse(readTextFile(casePath("hcie-ai-tp8.plan.json")));
        j["parallel"]["tp"] = 3; // world 3 matches, but 3 does not divide the 32 heads
        j["parallel"]["dp"] = 1;
        j["cluster"]["devices_per_node"] = 3;
        QFile f(bad);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QByteArray::fromStdString(j.dump()));
    }
    std::vector<std::string> a;
    for (const QString &s : args)
        a.push_back(s == QStringLiteral("@BADTP@") ? bad.toStdString() : s.toStdString());
    std::string out, err;
    QCOMPARE(runCli(a, out, err), 2);
    QVERIFY2(err.find(message.toStdString()) != std::string::npos, err.c_str());
}

QTEST_APPLESS_MAIN(TestCliSearch)
#include "tst_clisearch.moc"
