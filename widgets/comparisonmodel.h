#pragma once

#include "core/estimate.h"
#include "core/plan.h"

#include <QAbstractTableModel>
#include <vector>

namespace shardscope {

class Catalog;

/// A plan pinned for comparison, with its estimate at the time it was pinned.
struct PinnedPlan
{
    Plan plan;
    Estimate estimate;
};

/// Pinned plans side by side: one row per plan, its key figures as columns.
class ComparisonModel final : public QAbstractTableModel
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(ComparisonModel)

public:
    static constexpr int kMaxPlans = 4;

    enum Column {
        NameColumn,
        LayoutColumn,
        DeviceColumn,
        PeakColumn,
        ReserveColumn,
        RequiredColumn,
        FitsColumn,
        StepTimeColumn,
        TokensColumn,
        MfuColumn,
        ColumnCount
    };
    enum Role {
        SortRole = Qt::UserRole, ///< the raw number of numeric columns
    };

    explicit ComparisonModel(QObject *parent = nullptr);
    ~ComparisonModel() override;

    /// Adds a plan; false when kMaxPlans are pinned already.
    bool pin(const Plan &plan, const Estimate &estimate);
    void unpin(int row);
    void clear();
    const std::vector<PinnedPlan> &plans() const { return m_plans; }
    /// Worst rank's peak allocated bytes and its runtime reserve.
    static const RankMemory *worstRank(const Estimate &estimate);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    std::vector<PinnedPlan> m_plans;
};

} // namespace shardscope
