// The "Memory over the step" view: what it draws is the core's StepView (peak, reserved line,
// phases, the tensors alive at the peak), it follows plan changes, offers one entry per pipeline
// stage, keeps the peak through decimation, and redraws within a few milliseconds.
#include "widgets/autosave.h"
#include "widgets/componentstyle.h"
#include "widgets/mainwindow.h"
#include "widgets/memorypanel.h"
#include "widgets/memorytimelineview.h"
#include "widgets/plandocument.h"

#include "core/catalog.h"
#include "core/files.h"
#include "core/stepview.h"
#include "core/units.h"
#include "report/stepseries.h"

#include <QComboBox>
#include <QElapsedTimer>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QToolTip>
#include <QTreeWidget>
#include <algorithm>
#include <map>

using namespace shardscope;

namespace {

QString casePath(const char *name)
{
    return QString::fromStdString(locateDataDir()) + QStringLiteral("/cases/") + QLatin1String(name) +
           QStringLiteral(".plan.json");
}

QString qs(std::string_view s)
{
    return QString::fromUtf8(s.data(), qsizetype(s.size()));
}

bool near(double a, double b, double rel = 1e-6)
{
    return std::abs(a - b) <= rel * std::max({1.0, std::abs(a), std::abs(b)});
}

/// 64 ranks over 8 nodes with 4 pipeline stages (as tst_memorychart's pipeline plan).
Plan pipelinePlan(const Plan &base)
{
    Plan p = base;
    p.cluster.nodes = 8;
    p.parallel.pp = 4;
    p.parallel.tp = 2;
    p.parallel.dp = p.cluster.world() / 8;
    p.training.grad_accum = 8;
    return p;
}

int worstStage(const MemoryEstimate &mem)
{
    int stage = -1;
    double need = -1;
    for (const RankMemory &r : mem.ranks) {
        if (r.peak_bytes + r.reserve.total() > need) {
            need = r.peak_bytes + r.reserve.total();
            stage = r.stage;
        }
    }
    return stage;
}

} // namespace

class TestMemoryTimeline : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setApplicationName(QStringLiteral("tst_memorytimeline"));
    }

    /// The peak, the reserved line, the stacked components, the phases and the peak list are
    /// the core's StepView of the rank that needs the most.
    void seriesAgreeWithStepView()
    {
        PlanDocument doc(Catalog::builtin());
        QString error;
        QVERIFY2(doc.load(casePath("hcie-ai-fsdp"), &error), qPrintable(error));
        MemoryTimelinePanel panel(&doc);
        panel.resize(1200, 700);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        MemoryTimelineView *view = panel.view();

        QCOMPARE(panel.stage(), worstStage(doc.estimate().memory));
        const StepView v = stepView(doc.plan(), doc.catalog(), panel.stage());
        QVERIFY(v.peak_event >= 0);
        const int n = int(v.live.size());
        QCOMPARE(view->eventCount(), n);
        QVERIFY(n > 2000);

        // The peak marked is the step's allocated peak, at its event.
        QCOMPARE(view->peakBytes(), v.allocated_peak);
        QCOMPARE(view->peakEvent(), v.peak_event - v.first);
        QVERIFY2(view->peakLabel().contains(qs(formatGiB(v.allocated_peak))), qPrintable(view->peakLabel()));
        // ... which is the rank's allocated peak of the engine's estimate.
        QVERIFY(near(v.allocated_peak, doc.estimate().memory.ranks.front().peak_bytes));

        // Every event's stack: the components bottom first, as the core counts them.
        double fullMax = 0, reservedMax = 0;
        for (int i = 0; i < n; ++i) {
            double t = 0;
            for (int c = 0; c < kComponentCount; ++c) {
                t += double(v.live[size_t(i)][size_t(c)]);
                QVERIFY(near(view->stackedTop(c, i), t));
            }
            fullMax = std::max(fullMax, t);
            QCOMPARE(view->reservedAt(i), double(v.reserved[size_t(i)]));
            reservedMax = std::max(reservedMax, double(v.reserved[size_t(i)]));
        }
        QVERIFY(near(fullMax, v.allocated_peak));
        // The reserved line's maximum is the replay's reserved peak.
        QVERIFY2(near(reservedMax, v.reserved_peak), qPrintable(QStringLiteral("%1 vs %2").arg(reservedMax).arg(v.reserved_peak)));
        QVERIFY(near(v.reserved_peak, doc.estimate().memory.ranks.front().reserved_bytes));

        // More events than pixel columns: decimated to at most two samples per column, in time
        // order, and the drawn series still reach both peaks.
        const int columns = int(view->plotRect().width());
        QVERIFY(columns < n);
        const auto &live = view->liveSamples();
        QVERIFY(!live.empty() && int(live.size()) <= 2 * columns);
        for (size_t i = 1; i < live.size(); ++i) {
            QVERIFY(live[i].event > live[i - 1].event);
            QCOMPARE(live[i].x0, live[i - 1].x1);
        }
        QCOMPARE(live.front().x0, 0.0);
        QCOMPARE(live.back().x1, double(n));
        QVERIFY(near(view->drawnLiveMax(), v.allocated_peak));
        QVERIFY(near(view->drawnReservedMax(), reservedMax));
        QVERIFY(std::any_of(live.begin(), live.end(),
                            [&](const StepSample &s) { return s.event == v.peak_event - v.first; }));

        // Forward, backward, optimizer step.
        QCOMPARE(view->phaseLabels(),
                 QStringList({QStringLiteral("forward"), QStringLiteral("backward"), QStringLiteral("optimizer step")}));

        // What drives the peak: the tensors alive there by kind and micro-batch, largest first.
        std::map<std::pair<int, int>, double> groups;
        double alive = 0;
        for (int t : v.alive_at_peak) {
            const TimelineTensor &tt = v.timeline.tensors[size_t(t)];
            groups[{int(tt.kind), tt.unit}] += tt.bytes;
            alive += tt.bytes;
        }
        QVERIFY(near(alive, v.allocated_peak));
        const auto &drivers = panel.drivers();
        QCOMPARE(drivers.size(), groups.size());
        double sum = 0;
        for (size_t i = 0; i < drivers.size(); ++i) {
            QVERIFY(near(drivers[i].bytes, groups.at({int(drivers[i].kind), drivers[i].unit})));
            if (i > 0)
                QVERIFY(drivers[i].bytes <= drivers[i - 1].bytes);
            sum += drivers[i].bytes;
        }
        QVERIFY(near(sum, v.allocated_peak));
        QTreeWidget *list = panel.driverList();
        const int rows = std::min(int(drivers.size()), MemoryTimelinePanel::kDriverRows);
        QCOMPARE(list->topLevelItemCount(), rows + (int(drivers.size()) > rows ? 1 : 0));
        // The first row is the largest group, and here it holds the largest tensor alive.
        const TimelineTensor &largest = v.timeline.tensors[size_t(v.alive_at_peak.front())];
        const QTreeWidgetItem *first = list->topLevelItem(0);
        QCOMPARE(first->text(0), qs(tensorKindLabel(largest.kind)));
        QCOMPARE(drivers.front().kind, largest.kind);
        QCOMPARE(drivers.front().largest, v.alive_at_peak.front());
        QCOMPARE(first->text(3), qs(formatFixed(drivers.front().bytes / kGiB, 2)));
        QCOMPARE(first->text(4), QStringLiteral("%1 %").arg(100.0 * drivers.front().bytes / v.allocated_peak, 0, 'f', 1));
        QCOMPARE(first->text(2), QString::number(largest.unit));

        // Single stage: no stage selector.
        QVERIFY(panel.stageBox()->isHidden());
        QVERIFY(panel.headline().contains(qs(formatGiB(v.allocated_peak))));
        QVERIFY(panel.headline().contains(qs(formatGiB(v.reserved_peak))));
    }

    /// The headline names what stays allocated after the step from the engine's breakdown:
    /// DDP's zero_grad(set_to_none) frees the gradients, Megatron's gradient buffer keeps them.
    void afterStepNamesWhatStays()
    {
        PlanDocument doc(Catalog::builtin());
        QVERIFY(doc.load(casePath("hcie-ai-ddp"), nullptr));
        MemoryTimelinePanel panel(&doc);
        panel.resize(1000, 600);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        auto rankOf = [&]() -> const RankMemory & {
            for (const RankMemory &r : doc.estimate().memory.ranks)
                if (r.stage == panel.stage())
                    return r;
            return doc.estimate().memory.ranks.front();
        };
        const QString gradients = ComponentStyle::name(int(Component::Gradients));
        const QString params = ComponentStyle::name(int(Component::Parameters));
        const RankMemory &ddp = rankOf();
        QCOMPARE(ddp.after_step[Component::Gradients], 0.0);
        QVERIFY(ddp.after_step[Component::Parameters] > 0);
        QString text = panel.headline();
        QVERIFY2(text.contains(params + QLatin1Char(' ') + qs(formatGiB(ddp.after_step[Component::Parameters]))),
                 qPrintable(text));
        QVERIFY2(!text.contains(gradients), qPrintable(text));
        QVERIFY(text.contains(qs(formatGiB(ddp.after_step.total()))));

        Plan p = doc.plan();
        p.framework = "megatron";
        QVERIFY(doc.apply(p, QStringLiteral("framework")));
        const RankMemory &meg = rankOf();
        QVERIFY(meg.after_step[Component::Gradients] > 0);
        text = panel.headline();
        QVERIFY2(text.contains(gradients + QLatin1Char(' ') + qs(formatGiB(meg.after_step[Component::Gradients]))),
                 qPrintable(text));
    }

    /// A measured snapshot is drawn over the step, phase by phase; a broken one is refused with
    /// its field named; removing it leaves the prediction alone.
    void measuredSnapshotOverlay()
    {
        PlanDocument doc(Catalog::builtin());
        QVERIFY(doc.load(casePath("hcie-ai-fsdp"), nullptr));
        MemoryTimelinePanel panel(&doc);
        panel.resize(1200, 700);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("probe.json"));
        nlohmann::json trace = nlohmann::json::array();
        trace.push_back({{"action", "segment_alloc"}, {"size", 40.0 * kGiB}, {"time_us", 100}});
        for (int t = 0; t < 30; ++t)
            trace.push_back({{"action", t < 20 ? "alloc" : "free_completed"}, {"size", 1.0 * kGiB}, {"time_us", 101 + t}});
        nlohmann::json snap = {{"format", "shardscope-memory-snapshot"}, {"version", 1}, {"source", "probe"},
                               {"trace", trace},
                               {"phases", {{{"phase", "forward"}, {"time_us", 100}},
                                           {{"phase", "backward"}, {"time_us", 110}},
                                           {{"phase", "optimizer_step"}, {"time_us", 125}},
                                           {{"phase", "end"}, {"time_us", 131}}}}};
        writeFileAtomically(file.toStdString(), snap.dump());
        QString error;
        QVERIFY2(panel.importSnapshot(file, &error), qPrintable(error));
        const MemoryTimelineView::Measured &m = panel.view()->measured();
        QCOMPARE(m.x.size(), size_t(31));
        QCOMPARE(m.peakReserved, 40.0 * kGiB);
        QCOMPARE(m.peakAllocated, 20.0 * kGiB);
        QVERIFY(m.x.front() >= 0 && m.x.back() <= panel.view()->eventCount());
        QVERIFY(panel.view()->grab().width() > 0); // paints with it
        // A plan change keeps it, aligned to the new step.
        Plan p = doc.plan();
        p.training.seq_len = 16384;
        QVERIFY(doc.apply(p, QStringLiteral("seq")));
        QCOMPARE(panel.view()->measured().x.size(), size_t(31));
        panel.clearSnapshot();
        QVERIFY(panel.view()->measured().x.empty());
        // Broken: the field is named.
        snap["trace"][3]["size"] = -1;
        writeFileAtomically(file.toStdString(), snap.dump());
        QVERIFY(!panel.importSnapshot(file, &error));
        QVERIFY2(error.contains(QStringLiteral("trace[3].size")), qPrintable(error));
        QVERIFY(!panel.hasSnapshot());
    }

    /// Hovering an event names the tensor allocated or freed there and the bytes after it.
    void hoverNamesTheTensor()
    {
        PlanDocument doc(Catalog::builtin());
        QVERIFY(doc.load(casePath("hcie-ai-fsdp"), nullptr));
        MemoryTimelinePanel panel(&doc);
        panel.resize(1200, 700);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        MemoryTimelineView *view = panel.view();
        const StepView &v = *view->stepView();
        const int peak = view->peakEvent();
        const QPoint at = view->pointOf(peak) + QPoint(0, 4); // inside the stack, under its top
        QCOMPARE(view->eventAt(at), peak);
        const QString tip = view->eventTooltip(peak);
        const TimelineTensor &tt = v.timeline.tensors[size_t(v.timeline.events[size_t(v.peak_event)].tensor)];
        QVERIFY2(tip.contains(qs(tensorKindLabel(tt.kind))), qPrintable(tip));
        QVERIFY(tip.contains(v.timeline.events[size_t(v.peak_event)].alloc ? QStringLiteral("Allocates")
                                                                          : QStringLiteral("Frees")));
        QVERIFY(tip.contains(qs(formatBytes(tt.bytes))));
        QVERIFY(tip.contains(QStringLiteral("micro-batch %1").arg(tt.unit)));
        QVERIFY(tip.contains(QStringLiteral("backward")));
        QVERIFY(tip.contains(qs(formatGiB(view->stackedTop(kComponentCount - 1, peak)))));
        QVERIFY(tip.contains(qs(formatGiB(view->reservedAt(peak)))));
        QVERIFY(tip.contains(QStringLiteral("allocated peak")));
        // The engine's formula of the tensor's component, as the bar chart's tooltip gives it.
        const RankMemory &rank = doc.estimate().memory.ranks.front();
        const MemoryExplanation ex = explainMemory(doc.plan(), doc.catalog(), rank, tt.phase);
        QVERIFY2(tip.contains(QStringLiteral("Formula:")) &&
                     tip.contains(QString::fromStdString(ex[size_t(componentOf(tt.kind))].formula.english()).toHtmlEscaped()),
                 qPrintable(tip));

        QTest::mouseMove(view, at);
        QTRY_VERIFY(QToolTip::isVisible());
        QCOMPARE(QToolTip::text(), tip);
        QTest::mouseMove(view, QPoint(2, 2)); // outside the plot
        QTRY_VERIFY(!QToolTip::isVisible());
        QCOMPARE(view->eventAt(QPoint(2, 2)), -1);
    }

    /// A change of the plan redraws the view with the new plan's step, at once while shown and
    /// when shown again while hidden.
    void followsPlanChanges()
    {
        PlanDocument doc(Catalog::builtin());
        QVERIFY(doc.load(casePath("hcie-ai-fsdp"), nullptr));
        MemoryTimelinePanel panel(&doc);
        panel.resize(1000, 600);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        const double before = panel.view()->peakBytes();

        Plan p = doc.plan();
        p.training.seq_len = 16384;
        QVERIFY(doc.apply(p, QStringLiteral("seq_len")));
        const StepView shorter = stepView(doc.plan(), doc.catalog(), panel.stage());
        QCOMPARE(panel.view()->peakBytes(), shorter.allocated_peak);
        QVERIFY(shorter.allocated_peak < before);
        QCOMPARE(panel.view()->eventCount(), int(shorter.live.size()));
        QVERIFY(near(panel.drivers().front().bytes, peakGroups(shorter).front().bytes));

        panel.hide();
        p.training.micro_batch = 2;
        QVERIFY(doc.apply(p, QStringLiteral("micro_batch")));
        QCOMPARE(panel.view()->peakBytes(), shorter.allocated_peak); // not recomputed while hidden
        panel.show();
        const StepView twice = stepView(doc.plan(), doc.catalog(), panel.stage());
        QCOMPARE(panel.view()->peakBytes(), twice.allocated_peak);
        QVERIFY(twice.allocated_peak > shorter.allocated_peak);
    }

    /// A pipeline plan offers one entry per stage, starts on the stage that needs the most and
    /// keeps the chosen stage across edits.
    void pipelineOffersEveryStage()
    {
        PlanDocument doc(Catalog::builtin());
        QVERIFY(doc.load(casePath("hcie-ai-fsdp"), nullptr));
        QVERIFY2(doc.apply(pipelinePlan(doc.plan()), QStringLiteral("pp")),
                 qPrintable(doc.validationError(pipelinePlan(doc.plan()))));
        MemoryTimelinePanel panel(&doc);
        panel.resize(1200, 700);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        QComboBox *box = panel.stageBox();
        QVERIFY(box->isVisible());
        QCOMPARE(box->count(), 4);
        for (int s = 0; s < 4; ++s) {
            QCOMPARE(box->itemData(s).toInt(), s);
            QVERIFY(box->itemText(s).startsWith(QStringLiteral("Stage %1").arg(s)));
        }
        const int worst = worstStage(doc.estimate().memory);
        QCOMPARE(panel.stage(), worst);
        QCOMPARE(box->currentData().toInt(), worst);

        // Choosing a stage in the box shows that stage.
        const int other = worst == 3 ? 2 : 3;
        box->setCurrentIndex(box->findData(other));
        Q_EMIT box->activated(box->currentIndex());
        QCOMPARE(panel.stage(), other);
        const StepView v = stepView(doc.plan(), doc.catalog(), other);
        QCOMPARE(panel.view()->stepView()->timeline.stage, other);
        QCOMPARE(panel.view()->peakBytes(), v.allocated_peak);
        QVERIFY(panel.headline().startsWith(QStringLiteral("<b>Stage %1").arg(other)));

        // An edit keeps it; a plan without that stage falls back to the fullest one.
        Plan p = doc.plan();
        p.training.grad_accum = 4;
        QVERIFY(doc.apply(p, QStringLiteral("grad_accum")));
        QCOMPARE(panel.stage(), other);
        QCOMPARE(box->count(), 4);
        p.parallel.pp = 2;
        p.parallel.dp *= 2;
        QVERIFY2(doc.apply(p, QStringLiteral("pp 2")), qPrintable(doc.validationError(p)));
        QCOMPARE(box->count(), 2);
        QCOMPARE(panel.stage(), worstStage(doc.estimate().memory));
    }

    /// Recomputing the view and repainting it stays within a few milliseconds.
    void redrawsFast()
    {
        PlanDocument doc(Catalog::builtin());
        QVERIFY(doc.load(casePath("hcie-ai-fsdp"), nullptr));
        MemoryTimelinePanel panel(&doc);
        panel.resize(1366, 700);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        std::vector<double> refresh, paint;
        for (int i = 0; i < 30; ++i) {
            QElapsedTimer t;
            t.start();
            panel.refresh();
            refresh.push_back(double(t.nsecsElapsed()) / 1e6);
            t.restart();
            panel.view()->repaint();
            paint.push_back(double(t.nsecsElapsed()) / 1e6);
        }
        std::sort(refresh.begin(), refresh.end());
        std::sort(paint.begin(), paint.end());
        qInfo("memory over the step: refresh median %.2f ms, paint median %.2f ms (%d events)",
              refresh[15], paint[15], panel.view()->eventCount());
        // Generous against a loaded machine; the medians printed above are what to watch.
        QVERIFY2(refresh[15] + paint[15] < 40, qPrintable(QString::number(refresh[15] + paint[15])));
    }

    /// The main window has it as a centre tab beside the per-rank bars; --tab picks it.
    void inTheMainWindow()
    {
        MainWindow w;
        QTabWidget *tabs = w.centreTabs();
        QVERIFY(tabs);
        QCOMPARE(tabs->count(), 2);
        QCOMPARE(tabs->currentWidget(), static_cast<QWidget *>(w.memoryPanel()));
        QCOMPARE(tabs->tabText(1), MemoryTimelinePanel::title());
        QCOMPARE(tabs->tabText(1), QStringLiteral("Memory over the step"));
        QVERIFY(w.showTab(QStringLiteral("memory over the step")));
        QCOMPARE(tabs->currentWidget(), static_cast<QWidget *>(w.timelinePanel()));
        QVERIFY(!w.showTab(QStringLiteral("no such tab")));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        const StepView v = stepView(w.document()->plan(), w.document()->catalog(), w.timelinePanel()->stage());
        QCOMPARE(w.timelinePanel()->view()->peakBytes(), v.allocated_peak);
        QVERIFY(w.showTab(QStringLiteral("Per-rank HBM")));
        QCOMPARE(tabs->currentWidget(), static_cast<QWidget *>(w.memoryPanel()));
        w.autosave()->finish();
    }
};

QTEST_MAIN(TestMemoryTimeline)
#include "tst_memorytimeline.moc"
