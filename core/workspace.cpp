#include "workspace.h"

#include "device.h"
#include "framework.h"

namespace shardscope {

GemmWorkspaces gemmWorkspaces(const DeviceProfile &dev, const FrameworkProfile &fw)
{
    GemmWorkspaces w;
    if (dev.gemm_workspace_bytes > 0 && fw.gemm_workspaces > 0) {
        w.count = fw.gemm_workspaces;
        w.bytes = dev.gemm_workspace_bytes;
    }
    if (runsTransformerEngine(fw, dev))
        w.teBytes = dev.te_gemm_workspace_bytes;
    return w;
}

} // namespace shardscope
