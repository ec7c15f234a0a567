#include "plan.h"

#include "catalog.h"
#include "errors.h"
#include "files.h"
#include "hcclbuffers.h"
#include "jsoninput.h"
#include "layers.h"

#include <cmath>
#include <filesystem>
#include <limits>
#include <set>

namespace shardscope {

int optimizerStateCount(Optimizer o)
{
    switch (o) {
    case Optimizer::AdamW:
    case Optimizer::Adam:
    case Optimizer::AdamW8bit:
    case Optimizer::PagedAdamW:
    case Optimizer::PagedAdamW8bit: return 2;
    case Optimizer::SGD:
    case Optimizer::Lion:
    case Optimizer::Adafactor:
    case Optimizer::Muon: return 1;
    }
    return 2;
}

std::string_view toString(Sharding s)
{
    switch (s) {
    case Sharding::None: return "none";
    case Sharding::Optimizer: return "optimizer";
    case Sharding::Grads: return "grads";
    case Sharding::Full: return "full";
    }
    return "none";
}
std::string_view toString(PpSchedule s)
{
    switch (s) {
    case PpSchedule::OneFOneB: return "1f1b";
    case PpSchedule::Interleaved: return "interleaved";
    case PpSchedule::GPipe: return "gpipe";
    }
    return "1f1b";
}
std::string_view toString(Recompute r)
{
    switch (r) {
    case Recompute::None: return "none";
    case Recompute::Selective: return "selective";
    case Recompute::Full: return "full";
    }
    return "none";
}
std::string_view toString(Attention a) { return a == Attention::Flash ? "flash" : "eager"; }
std::string_view toString(LossHead l)
{
    switch (l) {
    case LossHead::Framework: return "framework";
    case LossHead::HfUpcast: return "hf_upcast";
    case LossHead::FusedFp32: return "fused_fp32";
    case LossHead::FusedFp32Copy: return "fused_fp32_copy";
    case LossHead::Chunked: return "chunked";
    case LossHead::FusedLinear: return "fused_linear";
    }
    return "framework";
}
std::string_view toString(RopeSaves r)
{
    switch (r) {
    case RopeSaves::Framework: return "framework";
    case RopeSaves::Shared: return "shared";
    case RopeSaves::PerLayer: return "per_layer";
    case RopeSaves::KeepsInput: return "keeps_input";
    }
    return "framework";
}
std::string_view toString(Optimizer o)
{
    switch (o) {
    case Optimizer::AdamW: return "adamw";
    case Optimizer::Adam: return "adam";
    case Optimizer::SGD: return "sgd";
    case Optimizer::Lion: return "lion";
    case Optimizer::Adafactor: return "adafactor";
    case Optimizer::AdamW8bit: return "adamw8bit";
    case Optimizer::PagedAdamW: return "paged_adamw";
    case Optimizer::PagedAdamW8bit: return "paged_adamw8bit";
    case Optimizer::Muon: return "muon";
    }
    return "adamw";
}
std::string_view toString(OptimizerImpl o)
{
    switch (o) {
    case OptimizerImpl::Default: return "default";
    case OptimizerImpl::Foreach: return "foreach";
    case OptimizerImpl::Fused: return "fused";
    case OptimizerImpl::ForLoop: return "for_loop";
    }
    return "default";
}
std::string_view toString(FfnKind f)
{
    switch (f) {
    case FfnKind::SwiGLU: return "swiglu";
    case FfnKind::GELU: return "gelu";
    case FfnKind::SquaredReLU: return "squared_relu";
    }
    return "swiglu";
}
std::string_view toString(RecomputeMethod m) { return m == RecomputeMethod::Block ? "block" : "uniform"; }
std::string_view toString(CpAlgo a)
{
    switch (a) {
    case CpAlgo::Ring: return "ring";
    case CpAlgo::Ulysses: return "ulysses";
    case CpAlgo::Hybrid: return "hybrid";
    }
    return "ring";
}
std::string_view toString(NormKind n) { return n == NormKind::LayerNorm ? "layernorm" : "rmsnorm"; }
std::string_view toString(PositionEmbedding p) { return p == PositionEmbedding::Learned ? "learned" : "rope"; }
std::string_view toString(MoeShape::Dispatcher d)
{
    return d == MoeShape::Dispatcher::AllGather ? "allgather" : "alltoall";
}
std::string_view attentionName(const ModelShape &m)
{
    if (m.mla_attention())
        return "mla";
    return m.kv_heads == m.heads ? "mha" : "gqa";
}

namespace {

using nlohmann::json;

void keepUnknown(json &unknown, const std::string &key, json fields)
{
    if (fields.empty())
        return;
    if (key.empty()) {
        for (auto it = fields.begin(); it != fields.end(); ++it)
            unknown[it.key()] = it.value();
    } else {
        unknown[key] = std::move(fields);
    }
}

/// Reads a Hugging Face config.json named by a plan (`model.hf_config`), relative to the plan's
/// folder. Errors name the plan field and the config file.
ModelShape readHfConfig(const std::string &file, const std::string &baseDir)
{
    namespace fs = std::filesystem;
    if (file.empty())
        throw PlanError("model.hf_config", "must name a config.json, not be empty");
    fs::path path(file);
    if (path.is_relative() && !baseDir.empty())
        path = fs::path(baseDir) / path;
    try {
        return shapeFromHuggingFaceConfigFile(path.lexically_normal().string());
    } catch (const PlanError &e) {
        throw PlanError("model.hf_config", e.what());
    }
}

/// `targets`, `modules_to_save` or `parts`: a list of names (or one of `whole`, e.g.
/// "all_linear"), each mapped to its bit; Hugging Face module names are accepted too.
uint8_t readNames(const json &v, const std::string &field,
                  std::initializer_list<std::pair<const char *, uint8_t>> names, const char *whole,
                  uint8_t wholeBits)
{
    if (whole && v.is_string() && v.get<std::string>() == whole)
        return wholeBits;
    if (!v.is_array())
        throw PlanError(field, std::string("must be a list of names") +
                                   (whole ? std::string(" or \"") + whole + "\"" : std::string()) +
                                   ", not " + v.dump());
    uint8_t bits = 0;
    for (const json &n : v) {
        std::string allowed;
        bool found = false;
        for (const auto &[name, bit] : names) {
            allowed += (allowed.empty() ? "" : ", ") + std::string(name);
            if (n.is_string() && n.get<std::string>() == name) {
                bits |= bit;
                found = true;
            }
        }
        if (!found)
            throw PlanError(field, "unknown name " + n.dump() + "; allowed: " + allowed);
    }
    return bits;
}

void readMethod(ObjectReader &r, MethodOptions &mo, const ModelShape &model, json &unknown,
                std::vector<std::string> *warnings)
{
    mo.method = r.choice<TrainingMethod>("method",
                                         {TrainingMethod::Full, TrainingMethod::LoRA, TrainingMethod::DoRA,
                                          TrainingMethod::QLoRA, TrainingMethod::Freeze},
                                         TrainingMethod::Full);
    const std::string m = std::string(toString(mo.method));
    if (const json *l = r.get("lora")) {
        if (!mo.usesAdapters())
            throw PlanError("training.lora", "needs training.method lora, dora or qlora, not " + m);
        ObjectReader lr(*l, "training.lora", warnings);
        const int64_t maxRank = std::min<int64_t>(model.hidden, model.qDim());
        mo.lora.rank = int(lr.integer("rank", 1, std::max<int64_t>(1, maxRank), 8));
        if (const json *t = lr.get("targets")) {
            mo.lora.targets = readNames(*t, "training.lora.targets",
                                        {{"q", kTargetQ}, {"k", kTargetK}, {"v", kTargetV}, {"o", kTargetO},
                                         {"gate", kTargetGate}, {"up", kTargetUp}, {"down", kTargetDown},
                                         {"q_proj", kTargetQ}, {"k_proj", kTargetK}, {"v_proj", kTargetV},
                                         {"o_proj", kTargetO}, {"gate_proj", kTargetGate},
                                         {"up_proj", kTargetUp}, {"down_proj", kTargetDown}},
                                        "all_linear", kTargetAllLinear);
            if (mo.lora.targets == 0)
                throw PlanError("training.lora.targets", "must name at least one linear layer");
        }
        if (const json *s = lr.get("modules_to_save"))
            mo.lora.modules_to_save =
                readNames(*s, "training.lora.modules_to_save",
                          {{"embedding", kPartEmbedding}, {"head", kPartHead},
                           {"embed_tokens", kPartEmbedding}, {"lm_head", kPartHead}},
                          nullptr, 0);
        mo.lora.dropout = lr.number("dropout", 0, 0.99, 0.0);
        mo.lora.dtype = lr.dtype("dtype", {DType::FP32, DType::BF16, DType::FP16}, DType::None);
        if (const json u = lr.unknown(); !u.empty())
            unknown["lora"] = u;
    }
    if (model.ffn == FfnKind::GELU && (mo.lora.targets & kTargetGate) && mo.lora.targets != kTargetAllLinear)
        throw PlanError("training.lora.targets", "the model's FFN (gelu) has no gate projection");
    if (const json *q = r.get("qlora")) {
        if (mo.method != TrainingMethod::QLoRA)
            throw PlanError("training.qlora", "needs training.method qlora, not " + m);
        ObjectReader qr(*q, "training.qlora", warnings);
        mo.qlora.quant = qr.choice<Quantization>(
            "quant", {Quantization::NF4, Quantization::FP4, Quantization::INT8}, Quantization::NF4);
        mo.qlora.double_quant = qr.boolean("double_quant", true);
        mo.qlora.block_size = int(qr.integer("block_size", 32, 4096, 64));
        if ((mo.qlora.block_size & (mo.qlora.block_size - 1)) != 0)
            throw PlanError("training.qlora.block_size",
                            "must be a power of two from 32 to 4096 (bitsandbytes' block sizes), got " +
                                std::to_string(mo.qlora.block_size));
        if (const json u = qr.unknown(); !u.empty())
            unknown["qlora"] = u;
    }
    if (const json *f = r.get("freeze")) {
        if (mo.method != TrainingMethod::Freeze)
            throw PlanError("training.freeze", "needs training.method freeze, not " + m);
        ObjectReader fr(*f, "training.freeze", warnings);
        mo.freeze.last_layers = int(fr.integer("last_layers", 0, model.layers, 0));
        if (const json *p = fr.get("parts"))
            mo.freeze.parts = readNames(*p, "training.freeze.parts",
                                        {{"embedding", kPartEmbedding}, {"head", kPartHead},
                                         {"norms", kPartNorms}, {"attention", kPartAttention},
                                         {"ffn", kPartFfn}, {"experts", kPartExperts}},
                                        nullptr, 0);
        if (const json u = fr.unknown(); !u.empty())
            unknown["freeze"] = u;
    }
    if (mo.method == TrainingMethod::Freeze && mo.freeze.last_layers == 0 && mo.freeze.parts == 0)
        throw PlanError("training.freeze", "trains nothing: give last_layers or parts");
}

/// The model's shape fields, read over `m` (a preset's, an imported config's, or empty when
/// `haveBase` is false: then every field without a rule-given default is required).
void readShapeFields(ObjectReader &r, ModelShape &m, bool haveBase, json &unknown,
                     std::vector<std::string> *warnings, const std::string &path)
{
    auto opt = [&](int64_t v) { return haveBase ? std::optional<int64_t>(v) : std::nullopt; };
    m.layers = int(r.integer("layers", 1, 1024, opt(m.layers)));
    m.hidden = r.integer("hidden", 1, 262144, opt(m.hidden));
    m.heads = int(r.integer("heads", 1, 4096, opt(m.heads)));
    m.kv_heads = int(r.integer("kv_heads", 1, 4096, haveBase ? std::optional<int64_t>(m.kv_heads)
                                                                : std::optional<int64_t>(m.heads)));
    if (r.has("head_dim")) {
        m.head_dim = r.integer("head_dim", 1, 4096, std::nullopt);
    } else if (!(haveBase && m.head_dim > 0)) {
        // Without an explicit head_dim it is hidden / heads, which must then be whole.
        if (m.hidden % m.heads != 0)
            throw PlanError(path + ".heads", "must divide " + path + ".hidden (" +
                                                 std::to_string(m.hidden) +
                                                 ") unless " + path + ".head_dim is given, got " +
                                                 std::to_string(m.heads));
        m.head_dim = m.hidden / m.heads;
        // The same bound as a head_dim given: a saved plan writes it out.
        if (m.head_dim > 4096)
            throw PlanError(path + ".heads", "gives a head_dim (hidden / heads) of " + std::to_string(m.head_dim) +
                                                 ", beyond 4096: give more heads or " + path + ".head_dim");
    }
    m.ffn_hidden = r.integer("ffn_hidden", 1, 1048576, opt(m.ffn_hidden));
    m.ffn = r.choice<FfnKind>("ffn", {FfnKind::SwiGLU, FfnKind::GELU, FfnKind::SquaredReLU}, m.ffn);
    // Norm and biases: given, else (when the object sets the FFN or has no base) what the FFN
    // meant before they could be given: GELU the GPT family's LayerNorm with biases everywhere.
    const bool ffnSet = r.has("ffn") || !haveBase;
    m.norm = r.choice<NormKind>("norm", {NormKind::RMSNorm, NormKind::LayerNorm},
                                ffnSet ? (m.ffn == FfnKind::GELU ? NormKind::LayerNorm : NormKind::RMSNorm)
                                       : m.norm);
    m.linear_bias = r.boolean("linear_bias", ffnSet ? m.ffn == FfnKind::GELU : m.linear_bias);
    m.vocab = r.integer("vocab", 1, 16777216, opt(m.vocab));
    m.vocab_divisible_by = int(r.integer("vocab_divisible_by", 0, 1048576, std::optional<int64_t>(m.vocab_divisible_by)));
    m.tied_embeddings = r.boolean("tied_embeddings", m.tied_embeddings);
    m.attention_bias = r.boolean("attention_bias", m.attention_bias);
    m.qk_norm = r.boolean("qk_norm", m.qk_norm);
    m.display_name = r.string("display_name", m.display_name);
    m.position_embedding = r.choice<PositionEmbedding>(
        "position_embedding", {PositionEmbedding::Rope, PositionEmbedding::Learned}, m.position_embedding);
    if (m.position_embedding == PositionEmbedding::Learned) {
        m.max_positions = r.integer("max_positions", 1, 16777216,
                                    m.max_positions > 0 ? std::optional<int64_t>(m.max_positions)
                                                        : std::nullopt);
    } else {
        if (r.has("max_positions"))
            throw PlanError(path + ".max_positions",
                            "applies to position_embedding \"learned\" (a rope model has no table)");
        m.max_positions = 0;
    }
    m.mtp_layers = int(r.integer("mtp_layers", 0, 16, m.mtp_layers));

    // Attention kind: "mha" / "gqa" (kv_heads says which) or "mla" with its ranks.
    if (r.has("attention")) {
        const std::string kind = r.string("attention", std::nullopt);
        if (kind == "mla") {
            m.attention = AttentionKind::MLA;
        } else if (kind == "mha" || kind == "gqa") {
            m.attention = AttentionKind::Standard;
            m.mla = MlaShape{};
            if (kind == "mha" && r.has("kv_heads") && m.kv_heads != m.heads)
                throw PlanError(path + ".attention", "\"mha\" has kv_heads == heads (" +
                                                         std::to_string(m.heads) + "), got kv_heads " +
                                                         std::to_string(m.kv_heads) + "; use \"gqa\"");
            if (kind == "mha")
                m.kv_heads = m.heads;
        } else {
            throw PlanError(path + ".attention", "must be one of mha, gqa, mla, not \"" + kind + "\"");
        }
    }
    if (const json *mla = r.get("mla")) {
        if (!m.mla_attention())
            throw PlanError(path + ".mla", "applies to attention \"mla\"");
        ObjectReader ar(*mla, path + ".mla", warnings);
        auto base = [&](int64_t v) { return v > 0 ? std::optional<int64_t>(v) : std::nullopt; };
        m.mla.q_lora_rank = ar.integer("q_lora_rank", 0, 65536, m.mla.kv_lora_rank > 0 ? m.mla.q_lora_rank : 0);
        m.mla.kv_lora_rank = ar.integer("kv_lora_rank", 1, 65536, base(m.mla.kv_lora_rank));
        m.mla.qk_nope_head_dim = ar.integer("qk_nope_head_dim", 1, 4096, base(m.mla.qk_nope_head_dim));
        m.mla.qk_rope_head_dim = ar.integer("qk_rope_head_dim", 1, 4096, base(m.mla.qk_rope_head_dim));
        m.mla.v_head_dim = ar.integer("v_head_dim", 1, 4096, base(m.mla.v_head_dim));
        keepUnknown(unknown, "mla", ar.unknown());
    } else if (m.mla_attention() && m.mla.kv_lora_rank == 0) {
        throw PlanError(path + ".mla", "is required with attention \"mla\" (q_lora_rank, kv_lora_rank, "
                                       "qk_nope_head_dim, qk_rope_head_dim, v_head_dim)");
    }
    if (m.mla_attention()) {
        // Every head has its own keys and values; the query/key head width is nope + rope.
        if (r.has("kv_heads") && m.kv_heads != m.heads)
            throw PlanError(path + ".kv_heads", "multi-head latent attention has kv_heads == heads (" +
                                                    std::to_string(m.heads) + ")");
        m.kv_heads = m.heads;
        if (r.has("head_dim") && m.head_dim != m.mla.qkHeadDim())
            throw PlanError(path + ".head_dim", "is qk_nope_head_dim + qk_rope_head_dim (" +
                                                    std::to_string(m.mla.qkHeadDim()) + ") under mla");
        m.head_dim = m.mla.qkHeadDim();
        if (m.qk_norm)
            throw PlanError(path + ".qk_norm", "applies to mha / gqa; mla norms its latents instead");
    }
    if (const json *moe = r.get("moe")) {
        if (moe->is_null()) {
            m.moe = MoeShape{};
        } else {
            ObjectReader mr(*moe, path + ".moe", warnings);
            // Fields not given keep the base's experts (a preset's, an imported config's), else
            // MoeShape's defaults with one expert as wide as the dense FFN.
            const bool had = m.moe.enabled();
            MoeShape base = had ? m.moe : MoeShape{};
            if (!had)
                base.expert_ffn_hidden = m.ffn_hidden;
            auto given = [&](auto v) { return had ? std::optional<int64_t>(v) : std::nullopt; };
            m.moe.experts = int(mr.integer("experts", 1, 4096, given(base.experts)));
            m.moe.top_k = int(mr.integer("top_k", 1, m.moe.experts, given(std::min(base.top_k, m.moe.experts))));
            m.moe.expert_ffn_hidden = mr.integer("expert_ffn_hidden", 1, 1048576, base.expert_ffn_hidden);
            m.moe.shared_experts = int(mr.integer("shared_experts", 0, 256, base.shared_experts));
            m.moe.shared_expert_ffn_hidden =
                mr.integer("shared_expert_ffn_hidden", 1, 1048576,
                           base.shared_expert_ffn_hidden > 0 ? base.shared_expert_ffn_hidden
                                                             : m.moe.expert_ffn_hidden);
            m.moe.shared_expert_gate = mr.boolean("shared_expert_gate", base.shared_expert_gate);
            if (m.moe.shared_experts == 0 && (mr.has("shared_expert_ffn_hidden") || m.moe.shared_expert_gate))
                throw PlanError(path + ".moe.shared_experts",
                                "must be at least 1 for shared_expert_ffn_hidden or shared_expert_gate");
            m.moe.first_dense_layers = int(mr.integer("first_dense_layers", 0, m.layers - 1, base.first_dense_layers));
            m.moe.layer_freq = int(mr.integer("layer_freq", 1, m.layers, base.layer_freq));
            m.moe.capacity_factor = mr.number("capacity_factor", 0, 64, base.capacity_factor);
            if (m.moe.capacity_factor > 0 && m.moe.capacity_factor < 1.0 / m.moe.top_k)
                throw PlanError(path + ".moe.capacity_factor",
                                "0 (dropless) or at least 1 / top_k; below it every token is dropped");
            m.moe.imbalance = mr.number("imbalance", 1, 64, base.imbalance);
            if (m.moe.capacity_factor > 0 && mr.has("imbalance"))
                throw PlanError(path + ".moe.imbalance",
                                "applies to dropless routing; with a capacity_factor the cap bounds each expert");
            m.moe.router_fp32 = mr.boolean("router_fp32", base.router_fp32);
            m.moe.dispatcher = mr.choice<MoeShape::Dispatcher>(
                "dispatcher", {MoeShape::Dispatcher::AllToAll, MoeShape::Dispatcher::AllGather}, base.dispatcher);
            keepUnknown(unknown, "moe", mr.unknown());
        }
    }
    if (m.kv_heads > m.heads || m.heads % m.kv_heads != 0)
        throw PlanError(path + ".kv_heads", "must divide " + path + ".heads (" +
                                                std::to_string(m.heads) + "), got " +
                                                std::to_string(m.kv_heads));
}

ModelShape readModel(const json &j, const Catalog &catalog, json &unknown,
                     std::vector<std::string> *warnings, const std::string &baseDir)
{
    ObjectReader r(j, "model", warnings);
    ModelShape m;
    const std::string preset = r.string("preset", std::string());
    const std::string hf = r.has("hf_config") ? r.string("hf_config", std::nullopt) : std::string();
    if (!preset.empty() && r.has("hf_config"))
        throw PlanError("model.hf_config", "give either model.preset or model.hf_config, not both");
    if (!preset.empty()) {
        const ModelShape *p = catalog.model(preset);
        if (!p) {
            std::string ids;
            for (const auto &id : catalog.modelIds())
                ids += (ids.empty() ? "" : ", ") + id;
            throw PlanError("model.preset", "unknown preset \"" + preset + "\"; known: " + ids);
        }
        m = *p;
    } else if (r.has("hf_config")) {
        m = readHfConfig(hf, baseDir);
    }
    if (r.has("parameters")) {
        const double p = r.number("parameters", 0.5e9, 1e12);
        const std::string keep = m.preset;
        m = shapeForParameterCount(p);
        m.preset = keep;
    }
    const bool haveBase = !preset.empty() || r.has("hf_config") || r.has("parameters");
    readShapeFields(r, m, haveBase, unknown, warnings, "model");
    m.preset = preset;
    keepUnknown(unknown, "", r.unknown());
    return m;
}

/// Writes the fields kept in Plan::unknown back over the known ones. Unlike a JSON merge patch
/// (RFC 7396), a null value is a value to keep, not a deletion.
void overlayUnknown(json &target, const json &unknown)
{
    if (!unknown.is_object())
        return;
    for (auto it = unknown.begin(); it != unknown.end(); ++it) {
        auto found = target.find(it.key());
        if (found != target.end() && found->is_object() && it.value().is_object())
            overlayUnknown(*found, it.value());
        else
            target[it.key()] = it.value();
    }
}

} // namespace

Plan parsePlan(const json &j, const Catalog &catalog, const std::string &baseDir)
{
    Plan plan;
    ObjectReader top(j, "", &plan.warnings);
    const std::string format = top.string("format", std::string("shardscope-plan"));
    if (format != "shardscope-plan")
        throw PlanError("format", "must be \"shardscope-plan\", got \"" + format + "\"");
    const int64_t version = top.integer("version", 1, std::numeric_limits<int32_t>::max(), 1);
    if (version > kPlanFormatVersion)
        throw PlanError("version", "this plan was written by a newer ShardScope (plan format " +
                                       std::to_string(version) + "); this version reads format " +
                                       std::to_string(kPlanFormatVersion) + " and will not guess");
    plan.name = top.string("name", std::string("Untitled plan"));

    const json *model = top.get("model");
    if (!model)
        throw PlanError("model", "is required");
    json modelUnknown = json::object();
    plan.model = readModel(*model, catalog, modelUnknown, &plan.warnings, baseDir);
    keepUnknown(plan.unknown, "model", modelUnknown);

    if (const json *t = top.get("training")) {
        ObjectReader r(*t, "training", &plan.warnings);
        plan.training.seq_len = r.integer("seq_len", 1, 16777216, std::nullopt);
        plan.training.micro_batch = int(r.integer("micro_batch", 1, 65536, 1));
        plan.training.grad_accum = int(r.integer("grad_accum", 1, kMaxGradAccum, 1));
        json methodUnknown = json::object();
        readMethod(r, plan.training.method, plan.model, methodUnknown, &plan.warnings);
        if (const json *d = r.get("dropout")) {
            ObjectReader dr(*d, "training.dropout", &plan.warnings);
            plan.training.dropout.hidden = dr.number("hidden", 0, 0.99, -1.0);
            plan.training.dropout.attention = dr.number("attention", 0, 0.99, -1.0);
            keepUnknown(methodUnknown, "dropout", dr.unknown());
        }
        json u = r.unknown();
        for (auto it = methodUnknown.begin(); it != methodUnknown.end(); ++it)
            u[it.key()] = it.value();
        keepUnknown(plan.unknown, "training", u);
    } else {
        throw PlanError("training", "is required");
    }

    if (const json *p = top.get("precision")) {
        ObjectReader r(*p, "precision", &plan.warnings);
        auto &pr = plan.precision;
        pr.params = r.dtype("params", {DType::FP32, DType::BF16, DType::FP16}, DType::BF16);
        pr.grads = r.dtype("grads", {DType::FP32, DType::BF16, DType::FP16}, pr.params);
        pr.master_weights = r.dtype("master_weights", {DType::FP32, DType::BF16, DType::None},
                                    pr.params == DType::FP32 ? DType::None : DType::FP32);
        pr.optimizer = r.choice<Optimizer>(
            "optimizer",
            {Optimizer::AdamW, Optimizer::Adam, Optimizer::SGD, Optimizer::Lion, Optimizer::Adafactor,
             Optimizer::AdamW8bit, Optimizer::PagedAdamW, Optimizer::PagedAdamW8bit, Optimizer::Muon},
            Optimizer::AdamW);
        pr.momentum = r.boolean("momentum", true);
        pr.main_grads = r.dtype("main_grads", {DType::FP32, DType::BF16}, DType::None);
        pr.reuse_fp32_param = r.boolean("reuse_fp32_param", false);
        pr.first_moment = r.boolean("first_moment", false);
        if (r.has("first_moment") && pr.optimizer != Optimizer::Adafactor)
            throw PlanError("precision.first_moment", "applies to adafactor only");
        if (r.has("momentum") && pr.optimizer != Optimizer::SGD)
            throw PlanError("precision.momentum", "applies to sgd only");
        pr.optimizer_state = r.dtype("optimizer_state",
                                     {DType::FP32, DType::BF16, DType::FP16, DType::INT8},
                                     DType::FP32);
        pr.compute = r.dtype("compute", {DType::FP32, DType::BF16, DType::FP16, DType::FP8},
                             DType::BF16);
        pr.optimizer_impl = r.choice<OptimizerImpl>(
            "optimizer_impl",
            {OptimizerImpl::Foreach, OptimizerImpl::Fused, OptimizerImpl::ForLoop},
            OptimizerImpl::Default);
        keepUnknown(plan.unknown, "precision", r.unknown());
    }

    if (const json *p = top.get("parallel")) {
        ObjectReader r(*p, "parallel", &plan.warnings);
        auto &pa = plan.parallel;
        pa.dp = int(r.integer("dp", 1, 1 << 20, 1));
        pa.tp = int(r.integer("tp", 1, 1024, 1));
        pa.pp = int(r.integer("pp", 1, 1024, 1));
        pa.cp = int(r.integer("cp", 1, 1024, 1));
        pa.ep = int(r.integer("ep", 1, 1024, 1));
        pa.etp = r.has("etp") ? int(r.integer("etp", 1, 1024, std::nullopt)) : 0;
        pa.dp_shard = r.has("dp_shard") ? int(r.integer("dp_shard", 1, 1 << 20, std::nullopt)) : 0;
        pa.zero_hpz_partition_size = int(r.integer("zero_hpz_partition_size", 0, 1 << 20, 0));
        pa.sp = r.boolean("sp", false);
        pa.sharding = r.choice<Sharding>(
            "sharding", {Sharding::None, Sharding::Optimizer, Sharding::Grads, Sharding::Full},
            Sharding::None);
        pa.reshard_after_forward = r.boolean("reshard_after_forward", true);
        pa.pp_schedule = r.choice<PpSchedule>(
            "pp_schedule", {PpSchedule::OneFOneB, PpSchedule::Interleaved, PpSchedule::GPipe},
            PpSchedule::OneFOneB);
        pa.virtual_stages = int(r.integer("virtual_stages", 1, 64, 1));
        // The layer layout over the stages (core/layers.h, stageLayout; validatePlan checks it).
        pa.first_stage_layers = r.has("first_stage_layers")
                                    ? int(r.integer("first_stage_layers", 1, 1 << 20, std::nullopt))
                                    : 0;
        pa.last_stage_layers = r.has("last_stage_layers")
                                   ? int(r.integer("last_stage_layers", 1, 1 << 20, std::nullopt))
                                   : 0;
        pa.account_for_embedding = r.boolean("account_for_embedding", false);
        pa.account_for_loss = r.boolean("account_for_loss", false);
        pa.pipeline_layout = r.has("pipeline_layout") ? r.string("pipeline_layout", std::nullopt) : std::string();
        if (pa.pipeline_layout.size() > 4096)
            throw PlanError("parallel.pipeline_layout", "is longer than 4096 characters");
        if (const json *l = r.get("stage_layers")) {
            if (!l->is_array() || l->empty())
                throw PlanError("parallel.stage_layers",
                                "must be a list of decoder layers per stage (e.g. [7, 8, 8, 8]), not " + l->dump());
            for (size_t i = 0; i < l->size(); ++i) {
                const json &n = (*l)[i];
                const std::string f = "parallel.stage_layers[" + std::to_string(i) + "]";
                if (!n.is_number_integer() && !(n.is_number_float() && n.get<double>() == std::floor(n.get<double>())))
                    throw PlanError(f, "must be a whole number of layers, not " + n.dump());
                const double d = n.get<double>();
                if (d < 1 || d > double(1 << 20))
                    throw PlanError(f, "every stage needs at least one layer (1 .. 1048576), got " + n.dump());
                pa.stage_layers.push_back(int(d));
            }
        }
        pa.cp_algo = r.choice<CpAlgo>("cp_algo", {CpAlgo::Ring, CpAlgo::Ulysses, CpAlgo::Hybrid}, CpAlgo::Ring);
        if (pa.cp_algo == CpAlgo::Hybrid)
            pa.ulysses_degree = int(r.integer("ulysses_degree", 2, 1024, std::nullopt));
        else if (r.has("ulysses_degree"))
            throw PlanError("parallel.ulysses_degree", "applies to cp_algo \"hybrid\" (Ulysses inside, ring across)");
        if (r.has("ulysses_kv_repeat"))
            pa.ulysses_kv_repeat = r.boolean("ulysses_kv_repeat", std::nullopt);
        keepUnknown(plan.unknown, "parallel", r.unknown());
    }

    if (const json *p = top.get("memory")) {
        ObjectReader r(*p, "memory", &plan.warnings);
        auto &mo = plan.memory;
        mo.recompute = r.choice<Recompute>(
            "recompute", {Recompute::None, Recompute::Selective, Recompute::Full}, Recompute::None);
        mo.recompute_method = r.choice<RecomputeMethod>(
            "recompute_method", {RecomputeMethod::Uniform, RecomputeMethod::Block}, RecomputeMethod::Uniform);
        mo.recompute_num_layers = int(r.integer("recompute_num_layers", 1, 1024, 1));
        if ((r.has("recompute_method") || r.has("recompute_num_layers")) && mo.recompute != Recompute::Full)
            throw PlanError(r.has("recompute_method") ? "memory.recompute_method" : "memory.recompute_num_layers",
                            "applies to recompute \"full\" (Megatron's --recompute-method)");
        mo.recompute_layers_per_pp_rank = r.boolean("recompute_layers_per_pp_rank", false);
        mo.recompute_activation_function = r.boolean("recompute_activation_function", false);
        mo.recompute_norm = r.boolean("recompute_norm", false);
        if ((mo.recompute_activation_function || mo.recompute_norm) && mo.recompute == Recompute::Full)
            throw PlanError(mo.recompute_norm ? "memory.recompute_norm" : "memory.recompute_activation_function",
                            "has nothing to add under recompute \"full\" (every layer is recomputed)");
        mo.attention = r.choice<Attention>("attention", {Attention::Flash, Attention::Eager},
                                           Attention::Flash);
        mo.loss = r.choice<LossHead>("loss",
                                     {LossHead::Framework, LossHead::HfUpcast, LossHead::FusedFp32,
                                      LossHead::FusedFp32Copy, LossHead::Chunked, LossHead::FusedLinear},
                                     LossHead::Framework);
        mo.loss_chunks = int(r.integer("loss_chunks", 1, 1024, 8));
        if (r.has("loss_chunks") && mo.loss != LossHead::Chunked)
            throw PlanError("memory.loss_chunks", "needs memory.loss \"chunked\"");
        mo.rope = r.choice<RopeSaves>(
            "rope",
            {RopeSaves::Framework, RopeSaves::Shared, RopeSaves::PerLayer, RopeSaves::KeepsInput},
            RopeSaves::Framework);
        if (r.has("overlap_grad_reduce"))
            mo.overlap_grad_reduce = r.boolean("overlap_grad_reduce", std::nullopt);
        if (r.has("overlap_param_gather"))
            mo.overlap_param_gather = r.boolean("overlap_param_gather", std::nullopt);
        if (r.has("fused_swiglu"))
            mo.fused_swiglu = r.boolean("fused_swiglu", std::nullopt);
        if (r.has("flash_output_copy"))
            mo.flash_output_copy = r.boolean("flash_output_copy", std::nullopt);
        mo.param_and_grad_buffer_pad = int(r.integer("param_and_grad_buffer_pad", 0, 1048576, 0));
        // HCCL buffers per group (core/hcclbuffers.h): HCCL_BUFFSIZE and MindSpeed's
        // --hccl-group-buffer / --hccl-group-buffer-adaptive / --hccl-ep-group-buffer-adaptive-factor.
        mo.swap_attention = r.boolean("swap_attention", false);
        mo.hccl_buffer_mb = int(r.integer("hccl_buffer_mb", 0, 65536, 0));
        if (const json *g = r.get("hccl_group_buffer")) {
            ObjectReader gr(*g, "memory.hccl_group_buffer", &plan.warnings);
            const std::vector<std::string> &keys = hcclGroupBufferKeys();
            for (auto it = g->begin(); it != g->end(); ++it) {
                if (std::find(keys.begin(), keys.end(), it.key()) == keys.end())
                    throw PlanError("memory.hccl_group_buffer." + it.key(),
                                    "is not a group MindSpeed's --hccl-group-buffer accepts "
                                    "(dp, dp_cp, tp, pp, cp, cp_ulysses, cp_ring, exp, embd, ...)");
                mo.hccl_group_buffer[it.key()] = int(gr.integer(it.key(), 1, 65536, std::nullopt));
            }
        }
        mo.hccl_buffer_adaptive = r.boolean("hccl_buffer_adaptive", false);
        mo.hccl_ep_group_buffer_adaptive_factor =
            r.number("hccl_ep_group_buffer_adaptive_factor", 0, 1000, 0.0);
        if (const json *a = r.get("allocator")) {
            ObjectReader ar(*a, "memory.allocator", &plan.warnings);
            AllocatorConfig &ac = mo.allocator;
            ac.expandable_segments = ar.boolean("expandable_segments", false);
            ac.max_split_size_mb = ar.number("max_split_size_mb", 0, 1.0e9, 0.0);
            if (ac.max_split_size_mb != 0 && ac.max_split_size_mb <= 20)
                throw PlanError("memory.allocator.max_split_size_mb",
                                "must be above 20 (MiB), as the allocator requires, or 0 for no limit");
            ac.garbage_collection_threshold = ar.number("garbage_collection_threshold", 0, 1, 0.0);
            if (ac.garbage_collection_threshold >= 1)
                throw PlanError("memory.allocator.garbage_collection_threshold",
                                "must be below 1 (a fraction of the usable memory), or 0 for off");
            json u = ar.unknown();
            if (!u.empty())
                plan.unknown["memory"]["allocator"] = u;
        }
        if (const json *o = r.get("offload")) {
            ObjectReader orr(*o, "memory.offload", &plan.warnings);
            mo.offload.optimizer = orr.boolean("optimizer", false);
            mo.offload.params = orr.boolean("params", false);
            mo.offload.grads = orr.boolean("grads", false);
            mo.offload.activations = orr.boolean("activations", false);
            json u = orr.unknown();
            if (!u.empty()) {
                json &mu = plan.unknown["memory"];
                mu["offload"] = u;
            }
        }
        json u = r.unknown();
        if (!u.empty()) {
            json &mu = plan.unknown["memory"];
            for (auto it = u.begin(); it != u.end(); ++it)
                mu[it.key()] = it.value();
        }
    }

    plan.framework = top.string("framework", std::string("pytorch"));
    if (!catalog.framework(plan.framework)) {
        std::string ids;
        for (const auto &id : catalog.frameworkIds())
            ids += (ids.empty() ? "" : ", ") + id;
        throw PlanError("framework", "unknown framework profile \"" + plan.framework +
                                         "\"; known: " + ids);
    }

    if (const json *c = top.get("cluster")) {
        ObjectReader r(*c, "cluster", &plan.warnings);
        plan.cluster.device = r.string("device", std::nullopt);
        plan.cluster.devices_per_node = int(r.integer("devices_per_node", 1, 1024, 8));
        plan.cluster.nodes = int(r.integer("nodes", 1, 100000, 1));
        plan.cluster.host_memory_bytes = r.number("host_memory_bytes", 0, 1e15, 0.0, true);
        keepUnknown(plan.unknown, "cluster", r.unknown());
    } else {
        throw PlanError("cluster", "is required");
    }
    keepUnknown(plan.unknown, "", top.unknown());

    validatePlan(plan, catalog);
    return plan;
}

Plan parsePlanText(const std::string &text, const Catalog &catalog, const std::string &baseDir)
{
    return parsePlan(parseJsonText(text, ""), catalog, baseDir);
}

Plan parsePlanFile(const std::string &path, const Catalog &catalog)
{
    const std::string dir = std::filesystem::path(path).parent_path().string();
    return parsePlanText(readTextFile(path), catalog, dir.empty() ? "." : dir);
}

ModelShape modelFromPresetJson(const json &j, const std::string &file)
{
    try {
        ObjectReader r(j, "preset");
        ModelShape m;
        m.preset = r.string("id", std::nullopt);
        if (m.preset.empty())
            throw PlanError("preset.id", "must not be empty");
        m.display_name = m.preset;
        r.string("source", std::string()); // where the shape comes from, for people
        json unknown = json::object();
        readShapeFields(r, m, false, unknown, nullptr, "preset");
        if (const json u = r.unknown(); !u.empty())
            throw PlanError("preset." + u.begin().key(), "is not a preset field");
        if (!unknown.empty())
            throw PlanError("preset." + unknown.begin().key() + "." + unknown.begin()->begin().key(),
                            "is not a preset field");
        return m;
    } catch (const PlanError &e) {
        throw PlanError(file, e.what());
    }
}

void validatePlan(const Plan &plan, const Catalog &catalog)
{
    const auto &m = plan.model;
    const auto &pa = plan.parallel;
    auto s = [](auto v) { return std::to_string(v); };

    if (!catalog.device(plan.cluster.device)) {
        if (const std::string *why = catalog.brokenDevice(plan.cluster.device))
            throw PlanError("cluster.device", "the profile \"" + plan.cluster.device +
                                                  "\" is broken: " + *why);
        std::string ids;
        for (const auto &id : catalog.deviceIds())
            ids += (ids.empty() ? "" : ", ") + id;
        throw PlanError("cluster.device", "unknown device profile \"" + plan.cluster.device +
                                              "\"; known: " + ids);
    }
    if (!catalog.framework(plan.framework))
        throw PlanError("framework", "unknown framework profile \"" + plan.framework + "\"");
    // Megatron's arguments.py: --overlap-param-gather needs the distributed optimizer (the
    // all-gather of updated shards it overlaps) and --overlap-grad-reduce.
    if (plan.memory.overlap_param_gather.value_or(false) && pa.sharding != Sharding::Optimizer &&
        pa.sharding != Sharding::Grads)
        throw PlanError("memory.overlap_param_gather",
                        "needs parallel.sharding \"optimizer\" or \"grads\" (the distributed "
                        "optimizer's all-gather of updated shards)");
    if (plan.memory.recompute_layers_per_pp_rank) {
        const std::string f = "memory.recompute_layers_per_pp_rank";
        if (plan.memory.recompute != Recompute::Full ||
            plan.memory.recompute_method != RecomputeMethod::Block)
            throw PlanError(
                f, "applies to recompute \"full\" with recompute_method \"block\" (MindSpeed's "
                   "--enable-recompute-layers-per-pp-rank)");
        if (plan.framework != "megatron")
            throw PlanError(
                f, "is MindSpeed's --enable-recompute-layers-per-pp-rank: it needs framework "
                   "\"megatron\"");
    }
    if ((plan.memory.recompute_activation_function || plan.memory.recompute_norm) &&
        plan.memory.recompute == Recompute::Full)
        throw PlanError(plan.memory.recompute_norm ? "memory.recompute_norm" : "memory.recompute_activation_function",
                        "has nothing to add under recompute \"full\" (every layer is recomputed)");
    // MindSpeed's swap-attention (core/swapattention.h).
    if (plan.memory.swap_attention) {
        const std::string f = "memory.swap_attention";
        if (plan.framework != "megatron")
            throw PlanError(f, "is MindSpeed's --swap-attention: it needs framework \"megatron\"");
        if (plan.memory.recompute == Recompute::Full)
            throw PlanError(f, "with recompute \"full\" is not modelled (MindSpeed then swaps the "
                               "recompute_num_layers layers and recomputes their MLP)");
        if (plan.memory.offload.activations)
            throw PlanError(f, "and memory.offload.activations both move the saved activations: choose one");
    }
    if (plan.memory.hcclOptionsSet()) {
        const MemoryOptions &mo = plan.memory;
        const char *setField = mo.hccl_buffer_mb > 0          ? "memory.hccl_buffer_mb"
                               : !mo.hccl_group_buffer.empty() ? "memory.hccl_group_buffer"
                               : mo.hccl_buffer_adaptive       ? "memory.hccl_buffer_adaptive"
                                                               : "memory.hccl_ep_group_buffer_adaptive_factor";
        if (const DeviceProfile *dev = catalog.device(plan.cluster.device); dev && !isHcclDevice(*dev))
            throw PlanError(setField, "sizes HCCL's buffers: it needs a device with HCCL (vendor huawei), not \"" +
                                          plan.cluster.device + "\"");
        if (mo.hccl_ep_group_buffer_adaptive_factor > 0 && !mo.hccl_buffer_adaptive)
            throw PlanError("memory.hccl_ep_group_buffer_adaptive_factor",
                            "needs memory.hccl_buffer_adaptive true (MindSpeed's "
                            "--hccl-ep-group-buffer-adaptive-factor sizes the adaptive ep buffer)");
        if ((!mo.hccl_group_buffer.empty() || mo.hccl_buffer_adaptive) && plan.framework != "megatron")
            throw PlanError(!mo.hccl_group_buffer.empty() ? "memory.hccl_group_buffer" : "memory.hccl_buffer_adaptive",
                            "is MindSpeed's per-group HCCL buffer option: it needs framework \"megatron\"");
    }
    if (plan.memory.rope != RopeSaves::Framework &&
        plan.model.position_embedding != PositionEmbedding::Rope)
        throw PlanError(
            "memory.rope",
            "applies to position_embedding \"rope\" (a learned table keeps nothing per layer)");
    if (plan.memory.rope == RopeSaves::KeepsInput && plan.model.mla_attention())
        throw PlanError(
            "memory.rope",
            "\"keeps_input\" is modelled for standard attention's fused q/k/v projection, "
            "not for multi-head latent attention");
    if (plan.memory.fused_swiglu && plan.model.ffn != FfnKind::SwiGLU)
        throw PlanError("memory.fused_swiglu", "fuses SwiGLU: it needs model.ffn \"swiglu\"");
    if (plan.memory.flash_output_copy.value_or(false) && plan.memory.attention != Attention::Flash)
        throw PlanError("memory.flash_output_copy",
                        "needs memory.attention \"flash\" (eager attention keeps its scores, not a "
                        "flash kernel's output)");
    if (plan.memory.param_and_grad_buffer_pad > 0 && plan.framework != "megatron")
        throw PlanError("memory.param_and_grad_buffer_pad",
                        "is MindSpeed's --param-and-grad-buffer-pad: it needs framework \"megatron\"");
    if (plan.memory.param_and_grad_buffer_pad > 0 && pa.sharding != Sharding::Optimizer)
        throw PlanError("memory.param_and_grad_buffer_pad",
                        "pads the distributed optimizer's buckets: it needs parallel.sharding \"optimizer\"");
    if (plan.memory.overlap_param_gather.value_or(false) &&
        !plan.memory.overlap_grad_reduce.value_or(catalog.framework(plan.framework)->overlap_grad_reduce))
        throw PlanError("memory.overlap_param_gather",
                        "needs memory.overlap_grad_reduce true (Megatron: --overlap-param-gather "
                        "with --overlap-grad-reduce)");
    {
        const AllocatorConfig &ac = plan.memory.allocator;
        if (ac.expandable_segments && (ac.max_split_size_mb > 0 || ac.garbage_collection_threshold > 0) &&
            catalog.device(plan.cluster.device)->vendor == "huawei")
            throw PlanError("memory.allocator.expandable_segments",
                            "torch_npu refuses expandable segments together with max_split_size_mb "
                            "or garbage_collection_threshold (PYTORCH_NPU_ALLOC_CONF)");
    }
    if (plan.precision.reuse_fp32_param) {
        const Precision &pr = plan.precision;
        if (plan.framework != "megatron")
            throw PlanError("precision.reuse_fp32_param", "is MindSpeed's (framework megatron)");
        if (pr.params != DType::BF16 || pr.master_weights != DType::FP32)
            throw PlanError("precision.reuse_fp32_param",
                            "needs bf16 parameters with an fp32 master copy");
        if (plan.parallel.sharding == Sharding::Full)
            throw PlanError("precision.reuse_fp32_param", "does not work with full sharding (ZeRO-3)");
    }
    if (plan.precision.main_grads != DType::None &&
        catalog.framework(plan.framework)->main_grad_dtype == DType::None)
        throw PlanError("precision.main_grads", "the " + plan.framework +
                                                    " profile keeps no main-gradient buffer "
                                                    "(gradients use precision.grads); use megatron");
    if (m.kv_heads > m.heads || m.heads % m.kv_heads != 0)
        throw PlanError("model.kv_heads", "must divide model.heads (" + s(m.heads) + ")");
    if (m.moe.enabled() && m.moe.top_k > m.moe.experts)
        throw PlanError("model.moe.top_k", "must not exceed model.moe.experts");

    const int64_t world = int64_t(pa.dp) * pa.tp * pa.pp * pa.cp;
    if (world != plan.cluster.world())
        throw PlanError("parallel", "dp * tp * pp * cp = " + s(pa.dp) + " * " + s(pa.tp) + " * " +
                                        s(pa.pp) + " * " + s(pa.cp) + " = " + s(world) +
                                        " must equal cluster.devices_per_node * cluster.nodes = " +
                                        s(plan.cluster.world()));
    if (m.heads % pa.tp != 0)
        throw PlanError("parallel.tp", "must divide model.heads (" + s(m.heads) + "), got " + s(pa.tp));
    if (m.kv_heads % pa.tp != 0)
        throw PlanError("parallel.tp", "must divide model.kv_heads (" + s(m.kv_heads) +
                                           "): each TP rank needs whole KV heads, got " + s(pa.tp));
    if (m.layers > m.moeLayers() && m.ffn_hidden % pa.tp != 0)
        throw PlanError("parallel.tp", "must divide the FFN width (" + s(m.ffn_hidden) + "), got " + s(pa.tp));
    if (m.mla_attention()) {
        // The up-projections and the output are split by heads; the down-projections and the
        // latent norms are duplicated on every tensor-parallel rank (Megatron-Core's MLA).
        if (m.heads % pa.tp != 0)
            throw PlanError("parallel.tp", "must divide model.heads (" + s(m.heads) + ") under mla");
    }
    if (m.position_embedding == PositionEmbedding::Learned && plan.training.seq_len > m.max_positions)
        throw PlanError("training.seq_len", "exceeds model.max_positions (" + s(m.max_positions) +
                                                "): a learned position table has no row beyond it");
    // DeepSpeed ZeRO++ hpZ (core/hpz.h): stage3's secondary partition over groups of
    // zero_hpz_partition_size ranks (groups._create_zero_param_parallel_group asserts it divides
    // the world).
    if (pa.zero_hpz_partition_size > 1) {
        const std::string f = "parallel.zero_hpz_partition_size";
        if (plan.framework != "deepspeed")
            throw PlanError(f, "is DeepSpeed ZeRO++'s hpZ: it needs framework \"deepspeed\"");
        if (pa.sharding != Sharding::Full)
            throw PlanError(f, "partitions ZeRO-3's parameters: it needs parallel.sharding \"full\"");
        if (!pa.reshard_after_forward)
            throw PlanError(f, "keeps a secondary copy of released parameters: it needs "
                               "parallel.reshard_after_forward true");
        if (pa.dp_shard > 0)
            throw PlanError(f, "is not combined with parallel.dp_shard (hpZ keeps the primary shard over all of dp)");
        if (plan.memory.offload.params)
            throw PlanError(f, "with memory.offload.params is not modelled (the secondary copy would be on the host)");
        if (pa.zero_hpz_partition_size > pa.dp || pa.dp % pa.zero_hpz_partition_size != 0)
            throw PlanError(f, "must divide parallel.dp (" + s(pa.dp) + "), got " + s(pa.zero_hpz_partition_size));
    }
    if (pa.dp_shard > 0) {
        if (pa.sharding == Sharding::None)
            throw PlanError("parallel.dp_shard", "shards the states within groups: needs parallel.sharding "
                                                 "optimizer, grads or full (HSDP with full)");
        if (pa.dp_shard > pa.dp || pa.dp % pa.dp_shard != 0)
            throw PlanError("parallel.dp_shard", "must divide parallel.dp (" + s(pa.dp) + "), got " +
                                                     s(pa.dp_shard));
    }
    if (pa.etp > 0 && !m.moe.enabled())
        throw PlanError("parallel.etp", "expert tensor parallelism needs an MoE model (model.moe)");
    if (m.moe.enabled()) {
        const int etp = pa.expertTp();
        if (m.moe.expert_ffn_hidden % etp != 0)
            throw PlanError(pa.etp > 0 ? "parallel.etp" : "parallel.tp",
                            "must divide model.moe.expert_ffn_hidden (" + s(m.moe.expert_ffn_hidden) +
                                "), got " + s(etp));
        if (m.moe.shared_experts > 0 && m.moe.shared_expert_ffn_hidden % pa.tp != 0)
            throw PlanError("parallel.tp", "must divide model.moe.shared_expert_ffn_hidden (" +
                                               s(m.moe.shared_expert_ffn_hidden) + "), got " + s(pa.tp));
        const int64_t perStage = int64_t(pa.dp) * pa.cp * pa.tp;
        if (perStage % (int64_t(pa.ep) * etp) != 0)
            throw PlanError(pa.etp > 0 ? "parallel.etp" : "parallel.ep",
                            "ep * etp = " + s(int64_t(pa.ep) * etp) + " must divide dp * cp * tp (" +
                                s(perStage) + "): the expert groups tile each pipeline stage");
        if (etp != pa.tp && pa.tp > 1 && !pa.sp)
            throw PlanError("parallel.etp", "differing from tp needs parallel.sp: the tokens are "
                                            "split over the tensor-parallel group before dispatch");
        if (m.moe.first_dense_layers >= m.layers)
            throw PlanError("model.moe.first_dense_layers", "must leave at least one MoE layer");
    }
    if (pa.pp_schedule == PpSchedule::Interleaved) {
        if (pa.pp < 2)
            throw PlanError("parallel.pp_schedule", "interleaved needs parallel.pp >= 2");
        if (pa.virtual_stages < 2)
            throw PlanError("parallel.virtual_stages", "interleaved needs virtual_stages >= 2");
        if (plan.training.grad_accum % pa.pp != 0)
            throw PlanError("training.grad_accum",
                            "the interleaved schedule needs micro-batches (grad_accum) divisible by "
                            "parallel.pp (" + s(pa.pp) + "), got " + s(plan.training.grad_accum));
    } else if (pa.virtual_stages != 1) {
        throw PlanError("parallel.virtual_stages",
                        "must be 1 unless parallel.pp_schedule is \"interleaved\"");
    }
    // The layers over the stages and their chunks (core/layers.h: even, uneven first / last
    // stages, the embedding / loss counted, or listed per stage).
    if (const std::optional<PlanError> e = stageLayoutError(pa, m.layers, m.mtp_layers))
        throw *e;
    const StageLayout layout = stageLayout(pa, m.layers);
    if (plan.memory.recompute_layers_per_pp_rank) {
        if (plan.memory.recompute_num_layers > layout.largestStage())
            throw PlanError("memory.recompute_num_layers",
                            "must not exceed the layers of a pipeline stage (" +
                                s(layout.largestStage()) +
                                ") with recompute_layers_per_pp_rank, got " +
                                s(plan.memory.recompute_num_layers));
    } else if (plan.memory.recompute == Recompute::Full &&
               plan.memory.recompute_num_layers > layout.largestChunk()) {
        throw PlanError("memory.recompute_num_layers",
                        "must not exceed the layers of a model chunk (" + s(layout.largestChunk()) +
                            "), got " + s(plan.memory.recompute_num_layers));
    }
    if (plan.training.seq_len % pa.cp != 0)
        throw PlanError("parallel.cp", "must divide training.seq_len (" + s(plan.training.seq_len) +
                                           "), got " + s(pa.cp));
    if (pa.ulysses_kv_repeat.value_or(false) && plan.framework != "megatron")
        throw PlanError("parallel.ulysses_kv_repeat",
                        "is MindSpeed-LLM's --kv-head-repeat-before-uly-alltoall: it needs "
                        "framework \"megatron\"");
    if (pa.cp_algo != CpAlgo::Ring) {
        // Ulysses trades the sequence split for a head split inside its group: every rank of it
        // needs whole query heads, and whole KV heads unless K and V are repeated to the query
        // heads first (DeepSpeed-Ulysses, MindSpeed's ulysses_cp_algo, MindSpeed-LLM's repeat).
        const char *field = pa.cp_algo == CpAlgo::Hybrid ? "parallel.ulysses_degree" : "parallel.cp_algo";
        const int u = pa.ulyssesDegree();
        if (pa.cp_algo == CpAlgo::Hybrid && (u >= pa.cp || pa.cp % u != 0))
            throw PlanError(field, "must divide parallel.cp (" + s(pa.cp) + ") and be below it (the ring "
                                   "across groups needs 2 or more), got " + s(u));
        if ((m.heads / pa.tp) % u != 0)
            throw PlanError(field, "Ulysses over " + s(u) + " ranks needs heads / tp (" +
                                       s(m.heads / pa.tp) + ") divisible by it");
        if ((m.kv_heads / pa.tp) % u != 0 &&
            !ulyssesRepeatsKv(plan, *catalog.framework(plan.framework)))
            throw PlanError(field,
                            "Ulysses over " + s(u) + " ranks needs kv_heads / tp (" +
                                s(m.kv_heads / pa.tp) +
                                ") divisible by it, unless K and V are "
                                "repeated to the query heads first (parallel.ulysses_kv_repeat, "
                                "framework megatron)");
    }
    if (pa.sp) {
        if (pa.tp < 2)
            throw PlanError("parallel.sp",
                            "Megatron-style sequence parallelism splits the tensor-parallel group's "
                            "norm and residual activations and needs parallel.tp >= 2; to split "
                            "the sequence across other ranks use parallel.cp");
        if ((plan.training.seq_len / pa.cp) % pa.tp != 0)
            throw PlanError("parallel.sp", "needs training.seq_len / cp (" +
                                               s(plan.training.seq_len / pa.cp) +
                                               ") divisible by parallel.tp (" + s(pa.tp) + ")");
    }
    if (pa.ep > 1) {
        if (!m.moe.enabled())
            throw PlanError("parallel.ep", "expert parallelism needs an MoE model (model.moe)");
        if (m.moe.experts % pa.ep != 0)
            throw PlanError("parallel.ep", "must divide model.moe.experts (" + s(m.moe.experts) +
                                               "), got " + s(pa.ep));
        if (pa.etp == 0 && (int64_t(pa.dp) * pa.cp) % pa.ep != 0)
            throw PlanError("parallel.ep", "must divide dp * cp (" + s(int64_t(pa.dp) * pa.cp) +
                                               "): experts are spread over data-parallel ranks");
    }
    if (plan.memory.offload.params && pa.sharding != Sharding::Full)
        throw PlanError("memory.offload.params",
                        "needs parallel.sharding \"full\": parameters live on the host and are "
                        "gathered layer by layer");
    if (plan.precision.compute == DType::FP8 && plan.precision.params == DType::FP32 &&
        plan.framework == "pytorch")
        throw PlanError("precision.compute", "fp8 compute is not modelled for the pytorch profile "
                                             "(autocast has no fp8); use megatron");
    const double tokens = double(plan.training.seq_len) * plan.training.micro_batch;
    if (tokens > 1.0e9)
        throw PlanError("training", "seq_len * micro_batch = " + json(tokens).dump() +
                                        " tokens per micro-batch is beyond any device");
    // Products the engine forms in integers (the search's per-replica batch, the workload's
    // counts) and in doubles it prints: bounded so that none overflows or loses meaning.
    const double sequences = double(pa.dp) * plan.training.micro_batch * plan.training.grad_accum;
    if (sequences > double(kMaxSequencesPerStep))
        throw PlanError("training", "dp * micro_batch * grad_accum = " + json(sequences).dump() +
                                        " sequences per step is beyond any run (at most " +
                                        s(kMaxSequencesPerStep) + ")");
    if (sequences * double(plan.training.seq_len) > kMaxTokensPerStep)
        throw PlanError("training", "dp * micro_batch * grad_accum * seq_len = " +
                                        json(sequences * double(plan.training.seq_len)).dump() +
                                        " tokens per step is beyond any run (at most 1e12)");
}

nlohmann::json planToJson(const Plan &p)
{
    json j;
    j["format"] = "shardscope-plan";
    j["version"] = kPlanFormatVersion;
    j["name"] = p.name;
    json m;
    if (!p.model.preset.empty())
        m["preset"] = p.model.preset;
    else if (!p.model.hf_config.empty())
        m["hf_config"] = p.model.hf_config;
    m["layers"] = p.model.layers;
    m["hidden"] = p.model.hidden;
    m["heads"] = p.model.heads;
    m["kv_heads"] = p.model.kv_heads;
    m["head_dim"] = p.model.head_dim;
    m["ffn_hidden"] = p.model.ffn_hidden;
    m["ffn"] = toString(p.model.ffn);
    m["norm"] = toString(p.model.norm);
    m["linear_bias"] = p.model.linear_bias;
    m["vocab"] = p.model.vocab;
    if (p.model.vocab_divisible_by > 0)
        m["vocab_divisible_by"] = p.model.vocab_divisible_by;
    m["tied_embeddings"] = p.model.tied_embeddings;
    if (p.model.attention_bias)
        m["attention_bias"] = true;
    m["attention"] = attentionName(p.model);
    if (p.model.mla_attention())
        m["mla"] = {{"q_lora_rank", p.model.mla.q_lora_rank},
                    {"kv_lora_rank", p.model.mla.kv_lora_rank},
                    {"qk_nope_head_dim", p.model.mla.qk_nope_head_dim},
                    {"qk_rope_head_dim", p.model.mla.qk_rope_head_dim},
                    {"v_head_dim", p.model.mla.v_head_dim}};
    if (p.model.qk_norm)
        m["qk_norm"] = true;
    if (p.model.position_embedding == PositionEmbedding::Learned) {
        m["position_embedding"] = "learned";
        m["max_positions"] = p.model.max_positions;
    }
    if (p.model.mtp_layers > 0)
        m["mtp_layers"] = p.model.mtp_layers;
    if (const MoeShape &e = p.model.moe; e.enabled()) {
        json o = {{"experts", e.experts}, {"top_k", e.top_k}, {"expert_ffn_hidden", e.expert_ffn_hidden}};
        if (e.shared_experts > 0) {
            o["shared_experts"] = e.shared_experts;
            o["shared_expert_ffn_hidden"] = e.shared_expert_ffn_hidden;
            if (e.shared_expert_gate)
                o["shared_expert_gate"] = true;
        }
        if (e.first_dense_layers > 0)
            o["first_dense_layers"] = e.first_dense_layers;
        if (e.layer_freq != 1)
            o["layer_freq"] = e.layer_freq;
        if (e.capacity_factor > 0)
            o["capacity_factor"] = e.capacity_factor;
        else if (e.imbalance != 1.0)
            o["imbalance"] = e.imbalance;
        if (e.router_fp32)
            o["router_fp32"] = true;
        if (e.dispatcher != MoeShape::Dispatcher::AllToAll)
            o["dispatcher"] = toString(e.dispatcher);
        m["moe"] = o;
    } else if (!p.model.preset.empty() || !p.model.hf_config.empty())
        m["moe"] = nullptr; // the preset may have experts that this plan turned off
    j["model"] = m;
    j["training"] = {{"seq_len", p.training.seq_len},
                     {"micro_batch", p.training.micro_batch},
                     {"grad_accum", p.training.grad_accum}};
    if (const Dropout &d = p.training.dropout; !(d == Dropout{})) {
        json o = json::object();
        if (d.hidden >= 0)
            o["hidden"] = d.hidden;
        if (d.attention >= 0)
            o["attention"] = d.attention;
        j["training"]["dropout"] = o;
    }
    if (const MethodOptions &mo = p.training.method; mo.method != TrainingMethod::Full) {
        json &t = j["training"];
        t["method"] = toString(mo.method);
        if (mo.usesAdapters()) {
            json l = {{"rank", mo.lora.rank},
                      {"targets", mo.lora.targets == kTargetAllLinear ? json("all_linear")
                                                                      : json(targetNames(mo.lora.targets))},
                      {"dropout", mo.lora.dropout}};
            if (mo.lora.modules_to_save)
                l["modules_to_save"] = partNames(mo.lora.modules_to_save);
            if (mo.lora.dtype != DType::None)
                l["dtype"] = toString(mo.lora.dtype);
            t["lora"] = l;
        }
        if (mo.method == TrainingMethod::QLoRA)
            t["qlora"] = {{"quant", toString(mo.qlora.quant)},
                          {"double_quant", mo.qlora.double_quant},
                          {"block_size", mo.qlora.block_size}};
        if (mo.method == TrainingMethod::Freeze) {
            json f = {{"last_layers", mo.freeze.last_layers}};
            if (mo.freeze.parts)
                f["parts"] = partNames(mo.freeze.parts);
            t["freeze"] = f;
        }
    }
    json pr = {{"params", toString(p.precision.params)},
               {"grads", toString(p.precision.grads)},
               {"master_weights", toString(p.precision.master_weights)},
               {"optimizer", toString(p.precision.optimizer)},
               {"optimizer_state", toString(p.precision.optimizer_state)},
               {"compute", toString(p.precision.compute)}};
    if (p.precision.optimizer_impl != OptimizerImpl::Default)
        pr["optimizer_impl"] = toString(p.precision.optimizer_impl);
    if (!p.precision.momentum)
        pr["momentum"] = false;
    if (p.precision.main_grads != DType::None)
        pr["main_grads"] = toString(p.precision.main_grads);
    if (p.precision.reuse_fp32_param)
        pr["reuse_fp32_param"] = true;
    if (p.precision.first_moment)
        pr["first_moment"] = true;
    j["precision"] = pr;
    j["parallel"] = {{"dp", p.parallel.dp},
                     {"tp", p.parallel.tp},
                     {"pp", p.parallel.pp},
                     {"cp", p.parallel.cp},
                     {"ep", p.parallel.ep},
                     {"sp", p.parallel.sp},
                     {"sharding", toString(p.parallel.sharding)},
                     {"reshard_after_forward", p.parallel.reshard_after_forward},
                     {"pp_schedule", toString(p.parallel.pp_schedule)},
                     {"virtual_stages", p.parallel.virtual_stages}};
    if (p.parallel.etp > 0)
        j["parallel"]["etp"] = p.parallel.etp;
    if (p.parallel.first_stage_layers > 0)
        j["parallel"]["first_stage_layers"] = p.parallel.first_stage_layers;
    if (p.parallel.last_stage_layers > 0)
        j["parallel"]["last_stage_layers"] = p.parallel.last_stage_layers;
    if (p.parallel.account_for_embedding)
        j["parallel"]["account_for_embedding"] = true;
    if (p.parallel.account_for_loss)
        j["parallel"]["account_for_loss"] = true;
    if (!p.parallel.stage_layers.empty())
        j["parallel"]["stage_layers"] = p.parallel.stage_layers;
    if (!p.parallel.pipeline_layout.empty())
        j["parallel"]["pipeline_layout"] = p.parallel.pipeline_layout;
    if (p.parallel.dp_shard > 0)
        j["parallel"]["dp_shard"] = p.parallel.dp_shard;
    if (p.parallel.zero_hpz_partition_size > 0)
        j["parallel"]["zero_hpz_partition_size"] = p.parallel.zero_hpz_partition_size;
    if (p.parallel.cp_algo != CpAlgo::Ring)
        j["parallel"]["cp_algo"] = toString(p.parallel.cp_algo);
    if (p.parallel.cp_algo == CpAlgo::Hybrid)
        j["parallel"]["ulysses_degree"] = p.parallel.ulysses_degree;
    if (p.parallel.ulysses_kv_repeat)
        j["parallel"]["ulysses_kv_repeat"] = *p.parallel.ulysses_kv_repeat;
    j["memory"] = {{"recompute", toString(p.memory.recompute)},
                   {"attention", toString(p.memory.attention)},
                   {"offload",
                    {{"optimizer", p.memory.offload.optimizer},
                     {"params", p.memory.offload.params},
                     {"grads", p.memory.offload.grads},
                     {"activations", p.memory.offload.activations}}}};
    if (p.memory.recompute == Recompute::Full &&
        (p.memory.recompute_method != RecomputeMethod::Uniform || p.memory.recompute_num_layers != 1)) {
        j["memory"]["recompute_method"] = toString(p.memory.recompute_method);
        j["memory"]["recompute_num_layers"] = p.memory.recompute_num_layers;
    }
    if (p.memory.recompute_layers_per_pp_rank)
        j["memory"]["recompute_layers_per_pp_rank"] = true;
    if (p.memory.recompute_activation_function)
        j["memory"]["recompute_activation_function"] = true;
    if (p.memory.recompute_norm)
        j["memory"]["recompute_norm"] = true;
    if (p.memory.loss != LossHead::Framework)
        j["memory"]["loss"] = toString(p.memory.loss);
    if (p.memory.overlap_grad_reduce)
        j["memory"]["overlap_grad_reduce"] = *p.memory.overlap_grad_reduce;
    if (p.memory.fused_swiglu)
        j["memory"]["fused_swiglu"] = *p.memory.fused_swiglu;
    if (p.memory.flash_output_copy)
        j["memory"]["flash_output_copy"] = *p.memory.flash_output_copy;
    if (p.memory.overlap_param_gather)
        j["memory"]["overlap_param_gather"] = *p.memory.overlap_param_gather;
    if (p.memory.param_and_grad_buffer_pad > 0)
        j["memory"]["param_and_grad_buffer_pad"] = p.memory.param_and_grad_buffer_pad;
    if (p.memory.swap_attention)
        j["memory"]["swap_attention"] = true;
    if (p.memory.hccl_buffer_mb > 0)
        j["memory"]["hccl_buffer_mb"] = p.memory.hccl_buffer_mb;
    if (!p.memory.hccl_group_buffer.empty())
        j["memory"]["hccl_group_buffer"] = p.memory.hccl_group_buffer;
    if (p.memory.hccl_buffer_adaptive)
        j["memory"]["hccl_buffer_adaptive"] = true;
    if (p.memory.hccl_ep_group_buffer_adaptive_factor > 0)
        j["memory"]["hccl_ep_group_buffer_adaptive_factor"] = p.memory.hccl_ep_group_buffer_adaptive_factor;
    if (p.memory.loss == LossHead::Chunked)
        j["memory"]["loss_chunks"] = p.memory.loss_chunks;
    if (p.memory.rope != RopeSaves::Framework)
        j["memory"]["rope"] = toString(p.memory.rope);
    if (!(p.memory.allocator == AllocatorConfig{})) {
        json a = json::object();
        if (p.memory.allocator.expandable_segments)
            a["expandable_segments"] = true;
        if (p.memory.allocator.max_split_size_mb > 0)
            a["max_split_size_mb"] = p.memory.allocator.max_split_size_mb;
        if (p.memory.allocator.garbage_collection_threshold > 0)
            a["garbage_collection_threshold"] = p.memory.allocator.garbage_collection_threshold;
        j["memory"]["allocator"] = a;
    }
    j["framework"] = p.framework;
    j["cluster"] = {{"device", p.cluster.device},
                    {"devices_per_node", p.cluster.devices_per_node},
                    {"nodes", p.cluster.nodes}};
    if (p.cluster.host_memory_bytes > 0)
        j["cluster"]["host_memory_bytes"] = p.cluster.host_memory_bytes;
    overlayUnknown(j, p.unknown);
    return j;
}

} // namespace shardscope
