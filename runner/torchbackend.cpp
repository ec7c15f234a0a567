#include "torchbackend.h"

#include "core/catalog.h"
#include "core/units.h"
#include "protocol.h"

#include <QFileInfo>
#include <QProcessEnvironment>

namespace shardscope {

namespace {

/// What resources/worker/shardscope_worker.py does when its interpreter cannot run it (too old,
/// no torch, no torch_npu for npu): one line on stderr after this prefix, then this exit status
/// (EXIT_ENVIRONMENT), before its hello.
constexpr int kExitEnvironment = 78;
constexpr char kWorkerSays[] = "shardscope-worker: ";

/// Why the interpreter cannot run the worker, from the worker's stderr: its own line, or
/// Python's when torchrun (python -m torch.distributed.run) itself lacks torch. Empty if
/// neither is there.
QString environmentProblem(const QByteArray &stderrText)
{
    for (const QByteArray &line : stderrText.split('\n')) {
        const qsizetype at = line.indexOf(kWorkerSays);
        if (at >= 0)
            return QString::fromUtf8(line.mid(at + qsizetype(sizeof kWorkerSays) - 1).trimmed());
    }
    if (stderrText.contains("torch.distributed.run") &&
        stderrText.contains("No module named 'torch'"))
        return QStringLiteral("cannot import torch, which torchrun (python -m "
                              "torch.distributed.run) needs; install PyTorch for this "
                              "interpreter (Debian: apt-get install python3-torch; elsewhere: "
                              "pip install torch)");
    return {};
}

} // namespace

TorchBackend::TorchBackend(QObject *parent) : Backend(parent)
{
    m_watchdog.setSingleShot(true);
    connect(&m_watchdog, &QTimer::timeout, this, &TorchBackend::onTimeout);
}

TorchBackend::~TorchBackend()
{
    if (m_process) {
        m_process->disconnect(this);
        if (m_process->state() != QProcess::NotRunning) {
            m_process->kill();
            m_process->waitForFinished(3000);
        }
    }
}

QStringList TorchBackend::commandLine(const RunOptions &o, const QString &script)
{
    QStringList args;
    args << o.python;
    if (!o.launcherArgs.isEmpty()) {
        // torchrun as a module of the chosen interpreter (so that this interpreter runs every
        // rank), for several nodes: the launcher arguments name the rendezvous.
        args << QStringLiteral("-m") << QStringLiteral("torch.distributed.run") << o.launcherArgs
             << QStringLiteral("--nproc_per_node") << QString::number(std::max(1, o.nproc))
             << script << QStringLiteral("--device") << o.device;
        return args;
    }
    // One node: the worker starts its own ranks (as torchrun --standalone would).
    args << QStringLiteral("-u") << script << QStringLiteral("--device") << o.device;
    if (o.nproc > 1)
        args << QStringLiteral("--nproc") << QString::number(o.nproc);
    return args;
}

void TorchBackend::start(const Plan &plan, const Workload &workload, const RunOptions &options)
{
    m_options = options;
    m_plan = std::make_unique<Plan>(plan);
    m_workload = workload;
    m_probe = workload.probe;
    m_hello = m_done = m_reported = m_probeSent = false;
    m_answered = 0;
    m_stdout.clear();
    m_stderr.clear();

    QString script = options.workerScript.isEmpty() ? locateWorkerScript() : options.workerScript;
    if (script.isEmpty() || !QFileInfo::exists(script)) {
        QMetaObject::invokeMethod(
            this,
            [this, script] {
                fail(script.isEmpty()
                         ? QStringLiteral("cannot find the worker script shardscope_worker.py "
                                          "(set SHARDSCOPE_WORKER or install ShardScope)")
                         : QStringLiteral("the worker script %1 does not exist").arg(script));
            },
            Qt::QueuedConnection);
        return;
    }
    const QStringList cmd = commandLine(options, script);
    m_program = cmd.join(QLatin1Char(' '));

    delete m_process;
    m_process = new QProcess(this);
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("PYTHONUNBUFFERED"), QStringLiteral("1"));
    env.insert(QStringLiteral("PYTHONDONTWRITEBYTECODE"), QStringLiteral("1"));
    m_process->setProcessEnvironment(env);
    connect(m_process, &QProcess::readyReadStandardOutput, this, &TorchBackend::onStdout);
    connect(m_process, &QProcess::readyReadStandardError, this, &TorchBackend::onStderr);
    connect(m_process, &QProcess::finished, this, &TorchBackend::onFinished);
    connect(m_process, &QProcess::errorOccurred, this, &TorchBackend::onError);
    armWatchdog(options.startTimeoutMs);
    m_process->start(cmd.front(), cmd.mid(1));
}

void TorchBackend::stop()
{
    if (m_reported)
        return;
    fail(QStringLiteral("cancelled"));
}

void TorchBackend::armWatchdog(int ms)
{
    m_watchdog.start(std::max(1, ms));
}

QString TorchBackend::stderrTail() const
{
    QByteArray tail = m_stderr.right(1500).trimmed();
    if (tail.isEmpty())
        return {};
    return QStringLiteral("\nworker stderr (last lines):\n") + QString::fromUtf8(tail);
}

QString TorchBackend::waitingFor() const
{
    if (!m_hello)
        return QStringLiteral("its hello");
    if (m_answered < int(m_workload.kernels.size()))
        return QStringLiteral("kernel %1")
            .arg(QString::fromStdString(m_workload.kernels[size_t(m_answered)].name));
    if (m_probeSent)
        return QStringLiteral("the memory probe");
    return QStringLiteral("\"done\"");
}

void TorchBackend::fail(const QString &message)
{
    m_watchdog.stop();
    if (m_process && m_process->state() != QProcess::NotRunning) {
        m_process->disconnect(this);
        // torchrun forwards SIGTERM to its ranks; kill if it does not go.
        m_process->terminate();
        if (!m_process->waitForFinished(2000)) {
            m_process->kill();
            m_process->waitForFinished(2000);
        }
    }
    if (m_reported)
        return;
    m_reported = true;
    emit failed(message);
}

void TorchBackend::onTimeout()
{
    const int ms = m_hello ? m_options.kernelTimeoutMs : m_options.startTimeoutMs;
    fail(QStringLiteral("the worker did not answer within %1 s while waiting for %2; stopped it "
                        "(hung or too slow: raise the timeout)%3")
             .arg(ms / 1000.0)
             .arg(waitingFor(), stderrTail()));
}

void TorchBackend::onError(QProcess::ProcessError error)
{
    if (error == QProcess::FailedToStart)
        fail(QStringLiteral("cannot start the Python interpreter \"%1\": %2 (choose another "
                            "with --python or in the runner settings)")
                 .arg(m_options.python, m_process ? m_process->errorString() : QString()));
}

void TorchBackend::onFinished(int exitCode, QProcess::ExitStatus status)
{
    onStdout();
    onStderr();
    if (m_reported)
        return;
    if (m_done) {
        m_watchdog.stop();
        m_reported = true;
        emit finished();
        return;
    }
    if (!m_hello) {
        // The interpreter lacks what the worker needs: the worker's own words, and which
        // interpreter it was.
        QString why = environmentProblem(m_stderr);
        if (why.isEmpty() && status == QProcess::NormalExit && exitCode == kExitEnvironment)
            why = QStringLiteral("the worker exited with status %1 (this interpreter cannot run "
                                 "it)%2")
                      .arg(exitCode)
                      .arg(stderrTail());
        if (!why.isEmpty()) {
            fail(QStringLiteral("the Python interpreter \"%1\" cannot run the worker: %2; or "
                                "choose another interpreter with --python or in the runner "
                                "settings")
                     .arg(m_options.python, why));
            return;
        }
    }
    const QString how = status == QProcess::CrashExit
                            ? QStringLiteral("crashed")
                            : QStringLiteral("exited with status %1").arg(exitCode);
    fail(QStringLiteral("the worker %1 while waiting for %2 (%3)%4")
             .arg(how, waitingFor(), m_program, stderrTail()));
}

void TorchBackend::onStderr()
{
    if (!m_process)
        return;
    const QByteArray chunk = m_process->readAllStandardError();
    m_stderr += chunk;
    if (m_stderr.size() > 64 * 1024)
        m_stderr = m_stderr.right(32 * 1024);
    for (const QByteArray &l : chunk.split('\n'))
        if (!l.trimmed().isEmpty())
            emit logLine(QString::fromUtf8(l));
}

void TorchBackend::onStdout()
{
    if (!m_process)
        return;
    m_stdout += m_process->readAllStandardOutput();
    int nl;
    while (!m_reported && (nl = m_stdout.indexOf('\n')) >= 0) {
        const QByteArray line = m_stdout.left(nl);
        m_stdout.remove(0, nl + 1);
        handleLine(line);
    }
    if (!m_reported && m_stdout.size() > 1024 * 1024)
        fail(QStringLiteral("the worker wrote more than 1 MiB without a newline"));
}

void TorchBackend::handleLine(const QByteArray &raw)
{
    if (raw.trimmed().isEmpty())
        return;
    const protocol::Message msg =
        protocol::parseLine(std::string_view(raw.constData(), size_t(raw.size())));
    if (msg.type == protocol::MessageType::Invalid) {
        fail(QStringLiteral("the worker wrote a line that is not the runner protocol (%1): "
                            "\"%2\"%3")
                 .arg(QString::fromStdString(msg.error), QString::fromUtf8(raw.left(200)),
                      stderrTail()));
        return;
    }
    armWatchdog(m_options.kernelTimeoutMs);
    const nlohmann::json &b = msg.body;
    switch (msg.type) {
    case protocol::MessageType::Hello: {
        if (m_hello) {
            fail(QStringLiteral("the worker said hello twice"));
            return;
        }
        const std::string bad = protocol::checkHello(b);
        if (!bad.empty()) {
            fail(QString::fromStdString(bad));
            return;
        }
        m_hello = true;
        BackendInfo info = protocol::infoFromHello(b);
        if (info.interpreter.empty())
            info.interpreter = m_options.python.toStdString();
        emit started(info);
        // The probe gets as many layers as the device holds.
        if (m_options.probe) {
            double budget = m_options.probeBudgetBytes;
            if (budget <= 0)
                budget = info.free_memory > 0 && m_options.device != QLatin1String("cpu")
                             ? 0.9 * info.free_memory
                             : 2.0 * kGiB;
            try {
                const int layers = probeLayersThatFit(*m_plan, m_probe, Catalog::builtin(), budget);
                m_probe.scaled_down = m_probe.scaled_down || layers < m_probe.model.layers;
                m_probe.layers = layers;
                m_probe.model.layers = layers;
            } catch (const std::exception &e) {
                m_probe.layers = 0;
                m_probe.note = e.what();
            }
        }
        sendRequests();
        return;
    }
    case protocol::MessageType::Result: {
        if (!m_hello) {
            fail(QStringLiteral("the worker sent a result before its hello"));
            return;
        }
        if (msg.id < 0 || msg.id >= int(m_workload.kernels.size())) {
            fail(QStringLiteral("the worker answered kernel id %1, which was not asked")
                     .arg(msg.id));
            return;
        }
        KernelMeasurement m = protocol::measurementFromResult(b);
        if (m.name.empty())
            m.name = m_workload.kernels[size_t(msg.id)].name;
        m_answered = std::max(m_answered, msg.id + 1);
        emit kernelMeasured(msg.id, m);
        return;
    }
    case protocol::MessageType::ProbeResult: {
        emit probeMeasured(protocol::probeFromResult(b), m_probe);
        return;
    }
    case protocol::MessageType::Error: {
        const QString text =
            QString::fromStdString(b.value("message", std::string("unknown error")));
        if (msg.id >= 0 && msg.id < int(m_workload.kernels.size())) {
            // One kernel failed; the worker goes on with the next.
            KernelMeasurement m;
            m.name = m_workload.kernels[size_t(msg.id)].name;
            m.status = "error";
            m.message = text.toStdString();
            m_answered = std::max(m_answered, msg.id + 1);
            emit kernelMeasured(msg.id, m);
            return;
        }
        fail(QStringLiteral("the worker failed: %1%2").arg(text, stderrTail()));
        return;
    }
    case protocol::MessageType::Log:
        emit logLine(QString::fromStdString(b.value("message", std::string())));
        return;
    case protocol::MessageType::Done:
        m_done = true;
        if (m_process)
            m_process->closeWriteChannel();
        // finished() follows when the process exits; the watchdog still guards it.
        armWatchdog(30000);
        return;
    case protocol::MessageType::Invalid:
        return;
    }
}

void TorchBackend::sendRequests()
{
    std::string out =
        protocol::configLine(m_options.warmup, m_options.repeats, m_options.reference);
    for (size_t i = 0; i < m_workload.kernels.size(); ++i)
        out += protocol::kernelLine(int(i), m_workload.kernels[i]);
    if (m_options.probe && m_probe.layers > 0) {
        if (m_options.device != QLatin1String("cpu"))
            m_probe.snapshot = m_options.probeSnapshot.toStdString();
        out += protocol::probeLine(m_probe);
        m_probeSent = true;
    } else if (m_options.probe) {
        ProbeMeasurement p;
        p.status = "skipped";
        p.message = "not even one layer of the model fits in the probe's memory budget";
        emit probeMeasured(p, m_probe);
    }
    out += protocol::endLine();
    m_process->write(out.data(), qint64(out.size()));
}

} // namespace shardscope
