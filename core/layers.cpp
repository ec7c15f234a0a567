#include "layers.h"

#include "plan.h"

#include <algorithm>

namespace shardscope {

namespace {

/// Weights and biases of the linears of one part.
int64_t partParams(const LayerSpec &s, LayerPart part)
{
    int64_t n = 0;
    for (const LinearSpec &l : s.linears)
        if (l.part == part)
            n += l.weights() + l.biases();
    return n;
}

} // namespace

int64_t LayerSpec::attention() const { return attentionVectors + partParams(*this, LayerPart::Attention); }
int64_t LayerSpec::denseFfn() const { return partParams(*this, LayerPart::DenseFfn); }
int64_t LayerSpec::shared() const { return sharedGate + partParams(*this, LayerPart::SharedExpert); }
int64_t LayerSpec::expert() const { return partParams(*this, LayerPart::Expert); }

int64_t LayerSpec::total() const
{
    return norms + attention() + denseFfn() + shared() + router + int64_t(experts) * expert();
}

namespace {

/// Norm parameters over `width`: RMSNorm a weight, LayerNorm a weight and a bias.
int64_t normParams(const ModelShape &m, int64_t width)
{
    return m.norm == NormKind::LayerNorm ? 2 * width : width;
}

/// An FFN's linears: gated (gate, up, down) or not (fc1 as "up", fc2 as "down").
void addFfn(LayerSpec &s, const ModelShape &m, int64_t width, LayerPart part, int copies)
{
    const bool bias = m.linear_bias;
    if (m.ffn == FfnKind::SwiGLU)
        s.linears.push_back({"gate_proj", kTargetGate, m.hidden, width, Split::Column, part, bias, copies});
    s.linears.push_back({m.ffn == FfnKind::SwiGLU ? "up_proj" : "fc1", kTargetUp, m.hidden, width,
                         Split::Column, part, bias, copies});
    s.linears.push_back({m.ffn == FfnKind::SwiGLU ? "down_proj" : "fc2", kTargetDown, width, m.hidden,
                         Split::Row, part, bias, copies});
}

} // namespace

LayerSpec layerSpec(const ModelShape &m, LayerKind kind)
{
    LayerSpec s;
    s.kind = kind;
    s.linears.reserve(10);
    const int64_t h = m.hidden;
    s.norms = 2 * normParams(m, h);
    const bool qkvBias = m.attention_bias || m.linear_bias;
    if (m.mla_attention()) {
        const MlaShape &a = m.mla;
        const int64_t qk = int64_t(m.heads) * a.qkHeadDim();
        if (a.q_lora_rank > 0) {
            s.linears.push_back({"q_a_proj", kTargetQ, h, a.q_lora_rank, Split::Duplicated,
                                 LayerPart::Attention, qkvBias});
            s.linears.push_back({"q_b_proj", kTargetQ, a.q_lora_rank, qk, Split::Column,
                                 LayerPart::Attention, qkvBias});
            s.attentionVectors += normParams(m, a.q_lora_rank);
        } else {
            s.linears.push_back({"q_proj", kTargetQ, h, qk, Split::Column, LayerPart::Attention, qkvBias});
        }
        s.linears.push_back({"kv_a_proj_with_mqa", kTargetK, h, a.kv_lora_rank + a.qk_rope_head_dim,
                             Split::Duplicated, LayerPart::Attention, qkvBias});
        s.linears.push_back({"kv_b_proj", kTargetV, a.kv_lora_rank,
                             int64_t(m.heads) * (a.qk_nope_head_dim + a.v_head_dim), Split::Column,
                             LayerPart::Attention, qkvBias});
        s.attentionVectors += normParams(m, a.kv_lora_rank);
    } else {
        s.linears.push_back({"q_proj", kTargetQ, h, m.qDim(), Split::Column, LayerPart::Attention, qkvBias});
        s.linears.push_back({"k_proj", kTargetK, h, m.kvDim(), Split::Column, LayerPart::Attention, qkvBias});
        s.linears.push_back({"v_proj", kTargetV, h, m.vDim(), Split::Column, LayerPart::Attention, qkvBias});
        if (m.qk_norm)
            s.attentionVectors += 2 * m.head_dim; // q_norm and k_norm, one weight per head_dim
    }
    s.linears.push_back({"o_proj", kTargetO, m.outDim(), h, Split::Row, LayerPart::Attention, m.linear_bias});

    if (kind == LayerKind::Dense) {
        addFfn(s, m, m.ffn_hidden, LayerPart::DenseFfn, 1);
        return s;
    }
    const MoeShape &e = m.moe;
    s.experts = e.experts;
    s.router = int64_t(e.experts) * h;
    addFfn(s, m, e.expert_ffn_hidden, LayerPart::Expert, 1);
    if (e.shared_experts > 0)
        addFfn(s, m, e.shared_expert_ffn_hidden, LayerPart::SharedExpert, e.shared_experts);
    if (e.shared_expert_gate)
        s.sharedGate = h;
    return s;
}

RankLayer rankLayer(const ModelShape &m, LayerKind kind, int tp, int ep, int etp)
{
    return rankLayer(layerSpec(m, kind), tp, ep, etp);
}

RankLayer rankLayer(const LayerSpec &s, int tp, int ep, int etp)
{
    RankLayer r;
    r.norms = double(s.norms);
    r.attention = double(s.attentionVectors);
    r.router = double(s.router);
    r.shared = double(s.sharedGate);
    const double localExperts = s.experts > 0 ? double(s.experts) / ep : 0.0;
    for (const LinearSpec &l : s.linears) {
        const double split = l.part == LayerPart::Expert ? etp : tp;
        double w = double(l.weights()), b = double(l.biases());
        switch (l.split) {
        case Split::Column: w /= split; b /= split; break;
        case Split::Row: w /= split; break;
        case Split::Duplicated: break;
        }
        double *part = nullptr;
        double copies = 1.0;
        switch (l.part) {
        case LayerPart::Attention: part = &r.attention; break;
        case LayerPart::DenseFfn: part = &r.denseFfn; break;
        case LayerPart::SharedExpert: part = &r.shared; break;
        case LayerPart::Expert: part = &r.experts; copies = localExperts; break;
        }
        *part += (w + b) * copies;
        r.matmul += w * copies;
    }
    return r;
}

int stageOfLayer(const Parallel &pa, int layers, int layer)
{
    const int chunks = pa.pp * (pa.pp_schedule == PpSchedule::Interleaved ? pa.virtual_stages : 1);
    const int perChunk = std::max(1, layers / std::max(1, chunks));
    return (layer / perChunk) % std::max(1, pa.pp);
}

} // namespace shardscope
