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

/// Hardware facts of one accelerator (resources/devices/<id>.json). Every figure carries its
/// source and certainty in `sources` ("field" -> "where it comes from; how sure").
struct DeviceProfile
{
    std::string id;
    std::string name;
    std::string vendor; ///< "huawei", "nvidia"
    double hbm_bytes = 0;
    /// Device memory the framework's allocator can never use: firmware, driver and runtime
    /// context (CANN / CUDA context, cuBLAS/cuBLASLt or aclnn workspaces).
    double context_reserve_bytes = 0;
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
    std::map<std::string, std::string> sources;
    nlohmann::json raw; ///< the file as read (calibration tables live here)

    double peakFlops(DType t) const;
};

DeviceProfile deviceFromJson(const nlohmann::json &j); ///< throws PlanError naming the field
nlohmann::json deviceToJson(const DeviceProfile &d);

} // namespace shardscope
