#pragma once

#include <QMainWindow>

namespace shardscope {

/// The workbench window.
class MainWindow final : public QMainWindow
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(MainWindow)

public:
    explicit MainWindow(QWidget *parent = nullptr);
    ~MainWindow() override;

    /// Loads a plan file; returns false and shows the error when it cannot.
    bool openPlan(const QString &path);
};

} // namespace shardscope
