#include "enginetext.h"

#include <QCoreApplication>

namespace shardscope {

QString translated(const Text &text)
{
    QString out;
    for (const Phrase &p : text.phrases) {
        // Substituted as UTF-8 by the core, so that English here and Text::english() are one
        // code path and an argument containing '%' is never taken for a placeholder.
        const QString pattern = QCoreApplication::translate(kTextContext, p.text);
        out += QString::fromStdString(substitute(pattern.toStdString(), p.args));
    }
    return out;
}

QString translatedNote(const std::string &note)
{
    if (note.empty())
        return {};
    return QCoreApplication::translate(kCollectiveContext, note.c_str());
}

} // namespace shardscope
