#include "communicationpanel.h"

#include "collectivechartview.h"
#include "communicationmodel.h"
#include "plandocument.h"
#include "richtextlabel.h"
#include "qstrings.h"

#include "core/units.h"

#include <QHeaderView>
#include <QLabel>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableView>
#include <QVBoxLayout>

namespace shardscope {

CommunicationPanel::CommunicationPanel(PlanDocument *document, QWidget *parent)
    : QWidget(parent), m_document(document), m_model(new CommunicationModel(this)),
      m_summary(new RichTextLabel(this)), m_stack(new QStackedWidget(this)),
      m_placeholder(new QLabel(this)), m_table(new QTableView(this)),
      m_chart(new CollectiveChartView(this))
{

    auto *proxy = new QSortFilterProxyModel(this);
    proxy->setSourceModel(m_model);
    proxy->setSortRole(CommunicationModel::SortRole);
    m_table->setModel(proxy);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(-1, Qt::AscendingOrder);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setAlternatingRowColors(true);
    m_table->verticalHeader()->hide();
    // What each collective carries is the last column and takes the rest of the width, never less
    // than a readable minimum (the table scrolls instead); the whole text is its tooltip.
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->horizontalHeader()->setMinimumSectionSize(fontMetrics().averageCharWidth() * 4);
    m_table->setWordWrap(false);
    m_table->setTextElideMode(Qt::ElideRight);

    m_placeholder->setAlignment(Qt::AlignCenter);
    m_placeholder->setWordWrap(true);
    m_placeholder->setEnabled(false);

    auto *splitter = new QSplitter(Qt::Horizontal);
    splitter->addWidget(m_table);
    splitter->addWidget(m_chart);
    // The table's ten columns need most of a 1366-pixel screen; the chart reads at a quarter.
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 1);
    splitter->setChildrenCollapsible(false);
    m_chart->setMinimumWidth(260);
    splitter->setSizes({1000, 340});
    m_stack->addWidget(splitter);
    m_stack->addWidget(m_placeholder);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_summary);
    layout->addWidget(m_stack, 1);

    connect(m_document, &PlanDocument::planChanged, this, &CommunicationPanel::refresh);
    refresh();
}

CommunicationPanel::~CommunicationPanel() = default;

QString CommunicationPanel::summaryText() const
{
    return m_summary->text();
}

bool CommunicationPanel::showsPlaceholder() const
{
    return m_stack->currentWidget() == m_placeholder;
}

void CommunicationPanel::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    if (m_stale)
        refresh();
}

void CommunicationPanel::refresh()
{
    // A panel in a background tab catches up when it is shown.
    if (!isVisible() && m_model->rowCount() > 0) {
        m_stale = true;
        return;
    }
    m_stale = false;
    const Estimate &e = m_document->estimate();
    m_model->setCollectives(e.communication);
    m_chart->setCollectives(e.communication);
    // Sized again when a text column's contents change ("dp (8 ranks)" to "dp (128 ranks)"), not
    // for every new number.
    QString rows;
    for (int r = 0; r < m_model->rowCount(); ++r)
        for (int c : {CommunicationModel::CollectiveColumn, CommunicationModel::GroupColumn,
                      CommunicationModel::PhaseColumn, CommunicationModel::NoteColumn})
            rows += m_model->index(r, c).data().toString() + QLatin1Char('\t');
    if (rows != m_shownRows) {
        m_shownRows = rows;
        m_table->resizeColumnsToContents();
        // The last column is the note: it stretches; sized to its contents it would push the
        // numbers off screen.
        auto *header = m_table->horizontalHeader();
        header->resizeSection(CommunicationModel::NoteColumn, fontMetrics().averageCharWidth() * 24);
    }

    const StepEstimate &s = e.step;
    if (s.step_s > 0) {
        m_summary->setText(
            tr("<b>Step %1</b> = compute %2 + exposed communication %3 + pipeline bubble %4 + "
               "offload %5 &nbsp;&middot;&nbsp; <b>%6 tokens/s</b> &nbsp;&middot;&nbsp; "
               "<b>MFU %7%</b> (HFU %8%)")
                .arg(qs(formatSeconds(s.step_s)), qs(formatSeconds(s.compute_s)),
                     qs(formatSeconds(s.communication_s)), qs(formatSeconds(s.bubble_s)),
                     qs(formatSeconds(s.offload_s)),
                     qs(formatCount((long long)(s.tokens_per_s + 0.5))))
                .arg(s.mfu * 100, 0, 'f', 1)
                .arg(s.hfu * 100, 0, 'f', 1));
    } else {
        m_summary->setText(tr("No step-time estimate for this plan yet."));
    }

    if (e.communication.empty()) {
        m_placeholder->setText(
            m_document->plan().cluster.world() == 1
                ? tr("A single device: this step has no collectives.")
                : tr("The engine reports no collectives for this plan."));
        m_stack->setCurrentWidget(m_placeholder);
    } else {
        m_stack->setCurrentIndex(0);
    }
}

} // namespace shardscope
