#pragma once

#include "core/plan.h"
#include "runner/backend.h"

#include <QElapsedTimer>
#include <QWidget>
#include <memory>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableView;

namespace shardscope {

class BenchmarkRunner;
class RunnerResultsModel;

/// The kernel runner: choose backend and device, run the plan's kernels with a progress bar
/// and cancel, see measured beside predicted per kernel and for memory, save the calibrated
/// device profile and the results, import nccl-tests / hccl_test output or a profiler trace.
class RunnerPanel final : public QWidget
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(RunnerPanel)

public:
    explicit RunnerPanel(QWidget *parent = nullptr);
    ~RunnerPanel() override;

    /// The plan the next run measures (a running job keeps the plan it started with).
    void setPlan(const Plan &plan);
    /// Options shown in the panel (the application persists them).
    RunOptions options() const;
    void setOptions(const RunOptions &options);

    bool isRunning() const;
    /// The note shown when the kernels run on another device than the plan's ("" otherwise).
    QString deviceNote() const;
    /// "about 1 min 20 s left" after `done` of `total` items in `elapsedMs`; empty before the
    /// first item and after the last.
    static QString remainingText(qint64 elapsedMs, int done, int total);
    RunnerResultsModel *model() const { return m_model; }
    /// Shows the results of another panel's last run, with its plan (the window rebuilt for
    /// another language keeps them); nothing when that panel has none or is still running.
    void adoptResults(const RunnerPanel &other);
    /// The calibrated profile of the last run (empty JSON before one).
    nlohmann::json calibratedProfile() const;

public slots:
    void run();
    void cancel();

signals:
    void runFinished();
    void runFailed(const QString &error);

private:
    void onStarted(const QString &description);
    void onProgress(int done, int total, const QString &current);
    void onKernel(int index);
    void onProbe();
    void onFinished();
    void onFailed(const QString &error);
    void saveProfile();
    void saveResults();
    void importFile();
    void updateButtons();
    void showMemory();
    void updateDeviceNote();
    RunResults withDevice(RunResults results) const;

    std::unique_ptr<Plan> m_plan;
    std::unique_ptr<Plan> m_runPlan; ///< the plan of the run in progress or last run
    BenchmarkRunner *m_runner = nullptr;
    RunnerResultsModel *m_model = nullptr;
    QComboBox *m_backend = nullptr;
    QComboBox *m_device = nullptr;
    QLineEdit *m_python = nullptr;
    QSpinBox *m_nproc = nullptr;
    QSpinBox *m_maxTokens = nullptr;
    QCheckBox *m_probe = nullptr;
    QPushButton *m_runButton = nullptr;
    QPushButton *m_cancelButton = nullptr;
    QPushButton *m_saveProfile = nullptr;
    QPushButton *m_saveResults = nullptr;
    QPushButton *m_import = nullptr;
    QProgressBar *m_progress = nullptr;
    QLabel *m_status = nullptr;
    QLabel *m_memory = nullptr;
    QLabel *m_deviceNote = nullptr;
    QElapsedTimer m_clock; ///< since the run started
    std::string m_runDevice; ///< the device the run asked for ("cpu", "cuda", "npu")
    QTableView *m_table = nullptr;
    QPlainTextEdit *m_log = nullptr;
};

} // namespace shardscope
