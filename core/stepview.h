#pragma once

// What the memory-over-time view (and the PDF's timeline page) draws for one kind of rank: the
// steady step's live bytes by component and the caching allocator's reserved bytes after each
// event, its phases, its peak and the tensors alive there. Computed here so that the workbench
// and the report only draw.
#include "memory.h"
#include "timeline.h"

#include <array>
#include <vector>

namespace shardscope {

class Catalog;

struct StepView
{
    StepTimeline timeline;
    int first = 0, last = 0; ///< the steady step's events: [first, last) of timeline.events
    /// Live bytes by component after each steady event (index i is event first + i).
    std::vector<std::array<float, kComponentCount>> live;
    std::vector<float> reserved;   ///< the allocator's reserved bytes after each steady event
    std::vector<PhaseMark> phases; ///< the steady step's phase starts (absolute event indices)
    int peak_event = -1;           ///< absolute index of the allocated peak
    double allocated_peak = 0, reserved_peak = 0;
    std::vector<int> alive_at_peak; ///< tensors alive at the peak, largest first
    /// Live bytes after an absolute event index (sum over components).
    double liveAt(int event) const;
};

/// The view of the rank kind at `stage`, the allocator replayed as the plan configures it on a
/// device with room (what torch.cuda.max_memory_reserved() reports).
StepView stepView(const Plan &plan, const Catalog &catalog, int stage);

} // namespace shardscope
