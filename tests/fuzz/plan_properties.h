#pragma once

// What must hold for any byte string read as a plan file, checked by the fuzz target
// (fuzz_plan.cpp) and by the regression test that replays its findings (tst_plan_regressions.cpp):
// - parsing either gives a valid Plan or throws PlanError, never another exception or a crash;
// - a parsed plan passes validatePlan, and its estimate is made of finite, non-negative bytes and
//   times;
// - saving and loading again changes nothing: planToJson(parse(planToJson(p))) == planToJson(p).
// Plain C++ (no Qt), so that the fuzz build needs nothing but the core.
#include "core/catalog.h"
#include "core/errors.h"
#include "core/estimate.h"
#include "core/plan.h"

#include <cmath>
#include <exception>
#include <string>

namespace shardscope::fuzzing {

struct PlanCheck
{
    bool parsed = false;     ///< the text is a valid plan
    std::string errorField;  ///< PlanError::field() when it is not
    std::string error;       ///< PlanError::what() when it is not
    std::string violation;   ///< a broken property (empty when all hold)
};

inline bool finiteBytes(double v) { return std::isfinite(v) && v >= 0; }

inline std::string checkEstimate(const Estimate &e)
{
    if (e.memory.ranks.empty())
        return "estimate has no ranks";
    if (!finiteBytes(e.memory.hbm_bytes) || !finiteBytes(e.memory.peak_bytes))
        return "estimate peak or HBM bytes not finite";
    for (const RankMemory &r : e.memory.ranks) {
        if (!finiteBytes(r.peak_bytes) || !finiteBytes(r.reserve.total()))
            return "rank " + std::to_string(r.rank) + ": peak or reserve not finite";
        for (const Breakdown &b : r.phases) {
            for (double v : b.bytes) {
                if (!finiteBytes(v))
                    return "rank " + std::to_string(r.rank) + ": a component is " +
                           std::to_string(v) + " bytes";
            }
        }
    }
    const HostMemory &h = e.memory.host;
    if (!finiteBytes(h.pinned_per_node) || !finiteBytes(h.pageable_per_node) ||
        !finiteBytes(e.memory.usable_bytes))
        return "host memory or usable bytes not finite or negative";
    if (e.memory.fits != (e.memory.hbm_fits && h.fits))
        return "fits is not hbm_fits and host.fits";
    for (const Collective &c : e.communication) {
        if (!finiteBytes(c.bytes) || !finiteBytes(c.time_s) || !finiteBytes(c.exposed_time_s))
            return "collective " + c.collective + " over " + c.group + ": bytes or time not finite";
    }
    const StepEstimate &s = e.step;
    for (double v : {s.compute_s, s.communication_s, s.bubble_s, s.offload_s, s.step_s,
                     s.tokens_per_s, s.mfu, s.hfu}) {
        if (!finiteBytes(v))
            return "step estimate not finite: " + std::to_string(v);
    }
    return {};
}

inline PlanCheck checkPlanText(const std::string &text, const Catalog &catalog)
{
    PlanCheck out;
    Plan plan;
    try {
        plan = parsePlanText(text, catalog);
    } catch (const PlanError &e) {
        out.errorField = e.field();
        out.error = e.what();
        return out;
    } catch (const std::exception &e) {
        out.violation = std::string("parsePlanText threw a non-PlanError: ") + e.what();
        return out;
    }
    out.parsed = true;
    try {
        validatePlan(plan, catalog);
    } catch (const std::exception &e) {
        out.violation = std::string("a parsed plan fails validatePlan: ") + e.what();
        return out;
    }
    try {
        const Estimate e = estimate(plan, catalog);
        out.violation = checkEstimate(e);
        if (!out.violation.empty())
            return out;
        (void)estimateToJson(plan, e).dump();
    } catch (const std::exception &e) {
        out.violation = std::string("estimate of a valid plan threw: ") + e.what();
        return out;
    }
    try {
        const nlohmann::json saved = planToJson(plan);
        const nlohmann::json again = planToJson(parsePlan(saved, catalog));
        if (again != saved)
            out.violation = "save, load, save changes the plan:\n" + saved.dump() + "\n" +
                            again.dump();
    } catch (const std::exception &e) {
        out.violation = std::string("a saved plan does not load again: ") + e.what();
    }
    return out;
}

} // namespace shardscope::fuzzing
