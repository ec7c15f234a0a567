#pragma once

// The H200 measurements of shared/calibration, read the same way by every test that checks the
// engine against them.
#include "testdata.h"

#include <QFile>
#include <nlohmann/json.hpp>
#include <vector>

namespace shardscope::testing {

/// The TinyLlama training-step rows (`group: small`) that completed.
inline std::vector<nlohmann::json> calibrationStepRows()
{
    QFile f(sharedDir() + QStringLiteral("/calibration/h200_tinyllama_and_kernels.jsonl"));
    if (!f.open(QIODevice::ReadOnly))
        return {};
    std::vector<nlohmann::json> rows;
    while (!f.atEnd()) {
        const QByteArray line = f.readLine().trimmed();
        if (line.isEmpty())
            continue;
        nlohmann::json j = nlohmann::json::parse(line.toStdString());
        if (j.value("group", "") == "small" && j.value("ok", false))
            rows.push_back(j);
    }
    return rows;
}

/// The plan of a calibration row: its shape, sequence and micro-batch; `amp` is fp32
/// parameters under autocast with fp32 AdamW states, `bf16` is bf16 parameters and states;
/// `ckpt` one checkpoint per layer; `eager` or flash (sdpa) attention; one H200.
inline nlohmann::json calibrationPlanJson(const nlohmann::json &row)
{
    const bool amp = row.at("mode") == "amp";
    const nlohmann::json &shape = row.at("shape");
    return {{"format", "shardscope-plan"},
            {"version", 1},
            {"name", "calibration row"},
            {"model",
             {{"preset", "tinyllama-1.1b"},
              {"hidden", shape["hidden_size"]},
              {"ffn_hidden", shape["intermediate_size"]},
              {"layers", shape["num_hidden_layers"]},
              {"heads", shape["num_attention_heads"]},
              {"kv_heads", shape["num_key_value_heads"]},
              {"vocab", shape["vocab_size"]},
              {"tied_embeddings", shape["tie_word_embeddings"]}}},
            {"training", {{"seq_len", row["seq"]}, {"micro_batch", row["mbs"]}, {"grad_accum", 1}}},
            {"precision",
             {{"params", amp ? "fp32" : "bf16"},
              {"grads", amp ? "fp32" : "bf16"},
              {"master_weights", "none"},
              {"optimizer", "adamw"},
              {"optimizer_state", amp ? "fp32" : "bf16"},
              {"compute", "bf16"}}},
            {"parallel", {{"dp", 1}, {"tp", 1}, {"pp", 1}, {"cp", 1}}},
            {"memory",
             {{"recompute", row["ckpt"].get<bool>() ? "full" : "none"},
              {"attention", row["attn"] == "eager" ? "eager" : "flash"}}},
            {"framework", "pytorch"},
            {"cluster", {{"device", "h200"}, {"devices_per_node", 1}, {"nodes", 1}}}};
}

/// A TinyLlama-1.1B plan shaped like the calibration rows.
inline nlohmann::json tinyLlamaPlanJson(int64_t seq, int mbs, bool amp, bool ckpt, bool eager)
{
    const nlohmann::json row = {
        {"mode", amp ? "amp" : "bf16"}, {"seq", seq}, {"mbs", mbs}, {"ckpt", ckpt},
        {"attn", eager ? "eager" : "sdpa"},
        {"shape",
         {{"hidden_size", 2048}, {"intermediate_size", 5632}, {"num_hidden_layers", 22},
          {"num_attention_heads", 32}, {"num_key_value_heads", 4}, {"vocab_size", 32000},
          {"tie_word_embeddings", false}}}};
    return calibrationPlanJson(row);
}

} // namespace shardscope::testing
