#include "snapshot.h"

#include "errors.h"
#include "files.h"
#include "jsoninput.h"

#include <algorithm>
#include <cmath>

namespace shardscope {

namespace {

constexpr size_t kMaxSnapshotBytes = 256u * 1024u * 1024u; // a million trace entries

double nonNegative(const nlohmann::json &v, const std::string &field)
{
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0)
        throw PlanError(field, "must be a non-negative number, not " + v.dump());
    return v.get<double>();
}

} // namespace

MeasuredMemory parseMemorySnapshot(const nlohmann::json &j, const std::string &file)
{
    const std::string at = file.empty() ? std::string() : file + ": ";
    auto fail = [&](const std::string &field, const std::string &rule) {
        throw PlanError(at + field, rule);
    };
    if (!j.is_object())
        fail("", "a memory snapshot is a JSON object");
    if (j.value("format", std::string()) != "shardscope-memory-snapshot")
        fail("format", "must be \"shardscope-memory-snapshot\" (convert a torch pickle with "
                       "shardscope_worker.py --convert-snapshot IN.pickle OUT.json)");
    if (!j.contains("version") || !j["version"].is_number_integer() || j["version"].get<int>() != 1)
        fail("version", "must be 1");
    const auto trace = j.find("trace");
    if (trace == j.end() || !trace->is_array())
        fail("trace", "must be an array of trace entries");
    MeasuredMemory m;
    m.source = j.value("source", file);
    double alloc = 0, res = 0;
    bool times = true;
    for (size_t i = 0; i < trace->size(); ++i) {
        const auto &e = (*trace)[i];
        const std::string field = "trace[" + std::to_string(i) + "]";
        if (!e.is_object() || !e.contains("action") || !e["action"].is_string())
            fail(field, "must be an object with an \"action\"");
        const std::string action = e["action"].get<std::string>();
        const double size = e.contains("size") ? nonNegative(e["size"], at + field + ".size") : 0.0;
        if (action == "alloc")
            alloc += size;
        else if (action == "free_completed")
            alloc -= size;
        else if (action == "segment_alloc" || action == "segment_map")
            res += size;
        else if (action == "segment_free" || action == "segment_unmap")
            res -= size;
        else if (action != "free_requested" && action != "oom" && action != "snapshot")
            fail(field + ".action", "unknown action \"" + action + "\"");
        m.allocated.push_back(alloc);
        m.reserved.push_back(res);
        if (e.contains("time_us"))
            m.time_us.push_back(nonNegative(e["time_us"], at + field + ".time_us"));
        else
            times = false;
    }
    if (!times)
        m.time_us.clear();
    // Anchor the running sums to the state at the end (the segments' totals).
    const double endAlloc = j.contains("allocated_bytes") ? nonNegative(j["allocated_bytes"], at + "allocated_bytes") : alloc;
    const double endRes = j.contains("reserved_bytes") ? nonNegative(j["reserved_bytes"], at + "reserved_bytes") : res;
    const double offAlloc = endAlloc - alloc, offRes = endRes - res;
    for (size_t i = 0; i < m.allocated.size(); ++i) {
        m.allocated[i] = std::max(0.0, m.allocated[i] + offAlloc);
        m.reserved[i] = std::max(m.allocated[i], m.reserved[i] + offRes);
        m.peak_allocated = std::max(m.peak_allocated, m.allocated[i]);
        m.peak_reserved = std::max(m.peak_reserved, m.reserved[i]);
    }
    if (const auto ph = j.find("phases"); ph != j.end()) {
        if (!ph->is_array())
            fail("phases", "must be an array");
        double last = -1;
        for (size_t i = 0; i < ph->size(); ++i) {
            const auto &p = (*ph)[i];
            const std::string field = "phases[" + std::to_string(i) + "]";
            if (!p.is_object() || !p.contains("phase") || !p["phase"].is_string() || !p.contains("time_us"))
                fail(field, "must be an object with \"phase\" and \"time_us\"");
            const double t = nonNegative(p["time_us"], at + field + ".time_us");
            if (t < last)
                fail(field + ".time_us", "phases must be in time order");
            last = t;
            const std::string name = p["phase"].get<std::string>();
            if (name == "end") {
                m.end_us = t;
                continue;
            }
            const Phase phase = phaseFromKey(name);
            if (phase == Phase::Count)
                fail(field + ".phase", "unknown phase \"" + name + "\" (forward, backward, optimizer_step, end)");
            m.phases.push_back({phase, t});
        }
    }
    return m;
}

MeasuredMemory readMemorySnapshotFile(const std::string &path)
{
    return parseMemorySnapshot(parseJsonText(readTextFile(path, kMaxSnapshotBytes), path), path);
}

std::vector<double> alignToStep(const MeasuredMemory &m, const StepView &view)
{
    const size_t n = m.allocated.size();
    std::vector<double> x(n, -1.0);
    if (n == 0 || view.last <= view.first)
        return x;
    // Predicted phase ranges on the event axis.
    auto predicted = [&](Phase p, double &from, double &to) {
        for (size_t i = 0; i < view.phases.size(); ++i) {
            if (view.phases[i].phase != p)
                continue;
            from = view.phases[i].event;
            to = i + 1 < view.phases.size() ? view.phases[i + 1].event : view.last;
            return true;
        }
        return false;
    };
    if (m.phases.empty() || m.time_us.size() != n) {
        for (size_t i = 0; i < n; ++i)
            x[i] = view.first + (view.last - view.first) * (n > 1 ? double(i) / double(n - 1) : 0.0);
        return x;
    }
    const double end = m.end_us > 0 ? m.end_us : m.time_us.back();
    for (size_t i = 0; i < n; ++i) {
        const double t = m.time_us[i];
        for (size_t k = 0; k < m.phases.size(); ++k) {
            const double t0 = m.phases[k].time_us;
            const double t1 = k + 1 < m.phases.size() ? m.phases[k + 1].time_us : end;
            if (t < t0 || t > t1)
                continue;
            double from = 0, to = 0;
            if (!predicted(m.phases[k].phase, from, to))
                break;
            x[i] = t1 > t0 ? from + (to - from) * (t - t0) / (t1 - t0) : from;
            break;
        }
    }
    return x;
}

} // namespace shardscope
