#pragma once

#include <QDateTime>
#include <QList>
#include <QObject>
#include <QString>
#include <memory>

class QLockFile;
class QTimer;

namespace shardscope {

class PlanDocument;

/// Keeps a copy of unsaved edits in the application's data directory so that they can be
/// offered back after a crash. Each running session owns one locked slot; a slot whose lock
/// is stale (its process died) is a recovery.
class Autosave final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(Autosave)

public:
    struct Recovery
    {
        QString planPath;     ///< the autosaved plan
        QString originalPath; ///< the file it was edited from; empty when untitled
        QString planName;
        QDateTime savedAt;
    };

    explicit Autosave(PlanDocument *document, QObject *parent = nullptr);
    /// Leaves the autosaved copy in place (a session that ends without finish() crashed).
    ~Autosave() override;

    /// <AppDataLocation>/autosave
    static QString directory();
    /// Autosaved plans of sessions that ended without finishing, newest first.
    static QList<Recovery> pendingRecoveries();
    /// Removes a recovery's files (after it was restored or declined).
    static void discard(const Recovery &recovery);

    /// Writes the copy now when the document has unsaved edits, removes it otherwise.
    void saveNow();
    /// Removes this session's copy: the session ends with nothing to recover.
    void finish();
    void setDelay(int milliseconds);
    QString planPath() const;

Q_SIGNALS:
    /// The autosaved copy could not be written (a full disk); the previous copy is kept.
    void saveFailed(const QString &error);

private:
    void schedule();
    QString metaPath() const;

    PlanDocument *m_document;
    QTimer *m_timer;
    QString m_slot;
    std::unique_ptr<QLockFile> m_lock;
};

} // namespace shardscope
