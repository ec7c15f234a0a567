#pragma once

#include "core/measurement.h"
#include "core/workload.h"

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

/// The JSON-lines protocol between the runner and a worker process (docs/runner-protocol.md).
namespace shardscope::protocol {

inline constexpr int kVersion = 1;
inline constexpr const char *kName = "shardscope-runner";

enum class MessageType
{
    Hello,
    Result,
    ProbeResult,
    Error,
    Log,
    Done,
    Invalid
};

/// One line from a worker.
struct Message
{
    MessageType type = MessageType::Invalid;
    nlohmann::json body; ///< the whole object
    int id = -1;         ///< kernel id of result and error lines; -1 when absent
    std::string error;   ///< why the line is Invalid
};

/// Parses one line (without its newline). Anything that is not a JSON object with a known
/// "type" and the fields that type needs is Invalid, with the reason.
Message parseLine(std::string_view line);

/// "" when the hello speaks this protocol and version, else what is wrong.
std::string checkHello(const nlohmann::json &hello);
BackendInfo infoFromHello(const nlohmann::json &hello);

KernelMeasurement measurementFromResult(const nlohmann::json &result);
ProbeMeasurement probeFromResult(const nlohmann::json &result);

// Lines the runner writes (each ends with '\n').
std::string configLine(int warmup, int repeats, bool reference = false);
std::string kernelLine(int id, const Kernel &k);
std::string probeLine(const MemoryProbe &probe);
std::string endLine();

} // namespace shardscope::protocol
