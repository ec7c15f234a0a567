#pragma once

#include "core/memory.h"

#include <QString>
#include <vector>

namespace shardscope {

/// Which moment of the step the memory chart shows.
enum class PhaseView { Peak, Forward, Backward, OptimizerStep };

/// One bar of the memory chart: one rank, or a group of identical ranks.
struct RankBar
{
    QString label;     ///< axis label: "3", or "0-15" for a group
    int firstRank = 0;
    int ranks = 1;     ///< ranks this bar stands for
    int kind = 0;      ///< index into MemoryEstimate::ranks
    Phase phase = Phase::Forward;
    Breakdown bytes;   ///< allocated bytes by component at `phase`
    double reserve = 0; ///< runtime reserve of the rank
    double required() const { return bytes.total() + reserve; }
};

/// Expands the engine's kinds of rank into one bar per rank; with more than `maxBars` ranks
/// each kind becomes one labelled bar.
std::vector<RankBar> rankBars(const MemoryEstimate &memory, PhaseView view, int maxBars = 64);

} // namespace shardscope
