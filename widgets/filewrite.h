#pragma once

#include "core/files.h"

#include <QBuffer>
#include <QByteArray>
#include <QCoreApplication>
#include <QImage>
#include <QPixmap>
#include <QString>

namespace shardscope {

/// Writes `bytes` to `path` through core's writeFileAtomically: the old file stays whole
/// unless the new one was written completely. (QSaveFile on Qt 6.4 commits a truncated or empty
/// file when its buffered flush fails on a full disk, and reports success.) On failure returns
/// false and, when `error` is given, the reason naming the file.
inline bool writeFileSafely(const QString &path, const QByteArray &bytes, QString *error)
{
    try {
        writeFileAtomically(path.toStdString(), bytes.toStdString());
        return true;
    } catch (const WriteError &e) {
        if (error)
            *error = QString::fromUtf8(e.what());
        return false;
    }
}

/// A pixmap as a PNG file, written the same way.
inline bool writePngSafely(const QString &path, const QPixmap &pixmap, QString *error)
{
    QByteArray png;
    QBuffer buffer(&png);
    if (!buffer.open(QIODevice::WriteOnly) || !pixmap.save(&buffer, "PNG")) {
        if (error)
            *error = QCoreApplication::translate("FileWrite", "Cannot encode the image as PNG");
        return false;
    }
    return writeFileSafely(path, png, error);
}

} // namespace shardscope
