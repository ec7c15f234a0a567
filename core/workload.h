#pragma once

#include "dtype.h"
#include "plan.h"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace shardscope {

class Catalog;

/// What a kernel of the training step does; each kind is measured in its own unit.
enum class KernelKind
{
    Gemm,        ///< matrix multiply; FLOP/s
    Attention,   ///< causal self-attention core (forward or backward); FLOP/s
    Elementwise, ///< memory-bound: norms, activations, residual adds, copies; bytes/s
    Collective   ///< communication within a group of ranks; algbw and busbw (nccl-tests)
};

std::string_view toString(KernelKind k);

/// One kernel of one training step on one rank, with rank-local shapes.
///
/// GEMMs follow torch.nn.functional.linear, Y = X W^T with X the activations (tokens x in)
/// and W the weight (out x in): the forward GEMM is M = tokens, N = out / tp, K = in; its input
/// gradient dX = dY W is M = tokens, N = in, K = out; its weight gradient dW = dY^T X is
/// M = out, N = in, K = tokens. `layout` names the operand transposes ("nt", "nn", "tn":
/// A is M x K unless its letter is t, B is K x N unless its letter is t).
struct Kernel
{
    std::string name; ///< stable id: "layer.qkv.fwd", "attention.bwd", "dp.all_gather"
    KernelKind kind = KernelKind::Gemm;
    std::string op;    ///< gemm | attention_fwd | attention_bwd | rmsnorm | swiglu | add | copy |
                       ///< all_reduce | all_gather | reduce_scatter | all_to_all | send_recv
    std::string phase; ///< forward | backward | optimizer_step
    DType dtype = DType::BF16;
    double count_per_step = 1; ///< calls per training step on this rank

    // Gemm
    int64_t m = 0, n = 0, k = 0;
    std::string layout = "nn";

    // Attention (BNSD): q has `heads`, k and v `kv_heads` (GQA); causal masks the future.
    int64_t batch = 0, heads = 0, kv_heads = 0, seq_q = 0, seq_kv = 0, head_dim = 0;
    int64_t v_head_dim = 0; ///< width of v and the output per head; 0: head_dim (MLA: 128 vs 192)
    bool causal = true;

    // Elementwise: elements of the (largest) tensor, bytes read + written per call.
    int64_t elements = 0;
    int64_t width = 0; ///< last dimension (norm width); 0 when irrelevant

    // Collective (nccl-tests conventions: `bytes` is S, the whole buffer; for all_gather the
    // output, for reduce_scatter the input).
    std::string collective;
    std::string group; ///< dp | tp | cp | pp | ep
    int group_size = 1;

    double flops = 0; ///< per call (GEMM 2MNK; attention per the FLOP convention below)
    double bytes = 0; ///< per call: memory traffic (elementwise) or message size (collective)
    std::string note; ///< what it computes or carries

    /// Shapes scaled down for a slow device (see WorkloadOptions::max_tokens): the size the plan
    /// really has, so that times can be extrapolated at the measured rate.
    double full_flops = 0;
    double full_bytes = 0;
    /// The communication engine's time of one call (collectives from its inventory); 0 when
    /// the kernel did not come from it.
    double engine_time_s = 0;
};

/// Attention FLOPs: forward 2 * s_q * s_kv * (d + d_v) * heads (QK^T and PV; 4 s_q s_kv d heads
/// when q/k and v have one width), halved when causal;
/// backward 2.5 x forward (the calibration data's convention: forward + backward = 3.5 x forward).
double attentionFlops(const Kernel &k);

/// nccl-tests busbw factor (doc/PERFORMANCE.md): all_reduce 2(n-1)/n; all_gather,
/// reduce_scatter, all_to_all (n-1)/n; broadcast, reduce, send_recv 1.
double busBandwidthFactor(std::string_view collective, int n);

/// A real training step of the plan's model on one device, as many layers as fit, whose peak
/// allocated memory is compared with estimateMemory for the same configuration.
struct MemoryProbe
{
    ModelShape model; ///< the plan's shape with `model.layers` = layers that fit
    int layers = 0;
    int64_t seq_len = 0;
    int micro_batch = 1;
    /// Plain-PyTorch dtype mode the probe runs: "amp" (fp32 parameters, torch.autocast to the
    /// compute dtype, fp32 AdamW states), "bf16" / "fp16" (parameters, gradients and states in
    /// that dtype, no master copy), "fp32".
    std::string mode = "bf16";
    Recompute recompute = Recompute::None;
    Attention attention = Attention::Flash;
    OptimizerImpl optimizer_impl = OptimizerImpl::Foreach;
    bool scaled_down = false; ///< fewer layers or a shorter sequence than the plan
    /// The plan's training method, run by the probe with plain-PyTorch adapters or frozen
    /// layers (QLoRA is not probed); freezing's last layers are clamped to the probe's layers.
    MethodOptions method;
    /// Dropout the probe trains with: the plan's `training.dropout` (negative: none).
    Dropout dropout;
    std::string note;
    /// Where the worker writes a memory snapshot of the steady step (CUDA / NPU); "" for none.
    std::string snapshot;
};

/// The plan the engine evaluates for a probe: the probe's shape and mode on one device
/// (dp = tp = pp = cp = 1, no sharding, no offload, the `pytorch` framework profile).
Plan probePlan(const Plan &plan, const MemoryProbe &probe);

/// Largest number of layers (>= 1, <= the model's) whose predicted peak allocated memory plus
/// `reserve_bytes` fits in `budget_bytes`; 0 when even one layer does not fit.
int probeLayersThatFit(const Plan &plan, const MemoryProbe &probe, const Catalog &catalog,
                       double budget_bytes);

struct WorkloadOptions
{
    /// Caps the tokens of a micro-batch on one rank (GEMM M, attention sequence, elementwise
    /// rows) for a slow device; 0 keeps the plan's. Capped kernels keep their full size in
    /// `full_flops` / `full_bytes`.
    int64_t max_tokens = 0;
    bool collectives = true;
    bool elementwise = true;
    bool backward = true;
    int64_t probe_max_tokens = 0; ///< caps the probe's sequence (CPU runs); 0 keeps the plan's
};

/// The kernels of one training step on the plan's first-stage/last-stage rank (layers, head).
struct Workload
{
    std::string plan_name;
    int64_t tokens = 0;     ///< tokens per micro-batch on one rank (s * b / cp), uncapped
    int64_t tokens_run = 0; ///< the same after WorkloadOptions::max_tokens
    std::vector<Kernel> kernels;
    MemoryProbe probe;
};

/// Derives the kernel list of one training step on one rank. `plan` must be validated.
/// With a catalog, the LM head has the framework's padded vocabulary (core/framework.h) and
/// the collectives are the communication engine's inventory (core/comm.h:
/// forEachCollective), so measured and predicted describe the same calls. Without one they are
/// derived from the layout alone (TP all-reduce or SP all-gather/reduce-scatter per layer, DP
/// gradient all-reduce in 25 MiB buckets or ZeRO/FSDP gathers and reduce-scatters, CP ring K/V
/// exchange, PP activations, EP all-to-all; prior-art.md's communication section).
Workload buildWorkload(const Plan &plan, const WorkloadOptions &options = {},
                       const Catalog *catalog = nullptr);

nlohmann::json kernelToJson(const Kernel &k);
Kernel kernelFromJson(const nlohmann::json &j); ///< throws PlanError naming the field
nlohmann::json probeToJson(const MemoryProbe &p);

} // namespace shardscope
