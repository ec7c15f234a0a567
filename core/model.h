#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace shardscope {

enum class FfnKind { SwiGLU, GELU, SquaredReLU }; ///< gated SiLU; non-gated GELU / ReLU^2
enum class AttentionKind { Standard, MLA }; ///< MHA / GQA (by kv_heads); multi-head latent
enum class NormKind { RMSNorm, LayerNorm };
enum class PositionEmbedding { Rope, Learned };

/// Multi-head latent attention (DeepSeek-V2/V3, Kimi-K2): queries through a low-rank
/// projection (q_a_proj, its RMSNorm, q_b_proj; q_proj when q_lora_rank is 0), keys and values
/// from one compressed latent (kv_a_proj_with_mqa gives kv_lora_rank + qk_rope_head_dim, the
/// latent is normed, kv_b_proj expands it per head to qk_nope_head_dim + v_head_dim); the rope
/// part of the key is shared by all heads.
struct MlaShape
{
    int64_t q_lora_rank = 0; ///< 0: queries projected directly (DeepSeek-V2-Lite)
    int64_t kv_lora_rank = 0;
    int64_t qk_nope_head_dim = 0;
    int64_t qk_rope_head_dim = 0;
    int64_t v_head_dim = 0;
    int64_t qkHeadDim() const { return qk_nope_head_dim + qk_rope_head_dim; }
    bool operator==(const MlaShape &) const = default;
};

/// Mixture-of-experts blocks replacing the dense FFN (Mixtral, DeepSeek, Qwen-MoE, GLM-MoE).
struct MoeShape
{
    int experts = 0;              ///< routed experts per MoE layer (0: dense model)
    int top_k = 0;                ///< experts each token is sent to
    int64_t expert_ffn_hidden = 0; ///< FFN width of one routed expert
    int shared_experts = 0;        ///< experts every token passes through (DeepSeek, Qwen2-MoE)
    int64_t shared_expert_ffn_hidden = 0; ///< width of one shared expert
    bool shared_expert_gate = false; ///< Qwen2-MoE's sigmoid gate on the shared expert (hidden x 1)
    int first_dense_layers = 0;   ///< leading layers with the dense FFN (DeepSeek first_k_dense_replace)
    int layer_freq = 1;           ///< after those, every k-th layer is MoE, starting with the first
    /// Tokens per expert capped at capacity_factor x the balanced share (dropped beyond it);
    /// 0: dropless.
    double capacity_factor = 0;
    /// Dropless routing: the busiest rank's token copies over the balanced share (>= 1).
    double imbalance = 1.0;
    bool router_fp32 = false;     ///< router logits and probabilities computed in fp32 (DeepSeek-V3)
    enum class Dispatcher { AllToAll, AllGather } dispatcher = Dispatcher::AllToAll;
    bool enabled() const { return experts > 0; }
    bool operator==(const MoeShape &) const = default;
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
    int kv_heads = 0;       ///< == heads for MHA; fewer for GQA/MQA (MLA: == heads)
    int64_t head_dim = 0;   ///< usually hidden / heads (MLA: qk_nope + qk_rope)
    int64_t ffn_hidden = 0; ///< dense FFN width (SwiGLU: width of gate and of up)
    FfnKind ffn = FfnKind::SwiGLU;
    int64_t vocab = 0;
    /// `model.vocab_divisible_by`: the vocabulary is padded to a multiple of this x tp
    /// (Megatron's --make-vocab-size-divisible-by); 0: the framework profile's; 1: not padded.
    int vocab_divisible_by = 0;
    bool tied_embeddings = false;
    bool attention_bias = false; ///< q/k/v biases (Qwen2, GLM)
    AttentionKind attention = AttentionKind::Standard;
    MlaShape mla;
    bool qk_norm = false;        ///< per-head RMSNorm on queries and keys (Qwen3)
    NormKind norm = NormKind::RMSNorm;
    bool linear_bias = false;    ///< a bias on every linear layer (GPT-2, Megatron's GPT)
    PositionEmbedding position_embedding = PositionEmbedding::Rope;
    int64_t max_positions = 0;   ///< learned position table rows
    int mtp_layers = 0;          ///< multi-token prediction modules (DeepSeek-V3)
    MoeShape moe;

    bool operator==(const ModelShape &) const = default;
    bool mla_attention() const { return attention == AttentionKind::MLA; }
    /// Query width (all heads) and the width of keys (all KV heads) entering attention.
    int64_t qDim() const { return int64_t(heads) * head_dim; }
    int64_t kvDim() const { return int64_t(kv_heads) * head_dim; }
    /// Width of the values (all KV heads) and of the attention output.
    int64_t vDim() const { return int64_t(kv_heads) * (mla_attention() ? mla.v_head_dim : head_dim); }
    int64_t outDim() const { return int64_t(heads) * (mla_attention() ? mla.v_head_dim : head_dim); }
    /// Decoder layer `layer` (0-based) has an MoE block.
    bool moeLayer(int layer) const
    {
        return moe.enabled() && layer >= moe.first_dense_layers &&
               (layer - moe.first_dense_layers) % moe.layer_freq == 0;
    }
    int moeLayers() const
    {
        // Layers first_dense_layers, + layer_freq, ... below `layers`: those moeLayer counts
        // (parsePlan keeps first_dense_layers >= 0 and layer_freq >= 1).
        if (!moe.enabled() || layers <= moe.first_dense_layers)
            return 0;
        return (layers - moe.first_dense_layers + moe.layer_freq - 1) / moe.layer_freq;
    }
};

/// Parameter counts of a shape, split the way sharding and pipelining split them. Layers come
/// in two kinds, dense (the dense FFN) and MoE; the per-layer fields describe one layer.
struct ParameterCounts
{
    int64_t embedding = 0;      ///< vocab x hidden
    int64_t position = 0;       ///< learned position table, max_positions x hidden (first stage)
    int64_t lm_head = 0;        ///< vocab x hidden, 0 when tied
    int64_t final_norm = 0;     ///< hidden (LayerNorm: and its bias)
    int64_t attention_per_layer = 0; ///< projections, their biases, MLA's latent norms, QK norms
    int64_t norms_per_layer = 0;     ///< the two pre-norms
    int64_t dense_ffn_per_layer = 0; ///< dense FFN of a dense layer (0 when every layer is MoE)
    int64_t router_per_layer = 0;    ///< MoE gate
    int64_t expert_per_layer = 0;    ///< one routed expert's FFN
    int64_t shared_per_layer = 0;    ///< the shared experts of an MoE layer (and their gate)
    int64_t dense_layer = 0;         ///< one dense layer
    int64_t moe_layer = 0;           ///< one MoE layer, all experts included
    int dense_layers = 0, moe_layers = 0;
    /// One multi-token-prediction module: two norms, the 2h -> h projection, a layer of the
    /// last layer's kind and its final norm (embedding and head are the main model's).
    int64_t mtp_module = 0;
    int64_t per_layer = 0;           ///< the MoE layer when there is one, else the dense layer
    int64_t total = 0;               ///< everything, MTP modules included
    /// Largest single parameter tensor (what a for-loop optimizer works on at once).
    int64_t largest_tensor = 0;
};

ParameterCounts countParameters(const ModelShape &m);

/// A Llama-family shape for a parameter count (0.5B to 1T) on the grid real families use:
/// head_dim 128, heads a multiple of 8 and of `tp` (so tp ranks hold whole heads), hidden =
/// 128 * heads, layers ~ hidden / 128 (Llama 2 proportions), a SwiGLU FFN between 2.5 and 4 x
/// hidden (a multiple of 256) sized so that the count lands near the target (where it cannot,
/// the layer count moves, in multiples of 4), GQA with 8 KV heads (at least tp) from 30B up,
/// vocabulary 32000. Throws PlanError for a count out of range or tp outside 1..512.
ModelShape shapeForParameterCount(double parameters, int tp = 1);

/// The distinct shapes shapeForParameterCount(p, tp) gives for `steps` + 1 counts p spaced
/// evenly on a log scale from 0.5B to 1T, smallest first (the model-size slider's positions).
std::vector<ModelShape> derivedShapes(int tp, int steps = 240);

/// Reads a Hugging Face config.json (core/hfconfig.cpp). Supported `model_type`s are the ones
/// whose shape the engine represents: llama, mistral, mixtral, qwen2, qwen2_moe, qwen3,
/// qwen3_moe, deepseek_v2, deepseek_v3, kimi_k2, glm4_moe, gpt2, gpt_neox; a VLM's nested
/// `text_config` is read in its place. Throws
/// PlanError naming the field ("config.num_hidden_layers") for a missing, wrongly typed, zero
/// or oversized value and for an unsupported model_type; nothing is truncated or defaulted
/// silently.
ModelShape shapeFromHuggingFaceConfig(const nlohmann::json &config);
/// Reads a config.json file (size-capped, duplicate keys and NUL bytes refused) into a shape
/// whose hf_config is the file's absolute path. Errors name the file, then the field.
ModelShape shapeFromHuggingFaceConfigFile(const std::string &path);

} // namespace shardscope
