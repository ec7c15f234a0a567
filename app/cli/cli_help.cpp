// The help texts in the interface language, for the programs that link Qt (shardscope-cli-qt,
// the tests): Qt's translation with the translators language.cpp installs.
#include "cli.h"

#include <QCoreApplication>

namespace shardscope::cli {

std::string helpText(const char *source)
{
    return QCoreApplication::translate("shardscope-cli", source).toStdString();
}

} // namespace shardscope::cli
