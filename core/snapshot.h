#pragma once

// A measured memory snapshot (torch.cuda.memory._dump_snapshot() / torch_npu's, converted to
// JSON by the worker: `shardscope_worker.py --convert-snapshot`, or written by the runner's
// memory probe), as allocated and reserved bytes over its trace, and placed on a predicted
// step's event axis phase by phase so the timeline view can overlay it.
#include "stepview.h"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace shardscope {

struct MeasuredMemory
{
    std::string source;
    std::vector<double> allocated; ///< after each trace entry, bytes
    std::vector<double> reserved;  ///< after each trace entry, bytes
    std::vector<double> time_us;   ///< each entry's time (empty when the trace has none)
    struct PhaseStart
    {
        Phase phase;
        double time_us;
    };
    std::vector<PhaseStart> phases; ///< the recorded step's phases, in order (may be empty)
    double end_us = 0;              ///< the recorded step's end (0: unknown)
    double peak_allocated = 0, peak_reserved = 0;
};

/// Reads the "shardscope-memory-snapshot" object; a PlanError names `file` and the field. The
/// running sums are anchored so that they end at the snapshot's segments (the trace may begin
/// after the first allocations: it is a ring buffer).
MeasuredMemory parseMemorySnapshot(const nlohmann::json &j, const std::string &file);
MeasuredMemory readMemorySnapshotFile(const std::string &path);

/// Each measured entry's position on `view`'s event axis (absolute event indices, fractional):
/// each recorded phase mapped linearly onto the predicted phase of the same name; entries
/// outside the recorded step (the first step, before) get -1. Without phases or times, the
/// whole trace is spread over the steady step.
std::vector<double> alignToStep(const MeasuredMemory &m, const StepView &view);

} // namespace shardscope
