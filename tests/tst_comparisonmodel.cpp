#include "widgets/comparepanel.h"
#include "widgets/comparisonmodel.h"
#include "widgets/mainwindow.h"
#include "widgets/memorychartview.h"
#include "widgets/plandocument.h"

#include "core/catalog.h"
#include "core/files.h"
#include "core/units.h"

#include <QAbstractItemModelTester>
#include <QDir>
#include <QHeaderView>
#include <QLineSeries>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>
#include <nlohmann/json.hpp>
#include <set>

using namespace shardscope;

namespace {

QString casesDir()
{
    return QString::fromStdString(locateDataDir()) + QStringLiteral("/cases");
}

int caseCount()
{
    return int(QDir(casesDir()).entryList({QStringLiteral("hcie-ai-*.plan.json")}, QDir::Files).size());
}

bool loadCase(PlanDocument &doc, const char *name)
{
    return doc.loadAsUntitled(casesDir() + QLatin1Char('/') + QLatin1String(name) + QStringLiteral(".plan.json"),
                              nullptr);
}

} // namespace

class TestComparisonModel : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void pinsPlans()
    {
        PlanDocument doc(Catalog::builtin());
        QVERIFY(loadCase(doc, "hcie-ai-ddp"));
        ComparePanel panel(&doc);
        ComparisonModel *model = panel.model();
        QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        // Every HCIE-AI case, not four of the five.
        QCOMPARE(caseCount(), 5);
        QCOMPARE(panel.pinCases(), caseCount());
        QCOMPARE(model->rowCount(), caseCount());
        QCOMPARE(model->columnCount(), int(ComparisonModel::ColumnCount));
        // The current plan (the DDP case) is pinned already.
        QVERIFY(!panel.pinCurrent());
        QVERIFY(model->index(0, ComparisonModel::PlanColumn).data().toString().endsWith(QStringLiteral("DDP dp 8")));
        QVERIFY(model->index(1, ComparisonModel::PlanColumn).data().toString().endsWith(QStringLiteral("FSDP (ZeRO-3) dp 8")));

        // The bars are the worst rank of each pinned plan, as the engine computed it.
        for (int i = 0; i < caseCount(); ++i) {
            const PinnedPlan &p = model->plans()[size_t(i)];
            const RankMemory *worst = worstRank(p.estimate.memory);
            QVERIFY(worst);
            QCOMPARE(model->index(i, ComparisonModel::RequiredColumn).data(ComparisonModel::SortRole).toDouble(),
                     worst->peak_bytes + worst->reserve.total());
            for (int c = 0; c < kComponentCount; ++c)
                QCOMPARE(panel.chartView()->segmentValue(c, i), worst->peak().bytes[size_t(c)] / kGiB);
        }
        // DDP does not fit, the others are compared against it.
        QCOMPARE(model->index(0, ComparisonModel::FitsColumn).data(ComparisonModel::SortRole).toBool(), false);

        model->unpin(0);
        QCOMPARE(model->rowCount(), caseCount() - 1);
        QCOMPARE(panel.chartView()->barCount(), caseCount() - 1);
        QVERIFY(panel.pinCurrent());
        QCOMPARE(model->rowCount(), caseCount());

        // Making a pinned plan current is an undoable edit.
        panel.loadPinned(0);
        QVERIFY(doc.plan().parallel.sharding == Sharding::Full);
        QCOMPARE(doc.undoStack()->count(), 1);
        model->clear();
        QCOMPARE(model->rowCount(), 0);
    }

    // The user's pins are not replaced without asking: Cancel keeps them, Add adds the cases
    // after them, Replace replaces them.
    void casesAskBeforeReplacingPins()
    {
        PlanDocument doc(Catalog::builtin());
        QVERIFY(loadCase(doc, "hcie-ai-ddp"));
        Plan mine = doc.plan();
        mine.training.seq_len = 16384;
        QVERIFY(doc.apply(mine, QStringLiteral("edit")));
        ComparePanel panel(&doc);
        ComparisonModel *model = panel.model();
        QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(panel.pinCurrent());

        int asked = -1;
        ComparePanel::Answer answer = ComparePanel::Answer::Cancel;
        panel.setReplacePrompt([&](int pinned) {
            asked = pinned;
            return answer;
        });
        QCOMPARE(panel.pinCases(), 0);
        QCOMPARE(asked, 1);
        QCOMPARE(model->rowCount(), 1);
        QCOMPARE(model->plans().front().plan.training.seq_len, int64_t(16384));

        answer = ComparePanel::Answer::Add;
        QCOMPARE(panel.pinCases(), caseCount());
        QCOMPARE(model->rowCount(), 1 + caseCount());
        QCOMPARE(model->plans().front().plan.training.seq_len, int64_t(16384));
        // Asked again, the cases pinned already are not pinned twice.
        QCOMPARE(panel.pinCases(), 0);
        QCOMPARE(model->rowCount(), 1 + caseCount());

        answer = ComparePanel::Answer::Replace;
        QCOMPARE(panel.pinCases(), caseCount());
        QCOMPARE(model->rowCount(), caseCount());
        QCOMPARE(model->plans().front().plan.training.seq_len, int64_t(32768));
    }

    // Each bar is drawn against its own plan's usable line (HBM minus that plan's runtime
    // reserve), not plan A's.
    void chartDrawsEachPlansUsableLine()
    {
        PlanDocument doc(Catalog::builtin());
        QVERIFY(loadCase(doc, "hcie-ai-ddp"));
        ComparePanel panel(&doc);
        QCOMPARE(panel.pinCases(), caseCount());
        std::set<double> usable;
        for (int i = 0; i < caseCount(); ++i) {
            const MemoryEstimate &m = panel.model()->plans()[size_t(i)].estimate.memory;
            QCOMPARE(panel.chartView()->usableAt(i), m.usable_bytes / kGiB);
            QCOMPARE(panel.chartView()->capacityAt(i), m.hbm_bytes / kGiB);
            usable.insert(m.usable_bytes);
        }
        QVERIFY2(usable.size() > 1, "the cases' usable lines should differ");
        // The line steps from bar to bar: over bar i it lies at plan i's value.
        const QList<QPointF> points = panel.chartView()->usableSeries()->points();
        QCOMPARE(points.size(), 2 * caseCount());
        for (int i = 0; i < caseCount(); ++i)
            QCOMPARE(points.at(2 * i).y(), panel.chartView()->usableAt(i));
    }

    // At 1366x768 the key figures of every pinned plan are on screen, not past long names.
    void keyFiguresNeedNoScrolling()
    {
        MainWindow w;
        w.resize(1366, 768);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.showTab(QStringLiteral("Compare")));
        QCOMPARE(w.comparePanel()->pinCases(ComparePanel::PinMode::Replace), caseCount());
        QCoreApplication::processEvents();
        QTableView *table = w.comparePanel()->table();
        QVERIFY(table->isVisible());
        if (const QByteArray out = qgetenv("SHARDSCOPE_SCREENSHOT_DIR"); !out.isEmpty())
            w.grab().save(QString::fromLocal8Bit(out) + QStringLiteral("/compare-1366x768.png"));
        const int width = table->viewport()->width();
        for (int c : {ComparisonModel::RequiredColumn, ComparisonModel::FitsColumn,
                      ComparisonModel::StepTimeColumn, ComparisonModel::TokensColumn,
                      ComparisonModel::MfuColumn}) {
            const int right = table->horizontalHeader()->sectionViewportPosition(c) +
                              table->horizontalHeader()->sectionSize(c);
            QVERIFY2(right <= width, qPrintable(QStringLiteral("column %1 ends at %2 of %3").arg(c).arg(right).arg(width)));
        }
        // How each plan differs from the baseline comes next, then what it is (elided where it is
        // long; the tooltip says all of it).
        QVERIFY(table->horizontalHeader()->sectionViewportPosition(ComparisonModel::DifferenceColumn) < width);
        QVERIFY(table->model()->index(0, ComparisonModel::PlanColumn).data(Qt::ToolTipRole).toString().startsWith(QStringLiteral("A: Llama 2 7B")));
        w.autosave()->finish();
    }

    void differencesAgainstTheBaseline()
    {
        PlanDocument doc(Catalog::builtin());
        QVERIFY(loadCase(doc, "hcie-ai-ddp"));
        ComparePanel panel(&doc);
        ComparisonModel *model = panel.model();
        QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(panel.pinCases(), caseCount());
        // The first plan pinned (DDP, the one that runs out of memory) is the baseline.
        QCOMPARE(model->baseline(), 0);
        auto text = [model](int row, int column) { return model->index(row, column).data().toString(); };
        QCOMPARE(text(0, ComparisonModel::DifferenceColumn), QStringLiteral("baseline"));
        QCOMPARE(text(1, ComparisonModel::DifferenceColumn), QStringLiteral("sharding FSDP (ZeRO-3)"));
        // FSDP needs less per rank than DDP: the figure carries its difference.
        QVERIFY2(text(1, ComparisonModel::RequiredColumn).contains(QStringLiteral("(\u2212")),
                 qPrintable(text(1, ComparisonModel::RequiredColumn)));
        QVERIFY(!text(0, ComparisonModel::RequiredColumn).contains(QLatin1Char('(')));

        model->setBaseline(1);
        QCOMPARE(text(0, ComparisonModel::DifferenceColumn), QStringLiteral("sharding DDP"));
        QVERIFY(text(0, ComparisonModel::RequiredColumn).contains(QStringLiteral("(+")));
        // Unpinning the baseline falls back to the first plan.
        model->unpin(1);
        QCOMPARE(model->baseline(), 0);
        model->setBaseline(-1);
        QVERIFY(text(1, ComparisonModel::DifferenceColumn).isEmpty());
        QVERIFY(!text(1, ComparisonModel::RequiredColumn).contains(QLatin1Char('(')));
    }

    void savesAndOpensAComparison()
    {
        PlanDocument doc(Catalog::builtin());
        QVERIFY(loadCase(doc, "hcie-ai-ddp"));
        Plan mine = doc.plan();
        mine.training.micro_batch = 2;
        QVERIFY(doc.apply(mine, QStringLiteral("edit")));
        ComparePanel panel(&doc);
        panel.setReplacePrompt([](int) { return ComparePanel::Answer::Replace; });
        ComparisonModel *model = panel.model();
        QVERIFY(panel.pinCurrent());
        QCOMPARE(panel.pinCases(ComparePanel::PinMode::Add), caseCount());
        model->setBaseline(2);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("mine.json"));
        QVERIFY2(panel.saveComparison(path), qPrintable(panel.lastMessage()));
        const std::vector<PinnedPlan> saved = model->plans();

        model->clear();
        QVERIFY2(panel.openComparison(path), qPrintable(panel.lastMessage()));
        QCOMPARE(model->rowCount(), int(saved.size()));
        QCOMPARE(model->baseline(), 2);
        for (size_t i = 0; i < saved.size(); ++i) {
            QVERIFY(planToJson(model->plans()[i].plan) == planToJson(saved[i].plan));
            QCOMPARE(model->plans()[i].edited, saved[i].edited);
            QCOMPARE(model->plans()[i].description, saved[i].description);
        }
        QVERIFY(model->plans().front().edited);

        // A bad file is refused naming the file, the plan and the field; the pins stay.
        nlohmann::json j = nlohmann::json::parse(readTextFile(path.toStdString()));
        j["plans"][1]["plan"]["parallel"]["tp"] = 3;
        const QString bad = dir.filePath(QStringLiteral("bad.json"));
        writeFileAtomically(bad.toStdString(), j.dump());
        QVERIFY(!panel.openComparison(bad));
        QVERIFY2(panel.lastMessage().contains(QStringLiteral("bad.json")) &&
                     panel.lastMessage().contains(QStringLiteral("plans[1].plan.parallel")),
                 qPrintable(panel.lastMessage()));
        QCOMPARE(model->rowCount(), int(saved.size()));

        // A plan file is not a comparison.
        QVERIFY(!panel.openComparison(casesDir() + QStringLiteral("/hcie-ai-fsdp.plan.json")));
        QVERIFY2(panel.lastMessage().contains(QStringLiteral("format")), qPrintable(panel.lastMessage()));
        writeFileAtomically(bad.toStdString(), "{\"format\": \"shardscope-comparison\", \"version\": 1, \"plans\": [");
        QVERIFY(!panel.openComparison(bad));
        QVERIFY2(panel.lastMessage().contains(QStringLiteral("bad.json")), qPrintable(panel.lastMessage()));
        QCOMPARE(model->rowCount(), int(saved.size()));
    }
};

QTEST_MAIN(TestComparisonModel)
#include "tst_comparisonmodel.moc"
