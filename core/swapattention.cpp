#include "swapattention.h"

#include "plan.h"

#include <algorithm>

namespace shardscope {

SwapAttentionSplit swapAttentionSplit(const Plan &plan, double saved, double attentionSide)
{
    SwapAttentionSplit s;
    s.swapped = plan.memory.swap_attention ? std::clamp(attentionSide, 0.0, saved) : 0.0;
    s.kept = saved - s.swapped;
    return s;
}

} // namespace shardscope
