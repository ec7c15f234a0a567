#include "searchjob.h"

#include "qstrings.h"

#include <QThread>
#include <chrono>

namespace shardscope {

SearchJob::SearchJob(const Catalog &catalog, QObject *parent)
    : QObject(parent), m_catalog(catalog)
{
}

SearchJob::~SearchJob()
{
    if (m_thread) {
        m_cancel->store(true);
        m_thread->wait();
        delete m_thread;
    }
}

void SearchJob::stop()
{
    if (m_cancel)
        m_cancel->store(true);
}

void SearchJob::start(const SearchRequest &request)
{
    if (m_thread)
        return;
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    auto cancel = m_cancel;
    const Catalog *catalog = &m_catalog;
    // The destructor waits for the thread, and events posted to a deleted receiver are
    // dropped, so the worker may post to `this`.
    m_thread = QThread::create([this, request, catalog, cancel] {
        using Clock = std::chrono::steady_clock;
        auto last = Clock::now() - std::chrono::seconds(1);
        const SearchProgress report = [this, &last](uint64_t done, uint64_t total) {
            const auto now = Clock::now();
            if (done < total && now - last < std::chrono::milliseconds(50))
                return;
            last = now;
            QMetaObject::invokeMethod(
                this, [this, done, total] { Q_EMIT progress(done, total); }, Qt::QueuedConnection);
        };
        try {
            SearchOutcome outcome = searchLayouts(request, *catalog, report, cancel.get());
            QMetaObject::invokeMethod(
                this,
                [this, outcome = std::move(outcome)]() mutable {
                    m_outcome = std::move(outcome);
                    m_error.clear();
                },
                Qt::QueuedConnection);
        } catch (const std::exception &e) {
            const QString message = qs(e.what());
            QMetaObject::invokeMethod(
                this, [this, message] { m_error = message; }, Qt::QueuedConnection);
        }
    });
    // Queued after the worker's last call, so the outcome or the error is in place.
    connect(m_thread, &QThread::finished, this, [this] {
        m_thread->deleteLater();
        m_thread = nullptr;
        if (m_error.isEmpty())
            Q_EMIT finished();
        else
            Q_EMIT failed(m_error);
    });
    m_thread->start(QThread::LowPriority);
    Q_EMIT started();
}

} // namespace shardscope
