#include "layouttext.h"

#include <QStringList>

namespace shardscope {

QString layoutText(const Plan &plan)
{
    const Parallel &pa = plan.parallel;
    QStringList parts;
    if (pa.tp > 1)
        parts << QStringLiteral("TP%1%2").arg(pa.tp).arg(pa.sp ? QStringLiteral("+SP") : QString());
    if (pa.pp > 1) {
        // Uneven first / last stages: their layers beside the degree.
        if (pa.first_stage_layers > 0 || pa.last_stage_layers > 0)
            parts << QStringLiteral("PP%1(%2/%3)").arg(pa.pp).arg(pa.first_stage_layers).arg(pa.last_stage_layers);
        else
            parts << QStringLiteral("PP%1").arg(pa.pp);
    }
    if (pa.cp > 1) {
        switch (pa.cp_algo) {
        case CpAlgo::Ring: parts << QStringLiteral("CP%1").arg(pa.cp); break;
        case CpAlgo::Ulysses: parts << QStringLiteral("CP%1-Ulysses").arg(pa.cp); break;
        case CpAlgo::Hybrid:
            parts << QStringLiteral("CP%1-hybrid(%2x%3)").arg(pa.cp).arg(pa.ulyssesDegree()).arg(pa.ringDegree());
            break;
        }
    }
    if (pa.ep > 1)
        parts << QStringLiteral("EP%1").arg(pa.ep);
    if (pa.etp > 0 && pa.etp != pa.tp && plan.model.moe.enabled())
        parts << QStringLiteral("ETP%1").arg(pa.etp);
    if (pa.dp > 1 || parts.isEmpty()) {
        switch (pa.sharding) {
        case Sharding::None: parts << QStringLiteral("DDP%1").arg(pa.dp); break;
        case Sharding::Optimizer: parts << QStringLiteral("ZeRO1-DP%1").arg(pa.dp); break;
        case Sharding::Grads: parts << QStringLiteral("ZeRO2-DP%1").arg(pa.dp); break;
        case Sharding::Full:
            parts << (pa.dp_shard > 0 ? QStringLiteral("HSDP%1(%2x%3)").arg(pa.dp).arg(pa.dp_shard).arg(pa.replicas())
                                      : QStringLiteral("FSDP%1").arg(pa.dp));
            break;
        }
    }
    return parts.join(QStringLiteral(" x "));
}

} // namespace shardscope
