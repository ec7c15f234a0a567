#include "widgets/plandescription.h"

#include "core/catalog.h"
#include "core/model.h"
#include "testdata.h"

#include <QTest>

using namespace shardscope;

namespace {

Plan casePlan(const char *name)
{
    return parsePlanFile(testing::casePath(name).toStdString(), Catalog::builtin());
}

const QString dot = QStringLiteral(" \u00b7 ");

} // namespace

// What a plan is, from its fields: never from the name it was loaded with.
class TestPlanDescription : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void describesTheCases_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("layout");
        QTest::addRow("ddp") << QStringLiteral("hcie-ai-ddp") << QStringLiteral("DDP dp 8");
        QTest::addRow("fsdp") << QStringLiteral("hcie-ai-fsdp") << QStringLiteral("FSDP (ZeRO-3) dp 8");
        QTest::addRow("fsdp-cp") << QStringLiteral("hcie-ai-fsdp-cp")
                                 << QStringLiteral("CP 8") + dot + QStringLiteral("FSDP (ZeRO-3) over cp 8");
        QTest::addRow("tp8") << QStringLiteral("hcie-ai-tp8") << QStringLiteral("TP 8 + SP");
        QTest::addRow("tp4-fsdp2") << QStringLiteral("hcie-ai-tp4-fsdp2")
                                   << QStringLiteral("TP 4 + SP") + dot + QStringLiteral("FSDP (ZeRO-3) dp 2");
    }
    void describesTheCases()
    {
        QFETCH(QString, file);
        QFETCH(QString, layout);
        const Plan p = casePlan(file.toUtf8().constData());
        QCOMPARE(describeLayout(p), layout);
        QCOMPARE(describePlan(p, Catalog::builtin()),
                 QStringList({QStringLiteral("Llama 2 7B"), QStringLiteral("32K tokens"),
                              QStringLiteral("8 x Ascend 910B2"), layout})
                     .join(dot));
    }

    void followsTheEditsNotTheName()
    {
        Plan p = casePlan("hcie-ai-ddp");
        p.parallel.sharding = Sharding::Full;
        p.training.seq_len = 65536;
        p.training.micro_batch = 2;
        p.cluster.nodes = 2;
        p.parallel.dp = 16;
        const QString text = describePlan(p, Catalog::builtin());
        QVERIFY2(!text.contains(QStringLiteral("OOM")) && !text.contains(QStringLiteral("HCIE")), qPrintable(text));
        QCOMPARE(text, QStringList({QStringLiteral("Llama 2 7B"), QStringLiteral("2 x 64K tokens"),
                                    QStringLiteral("16 x Ascend 910B2 (2 nodes)"),
                                    QStringLiteral("FSDP (ZeRO-3) dp 16")})
                           .join(dot));
        // An edited shape is no longer the preset: it is described by its size.
        p.model.layers = 80;
        p.model.preset.clear();
        p.model.display_name.clear();
        QVERIFY2(describeModel(p).startsWith(QStringLiteral("custom ")) &&
                     describeModel(p).endsWith(QStringLiteral("B model")),
                 qPrintable(describeModel(p)));
        p.training.method.method = TrainingMethod::LoRA;
        p.training.method.lora.rank = 16;
        QVERIFY2(describeModel(p).endsWith(QStringLiteral(", LoRA r16")), qPrintable(describeModel(p)));
    }

    void layouts_data()
    {
        QTest::addColumn<int>("dp");
        QTest::addColumn<int>("tp");
        QTest::addColumn<int>("pp");
        QTest::addColumn<int>("cp");
        QTest::addColumn<int>("sharding");
        QTest::addColumn<QString>("text");
        QTest::addRow("one device") << 1 << 1 << 1 << 1 << int(Sharding::None) << QStringLiteral("one device");
        QTest::addRow("zero-3 at dp 1 says nothing") << 1 << 8 << 1 << 1 << int(Sharding::Full) << QStringLiteral("TP 8");
        QTest::addRow("zero-1") << 8 << 1 << 1 << 1 << int(Sharding::Optimizer) << QStringLiteral("ZeRO-1 dp 8");
        QTest::addRow("zero-2 over dp x cp") << 2 << 1 << 1 << 4 << int(Sharding::Grads)
                                            << QStringLiteral("CP 4") + dot + QStringLiteral("ZeRO-2 over dp 2 x cp 4");
        QTest::addRow("pp") << 4 << 1 << 2 << 1 << int(Sharding::None)
                            << QStringLiteral("PP 2") + dot + QStringLiteral("DDP dp 4");
    }
    void layouts()
    {
        QFETCH(int, dp);
        QFETCH(int, tp);
        QFETCH(int, pp);
        QFETCH(int, cp);
        QFETCH(int, sharding);
        QFETCH(QString, text);
        Plan p = casePlan("hcie-ai-ddp");
        p.parallel.dp = dp;
        p.parallel.tp = tp;
        p.parallel.pp = pp;
        p.parallel.cp = cp;
        p.parallel.sharding = Sharding(sharding);
        QCOMPARE(describeLayout(p), text);
    }

    void differencesAgainstABaseline()
    {
        const Plan ddp = casePlan("hcie-ai-ddp");
        Plan renamed = ddp;
        renamed.name = "another name";
        QVERIFY(planDifferences(renamed, ddp, Catalog::builtin()).isEmpty());
        QCOMPARE(planDifferences(casePlan("hcie-ai-fsdp"), ddp, Catalog::builtin()),
                 QStringList{QStringLiteral("sharding FSDP (ZeRO-3)")});
        const QStringList tp = planDifferences(casePlan("hcie-ai-tp4-fsdp2"), ddp, Catalog::builtin());
        QVERIFY2(tp.contains(QStringLiteral("dp 2")) && tp.contains(QStringLiteral("tp 4")) &&
                     tp.contains(QStringLiteral("SP on")) &&
                     tp.contains(QStringLiteral("sharding FSDP (ZeRO-3)")),
                 qPrintable(tp.join(QStringLiteral("; "))));
        Plan longer = ddp;
        longer.training.seq_len = 65536;
        longer.memory.recompute = Recompute::Selective;
        QCOMPARE(planDifferences(longer, ddp, Catalog::builtin()),
                 (QStringList{QStringLiteral("sequence 64K tokens"), QStringLiteral("recompute selective")}));
    }
};

QTEST_MAIN(TestPlanDescription)
#include "tst_plandescription.moc"
