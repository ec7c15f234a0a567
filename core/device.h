#pragma once

#include "dtype.h"

#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace shardscope {

/// One tier of the interconnect as seen by one device.
struct LinkProfile
{
    std::string kind;         ///< "hccs", "nvlink", "roce", "infiniband", "pcie"
    std::string topology;     ///< "full_mesh", "switch", "ring"
    double bandwidth = 0;     ///< bytes/s per device, one direction, all links of the tier together
    double latency = 0;       ///< seconds per collective step (alpha)
    double efficiency = 1.0;  ///< achieved bus bandwidth / bandwidth for large messages
};

/// Rates measured by the kernel runner on a real device (the "calibration" object of a device
/// profile). Empty unless the profile was calibrated; the engine prefers these over
/// peak x efficiency where they exist.
struct DeviceCalibration
{
    bool present = false;
    std::string source; ///< backend, device and software that measured them
    /// Achieved GEMM FLOP/s by shape class ("bf16:large", "bf16:medium", "fp32:small", ...;
    /// see gemmShapeClass in core/measurement.h).
    std::map<std::string, double> gemm_flops;
    /// Achieved attention FLOP/s by direction and sequence class ("fwd:s4096", "bwd:s4096").
    std::map<std::string, double> attention_flops;
    double memory_bandwidth = 0; ///< achieved device-to-device copy bytes/s (read + written)
    /// Bus bandwidth (nccl-tests busbw, bytes/s) by message size S (bytes), per collective
    /// ("all_reduce", ...) and group size: key "all_reduce:8". Sorted by size.
    std::map<std::string, std::vector<std::pair<double, double>>> busbw;
    /// Device memory outside the framework's allocator measured at start-up (total - free -
    /// reserved by the allocator); 0 when not measured.
    double measured_context_reserve_bytes = 0;
};

/// Hardware facts of one accelerator (resources/devices/<id>.json). Every figure carries its
/// source and certainty in `sources` ("field" -> "where it comes from; how sure").
struct DeviceProfile
{
    std::string id;
    std::string name;
    std::string vendor; ///< "huawei", "nvidia"
    double hbm_bytes = 0;
    /// Device memory the framework's allocator can never use: firmware, driver and runtime
    /// context (CANN / CUDA context and modules, torch_npu's aclnn workspace allocator).
    double context_reserve_bytes = 0;
    /// A GEMM library workspace as PyTorch keeps it in its caching allocator, one per cuBLAS
    /// handle and stream for the rest of the run (ATen's CublasHandlePool:
    /// CUBLAS_WORKSPACE_CONFIG's default for the architecture); 0 where none is kept in the
    /// allocator (core/workspace.h).
    double gemm_workspace_bytes = 0;
    /// Transformer Engine's own cuBLAS workspace on this architecture (get_workspace(): one
    /// torch.empty for the run); 0 where Transformer Engine does not run.
    double te_gemm_workspace_bytes = 0;
    /// Buffers the collective library holds per communicator (HCCL: 2 x HCCL_BUFFSIZE).
    double comm_buffer_bytes_per_group = 0;
    double peak_flops_bf16 = 0, peak_flops_fp16 = 0, peak_flops_fp32 = 0, peak_flops_fp8 = 0,
           peak_flops_int8 = 0;
    double hbm_bandwidth = 0;        ///< bytes/s
    double gemm_efficiency = 0.7;    ///< achieved / peak for large GEMMs (calibrated)
    double attention_efficiency = 0.6;
    double memory_efficiency = 0.8;  ///< achieved / peak HBM bandwidth for elementwise ops
    LinkProfile intra_node;
    LinkProfile inter_node;
    double host_bandwidth = 0;       ///< bytes/s device <-> host (offload traffic)
    /// Host (CPU) memory of one node, bytes; what offloaded states, pinned buffers and the
    /// training processes of all the node's devices share. 0: not known (not checked).
    double host_memory_bytes = 0;
    std::map<std::string, std::string> sources;
    DeviceCalibration calibration; ///< measured rates ("calibration" in the file)
    nlohmann::json raw; ///< the file as read (calibration tables live here)

    double peakFlops(DType t) const;
};

DeviceProfile deviceFromJson(const nlohmann::json &j); ///< throws PlanError naming the field
nlohmann::json deviceToJson(const DeviceProfile &d);

} // namespace shardscope
