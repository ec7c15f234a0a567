// The layout search: every (tp, pp, cp, dp, ep, sharding, sp, recompute, offload,
// micro-batch, virtual stages) for the base plan's model, sequence, precision, framework and
// cluster; each layout is checked with validatePlan's rules, costed by the compute and
// communication models and kept when estimateMemory says it fits.
//
// The hot path mutates one working Plan in place (no copies of its strings or JSON), keeps
// compact records of the fitting layouts, and builds full Plans only for the results.
#include "search.h"

#include "optimizers.h"

#include "catalog.h"
#include "comm.h"
#include "compute.h"
#include "device.h"
#include "errors.h"
#include "framework.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace shardscope {

namespace {

std::vector<int> divisors(int64_t n, int64_t cap)
{
    std::vector<int> out;
    for (int64_t d = 1; d <= n && d <= cap; ++d) {
        if (n % d == 0)
            out.push_back(int(d));
    }
    return out;
}

/// One layout, compactly (what varies between candidates).
struct Layout
{
    int dp = 1, tp = 1, pp = 1, cp = 1, ep = 1, v = 1;
    int micro_batch = 1, grad_accum = 1;
    bool sp = false;
    Sharding sharding = Sharding::None;
    Recompute recompute = Recompute::None;
    uint8_t offload = 0; ///< bit 0 optimizer, 1 params, 2 grads, 3 activations
};

struct Scored
{
    Layout layout;
    double required = 0;
    double peak = 0;
    StepEstimate step;
};

void apply(Plan &p, const Layout &l)
{
    p.parallel.dp = l.dp;
    p.parallel.dp_shard = 0; // the search's layouts shard over all of dp
    p.parallel.tp = l.tp;
    p.parallel.pp = l.pp;
    p.parallel.cp = l.cp;
    p.parallel.ep = l.ep;
    p.parallel.sp = l.sp;
    p.parallel.sharding = l.sharding;
    // What only the distributed optimizer has goes with it (validatePlan's rules).
    if (l.sharding != Sharding::Optimizer && l.sharding != Sharding::Grads && p.memory.overlap_param_gather)
        p.memory.overlap_param_gather = false;
    if (l.sharding != Sharding::Optimizer)
        p.memory.param_and_grad_buffer_pad = 0;
    p.parallel.virtual_stages = l.v;
    p.parallel.pp_schedule = l.v > 1 ? PpSchedule::Interleaved : PpSchedule::OneFOneB;
    p.training.micro_batch = l.micro_batch;
    p.training.grad_accum = l.grad_accum;
    p.memory.recompute = l.recompute;
    p.memory.offload.optimizer = l.offload & 1;
    p.memory.offload.params = l.offload & 2;
    p.memory.offload.grads = l.offload & 4;
    p.memory.offload.activations = l.offload & 8;
}

constexpr uint8_t kOffloadSets[] = {0, 1, 1 | 2 | 4, 8};

/// Parameters, gradients, master weights and optimizer states on the heaviest stage's rank, as
/// the memory engine places them at the optimizer step (ZeRO stages, offload switches).
double stateBytes(const Plan &p, const FrameworkProfile &fw, const ComputeEstimate &ce)
{
    // Under LoRA, QLoRA or freezing most weights have no gradient or optimizer state: the bound
    // below (every parameter trained) would prune layouts that fit. No bound then.
    if (p.training.method.method != TrainingMethod::Full)
        return 0.0;
    const Precision &pr = p.precision;
    const Offload &off = p.memory.offload;
    const double shardedAll = ce.optimizer_elements; // elements / (dp x cp) when sharded
    const double all = ce.params_on_rank;
    const double sharded = p.parallel.sharding != Sharding::None ? shardedAll : all;
    const Sharding sh = p.parallel.sharding;
    const double gBytes =
        mainGradDtype(p, fw) != DType::None ? bytesOf(mainGradDtype(p, fw)) : bytesOf(pr.grads);
    const bool master = pr.master_weights != DType::None && pr.master_weights != pr.params;
    double bytes = 0;
    if (!off.params)
        bytes += (sh == Sharding::Full ? sharded : all) * bytesOf(pr.params);
    if (!off.grads)
        bytes += (sh == Sharding::Full || sh == Sharding::Grads ? sharded : all) * gBytes;
    if (!off.optimizer)
        bytes += sharded * ((master ? bytesOf(pr.master_weights) : 0.0) +
                            optimizerStateBytesPerElement(pr));
    return bytes;
}

} // namespace

bool quickValidate(const Plan &plan)
{
    const ModelShape &m = plan.model;
    const Parallel &pa = plan.parallel;
    if (int64_t(pa.dp) * pa.tp * pa.pp * pa.cp != plan.cluster.world())
        return false;
    if (m.heads % pa.tp != 0 || m.kv_heads % pa.tp != 0)
        return false;
    // The same rules as validatePlan: the dense FFN (when some layer has it), each expert under
    // expert tensor parallelism, the shared experts under tp; ep x etp tiles the stage.
    if (m.layers > m.moeLayers() && m.ffn_hidden % pa.tp != 0)
        return false;
    if (m.moe.enabled()) {
        const int etp = pa.expertTp();
        if (m.moe.expert_ffn_hidden % etp != 0)
            return false;
        if (m.moe.shared_experts > 0 && m.moe.shared_expert_ffn_hidden % pa.tp != 0)
            return false;
        if ((int64_t(pa.dp) * pa.cp * pa.tp) % (int64_t(pa.ep) * etp) != 0)
            return false;
        if (etp != pa.tp && pa.tp > 1 && !pa.sp)
            return false;
    }
    if (m.position_embedding == PositionEmbedding::Learned && plan.training.seq_len > m.max_positions)
        return false;
    if (pa.pp_schedule == PpSchedule::Interleaved) {
        if (pa.pp < 2 || pa.virtual_stages < 2 || plan.training.grad_accum % pa.pp != 0)
            return false;
    } else if (pa.virtual_stages != 1) {
        return false;
    }
    if (m.layers % (int64_t(pa.pp) * pa.virtual_stages) != 0)
        return false;
    if (plan.training.seq_len % pa.cp != 0)
        return false;
    if (pa.cp_algo != CpAlgo::Ring) {
        const int u = pa.ulyssesDegree();
        if (pa.cp_algo == CpAlgo::Hybrid && (u >= pa.cp || pa.cp % u != 0))
            return false;
        if ((m.heads / pa.tp) % u != 0 || (m.kv_heads / pa.tp) % u != 0)
            return false;
    }
    if (pa.sp && (pa.tp < 2 || (plan.training.seq_len / pa.cp) % pa.tp != 0))
        return false;
    if (pa.ep > 1) {
        if (!m.moe.enabled() || m.moe.experts % pa.ep != 0 ||
            (pa.etp == 0 && (int64_t(pa.dp) * pa.cp) % pa.ep != 0))
            return false;
    }
    if (plan.memory.offload.params && pa.sharding != Sharding::Full)
        return false;
    if (pa.dp_shard > 0 && (pa.sharding == Sharding::None || pa.dp_shard > pa.dp || pa.dp % pa.dp_shard != 0))
        return false;
    if (double(plan.training.seq_len) * plan.training.micro_batch > 1.0e9)
        return false;
    return true;
}

Cluster searchCluster(const Cluster &cluster, int max_devices)
{
    Cluster c = cluster;
    if (max_devices <= 0 || max_devices >= c.world())
        return c;
    if (max_devices >= c.devices_per_node) {
        c.nodes = max_devices / c.devices_per_node;
    } else {
        c.nodes = 1;
        int d = max_devices;
        while (c.devices_per_node % d != 0)
            --d;
        c.devices_per_node = d;
    }
    return c;
}

namespace {

/// Fits with the allocator replayed and `headroom` bytes free on every rank.
bool fitsWithHeadroom(const Plan &p, const Catalog &catalog, const DeviceProfile &dev,
                      double headroom)
{
    if (!quickValidate(p))
        return false;
    MemoryEstimate me = estimateMemory(p, catalog);
    if (!me.fits)
        return false;
    replayAllocator(p, catalog, me, true);
    if (!me.fits)
        return false;
    for (const RankMemory &r : me.ranks) {
        if (r.peak_bytes + r.reserve.total() + headroom > dev.hbm_bytes)
            return false;
    }
    return true;
}

/// The largest k in [1, limit] with fits(k), assuming fits is monotonic (memory grows with k);
/// 0 when fits(1) is false.
int64_t largestTrue(int64_t limit, const std::function<bool(int64_t)> &fits)
{
    if (limit < 1 || !fits(1))
        return 0;
    int64_t lo = 1, hi = 2;
    while (hi <= limit && fits(hi)) {
        lo = hi;
        hi *= 2;
    }
    hi = std::min(hi, limit + 1); // fits(lo), not fits(hi) (or beyond the limit)
    while (hi - lo > 1) {
        const int64_t mid = lo + (hi - lo) / 2;
        (fits(mid) ? lo : hi) = mid;
    }
    return lo;
}

} // namespace

LargestFit largestFit(const Plan &plan, const Catalog &catalog, double min_headroom_bytes)
{
    Plan work = plan;
    validatePlan(work, catalog);
    const DeviceProfile &dev = *catalog.device(work.cluster.device);
    LargestFit out;
    const Parallel &pa = work.parallel;
    out.seq_step = int64_t(pa.cp) * (pa.sp ? pa.tp : 1);
    // Tokens per micro-batch stay below 1e9 (quickValidate), positions below a learned table.
    int64_t seqLimit = int64_t(1.0e9 / double(plan.training.micro_batch)) / out.seq_step;
    if (work.model.position_embedding == PositionEmbedding::Learned)
        seqLimit = std::min<int64_t>(seqLimit, work.model.max_positions / out.seq_step);
    out.seq_len = out.seq_step * largestTrue(seqLimit, [&](int64_t k) {
                      work.training.seq_len = k * out.seq_step;
                      return fitsWithHeadroom(work, catalog, dev, min_headroom_bytes);
                  });
    work.training.seq_len = plan.training.seq_len;
    const int64_t mbLimit = int64_t(1.0e9 / double(plan.training.seq_len));
    out.micro_batch = largestTrue(std::min<int64_t>(mbLimit, 1 << 20), [&](int64_t k) {
        work.training.micro_batch = int(k);
        return fitsWithHeadroom(work, catalog, dev, min_headroom_bytes);
    });
    return out;
}

SearchOutcome searchLayouts(const SearchRequest &request, const Catalog &catalog,
                            const SearchProgress &progress, const std::atomic<bool> *cancel)
{
    const auto started = std::chrono::steady_clock::now();
    SearchOutcome out;
    Plan work = request.base;
    validatePlan(work, catalog); // the fixed part (device, framework, dtypes) must be valid
    // Every result is the base plan on the (possibly cut) cluster with a layout applied.
    Plan base = request.base;
    base.cluster = searchCluster(base.cluster, request.max_devices);
    work.cluster = base.cluster;
    const DeviceProfile &dev = *catalog.device(work.cluster.device);
    const FrameworkProfile &fw = *catalog.framework(work.framework);
    const ComputeProfile cprof = computeProfile(dev, fw, work.precision.compute);
    const ModelShape &mo = work.model;
    const int world = work.cluster.world();
    const int64_t seq = work.training.seq_len;
    const int64_t global = request.global_batch > 0 ? request.global_batch
                                                    : int64_t(request.base.parallel.dp) *
                                                          request.base.training.micro_batch *
                                                          request.base.training.grad_accum;
    if (global < 1)
        throw PlanError("global_batch", "must be >= 1");
    if (global > kMaxSequencesPerStep)
        throw PlanError("global_batch", "must be at most " + std::to_string(kMaxSequencesPerStep) +
                                            " sequences per step, got " + std::to_string(global));
    if (double(global) * double(work.training.seq_len) > kMaxTokensPerStep)
        throw PlanError("global_batch", std::to_string(global) + " sequences of " +
                                            std::to_string(work.training.seq_len) +
                                            " tokens is beyond any run (at most 1e12 tokens per "
                                            "step)");
    // TP stays inside a node (its collectives are on the critical path of every layer); it
    // splits the heads, the dense FFN where a layer has one, the shared experts, and the routed
    // experts unless the plan gives them their own etp.
    const bool denseFfn = mo.layers > mo.moeLayers();
    std::vector<int> tps;
    for (int t : divisors(world, work.cluster.devices_per_node)) {
        if (mo.heads % t != 0 || mo.kv_heads % t != 0 || (denseFfn && mo.ffn_hidden % t != 0))
            continue;
        if (mo.moe.enabled() && work.parallel.etp == 0 && mo.moe.expert_ffn_hidden % t != 0)
            continue;
        if (mo.moe.shared_experts > 0 && mo.moe.shared_expert_ffn_hidden % t != 0)
            continue;
        if (request.fixed_tp > 0 && t != request.fixed_tp)
            continue;
        tps.push_back(t);
    }
    const int maxMicro = std::max(1, request.max_micro_batch);
    const int maxV = std::max(1, request.max_virtual_stages);

    // Visits every candidate layout; returns false when cancelled.
    auto enumerate = [&](auto &&visit) -> bool {
        for (int tp : tps) {
            for (int pp : divisors(world / tp, mo.layers)) {
                if (mo.layers % pp != 0 || (request.fixed_pp > 0 && pp != request.fixed_pp))
                    continue;
                for (int cpar : divisors(world / tp / pp, seq)) {
                    if (seq % cpar != 0 || (request.fixed_cp > 0 && cpar != request.fixed_cp))
                        continue;
                    const int dp = world / tp / pp / cpar;
                    if (global % dp != 0)
                        continue;
                    const int64_t perReplica = global / dp;
                    std::vector<int> eps = {1};
                    if (mo.moe.enabled()) {
                        eps.clear();
                        const int64_t etp = work.parallel.etp > 0 ? work.parallel.etp : tp;
                        for (int e : divisors(mo.moe.experts, mo.moe.experts)) {
                            if ((int64_t(dp) * cpar * tp) % (int64_t(e) * etp) == 0)
                                eps.push_back(e);
                        }
                    }
                    for (int ep : eps) {
                        for (int mb : divisors(perReplica, maxMicro)) {
                            // A plan's grad_accum is bounded; so is what the search chooses.
                            if (perReplica / mb > kMaxGradAccum)
                                continue;
                            const int ga = int(perReplica / mb);
                            for (int v = 1; v <= (pp > 1 ? maxV : 1); ++v) {
                                if (mo.layers % (pp * v) != 0)
                                    continue;
                                if (v > 1 && ga % pp != 0)
                                    continue;
                                for (int shi = 0; shi < 4; ++shi) {
                                    const Sharding sh = Sharding(shi);
                                    if (sh != Sharding::None && dp * cpar == 1)
                                        continue;
                                    for (int spi = 0; spi < 2; ++spi) {
                                        if (spi && (tp < 2 || (seq / cpar) % tp != 0))
                                            continue;
                                        for (int rc = 0; rc < 3; ++rc) {
                                            if (!(request.allowed_recompute & (1u << rc)))
                                                continue;
                                            for (int oi = 0; oi < 4; ++oi) {
                                                const uint8_t off = kOffloadSets[oi];
                                                if (off && (!request.allow_offload ||
                                                            !(request.allowed_offload & (1u << (oi - 1)))))
                                                    continue;
                                                if ((off & 2) && sh != Sharding::Full)
                                                    continue;
                                                Layout l;
                                                l.dp = dp;
                                                l.tp = tp;
                                                l.pp = pp;
                                                l.cp = cpar;
                                                l.ep = ep;
                                                l.v = v;
                                                l.micro_batch = mb;
                                                l.grad_accum = ga;
                                                l.sp = spi;
                                                l.sharding = sh;
                                                l.recompute = Recompute(rc);
                                                l.offload = off;
                                                if (!visit(l))
                                                    return false;
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        return true;
    };

    uint64_t total = 0;
    enumerate([&](const Layout &) {
        ++total;
        return true;
    });

    std::vector<Scored> fitting;
    fitting.reserve(size_t(std::min<uint64_t>(total, 1u << 20)));
    const bool finished = enumerate([&](const Layout &l) {
        if ((out.evaluated & 4095u) == 0) {
            if (cancel && cancel->load(std::memory_order_relaxed))
                return false;
            if (progress)
                progress(out.evaluated, total);
        }
        ++out.evaluated;
        apply(work, l);
        if (!quickValidate(work))
            return true;
        const ComputeEstimate ce = estimateCompute(work, cprof);
        // Model states of the heaviest stage plus the context reserve bound the memory engine's
        // optimizer-step peak plus reserve from below: beyond HBM the layout cannot fit.
        if (request.prune && stateBytes(work, fw, ce) + dev.context_reserve_bytes > dev.hbm_bytes)
            return true;
        const MemoryEstimate me = estimateMemory(work, catalog);
        if (!me.fits)
            return true;
        double required = 0;
        for (const RankMemory &r : me.ranks)
            required = std::max(required, r.peak_bytes + r.reserve.total());
        if (required + request.min_headroom_bytes > dev.hbm_bytes)
            return true;
        const double exposed = exposedCommunication(work, dev, fw, ce);
        double actBytes = 0;
        if (l.offload & 8) {
            work.memory.offload.activations = false;
            actBytes = activationBytesPerMicrobatch(work, estimateMemory(work, catalog));
            work.memory.offload.activations = true;
        }
        Scored s;
        s.layout = l;
        s.required = required;
        s.peak = me.peak_bytes;
        s.step = assembleStep(work, cprof, ce, exposed, offloadBytesPerStep(work, ce, actBytes));
        fitting.push_back(s);
        return true;
    });
    out.cancelled = !finished;
    out.fitting = fitting.size();
    if (progress)
        progress(out.evaluated, total);

    auto toResult = [&](const Scored &s, bool pareto) {
        SearchResult r;
        r.plan = base;
        apply(r.plan, s.layout);
        r.peak_bytes = s.peak;
        r.required_bytes = s.required;
        r.step_s = s.step.step_s;
        r.tokens_per_s = s.step.tokens_per_s;
        r.mfu = s.step.mfu;
        r.pareto = pareto;
        r.step = s.step;
        return r;
    };

    // Pareto front of required memory against step time: sorted by memory, a layout is on the
    // front when it is faster than every layout that needs no more memory.
    std::vector<uint32_t> order(fitting.size());
    for (uint32_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
        if (fitting[a].required != fitting[b].required)
            return fitting[a].required < fitting[b].required;
        if (fitting[a].step.step_s != fitting[b].step.step_s)
            return fitting[a].step.step_s < fitting[b].step.step_s;
        return a < b; // equal layouts: the first enumerated represents them
    });
    // The bound above counts allocated memory; the allocator reserves more. A layout is returned
    // only when the caching allocator replayed over its timeline does not run out of memory.
    std::vector<signed char> replayed(fitting.size(), -1); // -1 not yet, 0 runs out, 1 fits
    auto verified = [&](uint32_t i) {
        if (replayed[i] < 0) {
            Plan p = base;
            apply(p, fitting[i].layout);
            MemoryEstimate me = estimateMemory(p, catalog);
            replayAllocator(p, catalog, me, true);
            replayed[i] = me.hbm_fits ? 1 : 0;
            ++out.replayed;
            if (me.hbm_fits) {
                double required = 0;
                for (const RankMemory &r : me.ranks)
                    required = std::max(required, r.peak_bytes + r.reserve.total());
                fitting[i].required = required;
                if (required + request.min_headroom_bytes > dev.hbm_bytes)
                    replayed[i] = 0; // fits, without the headroom asked for
            } else {
                ++out.rejected_by_allocator;
            }
        }
        return replayed[i] == 1;
    };
    std::vector<char> onFront(fitting.size(), 0);
    double best = INFINITY;
    for (uint32_t i : order) {
        if (fitting[i].step.step_s < best && verified(i)) {
            best = fitting[i].step.step_s;
            onFront[i] = 1;
            out.pareto.push_back(toResult(fitting[i], true));
        }
    }

    const size_t top = size_t(std::max(0, request.top));
    std::vector<uint32_t> rank(fitting.size());
    for (uint32_t i = 0; i < rank.size(); ++i)
        rank[i] = i;
    auto faster = [&](uint32_t a, uint32_t b) {
        if (fitting[a].step.step_s != fitting[b].step.step_s)
            return fitting[a].step.step_s < fitting[b].step.step_s;
        if (fitting[a].required != fitting[b].required)
            return fitting[a].required < fitting[b].required;
        return a < b;
    };
    // Sort the head of the ranking in windows, replaying down it until `top` layouts hold.
    size_t sorted = 0;
    for (size_t next = 0; next < rank.size() && out.ranked.size() < top; ++next) {
        if (next == sorted) {
            const size_t window = std::min(rank.size(), sorted + std::max<size_t>(top, 16));
            std::partial_sort(rank.begin() + long(sorted), rank.begin() + long(window), rank.end(), faster);
            sorted = window;
        }
        if (verified(rank[next]))
            out.ranked.push_back(toResult(fitting[rank[next]], onFront[rank[next]]));
    }

    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return out;
}

} // namespace shardscope
