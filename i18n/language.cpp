#include "language.h"

#include <QCoreApplication>
#include <QFile>
#include <QLibraryInfo>
#include <QLocale>
#include <QTranslator>
#include <memory>

namespace shardscope {

namespace {

struct Installed
{
    QString language = QStringLiteral("en");
    std::unique_ptr<QTranslator> ours;
    std::unique_ptr<QTranslator> qt;
};

Installed &installed()
{
    static Installed state;
    return state;
}

QString qmPath(const QString &code)
{
    return QStringLiteral(":/i18n/shardscope_%1.qm").arg(code);
}

} // namespace

QStringList availableLanguages()
{
    QStringList codes{QStringLiteral("en")};
    for (const QString &code : {QStringLiteral("zh_CN")}) {
        if (QFile::exists(qmPath(code)))
            codes << code;
    }
    return codes;
}

QString languageName(const QString &code)
{
    if (code == QLatin1String("zh_CN"))
        return QStringLiteral("简体中文");
    if (code == QLatin1String("en"))
        return QStringLiteral("English");
    return QLocale(code).nativeLanguageName();
}

QString systemLanguage()
{
    const QStringList available = availableLanguages();
    for (const QString &ui : QLocale().uiLanguages()) {
        QString name = ui;
        name.replace(QLatin1Char('-'), QLatin1Char('_'));
        for (const QString &code : available) {
            if (name.compare(code, Qt::CaseInsensitive) == 0 ||
                (code.startsWith(QLatin1String("zh")) &&
                 (name.startsWith(QLatin1String("zh_Hans")) ||
                  name.compare(QLatin1String("zh"), Qt::CaseInsensitive) == 0)))
                return code;
        }
        if (name.startsWith(QLatin1String("en")))
            return QStringLiteral("en");
    }
    return QStringLiteral("en");
}

QString setLanguage(const QString &code)
{
    Installed &s = installed();
    const QString wanted = code.isEmpty() ? systemLanguage() : code;
    if (!QCoreApplication::instance())
        return s.language;
    if (s.ours)
        QCoreApplication::removeTranslator(s.ours.get());
    if (s.qt)
        QCoreApplication::removeTranslator(s.qt.get());
    s.ours.reset();
    s.qt.reset();
    s.language = QStringLiteral("en");
    if (wanted == QLatin1String("en") || !availableLanguages().contains(wanted))
        return s.language;

    auto ours = std::make_unique<QTranslator>();
    if (!ours->load(qmPath(wanted)))
        return s.language;
    // Qt's own strings (standard dialogs and buttons), when the system has them.
    auto qt = std::make_unique<QTranslator>();
    if (qt->load(QStringLiteral("qtbase_") + wanted,
                 QLibraryInfo::path(QLibraryInfo::TranslationsPath)))
        QCoreApplication::installTranslator(qt.get());
    else
        qt.reset();
    QCoreApplication::installTranslator(ours.get());
    s.ours = std::move(ours);
    s.qt = std::move(qt);
    s.language = wanted;
    return s.language;
}

QString currentLanguage()
{
    return installed().language;
}

} // namespace shardscope
