#include "reuseparam.h"

#include <algorithm>

namespace shardscope {

namespace {
constexpr double kTransposeBlock = 4096.0 * 4096.0; // TRANSPOSE_BF16_BLOCK_SIZE, bf16 values
constexpr double kBf16 = 2.0;
} // namespace

double reuseFp32ConversionBytes(double shardGroup, double largestElements, double shardElements)
{
    if (shardGroup <= 1)
        return 2.0 * largestElements * kBf16; // the transposed copy of one parameter's bf16 view
    // The zeroed workspace and the transposed copy of one block of it.
    const double workspace = 2.0 * kTransposeBlock * kBf16;
    return workspace + 2.0 * std::min(kTransposeBlock, std::max(0.0, shardElements)) * kBf16;
}

} // namespace shardscope
