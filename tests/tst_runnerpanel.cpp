// The runner panel: its results model under QAbstractItemModelTester, a run on the native CPU
// backend that fills the table, and a cancel that keeps what was measured.
#include "core/catalog.h"
#include "core/measurement.h"
#include "core/workload.h"
#include "widgets/runnerpanel.h"
#include "widgets/runnerresultsmodel.h"
#include "testdata.h"

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QPushButton>
#include <QSignalSpy>
#include <QTest>

using namespace shardscope;

class TestRunnerPanel : public QObject
{
    Q_OBJECT

private slots:
    void modelColumns_data()
    {
        QTest::addColumn<int>("column");
        QTest::addColumn<QString>("header");
        QTest::addRow("name") << int(RunnerResultsModel::Name) << "Kernel";
        QTest::addRow("predicted") << int(RunnerResultsModel::Predicted) << "Predicted";
        QTest::addRow("ratio") << int(RunnerResultsModel::Ratio) << "Ratio";
    }
    void modelColumns()
    {
        QFETCH(int, column);
        QFETCH(QString, header);
        RunnerResultsModel model;
        QCOMPARE(model.columnCount(), int(RunnerResultsModel::ColumnCount));
        QCOMPARE(model.headerData(column, Qt::Horizontal).toString(), header);
    }

    void modelUnderTester()
    {
        RunnerResultsModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        const Plan plan = testing::tinyRunnerPlan();
        const Workload w = buildWorkload(plan, {}, &Catalog::builtin());
        RunResults r;
        r.kernels = w.kernels;
        model.setResults(r, Catalog::builtin().device(plan.cluster.device), &plan);
        QCOMPARE(model.rowCount(), int(w.kernels.size()));
        QCOMPARE(model.index(0, RunnerResultsModel::Status).data().toString(),
                 QStringLiteral("pending"));
        QVERIFY(model.index(0, RunnerResultsModel::Predicted)
                    .data(RunnerResultsModel::SortRole)
                    .toDouble() > 0);
        KernelMeasurement m;
        m.name = w.kernels[0].name;
        m.time_s = 1e-3;
        m.flops_per_s = w.kernels[0].flops / m.time_s;
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        model.updateKernel(0, m);
        QCOMPARE(changed.count(), 1);
        QCOMPARE(model.index(0, RunnerResultsModel::Status).data().toString(),
                 QStringLiteral("ok"));
        QVERIFY(model.index(0, RunnerResultsModel::Ratio)
                    .data(RunnerResultsModel::SortRole)
                    .toDouble() > 0);
        model.updateKernel(999, m); // out of range: ignored
        model.setResults({}, nullptr, nullptr);
        QCOMPARE(model.rowCount(), 0);
    }

    void runOnCpu()
    {
        RunnerPanel panel;
        QAbstractItemModelTester tester(panel.model(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        auto *run = panel.findChild<QPushButton *>();
        QVERIFY(run);
        QVERIFY(!run->isEnabled()); // no plan yet
        panel.setPlan(testing::tinyRunnerPlan());
        RunOptions o = panel.options();
        o.backend = QStringLiteral("cpu");
        panel.setOptions(o);
        QSignalSpy finished(&panel, &RunnerPanel::runFinished);
        panel.run();
        QVERIFY(panel.isRunning());
        QVERIFY(finished.wait(60000));
        QVERIFY(!panel.isRunning());
        const RunResults &r = panel.model()->results();
        QVERIFY(!r.kernels.empty());
        int ok = 0;
        for (const KernelMeasurement &m : r.measurements)
            ok += m.ok() ? 1 : 0;
        QVERIFY(ok > 0);
        const nlohmann::json profile = panel.calibratedProfile();
        QVERIFY(profile.contains("calibration"));
        QVERIFY(deviceFromJson(profile).calibration.present);
    }

    void cancelKeepsResults()
    {
        RunnerPanel panel;
        panel.setPlan(testing::tinyRunnerPlan());
        QSignalSpy failed(&panel, &RunnerPanel::runFailed);
        QSignalSpy finished(&panel, &RunnerPanel::runFinished);
        panel.run();
        panel.cancel();
        QTRY_VERIFY_WITH_TIMEOUT(failed.count() + finished.count() == 1, 60000);
        if (failed.count())
            QCOMPARE(failed.first().at(0).toString(), QStringLiteral("cancelled"));
        QVERIFY(!panel.isRunning());
        QCOMPARE(panel.model()->rowCount(), int(panel.model()->results().kernels.size()));
    }
};

QTEST_MAIN(TestRunnerPanel)
#include "tst_runnerpanel.moc"
