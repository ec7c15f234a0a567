#pragma once

#include "core/estimate.h"

#include <QWidget>
#include <vector>

class QBarCategoryAxis;
class QBarSet;
class QChart;
class QChartView;
class QHorizontalBarSeries;
class QValueAxis;

namespace shardscope {

/// Time per step of each collective, total and exposed, as horizontal bars.
class CollectiveChartView final : public QWidget
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(CollectiveChartView)

public:
    explicit CollectiveChartView(QWidget *parent = nullptr);
    ~CollectiveChartView() override;

    void setCollectives(const std::vector<Collective> &collectives);
    QBarSet *totalSet() const { return m_total; }
    QBarSet *exposedSet() const { return m_exposed; }
    QChart *chart() const { return m_chart; }

    /// The value axis for bars up to `top` (> 0): its end, tick count and label decimals.
    struct NiceAxis
    {
        double max = 0;
        int ticks = 0;
        int decimals = 0; ///< of the labels: as many as the step has
    };
    static NiceAxis niceAxis(double top);

protected:
    void changeEvent(QEvent *event) override;

private:
    void applyPalette();

    QChart *m_chart;
    QChartView *m_view;
    QHorizontalBarSeries *m_series;
    QBarSet *m_total;
    QBarSet *m_exposed;
    QBarCategoryAxis *m_axisY;
    QValueAxis *m_axisX;
};

} // namespace shardscope
