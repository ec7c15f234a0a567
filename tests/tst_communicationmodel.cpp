#include "widgets/communicationmodel.h"
#include "widgets/communicationpanel.h"
#include "widgets/plandocument.h"

#include "core/catalog.h"

#include <QAbstractItemModelTester>
#include <QTest>

using namespace shardscope;

class TestCommunicationModel : public QObject
{
    Q_OBJECT

private Q_SLOTS:
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
};

QTEST_MAIN(TestCommunicationModel)
#include "tst_communicationmodel.moc"
