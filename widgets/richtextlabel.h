#pragma once

#include <QHash>
#include <QTextDocument>
#include <QWidget>

namespace shardscope {

/// A word-wrapped rich-text line that is cheap to change: the text is laid out once per text and
/// width (QLabel lays its rich text out again for every size hint, height-for-width query and
/// paint). Draws with the palette's text colour; the context menu copies the text.
class RichTextLabel final : public QWidget
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(RichTextLabel)

public:
    explicit RichTextLabel(QWidget *parent = nullptr);
    ~RichTextLabel() override;

    void setText(const QString &html);
    QString text() const { return m_text; }
    /// The text without markup, as the context menu's Copy puts it on the clipboard.
    QString plainText() const { return m_document.toPlainText(); }

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;
    bool hasHeightForWidth() const override { return true; }
    int heightForWidth(int width) const override;
    /// How many times the text was laid out (for the tests: once per text and width).
    int layoutCount() const { return m_layouts; }

protected:
    void paintEvent(QPaintEvent *event) override;
    void changeEvent(QEvent *event) override;
    void contextMenuEvent(QContextMenuEvent *event) override;

private:
    /// Lays the document out at `width` (text width, margins excluded) unless it already is.
    void layOut(qreal width) const;
    void textChanged();

    QString m_text;
    mutable QTextDocument m_document;
    mutable qreal m_laidOutWidth = -2;
    mutable QHash<int, int> m_heights; ///< height for a widget width, for the current text
    mutable int m_layouts = 0;
};

} // namespace shardscope
