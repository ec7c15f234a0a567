#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace shardscope::cli {

/// Exit statuses of shardscope-cli.
enum ExitCode { ExitOk = 0, ExitFailure = 1, ExitBadInput = 2 };

/// Runs the command line (args without the program name). Testable in-process.
int run(const std::vector<std::string> &args, std::ostream &out, std::ostream &err);

// Verbs. Each returns an exit code; args exclude the verb.
int estimateCommand(const std::vector<std::string> &args, std::ostream &out, std::ostream &err);
/// `report PLAN... -o FILE.pdf`: the PDF plan report (cli_report.cpp; needs Qt Gui).
int reportCommand(const std::vector<std::string> &args, std::ostream &out, std::ostream &err);
/// `search PLAN [--top N] [--global-batch N] [--no-offload] [--format table|json]`: the layout
/// search (cli_search.cpp).
int searchCommand(const std::vector<std::string> &args, std::ostream &out, std::ostream &err);
/// `compare PLAN PLAN... [--format table|json]`: plans side by side (cli_search.cpp).
int compareCommand(const std::vector<std::string> &args, std::ostream &out, std::ostream &err);
/// Runs the plan's kernels on the attached device (cli_bench.cpp).
int benchCommand(const std::vector<std::string> &args, std::ostream &out, std::ostream &err);

/// The human-readable estimate table (also used by golden tests).
std::string estimateTable(const std::string &planText);

} // namespace shardscope::cli
