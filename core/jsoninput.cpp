#include "jsoninput.h"

#include "errors.h"

#include <algorithm>
#include <set>

namespace shardscope {

using nlohmann::json;

namespace {

/// One open object or array while parsing: its place in the document and, for an object, the
/// keys seen so far.
struct Frame
{
    std::string path;
    bool object = false;
    std::set<std::string> keys;
};

std::string childPath(const std::string &parent, const std::string &key)
{
    return parent.empty() ? key : parent + "." + key;
}

std::string where(const std::string &source, const std::string &path)
{
    if (source.empty())
        return path;
    return path.empty() ? source : source + ": " + path;
}

size_t editDistance(const std::string &a, const std::string &b)
{
    std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j)
        prev[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            const size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
        }
        std::swap(prev, cur);
    }
    return prev[b.size()];
}

} // namespace

json parseJsonText(const std::string &text, const std::string &source, bool rejectDuplicateKeys,
                   int maxDepth)
{
    if (const auto nul = text.find('\0'); nul != std::string::npos)
        throw PlanError(source, "holds a NUL byte at offset " + std::to_string(nul) +
                                    ": a binary file, not JSON text");
    std::vector<Frame> stack;
    std::string pendingKey;
    // The parser itself is iterative; the callback sees every container open and close, so it
    // can bound the depth before anything recursive (copy, compare, destroy) touches the value.
    const json::parser_callback_t callback = [&](int depth, json::parse_event_t event,
                                                 json &parsed) {
        switch (event) {
        case json::parse_event_t::object_start:
        case json::parse_event_t::array_start: {
            std::string path;
            if (!stack.empty())
                path = stack.back().object ? childPath(stack.back().path, pendingKey)
                                           : stack.back().path + "[]";
            if (depth >= maxDepth)
                throw PlanError(where(source, path),
                                "nests deeper than " + std::to_string(maxDepth) +
                                    " levels (no plan, profile or trace needs that)");
            Frame f;
            f.path = std::move(path);
            f.object = event == json::parse_event_t::object_start;
            stack.push_back(std::move(f));
            break;
        }
        case json::parse_event_t::object_end:
        case json::parse_event_t::array_end:
            if (!stack.empty())
                stack.pop_back();
            break;
        case json::parse_event_t::key:
            if (!stack.empty() && parsed.is_string()) {
                pendingKey = parsed.get<std::string>();
                if (rejectDuplicateKeys && !stack.back().keys.insert(pendingKey).second)
                    throw PlanError(where(source, childPath(stack.back().path, pendingKey)),
                                    "is given twice in the same object; keep one");
            }
            break;
        case json::parse_event_t::value:
            break;
        }
        return true;
    };
    try {
        return json::parse(text, callback);
    } catch (const json::exception &e) {
        // e.what() carries "[json.exception.parse_error.101] parse error at line 3, column 5: ..."
        // or, for a number beyond double (1e999), "[json.exception.out_of_range.406] ..."
        const std::string what = e.what();
        const auto pos = what.find("] ");
        throw PlanError(source, "malformed JSON: " +
                                    (pos == std::string::npos ? what : what.substr(pos + 2)));
    }
}

std::string closestKey(const std::string &key, const std::vector<std::string> &known)
{
    std::string best;
    if (key.size() < 3)
        return best; // too short to tell a typo from another word
    size_t bestDistance = 3;
    for (const std::string &k : known) {
        if (k == key)
            return {};
        size_t d = editDistance(key, k);
        const bool prefix = key.size() >= 3 && k.size() >= 3 &&
                            (k.rfind(key, 0) == 0 || key.rfind(k, 0) == 0);
        if (prefix)
            d = std::min<size_t>(d, 1);
        if (d < bestDistance && d < std::max<size_t>(key.size(), 2)) {
            bestDistance = d;
            best = k;
        }
    }
    return best;
}

} // namespace shardscope
