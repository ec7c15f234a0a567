// The caching allocator model (core/allocator.h) against hand-worked sequences, and its replay
// over a timeline.
#include "core/allocator.h"
#include "core/catalog.h"
#include "core/memory.h"
#include "core/timeline.h"
#include "planvariants.h"

#include <QTest>
#include <cmath>
#include <limits>
#include <tuple>
#include <nlohmann/json.hpp>

using namespace shardscope;

namespace {

constexpr double MiB = 1024.0 * 1024.0;
const double kRoom = std::numeric_limits<double>::infinity();

CachingAllocator cuda(const AllocatorConfig &c = {}, double capacity = kRoom)
{
    return CachingAllocator(AllocatorRules::Cuda, c, capacity);
}

} // namespace

class TestAllocator : public QObject
{
    Q_OBJECT

private slots:
    void rounding()
    {
        const CachingAllocator c = cuda();
        QCOMPARE(c.roundSize(1), uint64_t(512));
        QCOMPARE(c.roundSize(512), uint64_t(512));
        QCOMPARE(c.roundSize(513), uint64_t(1024));
        // torch_npu pads every request by 32 bytes first.
        const CachingAllocator n(AllocatorRules::Npu, {}, kRoom);
        QCOMPARE(n.roundSize(480), uint64_t(512));
        QCOMPARE(n.roundSize(481), uint64_t(1024));
        QCOMPARE(n.roundSize(uint64_t(MiB)), uint64_t(MiB) + 512); // into the large pool
        // Segments: 2 MiB for the small pool, 20 MiB under 10 MiB, else rounded to 2 MiB.
        QCOMPARE(CachingAllocator::allocationSize(uint64_t(MiB)), uint64_t(2 * MiB));
        QCOMPARE(CachingAllocator::allocationSize(uint64_t(MiB) + 512), uint64_t(20 * MiB));
        QCOMPARE(CachingAllocator::allocationSize(uint64_t(10 * MiB)), uint64_t(10 * MiB));
        QCOMPARE(CachingAllocator::allocationSize(uint64_t(11 * MiB) + 512), uint64_t(12 * MiB));
    }

    // 8 MiB reserves a 20 MiB segment; the 12 MiB left is split off and serves the next 8 MiB.
    void splitAndReuse()
    {
        CachingAllocator a = cuda();
        const int x = a.malloc(8 * MiB);
        QCOMPARE(a.reservedBytes(), 20 * MiB);
        const int y = a.malloc(8 * MiB);
        QVERIFY(x >= 0 && y >= 0 && x != y);
        QCOMPARE(a.reservedBytes(), 20 * MiB);
        QCOMPARE(a.allocatedBytes(), 16 * MiB);
        QCOMPARE(a.segments(), 1);
        // Small requests share a 2 MiB segment.
        for (int i = 0; i < 4; ++i)
            QVERIFY(a.malloc(1000) >= 0);
        QCOMPARE(a.reservedBytes(), 22 * MiB);
        a.free(x);
        a.free(y);
        QCOMPARE(a.allocatedBytes(), 4 * 1024.0);
    }

    // A request in fractional bytes (a timeline's sizes are doubles) takes its ceiling before
    // the rounding: 512 B is one unit, anything above it two; a whole number above 2^53 is
    // taken as it is.
    void fractionalBytes()
    {
        const struct
        {
            double bytes;
            double block;
        } rows[] = {{0.25, 512}, {512.0, 512}, {512.0000001, 1024}, {1023.5, 1024}, {1024.0, 1024}};
        for (const auto &r : rows) {
            CachingAllocator a = cuda();
            QVERIFY(a.malloc(r.bytes) >= 0);
            QCOMPARE(a.allocatedBytes(), r.block);
        }
        CachingAllocator a = cuda();
        const double huge = std::ldexp(1.0, 60) + 2.0 * MiB; // a whole number of 2 MiB pages
        QCOMPARE(a.missBytesBound(huge), huge);
        QCOMPARE(a.missBytesBound(huge + std::ldexp(1.0, 9)), huge + 2.0 * MiB);
    }

    // A freed 100 MiB block serves 90 MiB (the 10 MiB rest is split off); freed neighbours merge.
    void reuseAndMerge()
    {
        CachingAllocator a = cuda();
        const int x = a.malloc(100 * MiB);
        a.free(x);
        const int y = a.malloc(90 * MiB);
        const int z = a.malloc(10 * MiB);
        QCOMPARE(a.reservedBytes(), 100 * MiB);
        a.free(y);
        a.free(z);
        QVERIFY(a.malloc(100 * MiB) >= 0); // merged back into one block
        QCOMPARE(a.reservedBytes(), 100 * MiB);
    }

    // Fragmentation: a hole too small for the next request stays reserved beside a new segment.
    void fragmentingPattern()
    {
        CachingAllocator a = cuda();
        const int x = a.malloc(100 * MiB);
        a.malloc(100 * MiB);
        a.free(x);
        a.malloc(150 * MiB);
        QCOMPARE(a.allocatedBytes(), 250 * MiB);
        QCOMPARE(a.reservedBytes(), 350 * MiB);
    }

    // max_split_size_mb: a request below it never takes a block at or above it.
    void maxSplitSize()
    {
        AllocatorConfig c;
        c.max_split_size_mb = 200;
        CachingAllocator a = cuda(c);
        a.free(a.malloc(300 * MiB));
        a.malloc(100 * MiB);
        QCOMPARE(a.reservedBytes(), 400 * MiB);
        // At or above it, a block at most 20 MiB larger is taken whole (not split).
        CachingAllocator b = cuda(c);
        b.free(b.malloc(300 * MiB));
        b.malloc(290 * MiB);
        QCOMPARE(b.reservedBytes(), 300 * MiB);
        QCOMPARE(b.allocatedBytes(), 300 * MiB);
    }

    // Out of room: the cached blocks are released and the allocation retried before it fails.
    void releaseAndRetry()
    {
        CachingAllocator a = cuda({}, 300 * MiB);
        a.free(a.malloc(200 * MiB));
        QVERIFY(a.malloc(250 * MiB) >= 0);
        QCOMPARE(a.retries(), 1);
        QCOMPARE(a.reservedBytes(), 250 * MiB);
        QCOMPARE(a.malloc(100 * MiB), -1); // 250 allocated + 100 > 300
    }

    // Expandable segments map 20 MiB pages as needed and grow into a free tail.
    void expandableSegments()
    {
        AllocatorConfig c;
        c.expandable_segments = true;
        CachingAllocator a = cuda(c);
        const int x = a.malloc(30 * MiB);
        QCOMPARE(a.reservedBytes(), 40 * MiB);
        a.malloc(30 * MiB); // 10 MiB free at the end: 20 more mapped
        QCOMPARE(a.reservedBytes(), 60 * MiB);
        a.free(x);
        a.malloc(150 * MiB); // the hole of 30 is not at the end: 8 more pages mapped
        QCOMPARE(a.reservedBytes(), 220 * MiB);
        // The same pattern without: separate segments, rounded to 2 MiB.
        CachingAllocator b = cuda();
        const int y = b.malloc(30 * MiB);
        b.malloc(30 * MiB);
        b.free(y);
        b.malloc(150 * MiB);
        QCOMPARE(b.reservedBytes(), 210 * MiB);
    }

    // missBytesBound (what the replay checks before looking at the cache) is never below
    // missBytes, and what malloc then reserves is within it: a pseudo-random mix of sizes,
    // frees and streams, with and without expandable segments, on both rule sets.
    void missBoundHolds()
    {
        for (const AllocatorRules rules : {AllocatorRules::Cuda, AllocatorRules::Npu})
            for (const bool expandable : {false, true}) {
                AllocatorConfig c;
                c.expandable_segments = expandable;
                CachingAllocator a(rules, c, kRoom);
                std::vector<int> live;
                uint64_t seed = 12345;
                auto next = [&] { return seed = seed * 6364136223846793005ull + 1442695040888963407ull; };
                for (int i = 0; i < 4000; ++i) {
                    const uint64_t r = next() >> 33;
                    const double sizes[] = {512, 3000, 1.0 * MiB - 1, 1.5 * MiB, 7 * MiB, 21 * MiB, 300 * MiB};
                    const double bytes = sizes[r % 7] * (1.0 + double((r >> 3) % 5) / 7.0);
                    const int stream = int((r >> 6) % 2);
                    if (!live.empty() && (r >> 8) % 3 == 0) {
                        const size_t k = size_t(r >> 10) % live.size();
                        a.free(live[k]);
                        live.erase(live.begin() + long(k));
                        continue;
                    }
                    const double miss = a.missBytes(bytes, stream);
                    QVERIFY(miss <= a.missBytesBound(bytes));
                    const double before = a.reservedBytes();
                    live.push_back(a.malloc(bytes, stream));
                    QVERIFY(live.back() >= 0);
                    QVERIFY(a.reservedBytes() - before <= a.missBytesBound(bytes));
                }
            }
    }

    // A block freed on one stream is never handed to another.
    void streamsDoNotShare()
    {
        CachingAllocator a = cuda();
        a.free(a.malloc(64 * MiB, 1));
        a.malloc(64 * MiB, 0);
        QCOMPARE(a.reservedBytes(), 128 * MiB);
    }

    // garbage_collection_threshold: past the threshold, old whole cached segments are freed
    // before a new one is reserved.
    void garbageCollection()
    {
        AllocatorConfig c;
        c.garbage_collection_threshold = 0.5;
        CachingAllocator a = cuda(c, 1000 * MiB);
        const int x = a.malloc(300 * MiB);
        const int y = a.malloc(300 * MiB);
        a.free(x);
        a.free(y);
        QCOMPARE(a.reservedBytes(), 600 * MiB);
        // 600 reserved > 500: the older segment (unused longest) goes, which is enough.
        a.malloc(400 * MiB);
        QCOMPARE(a.reservedBytes(), 700 * MiB);
        QCOMPARE(a.retries(), 0);
        // Without it the cache is released only when the device is full: both go, then retry.
        CachingAllocator b = cuda({}, 1000 * MiB);
        const int u = b.malloc(300 * MiB);
        const int v = b.malloc(310 * MiB);
        b.free(u);
        b.free(v);
        b.malloc(400 * MiB);
        QCOMPARE(b.reservedBytes(), 400 * MiB);
        QCOMPARE(b.retries(), 1);
    }

    // The replay over a real plan: reserved at least allocated, the device replay agrees with
    // the one on a device with room while it fits, and runs out where it does not.
    void replayOnAPlan()
    {
        nlohmann::json j = testing::variantBase();
        j.merge_patch({{"training", {{"seq_len", 32768}}}});
        const Plan plan = parsePlan(j, Catalog::builtin());
        const MemoryEstimate m = estimateMemory(plan, Catalog::builtin());
        const StepTimeline t = memoryTimeline(plan, Catalog::builtin(), 0);
        const ReplayResult room = replayTimeline(t, AllocatorRules::Npu, {}, kRoom, true);
        QVERIFY(!room.oom);
        QVERIFY(room.peak_reserved >= m.peak_bytes);
        QVERIFY(room.peak_allocated >= m.peak_bytes);
        QCOMPARE(room.reserved.size(), t.events.size());
        const DualReplay fits = replayOnDevice(t, AllocatorRules::Npu, {}, 2.0 * room.peak_reserved);
        QVERIFY(!fits.device.oom);
        QCOMPARE(fits.device.peak_reserved, room.peak_reserved);
        const DualReplay tight = replayOnDevice(t, AllocatorRules::Npu, {}, m.peak_bytes * 0.9);
        QVERIFY(tight.device.oom);
        QVERIFY(tight.device.oom_event >= 0);
        QCOMPARE(tight.room.peak_reserved, room.peak_reserved);
    }

    // replayAllocator in parts (AllocatorReplay, the search's way): the ranks of two plans
    // replayed interleaved and in reverse order give each rank its own timeline's replay, as
    // replayAllocator does; for a plan that fits and one that runs out, with the last stage (the
    // logits of a 128K vocabulary) the fullest, so the verdict's fullest-first order is not the
    // stages' and stops at the first rank it replays.
    void replayInParts()
    {
        const Catalog &cat = Catalog::builtin();
        auto pipeline = [&](int64_t seq) {
            nlohmann::json j = testing::variantBase();
            j.merge_patch({{"model", {{"preset", "llama3-8b"}}},
                           {"training", {{"seq_len", seq}, {"grad_accum", 8}}},
                           {"parallel", {{"dp", 2}, {"pp", 4}}}});
            return parsePlan(j, cat);
        };
        const Plan fits = pipeline(8192), runsOut = pipeline(32768);
        const double hbm = cat.device(fits.cluster.device)->hbm_bytes;
        for (const bool verdictOnly : {false, true}) {
            MemoryEstimate a = estimateMemory(fits, cat), b = estimateMemory(runsOut, cat);
            QCOMPARE(a.ranks.size(), size_t(4));
            QVERIFY(a.ranks[3].peak_bytes > a.ranks[0].peak_bytes);
            QVERIFY(b.ranks[3].peak_bytes > b.ranks[0].peak_bytes);
            MemoryEstimate wholeA = a, wholeB = b;
            replayAllocator(fits, cat, wholeA, verdictOnly);
            replayAllocator(runsOut, cat, wholeB, verdictOnly);
            AllocatorReplay ra(fits, cat, a, verdictOnly), rb(runsOut, cat, b, verdictOnly);
            QCOMPARE(ra.ranks(), size_t(4));
            for (size_t k = 4; k-- > 0;) {
                rb.replayRank(k);
                ra.replayRank(k);
            }
            ra.finish();
            rb.finish();
            QVERIFY(a.hbm_fits);
            QVERIFY(!b.hbm_fits);
            QVERIFY(b.ranks[3].oom);
            for (const auto &[parts, whole, plan] :
                 {std::tuple{&a, &wholeA, &fits}, std::tuple{&b, &wholeB, &runsOut}}) {
                QCOMPARE(parts->hbm_fits, whole->hbm_fits);
                QCOMPARE(parts->usable_bytes, whole->usable_bytes);
                for (size_t r = 0; r < 4; ++r) {
                    const RankMemory &rank = parts->ranks[r];
                    QCOMPARE(rank.reserved_bytes, whole->ranks[r].reserved_bytes);
                    QCOMPARE(rank.reserve.allocator, whole->ranks[r].reserve.allocator);
                    QCOMPARE(rank.oom, whole->ranks[r].oom);
                    QCOMPARE(rank.oom_tensor, whole->ranks[r].oom_tensor);
                    if (verdictOnly && !parts->hbm_fits && r != 3) {
                        QCOMPARE(rank.reserved_bytes, 0.0); // not needed for the verdict
                        continue;
                    }
                    const double capacity = hbm - rank.reserve.context - rank.reserve.comm_buffers;
                    const DualReplay own = replayOnDevice(memoryTimeline(*plan, cat, rank.stage), AllocatorRules::Npu,
                                                          {}, capacity, false, verdictOnly);
                    QCOMPARE(rank.reserved_bytes, own.room.peak_reserved);
                    QCOMPARE(rank.oom, own.device.oom);
                }
            }
        }
    }

    // Passing over alike runs that leave the allocator as they found it changes no figure: every
    // plan variant's every stage replayed with its repeats and with them dropped (every event
    // replayed), under both allocators' rules and three configurations, on a device with room
    // (with the reserved curve) and on one that runs out half-way.
    void passingOverChangesNothing()
    {
        AllocatorConfig expandable, maxSplit, gc;
        expandable.expandable_segments = true;
        maxSplit.max_split_size_mb = 200;
        gc.garbage_collection_threshold = 0.6;
        long passed = 0, passedWithGc = 0, replays = 0;
        for (const testing::PlanVariant &v : testing::planVariants()) {
            const Plan plan = testing::variantPlan(v);
            for (int stage = 0; stage < plan.parallel.pp; ++stage) {
                const StepTimeline t = memoryTimeline(plan, Catalog::builtin(), stage);
                StepTimeline every = t;
                every.repeats.clear();
                for (const AllocatorRules rules : {AllocatorRules::Npu, AllocatorRules::Cuda}) {
                    for (const AllocatorConfig &c : {AllocatorConfig{}, expandable, maxSplit, gc}) {
                        const ReplayResult a = replayTimeline(t, rules, c, kRoom, true);
                        const ReplayResult b = replayTimeline(every, rules, c, kRoom, true);
                        QCOMPARE(b.passed_events, 0);
                        QCOMPARE(a.peak_reserved, b.peak_reserved);
                        QCOMPARE(a.peak_allocated, b.peak_allocated);
                        QCOMPARE(a.first_step_reserved, b.first_step_reserved);
                        QCOMPARE(a.retries, b.retries);
                        QVERIFY2(a.reserved == b.reserved, v.name);
                        const double tight = 0.5 * (a.first_step_reserved + a.peak_allocated);
                        const DualReplay da = replayOnDevice(t, rules, c, tight);
                        const DualReplay db = replayOnDevice(every, rules, c, tight);
                        QCOMPARE(da.device.oom, db.device.oom);
                        QCOMPARE(da.device.oom_event, db.device.oom_event);
                        QCOMPARE(da.device.peak_reserved, db.device.peak_reserved);
                        QCOMPARE(da.device.retries, db.device.retries);
                        QCOMPARE(da.room.peak_reserved, db.room.peak_reserved);
                        // Garbage collection is in force against a device's capacity only.
                        if (c.garbage_collection_threshold > 0)
                            passedWithGc += da.room.passed_events;
                        else
                            passed += a.passed_events;
                        ++replays;
                    }
                }
            }
        }
        QVERIFY(replays > 100);
        QVERIFY(passed > 0);       // the plans with gradient accumulation have alike runs
        QCOMPARE(passedWithGc, 0L); // garbage collection ages blocks: nothing is passed over
    }

    // The rules on hand-built runs: a run that reserves is replayed and the next one checked; a
    // run that keeps a tensor beyond itself is never passed over.
    void passingOverRules()
    {
        auto record = [](bool keepOne) {
            StepTimeline t;
            TimelineRecorder rec(t);
            rec.part(StepPart::SteadyStep);
            rec.repeat(4, [&](int i) {
                rec.alloc({TensorKind::SavedActivations, i, 0}, 30 * MiB, nullptr);
                rec.alloc({TensorKind::SavedActivations, i, 1}, 12 * MiB, nullptr);
                rec.free({TensorKind::SavedActivations, i, 0}, 30 * MiB);
                if (!keepOne)
                    rec.free({TensorKind::SavedActivations, i, 1}, 12 * MiB);
            });
            return t;
        };
        const StepTimeline alike = record(false);
        QCOMPARE(alike.repeats.size(), size_t(1));
        QCOMPARE(alike.repeats[0].unit_events, 4);
        QCOMPARE(alike.repeats[0].units, 4);
        const ReplayResult r = replayTimeline(alike, AllocatorRules::Cuda, {}, kRoom, true);
        // The first run reserves its segments, the second finds them cached: the last two pass.
        QCOMPARE(r.passed_events, 8);
        QCOMPARE(r.reserved.size(), alike.events.size());
        QCOMPARE(r.peak_reserved, 42 * MiB); // two segments: 30 MiB and 12 MiB
        QCOMPARE(r.peak_allocated, 42 * MiB);
        const StepTimeline kept = record(true);
        QCOMPARE(kept.repeats.size(), size_t(1));
        QCOMPARE(kept.repeats[0].unit_events, 3);
        const ReplayResult k = replayTimeline(kept, AllocatorRules::Cuda, {}, kRoom);
        QCOMPARE(k.passed_events, 0);
        QCOMPARE(k.peak_reserved, 78 * MiB); // the 30 MiB segment, and one of 12 MiB a run
    }
};

QTEST_GUILESS_MAIN(TestAllocator)
#include "tst_allocator.moc"
