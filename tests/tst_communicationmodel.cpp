#include "widgets/collectivechartview.h"
#include "widgets/communicationmodel.h"
#include "widgets/communicationpanel.h"
#include "widgets/componentstyle.h"
#include "widgets/plandocument.h"

#include "core/catalog.h"
#include "i18n/enginetext.h"
#include "i18n/language.h"

#include <QAbstractItemModelTester>
#include <QBarCategoryAxis>
#include <QBarSet>
#include <QSignalSpy>
#include <QValueAxis>
#include <QChart>
#include <QChartView>
#include <QGraphicsScene>
#include <QGraphicsTextItem>
#include <QAbstractAxis>
#include <QSet>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QTableView>
#include <QTest>
#include <algorithm>

using namespace shardscope;

namespace {

bool hasCjk(const QString &s)
{
    return std::any_of(s.begin(), s.end(),
                       [](QChar c) { return c.unicode() >= 0x4E00 && c.unicode() <= 0x9FFF; });
}

Collective collective(const char *kind, const char *group, double perStep, double exposed)
{
    Collective c;
    c.collective = kind;
    c.group = group;
    c.group_size = 8;
    c.bytes = 1 << 20;
    c.count_per_step = 10;
    c.time_s = perStep / 10;
    c.exposed_time_s = exposed;
    c.phase = "backward";
    return c;
}

} // namespace

class TestCommunicationModel : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void cleanup() { setLanguage(QStringLiteral("en")); }

    void modelIsConsistent()
    {
        CommunicationModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model.rowCount(), 0);
        QCOMPARE(model.columnCount(), int(CommunicationModel::ColumnCount));
        Collective c;
        c.collective = "all_gather";
        c.group = "dp";
        c.group_size = 8;
        c.bytes = 64.0 * 1024 * 1024;
        c.count_per_step = 32;
        c.time_s = 0.002;
        c.exposed_time_s = 0.004;
        c.phase = "forward";
        c.note = "parameters of one layer";
        model.setCollectives({c, c});
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(model.index(0, CommunicationModel::CollectiveColumn).data().toString(), QStringLiteral("all_gather"));
        QCOMPARE(model.index(0, CommunicationModel::GroupColumn).data().toString(), QStringLiteral("dp (8 ranks)"));
        QCOMPARE(model.index(0, CommunicationModel::MessageSizeColumn).data(CommunicationModel::SortRole).toDouble(), c.bytes);
        QCOMPARE(model.index(0, CommunicationModel::StepTimeColumn).data(CommunicationModel::SortRole).toDouble(), 0.064);
        model.setCollectives({});
        QCOMPARE(model.rowCount(), 0);
    }

    void panelShowsTheEngineCollectives()
    {
        PlanDocument doc(Catalog::builtin());
        QVERIFY(doc.loadAsUntitled(QString::fromStdString(locateDataDir()) +
                                       QStringLiteral("/cases/hcie-ai-fsdp.plan.json"),
                                   nullptr));
        CommunicationPanel panel(&doc);
        panel.show();
        QAbstractItemModelTester tester(panel.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        const Estimate e = estimate(doc.plan(), doc.catalog());
        QCOMPARE(panel.model()->rowCount(), int(e.communication.size()));
        QCOMPARE(panel.showsPlaceholder(), e.communication.empty());
        for (int i = 0; i < int(e.communication.size()); ++i)
            QCOMPARE(panel.model()->index(i, CommunicationModel::TimeColumn).data(CommunicationModel::SortRole).toDouble(),
                     e.communication[size_t(i)].time_s);
        if (e.step.step_s > 0)
            QVERIFY2(panel.summaryText().contains(QStringLiteral("MFU")), qPrintable(panel.summaryText()));

        // One device: no collectives, and the panel says so.
        Plan single = doc.plan();
        single.cluster.devices_per_node = 1;
        single.parallel.dp = 1;
        single.parallel.sharding = Sharding::None;
        single.training.seq_len = 4096;
        QVERIFY2(doc.apply(single, QStringLiteral("single")), qPrintable(doc.validationError(single)));
        QCOMPARE(panel.model()->rowCount(), int(doc.estimate().communication.size()));
        if (doc.estimate().communication.empty())
            QVERIFY(panel.showsPlaceholder());
    }

    /// A change that moves the numbers only updates the rows in place: the selected collective
    /// stays selected (a model reset dropped it, and rebuilt the view, on every edit).
    void numbersChangeInPlace()
    {
        PlanDocument doc(Catalog::builtin());
        QVERIFY(doc.loadAsUntitled(QString::fromStdString(locateDataDir()) +
                                       QStringLiteral("/cases/hcie-ai-fsdp.plan.json"),
                                   nullptr));
        CommunicationPanel panel(&doc);
        panel.show();
        QAbstractItemModelTester tester(panel.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        const int rows = panel.model()->rowCount();
        QVERIFY(rows >= 2);
        panel.tableView()->selectRow(1);
        const QString selected = panel.tableView()->selectionModel()->selectedRows().value(0).data().toString();
        Plan p = doc.plan();
        p.training.micro_batch = 2;
        QVERIFY2(doc.apply(p, QStringLiteral("two sequences")), qPrintable(doc.validationError(p)));
        QCOMPARE(panel.model()->rowCount(), rows);
        const QModelIndexList now = panel.tableView()->selectionModel()->selectedRows();
        QCOMPARE(now.size(), 1);
        QCOMPARE(now.first().data().toString(), selected);
        const Estimate e = estimate(doc.plan(), doc.catalog());
        for (int i = 0; i < rows; ++i)
            QCOMPARE(panel.model()->index(i, CommunicationModel::StepTimeColumn).data(CommunicationModel::SortRole).toDouble(),
                     e.communication[size_t(i)].time_s * e.communication[size_t(i)].count_per_step);
    }

    /// A change that moves a few numbers announces only the cells that moved, each on its own
    /// (a view repaints one cell for each, but its whole table for a range).
    void onlyChangedCellsAreAnnounced()
    {
        CommunicationModel model;
        std::vector<Collective> rows = {collective("all_gather", "dp", 0.2, 0.1),
                                        collective("reduce_scatter", "dp", 0.3, 0.0)};
        model.setCollectives(rows);
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        rows[1].exposed_time_s = 0.05;
        model.setCollectives(rows);
        QCOMPARE(reset.count(), 0);
        QCOMPARE(changed.count(), 1);
        const QModelIndex cell = model.index(1, CommunicationModel::ExposedColumn);
        QCOMPARE(changed.first().at(0).toModelIndex(), cell);
        QCOMPARE(changed.first().at(1).toModelIndex(), cell);
        QCOMPARE(cell.data(CommunicationModel::SortRole).toDouble(), 0.05);
        // Calls per step move the count and the time per step, not the time per call.
        changed.clear();
        rows[0].count_per_step = 20;
        model.setCollectives(rows);
        QSet<int> columns;
        for (const QList<QVariant> &args : changed) {
            QCOMPARE(args.at(0).toModelIndex(), args.at(1).toModelIndex());
            QCOMPARE(args.at(0).toModelIndex().row(), 0);
            columns.insert(args.at(0).toModelIndex().column());
        }
        QCOMPARE(columns, (QSet<int>{CommunicationModel::CountColumn, CommunicationModel::StepTimeColumn}));
        changed.clear();
        model.setCollectives(rows);
        QCOMPARE(changed.count(), 0);
    }

    /// The value axis ends on a step of 1, 2 or 5 times a power of ten, at most six ticks, labels
    /// with the step's decimals.
    void chartAxisIsNice()
    {
        struct Case
        {
            double top, max;
            int ticks, decimals;
        };
        for (const Case &c : {Case{319.5, 400, 5, 0}, Case{100, 100, 6, 0}, Case{101, 150, 4, 0},
                              Case{0.33, 0.4, 5, 1}, Case{7.2, 8, 5, 0}, Case{0.0042, 0.005, 6, 3},
                              Case{2600, 3000, 4, 0}}) {
            const CollectiveChartView::NiceAxis a = CollectiveChartView::niceAxis(c.top);
            QVERIFY2(std::abs(a.max - c.max) < 1e-9 * c.max && a.ticks == c.ticks && a.decimals == c.decimals,
                     qPrintable(QStringLiteral("top %1: max %2, %3 ticks, %4 decimals")
                                    .arg(c.top).arg(a.max).arg(a.ticks).arg(a.decimals)));
            QVERIFY(a.max >= c.top && a.ticks <= 7);
        }
    }

    /// New numbers for the same bars change the bars in place: the categories are not set again
    /// and the value axis is not laid out again while its range holds; it grows when a bar needs
    /// it and shrinks when the bars use less than a third of it; other bars get an axis of their own.
    void chartNumbersChangeInPlace()
    {
        CollectiveChartView view;
        std::vector<Collective> rows = {collective("all_gather", "dp", 0.2, 0.1),
                                        collective("reduce_scatter", "dp", 0.3, 0.0)};
        view.setCollectives(rows);
        auto *categories = qobject_cast<QBarCategoryAxis *>(view.chart()->axes(Qt::Vertical).first());
        auto *values = qobject_cast<QValueAxis *>(view.chart()->axes(Qt::Horizontal).first());
        QVERIFY(categories && values);
        QCOMPARE(values->max(), 400.0);
        QSignalSpy categoriesSet(categories, &QBarCategoryAxis::categoriesChanged);
        QSignalSpy rangeSet(values, &QValueAxis::rangeChanged);
        QSignalSpy removed(view.totalSet(), &QBarSet::valuesRemoved);
        rows[1].time_s = 0.031; // 310 ms per step: the same axis
        view.setCollectives(rows);
        QCOMPARE(categoriesSet.count(), 0);
        QCOMPARE(rangeSet.count(), 0);
        QCOMPARE(removed.count(), 0);
        QCOMPARE(view.totalSet()->at(1), 310.0);
        rows[1].time_s = 0.05; // 500 ms: 550 with the margin, a new axis
        view.setCollectives(rows);
        QCOMPARE(rangeSet.count(), 1);
        QCOMPARE(values->max(), 600.0);
        rows[1].time_s = 0.025; // half: 275 ms with the margin, over a third of the axis, it stays
        view.setCollectives(rows);
        QCOMPARE(rangeSet.count(), 1);
        QCOMPARE(values->max(), 600.0);
        rows[0].time_s = 0.01;
        rows[1].time_s = 0.015; // 165 ms: under a third, the axis shrinks to fit
        view.setCollectives(rows);
        QCOMPARE(rangeSet.count(), 2);
        QCOMPARE(values->max(), 200.0);
        rows[1].time_s = 0.006;
        rows.push_back(collective("all_reduce", "tp", 0.06, 0.06));
        view.setCollectives(rows); // 110 ms with the margin: over a third, but other bars
        QCOMPARE(rangeSet.count(), 3);
        QCOMPARE(values->max(), 150.0);
        QCOMPARE(categories->categories(),
                 (QStringList{QStringLiteral("all_gather dp"), QStringLiteral("reduce_scatter dp"),
                              QStringLiteral("all_reduce tp")}));
        QCOMPARE(view.totalSet()->count(), 3);
    }

    /// At the width the bottom dock has on a 1366x768 screen, what each collective carries is
    /// readable beside the numbers, and a group grown to 128 ranks is not elided.
    void columnsReadableAt1366()
    {
        PlanDocument doc(Catalog::builtin());
        QVERIFY(doc.loadAsUntitled(QString::fromStdString(locateDataDir()) +
                                       QStringLiteral("/cases/hcie-ai-tp8.plan.json"),
                                   nullptr));
        CommunicationPanel panel(&doc);
        panel.resize(1350, 220);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        QTableView *table = panel.tableView();
        QHeaderView *header = table->horizontalHeader();
        auto visible = [&](int column) {
            const int left = header->sectionViewportPosition(column);
            return std::min(left + header->sectionSize(column), table->viewport()->width()) - std::max(left, 0);
        };
        QVERIFY2(visible(CommunicationModel::NoteColumn) >= 200,
                 qPrintable(QString::number(visible(CommunicationModel::NoteColumn))));
        for (int c = 0; c < CommunicationModel::NoteColumn; ++c)
            QCOMPARE(visible(c), header->sectionSize(c));

        Plan big = doc.plan();
        big.cluster.nodes = 16;
        big.parallel.dp = 128 / big.parallel.tp;
        QVERIFY2(doc.apply(big, QStringLiteral("128 ranks")), qPrintable(doc.validationError(big)));
        QCoreApplication::processEvents();
        int widest = 0;
        for (int r = 0; r < panel.model()->rowCount(); ++r)
            widest = std::max(widest, table->fontMetrics().horizontalAdvance(
                                          panel.model()->index(r, CommunicationModel::GroupColumn).data().toString()));
        QVERIFY(widest > 0);
        QVERIFY2(header->sectionSize(CommunicationModel::GroupColumn) >= widest,
                 qPrintable(QStringLiteral("%1 < %2").arg(header->sectionSize(CommunicationModel::GroupColumn)).arg(widest)));
    }

    /// What each collective carries and its phase read in the interface language; the
    /// collective and group identifiers stay as they are.
    void followsTheLanguage()
    {
        PlanDocument doc(Catalog::builtin());
        QVERIFY(doc.loadAsUntitled(QString::fromStdString(locateDataDir()) +
                                       QStringLiteral("/cases/hcie-ai-tp4-fsdp2.plan.json"),
                                   nullptr));
        QVERIFY(doc.plan().parallel.tp > 1 && doc.plan().parallel.sharding == Sharding::Full);
        CommunicationPanel panel(&doc);
        panel.show();
        const QAbstractItemModel *m = panel.model();
        const std::vector<Collective> &rows = doc.estimate().communication;
        QCOMPARE(m->rowCount(), int(rows.size()));
        QVERIFY(rows.size() >= 6);
        auto cell = [&](size_t row, int column, int role = Qt::DisplayRole) {
            return m->index(int(row), column).data(role).toString();
        };
        QSet<QString> groups;
        for (size_t i = 0; i < rows.size(); ++i) {
            const Collective &c = rows[i];
            groups.insert(QString::fromStdString(c.group));
            QCOMPARE(cell(i, CommunicationModel::NoteColumn), QString::fromStdString(c.note));
            QCOMPARE(cell(i, CommunicationModel::NoteColumn, Qt::ToolTipRole),
                     QString::fromStdString(c.note));
            QCOMPARE(cell(i, CommunicationModel::PhaseColumn),
                     ComponentStyle::phaseName(phaseFromKey(c.phase)));
            QVERIFY(!cell(i, CommunicationModel::PhaseColumn).contains(QLatin1Char('_')));
        }
        QVERIFY(groups.contains(QStringLiteral("tp")) && groups.contains(QStringLiteral("dp")));

        if (!availableLanguages().contains(QStringLiteral("zh_CN")))
            QSKIP("built without translations");
        QCOMPARE(setLanguage(QStringLiteral("zh_CN")), QStringLiteral("zh_CN"));
        for (size_t i = 0; i < rows.size(); ++i) {
            const Collective &c = rows[i];
            const QString note = cell(i, CommunicationModel::NoteColumn);
            QVERIFY2(hasCjk(note), qPrintable(note));
            QVERIFY(note != QString::fromStdString(c.note));
            QCOMPARE(note, translatedNote(c.note));
            QCOMPARE(cell(i, CommunicationModel::NoteColumn, Qt::ToolTipRole), note);
            const QString phase = cell(i, CommunicationModel::PhaseColumn);
            QVERIFY2(hasCjk(phase), qPrintable(phase));
            QCOMPARE(cell(i, CommunicationModel::CollectiveColumn),
                     QString::fromStdString(c.collective));
            const QString group = cell(i, CommunicationModel::GroupColumn);
            QVERIFY2(group.startsWith(QString::fromStdString(c.group)) && hasCjk(group),
                     qPrintable(group));
        }
    }

    /// Every collective's label is drawn whole, also with a font as tall as a CJK one (with a
    /// zh_CN locale at 1366x768 every label read "...").
    void chartLabelsAreNotElided()
    {
        CollectiveChartView view;
        QFont tall = view.font();
        tall.setPointSizeF(tall.pointSizeF() * 1.25); // a CJK face's line height
        view.chart()->axes(Qt::Vertical).first()->setLabelsFont(tall);
        std::vector<Collective> rows;
        for (const char *kind : {"all_gather", "reduce_scatter", "all_reduce", "all_to_all"})
            for (const char *group : {"dp", "tp"})
                rows.push_back(collective(kind, group, 0.1, 0.05));
        view.setCollectives(rows);
        view.resize(400, 150); // the dock's height at 1366x768; the panel scrolls instead
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QCoreApplication::processEvents();
        QStringList labels;
        for (QGraphicsItem *item : view.findChild<QChartView *>()->scene()->items())
            if (auto *text = dynamic_cast<QGraphicsTextItem *>(item); text && text->isVisible())
                labels << text->toPlainText();
        QVERIFY2(labels.contains(QStringLiteral("reduce_scatter dp")), qPrintable(labels.join(QLatin1Char('|'))));
        for (const QString &l : labels)
            QVERIFY2(!l.contains(QStringLiteral("...")), qPrintable(labels.join(QLatin1Char('|'))));
    }

    /// On a dark palette the bars are their fill only: no light outline, so a bar of zero
    /// length (nothing exposed) leaves nothing beside the axis.
    void chartBarsHaveNoOutline()
    {
        QPalette dark;
        const QColor base(0x1e, 0x1f, 0x22), text(0xe6, 0xe6, 0xe6);
        for (auto role : {QPalette::Window, QPalette::Button, QPalette::AlternateBase})
            dark.setColor(role, QColor(0x2b, 0x2d, 0x30));
        dark.setColor(QPalette::Base, base);
        for (auto role : {QPalette::Text, QPalette::WindowText, QPalette::ButtonText})
            dark.setColor(role, text);
        dark.setColor(QPalette::Mid, QColor(0x55, 0x57, 0x5c));
        CollectiveChartView view;
        view.setPalette(dark);
        view.resize(480, 320);
        view.setCollectives({collective("all_reduce", "dp", 0.3, 0.0),
                             collective("all_gather", "tp", 0.2, 0.1),
                             collective("send_recv", "cp", 0.25, 0.0)});
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        auto *chartView = view.findChild<QChartView *>();
        QVERIFY(chartView);
        const QImage image = chartView->grab().toImage();
        const qreal dpr = image.devicePixelRatio();
        // Inside the plot, right of the axis line: only the background, the grid and the fills.
        const QRect plot = view.chart()->plotArea().toAlignedRect();
        int light = 0;
        for (int y = int((plot.top() + 1) * dpr); y < int((plot.bottom() - 1) * dpr); ++y) {
            for (int x = int((plot.left() + 1) * dpr); x < int((plot.right() - 1) * dpr); ++x) {
                if (image.pixelColor(x, y).lightness() > 200)
                    ++light;
            }
        }
        QCOMPARE(light, 0);
        // The bars themselves are drawn.
        int fill = 0;
        for (int y = 0; y < image.height(); ++y) {
            for (int x = 0; x < image.width(); ++x)
                fill += image.pixelColor(x, y) == QColor(0xE1, 0x57, 0x59);
        }
        QVERIFY(fill > 20);
    }
};

QTEST_MAIN(TestCommunicationModel)
#include "tst_communicationmodel.moc"
