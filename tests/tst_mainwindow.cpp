#include "widgets/appsettings.h"
#include "widgets/autosave.h"
#include "widgets/memorytimelineview.h"
#include "widgets/mainwindow.h"
#include "widgets/manualdialog.h"
#include "widgets/memorychartview.h"
#include "widgets/memorypanel.h"
#include "widgets/plandocument.h"
#include "widgets/planeditor.h"
#include "widgets/searchpanel.h"
#include "widgets/searchresultsmodel.h"
#include "widgets/workbench.h"

#include "core/catalog.h"
#include "core/files.h"
#include "testdata.h"

#include <QAction>
#include <QDir>
#include <QDockWidget>
#include <QListWidget>
#include <QTabBar>
#include <QFileInfo>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QRegularExpression>
#include <QScrollArea>
#include <QTest>
#include <QTextBrowser>
#include <QUrl>
#include <QUndoStack>
#include <nlohmann/json.hpp>

using namespace shardscope;

class TestMainWindow : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("ShardScopeTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_mainwindow"));
        QDir(Autosave::directory()).removeRecursively();
    }

    void opensOnTheCase()
    {
        MainWindow w;
        QVERIFY(QString::fromStdString(w.document()->plan().name).contains(QStringLiteral("HCIE-AI")));
        QCOMPARE(w.document()->plan().parallel.dp, 8);
        QVERIFY(w.document()->filePath().isEmpty());
    }

    void screenshotIsSizedAndNotBlank_data()
    {
        QTest::addColumn<QSize>("size");
        QTest::addRow("1366x768") << QSize(1366, 768);
        QTest::addRow("1600x1000") << QSize(1600, 1000);
    }
    void screenshotIsSizedAndNotBlank()
    {
        QFETCH(QSize, size);
        MainWindow w;
        w.resize(size);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("shot.png"));
        QVERIFY(w.saveScreenshot(path));
        const QImage image(path);
        QVERIFY(!image.isNull());
        QCOMPARE(image.size(), size * w.devicePixelRatio());
        // Non-blank: many distinct colours (bars, text, lines).
        QSet<QRgb> colours;
        for (int y = 0; y < image.height(); y += 7)
            for (int x = 0; x < image.width(); x += 7)
                colours.insert(image.pixel(x, y));
        QVERIFY2(colours.size() > 20, qPrintable(QString::number(colours.size())));
        // The chart has room to be read at this size.
        QVERIFY(w.memoryPanel()->chartView()->height() >= 300);
        QVERIFY(w.memoryPanel()->chartView()->width() >= 600);
        if (const QByteArray out = qgetenv("SHARDSCOPE_SCREENSHOT_DIR"); !out.isEmpty())
            image.save(QString::fromLocal8Bit(out) + QStringLiteral("/mainwindow-%1x%2.png").arg(size.width()).arg(size.height()));
    }

    /// At 1366x768 in English the Plan form fits its dock: its scroll area does not scroll
    /// sideways, so a form wider than the dock would cut every field and combo arrow at the
    /// right edge (long check box texts and the vocabulary padding label did).
    void planFormFitsItsDockAt1366()
    {
        MainWindow w;
        w.resize(1366, 768);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QCoreApplication::processEvents();
        auto *scroll = w.planEditor()->findChild<QScrollArea *>();
        QVERIFY(scroll && scroll->widget());
        const int viewport = scroll->viewport()->width();
        QWidget *content = scroll->widget();
        QString wide;
        for (const QWidget *c : content->findChildren<QWidget *>()) {
            if (!c->isVisibleTo(content) || qobject_cast<const QLineEdit *>(c))
                continue;
            const int right = c->mapTo(content, QPoint(c->width(), 0)).x();
            if (right > viewport)
                wide += QStringLiteral("\n%1 %2 \"%3\" ends at %4")
                            .arg(QString::fromLatin1(c->metaObject()->className()), c->objectName(),
                                 c->property("text").toString())
                            .arg(right);
        }
        for (const QWidget *c : content->findChildren<QWidget *>())
            if (c->isVisibleTo(content) && !qobject_cast<const QLineEdit *>(c) &&
                c->minimumSizeHint().width() > viewport - 40)
                wide += QStringLiteral("\n%1 %2 \"%3\" needs %4")
                            .arg(QString::fromLatin1(c->metaObject()->className()), c->objectName(),
                                 c->property("text").toString() + c->property("title").toString())
                            .arg(c->minimumSizeHint().width());
        QVERIFY2(content->minimumSizeHint().width() <= viewport,
                 qPrintable(QStringLiteral("form needs %1 px, the dock shows %2%3")
                                .arg(content->minimumSizeHint().width())
                                .arg(viewport)
                                .arg(wide)));
        QVERIFY2(wide.isEmpty(), qPrintable(wide));
        if (const QByteArray out = qgetenv("SHARDSCOPE_SCREENSHOT_DIR"); !out.isEmpty())
            for (int y = 0, part = 1; y < content->height(); y += 1100, ++part)
                content->grab(QRect(0, y, content->width(), 1100))
                    .save(QString::fromLocal8Bit(out) + QStringLiteral("/planform-1366x768-%1.png").arg(part));
    }

    void brokenFileShowsErrorAndKeepsDocument()
    {
        MainWindow w;
        w.show();
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("broken.plan.json"));
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"format":"shardscope-plan","version":1,"name":"x","model":{"preset":"llama2-7b"},
                   "training":{"seq_len":32768,"micro_batch":1,"grad_accum":1},
                   "parallel":{"dp":8,"tp":3},"cluster":{"device":"ascend-910b2"}})");
        f.close();
        const auto before = planToJson(w.document()->plan());
        QVERIFY(!w.openPlan(path));
        QVERIFY(planToJson(w.document()->plan()) == before);
        QVERIFY2(w.lastError().contains(QStringLiteral("broken.plan.json")), qPrintable(w.lastError()));
        QVERIFY2(w.lastError().contains(QStringLiteral("parallel")), qPrintable(w.lastError()));
        auto *box = w.findChild<QMessageBox *>(QStringLiteral("errorBox"));
        QVERIFY(box);
        QVERIFY(box->isVisible());
        QVERIFY(box->text().contains(QStringLiteral("unchanged")));
        box->close();
    }

    // A misspelt key is kept and named in a warning, with the field it likely misspells.
    void unknownFieldsAreShown()
    {
        MainWindow w;
        w.show();
        QTemporaryDir dir;
        nlohmann::json j = nlohmann::json::parse(readTextFile(testing::casePath("hcie-ai-fsdp").toStdString()));
        j["memory"]["recompte"] = "full";
        const QString path = dir.filePath(QStringLiteral("typo.plan.json"));
        writeFileAtomically(path.toStdString(), j.dump());
        QVERIFY(w.openPlan(path));
        QVERIFY2(w.lastWarning().contains(QStringLiteral("memory.recompte")) &&
                     w.lastWarning().contains(QStringLiteral("did you mean \"memory.recompute\"")),
                 qPrintable(w.lastWarning()));
        auto *box = w.findChild<QMessageBox *>(QStringLiteral("warningBox"));
        QVERIFY(box && box->isVisible());
        box->close();
    }

    // File > Import model config: the shape comes from a Hugging Face config.json, as one
    // undoable edit; a config that cannot be used is refused with the field and the file.
    void importModelConfig()
    {
        MainWindow w;
        w.show();
        QTemporaryDir dir;
        const QString cfg = dir.filePath(QStringLiteral("config.json"));
        writeFileAtomically(cfg.toStdString(), R"({"model_type": "qwen2", "hidden_size": 3584,
            "intermediate_size": 18944, "num_attention_heads": 28, "num_hidden_layers": 28,
            "num_key_value_heads": 4, "vocab_size": 152064, "tie_word_embeddings": false})");
        const int undo = w.document()->undoStack()->count();
        QVERIFY2(w.importModelConfig(cfg), qPrintable(w.lastError()));
        QCOMPARE(w.document()->plan().model.hidden, int64_t(3584));
        QCOMPARE(w.document()->plan().model.vocab, int64_t(152064));
        QVERIFY(w.document()->plan().model.attention_bias);
        QCOMPARE(w.document()->undoStack()->count(), undo + 1);
        QVERIFY2(w.lastImportSummary().contains(QStringLiteral("28 layers")) &&
                     w.lastImportSummary().contains(QStringLiteral("7,615,616,512 parameters")),
                 qPrintable(w.lastImportSummary()));
        if (auto *box = w.findChild<QMessageBox *>(QStringLiteral("importBox")))
            box->close();

        writeFileAtomically(cfg.toStdString(), R"({"model_type": "qwen2", "hidden_size": 3584,
            "intermediate_size": 18944, "num_attention_heads": 28, "num_hidden_layers": 0,
            "num_key_value_heads": 4, "vocab_size": 152064})");
        const auto before = planToJson(w.document()->plan());
        QVERIFY(!w.importModelConfig(cfg));
        QVERIFY(planToJson(w.document()->plan()) == before);
        QVERIFY2(w.lastError().contains(QStringLiteral("config.num_hidden_layers")) &&
                     w.lastError().contains(QStringLiteral("config.json")),
                 qPrintable(w.lastError()));
        if (auto *box = w.findChild<QMessageBox *>(QStringLiteral("errorBox")))
            box->close();
    }

    void openAndSave()
    {
        MainWindow w;
        QTemporaryDir dir;
        QVERIFY(w.openPlan(testing::casePath("hcie-ai-tp8")));
        QCOMPARE(w.document()->plan().parallel.tp, 8);
        QVERIFY(w.windowTitle().contains(QStringLiteral("hcie-ai-tp8.plan.json")));
        Plan p = w.document()->plan();
        p.training.micro_batch = 2;
        QVERIFY(w.document()->apply(p, QStringLiteral("edit")));
        QVERIFY(w.isWindowModified());
        const QString path = dir.filePath(QStringLiteral("copy.plan.json"));
        QVERIFY(w.document()->saveAs(path, nullptr));
        QVERIFY(!w.isWindowModified());
        // Unsaved edits are asked about; Cancel keeps them.
        QVERIFY(w.document()->apply([&] { Plan q = w.document()->plan(); q.training.micro_batch = 4; return q; }(),
                                    QStringLiteral("edit")));
        w.setSavePrompt([] { return QMessageBox::Cancel; });
        QVERIFY(!w.maybeSave());
        w.setSavePrompt([] { return QMessageBox::Discard; });
        QVERIFY(w.maybeSave());
    }

    void restoresAutosaveAfterACrash()
    {
        QDir(Autosave::directory()).removeRecursively();
        std::string edited;
        {
            MainWindow crashed;
            Plan p = crashed.document()->plan();
            p.parallel.sharding = Sharding::Grads;
            QVERIFY(crashed.document()->apply(p, QStringLiteral("edit")));
            crashed.autosave()->saveNow();
            edited = planToJson(crashed.document()->plan()).dump();
            // Destroyed without closing: nothing finishes the autosave.
        }
        const auto pending = Autosave::pendingRecoveries();
        QCOMPARE(pending.size(), 1);
        MainWindow w;
        QVERIFY(w.restoreRecovery(pending.first()));
        QVERIFY(planToJson(w.document()->plan()).dump() == edited);
        QVERIFY(w.isWindowModified());
        QVERIFY(Autosave::pendingRecoveries().isEmpty());
        w.setSavePrompt([] { return QMessageBox::Discard; });
        w.close();
        QVERIFY(Autosave::pendingRecoveries().isEmpty());
    }

    /// With every panel docked (the kernel runner's form is the tallest), a 1366x768 screen
    /// still gives the per-rank bars most of its height: the bottom panels scroll instead.
    void smallScreenKeepsTheChartReadable()
    {
        Workbench workbench;
        MainWindow *w = workbench.window();
        w->resize(1366, 768);
        w->show();
        QVERIFY(QTest::qWaitForWindowExposed(w));
        QCoreApplication::processEvents();
        const int chart = w->memoryPanel()->chartView()->height();
        QVERIFY2(chart >= 300, qPrintable(QString::number(chart)));
        // The phase tabs show whole, without scroll arrows.
        auto *phases = w->memoryPanel()->findChild<QTabBar *>();
        QVERIFY(phases);
        QVERIFY2(phases->width() >= phases->sizeHint().width(),
                 qPrintable(QStringLiteral("%1 < %2").arg(phases->width()).arg(phases->sizeHint().width())));
        // The teaching steps are listed in a box of their own height, not eight lines.
        auto *steps = w->findChild<QWidget *>(QStringLiteral("TeachingPanel"))->findChild<QListWidget *>();
        QVERIFY(steps);
        QVERIFY2(steps->height() >= steps->fontMetrics().height() * 10,
                 qPrintable(QString::number(steps->height())));
        w->autosave()->finish();
    }

    void panelsAndExportsAddWithOneLine()
    {
        MainWindow w;
        auto *panel = new QLabel(QStringLiteral("extra"));
        QDockWidget *dock = w.addPanel(panel, QStringLiteral("Extra"));
        QVERIFY(dock->isAncestorOf(panel));
        QCOMPARE(w.dockWidgetArea(dock), Qt::BottomDockWidgetArea);
        bool called = false;
        QAction *a = w.addExportAction(QStringLiteral("Export something"), [&] { called = true; });
        a->trigger();
        QVERIFY(called);
    }

    void keyboardReachesTheEditor()
    {
        MainWindow w;
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        int focusable = 0;
        for (QWidget *c : w.findChildren<QWidget *>()) {
            if (c->isVisibleTo(&w) && c->focusPolicy() & Qt::TabFocus)
                ++focusable;
        }
        QVERIFY(focusable > 30);
        // Ctrl+3 switches the chart to the backward phase.
        QTest::keyClick(&w, Qt::Key_3, Qt::ControlModifier);
        QCOMPARE(w.memoryPanel()->phaseView(), PhaseView::Backward);
    }

    // The headline and the window title say what the plan is now, from its fields; the name it
    // was opened with stays a name, and an edit of the case is marked.
    void headlineAndTitleSayWhatThePlanIs()
    {
        MainWindow w;
        const QString ddp = QStringLiteral("Llama 2 7B \u00b7 32K tokens \u00b7 8 x Ascend 910B2 \u00b7 DDP dp 8");
        QVERIFY2(w.memoryPanel()->headline().contains(ddp), qPrintable(w.memoryPanel()->headline()));
        QVERIFY(w.windowTitle().contains(ddp));
        QVERIFY(!w.windowTitle().contains(QStringLiteral("OOMs")));
        QVERIFY(!w.memoryPanel()->headline().contains(QStringLiteral("edited")));

        Plan p = w.document()->plan();
        p.parallel.sharding = Sharding::Full;
        p.training.seq_len = 65536;
        QVERIFY(w.document()->apply(p, QStringLiteral("edit")));
        const QString headline = w.memoryPanel()->headline();
        const QString fsdp = QStringLiteral("Llama 2 7B \u00b7 64K tokens \u00b7 8 x Ascend 910B2 \u00b7 FSDP (ZeRO-3) dp 8");
        // The large first line is the description; the old name follows as a name, marked edited.
        QVERIFY2(headline.indexOf(fsdp) >= 0 && headline.indexOf(fsdp) < headline.indexOf(QStringLiteral("<br>")),
                 qPrintable(headline));
        QVERIFY2(headline.contains(QStringLiteral("Name: \u201cHCIE-AI case")) &&
                     headline.contains(QStringLiteral("edited from hcie-ai-ddp.plan.json")),
                 qPrintable(headline));
        QVERIFY2(w.windowTitle().contains(fsdp), qPrintable(w.windowTitle()));
        // Back to the case: no longer edited.
        w.document()->undoStack()->undo();
        QVERIFY(!w.memoryPanel()->headline().contains(QStringLiteral("edited")));
        QVERIFY(w.windowTitle().contains(ddp));
        w.setSavePrompt([] { return QMessageBox::Discard; });
    }

    // A search result is another plan: it does not keep the searched plan's name.
    void loadedSearchResultDropsTheName()
    {
        MainWindow w;
        SearchResult r;
        r.plan = parsePlanFile(testing::casePath("hcie-ai-tp8").toStdString(), Catalog::builtin());
        r.plan.name = w.document()->plan().name;
        w.searchPanel()->model()->setResults({r});
        QVERIFY(w.searchPanel()->loadResult(0));
        QCOMPARE(w.document()->plan().parallel.tp, 8);
        QVERIFY(w.document()->plan().name.empty());
        QVERIFY(!w.memoryPanel()->headline().contains(QStringLiteral("OOMs")));
        QVERIFY(w.memoryPanel()->headline().contains(QStringLiteral("TP 8 + SP")));
        w.setSavePrompt([] { return QMessageBox::Discard; });
    }

    // File > Open example lists the examples by their titles, not by their file names.
    void examplesHaveFriendlyNames()
    {
        MainWindow w;
        auto *menu = w.findChild<QMenu *>(QStringLiteral("examplesMenu"));
        QVERIFY(menu);
        QStringList expected;
        for (const QFileInfo &f : QDir(QString::fromStdString(locateDataDir()) + QStringLiteral("/cases"))
                                      .entryInfoList({QStringLiteral("*.plan.json")}, QDir::Files, QDir::Name))
            expected << QString::fromStdString(parsePlanFile(f.absoluteFilePath().toStdString(), Catalog::builtin()).name);
        QStringList texts;
        for (QAction *a : menu->actions()) {
            texts << a->text().replace(QStringLiteral("&&"), QStringLiteral("&"));
            QVERIFY2(!a->text().contains(QStringLiteral("hcie-ai-")), qPrintable(a->text()));
            QVERIFY2(a->toolTip().contains(QStringLiteral(".plan.json")), qPrintable(a->toolTip()));
        }
        QCOMPARE(texts, expected);
    }

    // A file dialog starts in a folder that exists: a last folder since removed (or a missing
    // Documents) would start it with the folder's name typed in as the file name.
    void dialogsStartInAFolderThatExists()
    {
        MainWindow w;
        const QString before = settings::lastDirectory().get();
        settings::lastDirectory().set(QStringLiteral("/no/such/folder/Documents"));
        QVERIFY2(QFileInfo(w.dialogDirectory()).isDir(), qPrintable(w.dialogDirectory()));
        QTemporaryDir dir;
        settings::lastDirectory().set(dir.path());
        QCOMPARE(w.dialogDirectory(), dir.path());
        settings::lastDirectory().set(before);
    }

    // File > Export > Chart as PNG writes the chart and its legend, without the phase tabs, the
    // headline and the hover hint.
    void chartExportIsTheChartAlone()
    {
        MainWindow w;
        w.resize(1366, 768);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("chart.png"));
        QString error;
        QVERIFY2(w.exportChart(path, &error), qPrintable(error));
        QImage image(path);
        QCOMPARE(image.size(), w.memoryPanel()->chartView()->size() * w.devicePixelRatio());
        QVERIFY(image.height() < w.memoryPanel()->height() * w.devicePixelRatio());
        QVERIFY(w.showTab(QStringLiteral("Memory over the step")));
        QCoreApplication::processEvents();
        QVERIFY2(w.exportChart(path, &error), qPrintable(error));
        image.load(path);
        QCOMPARE(image.size(), w.timelinePanel()->view()->size() * w.devicePixelRatio());
    }

    // Help holds a short manual and glossary (F1) that links to the documentation.
    void helpHasAManual()
    {
        MainWindow w;
        w.show();
        QVERIFY(QTest::qWaitForWindowActive(&w));
        auto *action = w.findChild<QAction *>(QStringLiteral("manualAction"));
        QVERIFY(action);
        QVERIFY(action->shortcuts().contains(QKeySequence(Qt::Key_F1)));
        action->trigger();
        auto *dialog = w.findChild<ManualDialog *>();
        QVERIFY(dialog && dialog->isVisible());
        const QString text = dialog->browser()->toPlainText();
        for (const char *term : {"ZeRO-3", "MFU", "Runtime reserve", "Usable", "dp x cp"})
            QVERIFY2(text.contains(QLatin1String(term)), term);
        // In a checkout the documents are linked, and the links lead to the files.
        QVERIFY(!ManualDialog::docsDirectory().isEmpty());
        const QString html = dialog->browser()->toHtml();
        const QRegularExpression href(QStringLiteral("href=\"([^\"]+memory-model\\.md)\""));
        const QRegularExpressionMatch m = href.match(html);
        QVERIFY2(m.hasMatch(), qPrintable(html.left(400)));
        QVERIFY(QFileInfo::exists(QUrl(m.captured(1)).toLocalFile()));
        dialog->close();
    }

    // Ctrl+Z and Ctrl+Shift+Z undo and redo the plan while a spin box or the name field has the
    // focus (their own line edits would otherwise take the keys); typing not yet applied is
    // undone first.
    void undoWinsInPlanControls_data()
    {
        QTest::addColumn<QString>("control");
        QTest::addRow("spin box") << QStringLiteral("microBatch");
        QTest::addRow("sequence entry") << QStringLiteral("seqLenEntry");
        QTest::addRow("name") << QStringLiteral("name");
    }
    void undoWinsInPlanControls()
    {
        QFETCH(QString, control);
        MainWindow w;
        w.show();
        QVERIFY(QTest::qWaitForWindowActive(&w));
        QWidget *field = w.findChild<QWidget *>(control);
        QVERIFY(field);
        field->setFocus();
        QTRY_VERIFY(field->hasFocus());
        const std::string before = planToJson(w.document()->plan()).dump();
        // An edit applied through the control.
        QTest::keyClick(field, Qt::Key_A, Qt::ControlModifier);
        QTest::keyClicks(field, control == QLatin1String("name")         ? QStringLiteral("mine")
                                : control == QLatin1String("microBatch") ? QStringLiteral("4")
                                                                         : QStringLiteral("4096"));
        QTest::keyClick(field, Qt::Key_Return);
        QVERIFY(planToJson(w.document()->plan()).dump() != before);
        QCOMPARE(w.document()->undoStack()->count(), 1);
        QVERIFY(field->hasFocus());
        QTest::keyClick(field, Qt::Key_Z, Qt::ControlModifier);
        QCOMPARE(w.document()->undoStack()->index(), 0);
        QVERIFY(planToJson(w.document()->plan()).dump() == before);
        QTest::keyClick(field, Qt::Key_Z, Qt::ControlModifier | Qt::ShiftModifier);
        QCOMPARE(w.document()->undoStack()->index(), 1);
        const std::string edited = planToJson(w.document()->plan()).dump();
        QVERIFY(edited != before);
        // Typing not applied yet: the first Ctrl+Z undoes the typing, the plan is untouched.
        QTest::keyClick(field, Qt::Key_A, Qt::ControlModifier);
        QTest::keyClicks(field, QStringLiteral("2"));
        QTest::keyClick(field, Qt::Key_Z, Qt::ControlModifier);
        QCOMPARE(w.document()->undoStack()->index(), 1);
        QVERIFY(planToJson(w.document()->plan()).dump() == edited);
        w.setSavePrompt([] { return QMessageBox::Discard; });
    }
};

QTEST_MAIN(TestMainWindow)
#include "tst_mainwindow.moc"
