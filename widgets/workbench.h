#pragma once

#include <QObject>
#include <functional>
#include <memory>
#include <vector>

namespace shardscope {

class MainWindow;

/// Holds the workbench window with what the application adds to it (File > Export > PDF
/// report, the teaching panel, the Language menu). When the language is changed from the menu,
/// the window is rebuilt in the new language with the same plan, file, modified state, geometry
/// and dock layout; the undo history and the pinned plans start afresh.
class Workbench final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(Workbench)

public:
    explicit Workbench(QObject *parent = nullptr);
    ~Workbench() override;

    MainWindow *window() const { return m_window.get(); }
    /// Runs `setup` on the window now and on every rebuilt one (panels and actions that other
    /// parts add, e.g. `w.addPanel(new RunnerPanel(...), tr("Runner"))`).
    void addSetup(std::function<void(MainWindow &)> setup);
    /// Rebuilds the window in the current language, keeping its plan and layout.
    void rebuild();

Q_SIGNALS:
    void windowReplaced(shardscope::MainWindow *window);

private:
    void build();

    std::unique_ptr<MainWindow> m_window;
    std::vector<std::function<void(MainWindow &)>> m_setups;
};

} // namespace shardscope
