#include "layers.h"

#include "plan.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>

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

namespace {

LayerSpec buildLayerSpec(const ModelShape &m, LayerKind kind)
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

} // namespace

namespace {

/// The engine asks for the same model's layers over and over (each layout a search visits, each
/// part of one estimate): the last model's two kinds are kept per thread, with their per-rank
/// splits already asked for.
struct KeptLayers
{
    struct RankSplit
    {
        LayerKind kind;
        int tp, ep, etp;
        RankLayer rank;
    };
    std::optional<ModelShape> model;
    std::optional<LayerSpec> spec[2];
    std::vector<RankSplit> splits;

    static KeptLayers &of(const ModelShape &m)
    {
        thread_local KeptLayers last;
        // A decoder layer does not depend on the vocabulary: the kept layers serve a model whose
        // vocabulary alone differs (the engine asks with the plan's and with the padded one).
        if (last.model) {
            last.model->vocab = m.vocab;
            last.model->vocab_divisible_by = m.vocab_divisible_by;
        }
        if (!last.model || !(*last.model == m)) {
            last.model = m;
            last.spec[0].reset();
            last.spec[1].reset();
            last.splits.clear();
        }
        return last;
    }
    const LayerSpec &specOf(LayerKind kind)
    {
        std::optional<LayerSpec> &kept = spec[kind == LayerKind::Moe ? 1 : 0];
        if (!kept)
            kept = buildLayerSpec(*model, kind);
        return *kept;
    }
};

} // namespace

LayerSpec layerSpec(const ModelShape &m, LayerKind kind)
{
    return KeptLayers::of(m).specOf(kind);
}

RankLayer rankLayer(const ModelShape &m, LayerKind kind, int tp, int ep, int etp)
{
    KeptLayers &k = KeptLayers::of(m);
    for (const KeptLayers::RankSplit &s : k.splits) {
        if (s.kind == kind && s.tp == tp && s.ep == ep && s.etp == etp)
            return s.rank;
    }
    const RankLayer r = rankLayer(k.specOf(kind), tp, ep, etp);
    if (k.splits.size() >= 16)
        k.splits.erase(k.splits.begin());
    k.splits.push_back({kind, tp, ep, etp, r});
    return r;
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

int StageLayout::stage(int s) const
{
    int n = 0;
    for (int c = 0; c < chunks; ++c)
        n += chunk(s, c);
    return n;
}

int StageLayout::offset(int s, int c) const
{
    // Megatron's order (get_transformer_layer_offset): virtual stage by virtual stage, each
    // through all the stages.
    int n = 0;
    for (int cc = 0; cc < c; ++cc)
        for (int ss = 0; ss < pp; ++ss)
            n += chunk(ss, cc);
    for (int ss = 0; ss < s; ++ss)
        n += chunk(ss, c);
    return n;
}

int StageLayout::largestChunk() const
{
    return counts.empty() ? 0 : *std::max_element(counts.begin(), counts.end());
}

int StageLayout::largestStage() const
{
    int most = 0;
    for (int s = 0; s < pp; ++s)
        most = std::max(most, stage(s));
    return most;
}

bool StageLayout::even() const
{
    return std::adjacent_find(counts.begin(), counts.end(), std::not_equal_to<>()) == counts.end();
}

StageLayout stageLayout(const Parallel &pa, int layers)
{
    StageLayout l;
    l.pp = std::max(1, pa.pp);
    l.chunks = pa.chunksPerStage();
    const int pp = l.pp, v = l.chunks;
    l.counts.assign(size_t(pp * v), 0);
    layers = std::max(0, layers);
    // Each stage's layers, then split over its chunks.
    std::vector<int> stage(size_t(pp), 0);
    int embedding = 0, loss = 0;
    std::vector<std::string> chunks;
    if (pp > 1 && !pa.pipeline_layout.empty()) {
        try {
            chunks = unrollPipelineLayout(pa.pipeline_layout);
        } catch (const PlanError &) {
            chunks.clear();
        }
    }
    if (pp > 1 && int(chunks.size()) == pp * v) {
        // Chunk c of stage s is the string's (c x pp + s)-th.
        for (int s = 0; s < pp; ++s)
            for (int c = 0; c < v; ++c) {
                const std::string &k = chunks[size_t(c * pp + s)];
                l.counts[size_t(s * v + c)] = int(std::count(k.begin(), k.end(), 't'));
            }
    } else if (pp == 1) {
        stage[0] = layers;
    } else if (!pa.stage_layers.empty()) {
        for (int s = 0; s < pp && s < int(pa.stage_layers.size()); ++s)
            stage[size_t(s)] = std::max(0, pa.stage_layers[size_t(s)]);
    } else if (pa.first_stage_layers > 0 || pa.last_stage_layers > 0) {
        // get_num_layers_to_build: the rest over the stages left.
        int rest = layers, left = pp;
        if (pa.first_stage_layers > 0) {
            rest -= pa.first_stage_layers;
            --left;
        }
        if (pa.last_stage_layers > 0) {
            rest -= pa.last_stage_layers;
            --left;
        }
        const int middle = left > 0 ? std::max(0, rest) / left : 0;
        for (int s = 0; s < pp; ++s)
            stage[size_t(s)] = middle;
        if (pa.first_stage_layers > 0)
            stage[0] = pa.first_stage_layers;
        if (pa.last_stage_layers > 0)
            stage[size_t(pp - 1)] = pa.last_stage_layers;
    } else {
        // The embedding and the loss counted as layers: (layers + 1 + 1) / pp per stage, the
        // first (last) chunk building one decoder layer fewer.
        embedding = pa.account_for_embedding ? 1 : 0;
        loss = pa.account_for_loss ? 1 : 0;
        const int per = (layers + embedding + loss) / pp;
        for (int s = 0; s < pp; ++s)
            stage[size_t(s)] = per;
    }
    if (!(pp > 1 && int(chunks.size()) == pp * v))
        for (int s = 0; s < pp; ++s)
            for (int c = 0; c < v; ++c)
                l.counts[size_t(s * v + c)] = stage[size_t(s)] / v + (c == v - 1 ? stage[size_t(s)] % v : 0);
    l.counts.front() = std::max(0, l.counts.front() - embedding);
    l.counts.back() = std::max(0, l.counts.back() - loss);
    // An invalid layout still places every layer once: surplus taken from the end, the rest
    // given to the last chunk.
    int sum = 0;
    for (int n : l.counts)
        sum += n;
    for (size_t i = l.counts.size(); i-- > 0 && sum > layers;) {
        const int cut = std::min(l.counts[i], sum - layers);
        l.counts[i] -= cut;
        sum -= cut;
    }
    l.counts.back() += layers - sum;
    return l;
}

std::vector<int> StageLayout::stages() const
{
    std::vector<int> out(static_cast<size_t>(pp));
    for (int s = 0; s < pp; ++s)
        out[size_t(s)] = stage(s);
    return out;
}

int StageLayout::chunkBlockRecomputed(int s, int c, int n, bool perPpRank) const
{
    n = std::max(1, n);
    const int first = perPpRank ? std::max(0, (n - c + chunks - 1) / chunks) : n;
    return std::min(first, chunk(s, c));
}

int StageLayout::blockRecomputed(int s, int n, bool perPpRank) const
{
    int r = 0;
    for (int c = 0; c < chunks; ++c)
        r += chunkBlockRecomputed(s, c, n, perPpRank);
    return r;
}

std::vector<int> stageLayers(const Parallel &pa, int layers)
{
    return stageLayout(pa, layers).stages();
}

std::vector<int> stageLayers(const Plan &plan)
{
    return stageLayers(plan.parallel, plan.model.layers);
}

std::vector<int> layerStages(const Parallel &pa, int layers)
{
    const StageLayout l = stageLayout(pa, layers);
    std::vector<int> out;
    out.reserve(size_t(std::max(0, layers)));
    for (int c = 0; c < l.chunks; ++c)
        for (int s = 0; s < l.pp; ++s)
            out.insert(out.end(), size_t(l.chunk(s, c)), s);
    return out;
}

int stageOfLayer(const Parallel &pa, int layers, int layer)
{
    const StageLayout l = stageLayout(pa, layers);
    int n = 0;
    for (int c = 0; c < l.chunks; ++c)
        for (int s = 0; s < l.pp; ++s) {
            n += l.chunk(s, c);
            if (layer < n)
                return s;
        }
    return l.pp - 1;
}

std::vector<std::string> unrollPipelineLayout(const std::string &layout)
{
    const char *field = "parallel.pipeline_layout";
    std::string text;
    for (char ch : layout)
        if (ch != ',' && ch != ' ')
            text += ch;
    // A repetition count after "*": digits, at most 4096.
    auto count = [&](size_t &i) {
        size_t j = i;
        while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j])))
            ++j;
        if (j == i || j - i > 4)
            throw PlanError(field, "\"*\" must be followed by a count (1 to 4096) in \"" + layout + "\"");
        const int n = std::stoi(text.substr(i, j - i));
        if (n < 1 || n > 4096)
            throw PlanError(field, "repetition counts are 1 to 4096, got " + std::to_string(n));
        i = j;
        return n;
    };
    // Megatron unrolls "(...)*n" first (no nesting), then "x*n".
    std::string flat;
    for (size_t i = 0; i < text.size();) {
        if (text[i] == '(') {
            const size_t close = text.find(')', i);
            if (close == std::string::npos || text.find('(', i + 1) < close)
                throw PlanError(field, "unmatched or nested parentheses in \"" + layout + "\"");
            const std::string body = text.substr(i + 1, close - i - 1);
            if (body.empty() || close + 1 >= text.size() || text[close + 1] != '*')
                throw PlanError(field, "a parenthesised group must be non-empty and followed by *n in \"" + layout + "\"");
            size_t k = close + 2;
            const int n = count(k);
            for (int r = 0; r < n; ++r)
                flat += body;
            i = k;
        } else if (text[i] == ')') {
            throw PlanError(field, "unmatched \")\" in \"" + layout + "\"");
        } else {
            flat += text[i++];
        }
    }
    std::string unrolled;
    for (size_t i = 0; i < flat.size();) {
        const char ch = flat[i++];
        if (i < flat.size() && flat[i] == '*') {
            ++i;
            const int n = count(i);
            unrolled.append(size_t(n), ch);
        } else {
            unrolled += ch;
        }
    }
    std::vector<std::string> chunks(1);
    for (char ch : unrolled) {
        if (ch == '|')
            chunks.emplace_back();
        else if (ch == 'E' || ch == 't' || ch == 'm' || ch == 'L')
            chunks.back() += ch;
        else
            throw PlanError(field, std::string("unknown symbol \"") + ch +
                                       "\"; E (embedding), t (decoder layer), m (MTP module), L (loss) and | (next chunk)");
    }
    return chunks;
}

namespace {

/// The rules of PipelineParallelLayerLayout (__init__, validate_layer_layout) and
/// TransformerConfig's checks against the other fields, and where ShardScope places the
/// embedding, head and MTP modules (the first stage, the last stage).
std::optional<PlanError> pipelineLayoutError(const Parallel &pa, int layers, int mtpLayers)
{
    auto s = [](int64_t v) { return std::to_string(v); };
    const char *field = "parallel.pipeline_layout";
    if (pa.first_stage_layers > 0 || pa.last_stage_layers > 0 || pa.account_for_embedding ||
        pa.account_for_loss || !pa.stage_layers.empty())
        return PlanError(field, "cannot be set with first_stage_layers, last_stage_layers, account_for_embedding "
                                "/ loss or stage_layers (Megatron-Core refuses the layout with the other "
                                "pipeline layout arguments)");
    std::vector<std::string> chunks;
    try {
        chunks = unrollPipelineLayout(pa.pipeline_layout);
    } catch (const PlanError &e) {
        return e;
    }
    const int v = pa.pp_schedule == PpSchedule::Interleaved ? std::max(1, pa.virtual_stages) : 1;
    if (int64_t(chunks.size()) != int64_t(pa.pp) * v)
        return PlanError(field, "spells " + s(int64_t(chunks.size())) + " chunk(s); parallel.pp x virtual_stages = " +
                                    s(int64_t(pa.pp) * v) + " (Megatron takes the virtual stages from the layout: "
                                    "set parallel.virtual_stages and the interleaved schedule to match)");
    std::string flat;
    for (const std::string &k : chunks)
        flat += k;
    auto n = [&](char ch) { return int64_t(std::count(flat.begin(), flat.end(), ch)); };
    if (flat.empty() || flat.front() != 'E' || n('E') != 1)
        return PlanError(field, "must begin with the embedding E, once");
    if (flat.back() != 'L' || n('L') != 1)
        return PlanError(field, "must end with the loss L, once");
    if (n('t') != layers)
        return PlanError(field, "holds " + s(n('t')) + " decoder layers (t); model.layers is " + s(layers));
    if (n('m') != mtpLayers)
        return PlanError(field, "holds " + s(n('m')) + " MTP module(s) (m); model.mtp_layers is " + s(mtpLayers));
    if (n('m') > 0 && flat.find('t', flat.find('m')) != std::string::npos)
        return PlanError(field, "the decoder layers must come before the MTP modules");
    // Where the model keeps them: the embedding on the first stage, the head, loss and MTP
    // modules on the last (Megatron also allows a standalone MTP stage, not modelled here).
    auto stageOf = [&](char ch) {
        for (size_t i = 0; i < chunks.size(); ++i)
            if (chunks[i].find(ch) != std::string::npos)
                return int(i % size_t(pa.pp));
        return -1;
    };
    if (stageOf('E') != 0)
        return PlanError(field, "the embedding E must be on the first stage");
    if (stageOf('L') != pa.pp - 1)
        return PlanError(field, "the loss L must be on the last stage");
    if (n('m') > 0) {
        const std::string &lastChunk = chunks[size_t((v - 1) * pa.pp + pa.pp - 1)];
        if (std::count(lastChunk.begin(), lastChunk.end(), 'm') != n('m'))
            return PlanError(field, "the MTP modules m must all be in the last chunk of the last stage here "
                                    "(a standalone MTP stage is not modelled)");
    }
    return std::nullopt;
}

} // namespace

namespace {

/// Model chunks of an even layout: stages times virtual stages.
int64_t evenChunks(const Parallel &pa)
{
    return int64_t(pa.pp) * pa.chunksPerStage();
}

/// What the search asks of the last few custom layouts of each thread (whether stageLayoutError
/// passes them, their largest chunk), with what stageLayout and stageLayoutError read: it asks
/// about the same few among millions of layouts.
struct KeptCustomLayouts
{
    struct Entry
    {
        int layers, mtp, pp, chunks, first, last;
        bool embedding, loss;
        std::vector<int> stageLayers;
        std::string pipelineLayout;
        bool valid;
        int largest = -1; ///< -1: not asked yet
        bool matches(const Parallel &pa, int n, int m) const
        {
            return layers == n && mtp == m && pp == pa.pp && chunks == pa.chunksPerStage() &&
                   first == pa.first_stage_layers && last == pa.last_stage_layers &&
                   embedding == pa.account_for_embedding && loss == pa.account_for_loss &&
                   stageLayers == pa.stage_layers && pipelineLayout == pa.pipeline_layout;
        }
    };

    static Entry &of(const Parallel &pa, int layers, int mtp)
    {
        thread_local KeptRing<Entry, 4> kept;
        if (Entry *e = kept.find([&](const Entry &k) { return k.matches(pa, layers, mtp); }))
            return *e;
        return kept.put(Entry{layers,
                              mtp,
                              pa.pp,
                              pa.chunksPerStage(),
                              pa.first_stage_layers,
                              pa.last_stage_layers,
                              pa.account_for_embedding,
                              pa.account_for_loss,
                              pa.stage_layers,
                              pa.pipeline_layout,
                              !stageLayoutError(pa, layers, mtp)});
    }
};

} // namespace

bool stageLayoutValid(const Parallel &pa, int layers, int mtpLayers)
{
    if (!pa.customLayout() && evenChunks(pa) > 0)
        return layers % evenChunks(pa) == 0;
    return KeptCustomLayouts::of(pa, layers, mtpLayers).valid;
}

int largestChunkLayers(const Parallel &pa, int layers, int mtpLayers)
{
    if (!pa.customLayout() && evenChunks(pa) > 0 && layers >= 0 && layers % evenChunks(pa) == 0)
        return int(layers / evenChunks(pa));
    KeptCustomLayouts::Entry &e = KeptCustomLayouts::of(pa, layers, mtpLayers);
    if (e.largest < 0)
        e.largest = stageLayout(pa, layers).largestChunk();
    return e.largest;
}

std::optional<PlanError> stageLayoutError(const Parallel &pa, int layers, int mtpLayers)
{
    auto s = [](int64_t v) { return std::to_string(v); };
    const int v = pa.pp_schedule == PpSchedule::Interleaved ? std::max(1, pa.virtual_stages) : 1;
    const bool firstLast = pa.first_stage_layers > 0 || pa.last_stage_layers > 0;
    const bool account = pa.account_for_embedding || pa.account_for_loss;
    if (!pa.customLayout()) {
        const int64_t chunks = evenChunks(pa);
        if (layers % chunks != 0)
            return PlanError("parallel.pp", "pp * virtual_stages = " + s(chunks) + " must divide model.layers (" +
                                                s(layers) + "); uneven stages: parallel.first_stage_layers, "
                                                            "last_stage_layers or stage_layers");
        return std::nullopt;
    }
    if (!pa.pipeline_layout.empty()) {
        if (pa.pp < 2)
            return PlanError("parallel.pipeline_layout", "lays the layers out over pipeline stages: needs parallel.pp >= 2");
        return pipelineLayoutError(pa, layers, mtpLayers);
    }
    const char *set = !pa.stage_layers.empty()      ? "parallel.stage_layers"
                      : pa.first_stage_layers > 0   ? "parallel.first_stage_layers"
                      : pa.last_stage_layers > 0    ? "parallel.last_stage_layers"
                      : pa.account_for_embedding    ? "parallel.account_for_embedding"
                                                    : "parallel.account_for_loss";
    if (pa.pp < 2)
        return PlanError(set, "lays the layers out over pipeline stages: needs parallel.pp >= 2");
    if (!pa.stage_layers.empty()) {
        // MindSpeed-LLM's --num-layer-list: one count per stage adding up to the layers, not
        // with virtual stages (NumLayerListFeature.validate_args, core_transformer_config_from_
        // args_wrapper).
        if (firstLast || account)
            return PlanError("parallel.stage_layers", "lists every stage's layers: not with first_stage_layers, "
                                                      "last_stage_layers or account_for_embedding / loss");
        if (v > 1)
            return PlanError("parallel.stage_layers", "cannot be combined with virtual stages (MindSpeed-LLM "
                                                      "refuses --num-layer-list with a virtual pipeline)");
        if (int(pa.stage_layers.size()) != pa.pp)
            return PlanError("parallel.stage_layers", "needs one entry per stage: parallel.pp (" + s(pa.pp) +
                                                          ") entries, got " + s(int64_t(pa.stage_layers.size())));
        int64_t sum = 0;
        for (size_t i = 0; i < pa.stage_layers.size(); ++i) {
            if (pa.stage_layers[i] < 1)
                return PlanError("parallel.stage_layers[" + s(int64_t(i)) + "]",
                                 "every stage needs at least one layer, got " + s(pa.stage_layers[i]));
            sum += pa.stage_layers[i];
        }
        if (sum != layers)
            return PlanError("parallel.stage_layers", "must add up to model.layers (" + s(layers) + "), got " + s(sum));
        return std::nullopt;
    }
    if (firstLast && account)
        return PlanError(pa.account_for_embedding ? "parallel.account_for_embedding" : "parallel.account_for_loss",
                         "cannot be set with first_stage_layers / last_stage_layers (Megatron-Core's "
                         "TransformerConfig refuses the two kinds of uneven split together)");
    if (firstLast) {
        // TransformerConfig.__post_init__, "Uneven PP".
        int64_t rest = layers;
        int left = pa.pp;
        for (const auto &[field, n] : {std::pair{"parallel.first_stage_layers", pa.first_stage_layers},
                                       std::pair{"parallel.last_stage_layers", pa.last_stage_layers}}) {
            if (n <= 0)
                continue;
            if (n % v != 0)
                return PlanError(field, "must be divisible by parallel.virtual_stages (" + s(v) + "), got " + s(n));
            rest -= n;
            --left;
        }
        const char *field = pa.first_stage_layers > 0 ? "parallel.first_stage_layers" : "parallel.last_stage_layers";
        if (rest < 0 || (rest == 0) != (left == 0))
            return PlanError(field, "leaves " + s(rest) + " of model.layers (" + s(layers) + ") for " + s(left) +
                                        " middle stage(s): each middle stage needs layers, and no layer may be left "
                                        "without one");
        if (left > 0 && rest % left != 0)
            return PlanError(field, "the " + s(rest) + " layers left must split evenly over the " + s(left) +
                                        " other stage(s)");
        if (left > 0 && (rest / left) % v != 0)
            return PlanError(field, "the other stages' " + s(rest / left) +
                                        " layers each must be divisible by parallel.virtual_stages (" + s(v) + ")");
        return std::nullopt;
    }
    // The embedding / loss as layers (TransformerConfig.__post_init__; get_num_layers_to_build).
    const int64_t counted = int64_t(layers) + (pa.account_for_embedding ? 1 : 0) + (pa.account_for_loss ? 1 : 0);
    if (counted % pa.pp != 0)
        return PlanError(set, "model.layers (" + s(layers) + ") with the embedding / loss counted = " + s(counted) +
                                  " must be divisible by parallel.pp (" + s(pa.pp) + ")");
    if ((counted / pa.pp) % v != 0)
        return PlanError(set, "each stage's " + s(counted / pa.pp) +
                                  " layers must be divisible by parallel.virtual_stages (" + s(v) + ")");
    return std::nullopt;
}

std::optional<PlanError> stageLayoutError(const Plan &plan)
{
    return stageLayoutError(plan.parallel, plan.model.layers, plan.model.mtp_layers);
}

RankLayer mtpModuleOnRank(const ModelShape &m, int tp, int ep, int etp)
{
    if (m.mtp_layers <= 0 || m.layers <= 0)
        return {};
    RankLayer r = rankLayer(m, layerKind(m, m.layers - 1), tp, ep, etp);
    const double h = double(m.hidden);
    const double t = std::max(1, tp);
    const double projection = 2.0 * h * h / t + (m.linear_bias ? h / t : 0.0);
    r.attention += projection; // dense, beside the layer's own
    r.matmul += 2.0 * h * h / t;
    const double norm = m.norm == NormKind::LayerNorm ? 2.0 * h : h;
    r.norms += 3.0 * norm; // enorm, hnorm, the module's final norm
    return r;
}

namespace {

/// The last few RankShapes of each thread, with what each was built from.
struct KeptRankShape
{
    ModelShape model;
    RankShapeKey key;
    std::shared_ptr<const RankShape> shape;
};

std::shared_ptr<const RankShape> buildRankShape(const ModelShape &m, const Parallel &pa)
{
    auto out = std::make_shared<RankShape>();
    out->counts = countParameters(m);
    out->layout = stageLayout(pa, int(m.layers));
    out->dense = layerSpec(m, LayerKind::Dense);
    out->denseRank = rankLayer(m, LayerKind::Dense, pa.tp, pa.ep, pa.expertTp());
    if (m.moe.enabled()) {
        out->moe = layerSpec(m, LayerKind::Moe);
        out->moeRank = rankLayer(m, LayerKind::Moe, pa.tp, pa.ep, pa.expertTp());
    }
    out->denseLargest = largestFusedTensor(out->dense, pa.tp, pa.expertTp());
    if (m.moe.enabled())
        out->moeLargest = largestFusedTensor(out->moe, pa.tp, pa.expertTp());
    const StageLayout &l = out->layout;
    out->mixes.assign(size_t(l.pp), LayerMix{});
    int layer = 0;
    for (int chunk = 0; chunk < l.chunks; ++chunk)
        for (int s = 0; s < l.pp; ++s)
            for (int k = 0; k < l.chunk(s, chunk) && layer < m.layers; ++k, ++layer) {
                LayerMix &mix = out->mixes[size_t(s)];
                (m.moeLayer(layer) ? mix.moe : mix.dense) += 1;
            }
    return out;
}

} // namespace

FusedModule fusedModuleOf(const LinearSpec &l)
{
    auto named = [&](std::initializer_list<const char *> names) {
        for (const char *n : names)
            if (std::strcmp(l.name, n) == 0)
                return true;
        return false;
    };
    if (l.part == LayerPart::Attention && named({"q_proj", "k_proj", "v_proj"}))
        return FusedModule::LinearQkv;
    if (named({"gate_proj", "up_proj"}))
        return FusedModule::LinearFc1;
    return FusedModule::Own;
}

double largestFusedTensor(const LayerSpec &spec, int tp, int etp)
{
    double largest = double(spec.router);
    double qkv = 0;
    double fc1[4] = {0, 0, 0, 0}; // by LayerPart
    for (const LinearSpec &l : spec.linears) {
        const bool routed = l.part == LayerPart::Expert;
        const double split = l.split == Split::Duplicated ? 1.0 : double(routed ? etp : tp);
        const double copies = l.part == LayerPart::SharedExpert ? double(l.copies) : 1.0;
        const double w = double(l.in) * double(l.out) * copies / split;
        switch (fusedModuleOf(l)) {
        case FusedModule::LinearQkv:
            qkv += w;
            break;
        case FusedModule::LinearFc1:
            fc1[size_t(l.part)] += w;
            break;
        case FusedModule::Own:
            largest = std::max(largest, w);
            break;
        }
    }
    largest = std::max(largest, qkv);
    for (double f : fc1)
        largest = std::max(largest, f);
    return largest;
}

RankShapeKey RankShapeKey::of(const ModelShape &m, const Parallel &pa)
{
    return {m.vocab,
            m.vocab_divisible_by,
            pa.tp,
            pa.ep,
            pa.expertTp(),
            pa.pp,
            pa.virtual_stages,
            pa.first_stage_layers,
            pa.last_stage_layers,
            int(pa.pp_schedule),
            pa.account_for_embedding,
            pa.account_for_loss,
            pa.stage_layers,
            pa.pipeline_layout};
}

bool RankShapeKey::matches(const ModelShape &m, const Parallel &pa) const
{
    return vocab == m.vocab && vocabDivisibleBy == m.vocab_divisible_by && tp == pa.tp && ep == pa.ep &&
           etp == pa.expertTp() && pp == pa.pp && virtualStages == pa.virtual_stages &&
           first == pa.first_stage_layers && last == pa.last_stage_layers && schedule == int(pa.pp_schedule) &&
           embedding == pa.account_for_embedding && loss == pa.account_for_loss && stageLayers == pa.stage_layers &&
           pipelineLayout == pa.pipeline_layout;
}

std::shared_ptr<const RankShape> rankShape(const ModelShape &m, const Parallel &pa)
{
    thread_local KeptRing<KeptRankShape, 8> kept;
    if (const KeptRankShape *e = kept.find([&](const KeptRankShape &k) { return k.key.matches(m, pa) && k.model == m; }))
        return e->shape;
    return kept.put(KeptRankShape{m, RankShapeKey::of(m, pa), buildRankShape(m, pa)}).shape;
}

std::shared_ptr<const RankShape> RankShapeCache::of(const ModelShape &m, const Parallel &pa)
{
    if (const Entry *e = kept_.find([&](const Entry &k) { return k.key.matches(m, pa); }))
        return e->shape;
    // Before a shape is built: the premise, that this model is the one the kept shapes were
    // built from but for its vocabulary.
    bool same = false;
    if (model_) {
        ModelShape kept = *model_;
        kept.vocab = m.vocab;
        kept.vocab_divisible_by = m.vocab_divisible_by;
        same = kept == m;
    }
    if (!same) {
        model_ = m;
        kept_.clear();
    }
    return kept_.put(Entry{RankShapeKey::of(m, pa), buildRankShape(m, pa)}).shape;
}

} // namespace shardscope
