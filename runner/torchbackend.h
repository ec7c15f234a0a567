#pragma once

#include "backend.h"

#include <QByteArray>
#include <QProcess>
#include <QTimer>
#include <memory>

namespace shardscope {

class Catalog;

/// The PyTorch worker (resources/worker/shardscope_worker.py) as a child process speaking the
/// JSON-lines protocol on its stdin and stdout; launched through torchrun
/// (python -m torch.distributed.run) when more than one process is asked for. A missing,
/// crashing, hanging or babbling worker ends the run with failed() and a message that says
/// which; results that came back before stay.
class TorchBackend final : public Backend
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(TorchBackend)

public:
    explicit TorchBackend(QObject *parent = nullptr);
    ~TorchBackend() override;

    void start(const Plan &plan, const Workload &workload, const RunOptions &options) override;
    void stop() override;

    /// The program and arguments start() runs (for messages and tests).
    static QStringList commandLine(const RunOptions &options, const QString &script);

private:
    void onStdout();
    void onStderr();
    void onFinished(int exitCode, QProcess::ExitStatus status);
    void onError(QProcess::ProcessError error);
    void onTimeout();
    void handleLine(const QByteArray &line);
    void sendRequests();
    void fail(const QString &message);
    void armWatchdog(int ms);
    QString stderrTail() const;
    QString waitingFor() const;

    QProcess *m_process = nullptr;
    QTimer m_watchdog;
    QByteArray m_stdout;
    QByteArray m_stderr;
    RunOptions m_options;
    std::unique_ptr<Plan> m_plan;
    Workload m_workload;
    MemoryProbe m_probe;
    bool m_hello = false;
    bool m_done = false;
    bool m_reported = false;
    bool m_probeSent = false;
    int m_answered = 0; ///< kernels answered so far
    QString m_program;
};

} // namespace shardscope
