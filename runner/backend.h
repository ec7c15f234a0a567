#pragma once

#include "core/measurement.h"
#include "core/plan.h"
#include "core/workload.h"

#include <QMetaType>
#include <QObject>
#include <QString>
#include <QStringList>

namespace shardscope {

/// What a run needs besides the plan and its workload. Copied when a run starts; backends never
/// read settings.
struct RunOptions
{
    QString backend = QStringLiteral("cpu");             ///< cpu | torch
    QString device = QStringLiteral("cpu");              ///< torch backend: cuda | npu | cpu
    QString python = QStringLiteral("/usr/bin/python3"); ///< interpreter of the torch worker
    QString workerScript;                                ///< empty: locateWorkerScript()
    /// Worker processes on this node (>= 2 for collectives): the worker starts them itself, or
    /// torchrun --nproc_per_node does when launcherArgs are given (several nodes).
    int nproc = 1;
    QStringList launcherArgs; ///< extra torchrun arguments (--nnodes, --rdzv-endpoint, ...)
    int warmup = 2;
    int repeats = 5;
    int startTimeoutMs = 180000;  ///< until the worker's hello (Python and torch imports)
    int kernelTimeoutMs = 300000; ///< between two lines of the worker
    bool probe = true;
    /// Also time plain torch.matmul beside each GEMM (torch backend; validation runs).
    bool reference = false;
    /// Memory the probe may use; 0: 90% of the device's free memory (CPU: 2 GiB).
    double probeBudgetBytes = 0;
    /// A memory snapshot of the probe's steady step is written here (cuda / npu); "" for none.
    QString probeSnapshot;
};

/// The worker script: $SHARDSCOPE_WORKER, else worker/ in the data directory (locateDataDir),
/// else share/shardscope/worker next to the executable, else the install prefix's, else the
/// source tree's resources/worker. Empty when none exists.
QString locateWorkerScript();

/// Executes a workload's kernels somewhere and reports each measurement. Signals are emitted in
/// the thread that owns the backend; a run ends with exactly one of finished() or failed().
class Backend : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(Backend)

public:
    using QObject::QObject;
    ~Backend() override = default;

    virtual void start(const Plan &plan, const Workload &workload, const RunOptions &options) = 0;
    /// Cancels the run; failed("cancelled") follows.
    virtual void stop() = 0;

signals:
    void started(const shardscope::BackendInfo &info);
    void kernelMeasured(int index, const shardscope::KernelMeasurement &measurement);
    /// `probe` is the probe as run (layers that fit on this device).
    void probeMeasured(const shardscope::ProbeMeasurement &result,
                       const shardscope::MemoryProbe &probe);
    void logLine(const QString &line);
    void finished();
    void failed(const QString &error);
};

} // namespace shardscope

Q_DECLARE_METATYPE(shardscope::BackendInfo)
Q_DECLARE_METATYPE(shardscope::KernelMeasurement)
Q_DECLARE_METATYPE(shardscope::ProbeMeasurement)
Q_DECLARE_METATYPE(shardscope::MemoryProbe)
