#include "comparepanel.h"

#include "appsettings.h"
#include "comparisonmodel.h"
#include "componentstyle.h"
#include "filewrite.h"
#include "layouttext.h"
#include "memorychartview.h"
#include "plandescription.h"
#include "plandocument.h"
#include "qstrings.h"

#include "core/catalog.h"
#include "core/units.h"

#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QResizeEvent>
#include <QSplitter>
#include <QStandardPaths>
#include <QTableView>
#include <QVBoxLayout>

namespace shardscope {

namespace {

// The HCIE-AI case's layouts, the plan that runs out of memory first (the baseline).
const char *const kCases[] = {"hcie-ai-ddp", "hcie-ai-fsdp", "hcie-ai-fsdp-cp", "hcie-ai-tp8",
                              "hcie-ai-tp4-fsdp2"};

} // namespace

ComparePanel::ComparePanel(PlanDocument *document, QWidget *parent)
    : QWidget(parent), m_document(document), m_model(new ComparisonModel(document->catalog(), this)),
      m_table(new QTableView(this)), m_chart(new MemoryChartView(this)),
      m_pin(new QPushButton(tr("&Pin current plan"), this)),
      m_unpin(new QPushButton(tr("&Unpin"), this)),
      m_load(new QPushButton(tr("&Make current"), this)),
      m_save(new QPushButton(tr("Sa&ve comparison..."), this)),
      m_baseline(new QComboBox(this)), m_status(new QLabel(this))
{
    auto *cases = new QPushButton(tr("Pin the HCIE-AI &cases"), this);
    cases->setToolTip(tr("DDP, FSDP, FSDP with cp 8, TP8 and TP4 x FSDP2 for the 7B, 32K, "
                         "8 x 910B case; asks before replacing the plans pinned already"));
    auto *open = new QPushButton(tr("&Open comparison..."), this);
    open->setToolTip(tr("Pin the plans of a comparison saved before"));
    m_pin->setToolTip(tr("Keep the current plan for comparison (up to %1)").arg(ComparisonModel::kMaxPlans));
    m_load->setToolTip(tr("Load the selected pinned plan into the editor (undoable)"));
    m_save->setToolTip(tr("Save the pinned plans and the baseline to a JSON file"));
    m_baseline->setObjectName(QStringLiteral("baseline"));
    m_baseline->setToolTip(tr("The plan the others are compared against: the figures show their "
                              "difference to it, and the last columns what the plan changes"));
    m_status->setObjectName(QStringLiteral("compareStatus"));
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_status->hide();
    connect(m_pin, &QPushButton::clicked, this, &ComparePanel::pinCurrent);
    connect(cases, &QPushButton::clicked, this, [this] { pinCases(); });
    connect(m_unpin, &QPushButton::clicked, this, &ComparePanel::unpinSelected);
    connect(m_load, &QPushButton::clicked, this, [this] {
        const QModelIndex current = m_table->currentIndex();
        if (current.isValid())
            loadPinned(current.row());
    });
    connect(m_save, &QPushButton::clicked, this, [this] {
        QString path = QFileDialog::getSaveFileName(
            this, tr("Save comparison"), settings::startDirectory() + QStringLiteral("/comparison.json"),
            tr("Comparisons (*.json)"));
        if (path.isEmpty())
            return;
        if (!path.endsWith(QStringLiteral(".json")))
            path += QStringLiteral(".json");
        saveComparison(path);
    });
    connect(open, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Open comparison"), settings::startDirectory(),
                                                          tr("Comparisons (*.json);;All files (*)"));
        if (!path.isEmpty())
            openComparison(path);
    });
    connect(m_baseline, &QComboBox::activated, this,
            [this](int index) { m_model->setBaseline(m_baseline->itemData(index).toInt()); });

    m_table->setModel(m_model);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setWordWrap(false);
    m_table->setTextElideMode(Qt::ElideRight);
    // The figures first and sized to their contents; what the plans are, elided, after them
    // (the tooltip and the chart's tooltip give the whole text).
    QHeaderView *header = m_table->horizontalHeader();
    header->setStretchLastSection(false);
    for (int c = 0; c < ComparisonModel::ColumnCount; ++c)
        header->setSectionResizeMode(c, QHeaderView::ResizeToContents);
    const int em = fontMetrics().averageCharWidth();
    for (const auto &[column, chars] : {std::pair{ComparisonModel::PlanColumn, 40},
                                        std::pair{ComparisonModel::DifferenceColumn, 32},
                                        std::pair{ComparisonModel::NameColumn, 24}}) {
        header->setSectionResizeMode(column, QHeaderView::Interactive);
        header->resizeSection(column, chars * em);
    }
    connect(m_table, &QTableView::activated, this,
            [this](const QModelIndex &index) { loadPinned(index.row()); });

    m_chart->setTitles(tr("Worst rank of each pinned plan"), tr("pinned plan"));
    m_chart->setTooltipProvider([this](int bar, int segment) -> QString {
        if (bar < 0 || bar >= int(m_model->plans().size()))
            return {};
        const PinnedPlan &p = m_model->plans()[size_t(bar)];
        const RankMemory *r = worstRank(p.estimate.memory);
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
    auto *baselineLabel = new QLabel(tr("&Baseline:"), this);
    baselineLabel->setBuddy(m_baseline);
    buttons->addWidget(baselineLabel);
    buttons->addWidget(m_baseline);
    buttons->addStretch();
    buttons->addWidget(open);
    buttons->addWidget(m_save);

    auto *splitter = new QSplitter(Qt::Horizontal, this);
    splitter->addWidget(m_table);
    splitter->addWidget(m_chart);
    // The table first: its key figures must be readable without scrolling at 1366 px. The
    // split is set once the splitter has its width (see eventFilter).
    splitter->setStretchFactor(0, 1);
    splitter->setStretchFactor(1, 1);
    splitter->installEventFilter(this);
    m_splitter = splitter;

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(buttons);
    layout->addWidget(m_status);
    layout->addWidget(splitter, 1);

    connect(m_model, &QAbstractItemModel::rowsInserted, this, &ComparePanel::refreshChart);
    connect(m_model, &QAbstractItemModel::rowsRemoved, this, &ComparePanel::refreshChart);
    connect(m_model, &QAbstractItemModel::modelReset, this, &ComparePanel::refreshChart);
    connect(m_model, &QAbstractItemModel::headerDataChanged, this, &ComparePanel::updateBaselineChoices);
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &ComparePanel::updateButtons);
    refreshChart();
}

ComparePanel::~ComparePanel() = default;

bool ComparePanel::eventFilter(QObject *watched, QEvent *event)
{
    if (watched == m_splitter && event->type() == QEvent::Resize && !m_splitSet) {
        const int width = static_cast<QResizeEvent *>(event)->size().width();
        if (width > 0) {
            m_splitSet = true;
            m_splitter->setSizes({width * 11 / 20, width - width * 11 / 20});
        }
    }
    return QWidget::eventFilter(watched, event);
}

void ComparePanel::setReplacePrompt(std::function<Answer(int)> prompt)
{
    m_prompt = std::move(prompt);
}

void ComparePanel::say(const QString &message, bool error)
{
    m_message = message;
    m_status->setText(message);
    m_status->setVisible(!message.isEmpty());
    if (error) {
        auto *box = new QMessageBox(QMessageBox::Warning, tr("Compare"), message, QMessageBox::Ok, this);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->setObjectName(QStringLiteral("errorBox"));
        box->open();
    }
}

bool ComparePanel::pinCurrent()
{
    if (int(m_model->plans().size()) >= ComparisonModel::kMaxPlans) {
        say(tr("%1 plans are pinned; unpin one first.").arg(ComparisonModel::kMaxPlans));
        return false;
    }
    if (m_model->isPinned(m_document->plan())) {
        say(tr("The current plan is pinned already."));
        return false;
    }
    const bool pinned = m_model->pin(PinnedPlan{m_document->plan(), m_document->estimate(),
                                                describePlan(m_document->plan(), m_document->catalog()),
                                                m_document->isEdited()});
    say(pinned ? tr("Pinned as %1.").arg(ComparisonModel::tag(int(m_model->plans().size()) - 1)) : QString());
    return pinned;
}

int ComparePanel::pinAll(const std::vector<PinnedPlan> &plans, PinMode mode, const QString &what)
{
    const int already = int(m_model->plans().size());
    if (mode == PinMode::Ask && already > 0) {
        Answer answer = Answer::Cancel;
        if (m_prompt) {
            answer = m_prompt(already);
        } else {
            QMessageBox box(QMessageBox::Question, tr("Compare"),
                            tr("%n plan(s) are pinned. Add %1 to them, or replace them?", "", already)
                                .arg(what),
                            QMessageBox::NoButton, this);
            QPushButton *add = box.addButton(tr("&Add"), QMessageBox::AcceptRole);
            QPushButton *replace = box.addButton(tr("&Replace"), QMessageBox::DestructiveRole);
            box.addButton(QMessageBox::Cancel);
            box.setDefaultButton(add);
            box.exec();
            answer = box.clickedButton() == add       ? Answer::Add
                     : box.clickedButton() == replace ? Answer::Replace
                                                      : Answer::Cancel;
        }
        if (answer == Answer::Cancel) {
            say(tr("Nothing pinned; the pinned plans are as they were."));
            return 0;
        }
        mode = answer == Answer::Add ? PinMode::Add : PinMode::Replace;
    }
    if (mode == PinMode::Replace)
        m_model->clear();
    int pinned = 0, present = 0, full = 0;
    for (const PinnedPlan &p : plans) {
        if (m_model->isPinned(p.plan))
            ++present;
        else if (m_model->pin(p))
            ++pinned;
        else
            ++full;
    }
    QString message = tr("Pinned %n plan(s).", "", pinned);
    if (present > 0)
        message += QLatin1Char(' ') + tr("%n were pinned already.", "", present);
    if (full > 0)
        message += QLatin1Char(' ') + tr("%n did not fit: at most %1 plans are compared.", "", full)
                                          .arg(ComparisonModel::kMaxPlans);
    say(message);
    return pinned;
}

int ComparePanel::pinCases(PinMode mode)
{
    const QDir dir(QString::fromStdString(locateDataDir()) + QStringLiteral("/cases"));
    std::vector<PinnedPlan> plans;
    for (const char *name : kCases) {
        QString error;
        const std::optional<Plan> plan = PlanDocument::readPlanFile(
            dir.filePath(QLatin1String(name) + QStringLiteral(".plan.json")), m_document->catalog(), &error);
        if (!plan) {
            say(tr("The case %1 cannot be read: %2").arg(QLatin1String(name), error), true);
            return 0;
        }
        plans.push_back(PinnedPlan{*plan, shardscope::estimate(*plan, m_document->catalog()),
                                   describePlan(*plan, m_document->catalog()), false});
    }
    // Pinned into an empty comparison, the DDP plan that runs out of memory becomes the baseline.
    return pinAll(plans, mode, tr("the %n HCIE-AI case(s)", "", int(plans.size())));
}

bool ComparePanel::saveComparison(const QString &path)
{
    QString error;
    if (!writeFileSafely(path, QByteArray::fromStdString(m_model->toJson().dump(2) + "\n"), &error)) {
        say(error, true);
        return false;
    }
    settings::lastDirectory().set(QFileInfo(path).absolutePath());
    say(tr("Saved the comparison of %n plan(s) to %1.", "", int(m_model->plans().size()))
            .arg(QDir::toNativeSeparators(path)));
    return true;
}

bool ComparePanel::openComparison(const QString &path, PinMode mode)
{
    int baseline = 0;
    QString error;
    const auto plans = ComparisonModel::readFile(path, m_document->catalog(), &baseline, &error);
    if (!plans) {
        say(tr("The comparison was not opened; the pinned plans are unchanged.\n%1").arg(error), true);
        return false;
    }
    settings::lastDirectory().set(QFileInfo(path).absolutePath());
    const int pinned = pinAll(*plans, mode, QFileInfo(path).fileName());
    // The file's baseline, when the comparison is the file's alone.
    if (pinned > 0 && int(m_model->plans().size()) == pinned)
        m_model->setBaseline(baseline);
    return true;
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
        const RankMemory *r = worstRank(p.estimate.memory);
        ChartBar bar;
        bar.label = QStringLiteral("%1: %2").arg(ComparisonModel::tag(i++), layoutText(p.plan));
        if (r) {
            bar.bytes = r->peak();
            bar.reserve = r->reserve.total();
        }
        // Each plan against its own device and its own runtime reserve.
        bar.capacity = p.estimate.memory.hbm_bytes;
        bar.usable = p.estimate.memory.usable_bytes;
        bars.push_back(bar);
        if (hbm == 0) {
            hbm = p.estimate.memory.hbm_bytes;
            usable = p.estimate.memory.usable_bytes;
        }
    }
    m_chart->setBars(bars, hbm, usable);
    updateBaselineChoices();
    updateButtons();
}

void ComparePanel::updateBaselineChoices()
{
    const QSignalBlocker block(m_baseline);
    m_baseline->clear();
    m_baseline->addItem(tr("none"), -1);
    for (int row = 0; row < int(m_model->plans().size()); ++row) {
        m_baseline->addItem(ComparisonModel::tag(row), row);
        m_baseline->setItemData(m_baseline->count() - 1, m_model->title(row), Qt::ToolTipRole);
    }
    m_baseline->setCurrentIndex(m_baseline->findData(m_model->baseline()));
}

void ComparePanel::updateButtons()
{
    m_pin->setEnabled(int(m_model->plans().size()) < ComparisonModel::kMaxPlans);
    const bool selected = m_table->selectionModel()->hasSelection();
    m_unpin->setEnabled(selected);
    m_load->setEnabled(selected);
    m_save->setEnabled(!m_model->plans().empty());
    m_baseline->setEnabled(!m_model->plans().empty());
}

} // namespace shardscope
