// From a control change to the redrawn chart, at 64 ranks: the workbench's one-frame budget.
#include "widgets/autosave.h"
#include "widgets/mainwindow.h"
#include "widgets/memorychartview.h"
#include "widgets/memorypanel.h"
#include "widgets/plandocument.h"
#include "widgets/planeditor.h"

#include "core/catalog.h"

#include <QChartView>
#include <QElapsedTimer>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTest>
#include <algorithm>
#include <ctime>

using namespace shardscope;

class BenchGui : public QObject
{
    Q_OBJECT

private:
    std::unique_ptr<MainWindow> m_window;
    QSpinBox *m_microBatch = nullptr;
    int m_next = 2;

    int m_chartPaints = 0;

    // Counts the paint events of the chart's viewport.
    bool eventFilter(QObject *watched, QEvent *event) override
    {
        if (event->type() == QEvent::Paint)
            ++m_chartPaints;
        return QObject::eventFilter(watched, event);
    }

    // One control change, then everything the user sees: the document's estimate, every panel's
    // refresh, the chart's layout, and the event loop's repaint of every widget that changed, up
    // to the chart having been painted.
    void changeAndDraw()
    {
        const int paints = m_chartPaints;
        m_microBatch->setValue(m_next);
        m_next = m_next == 2 ? 1 : 2;
        for (int i = 0; i < 100 && m_chartPaints == paints; ++i)
            QCoreApplication::processEvents();
        if (m_chartPaints == paints)
            qFatal("the chart was not repainted after a change");
    }

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setApplicationName(QStringLiteral("bench_gui"));
        m_window = std::make_unique<MainWindow>();
        m_window->resize(1366, 768);
        m_window->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
        Plan p = m_window->document()->plan();
        p.cluster.nodes = 8;
        p.parallel.dp = 8;
        p.parallel.tp = 2;
        p.parallel.pp = 4;
        p.parallel.sharding = Sharding::Full;
        p.training.grad_accum = 8;
        QVERIFY2(m_window->document()->apply(p, QStringLiteral("64 ranks")),
                 qPrintable(m_window->document()->validationError(p)));
        QCOMPARE(m_window->memoryPanel()->chartView()->barCount(), 64);
        m_window->memoryPanel()->chartView()->chartView()->viewport()->installEventFilter(this);
        m_microBatch = m_window->planEditor()->findChild<QSpinBox *>(QStringLiteral("microBatch"));
        QVERIFY(m_microBatch);
        QCoreApplication::processEvents();
    }

    void cleanupTestCase()
    {
        m_window->autosave()->finish();
        m_window.reset();
    }

    void controlChangeToChart()
    {
        QBENCHMARK {
            changeAndDraw();
        }
    }

    void controlChangeToChartP95()
    {
        // What the user waits for is the wall time from the change to the painted chart. The main
        // thread's CPU time is that work without what else the machine runs; the process's CPU
        // time adds the allocator replays run beside it on the pool's threads (PlanDocument).
        auto cpuMs = [](clockid_t clock) {
            timespec ts{};
            clock_gettime(clock, &ts);
            return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
        };
        constexpr int kSamples = 200;
        std::vector<double> thread, process, wall;
        for (int i = 0; i < kSamples; ++i) {
            QElapsedTimer t;
            t.start();
            const double c0 = cpuMs(CLOCK_THREAD_CPUTIME_ID), p0 = cpuMs(CLOCK_PROCESS_CPUTIME_ID);
            changeAndDraw();
            thread.push_back(cpuMs(CLOCK_THREAD_CPUTIME_ID) - c0);
            process.push_back(cpuMs(CLOCK_PROCESS_CPUTIME_ID) - p0);
            wall.push_back(double(t.nsecsElapsed()) / 1e6);
        }
        // The chart shows the engine's numbers of the last change.
        const double expected = m_window->document()->estimate().memory.ranks.front().peak().bytes[0];
        QCOMPARE(m_window->memoryPanel()->chartView()->segmentValue(0, 0) * (1024.0 * 1024.0 * 1024.0), expected);
        auto quantile = [](std::vector<double> v, int percent) {
            std::sort(v.begin(), v.end());
            return v[v.size() * size_t(percent) / 100];
        };
        qInfo("control change to redrawn chart at 64 ranks: wall p50 %.2f ms, p95 %.2f ms, max %.2f ms; "
              "main thread CPU p50 %.2f ms, p95 %.2f ms; process CPU p50 %.2f ms, p95 %.2f ms",
              quantile(wall, 50), quantile(wall, 95), *std::max_element(wall.begin(), wall.end()), quantile(thread, 50),
              quantile(thread, 95), quantile(process, 50), quantile(process, 95));
        // The one-frame budget (16 ms) applies to the wall time, checked where the machine is
        // quiet enough to measure it: SHARDSCOPE_FRAME_BUDGET_MS=16 bench_gui
        if (qEnvironmentVariableIsSet("SHARDSCOPE_FRAME_BUDGET_MS")) {
            const double budget = qEnvironmentVariable("SHARDSCOPE_FRAME_BUDGET_MS").toDouble();
            const double p95 = quantile(wall, 95);
            QVERIFY2(p95 <= budget, qPrintable(QStringLiteral("p95 %1 ms over %2 ms").arg(p95).arg(budget)));
        }
    }
};

QTEST_MAIN(BenchGui)
#include "bench_gui.moc"
