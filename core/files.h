#pragma once

#include <string>

namespace shardscope {

/// The whole file as bytes. Throws PlanError(path, "cannot be read ...") when it cannot be opened
/// or read.
std::string readTextFile(const std::string &path);

} // namespace shardscope
