#include "model.h"

#include "errors.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace shardscope {

ParameterCounts countParameters(const ModelShape &m)
{
    ParameterCounts c;
    const int64_t h = m.hidden;
    const int64_t q = m.qDim();
    const int64_t kv = m.kvDim();
    const bool gelu = m.ffn == FfnKind::GELU;

    c.embedding = m.vocab * h;
    c.lm_head = m.tied_embeddings ? 0 : m.vocab * h;
    // RMSNorm has a weight; LayerNorm (GELU / GPT family) a weight and a bias.
    const int64_t normParams = gelu ? 2 * h : h;
    c.final_norm = normParams;
    c.norms_per_layer = 2 * normParams;

    c.attention_per_layer = h * q + 2 * h * kv + q * h;
    if (m.attention_bias || gelu)
        c.attention_per_layer += q + 2 * kv;
    if (gelu)
        c.attention_per_layer += h; // output projection bias

    auto ffnParams = [&](int64_t f) {
        if (gelu)
            return 2 * h * f + f + h; // fc1 + fc2 with biases
        return 3 * h * f;             // gate, up, down
    };
    if (m.moe.enabled()) {
        c.router_per_layer = h * m.moe.experts;
        c.expert_per_layer = ffnParams(m.moe.expert_ffn_hidden);
        c.dense_ffn_per_layer = 0;
    } else {
        c.dense_ffn_per_layer = ffnParams(m.ffn_hidden);
    }
    c.per_layer = c.attention_per_layer + c.norms_per_layer + c.dense_ffn_per_layer +
                  c.router_per_layer + c.expert_per_layer * std::max(0, m.moe.experts);
    c.total = c.embedding + c.lm_head + c.final_norm + c.per_layer * m.layers;

    const int64_t f = m.moe.enabled() ? m.moe.expert_ffn_hidden : m.ffn_hidden;
    c.largest_tensor = std::max({c.embedding, h * q, h * f});
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
