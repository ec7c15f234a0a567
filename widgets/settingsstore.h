#pragma once

#include <QSettings>

namespace shardscope {

/// The format of the application's one QSettings store: the settings map in a QDataStream
/// (ShardScope.settings in the user's config folder). Its writer flushes the data itself and
/// reports a failed write, so that QSettings discards the new file instead of committing a
/// truncated one (Qt 6.4's QSaveFile commits a short file when its buffered flush fails on a
/// full disk); the previous settings stay whole. Registered once.
QSettings::Format settingsFormat();

/// Makes settingsFormat() the default of every QSettings the program constructs, carrying over
/// once what an earlier version stored in the native format.
void useSettingsStore();

} // namespace shardscope
