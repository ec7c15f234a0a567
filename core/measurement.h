#pragma once

#include "device.h"
#include "plan.h"
#include "workload.h"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace shardscope {

class Catalog;

/// What a backend measured for one kernel (one "result" line of docs/runner-protocol.md).
struct KernelMeasurement
{
    std::string name;          ///< the kernel's name
    std::string status = "ok"; ///< ok | error | skipped
    std::string message;       ///< why it failed or was skipped; caveats when ok
    double time_s = 0;         ///< median time of one call over the repeats
    double min_s = 0, max_s = 0;
    int repeats = 0;
    double flops_per_s = 0;      ///< GEMM and attention: flops / time_s
    double bytes_per_s = 0;      ///< elementwise: bytes / time_s
    double algbw = 0, busbw = 0; ///< collectives (nccl-tests): S / t and algbw x factor
    int ranks = 0;               ///< collectives: ranks that took part
    double reference_time_s = 0; ///< GEMMs with --reference: plain torch.matmul, same run
    bool ok() const { return status == "ok"; }
};

/// The memory probe's result.
struct ProbeMeasurement
{
    std::string status; ///< ok | error | skipped | "" (not run)
    std::string message;
    int layers = 0;
    int64_t seq_len = 0;
    int micro_batch = 0;
    std::string mode;           ///< dtype mode it ran
    std::string attention;      ///< attention it ran ("flash" or "eager": the fallback)
    std::string attention_impl; ///< the kernel: "sdpa", "npu_fusion_attention", "math"
    std::string recompute;
    double peak_allocated = 0; ///< bytes, over one steady-state step, minus the baseline
    double baseline = 0;       ///< allocated before the model was built (subtracted)
    double peak_reserved = 0;  ///< allocator's reserved peak when known
    std::string method;        ///< how the peak was read (torch.cuda.max_memory_allocated, ...)
    std::string snapshot;      ///< the memory snapshot (JSON) the probe wrote, "" for none
    double step_s = 0;
    bool ran() const { return status == "ok"; }
};

/// The worker's hello (or the native backend's self-description).
struct BackendInfo
{
    std::string backend; ///< cpu | torch
    std::string device;  ///< cpu | cuda | npu
    std::string device_name;
    std::string interpreter; ///< the Python that ran the worker (torch backend)
    std::string versions;    ///< "python 3.11.2, torch 1.13.1"
    int world_size = 1;
    double total_memory = 0; ///< bytes, 0 when unknown
    double free_memory = 0;
    double context_reserve = 0; ///< total - free - reserved at start-up (device backends)
    int protocol_version = 0;
};

/// A whole run: the kernels asked for, what came back, in the workload's order.
struct RunResults
{
    BackendInfo info;
    std::vector<Kernel> kernels;
    std::vector<KernelMeasurement> measurements; ///< by kernel index; status "" = not run
    MemoryProbe probe;
    ProbeMeasurement probe_result;
    std::string error; ///< why the run stopped early ("" when it completed)
};

/// "bf16:large" (>= 1 TFLOP per call), "bf16:medium" (>= 10 GFLOP), "bf16:small".
std::string gemmShapeClass(const Kernel &k);
/// "fwd:s4096": direction and the power of two nearest the sequence.
std::string attentionShapeClass(const Kernel &k);

/// Time of one call of `k` at its full size (full_flops / full_bytes) on `device` as the engine
/// models it: calibrated rates when the profile has them, else peak x efficiency; collectives
/// by the busbw table or the alpha-beta link model of the tier the group spans.
double predictKernelSeconds(const Kernel &k, const DeviceProfile &device, const Plan &plan);

/// Measured time of one call extrapolated to the kernel's full size at the measured rate.
double measuredFullSeconds(const Kernel &k, const KernelMeasurement &m);

struct KernelComparison
{
    std::string name;
    double predicted_s = 0; ///< one call, full size
    double measured_s = 0;  ///< one call, full size (extrapolated when run scaled down)
    double count_per_step = 0;
    double ratio = 0; ///< measured / predicted
};

std::vector<KernelComparison> compareKernels(const RunResults &r, const DeviceProfile &device,
                                             const Plan &plan);

struct MemoryComparison
{
    bool available = false;
    double predicted_peak = 0; ///< estimateMemory of the probe's plan, peak allocated
    double measured_peak = 0;
    double ratio = 0; ///< measured / predicted
    /// The caching allocator replayed over the probe's timeline, and what it measured (0 when
    /// the device does not report it, the CPU).
    double predicted_reserved = 0, measured_reserved = 0;
    Plan plan;        ///< the configuration both describe
};

/// The engine's prediction for exactly what the probe ran (layers, sequence, dtype mode and the
/// attention it actually used).
MemoryComparison compareProbe(const Plan &plan, const RunResults &r, const Catalog &catalog);

/// A device profile calibrated from a run: `base` with measured rates in `calibration`,
/// efficiencies re-derived from them (clamped to (0, 1]), the measured context reserve, id
/// `<base id>-calibrated` unless `id` is given, and a source line for every changed figure.
DeviceProfile calibrateDevice(const DeviceProfile &base, const RunResults &r,
                              const std::string &id = {});

/// The results file `shardscope-cli bench -o` writes ("format": "shardscope-bench").
nlohmann::json resultsToJson(const Plan &plan, const RunResults &r, const Catalog &catalog);

} // namespace shardscope
