// shardscope-cli's helpText: it links no Qt and hands every command line that asks for help to
// shardscope-cli-qt (runsWithoutQt), so this is never reached; if it were, the verb fails with
// "internal error" (cli::run) rather than print help in a language the user did not choose.
#include "cli.h"

#include <stdexcept>

namespace shardscope::cli {

std::string helpText(const char *)
{
    throw std::logic_error(
        "help text asked of shardscope-cli, which hands help to shardscope-cli-qt");
}

} // namespace shardscope::cli
