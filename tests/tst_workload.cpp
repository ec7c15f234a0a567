// The workload: rank-local kernel shapes for known layouts (checked by hand), the memory
// probe's plan, and the measured-vs-predicted comparison and calibration built on them.
#include "core/catalog.h"
#include "core/errors.h"
#include "core/measurement.h"
#include "core/memory.h"
#include "core/units.h"
#include "core/workload.h"
#include "core/workspace.h"
#include "planvariants.h"

#include <QTest>

using namespace shardscope;

namespace {

Plan makePlan(const char *preset, int64_t seq, int tp, int cp, bool sp, int dp = 1,
              const char *sharding = "none", const char *recompute = "none")
{
    nlohmann::json j = testing::variantBase();
    j.merge_patch({{"name", "workload test"},
                   {"model", {{"preset", preset}}},
                   {"training", {{"seq_len", seq}}},
                   {"parallel", {{"dp", dp}, {"tp", tp}, {"cp", cp}, {"ep", 1}, {"sp", sp}, {"sharding", sharding}}},
                   {"memory", {{"recompute", recompute}}},
                   {"cluster", {{"device", "h200"}, {"devices_per_node", dp * tp * cp}}}});
    return parsePlan(j, Catalog::builtin());
}

const Kernel *find(const Workload &w, const std::string &name)
{
    for (const Kernel &k : w.kernels)
        if (k.name == name)
            return &k;
    return nullptr;
}

} // namespace

class TestWorkload : public QObject
{
    Q_OBJECT

private slots:
    void gemmShapes_data()
    {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<int>("tp");
        QTest::addColumn<int>("cp");
        QTest::addColumn<QString>("kernel");
        QTest::addColumn<qint64>("m");
        QTest::addColumn<qint64>("n");
        QTest::addColumn<qint64>("k");
        QTest::addColumn<QString>("layout");
        // Llama 2 7B (h 4096, 32 heads MHA, FFN 11008, vocab 32000), 4096 tokens.
        QTest::addRow("7b qkv tp1")
            << "llama2-7b" << 1 << 1 << "layer.qkv.fwd" << 4096LL << 12288LL << 4096LL << "nt";
        QTest::addRow("7b qkv tp2")
            << "llama2-7b" << 2 << 1 << "layer.qkv.fwd" << 4096LL << 6144LL << 4096LL << "nt";
        QTest::addRow("7b o tp2") << "llama2-7b" << 2 << 1 << "layer.o.fwd" << 4096LL << 4096LL
                                  << 2048LL << "nt";
        QTest::addRow("7b gate_up tp2")
            << "llama2-7b" << 2 << 1 << "layer.gate_up.fwd" << 4096LL << 11008LL << 4096LL << "nt";
        QTest::addRow("7b down tp2")
            << "llama2-7b" << 2 << 1 << "layer.down.fwd" << 4096LL << 4096LL << 5504LL << "nt";
        QTest::addRow("7b down dgrad tp2")
            << "llama2-7b" << 2 << 1 << "layer.down.dgrad" << 4096LL << 5504LL << 4096LL << "nn";
        QTest::addRow("7b down wgrad tp2")
            << "llama2-7b" << 2 << 1 << "layer.down.wgrad" << 4096LL << 5504LL << 4096LL << "tn";
        QTest::addRow("7b head tp2")
            << "llama2-7b" << 2 << 1 << "head.lm_head.fwd" << 4096LL << 16000LL << 4096LL << "nt";
        QTest::addRow("7b qkv cp2")
            << "llama2-7b" << 1 << 2 << "layer.qkv.fwd" << 2048LL << 12288LL << 4096LL << "nt";
        // Llama 3 8B: GQA 32 / 8 heads of 128, FFN 14336, vocab 128256; tp 4.
        QTest::addRow("8b qkv tp4")
            << "llama3-8b" << 4 << 1 << "layer.qkv.fwd" << 4096LL << 1536LL << 4096LL << "nt";
        QTest::addRow("8b qkv wgrad tp4")
            << "llama3-8b" << 4 << 1 << "layer.qkv.wgrad" << 1536LL << 4096LL << 4096LL << "tn";
        QTest::addRow("8b head tp4")
            << "llama3-8b" << 4 << 1 << "head.lm_head.fwd" << 4096LL << 32064LL << 4096LL << "nt";
    }
    void gemmShapes()
    {
        QFETCH(QString, preset);
        QFETCH(int, tp);
        QFETCH(int, cp);
        QFETCH(QString, kernel);
        QFETCH(qint64, m);
        QFETCH(qint64, n);
        QFETCH(qint64, k);
        QFETCH(QString, layout);
        const Plan p = makePlan(preset.toStdString().c_str(), 4096, tp, cp, false);
        const Workload w = buildWorkload(p);
        const Kernel *g = find(w, kernel.toStdString());
        QVERIFY2(g, qPrintable(kernel));
        QCOMPARE(g->m, m);
        QCOMPARE(g->n, n);
        QCOMPARE(g->k, k);
        QCOMPARE(QString::fromStdString(g->layout), layout);
        QCOMPARE(g->flops, 2.0 * double(m) * double(n) * double(k));
        const bool head = kernel.startsWith(QLatin1String("head"));
        QCOMPARE(g->count_per_step, head ? 1.0 : double(p.model.layers));
    }

    void headHasThePaddedVocabulary()
    {
        // Megatron pads Llama 3's 128,256 tokens to a multiple of 128 x tp 4 = 512: 251 x 512 =
        // 128,512, so 32,128 per TP rank (not 32,064); the PyTorch profile keeps 128,256.
        Plan p = makePlan("llama3-8b", 4096, 4, 1, false);
        const Catalog &cat = Catalog::builtin();
        const Kernel *g = find(buildWorkload(p, {}, &cat), "head.lm_head.fwd");
        QVERIFY(g);
        QCOMPARE(g->n, 32064LL);
        p.framework = "megatron";
        const Workload w = buildWorkload(p, {}, &cat);
        g = find(w, "head.lm_head.fwd");
        QVERIFY(g);
        QCOMPARE(g->n, 32128LL);
        // Without a catalog, only the plan's own divisor applies: 1000 x tp 4, so 33 x 4000 =
        // 132,000, 33,000 per rank.
        p.model.vocab_divisible_by = 1000;
        g = find(buildWorkload(p), "head.lm_head.fwd");
        QVERIFY(g);
        QCOMPARE(g->n, 33000LL);
    }

    void attentionShapes()
    {
        // 8B, tp 4, cp 2, 8192 tokens: 8 heads / 2 KV heads of 128 per rank, 4096 tokens each.
        const Plan p = makePlan("llama3-8b", 8192, 4, 2, true);
        const Workload w = buildWorkload(p);
        const Kernel *a = find(w, "attention.fwd");
        QVERIFY(a);
        QCOMPARE(a->heads, 8);
        QCOMPARE(a->kv_heads, 2);
        QCOMPARE(a->seq_q, 4096);
        QCOMPARE(a->head_dim, 128);
        QVERIFY(a->causal);
        // Causal forward: 4 s^2 d heads / 2.
        QCOMPARE(a->flops, 4.0 * 4096.0 * 4096.0 * 128.0 * 8.0 / 2.0);
        const Kernel *b = find(w, "attention.bwd");
        QVERIFY(b);
        QCOMPARE(b->flops, 2.5 * a->flops);
        // The ring against the other CP rank's K/V: (cp - 1) / 2 unmasked blocks per layer.
        const Kernel *r = find(w, "attention.ring.fwd");
        QVERIFY(r);
        QVERIFY(!r->causal);
        QCOMPARE(r->count_per_step, 32.0 * 0.5);
        // SP: norms work on the tp-split sequence.
        const Kernel *n = find(w, "layer.rmsnorm");
        QVERIFY(n);
        QCOMPARE(n->width, 4096 / 4);
    }

    void tokenCap()
    {
        WorkloadOptions o;
        o.max_tokens = 512;
        const Plan p = makePlan("llama2-7b", 4096, 1, 1, false);
        const Workload w = buildWorkload(p, o);
        QCOMPARE(w.tokens, 4096);
        QCOMPARE(w.tokens_run, 512);
        const Kernel *g = find(w, "layer.qkv.fwd");
        QCOMPARE(g->m, 512);
        QCOMPARE(g->full_flops, 2.0 * 4096 * 12288 * 4096);
        const Kernel *wg = find(w, "layer.qkv.wgrad");
        QCOMPARE(wg->k, 512);
        const Kernel *a = find(w, "attention.fwd");
        QCOMPARE(a->seq_q, 512);
        QVERIFY(a->full_flops > a->flops * 60); // (4096 / 512)^2 = 64
    }

    void collectivesFromLayout_data()
    {
        QTest::addColumn<int>("tp");
        QTest::addColumn<bool>("sp");
        QTest::addColumn<int>("dp");
        QTest::addColumn<QString>("sharding");
        QTest::addColumn<QString>("name");
        QTest::addColumn<double>("bytes");
        QTest::addColumn<int>("group");
        // TP without SP: all-reduce of T x h x 2 bytes = 4096 x 4096 x 2.
        QTest::addRow("tp all-reduce") << 2 << false << 1 << "none"
                                       << "tp.all_reduce" << 4096.0 * 4096 * 2 << 2;
        QTest::addRow("sp all-gather") << 4 << true << 1 << "none"
                                       << "tp.all_gather" << 4096.0 * 4096 * 2 << 4;
        // FSDP: one layer's parameters in bf16 (4 h^2 + 3 h f + 2 h).
        QTest::addRow("fsdp gather")
            << 1 << false << 8 << "full"
            << "dp.all_gather" << (4.0 * 4096 * 4096 + 3.0 * 4096 * 11008 + 2.0 * 4096) * 2 << 8;
    }
    void collectivesFromLayout()
    {
        QFETCH(int, tp);
        QFETCH(bool, sp);
        QFETCH(int, dp);
        QFETCH(QString, sharding);
        QFETCH(QString, name);
        QFETCH(double, bytes);
        QFETCH(int, group);
        const Plan p = makePlan("llama2-7b", 4096, tp, 1, sp, dp, sharding.toStdString().c_str());
        for (const Catalog *cat : {static_cast<const Catalog *>(nullptr), &Catalog::builtin()}) {
            const Workload w = buildWorkload(p, {}, cat);
            const Kernel *c = nullptr;
            for (const Kernel &k : w.kernels)
                if (QString::fromStdString(k.name).startsWith(name) &&
                    std::abs(k.bytes - bytes) <= 1.0)
                    c = &k;
            QVERIFY2(c, qPrintable(name + (cat ? QStringLiteral(" (engine)") : QString())));
            QVERIFY(c->kind == KernelKind::Collective);
            QCOMPARE(c->group_size, group);
            if (cat)
                QVERIFY(c->engine_time_s > 0);
        }
    }

    void busBandwidthFactors()
    {
        QCOMPARE(busBandwidthFactor("all_reduce", 8), 2.0 * 7 / 8);
        QCOMPARE(busBandwidthFactor("all_gather", 8), 7.0 / 8);
        QCOMPARE(busBandwidthFactor("send_recv", 2), 1.0);
    }

    void kernelJsonRoundTrip()
    {
        const Workload w =
            buildWorkload(makePlan("llama3-8b", 4096, 2, 1, true, 2), {}, &Catalog::builtin());
        for (const Kernel &k : w.kernels) {
            const Kernel r = kernelFromJson(kernelToJson(k));
            QCOMPARE(r.name, k.name);
            QVERIFY(r.kind == k.kind);
            QCOMPARE(r.m, k.m);
            QCOMPARE(r.seq_q, k.seq_q);
            QCOMPARE(r.bytes, k.bytes);
            QCOMPARE(r.group_size, k.group_size);
        }
        QVERIFY_THROWS_EXCEPTION(PlanError, kernelFromJson(nlohmann::json{{"name", "x"}}));
    }

    void probePlanIsOneDevice()
    {
        const Plan p = makePlan("llama2-7b", 4096, 2, 1, false, 4, "full", "full");
        Workload w = buildWorkload(p);
        QCOMPARE(w.probe.mode, std::string("bf16"));
        QVERIFY(w.probe.recompute == Recompute::Full);
        w.probe.layers = 3;
        const Plan pp = probePlan(p, w.probe);
        QCOMPARE(pp.parallel.world(), 1);
        QVERIFY(pp.parallel.sharding == Sharding::None);
        QCOMPARE(pp.model.layers, 3);
        QVERIFY(pp.precision.master_weights == DType::None);
        QVERIFY(pp.precision.optimizer_state == DType::BF16);
        QCOMPARE(pp.framework, std::string("pytorch"));
        // Fitting: more budget never fits fewer layers; a tiny budget fits none.
        const Catalog &cat = Catalog::builtin();
        const int small = probeLayersThatFit(p, w.probe, cat, 8.0 * kGiB);
        const int large = probeLayersThatFit(p, w.probe, cat, 120.0 * kGiB);
        QVERIFY(small >= 1);
        QVERIFY(large >= small);
        QCOMPARE(probeLayersThatFit(p, w.probe, cat, 1.0), 0);
        MemoryProbe fit = w.probe;
        fit.layers = small;
        const MemoryEstimate e = estimateMemory(probePlan(p, fit), cat);
        QVERIFY(e.peak_bytes * 1.05 <= 8.0 * kGiB);
    }

    void comparisonAndCalibration()
    {
        const Catalog &cat = Catalog::builtin();
        const Plan p = makePlan("llama2-7b", 4096, 2, 1, false, 4);
        WorkloadOptions o;
        o.max_tokens = 1024;
        RunResults r;
        const Workload w = buildWorkload(p, o, &cat);
        r.kernels = w.kernels;
        r.probe = w.probe;
        r.info.backend = "torch";
        r.info.device = "cuda";
        r.info.context_reserve = 0.6 * kGiB;
        for (const Kernel &k : r.kernels) {
            KernelMeasurement m;
            m.name = k.name;
            if (k.kind == KernelKind::Gemm || k.kind == KernelKind::Attention) {
                m.flops_per_s = 500e12;
                m.time_s = k.flops / m.flops_per_s;
            } else if (k.kind == KernelKind::Elementwise) {
                m.bytes_per_s = 3e12;
                m.time_s = k.bytes / m.bytes_per_s;
            } else {
                m.time_s = 1e-3;
                m.algbw = k.bytes / m.time_s;
                m.busbw = m.algbw * busBandwidthFactor(k.collective, k.group_size);
                m.ranks = k.group_size;
            }
            r.measurements.push_back(m);
        }
        const DeviceProfile &h200 = *cat.device("h200");
        const std::vector<KernelComparison> cmp = compareKernels(r, h200, p);
        QCOMPARE(cmp.size(), r.kernels.size());
        for (size_t i = 0; i < cmp.size(); ++i) {
            QVERIFY(cmp[i].predicted_s > 0);
            QVERIFY(cmp[i].measured_s > 0);
            if (r.kernels[i].kind == KernelKind::Gemm) // extrapolated at the measured rate
                QCOMPARE(cmp[i].measured_s, r.kernels[i].full_flops / 500e12);
        }
        const DeviceProfile cal = calibrateDevice(h200, r);
        QCOMPARE(cal.id, std::string("h200-calibrated"));
        QVERIFY(cal.calibration.present);
        QVERIFY(!cal.calibration.gemm_flops.empty());
        QCOMPARE(cal.calibration.memory_bandwidth, 3e12);
        QCOMPARE(cal.context_reserve_bytes, 0.6 * kGiB);
        QVERIFY(std::abs(cal.gemm_efficiency - 500e12 / h200.peak_flops_bf16) < 1e-9);
        // The profile goes through the core's reader and keeps its calibration.
        const DeviceProfile back = deviceFromJson(deviceToJson(cal));
        QCOMPARE(back.calibration.gemm_flops, cal.calibration.gemm_flops);
        QCOMPARE(back.calibration.busbw.size(), cal.calibration.busbw.size());
        // With the calibration, a GEMM is predicted at the measured rate.
        const Kernel &g = r.kernels.front();
        QCOMPARE(predictKernelSeconds(g, back, p), g.full_flops / 500e12);
    }

    void memoryComparisonUsesWhatRan()
    {
        const Catalog &cat = Catalog::builtin();
        const Plan p = makePlan("tinyllama-1.1b", 2048, 1, 1, false);
        RunResults r;
        r.probe = buildWorkload(p).probe;
        r.probe_result.status = "ok";
        r.probe_result.layers = 4;
        r.probe_result.seq_len = 512;
        r.probe_result.micro_batch = 1;
        r.probe_result.mode = "bf16";
        r.probe_result.attention = "eager"; // fell back on an old PyTorch
        r.probe_result.peak_allocated = 1.0 * kGiB;
        const MemoryComparison mc = compareProbe(p, r, cat);
        QVERIFY(mc.available);
        QCOMPARE(mc.plan.model.layers, 4);
        QVERIFY(mc.plan.memory.attention == Attention::Eager);
        // The probe counts from its baseline, which holds the GEMM workspaces: the prediction
        // leaves them out (core/workspace.h).
        const double W =
            gemmWorkspaces(*cat.device(mc.plan.cluster.device), *cat.framework(mc.plan.framework))
                .total();
        QVERIFY(W > 0);
        QCOMPARE(mc.predicted_peak, estimateMemory(mc.plan, cat).peak_bytes - W);
        QCOMPARE(mc.ratio, 1.0 * kGiB / mc.predicted_peak);
    }
};

QTEST_APPLESS_MAIN(TestWorkload)
#include "tst_workload.moc"
