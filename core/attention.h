#pragma once

// Attention kinds as activation memory and FLOPs see them: MHA / GQA (with Qwen3's QK norms)
// and multi-head latent attention (DeepSeek-V2/V3, Kimi-K2), under tensor parallelism.
#include "model.h"

#include <string>

namespace shardscope {

/// CUDA's flash kernels (FlashAttention-2/3, PyTorch's SDPA) keep one fp32 log-sum-exp per head
/// and query token for their backward.
inline constexpr double kLogSumExpBytes = 4.0;

/// What the framework and plan make of the saved tensors of one layer on one rank.
struct ActivationEnv
{
    double c = 2;          ///< compute dtype bytes
    double r = 2;          ///< residual stream dtype bytes
    bool upcastNorm = false; ///< Hugging Face RMSNorm: an fp32 copy of the input is saved
    bool casts = false;    ///< autocast: every linear saves its own cast of its input
    bool flash = true;     ///< flash attention (false: eager, score matrices saved)
    double tp = 1;
    bool sp = false;
    double seqTokens = 0;  ///< keys each query attends to (s / cp)
    double attentionDropout = 0;
    /// Eager attention's softmax in the compute dtype (Megatron's FusedScaleMaskSoftmax)
    /// rather than Hugging Face's fp32 softmax and its cast.
    bool fusedSoftmax = false;
    /// Flash attention in the (b, s) layout of an (s, b) model: its output saved for its
    /// backward and a copy in (s, b) saved by the output projection (Megatron-LM's legacy model).
    bool flashOutputCopy = false;
    /// K and V reach the attention repeated to the query heads (MindSpeed-LLM's repeat before
    /// Ulysses' all-to-all): saved, exchanged and held at the query width.
    bool kvRepeated = false;
    /// Flash attention's softmax statistics, bytes per head and query token (flashStatBytes).
    double flashStatBytes = kLogSumExpBytes;
    /// RoPE (rope models only; `memory.rope`): each layer keeps the cos and sin it made for q
    /// and for k, in the compute dtype, one row per sequence position (shared by the
    /// micro-batch's sequences: ropeRowsPerToken = 1 / micro_batch) ...
    bool ropePerLayer = false;
    /// ... and the tensors it rotates (torch_npu.npu_rotary_mul saves its input).
    bool ropeKeepsInput = false;
    double ropeRowsPerToken = 1;
};

/// Bytes per head and query token that a device's flash attention kernel keeps for its backward
/// beside q, k, v and the output: the fp32 log-sum-exp of FlashAttention-2/3 and PyTorch's SDPA
/// kernels (4); on Ascend (`vendor` "huawei") flash attention is torch_npu's
/// npu_fusion_attention (MindSpeed's, transformers' NPU flash attention), which keeps softmax_max
/// and softmax_sum, each [b, n, s, 8] in fp32 (64).
double flashStatBytes(const std::string &vendor);

/// Bytes per token one norm over `width` saves: RMSNorm its input (Hugging Face's upcast
/// version an fp32 copy, and the normalized tensor when its weight trains); LayerNorm its input
/// and fp32 mean and rstd per row (torch.native_layer_norm, Apex, TE). `rows`: the norm's rows
/// on this rank per token of the micro-batch (1 / tp where sequence parallelism splits them).
double normSavedPerToken(const ActivationEnv &e, const ModelShape &m, double width, bool weightTrained,
                         double rows = 1.0);

/// Bytes per token one attention block saves, apart from the pre-norm.
struct AttentionSaved
{
    double inputs = 0; ///< what the first projections save of the normed input (0 if frozen)
    double core = 0;   ///< latents and their norms, QK norms, q / k / v, output, log-sum-exp, RoPE
    double scores = 0; ///< eager attention's score matrices (per token: one row per head)
    double qWidth = 0; ///< query width on this rank (flash's fp32 dq accumulator)
    double kvWidth = 0; ///< keys + values width on this rank (what ring attention exchanges)
};

/// Bytes per token one layer's RoPE keeps for its backward (ActivationEnv's rope fields; 0 for
/// a learned position table or shared cos and sin):
/// - per layer: q's and k's cos and sin, 4 x rotary dims x c per sequence position (Megatron-Core's
///   apply_rotary_pos_emb_bshd and MindSpeed's fused version make them in each call);
/// - keeping its input besides: what q and k were before the rotation. Megatron-Core splits k
///   (and v, and q under MHA) out of linear_qkv's output as views, so the whole output stays
///   (q + 2 kv wide); under GQA q is reshaped into a copy, kept too; after QK norms both are the
///   norms' own outputs.
double ropeSavedPerToken(const ActivationEnv &e, const ModelShape &m);

/// `trained`: the attention weights receive gradients (a frozen linear saves no input).
AttentionSaved attentionSaved(const ActivationEnv &e, const ModelShape &m, bool trained);

/// Bytes context parallelism holds beside one layer's attention on a rank with `tokens` tokens
/// of the micro-batch (`c` the compute dtype's bytes): the ring's double-buffered K/V block
/// arriving from the neighbour (forward 2 blocks, backward 4: K/V and dK/dV), and Ulysses'
/// all-to-alls holding q, k and v (then the output) in both layouts while they exchange them.
double contextParallelTransient(const AttentionSaved &a, int ringDegree, int ulyssesDegree,
                                double tokens, double c, bool backward);

/// Forward FLOPs per token of the attention core against `keys` keys (QK^T and PV, all heads
/// of the model, no TP split): 2 x keys x heads x (qk head dim + v head dim).
double attentionCoreFlopsPerToken(const ModelShape &m, double keys);

} // namespace shardscope
