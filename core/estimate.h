#pragma once

#include "memory.h"
#include "plan.h"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace shardscope {

class Catalog;

/// One collective of a training step on one rank (plan-format.md `communication`).
struct Collective
{
    std::string collective; ///< "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send_recv"
    std::string group;      ///< "dp", "tp", "cp", "pp", "ep"
    int group_size = 1;
    double bytes = 0;          ///< message size S (nccl-tests convention: whole buffer)
    double count_per_step = 0;
    double time_s = 0;         ///< time of one call
    double exposed_time_s = 0; ///< per step, not hidden behind compute
    std::string phase;         ///< "forward", "backward", "optimizer_step"
    std::string note;          ///< what it carries, in English (see CommItem::note)
};

struct StepEstimate
{
    double compute_s = 0;
    double communication_s = 0; ///< exposed communication per step
    double bubble_s = 0;
    double offload_s = 0;
    double step_s = 0;
    double tokens_per_s = 0;
    double mfu = 0;
    double hfu = 0;
};

struct Estimate
{
    /// The vocabulary the framework trains (model.vocab padded, framework.h paddedVocab).
    int64_t padded_vocab = 0;
    MemoryEstimate memory;
    std::vector<Collective> communication;
    StepEstimate step;
};

/// Memory, communication and step time of a validated plan.
Estimate estimate(const Plan &plan, const Catalog &catalog);
/// The same, with the allocator replays of the rank kinds run by `forEach` (replayAllocator's
/// overload): a caller with idle cores runs them side by side; the outcome is the one above.
Estimate estimate(const Plan &plan, const Catalog &catalog, ForEachRank forEach);

/// Bytes of activations one micro-batch saves on the first stage when they are not offloaded
/// (what memory.offload.activations moves to the host and back); 0 when not offloading.
double activationOffloadBytesPerMicrobatch(const Plan &plan, const Catalog &catalog);
/// The same from the plan's estimate `me` and `kept`, the estimate of the plan with neither
/// activation offload nor swap-attention (a caller that has both saves estimating them again).
double activationOffloadBytesPerMicrobatch(const Plan &plan, const MemoryEstimate &me, const MemoryEstimate &kept);
/// Activations the first stage of `me` (an estimate without activation offload) holds for one
/// micro-batch at the end of forward.
double activationBytesPerMicrobatch(const Plan &plan, const MemoryEstimate &me);

/// The `shardscope-cli estimate --format json` object of plan-format.md.
nlohmann::json estimateToJson(const Plan &plan, const Estimate &e);

} // namespace shardscope
