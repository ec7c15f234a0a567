// Megatron-Core's contiguous param / grad buffers and the distributed optimizer's shards
// (core/distoptimizer.h), hand-checked element by element, then composed by the memory engine
// for a Llama-2-7B shape under Megatron's distributed optimizer.
#include "core/catalog.h"
#include "core/distoptimizer.h"
#include "core/errors.h"
#include "core/estimate.h"
#include "core/framework.h"
#include "core/plan.h"

#include <QTest>
#include <thread>
#include <nlohmann/json.hpp>

using namespace shardscope;
using nlohmann::json;

namespace {

/// Llama-2-7B's shape (hidden 4096, FFN 11008, 32 heads, 32 layers) with one added token
/// (32001, as fine-tunes that add a pad token have): Megatron pads it to 32256 under tp 2.
json llamaPlan(int tp, int dp)
{
    return json{{"format", "shardscope-plan"},
                {"version", 1},
                {"name", "7B distributed optimizer"},
                {"model", {{"preset", "llama2-7b"}, {"vocab", 32001}}},
                {"training", {{"seq_len", 4096}, {"micro_batch", 1}, {"grad_accum", 8}}},
                {"precision",
                 {{"params", "bf16"}, {"grads", "bf16"}, {"master_weights", "fp32"},
                  {"optimizer", "adamw"}, {"optimizer_state", "fp32"}, {"compute", "bf16"}}},
                {"parallel", {{"dp", dp}, {"tp", tp}, {"pp", 1}, {"sp", true}, {"sharding", "optimizer"}}},
                {"memory", {{"recompute", "selective"}}},
                {"framework", "megatron"},
                {"cluster", {{"device", "h100-80g"}, {"devices_per_node", 8}, {"nodes", 1}}}};
}

// One Llama-2-7B decoder layer on a tp-2 rank: two norms of 4096, q / k / v / o of
// 4096 x 4096 / 2 = 8,388,608 each, gate / up / down of 4096 x 11008 / 2 = 22,544,384 each:
// 8,192 + 33,554,432 + 67,633,152 = 101,195,776 elements. 32 layers: 3,238,264,832.
constexpr double kLayer = 101195776.0;
constexpr double kLayers = 32.0 * kLayer;
// The padded vocabulary's embedding and output layer, 32256 x 4096 / 2 = 66,060,288 each; the
// final norm 4096.
constexpr double kTable = 32256.0 * 4096.0 / 2.0;
constexpr double kRank = kLayers + 2.0 * kTable + 4096.0; // 3,370,389,504

Plan parse(const json &j) { return parsePlan(j, Catalog::builtin()); }

} // namespace

class TestDistOptimizer : public QObject
{
    Q_OBJECT

private slots:
    void defaults()
    {
        // distributed_data_parallel.py: max(40000000, 1000000 x dp).
        QCOMPARE(defaultBucketElements(4), 40000000.0);
        QCOMPARE(defaultBucketElements(64), 64000000.0);
        // param_layout.py bucket_end_divisor: lcm(dp, 128), with the busbw option lcm(., 2^16).
        QCOMPARE(bucketEndDivisor(4, false), 128.0);
        QCOMPARE(bucketEndDivisor(3, false), 384.0);
        QCOMPARE(bucketEndDivisor(6, true), 196608.0);
    }

    void oneBucketAlignedAndPadded()
    {
        // Forward order 100, 200, 50 laid out in reverse: 50 at [0, 50); 200 starts at 64
        // (64-element alignment) and ends at 264; 100 starts at 320, ends at 420; the bucket
        // end is padded to a multiple of lcm(4, 128) = 128: 512. Shards of 128: rank 0 holds
        // 50 + (128 - 64) = 114 parameter elements, rank 1 128, rank 2 (264 - 256) + (384 -
        // 320) = 72, rank 3 420 - 384 = 36; the fullest is rank 1 with 128.
        BufferOptions o;
        o.dp = 4;
        const BufferLayout l = layoutBuffer({{100}, {200}, {50}}, o);
        QCOMPARE(l.unpadded, 350.0);
        QCOMPARE(l.padded, 512.0);
        QCOMPARE(l.buckets, 1);
        QCOMPARE(l.shardElements, 128.0);
        QCOMPARE(l.shardPadded, 128.0);
    }

    void mindSpeedBufferPad()
    {
        // --param-and-grad-buffer-pad 512 with bf16 parameters: 512 / gcd(512, 2) = 256 elements
        // a shard, lcm(4 x 256, 128) = 1024. The same 100, 200, 50 end at 420 -> 1024; shards of
        // 256: rank 0 holds 50 + (256 - 64) = 242, rank 1 (264 - 256) + 100 = 108, ranks 2, 3
        // nothing.
        QCOMPARE(bucketEndDivisor(4, false, 512, 2), 1024.0);
        QCOMPARE(bucketEndDivisor(4, false, 512, 4), 512.0); // fp32 parameters: 128 elements
        QCOMPARE(bucketEndDivisor(3, true, 512, 2), 196608.0); // lcm(768, 128, 65536)
        BufferOptions o;
        o.dp = 4;
        o.padBytes = 512;
        const BufferLayout l = layoutBuffer({{100}, {200}, {50}}, o);
        QCOMPARE(l.padded, 1024.0);
        QCOMPARE(l.shardElements, 242.0);
    }

    void bucketsCloseAtBucketSize()
    {
        // bucket_size 150, dp 2: 50 at [0, 50) (50 < 150), 200 at [64, 264): 264 >= 150 closes
        // the bucket, its end padded to a multiple of 128: 384. 100 at [384, 484), end 512.
        // Bucket 0's shards of 192: rank 0 50 + 128 = 178, rank 1 264 - 192 = 72; bucket 1's
        // of 64: rank 0 64, rank 1 36. Rank 0: 242 of the 350.
        BufferOptions o;
        o.dp = 2;
        o.bucketElements = 150;
        const BufferLayout l = layoutBuffer({{100}, {200}, {50}}, o);
        QCOMPARE(l.buckets, 2);
        QCOMPARE(l.padded, 512.0);
        QCOMPARE(l.largestBucket, 384.0);
        QCOMPARE(l.shardElements, 242.0);
    }

    void sharedEmbeddingGetsItsOwnBucket()
    {
        // A tied embedding on a pipeline stage (shared_embedding): the 300 before it closes at
        // the aligned start 320 (end padded to 384), the embedding [384, 1384) closes its own
        // bucket, padded to 1408.
        BufferOptions o;
        o.dp = 2;
        const BufferLayout l = layoutBuffer({{1000, true}, {300}}, o);
        QCOMPARE(l.buckets, 2);
        QCOMPARE(l.padded, 1408.0);
        QCOMPARE(l.unpadded, 1300.0);
    }

    void ddpWithoutDistributedOptimizerIsUnpadded()
    {
        // _compute_default_per_buffer_param_layout: no alignment, no padding.
        BufferOptions o;
        o.dp = 4;
        o.distributedOptimizer = false;
        const BufferLayout l = layoutBuffer({{100}, {200}, {50}}, o);
        QCOMPARE(l.padded, 350.0);
    }

    void vocabularyPadding()
    {
        // vocab_size_with_padding: a multiple of 128 x tp. 32001 under tp 2 -> 126 x 256 = 32256;
        // the plan's 1 leaves it; the pytorch profile does not pad.
        const Catalog &cat = Catalog::builtin();
        json j = llamaPlan(2, 4);
        QCOMPARE(paddedVocab(parse(j), *cat.framework("megatron")), int64_t(32256));
        j["model"]["vocab_divisible_by"] = 1;
        QCOMPARE(paddedVocab(parse(j), *cat.framework("megatron")), int64_t(32001));
        j["model"]["vocab_divisible_by"] = 64;
        QCOMPARE(paddedVocab(parse(j), *cat.framework("megatron")), int64_t(32128)); // 251 x 128
        j["model"].erase("vocab_divisible_by");
        j["framework"] = "pytorch";
        QCOMPARE(paddedVocab(parse(j), *cat.framework("pytorch")), int64_t(32001));
    }

    void llama7bStageBuffers()
    {
        // tp 2, dp 4, one bucket (no --overlap-grad-reduce): every tensor is a multiple of 64
        // and 3,370,389,504 = 128 x 26,331,168, so the buffer has no padding and each rank
        // owns exactly a quarter, 842,597,376 elements.
        const Plan p = paddedVocabPlan(parse(llamaPlan(2, 4)), *Catalog::builtin().framework("megatron"));
        MegatronDdp ddp;
        const StageBuffers b = megatronStageBuffers(p, 0, ddp);
        QCOMPARE(b.dense.unpadded, kRank);
        QCOMPARE(b.dense.padded, kRank);
        QCOMPARE(b.dense.buckets, 1);
        QCOMPARE(b.dense.shardElements, kRank / 4.0);
        QCOMPARE(b.expert.unpadded, 0.0);
        // With --overlap-grad-reduce, buckets of 40M elements in backprop order (a layer's
        // tensors as core/layers.h lists them, reversed: down, up, gate, o, v, k, q, the norms):
        // the output layer alone (66,060,288 >= 40M); the final norm with layer 31's down and up
        // (45,092,864); its gate, o, v, k (47,710,208); then for each of layers 30 .. 0 the
        // previous q and norms with down and up (53,485,568) and gate, o, v, k; last layer 0's q
        // and norms with the embedding, 8,396,800 + 66,060,288 = 74,457,088, the largest:
        // 1 + 2 + 31 x 2 + 1 = 66 buckets. Every bucket end is a tensor end, a multiple of 128:
        // still no padding.
        ddp.overlapGradReduce = true;
        const StageBuffers o = megatronStageBuffers(p, 0, ddp);
        QCOMPARE(o.dense.padded, kRank);
        QCOMPARE(o.dense.buckets, 66);
        QCOMPARE(o.dense.largestBucket, 74457088.0);
        // Later pipeline stages never bucket (dist_utils.py: pp_rank > 0).
        json two = llamaPlan(2, 4);
        two["parallel"]["pp"] = 2;
        two["cluster"]["nodes"] = 2;
        // Stage 0: layer 15's down + up, its gate, o, v, k, two for each of layers 14 .. 0, and
        // layer 0's q and norms with the embedding: 2 + 15 x 2 + 1.
        const Plan p2 = parse(two);
        QCOMPARE(megatronStageBuffers(p2, 1, ddp).dense.buckets, 1);
        QCOMPARE(megatronStageBuffers(p2, 0, ddp).dense.buckets, 1 + 16 * 2);
    }

    // The buffers kept per thread are the buffers made afresh: calls that alternate dp, tp,
    // stages, options and models give what a new thread (an empty cache) computes for each.
    void keptBuffersAreFresh()
    {
        struct Call
        {
            Plan plan;
            int stage;
            MegatronDdp ddp;
        };
        std::vector<Call> calls;
        for (int round = 0; round < 3; ++round)
            for (int tp : {1, 2})
                for (int dp : {2, 4, 8}) {
                    json j = llamaPlan(tp, dp);
                    j["parallel"]["pp"] = 2;
                    j["parallel"]["sp"] = tp > 1;
                    j["cluster"]["devices_per_node"] = 2 * tp * dp;
                    if (round == 1)
                        j["model"]["vocab"] = 32000; // another model
                    MegatronDdp ddp;
                    ddp.overlapGradReduce = round == 2;
                    ddp.padBytes = round == 2 ? 512 : 0;
                    const Plan p = parse(j);
                    calls.push_back({p, 0, ddp});
                    calls.push_back({p, 1, ddp});
                }
        std::vector<StageBuffers> here, fresh;
        for (const Call &c : calls)
            here.push_back(megatronStageBuffers(c.plan, c.stage, c.ddp));
        for (const Call &c : calls)
            std::thread([&] { fresh.push_back(megatronStageBuffers(c.plan, c.stage, c.ddp)); }).join();
        for (size_t i = 0; i < calls.size(); ++i) {
            QCOMPARE(here[i].dense.padded, fresh[i].dense.padded);
            QCOMPARE(here[i].dense.shardElements, fresh[i].dense.shardElements);
            QCOMPARE(here[i].dense.buckets, fresh[i].dense.buckets);
        }
        // and they differ where the inputs do
        QVERIFY(here[0].dense.unpadded != here[1].dense.unpadded);
        QVERIFY(here[0].dense.shardElements != here[2].dense.shardElements);
    }

    void unevenStagesFollowTheLayout()
    {
        // pp 3 with first / last stages of 10 layers: the middle stage holds the other 12. Each
        // Llama-2-7B layer is 202,383,360 parameters (101,191,680 per rank under tp 2, norms
        // replicated: 4 x 4096 x 4096 / 2 + 3 x 4096 x 11008 / 2 + 2 x 4096 = 101,195,776);
        // the embedding and the output layer are 32000 x 4096 / 2 = 65,536,000 each, the final
        // norm 4,096.
        json j = llamaPlan(2, 4);
        j["model"]["vocab"] = 32000;
        j["model"]["vocab_divisible_by"] = 1;
        j["parallel"]["dp"] = 1;
        j["parallel"]["sharding"] = "none";
        j["parallel"]["pp"] = 3;
        j["parallel"]["first_stage_layers"] = 10;
        j["parallel"]["last_stage_layers"] = 10;
        j["cluster"]["devices_per_node"] = 6;
        const Plan p = parse(j);
        MegatronDdp ddp;
        const double layer = 101195776.0;
        QCOMPARE(megatronStageBuffers(p, 0, ddp).dense.unpadded, 10 * layer + 65536000.0);
        QCOMPARE(megatronStageBuffers(p, 1, ddp).dense.unpadded, 12 * layer);
        QCOMPARE(megatronStageBuffers(p, 2, ddp).dense.unpadded, 10 * layer + 4096.0 + 65536000.0);
    }

    void oddDataParallelPads()
    {
        // dp 3 on a stage whose tensors sum to an odd multiple of 64: Llama-2-7B under tp 2 with
        // the vocabulary left at 32001 (vocab_divisible_by 1): the tables are 32001 x 2048 =
        // 65,538,048 each; the rank holds 3,238,264,832 + 131,076,096 + 4,096 = 3,369,345,024
        // elements. lcm(3, 128) = 384: 3,369,345,024 / 384 = 8,774,336 exactly, so pad the
        // other way: dp 5, lcm 640: 3,369,345,024 / 640 = 5,264,601.6 -> 5,264,602 x 640 =
        // 3,369,345,280, 256 padding elements; shards of 673,869,056, the last rank holding
        // 256 fewer parameter elements.
        json j = llamaPlan(2, 5);
        j["model"]["vocab_divisible_by"] = 1;
        j["cluster"]["devices_per_node"] = 10;
        const Plan p = parse(j);
        const StageBuffers b = megatronStageBuffers(p, 0, MegatronDdp{});
        QCOMPARE(b.dense.unpadded, 3369345024.0);
        QCOMPARE(b.dense.padded, 3369345280.0);
        QCOMPARE(b.dense.shardElements, 673869056.0);
    }

    void memoryComposesTheBuffers()
    {
        // The memory engine at the optimizer step, rank 0 of tp 2 x dp 4 (3,370,389,504
        // elements, padded vocabulary): bf16 param_data 6,740,779,008 B, fp32 grad_data
        // 13,481,558,016 B, the fp32 master shard 842,597,376 x 4 = 3,370,389,504 B and Adam's
        // two fp32 states 6,740,779,008 B. No reduce bucket: the reduce-scatter is in place.
        const Estimate e = estimate(parse(llamaPlan(2, 4)), Catalog::builtin());
        QCOMPARE(e.padded_vocab, int64_t(32256));
        const Breakdown &s = e.memory.ranks.front().phases[size_t(Phase::OptimizerStep)];
        QCOMPARE(s[Component::Parameters], 2.0 * kRank);
        QCOMPARE(s[Component::Gradients], 4.0 * kRank);
        QCOMPARE(s[Component::MasterWeights], 4.0 * kRank / 4.0);
        QCOMPARE(s[Component::OptimizerStates], 8.0 * kRank / 4.0);
        QCOMPARE(s[Component::CommunicationBuffers], 0.0);
        // dp 5 with the vocabulary unpadded: the 256 padding elements are in both buffers, the
        // fullest rank's shard is a fifth of the padded buffer.
        json j = llamaPlan(2, 5);
        j["model"]["vocab_divisible_by"] = 1;
        j["cluster"]["devices_per_node"] = 10;
        const Estimate f = estimate(parse(j), Catalog::builtin());
        const Breakdown &t = f.memory.ranks.front().phases[size_t(Phase::OptimizerStep)];
        QCOMPARE(t[Component::Parameters], 2.0 * 3369345280.0);
        QCOMPARE(t[Component::Gradients], 4.0 * 3369345280.0);
        QCOMPARE(t[Component::MasterWeights], 4.0 * 673869056.0);
        QCOMPARE(t[Component::OptimizerStates], 8.0 * 673869056.0);
        // With MindSpeed's 512-byte pad the divisor is lcm(5 x 256, 128) = 1280: 3,369,345,024
        // / 1280 = 2,632,300.8 -> 2,632,301 x 1280 = 3,369,345,280, the same 256 padding elements.
        j["memory"]["param_and_grad_buffer_pad"] = 512;
        const Estimate g = estimate(parse(j), Catalog::builtin());
        QCOMPARE(g.memory.ranks.front().phases[size_t(Phase::OptimizerStep)][Component::Gradients],
                 4.0 * 3369345280.0);
    }
};

QTEST_GUILESS_MAIN(TestDistOptimizer)
#include "tst_distoptimizer.moc"
