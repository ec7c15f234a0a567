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

    // Every way a config.json can be unusable is refused naming the field, never truncated,
    // defaulted or accepted as something else.
    void huggingFaceImportRefuses_data()
    {
        QTest::addColumn<QString>("config");
        QTest::addColumn<QString>("field");
        QTest::addColumn<QString>("word");
        const QString llama = QStringLiteral(
            R"("hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
               "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256)");
        QTest::addRow("missing field") << QStringLiteral(R"({"model_type": "llama", "hidden_size": 4096})")
                                       << QStringLiteral("config.num_hidden_layers")
                                       << QStringLiteral("required");
        QTest::addRow("no model_type") << QStringLiteral("{%1}").arg(llama)
                                       << QStringLiteral("config.model_type")
                                       << QStringLiteral("required");
        QTest::addRow("unsupported type")
            << QStringLiteral(R"({"model_type": "deepseek_v3", %1})").arg(llama)
            << QStringLiteral("config.model_type") << QStringLiteral("not supported");
        QTest::addRow("zero layers")
            << QStringLiteral(R"({"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 0,
                 "num_attention_heads": 32, "intermediate_size": 11008, "vocab_size": 32000})")
            << QStringLiteral("config.num_hidden_layers") << QStringLiteral("between 1 and");
        QTest::addRow("oversized vocab")
            << QStringLiteral(R"({"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
                 "num_attention_heads": 32, "intermediate_size": 11008, "vocab_size": 4294967296})")
            << QStringLiteral("config.vocab_size") << QStringLiteral("between 1 and 16777216");
        QTest::addRow("float count")
            << QStringLiteral(R"({"model_type": "llama", "hidden_size": 4096.5, "num_hidden_layers": 32,
                 "num_attention_heads": 32, "intermediate_size": 11008, "vocab_size": 32000})")
            << QStringLiteral("config.hidden_size") << QStringLiteral("whole number");
        QTest::addRow("heads not dividing hidden")
            << QStringLiteral(R"({"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
                 "num_attention_heads": 48, "intermediate_size": 11008, "vocab_size": 32000})")
            << QStringLiteral("config.num_attention_heads") << QStringLiteral("head_dim");
        QTest::addRow("kv heads not dividing")
            << QStringLiteral(R"({"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
                 "num_attention_heads": 32, "num_key_value_heads": 5, "intermediate_size": 11008,
                 "vocab_size": 32000})")
            << QStringLiteral("config.num_key_value_heads") << QStringLiteral("divide");
        QTest::addRow("tie not bool")
            << QStringLiteral(R"({"model_type": "llama", %1, "tie_word_embeddings": "yes"})").arg(llama)
            << QStringLiteral("config.tie_word_embeddings") << QStringLiteral("true or false");
    }

    void huggingFaceImportRefuses()
    {
        QFETCH(QString, config);
        QFETCH(QString, field);
        QFETCH(QString, word);
        try {
            shapeFromHuggingFaceConfig(nlohmann::json::parse(config.toStdString()));
            QFAIL("accepted");
        } catch (const PlanError &e) {
            QCOMPARE(QString::fromStdString(e.field()), field);
            QVERIFY2(QString::fromStdString(e.rule()).contains(word), e.what());
        }
    }

    // transformers' per-class defaults apply only where the file is silent: GPT-2 ties its head
    // and sizes n_inner = 4 x n_embd; GPT-NeoX does not tie.
    void huggingFaceImportDefaults()
    {
        const ModelShape gpt2 = shapeFromHuggingFaceConfig(nlohmann::json::parse(R"({
            "model_type": "gpt2", "n_embd": 1600, "n_layer": 48, "n_head": 25, "n_inner": null,
            "vocab_size": 50257})"));
        QVERIFY(gpt2.tied_embeddings);
        QCOMPARE(gpt2.ffn_hidden, int64_t(6400));
        QCOMPARE(gpt2.head_dim, int64_t(64));
        QVERIFY(gpt2.ffn == FfnKind::GELU);
        const ModelShape neox = shapeFromHuggingFaceConfig(nlohmann::json::parse(R"({
            "model_type": "gpt_neox", "hidden_size": 4096, "num_hidden_layers": 32,
            "num_attention_heads": 32, "intermediate_size": 16384, "vocab_size": 50432})"));
        QVERIFY(!neox.tied_embeddings);
    }
};

QTEST_APPLESS_MAIN(TestModel)
#include "tst_model.moc"
