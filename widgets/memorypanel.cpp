#include "memorypanel.h"

#include "componentstyle.h"
#include "memorychartview.h"
#include "plandescription.h"
#include "plandocument.h"
#include "richtextlabel.h"
#include "qstrings.h"

#include "core/catalog.h"
#include "core/units.h"
#include "i18n/enginetext.h"

#include <QEvent>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QTabBar>
#include <QVBoxLayout>

namespace shardscope {

namespace {

QString gib(double bytes)
{
    return qs(formatGiB(bytes, 1));
}

} // namespace

MemoryPanel::MemoryPanel(PlanDocument *document, QWidget *parent)
    : QWidget(parent), m_document(document), m_headline(new RichTextLabel(this)),
      m_phases(new QTabBar(this)), m_chart(new MemoryChartView(this))
{
    m_headline->setContentsMargins(6, 6, 6, 6);

    m_phases->addTab(tr("Peak of the step"));
    m_phases->addTab(tr("Forward"));
    m_phases->addTab(tr("Backward"));
    m_phases->addTab(tr("Optimizer step"));
    m_phases->setToolTip(tr("Show each rank at its own peak, or at the peak of one phase"));
    m_phases->setFocusPolicy(Qt::StrongFocus);
    m_phases->setDrawBase(false);
    connect(m_phases, &QTabBar::currentChanged, this,
            [this](int index) { setPhaseView(PhaseView(index)); });

    // The phase tabs keep their width (they do not scroll); the hint wraps into what is left.
    m_phases->setUsesScrollButtons(false);
    m_phases->setExpanding(false);
    auto *hint = new QLabel(tr("Hover a segment for its bytes, share and formula."), this);
    hint->setEnabled(false);
    hint->setWordWrap(true);
    hint->setAlignment(Qt::AlignRight | Qt::AlignVCenter);

    auto *top = new QHBoxLayout;
    top->addWidget(m_phases);
    top->addWidget(hint, 1);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_headline);
    layout->addLayout(top);
    layout->addWidget(m_chart, 1);

    m_chart->setTooltipProvider([this](int bar, int segment) { return segmentTooltip(bar, segment); });
    connect(m_document, &PlanDocument::planChanged, this, &MemoryPanel::refresh);
    // Saving changes what the plan counts as edited from.
    connect(m_document, &PlanDocument::fileStateChanged, this, [this] {
        const QString text = headline();
        if (m_headline->text() != text)
            m_headline->setText(text);
    });
    refresh();
}

MemoryPanel::~MemoryPanel() = default;

void MemoryPanel::changeEvent(QEvent *event)
{
    // The verdict's colour follows the palette.
    if (event->type() == QEvent::PaletteChange)
        m_headline->setText(headline());
    QWidget::changeEvent(event);
}

void MemoryPanel::setPhaseView(PhaseView view)
{
    if (view == m_view)
        return;
    m_view = view;
    m_phases->setCurrentIndex(int(view));
    refresh();
}

void MemoryPanel::refresh()
{
    const MemoryEstimate &mem = m_document->estimate().memory;
    m_bars = rankBars(mem, m_view);
    // One scale for the phase tabs: the axis reaches the fullest rank at its own peak.
    double top = 0;
    for (const RankMemory &r : mem.ranks)
        top = std::max(top, r.peak_bytes + r.reserve.total());
    m_chart->setMinimumTop(top);
    std::vector<ChartBar> bars;
    bars.reserve(m_bars.size());
    for (const RankBar &b : m_bars)
        bars.push_back(ChartBar{b.label, b.bytes, b.reserve});
    m_chart->setBars(bars, mem.hbm_bytes, mem.usable_bytes);

    int ranks = 0;
    for (const RankMemory &r : mem.ranks)
        ranks += r.count;
    const QString title =
        m_view == PhaseView::Peak
            ? tr("HBM per rank at each rank's peak")
            : tr("HBM per rank at the peak of the %1").arg(ComponentStyle::phaseName(Phase(int(m_view) - 1)));
    QString axis = tr("rank");
    if (int(m_bars.size()) < ranks)
        axis = tr("ranks (identical ranks grouped)");
    // Unlabelled bars: Qt Charts elides the title of an axis without labels, so say it above.
    if (int(m_bars.size()) == ranks && ranks > 24) {
        m_chart->setTitles(tr("%1: ranks 0-%2, left to right (hover a bar for its rank)")
                               .arg(title)
                               .arg(ranks - 1),
                           QString());
    } else {
        m_chart->setTitles(title, axis);
    }
    const QString text = headline();
    if (m_headline->text() != text)
        m_headline->setText(text);
}

QString MemoryPanel::headline() const
{
    const Plan &plan = m_document->plan();
    const MemoryEstimate &mem = m_document->estimate().memory;
    const RankMemory *worst = worstRank(mem);
    if (!worst)
        return tr("No estimate for this plan.");
    const DeviceProfile *device = m_document->catalog().device(plan.cluster.device);
    const QString deviceName = device ? qs(device->name) : qs(plan.cluster.device);
    const double required = worst->peak_bytes + worst->reserve.total();

    int largest = 0;
    const Breakdown &peak = worst->peak();
    for (int c = 1; c < kComponentCount; ++c) {
        if (peak.bytes[size_t(c)] > peak.bytes[size_t(largest)])
            largest = c;
    }
    const QString detail =
        tr("Rank %1 needs <b>%2</b>: %3 allocated at its %4 peak + %5 runtime reserve. "
           "Largest part: %6 (%7).")
            .arg(worst->rank)
            .arg(gib(required), gib(worst->peak_bytes), ComponentStyle::phaseName(worst->peak_phase),
                 gib(worst->reserve.total()), ComponentStyle::name(largest),
                 gib(peak.bytes[size_t(largest)]));
    // What the plan is, from its fields; under it the user's name for it and whether it was
    // edited since it was opened from a case or file.
    QString text = QStringLiteral("<span style='font-size:large'><b>%1</b></span><br>")
                       .arg(describePlan(plan, m_document->catalog()).toHtmlEscaped());
    QStringList about;
    if (!plan.name.empty())
        about << tr("Name: “%1”").arg(qs(plan.name)).toHtmlEscaped();
    if (m_document->isEdited())
        about << tr("edited from %1").arg(QFileInfo(m_document->originPath()).fileName()).toHtmlEscaped();
    if (!about.isEmpty())
        text += QStringLiteral("<span style='color:%1'>%2</span><br>")
                    .arg(palette().color(QPalette::PlaceholderText).name(),
                         about.join(QStringLiteral(" · ")));
    if (mem.fits) {
        return text + tr("<span style='color:%1; font-weight:bold'>Fits</span> on %2 (%3 HBM, "
                         "%4 headroom). %5")
                          .arg(ComponentStyle::verdictColor(true, palette()).name(), deviceName.toHtmlEscaped(), gib(mem.hbm_bytes),
                               gib(mem.hbm_bytes - required), detail);
    }
    return text + tr("<span style='color:%1; font-weight:bold'>Does not fit</span> on %2 "
                     "(%3 HBM): %4 over. %5")
                      .arg(ComponentStyle::verdictColor(false, palette()).name(), deviceName.toHtmlEscaped(), gib(mem.hbm_bytes),
                           gib(required - mem.hbm_bytes), detail);
}

QString MemoryPanel::segmentTooltip(int bar, int segment) const
{
    if (bar < 0 || bar >= int(m_bars.size()))
        return {};
    const RankBar &b = m_bars[size_t(bar)];
    const MemoryEstimate &mem = m_document->estimate().memory;
    if (b.kind >= int(mem.ranks.size()))
        return {};
    const RankMemory &rank = mem.ranks[size_t(b.kind)];
    const double total = b.required();
    // Without a pipeline every rank is in stage 0: the stage says nothing.
    const bool stages = m_document->plan().parallel.pp > 1;
    const QString who = b.ranks > 1 ? (stages ? tr("Ranks %1 (%2 identical ranks, stage %3)")
                                                    .arg(b.label)
                                                    .arg(b.ranks)
                                                    .arg(rank.stage)
                                              : tr("Ranks %1 (%2 identical ranks)").arg(b.label).arg(b.ranks))
                                    : (stages ? tr("Rank %1 (stage %2)").arg(b.label).arg(rank.stage)
                                              : tr("Rank %1").arg(b.label));
    const double bytes = segment == ComponentStyle::kReserve ? b.reserve
                                                             : b.bytes.bytes[size_t(segment)];
    QString text = QStringLiteral("<b>%1</b> - %2, %3<br>").arg(ComponentStyle::name(segment).toHtmlEscaped(), who.toHtmlEscaped(),
                                                       ComponentStyle::phaseName(b.phase));
    text += tr("%1 (%2 bytes), %3% of this rank's %4, %5% of HBM")
                .arg(qs(formatGiB(bytes)), qs(formatCount((long long)(bytes))))
                .arg(total > 0 ? 100.0 * bytes / total : 0.0, 0, 'f', 1)
                .arg(qs(formatGiB(total)))
                .arg(mem.hbm_bytes > 0 ? 100.0 * bytes / mem.hbm_bytes : 0.0, 0, 'f', 1);
    if (stages) // the stage's share of the layers (even, or the plan's uneven layout)
        text += QStringLiteral("<br>") + tr("This stage holds %1 of the %2 decoder layers.")
                                             .arg(rank.layers)
                                             .arg(m_document->plan().model.layers);
    if (segment == ComponentStyle::kReserve) {
        text += QStringLiteral("<br>") +
                tr("Held outside the framework's allocations: runtime context %1, "
                   "collective buffers %2 (%3 communicators), allocator overhead %4.")
                    .arg(qs(formatGiB(rank.reserve.context)), qs(formatGiB(rank.reserve.comm_buffers)))
                    .arg(rank.reserve.communicators)
                    .arg(qs(formatGiB(rank.reserve.allocator)));
        if (const DeviceProfile *dev = m_document->catalog().device(m_document->plan().cluster.device))
            text += QStringLiteral("<br>") +
                    translated(explainCommGroups(m_document->plan(), *dev, rank.reserve.groups)).toHtmlEscaped();
        return text;
    }
    const MemoryExplanation ex =
        explainMemory(m_document->plan(), m_document->catalog(), rank, b.phase);
    const ComponentExplanation &e = ex[size_t(segment)];
    text += QStringLiteral("<br><br><b>%1</b> %2").arg(tr("Formula:"), translated(e.formula).toHtmlEscaped());
    if (!e.assumptions.empty())
        text += QStringLiteral("<br><b>%1</b> %2").arg(tr("Assumptions:"), translated(e.assumptions).toHtmlEscaped());
    return QStringLiteral("<div style='max-width:480px'>%1</div>").arg(text);
}

} // namespace shardscope
