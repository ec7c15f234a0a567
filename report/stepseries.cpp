#include "stepseries.h"

#include <QCoreApplication>
#include <QStringList>
#include <algorithm>
#include <map>

namespace shardscope {

namespace {

// Layer indices of core/timeline.cpp's tensors beyond the decoder layers.
constexpr int kNoLayer = -1;
constexpr int kHead = -2;     ///< the root module's tensors: embedding, final norm, head
constexpr int kRootRest = -3; ///< the root's other gradients (the embedding's)

double valueOf(const StepView &v, int event, bool reserved)
{
    return reserved ? double(v.reserved[size_t(event)]) : stepTotal(v, event);
}

/// The root module's whole parameter set (not only the head) is named by kHead for these.
bool rootWide(TensorKind k)
{
    switch (k) {
    case TensorKind::Parameter:
    case TensorKind::MasterWeight:
    case TensorKind::OptimizerState:
    case TensorKind::GatheredRoot:
    case TensorKind::ReduceScatterInput:
        return true;
    default:
        return false;
    }
}

QString specialLayer(TensorKind kind, int layer)
{
    if (layer == kHead)
        return rootWide(kind) ? QCoreApplication::translate("StepSeries", "root module")
                              : QCoreApplication::translate("StepSeries", "head");
    if (layer == kRootRest)
        return QCoreApplication::translate("StepSeries", "embedding");
    return QStringLiteral("-");
}

} // namespace

double stepTotal(const StepView &view, int event)
{
    double t = 0;
    for (float b : view.live[size_t(event)])
        t += double(b);
    return t;
}

std::vector<StepSample> stepSamples(const StepView &view, int columns, bool reserved)
{
    const int n = int(view.live.size());
    std::vector<StepSample> out;
    if (n == 0 || (reserved && view.reserved.size() < size_t(n)))
        return out;
    columns = std::max(columns, 1);
    if (n <= columns) {
        out.reserve(size_t(n));
        for (int i = 0; i < n; ++i)
            out.push_back({i, double(i), double(i + 1)});
        return out;
    }
    out.reserve(size_t(2 * columns));
    for (int c = 0; c < columns; ++c) {
        const int a = int((long long)c * n / columns);
        const int b = int((long long)(c + 1) * n / columns);
        if (b <= a)
            continue;
        int lo = a, hi = a;
        double vlo = valueOf(view, a, reserved), vhi = vlo;
        for (int i = a + 1; i < b; ++i) {
            const double x = valueOf(view, i, reserved);
            if (x < vlo) {
                vlo = x;
                lo = i;
            }
            if (x > vhi) {
                vhi = x;
                hi = i;
            }
        }
        if (lo == hi) {
            out.push_back({lo, double(a), double(b)});
            continue;
        }
        const double mid = 0.5 * (a + b);
        const int first = std::min(lo, hi), second = std::max(lo, hi);
        out.push_back({first, double(a), mid});
        out.push_back({second, mid, double(b)});
    }
    return out;
}

std::vector<PeakGroup> peakGroups(const StepView &view)
{
    std::vector<PeakGroup> groups;
    std::map<std::pair<int, int>, size_t> index;
    for (int t : view.alive_at_peak) { // largest first
        const TimelineTensor &tt = view.timeline.tensors[size_t(t)];
        const auto key = std::make_pair(int(tt.kind), int(tt.unit));
        auto it = index.find(key);
        if (it == index.end()) {
            it = index.emplace(key, groups.size()).first;
            PeakGroup g;
            g.kind = tt.kind;
            g.unit = tt.unit;
            g.largest = t;
            groups.push_back(g);
        }
        PeakGroup &g = groups[it->second];
        g.tensors += 1;
        g.bytes += tt.bytes;
        if (std::find(g.layers.begin(), g.layers.end(), int(tt.layer)) == g.layers.end())
            g.layers.push_back(tt.layer);
    }
    for (PeakGroup &g : groups)
        std::sort(g.layers.begin(), g.layers.end());
    std::stable_sort(groups.begin(), groups.end(),
                     [](const PeakGroup &a, const PeakGroup &b) { return a.bytes > b.bytes; });
    return groups;
}

QString tensorKindName(TensorKind kind)
{
    switch (kind) {
    case TensorKind::Parameter: return QCoreApplication::translate("TensorKind", "Parameter");
    case TensorKind::MasterWeight: return QCoreApplication::translate("TensorKind", "Master weight");
    case TensorKind::OptimizerState: return QCoreApplication::translate("TensorKind", "Optimizer state");
    case TensorKind::Gradient: return QCoreApplication::translate("TensorKind", "Gradient");
    case TensorKind::PersistentGradients: return QCoreApplication::translate("TensorKind", "Gradient buffer");
    case TensorKind::ComputeCopy: return QCoreApplication::translate("TensorKind", "Autocast weight copy");
    case TensorKind::SavedActivations: return QCoreApplication::translate("TensorKind", "Saved activations");
    case TensorKind::HeadActivations: return QCoreApplication::translate("TensorKind", "Final norm and head inputs");
    case TensorKind::NormOutput: return QCoreApplication::translate("TensorKind", "Final norm output");
    case TensorKind::Logits: return QCoreApplication::translate("TensorKind", "Logits and loss");
    case TensorKind::LossGradients: return QCoreApplication::translate("TensorKind", "Loss gradients");
    case TensorKind::ForwardWorkingSet: return QCoreApplication::translate("TensorKind", "Forward working set");
    case TensorKind::RecomputedLayer: return QCoreApplication::translate("TensorKind", "Recomputed layer");
    case TensorKind::BackwardWorkingSet: return QCoreApplication::translate("TensorKind", "Backward working set");
    case TensorKind::AllGatherBuffer: return QCoreApplication::translate("TensorKind", "All-gather buffer");
    case TensorKind::GatheredLayer: return QCoreApplication::translate("TensorKind", "Gathered layer");
    case TensorKind::GatheredRoot: return QCoreApplication::translate("TensorKind", "Gathered root module");
    case TensorKind::UnshardedGradients: return QCoreApplication::translate("TensorKind", "Unsharded gradients");
    case TensorKind::ReduceScatterInput: return QCoreApplication::translate("TensorKind", "Reduce-scatter input");
    case TensorKind::DdpBucket: return QCoreApplication::translate("TensorKind", "DDP bucket");
    case TensorKind::ReduceBucket: return QCoreApplication::translate("TensorKind", "Reduce bucket");
    case TensorKind::PipelineBuffer: return QCoreApplication::translate("TensorKind", "Pipeline send/recv buffer");
    case TensorKind::OptimizerTemporary: return QCoreApplication::translate("TensorKind", "Optimizer temporary");
    case TensorKind::GemmWorkspace:
        return QCoreApplication::translate("TensorKind", "GEMM library workspace");
    case TensorKind::SpGatherBuffer:
        return QCoreApplication::translate("TensorKind", "Sequence-parallel all-gather buffer");
    case TensorKind::PipelineInput:
        return QCoreApplication::translate("TensorKind", "Model chunk's last input and its gradient");
    case TensorKind::Count: break;
    }
    return {};
}

QString tensorLayerText(TensorKind kind, int layer)
{
    return layer >= 0 ? QString::number(layer) : specialLayer(kind, layer);
}

QString tensorLayerText(TensorKind kind, const std::vector<int> &layers)
{
    QStringList parts;
    QStringList special;
    size_t i = 0;
    while (i < layers.size()) {
        if (layers[i] < 0) {
            if (layers[i] != kNoLayer || layers.size() == 1)
                special << specialLayer(kind, layers[i]);
            ++i;
            continue;
        }
        size_t j = i;
        while (j + 1 < layers.size() && layers[j + 1] == layers[j] + 1)
            ++j;
        parts << (j == i ? QString::number(layers[i])
                         : QStringLiteral("%1-%2").arg(layers[i]).arg(layers[j]));
        i = j + 1;
    }
    // Decoder layers first, then the head / root module / embedding.
    parts << special;
    return parts.isEmpty() ? QStringLiteral("-") : parts.join(QStringLiteral(", "));
}

QString tensorUnitText(int unit)
{
    return unit >= 0 ? QString::number(unit) : QStringLiteral("-");
}

std::vector<PhaseBand> phaseBands(const StepView &v, int n, const std::function<double(double)> &xOf,
                                  const QStringList &names, const QFontMetricsF &fm, double left,
                                  double right, double labelTop, double labelHeight, double gap,
                                  double inset)
{
    const size_t count = v.phases.size();
    std::vector<PhaseBand> bands(count);
    for (size_t j = 0; j < count; ++j) {
        PhaseBand &b = bands[j];
        b.phase = v.phases[j].phase;
        const int from = std::clamp(v.phases[j].event - v.first, 0, n);
        const int to = j + 1 < count ? std::clamp(v.phases[j + 1].event - v.first, 0, n) : n;
        b.x0 = xOf(from);
        b.x1 = xOf(to);
        b.name = names.value(int(j));
        const double w = fm.horizontalAdvance(b.name) + 2;
        const double x = std::clamp(0.5 * (b.x0 + b.x1) - w / 2, left, std::max(left, right - w));
        b.label = QRectF(x, labelTop, w, labelHeight);
    }
    for (size_t j = 1; j < count; ++j) {
        if (bands[j].label.left() < bands[j - 1].label.right() + gap) {
            PhaseBand &narrow = bands[j].x1 - bands[j].x0 < bands[j - 1].x1 - bands[j - 1].x0 ? bands[j] : bands[j - 1];
            const double w = std::max(0.0, narrow.x1 - narrow.x0 - 2 * inset);
            narrow.name = fm.elidedText(narrow.name, Qt::ElideRight, w);
            narrow.label = QRectF(narrow.x0 + inset, labelTop, w, labelHeight);
        }
    }
    return bands;
}

} // namespace shardscope
