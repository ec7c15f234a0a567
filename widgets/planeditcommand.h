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

private:
    PlanDocument *m_document;
    Plan m_before;
    Plan m_after;
    EditId m_id;
    quint64 m_session;
};

} // namespace shardscope
