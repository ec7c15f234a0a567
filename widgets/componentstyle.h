#pragma once

#include "core/memory.h"

#include <QColor>
#include <QPalette>
#include <QString>

namespace shardscope {

/// Fixed colours and translated names of the memory components. Index kComponentCount is the
/// runtime reserve.
struct ComponentStyle
{
    static constexpr int kReserve = kComponentCount;
    static constexpr int kSegments = kComponentCount + 1;

    static QColor color(int segment);
    static QString name(int segment);
    static QString phaseName(Phase phase);
    /// The colour of "Fits" / "Does not fit" on `palette`'s window, readable on light and dark.
    static QColor verdictColor(bool fits, const QPalette &palette);
};

} // namespace shardscope
