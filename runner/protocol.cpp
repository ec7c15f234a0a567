#include "protocol.h"

namespace shardscope::protocol {

using nlohmann::json;

Message parseLine(std::string_view line)
{
    Message m;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' '))
        line.remove_suffix(1);
    if (line.empty()) {
        m.error = "empty line";
        return m;
    }
    json j = json::parse(line.begin(), line.end(), nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
        m.error = "not a JSON object";
        return m;
    }
    auto t = j.find("type");
    if (t == j.end() || !t->is_string()) {
        m.error = "no \"type\"";
        return m;
    }
    const std::string type = t->get<std::string>();
    if (auto id = j.find("id"); id != j.end() && id->is_number_integer())
        m.id = id->get<int>();
    if (type == "hello") {
        m.type = MessageType::Hello;
    } else if (type == "result") {
        if (m.id < 0) {
            m.error = "result without an integer \"id\"";
            return m;
        }
        if (!j.contains("status") || !j["status"].is_string()) {
            m.error = "result without a \"status\"";
            return m;
        }
        m.type = MessageType::Result;
    } else if (type == "probe_result") {
        m.type = MessageType::ProbeResult;
    } else if (type == "error") {
        m.type = MessageType::Error;
    } else if (type == "log") {
        m.type = MessageType::Log;
    } else if (type == "done") {
        m.type = MessageType::Done;
    } else {
        m.error = "unknown type \"" + type + "\"";
        return m;
    }
    m.body = std::move(j);
    return m;
}

std::string checkHello(const json &hello)
{
    const std::string proto = hello.value("protocol", std::string());
    if (proto != kName)
        return "the worker does not speak the " + std::string(kName) + " protocol (it says \"" +
               proto + "\")";
    const auto v = hello.find("version");
    if (v == hello.end() || !v->is_number_integer())
        return "the worker's hello has no protocol version";
    if (v->get<int>() != kVersion)
        return "the worker speaks protocol version " + std::to_string(v->get<int>()) +
               ", this build speaks version " + std::to_string(kVersion) +
               " (install the worker that came with this build)";
    return {};
}

BackendInfo infoFromHello(const json &h)
{
    BackendInfo i;
    i.protocol_version = h.value("version", 0);
    i.backend = h.value("backend", std::string("torch"));
    i.device = h.value("device", std::string());
    i.device_name = h.value("device_name", std::string());
    i.interpreter = h.value("python", std::string());
    std::string v;
    if (h.contains("python_version"))
        v = "python " + h.value("python_version", std::string());
    if (h.contains("torch"))
        v += (v.empty() ? "" : ", ") + std::string("torch ") + h.value("torch", std::string());
    if (h.contains("torch_npu"))
        v += ", torch_npu " + h.value("torch_npu", std::string());
    i.versions = v;
    i.world_size = h.value("world_size", 1);
    i.total_memory = h.value("total_memory", 0.0);
    i.free_memory = h.value("free_memory", 0.0);
    i.context_reserve = h.value("context_reserve", 0.0);
    return i;
}

KernelMeasurement measurementFromResult(const json &r)
{
    KernelMeasurement m;
    m.name = r.value("name", std::string());
    m.status = r.value("status", std::string("error"));
    m.message = r.value("message", std::string());
    m.time_s = r.value("time_s", 0.0);
    m.min_s = r.value("min_s", m.time_s);
    m.max_s = r.value("max_s", m.time_s);
    m.repeats = r.value("repeats", 0);
    m.flops_per_s = r.value("flops_per_s", 0.0);
    m.bytes_per_s = r.value("bytes_per_s", 0.0);
    m.algbw = r.value("algbw", 0.0);
    m.busbw = r.value("busbw", 0.0);
    m.ranks = r.value("ranks", 0);
    m.reference_time_s = r.value("reference_time_s", 0.0);
    if (m.status == "ok" && !(m.time_s > 0)) {
        m.status = "error";
        m.message = "the worker reported no positive time";
    }
    return m;
}

ProbeMeasurement probeFromResult(const json &r)
{
    ProbeMeasurement p;
    p.status = r.value("status", std::string("error"));
    p.message = r.value("message", std::string());
    p.layers = r.value("layers", 0);
    p.seq_len = r.value("seq_len", int64_t(0));
    p.micro_batch = r.value("micro_batch", 0);
    p.mode = r.value("mode", std::string());
    p.attention = r.value("attention", std::string());
    p.attention_impl = r.value("attention_impl", std::string());
    p.recompute = r.value("recompute", std::string());
    p.peak_allocated = r.value("peak_allocated", 0.0);
    p.baseline = r.value("baseline", 0.0);
    p.peak_reserved = r.value("peak_reserved", 0.0);
    p.method = r.value("method", std::string());
    p.step_s = r.value("step_s", 0.0);
    if (const auto s = r.find("snapshot"); s != r.end() && s->is_string())
        p.snapshot = s->get<std::string>();
    return p;
}

std::string configLine(int warmup, int repeats, bool reference)
{
    return json{{"type", "config"},
                {"warmup", warmup},
                {"repeats", repeats},
                {"reference", reference}}
               .dump() +
           "\n";
}

std::string kernelLine(int id, const Kernel &k)
{
    return json{{"type", "kernel"}, {"id", id}, {"kernel", kernelToJson(k)}}.dump() + "\n";
}

std::string probeLine(const MemoryProbe &probe)
{
    return json{{"type", "probe"}, {"probe", probeToJson(probe)}}.dump() + "\n";
}

std::string endLine()
{
    return json{{"type", "end"}}.dump() + "\n";
}

} // namespace shardscope::protocol
