#include "comparisonmodel.h"

#include "layouttext.h"
#include "qstrings.h"

#include "core/units.h"

#include <QBrush>
#include <QColor>

namespace shardscope {

ComparisonModel::ComparisonModel(QObject *parent) : QAbstractTableModel(parent) {}

ComparisonModel::~ComparisonModel() = default;

bool ComparisonModel::pin(const PinnedPlan &plan)
{
    if (int(m_plans.size()) >= kMaxPlans)
        return false;
    const int row = int(m_plans.size());
    beginInsertRows(QModelIndex(), row, row);
    m_plans.push_back(plan);
    if (m_plans.back().description.isEmpty())
        m_plans.back().description = layoutText(plan.plan);
    endInsertRows();
    return true;
}

QString ComparisonModel::title(int row) const
{
    if (row < 0 || row >= int(m_plans.size()))
        return {};
    const PinnedPlan &p = m_plans[size_t(row)];
    const QString text = tr("%1: %2").arg(tag(row), p.description);
    return p.edited ? tr("%1 (edited)").arg(text) : text;
}

void ComparisonModel::unpin(int row)
{
    if (row < 0 || row >= int(m_plans.size()))
        return;
    beginRemoveRows(QModelIndex(), row, row);
    m_plans.erase(m_plans.begin() + row);
    endRemoveRows();
}

void ComparisonModel::clear()
{
    beginResetModel();
    m_plans.clear();
    endResetModel();
}

const RankMemory *ComparisonModel::worstRank(const Estimate &estimate)
{
    const RankMemory *worst = nullptr;
    for (const RankMemory &r : estimate.memory.ranks) {
        if (!worst || r.peak_bytes + r.reserve.total() > worst->peak_bytes + worst->reserve.total())
            worst = &r;
    }
    return worst;
}

int ComparisonModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_plans.size());
}

int ComparisonModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant ComparisonModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const PinnedPlan &p = m_plans[size_t(index.row())];
    const RankMemory *worst = worstRank(p.estimate);
    const double peak = worst ? worst->peak_bytes : 0;
    const double reserve = worst ? worst->reserve.total() : 0;
    const StepEstimate &s = p.estimate.step;
    if (role == Qt::DisplayRole) {
        switch (Column(index.column())) {
        case PlanColumn: return p.edited ? tr("%1 (edited)").arg(p.description) : p.description;
        case NameColumn: return qs(p.plan.name);
        case LayoutColumn: return layoutText(p.plan);
        case DeviceColumn: return tr("%1 x %2").arg(p.plan.cluster.world()).arg(qs(p.plan.cluster.device));
        case PeakColumn: return qs(formatGiB(peak, 1));
        case ReserveColumn: return qs(formatGiB(reserve, 1));
        case RequiredColumn: return qs(formatGiB(peak + reserve, 1));
        case FitsColumn: return p.estimate.memory.fits ? tr("fits") : tr("does not fit");
        case StepTimeColumn: return s.step_s > 0 ? qs(formatSeconds(s.step_s)) : tr("n/a");
        case TokensColumn: return s.step_s > 0 ? qs(formatCount((long long)(s.tokens_per_s + 0.5))) : tr("n/a");
        case MfuColumn: return s.step_s > 0 ? QStringLiteral("%1%").arg(s.mfu * 100, 0, 'f', 1) : tr("n/a");
        case ColumnCount: break;
        }
        return {};
    }
    if (role == SortRole) {
        switch (Column(index.column())) {
        case PeakColumn: return peak;
        case ReserveColumn: return reserve;
        case RequiredColumn: return peak + reserve;
        case FitsColumn: return p.estimate.memory.fits;
        case StepTimeColumn: return s.step_s;
        case TokensColumn: return s.tokens_per_s;
        case MfuColumn: return s.mfu;
        default: return data(index, Qt::DisplayRole);
        }
    }
    if (role == Qt::ForegroundRole && index.column() == FitsColumn)
        return QBrush(p.estimate.memory.fits ? QColor(0x2e, 0x7d, 0x32) : QColor(0xd3, 0x2f, 0x2f));
    if (role == Qt::TextAlignmentRole && index.column() >= PeakColumn)
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::ToolTipRole && index.column() == PlanColumn)
        return title(index.row());
    if (role == Qt::ToolTipRole && index.column() == NameColumn)
        return qs(p.plan.name);
    return {};
}

QVariant ComparisonModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    if (orientation == Qt::Vertical)
        return tag(section);
    switch (Column(section)) {
    case PlanColumn: return tr("Plan");
    case NameColumn: return tr("Name");
    case LayoutColumn: return tr("Layout");
    case DeviceColumn: return tr("Devices");
    case PeakColumn: return tr("Peak allocated");
    case ReserveColumn: return tr("Runtime reserve");
    case RequiredColumn: return tr("Needed per rank");
    case FitsColumn: return tr("HBM");
    case StepTimeColumn: return tr("Step time");
    case TokensColumn: return tr("Tokens/s");
    case MfuColumn: return tr("MFU");
    case ColumnCount: break;
    }
    return {};
}

} // namespace shardscope
