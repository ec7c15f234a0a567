#include "planeditcommand.h"

#include "plandocument.h"

#include <utility>

namespace shardscope {

PlanEditCommand::PlanEditCommand(PlanDocument *document, Plan before, Plan after,
                                 const QString &text, EditId id, quint64 session)
    : QUndoCommand(text), m_document(document), m_before(std::move(before)),
      m_after(std::move(after)), m_id(id), m_session(session)
{
}

void PlanEditCommand::undo()
{
    if (std::exchange(m_skipUndo, false))
        return;
    m_document->setPlanFromCommand(m_before);
}

void PlanEditCommand::redo()
{
    if (std::exchange(m_skipRedo, false))
        return;
    m_document->setPlanFromCommand(m_after);
}

int PlanEditCommand::id() const
{
    // Outside an interaction every edit is its own step.
    return m_session == 0 ? -1 : int(m_id);
}

bool PlanEditCommand::mergeWith(const QUndoCommand *other)
{
    const auto *o = static_cast<const PlanEditCommand *>(other);
    if (o->m_session != m_session || o->m_id != m_id)
        return false;
    m_after = o->m_after;
    setObsolete(planToJson(m_before) == planToJson(m_after));
    return true;
}

} // namespace shardscope
