#include "units.h"

#include <cmath>
#include <cstdio>

namespace shardscope {

std::string formatFixed(double v, int decimals)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

std::string formatGiB(double bytes, int decimals)
{
    return formatFixed(bytes / kGiB, decimals) + " GiB";
}

std::string formatGB(double bytes, int decimals)
{
    return formatFixed(bytes / kGB, decimals) + " GB";
}

std::string formatBytes(double bytes)
{
    const double a = std::fabs(bytes);
    if (a < 1024.0)
        return formatFixed(bytes, 0) + " B";
    if (a < kMiB)
        return formatFixed(bytes / 1024.0, 1) + " KiB";
    if (a < kGiB)
        return formatFixed(bytes / kMiB, 1) + " MiB";
    return formatFixed(bytes / kGiB, 2) + " GiB";
}

std::string formatSeconds(double s)
{
    const double a = std::fabs(s);
    if (a < 1e-3)
        return formatFixed(s * 1e6, 1) + " us";
    if (a < 1.0)
        return formatFixed(s * 1e3, 2) + " ms";
    return formatFixed(s, 3) + " s";
}

std::string formatCount(long long n)
{
    std::string digits = std::to_string(n < 0 ? -n : n);
    std::string out;
    int count = 0;
    for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
        if (count && count % 3 == 0)
            out.insert(out.begin(), ',');
        out.insert(out.begin(), *it);
        ++count;
    }
    return n < 0 ? "-" + out : out;
}

} // namespace shardscope
