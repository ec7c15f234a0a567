#pragma once

#include <QString>
#include <string>
#include <string_view>

namespace shardscope {

/// UTF-8 text from the core as a QString.
inline QString qs(std::string_view s)
{
    return QString::fromUtf8(s.data(), qsizetype(s.size()));
}

inline std::string toStd(const QString &s)
{
    return s.toStdString();
}

} // namespace shardscope
