#include "searchpanel.h"

#include "plandescription.h"
#include "plandocument.h"
#include "searchjob.h"
#include "searchresultsmodel.h"

#include "darkpalette.h"

#include "core/errors.h"
#include "core/units.h"
#include "qstrings.h"

#include <QApplication>
#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QProgressBar>
#include <QPushButton>
#include <QScatterSeries>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

namespace shardscope {

namespace {

/// What a search holds fixed (model, sequence, precision, framework, cluster, method): a
/// plan that differs from the searched one only in its layout is covered by the results.
std::string searchKey(const Plan &plan)
{
    Plan p = plan;
    p.name.clear();
    Parallel &pa = p.parallel;
    pa.dp = pa.tp = pa.pp = pa.cp = pa.ep = 1;
    pa.sp = false;
    pa.sharding = Sharding::None;
    pa.virtual_stages = 1;
    pa.pp_schedule = PpSchedule::OneFOneB;
    // The layer layout over the stages is part of the layout too.
    pa.first_stage_layers = pa.last_stage_layers = 0;
    pa.account_for_embedding = pa.account_for_loss = false;
    pa.stage_layers.clear();
    pa.pipeline_layout.clear();
    // So are the axes beyond (core/search.h SearchAxis) and what follows the sharding.
    pa.etp = 0;
    pa.cp_algo = CpAlgo::Ring;
    pa.ulysses_degree = 0;
    pa.dp_shard = 0;
    p.memory.recompute_method = RecomputeMethod::Uniform;
    p.memory.recompute_num_layers = 1;
    p.memory.recompute_layers_per_pp_rank = false;
    p.memory.overlap_param_gather = false;
    p.memory.param_and_grad_buffer_pad = 0;
    p.training.micro_batch = 1;
    p.training.grad_accum = 1;
    p.memory.recompute = Recompute::None;
    p.memory.offload = Offload{};
    return planToJson(p).dump();
}

QSpinBox *degreeBox(QWidget *parent, const QString &tip)
{
    auto *box = new QSpinBox(parent);
    box->setRange(0, 1 << 16);
    box->setSpecialValueText(SearchPanel::tr("any"));
    box->setToolTip(tip);
    return box;
}

} // namespace

SearchPanel::SearchPanel(PlanDocument *document, QWidget *parent)
    : QWidget(parent), m_document(document), m_job(new SearchJob(document->catalog(), this)),
      m_model(new SearchResultsModel(this)), m_globalBatch(new QSpinBox(this)),
      m_batchUnit(new QComboBox(this)), m_top(new QSpinBox(this)),
      m_offload(new QCheckBox(tr("Try &offload:"), this)),
      m_tp(degreeBox(this, tr("Only layouts with this tensor-parallel degree"))),
      m_pp(degreeBox(this, tr("Only layouts with this pipeline degree"))),
      m_cp(degreeBox(this, tr("Only layouts with this context-parallel degree"))),
      m_maxDevices(degreeBox(this, tr("Search on at most this many devices: the cluster cut to "
                                      "whole nodes (or part of one node)"))),
      m_headroom(new QDoubleSpinBox(this)), m_recompute{}, m_offloadSet{},
      m_run(new QPushButton(tr("&Search layouts"), this)),
      m_cancel(new QPushButton(tr("Ca&ncel"), this)),
      m_load(new QPushButton(tr("&Load selected"), this)),
      m_fit(new QPushButton(tr("Largest that &fits"), this)), m_progress(new QProgressBar(this)),
      m_status(new QLabel(this)), m_staleLabel(new QLabel(this)), m_fitLabel(new QLabel(this)),
      m_table(new QTableView(this)), m_chart(new QChartView(this)), m_others(new QScatterSeries),
      m_front(new QLineSeries), m_frontPoints(new QScatterSeries), m_memoryAxis(new QValueAxis),
      m_timeAxis(new QValueAxis)
{
    // The batch is the search's own, not the open plan's: 1M tokens until the user sets it.
    m_globalBatch->setRange(1, (1 << 30));
    m_globalBatch->setGroupSeparatorShown(true);
    m_globalBatch->setValue(1 << 20);
    m_globalBatch->setToolTip(tr("Global batch of every layout searched: sequences or tokens "
                                 "per optimizer step across all data-parallel ranks"));
    m_batchUnit->addItem(tr("tokens"), int(BatchUnit::Tokens));
    m_batchUnit->addItem(tr("sequences"), int(BatchUnit::Sequences));
    m_top->setRange(1, 500);
    m_top->setValue(20);
    m_offload->setChecked(true);
    m_headroom->setRange(0, 1024);
    m_headroom->setDecimals(1);
    m_headroom->setSuffix(tr(" GiB"));
    m_headroom->setToolTip(tr("Memory every rank keeps free beyond peak and runtime reserve"));
    const QString recomputeNames[3] = {tr("none"), tr("selective"), tr("full")};
    const QString offloadNames[3] = {tr("optimizer"), tr("optimizer + params + grads"),
                                     tr("activations")};
    for (int i = 0; i < 3; ++i) {
        m_recompute[i] = new QCheckBox(recomputeNames[i], this);
        m_recompute[i]->setChecked(true);
        m_offloadSet[i] = new QCheckBox(offloadNames[i], this);
        m_offloadSet[i]->setChecked(true);
        connect(m_offload, &QCheckBox::toggled, m_offloadSet[i], &QWidget::setEnabled);
    }
    // The axes beyond the classic ones (core/search.h SearchAxis), each on unless unticked.
    const QString axisNames[kAxes] = {tr("etp"),           tr("CP algorithm"),   tr("HSDP"),
                                      tr("block recompute"), tr("uneven stages"), tr("swap-attention"),
                                      tr("MindSpeed recompute")};
    const QString axisTips[kAxes] = {
        tr("MoE: expert tensor parallelism 1 beside tp's (needs sequence parallelism)"),
        tr("cp > 1: ring, Ulysses and the hybrids (Ulysses inside, ring across)"),
        tr("Full sharding: HSDP groups of one, two and four nodes' ranks, replicated across"),
        tr("Megatron: full recompute of a quarter, half and three quarters of each chunk's layers "
           "(--recompute-method block)"),
        tr("pp not dividing the layers: uneven first and last stages "
           "(--decoder-first/last-pipeline-num-layers)"),
        tr("Framework megatron: MindSpeed's swap-attention beside none, with recompute none or selective "
           "and activations kept on the device (--swap-attention)"),
        tr("Framework megatron, recompute none or selective: the FFN activation and the norms recomputed "
           "in backward beside neither (--recompute-activation-function, --recompute-norm)")};
    for (int i = 0; i < kAxes; ++i) {
        m_axes[i] = new QCheckBox(axisNames[i], this);
        m_axes[i]->setChecked(true);
        m_axes[i]->setToolTip(axisTips[i] + tr(" (each axis multiplies the layouts searched)"));
    }
    m_cancel->setEnabled(false);
    m_load->setEnabled(false);
    m_progress->setRange(0, 1000);
    m_progress->setValue(0);
    m_progress->setTextVisible(true);
    m_status->setWordWrap(true);
    m_status->setObjectName(QStringLiteral("searchStatus"));
    m_status->setText(tr("Finds the fastest layouts of this model, sequence and cluster that fit."));
    m_staleLabel->setWordWrap(true);
    m_staleLabel->setVisible(false);
    m_staleLabel->setStyleSheet(QStringLiteral("QLabel { color: #b35900; }"));
    m_fitLabel->setWordWrap(true);
    m_fitLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_fit->setToolTip(tr("The largest sequence length and micro-batch with which the open plan's "
                         "layout still fits, keeping the headroom asked for"));

    auto label = [this](const QString &text, QWidget *buddy) {
        auto *l = new QLabel(text, this);
        l->setBuddy(buddy);
        return l;
    };
    auto *controls = new QHBoxLayout;
    controls->addWidget(label(tr("&Global batch"), m_globalBatch));
    controls->addWidget(m_globalBatch);
    controls->addWidget(m_batchUnit);
    controls->addWidget(label(tr("&Keep"), m_top));
    controls->addWidget(m_top);
    controls->addWidget(m_run);
    controls->addWidget(m_cancel);
    controls->addWidget(m_progress, 1);
    controls->addWidget(m_load);

    auto *constraints = new QHBoxLayout;
    constraints->addWidget(label(tr("&tp"), m_tp));
    constraints->addWidget(m_tp);
    constraints->addWidget(label(tr("&pp"), m_pp));
    constraints->addWidget(m_pp);
    constraints->addWidget(label(tr("c&p"), m_cp));
    constraints->addWidget(m_cp);
    constraints->addWidget(label(tr("Max &devices"), m_maxDevices));
    constraints->addWidget(m_maxDevices);
    constraints->addWidget(label(tr("Min &headroom"), m_headroom));
    constraints->addWidget(m_headroom);
    constraints->addSpacing(8);
    constraints->addWidget(m_fit);
    constraints->addStretch(1);

    auto *modes = new QHBoxLayout;
    modes->addWidget(new QLabel(tr("Recompute:"), this));
    for (QCheckBox *b : m_recompute)
        modes->addWidget(b);
    modes->addSpacing(12);
    modes->addWidget(m_offload);
    for (QCheckBox *b : m_offloadSet)
        modes->addWidget(b);
    modes->addStretch(1);
    auto *axesRow = new QHBoxLayout;
    axesRow->addWidget(new QLabel(tr("Also vary:"), this));
    for (QCheckBox *b : m_axes)
        axesRow->addWidget(b);
    axesRow->addStretch(1);
    m_fitLabel->setVisible(false);

    auto *proxy = new QSortFilterProxyModel(this);
    proxy->setSourceModel(m_model);
    proxy->setSortRole(SearchResultsModel::SortRole);
    m_table->setModel(proxy);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(-1, Qt::AscendingOrder);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setAlternatingRowColors(true);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->setWordWrap(false);
    m_table->resizeColumnsToContents(); // before any result, wide enough for the headings

    // The Pareto front: required memory against step time, every ranked layout behind it.
    auto *chart = new QChart;
    chart->setTitle(tr("Memory against step time (click a point to load it)"));
    chart->legend()->setAlignment(Qt::AlignBottom);
    m_others->setName(tr("ranked layouts"));
    m_others->setMarkerSize(7);
    m_front->setName(tr("Pareto front"));
    m_frontPoints->setMarkerSize(10);
    chart->addSeries(m_others);
    chart->addSeries(m_front);
    chart->addSeries(m_frontPoints);
    m_memoryAxis->setTitleText(tr("Needed per rank (GiB)"));
    m_memoryAxis->setLabelFormat(QStringLiteral("%.0f"));
    m_timeAxis->setTitleText(tr("Step time (s)"));
    m_timeAxis->setLabelFormat(QStringLiteral("%.3g"));
    chart->addAxis(m_memoryAxis, Qt::AlignBottom);
    chart->addAxis(m_timeAxis, Qt::AlignLeft);
    for (QAbstractSeries *s : chart->series()) {
        s->attachAxis(m_memoryAxis);
        s->attachAxis(m_timeAxis);
    }
    chart->legend()->markers(m_frontPoints).first()->setVisible(false);
    m_chart->setChart(chart);
    m_chart->setRenderHint(QPainter::Antialiasing);
    applyChartPalette();
    m_chart->setMinimumWidth(260);

    auto *splitter = new QSplitter(Qt::Horizontal, this);
    splitter->addWidget(m_table);
    splitter->addWidget(m_chart);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    splitter->setChildrenCollapsible(false);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(controls);
    layout->addLayout(constraints);
    layout->addLayout(modes);
    layout->addLayout(axesRow);
    layout->addWidget(m_fitLabel);
    layout->addWidget(m_status);
    layout->addWidget(m_staleLabel);
    layout->addWidget(splitter, 1);

    auto sourceRow = [proxy](const QModelIndex &index) { return proxy->mapToSource(index).row(); };
    connect(m_run, &QPushButton::clicked, this, &SearchPanel::run);
    connect(m_cancel, &QPushButton::clicked, this, &SearchPanel::cancel);
    connect(m_fit, &QPushButton::clicked, this, &SearchPanel::findLargestFit);
    connect(m_load, &QPushButton::clicked, this, [this, sourceRow] {
        const QModelIndex current = m_table->currentIndex();
        if (current.isValid())
            loadResult(sourceRow(current));
    });
    connect(m_table, &QTableView::activated, this,
            [this, sourceRow](const QModelIndex &index) { loadResult(sourceRow(index)); });
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            [this] { m_load->setEnabled(m_table->selectionModel()->hasSelection()); });
    connect(m_frontPoints, &QScatterSeries::clicked, this, [this](const QPointF &point) {
        const QList<QPointF> points = m_frontPoints->points();
        for (int i = 0; i < points.size(); ++i)
            if (points.at(i) == point)
                loadParetoPoint(i);
    });
    connect(m_others, &QScatterSeries::clicked, this, [this](const QPointF &point) {
        const QList<QPointF> points = m_others->points();
        for (int i = 0; i < points.size(); ++i)
            if (points.at(i) == point)
                loadResult(i);
    });
    connect(m_document, &PlanDocument::planChanged, this, &SearchPanel::updateStale);
    connect(m_document, &PlanDocument::planChanged, m_fitLabel, [this] {
        m_fitLabel->clear();
        m_fitLabel->setVisible(false);
    });

    connect(m_job, &SearchJob::progress, this, [this](quint64 done, quint64 total) {
        m_progress->setValue(total ? int(1000.0 * double(done) / double(total)) : 0);
        m_progress->setFormat(tr("%1 of %2 layouts").arg(qs(formatCount((long long)done)),
                                                         qs(formatCount((long long)total))));
    });
    connect(m_job, &SearchJob::finished, this, [this] {
        setRunning(false);
        const SearchOutcome &o = m_job->outcome();
        m_model->setResults(o.ranked);
        m_pareto = o.pareto;
        updateChart();
        updateStale();
        m_table->resizeColumnsToContents();
        m_progress->setValue(o.cancelled ? m_progress->value() : 1000);
        // Without counting every fit, only the layouts that could reach the ranking or the front
        // were estimated: say so rather than show their fits as all of them.
        const QString summary =
            o.fitting_complete
                ? tr("%1 layouts evaluated, %2 fit, in %3.")
                      .arg(qs(formatCount((long long)o.evaluated)), qs(formatCount((long long)o.fitting)),
                           qs(formatSeconds(o.seconds)))
                : tr("%1 layouts evaluated in %3: %2 estimated (the others break a rule, cannot fit, or "
                     "cannot reach the ranking or the front).")
                      .arg(qs(formatCount((long long)o.evaluated)), qs(formatCount((long long)o.estimated)),
                           qs(formatSeconds(o.seconds)));
        if (o.cancelled)
            m_status->setText(tr("Cancelled: %1 Showing the best found so far.").arg(summary));
        else if (o.ranked.empty())
            m_status->setText(tr("%1 No layout fits: try a smaller sequence, more devices, offload or fewer constraints.").arg(summary));
        else
            m_status->setText(tr("%1 Double-click a layout (or press Enter) to load it.").arg(summary));
    });
    connect(m_job, &SearchJob::failed, this, [this](const QString &message) {
        setRunning(false);
        m_status->setText(tr("Search failed: %1").arg(message));
    });
}

SearchPanel::~SearchPanel() = default;

void SearchPanel::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::PaletteChange)
        applyChartPalette();
    QWidget::changeEvent(event);
}

void SearchPanel::applyChartPalette()
{
    const QPalette pal = palette();
    QChart *chart = m_chart->chart();
    chart->setTheme(isDark(pal) ? QChart::ChartThemeDark : QChart::ChartThemeLight);
    chart->setBackgroundBrush(pal.base());
    chart->setBackgroundRoundness(0);
    chart->setTitleBrush(pal.text());
    chart->legend()->setLabelColor(pal.color(QPalette::Text));
    for (QValueAxis *axis : {m_memoryAxis, m_timeAxis}) {
        axis->setLabelsColor(pal.color(QPalette::Text));
        axis->setTitleBrush(pal.text());
        axis->setGridLineColor(pal.color(QPalette::Mid));
    }
    // The theme sets the series' colours: the front in blue, the other layouts in grey.
    const QColor front = isDark(pal) ? QColor(0x6c, 0xa6, 0xe0) : QColor(0x1f, 0x6f, 0xb4);
    const QColor others(0x9a, 0xa4, 0xb1);
    m_others->setColor(others);
    m_others->setBorderColor(others);
    m_front->setColor(front);
    m_frontPoints->setColor(front);
    m_frontPoints->setBorderColor(front);
}

QString SearchPanel::statusText() const
{
    return m_status->text();
}

QString SearchPanel::fitText() const
{
    return m_fitLabel->text();
}

bool SearchPanel::isStale() const
{
    return m_model->isStale();
}

void SearchPanel::setGlobalBatch(qint64 value, BatchUnit unit)
{
    m_batchUnit->setCurrentIndex(m_batchUnit->findData(int(unit)));
    m_globalBatch->setValue(int(std::clamp<qint64>(value, 1, m_globalBatch->maximum())));
}

void SearchPanel::setRunning(bool running)
{
    for (QWidget *w : std::initializer_list<QWidget *>{
             m_run, m_globalBatch, m_batchUnit, m_top, m_offload, m_tp, m_pp, m_cp, m_maxDevices,
             m_headroom, m_fit})
        w->setEnabled(!running);
    for (int i = 0; i < 3; ++i) {
        m_recompute[i]->setEnabled(!running);
        m_offloadSet[i]->setEnabled(!running && m_offload->isChecked());
    }
    for (QCheckBox *b : m_axes)
        b->setEnabled(!running);
    m_cancel->setEnabled(running);
}

SearchRequest SearchPanel::request() const
{
    SearchRequest request;
    request.base = m_document->plan();
    const qint64 value = m_globalBatch->value();
    const int64_t seq = std::max<int64_t>(1, request.base.training.seq_len);
    request.global_batch = BatchUnit(m_batchUnit->currentData().toInt()) == BatchUnit::Tokens
                               ? std::max<int64_t>(1, value / seq)
                               : value;
    request.top = m_top->value();
    request.allow_offload = m_offload->isChecked();
    request.fixed_tp = m_tp->value();
    request.fixed_pp = m_pp->value();
    request.fixed_cp = m_cp->value();
    request.max_devices = m_maxDevices->value();
    request.min_headroom_bytes = m_headroom->value() * kGiB;
    request.allowed_recompute = 0;
    request.allowed_offload = 0;
    for (int i = 0; i < 3; ++i) {
        if (m_recompute[i]->isChecked())
            request.allowed_recompute |= uint8_t(1u << i);
        if (m_offloadSet[i]->isChecked())
            request.allowed_offload |= uint8_t(1u << i);
    }
    request.axes = 0;
    for (int i = 0; i < kAxes; ++i) {
        if (m_axes[i]->isChecked())
            request.axes |= 1u << i;
    }
    return request;
}

void SearchPanel::run()
{
    if (m_job->isRunning())
        return;
    const SearchRequest req = request();
    if (req.allowed_recompute == 0) {
        m_status->setText(tr("Allow at least one recompute mode."));
        return;
    }
    m_progress->setValue(0);
    m_progress->setFormat(tr("starting"));
    QString batch = tr("global batch %n sequence(s)", "", int(req.global_batch));
    if (BatchUnit(m_batchUnit->currentData().toInt()) == BatchUnit::Tokens)
        batch = tr("%1 (%2 tokens asked, %3 per sequence)")
                    .arg(batch, qs(formatCount(m_globalBatch->value())),
                         qs(formatCount(req.base.training.seq_len)));
    m_status->setText(tr("Searching layouts for %1, %2...")
                          .arg(describePlan(req.base, m_document->catalog()), batch));
    m_searchedKey = searchKey(req.base);
    setRunning(true);
    m_job->start(req);
}

void SearchPanel::cancel()
{
    m_job->stop();
}

void SearchPanel::updateStale()
{
    const bool stale = !m_searchedKey.empty() && m_model->rowCount() > 0 &&
                       searchKey(m_document->plan()) != m_searchedKey;
    m_model->setStale(stale);
    m_staleLabel->setVisible(stale);
    if (stale)
        m_staleLabel->setText(tr("The plan has changed since this search (model, sequence, "
                                 "precision or cluster): these results are for the earlier plan. "
                                 "Search again."));
}

void SearchPanel::updateChart()
{
    QList<QPointF> others, front;
    double maxMem = 0, maxTime = 0, minTime = INFINITY, minMem = INFINITY;
    auto point = [&](const SearchResult &r) {
        const QPointF p(r.required_bytes / kGiB, r.step_s);
        maxMem = std::max(maxMem, p.x());
        minMem = std::min(minMem, p.x());
        maxTime = std::max(maxTime, p.y());
        minTime = std::min(minTime, p.y());
        return p;
    };
    for (const SearchResult &r : m_model->results())
        others << point(r);
    for (const SearchResult &r : m_pareto)
        front << point(r);
    m_others->replace(others);
    m_front->replace(front);
    m_frontPoints->replace(front);
    if (others.isEmpty() && front.isEmpty()) {
        m_memoryAxis->setRange(0, 1);
        m_timeAxis->setRange(0, 1);
        return;
    }
    const double memPad = std::max(0.5, 0.05 * (maxMem - minMem));
    const double timePad = std::max(1e-6, 0.05 * (maxTime - minTime));
    m_memoryAxis->setRange(std::max(0.0, minMem - memPad), maxMem + memPad);
    m_timeAxis->setRange(std::max(0.0, minTime - timePad), maxTime + timePad);
}

QList<QPointF> SearchPanel::paretoPoints() const
{
    return m_frontPoints->points();
}

bool SearchPanel::loadPlan(const SearchResult &result)
{
    Plan plan = result.plan;
    // The name was the searched plan's: it does not name this layout.
    plan.name.clear();
    return m_document->apply(plan, tr("Load search result"), EditId::LoadPlan);
}

bool SearchPanel::loadResult(int row)
{
    const auto &results = m_model->results();
    if (row < 0 || row >= int(results.size()))
        return false;
    return loadPlan(results[size_t(row)]);
}

bool SearchPanel::loadParetoPoint(int index)
{
    if (index < 0 || index >= int(m_pareto.size()))
        return false;
    return loadPlan(m_pareto[size_t(index)]);
}

void SearchPanel::findLargestFit()
{
    const Plan &plan = m_document->plan();
    QApplication::setOverrideCursor(Qt::WaitCursor);
    try {
        const LargestFit f = largestFit(plan, m_document->catalog(), m_headroom->value() * kGiB);
        QApplication::restoreOverrideCursor();
        if (f.seq_len == 0 && f.micro_batch == 0) {
            m_fitLabel->setText(tr("With this layout not even %1 token(s) per sequence fit.")
                                    .arg(f.seq_step));
            m_fitLabel->setVisible(true);
            return;
        }
        QString text = tr("With this layout (%1): up to %2 tokens per sequence at micro-batch "
                          "%3; up to micro-batch %4 at %5 tokens.")
                           .arg(describePlan(plan, m_document->catalog()),
                                qs(formatCount(f.seq_len)),
                                QString::number(plan.training.micro_batch),
                                qs(formatCount(f.micro_batch)),
                                qs(formatCount(plan.training.seq_len)));
        if (f.seq_step > 1)
            text += QLatin1Char(' ') +
                    tr("Sequence lengths in steps of %1 (cp, and tp under SP).").arg(f.seq_step);
        m_fitLabel->setText(text);
        m_fitLabel->setVisible(true);
    } catch (const PlanError &e) {
        QApplication::restoreOverrideCursor();
        m_fitLabel->setText(tr("Cannot answer for this plan: %1").arg(qs(e.what())));
        m_fitLabel->setVisible(true);
    }
}

} // namespace shardscope
