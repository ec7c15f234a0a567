#pragma once
// MindSpeed's swap-attention (`--swap-attention` with the default `--swap-modules
// input_norm,self_attention,post_attention_norm`; `memory.swap_attention`). Read from MindSpeed
// (github.com/Ascend/MindSpeed, commit 028de58c): mindspeed/core/memory/swap_attention/
// prefetch.py (SwapPrefetch.pack_hook copies each tensor those modules save for backward to a
// pinned host tensor on a side stream; sync_d2h, a forward hook of the layer, waits for the
// copies and frees the device storage once the layer's forward is done; h2d, a backward hook
// of the layer, copies them back as its backward starts; no_swap_tensor keeps tensors under
// 0.5 MiB, views and leaves on the device) and adaptor.py (AdaptiveRecomputeSwap.
// solve_prefetch_policy: without --recompute-method every layer of the stage is swapped, the
// interval 0).

namespace shardscope {

struct Plan;

/// One decoder layer's saved activations for one micro-batch under swap-attention.
struct SwapAttentionSplit
{
    double kept = 0;    ///< stays on the device from the layer's forward to its backward
    double swapped = 0; ///< on the host between them; on the device only during the layer's
                        ///< own forward and backward
};

/// `saved`: the layer's saved bytes; `attentionSide`: what its input norm, attention and
/// post-attention norm save. Swap-attention off: everything kept.
SwapAttentionSplit swapAttentionSplit(const Plan &plan, double saved, double attentionSide);

} // namespace shardscope
