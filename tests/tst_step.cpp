// The compute model and step time against real H200 steps: every steady-state `step_s` (steps
// 1+) of the TinyLlama-1.1B rows of shared/calibration must be predicted within 20% by the
// `pytorch` profile on the `h200` device. The rows span 2K to 32K tokens, amp and bf16,
// checkpointing and eager attention; the model has no per-row cases (core/compute.cpp).
// Also: FLOP counts and step assembly against hand calculations.
#include "core/catalog.h"
#include "core/compute.h"
#include "core/errors.h"
#include "core/estimate.h"
#include "calibrationdata.h"

#include <QFile>
#include <QTest>
#include <cmath>
#include <random>
#include <nlohmann/json.hpp>

using namespace shardscope;
using nlohmann::json;

namespace {

std::vector<json> smallRows() { return testing::calibrationStepRows(); }

json tinyPlan(int64_t seq, int mbs, bool amp, bool ckpt, bool eager)
{
    return testing::tinyLlamaPlanJson(seq, mbs, amp, ckpt, eager);
}

} // namespace

class TestStep : public QObject
{
    Q_OBJECT

private slots:
    void calibrationStepTime_data();
    void calibrationStepTime();
    void flopsByHand();
    void bubbleAndThroughput();
    void partialRecompute();
    void keptPartsAgree();
};

void TestStep::calibrationStepTime_data()
{
    QTest::addColumn<int>("row");
    const std::vector<json> rows = smallRows();
    // As tst_calibration: the measurements live beside the checkout, not in it.
    if (rows.empty())
        QSKIP("shared/calibration is not beside the checkout");
    for (size_t i = 0; i < rows.size(); ++i) {
        const json &r = rows[i];
        QTest::addRow("%s seq%d mbs%d %s %s", r["mode"].get<std::string>().c_str(),
                      r["seq"].get<int>(), r["mbs"].get<int>(),
                      r["ckpt"].get<bool>() ? "ckpt" : "nockpt",
                      r["attn"].get<std::string>().c_str())
            << int(i);
    }
}

void TestStep::calibrationStepTime()
{
    QFETCH(int, row);
    const json r = smallRows().at(size_t(row));
    const Catalog &cat = Catalog::builtin();
    const Plan plan =
        parsePlan(tinyPlan(r["seq"].get<int64_t>(), r["mbs"].get<int>(), r["mode"] == "amp",
                           r["ckpt"].get<bool>(), r["attn"] == "eager"),
                  cat);
    const Estimate e = estimate(plan, cat);
    QVERIFY(e.communication.empty()); // one device: no collectives
    const double predicted = e.step.step_s;
    const auto &steps = r["step_s"];
    QVERIFY(steps.size() >= 2);
    for (size_t i = 1; i < steps.size(); ++i) { // step 0 allocates the optimizer states
        const double measured = steps[i].get<double>();
        const double err = predicted / measured - 1.0;
        qInfo("step %zu: predicted %.4f s, measured %.4f s (%+.1f%%)", i, predicted, measured,
              100 * err);
        QVERIFY2(
            std::fabs(err) <= 0.20,
            qPrintable(
                QStringLiteral("predicted %1 s vs measured %2 s").arg(predicted).arg(measured)));
    }
}

void TestStep::flopsByHand()
{
    // TinyLlama at 2048 tokens, bf16, no recompute, one device. Per token forward:
    //   matmul weights per layer: q 2048^2 + k, v 2 x 2048 x 256 + o 2048^2 + FFN 3 x 2048 x 5632
    //     = 4,194,304 + 1,048,576 + 4,194,304 + 34,603,008 = 44,040,192 -> x2 FLOPs
    //   attention core (causal): 4 x (2048 / 2) x 64 x 32 = 8,388,608 per layer
    //   LM head: 2 x 32000 x 2048 = 131,072,000
    //   forward per token = 22 x (88,080,384 + 8,388,608) + 131,072,000 = 2,253,389,824
    //   step = 3 x forward x 2048 tokens = 13,844,827,078,656 FLOPs.
    const Catalog &cat = Catalog::builtin();
    const Plan plan = parsePlan(tinyPlan(2048, 1, false, false, false), cat);
    const ComputeProfile cp =
        computeProfile(*cat.device("h200"), *cat.framework("pytorch"), DType::BF16);
    const ComputeEstimate ce = estimateCompute(plan, cp);
    QCOMPARE(ce.model_flops, 13844827078656.0);
    QCOMPARE(ce.hardware_flops, ce.model_flops);
    // Full recompute adds one forward of the layers (not the head):
    // 22 x (88,080,384 + 8,388,608) x 2048 tokens = 4,346,506,903,552.
    const Plan rc = parsePlan(tinyPlan(2048, 1, false, true, false), cat);
    const ComputeEstimate cr = estimateCompute(rc, cp);
    QCOMPARE(cr.hardware_flops - cr.model_flops, 4346506903552.0);
}

void TestStep::bubbleAndThroughput()
{
    // 1F1B bubble = (pp - 1) x one micro-batch of a stage; interleaved divides it by v
    // (Narayanan et al. 2021). Llama-2-7B on 8 x 910B, pp 4 x dp 2, 8 micro-batches.
    json j = tinyPlan(4096, 1, false, false, false);
    j["model"] = {{"preset", "llama2-7b"}};
    j["training"]["grad_accum"] = 8;
    j["parallel"] = {{"dp", 2}, {"pp", 4}};
    j["cluster"] = {{"device", "ascend-910b2"}, {"devices_per_node", 8}, {"nodes", 1}};
    const Catalog &cat = Catalog::builtin();
    const Plan p1 = parsePlan(j, cat);
    const Estimate e1 = estimate(p1, cat);
    const ComputeProfile cp =
        computeProfile(*cat.device("ascend-910b2"), *cat.framework("pytorch"), DType::BF16);
    const ComputeEstimate c1 = estimateCompute(p1, cp);
    QCOMPARE(e1.step.bubble_s, 3.0 * c1.microbatch_s);
    QCOMPARE(e1.step.step_s,
             e1.step.compute_s + e1.step.communication_s + e1.step.bubble_s + e1.step.offload_s);
    // tokens/s: 4096 tokens x 8 micro-batches x 2 replicas per step.
    QCOMPARE(e1.step.tokens_per_s, 4096.0 * 8 * 2 / e1.step.step_s);
    j["parallel"]["pp_schedule"] = "interleaved";
    j["parallel"]["virtual_stages"] = 2;
    const Plan p2 = parsePlan(j, cat);
    const Estimate e2 = estimate(p2, cat);
    QCOMPARE(e2.step.bubble_s, 1.5 * estimateCompute(p2, cp).microbatch_s);
    QVERIFY(e2.step.bubble_s < e1.step.bubble_s);
    QVERIFY(e1.step.mfu > 0 && e1.step.mfu < 1 && e1.step.hfu >= e1.step.mfu);
}

void TestStep::partialRecompute()
{
    // Megatron's full recompute with --recompute-method block recomputes only the first n layers
    // of each model chunk; uniform recomputes every layer (in groups). Llama-2-7B, pp 2: 16
    // layers a stage, block n = 4 recomputes 4 of them.
    json j = tinyPlan(4096, 1, false, true, false);
    j["model"] = {{"preset", "llama2-7b"}};
    j["framework"] = "megatron";
    j["training"]["grad_accum"] = 4;
    j["parallel"] = {{"dp", 4}, {"pp", 2}};
    j["cluster"] = {{"device", "ascend-910b2"}, {"devices_per_node", 8}, {"nodes", 1}};
    const Catalog &cat = Catalog::builtin();
    const ComputeProfile cp =
        computeProfile(*cat.device("ascend-910b2"), *cat.framework("megatron"), DType::BF16);
    const ComputeEstimate full = estimateCompute(parsePlan(j, cat), cp);
    j["memory"]["recompute_method"] = "block";
    j["memory"]["recompute_num_layers"] = 4;
    const ComputeEstimate block = estimateCompute(parsePlan(j, cat), cp);
    j["memory"]["recompute_method"] = "uniform";
    const ComputeEstimate uniform = estimateCompute(parsePlan(j, cat), cp);
    QVERIFY(full.layer_recompute_s > 0);
    QCOMPARE(block.layer_recompute_s, full.layer_recompute_s); // per recomputed layer
    QCOMPARE(block.microbatch_s, full.microbatch_s - 12 * full.layer_recompute_s);
    QCOMPARE(block.backward_microbatch_s, full.backward_microbatch_s - 12 * full.layer_recompute_s);
    QCOMPARE(uniform.microbatch_s, full.microbatch_s);
    // The extra forward FLOPs: 8 of the 32 layers recompute.
    QCOMPARE(block.hardware_flops - block.model_flops, 0.25 * (full.hardware_flops - full.model_flops));

    // MindSpeed's activation-function and norm recompute add their forwards to the backward.
    j["memory"].erase("recompute_method");
    j["memory"].erase("recompute_num_layers");
    j["memory"]["recompute"] = "none";
    const ComputeEstimate none = estimateCompute(parsePlan(j, cat), cp);
    j["memory"]["recompute_activation_function"] = true;
    const ComputeEstimate act = estimateCompute(parsePlan(j, cat), cp);
    j["memory"]["recompute_norm"] = true;
    const ComputeEstimate both = estimateCompute(parsePlan(j, cat), cp);
    QCOMPARE(none.layer_recompute_s, 0.0);
    QVERIFY(act.layer_recompute_s > 0);
    QVERIFY(both.layer_recompute_s > act.layer_recompute_s);
    // Elementwise work: well under the layer's forward.
    QVERIFY(both.layer_recompute_s < 0.2 * both.layer_forward_s);
    QCOMPARE(act.microbatch_s, none.microbatch_s + 16 * act.layer_recompute_s);
}

void TestStep::keptPartsAgree()
{
    // estimateCompute keeps per-micro-batch parts per thread, keyed by what they read: every
    // layout below, and each of its neighbours that differ in one field, must get exactly what a
    // computation from scratch gives. A field missing from the key shows as a neighbour that
    // reuses the layout's part.
    const Catalog &cat = Catalog::builtin();
    struct Base { const char *model, *framework, *params; };
    const Base bases[] = {{"llama2-7b", "megatron", "bf16"},
                          {"mixtral-8x7b", "megatron", "bf16"},
                          {"deepseek-v2-lite", "pytorch", "fp32"}};
    auto fields = [](const ComputeEstimate &e) {
        return std::vector<double>{e.layer_forward_s, e.layer_backward_s, e.layer_recompute_s,
                                   e.layer_gemm_forward_s, e.layer_attention_forward_s,
                                   e.layer_attention_backward_s, e.layer_elementwise_forward_s,
                                   e.embedding_s, e.head_s, e.microbatch_s, e.backward_microbatch_s,
                                   e.casts_s, e.optimizer_s, e.compute_s, e.model_flops,
                                   e.hardware_flops, double(e.layers), e.params_on_rank,
                                   e.optimizer_elements, e.sharded_params, e.sharded_grads};
    };
    std::mt19937 rng(16);
    auto pick = [&](std::initializer_list<int> v) { return *(v.begin() + std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)); };
    int compared = 0, reused = 0;
    for (const Base &b : bases) {
        json j = tinyPlan(4096, 1, std::string(b.params) == "fp32", false, false);
        j["model"] = {{"preset", b.model}};
        j["framework"] = b.framework;
        j["parallel"] = {{"dp", 64}};
        j["cluster"] = {{"device", "ascend-910b2"}, {"devices_per_node", 8}, {"nodes", 8}};
        const Plan base = parsePlan(j, cat);
        const ComputeProfile cp = computeProfile(*cat.device("ascend-910b2"), *cat.framework(b.framework),
                                                 base.precision.compute);
        // One change of one field of a layout (`axis`), or none (-1).
        auto change = [&](Plan &p, int axis) {
            Parallel &pa = p.parallel;
            MemoryOptions &m = p.memory;
            switch (axis) {
            case 0: pa.tp = pick({1, 2, 4, 8}); break;
            case 1: pa.pp = pick({1, 2, 4}); break;
            case 2: pa.virtual_stages = pick({1, 2}); break;
            case 3: pa.cp = pick({1, 2, 4}); break;
            case 4: pa.sp = !pa.sp; break;
            case 5: pa.sharding = Sharding(pick({0, 1, 2, 3})); break;
            case 6: p.training.micro_batch = pick({1, 2, 4}); break;
            case 7: p.training.grad_accum = pick({4, 8, 16}); break;
            case 8: m.recompute = Recompute(pick({0, 1, 2})); break;
            case 9: m.recompute_method = m.recompute_method == RecomputeMethod::Block ? RecomputeMethod::Uniform
                                                                                      : RecomputeMethod::Block;
                    break;
            case 10: m.recompute_num_layers = pick({1, 2, 3}); break;
            case 11: m.recompute_activation_function = !m.recompute_activation_function; break;
            case 12: m.recompute_norm = !m.recompute_norm; break;
            case 13: m.offload.optimizer = !m.offload.optimizer; break;
            case 14: pa.ep = pick({1, 2, 4, 8}); break;
            case 15: pa.etp = pick({0, 1}); break;
            case 16: pa.first_stage_layers = pick({0, 5}); pa.last_stage_layers = pa.first_stage_layers ? 3 : 0; break;
            case 17: pa.dp_shard = pick({0, 2, 4}); break;
            case 18: p.training.seq_len = pick({2048, 4096, 8192}); break;
            default: break;
            }
            pa.pp_schedule = pa.virtual_stages > 1 ? PpSchedule::Interleaved : PpSchedule::OneFOneB;
            pa.dp = int(p.cluster.world() / (int64_t(pa.tp) * pa.pp * pa.cp));
        };
        auto valid = [&](const Plan &p) {
            try {
                validatePlan(p, cat);
                return true;
            } catch (const PlanError &) {
                return false;
            }
        };
        ComputeCache cache; // the search's: one model, precision and profile, any layout
        for (int layout = 0; layout < 1000; ++layout) {
            Plan p = base;
            for (int axis = 0; axis < 19; ++axis)
                change(p, axis);
            // Fewer invalid layouts: what a field rules out of the others.
            if (p.memory.recompute == Recompute::Full)
                p.memory.recompute_activation_function = p.memory.recompute_norm = false;
            if (p.parallel.sharding != Sharding::Full)
                p.parallel.dp_shard = 0;
            if (!p.model.moe.enabled())
                p.parallel.ep = 1, p.parallel.etp = 0;
            if (p.parallel.tp == 1)
                p.parallel.sp = false;
            if (!valid(p))
                continue;
            for (int axis = -1; axis < 19; ++axis) {
                Plan n = p;
                change(n, axis);
                if (!valid(n))
                    continue;
                const std::vector<double> kept = fields(estimateCompute(n, cp));
                const std::vector<double> fresh = fields(estimateComputeAfresh(n, cp));
                QCOMPARE(fields(estimateCompute(n, cp, cache)), fresh);
                ++compared;
                if (axis >= 0 && kept == fields(estimateComputeAfresh(p, cp)))
                    ++reused; // the neighbour's compute equals the layout's
                for (size_t f = 0; f < fresh.size(); ++f)
                    QVERIFY2(kept[f] == fresh[f], qPrintable(QStringLiteral("%1 layout %2 axis %3 field %4: %5 vs %6")
                                                                 .arg(QString::fromUtf8(b.model)).arg(layout).arg(axis).arg(f)
                                                                 .arg(kept[f]).arg(fresh[f])));
            }
        }
    }
    // The same layouts under two models and two profiles in turn: nothing kept for one serves
    // the other.
    {
        json j = tinyPlan(4096, 1, false, true, false);
        j["parallel"] = {{"dp", 8}};
        j["cluster"] = {{"device", "ascend-910b2"}, {"devices_per_node", 8}, {"nodes", 1}};
        j["model"] = {{"preset", "llama2-7b"}};
        const Plan a = parsePlan(j, cat);
        j["model"] = {{"preset", "mistral-7b"}};
        const Plan b = parsePlan(j, cat);
        const ComputeProfile pt = computeProfile(*cat.device("ascend-910b2"), *cat.framework("pytorch"), DType::BF16);
        const ComputeProfile mg = computeProfile(*cat.device("ascend-910b2"), *cat.framework("megatron"), DType::BF16);
        for (int round = 0; round < 3; ++round) {
            for (const auto &[plan, prof] : {std::pair{&a, &pt}, {&b, &pt}, {&a, &mg}, {&b, &mg}}) {
                for (const int mb : {1, 2, 4}) {
                    Plan p = *plan;
                    p.training.micro_batch = mb;
                    QCOMPARE(fields(estimateCompute(p, *prof)), fields(estimateComputeAfresh(p, *prof)));
                    ++compared;
                }
            }
        }
    }
    // Through one cache, plans that differ in their vocabulary alone (the search's, padded by
    // tp): each its own part.
    {
        json j = tinyPlan(4096, 1, false, true, false);
        j["parallel"] = {{"dp", 8}};
        j["cluster"] = {{"device", "ascend-910b2"}, {"devices_per_node", 8}, {"nodes", 1}};
        j["model"] = {{"preset", "llama2-7b"}};
        Plan p = parsePlan(j, cat);
        const ComputeProfile pt = computeProfile(*cat.device("ascend-910b2"), *cat.framework("pytorch"), DType::BF16);
        ComputeCache cache;
        for (const int64_t vocab : {32000, 128256, 32000, 152064}) {
            p.model.vocab = vocab;
            QCOMPARE(fields(estimateCompute(p, pt, cache)), fields(estimateComputeAfresh(p, pt)));
            ++compared;
        }
    }
    qInfo("%d estimates compared, %d neighbours with the layout's compute", compared, reused);
    QVERIFY(compared > 1000);
}

QTEST_APPLESS_MAIN(TestStep)
#include "tst_step.moc"
