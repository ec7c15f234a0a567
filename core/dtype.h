#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace shardscope {

/// Element types a plan can name. `None` is only valid for master weights ("no separate copy").
enum class DType { FP32, BF16, FP16, FP8, INT8, None };

/// Bytes per element (0 for None).
constexpr double bytesOf(DType t)
{
    switch (t) {
    case DType::FP32: return 4.0;
    case DType::BF16:
    case DType::FP16: return 2.0;
    case DType::FP8:
    case DType::INT8: return 1.0;
    case DType::None: return 0.0;
    }
    return 0.0;
}

std::string_view toString(DType t);
/// Parses "fp32", "bf16", "fp16", "fp8", "int8" (and "none" when allowNone).
std::optional<DType> parseDType(std::string_view s, bool allowNone = false);

} // namespace shardscope
