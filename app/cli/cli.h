#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace shardscope {
class Catalog;
struct Plan;
}

namespace shardscope::cli {

/// Exit statuses of shardscope-cli.
enum ExitCode { ExitOk = 0, ExitFailure = 1, ExitBadInput = 2 };

/// Runs the command line (args without the program name). Testable in-process.
int run(const std::vector<std::string> &args, std::ostream &out, std::ostream &err);

// Verbs. Each returns an exit code; args exclude the verb.
int estimateCommand(const std::vector<std::string> &args, std::ostream &out, std::ostream &err);
/// `report PLAN... -o FILE.pdf`: the PDF plan report (cli_report.cpp, library
/// shardscope_cli_report; needs Qt Gui).
int reportCommand(const std::vector<std::string> &args, std::ostream &out, std::ostream &err);

/// shardscope-cli links no Qt: Qt Core's libraries alone take 9 of a process's 13 ms to start on
/// a 2-core virtual machine, and estimate, search and compare print no translated text. What
/// needs Qt (the help, in the interface language; bench, which runs its worker through
/// QProcess; report, which draws with Qt Gui) it hands to the program shardscope-cli-qt
/// (qtProgram(); app/cli/main.cpp), the same command line with those linked in. A program that
/// links them calls these (shardscope-cli-qt itself, the tests) to run them in process.
void useInProcessReport(); ///< cli_report.cpp
void useInProcessBench();  ///< cli_bench.cpp
using Verb = int (*)(const std::vector<std::string> &, std::ostream &, std::ostream &);
namespace detail {
void registerVerb(const char *name, Verb verb); ///< what useInProcessReport / Bench do
}
/// The help texts (usage), in the interface language: Qt's translation, context
/// "shardscope-cli" (cli_help.cpp), in a program that links Qt. shardscope-cli never prints them
/// (it hands every command line that asks for help to shardscope-cli-qt); there it throws
/// std::logic_error (cli_help_plain.cpp).
std::string helpText(const char *source);
/// Whether shardscope-cli runs `args` (the verb first) itself: estimate, search and compare,
/// without --help or -h (the only way they print help), and --version. Every other command
/// line goes to shardscope-cli-qt.
bool runsWithoutQt(const std::vector<std::string> &args);
/// Where shardscope-cli-qt is for the running program: beside it (a build tree), else in
/// <prefix>/<libexecdir>/shardscope/ of the prefix it is installed under. `looked` gets the
/// places tried, for an error. Empty when neither holds it.
std::string qtProgram(std::vector<std::string> *looked = nullptr);
/// `search PLAN [--top N] [--global-batch N] [--no-offload] [--format table|json]`: the layout
/// search (cli_search.cpp).
int searchCommand(const std::vector<std::string> &args, std::ostream &out, std::ostream &err);
/// `compare PLAN PLAN... [--format table|json]`: plans side by side (cli_search.cpp).
int compareCommand(const std::vector<std::string> &args, std::ostream &out, std::ostream &err);
/// Runs the plan's kernels on the attached device (cli_bench.cpp).
int benchCommand(const std::vector<std::string> &args, std::ostream &out, std::ostream &err);

/// The human-readable estimate table (also used by golden tests).
std::string estimateTable(const std::string &planText);
std::string estimateTable(const Plan &plan);

/// "FILE: message", unless the message already starts with FILE.
std::string located(const std::string &file, const std::string &message);

/// The model as the tables name it: its preset, else its display name, else "custom shape"
/// (a plan that gives the fields itself).
std::string modelName(const Plan &plan);

/// The built-in catalog. Prints what loading it noticed (a skipped user device profile, a user
/// device folder that is a file) on `err`, once per process.
const Catalog &catalog(std::ostream &err);
/// Reads and parses a plan file (relative paths in it resolve against its folder) and prints
/// its warnings (unknown fields, with the field they likely misspell) on `err`, naming the
/// file. `hfConfig`, when not empty, replaces the plan's model with that Hugging Face
/// config.json. Throws PlanError.
Plan readPlan(const std::string &file, std::ostream &err, const std::string &hfConfig = {});

} // namespace shardscope::cli
