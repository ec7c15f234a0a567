// The layout search: its quick validity check agrees with validatePlan, every result fits when
// estimated on its own, the ranking follows the reported step times, the Pareto front is not
// dominated, a layout known to fit is found, and a search can be cancelled.
#include "core/catalog.h"
#include "core/errors.h"
#include "core/estimate.h"
#include "core/memory.h"
#include "core/search.h"
#include "core/units.h"
#include "planvariants.h"

#include <QSet>
#include <QTest>
#include <atomic>
#include <cmath>
#include <nlohmann/json.hpp>

using namespace shardscope;
using nlohmann::json;

namespace {

json seedCase(const std::string &preset, int64_t seq, int nodes, const std::string &device)
{
    json j = testing::variantBase();
    j.merge_patch({{"name", "search test"},
                   {"model", {{"preset", preset}}},
                   {"training", {{"seq_len", seq}}},
                   {"parallel", {{"dp", 8 * nodes}}},
                   {"cluster", {{"device", device}, {"nodes", nodes}}}});
    return j;
}

bool acceptedByValidatePlan(Plan p, const Catalog &cat)
{
    try {
        validatePlan(p, cat);
        return true;
    } catch (const PlanError &) {
        return false;
    }
}

SearchRequest request(const json &j, int64_t globalBatch, int top)
{
    SearchRequest r;
    r.base = parsePlan(j, Catalog::builtin());
    r.global_batch = globalBatch;
    r.top = top;
    // The classic axes: the further ones multiply the layouts (everyAxisIsSearched,
    // pruningKeepsResults and threadsGiveTheSameOutcome turn them on), and the sanitizer stage
    // runs every search here.
    r.axes = 0;
    return r;
}

bool sameLayout(const Plan &a, const Plan &b)
{
    const Parallel &x = a.parallel, &y = b.parallel;
    return x.dp == y.dp && x.tp == y.tp && x.pp == y.pp && x.cp == y.cp && x.sp == y.sp &&
           x.sharding == y.sharding && x.virtual_stages == y.virtual_stages &&
           a.memory.recompute == b.memory.recompute &&
           a.training.micro_batch == b.training.micro_batch &&
           a.memory.offload.optimizer == b.memory.offload.optimizer &&
           a.memory.offload.params == b.memory.offload.params &&
           a.memory.offload.activations == b.memory.offload.activations;
}

} // namespace

class TestSearch : public QObject
{
    Q_OBJECT

private slots:
    // SHARDSCOPE_TEST_PART=walk runs the lazy walk's comparison alone, =long five more of the
    // longest, =short every other one (unset: all): ctest runs the thirds side by side, each well
    // inside its time limit under the sanitizers (there 530, 490 and 470 s on a 2-core machine;
    // the quickValidate comparison, the longest in a normal build, takes 31 s there).
    void init()
    {
        const QByteArray part = qgetenv("SHARDSCOPE_TEST_PART");
        if (part.isEmpty())
            return;
        static const QSet<QByteArray> walkOnes = {"lazyWalkKeepsResults"};
        static const QSet<QByteArray> longOnes = {"quickValidateAgreesWithValidatePlan", "constraintsAreHonoured",
                                                  "resultsFitAndRankByTime", "pruningKeepsResults",
                                                  "floorIsBelowEstimate"};
        const QByteArray f = QTest::currentTestFunction();
        const QByteArray mine = walkOnes.contains(f) ? "walk" : longOnes.contains(f) ? "long" : "short";
        if (mine != part)
            QSKIP("in another part of tst_search");
    }
    void quickValidateAgreesWithValidatePlan();
    void quickValidateAgreesOnLayerLayouts();
    void quickValidateAgreesOnHpzAndHccl();
    void quickValidateAgreesOnSwapAttention();
    void resultsFitAndRankByTime_data();
    void resultsFitAndRankByTime();
    void paretoFrontNotDominated();
    void knownLayoutFound();
    void distributedOptimizerOptionsFollowTheSharding();
    void pruningKeepsResults();
    void lazyWalkKeepsResults_data();
    void lazyWalkKeepsResults();
    void floorIsBelowEstimate();
    void threadsGiveTheSameOutcome();
    void everyAxisIsSearched();
    void constraintsAreHonoured_data();
    void constraintsAreHonoured();
    void maxDevicesCutsTheCluster();
    void largestFitIsTheEdge();
    void cancel();
};

void TestSearch::quickValidateAgreesWithValidatePlan()
{
    // Vary every field the search varies, including invalid values, and compare.
    // Mixtral (every layer MoE), and DeepSeek-V2-Lite (a dense first layer, shared experts)
    // under expert tensor parallelism as tp's or its own.
    const Catalog &cat = Catalog::builtin();
    int checked = 0, valid = 0;
    for (const char *preset : {"mixtral-8x7b", "deepseek-v2-lite"})
    for (int etp : {0, 1, 2, 8}) {
    if (std::string(preset) == "mixtral-8x7b" && etp != 0)
        continue;
    for (int algo = 0; algo < 3; ++algo) {
    if (algo > 0 && etp != 0)
        continue;
    Plan p = parsePlan(seedCase(preset, 4096, 2, "ascend-910b2"), cat);
    p.parallel.etp = etp;
    p.parallel.cp_algo = CpAlgo(algo);
    p.parallel.ulysses_degree = algo == 2 ? 2 : 0;
    for (int tp : {1, 2, 3, 4, 8})
        for (int pp : {1, 2, 3, 4})
            for (int cp : {1, 2, 4, 3})
                for (int ep : {1, 2, 4, 8, 16})
                    for (int v : {1, 2, 3})
                        for (int ga : {1, 2, 4})
                            for (int sp = 0; sp < 2; ++sp)
                                for (int offp = 0; offp < 2; ++offp)
                                    for (int sh = 0; sh < 4; ++sh) {
                                        p.parallel.tp = tp;
                                        p.parallel.pp = pp;
                                        p.parallel.cp = cp;
                                        p.parallel.ep = ep;
                                        p.parallel.dp = std::max(1, 16 / (tp * pp * cp));
                                        p.parallel.virtual_stages = v;
                                        p.parallel.pp_schedule =
                                            v > 1 ? PpSchedule::Interleaved : PpSchedule::OneFOneB;
                                        p.training.grad_accum = ga;
                                        p.parallel.sp = sp;
                                        p.memory.offload.params = offp;
                                        p.parallel.sharding = Sharding(sh);
                                        const bool accepted = acceptedByValidatePlan(p, cat);
                                        QCOMPARE(quickValidate(p, *cat.framework(p.framework)),
                                                 accepted);
                                        ++checked;
                                        valid += accepted;
                                    }
    }
    }
    qInfo("%d layouts compared, %d valid", checked, valid);
    QVERIFY(valid > 0 && valid < checked);
}

// The layer layout over the stages (core/layers.h): uneven first / last stages, the embedding
// and loss counted, listed stages, with and without virtual stages; valid and not.
void TestSearch::quickValidateAgreesOnLayerLayouts()
{
    const Catalog &cat = Catalog::builtin();
    int checked = 0, valid = 0;
    Plan p = parsePlan(seedCase("mixtral-8x7b", 4096, 2, "ascend-910b2"), cat); // 32 layers
    const std::vector<std::vector<int>> lists = {{}, {16, 16}, {15, 17}, {8, 8, 8, 8}, {5, 9, 9, 9}, {0, 16, 16, 0}, {11, 11, 10}};
    for (int pp : {1, 2, 3, 4})
        for (int v : {1, 2})
            for (int first : {0, 1, 2, 4, 6})
                for (int last : {0, 2, 3, 8})
                    for (int account = 0; account < 4; ++account)
                        for (const std::vector<int> &list : lists)
                            for (int layers : {32, 31, 30}) {
                                p.model.layers = layers;
                                p.parallel.pp = pp;
                                p.parallel.dp = std::max(1, 16 / pp);
                                p.parallel.virtual_stages = v;
                                p.parallel.pp_schedule = v > 1 ? PpSchedule::Interleaved : PpSchedule::OneFOneB;
                                p.training.grad_accum = 4;
                                p.parallel.first_stage_layers = first;
                                p.parallel.last_stage_layers = last;
                                p.parallel.account_for_embedding = account & 1;
                                p.parallel.account_for_loss = account & 2;
                                p.parallel.stage_layers = list;
                                bool accepted = true;
                                try {
                                    validatePlan(p, cat);
                                } catch (const PlanError &) {
                                    accepted = false;
                                }
                                QCOMPARE(quickValidate(p, *cat.framework(p.framework)), accepted);
                                ++checked;
                                valid += accepted;
                            }
    // Megatron's layout string, against pp and the virtual stages.
    p.model.layers = 32;
    p.parallel.first_stage_layers = p.parallel.last_stage_layers = 0;
    p.parallel.account_for_embedding = p.parallel.account_for_loss = false;
    p.parallel.stage_layers.clear();
    for (int pp : {1, 2, 4})
        for (int v : {1, 2})
            for (const char *layout : {"Et*16|t*16L", "Et*8|t*8|t*8|t*8L", "(t*4|)*7Et*4L", "E(t*4|)*7t*4L",
                                       "Et*8|t*8|t*8|t*7L", "Et*8|t*8|t*8|t*8mL", "Et*10|t*6|t*6|t*10L", "E|t*32|L"}) {
                p.parallel.pp = pp;
                p.parallel.dp = std::max(1, 16 / pp);
                p.parallel.virtual_stages = v;
                p.parallel.pp_schedule = v > 1 ? PpSchedule::Interleaved : PpSchedule::OneFOneB;
                p.parallel.pipeline_layout = layout;
                const bool accepted = acceptedByValidatePlan(p, cat);
                QCOMPARE(quickValidate(p, *cat.framework(p.framework)), accepted);
                ++checked;
                valid += accepted;
            }
    qInfo("%d layer layouts compared, %d valid", checked, valid);
    QVERIFY(valid > 0 && valid < checked);
}

// DeepSpeed ZeRO++ hpZ against the sharding, dp, resharding, HSDP and parameter offload; the
// MindSpeed HCCL ep factor against the adaptive switch.
void TestSearch::quickValidateAgreesOnHpzAndHccl()
{
    const Catalog &cat = Catalog::builtin();
    int checked = 0, valid = 0;
    Plan p = parsePlan(seedCase("llama2-7b", 4096, 2, "ascend-910b2"), cat);
    for (const char *fw : {"deepspeed", "megatron"})
        for (int hpz : {0, 1, 2, 3, 4, 8, 16})
            for (int dp : {1, 2, 4, 8, 16})
                for (int sh = 0; sh < 4; ++sh)
                    for (int reshard = 0; reshard < 2; ++reshard)
                        for (int dpShard : {0, 2})
                            for (int offp = 0; offp < 2; ++offp)
                                for (int factor = 0; factor < 2; ++factor)
                                    for (int adaptive = 0; adaptive < 2; ++adaptive) {
                                        p.framework = fw;
                                        p.parallel.zero_hpz_partition_size = hpz;
                                        p.parallel.dp = dp;
                                        p.parallel.tp = 16 / dp;
                                        p.parallel.pp = 1;
                                        p.parallel.sharding = Sharding(sh);
                                        p.parallel.reshard_after_forward = reshard;
                                        p.parallel.dp_shard = dpShard;
                                        p.memory.offload.params = offp;
                                        p.memory.hccl_ep_group_buffer_adaptive_factor = factor ? 1.5 : 0.0;
                                        p.memory.hccl_buffer_adaptive = adaptive && std::string(fw) == "megatron";
                                        bool accepted = true;
                                        try {
                                            validatePlan(p, cat);
                                        } catch (const PlanError &) {
                                            accepted = false;
                                        }
                                        QCOMPARE(quickValidate(p, *cat.framework(p.framework)),
                                                 accepted);
                                        ++checked;
                                        valid += accepted;
                                    }
    qInfo("%d hpZ / HCCL layouts compared, %d valid", checked, valid);
    QVERIFY(valid > 0 && valid < checked);
}

void TestSearch::quickValidateAgreesOnSwapAttention()
{
    const Catalog &cat = Catalog::builtin();
    int validSwap = 0, validMs = 0;
    Plan p = parsePlan(seedCase("llama2-7b", 4096, 1, "ascend-910b2"), cat);
    for (const char *fw : {"pytorch", "megatron"})
        for (int rc = 0; rc < 3; ++rc)
            for (int act = 0; act < 2; ++act)
                for (int swap = 0; swap < 2; ++swap)
                    for (int ms = 0; ms < 4; ++ms) {
                        p.framework = fw;
                        p.memory.recompute = Recompute(rc);
                        p.memory.offload.activations = act;
                        p.memory.swap_attention = swap;
                        p.memory.recompute_activation_function = ms & 1;
                        p.memory.recompute_norm = ms & 2;
                        const bool accepted = acceptedByValidatePlan(p, cat);
                        QCOMPARE(quickValidate(p, *cat.framework(p.framework)), accepted);
                        validSwap += accepted && swap && ms == 0;
                        validMs += accepted && ms != 0 && !swap && !act && std::string(fw) == "pytorch";
                    }
    QCOMPARE(validSwap, 2); // megatron, recompute none or selective, activations on the device
    QCOMPARE(validMs, 6);   // recompute none or selective, each of the three pairs
}

void TestSearch::resultsFitAndRankByTime_data()
{
    QTest::addColumn<QByteArray>("plan");
    QTest::addColumn<int>("globalBatch");
    QTest::addRow("llama2-7b 32K 8 x 910B2")
        << QByteArray(seedCase("llama2-7b", 32768, 1, "ascend-910b2").dump().c_str()) << 8;
    QTest::addRow("llama3-8b 8K 32 x H100")
        << QByteArray(seedCase("llama3-8b", 8192, 4, "h100-80g").dump().c_str()) << 64;
    QTest::addRow("mixtral 4K 16 x 910B2")
        << QByteArray(seedCase("mixtral-8x7b", 4096, 2, "ascend-910b2").dump().c_str()) << 32;
    // MindSpeed's swap-attention with 80 GiB of host memory per node: it holds the swapped
    // activations (56 GiB for this node's 8 ranks) but not those and the optimizer states too.
    json swap = seedCase("llama2-7b", 4096, 1, "ascend-910b2");
    swap["framework"] = "megatron";
    swap["memory"]["swap_attention"] = true;
    swap["memory"]["recompute"] = "selective";
    swap["cluster"]["host_memory_bytes"] = 80.0 * double(1ll << 30);
    QTest::addRow("llama2-7b 4K 8 x 910B2 swap-attention") << QByteArray(swap.dump().c_str()) << 8;
    // MindSpeed's activation-function recompute in the plan: kept where it adds something,
    // dropped under full recompute (a plan with both is refused).
    json act = seedCase("llama2-7b", 32768, 1, "ascend-910b2");
    act["framework"] = "megatron";
    act["memory"]["recompute"] = "selective";
    act["memory"]["recompute_activation_function"] = true;
    QTest::addRow("llama2-7b 32K 8 x 910B2 activation recompute") << QByteArray(act.dump().c_str()) << 8;
    // A vocabulary Megatron pads at every tp (32,001 to a multiple of 128 x tp): the search's
    // working plans carry the padded one, the results the plan's own.
    json padded = seedCase("llama2-7b", 8192, 1, "ascend-910b2");
    padded["framework"] = "megatron";
    padded["model"]["vocab"] = 32001;
    QTest::addRow("llama2-7b 8K 8 x 910B2 padded vocabulary") << QByteArray(padded.dump().c_str()) << 8;
}

void TestSearch::resultsFitAndRankByTime()
{
    QFETCH(QByteArray, plan);
    QFETCH(int, globalBatch);
    const Catalog &cat = Catalog::builtin();
    const SearchOutcome out =
        searchLayouts(request(json::parse(plan.toStdString()), globalBatch, 25), cat);
    qInfo("%llu evaluated, %llu fit, %.1f ms", (unsigned long long)out.evaluated,
          (unsigned long long)out.fitting, 1e3 * out.seconds);
    QVERIFY(!out.cancelled);
    QVERIFY(!out.ranked.empty());
    QVERIFY(out.fitting >= out.ranked.size());
    double previous = 0;
    for (const SearchResult &r : out.ranked) {
        // Each result, estimated on its own as a plan, fits and has the reported step time.
        validatePlan(r.plan, cat);
        const Estimate e = estimate(r.plan, cat);
        QVERIFY(e.memory.fits);
        QCOMPARE(e.step.step_s, r.step_s);
        QCOMPARE(e.memory.peak_bytes, r.peak_bytes);
        QVERIFY(r.required_bytes <= e.memory.hbm_bytes);
        QCOMPARE(int64_t(r.plan.parallel.dp) * r.plan.training.micro_batch *
                     r.plan.training.grad_accum,
                 int64_t(globalBatch));
        QVERIFY(r.step_s >= previous);
        previous = r.step_s;
    }
    for (const SearchResult &r : out.pareto) {
        validatePlan(r.plan, cat);
        const Estimate e = estimate(r.plan, cat);
        QVERIFY(e.memory.fits);
        QCOMPARE(e.step.step_s, r.step_s);
    }
}

void TestSearch::paretoFrontNotDominated()
{
    const Catalog &cat = Catalog::builtin();
    SearchRequest req = request(seedCase("llama2-7b", 32768, 1, "ascend-910b2"), 8, 100000);
    // Every fitting layout is replayed below: keep the space small, and count them all.
    req.allow_offload = false;
    req.max_virtual_stages = 1;
    req.count_all_fitting = true;
    const SearchOutcome out = searchLayouts(req, cat);
    QVERIFY(out.fitting_complete);
    QVERIFY(out.pareto.size() >= 2);
    // Along the front memory rises and time falls, strictly.
    for (size_t i = 1; i < out.pareto.size(); ++i) {
        QVERIFY(out.pareto[i].required_bytes >= out.pareto[i - 1].required_bytes);
        QVERIFY(out.pareto[i].step_s < out.pareto[i - 1].step_s);
    }
    // No fitting layout (all are in `ranked` with this top) dominates a front member. Within the
    // bound some run out of memory once the allocator is replayed: the rest are ranked.
    QCOMPARE(out.replayed, out.fitting);
    QCOMPARE(uint64_t(out.ranked.size()), out.fitting - out.rejected_by_allocator);
    for (const SearchResult &r : out.ranked)
        QVERIFY(estimate(r.plan, cat).memory.fits);
    for (const SearchResult &f : out.pareto) {
        for (const SearchResult &r : out.ranked) {
            const bool dominates = r.required_bytes < f.required_bytes && r.step_s < f.step_s;
            QVERIFY(!dominates);
        }
    }
    // The fastest layout overall is on the front.
    QVERIFY(out.ranked.front().pareto);
}

void TestSearch::distributedOptimizerOptionsFollowTheSharding()
{
    // A Megatron plan with the distributed optimizer's param gather and MindSpeed's buffer pad:
    // layouts without that sharding drop them, so every result is a valid plan.
    const Catalog &cat = Catalog::builtin();
    json j = seedCase("llama2-7b", 4096, 1, "ascend-910b2");
    j.merge_patch({{"framework", "megatron"},
                   {"parallel", {{"sharding", "optimizer"}}},
                   {"memory", {{"overlap_grad_reduce", true}, {"overlap_param_gather", true},
                               {"param_and_grad_buffer_pad", 512}}}});
    SearchRequest req = request(j, 64, 100000);
    req.allow_offload = false;
    req.max_virtual_stages = 1;
    const SearchOutcome out = searchLayouts(req, cat);
    bool sawOther = false, sawOptimizer = false;
    for (const SearchResult &r : out.ranked) {
        const bool optimizer = r.plan.parallel.sharding == Sharding::Optimizer;
        sawOptimizer = sawOptimizer || optimizer;
        sawOther = sawOther || !optimizer;
        QCOMPARE(r.plan.memory.param_and_grad_buffer_pad, optimizer ? 512 : 0);
        validatePlan(r.plan, cat); // throws on a plan that cannot be saved
    }
    QVERIFY(sawOptimizer && sawOther);
}

void TestSearch::knownLayoutFound()
{
    // The seed case's deployed layout: Llama-2-7B at 32K on 8 x 910B2 under full sharding with
    // full recompute (resources/cases/hcie-ai-fsdp.plan.json) fits; DDP does not.
    const Catalog &cat = Catalog::builtin();
    SearchRequest req = request(seedCase("llama2-7b", 32768, 1, "ascend-910b2"), 8, 100000);
    req.allow_offload = false; // every fitting layout is replayed: keep the space small
    req.max_virtual_stages = 1;
    const SearchOutcome out = searchLayouts(req, cat);
    Plan fsdp = parsePlan(seedCase("llama2-7b", 32768, 1, "ascend-910b2"), cat);
    fsdp.parallel.sharding = Sharding::Full;
    Plan ddp = fsdp;
    ddp.parallel.sharding = Sharding::None;
    bool foundFsdp = false, foundDdp = false;
    for (const SearchResult &r : out.ranked) {
        foundFsdp = foundFsdp || sameLayout(r.plan, fsdp);
        foundDdp = foundDdp || sameLayout(r.plan, ddp);
    }
    QVERIFY(foundFsdp);
    QVERIFY(!foundDdp);
    QVERIFY(estimate(fsdp, cat).memory.fits);
    QVERIFY(!estimate(ddp, cat).memory.fits);
}

void TestSearch::pruningKeepsResults()
{
    // Skipping layouts whose model states exceed HBM must not change what is found.
    const Catalog &cat = Catalog::builtin();
    SearchRequest req = request(seedCase("llama2-70b", 4096, 2, "ascend-910b2"), 16, 200);
    req.axes = kSearchAllAxes;
    req.count_all_fitting = true;
    const SearchOutcome pruned = searchLayouts(req, cat);
    req.prune = false;
    const SearchOutcome full = searchLayouts(req, cat);
    QVERIFY(pruned.fitting_complete && full.fitting_complete);
    QCOMPARE(pruned.evaluated, full.evaluated);
    QCOMPARE(pruned.fitting, full.fitting);
    QVERIFY(pruned.fitting > 0);
    QCOMPARE(pruned.ranked.size(), full.ranked.size());
    for (size_t i = 0; i < pruned.ranked.size(); ++i) {
        QVERIFY(sameLayout(pruned.ranked[i].plan, full.ranked[i].plan));
        QCOMPARE(pruned.ranked[i].step_s, full.ranked[i].step_s);
    }
    QCOMPARE(pruned.pareto.size(), full.pareto.size());
    for (size_t i = 0; i < pruned.pareto.size(); ++i)
        QVERIFY(sameLayout(pruned.pareto[i].plan, full.pareto[i].plan));
    // The bounds do skip estimates.
    QVERIFY(pruned.estimated < full.estimated);
}

void TestSearch::lazyWalkKeepsResults_data()
{
    QTest::addColumn<QByteArray>("plan");
    QTest::addColumn<int>("globalBatch");
    QTest::addColumn<int>("top");
    QTest::addColumn<double>("headroomGib");
    QTest::addColumn<uint>("axes");
    auto add = [](const char *name, const json &j, int batch, int top, double headroom, uint32_t axes) {
        QTest::addRow("%s", name) << QByteArray(j.dump().c_str()) << batch << top << headroom << uint(axes);
    };
    add("llama2-70b 4K 16 x 910B2, every axis", seedCase("llama2-70b", 4096, 2, "ascend-910b2"), 16, 20, 0.0,
        kSearchAllAxes);
    add("the same, top 1", seedCase("llama2-70b", 4096, 2, "ascend-910b2"), 16, 1, 0.0, kSearchAllAxes);
    add("the same, top 0", seedCase("llama2-70b", 4096, 2, "ascend-910b2"), 16, 0, 0.0, kSearchAllAxes);
    add("llama2-7b 32K 8 x 910B2, 16 GiB free", seedCase("llama2-7b", 32768, 1, "ascend-910b2"), 8, 25, 16.0, 0);
    add("llama3-8b 8K 32 x H100", seedCase("llama3-8b", 8192, 4, "h100-80g"), 64, 25, 0.0, 0);
    json mixtral = seedCase("mixtral-8x7b", 4096, 2, "ascend-910b2");
    mixtral["framework"] = "megatron";
    add("mixtral 4K 16 x 910B2 megatron, every axis", mixtral, 32, 20, 0.0, kSearchAllAxes);
    json swap = seedCase("llama2-7b", 4096, 1, "ascend-910b2");
    swap["framework"] = "megatron";
    swap["cluster"]["host_memory_bytes"] = 80.0 * double(1ll << 30);
    add("llama2-7b 4K 8 x 910B2 megatron, swap and host limit", swap, 8, 40, 0.0, kSearchAllAxes);
}

void TestSearch::lazyWalkKeepsResults()
{
    // The walk by step time estimates only the layouts that can reach the ranking or the front:
    // it must return exactly what estimating every layout returns.
    QFETCH(QByteArray, plan);
    QFETCH(int, globalBatch);
    QFETCH(int, top);
    QFETCH(double, headroomGib);
    QFETCH(uint, axes);
    const Catalog &cat = Catalog::builtin();
    SearchRequest req = request(json::parse(plan.toStdString()), globalBatch, top);
    req.axes = axes;
    req.min_headroom_bytes = headroomGib * double(1ll << 30);
    const SearchOutcome lazy = searchLayouts(req, cat);
    req.count_all_fitting = true;
    const SearchOutcome all = searchLayouts(req, cat);
    QVERIFY(!lazy.fitting_complete);
    QVERIFY(all.fitting_complete);
    QCOMPARE(lazy.evaluated, all.evaluated);
    QVERIFY(lazy.fitting <= all.fitting);
    QCOMPARE(lazy.replayed, all.replayed);
    QCOMPARE(lazy.rejected_by_allocator, all.rejected_by_allocator);
    QCOMPARE(lazy.ranked.size(), all.ranked.size());
    for (size_t i = 0; i < all.ranked.size(); ++i) {
        QVERIFY2(sameLayout(lazy.ranked[i].plan, all.ranked[i].plan), qPrintable(QString::number(i)));
        QCOMPARE(lazy.ranked[i].step_s, all.ranked[i].step_s);
        QCOMPARE(lazy.ranked[i].required_bytes, all.ranked[i].required_bytes);
        QCOMPARE(lazy.ranked[i].peak_bytes, all.ranked[i].peak_bytes);
        QCOMPARE(lazy.ranked[i].pareto, all.ranked[i].pareto);
    }
    QCOMPARE(lazy.pareto.size(), all.pareto.size());
    QVERIFY(!all.pareto.empty());
    for (size_t i = 0; i < all.pareto.size(); ++i) {
        QVERIFY2(sameLayout(lazy.pareto[i].plan, all.pareto[i].plan), qPrintable(QString::number(i)));
        QCOMPARE(lazy.pareto[i].step_s, all.pareto[i].step_s);
        QCOMPARE(lazy.pareto[i].required_bytes, all.pareto[i].required_bytes);
    }
    // It does estimate fewer.
    QVERIFY(lazy.estimated < all.estimated);
}

void TestSearch::floorIsBelowEstimate()
{
    // The search skips a layout whose memory floor exceeds HBM: the floor must never exceed the
    // estimate's largest peak plus reserve, on every plan kind (and on layouts the search
    // returns, which vary every axis).
    const Catalog &cat = Catalog::builtin();
    std::vector<Plan> plans;
    for (const testing::PlanVariant &v : testing::planVariants())
        plans.push_back(testing::variantPlan(v));
    SearchRequest req = request(seedCase("llama2-13b", 16384, 2, "ascend-910b2"), 32, 400);
    req.axes = kSearchAllAxes;
    for (const SearchResult &r : searchLayouts(req, cat).ranked)
        plans.push_back(r.plan);
    // One stage that holds the head, under Megatron with MTP and swap-attention (at the head the
    // last layer's swapped part is on the host), and with activations offloaded.
    for (const char *preset : {"deepseek-v2-lite", "llama2-7b"}) {
        for (int variant = 0; variant < 3; ++variant) {
            json j = seedCase(preset, 4096, 1, "ascend-910b2");
            j["framework"] = "megatron";
            j["parallel"]["sharding"] = "grads";
            j["memory"]["recompute"] = variant == 2 ? "selective" : "none";
            j["memory"]["swap_attention"] = variant != 1;
            j["memory"]["offload"]["activations"] = variant == 1;
            plans.push_back(parsePlan(j, cat));
        }
    }
    // Activations offloaded on a pipeline: each micro-batch's (model chunk's) last layer stays on
    // the device until its backward, under 1F1B, interleaving and GPipe, with fewer and more
    // micro-batches than stages, dense and MoE, and with a stage of uneven layers; at 32K tokens
    // under full sharding, where the activations are most of the memory.
    std::vector<Plan> offloaded;
    for (const char *preset : {"llama2-7b", "mixtral-8x7b"}) {
        for (const std::string schedule : {"1f1b", "interleaved", "gpipe"}) {
            for (const int pp : {2, 4}) {
                for (const int accum : {schedule == "interleaved" ? 4 : 2, 8}) {
                    json j = seedCase(preset, 32768, 1, "ascend-910b2");
                    j["framework"] = "megatron";
                    j["parallel"]["dp"] = 8 / pp;
                    j["parallel"]["pp"] = pp;
                    j["parallel"]["pp_schedule"] = schedule;
                    j["parallel"]["sharding"] = "full";
                    if (schedule == "interleaved")
                        j["parallel"]["virtual_stages"] = 2;
                    if (schedule == "1f1b" && pp == 2 && accum == 8)
                        j["parallel"]["first_stage_layers"] = 15;
                    j["training"]["grad_accum"] = accum;
                    j["memory"]["recompute"] = accum == 8 ? "selective" : "none";
                    j["memory"]["offload"]["activations"] = true;
                    offloaded.push_back(parsePlan(j, cat));
                }
            }
        }
    }
    int offloadedTight = 0;
    for (const Plan &p : offloaded) {
        const MemoryEstimate m = estimateMemory(p, cat);
        offloadedTight += memoryFloorBytes(p, cat) > 0.7 * worstRankBytes(m) ? 1 : 0;
        plans.push_back(p);
    }
    // Within 30% of the estimate for most of them (18 of 24 here; 5 with one layer counted).
    QVERIFY2(offloadedTight > int(offloaded.size()) / 2, qPrintable(QString::number(offloadedTight)));
    QVERIFY(plans.size() > 300);
    int bounded = 0;
    std::vector<double> ratios;
    for (const Plan &p : plans) {
        const MemoryEstimate m = estimateMemory(p, cat);
        double required = 0;
        for (const RankMemory &r : m.ranks)
            required = std::max(required, r.peak_bytes + r.reserve.total());
        const double floor = memoryFloorBytes(p, cat);
        QVERIFY2(floor <= required * (1 + 1e-12),
                 qPrintable(QStringLiteral("%1: floor %2 above %3")
                                .arg(QString::fromStdString(p.name))
                                .arg(floor, 0, 'f', 0)
                                .arg(required, 0, 'f', 0)));
        // Not a vacuous bound: within half of the estimate where activations matter.
        if (floor > 0.5 * required)
            ++bounded;
        ratios.push_back(floor / required);
    }
    QVERIFY(bounded > int(plans.size()) / 2);
    // And tight: with the first backward's layer counted, 9 in 10 plans' floors are within 30%
    // of the estimate (432 of 461 here; 390 without that term).
    const long tight = std::count_if(ratios.begin(), ratios.end(), [](double r) { return r > 0.7; });
    QVERIFY2(tight > long(ratios.size()) * 9 / 10, qPrintable(QStringLiteral("%1 of %2").arg(tight).arg(ratios.size())));
}

void TestSearch::everyAxisIsSearched()
{
    // DeepSeek-V2-Lite (27 layers, 64 experts) on two nodes under Megatron: each axis adds
    // layouts of its own, and what the search returns is a valid plan that fits on its own.
    const Catalog &cat = Catalog::builtin();
    json j = seedCase("deepseek-v2-lite", 8192, 2, "ascend-910b2");
    j["framework"] = "megatron";
    SearchRequest req = request(j, 32, 40);
    req.max_micro_batch = 2;
    req.allow_offload = false;
    req.axes = 0;
    const SearchOutcome none = searchLayouts(req, cat);
    QVERIFY(none.evaluated > 0);
    for (const uint32_t axis : {kSearchExpertTp, kSearchCpAlgo, kSearchDpShard, kSearchRecomputeBlock,
                                kSearchUnevenStages, kSearchSwapAttention, kSearchMindSpeedRecompute}) {
        req.axes = axis;
        const SearchOutcome one = searchLayouts(req, cat);
        QVERIFY2(one.evaluated > none.evaluated, qPrintable(QString::number(axis)));
    }
    req.axes = kSearchAllAxes;
    req.top = 400;
    const SearchOutcome all = searchLayouts(req, cat);
    bool uneven = false, etp1 = false, block = false, swap = false, msRecompute = false;
    for (const SearchResult &r : all.ranked) {
        Plan p = r.plan;
        validatePlan(p, cat); // throws on an invalid layout
        QVERIFY(estimateMemory(p, cat).fits);
        uneven = uneven || p.parallel.first_stage_layers > 0;
        etp1 = etp1 || p.parallel.etp == 1;
        block = block || p.memory.recompute_method == RecomputeMethod::Block;
        swap = swap || p.memory.swap_attention;
        msRecompute = msRecompute || (p.memory.recompute_activation_function && p.memory.recompute_norm);
    }
    QVERIFY(uneven);
    QVERIFY(etp1);
    QVERIFY(block);
    QVERIFY(swap);
    QVERIFY(msRecompute);
}

void TestSearch::threadsGiveTheSameOutcome()
{
    const Catalog &cat = Catalog::builtin();
    SearchRequest req = request(seedCase("llama2-70b", 4096, 2, "ascend-910b2"), 16, 60);
    req.axes = kSearchAllAxes;
    req.threads = 1;
    const SearchOutcome one = searchLayouts(req, cat);
    for (int threads : {2, 3}) {
        req.threads = threads;
        const SearchOutcome many = searchLayouts(req, cat);
        QCOMPARE(many.evaluated, one.evaluated);
        QCOMPARE(many.estimated, one.estimated);
        QCOMPARE(many.fitting, one.fitting);
        QCOMPARE(many.replayed, one.replayed);
        QCOMPARE(many.rejected_by_allocator, one.rejected_by_allocator);
        QCOMPARE(many.ranked.size(), one.ranked.size());
        for (size_t i = 0; i < one.ranked.size(); ++i) {
            QVERIFY(sameLayout(many.ranked[i].plan, one.ranked[i].plan));
            QCOMPARE(many.ranked[i].required_bytes, one.ranked[i].required_bytes);
        }
        QCOMPARE(many.pareto.size(), one.pareto.size());
        for (size_t i = 0; i < one.pareto.size(); ++i)
            QVERIFY(sameLayout(many.pareto[i].plan, one.pareto[i].plan));
    }
}

void TestSearch::constraintsAreHonoured_data()
{
    QTest::addColumn<int>("tp");
    QTest::addColumn<int>("pp");
    QTest::addColumn<int>("cp");
    QTest::addColumn<int>("recompute"); // allowed_recompute mask
    QTest::addColumn<int>("offload");   // allowed_offload mask
    QTest::addColumn<double>("headroomGiB");
    QTest::addRow("tp 2") << 2 << 0 << 0 << 0b111 << 0b111 << 0.0;
    QTest::addRow("pp 2") << 0 << 2 << 0 << 0b111 << 0b111 << 0.0;
    QTest::addRow("cp 4") << 0 << 0 << 4 << 0b111 << 0b111 << 0.0;
    QTest::addRow("full recompute only") << 0 << 0 << 0 << 0b100 << 0b111 << 0.0;
    QTest::addRow("no recompute, optimizer offload only") << 0 << 0 << 0 << 0b001 << 0b001 << 0.0;
    QTest::addRow("8 GiB free") << 0 << 0 << 0 << 0b111 << 0b111 << 8.0;
}

void TestSearch::constraintsAreHonoured()
{
    QFETCH(int, tp);
    QFETCH(int, pp);
    QFETCH(int, cp);
    QFETCH(int, recompute);
    QFETCH(int, offload);
    QFETCH(double, headroomGiB);
    const Catalog &cat = Catalog::builtin();
    SearchRequest req = request(seedCase("llama2-7b", 32768, 1, "ascend-910b2"), 8, 100000);
    req.max_virtual_stages = 1;
    // The unconstrained search, once for every row: its top holds every layout that fits; each
    // constrained search ranks its best 50 (the allocator replays are what costs, ASan above all).
    static const SearchOutcome free = searchLayouts(req, cat);
    req.top = 50;
    req.fixed_tp = tp;
    req.fixed_pp = pp;
    req.fixed_cp = cp;
    req.allowed_recompute = uint8_t(recompute);
    req.allowed_offload = uint8_t(offload);
    req.min_headroom_bytes = headroomGiB * kGiB;
    const SearchOutcome out = searchLayouts(req, cat);
    QVERIFY(!out.ranked.empty());
    QVERIFY(out.ranked.size() < free.ranked.size());
    const double hbm = cat.device("ascend-910b2")->hbm_bytes;
    for (const SearchResult &r : out.ranked) {
        const Parallel &pa = r.plan.parallel;
        QVERIFY(tp == 0 || pa.tp == tp);
        QVERIFY(pp == 0 || pa.pp == pp);
        QVERIFY(cp == 0 || pa.cp == cp);
        QVERIFY(recompute & (1 << int(r.plan.memory.recompute)));
        const Offload &o = r.plan.memory.offload;
        if (o.activations)
            QVERIFY(offload & 0b100);
        else if (o.params)
            QVERIFY(offload & 0b010);
        else if (o.optimizer)
            QVERIFY(offload & 0b001);
        QVERIFY(r.required_bytes + req.min_headroom_bytes <= hbm);
        // Every constrained result is one the free search found too (its top holds them all).
        bool found = false;
        for (const SearchResult &f : free.ranked)
            found = found || (sameLayout(f.plan, r.plan) && f.step_s == r.step_s);
        QVERIFY(found);
    }
    for (const SearchResult &r : out.pareto)
        QVERIFY(tp == 0 || r.plan.parallel.tp == tp);
}

void TestSearch::maxDevicesCutsTheCluster()
{
    QCOMPARE(searchCluster(Cluster{"h100-80g", 8, 4}, 20).world(), 16);
    QCOMPARE(searchCluster(Cluster{"h100-80g", 8, 4}, 0).world(), 32);
    QCOMPARE(searchCluster(Cluster{"h100-80g", 8, 4}, 6).world(), 4);
    const Catalog &cat = Catalog::builtin();
    SearchRequest req = request(seedCase("llama3-8b", 8192, 4, "h100-80g"), 64, 10);
    req.max_devices = 16;
    const SearchOutcome out = searchLayouts(req, cat);
    QVERIFY(!out.ranked.empty());
    for (const SearchResult &r : out.ranked) {
        QCOMPARE(r.plan.cluster.nodes, 2);
        QCOMPARE(r.plan.cluster.world(), 16);
        validatePlan(r.plan, cat);
        QVERIFY(estimate(r.plan, cat).memory.fits);
    }
}

void TestSearch::largestFitIsTheEdge()
{
    // The seed case's FSDP layout: the largest sequence and micro-batch that fit, and one step
    // beyond does not.
    const Catalog &cat = Catalog::builtin();
    Plan p = parsePlan(seedCase("llama2-7b", 32768, 1, "ascend-910b2"), cat);
    p.parallel.sharding = Sharding::Full;
    p.memory.recompute = Recompute::Full;
    const LargestFit lf = largestFit(p, cat);
    QCOMPARE(lf.seq_step, int64_t(1));
    QVERIFY(lf.seq_len >= 32768);
    QVERIFY(lf.micro_batch >= 1);
    auto fits = [&](int64_t seq, int64_t mb) {
        Plan q = p;
        q.training.seq_len = seq;
        q.training.micro_batch = int(mb);
        MemoryEstimate me = estimateMemory(q, cat);
        if (!me.fits)
            return false;
        replayAllocator(q, cat, me, true);
        return me.fits;
    };
    QVERIFY(fits(lf.seq_len, p.training.micro_batch));
    QVERIFY(!fits(lf.seq_len + lf.seq_step, p.training.micro_batch));
    QVERIFY(fits(p.training.seq_len, lf.micro_batch));
    QVERIFY(!fits(p.training.seq_len, lf.micro_batch + 1));
    // Keeping 16 GiB free lowers both.
    const LargestFit tight = largestFit(p, cat, 16 * kGiB);
    QVERIFY(tight.seq_len < lf.seq_len);
    QVERIFY(tight.micro_batch <= lf.micro_batch);
    // Under cp 2 the sequence moves in steps of 2.
    p.parallel.cp = 2;
    p.parallel.dp = 4;
    QCOMPARE(largestFit(p, cat).seq_step, int64_t(2));
}

void TestSearch::cancel()
{
    const Catalog &cat = Catalog::builtin();
    const SearchRequest req = request(seedCase("llama3-8b", 8192, 4, "h100-80g"), 64, 10);
    const SearchOutcome full = searchLayouts(req, cat);
    std::atomic<bool> stop{false};
    uint64_t calls = 0, total = 0;
    const SearchOutcome cut = searchLayouts(
        req, cat,
        [&](uint64_t done, uint64_t all) {
            ++calls;
            total = all;
            if (done > 0)
                stop = true; // cancel at the first progress report after work started
        },
        &stop);
    QVERIFY(cut.cancelled);
    QVERIFY(!full.cancelled);
    QCOMPARE(total, full.evaluated);
    QVERIFY(cut.evaluated < full.evaluated);
    QVERIFY(calls >= 2);
    std::atomic<bool> already{true};
    const SearchOutcome none = searchLayouts(req, cat, {}, &already);
    QVERIFY(none.cancelled);
    QCOMPARE(none.evaluated, uint64_t(0));
    QVERIFY(none.ranked.empty());
}

QTEST_APPLESS_MAIN(TestSearch)
#include "tst_search.moc"
