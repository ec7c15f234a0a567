// MindSpeed's --reuse-fp32-param around the optimizer step (core/reuseparam.h): the conversion
// of the shared master buffer, by hand, and what the memory engine makes of it.
#include "core/catalog.h"
#include "core/memory.h"
#include "core/plan.h"
#include "core/reuseparam.h"
#include "planvariants.h"

#include <QTest>
#include <nlohmann/json.hpp>

using namespace shardscope;
using nlohmann::json;

class TestReuseParam : public QObject
{
    Q_OBJECT

private slots:
    // One rank in the optimizer's group: the transposed bf16 view of the largest parameter,
    // 2 x numel x 2 B. More: the 2 x 4096 x 4096 bf16 workspace (64 MiB) and one block's copy,
    // smaller where the rank's share of the buffer is.
    void conversionBytes()
    {
        QCOMPARE(reuseFp32ConversionBytes(1, 50331648, 1e9), 4.0 * 50331648);
        const double block = 4096.0 * 4096.0;
        QCOMPARE(reuseFp32ConversionBytes(4, 50331648, 1e9), 4.0 * block + 4.0 * block);
        QCOMPARE(reuseFp32ConversionBytes(4, 50331648, 1000), 4.0 * block + 4.0 * 1000);
    }

    // In the engine: Llama-2-7B under megatron on the 910B, the distributed optimizer at dp 1
    // (pp 8): the first stage's first-step peak rises by the embedding's copy (32000 x 4096 x 4 B)
    // after the Adam states are made; at dp 8 by the workspace and a block.
    void firstStepPeak()
    {
        auto peak = [](int dp, int pp, bool reuse) {
            json j = testing::variantBase();
            j["training"]["grad_accum"] = 8;
            j["parallel"] = {{"dp", dp}, {"pp", pp}, {"sharding", "optimizer"}};
            j["framework"] = "megatron";
            j["precision"]["reuse_fp32_param"] = reuse;
            const Plan p = parsePlan(j, Catalog::builtin());
            MemoryEstimate me = estimateMemory(p, Catalog::builtin());
            replayAllocator(p, Catalog::builtin(), me);
            const RankMemory &r = me.ranks.front();
            return std::pair{r.first_step_peak_bytes, r.after_step.total()};
        };
        const auto [peak1, after1] = peak(1, 8, true);
        QCOMPARE(peak1 - after1, 32000.0 * 4096 * 4);
        const auto [peak8, after8] = peak(8, 1, true);
        const double block = 4096.0 * 4096.0;
        QCOMPARE(peak8 - after8, 8.0 * block);
        // Without reuse-fp32-param nothing of the kind.
        const auto [plainPeak, plainAfter] = peak(1, 8, false);
        QVERIFY(plainPeak - plainAfter < 32000.0 * 4096 * 4);
    }
};

QTEST_APPLESS_MAIN(TestReuseParam)
#include "tst_reuseparam.moc"
