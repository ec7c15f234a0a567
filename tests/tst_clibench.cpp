// shardscope-cli bench: argument errors, the kernel list, a run on the native CPU backend with
// the results and profile files, and imports beside the plan's estimate.
#include "cli/cli.h"
#include "testdata.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>

#include <QCoreApplication>
#include <QTemporaryDir>
#include <QTest>
#include <nlohmann/json.hpp>
#include <sstream>

namespace {

std::string dataFile(const char *name)
{
    return (qEnvironmentVariable("SHARDSCOPE_TEST_DATA") + QStringLiteral("/runner/") +
            QLatin1String(name))
        .toStdString();
}

int runCli(const std::vector<std::string> &args, std::string &out, std::string &err)
{
    std::ostringstream o, e;
    // The verb alone (args[0] is "bench"), as cli::run dispatches it.
    const int rc =
        shardscope::cli::benchCommand(std::vector<std::string>(args.begin() + 1, args.end()), o, e);
    out = o.str();
    err = e.str();
    return rc;
}

} // namespace

class TestCliBench : public QObject
{
    Q_OBJECT

private slots:
    void badArguments_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        QTest::addRow("no plan") << QStringList{QStringLiteral("bench")} << "missing PLAN";
        QTest::addRow("bad backend")
            << QStringList{QStringLiteral("bench"), QStringLiteral("x.json"),
                           QStringLiteral("--backend"), QStringLiteral("tpu")}
            << "cpu or torch";
        QTest::addRow("bad device")
            << QStringList{QStringLiteral("bench"), QStringLiteral("x.json"),
                           QStringLiteral("--device"), QStringLiteral("xpu")}
            << "cuda, npu or cpu";
        QTest::addRow("bad gemm") << QStringList{QStringLiteral("bench"), QStringLiteral("x.json"),
                                                 QStringLiteral("--gemm"), QStringLiteral("8x8")}
                                  << "MxNxK";
        QTest::addRow("gemm beyond int64")
            << QStringList{QStringLiteral("bench"), QStringLiteral("x.json"), QStringLiteral("--gemm"),
                           QStringLiteral("9223372036854775807x2x2")}
            << "each dimension from 1 to 1048576";
        QTest::addRow("gemm too large")
            << QStringList{QStringLiteral("bench"), QStringLiteral("x.json"), QStringLiteral("--gemm"),
                           QStringLiteral("1048576x1048576x8")}
            << "2^36 elements";
        QTest::addRow("gemm trailing text")
            << QStringList{QStringLiteral("bench"), QStringLiteral("x.json"), QStringLiteral("--gemm"),
                           QStringLiteral("8x8x8x8")}
            << "MxNxK";
        // 1e10 s x 1000 overflowed the int milliseconds.
        QTest::addRow("timeout overflow")
            << QStringList{QStringLiteral("bench"), QStringLiteral("x.json"), QStringLiteral("--timeout"),
                           QStringLiteral("10000000000")}
            << "--timeout needs a whole number from 0 to 604800";
        QTest::addRow("ranks overflow")
            << QStringList{QStringLiteral("bench"), QStringLiteral("x.json"), QStringLiteral("--ranks"),
                           QStringLiteral("4294967297")}
            << "--ranks needs a whole number";
        QTest::addRow("repeats overflow")
            << QStringList{QStringLiteral("bench"), QStringLiteral("x.json"), QStringLiteral("--repeats"),
                           QStringLiteral("99999999999")}
            << "--repeats needs a whole number";
        QTest::addRow("warmup overflow")
            << QStringList{QStringLiteral("bench"), QStringLiteral("x.json"), QStringLiteral("--warmup"),
                           QStringLiteral("3000000000")}
            << "--warmup needs a whole number";
        QTest::addRow("missing file")
            << QStringList{QStringLiteral("bench"), QStringLiteral("/nonexistent.plan.json")}
            << "cannot be read";
    }
    void badArguments()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        std::vector<std::string> a;
        for (const QString &s : args)
            a.push_back(s.toStdString());
        std::string out, err;
        QCOMPARE(runCli(a, out, err), int(shardscope::cli::ExitBadInput));
        QVERIFY2(QString::fromStdString(err).contains(message), err.c_str());
    }

    void list()
    {
        std::string out, err;
        QCOMPARE(runCli({"bench", dataFile("tiny.plan.json"), "--list", "--format", "json",
                         "--gemm", "64x32x16:fp32"},
                        out, err),
                 0);
        const nlohmann::json j = nlohmann::json::parse(out);
        QCOMPARE(j["kernels"][0]["name"].get<std::string>(),
                 std::string("extra.gemm_64x32x16_fp32"));
        QVERIFY(j["kernels"].size() > 10);
        QCOMPARE(j["memory_probe"]["layers"].get<int>(), 2);
    }

    void runCpu()
    {
        QTemporaryDir dir;
        const std::string results = dir.filePath(QStringLiteral("r.json")).toStdString();
        const std::string profile = dir.filePath(QStringLiteral("p.json")).toStdString();
        std::string out, err;
        QCOMPARE(runCli({"bench", dataFile("tiny.plan.json"), "--backend", "cpu", "--repeats", "1",
                         "--warmup", "0", "-o", results, "--profile", profile},
                        out, err),
                 0);
        QVERIFY2(QString::fromStdString(out).contains(QStringLiteral("layer.qkv.fwd")),
                 out.c_str());
        QFile r(QString::fromStdString(results)), p(QString::fromStdString(profile));
        QVERIFY(r.open(QIODevice::ReadOnly));
        const nlohmann::json j = nlohmann::json::parse(r.readAll().toStdString());
        QCOMPARE(j["format"].get<std::string>(), std::string("shardscope-bench"));
        QCOMPARE(j["kernels"][0]["measured"]["status"].get<std::string>(), std::string("ok"));
        QVERIFY(j["kernels"][0]["predicted_s"].get<double>() > 0);
        QVERIFY(p.open(QIODevice::ReadOnly));
        const nlohmann::json d = nlohmann::json::parse(p.readAll().toStdString());
        QCOMPARE(d["id"].get<std::string>(), std::string("h200-calibrated"));
        QVERIFY(d["calibration"]["gemm_flops"].size() > 0);
    }

    // Without OpenBLAS (SHARDSCOPE_OPENBLAS naming a file that is not there) the CPU backend
    // fails before its first kernel, naming the library, and the CLI exits 1. In a process of
    // its own: the library is opened once per process.
    void cpuWithoutOpenblas()
    {
        const QString cli = qEnvironmentVariable("SHARDSCOPE_CLI");
        QVERIFY2(QFileInfo::exists(cli), qPrintable(cli));
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("SHARDSCOPE_OPENBLAS"), QStringLiteral("/nonexistent/libopenblas.so.0"));
        p.setProcessEnvironment(env);
        p.start(cli, {QStringLiteral("bench"), QString::fromStdString(dataFile("tiny.plan.json")),
                      QStringLiteral("--backend"), QStringLiteral("cpu"), QStringLiteral("--repeats"),
                      QStringLiteral("1")});
        QVERIFY(p.waitForFinished(60000));
        const QByteArray out = p.readAllStandardOutput(), err = p.readAllStandardError();
        QCOMPARE(p.exitCode(), int(shardscope::cli::ExitFailure));
        QVERIFY2(err.contains("cannot open OpenBLAS (/nonexistent/libopenblas.so.0)"), err.constData());
        QVERIFY2(out.contains("Backend: did not start"), out.constData());
    }

    // On a full disk (an injected file size limit), -o and --profile report the failure with
    // exit 1 and leave the files they would have replaced as they were.
    void fullDiskKeepsOldFiles()
    {
        QTemporaryDir dir;
        const QString results = dir.filePath(QStringLiteral("r.json"));
        const QString profile = dir.filePath(QStringLiteral("p.json"));
        for (const QString &path : {results, profile}) {
            QFile f(path);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("previous\n");
        }
        std::string out, err;
        int rc = 0;
        {
            shardscope::testing::FileSizeLimit limit(512);
            QVERIFY(limit.active());
            rc = runCli({"bench", dataFile("tiny.plan.json"), "--backend", "cpu", "--repeats", "1",
                         "--warmup", "0", "--no-probe", "-o", results.toStdString(), "--profile",
                         profile.toStdString()},
                        out, err);
        }
        QCOMPARE(rc, int(shardscope::cli::ExitFailure));
        QVERIFY2(QString::fromStdString(err).contains(results) &&
                     QString::fromStdString(err).contains(QStringLiteral("unchanged")),
                 err.c_str());
        for (const QString &path : {results, profile}) {
            QFile f(path);
            QVERIFY(f.open(QIODevice::ReadOnly));
            QCOMPARE(f.readAll(), QByteArray("previous\n"));
        }
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden).size(), 2);
    }

    void imports_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("expect");
        QTest::addRow("nccl-tests") << "all_reduce_perf.txt"
                                    << "nccl-tests output";
        QTest::addRow("hccl_test") << "hccl_test_allreduce.txt"
                                   << "hccl_test output";
        QTest::addRow("trace") << "trace.json"
                               << "Memory timeline";
    }
    void imports()
    {
        QFETCH(QString, file);
        QFETCH(QString, expect);
        std::string out, err;
        QCOMPARE(runCli({"bench", dataFile("tiny.plan.json"), "--import",
                         dataFile(file.toLatin1().constData()), "--ranks", "8"},
                        out, err),
                 0);
        QVERIFY2(QString::fromStdString(out).contains(expect), out.c_str());
    }

    // An nccl-tests log whose "# Avg bus bandwidth" line has no value crashed the importer.
    void importDamagedLog()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("all_reduce_perf.txt"));
        QFile in(QString::fromStdString(dataFile("all_reduce_perf.txt")));
        QVERIFY(in.open(QIODevice::ReadOnly));
        QByteArray text = in.readAll();
        text += "# Avg bus bandwidth    : \n";
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(text);
        f.close();
        std::string out, err;
        QCOMPARE(runCli({"bench", dataFile("tiny.plan.json"), "--import", path.toStdString()}, out, err), 0);
        text.replace("     4194304       1048576", "    -4194304       1048576");
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(text);
        f.close();
        QCOMPARE(runCli({"bench", dataFile("tiny.plan.json"), "--import", path.toStdString()}, out, err),
                 int(shardscope::cli::ExitBadInput));
        QVERIFY2(QString::fromStdString(err).contains(QStringLiteral("the size must be a finite number")),
                 err.c_str());
    }

    void importGarbage()
    {
        std::string out, err;
        QCOMPARE(
            runCli({"bench", dataFile("tiny.plan.json"), "--import", dataFile("tiny.plan.json")},
                   out, err),
            int(shardscope::cli::ExitBadInput));
        QVERIFY(!err.empty());
    }
};

QTEST_GUILESS_MAIN(TestCliBench)
#include "tst_clibench.moc"
