// Plan files: reading, writing, and the errors a bad plan gets (field and rule).
#include "core/catalog.h"
#include "core/errors.h"
#include "core/plan.h"
#include "testdata.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include "planvariants.h"
#include "core/memory.h"
#include <QTest>
#include <nlohmann/json.hpp>

using namespace shardscope;
using nlohmann::json;

namespace {

json casePlan(const char *file = "hcie-ai-ddp.plan.json")
{
    QFile f(QString::fromStdString(Catalog::builtin().dataDir()) + QStringLiteral("/cases/") +
            QString::fromUtf8(file));
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return json::parse(f.readAll().toStdString());
}

} // namespace

class TestPlan : public QObject
{
    Q_OBJECT

private slots:
    void casesParse_data()
    {
        QTest::addColumn<QString>("file");
        for (const char *f : {"hcie-ai-ddp.plan.json", "hcie-ai-fsdp.plan.json",
                              "hcie-ai-tp8.plan.json", "hcie-ai-tp4-fsdp2.plan.json"})
            QTest::newRow(f) << QString::fromUtf8(f);
    }

    void casesParse()
    {
        QFETCH(QString, file);
        const json j = casePlan(file.toUtf8().constData());
        QVERIFY(!j.is_null());
        const Plan p = parsePlan(j, Catalog::builtin());
        QCOMPARE(p.model.layers, 32);
        QCOMPARE(p.training.seq_len, int64_t(32768));
        QCOMPARE(p.parallel.world(), 8);
    }

    void roundTrip()
    {
        const Plan p = parsePlan(casePlan("hcie-ai-tp4-fsdp2.plan.json"), Catalog::builtin());
        const json out = planToJson(p);
        const Plan q = parsePlan(out, Catalog::builtin());
        QVERIFY(planToJson(q) == out);
        QCOMPARE(q.parallel.tp, 4);
        QVERIFY(q.parallel.sharding == Sharding::Full);
        QVERIFY(out["format"] == json("shardscope-plan"));
        QVERIFY(out["version"] == json(1));
    }

    // Every variant (MLA, MTP, MoE extras, etp, GPT-style fields, dropout among them) saves and
    // loads to the same plan and the same numbers; an explicit shape without its preset too.
    void variantsRoundTrip()
    {
        for (const testing::PlanVariant &v : testing::planVariants()) {
            const Plan p = testing::variantPlan(v);
            const json out = planToJson(p);
            const Plan q = parsePlan(out, Catalog::builtin());
            QVERIFY2(planToJson(q) == out, v.name);
            json bare = out;
            bare["model"].erase("preset");
            if (bare["model"].contains("moe") && bare["model"]["moe"].is_null())
                bare["model"].erase("moe");
            const Plan r = parsePlan(bare, Catalog::builtin());
            QVERIFY2(countParameters(r.model).total == countParameters(p.model).total, v.name);
            QVERIFY2(estimateMemory(r, Catalog::builtin()).peak_bytes ==
                         estimateMemory(p, Catalog::builtin()).peak_bytes,
                     v.name);
        }
    }

    void presetFieldsCanBeOverridden()
    {
        json j = casePlan();
        j["model"]["vocab"] = 152064;
        j["model"]["kv_heads"] = 8;
        const Plan p = parsePlan(j, Catalog::builtin());
        QCOMPARE(p.model.vocab, int64_t(152064));
        QCOMPARE(p.model.kv_heads, 8);
        QCOMPARE(p.model.hidden, int64_t(4096)); // still from the preset
    }

    void modelSizeMode()
    {
        json j = casePlan();
        j["model"] = {{"parameters", 13e9}};
        const Plan p = parsePlan(j, Catalog::builtin());
        QCOMPARE(p.model.hidden, int64_t(5120));
    }

    void unknownFieldsKept()
    {
        json j = casePlan();
        j["notes"] = "kept";
        j["parallel"]["future_knob"] = 3;
        j["memory"]["offload"]["nvme"] = true;
        const json out = planToJson(parsePlan(j, Catalog::builtin()));
        QVERIFY(out["notes"] == json("kept"));
        QVERIFY(out["parallel"]["future_knob"] == json(3));
        QVERIFY(out["memory"]["offload"]["nvme"] == json(true));
    }

    void errors_data()
    {
        QTest::addColumn<QString>("patch");    // JSON merge patch applied to the DDP case
        QTest::addColumn<QString>("field");    // expected PlanError::field()
        QTest::addColumn<QString>("ruleHint"); // a word the rule must contain
        auto row = [](const char *name, const char *patch, const char *field, const char *hint) {
            QTest::newRow(name) << QString::fromUtf8(patch) << QString::fromUtf8(field)
                                << QString::fromUtf8(hint);
        };
        row("wrong format", R"({"format": "other"})", "format", "shardscope-plan");
        row("newer version", R"({"version": 2})", "version", "newer");
        row("model not object", R"({"model": 7})", "model", "object");
        row("unknown preset", R"({"model": {"preset": "gpt5"}})", "model.preset", "unknown");
        row("heads string", R"({"model": {"heads": "32"}})", "model.heads", "integer");
        row("zero layers", R"({"model": {"layers": 0}})", "model.layers", "between");
        row("negative hidden", R"({"model": {"hidden": -4096}})", "model.hidden", "between");
        row("absurd vocab", R"({"model": {"vocab": 1e12}})", "model.vocab", "between");
        row("fractional seq", R"({"training": {"seq_len": 1000.5}})", "training.seq_len", "whole");
        row("zero seq", R"({"training": {"seq_len": 0}})", "training.seq_len", "between");
        row("absurd micro-batch", R"({"training": {"micro_batch": 1000000}})", "training.micro_batch", "between");
        row("kv not dividing", R"({"model": {"kv_heads": 5}})", "model.kv_heads", "divide");
        row("unknown dtype", R"({"precision": {"params": "fp64"}})", "precision.params", "unknown dtype");
        row("int8 params", R"({"precision": {"params": "int8"}})", "precision.params", "cannot be");
        row("master none allowed only there", R"({"precision": {"grads": "none"}})", "precision.grads", "cannot be");
        row("unknown optimizer", R"({"precision": {"optimizer": "adagrad"}})", "precision.optimizer", "one of");
        row("sharding typo", R"({"parallel": {"sharding": "zero3"}})", "parallel.sharding", "one of");
        row("sp not bool", R"({"parallel": {"sp": "yes"}})", "parallel.sp", "true or false");
        row("world mismatch", R"({"parallel": {"dp": 4}})", "parallel", "must equal");
        row("tp not dividing heads", R"({"parallel": {"dp": 1, "tp": 8}, "model": {"heads": 36, "kv_heads": 36, "hidden": 4608}})", "parallel.tp", "model.heads");
        row("tp not dividing kv heads", R"({"parallel": {"dp": 1, "tp": 8}, "model": {"kv_heads": 4}})", "parallel.tp", "kv_heads");
        row("pp not dividing layers", R"({"parallel": {"dp": 1, "pp": 8}, "model": {"layers": 30}})", "parallel.pp", "divide model.layers");
        row("cp not dividing seq", R"({"parallel": {"dp": 1, "cp": 8}, "training": {"seq_len": 32764}})", "parallel.cp", "seq_len");
        row("sp without tp", R"({"parallel": {"sp": true}})", "parallel.sp", "tp >= 2");
        row("sp seq not dividing", R"({"parallel": {"dp": 1, "tp": 8, "sp": true}, "training": {"seq_len": 32764}})", "parallel.sp", "divisible");
        row("ep on dense", R"({"parallel": {"ep": 2}})", "parallel.ep", "MoE");
        row("virtual stages without interleave", R"({"parallel": {"virtual_stages": 2}})", "parallel.virtual_stages", "interleaved");
        // The layer layout over the stages (core/layers.h; Llama-2-7B's 32 layers).
        row("first stage layers without pp", R"({"parallel": {"first_stage_layers": 4}})", "parallel.first_stage_layers", "pp >= 2");
        row("first stage layers zero", R"({"parallel": {"dp": 1, "pp": 8, "first_stage_layers": 0}})", "parallel.first_stage_layers", "between");
        row("last stage layers not a number", R"({"parallel": {"dp": 1, "pp": 8, "last_stage_layers": "4"}})", "parallel.last_stage_layers", "integer");
        row("uneven rest", R"({"parallel": {"dp": 1, "pp": 8, "first_stage_layers": 3}})", "parallel.first_stage_layers", "evenly");
        row("uneven nothing for the middle", R"({"parallel": {"dp": 2, "pp": 4, "first_stage_layers": 16, "last_stage_layers": 16}})", "parallel.first_stage_layers", "middle stage");
        row("uneven last by virtual stages", R"({"parallel": {"dp": 2, "pp": 4, "pp_schedule": "interleaved", "virtual_stages": 2, "last_stage_layers": 3}, "training": {"grad_accum": 4}})", "parallel.last_stage_layers", "virtual_stages");
        row("uneven middle by virtual stages", R"({"parallel": {"dp": 2, "pp": 4, "pp_schedule": "interleaved", "virtual_stages": 2, "first_stage_layers": 2, "last_stage_layers": 4}, "training": {"grad_accum": 4}})", "parallel.first_stage_layers", "virtual_stages");
        row("account with uneven", R"({"parallel": {"dp": 1, "pp": 8, "first_stage_layers": 4, "account_for_loss": true}})", "parallel.account_for_loss", "first_stage_layers");
        row("account not dividing", R"({"parallel": {"dp": 1, "pp": 8, "account_for_embedding": true}})", "parallel.account_for_embedding", "divisible by parallel.pp");
        row("account not bool", R"({"parallel": {"dp": 1, "pp": 8, "account_for_embedding": 1}})", "parallel.account_for_embedding", "true or false");
        row("account without pp", R"({"parallel": {"account_for_loss": true}})", "parallel.account_for_loss", "pp >= 2");
        row("stage layers not a list", R"({"parallel": {"dp": 2, "pp": 4, "stage_layers": 8}})", "parallel.stage_layers", "list");
        row("stage layers entry", R"({"parallel": {"dp": 2, "pp": 4, "stage_layers": [8, 8, "8", 8]}})", "parallel.stage_layers[2]", "whole number");
        row("stage layers zero", R"({"parallel": {"dp": 2, "pp": 4, "stage_layers": [0, 16, 8, 8]}})", "parallel.stage_layers[0]", "at least one");
        row("stage layers count", R"({"parallel": {"dp": 2, "pp": 4, "stage_layers": [16, 16]}})", "parallel.stage_layers", "one entry per stage");
        row("stage layers sum", R"({"parallel": {"dp": 2, "pp": 4, "stage_layers": [8, 8, 8, 7]}})", "parallel.stage_layers", "add up");
        row("stage layers with virtual stages", R"({"parallel": {"dp": 2, "pp": 4, "pp_schedule": "interleaved", "virtual_stages": 2, "stage_layers": [8, 8, 8, 8]}, "training": {"grad_accum": 4}})", "parallel.stage_layers", "virtual");
        row("stage layers with uneven", R"({"parallel": {"dp": 2, "pp": 4, "stage_layers": [8, 8, 8, 8], "last_stage_layers": 8}})", "parallel.stage_layers", "not with");
        row("layout string symbol", R"({"parallel": {"dp": 2, "pp": 4, "pipeline_layout": "Et*8|t*8|t*8|t*8x"}})", "parallel.pipeline_layout", "unknown symbol");
        row("layout string not text", R"({"parallel": {"dp": 2, "pp": 4, "pipeline_layout": 8}})", "parallel.pipeline_layout", "string");
        row("layout string chunks", R"({"parallel": {"dp": 2, "pp": 4, "pipeline_layout": "Et*16|t*16L"}})", "parallel.pipeline_layout", "parallel.pp x virtual_stages");
        row("layout string layers", R"({"parallel": {"dp": 2, "pp": 4, "pipeline_layout": "Et*8|t*8|t*8|t*7L"}})", "parallel.pipeline_layout", "model.layers");
        row("layout string with uneven", R"({"parallel": {"dp": 2, "pp": 4, "pipeline_layout": "Et*8|t*8|t*8|t*8L", "first_stage_layers": 8}})", "parallel.pipeline_layout", "cannot be set");
        row("layout string without pp", R"({"parallel": {"pipeline_layout": "Et*32L"}})", "parallel.pipeline_layout", "pp >= 2");
        row("recompute beyond the largest chunk", R"({"parallel": {"dp": 2, "pp": 4, "stage_layers": [5, 9, 9, 9]}, "memory": {"recompute": "full", "recompute_num_layers": 10}})", "memory.recompute_num_layers", "model chunk (9)");
        row("interleaved micro-batches", R"({"parallel": {"dp": 2, "pp": 4, "pp_schedule": "interleaved", "virtual_stages": 2}, "training": {"grad_accum": 3}})", "training.grad_accum", "divisible");
        row("offload params needs full", R"({"memory": {"offload": {"params": true}}})", "memory.offload.params", "full");
        row("unknown device", R"({"cluster": {"device": "tpu-v5"}})", "cluster.device", "unknown");
        row("zero nodes", R"({"cluster": {"nodes": 0}})", "cluster.nodes", "between");
        row("unknown framework", R"({"framework": "jax"})", "framework", "unknown");
        row("recompute typo", R"({"memory": {"recompute": "all"}})", "memory.recompute", "one of");
        row("training missing", R"({"training": null})", "training", "object");
        // The 2025-26 shape fields (the DDP case is Llama-2-7B at 32K on 8 x 910B).
        row("attention kind typo", R"({"model": {"attention": "mqa"}})", "model.attention", "one of");
        row("mla without ranks", R"({"model": {"attention": "mla"}})", "model.mla", "required");
        row("mla on gqa", R"({"model": {"mla": {"kv_lora_rank": 512}}})", "model.mla", "applies to attention");
        row("mla kv heads", R"({"model": {"attention": "mla", "kv_heads": 8, "mla": {"q_lora_rank": 0, "kv_lora_rank": 512,
             "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128}}})", "model.kv_heads", "kv_heads == heads");
        row("mla head dim", R"({"model": {"attention": "mla", "head_dim": 128, "mla": {"q_lora_rank": 0, "kv_lora_rank": 512,
             "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128}}})", "model.head_dim", "qk_nope_head_dim + qk_rope_head_dim");
        row("mla qk norm", R"({"model": {"attention": "mla", "qk_norm": true, "mla": {"q_lora_rank": 0, "kv_lora_rank": 512,
             "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128}}})", "model.qk_norm", "mla");
        row("mha with fewer kv heads", R"({"model": {"attention": "mha", "kv_heads": 8}})", "model.attention", "gqa");
        row("norm typo", R"({"model": {"norm": "batchnorm"}})", "model.norm", "one of");
        row("ffn typo", R"({"model": {"ffn": "relu"}})", "model.ffn", "squared_relu");
        row("learned without rows", R"({"model": {"position_embedding": "learned"}})", "model.max_positions", "required");
        row("rows without learned", R"({"model": {"max_positions": 4096}})", "model.max_positions", "learned");
        row("sequence beyond the table", R"({"model": {"position_embedding": "learned", "max_positions": 4096}})",
            "training.seq_len", "max_positions");
        row("too many mtp", R"({"model": {"mtp_layers": 17}})", "model.mtp_layers", "between");
        row("capacity below 1/top_k", R"({"model": {"preset": "mixtral-8x7b", "moe": {"capacity_factor": 0.25}}})",
            "model.moe.capacity_factor", "1 / top_k");
        row("imbalance with capacity", R"({"model": {"preset": "mixtral-8x7b", "moe": {"capacity_factor": 1.5, "imbalance": 1.2}}})",
            "model.moe.imbalance", "dropless");
        row("imbalance below 1", R"({"model": {"preset": "mixtral-8x7b", "moe": {"imbalance": 0.8}}})",
            "model.moe.imbalance", "between");
        row("shared width without shared", R"({"model": {"preset": "mixtral-8x7b", "moe": {"shared_expert_ffn_hidden": 4096}}})",
            "model.moe.shared_experts", "at least 1");
        row("no moe layer left", R"({"model": {"preset": "mixtral-8x7b", "moe": {"first_dense_layers": 32}}})",
            "model.moe.first_dense_layers", "between");
        row("dispatcher typo", R"({"model": {"preset": "mixtral-8x7b", "moe": {"dispatcher": "p2p"}}})",
            "model.moe.dispatcher", "one of");
        row("etp on dense", R"({"parallel": {"etp": 2}})", "parallel.etp", "MoE");
        row("etp not dividing the expert", R"({"model": {"preset": "mixtral-8x7b", "moe": {"expert_ffn_hidden": 1004}}, "parallel": {"etp": 8}})",
            "parallel.etp", "expert_ffn_hidden");
        row("ep x etp not tiling", R"({"model": {"preset": "mixtral-8x7b"}, "parallel": {"ep": 8, "etp": 2}})",
            "parallel.etp", "must divide dp * cp * tp");
        row("etp without sp", R"({"model": {"preset": "mixtral-8x7b"}, "parallel": {"dp": 2, "tp": 4, "etp": 1}})",
            "parallel.etp", "parallel.sp");
        row("dp_shard without sharding", R"({"parallel": {"dp_shard": 4}})", "parallel.dp_shard", "sharding");
        row("dp_shard not dividing", R"({"parallel": {"dp_shard": 3, "sharding": "full"}})", "parallel.dp_shard", "divide");
        row("recompute method without full", R"({"memory": {"recompute": "selective", "recompute_method": "block"}})",
            "memory.recompute_method", "full");
        row("recompute layers beyond the chunk", R"({"memory": {"recompute_num_layers": 33}})",
            "memory.recompute_num_layers", "chunk");
        row("norm recompute under full", R"({"memory": {"recompute_norm": true}})", "memory.recompute_norm", "nothing to add");
        row("cp algo typo", R"({"parallel": {"cp_algo": "star"}})", "parallel.cp_algo", "one of");
        row("ulysses heads", R"({"parallel": {"dp": 1, "cp": 8, "cp_algo": "ulysses"}, "model": {"kv_heads": 4},
             "training": {"seq_len": 32768}})", "parallel.cp_algo", "kv_heads / tp");
        row("ulysses kv repeat needs megatron",
            R"({"parallel": {"dp": 1, "cp": 8, "cp_algo": "ulysses",
             "ulysses_kv_repeat": true}})",
            "parallel.ulysses_kv_repeat", "framework \"megatron\"");
        row("ulysses kv heads without the repeat",
            R"({"framework": "megatron", "parallel": {"dp": 1, "cp": 8,
             "cp_algo": "ulysses", "ulysses_kv_repeat": false}, "model": {"kv_heads": 4},
             "training": {"seq_len": 32768}})",
            "parallel.cp_algo", "kv_heads / tp");
        row("ulysses kv repeat not a boolean",
            R"({"framework": "megatron", "parallel": {"ulysses_kv_repeat": 1}})",
            "parallel.ulysses_kv_repeat", "true or false");
        row("hybrid without degree", R"({"parallel": {"dp": 1, "cp": 8, "cp_algo": "hybrid"}})", "parallel.ulysses_degree", "required");
        row("hybrid degree is cp", R"({"parallel": {"dp": 1, "cp": 8, "cp_algo": "hybrid", "ulysses_degree": 8}})",
            "parallel.ulysses_degree", "below it");
        row("degree without hybrid", R"({"parallel": {"dp": 1, "cp": 8, "ulysses_degree": 2}})", "parallel.ulysses_degree", "hybrid");
        row("dropout out of range", R"({"training": {"dropout": {"hidden": 1.5}}})", "training.dropout.hidden", "between");
        row("dropout not object", R"({"training": {"dropout": 0.1}})", "training.dropout", "object");
        row("buffer pad without megatron", R"({"memory": {"param_and_grad_buffer_pad": 512}})",
            "memory.param_and_grad_buffer_pad", "megatron");
        row("buffer pad without distributed optimizer",
            R"({"framework": "megatron", "memory": {"param_and_grad_buffer_pad": 512}})",
            "memory.param_and_grad_buffer_pad", "sharding");
        row("buffer pad negative", R"({"memory": {"param_and_grad_buffer_pad": -1}})",
            "memory.param_and_grad_buffer_pad", "between");
        row("swap attention without megatron", R"({"memory": {"swap_attention": true, "recompute": "selective"}})",
            "memory.swap_attention", "megatron");
        row("swap attention not bool", R"({"memory": {"swap_attention": "on"}})", "memory.swap_attention", "true or false");
        row("swap attention under full recompute", R"({"framework": "megatron", "memory": {"swap_attention": true}})",
            "memory.swap_attention", "full");
        // HCCL buffers per group (core/hcclbuffers.h; the base plan is on 910B, pytorch).
        row("hccl group buffer without megatron", R"({"memory": {"hccl_group_buffer": {"tp": 300}}})",
            "memory.hccl_group_buffer", "megatron");
        row("hccl adaptive without megatron", R"({"memory": {"hccl_buffer_adaptive": true}})",
            "memory.hccl_buffer_adaptive", "megatron");
        row("hccl group unknown", R"({"framework": "megatron", "memory": {"hccl_group_buffer": {"tensor": 300}}})",
            "memory.hccl_group_buffer.tensor", "accepts");
        row("hccl group zero", R"({"framework": "megatron", "memory": {"hccl_group_buffer": {"tp": 0}}})",
            "memory.hccl_group_buffer.tp", "between");
        row("hccl group not object", R"({"framework": "megatron", "memory": {"hccl_group_buffer": "tp:300"}})",
            "memory.hccl_group_buffer", "object");
        row("hccl buffer negative", R"({"memory": {"hccl_buffer_mb": -1}})", "memory.hccl_buffer_mb", "between");
        row("hccl buffer on nvidia", R"({"memory": {"hccl_buffer_mb": 100}, "cluster": {"device": "h100-80g"}})",
            "memory.hccl_buffer_mb", "huawei");
        row("hccl adaptive not bool", R"({"framework": "megatron", "memory": {"hccl_buffer_adaptive": 1}})",
            "memory.hccl_buffer_adaptive", "true or false");
        row("hccl ep factor without adaptive", R"({"framework": "megatron", "memory": {"hccl_ep_group_buffer_adaptive_factor": 1.5}})",
            "memory.hccl_ep_group_buffer_adaptive_factor", "hccl_buffer_adaptive");
        row("vocab divisor negative", R"({"model": {"vocab_divisible_by": -128}})", "model.vocab_divisible_by", "between");
        row("vocab divisor string", R"({"model": {"vocab_divisible_by": "128"}})", "model.vocab_divisible_by", "integer");
        row("overlap grad reduce string", R"({"memory": {"overlap_grad_reduce": "yes"}})", "memory.overlap_grad_reduce", "true or false");
        row("param gather without distributed optimizer", R"({"memory": {"overlap_param_gather": true}})",
            "memory.overlap_param_gather", "sharding");
        row("param gather without grad reduce",
            R"({"framework": "megatron", "parallel": {"sharding": "optimizer"}, "memory": {"overlap_param_gather": true}})",
            "memory.overlap_param_gather", "overlap_grad_reduce");
        row("fused swiglu on a gelu model", R"({"model": {"ffn": "gelu"}, "memory": {"fused_swiglu": false}})",
            "memory.fused_swiglu", "model.ffn");
        row("fused swiglu string", R"({"memory": {"fused_swiglu": "yes"}})", "memory.fused_swiglu", "true or false");
        row("flash output copy with eager", R"({"memory": {"attention": "eager", "flash_output_copy": true}})",
            "memory.flash_output_copy", "memory.attention");
        row("flash output copy number", R"({"memory": {"flash_output_copy": 1}})", "memory.flash_output_copy", "true or false");
        row("loss unknown", R"({"memory": {"loss": "fused_fp32_copies"}})", "memory.loss", "fused_fp32_copy");
        row("rope unknown", R"({"memory": {"rope": "input"}})", "memory.rope", "keeps_input");
        row("rope on learned positions",
            R"({"model": {"preset": "megatron-gpt-7b"}, "memory": {"rope": "per_layer"}})",
            "memory.rope", "position_embedding");
        row("rope input under mla",
            R"({"model": {"preset": "deepseek-v2-lite"}, "memory": {"rope": "keeps_input"}})",
            "memory.rope", "multi-head latent attention");
        row("param gather with grad reduce off",
            R"({"parallel": {"sharding": "optimizer"}, "memory": {"overlap_param_gather": true, "overlap_grad_reduce": false}})",
            "memory.overlap_param_gather", "overlap_grad_reduce");
    }

    void errors()
    {
        QFETCH(QString, patch);
        QFETCH(QString, field);
        QFETCH(QString, ruleHint);
        json j = casePlan();
        j.merge_patch(json::parse(patch.toStdString()));
        if (patch.contains(QStringLiteral("\"training\": null")))
            j["training"] = nullptr; // merge_patch removes keys set to null
        try {
            parsePlan(j, Catalog::builtin());
            QFAIL("accepted a bad plan");
        } catch (const PlanError &e) {
            QCOMPARE(QString::fromStdString(e.field()), field);
            QVERIFY2(QString::fromStdString(e.rule()).contains(ruleHint),
                     qPrintable(QString::fromStdString(e.rule())));
        }
    }

    // A user-defined or calibrated device profile is found by id and used by the engine.
    void userDeviceProfiles()
    {
        QTemporaryDir dir;
        json dev = json::parse(R"({"id": "h200-mine", "name": "H200 calibrated", "vendor": "nvidia",
            "hbm_bytes": 107374182400, "context_reserve_bytes": 1073741824,
            "comm_buffer_bytes_per_group": 268435456,
            "peak_flops": {"bf16": 7.4e14, "fp32": 5.0e13}, "hbm_bandwidth": 4.18e12,
            "intra_node": {"kind": "nvlink", "bandwidth": 4.5e11, "latency": 8e-6, "efficiency": 0.8},
            "inter_node": {"kind": "infiniband", "bandwidth": 5e10, "latency": 1.5e-5, "efficiency": 0.85}})");
        QFile f(dir.filePath(QStringLiteral("h200-mine.json")));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QByteArray::fromStdString(dev.dump()));
        f.close();
        Catalog cat = Catalog::load(Catalog::builtin().dataDir());
        cat.loadUserDevices(dir.path().toStdString());
        json j = casePlan();
        j["cluster"]["device"] = "h200-mine";
        const Plan p = parsePlan(j, cat);
        QCOMPARE(cat.device("h200-mine")->hbm_bytes, 107374182400.0);
        QCOMPARE(cat.device("h200-mine")->context_reserve_bytes, 1073741824.0);
        QVERIFY(p.cluster.device == "h200-mine");

        QFile broken(dir.filePath(QStringLiteral("zz-broken.json")));
        QVERIFY(broken.open(QIODevice::WriteOnly));
        broken.write("{\"id\": \"x\"}");
        broken.close();
        // A broken user profile is skipped with a warning naming the file and the field; the
        // built-in devices and the other user profiles stay usable, and only a plan that asks
        // for the broken one fails, with the reason.
        QFile wrongType(dir.filePath(QStringLiteral("zz-wrongtype.json")));
        QVERIFY(wrongType.open(QIODevice::WriteOnly));
        json bad = dev;
        bad["id"] = "zz-wrongtype";
        bad["hbm_bytes"] = "141 GB";
        wrongType.write(QByteArray::fromStdString(bad.dump()));
        wrongType.close();
        QFile empty(dir.filePath(QStringLiteral("zz-empty.json")));
        QVERIFY(empty.open(QIODevice::WriteOnly));
        empty.close();
        Catalog again = Catalog::load(Catalog::builtin().dataDir());
        again.loadUserDevices(dir.path().toStdString());
        QCOMPARE(again.warnings().size(), size_t(3));
        const QString all = QString::fromStdString(again.warnings()[0] + "\n" + again.warnings()[1] +
                                                   "\n" + again.warnings()[2]);
        QVERIFY2(all.contains(QStringLiteral("zz-broken.json: hbm_bytes: is required")), qPrintable(all));
        QVERIFY2(all.contains(QStringLiteral("zz-wrongtype.json: hbm_bytes: must be a number, not string")),
                 qPrintable(all));
        QVERIFY2(all.contains(QStringLiteral("zz-empty.json")), qPrintable(all));
        QVERIFY(again.device("h200-mine"));
        QVERIFY(again.device("ascend-910b2"));
        QVERIFY(parsePlan(casePlan(), again).cluster.device == "ascend-910b2");
        json wants = casePlan();
        wants["cluster"]["device"] = "zz-wrongtype";
        try {
            parsePlan(wants, again);
            QFAIL("a plan on a broken profile was accepted");
        } catch (const PlanError &e) {
            QCOMPARE(QString::fromStdString(e.field()), QStringLiteral("cluster.device"));
            QVERIFY2(QString::fromStdString(e.rule()).contains(QStringLiteral("hbm_bytes")), e.what());
        }
    }

    // A user device folder that is a file, or that holds a symlink loop, is reported and does
    // not stop anything.
    void userDeviceFolderProblems()
    {
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("not-a-folder"));
        QFile f(file);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.close();
        Catalog a = Catalog::load(Catalog::builtin().dataDir());
        a.loadUserDevices(file.toStdString());
        QCOMPARE(a.warnings().size(), size_t(1));
        QVERIFY(QString::fromStdString(a.warnings()[0]).contains(QStringLiteral("not a folder")));

        const QString loops = dir.filePath(QStringLiteral("devices"));
        QVERIFY(QDir().mkpath(loops));
        QVERIFY(QFile::link(loops + QStringLiteral("/loop.json"), loops + QStringLiteral("/loop.json")));
        Catalog b = Catalog::load(Catalog::builtin().dataDir());
        b.loadUserDevices(loops.toStdString());
        QCOMPARE(b.warnings().size(), size_t(1));
        QVERIFY2(QString::fromStdString(b.warnings()[0]).contains(QStringLiteral("loop.json")),
                 b.warnings()[0].c_str());
        QVERIFY(b.device("ascend-910b2"));
    }

    void malformedJsonNamesPosition()
    {
        try {
            parsePlanText("{\n  \"format\": \"shardscope-plan\",\n  \"model\": {,\n}", Catalog::builtin());
            QFAIL("accepted malformed JSON");
        } catch (const PlanError &e) {
            const QString what = QString::fromStdString(e.what());
            QVERIFY2(what.contains(QStringLiteral("malformed JSON")), qPrintable(what));
            QVERIFY2(what.contains(QStringLiteral("line 3")), qPrintable(what));
        }
    }
};

QTEST_APPLESS_MAIN(TestPlan)
#include "tst_plan.moc"
