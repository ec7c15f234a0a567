#pragma once

#include "core/plan.h"

#include <QString>
#include <QStringList>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace shardscope {

class Catalog;

/// A number a lesson cites, computed by the engine: one quantity of the step's plan with
/// `patch` (a JSON merge patch, plan-format fields) applied.
///
/// Quantities (bytes unless said otherwise; the fullest rank kind where a rank matters):
///  parameters, seq_len, vocab (counts); hbm, usable; need (peak allocated + runtime reserve);
///  peak (allocated); reserve; headroom (hbm - need); over (need - hbm);
///  component (`component` key at `phase`, at the rank's peak when no phase);
///  model_state (parameters + gradients + master weights + optimizer states at `phase`);
///  hbm_minus_state; comm_calls (count), comm_bytes (one call of the first match),
///  comm_time (one call of the first match, s), comm_total (count x time, s), comm_exposed (s),
///  all over the collectives matching `group` and `collective` (empty: any);
///  step_time, compute_time, layer_compute_time (compute per layer and micro-batch, s),
///  tokens_per_s (count).
struct Citation
{
    std::string key;
    std::string quantity;
    std::string component;
    std::string phase;
    std::string group;
    std::string collective;
    /// Bytes are cited in GiB (2^30 B), or in GB (10^9 B) with "GB": where the case's own
    /// decimal figures stand beside the engine's. The formula's terms take the same unit; a
    /// component (explained by the engine in GiB) cannot be cited in GB.
    std::string unit;
    nlohmann::json patch = nlohmann::json::object();

    double value = 0;
    bool available = true; ///< false when the engine does not estimate it (no such collective)
    QString text;          ///< the value as the lesson prints it
    QString formula;       ///< how the engine arrived at it, with the plan's numbers
};

/// One step of a walkthrough: the plan it puts in the workbench and the text around it.
struct LessonStep
{
    std::string id;
    QString title;
    QString body; ///< with every {key} replaced by its citation
    QString note; ///< where the case's rough accounting and the engine's differ, and why
    Plan plan;
    std::vector<Citation> citations;

    const Citation *citation(std::string_view key) const;
};

struct ExerciseCheck
{
    bool correct = false;
    QString feedback; ///< what the engine says about the answer, with its numbers
};

/// A question whose answer the engine checks.
struct Exercise
{
    enum class Kind
    {
        Choice,
        Number,
        Fits
    };

    std::string id;
    Kind kind = Kind::Number;
    QString title;
    QString question;
    Plan plan; ///< the plan the exercise starts from (set in the workbench)

    // Choice: candidate layouts, the answer is the first in order that fits with `margin` (a
    // fraction of the HBM) to spare.
    QStringList choices;
    std::vector<Plan> choicePlans;
    std::vector<double> choiceNeed;
    std::vector<bool> choiceFits;
    double margin = 0;
    // Number: the engine's value of `answerCitation` on `plan`, and the accepted tolerance.
    Citation answerCitation;
    double tolerance = 0.05;
    // Fits: whether `plan` fits.
    bool fits = false;
    double hbm = 0;
    double need = 0;

    /// Index of the correct choice (choices.size() when none fits, "none of these").
    int correctChoice() const;
    /// Checks an answer: a choice index or label (Choice), a number in GiB (Number), "yes" or
    /// "no" (Fits).
    ExerciseCheck check(const QString &answer) const;
};

/// A guided walkthrough read from resources/teaching/<id>.lesson.json; its prose is
/// translated (lessontext.cpp) and its numbers come from the engine.
struct Lesson
{
    std::string id;
    QString title;
    std::vector<LessonStep> steps;
    std::vector<Exercise> exercises;

    /// Reads a lesson file. Throws PlanError naming the file and the field.
    static Lesson load(const std::string &path, const Catalog &catalog);
    /// The HCIE-AI 32K case from the catalog's data directory.
    static Lesson hcieAi(const Catalog &catalog);
};

/// `base` with a JSON merge patch applied, parsed and validated (throws PlanError).
Plan patchedPlan(const Plan &base, const nlohmann::json &patch, const Catalog &catalog);

/// Computes a citation's value, text and formula on `plan` (its patch applied first).
void evaluateCitation(Citation &c, const Plan &plan, const Catalog &catalog);

/// Replaces every {key} in `text` by the citation's text.
QString fillTemplate(const QString &text, const std::vector<Citation> &citations);

} // namespace shardscope
