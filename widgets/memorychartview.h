#pragma once

#include "core/memory.h"

#include <QString>
#include <QStringList>
#include <QWidget>
#include <functional>
#include <vector>

class QAreaSeries;
class QBarCategoryAxis;
class QBarSet;
class QLabel;
class QChart;
class QChartView;
class QLineSeries;
class QStackedBarSeries;
class QValueAxis;

namespace shardscope {

/// One stacked bar: allocated bytes by component plus the runtime reserve.
struct ChartBar
{
    QString label;
    Breakdown bytes;
    double reserve = 0;
};

/// Stacked HBM bars with the capacity and usable lines. Keeps the chart library behind one
/// class; values are shown in GiB.
class MemoryChartView final : public QWidget
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(MemoryChartView)

public:
    enum LegendEntry { kLegendCapacity, kLegendUsable, kLegendOver };
    /// (bar index, segment: a Component or ComponentStyle::kReserve) -> tooltip text
    using TooltipProvider = std::function<QString(int, int)>;

    explicit MemoryChartView(QWidget *parent = nullptr);
    ~MemoryChartView() override;

    void setBars(const std::vector<ChartBar> &bars, double hbmBytes, double usableBytes);
    void setTooltipProvider(TooltipProvider provider);
    void setTitles(const QString &chartTitle, const QString &categoryTitle);

    // Read access for tests and exports.
    QChart *chart() const { return m_chart; }
    QChartView *chartView() const { return m_view; }
    QBarSet *segmentSet(int segment) const;
    QLineSeries *capacitySeries() const { return m_capacity; }
    QLineSeries *usableSeries() const { return m_usable; }
    QStringList categories() const;
    /// Legend entries as shown, top to bottom.
    QStringList legendTexts() const;
    int barCount() const { return m_count; }

protected:
    void changeEvent(QEvent *event) override;

private:
    void applyPalette();
    void updateLegend();
    void styleSet(QBarSet *set, int segment) const;
    void setLine(QLineSeries *series, double gib);

    QChart *m_chart;
    QChartView *m_view;
    QStackedBarSeries *m_series;
    std::vector<QBarSet *> m_sets;
    QBarCategoryAxis *m_axisX;
    QValueAxis *m_axisY;
    QValueAxis *m_lineAxisX;
    QLineSeries *m_capacity;
    QLineSeries *m_usable;
    QLineSeries *m_overTop;
    QLineSeries *m_overBottom;
    QAreaSeries *m_over;
    QWidget *m_legend = nullptr;
    std::vector<QLabel *> m_legendSwatches;
    std::vector<QLabel *> m_legendTexts;
    TooltipProvider m_tooltip;
    int m_count = -1;
    double m_hbmGiB = 0;
    double m_usableGiB = 0;
};

} // namespace shardscope
