#include "text.h"

namespace shardscope {

namespace {

bool isDigit(char c)
{
    return c >= '0' && c <= '9';
}

/// The placeholder starting at pattern[i] ('%' then one or two digits, not %0): its number and
/// length, or 0.
int placeholderAt(std::string_view pattern, size_t i, size_t *length)
{
    if (pattern[i] != '%' || i + 1 >= pattern.size() || !isDigit(pattern[i + 1]))
        return 0;
    int n = pattern[i + 1] - '0';
    size_t len = 2;
    if (i + 2 < pattern.size() && isDigit(pattern[i + 2])) {
        n = n * 10 + (pattern[i + 2] - '0');
        len = 3;
    }
    if (n == 0)
        return 0;
    *length = len;
    return n;
}

} // namespace

std::string substitute(std::string_view pattern, const std::vector<std::string> &args)
{
    std::string out;
    out.reserve(pattern.size() + 16 * args.size());
    for (size_t i = 0; i < pattern.size();) {
        size_t len = 0;
        const int n = placeholderAt(pattern, i, &len);
        if (n > 0 && size_t(n) <= args.size()) {
            out += args[size_t(n - 1)];
            i += len;
        } else {
            out += pattern[i];
            ++i;
        }
    }
    return out;
}

std::vector<int> placeholders(std::string_view pattern)
{
    std::vector<int> found;
    for (size_t i = 0; i < pattern.size();) {
        size_t len = 0;
        const int n = placeholderAt(pattern, i, &len);
        if (n > 0) {
            found.push_back(n);
            i += len;
        } else {
            ++i;
        }
    }
    return found;
}

std::string Text::english() const
{
    std::string out;
    for (const Phrase &p : phrases)
        out += substitute(p.text, p.args);
    return out;
}

} // namespace shardscope
