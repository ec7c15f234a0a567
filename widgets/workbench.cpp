#include "workbench.h"

#include "comparepanel.h"
#include "comparisonmodel.h"
#include "languagemenu.h"
#include "mainwindow.h"
#include "plandocument.h"
#include "reportexport.h"
#include "runnerpanel.h"
#include "teachingpanel.h"

#include <QMenuBar>
#include <QTemporaryDir>

namespace shardscope {

Workbench::Workbench(QObject *parent) : QObject(parent)
{
    build();
}

Workbench::~Workbench() = default;

void Workbench::addSetup(std::function<void(MainWindow &)> setup)
{
    setup(*m_window);
    m_setups.push_back(std::move(setup));
}

void Workbench::build()
{
    m_window = std::make_unique<MainWindow>();
    MainWindow &w = *m_window;
    ReportExport::install(w);
    w.addPanel(new TeachingPanel(w.document()), TeachingPanel::title(), Qt::RightDockWidgetArea);
    // The kernel runner measures the current plan: it follows every edit of the document.
    auto *runner = new RunnerPanel;
    runner->setPlan(w.document()->plan());
    connect(w.document(), &PlanDocument::planChanged, runner,
            [runner, doc = w.document()] { runner->setPlan(doc->plan()); });
    w.addPanel(runner, tr("Kernel runner"));
    auto *language = new LanguageMenu(&w);
    const QList<QAction *> menus = w.menuBar()->actions();
    w.menuBar()->insertMenu(menus.isEmpty() ? nullptr : menus.last(), language);
    // Queued: the menu belongs to the window that is replaced.
    connect(language, &LanguageMenu::languageChosen, this, &Workbench::rebuild,
            Qt::QueuedConnection);
    for (const auto &setup : m_setups)
        setup(w);
}

void Workbench::rebuild()
{
    MainWindow *old = m_window.get();
    const QByteArray geometry = old->saveGeometry();
    const QByteArray state = old->saveState();
    const bool visible = old->isVisible();
    const PlanDocument *doc = old->document();
    const Plan plan = doc->plan();
    const QString path = doc->filePath();
    const bool modified = doc->isModified();
    QTemporaryDir dir;
    const QString copy = dir.filePath(QStringLiteral("plan.plan.json"));
    const bool copied = dir.isValid() && PlanDocument::writePlanFile(copy, plan, nullptr);
    old->autosave()->finish();

    std::unique_ptr<MainWindow> previous = std::move(m_window);
    previous->hide();
    build();
    PlanDocument *next = m_window->document();
    QString error;
    bool restored = false;
    if (modified && copied)
        restored = next->loadRecovered(copy, path, &error);
    else if (!path.isEmpty())
        restored = next->load(path, &error);
    if (!restored)
        next->reset(plan);
    if (const Plan *origin = doc->originPlan())
        next->setOrigin(doc->originPath(), *origin);
    // What the reader built up stays: the edit history, the pinned plans, the lesson's place.
    next->adoptHistory(*doc->undoStack());
    auto *oldCompare = previous->findChild<ComparePanel *>();
    auto *newCompare = m_window->findChild<ComparePanel *>();
    if (oldCompare && newCompare && !oldCompare->model()->plans().empty()) {
        const QString pins = dir.filePath(QStringLiteral("pins.json"));
        if (oldCompare->saveComparison(pins))
            newCompare->openComparison(pins, ComparePanel::PinMode::Replace);
    }
    auto *oldLesson = previous->findChild<TeachingPanel *>();
    auto *newLesson = m_window->findChild<TeachingPanel *>();
    if (oldLesson && newLesson)
        newLesson->setCurrentItem(oldLesson->currentItem());
    auto *oldRunner = previous->findChild<RunnerPanel *>();
    auto *newRunner = m_window->findChild<RunnerPanel *>();
    if (oldRunner && newRunner)
        newRunner->adoptResults(*oldRunner);
    m_window->restoreGeometry(geometry);
    m_window->restoreState(state);
    if (visible)
        m_window->show();
    previous.reset();
    Q_EMIT windowReplaced(m_window.get());
}

} // namespace shardscope
