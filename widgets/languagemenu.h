#pragma once

#include <QMenu>

class QActionGroup;

namespace shardscope {

/// The interface language: the system's by default, or one chosen here. A choice applies at
/// once (Qt sends QEvent::LanguageChange; widgets retranslate) and is remembered.
class LanguageMenu final : public QMenu
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(LanguageMenu)

public:
    explicit LanguageMenu(QWidget *parent = nullptr);
    ~LanguageMenu() override;

    /// Applies the remembered choice (none: the system locale); returns the language in use.
    static QString applySaved();
    /// Applies and remembers `code` ("" for the system's language).
    static QString choose(const QString &code);

Q_SIGNALS:
    /// A language was chosen and applied.
    void languageChosen(const QString &language);

protected:
    void changeEvent(QEvent *event) override;

private:
    void retranslate();

    QActionGroup *m_group;
    QAction *m_system;
};

} // namespace shardscope
