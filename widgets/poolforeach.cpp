#include "poolforeach.h"

#include <QSemaphore>
#include <QThreadPool>
#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>

namespace shardscope {

void forEachOnPool(size_t n, FunctionRef<void(size_t k)> body, QThreadPool *pool)
{
    if (!pool)
        pool = QThreadPool::globalInstance();
    const size_t helpers = n < 2 ? 0 : std::min<size_t>(n - 1, size_t(std::max(0, pool->maxThreadCount() - 1)));
    if (helpers == 0) {
        forEachInTurn(n, body);
        return;
    }
    std::atomic<size_t> next{0};
    std::exception_ptr failure;
    std::mutex failureMutex;
    auto work = [&] {
        try {
            for (size_t k = next++; k < n; k = next++)
                body(k);
        } catch (...) {
            next = n;
            const std::lock_guard<std::mutex> lock(failureMutex);
            if (!failure)
                failure = std::current_exception();
        }
    };
    QSemaphore finished;
    int started = 0;
    for (size_t i = 0; i < helpers; ++i) {
        // A thread busy elsewhere (a search) is not waited for: the caller does its share.
        if (!pool->tryStart([&] {
                work();
                finished.release();
            }))
            break;
        ++started;
    }
    work();
    finished.acquire(started);
    if (failure)
        std::rethrow_exception(failure);
}

} // namespace shardscope
