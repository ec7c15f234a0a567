// The memory engine: per-rank peak memory of one steady-state training step.
//
// Activations are derived op by op from what each operation saves for backward (not from a
// constant), following the framework profile's switches:
//  - pytorch: Hugging Face LlamaDecoderLayer under eager PyTorch. LlamaRMSNorm saves an fp32
//    copy of its input and the normalized tensor; q/k/v after RoPE, the attention output and
//    the log-sum-exp are saved by SDPA's flash kernel (its output is the o_proj input, BSHD
//    layout, no copy); SwiGLU saves gate, up, silu(gate) and their product. Under autocast
//    (fp32 parameters, bf16 compute) the residual stream is fp32 and every linear saves its
//    own bf16 cast of its input; compute-dtype weight copies are cached for the whole forward.
//    Checked against H200 measurements of TinyLlama-1.1B (shared/calibration).
//  - megatron: fused RMSNorm (saves its input), fused SwiGLU (saves fc1 output), TE flash
//    attention; Korthikanti et al. 2022 (arXiv 2205.05198) for how TP and SP divide them.
// Model states follow ZeRO (Rajbhandari et al. 2020) for the sharding stages, with the
// framework's gradient layout (set_to_none grads, DDP bucket copies, Megatron fp32 main_grad).
#include "memory.h"

#include "adapters.h"
#include "allocator.h"
#include "attention.h"
#include "catalog.h"
#include "distoptimizer.h"
#include "framework.h"
#include "gradclip.h"
#include "hpz.h"
#include "layers.h"
#include "moe.h"
#include "optimizers.h"
#include "reuseparam.h"
#include "swapattention.h"
#include "timeline.h"
#include "units.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cassert>
#include <cmath>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace shardscope {

std::string_view componentKey(Component c)
{
    switch (c) {
    case Component::Parameters: return "parameters";
    case Component::Gradients: return "gradients";
    case Component::MasterWeights: return "master_weights";
    case Component::OptimizerStates: return "optimizer_states";
    case Component::Activations: return "activations";
    case Component::LogitsAndLoss: return "logits_and_loss";
    case Component::CommunicationBuffers: return "communication_buffers";
    case Component::Transient: return "transient";
    case Component::Count: break;
    }
    return "";
}

std::string_view componentLabel(Component c)
{
    switch (c) {
    case Component::Parameters: return "Parameters";
    case Component::Gradients: return "Gradients";
    case Component::MasterWeights: return "Master weights";
    case Component::OptimizerStates: return "Optimizer states";
    case Component::Activations: return "Activations";
    case Component::LogitsAndLoss: return "Logits and loss";
    case Component::CommunicationBuffers: return "Communication buffers";
    case Component::Transient: return "Transient";
    case Component::Count: break;
    }
    return "";
}

std::string_view phaseKey(Phase p)
{
    switch (p) {
    case Phase::Forward: return "forward";
    case Phase::Backward: return "backward";
    case Phase::OptimizerStep: return "optimizer_step";
    case Phase::Count: break;
    }
    return "";
}

Phase phaseFromKey(std::string_view key)
{
    for (int p = 0; p < kPhaseCount; ++p) {
        if (phaseKey(Phase(p)) == key)
            return Phase(p);
    }
    return Phase::Count;
}

namespace {

/// Derived sizes shared by every rank of a plan.
struct Context
{
    /// The plan with its vocabulary padded as the framework pads it (framework.h).
    const PaddedVocabPlan padded;
    const Plan &plan;
    /// The plan's own (unpadded) vocabulary.
    int64_t unpaddedVocab;
    const DeviceProfile &dev;
    const FrameworkProfile &fw;
    /// What the padded model and the layout's model-parallel degrees and layer layout give
    /// (core/layers.h), kept per thread across the layouts of a search.
    const std::shared_ptr<const RankShape> shape;
    const ParameterCounts &pc;
    int tp, pp, cp, dp, ep, etp, v;
    int m;              ///< micro-batches per step per DP rank
    double c;           ///< compute dtype bytes
    double r;           ///< residual stream dtype bytes
    bool autocast;      ///< parameters stored above the compute dtype, cast by torch.autocast
    bool fsdp;          ///< parameters sharded and gathered per layer
    double shard;       ///< ranks the dense model states are sharded over (dp * cp; HSDP dp_shard * cp)
    double expertShard; ///< ranks expert states are sharded over (dp * cp * tp / (ep * etp))
    double tokens;      ///< tokens per micro-batch on one rank (s * b / cp)
    double seqTokens;   ///< tokens per sample on one rank (s / cp)
    double keyTokens;   ///< keys a query meets in one attention call (s / the ring's degree)
    /// The decoder layers of each model chunk of each stage (core/layers.h).
    const StageLayout &layout;
    /// One layer of each kind: its linears (core/layers.h) and this rank's share of them.
    const LayerSpec &denseSpec, &moeSpec;
    const RankLayer &denseRank, &moeRank;
    const std::vector<LayerMix> &mixes;
    int layersOf(int stage) const { return layout.stage(stage); }
    int largestChunkOf(int stage) const
    {
        int n = 0;
        for (int k = 0; k < layout.chunks; ++k)
            n = std::max(n, layout.chunk(stage, k));
        return n;
    }
    double bParams, bGrads, bMaster, bState;
    int nStates;
    OptimizerImpl optImpl;
    bool masterSeparate;
    double bAdapter; ///< LoRA / DoRA adapter dtype bytes (plan, else the framework's default)
    Dropout dropout;  ///< the plan's, else the profile's
    ActivationEnv env; ///< what the saved tensors look like (core/attention.h)
    bool fusedSwiglu = false; ///< SwiGLU as one kernel (memory.fused_swiglu, else the profile's)

    /// `shapes`: where the RankShape is kept (core/layers.h), else the thread's own keep.
    Context(const Plan &p, const DeviceProfile &d, const FrameworkProfile &f, RankShapeCache *shapes = nullptr)
        : padded(p, f.vocab_divisible_by), plan(padded.get()), unpaddedVocab(p.model.vocab), dev(d), fw(f),
          shape(shapes ? shapes->of(plan.model, plan.parallel) : rankShape(plan.model, plan.parallel)),
          pc(shape->counts), layout(shape->layout),
          denseSpec(shape->dense), moeSpec(shape->moe), denseRank(shape->denseRank), moeRank(shape->moeRank),
          mixes(shape->mixes)
    {
        const auto &pa = p.parallel;
        tp = pa.tp;
        pp = pa.pp;
        cp = pa.cp;
        dp = pa.dp;
        ep = pa.ep;
        etp = pa.expertTp();
        v = pa.pp_schedule == PpSchedule::Interleaved ? pa.virtual_stages : 1;
        m = p.training.grad_accum;
        c = bytesOf(p.precision.compute);
        fsdp = pa.sharding == Sharding::Full;
        autocast = bytesOf(p.precision.params) > c && !fsdp && f.autocast_weight_cache;
        r = (autocast && f.autocast_input_casts) ? bytesOf(p.precision.params) : c;
        shard = double(pa.shardGroup());
        expertShard = std::max(1.0, pa.expertDp());
        seqTokens = double(p.training.seq_len) / cp;
        keyTokens = double(p.training.seq_len) / pa.ringDegree();
        tokens = seqTokens * p.training.micro_batch;
        bParams = bytesOf(p.precision.params);
        bGrads = mainGradDtype(p, f) != DType::None ? bytesOf(mainGradDtype(p, f))
                                                   : bytesOf(p.precision.grads);
        masterSeparate = p.precision.master_weights != DType::None &&
                         p.precision.master_weights != p.precision.params;
        bMaster = masterSeparate ? bytesOf(p.precision.master_weights) : 0.0;
        bState = bytesOf(p.precision.optimizer_state);
        nStates = optimizerStateCount(p.precision.optimizer);
        optImpl = p.precision.optimizer_impl == OptimizerImpl::Default ? f.default_optimizer_impl
                                                                        : p.precision.optimizer_impl;
        bAdapter = adapterBytes(p, f);
        dropout = dropoutOf(p, f);
        env.c = c;
        env.r = r;
        env.upcastNorm = f.norm == "upcast";
        env.casts = autocast && f.autocast_input_casts;
        env.flash = p.memory.attention == Attention::Flash;
        env.tp = tp;
        env.sp = pa.sp;
        env.seqTokens = keyTokens;
        env.attentionDropout = dropout.attention;
        env.fusedSoftmax = f.fused_softmax;
        env.flashOutputCopy = env.flash && flashOutputCopyOf(p, f);
        env.kvRepeated = ulyssesRepeatsKv(p, f);
        env.flashStatBytes = flashStatBytes(d.vendor);
        const RopeSaves rope = ropeSavesOf(p, f, d.vendor);
        env.ropePerLayer = rope == RopeSaves::PerLayer || rope == RopeSaves::KeepsInput;
        env.ropeKeepsInput = rope == RopeSaves::KeepsInput;
        env.ropeRowsPerToken = 1.0 / p.training.micro_batch;
        fusedSwiglu = fusedSwigluOf(p, f);
    }
    /// Decoder layers of `stage` by kind (interleaved chunks round-robin).
    LayerMix stageMix(int stage) const { return mixes[size_t(stage)]; }
};

/// Elements of the largest parameter tensor a rank of `stage` holds: Megatron-Core's fused
/// modules on that stage (core/gradclip.h) under a Megatron-style framework, else the model's
/// largest tensor split by tp.
double largestStageTensor(const Context &x, int stage)
{
    if (x.fw.megatron_process_groups)
        return largestMegatronTensor(x.plan, stage, *x.shape);
    return double(x.pc.largest_tensor) / x.tp;
}

/// Everything one kind of rank holds, in bytes, before it is arranged into phases.
struct Quantities
{
    // parameter elements on this rank (before sharding)
    double denseParams = 0, expertParams = 0, layerParams = 0, rootParams = 0;
    double matmulParams = 0; ///< weights autocast casts (all but norms and the embedding)
    double headMatmulParams = 0; ///< the LM head's share of matmulParams
    // model states
    double hpzSecondary = 0; ///< DeepSpeed ZeRO++ hpZ's secondary partitions (in params)
    double swapLayer = 0;    ///< swap-attention: a layer's saved bytes on the host between passes
    double params = 0, computeCopies = 0, grads = 0, gradsPerLayer = 0, gradsHead = 0,
           gradsEmbedding = 0;
    double master = 0, states = 0, optTemp = 0;
    /// Without apex (core/gradclip.h): the gradient clip's scaled copy of the largest gradient,
    /// and without the distributed optimizer the largest master parameter's copy into the model.
    double clipTemp = 0, paramCopyTemp = 0;
    /// MindSpeed reuse-fp32-param's conversion of the master buffer (core/reuseparam.h).
    double reuseTemp = 0;
    /// Megatron: every chunk's last received input and its gradient, kept after the step.
    double keptInputs = 0;
    int keptInputChunks = 0; ///< the stage's chunks that receive their input
    // communication
    double rootGradsHead = 0;  ///< FSDP: unsharded head gradient held until the root's reduce-scatter
    double ddpBuckets = 0, fsdpForward = 0, fsdpBackward = 0, rootGathered = 0, p2p = 0,
           reduceBucket = 0;
    /// Sequence parallelism's all-gathered linear input (tokens x hidden, compute dtype): kept
    /// for the run in Megatron's global memory buffer (spGatherKept), else made per GEMM.
    double spGather = 0;
    bool spGatherKept = false;
    double fsdpLayerBytes = 0;    ///< one gathered layer (compute dtype; QLoRA: k-bit storage)
    double fsdpLayerTrained = 0;  ///< trained elements of one layer (unsharded gradients)
    double fsdpRootTrained = 0;   ///< trained elements of the root module
    // activations, per micro-batch
    double actLayer = 0;     ///< saved by one layer (after recompute policy)
    double actLayerFull = 0; ///< one layer without recompute (the recompute working set)
    double actLayerMeanFull = 0; ///< the stage's mean layer without recompute
    double actLayerCheckpointed = 0; ///< a recomputed layer's (its input) under full recompute
    int recomputeGroup = 1;  ///< layers recomputed at once (Megatron's uniform method)
    double actFinal = 0;     ///< final norm and LM-head input (last stage)
    double actFinalForwardOnly = 0; ///< final-norm output alive only until forward returns
    /// The embedding's dropout mask (first stage): Megatron-Core's LanguageModelEmbedding and
    /// GPT-2-style models apply the hidden dropout to the embedding's output too.
    double actEmbedding = 0;
    double inflight = 1;     ///< micro-batches whose activations a stage holds (layer units)
    double actTotal = 0;
    // logits
    double logitsForward = 0, logitsBackward = 0;
    // transients
    double fwdTransient = 0, bwdTransient = 0;
    double pagedHost = 0; ///< paged optimizer states, host-backed
    // Megatron-Core's contiguous buffers under the distributed optimizer (core/distoptimizer.h)
    bool buffers = false;
    StageBuffers buffer;
    double bufferPadding = 0; ///< padding elements of param_data / grad_data
    double shardExcess = 0;   ///< the fullest rank's optimizer shard above an even split
};

/// The model chunks in flight on a stage whose micro-batches in flight are `inflight` (in units
/// of the stage's layers): inflight x v, a whole number.
double chunksInFlight(const Context &x, double inflight) { return std::floor(inflight * x.v + 1e-9); }

/// Whether the chunks of a stage keep different shares of their layers' activations: MindSpeed's
/// block recompute per pipeline rank over several model chunks (StageLayout::chunkBlockRecomputed).
bool chunksDifferInRecompute(const Context &x)
{
    const MemoryOptions &mo = x.plan.memory;
    return mo.recompute_layers_per_pp_rank && mo.recompute == Recompute::Full &&
           mo.recompute_method == RecomputeMethod::Block && x.v > 1;
}

/// Under chunksDifferInRecompute, the mean of what one layer of chunk c keeps: its first
/// recomputed layers their input, the rest everything.
double chunkLayerActivations(const Context &x, double checkpointed, double full, int stage, int c)
{
    const int layers = x.layout.chunk(stage, c);
    if (layers <= 0)
        return 0.0;
    const int r = x.layout.chunkBlockRecomputed(stage, c, x.plan.memory.recompute_num_layers, true);
    return (r * checkpointed + (layers - r) * full) / layers;
}

/// The micro-batches of chunk c a stage holds when the interleaved schedule's warm-up ends
/// (its first backward): forward k runs chunk (k / pp) mod v, and (pp - stage - 1) x 2 +
/// (v - 1) x pp + 1 forwards (at most every micro-batch's) run before it.
int warmupUnitsOfChunk(const Context &x, int stage, int c)
{
    const int pp = std::max(1, x.pp);
    const long long cycle = 1LL * pp * x.v;
    const long long k =
        std::min<long long>((x.pp - stage - 1) * 2LL + (x.v - 1LL) * x.pp + 1, 1LL * x.m * x.v);
    return int((k / cycle) * pp + std::clamp<long long>(k % cycle - 1LL * c * pp, 0, pp));
}

/// What of one decoder layer autograd trains, for what its operations save.
struct LayerTraining
{
    bool recorded = true; ///< autograd records the layer at all (some input or weight needs grad)
    bool inputRequiresGrad = true; ///< the layer's input needs a gradient (something below trains)
    bool norms = true, attention = true, ffn = true; ///< base weights trained
    LayerKind kind = LayerKind::Dense; ///< dense FFN or MoE block
    uint8_t adapters = 0; ///< LoRA / DoRA targets adapted in this layer
    bool operator==(const LayerTraining &) const = default;
};

LayerTraining fullyTrained() { return {}; }

/// Bytes per token that one adapted linear saves for its adapter's backward (PEFT lora.Linear):
/// lora_A saves its input cast to the adapter dtype (nothing extra when the dtype is the
/// input's: the input tensor itself is saved, see adaptedGroup), or with dropout its dropped
/// copy and the mask; lora_B saves lora_A's output (rank wide); DoRA also saves the base
/// result and the LoRA result it scales by the magnitude. `in` / `out` are this rank's widths.
double adapterSavedPerToken(const Context &x, double in, double out)
{
    const LoraOptions &lo = x.plan.training.method.lora;
    double b = lo.rank * x.bAdapter;
    if (lo.dropout > 0)
        b += in * (x.bAdapter + 1.0);
    else if (x.bAdapter != x.c)
        b += in * x.bAdapter;
    if (x.plan.training.method.method == TrainingMethod::DoRA)
        b += 2.0 * out * x.c;
    return b;
}

/// Saved activation bytes of one decoder layer of `kind` for one micro-batch under the plan's
/// recompute; `fullLayer`: what it saves without recompute (the recompute working set).
double layerActivationBytes(const Context &x, LayerKind kind, double *attentionScores,
                            const LayerTraining &lt = fullyTrained(), double *attentionSide = nullptr,
                            double *fullLayer = nullptr)
{
    const auto &mo = x.plan.model;
    const auto &pa = x.plan.parallel;
    const double c = x.c, r = x.r;
    const double t = x.tp;
    if (!lt.recorded) {
        for (double *out : {attentionScores, attentionSide, fullLayer})
            if (out)
                *out = 0.0;
        return 0.0;
    }
    const double hSp = double(mo.hidden) / (pa.sp ? t : 1.0); // norm/residual region
    const double h = double(mo.hidden);
    const double q = double(mo.qDim()) / t;
    const double kv = double(mo.kvDim()) / t;
    const bool casts = x.env.casts;
    const bool moe = kind == LayerKind::Moe;
    const MoeRouting route = moeRouting(mo, pa);
    const double f = moe ? route.expertWidth : double(mo.ffn_hidden) / t;
    // Adapters reading one input: each saves what adapterSavedPerToken says; when they read the
    // input tensor itself (same dtype, no dropout) and no trained weight keeps it, it is held
    // once for them.
    const bool sharedInput = x.bAdapter == c && x.plan.training.method.lora.dropout == 0;
    auto adaptedGroup = [&](std::initializer_list<std::pair<uint8_t, double>> targets,
                            bool inputSavedAnyway, double in) {
        double b = 0;
        bool any = false;
        for (const auto &[target, out] : targets) {
            if (lt.adapters & target) {
                any = true;
                b += adapterSavedPerToken(x, in, out);
            }
        }
        if (any && sharedInput && !inputSavedAnyway)
            b += c * in;
        return b;
    };

    // The pre-norms (core/attention.cpp: RMSNorm or LayerNorm as the framework runs them).
    const double norm = normSavedPerToken(x.env, mo, hSp, lt.norms, hSp / double(mo.hidden));
    // The first norm of a layer whose input needs no gradient saves only what its weight's
    // gradient needs (pow and rsqrt of an input that needs none are not recorded).
    const double firstNorm = lt.inputRequiresGrad ? norm : (lt.norms ? r * hSp : 0.0);
    double perToken = firstNorm + norm;
    // Attention: the projections' input, what the kind saves (latents, QK norms, q/k/v, the
    // output), a frozen linear keeping its weight rather than its input.
    const AttentionSaved att = attentionSaved(x.env, mo, lt.attention);
    perToken += att.inputs + att.core;
    // On Megatron-Core's fused modules (adaptersOnFusedModules) one adapter reads the input of
    // linear_qkv / linear_fc1 for all of their outputs.
    const bool fusedAdapters = lt.adapters != 0 && adaptersOnFusedModules(x.plan);
    if (fusedAdapters)
        perToken += adaptedGroup({{kTargetQ, q + 2.0 * kv}}, lt.attention, h);
    else
        perToken += adaptedGroup({{kTargetQ, q}, {kTargetK, kv}, {kTargetV, kv}}, lt.attention, h);
    if (lt.ffn)
        perToken += (casts ? 2.0 : 1.0) * c * hSp; // FFN input(s): router, shared and routed experts
    const double ffnInputAdapters =
        fusedAdapters
            ? adaptedGroup({{kTargetUp, (mo.ffn == FfnKind::SwiGLU ? 2.0 : 1.0) * f}}, lt.ffn, h)
            : adaptedGroup({{kTargetGate, f}, {kTargetUp, f}}, lt.ffn, h);
    const double scores = att.scores;
    perToken += adaptedGroup({{kTargetO, h}}, true, q); // the attention output is saved anyway
    // What swap-attention's modules (input norm, attention, post-attention norm) save.
    // (everything so far but the FFN's input, which the MLP saves).
    double side = perToken - (lt.ffn ? (casts ? 2.0 : 1.0) * c * hSp : 0.0);
    // Hidden dropout after attention and after the FFN: a one-byte mask each.
    if (x.dropout.hidden > 0)
        perToken += 2.0 * hSp;
    // FFN. The down projection's input (the activation's output) is saved only for the down
    // weight's gradient, or for its adapter.
    auto ffnSaved = [&](double width) {
        double b;
        if (mo.ffn != FfnKind::SwiGLU)
            b = 2.0 * c * width; // fc1 output (saved by GELU / ReLU^2), its output (saved by fc2)
        else if (x.fusedSwiglu)
            b = 3.0 * c * width; // fc1 output [gate|up], swiglu output
        else
            b = 4.0 * c * width; // gate, up, silu(gate), silu(gate) * up
        // The activation's output is kept only by a trained down projection, and not at all
        // when MindSpeed recomputes the activation function.
        if (!lt.ffn || x.plan.memory.recompute_activation_function)
            b -= c * width;
        return b;
    };
    double ffn = ffnSaved(f) + ffnInputAdapters + adaptedGroup({{kTargetDown, h}}, lt.ffn, f);
    if (moe) {
        // Each routed copy: the permuted hidden state (the expert's input), the expert's
        // intermediates and its output (saved by the multiply with the routing probability);
        // the router's fp32 probabilities per token entering the block (router_fp32: also the
        // fp32 copy of its input that F.linear saves); the shared experts like a dense FFN
        // (Qwen2-MoE's gate saves their output for the sigmoid product).
        const MoeShape &e = mo.moe;
        ffn = route.copies * (ffn + 2.0 * c * h);
        ffn += route.tokensIn * (4.0 * e.experts + (e.router_fp32 ? 4.0 * h : 0.0));
        if (e.shared_experts > 0)
            ffn += ffnSaved(route.sharedWidth) + (e.shared_expert_gate ? c * hSp : 0.0);
    }
    perToken += ffn;
    // MindSpeed's norm recompute: the norms' outputs (the attention's and the FFN's input) are
    // recomputed from the norms' saved inputs rather than kept.
    if (x.plan.memory.recompute_norm && !casts) {
        perToken -= (lt.attention ? att.inputs : 0.0) + (lt.ffn ? c * hSp : 0.0);
        side -= lt.attention ? att.inputs : 0.0;
    }

    const Recompute rc = x.plan.memory.recompute;
    if (attentionSide)
        *attentionSide = (side + (rc == Recompute::None ? scores : 0.0)) * x.tokens;
    if (attentionScores)
        *attentionScores = scores * x.tokens;
    const double withoutRecompute = (perToken + scores) * x.tokens;
    if (fullLayer)
        *fullLayer = withoutRecompute;
    if (rc == Recompute::None)
        return withoutRecompute;
    if (rc == Recompute::Selective)
        return perToken * x.tokens; // attention core recomputed: no score matrices kept
    // Full: one checkpoint per layer keeps only the layer input (residual dtype).
    return r * hSp * x.tokens;
}

/// Whether the embedding's weights train: fully trained models, a freeze that trains it, an
/// adapter method's modules_to_save.
bool embeddingTrains(const MethodOptions &mo)
{
    return mo.method == TrainingMethod::Full ||
           (mo.method == TrainingMethod::Freeze && (mo.freeze.parts & kPartEmbedding)) ||
           (mo.usesAdapters() && (mo.lora.modules_to_save & kPartEmbedding));
}

/// How each decoder layer of `stage` is trained. Adapters: every layer's base frozen, its
/// targets adapted. Freezing: the last layers whole, the named parts in every layer; a frozen
/// layer below every trained one records nothing unless gradient checkpointing is on (then the
/// embedding output is made to require grad, as Hugging Face's enable_input_require_grads does,
/// and every layer records).

std::vector<LayerTraining> layerTraining(const Context &x, int stage)
{
    const Plan &p = x.plan;
    const MethodOptions &mo = p.training.method;
    const int layers = p.model.layers;
    const bool checkpointed = p.memory.recompute != Recompute::None;
    std::vector<LayerTraining> out;
    bool below = mo.method != TrainingMethod::Full && embeddingTrains(mo);
    for (int layer = 0; layer < layers; ++layer) {
        LayerTraining lt;
        lt.kind = layerKind(p.model, layer);
        lt.inputRequiresGrad = below || checkpointed;
        if (mo.usesAdapters()) {
            lt.norms = lt.attention = lt.ffn = false;
            lt.adapters = adaptedTargets(x.plan);
            below = true;
        } else {
            const bool whole = layer >= layers - mo.freeze.last_layers;
            const uint8_t parts = mo.freeze.parts;
            lt.norms = whole || (parts & kPartNorms);
            lt.attention = whole || (parts & kPartAttention);
            lt.ffn = whole || (parts & (p.model.moeLayer(layer) ? kPartExperts : kPartFfn));
            const bool any = lt.norms || lt.attention || lt.ffn;
            lt.recorded = any || below || checkpointed;
            below = below || any;
        }
        if (stageOfLayer(p.parallel, layers, layer) == stage)
            out.push_back(lt);
    }
    return out;
}

/// The first part of computeQuantities: the parameters, model states and communication buffers
/// of `stage`'s rank; `se`, what it trains (LoRA, QLoRA, freezing).
void computeStates(const Context &x, int stage, Quantities &qn, StageElements &se)
{
    const auto &pa = x.plan.parallel;
    const auto &mo = x.plan.model;
    const auto &off = x.plan.memory.offload;
    const bool first = stage == 0;
    const bool last = stage == x.pp - 1;
    const double t = x.tp;
    const int L = x.layersOf(stage);

    // --- parameters held by this rank (elements) ------------------------------------------
    // Layers by kind (core/layers.h): attention, norms, the dense FFN or the router and shared
    // experts split by tp; routed experts by etp, spread over ep.
    const LayerMix mix = x.stageMix(stage);
    const RankLayer &dl = x.denseRank;
    const RankLayer &ml = x.moeRank;
    double root = 0, rootMatmul = 0;
    if (first) {
        root += double(x.pc.embedding) / t;
        root += double(x.pc.position); // a learned position table is replicated across TP
    }
    double mtpDense = 0, mtpExperts = 0, mtpMatmul = 0;
    if (last) {
        root += double(x.pc.final_norm);
        // Tied embeddings are one tensor unless the head sits on another stage; multi-token
        // prediction on a later stage needs the embedding there too (Megatron shares it).
        if (!mo.tied_embeddings) {
            root += double(x.pc.lm_head) / t;
            rootMatmul += double(x.pc.lm_head) / t;
        } else if (x.pp > 1) {
            root += double(x.pc.embedding) / t;
            rootMatmul += double(x.pc.embedding) / t;
        } else {
            rootMatmul += double(x.pc.embedding) / t;
        }
        if (mo.mtp_layers > 0) {
            if (x.pp > 1 && !mo.tied_embeddings)
                root += double(x.pc.embedding) / t;
            // Each module: enorm, hnorm, the 2h -> h projection (column-parallel), a layer of
            // the last layer's kind and its final norm (core/layers.h).
            const RankLayer module = mtpModuleOnRank(mo, x.tp, x.plan.parallel.ep, x.plan.parallel.expertTp());
            mtpDense = mo.mtp_layers * module.dense();
            mtpExperts = mo.mtp_layers * module.experts;
            mtpMatmul = mo.mtp_layers * module.matmul;
        }
    }
    const double layersDense = dl.dense() * mix.dense + ml.dense() * mix.moe;
    const double layersExperts = ml.experts * mix.moe;
    qn.layerParams = (layersDense + layersExperts) / std::max(1, L); // mean over the stage
    qn.rootParams = root + mtpDense + mtpExperts;
    qn.denseParams = layersDense + root + mtpDense;
    qn.expertParams = layersExperts + mtpExperts;
    const double total = qn.denseParams + qn.expertParams;
    qn.matmulParams = dl.matmul * mix.dense + ml.matmul * mix.moe + rootMatmul + mtpMatmul;
    // The largest layer of the stage: what FSDP gathers at once.
    const double largestLayer = std::max(mix.dense > 0 ? dl.total() : 0.0, mix.moe > 0 ? ml.total() : 0.0);

    const Sharding sh = pa.sharding;
    auto sharded = [&](bool isSharded) {
        return isSharded ? qn.denseParams / x.shard + qn.expertParams / x.expertShard : total;
    };

    // --- model states -----------------------------------------------------------------------
    qn.params = off.params ? 0.0 : sharded(sh == Sharding::Full) * x.bParams;
    qn.headMatmulParams = rootMatmul;
    // Autocast's compute-dtype casts of the weights (when they live: core/timeline.cpp).
    if (x.autocast)
        qn.computeCopies = qn.matmulParams * x.c;
    const bool gradsSharded = sh == Sharding::Grads || sh == Sharding::Full;
    qn.grads = off.grads ? 0.0 : sharded(gradsSharded) * x.bGrads;
    qn.gradsPerLayer = qn.grads * (qn.layerParams / std::max(1.0, total));
    qn.gradsEmbedding = first ? qn.grads * (double(x.pc.embedding) / t / std::max(1.0, total)) : 0.0;
    qn.gradsHead = last ? qn.grads * ((qn.rootParams - (first ? double(x.pc.embedding) / t : 0.0)) /
                                      std::max(1.0, total))
                        : 0.0;
    const bool optSharded = sh != Sharding::None;
    if (!off.optimizer) {
        qn.master = sharded(optSharded) * x.bMaster;
        qn.states = sharded(optSharded) * x.bState * x.nStates;
        const double optElems = sharded(optSharded);
        // The optimizer works on the master copy when there is one, else on the parameters.
        const double workBytes = x.masterSeparate ? x.bMaster : std::max(x.bState, x.bParams);
        switch (x.optImpl) {
        case OptimizerImpl::Foreach:
            // Adam: _foreach_sqrt(exp_avg_sq) materializes one list as large as the states;
            // SGD / Lion: one update list as large as the parameters worked on.
            qn.optTemp = optElems * (x.nStates >= 2 ? x.bState : workBytes);
            break;
        case OptimizerImpl::ForLoop:
            // One tensor at a time: the largest this rank updates (its stage's, in Megatron's
            // fused layout under a Megatron-style framework; its shard of it at most).
            qn.optTemp = 2.0 * std::min(largestStageTensor(x, stage), optElems) * workBytes;
            break;
        case OptimizerImpl::Fused:
        case OptimizerImpl::Default:
            qn.optTemp = 0;
            break;
        }
    }

    // --- training method: what is trained and how the rest is stored (core/adapters.cpp) ---
    const MethodOptions &method = x.plan.training.method;
    const bool partial = method.method != TrainingMethod::Full;
    double trainedGradBytes = 0; // this rank's trainable gradients before sharding
    if (partial) {
        se = stageElements(x.plan, stage);
        auto onRank = [&](bool split, double dense, double expert) {
            return split ? dense / x.shard + expert / x.expertShard : dense + expert;
        };
        // Frozen weights stay in their storage dtype (QLoRA: k-bit linears with their
        // constants, the rest upcast to fp32); trained ones in the params dtype; adapters in
        // theirs. FSDP shards them all.
        const double plainFrozen = se.frozenDense - se.quantizedDense - se.upcastFrozen;
        const double denseBytes = plainFrozen * x.bParams + se.upcastFrozen * 4.0 + se.quantizedBytes +
                                  se.trainedDense * x.bParams + se.adapterDense * x.bAdapter;
        const double expertBytes = (se.frozenExpert - se.quantizedExpert) * x.bParams +
                                   se.quantizedBytesExpert + se.trainedExpert * x.bParams +
                                   se.adapterExpert * x.bAdapter;
        qn.params = off.params ? 0.0 : onRank(x.fsdp, denseBytes, expertBytes);
        // Gradients, master weights and optimizer states exist only for what is trained. A
        // framework's main-gradient buffer (Megatron's DDP) holds the adapters' gradients too,
        // in its dtype; otherwise they are in the adapters'.
        const double bAdapterGrad =
            mainGradDtype(x.plan, x.fw) != DType::None ? x.bGrads : x.bAdapter;
        const double gDense = se.trainedDense * x.bGrads + se.adapterDense * bAdapterGrad;
        const double gExpert = se.trainedExpert * x.bGrads + se.adapterExpert * bAdapterGrad;
        trainedGradBytes = gDense + gExpert;
        qn.grads = off.grads ? 0.0 : onRank(gradsSharded, gDense, gExpert);
        const double trained = std::max(1.0, se.trained());
        qn.gradsPerLayer = qn.grads * se.trainedPerLayer / trained;
        qn.gradsEmbedding = qn.grads * se.trainedEmbedding / trained;
        qn.gradsHead = qn.grads * se.trainedHead / trained;
        qn.master = qn.states = qn.optTemp = 0;
        if (!off.optimizer) {
            const DType mw = x.plan.precision.master_weights;
            // An adapter has its own master copy when the master dtype differs from its own
            // (MindSpeed-LLM's bf16 adapters under the distributed optimizer).
            const double adapterMaster = mw != DType::None && bytesOf(mw) != x.bAdapter ? bytesOf(mw) : 0.0;
            qn.master = onRank(optSharded, se.trainedDense * x.bMaster + se.adapterDense * adapterMaster,
                               se.trainedExpert * x.bMaster + se.adapterExpert * adapterMaster);
            const double optElems = onRank(optSharded, se.trainedDense + se.adapterDense,
                                           se.trainedExpert + se.adapterExpert);
            qn.states = optElems * x.bState * x.nStates;
            const double workBytes = x.masterSeparate ? x.bMaster : std::max(x.bState, x.bParams);
            if (x.optImpl == OptimizerImpl::Foreach)
                qn.optTemp = optElems * (x.nStates >= 2 ? x.bState : workBytes);
            else if (x.optImpl == OptimizerImpl::ForLoop)
                qn.optTemp = 2.0 * std::min(se.largestTrainedMatrix, optElems) * workBytes;
        }
    }

    // --- Megatron-Core's contiguous param / grad buffers (core/distoptimizer.h) ---------------
    // Under the distributed optimizer param_data and grad_data are the padded buffers, and the
    // fp32 master copy and the states cover the fullest rank's 1/dp of each bucket.
    if (x.fw.contiguous_buffers && !partial && sh == Sharding::Optimizer &&
        !structuredOptimizer(x.plan.precision)) {
        MegatronDdp ddp;
        ddp.distributedOptimizer = true;
        ddp.overlapGradReduce = overlapGradReduceOf(x.plan, x.fw);
        ddp.bucketElements = x.fw.ddp_bucket_elements;
        ddp.padForHighBusbw = x.fw.pad_buckets_for_high_nccl_busbw;
        ddp.padBytes = x.plan.memory.param_and_grad_buffer_pad;
        qn.buffers = true;
        qn.buffer = megatronStageBuffers(x.plan, stage, ddp, x.pc, x.layout, x.denseSpec, x.moeSpec);
        const BufferLayout &d = qn.buffer.dense, &e = qn.buffer.expert;
        qn.bufferPadding = (d.padded - d.unpadded) + (e.padded - e.unpadded);
        qn.shardExcess = std::max(0.0, d.shardElements - d.unpadded / x.shard) +
                         (e.unpadded > 0 ? std::max(0.0, e.shardElements - e.unpadded / x.expertShard) : 0.0);
        if (!off.params)
            qn.params += qn.bufferPadding * x.bParams;
        if (!off.grads)
            qn.grads += qn.bufferPadding * x.bGrads;
        if (!off.optimizer) {
            qn.master += qn.shardExcess * x.bMaster;
            qn.states += qn.shardExcess * x.bState * x.nStates;
        }
    }

    // --- MindSpeed reuse-fp32-param: the bf16 parameters share the fp32 master's memory ------
    if (x.plan.precision.reuse_fp32_param && !off.params) {
        const double reusable = partial ? se.trainedDense + se.trainedExpert : total;
        qn.params = std::max(0.0, qn.params - reusable * 2.0 / (optSharded ? x.shard : 1.0));
    }

    // --- DeepSpeed ZeRO++ hpZ: the secondary partition of every parameter (core/hpz.h), made
    // as the first forward releases each layer and dropped after the optimizer step: held
    // through the step's peaks, counted with the parameters.
    if (!off.params) {
        qn.hpzSecondary = hpzSecondaryBytes(x.plan, total, x.bParams);
        qn.params += qn.hpzSecondary;
    }

    // --- optimizers with their own state structure (core/optimizers.cpp) ---------------------
    if (structuredOptimizer(x.plan.precision) && !off.optimizer) {
        const StageElements tensors = partial ? se : stageElements(x.plan, stage);
        const double workBytes = x.masterSeparate ? x.bMaster : std::max(x.bState, x.bParams);
        const OptimizerMemory om = optimizerMemory(x.plan.precision, tensors, workBytes);
        const double split = optSharded ? x.shard : 1.0;
        qn.states = om.states / split;
        qn.pagedHost = om.hostStates / split;
        qn.optTemp = om.temp;
    }

    // --- the optimizer step's scaled copies where Megatron runs without apex (core/gradclip.h)
    if (!off.optimizer && scalesByCopy(x.fw, x.dev)) {
        const double largest =
            partial ? se.largestTrainedMatrix
                    : std::min(largestMegatronTensor(x.plan, stage, *x.shape),
                               sharded(optSharded));
        qn.clipTemp = largest * x.bGrads;
        if (!optSharded && x.masterSeparate)
            qn.paramCopyTemp = largest * x.bMaster;
    }

    // --- MindSpeed reuse-fp32-param's conversions around the step (core/reuseparam.h) ---------
    if (!off.optimizer && x.plan.precision.reuse_fp32_param && optSharded && !partial)
        qn.reuseTemp =
            reuseFp32ConversionBytes(x.shard, largestStageTensor(x, stage), sharded(true));

    // --- communication buffers ---------------------------------------------------------------
    const bool dataParallel = double(pa.dp) * pa.cp > 1;
    if (dataParallel && sh == Sharding::None && x.fw.ddp_bucket_copy &&
        x.fw.main_grad_dtype == DType::None)
        qn.ddpBuckets = off.grads ? x.fw.ddp_bucket_bytes
                                  : (partial ? trainedGradBytes
                                             : total * bytesOf(x.plan.precision.grads));
    if (dataParallel && (sh == Sharding::Optimizer || sh == Sharding::Grads))
        qn.reduceBucket = x.fw.reduce_bucket_bytes;
    if (x.fsdp) {
        // A gathered layer: compute-dtype copies (QLoRA: the k-bit storage as it is).
        const double layerQuantized = (se.quantizedDense + se.quantizedExpert) / std::max(1, L);
        const double layerBytes = (std::max(qn.layerParams, largestLayer) - layerQuantized) * x.c +
                                  (se.quantizedBytes + se.quantizedBytesExpert) / std::max(1, L);
        // Unsharded gradients exist only for what is trained.
        const double layerTrained = partial ? se.trainedPerLayer : std::max(qn.layerParams, largestLayer);
        const double rootTrained = partial ? se.trainedEmbedding + se.trainedHead : qn.rootParams;
        qn.fsdpLayerBytes = layerBytes;
        qn.fsdpLayerTrained = layerTrained;
        qn.fsdpRootTrained = rootTrained;
        const int prefetch = std::max(0, x.fw.fsdp_prefetch_layers);
        if (pa.reshard_after_forward) {
            qn.fsdpForward = (1 + prefetch) * layerBytes;
        } else {
            // ZeRO-2 style: every layer stays gathered from its forward until its backward.
            qn.fsdpForward = L * layerBytes;
        }
        // Backward: the layer being differentiated and the one prefetched, the layer's unsharded
        // gradients (compute dtype) and the flat reduce-scatter input they are copied into
        // (gradient dtype; FSDP2 foreach_reduce).
        qn.fsdpBackward = (pa.reshard_after_forward ? (1 + prefetch) * layerBytes : L * layerBytes) +
                          layerTrained * (x.c + x.bGrads);
        if (x.fw.fsdp_root_stays_gathered) {
            // FSDP2 does not reshard the root module after forward; its gradients (head first,
            // embedding last) are reduce-scattered only when the whole backward is done.
            qn.rootGathered = qn.rootParams * x.c;
            qn.rootGradsHead = partial ? se.trainedHead * x.c
                                       : (qn.rootParams - (first ? double(x.pc.embedding) / t : 0.0)) * x.c;
        } else {
            qn.fsdpForward = std::max(qn.fsdpForward, qn.rootParams * x.c + layerBytes);
        }
    }
    if (x.pp > 1) {
        const double hSp = double(mo.hidden) / (pa.sp ? t : 1.0);
        if (x.fw.pipeline_input_kept) {
            // Megatron: fresh receive tensors, and each chunk that receives its input (all but
            // the model's first) keeps the last one and its gradient after the step.
            qn.keptInputChunks = std::max(1, x.layout.chunks) - (first ? 1 : 0);
            qn.keptInputs = 2.0 * qn.keptInputChunks * x.tokens * hSp * x.c;
        } else {
            // Activation send and receive buffers at stage boundaries.
            qn.p2p = (first || last ? 1.0 : 2.0) * x.tokens * hSp * x.c;
        }
    }
    if (pa.sp && x.tp > 1) {
        // A column-parallel linear under sequence parallelism all-gathers its input over the TP
        // group (Megatron-Core's LinearWithGradAccumulationAndAsyncCommunication, forward and
        // again for the weight gradient); every such input is hidden wide.
        qn.spGather = x.tokens * double(mo.hidden) * x.c;
        qn.spGatherKept = spGatherKept(x.plan, x.fw, x.dev);
    }
}

/// The rest: the activations, logits and transients of `stage`'s rank. Apart from the residual
/// stream's dtype (which autocast sets only without FSDP) these read none of the sharding,
/// dp_shard or the model states' offload switches (floorActivations relies on it).
void computeActivations(const Context &x, int stage, const StageElements &se, Quantities &qn)
{
    const auto &pa = x.plan.parallel;
    const auto &mo = x.plan.model;
    const auto &off = x.plan.memory.offload;
    const bool last = stage == x.pp - 1;
    const double t = x.tp;
    const int L = x.layersOf(stage);
    const LayerMix mix = x.stageMix(stage);
    const MethodOptions &method = x.plan.training.method;
    const bool partial = method.method != TrainingMethod::Full;

    // --- activations ------------------------------------------------------------------------
    double scores = 0;
    double swapSide = 0; // mean per layer of what swap-attention's modules save
    if (!partial) {
        // Dense and MoE layers: the stage's mean saved per layer, its largest for the
        // recompute working set.
        double sum = 0, sc = 0, sumFull = 0, side = 0;
        for (const auto &[kind, n] : {std::pair{LayerKind::Dense, mix.dense}, std::pair{LayerKind::Moe, mix.moe}}) {
            if (n == 0)
                continue;
            double full = 0;
            sum += n * layerActivationBytes(x, kind, &sc, fullyTrained(), &side, &full);
            swapSide += n * side;
            scores = std::max(scores, sc);
            sumFull += n * full;
            qn.actLayerFull = std::max(qn.actLayerFull, full);
        }
        qn.actLayer = sum / std::max(1, mix.total());
        qn.actLayerMeanFull = sumFull / std::max(1, mix.total());
        swapSide /= std::max(1, mix.total());
    } else {
        // Layers differ under freezing: the stage's mean, and its largest for the recompute
        // working set.
        double sum = 0, sumFull = 0;
        // Neighbouring layers are mostly alike: each distinct kind is evaluated once.
        LayerTraining previous;
        double saved = 0, full = 0, sc = 0, side = 0;
        bool have = false;
        for (const LayerTraining &lt : layerTraining(x, stage)) {
            if (!have || !(lt == previous)) {
                saved = layerActivationBytes(x, lt.kind, &sc, lt, &side, &full);
                previous = lt;
                have = true;
            }
            sum += saved;
            swapSide += side;
            sumFull += full;
            scores = std::max(scores, sc);
            qn.actLayerFull = std::max(qn.actLayerFull, full);
        }
        qn.actLayer = sum / std::max(1, L);
        qn.actLayerMeanFull = sumFull / std::max(1, L);
        swapSide /= std::max(1, L);
    }
    if (x.plan.memory.recompute == Recompute::Full) {
        // Megatron's --recompute-method: `block` recomputes the first n layers of each model
        // chunk and keeps everything of the rest; `uniform` checkpoints groups of n layers,
        // one input per group, a whole group recomputed at once.
        // Chunks of a stage differ only under the embedding / loss counted as a layer; each
        // recomputes its first n (block) or its groups of n (uniform).
        // MindSpeed's --enable-recompute-layers-per-pp-rank counts n over the stage's chunks
        // (chunksDifferInRecompute): the stage's mean here, each chunk's in the timeline.
        const bool perPpRank = chunksDifferInRecompute(x);
        const int recomputed =
            x.layout.blockRecomputed(stage, x.plan.memory.recompute_num_layers, perPpRank);
        const int perChunk = std::max(1, x.largestChunkOf(stage));
        const int n = std::min(std::max(1, x.plan.memory.recompute_num_layers), perChunk);
        const bool chunksAlike = x.layout.chunk(stage, 0) * x.v == L && !perPpRank;
        qn.actLayerCheckpointed = qn.actLayer;
        if (x.plan.memory.recompute_method == RecomputeMethod::Block && chunksAlike && n < perChunk)
            qn.actLayer = (n * qn.actLayer + (perChunk - n) * qn.actLayerMeanFull) / perChunk;
        else if (x.plan.memory.recompute_method == RecomputeMethod::Block && !chunksAlike && recomputed < L)
            qn.actLayer = (recomputed * qn.actLayer + (L - recomputed) * qn.actLayerMeanFull) / L;
        else if (x.plan.memory.recompute_method == RecomputeMethod::Uniform && n > 1) {
            qn.actLayer /= n;
            qn.recomputeGroup = n;
        }
    }
    if (last) {
        const double hSp = double(mo.hidden) / (pa.sp ? t : 1.0);
        // A frozen final norm saves no normalized copy; a frozen head none of its input.
        const bool normTrained = !partial || (method.method == TrainingMethod::Freeze &&
                                              (method.freeze.parts & kPartNorms));
        const bool headTrained =
            !partial || se.trainedHead - (normTrained ? double(x.pc.final_norm) : 0.0) > 0;
        const double normSaved = normSavedPerToken(x.env, mo, hSp, normTrained, hSp / double(mo.hidden));
        // The fused linear cross entropy has the head input's gradient already: no input saved.
        const double headInput = headTrained && lossHeadOf(x.plan, x.fw) != LossHead::FusedLinear
                                     ? x.c * hSp
                                     : 0.0;
        const double normOutputAlive = x.r != x.c ? x.r * hSp : 0.0;
        qn.actFinal = (normSaved + headInput) * x.tokens;
        qn.actFinalForwardOnly = normOutputAlive * x.tokens;
        if (mo.mtp_layers > 0 && !partial) {
            // Multi-token prediction (DeepSeek-V3; Megatron's MTP block on the last stage): each
            // module norms the shifted tokens' embedding and the hidden state, projects their
            // concatenation (2h -> h), runs a layer of the last layer's kind and its own final
            // norm and head input; all held until the module's backward.
            const double layer = layerActivationBytes(x, layerKind(mo, mo.layers - 1), nullptr);
            const double perToken = 2.0 * normSavedPerToken(x.env, mo, hSp, true, hSp / double(mo.hidden)) +
                                    2.0 * x.c * hSp +
                                    normSaved + headInput;
            qn.actFinal += mo.mtp_layers * (layer + perToken * x.tokens);
        }
    }
    // The hidden dropout after the embedding: a one-byte mask of the (sequence-parallel)
    // hidden states, saved when the embedding trains (its output then needs a gradient).
    if (stage == 0 && x.dropout.hidden > 0 && embeddingTrains(method))
        qn.actEmbedding = double(mo.hidden) / (pa.sp ? t : 1.0) * x.tokens;
    // Micro-batches in flight on this stage.
    if (x.pp == 1) {
        qn.inflight = 1;
    } else if (pa.pp_schedule == PpSchedule::GPipe) {
        qn.inflight = x.m;
    } else if (pa.pp_schedule == PpSchedule::Interleaved) {
        // Megatron interleaved 1F1B: warm-up forwards on rank s =
        // (pp - s - 1) * 2 + (v - 1) * pp model chunks, plus the one in flight.
        const double chunks = std::min<double>((x.pp - stage - 1) * 2.0 + (x.v - 1.0) * x.pp + 1.0,
                                               double(x.m) * x.v);
        qn.inflight = chunks / x.v; // in units of the whole stage's layers
    } else {
        qn.inflight = std::min(x.pp - stage, x.m);
    }
    // MindSpeed's swap-attention (core/swapattention.h): the attention side of every layer on
    // the host between its forward and backward; on the device only the current layer's.
    const SwapAttentionSplit swap = swapAttentionSplit(x.plan, qn.actLayer, swapSide);
    qn.swapLayer = swap.swapped;
    qn.actTotal = swap.kept * L * qn.inflight + swap.swapped;
    if (chunksDifferInRecompute(x) && !off.activations) {
        // Each chunk's own share, for the micro-batches of it in flight at the warm-up's end
        // (swap-attention is refused under full recompute).
        qn.actTotal = 0;
        for (int c = 0; c < x.v; ++c)
            qn.actTotal +=
                warmupUnitsOfChunk(x, stage, c) * x.layout.chunk(stage, c) *
                chunkLayerActivations(x, qn.actLayerCheckpointed, qn.actLayerMeanFull, stage, c);
    }
    if (off.activations) {
        // Offloaded, each model chunk in flight keeps its last layer's on the device until its
        // backward (a layer's go once the next layer has saved its own), and the chunk being
        // run one layer more: the current and the previous (forward) or prefetched (backward).
        qn.actTotal = std::min(qn.actTotal, (chunksInFlight(x, qn.inflight) + 1.0) * qn.actLayer);
    }

    // --- logits and loss (last stage) -------------------------------------------------------
    if (last) {
        const double vocab = double(mo.vocab) / t;
        const double n = x.tokens * vocab;
        const double k = std::max(1, x.plan.memory.loss_chunks);
        switch (lossHeadOf(x.plan, x.fw)) {
        case LossHead::HfUpcast:
        case LossHead::Framework: {
            const double upcast = x.c < 4.0 ? 4.0 : 0.0;
            qn.logitsForward = n * (x.c + upcast + 4.0);
            qn.logitsBackward = n * 12.0;
            break;
        }
        case LossHead::FusedFp32:
            qn.logitsForward = n * (x.c + 4.0);
            qn.logitsBackward = n * (4.0 + x.c);
            break;
        case LossHead::FusedFp32Copy:
            // The maximum subtracted out of place: the logits, their fp32 copy (the function's
            // input) and the shifted fp32 tensor (exponentiated and normalized in place, saved)
            // at once.
            qn.logitsForward = n * (x.c + 8.0);
            qn.logitsBackward = n * (4.0 + x.c);
            break;
        case LossHead::Chunked:
            // torchtune: the head's logits in chunks (compute dtype, all held until the loss
            // returns); each chunk upcast to fp32 and its fp32 log-softmax saved, the upcast
            // freed; backward frees the chunks' log-softmax one by one beside one chunk's
            // gradients (nll grad, log-softmax grad, the cast back).
            qn.logitsForward = n * (x.c + 4.0) + n / k * 4.0;
            qn.logitsBackward = n * 4.0 + n / k * (8.0 + x.c);
            break;
        case LossHead::FusedLinear: {
            // Liger: per chunk of tokens the logits (compute dtype), their gradient written in
            // place; the head input's gradient (and the head weight's, when trained) computed in
            // forward and held for backward. The full logits never exist.
            const double chunk = fusedLinearChunkTokens(x.tokens, vocab, double(mo.hidden));
            const double hSp = double(mo.hidden);
            const bool headTrained = !partial || se.trainedHead > double(x.pc.final_norm);
            const double held = x.tokens * hSp * x.c + (headTrained ? vocab * hSp * x.c : 0.0);
            qn.logitsForward = chunk * vocab * x.c + held;
            qn.logitsBackward = held;
            break;
        }
        }
        if (mo.mtp_layers > 0) {
            // Each MTP module's loss keeps what its cross entropy saves (the fp32 softmax or
            // log-softmax; the fused linear loss its input gradient) until its backward.
            const bool fusedLinear = lossHeadOf(x.plan, x.fw) == LossHead::FusedLinear;
            const double saved = fusedLinear ? qn.logitsBackward : n * 4.0;
            qn.logitsForward += mo.mtp_layers * saved;
            qn.logitsBackward += mo.mtp_layers * saved;
        }
    }

    // --- transients ------------------------------------------------------------------------
    {
        const double hSp = double(mo.hidden) / (pa.sp ? t : 1.0);
        // The widest FFN of the stage's layers: the dense FFN, or the routed copies' and the
        // shared experts' intermediates.
        const MoeRouting route = moeRouting(mo, pa);
        const double fDense = mix.dense > 0 ? double(mo.ffn_hidden) / t : 0.0;
        const double fMoe = mix.moe > 0 ? route.copies * route.expertWidth + route.sharedWidth : 0.0;
        const double f = std::max(fDense, fMoe);
        const AttentionSaved att = attentionSaved(x.env, mo, true);
        // Backward of one layer: gradients of the FFN intermediates and of the residual,
        // flash attention's dq/dk/dv with its fp32 dq accumulator.
        qn.bwdTransient = x.tokens * (3.0 * x.c * f + 2.0 * x.c * hSp + 4.0 * att.qWidth);
        if (mix.moe > 0) {
            // The token dispatcher's buffers (core/moe.h), in forward and again for the
            // gradients in backward.
            const double dispatch = dispatchTransientHiddens(mo, pa) * double(mo.hidden) * x.c * x.tokens;
            qn.fwdTransient += dispatch;
            qn.bwdTransient += dispatch;
        }
        if (x.plan.memory.attention == Attention::Eager) {
            // Softmax backward: the compute-dtype gradient of the probabilities, its fp32 cast
            // and the softmax gradient coexist with the saved scores of the layer.
            qn.bwdTransient += scores;
            // Forward: the (b, 1, s, s) causal mask Hugging Face builds for eager attention;
            // the raw and masked scores never exceed what the softmax then keeps.
            qn.fwdTransient = x.keyTokens * x.keyTokens * x.plan.training.micro_batch * x.c;
        }
        if (pa.sp && x.tp > 1 && !spGatherKept(x.plan, x.fw, x.dev)) {
            // Sequence parallelism's all-gathered linear input (tokens x hidden), a fresh tensor
            // for each GEMM (Transformer Engine, PyTorch's SequenceParallel): in forward, and
            // again in backward for the weight gradient.
            qn.fwdTransient += x.tokens * double(mo.hidden) * x.c;
            qn.bwdTransient += x.tokens * double(mo.hidden) * x.c;
        }
        // Context parallelism: the ring's K/V blocks, Ulysses' exchanges (core/attention.h).
        qn.fwdTransient += contextParallelTransient(att, pa.ringDegree(), pa.ulyssesDegree(), x.tokens, x.c, false);
        qn.bwdTransient += contextParallelTransient(att, pa.ringDegree(), pa.ulyssesDegree(), x.tokens, x.c, true);
        if (partial) {
            // QLoRA: bitsandbytes dequantizes each k-bit weight whole for its matmul, in forward
            // and again for the input gradient in backward.
            qn.fwdTransient += se.largestQuantized * x.c;
            qn.bwdTransient += se.largestQuantized * x.c;
            // DoRA: the weight norm materialises B @ A and W + B A for the largest weight.
            if (method.method == TrainingMethod::DoRA)
                qn.fwdTransient += 2.0 * se.largestAdapted * x.bAdapter;
        }
        if (x.plan.memory.recompute == Recompute::Full)
            qn.bwdTransient += qn.actLayerFull * qn.recomputeGroup; // the layer(s) being recomputed
        if (x.plan.memory.recompute_norm || x.plan.memory.recompute_activation_function)
            // The recomputed norm output or activation, alive for its layer's backward.
            qn.bwdTransient += x.tokens * x.c * (x.plan.memory.recompute_activation_function
                                                     ? std::max(fDense, fMoe)
                                                     : double(mo.hidden) / (pa.sp ? t : 1.0));
        else if (x.plan.memory.recompute == Recompute::Selective)
            qn.bwdTransient += qn.actLayerFull - qn.actLayer;
    }
}

Quantities computeQuantities(const Context &x, int stage)
{
    Quantities qn;
    StageElements se;
    computeStates(x, stage, qn, se);
    computeActivations(x, stage, se, qn);
    return qn;
}

/// Relative sizes of one layer's stored parameter tensors on this rank (q, k, v, o, the FFN's,
/// norms, router, experts stacked per weight), and of the root's (embedding, final norm, head).
void parameterTensorShares(const Context &x, int stage, std::vector<double> &layer, std::vector<double> &root)
{
    const auto &mo = x.plan.model;
    const double t = x.tp;
    // The stage's prevalent layer kind, tensor by tensor (core/layers.h); routed experts
    // stacked per weight.
    const LayerMix mix = x.stageMix(stage);
    const LayerSpec &spec = mix.moe >= mix.dense && mix.moe > 0 ? x.moeSpec : x.denseSpec;
    layer.clear();
    for (const LinearSpec &l : spec.linears) {
        const double split = l.split == Split::Duplicated ? 1.0 : (l.part == LayerPart::Expert ? x.etp : t);
        const double copies = l.part == LayerPart::Expert ? double(spec.experts) / x.ep : 1.0;
        layer.push_back(double(l.weights() + l.biases()) / split * copies);
    }
    if (spec.router > 0)
        layer.push_back(double(spec.router));
    if (spec.attentionVectors > 0)
        layer.push_back(double(spec.attentionVectors));
    layer.push_back(double(spec.norms) / 2.0);
    layer.push_back(double(spec.norms) / 2.0);
    root.clear();
    if (stage == 0)
        root.push_back(double(x.pc.embedding) / t);
    if (stage == x.pp - 1) {
        root.push_back(double(x.pc.final_norm));
        if (!mo.tied_embeddings)
            root.push_back(double(x.pc.lm_head) / t);
        else if (x.pp > 1)
            root.push_back(double(x.pc.embedding) / t);
    }
}

/// `total` split in pieces of the given relative sizes, exactly.
std::vector<double> splitExactly(double total, std::initializer_list<double> parts)
{
    std::vector<double> out;
    double sum = 0;
    for (double p : parts)
        sum += p;
    double used = 0;
    for (double p : parts) {
        out.push_back(sum > 0 ? total * p / sum : 0.0);
        used += out.back();
    }
    if (!out.empty())
        out.back() += total - used;
    return out;
}

/// What a layer's backward brings back (its recompute) and needs beyond that (its working set),
/// before swap-attention's share: the timeline allocates both before it frees anything of the
/// layer.
struct LayerBackward
{
    double recompute = 0, work = 0;
};
LayerBackward layerBackward(const Context &x, const Quantities &q)
{
    LayerBackward b;
    switch (x.plan.memory.recompute) {
    case Recompute::Full: b.recompute = q.actLayerFull * q.recomputeGroup; break;
    case Recompute::Selective: b.recompute = std::max(0.0, q.actLayerFull - q.actLayer); break;
    case Recompute::None: b.recompute = 0; break;
    }
    b.work = std::max(0.0, q.bwdTransient - b.recompute);
    return b;
}

/// The step of one kind of rank as the timeline generator needs it.
StepShape stepShape(const Context &x, const Quantities &q, int stage)
{
    const auto &pa = x.plan.parallel;
    const auto &mo = x.plan.model;
    StepShape s;
    s.stage = stage;
    s.pp = x.pp;
    s.first = stage == 0;
    s.last = stage == x.pp - 1;
    s.chunks = x.v;
    s.chunkLayers.resize(size_t(x.v));
    for (int c = 0; c < x.v; ++c)
        s.chunkLayers[size_t(c)] = x.layout.chunk(stage, c);
    s.microbatches = x.m;
    s.interleaved = x.v > 1;
    s.workspaces = gemmWorkspaces(x.dev, x.fw);
    if (x.pp == 1)
        s.warmup = 0;
    else if (pa.pp_schedule == PpSchedule::GPipe)
        s.warmup = x.m;
    else if (pa.pp_schedule == PpSchedule::Interleaved)
        s.warmup = (x.pp - stage - 1) * 2 + (x.v - 1) * x.pp;
    else
        s.warmup = x.pp - stage - 1;

    // Stored parameters, scaled so that every layer and the root add up to what the rank holds.
    std::vector<double> layer, root;
    parameterTensorShares(x, stage, layer, root);
    double elements = 0;
    for (double e : layer)
        elements += e * x.layersOf(stage);
    for (double e : root)
        elements += e;
    s.paramBytesPerElement = elements > 0 ? q.params / elements : 0.0;
    s.layerParamElements = std::move(layer);
    s.rootParamElements = std::move(root);
    s.master = q.master;
    s.states = q.states;
    s.persistentGrads = !x.fw.grads_set_to_none;
    s.grads = q.grads;
    s.gradsPerLayer = q.gradsPerLayer;
    s.gradsHead = q.gradsHead;
    s.gradsEmbedding = q.gradsEmbedding;
    s.ddpBuckets = q.ddpBuckets;
    s.reduceBucket = q.reduceBucket;
    s.p2p = q.p2p;
    s.spGather = q.spGatherKept ? q.spGather : 0.0;

    if (q.computeCopies > 0) {
        s.castHead = q.headMatmulParams * x.c;
        s.castPerLayer = std::max(0.0, q.computeCopies - s.castHead) / std::max(1, x.layersOf(stage));
        s.castsRedoneInBackward = x.plan.memory.recompute == Recompute::Full;
    }

    s.actLayer = q.actLayer;
    if (chunksDifferInRecompute(x)) {
        s.actChunk.resize(size_t(x.v));
        for (int c = 0; c < x.v; ++c)
            s.actChunk[size_t(c)] =
                chunkLayerActivations(x, q.actLayerCheckpointed, q.actLayerMeanFull, stage, c);
    }
    const LayerBackward bwd = layerBackward(x, q);
    s.recomputeSet = bwd.recompute;
    s.bwdWork = bwd.work;
    s.fwdWork = q.fwdTransient;
    // Swap-attention: the swapped share of a layer is on the device only while the layer runs
    // its forward (freed once its copies reach the host) and its backward (copied back as it
    // starts), counted with that pass's working memory.
    s.actLayer -= q.swapLayer;
    s.fwdWork += q.swapLayer;
    s.bwdWork += q.swapLayer;
    s.actFinal = q.actFinal;
    s.normOutput = q.actFinalForwardOnly;
    s.actEmbedding = q.actEmbedding;
    s.offloadActivations = x.plan.memory.offload.activations;
    s.hiddenTensor = x.tokens * double(mo.hidden) / (pa.sp ? x.tp : 1.0) * x.c;


    if (s.last) {
        const double n = x.tokens * double(mo.vocab) / x.tp;
        const double c = x.c;
        const double k = std::max(1, x.plan.memory.loss_chunks);
        switch (lossHeadOf(x.plan, x.fw)) {
        case LossHead::HfUpcast:
        case LossHead::Framework:
            s.logitsForward = c < 4.0 ? splitExactly(q.logitsForward, {c, 4.0, 4.0})
                                      : splitExactly(q.logitsForward, {c, 4.0});
            s.logitsBackward = splitExactly(q.logitsBackward, {4.0, 4.0, 4.0});
            break;
        case LossHead::FusedFp32:
            s.logitsForward = splitExactly(q.logitsForward, {c, 4.0});
            s.logitsBackward = splitExactly(q.logitsBackward, {4.0, c});
            break;
        case LossHead::FusedFp32Copy:
            // The logits, the fp32 copy passed in (freed when the loss returns), the shifted tensor.
            s.logitsForward = splitExactly(q.logitsForward, {c, 4.0, 4.0});
            s.logitsFreedAfterLoss = 1;
            s.logitsBackward = splitExactly(q.logitsBackward, {4.0, c});
            break;
        case LossHead::Chunked:
            s.logitsForward = splitExactly(q.logitsForward, {n * c, n * 4.0, n / k * 4.0});
            s.logitsBackward = splitExactly(q.logitsBackward, {n * 4.0, n / k * (8.0 + c)});
            break;
        case LossHead::FusedLinear: {
            const double chunk = q.logitsForward - q.logitsBackward;
            s.logitsForward = {q.logitsBackward, chunk};
            s.logitsBackward = {q.logitsBackward};
            break;
        }
        }
    }

    s.fsdp = x.fsdp;
    if (x.fsdp) {
        s.reshardAfterForward = pa.reshard_after_forward;
        s.rootStaysGathered = x.fw.fsdp_root_stays_gathered;
        s.prefetch = std::max(0, x.fw.fsdp_prefetch_layers);
        s.gatheredLayer = q.fsdpLayerBytes;
        s.layerUnshardedGrad = q.fsdpLayerTrained * x.c;
        s.layerReduceScatter = q.fsdpLayerTrained * x.bGrads;
        s.rootGathered = q.rootParams * x.c;
        s.rootUnshardedGrad = q.fsdpRootTrained * x.c;
        s.rootReduceScatter = q.fsdpRootTrained * x.bGrads;
        s.rootHeadUnshardedGrad = q.rootGradsHead;
    }

    s.optTemp = q.optTemp;
    s.clipTemp = q.clipTemp;
    s.keptInputs = q.keptInputs;
    s.paramCopyTemp = q.paramCopyTemp;
    s.reuseTemp = q.reuseTemp;
    s.optTempPerTensor = x.optImpl == OptimizerImpl::Foreach && !structuredOptimizer(x.plan.precision);
    return s;
}

/// The tensors a layer's groups are made of (for the recorder; the peaks need only totals).
void tensorParts(const Context &x, StepShape &s)
{
    const auto &pa = x.plan.parallel;
    const auto &mo = x.plan.model;
    {
        // The tensors a layer's groups are made of (bytes per token on this rank; scaled to each
        // group's total by the recorder): norms' fp32 input and output, the projections'
        // inputs, q/k/v after RoPE, the attention output and log-sum-exp, the FFN's
        // intermediates; eager attention's score matrices; the backward's gradients.
        const double hSp = double(mo.hidden) / (pa.sp ? x.tp : 1.0);
        const double qd = double(mo.qDim()) / x.tp, kvd = double(mo.kvDim()) / x.tp;
        const double heads = double(mo.heads) / x.tp;
        const MoeRouting route = moeRouting(mo, pa);
        const double f = mo.moe.enabled() ? route.copies * route.expertWidth + route.sharedWidth
                                          : double(mo.ffn_hidden) / x.tp;
        const double c = x.c, r = x.r;
        const double norm = x.fw.norm == "upcast" ? 4.0 : r;
        std::vector<double> layer = {norm * hSp, r * hSp, c * hSp, c * qd, c * kvd, c * kvd, c * qd, 4.0 * heads,
                                     norm * hSp, r * hSp, c * hSp, c * f, c * f, c * f, c * f};
        std::vector<double> scores;
        if (x.plan.memory.attention == Attention::Eager)
            scores = {4.0 * heads * x.keyTokens, c * heads * x.keyTokens};
        std::vector<double> withScores = layer;
        withScores.insert(withScores.end(), scores.begin(), scores.end());
        for (double &v : withScores)
            v *= x.tokens;
        for (double &v : layer)
            v *= x.tokens;
        for (double &v : scores)
            v *= x.tokens;
        switch (x.plan.memory.recompute) {
        case Recompute::Full:
            s.savedParts = {1.0}; // the checkpointed layer input
            s.recomputeParts = layer;
            break;
        case Recompute::Selective:
            s.savedParts = layer;
            s.recomputeParts = scores;
            break;
        case Recompute::None:
            s.savedParts = withScores;
            break;
        }
        s.bwdParts = {c * f, c * f, c * f, c * hSp, c * hSp, 4.0 * qd};
        s.bwdParts.insert(s.bwdParts.end(), scores.begin(), scores.end());
        for (size_t i = 0; i < 6; ++i)
            s.bwdParts[i] *= x.tokens;
        s.headParts = {norm * x.tokens * hSp, r * x.tokens * hSp, c * x.tokens * hSp};
    }
    for (double left = s.ddpBuckets; left > 0 && s.bucketParts.size() < 4096; left -= 25.0 * 1024 * 1024)
        s.bucketParts.push_back(std::min(left, 25.0 * 1024 * 1024));
}

/// The phase peaks of a step, from the timeline.
struct RankEval
{
    std::array<Breakdown, kPhaseCount> phases;
    Breakdown after; ///< live once the steady step is over
};

RankEval evaluate(const StepShape &s)
{
    // The steady step starts from the model build and the optimizer states the first step
    // made (its gradients set to None again); the first step's own peak comes with the replay.
    PeakTracker tracker;
    emitSetup(s, tracker);
    emitStates(s, tracker);
    emitStep(s, tracker, false);
    RankEval e;
    for (int p = 0; p < kPhaseCount; ++p) {
        const PeakTracker::Peak &pk = tracker.peak(StepPart::SteadyStep, Phase(p));
        if (pk.total >= 0)
            e.phases[size_t(p)] = pk.at;
    }
    e.after = tracker.live();
    return e;
}

/// Names of communicators, without allocating: the memory floor asks for them for every layout
/// the search meets.
class CommunicatorNames
{
public:
    void push_back(std::string_view name)
    {
        assert(n_ < names_.size());
        names_[n_++] = name;
    }
    operator std::span<const std::string_view>() const { return {names_.data(), n_}; }

private:
    std::array<std::string_view, 20> names_{};
    size_t n_ = 0;
};

/// The communicators a rank of `stage` belongs to, by MindSpeed's process-group names (one
/// entry per communicator; core/hcclbuffers.h sizes their buffers).
CommunicatorNames communicatorGroups(const Context &x, int stage)
{
    CommunicatorNames g;
    // HCCL and NCCL make a group's communicator at its first collective: only the groups a rank
    // uses count. Megatron-Core (Megatron-LM core_v0.12.1, the version MindSpeed-LLM pins)
    // creates its groups apart even where they hold the same ranks.
    const bool megatron = x.fw.megatron_process_groups;
    const int world = x.plan.cluster.world();
    if (megatron && world > 1)
        g.push_back("world"); // start-up reductions, timers and barriers (torch.distributed's default group)
    if (double(x.dp) * x.cp > 1) // data-parallel gradient / parameter collectives
        g.push_back(x.cp > 1 || megatron ? "dp_cp" : "dp");
    if (megatron && x.dp > 1 && stage == x.pp - 1)
        g.push_back("dp"); // pretrain_gpt.py's loss_func: the logged loss, all-reduced per micro-batch
    if (megatron && x.tp * x.pp > 1)
        g.push_back("mp"); // train_step's update-success, grad-norm and learning-rate reductions
    if (x.plan.parallel.replicas() > 1 && x.shard > 1)
        g.push_back("dp_replicate"); // HSDP: the shard group and the replica group apart
    if (x.tp > 1)
        g.push_back("tp");
    const Parallel &pa = x.plan.parallel;
    const bool hybrid = pa.ringDegree() > 1 && pa.ulyssesDegree() > 1;
    if (pa.ringDegree() > 1)
        g.push_back(hybrid ? "cp_ring" : "cp"); // ring exchange
    if (pa.ulyssesDegree() > 1)
        g.push_back(hybrid ? "cp_ulysses" : "cp"); // Ulysses all-to-all (the hybrid has both groups)
    if (x.ep > 1)
        g.push_back("exp"); // all-to-all
    if (x.plan.model.moe.enabled()) {
        if (x.etp > 1 && x.etp != x.tp)
            g.push_back("ep_tp"); // the expert tensor-parallel group
        if (x.expertShard > 1 && x.expertShard != x.shard)
            g.push_back("dp_modulo_exp"); // the experts' data-parallel group (their gradients' reduction)
        if (megatron && x.tp * x.cp > 1)
            g.push_back("tp_cp"); // the router's tokens-per-expert for the load-balancing loss
        if (megatron && x.ep * x.etp > 1)
            g.push_back("tp_ep_mp"); // the alltoall dispatcher's gather of tokens per expert
    }
    if (x.pp > 1) { // send/recv with each neighbour
        g.push_back("pp");
        if (stage != 0 && stage != x.pp - 1)
            g.push_back("pp");
    }
    // Megatron's embedding group: the first and last stage keep the shared embedding (tied or
    // used by MTP) in sync.
    if (x.pp > 1 && (stage == 0 || stage == x.pp - 1) &&
        (x.plan.model.tied_embeddings || x.plan.model.mtp_layers > 0))
        g.push_back("embd");
    return g;
}

RuntimeReserve commReserve(const Context &x, int stage)
{
    RuntimeReserve r;
    r.context = x.dev.context_reserve_bytes;
    r.groups = commGroupBuffers(x.plan, x.dev, communicatorGroups(x, stage));
    r.communicators = int(r.groups.size());
    for (const CommGroupBuffer &c : r.groups)
        r.comm_buffers += c.bytes;
    return r;
}

/// commReserve(x, stage).total() before the allocator's share: its context and buffers.
double commReserveBytes(const Context &x, int stage)
{
    return x.dev.context_reserve_bytes + commGroupBufferBytes(x.plan, x.dev, communicatorGroups(x, stage));
}

/// Whether stages 1 .. pp-2 hold the same layers (count and kinds): only their warm-up differs.
bool middleStagesAlike(const Context &x)
{
    for (int stage = 2; stage <= x.pp - 2; ++stage) {
        const LayerMix a = x.stageMix(1), b = x.stageMix(stage);
        if (a.dense != b.dense || a.moe != b.moe || x.layout.stage(1) != x.layout.stage(stage))
            return false;
    }
    return true;
}

} // namespace

namespace {

/// memoryFloorBytes of the plan of `x`, from its first stage's quantities `q0` and the bytes of
/// its runtime reserve before the allocator's share, `reserve0`.
double floorOf(const Context &x, const Quantities &q0, double reserve0)
{
    if (x.plan.training.method.method != TrainingMethod::Full)
        return 0.0;
    // The first stage once the last forward before its first backward has run its last layer
    // (the timeline's forwardBody): everything persistent, the reduce bucket the step allocates
    // first, and what the micro-batches in flight saved (with activations on the host, the last
    // layer's of each model chunk in flight). When the stage is also the last (pp 1) its forward
    // ends with the head: the LM-head input and the logits are live beside the layers'
    // activations, until that backward frees them.
    double live = q0.params + q0.master + q0.states + q0.ddpBuckets + q0.p2p + q0.reduceBucket +
                  (q0.spGatherKept ? q0.spGather : 0.0) + gemmWorkspaces(x.dev, x.fw).total();
    if (!x.fw.grads_set_to_none)
        live += q0.grads;
    const double persistent = live;
    bool everyChunkHasLayers = true;
    for (int c = 0; c < x.layout.chunks; ++c)
        everyChunkHasLayers = everyChunkHasLayers && x.layout.chunk(0, c) > 0;
    if (!x.plan.memory.offload.activations) {
        live += q0.actTotal;
    } else {
        // Offloaded, a micro-batch's model chunk frees a layer's activations only once the next
        // layer has saved its own (the timeline's forwardBody): its last layer's stay on the device
        // until its backward, for each of the q0.inflight x v chunks in flight.
        const double chunks = everyChunkHasLayers ? chunksInFlight(x, q0.inflight) : 1.0;
        live += std::max(q0.actLayer, chunks * (q0.actLayer - q0.swapLayer));
    }
    // At the head, the layers' activations without what may be on the host by then (swap-
    // attention's last swapped part; every layer's when activations are offloaded).
    const double atHead = q0.logitsForward > 0
                              ? persistent + q0.actFinal + q0.logitsForward +
                                    (x.plan.memory.offload.activations ? 0.0 : q0.actTotal - q0.swapLayer)
                              : 0.0;
    live = std::max(live, atHead);
    // The first backward's first layer (the timeline's backwardBody): with every layer's
    // activations still on the device (neither offloaded nor swapped), they are all live when it
    // allocates its recompute and working set; the head's tensors are freed by then. (A chunk
    // without decoder layers has no such layer.)
    if (!x.plan.memory.offload.activations && q0.swapLayer == 0 && everyChunkHasLayers) {
        const LayerBackward bwd = layerBackward(x, q0);
        live = std::max(live, persistent + q0.actTotal + bwd.recompute + bwd.work);
    }
    return live + reserve0;
}

/// The estimate; with `floorLimit`, nothing but `*aboveFloor` = true when the plan's memory
/// floor exceeds it (the floor shares the estimate's context and first-stage quantities).
MemoryEstimate estimateMemoryImpl(const Plan &plan, const Catalog &catalog, const MemoryEstimate *withoutOffload,
                                  double floorLimit = INFINITY, bool *aboveFloor = nullptr)
{
    const DeviceProfile &dev = *catalog.device(plan.cluster.device);
    const FrameworkProfile &fw = *catalog.framework(plan.framework);
    const Context x(plan, dev, fw);
    const Quantities q0 = computeQuantities(x, 0);
    const RuntimeReserve r0 = commReserve(x, 0);
    if (aboveFloor) {
        *aboveFloor = floorOf(x, q0, r0.context + r0.comm_buffers) > floorLimit;
        if (*aboveFloor)
            return {};
    }

    MemoryEstimate out;
    out.hbm_bytes = dev.hbm_bytes;
    const int ranksPerStage = plan.parallel.dp * plan.parallel.tp * plan.parallel.cp;
    out.ranks.reserve(size_t(x.pp));
    double maxReserve = 0;
    bool fits = true;
    // Under 1F1B the middle stages differ only in their warm-up forwards, and every moment of
    // the step moves by the same net change per warm-up micro-batch: their phase peaks are
    // affine in the warm-up count. The two outer middle stages are evaluated, the ones between
    // follow exactly (tst_timeline checks every stage against its listed timeline).
    // Interleaved 1F1B likewise (warm-up 2 (pp - stage - 1) + (v - 1) pp units), as long as
    // every chunk's first backward falls among stage 1's forward / backward pairs: then the
    // drain, the same on every stage, peaks no higher than the pairs before it.
    const bool full = plan.training.method.method == TrainingMethod::Full;
    const PpSchedule schedule = plan.parallel.pp_schedule;
    const int64_t units = int64_t(x.m) * x.v;
    const int64_t warmStage1 = 2 * int64_t(x.pp - 2) + int64_t(x.v - 1) * x.pp;
    const bool affineMiddle =
        x.pp >= 5 && full &&
        ((x.v == 1 && schedule == PpSchedule::OneFOneB && x.m > x.pp - 2) ||
         (x.v > 1 && schedule == PpSchedule::Interleaved && units - warmStage1 > int64_t(x.v - 1) * x.pp + 1)) &&
        middleStagesAlike(x);
    RankEval upper, lower; // stages 1 and pp - 2, the largest and the smallest warm-up
    Quantities qUpper, qLower;
    if (affineMiddle) {
        qUpper = computeQuantities(x, 1);
        upper = evaluate(stepShape(x, qUpper, 1));
        qLower = computeQuantities(x, x.pp - 2);
        lower = evaluate(stepShape(x, qLower, x.pp - 2));
    }
    // Stages between hold stage 1's layers; only optimizers with their own state structure
    // (paged host states) need their quantities again.
    const bool structured = structuredOptimizer(plan.precision);
    Quantities qStage;
    std::optional<RuntimeReserve> middleReserve;
    for (int stage = 0; stage < x.pp; ++stage) {
        const bool between = affineMiddle && stage > 1 && stage < x.pp - 2;
        const Quantities *qp = &qStage;
        if (stage == 0)
            qp = &q0;
        else if (affineMiddle && stage == 1)
            qp = &qUpper;
        else if (affineMiddle && stage == x.pp - 2)
            qp = &qLower;
        else if (!between || structured)
            qStage = computeQuantities(x, stage);
        else
            qp = &qUpper; // the same layers: what the estimate reads of them is stage 1's
        const Quantities &q = *qp;
        RankEval e;
        if (affineMiddle && stage >= 1 && stage <= x.pp - 2) {
            if (stage == 1) {
                e = upper;
            } else if (stage == x.pp - 2) {
                e = lower;
            } else {
                const double t = double(x.pp - stage - 2) / double(x.pp - 3); // 0 at pp - 2, 1 at 1
                const auto lerp = [t](const Breakdown &lo, const Breakdown &hi, Breakdown &into) {
                    for (int c = 0; c < kComponentCount; ++c)
                        into.bytes[size_t(c)] = lo.bytes[size_t(c)] + t * (hi.bytes[size_t(c)] - lo.bytes[size_t(c)]);
                };
                for (int p = 0; p < kPhaseCount; ++p)
                    lerp(lower.phases[size_t(p)], upper.phases[size_t(p)], e.phases[size_t(p)]);
                lerp(lower.after, upper.after, e.after);
            }
        } else {
            e = evaluate(stepShape(x, q, stage));
        }
        RankMemory rm;
        rm.stage = stage;
        // Megatron rank order: tp fastest, then cp, dp, pp.
        rm.rank = stage * ranksPerStage;
        rm.count = ranksPerStage;
        rm.layers = x.layersOf(stage);
        rm.has_embedding = stage == 0;
        rm.has_head = stage == x.pp - 1;
        rm.phases = e.phases;
        rm.after_step = e.after;
        double peak = -1;
        for (int p = 0; p < kPhaseCount; ++p) {
            const double tot = rm.phases[size_t(p)].total();
            if (tot > peak) {
                peak = tot;
                rm.peak_phase = Phase(p);
            }
        }
        rm.peak_bytes = peak;
        rm.host_paged_bytes = q.pagedHost;
        // The middle stages belong to the same communicators (communicatorGroups).
        if (stage == 0) {
            rm.reserve = r0;
        } else if (stage == x.pp - 1) {
            rm.reserve = commReserve(x, stage);
        } else {
            if (!middleReserve)
                middleReserve = commReserve(x, stage);
            rm.reserve = *middleReserve;
        }
        maxReserve = std::max(maxReserve, rm.reserve.total());
        if (peak + rm.reserve.total() > dev.hbm_bytes)
            fits = false;
        if (peak > out.peak_bytes) {
            out.peak_bytes = peak;
            out.peak_rank = rm.rank;
        }
        out.ranks.push_back(rm);
    }
    // A reserve beyond the whole HBM (an odd device profile) leaves nothing usable.
    out.usable_bytes = std::max(0.0, dev.hbm_bytes - maxReserve);
    out.hbm_fits = fits;
    const Offload &off = plan.memory.offload;
    bool paged = false;
    for (const RankMemory &r : out.ranks)
        paged = paged || r.host_paged_bytes > 0;
    const bool offloads = off.optimizer || off.params || off.grads || off.activations || plan.memory.swap_attention;
    if (offloads || paged) {
        const double capacity = plan.cluster.host_memory_bytes > 0 ? plan.cluster.host_memory_bytes
                                                                   : dev.host_memory_bytes;
        if (offloads) {
            // What leaves the device: the difference with the same plan kept on it.
            if (withoutOffload) {
                out.host = estimateHostMemory(plan, out.ranks, withoutOffload->ranks, capacity);
            } else {
                Plan kept = plan;
                kept.memory.offload = Offload{};
                kept.memory.swap_attention = false;
                out.host = estimateHostMemory(plan, out.ranks, estimateMemoryImpl(kept, catalog, nullptr).ranks, capacity);
            }
        } else {
            out.host = estimateHostMemory(plan, out.ranks, out.ranks, capacity);
        }
    }
    out.fits = fits && out.host.fits;
    return out;
}

} // namespace

MemoryEstimate estimateMemory(const Plan &plan, const Catalog &catalog)
{
    return estimateMemoryImpl(plan, catalog, nullptr);
}

MemoryEstimate estimateMemory(const Plan &plan, const Catalog &catalog, const MemoryEstimate &withoutOffload)
{
    return estimateMemoryImpl(plan, catalog, &withoutOffload);
}

const RankMemory *worstRank(const MemoryEstimate &memory)
{
    const RankMemory *worst = nullptr;
    for (const RankMemory &r : memory.ranks) {
        if (!worst || r.peak_bytes + r.reserve.total() > worst->peak_bytes + worst->reserve.total())
            worst = &r;
    }
    return worst;
}

double worstRankBytes(const MemoryEstimate &memory)
{
    const RankMemory *worst = worstRank(memory);
    return worst ? std::max(0.0, worst->peak_bytes + worst->reserve.total()) : 0.0;
}

double memoryFloorBytes(const Plan &plan, const Catalog &catalog)
{
    return memoryFloorBytes(plan, *catalog.device(plan.cluster.device), *catalog.framework(plan.framework));
}

double memoryFloorBytes(const Plan &plan, const DeviceProfile &dev, const FrameworkProfile &fw,
                        RankShapeCache *shapes)
{
    if (plan.training.method.method != TrainingMethod::Full)
        return 0.0;
    const Context x(plan, dev, fw, shapes);
    return floorOf(x, computeQuantities(x, 0), commReserveBytes(x, 0));
}

namespace {

/// The floor's activation side from `from` into `to` (Quantities and FloorActivations name those
/// fields alike): the one list of them.
template <class From, class To>
void copyFloorActivations(const From &from, To &to)
{
    to.actLayer = from.actLayer;
    to.actLayerFull = from.actLayerFull;
    to.actTotal = from.actTotal;
    to.actFinal = from.actFinal;
    to.logitsForward = from.logitsForward;
    to.swapLayer = from.swapLayer;
    to.bwdTransient = from.bwdTransient;
    to.recomputeGroup = from.recomputeGroup;
    to.inflight = from.inflight;
}

/// The floor of `x`'s plan from its activation side and runtime reserve.
double floorFromActivations(const Context &x, const FloorActivations &act, double reserve)
{
    Quantities q;
    StageElements se;
    computeStates(x, 0, q, se);
    copyFloorActivations(act, q);
    return floorOf(x, q, reserve);
}

} // namespace

FloorActivations floorActivations(const Plan &plan, const DeviceProfile &dev, const FrameworkProfile &fw,
                                  RankShapeCache *shapes)
{
    FloorActivations a;
    if (plan.training.method.method != TrainingMethod::Full)
        return a;
    const Context x(plan, dev, fw, shapes);
    Quantities q;
    computeActivations(x, 0, StageElements{}, q); // what is trained matters only to other methods
    copyFloorActivations(q, a);
    return a;
}

double memoryFloorBytes(const Plan &plan, const DeviceProfile &dev, const FrameworkProfile &fw,
                        const FloorActivations &act)
{
    if (plan.training.method.method != TrainingMethod::Full)
        return 0.0;
    const Context x(plan, dev, fw);
    return floorFromActivations(x, act, commReserveBytes(x, 0));
}

double floorReserveBytes(const Plan &plan, const DeviceProfile &dev, const FrameworkProfile &fw,
                         RankShapeCache *shapes)
{
    return commReserveBytes(Context(plan, dev, fw, shapes), 0);
}

double memoryFloorBytes(const Plan &plan, const DeviceProfile &dev, const FrameworkProfile &fw,
                        const FloorActivations &act, double reserve, RankShapeCache *shapes)
{
    if (plan.training.method.method != TrainingMethod::Full)
        return 0.0;
    return floorFromActivations(Context(plan, dev, fw, shapes), act, reserve);
}

std::optional<MemoryEstimate> estimateMemoryWithinFloor(const Plan &plan, const Catalog &catalog, double limit)
{
    bool above = false;
    MemoryEstimate e = estimateMemoryImpl(plan, catalog, nullptr, limit, &above);
    if (above)
        return std::nullopt;
    return e;
}

void replayAllocator(const Plan &plan, const Catalog &catalog, MemoryEstimate &m, bool verdictOnly)
{
    replayAllocator(plan, catalog, m, verdictOnly, forEachInTurn);
}

void replayAllocator(const Plan &plan, const Catalog &catalog, MemoryEstimate &m, bool verdictOnly,
                     ForEachRank forEach)
{
    AllocatorReplay replay(plan, catalog, m, verdictOnly);
    forEach(replay.ranks(), [&](size_t k) { replay.replayRank(k); });
    replay.finish();
}

struct AllocatorReplay::Replayed
{
    DualReplay rp;
    double firstStepPeak = 0;
    TimelineTensor oomTensor;
};

AllocatorReplay::AllocatorReplay(const Plan &plan, const Catalog &catalog, MemoryEstimate &m, bool verdictOnly)
    : plan_(plan), catalog_(catalog), memory_(m), verdictOnly_(verdictOnly), order_(m.ranks.size()),
      done_(m.ranks.size()), firstOom_(m.ranks.size())
{
    for (size_t i = 0; i < order_.size(); ++i)
        order_[i] = i;
    if (verdictOnly)
        std::stable_sort(order_.begin(), order_.end(), [&](size_t a, size_t b) {
            return m.ranks[a].peak_bytes > m.ranks[b].peak_bytes;
        });
}

AllocatorReplay::~AllocatorReplay() = default;

// Each rank's replay on its own (they share nothing), then their figures in order: with
// `verdictOnly` up to the first that runs out, as if the others had not been replayed.
void AllocatorReplay::replayRank(size_t k)
{
    if (verdictOnly_ && k > firstOom_.load(std::memory_order_relaxed))
        return;
    const DeviceProfile &dev = *catalog_.device(plan_.cluster.device);
    const AllocatorRules rules = dev.vendor == "huawei" ? AllocatorRules::Npu : AllocatorRules::Cuda;
    const RankMemory &r = memory_.ranks[order_[k]];
    thread_local StepTimeline t; // its storage kept for the thread's next replay
    memoryTimeline(plan_, catalog_, r.stage, t);
    const double capacity = std::max(0.0, dev.hbm_bytes - r.reserve.context - r.reserve.comm_buffers);
    Replayed &d = done_[k];
    d.rp = replayOnDevice(t, rules, plan_.memory.allocator, capacity, false, verdictOnly_);
    d.firstStepPeak = t.peak_live[size_t(StepPart::FirstStep)];
    if (d.rp.device.oom) {
        d.oomTensor = t.tensors[size_t(t.events[size_t(d.rp.device.oom_event)].tensor)];
        size_t seen = firstOom_.load();
        while (k < seen && !firstOom_.compare_exchange_weak(seen, k)) {
        }
    }
}

void AllocatorReplay::finish()
{
    const DeviceProfile &dev = *catalog_.device(plan_.cluster.device);
    MemoryEstimate &m = memory_;
    bool fits = true;
    for (size_t k = 0; k < order_.size(); ++k) {
        RankMemory &r = m.ranks[order_[k]];
        const Replayed &d = done_[k];
        r.reserved_bytes = d.rp.room.peak_reserved;
        r.first_step_peak_bytes = d.firstStepPeak;
        r.oom = d.rp.device.oom;
        double reserved = d.rp.device.peak_reserved;
        if (r.oom) {
            const TimelineTensor &tt = d.oomTensor;
            r.oom_tensor = std::string(tensorKindKey(tt.kind));
            r.oom_layer = tt.layer;
            r.oom_phase = tt.phase;
            r.oom_step = std::string(stepPartKey(tt.part));
            r.oom_request_bytes = tt.bytes;
            // What the step needs: everything the allocator reserved on a device with room.
            reserved = std::max(d.rp.room.first_step_reserved, d.rp.room.peak_reserved);
        }
        r.reserve.allocator = std::max(0.0, reserved - r.peak_bytes);
        fits = fits && !r.oom;
        if (verdictOnly_ && r.oom)
            break;
    }
    double maxReserve = 0;
    for (const RankMemory &r : m.ranks)
        maxReserve = std::max(maxReserve, r.reserve.total());
    m.usable_bytes = std::max(0.0, dev.hbm_bytes - maxReserve);
    m.hbm_fits = fits;
    m.fits = fits && m.host.fits;
    m.replayed = true;
}

double savedBytesPerToken(const Plan &plan, const Catalog &catalog, int layer)
{
    const Context x(plan, *catalog.device(plan.cluster.device), *catalog.framework(plan.framework));
    return layerActivationBytes(x, layerKind(plan.model, layer), nullptr) / std::max(1.0, x.tokens);
}

StepTimeline memoryTimeline(const Plan &plan, const Catalog &catalog, int stage, int steadyLimit)
{
    StepTimeline t;
    memoryTimeline(plan, catalog, stage, t, steadyLimit);
    return t;
}

void memoryTimeline(const Plan &plan, const Catalog &catalog, int stage, StepTimeline &t, int steadyLimit)
{
    const DeviceProfile &dev = *catalog.device(plan.cluster.device);
    const FrameworkProfile &fw = *catalog.framework(plan.framework);
    const Context x(plan, dev, fw);
    const int s = std::clamp(stage, 0, x.pp - 1);
    StepShape shape = stepShape(x, computeQuantities(x, s), s);
    tensorParts(x, shape);
    t.tensors.clear();
    t.events.clear();
    t.marks.clear();
    t.repeats.clear();
    t.unmatched_frees = 0;
    t.stage = s;
    TimelineRecorder rec(t, steadyLimit);
    emitSetup(shape, rec);
    emitStep(shape, rec, true);
    emitStep(shape, rec, false);
    // What the recorder left out: alike steady micro-batches (whole periods under interleaving).
    const int units = std::max(1, shape.microbatches * shape.chunks);
    const int steady = units - std::clamp(shape.warmup, 0, units);
    if (!shape.interleaved) {
        t.omitted_microbatches = std::max(0, steady - 1 - steadyLimit);
    } else {
        const int period = std::max(1, shape.pp) * shape.chunks;
        const int periods = std::max(0, steady - period) / period;
        t.omitted_microbatches = (periods - shownPeriods(periods, period, steadyLimit)) * period / shape.chunks;
    }
}

} // namespace shardscope

namespace shardscope {

namespace {

std::string gib(double b) { return formatGiB(b); }
std::string num(double v, int d = 0) { return formatFixed(v, d); }
std::string id(std::string_view s) { return std::string(s); }

/// "q, v" for the adapted linears.
std::string targetList(uint8_t targets)
{
    std::string out;
    for (const std::string &n : targetNames(targets))
        out += (out.empty() ? "" : ", ") + n;
    return out;
}

} // namespace

// Every template is one phrase a translator sees whole (translations/*.ts, context
// "MemoryExplanation"); numbers with their units and identifiers (dtypes, options, phases) are
// its arguments.
MemoryExplanation explainMemory(const Plan &plan, const Catalog &catalog, const RankMemory &rank,
                                Phase phase)
{
    const DeviceProfile &dev = *catalog.device(plan.cluster.device);
    const FrameworkProfile &fw = *catalog.framework(plan.framework);
    const Context x(plan, dev, fw);
    const Quantities q = computeQuantities(x, rank.stage);
    const Breakdown &b = rank.phases[size_t(phase)];
    const auto &pa = plan.parallel;
    const auto &pr = plan.precision;
    MemoryExplanation ex;
    auto &P = ex[size_t(Component::Parameters)];
    auto &G = ex[size_t(Component::Gradients)];
    auto &M = ex[size_t(Component::MasterWeights)];
    auto &O = ex[size_t(Component::OptimizerStates)];
    auto &A = ex[size_t(Component::Activations)];
    auto &Lg = ex[size_t(Component::LogitsAndLoss)];
    auto &C = ex[size_t(Component::CommunicationBuffers)];
    auto &T = ex[size_t(Component::Transient)];

    const MethodOptions &method = plan.training.method;
    const bool partial = method.method != TrainingMethod::Full;
    const StageElements se = partial ? stageElements(plan, rank.stage) : StageElements{};
    // Gradients, master weights and optimizer states are of what is trained.
    const double elems = partial ? se.trained() : q.denseParams + q.expertParams;
    const std::string count = formatCount((long long)std::llround(elems));
    const std::string shard = num(x.shard);
    const bool full = pa.sharding == Sharding::Full;
    const bool optSh = pa.sharding != Sharding::None;
    const bool gradSh = pa.sharding == Sharding::Grads || full;
    // One template per phase, so that a translation names the phase in its own words.
    const char *heldAt =
        phase == Phase::Forward
            ? QT_TRANSLATE_NOOP("MemoryExplanation", "; held at the forward peak: %1")
            : (phase == Phase::Backward
                   ? QT_TRANSLATE_NOOP("MemoryExplanation", "; held at the backward peak: %1")
                   : QT_TRANSLATE_NOOP("MemoryExplanation", "; held at the optimizer_step peak: %1"));

    // --- parameters ---------------------------------------------------------------------------
    auto elemsText = [](double v) { return formatCount((long long)std::llround(v)); };
    // Routed experts shard over their own data-parallel group (world / (ep x etp x pp)): the
    // sharded formulas then give dense and expert elements apart.
    const bool expertSplit = !partial && q.expertParams > 0 && x.expertShard != x.shard;
    const std::string denseCount = elemsText(q.denseParams), expertCount = elemsText(q.expertParams);
    const std::string expertShardText = num(x.expertShard);
    if (partial && !plan.memory.offload.params) {
        const double frozen = se.frozenDense + se.frozenExpert;
        const double quantized = se.quantizedDense + se.quantizedExpert;
        const double adapters = se.adapterDense + se.adapterExpert;
        const double trainedBase = se.trainedDense + se.trainedExpert;
        if (quantized > 0)
            P.formula.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                            "%1 k-bit weights (%2, %3 B each with their constants) "
                                            "+ %4 other frozen params in fp32 + %5 adapter params "
                                            "x %6 B + %7 trained params x %8 B"),
                          {elemsText(quantized), id(toString(method.qlora.quant)),
                           num(quantizedBytesPerElement(method.qlora, double(plan.model.hidden)), 3),
                           elemsText(frozen - quantized), elemsText(adapters), num(x.bAdapter),
                           elemsText(trainedBase), num(x.bParams)});
        else
            P.formula.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                            "%1 frozen params x %2 B (%3) + %4 adapter params x %5 B "
                                            "+ %6 trained params x %7 B"),
                          {elemsText(frozen), num(x.bParams), id(toString(pr.params)),
                           elemsText(adapters), num(x.bAdapter), elemsText(trainedBase),
                           num(x.bParams)});
        if (full)
            P.formula.add(QT_TRANSLATE_NOOP("MemoryExplanation", ", all / %1 (dp x cp) = %2"),
                          {shard, gib(q.params)});
        else
            P.formula.add(QT_TRANSLATE_NOOP("MemoryExplanation", " = %1"), {gib(q.params)});
        switch (method.method) {
        case TrainingMethod::LoRA:
        case TrainingMethod::DoRA:
        case TrainingMethod::QLoRA:
            P.assumptions.add(
                method.method == TrainingMethod::DoRA
                    ? QT_TRANSLATE_NOOP("MemoryExplanation",
                                        "DoRA rank %1 on %2: the base stays frozen; each adapted "
                                        "linear gains A (r x in), B (out x r) and a magnitude "
                                        "vector, split like the layer under TP. ")
                    : QT_TRANSLATE_NOOP("MemoryExplanation",
                                        "LoRA rank %1 on %2: the base stays frozen; each adapted "
                                        "linear gains A (r x in) and B (out x r), split like the "
                                        "layer under TP. "),
                {num(method.lora.rank), id(targetList(adaptedTargets(plan)))});
            if (adaptersOnFusedModules(plan))
                P.assumptions.add(QT_TRANSLATE_NOOP(
                    "MemoryExplanation",
                    "MindSpeed-LLM adapts Megatron-Core's fused modules: linear_qkv (q, k and v "
                    "share one A) and linear_fc1 (gate and up share one A); their gradients are "
                    "in the main-gradient buffer. "));
            if (method.method == TrainingMethod::QLoRA)
                P.assumptions.add(QT_TRANSLATE_NOOP(
                    "MemoryExplanation",
                    "bitsandbytes stores the frozen linear weights k-bit; "
                    "prepare_model_for_kbit_training casts norms, biases, embedding and head to "
                    "fp32. "));
            if (method.lora.modules_to_save)
                P.assumptions.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                                    "modules_to_save: the original stays frozen "
                                                    "and a trained copy is kept beside it. "));
            break;
        case TrainingMethod::Freeze:
            P.assumptions.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                                "Freezing: the last %1 layers are trained whole; "
                                                "the rest keep their weights without gradients or "
                                                "optimizer states. "),
                              {num(method.freeze.last_layers)});
            break;
        case TrainingMethod::Full:
            break;
        }
    } else if (plan.memory.offload.params)
        P.formula.add(QT_TRANSLATE_NOOP(
            "MemoryExplanation", "0 (parameters offloaded to host memory; gathered per layer)"));
    else if (full && expertSplit)
        P.formula.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                        "(%1 dense params / %2 (dp x cp) + %3 expert params / %4 "
                                        "(expert dp)) x %5 B (%6) = %7"),
                      {denseCount, shard, expertCount, expertShardText, num(x.bParams),
                       id(toString(pr.params)), gib(q.params)});
    else if (full)
        P.formula.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                        "%1 params on this rank x %2 B (%3) / %4 (dp x cp) = %5"),
                      {count, num(x.bParams), id(toString(pr.params)), shard, gib(q.params)});
    else
        P.formula.add(
            QT_TRANSLATE_NOOP("MemoryExplanation", "%1 params on this rank x %2 B (%3) = %4"),
            {count, num(x.bParams), id(toString(pr.params)), gib(q.params)});
    if (q.computeCopies > 0 && phase != Phase::OptimizerStep)
        P.formula.add(
            phase == Phase::Backward
                ? QT_TRANSLATE_NOOP("MemoryExplanation",
                                    " + autocast %1 weight copies %2 (partly released)")
                : QT_TRANSLATE_NOOP("MemoryExplanation", " + autocast %1 weight copies %2"),
            {id(toString(pr.compute)), gib(q.computeCopies)});
    const std::string tp = num(x.tp);
    if (rank.has_embedding && rank.has_head)
        P.assumptions.add(
            QT_TRANSLATE_NOOP("MemoryExplanation",
                              "Layer weights split by tp = %1; norms replicated; embedding on "
                              "this stage; final norm and LM head on this stage. "),
            {tp});
    else if (rank.has_embedding)
        P.assumptions.add(
            QT_TRANSLATE_NOOP("MemoryExplanation",
                              "Layer weights split by tp = %1; norms replicated; embedding on "
                              "this stage. "),
            {tp});
    else if (rank.has_head)
        P.assumptions.add(
            QT_TRANSLATE_NOOP("MemoryExplanation",
                              "Layer weights split by tp = %1; norms replicated; final norm and "
                              "LM head on this stage. "),
            {tp});
    else
        P.assumptions.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                            "Layer weights split by tp = %1; norms replicated. "),
                          {tp});
    if (pa.pp > 1 && pa.customLayout()) {
        // The layer layout (core/layers.h): what sets this stage's layer count.
        std::string how;
        auto add = [&](const std::string &piece) { how += (how.empty() ? "" : ", ") + piece; };
        if (!pa.stage_layers.empty())
            add("stage_layers");
        if (pa.first_stage_layers > 0)
            add("first_stage_layers " + num(pa.first_stage_layers));
        if (pa.last_stage_layers > 0)
            add("last_stage_layers " + num(pa.last_stage_layers));
        if (pa.account_for_embedding)
            add("account_for_embedding");
        if (pa.account_for_loss)
            add("account_for_loss");
        if (!pa.pipeline_layout.empty())
            add("pipeline_layout " + pa.pipeline_layout);
        P.assumptions.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                            "This stage holds %1 of the %2 decoder layers (uneven "
                                            "layout: %3). "),
                          {num(rank.layers), num(plan.model.layers), id(how)});
    }
    {
        const ModelShape &mo = plan.model;
        if (mo.moe.enabled())
            P.assumptions.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                                "Routed experts: %1 of %2 per rank (ep = %3), each "
                                                "split by etp = %4; their states shard over %5 "
                                                "expert-data-parallel ranks. "),
                              {num(double(mo.moe.experts) / x.ep), num(mo.moe.experts), num(x.ep),
                               num(x.etp), num(x.expertShard)});
        if (pa.replicas() > 1)
            P.assumptions.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                                "HSDP: the sharded states are split over dp_shard x cp = "
                                                "%1 ranks and replicated over %2 groups (the formulas' "
                                                "dp x cp is that shard group). "),
                              {num(x.shard), num(pa.replicas())});
        if (mo.mla_attention() && x.tp > 1)
            P.assumptions.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                                "MLA's down-projections and latent norms are "
                                                "duplicated on every TP rank. "));
        if (rank.has_embedding && mo.position_embedding == PositionEmbedding::Learned)
            P.assumptions.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                                "The learned position table (%1 rows) is on this "
                                                "stage, replicated across TP. "),
                              {num(double(mo.max_positions))});
        if (rank.has_head && mo.mtp_layers > 0)
            P.assumptions.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                                "%1 MTP module(s) on this stage, %2 params each on "
                                                "this rank (routed experts split by ep; embedding "
                                                "and head shared with the model). "),
                              {num(mo.mtp_layers),
                               elemsText(mtpModuleOnRank(mo, x.tp, x.plan.parallel.ep, x.plan.parallel.expertTp())
                                             .total())});
    }
    if (q.hpzSecondary > 0)
        P.assumptions.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                            "ZeRO++ hpZ: a secondary copy of the parameters, %1 "
                                            "params / %2 (zero_hpz_partition_size) x %3 B = %4, "
                                            "included; made as the first forward releases each "
                                            "layer, dropped after the optimizer step. "),
                          {elemsText(q.denseParams + q.expertParams), num(pa.zero_hpz_partition_size),
                           num(x.bParams), gib(q.hpzSecondary)});
    if (pr.reuse_fp32_param)
        P.assumptions.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                            "reuse-fp32-param: the bf16 parameters live in the fp32 "
                                            "master copy's memory, 2 B per parameter less (/ dp "
                                            "with the distributed optimizer). "));
    if (q.computeCopies > 0)
        P.assumptions.add(QT_TRANSLATE_NOOP(
            "MemoryExplanation", "torch.autocast caches compute-dtype copies of the weights for "
                                 "forward; autograd frees them layer by layer in backward."));
    if (x.plan.model.vocab != x.unpaddedVocab && (rank.has_embedding || rank.has_head))
        P.assumptions.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                            "Vocabulary padded from %1 to %2 (a multiple of %3 x tp "
                                            "= %4: --make-vocab-size-divisible-by). "),
                          {num(double(x.unpaddedVocab)), num(double(x.plan.model.vocab)),
                           num(vocabDivisor(plan, fw)), num(double(vocabDivisor(plan, fw)) * x.tp)});
    if (q.buffers && !plan.memory.offload.params && plan.memory.param_and_grad_buffer_pad > 0)
        P.assumptions.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                            "MindSpeed's --param-and-grad-buffer-pad %1: every "
                                            "shard of a bucket starts on %1 bytes. "),
                          {num(plan.memory.param_and_grad_buffer_pad)});
    if (q.buffers && !plan.memory.offload.params)
        P.assumptions.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                            "Megatron-Core's contiguous param buffer (param_data, "
                                            "%1): %2 bucket(s), each end padded to a multiple of "
                                            "lcm(dp x cp, 128) = %3, each parameter aligned to 64 "
                                            "elements: %4 padding elements included. "),
                          {id(toString(pr.params)), num(q.buffer.dense.buckets + q.buffer.expert.buckets),
                           num(bucketEndDivisor(int(x.shard), fw.pad_buckets_for_high_nccl_busbw,
                                                plan.memory.param_and_grad_buffer_pad, int(x.bParams))),
                           elemsText(q.bufferPadding)});

    // --- gradients ----------------------------------------------------------------------------
    // Bytes per trained element (adapters and trained base weights may differ in dtype).
    auto perElement = [&](double bytes, bool sharded, double fallback) {
        if (!partial || elems <= 0)
            return num(fallback);
        return num(bytes * (sharded ? x.shard : 1.0) / elems, 2);
    };
    if (gradSh && expertSplit)
        G.formula.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                        "(%1 dense / %2 (dp x cp) + %3 expert / %4 (expert dp)) x "
                                        "%5 B = %6"),
                      {denseCount, shard, expertCount, expertShardText, num(x.bGrads), gib(q.grads)});
    else if (gradSh)
        G.formula.add(QT_TRANSLATE_NOOP("MemoryExplanation", "%1 x %2 B / %3 (dp x cp) = %4"),
                      {count, perElement(q.grads, true, x.bGrads), shard, gib(q.grads)});
    else
        G.formula.add(QT_TRANSLATE_NOOP("MemoryExplanation", "%1 x %2 B = %3"),
                      {count, perElement(q.grads, false, x.bGrads), gib(q.grads)});
    G.formula.add(heldAt, {gib(b[Component::Gradients])});
    if (!fw.grads_set_to_none)
        G.assumptions.add(
            QT_TRANSLATE_NOOP("MemoryExplanation",
                              "A persistent gradient buffer (%1) accumulates in place."),
            {id(toString(mainGradDtype(plan, fw) != DType::None ? mainGradDtype(plan, fw) : pr.grads))});
    else if (x.m > 1)
        G.assumptions.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                            "Gradients are created in backward and freed by "
                                            "zero_grad(set_to_none=True) after the step; with %1 "
                                            "micro-batches they persist across the step."),
                          {num(x.m)});
    else
        G.assumptions.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                            "Gradients are created in backward and freed by "
                                            "zero_grad(set_to_none=True) after the step."));
    if (plan.memory.offload.grads)
        G.assumptions.add(
            QT_TRANSLATE_NOOP("MemoryExplanation", " Gradients are offloaded to host memory."));
    else if (q.buffers)
        G.assumptions.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                            " grad_data has the param buffer's layout (%1 padding "
                                            "elements included); each bucket is reduce-scattered in "
                                            "place into the rank's shard of it, so there is no "
                                            "separate reduce bucket."),
                          {elemsText(q.bufferPadding)});

    // --- master weights -----------------------------------------------------------------------
    if (!x.masterSeparate || (partial && q.master <= 0))
        M.formula.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                        "0: the optimizer updates the %1 parameters directly"),
                      {id(toString(partial && q.master <= 0 && se.adapterDense + se.adapterExpert > 0
                                       ? (x.bAdapter == 4.0 ? DType::FP32 : pr.compute)
                                       : pr.params))});
    else if (optSh && expertSplit)
        M.formula.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                        "(%1 dense / %2 (dp x cp) + %3 expert / %4 (expert dp)) x "
                                        "%5 B (%6) = %7"),
                      {denseCount, shard, expertCount, expertShardText, num(x.bMaster),
                       id(toString(pr.master_weights)), gib(q.master)});
    else if (optSh)
        M.formula.add(
            QT_TRANSLATE_NOOP("MemoryExplanation", "%1 x %2 B (%3) / %4 (dp x cp) = %5"),
            {count, perElement(q.master, true, x.bMaster), id(toString(pr.master_weights)), shard,
             gib(q.master)});
    else
        M.formula.add(QT_TRANSLATE_NOOP("MemoryExplanation", "%1 x %2 B (%3) = %4"),
                      {count, perElement(q.master, false, x.bMaster), id(toString(pr.master_weights)),
                       gib(q.master)});
    if (plan.memory.offload.optimizer)
        M.assumptions.add(QT_TRANSLATE_NOOP(
            "MemoryExplanation", "Optimizer (master weights and states) offloaded to host."));
    else if (optSh)
        M.assumptions.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                            "Sharded with the optimizer states (ZeRO-1 and up)."));
    else
        M.assumptions.add(QT_TRANSLATE_NOOP(
            "MemoryExplanation", "Replicated on every data-parallel rank (no sharding)."));
    if (q.buffers && !plan.memory.offload.optimizer)
        M.assumptions.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                            " The distributed optimizer owns 1/%1 of every bucket; "
                                            "the fullest rank's shard holds %2 parameter elements "
                                            "(%3 above an even split; padding gets no master copy "
                                            "or states)."),
                          {num(x.shard), elemsText(q.denseParams / x.shard + q.expertParams / x.expertShard + q.shardExcess),
                           elemsText(q.shardExcess)});

    // --- optimizer states ---------------------------------------------------------------------
    if (structuredOptimizer(pr) && !plan.memory.offload.optimizer) {
        const StageElements t = partial ? se : stageElements(plan, rank.stage);
        switch (pr.optimizer) {
        case Optimizer::SGD:
            O.formula.add(QT_TRANSLATE_NOOP("MemoryExplanation", "0: SGD without momentum keeps no state"));
            break;
        case Optimizer::Adafactor:
            O.formula.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                            "a row and a column per matrix (%1) + %2 vector "
                                            "elements, x %3 B = %4"),
                          {elemsText(t.trainedMatrixEdges), elemsText(t.trainedVectors), num(x.bState),
                           gib(q.states)});
            break;
        case Optimizer::AdamW8bit:
            O.formula.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                            "%1 x 2 states x (1 B + an fp32 absmax per 2048) = %2"),
                          {count, gib(q.states)});
            break;
        case Optimizer::PagedAdamW:
        case Optimizer::PagedAdamW8bit:
            O.formula.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                            "0 at the peak: %1 of paged states live in host-backed "
                                            "memory and page in for the step"),
                          {gib(rank.host_paged_bytes)});
            break;
        case Optimizer::Muon:
            O.formula.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                            "%1 matrix elements x 1 momentum + %2 others x 2 AdamW "
                                            "states, x %3 B = %4"),
                          {elemsText(std::min(elems, t.trainedHiddenMatrices)),
                           elemsText(std::max(0.0, elems - t.trainedHiddenMatrices)), num(x.bState),
                           gib(q.states)});
            break;
        default:
            break;
        }
        if (optSh)
            O.formula.add(QT_TRANSLATE_NOOP("MemoryExplanation", ", sharded over %1 (dp x cp)"), {shard});
    } else if (optSh && expertSplit)
        O.formula.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                        "(%1 dense / %2 (dp x cp) + %3 expert / %4 (expert dp)) x "
                                        "%5 states x %6 B = %7"),
                      {denseCount, shard, expertCount, expertShardText, num(x.nStates), num(x.bState),
                       gib(q.states)});
    else if (optSh)
        O.formula.add(
            QT_TRANSLATE_NOOP("MemoryExplanation", "%1 x %2 states x %3 B / %4 (dp x cp) = %5"),
            {count, num(x.nStates), num(x.bState), shard, gib(q.states)});
    else
        O.formula.add(QT_TRANSLATE_NOOP("MemoryExplanation", "%1 x %2 states x %3 B = %4"),
                      {count, num(x.nStates), num(x.bState), gib(q.states)});
    O.assumptions.add(
        QT_TRANSLATE_NOOP("MemoryExplanation", "%1: %2 state tensor(s) per parameter in %3."),
        {id(toString(pr.optimizer)), num(x.nStates), id(toString(pr.optimizer_state))});

    // --- activations --------------------------------------------------------------------------
    const double perToken = q.actLayer / std::max(1.0, x.tokens);
    if (chunksDifferInRecompute(x) && !plan.memory.offload.activations) {
        std::string units, recomputed;
        for (int c = 0; c < x.v; ++c) {
            units += (c ? ", " : "") + std::to_string(warmupUnitsOfChunk(x, rank.stage, c));
            recomputed +=
                (c ? ", " : "") + std::to_string(x.layout.chunkBlockRecomputed(
                                      rank.stage, c, plan.memory.recompute_num_layers, true));
        }
        A.formula.add(
            QT_TRANSLATE_NOOP("MemoryExplanation",
                              "%1 layers x %2 B/token on average x %3 tokens, each model chunk's "
                              "for its micro-batches in flight (%4) with its first %5 layer(s) "
                              "recomputed = %6"),
            {num(x.layersOf(rank.stage)), num(perToken, 0), num(x.tokens, 0), id(units),
             id(recomputed), gib(q.actTotal)});
    } else if (plan.memory.offload.activations &&
               q.actTotal < x.layersOf(rank.stage) * q.inflight * q.actLayer)
        A.formula.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                        "(%1 model chunk(s) in flight + 1) x one layer's %2 B/token x %3 tokens = %4"),
                      {num(chunksInFlight(x, q.inflight)), num(perToken, 0), num(x.tokens, 0), gib(q.actTotal)});
    else
        A.formula.add(
            QT_TRANSLATE_NOOP("MemoryExplanation",
                              "%1 layers x %2 B/token x %3 tokens x %4 micro-batch(es) in flight = %5"),
            {num(x.layersOf(rank.stage)), num(perToken, 0), num(x.tokens, 0), num(q.inflight, 2),
             gib(q.actTotal)});
    if (q.actFinal > 0 && plan.model.mtp_layers > 0)
        A.formula.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                        " + final norm, head input and %1 MTP module(s) %2"),
                      {num(plan.model.mtp_layers), gib(q.actFinal)});
    else if (q.actFinal > 0)
        A.formula.add(QT_TRANSLATE_NOOP("MemoryExplanation", " + final norm and head input %1"),
                      {gib(q.actFinal)});
    if (q.actEmbedding > 0)
        A.formula.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                        " + the embedding's dropout mask, %1 B/token (%2 per micro-batch until "
                                        "its embedding backward)"),
                      {num(q.actEmbedding / std::max(1.0, x.tokens), 0), formatBytes(q.actEmbedding)});
    const std::string recompute = id(toString(plan.memory.recompute));
    if (plan.memory.recompute == Recompute::Full)
        A.assumptions.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                            "Recompute %1 (each layer keeps only its input)"),
                          {recompute});
    else
        A.assumptions.add(QT_TRANSLATE_NOOP("MemoryExplanation", "Recompute %1"), {recompute});
    if (chunksDifferInRecompute(x))
        A.assumptions.add(
            QT_TRANSLATE_NOOP("MemoryExplanation",
                              ", method block per pipeline rank (MindSpeed's "
                              "--enable-recompute-layers-per-pp-rank): %1 of the stage's %2 "
                              "layers recomputed, layer l of chunk c being the "
                              "(l x %3 + c)-th, the others keep everything"),
            {num(plan.memory.recompute_num_layers), num(x.layersOf(rank.stage)), num(x.v)});
    else if (plan.memory.recompute == Recompute::Full &&
             plan.memory.recompute_method == RecomputeMethod::Block)
        A.assumptions.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                            ", method block: the first %1 of each chunk's %2 layers "
                                            "recomputed, the others keep everything"),
                          {num(plan.memory.recompute_num_layers), num(x.largestChunkOf(rank.stage))});
    else if (plan.memory.recompute == Recompute::Full && plan.memory.recompute_num_layers > 1)
        A.assumptions.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                            ", method uniform: groups of %1 layers, one input kept "
                                            "per group, a group recomputed at once"),
                          {num(plan.memory.recompute_num_layers)});
    if (plan.memory.recompute_activation_function)
        A.assumptions.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                            "; the FFN activation recomputed (its output not kept)"));
    if (plan.memory.recompute_norm)
        A.assumptions.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                            "; the norms recomputed (their outputs not kept)"));
    const std::string attention = id(toString(plan.memory.attention));
    if (plan.memory.attention == Attention::Flash)
        A.assumptions.add(
            QT_TRANSLATE_NOOP("MemoryExplanation", "; %1 attention (no s x s matrices kept)"),
            {attention});
    else
        A.assumptions.add(
            QT_TRANSLATE_NOOP("MemoryExplanation",
                              "; %1 attention (fp32 softmax and its cast kept per score)"),
            {attention});
    if (plan.memory.attention == Attention::Flash && x.env.flashStatBytes != kLogSumExpBytes)
        A.assumptions.add(
            QT_TRANSLATE_NOOP("MemoryExplanation",
                              "; torch_npu's npu_fusion_attention keeps its softmax max "
                              "and sum for backward, 8 fp32 values each per head and "
                              "token (%1 B), where CUDA's flash kernels keep one fp32 "
                              "log-sum-exp"),
            {num(x.env.flashStatBytes)});
    if (x.env.flashOutputCopy)
        A.assumptions.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                            "; run in the (b, s) layout: its output kept for its "
                                            "backward and a copy in (s, b) kept by the output projection"));
    if (plan.model.ffn == FfnKind::SwiGLU && x.fusedSwiglu)
        A.assumptions.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                            "; SwiGLU fused (keeps gate|up and its output)"));
    else if (plan.model.ffn == FfnKind::SwiGLU)
        A.assumptions.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                            "; SwiGLU unfused (keeps gate, up, silu(gate) and the product)"));
    if (plan.model.norm == NormKind::LayerNorm)
        A.assumptions.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                            "; LayerNorm (its input and fp32 mean and rstd per token)"));
    else
        A.assumptions.add(QT_TRANSLATE_NOOP("MemoryExplanation", "; norm %1"), {fw.norm});
    const ModelShape &mo = plan.model;
    if (mo.mla_attention())
        A.assumptions.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                            "; multi-head latent attention: the latents (q %1, kv %2) "
                                            "and their norms on every TP rank, q and k of %3 and v of "
                                            "%4 per head"),
                          {num(double(mo.mla.q_lora_rank)), num(double(mo.mla.kv_lora_rank)),
                           num(double(mo.mla.qkHeadDim())), num(double(mo.mla.v_head_dim))});
    if (mo.qk_norm)
        A.assumptions.add(QT_TRANSLATE_NOOP("MemoryExplanation", "; QK norms save q and k before RoPE"));
    if (const double rope = ropeSavedPerToken(x.env, mo); rope > 0)
        A.assumptions.add(
            x.env.ropeKeepsInput
                ? QT_TRANSLATE_NOOP(
                      "MemoryExplanation",
                      "; RoPE (npu_rotary_mul) keeps the q and k it rotates (k a view "
                      "of the whole q/k/v projection) and its cos and sin: %1 B/token")
                : QT_TRANSLATE_NOOP("MemoryExplanation",
                                    "; RoPE keeps the cos and sin it makes for q and for k in each "
                                    "layer: %1 B/token"),
            {num(rope)});
    if (mo.moe.enabled()) {
        const MoeRouting route = moeRouting(mo, pa);
        const LayerMix mix = x.stageMix(rank.stage);
        A.assumptions.add(
            QT_TRANSLATE_NOOP("MemoryExplanation",
                              "; MoE in %1 of this stage's %2 layers: %3 routed copies per token "
                              "(top_k %4 x load %5, gathered over etp under SP) keep the expert's "
                              "input, intermediates and output; the router keeps fp32 probabilities"),
            {num(mix.moe), num(mix.total()), num(route.copies, 2), num(mo.moe.top_k),
             num(route.load, 2)});
        if (mo.moe.router_fp32)
            A.assumptions.add(QT_TRANSLATE_NOOP("MemoryExplanation", " and an fp32 copy of its input"));
        if (mo.moe.shared_experts > 0)
            A.assumptions.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                                "; %1 shared expert(s) of width %2 like a dense FFN"),
                              {num(mo.moe.shared_experts), num(double(mo.moe.shared_expert_ffn_hidden))});
        if (mo.moe.capacity_factor > 0)
            A.assumptions.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                                "; capacity factor %1: the busiest rank assumed at the cap"),
                              {num(mo.moe.capacity_factor, 2)});
        else if (mo.moe.imbalance == 1.0)
            A.assumptions.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                                "; dropless routing assumed balanced (set "
                                                "model.moe.imbalance for the busiest rank's margin)"));
    }

    if (x.r == 4.0)
        A.assumptions.add(
            QT_TRANSLATE_NOOP("MemoryExplanation", "; fp32 residual stream under autocast"));
    if (pa.sp)
        A.assumptions.add(
            QT_TRANSLATE_NOOP("MemoryExplanation", "; sequence-parallel regions split by tp"));
    if (x.cp > 1 && pa.cp_algo == CpAlgo::Ring)
        A.assumptions.add(QT_TRANSLATE_NOOP("MemoryExplanation", "; sequence split by cp = %1"),
                          {num(x.cp)});
    else if (x.cp > 1 && pa.cp_algo == CpAlgo::Ulysses && !x.env.kvRepeated)
        A.assumptions.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                            "; sequence split by cp = %1, attention by heads "
                                            "(Ulysses: the same bytes saved as the ring)"),
                          {num(x.cp)});
    else if (x.cp > 1 && pa.cp_algo == CpAlgo::Ulysses)
        A.assumptions.add(
            QT_TRANSLATE_NOOP("MemoryExplanation",
                              "; sequence split by cp = %1, attention by heads (Ulysses)"),
            {num(x.cp)});
    else if (x.cp > 1)
        A.assumptions.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                            "; sequence split by cp = %1: heads over Ulysses "
                                            "groups of %2, a ring of %3 across them"),
                          {num(x.cp), num(pa.ulyssesDegree()), num(pa.ringDegree())});
    if (x.env.kvRepeated)
        A.assumptions.add(
            QT_TRANSLATE_NOOP("MemoryExplanation",
                              "; K and V repeated from %1 to %2 heads per TP rank before "
                              "Ulysses' all-to-all (MindSpeed-LLM's "
                              "--kv-head-repeat-before-uly-alltoall): attention keeps "
                              "them at the query width"),
            {num(double(plan.model.kv_heads) / x.tp), num(double(plan.model.heads) / x.tp)});
    if ((x.dropout.hidden > 0 || x.dropout.attention > 0) && plan.memory.attention == Attention::Flash)
        A.assumptions.add(
            QT_TRANSLATE_NOOP("MemoryExplanation",
                              "; dropout hidden %1 (a one-byte mask after attention and after the "
                              "FFN), attention %2 (flash attention keeps only its RNG state)"),
            {num(x.dropout.hidden, 2), num(x.dropout.attention, 2)});
    else if (x.dropout.hidden > 0 || x.dropout.attention > 0)
        A.assumptions.add(
            QT_TRANSLATE_NOOP("MemoryExplanation",
                              "; dropout hidden %1 (a one-byte mask after attention and after the "
                              "FFN), attention %2 (a one-byte mask per score)"),
            {num(x.dropout.hidden, 2), num(x.dropout.attention, 2)});
    else
        A.assumptions.add(QT_TRANSLATE_NOOP("MemoryExplanation", "; dropout off"));
    A.assumptions.add(QT_TRANSLATE_NOOP(
        "MemoryExplanation", ". Tokens per micro-batch on this rank: seq_len x micro_batch / cp."));
    if (plan.memory.offload.activations)
        A.assumptions.add(QT_TRANSLATE_NOOP(
            "MemoryExplanation", " Activations offloaded to host; each model chunk in flight keeps its "
                                 "last layer's on the device until its backward, and the one running one "
                                 "layer more."));
    if (q.swapLayer > 0)
        A.assumptions.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                            " MindSpeed swap-attention: %1 per layer (what the input norm, "
                                            "attention and post-attention norm save) waits on the host "
                                            "between the layer's forward and its backward; on the device "
                                            "only the running layer's, counted as working memory."),
                          {gib(q.swapLayer)});
    if (partial)
        A.assumptions.add(QT_TRANSLATE_NOOP(
            "MemoryExplanation",
            " A frozen linear keeps its weight, not its input, for backward; each adapter keeps its "
            "input (cast to the adapter dtype, or dropped with its mask) and its rank-wide "
            "intermediate; frozen layers below every trained one record nothing unless gradient "
            "checkpointing makes the embedding output require grad."));

    // --- logits and loss ----------------------------------------------------------------------
    if (rank.has_head) {
        const double n = x.tokens * double(x.plan.model.vocab) / x.tp;
        const double perLogit = (phase == Phase::Backward ? q.logitsBackward : q.logitsForward) / n;
        const LossHead head = lossHeadOf(plan, fw);
        if (head == LossHead::FusedLinear) {
            const double vocab = double(x.plan.model.vocab) / x.tp;
            Lg.formula.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                             "chunks of %1 tokens x %2 vocab x %3 B, and the "
                                             "gradients of the head input (and of a trained head "
                                             "weight) made in forward = %4"),
                           {num(fusedLinearChunkTokens(x.tokens, vocab, double(x.plan.model.hidden)), 0),
                            num(vocab, 0), num(x.c), gib(b[Component::LogitsAndLoss])});
            Lg.assumptions.add(QT_TRANSLATE_NOOP(
                "MemoryExplanation",
                "Fused linear cross entropy (Liger, Cut Cross-Entropy): the head and the loss run "
                "chunk by chunk and the full logits never exist."));
        } else {
            // The product is what the loss holds while it runs; the phase's peak can come after
            // the logits are freed (a later layer's backward), and then holds less of them.
            const double held = perLogit * n;
            const double atPeak = b[Component::LogitsAndLoss];
            if (std::abs(held - atPeak) <= 1e-6 * std::max(1.0, held))
                Lg.formula.add(QT_TRANSLATE_NOOP("MemoryExplanation", "%1 tokens x %2 vocab x %3 B = %4"),
                               {num(x.tokens, 0), num(double(x.plan.model.vocab) / x.tp, 0),
                                num(perLogit, head == LossHead::Chunked ? 2 : 0), gib(held)});
            else
                Lg.formula.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                                 "%1 tokens x %2 vocab x %3 B = %4 while the loss runs; "
                                                 "%5 of it at this phase's peak, which comes after it"),
                               {num(x.tokens, 0), num(double(x.plan.model.vocab) / x.tp, 0),
                                num(perLogit, head == LossHead::Chunked ? 2 : 0), gib(held), gib(atPeak)});
        }
        if (head == LossHead::Chunked)
            Lg.assumptions.add(QT_TRANSLATE_NOOP(
                "MemoryExplanation",
                "Chunked cross entropy (torchtune, %1 chunks): the logits in the compute dtype, "
                "each chunk upcast to fp32 on its own; the chunks' fp32 log-softmax is kept for "
                "backward."),
                {num(plan.memory.loss_chunks)});
        else if (head == LossHead::HfUpcast)
            Lg.assumptions.add(QT_TRANSLATE_NOOP(
                "MemoryExplanation", "Hugging Face loss: logits in the compute dtype, an fp32 "
                                     "copy and the fp32 log-softmax at the end of forward; three "
                                     "fp32 vocab-sized tensors in the loss backward."));
        else if (head == LossHead::FusedFp32)
            Lg.assumptions.add(QT_TRANSLATE_NOOP(
                "MemoryExplanation", "Fused vocab-parallel cross entropy: fp32 logits turned "
                                     "into the softmax in place and reused as the gradient."));
        else if (head == LossHead::FusedFp32Copy)
            Lg.assumptions.add(QT_TRANSLATE_NOOP(
                "MemoryExplanation",
                "Vocab-parallel cross entropy as Megatron-LM ran it before 2024-06: the maximum "
                "subtracted out of place, so the logits, their fp32 copy and the shifted fp32 "
                "tensor exist at once; the shifted tensor becomes the softmax and the gradient."));
        if (x.plan.model.vocab != x.unpaddedVocab)
            Lg.assumptions.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                                 " The logits span the padded vocabulary (%1, not %2)."),
                               {num(double(x.plan.model.vocab)), num(double(x.unpaddedVocab))});
    } else {
        Lg.formula.add(
            QT_TRANSLATE_NOOP("MemoryExplanation", "0: the LM head is on the last pipeline stage"));
    }

    // --- communication buffers ----------------------------------------------------------------
    auto addC = [&](double v, const char *what) {
        if (v <= 0)
            return;
        if (!C.formula.empty())
            C.formula.add(" + ");
        C.formula.add(what, {gib(v)});
    };
    addC(q.ddpBuckets, QT_TRANSLATE_NOOP("MemoryExplanation", "DDP gradient buckets %1"));
    if (phase == Phase::Forward)
        addC(q.fsdpForward, QT_TRANSLATE_NOOP("MemoryExplanation", "gathered layers %1"));
    else if (phase == Phase::Backward)
        addC(q.fsdpBackward, QT_TRANSLATE_NOOP("MemoryExplanation",
                                               "gathered layers and unsharded layer gradients %1"));
    if (phase != Phase::OptimizerStep)
        addC(q.rootGathered,
             QT_TRANSLATE_NOOP("MemoryExplanation", "gathered root (embedding, head) %1"));
    addC(q.p2p, QT_TRANSLATE_NOOP("MemoryExplanation", "pipeline send/recv %1"));
    if (phase == Phase::OptimizerStep)
        addC(q.keptInputs, QT_TRANSLATE_NOOP("MemoryExplanation",
                                             "the model chunks' last inputs and their gradients %1"));
    if (q.spGatherKept)
        addC(q.spGather,
             QT_TRANSLATE_NOOP("MemoryExplanation", "sequence-parallel all-gather buffer %1"));
    if (phase != Phase::OptimizerStep)
        addC(q.reduceBucket, QT_TRANSLATE_NOOP("MemoryExplanation", "reduce bucket %1"));
    if (C.formula.empty())
        C.formula.add("0");
    if (q.ddpBuckets > 0)
        C.assumptions.add(QT_TRANSLATE_NOOP(
            "MemoryExplanation", "DDP (gradient_as_bucket_view=False) keeps flat bucket copies "
                                 "of every gradient for its all-reduce. "));
    if (full && fw.fsdp_root_stays_gathered)
        C.assumptions.add(
            QT_TRANSLATE_NOOP("MemoryExplanation",
                              "FSDP gathers %1 layers at a time (current + prefetch) in the "
                              "compute dtype; backward adds the layer's unsharded gradients "
                              "and the reduce-scatter input; the root module (embedding, "
                              "final norm, head) stays gathered from forward to backward "
                              "(FSDP2). "),
            {num(1 + fw.fsdp_prefetch_layers)});
    else if (full)
        C.assumptions.add(
            QT_TRANSLATE_NOOP("MemoryExplanation",
                              "FSDP gathers %1 layers at a time (current + prefetch) in the "
                              "compute dtype; backward adds the layer's unsharded gradients "
                              "and the reduce-scatter input. "),
            {num(1 + fw.fsdp_prefetch_layers)});
    if (q.p2p > 0)
        C.assumptions.add(QT_TRANSLATE_NOOP(
            "MemoryExplanation", "Pipeline stages double-buffer the activations they send and "
                                 "receive. "));
    if (q.keptInputs > 0)
        C.assumptions.add(
            QT_TRANSLATE_NOOP("MemoryExplanation",
                              "Megatron receives each micro-batch's input into a fresh tensor and "
                              "hands it to the model chunk (set_input_tensor), which keeps it; "
                              "backward fills its gradient to send back. After the step each of "
                              "the %1 chunks of this stage that receive their input keeps the "
                              "last one and its gradient (%2) until its next forward. "),
            {num(q.keptInputChunks), gib(q.keptInputs)});
    if (q.spGatherKept)
        C.assumptions.add(QT_TRANSLATE_NOOP(
            "MemoryExplanation",
            "Megatron's local tensor-parallel linears all-gather their sequence-parallel input "
            "(tokens x hidden) into one global memory buffer, kept for the run and used again for "
            "the weight gradients. "));
    if (q.reduceBucket > 0)
        C.assumptions.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                            "ZeRO-1/2 reduce gradients through buckets of %1. "),
                          {gib(q.reduceBucket)});

    // --- transient ----------------------------------------------------------------------------
    if (phase == Phase::OptimizerStep)
        T.formula.add(QT_TRANSLATE_NOOP("MemoryExplanation", "optimizer temporaries (%1) %2"),
                      {id(toString(x.optImpl)), gib(q.optTemp)});
    else if (phase == Phase::Backward)
        T.formula.add(QT_TRANSLATE_NOOP("MemoryExplanation", "layer backward working set %1"),
                      {gib(q.bwdTransient)});
    else
        T.formula.add(QT_TRANSLATE_NOOP("MemoryExplanation", "forward working set %1"),
                      {gib(q.fwdTransient)});
    if (phase == Phase::OptimizerStep && (q.clipTemp > 0 || q.paramCopyTemp > 0)) {
        T.formula.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                        "; before it, the gradient clip's scaled copy of the largest "
                                        "gradient %1"),
                      {gib(q.clipTemp)});
        if (q.paramCopyTemp > 0)
            T.formula.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                            "; after it, the largest master parameter's copy %1"),
                          {gib(q.paramCopyTemp)});
        T.assumptions.add(QT_TRANSLATE_NOOP(
            "MemoryExplanation",
            "Without apex (Ascend), Megatron's multi_tensor_scale is dst.copy_(src * scale): the "
            "gradient clip (when the gradient norm exceeds --clip-grad, assumed here) and, without "
            "the distributed optimizer, the copy of the master parameters into the model make a "
            "scaled copy of one tensor at a time, the largest as Megatron-Core fuses them "
            "(linear_qkv, linear_fc1, the embedding and the output layer). "));
    }
    if (phase == Phase::OptimizerStep && q.reuseTemp > 0) {
        T.formula.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                        "; after it, reuse-fp32-param's conversion of the master "
                                        "buffer back to bf16 and residuals %1"),
                      {gib(q.reuseTemp)});
        T.assumptions.add(QT_TRANSLATE_NOOP(
            "MemoryExplanation",
            "MindSpeed's reuse-fp32-param turns the buffer it shares between the fp32 master and "
            "the bf16 parameters into fp32 before the step and back after it by transposing a bf16 "
            "view into a contiguous copy: parameter by parameter (4 B per element of the largest) "
            "with one rank in the optimizer's data-parallel group, else block by block through a "
            "64 MiB workspace. "));
    }
    if (phase != Phase::OptimizerStep)
        T.assumptions.add(QT_TRANSLATE_NOOP(
            "MemoryExplanation", "Gradients of the FFN intermediates and the residual, flash "
                                 "attention's dq/dk/dv with an fp32 dq accumulator, the "
                                 "recomputed layer under full recompute."));
    if (phase != Phase::OptimizerStep && q.spGather > 0 && !q.spGatherKept)
        T.assumptions.add(
            QT_TRANSLATE_NOOP("MemoryExplanation",
                              " Sequence parallelism all-gathers each column-parallel "
                              "linear's input into a fresh tensor (%1), in forward and "
                              "again for the weight gradient."),
            {gib(q.spGather)});
    if (phase != Phase::OptimizerStep && pa.ringDegree() > 1)
        T.assumptions.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                            " Ring attention double-buffers the K/V block arriving "
                                            "from its neighbour (the K/V and dK/dV blocks in backward)."));
    if (phase != Phase::OptimizerStep && pa.ulyssesDegree() > 1)
        T.assumptions.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                            " Ulysses' all-to-alls hold q, k, v (and the output) in "
                                            "both layouts while they exchange them."));
    if (phase != Phase::OptimizerStep && plan.model.moe.enabled() && dispatchTransientHiddens(plan.model, pa) > 0)
        T.assumptions.add(
            QT_TRANSLATE_NOOP("MemoryExplanation",
                              " The token dispatcher (%1) holds %2 hidden states per token while "
                              "tokens travel: %3."),
            {id(toString(plan.model.moe.dispatcher)), num(dispatchTransientHiddens(plan.model, pa), 2),
             gib(dispatchTransientHiddens(plan.model, pa) * double(plan.model.hidden) * x.c * x.tokens)});
    if (const GemmWorkspaces ws = gemmWorkspaces(dev, fw); ws.total() > 0) {
        if (ws.teBytes > 0)
            T.formula.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                            " + GEMM workspaces %1 x %2 + Transformer Engine's %3"),
                          {num(ws.count), formatBytes(ws.bytes), formatBytes(ws.teBytes)});
        else
            T.formula.add(QT_TRANSLATE_NOOP("MemoryExplanation", " + GEMM workspaces %1 x %2"),
                          {num(ws.count), formatBytes(ws.bytes)});
        T.assumptions.add(QT_TRANSLATE_NOOP(
            "MemoryExplanation",
            " PyTorch keeps a cuBLAS workspace in its caching allocator for each handle and stream "
            "that ran a GEMM, allocated once and never freed: the forward's thread and autograd's "
            "backward thread hold one each (CUBLAS_WORKSPACE_CONFIG's default for the device)."));
        if (ws.teBytes > 0)
            T.assumptions.add(QT_TRANSLATE_NOOP(
                "MemoryExplanation", " Transformer Engine keeps one more workspace of its own."));
    }
    if (phase == Phase::OptimizerStep && x.optImpl == OptimizerImpl::Foreach)
        T.assumptions.add(QT_TRANSLATE_NOOP(
            "MemoryExplanation", "foreach: the step materializes sqrt(exp_avg_sq) (Adam) or the "
                                 "update for all parameters at once."));
    else if (phase == Phase::OptimizerStep && x.optImpl == OptimizerImpl::Fused)
        T.assumptions.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                            "fused: the step updates in place, no temporaries."));
    else if (phase == Phase::OptimizerStep)
        T.assumptions.add(QT_TRANSLATE_NOOP("MemoryExplanation",
                                            "for_loop: two temporaries of the largest tensor."));

    // Components whose size changes within a phase: say what is held at this phase's peak.
    for (Component c : {Component::Parameters, Component::Activations,
                        Component::CommunicationBuffers, Component::Transient})
        ex[size_t(c)].formula.add(heldAt, {gib(b[c])});
    return ex;
}

} // namespace shardscope
