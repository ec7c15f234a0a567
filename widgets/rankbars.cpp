#include "rankbars.h"

namespace shardscope {

std::vector<RankBar> rankBars(const MemoryEstimate &memory, PhaseView view, int maxBars)
{
    int total = 0;
    for (const RankMemory &r : memory.ranks)
        total += r.count;
    const bool grouped = total > maxBars;

    std::vector<RankBar> bars;
    bars.reserve(size_t(grouped ? memory.ranks.size() : size_t(total)));
    for (size_t k = 0; k < memory.ranks.size(); ++k) {
        const RankMemory &r = memory.ranks[k];
        RankBar bar;
        bar.kind = int(k);
        bar.phase = view == PhaseView::Peak ? r.peak_phase : Phase(int(view) - 1);
        bar.bytes = r.phases[size_t(bar.phase)];
        bar.reserve = r.reserve.total();
        if (grouped) {
            bar.firstRank = r.rank;
            bar.ranks = r.count;
            bar.label = r.count == 1 ? QString::number(r.rank)
                                     : QStringLiteral("%1-%2").arg(r.rank).arg(r.rank + r.count - 1);
            bars.push_back(bar);
        } else {
            for (int i = 0; i < r.count; ++i) {
                bar.firstRank = r.rank + i;
                bar.ranks = 1;
                bar.label = QString::number(bar.firstRank);
                bars.push_back(bar);
            }
        }
    }
    return bars;
}

} // namespace shardscope
