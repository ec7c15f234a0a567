// Parameter counts from shapes, the model-size mode and Hugging Face config import.
#include "core/catalog.h"
#include "core/errors.h"
#include "core/layers.h"
#include "core/model.h"
#include "core/plan.h"

#include <QTest>
#include <nlohmann/json.hpp>
#include <thread>

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
        // The 2025-26 presets, counted module by module from each model's config.json and
        // modelling code (the preset files' "source" gives the published totals):
        // DeepSeek-V3 main model 671,026,404,352 (published 671B) + one MTP module
        // 11,610,067,968 (2 x 7168 norms + 2 x 7168^2 projection + an MoE layer + final norm).
        QTest::addRow("deepseek-v3") << QStringLiteral("deepseek-v3") << 682636472320LL;
        // DeepSeek-V2-Lite: 15.7B (no query compression, 2 shared experts, 1 dense layer).
        QTest::addRow("deepseek-v2-lite") << QStringLiteral("deepseek-v2-lite") << 15706484224LL;
        // Kimi-K2: 384 experts, 64 heads, 1 dense layer: 1.03T (published: 1T).
        QTest::addRow("kimi-k2") << QStringLiteral("kimi-k2") << 1026408209408LL;
        // Qwen3 (QK norms, 2 x 128 per layer): 8.2B and 32.8B.
        QTest::addRow("qwen3-8b") << QStringLiteral("qwen3-8b") << 8190735360LL;
        QTest::addRow("qwen3-32b") << QStringLiteral("qwen3-32b") << 32762123264LL;
        // Qwen3-MoE: 30.5B and 235B.
        QTest::addRow("qwen3-30b-a3b") << QStringLiteral("qwen3-30b-a3b") << 30532122624LL;
        QTest::addRow("qwen3-235b-a22b") << QStringLiteral("qwen3-235b-a22b") << 235093634560LL;
        // Llama 3.1 405B: 405,853,388,800.
        QTest::addRow("llama3.1-405b") << QStringLiteral("llama3.1-405b") << 405853388800LL;
        // GLM-4.5-Air: 106,852,245,504 (published 106B) + its MTP module 2,375,059,456.
        QTest::addRow("glm-4.5-air") << QStringLiteral("glm-4.5-air") << 109227304960LL;
        // Megatron GPT at 6.7B: 32 x (4h^2 + 4h + 8h^2 + 5h + 4h) + V h + s h + 2h with h = 4096,
        // V = 50304, s = 4096; Narayanan et al.'s formula gives the same.
        QTest::addRow("megatron-gpt-7b") << QStringLiteral("megatron-gpt-7b") << 6666985472LL;
        // GPT-2 XL with its learned positions (1024 x 1600) and biases: 1,557,611,200.
        QTest::addRow("gpt2-xl") << QStringLiteral("gpt2-xl") << 1557611200LL;
    }

    void presetCounts()
    {
        QFETCH(QString, preset);
        QFETCH(qlonglong, expected);
        const ModelShape *m = Catalog::builtin().model(preset.toStdString());
        QVERIFY(m);
        QCOMPARE(qlonglong(countParameters(*m).total), expected);
    }

    // countParameters and layerSpec keep the last model's results: a changed field, another
    // model and a return to the first give what a new thread (nothing kept) computes.
    void keptCountsFollowTheModel()
    {
        ModelShape a = *Catalog::builtin().model("llama2-7b");
        ModelShape b = a;
        b.ffn_hidden += 128;
        ModelShape c = *Catalog::builtin().model("deepseek-v3");
        for (const ModelShape *m : {&a, &b, &c, &a, &c, &b}) {
            int64_t freshTotal = 0;
            size_t freshLinears = 0, freshMoe = 0;
            std::thread([&] {
                freshTotal = countParameters(*m).total;
                freshLinears = layerSpec(*m, LayerKind::Dense).linears.size();
                freshMoe = m->moe.enabled() ? layerSpec(*m, LayerKind::Moe).linears.size() : 0;
            }).join();
            QCOMPARE(countParameters(*m).total, freshTotal);
            QCOMPARE(layerSpec(*m, LayerKind::Dense).linears.size(), freshLinears);
            if (m->moe.enabled())
                QCOMPARE(layerSpec(*m, LayerKind::Moe).linears.size(), freshMoe);
        }
        QVERIFY(countParameters(a).total != countParameters(b).total);
        QCOMPARE(layerSpec(b, LayerKind::Dense).linears[4].out, a.ffn_hidden + 128);
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

    // One DeepSeek-V3 layer of each kind, by hand: MLA's q_a (7168 x 1536), its norm (1536),
    // q_b (1536 x 128 x 192), kv_a (7168 x 576), its norm (512), kv_b (512 x 128 x 256), o
    // (128 x 128 x 7168); the dense FFN 3 x 7168 x 18432; the MoE block's router (256 x 7168),
    // 256 experts and one shared expert of 3 x 7168 x 2048.
    void deepSeekV3Layers()
    {
        const ModelShape *m = Catalog::builtin().model("deepseek-v3");
        QVERIFY(m);
        const ParameterCounts c = countParameters(*m);
        const int64_t attention = 7168LL * 1536 + 1536 + 1536LL * 128 * 192 + 7168LL * 576 + 512 +
                                  512LL * 128 * 256 + 128LL * 128 * 7168;
        QCOMPARE(c.attention_per_layer, attention);
        QCOMPARE(attention, 187107328LL);
        QCOMPARE(c.dense_layer, attention + 2 * 7168 + 3LL * 7168 * 18432);
        QCOMPARE(c.expert_per_layer, 3LL * 7168 * 2048);
        QCOMPARE(c.shared_per_layer, 3LL * 7168 * 2048);
        QCOMPARE(c.router_per_layer, 256LL * 7168);
        QCOMPARE(c.moe_layer, attention + 2 * 7168 + 256LL * 7168 + 257LL * 3 * 7168 * 2048);
        QCOMPARE(c.dense_layers, 3);
        QCOMPARE(c.moe_layers, 58);
        QCOMPARE(c.mtp_module, 2 * 7168 + 2LL * 7168 * 7168 + c.moe_layer + 7168);
        // Every third layer MoE after one dense layer: layers 1, 4, 7, ... of 10.
        ModelShape every = *m;
        every.layers = 10;
        every.moe.first_dense_layers = 1;
        every.moe.layer_freq = 3;
        QCOMPARE(every.moeLayers(), 3);
        QVERIFY(every.moeLayer(1) && every.moeLayer(4) && every.moeLayer(7) && !every.moeLayer(2));
        // The count is a closed form: the same as counting moeLayer over the layers.
        for (int layers : {1, 2, 7, 10, 61})
            for (int dense = 0; dense < layers; ++dense)
                for (int freq : {1, 2, 3, 5, 64}) {
                    every.layers = layers;
                    every.moe.first_dense_layers = dense;
                    every.moe.layer_freq = freq;
                    int n = 0;
                    for (int l = 0; l < layers; ++l)
                        n += every.moeLayer(l) ? 1 : 0;
                    QCOMPARE(every.moeLayers(), n);
                }
        every.moe.experts = 0;
        QCOMPARE(every.moeLayers(), 0);
    }

    // A Qwen3-MoE layer: attention with QK norms (2 x 128), 128 experts of 3 x 2048 x 768 and
    // the router 128 x 2048, no shared expert and no dense layer.
    void qwen3MoeLayer()
    {
        const ModelShape *m = Catalog::builtin().model("qwen3-30b-a3b");
        QVERIFY(m);
        const ParameterCounts c = countParameters(*m);
        QCOMPARE(c.attention_per_layer, 2048LL * 4096 * 2 + 2048LL * 512 * 2 + 2 * 128);
        QCOMPARE(c.moe_layer, c.attention_per_layer + 2 * 2048 + 128LL * 2048 + 128LL * 3 * 2048 * 768);
        QCOMPARE(c.dense_layers, 0);
        QCOMPARE(c.dense_ffn_per_layer, 0LL);
        // The largest tensor is the embedding, not the unused dense FFN width.
        QCOMPARE(c.largest_tensor, 151936LL * 2048);
    }

    // A Megatron GPT layer: LayerNorm weight and bias (2 x 2h), q/k/v/o with biases (4h^2 + 4h),
    // fc1 and fc2 with biases (8h^2 + 4h + h).
    void megatronGptLayer()
    {
        const ModelShape *m = Catalog::builtin().model("megatron-gpt-7b");
        QVERIFY(m);
        QVERIFY(m->norm == NormKind::LayerNorm);
        QVERIFY(m->linear_bias);
        const ParameterCounts c = countParameters(*m);
        const int64_t h = 4096;
        QCOMPARE(c.norms_per_layer, 4 * h);
        QCOMPARE(c.attention_per_layer, 4 * h * h + 4 * h);
        QCOMPARE(c.dense_ffn_per_layer, 8 * h * h + 4 * h + h);
        QCOMPARE(c.position, 4096 * h);
        QCOMPARE(c.lm_head, 0LL);
    }

    // The Hugging Face reader gives the same shape as the preset of the same model, and reads
    // what earlier versions could not: Qwen2-MoE's shared expert (57.4B, not 51.2B), a
    // DeepSeek-V3 config as 671B plus its MTP module (not 702B), a VLM's text_config.
    void huggingFaceNewTypes_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<qlonglong>("expected");
        QTest::addRow("deepseek_v3") << QStringLiteral("deepseek-v3.json") << 682636472320LL;
        QTest::addRow("deepseek_v2") << QStringLiteral("deepseek-v2-lite.json") << 15706484224LL;
        QTest::addRow("kimi_k2") << QStringLiteral("kimi-k2.json") << 1026408209408LL;
        QTest::addRow("qwen3") << QStringLiteral("qwen3-8b.json") << 8190735360LL;
        QTest::addRow("qwen3_moe") << QStringLiteral("qwen3-30b-a3b.json") << 30532122624LL;
        // Qwen2-57B-A14B: 28 x (attention with q/k/v biases 29,364,736 + norms 7168 + router
        // 64 x 3584 + 64 experts 3 x 3584 x 2560 + shared expert 3 x 3584 x 20480 + its gate
        // 3584) + 2 x 151936 x 3584 + 3584.
        QTest::addRow("qwen2_moe") << QStringLiteral("qwen2-57b-a14b.json") << 57408658944LL;
        QTest::addRow("glm4_moe") << QStringLiteral("glm-4.5-air.json") << 109227304960LL;
        // Qwen2.5-VL-7B's decoder is Qwen2.5-7B's shape (152064 tokens, q/k/v biases): the
        // same 7,615,616,512 (the vision tower is not counted).
        QTest::addRow("text_config") << QStringLiteral("qwen2.5-vl-7b.json") << 7615616512LL;
    }

    void huggingFaceNewTypes()
    {
        QFETCH(QString, file);
        QFETCH(qlonglong, expected);
        const std::string path = qEnvironmentVariable("SHARDSCOPE_SOURCE_DIR").toStdString() +
                                 "/tests/fuzz/corpus-hfconfig/" + file.toStdString();
        const ModelShape m = shapeFromHuggingFaceConfigFile(path);
        QCOMPARE(qlonglong(countParameters(m).total), expected);
    }

    // A config read by the Hugging Face reader is its preset's shape, field by field (the
    // routers' dtype included: only DeepSeek-V3's family computes it in fp32).
    void huggingFaceMatchesPresets_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("preset");
        QTest::addRow("deepseek-v3") << QStringLiteral("deepseek-v3.json") << QStringLiteral("deepseek-v3");
        QTest::addRow("deepseek-v2-lite") << QStringLiteral("deepseek-v2-lite.json") << QStringLiteral("deepseek-v2-lite");
        QTest::addRow("kimi-k2") << QStringLiteral("kimi-k2.json") << QStringLiteral("kimi-k2");
        QTest::addRow("qwen3-8b") << QStringLiteral("qwen3-8b.json") << QStringLiteral("qwen3-8b");
        QTest::addRow("qwen3-30b-a3b") << QStringLiteral("qwen3-30b-a3b.json") << QStringLiteral("qwen3-30b-a3b");
        QTest::addRow("glm-4.5-air") << QStringLiteral("glm-4.5-air.json") << QStringLiteral("glm-4.5-air");
        QTest::addRow("mixtral-8x7b") << QStringLiteral("mixtral-8x7b.json") << QStringLiteral("mixtral-8x7b");
    }

    void huggingFaceMatchesPresets()
    {
        QFETCH(QString, file);
        QFETCH(QString, preset);
        const ModelShape a = shapeFromHuggingFaceConfigFile(
            qEnvironmentVariable("SHARDSCOPE_SOURCE_DIR").toStdString() + "/tests/fuzz/corpus-hfconfig/" +
            file.toStdString());
        const ModelShape &b = *Catalog::builtin().model(preset.toStdString());
        QCOMPARE(a.layers, b.layers);
        QCOMPARE(a.heads, b.heads);
        QCOMPARE(a.kv_heads, b.kv_heads);
        QCOMPARE(a.head_dim, b.head_dim);
        QVERIFY(a.attention == b.attention);
        QCOMPARE(a.mla.q_lora_rank, b.mla.q_lora_rank);
        QCOMPARE(a.mla.kv_lora_rank, b.mla.kv_lora_rank);
        QCOMPARE(a.mla.v_head_dim, b.mla.v_head_dim);
        QCOMPARE(a.qk_norm, b.qk_norm);
        QCOMPARE(a.attention_bias, b.attention_bias);
        QCOMPARE(a.mtp_layers, b.mtp_layers);
        QCOMPARE(a.moe.experts, b.moe.experts);
        QCOMPARE(a.moe.top_k, b.moe.top_k);
        QCOMPARE(a.moe.expert_ffn_hidden, b.moe.expert_ffn_hidden);
        QCOMPARE(a.moe.shared_experts, b.moe.shared_experts);
        QCOMPARE(a.moe.first_dense_layers, b.moe.first_dense_layers);
        QCOMPARE(a.moe.layer_freq, b.moe.layer_freq);
        QCOMPARE(a.moe.router_fp32, b.moe.router_fp32);
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

    void derivedShapesAreOnTheGrid_data()
    {
        QTest::addColumn<int>("tp");
        for (int tp : {1, 2, 4, 8})
            QTest::addRow("tp %d", tp) << tp;
    }

    // The shapes the size slider offers look like real models (head_dim 128, heads a multiple
    // of 8, 8 KV heads from 30B up) and each is valid at tp 1, 2, 4 and 8.
    void derivedShapesAreOnTheGrid()
    {
        QFETCH(int, tp);
        const Catalog &catalog = Catalog::builtin();
        Plan plan = parsePlanFile(locateDataDir() + "/cases/hcie-ai-ddp.plan.json", catalog);
        plan.parallel.tp = tp;
        plan.parallel.dp = plan.cluster.world() / tp;
        const std::vector<ModelShape> shapes = derivedShapes(tp);
        QVERIFY(shapes.size() >= 60);
        int64_t previous = 0;
        for (const ModelShape &m : shapes) {
            const int64_t total = countParameters(m).total;
            const QString what = QStringLiteral("%1 params: %2 layers, %3 heads, %4 kv, ffn %5")
                                     .arg(total).arg(m.layers).arg(m.heads).arg(m.kv_heads).arg(m.ffn_hidden);
            QVERIFY2(total > previous, qPrintable(what));
            previous = total;
            QVERIFY2(m.heads % 8 == 0, qPrintable(what));
            QCOMPARE(m.head_dim, int64_t(128));
            QCOMPARE(m.hidden, int64_t(m.heads) * 128);
            if (total >= 31e9)
                QVERIFY2(m.kv_heads == 8, qPrintable(what));
            QVERIFY2(m.ffn_hidden % 256 == 0 && m.ffn_hidden >= 2 * m.hidden && m.ffn_hidden <= 4 * m.hidden,
                     qPrintable(what));
            plan.model = m;
            try {
                validatePlan(plan, catalog);
            } catch (const PlanError &e) {
                QFAIL(qPrintable(what + QStringLiteral(": ") + QString::fromStdString(e.what())));
            }
        }
        QVERIFY(countParameters(shapes.front()).total < 0.6e9);
        QVERIFY(countParameters(shapes.back()).total > 0.9e12);
    }

    // A tp beyond 8 gets heads and KV heads it divides.
    void derivedShapesFollowALargeTp()
    {
        for (double p : {1e9, 70e9, 400e9}) {
            const ModelShape m = shapeForParameterCount(p, 16);
            QCOMPARE(m.heads % 16, 0);
            QCOMPARE(m.kv_heads % 16, 0);
            QCOMPARE(m.heads % m.kv_heads, 0);
        }
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
            << QStringLiteral(R"({"model_type": "mamba", %1})").arg(llama)
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
