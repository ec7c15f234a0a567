#include "reportcanvas.h"

#include "stepseries.h"

#include "core/stepview.h"
#include "core/units.h"

#include <QPdfWriter>
#include <QTextLayout>
#include <algorithm>
#include <cmath>

namespace shardscope {

namespace {

const QColor kInk(0x21, 0x21, 0x21);
const QColor kRule(0xC8, 0xC8, 0xC8);
const QColor kGrid(0xE4, 0xE4, 0xE4);
const QColor kHeaderFill(0xEF, 0xF1, 0xF4);
const QColor kCapacity(0xB7, 0x1C, 0x1C);
const QColor kUsable(0xE6, 0x7E, 0x22);
const QColor kReserved(0x26, 0x32, 0x38);
const QColor kBand(0xF2, 0xF3, 0xF5);

// The step figure's plot: its height on a page of its own, and the least it may shrink to
// where it takes the rest of a page (points).
constexpr double kStepPlotHeight = 150;
constexpr double kStepPlotMin = 100;

/// Latin first so that digits and Latin text extract from the PDF; CJK glyphs fall back.
const QStringList kFamilies{QStringLiteral("DejaVu Sans"), QStringLiteral("Noto Sans CJK SC")};

double niceStep(double raw)
{
    if (raw <= 0)
        return 1;
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
        if (raw <= m * mag)
            return m * mag;
    }
    return 10 * mag;
}

} // namespace

ReportCanvas::ReportCanvas(QPdfWriter &writer) : m_writer(writer) {}

QColor ReportCanvas::componentColor(int component)
{
    // Tableau 10, the workbench's component colours.
    static const QColor colors[kComponentCount + 1] = {
        QColor(0x4E, 0x79, 0xA7), QColor(0x76, 0xB7, 0xB2), QColor(0x59, 0xA1, 0x4F),
        QColor(0xED, 0xC9, 0x48), QColor(0xF2, 0x8E, 0x2B), QColor(0xE1, 0x57, 0x59),
        QColor(0xB0, 0x7A, 0xA1), QColor(0xFF, 0x9D, 0xA7), QColor(0x9C, 0x95, 0x8F),
    };
    return component >= 0 && component <= kComponentCount ? colors[component] : QColor(Qt::gray);
}

QColor ReportCanvas::muted()
{
    return QColor(0x5F, 0x63, 0x68);
}

QColor ReportCanvas::good()
{
    return QColor(0x1B, 0x7F, 0x3B);
}

QColor ReportCanvas::bad()
{
    return QColor(0xB7, 0x1C, 0x1C);
}

void ReportCanvas::setFooter(const QString &text, QString (*pageText)(int))
{
    m_footer = text;
    m_pageText = pageText;
}

void ReportCanvas::begin()
{
    m_painter.begin(&m_writer);
    m_painter.setRenderHint(QPainter::Antialiasing);
    m_scale = m_writer.resolution() / 72.0;
    m_width = m_writer.width();
    m_height = m_writer.height();
    m_y = 0;
    m_page = 1;
}

void ReportCanvas::end()
{
    drawFooter();
    m_painter.end();
}

void ReportCanvas::newPage()
{
    drawFooter();
    m_writer.newPage();
    m_y = 0;
    ++m_page;
}

QFont ReportCanvas::font(double points, bool bold) const
{
    QFont f;
    f.setFamilies(kFamilies);
    f.setPointSizeF(points);
    f.setBold(bold);
    f.setHintingPreference(QFont::PreferNoHinting);
    // No ligatures: "fi" must extract as two letters, not U+FB01.
    f.setStyleStrategy(QFont::PreferNoShaping);
    return f;
}

QFont ReportCanvas::font(TextSize size, bool bold) const
{
    switch (size) {
    case Tiny:
        return font(6.5, bold);
    case Small:
        return font(7.5, bold);
    case Body:
        break;
    }
    return font(9.0, bold);
}

double ReportCanvas::textHeight(const QString &text, const QFont &f, double width, int flags)
{
    if (text.isEmpty())
        return 0;
    m_painter.setFont(f);
    return m_painter.boundingRect(QRectF(0, 0, width, 1e7), flags, text).height();
}

double ReportCanvas::bottom() const
{
    return m_height - pt(20);
}

void ReportCanvas::ensure(double height)
{
    if (m_y > 0 && m_y + height > bottom())
        newPage();
}

void ReportCanvas::drawFooter()
{
    const QFont f = font(Tiny);
    m_painter.setFont(f);
    const double y = m_height - pt(11);
    m_painter.setPen(QPen(kRule, pt(0.5)));
    m_painter.drawLine(QPointF(0, y - pt(3)), QPointF(m_width, y - pt(3)));
    m_painter.setPen(muted());
    const QRectF r(0, y, m_width, pt(10));
    m_painter.drawText(r, Qt::AlignLeft | Qt::AlignTop, m_footer);
    if (m_pageText)
        m_painter.drawText(r, Qt::AlignRight | Qt::AlignTop, m_pageText(m_page));
}

void ReportCanvas::title(const QString &text)
{
    const QFont f = font(16, true);
    const int flags = Qt::TextWordWrap | Qt::AlignLeft | Qt::AlignTop;
    const double h = textHeight(text, f, m_width, flags);
    ensure(h + pt(60));
    m_painter.setFont(f);
    m_painter.setPen(kInk);
    m_painter.drawText(QRectF(0, m_y, m_width, h), flags, text);
    m_y += h + pt(4);
}

void ReportCanvas::heading(const QString &text)
{
    const QFont f = font(11.5, true);
    const int flags = Qt::TextWordWrap | Qt::AlignLeft | Qt::AlignTop;
    const double h = textHeight(text, f, m_width, flags);
    m_y += pt(8);
    ensure(h + pt(70)); // keep with what follows
    m_painter.setFont(f);
    m_painter.setPen(kInk);
    m_painter.drawText(QRectF(0, m_y, m_width, h), flags, text);
    m_y += h + pt(2);
    m_painter.setPen(QPen(kRule, pt(0.6)));
    m_painter.drawLine(QPointF(0, m_y), QPointF(m_width, m_y));
    m_y += pt(4);
}

void ReportCanvas::subheading(const QString &text)
{
    const QFont f = font(9.5, true);
    const int flags = Qt::TextWordWrap | Qt::AlignLeft | Qt::AlignTop;
    const double h = textHeight(text, f, m_width, flags);
    m_y += pt(5);
    ensure(h + pt(50));
    m_painter.setFont(f);
    m_painter.setPen(kInk);
    m_painter.drawText(QRectF(0, m_y, m_width, h), flags, text);
    m_y += h + pt(3);
}

void ReportCanvas::paragraph(const QString &text, TextSize size, const QColor &color)
{
    const QFont f = font(size);
    const int flags = Qt::TextWordWrap | Qt::AlignLeft | Qt::AlignTop;
    const double h = textHeight(text, f, m_width, flags);
    ensure(h);
    m_painter.setFont(f);
    m_painter.setPen(color.isValid() ? color : kInk);
    m_painter.drawText(QRectF(0, m_y, m_width, h), flags, text);
    m_y += h + pt(3);
}

void ReportCanvas::space(double points)
{
    m_y += pt(points);
}

void ReportCanvas::verdict(bool isGood, const QString &word, const QString &detail)
{
    const QColor strong = isGood ? good() : bad();
    const QColor fill = isGood ? QColor(0xE8, 0xF5, 0xEC) : QColor(0xFD, 0xEC, 0xEA);
    const double stripe = pt(4);
    const double inset = pt(8);
    const double textW = m_width - stripe - 2 * inset;
    const int flags = Qt::TextWordWrap | Qt::AlignLeft | Qt::AlignTop;
    const QFont wordFont = font(14, true);
    const QFont detailFont = font(Body);
    const double hw = textHeight(word, wordFont, textW, flags);
    const double hd = textHeight(detail, detailFont, textW, flags);
    const double h = inset + hw + pt(3) + hd + inset;
    m_y += pt(4);
    ensure(h);
    const QRectF box(0, m_y, m_width, h);
    m_painter.fillRect(box, fill);
    m_painter.fillRect(QRectF(0, m_y, stripe, h), strong);
    m_painter.setFont(wordFont);
    m_painter.setPen(strong);
    m_painter.drawText(QRectF(stripe + inset, m_y + inset, textW, hw), flags, word);
    m_painter.setFont(detailFont);
    m_painter.setPen(kInk);
    m_painter.drawText(QRectF(stripe + inset, m_y + inset + hw + pt(3), textW, hd), flags, detail);
    m_y += h + pt(4);
}

void ReportCanvas::keyValues(const std::vector<std::pair<QString, QString>> &rows)
{
    std::vector<Row> table;
    for (const auto &[key, value] : rows) {
        Cell k{key};
        k.bold = true;
        k.color = muted();
        table.push_back({k, Cell{value}});
    }
    this->table({0.2, 0.8}, {}, table, Small);
}

std::vector<double> ReportCanvas::baselineShifts(const std::vector<double> &xs, const Row &row,
                                                TextSize size, bool header, bool span)
{
    // A line holding CJK text takes the fallback font's taller ascent: its baseline sits lower
    // than a Latin-only line's. Each cell moves down to the row's lowest first baseline.
    const double pad = pt(2);
    std::vector<double> ascent(row.size(), 0.0);
    double most = 0;
    for (size_t i = 0; i < row.size() && i + 1 < xs.size(); ++i) {
        size_t end = i + 1;
        while (span && end < row.size() && row[end].text.isEmpty() && !row[end].swatch.isValid())
            ++end;
        if (!row[i].text.isEmpty()) {
            const double swatch = row[i].swatch.isValid() ? pt(9) : 0;
            const double w = xs[std::min(end, xs.size() - 1)] - xs[i] - 2 * pad - swatch;
            QTextLayout layout(row[i].text, font(size, header || row[i].bold), &m_writer);
            layout.beginLayout();
            QTextLine line = layout.createLine();
            if (line.isValid()) {
                line.setLineWidth(std::max(1.0, w));
                ascent[i] = line.ascent();
            }
            layout.endLayout();
            most = std::max(most, ascent[i]);
        }
        if (span)
            i = end - 1;
    }
    for (double &a : ascent)
        a = a > 0 ? most - a : 0.0;
    return ascent;
}

double ReportCanvas::rowHeight(const std::vector<double> &xs, const Row &row, TextSize size,
                               bool header, bool span)
{
    const double pad = pt(2);
    const std::vector<double> shift = baselineShifts(xs, row, size, header, span);
    double h = 0;
    for (size_t i = 0; i < row.size() && i + 1 < xs.size(); ++i) {
        size_t end = i + 1;
        while (span && end < row.size() && row[end].text.isEmpty() && !row[end].swatch.isValid())
            ++end;
        const double swatch = row[i].swatch.isValid() ? pt(9) : 0;
        const double w = xs[std::min(end, xs.size() - 1)] - xs[i] - 2 * pad - swatch;
        h = std::max(h, shift[i] + textHeight(row[i].text, font(size, header || row[i].bold), w,
                                              Qt::TextWordWrap | Qt::AlignTop));
        if (span)
            i = end - 1;
    }
    return h + 2 * pad;
}

void ReportCanvas::drawRow(const std::vector<double> &xs, const Row &row, TextSize size,
                           bool header, bool span, double height)
{
    const double pad = pt(2);
    const std::vector<double> shift = baselineShifts(xs, row, size, header, span);
    if (header)
        m_painter.fillRect(QRectF(0, m_y, m_width, height), kHeaderFill);
    for (size_t i = 0; i < row.size() && i + 1 < xs.size(); ++i) {
        size_t end = i + 1;
        while (span && end < row.size() && row[end].text.isEmpty() && !row[end].swatch.isValid())
            ++end;
        const Cell &c = row[i];
        double x = xs[i] + pad;
        const double right = xs[std::min(end, xs.size() - 1)] - pad;
        const QFont f = font(size, header || c.bold);
        if (c.swatch.isValid()) {
            const double s = pt(6);
            const QFontMetricsF fm(f, &m_writer);
            const QRectF sw(x, m_y + pad + shift[i] + (fm.height() - s) / 2, s, s);
            if (c.hatched)
                drawHatch(sw, c.swatch);
            else
                m_painter.fillRect(sw, c.swatch);
            x += pt(9);
        }
        m_painter.setFont(f);
        m_painter.setPen(c.color.isValid() ? c.color : (header ? muted() : kInk));
        const int flags =
            Qt::TextWordWrap | Qt::AlignTop | (c.alignRight ? Qt::AlignRight : Qt::AlignLeft);
        m_painter.drawText(QRectF(x, m_y + pad + shift[i], right - x, height - 2 * pad - shift[i]),
                           flags, c.text);
        if (span)
            i = end - 1;
    }
    m_painter.setPen(QPen(header ? kRule.darker(115) : kGrid, pt(0.5)));
    m_painter.drawLine(QPointF(0, m_y + height), QPointF(m_width, m_y + height));
}

void ReportCanvas::table(const std::vector<double> &widths, const Row &header,
                         const std::vector<Row> &rows, TextSize size, bool span)
{
    std::vector<double> xs{0};
    for (double w : widths)
        xs.push_back(xs.back() + w * m_width);
    const bool hasHeader = !header.empty();
    const double hh = hasHeader ? rowHeight(xs, header, size, true, false) : 0;
    const double first = rows.empty() ? 0 : rowHeight(xs, rows.front(), size, false, span);
    ensure(hh + first);
    if (hasHeader) {
        drawRow(xs, header, size, true, false, hh);
        m_y += hh;
    }
    for (const Row &row : rows) {
        const double h = rowHeight(xs, row, size, false, span);
        if (m_y + h > bottom()) {
            newPage();
            if (hasHeader) {
                drawRow(xs, header, size, true, false, hh);
                m_y += hh;
            }
        }
        drawRow(xs, row, size, false, span, h);
        m_y += h;
    }
    m_y += pt(4);
}

void ReportCanvas::drawHatch(const QRectF &rect, const QColor &background)
{
    m_painter.fillRect(rect, background);
    m_painter.save();
    m_painter.setClipRect(rect);
    m_painter.setPen(QPen(QColor(255, 255, 255, 200), pt(0.6)));
    const double stepX = pt(2.5);
    for (double x = rect.left() - rect.height(); x < rect.right(); x += stepX)
        m_painter.drawLine(QPointF(x, rect.bottom()), QPointF(x + rect.height(), rect.top()));
    m_painter.restore();
}

void ReportCanvas::stackedBars(const std::vector<Bar> &bars, const QStringList &names)
{
    if (bars.empty())
        return;
    const QFont labelFont = font(Small);
    const QFont labelBold = font(Small, true);
    const QFont tickFont = font(Tiny);
    const QFontMetricsF fm(labelFont, &m_writer);
    const double lineH = fm.height();
    const double labelW = pt(128);
    const double valueW = pt(50);
    const double chartX = labelW;
    const double chartW = m_width - labelW - valueW;
    const double barH = pt(10);
    const double gap = pt(4);

    bool uniform = true;       // one capacity for every bar: one labelled line
    bool uniformUsable = true; // one usable size for every bar
    double maxV = 0;
    for (const Bar &b : bars) {
        double t = b.reserve;
        for (double c : b.components)
            t += c;
        maxV = std::max({maxV, t, b.capacity});
        uniform = uniform && b.capacity == bars.front().capacity;
        uniformUsable = uniformUsable && b.usable == bars.front().usable;
    }
    const double step = niceStep(maxV / kGiB / 6) * kGiB;
    const double top = std::ceil(maxV * 1.02 / step) * step;
    auto xOf = [&](double bytes) { return chartX + chartW * bytes / top; };

    // Legend layout, measured first so that the whole chart stays on one page.
    struct Item
    {
        QString text;
        int kind; // 0..kComponentCount: swatch; -1 capacity line; -2 usable line
        QPointF at;
    };
    std::vector<Item> items;
    const double sw = pt(7);
    double lx = 0;
    double ly = 0;
    for (int i = 0; i < names.size(); ++i) {
        const int kind = i <= kComponentCount ? i : (i == kComponentCount + 1 ? -1 : -2);
        const double w = sw + pt(3) + fm.horizontalAdvance(names.at(i)) + pt(10);
        if (lx + w > m_width) {
            lx = 0;
            ly += lineH + pt(2);
        }
        items.push_back({names.at(i), kind, QPointF(lx, ly)});
        lx += w;
    }
    const double legendH = ly + lineH;
    const double headH = uniform ? 2 * lineH + pt(2) : pt(2);
    const double barsH = double(bars.size()) * (barH + gap);
    const double axisH = lineH + pt(4);
    ensure(headH + barsH + axisH + pt(4) + legendH);

    const double y0 = m_y + headH;
    const double y1 = y0 + barsH;
    // Grid and axis.
    m_painter.setFont(tickFont);
    for (double v = 0; v <= top + 1; v += step) {
        const double x = xOf(v);
        m_painter.setPen(QPen(kGrid, pt(0.5)));
        m_painter.drawLine(QPointF(x, y0 - pt(2)), QPointF(x, y1));
        m_painter.setPen(muted());
        const QString t = QString::number(v / kGiB, 'g', 4);
        m_painter.drawText(QRectF(x - pt(20), y1 + pt(2), pt(40), lineH),
                           Qt::AlignHCenter | Qt::AlignTop, t);
    }
    m_painter.drawText(QRectF(xOf(top) + pt(14), y1 + pt(2), valueW, lineH),
                       Qt::AlignLeft | Qt::AlignTop, QStringLiteral("GiB"));

    // Bars.
    for (size_t i = 0; i < bars.size(); ++i) {
        const Bar &b = bars[i];
        const double y = y0 + double(i) * (barH + gap) + gap / 2;
        m_painter.setFont(b.emphasis ? labelBold : labelFont);
        m_painter.setPen(kInk);
        m_painter.drawText(QRectF(0, y + barH / 2 - lineH / 2, labelW - pt(5), lineH),
                           Qt::AlignRight | Qt::AlignVCenter, b.label);
        double x = chartX;
        double total = 0;
        for (int c = 0; c < kComponentCount; ++c) {
            const double v = b.components[size_t(c)];
            if (v <= 0)
                continue;
            const double w = chartW * v / top;
            m_painter.fillRect(QRectF(x, y, w, barH), componentColor(c));
            x += w;
            total += v;
        }
        if (b.reserve > 0) {
            const double w = chartW * b.reserve / top;
            drawHatch(QRectF(x, y, w, barH), componentColor(kComponentCount));
            x += w;
            total += b.reserve;
        }
        // The value goes after the bar, moved past a capacity or usable line it would cross.
        const QString value = QString::fromStdString(formatGiB(total));
        const double valueTextW = fm.horizontalAdvance(value);
        double vx = x + pt(3);
        std::vector<double> lines;
        if (b.capacity > 0)
            lines.push_back(xOf(b.capacity));
        if (b.usable > 0 && b.usable < b.capacity)
            lines.push_back(xOf(b.usable));
        std::sort(lines.begin(), lines.end());
        for (double lxv : lines) {
            if (lxv + pt(1) >= vx && lxv - pt(1) <= vx + valueTextW)
                vx = lxv + pt(3);
        }
        m_painter.setFont(labelFont);
        m_painter.setPen(total > b.capacity ? bad() : kInk);
        m_painter.drawText(QRectF(vx, y + barH / 2 - lineH / 2, m_width - vx, lineH),
                           Qt::AlignLeft | Qt::AlignVCenter, value);
        if (!uniform) {
            m_painter.setPen(QPen(kCapacity, pt(1.2)));
            m_painter.drawLine(QPointF(xOf(b.capacity), y - gap / 2),
                               QPointF(xOf(b.capacity), y + barH + gap / 2));
        }
        if (!uniform || !uniformUsable) {
            m_painter.setPen(QPen(kUsable, pt(1.0), Qt::DashLine));
            m_painter.drawLine(QPointF(xOf(b.usable), y - gap / 2),
                               QPointF(xOf(b.usable), y + barH + gap / 2));
        }
    }

    // Capacity and usable lines with their values above the bars.
    if (uniform) {
        // The capacity's label to the right of its line; the usable line's (left of the
        // capacity line) to the left of its own, so that neither line crosses the other's label.
        auto line = [&](double bytes, const QColor &color, Qt::PenStyle style, const QString &name,
                        double row, bool preferLeft) {
            const double x = xOf(bytes);
            m_painter.setPen(QPen(color, pt(1.2), style));
            m_painter.drawLine(QPointF(x, m_y + row * lineH + lineH / 2), QPointF(x, y1));
            const QString t = name + QLatin1Char(' ') + QString::fromStdString(formatGiB(bytes));
            m_painter.setFont(tickFont);
            m_painter.setPen(color);
            const double tw = QFontMetricsF(tickFont, &m_writer).horizontalAdvance(t) + pt(2);
            const bool left = preferLeft ? x - pt(3) - tw >= chartX : x + pt(3) + tw > m_width;
            const QRectF r = left ? QRectF(x - pt(3) - tw, m_y + row * lineH, tw, lineH)
                                  : QRectF(x + pt(3), m_y + row * lineH, tw, lineH);
            m_painter.drawText(r, Qt::AlignLeft | Qt::AlignVCenter, t);
        };
        const Bar &b = bars.front();
        line(b.capacity, kCapacity, Qt::SolidLine, names.value(kComponentCount + 1), 0, false);
        if (uniformUsable && b.usable > 0 && b.usable < b.capacity)
            line(b.usable, kUsable, Qt::DashLine, names.value(kComponentCount + 2), 1, true);
    }

    // Legend.
    const double legendY = y1 + axisH + pt(4);
    m_painter.setFont(labelFont);
    for (const Item &it : items) {
        const QPointF p(it.at.x(), legendY + it.at.y());
        const QRectF s(p.x(), p.y() + (lineH - sw) / 2, sw, sw);
        if (it.kind >= 0) {
            if (it.kind == kComponentCount)
                drawHatch(s, componentColor(it.kind));
            else
                m_painter.fillRect(s, componentColor(it.kind));
        } else {
            m_painter.setPen(QPen(it.kind == -1 ? kCapacity : kUsable, pt(1.2),
                                  it.kind == -1 ? Qt::SolidLine : Qt::DashLine));
            m_painter.drawLine(QPointF(s.center().x(), s.top() - pt(1)),
                               QPointF(s.center().x(), s.bottom() + pt(1)));
        }
        m_painter.setPen(kInk);
        m_painter.drawText(QRectF(p.x() + sw + pt(3), p.y(), m_width, lineH),
                           Qt::AlignLeft | Qt::AlignVCenter, it.text);
    }
    m_y = legendY + legendH + pt(4);
}

void ReportCanvas::stepChart(const StepFigure &f)
{
    if (!f.view || f.view->live.empty())
        return;
    const StepView &v = *f.view;
    const int n = int(v.live.size());
    const QFont labelFont = font(Small);
    const QFont labelBold = font(Small, true);
    const QFont tickFont = font(Tiny);
    const QFontMetricsF fm(labelFont, &m_writer);
    const QFontMetricsF tm(tickFont, &m_writer);
    const double lineH = fm.height();
    const double tickH = tm.height();

    // Legend: the components that hold bytes in the step, the reserved, capacity and usable lines.
    std::array<bool, kComponentCount> present{};
    for (const auto &live : v.live)
        for (int c = 0; c < kComponentCount; ++c)
            present[size_t(c)] = present[size_t(c)] || live[size_t(c)] > 0;
    struct Item
    {
        QString text;
        int kind; // a component; -1 reserved; -2 capacity; -3 usable
        QPointF at;
    };
    std::vector<Item> items;
    const double sw = pt(7);
    double lx = 0, ly = 0;
    auto addItem = [&](const QString &text, int kind) {
        const double w = sw + pt(3) + fm.horizontalAdvance(text) + pt(10);
        if (lx > 0 && lx + w > m_width) {
            lx = 0;
            ly += lineH + pt(2);
        }
        items.push_back({text, kind, QPointF(lx, ly)});
        lx += w;
    };
    for (int c = 0; c < kComponentCount; ++c)
        if (present[size_t(c)])
            addItem(f.names.value(c), c);
    addItem(f.names.value(kComponentCount), -1);
    addItem(f.names.value(kComponentCount + 1), -2);
    const bool showUsable = f.usable > 0 && f.usable < f.capacity;
    if (showUsable)
        addItem(f.names.value(kComponentCount + 2), -3);
    const double legendH = ly + lineH;

    const double axisW = pt(26);
    const double phaseH = tickH + pt(2);
    const double axisH = tickH + pt(3) + lineH + pt(2);
    // The heading and its sentence stay on the figure's page.
    const int flags = Qt::TextWordWrap | Qt::AlignLeft | Qt::AlignTop;
    double lead = 0;
    if (!f.heading.isEmpty())
        lead += pt(8) + textHeight(f.heading, font(11.5, true), m_width, flags) + pt(6);
    if (!f.intro.isEmpty())
        lead += textHeight(f.intro, font(Body), m_width, flags) + pt(3);
    // And so does its caption.
    const double caption =
        f.caption.isEmpty() ? 0 : textHeight(f.caption, font(Small), m_width, flags) + pt(3);
    // The figure flows: it takes the space left on the page when its plot keeps at least
    // kStepPlotMin points there, and starts a new page only when it does not.
    const double frame = lead + phaseH + axisH + pt(4) + legendH + pt(4) + caption;
    double plotH = pt(kStepPlotHeight);
    if (m_y > 0 && m_y + frame + plotH > bottom()) {
        const double left = bottom() - m_y - frame;
        if (left >= pt(kStepPlotMin))
            plotH = left;
        else
            newPage();
    }
    if (!f.heading.isEmpty())
        heading(f.heading);
    if (!f.intro.isEmpty())
        paragraph(f.intro);
    const QRectF plot(axisW, m_y + phaseH, m_width - axisW - pt(2), plotH);

    double top = std::max({f.capacity, v.reserved_peak, v.allocated_peak});
    top = std::max(top, kGiB) * 1.04;
    const double room = (tickH + pt(2)) / plotH; // the capacity line's label above it
    top = std::max(top, f.capacity / (1 - room));
    const double step = niceStep(top / kGiB / 6) * kGiB;
    auto xOf = [&](double u) { return plot.left() + plot.width() * u / n; };
    auto yOf = [&](double bytes) { return plot.bottom() - plot.height() * std::clamp(bytes / top, 0.0, 1.0); };

    // Phase bands: the backward shaded, the names above the plot.
    const std::vector<PhaseBand> bands = phaseBands(v, n, xOf, f.phases, tm, plot.left(), plot.right(), m_y,
                                                    tickH, pt(3), pt(1));
    for (const PhaseBand &band : bands)
        if (band.phase == Phase::Backward)
            m_painter.fillRect(QRectF(band.x0, plot.top(), band.x1 - band.x0, plot.height()), kBand);

    // Grid and value axis.
    m_painter.setFont(tickFont);
    for (double y = 0; y <= top; y += step) {
        const double py = yOf(y);
        m_painter.setPen(QPen(kGrid, pt(0.5)));
        m_painter.drawLine(QPointF(plot.left(), py), QPointF(plot.right(), py));
        if (py - plot.top() < 0.6 * tickH)
            continue;
        m_painter.setPen(muted());
        m_painter.drawText(QRectF(0, py - tickH / 2, axisW - pt(3), tickH), Qt::AlignRight | Qt::AlignVCenter,
                           QString::number(y / kGiB, 'g', 4));
    }
    m_painter.setPen(muted());
    m_painter.drawText(QRectF(0, m_y, axisW, tickH), Qt::AlignLeft | Qt::AlignTop, QStringLiteral("GiB"));
    for (size_t j = 0; j < bands.size(); ++j) {
        if (j > 0) {
            m_painter.setPen(QPen(kRule, pt(0.5), Qt::DashLine));
            m_painter.drawLine(QPointF(bands[j].x0, m_y), QPointF(bands[j].x0, plot.bottom()));
        }
        m_painter.setPen(kInk);
        m_painter.drawText(bands[j].label, Qt::AlignHCenter | Qt::AlignBottom, bands[j].name);
    }

    // The stacked components, each filled down to zero, top of the stack first.
    const int columns = std::max(50, int(plot.width() / pt(0.8)));
    const std::vector<StepSample> live = stepSamples(v, columns, false);
    auto appendStep = [](QPolygonF &poly, double x0, double x1, double y) {
        if (poly.size() >= 2 && poly.last().y() == y && poly.at(poly.size() - 2).y() == y) {
            poly.last().setX(x1);
            return;
        }
        poly << QPointF(x0, y) << QPointF(x1, y);
    };
    QPolygonF poly;
    for (int c = kComponentCount - 1; c >= 0; --c) {
        if (!present[size_t(c)])
            continue;
        poly.clear();
        poly << QPointF(xOf(live.front().x0), plot.bottom());
        for (const StepSample &s : live) {
            double t = 0;
            for (int k = 0; k <= c; ++k)
                t += double(v.live[size_t(s.event)][size_t(k)]);
            appendStep(poly, xOf(s.x0), xOf(s.x1), yOf(t));
        }
        poly << QPointF(xOf(live.back().x1), plot.bottom());
        m_painter.setPen(Qt::NoPen);
        m_painter.setBrush(componentColor(c));
        m_painter.drawPolygon(poly);
    }
    m_painter.setBrush(Qt::NoBrush);

    // The reserved line.
    poly.clear();
    for (const StepSample &s : stepSamples(v, columns, true))
        appendStep(poly, xOf(s.x0), xOf(s.x1), yOf(v.reserved[size_t(s.event)]));
    m_painter.setPen(QPen(kReserved, pt(1.0)));
    m_painter.drawPolyline(poly);

    // Capacity and usable lines, labelled at the right end.
    auto hline = [&](double bytes, const QColor &color, Qt::PenStyle style, const QString &label, bool above) {
        const double y = yOf(bytes);
        m_painter.setPen(QPen(color, pt(1.2), style));
        m_painter.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y));
        m_painter.setFont(tickFont);
        const double w = tm.horizontalAdvance(label) + pt(3);
        const QRectF r(plot.right() - pt(1) - w, above ? y - tickH - pt(0.5) : y + pt(0.5), w, tickH);
        m_painter.fillRect(r, QColor(255, 255, 255, 210)); // legible over the stack
        m_painter.setPen(color);
        m_painter.drawText(r, Qt::AlignCenter, label);
    };
    hline(f.capacity, kCapacity, Qt::SolidLine,
          f.names.value(kComponentCount + 1) + QLatin1Char(' ') + QString::fromStdString(formatGiB(f.capacity)), true);
    if (showUsable)
        hline(f.usable, kUsable, Qt::DashLine,
              f.names.value(kComponentCount + 2) + QLatin1Char(' ') + QString::fromStdString(formatGiB(f.usable)),
              false);

    // The allocated peak.
    if (v.peak_event >= 0) {
        const int e = v.peak_event - v.first;
        double x = xOf(e + 0.5);
        for (const StepSample &s : live)
            if (s.event == e)
                x = xOf(0.5 * (s.x0 + s.x1));
        const QPointF c(x, yOf(v.allocated_peak));
        m_painter.setPen(QPen(kInk, pt(0.5), Qt::DotLine));
        m_painter.drawLine(c, QPointF(c.x(), plot.bottom()));
        m_painter.setPen(QPen(kInk, pt(0.8)));
        m_painter.setBrush(Qt::white);
        m_painter.drawEllipse(c, pt(2.2), pt(2.2));
        m_painter.setBrush(Qt::NoBrush);
        const QFontMetricsF bm(labelBold, &m_writer);
        const double lw = bm.horizontalAdvance(f.peakLabel) + pt(4), lh = bm.height() + pt(1);
        double bx = c.x() + pt(4);
        if (bx + lw > plot.right())
            bx = c.x() - pt(4) - lw;
        bx = std::max(bx, plot.left() + pt(1));
        double by = c.y() - lh - pt(2);
        if (by < plot.top())
            by = c.y() + pt(3);
        const QRectF box(bx, by, lw, lh);
        m_painter.setPen(QPen(kRule, pt(0.5)));
        m_painter.setBrush(QColor(255, 255, 255, 230));
        m_painter.drawRoundedRect(box, pt(1.5), pt(1.5));
        m_painter.setBrush(Qt::NoBrush);
        m_painter.setFont(labelBold);
        m_painter.setPen(kInk);
        m_painter.drawText(box, Qt::AlignCenter, f.peakLabel);
    }

    // Event axis.
    m_painter.setPen(QPen(kRule.darker(115), pt(0.6)));
    m_painter.drawLine(plot.bottomLeft(), plot.bottomRight());
    m_painter.setFont(tickFont);
    const double tickStep = std::max(1.0, niceStep(n * pt(40) / plot.width()));
    for (double e = 0; e <= n; e += tickStep) {
        const double x = xOf(e);
        m_painter.setPen(QPen(kRule.darker(115), pt(0.5)));
        m_painter.drawLine(QPointF(x, plot.bottom()), QPointF(x, plot.bottom() + pt(2)));
        m_painter.setPen(muted());
        m_painter.drawText(QRectF(x - pt(20), plot.bottom() + pt(2), pt(40), tickH), Qt::AlignHCenter | Qt::AlignTop,
                           QString::number(qint64(e)));
    }
    m_painter.setFont(labelFont);
    m_painter.setPen(kInk);
    m_painter.drawText(QRectF(plot.left(), plot.bottom() + pt(3) + tickH, plot.width(), lineH),
                       Qt::AlignHCenter | Qt::AlignTop, f.axisTitle);

    // Legend.
    const double legendY = plot.bottom() + axisH + pt(4);
    m_painter.setFont(labelFont);
    for (const Item &it : items) {
        const QPointF p(it.at.x(), legendY + it.at.y());
        const QRectF s(p.x(), p.y() + (lineH - sw) / 2, sw, sw);
        if (it.kind >= 0) {
            m_painter.fillRect(s, componentColor(it.kind));
        } else {
            const QColor color = it.kind == -1 ? kReserved : it.kind == -2 ? kCapacity : kUsable;
            m_painter.setPen(QPen(color, pt(1.2), it.kind == -3 ? Qt::DashLine : Qt::SolidLine));
            m_painter.drawLine(QPointF(s.left(), s.center().y()), QPointF(s.right(), s.center().y()));
        }
        m_painter.setPen(kInk);
        m_painter.drawText(QRectF(p.x() + sw + pt(3), p.y(), m_width, lineH), Qt::AlignLeft | Qt::AlignVCenter,
                           it.text);
    }
    m_y = legendY + legendH + pt(4);
    if (!f.caption.isEmpty())
        paragraph(f.caption, Small, muted());
}

bool ReportCanvas::keepSpace(double points)
{
    if (m_y > 0 && m_y + pt(points) > bottom()) {
        newPage();
        return true;
    }
    return false;
}

double ReportCanvas::pageHeightPoints() const
{
    return bottom() / m_scale;
}

} // namespace shardscope
