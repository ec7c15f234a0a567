#include "widgets/autosave.h"
#include "widgets/plandocument.h"
#include "widgets/settingsstore.h"
#include "widgets/settingvalue.h"

#include "core/catalog.h"
#include "testdata.h"

#include <QDir>
#include <QFile>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

using namespace shardscope;

class TestPlanDocument : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("ShardScopeTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_plandocument"));
        QDir(Autosave::directory()).removeRecursively();
    }

    // Saving on a full disk (an injected file size limit) reports the failure and leaves the
    // previous file whole. QSaveFile on Qt 6.4 committed a truncated file and said it saved.
    void failedSaveKeepsThePreviousFile()
    {
        PlanDocument doc(Catalog::builtin());
        QString error;
        QVERIFY(doc.loadAsUntitled(testing::casePath("hcie-ai-ddp"), &error));
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("p.plan.json"));
        QVERIFY(doc.saveAs(path, &error));
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray saved = f.readAll();
        f.close();
        Plan p = doc.plan();
        p.parallel.sharding = Sharding::Full;
        QVERIFY(doc.apply(p, QStringLiteral("FSDP")));
        {
            testing::FileSizeLimit limit(256);
            QVERIFY(limit.active());
            QVERIFY(!doc.save(&error));
        }
        QVERIFY2(error.contains(path) && error.contains(QStringLiteral("unchanged")), qPrintable(error));
        QVERIFY(doc.isModified());
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll(), saved);
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden).size(), 1);
    }

    // An autosave that cannot be written says so (the window shows it in the status bar) and
    // keeps the previous copy.
    void failedAutosaveIsReported()
    {
        PlanDocument doc(Catalog::builtin());
        QString error;
        QVERIFY(doc.loadAsUntitled(testing::casePath("hcie-ai-ddp"), &error));
        Autosave autosave(&doc);
        Plan p = doc.plan();
        p.training.micro_batch = 2;
        QVERIFY(doc.apply(p, QStringLiteral("edit")));
        autosave.saveNow();
        QFile copy(autosave.planPath());
        QVERIFY(copy.open(QIODevice::ReadOnly));
        const QByteArray first = copy.readAll();
        copy.close();
        p.training.micro_batch = 4;
        QVERIFY(doc.apply(p, QStringLiteral("edit")));
        QSignalSpy failed(&autosave, &Autosave::saveFailed);
        {
            testing::FileSizeLimit limit(64);
            QVERIFY(limit.active());
            autosave.saveNow();
        }
        QCOMPARE(failed.count(), 1);
        QVERIFY(failed.at(0).at(0).toString().contains(autosave.planPath()));
        QVERIFY(copy.open(QIODevice::ReadOnly));
        QCOMPARE(copy.readAll(), first);
        autosave.finish();
    }

    // The settings store: a write that fails (an injected file size limit) is reported and
    // leaves the previous settings whole; what was written reads back.
    void failedSettingsWriteKeepsThePreviousSettings()
    {
        useSettingsStore();
        const SettingValue<QStringList> recent(QStringLiteral("test/recent"));
        const QStringList before{QStringLiteral("/a.plan.json"), QStringLiteral("/b.plan.json")};
        QVERIFY(recent.set(before));
        QCOMPARE(recent.get(), before);
        const QString file = QSettings().fileName();
        auto bytes = [&file] {
            QFile f(file);
            return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
        };
        const QByteArray stored = bytes();
        QVERIFY(!stored.isEmpty());
        {
            testing::FileSizeLimit limit(64);
            QVERIFY(limit.active());
            QStringList big;
            for (int i = 0; i < 200; ++i)
                big << QStringLiteral("/a/long/path/to/a/plan/file/number/%1.plan.json").arg(i);
            QVERIFY(!recent.set(big));
        }
        // The file on disk is the previous one, byte for byte.
        QCOMPARE(bytes(), stored);
        recent.set(before);
        recent.remove();
    }

    void validEditIsUndoable()
    {
        PlanDocument doc(Catalog::builtin());
        QString error;
        QVERIFY2(doc.loadAsUntitled(testing::casePath("hcie-ai-ddp"), &error), qPrintable(error));
        QVERIFY(!doc.isModified());
        const double before = doc.estimate().memory.peak_bytes;
        QSignalSpy changed(&doc, &PlanDocument::planChanged);

        Plan p = doc.plan();
        p.parallel.sharding = Sharding::Full;
        QVERIFY(doc.apply(p, QStringLiteral("FSDP")));
        QCOMPARE(changed.count(), 1);
        QVERIFY(doc.plan().parallel.sharding == Sharding::Full);
        QVERIFY(doc.estimate().memory.peak_bytes < before);
        QVERIFY(doc.isModified());
        QCOMPARE(doc.undoStack()->count(), 1);

        doc.undoStack()->undo();
        QVERIFY(doc.plan().parallel.sharding == Sharding::None);
        QCOMPARE(doc.estimate().memory.peak_bytes, before);
        QVERIFY(!doc.isModified());
        doc.undoStack()->redo();
        QVERIFY(doc.plan().parallel.sharding == Sharding::Full);
    }

    void invalidEditIsRefusedWithReason_data()
    {
        QTest::addColumn<int>("tp");
        QTest::addColumn<int>("dp");
        QTest::addColumn<QString>("field");
        QTest::addRow("world size") << 2 << 8 << QStringLiteral("parallel:");
        QTest::addRow("tp not dividing heads") << 3 << 1 << QStringLiteral("parallel");
    }
    void invalidEditIsRefusedWithReason()
    {
        QFETCH(int, tp);
        QFETCH(int, dp);
        QFETCH(QString, field);
        PlanDocument doc(Catalog::builtin());
        QVERIFY(doc.loadAsUntitled(testing::casePath("hcie-ai-ddp"), nullptr));
        QSignalSpy refused(&doc, &PlanDocument::editRefused);
        Plan p = doc.plan();
        p.parallel.tp = tp;
        p.parallel.dp = dp;
        QVERIFY(!doc.apply(p, QStringLiteral("bad")));
        QCOMPARE(refused.count(), 1);
        const QString reason = refused.first().first().toString();
        QVERIFY2(reason.startsWith(field), qPrintable(reason));
        QCOMPARE(doc.plan().parallel.tp, 1);
        QCOMPARE(doc.undoStack()->count(), 0);
    }

    void interactionMergesIntoOneStep()
    {
        PlanDocument doc(Catalog::builtin());
        QVERIFY(doc.loadAsUntitled(testing::casePath("hcie-ai-ddp"), nullptr));
        doc.beginInteraction();
        for (int64_t s : {1024, 2048, 4096, 8192}) {
            Plan p = doc.plan();
            p.training.seq_len = s;
            QVERIFY(doc.apply(p, QStringLiteral("seq"), EditId::SequenceLength));
        }
        doc.endInteraction();
        QCOMPARE(doc.undoStack()->count(), 1);
        QCOMPARE(doc.plan().training.seq_len, int64_t(8192));
        // Outside an interaction, edits are separate steps.
        for (int64_t s : {4096, 2048}) {
            Plan p = doc.plan();
            p.training.seq_len = s;
            QVERIFY(doc.apply(p, QStringLiteral("seq"), EditId::SequenceLength));
        }
        QCOMPARE(doc.undoStack()->count(), 3);
        doc.undoStack()->undo();
        doc.undoStack()->undo();
        doc.undoStack()->undo();
        QCOMPARE(doc.plan().training.seq_len, int64_t(32768));
    }

    void saveLoadRoundTrip()
    {
        QTemporaryDir dir;
        PlanDocument doc(Catalog::builtin());
        QVERIFY(doc.loadAsUntitled(testing::casePath("hcie-ai-tp4-fsdp2"), nullptr));
        Plan p = doc.plan();
        p.training.micro_batch = 2;
        p.memory.offload.optimizer = true;
        QVERIFY(doc.apply(p, QStringLiteral("edit")));
        const QString path = dir.filePath(QStringLiteral("x.plan.json"));
        QString error;
        QVERIFY2(doc.saveAs(path, &error), qPrintable(error));
        QVERIFY(!doc.isModified());
        QCOMPARE(doc.filePath(), path);

        PlanDocument other(Catalog::builtin());
        QVERIFY2(other.load(path, &error), qPrintable(error));
        QVERIFY(planToJson(other.plan()) == planToJson(doc.plan()));
        QCOMPARE(other.estimate().memory.peak_bytes, doc.estimate().memory.peak_bytes);
        QVERIFY(!other.isModified());
    }

    void saveIsAtomic()
    {
        QTemporaryDir dir;
        PlanDocument doc(Catalog::builtin());
        QVERIFY(doc.loadAsUntitled(testing::casePath("hcie-ai-ddp"), nullptr));
        const QString path = dir.filePath(QStringLiteral("keep.plan.json"));
        QVERIFY(doc.saveAs(path, nullptr));
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray original = f.readAll();
        f.close();
        // A failed save leaves no partial file behind.
        QString error;
        QVERIFY(!doc.saveAs(dir.filePath(QStringLiteral("missing/dir/x.plan.json")), &error));
        QVERIFY(!error.isEmpty());
        QCOMPARE(doc.filePath(), path);
        QVERIFY(QDir(dir.path()).entryList(QDir::Files) == QStringList{QStringLiteral("keep.plan.json")});
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll(), original);
    }

    void brokenFileKeepsDocument_data()
    {
        QTest::addColumn<QByteArray>("content");
        QTest::addColumn<QString>("expected");
        QTest::addRow("malformed JSON") << QByteArray("{ \"format\": ") << QStringLiteral("malformed JSON");
        QTest::addRow("wrong type") << QByteArray(R"({"format":"shardscope-plan","version":1,"name":"x",
            "model":{"preset":"llama2-7b"},"training":{"seq_len":"long"}})")
                                    << QStringLiteral("training.seq_len");
        QTest::addRow("newer version") << QByteArray(R"({"format":"shardscope-plan","version":99})")
                                       << QStringLiteral("version");
    }
    void brokenFileKeepsDocument()
    {
        QFETCH(QByteArray, content);
        QFETCH(QString, expected);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("broken.plan.json"));
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(content);
        f.close();

        PlanDocument doc(Catalog::builtin());
        QVERIFY(doc.loadAsUntitled(testing::casePath("hcie-ai-fsdp"), nullptr));
        Plan p = doc.plan();
        p.training.micro_batch = 3;
        QVERIFY(doc.apply(p, QStringLiteral("edit")));
        const auto before = planToJson(doc.plan());
        QSignalSpy changed(&doc, &PlanDocument::planChanged);
        QString error;
        QVERIFY(!doc.load(path, &error));
        QVERIFY2(error.contains(expected), qPrintable(error));
        QCOMPARE(changed.count(), 0);
        QVERIFY(planToJson(doc.plan()) == before);
        QVERIFY(doc.isModified());
        QCOMPARE(doc.undoStack()->count(), 1);
    }

    void autosaveIsOfferedBackAfterACrash()
    {
        QDir(Autosave::directory()).removeRecursively();
        QTemporaryDir dir;
        const QString original = dir.filePath(QStringLiteral("mine.plan.json"));
        std::string savedPlan;
        {
            PlanDocument doc(Catalog::builtin());
            QVERIFY(doc.loadAsUntitled(testing::casePath("hcie-ai-ddp"), nullptr));
            QVERIFY(doc.saveAs(original, nullptr));
            auto *autosave = new Autosave(&doc, &doc);
            Plan p = doc.plan();
            p.parallel.sharding = Sharding::Optimizer;
            p.name = "edited, not saved";
            QVERIFY(doc.apply(p, QStringLiteral("edit")));
            autosave->saveNow();
            QVERIFY(QFile::exists(autosave->planPath()));
            // While this session runs its copy is not a recovery.
            QVERIFY(Autosave::pendingRecoveries().isEmpty());
            savedPlan = planToJson(doc.plan()).dump();
            // Ending without finish() is what a crash leaves behind.
        }
        const QList<Autosave::Recovery> pending = Autosave::pendingRecoveries();
        QCOMPARE(pending.size(), 1);
        QCOMPARE(pending.first().originalPath, original);
        QCOMPARE(pending.first().planName, QStringLiteral("edited, not saved"));

        PlanDocument restored(Catalog::builtin());
        QString error;
        QVERIFY2(restored.loadRecovered(pending.first().planPath, pending.first().originalPath, &error),
                 qPrintable(error));
        QVERIFY(planToJson(restored.plan()).dump() == savedPlan);
        QVERIFY(restored.isModified());
        QCOMPARE(restored.filePath(), original);
        Autosave::discard(pending.first());
        QVERIFY(Autosave::pendingRecoveries().isEmpty());
    }

    void finishedSessionLeavesNothing()
    {
        QDir(Autosave::directory()).removeRecursively();
        {
            PlanDocument doc(Catalog::builtin());
            QVERIFY(doc.loadAsUntitled(testing::casePath("hcie-ai-ddp"), nullptr));
            Autosave autosave(&doc);
            Plan p = doc.plan();
            p.training.micro_batch = 2;
            QVERIFY(doc.apply(p, QStringLiteral("edit")));
            autosave.saveNow();
            autosave.finish();
        }
        QVERIFY(Autosave::pendingRecoveries().isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestPlanDocument)
#include "tst_plandocument.moc"
