// The engine's formulas and assumptions in the interface language: in English they are
// Text::english(); in Chinese every template with words is translated, keeps its placeholders
// and gets the engine's numbers. The same for what the communication engine's collectives
// carry (Collective::note). The plans of planvariants.h reach every template and every note of
// the .ts.
#include "core/estimate.h"
#include "core/memory.h"
#include "i18n/enginetext.h"
#include "i18n/language.h"
#include "planvariants.h"
#include "testdata.h"

#include <QCoreApplication>
#include <QFile>
#include <QHash>
#include <QRegularExpression>
#include <QSet>
#include <QXmlStreamReader>
#include <QtTest>
#include <algorithm>

using namespace shardscope;

namespace {

/// Every explanation of every variant's kinds of rank at every phase.
const std::vector<ComponentExplanation> &allExplanations()
{
    static const std::vector<ComponentExplanation> all = [] {
        std::vector<ComponentExplanation> out;
        for (const testing::PlanVariant &v : testing::planVariants()) {
            const Plan plan = testing::variantPlan(v);
            const MemoryEstimate m = estimateMemory(plan, Catalog::builtin());
            for (const RankMemory &r : m.ranks) {
                // The runtime reserve's collective buffers (core/hcclbuffers.h), on the plan's
                // device and as an NCCL device would hold them.
                for (const char *device : {plan.cluster.device.c_str(), "h100-80g"})
                    out.push_back({explainCommGroups(plan, *Catalog::builtin().device(device), r.reserve.groups), {}});
                for (int p = 0; p < kPhaseCount; ++p) {
                    for (const ComponentExplanation &e :
                         explainMemory(plan, Catalog::builtin(), r, Phase(p)))
                        out.push_back(e);
                }
            }
        }
        return out;
    }();
    return all;
}

bool hasCjk(const QString &s)
{
    return std::any_of(s.begin(), s.end(),
                       [](QChar c) { return c.unicode() >= 0x4E00 && c.unicode() <= 0x9FFF; });
}

std::vector<int> sortedPlaceholders(const std::string &s)
{
    std::vector<int> v = placeholders(s);
    std::sort(v.begin(), v.end());
    return v;
}

/// Every note of the collectives of every variant (one step on the slowest stage's rank).
const QSet<QString> &allNotes()
{
    static const QSet<QString> all = [] {
        QSet<QString> out;
        for (const testing::PlanVariant &v : testing::planVariants()) {
            for (const Collective &c :
                 estimate(testing::variantPlan(v), Catalog::builtin()).communication)
                out.insert(QString::fromStdString(c.note));
        }
        return out;
    }();
    return all;
}

/// The messages of `context` in the Chinese .ts: source -> translation, empty for one that is
/// unfinished (or otherwise typed) or has no text.
QHash<QString, QString> tsMessages(const char *context)
{
    QHash<QString, QString> out;
    QFile f(testing::sourceDir() + QStringLiteral("/translations/shardscope_zh_CN.ts"));
    if (!f.open(QIODevice::ReadOnly))
        return out;
    QXmlStreamReader xml(&f);
    QString name, source;
    while (!xml.atEnd()) {
        xml.readNext();
        if (!xml.isStartElement())
            continue;
        if (xml.name() == QLatin1String("name")) {
            name = xml.readElementText();
        } else if (name != QLatin1String(context)) {
            continue;
        } else if (xml.name() == QLatin1String("source")) {
            source = xml.readElementText();
            out.insert(source, QString());
        } else if (xml.name() == QLatin1String("translation")) {
            const bool finished = xml.attributes().value(QLatin1String("type")).isEmpty();
            const QString text = xml.readElementText().trimmed();
            out.insert(source, finished ? text : QString());
        }
    }
    return out;
}

/// The sources of the context kTextContext in the Chinese .ts.
QSet<QString> tsTemplates()
{
    const QHash<QString, QString> m = tsMessages(kTextContext);
    return QSet<QString>(m.keyBegin(), m.keyEnd());
}

} // namespace

class TestEngineText : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void cleanup() { setLanguage(QStringLiteral("en")); }

    void englishIsTheEnginesText()
    {
        QCOMPARE(setLanguage(QStringLiteral("en")), QStringLiteral("en"));
        QVERIFY(allExplanations().size() > 500);
        for (const ComponentExplanation &e : allExplanations()) {
            for (const Text *t : {&e.formula, &e.assumptions})
                QCOMPARE(translated(*t), QString::fromStdString(t->english()));
        }
    }

    /// An argument is substituted as it is, even one that looks like a placeholder.
    void argumentsAreNotScannedAgain()
    {
        Text t;
        t.add("%1 and %2", {"%2", "50%"});
        QCOMPARE(translated(t), QStringLiteral("%2 and 50%"));
    }

    void chinese()
    {
        if (!availableLanguages().contains(QStringLiteral("zh_CN")))
            QSKIP("built without translations");
        QCOMPARE(setLanguage(QStringLiteral("zh_CN")), QStringLiteral("zh_CN"));
        static const QRegularExpression word(QStringLiteral("[A-Za-z]{3,}"));
        QSet<QString> seen;
        for (const ComponentExplanation &e : allExplanations()) {
            for (const Text *t : {&e.formula, &e.assumptions}) {
                const QString whole = translated(*t);
                for (const Phrase &ph : t->phrases) {
                    const QString source = QString::fromUtf8(ph.text);
                    const QString zh = QCoreApplication::translate(kTextContext, ph.text);
                    seen.insert(source);
                    // Marked for lupdate and translated: a template with words reads Chinese.
                    if (source.contains(word))
                        QVERIFY2(hasCjk(zh), qPrintable(source));
                    // The translator kept every placeholder: no number is lost.
                    QVERIFY2(sortedPlaceholders(zh.toStdString()) == sortedPlaceholders(ph.text),
                             qPrintable(source + QStringLiteral(" -> ") + zh));
                    for (const std::string &a : ph.args)
                        QVERIFY2(whole.contains(QString::fromStdString(a)), qPrintable(whole));
                }
            }
            QVERIFY(hasCjk(translated(e.formula)) ||
                    !QString::fromStdString(e.formula.english()).contains(word));
        }
        // The plans reach every template the .ts holds for the engine, so every branch of
        // explainMemory is checked here and in tst_memory.
        const QSet<QString> ts = tsTemplates();
        QVERIFY(ts.size() >= 50);
        QVERIFY2((ts - seen).isEmpty(),
                 qPrintable(QStringList((ts - seen).values()).join(QLatin1Char('\n'))));
        // Every template with words is in the .ts (" + " and "0" are not marked).
        for (const QString &s : seen) {
            if (s.contains(word))
                QVERIFY2(ts.contains(s), qPrintable(s));
        }
    }

    /// In English a collective's note is the engine's text.
    void englishNotes()
    {
        QCOMPARE(setLanguage(QStringLiteral("en")), QStringLiteral("en"));
        QVERIFY(allNotes().size() >= 20);
        for (const QString &n : allNotes())
            QCOMPARE(translatedNote(n.toStdString()), n);
        QCOMPARE(translatedNote(std::string()), QString());
        QCOMPARE(translatedNote("not a note of the engine"),
                 QStringLiteral("not a note of the engine"));
    }

    /// Every note the engine writes has a finished translation in the .ts, in Chinese; the .ts
    /// holds no note the variants do not reach.
    void chineseNotes()
    {
        const QHash<QString, QString> ts = tsMessages(kCollectiveContext);
        for (const QString &n : allNotes()) {
            QVERIFY2(ts.contains(n), qPrintable(QStringLiteral("not in the .ts: ") + n));
            QVERIFY2(hasCjk(ts.value(n)), qPrintable(QStringLiteral("not translated: ") + n));
        }
        const QSet<QString> inTs(ts.keyBegin(), ts.keyEnd());
        QVERIFY2(inTs == allNotes(),
                 qPrintable(QStringLiteral("in the .ts only: ") +
                            QStringList((inTs - allNotes()).values()).join(QStringLiteral("; ")) +
                            QStringLiteral("\nreached only: ") +
                            QStringList((allNotes() - inTs).values()).join(QStringLiteral("; "))));
        if (!availableLanguages().contains(QStringLiteral("zh_CN")))
            QSKIP("built without translations");
        QCOMPARE(setLanguage(QStringLiteral("zh_CN")), QStringLiteral("zh_CN"));
        for (const QString &n : allNotes()) {
            const QString zh = translatedNote(n.toStdString());
            QCOMPARE(zh, ts.value(n));
            QVERIFY2(hasCjk(zh), qPrintable(n));
        }
    }
};

QTEST_GUILESS_MAIN(TestEngineText)
#include "tst_enginetext.moc"
