// The prose of the lessons. Numbers are never written here: every {key} is a citation the
// engine computes for the step's plan (resources/teaching/*.lesson.json).
#include "lessontext.h"

#include <QCoreApplication>

namespace shardscope {

namespace {

class LessonText
{
    Q_DECLARE_TR_FUNCTIONS(Lesson)

public:
    static StepText step(std::string_view id)
    {
        if (id == "scenario") {
            return {
                tr("The case: a 7B model, 32K tokens, eight 910B NPUs"),
                tr("A team fine-tunes a model with the Llama 2 7B shape ({params} parameters) on "
                   "sequences of {seq} tokens, one sequence per micro-batch, with every layer "
                   "checkpointed. The node is an Atlas server with eight Ascend 910B NPUs, {hbm} "
                   "of "
                   "HBM each, every pair joined by HCCS.\n\n"
                   "The first run uses plain PyTorch DDP with bf16 weights and an fp32 AdamW. "
                   "Every "
                   "rank runs out of memory as soon as the first optimizer step starts. Two ideas "
                   "are "
                   "on the table: cut sequences to 8K tokens, which the product cannot accept "
                   "because "
                   "it has to reason over long documents, or split every layer eight ways with "
                   "tensor "
                   "parallelism, which the team fears for its communication.\n\n"
                   "The workbench now holds that DDP plan. Of the {hbm} on each NPU, {usable} "
                   "remain "
                   "for PyTorch once this plan's runtime reserve is set aside."),
                {}};
        }
        if (id == "ddp-state") {
            return {
                tr("Question 1a: why DDP cannot fit"),
                tr("DDP gives every rank a complete copy of what the optimizer works on. Per "
                   "parameter that is 2 bytes of bf16 weight, 2 bytes of bf16 gradient, 4 bytes of "
                   "fp32 master copy and 8 bytes for Adam's two fp32 moments: 16 bytes. For "
                   "{params} "
                   "parameters the engine finds at the optimizer step:\n"
                   "• parameters {p}\n"
                   "• gradients {g}\n"
                   "• master weights {m}\n"
                   "• optimizer states {o}\n"
                   "together {state} on every rank, against {hbm} of HBM. Not one "
                   "activation is stored yet and the rank is already out of memory.\n\n"
                   "The full accounting adds what a quick sum leaves out: DDP's gradient buckets "
                   "({buckets}), the temporaries of the foreach AdamW step ({temp}) and the "
                   "runtime "
                   "reserve ({reserve}). The fullest rank needs {need}, {over} more than the NPU "
                   "has."),
                tr("The case adds 14 + 14 + 28 + 56 = 112 GB: it takes the model as exactly 7 "
                   "billion parameters and counts in decimal gigabytes, GB (10^9 B). Counted in "
                   "the same GB, the engine's four terms come to {state_gb}; the difference is "
                   "only the preset's exact parameter count. Everywhere else the workbench shows "
                   "binary GiB (2^30 B). Both give the same verdict; the full accounting only "
                   "widens the gap.")};
        }
        if (id == "full-sharding") {
            return {
                tr("Question 1b: shard the state over the eight ranks"),
                tr("Full sharding (PyTorch FSDP, ZeRO stage 3) keeps one eighth of the parameters, "
                   "gradients, master weights and optimizer moments on each rank, and gathers a "
                   "layer's weights only while that layer runs. The state per rank falls to "
                   "{state}, which leaves {left} of the {hbm} for everything else.\n\n"
                   "That remainder is not all free. At this plan's peak the engine counts "
                   "activations "
                   "{act}, logits and loss {logits}, gathered layers and reduce buffers {comm}, "
                   "and a "
                   "runtime reserve of {reserve}. The fullest rank needs {need}: the plan fits "
                   "with "
                   "{headroom} to spare."),
                tr("The case puts the sharded state at about 14 GB per rank and the rest at "
                   "roughly 50 GB, in decimal gigabytes, GB (10^9 B), taking the HBM as 64 GB. In "
                   "the same GB the engine's state is a little smaller ({state_gb}: exact "
                   "parameter count) and the HBM a little larger ({hbm_gb}), which leaves "
                   "{left_gb} beside the state; but its headroom is much smaller ({headroom_gb}), "
                   "because the full accounting charges the activations of 32K tokens, the fp32 "
                   "logits of the loss, FSDP's gathered layers and the runtime reserve against "
                   "the same HBM.")};
        }
        if (id == "long-context") {
            return {
                tr("Question 1c: what 32K tokens cost, and what each technique buys"),
                tr("With full recompute each of the layers keeps only its input for the backward "
                   "pass: at {seq} tokens that is {act} of activations. The loss costs more: the "
                   "Hugging Face loss casts the logits to fp32 and keeps their log-softmax, so "
                   "{seq} "
                   "tokens times a vocabulary of {vocab} take {logits} at the peak. The fullest "
                   "rank "
                   "needs {need} in total.\n\n"
                   "What each technique does to this plan, as the engine computes it:\n"
                   "• Activation recompute: without it activations grow to {act_norecompute} and "
                   "the rank needs {need_norecompute}.\n"
                   "• Fused (flash) attention: eager attention brings back the score matrices of "
                   "the layer being computed; the need becomes {need_eager}.\n"
                   "• Sequence parallelism splits activations over the ranks of a tensor-parallel "
                   "group: TP 4 x FSDP 2 with SP keeps {act_tp4sp} of activations per rank, "
                   "{need_tp4sp} in total.\n"
                   "• Context parallelism: CP 2 x FSDP 4 gives each rank half of every sequence: "
                   "activations {act_cp2}, total {need_cp2}.\n"
                   "• Optimizer offload: master weights and moments in host memory bring the need "
                   "to {need_offload}, paid for with host transfers every step.\n\n"
                   "Full sharding with recompute and fused attention already fits at 32K; the "
                   "others "
                   "are what to reach for when measured peaks come in above the prediction."),
                tr("The case names these techniques without sizes. The engine prices each on the "
                   "same plan, and shows that the fp32 loss ({logits}) outweighs the checkpointed "
                   "activations ({act}) even at a 32,000-token vocabulary.")};
        }
        if (id == "shorten") {
            return {
                tr("The last resort: shorten sequences to 8K"),
                tr("At {seq} tokens per sequence the forward pass's activations drop to {act} and its "
                   "logits and loss to {logits}; the fullest rank needs {need} instead of {need32} at "
                   "32K, leaving "
                   "{headroom}. Memory stops being a question, but the task has changed: every "
                   "document longer than 8K tokens is cut, and the model never learns to reason "
                   "across a whole long document, which is what the product needs. Shorten only "
                   "when "
                   "no layout fits 32K; here full sharding does."),
                {}};
        }
        if (id == "fine-tuning") {
            return {
                tr("Beyond the case: train fewer parameters instead"),
                tr("Fine-tuning rarely needs every weight trained. LoRA keeps the 7B base frozen "
                   "and trains rank-16 adapters on every linear layer: {trainable} parameters. "
                   "Gradients, master weights and optimizer states exist only for those "
                   "(optimizer states {states}); the frozen base stays in bf16 ({params}). Under "
                   "plain DDP, the layout that failed, the fullest rank needs {need} of {hbm}, "
                   "leaving {headroom}; full training in the same layout needs {need_full}.\n\n"
                   "QLoRA stores the frozen linear weights in 4-bit NF4: the parameters shrink to "
                   "{params_qlora} and the need to {need_qlora}.\n\n"
                   "Like shortening the sequences, this changes the task, not just the layout: a "
                   "low-rank update can learn less than a full one, and a 4-bit base computes "
                   "with slightly different weights. Choose it for what the model must learn, "
                   "not to avoid choosing a layout."),
                tr("The case asks for full training. The engine counts the adapters as PEFT "
                   "prints them, and what they leave untouched: the fp32 loss over a "
                   "32,000-token vocabulary still takes {logits}, nearly as much as the frozen "
                   "base.")};
        }
        if (id == "tp8") {
            return {
                tr("Question 2a: tensor parallelism over all eight NPUs"),
                tr("TP 8 splits every weight matrix over the eight NPUs and, with sequence "
                   "parallelism, the activations between the blocks too; no data parallelism is "
                   "left. The fullest rank needs {need}, with {act} of activations at the end of "
                   "the "
                   "forward pass.\n\n"
                   "The price is communication inside every layer: an all-gather before and a "
                   "reduce-scatter after each attention and MLP block, in the forward and in the "
                   "backward pass. The engine counts {tp_calls} TP collectives per step, each "
                   "carrying {tp_bytes} and taking {tp_time} on HCCS: {tp_total} per step, of "
                   "which "
                   "{tp_exposed} is not hidden behind compute. Predicted: {step} per step for one "
                   "sequence, {tps} tokens/s."),
                tr("The case expects TP's messages to be small and bound by latency at micro-batch "
                   "1. At 32K tokens they are not: one message holds a whole sequence's hidden "
                   "states ({tp_bytes}), so its time is bandwidth. The latency argument holds for "
                   "short sequences.")};
        }
        if (id == "fsdp-comm") {
            return {
                tr("Question 2b: FSDP's collectives"),
                tr("FSDP also communicates layer by layer, but it moves weights, not activations: "
                   "each layer's parameters are all-gathered before its forward and again before "
                   "its "
                   "backward, and its gradients are reduce-scattered afterwards. The engine counts "
                   "{ag_calls} all-gathers per step of {ag_bytes} each ({ag_time} each on HCCS) "
                   "and "
                   "{rs_calls} reduce-scatters; DP communication adds up to {dp_total} per step, "
                   "{dp_exposed} of it exposed. The step takes {step}, but each of the eight ranks "
                   "works on its own sequence: {tps} tokens/s, against {tps_tp8} for TP 8. The "
                   "fullest rank needs {need} here and {need_tp8} under TP 8.\n\n"
                   "FSDP's messages do not grow with the sequence, TP's do; FSDP's grow with the "
                   "model instead, and each layer's all-gather can run while the previous layer "
                   "computes."),
                {}};
        }
        if (id == "hybrid") {
            return {
                tr("Question 2c: the middle ground, TP 4 x FSDP 2"),
                tr("Tensor parallelism inside groups of four NPUs and full sharding across the two "
                   "groups halves TP's group and keeps FSDP for the model state. The fullest rank "
                   "needs {need} with {act} of activations; exposed TP communication {tp_exposed}, "
                   "exposed DP communication {dp_exposed}, predicted step {step} for two "
                   "sequences, "
                   "{tps} tokens/s. It is the fallback "
                   "when activations rather than state limit FSDP and TP 8's collectives prove too "
                   "slow."),
                {}};
        }
        if (id == "evidence") {
            return {
                tr("Question 2: what to deploy first, and what evidence changes it"),
                tr("Start with FSDP full sharding, recompute and fused attention: it fits with "
                   "{headroom} to spare, leaves the model code unchanged and is the simplest to "
                   "validate. Predicted step {step} with {comm_exposed} of exposed communication, "
                   "{tps} tokens/s; TP 8 is predicted at {tps_tp8} tokens/s and TP 4 x FSDP 2 at "
                   "{tps_hybrid}, because they expose their per-layer collectives while FSDP hides "
                   "its all-gathers behind compute. Then measure on "
                   "the node and hold the measurements against these predictions:\n"
                   "• HCCL time in the profiler trace: when exposed collective time is a large "
                   "share of the step, the layout is bound by communication.\n"
                   "• All-gather latency per layer: predicted {ag_time} against {layer_compute} "
                   "of compute per layer. If the measured all-gather takes longer than a layer's "
                   "compute, prefetching cannot hide it, and TP or the hybrid moves less weight "
                   "traffic.\n"
                   "• Per-layer memory: predicted activations {act} in all. If the measured peak "
                   "leaves too little headroom, add SP through the hybrid, context parallelism or "
                   "offload.\n"
                   "• Step time: a large gap between measured and predicted is a reason to "
                   "calibrate the device profile with the kernel runner before choosing.\n"
                   "The choice follows the traces, not the parameter count.") +
                    QLatin1Char('\n') +
                    tr("Why Search may rank another layout first on this same case: it ranks the "
                       "layouts that fit by predicted step time alone, so context parallelism (CP 8: "
                       "{tps_cp8} tokens/s, {need_cp8} per rank) can come out ahead of FSDP. The "
                       "ranking does not weigh what this case asks for: one node of eight 910B NPUs, "
                       "32K-token fine-tuning of an existing 7B model, the model code unchanged and "
                       "a layout that is quick to validate. CP needs ring attention in the model code, "
                       "a balanced split of every sequence and its own validation; where the "
                       "framework has it and throughput matters most, take the Search's first "
                       "row and measure it the same way."),
                tr("These predictions rest on the device profile's HCCS bandwidth, efficiency and "
                   "latency, each listed with its source; measurements from the node replace "
                   "them.")};
        }
        return {};
    }

    static ExerciseText exercise(std::string_view id)
    {
        if (id == "smallest-64k") {
            return {tr("Exercise 1: the smallest layout for 64K tokens"),
                    tr("The sequence length is now 65,536 tokens. The layouts below are listed "
                       "from the "
                       "least change to how the model runs to the most. Which is the first that "
                       "fits on "
                       "the eight NPUs with at least 10 % of the HBM to spare, for measured peaks "
                       "above "
                       "the prediction? Answer with its label, or \"none\".")};
        }
        if (id == "vocab-152k-logits") {
            return {
                tr("Exercise 2: a 152K vocabulary"),
                tr("Give the model a vocabulary of 152,064 tokens (Qwen2.5's), keeping full "
                   "sharding "
                   "at 32K. How many GiB do logits and loss take on the fullest rank at its peak? "
                   "(within 5 %)")};
        }
        if (id == "vocab-152k-fits") {
            return {tr("Exercise 3: does it still fit?"),
                    tr("With the 152K vocabulary, does the full-sharding 32K plan still fit? "
                       "Answer yes "
                       "or no.")};
        }
        return {};
    }
};

} // namespace

QString lessonTitle(std::string_view lessonId)
{
    if (lessonId == "hcie-ai-32k")
        return LessonText::tr("HCIE-AI case: 32K-token fine-tuning on 8 x Ascend 910B");
    return QString::fromUtf8(lessonId.data(), qsizetype(lessonId.size()));
}

StepText lessonStepText(std::string_view stepId)
{
    return LessonText::step(stepId);
}

ExerciseText lessonExerciseText(std::string_view exerciseId)
{
    return LessonText::exercise(exerciseId);
}

} // namespace shardscope
