#pragma once

#include "rankbars.h"

#include <QWidget>
#include <vector>

class QLabel;
class QTabBar;

namespace shardscope {

class RichTextLabel;

class MemoryChartView;
class PlanDocument;

/// The centre of the workbench: what fits, and the per-rank HBM bars of the current plan.
class MemoryPanel final : public QWidget
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(MemoryPanel)

public:
    explicit MemoryPanel(PlanDocument *document, QWidget *parent = nullptr);
    ~MemoryPanel() override;

    void setPhaseView(PhaseView view);
    PhaseView phaseView() const { return m_view; }
    MemoryChartView *chartView() const { return m_chart; }
    const std::vector<RankBar> &bars() const { return m_bars; }
    QString headline() const;
    /// Tooltip text of one segment (bytes, share, formula and assumptions).
    QString segmentTooltip(int bar, int segment) const;

public Q_SLOTS:
    void refresh();

protected:
    void changeEvent(QEvent *event) override;

private:
    PlanDocument *m_document;
    RichTextLabel *m_headline;
    QTabBar *m_phases;
    MemoryChartView *m_chart;
    PhaseView m_view = PhaseView::Peak;
    std::vector<RankBar> m_bars;
};

} // namespace shardscope
