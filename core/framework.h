#pragma once

#include "dtype.h"
#include "plan.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace shardscope {

struct DeviceProfile;

/// How a training framework lays memory out (resources/frameworks/<id>.json). The memory
/// engine reads these switches; it has no per-framework code paths. Each switch names the
/// framework behaviour it follows.
struct FrameworkProfile
{
    std::string id;
    std::string name;
    std::string description;

    // --- model states -------------------------------------------------------------------
    /// Gradients are freed by zero_grad(set_to_none=True) after the optimizer step and
    /// re-created in backward (PyTorch >= 2.0 default). false: a persistent gradient buffer.
    bool grads_set_to_none = true;
    /// Dtype of a persistent main-gradient buffer that replaces `precision.grads` (Megatron's
    /// fp32 `main_grad`); DType::None when gradients use `precision.grads`.
    DType main_grad_dtype = DType::None;
    /// PyTorch DDP's Reducer keeps flat bucket buffers beside each `.grad`
    /// (gradient_as_bucket_view=False, the default), doubling gradient memory.
    bool ddp_bucket_copy = true;
    double ddp_bucket_bytes = 25.0 * 1024 * 1024;
    OptimizerImpl default_optimizer_impl = OptimizerImpl::Foreach;
    /// ZeRO-1/2 as in DeepSpeed / Megatron's distributed optimizer: fp32 gradients are
    /// reduce-scattered through buckets of this size (bytes).
    double reduce_bucket_bytes = 0;
    /// Megatron-Core's DistributedDataParallel: parameters and gradients live in contiguous
    /// per-dtype buffers (param_and_grad_buffer.py); under the distributed optimizer each bucket
    /// is padded to a multiple of lcm(dp, 128) and the optimizer owns 1/dp of it
    /// (core/distoptimizer.h).
    bool contiguous_buffers = false;
    /// --ddp-bucket-size in elements; 0: max(40M, 1M x dp).
    double ddp_bucket_elements = 0;
    /// --ddp-pad-buckets-for-high-nccl-busbw: bucket ends padded to lcm(dp, 128, 2^16).
    bool pad_buckets_for_high_nccl_busbw = false;
    /// Gradient reduction overlapped with backward, bucket by bucket, unless the plan says
    /// (`memory.overlap_grad_reduce`): PyTorch DDP always; Megatron only with --overlap-grad-reduce.
    bool overlap_grad_reduce = true;
    /// The updated parameters' all-gather overlapped with the next forward, unless the plan says
    /// (`memory.overlap_param_gather`; Megatron's --overlap-param-gather).
    bool overlap_param_gather = false;
    /// The vocabulary padded to a multiple of this x tp unless the plan says
    /// (`model.vocab_divisible_by`; Megatron's --make-vocab-size-divisible-by, default 128);
    /// 1: not padded.
    int vocab_divisible_by = 1;
    /// The process groups are Megatron-Core's (parallel_state.initialize_model_parallel): besides
    /// the groups a layout's collectives need, every rank's world group (the start-up
    /// reductions), the data-parallel group apart from the one with context parallelism (the
    /// gradients use dp_cp even at cp 1, the last stage's logged loss dp), the model-parallel
    /// group's per-step reductions and, with experts, the tp_cp and tp_ep_mp groups. false:
    /// PyTorch's, the default group serving the data-parallel collectives.
    bool megatron_process_groups = false;

    /// Dtype of LoRA / DoRA adapters unless the plan gives one: PEFT keeps them in fp32 beside
    /// a bf16 / fp16 base (autocast_adapter_dtype); MindSpeed-LLM in the compute dtype
    /// (DType::None here).
    DType adapter_dtype = DType::FP32;

    // --- GEMM library workspaces (core/workspace.h) -------------------------------------------
    /// PyTorch's cuBLAS workspaces the run keeps: one per handle and stream that runs GEMMs,
    /// and handles are per thread: the forward's (the Python thread) and the backward's
    /// (autograd's device thread), 2 for a single compute stream.
    int gemm_workspaces = 0;
    /// Megatron-Core's Transformer Engine layers, where the device runs Transformer Engine
    /// (NVIDIA): their own GEMM workspace, and sequence parallelism's all-gathers made per GEMM.
    /// Elsewhere (MindSpeed-LLM on Ascend) the model runs Megatron's local layers.
    bool transformer_engine = false;
    /// Where sequence parallelism all-gathers a column-parallel linear's input: "global"
    /// (Megatron's local tensor-parallel linears: into get_global_memory_buffer()'s "mpu" tensor,
    /// kept for the run and reused in backward) or "per_gemm" (a fresh tensor for each GEMM,
    /// forward and backward). Transformer Engine's layers gather per GEMM whatever this says.
    std::string sp_gather_buffer = "per_gemm";

    // --- the optimizer step (core/gradclip.h) -----------------------------------------------
    /// Off NVIDIA devices (no apex, no Transformer Engine) Megatron's multi_tensor_scale is a
    /// Python loop, dst.copy_(src * scale): the gradient clip, and the main-to-model parameter
    /// copy without the distributed optimizer, make a scaled copy of each tensor in turn.
    bool multi_tensor_scale_copies = false;

    // --- pipeline parallelism ---------------------------------------------------------------
    /// Megatron's schedules hand each model chunk its received input through
    /// set_input_tensor(), which the chunk's transformer block keeps as an attribute, and the
    /// backward fills that tensor's .grad (retain_grad) to send it back: after the step every
    /// chunk that receives its input keeps the last micro-batch's input and gradient, until its
    /// next forward. Receive buffers are otherwise fresh tensors. false: persistent send and
    /// receive buffers at each stage boundary (DeepSpeed's pipeline engine, PyTorch's stages).
    bool pipeline_input_kept = false;

    // --- FSDP / ZeRO-3 ----------------------------------------------------------------------
    /// FSDP2 does not reshard the root module (embedding, final norm, untied head) after
    /// forward: its parameters stay gathered until backward ends.
    bool fsdp_root_stays_gathered = true;
    /// Layers whose parameters are gathered ahead of use (FSDP2 implicit prefetch: 1).
    int fsdp_prefetch_layers = 1;

    // --- activations -----------------------------------------------------------------------
    /// RMSNorm implementation: "upcast" (Hugging Face: fp32 copy of the input and the
    /// normalized tensor are saved) or "fused" (Apex / TE: input and 1/rms saved).
    std::string norm = "upcast";
    /// Under autocast every linear saves its own compute-dtype cast of its input.
    bool autocast_input_casts = true;
    /// Under autocast the compute-dtype copies of the weights are cached for forward and
    /// held by autograd until each layer's backward.
    bool autocast_weight_cache = true;
    /// SwiGLU as one fused kernel (saves only the fc1 output) unless the plan says
    /// (`memory.fused_swiglu`): Megatron-Core's --bias-swiglu-fusion (on by default); off for
    /// Hugging Face and for Megatron-LM's legacy model (chunk, silu, multiply).
    bool fused_swiglu = false;
    /// Flash attention run in the (b, s) layout inside an (s, b) model unless the plan says
    /// (`memory.flash_output_copy`): the kernel's output is saved for its backward and copied
    /// back to (s, b) for the output projection, which saves the copy (Megatron-LM's legacy
    /// `--use-flash-attn`: rearrange(...).contiguous() around flash_attn_unpadded_func).
    bool flash_output_copy = false;
    /// Under Ulysses context parallelism with grouped-query attention, K and V repeated to the
    /// query heads of the TP rank before the all-to-all unless the plan says
    /// (`parallel.ulysses_kv_repeat`): MindSpeed-LLM's --kv-head-repeat-before-uly-alltoall, on
    /// whenever cp > 1 (store_true with default True).
    bool ulysses_kv_repeat = false;
    /// Unfused ("eager") attention's softmax: Megatron's FusedScaleMaskSoftmax keeps its output
    /// in the compute dtype (also the PV input); Hugging Face's eager path an fp32 softmax and
    /// its cast.
    bool fused_softmax = false;
    /// Dropout unless the plan gives `training.dropout`: Megatron's arguments default both to
    /// 0.1; Hugging Face Llama-family configs to 0.
    double hidden_dropout = 0;
    double attention_dropout = 0;

    // --- logits and loss ------------------------------------------------------------------
    /// "hf_upcast": logits in the compute dtype, an fp32 copy for the loss, fp32 log-softmax
    /// saved; backward holds three fp32 vocab-sized tensors at once (transformers'
    /// ForCausalLMLoss). "fused_fp32": Megatron's vocab-parallel cross entropy (fp32 logits,
    /// softmax written in place and reused as the gradient). "fused_fp32_copy": the same before
    /// Megatron-LM 9634c0e (2024-06), which subtracted the maximum out of place: the
    /// compute-dtype logits, their fp32 copy and the shifted fp32 tensor at once.
    std::string loss = "hf_upcast";

    // --- rotary position embedding ----------------------------------------------------------
    /// What each layer's RoPE keeps for its backward unless the plan says (`memory.rope`):
    /// "shared" (cos and sin made once per forward and shared by every layer: transformers,
    /// Transformer Engine's fused RoPE), "per_layer" (each layer makes its own cos and sin for q
    /// and for k and keeps them: Megatron-Core's unfused apply_rotary_pos_emb_bshd, MindSpeed's
    /// npu_rotary_position_embedding), "keeps_input" (the same and the tensors it rotates:
    /// torch_npu.npu_rotary_mul) or "fused" (the device's fused kernel: Transformer Engine's
    /// on NVIDIA, shared; MindSpeed's on Ascend, per layer).
    std::string rope = "shared";

    nlohmann::json raw;
};

FrameworkProfile frameworkFromJson(const nlohmann::json &j); ///< throws PlanError

/// The main-gradient buffer's dtype: `precision.main_grads`, else the profile's
/// (DType::None: no such buffer, gradients in precision.grads).
DType mainGradDtype(const Plan &plan, const FrameworkProfile &fw);

/// The vocabulary the framework trains: `model.vocab` padded to a multiple of
/// `model.vocab_divisible_by` (else the profile's) x tp, as Megatron's vocab_size_with_padding
/// (megatron/core/tokenizers/utils/build_tokenizer.py); a divisor of 1 leaves it as it is.
int64_t paddedVocab(const Plan &plan, const FrameworkProfile &fw);
/// The divisor in use: `model.vocab_divisible_by`, else the profile's.
int vocabDivisor(const Plan &plan, const FrameworkProfile &fw);

/// Whether the model runs Transformer Engine's layers: the profile's `transformer_engine` on a
/// device that runs Transformer Engine (NVIDIA).
bool runsTransformerEngine(const FrameworkProfile &fw, const DeviceProfile &dev);
/// Whether sequence parallelism's all-gathered linear input lives in Megatron's global memory
/// buffer for the whole run (parallel.sp with tp > 1, the profile's `sp_gather_buffer` "global",
/// no Transformer Engine), rather than in a fresh tensor for each GEMM.
bool spGatherKept(const Plan &plan, const FrameworkProfile &fw, const DeviceProfile &dev);
/// `plan` with model.vocab padded (and model.vocab_divisible_by 1, so that padding again leaves
/// it): what the memory, compute and communication models evaluate.
Plan paddedVocabPlan(const Plan &plan, const FrameworkProfile &fw);
/// The same with the profile's divisor given (the compute model's ComputeProfile carries it).
Plan paddedVocabPlan(const Plan &plan, int profileDivisor);
/// The same assigned to `out`, whose strings and vectors are reused (a hot path's kept plan).
void assignPaddedVocabPlan(const Plan &plan, int profileDivisor, Plan &out);
/// Whether padding changes `plan`'s vocabulary (with the profile's divisor given).
bool vocabNeedsPadding(const Plan &plan, int profileDivisor);

/// `plan` with its vocabulary padded, copied only when padding changes it: get() is the plan
/// given when its vocabulary is already a multiple (a search pads its working plan once per tp;
/// padding again leaves a padded vocabulary as it is), else the padded copy this object holds.
/// The plan given must outlive it.
class PaddedVocabPlan
{
public:
    PaddedVocabPlan(const Plan &plan, int profileDivisor);
    PaddedVocabPlan(const PaddedVocabPlan &) = delete;
    PaddedVocabPlan &operator=(const PaddedVocabPlan &) = delete;
    const Plan &get() const { return copy_ ? *copy_ : given_; }

private:
    const Plan &given_;
    std::optional<Plan> copy_;
};

/// `memory.overlap_grad_reduce` / `memory.overlap_param_gather`, else the profile's.
bool overlapGradReduceOf(const Plan &plan, const FrameworkProfile &fw);
bool overlapParamGatherOf(const Plan &plan, const FrameworkProfile &fw);

/// The dropout probabilities the plan trains with: `training.dropout`, else the profile's.
Dropout dropoutOf(const Plan &plan, const FrameworkProfile &fw);

/// The loss head the plan runs: `memory.loss`, else the profile's `loss`.
LossHead lossHeadOf(const Plan &plan, const FrameworkProfile &fw);
/// `memory.rope`, else the profile's `rope` on a device of `vendor` (never Framework).
RopeSaves ropeSavesOf(const Plan &plan, const FrameworkProfile &fw, const std::string &vendor);

/// `memory.fused_swiglu` / `memory.flash_output_copy`, else the profile's.
bool fusedSwigluOf(const Plan &plan, const FrameworkProfile &fw);
bool flashOutputCopyOf(const Plan &plan, const FrameworkProfile &fw);

/// `parallel.ulysses_kv_repeat`, else the profile's: the setting, whatever the layout.
bool ulyssesKvRepeatOf(const Plan &plan, const FrameworkProfile &fw);
/// Whether repeating K and V to the query heads widens them: more query heads than KV heads,
/// and not MLA, whose keys already span every head.
bool kvRepeatWidens(const ModelShape &m);
/// Whether the plan's attention gets K and V at the query heads' width because of that repeat:
/// the setting, Ulysses over 2 or more ranks, and kvRepeatWidens.
bool ulyssesRepeatsKv(const Plan &plan, const FrameworkProfile &fw);

/// Tokens per chunk of a fused linear cross entropy (Liger's
/// LigerFusedLinearCrossEntropyFunction: next_power_of_2(ceil(tokens / ceil(vocab / hidden)))).
double fusedLinearChunkTokens(double tokens, double vocab, double hidden);

} // namespace shardscope
