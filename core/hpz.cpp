#include "hpz.h"

#include "plan.h"

#include <algorithm>

namespace shardscope {

int hpzGroup(const Plan &plan)
{
    const int h = plan.parallel.zero_hpz_partition_size;
    return h > 1 ? h : 0;
}

double hpzSecondaryBytes(const Plan &plan, double elements, double bytesPerElement)
{
    const int h = hpzGroup(plan);
    return h > 0 ? elements / h * bytesPerElement : 0.0;
}

int hpzForwardGathers(const Plan &plan, int microBatches)
{
    return hpzGroup(plan) > 0 ? std::max(0, microBatches - 1) : 0;
}

} // namespace shardscope
