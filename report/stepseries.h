#pragma once

// What the workbench's "Memory over the step" view and the report's figure of it share: which of
// a StepView's events to draw at a given width (min and max per column, so that no peak is lost),
// the tensors alive at the peak grouped for a table, and their translated names. Drawing helpers
// only: every byte comes from core/stepview.h.
#include "core/stepview.h"

#include <QFontMetricsF>
#include <QRectF>
#include <QString>
#include <QStringList>
#include <functional>
#include <vector>

namespace shardscope {

/// One drawn step of a series: the value after steady event `event` (relative to
/// StepView::first) held from x0 to x1, in event units (the steady step spans 0 .. n).
struct StepSample
{
    int event = 0;
    double x0 = 0, x1 = 0;
};

/// The samples of the allocated total (`reserved` false) or of the reserved bytes, in time
/// order, for `columns` columns: every event when the step has no more events than columns,
/// otherwise for each column the events of its lowest and of its highest value, so that the
/// drawn series reaches every peak the full one does.
std::vector<StepSample> stepSamples(const StepView &view, int columns, bool reserved);

/// Allocated bytes after steady event `event` (relative to StepView::first), all components.
double stepTotal(const StepView &view, int event);

/// Tensors of one kind and micro-batch alive at the peak.
struct PeakGroup
{
    TensorKind kind = TensorKind::Parameter;
    int unit = -1;           ///< micro-batch (model chunk under interleaving), -1: step-wide
    std::vector<int> layers; ///< distinct layers on the stage, ascending (-3, -2, -1 first)
    int tensors = 0;
    double bytes = 0;
    int largest = -1;        ///< index into StepTimeline::tensors of its largest tensor
};

/// StepView::alive_at_peak grouped by kind and micro-batch, largest group first (a tie keeps
/// the group of the larger tensor first).
std::vector<PeakGroup> peakGroups(const StepView &view);

/// One phase band of the steady step, drawn from x0 to x1, and its name's place above the plot.
struct PhaseBand
{
    Phase phase = Phase::Forward;
    double x0 = 0, x1 = 0;
    QString name;
    QRectF label;
};
/// The steady step's phases as bands (`xOf`: relative event -> x; the step spans 0 .. n), each
/// name centred over its band within [left, right] at `labelTop` (`labelHeight` tall); of two
/// names that overlap (closer than `gap`), the narrower band's is elided into it (`inset` from
/// its left edge).
std::vector<PhaseBand> phaseBands(const StepView &view, int n, const std::function<double(double)> &xOf,
                                  const QStringList &names, const QFontMetricsF &fm, double left,
                                  double right, double labelTop, double labelHeight, double gap,
                                  double inset);

/// The translated name of a tensor kind (in English, tensorKindLabel()).
QString tensorKindName(TensorKind kind);
/// "12", "0-31", "head", "0-31, root module", "-" for the layers a group or tensor spans.
QString tensorLayerText(TensorKind kind, const std::vector<int> &layers);
QString tensorLayerText(TensorKind kind, int layer);
/// "0", or "-" for a step-wide tensor.
QString tensorUnitText(int unit);

} // namespace shardscope
