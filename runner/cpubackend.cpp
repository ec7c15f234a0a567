#include "cpubackend.h"

#include "cpukernels.h"
#include "openblas.h"

#include <QFile>
#include <QPointer>
#include <QThread>

namespace shardscope {

CpuBackend::CpuBackend(QObject *parent)
    : Backend(parent), m_cancel(std::make_shared<std::atomic<bool>>(false))
{
}

CpuBackend::~CpuBackend()
{
    m_cancel->store(true);
    if (m_thread) {
        m_thread->wait();
        delete m_thread;
    }
}

BackendInfo CpuBackend::describe()
{
    BackendInfo i;
    i.backend = "cpu";
    i.device = "cpu";
    QFile f(QStringLiteral("/proc/cpuinfo"));
    if (f.open(QIODevice::ReadOnly)) {
        const QList<QByteArray> lines = f.readAll().split('\n');
        for (const QByteArray &l : lines) {
            if (l.startsWith("model name")) {
                i.device_name = l.mid(l.indexOf(':') + 1).trimmed().toStdString();
                break;
            }
        }
    }
    i.device_name += (i.device_name.empty() ? "" : ", ") +
                     std::to_string(QThread::idealThreadCount()) + " threads";
    std::string error;
    const openblas::Library *blas = openblas::library(&error);
    i.versions = blas ? blas->config() : error;
    i.protocol_version = 0; // in-process, no protocol
    return i;
}

void CpuBackend::start(const Plan &, const Workload &workload, const RunOptions &options)
{
    if (m_thread) {
        m_thread->wait();
        delete m_thread;
        m_thread = nullptr;
    }
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    m_reported = false;
    QPointer<CpuBackend> self(this);
    // The GEMM and attention kernels need OpenBLAS, opened here on the first run.
    std::string blasError;
    if (!openblas::library(&blasError)) {
        const QString why = QString::fromStdString(blasError);
        QMetaObject::invokeMethod(
            this,
            [self, why] {
                if (!self || self->m_reported)
                    return;
                self->m_reported = true;
                emit self->failed(why);
            },
            Qt::QueuedConnection);
        return;
    }
    auto cancel = m_cancel;
    const std::vector<Kernel> kernels = workload.kernels;
    const MemoryProbe probe = workload.probe;
    const bool withProbe = options.probe;
    cpukernels::Timing timing;
    timing.warmup = std::max(0, options.warmup);
    timing.repeats = std::max(1, options.repeats);
    timing.cancel = cancel.get();

    QMetaObject::invokeMethod(
        this,
        [self] {
            if (self)
                emit self->started(describe());
        },
        Qt::QueuedConnection);

    m_thread = QThread::create([self, cancel, kernels, probe, withProbe, timing] {
        for (size_t i = 0; i < kernels.size(); ++i) {
            if (cancel->load())
                break;
            const KernelMeasurement m = cpukernels::measure(kernels[i], timing);
            if (cancel->load())
                break;
            QMetaObject::invokeMethod(
                self.data(),
                [self, i, m] {
                    if (self && !self->m_reported)
                        emit self->kernelMeasured(int(i), m);
                },
                Qt::QueuedConnection);
        }
        if (withProbe && !cancel->load()) {
            ProbeMeasurement p;
            p.status = "skipped";
            p.message = "the cpu backend runs no training step; the torch backend runs the "
                        "memory probe (also on CPU)";
            QMetaObject::invokeMethod(
                self.data(),
                [self, p, probe] {
                    if (self && !self->m_reported)
                        emit self->probeMeasured(p, probe);
                },
                Qt::QueuedConnection);
        }
        const bool cancelled = cancel->load();
        QMetaObject::invokeMethod(
            self.data(),
            [self, cancelled] {
                if (!self || self->m_reported)
                    return;
                self->m_reported = true;
                if (cancelled)
                    emit self->failed(QStringLiteral("cancelled"));
                else
                    emit self->finished();
            },
            Qt::QueuedConnection);
    });
    m_thread->start();
}

void CpuBackend::stop()
{
    m_cancel->store(true);
}

} // namespace shardscope
