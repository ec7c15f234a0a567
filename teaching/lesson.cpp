#include "lesson.h"

#include "core/adapters.h"

#include "core/catalog.h"
#include "core/errors.h"
#include "core/estimate.h"
#include "core/files.h"
#include "core/memory.h"
#include "core/model.h"
#include "core/units.h"
#include "i18n/enginetext.h"
#include "lessontext.h"

#include <QCoreApplication>
#include <QRegularExpression>
#include <algorithm>
#include <cmath>

namespace shardscope {

namespace {

class LessonFormula
{
    Q_DECLARE_TR_FUNCTIONS(Lesson)

public:
    static QString qs(std::string_view s)
    {
        return QString::fromUtf8(s.data(), qsizetype(s.size()));
    }
    /// The phase as a reader says it, in the interface language.
    static QString phaseName(Phase p)
    {
        switch (p) {
        case Phase::Forward: return tr("forward");
        case Phase::Backward: return tr("backward");
        default: return tr("optimizer step");
        }
    }
};


std::string str(const nlohmann::json &j, const char *key)
{
    const auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

Citation citationFromJson(const std::string &key, const nlohmann::json &j, const std::string &where)
{
    if (!j.is_object() || !j.contains("quantity"))
        throw PlanError(where, "a citation needs a \"quantity\"");
    Citation c;
    c.key = key;
    c.quantity = str(j, "quantity");
    c.component = str(j, "component");
    c.phase = str(j, "phase");
    c.group = str(j, "group");
    c.collective = str(j, "collective");
    c.unit = str(j, "unit");
    if (j.contains("patch"))
        c.patch = j.at("patch");
    return c;
}

int componentIndex(const std::string &key)
{
    for (int c = 0; c < kComponentCount; ++c) {
        if (componentKey(Component(c)) == key)
            return c;
    }
    return -1;
}

size_t fullestRank(const MemoryEstimate &m)
{
    size_t worst = 0;
    double need = -1;
    for (size_t i = 0; i < m.ranks.size(); ++i) {
        const double n = m.ranks[i].peak_bytes + m.ranks[i].reserve.total();
        if (n > need) {
            need = n;
            worst = i;
        }
    }
    return worst;
}

QString bytesText(double v, const std::string &unit)
{
    return LessonFormula::qs(unit == "GB" ? formatGB(v) : formatGiB(v));
}

QString gib(double v)
{
    return LessonFormula::qs(formatGiB(v));
}

QString secs(double v)
{
    return LessonFormula::qs(formatSeconds(v));
}

} // namespace

const Citation *LessonStep::citation(std::string_view key) const
{
    for (const Citation &c : citations) {
        if (c.key == key)
            return &c;
    }
    return nullptr;
}

Plan patchedPlan(const Plan &base, const nlohmann::json &patch, const Catalog &catalog)
{
    if (patch.is_null() || (patch.is_object() && patch.empty()))
        return base;
    nlohmann::json j = planToJson(base);
    j.merge_patch(patch);
    return parsePlan(j, catalog);
}

void evaluateCitation(Citation &c, const Plan &stepPlan, const Catalog &catalog)
{
    if (!c.unit.empty() && c.unit != "GB" && c.unit != "GiB")
        throw PlanError("unit", "must be \"GB\" (10^9 bytes) or \"GiB\" (2^30 bytes), not \"" +
                                    c.unit + "\"");
    const Plan plan = patchedPlan(stepPlan, c.patch, catalog);
    const Estimate e = estimate(plan, catalog);
    const MemoryEstimate &m = e.memory;
    const RankMemory &r = m.ranks.at(fullestRank(m));
    const double need = r.peak_bytes + r.reserve.total();
    c.available = true;
    c.formula.clear();
    enum
    {
        Bytes,
        Count,
        Seconds
    } kind = Bytes;

    // The formula's byte terms in the citation's unit: one unit to a line.
    const auto amount = [&c](double v) { return bytesText(v, c.unit); };

    const int phase = c.phase.empty() ? int(r.peak_phase) : int(phaseFromKey(c.phase));
    if (phase == kPhaseCount)
        throw PlanError("phase", "unknown phase \"" + c.phase + "\"");
    const Breakdown &at = r.phases[size_t(phase)];
    const QString phaseName = LessonFormula::phaseName(Phase(phase));

    if (c.quantity == "parameters") {
        kind = Count;
        const ParameterCounts pc = countParameters(plan.model);
        c.value = double(pc.total);
        c.formula = LessonFormula::tr("%1 layers x %2 + embedding %3 + LM head %4 + final norm %5")
                        .arg(plan.model.layers)
                        .arg(LessonFormula::qs(formatCount(pc.per_layer)),
                             LessonFormula::qs(formatCount(pc.embedding)),
                             LessonFormula::qs(formatCount(pc.lm_head)),
                             LessonFormula::qs(formatCount(pc.final_norm)));
    } else if (c.quantity == "trainable_parameters") {
        kind = Count;
        c.value = double(trainableParameters(plan));
        c.formula = LessonFormula::tr("parameters that get gradients under %1 (as PEFT counts them)")
                        .arg(LessonFormula::qs(std::string(toString(plan.training.method.method))));
    } else if (c.quantity == "seq_len") {
        kind = Count;
        c.value = double(plan.training.seq_len);
        c.formula = LessonFormula::tr("training.seq_len");
    } else if (c.quantity == "vocab") {
        kind = Count;
        c.value = double(plan.model.vocab);
        c.formula = LessonFormula::tr("model.vocab");
    } else if (c.quantity == "hbm") {
        c.value = m.hbm_bytes;
        c.formula = LessonFormula::tr("HBM of the device profile %1")
                        .arg(LessonFormula::qs(plan.cluster.device));
    } else if (c.quantity == "usable") {
        c.value = m.usable_bytes;
        c.formula = LessonFormula::tr("HBM %1 - largest runtime reserve %2")
                        .arg(amount(m.hbm_bytes), amount(m.hbm_bytes - m.usable_bytes));
    } else if (c.quantity == "need") {
        c.value = need;
        c.formula = LessonFormula::tr("peak allocated %1 (%2) + runtime reserve %3")
                        .arg(amount(r.peak_bytes), LessonFormula::phaseName(r.peak_phase),
                             amount(r.reserve.total()));
    } else if (c.quantity == "peak") {
        c.value = r.peak_bytes;
        c.formula = LessonFormula::tr("sum of the components at the peak (%1)")
                        .arg(LessonFormula::phaseName(r.peak_phase));
    } else if (c.quantity == "reserve") {
        c.value = r.reserve.total();
        c.formula =
            LessonFormula::tr("context %1 + %n communicator(s) %2 + allocator %3", "",
                              r.reserve.communicators)
                .arg(amount(r.reserve.context), amount(r.reserve.comm_buffers), amount(r.reserve.allocator));
    } else if (c.quantity == "headroom") {
        c.value = m.hbm_bytes - need;
        c.formula = LessonFormula::tr("HBM %1 - need %2").arg(amount(m.hbm_bytes), amount(need));
    } else if (c.quantity == "over") {
        c.value = need - m.hbm_bytes;
        c.formula = LessonFormula::tr("need %1 - HBM %2").arg(amount(need), amount(m.hbm_bytes));
    } else if (c.quantity == "component") {
        const int comp = componentIndex(c.component);
        if (comp < 0)
            throw PlanError("component", "unknown component \"" + c.component + "\"");
        // The engine explains a component in GiB: a GB figure would follow GiB terms.
        if (c.unit == "GB")
            throw PlanError("unit", "a component is cited in GiB, its formula's unit");
        c.value = at.bytes[size_t(comp)];
        const MemoryExplanation ex = explainMemory(plan, catalog, r, Phase(phase));
        c.formula = translated(ex[size_t(comp)].formula);
        // The engine's text names phases by their keys ("optimizer_step"): a reader reads names.
        for (int k = 0; k < kPhaseCount; ++k) {
            const QString key = LessonFormula::qs(phaseKey(Phase(k)));
            if (key.contains(QLatin1Char('_')))
                c.formula.replace(key, LessonFormula::phaseName(Phase(k)));
        }
        // The formula names its phase already where the component changes within one.
        if (!c.formula.contains(phaseName))
            c.formula += QStringLiteral(" [") + phaseName + QLatin1Char(']');
    } else if (c.quantity == "model_state" || c.quantity == "hbm_minus_state") {
        const double state = at[Component::Parameters] + at[Component::Gradients] +
                             at[Component::MasterWeights] + at[Component::OptimizerStates];
        const QString sum =
            LessonFormula::tr(
                "parameters %1 + gradients %2 + master weights %3 + optimizer states %4 [%5]")
                .arg(amount(at[Component::Parameters]), amount(at[Component::Gradients]),
                     amount(at[Component::MasterWeights]), amount(at[Component::OptimizerStates]),
                     phaseName);
        if (c.quantity == "model_state") {
            c.value = state;
            c.formula = sum;
        } else {
            c.value = m.hbm_bytes - state;
            c.formula = LessonFormula::tr("HBM %1 - model state %2 (%3)")
                            .arg(amount(m.hbm_bytes), amount(state), sum);
        }
    } else if (c.quantity.rfind("comm_", 0) == 0) {
        double calls = 0, total = 0, exposed = 0;
        const Collective *first = nullptr;
        for (const Collective &k : e.communication) {
            if ((!c.group.empty() && k.group != c.group) ||
                (!c.collective.empty() && k.collective != c.collective))
                continue;
            if (!first)
                first = &k;
            calls += k.count_per_step;
            total += k.count_per_step * k.time_s;
            exposed += k.exposed_time_s;
        }
        const QString what =
            (c.collective.empty() ? LessonFormula::tr("collectives")
                                  : LessonFormula::qs(c.collective)) +
            (c.group.empty() ? QString()
                             : LessonFormula::tr(" over %1").arg(LessonFormula::qs(c.group)));
        c.available = first != nullptr;
        if (c.quantity == "comm_calls") {
            kind = Count;
            c.value = calls;
            c.formula = LessonFormula::tr("%1: calls per step").arg(what);
        } else if (c.quantity == "comm_bytes") {
            c.value = first ? first->bytes : 0;
            c.formula = first ? LessonFormula::tr("%1 x%2: message of one %3 (%4)")
                                    .arg(LessonFormula::qs(first->group))
                                    .arg(first->group_size)
                                    .arg(LessonFormula::qs(first->collective),
                                         translatedNote(first->note))
                              : what;
        } else if (c.quantity == "comm_time") {
            kind = Seconds;
            c.value = first ? first->time_s : 0;
            c.formula =
                first ? LessonFormula::tr(
                            "latency x steps + message x bus factor / (bandwidth x efficiency), "
                            "one %1 over %2 x%3")
                            .arg(LessonFormula::qs(first->collective),
                                 LessonFormula::qs(first->group))
                            .arg(first->group_size)
                      : what;
        } else if (c.quantity == "comm_total") {
            kind = Seconds;
            c.value = total;
            c.formula = LessonFormula::tr("%1: sum of calls x time per call").arg(what);
        } else if (c.quantity == "comm_exposed") {
            kind = Seconds;
            c.value = exposed;
            c.formula = LessonFormula::tr("%1: time not hidden behind compute, per step").arg(what);
        } else {
            throw PlanError("quantity", "unknown quantity \"" + c.quantity + "\"");
        }
    } else if (c.quantity == "step_time") {
        kind = Seconds;
        c.value = e.step.step_s;
        c.available = e.step.step_s > 0;
        c.formula =
            LessonFormula::tr("compute %1 + exposed communication %2 + bubble %3 + offload %4")
                .arg(secs(e.step.compute_s), secs(e.step.communication_s), secs(e.step.bubble_s),
                     secs(e.step.offload_s));
    } else if (c.quantity == "tokens_per_s") {
        kind = Count;
        c.value = e.step.tokens_per_s;
        c.available = e.step.tokens_per_s > 0;
        c.formula =
            LessonFormula::tr("%1 tokens x micro-batch %2 x %3 micro-batch(es) x DP %4 / step %5")
                .arg(plan.training.seq_len)
                .arg(plan.training.micro_batch)
                .arg(plan.training.grad_accum)
                .arg(plan.parallel.dp)
                .arg(secs(e.step.step_s));
    } else if (c.quantity == "compute_time") {
        kind = Seconds;
        c.value = e.step.compute_s;
        c.available = e.step.compute_s > 0;
        c.formula = LessonFormula::tr("compute of one step on one rank");
    } else if (c.quantity == "layer_compute_time") {
        kind = Seconds;
        const double units = double(plan.model.layers) * plan.training.grad_accum;
        c.value = e.step.compute_s / units;
        c.available = e.step.compute_s > 0;
        c.formula = LessonFormula::tr("compute %1 / (%2 layers x %3 micro-batch(es))")
                        .arg(secs(e.step.compute_s))
                        .arg(plan.model.layers)
                        .arg(plan.training.grad_accum);
    } else {
        throw PlanError("quantity", "unknown quantity \"" + c.quantity + "\"");
    }

    if (!c.available) {
        c.text = LessonFormula::tr("(not estimated)");
        return;
    }
    switch (kind) {
    case Bytes:
        c.text = bytesText(c.value, c.unit);
        break;
    case Count:
        c.text = LessonFormula::qs(formatCount((long long)std::llround(c.value)));
        break;
    case Seconds:
        c.text = secs(c.value);
        break;
    }
    c.formula += QStringLiteral(" = ") + c.text;
}

QString fillTemplate(const QString &text, const std::vector<Citation> &citations)
{
    QString out = text;
    for (const Citation &c : citations)
        out.replace(QLatin1Char('{') + QString::fromStdString(c.key) + QLatin1Char('}'), c.text);
    return out;
}

int Exercise::correctChoice() const
{
    for (size_t i = 0; i < choiceFits.size(); ++i) {
        if (choiceFits[i])
            return int(i);
    }
    return int(choices.size());
}

ExerciseCheck Exercise::check(const QString &answer) const
{
    ExerciseCheck r;
    const QString a = answer.trimmed();
    switch (kind) {
    case Kind::Choice: {
        int picked = -1;
        for (int i = 0; i < choices.size(); ++i) {
            if (a.compare(choices.at(i), Qt::CaseInsensitive) == 0)
                picked = i;
        }
        if (a.compare(QStringLiteral("none"), Qt::CaseInsensitive) == 0 ||
            a.compare(LessonFormula::tr("none of these"), Qt::CaseInsensitive) == 0)
            picked = int(choices.size());
        const int correct = correctChoice();
        r.correct = picked == correct;
        QStringList lines;
        for (int i = 0; i < choices.size(); ++i) {
            lines << LessonFormula::tr("%1: needs %2 of %3, %4")
                         .arg(choices.at(i), gib(choiceNeed[size_t(i)]), gib(hbm),
                              choiceFits[size_t(i)]
                                  ? LessonFormula::tr("fits with the margin")
                                  : (choiceNeed[size_t(i)] <= hbm
                                         ? LessonFormula::tr("fits, but without the margin")
                                         : LessonFormula::tr("does not fit")));
        }
        const QString right =
            correct < choices.size() ? choices.at(correct) : LessonFormula::tr("none of these");
        r.feedback =
            (r.correct ? LessonFormula::tr("Correct: %1.").arg(right)
                       : LessonFormula::tr("Not quite; the engine's answer is %1.").arg(right)) +
            QLatin1Char('\n') + lines.join(QLatin1Char('\n'));
        break;
    }
    case Kind::Number: {
        bool ok = false;
        QString n = a;
        n.remove(QRegularExpression(QStringLiteral("\\s*(GiB|GB)\\s*$"),
                                    QRegularExpression::CaseInsensitiveOption));
        const double v = n.toDouble(&ok);
        const double expected = answerCitation.value / kGiB;
        r.correct = ok && std::fabs(v - expected) <= tolerance * std::fabs(expected);
        r.feedback = (r.correct ? LessonFormula::tr("Correct.") : LessonFormula::tr("Not quite.")) +
                     QLatin1Char(' ') +
                     LessonFormula::tr("The engine computes %1: %2")
                         .arg(answerCitation.text, answerCitation.formula);
        break;
    }
    case Kind::Fits: {
        const bool yes = a.compare(QStringLiteral("yes"), Qt::CaseInsensitive) == 0 ||
                         a.compare(LessonFormula::tr("yes"), Qt::CaseInsensitive) == 0;
        const bool no = a.compare(QStringLiteral("no"), Qt::CaseInsensitive) == 0 ||
                        a.compare(LessonFormula::tr("no"), Qt::CaseInsensitive) == 0;
        r.correct = (yes && fits) || (no && !fits);
        r.feedback =
            (r.correct ? LessonFormula::tr("Correct.") : LessonFormula::tr("Not quite.")) +
            QLatin1Char(' ') +
            (fits ? LessonFormula::tr("The fullest rank needs %1 of %2: it fits, with %3 to spare.")
                        .arg(gib(need), gib(hbm), gib(hbm - need))
                  : LessonFormula::tr(
                        "The fullest rank needs %1 of %2: it does not fit, over by %3.")
                        .arg(gib(need), gib(hbm), gib(need - hbm)));
        break;
    }
    }
    return r;
}

Lesson Lesson::load(const std::string &path, const Catalog &catalog)
{
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(readTextFile(path));
    } catch (const nlohmann::json::parse_error &e) {
        throw PlanError(path, std::string("malformed JSON: ") + e.what());
    }
    if (str(j, "format") != "shardscope-lesson")
        throw PlanError(path + ": format", "must be \"shardscope-lesson\"");
    const std::string dataDir = catalog.dataDir();
    auto planOf = [&](const nlohmann::json &item, const std::string &where) {
        const std::string file = str(item, "plan");
        if (file.empty())
            throw PlanError(where + ".plan", "names a plan file under the data directory");
        Plan base;
        try {
            base = parsePlanText(readTextFile(dataDir + "/" + file), catalog);
        } catch (const PlanError &e) {
            throw PlanError(where + ".plan", e.what());
        }
        return patchedPlan(base, item.value("patch", nlohmann::json::object()), catalog);
    };

    Lesson lesson;
    lesson.id = str(j, "id");
    lesson.title = lessonTitle(lesson.id);
    const nlohmann::json steps = j.value("steps", nlohmann::json::array());
    for (size_t i = 0; i < steps.size(); ++i) {
        const nlohmann::json &s = steps[i];
        const std::string where = path + ": steps[" + std::to_string(i) + "]";
        LessonStep step;
        step.id = str(s, "id");
        const StepText text = lessonStepText(step.id);
        if (text.title.isEmpty())
            throw PlanError(where + ".id", "\"" + step.id + "\" has no text in this version");
        step.plan = planOf(s, where);
        const nlohmann::json cites = s.value("cite", nlohmann::json::object());
        for (const auto &[key, value] : cites.items()) {
            Citation c = citationFromJson(key, value, where + ".cite." + key);
            evaluateCitation(c, step.plan, catalog);
            step.citations.push_back(std::move(c));
        }
        // Cited numbers in the order the text uses them.
        const QString all = text.body + text.note;
        auto at = [&all](const Citation &c) {
            const qsizetype pos =
                all.indexOf(QLatin1Char('{') + QString::fromStdString(c.key) + QLatin1Char('}'));
            return pos < 0 ? all.size() : pos;
        };
        std::stable_sort(step.citations.begin(), step.citations.end(),
                         [&at](const Citation &a, const Citation &b) { return at(a) < at(b); });
        step.title = text.title;
        step.body = fillTemplate(text.body, step.citations);
        step.note = fillTemplate(text.note, step.citations);
        lesson.steps.push_back(std::move(step));
    }

    const nlohmann::json exercises = j.value("exercises", nlohmann::json::array());
    for (size_t i = 0; i < exercises.size(); ++i) {
        const nlohmann::json &x = exercises[i];
        const std::string where = path + ": exercises[" + std::to_string(i) + "]";
        Exercise ex;
        ex.id = str(x, "id");
        const ExerciseText text = lessonExerciseText(ex.id);
        if (text.title.isEmpty())
            throw PlanError(where + ".id", "\"" + ex.id + "\" has no text in this version");
        ex.title = text.title;
        ex.question = text.question;
        ex.plan = planOf(x, where);
        const std::string kind = str(x, "kind");
        const Estimate base = estimate(ex.plan, catalog);
        const RankMemory &r = base.memory.ranks.at(fullestRank(base.memory));
        ex.hbm = base.memory.hbm_bytes;
        ex.need = r.peak_bytes + r.reserve.total();
        ex.fits = base.memory.fits;
        if (kind == "choice") {
            ex.kind = Exercise::Kind::Choice;
            ex.margin = x.value("margin", 0.0);
            const nlohmann::json choices = x.value("choices", nlohmann::json::array());
            for (const nlohmann::json &choice : choices) {
                const Plan p =
                    patchedPlan(ex.plan, choice.value("patch", nlohmann::json::object()), catalog);
                const Estimate e = estimate(p, catalog);
                const RankMemory &cr = e.memory.ranks.at(fullestRank(e.memory));
                ex.choices << QString::fromStdString(str(choice, "label"));
                ex.choicePlans.push_back(p);
                const double need = cr.peak_bytes + cr.reserve.total();
                ex.choiceNeed.push_back(need);
                ex.choiceFits.push_back(e.memory.fits &&
                                        need <= e.memory.hbm_bytes * (1 - ex.margin));
            }
            if (ex.choices.isEmpty())
                throw PlanError(where + ".choices", "a choice exercise needs choices");
        } else if (kind == "number") {
            ex.kind = Exercise::Kind::Number;
            ex.answerCitation =
                citationFromJson("answer", x.value("answer", nlohmann::json()), where + ".answer");
            evaluateCitation(ex.answerCitation, ex.plan, catalog);
            ex.tolerance = x.value("tolerance", 0.05);
        } else if (kind == "fits") {
            ex.kind = Exercise::Kind::Fits;
        } else {
            throw PlanError(where + ".kind", "must be choice, number or fits");
        }
        lesson.exercises.push_back(std::move(ex));
    }
    return lesson;
}

Lesson Lesson::hcieAi(const Catalog &catalog)
{
    return load(catalog.dataDir() + "/teaching/hcie-ai.lesson.json", catalog);
}

} // namespace shardscope
