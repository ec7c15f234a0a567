#pragma once
// The collective library's buffers of each communicator a rank belongs to. On HCCL devices
// MindSpeed sizes them per process group: HCCL_BUFFSIZE for all (`memory.hccl_buffer_mb`),
// --hccl-group-buffer for named groups (`memory.hccl_group_buffer`) and
// --hccl-group-buffer-adaptive (`memory.hccl_buffer_adaptive`), which sizes the tp, pp, cp and
// ep groups from the largest message they carry. On NCCL devices every communicator costs the
// device profile's figure.
//
// Read from MindSpeed (github.com/Ascend/MindSpeed, commit 028de58c):
// mindspeed/core/hccl_buffer/hccl_adaptive_func.py (hccl_buffer_auto_adaptive,
// _parse_key_value_string), mindspeed/core/hccl_buffer/adaptor.py (get_nccl_options_wrapper:
// options.hccl_config = {"hccl_buffer_size": MB} for a group in the table) and
// mindspeed/core/parallel_state.py (initialize_model_parallel_wrapper: the adaptive table is
// filled first, --hccl-group-buffer's entries then overwrite it).

#include "text.h"

#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace shardscope {

struct DeviceProfile;
struct Plan;

/// One communicator of a rank and the device memory of its buffers.
struct CommGroupBuffer
{
    /// MindSpeed's process-group name ("dp", "dp_cp", "mp", "tp", "pp", "cp", "cp_ulysses",
    /// "cp_ring", "exp", "ep_tp", "dp_modulo_exp", "tp_cp", "tp_ep_mp", "embd"; "dp_replicate"
    /// for HSDP's replicas, "world" for torch.distributed's default group, which no MindSpeed
    /// option sizes).
    std::string group;
    double bytes = 0;
    enum class Source { Default, Explicit, Adaptive } source = Source::Default;
    int mb = 0; ///< HCCL: the buffer size the group's options carry, MB; 0 on NCCL devices
    bool operator==(const CommGroupBuffer &) const = default;
};

/// Whether the device's collective library is HCCL (vendor huawei).
bool isHcclDevice(const DeviceProfile &dev);

/// The group names MindSpeed's --hccl-group-buffer accepts (_parse_key_value_string's
/// allowed_keys); the ones outside the groups this model counts change nothing.
const std::vector<std::string> &hcclGroupBufferKeys();

/// MindSpeed's --hccl-group-buffer string ("dp:200;tp:300", ',' also separates) into `out`;
/// false with `error` set for a key outside hcclGroupBufferKeys() or a value not a whole
/// number in 1 .. 65536. An empty string gives an empty map.
bool parseHcclGroupBuffer(const std::string &text, std::map<std::string, int> &out, std::string *error);
/// The map as MindSpeed's string, "dp:200;tp:300".
std::string formatHcclGroupBuffer(const std::map<std::string, int> &groups);

/// HCCL_BUFFSIZE of the plan, MB: memory.hccl_buffer_mb, else half the profile's
/// per-communicator bytes (HCCL keeps an input and an output buffer of that size).
double hcclDefaultBufferMb(const Plan &plan, const DeviceProfile &dev);

/// MindSpeed's adaptive size of `group`, MB (hccl_buffer_auto_adaptive), 0 where the rule
/// leaves the group at HCCL_BUFFSIZE (world, dp, dp_cp, embd, expert groups but "exp").
int adaptiveHcclBufferMb(const Plan &plan, std::string_view group);

/// Each communicator of `groups` (names as CommGroupBuffer::group, one entry per communicator)
/// with its bytes: 2 x its buffer size on HCCL devices, the profile's figure on NCCL ones.
std::vector<CommGroupBuffer> commGroupBuffers(const Plan &plan, const DeviceProfile &dev,
                                              std::span<const std::string_view> groups);
/// The bytes of those communicators together, sized as commGroupBuffers sizes each (the memory
/// floor's reserve, which needs no more than their sum).
double commGroupBufferBytes(const Plan &plan, const DeviceProfile &dev, std::span<const std::string_view> groups);

/// The formula of the collective buffers (per group) and its assumptions, as phrases; empty
/// for a rank without communicators.
Text explainCommGroups(const Plan &plan, const DeviceProfile &dev,
                       const std::vector<CommGroupBuffer> &groups);

} // namespace shardscope
