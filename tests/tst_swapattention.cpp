// MindSpeed's swap-attention (core/swapattention.h; mindspeed/core/memory/swap_attention/
// prefetch.py, commit 028de58c): the split of a layer's saved bytes, hand-checked for a
// Llama-2-7B layer, the device and host memory it moves and the step's host traffic.
#include "core/catalog.h"
#include "core/errors.h"
#include "core/estimate.h"
#include "core/memory.h"
#include "core/plan.h"
#include "core/swapattention.h"

#include <QTest>
#include <nlohmann/json.hpp>

using namespace shardscope;
using nlohmann::json;

namespace {

/// Llama-2-7B, seq 4096, micro-batch 1, tp 1 on 8 x 910B2 under Megatron (fused SwiGLU),
/// selective recompute.
json swapPlan(bool swap)
{
    return json{{"format", "shardscope-plan"},
                {"version", 1},
                {"name", "7B swap-attention"},
                {"model", {{"preset", "llama2-7b"}}},
                {"training", {{"seq_len", 4096}, {"micro_batch", 1}, {"grad_accum", 1}}},
                {"parallel", {{"dp", 8}, {"sharding", "optimizer"}}},
                {"memory", {{"recompute", "selective"}, {"swap_attention", swap}}},
                {"framework", "megatron"},
                {"cluster", {{"device", "ascend-910b2"}, {"devices_per_node", 8}, {"nodes", 1}}}};
}

Plan parse(const json &j) { return parsePlan(j, Catalog::builtin()); }

} // namespace

class TestSwapAttention : public QObject
{
    Q_OBJECT
private slots:
    void split()
    {
        Plan p = parse(swapPlan(true));
        SwapAttentionSplit s = swapAttentionSplit(p, 100.0, 30.0);
        QCOMPARE(s.swapped, 30.0);
        QCOMPARE(s.kept, 70.0);
        s = swapAttentionSplit(p, 20.0, 30.0); // never more than the layer saves
        QCOMPARE(s.swapped, 20.0);
        QCOMPARE(s.kept, 0.0);
        p.memory.swap_attention = false;
        s = swapAttentionSplit(p, 100.0, 30.0);
        QCOMPARE(s.swapped, 0.0);
        QCOMPARE(s.kept, 100.0);
    }

    void deviceAndHost()
    {
        const Catalog &cat = Catalog::builtin();
        const MemoryEstimate off = estimateMemory(parse(swapPlan(false)), cat);
        const MemoryEstimate on = estimateMemory(parse(swapPlan(true)), cat);
        // 32 layers, one micro-batch in flight: at the forward peak the device keeps 31 layers'
        // attention side fewer (the running layer's is working memory).
        const double before = off.ranks[0].phases[size_t(Phase::Forward)][Component::Activations];
        const double after = on.ranks[0].phases[size_t(Phase::Forward)][Component::Activations];
        QVERIFY(after < before);
        const double perLayer = (before - after) / 32.0;
        // The attention side of a Llama-2-7B layer per token under selective recompute, with
        // bf16 activations (Megatron: fused RMSNorm saving its input, fused SwiGLU): the input
        // norm's input 2 x 4096, q/k/v's input (the norm output) 2 x 4096, q, k, v after RoPE
        // 3 x 2 x 4096, the attention output 2 x 4096 and its fp32 log-sum-exp 4 x 32, the
        // post-attention norm's input 2 x 4096: at least 12 x 4096 B per token, and less than the
        // whole layer. Per layer at 4096 tokens: above 12 x 4096 x 4096 B = 192 MiB.
        QVERIFY2(perLayer >= 12.0 * 4096 * 4096, qPrintable(QString::number(perLayer)));
        QVERIFY(perLayer < before / 32.0);
        // The host holds every layer's swapped share (pinned).
        QCOMPARE(on.host.ranks.size(), size_t(1));
        QVERIFY(qAbs(on.host.ranks[0].pinned - (before - after)) < 1.0);
        const MemoryExplanation ex = explainMemory(parse(swapPlan(true)), cat, on.ranks[0], Phase::Forward);
        QVERIFY(ex[size_t(Component::Activations)].assumptions.english().find("swap-attention") != std::string::npos);
    }

    void stepTraffic()
    {
        const Catalog &cat = Catalog::builtin();
        const Estimate off = estimate(parse(swapPlan(false)), cat);
        const Estimate on = estimate(parse(swapPlan(true)), cat);
        QCOMPARE(off.step.offload_s, 0.0);
        QVERIFY(on.step.offload_s > 0);
        // Down and up once per micro-batch at the host bandwidth: 2 x swapped bytes / 25 GB/s
        // at most (what assembleStep hides behind compute is not counted).
        const double swapped = off.memory.ranks[0].phases[size_t(Phase::Forward)][Component::Activations] -
                               on.memory.ranks[0].phases[size_t(Phase::Forward)][Component::Activations];
        QVERIFY(on.step.offload_s <= 2.0 * (swapped + swapped / 31.0) / 25.0e9 + 1e-9);
    }

    void refused()
    {
        auto fieldOf = [](json j) {
            try {
                parse(j);
            } catch (const PlanError &e) {
                return e.field();
            }
            return std::string();
        };
        json j = swapPlan(true);
        j["framework"] = "pytorch";
        j["parallel"]["sharding"] = "none";
        QCOMPARE(fieldOf(j), std::string("memory.swap_attention"));
        j = swapPlan(true);
        j["memory"]["recompute"] = "full";
        QCOMPARE(fieldOf(j), std::string("memory.swap_attention"));
        j = swapPlan(true);
        j["memory"]["offload"] = {{"activations", true}};
        QCOMPARE(fieldOf(j), std::string("memory.swap_attention"));
    }
};

QTEST_GUILESS_MAIN(TestSwapAttention)
#include "tst_swapattention.moc"
