#pragma once

#include "estimate.h"
#include "plan.h"

#include <memory>

namespace shardscope {

struct DeviceProfile;
struct FrameworkProfile;

/// Device and framework figures the compute model needs, read once from the profiles
/// (resources/devices/<id>.json, resources/frameworks/<id>.json). Fields absent from a profile
/// take the defaults below; each profile's `sources` says where its figures come from.
struct ComputeProfile
{
    /// The framework's vocabulary padding divisor (FrameworkProfile::vocab_divisible_by): the
    /// head's GEMMs and the loss run over the padded vocabulary.
    int vocab_divisible_by = 1;
    // --- device ---------------------------------------------------------------------------
    double peak_flops = 0;        ///< FLOP/s in the plan's compute dtype (dense)
    double gemm_efficiency = 0.7; ///< achieved / peak for large GEMMs
    /// Fixed time per GEMM call (s): launch, tile-wave quantization and tail. A GEMM of W FLOPs
    /// takes gemm_overhead_s + W / (peak x gemm_efficiency), so small GEMMs run well below the
    /// large-GEMM rate.
    double gemm_overhead_s = 8e-6;
    /// Matrix-unit efficiency inside fused (flash) attention: its 4d FLOPs per score forward and
    /// 10d backward (d = head_dim) run at peak x attention_efficiency. Device field
    /// `attention_matmul_efficiency` (with `attention_score_s`); else the overall
    /// `attention_efficiency`.
    double attention_efficiency = 0.6;
    /// Work per query-key score that does not run on the matrix units (exp, rescaling, masking;
    /// FlashAttention-3, Shah et al. 2024, sec. 3): seconds per score, forward and backward.
    /// This is why attention with head_dim 64 reaches a lower FLOP rate than with 128.
    double attention_score_s_forward = 0;
    double attention_score_s_backward = 0;
    double hbm_bandwidth = 0; ///< bytes/s
    /// Achieved / peak HBM bandwidth of the framework's elementwise and reduction kernels
    /// (device field `elementwise_efficiency`; else `memory_efficiency`, a copy's).
    double memory_efficiency = 0.8;
    double kernel_overhead_s = 3e-6; ///< device time floor per elementwise kernel (s)
    double host_bandwidth = 25e9;    ///< bytes/s device <-> host (offload)
    /// Bytes/s one rank's share of the host moves through an offloaded optimizer step (CPU Adam
    /// over host DRAM: ~100 GB/s per host shared by 8 ranks, assumed; device field
    /// `host_optimizer_bandwidth`).
    double host_optimizer_bandwidth = 10e9;

    // --- framework ------------------------------------------------------------------------
    /// Host time to issue one forward kernel (Python, dispatcher, autograd recording) and one
    /// backward kernel (autograd engine). A layer's forward takes at least kernels x
    /// host_s_per_kernel_forward: small layers are host (launch) bound in eager frameworks.
    double host_s_per_kernel_forward = 0;
    double host_s_per_kernel_backward = 0;
    /// Host time of a checkpointed layer's recompute relative to its first forward
    /// (non-reentrant checkpoint: saved-tensor hooks, RNG state, re-entering autocast).
    double recompute_host_factor = 1.0;
    bool hf_kernels = true;  ///< unfused Hugging Face kernels (RoPE, upcast RMSNorm, SwiGLU)
    bool fused_norm = false; ///< fused RMSNorm (one kernel)
    bool fused_swiglu = false;
    bool fused_qkv = false; ///< q, k, v and gate, up as one GEMM each (Megatron)
    bool hf_loss = true;    ///< fp32-upcast Hugging Face loss (else fused vocab-parallel loss)
    bool loss_copy = false; ///< the vocab-parallel loss shifting out of place (fused_fp32_copy)
    bool autocast_casts = true;
    OptimizerImpl default_optimizer_impl = OptimizerImpl::Foreach;
    bool operator==(const ComputeProfile &) const = default;
};

/// Reads the compute figures from the profiles. Device fields: `gemm_efficiency`,
/// `gemm_overhead_s`, `attention_matmul_efficiency` + `attention_score_s` {forward, backward}
/// (else `attention_efficiency`), `hbm_bandwidth`, `elementwise_efficiency` (else
/// `memory_efficiency`), `kernel_overhead_s`, `host_bandwidth`. Framework
/// fields: `host_s_per_kernel` {forward, backward}, `recompute_host_factor`.
ComputeProfile computeProfile(const DeviceProfile &dev, const FrameworkProfile &fw, DType compute);

/// Compute time and FLOPs of one training step on one rank of the slowest pipeline stage.
/// Every time is device time of a roofline per kernel class: GEMMs at peak x efficiency plus a
/// fixed overhead per call; attention per score; elementwise, norm, loss and optimizer kernels
/// as HBM traffic at hbm_bandwidth x memory_efficiency plus a floor per kernel; a layer's
/// phase is never faster than the host can issue its kernels.
struct ComputeEstimate
{
    // per layer, per micro-batch (one rank)
    double layer_forward_s = 0;            ///< max(device, host) forward of one decoder layer
    double layer_backward_s = 0;           ///< backward of one layer (without recompute)
    double layer_recompute_s = 0;          ///< the extra forward work recompute adds in backward
    double layer_gemm_forward_s = 0;       ///< GEMM part of layer_forward_s (device)
    double layer_attention_forward_s = 0;  ///< attention core forward (device)
    double layer_attention_backward_s = 0; ///< attention core backward (device)
    double layer_elementwise_forward_s = 0;
    // per micro-batch, whole stage
    double embedding_s = 0;  ///< first stage: lookup forward + backward
    double head_s = 0;       ///< last stage: final norm, LM head GEMMs, loss forward + backward
    double microbatch_s = 0; ///< forward + backward (+ recompute) of one micro-batch, slowest stage
    double backward_microbatch_s = 0; ///< backward part of microbatch_s (overlap window for DDP)
    // per step
    double casts_s = 0;     ///< autocast weight casts and fp32 gradient casts per step
    double optimizer_s = 0; ///< optimizer step, memory-bound (on the host when offloaded)
    double compute_s = 0;   ///< micro-batches x microbatch_s + casts + optimizer
    /// FLOPs per step on this rank: model FLOPs (matmuls 6 x params x tokens, attention with the
    /// causal half, LM head; no recompute) and hardware FLOPs (with recompute's extra forward).
    double model_flops = 0;
    double hardware_flops = 0;
    int layers = 0;                ///< decoder layers on the slowest stage
    double params_on_rank = 0;     ///< parameter elements of the heaviest stage per tp rank
    double optimizer_elements = 0; ///< elements the optimizer updates on this rank (sharded)
    double sharded_params = 0;     ///< parameter elements stored on this rank (FSDP: sharded)
    double sharded_grads = 0;      ///< gradient elements kept on this rank
};

/// The compute of one rank of the plan. Each thread keeps the per-micro-batch part of the last
/// few layouts of one model (what the layers, the embedding and the head take): plans that differ
/// only in dp, sharding, offload or grad_accum reuse it (the search meets such plans in turn).
ComputeEstimate estimateCompute(const Plan &plan, const ComputeProfile &cp);
/// The same estimate computed from scratch, with nothing kept or reused (tst_step checks that
/// both agree).
ComputeEstimate estimateComputeAfresh(const Plan &plan, const ComputeProfile &cp);

/// The per-micro-batch parts of one caller's plans that share their model (its vocabulary
/// apart), precision, attention, loss head and compute profile: the search's working plans, one
/// base plan with layouts applied. estimateCompute with it compares those shared fields only
/// when it computes a part afresh (a model's are many, and the search asks millions of times);
/// plans that break the premise must not share a cache.
class ComputeCache
{
public:
    ComputeCache();
    ~ComputeCache();
    ComputeCache(ComputeCache &&) noexcept;
    ComputeCache &operator=(ComputeCache &&) noexcept;

private:
    friend ComputeEstimate estimateCompute(const Plan &plan, const ComputeProfile &cp, ComputeCache &cache);
    struct Impl;
    std::unique_ptr<Impl> impl_;
};
/// estimateCompute through `cache` (the same figures).
ComputeEstimate estimateCompute(const Plan &plan, const ComputeProfile &cp, ComputeCache &cache);

/// Bytes moved between device and host per step by the offload switches: optimizer (gradients
/// down, updated parameters up, once per step), parameters (the shard up before each forward
/// and backward gather), gradients (down after each micro-batch's reduction), activations
/// (`activationBytesPerMicrobatch` down in forward and up in backward).
double offloadBytesPerStep(const Plan &plan, const ComputeEstimate &ce,
                           double activationBytesPerMicrobatch);

/// Step time = compute + exposed communication + pipeline bubble + offload traffic over
/// host_bandwidth. Bubble: (pp - 1) / (v x m) of the m micro-batches (Narayanan et al. 2021;
/// v = virtual stages of the interleaved schedule, 1 for 1F1B; GPipe (pp - 1) / m).
/// tokens_per_s counts the global batch (dp replicas); MFU = model FLOPs / (step x peak),
/// HFU = hardware FLOPs (with recompute) / (step x peak).
StepEstimate assembleStep(const Plan &plan, const ComputeProfile &cp, const ComputeEstimate &ce,
                          double exposedCommunication, double offloadBytes);

} // namespace shardscope
