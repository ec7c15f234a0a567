#include "framework.h"

#include "device.h"
#include "errors.h"
#include "jsoninput.h"

#include <algorithm>
#include <cmath>

namespace shardscope {

FrameworkProfile frameworkFromJson(const nlohmann::json &j)
{
    ObjectReader r(j, "");
    FrameworkProfile f;
    f.id = r.string("id", std::nullopt);
    if (f.id.empty())
        throw PlanError("id", "must not be empty");
    f.name = r.string("name", f.id);
    f.description = r.string("description", std::string());
    f.grads_set_to_none = r.boolean("grads_set_to_none", true);
    f.main_grad_dtype = r.dtype("main_grad_dtype", {DType::None, DType::FP32, DType::BF16, DType::FP16},
                                DType::None);
    f.ddp_bucket_copy = r.boolean("ddp_bucket_copy", true);
    f.ddp_bucket_bytes = r.number("ddp_bucket_bytes", 0, 1e12, f.ddp_bucket_bytes, true);
    f.default_optimizer_impl = r.choice<OptimizerImpl>(
        "default_optimizer_impl", {OptimizerImpl::Foreach, OptimizerImpl::Fused, OptimizerImpl::ForLoop},
        OptimizerImpl::Foreach);
    f.reduce_bucket_bytes = r.number("reduce_bucket_bytes", 0, 1e12, 0.0);
    f.contiguous_buffers = r.boolean("contiguous_buffers", false);
    f.ddp_bucket_elements = r.number("ddp_bucket_elements", 0, 1e13, 0.0);
    f.pad_buckets_for_high_nccl_busbw = r.boolean("pad_buckets_for_high_nccl_busbw", false);
    f.overlap_grad_reduce = r.boolean("overlap_grad_reduce", true);
    f.overlap_param_gather = r.boolean("overlap_param_gather", false);
    f.vocab_divisible_by = int(r.integer("vocab_divisible_by", 1, 1048576, 1));
    f.megatron_process_groups = r.boolean("megatron_process_groups", false);
    {
        const std::string a = r.string("adapter_dtype", std::string("fp32"));
        const std::optional<DType> d = parseDType(a);
        if (a == "compute")
            f.adapter_dtype = DType::None;
        else if (d && (*d == DType::FP32 || *d == DType::BF16 || *d == DType::FP16))
            f.adapter_dtype = *d;
        else
            throw PlanError("adapter_dtype", "must be fp32, bf16, fp16 or \"compute\", not \"" + a + "\"");
    }
    f.gemm_workspaces = int(r.integer("gemm_workspaces", 0, 64, 0));
    f.transformer_engine = r.boolean("transformer_engine", false);
    f.sp_gather_buffer = r.string("sp_gather_buffer", std::string("per_gemm"));
    if (f.sp_gather_buffer != "global" && f.sp_gather_buffer != "per_gemm")
        throw PlanError("sp_gather_buffer",
                        "must be \"global\" or \"per_gemm\", not \"" + f.sp_gather_buffer + "\"");
    f.multi_tensor_scale_copies = r.boolean("multi_tensor_scale_copies", false);
    f.pipeline_input_kept = r.boolean("pipeline_input_kept", false);
    f.fsdp_root_stays_gathered = r.boolean("fsdp_root_stays_gathered", true);
    f.fsdp_prefetch_layers = int(r.integer("fsdp_prefetch_layers", 0, 64, 1));
    f.norm = r.string("norm", std::string("upcast"));
    if (f.norm != "upcast" && f.norm != "fused")
        throw PlanError("norm", "must be \"upcast\" or \"fused\", not \"" + f.norm + "\"");
    f.autocast_input_casts = r.boolean("autocast_input_casts", true);
    f.autocast_weight_cache = r.boolean("autocast_weight_cache", true);
    f.fused_swiglu = r.boolean("fused_swiglu", false);
    f.flash_output_copy = r.boolean("flash_output_copy", false);
    f.ulysses_kv_repeat = r.boolean("ulysses_kv_repeat", false);
    f.fused_softmax = r.boolean("fused_softmax", false);
    f.hidden_dropout = r.number("hidden_dropout", 0, 0.99, 0.0);
    f.attention_dropout = r.number("attention_dropout", 0, 0.99, 0.0);
    f.loss = r.string("loss", std::string("hf_upcast"));
    if (f.loss != "hf_upcast" && f.loss != "fused_fp32" && f.loss != "fused_fp32_copy")
        throw PlanError("loss", "must be \"hf_upcast\", \"fused_fp32\" or \"fused_fp32_copy\", not \"" +
                                    f.loss + "\"");
    f.rope = r.string("rope", std::string("shared"));
    if (f.rope != "shared" && f.rope != "per_layer" && f.rope != "keeps_input" && f.rope != "fused")
        throw PlanError("rope",
                        "must be \"shared\", \"per_layer\", \"keeps_input\" or \"fused\", not \"" +
                            f.rope + "\"");
    if (r.has("allocator_overhead_fraction"))
        throw PlanError("allocator_overhead_fraction",
                        "is no longer read: the caching allocator is replayed over the step's "
                        "timeline (plan memory.allocator); remove the field");
    // Read by the compute model from `raw`; checked here.
    r.secondsOrPerDirection("host_s_per_kernel", 1.0);
    r.number("recompute_host_factor", 0, 100, 1.0);
    f.raw = j;
    return f;
}

DType mainGradDtype(const Plan &plan, const FrameworkProfile &fw)
{
    if (fw.main_grad_dtype == DType::None)
        return DType::None;
    return plan.precision.main_grads != DType::None ? plan.precision.main_grads : fw.main_grad_dtype;
}

namespace {

int divisorOf(const Plan &plan, int profileDivisor)
{
    return plan.model.vocab_divisible_by > 0 ? plan.model.vocab_divisible_by : std::max(1, profileDivisor);
}

int64_t padVocab(const Plan &plan, int64_t d)
{
    if (d <= 1)
        return plan.model.vocab;
    const int64_t multiple = d * std::max(1, plan.parallel.tp);
    return (plan.model.vocab + multiple - 1) / multiple * multiple;
}

} // namespace

int vocabDivisor(const Plan &plan, const FrameworkProfile &fw) { return divisorOf(plan, fw.vocab_divisible_by); }

bool runsTransformerEngine(const FrameworkProfile &fw, const DeviceProfile &dev)
{
    return fw.transformer_engine && dev.vendor == "nvidia";
}

bool spGatherKept(const Plan &plan, const FrameworkProfile &fw, const DeviceProfile &dev)
{
    return plan.parallel.sp && plan.parallel.tp > 1 && fw.sp_gather_buffer == "global" &&
           !runsTransformerEngine(fw, dev);
}

int64_t paddedVocab(const Plan &plan, const FrameworkProfile &fw) { return padVocab(plan, vocabDivisor(plan, fw)); }

Plan paddedVocabPlan(const Plan &plan, int profileDivisor)
{
    Plan p;
    assignPaddedVocabPlan(plan, profileDivisor, p);
    return p;
}

void assignPaddedVocabPlan(const Plan &plan, int profileDivisor, Plan &out)
{
    out = plan;
    out.model.vocab = padVocab(plan, divisorOf(plan, profileDivisor));
    out.model.vocab_divisible_by = 1;
}

bool vocabNeedsPadding(const Plan &plan, int profileDivisor)
{
    return padVocab(plan, divisorOf(plan, profileDivisor)) != plan.model.vocab;
}

PaddedVocabPlan::PaddedVocabPlan(const Plan &plan, int profileDivisor) : given_(plan)
{
    if (vocabNeedsPadding(plan, profileDivisor))
        copy_ = paddedVocabPlan(plan, profileDivisor);
}

Plan paddedVocabPlan(const Plan &plan, const FrameworkProfile &fw)
{
    return paddedVocabPlan(plan, fw.vocab_divisible_by);
}

bool overlapGradReduceOf(const Plan &plan, const FrameworkProfile &fw)
{
    return plan.memory.overlap_grad_reduce.value_or(fw.overlap_grad_reduce);
}

bool overlapParamGatherOf(const Plan &plan, const FrameworkProfile &fw)
{
    return plan.memory.overlap_param_gather.value_or(fw.overlap_param_gather);
}

Dropout dropoutOf(const Plan &plan, const FrameworkProfile &fw)
{
    const Dropout &d = plan.training.dropout;
    return {d.hidden >= 0 ? d.hidden : fw.hidden_dropout,
            d.attention >= 0 ? d.attention : fw.attention_dropout};
}

LossHead lossHeadOf(const Plan &plan, const FrameworkProfile &fw)
{
    if (plan.memory.loss != LossHead::Framework)
        return plan.memory.loss;
    if (fw.loss == "hf_upcast")
        return LossHead::HfUpcast;
    return fw.loss == "fused_fp32_copy" ? LossHead::FusedFp32Copy : LossHead::FusedFp32;
}

RopeSaves ropeSavesOf(const Plan &plan, const FrameworkProfile &fw, const std::string &vendor)
{
    if (plan.memory.rope != RopeSaves::Framework)
        return plan.memory.rope;
    if (fw.rope == "fused")
        return vendor == "huawei" ? RopeSaves::PerLayer : RopeSaves::Shared;
    return fw.rope == "per_layer"     ? RopeSaves::PerLayer
           : fw.rope == "keeps_input" ? RopeSaves::KeepsInput
                                      : RopeSaves::Shared;
}

bool fusedSwigluOf(const Plan &plan, const FrameworkProfile &fw)
{
    return plan.memory.fused_swiglu.value_or(fw.fused_swiglu);
}

bool flashOutputCopyOf(const Plan &plan, const FrameworkProfile &fw)
{
    return plan.memory.flash_output_copy.value_or(fw.flash_output_copy);
}

bool ulyssesKvRepeatOf(const Plan &plan, const FrameworkProfile &fw)
{
    return plan.parallel.ulysses_kv_repeat.value_or(fw.ulysses_kv_repeat);
}

bool kvRepeatWidens(const ModelShape &m)
{
    return !m.mla_attention() && m.kv_heads < m.heads;
}

bool ulyssesRepeatsKv(const Plan &plan, const FrameworkProfile &fw)
{
    return plan.parallel.ulyssesDegree() > 1 && kvRepeatWidens(plan.model) &&
           ulyssesKvRepeatOf(plan, fw);
}

double fusedLinearChunkTokens(double tokens, double vocab, double hidden)
{
    const double factor = std::ceil(vocab / std::max(1.0, hidden));
    const double chunk = std::ceil(tokens / std::max(1.0, factor));
    return std::min(tokens, std::exp2(std::ceil(std::log2(std::max(1.0, chunk)))));
}

} // namespace shardscope
