#include "autosave.h"

#include "filewrite.h"

#include "plandocument.h"
#include "qstrings.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLockFile>
#include <QStandardPaths>
#include <QTimer>
#include <QUuid>
#include <algorithm>

namespace shardscope {

namespace {

const QString kPlanSuffix = QStringLiteral(".plan.json");
const QString kMetaSuffix = QStringLiteral(".meta.json");
const QString kLockSuffix = QStringLiteral(".lock");

} // namespace

Autosave::Autosave(PlanDocument *document, QObject *parent)
    : QObject(parent), m_document(document), m_timer(new QTimer(this)),
      m_slot(QUuid::createUuid().toString(QUuid::WithoutBraces))
{
    QDir().mkpath(directory());
    m_lock = std::make_unique<QLockFile>(directory() + QLatin1Char('/') + m_slot + kLockSuffix);
    m_lock->setStaleLockTime(0);
    m_lock->tryLock(0);

    m_timer->setSingleShot(true);
    m_timer->setInterval(2000);
    connect(m_timer, &QTimer::timeout, this, &Autosave::saveNow);
    connect(document, &PlanDocument::planChanged, this, &Autosave::schedule);
    connect(document, &QObject::destroyed, this, [this] {
        m_timer->stop();
        m_document = nullptr;
    });
    connect(document, &PlanDocument::fileStateChanged, this, &Autosave::schedule);
}

Autosave::~Autosave()
{
    if (m_timer->isActive() && m_document)
        saveNow();
}

QString Autosave::directory()
{
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) +
           QStringLiteral("/autosave");
}

QString Autosave::planPath() const
{
    return directory() + QLatin1Char('/') + m_slot + kPlanSuffix;
}

QString Autosave::metaPath() const
{
    return directory() + QLatin1Char('/') + m_slot + kMetaSuffix;
}

void Autosave::setDelay(int milliseconds)
{
    m_timer->setInterval(milliseconds);
}

void Autosave::schedule()
{
    m_timer->start();
}

void Autosave::saveNow()
{
    m_timer->stop();
    if (!m_document)
        return;
    if (!m_document->isModified()) {
        QFile::remove(planPath());
        QFile::remove(metaPath());
        return;
    }
    QString error;
    if (!PlanDocument::writePlanFile(planPath(), m_document->plan(), &error)) {
        Q_EMIT saveFailed(error);
        return;
    }
    QJsonObject meta;
    meta.insert(QStringLiteral("original"), m_document->filePath());
    meta.insert(QStringLiteral("name"), qs(m_document->plan().name));
    meta.insert(QStringLiteral("saved"), QDateTime::currentDateTimeUtc().toString(Qt::ISODate));
    if (!writeFileSafely(metaPath(), QJsonDocument(meta).toJson(), &error))
        Q_EMIT saveFailed(error);
}

void Autosave::finish()
{
    m_timer->stop();
    QFile::remove(planPath());
    QFile::remove(metaPath());
}

QList<Autosave::Recovery> Autosave::pendingRecoveries()
{
    QList<Recovery> out;
    const QDir dir(directory());
    const QStringList plans = dir.entryList({QLatin1Char('*') + kPlanSuffix}, QDir::Files);
    for (const QString &name : plans) {
        const QString slot = name.chopped(kPlanSuffix.size());
        // A live session holds its lock; only slots of ended sessions are recoveries.
        QLockFile lock(dir.filePath(slot + kLockSuffix));
        lock.setStaleLockTime(0);
        if (!lock.tryLock(0))
            continue;
        lock.unlock();
        Recovery r;
        r.planPath = dir.filePath(name);
        r.savedAt = QFileInfo(r.planPath).lastModified();
        QFile meta(dir.filePath(slot + kMetaSuffix));
        if (meta.open(QIODevice::ReadOnly)) {
            const QJsonObject o = QJsonDocument::fromJson(meta.readAll()).object();
            r.originalPath = o.value(QStringLiteral("original")).toString();
            r.planName = o.value(QStringLiteral("name")).toString();
            const QDateTime saved =
                QDateTime::fromString(o.value(QStringLiteral("saved")).toString(), Qt::ISODate);
            if (saved.isValid())
                r.savedAt = saved;
        }
        out.append(r);
    }
    std::sort(out.begin(), out.end(),
              [](const Recovery &a, const Recovery &b) { return a.savedAt > b.savedAt; });
    return out;
}

void Autosave::discard(const Recovery &recovery)
{
    const QString slot = recovery.planPath.chopped(kPlanSuffix.size());
    QFile::remove(recovery.planPath);
    QFile::remove(slot + kMetaSuffix);
    QFile::remove(slot + kLockSuffix);
}

} // namespace shardscope
