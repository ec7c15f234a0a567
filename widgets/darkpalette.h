#pragma once

#include <QPalette>

namespace shardscope {

/// The workbench's dark palette (`shardscope --dark`, with the Fusion style).
QPalette darkPalette();

/// Whether a palette is dark (its window colour): charts and verdicts pick their colours by it.
bool isDark(const QPalette &palette);

/// WCAG 2 contrast ratio of two colours, 1 (none) to 21 (black on white).
double contrastRatio(const QColor &a, const QColor &b);

} // namespace shardscope
