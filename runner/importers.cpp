// Importers of measurements taken by other tools: nccl-tests and hccl_test text output, and
// profiler traces in Chrome trace JSON.
#include "importers.h"

#include "core/errors.h"
#include "core/jsoninput.h"
#include "core/workload.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <sstream>
#include <stdexcept>

namespace shardscope {

namespace {

std::string lower(std::string s)
{
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    return s;
}

std::vector<std::string> tokens(const std::string &line)
{
    std::istringstream in(line);
    std::vector<std::string> out;
    std::string t;
    while (in >> t)
        if (t != "|")
            out.push_back(t);
    return out;
}

bool number(const std::string &s, double &v)
{
    if (s.empty())
        return false;
    char *end = nullptr;
    v = std::strtod(s.c_str(), &end);
    return end && *end == '\0';
}

std::vector<std::string> lines(const std::string &text)
{
    std::vector<std::string> out;
    std::istringstream in(text);
    std::string l;
    while (std::getline(in, l)) {
        if (!l.empty() && l.back() == '\r')
            l.pop_back();
        out.push_back(l);
    }
    return out;
}

/// A measured quantity of row `line` (1-based) must be finite and not negative: nccl-tests and
/// hccl_test print none else, so anything else is a damaged or edited file.
double measured(double v, const char *what, size_t line)
{
    if (!std::isfinite(v) || v < 0)
        throw std::runtime_error("line " + std::to_string(line) + ": " + what +
                                 " must be a finite number >= 0, got " + std::to_string(v));
    return v;
}

} // namespace

std::string collectiveFromName(const std::string &name)
{
    std::string n = lower(name);
    n.erase(std::remove_if(n.begin(), n.end(), [](char c) { return c == '_' || c == ' '; }),
            n.end());
    const bool comm = n.find("nccl") != std::string::npos || n.find("hccl") != std::string::npos ||
                      n.find("hcom") != std::string::npos || n.find("c10d") != std::string::npos ||
                      n.find("gloo") != std::string::npos || n.find("perf") != std::string::npos ||
                      n.find("test") != std::string::npos || n.find("comm") != std::string::npos;
    struct Key
    {
        const char *pattern;
        const char *name;
    };
    static const Key keys[] = {{"reducescatter", "reduce_scatter"},
                               {"allreduce", "all_reduce"},
                               {"allgather", "all_gather"},
                               {"alltoall", "all_to_all"},
                               {"broadcast", "broadcast"},
                               {"sendrecv", "send_recv"},
                               {"send", "send_recv"},
                               {"recv", "send_recv"}};
    for (const Key &k : keys)
        if (n.find(k.pattern) != std::string::npos)
            return (comm || std::string(k.name) != "send_recv") ? k.name : "";
    return {};
}

CollectiveImport parseNcclTests(const std::string &text, const std::string &hint)
{
    CollectiveImport out;
    out.tool = "nccl-tests";
    std::string coll = collectiveFromName(hint);
    int ranks = 0;
    std::vector<std::string> header;
    size_t lineNo = 0;
    for (const std::string &l : lines(text)) {
        ++lineNo;
        if (l.rfind("#", 0) == 0) {
            const std::vector<std::string> t = tokens(l.substr(1));
            if (std::find(t.begin(), t.end(), "size") != t.end() &&
                std::find(t.begin(), t.end(), "busbw") != t.end())
                header = t;
            // "#  Rank  0 Group  0 Pid ... device  0 [0x..] NVIDIA H100": one line per rank.
            if (t.size() >= 2 && t[0] == "Rank")
                ++ranks;
            const auto avg = l.find("Avg bus bandwidth");
            if (avg != std::string::npos) {
                double v = 0;
                const auto colon = l.find(':', avg);
                const std::vector<std::string> value =
                    colon == std::string::npos ? std::vector<std::string>{}
                                               : tokens(l.substr(colon + 1));
                if (!value.empty() && number(value.front(), v))
                    out.avg_busbw = measured(v, "the average bus bandwidth", lineNo) * 1e9;
            }
            if (coll.empty())
                coll = collectiveFromName(l);
            continue;
        }
        const std::vector<std::string> t = tokens(l);
        if (t.size() < 6 || header.empty())
            continue;
        double size = 0;
        if (!number(t[0], size))
            continue;
        auto col = [&](const char *name) -> int {
            for (size_t i = 0; i < header.size(); ++i)
                if (header[i] == name)
                    return int(i);
            return -1;
        };
        const int ti = col("time"), ai = col("algbw"), bi = col("busbw");
        double tu = 0, a = 0, b = 0;
        if (ti < 0 || ai < 0 || bi < 0 || size_t(ti) >= t.size() || size_t(ai) >= t.size() ||
            size_t(bi) >= t.size() || !number(t[size_t(ti)], tu) ||
            !number(t[size_t(ai)], a) || !number(t[size_t(bi)], b))
            continue;
        measured(size, "the size", lineNo);
        measured(tu, "the time", lineNo);
        measured(a, "algbw", lineNo);
        measured(b, "busbw", lineNo);
        CollectivePoint p;
        p.bytes = size;
        p.time_s = tu * 1e-6;
        p.algbw = a * 1e9;
        p.busbw = b * 1e9;
        out.points.push_back(p);
    }
    if (out.points.empty())
        throw std::runtime_error(
            "no nccl-tests result rows (size count type ... time algbw busbw)");
    for (CollectivePoint &p : out.points) {
        p.collective = coll.empty() ? "unknown" : coll;
        p.ranks = ranks;
    }
    return out;
}

CollectiveImport parseHcclTest(const std::string &text, const std::string &hint, int ranks)
{
    CollectiveImport out;
    out.tool = "hccl_test";
    std::string coll = collectiveFromName(hint);
    bool inTable = false;
    size_t lineNo = 0;
    for (const std::string &l : lines(text)) {
        ++lineNo;
        const std::string ll = lower(l);
        if (ll.find("data_size") != std::string::npos) {
            inTable = true;
            continue;
        }
        if (coll.empty())
            coll = collectiveFromName(l);
        if (!inTable)
            continue;
        const std::vector<std::string> t = tokens(l);
        double size = 0, us = 0, alg = 0;
        if (t.size() < 3 || !number(t[0], size) || !number(t[1], us) || !number(t[2], alg))
            continue;
        measured(size, "data_size", lineNo);
        measured(us, "aveg_time", lineNo);
        measured(alg, "alg_bandwidth", lineNo);
        CollectivePoint p;
        p.bytes = size;
        p.time_s = us * 1e-6;
        p.algbw = alg * 1e9;
        out.points.push_back(p);
    }
    if (out.points.empty())
        throw std::runtime_error("no hccl_test result rows (data_size aveg_time alg_bandwidth)");
    for (CollectivePoint &p : out.points) {
        p.collective = coll.empty() ? "unknown" : coll;
        p.ranks = ranks;
        p.busbw = ranks > 0 ? p.algbw * busBandwidthFactor(p.collective, ranks) : 0.0;
    }
    return out;
}

CollectiveImport parseCollectiveBenchmark(const std::string &text, const std::string &hint,
                                          int ranks)
{
    if (lower(text).find("data_size") != std::string::npos)
        return parseHcclTest(text, hint, ranks);
    CollectiveImport c = parseNcclTests(text, hint);
    if (ranks > 0)
        for (CollectivePoint &p : c.points)
            p.ranks = ranks;
    return c;
}

namespace {

using nlohmann::json;

/// Field `key` of trace event `index`: absent gives `fallback`; present, it must be a number in
/// [lo, hi] (torch.profiler writes microseconds since its start or since the epoch; an hour's
/// event is 3.6e9 us).
double eventNumber(const json &e, const char *key, double fallback, double lo, double hi,
                   size_t index)
{
    auto it = e.find(key);
    if (it == e.end() || it->is_null())
        return fallback;
    // torch_npu writes "ts" as a string ("1700000000123.456").
    double v = 0;
    if (it->is_number())
        v = it->get<double>();
    else if (!(it->is_string() && number(it->get<std::string>(), v)))
        throw std::runtime_error("traceEvents[" + std::to_string(index) + "]." + key +
                                 " must be a number, not " + it->dump());
    if (!std::isfinite(v) || v < lo || v > hi)
        throw std::runtime_error("traceEvents[" + std::to_string(index) + "]." + key +
                                 " must be between " + json(lo).dump() + " and " + json(hi).dump() +
                                 ", got " + it->dump());
    return v;
}

std::string eventString(const json &e, const char *key)
{
    auto it = e.find(key);
    return it != e.end() && it->is_string() ? it->get<std::string>() : std::string();
}

const json &eventArgs(const json &e)
{
    static const json empty = json::object();
    auto it = e.find("args");
    return it != e.end() && it->is_object() ? *it : empty;
}

} // namespace

bool looksLikeChromeTrace(const std::string &text)
{
    const auto first = text.find_first_not_of(" \t\r\n");
    return text.find("traceEvents") != std::string::npos ||
           (first != std::string::npos && text[first] == '[');
}

TraceImport parseChromeTrace(const std::string &text)
{
    json j;
    try {
        // Traces may repeat keys (some exporters do); depth is bounded all the same.
        j = parseJsonText(text, "", false);
    } catch (const PlanError &e) {
        throw std::runtime_error(std::string("not a Chrome trace: ") + e.what());
    }
    const json *events = nullptr;
    if (j.is_object() && j.contains("traceEvents") && j["traceEvents"].is_array())
        events = &j["traceEvents"];
    else if (j.is_array())
        events = &j;
    if (!events)
        throw std::runtime_error("no \"traceEvents\" array: not a Chrome trace");

    constexpr double kMaxTs = 1e17;  // us: far beyond any epoch-based timestamp
    constexpr double kMaxDur = 1e11; // us: a day is 8.64e10
    constexpr double kMaxBytes = 1e16;
    TraceImport out;
    double t0 = 0, t1 = 0;
    bool any = false;
    struct Acc
    {
        int calls = 0;
        double total = 0, max = 0, bytes = 0;
    };
    std::map<std::string, Acc> device, host;
    size_t index = 0;
    for (const json &e : *events) {
        const size_t idx = index++;
        if (!e.is_object())
            continue;
        const double ts = eventNumber(e, "ts", 0.0, 0.0, kMaxTs, idx) * 1e-6;
        const double dur = eventNumber(e, "dur", 0.0, 0.0, kMaxDur, idx) * 1e-6;
        const std::string ph = eventString(e, "ph");
        const std::string name = eventString(e, "name");
        const std::string cat = lower(eventString(e, "cat"));
        if (ph == "X" || ph == "i" || ph == "I") {
            ++out.events;
            if (!any) {
                t0 = ts;
                t1 = ts + dur;
                any = true;
            }
            t0 = std::min(t0, ts);
            t1 = std::max(t1, ts + dur);
        }
        const json &args = eventArgs(e);
        if (name == "[memory]") {
            TraceMemoryPoint p;
            p.t_s = ts;
            p.allocated = eventNumber(args, "Total Allocated", 0.0, 0.0, kMaxBytes, idx);
            p.reserved = eventNumber(args, "Total Reserved", 0.0, 0.0, kMaxBytes, idx);
            // Host allocations (Device Type 0) are not device memory.
            if (eventNumber(args, "Device Type", 1.0, -1.0, 1e6, idx) != 0)
                out.memory.push_back(p);
            continue;
        }
        if (ph != "X")
            continue;
        std::string coll;
        if (name == "record_param_comms" || name.find("nccl:") == 0) {
            coll = eventString(args, "Collective name");
            if (coll.empty())
                coll = collectiveFromName(name);
            else
                coll = collectiveFromName(std::string("c10d ") + coll);
        } else {
            coll = collectiveFromName(name);
        }
        if (coll.empty())
            continue;
        const bool onDevice = cat == "kernel" || cat.find("hccl") != std::string::npos ||
                              cat.find("communication") != std::string::npos;
        Acc &a = (onDevice ? device : host)[coll];
        ++a.calls;
        a.total += dur;
        a.max = std::max(a.max, dur);
        if (args.contains("In msg nelems") || args.contains("Out msg nelems")) {
            const double el = std::max(eventNumber(args, "In msg nelems", 0.0, 0.0, kMaxBytes, idx),
                                       eventNumber(args, "Out msg nelems", 0.0, 0.0, kMaxBytes, idx));
            const std::string dt = lower(args.contains("dtype") ? eventString(args, "dtype")
                                                                : std::string("float"));
            const double es =
                dt.find("bfloat") != std::string::npos || dt.find("half") != std::string::npos ||
                        dt.find("16") != std::string::npos
                    ? 2.0
                    : (dt.find("double") != std::string::npos || dt.find("64") != std::string::npos
                           ? 8.0
                           : 4.0);
            a.bytes = std::max(a.bytes, el * es);
        }
    }
    // Device kernels are the collective's real duration; CPU ops only where no kernel is seen.
    std::map<std::string, Acc> merged = device;
    for (const auto &[k, a] : host) {
        auto it = merged.find(k);
        if (it == merged.end())
            merged[k] = a;
        else if (it->second.bytes == 0)
            it->second.bytes = a.bytes;
    }
    for (const auto &[k, a] : merged)
        out.collectives.push_back({k, a.calls, a.total, a.max, a.bytes});
    std::sort(
        out.collectives.begin(), out.collectives.end(),
        [](const TraceCollective &a, const TraceCollective &b) { return a.total_s > b.total_s; });
    std::sort(out.memory.begin(), out.memory.end(),
              [](const TraceMemoryPoint &a, const TraceMemoryPoint &b) { return a.t_s < b.t_s; });
    for (TraceMemoryPoint &p : out.memory) {
        p.t_s -= t0;
        out.peak_allocated = std::max(out.peak_allocated, p.allocated);
        out.peak_reserved = std::max(out.peak_reserved, p.reserved);
    }
    out.span_s = any ? t1 - t0 : 0.0;
    return out;
}

nlohmann::json collectiveImportToJson(const CollectiveImport &c)
{
    nlohmann::json pts = nlohmann::json::array();
    for (const CollectivePoint &p : c.points)
        pts.push_back({{"collective", p.collective},
                       {"ranks", p.ranks},
                       {"bytes", p.bytes},
                       {"time_s", p.time_s},
                       {"algbw", p.algbw},
                       {"busbw", p.busbw}});
    return {{"tool", c.tool}, {"avg_busbw", c.avg_busbw}, {"points", pts}};
}

nlohmann::json traceImportToJson(const TraceImport &t)
{
    nlohmann::json cs = nlohmann::json::array();
    for (const TraceCollective &c : t.collectives)
        cs.push_back({{"collective", c.collective},
                      {"calls", c.calls},
                      {"total_s", c.total_s},
                      {"max_s", c.max_s},
                      {"bytes", c.bytes}});
    return {{"collectives", cs},
            {"memory_points", t.memory.size()},
            {"peak_allocated", t.peak_allocated},
            {"peak_reserved", t.peak_reserved},
            {"span_s", t.span_s},
            {"events", t.events}};
}

} // namespace shardscope
