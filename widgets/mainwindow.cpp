#include "mainwindow.h"

#include "appsettings.h"
#include "communicationpanel.h"
#include "comparepanel.h"
#include "filewrite.h"
#include "manualdialog.h"
#include "memorychartview.h"
#include "memorypanel.h"
#include "memorytimelineview.h"
#include "plandescription.h"
#include "plandocument.h"
#include "planeditor.h"
#include "qstrings.h"
#include "searchpanel.h"

#include "core/catalog.h"
#include "core/errors.h"
#include "core/units.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDockWidget>
#include <QScrollArea>
#include <QFileDialog>
#include <QDir>
#include <QFileInfo>
#include <QKeySequence>
#include <QMenu>
#include <QMenuBar>
#include <QPixmap>
#include <QPushButton>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTabWidget>
#include <QUndoStack>

namespace shardscope {

namespace {

QString exampleCasePath()
{
    return qs(locateDataDir()) + QStringLiteral("/cases/hcie-ai-ddp.plan.json");
}

} // namespace

MainWindow::MainWindow(QWidget *parent) : MainWindow(Catalog::builtin(), parent) {}

MainWindow::MainWindow(const Catalog &catalog, QWidget *parent)
    : QMainWindow(parent), m_document(new PlanDocument(catalog, this)),
      m_autosave(new Autosave(m_document, this))
{
    setObjectName(QStringLiteral("MainWindow"));
    setDockOptions(QMainWindow::AnimatedDocks | QMainWindow::AllowTabbedDocks);
    // Start on the teaching case so that the window is never empty.
    QString error;
    m_document->loadAsUntitled(exampleCasePath(), &error);

    // The centre: per-rank HBM, and on a second tab the memory over the step of one kind of
    // rank (recomputed only while it is shown).
    m_centre = new QTabWidget(this);
    m_centre->setObjectName(QStringLiteral("centreTabs"));
    m_centre->setDocumentMode(true);
    m_memory = new MemoryPanel(m_document, m_centre);
    m_memory->setObjectName(QStringLiteral("memoryPanel"));
    m_timeline = new MemoryTimelinePanel(m_document, m_centre);
    m_centre->addTab(m_memory, tr("Per-rank HBM"));
    m_centre->addTab(m_timeline, MemoryTimelinePanel::title());
    m_centre->setTabToolTip(0, tr("Every rank's memory at its peak or at the peak of one phase"));
    m_centre->setTabToolTip(1, tr("One kind of rank over the allocations of a training step, "
                                  "with what drives its peak"));
    setCentralWidget(m_centre);
    m_editor = new PlanEditor(m_document, this);
    m_communication = new CommunicationPanel(m_document, this);
    m_compare = new ComparePanel(m_document, this);
    m_search = new SearchPanel(m_document, this);
    createActions();
    createDocks();

    connect(m_document, &PlanDocument::fileStateChanged, this, &MainWindow::updateTitle);
    connect(m_document, &PlanDocument::planChanged, this, &MainWindow::updateTitle);
    connect(m_autosave, &Autosave::saveFailed, this, [this](const QString &reason) {
        statusBar()->showMessage(tr("Autosave failed: %1").arg(reason), 15000);
    });
    connect(m_document, &PlanDocument::editRefused, this,
            [this](const QString &reason) { statusBar()->showMessage(tr("Not applied: %1").arg(reason), 10000); });
    statusBar()->showMessage(tr("Change the plan on the left; every change redraws the per-rank bars."), 8000);
    if (!catalog.warnings().empty())
        showWarnings(tr("Device profiles"),
                     tr("Some user device profiles could not be read and were skipped; plans on "
                        "the other devices are not affected:"),
                     catalog.warnings());

    resize(1360, 740);
    restoreGeometry(settings::windowGeometry().get());
    restoreState(settings::windowState().get());
    updateTitle();
    updateRecentMenu();
}

MainWindow::~MainWindow() = default;

void MainWindow::createActions()
{
    QMenu *file = menuBar()->addMenu(tr("&File"));
    QAction *newAction = file->addAction(tr("&New"), this, &MainWindow::newPlan);
    newAction->setShortcut(QKeySequence::New);
    newAction->setToolTip(tr("Start from the HCIE-AI case as an untitled plan"));
    QAction *open = file->addAction(tr("&Open..."), this, [this] {
        if (!maybeSave())
            return;
        const QString path = QFileDialog::getOpenFileName(this, tr("Open plan"), dialogDirectory(),
                                                          tr("Plans (*.plan.json *.json)"));
        if (!path.isEmpty())
            openPlan(path);
    });
    open->setShortcut(QKeySequence::Open);
    QMenu *examples = file->addMenu(tr("Open &example"));
    examples->setObjectName(QStringLiteral("examplesMenu"));
    const QString casesDir = qs(locateDataDir()) + QStringLiteral("/cases");
    const QFileInfoList cases =
        QDir(casesDir).entryInfoList({QStringLiteral("*.plan.json")}, QDir::Files, QDir::Name);
    for (const QFileInfo &info : cases) {
        // Each example by its title, what it is and its file in the tooltip.
        const std::optional<Plan> plan =
            PlanDocument::readPlanFile(info.absoluteFilePath(), m_document->catalog(), nullptr);
        QString title = plan && !plan->name.empty() ? qs(plan->name) : info.completeBaseName().chopped(5);
        QAction *a = examples->addAction(title.replace(QLatin1Char('&'), QStringLiteral("&&")), this,
                                         [this, path = info.absoluteFilePath()] {
                                             if (maybeSave())
                                                 openExample(path);
                                         });
        const QString what = plan ? describePlan(*plan, m_document->catalog()) : QString();
        a->setToolTip(what.isEmpty() ? info.fileName() : tr("%1 (%2)").arg(what, info.fileName()));
        a->setStatusTip(a->toolTip());
    }
    examples->setToolTipsVisible(true);
    examples->setEnabled(!cases.isEmpty());
    m_recentMenu = file->addMenu(tr("Open &recent"));
    file->addAction(tr("&Import model config..."), this, [this] {
        const QString path = QFileDialog::getOpenFileName(
            this, tr("Import model config"), dialogDirectory(),
            tr("Hugging Face config (config.json *.json);;All files (*)"));
        if (!path.isEmpty())
            importModelConfig(path);
    });
    file->addSeparator();
    file->addAction(tr("&Save"), this, &MainWindow::save)->setShortcut(QKeySequence::Save);
    file->addAction(tr("Save &as..."), this, &MainWindow::saveAs)->setShortcut(QKeySequence::SaveAs);
    m_exportMenu = file->addMenu(tr("&Export"));
    m_exportMenu->addAction(tr("Chart as PNG..."), this, [this] {
        const QString path = QFileDialog::getSaveFileName(this, tr("Export chart"), dialogDirectory(),
                                                          tr("PNG images (*.png)"));
        QString error;
        if (!path.isEmpty() && !exportChart(path, &error))
            showError(tr("Export chart"), error);
    });
    file->addSeparator();
    QAction *quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);
    quit->setMenuRole(QAction::QuitRole);

    QMenu *edit = menuBar()->addMenu(tr("&Edit"));
    QAction *undo = m_document->undoStack()->createUndoAction(this, tr("&Undo"));
    // Every binding of the platform: the first one of Redo is Ctrl+Y, not Ctrl+Shift+Z.
    undo->setShortcuts(QKeySequence::Undo);
    QAction *redo = m_document->undoStack()->createRedoAction(this, tr("&Redo"));
    redo->setShortcuts(QKeySequence::Redo);
    edit->addAction(undo);
    edit->addAction(redo);

    QMenu *plan = menuBar()->addMenu(tr("&Plan"));
    QAction *pin = plan->addAction(tr("&Pin for comparison"), this, [this] {
        m_compare->pinCurrent();
        statusBar()->showMessage(m_compare->lastMessage(), 5000);
    });
    pin->setShortcut(QKeySequence(tr("Ctrl+Shift+P")));
    QAction *search = plan->addAction(tr("&Search layouts"), m_search, &SearchPanel::run);
    search->setShortcut(QKeySequence(tr("F5")));
    QAction *cancel = plan->addAction(tr("&Cancel search"), m_search, &SearchPanel::cancel);
    cancel->setShortcut(QKeySequence(tr("Shift+F5")));

    m_viewMenu = menuBar()->addMenu(tr("&View"));
    const QString phases[] = {tr("&Peak of the step"), tr("&Forward"), tr("&Backward"),
                              tr("&Optimizer step")};
    for (int i = 0; i < 4; ++i) {
        QAction *a = m_viewMenu->addAction(phases[i], this, [this, i] {
            m_centre->setCurrentWidget(m_memory);
            m_memory->setPhaseView(PhaseView(i));
        });
        a->setShortcut(QKeySequence(Qt::CTRL | Qt::Key(Qt::Key_1 + i)));
    }
    QAction *timeline = m_viewMenu->addAction(tr("&Memory over the step"), this,
                                              [this] { m_centre->setCurrentWidget(m_timeline); });
    timeline->setShortcut(QKeySequence(tr("Ctrl+5")));
    m_viewMenu->addSeparator();

    QMenu *help = menuBar()->addMenu(tr("&Help"));
    help->setObjectName(QStringLiteral("helpMenu"));
    QAction *manual = help->addAction(tr("&Manual and glossary"), this, [this] {
        auto *dialog = findChild<ManualDialog *>();
        if (!dialog)
            dialog = new ManualDialog(this);
        dialog->show();
        dialog->raise();
    });
    manual->setObjectName(QStringLiteral("manualAction"));
    manual->setShortcuts(QKeySequence::HelpContents);
    help->addAction(tr("&About ShardScope"), this, [this] {
        QMessageBox::about(this, tr("About ShardScope"),
                           tr("<b>ShardScope %1</b><p>Per-rank memory, communication and step time "
                              "of transformer training layouts.</p><p>GPL-3.0-or-later.</p>")
                               .arg(QApplication::applicationVersion()));
    });
}

void MainWindow::createDocks()
{
    m_editorDock = new QDockWidget(tr("Plan"), this);
    m_editorDock->setObjectName(QStringLiteral("PlanDock"));
    m_editorDock->setWidget(m_editor);
    m_editorDock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable |
                              QDockWidget::DockWidgetClosable);
    m_editor->setMinimumWidth(300);
    addDockWidget(Qt::LeftDockWidgetArea, m_editorDock);
    QAction *toggle = m_editorDock->toggleViewAction();
    toggle->setShortcut(QKeySequence(tr("Ctrl+Shift+E")));
    m_viewMenu->addAction(toggle);

    addPanel(m_communication, tr("Communication"));
    addPanel(m_compare, tr("Compare"));
    addPanel(m_search, tr("Search"));
    m_bottomDocks.first()->raise();
    resizeDocks({m_editorDock}, {340}, Qt::Horizontal);
    resizeDocks({m_bottomDocks.first()}, {250}, Qt::Vertical);
}

QDockWidget *MainWindow::addPanel(QWidget *panel, const QString &title, Qt::DockWidgetArea area)
{
    auto *dock = new QDockWidget(title, this);
    const QString name = panel->objectName().isEmpty() ? QString::fromLatin1(panel->metaObject()->className())
                                                       : panel->objectName();
    dock->setObjectName(name + QStringLiteral("Dock"));
    if (area == Qt::BottomDockWidgetArea) {
        // Bottom panels scroll when their dock is short, so that the tallest of the tabbed panels
        // (the kernel runner's form) does not take the per-rank bars' height on a small screen.
        auto *scroll = new QScrollArea(dock);
        scroll->setObjectName(name + QStringLiteral("Scroll"));
        scroll->setWidget(panel);
        scroll->setWidgetResizable(true);
        scroll->setFrameShape(QFrame::NoFrame);
        dock->setWidget(scroll);
    } else {
        dock->setWidget(panel);
    }
    if (area == Qt::BottomDockWidgetArea && !m_bottomDocks.isEmpty()) {
        tabifyDockWidget(m_bottomDocks.last(), dock);
        // A panel added later joins the tabs without taking the front from the first one.
        m_bottomDocks.first()->raise();
    } else {
        addDockWidget(area, dock);
    }
    if (area == Qt::BottomDockWidgetArea)
        m_bottomDocks.append(dock);
    m_viewMenu->addAction(dock->toggleViewAction());
    return dock;
}

QAction *MainWindow::addExportAction(const QString &text, std::function<void()> handler)
{
    return m_exportMenu->addAction(text, this, std::move(handler));
}

void MainWindow::updateTitle()
{
    // What the plan is, never the name it was opened with (a name says what it was once).
    setWindowTitle(tr("%1[*]: %2 - ShardScope")
                       .arg(m_document->displayName(),
                            describePlan(m_document->plan(), m_document->catalog())));
    setWindowModified(m_document->isModified());
}

void MainWindow::showError(const QString &title, const QString &text)
{
    m_lastError = text;
    statusBar()->showMessage(text, 15000);
    auto *box = new QMessageBox(QMessageBox::Warning, title, text, QMessageBox::Ok, this);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setObjectName(QStringLiteral("errorBox"));
    box->open();
}

QString MainWindow::dialogDirectory() const
{
    return settings::startDirectory();
}

bool MainWindow::exportChart(const QString &path, QString *error)
{
    // The chart and its legend, without the tabs, the headline and the hover hint around it.
    QWidget *current = m_centre->currentWidget();
    QWidget *chart = current == m_memory     ? static_cast<QWidget *>(m_memory->chartView())
                     : current == m_timeline ? static_cast<QWidget *>(m_timeline->view())
                                             : current;
    return writePngSafely(path, chart->grab(), error);
}

bool MainWindow::openPlan(const QString &path)
{
    QString error;
    if (!m_document->load(path, &error)) {
        showError(tr("Open plan"), tr("%1 was not opened; the current plan is unchanged.\n\n%2")
                                       .arg(QFileInfo(path).fileName(), error));
        return false;
    }
    addRecentFile(m_document->filePath());
    settings::lastDirectory().set(QFileInfo(path).absolutePath());
    statusBar()->showMessage(tr("Opened %1").arg(path), 5000);
    if (!m_document->plan().warnings.empty())
        showWarnings(tr("Open plan"),
                     tr("%1 has fields ShardScope does not know. They are kept when the plan is "
                        "saved, but the estimate does not use them:").arg(QFileInfo(path).fileName()),
                     m_document->plan().warnings);
    return true;
}

bool MainWindow::importModelConfig(const QString &path)
{
    const QString name = QFileInfo(path).fileName();
    ModelShape shape;
    try {
        shape = shapeFromHuggingFaceConfigFile(path.toStdString());
    } catch (const PlanError &e) {
        showError(tr("Import model config"),
                  tr("%1 was not imported; the plan is unchanged.\n\n%2").arg(name, qs(e.what())));
        return false;
    }
    Plan candidate = m_document->plan();
    candidate.model = shape;
    const QString refused = m_document->validationError(candidate);
    if (!refused.isEmpty() || !m_document->apply(candidate, tr("Import model config"))) {
        showError(tr("Import model config"),
                  tr("The model of %1 does not fit the current layout; the plan is unchanged.\n\n%2")
                      .arg(name, refused));
        return false;
    }
    const ParameterCounts pc = countParameters(shape);
    m_lastImport =
        tr("Read from %1: %2, %3 layers, hidden %4, %5 heads / %6 KV heads, head dim %7, FFN %8 "
           "(%9), vocabulary %10, %11 embeddings; %12 parameters.")
            .arg(path, qs(shape.display_name))
            .arg(shape.layers)
            .arg(shape.hidden)
            .arg(shape.heads)
            .arg(shape.kv_heads)
            .arg(shape.head_dim)
            .arg(shape.ffn_hidden)
            .arg(qs(std::string(toString(shape.ffn))))
            .arg(shape.vocab)
            .arg(shape.tied_embeddings ? tr("tied") : tr("untied"))
            .arg(qs(formatCount(pc.total)));
    if (shape.moe.enabled())
        m_lastImport += QLatin1Char(' ') + tr("Mixture of experts: %1 experts, top-%2, expert FFN %3.")
                                               .arg(shape.moe.experts)
                                               .arg(shape.moe.top_k)
                                               .arg(shape.moe.expert_ffn_hidden);
    statusBar()->showMessage(m_lastImport, 15000);
    auto *box = new QMessageBox(QMessageBox::Information, tr("Import model config"), m_lastImport,
                                QMessageBox::Ok, this);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setObjectName(QStringLiteral("importBox"));
    box->open();
    return true;
}

void MainWindow::showWarnings(const QString &title, const QString &intro,
                              const std::vector<std::string> &warnings)
{
    QStringList lines;
    for (const std::string &w : warnings)
        lines << QStringLiteral("• ") + qs(w);
    m_lastWarning = intro + QLatin1Char('\n') + lines.join(QLatin1Char('\n'));
    statusBar()->showMessage(intro + QLatin1Char(' ') + qs(warnings.front()), 15000);
    auto *box = new QMessageBox(QMessageBox::Warning, title, m_lastWarning, QMessageBox::Ok, this);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setObjectName(QStringLiteral("warningBox"));
    box->open();
}

bool MainWindow::openExample(const QString &path)
{
    QString error;
    if (!m_document->loadAsUntitled(path, &error)) {
        showError(tr("Open example"), tr("%1 was not opened; the current plan is unchanged.\n\n%2")
                                          .arg(QFileInfo(path).fileName(), error));
        return false;
    }
    return true;
}

void MainWindow::newPlan()
{
    if (maybeSave())
        openExample(exampleCasePath());
}

bool MainWindow::save()
{
    if (m_document->filePath().isEmpty())
        return saveAs();
    QString error;
    if (!m_document->save(&error)) {
        showError(tr("Save plan"), error);
        return false;
    }
    m_autosave->saveNow();
    statusBar()->showMessage(tr("Saved %1").arg(m_document->filePath()), 5000);
    return true;
}

bool MainWindow::saveAs()
{
    QString suggestion = m_document->filePath();
    if (suggestion.isEmpty())
        suggestion = dialogDirectory() + QStringLiteral("/plan.plan.json");
    QString path = QFileDialog::getSaveFileName(this, tr("Save plan"), suggestion,
                                                tr("Plans (*.plan.json)"));
    if (path.isEmpty())
        return false;
    if (!path.endsWith(QStringLiteral(".json")))
        path += QStringLiteral(".plan.json");
    QString error;
    if (!m_document->saveAs(path, &error)) {
        showError(tr("Save plan"), error);
        return false;
    }
    m_autosave->saveNow();
    addRecentFile(m_document->filePath());
    settings::lastDirectory().set(QFileInfo(path).absolutePath());
    return true;
}

void MainWindow::setSavePrompt(std::function<QMessageBox::StandardButton()> prompt)
{
    m_savePrompt = std::move(prompt);
}

bool MainWindow::maybeSave()
{
    if (!m_document->isModified())
        return true;
    const QMessageBox::StandardButton answer =
        m_savePrompt ? m_savePrompt()
                     : QMessageBox::warning(this, tr("Unsaved changes"),
                                            tr("The plan \"%1\" has unsaved changes. Save them?")
                                                .arg(describePlan(m_document->plan(), m_document->catalog())),
                                            QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel,
                                            QMessageBox::Save);
    if (answer == QMessageBox::Save)
        return save();
    return answer == QMessageBox::Discard;
}

bool MainWindow::restoreRecovery(const Autosave::Recovery &recovery)
{
    QString error;
    if (!m_document->loadRecovered(recovery.planPath, recovery.originalPath, &error)) {
        showError(tr("Restore unsaved plan"), error);
        return false;
    }
    Autosave::discard(recovery);
    m_autosave->saveNow();
    statusBar()->showMessage(tr("Restored unsaved edits from %1").arg(recovery.savedAt.toLocalTime().toString()), 8000);
    return true;
}

void MainWindow::offerRecovery()
{
    const QList<Autosave::Recovery> pending = Autosave::pendingRecoveries();
    if (pending.isEmpty())
        return;
    const Autosave::Recovery &r = pending.first();
    QMessageBox box(QMessageBox::Question, tr("Restore unsaved plan"),
                    tr("ShardScope did not close normally. Unsaved edits of \"%1\"%2 from %3 were "
                       "kept. Restore them?")
                        .arg(r.planName,
                             r.originalPath.isEmpty() ? QString() : tr(" (%1)").arg(r.originalPath),
                             r.savedAt.toLocalTime().toString()),
                    QMessageBox::NoButton, this);
    QPushButton *restore = box.addButton(tr("&Restore"), QMessageBox::AcceptRole);
    box.addButton(tr("&Discard"), QMessageBox::DestructiveRole);
    box.setDefaultButton(restore);
    box.exec();
    if (box.clickedButton() == restore)
        restoreRecovery(r);
    else
        Autosave::discard(r);
}

void MainWindow::addRecentFile(const QString &path)
{
    QStringList files = settings::recentFiles().get();
    files.removeAll(path);
    files.prepend(path);
    while (files.size() > settings::kMaxRecentFiles)
        files.removeLast();
    if (!settings::recentFiles().set(files))
        statusBar()->showMessage(tr("Cannot save the settings (is the disk full?); the previous "
                                    "settings are kept."),
                                 15000);
    updateRecentMenu();
}

void MainWindow::updateRecentMenu()
{
    m_recentMenu->clear();
    const QStringList files = settings::recentFiles().get();
    int n = 0;
    for (const QString &path : files) {
        ++n;
        QAction *a = m_recentMenu->addAction(QStringLiteral("&%1 %2").arg(n).arg(QFileInfo(path).fileName()),
                                             this, [this, path] {
                                                 if (maybeSave())
                                                     openPlan(path);
                                             });
        a->setToolTip(path);
        a->setStatusTip(path);
    }
    m_recentMenu->setEnabled(!files.isEmpty());
}

bool MainWindow::saveScreenshot(const QString &path)
{
    return writePngSafely(path, grab(), nullptr);
}

bool MainWindow::showTab(const QString &name)
{
    auto matches = [&name](QString title, const QString &objectName) {
        title.remove(QLatin1Char('&'));
        return title.compare(name, Qt::CaseInsensitive) == 0 ||
               objectName.compare(name, Qt::CaseInsensitive) == 0;
    };
    for (int i = 0; i < m_centre->count(); ++i) {
        if (matches(m_centre->tabText(i), m_centre->widget(i)->objectName())) {
            m_centre->setCurrentIndex(i);
            return true;
        }
    }
    for (QDockWidget *dock : findChildren<QDockWidget *>()) {
        if (matches(dock->windowTitle(), dock->objectName())) {
            dock->show();
            dock->raise();
            return true;
        }
    }
    return false;
}

void MainWindow::closeEvent(QCloseEvent *event)
{
    if (!maybeSave()) {
        event->ignore();
        return;
    }
    settings::windowGeometry().set(saveGeometry());
    settings::windowState().set(saveState());
    m_autosave->finish();
    event->accept();
}

} // namespace shardscope
