// The teaching panel: a step puts its plan in the document as one undoable edit, shows the
// engine's numbers, and exercises are checked; a language change rebuilds the text.
#include "core/catalog.h"
#include "i18n/language.h"
#include "widgets/autosave.h"
#include "widgets/comparepanel.h"
#include "widgets/comparisonmodel.h"
#include "widgets/languagemenu.h"
#include "widgets/mainwindow.h"
#include "widgets/memorychartview.h"
#include "widgets/memorypanel.h"
#include "widgets/plandocument.h"
#include "widgets/teachingpanel.h"
#include "widgets/workbench.h"

#include <QLabel>
#include <QMenuBar>
#include <QRadioButton>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QUndoStack>
#include <QtTest>
#include <algorithm>

using namespace shardscope;

namespace {

/// A document holding a real plan, as the workbench does from its start.
void openCase(PlanDocument &doc)
{
    QString error;
    QVERIFY2(doc.load(QString::fromStdString(Catalog::builtin().dataDir()) +
                          QStringLiteral("/cases/hcie-ai-tp8.plan.json"),
                      &error),
             qPrintable(error));
}


/// What is wrong with a memory chart's legend as it is laid out now (empty: nothing): every
/// entry's text whole (as tall and as wide as it needs), inside the legend, over no other.
QString legendProblem(const MemoryChartView *chart)
{
    QList<const QLabel *> texts;
    for (const QLabel *l : chart->findChildren<QLabel *>())
        if (!l->text().isEmpty() && l->isVisibleTo(chart))
            texts << l;
    if (texts.size() < 5)
        return QStringLiteral("%1 legend entries").arg(texts.size());
    const QWidget *legend = texts.front()->parentWidget();
    if (legend->height() < legend->minimumSizeHint().height())
        return QStringLiteral("legend %1 px tall, needs %2").arg(legend->height()).arg(legend->minimumSizeHint().height());
    for (const QLabel *l : texts) {
        const int need = l->wordWrap() ? l->heightForWidth(l->width()) : l->sizeHint().height();
        if (l->height() < need || (!l->wordWrap() && l->width() < l->sizeHint().width()))
            return QStringLiteral("\"%1\" clipped: %2x%3, needs %4x%5")
                .arg(l->text()).arg(l->width()).arg(l->height()).arg(l->sizeHint().width()).arg(need);
        if (!legend->rect().contains(l->geometry()))
            return QStringLiteral("\"%1\" outside the legend").arg(l->text());
        for (const QLabel *other : texts)
            if (other != l && other->geometry().intersects(l->geometry()))
                return QStringLiteral("\"%1\" over \"%2\"").arg(l->text(), other->text());
    }
    return {};
}
} // namespace

class TestTeachingPanel : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    /// Choosing a language rebuilds the window in it, with the same (modified) plan.
    void workbenchSwitchesLanguage()
    {
        if (!availableLanguages().contains(QStringLiteral("zh_CN")))
            QSKIP("built without translations");
        Workbench bench;
        PlanDocument *doc = bench.window()->document();
        openCase(*doc);
        Plan edited = doc->plan();
        edited.training.seq_len = 16384;
        QVERIFY(doc->apply(edited, QStringLiteral("edit")));
        QVERIFY(doc->isModified());
        const QString path = doc->filePath();
        QCOMPARE(LanguageMenu::choose(QStringLiteral("zh_CN")), QStringLiteral("zh_CN"));
        bench.rebuild();
        PlanDocument *next = bench.window()->document();
        QCOMPARE(planToJson(next->plan()), planToJson(edited));
        QVERIFY(next->isModified());
        QCOMPARE(next->filePath(), path);
        QStringList menus;
        for (QAction *a : bench.window()->menuBar()->actions())
            menus << a->text();
        QVERIFY2(menus.contains(QStringLiteral("文件(&F)")),
                 qPrintable(menus.join(QLatin1Char(' '))));
        LanguageMenu::choose(QStringLiteral("en"));
        bench.rebuild();
        menus.clear();
        for (QAction *a : bench.window()->menuBar()->actions())
            menus << a->text();
        QVERIFY(menus.contains(QStringLiteral("&File")));
        LanguageMenu::choose(QString());
    }

    /// The switch keeps what the reader built up: undo and redo go on, the pinned plans stay,
    /// the lesson stays at its step, and the plan is not reset by it.
    void languageSwitchKeepsHistoryPinsAndStep()
    {
        Workbench bench;
        MainWindow *w = bench.window();
        PlanDocument *doc = w->document();
        openCase(*doc);
        auto *lesson = w->findChild<TeachingPanel *>();
        QVERIFY(lesson);
        lesson->showItem(2);
        const Plan step = doc->plan();
        Plan a = step;
        a.training.seq_len = 16384;
        QVERIFY(doc->apply(a, QStringLiteral("shorter")));
        Plan b = a;
        b.training.micro_batch = 2;
        QVERIFY(doc->apply(b, QStringLiteral("two sequences")));
        doc->undoStack()->undo(); // at a, with b to redo
        auto *compare = w->findChild<ComparePanel *>();
        QVERIFY(compare && compare->pinCurrent());
        const int undoCount = doc->undoStack()->count();
        const int undoIndex = doc->undoStack()->index();

        bench.rebuild();
        MainWindow *next = bench.window();
        QVERIFY(next != nullptr);
        PlanDocument *nd = next->document();
        QCOMPARE(planToJson(nd->plan()), planToJson(a));
        QCOMPARE(nd->undoStack()->count(), undoCount);
        QCOMPARE(nd->undoStack()->index(), undoIndex);
        QVERIFY(nd->isModified());
        nd->undoStack()->redo();
        QCOMPARE(planToJson(nd->plan()), planToJson(b));
        nd->undoStack()->undo();
        nd->undoStack()->undo();
        QCOMPARE(planToJson(nd->plan()), planToJson(step));
        QCOMPARE(int(next->findChild<ComparePanel *>()->model()->plans().size()), 1);
        QCOMPARE(next->findChild<TeachingPanel *>()->currentItem(), 2);
        next->autosave()->finish();
    }

    void stepsSetThePlanUndoably()
    {
        PlanDocument doc(Catalog::builtin());
        openCase(doc);
        TeachingPanel panel(&doc);
        QVERIFY(panel.itemCount() >= 9);
        const Plan before = doc.plan();
        const int undoBefore = doc.undoStack()->count();
        panel.showItem(2); // full sharding
        const LessonStep &s = panel.lesson().steps.at(2);
        QCOMPARE(planToJson(doc.plan()), planToJson(s.plan));
        QCOMPARE(doc.undoStack()->count(), undoBefore + 1);
        for (const Citation &c : s.citations)
            QVERIFY2(panel.currentText().contains(c.text), qPrintable(c.text));
        QVERIFY(panel.currentText().contains(s.title));
        doc.undoStack()->undo();
        QCOMPARE(planToJson(doc.plan()), planToJson(before));
        // Showing the step whose plan is already set adds no edit.
        panel.showItem(2);
        const int count = doc.undoStack()->count();
        panel.showItem(2);
        QCOMPARE(doc.undoStack()->count(), count);
    }

    void exercisesAreChecked()
    {
        PlanDocument doc(Catalog::builtin());
        openCase(doc);
        TeachingPanel panel(&doc);
        const int first = int(panel.lesson().steps.size());
        const Plan before = doc.plan();
        panel.showItem(first);
        const Exercise &x = panel.lesson().exercises.at(0);
        // The headline and the bars would answer it: the exercise's plan waits for the answer.
        QVERIFY(planToJson(x.plan) != planToJson(before));
        QCOMPARE(planToJson(doc.plan()), planToJson(before));
        // The layouts to choose from are listed, each a radio button.
        const QList<QRadioButton *> radios = panel.findChildren<QRadioButton *>();
        QCOMPARE(radios.size(), int(x.choices.size()) + 1);
        for (const QString &c : x.choices)
            QVERIFY(std::any_of(radios.begin(), radios.end(), [&](QRadioButton *b) { return b->text() == c; }));
        const QString right = x.correctChoice() < x.choices.size() ? x.choices.at(x.correctChoice())
                                                                   : QStringLiteral("none");
        QVERIFY(panel.checkAnswer(right).correct);
        QCOMPARE(planToJson(doc.plan()), planToJson(x.plan));
        panel.showItem(first + 2);
        const Exercise &fits = panel.lesson().exercises.at(2);
        QVERIFY(
            panel.checkAnswer(fits.fits ? QStringLiteral("yes") : QStringLiteral("no")).correct);
    }

    /// After switching to Chinese through the Language menu at 1366x768 (and back, and again
    /// with Compare in front), the memory chart's legend and Compare's show every entry whole:
    /// no label clipped or over another, all inside the legend. SHARDSCOPE_SWITCH_PNG=prefix
    /// saves the window at each stage.
    void languageSwitchKeepsLegendsWhole()
    {
        if (!availableLanguages().contains(QStringLiteral("zh_CN")))
            QSKIP("built without translations");
        LanguageMenu::choose(QStringLiteral("en"));
        Workbench bench;
        MainWindow *w = bench.window();
        w->resize(1366, 768);
        w->show();
        QVERIFY(QTest::qWaitForWindowExposed(w));
        const QString shots = qEnvironmentVariable("SHARDSCOPE_SWITCH_PNG");
        auto shoot = [&](const QString &name) {
            QCoreApplication::processEvents();
            if (!shots.isEmpty())
                bench.window()->grab().save(shots + name + QStringLiteral(".png"));
        };
        shoot(QStringLiteral("en"));
        LanguageMenu *menu = w->findChild<LanguageMenu *>();
        QVERIFY(menu);
        QAction *zh = nullptr;
        for (QAction *a : menu->actions())
            if (a->data().toString() == QStringLiteral("zh_CN"))
                zh = a;
        QVERIFY(zh);
        QSignalSpy replaced(&bench, &Workbench::windowReplaced);
        zh->trigger();
        QVERIFY(replaced.wait(5000));
        w = bench.window();
        QVERIFY(QTest::qWaitForWindowExposed(w));
        shoot(QStringLiteral("zh"));
        QString problem = legendProblem(w->memoryPanel()->chartView());
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
        QVERIFY(w->showTab(QStringLiteral("对比")));
        auto *compare = w->findChild<ComparePanel *>();
        QVERIFY(compare && compare->pinCurrent());
        shoot(QStringLiteral("zh-compare"));
        problem = legendProblem(compare->chartView());
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
        // And back and forth with Compare in front.
        for (const QString &code : {QStringLiteral("en"), QStringLiteral("zh_CN")}) {
            QAction *to = nullptr;
            for (QAction *a : bench.window()->findChild<LanguageMenu *>()->actions())
                if (a->data().toString() == code)
                    to = a;
            QVERIFY(to);
            to->trigger();
            QVERIFY(replaced.wait(5000));
            QVERIFY(QTest::qWaitForWindowExposed(bench.window()));
            shoot(QStringLiteral("again-") + code);
            for (const MemoryChartView *chart : {bench.window()->memoryPanel()->chartView(),
                                                 bench.window()->findChild<ComparePanel *>()->chartView()}) {
                problem = legendProblem(chart);
                QVERIFY2(problem.isEmpty(), qPrintable(code + QStringLiteral(": ") + problem));
            }
        }
        w = bench.window();
        w->autosave()->finish();
        LanguageMenu::choose(QString());
    }

    void languageChangeKeepsTheStep()
    {
        PlanDocument doc(Catalog::builtin());
        openCase(doc);
        TeachingPanel panel(&doc);
        panel.showItem(1);
        QEvent change(QEvent::LanguageChange);
        QCoreApplication::sendEvent(&panel, &change);
        QCOMPARE(panel.currentItem(), 1);
        QVERIFY(panel.currentText().contains(panel.lesson().steps.at(1).title));
        // SHARDSCOPE_TEACHING_PNG=file.png saves the panel as a reader sees it.
        if (!qEnvironmentVariableIsEmpty("SHARDSCOPE_TEACHING_PNG")) {
            panel.resize(420, 820);
            panel.grab().save(qEnvironmentVariable("SHARDSCOPE_TEACHING_PNG"));
        }
    }
};

QTEST_MAIN(TestTeachingPanel)
#include "tst_teachingpanel.moc"
