#include "layouttext.h"

#include <QStringList>

namespace shardscope {

QString layoutText(const Plan &plan)
{
    const Parallel &pa = plan.parallel;
    QStringList parts;
    if (pa.tp > 1)
        parts << QStringLiteral("TP%1%2").arg(pa.tp).arg(pa.sp ? QStringLiteral("+SP") : QString());
    if (pa.pp > 1)
        parts << QStringLiteral("PP%1").arg(pa.pp);
    if (pa.cp > 1)
        parts << QStringLiteral("CP%1").arg(pa.cp);
    if (pa.ep > 1)
        parts << QStringLiteral("EP%1").arg(pa.ep);
    if (pa.dp > 1 || parts.isEmpty()) {
        switch (pa.sharding) {
        case Sharding::None: parts << QStringLiteral("DDP%1").arg(pa.dp); break;
        case Sharding::Optimizer: parts << QStringLiteral("ZeRO1-DP%1").arg(pa.dp); break;
        case Sharding::Grads: parts << QStringLiteral("ZeRO2-DP%1").arg(pa.dp); break;
        case Sharding::Full: parts << QStringLiteral("FSDP%1").arg(pa.dp); break;
        }
    }
    return parts.join(QStringLiteral(" x "));
}

} // namespace shardscope
