#pragma once

#include "core/plan.h"

#include <QString>
#include <QStringList>

namespace shardscope {

class Catalog;

/// What a plan is, derived from its fields and never from its name: the model, the tokens of a
/// micro-batch, the devices and the parallel layout, joined by " · ", e.g.
/// "Llama 2 7B · 32K tokens · 8 x Ascend 910B2 · FSDP (ZeRO-3) dp 8". A training method other
/// than full training follows the model ("Llama 2 7B, LoRA r16").
QString describePlan(const Plan &plan, const Catalog &catalog);

/// The parts of describePlan().
QString describeModel(const Plan &plan);
QString describeTokens(const Plan &plan);
QString describeDevices(const Plan &plan, const Catalog &catalog);
/// "DDP dp 8", "TP 4 + SP · FSDP (ZeRO-3) dp 2", "CP 8 · FSDP (ZeRO-3) over cp 8" (the engine
/// shards over dp x cp), "one device".
QString describeLayout(const Plan &plan);

/// What `plan` changes against `baseline`, one short phrase per difference, in the order of the
/// plan editor ("sequence 64K tokens", "tp 4", "sharding ZeRO-2", "recompute selective"). Empty
/// when the two plans are the same apart from their names.
QStringList planDifferences(const Plan &plan, const Plan &baseline, const Catalog &catalog);

} // namespace shardscope
