// Predicted against measured: the engine's model of each kernel beside what the runner timed,
// and the calibration that turns a run into a device profile.
#include "measurement.h"

#include "catalog.h"
#include "memory.h"

#include <algorithm>
#include <cmath>

namespace shardscope {

std::string gemmShapeClass(const Kernel &k)
{
    const double f = 2.0 * double(k.m) * double(k.n) * double(k.k);
    const char *size = f >= 1e12 ? "large" : (f >= 1e10 ? "medium" : "small");
    return std::string(toString(k.dtype)) + ":" + size;
}

std::string attentionShapeClass(const Kernel &k)
{
    const double s = std::max<double>(1.0, double(k.seq_q));
    const int p = int(std::lround(std::log2(s)));
    return std::string(k.op == "attention_bwd" ? "bwd" : "fwd") + ":s" +
           std::to_string(int64_t(1) << std::clamp(p, 0, 40));
}

namespace {

double fullFlops(const Kernel &k)
{
    return k.full_flops > 0 ? k.full_flops : k.flops;
}
double fullBytes(const Kernel &k)
{
    return k.full_bytes > 0 ? k.full_bytes : k.bytes;
}

/// Interpolates a busbw table (sorted by size) in log(size); clamps at both ends.
double interpolate(const std::vector<std::pair<double, double>> &t, double bytes)
{
    if (t.empty())
        return 0;
    if (bytes <= t.front().first)
        return t.front().second;
    if (bytes >= t.back().first)
        return t.back().second;
    for (size_t i = 1; i < t.size(); ++i) {
        if (bytes <= t[i].first) {
            const double x0 = std::log(t[i - 1].first), x1 = std::log(t[i].first);
            const double a = x1 > x0 ? (std::log(bytes) - x0) / (x1 - x0) : 0.0;
            return t[i - 1].second + a * (t[i].second - t[i - 1].second);
        }
    }
    return t.back().second;
}

double median(std::vector<double> v)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string fmtRate(double v, const char *unit)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3g %s", v, unit);
    return buf;
}

} // namespace

double predictKernelSeconds(const Kernel &k, const DeviceProfile &d, const Plan &plan)
{
    const DeviceCalibration &cal = d.calibration;
    switch (k.kind) {
    case KernelKind::Gemm: {
        double rate = 0;
        if (auto it = cal.gemm_flops.find(gemmShapeClass(k)); it != cal.gemm_flops.end())
            rate = it->second;
        if (rate <= 0)
            rate = d.peakFlops(k.dtype) * d.gemm_efficiency;
        return rate > 0 ? fullFlops(k) / rate : 0.0;
    }
    case KernelKind::Attention: {
        double rate = 0;
        if (auto it = cal.attention_flops.find(attentionShapeClass(k));
            it != cal.attention_flops.end())
            rate = it->second;
        if (rate <= 0)
            rate = d.peakFlops(k.dtype) * d.attention_efficiency;
        return rate > 0 ? fullFlops(k) / rate : 0.0;
    }
    case KernelKind::Elementwise: {
        const double bw =
            cal.memory_bandwidth > 0 ? cal.memory_bandwidth : d.hbm_bandwidth * d.memory_efficiency;
        return bw > 0 ? fullBytes(k) / bw : 0.0;
    }
    case KernelKind::Collective: {
        const int n = std::max(1, k.group_size);
        const double factor = busBandwidthFactor(k.collective, n);
        const std::string key = k.collective + ":" + std::to_string(n);
        if (auto it = cal.busbw.find(key); it != cal.busbw.end() && !it->second.empty()) {
            const double bw = interpolate(it->second, fullBytes(k));
            if (bw > 0)
                return fullBytes(k) * factor / bw;
        }
        if (k.engine_time_s > 0)
            return k.engine_time_s * (k.bytes > 0 ? fullBytes(k) / k.bytes : 1.0);
        // The tier the group spans: groups that fit in a node stay on the intra-node links
        // (tp, cp and pp innermost, as Megatron orders ranks); dp spans nodes when the world
        // does.
        const bool inter = n > plan.cluster.devices_per_node ||
                           (k.group == "dp" && plan.cluster.nodes > 1 &&
                            plan.parallel.world() > plan.cluster.devices_per_node);
        const LinkProfile &l = inter ? d.inter_node : d.intra_node;
        const double steps = k.collective == "all_reduce"  ? 2.0 * (n - 1)
                             : k.collective == "send_recv" ? 1.0
                                                           : double(n - 1);
        const double bw = l.bandwidth * l.efficiency;
        return l.latency * steps + (bw > 0 ? fullBytes(k) * factor / bw : 0.0);
    }
    }
    return 0;
}

double measuredFullSeconds(const Kernel &k, const KernelMeasurement &m)
{
    if (!m.ok() || m.time_s <= 0)
        return 0;
    switch (k.kind) {
    case KernelKind::Gemm:
    case KernelKind::Attention:
        return k.flops > 0 ? m.time_s * fullFlops(k) / k.flops : m.time_s;
    case KernelKind::Elementwise:
    case KernelKind::Collective:
        return k.bytes > 0 ? m.time_s * fullBytes(k) / k.bytes : m.time_s;
    }
    return m.time_s;
}

std::vector<KernelComparison> compareKernels(const RunResults &r, const DeviceProfile &device,
                                             const Plan &plan)
{
    std::vector<KernelComparison> out;
    for (size_t i = 0; i < r.kernels.size(); ++i) {
        const Kernel &k = r.kernels[i];
        KernelComparison c;
        c.name = k.name;
        c.count_per_step = k.count_per_step;
        c.predicted_s = predictKernelSeconds(k, device, plan);
        if (i < r.measurements.size())
            c.measured_s = measuredFullSeconds(k, r.measurements[i]);
        c.ratio = (c.predicted_s > 0 && c.measured_s > 0) ? c.measured_s / c.predicted_s : 0.0;
        out.push_back(c);
    }
    return out;
}

MemoryComparison compareProbe(const Plan &plan, const RunResults &r, const Catalog &catalog)
{
    MemoryComparison mc;
    const ProbeMeasurement &pm = r.probe_result;
    if (!pm.ran())
        return mc;
    MemoryProbe probe = r.probe;
    probe.layers = pm.layers > 0 ? pm.layers : probe.layers;
    if (pm.seq_len > 0)
        probe.seq_len = pm.seq_len;
    if (pm.micro_batch > 0)
        probe.micro_batch = pm.micro_batch;
    if (!pm.mode.empty())
        probe.mode = pm.mode;
    if (pm.attention == "eager")
        probe.attention = Attention::Eager;
    else if (pm.attention == "flash")
        probe.attention = Attention::Flash;
    mc.plan = probePlan(plan, probe);
    // The probe counts from what was allocated before it started (the worker's baseline): on a
    // GPU the worker runs one GEMM forward and backward first, so that baseline holds the cuBLAS
    // workspaces, and a CPU has none. So the prediction leaves the GEMM workspaces
    // (core/workspace.h) out.
    Catalog bare = catalog;
    if (const DeviceProfile *d = catalog.device(mc.plan.cluster.device)) {
        DeviceProfile nd = *d;
        nd.gemm_workspace_bytes = 0;
        nd.te_gemm_workspace_bytes = 0;
        bare.addDevice(nd);
    }
    MemoryEstimate e = estimateMemory(mc.plan, bare);
    replayAllocator(mc.plan, bare, e);
    mc.predicted_peak = e.peak_bytes;
    mc.predicted_reserved = e.ranks.empty() ? 0.0 : e.ranks.front().reserved_bytes;
    mc.measured_reserved = pm.peak_reserved;
    mc.measured_peak = pm.peak_allocated;
    mc.ratio = mc.predicted_peak > 0 ? mc.measured_peak / mc.predicted_peak : 0.0;
    mc.available = mc.measured_peak > 0;
    return mc;
}

DeviceProfile calibrateDevice(const DeviceProfile &base, const RunResults &r, const std::string &id)
{
    DeviceProfile d = base;
    d.id = id.empty() ? base.id + "-calibrated" : id;
    d.name = base.name + " (calibrated)";
    DeviceCalibration &cal = d.calibration;
    cal = DeviceCalibration{};
    cal.present = true;
    cal.source = r.info.backend + " backend on " + r.info.device +
                 (r.info.device_name.empty() ? "" : " (" + r.info.device_name + ")") +
                 (r.info.versions.empty() ? "" : "; " + r.info.versions);

    std::map<std::string, std::vector<double>> gemm, attn;
    std::vector<double> copies;
    std::map<std::string, std::vector<std::pair<double, double>>> bus;
    for (size_t i = 0; i < r.kernels.size() && i < r.measurements.size(); ++i) {
        const Kernel &k = r.kernels[i];
        const KernelMeasurement &m = r.measurements[i];
        if (!m.ok())
            continue;
        switch (k.kind) {
        case KernelKind::Gemm:
            if (m.flops_per_s > 0)
                gemm[gemmShapeClass(k)].push_back(m.flops_per_s);
            break;
        case KernelKind::Attention:
            if (m.flops_per_s > 0)
                attn[attentionShapeClass(k)].push_back(m.flops_per_s);
            break;
        case KernelKind::Elementwise:
            if (k.op == "copy" && m.bytes_per_s > 0)
                copies.push_back(m.bytes_per_s);
            break;
        case KernelKind::Collective:
            if (m.busbw > 0 && m.message.find("emulated") == std::string::npos)
                bus[k.collective + ":" + std::to_string(m.ranks > 0 ? m.ranks : k.group_size)]
                    .emplace_back(k.bytes, m.busbw);
            break;
        }
    }
    for (auto &[cls, v] : gemm)
        cal.gemm_flops[cls] = median(v);
    for (auto &[cls, v] : attn)
        cal.attention_flops[cls] = median(v);
    cal.memory_bandwidth = median(copies);
    for (auto &[key, v] : bus) {
        std::sort(v.begin(), v.end());
        cal.busbw[key] = v;
    }
    cal.measured_context_reserve_bytes = r.info.context_reserve;

    auto clampEff = [](double e) { return std::clamp(e, 1e-6, 1.0); };
    // Efficiencies from the largest class measured in the compute dtype.
    const DType dt = r.kernels.empty() ? DType::BF16 : r.kernels.front().dtype;
    const std::string prefix = std::string(toString(dt)) + ":";
    for (const char *size : {"large", "medium", "small"}) {
        auto it = cal.gemm_flops.find(prefix + size);
        if (it != cal.gemm_flops.end() && d.peakFlops(dt) > 0) {
            d.gemm_efficiency = clampEff(it->second / d.peakFlops(dt));
            d.sources["gemm_efficiency"] = "measured: " + prefix + size + " GEMMs at " +
                                           fmtRate(it->second, "FLOP/s") + " (" + cal.source + ")";
            break;
        }
    }
    if (!attn.empty() && d.peakFlops(dt) > 0) {
        std::vector<double> all;
        for (const auto &[cls, v] : cal.attention_flops)
            all.push_back(v);
        const double rate = *std::max_element(all.begin(), all.end());
        d.attention_efficiency = clampEff(rate / d.peakFlops(dt));
        d.sources["attention_efficiency"] = "measured: best attention class at " +
                                            fmtRate(rate, "FLOP/s") + " (" + cal.source + ")";
    }
    if (cal.memory_bandwidth > 0 && d.hbm_bandwidth > 0) {
        d.memory_efficiency = clampEff(cal.memory_bandwidth / d.hbm_bandwidth);
        d.sources["memory_efficiency"] =
            "measured: copy at " + fmtRate(cal.memory_bandwidth, "B/s") + " (" + cal.source + ")";
    }
    if (cal.measured_context_reserve_bytes > 0) {
        d.context_reserve_bytes = cal.measured_context_reserve_bytes;
        d.sources["context_reserve_bytes"] =
            "measured at start-up: total - free - reserved by the allocator (" + cal.source + ")";
    }
    // Intra-node efficiency from the best large-message busbw.
    double best = 0;
    for (const auto &[key, v] : cal.busbw)
        for (const auto &[bytes, bw] : v)
            if (bytes >= 16.0 * 1024 * 1024)
                best = std::max(best, bw);
    if (best > 0 && d.intra_node.bandwidth > 0) {
        d.intra_node.efficiency = clampEff(best / d.intra_node.bandwidth);
        d.sources["intra_node"] = "efficiency measured: best busbw " + fmtRate(best, "B/s") +
                                  " for messages >= 16 MiB (" + cal.source + ")";
    }
    d.raw = deviceToJson(d);
    return d;
}

nlohmann::json resultsToJson(const Plan &plan, const RunResults &r, const Catalog &catalog)
{
    using nlohmann::json;
    const DeviceProfile *dev = catalog.device(plan.cluster.device);
    json j;
    j["format"] = "shardscope-bench";
    j["version"] = 1;
    j["plan"] = plan.name;
    j["backend"] = {{"backend", r.info.backend},
                    {"device", r.info.device},
                    {"device_name", r.info.device_name},
                    {"interpreter", r.info.interpreter},
                    {"versions", r.info.versions},
                    {"world_size", r.info.world_size},
                    {"total_memory", r.info.total_memory},
                    {"free_memory", r.info.free_memory},
                    {"context_reserve", r.info.context_reserve},
                    {"protocol_version", r.info.protocol_version}};
    std::vector<KernelComparison> cmp;
    if (dev)
        cmp = compareKernels(r, *dev, plan);
    json ks = json::array();
    for (size_t i = 0; i < r.kernels.size(); ++i) {
        json k = kernelToJson(r.kernels[i]);
        if (i < r.measurements.size() && !r.measurements[i].status.empty()) {
            const KernelMeasurement &m = r.measurements[i];
            json mj = {{"status", m.status},
                       {"time_s", m.time_s},
                       {"min_s", m.min_s},
                       {"max_s", m.max_s},
                       {"repeats", m.repeats}};
            if (!m.message.empty())
                mj["message"] = m.message;
            if (m.flops_per_s > 0)
                mj["flops_per_s"] = m.flops_per_s;
            if (m.reference_time_s > 0)
                mj["reference_time_s"] = m.reference_time_s;
            if (m.bytes_per_s > 0)
                mj["bytes_per_s"] = m.bytes_per_s;
            if (m.algbw > 0) {
                mj["algbw"] = m.algbw;
                mj["busbw"] = m.busbw;
                mj["ranks"] = m.ranks;
            }
            k["measured"] = mj;
        }
        if (i < cmp.size()) {
            k["predicted_s"] = cmp[i].predicted_s;
            k["measured_full_s"] = cmp[i].measured_s;
            k["ratio"] = cmp[i].ratio;
        }
        ks.push_back(k);
    }
    j["kernels"] = ks;
    json p = probeToJson(r.probe);
    const ProbeMeasurement &pm = r.probe_result;
    if (!pm.status.empty()) {
        p["measured"] = {{"status", pm.status},           {"message", pm.message},
                         {"layers", pm.layers},           {"seq_len", pm.seq_len},
                         {"micro_batch", pm.micro_batch}, {"mode", pm.mode},
                         {"attention", pm.attention},     {"attention_impl", pm.attention_impl},
                         {"recompute", pm.recompute},     {"peak_allocated", pm.peak_allocated},
                         {"baseline", pm.baseline},       {"peak_reserved", pm.peak_reserved},
                         {"method", pm.method},           {"step_s", pm.step_s}};
        if (!pm.snapshot.empty())
            p["measured"]["snapshot"] = pm.snapshot;
        const MemoryComparison mc = compareProbe(plan, r, catalog);
        if (mc.available) {
            p["predicted_peak"] = mc.predicted_peak;
            p["ratio"] = mc.ratio;
            p["predicted_reserved"] = mc.predicted_reserved;
        }
    }
    j["memory_probe"] = p;
    if (!r.error.empty())
        j["error"] = r.error;
    if (dev)
        j["calibrated_device"] = deviceToJson(calibrateDevice(*dev, r));
    return j;
}

} // namespace shardscope
