#pragma once

#include "autosave.h"

#include <QMainWindow>
#include <QMessageBox>
#include <functional>

class QAction;
class QDockWidget;
class QMenu;
class QTabWidget;

namespace shardscope {

class Catalog;
class CommunicationPanel;
class ComparePanel;
class MemoryPanel;
class MemoryTimelinePanel;
class PlanDocument;
class PlanEditor;
class SearchPanel;

/// The workbench window: the plan editor on the left, in the centre per-rank HBM and, on a second
/// tab, the memory over the step of one kind of rank, and the communication, compare and search
/// panels below.
///
/// Other parts add themselves with one line each:
///   window.addPanel(new RunnerPanel(...), tr("Runner"));            // a dock, tabbed below
///   window.addExportAction(tr("Export PDF report..."), [&] { ... }); // File > Export
class MainWindow final : public QMainWindow
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(MainWindow)

public:
    explicit MainWindow(QWidget *parent = nullptr);
    MainWindow(const Catalog &catalog, QWidget *parent);
    ~MainWindow() override;

    PlanDocument *document() const { return m_document; }
    MemoryPanel *memoryPanel() const { return m_memory; }
    MemoryTimelinePanel *timelinePanel() const { return m_timeline; }
    /// The centre's tabs: per-rank HBM, memory over the step.
    QTabWidget *centreTabs() const { return m_centre; }
    PlanEditor *planEditor() const { return m_editor; }
    CommunicationPanel *communicationPanel() const { return m_communication; }
    ComparePanel *comparePanel() const { return m_compare; }
    SearchPanel *searchPanel() const { return m_search; }
    Autosave *autosave() const { return m_autosave; }

    /// Adds a panel as a dock (tabbed with the panels in that area) with a View menu entry.
    QDockWidget *addPanel(QWidget *panel, const QString &title,
                          Qt::DockWidgetArea area = Qt::BottomDockWidgetArea);
    /// Adds an entry to File > Export; the handler reads document() for the plan.
    QAction *addExportAction(const QString &text, std::function<void()> handler);

    /// Opens a plan file; on failure shows the error and keeps the current document.
    bool openPlan(const QString &path);
    /// Replaces the plan's model by the shape of a Hugging Face config.json (an undoable edit)
    /// and shows what was read; on failure shows why and keeps the plan.
    bool importModelConfig(const QString &path);
    /// Opens a plan file as an untitled copy (the built-in examples).
    bool openExample(const QString &path);
    /// Restores an autosaved plan from a session that did not end normally.
    bool restoreRecovery(const Autosave::Recovery &recovery);
    /// Offers the newest recovery, if any (asks the user).
    void offerRecovery();

    bool save();
    bool saveAs();
    void newPlan();
    /// Asks to save unsaved edits; false when the user cancels.
    bool maybeSave();

    /// The last error shown to the user.
    QString lastError() const { return m_lastError; }
    /// The last warnings shown (unknown fields of an opened plan, skipped device profiles).
    QString lastWarning() const { return m_lastWarning; }
    /// What the last model-config import read.
    QString lastImportSummary() const { return m_lastImport; }
    /// Replaces the save prompt (for tests and scripted runs).
    void setSavePrompt(std::function<QMessageBox::StandardButton()> prompt);
    /// Renders the window into a PNG.
    bool saveScreenshot(const QString &path);
    /// File > Export > Chart as PNG: the chart of the current centre tab with its legend, not
    /// the tabs, headline or hints around it.
    bool exportChart(const QString &path, QString *error);
    /// The folder the file dialogs start in (one that exists; settings::startDirectory()).
    QString dialogDirectory() const;
    /// Brings a centre tab or a dock to the front, by its title (without the '&') or its
    /// object name, case-insensitively ("Memory over the step", "memoryTimelinePanel", "Search").
    /// Returns false when nothing has that name.
    bool showTab(const QString &name);

protected:
    void closeEvent(QCloseEvent *event) override;

private:
    void createActions();
    void createDocks();
    void updateTitle();
    void updateRecentMenu();
    void addRecentFile(const QString &path);
    void showError(const QString &title, const QString &text);
    void showWarnings(const QString &title, const QString &intro, const std::vector<std::string> &warnings);

    PlanDocument *m_document;
    Autosave *m_autosave;
    QTabWidget *m_centre;
    MemoryPanel *m_memory;
    MemoryTimelinePanel *m_timeline;
    PlanEditor *m_editor;
    CommunicationPanel *m_communication;
    ComparePanel *m_compare;
    SearchPanel *m_search;
    QDockWidget *m_editorDock = nullptr;
    QList<QDockWidget *> m_bottomDocks;
    QMenu *m_viewMenu = nullptr;
    QMenu *m_recentMenu = nullptr;
    QMenu *m_exportMenu = nullptr;
    QString m_lastError;
    QString m_lastWarning;
    QString m_lastImport;
    std::function<QMessageBox::StandardButton()> m_savePrompt;
};

} // namespace shardscope
