#include "attention.h"

namespace shardscope {

namespace {

/// Bytes per score eager attention saves: Hugging Face's fp32 softmax and its compute-dtype
/// cast (with dropout: the mask, the dropped copy replacing the cast as the PV input);
/// Megatron's fused softmax its compute-dtype output (with dropout: the mask and the dropped
/// copy: Korthikanti et al. 2022's 5 bytes per score in bf16).
double scoreBytes(const ActivationEnv &e)
{
    const bool dropout = e.attentionDropout > 0;
    if (e.fusedSoftmax)
        return e.c + (dropout ? 1.0 + e.c : 0.0);
    return 4.0 + e.c + (dropout ? 1.0 : 0.0);
}

} // namespace


double normSavedPerToken(const ActivationEnv &e, const ModelShape &m, double width, bool weightTrained,
                         double rows)
{
    if (m.norm == NormKind::LayerNorm)
        return e.r * width + 8.0 * rows; // input; fp32 mean and rstd per row
    if (e.upcastNorm)
        return (4.0 + (weightTrained ? e.r : 0.0)) * width;
    return e.r * width;
}

double ropeSavedPerToken(const ActivationEnv &e, const ModelShape &m)
{
    if (m.position_embedding != PositionEmbedding::Rope || !(e.ropePerLayer || e.ropeKeepsInput))
        return 0;
    const double rotary = m.mla_attention() ? double(m.mla.qk_rope_head_dim) : double(m.head_dim);
    double bytes = 4.0 * rotary * e.c * e.ropeRowsPerToken; // cos and sin, for q and for k
    if (e.ropeKeepsInput && !m.mla_attention()) {
        const double q = double(m.qDim()) / e.tp, kv = double(m.kvDim()) / e.tp;
        if (m.qk_norm)
            bytes += e.c * (q + kv);
        else
            bytes += e.c * (q + 2.0 * kv) + (m.heads != m.kv_heads ? e.c * q : 0.0);
    }
    return bytes;
}

AttentionSaved attentionSaved(const ActivationEnv &e, const ModelShape &m, bool trained)
{
    AttentionSaved s;
    s.core = ropeSavedPerToken(e, m);
    const double c = e.c;
    const double hSp = double(m.hidden) / (e.sp ? e.tp : 1.0);
    const double a = double(m.heads) / e.tp;
    if (m.mla_attention()) {
        const MlaShape &l = m.mla;
        const double qk = double(l.qkHeadDim()), v = double(l.v_head_dim);
        // Both down-projections read the normed input (one tensor; autocast: a cast each).
        if (trained)
            s.inputs = (e.casts ? 2.0 : 1.0) * c * hSp;
        // The latents are duplicated on every TP rank (Megatron-Core's MLA): each norm saves
        // its input and the up-projection its normed output, over every token.
        auto latent = [&](double rank) {
            // The latent norm's weight trains with attention.
            ActivationEnv le = e;
            le.r = c; // the latent is in the compute dtype
            return normSavedPerToken(le, m, rank, trained) + (trained ? c * rank : 0.0);
        };
        if (l.q_lora_rank > 0)
            s.core += latent(double(l.q_lora_rank));
        s.core += latent(double(l.kv_lora_rank));
        // Flash attention: q and k (nope and rope parts, the rope key expanded to every head),
        // v, the output (o_proj's input), the softmax statistics (flashStatBytes).
        s.qWidth = a * qk;
        s.kvWidth = a * (qk + v);
        if (e.flash) {
            s.core += c * (2.0 * a * qk + a * v) + c * a * v + e.flashStatBytes * a;
            if (e.flashOutputCopy)
                s.core += c * a * v; // the output's (s, b) copy, o_proj's input
        } else {
            s.core += c * (2.0 * a * qk + a * v) + c * a * v;
            s.scores = scoreBytes(e) * a * e.seqTokens;
        }
        return s;
    }
    const double q = double(m.qDim()) / e.tp;
    const double kvOwn = double(m.kvDim()) / e.tp; // as projected (and QK-normed)
    // What attention receives of each of K and V: the query width when they are repeated to the
    // query heads first.
    const double kv = e.kvRepeated ? q : kvOwn;
    s.qWidth = q;
    s.kvWidth = 2.0 * kv;
    if (trained)
        s.inputs = (e.casts ? 3.0 : 1.0) * c * hSp; // q, k, v projections
    if (m.qk_norm) {
        // Qwen3: RMSNorm over each head of q and k before RoPE (weights shared per head_dim).
        ActivationEnv ne = e;
        ne.r = c;
        s.core += normSavedPerToken(ne, m, q, trained) + normSavedPerToken(ne, m, kvOwn, trained);
    }
    if (e.flash) {
        // q, k (after RoPE) and v, the output (also the o_proj input), the softmax statistics
        // (flashStatBytes: fp32 log-sum-exp, or torch_npu's max and sum). Under
        // Ulysses these are the all-to-all's outputs (the head split over the whole sequence:
        // the same bytes per token of the rank), k and v repeated to the query heads if so.
        s.core += c * (q + 2.0 * kv) + c * q + e.flashStatBytes * a;
        // Run in the (b, s) layout: q, k and v are copied to it (replacing the views of the
        // projection's output, the same bytes), and the output copied back to (s, b) for o_proj
        // is saved beside the kernel's own.
        if (e.flashOutputCopy)
            s.core += c * q;
    } else {
        // Eager: k and v repeated to all heads (repeat_kv), fp32 softmax and its compute-dtype
        // cast per score (with dropout: its one-byte mask; the dropped copy replaces the cast
        // as the PV input), the attention output copied contiguous for o_proj.
        s.core += c * (q + 2.0 * q) + c * q;
        s.scores = scoreBytes(e) * a * e.seqTokens;
    }
    return s;
}

double flashStatBytes(const std::string &vendor)
{
    return vendor == "huawei" ? 2.0 * 8.0 * 4.0 : kLogSumExpBytes;
}

double contextParallelTransient(const AttentionSaved &a, int ringDegree, int ulyssesDegree,
                                double tokens, double c, bool backward)
{
    double b = 0;
    if (ringDegree > 1)
        b += (backward ? 4.0 : 2.0) * tokens * a.kvWidth * c;
    if (ulyssesDegree > 1)
        b += tokens * (a.qWidth + a.kvWidth) * c;
    return b;
}

double attentionCoreFlopsPerToken(const ModelShape &m, double keys)
{
    const double qk = double(m.head_dim);
    const double v = m.mla_attention() ? double(m.mla.v_head_dim) : double(m.head_dim);
    return 2.0 * keys * double(m.heads) * (qk + v);
}

} // namespace shardscope
