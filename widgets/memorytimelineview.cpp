#include "memorytimelineview.h"

#include "componentstyle.h"
#include "plandocument.h"
#include "qstrings.h"

#include "core/catalog.h"
#include "i18n/enginetext.h"
#include "core/errors.h"
#include "core/files.h"
#include "core/units.h"

#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QMessageBox>
#include <QProcess>
#include <QPushButton>
#include <QEvent>
#include <QFontMetricsF>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QHelpEvent>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QPixmap>
#include <QSplitter>
#include <QToolTip>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <climits>
#include <array>
#include <cmath>
#include <exception>

namespace shardscope {

namespace {

constexpr int kLegendReserved = -1; ///< the legend's entry of the reserved line

QString gib(double bytes, int decimals = 2)
{
    return qs(formatGiB(bytes, decimals));
}

/// 1, 2 or 5 times a power of ten, at least `raw`.
double niceStep(double raw)
{
    if (raw <= 0)
        return 1;
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : {1.0, 2.0, 5.0, 10.0}) {
        if (raw <= m * mag)
            return m * mag;
    }
    return 10 * mag;
}

bool isDark(const QPalette &pal)
{
    return pal.color(QPalette::Base).lightness() < 128;
}

QColor capacityColor(const QPalette &pal)
{
    return isDark(pal) ? QColor(0xFF, 0x6B, 0x6B) : QColor(0xC6, 0x28, 0x28);
}

QColor usableColor(const QPalette &pal)
{
    return isDark(pal) ? QColor(0xFF, 0xC1, 0x07) : QColor(0xB2, 0x6A, 0x00);
}

QColor measuredColor(const QPalette &pal)
{
    return pal.color(QPalette::Window).lightness() < 128 ? QColor(0x4D, 0xD0, 0xE1) : QColor(0x00, 0x6E, 0x7F);
}

QColor reservedColor(const QPalette &pal)
{
    return isDark(pal) ? QColor(0xF0, 0xF0, 0xF0) : QColor(0x26, 0x32, 0x38);
}

QString stepPartName(const std::string &key)
{
    if (key == "setup")
        return MemoryTimelinePanel::tr("model build");
    if (key == "first_step")
        return MemoryTimelinePanel::tr("first step");
    return MemoryTimelinePanel::tr("steady step");
}

QString kindNameOfKey(const std::string &key)
{
    for (int k = 0; k < kTensorKindCount; ++k) {
        if (tensorKindKey(TensorKind(k)) == key)
            return tensorKindName(TensorKind(k));
    }
    return qs(key);
}

/// Adds a step at height y from x0 to x1; a step at the height of the last one extends it.
void appendStep(QPolygonF &poly, double x0, double x1, double y)
{
    if (poly.size() >= 2 && poly.last().y() == y && poly.at(poly.size() - 2).y() == y) {
        poly.last().setX(x1);
        return;
    }
    poly << QPointF(x0, y) << QPointF(x1, y);
}

/// "layer 12", or "head", "root module", "embedding", "no layer".
QString layerPhrase(TensorKind kind, int layer)
{
    if (layer >= 0)
        return MemoryTimelinePanel::tr("layer %1").arg(layer);
    if (layer == -1)
        return MemoryTimelinePanel::tr("no layer");
    return tensorLayerText(kind, layer);
}

/// "micro-batch 0", or "step-wide".
QString unitPhrase(int unit)
{
    return unit >= 0 ? MemoryTimelinePanel::tr("micro-batch %1").arg(unit) : MemoryTimelinePanel::tr("step-wide");
}

QString ranksText(int n)
{
    return n == 1 ? MemoryTimelinePanel::tr("1 rank") : MemoryTimelinePanel::tr("%1 ranks").arg(n);
}

QString tensorsText(int n)
{
    return n == 1 ? MemoryTimelinePanel::tr("1 tensor") : MemoryTimelinePanel::tr("%1 tensors").arg(n);
}

QPixmap swatch(int component, int size)
{
    QPixmap pm(size, size);
    const QColor c = ComponentStyle::color(component);
    pm.fill(c);
    QPainter p(&pm);
    p.setPen(c.darker(130));
    p.drawRect(0, 0, size - 1, size - 1);
    return pm;
}

} // namespace

// --- the chart ---------------------------------------------------------------------------------

MemoryTimelineView::MemoryTimelineView(QWidget *parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("memoryTimelineView"));
    setMouseTracking(true);
    setAttribute(Qt::WA_OpaquePaintEvent);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

MemoryTimelineView::~MemoryTimelineView() = default;

void MemoryTimelineView::setMeasured(Measured measured)
{
    m_measured = std::move(measured);
    layoutChart();
    update();
}

void MemoryTimelineView::setStepView(std::shared_ptr<const StepView> view, double hbmBytes,
                                     double usableBytes)
{
    m_view = std::move(view);
    m_hbm = hbmBytes;
    m_usable = usableBytes;
    m_present.assign(size_t(kComponentCount), false);
    if (m_view) {
        for (const auto &live : m_view->live)
            for (int c = 0; c < kComponentCount; ++c)
                if (live[size_t(c)] > 0)
                    m_present[size_t(c)] = true;
    }
    m_sampledColumns = -1;
    m_hovered = -1;
    layoutChart();
    update();
}

int MemoryTimelineView::eventCount() const
{
    return m_view ? int(m_view->live.size()) : 0;
}

int MemoryTimelineView::peakEvent() const
{
    return m_view && m_view->peak_event >= 0 ? m_view->peak_event - m_view->first : -1;
}

QString MemoryTimelineView::peakLabel() const
{
    return m_view ? tr("Peak %1").arg(gib(m_view->allocated_peak)) : QString();
}

const std::vector<StepSample> &MemoryTimelineView::liveSamples() const
{
    const_cast<MemoryTimelineView *>(this)->ensureSamples();
    return m_live;
}

const std::vector<StepSample> &MemoryTimelineView::reservedSamples() const
{
    const_cast<MemoryTimelineView *>(this)->ensureSamples();
    return m_reserved;
}

double MemoryTimelineView::drawnLiveMax() const
{
    double m = 0;
    for (const StepSample &s : liveSamples())
        m = std::max(m, stepTotal(*m_view, s.event));
    return m;
}

double MemoryTimelineView::drawnReservedMax() const
{
    double m = 0;
    for (const StepSample &s : reservedSamples())
        m = std::max(m, double(m_view->reserved[size_t(s.event)]));
    return m;
}

double MemoryTimelineView::stackedTop(int component, int event) const
{
    if (!m_view || event < 0 || event >= eventCount() || component < 0 || component >= kComponentCount)
        return 0;
    double t = 0;
    for (int c = 0; c <= component; ++c)
        t += double(m_view->live[size_t(event)][size_t(c)]);
    return t;
}

double MemoryTimelineView::reservedAt(int event) const
{
    if (!m_view || event < 0 || size_t(event) >= m_view->reserved.size())
        return 0;
    return double(m_view->reserved[size_t(event)]);
}

QStringList MemoryTimelineView::phaseLabels() const
{
    QStringList out;
    if (m_view) {
        for (const PhaseMark &m : m_view->phases)
            out << ComponentStyle::phaseName(m.phase);
    }
    return out;
}

std::vector<MemoryTimelineView::LegendItem> MemoryTimelineView::legendItems() const
{
    std::vector<LegendItem> items;
    if (!m_view)
        return items;
    for (int c = 0; c < kComponentCount; ++c) {
        if (m_present[size_t(c)])
            items.push_back({ComponentStyle::name(c), c});
    }
    items.push_back({tr("Reserved by the allocator, peak %1").arg(gib(m_view->reserved_peak, 1)),
                     kLegendReserved});
    if (!m_measured.x.empty()) {
        items.push_back({tr("Measured allocated, peak %1").arg(gib(m_measured.peakAllocated, 1)), -2});
        items.push_back({tr("Measured reserved, peak %1").arg(gib(m_measured.peakReserved, 1)), -3});
    }
    // The capacity and usable lines are labelled on the plot.
    return items;
}

void MemoryTimelineView::layoutChart()
{
    const QFontMetricsF fm(font());
    const double fh = fm.height();
    const double w = width(), h = height();

    // Legend rows under the axis.
    const std::vector<LegendItem> items = legendItems();
    double lx = 0, rows = items.empty() ? 0 : 1;
    const double avail = std::max(50.0, w - 16);
    for (const LegendItem &it : items) {
        const double iw = 22 + fm.horizontalAdvance(it.text) + 16;
        if (lx > 0 && lx + iw > avail) {
            lx = 0;
            ++rows;
        }
        lx += iw;
    }
    m_legendHeight = rows * (fh + 3);

    double topBytes = m_hbm;
    if (m_view)
        topBytes = std::max({topBytes, m_view->reserved_peak, m_view->allocated_peak});
    topBytes = std::max({topBytes, m_measured.peakAllocated, m_measured.peakReserved});
    topBytes = std::max(topBytes, kGiB) * 1.04;
    const QString widest = QString::number(std::ceil(topBytes / kGiB * 1.2));
    const double left = fm.horizontalAdvance(widest) + 12;
    const double top = fh + 8;
    const double bottom = fh + 4 + fh + 6 + m_legendHeight + 6;
    m_plot = QRectF(left, top, std::max(10.0, w - left - 12), std::max(10.0, h - top - bottom));

    // Value ticks: 1, 2 or 5 x 10^k GiB, as many as the height labels legibly.
    const int maxTicks = std::max(2, int(m_plot.height() / (1.8 * fh)));
    const double step = niceStep(topBytes / kGiB / maxTicks);
    m_step = step * kGiB;
    // The axis ends a little above the highest line (not at the next tick), with room for the
    // capacity line's label above it.
    m_top = topBytes;
    const double room = (fh + 3) / m_plot.height();
    if (room < 0.34)
        m_top = std::max(m_top, m_hbm / (1 - room));
}

void MemoryTimelineView::ensureSamples()
{
    const int columns = std::max(1, int(m_plot.width()));
    if (columns == m_sampledColumns)
        return;
    m_sampledColumns = columns;
    if (!m_view) {
        m_live.clear();
        m_reserved.clear();
        return;
    }
    m_live = stepSamples(*m_view, columns, false);
    m_reserved = stepSamples(*m_view, columns, true);
}

double MemoryTimelineView::xOf(double eventUnits) const
{
    const int n = std::max(1, eventCount());
    return m_plot.left() + m_plot.width() * eventUnits / n;
}

double MemoryTimelineView::yOf(double bytes) const
{
    return m_plot.bottom() - m_plot.height() * std::clamp(bytes / m_top, 0.0, 1.0);
}

int MemoryTimelineView::sampleIndexAt(double u) const
{
    if (m_live.empty())
        return -1;
    auto it = std::upper_bound(m_live.begin(), m_live.end(), u,
                               [](double x, const StepSample &s) { return x < s.x1; });
    if (it == m_live.end())
        it = m_live.end() - 1;
    return int(it - m_live.begin());
}

int MemoryTimelineView::eventAt(const QPoint &pos) const
{
    if (!m_view || eventCount() == 0)
        return -1;
    if (pos.x() < m_plot.left() || pos.x() > m_plot.right() || pos.y() < m_plot.top() ||
        pos.y() > m_plot.bottom())
        return -1;
    const_cast<MemoryTimelineView *>(this)->ensureSamples();
    // The pixel column under the pointer may draw several samples: the highest one is what the
    // eye sees there.
    const double u0 = (pos.x() - m_plot.left()) / m_plot.width() * eventCount();
    const double u1 = (pos.x() + 1 - m_plot.left()) / m_plot.width() * eventCount();
    int best = sampleIndexAt(u0);
    if (best < 0)
        return -1;
    double top = stepTotal(*m_view, m_live[size_t(best)].event);
    for (size_t i = size_t(best) + 1; i < m_live.size() && m_live[i].x0 < u1; ++i) {
        const double t = stepTotal(*m_view, m_live[i].event);
        if (t > top) {
            top = t;
            best = int(i);
        }
    }
    return m_live[size_t(best)].event;
}

QPoint MemoryTimelineView::pointOf(int event) const
{
    if (!m_view || event < 0 || event >= eventCount())
        return {};
    const_cast<MemoryTimelineView *>(this)->ensureSamples();
    double x = xOf(event + 0.5);
    for (const StepSample &s : m_live) {
        if (s.event == event) {
            x = xOf(0.5 * (s.x0 + s.x1));
            break;
        }
    }
    return QPoint(int(std::floor(x)), int(std::lround(yOf(stepTotal(*m_view, event)))));
}

int MemoryTimelineView::relativePhase(int event) const
{
    if (!m_view)
        return -1;
    const int abs = m_view->first + event;
    int found = -1;
    for (size_t j = 0; j < m_view->phases.size(); ++j) {
        if (m_view->phases[j].event <= abs)
            found = int(j);
    }
    return found;
}

QString MemoryTimelineView::eventTooltip(int event) const
{
    if (!m_view || event < 0 || event >= eventCount())
        return {};
    const StepTimeline &t = m_view->timeline;
    const TimelineEvent &ev = t.events[size_t(m_view->first + event)];
    const TimelineTensor &tt = t.tensors[size_t(ev.tensor)];
    const int j = relativePhase(event);
    const Phase phase = j >= 0 ? m_view->phases[size_t(j)].phase : tt.phase;
    QString text = QStringLiteral("<b>%1</b>")
                       .arg(tr("Event %1 of %2, %3")
                                .arg(event + 1)
                                .arg(eventCount())
                                .arg(ComponentStyle::phaseName(phase))
                                .toHtmlEscaped());
    if (event == peakEvent())
        text += QStringLiteral(" - <b>%1</b>").arg(tr("allocated peak of the step").toHtmlEscaped());
    const QString what = QStringLiteral("<b>%1</b> (%2)")
                             .arg(tensorKindName(tt.kind).toHtmlEscaped(),
                                  ComponentStyle::name(int(componentOf(tt.kind))).toHtmlEscaped());
    text += QStringLiteral("<br>") + (ev.alloc ? tr("Allocates %1").arg(what) : tr("Frees %1").arg(what));
    text += QStringLiteral("<br>") + tr("%1, %2: %3")
                                         .arg(layerPhrase(tt.kind, tt.layer), unitPhrase(tt.unit),
                                              qs(formatBytes(tt.bytes)))
                                         .toHtmlEscaped();
    if (!ev.alloc && tt.phase != phase)
        text += QStringLiteral("<br>") +
                tr("Allocated in the %1").arg(ComponentStyle::phaseName(tt.phase)).toHtmlEscaped();
    text += QStringLiteral("<br>") + tr("After it: %1 allocated, %2 reserved")
                                         .arg(gib(stepTotal(*m_view, event)), gib(reservedAt(event)))
                                         .toHtmlEscaped();
    const QString &formula = m_formulas[size_t(tt.phase)][size_t(componentOf(tt.kind))];
    if (!formula.isEmpty())
        text += QStringLiteral("<br><b>%1</b> %2").arg(tr("Formula:"), formula.toHtmlEscaped());
    return text;
}

void MemoryTimelineView::resizeEvent(QResizeEvent *event)
{
    layoutChart();
    QWidget::resizeEvent(event);
}

void MemoryTimelineView::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::FontChange ||
        event->type() == QEvent::LanguageChange) {
        layoutChart();
        update();
    }
    QWidget::changeEvent(event);
}

bool MemoryTimelineView::event(QEvent *event)
{
    if (event->type() == QEvent::ToolTip) {
        // Shown on mouse moves, per event; a help event alone (a keyboard request) shows it too.
        auto *help = static_cast<QHelpEvent *>(event);
        const int e = eventAt(help->pos());
        if (e >= 0)
            QToolTip::showText(help->globalPos(), eventTooltip(e), this);
        else
            QToolTip::hideText();
        return true;
    }
    return QWidget::event(event);
}

void MemoryTimelineView::mouseMoveEvent(QMouseEvent *event)
{
    const QPoint pos = event->position().toPoint();
    const int e = eventAt(pos);
    if (e != m_hovered) {
        m_hovered = e;
        update();
        if (e >= 0)
            QToolTip::showText(mapToGlobal(pos), eventTooltip(e), this);
        else
            QToolTip::hideText();
    }
    QWidget::mouseMoveEvent(event);
}

void MemoryTimelineView::leaveEvent(QEvent *event)
{
    if (m_hovered >= 0) {
        m_hovered = -1;
        update();
    }
    QToolTip::hideText();
    QWidget::leaveEvent(event);
}

void MemoryTimelineView::drawLegend(QPainter &p, const std::vector<LegendItem> &items, double y)
{
    const QPalette pal = palette();
    const QFontMetricsF fm(font());
    const double fh = fm.height();
    const double avail = std::max(50.0, width() - 16.0);
    double x = 8;
    for (const LegendItem &it : items) {
        const double iw = 22 + fm.horizontalAdvance(it.text) + 16;
        if (x > 8 && x - 8 + iw > avail) {
            x = 8;
            y += fh + 3;
        }
        const QRectF sw(x, y + fh / 2 - 6, 18, 12);
        if (it.kind >= 0) {
            const QColor c = ComponentStyle::color(it.kind);
            p.fillRect(sw, c);
            p.setPen(c.darker(130));
            p.drawRect(sw.adjusted(0, 0, -1, -1));
        } else {
            QPen pen(it.kind == -2 ? measuredColor(pal) : reservedColor(pal), 2);
            if (it.kind != kLegendReserved)
                pen.setStyle(Qt::DashLine);
            p.setPen(pen);
            p.drawLine(QPointF(sw.left(), sw.center().y()), QPointF(sw.right(), sw.center().y()));
        }
        p.setPen(pal.color(QPalette::Text));
        p.drawText(QRectF(x + 22, y, iw, fh), Qt::AlignLeft | Qt::AlignVCenter, it.text);
        x += iw;
    }
}

void MemoryTimelineView::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    const QPalette pal = palette();
    p.fillRect(rect(), pal.base());
    const QColor text = pal.color(QPalette::Text);
    if (!m_view || eventCount() == 0) {
        p.setPen(text);
        p.drawText(rect(), Qt::AlignCenter, tr("No timeline for this plan."));
        return;
    }
    ensureSamples();
    const QFontMetricsF fm(font());
    const double fh = fm.height();
    const int n = eventCount();
    const StepView &v = *m_view;
    QColor grid = pal.color(QPalette::Mid);
    grid.setAlpha(110);

    // Phase bands, their names above the plot: centred on the band, the narrower band's name
    // elided where two would overlap.
    QStringList phaseNames;
    for (const PhaseMark &m : v.phases)
        phaseNames << ComponentStyle::phaseName(m.phase);
    const std::vector<PhaseBand> bands =
        phaseBands(v, n, [&](double u) { return xOf(u); }, phaseNames, fm, m_plot.left(), m_plot.right(),
                   m_plot.top() - fh - 4, fh, 6, 3);
    for (size_t j = 0; j < bands.size(); ++j) {
        if (bands[j].phase == Phase::Backward) {
            QColor band = text;
            band.setAlpha(isDark(pal) ? 22 : 14);
            p.fillRect(QRectF(bands[j].x0, m_plot.top(), bands[j].x1 - bands[j].x0, m_plot.height()), band);
        }
        if (j > 0) {
            p.setPen(QPen(pal.color(QPalette::Mid), 1, Qt::DashLine));
            p.drawLine(QPointF(bands[j].x0, m_plot.top() - fh - 4), QPointF(bands[j].x0, m_plot.bottom()));
        }
    }
    p.setPen(text);
    for (const PhaseBand &band : bands)
        p.drawText(band.label, Qt::AlignHCenter | Qt::AlignBottom, band.name);

    // Over the HBM capacity: the per-rank chart's red zone.
    if (m_hbm > 0 && m_hbm < m_top) {
        QColor zone = capacityColor(pal);
        zone.setAlpha(isDark(pal) ? 50 : 30);
        p.fillRect(QRectF(m_plot.left(), m_plot.top(), m_plot.width(), yOf(m_hbm) - m_plot.top()), zone);
    }

    // Value grid and labels.
    p.setPen(text);
    for (double y = 0; y <= m_top * 1.0001; y += m_step) {
        const double py = yOf(y);
        p.setPen(QPen(grid, 1));
        p.drawLine(QPointF(m_plot.left(), py), QPointF(m_plot.right(), py));
        if (py - m_plot.top() < 0.6 * fh)
            continue; // under the unit's label
        p.setPen(text);
        p.drawText(QRectF(0, py - fh / 2, m_plot.left() - 6, fh), Qt::AlignRight | Qt::AlignVCenter,
                   QString::number(y / kGiB, 'g', 4));
    }
    p.drawText(QRectF(0, 0, m_plot.left() + 40, fh + 2), Qt::AlignLeft | Qt::AlignTop, tr("GiB"));

    // The stacked components: each filled down to zero, top of the stack first.
    std::vector<std::array<float, kComponentCount>> cum(m_live.size());
    for (size_t i = 0; i < m_live.size(); ++i) {
        float t = 0;
        for (int c = 0; c < kComponentCount; ++c) {
            t += v.live[size_t(m_live[i].event)][size_t(c)];
            cum[i][size_t(c)] = t;
        }
    }
    QPolygonF poly;
    poly.reserve(int(2 * m_live.size() + 2));
    for (int c = kComponentCount - 1; c >= 0; --c) {
        if (!m_present[size_t(c)])
            continue;
        poly.clear();
        poly << QPointF(xOf(m_live.front().x0), m_plot.bottom());
        for (size_t i = 0; i < m_live.size(); ++i)
            appendStep(poly, xOf(m_live[i].x0), xOf(m_live[i].x1), yOf(cum[i][size_t(c)]));
        poly << QPointF(xOf(m_live.back().x1), m_plot.bottom());
        p.setPen(Qt::NoPen);
        p.setBrush(ComponentStyle::color(c));
        p.drawPolygon(poly);
    }
    p.setBrush(Qt::NoBrush);

    // The allocator's reserved bytes.
    poly.clear();
    for (const StepSample &s : m_reserved)
        appendStep(poly, xOf(s.x0), xOf(s.x1), yOf(v.reserved[size_t(s.event)]));
    p.setRenderHint(QPainter::Antialiasing, true);
    p.setPen(QPen(reservedColor(pal), 2));
    p.drawPolyline(poly);

    // A measured snapshot over it, dashed: at most two points per pixel column (the column's
    // extremes), so that no peak is lost.
    if (!m_measured.x.empty()) {
        auto measuredLine = [&](const std::vector<double> &bytes, const QColor &color) {
            QPolygonF line;
            int column = INT_MIN;
            double lo = 0, hi = 0, cx = 0;
            auto flush = [&]() {
                if (column == INT_MIN)
                    return;
                line << QPointF(cx, yOf(lo));
                if (hi != lo)
                    line << QPointF(cx, yOf(hi));
            };
            for (size_t i = 0; i < m_measured.x.size(); ++i) {
                if (m_measured.x[i] < 0)
                    continue;
                const double px = xOf(m_measured.x[i]);
                const int col = int(px);
                if (col != column) {
                    flush();
                    column = col;
                    cx = px;
                    lo = hi = bytes[i];
                } else {
                    lo = std::min(lo, bytes[i]);
                    hi = std::max(hi, bytes[i]);
                }
            }
            flush();
            QPen pen(color, 1.6, Qt::DashLine);
            p.setPen(pen);
            p.drawPolyline(line);
        };
        measuredLine(m_measured.allocated, measuredColor(pal));
        measuredLine(m_measured.reserved, reservedColor(pal));
    }

    // Capacity and usable lines, their values at the right end.
    auto hline = [&](double bytes, const QPen &pen, const QString &label, bool above) {
        const double y = yOf(bytes);
        p.setPen(pen);
        p.drawLine(QPointF(m_plot.left(), y), QPointF(m_plot.right(), y));
        const double w = fm.horizontalAdvance(label) + 6;
        const QRectF r(m_plot.right() - 2 - w, above ? y - fh - 1 : y + 1, w, fh);
        QColor fill = pal.color(QPalette::Base);
        fill.setAlpha(200);
        p.fillRect(r, fill); // legible over the stack
        p.setPen(pen.color());
        p.drawText(r, Qt::AlignCenter, label);
    };
    hline(m_hbm, QPen(capacityColor(pal), 2.5), tr("HBM %1").arg(gib(m_hbm, 1)), true);
    if (m_usable > 0 && m_usable < m_hbm)
        hline(m_usable, QPen(usableColor(pal), 2, Qt::DashLine), tr("usable %1").arg(gib(m_usable, 1)),
              false);

    // The allocated peak.
    if (peakEvent() >= 0) {
        const QPoint at = pointOf(peakEvent());
        const QPointF c(at.x(), yOf(v.allocated_peak));
        p.setPen(QPen(text, 1, Qt::DotLine));
        p.drawLine(c, QPointF(c.x(), m_plot.bottom()));
        p.setPen(QPen(text, 1.5));
        p.setBrush(pal.base());
        p.drawEllipse(c, 4.5, 4.5);
        p.setBrush(Qt::NoBrush);
        QFont bold = font();
        bold.setBold(true);
        const QFontMetricsF bfm(bold);
        const QString label = peakLabel();
        const double lw = bfm.horizontalAdvance(label) + 8, lh = bfm.height() + 2;
        double lx = c.x() + 8;
        if (lx + lw > m_plot.right())
            lx = c.x() - 8 - lw;
        lx = std::max(lx, m_plot.left() + 2);
        double ly = c.y() - lh - 4;
        if (ly < m_plot.top())
            ly = c.y() + 6;
        const QRectF box(lx, ly, lw, lh);
        QColor fill = pal.color(QPalette::Base);
        fill.setAlpha(225);
        p.setPen(QPen(pal.color(QPalette::Mid), 1));
        p.setBrush(fill);
        p.drawRoundedRect(box, 3, 3);
        p.setBrush(Qt::NoBrush);
        p.setFont(bold);
        p.setPen(text);
        p.drawText(box, Qt::AlignCenter, label);
        p.setFont(font());
    }
    p.setRenderHint(QPainter::Antialiasing, false);

    // The hovered event.
    if (m_hovered >= 0) {
        QColor cross = text;
        cross.setAlpha(140);
        p.setPen(QPen(cross, 1));
        const double x = pointOf(m_hovered).x();
        p.drawLine(QPointF(x, m_plot.top()), QPointF(x, m_plot.bottom()));
    }

    // Axes: the events of the step.
    p.setPen(QPen(pal.color(QPalette::Mid), 1));
    p.drawLine(m_plot.bottomLeft(), m_plot.bottomRight());
    p.drawLine(m_plot.bottomLeft(), m_plot.topLeft());
    const double tickStep = std::max(1.0, niceStep(n * (fm.horizontalAdvance(QStringLiteral("00000")) + 30) /
                                                   std::max(1.0, m_plot.width())));
    for (double e = 0; e <= n; e += tickStep) {
        const double x = xOf(e);
        p.setPen(QPen(pal.color(QPalette::Mid), 1));
        p.drawLine(QPointF(x, m_plot.bottom()), QPointF(x, m_plot.bottom() + 3));
        p.setPen(text);
        p.drawText(QRectF(x - 40, m_plot.bottom() + 3, 80, fh), Qt::AlignHCenter | Qt::AlignTop,
                   QString::number(qint64(e)));
    }
    QString axis = tr("Allocations and frees of one steady step (event index)");
    if (v.timeline.omitted_microbatches > 0)
        axis += QLatin1Char(' ') + (v.timeline.omitted_microbatches == 1 ? tr("- 1 alike micro-batch left out")
                                                                  : tr("- %1 alike micro-batches left out").arg(v.timeline.omitted_microbatches));
    p.drawText(QRectF(m_plot.left(), m_plot.bottom() + fh + 4, m_plot.width(), fh),
               Qt::AlignHCenter | Qt::AlignTop, fm.elidedText(axis, Qt::ElideRight, m_plot.width()));

    drawLegend(p, legendItems(), m_plot.bottom() + 2 * fh + 10);
}

// --- the panel ---------------------------------------------------------------------------------

MemoryTimelinePanel::MemoryTimelinePanel(PlanDocument *document, QWidget *parent)
    : QWidget(parent), m_document(document), m_headline(new QLabel(this)),
      m_stages(new QComboBox(this)), m_stageLabel(new QLabel(tr("&Stage:"), this)),
      m_splitter(new QSplitter(Qt::Horizontal, this)), m_chart(new MemoryTimelineView),
      m_driversCaption(new QLabel), m_drivers(new QTreeWidget)
{
    setObjectName(QStringLiteral("memoryTimelinePanel"));
    m_headline->setWordWrap(true);
    m_headline->setTextFormat(Qt::RichText);
    m_headline->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_headline->setMargin(4);

    m_stages->setObjectName(QStringLiteral("timelineStage"));
    m_stages->setToolTip(tr("The pipeline stage whose ranks the chart shows"));
    m_stages->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_stageLabel->setBuddy(m_stages);
    connect(m_stages, &QComboBox::activated, this, [this](int index) {
        if (!m_updatingStages && index >= 0)
            setStage(m_stages->itemData(index).toInt());
    });

    m_import = new QPushButton(tr("Import measured..."), this);
    m_import->setObjectName(QStringLiteral("importSnapshot"));
    m_import->setToolTip(tr("Overlay a memory snapshot recorded on a device: "
                            "torch.cuda.memory._dump_snapshot() or torch_npu's (a pickle, converted "
                            "by the Python worker), or the JSON the runner's memory probe writes"));
    connect(m_import, &QPushButton::clicked, this, [this]() {
        if (hasSnapshot()) {
            clearSnapshot();
            return;
        }
        const QString path = QFileDialog::getOpenFileName(
            this, tr("Import a memory snapshot"), QString(),
            tr("Memory snapshots (*.json *.pickle *.pkl);;All files (*)"));
        if (path.isEmpty())
            return;
        QString error;
        if (!importSnapshot(path, &error))
            QMessageBox::warning(this, tr("Import a memory snapshot"), error);
    });

    auto *top = new QHBoxLayout;
    top->addWidget(m_headline, 1);
    top->addWidget(m_import, 0, Qt::AlignTop);
    top->addWidget(m_stageLabel, 0, Qt::AlignTop);
    top->addWidget(m_stages, 0, Qt::AlignTop);

    auto *side = new QWidget;
    m_side = side;
    auto *sideLayout = new QVBoxLayout(side);
    sideLayout->setContentsMargins(0, 0, 0, 0);
    m_driversCaption->setWordWrap(true);
    m_driversCaption->setTextFormat(Qt::RichText);
    m_drivers->setObjectName(QStringLiteral("peakDrivers"));
    m_drivers->setColumnCount(5);
    m_drivers->setHeaderLabels({tr("Tensors"), tr("Layers"), tr("Micro-batch"), tr("GiB"), tr("Share")});
    m_drivers->setRootIsDecorated(false);
    m_drivers->setUniformRowHeights(true);
    m_drivers->setAlternatingRowColors(true);
    m_drivers->setSelectionMode(QAbstractItemView::NoSelection);
    m_drivers->setFocusPolicy(Qt::StrongFocus);
    m_drivers->header()->setStretchLastSection(false);
    m_drivers->header()->setSectionResizeMode(0, QHeaderView::Stretch);
    for (int c = 1; c < 5; ++c)
        m_drivers->header()->setSectionResizeMode(c, QHeaderView::ResizeToContents);
    m_drivers->headerItem()->setTextAlignment(3, Qt::AlignRight | Qt::AlignVCenter);
    m_drivers->headerItem()->setTextAlignment(4, Qt::AlignRight | Qt::AlignVCenter);
    sideLayout->addWidget(m_driversCaption);
    sideLayout->addWidget(m_drivers, 1);

    // Beside the chart where the centre is wide, under it where it is not (the peak list needs
    // about 450 pixels, the chart more).
    m_splitter->addWidget(m_chart);
    m_splitter->addWidget(side);
    m_splitter->setStretchFactor(0, 3);
    m_splitter->setStretchFactor(1, 2);
    m_splitter->setChildrenCollapsible(false);
    m_splitter->setOrientation(Qt::Vertical);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(top);
    layout->addWidget(m_splitter, 1);

    connect(m_document, &PlanDocument::planChanged, this, &MemoryTimelinePanel::planChanged);
    refresh();
}

MemoryTimelinePanel::~MemoryTimelinePanel() = default;

QString MemoryTimelinePanel::title()
{
    return tr("Memory over the step");
}

void MemoryTimelinePanel::setStage(int stage)
{
    m_chosen = stage;
    refresh();
}

void MemoryTimelinePanel::planChanged()
{
    // Hidden behind another tab: recomputed when shown.
    if (isVisible())
        refresh();
    else
        m_dirty = true;
}

void MemoryTimelinePanel::showEvent(QShowEvent *event)
{
    if (m_dirty)
        refresh();
    QWidget::showEvent(event);
}

void MemoryTimelinePanel::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event);
    const Qt::Orientation o = width() >= 1100 ? Qt::Horizontal : Qt::Vertical;
    if (o != m_splitter->orientation()) {
        m_splitter->setOrientation(o);
        m_side->setContentsMargins(o == Qt::Horizontal ? 6 : 0, o == Qt::Vertical ? 4 : 0, 0, 0);
        const int total = o == Qt::Horizontal ? m_splitter->width() : m_splitter->height();
        m_splitter->setSizes({total * 3 / 5, total - total * 3 / 5});
    }
}

void MemoryTimelinePanel::updateStages()
{
    const MemoryEstimate &mem = m_document->estimate().memory;
    std::vector<int> stages;
    QStringList texts;
    int worst = -1;
    double worstNeed = -1;
    for (const RankMemory &r : mem.ranks) {
        if (std::find(stages.begin(), stages.end(), r.stage) != stages.end())
            continue;
        stages.push_back(r.stage);
        const double need = r.peak_bytes + r.reserve.total();
        texts << tr("Stage %1 (%2), %3 peak").arg(r.stage).arg(ranksText(r.count), gib(r.peak_bytes, 1));
        if (need > worstNeed) {
            worstNeed = need;
            worst = r.stage;
        }
    }
    m_stage = std::find(stages.begin(), stages.end(), m_chosen) != stages.end() ? m_chosen : worst;
    if (m_chosen >= 0 && m_stage != m_chosen)
        m_chosen = -1; // the plan no longer has that stage
    m_updatingStages = true;
    bool same = m_stages->count() == int(stages.size());
    for (int i = 0; same && i < m_stages->count(); ++i)
        same = m_stages->itemText(i) == texts.at(i) && m_stages->itemData(i).toInt() == stages[size_t(i)];
    if (!same) {
        m_stages->clear();
        for (size_t i = 0; i < stages.size(); ++i)
            m_stages->addItem(texts.at(int(i)), stages[i]);
    }
    m_stages->setCurrentIndex(m_stages->findData(m_stage));
    m_updatingStages = false;
    const bool several = stages.size() > 1;
    m_stages->setVisible(several);
    m_stageLabel->setVisible(several);
}

bool MemoryTimelinePanel::importSnapshot(const QString &path, QString *error)
{
    QString json = path;
    const bool pickle = !path.endsWith(QStringLiteral(".json"), Qt::CaseInsensitive);
    QString converted;
    if (pickle) {
        // ShardScope reads only JSON: the worker turns the pickle into it (plain data only).
        converted = path + QStringLiteral(".shardscope.json");
        QProcess p;
        const QString worker = QString::fromStdString(locateDataDir()) + QStringLiteral("/worker/shardscope_worker.py");
        p.start(QStringLiteral("python3"), {worker, QStringLiteral("--convert-snapshot"), path, converted});
        if (!p.waitForStarted(10000) || !p.waitForFinished(120000) || p.exitStatus() != QProcess::NormalExit ||
            p.exitCode() != 0) {
            if (p.state() != QProcess::NotRunning)
                p.kill();
            const QString why = QString::fromUtf8(p.readAllStandardError()).trimmed();
            *error = why.isEmpty() ? tr("%1: python3 could not convert it (%2)").arg(path, p.errorString()) : why;
            return false;
        }
        json = converted;
    }
    try {
        m_snapshot = std::make_shared<MeasuredMemory>(readMemorySnapshotFile(json.toStdString()));
    } catch (const std::exception &e) {
        *error = QString::fromUtf8(e.what());
        if (pickle)
            QFile::remove(converted);
        return false;
    }
    if (pickle)
        QFile::remove(converted);
    m_import->setText(tr("Remove measured"));
    applySnapshot();
    return true;
}

void MemoryTimelinePanel::clearSnapshot()
{
    m_snapshot.reset();
    m_import->setText(tr("Import measured..."));
    applySnapshot();
}

void MemoryTimelinePanel::applySnapshot()
{
    MemoryTimelineView::Measured m;
    if (m_snapshot && m_view) {
        const std::vector<double> x = alignToStep(*m_snapshot, *m_view);
        m.source = QString::fromStdString(m_snapshot->source);
        for (size_t i = 0; i < x.size(); ++i) {
            if (x[i] < 0)
                continue;
            m.x.push_back(x[i] - m_view->first);
            m.allocated.push_back(m_snapshot->allocated[i]);
            m.reserved.push_back(m_snapshot->reserved[i]);
            m.peakAllocated = std::max(m.peakAllocated, m_snapshot->allocated[i]);
            m.peakReserved = std::max(m.peakReserved, m_snapshot->reserved[i]);
        }
    }
    m_chart->setMeasured(std::move(m));
}

void MemoryTimelinePanel::refresh()
{
    m_dirty = false;
    const Plan &plan = m_document->plan();
    const MemoryEstimate &mem = m_document->estimate().memory;
    std::shared_ptr<StepView> view;
    if (!mem.ranks.empty()) {
        updateStages();
        try {
            view = std::make_shared<StepView>(shardscope::stepView(plan, m_document->catalog(), m_stage));
        } catch (const std::exception &) {
            view.reset();
        }
    } else {
        m_stage = -1;
        m_stages->clear();
        m_stages->hide();
        m_stageLabel->hide();
    }
    m_view = view;
    m_groups = view ? peakGroups(*view) : std::vector<PeakGroup>{};
    {
        // The engine's formulas of the shown rank, for the hover text.
        MemoryTimelineView::Formulas formulas;
        for (const RankMemory &r : mem.ranks) {
            if (r.stage != m_stage)
                continue;
            for (int ph = 0; ph < kPhaseCount; ++ph) {
                const MemoryExplanation ex = explainMemory(plan, m_document->catalog(), r, Phase(ph));
                for (int c = 0; c < kComponentCount; ++c)
                    formulas[size_t(ph)][size_t(c)] = translated(ex[size_t(c)].formula);
            }
        }
        m_chart->setFormulas(std::move(formulas));
    }
    m_chart->setStepView(m_view, mem.hbm_bytes, mem.usable_bytes);
    applySnapshot();
    fillDrivers();
    const QString text = headline();
    if (m_headline->text() != text)
        m_headline->setText(text);
}

void MemoryTimelinePanel::fillDrivers()
{
    m_drivers->clear();
    if (!m_view) {
        m_driversCaption->setText(QStringLiteral("<b>%1</b>").arg(tr("What drives the peak").toHtmlEscaped()));
        return;
    }
    const StepView &v = *m_view;
    const double peak = v.allocated_peak;
    QColor muted = palette().color(QPalette::Disabled, QPalette::WindowText);
    m_driversCaption->setText(QStringLiteral("<b>%1</b> <span style='color:%2'>%3</span>")
                                  .arg(tr("What drives the peak").toHtmlEscaped(), muted.name(),
                                       tr("- the tensors alive at the allocated peak (%1), by kind "
                                          "and micro-batch, largest first")
                                           .arg(gib(peak))
                                           .toHtmlEscaped()));
    auto share = [&](double bytes) {
        return peak > 0 ? QStringLiteral("%1 %").arg(100.0 * bytes / peak, 0, 'f', 1) : QString();
    };
    QList<QTreeWidgetItem *> items;
    const int shown = std::min(int(m_groups.size()), kDriverRows);
    const int icon = std::max(8, fontMetrics().height() - 4);
    for (int i = 0; i < shown; ++i) {
        const PeakGroup &g = m_groups[size_t(i)];
        auto *item = new QTreeWidgetItem;
        item->setText(0, tensorKindName(g.kind));
        item->setIcon(0, QIcon(swatch(int(componentOf(g.kind)), icon)));
        item->setText(1, tensorLayerText(g.kind, g.layers));
        item->setText(2, tensorUnitText(g.unit));
        item->setText(3, qs(formatFixed(g.bytes / kGiB, 2)));
        item->setText(4, share(g.bytes));
        item->setTextAlignment(3, Qt::AlignRight | Qt::AlignVCenter);
        item->setTextAlignment(4, Qt::AlignRight | Qt::AlignVCenter);
        item->setData(0, Qt::UserRole, i);
        const TimelineTensor &largest = v.timeline.tensors[size_t(g.largest)];
        const QString tip = tr("%1 (%2): %3, %4 in all; the largest %5 (%6)")
                                .arg(tensorKindName(g.kind), ComponentStyle::name(int(componentOf(g.kind))), tensorsText(g.tensors),
                                     qs(formatBytes(g.bytes)), qs(formatBytes(largest.bytes)),
                                     layerPhrase(g.kind, largest.layer));
        for (int c = 0; c < 5; ++c)
            item->setToolTip(c, tip);
        items << item;
    }
    if (int(m_groups.size()) > shown) {
        double rest = 0;
        int tensors = 0;
        for (size_t i = size_t(shown); i < m_groups.size(); ++i) {
            rest += m_groups[i].bytes;
            tensors += m_groups[i].tensors;
        }
        auto *item = new QTreeWidgetItem;
        item->setText(0, (int(m_groups.size()) - shown == 1 ? tr("1 more group") : tr("%1 more groups").arg(int(m_groups.size()) - shown)));
        item->setText(3, qs(formatFixed(rest / kGiB, 2)));
        item->setText(4, share(rest));
        item->setTextAlignment(3, Qt::AlignRight | Qt::AlignVCenter);
        item->setTextAlignment(4, Qt::AlignRight | Qt::AlignVCenter);
        item->setToolTip(0, tr("%1 in smaller groups").arg(tensorsText(tensors)));
        item->setData(0, Qt::UserRole, -1);
        QFont f = item->font(0);
        f.setItalic(true);
        for (int c = 0; c < 5; ++c)
            item->setFont(c, f);
        items << item;
    }
    m_drivers->addTopLevelItems(items);
}

QString MemoryTimelinePanel::headline() const
{
    const MemoryEstimate &mem = m_document->estimate().memory;
    const RankMemory *rank = nullptr;
    for (const RankMemory &r : mem.ranks) {
        if (r.stage == m_stage) {
            rank = &r;
            break;
        }
    }
    if (!m_view || !rank)
        return tr("No timeline for this plan.");
    const StepView &v = *m_view;
    // Without a pipeline there is one stage; the kinds of rank are told by their count.
    const bool stages = m_document->plan().parallel.pp > 1;
    QString who = mem.ranks.size() <= 1 ? tr("Each rank")
                  : stages              ? tr("Stage %1 (%2)").arg(rank->stage).arg(ranksText(rank->count))
                                        : ranksText(rank->count);
    QString text;
    const int peak = v.peak_event;
    if (peak >= 0) {
        const TimelineTensor &tt = v.timeline.tensors[size_t(v.timeline.events[size_t(peak)].tensor)];
        Phase phase = tt.phase;
        for (const PhaseMark &m : v.phases)
            if (m.event <= peak)
                phase = m.phase;
        text = tr("<b>%1</b>, steady step: <b>%2</b> allocated at the peak in the %3 (%4, %5, %6); "
                  "<b>%7</b> reserved by the caching allocator.")
                   .arg(who.toHtmlEscaped(), gib(v.allocated_peak), ComponentStyle::phaseName(phase),
                        tensorKindName(tt.kind).toHtmlEscaped(), layerPhrase(tt.kind, tt.layer),
                        unitPhrase(tt.unit), gib(v.reserved_peak));
    } else {
        text = tr("<b>%1</b>: no allocations in the steady step.").arg(who.toHtmlEscaped());
    }
    if (rank->first_step_peak_bytes > v.allocated_peak * 1.0005)
        text += QLatin1Char(' ') + tr("The first step peaks higher, at %1, while the optimizer states come into being.")
                                       .arg(gib(rank->first_step_peak_bytes));
    // What stays is the engine's after-step breakdown, component by component (Megatron's
    // gradient buffer stays; DDP's set_to_none frees the gradients).
    QStringList held;
    for (int c = 0; c < kComponentCount; ++c) {
        const double bytes = rank->after_step.bytes[size_t(c)];
        if (bytes <= 0)
            continue;
        // Nothing transient outlives the step but the GEMM libraries' workspaces.
        const QString name = c == int(Component::Transient) ? tr("GEMM library workspaces")
                                                            : ComponentStyle::name(c);
        held << tr("%1 %2").arg(name.toHtmlEscaped(), gib(bytes));
    }
    text += QLatin1Char(' ') + tr("After the step <b>%1</b> stays allocated: %2.")
                                   .arg(gib(rank->after_step.total()), held.join(tr(", ")));
    if (rank->oom) {
        text += QLatin1Char(' ') +
                tr("<span style='color:%1; font-weight:bold'>Runs out of memory</span> on the "
                   "device in the %2, allocating %3 (%4).")
                    .arg(ComponentStyle::verdictColor(false, palette()).name(), stepPartName(rank->oom_step),
                         kindNameOfKey(rank->oom_tensor).toHtmlEscaped(),
                         qs(formatBytes(rank->oom_request_bytes)));
    } else {
        const double room = std::max(0.0, mem.hbm_bytes - rank->reserve.context - rank->reserve.comm_buffers);
        text += QLatin1Char(' ') + tr("It has %1 of room on the device (HBM minus context and collective buffers).")
                                       .arg(gib(room));
    }
    return text;
}

} // namespace shardscope
