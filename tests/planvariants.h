#pragma once

// Plans that between them take every branch of explainMemory: the sharding stages, TP with and
// without SP, the three pipeline schedules, CP, each offload, MoE, eager attention, autocast
// (fp32 parameters, bf16 compute), grad accumulation, the optimizers and their implementations,
// the three framework profiles, and the training methods (LoRA, DoRA, QLoRA, freezing); and every collective of the communication engine (FSDP
// with and without resharding, TP with and without SP under full recompute, CP, PP, EP). Each
// is a merge patch over a Llama-2-7B plan on 8 x 910B.
#include "core/catalog.h"
#include "core/plan.h"

#include <nlohmann/json.hpp>
#include <vector>

namespace shardscope::testing {

struct PlanVariant
{
    const char *name;
    const char *patch; ///< JSON merge patch over variantBase()
};

inline nlohmann::json variantBase()
{
    return nlohmann::json::parse(R"({
      "format": "shardscope-plan", "version": 1, "name": "t",
      "model": {"preset": "llama2-7b"},
      "training": {"seq_len": 4096, "micro_batch": 1, "grad_accum": 1},
      "precision": {"params": "bf16", "grads": "bf16", "master_weights": "fp32",
                    "optimizer": "adamw", "optimizer_state": "fp32", "compute": "bf16"},
      "parallel": {"dp": 8, "tp": 1, "pp": 1, "cp": 1, "sharding": "none"},
      "memory": {"recompute": "full", "attention": "flash"},
      "framework": "pytorch",
      "cluster": {"device": "ascend-910b2", "devices_per_node": 8, "nodes": 1}})");
}

inline const std::vector<PlanVariant> &planVariants()
{
    static const std::vector<PlanVariant> v{
        {"ddp", "{}"},
        {"ddp-accum", R"({"training": {"grad_accum": 4}})"},
        {"zero1", R"({"parallel": {"sharding": "optimizer"}})"},
        {"zero2", R"({"parallel": {"sharding": "grads"}})"},
        {"fsdp", R"({"parallel": {"sharding": "full"}, "training": {"seq_len": 32768}})"},
        {"fsdp-no-reshard", R"({"parallel": {"sharding": "full", "reshard_after_forward": false}})"},
        {"tp-sp", R"({"parallel": {"dp": 2, "tp": 4, "sp": true}})"},
        {"tp-recompute", R"({"parallel": {"dp": 2, "tp": 4}})"},
        {"tp-selective",
         R"({"parallel": {"dp": 2, "tp": 4}, "memory": {"recompute": "selective"}})"},
        {"pp-1f1b", R"({"parallel": {"dp": 2, "pp": 4}, "training": {"grad_accum": 4}})"},
        {"pp-gpipe",
         R"({"parallel": {"dp": 2, "pp": 4, "pp_schedule": "gpipe"}, "training": {"grad_accum": 8}})"},
        {"pp-interleaved-megatron",
         R"({"parallel": {"dp": 1, "tp": 2, "pp": 4, "pp_schedule": "interleaved", "virtual_stages": 2,
                          "sharding": "optimizer", "sp": true},
             "training": {"grad_accum": 8}, "framework": "megatron"})"},
        {"cp", R"({"parallel": {"dp": 2, "cp": 4, "sharding": "full"}})"},
        {"eager", R"({"memory": {"attention": "eager", "recompute": "none"}})"},
        {"offload-all", R"({"parallel": {"sharding": "full"}, "memory": {"offload":
             {"optimizer": true, "params": true, "grads": true, "activations": true}}})"},
        {"offload-optimizer", R"({"memory": {"offload": {"optimizer": true}}})"},
        {"moe",
         R"({"model": {"preset": "mixtral-8x7b"}, "parallel": {"ep": 8, "sharding": "full"}})"},
        {"autocast", R"({"precision": {"params": "fp32", "grads": "fp32", "master_weights": "none"},
                        "memory": {"recompute": "none"}})"},
        {"autocast-recompute",
         R"({"precision": {"params": "fp32", "grads": "fp32", "master_weights": "none"}})"},
        {"fused-adam", R"({"precision": {"optimizer_impl": "fused"}})"},
        {"for-loop-sgd", R"({"precision": {"optimizer": "sgd", "optimizer_impl": "for_loop"}})"},
        {"lion-no-master", R"({"precision": {"optimizer": "lion", "optimizer_state": "bf16",
                                             "master_weights": "none"}})"},
        {"megatron", R"({"framework": "megatron"})"},
        {"deepspeed-zero3", R"({"framework": "deepspeed", "parallel": {"sharding": "full"}})"},
        {"lora", R"({"training": {"method": "lora", "lora": {"rank": 16, "targets": "all_linear"}}})"},
        {"lora-fsdp-save-head", R"({"parallel": {"sharding": "full"}, "training": {"method": "lora",
             "lora": {"modules_to_save": ["head"], "dropout": 0.05}}})"},
        {"dora", R"({"training": {"method": "dora"}, "memory": {"recompute": "none"}})"},
        {"qlora", R"({"training": {"method": "qlora", "lora": {"targets": "all_linear"}}})"},
        {"freeze", R"({"training": {"method": "freeze", "freeze": {"last_layers": 4}}})"},
        {"sgd-no-momentum", R"({"precision": {"optimizer": "sgd", "momentum": false}})"},
        {"adafactor", R"({"precision": {"optimizer": "adafactor"}, "parallel": {"sharding": "optimizer"}})"},
        {"adamw8bit", R"({"precision": {"optimizer": "adamw8bit"}})"},
        {"paged-adamw", R"({"precision": {"optimizer": "paged_adamw"}})"},
        {"muon", R"({"precision": {"optimizer": "muon"}})"},
        {"megatron-o2-reuse", R"({"framework": "megatron", "parallel": {"sharding": "optimizer"},
             "precision": {"main_grads": "bf16", "optimizer_state": "bf16", "reuse_fp32_param": true}})"},
        {"loss-chunked", R"({"memory": {"loss": "chunked", "loss_chunks": 16}})"},
        {"loss-fused-linear", R"({"memory": {"loss": "fused_linear"}, "training": {"seq_len": 32768}})"},
    };
    return v;
}

/// The variant's plan, validated against the built-in catalog (throws PlanError otherwise).
inline Plan variantPlan(const PlanVariant &v)
{
    nlohmann::json j = variantBase();
    j.merge_patch(nlohmann::json::parse(v.patch));
    return parsePlan(j, Catalog::builtin());
}

} // namespace shardscope::testing
