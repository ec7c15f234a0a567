#pragma once

#include "backend.h"

#include <QThread>
#include <atomic>
#include <memory>

namespace shardscope {

/// Native kernels on the host CPU (OpenBLAS), in a thread of its own. Always available.
class CpuBackend final : public Backend
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(CpuBackend)

public:
    explicit CpuBackend(QObject *parent = nullptr);
    ~CpuBackend() override;

    void start(const Plan &plan, const Workload &workload, const RunOptions &options) override;
    void stop() override;

    static BackendInfo describe();

private:
    void finishThread();

    QThread *m_thread = nullptr;
    std::shared_ptr<std::atomic<bool>> m_cancel;
    bool m_reported = false;
};

} // namespace shardscope
