// HCCL buffers per communication group (core/hcclbuffers.h), hand-checked against MindSpeed's
// hccl_buffer_auto_adaptive (mindspeed/core/hccl_buffer/hccl_adaptive_func.py, commit
// 028de58c) and composed into the runtime reserve by the memory engine.
#include "core/catalog.h"
#include "core/errors.h"
#include "core/estimate.h"
#include "core/hcclbuffers.h"
#include "core/memory.h"
#include "core/plan.h"

#include <QTest>
#include <nlohmann/json.hpp>

using namespace shardscope;
using nlohmann::json;

namespace {

constexpr double kMiBd = 1024.0 * 1024.0;

/// Llama-2-7B (hidden 4096, 32 heads, 32 kv heads) on 16 Ascend 910B2: dp 2 x tp 4 x pp 2,
/// sequence parallel, seq 4096, micro-batch 1.
json ascendPlan(json memory = json::object())
{
    return json{{"format", "shardscope-plan"},
                {"version", 1},
                {"name", "7B on 910B"},
                {"model", {{"preset", "llama2-7b"}}},
                {"training", {{"seq_len", 4096}, {"micro_batch", 1}, {"grad_accum", 8}}},
                {"parallel", {{"dp", 2}, {"tp", 4}, {"pp", 2}, {"sp", true}, {"sharding", "optimizer"}}},
                {"memory", memory},
                {"framework", "megatron"},
                {"cluster", {{"device", "ascend-910b2"}, {"devices_per_node", 8}, {"nodes", 2}}}};
}

Plan parse(const json &j) { return parsePlan(j, Catalog::builtin()); }

std::vector<std::string> names(const std::vector<CommGroupBuffer> &g)
{
    std::vector<std::string> out;
    for (const CommGroupBuffer &c : g)
        out.push_back(c.group);
    return out;
}

const CommGroupBuffer *find(const std::vector<CommGroupBuffer> &g, const std::string &name)
{
    for (const CommGroupBuffer &c : g)
        if (c.group == name)
            return &c;
    return nullptr;
}

} // namespace

class TestHcclBuffers : public QObject
{
    Q_OBJECT
private slots:
    void defaultIsTheProfileFigure()
    {
        // Nothing set: every communicator 2 x 200 MiB. Megatron-Core's groups on stage 0: the
        // world group, the gradients' dp_cp (cp 1), the model-parallel group, tp, pp.
        const Plan plan = parse(ascendPlan());
        const MemoryEstimate m = estimateMemory(plan, Catalog::builtin());
        const RuntimeReserve &r = m.ranks.front().reserve;
        QCOMPARE(names(r.groups), (std::vector<std::string>{"world", "dp_cp", "mp", "tp", "pp"}));
        QCOMPARE(r.communicators, 5);
        QCOMPARE(r.comm_buffers, 5 * 400.0 * kMiBd);
        for (const CommGroupBuffer &g : r.groups) {
            QCOMPARE(g.mb, 200);
            QVERIFY(g.source == CommGroupBuffer::Source::Default);
        }
        // The last stage also all-reduces the logged loss over dp, a group of its own.
        QCOMPARE(names(m.ranks.back().reserve.groups),
                 (std::vector<std::string>{"world", "dp_cp", "dp", "mp", "tp", "pp"}));
        QCOMPARE(m.ranks.back().reserve.comm_buffers, 6 * 400.0 * kMiBd);
    }

    void pytorchGroups()
    {
        // PyTorch's default group is the data-parallel one: dp (FSDP over 16 ranks) and nothing
        // Megatron-Core adds.
        json j = ascendPlan();
        j["framework"] = "pytorch";
        j["parallel"] = {{"dp", 16}, {"sharding", "full"}};
        const MemoryEstimate m = estimateMemory(parse(j), Catalog::builtin());
        QCOMPARE(names(m.ranks.front().reserve.groups), (std::vector<std::string>{"dp"}));
        // Megatron at the same layout: the world group, dp_cp for the gradients, dp for the loss.
        j["framework"] = "megatron";
        j["parallel"] = {{"dp", 16}, {"sharding", "optimizer"}};
        const MemoryEstimate mg = estimateMemory(parse(j), Catalog::builtin());
        QCOMPARE(names(mg.ranks.front().reserve.groups), (std::vector<std::string>{"world", "dp_cp", "dp"}));
        QCOMPARE(mg.ranks.front().reserve.comm_buffers, 3 * 400.0 * kMiBd);
    }

    void moeGroups()
    {
        // DeepSeek-V3 on 256 x 910B2, tp 2 x pp 8 (5 layers last) x dp 16, ep 8 (etp = tp): the experts add the
        // alltoall group (exp), their own data-parallel group (dp x tp / (ep x etp) = 2 ranks,
        // not the 16 of dp), tp_cp for the router's counts and tp_ep_mp for the dispatcher's.
        json j = ascendPlan();
        j["model"] = {{"preset", "deepseek-v3"}};
        j["parallel"] = {{"dp", 16}, {"tp", 2}, {"pp", 8}, {"last_stage_layers", 5}, {"ep", 8}, {"sp", true},
                         {"sharding", "optimizer"}};
        j["cluster"]["nodes"] = 32;
        const MemoryEstimate m = estimateMemory(parse(j), Catalog::builtin());
        QCOMPARE(names(m.ranks.front().reserve.groups),
                 (std::vector<std::string>{"world", "dp_cp", "mp", "tp", "exp", "dp_modulo_exp", "tp_cp",
                                           "tp_ep_mp", "pp", "embd"}));
        // MindSpeed's adaptive table sizes mp and tp_cp at a constant 10 MB; world is not in it.
        Plan plan = parse(j);
        plan.memory.hccl_buffer_adaptive = true;
        QCOMPARE(adaptiveHcclBufferMb(plan, "mp"), 10);
        QCOMPARE(adaptiveHcclBufferMb(plan, "tp_cp"), 10);
        QCOMPARE(adaptiveHcclBufferMb(plan, "world"), 0);
        QCOMPARE(adaptiveHcclBufferMb(plan, "tp_ep_mp"), 0);
    }

    void adaptiveRule()
    {
        // tp under SP: 2 x ceil(4096 x 1 x 4096 / 2^20) = 2 x 16 = 32 MB; without SP twice that.
        // pp under SP: 2 x ceil(4096 / 4 x 4096 / 2^20) = 2 x 4 = 8 MB.
        Plan plan = parse(ascendPlan({{"hccl_buffer_adaptive", true}}));
        QCOMPARE(adaptiveHcclBufferMb(plan, "tp"), 32);
        QCOMPARE(adaptiveHcclBufferMb(plan, "pp"), 8);
        QCOMPARE(adaptiveHcclBufferMb(plan, "dp"), 0); // left at HCCL_BUFFSIZE
        QCOMPARE(adaptiveHcclBufferMb(plan, "exp"), 200); // no ep factor: the constant
        plan.parallel.sp = false;
        QCOMPARE(adaptiveHcclBufferMb(plan, "tp"), 64);
        QCOMPARE(adaptiveHcclBufferMb(plan, "pp"), 32); // 2 x ceil(4096 x 4096 / 2^20)
        // Rounding up: seq 4097 is 16.0039 MiB of elements -> 17 -> 34 MB.
        plan.parallel.sp = true;
        plan.training.seq_len = 4097;
        QCOMPARE(adaptiveHcclBufferMb(plan, "tp"), 34);
    }

    void adaptiveContextParallel()
    {
        // cp 2 ring, tp 2, 32 heads / 8 kv heads, hidden 4096, seq 8192:
        // cp = 2 x 2 x ceil(8192 / 2 x 4096 / 32 x 8 / 2 / 2^20) = 4 x ceil(2) = 8 MB.
        Plan plan = parse(ascendPlan({{"hccl_buffer_adaptive", true}}));
        plan.training.seq_len = 8192;
        plan.parallel.cp = 2;
        plan.parallel.tp = 2;
        plan.model.kv_heads = 8;
        plan.parallel.cp_algo = CpAlgo::Ring;
        QCOMPARE(adaptiveHcclBufferMb(plan, "cp"), 8);
        // Ulysses: 2 x ceil(8192 / 2 x 4096 / 2 / 2^20) = 2 x 8 = 16 MB.
        plan.parallel.cp_algo = CpAlgo::Ulysses;
        QCOMPARE(adaptiveHcclBufferMb(plan, "cp"), 16);
        // Hybrid cp 4 = ulysses 2 x ring 2: cp_ulysses 2 x ceil(8192 / 2 x 4096 / 2 / 2^20) = 16,
        // cp_ring 4 x ceil(8192 / 2 x 4096 / 32 x 8 / 2 / 2^20) = 8, the whole cp group 10.
        plan.parallel.cp = 4;
        plan.parallel.cp_algo = CpAlgo::Hybrid;
        plan.parallel.ulysses_degree = 2;
        QCOMPARE(adaptiveHcclBufferMb(plan, "cp_ulysses"), 16);
        QCOMPARE(adaptiveHcclBufferMb(plan, "cp_ring"), 8);
        QCOMPARE(adaptiveHcclBufferMb(plan, "cp"), 10);
    }

    void explicitOverAdaptiveAndDefault()
    {
        // HCCL_BUFFSIZE 100, dp_cp set to 300, adaptive on: world 2 x 100 (HCCL_BUFFSIZE), dp_cp
        // 2 x 300, mp 2 x 10 (adaptive), tp 2 x 32 (adaptive), pp 2 x 8 (adaptive); tp
        // explicitly 50 wins over the adaptive 32.
        const Plan plan = parse(ascendPlan({{"hccl_buffer_mb", 100},
                                            {"hccl_group_buffer", {{"dp_cp", 300}, {"tp", 50}}},
                                            {"hccl_buffer_adaptive", true}}));
        const MemoryEstimate m = estimateMemory(plan, Catalog::builtin());
        const std::vector<CommGroupBuffer> &g = m.ranks.front().reserve.groups;
        QCOMPARE(find(g, "world")->bytes, 200.0 * kMiBd);
        QCOMPARE(find(g, "dp_cp")->bytes, 600.0 * kMiBd);
        QCOMPARE(find(g, "mp")->bytes, 20.0 * kMiBd);
        QCOMPARE(find(g, "tp")->bytes, 100.0 * kMiBd);
        QVERIFY(find(g, "tp")->source == CommGroupBuffer::Source::Explicit);
        QCOMPARE(find(g, "pp")->bytes, 16.0 * kMiBd);
        QVERIFY(find(g, "pp")->source == CommGroupBuffer::Source::Adaptive);
        QCOMPARE(m.ranks.front().reserve.comm_buffers, (200.0 + 600.0 + 20.0 + 100.0 + 16.0) * kMiBd);
        // Only HCCL_BUFFSIZE: every group 2 x 100 MiB.
        const Plan only = parse(ascendPlan({{"hccl_buffer_mb", 100}}));
        QCOMPARE(estimateMemory(only, Catalog::builtin()).ranks.front().reserve.comm_buffers, 5 * 200.0 * kMiBd);
    }

    /// The memory floor's sum of the buffers is the sum of what each communicator is given, for
    /// the default, explicit, adaptive and NCCL sizes.
    void bytesAreTheGroupsSum()
    {
        const std::vector<std::string_view> groups = {"world", "dp_cp", "mp", "tp", "pp", "pp", "exp", "embd"};
        const Catalog &catalog = Catalog::builtin();
        for (const Plan &plan : {parse(ascendPlan()), parse(ascendPlan({{"hccl_buffer_mb", 100}})),
                                 parse(ascendPlan({{"hccl_buffer_mb", 100},
                                                   {"hccl_group_buffer", {{"dp_cp", 300}, {"tp", 50}}},
                                                   {"hccl_buffer_adaptive", true}}))}) {
            for (const char *device : {"ascend-910b2", "h100-80g"}) {
                const DeviceProfile &dev = *catalog.device(device);
                double sum = 0;
                for (const CommGroupBuffer &g : commGroupBuffers(plan, dev, groups))
                    sum += g.bytes;
                QVERIFY(sum > 0);
                QCOMPARE(commGroupBufferBytes(plan, dev, groups), sum);
            }
        }
        // The floor counts the first stage's whole reserve but the allocator's share.
        const Plan plan = parse(ascendPlan({{"hccl_buffer_adaptive", true}}));
        const RuntimeReserve &r0 = estimateMemory(plan, catalog).ranks.front().reserve;
        QCOMPARE(commGroupBufferBytes(plan, *catalog.device(plan.cluster.device),
                                      std::vector<std::string_view>{"world", "dp_cp", "mp", "tp", "pp"}),
                 r0.comm_buffers);
    }

    void groupNames()
    {
        // cp > 1: the gradient group is dp_cp; a middle stage has two pp communicators; tied
        // embeddings add the embedding group on the outer stages.
        json j = ascendPlan();
        j["parallel"] = {{"dp", 1}, {"tp", 2}, {"pp", 4}, {"cp", 2}, {"sp", true}};
        j["model"]["tied_embeddings"] = true;
        const MemoryEstimate m = estimateMemory(parse(j), Catalog::builtin());
        QCOMPARE(names(m.ranks[0].reserve.groups),
                 (std::vector<std::string>{"world", "dp_cp", "mp", "tp", "cp", "pp", "embd"}));
        QCOMPARE(names(m.ranks[1].reserve.groups),
                 (std::vector<std::string>{"world", "dp_cp", "mp", "tp", "cp", "pp", "pp"}));
    }

    void nvidiaKeepsThePerCommunicatorFigure()
    {
        json j = ascendPlan();
        j["cluster"]["device"] = "h100-80g";
        const Plan plan = parse(j);
        const DeviceProfile &dev = *Catalog::builtin().device("h100-80g");
        const MemoryEstimate m = estimateMemory(plan, Catalog::builtin());
        for (const CommGroupBuffer &g : m.ranks.front().reserve.groups) {
            QCOMPARE(g.bytes, dev.comm_buffer_bytes_per_group);
            QCOMPARE(g.mb, 0);
        }
        QVERIFY(explainCommGroups(plan, dev, m.ranks.front().reserve.groups).english().find("NCCL") != std::string::npos);
        // The options are refused there, naming the field.
        j["memory"] = {{"hccl_buffer_adaptive", true}};
        try {
            parse(j);
            QFAIL("an HCCL option on an NCCL device was accepted");
        } catch (const PlanError &e) {
            QCOMPARE(e.field(), std::string("memory.hccl_buffer_adaptive"));
        }
    }

    void groupStrings()
    {
        std::map<std::string, int> g;
        std::string error;
        QVERIFY(parseHcclGroupBuffer("dp:200; tp:300;exp:400", g, &error));
        QCOMPARE(g, (std::map<std::string, int>{{"dp", 200}, {"exp", 400}, {"tp", 300}}));
        QCOMPARE(formatHcclGroupBuffer(g), std::string("dp:200;exp:400;tp:300"));
        QVERIFY(parseHcclGroupBuffer("dp:200,tp:300", g, &error)); // ',' as verl needs
        QCOMPARE(g.size(), size_t(2));
        QVERIFY(parseHcclGroupBuffer("", g, &error));
        QVERIFY(g.empty());
        QVERIFY(!parseHcclGroupBuffer("xx:200", g, &error));
        QVERIFY(error.find("xx") != std::string::npos);
        QVERIFY(!parseHcclGroupBuffer("tp:0", g, &error));
        QVERIFY(!parseHcclGroupBuffer("tp:300:1", g, &error));
    }

    void explanationNamesTheGroups()
    {
        const Plan plan = parse(ascendPlan({{"hccl_buffer_adaptive", true}}));
        const MemoryEstimate m = estimateMemory(plan, Catalog::builtin());
        const std::string text =
            explainCommGroups(plan, *Catalog::builtin().device("ascend-910b2"), m.ranks.front().reserve.groups).english();
        QVERIFY2(text.find("tp 2 x 32 MB (adaptive)") != std::string::npos, text.c_str());
        QVERIFY2(text.find("dp_cp 2 x 200 MB (HCCL_BUFFSIZE)") != std::string::npos, text.c_str());
        QVERIFY2(text.find("mp 2 x 10 MB (adaptive)") != std::string::npos, text.c_str());
    }
};

QTEST_GUILESS_MAIN(TestHcclBuffers)
#include "tst_hcclbuffers.moc"
