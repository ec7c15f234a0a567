#pragma once

#include "core/estimate.h"
#include "core/plan.h"

#include <QAbstractTableModel>
#include <QString>
#include <vector>

namespace shardscope {

class Catalog;

/// A plan pinned for comparison, with its estimate at the time it was pinned.
struct PinnedPlan
{
    Plan plan;
    Estimate estimate;
    QString description; ///< what the plan is (describePlan); empty: its layout
    bool edited = false; ///< edited since it was opened from a case or file
};

/// Pinned plans side by side: one row per plan, its key figures as columns.
class ComparisonModel final : public QAbstractTableModel
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(ComparisonModel)

public:
    static constexpr int kMaxPlans = 4;

    enum Column {
        PlanColumn, ///< what the plan is, derived from it
        NameColumn, ///< the user's name for it
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
    bool pin(const PinnedPlan &plan);
    bool pin(const Plan &plan, const Estimate &estimate) { return pin(PinnedPlan{plan, estimate, {}, false}); }
    /// "A: Llama 2 7B · ... (edited)": the tag of a row and what its plan is.
    QString title(int row) const;
    static QString tag(int row) { return QString(QLatin1Char(char('A' + row))); }
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
