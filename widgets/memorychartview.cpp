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
#include <QHBoxLayout>
#include <QLabel>
#include <QLegend>
#include <QPainter>
#include <QPixmap>
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

    // Our own legend: Qt Charts rebuilds its legend whenever bar sets are replaced.
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
        p.setPen(m_usable->pen());
        p.drawLine(0, h / 2, w, h / 2);
    });
    fill(m_legendSwatches[2], [&](QPainter &p) { p.fillRect(0, 0, w, h, m_over->brush()); });
    for (int s = 0; s < ComponentStyle::kSegments; ++s) {
        QLabel *swatch = m_legendSwatches[size_t(3 + ComponentStyle::kSegments - 1 - s)];
        fill(swatch, [&](QPainter &p) {
            const QColor c = ComponentStyle::color(s);
            p.fillRect(0, 0, w, h, s == ComponentStyle::kReserve ? QBrush(c, Qt::BDiagPattern) : QBrush(c));
            p.setPen(c.darker(130));
            p.drawRect(0, 0, w - 1, h - 1);
        });
    }
}

QBarSet *MemoryChartView::segmentSet(int segment) const
{
    return segment >= 0 && segment < int(m_sets.size()) ? m_sets[size_t(segment)] : nullptr;
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
    return m_axisX->categories();
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

void MemoryChartView::setBars(const std::vector<ChartBar> &bars, double hbmBytes,
                              double usableBytes)
{
    const int n = int(bars.size());
    const bool sameCount = n == m_count;
    m_count = n;

    double top = hbmBytes;
    std::vector<QList<qreal>> values(size_t(ComponentStyle::kSegments));
    bool changed = !sameCount;
    for (int s = 0; s < ComponentStyle::kSegments; ++s) {
        QList<qreal> &v = values[size_t(s)];
        v.reserve(n);
        for (const ChartBar &b : bars)
            v.append((s == ComponentStyle::kReserve ? b.reserve : b.bytes.bytes[size_t(s)]) / kGiB);
        const QBarSet *set = m_sets[size_t(s)];
        for (int i = 0; !changed && i < n; ++i)
            changed = set->at(i) != v.at(i);
    }
    // Every QBarSet::replace() lays the whole series out again; fresh sets cost one layout.
    if (changed) {
        m_series->clear();
        m_sets.clear();
        QList<QBarSet *> sets;
        for (int s = 0; s < ComponentStyle::kSegments; ++s) {
            auto *set = new QBarSet(ComponentStyle::name(s));
            set->append(values[size_t(s)]);
            styleSet(set, s);
            sets.append(set);
            m_sets.push_back(set);
        }
        m_series->append(sets);
    }
    for (const ChartBar &b : bars)
        top = std::max(top, b.bytes.total() + b.reserve);

    QStringList labels;
    labels.reserve(n);
    for (const ChartBar &b : bars)
        labels.append(b.label);
    if (labels != m_axisX->categories()) {
        m_axisX->setCategories(labels);
        // Past ~24 bars the labels cannot be read; the tooltip names each bar's ranks.
        m_axisX->setLabelsAngle(n > 12 && n <= 24 ? -90 : 0);
        m_axisX->setLabelsVisible(n <= 24);
        m_axisX->setGridLineVisible(n <= 24);
    }

    m_hbmGiB = hbmBytes / kGiB;
    m_usableGiB = usableBytes / kGiB;
    const double right = std::max(n, 1) - 0.5;
    m_lineAxisX->setRange(-0.5, right);
    setLine(m_capacity, m_hbmGiB);
    setLine(m_usable, m_usableGiB);
    const QString capacityName = tr("HBM capacity %1 GiB").arg(m_hbmGiB, 0, 'f', 1);
    if (m_capacity->name() != capacityName) {
        m_capacity->setName(capacityName);
        m_legendTexts[0]->setText(capacityName);
    }
    const QString usableName = tr("Usable %1 GiB\n(HBM minus runtime reserve)").arg(m_usableGiB, 0, 'f', 1);
    if (m_usable->name() != usableName) {
        m_usable->setName(usableName);
        m_legendTexts[1]->setText(usableName);
    }

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

void MemoryChartView::styleSet(QBarSet *set, int segment) const
{
    const QColor c = ComponentStyle::color(segment);
    if (segment == ComponentStyle::kReserve)
        set->setBrush(QBrush(c, Qt::BDiagPattern));
    else
        set->setColor(c);
    set->setBorderColor(segment == ComponentStyle::kReserve ? c : palette().color(QPalette::Base));
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
        styleSet(m_sets[size_t(s)], s);
    const QColor red = dark ? QColor(0xFF, 0x6B, 0x6B) : QColor(0xC6, 0x28, 0x28);
    m_capacity->setPen(QPen(red, 2.5));
    m_usable->setPen(QPen(dark ? QColor(0xFF, 0xC1, 0x07) : QColor(0xB2, 0x6A, 0x00), 2,
                          Qt::DashLine));
    QColor zone = red;
    zone.setAlpha(dark ? 60 : 36);
    m_over->setBrush(zone);
    m_over->setPen(Qt::NoPen);
    updateLegend();
}

} // namespace shardscope
