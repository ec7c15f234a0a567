// The communication engine: collective inventories of known layouts against hand-checked counts
// and message sizes, the time model against the nccl-tests conventions, group placement on the
// cluster, and the overlap rules.
#include "core/catalog.h"
#include "core/comm.h"
#include "core/compute.h"
#include "core/device.h"
#include "core/estimate.h"
#include "planvariants.h"

#include <QTest>
#include <cmath>
#include <optional>
#include <nlohmann/json.hpp>

using namespace shardscope;
using nlohmann::json;

namespace {

json casePlan(const std::string &preset, int64_t seq, json parallel, const std::string &recompute,
              int grad_accum = 1, const std::string &device = "ascend-910b2", int nodes = 1)
{
    json j = testing::variantBase();
    j["parallel"] = std::move(parallel); // the layout as given, nothing merged into it
    j.merge_patch({{"name", "comm test"},
                   {"model", {{"preset", preset}}},
                   {"training", {{"seq_len", seq}, {"grad_accum", grad_accum}}},
                   {"memory", {{"recompute", recompute}}},
                   {"cluster", {{"device", device}, {"nodes", nodes}}}});
    return j;
}

std::vector<CommItem> inventory(const json &j)
{
    const Catalog &cat = Catalog::builtin();
    const Plan p = parsePlan(j, cat);
    const DeviceProfile &dev = *cat.device(p.cluster.device);
    const FrameworkProfile &fw = *cat.framework(p.framework);
    const ComputeEstimate ce = estimateCompute(p, computeProfile(dev, fw, p.precision.compute));
    struct Sink final : CommSink
    {
        std::vector<CommItem> items;
        void add(const CommItem &it) override { items.push_back(it); }
    } sink;
    forEachCollective(p, dev, fw, ce, sink);
    return sink.items;
}

/// "kind group size bytes count" per item, compared as text so a failure shows the whole list.
QString describe(const std::vector<CommItem> &items)
{
    QStringList out;
    for (const CommItem &it : items) {
        out << QStringLiteral("%1 %2x%3 S=%4 n=%5")
                   .arg(QString::fromUtf8(collectiveKey(it.kind).data(),
                                          int(collectiveKey(it.kind).size())))
                   .arg(
                       QString::fromUtf8(groupKey(it.group).data(), int(groupKey(it.group).size())))
                   .arg(it.group_size)
                   .arg(qlonglong(std::llround(it.bytes)))
                   .arg(it.count);
    }
    return out.join(QStringLiteral("; "));
}

DeviceProfile syntheticDevice(const std::string &intraTopology)
{
    DeviceProfile d;
    d.id = "synthetic";
    d.intra_node = {"nvlink", intraTopology, 100e9, 10e-6, 0.5};
    d.inter_node = {"infiniband", "switch", 25e9, 20e-6, 0.8};
    return d;
}

} // namespace

class TestComm : public QObject
{
    Q_OBJECT

private slots:
    void inventories_data();
    void inventories();
    void busBandwidthConvention_data();
    void busBandwidthConvention();
    void timeModel_data();
    void timeModel();
    void placement_data();
    void placement();
    void overlap();
    void estimateCarriesInventory();
    void expertCollectives_data();
    void expertCollectives();
    void contextParallelCollectives_data();
    void contextParallelCollectives();
    void recomputedCollectives_data();
    void recomputedCollectives();
    void hsdpCollectives();
    void fsdpExpertCollectives();
    void modelParallelPartBoundsTheTotal();
};

// The expert collectives alone, hand-checked. DeepSeek-V3 cut to 4 layers (3 dense, 1 MoE) at
// T = 4096 tokens, h = 7168, top-8, bf16, one micro-batch.
void TestComm::expertCollectives_data()
{
    QTest::addColumn<QByteArray>("plan");
    QTest::addColumn<QString>("expected");
    auto v3 = [](json parallel) {
        json j = casePlan("deepseek-v3", 4096, std::move(parallel), "none");
        j["model"]["layers"] = 4;
        j["framework"] = "megatron";
        return QByteArray(j.dump().c_str());
    };
    // ep 8 over dp 8: each rank sends its T x 8 copies: 4096 x 8 x 7168 x 2 = 469,762,048 B,
    // dispatch and combine in the one MoE layer: 2 forward, 2 backward.
    QTest::addRow("ep8") << v3({{"dp", 8}, {"ep", 8}, {"sharding", "optimizer"}})
                         << QStringLiteral("all_to_all epx8 S=469762048 n=2; all_to_all epx8 S=469762048 n=2");
    // tp 4 + SP, ep 4, etp 2, dp 2: a rank's tokens are T / 4, its copies T / 4 x 8:
    // 4096 x 2 x 7168 x 2 = 117,440,512 B per all-to-all; the etp 2 group all-gathers the
    // dispatched copies (T / 4 x 2 x 8 = 4 per token: 234,881,024 B) and reduce-scatters the
    // experts' outputs, forward and backward.
    QTest::addRow("tp4 sp ep4 etp2")
        << v3({{"dp", 2}, {"tp", 4}, {"sp", true}, {"ep", 4}, {"etp", 2}, {"sharding", "optimizer"}})
        << QStringLiteral("all_to_all epx4 S=117440512 n=2; all_to_all epx4 S=117440512 n=2; "
                          "all_gather etpx2 S=234881024 n=1; reduce_scatter etpx2 S=234881024 n=1; "
                          "all_gather etpx2 S=234881024 n=1; reduce_scatter etpx2 S=234881024 n=1");
    // The all-gather dispatcher at ep 8: every rank gathers the group's T x 8 tokens
    // (4096 x 8 x 7168 x 2 = 469,762,048 B) and reduce-scatters the outputs back.
    QTest::addRow("allgather ep8")
        << [] {
               json j = casePlan("deepseek-v3", 4096, {{"dp", 8}, {"ep", 8}, {"sharding", "optimizer"}}, "none");
               j["model"]["layers"] = 4;
               j["model"]["moe"] = {{"dispatcher", "allgather"}};
               return QByteArray(j.dump().c_str());
           }()
        << QStringLiteral("all_gather epx8 S=469762048 n=1; reduce_scatter epx8 S=469762048 n=1; "
                          "all_gather epx8 S=469762048 n=1; reduce_scatter epx8 S=469762048 n=1");
    // Full recompute runs the dispatch and combine again in backward: 4 there.
    QTest::addRow("ep8 full recompute")
        << [] {
               json j = casePlan("deepseek-v3", 4096, {{"dp", 8}, {"ep", 8}, {"sharding", "optimizer"}}, "full");
               j["model"]["layers"] = 4;
               return QByteArray(j.dump().c_str());
           }()
        << QStringLiteral("all_to_all epx8 S=469762048 n=2; all_to_all epx8 S=469762048 n=4");
    // Block recompute of 1 layer of the 4: the MoE layers in proportion (1 x 1 / 4) run their
    // dispatch and combine again: 2 x 1.25 backward.
    QTest::addRow("ep8 block 1")
        << [] {
               json j = casePlan("deepseek-v3", 4096, {{"dp", 8}, {"ep", 8}, {"sharding", "optimizer"}}, "full");
               j["model"]["layers"] = 4;
               j["framework"] = "megatron";
               j["memory"]["recompute_method"] = "block";
               j["memory"]["recompute_num_layers"] = 1;
               return QByteArray(j.dump().c_str());
           }()
        << QStringLiteral("all_to_all epx8 S=469762048 n=2; all_to_all epx8 S=469762048 n=2.5");
}

void TestComm::expertCollectives()
{
    QFETCH(QByteArray, plan);
    QFETCH(QString, expected);
    std::vector<CommItem> items = inventory(json::parse(plan.constData()));
    std::erase_if(items, [](const CommItem &it) {
        return it.group != CommGroup::EP && it.group != CommGroup::ETP;
    });
    QCOMPARE(describe(items), expected);
}

// Context parallelism alone, hand-checked: Llama-2-7B (h = 4096, MHA, 32 layers) at 32K over
// cp 8, one micro-batch, no recompute: a rank holds T = 4096 tokens, bf16.
void TestComm::contextParallelCollectives_data()
{
    QTest::addColumn<QByteArray>("plan");
    QTest::addColumn<QString>("expected");
    auto cp = [](json parallel) {
        return QByteArray(casePlan("llama2-7b", 32768, std::move(parallel), "none").dump().c_str());
    };
    // Ring: K and V of the rank, 4096 x 8192 x 2 = 67,108,864 B, 7 steps per layer forward (224),
    // K/V and dK/dV backward (448).
    QTest::addRow("ring") << cp({{"cp", 8}, {"sharding", "optimizer"}})
                          << QStringLiteral("send_recv cpx8 S=67108864 n=224; send_recv cpx8 S=67108864 n=448");
    // Ulysses over 8: q, k, v (4096 x 4096 x 2 = 33,554,432 B each) to the head split, 3 per layer
    // (96), the output back (32); backward the output's gradient (32) and dq, dk, dv (96).
    QTest::addRow("ulysses") << cp({{"cp", 8}, {"cp_algo", "ulysses"}, {"sharding", "optimizer"}})
                             << QStringLiteral("all_to_all cpx8 S=33554432 n=96; all_to_all cpx8 S=33554432 n=32; "
                                               "all_to_all cpx8 S=33554432 n=32; all_to_all cpx8 S=33554432 n=96");
    // Hybrid, Ulysses groups of 2 and a ring of 4: the same all-to-alls over 2 ranks, the ring's
    // blocks (67,108,864 B: 2 x the tokens, half the heads) 3 steps per layer (96, backward 192).
    QTest::addRow("hybrid") << cp({{"cp", 8}, {"cp_algo", "hybrid"}, {"ulysses_degree", 2}, {"sharding", "optimizer"}})
                            << QStringLiteral("all_to_all cpx2 S=33554432 n=96; all_to_all cpx2 S=33554432 n=32; "
                                              "all_to_all cpx2 S=33554432 n=32; all_to_all cpx2 S=33554432 n=96; "
                                              "send_recv cpx4 S=67108864 n=96; send_recv cpx4 S=67108864 n=192");
    // Llama-3-8B (32 heads, 8 KV heads of 128) under framework megatron: MindSpeed's own Ulysses
    // moves q, k, v as projected, 4096 x (4096 + 1024 + 1024) x 2 / 3 = 16,777,216 B on average;
    // MindSpeed-LLM repeats K and V to the 32 query heads first (the profile's default):
    // 4096 x 12288 x 2 / 3 = 33,554,432 B. The hybrid's ring then passes repeated K/V blocks,
    // 2 x 4096 x 8192 = 67,108,864 B instead of 16,777,216.
    auto megatronCp = [](json parallel) {
        json j = casePlan("llama3-8b", 32768, std::move(parallel), "none");
        j["framework"] = "megatron";
        return QByteArray(j.dump().c_str());
    };
    QTest::addRow("ulysses gqa as projected")
        << megatronCp({{"cp", 8},
                       {"cp_algo", "ulysses"},
                       {"ulysses_kv_repeat", false},
                       {"sharding", "optimizer"}})
        << QStringLiteral("all_to_all cpx8 S=16777216 n=96; all_to_all cpx8 S=33554432 n=32; "
                          "all_to_all cpx8 S=33554432 n=32; all_to_all cpx8 S=16777216 n=96");
    QTest::addRow("ulysses gqa repeated")
        << megatronCp({{"cp", 8}, {"cp_algo", "ulysses"}, {"sharding", "optimizer"}})
        << QStringLiteral("all_to_all cpx8 S=33554432 n=96; all_to_all cpx8 S=33554432 n=32; "
                          "all_to_all cpx8 S=33554432 n=32; all_to_all cpx8 S=33554432 n=96");
    QTest::addRow("hybrid gqa as projected")
        << megatronCp({{"cp", 8},
                       {"cp_algo", "hybrid"},
                       {"ulysses_degree", 2},
                       {"ulysses_kv_repeat", false},
                       {"sharding", "optimizer"}})
        << QStringLiteral("all_to_all cpx2 S=16777216 n=96; all_to_all cpx2 S=33554432 n=32; "
                          "all_to_all cpx2 S=33554432 n=32; all_to_all cpx2 S=16777216 n=96; "
                          "send_recv cpx4 S=16777216 n=96; send_recv cpx4 S=16777216 n=192");
    QTest::addRow("hybrid gqa repeated")
        << megatronCp(
               {{"cp", 8}, {"cp_algo", "hybrid"}, {"ulysses_degree", 2}, {"sharding", "optimizer"}})
        << QStringLiteral("all_to_all cpx2 S=33554432 n=96; all_to_all cpx2 S=33554432 n=32; "
                          "all_to_all cpx2 S=33554432 n=32; all_to_all cpx2 S=33554432 n=96; "
                          "send_recv cpx4 S=67108864 n=96; send_recv cpx4 S=67108864 n=192");
}

// The collectives a recomputed forward runs again, hand-counted: only the recomputed layers'
// under Megatron's --recompute-method block, the ring's under selective recompute too (the K/V
// exchange is inside the attention core it recomputes). Llama-2-7B (32 layers) at 32K, bf16,
// one micro-batch, megatron profile.
void TestComm::recomputedCollectives_data()
{
    QTest::addColumn<QByteArray>("plan");
    QTest::addColumn<int>("group");
    QTest::addColumn<QString>("expected");
    auto llama = [](json parallel, const std::string &recompute, const std::string &method, int n,
                    int microbatches = 1) {
        json j = casePlan("llama2-7b", 32768, std::move(parallel), recompute, microbatches, "ascend-910b2", 2);
        j["framework"] = "megatron";
        if (recompute == "full") {
            j["memory"]["recompute_method"] = method;
            j["memory"]["recompute_num_layers"] = n;
        }
        return QByteArray(j.dump().c_str());
    };
    const int tp = int(CommGroup::TP), cp = int(CommGroup::CP);
    // TP 8 + SP over pp 2: 16 layers a stage, S = 32768 x 4096 x 2 = 268,435,456 B; 2 all-gathers
    // and 2 reduce-scatters a layer forward and backward (32 each); the forward pair again for
    // the recomputed layers: all 16 (uniform), the first 2 (block), the first 2 of each of the
    // stage's two model chunks (block, interleaved: 2 micro-batches, so 64 and 2 x 2 x 4).
    const QString tpBase = QStringLiteral("all_gather tpx8 S=268435456 n=32; reduce_scatter tpx8 S=268435456 n=32; "
                                          "all_gather tpx8 S=268435456 n=32; reduce_scatter tpx8 S=268435456 n=32; ");
    QTest::addRow("tp8 sp uniform")
        << llama({{"tp", 8}, {"pp", 2}, {"sp", true}}, "full", "uniform", 1) << tp
        << tpBase + QStringLiteral("all_gather tpx8 S=268435456 n=32; reduce_scatter tpx8 S=268435456 n=32");
    QTest::addRow("tp8 sp block 2")
        << llama({{"tp", 8}, {"pp", 2}, {"sp", true}}, "full", "block", 2) << tp
        << tpBase + QStringLiteral("all_gather tpx8 S=268435456 n=4; reduce_scatter tpx8 S=268435456 n=4");
    QTest::addRow("tp8 sp block 2 interleaved")
        << llama({{"tp", 8}, {"pp", 2}, {"sp", true}, {"pp_schedule", "interleaved"}, {"virtual_stages", 2}},
                 "full", "block", 2, 2)
        << tp
        << QStringLiteral("all_gather tpx8 S=268435456 n=64; reduce_scatter tpx8 S=268435456 n=64; "
                          "all_gather tpx8 S=268435456 n=64; reduce_scatter tpx8 S=268435456 n=64; "
                          "all_gather tpx8 S=268435456 n=16; reduce_scatter tpx8 S=268435456 n=16");
    // TP 8 without SP, block 4 of 16: all-reduces 32 forward, 32 backward, 2 x 4 again.
    QTest::addRow("tp8 block 4")
        << llama({{"tp", 8}, {"pp", 2}}, "full", "block", 4) << tp
        << QStringLiteral("all_reduce tpx8 S=268435456 n=32; all_reduce tpx8 S=268435456 n=32; "
                          "all_reduce tpx8 S=268435456 n=8");
    // Ring over cp 8 (K and V of 4096 tokens: 67,108,864 B, 7 steps): forward 32 x 7 = 224, again
    // for every recomputed attention: selective 224 more, block 4 of 32 28 more; backward 448.
    QTest::addRow("ring selective")
        << llama({{"cp", 8}, {"dp", 2}, {"sharding", "optimizer"}}, "selective", "uniform", 1) << cp
        << QStringLiteral("send_recv cpx8 S=67108864 n=448; send_recv cpx8 S=67108864 n=448");
    QTest::addRow("ring block 4")
        << llama({{"cp", 8}, {"dp", 2}, {"sharding", "optimizer"}}, "full", "block", 4) << cp
        << QStringLiteral("send_recv cpx8 S=67108864 n=252; send_recv cpx8 S=67108864 n=448");
    // Ulysses over 8 (inside the core attention: MindSpeed's UlyssesContextAttention), block 4 of
    // 32: q, k, v to the head split 3 x (32 + 4) = 108, the output back 36; selective: 3 x 64 =
    // 192 and 64; backward as without recompute.
    QTest::addRow("ulysses block 4")
        << llama({{"cp", 8}, {"dp", 2}, {"cp_algo", "ulysses"}, {"sharding", "optimizer"}}, "full", "block", 4)
        << cp
        << QStringLiteral("all_to_all cpx8 S=33554432 n=108; all_to_all cpx8 S=33554432 n=36; "
                          "all_to_all cpx8 S=33554432 n=32; all_to_all cpx8 S=33554432 n=96");
    QTest::addRow("ulysses selective")
        << llama({{"cp", 8}, {"dp", 2}, {"cp_algo", "ulysses"}, {"sharding", "optimizer"}}, "selective", "uniform", 1)
        << cp
        << QStringLiteral("all_to_all cpx8 S=33554432 n=192; all_to_all cpx8 S=33554432 n=64; "
                          "all_to_all cpx8 S=33554432 n=32; all_to_all cpx8 S=33554432 n=96");
}

void TestComm::recomputedCollectives()
{
    QFETCH(QByteArray, plan);
    QFETCH(int, group);
    QFETCH(QString, expected);
    std::vector<CommItem> items = inventory(json::parse(plan.constData()));
    std::erase_if(items, [&](const CommItem &it) { return int(it.group) != group; });
    QCOMPARE(describe(items), expected);
}

// HSDP: Llama-2-7B, dp 8 sharded in groups of 4 (two replicas), FSDP at 32K, no recompute:
// per layer the gather and reduce-scatter of 202,383,360 x 2 = 404,766,720 B within the 4-rank
// shard group, and the reduce-scattered shard 404,766,720 / 4 = 101,191,680 B all-reduced
// across the 2 replicas; the root (524,296,192 B) gathered and reduced within the group.
void TestComm::hsdpCollectives()
{
    const std::vector<CommItem> items = inventory(
        casePlan("llama2-7b", 32768, {{"dp", 8}, {"sharding", "full"}, {"dp_shard", 4}}, "none"));
    QCOMPARE(describe(items),
             QStringLiteral("all_gather dpx4 S=404766720 n=32; all_gather dpx4 S=404766720 n=32; "
                            "reduce_scatter dpx4 S=404766720 n=32; all_reduce dpx2 S=101191680 n=32; "
                            "all_gather dpx4 S=524296192 n=1; reduce_scatter dpx4 S=524296192 n=1"));
}

// FSDP with experts sharded over their own group: Mixtral-8x7B (h 4096, 32 heads of 128, 8 KV
// heads, 8 experts of FFN 14336, vocab 32000) on 8 ranks, ep 4: the experts' shard group is
// 8 / 4 = 2 ranks. Per layer a rank gathers its dense part over dp 8: attention 2 x 4096^2 +
// 2 x 4096 x 1024 = 41,943,040, norms 8,192, router 32,768, so 41,984,000 x 2 = 83,968,000 B;
// and its 2 experts over the group of 2: 2 x 3 x 4096 x 14336 = 352,321,536 x 2 = 704,643,072 B.
// The same for the backward gather and the reduce-scatter (bf16 gradients); the root (embedding,
// head, final norm: 262,148,096 x 2 = 524,296,192 B) with the dense part.
void TestComm::fsdpExpertCollectives()
{
    const std::vector<CommItem> items =
        inventory(casePlan("mixtral-8x7b", 4096, {{"dp", 8}, {"ep", 4}, {"sharding", "full"}}, "none"));
    std::vector<CommItem> dataParallel = items;
    std::erase_if(dataParallel, [](const CommItem &it) {
        return it.group != CommGroup::DP && it.group != CommGroup::ExpertDP;
    });
    QCOMPARE(describe(dataParallel),
             QStringLiteral("all_gather dpx8 S=83968000 n=32; all_gather edpx2 S=704643072 n=32; "
                            "all_gather dpx8 S=83968000 n=32; all_gather edpx2 S=704643072 n=32; "
                            "reduce_scatter dpx8 S=83968000 n=32; reduce_scatter edpx2 S=704643072 n=32; "
                            "all_gather dpx8 S=524296192 n=1; reduce_scatter dpx8 S=524296192 n=1"));
}

void TestComm::contextParallelCollectives()
{
    QFETCH(QByteArray, plan);
    QFETCH(QString, expected);
    std::vector<CommItem> items = inventory(json::parse(plan.constData()));
    std::erase_if(items, [](const CommItem &it) { return it.group != CommGroup::CP; });
    QCOMPARE(describe(items), expected);
}

void TestComm::inventories_data()
{
    QTest::addColumn<QByteArray>("plan");
    QTest::addColumn<QString>("expected");

    // Llama-2-7B: L = 32, h = 4096, 32 heads of 128 (kv_heads 32), FFN 11008, vocab 32000.
    // Parameters 6,738,415,616; one layer 4 x 4096^2 + 3 x 4096 x 11008 + 2 x 4096 = 202,383,360;
    // root: embedding 131,072,000 + head 131,072,000 + final norm 4096 = 262,148,096.
    // T = 32768 tokens, bf16 (2 B).

    // DDP, dp 8: gradients 6,738,415,616 x 2 B = 13,476,831,232 B in 25 MiB (26,214,400 B)
    // buckets: ceil(514.1) = 515 buckets of 13,476,831,232 / 515 = 26,168,604.3 B, once per step.
    QTest::addRow("ddp dp8")
        << QByteArray(casePlan("llama2-7b", 32768, {{"dp", 8}}, "full").dump().c_str())
        << QStringLiteral("all_reduce dpx8 S=26168604 n=515");

    // FSDP full shard, dp 8: per layer an all-gather of 202,383,360 x 2 = 404,766,720 B forward,
    // again backward (reshard_after_forward), a reduce-scatter of the same size: 32 each; the
    // root 262,148,096 x 2 = 524,296,192 B gathered and reduce-scattered once.
    QTest::addRow("fsdp dp8")
        << QByteArray(casePlan("llama2-7b", 32768, {{"dp", 8}, {"sharding", "full"}}, "full")
                          .dump()
                          .c_str())
        << QStringLiteral("all_gather dpx8 S=404766720 n=32; all_gather dpx8 S=404766720 n=32; "
                          "reduce_scatter dpx8 S=404766720 n=32; all_gather dpx8 S=524296192 n=1; "
                          "reduce_scatter dpx8 S=524296192 n=1");

    // TP 8 + SP, full recompute: S = T x h x 2 = 32768 x 4096 x 2 = 268,435,456 B; per layer 2
    // all-gathers + 2 reduce-scatters forward, the same backward, and the forward pair again
    // under full recompute: 6 entries of 2 x 32 = 64 calls.
    QTest::addRow("tp8 sp")
        << QByteArray(
               casePlan("llama2-7b", 32768, {{"tp", 8}, {"sp", true}}, "full").dump().c_str())
        << QStringLiteral("all_gather tpx8 S=268435456 n=64; reduce_scatter tpx8 S=268435456 n=64; "
                          "all_gather tpx8 S=268435456 n=64; reduce_scatter tpx8 S=268435456 n=64; "
                          "all_gather tpx8 S=268435456 n=64; reduce_scatter tpx8 S=268435456 n=64");

    // TP 2 without SP, no recompute, dp 4 DDP: 2 all-reduces forward + 2 backward per layer of
    // 268,435,456 B (64 each). DDP over 4: each TP rank holds (67,108,864 + 135,266,304) / 2 +
    // 8192 = 101,195,776 per layer x 32 = 3,238,264,832 + (2 x 131,072,000) / 2 + 4096 =
    // 3,369,340,928 params x 2 B = 6,738,681,856 B -> ceil(/26,214,400) = 258 buckets of
    // 26,118,921.9 B.
    QTest::addRow("tp2 dp4 ddp")
        << QByteArray(casePlan("llama2-7b", 32768, {{"tp", 2}, {"dp", 4}}, "none").dump().c_str())
        << QStringLiteral("all_reduce dpx4 S=26118922 n=258; all_reduce tpx2 S=268435456 n=64; "
                          "all_reduce tpx2 S=268435456 n=64");

    // TP 4 x FSDP 2 + SP: layer per TP rank (67,108,864 + 135,266,304) / 4 + 8192 = 50,601,984
    // x 2 B = 101,203,968 B over dp 2; root (131,072,000 x 2) / 4 + 4096 = 65,540,096 x 2 =
    // 131,080,192 B; TP as above over 4 ranks.
    QTest::addRow("tp4 fsdp2 sp")
        << QByteArray(casePlan("llama2-7b", 32768,
                               {{"tp", 4}, {"dp", 2}, {"sp", true}, {"sharding", "full"}}, "full")
                          .dump()
                          .c_str())
        << QStringLiteral("all_gather dpx2 S=101203968 n=32; all_gather dpx2 S=101203968 n=32; "
                          "reduce_scatter dpx2 S=101203968 n=32; all_gather dpx2 S=131080192 n=1; "
                          "reduce_scatter dpx2 S=131080192 n=1; "
                          "all_gather tpx4 S=268435456 n=64; reduce_scatter tpx4 S=268435456 n=64; "
                          "all_gather tpx4 S=268435456 n=64; reduce_scatter tpx4 S=268435456 n=64; "
                          "all_gather tpx4 S=268435456 n=64; reduce_scatter tpx4 S=268435456 n=64");

    // CP 8 under full sharding over dp x cp = 8: the FSDP collectives as for dp 8; the ring moves
    // this rank's K and V: 4096 tokens x 2 x 4096 (32 KV heads x 128) x 2 B = 67,108,864 B,
    // 7 steps per layer: forward 32 x 7 x 2 (full recompute repeats it) = 448; backward K/V and
    // dK/dV 32 x 7 x 2 = 448.
    QTest::addRow("cp8 fsdp")
        << QByteArray(casePlan("llama2-7b", 32768, {{"cp", 8}, {"sharding", "full"}}, "full")
                          .dump()
                          .c_str())
        << QStringLiteral("all_gather dpx8 S=404766720 n=32; all_gather dpx8 S=404766720 n=32; "
                          "reduce_scatter dpx8 S=404766720 n=32; all_gather dpx8 S=524296192 n=1; "
                          "reduce_scatter dpx8 S=524296192 n=1; send_recv cpx8 S=67108864 n=448; "
                          "send_recv cpx8 S=67108864 n=448");

    // GQA shrinks the ring: Mixtral has 8 KV heads: 4096 x 2 x 1024 x 2 = 16,777,216 B. Its
    // experts are spread by ep 8 over dp 8 (world 64 = 8 nodes): all-to-all of T x top_k x h x 2
    // = 4096 x 2 x 4096 x 2 = 67,108,864 B, dispatch + combine per layer: 64 forward, 64 backward.
    // The dp x cp group is 8 x 8 = 64 ranks; stage parameters per rank: experts 8 / 8 = 1 per
    // layer (3 x 4096 x 14336 = 176,160,768) + attention 4 x 4096^2 / ... (GQA: 2 x 4096^2 +
    // 2 x 4096 x 1024 = 41,943,040) + norms 8192 + router 32,768 = 218,144,768 per layer x 32 =
    // 6,980,632,576 + root 262,148,096 = 7,242,780,672 x 2 B = 14,485,561,344 B. The experts'
    // gradients go over the expert data-parallel group, world / (ep x etp x pp) = 64 / 8 = 8
    // ranks: 176,160,768 x 32 x 2 B = 11,274,289,152 B in 431 buckets (ceil(430.1) of 25 MiB) of
    // 26,158,443.5 B; the dense rest, (41,943,040 + 8192 + 32,768) x 32 + 262,148,096 =
    // 1,605,636,096 x 2 B = 3,211,272,192 B, over dp x cp in 123 buckets (ceil(122.5)) of
    // 26,107,904 B.
    QTest::addRow("mixtral cp8 ep8")
        << QByteArray(casePlan("mixtral-8x7b", 32768, {{"cp", 8}, {"dp", 8}, {"ep", 8}}, "none", 1,
                               "ascend-910b2", 8)
                          .dump()
                          .c_str())
        << QStringLiteral("all_reduce dpx64 S=26107904 n=123; all_reduce edpx8 S=26158444 n=431; "
                          "send_recv cpx8 S=16777216 n=224; "
                          "send_recv cpx8 S=16777216 n=448; all_to_all epx8 S=67108864 n=64; "
                          "all_to_all epx8 S=67108864 n=64");

    // PP 4 x dp 2 at 4096 tokens, 8 micro-batches: activations 4096 x 4096 x 2 = 33,554,432 B,
    // one send/recv per micro-batch forward and one backward (8 each); interleaved with 2 virtual
    // stages doubles both (16). DDP buckets: stage params 8 layers x 202,383,360 + max(embedding
    // 131,072,000, head + norm 131,076,096) = 1,750,142,976 x 2 B = 3,500,285,952 B -> 134
    // buckets (ceil(133.5)) of 26,121,536.96 B.
    QTest::addRow("pp4 1f1b")
        << QByteArray(casePlan("llama2-7b", 4096, {{"pp", 4}, {"dp", 2}}, "none", 8).dump().c_str())
        << QStringLiteral("all_reduce dpx2 S=26121537 n=134; send_recv ppx2 S=33554432 n=8; "
                          "send_recv ppx2 S=33554432 n=8");
    QTest::addRow("pp4 interleaved v2")
        << QByteArray(
               casePlan(
                   "llama2-7b", 4096,
                   {{"pp", 4}, {"dp", 2}, {"pp_schedule", "interleaved"}, {"virtual_stages", 2}},
                   "none", 8)
                   .dump()
                   .c_str())
        << QStringLiteral("all_reduce dpx2 S=26121537 n=134; send_recv ppx2 S=33554432 n=16; "
                          "send_recv ppx2 S=33554432 n=16");
}

void TestComm::inventories()
{
    QFETCH(QByteArray, plan);
    QFETCH(QString, expected);
    QCOMPARE(describe(inventory(json::parse(plan.toStdString()))), expected);
}

void TestComm::busBandwidthConvention_data()
{
    QTest::addColumn<int>("kind");
    QTest::addColumn<int>("n");
    QTest::addColumn<double>("factor");
    QTest::addColumn<int>("steps");
    // nccl-tests doc/PERFORMANCE.md: all-reduce 2(n-1)/n, all-gather / reduce-scatter /
    // all-to-all (n-1)/n, send/recv 1.
    QTest::addRow("all_reduce 8") << int(CollectiveKind::AllReduce) << 8 << 1.75 << 14;
    QTest::addRow("all_reduce 2") << int(CollectiveKind::AllReduce) << 2 << 1.0 << 2;
    QTest::addRow("all_gather 8") << int(CollectiveKind::AllGather) << 8 << 0.875 << 7;
    QTest::addRow("reduce_scatter 4") << int(CollectiveKind::ReduceScatter) << 4 << 0.75 << 3;
    QTest::addRow("all_to_all 16") << int(CollectiveKind::AllToAll) << 16 << 0.9375 << 15;
    QTest::addRow("send_recv 2") << int(CollectiveKind::SendRecv) << 2 << 1.0 << 1;
    QTest::addRow("single rank") << int(CollectiveKind::AllReduce) << 1 << 0.0 << 0;
}

void TestComm::busBandwidthConvention()
{
    QFETCH(int, kind);
    QFETCH(int, n);
    QFETCH(double, factor);
    QFETCH(int, steps);
    QCOMPARE(busBandwidthFactor(CollectiveKind(kind), n), factor);
    QCOMPARE(latencySteps(CollectiveKind(kind), n), steps);
    if (n < 2)
        return;
    // With no latency, busbw = (S / t) x factor equals the link's achieved bandwidth.
    DeviceProfile d = syntheticDevice("switch");
    d.intra_node.latency = 0;
    GroupPlacement g;
    g.size = n;
    const double S = 1e9;
    const double t = collectiveTime(CollectiveKind(kind), g, S, d);
    QCOMPARE(S / t * factor, 100e9 * 0.5);
}

void TestComm::timeModel_data()
{
    QTest::addColumn<int>("kind");
    QTest::addColumn<int>("size");
    QTest::addColumn<int>("stride");
    QTest::addColumn<QString>("topology");
    QTest::addColumn<double>("seconds");
    // Intra-node: 100 GB/s x 0.5, 10 us per step; inter-node: 25 GB/s x 0.8, 20 us per step.
    // all-reduce 8 of 1 GB: 14 x 10 us + 1e9 x 1.75 / 50e9 = 0.03514 s
    QTest::addRow("all_reduce 8 intra")
        << int(CollectiveKind::AllReduce) << 8 << 1 << "switch" << 0.03514;
    // all-gather 8: 7 x 10 us + 1e9 x 0.875 / 50e9 = 0.01757 s
    QTest::addRow("all_gather 8 intra")
        << int(CollectiveKind::AllGather) << 8 << 1 << "switch" << 0.01757;
    // send/recv across nodes (stride 8): 20 us + 1e9 / 20e9 = 0.05002 s
    QTest::addRow("send_recv inter")
        << int(CollectiveKind::SendRecv) << 2 << 8 << "switch" << 0.05002;
    // all-reduce over 16 ranks spans two nodes: 30 x 20 us + 1e9 x 1.875 / 20e9 = 0.09435 s
    QTest::addRow("all_reduce 16 inter")
        << int(CollectiveKind::AllReduce) << 16 << 1 << "switch" << 0.09435;
    // Full mesh, 4 of 8 devices: 3 of 7 links: 100e9 x 3/7 x 0.5 = 21.43 GB/s;
    // all-gather: 3 x 10 us + 1e9 x 0.75 / 21.4286e9 = 0.03503 s
    QTest::addRow("all_gather 4 mesh")
        << int(CollectiveKind::AllGather) << 4 << 1 << "full_mesh" << 0.03503;
}

void TestComm::timeModel()
{
    QFETCH(int, kind);
    QFETCH(int, size);
    QFETCH(int, stride);
    QFETCH(QString, topology);
    QFETCH(double, seconds);
    const DeviceProfile d = syntheticDevice(topology.toStdString());
    Cluster c;
    c.devices_per_node = 8;
    c.nodes = 4;
    const GroupPlacement g = placeGroup(size, stride, c, d.intra_node);
    QCOMPARE(collectiveTime(CollectiveKind(kind), g, 1e9, d), seconds);
}

void TestComm::placement_data()
{
    QTest::addColumn<int>("size");
    QTest::addColumn<int>("stride");
    QTest::addColumn<bool>("inter");
    QTest::addColumn<double>("share");
    // 8 devices per node, full mesh. Megatron order: tp stride 1, cp stride tp, dp stride tp x cp.
    QTest::addRow("tp8") << 8 << 1 << false << 1.0;
    QTest::addRow("tp4") << 4 << 1 << false << 3.0 / 7.0;
    QTest::addRow("dp2 after tp4") << 2 << 4 << false << 1.0 / 7.0;
    QTest::addRow("dp2 after tp8") << 2 << 8 << true << 1.0;
    QTest::addRow("dp16") << 16 << 1 << true << 1.0;
    QTest::addRow("cp4 after tp2") << 4 << 2 << false << 3.0 / 7.0;
}

void TestComm::placement()
{
    QFETCH(int, size);
    QFETCH(int, stride);
    QFETCH(bool, inter);
    QFETCH(double, share);
    Cluster c;
    c.devices_per_node = 8;
    c.nodes = 4;
    const GroupPlacement g = placeGroup(size, stride, c, syntheticDevice("full_mesh").intra_node);
    QCOMPARE(g.inter_node, inter);
    QCOMPARE(g.bandwidth_share, share);
}

void TestComm::overlap()
{
    // TP collectives stay on the critical path: exposed = count x time.
    for (const CommItem &it :
         inventory(casePlan("llama2-7b", 32768, {{"tp", 8}, {"sp", true}}, "full")))
        QCOMPARE(it.exposed_s, it.count * it.time_s);
    // DDP: at least the last bucket, at most everything.
    for (const CommItem &it : inventory(casePlan("llama2-7b", 32768, {{"dp", 8}}, "full"))) {
        QVERIFY(it.exposed_s >= it.time_s);
        QVERIFY(it.exposed_s <= it.count * it.time_s);
    }
    // FSDP forward: only the first layer's gather waits when a layer's forward hides the next
    // gather (32K tokens of a 7B layer take far longer than 386 MiB over HCCS).
    const auto fsdp =
        inventory(casePlan("llama2-7b", 32768, {{"dp", 8}, {"sharding", "full"}}, "full"));
    QCOMPARE(fsdp.front().exposed_s, fsdp.front().time_s);
    // At 256 tokens the layer is short and the gathers show.
    const auto small =
        inventory(casePlan("llama2-7b", 256, {{"dp", 8}, {"sharding", "full"}}, "full"));
    QVERIFY(small.front().exposed_s > 2 * small.front().time_s);
}

void TestComm::estimateCarriesInventory()
{
    const Catalog &cat = Catalog::builtin();
    const Plan p =
        parsePlan(casePlan("llama2-7b", 32768,
                           {{"tp", 4}, {"dp", 2}, {"sp", true}, {"sharding", "full"}}, "full"),
                  cat);
    const Estimate e = estimate(p, cat);
    QCOMPARE(int(e.communication.size()), 11);
    double exposed = 0;
    for (const Collective &c : e.communication)
        exposed += c.exposed_time_s;
    QCOMPARE(e.step.communication_s, exposed);
    const json j = estimateToJson(p, e);
    QCOMPARE(j["communication"].size(), size_t(11));
    QCOMPARE(j["communication"][5]["collective"].get<std::string>(), std::string("all_gather"));
    QCOMPARE(j["communication"][5]["group"].get<std::string>(), std::string("tp"));
    // The JSON keeps the engine's English note (the interface translates it where it shows it).
    QCOMPARE(j["communication"][0]["note"].get<std::string>(),
             std::string("layer parameters, forward (prefetched one layer ahead)"));
    // A collective's phase is one of the memory phases (the interface names them alike).
    for (const Collective &c : e.communication)
        QVERIFY2(phaseFromKey(c.phase) != Phase::Count, c.phase.c_str());
    for (CommPhase ph : {CommPhase::Forward, CommPhase::Backward, CommPhase::OptimizerStep})
        QCOMPARE(phaseKey(phaseFromKey(commPhaseKey(ph))), commPhaseKey(ph));
    QCOMPARE(phaseFromKey("optimizer step"), Phase::Count);
}

// modelParallelCommunication, the search's lower bound: the exposed times of every collective
// outside the data-parallel groups, summed in their order, whatever the sharding, and never above
// exposedCommunication (equal to it without a data-parallel group).
void TestComm::modelParallelPartBoundsTheTotal()
{
    const Catalog &cat = Catalog::builtin();
    const std::vector<json> layouts = {
        casePlan("llama2-7b", 4096, {{"dp", 2}, {"tp", 2}, {"pp", 2}, {"sp", true}}, "selective", 4),
        casePlan("mixtral-8x7b", 4096, {{"dp", 4}, {"tp", 2}, {"ep", 4}, {"sp", true}}, "full", 2),
        casePlan("llama2-7b", 32768, {{"dp", 2}, {"cp", 4}, {"cp_algo", "ring"}}, "none", 2),
        casePlan("llama2-7b", 32768, {{"dp", 2}, {"cp", 4}, {"cp_algo", "ulysses"}}, "none", 2),
        casePlan("llama2-7b", 4096, {{"dp", 1}, {"tp", 8}}, "none", 2),
    };
    int compared = 0;
    for (const json &base : layouts) {
        std::optional<double> mpOfLayout;
        for (const char *sharding : {"none", "optimizer", "full"}) {
            json j = base;
            j["parallel"]["sharding"] = sharding;
            if (j["parallel"]["dp"] == 1 && std::string(sharding) != "none")
                continue;
            const Plan p = parsePlan(j, cat);
            const DeviceProfile &dev = *cat.device(p.cluster.device);
            const FrameworkProfile &fw = *cat.framework(p.framework);
            const ComputeEstimate ce = estimateCompute(p, computeProfile(dev, fw, p.precision.compute));
            double outside = 0;
            bool anyDataParallel = false;
            int outsideItems = 0;
            for (const CommItem &it : inventory(j)) {
                if (it.group == CommGroup::DP || it.group == CommGroup::ExpertDP) {
                    anyDataParallel = true;
                } else {
                    outside += it.exposed_s;
                    ++outsideItems;
                }
            }
            const double mp = modelParallelCommunication(p, dev, fw, ce);
            const double all = exposedCommunication(p, dev, fw, ce);
            const QByteArray what = QByteArray::fromStdString(j["parallel"].dump());
            QVERIFY2(outsideItems > 0, what.constData()); // (a ring hidden behind attention: 0 s)
            QVERIFY2(mp == outside, what.constData());
            QVERIFY2(mp <= all, what.constData());
            if (!anyDataParallel)
                QVERIFY2(mp == all, what.constData());
            else
                QVERIFY2(mp < all, what.constData());
            if (mpOfLayout)
                QVERIFY2(mp == *mpOfLayout, what.constData()); // the sharding does not touch it
            mpOfLayout = mp;
            ++compared;
        }
    }
    QCOMPARE(compared, 13);
}

QTEST_APPLESS_MAIN(TestComm)
#include "tst_comm.moc"
