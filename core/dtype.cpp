#include "dtype.h"

namespace shardscope {

std::string_view toString(DType t)
{
    switch (t) {
    case DType::FP32: return "fp32";
    case DType::BF16: return "bf16";
    case DType::FP16: return "fp16";
    case DType::FP8: return "fp8";
    case DType::INT8: return "int8";
    case DType::None: return "none";
    }
    return "none";
}

std::optional<DType> parseDType(std::string_view s, bool allowNone)
{
    for (DType t : {DType::FP32, DType::BF16, DType::FP16, DType::FP8, DType::INT8}) {
        if (s == toString(t))
            return t;
    }
    if (allowNone && s == "none")
        return DType::None;
    return std::nullopt;
}

} // namespace shardscope
