#pragma once

#include "planeditcommand.h"

#include "core/estimate.h"
#include "core/plan.h"

#include <QObject>
#include <QString>
#include <optional>

class QUndoStack;

namespace shardscope {

class Catalog;

/// The open plan: its file, its undo stack and the engine's estimate of it. Every change of
/// the plan goes through apply() (an undoable, validated edit) or a file operation.
class PlanDocument final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(PlanDocument)

public:
    explicit PlanDocument(const Catalog &catalog, QObject *parent = nullptr);
    ~PlanDocument() override;

    const Catalog &catalog() const { return m_catalog; }
    const Plan &plan() const { return m_plan; }
    const Estimate &estimate() const { return m_estimate; }
    QUndoStack *undoStack() const { return m_undoStack; }

    /// The file the plan is saved to; empty for an untitled plan.
    QString filePath() const { return m_filePath; }
    /// File name or "Untitled", for titles.
    QString displayName() const;
    bool isModified() const;

    /// The file the plan was opened from or last saved to, an example case included (which
    /// stays untitled); empty for a plan that came from neither.
    QString originPath() const { return m_originPath; }
    /// The plan as it was opened or last saved; null without an origin.
    const Plan *originPlan() const { return m_origin ? &*m_origin : nullptr; }
    /// Whether the plan, its name aside, differs from its origin: a case or file since edited.
    bool isEdited() const;
    /// Sets the origin (a window rebuilt around the same plan keeps where it came from).
    void setOrigin(const QString &path, const Plan &asOpened);

    /// The reason `candidate` cannot be used ("parallel.tp: must divide ..."), or an empty
    /// string when it is valid.
    static QString validationError(const Plan &candidate, const Catalog &catalog);
    QString validationError(const Plan &candidate) const;

    /// Pushes an undoable edit to `candidate`. A plan that does not validate is refused:
    /// returns false, emits editRefused() with the reason and leaves the plan unchanged.
    bool apply(const Plan &candidate, const QString &text, EditId id = EditId::None);

    /// Edits made between begin and end with the same EditId form one undo step.
    void beginInteraction();
    void endInteraction();

    /// Replaces the document by a new untitled plan (clears the undo history).
    void reset(const Plan &plan);
    /// Takes over the edit history of `from` (another document holding the same plan, as when the
    /// window is rebuilt for another language): undo and redo go on where they were, and the
    /// saved state stays the saved state. Nothing is recomputed for the commands taken over.
    void adoptHistory(const QUndoStack &from);
    /// Opens a plan file. On failure the document is unchanged and `error` says why.
    bool load(const QString &path, QString *error);
    /// Opens a plan file as an untitled copy (examples that must not be overwritten).
    bool loadAsUntitled(const QString &path, QString *error);
    /// Opens recovered content: untitled unless `originalPath` is set, and modified.
    bool loadRecovered(const QString &autosavePath, const QString &originalPath, QString *error);
    /// Saves atomically to the current file (which must be set).
    bool save(QString *error);
    bool saveAs(const QString &path, QString *error);

    /// Reads and validates a plan file; the message names the field and the rule.
    static std::optional<Plan> readPlanFile(const QString &path, const Catalog &catalog,
                                            QString *error);
    /// Writes a plan through QSaveFile (all or nothing).
    static bool writePlanFile(const QString &path, const Plan &plan, QString *error);

Q_SIGNALS:
    /// The plan (and its estimate) changed.
    void planChanged();
    /// The file path or the modified state changed.
    void fileStateChanged();
    void editRefused(const QString &reason);

private:
    friend class PlanEditCommand;
    void setPlanFromCommand(const Plan &plan);
    void replace(const Plan &plan, const QString &path, bool modified, const QString &origin,
                 const std::optional<Plan> &originPlan);
    void recompute();

    const Catalog &m_catalog;
    QUndoStack *m_undoStack;
    Plan m_plan;
    Estimate m_estimate;
    QString m_filePath;
    QString m_originPath;
    std::optional<Plan> m_origin;
    std::string m_originJson; ///< m_origin without its name, to compare with
    bool m_forcedModified = false;
    quint64 m_session = 0;
    quint64 m_nextSession = 1;
};

} // namespace shardscope
