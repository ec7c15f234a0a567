#pragma once

#include "allocator.h"
#include "adapters.h"
#include "dtype.h"
#include "model.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace shardscope {

class Catalog;

enum class Sharding { None, Optimizer, Grads, Full }; ///< DDP, ZeRO-1, ZeRO-2, ZeRO-3/FSDP
enum class PpSchedule { OneFOneB, Interleaved, GPipe };
/// How context parallelism splits attention (MindSpeed's --context-parallel-algo): Megatron's
/// ring of K/V blocks, DeepSpeed-Ulysses' all-to-all over heads, or Ulysses inside groups of
/// `ulysses_degree` ranks and a ring across them.
enum class CpAlgo { Ring, Ulysses, Hybrid };
enum class Recompute { None, Selective, Full };
/// Megatron's --recompute-method under full recompute: `uniform` checkpoints groups of
/// recompute_num_layers layers (one input kept per group, a group recomputed at once);
/// `block` recomputes only the first recompute_num_layers layers of each model chunk.
enum class RecomputeMethod { Uniform, Block };
enum class Attention { Flash, Eager };
enum class Optimizer { AdamW, Adam, SGD, Lion, Adafactor, AdamW8bit, PagedAdamW, PagedAdamW8bit, Muon };
enum class OptimizerImpl { Default, Foreach, Fused, ForLoop };

/// Dropout probabilities (`training.dropout`); a negative value: the framework profile's.
struct Dropout
{
    double hidden = -1;    ///< after attention and after the FFN (Megatron's hidden_dropout)
    double attention = -1; ///< on the attention probabilities (attention_dropout)
    bool operator==(const Dropout &) const = default;
};

struct Training
{
    int64_t seq_len = 0;
    int micro_batch = 1;
    int grad_accum = 1; ///< micro-batches per step and DP rank (also PP's micro-batch count)
    /// How the model is trained (`training.method` and its options; core/adapters.h).
    MethodOptions method;
    Dropout dropout;
};

struct Precision
{
    DType params = DType::BF16;
    DType grads = DType::BF16;
    DType master_weights = DType::FP32; ///< DType::None: the optimizer updates `params` directly
    Optimizer optimizer = Optimizer::AdamW;
    DType optimizer_state = DType::FP32;
    DType compute = DType::BF16;
    OptimizerImpl optimizer_impl = OptimizerImpl::Default;
    bool momentum = true; ///< SGD's momentum buffer (`precision.momentum`, sgd only)
    /// Adafactor's first moment (`precision.first_moment`, adafactor only: transformers'
    /// Adafactor with beta1 set keeps a full exp_avg).
    bool first_moment = false;
    /// Dtype of the persistent main-gradient buffer of a framework that keeps one (Megatron's
    /// main_grad; `precision.main_grads`, as --main-grads-dtype of Megatron-Core's
    /// precision-aware optimizer and MindSpeed's O2 set it); DType::None: the profile's.
    DType main_grads = DType::None;
    /// MindSpeed's --reuse-fp32-param: the bf16 parameters live in the fp32 master copy's memory
    /// (FP32 = BF16 + residual), saving 2 B per parameter, / dp under the distributed optimizer.
    bool reuse_fp32_param = false;
    bool operator==(const Precision &) const = default;
};

struct Parallel
{
    int dp = 1, tp = 1, pp = 1, cp = 1, ep = 1;
    /// Expert tensor parallelism (`parallel.etp`, Megatron's expert_tensor_parallel_size);
    /// 0: tp's. Experts' data parallelism is then world / (ep x etp x pp).
    int etp = 0;
    /// HSDP / hierarchical ZeRO (`parallel.dp_shard`): the states are sharded over groups of
    /// dp_shard data-parallel ranks (x cp) and replicated across dp / dp_shard groups; 0: over
    /// all of dp.
    int dp_shard = 0;
    bool sp = false;
    Sharding sharding = Sharding::None;
    /// DeepSpeed ZeRO++ hpZ (`parallel.zero_hpz_partition_size`, core/hpz.h): ZeRO-3 keeps a
    /// secondary copy of the parameters sharded over groups of this many data-parallel ranks
    /// (a node's), so that later all-gathers stay in the group; 0 or 1: off.
    int zero_hpz_partition_size = 0;
    bool reshard_after_forward = true;
    PpSchedule pp_schedule = PpSchedule::OneFOneB;
    int virtual_stages = 1;
    /// The layer layout over the stages (core/layers.h, stageLayout). Uneven first / last
    /// stages (`parallel.first_stage_layers`, `parallel.last_stage_layers`, Megatron-Core's
    /// --decoder-first/last-pipeline-num-layers): that many decoder layers there, the rest even
    /// over the other stages; 0: unset.
    int first_stage_layers = 0, last_stage_layers = 0;
    /// The embedding / the loss counted as one layer in the split (`parallel.account_for_
    /// embedding`, `parallel.account_for_loss`, Megatron-Core's --account-for-embedding/loss-
    /// in-pipeline-split).
    bool account_for_embedding = false, account_for_loss = false;
    /// Decoder layers of each stage, listed (`parallel.stage_layers`, MindSpeed-LLM's
    /// --num-layer-list); empty: unset.
    std::vector<int> stage_layers;
    /// Megatron-Core's --pipeline-model-parallel-layout (`parallel.pipeline_layout`), e.g.
    /// "Ettt|(tt|)*29,m|L": the layers of every model chunk, `|` between chunks (virtual stage 0
    /// of every stage, then 1, ...), E embedding, t decoder layer, m MTP module, L loss; empty:
    /// unset.
    std::string pipeline_layout;
    /// Whether any of the layout fields is set (otherwise layers / (pp x virtual stages) each).
    bool customLayout() const
    {
        return first_stage_layers > 0 || last_stage_layers > 0 || account_for_embedding ||
               account_for_loss || !stage_layers.empty() || !pipeline_layout.empty();
    }
    CpAlgo cp_algo = CpAlgo::Ring;
    int ulysses_degree = 0; ///< hybrid: the Ulysses group inside cp (MindSpeed's --ulysses-degree-in-cp)
    /// Under Ulysses (and the hybrid), K and V repeated to the query heads before the
    /// all-to-all (`parallel.ulysses_kv_repeat`, MindSpeed-LLM's --kv-head-repeat-before-uly-
    /// alltoall); unset: the framework profile's.
    std::optional<bool> ulysses_kv_repeat;
    /// Ranks of the all-to-all over heads and of the K/V ring (their product is cp).
    int ulyssesDegree() const
    {
        return cp_algo == CpAlgo::Ulysses ? cp : cp_algo == CpAlgo::Hybrid ? ulysses_degree : 1;
    }
    int ringDegree() const { return cp / std::max(1, ulyssesDegree()); }
    int world() const { return dp * tp * pp * cp; }
    int expertTp() const { return etp > 0 ? etp : tp; }
    /// Model chunks per stage: the virtual stages when interleaved, else one.
    int chunksPerStage() const { return pp_schedule == PpSchedule::Interleaved ? std::max(1, virtual_stages) : 1; }
    /// Ranks the sharded states are split over (dp_shard x cp, or dp x cp), and the replicas.
    int shardGroup() const { return (dp_shard > 0 ? dp_shard : dp) * cp; }
    int replicas() const { return dp_shard > 0 ? dp / dp_shard : 1; }
    /// Ranks one expert's states are sharded over: world / (ep x etp x pp).
    double expertDp() const
    {
        return double(dp) * cp * tp / (double(ep) * expertTp()) / double(replicas());
    }
};

struct Offload
{
    bool optimizer = false, params = false, grads = false, activations = false;
};

/// How the loss is computed from the last hidden states (`memory.loss`).
enum class LossHead {
    Framework,   ///< the framework profile's (`loss`: hf_upcast or fused_fp32)
    HfUpcast,    ///< transformers ForCausalLMLoss: logits, an fp32 copy, fp32 log-softmax
    FusedFp32,   ///< Megatron's vocab-parallel cross entropy: softmax in place as the gradient
    FusedFp32Copy, ///< the same with the maximum subtracted out of place (Megatron-LM before 2024-06)
    Chunked,     ///< torchtune CEWithChunkedOutputLoss: the fp32 upcast done chunk by chunk
    FusedLinear, ///< Liger / Cut Cross-Entropy: head and loss fused, the logits never whole
};

/// What each layer's rotary position embedding keeps for its backward (`memory.rope`).
enum class RopeSaves
{
    Framework,  ///< the framework profile's (`rope`) on the plan's device
    Shared,     ///< nothing per layer: cos and sin made once per forward and shared by the layers
    PerLayer,   ///< each layer makes its own cos and sin for q and for k and keeps them
    KeepsInput, ///< the same, and the tensors it rotates (torch_npu.npu_rotary_mul)
};

struct MemoryOptions
{
    Recompute recompute = Recompute::None;
    RecomputeMethod recompute_method = RecomputeMethod::Uniform;
    int recompute_num_layers = 1;
    /// MindSpeed's --enable-recompute-layers-per-pp-rank (method block): recompute_num_layers
    /// counts the stage's layers over all its model chunks, layer l of chunk c ranking
    /// l x chunks + c, instead of the first layers of every chunk.
    bool recompute_layers_per_pp_rank = false;
    /// MindSpeed's --recompute-activation-function: the FFN activation's output is not kept but
    /// recomputed from its input in backward.
    bool recompute_activation_function = false;
    /// MindSpeed's --recompute-norm: the norms' outputs are recomputed from their inputs.
    bool recompute_norm = false;
    Attention attention = Attention::Flash;
    Offload offload;
    LossHead loss = LossHead::Framework;
    int loss_chunks = 8; ///< chunked: torchtune's num_output_chunks
    RopeSaves rope = RopeSaves::Framework;
    AllocatorConfig allocator; ///< PYTORCH_CUDA_ALLOC_CONF / PYTORCH_NPU_ALLOC_CONF
    /// Megatron's --overlap-grad-reduce / --overlap-param-gather (`memory.overlap_grad_reduce`,
    /// `memory.overlap_param_gather`); unset: the framework profile's.
    std::optional<bool> overlap_grad_reduce;
    std::optional<bool> overlap_param_gather;
    /// Megatron-Core's --bias-swiglu-fusion (`memory.fused_swiglu`) and the flash kernel's output
    /// copied between layouts (`memory.flash_output_copy`); unset: the framework profile's.
    std::optional<bool> fused_swiglu;
    std::optional<bool> flash_output_copy;
    /// MindSpeed's --param-and-grad-buffer-pad (`memory.param_and_grad_buffer_pad`, bytes; 512 on
    /// Ascend): the distributed optimizer's bucket ends padded so that every shard starts on
    /// that many bytes; 0: off.
    int param_and_grad_buffer_pad = 0;
    /// HCCL buffers per communication group (core/hcclbuffers.h; HCCL devices only):
    /// HCCL_BUFFSIZE in MB (`memory.hccl_buffer_mb`; 0: the device profile's), MindSpeed's
    /// --hccl-group-buffer as a map group -> MB (`memory.hccl_group_buffer`), its
    /// --hccl-group-buffer-adaptive (`memory.hccl_buffer_adaptive`) and
    /// --hccl-ep-group-buffer-adaptive-factor (`memory.hccl_ep_group_buffer_adaptive_factor`;
    /// 0: unset, the ep group then 200 MB).
    /// MindSpeed's --swap-attention (`memory.swap_attention`, core/swapattention.h): what the
    /// input norm, attention and post-attention norm save goes to the host between a layer's
    /// forward and its backward.
    bool swap_attention = false;
    int hccl_buffer_mb = 0;
    std::map<std::string, int> hccl_group_buffer;
    bool hccl_buffer_adaptive = false;
    double hccl_ep_group_buffer_adaptive_factor = 0;
    /// Whether any of the per-group HCCL options is set.
    bool hcclOptionsSet() const
    {
        return hccl_buffer_mb > 0 || !hccl_group_buffer.empty() || hccl_buffer_adaptive ||
               hccl_ep_group_buffer_adaptive_factor > 0;
    }
};

struct Cluster
{
    std::string device;
    int devices_per_node = 8;
    int nodes = 1;
    /// Host memory of one node, bytes (`cluster.host_memory_bytes`); 0: the device profile's.
    double host_memory_bytes = 0;
    int world() const { return devices_per_node * nodes; }
};

/// A training plan (plan-format.md, version 1). Built by parsePlan, which fills the model
/// from its preset and validates every field; a Plan in hand is one that can be evaluated.
struct Plan
{
    std::string name;
    ModelShape model;
    Training training;
    Precision precision;
    Parallel parallel;
    MemoryOptions memory;
    std::string framework = "pytorch";
    Cluster cluster;
    /// Fields this version does not know, kept so that saving does not drop them.
    nlohmann::json unknown = nlohmann::json::object();
    /// What the reader noticed but did not refuse: each unknown field, with the known field it
    /// most likely misspells. Not saved.
    std::vector<std::string> warnings;
};

inline constexpr int kPlanFormatVersion = 1;
/// Largest global batch a plan or a search may ask for, in sequences per optimizer step (the
/// search divides it into int micro-batch counts), and in tokens (Llama 3's pre-training used
/// 16M tokens per step).
inline constexpr int64_t kMaxSequencesPerStep = (int64_t(1) << 31) - 1;
inline constexpr double kMaxTokensPerStep = 1e12;
/// Largest training.grad_accum a plan may give (and a search may choose).
inline constexpr int kMaxGradAccum = 1000000;

/// Parses and validates a plan. Throws PlanError naming the field and the rule. `baseDir` is
/// the folder relative paths in the plan (`model.hf_config`) are resolved against; "" is the
/// working directory.
Plan parsePlan(const nlohmann::json &j, const Catalog &catalog, const std::string &baseDir = {});
/// Parses text (reports malformed JSON with line and column, duplicate keys, NUL bytes and
/// excessive nesting; see parseJsonText).
Plan parsePlanText(const std::string &text, const Catalog &catalog, const std::string &baseDir = {});
/// Reads and parses a plan file (at most kMaxInputFileBytes); relative paths inside it are
/// resolved against its folder.
Plan parsePlanFile(const std::string &path, const Catalog &catalog);
/// A model preset file (resources/models/<id>.json: "id" and the model fields of a plan), read
/// with the same ranges and rules as a plan's model. Throws PlanError naming the file and field.
ModelShape modelFromPresetJson(const nlohmann::json &j, const std::string &file);
/// Validates cross-field rules (divisibility, world size, ranges). Throws PlanError.
void validatePlan(const Plan &plan, const Catalog &catalog);
/// Serializes to plan-format JSON (model written out in full, preset kept).
nlohmann::json planToJson(const Plan &plan);

/// State tensors the optimizer keeps per parameter: Adam/AdamW and their 8-bit and paged forms
/// 2 (exp_avg, exp_avg_sq), SGD with momentum, Lion, Adafactor (factored) and Muon 1. The
/// structured optimizers' bytes are in core/optimizers.h.
int optimizerStateCount(Optimizer o);

std::string_view toString(Sharding s);
std::string_view toString(PpSchedule s);
std::string_view toString(CpAlgo a);
std::string_view toString(Recompute r);
std::string_view toString(RecomputeMethod m);
std::string_view toString(Attention a);
std::string_view toString(LossHead l);
std::string_view toString(RopeSaves r);
std::string_view toString(Optimizer o);
std::string_view toString(OptimizerImpl o);
std::string_view toString(FfnKind f);
std::string_view toString(NormKind n);
std::string_view toString(PositionEmbedding p);
std::string_view toString(MoeShape::Dispatcher d);
/// "mha", "gqa" or "mla": the attention kind a shape has.
std::string_view attentionName(const ModelShape &m);

} // namespace shardscope
