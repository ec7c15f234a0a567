// The workload: the kernels one training step of a plan runs on one rank, with rank-local
// shapes, and the memory probe. The runner measures them; the calibration compares them with
// what the engine assumes.
#include "workload.h"

#include "layers.h"
#include "moe.h"

#include "catalog.h"
#include "errors.h"
#include "estimate.h"
#include "framework.h"
#include "memory.h"

#include <algorithm>
#include <cmath>

namespace shardscope {

std::string_view toString(KernelKind k)
{
    switch (k) {
    case KernelKind::Gemm:
        return "gemm";
    case KernelKind::Attention:
        return "attention";
    case KernelKind::Elementwise:
        return "elementwise";
    case KernelKind::Collective:
        return "collective";
    }
    return "gemm";
}

double attentionFlops(const Kernel &k)
{
    const double dv = k.v_head_dim > 0 ? double(k.v_head_dim) : double(k.head_dim);
    const double fwd = 2.0 * double(k.batch) * double(k.seq_q) * double(k.seq_kv) *
                       (double(k.head_dim) + dv) * double(k.heads) * (k.causal ? 0.5 : 1.0);
    return k.op == "attention_bwd" ? 2.5 * fwd : fwd;
}

double busBandwidthFactor(std::string_view collective, int n)
{
    if (n <= 1)
        return collective == "send_recv" ? 1.0 : 0.0;
    const double nn = n;
    if (collective == "all_reduce")
        return 2.0 * (nn - 1.0) / nn;
    if (collective == "all_gather" || collective == "reduce_scatter" || collective == "all_to_all")
        return (nn - 1.0) / nn;
    return 1.0; // broadcast, reduce, send_recv
}

namespace {

struct Builder
{
    const Plan &plan;
    const WorkloadOptions &opt;
    Workload &w;
    double scale = 1.0; ///< tokens_run / tokens

    void gemm(const std::string &base, const std::string &what, int64_t tokens, int64_t out,
              int64_t in, double count, bool recomputed)
    {
        const DType dt = plan.precision.compute;
        const double fwdCount = count * (recomputed ? 2.0 : 1.0);
        auto add = [&](const std::string &suffix, const std::string &phase, int64_t m, int64_t n,
                       int64_t k, const char *layout, double c, double fullFlops,
                       const std::string &note) {
            Kernel g;
            g.name = base + "." + suffix;
            g.kind = KernelKind::Gemm;
            g.op = "gemm";
            g.phase = phase;
            g.dtype = dt;
            g.m = m;
            g.n = n;
            g.k = k;
            g.layout = layout;
            g.count_per_step = c;
            g.flops = 2.0 * double(m) * double(n) * double(k);
            g.full_flops = fullFlops;
            g.bytes = bytesOf(dt) * double(m * k + k * n + m * n);
            g.full_bytes = g.bytes / std::max(1e-12, g.flops) * fullFlops;
            g.note = note;
            w.kernels.push_back(g);
        };
        const int64_t t = std::max<int64_t>(1, int64_t(std::llround(double(tokens) * scale)));
        const double full = 2.0 * double(tokens) * double(out) * double(in);
        add("fwd", "forward", t, out, in, "nt", fwdCount, full,
            what + ": Y = X W^T" + (recomputed ? " (twice: recomputed in backward)" : ""));
        if (opt.backward) {
            add("dgrad", "backward", t, in, out, "nn", count, full, what + ": dX = dY W");
            add("wgrad", "backward", out, in, t, "tn", count, full, what + ": dW = dY^T X");
        }
    }

    void attention(const std::string &name, const std::string &op, int64_t batch, int64_t heads,
                   int64_t kvHeads, int64_t seq, int64_t headDim, bool causal, double count,
                   const std::string &note)
    {
        const ModelShape &mo = plan.model;
        Kernel a;
        a.name = name;
        a.kind = KernelKind::Attention;
        a.op = op;
        a.phase = op == "attention_fwd" ? "forward" : "backward";
        a.dtype = plan.precision.compute;
        a.heads = heads;
        a.kv_heads = kvHeads;
        a.head_dim = headDim;
        a.v_head_dim = mo.mla_attention() ? mo.mla.v_head_dim : 0;
        a.causal = causal;
        a.count_per_step = count;
        // Full size first, then the run size under the token cap.
        a.batch = batch;
        a.seq_q = a.seq_kv = seq;
        a.full_flops = attentionFlops(a);
        if (opt.max_tokens > 0 && seq * batch > opt.max_tokens) {
            a.seq_q = a.seq_kv = std::max<int64_t>(1, std::min(seq, opt.max_tokens));
            a.batch = std::max<int64_t>(1, opt.max_tokens / a.seq_q);
            a.batch = std::min(a.batch, batch);
        }
        a.flops = attentionFlops(a);
        const double c = bytesOf(a.dtype);
        auto io = [&](const Kernel &x) {
            const double dv = x.v_head_dim > 0 ? double(x.v_head_dim) : double(x.head_dim);
            return c * double(x.batch) * double(x.seq_q) *
                   (double(x.head_dim) * (double(x.heads) + double(x.kv_heads)) +
                    dv * (double(x.heads) + double(x.kv_heads)));
        };
        a.bytes = io(a);
        a.full_bytes = a.bytes * (a.full_flops / std::max(1e-12, a.flops));
        a.note = note;
        w.kernels.push_back(a);
    }

    void elementwise(const std::string &name, const std::string &op, int64_t rows, int64_t width,
                     double bytesPerElement, double count, DType dt, const std::string &note)
    {
        Kernel e;
        e.name = name;
        e.kind = KernelKind::Elementwise;
        e.op = op;
        e.phase = "forward";
        e.dtype = dt;
        e.width = width;
        const int64_t runRows = std::max<int64_t>(1, int64_t(std::llround(double(rows) * scale)));
        e.elements = runRows * width;
        e.bytes = bytesPerElement * double(e.elements);
        e.full_bytes = bytesPerElement * double(rows) * double(width);
        e.count_per_step = count;
        e.note = note;
        w.kernels.push_back(e);
    }

    void collective(const std::string &coll, const std::string &group, int size, double bytes,
                    double count, const std::string &phase, const std::string &note)
    {
        if (size <= 1 && coll != "send_recv")
            return;
        if (bytes <= 0 || count <= 0)
            return;
        Kernel c;
        c.name = group + "." + coll;
        c.kind = KernelKind::Collective;
        c.op = coll;
        c.collective = coll;
        c.group = group;
        c.group_size = size;
        c.phase = phase;
        c.dtype = plan.precision.compute;
        // Messages keep their real size: collectives are not scaled by the token cap.
        c.bytes = c.full_bytes = std::round(bytes);
        c.elements = int64_t(std::llround(bytes / bytesOf(c.dtype)));
        c.count_per_step = count;
        c.note = note;
        w.kernels.push_back(c);
    }
};

std::string probeMode(const Precision &p)
{
    const double pb = bytesOf(p.params);
    const double cb = bytesOf(p.compute);
    if (pb >= 4.0 && cb >= 4.0)
        return "fp32";
    if (pb >= 4.0)
        return p.compute == DType::FP16 ? "amp_fp16" : "amp";
    return p.params == DType::FP16 ? "fp16" : "bf16";
}

} // namespace

Workload buildWorkload(const Plan &plan, const WorkloadOptions &opt, const Catalog *catalog)
{
    Workload w;
    w.plan_name = plan.name;
    const auto &mo = plan.model;
    const auto &pa = plan.parallel;
    const int tp = pa.tp, cp = pa.cp, pp = pa.pp;
    const int64_t seq = plan.training.seq_len / cp;
    const int64_t mb = plan.training.micro_batch;
    const int64_t T = seq * mb;
    w.tokens = T;
    w.tokens_run = opt.max_tokens > 0 ? std::min<int64_t>(T, opt.max_tokens) : T;
    Builder b{plan, opt, w, double(w.tokens_run) / double(std::max<int64_t>(1, T))};

    const double m = plan.training.grad_accum;
    // The stage with the most decoder layers (core/layers.h; layers / pp when even).
    const std::vector<int> stageL = stageLayers(plan);
    const double L = double(*std::max_element(stageL.begin(), stageL.end()));
    const double perLayer = L * m;
    const bool fullRecompute = plan.memory.recompute == Recompute::Full;
    const bool selective = plan.memory.recompute == Recompute::Selective;
    const int64_t h = mo.hidden, q = mo.qDim(), kv = mo.kvDim();
    const int64_t hSp = pa.sp ? h / tp : h;
    const DType c = plan.precision.compute;
    const double cb = bytesOf(c);
    const std::string tpText = tp > 1 ? " (split by tp " + std::to_string(tp) + ")" : "";

    // --- GEMMs ----------------------------------------------------------------------------
    // Per layer kind (core/layers.h): the count is that kind's layers on this stage.
    const ParameterCounts counts = countParameters(mo);
    const double stageShare = mo.layers > 0 ? L / double(mo.layers) : 0.0;
    const double denseLayers = counts.dense_layers * stageShare * m;
    const double moeLayers = counts.moe_layers * stageShare * m;
    const double attnLayers = denseLayers + moeLayers;
    if (mo.mla_attention()) {
        const MlaShape &a = mo.mla;
        const int64_t qk = int64_t(mo.heads) * a.qkHeadDim();
        if (a.q_lora_rank > 0) {
            b.gemm("layer.q_a", "MLA query down-projection (duplicated on every TP rank)", T,
                   a.q_lora_rank, h, attnLayers, fullRecompute);
            b.gemm("layer.q_b", "MLA query up-projection" + tpText, T, qk / tp, a.q_lora_rank,
                   attnLayers, fullRecompute);
        } else {
            b.gemm("layer.q", "MLA query projection" + tpText, T, qk / tp, h, attnLayers, fullRecompute);
        }
        b.gemm("layer.kv_a", "MLA key/value latent and rope key (duplicated on every TP rank)", T,
               a.kv_lora_rank + a.qk_rope_head_dim, h, attnLayers, fullRecompute);
        b.gemm("layer.kv_b", "MLA key/value up-projection" + tpText, T,
               int64_t(mo.heads) * (a.qk_nope_head_dim + a.v_head_dim) / tp, a.kv_lora_rank,
               attnLayers, fullRecompute);
    } else {
        b.gemm("layer.qkv", "QKV projection" + tpText, T, (q + 2 * kv) / tp, h, attnLayers,
               fullRecompute);
    }
    b.gemm("layer.o", "attention output projection" + tpText, T, h, mo.outDim() / tp, attnLayers,
           fullRecompute);
    const int64_t up = mo.ffn == FfnKind::SwiGLU ? 2 : 1;
    const std::string upName = mo.ffn == FfnKind::SwiGLU ? "gate and up projections" : "FFN fc1";
    if (denseLayers > 0) {
        const int64_t f = mo.ffn_hidden;
        b.gemm("layer.gate_up", upName + tpText, T, up * f / tp, h, denseLayers, fullRecompute);
        b.gemm("layer.down", "down projection" + tpText, T, h, f / tp, denseLayers, fullRecompute);
    }
    if (moeLayers > 0) {
        const MoeRouting route = moeRouting(mo, pa);
        const int64_t localExperts = std::max(1, mo.moe.experts / pa.ep);
        const int etp = pa.expertTp();
        const std::string etpText = etp > 1 ? " (split by etp " + std::to_string(etp) + ")" : "";
        // The busiest rank's copies spread over its local experts.
        const int64_t tokensPerExpert = std::max<int64_t>(
            1, int64_t(std::llround(double(T) * route.copies / double(localExperts))));
        const int64_t f = mo.moe.expert_ffn_hidden;
        b.gemm("layer.router", "MoE router", int64_t(std::llround(double(T) * route.tokensIn)),
               mo.moe.experts, h, moeLayers, fullRecompute);
        b.gemm("layer.expert_gate_up", "one expert's " + upName + etpText, tokensPerExpert,
               up * f / etp, h, moeLayers * double(localExperts), fullRecompute);
        b.gemm("layer.expert_down", "one expert's down projection" + etpText, tokensPerExpert, h,
               f / etp, moeLayers * double(localExperts), fullRecompute);
        if (mo.moe.shared_experts > 0) {
            const int64_t fs = int64_t(mo.moe.shared_experts) * mo.moe.shared_expert_ffn_hidden;
            b.gemm("layer.shared_gate_up", "shared experts' " + upName + tpText, T, up * fs / tp, h,
                   moeLayers, fullRecompute);
            b.gemm("layer.shared_down", "shared experts' down projection" + tpText, T, h, fs / tp,
                   moeLayers, fullRecompute);
        }
    }
    // The vocabulary the framework trains (framework.h paddedVocab: Megatron pads it to a
    // multiple of 128 x tp); without a catalog only the plan's own model.vocab_divisible_by.
    const FrameworkProfile *fw = catalog ? catalog->framework(plan.framework) : nullptr;
    const int64_t vocab = fw ? paddedVocab(plan, *fw) : paddedVocabPlan(plan, 1).model.vocab;
    b.gemm("head.lm_head", "LM head (last pipeline stage)" + tpText, T, vocab / tp, h, m, false);

    // --- attention --------------------------------------------------------------------------
    const int64_t heads = mo.heads / tp / pa.ulyssesDegree();
    // MindSpeed-LLM's repeat before Ulysses' all-to-all: the kernel sees K and V at every head.
    const bool kvRepeated = fw && ulyssesRepeatsKv(plan, *fw);
    const int64_t kvHeads =
        kvRepeated ? heads : std::max<int64_t>(1, mo.kv_heads / tp / pa.ulyssesDegree());
    const double fwdAttn = perLayer * ((fullRecompute || selective) ? 2.0 : 1.0);
    // Ulysses splits the heads and gathers the sequence inside its group; the ring splits the
    // rest of the sequence.
    const int ringCp = pa.ringDegree();
    const int64_t attnSeq = plan.training.seq_len / ringCp;
    const std::string attnNote =
        "causal self-attention, " + std::to_string(heads) + " heads / " + std::to_string(kvHeads) +
        " KV heads of " + std::to_string(mo.head_dim) + ", sequence " + std::to_string(attnSeq) +
        (ringCp > 1 ? " (split by the cp ring)" : "") +
        (pa.ulyssesDegree() > 1 ? " (heads split by Ulysses)" : "") +
        (kvRepeated ? " (K/V repeated to the query heads)" : "");
    b.attention("attention.fwd", "attention_fwd", mb, heads, kvHeads, attnSeq, mo.head_dim, true,
                fwdAttn,
                attnNote + ((fullRecompute || selective) ? "; recomputed in backward" : ""));
    if (opt.backward)
        b.attention("attention.bwd", "attention_bwd", mb, heads, kvHeads, attnSeq, mo.head_dim, true,
                    perLayer, attnNote);
    if (ringCp > 1) {
        // Ring attention with causal load balancing: per rank, besides its own causal block,
        // (ring - 1) / 2 unmasked blocks' worth of work against the other ranks' K/V.
        const double ring = perLayer * (ringCp - 1) / 2.0;
        b.attention("attention.ring.fwd", "attention_fwd", mb, heads, kvHeads, attnSeq, mo.head_dim,
                    false, ring * ((fullRecompute || selective) ? 2.0 : 1.0),
                    "context-parallel ring step against another rank's K/V block");
        if (opt.backward)
            b.attention("attention.ring.bwd", "attention_bwd", mb, heads, kvHeads, attnSeq, mo.head_dim,
                        false, ring, "context-parallel ring step, backward");
    }

    // --- memory-bound ops -----------------------------------------------------------------
    if (opt.elementwise) {
        // Forward + backward (backward moves about twice the forward traffic): 3x.
        const double fb = opt.backward ? 3.0 : 1.0;
        const bool autocast = bytesOf(plan.precision.params) > cb;
        const DType residual = autocast ? plan.precision.params : c;
        const double rb = bytesOf(residual);
        const int64_t f =
            mo.moe.enabled() ? mo.moe.expert_ffn_hidden * mo.moe.top_k : mo.ffn_hidden;
        b.elementwise("layer.rmsnorm", "rmsnorm", T, hSp, rb + cb,
                      fb * (2.0 * perLayer + m) * (fullRecompute ? 1.5 : 1.0), residual,
                      "RMSNorm (two per layer, one final): read the input, write the output");
        if (mo.ffn == FfnKind::SwiGLU)
            b.elementwise("layer.swiglu", "swiglu", T, f / tp, 3.0 * cb,
                          fb * perLayer * (fullRecompute ? 2.0 : 1.0), c,
                          "silu(gate) * up: read two, write one");
        b.elementwise("layer.residual_add", "add", T, hSp, 3.0 * rb,
                      fb * 2.0 * perLayer * (fullRecompute ? 2.0 : 1.0), residual,
                      "residual add: read two, write one");
        b.elementwise("memory.copy", "copy", T, h, 2.0 * cb, 0, c,
                      "device-to-device copy of one micro-batch's hidden states (bandwidth "
                      "reference; read + written)");
    }

    // --- collectives ----------------------------------------------------------------------
    if (opt.collectives && catalog) {
        // The communication engine's inventory: the same calls its step time counts.
        for (const Collective &col : estimate(plan, *catalog).communication) {
            b.collective(col.collective, col.group, col.group_size, col.bytes, col.count_per_step,
                         col.phase, col.note);
            if (!w.kernels.empty() && w.kernels.back().kind == KernelKind::Collective &&
                w.kernels.back().group == col.group &&
                w.kernels.back().collective == col.collective)
                w.kernels.back().engine_time_s = col.time_s;
        }
        // Two calls of one collective in one group (forward and backward) keep distinct names.
        for (size_t i = 0; i < w.kernels.size(); ++i) {
            int dup = 0;
            for (size_t j = 0; j < i; ++j)
                if (w.kernels[j].name == w.kernels[i].name)
                    ++dup;
            if (dup > 0 && !w.kernels[i].phase.empty())
                w.kernels[i].name +=
                    "." + w.kernels[i].phase + (dup > 1 ? std::to_string(dup) : "");
        }
    } else if (opt.collectives) {
        const double act = double(T) * double(h) * cb; // one micro-batch's hidden states
        const double tpFwd = 2.0 * perLayer * (fullRecompute ? 2.0 : 1.0);
        const double tpBwd = 2.0 * perLayer;
        if (tp > 1) {
            if (pa.sp) {
                b.collective("all_gather", "tp", tp, act, tpFwd + tpBwd, "forward",
                             "sequence-parallel gather of the hidden states before attention and "
                             "FFN (and in backward)");
                b.collective("reduce_scatter", "tp", tp, act, tpFwd + tpBwd, "forward",
                             "sequence-parallel reduce-scatter after attention and FFN (and in "
                             "backward)");
            } else {
                b.collective("all_reduce", "tp", tp, act, tpFwd + tpBwd, "forward",
                             "tensor-parallel all-reduce after attention and FFN, forward and "
                             "backward");
            }
        }
        const int shard = pa.dp * cp;
        if (shard > 1) {
            const ParameterCounts pc = countParameters(mo);
            const double layerParams =
                double(pc.attention_per_layer + pc.dense_ffn_per_layer) / tp +
                double(pc.norms_per_layer + pc.router_per_layer) +
                (mo.moe.enabled()
                     ? double(mo.moe.experts) / pa.ep * double(pc.expert_per_layer) / tp
                     : 0.0);
            const double root = double(pc.embedding + pc.lm_head + pc.final_norm) / tp / pp;
            const double local = layerParams * L + root;
            const double gb = bytesOf(plan.precision.grads);
            const double bucket = 25.0 * 1024 * 1024;
            const std::string grp = cp > 1 ? "dp x cp" : "dp";
            switch (pa.sharding) {
            case Sharding::None: {
                const double total = local * gb;
                const double msg = std::min(bucket, total);
                b.collective("all_reduce", "dp", shard, msg, std::ceil(total / msg), "backward",
                             "DDP gradient all-reduce in 25 MiB buckets across " + grp);
                break;
            }
            case Sharding::Optimizer:
            case Sharding::Grads: {
                const double total = local * gb;
                const double msg = std::min(bucket, total);
                b.collective("reduce_scatter", "dp", shard, msg, std::ceil(total / msg), "backward",
                             "ZeRO gradient reduce-scatter in 25 MiB buckets");
                const double ptotal = local * bytesOf(plan.precision.params);
                const double pmsg = std::min(bucket, ptotal);
                b.collective("all_gather", "dp", shard, pmsg, std::ceil(ptotal / pmsg),
                             "optimizer_step", "ZeRO parameter all-gather after the step");
                break;
            }
            case Sharding::Full: {
                const double layerBytes = layerParams * cb;
                const double gathers = perLayer * (pa.reshard_after_forward ? 2.0 : 1.0);
                b.collective("all_gather", "dp", shard, layerBytes, gathers, "forward",
                             "FSDP all-gather of one layer's parameters (forward" +
                                 std::string(pa.reshard_after_forward ? " and backward)" : ")"));
                b.collective("reduce_scatter", "dp", shard, layerParams * gb, perLayer, "backward",
                             "FSDP reduce-scatter of one layer's gradients");
                break;
            }
            }
        }
        if (cp > 1)
            b.collective("send_recv", "cp", cp, double(T) * 2.0 * double(kv) / tp * cb,
                         3.0 * (cp - 1) * perLayer, "forward",
                         "ring attention K/V block to the next rank (forward; K/V and dK/dV in "
                         "backward)");
        if (pp > 1)
            b.collective("send_recv", "pp", 2, double(T) * double(hSp) * cb, 2.0 * m, "forward",
                         "pipeline activations forward and their gradients backward");
        if (pa.ep > 1 && mo.moe.enabled())
            b.collective("all_to_all", "ep", pa.ep, double(T) * mo.moe.top_k * double(h) * cb,
                         4.0 * perLayer, "forward", "MoE token dispatch and combine");
    }

    // --- memory probe ---------------------------------------------------------------------
    MemoryProbe &p = w.probe;
    p.model = mo;
    p.layers = mo.layers;
    p.seq_len = plan.training.seq_len;
    p.micro_batch = plan.training.micro_batch;
    if (opt.probe_max_tokens > 0 && p.seq_len * p.micro_batch > opt.probe_max_tokens) {
        p.micro_batch = 1;
        p.seq_len = std::min<int64_t>(p.seq_len, opt.probe_max_tokens);
        p.scaled_down = true;
    }
    p.mode = probeMode(plan.precision);
    p.recompute = plan.memory.recompute;
    p.attention = plan.memory.attention;
    p.optimizer_impl = plan.precision.optimizer_impl == OptimizerImpl::Default
                           ? OptimizerImpl::Foreach
                           : plan.precision.optimizer_impl;
    p.note = "one device, no sharding, plain PyTorch " + p.mode +
             " (Hugging Face Llama layers, fp32-logits loss, AdamW " +
             std::string(toString(p.optimizer_impl)) + ")";
    if (mo.moe.enabled())
        p.note += "; MoE layers as Hugging Face's per-expert loop (no expert parallelism)";
    if (mo.mtp_layers > 0)
        p.note += "; no MTP module";
    p.method = plan.training.method;
    p.dropout = plan.training.dropout; // the plan's own; the probe's profile (pytorch) has none
    if (p.method.method != TrainingMethod::Full)
        p.note += "; " + std::string(toString(p.method.method)) +
                  (p.method.method == TrainingMethod::QLoRA
                       ? " with bitsandbytes' k-bit layers (CUDA, when the worker's Python has "
                         "bitsandbytes; else skipped)"
                       : " with plain-PyTorch adapters / frozen layers");
    return w;
}

Plan probePlan(const Plan &plan, const MemoryProbe &probe)
{
    Plan p = plan;
    p.name = plan.name + " (memory probe)";
    p.model = probe.model;
    p.model.layers = std::max(1, probe.layers);
    // The probe builds MoE layers (Hugging Face's per-expert loop, one device: no dispatch
    // buffers) and keeps at least one of them; it builds no MTP module.
    if (p.model.moe.enabled())
        p.model.moe.first_dense_layers = std::min(p.model.moe.first_dense_layers, p.model.layers - 1);
    p.model.mtp_layers = 0;
    p.training.seq_len = probe.seq_len;
    p.training.micro_batch = probe.micro_batch;
    p.training.grad_accum = 1;
    p.training.method = probe.method;
    p.training.dropout = probe.dropout;
    p.training.method.freeze.last_layers = std::min(probe.method.freeze.last_layers, p.model.layers);
    p.parallel = Parallel{};
    p.memory.recompute = probe.recompute;
    p.memory.attention = probe.attention;
    p.memory.offload = Offload{};
    p.framework = "pytorch";
    p.cluster.devices_per_node = 1;
    p.cluster.nodes = 1;
    Precision &pr = p.precision;
    pr.optimizer = Optimizer::AdamW;
    pr.optimizer_impl = probe.optimizer_impl;
    pr.master_weights = DType::None;
    if (probe.mode == "amp" || probe.mode == "amp_fp16") {
        pr.params = pr.grads = pr.optimizer_state = DType::FP32;
        pr.compute = probe.mode == "amp" ? DType::BF16 : DType::FP16;
    } else if (probe.mode == "fp32") {
        pr.params = pr.grads = pr.optimizer_state = pr.compute = DType::FP32;
    } else {
        const DType d = probe.mode == "fp16" ? DType::FP16 : DType::BF16;
        pr.params = pr.grads = pr.optimizer_state = pr.compute = d;
    }
    return p;
}

int probeLayersThatFit(const Plan &plan, const MemoryProbe &probe, const Catalog &catalog,
                       double budget_bytes)
{
    auto need = [&](int layers) {
        MemoryProbe p = probe;
        p.layers = layers;
        // What the allocator reserves for the probe's step (its timeline replayed).
        const Plan pp = probePlan(plan, p);
        MemoryEstimate e = estimateMemory(pp, catalog);
        replayAllocator(pp, catalog, e);
        return e.peak_bytes + (e.ranks.empty() ? 0.0 : e.ranks.front().reserve.allocator);
    };
    int lo = 0, hi = std::max(1, probe.model.layers);
    if (need(hi) <= budget_bytes)
        return hi;
    while (hi - lo > 1) { // need(lo) fits (or lo == 0), need(hi) does not
        const int mid = (lo + hi) / 2;
        if (need(mid) <= budget_bytes)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

nlohmann::json kernelToJson(const Kernel &k)
{
    nlohmann::json j = {{"name", k.name},
                        {"kind", std::string(toString(k.kind))},
                        {"op", k.op},
                        {"phase", k.phase},
                        {"dtype", std::string(toString(k.dtype))},
                        {"count_per_step", k.count_per_step},
                        {"flops", k.flops},
                        {"bytes", k.bytes},
                        {"full_flops", k.full_flops},
                        {"full_bytes", k.full_bytes}};
    if (k.engine_time_s > 0)
        j["engine_time_s"] = k.engine_time_s;
    switch (k.kind) {
    case KernelKind::Gemm:
        j["m"] = k.m;
        j["n"] = k.n;
        j["k"] = k.k;
        j["layout"] = k.layout;
        break;
    case KernelKind::Attention:
        j["batch"] = k.batch;
        j["heads"] = k.heads;
        j["kv_heads"] = k.kv_heads;
        j["seq_q"] = k.seq_q;
        j["seq_kv"] = k.seq_kv;
        j["head_dim"] = k.head_dim;
        if (k.v_head_dim > 0)
            j["v_head_dim"] = k.v_head_dim;
        j["causal"] = k.causal;
        break;
    case KernelKind::Elementwise:
        j["elements"] = k.elements;
        j["width"] = k.width;
        break;
    case KernelKind::Collective:
        j["collective"] = k.collective;
        j["group"] = k.group;
        j["group_size"] = k.group_size;
        j["elements"] = k.elements;
        break;
    }
    if (!k.note.empty())
        j["note"] = k.note;
    return j;
}

Kernel kernelFromJson(const nlohmann::json &j)
{
    if (!j.is_object())
        throw PlanError("kernel", "must be a JSON object");
    Kernel k;
    k.name = j.value("name", std::string());
    if (k.name.empty())
        throw PlanError("kernel.name", "is required");
    const std::string kind = j.value("kind", std::string());
    if (kind == "gemm")
        k.kind = KernelKind::Gemm;
    else if (kind == "attention")
        k.kind = KernelKind::Attention;
    else if (kind == "elementwise")
        k.kind = KernelKind::Elementwise;
    else if (kind == "collective")
        k.kind = KernelKind::Collective;
    else
        throw PlanError("kernel.kind", "must be gemm, attention, elementwise or collective");
    k.op = j.value("op", std::string());
    k.phase = j.value("phase", std::string());
    const auto dt = parseDType(j.value("dtype", std::string("bf16")));
    if (!dt)
        throw PlanError("kernel.dtype", "must be fp32, bf16, fp16, fp8 or int8");
    k.dtype = *dt;
    k.count_per_step = j.value("count_per_step", 1.0);
    k.flops = j.value("flops", 0.0);
    k.bytes = j.value("bytes", 0.0);
    k.full_flops = j.value("full_flops", k.flops);
    k.full_bytes = j.value("full_bytes", k.bytes);
    k.m = j.value("m", int64_t(0));
    k.n = j.value("n", int64_t(0));
    k.k = j.value("k", int64_t(0));
    k.layout = j.value("layout", std::string("nn"));
    k.batch = j.value("batch", int64_t(0));
    k.heads = j.value("heads", int64_t(0));
    k.kv_heads = j.value("kv_heads", k.heads);
    k.seq_q = j.value("seq_q", int64_t(0));
    k.seq_kv = j.value("seq_kv", k.seq_q);
    k.head_dim = j.value("head_dim", int64_t(0));
    k.v_head_dim = j.value("v_head_dim", int64_t(0));
    k.causal = j.value("causal", true);
    k.elements = j.value("elements", int64_t(0));
    k.width = j.value("width", int64_t(0));
    k.collective = j.value("collective", std::string());
    k.group = j.value("group", std::string());
    k.group_size = j.value("group_size", 1);
    k.note = j.value("note", std::string());
    k.engine_time_s = j.value("engine_time_s", 0.0);
    return k;
}

namespace {

/// The probe's training method for the worker (its adapters' dtype is the pytorch profile's
/// PEFT default, fp32, unless the plan names one).
nlohmann::json probeMethodJson(const MemoryProbe &p)
{
    const MethodOptions &mo = p.method;
    nlohmann::json j = {{"method", std::string(toString(mo.method))}};
    if (mo.usesAdapters()) {
        j["rank"] = mo.lora.rank;
        j["targets"] = targetNames(mo.lora.targets);
        j["dropout"] = mo.lora.dropout;
        j["modules_to_save"] = partNames(mo.lora.modules_to_save);
        j["adapter_dtype"] = mo.lora.dtype != DType::None ? std::string(toString(mo.lora.dtype)) : "fp32";
    }
    if (mo.method == TrainingMethod::QLoRA)
        j["qlora"] = {{"quant", std::string(toString(mo.qlora.quant))},
                      {"double_quant", mo.qlora.double_quant},
                      {"block_size", mo.qlora.block_size}};
    if (mo.method == TrainingMethod::Freeze) {
        j["last_layers"] = std::min(mo.freeze.last_layers, std::max(1, p.layers));
        j["parts"] = partNames(mo.freeze.parts);
    }
    return j;
}

} // namespace

nlohmann::json probeToJson(const MemoryProbe &p)
{
    const auto &m = p.model;
    return {{"layers", p.layers},
            {"hidden", m.hidden},
            {"heads", m.heads},
            {"kv_heads", m.kv_heads},
            {"head_dim", m.head_dim},
            {"ffn_hidden", m.ffn_hidden},
            {"ffn", std::string(toString(m.ffn))},
            {"vocab", m.vocab},
            {"tied_embeddings", m.tied_embeddings},
            {"attention_bias", m.attention_bias},
            {"attention_kind", std::string(attentionName(m))},
            {"mla", m.mla_attention() ? nlohmann::json{{"q_lora_rank", m.mla.q_lora_rank},
                                                       {"kv_lora_rank", m.mla.kv_lora_rank},
                                                       {"qk_nope_head_dim", m.mla.qk_nope_head_dim},
                                                       {"qk_rope_head_dim", m.mla.qk_rope_head_dim},
                                                       {"v_head_dim", m.mla.v_head_dim}}
                                      : nlohmann::json(nullptr)},
            {"qk_norm", m.qk_norm},
            {"norm", std::string(toString(m.norm))},
            {"linear_bias", m.linear_bias},
            {"position_embedding", std::string(toString(m.position_embedding))},
            {"max_positions", m.max_positions},
            {"moe", m.moe.enabled() ? nlohmann::json{{"experts", m.moe.experts},
                                                     {"top_k", m.moe.top_k},
                                                     {"expert_ffn_hidden", m.moe.expert_ffn_hidden},
                                                     {"shared_experts", m.moe.shared_experts},
                                                     {"shared_expert_ffn_hidden", m.moe.shared_expert_ffn_hidden},
                                                     {"shared_expert_gate", m.moe.shared_expert_gate},
                                                     {"first_dense_layers", std::min(m.moe.first_dense_layers, p.layers - 1)},
                                                     {"layer_freq", m.moe.layer_freq},
                                                     {"router_fp32", m.moe.router_fp32}}
                                    : nlohmann::json(nullptr)},
            {"dropout", {{"hidden", std::max(0.0, p.dropout.hidden)},
                         {"attention", std::max(0.0, p.dropout.attention)}}},
            {"seq_len", p.seq_len},
            {"micro_batch", p.micro_batch},
            {"mode", p.mode},
            {"recompute", std::string(toString(p.recompute))},
            {"attention", std::string(toString(p.attention))},
            {"optimizer_impl", std::string(toString(p.optimizer_impl))},
            {"scaled_down", p.scaled_down},
            {"method", probeMethodJson(p)},
            {"note", p.note},
            {"snapshot", p.snapshot.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.snapshot)}};
}

} // namespace shardscope
