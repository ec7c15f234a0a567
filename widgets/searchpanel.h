#pragma once

#include "core/search.h"

#include <QWidget>
#include <vector>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableView;

class QChartView;
class QScatterSeries;
class QLineSeries;
class QValueAxis;

namespace shardscope {

class PlanDocument;
class SearchJob;
class SearchResultsModel;

/// Searches layouts for the current model, sequence and cluster in the background; a result
/// can be loaded as the current plan. The global batch and the constraints are the panel's
/// own: set by the user and kept whatever plan is open. The Pareto front of memory against
/// step time is drawn beside the table; a click on a point loads it. Results are marked stale
/// once the plan's model, sequence, precision or cluster changes.
class SearchPanel final : public QWidget
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(SearchPanel)

public:
    enum class BatchUnit { Sequences, Tokens };

    explicit SearchPanel(PlanDocument *document, QWidget *parent = nullptr);
    ~SearchPanel() override;

    SearchResultsModel *model() const { return m_model; }
    SearchJob *job() const { return m_job; }
    QString statusText() const;
    QString fitText() const;
    bool isStale() const;

    void setGlobalBatch(qint64 value, BatchUnit unit);
    /// The request the next search sends for the open plan (the batch in sequences).
    SearchRequest request() const;
    /// The points of the Pareto chart, least memory first (memory in GiB, step time in s).
    QList<QPointF> paretoPoints() const;

public Q_SLOTS:
    void run();
    void cancel();
    /// Makes result `row` the current plan (an undoable edit).
    bool loadResult(int row);
    /// Makes the Pareto front's point `index` the current plan, as a click on it does.
    bool loadParetoPoint(int index);
    /// Answers "the largest sequence length / micro-batch that fits" for the open layout.
    void findLargestFit();

protected:
    void changeEvent(QEvent *event) override;

private:
    void applyChartPalette();
    void setRunning(bool running);
    void updateChart();
    void updateStale();
    bool loadPlan(const SearchResult &result);

    PlanDocument *m_document;
    SearchJob *m_job;
    SearchResultsModel *m_model;
    QSpinBox *m_globalBatch;
    QComboBox *m_batchUnit;
    QSpinBox *m_top;
    QCheckBox *m_offload;
    QSpinBox *m_tp;
    QSpinBox *m_pp;
    QSpinBox *m_cp;
    QSpinBox *m_maxDevices;
    QDoubleSpinBox *m_headroom;
    QCheckBox *m_recompute[3];
    QCheckBox *m_offloadSet[3];
    static constexpr int kAxes = 7;
    QCheckBox *m_axes[kAxes]; ///< SearchAxis bits 0..6
    QPushButton *m_run;
    QPushButton *m_cancel;
    QPushButton *m_load;
    QPushButton *m_fit;
    QProgressBar *m_progress;
    QLabel *m_status;
    QLabel *m_staleLabel;
    QLabel *m_fitLabel;
    QTableView *m_table;
    QChartView *m_chart;
    QScatterSeries *m_others;
    QLineSeries *m_front;
    QScatterSeries *m_frontPoints;
    QValueAxis *m_memoryAxis;
    QValueAxis *m_timeAxis;
    std::vector<SearchResult> m_pareto;
    std::string m_searchedKey; ///< what the shown results were searched for
};

} // namespace shardscope
