#pragma once

#include "backend.h"

#include <QObject>
#include <QPointer>
#include <functional>

namespace shardscope {

/// The facade a GUI or the CLI drives: starts the chosen backend on a workload, keeps every
/// measurement that came back (also when a later kernel or the worker fails) and reports
/// started / progress / finished / failed. Results cross threads through queued connections.
class BenchmarkRunner final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(BenchmarkRunner)

public:
    explicit BenchmarkRunner(QObject *parent = nullptr);
    ~BenchmarkRunner() override;

    /// Starts a run; false (and nothing happens) when one is already running or the backend is
    /// unknown (see lastError()).
    bool start(const Plan &plan, const Workload &workload, const RunOptions &options);
    /// Cancels the running job; failed("cancelled") follows. Results so far stay.
    void stop();
    bool isRunning() const { return m_running; }

    const RunResults &results() const { return m_results; }
    /// Takes over the results of another runner's finished run (a window rebuilt for another
    /// language keeps them); refused (false) while this one runs.
    bool adoptResults(const RunResults &results);
    QString lastError() const { return m_error; }
    /// Steps of a run: kernels, plus the probe when asked.
    int total() const { return m_total; }
    int done() const { return m_done; }

signals:
    void started(const QString &description);
    void progress(int done, int total, const QString &current);
    void kernelMeasured(int index);
    void probeMeasured();
    void logLine(const QString &line);
    void finished();
    void failed(const QString &error);

private:
    void onStarted(const BackendInfo &info);
    void onKernel(int index, const KernelMeasurement &m);
    void onProbe(const ProbeMeasurement &p, const MemoryProbe &probe);
    void onFinished();
    void onFailed(const QString &error);
    QString currentName() const;

    QPointer<Backend> m_backend;
    RunResults m_results;
    bool m_running = false;
    bool m_withProbe = false;
    int m_total = 0;
    int m_done = 0;
    QString m_error;
};

/// Runs a workload to the end in a local event loop (the CLI's headless path); `progress` is
/// called after each step. Needs a QCoreApplication.
RunResults
runBlocking(const Plan &plan, const Workload &workload, const RunOptions &options,
            const std::function<void(int done, int total, const QString &current)> &progress = {});

} // namespace shardscope
