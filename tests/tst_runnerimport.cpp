// Imports of external measurements: nccl-tests and hccl_test text output, profiler traces.
#include "runner/importers.h"

#include <QFile>
#include <QTest>

using namespace shardscope;

namespace {

std::string readData(const QString &name)
{
    QFile f(qEnvironmentVariable("SHARDSCOPE_TEST_DATA") + QStringLiteral("/runner/") + name);
    if (!f.open(QIODevice::ReadOnly))
        qFatal("cannot read %s", qPrintable(name));
    return f.readAll().toStdString();
}

} // namespace

class TestRunnerImport : public QObject
{
    Q_OBJECT

private slots:
    void collectiveNames_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("collective");
        QTest::addRow("nccl kernel") << "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)"
                                     << "all_reduce";
        QTest::addRow("old nccl kernel") << "ncclKernel_AllGather_RING_LL_Sum_int8_t"
                                         << "all_gather";
        QTest::addRow("reduce scatter") << "ncclDevKernel_ReduceScatter_Sum_bf16"
                                        << "reduce_scatter";
        QTest::addRow("hccl") << "hcom_allReduce_"
                              << "all_reduce";
        QTest::addRow("c10d") << "c10d::allgather_"
                              << "all_gather";
        QTest::addRow("sendrecv") << "ncclDevKernel_SendRecv"
                                  << "send_recv";
        QTest::addRow("perf binary") << "alltoall_perf.txt"
                                     << "all_to_all";
        QTest::addRow("gemm") << "sm90_xmma_gemm_bf16bf16_bf16f32"
                              << "";
        QTest::addRow("memcpy send-like") << "Memcpy DtoD (Device -> Device)"
                                          << "";
    }
    void collectiveNames()
    {
        QFETCH(QString, name);
        QFETCH(QString, collective);
        QCOMPARE(QString::fromStdString(collectiveFromName(name.toStdString())), collective);
    }

    void ncclTests()
    {
        const CollectiveImport c = parseCollectiveBenchmark(
            readData(QStringLiteral("all_reduce_perf.txt")), "all_reduce_perf.txt");
        QCOMPARE(c.tool, std::string("nccl-tests"));
        QCOMPARE(c.points.size(), size_t(6));
        const CollectivePoint &p = c.points.back();
        QCOMPARE(p.collective, std::string("all_reduce"));
        QCOMPARE(p.ranks, 8);
        QCOMPARE(p.bytes, 1073741824.0);
        QCOMPARE(p.time_s, 4310.5e-6);
        QCOMPARE(p.algbw, 249.10e9);
        QCOMPARE(p.busbw, 435.93e9); // out-of-place columns
        QCOMPARE(c.avg_busbw, 296.795e9);
    }

    void hcclTest()
    {
        const CollectiveImport c = parseCollectiveBenchmark(
            readData(QStringLiteral("hccl_test_allreduce.txt")), "all_reduce_test", 8);
        QCOMPARE(c.tool, std::string("hccl_test"));
        QCOMPARE(c.points.size(), size_t(5));
        QCOMPARE(c.points.front().bytes, 8388608.0);
        QCOMPARE(c.points.front().time_s, 214.56e-6);
        // hccl_test prints algbw only; busbw by the nccl-tests factor 2(n-1)/n.
        QCOMPARE(c.points.back().busbw, 72.08725e9 * 2.0 * 7.0 / 8.0);
    }

    void badText_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addRow("empty") << "";
        QTest::addRow("prose") << "hello world\nnothing to see\n";
        QTest::addRow("header only") << "#  size count type redop root time algbw busbw #wrong\n";
    }
    void badText()
    {
        QFETCH(QString, text);
        QVERIFY_THROWS_EXCEPTION(std::runtime_error,
                                 parseCollectiveBenchmark(text.toStdString(), "x"));
    }

    void chromeTrace()
    {
        const TraceImport t = parseChromeTrace(readData(QStringLiteral("trace.json")));
        QCOMPARE(t.collectives.size(), size_t(2));
        // Device kernels give the time: two all-gathers (150 + 250 us), one reduce-scatter.
        const TraceCollective &ag = t.collectives.front();
        QCOMPARE(ag.collective, std::string("all_gather"));
        QCOMPARE(ag.calls, 2);
        QVERIFY(std::abs(ag.total_s - 400e-6) < 1e-12);
        QVERIFY(std::abs(ag.max_s - 250e-6) < 1e-12);
        QCOMPARE(ag.bytes, 8388608.0 * 2); // from record_param_comms: bf16 output
        QCOMPARE(t.collectives.back().collective, std::string("reduce_scatter"));
        // Memory timeline: device points only, peak allocated and reserved.
        QCOMPARE(t.memory.size(), size_t(3));
        QCOMPARE(t.peak_allocated, 6442450944.0);
        QCOMPARE(t.peak_reserved, 8589934592.0);
        QVERIFY(t.memory.front().t_s >= 0);
    }

    void notATrace()
    {
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, parseChromeTrace("{\"a\": 1}"));
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, parseChromeTrace("not json"));
    }
};

QTEST_APPLESS_MAIN(TestRunnerImport)
#include "tst_runnerimport.moc"
