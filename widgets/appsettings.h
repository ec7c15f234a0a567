#pragma once

#include "settingvalue.h"

#include <QByteArray>
#include <QStringList>

namespace shardscope::settings {

inline SettingValue<QByteArray> windowGeometry() { return SettingValue<QByteArray>(QStringLiteral("window/geometry")); }
inline SettingValue<QByteArray> windowState() { return SettingValue<QByteArray>(QStringLiteral("window/state")); }
inline SettingValue<QStringList> recentFiles() { return SettingValue<QStringList>(QStringLiteral("files/recent")); }
inline SettingValue<QString> lastDirectory() { return SettingValue<QString>(QStringLiteral("files/lastDirectory")); }
inline SettingValue<int> chartPhase() { return SettingValue<int>(QStringLiteral("view/chartPhase"), 0); }

inline constexpr int kMaxRecentFiles = 8;

} // namespace shardscope::settings
