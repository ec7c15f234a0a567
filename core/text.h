#pragma once

// Text the engine writes for people (the formulas and assumptions of explainMemory), kept as
// phrases so that the interface can show it in its own language. A phrase is an English
// template with Qt-style placeholders (%1, %2, ...) and the arguments the engine fills in:
// numbers with their units, dtype and option identifiers. The core renders English
// (Text::english); the Qt side translates each template first (i18n/enginetext.h).

#include <string>
#include <string_view>
#include <vector>

/// Marks a template for lupdate (translations/*.ts) and leaves it as it is: the core links no
/// Qt, the translation happens where the text is shown. Templates without words (" + ", "0")
/// are not marked; translating them would change nothing.
#ifndef QT_TRANSLATE_NOOP
#define QT_TRANSLATE_NOOP(context, text) text
#endif

namespace shardscope {

/// The translation context of the engine's templates.
inline constexpr const char *kTextContext = "MemoryExplanation";
/// The translation context of what the communication engine's collectives carry
/// (Collective::note, CommItem::note): whole phrases without placeholders.
inline constexpr const char *kCollectiveContext = "Collective";

/// One unit a translator translates as a whole: a clause or sentence with its own separators.
struct Phrase
{
    const char *text = "";         ///< English template with %1 .. %n (a string literal)
    std::vector<std::string> args; ///< what %1 .. %n stand for, in order (UTF-8)
};

/// Phrases in reading order.
struct Text
{
    std::vector<Phrase> phrases;

    Text &add(const char *text, std::vector<std::string> args = {})
    {
        phrases.push_back({text, std::move(args)});
        return *this;
    }
    bool empty() const { return phrases.empty(); }
    /// Every phrase's template with its arguments substituted, concatenated.
    std::string english() const;
};

/// `pattern` with %1 .. %99 replaced by args[0] .. args[98] in one pass: substituted arguments
/// are not scanned again (they may contain '%'), a placeholder without an argument and a '%'
/// not followed by a digit stay as they are.
std::string substitute(std::string_view pattern, const std::vector<std::string> &args);

/// The placeholder numbers in `pattern`, in order of appearance: "%2 x %1" gives {2, 1}.
std::vector<int> placeholders(std::string_view pattern);

} // namespace shardscope
