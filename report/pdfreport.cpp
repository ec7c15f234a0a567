#include "pdfreport.h"

#include "core/files.h"

#include "core/adapters.h"
#include "core/catalog.h"
#include "core/errors.h"
#include "core/estimate.h"
#include "core/memory.h"
#include "core/model.h"
#include "core/stateaccounting.h"
#include "core/stepview.h"
#include "core/units.h"
#include "i18n/enginetext.h"
#include "reportcanvas.h"
#include "stepseries.h"
#include "shardscope_config.h"

#include <QBuffer>
#include <QCoreApplication>
#include <QPdfWriter>
#include <algorithm>
#include <cmath>

namespace shardscope {

namespace {

// A plan's section starts on the current page when this share of a page is left there;
// between two sections, this much space (points).
constexpr double kSectionStartFraction = 0.4;
constexpr double kSectionGap = 18;

QString qs(std::string_view s)
{
    return QString::fromUtf8(s.data(), qsizetype(s.size()));
}

QString gib(double bytes)
{
    return qs(formatGiB(bytes));
}

QString num(double v, int decimals)
{
    return qs(formatFixed(v, decimals));
}

/// A whole count with thousands separators ("20,480").
QString grouped(double v)
{
    return qs(formatCount(std::llround(v)));
}

/// A percentage whose sign stays with its number (a no-break space before "%").
QString percent(double fraction)
{
    return num(100 * fraction, 1) + QChar(0x00A0) + QLatin1Char('%');
}

/// One plan with its estimate, evaluated once for every page that shows it.
struct Evaluated
{
    const ReportPlan *source = nullptr;
    Estimate estimate;
    const DeviceProfile *device = nullptr;
    const FrameworkProfile *framework = nullptr;
    size_t worst = 0; ///< index of the rank kind that needs the most on the device
    double need = 0;  ///< its peak allocated + runtime reserve
    double hbm = 0;
};

Evaluated evaluate(const ReportPlan &rp, const Catalog &catalog)
{
    Evaluated ev;
    ev.source = &rp;
    ev.device = catalog.device(rp.plan.cluster.device);
    if (!ev.device)
        throw PlanError("cluster.device",
                        "unknown device profile \"" + rp.plan.cluster.device + "\"");
    ev.framework = catalog.framework(rp.plan.framework);
    if (!ev.framework)
        throw PlanError("framework", "unknown framework profile \"" + rp.plan.framework + "\"");
    ev.estimate = estimate(rp.plan, catalog);
    ev.hbm = ev.estimate.memory.hbm_bytes;
    if (const RankMemory *w = worstRank(ev.estimate.memory)) {
        ev.need = w->peak_bytes + w->reserve.total();
        ev.worst = size_t(w - ev.estimate.memory.ranks.data());
    }
    return ev;
}

/// The report's text and layout. Everything a reader sees is translated here.
class ReportWriter
{
    Q_DECLARE_TR_FUNCTIONS(PdfReport)

public:
    ReportWriter(ReportCanvas &canvas, const Catalog &catalog, const ReportOptions &options)
        : m_canvas(canvas), m_catalog(catalog), m_options(options)
    {
    }

    void titleBlock(int planCount)
    {
        m_canvas.title(m_options.title.isEmpty() ? tr("ShardScope plan report") : m_options.title);
        m_canvas.paragraph(tr("%n plan(s); ShardScope %1; generated %2.", "", planCount)
                               .arg(QStringLiteral(SHARDSCOPE_VERSION), generatedText()),
                           ReportCanvas::Small, ReportCanvas::muted());
        m_canvas.space(6);
    }

    QString footerText() const
    {
        return tr("ShardScope %1 plan report, generated %2")
            .arg(QStringLiteral(SHARDSCOPE_VERSION), generatedText());
    }

    static QString pageText(int page) { return tr("Page %1").arg(page); }

    static QString titleOf(const ReportPlan &p)
    {
        return p.title.isEmpty() ? qs(p.plan.name) : p.title;
    }

    void comparison(const std::vector<Evaluated> &plans)
    {
        m_canvas.heading(tr("Comparison of %n plans", "", int(plans.size())));
        std::vector<ReportCanvas::Bar> bars;
        for (size_t i = 0; i < plans.size(); ++i) {
            const Evaluated &ev = plans[i];
            const RankMemory &r = ev.estimate.memory.ranks[ev.worst];
            ReportCanvas::Bar bar;
            bar.label = planTag(i);
            bar.components = r.peak().bytes;
            bar.reserve = r.reserve.total();
            bar.capacity = ev.hbm;
            bar.usable = ev.estimate.memory.usable_bytes;
            bar.emphasis = true;
            bars.push_back(bar);
        }
        m_canvas.stackedBars(bars, barLabels());
        m_canvas.paragraph(
            tr("Each bar is the fullest rank of a plan at its peak, with the runtime "
               "reserve hatched. The solid line is the HBM capacity, the dashed line "
               "what remains usable after the largest runtime reserve."),
            ReportCanvas::Small, ReportCanvas::muted());
        m_canvas.space(4);

        const double labelFraction = 0.22;
        std::vector<double> widths{labelFraction};
        for (size_t i = 0; i < plans.size(); ++i)
            widths.push_back((1.0 - labelFraction) / double(plans.size()));
        ReportCanvas::Row header{ReportCanvas::Cell{}};
        for (size_t i = 0; i < plans.size(); ++i)
            header.push_back(ReportCanvas::Cell{planTag(i) + QStringLiteral(": ") +
                                                titleOf(*plans[i].source)});
        std::vector<ReportCanvas::Row> rows;
        auto addRow = [&](const QString &label, auto &&value) {
            ReportCanvas::Row row{ReportCanvas::Cell{label}};
            row.front().bold = true;
            for (const Evaluated &ev : plans)
                row.push_back(value(ev));
            rows.push_back(std::move(row));
        };
        addRow(tr("Verdict"), [&](const Evaluated &ev) {
            ReportCanvas::Cell c{verdictWord(ev)};
            c.bold = true;
            c.color = ev.estimate.memory.fits ? ReportCanvas::good() : ReportCanvas::bad();
            return c;
        });
        addRow(tr("Layout"), [&](const Evaluated &ev) {
            return ReportCanvas::Cell{layoutText(ev.source->plan)};
        });
        addRow(tr("Tokens"), [&](const Evaluated &ev) {
            return ReportCanvas::Cell{tokensText(ev.source->plan)};
        });
        addRow(tr("Memory options"), [&](const Evaluated &ev) {
            return ReportCanvas::Cell{memoryOptionsText(ev.source->plan)};
        });
        addRow(tr("Device"), [&](const Evaluated &ev) {
            return ReportCanvas::Cell{qs(ev.device->name) + QStringLiteral(", ") + gib(ev.hbm)};
        });
        for (int c = 0; c < kComponentCount; ++c) {
            addRow(componentName(c), [&](const Evaluated &ev) {
                return numberCell(gib(ev.estimate.memory.ranks[ev.worst].peak().bytes[size_t(c)]));
            });
        }
        addRow(tr("Peak allocated"), [&](const Evaluated &ev) {
            return numberCell(gib(ev.estimate.memory.ranks[ev.worst].peak_bytes), true);
        });
        addRow(tr("Runtime reserve"), [&](const Evaluated &ev) {
            return numberCell(gib(ev.estimate.memory.ranks[ev.worst].reserve.total()));
        });
        addRow(tr("Total on device"),
               [&](const Evaluated &ev) { return numberCell(gib(ev.need), true); });
        addRow(tr("Headroom"), [&](const Evaluated &ev) {
            ReportCanvas::Cell c =
                numberCell(ev.need <= ev.hbm ? gib(ev.hbm - ev.need)
                                             : tr("over by %1").arg(gib(ev.need - ev.hbm)));
            c.color = ev.need <= ev.hbm ? ReportCanvas::good() : ReportCanvas::bad();
            return c;
        });
        addRow(tr("Step time"), [&](const Evaluated &ev) {
            return numberCell(ev.estimate.step.step_s > 0
                                  ? qs(formatSeconds(ev.estimate.step.step_s))
                                  : tr("not estimated"));
        });
        addRow(tr("Tokens/s"), [&](const Evaluated &ev) {
            return numberCell(ev.estimate.step.tokens_per_s > 0
                                  ? grouped(ev.estimate.step.tokens_per_s)
                                  : tr("not estimated"));
        });
        addRow(tr("MFU"), [&](const Evaluated &ev) {
            return numberCell(ev.estimate.step.mfu > 0
                                  ? percent(ev.estimate.step.mfu)
                                  : tr("not estimated"));
        });
        m_canvas.table(widths, header, rows, ReportCanvas::Small);
        m_canvas.paragraph(
            tr("Memory of the fullest rank of each plan at its peak phase. GiB = 2^30 bytes."),
            ReportCanvas::Small, ReportCanvas::muted());
    }

    void plan(const Evaluated &ev, size_t index, size_t count)
    {
        const Plan &plan = ev.source->plan;
        const MemoryEstimate &mem = ev.estimate.memory;
        const QString title = titleOf(*ev.source);
        m_canvas.title(count > 1 ? tr("%1: %2").arg(planTag(index), title) : title);
        if (!ev.source->source.isEmpty())
            m_canvas.paragraph(ev.source->source, ReportCanvas::Small, ReportCanvas::muted());

        // Verdict first.
        const RankMemory &w = mem.ranks[ev.worst];
        QString detail;
        if (ev.need <= ev.hbm) {
            detail =
                tr("Every rank fits. The fullest (%1) needs %2 allocated at its peak in %3 plus "
                   "%4 runtime reserve: %5 of %6 HBM, leaving %7.")
                    .arg(rankRange(w), gib(w.peak_bytes), phaseName(w.peak_phase),
                         gib(w.reserve.total()), gib(ev.need), gib(ev.hbm), gib(ev.hbm - ev.need));
        } else {
            QString who = rankRange(w);
            who[0] = who.at(0).toUpper();
            detail =
                tr("%1 need %2 allocated at the peak in %3 plus %4 runtime reserve: %5 of %6 HBM, "
                   "over by %7.")
                    .arg(who, gib(w.peak_bytes), phaseName(w.peak_phase), gib(w.reserve.total()),
                         gib(ev.need), gib(ev.hbm), gib(ev.need - ev.hbm));
        }
        if (ev.estimate.step.step_s > 0)
            detail += QLatin1Char(' ') + tr("Step %1, %2 tokens/s, MFU %3.")
                                             .arg(qs(formatSeconds(ev.estimate.step.step_s)),
                                                  grouped(ev.estimate.step.tokens_per_s),
                                                  percent(ev.estimate.step.mfu));
        m_canvas.verdict(mem.fits, verdictWord(ev), detail);

        // Plan summary.
        m_canvas.heading(tr("Plan"));
        const ParameterCounts pc = countParameters(plan.model);
        const auto &m = plan.model;
        const auto &pr = plan.precision;
        QString model =
            tr("%1, %2 parameters: %3 layers, hidden %4, %5 heads (%6 KV), FFN %7 (%8), vocabulary "
               "%9")
                .arg(qs(m.preset.empty() ? m.display_name : m.preset), qs(formatCount(pc.total)),
                     QString::number(m.layers), QString::number(m.hidden), QString::number(m.heads),
                     QString::number(m.kv_heads), QString::number(m.ffn_hidden),
                     qs(toString(m.ffn)), QString::number(m.vocab));
        if (m.mla_attention())
            model += QStringLiteral("; ") + tr("multi-head latent attention: q rank %1, kv rank %2, "
                                               "q/k head %3 + %4, v head %5")
                                                .arg(m.mla.q_lora_rank)
                                                .arg(m.mla.kv_lora_rank)
                                                .arg(m.mla.qk_nope_head_dim)
                                                .arg(m.mla.qk_rope_head_dim)
                                                .arg(m.mla.v_head_dim);
        if (m.qk_norm)
            model += QStringLiteral("; ") + tr("QK norms");
        if (m.moe.enabled()) {
            model += QStringLiteral("; ") + tr("%1 experts, top-%2, expert FFN %3")
                                                .arg(m.moe.experts)
                                                .arg(m.moe.top_k)
                                                .arg(m.moe.expert_ffn_hidden);
            if (m.moe.shared_experts > 0)
                model += QStringLiteral(", ") + tr("%1 shared of %2").arg(m.moe.shared_experts)
                                                     .arg(m.moe.shared_expert_ffn_hidden);
            model += QStringLiteral(", ") + tr("MoE in %1 of %2 layers").arg(pc.moe_layers).arg(m.layers);
        }
        if (m.mtp_layers > 0)
            model += QStringLiteral("; ") + tr("%1 MTP module(s)").arg(m.mtp_layers);
        if (m.norm == NormKind::LayerNorm || m.linear_bias ||
            m.position_embedding == PositionEmbedding::Learned)
            model += QStringLiteral("; ") + tr("%1, %2, %3")
                                                .arg(m.norm == NormKind::LayerNorm ? tr("LayerNorm") : tr("RMSNorm"),
                                                     m.linear_bias ? tr("biases on every linear") : tr("no linear biases"),
                                                     m.position_embedding == PositionEmbedding::Learned
                                                         ? tr("learned positions (%1)").arg(m.max_positions)
                                                         : tr("RoPE"));
        std::vector<std::pair<QString, QString>> summary{
            {tr("Model"), model},
            {tr("Tokens"), tokensText(plan)},
            {tr("Training method"), methodText(plan)},
            {tr("Layout"), layoutText(plan)},
            {tr("Memory options"), memoryOptionsText(plan)},
            {tr("Precision"),
             tr("parameters %1, gradients %2, master weights %3, %4 states %5, compute %6")
                 .arg(qs(toString(pr.params)), qs(toString(pr.grads)),
                      qs(toString(pr.master_weights)), qs(toString(pr.optimizer)),
                      qs(toString(pr.optimizer_state)), qs(toString(pr.compute)))},
            {tr("Framework"),
             qs(ev.framework->name) + QStringLiteral(" (") + qs(plan.framework) + QLatin1Char(')')},
            {tr("Cluster"), tr("%1 x %2 per node x %3 node(s), %4 ranks")
                                .arg(qs(ev.device->name))
                                .arg(plan.cluster.devices_per_node)
                                .arg(plan.cluster.nodes)
                                .arg(plan.cluster.world())},
        };
        m_canvas.keyValues(summary);
        roughStates(plan, mem);

        // Per-rank stacked bars.
        m_canvas.heading(tr("Memory per rank"));
        std::vector<ReportCanvas::Bar> bars;
        for (const RankMemory &r : mem.ranks) {
            for (int p = 0; p < kPhaseCount; ++p) {
                ReportCanvas::Bar bar;
                bar.label = tr("%1, %2").arg(rankRange(r), phaseName(Phase(p)));
                bar.components = r.phases[size_t(p)].bytes;
                bar.reserve = r.reserve.total();
                bar.capacity = ev.hbm;
                bar.usable = mem.usable_bytes;
                bar.emphasis = Phase(p) == r.peak_phase;
                bars.push_back(bar);
            }
        }
        m_canvas.stackedBars(bars, barLabels());
        m_canvas.paragraph(
            tr("Peak of each phase of one steady-state step; the bold label is the rank's "
               "peak. Solid line: HBM capacity (%1). Dashed line: usable after the "
               "largest runtime reserve (%2).")
                .arg(gib(ev.hbm), gib(mem.usable_bytes)),
            ReportCanvas::Small, ReportCanvas::muted());

        stepTimeline(ev);

        // Components, by phase and with their formulas.
        for (const RankMemory &r : mem.ranks)
            rankTables(plan, r);

        collectives(ev);
    }

    /// Every device profile the plans use, once, with its sources.
    void deviceAppendix(const std::vector<Evaluated> &plans)
    {
        std::vector<const DeviceProfile *> devices;
        for (const Evaluated &ev : plans)
            if (std::find(devices.begin(), devices.end(), ev.device) == devices.end())
                devices.push_back(ev.device);
        m_canvas.title(devices.size() == 1 ? tr("Appendix: the device profile")
                                           : tr("Appendix: the device profiles"));
        m_canvas.paragraph(tr("The figures the estimates above rest on, and where they come from."),
                           ReportCanvas::Small, ReportCanvas::muted());
        for (const DeviceProfile *d : devices)
            deviceProfile(*d);
    }

private:
    /// The count a reader does first (the CLI's "Rough model-state accounting"), beside the
    /// engine's full one that follows.
    void roughStates(const Plan &plan, const MemoryEstimate &mem)
    {
        const RoughStateAccounting a = roughStateAccounting(plan, mem);
        if (a.parameters <= 0)
            return;
        m_canvas.subheading(tr("Model states, counted roughly"));
        auto gb = [](double bytes, int decimals) { return qs(formatGB(bytes, decimals)); };
        auto sum = [&](double scale) {
            auto part = [&](double bytes) { return num(bytes * scale / kGB, scale == 1 ? 1 : 0); };
            return tr("%1 + %2 + %3 + %4 = %5")
                .arg(part(a.params_bytes), part(a.grads_bytes), part(a.master_bytes),
                     part(a.optimizer_bytes), gb(a.total_bytes * scale, scale == 1 ? 1 : 0));
        };
        QString text = tr("Parameters + gradients + master weights + optimizer states, %1 bytes "
                          "per parameter: %2 per rank unsharded.")
                           .arg(num(a.bytes_per_param, 0), sum(1));
        const double nominalScale = a.nominal_parameters / a.parameters;
        if (a.nominal_differs)
            text += QLatin1Char(' ') + tr("At a nominal %1B parameters: %2.")
                                           .arg(num(a.nominal_parameters / 1e9, 0), sum(nominalScale));
        if (a.shard_ranks > 1) {
            text += QLatin1Char(' ') +
                    tr("Fully sharded over dp x cp = %1 ranks: about %2 per rank.")
                        .arg(a.shard_ranks)
                        .arg(gb(a.nominal_differs ? a.nominal(a.fully_sharded_bytes)
                                                  : a.fully_sharded_bytes,
                                a.nominal_differs ? 0 : 1));
        }
        if (a.layout_shards)
            text += QLatin1Char(' ') + tr("This layout places %1 of them on its fullest rank.")
                                           .arg(gb(a.placed_bytes, 1));
        if (a.trained_parameters > 0)
            text += QLatin1Char(' ') +
                    tr("Only %1 parameters are trained: their gradients and optimizer states "
                       "take %2.")
                        .arg(grouped(a.trained_parameters), gb(a.trained_states_bytes, 1));
        m_canvas.paragraph(text, ReportCanvas::Body);
        m_canvas.paragraph(tr("That count leaves out activations, logits and loss, communication "
                              "buffers, optimizer temporaries and the runtime reserve; the full "
                              "accounting follows."),
                           ReportCanvas::Small, ReportCanvas::muted());
    }

    /// The fullest rank's steady step over its allocations, and what is alive at its peak.
    void stepTimeline(const Evaluated &ev)
    {
        static constexpr int kTensorRows = 8;
        const Plan &plan = ev.source->plan;
        const MemoryEstimate &mem = ev.estimate.memory;
        const RankMemory &r = mem.ranks[ev.worst];
        const StepView v = stepView(plan, m_catalog, r.stage);
        if (v.live.empty() || v.peak_event < 0)
            return;
        const TimelineTensor &at =
            v.timeline.tensors[size_t(v.timeline.events[size_t(v.peak_event)].tensor)];
        Phase phase = at.phase;
        for (const PhaseMark &m : v.phases)
            if (m.event <= v.peak_event)
                phase = m.phase;
        QString who = rankRange(r);
        if (mem.ranks.size() > 1 && ev.source->plan.parallel.pp > 1)
            who = tr("%1 (stage %2)").arg(who).arg(r.stage);
        QString text =
            tr("One steady-state step of %1, allocation by allocation: %2 allocated at the peak in "
               "the %3, as it allocates %4 (%5, %6); the caching allocator reserves up to %7; "
               "%8 stays allocated after the step.")
                .arg(who, gib(v.allocated_peak), phaseName(phase), tensorKindName(at.kind),
                     layerPhrase(at.kind, at.layer), unitPhrase(at.unit), gib(v.reserved_peak))
                .arg(gib(r.after_step.total()));
        if (r.first_step_peak_bytes > v.allocated_peak * 1.0005)
            text += QLatin1Char(' ') +
                    tr("The first step peaks higher, at %1, while the optimizer states come into being.")
                        .arg(gib(r.first_step_peak_bytes));
        if (r.oom) {
            QString kind = qs(r.oom_tensor);
            for (int k = 0; k < kTensorKindCount; ++k)
                if (tensorKindKey(TensorKind(k)) == r.oom_tensor)
                    kind = tensorKindName(TensorKind(k));
            const QString part = r.oom_step == "setup"        ? tr("model build")
                                 : r.oom_step == "first_step" ? tr("first step")
                                                              : tr("steady step");
            text += QLatin1Char(' ') +
                    tr("On the device the allocator runs out of memory in the %1, allocating %2 (%3).")
                        .arg(part, kind, qs(formatBytes(r.oom_request_bytes)));
        }

        ReportCanvas::StepFigure f;
        f.heading = tr("Memory over the step");
        f.intro = text;
        f.view = &v;
        f.capacity = ev.hbm;
        f.usable = mem.usable_bytes;
        for (const PhaseMark &m : v.phases)
            f.phases << phaseName(m.phase);
        for (int c = 0; c < kComponentCount; ++c)
            f.names << componentName(c);
        f.names << tr("Reserved by the caching allocator (peak %1)").arg(gib(v.reserved_peak))
                << tr("HBM capacity") << tr("usable");
        f.peakLabel = tr("Peak %1").arg(gib(v.allocated_peak));
        f.axisTitle = tr("Allocations and frees of the step (event index)");
        if (v.timeline.omitted_microbatches > 0)
            f.axisTitle += QStringLiteral("; ") +
                           (v.timeline.omitted_microbatches == 1
                                ? tr("1 alike micro-batch left out")
                                : tr("%1 alike micro-batches left out").arg(v.timeline.omitted_microbatches));
        f.caption =
            tr("Allocated bytes stacked by component after each allocation or free of the step, the "
               "bytes the caching allocator reserves (replayed on a device with room) as the dark "
               "line; the backward is shaded.");
        m_canvas.stepChart(f);

        // The largest tensors alive at the peak.
        m_canvas.subheading(tr("Largest tensors alive at the peak"));
        const std::vector<PeakGroup> groups = peakGroups(v);
        ReportCanvas::Row header{ReportCanvas::Cell{tr("Tensors")}, ReportCanvas::Cell{tr("Layers")},
                                 ReportCanvas::Cell{tr("Micro-batch")}, numberCell(tr("Count")),
                                 numberCell(tr("Size")), numberCell(tr("Share"))};
        auto share = [&](double bytes) {
            return v.allocated_peak > 0 ? percent(bytes / v.allocated_peak) : QString();
        };
        std::vector<ReportCanvas::Row> rows;
        const size_t shown = std::min(groups.size(), size_t(kTensorRows));
        for (size_t i = 0; i < shown; ++i) {
            const PeakGroup &g = groups[i];
            ReportCanvas::Cell name{tensorKindName(g.kind)};
            name.swatch = ReportCanvas::componentColor(int(componentOf(g.kind)));
            rows.push_back({name, ReportCanvas::Cell{tensorLayerText(g.kind, g.layers)},
                            ReportCanvas::Cell{tensorUnitText(g.unit)}, numberCell(QString::number(g.tensors)),
                            numberCell(gib(g.bytes)), numberCell(share(g.bytes))});
        }
        if (groups.size() > shown) {
            double rest = 0;
            int tensors = 0;
            for (size_t i = shown; i < groups.size(); ++i) {
                rest += groups[i].bytes;
                tensors += groups[i].tensors;
            }
            const int more = int(groups.size() - shown);
            ReportCanvas::Cell name{more == 1 ? tr("1 more group") : tr("%1 more groups").arg(more)};
            name.color = ReportCanvas::muted();
            rows.push_back({name, {}, {}, numberCell(QString::number(tensors)), numberCell(gib(rest)),
                            numberCell(share(rest))});
        }
        ReportCanvas::Row total{ReportCanvas::Cell{tr("Allocated at the peak")}, {}, {}, {},
                                numberCell(gib(v.allocated_peak), true), numberCell(share(v.allocated_peak))};
        total.front().bold = true;
        rows.push_back(std::move(total));
        m_canvas.table({0.34, 0.2, 0.12, 0.1, 0.13, 0.11}, header, rows, ReportCanvas::Small);
        m_canvas.paragraph(tr("Tensors alive at the allocated peak, grouped by kind and micro-batch "
                              "(\"-\": held for the whole step), largest first."),
                           ReportCanvas::Small, ReportCanvas::muted());
    }

    static QString layerPhrase(TensorKind kind, int layer)
    {
        if (layer >= 0)
            return tr("layer %1").arg(layer);
        if (layer == -1)
            return tr("no layer");
        return tensorLayerText(kind, layer);
    }

    static QString unitPhrase(int unit)
    {
        return unit >= 0 ? tr("micro-batch %1").arg(unit) : tr("step-wide");
    }

    void rankTables(const Plan &plan, const RankMemory &r)
    {
        QString what = tr("stage %1, %2 layers").arg(r.stage).arg(r.layers);
        if (r.has_embedding)
            what += QStringLiteral(", ") + tr("embedding");
        if (r.has_head)
            what += QStringLiteral(", ") + tr("LM head");
        m_canvas.heading(tr("Components of %1 (%2), peak in %3")
                             .arg(rankRange(r), what, phaseName(r.peak_phase)));

        ReportCanvas::Row header{
            ReportCanvas::Cell{tr("Component")}, numberCell(phaseName(Phase::Forward)),
            numberCell(phaseName(Phase::Backward)), numberCell(phaseName(Phase::OptimizerStep)),
            numberCell(tr("At peak"))};
        std::vector<ReportCanvas::Row> rows;
        for (int c = 0; c < kComponentCount; ++c) {
            ReportCanvas::Row row{swatchCell(c)};
            for (int p = 0; p < kPhaseCount; ++p)
                row.push_back(numberCell(gib(r.phases[size_t(p)].bytes[size_t(c)]),
                                         Phase(p) == r.peak_phase));
            row.push_back(numberCell(gib(r.peak().bytes[size_t(c)]), true));
            rows.push_back(std::move(row));
        }
        ReportCanvas::Row total{ReportCanvas::Cell{tr("Peak allocated")}};
        total.front().bold = true;
        for (int p = 0; p < kPhaseCount; ++p)
            total.push_back(numberCell(gib(r.phases[size_t(p)].total()), Phase(p) == r.peak_phase));
        total.push_back(numberCell(gib(r.peak_bytes), true));
        rows.push_back(std::move(total));
        ReportCanvas::Row reserve{swatchCell(kComponentCount)};
        reserve.push_back(ReportCanvas::Cell{
            tr("context %1, %n communicator(s) %2, allocator %3", "", r.reserve.communicators)
                .arg(gib(r.reserve.context), gib(r.reserve.comm_buffers),
                     gib(r.reserve.allocator))});
        reserve.push_back({});
        reserve.push_back({});
        reserve.push_back(numberCell(gib(r.reserve.total()), true));
        rows.push_back(std::move(reserve));
        ReportCanvas::Row need{ReportCanvas::Cell{tr("Total on device")},
                               {},
                               {},
                               {},
                               numberCell(gib(r.peak_bytes + r.reserve.total()), true)};
        need.front().bold = true;
        rows.push_back(std::move(need));
        m_canvas.table({0.28, 0.18, 0.18, 0.18, 0.18}, header, rows, ReportCanvas::Small,
                       /*spanSecondCell=*/true);

        m_canvas.subheading(
            tr("Formulas and assumptions at the peak (%1)").arg(phaseName(r.peak_phase)));
        const MemoryExplanation ex = explainMemory(plan, m_catalog, r, r.peak_phase);
        ReportCanvas::Row fheader{ReportCanvas::Cell{tr("Component")},
                                  ReportCanvas::Cell{tr("Formula")},
                                  ReportCanvas::Cell{tr("Assumptions")}};
        std::vector<ReportCanvas::Row> frows;
        for (int c = 0; c < kComponentCount; ++c) {
            frows.push_back({swatchCell(c), ReportCanvas::Cell{translated(ex[size_t(c)].formula)},
                             ReportCanvas::Cell{translated(ex[size_t(c)].assumptions)}});
        }
        m_canvas.table({0.2, 0.4, 0.4}, fheader, frows, ReportCanvas::Tiny);
    }

    void collectives(const Evaluated &ev)
    {
        m_canvas.heading(tr("Collectives and step time"));
        const auto &comm = ev.estimate.communication;
        if (comm.empty()) {
            m_canvas.paragraph(tr("This engine did not estimate collectives for the plan."),
                               ReportCanvas::Body, ReportCanvas::muted());
        } else {
            ReportCanvas::Row header{ReportCanvas::Cell{tr("Collective")},
                                     ReportCanvas::Cell{tr("Group")},
                                     numberCell(tr("Message")),
                                     numberCell(tr("Per step")),
                                     numberCell(tr("Time each")),
                                     numberCell(tr("Exposed per step")),
                                     ReportCanvas::Cell{tr("Phase and purpose")}};
            std::vector<ReportCanvas::Row> rows;
            for (const Collective &c : comm) {
                const Phase phase = phaseFromKey(c.phase);
                QString purpose = phase == Phase::Count ? qs(c.phase) : phaseName(phase);
                if (!c.note.empty())
                    purpose = purpose.isEmpty()
                                  ? translatedNote(c.note)
                                  : tr("%1: %2", "phase: what the collective carries")
                                        .arg(purpose, translatedNote(c.note));
                rows.push_back(
                    {ReportCanvas::Cell{qs(c.collective)},
                     ReportCanvas::Cell{qs(c.group) + QStringLiteral(" x") +
                                        QString::number(c.group_size)},
                     numberCell(qs(formatBytes(c.bytes))), numberCell(num(c.count_per_step, 0)),
                     numberCell(qs(formatSeconds(c.time_s))),
                     numberCell(qs(formatSeconds(c.exposed_time_s))), ReportCanvas::Cell{purpose}});
            }
            m_canvas.table({0.14, 0.1, 0.12, 0.09, 0.11, 0.12, 0.32}, header, rows,
                           ReportCanvas::Small);
        }
        const StepEstimate &s = ev.estimate.step;
        if (s.step_s > 0) {
            m_canvas.keyValues({
                {tr("Step time"), qs(formatSeconds(s.step_s))},
                {tr("Compute"), qs(formatSeconds(s.compute_s))},
                {tr("Exposed communication"), qs(formatSeconds(s.communication_s))},
                {tr("Pipeline bubble"), qs(formatSeconds(s.bubble_s))},
                {tr("Offload traffic"), qs(formatSeconds(s.offload_s))},
                {tr("Throughput"), tr("%1 tokens/s").arg(grouped(s.tokens_per_s))},
                {tr("MFU / HFU"), percent(s.mfu) + QStringLiteral(" / ") + percent(s.hfu)},
            });
        } else {
            m_canvas.paragraph(tr("This engine did not estimate the step time for the plan."),
                               ReportCanvas::Body, ReportCanvas::muted());
        }
    }

    void deviceProfile(const DeviceProfile &d)
    {
        m_canvas.heading(tr("Device profile: %1 (%2)").arg(qs(d.name), qs(d.id)));
        auto link = [](const LinkProfile &l) {
            if (l.bandwidth <= 0)
                return tr("none");
            return tr("%1 %2, %3 GB/s per device, latency %4, efficiency %5")
                .arg(qs(l.kind), qs(l.topology), num(l.bandwidth / kGB, 0),
                     qs(formatSeconds(l.latency)), num(l.efficiency, 2));
        };
        m_canvas.keyValues({
            {tr("HBM"), gib(d.hbm_bytes) + QStringLiteral(" (") + qs(formatGB(d.hbm_bytes)) +
                            QLatin1Char(')')},
            {tr("Context reserve"), gib(d.context_reserve_bytes)},
            {tr("Collective buffers"),
             tr("%1 per communicator").arg(gib(d.comm_buffer_bytes_per_group))},
            {tr("Peak BF16"), tr("%1 TFLOP/s (GEMM efficiency %2, attention %3)")
                                  .arg(num(d.peak_flops_bf16 / 1e12, 0), num(d.gemm_efficiency, 2),
                                       num(d.attention_efficiency, 2))},
            {tr("HBM bandwidth"),
             tr("%1 TB/s (efficiency %2)")
                 .arg(num(d.hbm_bandwidth / 1e12, 2), num(d.memory_efficiency, 2))},
            {tr("Intra-node"), link(d.intra_node)},
            {tr("Inter-node"), link(d.inter_node)},
            {tr("Host link"), tr("%1 GB/s").arg(num(d.host_bandwidth / kGB, 0))},
        });
        if (!d.sources.empty()) {
            m_canvas.subheading(tr("Sources"));
            ReportCanvas::Row header{ReportCanvas::Cell{tr("Figure")},
                                     ReportCanvas::Cell{tr("Where it comes from")}};
            std::vector<ReportCanvas::Row> rows;
            for (const auto &[field, text] : d.sources)
                rows.push_back({ReportCanvas::Cell{qs(field)}, ReportCanvas::Cell{qs(text)}});
            m_canvas.table({0.22, 0.78}, header, rows, ReportCanvas::Tiny);
        }
    }

    QString generatedText() const
    {
        const QDateTime when =
            m_options.generated.isValid() ? m_options.generated : QDateTime::currentDateTime();
        return when.toString(QStringLiteral("yyyy-MM-dd HH:mm"));
    }

    static QString planTag(size_t index) { return tr("P%1").arg(index + 1); }

    static QString verdictWord(const Evaluated &ev)
    {
        return ev.estimate.memory.fits ? tr("Fits") : tr("Does not fit");
    }

    static QString rankRange(const RankMemory &r)
    {
        if (r.count <= 1)
            return tr("rank %1").arg(r.rank);
        return tr("ranks %1-%2").arg(r.rank).arg(r.rank + r.count - 1);
    }

    static QString phaseName(Phase p)
    {
        switch (p) {
        case Phase::Forward:
            return tr("forward");
        case Phase::Backward:
            return tr("backward");
        case Phase::OptimizerStep:
            return tr("optimizer step");
        case Phase::Count:
            break;
        }
        return {};
    }

    static QString componentName(int c)
    {
        switch (c) {
        case int(Component::Parameters):
            return tr("Parameters");
        case int(Component::Gradients):
            return tr("Gradients");
        case int(Component::MasterWeights):
            return tr("Master weights");
        case int(Component::OptimizerStates):
            return tr("Optimizer states");
        case int(Component::Activations):
            return tr("Activations");
        case int(Component::LogitsAndLoss):
            return tr("Logits and loss");
        case int(Component::CommunicationBuffers):
            return tr("Communication buffers");
        case int(Component::Transient):
            return tr("Transient");
        default:
            return tr("Runtime reserve");
        }
    }

    static QStringList barLabels()
    {
        QStringList names;
        for (int c = 0; c <= kComponentCount; ++c)
            names << componentName(c);
        names << tr("HBM capacity") << tr("usable");
        return names;
    }

    static QString shardingText(Sharding s)
    {
        switch (s) {
        case Sharding::None:
            return tr("none (DDP)");
        case Sharding::Optimizer:
            return tr("optimizer states (ZeRO-1)");
        case Sharding::Grads:
            return tr("gradients and optimizer states (ZeRO-2)");
        case Sharding::Full:
            return tr("full (ZeRO-3 / FSDP)");
        }
        return {};
    }

    static QString layoutText(const Plan &plan)
    {
        const Parallel &p = plan.parallel;
        QString s = tr("DP %1 x TP %2 x PP %3 x CP %4").arg(p.dp).arg(p.tp).arg(p.pp).arg(p.cp);
        if (p.ep > 1)
            s += QStringLiteral(", ") + tr("EP %1").arg(p.ep);
        if (p.etp > 0)
            s += QStringLiteral(", ") + tr("expert TP %1").arg(p.etp);
        s += QStringLiteral("; ") + tr("sharding %1").arg(shardingText(p.sharding));
        if (p.sp)
            s += QStringLiteral("; ") + tr("sequence parallel");
        if (p.pp > 1)
            s += QStringLiteral("; ") + tr("schedule %1, %2 virtual stage(s)")
                                            .arg(qs(toString(p.pp_schedule)))
                                            .arg(p.virtual_stages);
        return s;
    }

    static QString methodText(const Plan &plan)
    {
        const MethodOptions &mo = plan.training.method;
        const int64_t total = countParameters(plan.model).total;
        const int64_t trained = trainableParameters(plan);
        QString s;
        switch (mo.method) {
        case TrainingMethod::Full: s = tr("full training"); break;
        case TrainingMethod::LoRA: s = tr("LoRA rank %1").arg(mo.lora.rank); break;
        case TrainingMethod::DoRA: s = tr("DoRA rank %1").arg(mo.lora.rank); break;
        case TrainingMethod::QLoRA:
            s = tr("QLoRA rank %1 over a %2 base").arg(mo.lora.rank).arg(qs(toString(mo.qlora.quant)));
            break;
        case TrainingMethod::Freeze: s = tr("freezing, the last %1 layers trained").arg(mo.freeze.last_layers); break;
        }
        if (mo.method != TrainingMethod::Full)
            s += QStringLiteral("; ") + tr("%1 of %2 parameters trained")
                                            .arg(qs(formatCount((long long)trained)), qs(formatCount(total)));
        if (plan.memory.loss != LossHead::Framework)
            s += QStringLiteral("; ") + tr("loss head %1").arg(qs(toString(plan.memory.loss)));
        return s;
    }

    static QString tokensText(const Plan &plan)
    {
        const Training &t = plan.training;
        return tr("%1 tokens x micro-batch %2 x %3 micro-batch(es) per step")
            .arg(t.seq_len)
            .arg(t.micro_batch)
            .arg(t.grad_accum);
    }

    static QString memoryOptionsText(const Plan &plan)
    {
        const MemoryOptions &m = plan.memory;
        QString recompute;
        switch (m.recompute) {
        case Recompute::None:
            recompute = tr("no recompute");
            break;
        case Recompute::Selective:
            recompute = tr("selective recompute");
            break;
        case Recompute::Full:
            recompute = tr("full recompute");
            break;
        }
        const QString attention =
            m.attention == Attention::Flash ? tr("fused (flash) attention") : tr("eager attention");
        QStringList offload;
        if (m.offload.optimizer)
            offload << tr("optimizer");
        if (m.offload.params)
            offload << tr("parameters");
        if (m.offload.grads)
            offload << tr("gradients");
        if (m.offload.activations)
            offload << tr("activations");
        return tr("%1, %2, offload: %3")
            .arg(recompute, attention,
                 offload.isEmpty() ? tr("none") : offload.join(QStringLiteral(", ")));
    }

    static ReportCanvas::Cell numberCell(const QString &text, bool bold = false)
    {
        ReportCanvas::Cell c{text};
        c.alignRight = true;
        c.bold = bold;
        return c;
    }

    static ReportCanvas::Cell swatchCell(int component)
    {
        ReportCanvas::Cell c{componentName(component)};
        c.swatch = ReportCanvas::componentColor(component);
        c.hatched = component == kComponentCount;
        return c;
    }

    ReportCanvas &m_canvas;
    const Catalog &m_catalog;
    const ReportOptions &m_options;
};

} // namespace

void renderPdfReport(QIODevice *device, const std::vector<ReportPlan> &plans,
                     const Catalog &catalog, const ReportOptions &options)
{
    std::vector<Evaluated> evaluated;
    evaluated.reserve(plans.size());
    for (const ReportPlan &p : plans)
        evaluated.push_back(evaluate(p, catalog));

    QPdfWriter writer(device);
    writer.setPageSize(QPageSize(options.pageSize));
    writer.setPageMargins(QMarginsF(15, 15, 15, 15), QPageLayout::Millimeter);
    writer.setResolution(300);
    writer.setCreator(QStringLiteral("ShardScope " SHARDSCOPE_VERSION));

    ReportCanvas canvas(writer);
    ReportWriter text(canvas, catalog, options);
    writer.setTitle(options.title.isEmpty() ? ReportWriter::tr("ShardScope plan report")
                                            : options.title);
    canvas.setFooter(text.footerText(), &ReportWriter::pageText);
    canvas.begin();
    text.titleBlock(int(plans.size()));
    if (evaluated.size() > 1)
        text.comparison(evaluated);
    // The sections flow: a plan starts on the page the previous one ends on when its title,
    // verdict and summary have room there (figures and tables keep to a page by themselves).
    const double sectionStart = canvas.pageHeightPoints() * kSectionStartFraction;
    for (size_t i = 0; i < evaluated.size(); ++i) {
        if (evaluated.size() > 1 || i > 0) {
            canvas.space(kSectionGap);
            canvas.keepSpace(sectionStart);
        }
        text.plan(evaluated[i], i, evaluated.size());
    }
    canvas.space(12);
    text.deviceAppendix(evaluated);
    canvas.end();
}

QByteArray pdfReportBytes(const std::vector<ReportPlan> &plans, const Catalog &catalog,
                          const ReportOptions &options)
{
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    renderPdfReport(&buffer, plans, catalog, options);
    buffer.close();
    return bytes;
}

bool writePdfReport(const QString &fileName, const std::vector<ReportPlan> &plans,
                    const Catalog &catalog, const ReportOptions &options, QString *error)
{
    auto fail = [error](const QString &message) {
        if (error)
            *error = message;
        return false;
    };
    if (plans.empty())
        return fail(QCoreApplication::translate("PdfReport", "No plan to report."));
    // Rendered in memory, then written whole (core's writeFileAtomically): a full disk leaves
    // the previous report as it was. QSaveFile on Qt 6.4 can commit a truncated file there.
    QByteArray bytes;
    try {
        bytes = pdfReportBytes(plans, catalog, options);
    } catch (const PlanError &e) {
        return fail(QCoreApplication::translate("PdfReport", "Cannot evaluate the plan: %1")
                        .arg(QString::fromUtf8(e.what())));
    }
    try {
        writeFileAtomically(fileName.toStdString(), bytes.toStdString());
    } catch (const WriteError &e) {
        return fail(QString::fromUtf8(e.what()));
    }
    return true;
}

} // namespace shardscope
