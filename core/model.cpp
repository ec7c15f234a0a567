#include "model.h"

#include "errors.h"
#include "layers.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <utility>

namespace shardscope {

namespace {

ParameterCounts buildParameterCounts(const ModelShape &m);

} // namespace

ParameterCounts countParameters(const ModelShape &m)
{
    // Asked for the same model over and over (each layout a search visits): the last model's
    // counts are kept, per thread.
    thread_local std::optional<std::pair<ModelShape, ParameterCounts>> last;
    if (!last || !(last->first == m))
        last.emplace(m, buildParameterCounts(m));
    return last->second;
}

namespace {

ParameterCounts buildParameterCounts(const ModelShape &m)
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

} // namespace

ModelShape shapeForParameterCount(double parameters, int tp)
{
    if (!(parameters >= 0.5e9 && parameters <= 1.0e12))
        throw PlanError("model.parameters", "must be between 0.5e9 and 1e12 parameters");
    if (tp < 1 || tp > 512)
        throw PlanError("parallel.tp", "must be between 1 and 512");
    ModelShape m;
    m.vocab = 32000;
    m.ffn = FfnKind::SwiGLU;
    m.head_dim = 128;
    // Heads come in multiples of 8 (Llama 2 and 3, Qwen2.5, Mistral: 32, 40, 64, 128), and of tp
    // so that every tensor-parallel rank holds whole heads.
    int grid = 8;
    while (grid % tp != 0)
        grid += 8;
    // Llama proportions: about as many layers as heads (Llama 2 7B: 32 and 32, 70B: 80 and 64;
    // Llama 3.2 1B: 16 and 32 of width 64), per layer ~12 h^2 parameters with an FFN of 8/3 h.
    // Take the multiple of the grid whose layer count for the target is nearest its head count,
    // and no fewer layers than 3/4 of the heads (small models are deep and narrow).
    int heads = grid;
    double best = 1e300;
    for (int a = grid; a <= 512; a += grid) {
        const double h = 128.0 * a;
        const double layers = (parameters - 2.0 * double(m.vocab) * h) / (12.0 * h * h);
        if (layers < 0.75 * a && a > grid)
            break;
        const double distance = std::fabs(std::log(std::max(layers, 1.0) / a));
        if (distance < best) {
            best = distance;
            heads = a;
        }
    }
    m.heads = heads;
    m.hidden = int64_t(heads) * 128;
    // Grouped-query attention with 8 KV heads from 30B up (Llama 2 70B, Llama 3); with tp
    // beyond 8, as many as the grid so that each tensor-parallel rank holds whole KV heads.
    m.kv_heads = parameters >= 30e9 ? grid : heads;
    if (m.heads % m.kv_heads != 0)
        m.kv_heads = m.heads;

    const double h = double(m.hidden);
    const double fixed = 2.0 * m.vocab * h + h; // embedding, head, final norm
    const double attn = 2.0 * h * h + 2.0 * h * double(m.kv_heads) * 128.0 + 2.0 * h;
    // The SwiGLU width (3 h f per layer) that lands the total on the target for a layer count,
    // kept between 2.5 h and 4 h (Llama 2 7B: 2.69 h, 70B: 3.5 h) and a multiple of 256.
    auto ffnFor = [&](int layers) {
        const double f = ((parameters - fixed) / layers - attn) / (3.0 * h);
        const double clamped = std::clamp(f, 2.5 * h, 4.0 * h);
        return std::max<int64_t>(256, int64_t(std::lround(clamped / 256.0)) * 256);
    };
    // Layers ~ hidden / 128 while the FFN can absorb the rest; beyond that the layer count does,
    // in multiples of 4 (pipeline stages of 2 and 4 divide it).
    m.layers = std::max(2, int(std::lround(h / 128.0)));
    m.ffn_hidden = ffnFor(m.layers);
    const double perLayer = attn + 3.0 * h * double(m.ffn_hidden);
    const double wantLayers = (parameters - fixed) / perLayer;
    if (std::fabs(wantLayers - m.layers) > 0.5) {
        m.layers = std::max(4, int(std::lround(wantLayers / 4.0)) * 4);
        m.ffn_hidden = ffnFor(m.layers);
    }
    char name[64];
    std::snprintf(name, sizeof name, "Llama-family %.1fB (derived)",
                  double(countParameters(m).total) / 1e9);
    m.display_name = name;
    return m;
}

std::vector<ModelShape> derivedShapes(int tp, int steps)
{
    std::vector<std::pair<int64_t, ModelShape>> counted;
    for (int i = 0; i <= steps; ++i) {
        const double p = 0.5e9 * std::pow(1e12 / 0.5e9, double(i) / steps);
        ModelShape m = shapeForParameterCount(std::clamp(p, 0.5e9, 1.0e12), tp);
        counted.emplace_back(countParameters(m).total, std::move(m));
    }
    std::stable_sort(counted.begin(), counted.end(),
                     [](const auto &a, const auto &b) { return a.first < b.first; });
    std::vector<ModelShape> shapes;
    int64_t last = -1;
    for (auto &[total, m] : counted) {
        if (total == last)
            continue;
        last = total;
        shapes.push_back(std::move(m));
    }
    return shapes;
}

} // namespace shardscope
