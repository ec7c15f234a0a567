// The layer layout over the pipeline stages (core/layers.h, stageLayout): Megatron-Core's even,
// interleaved and uneven (first / last stage, embedding / loss counted) splits and MindSpeed-LLM's
// listed one, each against the placement the frameworks' own formulas give, and what the
// engine makes of a stage's layer count.
#include "core/catalog.h"
#include "core/compute.h"
#include "core/estimate.h"
#include "core/layers.h"
#include "core/memory.h"
#include "planvariants.h"
#include "testdata.h"

#include <QTest>
#include <nlohmann/json.hpp>
#include <numeric>
#include <tuple>

using namespace shardscope;
using nlohmann::json;

namespace {

Parallel pipeline(int pp, int v = 1)
{
    Parallel pa;
    pa.pp = pp;
    pa.pp_schedule = v > 1 ? PpSchedule::Interleaved : PpSchedule::OneFOneB;
    pa.virtual_stages = v;
    return pa;
}

/// Megatron-Core's get_transformer_layer_offset (transformer_layer.py), written out from its
/// source for the uneven first / last stage case with virtual stages: the offset of chunk
/// `vp` of stage `rank`.
int megatronUnevenOffset(int layers, int pp, int vp, int first, int last, int rank, int chunk)
{
    const int middleStages = pp - (first > 0 ? 1 : 0) - (last > 0 ? 1 : 0);
    const int middleLayers = layers - first - last;
    const int middleRank = first > 0 ? rank - 1 : rank;
    const int firstChunk = first / vp, lastChunk = last / vp, middleChunk = middleLayers / vp;
    const int total = firstChunk + middleChunk + lastChunk;
    if (rank == 0)
        return chunk * total;
    return chunk * total + firstChunk + middleRank * (middleChunk / middleStages);
}

/// The same function's embedding / loss counted branch.
int megatronAccountOffset(int layers, int pp, int vp, bool embedding, bool loss, int rank, int chunk)
{
    const int n = layers + (embedding ? 1 : 0) + (loss ? 1 : 0);
    const int perRank = n / pp, perVirtual = perRank / vp, total = n / vp;
    int offset = chunk * total + rank * perVirtual;
    if (embedding && !(chunk == 0 && rank == 0))
        offset -= 1;
    return offset;
}

json base() { return testing::variantBase(); } // Llama-2-7B (32 layers), 4K, 8 x 910B

Plan plan(const json &patch)
{
    json j = base();
    j.merge_patch(patch);
    return parsePlan(j, Catalog::builtin());
}

double component(const RankMemory &r, Phase p, Component c) { return r.phases[size_t(p)][c]; }

} // namespace

class TestStageLayout : public QObject
{
    Q_OBJECT

private slots:
    // The default: chunks of layers / (pp x v) round-robin over the stages, Megatron's example
    // in get_num_layers_to_build: 8 layers, 2 stages, 2 (4) virtual stages.
    void evenInterleavedFollowsMegatronsExample()
    {
        const std::vector<int> two = {0, 0, 1, 1, 0, 0, 1, 1};
        const std::vector<int> four = {0, 1, 0, 1, 0, 1, 0, 1};
        QCOMPARE(layerStages(pipeline(2, 2), 8), two);
        QCOMPARE(layerStages(pipeline(2, 4), 8), four);
        const StageLayout l = stageLayout(pipeline(2, 2), 8);
        QCOMPARE(l.offset(1, 0), 2);
        QCOMPARE(l.offset(0, 1), 4);
        QCOMPARE(l.offset(1, 1), 6);
        QVERIFY(l.even());
        for (int layer = 0; layer < 8; ++layer)
            QCOMPARE(stageOfLayer(pipeline(2, 4), 8, layer), four[size_t(layer)]);
    }

    // Megatron's --recompute-method block recomputes the first n layers of every chunk;
    // MindSpeed's --enable-recompute-layers-per-pp-rank ranks the stage's layers over its
    // chunks (mindspeed/core/memory/recompute/recompute_common.py should_recompute: layer l of
    // chunk c has priority l x v + c, recomputed below n). Each chunk's count against that rule
    // layer by layer, on even and on embedding-counted (uneven) layouts.
    void blockRecomputePerPipelineRank()
    {
        Parallel counted = pipeline(4, 2);
        counted.account_for_embedding = counted.account_for_loss = true;
        for (const auto &[pa, layers] : {std::pair{pipeline(4, 4), 32},
                                         std::pair{pipeline(2, 3), 30}, std::pair{counted, 30}}) {
            const StageLayout l = stageLayout(pa, layers);
            for (int s = 0; s < pa.pp; ++s) {
                for (int n = 1; n <= l.stage(s); ++n) {
                    int sum = 0;
                    for (int c = 0; c < l.chunks; ++c) {
                        int rule = 0;
                        for (int layer = 0; layer < l.chunk(s, c); ++layer)
                            rule += layer * l.chunks + c < n ? 1 : 0;
                        QCOMPARE(l.chunkBlockRecomputed(s, c, n, true), rule);
                        QCOMPARE(l.chunkBlockRecomputed(s, c, n, false),
                                 std::min(n, l.chunk(s, c)));
                        sum += rule;
                    }
                    QCOMPARE(l.blockRecomputed(s, n, true), sum);
                }
            }
        }
        // 32 layers, pp 4 x 4 chunks of 2: n = 1 is chunk 0's first layer only.
        QCOMPARE(stageLayout(pipeline(4, 4), 32).blockRecomputed(1, 1, true), 1);
        QCOMPARE(stageLayout(pipeline(4, 4), 32).blockRecomputed(1, 1, false), 4);
    }

    void evenSplitWithoutInterleaving()
    {
        const std::vector<int> counts = stageLayers(pipeline(4), 32);
        QCOMPARE(counts, std::vector<int>(4, 8));
        QCOMPARE(stageOfLayer(pipeline(4), 32, 7), 0);
        QCOMPARE(stageOfLayer(pipeline(4), 32, 8), 1);
        QCOMPARE(stageOfLayer(pipeline(4), 32, 31), 3);
        // pp 1: everything on the one stage, whatever a layout field says.
        Parallel one = pipeline(1);
        one.first_stage_layers = 3;
        QCOMPARE(stageLayers(one, 32), std::vector<int>{32});
    }

    // DeepSeek-V3's 61 layers over 16 stages: 1 on the first, 4 on the last, 4 on each other.
    void unevenFirstAndLast()
    {
        Parallel pa = pipeline(16);
        pa.first_stage_layers = 1;
        pa.last_stage_layers = 4;
        QVERIFY(!stageLayoutError(pa, 61, 0));
        const std::vector<int> counts = stageLayers(pa, 61);
        QCOMPARE(counts.front(), 1);
        QCOMPARE(counts.back(), 4);
        QCOMPARE(std::accumulate(counts.begin(), counts.end(), 0), 61);
        for (size_t s = 1; s + 1 < counts.size(); ++s)
            QCOMPARE(counts[s], 4);
        QCOMPARE(stageOfLayer(pa, 61, 0), 0);
        QCOMPARE(stageOfLayer(pa, 61, 1), 1);
        QCOMPARE(stageOfLayer(pa, 61, 4), 1);
        QCOMPARE(stageOfLayer(pa, 61, 5), 2);
        QCOMPARE(stageOfLayer(pa, 61, 56), 14);
        QCOMPARE(stageOfLayer(pa, 61, 57), 15);
        QCOMPARE(stageOfLayer(pa, 61, 60), 15);
        // Only the first stage set: the rest even over the others.
        Parallel first = pipeline(4);
        first.first_stage_layers = 5;
        QCOMPARE(stageLayers(first, 32), (std::vector<int>{5, 9, 9, 9}));
    }

    void unevenInterleavedMatchesMegatronsOffsets_data()
    {
        QTest::addColumn<int>("layers");
        QTest::addColumn<int>("pp");
        QTest::addColumn<int>("vp");
        QTest::addColumn<int>("first");
        QTest::addColumn<int>("last");
        QTest::newRow("24 over 4x2, 2 first, 6 last") << 24 << 4 << 2 << 2 << 6;
        QTest::newRow("26 over 4x2, 2 first only") << 26 << 4 << 2 << 2 << 0;
        QTest::newRow("28 over 4x2, 4 last only") << 28 << 4 << 2 << 0 << 4;
        QTest::newRow("61 over 16, 1 first, 4 last") << 61 << 16 << 1 << 1 << 4;
        QTest::newRow("60 over 8x3, 3 first, 3 last") << 60 << 8 << 3 << 3 << 3;
    }
    void unevenInterleavedMatchesMegatronsOffsets()
    {
        QFETCH(int, layers);
        QFETCH(int, pp);
        QFETCH(int, vp);
        QFETCH(int, first);
        QFETCH(int, last);
        Parallel pa = pipeline(pp, vp);
        pa.first_stage_layers = first;
        pa.last_stage_layers = last;
        QVERIFY2(!stageLayoutError(pa, layers, 0), stageLayoutError(pa, layers, 0) ? stageLayoutError(pa, layers, 0)->what() : "");
        const StageLayout l = stageLayout(pa, layers);
        int sum = 0;
        for (int s = 0; s < pp; ++s)
            for (int c = 0; c < vp; ++c) {
                QCOMPARE(l.offset(s, c), megatronUnevenOffset(layers, pp, vp, first, last, s, c));
                sum += l.chunk(s, c);
            }
        QCOMPARE(sum, layers);
        if (first > 0)
            QCOMPARE(l.stage(0), first);
        if (last > 0)
            QCOMPARE(l.stage(pp - 1), last);
    }

    void accountForEmbeddingAndLoss_data()
    {
        QTest::addColumn<int>("layers");
        QTest::addColumn<int>("pp");
        QTest::addColumn<int>("vp");
        QTest::addColumn<bool>("embedding");
        QTest::addColumn<bool>("loss");
        QTest::newRow("30 over 4, both") << 30 << 4 << 1 << true << true;
        QTest::newRow("30 over 4x2, both") << 30 << 4 << 2 << true << true;
        QTest::newRow("31 over 4, embedding") << 31 << 4 << 1 << true << false;
        QTest::newRow("31 over 8x2, loss") << 31 << 8 << 2 << false << true;
        QTest::newRow("61 over 2, loss") << 61 << 2 << 1 << false << true;
        QTest::newRow("2 over 4: stages of the embedding, the loss alone") << 2 << 4 << 1 << true << true;
    }
    void accountForEmbeddingAndLoss()
    {
        QFETCH(int, layers);
        QFETCH(int, pp);
        QFETCH(int, vp);
        QFETCH(bool, embedding);
        QFETCH(bool, loss);
        Parallel pa = pipeline(pp, vp);
        pa.account_for_embedding = embedding;
        pa.account_for_loss = loss;
        QVERIFY(!stageLayoutError(pa, layers, 0));
        const StageLayout l = stageLayout(pa, layers);
        const int per = (layers + embedding + loss) / pp / vp;
        int sum = 0;
        for (int s = 0; s < pp; ++s)
            for (int c = 0; c < vp; ++c) {
                QCOMPARE(l.offset(s, c), megatronAccountOffset(layers, pp, vp, embedding, loss, s, c));
                const bool fewer = (embedding && s == 0 && c == 0) || (loss && s == pp - 1 && c == vp - 1);
                QCOMPARE(l.chunk(s, c), per - (fewer ? 1 : 0));
                sum += l.chunk(s, c);
            }
        QCOMPARE(sum, layers);
        QCOMPARE(l.even(), false);
    }

    // MindSpeed-LLM's --num-layer-list: the stages' layers in order.
    void listedStages()
    {
        Parallel pa = pipeline(4);
        pa.stage_layers = {7, 8, 8, 8};
        QVERIFY(!stageLayoutError(pa, 31, 0));
        QCOMPARE(stageLayers(pa, 31), pa.stage_layers);
        QCOMPARE(stageOfLayer(pa, 31, 6), 0);
        QCOMPARE(stageOfLayer(pa, 31, 7), 1);
        QCOMPARE(stageOfLayer(pa, 31, 23), 3);
        QCOMPARE(stageLayoutError(pa, 32, 0)->field(), std::string("parallel.stage_layers"));
        // An invalid layout still places every layer once.
        const std::vector<int> counts = stageLayers(pa, 20);
        QCOMPARE(std::accumulate(counts.begin(), counts.end(), 0), 20);
        QCOMPARE(int(layerStages(pa, 40).size()), 40);
    }

    // Megatron-Core's --pipeline-model-parallel-layout, unrolled as parse_str_to_list does,
    // and its documented DeepSeek-V3 example (pp 16 x 2) placed chunk by chunk.
    void pipelineLayoutString()
    {
        const std::vector<std::string> u = unrollPipelineLayout("Et*3|(tt|)*29,m|L");
        QCOMPARE(int(u.size()), 32);
        QCOMPARE(u[0], std::string("Ettt"));
        QCOMPARE(u[29], std::string("tt"));
        QCOMPARE(u[30], std::string("m"));
        QCOMPARE(u[31], std::string("L"));
        QCOMPARE(unrollPipelineLayout("E||t|L"), (std::vector<std::string>{"E", "", "t", "L"}));
        QCOMPARE(unrollPipelineLayout("(|t)*2,tL"), (std::vector<std::string>{"", "t", "ttL"}));
        for (const char *bad : {"Ex|L", "(tt|*2", "t**2", "(t)*", "t*0"}) {
            bool threw = false;
            try {
                unrollPipelineLayout(bad);
            } catch (const PlanError &e) {
                threw = e.field() == "parallel.pipeline_layout";
            }
            QVERIFY2(threw, bad);
        }
        Parallel pa = pipeline(16, 2);
        // The documented example puts the MTP module on stage 14: a standalone MTP stage, which
        // the model does not place; refused naming the field.
        pa.pipeline_layout = "Et*3|(tt|)*29,m|L";
        const std::optional<PlanError> standalone = stageLayoutError(pa, 61, 1);
        QVERIFY(standalone);
        QCOMPARE(standalone->field(), std::string("parallel.pipeline_layout"));
        QVERIFY(QString::fromStdString(standalone->rule()).contains(QStringLiteral("MTP")));
        // The MTP module with the loss on the last stage.
        pa.pipeline_layout = "Et*3|(tt|)*29,|mL";
        QVERIFY(!stageLayoutError(pa, 61, 1));
        const StageLayout l = stageLayout(pa, 61);
        QCOMPARE(l.chunk(0, 0), 3);
        QCOMPARE(l.chunk(1, 0), 2);
        QCOMPARE(l.chunk(0, 1), 2);
        QCOMPARE(l.chunk(14, 1), 0);
        QCOMPARE(l.chunk(15, 1), 0);
        QCOMPARE(l.offset(0, 1), 3 + 15 * 2);
        const std::vector<int> counts = stageLayers(pa, 61);
        QCOMPARE(counts.front(), 5);
        QCOMPARE(counts[1], 4);
        QCOMPARE(counts[14], 2);
        QCOMPARE(counts[15], 2);
        QCOMPARE(std::accumulate(counts.begin(), counts.end(), 0), 61);
        // Its rules: the decoder and MTP counts, E first, L last, the chunk count.
        QVERIFY(stageLayoutError(pa, 60, 1));
        QVERIFY(stageLayoutError(pa, 61, 0));
        pa.virtual_stages = 4;
        QVERIFY(QString::fromStdString(stageLayoutError(pa, 61, 1)->rule()).contains(QStringLiteral("chunk")));
        Parallel two = pipeline(2);
        two.pipeline_layout = "tE|tL";
        QVERIFY(QString::fromStdString(stageLayoutError(two, 2, 0)->rule()).contains(QStringLiteral("embedding")));
        two.pipeline_layout = "Et|Lt";
        QVERIFY(QString::fromStdString(stageLayoutError(two, 2, 0)->rule()).contains(QStringLiteral("loss")));
        two.pipeline_layout = "Et|tL";
        QVERIFY(!stageLayoutError(two, 2, 0));
        two.first_stage_layers = 1;
        QVERIFY(QString::fromStdString(stageLayoutError(two, 2, 0)->rule()).contains(QStringLiteral("cannot be set")));
    }

    void rulesNameTheirField_data()
    {
        QTest::addColumn<int>("layers");
        QTest::addColumn<int>("pp");
        QTest::addColumn<int>("vp");
        QTest::addColumn<int>("first");
        QTest::addColumn<int>("last");
        QTest::addColumn<int>("account"); // bit 0 embedding, bit 1 loss
        QTest::addColumn<QString>("field");
        QTest::newRow("even not dividing") << 61 << 16 << 1 << 0 << 0 << 0 << "parallel.pp";
        QTest::newRow("first with pp 1") << 61 << 1 << 1 << 1 << 0 << 0 << "parallel.first_stage_layers";
        QTest::newRow("rest not even") << 61 << 16 << 1 << 2 << 4 << 0 << "parallel.first_stage_layers";
        QTest::newRow("nothing left") << 8 << 3 << 1 << 4 << 4 << 0 << "parallel.first_stage_layers";
        QTest::newRow("layers left, no middle") << 9 << 2 << 1 << 4 << 4 << 0 << "parallel.first_stage_layers";
        QTest::newRow("last not by vp") << 24 << 4 << 2 << 0 << 3 << 0 << "parallel.last_stage_layers";
        QTest::newRow("middle not by vp") << 26 << 4 << 2 << 2 << 6 << 0 << "parallel.first_stage_layers";
        QTest::newRow("both kinds") << 30 << 4 << 1 << 2 << 0 << 1 << "parallel.account_for_embedding";
        QTest::newRow("counted not by pp") << 30 << 4 << 1 << 0 << 0 << 1 << "parallel.account_for_embedding";
        QTest::newRow("loss not by vp") << 29 << 2 << 4 << 0 << 0 << 2 << "parallel.account_for_loss";
        QTest::newRow("fine") << 26 << 4 << 2 << 2 << 8 << 0 << "";
    }
    void rulesNameTheirField()
    {
        QFETCH(int, layers);
        QFETCH(int, pp);
        QFETCH(int, vp);
        QFETCH(int, first);
        QFETCH(int, last);
        QFETCH(int, account);
        QFETCH(QString, field);
        Parallel pa = pipeline(pp, vp);
        pa.first_stage_layers = first;
        pa.last_stage_layers = last;
        pa.account_for_embedding = account & 1;
        pa.account_for_loss = account & 2;
        const std::optional<PlanError> e = stageLayoutError(pa, layers, 0);
        QCOMPARE(e ? QString::fromStdString(e->field()) : QString(), field);
    }

    void planFieldsRoundTrip()
    {
        const Plan p = plan({{"parallel", {{"dp", 2}, {"pp", 4}, {"stage_layers", {5, 9, 9, 9}}}}});
        QCOMPARE(p.parallel.stage_layers, (std::vector<int>{5, 9, 9, 9}));
        const Plan q = parsePlan(planToJson(p), Catalog::builtin());
        QCOMPARE(q.parallel.stage_layers, p.parallel.stage_layers);
        const Plan u = plan({{"parallel", {{"dp", 2}, {"pp", 4}, {"pp_schedule", "interleaved"}, {"virtual_stages", 2},
                                           {"first_stage_layers", 2}, {"last_stage_layers", 6}}},
                             {"training", {{"grad_accum", 4}}}});
        const json j = planToJson(u);
        QCOMPARE(j["parallel"]["first_stage_layers"].get<int>(), 2);
        QCOMPARE(j["parallel"]["last_stage_layers"].get<int>(), 6);
        QVERIFY(!j["parallel"].contains("stage_layers"));
        QVERIFY(!j["parallel"].contains("account_for_embedding"));
        const Plan a = plan({{"parallel", {{"dp", 2}, {"pp", 4}, {"account_for_embedding", true}, {"account_for_loss", true}}},
                             {"model", {{"layers", 30}}}});
        const Plan b = parsePlan(planToJson(a), Catalog::builtin());
        QVERIFY(b.parallel.account_for_embedding && b.parallel.account_for_loss);
        // An old plan writes none of the fields.
        const json old = planToJson(plan({{"parallel", {{"dp", 2}, {"pp", 4}}}}));
        for (const char *k : {"first_stage_layers", "last_stage_layers", "account_for_embedding", "account_for_loss", "stage_layers"})
            QVERIFY(!old["parallel"].contains(k));
    }

    // Memory per stage follows its layers: Llama-2-7B (32 layers, 202,383,360 parameters each,
    // bf16) over pp 4 as 5, 9, 9, 9: a middle stage holds 9 layers' parameters, the even
    // split's 8.
    void memoryFollowsTheStageLayers()
    {
        const Catalog &cat = Catalog::builtin();
        const MemoryEstimate even = estimateMemory(plan({{"parallel", {{"dp", 2}, {"pp", 4}}}}), cat);
        const MemoryEstimate uneven =
            estimateMemory(plan({{"parallel", {{"dp", 2}, {"pp", 4}, {"stage_layers", {5, 9, 9, 9}}}}}), cat);
        const double layer = 202383360.0 * 2; // bytes of one layer's bf16 parameters
        const Phase o = Phase::OptimizerStep;
        QCOMPARE(uneven.ranks[1].layers, 9);
        QCOMPARE(uneven.ranks[0].layers, 5);
        QCOMPARE(component(even.ranks[1], o, Component::Parameters), 8 * layer);
        QCOMPARE(component(uneven.ranks[1], o, Component::Parameters), 9 * layer);
        QCOMPARE(component(uneven.ranks[2], o, Component::Parameters), 9 * layer);
        // The first stage: 5 layers and the embedding (32000 x 4096).
        QCOMPARE(component(uneven.ranks[0], o, Component::Parameters), 5 * layer + 32000.0 * 4096 * 2);
        // Saved activations scale with the stage's layers (the in-flight count is the stage's).
        const double aEven = component(even.ranks[1], Phase::Forward, Component::Activations);
        const double aUneven = component(uneven.ranks[1], Phase::Forward, Component::Activations);
        QVERIFY(qFuzzyCompare(aUneven / aEven, 9.0 / 8.0));
    }

    // tests/golden/pp4-interleaved-7b.plan.json, stage 1 (ranks 2-3) by hand: Llama-2-7B,
    // pp 4 x 2 virtual stages, 4 layers per chunk; the stage holds chunks 1 and 5 (layers 4-7
    // and 20-23), 8 layers of 202,383,360 parameters (4 x 4096^2 attention, 3 x 4096 x 11008
    // FFN, 2 x 4096 norms) = 1,619,066,880, no embedding, no head.
    //  parameters bf16:                  1,619,066,880 x 2 B         = 3,238,133,760 B
    //  gradients (megatron's fp32 main_grad buffer) x 4 B            = 6,476,267,520 B
    //  master weights fp32, ZeRO-1 over dp 2: x 4 B / 2               = 3,238,133,760 B
    //  adamw states 2 x fp32 / 2:            x 8 B / 2               = 6,476,267,520 B
    //  activations, full recompute: each layer keeps its input, 4096 tokens x 4096 x 2 B =
    //  33,554,432 B; Megatron's interleaved warm-up on rank 1 is (pp - 1 - 1) x 2 + (v - 1) x pp
    //  = 8 chunks, plus the one in flight = 9 chunks of 4 layers: 36 x 33,554,432 = 1,207,959,552 B.
    void interleavedStageByHand()
    {
        const Catalog &cat = Catalog::builtin();
        const Plan p = parsePlanFile(testing::sourceDir().toStdString() + "/tests/golden/pp4-interleaved-7b.plan.json", cat);
        const MemoryEstimate m = estimateMemory(p, cat);
        const RankMemory &r = m.ranks[1];
        QCOMPARE(r.stage, 1);
        QCOMPARE(r.layers, 8);
        const StageLayout l = stageLayout(p.parallel, p.model.layers);
        QCOMPARE(l.offset(1, 0), 4);
        QCOMPARE(l.offset(1, 1), 20);
        const Phase o = Phase::OptimizerStep;
        QCOMPARE(component(r, o, Component::Parameters), 3238133760.0);
        QCOMPARE(component(r, o, Component::Gradients), 6476267520.0);
        QCOMPARE(component(r, o, Component::MasterWeights), 3238133760.0);
        QCOMPARE(component(r, o, Component::OptimizerStates), 6476267520.0);
        QCOMPARE(component(r, Phase::Backward, Component::Activations), 1207959552.0);
    }

    // The embedding counted as a layer: 31 layers + 1 over pp 4 x 2 chunks of 4, the first
    // chunk of stage 0 builds 3: stage 0 holds 7 layers' parameters and the embedding.
    void embeddingCountedTakesALayerFromStageZero()
    {
        const Catalog &cat = Catalog::builtin();
        const MemoryEstimate m = estimateMemory(
            plan({{"model", {{"layers", 31}}},
                  {"parallel", {{"dp", 2}, {"pp", 4}, {"pp_schedule", "interleaved"}, {"virtual_stages", 2},
                                {"account_for_embedding", true}}},
                  {"training", {{"grad_accum", 8}}}}),
            cat);
        const double layer = 202383360.0 * 2;
        const Phase o = Phase::OptimizerStep;
        QCOMPARE(m.ranks[0].layers, 7);
        QCOMPARE(m.ranks[1].layers, 8);
        QCOMPARE(component(m.ranks[0], o, Component::Parameters), 7 * layer + 32000.0 * 4096 * 2);
        QCOMPARE(component(m.ranks[1], o, Component::Parameters), 8 * layer);
    }

    // The slowest stage paces the pipeline: 9 layers instead of 8 add one layer's micro-batch
    // time (forward, backward, recompute) to the pace and (pp - 1) of them to the bubble.
    void slowestStagePacesThePipeline()
    {
        const Catalog &cat = Catalog::builtin();
        const Plan evenPlan = plan({{"parallel", {{"dp", 2}, {"pp", 4}}}});
        const Plan unevenPlan = plan({{"parallel", {{"dp", 2}, {"pp", 4}, {"stage_layers", {5, 9, 9, 9}}}}});
        const ComputeProfile cp = computeProfile(*cat.device(evenPlan.cluster.device),
                                                 *cat.framework(evenPlan.framework), evenPlan.precision.compute);
        const ComputeEstimate a = estimateCompute(evenPlan, cp);
        const ComputeEstimate b = estimateCompute(unevenPlan, cp);
        QCOMPARE(a.layers, 8);
        QCOMPARE(b.layers, 9);
        const double layerMb = a.layer_forward_s + a.layer_backward_s + a.layer_recompute_s;
        // Even: the last stage (8 layers and the head) is the slowest; uneven: stage 3 with 9
        // layers and the head.
        QVERIFY(qFuzzyCompare(b.microbatch_s - a.microbatch_s, layerMb));
        const Estimate ea = estimate(evenPlan, cat), eb = estimate(unevenPlan, cat);
        QVERIFY(qFuzzyCompare(eb.step.bubble_s - ea.step.bubble_s, 3.0 * layerMb));
        // A middle stage may pace: 6 + 10 + 8 + 8 at stage 1's 10 layers (the head is less
        // than two of Llama-2-7B's layers).
        const Plan middle = plan({{"parallel", {{"dp", 2}, {"pp", 4}, {"stage_layers", {6, 10, 8, 8}}}}});
        const ComputeEstimate c = estimateCompute(middle, cp);
        QCOMPARE(c.layers, 10);
        QVERIFY(qFuzzyCompare(c.microbatch_s, 10 * layerMb));
    }

    // rankShape, kept per thread, is what its parts give from scratch for every model and layout
    // asked for in turn (more combinations than the keep holds, each asked for twice), each
    // stage's mix of layer kinds counted from layerStages; an entry the keep drops stays whole
    // while it is held.
    void rankShapeIsKeptPerLayout()
    {
        const Catalog &cat = Catalog::builtin();
        std::vector<ModelShape> models = {*cat.model("deepseek-v3"), *cat.model("llama2-7b"),
                                          *cat.model("mixtral-8x7b")};
        ModelShape padded = models[0];
        padded.vocab += 128; // a padded vocabulary: another model to the keep
        models.push_back(padded);
        std::vector<Parallel> layouts;
        for (auto [tp, ep, etp] : {std::tuple{1, 1, 0}, std::tuple{4, 8, 0}, std::tuple{4, 8, 1}}) {
            for (auto [pp, v] : {std::pair{1, 1}, std::pair{4, 1}, std::pair{4, 2}}) {
                Parallel pa = pipeline(pp, v);
                pa.tp = tp;
                pa.ep = ep;
                pa.etp = etp;
                layouts.push_back(pa);
            }
        }
        Parallel uneven = pipeline(4);
        uneven.first_stage_layers = 3;
        uneven.last_stage_layers = 2;
        layouts.push_back(uneven);
        Parallel accounted = pipeline(4);
        accounted.account_for_embedding = accounted.account_for_loss = true;
        layouts.push_back(accounted);
        Parallel listed = pipeline(2);
        listed.stage_layers = {10, 22};
        layouts.push_back(listed);

        auto check = [&](const RankShape &got, const ModelShape &m, const Parallel &pa) {
            const std::string what = (m.preset + " tp " + std::to_string(pa.tp) + " ep " + std::to_string(pa.ep) +
                                      " etp " + std::to_string(pa.etp) + " pp " + std::to_string(pa.pp) + " v " +
                                      std::to_string(pa.virtual_stages));
            QVERIFY2(got.counts.total == countParameters(m).total, what.c_str());
            QVERIFY2(got.counts.embedding == countParameters(m).embedding, what.c_str());
            const StageLayout l = stageLayout(pa, int(m.layers));
            QVERIFY2(got.layout.pp == l.pp && got.layout.chunks == l.chunks && got.layout.counts == l.counts,
                     what.c_str());
            QVERIFY2(got.dense.total() == layerSpec(m, LayerKind::Dense).total(), what.c_str());
            const RankLayer dr = rankLayer(m, LayerKind::Dense, pa.tp, pa.ep, pa.expertTp());
            QVERIFY2(got.denseRank.total() == dr.total() && got.denseRank.matmul == dr.matmul, what.c_str());
            if (m.moe.enabled()) {
                QVERIFY2(got.moe.total() == layerSpec(m, LayerKind::Moe).total(), what.c_str());
                const RankLayer mr = rankLayer(m, LayerKind::Moe, pa.tp, pa.ep, pa.expertTp());
                QVERIFY2(got.moeRank.experts == mr.experts && got.moeRank.total() == mr.total(), what.c_str());
            }
            std::vector<LayerMix> mixes(size_t(l.pp));
            const std::vector<int> stages = layerStages(pa, int(m.layers));
            for (int layer = 0; layer < m.layers; ++layer)
                (m.moeLayer(layer) ? mixes[size_t(stages[size_t(layer)])].moe
                                   : mixes[size_t(stages[size_t(layer)])].dense) += 1;
            QVERIFY2(got.mixes.size() == mixes.size(), what.c_str());
            for (size_t s = 0; s < mixes.size(); ++s)
                QVERIFY2(got.mixes[s].dense == mixes[s].dense && got.mixes[s].moe == mixes[s].moe, what.c_str());
        };
        const std::shared_ptr<const RankShape> held = rankShape(models[0], layouts[1]);
        for (int round = 0; round < 2; ++round) {
            for (const ModelShape &m : models) {
                for (const Parallel &pa : layouts) {
                    const std::shared_ptr<const RankShape> got = rankShape(m, pa);
                    check(*got, m, pa);
                    if (QTest::currentTestFailed())
                        return;
                    QCOMPARE(rankShape(m, pa).get(), got.get()); // the same kept entry
                }
            }
        }
        check(*held, models[0], layouts[1]);
        QVERIFY(rankShape(models[0], layouts[1]).get() != held.get()); // dropped, then built again

        // A RankShapeCache (one model, the vocabulary padded by tp) gives what rankShape gives,
        // and keeps its entries by layout and vocabulary alone; another model asked after a
        // miss drops them.
        RankShapeCache cache;
        for (int round = 0; round < 2; ++round) {
            for (const Parallel &pa : layouts) {
                for (const ModelShape &m : {models[0], padded}) { // the two vocabularies in turn
                    const std::shared_ptr<const RankShape> got = cache.of(m, pa);
                    check(*got, m, pa);
                    if (QTest::currentTestFailed())
                        return;
                    QCOMPARE(cache.of(m, pa).get(), got.get());
                }
            }
        }
        const std::shared_ptr<const RankShape> deepseek = cache.of(models[0], layouts[0]);
        check(*cache.of(models[1], layouts[1]), models[1], layouts[1]); // a miss: the model is compared
        QVERIFY(cache.of(models[0], layouts[0]).get() != deepseek.get());
        check(*cache.of(models[0], layouts[0]), models[0], layouts[0]);
    }

    // What the search asks of a layer layout millions of times (stageLayoutValid,
    // largestChunkLayers), kept per thread for custom layouts, is what stageLayoutError and
    // stageLayout say, over even, uneven, accounted, listed and string layouts asked in turn,
    // valid and not.
    void keptLayoutFactsAgree()
    {
        // Neighbours differ in one field each, and every layout is asked right after the one
        // before it: a field the keep left out of its key would hand one the other's facts.
        std::vector<Parallel> layouts;
        for (int pp : {1, 2, 3, 4, 8})
            for (int v : {1, 2, 3})
                layouts.push_back(pipeline(pp, v));
        for (auto [first, last] : {std::pair{3, 0}, std::pair{5, 0}, std::pair{0, 5}, std::pair{0, 3},
                                   std::pair{4, 4}, std::pair{6, 4}, std::pair{6, 2}}) {
            for (int pp : {2, 4})
                for (int v : {1, 2}) {
                    Parallel pa = pipeline(pp, v);
                    pa.first_stage_layers = first;
                    pa.last_stage_layers = last;
                    layouts.push_back(pa);
                }
        }
        for (int pp : {1, 2, 4}) {
            for (auto [embedding, loss] : {std::pair{true, false}, std::pair{false, true}, std::pair{true, true}}) {
                for (int v : {1, 2}) {
                    Parallel pa = pipeline(pp, v);
                    pa.account_for_embedding = embedding;
                    pa.account_for_loss = loss;
                    layouts.push_back(pa);
                }
            }
        }
        for (const std::vector<int> &listed : {std::vector<int>{10, 22}, std::vector<int>{16, 16}, std::vector<int>{16, 15},
                                               std::vector<int>{8, 8, 8}}) {
            Parallel pa = pipeline(int(listed.size()));
            pa.stage_layers = listed;
            layouts.push_back(pa);
        }
        for (const char *spelled : {"Et*15|t*16L", "Et*16|t*15L", "Et*15|t*15mL"}) {
            Parallel pa = pipeline(2);
            pa.pipeline_layout = spelled;
            layouts.push_back(pa);
        }
        int valid = 0, custom = 0;
        for (int round = 0; round < 2; ++round) {
            for (int layers : {31, 32, 61}) {
                for (int mtp : {0, 1}) {
                    for (const Parallel &pa : layouts) {
                        const bool expected = !stageLayoutError(pa, layers, mtp);
                        QCOMPARE(stageLayoutValid(pa, layers, mtp), expected);
                        QCOMPARE(largestChunkLayers(pa, layers, mtp), stageLayout(pa, layers).largestChunk());
                        valid += expected && round == 0 ? 1 : 0;
                        custom += expected && pa.customLayout() && round == 0 ? 1 : 0;
                    }
                }
            }
        }
        QVERIFY(valid > 40);  // both verdicts are met
        QVERIFY(custom > 20); // valid custom layouts, the kept ones
    }
};

QTEST_APPLESS_MAIN(TestStageLayout)
#include "tst_stagelayout.moc"
