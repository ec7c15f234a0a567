// Parameter counts from shapes, the model-size mode and Hugging Face config import.
#include "core/catalog.h"
#include "core/errors.h"
#include "core/model.h"

#include <QTest>
#include <nlohmann/json.hpp>

using namespace shardscope;

class TestModel : public QObject
{
    Q_OBJECT

private slots:
    void presetCounts_data()
    {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<qlonglong>("expected");
        // Published / hand-computed totals:
        // Llama-2-7B: 32 x (4*4096^2 + 3*4096*11008 + 2*4096) + 2*32000*4096 + 4096.
        QTest::addRow("llama2-7b") << QStringLiteral("llama2-7b") << 6738415616LL;
        // TinyLlama: 22 x (2048^2*2 + 2*2048*256 + 3*2048*5632 + 2*2048) + 2*32000*2048 + 2048.
        QTest::addRow("tinyllama-1.1b") << QStringLiteral("tinyllama-1.1b") << 1100048384LL;
        // Llama-2-13B: 13,015,864,320 (Hugging Face model card / safetensors index).
        QTest::addRow("llama2-13b") << QStringLiteral("llama2-13b") << 13015864320LL;
        // Llama-2-70B (GQA 8): 68,976,648,192.
        QTest::addRow("llama2-70b") << QStringLiteral("llama2-70b") << 68976648192LL;
        // Llama-3-8B: 8,030,261,248.
        QTest::addRow("llama3-8b") << QStringLiteral("llama3-8b") << 8030261248LL;
        // Mistral-7B: 7,241,732,096.
        QTest::addRow("mistral-7b") << QStringLiteral("mistral-7b") << 7241732096LL;
        // Qwen2.5-7B (q/k/v biases, untied): 7,615,616,512.
        QTest::addRow("qwen2.5-7b") << QStringLiteral("qwen2.5-7b") << 7615616512LL;
        // Mixtral-8x7B: 46,702,792,704.
        QTest::addRow("mixtral-8x7b") << QStringLiteral("mixtral-8x7b") << 46702792704LL;
    }

    void presetCounts()
    {
        QFETCH(QString, preset);
        QFETCH(qlonglong, expected);
        const ModelShape *m = Catalog::builtin().model(preset.toStdString());
        QVERIFY(m);
        QCOMPARE(qlonglong(countParameters(*m).total), expected);
    }

    void countParts()
    {
        const ModelShape *m = Catalog::builtin().model("llama2-7b");
        const ParameterCounts c = countParameters(*m);
        QCOMPARE(c.embedding, int64_t(32000) * 4096);
        QCOMPARE(c.lm_head, int64_t(32000) * 4096);
        QCOMPARE(c.attention_per_layer, int64_t(4) * 4096 * 4096);
        QCOMPARE(c.dense_ffn_per_layer, int64_t(3) * 4096 * 11008);
        QCOMPARE(c.total, c.embedding + c.lm_head + c.final_norm + 32 * c.per_layer);
        ModelShape tied = *m;
        tied.tied_embeddings = true;
        QCOMPARE(countParameters(tied).total, c.total - c.lm_head);
    }

    void sizeMode_data()
    {
        QTest::addColumn<double>("target");
        for (double p : {0.5e9, 1e9, 7e9, 13e9, 70e9, 175e9, 405e9, 1e12})
            QTest::addRow("%gB", p / 1e9) << p;
    }

    // The derived shape lands within 10% of the requested count and is a valid Llama shape.
    void sizeMode()
    {
        QFETCH(double, target);
        const ModelShape m = shapeForParameterCount(target);
        const double got = double(countParameters(m).total);
        QVERIFY2(std::fabs(got - target) / target < 0.10,
                 qPrintable(QStringLiteral("%1 for %2").arg(got).arg(target)));
        QCOMPARE(m.hidden, int64_t(m.heads) * 128);
        QCOMPARE(m.heads % m.kv_heads, 0);
        QVERIFY(m.layers >= 2);
    }

    void sizeModeSevenBIsLlamaShaped()
    {
        const ModelShape m = shapeForParameterCount(7e9);
        QCOMPARE(m.hidden, int64_t(4096));
        QCOMPARE(m.layers, 32);
    }

    void sizeModeRejectsOutOfRange()
    {
        QVERIFY_THROWS_EXCEPTION(PlanError, shapeForParameterCount(1e8));
        QVERIFY_THROWS_EXCEPTION(PlanError, shapeForParameterCount(2e12));
    }

    void huggingFaceImport()
    {
        // Qwen2.5-7B's config.json (abridged to the fields that matter).
        const auto cfg = nlohmann::json::parse(R"({
            "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2",
            "hidden_size": 3584, "intermediate_size": 18944, "num_attention_heads": 28,
            "num_hidden_layers": 28, "num_key_value_heads": 4, "vocab_size": 152064,
            "hidden_act": "silu", "tie_word_embeddings": false})");
        const ModelShape m = shapeFromHuggingFaceConfig(cfg);
        QCOMPARE(m.head_dim, int64_t(128));
        QVERIFY(m.attention_bias);
        QCOMPARE(countParameters(m).total, int64_t(7615616512));

        const auto mixtral = nlohmann::json::parse(R"({"model_type": "mixtral",
            "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
            "num_hidden_layers": 32, "num_key_value_heads": 8, "vocab_size": 32000,
            "num_local_experts": 8, "num_experts_per_tok": 2})");
        const ModelShape mx = shapeFromHuggingFaceConfig(mixtral);
        QCOMPARE(mx.moe.experts, 8);
        QCOMPARE(mx.moe.top_k, 2);
        QCOMPARE(countParameters(mx).total, int64_t(46702792704));
    }

    void huggingFaceImportNamesMissingField()
    {
        try {
            shapeFromHuggingFaceConfig(nlohmann::json::parse(R"({"hidden_size": 4096})"));
            QFAIL("no exception");
        } catch (const PlanError &e) {
            QCOMPARE(QString::fromStdString(e.field()), QStringLiteral("config.num_hidden_layers"));
        }
    }
};

QTEST_APPLESS_MAIN(TestModel)
#include "tst_model.moc"
