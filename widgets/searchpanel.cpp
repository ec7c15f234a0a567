#include "searchpanel.h"

#include "plandescription.h"
#include "plandocument.h"
#include "searchjob.h"
#include "searchresultsmodel.h"

#include "core/units.h"
#include "qstrings.h"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QTableView>
#include <QVBoxLayout>

namespace shardscope {

SearchPanel::SearchPanel(PlanDocument *document, QWidget *parent)
    : QWidget(parent), m_document(document), m_job(new SearchJob(document->catalog(), this)),
      m_model(new SearchResultsModel(this)), m_globalBatch(new QSpinBox(this)),
      m_top(new QSpinBox(this)), m_offload(new QCheckBox(tr("Try &offload"), this)),
      m_run(new QPushButton(tr("&Search layouts"), this)),
      m_cancel(new QPushButton(tr("Ca&ncel"), this)),
      m_load(new QPushButton(tr("&Load selected"), this)), m_progress(new QProgressBar(this)),
      m_status(new QLabel(this)), m_table(new QTableView(this))
{
    m_globalBatch->setRange(0, 1 << 20);
    m_globalBatch->setSpecialValueText(tr("from the plan"));
    m_globalBatch->setToolTip(tr("Sequences per optimizer step across all data-parallel ranks"));
    m_top->setRange(1, 500);
    m_top->setValue(20);
    m_offload->setChecked(true);
    m_cancel->setEnabled(false);
    m_load->setEnabled(false);
    m_progress->setRange(0, 1000);
    m_progress->setValue(0);
    m_progress->setTextVisible(true);
    m_status->setWordWrap(true);
    m_status->setText(tr("Finds the fastest layouts of this model, sequence and cluster that fit."));

    auto *globalLabel = new QLabel(tr("&Global batch"), this);
    globalLabel->setBuddy(m_globalBatch);
    auto *topLabel = new QLabel(tr("&Keep"), this);
    topLabel->setBuddy(m_top);
    auto *controls = new QHBoxLayout;
    controls->addWidget(globalLabel);
    controls->addWidget(m_globalBatch);
    controls->addWidget(topLabel);
    controls->addWidget(m_top);
    controls->addWidget(m_offload);
    controls->addWidget(m_run);
    controls->addWidget(m_cancel);
    controls->addWidget(m_progress, 1);
    controls->addWidget(m_load);

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

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(controls);
    layout->addWidget(m_status);
    layout->addWidget(m_table, 1);

    auto sourceRow = [proxy](const QModelIndex &index) { return proxy->mapToSource(index).row(); };
    connect(m_run, &QPushButton::clicked, this, &SearchPanel::run);
    connect(m_cancel, &QPushButton::clicked, this, &SearchPanel::cancel);
    connect(m_load, &QPushButton::clicked, this, [this, sourceRow] {
        const QModelIndex current = m_table->currentIndex();
        if (current.isValid())
            loadResult(sourceRow(current));
    });
    connect(m_table, &QTableView::activated, this,
            [this, sourceRow](const QModelIndex &index) { loadResult(sourceRow(index)); });
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            [this] { m_load->setEnabled(m_table->selectionModel()->hasSelection()); });

    connect(m_job, &SearchJob::progress, this, [this](quint64 done, quint64 total) {
        m_progress->setValue(total ? int(1000.0 * double(done) / double(total)) : 0);
        m_progress->setFormat(tr("%1 of %2 layouts").arg(qs(formatCount((long long)done)),
                                                         qs(formatCount((long long)total))));
    });
    connect(m_job, &SearchJob::finished, this, [this] {
        setRunning(false);
        const SearchOutcome &o = m_job->outcome();
        m_model->setResults(o.ranked);
        m_table->resizeColumnsToContents();
        m_progress->setValue(o.cancelled ? m_progress->value() : 1000);
        const QString summary = tr("%1 layouts evaluated, %2 fit, in %3.")
                                    .arg(qs(formatCount((long long)o.evaluated)),
                                         qs(formatCount((long long)o.fitting)),
                                         qs(formatSeconds(o.seconds)));
        if (o.cancelled)
            m_status->setText(tr("Cancelled: %1 Showing the best found so far.").arg(summary));
        else if (o.ranked.empty())
            m_status->setText(tr("%1 No layout fits: try a smaller sequence, more devices or offload.").arg(summary));
        else
            m_status->setText(tr("%1 Double-click a layout (or press Enter) to load it.").arg(summary));
    });
    connect(m_job, &SearchJob::failed, this, [this](const QString &message) {
        setRunning(false);
        m_status->setText(tr("Search failed: %1").arg(message));
    });
}

SearchPanel::~SearchPanel() = default;

QString SearchPanel::statusText() const
{
    return m_status->text();
}

void SearchPanel::setRunning(bool running)
{
    m_run->setEnabled(!running);
    m_cancel->setEnabled(running);
    m_globalBatch->setEnabled(!running);
    m_top->setEnabled(!running);
    m_offload->setEnabled(!running);
}

void SearchPanel::run()
{
    if (m_job->isRunning())
        return;
    SearchRequest request;
    request.base = m_document->plan();
    request.global_batch = m_globalBatch->value();
    request.top = m_top->value();
    request.allow_offload = m_offload->isChecked();
    m_progress->setValue(0);
    m_progress->setFormat(tr("starting"));
    m_status->setText(tr("Searching layouts for %1...")
                          .arg(describePlan(request.base, m_document->catalog())));
    setRunning(true);
    m_job->start(request);
}

void SearchPanel::cancel()
{
    m_job->stop();
}

bool SearchPanel::loadResult(int row)
{
    const auto &results = m_model->results();
    if (row < 0 || row >= int(results.size()))
        return false;
    Plan plan = results[size_t(row)].plan;
    // The name was the searched plan's: it does not name this layout.
    plan.name.clear();
    return m_document->apply(plan, tr("Load search result"), EditId::LoadPlan);
}

} // namespace shardscope
