// shardscope-cli in process: exit statuses, the JSON contract of plan-format.md, the table's
// units, and errors that name the field.
#include "cli/cli.h"
#include "core/catalog.h"
#include "shardscope_config.h"

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

QString readAll(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QString();
}

void writeFile(const QString &path, const QByteArray &bytes)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(bytes);
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

    // This program links the verbs without the report (as shardscope-cli does, which hands
    // `report` to shardscope-cli-qt): the verb is known and says where reports are rendered.
    void reportIsNotLinkedHere()
    {
        const Result r =
            runCli({"report", casePath("hcie-ai-ddp.plan.json"), "-o", "/nonexistent/x.pdf"});
        QCOMPARE(r.code, int(cli::ExitFailure));
        QVERIFY2(r.err.find("shardscope-cli-qt") != std::string::npos, r.err.c_str());
        QVERIFY(r.err.find("unknown command") == std::string::npos);
    }

    // What shardscope-cli runs itself (no Qt): estimate, search and compare unless they are
    // asked for their help, and --version; the rest goes to shardscope-cli-qt.
    void runsWithoutQt()
    {
        using V = std::vector<std::string>;
        QVERIFY(cli::runsWithoutQt(V{"estimate", "a.plan.json"}));
        QVERIFY(cli::runsWithoutQt(V{"search", "a.plan.json", "--top", "5", "--format", "json"}));
        QVERIFY(cli::runsWithoutQt(V{"compare", "a.plan.json", "b.plan.json"}));
        QVERIFY(cli::runsWithoutQt(V{"search", "--top"})); // an error, in English, here
        QVERIFY(!cli::runsWithoutQt(V{"estimate", "a.plan.json", "--help"}));
        QVERIFY(!cli::runsWithoutQt(V{"estimate", "-h"}));
        QVERIFY(!cli::runsWithoutQt(V{"search", "-h", "a.plan.json"}));
        QVERIFY(!cli::runsWithoutQt(V{"compare", "--help"}));
        QVERIFY(!cli::runsWithoutQt(V{"report", "a.plan.json", "-o", "a.pdf"}));
        QVERIFY(!cli::runsWithoutQt(V{"bench", "a.plan.json"}));
        QVERIFY(!cli::runsWithoutQt(V{"--help"}));
        QVERIFY(cli::runsWithoutQt(V{"--version"}));
        QVERIFY(cli::runsWithoutQt(V{"-V"}));
        QVERIFY(!cli::runsWithoutQt(V{"--version", "extra"}));
        QVERIFY(!cli::runsWithoutQt(V{"frobnicate"}));
        QVERIFY(!cli::runsWithoutQt(V{}));
    }

    // The prefix a program's place implies: shardscope-cli in <prefix>/<bindir>,
    // shardscope-cli-qt in <prefix>/<libexecdir>/shardscope (run by hand too, it finds the
    // same data directory), and a build tree's program the directory above its own.
    void installPrefixOfAProgram()
    {
        const std::string bindir = SHARDSCOPE_INSTALL_BINDIR,
                          libexec = SHARDSCOPE_INSTALL_LIBEXECDIR;
        QCOMPARE(installPrefixOf("/opt/ss/" + bindir + "/shardscope-cli"), std::string("/opt/ss"));
        QCOMPARE(installPrefixOf("/opt/ss/" + libexec + "/shardscope/shardscope-cli-qt"),
                 std::string("/opt/ss"));
        QCOMPARE(installPrefixOf("/tmp/x/root/usr/" + libexec + "/shardscope/shardscope-cli-qt"),
                 std::string("/tmp/x/root/usr"));
        // Not an install's place: the directory above the program's.
        QCOMPARE(installPrefixOf("/home/u/build/app/shardscope-cli-qt"),
                 std::string("/home/u/build"));
        QCOMPARE(installPrefixOf("/opt/ss/" + libexec + "/other/shardscope-cli-qt"),
                 std::string("/opt/ss/" + libexec));
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

    // A plan that gives the model's fields itself (no preset, no display name) is named as a
    // custom shape in the estimate's and the search's headers, not left blank.
    void customShapeIsNamed()
    {
        QTemporaryDir dir;
        json plan = json::parse(readAll(QString::fromStdString(casePath("hcie-ai-fsdp.plan.json"))).toStdString());
        plan["model"] = {{"layers", 4}, {"hidden", 1024}, {"heads", 8}, {"kv_heads", 8}, {"head_dim", 128},
                         {"ffn_hidden", 2816}, {"ffn", "swiglu"}, {"vocab", 32000}};
        const QString path = dir.filePath(QStringLiteral("custom.plan.json"));
        writeFile(path, QByteArray::fromStdString(plan.dump()));
        const Result e = runCli({"estimate", path.toStdString()});
        QCOMPARE(e.code, 0);
        QVERIFY2(QString::fromStdString(e.out).contains(QStringLiteral("Model:   custom shape, ")), e.out.c_str());
        const Result s = runCli({"search", path.toStdString(), "--top", "1"});
        QCOMPARE(s.code, 0);
        QVERIFY2(QString::fromStdString(s.out).contains(QStringLiteral("Model custom shape, ")), s.out.c_str());
        const Result named = runCli({"estimate", casePath("hcie-ai-fsdp.plan.json")});
        QVERIFY(QString::fromStdString(named.out).contains(QStringLiteral("Model:   llama2-7b, ")));
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

    // --lang stands anywhere and is checked: "--lang en report" used to fail ("needs a
    // QGuiApplication") and "--lang xx" was accepted in silence. (The process-level parsing is
    // in main.cpp; tst_report runs the binary with it.)

    // A misspelt key is reported on stderr naming the file, the field and the likely meant
    // one; the estimate still runs.
    void warningsOnStderr()
    {
        QTemporaryDir dir;
        json j = json::parse(readAll(QString::fromStdString(casePath("hcie-ai-fsdp.plan.json"))).toStdString());
        j["memory"]["recompte"] = "full";
        const QString path = dir.filePath(QStringLiteral("typo.plan.json"));
        writeFile(path, QByteArray::fromStdString(j.dump()));
        const Result r = runCli({"estimate", path.toStdString(), "--format", "json"});
        QCOMPARE(r.code, 0);
        QVERIFY2(QString::fromStdString(r.err).contains(
                     QStringLiteral("warning: %1: unknown field \"memory.recompte\"").arg(path)),
                 r.err.c_str());
        QVERIFY2(QString::fromStdString(r.err).contains(QStringLiteral("did you mean \"memory.recompute\"")),
                 r.err.c_str());
        QVERIFY(json::parse(r.out).contains("fits"));
    }

    // estimate --hf-config takes the model from a Hugging Face config.json.
    void estimateFromHuggingFaceConfig()
    {
        QTemporaryDir dir;
        const QString cfg = dir.filePath(QStringLiteral("config.json"));
        writeFile(cfg, R"({"model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008,
            "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 32,
            "vocab_size": 32000, "tie_word_embeddings": false})");
        Result r = runCli({"estimate", casePath("hcie-ai-fsdp.plan.json"), "--hf-config",
                           cfg.toStdString(), "--format", "json"});
        QCOMPARE(r.code, 0);
        const Result preset = runCli({"estimate", casePath("hcie-ai-fsdp.plan.json"), "--format", "json"});
        // The same shape as the llama2-7b preset: the same peak.
        QCOMPARE(json::parse(r.out)["peak_bytes"].get<double>(), json::parse(preset.out)["peak_bytes"].get<double>());
        writeFile(cfg, R"({"model_type": "mamba", "hidden_size": 7168})");
        r = runCli({"estimate", casePath("hcie-ai-fsdp.plan.json"), "--hf-config", cfg.toStdString()});
        QCOMPARE(r.code, 2);
        QVERIFY2(QString::fromStdString(r.err).contains(QStringLiteral("model.hf_config")) &&
                     QString::fromStdString(r.err).contains(QStringLiteral("config.model_type")) &&
                     QString::fromStdString(r.err).contains(cfg),
                 r.err.c_str());
    }

    // Files that are not plans are named for what they are.
    void notAPlan()
    {
        QTemporaryDir dir;
        Result r = runCli({"estimate", dir.path().toStdString()});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.find("is a directory") != std::string::npos, r.err.c_str());
        r = runCli({"estimate", "/dev/zero"});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.find("larger than 16 MiB") != std::string::npos, r.err.c_str());
        const QString bin = dir.filePath(QStringLiteral("x.plan.json"));
        writeFile(bin, QByteArray("{}\0\x7f\x45LF", 7));
        r = runCli({"estimate", bin.toStdString()});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.find("NUL byte") != std::string::npos, r.err.c_str());
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
