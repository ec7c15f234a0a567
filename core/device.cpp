#include "device.h"

#include "errors.h"
#include "jsoninput.h"

#include <algorithm>

namespace shardscope {

namespace {

using nlohmann::json;

constexpr double kHuge = 1e18; // no device figure (bytes, FLOP/s, bytes/s) comes near this

LinkProfile readLink(ObjectReader &parent, const std::string &key)
{
    const json *v = parent.get(key);
    if (!v)
        throw PlanError(parent.field(key), "is required (kind, topology, bandwidth, latency, "
                                           "efficiency)");
    ObjectReader r(*v, parent.field(key));
    LinkProfile l;
    l.kind = r.string("kind", std::string());
    l.topology = r.string("topology", std::string("switch"));
    if (l.topology != "full_mesh" && l.topology != "switch" && l.topology != "ring")
        throw PlanError(r.field("topology"), "must be one of full_mesh, switch, ring, not \"" +
                                                 l.topology + "\"");
    l.bandwidth = r.number("bandwidth", 0, kHuge, std::nullopt, true);
    l.latency = r.number("latency", 0, 1.0);
    l.efficiency = r.number("efficiency", 0, 1, std::nullopt, true);
    return l;
}

DeviceCalibration readCalibration(const json &j, const std::string &path)
{
    DeviceCalibration c;
    if (!j.is_object())
        throw PlanError(path, "must be an object");
    c.present = true;
    ObjectReader r(j, path);
    c.source = r.string("source", std::string());
    auto rates = [&](const char *key, std::map<std::string, double> &out) {
        auto it = j.find(key);
        if (it == j.end())
            return;
        if (!it->is_object())
            throw PlanError(path + "." + key, "must be an object of class -> FLOP/s");
        for (auto e = it->begin(); e != it->end(); ++e) {
            if (!e->is_number() || !(e->get<double>() > 0 && e->get<double>() <= kHuge))
                throw PlanError(path + "." + key + "." + e.key(), "must be a number > 0");
            out[e.key()] = e->get<double>();
        }
    };
    rates("gemm_flops", c.gemm_flops);
    rates("attention_flops", c.attention_flops);
    c.memory_bandwidth = r.number("memory_bandwidth", 0, kHuge, 0.0);
    c.measured_context_reserve_bytes = r.number("measured_context_reserve_bytes", 0, kHuge, 0.0);
    if (auto b = j.find("busbw"); b != j.end()) {
        if (!b->is_object())
            throw PlanError(path + ".busbw", "must be an object of collective -> [[bytes, busbw]]");
        for (auto it = b->begin(); it != b->end(); ++it) {
            auto &v = c.busbw[it.key()];
            if (!it->is_array())
                throw PlanError(path + ".busbw." + it.key(), "must be an array of [bytes, busbw]");
            for (const json &pt : *it) {
                if (!pt.is_array() || pt.size() != 2 || !pt[0].is_number() || !pt[1].is_number() ||
                    !(pt[0].get<double>() > 0 && pt[0].get<double>() <= kHuge) ||
                    !(pt[1].get<double>() > 0 && pt[1].get<double>() <= kHuge))
                    throw PlanError(path + ".busbw." + it.key(),
                                    "entries must be [bytes, busbw], both numbers > 0");
                v.emplace_back(pt[0].get<double>(), pt[1].get<double>());
            }
            std::sort(v.begin(), v.end());
        }
    }
    return c;
}

json calibrationToJson(const DeviceCalibration &c)
{
    json b = json::object();
    for (const auto &[key, pts] : c.busbw) {
        json a = json::array();
        for (const auto &[bytes, bw] : pts)
            a.push_back({bytes, bw});
        b[key] = a;
    }
    return {{"source", c.source},
            {"gemm_flops", c.gemm_flops},
            {"attention_flops", c.attention_flops},
            {"memory_bandwidth", c.memory_bandwidth},
            {"busbw", b},
            {"measured_context_reserve_bytes", c.measured_context_reserve_bytes}};
}

json linkToJson(const LinkProfile &l)
{
    return {{"kind", l.kind}, {"topology", l.topology}, {"bandwidth", l.bandwidth},
            {"latency", l.latency}, {"efficiency", l.efficiency}};
}

} // namespace

double DeviceProfile::peakFlops(DType t) const
{
    switch (t) {
    case DType::FP32: return peak_flops_fp32;
    case DType::BF16: return peak_flops_bf16;
    case DType::FP16: return peak_flops_fp16;
    case DType::FP8: return peak_flops_fp8 > 0 ? peak_flops_fp8 : peak_flops_bf16;
    case DType::INT8: return peak_flops_int8;
    case DType::None: return 0;
    }
    return 0;
}

DeviceProfile deviceFromJson(const json &j)
{
    ObjectReader r(j, "");
    DeviceProfile d;
    d.id = r.string("id", std::nullopt);
    if (d.id.empty())
        throw PlanError("id", "must not be empty");
    d.name = r.string("name", d.id);
    d.vendor = r.string("vendor", std::string());
    d.hbm_bytes = r.number("hbm_bytes", 0, kHuge, std::nullopt, true);
    d.context_reserve_bytes = r.number("context_reserve_bytes", 0, d.hbm_bytes);
    d.comm_buffer_bytes_per_group = r.number("comm_buffer_bytes_per_group", 0, d.hbm_bytes);
    d.gemm_workspace_bytes = r.number("gemm_workspace_bytes", 0, d.hbm_bytes, 0.0);
    d.te_gemm_workspace_bytes = r.number("te_gemm_workspace_bytes", 0, d.hbm_bytes, 0.0);
    {
        const json *pf = r.get("peak_flops");
        if (!pf)
            throw PlanError("peak_flops", "is required (an object of dtype -> FLOP/s)");
        ObjectReader f(*pf, "peak_flops");
        d.peak_flops_bf16 = f.number("bf16", 0, kHuge, std::nullopt, true);
        d.peak_flops_fp16 = f.number("fp16", 0, kHuge, d.peak_flops_bf16, true);
        d.peak_flops_fp32 = f.number("fp32", 0, kHuge, std::nullopt, true);
        d.peak_flops_fp8 = f.number("fp8", 0, kHuge, 0.0);
        d.peak_flops_int8 = f.number("int8", 0, kHuge, 0.0);
    }
    d.hbm_bandwidth = r.number("hbm_bandwidth", 0, kHuge, std::nullopt, true);
    d.gemm_efficiency = r.number("gemm_efficiency", 0, 1, 0.7, true);
    d.attention_efficiency = r.number("attention_efficiency", 0, 1, 0.6, true);
    d.memory_efficiency = r.number("memory_efficiency", 0, 1, 0.8, true);
    // Read by the compute model from `raw`; checked here so that no profile reaches it with a
    // zero efficiency (an infinite step) or a negative overhead.
    r.number("elementwise_efficiency", 0, 1, 1.0, true);
    r.number("attention_matmul_efficiency", 0, 1, 1.0, true);
    r.number("gemm_overhead_s", 0, 1, 0.0);
    r.number("kernel_overhead_s", 0, 1, 0.0);
    r.number("host_optimizer_bandwidth", 0, kHuge, 1.0, true);
    r.secondsOrPerDirection("attention_score_s", 1.0);
    d.intra_node = readLink(r, "intra_node");
    d.inter_node = readLink(r, "inter_node");
    d.host_bandwidth = r.number("host_bandwidth", 0, kHuge, 25e9, true);
    d.host_memory_bytes = r.number("host_memory_bytes", 0, kHuge, 0.0, true);
    if (const json *s = r.get("sources")) {
        if (!s->is_object())
            throw PlanError("sources", "must be an object of field -> where it comes from");
        for (auto it = s->begin(); it != s->end(); ++it) {
            if (it->is_string())
                d.sources[it.key()] = it->get<std::string>();
        }
    }
    if (const json *c = r.get("calibration"); c && !c->is_null())
        d.calibration = readCalibration(*c, "calibration");
    d.raw = j;
    return d;
}

json deviceToJson(const DeviceProfile &d)
{
    json j = d.raw.is_object() ? d.raw : json::object();
    j["id"] = d.id;
    j["name"] = d.name;
    j["vendor"] = d.vendor;
    j["hbm_bytes"] = d.hbm_bytes;
    j["context_reserve_bytes"] = d.context_reserve_bytes;
    j["comm_buffer_bytes_per_group"] = d.comm_buffer_bytes_per_group;
    j["gemm_workspace_bytes"] = d.gemm_workspace_bytes;
    j["te_gemm_workspace_bytes"] = d.te_gemm_workspace_bytes;
    j["peak_flops"] = {{"bf16", d.peak_flops_bf16}, {"fp16", d.peak_flops_fp16},
                       {"fp32", d.peak_flops_fp32}, {"fp8", d.peak_flops_fp8},
                       {"int8", d.peak_flops_int8}};
    j["hbm_bandwidth"] = d.hbm_bandwidth;
    j["gemm_efficiency"] = d.gemm_efficiency;
    j["attention_efficiency"] = d.attention_efficiency;
    j["memory_efficiency"] = d.memory_efficiency;
    j["intra_node"] = linkToJson(d.intra_node);
    j["inter_node"] = linkToJson(d.inter_node);
    j["host_bandwidth"] = d.host_bandwidth;
    if (d.host_memory_bytes > 0)
        j["host_memory_bytes"] = d.host_memory_bytes;
    j["sources"] = d.sources;
    if (d.calibration.present)
        j["calibration"] = calibrationToJson(d.calibration);
    return j;
}

} // namespace shardscope
