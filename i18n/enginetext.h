#pragma once

#include "core/text.h"

#include <QString>

namespace shardscope {

/// The engine's text (explainMemory's formulas and assumptions) in the interface language:
/// each phrase's template translated in the context kTextContext, then its arguments
/// substituted. Equals Text::english() when no translation is installed.
QString translated(const Text &text);

} // namespace shardscope
