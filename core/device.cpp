#include "device.h"

#include "errors.h"

#include <algorithm>

namespace shardscope {

namespace {

using nlohmann::json;

double positive(const json &j, const std::string &path, const char *key, bool allowZero = false)
{
    auto it = j.find(key);
    if (it == j.end() || !it->is_number())
        throw PlanError(path + key, "is required and must be a number");
    const double v = it->get<double>();
    if (!(allowZero ? v >= 0 : v > 0) || v > 1e18)
        throw PlanError(path + key, allowZero ? "must be >= 0" : "must be > 0");
    return v;
}

LinkProfile readLink(const json &j, const std::string &path)
{
    if (!j.is_object())
        throw PlanError(path, "must be an object");
    LinkProfile l;
    l.kind = j.value("kind", std::string());
    l.topology = j.value("topology", std::string("switch"));
    l.bandwidth = positive(j, path + ".", "bandwidth");
    l.latency = positive(j, path + ".", "latency", true);
    l.efficiency = positive(j, path + ".", "efficiency");
    if (l.efficiency > 1.0)
        throw PlanError(path + ".efficiency", "must be <= 1");
    return l;
}

DeviceCalibration readCalibration(const json &j, const std::string &path)
{
    DeviceCalibration c;
    if (!j.is_object())
        throw PlanError(path, "must be an object");
    c.present = true;
    c.source = j.value("source", std::string());
    auto rates = [&](const char *key, std::map<std::string, double> &out) {
        auto it = j.find(key);
        if (it == j.end())
            return;
        if (!it->is_object())
            throw PlanError(path + "." + key, "must be an object of class -> FLOP/s");
        for (auto r = it->begin(); r != it->end(); ++r) {
            if (!r->is_number() || r->get<double>() <= 0)
                throw PlanError(path + "." + key + "." + r.key(), "must be a number > 0");
            out[r.key()] = r->get<double>();
        }
    };
    rates("gemm_flops", c.gemm_flops);
    rates("attention_flops", c.attention_flops);
    c.memory_bandwidth = j.value("memory_bandwidth", 0.0);
    c.measured_context_reserve_bytes = j.value("measured_context_reserve_bytes", 0.0);
    if (auto b = j.find("busbw"); b != j.end()) {
        if (!b->is_object())
            throw PlanError(path + ".busbw", "must be an object of collective -> [[bytes, busbw]]");
        for (auto it = b->begin(); it != b->end(); ++it) {
            auto &v = c.busbw[it.key()];
            if (!it->is_array())
                throw PlanError(path + ".busbw." + it.key(), "must be an array of [bytes, busbw]");
            for (const json &pt : *it) {
                if (!pt.is_array() || pt.size() != 2 || !pt[0].is_number() || !pt[1].is_number())
                    throw PlanError(path + ".busbw." + it.key(), "entries must be [bytes, busbw]");
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
    if (!j.is_object())
        throw PlanError("device", "must be a JSON object");
    DeviceProfile d;
    d.id = j.value("id", std::string());
    if (d.id.empty())
        throw PlanError("device.id", "is required");
    const std::string p = "device " + d.id + ": ";
    d.name = j.value("name", d.id);
    d.vendor = j.value("vendor", std::string());
    d.hbm_bytes = positive(j, p, "hbm_bytes");
    d.context_reserve_bytes = positive(j, p, "context_reserve_bytes", true);
    d.comm_buffer_bytes_per_group = positive(j, p, "comm_buffer_bytes_per_group", true);
    auto pf = j.find("peak_flops");
    if (pf == j.end() || !pf->is_object())
        throw PlanError(p + "peak_flops", "is required (an object of dtype -> FLOP/s)");
    d.peak_flops_bf16 = positive(*pf, p + "peak_flops.", "bf16");
    d.peak_flops_fp16 = pf->value("fp16", d.peak_flops_bf16);
    d.peak_flops_fp32 = positive(*pf, p + "peak_flops.", "fp32");
    d.peak_flops_fp8 = pf->value("fp8", 0.0);
    d.peak_flops_int8 = pf->value("int8", 0.0);
    d.hbm_bandwidth = positive(j, p, "hbm_bandwidth");
    d.gemm_efficiency = j.value("gemm_efficiency", 0.7);
    d.attention_efficiency = j.value("attention_efficiency", 0.6);
    d.memory_efficiency = j.value("memory_efficiency", 0.8);
    for (double e : {d.gemm_efficiency, d.attention_efficiency, d.memory_efficiency}) {
        if (!(e > 0 && e <= 1))
            throw PlanError(p + "efficiency", "efficiencies must be in (0, 1]");
    }
    d.intra_node = readLink(j.value("intra_node", json()), p + "intra_node");
    d.inter_node = readLink(j.value("inter_node", json()), p + "inter_node");
    d.host_bandwidth = j.value("host_bandwidth", 25e9);
    if (auto s = j.find("sources"); s != j.end() && s->is_object()) {
        for (auto it = s->begin(); it != s->end(); ++it) {
            if (it->is_string())
                d.sources[it.key()] = it->get<std::string>();
        }
    }
    if (auto c = j.find("calibration"); c != j.end() && !c->is_null())
        d.calibration = readCalibration(*c, p + "calibration");
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
    j["sources"] = d.sources;
    if (d.calibration.present)
        j["calibration"] = calibrationToJson(d.calibration);
    return j;
}

} // namespace shardscope
