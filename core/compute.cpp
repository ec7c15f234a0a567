// The compute model: time of one training step on one rank, kernel class by kernel class.
//
// - GEMMs from the shape (q, k, v, o, FFN, LM head; backward = dX and dW of the same FLOPs),
//   each taking gemm_overhead_s + max(FLOPs / (peak x gemm_efficiency), bytes / HBM rate).
// - Fused (flash) attention per query-key score: 4d FLOPs forward and 10d backward on the matrix
//   units (FlashAttention-2, Dao 2023: backward = 2.5x forward) plus the score work that is
//   not (exp, rescale; FlashAttention-3, Shah et al. 2024). Causal attention visits half the
//   scores. Eager attention materializes every score: a batched GEMM plus the HBM traffic of
//   the scale, mask, fp32 softmax and casts (Hugging Face eager_attention_forward).
// - Elementwise, norm, RoPE, SwiGLU, residual, autocast casts, loss and optimizer kernels are
//   memory bound: bytes moved / (hbm_bandwidth x memory_efficiency), plus a floor per kernel.
//   Bytes are derived from what each kernel reads and writes in the plan's dtypes (comments
//   below); the backward of an elementwise chain moves twice the forward's bytes (it reads the
//   output gradient and the saved inputs and writes the input gradient).
// - A decoder layer's forward (backward) is never faster than the host can issue its kernels:
//   eager PyTorch spends tens of microseconds of Python and dispatcher time per kernel, which
//   bounds small layers (2K tokens on an H200). A checkpointed layer's recompute costs the
//   framework's recompute_host_factor times the forward's host time.
// Checked against steady-state H200 steps of TinyLlama-1.1B (shared/calibration, tst_step).
#include "compute.h"

#include "adapters.h"
#include "attention.h"
#include "layers.h"
#include "moe.h"

#include "device.h"
#include "framework.h"
#include "model.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <optional>

namespace shardscope {

namespace {

double number(const nlohmann::json &j, const char *key, double fallback)
{
    if (!j.is_object())
        return fallback;
    auto it = j.find(key);
    if (it == j.end() || !it->is_number())
        return fallback;
    const double v = it->get<double>();
    return v >= 0 ? v : fallback;
}

double nested(const nlohmann::json &j, const char *key, const char *sub, double fallback)
{
    if (!j.is_object())
        return fallback;
    auto it = j.find(key);
    if (it == j.end())
        return fallback;
    if (it->is_number())
        return it->get<double>();
    return number(*it, sub, fallback);
}

} // namespace

ComputeProfile computeProfile(const DeviceProfile &dev, const FrameworkProfile &fw, DType compute)
{
    ComputeProfile p;
    p.vocab_divisible_by = fw.vocab_divisible_by;
    p.peak_flops = dev.peakFlops(compute);
    if (!(p.peak_flops > 0))
        p.peak_flops = dev.peak_flops_bf16;
    p.gemm_efficiency = dev.gemm_efficiency;
    // Matrix-unit efficiency inside fused attention; without the score term, the profile's
    // overall attention efficiency stands in for it.
    p.attention_efficiency =
        number(dev.raw, "attention_matmul_efficiency", dev.attention_efficiency);
    p.hbm_bandwidth = dev.hbm_bandwidth;
    // Framework elementwise / reduction kernels reach less of the HBM peak than a copy.
    p.memory_efficiency = number(dev.raw, "elementwise_efficiency", dev.memory_efficiency);
    p.host_bandwidth = dev.host_bandwidth > 0 ? dev.host_bandwidth : 25e9;
    p.host_optimizer_bandwidth =
        number(dev.raw, "host_optimizer_bandwidth", p.host_optimizer_bandwidth);
    p.gemm_overhead_s = number(dev.raw, "gemm_overhead_s", p.gemm_overhead_s);
    p.kernel_overhead_s = number(dev.raw, "kernel_overhead_s", p.kernel_overhead_s);
    if (dev.raw.is_object() && dev.raw.contains("attention_matmul_efficiency")) {
        p.attention_score_s_forward = nested(dev.raw, "attention_score_s", "forward", 0.0);
        p.attention_score_s_backward = nested(dev.raw, "attention_score_s", "backward", 0.0);
    }

    p.host_s_per_kernel_forward = nested(fw.raw, "host_s_per_kernel", "forward", 0.0);
    p.host_s_per_kernel_backward = nested(fw.raw, "host_s_per_kernel", "backward", 0.0);
    p.recompute_host_factor = number(fw.raw, "recompute_host_factor", 1.0);
    p.fused_norm = fw.norm == "fused";
    p.fused_swiglu = fw.fused_swiglu;
    p.fused_qkv = fw.megatron_process_groups && fw.norm == "fused"; // Megatron's layer structure
    p.hf_kernels = !p.fused_norm;
    p.hf_loss = fw.loss == "hf_upcast";
    p.loss_copy = fw.loss == "fused_fp32_copy";
    p.autocast_casts = fw.autocast_weight_cache;
    p.default_optimizer_impl = fw.default_optimizer_impl;
    return p;
}

namespace {

/// torch.autocast casts the weights: parameters stored above the compute dtype, not gathered by
/// FSDP (as in the memory engine).
bool autocastsWeights(const Plan &plan, const ComputeProfile &cp)
{
    return bytesOf(plan.precision.params) > bytesOf(plan.precision.compute) &&
           plan.parallel.sharding != Sharding::Full && cp.autocast_casts;
}

/// What estimateCompute works out per micro-batch (the layers, the embedding, the head, the
/// stages' pace) and the heaviest rank's parameters before any sharding: a function of the
/// (padded) model, the precision, the attention and loss kinds, the profile, and of the layout's
/// tp, pp and its layer layout, cp, sp, ep, etp, the micro-batch, the sequence, recompute
/// (with Megatron's method and MindSpeed's options) and whether autocast casts the weights;
/// not of dp, sharding, offload or grad_accum.
struct PerMicrobatch
{
    ComputeEstimate out; ///< the per-layer and per-micro-batch fields, and `layers`
    StageElements se;    ///< what the first stage trains (LoRA, QLoRA, freezing; Muon)
    double trainedWeightShare = 1.0;
    double ffnFlopsPerToken = 0, attnProjPerToken = 0; ///< forward matmul FLOPs per token
    double denseOnRank = 0, expertsOnRank = 0, matmulOnRank = 0; ///< heaviest rank, elements
    double recomputedLayers = 0; ///< layers that recompute, over the pipeline
};

PerMicrobatch perMicrobatch(const Plan &plan, const ComputeProfile &cp)
{
    PerMicrobatch pm;
    ComputeEstimate &out = pm.out;
    const ModelShape &mo = plan.model;
    const Parallel &pa = plan.parallel;
    const Precision &pr = plan.precision;
    const double t = pa.tp;
    const double b = plan.training.micro_batch;
    const double s = double(plan.training.seq_len);
    const double T = s * b / pa.cp; // tokens per micro-batch on this rank
    const double c = bytesOf(pr.compute);
    const double pBytes = bytesOf(pr.params);
    const bool autocast = autocastsWeights(plan, cp);
    const double r = autocast ? pBytes : c; // residual stream dtype
    const double h = double(mo.hidden);
    const double hSp = h / (pa.sp ? t : 1.0); // norm / residual region
    const double q = double(mo.qDim()) / t;
    const double kv = double(mo.kvDim()) / t;
    const double heads = double(mo.heads) / t;
    // Flash attention's FLOPs per score: 4 x the mean of the q/k and v head widths (MLA's
    // differ: 192 and 128 for DeepSeek-V3).
    const double d = 0.5 * (double(mo.head_dim) +
                            double(mo.mla_attention() ? mo.mla.v_head_dim : mo.head_dim));
    const bool moe = mo.moe.enabled();
    const bool swiglu = mo.ffn == FfnKind::SwiGLU;
    const double P = cp.peak_flops;
    const double gemmRate = P * cp.gemm_efficiency;
    const double memRate = cp.hbm_bandwidth * cp.memory_efficiency;
    const double k0 = cp.kernel_overhead_s;
    // The decoder layers of each stage (core/layers.h: even, or an uneven layout); the stages
    // run in lockstep, the slowest sets the pace (below).
    const StageLayout layout = stageLayout(pa, mo.layers);
    const std::vector<int> stageL = layout.stages();
    const int L0 = stageL.front(); // stage 0, whose elements are read below
    int L = *std::max_element(stageL.begin(), stageL.end());

    // Roofline per GEMM: the larger of its FLOPs at the GEMM rate and its operands and result
    // (c x (MK + KN + MN)) at the HBM rate. `calls` GEMMs split the M rows between them (one
    // per expert); each has its own weights and its own fixed overhead.
    auto gemm = [&](double M, double N, double K, double calls) {
        const double flops = 2.0 * M * N * K / gemmRate;
        const double bytes = c * (M * K + calls * K * N + M * N) / memRate;
        return calls * cp.gemm_overhead_s + std::max(flops, bytes);
    };
    auto traffic = [&](double bytes, double kernels) { return bytes / memRate + kernels * k0; };

    // ---- GEMMs of one layer, forward (core/layers.h's linears; Hugging Face: separate q, k,
    // v, gate, up; fused: column-parallel linears reading one input as one GEMM) -------------
    // Dense and MoE layers are averaged over the model's layers.
    const MoeRouting route = moeRouting(mo, pa);
    const ParameterCounts counts = countParameters(mo);
    // One layer of each kind as its linears (core/layers.h): the GEMMs below and the rank's
    // share of the parameters further down.
    const LayerSpec denseSpec = layerSpec(mo, LayerKind::Dense);
    const LayerSpec moeSpec = mo.moe.enabled() ? layerSpec(mo, LayerKind::Moe) : LayerSpec{};
    struct LayerGemms { double time = 0, kernels = 0, ffnFlops = 0, attnFlops = 0; };
    auto layerGemms = [&](const LayerSpec &spec) {
        LayerGemms g;
        const double local = std::max(1.0, double(spec.experts) / pa.ep);
        double pendingN = 0, pendingK = 0, pendingM = 0;
        LayerPart pendingPart = LayerPart::Attention;
        auto flush = [&] {
            if (pendingN > 0) {
                g.time += gemm(pendingM, pendingN, pendingK, 1);
                g.kernels += 1;
            }
            pendingN = 0;
        };
        for (const LinearSpec &l : spec.linears) {
            const bool expert = l.part == LayerPart::Expert;
            const double split = l.split == Split::Duplicated ? 1.0 : (expert ? pa.expertTp() : t);
            const double N = l.split == Split::Column ? double(l.out) / split : double(l.out);
            const double K = l.split == Split::Row ? double(l.in) / split : double(l.in);
            // A duplicated linear runs on the rank's own (sequence-parallel) tokens.
            const double M = expert ? T * route.copies
                             : l.split == Split::Duplicated && pa.sp ? T / t : T;
            const double copies = double(l.copies);
            const double perToken = 2.0 * double(l.in) * double(l.out) *
                                    (expert ? double(mo.moe.top_k) : copies);
            (l.part == LayerPart::Attention ? g.attnFlops : g.ffnFlops) += perToken;
            if (expert) {
                flush();
                g.time += gemm(M, N, K, local);
                g.kernels += local;
                continue;
            }
            const bool mergeable = cp.fused_qkv && l.split == Split::Column && copies == 1;
            if (mergeable && pendingN > 0 && pendingPart == l.part && pendingK == K && pendingM == M) {
                pendingN += N;
                continue;
            }
            flush();
            if (mergeable) {
                pendingN = N;
                pendingK = K;
                pendingM = M;
                pendingPart = l.part;
                continue;
            }
            g.time += copies * gemm(M, N, K, 1);
            g.kernels += copies;
        }
        flush();
        if (spec.router > 0) {
            g.time += gemm(T * route.tokensIn, double(spec.experts), h, 1);
            g.kernels += 1;
            g.ffnFlops += 2.0 * double(spec.router);
        }
        return g;
    };
    double gemmF = 0, kernelsF = 0;
    double ffnFlopsPerToken = 0;  // forward matmul FLOPs per token of the FFN (for MFU)
    double attnProjPerToken = 0;  // and of the attention projections
    {
        const double layersAll = std::max(1, mo.layers);
        for (const auto &[kind, n] : {std::pair{LayerKind::Dense, counts.dense_layers},
                                      std::pair{LayerKind::Moe, counts.moe_layers}}) {
            if (n == 0)
                continue;
            const LayerGemms g = layerGemms(kind == LayerKind::Moe ? moeSpec : denseSpec);
            const double w = double(n) / layersAll;
            gemmF += w * g.time;
            kernelsF += w * g.kernels;
            ffnFlopsPerToken += w * g.ffnFlops;
            attnProjPerToken += w * g.attnFlops;
        }
    }
    // FFN width one token passes through on this rank (elementwise kernels), averaged likewise.
    const double moeShare = mo.layers > 0 ? double(counts.moe_layers) / mo.layers : 0.0;
    const double fDense = double(mo.ffn_hidden) / t;
    const double fMoe = route.copies * route.expertWidth + route.sharedWidth;
    const double f = (1.0 - moeShare) * fDense + moeShare * fMoe;
    // Backward: dX of every forward GEMM, and dW of the trained weights only (a frozen weight's
    // gradient is never formed). LoRA adds its adapters' small GEMMs (x A, then (x A) B; and
    // their three backward GEMMs each); QLoRA dequantizes every k-bit weight for its forward
    // matmul and again for its input gradient (read the packed weight, write compute dtype).
    const MethodOptions &method = plan.training.method;
    // What the first stage trains and stores, read once: by the backward's GEMMs, the optimizer's
    // elements and Muon's Newton-Schulz work.
    const bool needElements = method.method != TrainingMethod::Full || pr.optimizer == Optimizer::Muon;
    const StageElements se = needElements ? stageElements(plan, 0) : StageElements{};
    double trainedWeightShare = 1.0, adapterGemm = 0.0, dequantF = 0.0;
    if (method.method != TrainingMethod::Full) {
        const double weights = (se.trainedDense + se.frozenDense + se.trainedExpert + se.frozenExpert);
        trainedWeightShare = weights > 0 ? std::min(1.0, (se.trained() - se.adapterDense - se.adapterExpert) /
                                                             weights)
                                         : 0.0;
        const double adapterPerLayer = (se.adapterDense + se.adapterExpert) / std::max(1, L0);
        adapterGemm = 2.0 * T * adapterPerLayer / gemmRate + 2.0 * cp.gemm_overhead_s *
                                                                  std::popcount(unsigned(method.lora.targets));
        const double quantizedPerLayer = (se.quantizedDense + se.quantizedExpert) / std::max(1, L0);
        const double packed = (se.quantizedBytes + se.quantizedBytesExpert) / std::max(1, L0);
        if (quantizedPerLayer > 0)
            dequantF = traffic(packed + quantizedPerLayer * c, cp.fused_qkv ? 4 : 7);
        if (!method.usesAdapters())
            adapterGemm = 0;
    }
    const double gemmB = (1.0 + trainedWeightShare) * gemmF + 3.0 * adapterGemm + dequantF;
    gemmF += adapterGemm + dequantF;

    // ---- attention core -----------------------------------------------------------------
    double attF = 0, attB = 0, attKernelsF = 1;
    const double sq = s / pa.cp; // queries per sample on this rank
    if (plan.memory.attention == Attention::Flash) {
        // Causal: each query sees half the keys on average (CP load-balances the halves).
        const double scores = b * sq * s / 2.0 * heads;
        attF =
            scores * (4.0 * d / (P * cp.attention_efficiency) + cp.attention_score_s_forward) + k0;
        attB = scores * (10.0 * d / (P * cp.attention_efficiency) + cp.attention_score_s_backward) +
               2 * k0;
    } else {
        // Eager: every score is materialized (the causal mask is added, not skipped).
        const double scores = b * sq * s * heads;
        // QK^T out c; * scale r/w 2c; + mask r 2c w c; softmax(dtype=fp32): cast c->4, softmax
        // 4->4; .to(c) 4->c; PV reads c: 9c + 16 bytes per score.
        const double fwdBytes = 9.0 * c + 16.0;
        // dP out c; dV reads P c; cast back c->4; softmax backward 3 x 4; cast 4->c; scale
        // 2c; dQ, dK read dS 2c: 8c + 20 bytes per score.
        const double bwdBytes = 8.0 * c + 20.0;
        attF = scores * 4.0 * d / gemmRate + 2 * cp.gemm_overhead_s + traffic(scores * fwdBytes, 4);
        attB = scores * 8.0 * d / gemmRate + 4 * cp.gemm_overhead_s + traffic(scores * bwdBytes, 6);
        attKernelsF = 6;
    }

    // ---- elementwise kernels of one layer, forward, bytes per token -----------------------
    double ew = 0;
    double ewKernels = 0;
    // RMSNorm. Upcast (transformers LlamaRMSNorm): to(fp32) r->4 (skipped when r is fp32),
    // pow 4->4, mean reads 4, x * rsqrt 8->4... : 20 + 2r (+ 2(r + 4) for the casts) per
    // element. Fused: reads the input, writes the output.
    double norm, normKernels;
    if (cp.fused_norm) {
        norm = r + c;
        normKernels = 1;
    } else {
        norm = 20.0 + 2.0 * r + (r < 4.0 ? 2.0 * (r + 4.0) : 0.0);
        normKernels = r < 4.0 ? 8 : 6;
    }
    ew += 2.0 * norm * hSp;
    ewKernels += 2 * normKernels;
    ew += 2.0 * (2.0 * r + c) * hSp; // two residual adds: read both, write one
    ewKernels += 2;
    if (cp.hf_kernels) {
        // RoPE as in apply_rotary_pos_emb: x*cos, rotate_half (neg, cat), *sin, add: 10 c per
        // element of q and k; the attention output transposed contiguous for o_proj: 2c.
        ew += 10.0 * c * (q + kv) + 2.0 * c * q;
        ewKernels += 11;
    } else {
        ew += 2.0 * c * (q + kv); // fused RoPE
        ewKernels += 2;
    }
    // The activation function: silu(gate) r c w c; * up r 2c w c (unfused); fused: reads
    // gate|up, writes f. GELU / ReLU^2 read and write f.
    const bool fusedSwiglu = plan.memory.fused_swiglu.value_or(cp.fused_swiglu);
    const double actFn = swiglu ? (fusedSwiglu ? 3.0 : 5.0) * c * f : 2.0 * c * f;
    const double actFnKernels = swiglu ? (fusedSwiglu ? 1 : 2) : 1;
    ew += actFn;
    ewKernels += actFnKernels;
    if (moe) {
        ew += moeShare * 2.0 * route.copies * 2.0 * c * h; // permute and unpermute token copies
        ewKernels += 4;
    }
    if (autocast) {
        // Each autocast linear casts its own input: q, k, v, gate, up (fused: qkv, fc1).
        const double casts = cp.fused_qkv ? 2.0 : 5.0;
        ew += casts * (r + c) * hSp;
        ewKernels += casts;
    }
    const double ewF = traffic(ew * T, ewKernels);
    const double ewB = traffic(2.0 * ew * T, 2 * ewKernels);

    kernelsF += ewKernels + attKernelsF;
    const double deviceF = gemmF + attF + ewF;
    const double deviceB = gemmB + attB + ewB;
    const double hostF = kernelsF * cp.host_s_per_kernel_forward;
    const double hostB = 2.0 * kernelsF * cp.host_s_per_kernel_backward;
    out.layer_forward_s = std::max(deviceF, hostF);
    out.layer_backward_s = std::max(deviceB, hostB);
    out.layer_gemm_forward_s = gemmF;
    out.layer_attention_forward_s = attF;
    out.layer_attention_backward_s = attB;
    out.layer_elementwise_forward_s = ewF;
    switch (plan.memory.recompute) {
    case Recompute::Full:
        out.layer_recompute_s = std::max(deviceF, cp.recompute_host_factor * hostF);
        break;
    case Recompute::Selective:
        out.layer_recompute_s = attF; // attention core only (Megatron selective recompute)
        break;
    case Recompute::None:
        break;
    }
    if (plan.memory.recompute != Recompute::Full) {
        // MindSpeed's --recompute-activation-function / --recompute-norm: the activation
        // function's forward (the two pre-norms' forwards) run again in backward.
        if (plan.memory.recompute_activation_function)
            out.layer_recompute_s += traffic(actFn * T, actFnKernels);
        if (plan.memory.recompute_norm)
            out.layer_recompute_s += traffic(2.0 * norm * hSp * T, 2 * normKernels);
    }

    // ---- embedding (first stage) and head + loss (last stage), per micro-batch -------------
    const double V = double(mo.vocab);
    // Lookup: read rows, write T x h; backward: zero an fp32 table and index-add into it.
    out.embedding_s = traffic(2.0 * T * h * c, 1) + traffic(V / t * h * 4.0 + T * h * (c + 4.0), 2);
    {
        const double headGemm = gemm(T, V / t, h, 1);
        // hf_upcast: logits c, .float() c->4, log_softmax 4->4 (fwd); nll grad 4, log_softmax
        // backward 3 x 4, cast back 4->c (bwd). fused_fp32: logits.float() and the softmax in
        // place, the gradient written over it.
        // Chunked (torchtune) moves the same bytes as hf_upcast, a chunk at a time. Fused linear
        // (Liger): the chunk's logits written, read by the softmax, its gradient written in
        // place and read by the two gradient GEMMs.
        const LossHead head = plan.memory.loss != LossHead::Framework
                                  ? plan.memory.loss
                                  : (cp.hf_loss ? LossHead::HfUpcast
                                     : cp.loss_copy ? LossHead::FusedFp32Copy : LossHead::FusedFp32);
        const double lossBytes =
            head == LossHead::FusedLinear ? 4.0 * c
            // The out-of-place shift moves the same bytes as the in-place one.
            : head == LossHead::FusedFp32 || head == LossHead::FusedFp32Copy ? (c + 4.0 + 8.0) + (8.0 + c)
                                          : (c + 4.0 + 8.0) + (4.0 + 12.0 + 4.0 + c);
        const double finalNorm = (norm * 3.0) * hSp; // forward + backward
        out.head_s = 3.0 * headGemm + traffic(T * (lossBytes * V / t + finalNorm), 10);
    }
    const double layerMb = out.layer_forward_s + out.layer_backward_s + out.layer_recompute_s;
    // The layers of a stage that recompute: all of them, but under Megatron's full recompute
    // with --recompute-method block only the first n of each model chunk (as the memory engine
    // keeps the rest's activations).
    const bool block = plan.memory.recompute == Recompute::Full &&
                       plan.memory.recompute_method == RecomputeMethod::Block;
    auto recomputedOf = [&](size_t st) {
        return block ? layout.blockRecomputed(int(st), plan.memory.recompute_num_layers,
                                              plan.memory.recompute_layers_per_pp_rank)
                     : stageL[st];
    };
    // One micro-batch through a stage's layers.
    auto layersTime = [&](size_t st) {
        return stageL[st] * (layerMb - out.layer_recompute_s) + recomputedOf(st) * out.layer_recompute_s;
    };
    // A micro-batch on each stage: its layers, the embedding on the first, the head, loss and
    // MTP modules on the last; the slowest stage paces the pipeline (and its bubble).
    const size_t lastIdx = stageL.size() - 1;
    const int Lfirst = stageL.front(), Llast = stageL.back();
    const double firstStage = layersTime(0) + out.embedding_s + (pa.pp == 1 ? out.head_s : 0.0);
    const double lastStage = layersTime(lastIdx) + out.head_s + (pa.pp == 1 ? out.embedding_s : 0.0) +
                             mo.mtp_layers * (layerMb + out.head_s);
    out.microbatch_s = std::max(firstStage, lastStage);
    size_t slowest = lastStage >= firstStage ? lastIdx : 0;
    for (size_t i = 1; i < lastIdx; ++i) {
        const double middle = layersTime(i);
        if (middle > out.microbatch_s) {
            out.microbatch_s = middle;
            slowest = i;
        }
    }
    L = stageL[slowest];
    out.layers = L;
    out.backward_microbatch_s = L * out.layer_backward_s + recomputedOf(slowest) * out.layer_recompute_s;

    // ---- per step: autocast casts and the optimizer ---------------------------------------
    const ParameterCounts &pc = counts;
    // A mean layer of the model on this rank (core/layers.h's split), MTP modules on the last
    // stage counted as layers.
    const RankLayer dl = rankLayer(mo, LayerKind::Dense, pa.tp, pa.ep, pa.expertTp());
    const RankLayer ml = moe ? rankLayer(mo, LayerKind::Moe, pa.tp, pa.ep, pa.expertTp()) : RankLayer{};
    const double layersAll = std::max(1, mo.layers);
    const double layerDense = (dl.dense() * pc.dense_layers + ml.dense() * pc.moe_layers) / layersAll;
    const double layerExperts = ml.experts * pc.moe_layers / layersAll;
    const double layerMatmul = (dl.matmul * pc.dense_layers + ml.matmul * pc.moe_layers) / layersAll;
    const double rootFirst = double(pc.embedding) / t + double(pc.position);
    // MTP modules on the last stage: their routed experts split by ep like any MoE layer, the
    // embedding copy they share (core/layers.h mtpModuleOnRank, as the memory engine counts).
    const double rootLast =
        double(pc.final_norm) + (mo.tied_embeddings ? (pa.pp > 1 ? double(pc.embedding) / t : 0.0)
                                                    : double(pc.lm_head) / t) +
        (mo.mtp_layers > 0 && pa.pp > 1 && !mo.tied_embeddings ? double(pc.embedding) / t : 0.0) +
        mtpModuleOnRank(mo, pa.tp, pa.ep, pa.expertTp()).total() * mo.mtp_layers;
    // The rank holding the most (an uneven layout may put it anywhere): its layers and root.
    double root = pa.pp == 1 ? rootFirst + rootLast : std::max(rootFirst, rootLast);
    int Lrank = pa.pp == 1 ? stageL.front() : (rootLast >= rootFirst ? Llast : Lfirst);
    if (pa.pp > 1) {
        const double perLayer = layerDense + layerExperts;
        double most = perLayer * Lrank + root;
        for (size_t i = 0; i < stageL.size(); ++i) {
            const double held = (i == 0 ? rootFirst : 0.0) + (i + 1 == stageL.size() ? rootLast : 0.0);
            if (perLayer * stageL[i] + held > most) {
                most = perLayer * stageL[i] + held;
                Lrank = stageL[i];
                root = held;
            }
        }
    }
    const double denseOnRank = layerDense * Lrank + root;
    const double expertsOnRank = layerExperts * Lrank;
    const double matmulOnRank = layerMatmul * Lrank + double(pc.lm_head > 0 ? pc.lm_head : pc.embedding) / t;
    pm.se = se;
    pm.trainedWeightShare = trainedWeightShare;
    pm.ffnFlopsPerToken = ffnFlopsPerToken;
    pm.attnProjPerToken = attnProjPerToken;
    pm.denseOnRank = denseOnRank;
    pm.expertsOnRank = expertsOnRank;
    pm.matmulOnRank = matmulOnRank;
    for (size_t st = 0; st < stageL.size(); ++st)
        pm.recomputedLayers += recomputedOf(st);
    return pm;
}

/// The search asks for the compute of layouts that share their per-micro-batch part far more
/// often than not (their sharding, dp, offload or grad_accum differ): each thread keeps the last
/// few parts of one model, precision and profile, keyed by everything else perMicrobatch reads.
class KeptMicrobatches
{
public:
    /// `sharedHolds`: the caller's plans share what Shared holds (ComputeCache), which is then
    /// compared only before a part is computed afresh.
    const PerMicrobatch &of(const Plan &plan, const ComputeProfile &cp, bool sharedHolds = false)
    {
        if (!reusable(plan))
            return fresh_ = perMicrobatch(plan, cp);
        const Pa pa = paOf(plan, cp);
        auto sameShared = [&] {
            return shared_ && shared_->model == plan.model && shared_->precision == plan.precision &&
                   shared_->profile == cp && shared_->attention == plan.memory.attention &&
                   shared_->loss == plan.memory.loss;
        };
        auto resetShared = [&] {
            shared_ = Shared{plan.model, plan.precision, cp, plan.memory.attention, plan.memory.loss};
            size_ = next_ = last_ = 0;
        };
        if (!sharedHolds && !sameShared())
            resetShared();
        if (shared_ && size_ > 0 && kept_[last_].key == pa)
            return kept_[last_].pm; // the search asks for one part many times in turn
        const uint64_t hash = hashOf(pa);
        if (shared_) {
            // Then the others, a hash ruling most out before their words are compared.
            for (size_t k = 0; k < size_; ++k) {
                if (kept_[k].hash == hash && kept_[k].key == pa) {
                    last_ = k;
                    return kept_[k].pm;
                }
            }
        }
        if (sharedHolds && !sameShared())
            resetShared();
        last_ = next_;
        Entry &e = kept_[next_];
        next_ = (next_ + 1) % kept_.size();
        size_ = std::max(size_, next_ == 0 ? kept_.size() : next_);
        e.key = pa;
        e.hash = hash;
        e.pm = perMicrobatch(plan, cp);
        return e.pm;
    }

private:
    /// Per-micro-batch parts that depend on more than the key holds are not kept: what LoRA,
    /// QLoRA, freezing or Muon read of the stage, and listed stage layouts.
    static bool reusable(const Plan &plan)
    {
        return plan.training.method.method == TrainingMethod::Full && plan.precision.optimizer != Optimizer::Muon &&
               plan.parallel.stage_layers.empty() && plan.parallel.pipeline_layout.empty();
    }
    /// What perMicrobatch reads of the plan beyond the shared part, packed into words so that
    /// a lookup compares and hashes a few integers: the sequence, the vocabulary (the one model
    /// field the search's plans vary: padded by tp), then the degrees and layer-layout fields
    /// two to a word, then the schedule, recompute options and flags.
    struct Pa
    {
        std::array<uint64_t, 8> w{};
        bool operator==(const Pa &) const = default;
    };
    static uint64_t hashOf(const Pa &a)
    {
        uint64_t h = 0;
        for (const uint64_t w : a.w)
            h = (h ^ w) * 0x9E3779B97F4A7C15ull;
        return h ^ (h >> 29);
    }
    static Pa paOf(const Plan &p, const ComputeProfile &cp)
    {
        const Parallel &pa = p.parallel;
        auto two = [](int hi, int lo) { return uint64_t(uint32_t(hi)) << 32 | uint32_t(lo); };
        auto bit = [](bool b, int at) { return uint64_t(b) << at; };
        Pa k;
        k.w[0] = uint64_t(p.training.seq_len);
        k.w[1] = uint64_t(p.model.vocab);
        k.w[2] = two(pa.tp, pa.pp);
        k.w[3] = two(pa.cp, pa.ep);
        k.w[4] = two(pa.expertTp(), pa.virtual_stages);
        k.w[5] = two(pa.first_stage_layers, pa.last_stage_layers);
        k.w[6] = two(p.training.micro_batch, p.memory.recompute_num_layers);
        k.w[7] = uint64_t(uint8_t(pa.pp_schedule)) | uint64_t(uint8_t(p.memory.recompute)) << 8 |
                 uint64_t(uint8_t(p.memory.recompute_method)) << 16 | bit(pa.sp, 24) |
                 bit(pa.account_for_embedding, 25) | bit(pa.account_for_loss, 26) |
                 bit(p.memory.recompute_activation_function, 27) | bit(p.memory.recompute_norm, 28) |
                 bit(autocastsWeights(p, cp), 29);
        return k;
    }
    struct Shared
    {
        ModelShape model;
        Precision precision;
        ComputeProfile profile;
        Attention attention;
        LossHead loss;
    };
    struct Entry
    {
        Pa key{};
        uint64_t hash = 0;
        PerMicrobatch pm;
    };
    std::optional<Shared> shared_;
    std::array<Entry, 16> kept_{};
    size_t size_ = 0, next_ = 0, last_ = 0;
    PerMicrobatch fresh_;
};

ComputeEstimate perStep(const Plan &plan, const ComputeProfile &cp, const PerMicrobatch &pm)
{
    ComputeEstimate out = pm.out;
    const ModelShape &mo = plan.model;
    const Parallel &pa = plan.parallel;
    const Precision &pr = plan.precision;
    const MethodOptions &method = plan.training.method;
    const StageElements &se = pm.se;
    const double b = plan.training.micro_batch;
    const double s = double(plan.training.seq_len);
    const double m = plan.training.grad_accum;
    const double c = bytesOf(pr.compute);
    const double pBytes = bytesOf(pr.params);
    const bool autocast = autocastsWeights(plan, cp);
    const double h = double(mo.hidden);
    const double gemmRate = cp.peak_flops * cp.gemm_efficiency;
    const double memRate = cp.hbm_bandwidth * cp.memory_efficiency;
    auto traffic = [&](double bytes, double kernels) { return bytes / memRate + kernels * cp.kernel_overhead_s; };
    const double denseOnRank = pm.denseOnRank, expertsOnRank = pm.expertsOnRank, matmulOnRank = pm.matmulOnRank;
    const double trainedWeightShare = pm.trainedWeightShare;
    const double ffnFlopsPerToken = pm.ffnFlopsPerToken, attnProjPerToken = pm.attnProjPerToken;
    const double gBytes = bytesOf(pr.grads);
    {
        const double shard = double(pa.shardGroup());
        const double shardedAll =
            denseOnRank / shard + expertsOnRank / std::max(1.0, pa.expertDp());
        out.params_on_rank = denseOnRank + expertsOnRank;
        out.optimizer_elements = pa.sharding != Sharding::None ? shardedAll : out.params_on_rank;
        if (method.method != TrainingMethod::Full) {
            // The optimizer steps over what is trained only.
            const double trained = se.trainedDense + se.adapterDense;
            const double trainedExperts = se.trainedExpert + se.adapterExpert;
            out.optimizer_elements = pa.sharding != Sharding::None
                                         ? trained / shard + trainedExperts / std::max(1.0, shard / pa.ep)
                                         : trained + trainedExperts;
        }
        out.sharded_params = pa.sharding == Sharding::Full ? shardedAll : out.params_on_rank;
        out.sharded_grads = (pa.sharding == Sharding::Full || pa.sharding == Sharding::Grads)
                                ? shardedAll
                                : out.params_on_rank;
    }
    if (autocast) {
        // Weights cast to the compute dtype per forward (again in a full recompute); weight
        // gradients produced in the compute dtype and cast to the parameter dtype.
        const double recast = plan.memory.recompute == Recompute::Full ? 2.0 : 1.0;
        out.casts_s = m * traffic(matmulOnRank * ((pBytes + c) * recast + c + gBytes), 3);
    }
    {
        const double elems = out.optimizer_elements;
        const bool master = pr.master_weights != DType::None && pr.master_weights != pr.params;
        const double w = master ? bytesOf(pr.master_weights) : pBytes;
        const double st = bytesOf(pr.optimizer_state);
        const OptimizerImpl impl = pr.optimizer_impl == OptimizerImpl::Default
                                       ? cp.default_optimizer_impl
                                       : pr.optimizer_impl;
        const bool adam = pr.optimizer == Optimizer::AdamW || pr.optimizer == Optimizer::Adam;
        double perElem;
        if (impl == OptimizerImpl::Fused) {
            perElem = adam ? 2.0 * w + 4.0 * st + gBytes : 2.0 * w + 2.0 * st + gBytes;
        } else {
            // foreach AdamW (torch.optim.adamw._multi_tensor_adamw): weight decay p 2w; lerp m
            // 2s+g; mul v 2s; addcmul v 2s+g; sqrt, div, add on a temporary 6s; addcdiv p
            // 2w+2s: 4w + 12s + 2g. SGD momentum: 2w + 5s + g.
            perElem = adam ? 4.0 * w + 12.0 * st + 2.0 * gBytes : 2.0 * w + 5.0 * st + gBytes;
        }
        if (master)
            perElem += w + pBytes; // copy the updated master weights into the parameters
        double extraOptimizer = 0; // beyond the HBM traffic: paging, Newton-Schulz matmuls
        switch (pr.optimizer) {
        case Optimizer::AdamW8bit:
        case Optimizer::PagedAdamW8bit:
            // bitsandbytes' fused 8-bit kernel: the parameter read and written, the gradient,
            // two 1-byte states read and written.
            perElem = 2.0 * w + 4.0 + gBytes;
            break;
        case Optimizer::Adafactor:
            // transformers' for-loop step in fp32: the gradient cast, its square, the row and
            // column means and their update, the update and its RMS, the parameter.
            perElem = 2.0 * w + gBytes + 10.0 * 4.0;
            break;
        case Optimizer::Muon:
            perElem = 2.0 * w + 2.0 * st + gBytes + 2.0 * 2.0; // momentum, and X in bf16
            break;
        case Optimizer::SGD:
            if (!pr.momentum)
                perElem = 2.0 * w + gBytes;
            break;
        default:
            break;
        }
        if (pr.optimizer == Optimizer::PagedAdamW || pr.optimizer == Optimizer::PagedAdamW8bit) {
            // Paged states travel to the device and back for the step when evicted.
            const double stateBytes = pr.optimizer == Optimizer::PagedAdamW ? 2.0 * st : 2.0;
            extraOptimizer += 2.0 * elems * stateBytes / cp.host_bandwidth;
        }
        if (pr.optimizer == Optimizer::Muon) {
            // With sharded states the data-parallel ranks split the matrices between them
            // (distributed Muon, as in Moonlight); unsharded every rank iterates on all.
            const double split = pa.sharding != Sharding::None ? double(pa.dp) * pa.cp : 1.0;
            extraOptimizer += se.newtonSchulzFlops / gemmRate / split;
        }
        // Offloaded, the same traffic runs on the host (CPU Adam) at host_optimizer_bandwidth.
        out.optimizer_s = (plan.memory.offload.optimizer
                               ? elems * perElem / cp.host_optimizer_bandwidth
                               : traffic(elems * perElem, 8)) +
                          extraOptimizer;
    }
    out.compute_s = m * out.microbatch_s + out.casts_s + out.optimizer_s;

    // ---- FLOPs ------------------------------------------------------------------------------
    // Forward FLOPs per token of the whole model: 2 x matmul weights seen by a token, causal
    // attention 4 x (s/2) x head_dim x heads per layer, the LM head.
    const double attnProj = attnProjPerToken;
    const double attnCore = attentionCoreFlopsPerToken(mo, s / 2.0);
    const double layerFwd = attnProj + ffnFlopsPerToken + attnCore;
    const double headFwd = 2.0 * double(mo.vocab) * h;
    const double tokensPerStep = s * b * m;             // per data-parallel replica
    const double world = double(pa.tp) * pa.pp * pa.cp; // ranks sharing one replica
    // Multi-token prediction: each module a layer, its 2h -> h projection and the head again.
    const double mtpFwd = mo.mtp_layers * (layerFwd + 4.0 * h * h + headFwd);
    const double modelFwd = tokensPerStep * (mo.layers * layerFwd + headFwd + mtpFwd);
    // Forward, the input gradients, and the weight gradients of what is trained (a frozen
    // weight's gradient is never formed).
    out.model_flops = (2.0 + trainedWeightShare) * modelFwd / world;
    double extra = 0;
    if (plan.memory.recompute == Recompute::Full) // the layers that recompute (block: the first n of each chunk)
        extra = tokensPerStep * pm.recomputedLayers * layerFwd;
    else if (plan.memory.recompute == Recompute::Selective)
        extra = tokensPerStep * mo.layers * attnCore;
    out.hardware_flops = out.model_flops + extra / world;
    return out;
}

/// The head and the loss over the vocabulary the framework pads (framework.h): the plan itself
/// when it is padded already (the search's working plans), else a padded copy assigned into a
/// plan kept here, whose strings and vectors are reused. (Nothing estimateCompute calls
/// estimates compute again, so the kept plan is one call's until it returns.) With the
/// per-micro-batch parts kept beside it.
struct KeptCompute
{
    Plan padded;
    KeptMicrobatches kept;

    ComputeEstimate of(const Plan &given, const ComputeProfile &cp, bool sharedHolds)
    {
        const bool pad = vocabNeedsPadding(given, cp.vocab_divisible_by);
        if (pad)
            assignPaddedVocabPlan(given, cp.vocab_divisible_by, padded);
        const Plan &plan = pad ? padded : given;
        return perStep(plan, cp, kept.of(plan, cp, sharedHolds));
    }
};

} // namespace

ComputeEstimate estimateCompute(const Plan &given, const ComputeProfile &cp)
{
    thread_local KeptCompute kept; // each thread's
    return kept.of(given, cp, false);
}

struct ComputeCache::Impl : KeptCompute
{
};

ComputeCache::ComputeCache() : impl_(std::make_unique<Impl>()) {}
ComputeCache::~ComputeCache() = default;
ComputeCache::ComputeCache(ComputeCache &&) noexcept = default;
ComputeCache &ComputeCache::operator=(ComputeCache &&) noexcept = default;

ComputeEstimate estimateCompute(const Plan &given, const ComputeProfile &cp, ComputeCache &cache)
{
    return cache.impl_->of(given, cp, true);
}

ComputeEstimate estimateComputeAfresh(const Plan &given, const ComputeProfile &cp)
{
    Plan padded;
    assignPaddedVocabPlan(given, cp.vocab_divisible_by, padded);
    return perStep(padded, cp, perMicrobatch(padded, cp));
}

double offloadBytesPerStep(const Plan &plan, const ComputeEstimate &ce,
                           double activationBytesPerMicrobatch)
{
    const Offload &off = plan.memory.offload;
    const Precision &pr = plan.precision;
    const double m = plan.training.grad_accum;
    const double g = bytesOf(pr.grads);
    const double p = bytesOf(pr.params);
    double bytes = 0;
    if (off.optimizer)
        bytes += ce.optimizer_elements * (g + p);
    if (off.params)
        bytes += 2.0 * m * ce.sharded_params * p;
    if (off.grads)
        bytes += m * ce.sharded_grads * g;
    if (off.activations || plan.memory.swap_attention) // MindSpeed's swap-attention too
        bytes += 2.0 * m * activationBytesPerMicrobatch;
    return bytes;
}

StepEstimate assembleStep(const Plan &plan, const ComputeProfile &cp, const ComputeEstimate &ce,
                          double exposedCommunication, double offloadBytes)
{
    StepEstimate st;
    const Parallel &pa = plan.parallel;
    const double m = plan.training.grad_accum;
    st.compute_s = ce.compute_s;
    st.communication_s = exposedCommunication;
    if (pa.pp > 1) {
        const double v = pa.pp_schedule == PpSchedule::Interleaved ? pa.virtual_stages : 1;
        st.bubble_s = (pa.pp - 1.0) / v * ce.microbatch_s;
    }
    st.offload_s = offloadBytes / cp.host_bandwidth;
    st.step_s = st.compute_s + st.communication_s + st.bubble_s + st.offload_s;
    const double tokens = double(plan.training.seq_len) * plan.training.micro_batch * m * pa.dp;
    if (st.step_s > 0) {
        st.tokens_per_s = tokens / st.step_s;
        st.mfu = ce.model_flops / (st.step_s * cp.peak_flops);
        st.hfu = ce.hardware_flops / (st.step_s * cp.peak_flops);
    }
    return st;
}

} // namespace shardscope
