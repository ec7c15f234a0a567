#include "stepview.h"

#include "allocator.h"
#include "catalog.h"

#include <algorithm>
#include <limits>

namespace shardscope {

double StepView::liveAt(int event) const
{
    const int i = event - first;
    if (i < 0 || size_t(i) >= live.size())
        return 0;
    double t = 0;
    for (float v : live[size_t(i)])
        t += v;
    return t;
}

StepView stepView(const Plan &plan, const Catalog &catalog, int stage)
{
    StepView v;
    v.timeline = memoryTimeline(plan, catalog, stage);
    const StepTimeline &t = v.timeline;
    const DeviceProfile &dev = *catalog.device(plan.cluster.device);
    const AllocatorRules rules = dev.vendor == "huawei" ? AllocatorRules::Npu : AllocatorRules::Cuda;
    const ReplayResult r = replayTimeline(t, rules, plan.memory.allocator,
                                          std::numeric_limits<double>::infinity(), true);
    v.first = int(t.events.size());
    v.last = int(t.events.size());
    for (const PhaseMark &m : t.marks) {
        if (m.part == StepPart::SteadyStep) {
            v.first = std::min(v.first, m.event);
            if (!v.phases.empty() && v.phases.back().event == m.event)
                v.phases.back() = m; // superseded before any event
            else if (v.phases.empty() || v.phases.back().phase != m.phase)
                v.phases.push_back(m);
        }
    }
    std::array<float, kComponentCount> live{};
    std::array<double, kComponentCount> exact{};
    double best = -1;
    for (int e = 0; e < int(t.events.size()); ++e) {
        const TimelineTensor &tt = t.tensors[size_t(t.events[size_t(e)].tensor)];
        double &c = exact[size_t(componentOf(tt.kind))];
        c += t.events[size_t(e)].alloc ? tt.bytes : -tt.bytes;
        if (e < v.first)
            continue;
        for (int k = 0; k < kComponentCount; ++k)
            live[size_t(k)] = float(std::max(0.0, exact[size_t(k)]));
        v.live.push_back(live);
        v.reserved.push_back(size_t(e) < r.reserved.size() ? r.reserved[size_t(e)] : 0.0f);
        double total = 0;
        for (double b : exact)
            total += b;
        if (total > best) {
            best = total;
            v.peak_event = e;
        }
    }
    v.allocated_peak = std::max(0.0, best);
    v.reserved_peak = r.peak_reserved;
    if (v.peak_event >= 0) {
        for (int i = 0; i < int(t.tensors.size()); ++i) {
            const TimelineTensor &tt = t.tensors[size_t(i)];
            if (tt.alloc_event <= v.peak_event && (tt.free_event < 0 || tt.free_event > v.peak_event))
                v.alive_at_peak.push_back(i);
        }
        std::stable_sort(v.alive_at_peak.begin(), v.alive_at_peak.end(),
                         [&](int a, int b) { return t.tensors[size_t(a)].bytes > t.tensors[size_t(b)].bytes; });
    }
    return v;
}

} // namespace shardscope
