// Hugging Face config.json -> ModelShape. The field names and defaults follow transformers'
// configuration classes (LlamaConfig, MistralConfig, MixtralConfig, Qwen2Config,
// Qwen2MoeConfig, Qwen3Config, Qwen3MoeConfig, DeepseekV2Config, DeepseekV3Config,
// Glm4MoeConfig, GPT2Config, GPTNeoXConfig): where a field is absent the class's own default
// applies, and only then. A vision-language model's config carries its decoder in
// `text_config`; that is what is read.
#include "model.h"

#include "errors.h"
#include "files.h"
#include "jsoninput.h"

#include <filesystem>

#include <nlohmann/json.hpp>

namespace shardscope {

namespace {

using nlohmann::json;

enum class Family { Llama, Gpt, Mixtral, Qwen2Moe, Qwen3, Qwen3Moe, DeepSeekV2, DeepSeekV3, Glm4Moe };

struct TypeDefaults
{
    const char *type;
    Family family;
    bool tied;          ///< tie_word_embeddings when the file does not say
    bool qkvBias;       ///< q/k/v biases whatever attention_bias says (Qwen2, Qwen2-MoE)
    int64_t ffnFactor;  ///< intermediate size = factor x hidden when absent (0: required)
};

// transformers: LlamaConfig/MistralConfig/MixtralConfig/Qwen2Config tie_word_embeddings=False;
// GPT2Config inherits PretrainedConfig's True (wte is the head); GPTNeoXConfig False.
// GPT2Config n_inner=None means 4 x n_embd. Kimi-K2 ships model_type kimi_k2 with DeepSeek-V3's
// architecture (its own DeepseekV3 modelling code).
constexpr TypeDefaults kTypes[] = {
    {"llama", Family::Llama, false, false, 0},       {"mistral", Family::Llama, false, false, 0},
    {"mixtral", Family::Mixtral, false, false, 0},   {"qwen2", Family::Llama, false, true, 0},
    {"qwen2_moe", Family::Qwen2Moe, false, true, 0}, {"qwen3", Family::Qwen3, false, false, 0},
    {"qwen3_moe", Family::Qwen3Moe, false, false, 0}, {"deepseek_v2", Family::DeepSeekV2, false, false, 0},
    {"deepseek_v3", Family::DeepSeekV3, false, false, 0}, {"kimi_k2", Family::DeepSeekV3, false, false, 0},
    {"glm4_moe", Family::Glm4Moe, false, false, 0},
    {"gpt2", Family::Gpt, true, false, 4},           {"gpt_neox", Family::Gpt, false, false, 0},
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

/// A whole count in [0, hi] (0 allowed: "none"); absent or null: `fallback`.
int64_t countOrZero(const json &j, const char *key, int64_t hi, int64_t fallback)
{
    auto it = j.find(key);
    if (it == j.end() || it->is_null())
        return fallback;
    const std::string field = std::string("config.") + key;
    if (!it->is_number_integer() && !it->is_number_unsigned())
        throw PlanError(field, "must be a whole number, not " + std::string(it->type_name()) + " " + it->dump());
    if (it->is_number_unsigned() && it->get<uint64_t>() > uint64_t(hi))
        throw PlanError(field, "must be between 0 and " + std::to_string(hi) + ", got " + it->dump());
    const int64_t n = it->get<int64_t>();
    if (n < 0 || n > hi)
        throw PlanError(field, "must be between 0 and " + std::to_string(hi) + ", got " + it->dump());
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

ModelShape shapeFromHuggingFaceConfig(const json &input)
{
    if (!input.is_object())
        throw PlanError("config", "a Hugging Face config.json must be a JSON object");
    // A vision-language model (Qwen2.5-VL, Llama 4, GLM-4.5V): the decoder is text_config.
    const json *cfg = &input;
    std::string prefix = "config.";
    if (auto tc = input.find("text_config"); tc != input.end() && tc->is_object() &&
                                             tc->contains("model_type")) {
        cfg = &*tc;
        prefix = "config.text_config.";
    }
    try {
        const json &config = *cfg;
        auto mt = config.find("model_type");
        if (mt == config.end())
            throw PlanError("config.model_type", "is required (transformers writes it into every "
                                                 "config.json); supported: " + supportedList());
        if (!mt->is_string())
            throw PlanError("config.model_type", "must be a string, not " + mt->dump());
        std::string type = mt->get<std::string>();
        // Qwen2.5-VL's text_config says "qwen2_5_vl_text": its decoder is Qwen2's.
        if (type == "qwen2_5_vl_text" || type == "qwen2_vl_text" || type == "qwen2_5_vl" ||
            type == "qwen2_vl")
            type = "qwen2";
        const TypeDefaults *td = nullptr;
        for (const TypeDefaults &t : kTypes)
            if (type == t.type)
                td = &t;
        if (!td)
            throw PlanError("config.model_type",
                            "\"" + type + "\" is not supported: its shape is not modelled; "
                            "supported: " + supportedList());
        const Family fam = td->family;
        const bool gpt = fam == Family::Gpt;

        ModelShape m;
        m.display_name = type + " (imported)";
        // The same ranges as a plan's model fields (plan-format.md).
        m.hidden = count(config, {"hidden_size", "n_embd"}, 262144);
        m.layers = int(count(config, {"num_hidden_layers", "n_layer"}, 1024));
        m.heads = int(count(config, {"num_attention_heads", "n_head"}, 4096));
        const bool mla = fam == Family::DeepSeekV2 || fam == Family::DeepSeekV3;
        m.kv_heads = mla ? m.heads : int(count(config, {"num_key_value_heads"}, 4096, m.heads));
        if (m.kv_heads > m.heads || m.heads % m.kv_heads != 0)
            throw PlanError("config.num_key_value_heads",
                            "must divide num_attention_heads (" + std::to_string(m.heads) + "), got " +
                                std::to_string(m.kv_heads));
        const char *name = nullptr;
        if (mla) {
            // DeepseekV2Config / V3Config: q_lora_rank null means queries projected directly.
            m.attention = AttentionKind::MLA;
            // Absent: the classes' default 1536; null: no query compression (V2-Lite).
            auto ql = config.find("q_lora_rank");
            m.mla.q_lora_rank = ql == config.end() ? 1536
                                : ql->is_null()    ? 0
                                                   : countOrZero(config, "q_lora_rank", 65536, 0);
            m.mla.kv_lora_rank = count(config, {"kv_lora_rank"}, 65536, 512);
            m.mla.qk_nope_head_dim = count(config, {"qk_nope_head_dim"}, 4096, 128);
            m.mla.qk_rope_head_dim = count(config, {"qk_rope_head_dim"}, 4096, 64);
            m.mla.v_head_dim = count(config, {"v_head_dim"}, 4096, 128);
            m.head_dim = m.mla.qkHeadDim();
        } else if (find(config, {"head_dim"}, &name)) {
            m.head_dim = count(config, {"head_dim"}, 4096);
        } else {
            if (m.hidden % m.heads != 0)
                throw PlanError("config.num_attention_heads",
                                "must divide hidden_size (" + std::to_string(m.hidden) +
                                    ") when the config gives no head_dim, got " + std::to_string(m.heads));
            m.head_dim = m.hidden / m.heads;
        }
        m.vocab = count(config, {"vocab_size"}, 16777216);
        m.ffn = gpt ? FfnKind::GELU : FfnKind::SwiGLU;
        m.norm = gpt ? NormKind::LayerNorm : NormKind::RMSNorm;
        m.linear_bias = gpt;
        if (type == "gpt2") {
            m.position_embedding = PositionEmbedding::Learned;
            m.max_positions = count(config, {"n_positions"}, 16777216, 1024);
        }
        m.ffn_hidden = count(config, {"intermediate_size", "n_inner"}, 1048576,
                             td->ffnFactor > 0 ? td->ffnFactor * m.hidden : -1);
        m.tied_embeddings = flag(config, "tie_word_embeddings", td->tied);
        m.attention_bias = td->qkvBias || flag(config, "attention_bias", false);
        if (fam == Family::Qwen3 || fam == Family::Qwen3Moe)
            m.qk_norm = true; // Qwen3Attention always has q_norm and k_norm
        if (fam == Family::Glm4Moe)
            m.qk_norm = flag(config, "use_qk_norm", false);

        auto moeCommon = [&](const char *expertsKey) {
            m.moe.experts = int(count(config, {expertsKey}, 4096));
            m.moe.top_k = int(count(config, {"num_experts_per_tok"}, m.moe.experts));
            m.moe.expert_ffn_hidden = count(config, {"moe_intermediate_size"}, 1048576);
        };
        switch (fam) {
        case Family::Mixtral:
            m.moe.experts = int(count(config, {"num_local_experts"}, 4096));
            m.moe.top_k = int(count(config, {"num_experts_per_tok"}, m.moe.experts));
            m.moe.expert_ffn_hidden = m.ffn_hidden; // Mixtral's intermediate_size is one expert's
            break;
        case Family::Qwen2Moe:
        case Family::Qwen3Moe: {
            moeCommon("num_experts");
            if (fam == Family::Qwen2Moe) {
                // Qwen2MoeSparseMoeBlock: one shared expert of its own width with a sigmoid gate.
                const int64_t shared = countOrZero(config, "shared_expert_intermediate_size", 1048576, 0);
                if (shared > 0) {
                    m.moe.shared_experts = 1;
                    m.moe.shared_expert_ffn_hidden = shared;
                    m.moe.shared_expert_gate = true;
                }
            }
            // Layer i is sparse when (i + 1) % decoder_sparse_step == 0 and i is not in
            // mlp_only_layers: first_dense_layers = step - 1, layer_freq = step.
            const int64_t step = count(config, {"decoder_sparse_step"}, 1024, 1);
            m.moe.first_dense_layers = int(step - 1);
            m.moe.layer_freq = int(step);
            if (auto ml = config.find("mlp_only_layers"); ml != config.end() && !ml->is_null()) {
                if (!ml->is_array())
                    throw PlanError("config.mlp_only_layers", "must be a list of layer indices");
                if (!ml->empty())
                    throw PlanError("config.mlp_only_layers",
                                    "dense layers at chosen indices are not modelled (only leading "
                                    "dense layers and every k-th MoE layer), got " + ml->dump());
            }
            break;
        }
        case Family::DeepSeekV2:
        case Family::DeepSeekV3:
        case Family::Glm4Moe: {
            moeCommon("n_routed_experts");
            const int64_t shared = countOrZero(config, "n_shared_experts", 256, fam == Family::Glm4Moe ? 1 : 0);
            if (shared > 0) {
                // DeepseekV3MoE: the shared experts are one MLP of n_shared x moe_intermediate.
                m.moe.shared_experts = int(shared);
                m.moe.shared_expert_ffn_hidden = m.moe.expert_ffn_hidden;
            }
            m.moe.first_dense_layers = int(countOrZero(config, "first_k_dense_replace", 1023, 0));
            m.moe.layer_freq = int(count(config, {"moe_layer_freq"}, 1024, 1));
            if (m.moe.first_dense_layers >= m.layers)
                throw PlanError("config.first_k_dense_replace",
                                "must leave at least one MoE layer (num_hidden_layers " +
                                    std::to_string(m.layers) + ")");
            // DeepSeek-V3 computes the router's logits in fp32 (F.linear on float32 inputs).
            m.moe.router_fp32 = fam == Family::DeepSeekV3;
            if (fam != Family::DeepSeekV2)
                m.mtp_layers = int(countOrZero(config, "num_nextn_predict_layers", 16, 0));
            break;
        }
        case Family::Llama:
        case Family::Gpt:
        case Family::Qwen3:
            break;
        }
        if (m.moe.enabled() && m.moe.first_dense_layers > 0 && m.moe.first_dense_layers >= m.layers)
            throw PlanError("config.decoder_sparse_step", "leaves no MoE layer");
        return m;
    } catch (const PlanError &e) {
        if (prefix == "config.")
            throw;
        // Field names inside text_config: "config.x" -> "config.text_config.x".
        const std::string &f = e.field();
        throw PlanError(f.rfind("config.", 0) == 0 ? prefix + f.substr(7) : f, e.rule());
    }
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
