#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>

namespace shardscope {

enum class FfnKind { SwiGLU, GELU };

/// Mixture-of-experts block replacing the dense FFN in every layer (Mixtral style).
struct MoeShape
{
    int experts = 0;              ///< routed experts per layer (0: dense model)
    int top_k = 0;                ///< experts each token is sent to
    int64_t expert_ffn_hidden = 0; ///< FFN width of one expert
    bool enabled() const { return experts > 0; }
};

/// A decoder-only transformer's shape. Every count is exact; parameter counts follow from it.
struct ModelShape
{
    std::string preset;     ///< preset id it came from ("" when explicit)
    std::string display_name;
    /// The Hugging Face config.json the shape was read from (`model.hf_config`, as the plan
    /// wrote it); "" otherwise.
    std::string hf_config;
    int layers = 0;
    int64_t hidden = 0;
    int heads = 0;
    int kv_heads = 0;       ///< == heads for MHA; fewer for GQA/MQA
    int64_t head_dim = 0;   ///< usually hidden / heads
    int64_t ffn_hidden = 0; ///< dense FFN width (SwiGLU: width of gate and of up)
    FfnKind ffn = FfnKind::SwiGLU;
    int64_t vocab = 0;
    bool tied_embeddings = false;
    bool attention_bias = false; ///< q/k/v biases (Qwen2)
    MoeShape moe;

    int64_t qDim() const { return int64_t(heads) * head_dim; }
    int64_t kvDim() const { return int64_t(kv_heads) * head_dim; }
};

/// Parameter counts of a shape, split the way sharding and pipelining split them.
struct ParameterCounts
{
    int64_t embedding = 0;      ///< vocab x hidden
    int64_t lm_head = 0;        ///< vocab x hidden, 0 when tied
    int64_t final_norm = 0;     ///< hidden
    int64_t attention_per_layer = 0; ///< q, k, v, o (+ biases)
    int64_t norms_per_layer = 0;     ///< two RMSNorm weights
    int64_t dense_ffn_per_layer = 0; ///< dense FFN (0 for MoE)
    int64_t router_per_layer = 0;    ///< MoE gate
    int64_t expert_per_layer = 0;    ///< one expert's FFN
    int64_t per_layer = 0;           ///< everything in one layer, all experts included
    int64_t total = 0;
    /// Largest single parameter tensor (what a for-loop optimizer works on at once).
    int64_t largest_tensor = 0;
};

ParameterCounts countParameters(const ModelShape &m);

/// A Llama-family shape for a parameter count (0.5B to 1T): hidden = 128 * heads with
/// layers ~ hidden / 128 (Llama 2 proportions), SwiGLU FFN sized so that the count lands near
/// the target, GQA with 8 KV heads from 30B up, vocabulary 32000.
ModelShape shapeForParameterCount(double parameters);

/// Reads a Hugging Face config.json (core/hfconfig.cpp). Supported `model_type`s are the ones
/// whose shape the engine represents: llama, mistral, mixtral, qwen2, gpt2, gpt_neox. Throws
/// PlanError naming the field ("config.num_hidden_layers") for a missing, wrongly typed, zero
/// or oversized value and for an unsupported model_type; nothing is truncated or defaulted
/// silently.
ModelShape shapeFromHuggingFaceConfig(const nlohmann::json &config);
/// Reads a config.json file (size-capped, duplicate keys and NUL bytes refused) into a shape
/// whose hf_config is the file's absolute path. Errors name the file, then the field.
ModelShape shapeFromHuggingFaceConfigFile(const std::string &path);

} // namespace shardscope
