#include "stateaccounting.h"

#include "adapters.h"
#include "model.h"
#include "optimizers.h"

#include <algorithm>
#include <cmath>

namespace shardscope {

RoughStateAccounting roughStateAccounting(const Plan &plan, const MemoryEstimate &memory)
{
    const Precision &pr = plan.precision;
    const Parallel &pa = plan.parallel;
    RoughStateAccounting a;
    a.parameters = double(countParameters(plan.model).total);
    const double P = a.parameters;
    // States per parameter in state-dtype units (8-bit, factored and paged optimizers: their
    // device bytes, see optimizers.h).
    const double nStates = optimizerStateBytesPerElement(pr) / bytesOf(pr.optimizer_state);
    const double master = (pr.master_weights != DType::None && pr.master_weights != pr.params)
                              ? bytesOf(pr.master_weights)
                              : 0.0;
    a.bytes_per_param =
        bytesOf(pr.params) + bytesOf(pr.grads) + master + nStates * bytesOf(pr.optimizer_state);
    a.params_bytes = P * bytesOf(pr.params);
    a.grads_bytes = P * bytesOf(pr.grads);
    a.master_bytes = P * master;
    a.optimizer_bytes = P * nStates * bytesOf(pr.optimizer_state);
    a.total_bytes = P * a.bytes_per_param;
    a.nominal_parameters = std::round(P / 1e9) * 1e9;
    a.nominal_differs = P > 0 && a.nominal_parameters > 0 &&
                        std::fabs(a.nominal_parameters - P) / P > 0.01;
    a.shard_ranks = std::max(1, pa.dp * pa.cp);
    a.fully_sharded_bytes = a.total_bytes / a.shard_ranks;
    a.layout_shards = pa.sharding != Sharding::None || pa.tp > 1 || pa.pp > 1;
    for (const RankMemory &r : memory.ranks) {
        const Breakdown &b = r.phases[size_t(Phase::OptimizerStep)];
        a.placed_bytes = std::max(a.placed_bytes, b[Component::Parameters] + b[Component::Gradients] +
                                                      b[Component::MasterWeights] +
                                                      b[Component::OptimizerStates]);
    }
    if (plan.training.method.method != TrainingMethod::Full) {
        a.trained_parameters = double(trainableParameters(plan));
        a.trained_states_bytes = a.trained_parameters * (a.bytes_per_param - bytesOf(pr.params));
    }
    return a;
}

} // namespace shardscope
