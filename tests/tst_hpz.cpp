// DeepSpeed ZeRO++ hierarchical partitioning (core/hpz.h; deepspeed/runtime/zero/
// partition_parameters.py _partition_param_sec, stage3.py invalidate_secondary_tensor, commit
// 38327e07): the secondary copy's bytes, hand-checked, and the all-gathers it moves into the
// hpZ group.
#include "core/catalog.h"
#include "core/errors.h"
#include "core/estimate.h"
#include "core/hpz.h"
#include "core/memory.h"
#include "core/plan.h"

#include <QTest>
#include <nlohmann/json.hpp>

using namespace shardscope;
using nlohmann::json;

namespace {

/// Llama-2-7B (6,738,415,616 parameters) under DeepSpeed ZeRO-3 on 2 nodes x 8 H100: dp 16,
/// 4 micro-batches per step.
json zero3Plan(int hpz)
{
    json j = {{"format", "shardscope-plan"},
              {"version", 1},
              {"name", "7B ZeRO-3"},
              {"model", {{"preset", "llama2-7b"}}},
              {"training", {{"seq_len", 4096}, {"micro_batch", 1}, {"grad_accum", 4}}},
              {"parallel", {{"dp", 16}, {"sharding", "full"}}},
              {"memory", {{"recompute", "full"}}},
              {"framework", "deepspeed"},
              {"cluster", {{"device", "h100-80g"}, {"devices_per_node", 8}, {"nodes", 2}}}};
    if (hpz > 0)
        j["parallel"]["zero_hpz_partition_size"] = hpz;
    return j;
}

Plan parse(const json &j) { return parsePlan(j, Catalog::builtin()); }

constexpr double kParams = 6738415616.0;

} // namespace

class TestHpz : public QObject
{
    Q_OBJECT
private slots:
    void unitRules()
    {
        Plan p = parse(zero3Plan(8));
        QCOMPARE(hpzGroup(p), 8);
        // 6,738,415,616 / 8 x 2 B = 1,684,603,904 B.
        QCOMPARE(hpzSecondaryBytes(p, kParams, 2.0), 1684603904.0);
        QCOMPARE(hpzForwardGathers(p, 4), 3);
        QCOMPARE(hpzForwardGathers(p, 1), 0);
        p.parallel.zero_hpz_partition_size = 1; // 1: off, as DeepSpeed's default
        QCOMPARE(hpzGroup(p), 0);
        QCOMPARE(hpzSecondaryBytes(p, kParams, 2.0), 0.0);
        QCOMPARE(hpzForwardGathers(p, 4), 0);
    }

    void secondaryCopyInEveryPhase()
    {
        const MemoryEstimate off = estimateMemory(parse(zero3Plan(0)), Catalog::builtin());
        const MemoryEstimate on = estimateMemory(parse(zero3Plan(8)), Catalog::builtin());
        // The primary shard is 6,738,415,616 / 16 x 2 B = 842,301,952 B; hpZ adds / 8 x 2 B.
        const double primary = off.ranks[0].phases[size_t(Phase::OptimizerStep)][Component::Parameters];
        QCOMPARE(primary, kParams / 16 * 2);
        for (int ph = 0; ph < kPhaseCount; ++ph) {
            const double before = off.ranks[0].phases[size_t(ph)][Component::Parameters];
            const double after = on.ranks[0].phases[size_t(ph)][Component::Parameters];
            QCOMPARE(after - before, 1684603904.0);
        }
        const MemoryExplanation ex = explainMemory(parse(zero3Plan(8)), Catalog::builtin(), on.ranks[0], Phase::Backward);
        QVERIFY(ex[size_t(Component::Parameters)].assumptions.english().find("hpZ") != std::string::npos);
    }

    void gathersStayInTheGroup()
    {
        const Estimate off = estimate(parse(zero3Plan(0)), Catalog::builtin());
        const Estimate on = estimate(parse(zero3Plan(8)), Catalog::builtin());
        auto gathers = [](const Estimate &e, const std::string &phase, int size) {
            double n = 0;
            for (const Collective &c : e.communication)
                if (c.collective == "all_gather" && c.phase == phase && c.group_size == size &&
                    c.note.find("root module") == std::string::npos)
                    n += c.count_per_step;
            return n;
        };
        // 32 layers x 4 micro-batches: without hpZ all over dp 16; with it the first forward
        // over 16, the other three and every backward within the node's 8.
        QCOMPARE(gathers(off, "forward", 16), 128.0);
        QCOMPARE(gathers(off, "backward", 16), 128.0);
        QCOMPARE(gathers(on, "forward", 16), 32.0);
        QCOMPARE(gathers(on, "forward", 8), 96.0);
        QCOMPARE(gathers(on, "backward", 8), 128.0);
        QCOMPARE(gathers(on, "backward", 16), 0.0);
        // Within a node the gathers are faster: less exposed communication.
        QVERIFY(on.step.communication_s < off.step.communication_s);
    }

    void refusedWhereItDoesNotApply()
    {
        auto fieldOf = [](json j) {
            try {
                parse(j);
            } catch (const PlanError &e) {
                return e.field();
            }
            return std::string();
        };
        json j = zero3Plan(3); // does not divide dp 16
        QCOMPARE(fieldOf(j), std::string("parallel.zero_hpz_partition_size"));
        j = zero3Plan(8);
        j["parallel"]["sharding"] = "grads";
        QCOMPARE(fieldOf(j), std::string("parallel.zero_hpz_partition_size"));
        j = zero3Plan(8);
        j["framework"] = "pytorch";
        QCOMPARE(fieldOf(j), std::string("parallel.zero_hpz_partition_size"));
        j = zero3Plan(8);
        j["parallel"]["reshard_after_forward"] = false;
        QCOMPARE(fieldOf(j), std::string("parallel.zero_hpz_partition_size"));
        QCOMPARE(fieldOf(zero3Plan(16)), std::string()); // the whole of dp: allowed (no saving)
    }
};

QTEST_GUILESS_MAIN(TestHpz)
#include "tst_hpz.moc"
