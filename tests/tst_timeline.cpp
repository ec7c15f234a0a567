// The step's timeline (core/timeline.h): the recorder's live bytes against the per-rank
// breakdown, for every plan variant and every stage; the FSDP2 order of allocations; the first
// step; and the listing's independence from how many alike micro-batches it spells out.
#include "core/catalog.h"
#include "core/memory.h"
#include "core/search.h"
#include "core/stepview.h"
#include "core/timeline.h"
#include "planvariants.h"

#include <QTest>
#include <cmath>
#include <nlohmann/json.hpp>

using namespace shardscope;
using nlohmann::json;

namespace {

Plan variantPlan(const char *patch)
{
    json j = testing::variantBase();
    j.merge_patch(json::parse(patch));
    return parsePlan(j, Catalog::builtin());
}

/// Live bytes at each event, and each phase's peak within the steady step.
struct Replayed
{
    double startSteady = -1, endSteady = 0;
    std::array<double, kPhaseCount> phasePeak{};
};

Replayed liveBytes(const StepTimeline &t)
{
    Replayed r;
    r.phasePeak.fill(-1);
    double live = 0;
    size_t mark = 0;
    StepPart part = StepPart::Setup;
    Phase phase = Phase::Forward;
    for (size_t e = 0; e <= t.events.size(); ++e) {
        while (mark < t.marks.size() && size_t(t.marks[mark].event) <= e) {
            if (t.marks[mark].part == StepPart::SteadyStep && part != StepPart::SteadyStep)
                r.startSteady = live;
            part = t.marks[mark].part;
            phase = t.marks[mark].phase;
            if (part == StepPart::SteadyStep)
                r.phasePeak[size_t(phase)] = std::max(r.phasePeak[size_t(phase)], live);
            ++mark;
        }
        if (e == t.events.size())
            break;
        const TimelineTensor &tt = t.tensors[size_t(t.events[e].tensor)];
        live += t.events[e].alloc ? tt.bytes : -tt.bytes;
        if (part == StepPart::SteadyStep)
            r.phasePeak[size_t(phase)] = std::max(r.phasePeak[size_t(phase)], live);
    }
    r.endSteady = live;
    return r;
}

bool near(double a, double b) { return std::abs(a - b) <= 1e-9 * std::max({1.0, std::abs(a), std::abs(b)}); }

int firstEvent(const StepTimeline &t, TensorKind kind, int layer, bool alloc, StepPart part, int from = 0)
{
    for (size_t e = size_t(from); e < t.events.size(); ++e) {
        const TimelineTensor &tt = t.tensors[size_t(t.events[e].tensor)];
        if (t.events[e].alloc == alloc && tt.kind == kind && tt.layer == layer && tt.part == part)
            return int(e);
    }
    return -1;
}

} // namespace

class TestTimeline : public QObject
{
    Q_OBJECT

private slots:
    // The recorder pairs every free with its tensor's allocation by key, over thousands of
    // tensors open at once (keys that differ in any one field), freed in a shuffled order; a key
    // allocated again while open replaces the open one (whose tensors stay allocated); a free of
    // a key that is not open is counted, not listed.
    void recorderPairsFrees()
    {
        StepTimeline t;
        TimelineRecorder rec(t);
        std::vector<TensorRef> refs;
        for (int kind = 0; kind < 4; ++kind)
            for (int unit = -1; unit < 9; ++unit)
                for (int layer = -1; layer < 20; ++layer)
                    for (int piece = 0; piece < 6; ++piece)
                        refs.push_back({TensorKind(kind), unit, layer, piece});
        const std::vector<double> parts = {1.0, 3.0};
        size_t fifth = 0; // refs[5]'s first tensor
        for (size_t i = 0; i < refs.size(); ++i) {
            if (i == 5)
                fifth = t.tensors.size();
            rec.alloc(refs[i], double(i + 1), i % 7 == 0 ? &parts : nullptr);
        }
        const size_t opened = t.tensors.size();
        // Re-open one key: its first tensor is left allocated, its free closes the new one.
        rec.alloc(refs[5], 99.0, nullptr);
        std::vector<size_t> order(refs.size());
        for (size_t i = 0; i < order.size(); ++i)
            order[i] = (i * 7919) % order.size(); // a permutation (7919 is prime, not a factor)
        for (size_t i : order)
            rec.free(refs[i], 0.0);
        rec.free(refs[3], 0.0);                         // closed already
        rec.free({TensorKind::Parameter, 50, 50, 50}, 0.0); // never opened
        QCOMPARE(t.unmatched_frees, 2);
        QCOMPARE(t.tensors.size(), opened + 1);
        int stillOpen = 0;
        for (size_t k = 0; k < t.tensors.size(); ++k) {
            const TimelineTensor &tt = t.tensors[k];
            if (tt.free_event < 0) {
                ++stillOpen;
                continue;
            }
            const TimelineEvent &e = t.events[size_t(tt.free_event)];
            QVERIFY(!e.alloc);
            QCOMPARE(e.tensor, int(k));
            QVERIFY(tt.free_event > tt.alloc_event);
        }
        QCOMPARE(stillOpen, 1); // refs[5]'s first listing
        QCOMPARE(t.tensors[fifth].free_event, -1);
        QCOMPARE(t.tensors[fifth].bytes, 6.0);
        QCOMPARE(t.tensors[opened].bytes, 99.0);
        // Split groups free both their tensors, the larger part three quarters of the bytes.
        QCOMPARE(t.tensors[0].bytes, 0.25);
        QCOMPARE(t.tensors[1].bytes, 0.75);
        QVERIFY(t.tensors[1].free_event == t.tensors[0].free_event + 1);
    }

    // The timeline is the breakdown's source: its live bytes peak where estimateMemory says, in
    // every phase, on every stage; the steady step ends as it began; every free matches.
    void agreesWithEstimate_data()
    {
        QTest::addColumn<QString>("patch");
        for (const testing::PlanVariant &v : testing::planVariants())
            QTest::newRow(v.name) << QString::fromUtf8(v.patch);
        QTest::newRow("interleaved-long") << QStringLiteral(
            R"({"parallel": {"dp": 1, "tp": 2, "pp": 4, "pp_schedule": "interleaved", "virtual_stages": 2},
                "training": {"grad_accum": 32}})");
        QTest::newRow("1f1b-long") << QStringLiteral(R"({"parallel": {"dp": 2, "pp": 4}, "training": {"grad_accum": 32}})");
        QTest::newRow("1f1b-8-stages") << QStringLiteral(R"({"parallel": {"dp": 1, "pp": 8}, "training": {"grad_accum": 16}})");
        QTest::newRow("1f1b-8-stages-short") << QStringLiteral(R"({"parallel": {"dp": 1, "pp": 8}, "training": {"grad_accum": 4}})");
        // Middle stages of an interleaved schedule follow the outer two (when stage 1 runs
        // every chunk's first backward among its pairs: grad_accum 32) or are each evaluated
        // (grad_accum 8, 16: the first backwards reach into the drain).
        QTest::newRow("interleaved-8-stages") << QStringLiteral(
            R"({"parallel": {"dp": 1, "pp": 8, "pp_schedule": "interleaved", "virtual_stages": 2},
                "training": {"grad_accum": 32}})");
        QTest::newRow("interleaved-8-stages-edge") << QStringLiteral(
            R"({"parallel": {"dp": 1, "pp": 8, "pp_schedule": "interleaved", "virtual_stages": 2},
                "training": {"grad_accum": 16}})");
        QTest::newRow("interleaved-8-stages-short") << QStringLiteral(
            R"({"parallel": {"dp": 1, "pp": 8, "pp_schedule": "interleaved", "virtual_stages": 2},
                "training": {"grad_accum": 8}})");
        QTest::newRow("interleaved-8x4-zero1") << QStringLiteral(
            R"({"parallel": {"dp": 1, "pp": 8, "pp_schedule": "interleaved", "virtual_stages": 4,
                              "sharding": "none"}, "training": {"grad_accum": 40},
                "memory": {"recompute": "selective"}, "framework": "megatron"})");
        QTest::newRow("fsdp-interleaved-8-stages") << QStringLiteral(
            R"({"parallel": {"dp": 2, "pp": 8, "pp_schedule": "interleaved", "virtual_stages": 2,
                              "sharding": "full"}, "training": {"grad_accum": 24},
                "memory": {"recompute": "none"}, "cluster": {"nodes": 2}})");
        QTest::newRow("fsdp-interleaved") << QStringLiteral(
            R"({"parallel": {"dp": 2, "tp": 2, "pp": 2, "pp_schedule": "interleaved", "virtual_stages": 4,
                              "sharding": "full"}, "training": {"grad_accum": 4}, "memory": {"recompute": "none"}})");
        QTest::newRow("fsdp-accum") << QStringLiteral(R"({"parallel": {"sharding": "full"}, "training": {"grad_accum": 4}})");
        // Layer layouts (core/layers.h): uneven first / last stages, listed stages, and the
        // embedding / loss counted, whose first / last chunks hold a layer fewer than the others.
        QTest::newRow("uneven-8-stages") << QStringLiteral(
            R"({"parallel": {"dp": 1, "pp": 8, "first_stage_layers": 2, "last_stage_layers": 6}, "training": {"grad_accum": 16}})");
        QTest::newRow("listed-stages") << QStringLiteral(
            R"({"parallel": {"dp": 2, "pp": 4, "stage_layers": [5, 9, 9, 9]}, "training": {"grad_accum": 8}})");
        QTest::newRow("interleaved-uneven") << QStringLiteral(
            R"({"parallel": {"dp": 2, "pp": 4, "pp_schedule": "interleaved", "virtual_stages": 2,
                              "first_stage_layers": 2, "last_stage_layers": 6}, "training": {"grad_accum": 8}})");
        // Megatron's layout string: a middle stage whose chunks differ (8 and 0 layers).
        QTest::newRow("interleaved-layout-string") << QStringLiteral(
            R"({"parallel": {"dp": 2, "pp": 4, "pp_schedule": "interleaved", "virtual_stages": 2,
                              "pipeline_layout": "Et*2|t*4|t*8|t*4|t*4|t*4||t*6L"}, "training": {"grad_accum": 8},
                "memory": {"recompute": "none"}})");
        QTest::newRow("interleaved-account") << QStringLiteral(
            R"({"model": {"layers": 30}, "parallel": {"dp": 2, "pp": 4, "pp_schedule": "interleaved", "virtual_stages": 2,
                "account_for_embedding": true, "account_for_loss": true}, "training": {"grad_accum": 8},
                "memory": {"recompute": "none"}})");
    }

    void agreesWithEstimate()
    {
        QFETCH(QString, patch);
        const Plan plan = variantPlan(patch.toUtf8().constData());
        const MemoryEstimate m = estimateMemory(plan, Catalog::builtin());
        for (const RankMemory &r : m.ranks) {
            const StepTimeline t = memoryTimeline(plan, Catalog::builtin(), r.stage);
            QCOMPARE(t.unmatched_frees, 0);
            QVERIFY2(near(t.peakLive(StepPart::SteadyStep), r.peak_bytes),
                     qPrintable(QStringLiteral("stage %1: timeline %2, estimate %3")
                                    .arg(r.stage)
                                    .arg(t.peakLive(StepPart::SteadyStep), 0, 'f', 0)
                                    .arg(r.peak_bytes, 0, 'f', 0)));
            const Replayed live = liveBytes(t);
            for (int p = 0; p < kPhaseCount; ++p)
                QVERIFY2(near(live.phasePeak[size_t(p)], r.phases[size_t(p)].total()),
                         qPrintable(QStringLiteral("stage %1 phase %2").arg(r.stage).arg(p)));
            QVERIFY(near(live.startSteady, live.endSteady));
            QVERIFY(t.peakLive(StepPart::FirstStep) > 0);
            // What the recorder kept while listing is what a pass over the events gives.
            for (int p = 0; p < kStepPartCount; ++p)
                QCOMPARE(t.peak_live[size_t(p)], t.peakLive(StepPart(p)));
        }
    }

    // The same over the layouts a search returns (every schedule, sharding and offload it
    // tries): the collapsed tracker and the listed timeline agree on every stage.
    void agreesOverSearchedLayouts()
    {
        json j = testing::variantBase();
        j.merge_patch({{"model", {{"preset", "mixtral-8x7b"}}}, {"parallel", {{"dp", 16}}}, {"cluster", {{"nodes", 2}}}});
        SearchRequest req;
        req.base = parsePlan(j, Catalog::builtin());
        req.global_batch = 16;
        req.top = 150;
        const SearchOutcome out = searchLayouts(req, Catalog::builtin());
        QVERIFY(out.ranked.size() > 50);
        int checked = 0;
        for (const SearchResult &r : out.ranked) {
            const MemoryEstimate m = estimateMemory(r.plan, Catalog::builtin());
            for (const RankMemory &rk : m.ranks) {
                const StepTimeline t = memoryTimeline(r.plan, Catalog::builtin(), rk.stage);
                QCOMPARE(t.unmatched_frees, 0);
                QVERIFY(near(t.peakLive(StepPart::SteadyStep), rk.peak_bytes));
                for (int p = 0; p < kStepPartCount; ++p)
                    QCOMPARE(t.peak_live[size_t(p)], t.peakLive(StepPart(p)));
                ++checked;
            }
        }
        QVERIFY(checked > 100);
    }

    // Spelling out more alike micro-batches changes no peak.
    void omittedMicrobatchesChangeNothing()
    {
        for (const char *patch : {R"({"parallel": {"dp": 2, "pp": 4}, "training": {"grad_accum": 32}})",
                                  R"({"parallel": {"dp": 1, "tp": 2, "pp": 4, "pp_schedule": "interleaved",
                                      "virtual_stages": 2}, "training": {"grad_accum": 32}})"}) {
            const Plan plan = variantPlan(patch);
            const StepTimeline shortList = memoryTimeline(plan, Catalog::builtin(), 0, 1);
            const StepTimeline full = memoryTimeline(plan, Catalog::builtin(), 0, 1000);
            QVERIFY(shortList.omitted_microbatches > 0);
            QCOMPARE(full.omitted_microbatches, 0);
            QVERIFY(shortList.events.size() < full.events.size());
            QVERIFY(near(shortList.peakLive(StepPart::SteadyStep), full.peakLive(StepPart::SteadyStep)));
        }
    }

    // FSDP2's order (torch/distributed/fsdp/_fully_shard): a layer's unsharded parameters are
    // freed before its reduce-scatter input exists; the layer above's reduce-scatter input lives
    // through this layer's backward and is freed just before; the last layer's flat all-gather
    // buffer outlives the loss.
    void fsdp2Order()
    {
        const Plan plan = variantPlan(R"({"parallel": {"sharding": "full"}})");
        const StepTimeline t = memoryTimeline(plan, Catalog::builtin(), 0);
        const StepPart st = StepPart::SteadyStep;
        const int layer = 10;
        const int gatheredFree = firstEvent(t, TensorKind::GatheredLayer, layer, false, st,
                                            firstEvent(t, TensorKind::BackwardWorkingSet, layer, true, st));
        const int rsAlloc = firstEvent(t, TensorKind::ReduceScatterInput, layer, true, st);
        const int rsAboveFree = firstEvent(t, TensorKind::ReduceScatterInput, layer + 1, false, st);
        const int work = firstEvent(t, TensorKind::BackwardWorkingSet, layer, true, st);
        QVERIFY(gatheredFree >= 0 && rsAlloc >= 0 && rsAboveFree >= 0 && work >= 0);
        QVERIFY(work < gatheredFree);        // the layer computes with its parameters
        QVERIFY(gatheredFree < rsAlloc);     // reshard before the reduce-scatter input
        QVERIFY(work < rsAboveFree);         // the layer above's input lives through compute
        QVERIFY(rsAboveFree < rsAlloc);      // and is freed just before this layer's
        const int logits = firstEvent(t, TensorKind::Logits, -2, true, st);
        const int lastFlat = firstEvent(t, TensorKind::AllGatherBuffer, 31, false, st);
        QVERIFY(logits >= 0 && logits < lastFlat);
        // The all-gather buffers are on their own stream.
        QCOMPARE(int(streamOf(TensorKind::AllGatherBuffer)), int(Stream::AllGather));
    }

    // The first step creates the optimizer states in its optimizer phase; the steady step
    // starts with them.
    void firstStepCreatesStates()
    {
        const Plan plan = variantPlan("{}");
        const StepTimeline t = memoryTimeline(plan, Catalog::builtin(), 0);
        int created = 0;
        for (const TimelineTensor &tt : t.tensors) {
            if (tt.kind != TensorKind::OptimizerState)
                continue;
            QCOMPARE(int(tt.part), int(StepPart::FirstStep));
            QCOMPARE(int(tt.phase), int(Phase::OptimizerStep));
            QCOMPARE(tt.free_event, -1);
            ++created;
        }
        QVERIFY(created > 32);
        MemoryEstimate m = estimateMemory(plan, Catalog::builtin());
        QCOMPARE(m.ranks[0].first_step_peak_bytes, 0.0); // comes with the replay
        replayAllocator(plan, Catalog::builtin(), m);
        // Iteration 1's forward has no optimizer states yet: its peak is lower or equal.
        QVERIFY(m.ranks[0].first_step_peak_bytes > 0);
        QVERIFY(m.ranks[0].first_step_peak_bytes <= m.ranks[0].peak_bytes + 1);
    }

    // The view's series: the peak where the estimate has it, the tensors alive there adding up
    // to it, reserved never below live.
    void stepViewSeries()
    {
        const Plan plan = variantPlan(R"({"parallel": {"sharding": "full"}, "training": {"seq_len": 32768}})");
        const MemoryEstimate m = estimateMemory(plan, Catalog::builtin());
        const StepView v = stepView(plan, Catalog::builtin(), 0);
        QVERIFY(v.first > 0 && v.last > v.first);
        QCOMPARE(int(v.live.size()), v.last - v.first);
        QCOMPARE(v.live.size(), v.reserved.size());
        QVERIFY(near(v.allocated_peak, m.ranks[0].peak_bytes));
        QVERIFY(std::abs(v.liveAt(v.peak_event) - v.allocated_peak) < 1e-6 * v.allocated_peak);
        double alive = 0;
        for (int i : v.alive_at_peak)
            alive += v.timeline.tensors[size_t(i)].bytes;
        QVERIFY(near(alive, v.allocated_peak));
        for (size_t i = 1; i < v.alive_at_peak.size(); ++i)
            QVERIFY(v.timeline.tensors[size_t(v.alive_at_peak[i - 1])].bytes >=
                    v.timeline.tensors[size_t(v.alive_at_peak[i])].bytes);
        for (size_t i = 0; i < v.live.size(); ++i)
            QVERIFY(double(v.reserved[i]) >= v.liveAt(v.first + int(i)) * (1 - 1e-6));
        QCOMPARE(int(v.phases.size()), kPhaseCount);
        QVERIFY(v.reserved_peak >= v.allocated_peak);
    }
};

QTEST_GUILESS_MAIN(TestTimeline)
#include "tst_timeline.moc"
