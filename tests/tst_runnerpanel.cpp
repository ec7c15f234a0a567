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
#include <QProgressBar>
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

    // Kernels run on the CPU against a plan on an H200 (or a 910B): the table says that the
    // predictions are for the plan's device, and marks the ratio as one between two devices.
    void ratioOnAnotherDeviceIsSaid()
    {
        RunnerResultsModel model;
        const Plan plan = testing::tinyRunnerPlan();
        const DeviceProfile *device = Catalog::builtin().device(plan.cluster.device);
        QVERIFY(device);
        const QString name = QString::fromStdString(device->name);
        RunResults r;
        r.kernels = buildWorkload(plan, {}, &Catalog::builtin()).kernels;
        r.info.backend = "cpu";
        r.info.device = "cpu";
        model.setResults(r, device, &plan);
        QVERIFY(model.crossDevice());
        QCOMPARE(model.headerData(RunnerResultsModel::Predicted, Qt::Horizontal).toString(),
                 QStringLiteral("Predicted, %1").arg(name));
        QCOMPARE(model.headerData(RunnerResultsModel::Ratio, Qt::Horizontal).toString(),
                 QStringLiteral("Ratio (other device)"));
        QVERIFY(model.crossDeviceNote().contains(name));
        QVERIFY(model.index(0, RunnerResultsModel::Ratio).data(Qt::ToolTipRole).toString().contains(name));

        // The same device under another spelling is no other device.
        r.info.device = "cuda";
        r.info.device_name = "NVIDIA H200";
        model.setResults(r, device, &plan);
        QVERIFY2(!model.crossDevice(), qPrintable(name));
        QCOMPARE(model.headerData(RunnerResultsModel::Ratio, Qt::Horizontal).toString(), QStringLiteral("Ratio"));
        r.info.device_name = "NVIDIA A100-SXM4-80GB";
        model.setResults(r, device, &plan);
        QVERIFY(model.crossDevice());
    }

    // A long run says how long it has left, from the pace of the items done so far.
    void remainingTime_data()
    {
        QTest::addColumn<qint64>("elapsedMs");
        QTest::addColumn<int>("done");
        QTest::addColumn<int>("total");
        QTest::addColumn<QString>("text");
        QTest::addRow("before the first") << qint64(5000) << 0 << 10 << QString();
        QTest::addRow("seconds") << qint64(10000) << 1 << 4 << QStringLiteral("about 30 s left");
        QTest::addRow("minutes") << qint64(60000) << 3 << 10 << QStringLiteral("about 2 min 20 s left");
        QTest::addRow("hours") << qint64(3600000) << 1 << 3 << QStringLiteral("about 2 h 0 min left");
        QTest::addRow("done") << qint64(10000) << 4 << 4 << QString();
    }
    void remainingTime()
    {
        QFETCH(qint64, elapsedMs);
        QFETCH(int, done);
        QFETCH(int, total);
        QFETCH(QString, text);
        QCOMPARE(RunnerPanel::remainingText(elapsedMs, done, total), text);
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
        // The progress bar gives the time left while the kernels run.
        auto *progress = panel.findChild<QProgressBar *>();
        QVERIFY(progress);
        QStringList texts;
        connect(progress, &QProgressBar::valueChanged, &panel, [&] { texts << progress->text(); });
        panel.run();
        QVERIFY(panel.isRunning());
        // On the CPU against the plan's H200: said from the start.
        QVERIFY2(panel.deviceNote().contains(QStringLiteral("H200")), qPrintable(panel.deviceNote()));
        QVERIFY(finished.wait(60000));
        QVERIFY(!panel.isRunning());
        QVERIFY2(panel.deviceNote().contains(QStringLiteral("H200")), qPrintable(panel.deviceNote()));
        QVERIFY2(texts.filter(QStringLiteral(" left")).size() > 0, qPrintable(texts.join(QLatin1Char('|'))));
        const RunResults &r = panel.model()->results();
        QVERIFY(!r.kernels.empty());
        int ok = 0;
        for (const KernelMeasurement &m : r.measurements)
            ok += m.ok() ? 1 : 0;
        QVERIFY(ok > 0);
        const nlohmann::json profile = panel.calibratedProfile();
        QVERIFY(profile.contains("calibration"));
        QVERIFY(deviceFromJson(profile).calibration.present);

        // The window rebuilt for another language keeps the results, and what they calibrate.
        RunnerPanel rebuilt;
        QVERIFY(rebuilt.model()->results().kernels.empty());
        rebuilt.adoptResults(panel);
        QCOMPARE(rebuilt.model()->rowCount(), panel.model()->rowCount());
        QCOMPARE(rebuilt.model()->results().measurements.size(), r.measurements.size());
        QCOMPARE(rebuilt.calibratedProfile().dump(), profile.dump());
        QVERIFY2(rebuilt.deviceNote().contains(QStringLiteral("H200")), qPrintable(rebuilt.deviceNote()));
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
