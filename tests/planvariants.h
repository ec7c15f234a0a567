#pragma once

// Plans that between them take every branch of explainMemory: the sharding stages, TP with and
// without SP, the three pipeline schedules, CP, each offload, MoE, eager attention, autocast
// (fp32 parameters, bf16 compute), grad accumulation, the optimizers and their implementations,
// the three framework profiles, the training methods (LoRA, DoRA, QLoRA, freezing), MLA, MTP,
// modern MoE and GPT-style models; and every collective of the communication engine (FSDP
// with and without resharding, TP with and without SP under full recompute, CP, PP, EP, ETP). Each
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

/// The "parallel" block of MindSpeed-LLM's llama2_tp2_pp4_vpp2 CI runs on 8 NPUs: tp 2 with SP
/// over pp 4 stages of 4 model chunks each, dp 1.
inline nlohmann::json tp2Pp4Interleaved4(const char *sharding)
{
    return {{"dp", 1},
            {"tp", 2},
            {"sp", true},
            {"pp", 4},
            {"pp_schedule", "interleaved"},
            {"virtual_stages", 4},
            {"sharding", sharding}};
}

/// One 4096-token sequence per micro-batch, `microbatches` of them a step, no dropout (the
/// "training" block of MindSpeed-LLM's Llama-2-7B CI runs).
inline nlohmann::json ciTraining(int microbatches)
{
    return {{"seq_len", 4096},
            {"micro_batch", 1},
            {"grad_accum", microbatches},
            {"dropout", {{"hidden", 0}, {"attention", 0}}}};
}

inline const std::vector<PlanVariant> &planVariants()
{
    static const std::vector<PlanVariant> v{
        {"ddp", "{}"},
        {"ddp-accum", R"({"training": {"grad_accum": 4}})"},
        {"zero1", R"({"parallel": {"sharding": "optimizer"}})"},
        {"zero2", R"({"parallel": {"sharding": "grads"}})"},
        {"fsdp", R"({"parallel": {"sharding": "full"}, "training": {"seq_len": 32768}})"},
        {"hsdp", R"({"parallel": {"sharding": "full", "dp_shard": 4}})"},
        {"recompute-block", R"({"framework": "megatron", "parallel": {"sharding": "optimizer"},
             "memory": {"recompute": "full", "recompute_method": "block", "recompute_num_layers": 8}})"},
        {"recompute-uniform", R"({"memory": {"recompute": "full", "recompute_num_layers": 4}})"},
        {"recompute-per-pp-rank",
         R"({"framework": "megatron", "training": {"grad_accum": 8},
             "parallel": {"dp": 1, "tp": 2, "sp": true, "pp": 4, "pp_schedule": "interleaved",
                          "virtual_stages": 4, "sharding": "optimizer"},
             "memory": {"recompute": "full", "recompute_method": "block", "recompute_num_layers": 3,
                        "recompute_layers_per_pp_rank": true}})"},
        {"mindspeed-recompute",
         R"({"framework": "megatron", "parallel": {"dp": 2, "tp": 4, "sp": true},
             "memory": {"recompute": "selective", "recompute_activation_function": true, "recompute_norm": true}})"},
        {"hierarchical-zero2", R"({"parallel": {"sharding": "grads", "dp_shard": 2}})"},
        {"fsdp-no-reshard",
         R"({"parallel": {"sharding": "full", "reshard_after_forward": false}})"},
        {"tp-sp", R"({"parallel": {"dp": 2, "tp": 4, "sp": true}})"},
        {"tp-recompute", R"({"parallel": {"dp": 2, "tp": 4}})"},
        {"tp-selective",
         R"({"parallel": {"dp": 2, "tp": 4}, "memory": {"recompute": "selective"}})"},
        {"pp-1f1b", R"({"parallel": {"dp": 2, "pp": 4}, "training": {"grad_accum": 4}})"},
        {"pp-gpipe",
         R"({"parallel": {"dp": 2, "pp": 4, "pp_schedule": "gpipe"}, "training": {"grad_accum": 8}})"},
        {"pp-uneven",
         R"({"parallel": {"dp": 2, "pp": 4, "first_stage_layers": 5}, "training": {"grad_accum": 4}})"},
        {"pp-interleaved-megatron",
         R"({"parallel": {"dp": 1, "tp": 2, "pp": 4, "pp_schedule": "interleaved", "virtual_stages": 2,
                          "sharding": "optimizer", "sp": true},
             "training": {"grad_accum": 8}, "framework": "megatron"})"},
        {"cp", R"({"parallel": {"dp": 2, "cp": 4, "sharding": "full"}})"},
        {"cp-ulysses", R"({"parallel": {"dp": 2, "cp": 4, "cp_algo": "ulysses", "sharding": "full"},
             "memory": {"recompute": "full"}})"},
        {"cp-hybrid", R"({"parallel": {"dp": 1, "cp": 8, "cp_algo": "hybrid", "ulysses_degree": 2,
             "sharding": "optimizer"}, "training": {"seq_len": 32768}, "memory": {"recompute": "none"}})"},
        {"cp-ulysses-kv-repeat", R"({"model": {"preset": "llama3-8b"}, "framework": "megatron",
             "parallel": {"dp": 1, "cp": 8, "cp_algo": "ulysses", "sharding": "optimizer",
                          "ulysses_kv_repeat": true},
             "training": {"seq_len": 32768}, "memory": {"recompute": "none"}})"},
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
        {"megatron-buffers-overlap",
         R"({"framework": "megatron", "parallel": {"dp": 4, "tp": 2, "sharding": "optimizer"},
             "model": {"vocab": 32001, "vocab_divisible_by": 64},
             "memory": {"overlap_grad_reduce": true, "overlap_param_gather": true, "param_and_grad_buffer_pad": 512}})"},
        {"megatron-hccl-group-buffer",
         R"({"framework": "megatron", "parallel": {"dp": 2, "tp": 2, "pp": 2, "sp": true,
             "sharding": "optimizer"}, "model": {"tied_embeddings": true}, "training": {"grad_accum": 4},
             "memory": {"hccl_buffer_mb": 150, "hccl_group_buffer": {"dp": 300, "embd": 20}, "hccl_buffer_adaptive": true}})"},
        {"megatron-swap-attention", R"({"framework": "megatron", "parallel": {"dp": 4, "pp": 2},
             "training": {"grad_accum": 4}, "memory": {"recompute": "selective", "swap_attention": true}})"},
        // Legacy Megatron-LM (2023): unfused SwiGLU, the flash output copied between layouts,
        // the cross entropy's fp32 copy; and the same kernel choices as overrides of pytorch's.
        {"megatron-legacy",
         R"({"framework": "megatron-legacy", "parallel": {"dp": 4, "tp": 2, "sharding": "optimizer"},
             "memory": {"recompute": "none"}})"},
        {"kernel-overrides", R"({"memory": {"fused_swiglu": true, "flash_output_copy": true,
             "loss": "fused_fp32_copy", "recompute": "selective"}})"},
        // MindSpeed-LLM before 2024-12-21: torch_npu.npu_rotary_mul keeps the q and k it rotates.
        {"rope-keeps-input", R"({"framework": "megatron", "parallel": {"dp": 4, "tp": 2, "sp": true,
             "sharding": "optimizer"}, "memory": {"rope": "keeps_input", "recompute": "none"}})"},
        {"deepspeed-zero3", R"({"framework": "deepspeed", "parallel": {"sharding": "full"}})"},
        {"deepspeed-zero3-hpz",
         R"({"framework": "deepspeed", "parallel": {"dp": 8, "sharding": "full",
             "zero_hpz_partition_size": 4}, "training": {"grad_accum": 2}})"},
        {"lora",
         R"({"training": {"method": "lora", "lora": {"rank": 16, "targets": "all_linear"}}})"},
        {"lora-megatron",
         R"({"framework": "megatron", "parallel": {"dp": 2, "tp": 4, "sp": true, "sharding": "optimizer"},
             "training": {"method": "lora", "lora": {"rank": 16, "targets": ["q", "down"]}}})"},
        {"lora-fsdp-save-head", R"({"parallel": {"sharding": "full"}, "training": {"method": "lora",
             "lora": {"modules_to_save": ["head"], "dropout": 0.05}}})"},
        {"dora", R"({"training": {"method": "dora"}, "memory": {"recompute": "none"}})"},
        {"qlora", R"({"training": {"method": "qlora", "lora": {"targets": "all_linear"}}})"},
        {"freeze", R"({"training": {"method": "freeze", "freeze": {"last_layers": 4}}})"},
        {"sgd-no-momentum", R"({"precision": {"optimizer": "sgd", "momentum": false}})"},
        {"adafactor",
         R"({"precision": {"optimizer": "adafactor"}, "parallel": {"sharding": "optimizer"}})"},
        {"adamw8bit", R"({"precision": {"optimizer": "adamw8bit"}})"},
        {"paged-adamw", R"({"precision": {"optimizer": "paged_adamw"}})"},
        {"muon", R"({"precision": {"optimizer": "muon"}})"},
        {"megatron-o2-reuse", R"({"framework": "megatron", "parallel": {"sharding": "optimizer"},
             "precision": {"main_grads": "bf16", "optimizer_state": "bf16", "reuse_fp32_param": true}})"},
        {"loss-chunked", R"({"memory": {"loss": "chunked", "loss_chunks": 16}})"},
        {"loss-fused-linear",
         R"({"memory": {"loss": "fused_linear"}, "training": {"seq_len": 32768}})"},
        // The 2025-26 shapes: MLA without query compression, shared experts and a dense first
        // layer; DeepSeek-V3's MLA, MTP and fp32 router with expert tensor parallelism 2 under
        // TP 4 + SP; Qwen3-MoE through the all-gather dispatcher with an imbalance margin; a
        // capacity factor; Megatron's GPT with its dropout, eager and flash.
        {"mla-moe",
         R"({"model": {"preset": "deepseek-v2-lite"}, "parallel": {"ep": 8, "sharding": "optimizer"},
             "framework": "megatron"})"},
        {"mla-mtp-etp", R"({"model": {"preset": "deepseek-v3", "layers": 8},
             "parallel": {"dp": 2, "tp": 4, "sp": true, "ep": 4, "etp": 2, "sharding": "optimizer"},
             "framework": "megatron", "memory": {"recompute": "selective"}})"},
        {"moe-allgather",
         R"({"model": {"preset": "qwen3-30b-a3b", "moe": {"dispatcher": "allgather", "imbalance": 1.3}},
             "parallel": {"ep": 4, "sharding": "full"}})"},
        {"moe-capacity", R"({"model": {"preset": "mixtral-8x7b", "moe": {"capacity_factor": 1.25}},
             "parallel": {"ep": 2, "sharding": "optimizer"}, "memory": {"recompute": "none"}})"},
        {"gpt-dropout", R"({"model": {"preset": "megatron-gpt-7b"}, "parallel": {"dp": 2, "tp": 4},
             "framework": "megatron", "memory": {"recompute": "none"}})"},
        {"gpt-dropout-eager", R"({"model": {"preset": "megatron-gpt-7b"},
             "training": {"dropout": {"hidden": 0.1, "attention": 0.1}},
             "memory": {"attention": "eager", "recompute": "selective"}})"},
        // NVIDIA devices: PyTorch's cuBLAS workspaces, Transformer Engine's (core/workspace.h) and
        // its sequence-parallel all-gathers per GEMM.
        {"h100-pytorch", R"({"cluster": {"device": "h100-80g"}})"},
        {"h100-megatron",
         R"({"framework": "megatron", "parallel": {"dp": 4, "tp": 2, "sp": true, "sharding": "optimizer"},
             "cluster": {"device": "h100-80g"}})"},
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
