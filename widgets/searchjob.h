#pragma once

#include "core/search.h"

#include <QObject>
#include <atomic>
#include <memory>

class QThread;

namespace shardscope {

class Catalog;

/// Runs the layout search on a worker thread. The request is copied before the job starts;
/// progress and the outcome come back through queued calls on this object's thread.
class SearchJob final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(SearchJob)

public:
    explicit SearchJob(const Catalog &catalog, QObject *parent = nullptr);
    /// Cancels a running search and waits for its thread.
    ~SearchJob() override;

    bool isRunning() const { return m_thread != nullptr; }
    /// Starts a search; ignored while one runs.
    void start(const SearchRequest &request);
    /// Asks the running search to stop; it finishes with what it has.
    void stop();
    /// The outcome of the last finished search.
    const SearchOutcome &outcome() const { return m_outcome; }

Q_SIGNALS:
    void started();
    void progress(quint64 done, quint64 total);
    void finished();
    void failed(const QString &message);

private:
    const Catalog &m_catalog;
    QThread *m_thread = nullptr;
    std::shared_ptr<std::atomic<bool>> m_cancel;
    SearchOutcome m_outcome;
    QString m_error;
};

} // namespace shardscope
