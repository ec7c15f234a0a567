// Measured memory snapshots (core/snapshot.h): the running sums over a hand-made trace, what a
// broken file is told, the placement on the predicted step's axis, and the worker's conversion
// of a torch pickle (plain data only).
#include "core/catalog.h"
#include "core/errors.h"
#include "core/files.h"
#include "core/snapshot.h"
#include "core/stepview.h"
#include "planvariants.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using namespace shardscope;
using nlohmann::json;

namespace {

json snapshot(json trace)
{
    return {{"format", "shardscope-memory-snapshot"}, {"version", 1}, {"source", "t"}, {"trace", trace}};
}

QString workerScript() { return QString::fromStdString(locateDataDir()) + QStringLiteral("/worker/shardscope_worker.py"); }

} // namespace

class TestSnapshot : public QObject
{
    Q_OBJECT

private slots:
    void runningSums()
    {
        json j = snapshot(json::array({{{"action", "segment_alloc"}, {"size", 20971520}},
                                       {{"action", "alloc"}, {"size", 8388608}},
                                       {{"action", "alloc"}, {"size", 4194304}},
                                       {{"action", "free_requested"}, {"size", 8388608}},
                                       {{"action", "free_completed"}, {"size", 8388608}}}));
        const MeasuredMemory m = parseMemorySnapshot(j, "s.json");
        QCOMPARE(m.allocated.size(), size_t(5));
        QCOMPARE(m.allocated[2], 12582912.0);
        QCOMPARE(m.allocated[4], 4194304.0);
        QCOMPARE(m.reserved[4], 20971520.0);
        QCOMPARE(m.peak_allocated, 12582912.0);
        QCOMPARE(m.peak_reserved, 20971520.0);
        // A ring buffer that began late: anchored to the segments' totals at the end.
        j["allocated_bytes"] = 104857600 + 4194304;
        j["reserved_bytes"] = 209715200;
        const MeasuredMemory late = parseMemorySnapshot(j, "s.json");
        QCOMPARE(late.allocated[4], 104857600.0 + 4194304.0);
        QCOMPARE(late.reserved[4], 209715200.0);
        QCOMPARE(late.reserved[0], 209715200.0);
    }

    void brokenFilesAreNamed_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("field");
        QTest::addRow("format") << QStringLiteral(R"({"format": "x", "version": 1, "trace": []})") << QStringLiteral("s.json: format");
        QTest::addRow("version") << QStringLiteral(R"({"format": "shardscope-memory-snapshot", "version": 2, "trace": []})") << QStringLiteral("s.json: version");
        QTest::addRow("negative size") << QStringLiteral(R"({"format": "shardscope-memory-snapshot", "version": 1, "trace": [{"action": "alloc", "size": -5}]})") << QStringLiteral("s.json: trace[0].size");
        QTest::addRow("unknown action") << QStringLiteral(R"({"format": "shardscope-memory-snapshot", "version": 1, "trace": [{"action": "grow", "size": 5}]})") << QStringLiteral("s.json: trace[0].action");
        QTest::addRow("phase order") << QStringLiteral(R"({"format": "shardscope-memory-snapshot", "version": 1, "trace": [],
            "phases": [{"phase": "backward", "time_us": 9}, {"phase": "optimizer_step", "time_us": 3}]})") << QStringLiteral("s.json: phases[1].time_us");
        QTest::addRow("phase name") << QStringLiteral(R"({"format": "shardscope-memory-snapshot", "version": 1, "trace": [],
            "phases": [{"phase": "warmup", "time_us": 9}]})") << QStringLiteral("s.json: phases[0].phase");
    }

    void brokenFilesAreNamed()
    {
        QFETCH(QString, text);
        QFETCH(QString, field);
        try {
            parseMemorySnapshot(json::parse(text.toStdString()), "s.json");
            QFAIL("accepted");
        } catch (const PlanError &e) {
            QCOMPARE(QString::fromStdString(e.field()), field);
        }
    }

    // Each recorded phase lands on the predicted phase of the same name.
    void alignedByPhase()
    {
        json j = testing::variantBase();
        const Plan plan = parsePlan(j, Catalog::builtin());
        const StepView view = stepView(plan, Catalog::builtin(), 0);
        json trace = json::array();
        for (int t = 0; t <= 300; t += 10)
            trace.push_back({{"action", "alloc"}, {"size", 1024}, {"time_us", 1000 + t}});
        json s = snapshot(trace);
        s["phases"] = {{{"phase", "forward"}, {"time_us", 1000}},
                       {{"phase", "backward"}, {"time_us", 1100}},
                       {{"phase", "optimizer_step"}, {"time_us", 1250}},
                       {{"phase", "end"}, {"time_us", 1300}}};
        const MeasuredMemory m = parseMemorySnapshot(s, "s.json");
        const std::vector<double> x = alignToStep(m, view);
        QCOMPARE(x.size(), m.allocated.size());
        QCOMPARE(view.phases.size(), size_t(3));
        QCOMPARE(x[0], double(view.phases[0].event));   // t = 1000: forward starts
        QCOMPARE(x[10], double(view.phases[1].event));  // t = 1100: backward starts
        QCOMPARE(x[25], double(view.phases[2].event));  // t = 1250: optimizer step starts
        QCOMPARE(x[30], double(view.last));             // t = 1300: the end
        for (size_t i = 1; i < x.size(); ++i)
            QVERIFY(x[i] >= x[i - 1]);
    }

    // The worker converts a torch pickle without torch, and loads plain data only.
    void workerConvertsPickles()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString pickle = dir.filePath(QStringLiteral("snap.pickle"));
        const QString out = dir.filePath(QStringLiteral("snap.json"));
        QProcess make;
        make.start(QStringLiteral("/usr/bin/python3"),
                   {QStringLiteral("-c"),
                    QStringLiteral("import pickle,sys; pickle.dump({'segments': [{'device': 0, 'total_size': 20971520, "
                                   "'allocated_size': 4194304, 'blocks': []}], 'device_traces': [[{'action': "
                                   "'segment_alloc', 'addr': 1, 'size': 20971520, 'stream': 0, 'time_us': 5}, "
                                   "{'action': 'alloc', 'addr': 1, 'size': 4194304, 'stream': 0, 'time_us': 6}]]}, "
                                   "open(sys.argv[1], 'wb'))"),
                    pickle});
        QVERIFY(make.waitForFinished(30000));
        QCOMPARE(make.exitCode(), 0);
        QProcess conv;
        conv.start(QStringLiteral("/usr/bin/python3"), {workerScript(), QStringLiteral("--convert-snapshot"), pickle, out});
        QVERIFY(conv.waitForFinished(30000));
        QVERIFY2(conv.exitCode() == 0, conv.readAllStandardError().constData());
        const MeasuredMemory m = readMemorySnapshotFile(out.toStdString());
        QCOMPARE(m.allocated.size(), size_t(2));
        QCOMPARE(m.peak_allocated, 4194304.0);
        QCOMPARE(m.peak_reserved, 20971520.0);
        QCOMPARE(m.time_us.size(), size_t(2));

        // A pickle that names a class (here os.system) is refused, with the file named.
        const QString evil = dir.filePath(QStringLiteral("evil.pickle"));
        QProcess bad;
        bad.start(QStringLiteral("/usr/bin/python3"),
                  {QStringLiteral("-c"),
                   QStringLiteral("import pickle,os,sys\nclass E:\n  def __reduce__(self): return (os.system, ('true',))\n"
                                  "pickle.dump(E(), open(sys.argv[1], 'wb'))"),
                   evil});
        QVERIFY(bad.waitForFinished(30000));
        QProcess refuse;
        refuse.start(QStringLiteral("/usr/bin/python3"), {workerScript(), QStringLiteral("--convert-snapshot"), evil,
                                                          dir.filePath(QStringLiteral("evil.json"))});
        QVERIFY(refuse.waitForFinished(30000));
        QCOMPARE(refuse.exitCode(), 2);
        const QString err = QString::fromUtf8(refuse.readAllStandardError());
        QVERIFY2(err.contains(QStringLiteral("evil.pickle")) && err.contains(QStringLiteral("only plain data")), qPrintable(err));
        QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("evil.json"))));
    }
};

QTEST_GUILESS_MAIN(TestSnapshot)
#include "tst_snapshot.moc"
