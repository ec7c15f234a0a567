#pragma once

#include <QWidget>

class QCheckBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableView;

namespace shardscope {

class PlanDocument;
class SearchJob;
class SearchResultsModel;

/// Searches layouts for the current model, sequence and cluster in the background; a result
/// can be loaded as the current plan.
class SearchPanel final : public QWidget
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(SearchPanel)

public:
    explicit SearchPanel(PlanDocument *document, QWidget *parent = nullptr);
    ~SearchPanel() override;

    SearchResultsModel *model() const { return m_model; }
    SearchJob *job() const { return m_job; }
    QString statusText() const;

public Q_SLOTS:
    void run();
    void cancel();
    /// Makes result `row` the current plan (an undoable edit).
    bool loadResult(int row);

private:
    void setRunning(bool running);

    PlanDocument *m_document;
    SearchJob *m_job;
    SearchResultsModel *m_model;
    QSpinBox *m_globalBatch;
    QSpinBox *m_top;
    QCheckBox *m_offload;
    QPushButton *m_run;
    QPushButton *m_cancel;
    QPushButton *m_load;
    QProgressBar *m_progress;
    QLabel *m_status;
    QTableView *m_table;
};

} // namespace shardscope
