#pragma once

#include "core/text.h"

#include <QString>
#include <string>

namespace shardscope {

/// The engine's text (explainMemory's formulas and assumptions) in the interface language:
/// each phrase's template translated in the context kTextContext, then its arguments
/// substituted. Equals Text::english() when no translation is installed.
QString translated(const Text &text);

/// What a collective carries (Collective::note, an English phrase of the communication engine)
/// in the interface language: translated in the context kCollectiveContext, as it is when no
/// translation is installed or the phrase has none.
QString translatedNote(const std::string &note);

} // namespace shardscope
