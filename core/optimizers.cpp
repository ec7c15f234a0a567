#include "optimizers.h"

#include <algorithm>

namespace shardscope {

bool structuredOptimizer(const Precision &pr)
{
    switch (pr.optimizer) {
    case Optimizer::Adafactor:
    case Optimizer::AdamW8bit:
    case Optimizer::PagedAdamW:
    case Optimizer::PagedAdamW8bit:
    case Optimizer::Muon:
        return true;
    case Optimizer::SGD:
        return !pr.momentum;
    default:
        return false;
    }
}

namespace {

/// bitsandbytes' block-wise 8-bit states: two 1-byte states and an fp32 absmax per 2048
/// elements each; tensors below min_8bit_size (4096 elements) keep two fp32 states.
double eightBitStates(const StageElements &e)
{
    const double elements = e.trained();
    const double small = std::min(elements, e.trainedSmallTensors);
    return (elements - small) * 2.0 * (1.0 + 4.0 / 2048.0) + small * 2.0 * 4.0;
}

} // namespace

OptimizerMemory optimizerMemory(const Precision &pr, const StageElements &e, double workBytes)
{
    OptimizerMemory m;
    const double s = bytesOf(pr.optimizer_state);
    const double elements = e.trained();
    switch (pr.optimizer) {
    case Optimizer::SGD:
        if (pr.momentum) {
            m.states = elements * s;
            m.temp = elements * workBytes;
        }
        break;
    case Optimizer::Adafactor:
        m.states = (e.trainedMatrixEdges + e.trainedVectors + (pr.first_moment ? elements : 0.0)) * s;
        m.temp = 4.0 * std::max(e.largestTrainedMatrix, 1.0) * 4.0;
        break;
    case Optimizer::AdamW8bit:
        m.states = eightBitStates(e);
        break;
    case Optimizer::PagedAdamW:
        m.hostStates = elements * 2.0 * s;
        break;
    case Optimizer::PagedAdamW8bit:
        m.hostStates = eightBitStates(e);
        break;
    case Optimizer::Muon: {
        const double hidden = std::min(elements, e.trainedHiddenMatrices);
        m.states = hidden * s + (elements - hidden) * 2.0 * s;
        m.temp = 2.0 * e.largestTrainedMatrix * 2.0 + 3.0 * e.largestTrainedSquare * 2.0;
        break;
    }
    default:
        m.states = elements * optimizerStateCount(pr.optimizer) * s;
        break;
    }
    return m;
}

double optimizerStateBytesPerElement(const Precision &pr)
{
    const double s = bytesOf(pr.optimizer_state);
    switch (pr.optimizer) {
    case Optimizer::SGD: return pr.momentum ? s : 0.0;
    case Optimizer::Adafactor: return 0.0;
    case Optimizer::AdamW8bit: return 2.0;
    case Optimizer::PagedAdamW:
    case Optimizer::PagedAdamW8bit: return 0.0;
    case Optimizer::Muon: return s;
    default: return optimizerStateCount(pr.optimizer) * s;
    }
}

} // namespace shardscope
