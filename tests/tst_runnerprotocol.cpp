// The worker protocol: line parsing, and the torch backend facing missing, crashing, hanging,
// babbling and wrongly versioned workers (small fake workers in tests/data/runner).
#include "core/catalog.h"
#include "core/workload.h"
#include "runner/benchmarkrunner.h"
#include "runner/protocol.h"
#include "runner/torchbackend.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace shardscope;

namespace {

QString dataDir()
{
    return qEnvironmentVariable("SHARDSCOPE_TEST_DATA") + QStringLiteral("/runner");
}

Plan tinyPlan()
{
    QFile f(dataDir() + QStringLiteral("/tiny.plan.json"));
    if (!f.open(QIODevice::ReadOnly))
        qFatal("cannot read the tiny plan");
    return parsePlanText(f.readAll().toStdString(), Catalog::builtin());
}

RunOptions fakeOptions(const QString &script)
{
    RunOptions o;
    o.backend = QStringLiteral("torch");
    o.device = QStringLiteral("cpu");
    o.python = QStringLiteral("/usr/bin/python3");
    o.workerScript = dataDir() + QLatin1Char('/') + script;
    o.startTimeoutMs = 15000;
    o.kernelTimeoutMs = 3000;
    o.probeBudgetBytes = 1e9;
    return o;
}

} // namespace

class TestRunnerProtocol : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase()
    {
        if (!QFile::exists(QStringLiteral("/usr/bin/python3")))
            QSKIP("/usr/bin/python3 is needed to run the fake workers");
    }

    // The worker comes from the data directory shardscope-cli hands shardscope-cli-qt
    // ($SHARDSCOPE_DATA_DIR): from <prefix>/libexec/shardscope, the executable's ../share is not
    // where a relocated install keeps it.
    void workerFromTheDataDirectory()
    {
        QTemporaryDir data;
        QVERIFY(data.isValid());
        for (const char *dir : {"models", "devices", "worker"})
            QVERIFY(QDir(data.path()).mkpath(QString::fromLatin1(dir)));
        const QString worker = data.filePath(QStringLiteral("worker/shardscope_worker.py"));
        QFile f(worker);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.close();
        const QByteArray savedWorker = qgetenv("SHARDSCOPE_WORKER");
        const QByteArray savedData = qgetenv("SHARDSCOPE_DATA_DIR");
        qunsetenv("SHARDSCOPE_WORKER");
        qputenv("SHARDSCOPE_DATA_DIR", data.path().toLocal8Bit());
        const QString found = locateWorkerScript();
        qputenv("SHARDSCOPE_WORKER", savedWorker);
        qputenv("SHARDSCOPE_DATA_DIR", savedData);
        QCOMPARE(found, QFileInfo(worker).canonicalFilePath());
    }

    void parseLines_data()
    {
        QTest::addColumn<QString>("line");
        QTest::addColumn<int>("type");
        QTest::addColumn<QString>("error");
        QTest::addRow("hello") << "{'type':'hello','protocol':'shardscope-runner','version':1}"
                               << int(protocol::MessageType::Hello) << "";
        QTest::addRow("result") << "{'type':'result','id':3,'status':'ok','time_s':0.1}"
                                << int(protocol::MessageType::Result) << "";
        QTest::addRow("result crlf")
            << "{\"type\":\"done\"}\r" << int(protocol::MessageType::Done) << "";
        QTest::addRow("result without id")
            << "{'type':'result','status':'ok'}" << int(protocol::MessageType::Invalid) << "id";
        QTest::addRow("result without status")
            << "{'type':'result','id':1}" << int(protocol::MessageType::Invalid) << "status";
        QTest::addRow("not json") << "Traceback (most recent call last):"
                                  << int(protocol::MessageType::Invalid) << "not a JSON object";
        QTest::addRow("array") << "[1,2]" << int(protocol::MessageType::Invalid)
                               << "not a JSON object";
        QTest::addRow("no type") << "{'id':1}" << int(protocol::MessageType::Invalid) << "type";
        QTest::addRow("unknown type")
            << "{'type':'gossip'}" << int(protocol::MessageType::Invalid) << "gossip";
        QTest::addRow("truncated") << "{'type':'result','id':1,'sta"
                                   << int(protocol::MessageType::Invalid) << "not a JSON object";
    }
    void parseLines()
    {
        QFETCH(QString, line);
        QFETCH(int, type);
        QFETCH(QString, error);
        // Rows are written with single quotes; the worker writes double quotes.
        const std::string s =
            QString(line).replace(QLatin1Char('\''), QLatin1Char('"')).toStdString();
        const protocol::Message m = protocol::parseLine(s);
        QCOMPARE(int(m.type), type);
        if (!error.isEmpty())
            QVERIFY2(QString::fromStdString(m.error).contains(error), m.error.c_str());
    }

    void hello_data()
    {
        QTest::addColumn<QString>("json");
        QTest::addColumn<QString>("problem");
        QTest::addRow("good") << "{'protocol':'shardscope-runner','version':1}"
                              << "";
        QTest::addRow("future") << "{'protocol':'shardscope-runner','version':2}"
                                << "version 2";
        QTest::addRow("other protocol") << "{'protocol':'nccl','version':1}"
                                        << "nccl";
        QTest::addRow("no version") << "{'protocol':'shardscope-runner'}"
                                    << "no protocol version";
    }
    void hello()
    {
        QFETCH(QString, json);
        QFETCH(QString, problem);
        const std::string bad = protocol::checkHello(nlohmann::json::parse(
            QString(json).replace(QLatin1Char('\''), QLatin1Char('"')).toStdString()));
        if (problem.isEmpty())
            QVERIFY(bad.empty());
        else
            QVERIFY2(QString::fromStdString(bad).contains(problem), bad.c_str());
    }

    void requestLinesRoundTrip()
    {
        const Workload w = buildWorkload(tinyPlan(), {}, &Catalog::builtin());
        const std::string line = protocol::kernelLine(7, w.kernels.front());
        QVERIFY(line.back() == '\n');
        const nlohmann::json j = nlohmann::json::parse(line);
        QCOMPARE(j["type"].get<std::string>(), std::string("kernel"));
        QCOMPARE(j["id"].get<int>(), 7);
        QCOMPARE(kernelFromJson(j["kernel"]).name, w.kernels.front().name);
        QCOMPARE(nlohmann::json::parse(protocol::endLine())["type"].get<std::string>(),
                 std::string("end"));
    }

    void commandLine()
    {
        RunOptions o;
        o.python = QStringLiteral("/opt/py/bin/python3");
        o.device = QStringLiteral("npu");
        QStringList c = TorchBackend::commandLine(o, QStringLiteral("w.py"));
        QCOMPARE(c.first(), o.python);
        QVERIFY(!c.contains(QStringLiteral("--nproc")));
        o.nproc = 8;
        c = TorchBackend::commandLine(o, QStringLiteral("w.py"));
        QVERIFY(c.contains(QStringLiteral("--nproc")));
        o.launcherArgs = {QStringLiteral("--nnodes"), QStringLiteral("2")};
        c = TorchBackend::commandLine(o, QStringLiteral("w.py"));
        QCOMPARE(c.mid(0, 3), QStringList({o.python, QStringLiteral("-m"),
                                           QStringLiteral("torch.distributed.run")}));
        QVERIFY(c.contains(QStringLiteral("--nproc_per_node")));
        QCOMPARE(c.mid(c.indexOf(QStringLiteral("w.py"))),
                 QStringList(
                     {QStringLiteral("w.py"), QStringLiteral("--device"), QStringLiteral("npu")}));
    }

    void workers_data()
    {
        QTest::addColumn<QString>("script");
        QTest::addColumn<QString>("python");
        QTest::addColumn<bool>("succeeds");
        QTest::addColumn<QString>("message");
        QTest::addColumn<int>("kept"); // measurements that must have come back
        QTest::addRow("good") << "fake_worker_good.py"
                              << "" << true << "" << -1;
        QTest::addRow("crash") << "fake_worker_crash.py"
                               << "" << false << "exited with status 139" << 1;
        QTest::addRow("hang") << "fake_worker_hang.py"
                              << "" << false << "did not answer within" << 1;
        QTest::addRow("garbage") << "fake_worker_garbage.py"
                                 << "" << false << "not the runner protocol" << 1;
        QTest::addRow("wrong version") << "fake_worker_version.py"
                                       << "" << false << "protocol version 99" << 0;
        QTest::addRow("missing script") << "no_such_worker.py"
                                        << "" << false << "does not exist" << 0;
        QTest::addRow("missing python")
            << "fake_worker_good.py"
            << "/nonexistent/python3" << false << "cannot start the Python interpreter" << 0;
    }
    void workers()
    {
        QFETCH(QString, script);
        QFETCH(QString, python);
        QFETCH(bool, succeeds);
        QFETCH(QString, message);
        QFETCH(int, kept);
        const Plan plan = tinyPlan();
        const Workload w = buildWorkload(plan, {}, &Catalog::builtin());
        RunOptions o = fakeOptions(script);
        if (!python.isEmpty())
            o.python = python;
        BenchmarkRunner runner;
        QSignalSpy finished(&runner, &BenchmarkRunner::finished);
        QSignalSpy failed(&runner, &BenchmarkRunner::failed);
        QVERIFY(runner.start(plan, w, o));
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() + failed.count() == 1, 20000);
        QTest::qWait(50);
        QCOMPARE(finished.count() + failed.count(), 1); // exactly one ending
        QCOMPARE(finished.count() == 1, succeeds);
        const RunResults &r = runner.results();
        if (!succeeds) {
            const QString error = failed.first().at(0).toString();
            QVERIFY2(error.contains(message), qPrintable(error));
            QCOMPARE(QString::fromStdString(r.error), error);
        }
        int ok = 0;
        for (const KernelMeasurement &m : r.measurements)
            ok += m.ok() ? 1 : 0;
        if (kept >= 0)
            QCOMPARE(ok, kept);
        else
            QCOMPARE(ok, int(w.kernels.size()));
        if (succeeds) {
            QCOMPARE(r.info.device_name, std::string("fake"));
            QVERIFY(r.probe_result.ran());
            QVERIFY(r.probe.layers >= 1);
        }
    }

    void silentWorkerTimesOut()
    {
        const Plan plan = tinyPlan();
        RunOptions o = fakeOptions(QStringLiteral("fake_worker_silent.py"));
        o.startTimeoutMs = 1000;
        BenchmarkRunner runner;
        QSignalSpy failed(&runner, &BenchmarkRunner::failed);
        QVERIFY(runner.start(plan, buildWorkload(plan), o));
        QVERIFY(failed.wait(10000));
        QVERIFY(failed.first().at(0).toString().contains(QStringLiteral("its hello")));
    }

    void stopEndsTheWorker()
    {
        const Plan plan = tinyPlan();
        RunOptions o = fakeOptions(QStringLiteral("fake_worker_hang.py"));
        o.kernelTimeoutMs = 60000;
        BenchmarkRunner runner;
        QSignalSpy measured(&runner, &BenchmarkRunner::kernelMeasured);
        QSignalSpy failed(&runner, &BenchmarkRunner::failed);
        QVERIFY(runner.start(plan, buildWorkload(plan), o));
        QVERIFY(measured.wait(15000));
        runner.stop();
        QVERIFY(failed.count() == 1 || failed.wait(5000));
        QCOMPARE(failed.first().at(0).toString(), QStringLiteral("cancelled"));
        QVERIFY(runner.results().measurements.front().ok());
    }
};

QTEST_GUILESS_MAIN(TestRunnerProtocol)
#include "tst_runnerprotocol.moc"
