#pragma once

#include "dtype.h"
#include "errors.h"

#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <set>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace shardscope {

/// How deep a JSON document may nest. A plan nests four levels, a device profile five; the
/// readers copy and compare values recursively, so an unbounded depth (a crafted file nested
/// 100,000 levels) would exhaust the stack.
inline constexpr int kMaxJsonDepth = 64;

/// Parses JSON text read from `source` (a file name, or "" for text from elsewhere).
/// Refuses, with a PlanError naming the source and the place:
///  - a NUL byte ("a binary file, not JSON text": nlohmann's reader would stop at it and accept
///    whatever came before);
///  - nesting deeper than `maxDepth`;
///  - a key given twice in one object (JSON leaves that undefined and the last one would win
///    silently), when `rejectDuplicateKeys`;
///  - malformed JSON, with line and column.
nlohmann::json parseJsonText(const std::string &text, const std::string &source,
                             bool rejectDuplicateKeys = true, int maxDepth = kMaxJsonDepth);

/// The known key closest to `key` when it is plausibly a misspelling of it (edit distance at
/// most 2, or one is a prefix of the other), else "".
std::string closestKey(const std::string &key, const std::vector<std::string> &known);

inline std::string typeName(const nlohmann::json &v)
{
    return v.type_name();
}

/// Reads one JSON object of a plan, preset or profile, tracking the path for errors (every
/// message names the field and the rule) and the keys it has consumed, so that unknown keys
/// can be kept and reported.
class ObjectReader
{
public:
    ObjectReader(const nlohmann::json &obj, std::string path, std::vector<std::string> *warnings = nullptr)
        : m_obj(obj), m_path(std::move(path)), m_warnings(warnings)
    {
        if (!m_obj.is_object())
            throw PlanError(m_path.empty() ? std::string("plan") : m_path,
                            "must be a JSON object, not " + typeName(m_obj));
    }

    std::string field(const std::string &key) const
    {
        return m_path.empty() ? key : m_path + "." + key;
    }
    bool has(const std::string &key)
    {
        m_known.insert(key);
        return m_obj.contains(key);
    }

    const nlohmann::json *get(const std::string &key)
    {
        m_known.insert(key);
        m_seen.insert(key);
        auto it = m_obj.find(key);
        return it == m_obj.end() ? nullptr : &*it;
    }

    int64_t integer(const std::string &key, int64_t lo, int64_t hi, std::optional<int64_t> fallback)
    {
        const nlohmann::json *v = present(key, fallback.has_value());
        if (!v)
            return *fallback;
        if (v->is_number_float()) {
            const double d = v->get<double>();
            if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9e15)
                return check(key, int64_t(d), lo, hi);
            throw PlanError(field(key), "must be a whole number, not " + v->dump());
        }
        if (v->is_number_unsigned()) {
            const auto u = v->get<uint64_t>();
            if (u > uint64_t(std::numeric_limits<int64_t>::max()))
                throw PlanError(field(key), "must be between " + std::to_string(lo) + " and " +
                                                std::to_string(hi) + ", got " + v->dump());
            return check(key, int64_t(u), lo, hi);
        }
        if (!v->is_number_integer())
            throw PlanError(field(key), "must be an integer, not " + typeName(*v));
        return check(key, v->get<int64_t>(), lo, hi);
    }

    /// A finite number in [lo, hi] (in (lo, hi] when `aboveLo`); absent: `fallback`, or
    /// required when there is none.
    double number(const std::string &key, double lo, double hi,
                  std::optional<double> fallback = std::nullopt, bool aboveLo = false)
    {
        const nlohmann::json *v = present(key, fallback.has_value());
        if (!v)
            return *fallback;
        if (!v->is_number())
            throw PlanError(field(key), "must be a number, not " + typeName(*v));
        const double d = v->get<double>();
        if (!(aboveLo ? d > lo : d >= lo) || !(d <= hi))
            throw PlanError(field(key), std::string(aboveLo ? "must be above " : "must be between ") +
                                            nlohmann::json(lo).dump() +
                                            (aboveLo ? " and at most " : " and ") +
                                            nlohmann::json(hi).dump() + ", got " + v->dump());
        return d;
    }

    bool boolean(const std::string &key, std::optional<bool> fallback)
    {
        const nlohmann::json *v = present(key, fallback.has_value());
        if (!v)
            return *fallback;
        if (!v->is_boolean())
            throw PlanError(field(key), "must be true or false, not " + typeName(*v));
        return v->get<bool>();
    }

    std::string string(const std::string &key, std::optional<std::string> fallback)
    {
        const nlohmann::json *v = present(key, fallback.has_value());
        if (!v)
            return *fallback;
        if (!v->is_string())
            throw PlanError(field(key), "must be a string, not " + typeName(*v));
        return v->get<std::string>();
    }

    template<typename E>
    E choice(const std::string &key, std::initializer_list<E> options, std::optional<E> fallback)
    {
        const nlohmann::json *v = present(key, fallback.has_value());
        if (!v)
            return *fallback;
        if (!v->is_string())
            throw PlanError(field(key), "must be a string, not " + typeName(*v));
        const auto s = v->get<std::string>();
        std::string allowed;
        for (E e : options) {
            if (s == toString(e))
                return e;
            allowed += (allowed.empty() ? "" : ", ") + std::string(toString(e));
        }
        throw PlanError(field(key), "must be one of " + allowed + ", not \"" + s + "\"");
    }

    DType dtype(const std::string &key, std::initializer_list<DType> allowed, DType fallback)
    {
        const nlohmann::json *v = get(key);
        if (!v)
            return fallback;
        if (!v->is_string())
            throw PlanError(field(key), "must be a dtype string, not " + typeName(*v));
        const auto s = v->get<std::string>();
        std::string list;
        for (DType t : allowed) {
            if (s == toString(t))
                return t;
            list += (list.empty() ? "" : ", ") + std::string(toString(t));
        }
        const bool known = parseDType(s, true).has_value();
        throw PlanError(field(key), (known ? "cannot be " : "unknown dtype \"") + s +
                                        (known ? "" : "\"") + "; allowed: " + list);
    }

    /// Seconds given either as one number or per direction, `{"forward": s, "backward": s}`,
    /// each in [0, hi] (absent: fine, the reader of `raw` has its default).
    void secondsOrPerDirection(const std::string &key, double hi)
    {
        const nlohmann::json *v = get(key);
        if (!v || v->is_number()) {
            if (v && !(v->get<double>() >= 0 && v->get<double>() <= hi))
                throw PlanError(field(key), "must be between 0 and " + nlohmann::json(hi).dump() +
                                                " s, got " + v->dump());
            return;
        }
        ObjectReader r(*v, field(key));
        r.number("forward", 0, hi, 0.0);
        r.number("backward", 0, hi, 0.0);
    }

    /// Keys of the object that were never read. Each is kept (a newer version may know it) and
    /// reported as a warning naming it, with the known key it most likely misspells.
    nlohmann::json unknown() const
    {
        nlohmann::json out = nlohmann::json::object();
        const std::vector<std::string> known(m_known.begin(), m_known.end());
        for (auto it = m_obj.begin(); it != m_obj.end(); ++it) {
            if (m_seen.count(it.key()))
                continue;
            out[it.key()] = it.value();
            if (m_warnings) {
                std::string w = "unknown field \"" + field(it.key()) +
                                "\" is kept in the file but not used";
                if (const std::string near = closestKey(it.key(), known); !near.empty())
                    w += "; did you mean \"" + field(near) + "\"?";
                m_warnings->push_back(std::move(w));
            }
        }
        return out;
    }

private:
    /// The value of `key`; nullptr when it is absent and has a fallback; PlanError when it is
    /// absent and required.
    const nlohmann::json *present(const std::string &key, bool haveFallback)
    {
        const nlohmann::json *v = get(key);
        if (!v && !haveFallback)
            throw PlanError(field(key), "is required");
        return v;
    }

    int64_t check(const std::string &key, int64_t v, int64_t lo, int64_t hi) const
    {
        if (v < lo || v > hi)
            throw PlanError(field(key), "must be between " + std::to_string(lo) + " and " +
                                            std::to_string(hi) + ", got " + std::to_string(v));
        return v;
    }

    const nlohmann::json &m_obj;
    std::string m_path;
    std::vector<std::string> *m_warnings = nullptr;
    std::set<std::string> m_seen;
    std::set<std::string> m_known; ///< every key asked for, present or not
};

} // namespace shardscope
