#include "memorychartview.h"

#include "componentstyle.h"

#include "core/units.h"

#include <QAreaSeries>
#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QCursor>
#include <QEvent>
#include <QLegend>
#include <QLineSeries>
#include <QStackedBarSeries>
#include <QToolTip>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>
#include <cmath>

namespace shardscope {

MemoryChartView::MemoryChartView(QWidget *parent)
    : QWidget(parent), m_chart(new QChart), m_series(new QStackedBarSeries),
      m_axisX(new QBarCategoryAxis), m_axisY(new QValueAxis), m_lineAxisX(new QValueAxis),
      m_capacity(new QLineSeries), m_usable(new QLineSeries), m_overTop(new QLineSeries),
      m_overBottom(new QLineSeries)
{
    m_chart->setAnimationOptions(QChart::NoAnimation);
    m_chart->legend()->setAlignment(Qt::AlignRight);
    m_chart->setMargins(QMargins(4, 4, 4, 4));

    // The over-capacity zone is added first so that it lies behind the bars.
    m_over = new QAreaSeries(m_overTop, m_overBottom);
    m_over->setName(tr("Over HBM capacity"));
    m_chart->addSeries(m_over);

    for (int s = 0; s < ComponentStyle::kSegments; ++s) {
        auto *set = new QBarSet(ComponentStyle::name(s));
        m_sets.push_back(set);
        m_series->append(set);
    }
    m_series->setBarWidth(0.8);
    m_chart->addSeries(m_series);

    m_capacity->setName(tr("HBM capacity"));
    m_usable->setName(tr("Usable (HBM minus runtime reserve)"));
    m_chart->addSeries(m_capacity);
    m_chart->addSeries(m_usable);

    m_chart->addAxis(m_axisX, Qt::AlignBottom);
    m_chart->addAxis(m_lineAxisX, Qt::AlignTop);
    m_chart->addAxis(m_axisY, Qt::AlignLeft);
    m_lineAxisX->setVisible(false);
    m_series->attachAxis(m_axisX);
    m_series->attachAxis(m_axisY);
    for (auto *s : std::initializer_list<QAbstractSeries *>{m_capacity, m_usable, m_over}) {
        s->attachAxis(m_lineAxisX);
        s->attachAxis(m_axisY);
    }
    m_axisY->setTitleText(tr("GiB"));
    m_axisY->setLabelFormat(QStringLiteral("%.0f"));

    connect(m_series, &QStackedBarSeries::hovered, this,
            [this](bool on, int index, QBarSet *set) {
                if (!on || !m_tooltip) {
                    QToolTip::hideText();
                    return;
                }
                const auto it = std::find(m_sets.begin(), m_sets.end(), set);
                if (it == m_sets.end())
                    return;
                QToolTip::showText(QCursor::pos(), m_tooltip(index, int(it - m_sets.begin())),
                                   m_view);
            });

    m_view = new QChartView(m_chart, this);
    m_view->setRenderHint(QPainter::Antialiasing);
    m_view->setFocusPolicy(Qt::NoFocus);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_view);
    applyPalette();
}

MemoryChartView::~MemoryChartView() = default;

QBarSet *MemoryChartView::segmentSet(int segment) const
{
    return segment >= 0 && segment < int(m_sets.size()) ? m_sets[size_t(segment)] : nullptr;
}

QStringList MemoryChartView::categories() const
{
    return m_axisX->categories();
}

void MemoryChartView::setTooltipProvider(TooltipProvider provider)
{
    m_tooltip = std::move(provider);
}

void MemoryChartView::setTitles(const QString &chartTitle, const QString &categoryTitle)
{
    m_chart->setTitle(chartTitle);
    m_axisX->setTitleText(categoryTitle);
}

void MemoryChartView::setLine(QLineSeries *series, double gib)
{
    const double right = std::max(m_count, 1) - 0.5;
    const QList<QPointF> points{QPointF(-0.5, gib), QPointF(right, gib)};
    if (series->points() != points)
        series->replace(points);
}

void MemoryChartView::setBars(const std::vector<ChartBar> &bars, double hbmBytes,
                              double usableBytes)
{
    const int n = int(bars.size());
    const bool sameCount = n == m_count;
    m_count = n;

    double top = hbmBytes;
    for (int s = 0; s < ComponentStyle::kSegments; ++s) {
        QBarSet *set = m_sets[size_t(s)];
        QList<qreal> values;
        values.reserve(n);
        for (const ChartBar &b : bars)
            values.append((s == ComponentStyle::kReserve ? b.reserve : b.bytes.bytes[size_t(s)]) /
                          kGiB);
        if (sameCount) {
            for (int i = 0; i < n; ++i) {
                if (set->at(i) != values.at(i))
                    set->replace(i, values.at(i));
            }
        } else {
            set->remove(0, set->count());
            set->append(values);
        }
    }
    for (const ChartBar &b : bars)
        top = std::max(top, b.bytes.total() + b.reserve);

    QStringList labels;
    labels.reserve(n);
    for (const ChartBar &b : bars)
        labels.append(b.label);
    if (labels != m_axisX->categories()) {
        m_axisX->setCategories(labels);
        m_axisX->setLabelsAngle(n > 16 ? -90 : 0);
    }

    m_hbmGiB = hbmBytes / kGiB;
    m_usableGiB = usableBytes / kGiB;
    const double right = std::max(n, 1) - 0.5;
    m_lineAxisX->setRange(-0.5, right);
    setLine(m_capacity, m_hbmGiB);
    setLine(m_usable, m_usableGiB);
    m_capacity->setName(tr("HBM capacity %1 GiB").arg(m_hbmGiB, 0, 'f', 1));
    m_usable->setName(tr("Usable %1 GiB (HBM minus runtime reserve)").arg(m_usableGiB, 0, 'f', 1));

    // Round the axis up to a step of 8 or 16 GiB so that the ticks read as whole numbers.
    const double topGiB = top / kGiB * 1.06;
    const double step = topGiB > 320 ? 64 : topGiB > 160 ? 32 : topGiB > 80 ? 16 : topGiB > 24 ? 8 : 2;
    const double axisMax = std::max(step, std::ceil(topGiB / step) * step);
    if (m_axisY->max() != axisMax || m_axisY->min() != 0) {
        m_axisY->setRange(0, axisMax);
        m_axisY->setTickCount(int(axisMax / step) + 1);
    }
    setLine(m_overTop, axisMax);
    setLine(m_overBottom, m_hbmGiB);
}

void MemoryChartView::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::PaletteChange)
        applyPalette();
    QWidget::changeEvent(event);
}

void MemoryChartView::applyPalette()
{
    const QPalette pal = palette();
    const bool dark = pal.color(QPalette::Window).lightness() < 128;
    m_chart->setTheme(dark ? QChart::ChartThemeDark : QChart::ChartThemeLight);
    m_chart->setBackgroundBrush(pal.base());
    m_chart->setBackgroundRoundness(0);
    m_chart->setTitleBrush(pal.text());
    m_chart->legend()->setLabelColor(pal.color(QPalette::Text));
    for (QAbstractAxis *axis : {static_cast<QAbstractAxis *>(m_axisX),
                                static_cast<QAbstractAxis *>(m_axisY)}) {
        axis->setLabelsColor(pal.color(QPalette::Text));
        axis->setTitleBrush(pal.text());
        axis->setGridLineColor(pal.color(QPalette::Mid));
        axis->setLinePenColor(pal.color(QPalette::Mid));
    }
    for (int s = 0; s < ComponentStyle::kSegments; ++s) {
        QBarSet *set = m_sets[size_t(s)];
        const QColor c = ComponentStyle::color(s);
        if (s == ComponentStyle::kReserve)
            set->setBrush(QBrush(c, Qt::BDiagPattern));
        else
            set->setColor(c);
        set->setBorderColor(s == ComponentStyle::kReserve ? c : pal.color(QPalette::Base));
    }
    const QColor red = dark ? QColor(0xFF, 0x6B, 0x6B) : QColor(0xC6, 0x28, 0x28);
    m_capacity->setPen(QPen(red, 2.5));
    m_usable->setPen(QPen(dark ? QColor(0xFF, 0xC1, 0x07) : QColor(0xB2, 0x6A, 0x00), 2,
                          Qt::DashLine));
    QColor zone = red;
    zone.setAlpha(dark ? 60 : 36);
    m_over->setBrush(zone);
    m_over->setPen(Qt::NoPen);
}

} // namespace shardscope
