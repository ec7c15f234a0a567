#pragma once

#include "functionref.h"
#include "hcclbuffers.h"
#include "hostmemory.h"
#include "plan.h"
#include "text.h"

#include <array>
#include <atomic>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shardscope {

class RankShapeCache; // core/layers.h

class Catalog;

/// The components of per-rank memory (plan-format.md `components`).
enum class Component {
    Parameters,           ///< stored parameters (+ compute-dtype copies held by autocast)
    Gradients,            ///< .grad / main-grad buffers
    MasterWeights,        ///< separate high-precision copy the optimizer updates
    OptimizerStates,      ///< Adam moments, momentum, ...
    Activations,          ///< tensors saved for backward by the decoder layers
    LogitsAndLoss,        ///< logits, their fp32 copies and the loss' saved tensors
    CommunicationBuffers, ///< FSDP all-gathered layers and prefetch, reduce-scatter, DDP buckets
    Transient,            ///< working memory: recomputed layer, attention workspace, optimizer temporaries
    Count
};
inline constexpr int kComponentCount = int(Component::Count);

enum class Phase { Forward, Backward, OptimizerStep, Count };
inline constexpr int kPhaseCount = int(Phase::Count);

std::string_view componentKey(Component c);   ///< "parameters", "logits_and_loss", ...
std::string_view componentLabel(Component c); ///< "Parameters", "Logits and loss", ...
std::string_view phaseKey(Phase p);           ///< "forward", "backward", "optimizer_step"
/// The phase of a key of phaseKey() (which the collectives' phases share), Phase::Count for any
/// other string.
Phase phaseFromKey(std::string_view key);

/// Bytes per component at one moment (the peak of a phase).
struct Breakdown
{
    std::array<double, kComponentCount> bytes{};
    double total() const
    {
        double t = 0;
        for (double b : bytes)
            t += b;
        return t;
    }
    double &operator[](Component c) { return bytes[size_t(c)]; }
    double operator[](Component c) const { return bytes[size_t(c)]; }
};

/// What the device holds outside the framework's allocations.
struct RuntimeReserve
{
    double context = 0;        ///< driver / runtime context and workspaces
    double comm_buffers = 0;   ///< collective library buffers (all communicators)
    int communicators = 0;
    /// Each communicator and its buffers (core/hcclbuffers.h; per group on HCCL devices).
    std::vector<CommGroupBuffer> groups;
    double allocator = 0;      ///< reserved beyond the allocated peak (the replay's; 0 before)
    double total() const { return context + comm_buffers + allocator; }
};

/// One kind of rank (ranks that differ only by their DP/TP/CP index are identical).
struct RankMemory
{
    int rank = 0;   ///< lowest global rank of this kind
    int stage = 0;  ///< pipeline stage
    int count = 1;  ///< ranks of this kind
    int layers = 0; ///< decoder layers held (all virtual chunks together)
    bool has_embedding = false;
    bool has_head = false;
    std::array<Breakdown, kPhaseCount> phases{}; ///< composition at each phase's peak
    Phase peak_phase = Phase::Forward;
    double peak_bytes = 0;
    /// What stays allocated once a steady step is over (torch.cuda.memory_allocated() after the
    /// optimizer step, Megatron's report_memory "allocated"): the parameters, master weights,
    /// optimizer states and the buffers that outlive the step.
    Breakdown after_step;
    /// Peak allocated in the first step (the optimizer states come into being in its step);
    /// set by replayAllocator(), 0 before.
    double first_step_peak_bytes = 0;
    /// The caching allocator replayed over the timeline (core/allocator.h); set by
    /// replayAllocator(), 0 before.
    double reserved_bytes = 0; ///< peak reserved on a device with room (max_memory_reserved)
    bool oom = false;          ///< the replay on this device ran out of memory
    std::string oom_tensor;    ///< the kind it was allocating then (tensorKindKey: "logits")
    int oom_layer = -1;        ///< its layer on the stage, -1 for none
    Phase oom_phase = Phase::Forward;
    std::string oom_step;      ///< "setup", "first_step" or "steady_step"
    double oom_request_bytes = 0;
    RuntimeReserve reserve;
    /// A paged optimizer's states (bitsandbytes paged AdamW), in host-backed memory, bytes.
    double host_paged_bytes = 0;
    const Breakdown &peak() const { return phases[size_t(peak_phase)]; }
};

struct MemoryEstimate
{
    double hbm_bytes = 0;
    double usable_bytes = 0; ///< hbm minus the largest runtime reserve, never below 0
    /// Before the replay: every rank's allocated peak + context + collective buffers <= hbm (a
    /// bound: the allocator needs more). After replayAllocator(): no rank runs out of memory.
    bool hbm_fits = false;
    bool replayed = false;   ///< replayAllocator() has set reserved_bytes and the verdict
    bool fits = false;       ///< hbm_fits and the offloaded bytes fit the host (host.fits)
    HostMemory host;         ///< host memory of what the plan offloads
    int peak_rank = 0;
    double peak_bytes = 0;
    std::vector<RankMemory> ranks; ///< one entry per distinct kind of rank, by stage
};

/// Per-rank peak memory of one steady-state training step. `plan` must be validated.
MemoryEstimate estimateMemory(const Plan &plan, const Catalog &catalog);
/// The same, given the estimate of this plan with nothing offloaded (`memory.offload` all off),
/// which an offloading plan's host memory is measured against; a caller that has it (the
/// search, which evaluates both) saves estimating it again.
MemoryEstimate estimateMemory(const Plan &plan, const Catalog &catalog, const MemoryEstimate &withoutOffload);

/// What the fullest rank needs: the largest peak plus runtime reserve of any rank.
double worstRankBytes(const MemoryEstimate &memory);
/// The rank whose peak plus reserve is largest (the first of equals); null without ranks.
const RankMemory *worstRank(const MemoryEstimate &memory);

/// A lower bound of what estimateMemory reports as the largest peak plus runtime reserve of any
/// rank (before the allocator replay), without the timeline: the first stage's persistent bytes
/// with its runtime reserve, and the largest of three moments of its first micro-batches: the
/// end of the forward before the first backward (every micro-batch in flight saved), the head
/// (a stage that holds it: its input and the logits), and the first backward's first layer
/// (its recompute and working set; activations on the device). The search skips layouts whose
/// floor exceeds HBM.
/// 0 for training methods other than full training (no bound).
double memoryFloorBytes(const Plan &plan, const Catalog &catalog);
/// The same with the plan's device and framework profiles given (a search's hot path).
/// `shapes`: where the plan's RankShape is kept (core/layers.h; its premise: one model), else
/// the thread's own keep.
double memoryFloorBytes(const Plan &plan, const DeviceProfile &dev, const FrameworkProfile &fw,
                        RankShapeCache *shapes = nullptr);

/// The part of memoryFloorBytes that the model states' sharding and placement leave as it is:
/// the first stage's saved activations, its head's tensors and its first backward's working set.
/// Layouts that differ only in how their states are sharded and placed share it (a search's
/// hot path computes it once for them).
struct FloorActivations
{
    double actLayer = 0, actLayerFull = 0, actTotal = 0, actFinal = 0, logitsForward = 0, swapLayer = 0,
           bwdTransient = 0, inflight = 1;
    int recomputeGroup = 1;
    bool operator==(const FloorActivations &) const = default;
};
FloorActivations floorActivations(const Plan &plan, const DeviceProfile &dev, const FrameworkProfile &fw,
                                  RankShapeCache *shapes = nullptr);
/// memoryFloorBytes(plan, dev, fw), exactly, from `act`: floorActivations of a plan that
/// differs from `plan` at most in parallel.sharding (both or neither Sharding::Full: autocast's
/// residual dtype depends on it), parallel.dp_shard and the optimizer, params and grads
/// switches of memory.offload.
double memoryFloorBytes(const Plan &plan, const DeviceProfile &dev, const FrameworkProfile &fw,
                        const FloorActivations &act);
/// The runtime reserve memoryFloorBytes counts: the first stage's context and collective
/// buffers (one per communication group it uses). Of the layout it reads the degrees (dp, tp,
/// pp, cp, ep, etp), parallel.dp_shard, the CP algorithm and its Ulysses degree, and for
/// MindSpeed's adaptive buffer sizes training.micro_batch and parallel.sp: plans alike in those
/// share it.
double floorReserveBytes(const Plan &plan, const DeviceProfile &dev, const FrameworkProfile &fw,
                         RankShapeCache *shapes = nullptr);
/// memoryFloorBytes from `act` (as above) and `reserve`, floorReserveBytes of a plan alike in
/// what it reads.
double memoryFloorBytes(const Plan &plan, const DeviceProfile &dev, const FrameworkProfile &fw,
                        const FloorActivations &act, double reserve, RankShapeCache *shapes = nullptr);

/// estimateMemory, unless memoryFloorBytes exceeds `limit`: then nothing (the plan cannot fit
/// within it), at the floor's cost alone. The floor and the estimate share their work.
std::optional<MemoryEstimate> estimateMemoryWithinFloor(const Plan &plan, const Catalog &catalog, double limit);

/// Replays the caching allocator (core/allocator.h) over every rank kind's timeline: sets each
/// rank's reserved_bytes, the allocator's share of its runtime reserve and whether it runs out of
/// memory on the device (HBM minus context and collective buffers), then hbm_fits and fits.
/// `verdictOnly`: stop at the first rank that runs out (fullest ranks first; the search's check),
/// leaving the other ranks' figures unset.
void replayAllocator(const Plan &plan, const Catalog &catalog, MemoryEstimate &memory,
                     bool verdictOnly = false);
/// Runs body(k) for every k in [0, n), perhaps side by side.
using ForEachRank = FunctionRef<void(size_t n, FunctionRef<void(size_t k)> body)>;
/// The ForEachRank of one thread: body(k) for k = 0, 1 ... n - 1 in turn.
inline constexpr auto forEachInTurn = [](size_t n, FunctionRef<void(size_t k)> body) {
    for (size_t k = 0; k < n; ++k)
        body(k);
};
/// The same, with the ranks' timelines and replays (independent of one another) run by
/// `forEach`; the outcome is the one above.
void replayAllocator(const Plan &plan, const Catalog &catalog, MemoryEstimate &memory, bool verdictOnly,
                     ForEachRank forEach);

/// replayAllocator in its parts, for a caller that runs the ranks of several plans side by side
/// (the search): construct it, call replayRank(k) once for every k < ranks() (from any threads,
/// each k on one), then finish(), which writes what replayAllocator writes. `plan`, `catalog` and
/// `memory` must outlive it; it neither moves nor copies.
class AllocatorReplay
{
public:
    AllocatorReplay(const Plan &plan, const Catalog &catalog, MemoryEstimate &memory, bool verdictOnly);
    ~AllocatorReplay();
    AllocatorReplay(const AllocatorReplay &) = delete;
    AllocatorReplay &operator=(const AllocatorReplay &) = delete;
    size_t ranks() const { return order_.size(); }
    void replayRank(size_t k);
    void finish();

private:
    struct Replayed;
    const Plan &plan_;
    const Catalog &catalog_;
    MemoryEstimate &memory_;
    bool verdictOnly_;
    std::vector<size_t> order_; ///< ranks' indices, fullest first with verdictOnly
    std::vector<Replayed> done_; ///< by position in order_
    std::atomic<size_t> firstOom_; ///< verdictOnly: none after it is needed
};

struct StepTimeline;
/// Every allocation and free of the rank kind at `stage` (core/timeline.h): the model build, the
/// first step and a steady step. Alike steady micro-batches beyond `steadyLimit` are left out
/// (they change no peak; StepTimeline::omitted_microbatches counts them).
StepTimeline memoryTimeline(const Plan &plan, const Catalog &catalog, int stage, int steadyLimit = 3);
/// The same into `into`, whose storage is reused (a caller that builds many timelines).
void memoryTimeline(const Plan &plan, const Catalog &catalog, int stage, StepTimeline &into, int steadyLimit = 3);

/// Bytes decoder layer `layer` (0-based) saves for backward per token of a micro-batch on one
/// rank, fully trained, under the plan's recompute policy (its eager score matrices included):
/// what the activation formula's "B/token" averages over a stage.
double savedBytesPerToken(const Plan &plan, const Catalog &catalog, int layer);

/// The formula (with the plan's numbers) and the assumptions behind one component, as phrases
/// the interface translates (context kTextContext); english() gives the English text.
struct ComponentExplanation
{
    Text formula;
    Text assumptions; ///< empty when there is nothing to add
};
using MemoryExplanation = std::array<ComponentExplanation, kComponentCount>;

/// Explains the components of `rank` at `phase`. Same code path as the numbers.
MemoryExplanation explainMemory(const Plan &plan, const Catalog &catalog, const RankMemory &rank,
                                Phase phase);

} // namespace shardscope
