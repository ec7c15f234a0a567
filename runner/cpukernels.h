#pragma once

#include "core/measurement.h"
#include "core/workload.h"

#include <atomic>
#include <functional>
#include <vector>

namespace shardscope::cpukernels {

/// Timing parameters of one measurement.
struct Timing
{
    int warmup = 1;
    int repeats = 5;
    const std::atomic<bool> *cancel = nullptr;
};

/// Runs one kernel natively on the CPU (fp32 arithmetic; bf16/fp16 GEMM inputs are rounded to
/// that precision first) and times it: warm-up calls, then the median of the repeats, with
/// operands rotated over enough buffers to leave the last-level cache. Collectives and other
/// kernels a single process cannot run come back "skipped".
KernelMeasurement measure(const Kernel &k, const Timing &t);

/// C = op(A) * op(B) in fp32 through CBLAS (row-major). `layout` as in Kernel ("nt": B stored
/// N x K). Exposed for the tests.
void gemm(const std::string &layout, int64_t m, int64_t n, int64_t k, const float *a,
          const float *b, float *c);

/// Rounds every value to the nearest bf16 (round to nearest even), kept in fp32 storage.
void roundToBf16(std::vector<float> &v);

/// Causal (or full) attention forward, BNSD layout, GQA by head groups: o = softmax(q k^T *
/// scale) v. `lse` (b x heads x s_q) receives the log-sum-exp of each row when not null.
void attentionForward(const Kernel &k, const float *q, const float *kk, const float *v, float *o,
                      float *lse);
/// Its backward from dO, recomputing the probabilities: dq, dk, dv.
void attentionBackward(const Kernel &k, const float *q, const float *kk, const float *v,
                       const float *o, const float *dO, const float *lse, float *dq, float *dk,
                       float *dv);

} // namespace shardscope::cpukernels
