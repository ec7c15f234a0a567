#include "languagemenu.h"

#include "i18n/language.h"
#include "settingvalue.h"

#include <QActionGroup>
#include <QEvent>

namespace shardscope {

namespace {

SettingValue<QString> savedLanguage()
{
    return SettingValue<QString>(QStringLiteral("ui/language"));
}

} // namespace

LanguageMenu::LanguageMenu(QWidget *parent)
    : QMenu(parent), m_group(new QActionGroup(this)), m_system(new QAction(this))
{
    setObjectName(QStringLiteral("LanguageMenu"));
    const QString saved = savedLanguage().get();
    m_system->setCheckable(true);
    m_system->setData(QString());
    m_system->setChecked(saved.isEmpty());
    m_group->addAction(m_system);
    addAction(m_system);
    addSeparator();
    for (const QString &code : availableLanguages()) {
        // Each language in its own name, so that it can be found whatever the current one.
        QAction *a = addAction(languageName(code));
        a->setCheckable(true);
        a->setData(code);
        a->setChecked(saved == code);
        m_group->addAction(a);
    }
    connect(m_group, &QActionGroup::triggered, this,
            [this](QAction *a) { Q_EMIT languageChosen(choose(a->data().toString())); });
    retranslate();
}

LanguageMenu::~LanguageMenu() = default;

QString LanguageMenu::applySaved()
{
    return setLanguage(savedLanguage().get());
}

QString LanguageMenu::choose(const QString &code)
{
    savedLanguage().set(code);
    return setLanguage(code);
}

void LanguageMenu::retranslate()
{
    setTitle(tr("&Language"));
    m_system->setText(tr("System language (%1)").arg(languageName(systemLanguage())));
}

void LanguageMenu::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::LanguageChange)
        retranslate();
    QMenu::changeEvent(event);
}

} // namespace shardscope
