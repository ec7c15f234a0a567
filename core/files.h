#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace shardscope {

/// The most a reader takes from one input file. Plans, presets, profiles and configs are a few
/// KiB; 16 MiB keeps a wrong file (a log, a checkpoint, /dev/zero) from being read until memory
/// runs out. Profiler traces are large and get their own limit.
inline constexpr size_t kMaxInputFileBytes = size_t(16) << 20;
inline constexpr size_t kMaxTraceFileBytes = size_t(512) << 20;

/// The whole file as bytes. Throws PlanError(path, ...) when it is a directory, cannot be opened
/// or read, or holds more than `maxBytes`.
std::string readTextFile(const std::string &path, size_t maxBytes = kMaxInputFileBytes);

/// A file that could not be written (disk full, no permission, missing folder). The message
/// names the file and the cause.
class WriteError : public std::runtime_error
{
public:
    using std::runtime_error::runtime_error;
};

/// Writes `data` to `path` so that the file is either the old one or the complete new one:
/// the bytes go to a temporary file beside it, are flushed to disk, and only then renamed over
/// `path`. On any failure the temporary file is removed, `path` is left as it was, and
/// WriteError is thrown.
void writeFileAtomically(const std::string &path, const std::string &data);

} // namespace shardscope
