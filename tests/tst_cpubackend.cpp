// The native CPU backend: numerically correct kernels with positive rates, and the async
// facade around it (progress, cancel, results kept).
#include "core/catalog.h"
#include "core/workload.h"
#include "runner/benchmarkrunner.h"
#include "runner/cpukernels.h"
#include "runner/openblas.h"
#include "testdata.h"

#include <QSignalSpy>
#include <QTest>
#include <cmath>
#include <random>

using namespace shardscope;

namespace {

std::vector<float> randomVector(size_t n, unsigned seed)
{
    std::mt19937 g(seed);
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    std::vector<float> v(n);
    for (float &x : v)
        x = d(g);
    return v;
}


Workload tinyWorkload()
{
    WorkloadOptions o;
    o.collectives = true;
    return buildWorkload(testing::tinyRunnerPlan(), o, &Catalog::builtin());
}

} // namespace

class TestCpuBackend : public QObject
{
    Q_OBJECT

private slots:
    // The library is opened by the first kernel that needs it, not with the process: linked, its
    // thread server would spin at every start of the CLI and the workbench.
    void initTestCase()
    {
        QVERIFY2(!openblas::mapped(), "OpenBLAS is loaded before any CPU kernel ran");
        std::vector<float> a(4, 1.0f), b(4, 2.0f), c(4);
        cpukernels::gemm("nn", 2, 2, 2, a.data(), b.data(), c.data());
        QCOMPARE(c[3], 4.0f);
        QVERIFY(openblas::mapped());
    }

    // A library that cannot be opened, or one that is not OpenBLAS, is named with the cause.
    void openblasErrors()
    {
        std::string error;
        QVERIFY(!openblas::Library::open("/nonexistent/libopenblas.so.0", &error));
        QVERIFY2(error.find("cannot open OpenBLAS (/nonexistent/libopenblas.so.0)") != std::string::npos,
                 error.c_str());
        error.clear();
        QVERIFY(!openblas::Library::open("libm.so.6", &error));
        QCOMPARE(error, std::string("libm.so.6 is not OpenBLAS: it has no cblas_sgemm"));
        const std::optional<openblas::Library> lib = openblas::Library::open(openblas::libraryFile(), &error);
        QVERIFY2(lib, error.c_str());
        QVERIFY2(lib->config().find("OpenBLAS") != std::string::npos, lib->config().c_str());
        // C = 2 A^T B + C with A stored 3 x 2, B 3 x 2 (row-major).
        const float a[] = {1, 2, 3, 4, 5, 6}, b[] = {1, 0, 0, 1, 1, 1};
        float c[] = {1, 1, 1, 1};
        lib->sgemm(true, false, 2, 2, 3, 2.0f, a, 2, b, 2, 1.0f, c, 2);
        QCOMPARE(std::vector<float>(c, c + 4), (std::vector<float>{13, 17, 17, 21}));
        // Sizes beyond its integer range are refused, not truncated.
        QVERIFY_THROWS_EXCEPTION(std::out_of_range,
                                 lib->sgemm(false, false, int64_t(1) << 40, 1, 1, 1.0f, a, 1, b, 1, 0.0f, c, 1));
    }

    void gemmMatchesReference_data()
    {
        QTest::addColumn<QString>("layout");
        QTest::addColumn<int>("m");
        QTest::addColumn<int>("n");
        QTest::addColumn<int>("k");
        QTest::addRow("nn") << "nn" << 7 << 5 << 3;
        QTest::addRow("nt") << "nt" << 16 << 9 << 33;
        QTest::addRow("tn") << "tn" << 12 << 20 << 17;
    }
    void gemmMatchesReference()
    {
        QFETCH(QString, layout);
        QFETCH(int, m);
        QFETCH(int, n);
        QFETCH(int, k);
        const std::vector<float> a = randomVector(size_t(m * k), 1),
                                 b = randomVector(size_t(k * n), 2);
        std::vector<float> c(size_t(m * n));
        cpukernels::gemm(layout.toStdString(), m, n, k, a.data(), b.data(), c.data());
        const bool ta = layout[0] == QLatin1Char('t'), tb = layout[1] == QLatin1Char('t');
        for (int i = 0; i < m; ++i)
            for (int j = 0; j < n; ++j) {
                double ref = 0;
                for (int x = 0; x < k; ++x)
                    ref += double(ta ? a[size_t(x * m + i)] : a[size_t(i * k + x)]) *
                           double(tb ? b[size_t(j * k + x)] : b[size_t(x * n + j)]);
                QVERIFY2(std::abs(c[size_t(i * n + j)] - ref) < 1e-4,
                         qPrintable(QStringLiteral("C[%1,%2]").arg(i).arg(j)));
            }
    }

    void bf16Rounding()
    {
        std::vector<float> v = {1.0f, 1.00390625f, 1.0f + 1.0f / 512.0f, -3.14159265f};
        cpukernels::roundToBf16(v);
        QCOMPARE(v[0], 1.0f);
        QCOMPARE(v[1], 1.0f); // halfway: ties to even
        QCOMPARE(v[2], 1.0f); // below half an ulp (1/128)
        QCOMPARE(v[3], -3.140625f);
    }

    void attentionMatchesNaive_data()
    {
        QTest::addColumn<bool>("causal");
        QTest::addColumn<int>("kvHeads");
        QTest::addRow("causal gqa") << true << 1;
        QTest::addRow("full mha") << false << 2;
    }
    void attentionMatchesNaive()
    {
        QFETCH(bool, causal);
        QFETCH(int, kvHeads);
        Kernel k;
        k.kind = KernelKind::Attention;
        k.batch = 1;
        k.heads = 2;
        k.kv_heads = kvHeads;
        k.seq_q = k.seq_kv = 5;
        k.head_dim = 4;
        k.causal = causal;
        const size_t qn = 2 * 5 * 4, kn = size_t(kvHeads) * 5 * 4;
        const std::vector<float> q = randomVector(qn, 3), kk = randomVector(kn, 4),
                                 v = randomVector(kn, 5);
        std::vector<float> o(qn), lse(10);
        cpukernels::attentionForward(k, q.data(), kk.data(), v.data(), o.data(), lse.data());
        for (int h = 0; h < 2; ++h) {
            const int g = kvHeads == 1 ? 0 : h;
            for (int i = 0; i < 5; ++i) {
                std::vector<double> s(5);
                double mx = -1e30, sum = 0;
                const int last = causal ? i : 4;
                for (int j = 0; j <= last; ++j) {
                    double d = 0;
                    for (int x = 0; x < 4; ++x)
                        d += q[size_t((h * 5 + i) * 4 + x)] * kk[size_t((g * 5 + j) * 4 + x)];
                    s[size_t(j)] = d / 2.0;
                    mx = std::max(mx, s[size_t(j)]);
                }
                for (int j = 0; j <= last; ++j)
                    sum += std::exp(s[size_t(j)] - mx);
                for (int x = 0; x < 4; ++x) {
                    double ref = 0;
                    for (int j = 0; j <= last; ++j)
                        ref += std::exp(s[size_t(j)] - mx) / sum * v[size_t((g * 5 + j) * 4 + x)];
                    QVERIFY(std::abs(o[size_t((h * 5 + i) * 4 + x)] - ref) < 1e-5);
                }
            }
        }
        // Backward against a finite difference of sum(o * dO) in one query element.
        const std::vector<float> dO = randomVector(qn, 6);
        std::vector<float> dq(qn), dk(kn), dv(kn);
        cpukernels::attentionBackward(k, q.data(), kk.data(), v.data(), o.data(), dO.data(),
                                      lse.data(), dq.data(), dk.data(), dv.data());
        auto loss = [&](const std::vector<float> &qq) {
            std::vector<float> oo(qn), l(10);
            cpukernels::attentionForward(k, qq.data(), kk.data(), v.data(), oo.data(), l.data());
            double s = 0;
            for (size_t i = 0; i < qn; ++i)
                s += double(oo[i]) * dO[i];
            return s;
        };
        for (size_t idx : {size_t(5), size_t(17), size_t(38)}) {
            std::vector<float> qp = q, qm = q;
            qp[idx] += 1e-2f;
            qm[idx] -= 1e-2f;
            const double fd = (loss(qp) - loss(qm)) / 2e-2;
            QVERIFY2(std::abs(fd - dq[idx]) < 2e-3, qPrintable(QString::number(fd - dq[idx])));
        }
    }

    void measureRates_data()
    {
        QTest::addColumn<int>("index");
        const Workload w = tinyWorkload();
        for (size_t i = 0; i < w.kernels.size(); ++i)
            if (w.kernels[i].kind != KernelKind::Collective)
                QTest::addRow("%s", w.kernels[i].name.c_str()) << int(i);
    }
    void measureRates()
    {
        QFETCH(int, index);
        const Kernel k = tinyWorkload().kernels[size_t(index)];
        cpukernels::Timing t;
        t.warmup = 1;
        t.repeats = 3;
        const KernelMeasurement m = cpukernels::measure(k, t);
        QCOMPARE(QString::fromStdString(m.status), QStringLiteral("ok"));
        QVERIFY(m.time_s > 0);
        QCOMPARE(m.repeats, 3);
        QVERIFY(m.min_s <= m.time_s && m.time_s <= m.max_s);
        if (k.kind == KernelKind::Elementwise)
            QVERIFY(m.bytes_per_s > 0);
        else
            QVERIFY(m.flops_per_s > 0);
    }

    void collectivesAreSkipped()
    {
        Kernel k;
        k.kind = KernelKind::Collective;
        k.collective = "all_reduce";
        const KernelMeasurement m = cpukernels::measure(k, {});
        QCOMPARE(QString::fromStdString(m.status), QStringLiteral("skipped"));
        QVERIFY(m.message.find("torch") != std::string::npos);
    }

    void runnerRunsEverything()
    {
        const Workload w = tinyWorkload();
        BenchmarkRunner runner;
        QSignalSpy started(&runner, &BenchmarkRunner::started);
        QSignalSpy progress(&runner, &BenchmarkRunner::progress);
        QSignalSpy finished(&runner, &BenchmarkRunner::finished);
        QSignalSpy failed(&runner, &BenchmarkRunner::failed);
        RunOptions o;
        o.backend = QStringLiteral("cpu");
        o.warmup = 0;
        o.repeats = 1;
        QVERIFY(runner.start(testing::tinyRunnerPlan(), w, o));
        QVERIFY(runner.isRunning());
        QVERIFY(!runner.start(testing::tinyRunnerPlan(), w, o)); // one run at a time
        QVERIFY(finished.wait(60000));
        QCOMPARE(failed.count(), 0);
        QCOMPARE(started.count(), 1);
        QCOMPARE(progress.last().at(0).toInt(), runner.total());
        const RunResults &r = runner.results();
        QCOMPARE(r.measurements.size(), w.kernels.size());
        QCOMPARE(r.info.backend, std::string("cpu"));
        for (size_t i = 0; i < w.kernels.size(); ++i)
            QVERIFY2(!r.measurements[i].status.empty(), w.kernels[i].name.c_str());
        QCOMPARE(r.probe_result.status, std::string("skipped"));
    }

    void cancelKeepsResults()
    {
        Workload w = tinyWorkload();
        // Many repeats of one larger GEMM so that the cancel lands mid-run.
        Kernel big = w.kernels.front();
        big.m = big.n = big.k = 384;
        big.flops = 2.0 * 384 * 384 * 384;
        w.kernels.insert(w.kernels.end(), 40, big);
        BenchmarkRunner runner;
        QSignalSpy measured(&runner, &BenchmarkRunner::kernelMeasured);
        QSignalSpy failed(&runner, &BenchmarkRunner::failed);
        RunOptions o;
        o.repeats = 3;
        o.warmup = 0;
        QVERIFY(runner.start(testing::tinyRunnerPlan(), w, o));
        QVERIFY(measured.wait(30000));
        runner.stop();
        QVERIFY(failed.wait(30000));
        QCOMPARE(failed.first().at(0).toString(), QStringLiteral("cancelled"));
        QVERIFY(!runner.isRunning());
        const RunResults &r = runner.results();
        QVERIFY(r.measurements.front().ok());          // kept
        QVERIFY(r.measurements.back().status.empty()); // never ran
    }

    void unknownBackend()
    {
        BenchmarkRunner runner;
        RunOptions o;
        o.backend = QStringLiteral("fpga");
        QVERIFY(!runner.start(testing::tinyRunnerPlan(), tinyWorkload(), o));
        QVERIFY(runner.lastError().contains(QStringLiteral("fpga")));
    }
};

QTEST_GUILESS_MAIN(TestCpuBackend)
#include "tst_cpubackend.moc"
