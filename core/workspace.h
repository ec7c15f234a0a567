#pragma once
// GEMM library workspaces that the framework's caching allocator holds for the whole run.
//
// PyTorch (aten/src/ATen/cuda/CublasHandlePool.cpp, 2.1 to 2.11) gives every cuBLAS handle and
// stream pair a workspace allocated through the CUDA caching allocator the first time a GEMM
// runs on it, and keeps it: CUBLAS_WORKSPACE_CONFIG's default, 32 MiB (":4096:8") on Hopper and
// newer, 8 MiB + 128 KiB (":4096:2:16:8") before; cuBLASLt shares it (unified workspace). Handles
// come from a thread-local pool window, and autograd runs a CUDA device's backward on its own
// thread: a training step on one compute stream holds two, the forward's and the backward's.
// Transformer Engine (transformer_engine/pytorch/module/base.py get_workspace()) keeps one more
// of its own: 32 MiB on Hopper and newer, 4 MiB before.
//
// On Ascend, torch_npu keeps the aclnn operators' workspaces in a separate allocator
// (NPUWorkspaceAllocator: one block per stream, grown to the largest request) outside the caching
// allocator's statistics; the device profile's context reserve covers it and nothing is counted
// here.
//
// The figures come from the device profile (`gemm_workspace_bytes`,
// `te_gemm_workspace_bytes`) and the framework profile (`gemm_workspaces`,
// `transformer_engine`, on NVIDIA devices). Measured: PyTorch 2.11 on an H200 keeps 64 MiB after a
// training step beyond the model and optimizer (shared/calibration, `base_gib`).

namespace shardscope {

struct DeviceProfile;
struct FrameworkProfile;

/// The workspaces one rank keeps, each allocated once and never freed.
struct GemmWorkspaces
{
    int count = 0;      ///< PyTorch's (one per handle and stream)
    double bytes = 0;   ///< each of PyTorch's
    double teBytes = 0; ///< Transformer Engine's one workspace (0: none)
    double total() const { return count * bytes + teBytes; }
    bool operator==(const GemmWorkspaces &) const = default;
};

GemmWorkspaces gemmWorkspaces(const DeviceProfile &dev, const FrameworkProfile &fw);

} // namespace shardscope
