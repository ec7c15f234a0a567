#pragma once

#include "core/estimate.h"

#include <QAbstractTableModel>
#include <vector>

namespace shardscope {

/// The collectives of one training step on one rank (a snapshot of Estimate::communication).
class CommunicationModel final : public QAbstractTableModel
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(CommunicationModel)

public:
    enum Column {
        CollectiveColumn,
        GroupColumn,
        PhaseColumn,
        MessageSizeColumn,
        CountColumn,
        TimeColumn,
        StepTimeColumn,
        ExposedColumn,
        NoteColumn,
        ColumnCount
    };
    enum Role {
        SortRole = Qt::UserRole, ///< the raw number (bytes, seconds, count) of numeric columns
    };

    explicit CommunicationModel(QObject *parent = nullptr);
    ~CommunicationModel() override;

    void setCollectives(std::vector<Collective> collectives);
    const std::vector<Collective> &collectives() const { return m_rows; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    std::vector<Collective> m_rows;
};

} // namespace shardscope
