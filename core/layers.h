#pragma once

// A decoder layer as the linear layers and vectors it is made of, per layer kind (dense FFN or
// MoE) and attention kind (MHA / GQA or multi-head latent attention): what parameter counts,
// adapters, FLOPs and the per-rank split are derived from.
#include "adapters.h"
#include "model.h"

#include <cstdint>
#include <vector>

namespace shardscope {

struct Parallel;

enum class LayerKind { Dense, Moe };

/// How tensor parallelism splits a linear (Megatron-Core's parallel_mode): column-parallel by
/// output rows, row-parallel by input columns, or duplicated on every rank (MLA's
/// down-projections).
enum class Split { Column, Row, Duplicated };

/// What a linear belongs to: attention, the dense FFN, a shared expert, or one routed expert
/// (split by expert tensor parallelism, one copy per local expert).
enum class LayerPart { Attention, DenseFfn, SharedExpert, Expert };

struct LinearSpec
{
    const char *name = "";   ///< Hugging Face's module name ("q_proj", "kv_b_proj", "gate_proj")
    LinearTarget target = kTargetQ; ///< the adapter target it answers to
    int64_t in = 0, out = 0;
    Split split = Split::Column;
    LayerPart part = LayerPart::Attention;
    bool bias = false;
    int copies = 1;          ///< identical linears (shared experts; routed ones are per expert)
    int64_t weights() const { return in * out * copies; }
    int64_t biases() const { return bias ? out * copies : 0; }
};

struct LayerSpec
{
    LayerKind kind = LayerKind::Dense;
    std::vector<LinearSpec> linears; ///< a routed expert's linears once (part Expert)
    /// Norm weights (and LayerNorm biases) outside the linears: the two pre-norms.
    int64_t norms = 0;
    /// Attention's own vectors: MLA's latent norms, Qwen3's QK norms (replicated under TP).
    int64_t attentionVectors = 0;
    int64_t router = 0;      ///< experts x hidden
    int64_t sharedGate = 0;  ///< Qwen2-MoE's shared-expert gate (hidden)
    int experts = 0;         ///< routed experts (0: dense layer)
    /// Parameters of the parts (routed experts all counted).
    int64_t attention() const;
    int64_t denseFfn() const;
    int64_t shared() const;  ///< shared experts and their gate
    int64_t expert() const;  ///< one routed expert
    int64_t total() const;
};

LayerSpec layerSpec(const ModelShape &m, LayerKind kind);
inline LayerKind layerKind(const ModelShape &m, int layer)
{
    return m.moeLayer(layer) ? LayerKind::Moe : LayerKind::Dense;
}

/// Elements of one layer on one rank: tp splits attention, the dense FFN and shared experts,
/// etp splits each routed expert and ep spreads them.
struct RankLayer
{
    double attention = 0, denseFfn = 0, shared = 0, norms = 0, router = 0;
    double experts = 0; ///< all local routed experts
    double matmul = 0;  ///< weights that a matmul reads (what autocast casts)
    double dense() const { return attention + denseFfn + shared + norms + router; }
    double total() const { return dense() + experts; }
};

RankLayer rankLayer(const ModelShape &m, LayerKind kind, int tp, int ep, int etp);
RankLayer rankLayer(const LayerSpec &spec, int tp, int ep, int etp);

/// The pipeline stage holding decoder layer `layer` of `layers`: model chunks of layers / (pp x
/// virtual stages) layers, placed round-robin over the stages (Megatron's interleaved order;
/// one chunk per stage otherwise).
int stageOfLayer(const Parallel &pa, int layers, int layer);

/// Layers of each kind among `layers` (indices of the decoder layers a stage holds).
struct LayerMix
{
    int dense = 0, moe = 0;
    int total() const { return dense + moe; }
};

} // namespace shardscope
