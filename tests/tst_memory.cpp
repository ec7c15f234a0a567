// Mechanisms of the memory engine, each checked against a hand calculation.
#include "core/catalog.h"
#include "core/errors.h"
#include "core/memory.h"
#include "core/timeline.h"
#include "core/units.h"
#include "planvariants.h"

#include <QTest>
#include <algorithm>
#include <nlohmann/json.hpp>
#include <numeric>

using namespace shardscope;
using nlohmann::json;

namespace {

const double P7 = 6738415616.0; // Llama-2-7B parameters

/// Llama-2-7B, 4K tokens, DDP over 8 x 910B (the plan variants' base).
json basePlan() { return testing::variantBase(); }

MemoryEstimate run(const json &patch)
{
    json j = basePlan();
    j.merge_patch(patch);
    return estimateMemory(parsePlan(j, Catalog::builtin()), Catalog::builtin());
}

double comp(const RankMemory &r, Phase p, Component c) { return r.phases[size_t(p)][c]; }

double states(const RankMemory &r)
{
    const Phase p = Phase::OptimizerStep;
    return comp(r, p, Component::Parameters) + comp(r, p, Component::Gradients) +
           comp(r, p, Component::MasterWeights) + comp(r, p, Component::OptimizerStates);
}

} // namespace

class TestMemory : public QObject
{
    Q_OBJECT

private slots:

    // The memory floor's activation side (floorActivations) is what layouts differing only in
    // their model states' sharding and placement share: the floor from it is the floor, exactly,
    // over every sharding, HSDP group and state offload of plans with and without pipeline
    // stages, recompute, swap-attention, offloaded activations and MoE. Under autocast (PyTorch,
    // fp32 parameters) it differs between FSDP and the rest, as memory.h says.
    void floorActivationsAreSharedAcrossStates()
    {
        const Catalog &cat = Catalog::builtin();
        const std::vector<json> bases = {
            {{"framework", "pytorch"}, {"precision", {{"params", "fp32"}}}},
            {{"framework", "pytorch"}, {"parallel", {{"dp", 4}, {"pp", 2}}}, {"memory", {{"recompute", "selective"}}}},
            {{"framework", "megatron"},
             {"model", {{"preset", "deepseek-v2-lite"}}},
             {"parallel", {{"dp", 4}, {"tp", 2}, {"sp", true}, {"ep", 2}}},
             {"memory", {{"recompute", "full"}, {"recompute_method", "block"}, {"recompute_num_layers", 3}}}},
            {{"framework", "megatron"},
             {"parallel", {{"dp", 4}, {"pp", 2}}},
             {"memory", {{"recompute", "none"}, {"swap_attention", true}, {"recompute_activation_function", true}}}},
            {{"framework", "megatron"}, {"parallel", {{"dp", 4}, {"cp", 2}}}, {"memory", {{"recompute", "none"}, {"offload", {{"activations", true}}}}}},
            {{"framework", "megatron"},
             {"training", {{"grad_accum", 4}}},
             {"parallel", {{"dp", 4}, {"pp", 2}}},
             {"memory", {{"recompute", "none"}, {"offload", {{"activations", true}}}}}},
        };
        const std::vector<json> offloads = {json::object(),
                                            {{"optimizer", true}},
                                            {{"optimizer", true}, {"params", true}, {"grads", true}}};
        int compared = 0;
        for (size_t b = 0; b < bases.size(); ++b) {
            FloorActivations fsdpSide, otherSide;
            for (const char *sharding : {"none", "optimizer", "grads", "full"}) {
                const bool fsdp = std::string(sharding) == "full";
                json side = basePlan();
                side.merge_patch(bases[b]);
                side["parallel"]["sharding"] = fsdp ? "full" : "none";
                const Plan sidePlan = parsePlan(side, cat);
                const DeviceProfile &dev = *cat.device(sidePlan.cluster.device);
                const FrameworkProfile &fw = *cat.framework(sidePlan.framework);
                const FloorActivations act = floorActivations(sidePlan, dev, fw);
                (fsdp ? fsdpSide : otherSide) = act;
                for (const int dpShard : {0, 2}) {
                    for (const json &offload : offloads) {
                        json j = side;
                        j["parallel"]["sharding"] = sharding;
                        if (dpShard > 0)
                            j["parallel"]["dp_shard"] = dpShard;
                        for (const auto &[k, v] : offload.items())
                            j["memory"]["offload"][k] = v;
                        Plan p;
                        try {
                            p = parsePlan(j, cat);
                        } catch (const PlanError &) {
                            continue; // HSDP without FSDP, parameters offloaded without it
                        }
                        const double direct = memoryFloorBytes(p, dev, fw);
                        QVERIFY(direct > 0);
                        QCOMPARE(memoryFloorBytes(p, dev, fw, act), direct);
                        ++compared;
                    }
                }
            }
            if (b == 0)
                QVERIFY(!(fsdpSide == otherSide)); // the residual stream in fp32 under autocast
        }
        QVERIFY(compared >= 60);
    }
    // The floor's runtime reserve (floorReserveBytes) reads of the layout only what memory.h
    // says: under MindSpeed's adaptive HCCL buffers on a MoE model with tp, cp and ep, the
    // sharding, offload, recompute, swap-attention and interleaving leave it as it is, and the
    // floor from it is the floor; dp_shard, the CP algorithm, the micro-batch and sp change it.
    void floorReserveReadsItsKeyOnly()
    {
        const Catalog &cat = Catalog::builtin();
        json base = basePlan();
        base.merge_patch({{"framework", "megatron"},
                          {"model", {{"preset", "mixtral-8x7b"}}},
                          {"training", {{"grad_accum", 4}}},
                          {"parallel", {{"dp", 2}, {"tp", 2}, {"cp", 2}, {"pp", 2}, {"ep", 2}, {"sp", true}}},
                          {"memory", {{"hccl_buffer_adaptive", true}, {"recompute", "none"}}},
                          {"cluster", {{"nodes", 2}}}});
        const Plan basePlanned = parsePlan(base, cat);
        const DeviceProfile &dev = *cat.device(basePlanned.cluster.device);
        const FrameworkProfile &fw = *cat.framework(basePlanned.framework);
        const double reserve = floorReserveBytes(basePlanned, dev, fw);
        QVERIFY(reserve > dev.context_reserve_bytes);
        const std::vector<json> alike = {
            {{"parallel", {{"sharding", "optimizer"}}}},
            {{"parallel", {{"sharding", "full"}}}, {"memory", {{"offload", {{"optimizer", true}}}}}},
            {{"memory", {{"recompute", "full"}, {"recompute_method", "block"}, {"recompute_num_layers", 2}}}},
            {{"memory", {{"recompute", "selective"}, {"swap_attention", true}}}},
            {{"memory", {{"offload", {{"activations", true}}}}}},
            {{"parallel", {{"pp_schedule", "interleaved"}, {"virtual_stages", 2}}}},
        };
        for (const json &patch : alike) {
            json j = base;
            j.merge_patch(patch);
            const Plan p = parsePlan(j, cat);
            QCOMPARE(floorReserveBytes(p, dev, fw), reserve);
            QVERIFY2(memoryFloorBytes(p, dev, fw, floorActivations(p, dev, fw), reserve) == memoryFloorBytes(p, dev, fw), patch.dump().c_str());
        }
        const std::vector<json> apart = {
            {{"parallel", {{"sharding", "full"}, {"dp", 4}, {"dp_shard", 2}}}, {"cluster", {{"nodes", 4}}}},
            {{"parallel", {{"cp_algo", "ulysses"}}}},
            {{"training", {{"micro_batch", 2}, {"grad_accum", 2}}}},
            {{"parallel", {{"sp", false}}}},
        };
        for (const json &patch : apart) {
            json j = base;
            j.merge_patch(patch);
            const Plan p = parsePlan(j, cat);
            json ref = j; // the same cluster, sharded like the base: what dp_shard alone changes
            if (patch.contains("parallel") && patch["parallel"].contains("dp_shard"))
                ref["parallel"].erase("dp_shard");
            QVERIFY2(floorReserveBytes(p, dev, fw) != floorReserveBytes(parsePlan(ref == j ? base : ref, cat), dev, fw),
                     patch.dump().c_str());
        }
    }

    // Activations offloaded to the host: each model chunk in flight on the first stage keeps its
    // last layer's on the device until its backward, and the chunk running one layer more. In
    // flight (hand-counted): 1F1B min(pp, m) = 4 of pp 4, m 8; interleaved (pp - 1) x 2 +
    // (v - 1) x pp + 1 = 5 of pp 2, v 2; GPipe m = 4. The backward peak holds that many plus one
    // of Llama-2-7B's layers, and the formula says so (without dropout, whose embedding mask
    // would add its own count).
    void offloadedActivationsPerChunkInFlight()
    {
        const Catalog &cat = Catalog::builtin();
        struct Case
        {
            const char *schedule;
            int pp, v, accum, inFlight;
        };
        for (const Case &c : {Case{"1f1b", 4, 1, 8, 4}, Case{"interleaved", 2, 2, 4, 5}, Case{"gpipe", 2, 1, 4, 4}}) {
            json j = basePlan();
            j.merge_patch({{"framework", "megatron"},
                           {"training", {{"seq_len", 8192}, {"grad_accum", c.accum},
                                         {"dropout", {{"hidden", 0}, {"attention", 0}}}}},
                           {"parallel", {{"dp", 8 / c.pp}, {"pp", c.pp}, {"pp_schedule", c.schedule}, {"virtual_stages", c.v},
                                         {"sharding", "optimizer"}}},
                           {"memory", {{"recompute", "none"}, {"offload", {{"activations", true}}}}}});
            const Plan p = parsePlan(j, cat);
            const MemoryEstimate m = estimateMemory(p, cat);
            const double layer = savedBytesPerToken(p, cat, 0) * 8192;
            QVERIFY(layer > 0);
            QCOMPARE(comp(m.ranks[0], Phase::Backward, Component::Activations), (c.inFlight + 1) * layer);
            const MemoryExplanation e = explainMemory(p, cat, m.ranks[0], Phase::Backward);
            const std::string formula = e[size_t(Component::Activations)].formula.english();
            QVERIFY2(formula.find("(" + std::to_string(c.inFlight) + " model chunk(s) in flight + 1)") != std::string::npos,
                     formula.c_str());
        }
    }

    // The hidden dropout after the embedding (Megatron-Core's LanguageModelEmbedding) keeps a
    // one-byte mask of the hidden states on the first stage until the embedding's backward:
    // Megatron GPT 6.7B at 4096 tokens, one micro-batch, 4096 x 4096 B. It goes with the
    // dropout, and with a frozen embedding (LoRA: its output needs no gradient).
    void embeddingDropoutMask()
    {
        const Catalog &cat = Catalog::builtin();
        auto plan = [&](const json &patch) {
            json j = basePlan();
            j.merge_patch({{"model", {{"preset", "megatron-gpt-7b"}}},
                           {"framework", "megatron"},
                           {"training", {{"seq_len", 4096}}},
                           {"parallel", {{"sharding", "optimizer"}}}});
            j.merge_patch(patch);
            return parsePlan(j, cat);
        };
        auto activations = [&](const Plan &p) {
            const MemoryEstimate m = estimateMemory(p, cat);
            const RankMemory &r = m.ranks[0];
            return std::pair{r.peak()[Component::Activations],
                             explainMemory(p, cat, r, r.peak_phase)[size_t(Component::Activations)].formula.english()};
        };
        const auto [with, withText] = activations(plan(json::object()));
        // Under the base's full recompute the layers keep only their inputs, so without the
        // hidden dropout the mask alone goes.
        const Plan noDropout = plan({{"training", {{"dropout", {{"hidden", 0}}}}}});
        const auto [without, withoutText] = activations(noDropout);
        QCOMPARE(with - without, 4096.0 * 4096);
        QVERIFY2(withText.find(" + the embedding's dropout mask, 4096 B/token (16.0 MiB per micro-batch") !=
                     std::string::npos,
                 withText.c_str());
        QVERIFY2(withoutText.find("embedding's dropout mask") == std::string::npos, withoutText.c_str());
        const auto [lora, loraText] =
            activations(plan({{"training", {{"method", "lora"}, {"lora", {{"rank", 8}, {"targets", {"q", "v"}}}}}}}));
        QVERIFY(lora > 0);
        QVERIFY2(loraText.find("embedding's dropout mask") == std::string::npos, loraText.c_str());
    }

    // HSDP (parallel.dp_shard): FSDP over groups of 4 of the 8 data-parallel ranks holds twice
    // the states of plain FSDP over 8: Llama-2-7B's 6,738,415,616 parameters x 2 B / 4.
    void hsdpShardsOverTheGroup()
    {
        nlohmann::json j = testing::variantBase();
        j["parallel"]["sharding"] = "full";
        const Plan fsdp = parsePlan(j, Catalog::builtin());
        j["parallel"]["dp_shard"] = 4;
        const Plan hsdp = parsePlan(j, Catalog::builtin());
        const auto params = [](const Plan &p) {
            return estimateMemory(p, Catalog::builtin()).ranks[0].phases[size_t(Phase::OptimizerStep)][Component::Parameters];
        };
        QCOMPARE(params(hsdp), 6738415616.0 * 2 / 4);
        QCOMPARE(params(fsdp), 6738415616.0 * 2 / 8);
    }

    // ZeRO (Rajbhandari et al. 2020), mixed-precision Adam with k = 12:
    // stage 0: 16P, stage 1: 4P + 12P/d, stage 2: 2P + 14P/d, stage 3: 16P/d.
    void zeroStages_data()
    {
        QTest::addColumn<QString>("sharding");
        QTest::addColumn<double>("bytesPerParam");
        const double d = 8;
        QTest::addRow("none") << QStringLiteral("none") << 16.0;
        QTest::addRow("optimizer") << QStringLiteral("optimizer") << 4.0 + 12.0 / d;
        QTest::addRow("grads") << QStringLiteral("grads") << 2.0 + 14.0 / d;
        QTest::addRow("full") << QStringLiteral("full") << 16.0 / d;
    }

    void zeroStages()
    {
        QFETCH(QString, sharding);
        QFETCH(double, bytesPerParam);
        const auto m = run({{"framework", "deepspeed"},
                            {"parallel", {{"sharding", sharding.toStdString()}}}});
        QCOMPARE(m.ranks.size(), size_t(1));
        QVERIFY(qFuzzyCompare(states(m.ranks[0]), bytesPerParam * P7));
    }

    // Megatron distributed optimizer: 2 (bf16 params) + 4 (fp32 main_grad) + 12/d.
    void megatronDistributedOptimizer()
    {
        const auto m = run({{"framework", "megatron"}, {"parallel", {{"sharding", "optimizer"}}}});
        QVERIFY(qFuzzyCompare(states(m.ranks[0]), (6.0 + 12.0 / 8) * P7));
        // The main_grad buffer is persistent: present in forward already.
        QVERIFY(qFuzzyCompare(comp(m.ranks[0], Phase::Forward, Component::Gradients), 4.0 * P7));
        // After the step (report_memory's "allocated"): the bf16 parameters, the fp32 main_grad
        // buffer (zeroed, never freed) and this rank's eighth of the fp32 master weights and Adam
        // moments; no activations, pipeline buffers or temporaries.
        const Breakdown &after = m.ranks[0].after_step;
        QVERIFY(qFuzzyCompare(after[Component::Parameters], 2.0 * P7));
        QVERIFY(qFuzzyCompare(after[Component::Gradients], 4.0 * P7));
        QVERIFY(qFuzzyCompare(after[Component::MasterWeights] + after[Component::OptimizerStates], 12.0 / 8 * P7));
        QVERIFY(qFuzzyCompare(after.total(), (6.0 + 12.0 / 8) * P7));
    }

    // PyTorch DDP keeps bucket copies of every gradient (gradient_as_bucket_view=False);
    // gradients exist only from backward (set_to_none).
    void ddpBucketsAndSetToNone()
    {
        const auto m = run(json::object());
        const RankMemory &r = m.ranks[0];
        QVERIFY(qFuzzyCompare(comp(r, Phase::OptimizerStep, Component::CommunicationBuffers), 2.0 * P7));
        QCOMPARE(comp(r, Phase::Forward, Component::Gradients), 0.0);
        QVERIFY(qFuzzyCompare(comp(r, Phase::OptimizerStep, Component::Gradients), 2.0 * P7));
        // foreach AdamW: one fp32 temporary as large as the master weights.
        QVERIFY(qFuzzyCompare(comp(r, Phase::OptimizerStep, Component::Transient), 4.0 * P7));
        // After the step the gradients are gone (zero_grad(set_to_none=True)); the buckets stay.
        QCOMPARE(r.after_step[Component::Gradients], 0.0);
        QCOMPARE(r.after_step[Component::Transient], 0.0);
        QVERIFY(qFuzzyCompare(r.after_step[Component::CommunicationBuffers], 2.0 * P7));
        QVERIFY(qFuzzyCompare(r.after_step.total(), (2.0 + 4.0 + 8.0 + 2.0) * P7));
        // With accumulation the gradients persist into the next micro-batch's forward.
        const auto acc = run({{"training", {{"grad_accum", 4}}}});
        QVERIFY(qFuzzyCompare(comp(acc.ranks[0], Phase::Forward, Component::Gradients), 2.0 * P7));
    }

    void optimizerImplementations()
    {
        const double fused = comp(run({{"precision", {{"optimizer_impl", "fused"}}}}).ranks[0],
                                  Phase::OptimizerStep, Component::Transient);
        QCOMPARE(fused, 0.0);
        // for_loop: two temporaries of the largest tensor (the 32000 x 4096 embedding), fp32.
        const double loop = comp(run({{"precision", {{"optimizer_impl", "for_loop"}}}}).ranks[0],
                                 Phase::OptimizerStep, Component::Transient);
        QVERIFY(qFuzzyCompare(loop, 2.0 * 32000 * 4096 * 4.0));
        // Under pipeline parallelism each stage updates its own tensors: a middle stage of
        // Llama-2-7B under megatron (on an H100: no scaled copies, core/gradclip.h) holds no
        // embedding; its largest is linear_fc1, 2 x 11008 x 4096 (the 32000 x 4096 embedding
        // is the first stage's).
        const auto piped = run({{"framework", "megatron"},
                                {"precision", {{"optimizer_impl", "for_loop"}}},
                                {"parallel", {{"dp", 2}, {"pp", 4}, {"sharding", "optimizer"}}},
                                {"training", {{"grad_accum", 4}}},
                                {"cluster", {{"device", "h100-80g"}}}});
        // (Beside the GEMM workspaces, transient in every phase.)
        auto stepTemps = [&](int stage) {
            const RankMemory &r = piped.ranks[size_t(stage)];
            return comp(r, Phase::OptimizerStep, Component::Transient) -
                   comp(r, Phase::Forward, Component::Transient);
        };
        QCOMPARE(piped.ranks[1].stage, 1);
        QVERIFY(qFuzzyCompare(stepTemps(1), 2.0 * (2 * 11008 * 4096) * 4.0));
        QVERIFY(qFuzzyCompare(stepTemps(0), 2.0 * 32000 * 4096 * 4.0));
    }

    // Full recompute keeps one bf16 layer input per layer: L * s * h * 2 bytes.
    void fullRecomputeKeepsLayerInputs()
    {
        const auto m = run(json::object());
        const double acts = comp(m.ranks[0], Phase::Forward, Component::Activations);
        const double layerInputs = 32.0 * 4096 * 4096 * 2;
        // plus the final norm (fp32 copy + bf16 normalized) and the head input: 8h per token.
        const double final = 4096.0 * 4096 * 8;
        QVERIFY(qFuzzyCompare(acts, layerInputs + final));
    }

    // Hugging Face loss: bf16 logits + fp32 copy + fp32 log-softmax = 10 bytes per logit at
    // the end of forward; 12 in the loss backward. Megatron's fused loss: 6.
    void logitsAndLoss()
    {
        const double logits = 4096.0 * 32000;
        const RankMemory r = run(json::object()).ranks[0];
        QVERIFY(qFuzzyCompare(comp(r, Phase::Forward, Component::LogitsAndLoss), 10.0 * logits));
        const RankMemory mg = run({{"framework", "megatron"}}).ranks[0];
        QVERIFY(qFuzzyCompare(comp(mg, Phase::Forward, Component::LogitsAndLoss), 6.0 * logits));
        // Vocabulary-parallel under TP: a quarter each.
        const RankMemory tp = run({{"parallel", {{"dp", 2}, {"tp", 4}}}}).ranks[0];
        QVERIFY(qFuzzyCompare(comp(tp, Phase::Forward, Component::LogitsAndLoss), 10.0 * logits / 4));
    }

    // Megatron-LM's legacy model against Megatron-Core, term by term (Llama-2-7B, 4096 tokens,
    // 32 layers, no TP): unfused SwiGLU keeps silu(gate) beside gate, up and the product (+2f B
    // per layer token); flash in the (b, s) layout keeps the output's (s, b) copy too (+2q B);
    // the out-of-place max shift holds one more fp32 logit at forward (+4 B per logit). The
    // megatron-legacy profile is exactly the three together.
    void megatronLegacyTerms()
    {
        const double T = 4096, L = 32, f = 11008, q = 4096, logits = T * 32000;
        const json mg = {{"framework", "megatron"}, {"memory", {{"recompute", "none"}}}};
        auto with = [&](const json &memory) {
            json j = mg;
            j["memory"].merge_patch(memory);
            return run(j).ranks[0];
        };
        const RankMemory core = run(mg).ranks[0];
        auto act = [](const RankMemory &r) { return comp(r, Phase::Forward, Component::Activations); };
        auto loss = [](const RankMemory &r) { return comp(r, Phase::Forward, Component::LogitsAndLoss); };
        const RankMemory unfused = with({{"fused_swiglu", false}});
        QCOMPARE(act(unfused) - act(core), L * T * 2 * f);
        QCOMPARE(loss(unfused), loss(core));
        const RankMemory copied = with({{"flash_output_copy", true}});
        QCOMPARE(act(copied) - act(core), L * T * 2 * q);
        QCOMPARE(loss(core), 6.0 * logits);
        const RankMemory shifted = with({{"loss", "fused_fp32_copy"}});
        QCOMPARE(loss(shifted), 10.0 * logits);
        QCOMPARE(act(shifted), act(core));
        // Backward holds the same: the softmax as the gradient and the logits' gradient.
        QCOMPARE(comp(shifted, Phase::Backward, Component::LogitsAndLoss),
                 comp(core, Phase::Backward, Component::LogitsAndLoss));

        const RankMemory all =
            with({{"fused_swiglu", false}, {"flash_output_copy", true}, {"loss", "fused_fp32_copy"}});
        json lj = mg;
        lj["framework"] = "megatron-legacy";
        const RankMemory legacy = run(lj).ranks[0];
        for (int p = 0; p < kPhaseCount; ++p)
            for (int c = 0; c < kComponentCount; ++c)
                QCOMPARE(legacy.phases[size_t(p)][Component(c)], all.phases[size_t(p)][Component(c)]);
        QCOMPARE(legacy.peak_bytes, all.peak_bytes);
        // And the other way: the legacy profile with the plan's overrides is Megatron-Core's.
        lj["memory"].merge_patch({{"fused_swiglu", true}, {"flash_output_copy", false}, {"loss", "fused_fp32"}});
        QCOMPARE(run(lj).ranks[0].peak_bytes, core.peak_bytes);
    }

    // No recompute, flash: per-layer bytes per token in bf16 for Llama-2-7B (h = q = kv = 4096,
    // f = 11008) on the 910B: norms 2 x 6h, q/k/v input 2h, q,k,v 2(q + 2kv), output 2q,
    // torch_npu's softmax max and sum 2 x 8 x 4a (CUDA's kernels: a 4a log-sum-exp), FFN input
    // 2h, SwiGLU 4 x 2f.
    void perLayerActivations()
    {
        const RankMemory r = run({{"memory", {{"recompute", "none"}}}}).ranks[0];
        const double h = 4096, f = 11008, a = 32;
        const double perToken = 12 * h + 2 * h + 2 * (3 * h) + 2 * h + 64 * a + 2 * h + 8 * f;
        const double expected = 32 * perToken * 4096 + 4096.0 * 8 * h;
        QVERIFY(qFuzzyCompare(comp(r, Phase::Forward, Component::Activations), expected));
    }

    // Sequence parallelism divides the norm and residual regions by tp as well.
    void sequenceParallelDividesEverything()
    {
        const double noTp = comp(run({{"memory", {{"recompute", "none"}}}}).ranks[0],
                                 Phase::Forward, Component::Activations);
        const double tp = comp(run({{"memory", {{"recompute", "none"}}}, {"parallel", {{"dp", 1}, {"tp", 8}}}}).ranks[0],
                               Phase::Forward, Component::Activations);
        const double sp = comp(run({{"memory", {{"recompute", "none"}}}, {"parallel", {{"dp", 1}, {"tp", 8}, {"sp", true}}}}).ranks[0],
                               Phase::Forward, Component::Activations);
        QVERIFY(tp < noTp / 2);
        QVERIFY(sp < tp);
        QVERIFY(std::fabs(sp - noTp / 8) / (noTp / 8) < 0.01);
    }

    // 1F1B: stage s holds pp - s micro-batches; the first stage has the embedding, the last
    // the logits and the head.
    void pipelineStages()
    {
        const auto m = run({{"parallel", {{"dp", 2}, {"pp", 4}}}, {"training", {{"grad_accum", 8}}},
                            {"memory", {{"recompute", "none"}}}});
        QCOMPARE(m.ranks.size(), size_t(4));
        QVERIFY(m.ranks[0].has_embedding && !m.ranks[0].has_head);
        QVERIFY(m.ranks[3].has_head && !m.ranks[3].has_embedding);
        const double a0 = comp(m.ranks[0], Phase::Forward, Component::Activations);
        const double a2 = comp(m.ranks[2], Phase::Forward, Component::Activations);
        QVERIFY(qFuzzyCompare(a0 / a2, 4.0 / 2.0));
        QCOMPARE(comp(m.ranks[0], Phase::Forward, Component::LogitsAndLoss), 0.0);
        QVERIFY(comp(m.ranks[3], Phase::Forward, Component::LogitsAndLoss) > 0);
        QCOMPARE(m.ranks[1].rank, 2); // dp 2 ranks per stage
    }

    // MindSpeed's --enable-recompute-layers-per-pp-rank: recompute_num_layers counts a stage's
    // layers over its chunks (layer l of chunk c ranks l x v + c). Llama-2-7B over tp 2 x pp 4
    // with 4 chunks of 2 layers per stage, 32 micro-batches: at the end of stage s's warm-up
    // ((pp - s - 1) x 2 + (v - 1) x pp + 1 forwards, forward k on chunk (k / pp) mod v) chunk c
    // holds 7, 4, 4, 4 micro-batches on stage 0 and 4, 4, 4, 3 on stage 2. With n = 1 only
    // chunk 0 recomputes its first layer; with n = 4 every chunk does, which is plain block
    // recompute of 1 layer per chunk. The timeline's activations at the peak against those
    // counts, from a layer that keeps everything (recompute none: 2 layers x 19 or 15 units)
    // and a chunk with one layer recomputed (plain block).
    void recomputePerPipelineRank_data()
    {
        QTest::addColumn<int>("stage");
        QTest::addColumn<QString>("units"); // micro-batches of chunks 0-3 in flight
        QTest::newRow("stage 0") << 0 << QStringLiteral("7 4 4 4");
        QTest::newRow("stage 2") << 2 << QStringLiteral("4 4 4 3");
    }
    void recomputePerPipelineRank()
    {
        QFETCH(int, stage);
        QFETCH(QString, units);
        std::vector<int> inFlight;
        for (const QString &n : units.split(QLatin1Char(' ')))
            inFlight.push_back(n.toInt());
        // Without dropout: the embedding's mask would sit with chunk 0 of stage 0 alone.
        const json layout = {{"framework", "megatron"},
                             {"training", testing::ciTraining(32)},
                             {"parallel", testing::tp2Pp4Interleaved4("optimizer")}};
        auto activations = [&](const json &memory) -> double {
            json patch = layout;
            patch["memory"] = memory;
            const MemoryEstimate m = run(patch);
            const RankMemory &r = m.ranks[size_t(stage)];
            if (r.stage != stage)
                qFatal("rank %d is stage %d", stage, r.stage);
            return r.phases[size_t(r.peak_phase)][Component::Activations];
        };
        const json block = {
            {"recompute", "full"}, {"recompute_method", "block"}, {"recompute_num_layers", 1}};
        json perRank = block;
        perRank["recompute_layers_per_pp_rank"] = true;
        const double none = activations({{"recompute", "none"}});
        const double plain = activations(block);
        const double onePerStage = activations(perRank);
        perRank["recompute_num_layers"] = 4;
        QCOMPARE(activations(perRank), plain);
        const int total = std::accumulate(inFlight.begin(), inFlight.end(), 0);
        const double full = none / (2.0 * total); // one kept layer, one micro-batch
        const double chunk0 = plain / total;      // a recomputed layer and a kept one
        const double expected = inFlight[0] * chunk0 + (total - inFlight[0]) * 2.0 * full;
        QVERIFY2(qFuzzyCompare(onePerStage, expected),
                 qPrintable(QStringLiteral("%1 against %2").arg(onePerStage).arg(expected)));
        QVERIFY(onePerStage > plain && onePerStage < none);

        // Its rules: block recompute under framework megatron, at most a stage's layers.
        json bad = layout;
        bad["memory"] = {{"recompute", "full"}, {"recompute_layers_per_pp_rank", true}};
        QVERIFY_THROWS_EXCEPTION(PlanError, run(bad));
        bad["memory"] = perRank;
        bad["memory"]["recompute_num_layers"] = 9;
        QVERIFY_THROWS_EXCEPTION(PlanError, run(bad));
        bad["memory"]["recompute_num_layers"] = 8;
        run(bad); // a stage's 8 layers: allowed, where a chunk holds 2
        bad["framework"] = "pytorch";
        QVERIFY_THROWS_EXCEPTION(PlanError, run(bad));
        // Saved only when set, and read back.
        json j = basePlan();
        j.merge_patch(layout);
        j["memory"] = perRank;
        const Plan p = parsePlan(j, Catalog::builtin());
        QVERIFY(p.memory.recompute_layers_per_pp_rank);
        QVERIFY(planToJson(p)["memory"]["recompute_layers_per_pp_rank"] == json(true));
        QVERIFY(parsePlan(planToJson(p), Catalog::builtin()).memory.recompute_layers_per_pp_rank);
        QVERIFY(!planToJson(parsePlan(basePlan(), Catalog::builtin()))["memory"].contains(
            "recompute_layers_per_pp_rank"));
    }

    void interleavedHoldsMore()
    {
        const auto plain = run({{"parallel", {{"dp", 2}, {"pp", 4}}}, {"training", {{"grad_accum", 8}}}});
        const auto inter = run({{"parallel", {{"dp", 2}, {"pp", 4}, {"pp_schedule", "interleaved"}, {"virtual_stages", 2}}},
                                {"training", {{"grad_accum", 8}}}});
        // Rank 0: (pp-1)*2 + (v-1)*pp + 1 = 11 chunks of L/8 layers = 1.375 stage-equivalents,
        // against 4 micro-batches of the whole stage under 1F1B... per chunk count:
        const double p = comp(plain.ranks[0], Phase::Forward, Component::Activations);
        const double i = comp(inter.ranks[0], Phase::Forward, Component::Activations);
        QVERIFY(qFuzzyCompare(i / p, (11.0 / 2.0) / 4.0));
    }

    void offloadRemovesStates()
    {
        const RankMemory r = run({{"parallel", {{"sharding", "full"}}},
                                  {"memory", {{"offload", {{"optimizer", true}, {"params", true}, {"grads", true}}}}}}).ranks[0];
        QCOMPARE(comp(r, Phase::OptimizerStep, Component::MasterWeights), 0.0);
        QCOMPARE(comp(r, Phase::OptimizerStep, Component::OptimizerStates), 0.0);
        QCOMPARE(comp(r, Phase::OptimizerStep, Component::Parameters), 0.0);
        QCOMPARE(comp(r, Phase::OptimizerStep, Component::Gradients), 0.0);
        // Layers are still gathered on the device for compute.
        QVERIFY(comp(r, Phase::Forward, Component::CommunicationBuffers) > 0);
    }

    // The master copy and the optimizer states are laid out like the parameter tensors, by
    // their elements, so they stay whole where no parameter is stored on the device: offloaded
    // parameters under full sharding, and MindSpeed's reuse-fp32-param at dp 1 (the bf16
    // parameters live entirely in the fp32 master). Each against the same plan with its
    // parameters on the device: the same master and states, after the step and in the
    // optimizer step.
    void modelStatesWithoutStoredParameters_data()
    {
        QTest::addColumn<QByteArray>("plan");
        QTest::addColumn<QByteArray>("without");
        QTest::newRow("fsdp, parameters offloaded")
            << QByteArray(R"({"parallel": {"sharding": "full"},
                              "memory": {"offload": {"params": true}}})")
            << QByteArray(R"({"parallel": {"sharding": "full"}})");
        QTest::newRow("reuse-fp32-param, dp 1")
            << QByteArray(R"({"framework": "megatron",
                              "parallel": {"dp": 1, "tp": 8, "sharding": "optimizer"},
                              "precision": {"reuse_fp32_param": true}})")
            << QByteArray(R"({"framework": "megatron",
                              "parallel": {"dp": 1, "tp": 8, "sharding": "optimizer"}})");
    }
    void modelStatesWithoutStoredParameters()
    {
        QFETCH(QByteArray, plan);
        QFETCH(QByteArray, without);
        const RankMemory r = run(json::parse(plan.toStdString())).ranks[0];
        const RankMemory ref = run(json::parse(without.toStdString())).ranks[0];
        QCOMPARE(r.after_step[Component::Parameters], 0.0);
        QVERIFY(ref.after_step[Component::Parameters] > 0);
        for (Component c : {Component::MasterWeights, Component::OptimizerStates}) {
            QVERIFY(ref.after_step[c] > 0);
            QCOMPARE(r.after_step[c], ref.after_step[c]);
            QCOMPARE(comp(r, Phase::OptimizerStep, c), comp(ref, Phase::OptimizerStep, c));
        }
    }

    void fsdpGathersLayers()
    {
        const RankMemory r = run({{"parallel", {{"sharding", "full"}}}}).ranks[0];
        const double layer = 202383360.0 * 2; // one Llama-2-7B layer in bf16
        const double root = (2.0 * 32000 * 4096 + 4096) * 2;
        // The forward peak is the loss: the root module stays gathered (FSDP2 does not reshard
        // the root after forward) and the last layer's flat all-gather buffer is freed only by the
        // root's post-forward, after the head and the loss; every layer is resharded by then.
        QVERIFY(qFuzzyCompare(comp(r, Phase::Forward, Component::CommunicationBuffers), layer + root));
        // reshard_after_forward=False: every layer stays gathered until its backward.
        const RankMemory keep = run({{"parallel", {{"sharding", "full"}, {"reshard_after_forward", false}}}}).ranks[0];
        QVERIFY(qFuzzyCompare(comp(keep, Phase::Forward, Component::CommunicationBuffers), 33 * layer + root));
    }

    void componentsSumToPeak_data()
    {
        QTest::addColumn<QString>("patch");
        QTest::addRow("ddp") << QStringLiteral("{}");
        QTest::addRow("fsdp") << QStringLiteral(R"({"parallel": {"sharding": "full"}})");
        QTest::addRow("pp4") << QStringLiteral(R"({"parallel": {"dp": 2, "pp": 4}, "training": {"grad_accum": 4}})");
        QTest::addRow("eager") << QStringLiteral(R"({"memory": {"attention": "eager", "recompute": "none"}})");
        QTest::addRow("cp") << QStringLiteral(R"({"parallel": {"dp": 2, "cp": 4, "sharding": "full"}})");
        QTest::addRow("moe") << QStringLiteral(R"({"model": {"preset": "mixtral-8x7b"}, "parallel": {"ep": 8, "sharding": "full"}})");
    }

    void componentsSumToPeak()
    {
        QFETCH(QString, patch);
        const auto m = run(json::parse(patch.toStdString()));
        for (const RankMemory &r : m.ranks) {
            double peak = 0;
            for (const Breakdown &b : r.phases)
                peak = std::max(peak, b.total());
            QCOMPARE(r.peak_bytes, peak);
            QCOMPARE(r.peak().total(), r.peak_bytes);
            for (double v : r.peak().bytes)
                QVERIFY(v >= 0 && std::isfinite(v));
            QCOMPARE(m.fits, r.peak_bytes + r.reserve.total() <= m.hbm_bytes);
            const MemoryExplanation ex = explainMemory(parsePlan([&] { json j = basePlan(); j.merge_patch(json::parse(patch.toStdString())); return j; }(),
                                                                 Catalog::builtin()),
                                                       Catalog::builtin(), r, r.peak_phase);
            for (const auto &e : ex)
                QVERIFY(!e.formula.empty());
        }
    }

    /// Placeholders are replaced in one pass, by number, as QString::arg numbers them.
    void substitution()
    {
        auto sub = [](const char *pattern, std::vector<std::string> args) {
            return QString::fromStdString(substitute(pattern, args));
        };
        QCOMPARE(sub("%1 x %2 = %3", {"a", "b", "c"}), QStringLiteral("a x b = c"));
        QCOMPARE(sub("%2 before %1", {"a", "b"}), QStringLiteral("b before a"));
        QCOMPARE(sub("%1%2", {"a", "b"}), QStringLiteral("ab"));
        // An argument is not scanned again; a '%' that starts no placeholder stays.
        QCOMPARE(sub("%1 and %2", {"%2", "50%"}), QStringLiteral("%2 and 50%"));
        QCOMPARE(sub("100% of %1, %0", {"x"}), QStringLiteral("100% of x, %0"));
        // A placeholder without an argument stays as it is.
        QCOMPARE(sub("%1 and %3", {"a"}), QStringLiteral("a and %3"));
        QCOMPARE(sub("%10 after %1", {"1", "2", "3", "4", "5", "6", "7", "8", "9", "ten"}),
                 QStringLiteral("ten after 1"));
        QCOMPARE(placeholders("%2 x %1 = %10, 5%"), (std::vector<int>{2, 1, 10}));

        Text t;
        t.add("%1 x %2 B", {"1,024", "2"}).add("; held at the %1 peak: %2", {"forward", "0.50 GiB"});
        QCOMPARE(QString::fromStdString(t.english()),
                 QStringLiteral("1,024 x 2 B; held at the forward peak: 0.50 GiB"));
        QVERIFY(Text().empty());
        QCOMPARE(QString::fromStdString(Text().english()), QString());
    }

    void explanationsAreWellFormed_data()
    {
        QTest::addColumn<int>("variant");
        for (size_t i = 0; i < testing::planVariants().size(); ++i)
            QTest::addRow("%s", testing::planVariants()[i].name) << int(i);
    }

    /// For every kind of rank, phase and component: every phrase has one argument per
    /// placeholder (%1 .. %n, none missing, none extra), english() is the phrases substituted
    /// in order, and the bytes the chart shows appear in the formula.
    void explanationsAreWellFormed()
    {
        QFETCH(int, variant);
        const Plan plan = testing::variantPlan(testing::planVariants()[size_t(variant)]);
        const MemoryEstimate m = estimateMemory(plan, Catalog::builtin());
        for (const RankMemory &r : m.ranks) {
            for (int p = 0; p < kPhaseCount; ++p) {
                const MemoryExplanation ex = explainMemory(plan, Catalog::builtin(), r, Phase(p));
                const Breakdown &b = r.phases[size_t(p)];
                for (int c = 0; c < kComponentCount; ++c) {
                    const ComponentExplanation &e = ex[size_t(c)];
                    QVERIFY(!e.formula.empty());
                    for (const Text *t : {&e.formula, &e.assumptions}) {
                        std::string joined;
                        for (const Phrase &ph : t->phrases) {
                            QVERIFY(ph.text && *ph.text);
                            std::vector<int> used = placeholders(ph.text);
                            std::sort(used.begin(), used.end());
                            used.erase(std::unique(used.begin(), used.end()), used.end());
                            std::vector<int> want(ph.args.size());
                            std::iota(want.begin(), want.end(), 1);
                            QVERIFY2(used == want, ph.text);
                            for (const std::string &a : ph.args)
                                QVERIFY2(!a.empty(), ph.text);
                            joined += substitute(ph.text, ph.args);
                        }
                        QCOMPARE(QString::fromStdString(t->english()), QString::fromStdString(joined));
                        QVERIFY2(placeholders(joined).empty(), joined.c_str());
                    }
                    const std::string formula = e.formula.english();
                    switch (Component(c)) {
                    case Component::Parameters:
                    case Component::Gradients:
                    case Component::Activations:
                    case Component::CommunicationBuffers:
                    case Component::Transient:
                        // "held at the <phase> peak: <bytes>"
                        QVERIFY2(formula.find(std::string(phaseKey(Phase(p))) + " peak: " +
                                              formatGiB(b.bytes[size_t(c)])) != std::string::npos,
                                 formula.c_str());
                        break;
                    case Component::MasterWeights:
                    case Component::OptimizerStates:
                        if (b.bytes[size_t(c)] > 0)
                            QVERIFY2(formula.find(formatGiB(b.bytes[size_t(c)])) != std::string::npos,
                                     formula.c_str());
                        break;
                    case Component::LogitsAndLoss:
                        if (b.bytes[size_t(c)] > 0)
                            QVERIFY2(formula.find(formatGiB(b.bytes[size_t(c)])) != std::string::npos,
                                     formula.c_str());
                        // The logits' product ("T tokens x V vocab x B = ...") never claims
                        // what the phase's peak does not hold: past the loss it says so.
                        else if (r.has_head && formula.find(" vocab x ") != std::string::npos &&
                                 formula.find("chunks of") == std::string::npos)
                            QVERIFY2(formula.find("while the loss runs") != std::string::npos, formula.c_str());
                        break;
                    case Component::Count:
                        break;
                    }
                }
            }
        }
    }

    // Sequence parallelism's all-gathered linear input (seq 4096 x hidden 4096 x 2 B = 32 MiB):
    // Megatron's local linears (MindSpeed on Ascend, Megatron-LM's legacy model) keep it in the
    // global memory buffer for the run, a communication buffer allocated once; Transformer
    // Engine's layers and PyTorch's SequenceParallel make it afresh for each GEMM, a transient
    // in forward and backward.
    void sequenceParallelGatherBuffer_data()
    {
        QTest::addColumn<QString>("framework");
        QTest::addColumn<QString>("device");
        QTest::addColumn<bool>("sp");
        QTest::addColumn<bool>("kept");
        QTest::newRow("mindspeed on 910b") << "megatron"
                                           << "ascend-910b2" << true << true;
        QTest::newRow("megatron legacy on h100") << "megatron-legacy"
                                                 << "h100-80g" << true << true;
        QTest::newRow("transformer engine on h100") << "megatron"
                                                    << "h100-80g" << true << false;
        QTest::newRow("pytorch on 910b") << "pytorch"
                                         << "ascend-910b2" << true << false;
        QTest::newRow("no sp") << "megatron"
                               << "ascend-910b2" << false << false;
    }
    void sequenceParallelGatherBuffer()
    {
        QFETCH(QString, framework);
        QFETCH(QString, device);
        QFETCH(bool, sp);
        QFETCH(bool, kept);
        const double gathered = 4096.0 * 4096 * 2;
        json j = basePlan();
        j.merge_patch({{"framework", framework.toStdString()},
                       {"parallel", {{"dp", 2}, {"tp", 4}, {"sp", sp}, {"sharding", "optimizer"}}},
                       {"cluster", {{"device", device.toStdString()}}}});
        const Plan plan = parsePlan(j, Catalog::builtin());
        const MemoryEstimate m = estimateMemory(plan, Catalog::builtin());
        const StepTimeline t = memoryTimeline(plan, Catalog::builtin(), 0);
        double buffer = 0, forwardWork = 0;
        for (const TimelineTensor &x : t.tensors) {
            if (x.kind == TensorKind::SpGatherBuffer) {
                buffer += x.bytes;
                QCOMPARE(x.part, StepPart::Setup);
                QCOMPARE(x.free_event, -1);
            }
            if (x.kind == TensorKind::ForwardWorkingSet)
                forwardWork = std::max(forwardWork, x.bytes);
        }
        QCOMPARE(buffer, kept ? gathered : 0.0);
        // Nothing else of this plan's forward needs working memory (flash attention, no CP).
        QCOMPARE(forwardWork, sp && !kept ? gathered : 0.0);
        // Megatron's buffer stays after the step (no other communication buffer here).
        QCOMPARE(m.ranks[0].after_step[Component::CommunicationBuffers], kept ? gathered : 0.0);
        const std::string text =
            explainMemory(plan, Catalog::builtin(), m.ranks[0],
                          Phase::Forward)[size_t(Component::CommunicationBuffers)]
                .formula.english();
        QCOMPARE(text.find("sequence-parallel all-gather buffer") != std::string::npos, kept);
    }

    // Pipeline parallelism's activations between stages. Megatron receives each micro-batch's
    // input into a fresh tensor that the model chunk keeps (set_input_tensor) and whose gradient
    // backward fills: after the step every chunk that receives its input (all but the model's
    // first) holds the last one and its gradient, made by the step's last backwards and dropped
    // by the next step's forwards. Frameworks without that keep a send and a receive buffer at
    // each stage boundary for the run.
    void pipelineInputs_data()
    {
        QTest::addColumn<QString>("framework");
        QTest::newRow("megatron") << "megatron";
        QTest::newRow("megatron-legacy") << "megatron-legacy";
        QTest::newRow("deepspeed") << "deepspeed";
    }
    void pipelineInputs()
    {
        QFETCH(QString, framework);
        const bool kept = framework.startsWith(QLatin1String("megatron"));
        const double hidden = 4096.0 * 4096 * 2; // one micro-batch's activations, bf16
        json j = basePlan();
        j.merge_patch({{"framework", framework.toStdString()},
                       {"training", {{"grad_accum", 4}}},
                       {"parallel",
                        {{"dp", 2}, {"tp", 1}, {"pp", 4}, {"pp_schedule", "interleaved"}, {"virtual_stages", 2},
                         {"sharding", "optimizer"}}},
                       {"cluster", {{"device", "h100-80g"}}}});
        const Plan plan = parsePlan(j, Catalog::builtin());
        const MemoryEstimate m = estimateMemory(plan, Catalog::builtin());
        QCOMPARE(int(m.ranks.size()), 4);
        for (const RankMemory &r : m.ranks) {
            const bool first = r.stage == 0, last = r.stage == 3;
            // DeepSpeed's ZeRO-1 reduce bucket is a communication buffer too (not after the step).
            const double bucket = kept ? 0.0 : comp(r, Phase::Forward, Component::CommunicationBuffers) -
                                                   r.after_step[Component::CommunicationBuffers];
            const double buffers = kept ? 0.0 : (first || last ? 1.0 : 2.0) * hidden;
            const double inputs = kept ? 2.0 * (first ? 1 : 2) * hidden : 0.0;
            QCOMPARE(bucket, kept ? 0.0 : 1e9);
            QCOMPARE(comp(r, Phase::Forward, Component::CommunicationBuffers), buffers + bucket);
            QCOMPARE(comp(r, Phase::Backward, Component::CommunicationBuffers), buffers + bucket);
            QCOMPARE(r.after_step[Component::CommunicationBuffers], buffers + inputs);
            if (kept) // made before the optimizer step
                QCOMPARE(comp(r, Phase::OptimizerStep, Component::CommunicationBuffers), inputs);
            const std::string text = explainMemory(plan, Catalog::builtin(), r, Phase::OptimizerStep)
                                         [size_t(Component::CommunicationBuffers)]
                                             .assumptions.english();
            QCOMPARE(text.find("set_input_tensor") != std::string::npos, kept);
        }
        // In the timeline the first step's last backwards make them and the steady step's
        // forwards drop them; the steady step's stay.
        const StepTimeline t = memoryTimeline(plan, Catalog::builtin(), 1);
        int steadyStart = -1;
        for (const auto &mark : t.marks)
            if (mark.part == StepPart::SteadyStep && steadyStart < 0)
                steadyStart = mark.event;
        QVERIFY(steadyStart > 0);
        int made = 0;
        for (const TimelineTensor &x : t.tensors) {
            if (x.kind != TensorKind::PipelineInput)
                continue;
            ++made;
            QCOMPARE(x.bytes, 4.0 * hidden);
            if (x.part == StepPart::FirstStep) {
                QVERIFY(x.alloc_event < steadyStart);
                QVERIFY(x.free_event >= steadyStart);
            } else {
                QCOMPARE(x.part, StepPart::SteadyStep);
                QVERIFY(x.alloc_event > steadyStart);
                QCOMPARE(x.free_event, -1);
            }
        }
        QCOMPARE(made, kept ? 2 : 0);
    }

    // The HCIE-AI case: DDP cannot fit 64 GB; fully sharded state is ~14 GB per rank.
    void hcieCase()
    {
        const auto ddp = run({{"training", {{"seq_len", 32768}}}});
        QVERIFY(!ddp.fits);
        QVERIFY(states(ddp.ranks[0]) > 100e9);
        const auto full = run({{"training", {{"seq_len", 32768}}}, {"parallel", {{"sharding", "full"}}}});
        QVERIFY(qFuzzyCompare(states(full.ranks[0]), 16.0 * P7 / 8));
        QVERIFY(full.fits);
        // Runtime reserve on the 910B: CANN context, one HCCL communicator (2 x 200 MB).
        QCOMPARE(full.ranks[0].reserve.communicators, 1);
        QVERIFY(qFuzzyCompare(full.ranks[0].reserve.comm_buffers, 400.0 * 1024 * 1024));
    }
};

QTEST_APPLESS_MAIN(TestMemory)
#include "tst_memory.moc"
