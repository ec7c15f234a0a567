#include "benchmarkrunner.h"

#include "core/catalog.h"
#include "cpubackend.h"
#include "shardscope_config.h"
#include "torchbackend.h"

#include <QCoreApplication>
#include <QDir>
#include <QEventLoop>
#include <QFileInfo>

namespace shardscope {

QString locateWorkerScript()
{
    const QString name = QStringLiteral("shardscope_worker.py");
    const QString env = qEnvironmentVariable("SHARDSCOPE_WORKER");
    if (!env.isEmpty() && QFileInfo::exists(env))
        return env;
    QStringList candidates;
    // The data directory first ($SHARDSCOPE_DATA_DIR, else the one the running program's
    // install implies): shardscope-cli hands bench to shardscope-cli-qt in
    // <prefix>/libexec/shardscope with the directory it found, and from there ../share is not it.
    if (const std::string data = locateDataDir(); !data.empty())
        candidates << QString::fromStdString(data) + QStringLiteral("/worker/") + name;
    if (QCoreApplication::instance())
        candidates << QDir(QCoreApplication::applicationDirPath())
                          .filePath(QStringLiteral("../") + QLatin1String(SHARDSCOPE_DATA_SUBDIR) +
                                    QStringLiteral("/worker/") + name);
    candidates << QLatin1String(SHARDSCOPE_INSTALL_PREFIX) + QLatin1Char('/') +
                      QLatin1String(SHARDSCOPE_DATA_SUBDIR) + QStringLiteral("/worker/") + name;
    candidates << QLatin1String(SHARDSCOPE_SOURCE_RESOURCES_DIR) + QStringLiteral("/worker/") +
                      name;
    for (const QString &c : candidates)
        if (QFileInfo::exists(c))
            return QFileInfo(c).canonicalFilePath();
    return {};
}

BenchmarkRunner::BenchmarkRunner(QObject *parent) : QObject(parent) {}

BenchmarkRunner::~BenchmarkRunner()
{
    if (m_backend) {
        m_backend->disconnect(this);
        delete m_backend;
    }
}

bool BenchmarkRunner::start(const Plan &plan, const Workload &workload, const RunOptions &options)
{
    if (m_running) {
        m_error = QStringLiteral("a run is already in progress");
        return false;
    }
    Backend *b = nullptr;
    if (options.backend == QLatin1String("cpu"))
        b = new CpuBackend(this);
    else if (options.backend == QLatin1String("torch"))
        b = new TorchBackend(this);
    if (!b) {
        m_error = QStringLiteral("unknown backend \"%1\" (cpu or torch)").arg(options.backend);
        return false;
    }
    if (m_backend) {
        m_backend->disconnect(this);
        m_backend->deleteLater();
    }
    m_backend = b;
    m_error.clear();
    m_results = RunResults{};
    m_results.kernels = workload.kernels;
    m_results.measurements.assign(workload.kernels.size(), KernelMeasurement{});
    for (size_t i = 0; i < workload.kernels.size(); ++i) {
        m_results.measurements[i].name = workload.kernels[i].name;
        m_results.measurements[i].status.clear(); // not run yet
    }
    m_results.probe = workload.probe;
    m_withProbe = options.probe;
    m_total = int(workload.kernels.size()) + (options.probe ? 1 : 0);
    m_done = 0;
    m_running = true;
    // Queued: a backend living in another thread hands results over safely, and slots run
    // after start() has returned.
    connect(b, &Backend::started, this, &BenchmarkRunner::onStarted, Qt::QueuedConnection);
    connect(b, &Backend::kernelMeasured, this, &BenchmarkRunner::onKernel, Qt::QueuedConnection);
    connect(b, &Backend::probeMeasured, this, &BenchmarkRunner::onProbe, Qt::QueuedConnection);
    connect(b, &Backend::logLine, this, &BenchmarkRunner::logLine, Qt::QueuedConnection);
    connect(b, &Backend::finished, this, &BenchmarkRunner::onFinished, Qt::QueuedConnection);
    connect(b, &Backend::failed, this, &BenchmarkRunner::onFailed, Qt::QueuedConnection);
    b->start(plan, workload, options);
    return true;
}

void BenchmarkRunner::stop()
{
    if (m_running && m_backend)
        m_backend->stop();
}

QString BenchmarkRunner::currentName() const
{
    for (const KernelMeasurement &m : m_results.measurements)
        if (m.status.empty())
            return QString::fromStdString(m.name);
    return m_withProbe && m_results.probe_result.status.empty() ? QStringLiteral("memory probe")
                                                                : QString();
}

void BenchmarkRunner::onStarted(const BackendInfo &info)
{
    m_results.info = info;
    QString d = QStringLiteral("%1 backend on %2")
                    .arg(QString::fromStdString(info.backend), QString::fromStdString(info.device));
    if (!info.device_name.empty())
        d += QStringLiteral(" (%1)").arg(QString::fromStdString(info.device_name));
    if (!info.interpreter.empty())
        d += QStringLiteral(", interpreter %1").arg(QString::fromStdString(info.interpreter));
    if (!info.versions.empty())
        d += QStringLiteral(", %1").arg(QString::fromStdString(info.versions));
    if (info.world_size > 1)
        d += QStringLiteral(", %1 processes").arg(info.world_size);
    emit started(d);
    emit progress(m_done, m_total, currentName());
}

void BenchmarkRunner::onKernel(int index, const KernelMeasurement &m)
{
    if (index < 0 || size_t(index) >= m_results.measurements.size())
        return;
    const bool first = m_results.measurements[size_t(index)].status.empty();
    m_results.measurements[size_t(index)] = m;
    if (first)
        ++m_done;
    emit kernelMeasured(index);
    emit progress(m_done, m_total, currentName());
}

void BenchmarkRunner::onProbe(const ProbeMeasurement &p, const MemoryProbe &probe)
{
    m_results.probe = probe;
    m_results.probe_result = p;
    if (m_withProbe)
        ++m_done;
    emit probeMeasured();
    emit progress(m_done, m_total, currentName());
}

void BenchmarkRunner::onFinished()
{
    if (!m_running)
        return;
    m_running = false;
    emit finished();
}

void BenchmarkRunner::onFailed(const QString &error)
{
    if (!m_running)
        return;
    m_running = false;
    m_error = error;
    m_results.error = error.toStdString();
    emit failed(error);
}

RunResults runBlocking(const Plan &plan, const Workload &workload, const RunOptions &options,
                       const std::function<void(int, int, const QString &)> &progress)
{
    BenchmarkRunner runner;
    QEventLoop loop;
    QObject::connect(&runner, &BenchmarkRunner::finished, &loop, &QEventLoop::quit);
    QObject::connect(&runner, &BenchmarkRunner::failed, &loop, &QEventLoop::quit);
    if (progress)
        QObject::connect(&runner, &BenchmarkRunner::progress, &loop,
                         [&](int d, int t, const QString &c) { progress(d, t, c); });
    if (!runner.start(plan, workload, options)) {
        RunResults r;
        r.kernels = workload.kernels;
        r.error = runner.lastError().toStdString();
        return r;
    }
    loop.exec();
    return runner.results();
}

bool BenchmarkRunner::adoptResults(const RunResults &results)
{
    if (m_running)
        return false;
    m_results = results;
    return true;
}

} // namespace shardscope
