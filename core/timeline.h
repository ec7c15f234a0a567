#pragma once

// The training step as a timeline: the ordered allocations and frees of one kind of rank, at the
// granularity the framework allocates (each saved activation, gathered layer, gradient, logits
// tensor, optimizer state and temporary), through the model build, the first step (where the
// optimizer states come into being) and a steady-state step.
//
// One generator (emitStep) describes the schedule; sinks consume it:
//  - PeakTracker follows live bytes per component and the peak of each phase. It collapses runs
//    of identical layers and micro-batches analytically (a run of n alike blocks peaks in its
//    first or its last block), so the per-rank breakdown costs the same for 8 layers or 128.
//    memory.cpp reads its phase peaks: this is the one source of the component breakdown.
//  - TimelineRecorder writes every tensor out (StepTimeline), for the allocator replay
//    (core/allocator.h) and the memory-over-time view. Its live-bytes peak equals the tracker's.
#include "functionref.h"
#include "memory.h"
#include "workspace.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace shardscope {

/// What a tensor of the timeline is (plan-format.md `timeline.tensors[].kind`).
enum class TensorKind : uint8_t {
    Parameter,          ///< stored (possibly sharded) parameter
    MasterWeight,       ///< high-precision copy the optimizer updates
    OptimizerState,     ///< moments, momentum
    Gradient,           ///< .grad / main-grad / sharded gradient
    PersistentGradients,///< a framework's contiguous gradient buffer (Megatron main_grad)
    ComputeCopy,        ///< autocast's compute-dtype cast of a layer's weights
    SavedActivations,   ///< what one layer saves for backward (one micro-batch)
    HeadActivations,    ///< final norm and LM-head inputs saved for backward
    NormOutput,         ///< final-norm output alive until forward returns
    Logits,             ///< logits and the loss' forward tensors
    LossGradients,      ///< the loss backward's vocab-sized gradients
    ForwardWorkingSet,  ///< eager mask, ring-attention K/V blocks, dequantized weight
    RecomputedLayer,    ///< the layer recomputed for its backward
    BackwardWorkingSet, ///< gradients of the layer's intermediates
    AllGatherBuffer,    ///< FSDP flat all-gather output (all-gather stream)
    GatheredLayer,      ///< FSDP unsharded parameters of one layer
    GatheredRoot,       ///< FSDP unsharded root module (embedding, final norm, head)
    UnshardedGradients, ///< FSDP unsharded gradients of one layer or the root
    ReduceScatterInput, ///< FSDP flat reduce-scatter input (reduce dtype)
    DdpBucket,          ///< DDP flat gradient bucket
    ReduceBucket,       ///< ZeRO-1/2 reduction bucket
    PipelineBuffer,     ///< pipeline send / receive buffers
    OptimizerTemporary, ///< foreach / for-loop temporaries of the optimizer step
    GemmWorkspace,      ///< a GEMM library workspace kept for the run (core/workspace.h)
    SpGatherBuffer,     ///< Megatron's global buffer for sequence parallelism's all-gathers
    PipelineInput,      ///< a model chunk's last received input and its gradient, kept by Megatron
    Count
};
inline constexpr int kTensorKindCount = int(TensorKind::Count);

/// The stream an allocation is made on: the caching allocator never hands a block freed on one
/// stream to a request on another.
enum class Stream : uint8_t { Compute, AllGather, ReduceScatter };

/// The parts of a replayed run.
enum class StepPart : uint8_t { Setup, FirstStep, SteadyStep, Count };
inline constexpr int kStepPartCount = int(StepPart::Count);

std::string_view tensorKindKey(TensorKind k);   ///< "saved_activations", ...
std::string_view tensorKindLabel(TensorKind k); ///< "Saved activations", ... (English)
Component componentOf(TensorKind k);
Stream streamOf(TensorKind k);
std::string_view stepPartKey(StepPart p); ///< "setup", "first_step", "steady_step"

/// Names one allocation for its free: the kind, the micro-batch unit, the layer and the piece.
struct TensorRef
{
    TensorKind kind = TensorKind::Parameter;
    int unit = -1;  ///< micro-batch (model chunk under interleaving), -1 for step-wide tensors
    int layer = -1; ///< layer within the stage, -1 for none
    int piece = 0;  ///< tensor within a layer's group (parameters: q, k, v, ...)
};

/// Byte sizes and schedule of one kind of rank, filled by memory.cpp from its quantities.
struct StepShape
{
    int stage = 0, pp = 1;
    bool first = true, last = true;
    int chunks = 1;       ///< model chunks (interleaved virtual stages)
    /// Decoder layers of each model chunk on this stage (core/layers.h's StageLayout: alike
    /// unless the embedding / loss counted as a layer takes one from the first / last chunk).
    std::vector<int> chunkLayers = {1};
    int layersOfChunk(int c) const { return chunkLayers[size_t(c)]; }
    int firstLayerOfChunk(int c) const
    {
        int n = 0;
        for (int i = 0; i < c; ++i)
            n += chunkLayers[size_t(i)];
        return n;
    }
    int stageLayers() const { return firstLayerOfChunk(int(chunkLayers.size())); }
    int microbatches = 1; ///< per step per data-parallel rank
    int warmup = 0;       ///< forwards before the first backward (1F1B / GPipe / interleaved)
    bool interleaved = false;

    // persistent
    /// One layer's parameter tensors and the root's (embedding, final norm, head on this
    /// stage), their relative sizes in elements: the stored parameters take
    /// paramBytesPerElement of each, scaled to what the rank stores, and the master copy and the
    /// states are split by them too (the stored parameters can be none, e.g. MindSpeed's
    /// reuse-fp32-param at dp 1).
    std::vector<double> layerParamElements, rootParamElements;
    double paramBytesPerElement = 0;
    double master = 0, states = 0; ///< bytes, split like the parameters' elements
    bool persistentGrads = false;          ///< gradients in a buffer that outlives the step
    double grads = 0, gradsPerLayer = 0, gradsHead = 0, gradsEmbedding = 0;
    double ddpBuckets = 0, reduceBucket = 0, p2p = 0;
    GemmWorkspaces workspaces; ///< kept from the first GEMMs on
    double spGather = 0;       ///< Megatron's global all-gather buffer (sequence parallelism)

    // autocast weight copies
    double castPerLayer = 0, castHead = 0;
    bool castsRedoneInBackward = false; ///< full recompute: casts made again per layer

    // activations per micro-batch unit
    double actLayer = 0;       ///< saved by one layer after the recompute policy
    /// Per model chunk, what one of its layers saves, where chunks differ (MindSpeed's block
    /// recompute per pipeline rank); empty: every layer saves actLayer.
    std::vector<double> actChunk;
    double recomputeSet = 0;   ///< what the layer's recompute brings back for its backward
    double bwdWork = 0;        ///< the layer backward's working set beyond recompute
    double fwdWork = 0;        ///< per layer forward working memory
    double actFinal = 0, normOutput = 0;
    double actEmbedding = 0;   ///< the embedding's dropout mask (first stage, chunk 0)
    bool offloadActivations = false;
    double hiddenTensor = 0; ///< bytes of one hidden-sized activation (tensor granularity)
    /// Relative sizes of the tensors a group is allocated as (scaled to the group's bytes):
    /// what one layer saves, what its recompute brings back, its backward working set.
    std::vector<double> savedParts, recomputeParts, bwdParts, headParts;
    std::vector<double> bucketParts; ///< DDP's buckets (bucket_cap_mb = 25)

    // logits on the last stage
    std::vector<double> logitsForward, logitsBackward;
    /// The element of logitsForward the loss frees when its forward returns (its fp32 input
    /// under an out-of-place shift), -1 when all wait for the backward.
    int logitsFreedAfterLoss = -1;

    // FSDP
    bool fsdp = false, reshardAfterForward = true, rootStaysGathered = true;
    int prefetch = 1;
    double gatheredLayer = 0;   ///< one layer's unsharded parameters (compute dtype)
    double layerUnshardedGrad = 0, layerReduceScatter = 0;
    double rootGathered = 0, rootUnshardedGrad = 0, rootReduceScatter = 0;
    double rootHeadUnshardedGrad = 0; ///< the head's share, made at the head's backward

    // optimizer step
    double optTemp = 0;
    /// Scaled copies without apex (core/gradclip.h): the gradient clip's, before the optimizer
    /// (and the first step's states); the master parameter's copy into the model's, after it.
    double clipTemp = 0, paramCopyTemp = 0;
    double reuseTemp = 0; ///< reuse-fp32-param: the master buffer turned back into bf16 + residuals
    /// Megatron's model chunks' last received inputs and their gradients (pipeline_input_kept):
    /// made by the step's last backwards, dropped by the next step's forwards.
    double keptInputs = 0;
    double largestTensor = 0; ///< for-loop temporaries are per tensor (bytes)
    bool optTempPerTensor = true;
};

/// Consumer of the generator's events.
class StepSink
{
public:
    virtual ~StepSink() = default;
    virtual void part(StepPart p) = 0;
    virtual void phase(Phase p) = 0;
    /// `parts` (relative sizes, may be null): the framework allocates `bytes` as these tensors.
    virtual void alloc(const TensorRef &t, double bytes, const std::vector<double> *parts = nullptr) = 0;
    virtual void free(const TensorRef &t, double bytes) = 0;
    /// body(i) for i in [0, n); the n runs allocate and free alike sizes.
    virtual void repeat(int n, FunctionRef<void(int)> body) = 0;
    /// How many alike steady micro-batches a sink wants spelled out (they change nothing).
    virtual int steadyRepeatLimit() const { return 1 << 30; }
    /// A block whose effect depends only on `key` (a micro-batch's forward or backward of one
    /// kind): a sink may replay a recorded effect instead of running `body` again.
    virtual void block(uint32_t key, FunctionRef<void()> body)
    {
        (void)key;
        body();
    }
};

/// Whole steady periods of an interleaved schedule (`period` alike forward / backward pairs
/// each) a sink with `limit` spells out: enough for `limit` alike pairs, at least one.
inline int shownPeriods(int periods, int period, int limit)
{
    const int needed = (std::max(1, limit) + std::max(1, period) - 1) / std::max(1, period);
    return std::min(periods, needed);
}

/// Emits the model build and persistent buffers (part Setup).
void emitSetup(const StepShape &s, StepSink &sink);
/// Emits the optimizer states as the first step leaves them (part Setup): what a steady step
/// starts with, for a sink that does not need the first step itself.
void emitStates(const StepShape &s, StepSink &sink);
/// Emits one training step; `firstStep` creates the optimizer states in its optimizer phase.
void emitStep(const StepShape &s, StepSink &sink, bool firstStep);

/// Live bytes per component and each phase's peak, runs collapsed analytically.
class PeakTracker final : public StepSink
{
public:
    struct Peak
    {
        double total = -1;
        Breakdown at;
    };
    void part(StepPart p) override;
    void phase(Phase p) override;
    void alloc(const TensorRef &t, double bytes, const std::vector<double> *parts) override;
    void free(const TensorRef &t, double bytes) override;
    void repeat(int n, FunctionRef<void(int)> body) override;
    void block(uint32_t key, FunctionRef<void()> body) override;

    /// The peak of `phase` within `part` (total -1 when the phase did not occur).
    const Peak &peak(StepPart part, Phase phase)
    {
        settle();
        return peaks_[size_t(part)][size_t(phase)];
    }
    const Breakdown &live() const { return live_; }

private:
    using Peaks = std::array<Peak, kPhaseCount>;
    void observe();
    void settle(); ///< observes the allocations since the last observation
    bool pending_ = false;
    static void merge(Peak &into, const Peak &p);
    Breakdown live_;
    double total_ = 0; ///< live_.total(), kept as it changes
    StepPart part_ = StepPart::Setup;
    Phase phase_ = Phase::Forward;
    std::array<Peaks, kStepPartCount> peaks_{};
    std::vector<Peaks> stack_; ///< local peaks of the repeat bodies being run
    /// A block's effect: each phase's peak relative to the live bytes at its start, its change.
    struct Effect
    {
        Peaks peaks;
        Breakdown delta;
        Phase endPhase;
    };
    std::unordered_map<uint32_t, Effect> effects_;
    Breakdown runCaptured(FunctionRef<void()> body, Peaks &local);
};

struct TimelineTensor
{
    TensorKind kind;
    Phase phase;   ///< phase of its allocation
    StepPart part; ///< part of its allocation
    int16_t unit, layer;
    double bytes;
    int alloc_event;
    int free_event = -1; ///< -1: still allocated at the end
};

struct TimelineEvent
{
    int tensor;
    bool alloc;
};

/// Where a phase of a part begins in the event list.
struct PhaseMark
{
    int event;
    StepPart part;
    Phase phase;
};

/// An outermost repeat as listed: `units` alike runs of `unit_events` events each, the first at
/// event `begin` (StepSink::repeat). The allocator replay passes over the runs that leave its
/// state as they found it (core/allocator.h).
struct RepeatSpan
{
    int begin;
    int unit_events;
    int units;
};

/// Every allocation and free of one kind of rank: model build, first step, steady step.
struct StepTimeline
{
    int stage = 0;
    std::vector<TimelineTensor> tensors;
    std::vector<TimelineEvent> events;
    std::vector<PhaseMark> marks;
    /// Outermost repeats of at least two runs, each run listing as many events, in order.
    std::vector<RepeatSpan> repeats;
    /// Alike steady micro-batches left out of the listing (they change no peak).
    int omitted_microbatches = 0;
    int unmatched_frees = 0; ///< frees of nothing allocated (a generator bug; tests keep it 0)
    double peakLive(StepPart part) const; ///< largest live bytes within `part`, from the events
    /// peakLive of each part as the recorder kept it while listing the events (the same sums in
    /// the same order, so the same figures), for callers that cannot spare a pass over them.
    std::array<double, kStepPartCount> peak_live{};
};

/// Writes every event out.
class TimelineRecorder final : public StepSink
{
public:
    explicit TimelineRecorder(StepTimeline &out, int steadyLimit = 3);
    void part(StepPart p) override;
    void phase(Phase p) override;
    void alloc(const TensorRef &t, double bytes, const std::vector<double> *parts) override;
    void free(const TensorRef &t, double bytes) override;
    void repeat(int n, FunctionRef<void(int)> body) override;
    int steadyRepeatLimit() const override { return limit_; }

private:
    static uint64_t key(const TensorRef &t);
    StepTimeline &out_;
    int limit_;
    int depth_ = 0; ///< repeats open
    double live_ = 0; ///< bytes allocated and not freed, as peakLive sums them
    StepPart part_ = StepPart::Setup;
    Phase phase_ = Phase::Forward;
    /// The tensors allocated and not yet freed, by key (first tensor, count): open addressing
    /// with linear probing in one array, since a timeline opens and closes thousands of them and
    /// a node-based map allocates for each.
    class OpenTensors
    {
    public:
        /// Opens `key` (`count` >= 1, as every alloc lists a tensor), replacing an open one.
        void put(uint64_t key, int first, int count);
        /// Finds `key` and removes it; false when it is not open.
        bool take(uint64_t key, std::pair<int, int> &out);

    private:
        struct Slot
        {
            uint64_t key = 0;
            int first = 0, count = 0; ///< count 0: the slot is empty
        };
        size_t home(uint64_t key) const;
        std::vector<Slot> slots_; ///< a power of two, at most half used
        size_t used_ = 0;
        int shift_ = 64; ///< 64 - log2(slots)
    };
    OpenTensors open_;
};

} // namespace shardscope
