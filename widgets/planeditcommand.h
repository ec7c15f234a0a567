#pragma once

#include "core/plan.h"

#include <QUndoCommand>

namespace shardscope {

class PlanDocument;

/// Merge ids of plan edits. Consecutive edits with the same id made during one interaction
/// (a slider drag) merge into one undo step.
enum class EditId {
    None = -1,
    Name = 1,
    ModelPreset,
    ModelSize,
    ModelShape,
    SequenceLength,
    MicroBatch,
    GradAccum,
    Method,
    Precision,
    Parallel,
    Memory,
    Framework,
    Cluster,
    LoadPlan,
    Dropout,
};

/// Replaces the document's plan by another (validated) plan.
class PlanEditCommand final : public QUndoCommand
{
public:
    PlanEditCommand(PlanDocument *document, Plan before, Plan after, const QString &text,
                    EditId id, quint64 session);

    void undo() override;
    void redo() override;
    int id() const override;
    bool mergeWith(const QUndoCommand *other) override;

    const Plan &before() const { return m_before; }
    const Plan &after() const { return m_after; }
    /// The next redo (or undo) leaves the document alone: for a copy of another document's
    /// history, pushed onto a document that already holds the plan it leads to.
    void skipNextRedo() { m_skipRedo = true; }
    void skipNextUndo() { m_skipUndo = true; }

private:
    PlanDocument *m_document;
    Plan m_before;
    Plan m_after;
    EditId m_id;
    quint64 m_session;
    bool m_skipRedo = false;
    bool m_skipUndo = false;
};

} // namespace shardscope
