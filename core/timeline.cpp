// The step as a timeline of allocations (see timeline.h).
//
// The schedule follows what the frameworks run:
//  - Pipeline schedules: 1F1B warms up with (pp - stage - 1) forwards, alternates one forward
//    and one backward, and drains; GPipe runs every forward first; Megatron's interleaved 1F1B
//    warms up with (pp - stage - 1) * 2 + (virtual - 1) * pp model chunks, forward chunk
//    (k / pp) % virtual, backward chunk virtual - 1 - (k / pp) % virtual.
//  - FSDP2 (torch.distributed.fsdp.fully_shard, _fsdp_param_group.py / _fsdp_collectives.py as
//    of torch 2.6-2.9): forward all-gathers a layer into a flat buffer on the all-gather stream,
//    copies it out into the unsharded parameters, and keeps the flat buffer until the next
//    layer's all-gather has been waited on (all_gather_state), so a layer runs beside its own
//    flat buffer and the previous one is freed; the root module's post-forward frees the last
//    flat buffer after the root's own forward (head and loss included). The root is not
//    resharded after forward (post_forward_mesh_info is None for the root). Backward: the root's
//    pre-backward prefetches the last layer; each layer's pre-backward copies out (the flat
//    buffer freed at once) and prefetches the next layer below; post-backward takes the
//    unsharded gradients, reshards (frees the unsharded parameters) *before* the reduce-scatter
//    input exists, waits for and frees the previous layer's reduce-scatter input, allocates its
//    own (reduce dtype), copies in and frees the unsharded gradients; its reduce-scatter input
//    stays alive (reduce_scatter_state) through the next layer's backward. The root's gradients
//    stay unsharded until the final callback reduces them.
//  - Hugging Face / PyTorch: gradients are set to None by zero_grad and come into being in the
//    first backward of a step; autocast's weight cache lives until forward returns, autograd
//    holding what backward needs; the optimizer states are created by the first step().
#include "timeline.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace shardscope {

namespace {

struct KindInfo
{
    std::string_view key, label;
    Component component;
    Stream stream;
};

constexpr KindInfo kKinds[kTensorKindCount] = {
    {"parameter", "Parameter", Component::Parameters, Stream::Compute},
    {"master_weight", "Master weight", Component::MasterWeights, Stream::Compute},
    {"optimizer_state", "Optimizer state", Component::OptimizerStates, Stream::Compute},
    {"gradient", "Gradient", Component::Gradients, Stream::Compute},
    {"gradient_buffer", "Gradient buffer", Component::Gradients, Stream::Compute},
    {"compute_copy", "Autocast weight copy", Component::Parameters, Stream::Compute},
    {"saved_activations", "Saved activations", Component::Activations, Stream::Compute},
    {"head_activations", "Final norm and head inputs", Component::Activations, Stream::Compute},
    {"norm_output", "Final norm output", Component::Activations, Stream::Compute},
    {"logits", "Logits and loss", Component::LogitsAndLoss, Stream::Compute},
    {"loss_gradients", "Loss gradients", Component::LogitsAndLoss, Stream::Compute},
    {"forward_working_set", "Forward working set", Component::Transient, Stream::Compute},
    {"recomputed_layer", "Recomputed layer", Component::Transient, Stream::Compute},
    {"backward_working_set", "Backward working set", Component::Transient, Stream::Compute},
    {"all_gather_buffer", "All-gather buffer", Component::CommunicationBuffers, Stream::AllGather},
    {"gathered_layer", "Gathered layer", Component::CommunicationBuffers, Stream::Compute},
    {"gathered_root", "Gathered root module", Component::CommunicationBuffers, Stream::Compute},
    {"unsharded_gradients", "Unsharded gradients", Component::CommunicationBuffers, Stream::Compute},
    {"reduce_scatter_input", "Reduce-scatter input", Component::CommunicationBuffers, Stream::Compute},
    {"ddp_bucket", "DDP bucket", Component::CommunicationBuffers, Stream::Compute},
    {"reduce_bucket", "Reduce bucket", Component::CommunicationBuffers, Stream::Compute},
    {"pipeline_buffer", "Pipeline send/recv buffer", Component::CommunicationBuffers, Stream::Compute},
    {"optimizer_temporary", "Optimizer temporary", Component::Transient, Stream::Compute},
    {"gemm_workspace", "GEMM library workspace", Component::Transient, Stream::Compute},
    {"sp_gather_buffer", "Sequence-parallel all-gather buffer", Component::CommunicationBuffers, Stream::Compute},
    {"pipeline_input", "Model chunk's last input and its gradient", Component::CommunicationBuffers, Stream::Compute},
};

constexpr int kHead = -2;     ///< layer index of the head's tensors
constexpr int kRootRest = -3; ///< layer index of the root's other gradients

} // namespace

std::string_view tensorKindKey(TensorKind k) { return kKinds[size_t(k)].key; }
std::string_view tensorKindLabel(TensorKind k) { return kKinds[size_t(k)].label; }
Component componentOf(TensorKind k) { return kKinds[size_t(k)].component; }
Stream streamOf(TensorKind k) { return kKinds[size_t(k)].stream; }

std::string_view stepPartKey(StepPart p)
{
    switch (p) {
    case StepPart::Setup: return "setup";
    case StepPart::FirstStep: return "first_step";
    case StepPart::SteadyStep: return "steady_step";
    case StepPart::Count: break;
    }
    return "";
}

// --- the generator -----------------------------------------------------------------------------

namespace {

class Emitter
{
public:
    Emitter(const StepShape &shape, StepSink &sink) : s(shape), k(sink)
    {
        // Chunks that save alike share their blocks: each distinct saving gets a class.
        actClass.resize(s.actChunk.size());
        std::vector<double> seen;
        for (size_t c = 0; c < s.actChunk.size(); ++c) {
            const auto it = std::find(seen.begin(), seen.end(), s.actChunk[c]);
            actClass[c] = uint32_t(it - seen.begin()) + 1;
            if (it == seen.end())
                seen.push_back(s.actChunk[c]);
        }
    }

    void setup()
    {
        k.part(StepPart::Setup);
        k.phase(Phase::Forward);
        const int layers = s.stageLayers();
        k.repeat(layers, [&](int i) {
            for (size_t j = 0; j < s.layerParamElements.size(); ++j)
                alloc({TensorKind::Parameter, -1, i, int(j)},
                      s.layerParamElements[j] * s.paramBytesPerElement);
        });
        for (size_t j = 0; j < s.rootParamElements.size(); ++j)
            alloc({TensorKind::Parameter, -1, kHead, int(j)},
                  s.rootParamElements[j] * s.paramBytesPerElement);
        // Megatron / DeepSpeed build their fp32 master copies with the optimizer.
        perTensor(TensorKind::MasterWeight, s.master, true);
        if (s.persistentGrads)
            alloc({TensorKind::PersistentGradients}, s.grads);
        alloc({TensorKind::DdpBucket}, s.ddpBuckets, &s.bucketParts);
        alloc({TensorKind::PipelineBuffer}, s.p2p);
        alloc({TensorKind::SpGatherBuffer}, s.spGather); // made by the first forward's gather
        // The GEMM libraries' workspaces: made by the first GEMMs of the first step (forward,
        // then backward) and kept; counted from the start.
        for (int i = 0; i < s.workspaces.count; ++i)
            alloc({TensorKind::GemmWorkspace, -1, -1, i}, s.workspaces.bytes);
        alloc({TensorKind::GemmWorkspace, -1, -1, s.workspaces.count}, s.workspaces.teBytes);
    }

    /// The optimizer states as the first step leaves them (for a sink that skips that step).
    void states()
    {
        k.part(StepPart::Setup);
        perTensor(TensorKind::OptimizerState, s.states, true);
        alloc({TensorKind::PipelineInput}, s.keptInputs);
    }

    void step(bool firstStep)
    {
        k.part(firstStep ? StepPart::FirstStep : StepPart::SteadyStep);
        k.phase(Phase::Forward);
        // The chunks' inputs the last step left: each chunk's first forward takes a new one.
        if (!firstStep)
            free({TensorKind::PipelineInput}, s.keptInputs);
        alloc({TensorKind::ReduceBucket}, s.reduceBucket);
        const int units = std::max(1, s.microbatches * s.chunks);
        const int warm = std::clamp(s.warmup, 0, units);
        const int steadyPairs = units - warm;
        // The root stays gathered per micro-batch when forward and backward alternate; across
        // the step when several forwards run first.
        rootPerUnit = warm == 0;
        if (s.fsdp && s.rootStaysGathered && !rootPerUnit)
            alloc({TensorKind::GatheredRoot}, s.rootGathered);

        if (s.interleaved) {
            interleavedSchedule(units, warm);
        } else {
            // Alike micro-batches: warm-up forwards, then forward / backward pairs (the first
            // backward makes the gradients), then the drain.
            k.repeat(warm, [&](int i) { forward(i, 0); });
            int done = 0; // backwards emitted
            if (steadyPairs > 0) {
                forward(warm, 0);
                backward(0, 0, true);
                const int more = std::min(steadyPairs - 1, k.steadyRepeatLimit());
                k.repeat(more, [&](int j) {
                    forward(warm + 1 + j, 0);
                    backward(1 + j, 0, false);
                });
                done = 1 + more;
                if (warm > 0)
                    k.repeat(warm, [&](int j) { backward(done + j, 0, false); });
            } else if (warm > 0) {
                backward(0, 0, true);
                k.repeat(warm - 1, [&](int j) { backward(1 + j, 0, false); });
            }
        }
        if (s.fsdp && s.rootStaysGathered && !rootPerUnit)
            free({TensorKind::GatheredRoot}, s.rootGathered);

        free({TensorKind::ReduceBucket}, s.reduceBucket); // the reduction is done
        alloc({TensorKind::PipelineInput}, s.keptInputs); // each chunk's last input and gradient
        k.phase(Phase::OptimizerStep);
        alloc({TensorKind::OptimizerTemporary}, s.clipTemp); // clip_grad_norm
        free({TensorKind::OptimizerTemporary}, s.clipTemp);
        if (firstStep)
            perTensor(TensorKind::OptimizerState, s.states, true);
        if (s.optTempPerTensor) {
            perTensor(TensorKind::OptimizerTemporary, s.optTemp, true);
            perTensor(TensorKind::OptimizerTemporary, s.optTemp, false);
        } else {
            alloc({TensorKind::OptimizerTemporary}, s.optTemp);
            free({TensorKind::OptimizerTemporary}, s.optTemp);
        }
        alloc({TensorKind::OptimizerTemporary}, s.paramCopyTemp); // main to model parameters
        free({TensorKind::OptimizerTemporary}, s.paramCopyTemp);
        alloc({TensorKind::OptimizerTemporary}, s.reuseTemp); // fp32 master back to bf16 + residual
        free({TensorKind::OptimizerTemporary}, s.reuseTemp);
        // zero_grad(set_to_none=True)
        if (!s.persistentGrads)
            gradients(false);
    }

private:
    const StepShape &s;
    StepSink &k;
    bool rootPerUnit = true;
    std::vector<uint32_t> actClass; ///< per chunk, 1 + its saving's index (empty: all alike)

    double actOf(int chunk) const
    {
        return s.actChunk.empty() ? s.actLayer : s.actChunk[size_t(chunk)];
    }

    void alloc(const TensorRef &t, double bytes, const std::vector<double> *parts = nullptr)
    {
        if (bytes > 0)
            k.alloc(t, bytes, parts && !parts->empty() ? parts : nullptr);
    }
    void free(const TensorRef &t, double bytes)
    {
        if (bytes > 0)
            k.free(t, bytes);
    }

    int fwdChunk(int f) const { return (f / std::max(1, s.pp)) % s.chunks; }
    /// The micro-batch of the f-th forward (b-th backward): groups of pp micro-batches run
    /// through every chunk before the next group starts.
    int unitOf(int n) const
    {
        const int pp = std::max(1, s.pp);
        return (n / (pp * s.chunks)) * pp + n % pp;
    }
    int bwdChunk(int b) const { return s.chunks - 1 - (b / std::max(1, s.pp)) % s.chunks; }
    bool hasHead(int chunk) const { return s.last && chunk == s.chunks - 1; }
    bool hasEmbedding(int chunk) const { return s.first && chunk == 0; }

    double elementTotal() const
    {
        double layer = 0, root = 0;
        for (double e : s.layerParamElements)
            layer += e;
        for (double e : s.rootParamElements)
            root += e;
        return layer * s.stageLayers() + root;
    }

    /// `total` bytes laid out like the parameters (one tensor per parameter tensor).
    void perTensor(TensorKind kind, double total, bool allocate)
    {
        const double p = elementTotal();
        if (total <= 0 || p <= 0)
            return;
        const double scale = total / p;
        auto one = [&](const TensorRef &t, double b) {
            if (allocate)
                alloc(t, b * scale);
            else
                free(t, b * scale);
        };
        k.repeat(s.stageLayers(), [&](int i) {
            for (size_t j = 0; j < s.layerParamElements.size(); ++j)
                one({kind, -1, i, int(j)}, s.layerParamElements[j]);
        });
        for (size_t j = 0; j < s.rootParamElements.size(); ++j)
            one({kind, -1, kHead, int(j)}, s.rootParamElements[j]);
    }

    /// The per-layer, head and embedding gradients (allocated by the first backward).
    void gradients(bool allocate)
    {
        auto one = [&](const TensorRef &t, double b) {
            if (allocate)
                alloc(t, b);
            else
                free(t, b);
        };
        k.repeat(s.stageLayers(), [&](int i) { one({TensorKind::Gradient, -1, i}, s.gradsPerLayer); });
        one({TensorKind::Gradient, -1, kHead}, s.gradsHead);
        one({TensorKind::Gradient, -1, kRootRest}, s.gradsEmbedding);
    }

    /// Megatron's interleaved 1F1B as lists of forwards, backwards and pairs, emitted in runs
    /// of alike entries (same chunks, no chunk's first backward), each run collapsed; whole
    /// steady periods (pp x chunks pairs, the pattern's length) repeat as one block.
    struct Op
    {
        int f = -1, b = -1; ///< forward / backward index, -1 for none
        int fc = -1, bc = -1;
        bool first = false; ///< the backward is its chunk's first
        /// `chunks`: whether the chunk makes a difference (the first stage's chunk 0 holds the
        /// embedding, the last stage's last chunk the head; elsewhere chunks are alike).
        bool alike(const Op &o, bool chunks) const
        {
            return (f < 0) == (o.f < 0) && (b < 0) == (o.b < 0) && (!chunks || (fc == o.fc && bc == o.bc)) &&
                   !first && !o.first;
        }
    };

    void runOps(const std::vector<Op> &ops, int shift)
    {
        auto run = [&](const Op &op) {
            if (op.f >= 0)
                forward(unitOf(op.f + shift), op.fc);
            if (op.b >= 0)
                backward(unitOf(op.b + shift), op.bc, op.first);
        };
        for (size_t i = 0; i < ops.size();) {
            size_t j = i + 1;
            while (j < ops.size() && ops[j].alike(ops[i], s.first || s.last || !chunksAlike()))
                ++j;
            if (j - i == 1) {
                run(ops[i]);
            } else {
                const size_t start = i;
                k.repeat(int(j - i), [&](int r) { run(ops[start + size_t(r)]); });
            }
            i = j;
        }
    }

    /// A middle stage's interleaved schedule: every chunk alike but for the first backward of
    /// each (backward chunk v-1-c starts at c x pp), so runs are cut only there.
    void middleInterleaved(int units, int warm)
    {
        const int pp = std::max(1, s.pp), v = std::max(1, s.chunks);
        const int steadyPairs = units - warm;
        const int period = pp * v;
        const int first = std::min(steadyPairs, period);
        const int periods = (steadyPairs - first) / period;
        const int shown = shownPeriods(periods, period, k.steadyRepeatLimit());
        const int pairs = first + shown * period + (steadyPairs - first - periods * period);
        auto isFirst = [&](int b) { return b % pp == 0 && b / pp < v; };
        // Warm-up forwards.
        k.repeat(warm, [&](int i) { forward(unitOf(i), fwdChunk(i)); });
        // Backwards (paired with forwards from `warm` on while i < pairs), cut at first ones.
        const int total = pairs + warm;
        auto op = [&](int b) {
            if (b < pairs) {
                const int f = warm + b;
                forward(unitOf(f), fwdChunk(f));
            }
            backward(unitOf(b), bwdChunk(b), isFirst(b));
        };
        for (int b = 0; b < total;) {
            if (isFirst(b)) {
                op(b++);
                continue;
            }
            // The run up to the next first backward (a multiple of pp below v x pp) or the end
            // of the pairs.
            int end = total;
            const int nextFirst = (b / pp + 1) * pp;
            if (nextFirst < v * pp)
                end = std::min(end, nextFirst);
            if (b < pairs)
                end = std::min(end, pairs);
            const int start = b;
            k.repeat(end - start, [&](int r) { op(start + r); });
            b = end;
        }
    }

    /// Whether every chunk of this stage holds the same number of layers, saving alike.
    bool chunksAlike() const
    {
        return std::adjacent_find(s.chunkLayers.begin(), s.chunkLayers.end(),
                                  std::not_equal_to<>()) == s.chunkLayers.end() &&
               std::adjacent_find(s.actChunk.begin(), s.actChunk.end(), std::not_equal_to<>()) ==
                   s.actChunk.end();
    }

    void interleavedSchedule(int units, int warm)
    {
        if (!s.first && !s.last && chunksAlike()) {
            middleInterleaved(units, warm);
            return;
        }
        std::vector<bool> seen(size_t(std::max(1, s.chunks)), false);
        int f = 0, b = 0;
        auto fwd = [&]() {
            Op op{f, -1, fwdChunk(f), -1, false};
            ++f;
            return op;
        };
        auto back = [&](Op op) {
            op.b = b;
            op.bc = bwdChunk(b);
            op.first = !seen[size_t(op.bc)];
            seen[size_t(op.bc)] = true;
            ++b;
            return op;
        };
        const int steadyPairs = units - warm;
        const int period = std::max(1, s.pp) * std::max(1, s.chunks);
        const int first = std::min(steadyPairs, period);
        const int periods = (steadyPairs - first) / period;
        const int shown = shownPeriods(periods, period, k.steadyRepeatLimit());
        const int rest = steadyPairs - first - periods * period;
        std::vector<Op> head, body, tail;
        for (int i = 0; i < warm; ++i)
            head.push_back(fwd());
        for (int i = 0; i < first; ++i)
            head.push_back(back(fwd()));
        for (int i = 0; i < (shown > 0 ? period : 0); ++i)
            body.push_back(back(fwd()));
        // Contiguous numbering: the sink's listing is a step with the left-out periods removed.
        f += (shown > 0 ? shown - 1 : 0) * period;
        b += (shown > 0 ? shown - 1 : 0) * period;
        for (int i = 0; i < rest; ++i)
            tail.push_back(back(fwd()));
        for (int i = 0; i < warm; ++i)
            tail.push_back(back(Op{}));
        runOps(head, 0);
        if (shown > 0)
            k.repeat(shown, [&](int j) { runOps(body, j * period); });
        runOps(tail, 0);
    }

    TensorRef at(TensorKind kind, int unit, int layer, int piece = 0) const
    {
        return {kind, unit, layer, piece};
    }

    uint32_t blockKey(bool back, int chunk, bool firstBackward) const
    {
        // The chunk's layer count too: a layout may give a stage's chunks different counts.
        return (back ? 1u : 0u) | (hasHead(chunk) ? 2u : 0u) | (hasEmbedding(chunk) ? 4u : 0u) |
               (firstBackward ? 8u : 0u) | (rootPerUnit ? 16u : 0u) |
               (rootPostBackward(chunk) ? 32u : 0u) |
               (uint32_t(std::clamp(s.layersOfChunk(chunk), 0, 0xFFFF)) << 8) |
               (actClass.empty() ? 0u : std::min(actClass[size_t(chunk)], 0xFFu) << 24);
    }

    /// FSDP2's root reduces its gradients once a micro-batch's backward is done on this stage:
    /// after its last model chunk (chunk 0) runs backward.
    bool rootPostBackward(int chunk) const
    {
        return s.fsdp && s.rootStaysGathered && chunk == 0 && (s.first || s.last || s.rootGathered > 0);
    }

    void forward(int u, int chunk)
    {
        k.block(blockKey(false, chunk, false), [&]() { forwardBody(u, chunk); });
    }

    void backward(int u, int chunk, bool firstBackward)
    {
        k.block(blockKey(true, chunk, firstBackward), [&]() { backwardBody(u, chunk, firstBackward); });
    }

    void forwardBody(int u, int chunk)
    {
        k.phase(Phase::Forward);
        const int L = s.layersOfChunk(chunk);
        const int base = s.firstLayerOfChunk(chunk); // layer index within the stage
        const double act = actOf(chunk);
        if (s.fsdp && s.rootStaysGathered && rootPerUnit)
            alloc(at(TensorKind::GatheredRoot, u, -1), s.rootGathered);
        // The embedding's dropout keeps its mask until the embedding's backward.
        if (hasEmbedding(chunk))
            alloc(at(TensorKind::SavedActivations, u, kRootRest), s.actEmbedding);
        auto layer = [&](int i, bool hasPrev) {
            const int l = base + i;
            if (s.fsdp) {
                alloc(at(TensorKind::AllGatherBuffer, u, l), s.gatheredLayer);
                if (hasPrev)
                    free(at(TensorKind::AllGatherBuffer, u, l - 1), s.gatheredLayer);
                alloc(at(TensorKind::GatheredLayer, u, l), s.gatheredLayer);
            }
            alloc(at(TensorKind::ComputeCopy, u, l), s.castPerLayer);
            alloc(at(TensorKind::ForwardWorkingSet, u, l), s.fwdWork);
            alloc(at(TensorKind::SavedActivations, u, l), act, &s.savedParts);
            if (s.offloadActivations && hasPrev)
                free(at(TensorKind::SavedActivations, u, l - 1), act); // copied to the host
            free(at(TensorKind::ForwardWorkingSet, u, l), s.fwdWork);
            if (s.fsdp && s.reshardAfterForward)
                free(at(TensorKind::GatheredLayer, u, l), s.gatheredLayer);
        };
        if (L > 0) {
            layer(0, false);
            k.repeat(L - 1, [&](int j) { layer(j + 1, true); });
        }
        if (hasHead(chunk)) {
            const bool gatherHead = s.fsdp && !s.rootStaysGathered;
            if (gatherHead)
                alloc(at(TensorKind::GatheredRoot, u, kHead), s.rootGathered);
            alloc(at(TensorKind::ComputeCopy, u, kHead), s.castHead);
            alloc(at(TensorKind::HeadActivations, u, kHead), s.actFinal, &s.headParts);
            alloc(at(TensorKind::NormOutput, u, kHead), s.normOutput);
            for (size_t j = 0; j < s.logitsForward.size(); ++j)
                alloc(at(TensorKind::Logits, u, kHead, int(j)), s.logitsForward[j]);
            if (s.logitsFreedAfterLoss >= 0)
                free(at(TensorKind::Logits, u, kHead, s.logitsFreedAfterLoss),
                     s.logitsForward[size_t(s.logitsFreedAfterLoss)]);
            free(at(TensorKind::NormOutput, u, kHead), s.normOutput);
            if (gatherHead)
                free(at(TensorKind::GatheredRoot, u, kHead), s.rootGathered);
        }
        // The root's post-forward frees the last layer's flat buffer.
        if (s.fsdp && L > 0)
            free(at(TensorKind::AllGatherBuffer, u, base + L - 1), s.gatheredLayer);
        // Leaving autocast: checkpointed layers keep none of their casts.
        if (s.castsRedoneInBackward && s.castPerLayer > 0)
            k.repeat(L, [&](int i) { free(at(TensorKind::ComputeCopy, u, base + i), s.castPerLayer); });
    }

    void backwardBody(int u, int chunk, bool firstBackward)
    {
        k.phase(Phase::Backward);
        const int L = s.layersOfChunk(chunk);
        const int base = s.firstLayerOfChunk(chunk);
        const double act = actOf(chunk);
        const bool makeGrads = firstBackward && !s.persistentGrads;
        const bool gathers = s.fsdp && s.reshardAfterForward;
        if (gathers && L > 0 && s.prefetch > 0)
            alloc(at(TensorKind::AllGatherBuffer, u, base + L - 1), s.gatheredLayer);
        if (hasHead(chunk)) {
            for (size_t j = 0; j < s.logitsForward.size(); ++j)
                if (int(j) != s.logitsFreedAfterLoss)
                    free(at(TensorKind::Logits, u, kHead, int(j)), s.logitsForward[j]);
            for (size_t j = 0; j < s.logitsBackward.size(); ++j)
                alloc(at(TensorKind::LossGradients, u, kHead, int(j)), s.logitsBackward[j]);
            for (size_t j = 0; j < s.logitsBackward.size(); ++j)
                free(at(TensorKind::LossGradients, u, kHead, int(j)), s.logitsBackward[j]);
            if (s.fsdp && s.rootStaysGathered)
                alloc(at(TensorKind::UnshardedGradients, u, kHead), s.rootHeadUnshardedGrad);
            else if (makeGrads)
                alloc({TensorKind::Gradient, -1, kHead}, s.gradsHead);
            free(at(TensorKind::ComputeCopy, u, kHead), s.castHead);
            free(at(TensorKind::HeadActivations, u, kHead), s.actFinal);
        }
        auto layer = [&](int i, bool top, bool bottom) {
            const int l = base + i;
            if (gathers) {
                if (s.prefetch <= 0)
                    alloc(at(TensorKind::AllGatherBuffer, u, l), s.gatheredLayer);
                alloc(at(TensorKind::GatheredLayer, u, l), s.gatheredLayer);
                free(at(TensorKind::AllGatherBuffer, u, l), s.gatheredLayer);
                if (!bottom && s.prefetch > 0)
                    alloc(at(TensorKind::AllGatherBuffer, u, l - 1), s.gatheredLayer);
            }
            if (s.offloadActivations && !bottom)
                alloc(at(TensorKind::SavedActivations, u, l - 1), act, &s.savedParts);
            if (s.castsRedoneInBackward)
                alloc(at(TensorKind::ComputeCopy, u, l), s.castPerLayer);
            alloc(at(TensorKind::RecomputedLayer, u, l), s.recomputeSet, &s.recomputeParts);
            alloc(at(TensorKind::BackwardWorkingSet, u, l), s.bwdWork, &s.bwdParts);
            if (s.fsdp)
                alloc(at(TensorKind::UnshardedGradients, u, l), s.layerUnshardedGrad);
            else if (makeGrads)
                alloc({TensorKind::Gradient, -1, l}, s.gradsPerLayer);
            free(at(TensorKind::BackwardWorkingSet, u, l), s.bwdWork);
            free(at(TensorKind::RecomputedLayer, u, l), s.recomputeSet);
            free(at(TensorKind::SavedActivations, u, l), act);
            free(at(TensorKind::ComputeCopy, u, l), s.castPerLayer);
            if (s.fsdp) {
                free(at(TensorKind::GatheredLayer, u, l), s.gatheredLayer); // reshard first
                if (!top)
                    free(at(TensorKind::ReduceScatterInput, u, l + 1), s.layerReduceScatter);
                alloc(at(TensorKind::ReduceScatterInput, u, l), s.layerReduceScatter);
                free(at(TensorKind::UnshardedGradients, u, l), s.layerUnshardedGrad);
                if (makeGrads)
                    alloc({TensorKind::Gradient, -1, l}, s.gradsPerLayer);
            }
        };
        if (L == 1) {
            layer(0, true, true);
        } else if (L > 1) {
            layer(L - 1, true, false);
            k.repeat(L - 2, [&](int j) { layer(L - 2 - j, false, false); });
            layer(0, false, true);
        }
        if (hasEmbedding(chunk))
            free(at(TensorKind::SavedActivations, u, kRootRest), s.actEmbedding);
        if (hasEmbedding(chunk) && !(s.fsdp && s.rootStaysGathered) && makeGrads)
            alloc({TensorKind::Gradient, -1, kRootRest}, s.gradsEmbedding);
        if (s.fsdp) {
            if (L > 0)
                free(at(TensorKind::ReduceScatterInput, u, base), s.layerReduceScatter);
            if (rootPostBackward(chunk)) {
                // The root's post-backward (final callback) after the micro-batch's last chunk:
                // its other gradients exist, it reshards, reduce-scatters and accumulates into
                // the sharded gradients.
                const double rest = std::max(0.0, s.rootUnshardedGrad - s.rootHeadUnshardedGrad);
                alloc(at(TensorKind::UnshardedGradients, u, kRootRest), rest);
                if (rootPerUnit)
                    free(at(TensorKind::GatheredRoot, u, -1), s.rootGathered);
                alloc(at(TensorKind::ReduceScatterInput, u, kHead), s.rootReduceScatter);
                free(at(TensorKind::UnshardedGradients, u, kHead), s.rootHeadUnshardedGrad);
                free(at(TensorKind::UnshardedGradients, u, kRootRest), rest);
                if (makeGrads) {
                    alloc({TensorKind::Gradient, -1, kHead}, s.gradsHead);
                    alloc({TensorKind::Gradient, -1, kRootRest}, s.gradsEmbedding);
                }
                free(at(TensorKind::ReduceScatterInput, u, kHead), s.rootReduceScatter);
            }
        }
    }
};

} // namespace

void emitSetup(const StepShape &s, StepSink &sink) { Emitter(s, sink).setup(); }
void emitStates(const StepShape &s, StepSink &sink) { Emitter(s, sink).states(); }
void emitStep(const StepShape &s, StepSink &sink, bool firstStep) { Emitter(s, sink).step(firstStep); }

// --- PeakTracker -------------------------------------------------------------------------------

void PeakTracker::part(StepPart p)
{
    settle();
    part_ = p;
    observe();
}

void PeakTracker::phase(Phase p)
{
    settle();
    phase_ = p;
    observe();
}

void PeakTracker::settle()
{
    if (pending_) {
        pending_ = false;
        observe();
    }
}

void PeakTracker::observe()
{
    Peaks &peaks = stack_.empty() ? peaks_[size_t(part_)] : stack_.back();
    Peak &p = peaks[size_t(phase_)];
    if (total_ > p.total) {
        p.total = total_;
        p.at = live_;
    }
}

void PeakTracker::alloc(const TensorRef &t, double bytes, const std::vector<double> *)
{
    live_[componentOf(t.kind)] += bytes;
    total_ += bytes;
    // Allocations only raise the total: a run of them peaks at its end, observed before the
    // next free or change of context (settle).
    pending_ = true;
}

void PeakTracker::free(const TensorRef &t, double bytes)
{
    settle();
    double &v = live_[componentOf(t.kind)];
    v -= bytes;
    total_ -= bytes;
    if (std::abs(v) < 1e-3)
        v = 0;
}

void PeakTracker::merge(Peak &into, const Peak &p)
{
    if (p.total > into.total)
        into = p;
}

void PeakTracker::repeat(int n, FunctionRef<void(int)> body)
{
    if (n <= 0)
        return;
    if (n == 1) {
        body(0);
        return;
    }
    // Run the first block; every later one is the same block shifted by its net change, so the
    // run peaks in its first block or (when the block adds memory) in its last.
    settle();
    const Breakdown start = live_;
    const StepPart part = part_;
    stack_.push_back(Peaks{});
    body(0);
    settle();
    const Peaks local = stack_.back();
    stack_.pop_back();
    Breakdown delta;
    for (int c = 0; c < kComponentCount; ++c)
        delta.bytes[size_t(c)] = live_.bytes[size_t(c)] - start.bytes[size_t(c)];
    const double grow = delta.total();
    Peaks &parent = stack_.empty() ? peaks_[size_t(part)] : stack_.back();
    for (int p = 0; p < kPhaseCount; ++p) {
        Peak candidate = local[size_t(p)];
        if (candidate.total < 0)
            continue;
        if (grow > 0) {
            for (int c = 0; c < kComponentCount; ++c)
                candidate.at.bytes[size_t(c)] += (n - 1) * delta.bytes[size_t(c)];
            candidate.total += (n - 1) * grow;
        }
        merge(parent[size_t(p)], candidate);
    }
    for (int c = 0; c < kComponentCount; ++c) {
        double &v = live_.bytes[size_t(c)];
        v += (n - 1) * delta.bytes[size_t(c)];
        // What a run allocated and freed again leaves rounding residue, not bytes.
        if (std::abs(v) < 1e-3)
            v = 0;
    }
    total_ = live_.total();
}

Breakdown PeakTracker::runCaptured(FunctionRef<void()> body, Peaks &local)
{
    settle();
    const Breakdown start = live_;
    stack_.push_back(Peaks{});
    body();
    settle();
    local = stack_.back();
    stack_.pop_back();
    Breakdown delta;
    for (int c = 0; c < kComponentCount; ++c)
        delta.bytes[size_t(c)] = live_.bytes[size_t(c)] - start.bytes[size_t(c)];
    return delta;
}

void PeakTracker::block(uint32_t key, FunctionRef<void()> body)
{
    settle();
    const auto it = effects_.find(key);
    Peaks &parent = stack_.empty() ? peaks_[size_t(part_)] : stack_.back();
    if (it == effects_.end()) {
        // Run it once, merge its peaks, and keep them relative to its start.
        const Breakdown start = live_;
        const double startTotal = total_;
        Effect e;
        e.delta = runCaptured(body, e.peaks);
        e.endPhase = phase_;
        Peaks &into = stack_.empty() ? peaks_[size_t(part_)] : stack_.back();
        for (int p = 0; p < kPhaseCount; ++p) {
            Peak &pk = e.peaks[size_t(p)];
            merge(into[size_t(p)], pk);
            if (pk.total < 0)
                continue;
            pk.total -= startTotal;
            for (int c = 0; c < kComponentCount; ++c)
                pk.at.bytes[size_t(c)] -= start.bytes[size_t(c)];
        }
        effects_.emplace(key, e);
        return;
    }
    const Effect &e = it->second;
    for (int p = 0; p < kPhaseCount; ++p) {
        const Peak &rel = e.peaks[size_t(p)];
        if (rel.total < 0)
            continue;
        if (total_ + rel.total > parent[size_t(p)].total) {
            Peak pk;
            pk.total = total_ + rel.total;
            for (int c = 0; c < kComponentCount; ++c)
                pk.at.bytes[size_t(c)] = live_.bytes[size_t(c)] + rel.at.bytes[size_t(c)];
            parent[size_t(p)] = pk;
        }
    }
    for (int c = 0; c < kComponentCount; ++c) {
        double &v = live_.bytes[size_t(c)];
        v += e.delta.bytes[size_t(c)];
        if (std::abs(v) < 1e-3)
            v = 0;
    }
    total_ = live_.total();
    phase_ = e.endPhase;
}

// --- TimelineRecorder ----------------------------------------------------------------------------

TimelineRecorder::TimelineRecorder(StepTimeline &out, int steadyLimit)
    : out_(out), limit_(std::max(1, steadyLimit))
{
    out_.peak_live.fill(0.0);
}

uint64_t TimelineRecorder::key(const TensorRef &t)
{
    return (uint64_t(t.kind) << 56) | (uint64_t(uint16_t(t.unit)) << 40) |
           (uint64_t(uint16_t(t.layer)) << 24) | uint64_t(uint32_t(t.piece) & 0xffffff);
}

void TimelineRecorder::part(StepPart p)
{
    part_ = p;
    out_.marks.push_back({int(out_.events.size()), part_, phase_});
}

void TimelineRecorder::phase(Phase p)
{
    if (p == phase_ && !out_.marks.empty() && out_.marks.back().part == part_)
        return;
    phase_ = p;
    out_.marks.push_back({int(out_.events.size()), part_, phase_});
}

void TimelineRecorder::alloc(const TensorRef &t, double bytes, const std::vector<double> *parts)
{
    const int first = int(out_.tensors.size());
    auto add = [&](double size) {
        out_.tensors.push_back({t.kind, phase_, part_, int16_t(t.unit), int16_t(t.layer), size,
                                int(out_.events.size())});
        out_.events.push_back({int(out_.tensors.size()) - 1, true});
        live_ += size;
        double &peak = out_.peak_live[size_t(part_)];
        peak = std::max(peak, live_);
    };
    double sum = 0;
    if (parts)
        for (double p : *parts)
            sum += std::max(0.0, p);
    if (!parts || !(sum > 0)) {
        add(bytes);
    } else {
        // The group as its tensors, scaled to add up to `bytes` exactly.
        double used = 0;
        const size_t n = parts->size();
        for (size_t i = 0; i < n; ++i) {
            const double b = i + 1 < n ? bytes * std::max(0.0, (*parts)[i]) / sum : bytes - used;
            used += b;
            if (b > 0 || i + 1 == n)
                add(std::max(0.0, b));
        }
    }
    open_.put(key(t), first, int(out_.tensors.size()) - first);
}

void TimelineRecorder::free(const TensorRef &t, double)
{
    std::pair<int, int> open;
    if (!open_.take(key(t), open)) {
        ++out_.unmatched_frees;
        return;
    }
    for (int i = 0; i < open.second; ++i) {
        const int idx = open.first + i;
        out_.tensors[size_t(idx)].free_event = int(out_.events.size());
        out_.events.push_back({idx, false});
        live_ -= out_.tensors[size_t(idx)].bytes;
        double &peak = out_.peak_live[size_t(part_)];
        peak = std::max(peak, live_);
    }
}

size_t TimelineRecorder::OpenTensors::home(uint64_t key) const
{
    // Fibonacci hashing: the product's top bits, which every bit of the key reaches.
    return size_t((key * 0x9e3779b97f4a7c15ull) >> shift_);
}

void TimelineRecorder::OpenTensors::put(uint64_t key, int first, int count)
{
    if (2 * (used_ + 1) > slots_.size()) {
        std::vector<Slot> old(std::max<size_t>(64, 2 * slots_.size()));
        old.swap(slots_);
        used_ = 0;
        shift_ = 64 - std::countr_zero(slots_.size());
        for (const Slot &o : old) {
            if (o.count > 0)
                put(o.key, o.first, o.count);
        }
    }
    for (size_t i = home(key);; i = (i + 1) & (slots_.size() - 1)) {
        Slot &s = slots_[i];
        if (s.count == 0 || s.key == key) {
            used_ += s.count == 0 ? 1 : 0;
            s = {key, first, count};
            return;
        }
    }
}

bool TimelineRecorder::OpenTensors::take(uint64_t key, std::pair<int, int> &out)
{
    if (slots_.empty())
        return false;
    const size_t mask = slots_.size() - 1;
    size_t i = home(key);
    while (slots_[i].count > 0 && slots_[i].key != key)
        i = (i + 1) & mask;
    if (slots_[i].count == 0)
        return false;
    out = {slots_[i].first, slots_[i].count};
    // Backward-shift deletion: later slots of the probe run move into the hole when their home
    // does not lie cyclically between the hole and them.
    size_t hole = i;
    for (size_t j = (i + 1) & mask; slots_[j].count > 0; j = (j + 1) & mask) {
        const size_t h = home(slots_[j].key);
        const bool stays = hole <= j ? (hole < h && h <= j) : (hole < h || h <= j);
        if (!stays) {
            slots_[hole] = slots_[j];
            hole = j;
        }
    }
    slots_[hole] = Slot{};
    --used_;
    return true;
}

void TimelineRecorder::repeat(int n, FunctionRef<void(int)> body)
{
    const int begin = int(out_.events.size());
    int unit = -1; // events of each run; -2 once two runs differ
    ++depth_;
    for (int i = 0; i < n; ++i) {
        const int before = int(out_.events.size());
        body(i);
        const int listed = int(out_.events.size()) - before;
        unit = unit == -1 ? listed : (unit == listed ? unit : -2);
    }
    --depth_;
    if (depth_ == 0 && n >= 2 && unit > 0)
        out_.repeats.push_back({begin, unit, n});
}

double StepTimeline::peakLive(StepPart part) const
{
    double live = 0, peak = 0;
    size_t mark = 0;
    StepPart current = StepPart::Setup;
    for (size_t e = 0; e < events.size(); ++e) {
        while (mark < marks.size() && size_t(marks[mark].event) <= e) {
            current = marks[mark].part;
            ++mark;
        }
        const TimelineTensor &t = tensors[size_t(events[e].tensor)];
        live += events[e].alloc ? t.bytes : -t.bytes;
        if (current == part)
            peak = std::max(peak, live);
    }
    return peak;
}

} // namespace shardscope
