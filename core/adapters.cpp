// Trainable and frozen elements under LoRA, DoRA, QLoRA and freezing.
//
// LoRA (Hu et al. 2021; PEFT's lora.Linear): a targeted linear W (out x in) keeps W frozen and
// adds A (r x in) and B (out x r); DoRA (Liu et al. 2024; PEFT's use_dora) adds a magnitude
// vector of `out`. Under tensor parallelism the adapters follow the layer's split (Megatron /
// MindSpeed-LLM LoRA): a column-parallel layer (q, k, v, gate, up) keeps A whole and splits B by
// rows; a row-parallel one (o, down) splits A by columns and keeps B whole.
// QLoRA (Dettmers et al. 2023; bitsandbytes Linear4bit / Linear8bitLt): every frozen linear
// weight but the LM head is stored k-bit; prepare_model_for_kbit_training casts the remaining
// frozen parameters (norms, biases, embedding, head) to fp32.
// PEFT's modules_to_save keeps the original module frozen and trains a copy of it.
#include "adapters.h"

#include "framework.h"
#include "layers.h"
#include "model.h"
#include "plan.h"

#include <algorithm>
#include <array>

namespace shardscope {

std::string_view toString(TrainingMethod m)
{
    switch (m) {
    case TrainingMethod::Full: return "full";
    case TrainingMethod::LoRA: return "lora";
    case TrainingMethod::DoRA: return "dora";
    case TrainingMethod::QLoRA: return "qlora";
    case TrainingMethod::Freeze: return "freeze";
    }
    return "full";
}

std::string_view toString(Quantization q)
{
    switch (q) {
    case Quantization::NF4: return "nf4";
    case Quantization::FP4: return "fp4";
    case Quantization::INT8: return "int8";
    }
    return "nf4";
}

std::string_view targetName(LinearTarget t)
{
    switch (t) {
    case kTargetQ: return "q";
    case kTargetK: return "k";
    case kTargetV: return "v";
    case kTargetO: return "o";
    case kTargetGate: return "gate";
    case kTargetUp: return "up";
    case kTargetDown: return "down";
    case kTargetAllLinear: return "all_linear";
    }
    return "";
}

std::string_view partName(ModelPart p)
{
    switch (p) {
    case kPartEmbedding: return "embedding";
    case kPartHead: return "head";
    case kPartNorms: return "norms";
    case kPartAttention: return "attention";
    case kPartFfn: return "ffn";
    case kPartExperts: return "experts";
    }
    return "";
}

std::vector<std::string> targetNames(uint8_t targets)
{
    std::vector<std::string> out;
    for (int b = 0; b < 7; ++b)
        if (targets & (1 << b))
            out.emplace_back(targetName(LinearTarget(1 << b)));
    return out;
}

std::vector<std::string> partNames(uint8_t parts)
{
    std::vector<std::string> out;
    for (int b = 0; b < 6; ++b)
        if (parts & (1 << b))
            out.emplace_back(partName(ModelPart(1 << b)));
    return out;
}

double quantizedBytesPerElement(const QloraOptions &q, double rowLength)
{
    if (q.quant == Quantization::INT8)
        return 1.0 + 4.0 / std::max(1.0, rowLength); // int8 weight + fp32 scale per row (SCB)
    const double block = std::max(1, q.block_size);
    // Double quantization: 8-bit absmax per block, then an fp32 absmax per 256 of those.
    const double constants = q.double_quant ? 1.0 / block + 4.0 / (block * 256.0) : 4.0 / block;
    return 0.5 + constants;
}

namespace {

/// One linear layer of a decoder layer, global shape, as this rank splits it.
struct Linear
{
    LayerPart part;
    LinearTarget target;
    double in, out;
    Split split;   ///< under TP (routed experts: under etp)
    bool expert;   ///< one of every local expert
    double bias;   ///< bias elements on this rank
    double copies; ///< identical linears (shared experts)
    FusedModule module; ///< Megatron-Core's module it is part of (core/layers.h)
};

struct LayerShape
{
    std::vector<Linear> linears;
    double norms = 0, vectors = 0, router = 0;
    double experts = 0; ///< experts on this rank (experts / ep)
};

LayerShape layerShape(const Plan &plan, LayerKind kind)
{
    const LayerSpec spec = layerSpec(plan.model, kind);
    const double tp = plan.parallel.tp, etp = plan.parallel.expertTp();
    LayerShape s;
    for (const LinearSpec &l : spec.linears) {
        const bool expert = l.part == LayerPart::Expert;
        const double split = expert ? etp : tp;
        const double bias = double(l.biases()) / (l.split == Split::Column ? split : 1.0) / l.copies;
        s.linears.push_back({l.part, l.target, double(l.in), double(l.out), l.split, expert, bias,
                             double(l.copies), fusedModuleOf(l)});
    }
    s.norms = double(spec.norms);
    s.vectors = double(spec.attentionVectors + spec.sharedGate);
    s.router = double(spec.router);
    s.experts = double(spec.experts) / plan.parallel.ep;
    return s;
}

bool partTrained(const Plan &plan, ModelPart part)
{
    const MethodOptions &mo = plan.training.method;
    switch (mo.method) {
    case TrainingMethod::Full: return true;
    case TrainingMethod::Freeze: return (mo.freeze.parts & part) != 0;
    default: return false;
    }
}

/// Stage holding decoder layer `layer` (core/layers.h).
int stageOfLayer(const Plan &plan, int layer)
{
    return shardscope::stageOfLayer(plan.parallel, plan.model.layers, layer);
}

} // namespace

bool adaptersOnFusedModules(const Plan &plan)
{
    return plan.framework == "megatron" && !plan.model.mla_attention();
}

uint8_t adaptedTargets(const Plan &plan)
{
    uint8_t t = plan.training.method.lora.targets;
    if (adaptersOnFusedModules(plan)) {
        constexpr uint8_t qkv = kTargetQ | kTargetK | kTargetV, gateUp = kTargetGate | kTargetUp;
        if (t & qkv)
            t |= qkv;
        if (t & gateUp)
            t |= gateUp;
    }
    return t;
}

double adapterBytes(const Plan &plan, const FrameworkProfile &fw)
{
    const DType d = plan.training.method.lora.dtype != DType::None ? plan.training.method.lora.dtype
                                                                    : fw.adapter_dtype;
    return bytesOf(d == DType::None ? plan.precision.compute : d);
}

StageElements stageElements(const Plan &plan, int stage)
{
    const ModelShape &m = plan.model;
    const MethodOptions &mo = plan.training.method;
    const double t = plan.parallel.tp;
    const bool qlora = mo.method == TrainingMethod::QLoRA;
    const double r = mo.lora.rank;
    const bool dora = mo.method == TrainingMethod::DoRA;
    const bool fused = adaptersOnFusedModules(plan);
    const uint8_t targets = adaptedTargets(plan);
    StageElements e;

    // The stage's layers come in kinds (dense, MoE) and, for each, in two trainings: trained
    // whole (full training, freezing's last layers) and the rest; each is accounted once and
    // counted.
    int layersHere = 0, wholeHere[2] = {0, 0}, kindHere[2] = {0, 0};
    for (int layer = 0; layer < m.layers; ++layer) {
        if (stageOfLayer(plan, layer) != stage)
            continue;
        ++layersHere;
        const int k = m.moeLayer(layer) ? 1 : 0;
        ++kindHere[k];
        if (mo.method == TrainingMethod::Full ||
            (mo.method == TrainingMethod::Freeze && layer >= m.layers - mo.freeze.last_layers))
            ++wholeHere[k];
    }
    auto matrix = [&](double rows, double cols, double times, bool hidden) {
        e.trainedMatrixEdges += times * (rows + cols);
        if (hidden) {
            e.trainedHiddenMatrices += times * rows * cols;
            const double lo = std::min(rows, cols), hi = std::max(rows, cols);
            e.newtonSchulzFlops += times * 5.0 * (2.0 * lo * lo * hi + 2.0 * lo * lo * lo + 2.0 * lo * lo * hi);
        }
        if (rows * cols > e.largestTrainedMatrix) {
            e.largestTrainedMatrix = rows * cols;
            e.largestTrainedSquare = std::min(rows, cols) * std::min(rows, cols);
        }
    };
    auto addLayers = [&](const LayerShape &ls, bool wholeLayer, double n) {
        if (n <= 0)
            return;
        auto trained = [&](ModelPart p) { return wholeLayer || partTrained(plan, p); };
        double layerTrainedElems = 0;
        // Norms, attention's own vectors and biases: replicated / split like their layers;
        // never quantized.
        const double normElems = ls.norms + ls.vectors;
        double biasElems = 0;
        for (const Linear &l : ls.linears)
            biasElems += l.bias * l.copies * (l.expert ? ls.experts : 1.0);
        if (trained(kPartNorms)) {
            e.trainedDense += n * normElems;
            e.trainedVectors += n * normElems;
            if (double(m.hidden) < 4096)
                e.trainedSmallTensors += n * normElems;
            layerTrainedElems += normElems;
        } else {
            e.frozenDense += n * normElems;
            if (qlora)
                e.upcastFrozen += n * normElems;
        }
        if (trained(kPartAttention)) { // the biases belong to attention and the dense FFN
            e.trainedDense += n * biasElems;
            e.trainedVectors += n * biasElems;
            if (double(m.hidden) / t < 4096)
                e.trainedSmallTensors += n * biasElems;
            layerTrainedElems += biasElems;
        } else {
            e.frozenDense += n * biasElems;
            if (qlora)
                e.upcastFrozen += n * biasElems;
        }
        if (ls.router > 0) {
            if (trained(kPartExperts)) {
                e.trainedDense += n * ls.router;
                matrix(double(m.moe.experts), double(m.hidden), n, true);
                layerTrainedElems += ls.router;
            } else {
                e.frozenDense += n * ls.router;
                if (qlora) {
                    e.quantizedDense += n * ls.router;
                    e.quantizedBytes += n * ls.router * quantizedBytesPerElement(mo.qlora, double(m.hidden));
                }
            }
        }
        const double etp = plan.parallel.expertTp();
        for (const Linear &l : ls.linears) {
            const double copies = l.expert ? ls.experts : l.copies;
            const double split = l.split == Split::Duplicated ? 1.0 : (l.expert ? etp : t);
            const bool column = l.split == Split::Column;
            const double w = l.in * l.out / split; // per rank, per copy
            // Shared experts train with the experts; the dense FFN with the FFN.
            const ModelPart part = l.part == LayerPart::Attention  ? kPartAttention
                                   : l.part == LayerPart::DenseFfn ? kPartFfn
                                                                   : kPartExperts;
            const double rows = column ? l.out / split : l.out;
            const double cols = l.split == Split::Row ? l.in / split : l.in;
            if (trained(part)) {
                (l.expert ? e.trainedExpert : e.trainedDense) += n * w * copies;
                matrix(rows, cols, n * copies, true);
                layerTrainedElems += w * copies;
            } else {
                (l.expert ? e.frozenExpert : e.frozenDense) += n * w * copies;
                if (qlora) {
                    (l.expert ? e.quantizedExpert : e.quantizedDense) += n * w * copies;
                    (l.expert ? e.quantizedBytesExpert : e.quantizedBytes) +=
                        n * w * copies * quantizedBytesPerElement(mo.qlora, cols);
                    e.largestQuantized = std::max(e.largestQuantized, w);
                }
            }
            if (mo.usesAdapters() && (targets & l.target)) {
                // On a fused module (adaptersOnFusedModules) the first of its linears carries
                // the one adapter, over the outputs of all of them; the others add none.
                double out = l.out;
                if (fused && l.module != FusedModule::Own) {
                    auto sameModule = [&](const Linear &o) {
                        return o.module == l.module && o.part == l.part;
                    };
                    if (&l != &*std::find_if(ls.linears.begin(), ls.linears.end(), sameModule))
                        continue;
                    out = 0;
                    for (const Linear &o : ls.linears)
                        if (sameModule(o))
                            out += o.out;
                }
                const double adRows = column ? out / split : out;
                double a = column                  ? r * l.in + r * out / split
                           : l.split == Split::Row ? r * l.in / split + r * out
                                                   : r * l.in + r * out;
                matrix(r, cols, n * copies, true);   // A
                matrix(adRows, r, n * copies, true); // B
                if (dora) {
                    a += adRows;
                    e.trainedVectors += n * copies * adRows;
                    if (adRows < 4096)
                        e.trainedSmallTensors += n * copies * adRows;
                }
                (l.expert ? e.adapterExpert : e.adapterDense) += n * a * copies;
                layerTrainedElems += a * copies;
                e.largestAdapted = std::max(e.largestAdapted, l.in * out / split);
            }
        }
        e.trainedPerLayer += n * layerTrainedElems;
    };
    for (int k = 0; k < 2; ++k) {
        if (kindHere[k] == 0)
            continue;
        const LayerShape ls = layerShape(plan, k == 1 ? LayerKind::Moe : LayerKind::Dense);
        addLayers(ls, true, wholeHere[k]);
        addLayers(ls, false, kindHere[k] - wholeHere[k]);
    }
    if (layersHere > 0)
        e.trainedPerLayer /= layersHere;

    // Root modules: embedding on the first stage; final norm and head on the last (a tied head
    // on another stage than the embedding is a copy of it there).
    const double vocabShard = double(m.vocab) * double(m.hidden) / t;
    const bool saveEmbedding = mo.usesAdapters() && (mo.lora.modules_to_save & kPartEmbedding);
    const bool saveHead = mo.usesAdapters() && (mo.lora.modules_to_save & kPartHead);
    // Root modules: vocabulary tables are matrices (not Muon's: it leaves embedding and head to
    // AdamW), the final norm a vector.
    auto rootShape = [&](double elems) {
        if (elems >= double(m.hidden) * 2)
            matrix(elems / double(m.hidden), double(m.hidden), 1, false);
        else {
            e.trainedVectors += elems;
            if (elems < 4096)
                e.trainedSmallTensors += elems;
        }
    };
    auto root = [&](double elems, bool trainedHere, bool savedCopy, double &trainedSlot) {
        if (trainedHere) {
            e.trainedDense += elems;
            trainedSlot += elems;
            rootShape(elems);
            return;
        }
        e.frozenDense += elems;
        if (qlora)
            e.upcastFrozen += elems;
        if (savedCopy) { // PEFT ModulesToSaveWrapper: original frozen, a trained copy beside it
            e.trainedDense += elems;
            trainedSlot += elems;
            rootShape(elems);
        }
    };
    const int pp = plan.parallel.pp;
    if (stage == 0)
        root(vocabShard, partTrained(plan, kPartEmbedding), saveEmbedding, e.trainedEmbedding);
    if (stage == pp - 1) {
        const double finalNorm = double(countParameters(m).final_norm);
        root(finalNorm, partTrained(plan, kPartNorms), false, e.trainedHead);
        if (!m.tied_embeddings)
            root(vocabShard, partTrained(plan, kPartHead), saveHead, e.trainedHead);
        else if (pp > 1)
            root(vocabShard, partTrained(plan, kPartEmbedding) || partTrained(plan, kPartHead),
                 saveEmbedding || saveHead, e.trainedHead);
    }
    return e;
}

int64_t trainableParameters(const Plan &plan)
{
    const MethodOptions &mo = plan.training.method;
    const ModelShape &m = plan.model;
    if (mo.method == TrainingMethod::Full)
        return countParameters(m).total;
    // The whole model is one stage without TP.
    Plan whole = plan;
    whole.parallel.tp = whole.parallel.pp = whole.parallel.ep = 1;
    whole.parallel.pp_schedule = PpSchedule::OneFOneB;
    whole.parallel.virtual_stages = 1;
    const StageElements e = stageElements(whole, 0);
    double n = e.trained();
    // stageElements counts a local expert set of experts / ep; with ep = 1 that is all of them.
    return int64_t(n + 0.5);
}

} // namespace shardscope
