// Training methods (core/adapters.cpp and their use in the memory engine): trainable counts as
// PEFT prints them, the TP split of adapters, and the bytes each method stores, trains and
// saves, checked by hand against the mechanisms.
#include "core/adapters.h"
#include "core/catalog.h"
#include "core/errors.h"
#include "core/estimate.h"
#include "core/files.h"
#include "core/plan.h"
#include "core/search.h"
#include "core/timeline.h"
#include "core/workspace.h"
#include "testdata.h"

#include <QTest>
#include <nlohmann/json.hpp>

using namespace shardscope;
using nlohmann::json;

namespace {

/// A single-device Llama 2 7B plan on an H200 (no sharding, no recompute), patched.
Plan plan(const char *patch)
{
    json j = json::parse(readTextFile(testing::casePath("hcie-ai-fsdp").toStdString()));
    j["training"] = {{"seq_len", 4096}, {"micro_batch", 1}, {"grad_accum", 1}};
    j["parallel"] = {{"dp", 1}};
    j["memory"] = {{"recompute", "none"}, {"attention", "flash"}};
    j["cluster"] = {{"device", "h200"}, {"devices_per_node", 1}, {"nodes", 1}};
    j.merge_patch(json::parse(patch));
    return parsePlan(j, Catalog::builtin());
}

const Breakdown &step(const Estimate &e) { return e.memory.ranks.front().phases[size_t(Phase::OptimizerStep)]; }
const Breakdown &forward(const Estimate &e) { return e.memory.ranks.front().phases[size_t(Phase::Forward)]; }

} // namespace

class TestAdapters : public QObject
{
    Q_OBJECT

private slots:
    // PEFT's print_trainable_parameters() for meta-llama/Llama-2-7b-hf and Llama-3-8B (GQA:
    // k and v project to 8 x 128).
    void trainableCountsAsPeftPrintsThem_data()
    {
        QTest::addColumn<QString>("patch");
        QTest::addColumn<qlonglong>("count");
        QTest::addRow("7B r8 q,v") << R"({"training": {"method": "lora", "lora": {"rank": 8, "targets": ["q", "v"]}}})"
                                   << 4194304LL;
        QTest::addRow("7B r16 all linear")
            << R"({"training": {"method": "lora", "lora": {"rank": 16, "targets": "all_linear"}}})" << 39976960LL;
        QTest::addRow("7B r16 all linear, HF names")
            << R"({"training": {"method": "lora", "lora": {"rank": 16, "targets": ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]}}})"
            << 39976960LL;
        QTest::addRow("8B r8 q,v (GQA)")
            << R"({"model": {"preset": "llama3-8b"}, "training": {"method": "lora", "lora": {"rank": 8}}})" << 3407872LL;
        // DoRA adds one magnitude per output feature of each adapted linear: 32 x 2 x 4096.
        QTest::addRow("7B DoRA r8 q,v") << R"({"training": {"method": "dora"}})" << 4194304LL + 262144LL;
        // modules_to_save: a trained copy of the head (32000 x 4096).
        QTest::addRow("7B r8 + head") << R"({"training": {"method": "lora", "lora": {"modules_to_save": ["head"]}}})"
                                      << 4194304LL + 131072000LL;
        // Freezing: the last two layers whole (202,383,360 each) and the final norm.
        QTest::addRow("freeze last 2 + norms")
            << R"({"training": {"method": "freeze", "freeze": {"last_layers": 2, "parts": ["norms"]}}})"
            << 2LL * 202383360LL + 30LL * 8192LL + 4096LL;
    }

    void trainableCountsAsPeftPrintsThem()
    {
        QFETCH(QString, patch);
        QFETCH(qlonglong, count);
        QCOMPARE(qlonglong(trainableParameters(plan(patch.toUtf8().constData()))), count);
    }

    // Under TP the adapters follow the layer's split: q and v are column-parallel, so A stays
    // whole (8 x 4096) and B is split (2048 x 8 per rank).
    void adaptersFollowTheTpSplit()
    {
        Plan p = plan(R"({"training": {"method": "lora"}})");
        p.parallel.tp = 2;
        p.cluster.devices_per_node = 2;
        const StageElements e = stageElements(p, 0);
        QCOMPARE(e.adapterDense, 32.0 * 2.0 * (8.0 * 4096 + 8.0 * 4096 / 2));
        p.training.method.lora.targets = kTargetO;
        QCOMPARE(stageElements(p, 0).adapterDense, 32.0 * (8.0 * 4096 / 2 + 8.0 * 4096));
    }

    // MindSpeed-LLM's LoRA (framework megatron) wraps Megatron-Core's fused linear_qkv and
    // linear_fc1: one A (r x 4096) for q, k and v with B (12288 x r), one for gate and up with B
    // (22016 x r). Llama-2-7B r16 on all four modules: 32 x 16 x ((4096 + 12288) + (4096 +
    // 4096) + (4096 + 22016) + (11008 + 4096)) = 33,685,504, what its CI run's memory gives
    // (tst_megatronmeasured); PEFT on the unfused Hugging Face model has 39,976,960. Any of q, k,
    // v adapts the whole linear_qkv; under TP, B splits like the fused output. A GELU FFN's fc1
    // is up alone. The adapters' gradients live in Megatron's fp32 main-gradient buffer.
    void megatronAdaptsFusedModules()
    {
        const char *all = R"({"framework": "megatron", "parallel": {"sharding": "none"},
                              "training": {"method": "lora", "lora": {"rank": 16, "targets": "all_linear"}}})";
        QCOMPARE(qlonglong(trainableParameters(plan(all))), 33685504LL);
        const Plan qv = plan(R"({"framework": "megatron", "parallel": {"sharding": "none"},
                                 "training": {"method": "lora", "lora": {"rank": 16, "targets": ["q", "v"]}}})");
        QCOMPARE(qlonglong(trainableParameters(qv)), 32LL * 16 * (4096 + 12288));
        QCOMPARE(int(adaptedTargets(qv)), int(kTargetQ | kTargetK | kTargetV));
        Plan tp = qv;
        tp.parallel.tp = 2;
        tp.cluster.devices_per_node = 2;
        QCOMPARE(stageElements(tp, 0).adapterDense, 32.0 * 16 * (4096 + 12288 / 2));
        const Plan gelu = plan(R"({"framework": "megatron", "parallel": {"sharding": "none"},
                                   "model": {"ffn": "gelu"},
                                   "training": {"method": "lora", "lora": {"rank": 16, "targets": ["up"]}}})");
        QCOMPARE(qlonglong(trainableParameters(gelu)), 32LL * 16 * (4096 + 11008));
        const Estimate e = estimate(plan(all), Catalog::builtin());
        QCOMPARE(step(e)[Component::Gradients], 33685504.0 * 4.0);
        QCOMPARE(step(e)[Component::MasterWeights], 33685504.0 * 4.0);
        // The pytorch profile keeps PEFT's unfused linears.
        QCOMPARE(qlonglong(trainableParameters(plan(R"({"training": {"method": "lora",
                                                     "lora": {"rank": 16, "targets": "all_linear"}}})"))),
                 39976960LL);
    }

    // LoRA on one device: the bf16 base stays as it is, the fp32 adapters (PEFT's default) carry
    // fp32 gradients and two fp32 Adam states, and nothing else is trained.
    void loraModelStates()
    {
        const Plan p = plan(R"({"training": {"method": "lora"}})");
        const Estimate e = estimate(p, Catalog::builtin());
        const double P = double(countParameters(p.model).total), A = 4194304.0;
        QCOMPARE(step(e)[Component::Parameters], P * 2.0 + A * 4.0);
        QCOMPARE(step(e)[Component::Gradients], A * 4.0);
        QCOMPARE(step(e)[Component::MasterWeights], 0.0); // fp32 adapters are their own master
        QCOMPARE(step(e)[Component::OptimizerStates], A * 8.0);
        // foreach AdamW's sqrt temporary, beside the GEMM workspaces (core/workspace.h)
        const Catalog &c = Catalog::builtin();
        const double W =
            gemmWorkspaces(*c.device(p.cluster.device), *c.framework(p.framework)).total();
        QVERIFY(W > 0);
        QCOMPARE(step(e)[Component::Transient], A * 4.0 + W);
        // MindSpeed-LLM style: bf16 adapters, an fp32 master copy of them.
        Plan m = p;
        m.training.method.lora.dtype = DType::BF16;
        const Estimate f = estimate(m, Catalog::builtin());
        QCOMPARE(step(f)[Component::Parameters], P * 2.0 + A * 2.0);
        QCOMPARE(step(f)[Component::Gradients], A * 2.0);
        QCOMPARE(step(f)[Component::MasterWeights], A * 4.0);
    }

    // What LoRA's layers save, per token and layer (h 4096, FFN 11008, 32 heads, flash, bf16):
    // full training 24h + 8f + 4a bytes; LoRA on q, v with fp32 adapters: the norms keep only
    // their fp32 input (2 x 4h), each adapter an fp32 copy of its input and its rank-8 output
    // (2 x (4h + 32)), attention 8h + 4a as before, SwiGLU 6f (the down projection is frozen).
    void loraActivations()
    {
        const double h = 4096, f = 11008, a = 32, T = 4096, L = 32;
        const Estimate full = estimate(plan("{}"), Catalog::builtin());
        const double fullLayer = 24 * h + 8 * f + 4 * a;
        // Forward: layers, then the final norm (fp32 input + bf16 normalized) and head input.
        QCOMPARE(forward(full)[Component::Activations], (fullLayer * L + (4 + 2) * h + 2 * h) * T);
        const Estimate lora = estimate(plan(R"({"training": {"method": "lora"}})"), Catalog::builtin());
        const double loraLayer = 8 * h + 2 * (4 * h + 32) + 8 * h + 4 * a + 6 * f;
        // Layer 0's first norm saves nothing (its input and weight need no gradient); a frozen
        // final norm keeps its fp32 input, a frozen head none of its input.
        QCOMPARE(forward(lora)[Component::Activations], (loraLayer * L - 4 * h + 4 * h) * T);
        // With bf16 adapters the input is the saved tensor itself, held once for q and v.
        const Estimate bf16 = estimate(plan(R"({"training": {"method": "lora", "lora": {"dtype": "bf16"}}})"),
                                       Catalog::builtin());
        const double bf16Layer = 8 * h + (2 * h + 2 * 16) + 8 * h + 4 * a + 6 * f;
        QCOMPARE(forward(bf16)[Component::Activations], (bf16Layer * L - 4 * h + 4 * h) * T);
    }

    // QLoRA NF4 with double quantization: 0.5 + 1/64 + 4/(64 x 256) bytes per linear weight;
    // norms, embedding and head upcast to fp32; each layer's largest weight dequantized to bf16
    // for its matmul.
    void qloraStorage()
    {
        const Plan p = plan(R"({"training": {"method": "qlora"}})");
        const Estimate e = estimate(p, Catalog::builtin());
        const ParameterCounts pc = countParameters(p.model);
        const double linears = 32.0 * (4.0 * 4096 * 4096 + 3.0 * 4096 * 11008);
        const double rest = double(pc.total) - linears; // embedding, head, norms
        const double nf4 = 0.5 + 1.0 / 64 + 4.0 / (64 * 256);
        QCOMPARE(quantizedBytesPerElement(p.training.method.qlora, 4096), nf4);
        const double A = 4194304.0;
        QVERIFY(std::abs(step(e)[Component::Parameters] - (linears * nf4 + rest * 4.0 + A * 4.0)) < 1.0);
        // Each layer's forward dequantizes its largest weight whole (freed before the loss).
        const StepTimeline t = memoryTimeline(p, Catalog::builtin(), 0);
        double dequantized = 0;
        for (const TimelineTensor &tt : t.tensors)
            if (tt.kind == TensorKind::ForwardWorkingSet && tt.part == StepPart::SteadyStep)
                dequantized = std::max(dequantized, tt.bytes);
        QCOMPARE(dequantized, 4096.0 * 11008 * 2);
        // Without double quantization the absmax is fp32 per 64 elements.
        Plan q = p;
        q.training.method.qlora.double_quant = false;
        QCOMPARE(quantizedBytesPerElement(q.training.method.qlora, 4096), 0.5625);
        QVERIFY(step(estimate(q, Catalog::builtin()))[Component::Parameters] > step(e)[Component::Parameters]);
    }

    // Freezing without gradient checkpointing: the frozen layers below the trained ones record
    // nothing; with checkpointing (enable_input_require_grads) every layer records.
    void freezeRecordsOnlyAboveTheFirstTrainedLayer()
    {
        const Estimate top = estimate(plan(R"({"training": {"method": "freeze", "freeze": {"last_layers": 2}}})"),
                                      Catalog::builtin());
        const Estimate full = estimate(plan("{}"), Catalog::builtin());
        const double layerFull = (24.0 * 4096 + 8.0 * 11008 + 4 * 32) * 4096;
        // Two trained layers as in full training, less the fp32 input of the first one's norm
        // (its input needs no gradient), and the frozen final norm's fp32 input.
        QCOMPARE(forward(top)[Component::Activations], 2 * layerFull - 4.0 * 4096 * 4096 + 4.0 * 4096 * 4096);
        QVERIFY(forward(full)[Component::Activations] > 10 * forward(top)[Component::Activations]);
        const double P = double(countParameters(plan("{}").model).total);
        QCOMPARE(step(top)[Component::Parameters], P * 2.0);
        QCOMPARE(step(top)[Component::Gradients], 2.0 * 202383360 * 2.0);
    }

    // DDP's buckets and FSDP's gradient buffers carry only what is trained.
    void shardingCarriesOnlyTrainedGradients()
    {
        Plan ddp = plan(R"({"training": {"method": "lora"}})");
        ddp.parallel.dp = 8;
        ddp.cluster.devices_per_node = 8;
        const Estimate e = estimate(ddp, Catalog::builtin());
        QCOMPARE(step(e)[Component::CommunicationBuffers], 4194304.0 * 4.0);
        Plan fsdp = ddp;
        fsdp.parallel.sharding = Sharding::Full;
        const Estimate f = estimate(fsdp, Catalog::builtin());
        // The frozen base is sharded too.
        const double P = double(countParameters(fsdp.model).total);
        QCOMPARE(step(f)[Component::Parameters], (P * 2.0 + 4194304.0 * 4.0) / 8.0);
    }

    // The data-parallel collectives carry what is trained: DDP all-reduces the adapters' fp32
    // gradients, not the base's. The backward forms no weight gradient of a frozen layer.
    void communicationAndTime()
    {
        Plan full = plan("{}");
        full.parallel.dp = 8;
        full.cluster.devices_per_node = 8;
        Plan lora = full;
        lora.training.method.method = TrainingMethod::LoRA;
        auto allReduced = [](const Estimate &e) {
            double bytes = 0;
            for (const Collective &c : e.communication)
                if (c.collective == "all_reduce" && c.group == "dp")
                    bytes += c.bytes * c.count_per_step;
            return bytes;
        };
        const Estimate ef = estimate(full, Catalog::builtin()), el = estimate(lora, Catalog::builtin());
        QCOMPARE(allReduced(ef), double(countParameters(full.model).total) * 2.0); // bf16 grads
        // LoRA's gradients are the fp32 adapters' own.
        QCOMPARE(allReduced(el), 4194304.0 * 4.0);
        QVERIFY(el.step.compute_s < ef.step.compute_s * 0.8);
        QVERIFY(el.step.compute_s > ef.step.compute_s * 0.5);
    }

    // Loss heads at 4096 tokens and a 32000 vocabulary (n logits): Hugging Face n x 10 B at the
    // end of forward and n x 12 B in its backward; torchtune's 8 chunks n x 6 + n/8 x 4 and
    // n x 4 + n/8 x 10; Liger's fused linear cross entropy a chunk of logits (next power of two
    // of 4096 / ceil(32000 / 4096) = 512 tokens) and the head input's gradient, never n.
    void lossHeads()
    {
        const double n = 4096.0 * 32000;
        const Estimate hf = estimate(plan("{}"), Catalog::builtin());
        QCOMPARE(forward(hf)[Component::LogitsAndLoss], n * 10);
        const Estimate chunked = estimate(plan(R"({"memory": {"loss": "chunked"}})"), Catalog::builtin());
        QCOMPARE(forward(chunked)[Component::LogitsAndLoss], n * 6 + n / 8 * 4);
        const auto &bwd = chunked.memory.ranks.front().phases[size_t(Phase::Backward)];
        QVERIFY(bwd[Component::LogitsAndLoss] <= n * 4 + n / 8 * 10);
        QCOMPARE(fusedLinearChunkTokens(4096, 32000, 4096), 512.0);
        const Estimate fused = estimate(plan(R"({"memory": {"loss": "fused_linear"}})"), Catalog::builtin());
        const double held = 4096.0 * 4096 * 2 + 32000.0 * 4096 * 2; // input and head-weight gradients
        QCOMPARE(forward(fused)[Component::LogitsAndLoss], 512.0 * 32000 * 2 + held);
        // Where the logits dominate (LoRA at 32K tokens: 11.7 GiB of them under Hugging Face's
        // loss), the fused head takes them out of the peak.
        const char *longLora = R"({"training": {"seq_len": 32768, "method": "lora"}})";
        const char *longLoraFused =
            R"({"training": {"seq_len": 32768, "method": "lora"}, "memory": {"loss": "fused_linear"}})";
        QVERIFY(estimate(plan(longLoraFused), Catalog::builtin()).memory.peak_bytes <
                estimate(plan(longLora), Catalog::builtin()).memory.peak_bytes - 9.0 * (1 << 30));
        // Under LoRA the head is frozen: no head-weight gradient is made.
        const Estimate fusedLora = estimate(plan(R"({"memory": {"loss": "fused_linear"}, "training": {"method": "lora"}})"),
                                            Catalog::builtin());
        QCOMPARE(forward(fusedLora)[Component::LogitsAndLoss], 512.0 * 32000 * 2 + 4096.0 * 4096 * 2);
        QVERIFY_THROWS_EXCEPTION(PlanError, plan(R"({"memory": {"loss_chunks": 4}})"));
        QCOMPARE(planToJson(plan(R"({"memory": {"loss": "chunked", "loss_chunks": 4}})"))["memory"]["loss_chunks"].get<int>(), 4);
    }

    // The search keeps the method and finds the layouts that fit under it: LoRA lets the case
    // (32K tokens on 8 x 910B) run under plain DDP, which full training cannot.
    void searchUnderLora()
    {
        json j = json::parse(readTextFile(testing::casePath("hcie-ai-ddp").toStdString()));
        j["training"]["method"] = "lora";
        j["training"]["lora"] = {{"rank", 16}, {"targets", "all_linear"}};
        // Every fitting layout is ranked (and so replayed): data parallelism alone keeps it short.
        SearchRequest req;
        req.base = parsePlan(j, Catalog::builtin());
        req.top = 100000;
        req.fixed_tp = req.fixed_pp = req.fixed_cp = 1;
        const SearchOutcome out = searchLayouts(req, Catalog::builtin());
        // No memory bound under LoRA: every layout is estimated, and every fit counted.
        QVERIFY(out.fitting_complete);
        bool ddp = false;
        for (const SearchResult &r : out.ranked)
            ddp = ddp || (r.plan.parallel.dp == 8 && r.plan.parallel.sharding == Sharding::None &&
                          !r.plan.memory.offload.optimizer &&
                          r.plan.training.method.method == TrainingMethod::LoRA);
        QVERIFY(ddp);
        json full = json::parse(readTextFile(testing::casePath("hcie-ai-ddp").toStdString()));
        SearchRequest reqFull;
        reqFull.base = parsePlan(full, Catalog::builtin());
        reqFull.top = 100000;
        reqFull.fixed_tp = reqFull.fixed_pp = reqFull.fixed_cp = 1;
        const SearchOutcome outFull = searchLayouts(reqFull, Catalog::builtin());
        QVERIFY(!outFull.ranked.empty()); // full training fits too, but only sharded or offloaded
        for (const SearchResult &r : outFull.ranked)
            QVERIFY(!(r.plan.parallel.dp == 8 && r.plan.parallel.sharding == Sharding::None &&
                      !r.plan.memory.offload.optimizer));
    }

    void refusals_data()
    {
        QTest::addColumn<QString>("patch");
        QTest::addColumn<QString>("field");
        QTest::addRow("lora options without lora")
            << R"({"training": {"lora": {"rank": 8}}})" << "training.lora";
        QTest::addRow("qlora options with lora")
            << R"({"training": {"method": "lora", "qlora": {"quant": "nf4"}}})" << "training.qlora";
        QTest::addRow("unknown target")
            << R"({"training": {"method": "lora", "lora": {"targets": ["qkv"]}}})" << "training.lora.targets";
        QTest::addRow("zero rank") << R"({"training": {"method": "lora", "lora": {"rank": 0}}})"
                                   << "training.lora.rank";
        QTest::addRow("freeze nothing") << R"({"training": {"method": "freeze"}})" << "training.freeze";
        QTest::addRow("too many layers")
            << R"({"training": {"method": "freeze", "freeze": {"last_layers": 33}}})" << "training.freeze.last_layers";
        QTest::addRow("odd block") << R"({"training": {"method": "qlora", "qlora": {"block_size": 100}}})"
                                   << "training.qlora.block_size";
        QTest::addRow("unknown method") << R"({"training": {"method": "prefix"}})" << "training.method";
    }

    void refusals()
    {
        QFETCH(QString, patch);
        QFETCH(QString, field);
        try {
            plan(patch.toUtf8().constData());
            QFAIL("accepted");
        } catch (const PlanError &e) {
            QCOMPARE(QString::fromStdString(e.field()), field);
        }
    }

    // A plan with a method survives save and load; a full-training plan is written as before.
    void roundTrip()
    {
        const Plan p = plan(R"({"training": {"method": "qlora", "lora": {"rank": 64, "targets": "all_linear",
            "dropout": 0.05, "modules_to_save": ["embedding"]}, "qlora": {"quant": "fp4", "double_quant": false}}})");
        const json saved = planToJson(p);
        QCOMPARE(saved["training"]["lora"]["targets"].get<std::string>(), std::string("all_linear"));
        const Plan back = parsePlan(saved, Catalog::builtin());
        QVERIFY(planToJson(back) == saved);
        QCOMPARE(back.training.method.lora.rank, 64);
        QVERIFY(back.training.method.qlora.quant == Quantization::FP4);
        QVERIFY(!planToJson(plan("{}"))["training"].contains("method"));
    }
};

QTEST_APPLESS_MAIN(TestAdapters)
#include "tst_adapters.moc"
