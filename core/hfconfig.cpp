// Hugging Face config.json -> ModelShape. The field names and defaults follow transformers'
// configuration classes (LlamaConfig, MistralConfig, MixtralConfig, Qwen2Config, GPT2Config,
// GPTNeoXConfig): where a field is absent the class's own default applies, and only then.
#include "model.h"

#include "errors.h"
#include "files.h"
#include "jsoninput.h"

#include <filesystem>

#include <nlohmann/json.hpp>

namespace shardscope {

namespace {

using nlohmann::json;

struct TypeDefaults
{
    const char *type;
    bool gelu;          ///< non-gated GELU FFN with LayerNorm and biases (GPT family)
    bool tied;          ///< tie_word_embeddings when the file does not say
    bool qkvBias;       ///< q/k/v biases whatever attention_bias says (Qwen2)
    int64_t ffnFactor;  ///< intermediate size = factor x hidden when absent (0: required)
};

// transformers: LlamaConfig/MistralConfig/MixtralConfig/Qwen2Config tie_word_embeddings=False;
// GPT2Config inherits PretrainedConfig's True (wte is the head); GPTNeoXConfig False.
// GPT2Config n_inner=None means 4 x n_embd.
constexpr TypeDefaults kTypes[] = {
    {"llama", false, false, false, 0},   {"mistral", false, false, false, 0},
    {"mixtral", false, false, false, 0}, {"qwen2", false, false, true, 0},
    {"gpt2", true, true, false, 4},      {"gpt_neox", true, false, false, 0},
};

std::string supportedList()
{
    std::string s;
    for (const TypeDefaults &t : kTypes)
        s += (s.empty() ? "" : ", ") + std::string(t.type);
    return s;
}

/// The first of `keys` present (and not null) in the config; nullptr when none is.
const json *find(const json &j, std::initializer_list<const char *> keys, const char **name)
{
    for (const char *k : keys) {
        auto it = j.find(k);
        if (it != j.end() && !it->is_null()) {
            *name = k;
            return &*it;
        }
    }
    *name = *keys.begin();
    return nullptr;
}

/// A whole count in [1, hi]. Absent: `fallback` when it is >= 0, else the field is required.
int64_t count(const json &j, std::initializer_list<const char *> keys, int64_t hi,
              int64_t fallback = -1)
{
    const char *name = nullptr;
    const json *v = find(j, keys, &name);
    const std::string field = std::string("config.") + name;
    if (!v) {
        if (fallback >= 0)
            return fallback;
        throw PlanError(field, "is required");
    }
    if (!v->is_number_integer() && !v->is_number_unsigned())
        throw PlanError(field, "must be a whole number, not " + std::string(v->type_name()) +
                                   " " + v->dump());
    if (v->is_number_unsigned() && v->get<uint64_t>() > uint64_t(hi))
        throw PlanError(field, "must be between 1 and " + std::to_string(hi) + ", got " + v->dump());
    const int64_t n = v->get<int64_t>();
    if (n < 1 || n > hi)
        throw PlanError(field, "must be between 1 and " + std::to_string(hi) + ", got " + v->dump());
    return n;
}

bool flag(const json &j, const char *key, bool fallback)
{
    auto it = j.find(key);
    if (it == j.end() || it->is_null())
        return fallback;
    if (!it->is_boolean())
        throw PlanError(std::string("config.") + key, "must be true or false, not " + it->dump());
    return it->get<bool>();
}

} // namespace

ModelShape shapeFromHuggingFaceConfig(const json &config)
{
    if (!config.is_object())
        throw PlanError("config", "a Hugging Face config.json must be a JSON object");
    auto mt = config.find("model_type");
    if (mt == config.end())
        throw PlanError("config.model_type", "is required (transformers writes it into every "
                                             "config.json); supported: " + supportedList());
    if (!mt->is_string())
        throw PlanError("config.model_type", "must be a string, not " + mt->dump());
    const std::string type = mt->get<std::string>();
    const TypeDefaults *td = nullptr;
    for (const TypeDefaults &t : kTypes)
        if (type == t.type)
            td = &t;
    if (!td)
        throw PlanError("config.model_type",
                        "\"" + type + "\" is not supported: its shape (for example multi-head "
                        "latent attention, shared experts or QK norms) is not modelled; "
                        "supported: " + supportedList());

    ModelShape m;
    m.display_name = type + " (imported)";
    // The same ranges as a plan's model fields (plan-format.md).
    m.hidden = count(config, {"hidden_size", "n_embd"}, 262144);
    m.layers = int(count(config, {"num_hidden_layers", "n_layer"}, 1024));
    m.heads = int(count(config, {"num_attention_heads", "n_head"}, 4096));
    m.kv_heads = int(count(config, {"num_key_value_heads"}, 4096, m.heads));
    if (m.kv_heads > m.heads || m.heads % m.kv_heads != 0)
        throw PlanError("config.num_key_value_heads",
                        "must divide num_attention_heads (" + std::to_string(m.heads) + "), got " +
                            std::to_string(m.kv_heads));
    const char *name = nullptr;
    if (find(config, {"head_dim"}, &name)) {
        m.head_dim = count(config, {"head_dim"}, 4096);
    } else {
        if (m.hidden % m.heads != 0)
            throw PlanError("config.num_attention_heads",
                            "must divide hidden_size (" + std::to_string(m.hidden) +
                                ") when the config gives no head_dim, got " + std::to_string(m.heads));
        m.head_dim = m.hidden / m.heads;
    }
    m.vocab = count(config, {"vocab_size"}, 16777216);
    m.ffn = td->gelu ? FfnKind::GELU : FfnKind::SwiGLU;
    m.ffn_hidden = count(config, {"intermediate_size", "n_inner"}, 1048576,
                         td->ffnFactor > 0 ? td->ffnFactor * m.hidden : -1);
    m.tied_embeddings = flag(config, "tie_word_embeddings", td->tied);
    m.attention_bias = td->qkvBias || flag(config, "attention_bias", false);
    if (type == "mixtral") {
        m.moe.experts = int(count(config, {"num_local_experts"}, 4096));
        m.moe.top_k = int(count(config, {"num_experts_per_tok"}, m.moe.experts));
        m.moe.expert_ffn_hidden = m.ffn_hidden; // Mixtral's intermediate_size is one expert's
    }
    return m;
}

ModelShape shapeFromHuggingFaceConfigFile(const std::string &path)
{
    namespace fs = std::filesystem;
    try {
        ModelShape m = shapeFromHuggingFaceConfig(parseJsonText(readTextFile(path), ""));
        // Absolute, so that a plan saved into another folder still finds it.
        std::error_code ec;
        const fs::path abs = fs::absolute(path, ec);
        m.hf_config = (ec ? fs::path(path) : abs).lexically_normal().string();
        return m;
    } catch (const PlanError &e) {
        const std::string what = e.what();
        throw PlanError(path, what.rfind(path, 0) == 0 ? what.substr(path.size() + 2) : what);
    }
}

} // namespace shardscope
