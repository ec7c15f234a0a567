#pragma once

// What each optimizer keeps per trained tensor and what its step needs beside it, for the
// optimizers of precision.optimizer beyond the Adam family's plain formula: SGD without
// momentum, Adafactor, bitsandbytes' 8-bit and paged AdamW, and Muon.
#include "adapters.h"
#include "plan.h"

namespace shardscope {

struct OptimizerMemory
{
    double states = 0;     ///< on the device, bytes (before ZeRO sharding)
    double hostStates = 0; ///< in host-backed memory (paged optimizers), bytes
    double temp = 0;       ///< the step's temporaries on the device, bytes
};

/// Whether `precision.optimizer` is one this unit accounts (the others: elements x states x
/// state bytes, in memory.cpp).
bool structuredOptimizer(const Precision &pr);

/// The optimizer's memory for the trained tensors of one rank (`e`: their elements and
/// structure), `workBytes` being the dtype the step computes in (master weights, else params):
///  - SGD without momentum (precision.momentum false): no state;
///  - Adafactor (Shazeer & Stern 2018; transformers' Adafactor): a row and a column vector per
///    matrix, a full second moment per vector, and with precision.first_moment (beta1 set) a
///    full first moment, in the state dtype; its for-loop step
///    works in fp32 on one tensor at a time (the parameter, its gradient, the update and the
///    squared-gradient approximation: 4 copies of the largest);
///  - adamw8bit (bitsandbytes AdamW8bit, block-wise): two 1-byte states with an fp32 absmax per
///    2048 elements; tensors under 4096 elements (min_8bit_size) keep fp32 states; one fused
///    kernel, no temporaries;
///  - paged_adamw, paged_adamw8bit: the same states in CUDA unified (paged) memory, which the
///    driver evicts to the host under memory pressure: counted in host memory, not at the
///    device's peak;
///  - Muon (Jordan et al. 2024; torch.optim.Muon): one momentum buffer for the 2-D matrices
///    inside the layers, AdamW's two states for embedding, head, norms and biases; Newton-Schulz
///    on one matrix at a time in bf16: X, X X^T (min(rows, cols)^2), its square and the next X.
OptimizerMemory optimizerMemory(const Precision &pr, const StageElements &e, double workBytes);

/// Device bytes per optimized element, for bounds and the rough accounting (a lower bound for
/// the structured optimizers: Adafactor's factored states and paged states count as 0).
double optimizerStateBytesPerElement(const Precision &pr);

} // namespace shardscope
