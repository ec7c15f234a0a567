#include "estimate.h"

#include "adapters.h"
#include "catalog.h"
#include "comm.h"
#include "compute.h"
#include "framework.h"

#include <algorithm>

namespace shardscope {

Estimate estimate(const Plan &plan, const Catalog &catalog)
{
    return estimate(plan, catalog, forEachInTurn);
}

Estimate estimate(const Plan &plan, const Catalog &catalog, ForEachRank forEach)
{
    Estimate e;
    e.padded_vocab = paddedVocab(plan, *catalog.framework(plan.framework));
    e.memory = estimateMemory(plan, catalog);
    replayAllocator(plan, catalog, e.memory, false, forEach);
    const DeviceProfile &dev = *catalog.device(plan.cluster.device);
    const FrameworkProfile &fw = *catalog.framework(plan.framework);
    const ComputeProfile cp = computeProfile(dev, fw, plan.precision.compute);
    const ComputeEstimate ce = estimateCompute(plan, cp);
    e.communication = communicationInventory(plan, dev, fw, ce);
    double exposed = 0;
    for (const Collective &c : e.communication)
        exposed += c.exposed_time_s;
    const double offload =
        offloadBytesPerStep(plan, ce, activationOffloadBytesPerMicrobatch(plan, catalog));
    e.step = assembleStep(plan, cp, ce, exposed, offload);
    return e;
}

double activationOffloadBytesPerMicrobatch(const Plan &plan, const Catalog &catalog)
{
    if (!plan.memory.offload.activations && !plan.memory.swap_attention)
        return 0.0;
    // What the first stage would keep for one micro-batch without offloading.
    Plan kept = plan;
    kept.memory.offload.activations = false;
    kept.memory.swap_attention = false;
    const MemoryEstimate keptEstimate = estimateMemory(kept, catalog);
    return activationOffloadBytesPerMicrobatch(
        plan, plan.memory.offload.activations ? keptEstimate : estimateMemory(plan, catalog), keptEstimate);
}

double activationOffloadBytesPerMicrobatch(const Plan &plan, const MemoryEstimate &me, const MemoryEstimate &kept)
{
    if (!plan.memory.offload.activations && !plan.memory.swap_attention)
        return 0.0;
    const double all = activationBytesPerMicrobatch(plan, kept);
    if (plan.memory.offload.activations)
        return all;
    // Swap-attention (core/swapattention.h): the swapped share, down after each layer's forward
    // and up before its backward.
    return std::max(0.0, all - activationBytesPerMicrobatch(plan, me));
}

double activationBytesPerMicrobatch(const Plan &plan, const MemoryEstimate &me)
{
    if (me.ranks.empty())
        return 0.0;
    const RankMemory &r = me.ranks.front();
    const double inflight = plan.parallel.pp > 1
                                ? std::min<double>(plan.parallel.pp, plan.training.grad_accum)
                                : 1.0;
    return r.phases[size_t(Phase::Forward)][Component::Activations] / inflight;
}

nlohmann::json estimateToJson(const Plan &plan, const Estimate &e)
{
    using nlohmann::json;
    json j;
    j["plan"] = plan.name;
    j["hbm_bytes"] = e.memory.hbm_bytes;
    j["usable_bytes"] = e.memory.usable_bytes;
    j["fits"] = e.memory.fits;
    j["hbm_fits"] = e.memory.hbm_fits;
    j["training_method"] = std::string(toString(plan.training.method.method));
    if (e.padded_vocab > 0 && e.padded_vocab != plan.model.vocab) {
        // Counted over the padded vocabulary the framework trains.
        Plan padded = plan;
        padded.model.vocab = e.padded_vocab;
        j["trainable_parameters"] = trainableParameters(padded);
        j["padded_vocab"] = e.padded_vocab;
    } else {
        j["trainable_parameters"] = trainableParameters(plan);
    }
    {
        const HostMemory &h = e.memory.host;
        json host = {{"bytes_per_node", h.bytesPerNode()},
                     {"pinned_bytes_per_node", h.pinned_per_node},
                     {"pageable_bytes_per_node", h.pageable_per_node},
                     {"fullest_node", h.fullest_node},
                     {"capacity_bytes", h.capacity_bytes > 0 ? json(h.capacity_bytes) : json(nullptr)},
                     {"fits", h.fits}};
        json hr = json::array();
        for (const HostRankMemory &r : h.ranks)
            hr.push_back({{"stage", r.stage}, {"pinned_bytes", r.pinned}, {"pageable_bytes", r.pageable}});
        host["ranks"] = hr;
        j["host"] = host;
    }
    j["peak_rank"] = e.memory.peak_rank;
    j["peak_bytes"] = e.memory.peak_bytes;
    json ranks = json::array();
    for (const RankMemory &r : e.memory.ranks) {
        json comps = json::object(), afterComps = json::object();
        const Breakdown &b = r.peak();
        for (int c = 0; c < kComponentCount; ++c) {
            comps[std::string(componentKey(Component(c)))] = b.bytes[size_t(c)];
            afterComps[std::string(componentKey(Component(c)))] = r.after_step.bytes[size_t(c)];
        }
        json phases = json::object();
        for (int p = 0; p < kPhaseCount; ++p)
            phases[std::string(phaseKey(Phase(p)))] = r.phases[size_t(p)].total();
        json commGroups = json::array();
        for (const CommGroupBuffer &g : r.reserve.groups) {
            json cg = {{"group", g.group}, {"bytes", g.bytes}};
            if (g.mb > 0) { // HCCL: the group's buffer size and where it comes from
                cg["buffer_mb"] = g.mb;
                cg["source"] = g.source == CommGroupBuffer::Source::Explicit   ? "hccl_group_buffer"
                               : g.source == CommGroupBuffer::Source::Adaptive ? "hccl_buffer_adaptive"
                                                                               : "hccl_buffsize";
            }
            commGroups.push_back(cg);
        }
        ranks.push_back({{"rank", r.rank},
                         {"stage", r.stage},
                         {"ranks", r.count},
                         {"layers", r.layers},
                         {"peak_bytes", r.peak_bytes},
                         {"peak_phase", std::string(phaseKey(r.peak_phase))},
                         {"first_step_peak_bytes", r.first_step_peak_bytes},
                         {"after_step_bytes", r.after_step.total()},
                         {"after_step_components", afterComps},
                         {"reserved_bytes", r.reserved_bytes},
                         {"oom", r.oom ? json{{"tensor", r.oom_tensor},
                                              {"layer", r.oom_layer >= 0 ? json(r.oom_layer) : json(nullptr)},
                                              {"phase", std::string(phaseKey(r.oom_phase))},
                                              {"step", r.oom_step},
                                              {"request_bytes", r.oom_request_bytes}}
                                       : json(nullptr)},
                         {"components", comps},
                         {"phase_peaks", phases},
                         {"runtime_reserved_bytes", r.reserve.total()},
                         {"runtime_reserve",
                          {{"context", r.reserve.context},
                           {"communicator_buffers", r.reserve.comm_buffers},
                           {"communicators", r.reserve.communicators},
                           {"allocator", r.reserve.allocator}}},
                         {"comm_groups", commGroups}});
    }
    j["ranks"] = ranks;
    json comm = json::array();
    for (const Collective &c : e.communication) {
        comm.push_back({{"collective", c.collective},
                        {"group", c.group},
                        {"group_size", c.group_size},
                        {"bytes", c.bytes},
                        {"count_per_step", c.count_per_step},
                        {"time_s", c.time_s},
                        {"exposed_time_s", c.exposed_time_s},
                        {"phase", c.phase},
                        {"note", c.note}});
    }
    j["communication"] = comm;
    j["step"] = {{"compute_s", e.step.compute_s},
                 {"communication_s", e.step.communication_s},
                 {"bubble_s", e.step.bubble_s},
                 {"offload_s", e.step.offload_s},
                 {"step_s", e.step.step_s},
                 {"tokens_per_s", e.step.tokens_per_s},
                 {"mfu", e.step.mfu},
                 {"hfu", e.step.hfu}};
    return j;
}

} // namespace shardscope
