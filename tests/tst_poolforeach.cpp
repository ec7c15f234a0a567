// The workbench's ForEachRank: the rank kinds' replays on the caller and the pool's free threads.
#include "widgets/plandocument.h"
#include "widgets/poolforeach.h"

#include "core/catalog.h"
#include "core/estimate.h"
#include "core/plan.h"
#include "testdata.h"

#include <QDeadlineTimer>
#include <QSemaphore>
#include <QTest>
#include <QThread>
#include <QThreadPool>
#include <atomic>
#include <stdexcept>
#include <vector>

using namespace shardscope;

class TestPoolForEach : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void eachIndexOnce()
    {
        QThreadPool pool;
        pool.setMaxThreadCount(3);
        for (size_t n : {size_t(0), size_t(1), size_t(2), size_t(5), size_t(64)}) {
            std::vector<std::atomic<int>> calls(n);
            forEachOnPool(n, [&](size_t k) { ++calls[k]; }, &pool);
            for (size_t k = 0; k < n; ++k)
                QCOMPARE(calls[k].load(), 1);
        }
    }

    /// With a thread free, two bodies run at once: the first waits for the second to start.
    void runsSideBySide()
    {
        QThreadPool pool;
        pool.setMaxThreadCount(2);
        std::atomic<int> inside{0}, sawBoth{0};
        forEachOnPool(2, [&](size_t) {
            ++inside;
            QDeadlineTimer deadline(5000);
            while (inside.load() < 2 && !deadline.hasExpired())
                QThread::yieldCurrentThread();
            sawBoth += inside.load() == 2;
        }, &pool);
        QCOMPARE(sawBoth.load(), 2); // in turn, the first would have given up alone
    }

    /// A pool whose threads are all busy elsewhere: the caller does the whole loop.
    void finishesWithoutAFreeThread()
    {
        QThreadPool pool;
        pool.setMaxThreadCount(2);
        QSemaphore release;
        for (int i = 0; i < 2; ++i)
            pool.start([&release] { release.acquire(); });
        std::vector<Qt::HANDLE> threads(4);
        forEachOnPool(4, [&](size_t k) { threads[k] = QThread::currentThreadId(); }, &pool);
        for (Qt::HANDLE t : threads)
            QCOMPARE(t, QThread::currentThreadId());
        release.release(2);
        pool.waitForDone();
    }

    void exceptionReachesTheCaller()
    {
        QThreadPool pool;
        pool.setMaxThreadCount(2);
        for (size_t throwing : {size_t(0), size_t(1), size_t(7)}) {
            bool caught = false;
            try {
                forEachOnPool(8, [&](size_t k) {
                    if (k == throwing)
                        throw std::runtime_error("rank " + std::to_string(k));
                }, &pool);
            } catch (const std::runtime_error &e) {
                caught = std::string(e.what()) == "rank " + std::to_string(throwing);
            }
            QVERIFY(caught);
        }
    }

    /// The document's estimate, with its replays side by side, is the one-thread estimate.
    void documentEstimateIsTheEngines()
    {
        PlanDocument doc(Catalog::builtin());
        QString error;
        QVERIFY2(doc.loadAsUntitled(testing::casePath("hcie-ai-ddp"), &error), qPrintable(error));
        Plan p = doc.plan();
        p.cluster.nodes = 2;
        p.parallel.dp = 2;
        p.parallel.pp = 8;
        p.training.grad_accum = 8;
        QVERIFY2(doc.apply(p, QStringLiteral("pp 8")), qPrintable(doc.validationError(p)));
        const Estimate serial = estimate(doc.plan(), doc.catalog());
        const Estimate &shown = doc.estimate();
        QCOMPARE(shown.memory.ranks.size(), serial.memory.ranks.size());
        QVERIFY(shown.memory.ranks.size() >= 2);
        for (size_t i = 0; i < serial.memory.ranks.size(); ++i) {
            QCOMPARE(shown.memory.ranks[i].reserved_bytes, serial.memory.ranks[i].reserved_bytes);
            QVERIFY(serial.memory.ranks[i].reserved_bytes > 0);
        }
        QCOMPARE(shown.memory.fits, serial.memory.fits);
    }
};

QTEST_MAIN(TestPoolForEach)
#include "tst_poolforeach.moc"
