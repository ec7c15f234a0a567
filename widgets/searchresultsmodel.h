#pragma once

#include "core/search.h"

#include <QAbstractTableModel>
#include <vector>

namespace shardscope {

/// Ranked layouts of a search (a snapshot of SearchOutcome::ranked).
class SearchResultsModel final : public QAbstractTableModel
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(SearchResultsModel)

public:
    enum Column {
        RankColumn,
        LayoutColumn,
        ShardingColumn,
        BatchColumn,
        RecomputeColumn,
        OffloadColumn,
        PeakColumn,
        RequiredColumn,
        StepTimeColumn,
        CommunicationColumn, ///< exposed communication per step
        TokensColumn,
        MfuColumn,
        ParetoColumn,
        ColumnCount
    };
    enum Role {
        SortRole = Qt::UserRole, ///< the raw number of numeric columns
    };

    explicit SearchResultsModel(QObject *parent = nullptr);
    ~SearchResultsModel() override;

    void setResults(std::vector<SearchResult> results);
    /// Stale results are for an earlier plan: shown greyed until the next search.
    void setStale(bool stale);
    bool isStale() const { return m_stale; }
    const std::vector<SearchResult> &results() const { return m_rows; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    std::vector<SearchResult> m_rows;
    bool m_stale = false;
};

} // namespace shardscope
