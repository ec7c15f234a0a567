// Plans that once broke loading or saving, kept so they stay fixed: each finding of the fuzz
// target (tests/fuzz/fuzz_plan.cpp) is a file in tests/fuzz/corpus/ and a row below, and the
// whole seed corpus is replayed through the same property checks. Also the no-lost-work rules of
// plan files: a newer format is refused with a clear message, and fields this version does not
// know, nested ones and null values included, survive a load and a save.
#include "core/catalog.h"
#include "core/errors.h"
#include "core/plan.h"
#include "fuzz/plan_properties.h"
#include "testdata.h"

#include <QDir>
#include <QFile>
#include <QTest>
#include <nlohmann/json.hpp>

using namespace shardscope;
using nlohmann::json;

namespace {

QString corpusDir() { return testing::sourceDir() + QStringLiteral("/tests/fuzz/corpus"); }

std::string readCorpusFile(const QString &name)
{
    QFile f(corpusDir() + QLatin1Char('/') + name);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return f.readAll().toStdString();
}

json caseFsdp()
{
    QFile f(QString::fromStdString(Catalog::builtin().dataDir()) +
            QStringLiteral("/cases/hcie-ai-fsdp.plan.json"));
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return json::parse(f.readAll().toStdString());
}

QString describe(const fuzzing::PlanCheck &c)
{
    return QString::fromStdString(c.violation.empty() ? c.error : c.violation);
}

} // namespace

class TestPlanRegressions : public QObject
{
    Q_OBJECT

private slots:
    // One row per finding of the fuzz target: the corpus file, whether it is a valid plan and,
    // when it is not, the field and a word of the message the user gets.
    void findings_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<bool>("valid");
        QTest::addColumn<QString>("field");
        QTest::addColumn<QString>("message");
        // json::parse throws out_of_range (not parse_error) for a number beyond double; it
        // escaped parsePlanText as a non-PlanError ("internal error" in the CLI).
        QTest::addRow("number beyond double")
            << QStringLiteral("regress-number-overflow.json") << false << QString()
            << QStringLiteral("number overflow");
        // "moe": null turns off a preset's experts; planToJson left "moe" out, so loading the
        // saved file brought the experts back from the preset.
        QTest::addRow("preset experts turned off")
            << QStringLiteral("regress-moe-null-roundtrip.json") << true << QString() << QString();
        // hidden 6E4 over 4 heads: the head_dim derived from them (15000) passed, but the saved
        // plan wrote it out and loading that refused it (head_dim at most 4096).
        QTest::addRow("derived head_dim beyond its bound")
            << QStringLiteral("regress-derived-head-dim.json") << false << QStringLiteral("model.heads")
            << QStringLiteral("head_dim (hidden / heads) of 15000, beyond 4096");
    }

    void findings()
    {
        QFETCH(QString, file);
        QFETCH(bool, valid);
        QFETCH(QString, field);
        QFETCH(QString, message);
        const std::string text = readCorpusFile(file);
        QVERIFY2(!text.empty(), qPrintable(file));
        const fuzzing::PlanCheck c = fuzzing::checkPlanText(text, Catalog::builtin());
        QVERIFY2(c.violation.empty(), c.violation.c_str());
        QCOMPARE(c.parsed, valid);
        if (!valid) {
            QCOMPARE(QString::fromStdString(c.errorField), field);
            QVERIFY2(QString::fromStdString(c.error).contains(message), c.error.c_str());
        }
    }

    // Every file of the seed corpus (case plans, variants, malformed and absurd inputs) holds
    // the fuzz target's properties.
    void corpus_data()
    {
        QTest::addColumn<QString>("file");
        const QStringList files = QDir(corpusDir()).entryList(QDir::Files, QDir::Name);
        QVERIFY2(files.size() >= 10, qPrintable(corpusDir()));
        for (const QString &f : files)
            QTest::newRow(qPrintable(f)) << f;
    }

    void corpus()
    {
        QFETCH(QString, file);
        const fuzzing::PlanCheck c = fuzzing::checkPlanText(readCorpusFile(file), Catalog::builtin());
        QVERIFY2(c.violation.empty(), c.violation.c_str());
        // The case plans and their valid variants must stay valid.
        if (file.startsWith(QLatin1String("case-")))
            QVERIFY2(c.parsed, qPrintable(describe(c)));
    }

    void newerFormatRefused_data()
    {
        QTest::addColumn<QString>("version");
        QTest::addRow("next") << QStringLiteral("2");
        QTest::addRow("far future") << QStringLiteral("2147483647");
        QTest::addRow("whole float") << QStringLiteral("2.0");
    }

    // A plan from a newer ShardScope is refused before anything else is read, naming both
    // format versions, rather than loaded with its new fields half understood.
    void newerFormatRefused()
    {
        QFETCH(QString, version);
        json j = caseFsdp();
        QVERIFY(!j.empty());
        j["version"] = json::parse(version.toStdString());
        j["training"]["seq_len"] = "written by the future"; // must not be reached
        try {
            parsePlanText(j.dump(), Catalog::builtin());
            QFAIL("a newer plan format was accepted");
        } catch (const PlanError &e) {
            QCOMPARE(QString::fromStdString(e.field()), QStringLiteral("version"));
            const QString what = QString::fromStdString(e.what());
            QVERIFY2(what.contains(QLatin1String("newer")), e.what());
            QVERIFY2(what.contains(QString::number(kPlanFormatVersion)), e.what());
        }
    }

    // Fields of the current version that this build does not know are kept through load and
    // save at every level, with their values as written: nested objects, arrays, nulls.
    void unknownFieldsSurviveLoadAndSave()
    {
        json j = caseFsdp();
        QVERIFY(!j.empty());
        const json extras = {
            {"/notes", json{{"author", "ops"}, {"reviewed", nullptr}, {"tags", {1, nullptr, "x"}}}},
            {"/removed_by_user", nullptr},
            {"/model/rope", json{{"theta", 500000.0}, {"scaling", nullptr}}},
            {"/model/sliding_window", nullptr},
            {"/training/dataset", json{{"name", "pile"}, {"weights", json::array()}}},
            {"/precision/loss_scale", nullptr},
            {"/parallel/zero_hpz", json{{"size", 8}, {"nested", json{{"deeper", nullptr}}}}},
            {"/memory/allocator", json{{"expandable_segments", true}, {"max_split", nullptr}}},
            {"/memory/offload/nvme", json{{"path", "/local"}, {"reserve", nullptr}}},
            {"/cluster/topology", json{{"rails", 8}, {"switch", nullptr}}},
        };
        for (const auto &[pointer, value] : extras.items())
            j[json::json_pointer(pointer)] = value;

        const Plan plan = parsePlan(j, Catalog::builtin());
        const json saved = planToJson(plan);
        for (const auto &[pointer, value] : extras.items()) {
            const json::json_pointer ptr(pointer);
            QVERIFY2(saved.contains(ptr), pointer.c_str());
            QVERIFY2(saved[ptr] == value, (pointer + ": " + saved[ptr].dump()).c_str());
        }
        // Known fields still win, and a second load and save changes nothing.
        QVERIFY(saved["parallel"]["sharding"] == json("full"));
        const json again = planToJson(parsePlanText(saved.dump(2), Catalog::builtin()));
        QVERIFY2(again == saved, again.dump().c_str());
    }
};

QTEST_APPLESS_MAIN(TestPlanRegressions)
#include "tst_plan_regressions.moc"
