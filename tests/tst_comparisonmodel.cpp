#include "widgets/comparepanel.h"
#include "widgets/comparisonmodel.h"
#include "widgets/memorychartview.h"
#include "widgets/plandocument.h"

#include "core/catalog.h"
#include "core/units.h"

#include <QAbstractItemModelTester>
#include <QTest>
#include <QUndoStack>

using namespace shardscope;

class TestComparisonModel : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void pinsUpToFourPlans()
    {
        PlanDocument doc(Catalog::builtin());
        QVERIFY(doc.loadAsUntitled(QString::fromStdString(locateDataDir()) +
                                       QStringLiteral("/cases/hcie-ai-ddp.plan.json"),
                                   nullptr));
        ComparePanel panel(&doc);
        ComparisonModel *model = panel.model();
        QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(panel.pinCases(), 4);
        QCOMPARE(model->rowCount(), 4);
        QCOMPARE(model->columnCount(), int(ComparisonModel::ColumnCount));
        QVERIFY(!panel.pinCurrent());
        QCOMPARE(model->index(0, ComparisonModel::LayoutColumn).data().toString(), QStringLiteral("DDP8"));
        QCOMPARE(model->index(1, ComparisonModel::LayoutColumn).data().toString(), QStringLiteral("FSDP8"));
        QCOMPARE(model->index(3, ComparisonModel::LayoutColumn).data().toString(), QStringLiteral("TP4+SP x FSDP2"));

        // The bars are the worst rank of each pinned plan, as the engine computed it.
        for (int i = 0; i < 4; ++i) {
            const PinnedPlan &p = model->plans()[size_t(i)];
            const RankMemory *worst = ComparisonModel::worstRank(p.estimate);
            QVERIFY(worst);
            QCOMPARE(model->index(i, ComparisonModel::RequiredColumn).data(ComparisonModel::SortRole).toDouble(),
                     worst->peak_bytes + worst->reserve.total());
            for (int c = 0; c < kComponentCount; ++c)
                QCOMPARE(panel.chartView()->segmentValue(c, i), worst->peak().bytes[size_t(c)] / kGiB);
        }
        // DDP does not fit, the others are compared against it.
        QCOMPARE(model->index(0, ComparisonModel::FitsColumn).data(ComparisonModel::SortRole).toBool(), false);

        model->unpin(0);
        QCOMPARE(model->rowCount(), 3);
        QCOMPARE(panel.chartView()->barCount(), 3);
        QVERIFY(panel.pinCurrent());
        QCOMPARE(model->rowCount(), 4);

        // Making a pinned plan current is an undoable edit.
        panel.loadPinned(0);
        QVERIFY(doc.plan().parallel.sharding == Sharding::Full);
        QCOMPARE(doc.undoStack()->count(), 1);
        model->clear();
        QCOMPARE(model->rowCount(), 0);
    }

    // Pinned plans are told apart by what they are, not by the name they were opened with:
    // the case edited to FSDP is not "DDP (the attempt that OOMs)" a second time.
    void pinnedPlansAreToldApart()
    {
        PlanDocument doc(Catalog::builtin());
        QVERIFY(doc.loadAsUntitled(QString::fromStdString(locateDataDir()) +
                                       QStringLiteral("/cases/hcie-ai-ddp.plan.json"),
                                   nullptr));
        ComparePanel panel(&doc);
        ComparisonModel *model = panel.model();
        QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(panel.pinCurrent());
        Plan p = doc.plan();
        p.parallel.sharding = Sharding::Full;
        QVERIFY(doc.apply(p, QStringLiteral("edit")));
        QVERIFY(panel.pinCurrent());
        const QString a = model->index(0, ComparisonModel::PlanColumn).data().toString();
        const QString b = model->index(1, ComparisonModel::PlanColumn).data().toString();
        QVERIFY2(a.endsWith(QStringLiteral("DDP dp 8")), qPrintable(a));
        QVERIFY2(b.endsWith(QStringLiteral("FSDP (ZeRO-3) dp 8 (edited)")), qPrintable(b));
        // The user's name stays, as a name, in its own column.
        QCOMPARE(model->index(1, ComparisonModel::NameColumn).data().toString(), QString::fromStdString(p.name));
        QVERIFY(model->title(1).startsWith(QStringLiteral("B: Llama 2 7B")));
    }
};

QTEST_MAIN(TestComparisonModel)
#include "tst_comparisonmodel.moc"
