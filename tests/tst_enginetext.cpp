// The engine's formulas and assumptions in the interface language: in English they are
// Text::english(); in Chinese every template with words is translated, keeps its placeholders
// and gets the engine's numbers. The plans of planvariants.h reach every template of the .ts.
#include "core/memory.h"
#include "i18n/enginetext.h"
#include "i18n/language.h"
#include "planvariants.h"
#include "testdata.h"

#include <QCoreApplication>
#include <QFile>
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

/// The sources of the context kTextContext in the Chinese .ts.
QSet<QString> tsTemplates()
{
    QSet<QString> out;
    QFile f(testing::sourceDir() + QStringLiteral("/translations/shardscope_zh_CN.ts"));
    if (!f.open(QIODevice::ReadOnly))
        return out;
    QXmlStreamReader xml(&f);
    QString context;
    while (!xml.atEnd()) {
        xml.readNext();
        if (!xml.isStartElement())
            continue;
        if (xml.name() == QLatin1String("name"))
            context = xml.readElementText();
        else if (xml.name() == QLatin1String("source") && context == QLatin1String(kTextContext))
            out.insert(xml.readElementText());
    }
    return out;
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
};

QTEST_GUILESS_MAIN(TestEngineText)
#include "tst_enginetext.moc"
