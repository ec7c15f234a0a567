#include "hcclbuffers.h"

#include "device.h"
#include "plan.h"
#include "units.h"

#include <algorithm>
#include <cmath>

namespace shardscope {

namespace {

constexpr int64_t kMiBInt = 1024 * 1024;

/// Products of a shape's sizes, exact beyond 64 bits (a GCC and Clang extension).
__extension__ typedef __int128 Wide;

/// ceil(num / den) of positive integers, exactly (MindSpeed's math.ceil of a float quotient;
/// the same outside ties of rounding).
int64_t ceilDiv(Wide num, Wide den)
{
    return int64_t((num + den - 1) / den);
}

std::string mbText(double mb)
{
    return formatFixed(mb, mb == std::floor(mb) ? 0 : 1) + " MB";
}

} // namespace

bool isHcclDevice(const DeviceProfile &dev)
{
    return dev.vendor == "huawei";
}

const std::vector<std::string> &hcclGroupBufferKeys()
{
    // mindspeed/core/hccl_buffer/hccl_adaptive_func.py, _parse_key_value_string: allowed_keys.
    static const std::vector<std::string> keys = {
        "dp", "dp_cp", "cp", "mp", "mp_exp", "tp", "pp", "embd", "tp_dp_cp", "tp_dp", "tp_cp",
        "tp_exp", "tp_ep_mp", "exp", "ep", "dp_modulo_exp", "pp_new_stream", "cp2", "cp_ulysses",
        "cp_ring", "cp_ring_intra", "cp_ring_intra_overlap", "nd1_dim1", "ag_x_sd_rcv_overlap",
        "nd1_dim2", "ag_y_sd_rcv_overlap", "nd2_dim1", "nd2_dim2", "default_group"};
    return keys;
}

bool parseHcclGroupBuffer(const std::string &text, std::map<std::string, int> &out, std::string *error)
{
    // _parse_key_value_string: parts split on ';' (on ',' when the string has one), each
    // "key:value" with spaces dropped.
    out.clear();
    std::string t;
    for (char ch : text)
        if (ch != ' ' && ch != '\t')
            t += ch;
    if (t.empty())
        return true;
    const char sep = t.find(',') != std::string::npos ? ',' : ';';
    size_t pos = 0;
    while (pos <= t.size()) {
        const size_t end = std::min(t.find(sep, pos), t.size());
        const std::string part = t.substr(pos, end - pos);
        pos = end + 1;
        if (part.empty() && pos > t.size())
            break; // a trailing separator
        const size_t colon = part.find(':');
        if (colon == std::string::npos || part.find(':', colon + 1) != std::string::npos) {
            if (error)
                *error = "\"" + part + "\" is not group:MB";
            return false;
        }
        const std::string key = part.substr(0, colon), value = part.substr(colon + 1);
        const std::vector<std::string> &keys = hcclGroupBufferKeys();
        if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
            if (error)
                *error = "\"" + key + "\" is not a group MindSpeed's --hccl-group-buffer accepts";
            return false;
        }
        int mb = 0;
        bool ok = !value.empty() && value.size() <= 5;
        for (char ch : value)
            ok = ok && ch >= '0' && ch <= '9';
        if (ok)
            mb = std::stoi(value);
        if (!ok || mb < 1 || mb > 65536) {
            if (error)
                *error = "\"" + value + "\" for " + key + " is not a whole number of MB in 1 .. 65536";
            return false;
        }
        out[key] = mb;
    }
    return true;
}

std::string formatHcclGroupBuffer(const std::map<std::string, int> &groups)
{
    std::string s;
    for (const auto &[k, v] : groups)
        s += (s.empty() ? "" : ";") + k + ":" + std::to_string(v);
    return s;
}

double hcclDefaultBufferMb(const Plan &plan, const DeviceProfile &dev)
{
    if (plan.memory.hccl_buffer_mb > 0)
        return plan.memory.hccl_buffer_mb;
    return dev.comm_buffer_bytes_per_group / 2.0 / kMiB;
}

int adaptiveHcclBufferMb(const Plan &plan, std::string_view group)
{
    // mindspeed/core/hccl_buffer/hccl_adaptive_func.py, hccl_buffer_auto_adaptive: each size
    // is 2 x ceil(elements / 2^20) MB, i.e. the bf16 message rounded up to whole MiB.
    const Wide s = plan.training.seq_len, b = plan.training.micro_batch, h = plan.model.hidden;
    const Wide tp = plan.parallel.tp, cp = plan.parallel.cp;
    const Wide heads = plan.model.heads, kv = plan.model.kv_heads;
    const bool sp = plan.parallel.sp;
    if (group == "tp") {
        // MoE with alltoall_seq aside (not modelled): the FFN's all-reduce S/CP x B x H, twice
        // without sequence parallelism (all-reduce), once with it (all-gather).
        const int64_t mlp = 2 * ceilDiv(s * b * h, cp * kMiBInt);
        return int(sp ? mlp : 2 * mlp);
    }
    if (group == "pp") // the P2P activation S/CP (/TP under SP) x B x H
        return int(2 * ceilDiv(s * b * h, cp * (sp ? tp : 1) * kMiBInt));
    if (group == "exp") {
        // With --hccl-ep-group-buffer-adaptive-factor > 0: S/CP/TP x B x H x topK (the factor
        // itself does not scale it), else a constant 200 MB.
        if (plan.memory.hccl_ep_group_buffer_adaptive_factor <= 0)
            return 200;
        const Wide k = std::max(1, plan.model.moe.top_k);
        return int(2 * ceilDiv(s * b * h * k, cp * tp * kMiBInt));
    }
    const CpAlgo algo = plan.parallel.cp_algo;
    if (group == "cp") {
        if (algo == CpAlgo::Ulysses) // all-to-all S/CP x B x H/TP
            return int(2 * ceilDiv(s * b * h, cp * tp * kMiBInt));
        if (algo == CpAlgo::Ring) // send/recv of K and V: 2 x S/CP x B x H/heads x kv/TP
            return int(2 * 2 * ceilDiv(s * b * h * kv, cp * heads * tp * kMiBInt));
        return 10; // hybrid: the loss' small collectives over all of cp
    }
    if (group == "cp_ulysses" && algo == CpAlgo::Hybrid) {
        const Wide u = plan.parallel.ulyssesDegree();
        return int(2 * ceilDiv(s * b * h, u * tp * kMiBInt));
    }
    if (group == "cp_ring" && algo == CpAlgo::Hybrid) {
        const Wide r = plan.parallel.ringDegree();
        return int(2 * 2 * ceilDiv(s * b * h * kv, r * heads * tp * kMiBInt));
    }
    // The model-parallel group's optimizer reductions and tp_cp's router counts: small
    // messages, a constant 10 MB.
    if (group == "mp" || group == "tp_cp")
        return 10;
    return 0;
}

namespace {

/// One communicator's buffers, as commGroupBuffers describes them (without the name).
struct GroupSize
{
    double bytes = 0;
    CommGroupBuffer::Source source = CommGroupBuffer::Source::Default;
    int mb = 0;
};

GroupSize sizeGroup(const Plan &plan, const DeviceProfile &dev, bool hccl, double defaultMb, std::string_view g)
{
    GroupSize c;
    if (!hccl) {
        c.bytes = dev.comm_buffer_bytes_per_group;
        return c;
    }
    // parallel_state.py, initialize_model_parallel_wrapper: the adaptive table first, the
    // explicit entries over it; get_nccl_options_wrapper gives a group in the table its
    // hccl_buffer_size, any other group HCCL_BUFFSIZE.
    double mb = defaultMb;
    if (plan.memory.hccl_buffer_adaptive) {
        if (const int a = adaptiveHcclBufferMb(plan, g); a > 0) {
            mb = a;
            c.source = CommGroupBuffer::Source::Adaptive;
        }
    }
    if (!plan.memory.hccl_group_buffer.empty()) {
        if (auto it = plan.memory.hccl_group_buffer.find(std::string(g)); it != plan.memory.hccl_group_buffer.end()) {
            mb = it->second;
            c.source = CommGroupBuffer::Source::Explicit;
        }
    }
    c.mb = int(std::lround(mb));
    if (c.source == CommGroupBuffer::Source::Default && plan.memory.hccl_buffer_mb <= 0)
        c.bytes = dev.comm_buffer_bytes_per_group; // the profile's figure as it stands
    else
        c.bytes = 2.0 * mb * kMiB; // HCCL's input and output buffers of that size
    return c;
}

} // namespace

std::vector<CommGroupBuffer> commGroupBuffers(const Plan &plan, const DeviceProfile &dev,
                                              std::span<const std::string_view> groups)
{
    std::vector<CommGroupBuffer> out;
    out.reserve(groups.size());
    const bool hccl = isHcclDevice(dev);
    const double defaultMb = hcclDefaultBufferMb(plan, dev);
    for (std::string_view g : groups) {
        const GroupSize s = sizeGroup(plan, dev, hccl, defaultMb, g);
        CommGroupBuffer c;
        c.group = std::string(g);
        c.bytes = s.bytes;
        c.source = s.source;
        c.mb = s.mb;
        out.push_back(std::move(c));
    }
    return out;
}

double commGroupBufferBytes(const Plan &plan, const DeviceProfile &dev, std::span<const std::string_view> groups)
{
    const bool hccl = isHcclDevice(dev);
    const double defaultMb = hcclDefaultBufferMb(plan, dev);
    double total = 0;
    for (std::string_view g : groups)
        total += sizeGroup(plan, dev, hccl, defaultMb, g).bytes;
    return total;
}

Text explainCommGroups(const Plan &plan, const DeviceProfile &dev,
                       const std::vector<CommGroupBuffer> &groups)
{
    Text t;
    if (groups.empty())
        return t; // no communicator: nothing to explain
    double total = 0;
    for (const CommGroupBuffer &g : groups)
        total += g.bytes;
    if (!isHcclDevice(dev)) {
        t.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                "%1 communicators x %2 (the device profile's per-communicator buffers) = %3"),
              {std::to_string(groups.size()), formatBytes(dev.comm_buffer_bytes_per_group),
               formatBytes(total)});
        t.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                "; NCCL: MindSpeed's per-group HCCL buffers do not apply."));
        return t;
    }
    std::string terms;
    for (const CommGroupBuffer &g : groups) {
        if (!terms.empty())
            terms += " + ";
        const char *why = g.source == CommGroupBuffer::Source::Explicit   ? "set"
                          : g.source == CommGroupBuffer::Source::Adaptive ? "adaptive"
                                                                          : "HCCL_BUFFSIZE";
        terms += g.group + " 2 x " + mbText(g.bytes / 2.0 / kMiB) + " (" + why + ")";
    }
    t.add(QT_TRANSLATE_NOOP("MemoryExplanation", "HCCL buffers per communication group: %1 = %2"),
          {terms, formatBytes(total)});
    t.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                            "; each communicator holds an input and an output buffer of its "
                            "group's size (HCCL_BUFFSIZE %1 unless MindSpeed's "
                            "--hccl-group-buffer or --hccl-group-buffer-adaptive sets it)."),
          {mbText(hcclDefaultBufferMb(plan, dev))});
    return t;
}

} // namespace shardscope
