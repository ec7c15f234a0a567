#pragma once

#include "settingvalue.h"

#include <QByteArray>
#include <QDir>
#include <QFileInfo>
#include <QStandardPaths>
#include <QStringList>

namespace shardscope::settings {

inline SettingValue<QByteArray> windowGeometry() { return SettingValue<QByteArray>(QStringLiteral("window/geometry")); }
inline SettingValue<QByteArray> windowState() { return SettingValue<QByteArray>(QStringLiteral("window/state")); }
inline SettingValue<QStringList> recentFiles() { return SettingValue<QStringList>(QStringLiteral("files/recent")); }
inline SettingValue<QString> lastDirectory() { return SettingValue<QString>(QStringLiteral("files/lastDirectory")); }
inline SettingValue<int> chartPhase() { return SettingValue<int>(QStringLiteral("view/chartPhase"), 0); }

inline constexpr int kMaxRecentFiles = 8;

/// The folder a file dialog starts in: the last one used while it exists, else Documents where
/// there is one, else home. (A folder that does not exist makes Qt's dialog start in its parent
/// with the missing name typed in as the file name.)
inline QString startDirectory()
{
    for (const QString &dir : {lastDirectory().get(),
                               QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation)}) {
        if (!dir.isEmpty() && QFileInfo(dir).isDir())
            return dir;
    }
    return QDir::homePath();
}

} // namespace shardscope::settings
