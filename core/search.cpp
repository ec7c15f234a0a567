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
#include "layers.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

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

/// A few choices along one axis, iterated without an allocation.
template <class T, int N>
struct Choices
{
    T v[N]{};
    int n = 0;
    void add(T x) { v[n++] = x; }
    const T *begin() const { return v; }
    const T *end() const { return v + n; }
};

/// One layout, compactly (what varies between candidates).
struct Layout
{
    int dp = 1, tp = 1, pp = 1, cp = 1, ep = 1, v = 1;
    int etp = 0;                  ///< 0: tp's
    int first = 0, last = 0;      ///< uneven first / last stage layers (0: even)
    CpAlgo cp_algo = CpAlgo::Ring;
    int ulysses = 0;              ///< hybrid's Ulysses degree
    int dp_shard = 0;             ///< HSDP shard group (0: all of dp)
    int micro_batch = 1, grad_accum = 1;
    bool sp = false;
    Sharding sharding = Sharding::None;
    Recompute recompute = Recompute::None;
    int block_layers = 0;         ///< full recompute of only this many layers per chunk (0: all)
    uint8_t offload = 0; ///< bit 0 optimizer, 1 params, 2 grads, 3 activations
    bool swap = false;   ///< MindSpeed's swap-attention
    uint8_t msRecompute = 0; ///< MindSpeed's recompute: bit 0 activation function, bit 1 norm
    bool operator==(const Layout &) const = default;
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
    p.parallel.dp_shard = l.dp_shard;
    p.parallel.tp = l.tp;
    p.parallel.pp = l.pp;
    p.parallel.cp = l.cp;
    p.parallel.ep = l.ep;
    p.parallel.etp = l.etp;
    p.parallel.cp_algo = l.cp_algo;
    p.parallel.ulysses_degree = l.cp_algo == CpAlgo::Hybrid ? l.ulysses : 0;
    // The search's layer layouts: even, or uneven first / last stages.
    p.parallel.first_stage_layers = l.first;
    p.parallel.last_stage_layers = l.last;
    p.parallel.account_for_embedding = false;
    p.parallel.account_for_loss = false;
    p.parallel.stage_layers.clear();
    p.parallel.pipeline_layout.clear();
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
    p.memory.recompute_method = l.block_layers > 0 ? RecomputeMethod::Block : RecomputeMethod::Uniform;
    p.memory.recompute_num_layers = l.block_layers > 0 ? l.block_layers : 1;
    p.memory.offload.optimizer = l.offload & 1;
    p.memory.offload.params = l.offload & 2;
    p.memory.offload.grads = l.offload & 4;
    p.memory.offload.activations = l.offload & 8;
    p.memory.swap_attention = l.swap;
    p.memory.recompute_activation_function = l.msRecompute & 1;
    p.memory.recompute_norm = l.msRecompute & 2;
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

/// The outer degrees of a group of layouts (one unit of the search's work).
struct Task
{
    int tp, pp, cp, dp, ep, etp;
    int first, last; ///< uneven first / last stage layers (0: even)
};

/// Uneven first / last stages for `layers` over `pp` stages when they do not split evenly:
/// the middle stages hold m = floor or ceil(layers / pp) each, the first and last share the
/// rest (the first the larger half), neither more than m + 1 nor fewer than 1.
std::vector<std::pair<int, int>> unevenLayouts(int layers, int pp)
{
    std::vector<std::pair<int, int>> out;
    if (pp < 2 || layers % pp == 0)
        return out;
    if (pp == 2) {
        out.push_back({layers - layers / 2, layers / 2});
        return out;
    }
    for (const int m : {layers / pp, layers / pp + 1}) {
        const int rest = layers - m * (pp - 2);
        if (m < 1 || rest < 2)
            continue;
        const int first = rest - rest / 2, last = rest / 2;
        if (first > m + 1)
            continue;
        if (std::find(out.begin(), out.end(), std::pair{first, last}) == out.end())
            out.push_back({first, last});
    }
    return out;
}

unsigned searchThreads(int requested, size_t work)
{
    const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
    const unsigned n = requested > 0 ? unsigned(requested) : hw;
    return unsigned(std::max<size_t>(1, std::min<size_t>({size_t(n), size_t(64), std::max<size_t>(work, 1)})));
}

/// fn(k, thread) for k in [0, n) on up to `threads` threads, `thread` in [0, threads) naming the
/// one that runs it (0: the caller's); fn must be safe to run side by side for different k and
/// threads. Work is taken in turn; the first exception stops what is left and is rethrown.
void parallelFor(size_t n, unsigned threads, const std::function<void(size_t, unsigned)> &fn)
{
    if (n == 0)
        return;
    threads = unsigned(std::max<size_t>(1, std::min<size_t>(threads, n)));
    std::atomic<size_t> next{0};
    std::exception_ptr failure;
    std::mutex m;
    auto run = [&](unsigned thread) {
        try {
            for (size_t k = next++; k < n; k = next++)
                fn(k, thread);
        } catch (...) {
            next = n;
            const std::lock_guard<std::mutex> lock(m);
            if (!failure)
                failure = std::current_exception();
        }
    };
    std::vector<std::thread> pool;
    for (unsigned i = 1; i < threads; ++i)
        pool.emplace_back(run, i);
    run(0);
    for (std::thread &t : pool)
        t.join();
    if (failure)
        std::rethrow_exception(failure);
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
    // The layer layout: the same rules as validatePlan (core/layers.h).
    if (stageLayoutError(pa, m.layers, m.mtp_layers))
        return false;
    if (plan.memory.recompute == Recompute::Full && plan.memory.recompute_num_layers > 1 &&
        plan.memory.recompute_num_layers > stageLayout(pa, m.layers).largestChunk())
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
    if ((plan.memory.recompute_activation_function || plan.memory.recompute_norm) &&
        plan.memory.recompute == Recompute::Full)
        return false;
    if (plan.memory.swap_attention && (plan.framework != "megatron" || plan.memory.recompute == Recompute::Full ||
                                       plan.memory.offload.activations))
        return false;
    if (pa.dp_shard > 0 && (pa.sharding == Sharding::None || pa.dp_shard > pa.dp || pa.dp % pa.dp_shard != 0))
        return false;
    if (double(plan.training.seq_len) * plan.training.micro_batch > 1.0e9)
        return false;
    // DeepSpeed ZeRO++ hpZ (validatePlan): ZeRO-3 over dp, the group a divisor of dp.
    if (const int hpz = pa.zero_hpz_partition_size; hpz > 1) {
        if (plan.framework != "deepspeed" || pa.sharding != Sharding::Full || !pa.reshard_after_forward ||
            pa.dp_shard > 0 || plan.memory.offload.params || hpz > pa.dp || pa.dp % hpz != 0)
            return false;
    }
    // MindSpeed's ep factor sizes the adaptive ep buffer (validatePlan; the device and framework
    // rules of the HCCL options do not depend on the layout).
    if (plan.memory.hccl_ep_group_buffer_adaptive_factor > 0 && !plan.memory.hccl_buffer_adaptive)
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

    const uint32_t axes = request.axes;
    // Megatron's --recompute-method block: with a Megatron-style framework (its fp32 main_grad
    // buffer marks it), not PyTorch's checkpoint wrappers.
    const bool blockRecompute = fw.main_grad_dtype != DType::None;
    const int heads = mo.heads, kvHeads = mo.kv_heads;

    // The outer degrees (tp, pp and its layer layout, cp, dp, ep, etp) are the units of work the
    // threads share; a task's layouts are enumerated in the same order every time, so the outcome
    // does not depend on the number of threads.
    std::vector<Task> tasks;
    for (int tp : tps) {
        for (int pp : divisors(world / tp, mo.layers)) {
            if (request.fixed_pp > 0 && pp != request.fixed_pp)
                continue;
            std::vector<std::pair<int, int>> layouts;
            if (mo.layers % pp == 0)
                layouts.push_back({0, 0});
            else if (axes & kSearchUnevenStages)
                layouts = unevenLayouts(int(mo.layers), pp);
            for (int cpar : divisors(world / tp / pp, seq)) {
                if (seq % cpar != 0 || (request.fixed_cp > 0 && cpar != request.fixed_cp))
                    continue;
                if (cpar > 1 && request.min_tokens_per_cp_rank > 0 && seq / cpar < request.min_tokens_per_cp_rank &&
                    cpar != request.fixed_cp)
                    continue;
                const int dp = world / tp / pp / cpar;
                if (global % dp != 0)
                    continue;
                for (const auto &[first, last] : layouts) {
                    if (!mo.moe.enabled()) {
                        tasks.push_back({tp, pp, cpar, dp, 1, 0, first, last});
                        continue;
                    }
                    // Expert tensor parallelism: the plan's, or with the axis both tp's and none
                    // (etp 1, Megatron's common choice for fine-grained experts; needs SP).
                    std::vector<int> etps = {work.parallel.etp};
                    if ((axes & kSearchExpertTp) && tp > 1 && work.parallel.etp == 0)
                        etps.push_back(1);
                    for (int etpChoice : etps) {
                        const int64_t etp = etpChoice > 0 ? etpChoice : tp;
                        for (int e : divisors(mo.moe.experts, mo.moe.experts)) {
                            if ((int64_t(dp) * cpar * tp) % (int64_t(e) * etp) == 0)
                                tasks.push_back({tp, pp, cpar, dp, e, etpChoice, first, last});
                        }
                    }
                }
            }
        }
    }

    // Context-parallel algorithms of a cp degree: ring; with the axis Ulysses and the hybrids
    // whose all-to-all degree divides the heads on each TP rank.
    auto cpAlgos = [&](int tp, int cpar) -> std::vector<std::pair<CpAlgo, int>> {
        if (cpar == 1)
            return {{CpAlgo::Ring, 0}};
        if (!(axes & kSearchCpAlgo))
            return {{work.parallel.cp_algo, work.parallel.ulysses_degree}};
        std::vector<std::pair<CpAlgo, int>> choices = {{CpAlgo::Ring, 0}};
        auto headsSplit = [&](int u) { return (heads / tp) % u == 0 && (kvHeads / tp) % u == 0; };
        if (headsSplit(cpar))
            choices.push_back({CpAlgo::Ulysses, 0});
        for (int u = 2; u < cpar; ++u) {
            if (cpar % u == 0 && headsSplit(u))
                choices.push_back({CpAlgo::Hybrid, u});
        }
        return choices;
    };
    // HSDP shard groups: all of dp; with the axis a node's ranks, two and four nodes' (in dp
    // ranks: the group times tp x cp ranks), when they divide dp.
    auto dpShards = [&](const Task &t, Sharding sh) {
        std::vector<int> choices = {0};
        if (sh != Sharding::Full || !(axes & kSearchDpShard))
            return choices;
        const int node = work.cluster.devices_per_node;
        for (int nodes : {1, 2, 4}) {
            const int64_t ranks = int64_t(node) * nodes;
            if (ranks % (int64_t(t.tp) * t.cp) != 0)
                continue;
            const int64_t d = ranks / (int64_t(t.tp) * t.cp);
            if (d > 1 && d < t.dp && t.dp % d == 0)
                choices.push_back(int(d));
        }
        return choices;
    };
    // Full recompute of every layer, and with the axis Megatron's block method over a quarter,
    // a half and three quarters of a chunk's layers.
    auto blockChoices = [&](const Task &t, int v, Recompute rc) {
        std::vector<int> choices = {0};
        if (rc != Recompute::Full || !(axes & kSearchRecomputeBlock) || !blockRecompute)
            return choices;
        const int perChunk = int(mo.layers / (int64_t(t.pp) * v));
        for (int q = 1; q <= 3; ++q) {
            const int n = perChunk * q / 4;
            if (n >= 1 && n < perChunk && std::find(choices.begin(), choices.end(), n) == choices.end())
                choices.push_back(n);
        }
        return choices;
    };

    // MindSpeed's swap-attention: the plan's where the layout allows it (not with full
    // recompute or offloaded activations), and with the axis (framework megatron) both. Off
    // comes first: it is the plan the other's host memory is measured against.
    const bool megatron = work.framework == "megatron";
    const bool swapAxis = (axes & kSearchSwapAttention) && megatron;
    auto swapChoices = [&](Recompute rc, uint8_t off) {
        Choices<bool, 2> c;
        if (rc == Recompute::Full || (off & 8) || !megatron) {
            c.add(false);
        } else if (swapAxis) {
            c.add(false);
            c.add(true);
        } else {
            c.add(request.base.memory.swap_attention);
        }
        return c;
    };

    // MindSpeed's activation-function and norm recompute: the plan's, and with the axis
    // (framework megatron) neither and both; none under full recompute (it has nothing to add).
    const uint8_t msBase = uint8_t((work.memory.recompute_activation_function ? 1 : 0) |
                                   (work.memory.recompute_norm ? 2 : 0));
    const bool msAxis = (axes & kSearchMindSpeedRecompute) && megatron;
    auto msChoices = [&](Recompute rc) {
        Choices<uint8_t, 3> c;
        if (rc == Recompute::Full) {
            c.add(0);
        } else if (msAxis) {
            c.add(0);
            if (msBase != 0 && msBase != 3)
                c.add(msBase);
            c.add(3);
        } else {
            c.add(msBase);
        }
        return c;
    };

    // Visits every layout of a task; returns false when `visit` does (cancelled).
    auto enumerate = [&](const Task &t, auto &&visit) -> bool {
        const int64_t perReplica = global / t.dp;
        const bool uneven = t.first > 0;
        const std::vector<std::pair<CpAlgo, int>> algos = cpAlgos(t.tp, t.cp);
        for (int mb : divisors(perReplica, maxMicro)) {
            // A plan's grad_accum is bounded; so is what the search chooses.
            if (perReplica / mb > kMaxGradAccum)
                continue;
            const int ga = int(perReplica / mb);
            for (int v = 1; v <= (t.pp > 1 && !uneven ? maxV : 1); ++v) {
                if (mo.layers % (t.pp * v) != 0 && !uneven)
                    continue;
                if (v > 1 && ga % t.pp != 0)
                    continue;
                for (const auto &[algo, ulysses] : algos) {
                    for (int shi = 0; shi < 4; ++shi) {
                        const Sharding sh = Sharding(shi);
                        if (sh != Sharding::None && t.dp * t.cp == 1)
                            continue;
                        for (int dps : dpShards(t, sh)) {
                            for (int spi = 0; spi < 2; ++spi) {
                                if (spi && (t.tp < 2 || (seq / t.cp) % t.tp != 0))
                                    continue;
                                for (int rc = 0; rc < 3; ++rc) {
                                    if (!(request.allowed_recompute & (1u << rc)))
                                        continue;
                                    for (int block : blockChoices(t, v, Recompute(rc))) {
                                        // The offload sets last: the first (none) is the plan
                                        // the others' host memory is measured against.
                                        for (int oi = 0; oi < 4; ++oi) {
                                            const uint8_t off = kOffloadSets[oi];
                                            if (off && (!request.allow_offload ||
                                                        !(request.allowed_offload & (1u << (oi - 1)))))
                                                continue;
                                            if ((off & 2) && sh != Sharding::Full)
                                                continue;
                                            for (const bool swap : swapChoices(Recompute(rc), off))
                                            for (const uint8_t ms : msChoices(Recompute(rc))) {
                                            Layout l;
                                            l.dp = t.dp;
                                            l.tp = t.tp;
                                            l.pp = t.pp;
                                            l.cp = t.cp;
                                            l.ep = t.ep;
                                            l.etp = t.etp;
                                            l.first = t.first;
                                            l.last = t.last;
                                            l.v = v;
                                            l.cp_algo = algo;
                                            l.ulysses = ulysses;
                                            l.dp_shard = dps;
                                            l.micro_batch = mb;
                                            l.grad_accum = ga;
                                            l.sp = spi;
                                            l.sharding = sh;
                                            l.recompute = Recompute(rc);
                                            l.block_layers = block;
                                            l.offload = off;
                                            l.swap = swap;
                                            l.msRecompute = ms;
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
    for (const Task &t : tasks)
        enumerate(t, [&](const Layout &) {
            ++total;
            return true;
        });

    const unsigned threads = searchThreads(request.threads, tasks.size());
    std::vector<std::vector<Scored>> perTask(tasks.size());
    std::atomic<uint64_t> evaluated{0};
    std::atomic<bool> stopped{false};
    // What each thread keeps between layouts: its working plan, its counts, and the estimate of
    // the current layout without offload (its offload variants' host memory is measured against
    // it).
    struct Worker
    {
        Plan w;
        uint64_t pending = 0; ///< evaluated, not yet added to `evaluated`
        uint64_t seen = 0;
        uint64_t estimated = 0;
        std::optional<MemoryEstimate> kept;
        Layout keptOf;
    };
    std::vector<Worker> workers(threads);
    for (Worker &wk : workers)
        wk.w = work;

    // One task: each layout checked, costed and kept when it fits. The calling thread (0) also
    // reports progress.
    parallelFor(tasks.size(), threads, [&](size_t ti, unsigned thread) {
        if (stopped)
            return;
        Worker &wk = workers[thread];
        Plan &w = wk.w;
        std::vector<Scored> &fitting = perTask[ti];
        wk.kept.reset();
        enumerate(tasks[ti], [&](const Layout &l) {
            if ((wk.seen++ & 1023u) == 0) {
                const uint64_t done = evaluated += wk.pending;
                wk.pending = 0;
                if (stopped || (cancel && cancel->load(std::memory_order_relaxed))) {
                    stopped = true;
                    return false;
                }
                if (thread == 0 && progress)
                    progress(done, total);
            }
            ++wk.pending;
            apply(w, l);
            if (!quickValidate(w))
                return true;
            const ComputeEstimate ce = estimateCompute(w, cprof);
            // Two lower bounds of the memory engine's peak plus reserve: the heaviest stage's
            // model states with the context reserve, and the first stage's floor (its persistent
            // bytes and in-flight activations, with its reserve). Beyond HBM the layout cannot fit.
            if (request.prune && stateBytes(w, fw, ce) + dev.context_reserve_bytes > dev.hbm_bytes)
                return true;
            const double floorLimit = request.prune ? dev.hbm_bytes - request.min_headroom_bytes : INFINITY;
            // The layout with nothing on the host: what the others' host memory is measured
            // against.
            Layout bare = l;
            bare.offload = 0;
            bare.swap = false;
            const bool keptIsBare = wk.kept && wk.keptOf == bare;
            if (l == bare && !keptIsBare) {
                // The floor and the estimate in one pass.
                wk.kept = estimateMemoryWithinFloor(w, catalog, floorLimit);
                wk.keptOf = bare;
                if (!wk.kept)
                    return true;
            } else if (request.prune && memoryFloorBytes(w, catalog) > floorLimit) {
                return true;
            }
            ++wk.estimated;
            if (!wk.kept || !(wk.keptOf == bare)) {
                apply(w, bare);
                wk.kept = estimateMemory(w, catalog);
                wk.keptOf = bare;
                apply(w, l);
            }
            const MemoryEstimate me = l == bare ? *wk.kept : estimateMemory(w, catalog, *wk.kept);
            if (!me.fits)
                return true;
            double required = 0;
            for (const RankMemory &r : me.ranks)
                required = std::max(required, r.peak_bytes + r.reserve.total());
            if (required + request.min_headroom_bytes > dev.hbm_bytes)
                return true;
            const double exposed = exposedCommunication(w, dev, fw, ce);
            // What offloaded activations or swap-attention move per micro-batch, against the
            // layout with nothing on the host.
            const double actBytes = activationOffloadBytesPerMicrobatch(w, me, *wk.kept);
            Scored sc;
            sc.layout = l;
            sc.required = required;
            sc.peak = me.peak_bytes;
            sc.step = assembleStep(w, cprof, ce, exposed, offloadBytesPerStep(w, ce, actBytes));
            fitting.push_back(sc);
            return true;
        });
    });
    uint64_t estimated = 0;
    for (const Worker &wk : workers) {
        evaluated += wk.pending;
        estimated += wk.estimated;
    }
    out.evaluated = evaluated;
    out.estimated = estimated;
    out.cancelled = stopped.load() && out.evaluated < total;
    std::vector<Scored> fitting;
    {
        size_t n = 0;
        for (const std::vector<Scored> &f : perTask)
            n += f.size();
        fitting.reserve(n);
        for (std::vector<Scored> &f : perTask) {
            fitting.insert(fitting.end(), f.begin(), f.end());
            std::vector<Scored>().swap(f);
        }
    }
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
    std::vector<double> replayedRequired(fitting.size(), 0.0);
    // The replay of one layout; writes only its own entries, so layouts replay side by side.
    auto replayOne = [&](uint32_t i) {
        Plan p = base;
        apply(p, fitting[i].layout);
        MemoryEstimate me = estimateMemory(p, catalog);
        replayAllocator(p, catalog, me, true);
        double required = 0;
        for (const RankMemory &r : me.ranks)
            required = std::max(required, r.peak_bytes + r.reserve.total());
        replayedRequired[i] = required;
        replayed[i] = me.hbm_fits ? 1 : 0;
    };
    // Replays, on the search's threads, those of `which` not replayed yet.
    auto prefetch = [&](std::vector<uint32_t> which) {
        which.erase(std::remove_if(which.begin(), which.end(), [&](uint32_t i) { return replayed[i] >= 0; }),
                    which.end());
        parallelFor(which.size(), threads, [&](size_t k, unsigned) { replayOne(which[k]); });
    };
    std::vector<char> counted(fitting.size(), 0);
    auto verified = [&](uint32_t i) {
        if (replayed[i] < 0)
            replayOne(i);
        if (!counted[i]) {
            counted[i] = 1;
            ++out.replayed;
            if (replayed[i] == 1) {
                fitting[i].required = replayedRequired[i];
                if (replayedRequired[i] + request.min_headroom_bytes > dev.hbm_bytes)
                    replayed[i] = 0; // fits, without the headroom asked for
            } else {
                ++out.rejected_by_allocator;
            }
        }
        return replayed[i] == 1;
    };
    // The walk below replays every layout faster than all that need no more memory (a layout a
    // replay rejects does not raise the bar): replay those first, side by side.
    {
        std::vector<uint32_t> candidates;
        double bar = INFINITY;
        for (uint32_t i : order) {
            if (fitting[i].step.step_s < bar) {
                bar = fitting[i].step.step_s;
                candidates.push_back(i);
            }
        }
        prefetch(std::move(candidates));
    }
    std::vector<char> onFront(fitting.size(), 0);
    std::vector<uint32_t> front;
    double best = INFINITY;
    for (uint32_t i : order) {
        if (fitting[i].step.step_s < best && verified(i)) {
            best = fitting[i].step.step_s;
            front.push_back(i);
        }
    }
    // The replay adds each one's allocator reserve to what it requires, which can reorder them:
    // the front is taken again over the replayed figures.
    std::stable_sort(front.begin(), front.end(), [&](uint32_t a, uint32_t b) {
        if (fitting[a].required != fitting[b].required)
            return fitting[a].required < fitting[b].required;
        return fitting[a].step.step_s < fitting[b].step.step_s;
    });
    best = INFINITY;
    for (uint32_t i : front) {
        if (fitting[i].step.step_s < best) {
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
        if (replayed[rank[next]] < 0) {
            // The next layouts still needed are replayed whatever they show: side by side.
            const size_t need = std::min(sorted, next + (top - out.ranked.size()));
            prefetch(std::vector<uint32_t>(rank.begin() + long(next), rank.begin() + long(need)));
        }
        if (verified(rank[next]))
            out.ranked.push_back(toResult(fitting[rank[next]], onFront[rank[next]]));
    }

    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return out;
}

} // namespace shardscope
