#include "searchresultsmodel.h"

#include "layouttext.h"
#include "qstrings.h"

#include "core/units.h"

#include <QPalette>
#include <QStringList>

namespace shardscope {

namespace {

QString offloadText(const Offload &o)
{
    QStringList parts;
    if (o.optimizer)
        parts << SearchResultsModel::tr("optimizer");
    if (o.params)
        parts << SearchResultsModel::tr("params");
    if (o.grads)
        parts << SearchResultsModel::tr("grads");
    if (o.activations)
        parts << SearchResultsModel::tr("activations");
    return parts.isEmpty() ? SearchResultsModel::tr("none") : parts.join(QStringLiteral(", "));
}

QString shardingText(Sharding s)
{
    switch (s) {
    case Sharding::None: return SearchResultsModel::tr("none");
    case Sharding::Optimizer: return SearchResultsModel::tr("ZeRO-1 (optimizer)");
    case Sharding::Grads: return SearchResultsModel::tr("ZeRO-2 (+ gradients)");
    case Sharding::Full: return SearchResultsModel::tr("ZeRO-3 / FSDP");
    }
    return {};
}

} // namespace

SearchResultsModel::SearchResultsModel(QObject *parent) : QAbstractTableModel(parent) {}

SearchResultsModel::~SearchResultsModel() = default;

void SearchResultsModel::setResults(std::vector<SearchResult> results)
{
    beginResetModel();
    m_rows = std::move(results);
    m_stale = false;
    endResetModel();
}

void SearchResultsModel::setStale(bool stale)
{
    if (m_stale == stale)
        return;
    m_stale = stale;
    if (!m_rows.empty())
        Q_EMIT dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1), {Qt::ForegroundRole});
}

int SearchResultsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int SearchResultsModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant SearchResultsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const SearchResult &r = m_rows[size_t(index.row())];
    const Plan &p = r.plan;
    if (role == Qt::DisplayRole) {
        switch (Column(index.column())) {
        case RankColumn: return index.row() + 1;
        case LayoutColumn:
            return p.parallel.virtual_stages > 1
                       ? tr("%1 (%2 virtual stages)").arg(layoutText(p)).arg(p.parallel.virtual_stages)
                       : layoutText(p);
        case ShardingColumn: return shardingText(p.parallel.sharding);
        case CommunicationColumn: return qs(formatSeconds(r.step.communication_s));
        case BatchColumn: return tr("%1 x %2").arg(p.training.micro_batch).arg(p.training.grad_accum);
        case RecomputeColumn: {
            const QString rc = p.memory.recompute == Recompute::Full && p.memory.recompute_method == RecomputeMethod::Block
                                   ? tr("full, first %1 layers of a chunk").arg(p.memory.recompute_num_layers)
                                   : qs(toString(p.memory.recompute));
            QString text = rc;
            if (p.memory.recompute_activation_function && p.memory.recompute_norm)
                text = tr("%1, activation function and norms recomputed").arg(text);
            else if (p.memory.recompute_activation_function)
                text = tr("%1, activation function recomputed").arg(text);
            else if (p.memory.recompute_norm)
                text = tr("%1, norms recomputed").arg(text);
            return p.memory.swap_attention ? tr("%1, swap-attention").arg(text) : text;
        }
        case OffloadColumn: return offloadText(p.memory.offload);
        case PeakColumn: return qs(formatGiB(r.peak_bytes, 1));
        case RequiredColumn: return qs(formatGiB(r.required_bytes, 1));
        case StepTimeColumn: return qs(formatSeconds(r.step_s));
        case TokensColumn: return qs(formatCount((long long)(r.tokens_per_s + 0.5)));
        case MfuColumn: return QStringLiteral("%1%").arg(r.mfu * 100, 0, 'f', 1);
        case ParetoColumn: return r.pareto ? tr("yes") : QString();
        case ColumnCount: break;
        }
        return {};
    }
    if (role == SortRole) {
        switch (Column(index.column())) {
        case RankColumn: return index.row();
        case BatchColumn: return p.training.micro_batch * p.training.grad_accum;
        case PeakColumn: return r.peak_bytes;
        case RequiredColumn: return r.required_bytes;
        case StepTimeColumn: return r.step_s;
        case ShardingColumn: return int(p.parallel.sharding);
        case CommunicationColumn: return r.step.communication_s;
        case TokensColumn: return r.tokens_per_s;
        case MfuColumn: return r.mfu;
        case ParetoColumn: return r.pareto;
        default: return data(index, Qt::DisplayRole);
        }
    }
    if (role == Qt::TextAlignmentRole && index.column() >= PeakColumn && index.column() <= MfuColumn)
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::ForegroundRole && m_stale)
        return QPalette().brush(QPalette::Disabled, QPalette::Text);
    if (role == Qt::ToolTipRole)
        return tr("dp %1, tp %2, pp %3, cp %4, ep %5, sharding %6, sp %7")
            .arg(p.parallel.dp)
            .arg(p.parallel.tp)
            .arg(p.parallel.pp)
            .arg(p.parallel.cp)
            .arg(p.parallel.ep)
            .arg(qs(toString(p.parallel.sharding)), p.parallel.sp ? tr("on") : tr("off"));
    return {};
}

QVariant SearchResultsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (Column(section)) {
    case RankColumn: return tr("#");
    case LayoutColumn: return tr("Layout");
    case ShardingColumn: return tr("Sharding");
    case CommunicationColumn: return tr("Exposed comm.");
    case BatchColumn: return tr("Micro-batch x accum");
    case RecomputeColumn: return tr("Recompute");
    case OffloadColumn: return tr("Offload");
    case PeakColumn: return tr("Peak allocated");
    case RequiredColumn: return tr("Needed per rank");
    case StepTimeColumn: return tr("Step time");
    case TokensColumn: return tr("Tokens/s");
    case MfuColumn: return tr("MFU");
    case ParetoColumn: return tr("Pareto");
    case ColumnCount: break;
    }
    return {};
}

} // namespace shardscope
