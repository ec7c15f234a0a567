#pragma once

#include "core/memory.h"
#include "core/units.h"

#include <QString>
#include <QStringList>
#include <QWidget>
#include <functional>
#include <utility>
#include <vector>

class QAreaSeries;
class QBrush;
class QCategoryAxis;
class QLabel;
class QChart;
class QChartView;
class QLineSeries;
class QValueAxis;

namespace shardscope {

/// One stacked bar: allocated bytes by component plus the runtime reserve.
struct ChartBar
{
    QString label;
    Breakdown bytes;
    double reserve = 0;
    /// This bar's own HBM capacity and usable line, bytes (bars of different plans); 0: the
    /// chart's, given to setBars().
    double capacity = 0;
    double usable = 0;
};

/// Stacked HBM bars with the capacity and usable lines. Keeps the chart library behind one
/// class; values are shown in GiB.
///
/// Each component is one Qt Charts area series whose outline steps over every bar (up the
/// bar's left edge, across its top, down its right edge, flat through the gap), stacked on the
/// components below it. A change of plan replaces a few hundred points in place; a bar series
/// would destroy and create one graphics item per rank and component and lay every one out again.
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
    /// The value axis reaches at least `bytes` (0: only what the bars need), so that views of
    /// one plan (the phase tabs) share one scale.
    void setMinimumTop(double bytes) { m_minimumTopGiB = bytes / kGiB; }
    /// The value axis's top, GiB.
    double axisTop() const;

    // Read access for tests and exports.
    QChart *chart() const { return m_chart; }
    QChartView *chartView() const { return m_view; }
    /// The value drawn for `segment` (a Component or ComponentStyle::kReserve) of bar `bar`, GiB.
    double segmentValue(int segment, int bar) const;
    QBrush segmentBrush(int segment) const;
    QAreaSeries *segmentSeries(int segment) const;
    /// The bar and segment under a position of the chart view's viewport; {-1, -1} for none.
    std::pair<int, int> segmentAt(const QPoint &viewportPos) const;
    /// Where the middle of a segment lies in the chart view's viewport (for tests).
    QPoint segmentCentre(int bar, int segment) const;
    QLineSeries *capacitySeries() const { return m_capacity; }
    QLineSeries *usableSeries() const { return m_usable; }
    /// Wider lines under the capacity and usable lines in the chart's background colour, so
    /// that each line stands out over every segment colour on light and dark.
    QLineSeries *capacityOutline() const { return m_capacityOutline; }
    QLineSeries *usableOutline() const { return m_usableOutline; }
    /// The capacity and usable line drawn over bar `bar`, GiB.
    double capacityAt(int bar) const;
    double usableAt(int bar) const;
    QStringList categories() const;
    /// Legend entries as shown, top to bottom.
    QStringList legendTexts() const;
    int barCount() const { return m_count; }

protected:
    void changeEvent(QEvent *event) override;
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    void applyPalette();
    void updateLegend();
    void styleSegment(int segment, const QColor &background);
    void setLine(QLineSeries *series, double gib);
    /// A line at values[i] over bar i, stepping between bars; a flat line when all are equal.
    void setSteps(QLineSeries *series, const std::vector<double> &values);
    void setCategories(const QStringList &labels);
    void updateValueAxis();
    void showTooltipAt(const QPoint &viewportPos);

    QChart *m_chart;
    QChartView *m_view;
    std::vector<QAreaSeries *> m_segments;          ///< bottom of the stack first
    std::vector<std::vector<double>> m_values;      ///< [segment][bar], GiB
    QStringList m_labels;
    QCategoryAxis *m_axisX;
    QValueAxis *m_axisY;
    QLineSeries *m_capacity;
    QLineSeries *m_usable;
    QLineSeries *m_capacityOutline;
    QLineSeries *m_usableOutline;
    QLineSeries *m_overTop;
    QLineSeries *m_overBottom;
    QAreaSeries *m_over;
    QWidget *m_legend = nullptr;
    std::vector<QLabel *> m_legendSwatches;
    std::vector<QLabel *> m_legendTexts;
    TooltipProvider m_tooltip;
    int m_count = -1;
    std::pair<int, int> m_hovered{-1, -1};
    std::vector<double> m_capacityGiB; ///< per bar
    std::vector<double> m_usableGiB;   ///< per bar
    double m_topGiB = 0;     ///< highest bar or the capacity, GiB
    double m_minimumTopGiB = 0;
    double m_plotHeight = 0; ///< of the last layout, pixels
};

} // namespace shardscope
