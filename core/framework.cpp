#include "framework.h"

#include "errors.h"

namespace shardscope {

FrameworkProfile frameworkFromJson(const nlohmann::json &j)
{
    if (!j.is_object())
        throw PlanError("framework", "must be a JSON object");
    FrameworkProfile f;
    f.id = j.value("id", std::string());
    if (f.id.empty())
        throw PlanError("framework.id", "is required");
    const std::string p = "framework " + f.id + ": ";
    try {
        f.name = j.value("name", f.id);
        f.description = j.value("description", std::string());
        f.grads_set_to_none = j.value("grads_set_to_none", true);
        const auto mg = parseDType(j.value("main_grad_dtype", std::string("none")), true);
        if (!mg)
            throw PlanError(p + "main_grad_dtype", "unknown dtype");
        f.main_grad_dtype = *mg;
        f.ddp_bucket_copy = j.value("ddp_bucket_copy", true);
        f.ddp_bucket_bytes = j.value("ddp_bucket_bytes", f.ddp_bucket_bytes);
        const std::string impl = j.value("default_optimizer_impl", std::string("foreach"));
        if (impl == "foreach")
            f.default_optimizer_impl = OptimizerImpl::Foreach;
        else if (impl == "fused")
            f.default_optimizer_impl = OptimizerImpl::Fused;
        else if (impl == "for_loop")
            f.default_optimizer_impl = OptimizerImpl::ForLoop;
        else
            throw PlanError(p + "default_optimizer_impl", "must be foreach, fused or for_loop");
        f.reduce_bucket_bytes = j.value("reduce_bucket_bytes", 0.0);
        f.fsdp_root_stays_gathered = j.value("fsdp_root_stays_gathered", true);
        f.fsdp_prefetch_layers = j.value("fsdp_prefetch_layers", 1);
        f.norm = j.value("norm", std::string("upcast"));
        if (f.norm != "upcast" && f.norm != "fused")
            throw PlanError(p + "norm", "must be \"upcast\" or \"fused\"");
        f.autocast_input_casts = j.value("autocast_input_casts", true);
        f.autocast_weight_cache = j.value("autocast_weight_cache", true);
        f.fused_swiglu = j.value("fused_swiglu", false);
        f.loss = j.value("loss", std::string("hf_upcast"));
        if (f.loss != "hf_upcast" && f.loss != "fused_fp32")
            throw PlanError(p + "loss", "must be \"hf_upcast\" or \"fused_fp32\"");
        f.allocator_overhead_fraction = j.value("allocator_overhead_fraction", 0.05);
        if (!(f.allocator_overhead_fraction >= 0 && f.allocator_overhead_fraction < 1))
            throw PlanError(p + "allocator_overhead_fraction", "must be in [0, 1)");
    } catch (const nlohmann::json::exception &e) {
        throw PlanError(p.substr(0, p.size() - 2), std::string("wrong type: ") + e.what());
    }
    f.raw = j;
    return f;
}

} // namespace shardscope
