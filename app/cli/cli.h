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

/// The report verb draws with Qt Gui, whose libraries take half of a process's start; so
/// shardscope-cli does not link it and hands `report` to the program shardscope-report
/// (reportProgram(); app/cli/main.cpp). A program that links cli_report.cpp and calls this
/// (shardscope-report itself, the tests) runs `report` in process instead.
void useInProcessReport();
using Verb = int (*)(const std::vector<std::string> &, std::ostream &, std::ostream &);
namespace detail {
void registerReport(Verb report); ///< what useInProcessReport does
}
/// Where shardscope-report is for the running program: beside it (a build tree), else in
/// <prefix>/<libexecdir>/shardscope/ of the prefix it is installed under. `looked` gets the
/// places tried, for an error. Empty when neither holds it.
std::string reportProgram(std::vector<std::string> *looked = nullptr);
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
