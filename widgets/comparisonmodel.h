#pragma once

#include "core/estimate.h"
#include "core/plan.h"

#include <QAbstractTableModel>
#include <QString>
#include <optional>
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

/// Pinned plans side by side: one row per plan, its key figures first, then what it is and how
/// it differs from the baseline plan (another row, chosen by the user).
class ComparisonModel final : public QAbstractTableModel
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(ComparisonModel)

public:
    static constexpr int kMaxPlans = 8;

    enum Column {
        RequiredColumn,    ///< peak allocated + runtime reserve of the fullest rank
        FitsColumn,
        StepTimeColumn,
        TokensColumn,
        MfuColumn,
        DifferenceColumn,  ///< what it changes against the baseline
        PlanColumn,        ///< what the plan is, derived from it
        NameColumn,        ///< the user's name for it
        PeakColumn,
        ReserveColumn,
        ColumnCount
    };
    enum Role {
        SortRole = Qt::UserRole, ///< the raw number of numeric columns
    };

    /// `catalog` names the devices in the plans' descriptions and differences.
    explicit ComparisonModel(const Catalog &catalog, QObject *parent = nullptr);
    ~ComparisonModel() override;

    /// Adds a plan; false when kMaxPlans are pinned already.
    bool pin(const PinnedPlan &plan);
    bool pin(const Plan &plan, const Estimate &estimate) { return pin(PinnedPlan{plan, estimate, {}, false}); }
    /// Whether a plan with the same content (its name aside) is pinned.
    bool isPinned(const Plan &plan) const;
    void unpin(int row);
    void clear();
    const std::vector<PinnedPlan> &plans() const { return m_plans; }

    /// The row the others are compared against; -1 for none. The first plan pinned into an
    /// empty comparison becomes the baseline.
    int baseline() const { return m_baseline; }
    void setBaseline(int row);

    /// "A: Llama 2 7B · ... (edited)": the tag of a row and what its plan is.
    QString title(int row) const;
    static QString tag(int row) { return QString(QLatin1Char(char('A' + row))); }

    /// The comparison as a file: {"format": "shardscope-comparison", "version": 1, "baseline": 0,
    /// "plans": [{"plan": {plan file}, "edited": false}, ...]}.
    nlohmann::json toJson() const;
    /// Reads a comparison file: the plans evaluated, described and checked like plan files. On
    /// failure returns nothing and `error` names the file, the field and the rule
    /// ("plans[2].parallel.tp: ...").
    static std::optional<std::vector<PinnedPlan>> readFile(const QString &path, const Catalog &catalog,
                                                           int *baseline, QString *error);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    QString delta(int row, Column column) const;

    std::vector<PinnedPlan> m_plans;
    int m_baseline = -1;
    const Catalog &m_catalog;
};

} // namespace shardscope
