#include "model.h"

#include "errors.h"
#include "layers.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace shardscope {

ParameterCounts countParameters(const ModelShape &m)
{
    ParameterCounts c;
    const int64_t h = m.hidden;
    const int64_t norm = m.norm == NormKind::LayerNorm ? 2 * h : h;
    c.embedding = m.vocab * h;
    c.position = m.position_embedding == PositionEmbedding::Learned ? m.max_positions * h : 0;
    c.lm_head = m.tied_embeddings ? 0 : m.vocab * h;
    c.final_norm = norm;

    const LayerSpec dense = layerSpec(m, LayerKind::Dense);
    const LayerSpec moe = layerSpec(m, LayerKind::Moe);
    c.moe_layers = m.moeLayers();
    c.dense_layers = m.layers - c.moe_layers;
    c.attention_per_layer = dense.attention();
    c.norms_per_layer = dense.norms;
    c.dense_ffn_per_layer = c.dense_layers > 0 ? dense.denseFfn() : 0;
    c.dense_layer = dense.total();
    if (m.moe.enabled()) {
        c.router_per_layer = moe.router;
        c.expert_per_layer = moe.expert();
        c.shared_per_layer = moe.shared();
        c.moe_layer = moe.total();
    }
    c.per_layer = c.moe_layers > 0 ? c.moe_layer : c.dense_layer;
    const bool lastMoe = m.layers > 0 && m.moeLayer(m.layers - 1);
    if (m.mtp_layers > 0)
        c.mtp_module = 2 * norm + 2 * h * h + (m.linear_bias ? h : 0) +
                       (lastMoe ? c.moe_layer : c.dense_layer) + norm;
    c.total = c.embedding + c.position + c.lm_head + c.final_norm +
              c.dense_layer * c.dense_layers + c.moe_layer * c.moe_layers +
              c.mtp_module * m.mtp_layers;

    c.largest_tensor = c.embedding;
    for (const LayerSpec *s : {&dense, &moe})
        if (s->kind == LayerKind::Dense ? c.dense_layers > 0 : c.moe_layers > 0)
            for (const LinearSpec &l : s->linears)
                c.largest_tensor = std::max(c.largest_tensor, l.in * l.out);
    return c;
}

ModelShape shapeForParameterCount(double parameters)
{
    if (!(parameters >= 0.5e9 && parameters <= 1.0e12))
        throw PlanError("model.parameters", "must be between 0.5e9 and 1e12 parameters");
    ModelShape m;
    m.vocab = 32000;
    m.ffn = FfnKind::SwiGLU;
    m.head_dim = 128;
    // Llama 2 proportions: per layer ~12 h^2 parameters and layers ~ h / 128, so
    // P(h) ~ 12 h^3 / 128 + 2 V h. Take the whole number of 128-wide heads whose P(h) is
    // closest to the target; the FFN width below then absorbs the rest.
    int heads = 8;
    double best = 1e300;
    for (int a = 8; a <= 512; ++a) {
        const double h = 128.0 * a;
        const double estimate = 12.0 * h * h * h / 128.0 + 2.0 * double(m.vocab) * h;
        if (std::fabs(estimate - parameters) < best) {
            best = std::fabs(estimate - parameters);
            heads = a;
        }
    }
    m.heads = heads;
    m.hidden = int64_t(heads) * 128;
    m.layers = std::max(2, int(std::lround(double(m.hidden) / 128.0)));
    m.kv_heads = parameters >= 30e9 ? 8 : heads;
    if (m.heads % m.kv_heads != 0)
        m.kv_heads = m.heads;
    // Size the FFN so that the total lands on the target: per layer 3 h f for SwiGLU.
    const double h = double(m.hidden);
    const double fixed = 2.0 * m.vocab * h + h;
    const double attn = 2.0 * h * h + 2.0 * h * double(m.kv_heads) * 128.0 + 2.0 * h;
    double f = (parameters - fixed) / m.layers - attn;
    f /= 3.0 * h;
    int64_t ffn = std::max<int64_t>(256, int64_t(std::lround(f / 256.0)) * 256);
    m.ffn_hidden = ffn;
    char name[64];
    std::snprintf(name, sizeof name, "Llama-family %.1fB (derived)", parameters / 1e9);
    m.display_name = name;
    return m;
}

} // namespace shardscope
