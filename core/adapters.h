#pragma once

// How a model is trained: full training, LoRA / DoRA adapters (PEFT, MindSpeed-LLM LoRA), QLoRA
// (PEFT over bitsandbytes k-bit base weights) or freezing (training only some layers or parts),
// and what each means for the elements a rank holds, trains and stores.
#include "dtype.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace shardscope {

struct Plan;
struct FrameworkProfile;

enum class TrainingMethod { Full, LoRA, DoRA, QLoRA, Freeze };
enum class Quantization { NF4, FP4, INT8 };

/// The linear layers of a decoder layer that adapters can target (bit flags). FFN targets on an
/// MoE model adapt every expert's FFN (PEFT wraps each expert's linears); the router is not
/// adapted.
enum LinearTarget : uint8_t {
    kTargetQ = 1, kTargetK = 2, kTargetV = 4, kTargetO = 8,
    kTargetGate = 16, kTargetUp = 32, kTargetDown = 64,
    kTargetAllLinear = 127,
};

/// Parts of the model (bit flags): what freeze trains, what LoRA's modules_to_save trains fully.
enum ModelPart : uint8_t {
    kPartEmbedding = 1, kPartHead = 2, kPartNorms = 4, kPartAttention = 8, kPartFfn = 16,
    kPartExperts = 32,
};

struct LoraOptions
{
    int rank = 8;
    /// PEFT's default for Llama-family models when no target is given: q_proj and v_proj.
    uint8_t targets = kTargetQ | kTargetV;
    /// Fully trained parts (PEFT ModulesToSaveWrapper: a trainable copy beside the frozen
    /// original): embedding and/or head.
    uint8_t modules_to_save = 0;
    double dropout = 0;
    /// Adapter dtype; DType::None: the framework profile's default (PEFT: fp32 beside a bf16 /
    /// fp16 base; MindSpeed-LLM: the compute dtype).
    DType dtype = DType::None;
};

struct QloraOptions
{
    Quantization quant = Quantization::NF4;
    bool double_quant = true;
    int block_size = 64; ///< elements per absmax block (bitsandbytes' default)
};

struct FreezeOptions
{
    int last_layers = 0;   ///< the last N decoder layers are trained whole
    uint8_t parts = 0;     ///< and these parts, in every layer
};

struct MethodOptions
{
    TrainingMethod method = TrainingMethod::Full;
    LoraOptions lora;
    QloraOptions qlora;
    FreezeOptions freeze;
    bool usesAdapters() const
    {
        return method == TrainingMethod::LoRA || method == TrainingMethod::DoRA ||
               method == TrainingMethod::QLoRA;
    }
};

std::string_view toString(TrainingMethod m);
std::string_view toString(Quantization q);
/// "q", "k", "v", "o", "gate", "up", "down" for one bit.
std::string_view targetName(LinearTarget t);
/// "embedding", "head", "norms", "attention", "ffn", "experts" for one bit.
std::string_view partName(ModelPart p);
/// The names of the set bits, lowest first ("q", "v"; "embedding", "head").
std::vector<std::string> targetNames(uint8_t targets);
std::vector<std::string> partNames(uint8_t parts);

/// Bytes per element of a bitsandbytes-quantized weight, constants included: NF4 / FP4 pack two
/// elements per byte and keep one absmax per `block_size` elements, fp32, or with double
/// quantization an 8-bit absmax per block plus an fp32 absmax (and offset) per 256 blocks
/// (Dettmers et al. 2023, QLoRA); INT8 (LLM.int8()) one byte per element and an fp32 scale
/// per output row, `rowScale` elements per row given by the caller.
double quantizedBytesPerElement(const QloraOptions &q, double rowLength);

/// What one rank of a pipeline stage holds under the plan's training method, in elements
/// (after the TP and EP split, before data-parallel sharding). Full training trains every
/// parameter.
struct StageElements
{
    // Base parameters, dense (embedding, head, norms, attention, dense FFN, router) and experts.
    double trainedDense = 0, trainedExpert = 0;   ///< trained, in the params dtype
    double frozenDense = 0, frozenExpert = 0;     ///< frozen, stored as they are
    double quantizedDense = 0, quantizedExpert = 0; ///< frozen linear weights stored k-bit (QLoRA)
    double quantizedBytes = 0, quantizedBytesExpert = 0; ///< their bytes, constants included
    /// Frozen parameters PEFT's prepare_model_for_kbit_training casts to fp32 (QLoRA: norms,
    /// embedding, head, biases): part of frozenDense.
    double upcastFrozen = 0;
    double adapterDense = 0, adapterExpert = 0;   ///< LoRA A and B (+ DoRA magnitudes)
    /// Trainable elements of one decoder layer on average, and of the embedding / head.
    double trainedPerLayer = 0, trainedEmbedding = 0, trainedHead = 0;
    /// Elements of the largest frozen linear weight that is quantized (dequantized whole for
    /// its matmuls) and of the largest adapted weight (DoRA's weight norm materialises it).
    double largestQuantized = 0, largestAdapted = 0;
    // The trained tensors' structure, for optimizers that treat matrices apart (all per rank):
    double trainedMatrixEdges = 0;   ///< sum of rows + cols over trained matrices (Adafactor)
    double trainedVectors = 0;       ///< trained 1-D tensors (norms, biases, DoRA magnitudes)
    double trainedSmallTensors = 0;  ///< elements of trained tensors under 4096 elements each
    double trainedHiddenMatrices = 0; ///< elements of trained 2-D matrices inside the layers (Muon)
    double largestTrainedMatrix = 0; ///< elements of the largest trained matrix
    double largestTrainedSquare = 0; ///< min(rows, cols)^2 of the largest trained matrix
    /// FLOPs of Muon's Newton-Schulz iteration over the trained layer matrices (5 steps of
    /// A = X X^T, B = A A, X = B X, each in min(rows, cols)), per optimizer step.
    double newtonSchulzFlops = 0;
    double trained() const { return trainedDense + trainedExpert + adapterDense + adapterExpert; }
};

StageElements stageElements(const Plan &plan, int stage);

/// Parameters that receive gradients in the whole model, counted as PEFT's
/// print_trainable_parameters() counts them (no TP split; modules_to_save copies included).
int64_t trainableParameters(const Plan &plan);

/// Whether the plan's adapters sit on Megatron-Core's fused modules: MindSpeed-LLM's LoRA
/// (framework `megatron`; --lora-target-modules linear_qkv linear_proj linear_fc1 linear_fc2)
/// wraps linear_qkv, which computes q, k and v in one GEMM, and linear_fc1, which computes gate
/// and up: one adapter for each, its A (r x in) shared by the fused outputs. Multi-head latent
/// attention has no linear_qkv.
bool adaptersOnFusedModules(const Plan &plan);
/// The targets adapted: the plan's, and under adaptersOnFusedModules the whole fused module of
/// any target in it (q, k or v: all three; gate or up: both).
uint8_t adaptedTargets(const Plan &plan);

/// Bytes per element of the LoRA / DoRA adapters: the plan's `training.lora.dtype`, else the
/// framework profile's `adapter_dtype` ("compute": the plan's compute dtype).
double adapterBytes(const Plan &plan, const FrameworkProfile &fw);


} // namespace shardscope
