#pragma once

#include <QString>
#include <QStringList>

namespace shardscope {

/// The interface languages: "en" (the source text) and every embedded translation
/// (translations/shardscope_<code>.ts, compiled and embedded at build time).
QStringList availableLanguages();
/// The language's own name, for menus ("English", "简体中文").
QString languageName(const QString &code);
/// The language the system locale asks for, among the available ones ("en" otherwise).
QString systemLanguage();
/// Installs the translators for `code` (empty: follow the system locale), replacing those
/// installed before; Qt then sends QEvent::LanguageChange to every widget. Needs a
/// QCoreApplication. Returns the language now in use.
QString setLanguage(const QString &code);
/// The language set by the last setLanguage() ("en" before).
QString currentLanguage();

} // namespace shardscope
