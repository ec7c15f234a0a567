#include "communicationmodel.h"

#include "componentstyle.h"
#include "qstrings.h"

#include "core/units.h"
#include "i18n/enginetext.h"

namespace shardscope {

namespace {

/// The phase as a word of the interface language ("forward" reads 前向 in Chinese); a key the
/// memory phases do not share stays as it is.
QString phaseText(const Collective &c)
{
    const Phase p = phaseFromKey(c.phase);
    return p == Phase::Count ? qs(c.phase) : ComponentStyle::phaseName(p);
}

} // namespace

CommunicationModel::CommunicationModel(QObject *parent) : QAbstractTableModel(parent) {}

CommunicationModel::~CommunicationModel() = default;

void CommunicationModel::setCollectives(std::vector<Collective> collectives)
{
    // As many rows as before (a plan change that moves numbers only): the rows change in place,
    // so that the view keeps its selection and scroll position and is not rebuilt.
    // Only the cells whose text or sort key moved are announced, one by one: a view repaints a
    // single changed cell, but the whole table for a range.
    if (collectives.size() == m_rows.size() && !m_rows.empty()) {
        const int rows = int(m_rows.size());
        std::vector<QVariant> before;
        before.reserve(size_t(rows) * 2 * ColumnCount);
        for (int r = 0; r < rows; ++r)
            for (int c = 0; c < ColumnCount; ++c)
                for (int role : {int(Qt::DisplayRole), int(SortRole)})
                    before.push_back(data(index(r, c), role));
        m_rows = std::move(collectives);
        size_t k = 0;
        for (int r = 0; r < rows; ++r) {
            for (int c = 0; c < ColumnCount; ++c) {
                const QModelIndex i = index(r, c);
                const bool changed = before[k] != data(i, Qt::DisplayRole) || before[k + 1] != data(i, SortRole);
                k += 2;
                if (changed)
                    Q_EMIT dataChanged(i, i);
            }
        }
        return;
    }
    beginResetModel();
    m_rows = std::move(collectives);
    endResetModel();
}

int CommunicationModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int CommunicationModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant CommunicationModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Collective &c = m_rows[size_t(index.row())];
    const double perStep = c.time_s * c.count_per_step;
    if (role == Qt::DisplayRole) {
        switch (Column(index.column())) {
        case CollectiveColumn: return qs(c.collective);
        case GroupColumn: return tr("%1 (%2 ranks)").arg(qs(c.group)).arg(c.group_size);
        case PhaseColumn: return phaseText(c);
        case MessageSizeColumn: return qs(formatBytes(c.bytes));
        case CountColumn: return QString::number(c.count_per_step, 'g', 6);
        case TimeColumn: return qs(formatSeconds(c.time_s));
        case StepTimeColumn: return qs(formatSeconds(perStep));
        case ExposedColumn: return qs(formatSeconds(c.exposed_time_s));
        case NoteColumn: return translatedNote(c.note);
        case ColumnCount: break;
        }
        return {};
    }
    if (role == SortRole) {
        switch (Column(index.column())) {
        case MessageSizeColumn: return c.bytes;
        case CountColumn: return c.count_per_step;
        case TimeColumn: return c.time_s;
        case StepTimeColumn: return perStep;
        case ExposedColumn: return c.exposed_time_s;
        case GroupColumn: return c.group_size;
        default: return data(index, Qt::DisplayRole);
        }
    }
    if (role == Qt::TextAlignmentRole) {
        switch (Column(index.column())) {
        case MessageSizeColumn:
        case CountColumn:
        case TimeColumn:
        case StepTimeColumn:
        case ExposedColumn: return QVariant(Qt::AlignRight | Qt::AlignVCenter);
        default: return QVariant(Qt::AlignLeft | Qt::AlignVCenter);
        }
    }
    if (role == Qt::ToolTipRole)
        return translatedNote(c.note);
    return {};
}

QVariant CommunicationModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (Column(section)) {
    case CollectiveColumn: return tr("Collective");
    case GroupColumn: return tr("Group");
    case PhaseColumn: return tr("Phase");
    case MessageSizeColumn: return tr("Message size");
    case CountColumn: return tr("Calls / step");
    case TimeColumn: return tr("Time / call");
    case StepTimeColumn: return tr("Time / step");
    case ExposedColumn: return tr("Exposed / step");
    case NoteColumn: return tr("Carries");
    case ColumnCount: break;
    }
    return {};
}

} // namespace shardscope
