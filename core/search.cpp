// The layout search: every (tp, pp, cp, dp, ep, sharding, sp, recompute, offload,
// micro-batch, virtual stages) for the base plan's model, sequence, precision, framework and
// cluster; each layout is checked with validatePlan's rules, costed by the compute and
// communication models and kept when estimateMemory says it fits.
//
// The hot path mutates one working Plan in place (no copies of its strings or JSON), keeps
// compact records of the fitting layouts, and builds full Plans only for the results.
#include "search.h"

#include "catalog.h"
#include "comm.h"
#include "compute.h"
#include "device.h"
#include "errors.h"
#include "framework.h"
#include "functionref.h"
#include "layers.h"
#include "optimizers.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <tuple>
#include <type_traits>
#include <unordered_map>

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
    int ulysses = 0;              ///< hybrid's Ulysses degree
    int dp_shard = 0;             ///< HSDP shard group (0: all of dp)
    int micro_batch = 1, grad_accum = 1;
    int block_layers = 0;         ///< full recompute of only this many layers per chunk (0: all)
    CpAlgo cp_algo = CpAlgo::Ring;
    Sharding sharding = Sharding::None;
    Recompute recompute = Recompute::None;
    bool sp = false;
    uint8_t offload = 0; ///< bit 0 optimizer, 1 params, 2 grads, 3 activations
    bool swap = false;   ///< MindSpeed's swap-attention
    uint8_t msRecompute = 0; ///< MindSpeed's recompute: bit 0 activation function, bit 1 norm
    /// Field by field, as the bytes compare: the search compares layouts millions of times, and
    /// the fields are laid out without padding (checked below).
    bool operator==(const Layout &o) const noexcept { return std::memcmp(this, &o, sizeof(Layout)) == 0; }
};
static_assert(std::has_unique_object_representations_v<Layout>,
              "Layout's bytes must be its fields alone: operator== compares them");

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
    // The recompute-block axis counts layers per chunk (core/search.h).
    p.memory.recompute_layers_per_pp_rank = false;
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

/// A layout with the task's outer degrees (the rest as Layout's defaults).
Layout taskLayout(const Task &t)
{
    Layout l;
    l.dp = t.dp;
    l.tp = t.tp;
    l.pp = t.pp;
    l.cp = t.cp;
    l.ep = t.ep;
    l.etp = t.etp;
    l.first = t.first;
    l.last = t.last;
    return l;
}

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

/// The search's threads, kept for all its parallel loops (the enumeration, and the lazy walk's
/// many short batches): run(n, fn) calls fn(k, thread) for k in [0, n) on the caller (thread 0)
/// and the helpers, `thread` naming the one that runs it; fn must be safe to run side by side
/// for different k and threads. Work is taken in turn. The helpers wait for work by spinning
/// with yields between loops (a thread's start costs more than a short batch). The first
/// exception stops what is left of the loop and is rethrown.
class LoopThreads
{
public:
    explicit LoopThreads(unsigned threads)
    {
        for (unsigned i = 1; i < threads; ++i)
            helpers_.emplace_back([this, i] { serve(i); });
    }
    ~LoopThreads()
    {
        quit_ = true;
        for (std::thread &t : helpers_)
            t.join();
    }
    LoopThreads(const LoopThreads &) = delete;
    LoopThreads &operator=(const LoopThreads &) = delete;
    unsigned size() const { return unsigned(helpers_.size()) + 1; }

    void run(size_t n, FunctionRef<void(size_t, unsigned)> fn)
    {
        if (helpers_.empty() || n < 2) {
            for (size_t k = 0; k < n; ++k)
                fn(k, 0);
            return;
        }
        fn_ = &fn;
        n_ = n;
        next_ = 0;
        done_ = 0;
        generation_.fetch_add(1, std::memory_order_release);
        work(0);
        while (done_.load(std::memory_order_acquire) < helpers_.size())
            std::this_thread::yield();
        fn_ = nullptr;
        if (failure_) {
            std::exception_ptr f = failure_;
            failure_ = nullptr;
            std::rethrow_exception(f);
        }
    }

private:
    void work(unsigned thread)
    {
        try {
            for (size_t k = next_++; k < n_; k = next_++)
                (*fn_)(k, thread);
        } catch (...) {
            next_ = n_;
            const std::lock_guard<std::mutex> lock(failureMutex_);
            if (!failure_)
                failure_ = std::current_exception();
        }
    }
    void serve(unsigned thread)
    {
        uint64_t seen = 0;
        for (;;) {
            uint64_t g;
            while ((g = generation_.load(std::memory_order_acquire)) == seen) {
                if (quit_)
                    return;
                std::this_thread::yield();
            }
            seen = g;
            work(thread);
            done_.fetch_add(1, std::memory_order_acq_rel);
        }
    }

    std::vector<std::thread> helpers_;
    std::atomic<uint64_t> generation_{0};
    std::atomic<size_t> next_{0};
    std::atomic<size_t> done_{0};
    std::atomic<bool> quit_{false};
    FunctionRef<void(size_t, unsigned)> *fn_ = nullptr;
    size_t n_ = 0;
    std::mutex failureMutex_;
    std::exception_ptr failure_;
};

} // namespace

bool quickValidate(const Plan &plan, const FrameworkProfile &fw)
{
    return quickValidateLayout(plan, fw) && quickValidateMemory(plan);
}

bool quickValidateLayout(const Plan &plan, const FrameworkProfile &fw)
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
    if (!stageLayoutValid(pa, m.layers, m.mtp_layers))
        return false;
    if (plan.training.seq_len % pa.cp != 0)
        return false;
    if (pa.cp_algo != CpAlgo::Ring) {
        const int u = pa.ulyssesDegree();
        if (pa.cp_algo == CpAlgo::Hybrid && (u >= pa.cp || pa.cp % u != 0))
            return false;
        if ((m.heads / pa.tp) % u != 0 ||
            ((m.kv_heads / pa.tp) % u != 0 && !ulyssesRepeatsKv(plan, fw)))
            return false;
    }
    if (pa.sp && (pa.tp < 2 || (plan.training.seq_len / pa.cp) % pa.tp != 0))
        return false;
    if (pa.ep > 1) {
        if (!m.moe.enabled() || m.moe.experts % pa.ep != 0 ||
            (pa.etp == 0 && (int64_t(pa.dp) * pa.cp) % pa.ep != 0))
            return false;
    }
    if (pa.dp_shard > 0 && (pa.sharding == Sharding::None || pa.dp_shard > pa.dp || pa.dp % pa.dp_shard != 0))
        return false;
    if (double(plan.training.seq_len) * plan.training.micro_batch > 1.0e9)
        return false;
    // MindSpeed's ep factor sizes the adaptive ep buffer (validatePlan; the device and framework
    // rules of the HCCL options do not depend on the layout).
    if (plan.memory.hccl_ep_group_buffer_adaptive_factor > 0 && !plan.memory.hccl_buffer_adaptive)
        return false;
    return true;
}

bool quickValidateMemory(const Plan &plan)
{
    const ModelShape &m = plan.model;
    const Parallel &pa = plan.parallel;
    if (plan.memory.recompute == Recompute::Full && plan.memory.recompute_num_layers > 1 &&
        plan.memory.recompute_num_layers > largestChunkLayers(pa, m.layers, m.mtp_layers))
        return false;
    if (plan.memory.offload.params && pa.sharding != Sharding::Full)
        return false;
    if ((plan.memory.recompute_activation_function || plan.memory.recompute_norm) &&
        plan.memory.recompute == Recompute::Full)
        return false;
    if (plan.memory.swap_attention && (plan.framework != "megatron" || plan.memory.recompute == Recompute::Full ||
                                       plan.memory.offload.activations))
        return false;
    // DeepSpeed ZeRO++ hpZ (validatePlan): ZeRO-3 over dp, the group a divisor of dp.
    if (const int hpz = pa.zero_hpz_partition_size; hpz > 1) {
        if (plan.framework != "deepspeed" || pa.sharding != Sharding::Full || !pa.reshard_after_forward ||
            pa.dp_shard > 0 || plan.memory.offload.params || hpz > pa.dp || pa.dp % hpz != 0)
            return false;
    }
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
    if (!quickValidate(p, *catalog.framework(p.framework)))
        return false;
    MemoryEstimate me = estimateMemory(p, catalog);
    if (!me.fits)
        return false;
    replayAllocator(p, catalog, me, true);
    if (!me.fits)
        return false;
    return worstRankBytes(me) + headroom <= dev.hbm_bytes;
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
    // The working plans are copied within every estimate; what no estimate reads need not be.
    work.name.clear();
    work.warnings.clear();
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
    // The working plans carry the vocabulary padded for their tp, as every estimate pads it
    // (framework.h): padding a padded vocabulary leaves it, so the memory, compute and
    // communication models evaluate them without a padded copy each. (Only the explanations of
    // an estimate name the unpadded vocabulary; the search keeps none.)
    std::vector<int64_t> vocabOfTp;
    {
        Plan p = work;
        for (int tp : tps) {
            p.parallel.tp = tp;
            if (size_t(tp) >= vocabOfTp.size())
                vocabOfTp.resize(size_t(tp) + 1, work.model.vocab);
            vocabOfTp[size_t(tp)] = paddedVocab(p, fw);
        }
    }
    auto applyWork = [&](Plan &w, const Layout &l) {
        apply(w, l);
        w.model.vocab = vocabOfTp[size_t(l.tp)];
    };
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
    // whose all-to-all degree divides the heads on each TP rank (the query heads alone where K
    // and V are repeated to them first).
    auto cpAlgos = [&](int tp, int cpar) -> std::vector<std::pair<CpAlgo, int>> {
        if (cpar == 1)
            return {{CpAlgo::Ring, 0}};
        if (!(axes & kSearchCpAlgo))
            return {{work.parallel.cp_algo, work.parallel.ulysses_degree}};
        std::vector<std::pair<CpAlgo, int>> choices = {{CpAlgo::Ring, 0}};
        // ulyssesRepeatsKv for a Ulysses degree of 2 or more.
        const bool kvRepeat = ulyssesKvRepeatOf(work, fw) && kvRepeatWidens(mo);
        auto headsSplit = [&](int u) {
            return (heads / tp) % u == 0 && ((kvHeads / tp) % u == 0 || kvRepeat);
        };
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
        Choices<int, 4> choices;
        choices.add(0);
        if (sh != Sharding::Full || !(axes & kSearchDpShard))
            return choices;
        const int node = work.cluster.devices_per_node;
        for (int nodes : {1, 2, 4}) {
            const int64_t ranks = int64_t(node) * nodes;
            if (ranks % (int64_t(t.tp) * t.cp) != 0)
                continue;
            const int64_t d = ranks / (int64_t(t.tp) * t.cp);
            if (d > 1 && d < t.dp && t.dp % d == 0)
                choices.add(int(d));
        }
        return choices;
    };
    // Full recompute of every layer, and with the axis Megatron's block method over a quarter,
    // a half and three quarters of a chunk's layers.
    auto blockChoices = [&](const Task &t, int v, Recompute rc) {
        Choices<int, 4> choices;
        choices.add(0);
        if (rc != Recompute::Full || !(axes & kSearchRecomputeBlock) || !blockRecompute)
            return choices;
        const int perChunk = int(mo.layers / (int64_t(t.pp) * v));
        for (int q = 1; q <= 3; ++q) {
            const int n = perChunk * q / 4;
            if (n >= 1 && n < perChunk && std::find(choices.begin(), choices.end(), n) == choices.end())
                choices.add(n);
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

    // Each task's micro-batch and CP-algorithm choices, listed once: every walk of its layouts
    // goes through these lists, and the lazy walk's candidates index them.
    std::vector<std::vector<int>> taskMbs(tasks.size());
    std::vector<std::vector<std::pair<CpAlgo, int>>> taskAlgos(tasks.size());
    for (size_t ti = 0; ti < tasks.size(); ++ti) {
        taskMbs[ti] = divisors(global / tasks[ti].dp, maxMicro);
        taskAlgos[ti] = cpAlgos(tasks[ti].tp, tasks[ti].cp);
    }

    // Visits every layout of task `ti`; returns false when `visit` does (cancelled).
    auto enumerate = [&](size_t ti, auto &&visit) -> bool {
        const Task &t = tasks[ti];
        const int64_t perReplica = global / t.dp;
        const bool uneven = t.first > 0;
        const std::vector<std::pair<CpAlgo, int>> &algos = taskAlgos[ti];
        for (int mb : taskMbs[ti]) {
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
                                                    Layout l = taskLayout(t);
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
    for (size_t ti = 0; ti < tasks.size(); ++ti)
        enumerate(ti, [&](const Layout &) {
            ++total;
            return true;
        });

    const unsigned threads = searchThreads(request.threads, tasks.size());
    // Without counting every fit, the layouts are walked by step time and only those that can
    // still reach the ranking or the front are estimated (see below). That walk needs bounds of
    // the memory: under LoRA, QLoRA or freezing there are none (stateBytes, memoryFloorBytes), and
    // every layout is estimated.
    const bool lazy = request.prune && !request.count_all_fitting &&
                      work.training.method.method == TrainingMethod::Full;
    std::atomic<uint64_t> evaluated{0};
    std::atomic<bool> stopped{false};
    const double hbmLimit = dev.hbm_bytes - request.min_headroom_bytes;
    const size_t top = size_t(std::max(0, request.top));

    // What each thread keeps between layouts: its working plan, its counts, and the estimates of
    // the last few layouts with nothing on the host ("bare": no offload, no swap-attention), which
    // their offload and swap variants' host memory is measured against.
    struct Worker
    {
        Plan w;
        ComputeCache compute; ///< w's compute (its model, precision and profile are the search's)
        RankShapeCache shapes; ///< w's RankShapes (its model is the search's)
        std::optional<Layout> outer; ///< the last layout screened, its memory options cleared
        bool outerValid = false;     ///< quickValidateLayout of it
        uint64_t pending = 0; ///< evaluated, not yet added to `evaluated`
        uint64_t seen = 0;
        uint64_t estimated = 0;
        std::vector<std::pair<Layout, MemoryEstimate>> bare; ///< the newest last
    };
    // The exhaustive walk meets a bare layout just before its variants; the lazy walk meets them
    // in step-time order, so it keeps a few.
    const size_t bareKept = lazy ? 8 : 1;
    std::vector<Worker> workers(threads);
    for (Worker &wk : workers)
        wk.w = work;

    auto bareOf = [](Layout l) {
        l.offload = 0;
        l.swap = false;
        return l;
    };
    auto findBare = [](const Worker &wk, const Layout &b) -> const MemoryEstimate * {
        for (auto it = wk.bare.rbegin(); it != wk.bare.rend(); ++it) {
            if (it->first == b)
                return &it->second;
        }
        return nullptr;
    };
    auto keepBare = [&](Worker &wk, const Layout &b, MemoryEstimate me) {
        if (wk.bare.size() >= bareKept)
            wk.bare.erase(wk.bare.begin());
        wk.bare.emplace_back(b, std::move(me));
    };
    // The memory estimate of `l` (applied to the worker's plan), or nothing when the floor of its
    // peak plus reserve exceeds `limit`. A variant's estimate reuses its bare layout's.
    auto estimateLayout = [&](Worker &wk, const Layout &l, double limit) -> std::optional<MemoryEstimate> {
        Plan &w = wk.w;
        const Layout bare = bareOf(l);
        const MemoryEstimate *kept = findBare(wk, bare);
        if (l == bare) {
            if (kept) {
                // The same verdict as without the estimate kept (and so the same counts).
                if (request.prune && memoryFloorBytes(w, dev, fw, &wk.shapes) > limit)
                    return std::nullopt;
                ++wk.estimated;
                return *kept;
            }
            // The floor and the estimate in one pass.
            std::optional<MemoryEstimate> me = estimateMemoryWithinFloor(w, catalog, limit);
            if (!me)
                return std::nullopt;
            ++wk.estimated;
            keepBare(wk, bare, *me);
            return me;
        }
        if (request.prune && memoryFloorBytes(w, dev, fw, &wk.shapes) > limit)
            return std::nullopt;
        ++wk.estimated;
        if (!kept) {
            applyWork(w, bare);
            keepBare(wk, bare, estimateMemory(w, catalog));
            applyWork(w, l);
            kept = &wk.bare.back().second;
        }
        return estimateMemory(w, catalog, *kept);
    };
    // Peak plus runtime reserve of the worst rank; nothing when the estimate does not fit with the
    // headroom asked for.
    auto requiredOf = [&](const MemoryEstimate &me) -> std::optional<double> {
        if (!me.fits)
            return std::nullopt;
        const double required = worstRankBytes(me);
        if (required + request.min_headroom_bytes > dev.hbm_bytes)
            return std::nullopt;
        return required;
    };
    // The step time; `actBytes`: what offloaded activations or swap-attention move per
    // micro-batch (activationOffloadBytesPerMicrobatch).
    auto stepOf = [&](const Plan &w, const ComputeEstimate &ce, double actBytes) {
        return assembleStep(w, cprof, ce, exposedCommunication(w, dev, fw, ce), offloadBytesPerStep(w, ce, actBytes));
    };
    // Applies `l` and checks what needs no memory estimate: validatePlan's rules, and a lower
    // bound of the peak plus reserve (`bound`: the heaviest stage's model states with the context
    // reserve), beyond HBM unable to fit.
    auto screen = [&](Worker &wk, const Layout &l, ComputeEstimate &ce, double &bound) {
        applyWork(wk.w, l);
        // The layout's half of quickValidate is the same for the memory options' variants, which
        // the enumeration visits one after another: kept for the last layout without them.
        Layout outer = l;
        outer.recompute = Recompute::None;
        outer.block_layers = 0;
        outer.offload = 0;
        outer.swap = false;
        outer.msRecompute = 0;
        if (!wk.outer || *wk.outer != outer) {
            wk.outer = outer;
            wk.outerValid = quickValidateLayout(wk.w, fw);
        }
        if (!wk.outerValid || !quickValidateMemory(wk.w))
            return false;
        ce = estimateCompute(wk.w, cprof, wk.compute);
        bound = request.prune ? stateBytes(wk.w, fw, ce) + dev.context_reserve_bytes : 0.0;
        return !(request.prune && bound > dev.hbm_bytes);
    };
    // Counts a layout evaluated; every 1,024 looks for cancellation and (thread 0) reports.
    auto tick = [&](Worker &wk, unsigned thread) {
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
        return true;
    };

    // The fitting layouts found, and their allocator replays.
    std::vector<Scored> fitting;
    std::vector<signed char> replayed; // -1 not yet, 0 runs out, 1 fits
    std::vector<double> replayedRequired;
    std::vector<char> counted;
    auto grown = [&] {
        replayed.resize(fitting.size(), -1);
        replayedRequired.resize(fitting.size(), 0.0);
        counted.resize(fitting.size(), 0);
    };
    // The search's threads, kept between its loops.
    LoopThreads loop(threads);
    // The bound above counts allocated memory; the allocator reserves more. A layout is returned
    // only when the caching allocator replayed over its timeline does not run out of memory.
    // Replays, on the search's threads, those of `which` not replayed yet: their estimates side
    // by side, then every rank of every one of them (a replay writes only its own entries),
    // the fullest ranks of each first.
    auto prefetch = [&](std::vector<uint32_t> which) {
        which.erase(std::remove_if(which.begin(), which.end(), [&](uint32_t i) { return replayed[i] >= 0; }),
                    which.end());
        struct Job
        {
            Plan plan;
            MemoryEstimate memory;
            std::optional<AllocatorReplay> replay;
        };
        std::vector<std::unique_ptr<Job>> jobs(which.size());
        loop.run(which.size(), [&](size_t k, unsigned) {
            auto job = std::make_unique<Job>();
            job->plan = base;
            apply(job->plan, fitting[which[k]].layout);
            job->memory = estimateMemory(job->plan, catalog);
            job->replay.emplace(job->plan, catalog, job->memory, true);
            jobs[k] = std::move(job);
        });
        std::vector<std::pair<uint32_t, uint32_t>> ranks; // (rank position, job)
        for (size_t k = 0; k < jobs.size(); ++k) {
            for (size_t r = 0; r < jobs[k]->replay->ranks(); ++r)
                ranks.push_back({uint32_t(r), uint32_t(k)});
        }
        std::sort(ranks.begin(), ranks.end());
        loop.run(ranks.size(), [&](size_t k, unsigned) { jobs[ranks[k].second]->replay->replayRank(ranks[k].first); });
        for (size_t k = 0; k < jobs.size(); ++k) {
            Job &job = *jobs[k];
            job.replay->finish();
            replayedRequired[which[k]] = worstRankBytes(job.memory);
            replayed[which[k]] = job.memory.hbm_fits ? 1 : 0;
        }
    };
    auto verified = [&](uint32_t i) {
        if (replayed[i] < 0)
            prefetch({i});
        if (!counted[i]) {
            counted[i] = 1;
            ++out.replayed;
            if (replayed[i] == 1) {
                if (replayedRequired[i] + request.min_headroom_bytes > dev.hbm_bytes)
                    replayed[i] = 0; // fits, without the headroom asked for
            } else {
                ++out.rejected_by_allocator;
            }
        }
        return replayed[i] == 1;
    };
    // What both walks give: the ranking (at most `top` replayed layouts, by step time, then
    // required memory, then enumeration order) and the front before the replay's figures
    // (replayed layouts faster than every replayed layout that needs no more memory).
    std::vector<uint32_t> rankedIdx, front;

    if (!lazy) {
        // Every layout: checked, estimated unless a bound rules it out, costed and kept when it
        // fits.
        std::vector<std::vector<Scored>> perTask(tasks.size());
        loop.run(tasks.size(), [&](size_t ti, unsigned thread) {
            if (stopped)
                return;
            Worker &wk = workers[thread];
            wk.bare.clear();
            std::vector<Scored> &found = perTask[ti];
            enumerate(ti, [&](const Layout &l) {
                if (!tick(wk, thread))
                    return false;
                ComputeEstimate ce;
                double bound = 0;
                if (!screen(wk, l, ce, bound))
                    return true;
                const std::optional<MemoryEstimate> me =
                    estimateLayout(wk, l, request.prune ? hbmLimit : INFINITY);
                if (!me)
                    return true;
                const std::optional<double> required = requiredOf(*me);
                if (!required)
                    return true;
                const double actBytes = activationOffloadBytesPerMicrobatch(wk.w, *me, *findBare(wk, bareOf(l)));
                found.push_back({l, *required, me->peak_bytes, stepOf(wk.w, ce, actBytes)});
                return true;
            });
        });
        size_t n = 0;
        for (const std::vector<Scored> &f : perTask)
            n += f.size();
        fitting.reserve(n);
        for (std::vector<Scored> &f : perTask) {
            fitting.insert(fitting.end(), f.begin(), f.end());
            std::vector<Scored>().swap(f);
        }
        grown();

        // Sorted by memory, a layout is on the front when it is faster than every replayed
        // layout that needs no more memory.
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
        // The walk replays every layout faster than all that need no more memory (a layout a
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
        double best = INFINITY;
        for (uint32_t i : order) {
            if (fitting[i].step.step_s < best && verified(i)) {
                best = fitting[i].step.step_s;
                front.push_back(i);
            }
        }

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
        for (size_t next = 0; next < rank.size() && rankedIdx.size() < top; ++next) {
            if (next == sorted) {
                const size_t window = std::min(rank.size(), sorted + std::max<size_t>(top, 16));
                std::partial_sort(rank.begin() + long(sorted), rank.begin() + long(window), rank.end(), faster);
                sorted = window;
            }
            if (replayed[rank[next]] < 0) {
                // The next layouts still needed are replayed whatever they show: side by side.
                const size_t need = std::min(sorted, next + (top - rankedIdx.size()));
                prefetch(std::vector<uint32_t>(rank.begin() + long(next), rank.begin() + long(need)));
            }
            if (verified(rank[next]))
                rankedIdx.push_back(rank[next]);
        }
    } else {
        // The lazy walk. First, on the threads, every layout is checked and given a lower bound
        // of its step time (compute, bubble, the offload of states and the model-parallel
        // communication, without the data-parallel groups' or what activations move) and of its
        // memory (the larger of `screen`'s bound and the
        // memory floor; beyond HBM it cannot fit); each task's candidates sorted by the first.
        // 24 bytes a candidate, since a search keeps every one of them (DeepSeek-V3 over 2,048
        // NPUs: 1.9 million) and each page of them is a fault to fill: the layout as indices
        // into its task's choices and its flags, packed in one word.
        struct Candidate
        {
            double key;   ///< step time: a lower bound, exact once known
            float bound;  ///< a lower bound of peak plus reserve (rounded down)
            uint32_t ord; ///< the layout's place in its task's enumeration
            uint64_t code; ///< the rest of the layout (pack)
        };
        static_assert(sizeof(Candidate) == 24);
        // A code indexes its task's lists (taskMbs, taskAlgos): at most 1,600 divisors below
        // 2^31 and as many CP choices as cp has divisors, so an index takes 11 bits.
        for (size_t ti = 0; ti < tasks.size(); ++ti) {
            if (taskMbs[ti].size() > 2048 || taskAlgos[ti].size() > 2048)
                throw std::length_error(
                    "search: too many micro-batch or CP-algorithm choices to index");
        }
        auto indexIn = [](const auto &choices, auto value) {
            return uint64_t(std::find(choices.begin(), choices.end(), value) - choices.begin());
        };
        // Bits: 0-10 micro-batch index, 11-21 CP algorithm index, 22-23 dp_shard index, 24-25
        // block index, 26-41 virtual stages, 42-43 sharding, 44-45 recompute, 46 sp, 47 swap,
        // 48-51 offload, 52-53 MindSpeed's recompute.
        auto pack = [&](size_t ti, const Layout &l, double key, double bound, uint32_t ord) {
            const Task &t = tasks[ti];
            const std::vector<int> &mbs = taskMbs[ti];
            const uint64_t mbI =
                uint64_t(std::lower_bound(mbs.begin(), mbs.end(), l.micro_batch) - mbs.begin());
            const uint64_t algoI = indexIn(taskAlgos[ti], std::pair{l.cp_algo, l.ulysses});
            const uint64_t dpsI = indexIn(dpShards(t, l.sharding), l.dp_shard);
            const uint64_t blockI = indexIn(blockChoices(t, l.v, l.recompute), l.block_layers);
            if (l.v > 0xFFFF)
                throw std::length_error("search: too many virtual pipeline stages to index");
            float b = float(bound);
            if (double(b) > bound)
                b = std::nextafter(b, -INFINITY);
            const uint64_t code = mbI | algoI << 11 | dpsI << 22 | blockI << 24 |
                                  uint64_t(l.v) << 26 | uint64_t(l.sharding) << 42 |
                                  uint64_t(l.recompute) << 44 | uint64_t(l.sp) << 46 |
                                  uint64_t(l.swap) << 47 | uint64_t(l.offload & 15) << 48 |
                                  uint64_t(l.msRecompute & 3) << 52;
            return Candidate{key, b, ord, code};
        };
        auto unpack = [&](uint32_t ti, const Candidate &c) {
            const Task &t = tasks[ti];
            const uint64_t code = c.code;
            Layout l = taskLayout(t);
            l.micro_batch = taskMbs[ti][code & 2047];
            l.grad_accum = int(global / t.dp / l.micro_batch);
            std::tie(l.cp_algo, l.ulysses) = taskAlgos[ti][(code >> 11) & 2047];
            l.v = int((code >> 26) & 0xFFFF);
            l.sharding = Sharding((code >> 42) & 3);
            l.recompute = Recompute((code >> 44) & 3);
            l.sp = (code >> 46) & 1;
            l.swap = (code >> 47) & 1;
            l.offload = uint8_t((code >> 48) & 15);
            l.msRecompute = uint8_t((code >> 52) & 3);
            l.dp_shard = dpShards(t, l.sharding).begin()[(code >> 22) & 3];
            l.block_layers = blockChoices(t, l.v, l.recompute).begin()[(code >> 24) & 3];
            return l;
        };
        // What a task's layouts that differ only in how their model states are sharded and
        // placed (sharding, dp_shard, the states' offload) share: the floor's activation side
        // and the model-parallel communication (neither reads those, apart from autocast's
        // weight casts, which FSDP's gathered weights do without: Full sharding apart).
        struct Shared
        {
            FloorActivations act;
            std::optional<double> modelParallel; ///< once a layout has needed it
        };
        auto sharedOf = [](Layout l) {
            l.sharding = l.sharding == Sharding::Full ? Sharding::Full : Sharding::None;
            l.dp_shard = 0;
            l.offload &= 8; // activations
            return l;
        };
        // Over the fields a task's layouts vary in (its outer degrees are the same for all of
        // them, grad_accum follows the micro-batch); equality still compares every field.
        struct LayoutHash
        {
            size_t operator()(const Layout &l) const
            {
                uint64_t h = 1469598103934665603ull;
                for (const int64_t f : {int64_t(l.micro_batch), int64_t(l.v), int64_t(l.cp_algo), int64_t(l.ulysses),
                                        int64_t(l.sp), int64_t(l.sharding), int64_t(l.recompute),
                                        int64_t(l.block_layers), int64_t(l.offload), int64_t(l.swap),
                                        int64_t(l.msRecompute)})
                    h = (h ^ uint64_t(f)) * 1099511628211ull;
                return size_t(h);
            }
        };
        std::vector<std::vector<Candidate>> candidates(tasks.size());
        loop.run(tasks.size(), [&](size_t ti, unsigned thread) {
            if (stopped)
                return;
            Worker &wk = workers[thread];
            std::vector<Candidate> &mine = candidates[ti];
            std::unordered_map<Layout, Shared, LayoutHash> shared;
            // The floor's runtime reserve, by what of the layout it reads beyond the task's
            // degrees (floorReserveBytes).
            std::map<std::tuple<int, int, int, int, bool>, double> reserves;
            uint32_t ord = 0;
            enumerate(ti, [&](const Layout &l) {
                const uint32_t o = ord++;
                if (!tick(wk, thread))
                    return false;
                ComputeEstimate ce;
                double bound = 0;
                if (!screen(wk, l, ce, bound))
                    return true;
                auto [it, added] = shared.try_emplace(sharedOf(l));
                Shared &sh = it->second;
                if (added)
                    sh.act = floorActivations(wk.w, dev, fw, &wk.shapes);
                // The tighter bound too: the first stage's floor (beyond HBM the layout cannot fit).
                const auto reserveKey = std::tuple{l.dp_shard, int(l.cp_algo), l.ulysses, l.micro_batch, l.sp};
                auto reserve = reserves.find(reserveKey);
                if (reserve == reserves.end())
                    reserve = reserves.emplace(reserveKey, floorReserveBytes(wk.w, dev, fw, &wk.shapes)).first;
                const double floor = memoryFloorBytes(wk.w, dev, fw, sh.act, reserve->second, &wk.shapes);
                if (floor > hbmLimit)
                    return true;
                bound = std::max(bound, floor);
                if (!sh.modelParallel)
                    sh.modelParallel = modelParallelCommunication(wk.w, dev, fw, ce);
                const double key =
                    assembleStep(wk.w, cprof, ce, *sh.modelParallel, offloadBytesPerStep(wk.w, ce, 0.0)).step_s;
                mine.push_back(pack(ti, l, key, bound, o));
                return true;
            });
            std::sort(mine.begin(), mine.end(), [](const Candidate &a, const Candidate &b) {
                return a.key != b.key ? a.key < b.key : a.ord < b.ord;
            });
        });
        auto indexOf = [&](uint32_t task, uint32_t pos) { return uint64_t(task) << 32 | candidates[task][pos].ord; };

        // Then the candidates in the order of that bound (a merge of the tasks' runs), each
        // given its communication and so its step time unless it can reach neither the ranking
        // nor the front; those in the order of their step time, equal times together, each
        // estimated unless it cannot reach either. A layout cannot reach the front when one on it
        // is faster and needs no more memory than the layout's memory bound (or its floor); it
        // cannot reach the ranking once `top` faster layouts hold. Both only tighten as the walk
        // goes on, so what is decided early (the step times are costed in batches, on the
        // threads) is decided as the one-by-one walk would.
        struct Run
        {
            double key;
            uint64_t index;
            uint32_t task, pos;
        };
        auto runLater = [](const Run &a, const Run &b) { return a.key != b.key ? a.key > b.key : a.index > b.index; };
        std::vector<Run> runs; // each task's next candidate
        for (uint32_t ti = 0; ti < candidates.size(); ++ti) {
            if (!candidates[ti].empty())
                runs.push_back({candidates[ti][0].key, indexOf(ti, 0), ti, 0});
        }
        std::make_heap(runs.begin(), runs.end(), runLater);
        // A candidate with its communication costed: its step time, or (offloaded activations,
        // swap-attention) a lower bound until its memory estimate says what it moves.
        struct Costed
        {
            uint32_t task, pos;
            bool pending; ///< step.step_s is still a lower bound
            StepEstimate step;
            /// What the walk reads of its memory estimate, once estimated: the memory it requires
            /// (none: it does not fit) and its peak. Not the estimate itself: hundreds are held at
            /// a time, and each estimate's ranks take kilobytes of fresh memory.
            struct Estimated
            {
                std::optional<double> required;
                double peak = 0;
            };
            std::optional<Estimated> memory;
        };
        std::vector<Costed> slots;
        std::vector<uint32_t> freeSlots;
        struct Timed
        {
            double step_s;
            uint64_t index;
            uint32_t slot;
            bool pending;
        };
        // Earliest first; at equal times a pending one first (it may keep that time).
        auto timedLater = [](const Timed &a, const Timed &b) {
            if (a.step_s != b.step_s)
                return a.step_s > b.step_s;
            if (a.pending != b.pending)
                return b.pending;
            return a.index > b.index;
        };
        std::vector<Timed> timed;
        // Queues the costed candidate in `slot` by its step time (as it stands in the slot).
        auto queueSlot = [&](uint32_t slot, uint64_t index) {
            timed.push_back({slots[slot].step.step_s, index, slot, slots[slot].pending});
            std::push_heap(timed.begin(), timed.end(), timedLater);
        };
        auto pushTimed = [&](Costed c, uint64_t index) {
            uint32_t slot;
            if (freeSlots.empty()) {
                slot = uint32_t(slots.size());
                slots.push_back(std::move(c));
            } else {
                slot = freeSlots.back();
                freeSlots.pop_back();
                slots[slot] = std::move(c);
            }
            queueSlot(slot, index);
        };
        auto popTimed = [&] {
            std::pop_heap(timed.begin(), timed.end(), timedLater);
            const Timed t = timed.back();
            timed.pop_back();
            return t;
        };
        double minRequired = INFINITY; // of the front so far
        auto rankFull = [&] { return rankedIdx.size() >= top; };
        auto blocked = [&](double bound) { return rankFull() && bound >= minRequired; };
        auto limitNow = [&] { return rankFull() ? std::min(hbmLimit, minRequired) : hbmLimit; };
        // Estimates a costed candidate (applying its layout to the worker's plan) into its slot,
        // which stays without one when it is blocked, cannot fit or its floor is above the
        // front's memory; a pending one takes its step time from the estimate. The threads call
        // it side by side on different slots: the ranking and the front change only between loops.
        auto estimateCandidate = [&](Worker &bw, Costed &c) {
            const Candidate &cand = candidates[c.task][c.pos];
            if (blocked(cand.bound))
                return;
            const Layout l = unpack(c.task, cand);
            applyWork(bw.w, l);
            const std::optional<MemoryEstimate> me = estimateLayout(bw, l, limitNow());
            if (!me)
                return;
            c.memory = Costed::Estimated{requiredOf(*me), me->peak_bytes};
            if (!c.pending)
                return;
            // What it moves, and so its step time.
            const double actBytes =
                activationOffloadBytesPerMicrobatch(bw.w, *me, *findBare(bw, bareOf(l)));
            const ComputeEstimate ce = estimateCompute(bw.w, cprof, bw.compute);
            c.step = assembleStep(bw.w, cprof, ce, c.step.communication_s,
                                  offloadBytesPerStep(bw.w, ce, actBytes));
            c.pending = false;
        };

        for (Worker &w : workers)
            w.bare.clear();
        constexpr size_t kBatch = 512;
        constexpr size_t kCostBatch = 1024;
        constexpr size_t kAhead = 32;
        // Whether every layout that can take a costed one's step time has it: no uncosted
        // candidate can be faster (a pending one's time is a lower bound: at it, it goes first).
        auto due = [](const Timed &t, double next) { return t.pending ? t.step_s <= next : t.step_s < next; };
        std::vector<Run> batch;
        std::vector<std::optional<Costed>> costed;
        std::vector<Timed> ahead;
        std::vector<Timed> taken;
        std::vector<size_t> groupStart;
        std::vector<uint32_t> groupFits;
        for (;;) {
            if (cancel && cancel->load(std::memory_order_relaxed)) {
                stopped = true;
                break;
            }
            const double next = runs.empty() ? INFINITY : runs.front().key;
            if (!timed.empty() && due(timed.front(), next) && !slots[timed.front().slot].memory) {
                // The head's estimate is needed: it is estimated side by side with the next
                // layouts in step-time order (at least kAhead, every one due up to kBatch),
                // whatever they turn out to need. A pending one's memory, and so what it moves,
                // then gives its step time and its place.
                ahead.clear();
                while (!timed.empty() && ahead.size() < kBatch && (ahead.size() < kAhead || due(timed.front(), next)))
                    ahead.push_back(popTimed());
                loop.run(ahead.size(), [&](size_t k, unsigned thread) {
                    Worker &bw = workers[thread];
                    Costed &c = slots[ahead[k].slot];
                    if (!c.memory)
                        estimateCandidate(bw, c);
                });
                for (const Timed &t : ahead) {
                    if (slots[t.slot].memory)
                        queueSlot(t.slot, t.index); // by the time it has now
                    else
                        freeSlots.push_back(t.slot);
                }
                continue;
            }
            if (!timed.empty() && timed.front().step_s < next) {
                // Every layout that can take these step times has it now. The head's equal-time
                // groups (up to a pending one) are estimated side by side; then, group by group,
                // in order of memory and then enumeration, each is replayed while the ranking or
                // the front can take it (the replays that will be needed, if every replay holds,
                // first, side by side).
                taken.clear();
                while (!timed.empty() && !timed.front().pending && timed.front().step_s < next &&
                       (taken.size() < kBatch || timed.front().step_s == slots[taken.back().slot].step.step_s)) {
                    const Timed t = popTimed();
                    taken.push_back(t);
                }
                loop.run(taken.size(), [&](size_t k, unsigned thread) {
                    Costed &c = slots[taken[k].slot];
                    if (!c.memory)
                        estimateCandidate(workers[thread], c);
                });
                // The fitting ones, by group.
                groupStart.clear();
                groupFits.clear();
                for (size_t k = 0; k < taken.size(); ++k) {
                    if (k == 0 || taken[k].step_s != taken[k - 1].step_s)
                        groupStart.push_back(groupFits.size());
                    Costed &c = slots[taken[k].slot];
                    freeSlots.push_back(taken[k].slot);
                    if (!c.memory)
                        continue;
                    if (const std::optional<double> required = c.memory->required) {
                        fitting.push_back({unpack(c.task, candidates[c.task][c.pos]), *required,
                                           c.memory->peak, c.step});
                        groupFits.push_back(uint32_t(fitting.size() - 1));
                    }
                    c.memory.reset();
                }
                groupStart.push_back(groupFits.size());
                grown();
                for (size_t g = 0; g + 1 < groupStart.size(); ++g) {
                    std::sort(groupFits.begin() + long(groupStart[g]), groupFits.begin() + long(groupStart[g + 1]),
                              [&](uint32_t a, uint32_t b) {
                                  return fitting[a].required != fitting[b].required
                                             ? fitting[a].required < fitting[b].required
                                             : a < b;
                              });
                }
                // The walk below, twice: first as if every replay held, to replay side by side.
                auto walk = [&](bool dry) {
                    size_t ranked = rankedIdx.size();
                    double minReq = minRequired;
                    std::vector<uint32_t> wanted;
                    for (size_t g = 0; g + 1 < groupStart.size(); ++g) {
                        for (size_t k = groupStart[g]; k < groupStart[g + 1]; ++k) {
                            const uint32_t i = groupFits[k];
                            const bool rank = ranked < top;
                            const bool onFront = fitting[i].required < minReq;
                            if (!rank && !onFront)
                                break; // the rest of the group needs no less memory
                            if (dry)
                                wanted.push_back(i);
                            else if (!verified(i))
                                continue;
                            if (rank) {
                                ++ranked;
                                if (!dry)
                                    rankedIdx.push_back(i);
                            }
                            if (onFront) {
                                minReq = fitting[i].required;
                                if (!dry)
                                    front.push_back(i);
                            }
                        }
                    }
                    if (dry)
                        prefetch(std::move(wanted));
                    else
                        minRequired = minReq;
                };
                walk(true);
                walk(false);
                continue;
            }
            if (runs.empty())
                break;
            // The next candidates, costed side by side (some earlier than the one-by-one walk
            // would: the same outcome, and the groups above get longer).
            batch.clear();
            while (!runs.empty() && batch.size() < kCostBatch) {
                std::pop_heap(runs.begin(), runs.end(), runLater);
                Run r = runs.back();
                runs.pop_back();
                // This task's candidates while they come before every other task's next one. A
                // blocked candidate stays blocked: those are passed over wherever they are.
                const std::vector<Candidate> &mine = candidates[r.task];
                for (;;) {
                    while (r.pos < mine.size() && blocked(mine[r.pos].bound))
                        ++r.pos;
                    if (r.pos >= mine.size())
                        break;
                    r.key = mine[r.pos].key;
                    r.index = indexOf(r.task, r.pos);
                    if (batch.size() >= kCostBatch || (!runs.empty() && runLater(r, runs.front()))) {
                        runs.push_back(r);
                        std::push_heap(runs.begin(), runs.end(), runLater);
                        break;
                    }
                    batch.push_back(r);
                    ++r.pos;
                }
            }
            costed.assign(batch.size(), std::nullopt);
            loop.run(batch.size(), [&](size_t k, unsigned thread) {
                Worker &bw = workers[thread];
                const Run &r = batch[k];
                const Layout l = unpack(r.task, candidates[r.task][r.pos]);
                applyWork(bw.w, l);
                const ComputeEstimate ce = estimateCompute(bw.w, cprof, bw.compute);
                costed[k] = Costed{r.task, r.pos, (l.offload & 8) || l.swap, stepOf(bw.w, ce, 0.0), std::nullopt};
            });
            for (size_t k = 0; k < batch.size(); ++k) {
                if (costed[k])
                    pushTimed(std::move(*costed[k]), batch[k].index);
            }
        }
    }

    uint64_t estimated = 0;
    for (const Worker &wk : workers) {
        evaluated += wk.pending;
        estimated += wk.estimated;
    }
    out.evaluated = evaluated;
    out.estimated = estimated;
    out.fitting = fitting.size();
    out.fitting_complete = !lazy && !stopped.load();
    out.cancelled = stopped.load();
    if (progress)
        progress(out.evaluated, total);

    auto toResult = [&](uint32_t i, bool pareto) {
        const Scored &s = fitting[i];
        SearchResult r;
        r.plan = base;
        apply(r.plan, s.layout);
        r.peak_bytes = s.peak;
        r.required_bytes = replayedRequired[i];
        r.step_s = s.step.step_s;
        r.tokens_per_s = s.step.tokens_per_s;
        r.mfu = s.step.mfu;
        r.pareto = pareto;
        r.step = s.step;
        return r;
    };
    // The replay adds each one's allocator reserve to what it requires, which can reorder the
    // front: it is taken again over the replayed figures.
    std::stable_sort(front.begin(), front.end(), [&](uint32_t a, uint32_t b) {
        if (replayedRequired[a] != replayedRequired[b])
            return replayedRequired[a] < replayedRequired[b];
        return fitting[a].step.step_s < fitting[b].step.step_s;
    });
    std::vector<char> onFront(fitting.size(), 0);
    double best = INFINITY;
    for (uint32_t i : front) {
        if (fitting[i].step.step_s < best) {
            best = fitting[i].step.step_s;
            onFront[i] = 1;
            out.pareto.push_back(toResult(i, true));
        }
    }
    for (uint32_t i : rankedIdx)
        out.ranked.push_back(toResult(i, onFront[i]));
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return out;
}

} // namespace shardscope
