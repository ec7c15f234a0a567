#pragma once

#include <QWidget>

class QPushButton;
class QTableView;

namespace shardscope {

class ComparisonModel;
class MemoryChartView;
class PlanDocument;

/// Up to four pinned plans side by side: the worst rank of each as a stacked bar, and a
/// table of key figures.
class ComparePanel final : public QWidget
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(ComparePanel)

public:
    explicit ComparePanel(PlanDocument *document, QWidget *parent = nullptr);
    ~ComparePanel() override;

    ComparisonModel *model() const { return m_model; }
    MemoryChartView *chartView() const { return m_chart; }

public Q_SLOTS:
    /// Pins the document's current plan (ignored when four are pinned).
    bool pinCurrent();
    /// Replaces the pinned plans by the teaching case's four layouts.
    int pinCases();
    void unpinSelected();
    /// Makes a pinned plan the current plan (an undoable edit).
    void loadPinned(int row);

private:
    void refreshChart();
    void updateButtons();

    PlanDocument *m_document;
    ComparisonModel *m_model;
    QTableView *m_table;
    MemoryChartView *m_chart;
    QPushButton *m_pin;
    QPushButton *m_unpin;
    QPushButton *m_load;
};

} // namespace shardscope
