#include "plandocument.h"

#include "filewrite.h"
#include "planeditcommand.h"
#include "poolforeach.h"

#include "qstrings.h"

#include "core/catalog.h"
#include "core/errors.h"

#include <QFile>
#include <QFileInfo>
#include <QUndoStack>
#include <vector>

namespace shardscope {

namespace {

QString describe(const PlanError &e)
{
    if (e.field().empty())
        return qs(e.rule());
    return PlanDocument::tr("%1: %2").arg(qs(e.field()), qs(e.rule()));
}

// A plan's content without its name: what "edited" compares.
std::string contentJson(const Plan &plan)
{
    nlohmann::json j = planToJson(plan);
    j.erase("name");
    return j.dump();
}

} // namespace

PlanDocument::PlanDocument(const Catalog &catalog, QObject *parent)
    : QObject(parent), m_catalog(catalog), m_undoStack(new QUndoStack(this))
{
    connect(m_undoStack, &QUndoStack::cleanChanged, this, &PlanDocument::fileStateChanged);
}

PlanDocument::~PlanDocument() = default;

QString PlanDocument::displayName() const
{
    return m_filePath.isEmpty() ? tr("Untitled") : QFileInfo(m_filePath).fileName();
}

bool PlanDocument::isModified() const
{
    return m_forcedModified || !m_undoStack->isClean();
}

bool PlanDocument::isEdited() const
{
    return m_origin && contentJson(m_plan) != m_originJson;
}

void PlanDocument::setOrigin(const QString &path, const Plan &asOpened)
{
    m_originPath = path;
    m_origin = asOpened;
    m_originJson = contentJson(asOpened);
    Q_EMIT fileStateChanged();
}

QString PlanDocument::validationError(const Plan &candidate, const Catalog &catalog)
{
    try {
        validatePlan(candidate, catalog);
        return {};
    } catch (const PlanError &e) {
        return describe(e);
    } catch (const std::exception &e) {
        return qs(e.what());
    }
}

void PlanDocument::adoptHistory(const QUndoStack &from)
{
    const int index = from.index();
    const int cleanIndex = from.cleanIndex();
    std::vector<PlanEditCommand *> copies;
    for (int i = 0; i < from.count(); ++i) {
        const auto *c = dynamic_cast<const PlanEditCommand *>(from.command(i));
        if (!c)
            return; // not a history of plan edits: start afresh
        copies.push_back(new PlanEditCommand(this, c->before(), c->after(), c->text(), EditId::None, 0));
    }
    m_undoStack->clear();
    // This document holds the plan at `index`: pushing and stepping back to it apply nothing.
    for (size_t i = 0; i < copies.size(); ++i) {
        copies[i]->skipNextRedo();
        if (int(i) >= index)
            copies[i]->skipNextUndo();
        m_undoStack->push(copies[i]);
    }
    if (cleanIndex >= 0 && cleanIndex <= m_undoStack->count()) {
        // Mark the saved state without applying it: the commands stepped over on the way there
        // and back skip (those from `index` up skip their undo already).
        for (int i = cleanIndex; i < index; ++i) {
            copies[size_t(i)]->skipNextUndo();
            copies[size_t(i)]->skipNextRedo();
        }
        m_undoStack->setIndex(cleanIndex);
        m_undoStack->setClean();
    }
    m_undoStack->setIndex(index);
}

QString PlanDocument::validationError(const Plan &candidate) const
{
    return validationError(candidate, m_catalog);
}

bool PlanDocument::apply(const Plan &candidate, const QString &text, EditId id)
{
    const QString reason = validationError(candidate);
    if (!reason.isEmpty()) {
        Q_EMIT editRefused(reason);
        return false;
    }
    if (planToJson(candidate) == planToJson(m_plan))
        return true;
    m_undoStack->push(new PlanEditCommand(this, m_plan, candidate, text, id, m_session));
    return true;
}

void PlanDocument::beginInteraction()
{
    m_session = m_nextSession++;
}

void PlanDocument::endInteraction()
{
    m_session = 0;
}

void PlanDocument::setPlanFromCommand(const Plan &plan)
{
    m_plan = plan;
    recompute();
}

void PlanDocument::recompute()
{
    try {
        // The rank kinds' allocator replays, most of an estimate, side by side on idle cores.
        m_estimate = shardscope::estimate(m_plan, m_catalog, [](size_t n, FunctionRef<void(size_t)> body) {
            forEachOnPool(n, body);
        });
    } catch (const std::exception &e) {
        m_estimate = Estimate{};
        Q_EMIT editRefused(qs(e.what()));
    }
    Q_EMIT planChanged();
}

void PlanDocument::replace(const Plan &plan, const QString &path, bool modified,
                           const QString &origin, const std::optional<Plan> &originPlan)
{
    m_undoStack->clear();
    m_plan = plan;
    m_filePath = path;
    m_forcedModified = modified;
    m_originPath = origin;
    m_origin = originPlan;
    m_originJson = originPlan ? contentJson(*originPlan) : std::string();
    recompute();
    Q_EMIT fileStateChanged();
}

void PlanDocument::reset(const Plan &plan)
{
    replace(plan, QString(), false, QString(), std::nullopt);
}

std::optional<Plan> PlanDocument::readPlanFile(const QString &path, const Catalog &catalog,
                                               QString *error)
{
    try {
        // Size-capped, relative paths (model.hf_config) against the plan's folder.
        return parsePlanFile(path.toStdString(), catalog);
    } catch (const PlanError &e) {
        if (error)
            *error = describe(e);
    } catch (const std::exception &e) {
        if (error)
            *error = qs(e.what());
    }
    return std::nullopt;
}

bool PlanDocument::writePlanFile(const QString &path, const Plan &plan, QString *error)
{
    return writeFileSafely(path, QByteArray::fromStdString(planToJson(plan).dump(2) + "\n"), error);
}

bool PlanDocument::load(const QString &path, QString *error)
{
    const std::optional<Plan> plan = readPlanFile(path, m_catalog, error);
    if (!plan)
        return false;
    const QString absolute = QFileInfo(path).absoluteFilePath();
    replace(*plan, absolute, false, absolute, plan);
    return true;
}

bool PlanDocument::loadAsUntitled(const QString &path, QString *error)
{
    const std::optional<Plan> plan = readPlanFile(path, m_catalog, error);
    if (!plan)
        return false;
    replace(*plan, QString(), false, QFileInfo(path).absoluteFilePath(), plan);
    return true;
}

bool PlanDocument::loadRecovered(const QString &autosavePath, const QString &originalPath,
                                 QString *error)
{
    const std::optional<Plan> plan = readPlanFile(autosavePath, m_catalog, error);
    if (!plan)
        return false;
    // Edited against the file it was saved to, when that file can still be read.
    std::optional<Plan> original;
    if (!originalPath.isEmpty())
        original = readPlanFile(originalPath, m_catalog, nullptr);
    replace(*plan, originalPath, true, original ? originalPath : QString(), original);
    return true;
}

bool PlanDocument::save(QString *error)
{
    if (m_filePath.isEmpty()) {
        if (error)
            *error = tr("The plan has no file yet");
        return false;
    }
    return saveAs(m_filePath, error);
}

bool PlanDocument::saveAs(const QString &path, QString *error)
{
    if (!writePlanFile(path, m_plan, error))
        return false;
    m_filePath = QFileInfo(path).absoluteFilePath();
    m_originPath = m_filePath;
    m_origin = m_plan;
    m_originJson = contentJson(m_plan);
    m_forcedModified = false;
    m_undoStack->setClean();
    Q_EMIT fileStateChanged();
    return true;
}

} // namespace shardscope
