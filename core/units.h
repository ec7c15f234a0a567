#pragma once

#include <string>

namespace shardscope {

inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
inline constexpr double kGB = 1e9;
inline constexpr double kMiB = 1024.0 * 1024.0;

/// "12.34 GiB" (binary units, what allocators and torch report).
std::string formatGiB(double bytes, int decimals = 2);
/// "13.25 GB" (decimal units, what datasheets and the case's rough accounting use).
std::string formatGB(double bytes, int decimals = 2);
/// Bytes in the most readable binary unit: "512 B", "24.0 MiB", "1.50 GiB".
std::string formatBytes(double bytes);
/// Seconds in the most readable unit: "12.3 us", "4.56 ms", "1.23 s".
std::string formatSeconds(double seconds);
/// Thousands separators: 6738415616 -> "6,738,415,616".
std::string formatCount(long long n);
/// Fixed-point number with `decimals` digits.
std::string formatFixed(double v, int decimals);

} // namespace shardscope
