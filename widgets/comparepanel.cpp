#include "comparepanel.h"

#include "comparisonmodel.h"
#include "componentstyle.h"
#include "layouttext.h"
#include "memorychartview.h"
#include "plandescription.h"
#include "plandocument.h"
#include "qstrings.h"

#include "core/catalog.h"
#include "core/units.h"

#include <QDir>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QPushButton>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

namespace shardscope {

ComparePanel::ComparePanel(PlanDocument *document, QWidget *parent)
    : QWidget(parent), m_document(document), m_model(new ComparisonModel(this)),
      m_table(new QTableView(this)), m_chart(new MemoryChartView(this)),
      m_pin(new QPushButton(tr("&Pin current plan"), this)),
      m_unpin(new QPushButton(tr("&Unpin"), this)),
      m_load(new QPushButton(tr("&Make current"), this))
{
    auto *cases = new QPushButton(tr("Pin the HCIE-AI &cases"), this);
    cases->setToolTip(tr("DDP, FSDP, TP8 and TP4 x FSDP2 for the 7B, 32K, 8 x 910B case"));
    m_pin->setToolTip(tr("Keep the current plan for comparison (up to four)"));
    m_load->setToolTip(tr("Load the selected pinned plan into the editor (undoable)"));
    connect(m_pin, &QPushButton::clicked, this, &ComparePanel::pinCurrent);
    connect(cases, &QPushButton::clicked, this, &ComparePanel::pinCases);
    connect(m_unpin, &QPushButton::clicked, this, &ComparePanel::unpinSelected);
    connect(m_load, &QPushButton::clicked, this, [this] {
        const QModelIndex current = m_table->currentIndex();
        if (current.isValid())
            loadPinned(current.row());
    });

    m_table->setModel(m_model);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setSectionResizeMode(ComparisonModel::PlanColumn, QHeaderView::Stretch);
    m_table->setWordWrap(false);
    connect(m_table, &QTableView::activated, this,
            [this](const QModelIndex &index) { loadPinned(index.row()); });

    m_chart->setTitles(tr("Worst rank of each pinned plan"), tr("pinned plan"));
    m_chart->setTooltipProvider([this](int bar, int segment) -> QString {
        if (bar < 0 || bar >= int(m_model->plans().size()))
            return {};
        const PinnedPlan &p = m_model->plans()[size_t(bar)];
        const RankMemory *r = ComparisonModel::worstRank(p.estimate);
        if (!r)
            return {};
        const double bytes = segment == ComponentStyle::kReserve ? r->reserve.total()
                                                                 : r->peak().bytes[size_t(segment)];
        return tr("<b>%1</b><br>%2: %3 on rank %4 at its %5 peak")
            .arg(m_model->title(bar).toHtmlEscaped(), ComponentStyle::name(segment),
                 qs(formatGiB(bytes)))
            .arg(r->rank)
            .arg(ComponentStyle::phaseName(r->peak_phase));
    });

    auto *buttons = new QHBoxLayout;
    buttons->addWidget(m_pin);
    buttons->addWidget(cases);
    buttons->addWidget(m_unpin);
    buttons->addWidget(m_load);
    buttons->addStretch();

    auto *splitter = new QSplitter(Qt::Horizontal, this);
    splitter->addWidget(m_table);
    splitter->addWidget(m_chart);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(buttons);
    layout->addWidget(splitter, 1);

    connect(m_model, &QAbstractItemModel::rowsInserted, this, &ComparePanel::refreshChart);
    connect(m_model, &QAbstractItemModel::rowsRemoved, this, &ComparePanel::refreshChart);
    connect(m_model, &QAbstractItemModel::modelReset, this, &ComparePanel::refreshChart);
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &ComparePanel::updateButtons);
    refreshChart();
}

ComparePanel::~ComparePanel() = default;

bool ComparePanel::pinCurrent()
{
    return m_model->pin(PinnedPlan{m_document->plan(), m_document->estimate(),
                                   describePlan(m_document->plan(), m_document->catalog()),
                                   m_document->isEdited()});
}

int ComparePanel::pinCases()
{
    const QDir dir(QString::fromStdString(locateDataDir()) + QStringLiteral("/cases"));
    static const char *const names[] = {"hcie-ai-ddp", "hcie-ai-fsdp", "hcie-ai-tp8",
                                        "hcie-ai-tp4-fsdp2"};
    m_model->clear();
    int pinned = 0;
    for (const char *name : names) {
        const std::optional<Plan> plan = PlanDocument::readPlanFile(
            dir.filePath(QLatin1String(name) + QStringLiteral(".plan.json")), m_document->catalog(),
            nullptr);
        if (plan && m_model->pin(PinnedPlan{*plan, shardscope::estimate(*plan, m_document->catalog()),
                                            describePlan(*plan, m_document->catalog()), false}))
            ++pinned;
    }
    return pinned;
}

void ComparePanel::unpinSelected()
{
    const QModelIndex current = m_table->currentIndex();
    if (current.isValid())
        m_model->unpin(current.row());
}

void ComparePanel::loadPinned(int row)
{
    if (row < 0 || row >= int(m_model->plans().size()))
        return;
    m_document->apply(m_model->plans()[size_t(row)].plan, tr("Load pinned plan"), EditId::LoadPlan);
}

void ComparePanel::refreshChart()
{
    std::vector<ChartBar> bars;
    double hbm = 0, usable = 0;
    int i = 0;
    for (const PinnedPlan &p : m_model->plans()) {
        const RankMemory *r = ComparisonModel::worstRank(p.estimate);
        ChartBar bar;
        bar.label = QStringLiteral("%1: %2").arg(QLatin1Char(char('A' + i++))).arg(layoutText(p.plan));
        if (r) {
            bar.bytes = r->peak();
            bar.reserve = r->reserve.total();
        }
        bars.push_back(bar);
        if (hbm == 0) {
            hbm = p.estimate.memory.hbm_bytes;
            usable = p.estimate.memory.usable_bytes;
        }
    }
    m_chart->setBars(bars, hbm, usable);
    m_table->resizeColumnsToContents();
    updateButtons();
}

void ComparePanel::updateButtons()
{
    m_pin->setEnabled(int(m_model->plans().size()) < ComparisonModel::kMaxPlans);
    const bool selected = m_table->selectionModel()->hasSelection();
    m_unpin->setEnabled(selected);
    m_load->setEnabled(selected);
}

} // namespace shardscope
