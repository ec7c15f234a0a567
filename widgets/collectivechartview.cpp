#include "collectivechartview.h"

#include "qstrings.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QEvent>
#include <QFontMetrics>
#include <QHorizontalBarSeries>
#include <QLegend>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>
#include <cmath>

namespace shardscope {

CollectiveChartView::CollectiveChartView(QWidget *parent)
    : QWidget(parent), m_chart(new QChart), m_series(new QHorizontalBarSeries),
      m_total(new QBarSet(tr("Time per step"))), m_exposed(new QBarSet(tr("Exposed per step"))),
      m_axisY(new QBarCategoryAxis), m_axisX(new QValueAxis)
{
    m_chart->setAnimationOptions(QChart::NoAnimation);
    m_chart->setMargins(QMargins(2, 2, 2, 2));
    m_chart->legend()->setAlignment(Qt::AlignBottom);
    m_series->append(m_total);
    m_series->append(m_exposed);
    m_chart->addSeries(m_series);
    m_chart->addAxis(m_axisY, Qt::AlignLeft);
    m_chart->addAxis(m_axisX, Qt::AlignBottom);
    m_series->attachAxis(m_axisY);
    m_series->attachAxis(m_axisX);
    m_axisX->setTitleText(tr("ms"));
    // The category labels are identifiers ("all_gather dp"): a Latin face draws them in less
    // height than a CJK one (Qt Charts elides a label taller than its category to "...").
    QFont small = m_axisY->labelsFont();
    small.setPointSizeF(std::max(7.0, small.pointSizeF() * 0.85));
    small.setFamilies({QStringLiteral("DejaVu Sans"), QStringLiteral("Liberation Sans"),
                       QStringLiteral("Noto Sans"), small.family()});
    m_axisY->setLabelsFont(small);
    m_axisX->setLabelFormat(QStringLiteral("%.0f"));

    m_view = new QChartView(m_chart, this);
    m_view->setRenderHint(QPainter::Antialiasing, false);
    m_view->setFocusPolicy(Qt::NoFocus);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_view);
    applyPalette();
}

CollectiveChartView::~CollectiveChartView() = default;

void CollectiveChartView::setCollectives(const std::vector<Collective> &collectives)
{
    // One bar per collective and group: the table below lists each call site.
    QStringList labels;
    QList<qreal> total, exposed;
    double top = 0;
    for (const Collective &c : collectives) {
        const QString label = QStringLiteral("%1 %2").arg(qs(c.collective), qs(c.group));
        qsizetype i = labels.indexOf(label);
        if (i < 0) {
            labels.append(label);
            total.append(0);
            exposed.append(0);
            i = labels.size() - 1;
        }
        total[i] += c.time_s * c.count_per_step * 1e3;
        exposed[i] += c.exposed_time_s * 1e3;
        top = std::max({top, total.at(i), exposed.at(i)});
    }
    // The numbers of the same bars (a plan change that moves figures only) change in place: each
    // removal and append would rebuild the bar items, and each range change lays out the axis.
    const bool sameBars = labels == m_axisY->categories() && m_total->count() == total.size();
    if (!sameBars) {
        // Each category (Qt Charts divides the axis into one more than there are) at least a
        // label's height and its padding, so that no label is elided to "..."; the dock scrolls
        // when the panel gets too short for them. The rest is the legend, the value axis and the
        // margins.
        const int labelHeight = QFontMetrics(m_axisY->labelsFont()).height() + 12;
        m_view->setMinimumHeight(int(labels.size() + 1) * labelHeight + 130);
        m_total->remove(0, m_total->count());
        m_exposed->remove(0, m_exposed->count());
        m_axisY->setCategories(labels);
        m_total->append(total);
        m_exposed->append(exposed);
    } else {
        for (int i = 0; i < total.size(); ++i) {
            if (m_total->at(i) != total.at(i))
                m_total->replace(i, total.at(i));
            if (m_exposed->at(i) != exposed.at(i))
                m_exposed->replace(i, exposed.at(i));
        }
    }
    // For the same bars the axis grows as soon as a bar needs it, and shrinks only once the
    // longest bar uses less than a third of it: a plan moved back and forth by a factor of two
    // (micro-batch 1, 2, 1) keeps one scale, so that its bars can be compared by eye, and the
    // axis is not laid out again each time. Other bars (another layout) get their own axis.
    const double wanted = top > 0 ? top * 1.1 : 1.0;
    if (sameBars && wanted <= m_axisX->max() && wanted >= m_axisX->max() / 3 && m_axisX->min() == 0)
        return;
    const NiceAxis axis = niceAxis(wanted);
    if (m_axisX->min() != 0 || m_axisX->max() != axis.max)
        m_axisX->setRange(0, axis.max);
    if (m_axisX->tickCount() != axis.ticks)
        m_axisX->setTickCount(axis.ticks);
    const QString format = QStringLiteral("%.%1f").arg(axis.decimals);
    if (m_axisX->labelFormat() != format)
        m_axisX->setLabelFormat(format);
}

CollectiveChartView::NiceAxis CollectiveChartView::niceAxis(double top)
{
    // A step of 1, 2 or 5 times a power of ten that labels [0, top] with at most six ticks, the
    // axis ending on the first tick at or above top.
    constexpr int kMaxIntervals = 5;
    const double raw = top / kMaxIntervals;
    const double decade = std::pow(10.0, std::floor(std::log10(raw)));
    double step = 10 * decade;
    for (double m : {1.0, 2.0, 5.0}) {
        if (m * decade >= raw * (1 - 1e-12)) {
            step = m * decade;
            break;
        }
    }
    const int intervals = std::max(1, int(std::ceil(top / step - 1e-9)));
    return {intervals * step, intervals + 1, std::max(0, -int(std::floor(std::log10(step) + 1e-9)))};
}

void CollectiveChartView::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::PaletteChange)
        applyPalette();
    QWidget::changeEvent(event);
}

void CollectiveChartView::applyPalette()
{
    const QPalette pal = palette();
    const bool dark = pal.color(QPalette::Window).lightness() < 128;
    m_chart->setTheme(dark ? QChart::ChartThemeDark : QChart::ChartThemeLight);
    m_chart->setBackgroundBrush(pal.base());
    m_chart->setBackgroundRoundness(0);
    m_chart->legend()->setLabelColor(pal.color(QPalette::Text));
    for (QAbstractAxis *axis : {static_cast<QAbstractAxis *>(m_axisX),
                                static_cast<QAbstractAxis *>(m_axisY)}) {
        axis->setLabelsColor(pal.color(QPalette::Text));
        axis->setTitleBrush(pal.text());
        axis->setGridLineColor(pal.color(QPalette::Mid));
    }
    // Fill only: the theme's outline (white in the dark theme) would draw a bar of zero length
    // (nothing exposed) as a line beside the axis.
    m_total->setColor(QColor(0x4E, 0x79, 0xA7));
    m_exposed->setColor(QColor(0xE1, 0x57, 0x59));
    m_total->setPen(Qt::NoPen);
    m_exposed->setPen(Qt::NoPen);
}

} // namespace shardscope
