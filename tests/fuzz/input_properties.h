#pragma once

// What must hold for any byte string given to the readers of measurements and profiles, checked
// by the fuzz targets fuzz_import, fuzz_profile and fuzz_hfconfig and by the regression test
// that replays their corpora (tst_input_regressions.cpp):
// - a reader either returns a result or throws PlanError / std::runtime_error with a message,
//   never another exception or a crash;
// - what it returns is finite and within the ranges its consumers rely on (no negative sizes,
//   times or bandwidths, no zero efficiency);
// - a device profile read back from its own JSON (deviceToJson) is the same profile.
// Plain C++ (no Qt): the fuzz build needs the core and runner/importers.cpp only.
#include "core/device.h"
#include "core/errors.h"
#include "core/framework.h"
#include "core/jsoninput.h"
#include "core/model.h"
#include "runner/importers.h"

#include <cmath>
#include <exception>
#include <string>

namespace shardscope::fuzzing {

struct InputCheck
{
    bool parsed = false;   ///< the reader accepted the text
    std::string error;     ///< its message when it did not
    std::string violation; ///< a broken property (empty when all hold)
};

inline bool nonNegative(double v) { return std::isfinite(v) && v >= 0; }

/// Runs `read`, sorting its outcome into accepted, refused (with a message) or a violation.
template<typename F>
InputCheck guarded(const char *reader, F &&read)
{
    InputCheck out;
    try {
        out.violation = read();
        out.parsed = true;
    } catch (const PlanError &e) {
        out.error = e.what();
    } catch (const std::runtime_error &e) {
        out.error = e.what();
    } catch (const std::exception &e) {
        out.violation = std::string(reader) + " threw " + typeid(e).name() + ": " + e.what();
        return out;
    }
    if (!out.parsed && out.error.empty())
        out.violation = std::string(reader) + " refused with an empty message";
    return out;
}

/// nccl-tests or hccl_test text output.
inline InputCheck checkCollectiveText(const std::string &text)
{
    return guarded("parseCollectiveBenchmark", [&]() -> std::string {
        const CollectiveImport c = parseCollectiveBenchmark(text, "all_reduce_perf", 8);
        if (c.points.empty())
            return "accepted with no points";
        if (!nonNegative(c.avg_busbw))
            return "average busbw not finite";
        for (const CollectivePoint &p : c.points) {
            if (!nonNegative(p.bytes) || !nonNegative(p.time_s) || !nonNegative(p.algbw) ||
                !nonNegative(p.busbw))
                return "a point is negative or not finite";
            if (p.collective.empty())
                return "a point without a collective";
        }
        return {};
    });
}

/// A Chrome trace (torch.profiler / torch_npu).
inline InputCheck checkTraceText(const std::string &text)
{
    return guarded("parseChromeTrace", [&]() -> std::string {
        const TraceImport t = parseChromeTrace(text);
        if (!nonNegative(t.span_s) || !nonNegative(t.peak_allocated) || !nonNegative(t.peak_reserved) ||
            t.events < 0)
            return "span, peaks or event count negative or not finite";
        for (const TraceCollective &c : t.collectives) {
            if (c.calls <= 0 || !nonNegative(c.total_s) || !nonNegative(c.max_s) || !nonNegative(c.bytes) ||
                c.max_s > c.total_s * (1 + 1e-12) + 1e-300)
                return "collective " + c.collective + ": calls, times or bytes out of range";
        }
        for (const TraceMemoryPoint &p : t.memory) {
            if (!nonNegative(p.allocated) || !nonNegative(p.reserved) || !std::isfinite(p.t_s))
                return "a memory point out of range";
        }
        return {};
    });
}

inline std::string checkDevice(const DeviceProfile &d)
{
    if (d.id.empty() || !(d.hbm_bytes > 0) || !nonNegative(d.context_reserve_bytes) ||
        !nonNegative(d.comm_buffer_bytes_per_group) || !(d.peak_flops_bf16 > 0) ||
        !(d.peak_flops_fp32 > 0) || !(d.hbm_bandwidth > 0) || !(d.host_bandwidth > 0) ||
        !nonNegative(d.host_memory_bytes))
        return "device " + d.id + ": a capacity, rate or bandwidth out of range";
    for (double e : {d.gemm_efficiency, d.attention_efficiency, d.memory_efficiency,
                     d.intra_node.efficiency, d.inter_node.efficiency}) {
        if (!(e > 0 && e <= 1))
            return "device " + d.id + ": an efficiency outside (0, 1]";
    }
    for (const LinkProfile *l : {&d.intra_node, &d.inter_node}) {
        if (!(l->bandwidth > 0) || !nonNegative(l->latency))
            return "device " + d.id + ": a link bandwidth or latency out of range";
    }
    return {};
}

/// What `bench --import` does with a file: a profiler trace when it looks like one, else
/// collective benchmark output.
inline InputCheck checkImportText(const std::string &text)
{
    return looksLikeChromeTrace(text) ? checkTraceText(text) : checkCollectiveText(text);
}

/// A device profile (resources/devices, the user device folder, a calibrated profile).
inline InputCheck checkDeviceText(const std::string &text)
{
    return guarded("deviceFromJson", [&]() -> std::string {
        const DeviceProfile d = deviceFromJson(parseJsonText(text, "profile"));
        if (std::string v = checkDevice(d); !v.empty())
            return v;
        const DeviceProfile again = deviceFromJson(deviceToJson(d));
        if (deviceToJson(again) != deviceToJson(d))
            return "device " + d.id + " changes when read back from its own JSON";
        return {};
    });
}

/// A framework profile (resources/frameworks).
inline InputCheck checkFrameworkText(const std::string &text)
{
    return guarded("frameworkFromJson", [&]() -> std::string {
        const FrameworkProfile f = frameworkFromJson(parseJsonText(text, "profile"));
        if (f.id.empty() || f.fsdp_prefetch_layers < 0 || !(f.ddp_bucket_bytes > 0) || !nonNegative(f.reduce_bucket_bytes))
            return "framework " + f.id + ": a field out of range";
        return {};
    });
}

/// A Hugging Face config.json.
inline InputCheck checkHfConfigText(const std::string &text)
{
    return guarded("shapeFromHuggingFaceConfig", [&]() -> std::string {
        const ModelShape m = shapeFromHuggingFaceConfig(parseJsonText(text, "config.json"));
        if (m.layers < 1 || m.layers > 1024 || m.hidden < 1 || m.hidden > 262144 || m.heads < 1 ||
            m.kv_heads < 1 || m.heads % m.kv_heads != 0 || m.head_dim < 1 || m.vocab < 1 ||
            m.vocab > 16777216 || m.ffn_hidden < 1)
            return "a shape field out of range";
        if (m.moe.enabled() && (m.moe.top_k < 1 || m.moe.top_k > m.moe.experts))
            return "top_k out of range";
        const ParameterCounts pc = countParameters(m);
        if (pc.total <= 0 || pc.per_layer <= 0)
            return "a parameter count is not positive (overflow?)";
        return {};
    });
}

} // namespace shardscope::fuzzing
