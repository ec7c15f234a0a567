#pragma once

#include "core/measurement.h"
#include "core/plan.h"

#include <QAbstractTableModel>
#include <optional>

namespace shardscope {

/// The kernels of a run beside their prediction: one row per kernel. Holds a snapshot of the
/// run's results; setResults() resets it, updateKernel() refreshes one row as results arrive.
class RunnerResultsModel final : public QAbstractTableModel
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(RunnerResultsModel)

public:
    enum Column
    {
        Name,
        Shape,
        Status,
        Time,      ///< measured median of one call, at the size run
        Rate,      ///< FLOP/s, bytes/s or bus bandwidth
        Predicted, ///< engine: one call at the plan's full size
        Measured,  ///< one call at full size, extrapolated at the measured rate
        Ratio,     ///< measured / predicted
        PerStep,   ///< calls per training step
        ColumnCount
    };
    enum Role
    {
        SortRole = Qt::UserRole, ///< the raw number behind a cell (seconds, rates)
    };

    explicit RunnerResultsModel(QObject *parent = nullptr);

    /// Snapshot of a run; `device` and `plan` give the predictions (none without them).
    void setResults(const RunResults &results, const DeviceProfile *device, const Plan *plan);
    /// One kernel's measurement arrived.
    void updateKernel(int row, const KernelMeasurement &m);
    const RunResults &results() const { return m_results; }
    /// The device the predictions are for (the plan's), empty without one.
    QString predictedDevice() const;
    /// The device the kernels ran on ("cpu", "cuda (NVIDIA H200)"), from the results' backend.
    QString measuredDevice() const;
    /// Whether the kernels ran on another device than the one predicted (the CPU against a
    /// 910B plan): the ratio then compares two devices, not the prediction with its device.
    bool crossDevice() const;
    /// A sentence saying so, empty when the devices are the same.
    QString crossDeviceNote() const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    void recompare();

    RunResults m_results;
    std::optional<DeviceProfile> m_device;
    std::optional<Plan> m_plan;
    std::vector<KernelComparison> m_comparison;
};

} // namespace shardscope
