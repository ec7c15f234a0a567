#include "richtextlabel.h"

#include <QAbstractTextDocumentLayout>
#include <QApplication>
#include <QClipboard>
#include <QContextMenuEvent>
#include <QEvent>
#include <QMenu>
#include <QPainter>
#include <cmath>

namespace shardscope {

RichTextLabel::RichTextLabel(QWidget *parent) : QWidget(parent)
{
    QSizePolicy policy(QSizePolicy::Preferred, QSizePolicy::Preferred);
    policy.setHeightForWidth(true);
    setSizePolicy(policy);
    m_document.setDocumentMargin(0);
    m_document.setUndoRedoEnabled(false);
    m_document.setDefaultFont(font());
}

RichTextLabel::~RichTextLabel() = default;

void RichTextLabel::setText(const QString &html)
{
    if (html == m_text)
        return;
    m_text = html;
    m_document.setHtml(html);
    textChanged();
}

void RichTextLabel::textChanged()
{
    // The size hint's width does not depend on the text: when the height at the present width
    // stays, nothing around the label needs laying out again, only this label repainting.
    const int w = width();
    const auto known = m_heights.constFind(w);
    const int before = known == m_heights.constEnd() ? -1 : *known;
    m_laidOutWidth = -2;
    m_heights.clear();
    if (w <= 0 || !isVisible() || heightForWidth(w) != before)
        updateGeometry();
    update();
}

void RichTextLabel::layOut(qreal width) const
{
    if (width == m_laidOutWidth)
        return;
    m_document.setTextWidth(width);
    m_laidOutWidth = width;
    ++m_layouts;
}

QSize RichTextLabel::sizeHint() const
{
    // A width that does not depend on the text (a line wraps to whatever the layout gives it) and
    // the height at the width the label has: one layout per text, the one painting uses.
    const QMargins m = contentsMargins();
    const int preferred = fontMetrics().averageCharWidth() * 60 + m.left() + m.right();
    return QSize(preferred, heightForWidth(width() > 0 ? width() : preferred));
}

QSize RichTextLabel::minimumSizeHint() const
{
    const QMargins m = contentsMargins();
    return QSize(fontMetrics().averageCharWidth() * 8 + m.left() + m.right(),
                 fontMetrics().height() + m.top() + m.bottom());
}

int RichTextLabel::heightForWidth(int width) const
{
    const auto found = m_heights.constFind(width);
    if (found != m_heights.constEnd())
        return *found;
    const QMargins m = contentsMargins();
    layOut(std::max(1, width - m.left() - m.right()));
    const int h = int(std::ceil(m_document.size().height())) + m.top() + m.bottom();
    m_heights.insert(width, h);
    return h;
}

void RichTextLabel::paintEvent(QPaintEvent *)
{
    const QRect r = contentsRect();
    layOut(std::max(1, r.width()));
    QPainter painter(this);
    painter.translate(r.topLeft());
    QAbstractTextDocumentLayout::PaintContext context;
    context.palette = palette();
    context.palette.setColor(QPalette::Text, palette().color(foregroundRole()));
    context.clip = QRectF(0, 0, r.width(), r.height());
    painter.setClipRect(context.clip);
    m_document.documentLayout()->draw(&painter, context);
}

void RichTextLabel::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::FontChange) {
        m_document.setDefaultFont(font());
        textChanged();
    } else if (event->type() == QEvent::PaletteChange) {
        update();
    }
    QWidget::changeEvent(event);
}

void RichTextLabel::contextMenuEvent(QContextMenuEvent *event)
{
    QMenu menu(this);
    menu.addAction(tr("&Copy text"), this, [this] { QApplication::clipboard()->setText(plainText()); });
    menu.exec(event->globalPos());
}

} // namespace shardscope
