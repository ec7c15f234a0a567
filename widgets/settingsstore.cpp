#include "settingsstore.h"

#include <QDataStream>
#include <QFileDevice>
#include <QIODevice>

namespace shardscope {

namespace {

constexpr quint32 kMagic = 0x53534354; // "SSCT"
constexpr quint32 kVersion = 1;

bool readStore(QIODevice &device, QSettings::SettingsMap &map)
{
    QDataStream in(&device);
    in.setVersion(QDataStream::Qt_6_4);
    quint32 magic = 0, version = 0;
    in >> magic >> version;
    if (in.status() != QDataStream::Ok || magic != kMagic || version != kVersion)
        return false; // an unreadable store: QSettings starts empty and says FormatError
    in >> map;
    return in.status() == QDataStream::Ok;
}

bool writeStore(QIODevice &device, const QSettings::SettingsMap &map)
{
    QDataStream out(&device);
    out.setVersion(QDataStream::Qt_6_4);
    out << kMagic << kVersion << map;
    if (out.status() != QDataStream::Ok)
        return false;
    // Push the buffered bytes to the file now and see whether they arrived: returning false
    // makes QSettings drop its temporary file and keep the old one.
    if (auto *file = qobject_cast<QFileDevice *>(&device))
        return file->flush() && file->error() == QFileDevice::NoError;
    return true;
}

} // namespace

QSettings::Format settingsFormat()
{
    static const QSettings::Format format =
        QSettings::registerFormat(QStringLiteral("settings"), readStore, writeStore);
    return format;
}

void useSettingsStore()
{
    QSettings::setDefaultFormat(settingsFormat());
    QSettings store;
    if (!store.allKeys().isEmpty())
        return;
    const QSettings old(QSettings::NativeFormat, QSettings::UserScope, store.organizationName(),
                        store.applicationName());
    const QStringList keys = old.allKeys();
    for (const QString &key : keys)
        store.setValue(key, old.value(key));
    if (!keys.isEmpty())
        store.sync();
}

} // namespace shardscope
