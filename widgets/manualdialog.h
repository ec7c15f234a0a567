#pragma once

#include <QDialog>

class QTextBrowser;

namespace shardscope {

/// Help > Manual and glossary: what the window shows, the keys, the terms it uses, and links to
/// the documentation of the models behind the numbers (docs/ of the source, or the installed
/// copy).
class ManualDialog final : public QDialog
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(ManualDialog)

public:
    explicit ManualDialog(QWidget *parent = nullptr);
    ~ManualDialog() override;

    QTextBrowser *browser() const { return m_browser; }

    /// The manual as HTML; the documents are linked where `docsDir` holds them.
    static QString html(const QString &docsDir);
    /// Where the documentation lies: SHARDSCOPE_DOCS_DIR, docs/ beside the data of a source
    /// checkout, or share/doc/shardscope of an install; empty when none is found.
    static QString docsDirectory();

private:
    QTextBrowser *m_browser;
};

} // namespace shardscope
