// File > Export > PDF report: the open plan and the pinned plans through the one renderer.
#include "core/catalog.h"
#include "widgets/comparepanel.h"
#include "widgets/mainwindow.h"
#include "widgets/plandocument.h"
#include "widgets/reportexport.h"

#include <QProcess>
#include <QUndoStack>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

using namespace shardscope;

class TestReportExport : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void exportsOpenAndPinnedPlans()
    {
        if (QStandardPaths::findExecutable(QStringLiteral("pdftotext")).isEmpty())
            QSKIP("pdftotext (poppler-utils) not installed");
        MainWindow window;
        QVERIFY(window.openPlan(QString::fromStdString(Catalog::builtin().dataDir()) +
                                QStringLiteral("/cases/hcie-ai-fsdp.plan.json")));
        QTemporaryDir dir;
        const QString one = dir.filePath(QStringLiteral("one.pdf"));
        QString error;
        QVERIFY2(ReportExport::exportTo(window, one, QPageSize::A4, &error), qPrintable(error));

        QProcess p;
        p.start(QStringLiteral("pdftotext"), {one, QStringLiteral("-")});
        QVERIFY(p.waitForFinished(30000));
        QString text = QString::fromUtf8(p.readAllStandardOutput()).simplified();
        // Titled by what the plan is; the name it was opened with beneath, as a name.
        QVERIFY2(text.contains(QStringLiteral("FSDP (ZeRO-3) dp 8")), qPrintable(text.left(300)));
        QVERIFY(text.contains(QString::fromStdString(window.document()->plan().name)));
        QVERIFY(!text.contains(QStringLiteral("Comparison of")));

        // Edited, the title follows the plan and says it was edited.
        Plan edited = window.document()->plan();
        edited.parallel.sharding = Sharding::Grads;
        QVERIFY(window.document()->apply(edited, QStringLiteral("edit")));
        QVERIFY2(ReportExport::exportTo(window, one, QPageSize::A4, &error), qPrintable(error));
        p.start(QStringLiteral("pdftotext"), {one, QStringLiteral("-")});
        QVERIFY(p.waitForFinished(30000));
        text = QString::fromUtf8(p.readAllStandardOutput()).simplified();
        QVERIFY2(text.contains(QStringLiteral("ZeRO-2 dp 8")) &&
                     text.contains(QStringLiteral("hcie-ai-fsdp.plan.json, edited")),
                 qPrintable(text.left(400)));
        window.document()->undoStack()->undo();

        // With the five case plans pinned, the current one is not repeated: five plans.
        QVERIFY(window.comparePanel()->pinCases() > 0);
        const QString five = dir.filePath(QStringLiteral("five.pdf"));
        QVERIFY2(ReportExport::exportTo(window, five, QPageSize::Letter, &error),
                 qPrintable(error));
        p.start(QStringLiteral("pdftotext"), {five, QStringLiteral("-")});
        QVERIFY(p.waitForFinished(30000));
        text = QString::fromUtf8(p.readAllStandardOutput()).simplified();
        QVERIFY2(text.contains(QStringLiteral("Comparison of 5 plans")),
                 qPrintable(text.left(300)));

        QVERIFY(!ReportExport::exportTo(window, QStringLiteral("/no/such/dir/x.pdf"), QPageSize::A4,
                                        &error));
        QVERIFY(!error.isEmpty());
    }
};

QTEST_MAIN(TestReportExport)
#include "tst_reportexport.moc"
