#include "widgets/componentstyle.h"
#include "widgets/darkpalette.h"
#include "widgets/memorychartview.h"
#include "widgets/memorypanel.h"
#include "widgets/plandocument.h"
#include "widgets/rankbars.h"

#include "core/catalog.h"
#include "core/units.h"
#include "i18n/enginetext.h"
#include "i18n/language.h"

#include <QAreaSeries>
#include <QChart>
#include <QChartView>
#include <QFontMetrics>
#include <QImage>
#include <QSet>
#include <QLineSeries>
#include <QValueAxis>
#include <QRegularExpression>
#include <QToolTip>
#include <QTest>
#include <algorithm>

using namespace shardscope;

class TestMemoryChart : public QObject
{
    Q_OBJECT

private:
    static Plan casePlan(const char *name)
    {
        const auto plan = PlanDocument::readPlanFile(QString::fromStdString(locateDataDir()) +
                                                         QStringLiteral("/cases/") + QLatin1String(name) +
                                                         QStringLiteral(".plan.json"),
                                                     Catalog::builtin(), nullptr);
        if (!plan)
            qFatal("case %s", name);
        return *plan;
    }
    // 64 ranks over 8 nodes with 4 pipeline stages.
    static Plan pipelinePlan(int nodes)
    {
        Plan p = casePlan("hcie-ai-fsdp");
        p.cluster.nodes = nodes;
        p.parallel.pp = 4;
        p.parallel.tp = 2;
        p.parallel.dp = p.cluster.world() / 8;
        p.training.grad_accum = 8;
        return p;
    }

private Q_SLOTS:
    void seriesCarryTheEngineNumbers_data()
    {
        QTest::addColumn<QString>("caseName");
        QTest::addColumn<int>("view");
        for (const char *c : {"hcie-ai-ddp", "hcie-ai-fsdp", "hcie-ai-tp8", "hcie-ai-tp4-fsdp2"}) {
            QTest::addRow("%s peak", c) << QString::fromLatin1(c) << int(PhaseView::Peak);
            QTest::addRow("%s backward", c) << QString::fromLatin1(c) << int(PhaseView::Backward);
        }
        QTest::addRow("pipeline forward") << QString() << int(PhaseView::Forward);
        QTest::addRow("pipeline optimizer") << QString() << int(PhaseView::OptimizerStep);
    }
    void seriesCarryTheEngineNumbers()
    {
        QFETCH(QString, caseName);
        QFETCH(int, view);
        PlanDocument doc(Catalog::builtin());
        const Plan plan = caseName.isEmpty() ? pipelinePlan(4) : casePlan(caseName.toLatin1().constData());
        QVERIFY(doc.apply(plan, QStringLiteral("load")));
        MemoryPanel panel(&doc);
        panel.setPhaseView(PhaseView(view));
        const MemoryEstimate engine = estimate(plan, Catalog::builtin()).memory;
        MemoryChartView *chart = panel.chartView();

        int ranks = 0;
        for (const RankMemory &r : engine.ranks)
            ranks += r.count;
        QCOMPARE(chart->barCount(), ranks);
        QCOMPARE(chart->categories().size(), ranks);
        int bar = 0;
        for (const RankMemory &r : engine.ranks) {
            const Phase phase = view == int(PhaseView::Peak) ? r.peak_phase : Phase(view - 1);
            for (int i = 0; i < r.count; ++i, ++bar) {
                QCOMPARE(chart->categories().at(bar), QString::number(r.rank + i));
                double top = 0;
                for (int s = 0; s < ComponentStyle::kSegments; ++s) {
                    const double gib = (s == ComponentStyle::kReserve ? r.reserve.total()
                                                                      : r.phases[size_t(phase)].bytes[size_t(s)]) /
                                       kGiB;
                    QCOMPARE(chart->segmentValue(s, bar), gib);
                    // What is drawn: the segment's outline rises from the stack below it by its value.
                    const QList<QPointF> upper = chart->segmentSeries(s)->upperSeries()->points();
                    const QList<QPointF> lower = chart->segmentSeries(s)->lowerSeries()->points();
                    QCOMPARE(upper.size(), 4 * ranks);
                    QVERIFY(qAbs(lower.at(4 * bar + 1).y() - top) < 1e-9);
                    top += gib;
                    QVERIFY(qAbs(upper.at(4 * bar + 1).y() - top) < 1e-9);
                    QVERIFY(qAbs(upper.at(4 * bar + 2).y() - top) < 1e-9);
                    QVERIFY(upper.at(4 * bar + 1).x() < bar && upper.at(4 * bar + 2).x() > bar);
                }
            }
        }
        QCOMPARE(chart->capacitySeries()->at(0).y(), engine.hbm_bytes / kGiB);
        QCOMPARE(chart->usableSeries()->at(0).y(), engine.usable_bytes / kGiB);
        for (int s = 0; s < ComponentStyle::kSegments; ++s)
            QCOMPARE(chart->segmentBrush(s).color().rgb(), ComponentStyle::color(s).rgb());
    }

    void pointerFindsTheSegmentUnderIt()
    {
        PlanDocument doc(Catalog::builtin());
        QVERIFY(doc.apply(pipelinePlan(8), QStringLiteral("64 ranks")));
        MemoryPanel panel(&doc);
        panel.resize(1366, 700);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        MemoryChartView *chart = panel.chartView();
        QCOMPARE(chart->barCount(), 64);
        QWidget *viewport = chart->chartView()->viewport();
        const auto *axisY = qobject_cast<QValueAxis *>(chart->chart()->axes(Qt::Vertical).constFirst());
        QVERIFY(axisY);
        const double pxPerGiB = chart->chart()->plotArea().height() / axisY->max();
        int checked = 0;
        for (int bar : {0, 17, 63}) {
            for (int s = 0; s < ComponentStyle::kSegments; ++s) {
                const QPoint centre = chart->segmentCentre(bar, s);
                const QPoint below = chart->segmentCentre(bar, s) + QPoint(0, 2);
                // Only segments at least a few pixels tall can be pointed at.
                if (chart->segmentValue(s, bar) * pxPerGiB < 6)
                    continue;
                QCOMPARE(chart->segmentAt(centre), std::make_pair(bar, s));
                QCOMPARE(chart->segmentAt(below), std::make_pair(bar, s));
                ++checked;
            }
        }
        QVERIFY(checked >= 9);
        // Between two bars, and above the stack, there is nothing.
        const QPoint left = chart->segmentCentre(16, 0), right = chart->segmentCentre(17, 0);
        QCOMPARE(chart->segmentAt((left + right) / 2), std::make_pair(-1, -1));
        QCOMPARE(chart->segmentAt(QPoint(right.x(), 2)), std::make_pair(-1, -1));

        // Moving the pointer over a segment shows that segment's tooltip.
        const int s = int(Component::Parameters);
        QTest::mouseMove(viewport, chart->segmentCentre(17, s));
        QTRY_VERIFY(QToolTip::isVisible());
        QCOMPARE(QToolTip::text(), panel.segmentTooltip(17, s));
        QTest::mouseMove(viewport, (left + right) / 2);
        QTRY_VERIFY(!QToolTip::isVisible());
    }

    void valueTicksFitThePlotHeight()
    {
        PlanDocument doc(Catalog::builtin());
        QVERIFY(doc.apply(casePlan("hcie-ai-fsdp"), QStringLiteral("load")));
        MemoryPanel panel(&doc);
        MemoryChartView *chart = panel.chartView();
        const auto *axisY = qobject_cast<QValueAxis *>(chart->chart()->axes(Qt::Vertical).constFirst());
        QVERIFY(axisY);
        const int labelHeight = QFontMetrics(axisY->labelsFont()).height();
        const double top = doc.estimate().memory.ranks.front().peak_bytes / kGiB;
        int ticksTall = 0;
        for (int height : {900, 330}) {
            panel.resize(1000, height);
            panel.show();
            QVERIFY(QTest::qWaitForWindowExposed(&panel));
            QCoreApplication::processEvents();
            const double plot = chart->chart()->plotArea().height();
            // Every tick label has room (Qt Charts elides labels that overlap), the bars fit
            // under the axis' top and the step is a whole number of GiB.
            QVERIFY2((axisY->tickCount() - 1) * 1.4 * labelHeight <= plot,
                     qPrintable(QStringLiteral("%1 ticks on %2 px").arg(axisY->tickCount()).arg(plot)));
            QVERIFY(axisY->max() >= top);
            const double step = axisY->max() / (axisY->tickCount() - 1);
            QCOMPARE(step, std::round(step));
            if (height == 900)
                ticksTall = axisY->tickCount();
            else
                QVERIFY(axisY->tickCount() < ticksTall);
        }
    }

    void manyRanksAreGroupedAndLabelled()
    {
        const Plan plan = pipelinePlan(16); // 128 ranks
        QVERIFY2(PlanDocument::validationError(plan, Catalog::builtin()).isEmpty(),
                 qPrintable(PlanDocument::validationError(plan, Catalog::builtin())));
        const MemoryEstimate engine = estimate(plan, Catalog::builtin()).memory;
        const std::vector<RankBar> bars = rankBars(engine, PhaseView::Peak);
        QCOMPARE(bars.size(), engine.ranks.size());
        QCOMPARE(bars.front().label, QStringLiteral("0-31"));
        QCOMPARE(bars.front().ranks, 32);
        QCOMPARE(bars.back().label, QStringLiteral("96-127"));
        // 64 ranks stay one bar each.
        QCOMPARE(rankBars(estimate(pipelinePlan(8), Catalog::builtin()).memory, PhaseView::Peak).size(), size_t(64));
    }

    void tooltipGivesBytesShareAndFormula()
    {
        PlanDocument doc(Catalog::builtin());
        QVERIFY(doc.apply(casePlan("hcie-ai-ddp"), QStringLiteral("load")));
        MemoryPanel panel(&doc);
        const RankMemory &r = doc.estimate().memory.ranks.front();
        const MemoryExplanation ex = explainMemory(doc.plan(), doc.catalog(), r, r.peak_phase);
        const QString tip = panel.segmentTooltip(0, int(Component::OptimizerStates));
        QVERIFY2(tip.contains(QStringLiteral("Optimizer states")), qPrintable(tip));
        QVERIFY(tip.contains(QString::fromStdString(formatGiB(r.peak().bytes[size_t(Component::OptimizerStates)]))));
        QVERIFY(tip.contains(QStringLiteral("%")));
        QVERIFY(tip.contains(QString::fromStdString(ex[size_t(Component::OptimizerStates)].formula.english()).toHtmlEscaped()));
        const QString reserve = panel.segmentTooltip(0, ComponentStyle::kReserve);
        QVERIFY(reserve.contains(QStringLiteral("Runtime reserve")));
        QVERIFY(panel.headline().contains(QStringLiteral("Does not fit")));
    }

    /// The engine's formula and assumptions follow the interface language; the numbers stay.
    void tooltipFormulaFollowsTheLanguage()
    {
        if (!availableLanguages().contains(QStringLiteral("zh_CN")))
            QSKIP("built without translations");
        PlanDocument doc(Catalog::builtin());
        QVERIFY(doc.apply(casePlan("hcie-ai-fsdp"), QStringLiteral("load")));
        MemoryPanel panel(&doc);
        const RankMemory &r = doc.estimate().memory.ranks.front();
        const MemoryExplanation ex = explainMemory(doc.plan(), doc.catalog(), r, r.peak_phase);
        auto hasCjk = [](const QString &s) {
            return std::any_of(s.begin(), s.end(), [](QChar c) {
                return c.unicode() >= 0x4E00 && c.unicode() <= 0x9FFF;
            });
        };
        for (int c = 0; c < kComponentCount; ++c) {
            const ComponentExplanation &e = ex[size_t(c)];
            const QString english = QString::fromStdString(e.formula.english());
            const QString tip = panel.segmentTooltip(0, c);
            QVERIFY2(tip.contains(english.toHtmlEscaped()), qPrintable(tip));
            QVERIFY(tip.contains(QString::fromStdString(e.assumptions.english()).toHtmlEscaped()));

            QCOMPARE(setLanguage(QStringLiteral("zh_CN")), QStringLiteral("zh_CN"));
            const QString zhTip = panel.segmentTooltip(0, c);
            const QString zhFormula = translated(e.formula);
            const QString zhAssumptions = translated(e.assumptions);
            setLanguage(QStringLiteral("en"));
            QVERIFY2(zhTip.contains(zhFormula.toHtmlEscaped()), qPrintable(zhTip));
            QVERIFY(zhTip.contains(zhAssumptions.toHtmlEscaped()));
            QVERIFY2(hasCjk(zhFormula), qPrintable(zhFormula));
            QVERIFY(e.assumptions.empty() || hasCjk(zhAssumptions));
            QVERIFY(!zhTip.contains(english.toHtmlEscaped()));
            // Every number of the formula is in the Chinese tooltip, the bytes held among them.
            for (const Phrase &p : e.formula.phrases) {
                for (const std::string &a : p.args)
                    QVERIFY2(zhTip.contains(QString::fromStdString(a)), qPrintable(zhTip));
            }
            if (c != int(Component::MasterWeights) && c != int(Component::OptimizerStates) &&
                c != int(Component::LogitsAndLoss))
                QVERIFY(zhFormula.contains(
                    QString::fromStdString(formatGiB(r.peak().bytes[size_t(c)]))));
        }
    }

    // Switching phase tabs keeps the value axis: the bars of the phases compare by eye.
    void axisKeepsItsScaleAcrossPhases_data()
    {
        QTest::addColumn<QString>("caseName");
        QTest::addRow("ddp") << QStringLiteral("hcie-ai-ddp");
        QTest::addRow("fsdp") << QStringLiteral("hcie-ai-fsdp");
        QTest::addRow("pipeline") << QString();
    }
    void axisKeepsItsScaleAcrossPhases()
    {
        QFETCH(QString, caseName);
        PlanDocument doc(Catalog::builtin());
        QVERIFY(doc.apply(caseName.isEmpty() ? pipelinePlan(1) : casePlan(caseName.toLatin1().constData()),
                          QStringLiteral("load")));
        MemoryPanel panel(&doc);
        panel.resize(900, 600);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        const double top = panel.chartView()->axisTop();
        for (PhaseView v : {PhaseView::Forward, PhaseView::Backward, PhaseView::OptimizerStep, PhaseView::Peak}) {
            panel.setPhaseView(v);
            QCOMPARE(panel.chartView()->axisTop(), top);
        }
    }

    // The hatched runtime reserve is opaque: the over-capacity zone does not show through it,
    // so the two stay apart where a bar rises above the capacity.
    void reserveIsOpaque()
    {
        for (const QPalette &pal : {darkPalette(), QPalette(Qt::white, Qt::white)}) {
            MemoryChartView chart;
            chart.setPalette(pal);
            const QBrush brush = chart.segmentBrush(ComponentStyle::kReserve);
            QCOMPARE(brush.style(), Qt::TexturePattern);
            const QImage tile = brush.textureImage().isNull() ? brush.texture().toImage() : brush.textureImage();
            QVERIFY(!tile.isNull());
            QSet<QRgb> colours;
            for (int y = 0; y < tile.height(); ++y)
                for (int x = 0; x < tile.width(); ++x) {
                    QCOMPARE(qAlpha(tile.pixel(x, y)), 255);
                    colours.insert(tile.pixel(x, y));
                }
            QVERIFY(colours.size() >= 2); // hatched, not flat
        }
    }

    // Without a pipeline every rank is in stage 0: the tooltip does not say "stage 0".
    void stageOnlyWithAPipeline()
    {
        PlanDocument doc(Catalog::builtin());
        QVERIFY(doc.apply(casePlan("hcie-ai-ddp"), QStringLiteral("load")));
        MemoryPanel panel(&doc);
        const QString flat = panel.segmentTooltip(0, int(Component::Parameters));
        QVERIFY2(flat.contains(QStringLiteral("Rank 0,")) && !flat.contains(QStringLiteral("(stage")), qPrintable(flat));
        QVERIFY(doc.apply(pipelinePlan(1), QStringLiteral("pipeline")));
        const QString piped = panel.segmentTooltip(0, int(Component::Parameters));
        QVERIFY2(piped.contains(QStringLiteral("(stage 0)")), qPrintable(piped));
    }

    // The capacity and usable lines stand out over every segment, in the light and the dark
    // palette: each line against its outline, and the line or its outline against the segment
    // (the dark palette's amber usable line used to vanish over the yellow optimizer states).
    void linesStandOutOverEverySegment_data()
    {
        QTest::addColumn<bool>("dark");
        QTest::addRow("light") << false;
        QTest::addRow("dark") << true;
    }
    void linesStandOutOverEverySegment()
    {
        QFETCH(bool, dark);
        PlanDocument doc(Catalog::builtin());
        QVERIFY(doc.apply(casePlan("hcie-ai-fsdp"), QStringLiteral("load")));
        MemoryPanel panel(&doc);
        panel.setPalette(dark ? darkPalette() : QPalette(Qt::white, Qt::white));
        MemoryChartView *chart = panel.chartView();
        QCOMPARE(chart->usableOutline()->points(), chart->usableSeries()->points());
        QCOMPARE(chart->capacityOutline()->points(), chart->capacitySeries()->points());
        for (auto [line, outline] : {std::pair{chart->usableSeries(), chart->usableOutline()},
                                     std::pair{chart->capacitySeries(), chart->capacityOutline()}}) {
            const QColor l = line->pen().color(), o = outline->pen().color();
            QVERIFY(outline->pen().widthF() >= line->pen().widthF() + 2);
            QVERIFY2(contrastRatio(l, o) >= 3, qPrintable(l.name() + QLatin1Char('/') + o.name()));
            for (int s = 0; s < ComponentStyle::kSegments; ++s) {
                const QColor c = ComponentStyle::color(s);
                double best = std::max(contrastRatio(l, c), contrastRatio(o, c));
                // The hatched reserve shows the background between its strokes.
                if (s == ComponentStyle::kReserve)
                    best = std::max(best, contrastRatio(l, chart->palette().color(QPalette::Base)));
                QVERIFY2(best >= 3, qPrintable(QStringLiteral("%1 over %2: %3")
                                                   .arg(l.name(), ComponentStyle::name(s))
                                                   .arg(best)));
            }
        }
    }

    // "Fits" and "Does not fit" are readable on the dark palette's window (WCAG AA, 4.5:1).
    void verdictIsReadableOnDark_data()
    {
        QTest::addColumn<QString>("caseName");
        QTest::addRow("does not fit") << QStringLiteral("hcie-ai-ddp");
        QTest::addRow("fits") << QStringLiteral("hcie-ai-fsdp");
    }
    void verdictIsReadableOnDark()
    {
        QFETCH(QString, caseName);
        PlanDocument doc(Catalog::builtin());
        QVERIFY(doc.apply(casePlan(caseName.toLatin1().constData()), QStringLiteral("load")));
        MemoryPanel panel(&doc);
        for (const QPalette &pal : {darkPalette(), QPalette(Qt::black, Qt::white)}) {
            panel.setPalette(pal);
            const QString html = panel.headline();
            const QRegularExpressionMatch m =
                QRegularExpression(QStringLiteral("color:(#[0-9a-f]{6}); font-weight:bold")).match(html);
            QVERIFY2(m.hasMatch(), qPrintable(html));
            const double ratio = contrastRatio(QColor(m.captured(1)), pal.color(QPalette::Window));
            QVERIFY2(ratio >= 4.5, qPrintable(QStringLiteral("%1 on %2: %3")
                                                  .arg(m.captured(1), pal.color(QPalette::Window).name())
                                                  .arg(ratio)));
        }
    }
};

QTEST_MAIN(TestMemoryChart)
#include "tst_memorychart.moc"
