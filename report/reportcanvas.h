#pragma once

#include "core/memory.h"

#include <QColor>
#include <QFont>
#include <QPainter>
#include <QString>
#include <QStringList>
#include <array>
#include <utility>
#include <vector>

class QPdfWriter;

namespace shardscope {

struct StepView;

/// Lays out a report on the pages of a QPdfWriter from top to bottom: text, tables that break
/// across pages with their header repeated, a verdict box and stacked bar charts, all drawn as
/// vector graphics with extractable text. Lengths in the interface are typographic points.
class ReportCanvas
{
public:
    enum TextSize
    {
        Tiny,
        Small,
        Body
    };

    struct Cell
    {
        Cell() = default;
        explicit Cell(const QString &t) : text(t) {}

        QString text;
        bool bold = false;
        bool alignRight = false;
        QColor color;         ///< invalid: the default ink
        QColor swatch;        ///< a colour square before the text (invalid: none)
        bool hatched = false; ///< the swatch is hatched (the runtime reserve)
    };
    using Row = std::vector<Cell>;

    struct Bar
    {
        QString label;
        std::array<double, kComponentCount> components{}; ///< bytes
        double reserve = 0;  ///< runtime reserve, stacked last and hatched
        double capacity = 0; ///< HBM
        double usable = 0;   ///< HBM minus the largest runtime reserve
        bool emphasis = false;
    };

    /// A step over its allocation events (core/stepview.h): what stepChart() draws.
    struct StepFigure
    {
        const StepView *view = nullptr;
        double capacity = 0; ///< HBM
        double usable = 0;   ///< HBM minus the largest runtime reserve
        QStringList phases;  ///< the names of view->phases
        /// The components, then "reserved", "HBM capacity", "usable" (the legend and line labels).
        QStringList names;
        QString peakLabel;   ///< written beside the allocated peak's marker
        QString axisTitle;   ///< under the event axis
        QString heading;     ///< drawn above the figure, on its page (may be empty)
        QString intro;       ///< a paragraph between the heading and the figure (may be empty)
        QString caption;     ///< a small paragraph under the figure, on its page (may be empty)
    };

    explicit ReportCanvas(QPdfWriter &writer);

    /// Footer text on every page, and how the page number is written.
    void setFooter(const QString &text, QString (*pageText)(int page));
    void begin();
    void end();
    void newPage();
    /// Starts a new page unless `points` of height are left on this one; true when it did.
    bool keepSpace(double points);
    /// The height that content may fill on a page, in points (inside the margins, above the
    /// footer).
    double pageHeightPoints() const;

    void title(const QString &text);
    void heading(const QString &text);
    void subheading(const QString &text);
    void paragraph(const QString &text, TextSize size = Body, const QColor &color = {});
    void space(double points);
    /// A coloured box: the verdict word in large type and the detail below it.
    void verdict(bool good, const QString &word, const QString &detail);
    /// Two-column table of labels and values, without a header.
    void keyValues(const std::vector<std::pair<QString, QString>> &rows);
    /// A table whose column widths are fractions of the text width. An empty header row is
    /// not drawn. With `span`, a cell extends over the empty cells that follow it.
    void table(const std::vector<double> &widths, const Row &header, const std::vector<Row> &rows,
               TextSize size = Small, bool span = false);
    /// Horizontal stacked bars with a GiB axis, the capacity (solid) and usable (dashed) lines
    /// and a legend. `names`: the components, the runtime reserve, "HBM capacity", "usable".
    void stackedBars(const std::vector<Bar> &bars, const QStringList &names);
    /// The allocated bytes of a step stacked by component over its events, the allocator's
    /// reserved bytes as a line, the phases as bands, the allocated peak marked, the capacity
    /// (solid) and usable (dashed) lines and a legend; one column's lowest and highest values
    /// where the events outnumber the columns. The figure, its heading, intro and caption stay
    /// on one page: on this one when its plot fits in what is left at no less than two thirds
    /// of its full height, else on the next.
    void stepChart(const StepFigure &figure);

    static QColor componentColor(int component); ///< kComponentCount: the runtime reserve
    static QColor muted();
    static QColor good();
    static QColor bad();

private:
    double pt(double points) const { return points * m_scale; }
    QFont font(double points, bool bold = false) const;
    QFont font(TextSize size, bool bold = false) const;
    double textHeight(const QString &text, const QFont &f, double width, int flags);
    void ensure(double height);
    double bottom() const;
    void drawFooter();
    void drawHatch(const QRectF &rect, const QColor &background);
    /// How far each cell's text moves down so that the first lines share a baseline.
    std::vector<double> baselineShifts(const std::vector<double> &xs, const Row &row, TextSize size,
                                       bool header, bool span);
    double rowHeight(const std::vector<double> &xs, const Row &row, TextSize size, bool header,
                     bool span);
    void drawRow(const std::vector<double> &xs, const Row &row, TextSize size, bool header,
                 bool span, double height);

    QPdfWriter &m_writer;
    QPainter m_painter;
    double m_scale = 1;  ///< device pixels per point
    double m_width = 0;  ///< text width, device pixels
    double m_height = 0; ///< page height inside the margins, device pixels
    double m_y = 0;
    int m_page = 1;
    QString m_footer;
    QString (*m_pageText)(int) = nullptr;
};

} // namespace shardscope
