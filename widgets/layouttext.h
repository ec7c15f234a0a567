#pragma once

#include "core/plan.h"

#include <QString>

namespace shardscope {

/// A short name of a plan's parallel layout: "DDP x8", "FSDP x8", "TP4 x FSDP2".
QString layoutText(const Plan &plan);

} // namespace shardscope
