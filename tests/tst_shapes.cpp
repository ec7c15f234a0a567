// The 2025-26 shapes unit by unit: a layer's linears and their per-rank split (core/layers),
// what an attention kind saves (core/attention), how MoE tokens travel (core/moe), and the
// bytes per token of whole layers against hand computations: a DeepSeek-V3 dense and MoE
// layer, a Qwen3-MoE layer, and a Megatron GPT layer with dropout against Korthikanti et al.
// 2022's 34 sbh (flash), sbh (10 + 24 / t) (TP without SP) and 5 as / h (unfused softmax).
#include "core/attention.h"
#include "core/catalog.h"
#include "core/layers.h"
#include "core/memory.h"
#include "core/moe.h"
#include "core/plan.h"
#include "planvariants.h"

#include <QTest>
#include <nlohmann/json.hpp>

using namespace shardscope;
using nlohmann::json;

namespace {

Plan plan(const json &patch)
{
    json j = testing::variantBase();
    j["memory"]["recompute"] = "none";
    j.merge_patch(patch);
    return parsePlan(j, Catalog::builtin());
}

} // namespace

class TestShapes : public QObject
{
    Q_OBJECT

private slots:
    // MLA under TP 4: q_b, kv_b split by heads, o by rows; q_a, kv_a and the latent norms whole
    // on every rank. Routed experts split by etp, spread over ep; shared experts split by tp.
    void rankLayerSplits()
    {
        const ModelShape &m = *Catalog::builtin().model("deepseek-v3");
        const RankLayer r = rankLayer(m, LayerKind::Moe, 4, 8, 2);
        const double qa = 7168.0 * 1536, qb = 1536.0 * 128 * 192, kva = 7168.0 * 576,
                     kvb = 512.0 * 128 * 256, o = 128.0 * 128 * 7168;
        QCOMPARE(r.attention, qa + kvb / 4 + qb / 4 + kva + o / 4 + 1536 + 512);
        QCOMPARE(r.experts, 256.0 / 8 * 3 * 7168 * 2048 / 2);
        QCOMPARE(r.shared, 3.0 * 7168 * 2048 / 4);
        QCOMPARE(r.router, 256.0 * 7168);
        QCOMPARE(r.norms, 2.0 * 7168);
        // A column-parallel bias is split, a row-parallel one replicated (o_proj's, down's).
        const ModelShape &g = *Catalog::builtin().model("megatron-gpt-7b");
        const RankLayer d = rankLayer(g, LayerKind::Dense, 4, 1, 4);
        const double h = 4096;
        QCOMPARE(d.attention, (4 * h * h + 3 * h) / 4 + h);
        QCOMPARE(d.denseFfn, (8 * h * h + 4 * h) / 4 + h);
        QCOMPARE(d.norms, 4 * h);
        // DeepSeek-V3's MTP module on a rank under tp 1, ep 64: a MoE layer with 256 / 64 = 4
        // routed experts (232,996,864 + 4 x 44,040,192 = 409,157,632), the 2h -> h projection
        // (2 x 7168^2 = 102,760,448) and three norms (21,504): 511,939,584; its experts are 4
        // of the 256, not all of them.
        const RankLayer mtp = mtpModuleOnRank(m, 1, 64, 1);
        QCOMPARE(mtp.total(), 511939584.0);
        QCOMPARE(mtp.experts, 4.0 * 44040192);
        ModelShape noMtp = m;
        noMtp.mtp_layers = 0;
        QCOMPARE(mtpModuleOnRank(noMtp, 1, 64, 1).total(), 0.0);
    }

    // What attention saves per token: GQA under flash (q, k, v, output, log-sum-exp), Qwen3's
    // QK norms, MLA's latents, eager score bytes in both softmax styles.
    void attentionSavedBytes()
    {
        ActivationEnv e;
        e.c = e.r = 2;
        const ModelShape &q3 = *Catalog::builtin().model("qwen3-8b");
        ModelShape plain = q3;
        plain.qk_norm = false;
        const AttentionSaved a = attentionSaved(e, plain, true);
        QCOMPARE(a.inputs, 2.0 * 4096);
        QCOMPARE(a.core, 2.0 * (4096 + 2 * 1024) + 2.0 * 4096 + 4.0 * 32);
        // QK norms (fused here): their inputs, q and k, in the compute dtype.
        QCOMPARE(attentionSaved(e, q3, true).core - a.core, 2.0 * 4096 + 2.0 * 1024);
        const ModelShape &v3 = *Catalog::builtin().model("deepseek-v3");
        const AttentionSaved m = attentionSaved(e, v3, true);
        QCOMPARE(m.core, 2.0 * (2 * 1536) + 2.0 * (2 * 512) + 2.0 * (2 * 128 * 192 + 128 * 128) +
                             2.0 * 128 * 128 + 4.0 * 128);
        QCOMPARE(m.kvWidth, 128.0 * (192 + 128));
        // Eager at 1024 keys: Hugging Face 4 + 2 B per score, + 1 with dropout; Megatron's
        // fused softmax 2, 5 with dropout.
        e.flash = false;
        e.seqTokens = 1024;
        QCOMPARE(attentionSaved(e, plain, true).scores, 6.0 * 32 * 1024);
        e.attentionDropout = 0.1;
        QCOMPARE(attentionSaved(e, plain, true).scores, 7.0 * 32 * 1024);
        e.fusedSoftmax = true;
        QCOMPARE(attentionSaved(e, plain, true).scores, 5.0 * 32 * 1024);
        e.attentionDropout = 0;
        QCOMPARE(attentionSaved(e, plain, true).scores, 2.0 * 32 * 1024);
    }

    // What a layer's RoPE keeps (core/attention ropeSavedPerToken), by hand, bf16:
    // - per layer: q's and k's cos and sin, 4 x 128 x 2 = 1024 B per position; a micro-batch of
    //   2 sequences shares them: 512 B per token; MLA rotates 64 dims: 512.
    // - keeping the input, Llama-3-8B at tp 2 (q 2048, k and v 512 wide): the q/k/v projection
    //   output that k views, 2 x (2048 + 2 x 512) = 6144, and q's reshaped copy, 4096: 10,240
    //   + 1024; Llama-2-7B (MHA, q a view too): 2 x (2048 + 2 x 2048) = 12,288 + 1024; Qwen3-8B
    //   at tp 1 (QK norms: q and k are the norms' outputs): 2 x (4096 + 1024) + 1024.
    void ropeSavedBytes()
    {
        ActivationEnv e;
        const Catalog &cat = Catalog::builtin();
        const ModelShape &l3 = *cat.model("llama3-8b"), &l2 = *cat.model("llama2-7b");
        QCOMPARE(ropeSavedPerToken(e, l3), 0.0); // shared cos and sin
        e.ropePerLayer = true;
        QCOMPARE(ropeSavedPerToken(e, l3), 1024.0);
        e.ropeRowsPerToken = 0.5;
        QCOMPARE(ropeSavedPerToken(e, l3), 512.0);
        QCOMPARE(ropeSavedPerToken(e, *cat.model("deepseek-v3")), 256.0);
        QCOMPARE(ropeSavedPerToken(e, *cat.model("megatron-gpt-7b")), 0.0); // learned positions
        e.ropeRowsPerToken = 1;
        e.ropeKeepsInput = true;
        e.tp = 2;
        QCOMPARE(ropeSavedPerToken(e, l3), 6144.0 + 4096 + 1024);
        QCOMPARE(ropeSavedPerToken(e, l2), 12288.0 + 1024);
        e.tp = 1;
        QCOMPARE(ropeSavedPerToken(e, *cat.model("qwen3-8b")), 2.0 * (4096 + 1024) + 1024);
        // attentionSaved counts it with the rest of the attention block.
        ActivationEnv shared = e;
        shared.ropePerLayer = shared.ropeKeepsInput = false;
        QCOMPARE(attentionSaved(e, l2, true).core - attentionSaved(shared, l2, true).core,
                 2.0 * 3 * 4096 + 1024);
    }

    // Which RoPE a plan's layers run: memory.rope, else the profile's on the plan's device
    // (megatron: Transformer Engine's fused RoPE on NVIDIA keeps nothing per layer, MindSpeed's
    // on Ascend its cos and sin), counted in every layer's bytes per token.
    void ropeOfPlan()
    {
        const json megatron = {
            {"framework", "megatron"},
            {"model", {{"preset", "llama3-8b"}, {"layers", 4}}},
            {"training", {{"dropout", {{"hidden", 0}, {"attention", 0}}}}},
            {"parallel", {{"dp", 4}, {"tp", 2}, {"sp", true}, {"sharding", "optimizer"}}}};
        json h100 = megatron, npu = megatron;
        h100["cluster"]["device"] = "h100-80g";
        const Plan onH100 = plan(h100), onNpu = plan(npu);
        const Catalog &cat = Catalog::builtin();
        QVERIFY(ropeSavesOf(onH100, *cat.framework("megatron"), "nvidia") == RopeSaves::Shared);
        QVERIFY(ropeSavesOf(onNpu, *cat.framework("megatron"), "huawei") == RopeSaves::PerLayer);
        QVERIFY(ropeSavesOf(onNpu, *cat.framework("pytorch"), "huawei") == RopeSaves::Shared);
        QVERIFY(ropeSavesOf(onNpu, *cat.framework("megatron-legacy"), "nvidia") ==
                RopeSaves::PerLayer);
        json keeps = npu;
        keeps["memory"]["rope"] = "keeps_input";
        json none = npu;
        none["memory"]["rope"] = "shared";
        const double base = savedBytesPerToken(plan(none), cat, 0);
        QCOMPARE(savedBytesPerToken(onNpu, cat, 0) - base, 1024.0);
        QCOMPARE(savedBytesPerToken(plan(keeps), cat, 0) - base, 6144.0 + 4096 + 1024);
    }

    // Routed copies per token of the micro-batch: top_k x load, / tp under SP, x etp for the
    // expert tensor-parallel gather; dispatch buffers: the all-to-all's send and receive, the
    // all-gather's ep x etp tokens.
    void moeRoutingFactors()
    {
        ModelShape m = *Catalog::builtin().model("deepseek-v3");
        Parallel pa;
        pa.dp = 64;
        pa.ep = 8;
        MoeRouting r = moeRouting(m, pa);
        QCOMPARE(r.copies, 8.0);
        QCOMPARE(r.localExperts, 32.0);
        QCOMPARE(dispatchTransientHiddens(m, pa), 16.0);
        pa.tp = 4;
        pa.sp = true;
        pa.etp = 2;
        r = moeRouting(m, pa);
        QCOMPARE(r.tokensIn, 0.25);
        QCOMPARE(r.copies, 0.25 * 2 * 8);
        QCOMPARE(r.expertWidth, 1024.0);
        QCOMPARE(r.sharedWidth, 512.0);
        m.moe.capacity_factor = 1.25;
        QCOMPARE(moeRouting(m, pa).copies, 0.25 * 2 * 8 * 1.25);
        m.moe.capacity_factor = 0;
        m.moe.imbalance = 1.5;
        QCOMPARE(moeRouting(m, pa).load, 1.5);
        m.moe.dispatcher = MoeShape::Dispatcher::AllGather;
        QCOMPARE(dispatchTransientHiddens(m, pa), 0.25 * 8 * 2);
        pa.ep = 1;
        m.moe.dispatcher = MoeShape::Dispatcher::AllToAll;
        QCOMPARE(dispatchTransientHiddens(m, pa), 0.0); // no all-to-all: the permuted copy is the input
    }

    // Whole layers, bytes per token (bf16, no recompute, flash, dropout off unless said), on an
    // H100: CUDA's flash kernels keep an fp32 log-sum-exp per head and token. On the 910B the
    // same layers keep 60 B more per head of the rank under flash (torch_npu's
    // npu_fusion_attention keeps softmax_max and softmax_sum, [b, n, s, 8] fp32 each: 64 B) and
    // the same under eager attention.
    void layerBytesPerToken_data()
    {
        QTest::addColumn<QString>("patch");
        QTest::addColumn<int>("layer");
        QTest::addColumn<double>("expected");
        // DeepSeek-V3, megatron, tp 1 (fused norms save their input; fused SwiGLU its fc1
        // output and result):
        //   norms 2 x 2 x 7168 = 28,672; attention input 2 x 7168 = 14,336; q latent norm and
        //   up-projection input 2 x 2 x 1536 = 6,144; kv latent 2 x 2 x 512 = 2,048; flash
        //   q + k (2 x 128 x 192) and v (128 x 128) = 2 x 65,536, the output 2 x 16,384, the
        //   log-sum-exp 4 x 128: 164,352; FFN input 14,336.
        //   Dense layer: + 3 x 2 x 18,432 = 110,592 -> 340,480.
        //   MoE layer: 8 routed copies x (3 x 2 x 2048 + the expert's input and output
        //   2 x 2 x 7168) = 327,680; the fp32 router's probabilities and input copy
        //   4 x 256 + 4 x 7168 = 29,696; the shared expert 3 x 2 x 2048 = 12,288 -> 599,552.
        const char *v3 = R"({"model": {"preset": "deepseek-v3", "layers": 4}, "framework": "megatron",
            "training": {"dropout": {"hidden": 0, "attention": 0}},
            "parallel": {"dp": 8, "ep": 8, "sharding": "optimizer"}})";
        QTest::addRow("deepseek-v3 dense") << v3 << 0 << 340480.0;
        QTest::addRow("deepseek-v3 moe") << v3 << 3 << 599552.0;
        // The same MoE layer at tp 4 + SP, etp 1, ep 8: norms and inputs / 4 (7,168 + 3,584 +
        // 3,584); latents whole (8,192); flash over 32 heads 41,088; 2 routed copies per token
        // (1/4 x 8) x 40,960 = 81,920; router 29,696 / 4 = 7,424; shared expert / 4: 3,072.
        QTest::addRow("deepseek-v3 moe tp4 sp etp1")
            << R"({"model": {"preset": "deepseek-v3", "layers": 4}, "framework": "megatron",
                  "training": {"dropout": {"hidden": 0, "attention": 0}},
                  "parallel": {"dp": 2, "tp": 4, "sp": true, "ep": 8, "etp": 1, "sharding": "optimizer"}})"
            << 3 << 156032.0;
        // Qwen3-30B-A3B, pytorch (Hugging Face: upcast RMSNorm saves fp32 input and the
        // normalized tensor, 6 B per element): norms 2 x 6 x 2048 = 24,576; attention input
        // 4,096; QK norms 6 x 4096 + 6 x 512 = 27,648; flash 2 x (4096 + 2 x 512) + 2 x 4096 +
        // 4 x 32 = 18,560; FFN input 4,096; 8 copies x (4 x 2 x 768 + 2 x 2 x 2048) = 114,688;
        // router probabilities 4 x 128 = 512 -> 194,176.
        QTest::addRow("qwen3-moe")
            << R"({"model": {"preset": "qwen3-30b-a3b"}, "parallel": {"ep": 8, "sharding": "optimizer"}})"
            << 0 << 194176.0;
        // Megatron GPT 6.7B with the profile's 0.1 dropout, flash: Korthikanti's 34 h (two
        // one-byte dropout masks included) + the log-sum-exp 4 x 32 + LayerNorm's fp32 mean
        // and rstd 2 x 8 = 139,408.
        const char *gpt = R"({"model": {"preset": "megatron-gpt-7b"}, "framework": "megatron"})";
        QTest::addRow("gpt flash") << gpt << 0 << 34.0 * 4096 + 128 + 16;
        // TP 4 without SP: (10 + 24 / 4) h + 4 x 8 + 16.
        QTest::addRow("gpt tp4")
            << R"({"model": {"preset": "megatron-gpt-7b"}, "framework": "megatron",
                  "parallel": {"dp": 2, "tp": 4}})"
            << 0 << 16.0 * 4096 + 32 + 16;
        // Unfused softmax with attention dropout at 2048 tokens: + 5 a s per token.
        QTest::addRow("gpt eager dropout")
            << R"({"model": {"preset": "megatron-gpt-7b"}, "framework": "megatron",
                  "training": {"seq_len": 2048}, "memory": {"attention": "eager"}})"
            << 0 << 34.0 * 4096 + 5.0 * 32 * 2048 + 16;
        // MindSpeed's activation-function recompute drops GELU's output (2 x 16384): 106,640; its
        // norm recompute the two norm outputs (2 x 2 x 4096): 123,024; both: 90,256.
        QTest::addRow("gpt activation recompute")
            << R"({"model": {"preset": "megatron-gpt-7b"}, "framework": "megatron",
                  "memory": {"recompute_activation_function": true}})"
            << 0 << 34.0 * 4096 + 144 - 32768;
        QTest::addRow("gpt norm recompute")
            << R"({"model": {"preset": "megatron-gpt-7b"}, "framework": "megatron",
                  "memory": {"recompute_norm": true}})"
            << 0 << 34.0 * 4096 + 144 - 16384;
        QTest::addRow("gpt both")
            << R"({"model": {"preset": "megatron-gpt-7b"}, "framework": "megatron",
                  "memory": {"recompute_norm": true, "recompute_activation_function": true}})"
            << 0 << 34.0 * 4096 + 144 - 32768 - 16384;
        // Without dropout the two masks go: 32 h.
        QTest::addRow("gpt no dropout")
            << R"({"model": {"preset": "megatron-gpt-7b"}, "framework": "megatron",
                  "training": {"dropout": {"hidden": 0, "attention": 0}}})"
            << 0 << 32.0 * 4096 + 128 + 16;
    }

    void layerBytesPerToken()
    {
        QFETCH(QString, patch);
        QFETCH(int, layer);
        QFETCH(double, expected);
        json j = json::parse(patch.toStdString());
        j["cluster"]["device"] = "h100-80g";
        const Plan p = plan(j);
        QCOMPARE(savedBytesPerToken(p, Catalog::builtin(), layer), expected);
        j["cluster"]["device"] = "ascend-910b2";
        const Plan n = plan(j);
        const double statistics = n.memory.attention == Attention::Flash
                                      ? 60.0 * double(n.model.heads) / n.parallel.tp
                                      : 0.0;
        // And MindSpeed's fused RoPE keeps the cos and sin it makes for q and for k in every
        // layer, bf16 over the rotary dims (DeepSeek-V3: 4 x 64 x 2 = 512); a learned position
        // table nothing.
        const bool rope =
            n.model.position_embedding == PositionEmbedding::Rope && n.framework == "megatron";
        const double rotary =
            n.model.mla_attention() ? n.model.mla.qk_rope_head_dim : n.model.head_dim;
        const double ropeBytes = rope ? 4.0 * rotary * 2.0 / n.training.micro_batch : 0.0;
        QCOMPARE(savedBytesPerToken(n, Catalog::builtin(), layer),
                 expected + statistics + ropeBytes);
    }

    // Context parallelism beside attention, Llama-2-7B (h = 4096, MHA) on a rank with 4096
    // tokens in bf16: the ring double-buffers K and V (2 x 4096 x 8192 x 2 = 134,217,728 B
    // forward, twice that backward); Ulysses holds q, k and v in both layouts
    // (4096 x 12288 x 2 = 100,663,296 B); the hybrid both. Saved activations are the same.
    void contextParallelAlgorithms()
    {
        ActivationEnv e;
        e.c = e.r = 2;
        const AttentionSaved a = attentionSaved(e, *Catalog::builtin().model("llama2-7b"), true);
        QCOMPARE(contextParallelTransient(a, 8, 1, 4096, 2, false), 134217728.0);
        QCOMPARE(contextParallelTransient(a, 8, 1, 4096, 2, true), 268435456.0);
        QCOMPARE(contextParallelTransient(a, 1, 8, 4096, 2, false), 100663296.0);
        QCOMPARE(contextParallelTransient(a, 1, 8, 4096, 2, true), 100663296.0);
        QCOMPARE(contextParallelTransient(a, 4, 2, 4096, 2, false), 134217728.0 + 100663296.0);
        QCOMPARE(contextParallelTransient(a, 1, 1, 4096, 2, false), 0.0);
        const char *base = R"({"training": {"seq_len": 32768}, "parallel": {"dp": 1, "cp": 8, "cp_algo": "%1"}})";
        const Plan ring = plan(json::parse(QString::fromUtf8(base).arg(QStringLiteral("ring")).toStdString()));
        const Plan uly = plan(json::parse(QString::fromUtf8(base).arg(QStringLiteral("ulysses")).toStdString()));
        QCOMPARE(savedBytesPerToken(uly, Catalog::builtin(), 0), savedBytesPerToken(ring, Catalog::builtin(), 0));
    }

    // MindSpeed-LLM repeats K and V to the query heads before Ulysses' all-to-all. Llama-3-8B
    // (h 4096, 32 heads, 8 KV heads of 128) on tp 1 in bf16 with flash: attention's core keeps
    // q (4096), k and v (1024 each), the output (4096) and the fp32 log-sum-exp (32 x 4):
    // 2 x 6144 + 2 x 4096 + 128 = 20,608 B/token; repeated, k and v are 4096 wide:
    // 2 x 12288 + 8192 + 128 = 32,896, i.e. 12,288 more (2 x c x (q - kv)). The exchange
    // buffers of a 4096-token rank: 4096 x (4096 + 2048) x 2 = 50,331,648 B as projected,
    // 4096 x 12288 x 2 = 100,663,296 B repeated.
    void ulyssesKvRepeat()
    {
        const ModelShape &m = *Catalog::builtin().model("llama3-8b");
        ActivationEnv e;
        e.c = e.r = 2;
        const AttentionSaved own = attentionSaved(e, m, true);
        e.kvRepeated = true;
        const AttentionSaved rep = attentionSaved(e, m, true);
        QCOMPARE(own.core, 20608.0);
        QCOMPARE(rep.core, 32896.0);
        QCOMPARE(rep.inputs, own.inputs); // the projections' inputs do not change
        QCOMPARE(contextParallelTransient(own, 1, 8, 4096, 2, false), 50331648.0);
        QCOMPARE(contextParallelTransient(rep, 1, 8, 4096, 2, false), 100663296.0);

        // A whole layer under framework megatron (fused norms and SwiGLU, 0.1 dropout): the
        // repeat (the profile's default) adds exactly those 12,288 B/token; the ring and
        // MindSpeed's own Ulysses (no repeat) save the same. Eight KV heads over a Ulysses group
        // of 16 are possible only repeated.
        auto llama = [](const char *algo, int cp, const json &repeat, int ulyssesDegree = 0) {
            json j = json::parse(R"({"model": {"preset": "llama3-8b"}, "framework": "megatron",
                                     "training": {"seq_len": 32768}, "parallel": {"dp": 1}})");
            j["parallel"]["cp"] = cp;
            j["parallel"]["cp_algo"] = algo;
            j["cluster"]["nodes"] = std::max(1, cp / 8);
            if (ulyssesDegree > 0)
                j["parallel"]["ulysses_degree"] = ulyssesDegree;
            if (!repeat.is_null())
                j["parallel"]["ulysses_kv_repeat"] = repeat;
            return plan(j);
        };
        const Catalog &cat = Catalog::builtin();
        const double ring = savedBytesPerToken(llama("ring", 8, nullptr), cat, 0);
        const double plain = savedBytesPerToken(llama("ulysses", 8, false), cat, 0);
        const double repeated = savedBytesPerToken(llama("ulysses", 8, nullptr), cat, 0);
        QCOMPARE(plain, ring);
        QCOMPARE(repeated - plain, 12288.0);
        QCOMPARE(savedBytesPerToken(llama("ulysses", 16, nullptr), cat, 0), repeated);
        QVERIFY_THROWS_EXCEPTION(PlanError, llama("ulysses", 16, false));
        // The hybrid repeats too (its ring then passes the repeated K/V blocks); the ring alone
        // never does.
        QCOMPARE(savedBytesPerToken(llama("hybrid", 8, nullptr, 2), cat, 0), repeated);
        QCOMPARE(savedBytesPerToken(llama("ring", 8, true), cat, 0), ring);
    }

    // Megatron's recompute methods over the stage's 32 layers (bf16, flash, 0.1 dropout) on the
    // 910B: block 8 keeps the checkpointed input (2 x 4096 B/token) for 8 layers and everything
    // (139,408 + 60 x 32 of torch_npu's softmax statistics = 141,328) for 24: a mean of 108,044;
    // uniform groups of 4 keep one input per 4 layers: 2,048.
    void recomputeMethods_data()
    {
        QTest::addColumn<QString>("memory");
        QTest::addColumn<QString>("perToken");
        QTest::addRow("block 8")
            << R"({"recompute": "full", "recompute_method": "block", "recompute_num_layers": 8})"
            << "32 layers x 108044 B/token";
        QTest::addRow("uniform 4") << R"({"recompute": "full", "recompute_method": "uniform", "recompute_num_layers": 4})"
                                   << "32 layers x 2048 B/token";
        QTest::addRow("uniform 1") << R"({"recompute": "full"})" << "32 layers x 8192 B/token";
    }

    void recomputeMethods()
    {
        QFETCH(QString, memory);
        QFETCH(QString, perToken);
        json patch = json::parse(R"({"model": {"preset": "megatron-gpt-7b"}, "framework": "megatron"})");
        patch["memory"] = json::parse(memory.toStdString());
        const Plan p = plan(patch);
        const MemoryEstimate m = estimateMemory(p, Catalog::builtin());
        const std::string text =
            explainMemory(p, Catalog::builtin(), m.ranks[0], Phase::Backward)[size_t(Component::Activations)]
                .formula.english();
        QVERIFY2(text.find(perToken.toStdString()) != std::string::npos, text.c_str());
    }

    // Dense and MoE layers of one stage: the activation formula's B/token is their mean.
    void mixedStageMean()
    {
        const Plan p = plan(json::parse(R"({"model": {"preset": "deepseek-v3", "layers": 4},
            "framework": "megatron", "training": {"dropout": {"hidden": 0, "attention": 0}},
            "parallel": {"dp": 8, "ep": 8, "sharding": "optimizer"}})"));
        const MemoryEstimate m = estimateMemory(p, Catalog::builtin());
        const MemoryExplanation ex = explainMemory(p, Catalog::builtin(), m.ranks[0], Phase::Backward);
        const std::string text = ex[size_t(Component::Activations)].formula.english();
        // On the 910B (60 x 128 B/token more per layer than layerBytesPerToken's H100 figures,
        // and 512 of RoPE's cos and sin): (3 x 348,672 + 607,744) / 4 = 413,440.
        QVERIFY2(text.find("4 layers x 413440 B/token") != std::string::npos, text.c_str());
    }
};

QTEST_APPLESS_MAIN(TestShapes)
#include "tst_shapes.moc"
