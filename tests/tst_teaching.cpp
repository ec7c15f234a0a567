// Teaching mode: every number a step cites is the engine's for the step's plan (recomputed
// here independently from the estimate), the text makes no claim the engine contradicts, and
// the exercises' answers are checked against the engine.
#include "core/adapters.h"
#include "core/catalog.h"
#include "core/errors.h"
#include "core/estimate.h"
#include "core/model.h"
#include "core/units.h"
#include "i18n/language.h"
#include "teaching/lesson.h"

#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>
#include <fstream>
#include <sstream>

using namespace shardscope;

namespace {

const Catalog &cat()
{
    return Catalog::builtin();
}

Plan readCase(const std::string &file)
{
    std::ifstream in(cat().dataDir() + "/" + file);
    std::stringstream ss;
    ss << in.rdbuf();
    return parsePlanText(ss.str(), cat());
}

Plan patch(const Plan &p, const nlohmann::json &patch)
{
    nlohmann::json j = planToJson(p);
    j.merge_patch(patch);
    return parsePlan(j, cat());
}

nlohmann::json lessonJson()
{
    std::ifstream in(cat().dataDir() + "/teaching/hcie-ai.lesson.json");
    return nlohmann::json::parse(in);
}

struct Fullest
{
    const RankMemory *rank = nullptr;
    double need = 0;
};

Fullest fullest(const Estimate &e)
{
    Fullest f;
    for (const RankMemory &r : e.memory.ranks) {
        const double n = r.peak_bytes + r.reserve.total();
        if (!f.rank || n > f.need)
            f = {&r, n};
    }
    return f;
}

/// The quantity as this test reads it from the estimate.
double expected(const nlohmann::json &cite, const Plan &plan)
{
    const Estimate e = estimate(plan, cat());
    const Fullest f = fullest(e);
    const std::string q = cite.at("quantity");
    const std::string phase = cite.value("phase", "");
    Phase ph = f.rank->peak_phase;
    if (phase == "forward")
        ph = Phase::Forward;
    else if (phase == "backward")
        ph = Phase::Backward;
    else if (phase == "optimizer_step")
        ph = Phase::OptimizerStep;
    const Breakdown &b = f.rank->phases[size_t(ph)];
    const double state = b[Component::Parameters] + b[Component::Gradients] +
                         b[Component::MasterWeights] + b[Component::OptimizerStates];
    if (q == "parameters")
        return double(countParameters(plan.model).total);
    if (q == "trainable_parameters")
        return double(trainableParameters(plan));
    if (q == "seq_len")
        return double(plan.training.seq_len);
    if (q == "vocab")
        return double(plan.model.vocab);
    if (q == "hbm")
        return e.memory.hbm_bytes;
    if (q == "usable")
        return e.memory.usable_bytes;
    if (q == "need")
        return f.need;
    if (q == "peak")
        return f.rank->peak_bytes;
    if (q == "reserve")
        return f.rank->reserve.total();
    if (q == "headroom")
        return e.memory.hbm_bytes - f.need;
    if (q == "over")
        return f.need - e.memory.hbm_bytes;
    if (q == "model_state")
        return state;
    if (q == "hbm_minus_state")
        return e.memory.hbm_bytes - state;
    if (q == "component") {
        for (int c = 0; c < kComponentCount; ++c) {
            if (componentKey(Component(c)) == cite.at("component").get<std::string>())
                return b.bytes[size_t(c)];
        }
        return -1;
    }
    if (q == "step_time")
        return e.step.step_s;
    if (q == "compute_time")
        return e.step.compute_s;
    if (q == "tokens_per_s")
        return e.step.tokens_per_s;
    if (q == "layer_compute_time")
        return e.step.compute_s / (plan.model.layers * plan.training.grad_accum);
    const std::string group = cite.value("group", "");
    const std::string coll = cite.value("collective", "");
    double calls = 0, total = 0, exposed = 0, bytes = 0, time = 0;
    bool first = true;
    for (const Collective &c : e.communication) {
        if ((!group.empty() && c.group != group) || (!coll.empty() && c.collective != coll))
            continue;
        if (first) {
            bytes = c.bytes;
            time = c.time_s;
            first = false;
        }
        calls += c.count_per_step;
        total += c.count_per_step * c.time_s;
        exposed += c.exposed_time_s;
    }
    if (q == "comm_calls")
        return calls;
    if (q == "comm_bytes")
        return bytes;
    if (q == "comm_time")
        return time;
    if (q == "comm_total")
        return total;
    if (q == "comm_exposed")
        return exposed;
    return -1;
}


/// What is wrong with the units of one line of a lesson (empty: nothing). A number in GB and
/// one in GiB on the same line must say which is which, "GB (10^9 B)" and "GiB (2^30 B)"; a
/// paragraph with a GB figure says what GB is; a paragraph quoting the case's own GB figures
/// (whole numbers: 14 GB, 112 GB) gives the engine's numbers beside them in GB, not in GiB.
QString unitProblem(const QString &line, bool prose)
{
    static const QRegularExpression amount(QStringLiteral("(\\d[\\d,.]*)\\s*(GiB|GB)(?![A-Za-z])"));
    int gb = 0, gib = 0, caseFigures = 0, engineGb = 0;
    for (auto it = amount.globalMatch(line); it.hasNext();) {
        const QRegularExpressionMatch m = it.next();
        if (m.captured(2) == QStringLiteral("GiB")) {
            ++gib;
        } else {
            ++gb;
            (m.captured(1).contains(QLatin1Char('.')) ? engineGb : caseFigures) += 1;
        }
    }
    const bool labelled = line.contains(QStringLiteral("GB (10^9 B)")) &&
                          line.contains(QStringLiteral("GiB (2^30 B)"));
    if (gb > 0 && gib > 0 && !labelled)
        return QStringLiteral("GB and GiB numbers on one line without saying which is which");
    if (prose && gb > 0 && !line.contains(QStringLiteral("GB (10^9 B)")))
        return QStringLiteral("a GB figure without saying GB is 10^9 B");
    if (prose && caseFigures > 0 && (gib > 0 || engineGb == 0))
        return QStringLiteral("the case's GB figures without the engine's in GB beside them");
    return {};
}

QStringList unitProblems(const Lesson &lesson)
{
    QStringList out;
    for (const LessonStep &s : lesson.steps) {
        for (const QString &line : (s.body + QLatin1Char('\n') + s.note).split(QLatin1Char('\n'))) {
            const QString p = unitProblem(line, true);
            if (!p.isEmpty())
                out << QString::fromStdString(s.id) + QStringLiteral(": ") + p + QStringLiteral(": ") + line;
        }
        for (const Citation &c : s.citations) {
            const QString p = unitProblem(c.formula, false);
            if (!p.isEmpty())
                out << QString::fromStdString(s.id + "/" + c.key) + QStringLiteral(": ") + p +
                           QStringLiteral(": ") + c.formula;
        }
    }
    return out;
}
} // namespace

class TestTeaching : public QObject
{
    Q_OBJECT

private:
    Lesson m_lesson;

    const LessonStep &step(const std::string &id) const
    {
        for (const LessonStep &s : m_lesson.steps) {
            if (s.id == id)
                return s;
        }
        qFatal("no step %s", id.c_str());
    }
    double cited(const std::string &stepId, const std::string &key) const
    {
        const Citation *c = step(stepId).citation(key);
        return c ? c->value : std::nan("");
    }

private Q_SLOTS:
    void initTestCase() { m_lesson = Lesson::hcieAi(cat()); }

    void structure()
    {
        QCOMPARE(m_lesson.id, std::string("hcie-ai-32k"));
        QVERIFY(!m_lesson.title.isEmpty());
        const std::vector<std::string> ids{"scenario",     "ddp-state", "full-sharding",
                                           "long-context", "shorten",   "fine-tuning",
                                           "tp8",          "fsdp-comm", "hybrid",
                                           "evidence"};
        QCOMPARE(m_lesson.steps.size(), ids.size());
        for (size_t i = 0; i < ids.size(); ++i) {
            QCOMPARE(m_lesson.steps[i].id, ids[i]);
            QVERIFY(!m_lesson.steps[i].title.isEmpty());
            QVERIFY(!m_lesson.steps[i].body.isEmpty());
        }
        QCOMPARE(m_lesson.exercises.size(), size_t(3));
    }

    /// The plan a step sets is the case file with the step's patch.
    void stepPlans()
    {
        const nlohmann::json j = lessonJson();
        for (size_t i = 0; i < m_lesson.steps.size(); ++i) {
            const nlohmann::json &s = j["steps"][i];
            const Plan want =
                patch(readCase(s["plan"]), s.value("patch", nlohmann::json::object()));
            QCOMPARE(planToJson(m_lesson.steps[i].plan).dump(), planToJson(want).dump());
        }
    }

    void citations_data()
    {
        QTest::addColumn<int>("stepIndex");
        QTest::addColumn<QString>("key");
        const nlohmann::json j = lessonJson();
        for (size_t i = 0; i < j["steps"].size(); ++i) {
            for (const auto &[key, value] : j["steps"][i]["cite"].items()) {
                QTest::addRow("%s/%s", j["steps"][i]["id"].get<std::string>().c_str(), key.c_str())
                    << int(i) << QString::fromStdString(key);
            }
        }
    }

    /// Every cited number equals the engine's for the step's plan, appears in the step's text
    /// and carries its formula.
    void citations()
    {
        QFETCH(int, stepIndex);
        QFETCH(QString, key);
        const nlohmann::json cite =
            lessonJson()["steps"][size_t(stepIndex)]["cite"][key.toStdString()];
        const LessonStep &s = m_lesson.steps[size_t(stepIndex)];
        const Citation *c = s.citation(key.toStdString());
        QVERIFY(c);
        const Plan plan = patch(s.plan, cite.value("patch", nlohmann::json::object()));
        const double want = expected(cite, plan);
        QCOMPARE(c->value, want);
        QVERIFY2(!c->text.isEmpty(), qPrintable(key));
        QVERIFY2((s.body + s.note).contains(c->text), qPrintable(c->text));
        QVERIFY(c->formula.endsWith(c->text));
    }

    void textIsComplete()
    {
        for (const LessonStep &s : m_lesson.steps) {
            QVERIFY2(!s.body.contains(QLatin1Char('{')), qPrintable(s.body));
            QVERIFY2(!s.note.contains(QLatin1Char('{')), qPrintable(s.note));
        }
    }

    /// What the prose asserts, the engine agrees with.
    void claimsHold()
    {
        const double hbm = cited("scenario", "hbm");
        QCOMPARE(hbm, 64.0 * kGiB);
        // DDP: 16 bytes per parameter of state, more than the HBM on its own.
        const double params = cited("ddp-state", "params");
        QVERIFY(std::fabs(cited("ddp-state", "state") - 16 * params) < 1e-6 * params);
        QVERIFY(cited("ddp-state", "state") > hbm);
        QVERIFY(cited("ddp-state", "over") > 0);
        // The case's 112 GB is the nominal 7e9 parameters x 16 B.
        QVERIFY(std::fabs(7e9 * 16 / kGB - 112) < 1e-9);
        // Full sharding: one eighth of the state, fits.
        QVERIFY(std::fabs(cited("full-sharding", "state") - 2 * params) < 1e-6 * params);
        QVERIFY(cited("full-sharding", "headroom") > 0);
        QVERIFY(cited("full-sharding", "headroom") < cited("full-sharding", "left"));
        // 32K: the fp32 loss outweighs checkpointed activations; every remedy lowers the need
        // except dropping recompute or fused attention.
        QVERIFY(cited("long-context", "logits") > cited("long-context", "act"));
        QVERIFY(cited("long-context", "need_norecompute") > cited("long-context", "need"));
        QVERIFY(cited("long-context", "need_eager") >= cited("long-context", "need"));
        QVERIFY(cited("long-context", "act_tp4sp") < cited("long-context", "act"));
        QVERIFY(cited("long-context", "act_cp2") < cited("long-context", "act"));
        QVERIFY(cited("long-context", "need_offload") < cited("long-context", "need"));
        // 8K: less memory than 32K.
        QVERIFY(cited("shorten", "need") < cited("shorten", "need32"));
        // LoRA fits where full training under the same DDP layout does not; QLoRA needs less.
        QCOMPARE(cited("fine-tuning", "trainable"), 39976960.0);
        QVERIFY(cited("fine-tuning", "need") < cited("fine-tuning", "hbm"));
        QVERIFY(cited("fine-tuning", "need_full") > cited("fine-tuning", "hbm"));
        QCOMPARE(cited("fine-tuning", "need_full"), cited("ddp-state", "need"));
        QVERIFY(cited("fine-tuning", "need_qlora") < cited("fine-tuning", "need"));
        QVERIFY(cited("fine-tuning", "params_qlora") < cited("fine-tuning", "params") / 2);
        QCOMPARE(cited("shorten", "need32"), cited("full-sharding", "need"));
        // TP 8's messages are a whole sequence's hidden states in bf16, not small ones.
        QCOMPARE(cited("tp8", "tp_bytes"), 32768.0 * 4096 * 2);
        // FSDP is predicted the fastest per token; TP exposes its collectives.
        QVERIFY(cited("evidence", "tps") > cited("evidence", "tps_tp8"));
        QVERIFY(cited("evidence", "tps") > cited("evidence", "tps_hybrid"));
        QVERIFY(cited("evidence", "comm_exposed") < cited("tp8", "tp_exposed"));
        QVERIFY(cited("evidence", "ag_time") < cited("evidence", "layer_compute"));
    }

    void exercises()
    {
        // Exercise 1: the first listed layout that fits 64K tokens.
        const Exercise &x1 = m_lesson.exercises.at(0);
        QCOMPARE(x1.kind, Exercise::Kind::Choice);
        QCOMPARE(x1.plan.training.seq_len, int64_t(65536));
        int first = x1.choices.size();
        for (int i = 0; i < x1.choices.size(); ++i) {
            const Estimate e = estimate(x1.choicePlans[size_t(i)], cat());
            QCOMPARE(x1.choiceNeed[size_t(i)], fullest(e).need);
            const bool withMargin = e.memory.fits && fullest(e).need <= 0.9 * e.memory.hbm_bytes;
            if (withMargin && first == x1.choices.size())
                first = i;
        }
        QCOMPARE(x1.margin, 0.1);
        QCOMPARE(x1.correctChoice(), first);
        const QString right =
            first < x1.choices.size() ? x1.choices.at(first) : QStringLiteral("none");
        QVERIFY(x1.check(right).correct);
        QVERIFY(x1.check(right.toLower()).correct);
        const QString wrong = first == 0 ? QStringLiteral("none") : x1.choices.at(0);
        QVERIFY(!x1.check(wrong).correct);
        QVERIFY(!x1.check(QStringLiteral("nonsense")).correct);

        // Exercise 2: logits and loss at a 152K vocabulary.
        const Exercise &x2 = m_lesson.exercises.at(1);
        QCOMPARE(x2.kind, Exercise::Kind::Number);
        QCOMPARE(x2.plan.model.vocab, int64_t(152064));
        const Estimate e2 = estimate(x2.plan, cat());
        const Fullest f2 = fullest(e2);
        const double logits = f2.rank->peak()[Component::LogitsAndLoss];
        QCOMPARE(x2.answerCitation.value, logits);
        QVERIFY(logits > cited("long-context", "logits") * 4);
        QVERIFY(x2.check(QString::number(logits / kGiB, 'f', 2)).correct);
        QVERIFY(x2.check(QString::number(logits / kGiB * 1.03, 'f', 2) + QStringLiteral(" GiB"))
                    .correct);
        QVERIFY(!x2.check(QString::number(logits / kGiB * 0.5, 'f', 2)).correct);
        QVERIFY(!x2.check(QStringLiteral("many")).correct);

        // Exercise 3: does the 152K plan still fit?
        const Exercise &x3 = m_lesson.exercises.at(2);
        QCOMPARE(x3.kind, Exercise::Kind::Fits);
        QCOMPARE(x3.fits, e2.memory.fits);
        QVERIFY(x3.check(e2.memory.fits ? QStringLiteral("yes") : QStringLiteral("no")).correct);
        QVERIFY(!x3.check(e2.memory.fits ? QStringLiteral("no") : QStringLiteral("yes")).correct);
        QVERIFY(x3.check(QStringLiteral("yes"))
                    .feedback.contains(QString::fromStdString(formatGiB(f2.need))));
    }

    /// In Chinese the cited formulas name the phases in Chinese, not by their keys.
    void formulasNamePhasesInTheLanguage()
    {
        if (!availableLanguages().contains(QStringLiteral("zh_CN")))
            QSKIP("built without translations");
        QCOMPARE(setLanguage(QStringLiteral("zh_CN")), QStringLiteral("zh_CN"));
        const Lesson zh = Lesson::hcieAi(cat());
        setLanguage(QStringLiteral("en"));
        int withPhase = 0;
        for (const LessonStep &s : zh.steps) {
            for (const Citation &c : s.citations) {
                for (int p = 0; p < kPhaseCount; ++p)
                    QVERIFY2(!c.formula.contains(QString::fromLatin1(phaseKey(Phase(p)).data())),
                             qPrintable(QString::fromStdString(c.key) + QStringLiteral(": ") + c.formula));
                if (c.formula.contains(QStringLiteral("前向")) || c.formula.contains(QStringLiteral("反向")) ||
                    c.formula.contains(QStringLiteral("优化器步")))
                    ++withPhase;
            }
        }
        QVERIFY(withPhase >= 3);
    }

    /// In English too the formulas name the phases as a reader says them, not "optimizer_step".
    void formulasShowNoRawPhaseKeys()
    {
        for (const LessonStep &s : m_lesson.steps)
            for (const Citation &c : s.citations)
                QVERIFY2(!c.formula.contains(QStringLiteral("optimizer_step")),
                         qPrintable(QString::fromStdString(c.key) + QStringLiteral(": ") + c.formula));
    }

    /// SHARDSCOPE_DUMP_LESSON=1 prints the lesson as a reader sees it.
    void dump()
    {
        if (qEnvironmentVariableIsEmpty("SHARDSCOPE_DUMP_LESSON"))
            return;
        for (const LessonStep &s : m_lesson.steps) {
            qInfo().noquote() << "\n##" << s.title << "\n" << s.body << "\n[note]" << s.note;
            for (const Citation &c : s.citations)
                qInfo().noquote() << "  " << QString::fromStdString(c.key) << ":" << c.formula;
        }
        for (const Exercise &x : m_lesson.exercises)
            qInfo().noquote() << "\n##" << x.title << "\n"
                              << x.question << x.choices.join(QStringLiteral(" | ")) << "\n"
                              << x.check(QStringLiteral("yes")).feedback;
    }

    /// Each figure says its unit: the case's decimal GB beside the engine's GB, never beside
    /// its GiB unlabelled, and no formula with GiB terms and a GB result. In both languages.
    void unitsAreNeverMixed()
    {
        // The check itself: what the lesson printed before, and what it prints now.
        QVERIFY(!unitProblem(QStringLiteral("together 100.41 GiB (107.81 GB) on every rank"), true).isEmpty());
        QVERIFY(!unitProblem(QStringLiteral("parameters 1.57 GiB + gradients 1.57 GiB = 13.48 GB"), false).isEmpty());
        QVERIFY(!unitProblem(QStringLiteral("about 14 GB per rank, GB (10^9 B). The engine's state "
                                            "is a little smaller (12.55 GiB)"), true).isEmpty());
        QVERIFY(unitProblem(QStringLiteral("about 14 GB per rank, GB (10^9 B); the engine's 13.48 GB"), true)
                    .isEmpty());
        QVERIFY(unitProblem(QStringLiteral("13.48 GB (10^9 B) = 12.55 GiB (2^30 B)"), true).isEmpty());

        QStringList problems = unitProblems(m_lesson);
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join(QLatin1Char('\n'))));
        // The case's figures are quoted where the engine's GB figures stand beside them.
        const LessonStep &ddp = step("ddp-state");
        QVERIFY(ddp.note.contains(QStringLiteral("112 GB")));
        QVERIFY(ddp.note.contains(ddp.citation("state_gb")->text));
        QVERIFY(ddp.citation("state_gb")->text.endsWith(QStringLiteral(" GB")));
        QVERIFY(ddp.citation("state_gb")->formula.count(QStringLiteral(" GB")) == 5);
        const LessonStep &fsdp = step("full-sharding");
        for (const char *key : {"state_gb", "hbm_gb", "left_gb", "headroom_gb"})
            QVERIFY2(fsdp.note.contains(fsdp.citation(key)->text), key);

        if (!availableLanguages().contains(QStringLiteral("zh_CN")))
            QSKIP("built without translations");
        QCOMPARE(setLanguage(QStringLiteral("zh_CN")), QStringLiteral("zh_CN"));
        const Lesson zh = Lesson::hcieAi(cat());
        setLanguage(QStringLiteral("en"));
        problems = unitProblems(zh);
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join(QLatin1Char('\n'))));
    }

    /// A unit the lesson does not know, or GB for a component (the engine explains it in GiB),
    /// is refused.
    void unknownUnitIsRejected()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("u.lesson.json")).toStdString();
        std::ofstream(path) << R"({"format": "shardscope-lesson", "id": "x",
            "steps": [{"id": "scenario", "plan": "cases/hcie-ai-ddp.plan.json",
                       "cite": {"hbm": {"quantity": "hbm", "unit": "MB"}}}]})";
        QVERIFY_THROWS_EXCEPTION(PlanError, Lesson::load(path, cat()));
        std::ofstream(path) << R"({"format": "shardscope-lesson", "id": "x",
            "steps": [{"id": "scenario", "plan": "cases/hcie-ai-ddp.plan.json",
                       "cite": {"p": {"quantity": "component", "component": "parameters",
                                      "unit": "GB"}}}]})";
        QVERIFY_THROWS_EXCEPTION(PlanError, Lesson::load(path, cat()));
        std::ofstream(path) << R"({"format": "shardscope-lesson", "id": "x",
            "steps": [{"id": "scenario", "plan": "cases/hcie-ai-ddp.plan.json",
                       "cite": {"hbm": {"quantity": "hbm", "unit": "GB"}}}]})";
        const Lesson l = Lesson::load(path, cat());
        QCOMPARE(l.steps.front().citation("hbm")->text, QStringLiteral("68.72 GB"));
        QVERIFY(l.steps.front().citation("hbm")->formula.endsWith(QStringLiteral("= 68.72 GB")));
    }

    void brokenLessonIsRejected()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("x.lesson.json")).toStdString();
        std::ofstream(path) << R"({"format": "shardscope-lesson", "id": "x",
            "steps": [{"id": "no-such-step", "plan": "cases/hcie-ai-ddp.plan.json"}]})";
        QVERIFY_THROWS_EXCEPTION(PlanError, Lesson::load(path, cat()));
        std::ofstream(path) << R"({"format": "shardscope-lesson", "id": "x",
            "steps": [{"id": "scenario", "plan": "cases/hcie-ai-ddp.plan.json",
                       "cite": {"a": {"quantity": "no_such_quantity"}}}]})";
        QVERIFY_THROWS_EXCEPTION(PlanError, Lesson::load(path, cat()));
        std::ofstream(path) << R"({"format": "shardscope-lesson", "id": "x",
            "steps": [{"id": "scenario", "plan": "cases/hcie-ai-ddp.plan.json",
                       "patch": {"parallel": {"tp": 3}}}]})";
        QVERIFY_THROWS_EXCEPTION(PlanError, Lesson::load(path, cat()));
    }
};

QTEST_GUILESS_MAIN(TestTeaching)
#include "tst_teaching.moc"
