#include "memorychartview.h"

#include "componentstyle.h"

#include "core/units.h"

#include <QAreaSeries>
#include <QCategoryAxis>
#include <QChart>
#include <QChartView>
#include <QEvent>
#include <QFontMetrics>
#include <QGraphicsScene>
#include <QHBoxLayout>
#include <QHelpEvent>
#include <QLabel>
#include <QLegend>
#include <QLineSeries>
#include <QMouseEvent>
#include <QPainter>
#include <QPixmap>
#include <QToolTip>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>
#include <cmath>
#include <functional>

namespace shardscope {

namespace {

constexpr double kBarWidth = 0.8; // of one category
constexpr int kMaxLabelledBars = 24; // past this the labels cannot be read; the tooltip names the ranks

} // namespace

MemoryChartView::MemoryChartView(QWidget *parent)
    : QWidget(parent), m_chart(new QChart), m_axisX(new QCategoryAxis), m_axisY(new QValueAxis),
      m_capacity(new QLineSeries), m_usable(new QLineSeries), m_capacityOutline(new QLineSeries),
      m_usableOutline(new QLineSeries), m_overTop(new QLineSeries),
      m_overBottom(new QLineSeries)
{
    m_chart->setAnimationOptions(QChart::NoAnimation);
    m_chart->setMargins(QMargins(4, 4, 4, 4));

    // The over-capacity zone is added first so that it lies behind the bars.
    m_over = new QAreaSeries(m_overTop, m_overBottom);
    m_over->setName(tr("Over HBM capacity"));
    m_chart->addSeries(m_over);

    m_values.resize(size_t(ComponentStyle::kSegments));
    for (int s = 0; s < ComponentStyle::kSegments; ++s) {
        auto *area = new QAreaSeries(new QLineSeries(this), new QLineSeries(this));
        area->setName(ComponentStyle::name(s));
        m_segments.push_back(area);
        m_chart->addSeries(area);
    }

    m_capacity->setName(tr("HBM capacity"));
    m_usable->setName(tr("Usable (HBM minus runtime reserve)"));
    m_chart->addSeries(m_capacityOutline);
    m_chart->addSeries(m_usableOutline);
    m_chart->addSeries(m_capacity);
    m_chart->addSeries(m_usable);

    m_chart->addAxis(m_axisX, Qt::AlignBottom);
    m_chart->addAxis(m_axisY, Qt::AlignLeft);
    for (QAbstractSeries *s : m_chart->series()) {
        s->attachAxis(m_axisX);
        s->attachAxis(m_axisY);
    }
    m_axisX->setLabelsPosition(QCategoryAxis::AxisLabelsPositionCenter);
    m_axisX->setGridLineVisible(false);
    m_axisX->setStartValue(-0.5);
    m_axisY->setTitleText(tr("GiB"));
    // The number of ticks follows the plot's height.
    connect(m_chart, &QChart::plotAreaChanged, this, [this](const QRectF &area) {
        if (area.height() != m_plotHeight) {
            m_plotHeight = area.height();
            updateValueAxis();
        }
    });
    m_axisY->setLabelFormat(QStringLiteral("%.0f"));

    // Our own legend, beside the chart, with the components top of the stack first.
    m_chart->legend()->hide();
    m_legend = new QWidget(this);
    auto *legend = new QVBoxLayout(m_legend);
    legend->setContentsMargins(4, 8, 4, 8);
    legend->setSpacing(3);
    auto addEntry = [&](int key) {
        auto *row = new QHBoxLayout;
        auto *swatch = new QLabel(m_legend);
        auto *text = new QLabel(m_legend);
        swatch->setFixedSize(22, 14);
        row->addWidget(swatch);
        row->addWidget(text, 1);
        legend->addLayout(row);
        m_legendSwatches.push_back(swatch);
        m_legendTexts.push_back(text);
        if (key < ComponentStyle::kSegments)
            text->setText(ComponentStyle::name(key));
    };
    // Top of the stack first, as the bars read.
    addEntry(kLegendCapacity);
    addEntry(kLegendUsable);
    addEntry(kLegendOver);
    for (int s = ComponentStyle::kSegments - 1; s >= 0; --s)
        addEntry(s);
    m_legendTexts[0]->setText(tr("HBM capacity"));
    m_legendTexts[1]->setText(tr("Usable (HBM minus runtime reserve)"));
    m_legendTexts[2]->setText(tr("Over capacity"));
    legend->addStretch();

    m_view = new QChartView(m_chart, this);
    // Bars and lines are axis-aligned: antialiasing would only cost time.
    m_view->setRenderHint(QPainter::Antialiasing, false);
    m_view->setFocusPolicy(Qt::NoFocus);
    m_view->viewport()->setMouseTracking(true);
    m_view->viewport()->installEventFilter(this);
    auto *layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addWidget(m_view, 1);
    layout->addWidget(m_legend);
    applyPalette();
}

MemoryChartView::~MemoryChartView() = default;

void MemoryChartView::updateLegend()
{
    const QPalette pal = palette();
    const int w = 22, h = 14;
    auto fill = [&](QLabel *label, const std::function<void(QPainter &)> &paint) {
        QPixmap pm(w, h);
        pm.fill(pal.color(QPalette::Base));
        QPainter painter(&pm);
        paint(painter);
        painter.end();
        label->setPixmap(pm);
    };
    fill(m_legendSwatches[0], [&](QPainter &p) {
        p.setPen(m_capacity->pen());
        p.drawLine(0, h / 2, w, h / 2);
    });
    fill(m_legendSwatches[1], [&](QPainter &p) {
        p.setPen(m_usableOutline->pen());
        p.drawLine(0, h / 2, w, h / 2);
        p.setPen(m_usable->pen());
        p.drawLine(0, h / 2, w, h / 2);
    });
    fill(m_legendSwatches[2], [&](QPainter &p) { p.fillRect(0, 0, w, h, m_over->brush()); });
    for (int s = 0; s < ComponentStyle::kSegments; ++s) {
        QLabel *swatch = m_legendSwatches[size_t(3 + ComponentStyle::kSegments - 1 - s)];
        fill(swatch, [&](QPainter &p) {
            const QColor c = ComponentStyle::color(s);
            p.fillRect(0, 0, w, h, m_segments[size_t(s)]->brush());
            p.setPen(c.darker(130));
            p.drawRect(0, 0, w - 1, h - 1);
        });
    }
}

double MemoryChartView::segmentValue(int segment, int bar) const
{
    if (segment < 0 || segment >= int(m_values.size()) || bar < 0 ||
        bar >= int(m_values[size_t(segment)].size()))
        return 0;
    return m_values[size_t(segment)][size_t(bar)];
}

QBrush MemoryChartView::segmentBrush(int segment) const
{
    return segment >= 0 && segment < int(m_segments.size()) ? m_segments[size_t(segment)]->brush()
                                                            : QBrush();
}

QAreaSeries *MemoryChartView::segmentSeries(int segment) const
{
    return segment >= 0 && segment < int(m_segments.size()) ? m_segments[size_t(segment)] : nullptr;
}

std::pair<int, int> MemoryChartView::segmentAt(const QPoint &viewportPos) const
{
    if (m_count <= 0 || m_segments.empty())
        return {-1, -1};
    const QPointF scene = m_view->mapToScene(viewportPos);
    const QPointF inChart = m_chart->mapFromScene(scene);
    if (!m_chart->plotArea().contains(inChart))
        return {-1, -1};
    const QPointF v = m_chart->mapToValue(inChart, m_segments.front());
    const int bar = int(std::lround(v.x()));
    if (bar < 0 || bar >= m_count || std::abs(v.x() - bar) > kBarWidth / 2 || v.y() < 0)
        return {-1, -1};
    double base = 0;
    for (int s = 0; s < ComponentStyle::kSegments; ++s) {
        const double top = base + m_values[size_t(s)][size_t(bar)];
        if (v.y() < top)
            return {bar, s};
        base = top;
    }
    return {-1, -1};
}

QPoint MemoryChartView::segmentCentre(int bar, int segment) const
{
    double base = 0;
    for (int s = 0; s < segment; ++s)
        base += segmentValue(s, bar);
    const QPointF inChart =
        m_chart->mapToPosition(QPointF(bar, base + segmentValue(segment, bar) / 2), m_segments.front());
    return m_view->mapFromScene(m_chart->mapToScene(inChart));
}

bool MemoryChartView::eventFilter(QObject *watched, QEvent *event)
{
    if (watched == m_view->viewport()) {
        if (event->type() == QEvent::MouseMove)
            showTooltipAt(static_cast<QMouseEvent *>(event)->position().toPoint());
        else if (event->type() == QEvent::ToolTip)
            return true; // shown on mouse moves, per segment
        else if (event->type() == QEvent::Leave) {
            m_hovered = {-1, -1};
            QToolTip::hideText();
        }
    }
    return QWidget::eventFilter(watched, event);
}

void MemoryChartView::showTooltipAt(const QPoint &viewportPos)
{
    const auto hit = segmentAt(viewportPos);
    if (hit == m_hovered)
        return;
    m_hovered = hit;
    if (hit.first < 0 || !m_tooltip) {
        QToolTip::hideText();
        return;
    }
    QToolTip::showText(m_view->viewport()->mapToGlobal(viewportPos), m_tooltip(hit.first, hit.second),
                       m_view);
}

QStringList MemoryChartView::legendTexts() const
{
    QStringList out;
    for (const QLabel *l : m_legendTexts)
        out.append(l->text());
    return out;
}

QStringList MemoryChartView::categories() const
{
    return m_labels;
}

void MemoryChartView::setTooltipProvider(TooltipProvider provider)
{
    m_tooltip = std::move(provider);
}

void MemoryChartView::setTitles(const QString &chartTitle, const QString &categoryTitle)
{
    // Qt Charts relayouts on every set, even to the same text.
    if (m_chart->title() != chartTitle)
        m_chart->setTitle(chartTitle);
    if (m_axisX->titleText() != categoryTitle)
        m_axisX->setTitleText(categoryTitle);
}

void MemoryChartView::setLine(QLineSeries *series, double gib)
{
    const double right = std::max(m_count, 1) - 0.5;
    const QList<QPointF> points{QPointF(-0.5, gib), QPointF(right, gib)};
    if (series->points() != points)
        series->replace(points);
}

void MemoryChartView::setSteps(QLineSeries *series, const std::vector<double> &values)
{
    const bool flat = std::adjacent_find(values.begin(), values.end(), std::not_equal_to<>()) == values.end();
    if (values.empty() || flat) {
        setLine(series, values.empty() ? 0 : values.front());
        return;
    }
    QList<QPointF> points;
    points.reserve(2 * qsizetype(values.size()));
    for (size_t i = 0; i < values.size(); ++i)
        points << QPointF(double(i) - 0.5, values[i]) << QPointF(double(i) + 0.5, values[i]);
    if (series->points() != points)
        series->replace(points);
}

double MemoryChartView::capacityAt(int bar) const
{
    return bar >= 0 && bar < int(m_capacityGiB.size()) ? m_capacityGiB[size_t(bar)] : 0;
}

double MemoryChartView::usableAt(int bar) const
{
    return bar >= 0 && bar < int(m_usableGiB.size()) ? m_usableGiB[size_t(bar)] : 0;
}

void MemoryChartView::setCategories(const QStringList &labels)
{
    if (labels == m_labels)
        return;
    m_labels = labels;
    for (const QString &old : m_axisX->categoriesLabels())
        m_axisX->remove(old);
    const int n = int(labels.size());
    if (n <= kMaxLabelledBars) {
        for (int i = 0; i < n; ++i)
            m_axisX->append(labels.at(i), i + 0.5);
    }
    m_axisX->setLabelsAngle(n > 12 && n <= kMaxLabelledBars ? -90 : 0);
}

void MemoryChartView::setBars(const std::vector<ChartBar> &bars, double hbmBytes,
                              double usableBytes)
{
    const int n = int(bars.size());
    const bool sameCount = n == m_count;
    m_count = n;
    const double right = std::max(n, 1) - 0.5;
    if (!sameCount)
        m_axisX->setRange(-0.5, right);

    // Each segment's outline: up the bar's left edge, across its top, down its right edge; the
    // lower line runs along the segment's base. Between bars the two lines coincide (no area).
    std::vector<double> base(size_t(n), 0.0);
    QList<QPointF> upper, lower;
    upper.reserve(4 * n);
    lower.reserve(4 * n);
    for (int s = 0; s < ComponentStyle::kSegments; ++s) {
        std::vector<double> &values = m_values[size_t(s)];
        values.resize(size_t(n));
        upper.clear();
        lower.clear();
        for (int i = 0; i < n; ++i) {
            const ChartBar &b = bars[size_t(i)];
            const double v = (s == ComponentStyle::kReserve ? b.reserve : b.bytes.bytes[size_t(s)]) / kGiB;
            values[size_t(i)] = v;
            const double x0 = i - kBarWidth / 2, x1 = i + kBarWidth / 2;
            const double y0 = base[size_t(i)], y1 = y0 + v;
            upper << QPointF(x0, y0) << QPointF(x0, y1) << QPointF(x1, y1) << QPointF(x1, y0);
            lower << QPointF(x0, y0) << QPointF(x0, y0) << QPointF(x1, y0) << QPointF(x1, y0);
            base[size_t(i)] = y1;
        }
        QAreaSeries *area = m_segments[size_t(s)];
        if (area->upperSeries()->points() != upper) {
            area->upperSeries()->replace(upper);
            area->lowerSeries()->replace(lower);
        }
    }
    // Each bar's own lines where its plan has them (Compare), otherwise the chart's.
    m_capacityGiB.assign(size_t(n), hbmBytes / kGiB);
    m_usableGiB.assign(size_t(n), usableBytes / kGiB);
    for (int i = 0; i < n; ++i) {
        if (bars[size_t(i)].capacity > 0)
            m_capacityGiB[size_t(i)] = bars[size_t(i)].capacity / kGiB;
        if (bars[size_t(i)].usable > 0)
            m_usableGiB[size_t(i)] = bars[size_t(i)].usable / kGiB;
    }
    double top = hbmBytes / kGiB;
    for (double barTop : base)
        top = std::max(top, barTop);
    for (double capacity : m_capacityGiB)
        top = std::max(top, capacity);
    top = std::max(top, m_minimumTopGiB);

    QStringList labels;
    labels.reserve(n);
    for (const ChartBar &b : bars)
        labels.append(b.label);
    setCategories(labels);

    if (n == 0) {
        m_capacityGiB.assign(1, hbmBytes / kGiB);
        m_usableGiB.assign(1, usableBytes / kGiB);
    }
    setSteps(m_capacity, m_capacityGiB);
    setSteps(m_usable, m_usableGiB);
    setSteps(m_capacityOutline, m_capacityGiB);
    setSteps(m_usableOutline, m_usableGiB);
    auto same = [](const std::vector<double> &v) {
        return std::adjacent_find(v.begin(), v.end(), std::not_equal_to<>()) == v.end();
    };
    const QString capacityName = same(m_capacityGiB)
                                     ? tr("HBM capacity %1 GiB").arg(m_capacityGiB.front(), 0, 'f', 1)
                                     : tr("HBM capacity of each bar's device");
    if (m_capacity->name() != capacityName) {
        m_capacity->setName(capacityName);
        m_legendTexts[0]->setText(capacityName);
    }
    const QString usableName =
        same(m_usableGiB) ? tr("Usable %1 GiB\n(HBM minus runtime reserve)").arg(m_usableGiB.front(), 0, 'f', 1)
                          : tr("Usable, each bar's own\n(HBM minus its runtime reserve)");
    if (m_usable->name() != usableName) {
        m_usable->setName(usableName);
        m_legendTexts[1]->setText(usableName);
    }

    m_topGiB = top;
    updateValueAxis();
    m_hovered = {-1, -1};
}

void MemoryChartView::updateValueAxis()
{
    // Whole-number ticks on a power-of-two step (2, 8, 16 ... GiB), as many as the plot's height
    // can label without the chart eliding them.
    const double topGiB = m_topGiB * 1.06;
    double step = topGiB > 320 ? 64 : topGiB > 160 ? 32 : topGiB > 80 ? 16 : topGiB > 24 ? 8 : 2;
    const double plotHeight = m_chart->plotArea().height();
    const int labelHeight = QFontMetrics(m_axisY->labelsFont()).height();
    const int maxTicks = plotHeight > 0 ? std::max(2, int(plotHeight / (1.4 * labelHeight)) + 1) : 11;
    while (std::ceil(topGiB / step) + 1 > maxTicks)
        step *= 2;
    const double axisMax = std::max(step, std::ceil(topGiB / step) * step);
    const int ticks = int(axisMax / step) + 1;
    if (m_axisY->max() != axisMax || m_axisY->min() != 0 || m_axisY->tickCount() != ticks) {
        m_axisY->setRange(0, axisMax);
        m_axisY->setTickCount(ticks);
    }
    setLine(m_overTop, axisMax);
    setSteps(m_overBottom, m_capacityGiB);
}

double MemoryChartView::axisTop() const
{
    return m_axisY->max();
}

void MemoryChartView::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::PaletteChange)
        applyPalette();
    QWidget::changeEvent(event);
}

void MemoryChartView::styleSegment(int segment, const QColor &background)
{
    QAreaSeries *area = m_segments[size_t(segment)];
    const QColor c = ComponentStyle::color(segment);
    if (segment == ComponentStyle::kReserve) {
        // Opaque hatching: the over-capacity zone must not show through the reserve.
        const int n = 8;
        QPixmap tile(n, n);
        tile.fill(QColor::fromRgbF(0.3 * c.redF() + 0.7 * background.redF(),
                                   0.3 * c.greenF() + 0.7 * background.greenF(),
                                   0.3 * c.blueF() + 0.7 * background.blueF()));
        QPainter p(&tile);
        p.setPen(QPen(c, 1.5));
        p.drawLine(0, n, n, 0);
        p.drawLine(-1, 1, 1, -1);
        p.drawLine(n - 1, n + 1, n + 1, n - 1);
        p.end();
        QBrush brush(tile);
        brush.setColor(c); // the component's colour, as for the other segments (tooltips, tests)
        area->setBrush(brush);
    } else {
        area->setBrush(QBrush(c));
    }
    // No outline: between bars the outline would run through the gap.
    area->setPen(Qt::NoPen);
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
    for (int s = 0; s < ComponentStyle::kSegments; ++s)
        styleSegment(s, pal.color(QPalette::Base));
    const QColor red = dark ? QColor(0xFF, 0x6B, 0x6B) : QColor(0xA1, 0x12, 0x12);
    m_capacity->setPen(QPen(red, 2.5));
    // The usable line is amber, light on dark and dark on light; an outline in the background
    // colour keeps it apart from the yellow optimizer states and every other segment.
    m_usable->setPen(QPen(dark ? QColor(0xFF, 0xC1, 0x07) : QColor(0x6B, 0x3D, 0x00), 2,
                          Qt::DashLine));
    const QColor background = pal.color(QPalette::Base);
    m_capacityOutline->setPen(QPen(background, 5.5));
    m_usableOutline->setPen(QPen(background, 5));
    QColor zone = red;
    zone.setAlpha(dark ? 60 : 36);
    m_over->setBrush(zone);
    m_over->setPen(Qt::NoPen);
    updateLegend();
}

} // namespace shardscope
