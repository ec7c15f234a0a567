<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>Collective</name>
    <message>
        <source>gradient buckets (DDP), overlapped with backward</source>
        <translation>梯度桶（DDP），与反向重叠</translation>
    </message>
    <message>
        <source>gradient buckets (ZeRO-1/2), overlapped with backward</source>
        <translation>梯度桶（ZeRO-1/2），与反向重叠</translation>
    </message>
    <message>
        <source>updated parameter shards after the optimizer step</source>
        <translation>优化器步之后更新过的参数分片</translation>
    </message>
    <message>
        <source>layer parameters, forward (prefetched one layer ahead)</source>
        <translation>层参数，前向（提前一层预取）</translation>
    </message>
    <message>
        <source>layer parameters again in backward (reshard_after_forward)</source>
        <translation>反向中再次聚合的层参数（reshard_after_forward）</translation>
    </message>
    <message>
        <source>layer gradients, overlapped with the next layer&apos;s backward</source>
        <translation>层梯度，与下一层的反向重叠</translation>
    </message>
    <message>
        <source>root module (embedding, final norm, head), kept until backward ends</source>
        <translation>根模块（嵌入层、最终 norm、LM head），保留到反向结束</translation>
    </message>
    <message>
        <source>root module gradients</source>
        <translation>根模块的梯度</translation>
    </message>
    <message>
        <source>after attention and MLP (row-parallel outputs)</source>
        <translation>注意力与 MLP 之后（行并行层的输出）</translation>
    </message>
    <message>
        <source>input gradients of the column-parallel inputs</source>
        <translation>列并行层的输入梯度</translation>
    </message>
    <message>
        <source>forward all-reduces repeated by full recompute</source>
        <translation>完全重计算重复的前向 all-reduce</translation>
    </message>
    <message>
        <source>SP: gather the sequence before attention and MLP</source>
        <translation>SP：在注意力与 MLP 之前聚合序列</translation>
    </message>
    <message>
        <source>SP: scatter attention and MLP outputs</source>
        <translation>SP：分散注意力与 MLP 的输出</translation>
    </message>
    <message>
        <source>SP: backward of the reduce-scatters</source>
        <translation>SP：reduce-scatter 的反向</translation>
    </message>
    <message>
        <source>SP: backward of the all-gathers</source>
        <translation>SP：all-gather 的反向</translation>
    </message>
    <message>
        <source>SP: all-gathers repeated by full recompute</source>
        <translation>SP：完全重计算重复的 all-gather</translation>
    </message>
    <message>
        <source>SP: reduce-scatters repeated by full recompute</source>
        <translation>SP：完全重计算重复的 reduce-scatter</translation>
    </message>
    <message>
        <source>K/V and dK/dV blocks around the ring</source>
        <translation>沿环传递的 K/V 与 dK/dV 块</translation>
    </message>
    <message>
        <source>activations to the next stage (per micro-batch and model chunk)</source>
        <translation>发往下一个流水线阶段的激活值（每个微批、每个模型块一次）</translation>
    </message>
    <message>
        <source>activation gradients to the previous stage</source>
        <translation>发往上一个流水线阶段的激活值梯度</translation>
    </message>
    <message>
        <source>token dispatch and combine</source>
        <translation>token 分发与合并</translation>
    </message>
    <message>
        <source>gradients of dispatch and combine</source>
        <translation>分发与合并的梯度</translation>
    </message>
    <message>
        <source>tokens gathered for the local experts (all-gather dispatcher)</source>
        <translation>为本地专家汇集的 token（all-gather 分发器）</translation>
    </message>
    <message>
        <source>expert outputs returned (all-gather dispatcher)</source>
        <translation>专家输出送回（all-gather 分发器）</translation>
    </message>
    <message>
        <source>dispatched tokens across the expert tensor-parallel group</source>
        <translation>在专家张量并行组内汇集已分发的 token</translation>
    </message>
    <message>
        <source>expert outputs summed back over the expert tensor-parallel group</source>
        <translation>专家输出在专家张量并行组内求和送回</translation>
    </message>
    <message>
        <source>gradients across the expert tensor-parallel group</source>
        <translation>专家张量并行组内的梯度</translation>
    </message>
    <message>
        <source>Ulysses: the attention output back to the sequence split</source>
        <translation>Ulysses：注意力输出换回按序列切分</translation>
    </message>
    <message>
        <source>Ulysses: the output&apos;s gradient to the head split</source>
        <translation>Ulysses：输出的梯度切换为按头切分</translation>
    </message>
    <message>
        <source>Ulysses: dq, dk and dv back to the sequence split</source>
        <translation>Ulysses：dq、dk、dv 换回按序列切分</translation>
    </message>
    <message>
        <source>HSDP: each bucket&apos;s shard all-reduced across the replicas</source>
        <translation>HSDP：每个桶的分片在副本之间 all-reduce</translation>
    </message>
    <message>
        <source>HSDP: each layer&apos;s gradient shard all-reduced across the replicas</source>
        <translation>HSDP：每层的梯度分片在副本之间 all-reduce</translation>
    </message>
    <message>
        <source>gradients (DDP) in one bucket after backward, not overlapped</source>
        <translation>梯度（DDP）在反向结束后作为一个桶归约，不重叠</translation>
    </message>
    <message>
        <source>gradients (ZeRO-1/2) in one bucket after backward, not overlapped</source>
        <translation>梯度（ZeRO-1/2）在反向结束后作为一个桶归约，不重叠</translation>
    </message>
    <message>
        <source>updated parameter shards, bucket by bucket in the next forward (overlap-param-gather)</source>
        <translation>更新过的参数分片，在下一次前向中逐桶收集（overlap-param-gather）</translation>
    </message>
    <message>
        <source>ZeRO++ hpZ: layer parameters of the later micro-batches&apos; forwards, gathered from the secondary partitions within the hpZ group</source>
        <translation>ZeRO++ hpZ：后续微批前向的层参数，从 hpZ 组内的二级分片聚合</translation>
    </message>
    <message>
        <source>ZeRO++ hpZ: layer parameters again in backward, from the secondary partitions within the hpZ group</source>
        <translation>ZeRO++ hpZ：反向中再次聚合的层参数，取自 hpZ 组内的二级分片</translation>
    </message>
    <message>
        <source>layer routed experts, forward, over their own shard group (after the dense part)</source>
        <translation>层的路由专家，前向，在专家自己的分片组内（稠密部分之后）</translation>
    </message>
    <message>
        <source>layer routed experts again in backward</source>
        <translation>反向中再次收集层的路由专家</translation>
    </message>
    <message>
        <source>layer routed experts&apos; gradients, over their own shard group</source>
        <translation>层的路由专家梯度，在专家自己的分片组内</translation>
    </message>
    <message>
        <source>K/V block to the next rank of the ring (again for each recomputed attention)</source>
        <translation>发往环上下一个 rank 的 K/V 块（每次重计算注意力时再发一次）</translation>
    </message>
    <message>
        <source>Ulysses: q, k and v to the head split (again for each recomputed attention)</source>
        <translation>Ulysses：q、k、v 切换为按头切分（每次重计算注意力时再做一次）</translation>
    </message>
</context>
<context>
    <name>ComponentStyle</name>
    <message>
        <source>Parameters</source>
        <translation>参数</translation>
    </message>
    <message>
        <source>Gradients</source>
        <translation>梯度</translation>
    </message>
    <message>
        <source>Master weights</source>
        <translation>主权重</translation>
    </message>
    <message>
        <source>Optimizer states</source>
        <translation>优化器状态</translation>
    </message>
    <message>
        <source>Activations</source>
        <translation>激活值</translation>
    </message>
    <message>
        <source>Logits and loss</source>
        <translation>logits 与损失</translation>
    </message>
    <message>
        <source>Communication buffers</source>
        <translation>通信缓冲区</translation>
    </message>
    <message>
        <source>Transient</source>
        <translation>临时内存</translation>
    </message>
    <message>
        <source>Runtime reserve</source>
        <translation>运行时预留</translation>
    </message>
    <message>
        <source>forward</source>
        <translation>前向</translation>
    </message>
    <message>
        <source>backward</source>
        <translation>反向</translation>
    </message>
    <message>
        <source>optimizer step</source>
        <translation>优化器步</translation>
    </message>
</context>
<context>
    <name>FileWrite</name>
    <message>
        <source>Cannot encode the image as PNG</source>
        <translation>无法将图像编码为 PNG</translation>
    </message>
</context>
<context>
    <name>Lesson</name>
    <message>
        <source>%1 layers x %2 + embedding %3 + LM head %4 + final norm %5</source>
        <translation>%1 层 x %2 + 嵌入层 %3 + LM 头 %4 + 最终 norm %5</translation>
    </message>
    <message>
        <source>training.seq_len</source>
        <translation>training.seq_len</translation>
    </message>
    <message>
        <source>model.vocab</source>
        <translation>model.vocab</translation>
    </message>
    <message>
        <source>HBM of the device profile %1</source>
        <translation>设备配置 %1 的 HBM</translation>
    </message>
    <message>
        <source>HBM %1 - largest runtime reserve %2</source>
        <translation>HBM %1 - 最大运行时预留 %2</translation>
    </message>
    <message>
        <source>peak allocated %1 (%2) + runtime reserve %3</source>
        <translation>峰值分配 %1（%2）+ 运行时预留 %3</translation>
    </message>
    <message>
        <source>sum of the components at the peak (%1)</source>
        <translation>峰值时各组成部分之和（%1）</translation>
    </message>
    <message numerus="yes">
        <source>context %1 + %n communicator(s) %2 + allocator %3</source>
        <translation>
            <numerusform>上下文 %1 + %n 个通信域 %2 + 分配器 %3</numerusform>
        </translation>
    </message>
    <message>
        <source>HBM %1 - need %2</source>
        <translation>HBM %1 - 需求 %2</translation>
    </message>
    <message>
        <source>need %1 - HBM %2</source>
        <translation>需求 %1 - HBM %2</translation>
    </message>
    <message>
        <source>parameters %1 + gradients %2 + master weights %3 + optimizer states %4 [%5]</source>
        <translation>参数 %1 + 梯度 %2 + 主权重 %3 + 优化器状态 %4 [%5]</translation>
    </message>
    <message>
        <source>HBM %1 - model state %2 (%3)</source>
        <translation>HBM %1 - 模型状态 %2（%3）</translation>
    </message>
    <message>
        <source>collectives</source>
        <translation>集合通信</translation>
    </message>
    <message>
        <source> over %1</source>
        <translation>（%1 组）</translation>
    </message>
    <message>
        <source>%1: calls per step</source>
        <translation>%1：每步调用次数</translation>
    </message>
    <message>
        <source>%1 x%2: message of one %3 (%4)</source>
        <translation>%1 x%2：一次 %3 的消息（%4）</translation>
    </message>
    <message>
        <source>latency x steps + message x bus factor / (bandwidth x efficiency), one %1 over %2 x%3</source>
        <translation>延迟 x 步数 + 消息 x 总线系数 /（带宽 x 效率），在 %2 x%3 上的一次 %1</translation>
    </message>
    <message>
        <source>%1: sum of calls x time per call</source>
        <translation>%1：调用次数 x 每次耗时之和</translation>
    </message>
    <message>
        <source>%1: time not hidden behind compute, per step</source>
        <translation>%1：每步中未被计算掩盖的时间</translation>
    </message>
    <message>
        <source>compute %1 + exposed communication %2 + bubble %3 + offload %4</source>
        <translation>计算 %1 + 暴露通信 %2 + 气泡 %3 + 卸载 %4</translation>
    </message>
    <message>
        <source>%1 tokens x micro-batch %2 x %3 micro-batch(es) x DP %4 / step %5</source>
        <translation>%1 tokens x 微批 %2 x %3 个微批 x DP %4 / 单步 %5</translation>
    </message>
    <message>
        <source>compute of one step on one rank</source>
        <translation>单个 rank 一步的计算时间</translation>
    </message>
    <message>
        <source>compute %1 / (%2 layers x %3 micro-batch(es))</source>
        <translation>计算 %1 /（%2 层 x %3 个微批）</translation>
    </message>
    <message>
        <source>(not estimated)</source>
        <translation>（未估计）</translation>
    </message>
    <message>
        <source>none of these</source>
        <translation>以上都不是</translation>
    </message>
    <message>
        <source>%1: needs %2 of %3, %4</source>
        <translation>%1：需要 %2（共 %3），%4</translation>
    </message>
    <message>
        <source>fits with the margin</source>
        <translation>留有余量地容纳</translation>
    </message>
    <message>
        <source>fits, but without the margin</source>
        <translation>可容纳，但余量不足</translation>
    </message>
    <message>
        <source>does not fit</source>
        <translation>无法容纳</translation>
    </message>
    <message>
        <source>Correct: %1.</source>
        <translation>正确：%1。</translation>
    </message>
    <message>
        <source>Not quite; the engine&apos;s answer is %1.</source>
        <translation>不太对；引擎的答案是 %1。</translation>
    </message>
    <message>
        <source>Correct.</source>
        <translation>正确。</translation>
    </message>
    <message>
        <source>Not quite.</source>
        <translation>不太对。</translation>
    </message>
    <message>
        <source>The engine computes %1: %2</source>
        <translation>引擎计算为 %1：%2</translation>
    </message>
    <message>
        <source>yes</source>
        <translation>是</translation>
    </message>
    <message>
        <source>no</source>
        <translation>否</translation>
    </message>
    <message>
        <source>The fullest rank needs %1 of %2: it fits, with %3 to spare.</source>
        <translation>最满的 rank 需要 %1（共 %2）：可以容纳，余量 %3。</translation>
    </message>
    <message>
        <source>The fullest rank needs %1 of %2: it does not fit, over by %3.</source>
        <translation>最满的 rank 需要 %1（共 %2）：无法容纳，超出 %3。</translation>
    </message>
    <message>
        <source>The case: a 7B model, 32K tokens, eight 910B NPUs</source>
        <translation>案例：7B 模型、32K tokens、八块 910B NPU</translation>
    </message>
    <message>
        <source>A team fine-tunes a model with the Llama 2 7B shape ({params} parameters) on sequences of {seq} tokens, one sequence per micro-batch, with every layer checkpointed. The node is an Atlas server with eight Ascend 910B NPUs, {hbm} of HBM each, every pair joined by HCCS.

The first run uses plain PyTorch DDP with bf16 weights and an fp32 AdamW. Every rank runs out of memory as soon as the first optimizer step starts. Two ideas are on the table: cut sequences to 8K tokens, which the product cannot accept because it has to reason over long documents, or split every layer eight ways with tensor parallelism, which the team fears for its communication.

The workbench now holds that DDP plan. Of the {hbm} on each NPU, {usable} remain for PyTorch once this plan&apos;s runtime reserve is set aside.</source>
        <translation>一个团队在 {seq} tokens 的序列上微调一个 Llama 2 7B 结构的模型（{params} 个参数），每个微批一条序列，每层都做激活检查点。节点是一台 Atlas 服务器，配有八块昇腾 910B NPU，每块 {hbm} HBM，两两之间通过 HCCS 相连。

第一次运行使用普通的 PyTorch DDP，bf16 权重加 fp32 AdamW。第一个优化器步一开始，每个 rank 都显存溢出。摆在面前的有两个想法：把序列截短到 8K tokens——但产品需要在长文档上推理，无法接受；或者用张量并行把每一层切成八份——团队又担心它的通信开销。

工作台中现在就是这个 DDP 方案。每块 NPU 的 {hbm} 中，扣除该方案的运行时预留后，留给 PyTorch 的是 {usable}。</translation>
    </message>
    <message>
        <source>Question 1a: why DDP cannot fit</source>
        <translation>问题 1a：为什么 DDP 放不下</translation>
    </message>
    <message>
        <source>Question 1b: shard the state over the eight ranks</source>
        <translation>问题 1b：把状态分片到八个 rank 上</translation>
    </message>
    <message>
        <source>Question 1c: what 32K tokens cost, and what each technique buys</source>
        <translation>问题 1c：32K tokens 的代价，以及每种技术能省下多少</translation>
    </message>
    <message>
        <source>With full recompute each of the layers keeps only its input for the backward pass: at {seq} tokens that is {act} of activations. The loss costs more: the Hugging Face loss casts the logits to fp32 and keeps their log-softmax, so {seq} tokens times a vocabulary of {vocab} take {logits} at the peak. The fullest rank needs {need} in total.

What each technique does to this plan, as the engine computes it:
• Activation recompute: without it activations grow to {act_norecompute} and the rank needs {need_norecompute}.
• Fused (flash) attention: eager attention brings back the score matrices of the layer being computed; the need becomes {need_eager}.
• Sequence parallelism splits activations over the ranks of a tensor-parallel group: TP 4 x FSDP 2 with SP keeps {act_tp4sp} of activations per rank, {need_tp4sp} in total.
• Context parallelism: CP 2 x FSDP 4 gives each rank half of every sequence: activations {act_cp2}, total {need_cp2}.
• Optimizer offload: master weights and moments in host memory bring the need to {need_offload}, paid for with host transfers every step.

Full sharding with recompute and fused attention already fits at 32K; the others are what to reach for when measured peaks come in above the prediction.</source>
        <translation>完全重计算时，每一层只为反向保存自己的输入：在 {seq} tokens 下激活值为 {act}。损失的开销更大：Hugging Face 的损失函数把 logits 转成 fp32 并保存其 log-softmax，因此 {seq} tokens 乘以 {vocab} 的词表在峰值时占 {logits}。最满的 rank 共需 {need}。

各项技术对该方案的作用（引擎计算）：
• 激活重计算：不用它，激活值增至 {act_norecompute}，rank 需要 {need_norecompute}。
• 融合（flash）注意力：eager 注意力会把正在计算的层的得分矩阵重新放回显存，需求变为 {need_eager}。
• 序列并行把激活值分到张量并行组的各 rank 上：TP 4 x FSDP 2 加 SP 时每个 rank 的激活值为 {act_tp4sp}，合计 {need_tp4sp}。
• 上下文并行：CP 2 x FSDP 4 让每个 rank 处理每条序列的一半：激活值 {act_cp2}，合计 {need_cp2}。
• 优化器卸载：主权重与动量放在主机内存，需求降到 {need_offload}，代价是每步都有主机传输。

完全分片加重计算和融合注意力在 32K 下已经可以容纳；其他技术留待实测峰值高于预测时使用。</translation>
    </message>
    <message>
        <source>The case names these techniques without sizes. The engine prices each on the same plan, and shows that the fp32 loss ({logits}) outweighs the checkpointed activations ({act}) even at a 32,000-token vocabulary.</source>
        <translation>案例只列出了这些技术，没有给出大小。引擎在同一方案上逐项计价，并表明即使词表只有 32,000，fp32 损失（{logits}）也超过了检查点保存的激活值（{act}）。</translation>
    </message>
    <message>
        <source>The last resort: shorten sequences to 8K</source>
        <translation>最后手段：把序列截短到 8K</translation>
    </message>
    <message>
        <source>Question 2a: tensor parallelism over all eight NPUs</source>
        <translation>问题 2a：在全部八块 NPU 上做张量并行</translation>
    </message>
    <message>
        <source>TP 8 splits every weight matrix over the eight NPUs and, with sequence parallelism, the activations between the blocks too; no data parallelism is left. The fullest rank needs {need}, with {act} of activations at the end of the forward pass.

The price is communication inside every layer: an all-gather before and a reduce-scatter after each attention and MLP block, in the forward and in the backward pass. The engine counts {tp_calls} TP collectives per step, each carrying {tp_bytes} and taking {tp_time} on HCCS: {tp_total} per step, of which {tp_exposed} is not hidden behind compute. Predicted: {step} per step for one sequence, {tps} tokens/s.</source>
        <translation>TP 8 把每个权重矩阵切到八块 NPU 上，配合序列并行时，块与块之间的激活值也被切分；不再有数据并行。最满的 rank 需要 {need}，前向结束时激活值为 {act}。

代价是每一层内部的通信：每个注意力块和 MLP 块之前一次 all-gather、之后一次 reduce-scatter，前向和反向都有。引擎统计每步 {tp_calls} 次 TP 集合通信，每次传输 {tp_bytes}，在 HCCS 上耗时 {tp_time}：每步共 {tp_total}，其中 {tp_exposed} 未被计算掩盖。预测：一条序列每步 {step}，{tps} tokens/s。</translation>
    </message>
    <message>
        <source>The case expects TP&apos;s messages to be small and bound by latency at micro-batch 1. At 32K tokens they are not: one message holds a whole sequence&apos;s hidden states ({tp_bytes}), so its time is bandwidth. The latency argument holds for short sequences.</source>
        <translation>案例认为微批为 1 时 TP 的消息很小、受延迟限制。在 32K tokens 下并非如此：一条消息就装着整条序列的隐藏状态（{tp_bytes}），耗时取决于带宽。延迟的论点只适用于短序列。</translation>
    </message>
    <message>
        <source>Question 2b: FSDP&apos;s collectives</source>
        <translation>问题 2b：FSDP 的集合通信</translation>
    </message>
    <message>
        <source>FSDP also communicates layer by layer, but it moves weights, not activations: each layer&apos;s parameters are all-gathered before its forward and again before its backward, and its gradients are reduce-scattered afterwards. The engine counts {ag_calls} all-gathers per step of {ag_bytes} each ({ag_time} each on HCCS) and {rs_calls} reduce-scatters; DP communication adds up to {dp_total} per step, {dp_exposed} of it exposed. The step takes {step}, but each of the eight ranks works on its own sequence: {tps} tokens/s, against {tps_tp8} for TP 8. The fullest rank needs {need} here and {need_tp8} under TP 8.

FSDP&apos;s messages do not grow with the sequence, TP&apos;s do; FSDP&apos;s grow with the model instead, and each layer&apos;s all-gather can run while the previous layer computes.</source>
        <translation>FSDP 同样逐层通信，但传的是权重而不是激活值：每层的参数在前向之前 all-gather 一次，在反向之前再 all-gather 一次，之后对梯度做 reduce-scatter。引擎统计每步 {ag_calls} 次 all-gather，每次 {ag_bytes}（在 HCCS 上每次 {ag_time}），以及 {rs_calls} 次 reduce-scatter；DP 通信每步合计 {dp_total}，其中暴露 {dp_exposed}。单步耗时 {step}，但八个 rank 各自处理一条序列：{tps} tokens/s，而 TP 8 为 {tps_tp8}。这里最满的 rank 需要 {need}，TP 8 下为 {need_tp8}。

FSDP 的消息不随序列增长，TP 的会；FSDP 的消息随模型增长，而且每层的 all-gather 可以在上一层计算时进行。</translation>
    </message>
    <message>
        <source>Question 2c: the middle ground, TP 4 x FSDP 2</source>
        <translation>问题 2c：折中方案 TP 4 x FSDP 2</translation>
    </message>
    <message>
        <source>Tensor parallelism inside groups of four NPUs and full sharding across the two groups halves TP&apos;s group and keeps FSDP for the model state. The fullest rank needs {need} with {act} of activations; exposed TP communication {tp_exposed}, exposed DP communication {dp_exposed}, predicted step {step} for two sequences, {tps} tokens/s. It is the fallback when activations rather than state limit FSDP and TP 8&apos;s collectives prove too slow.</source>
        <translation>在四块 NPU 组成的组内做张量并行，在两个组之间做完全分片：TP 组减半，模型状态仍由 FSDP 分片。最满的 rank 需要 {need}，激活值 {act}；暴露的 TP 通信 {tp_exposed}，暴露的 DP 通信 {dp_exposed}，两条序列预测单步 {step}，{tps} tokens/s。当限制 FSDP 的是激活值而非状态、而 TP 8 的集合通信又太慢时，它就是退路。</translation>
    </message>
    <message>
        <source>Question 2: what to deploy first, and what evidence changes it</source>
        <translation>问题 2：先部署什么，哪些证据会改变选择</translation>
    </message>
    <message>
        <source>These predictions rest on the device profile&apos;s HCCS bandwidth, efficiency and latency, each listed with its source; measurements from the node replace them.</source>
        <translation>这些预测依据设备配置中的 HCCS 带宽、效率和延迟，每项都注明了来源；节点上的实测值会取代它们。</translation>
    </message>
    <message>
        <source>Exercise 1: the smallest layout for 64K tokens</source>
        <translation>练习 1：容纳 64K tokens 的最小布局</translation>
    </message>
    <message>
        <source>The sequence length is now 65,536 tokens. The layouts below are listed from the least change to how the model runs to the most. Which is the first that fits on the eight NPUs with at least 10 % of the HBM to spare, for measured peaks above the prediction? Answer with its label, or &quot;none&quot;.</source>
        <translation>序列长度现在是 65,536 tokens。下列布局按对模型运行方式改动从小到大排列。考虑到实测峰值可能高于预测，哪一个是第一个能在八块 NPU 上容纳、且至少留出 10 % HBM 余量的布局？请回答其标签，或“none”。</translation>
    </message>
    <message>
        <source>Exercise 2: a 152K vocabulary</source>
        <translation>练习 2：152K 词表</translation>
    </message>
    <message>
        <source>Give the model a vocabulary of 152,064 tokens (Qwen2.5&apos;s), keeping full sharding at 32K. How many GiB do logits and loss take on the fullest rank at its peak? (within 5 %)</source>
        <translation>把模型的词表改为 152,064（Qwen2.5 的词表），仍在 32K 下使用完全分片。最满的 rank 在峰值时 logits 与损失占多少 GiB？（误差 5 % 以内）</translation>
    </message>
    <message>
        <source>Exercise 3: does it still fit?</source>
        <translation>练习 3：还放得下吗？</translation>
    </message>
    <message>
        <source>With the 152K vocabulary, does the full-sharding 32K plan still fit? Answer yes or no.</source>
        <translation>使用 152K 词表时，32K 完全分片方案还能容纳吗？请回答 yes 或 no。</translation>
    </message>
    <message>
        <source>HCIE-AI case: 32K-token fine-tuning on 8 x Ascend 910B</source>
        <translation>HCIE-AI 案例：在 8 x 昇腾 910B 上进行 32K tokens 微调</translation>
    </message>
    <message>
        <source>Start with FSDP full sharding, recompute and fused attention: it fits with {headroom} to spare, leaves the model code unchanged and is the simplest to validate. Predicted step {step} with {comm_exposed} of exposed communication, {tps} tokens/s; TP 8 is predicted at {tps_tp8} tokens/s and TP 4 x FSDP 2 at {tps_hybrid}, because they expose their per-layer collectives while FSDP hides its all-gathers behind compute. Then measure on the node and hold the measurements against these predictions:
• HCCL time in the profiler trace: when exposed collective time is a large share of the step, the layout is bound by communication.
• All-gather latency per layer: predicted {ag_time} against {layer_compute} of compute per layer. If the measured all-gather takes longer than a layer&apos;s compute, prefetching cannot hide it, and TP or the hybrid moves less weight traffic.
• Per-layer memory: predicted activations {act} in all. If the measured peak leaves too little headroom, add SP through the hybrid, context parallelism or offload.
• Step time: a large gap between measured and predicted is a reason to calibrate the device profile with the kernel runner before choosing.
The choice follows the traces, not the parameter count.</source>
        <translation>先用 FSDP 完全分片、重计算和融合注意力：它留有 {headroom} 余量，不改动模型代码，也最容易验证。预测单步 {step}，暴露通信 {comm_exposed}，{tps} tokens/s；TP 8 预测为 {tps_tp8} tokens/s，TP 4 x FSDP 2 为 {tps_hybrid}，因为它们的逐层集合通信是暴露的，而 FSDP 把 all-gather 藏在计算之后。然后在节点上实测，并与这些预测对照：
• 性能分析轨迹中的 HCCL 时间：若暴露的集合通信时间占单步的很大比例，该布局受通信限制。
• 每层 all-gather 延迟：预测 {ag_time}，而每层计算为 {layer_compute}。若实测 all-gather 比一层的计算还长，预取就无法掩盖它，TP 或折中方案传输的权重更少。
• 每层显存：预测激活值共 {act}。若实测峰值留下的余量太小，可通过折中方案加入 SP、使用上下文并行或卸载。
• 单步时间：实测与预测差距很大时，应先用算子运行器校准设备配置再做选择。
选择取决于轨迹，而不是参数量。</translation>
    </message>
    <message>
        <source>forward</source>
        <translation>前向</translation>
    </message>
    <message>
        <source>backward</source>
        <translation>反向</translation>
    </message>
    <message>
        <source>optimizer step</source>
        <translation>优化器步</translation>
    </message>
    <message>
        <source>parameters that get gradients under %1 (as PEFT counts them)</source>
        <translation>在 %1 下获得梯度的参数（按 PEFT 的计数方式）</translation>
    </message>
    <message>
        <source>Beyond the case: train fewer parameters instead</source>
        <translation>案例之外：改为只训练更少的参数</translation>
    </message>
    <message>
        <source>Fine-tuning rarely needs every weight trained. LoRA keeps the 7B base frozen and trains rank-16 adapters on every linear layer: {trainable} parameters. Gradients, master weights and optimizer states exist only for those (optimizer states {states}); the frozen base stays in bf16 ({params}). Under plain DDP, the layout that failed, the fullest rank needs {need} of {hbm}, leaving {headroom}; full training in the same layout needs {need_full}.

QLoRA stores the frozen linear weights in 4-bit NF4: the parameters shrink to {params_qlora} and the need to {need_qlora}.

Like shortening the sequences, this changes the task, not just the layout: a low-rank update can learn less than a full one, and a 4-bit base computes with slightly different weights. Choose it for what the model must learn, not to avoid choosing a layout.</source>
        <translation>微调很少需要训练每一个权重。LoRA 冻结 7B 基座，在每个线性层上训练秩为 16 的适配器：共 {trainable} 个参数。梯度、主权重和优化器状态只为这些参数存在（优化器状态 {states}）；冻结的基座保持 bf16（{params}）。在原先失败的普通 DDP 布局下，最满的 rank 需要 {need}（共 {hbm}），余量 {headroom}；同一布局下全量训练需要 {need_full}。

QLoRA 以 4 比特 NF4 存储冻结的线性层权重：参数缩小到 {params_qlora}，总需求降到 {need_qlora}。

与截短序列一样，这改变的是任务，而不只是布局：低秩更新能学到的比全量更新少，4 比特基座用略有不同的权重计算。应根据模型必须学到什么来选择它，而不是为了回避布局的选择。</translation>
    </message>
    <message>
        <source>The case asks for full training. The engine counts the adapters as PEFT prints them, and what they leave untouched: the fp32 loss over a 32,000-token vocabulary still takes {logits}, nearly as much as the frozen base.</source>
        <translation>案例要求全量训练。引擎按 PEFT 的方式计数适配器，也计入它们未触及的部分：32,000 词表上的 fp32 损失仍占 {logits}，几乎与冻结的基座一样多。</translation>
    </message>
    <message>
        <source>Why Search may rank another layout first on this same case: it ranks the layouts that fit by predicted step time alone, so context parallelism (CP 8: {tps_cp8} tokens/s, {need_cp8} per rank) can come out ahead of FSDP. The ranking does not weigh what this case asks for: one node of eight 910B NPUs, 32K-token fine-tuning of an existing 7B model, the model code unchanged and a layout that is quick to validate. CP needs ring attention in the model code, a balanced split of every sequence and its own validation; where the framework has it and throughput matters most, take the Search&apos;s first row and measure it the same way.</source>
        <translation>为什么“搜索”在同一案例上可能把另一种布局排在第一：它只按预测的单步时间给放得下的布局排序，因此上下文并行（CP 8：{tps_cp8} tokens/s，每个 rank 需要 {need_cp8}）可能排在 FSDP 之前。这个排序并不考虑本案例的要求：一个节点、八块 910B NPU，对现有 7B 模型做 32K token 微调，模型代码不改动，布局便于快速验证。CP 需要在模型代码中实现环形注意力（ring attention）、把每条序列均衡切分，并需要单独验证；如果框架已支持 CP 且吞吐量最重要，就采用“搜索”结果的第一行，并用同样的方法去实测。</translation>
    </message>
    <message>
        <source>DDP gives every rank a complete copy of what the optimizer works on. Per parameter that is 2 bytes of bf16 weight, 2 bytes of bf16 gradient, 4 bytes of fp32 master copy and 8 bytes for Adam&apos;s two fp32 moments: 16 bytes. For {params} parameters the engine finds at the optimizer step:
• parameters {p}
• gradients {g}
• master weights {m}
• optimizer states {o}
together {state} on every rank, against {hbm} of HBM. Not one activation is stored yet and the rank is already out of memory.

The full accounting adds what a quick sum leaves out: DDP&apos;s gradient buckets ({buckets}), the temporaries of the foreach AdamW step ({temp}) and the runtime reserve ({reserve}). The fullest rank needs {need}, {over} more than the NPU has.</source>
        <translation>DDP 让每个 rank 都持有优化器所需全部数据的完整副本。每个参数对应 2 字节 bf16 权重、2 字节 bf16 梯度、4 字节 fp32 主权重，以及 Adam 两个 fp32 动量共 8 字节：合计 16 字节。对 {params} 个参数，引擎在优化器步得到：
• 参数 {p}
• 梯度 {g}
• 主权重 {m}
• 优化器状态 {o}
每个 rank 合计 {state}，而 HBM 只有 {hbm}。还没保存任何激活值，rank 就已经显存溢出。

完整核算还加上了粗略求和遗漏的部分：DDP 的梯度桶（{buckets}）、foreach AdamW 步的临时张量（{temp}）以及运行时预留（{reserve}）。最满的 rank 需要 {need}，比 NPU 拥有的多出 {over}。</translation>
    </message>
    <message>
        <source>The case adds 14 + 14 + 28 + 56 = 112 GB: it takes the model as exactly 7 billion parameters and counts in decimal gigabytes, GB (10^9 B). Counted in the same GB, the engine&apos;s four terms come to {state_gb}; the difference is only the preset&apos;s exact parameter count. Everywhere else the workbench shows binary GiB (2^30 B). Both give the same verdict; the full accounting only widens the gap.</source>
        <translation>案例的算法是 14 + 14 + 28 + 56 = 112 GB：它把模型按恰好 70 亿参数计，并使用十进制吉字节 GB (10^9 B)。同样按 GB 计，引擎的四项合计为 {state_gb}；差别只在于预设的精确参数量。工作台其他地方显示的都是二进制 GiB (2^30 B)。两者结论相同；完整核算只会让差距更大。</translation>
    </message>
    <message>
        <source>Full sharding (PyTorch FSDP, ZeRO stage 3) keeps one eighth of the parameters, gradients, master weights and optimizer moments on each rank, and gathers a layer&apos;s weights only while that layer runs. The state per rank falls to {state}, which leaves {left} of the {hbm} for everything else.

That remainder is not all free. At this plan&apos;s peak the engine counts activations {act}, logits and loss {logits}, gathered layers and reduce buffers {comm}, and a runtime reserve of {reserve}. The fullest rank needs {need}: the plan fits with {headroom} to spare.</source>
        <translation>完全分片（PyTorch FSDP，ZeRO 第 3 阶段）让每个 rank 只保存参数、梯度、主权重和优化器动量的八分之一，并且只在某层运行时才聚合该层的权重。每个 rank 的状态降到 {state}，{hbm} 中还剩 {left} 留给其他一切。

这部分剩余并非全部空闲。在该方案的峰值处，引擎计入激活值 {act}、logits 与损失 {logits}、聚合的层与归约缓冲区 {comm}，以及运行时预留 {reserve}。最满的 rank 需要 {need}：方案可以容纳，余量 {headroom}。</translation>
    </message>
    <message>
        <source>The case puts the sharded state at about 14 GB per rank and the rest at roughly 50 GB, in decimal gigabytes, GB (10^9 B), taking the HBM as 64 GB. In the same GB the engine&apos;s state is a little smaller ({state_gb}: exact parameter count) and the HBM a little larger ({hbm_gb}), which leaves {left_gb} beside the state; but its headroom is much smaller ({headroom_gb}), because the full accounting charges the activations of 32K tokens, the fp32 logits of the loss, FSDP&apos;s gathered layers and the runtime reserve against the same HBM.</source>
        <translation>案例估计分片后每个 rank 的状态约 14 GB，剩余约 50 GB，用的是十进制吉字节 GB (10^9 B)，并把 HBM 当作 64 GB。同样按 GB 计，引擎算出的状态略小（{state_gb}：精确参数量），HBM 略大（{hbm_gb}），扣除状态后剩 {left_gb}；但它的余量要小得多（{headroom_gb}），因为完整核算把 32K tokens 的激活值、损失的 fp32 logits、FSDP 聚合的层以及运行时预留都计入了同一块 HBM。</translation>
    </message>
    <message>
        <source>At {seq} tokens per sequence the forward pass&apos;s activations drop to {act} and its logits and loss to {logits}; the fullest rank needs {need} instead of {need32} at 32K, leaving {headroom}. Memory stops being a question, but the task has changed: every document longer than 8K tokens is cut, and the model never learns to reason across a whole long document, which is what the product needs. Shorten only when no layout fits 32K; here full sharding does.</source>
        <translation>每条序列 {seq} tokens 时，前向的激活值降到 {act}，其 logits 与损失降到 {logits}；最满的 rank 需要 {need}，而 32K 时需要 {need32}，余量 {headroom}。显存不再是问题，但任务已经变了：超过 8K tokens 的文档都会被截断，模型永远学不会跨越整篇长文档推理，而这正是产品所需要的。只有在没有任何布局能容纳 32K 时才截短；这里完全分片就能做到。</translation>
    </message>
</context>
<context>
    <name>MemoryExplanation</name>
    <message>
        <source>0 (parameters offloaded to host memory; gathered per layer)</source>
        <translation>0（参数已卸载到主机内存，逐层聚合）</translation>
    </message>
    <message>
        <source>%1 params on this rank x %2 B (%3) / %4 (dp x cp) = %5</source>
        <translation>本 rank 上 %1 个参数 x %2 B（%3）/ %4（dp x cp）= %5</translation>
    </message>
    <message>
        <source>%1 params on this rank x %2 B (%3) = %4</source>
        <translation>本 rank 上 %1 个参数 x %2 B（%3）= %4</translation>
    </message>
    <message>
        <source> + autocast %1 weight copies %2 (partly released)</source>
        <translation> + autocast 的 %1 权重副本 %2（部分已释放）</translation>
    </message>
    <message>
        <source> + autocast %1 weight copies %2</source>
        <translation> + autocast 的 %1 权重副本 %2</translation>
    </message>
    <message>
        <source>Layer weights split by tp = %1; norms replicated; embedding on this stage; final norm and LM head on this stage. </source>
        <translation>各层权重按 tp = %1 切分；norm 权重在各 rank 上复制；嵌入层在本阶段；最终 norm 与 LM head 在本阶段。</translation>
    </message>
    <message>
        <source>Layer weights split by tp = %1; norms replicated; embedding on this stage. </source>
        <translation>各层权重按 tp = %1 切分；norm 权重在各 rank 上复制；嵌入层在本阶段。</translation>
    </message>
    <message>
        <source>Layer weights split by tp = %1; norms replicated; final norm and LM head on this stage. </source>
        <translation>各层权重按 tp = %1 切分；norm 权重在各 rank 上复制；最终 norm 与 LM head 在本阶段。</translation>
    </message>
    <message>
        <source>Layer weights split by tp = %1; norms replicated. </source>
        <translation>各层权重按 tp = %1 切分；norm 权重在各 rank 上复制。</translation>
    </message>
    <message>
        <source>torch.autocast caches compute-dtype copies of the weights for forward; autograd frees them layer by layer in backward.</source>
        <translation>torch.autocast 在前向中缓存权重的计算精度副本；autograd 在反向中逐层释放它们。</translation>
    </message>
    <message>
        <source>%1 x %2 B / %3 (dp x cp) = %4</source>
        <translation>%1 个参数 x %2 B / %3（dp x cp）= %4</translation>
    </message>
    <message>
        <source>%1 x %2 B = %3</source>
        <translation>%1 个参数 x %2 B = %3</translation>
    </message>
    <message>
        <source>A persistent gradient buffer (%1) accumulates in place.</source>
        <translation>常驻的梯度缓冲区（%1）原地累加。</translation>
    </message>
    <message>
        <source>Gradients are created in backward and freed by zero_grad(set_to_none=True) after the step; with %1 micro-batches they persist across the step.</source>
        <translation>梯度在反向中创建，优化器步之后由 zero_grad(set_to_none=True) 释放；有 %1 个微批时，梯度在整个单步中一直保留。</translation>
    </message>
    <message>
        <source>Gradients are created in backward and freed by zero_grad(set_to_none=True) after the step.</source>
        <translation>梯度在反向中创建，优化器步之后由 zero_grad(set_to_none=True) 释放。</translation>
    </message>
    <message>
        <source> Gradients are offloaded to host memory.</source>
        <translation>梯度卸载到主机内存。</translation>
    </message>
    <message>
        <source>0: the optimizer updates the %1 parameters directly</source>
        <translation>0：优化器直接更新 %1 参数</translation>
    </message>
    <message>
        <source>%1 x %2 B (%3) / %4 (dp x cp) = %5</source>
        <translation>%1 个参数 x %2 B（%3）/ %4（dp x cp）= %5</translation>
    </message>
    <message>
        <source>%1 x %2 B (%3) = %4</source>
        <translation>%1 个参数 x %2 B（%3）= %4</translation>
    </message>
    <message>
        <source>Optimizer (master weights and states) offloaded to host.</source>
        <translation>优化器（主权重与状态）卸载到主机。</translation>
    </message>
    <message>
        <source>Sharded with the optimizer states (ZeRO-1 and up).</source>
        <translation>与优化器状态一同分片（ZeRO-1 及以上）。</translation>
    </message>
    <message>
        <source>Replicated on every data-parallel rank (no sharding).</source>
        <translation>在每个数据并行 rank 上各存一份（不分片）。</translation>
    </message>
    <message>
        <source>%1 x %2 states x %3 B / %4 (dp x cp) = %5</source>
        <translation>%1 个参数 x %2 个状态 x %3 B / %4（dp x cp）= %5</translation>
    </message>
    <message>
        <source>%1 x %2 states x %3 B = %4</source>
        <translation>%1 个参数 x %2 个状态 x %3 B = %4</translation>
    </message>
    <message>
        <source>%1: %2 state tensor(s) per parameter in %3.</source>
        <translation>%1：每个参数 %2 个状态张量，精度为 %3。</translation>
    </message>
    <message>
        <source>%1 layers x %2 B/token x %3 tokens x %4 micro-batch(es) in flight = %5</source>
        <translation>%1 层 x %2 B/token x %3 tokens x 同时在途的 %4 个微批 = %5</translation>
    </message>
    <message>
        <source> + final norm and head input %1</source>
        <translation> + 最终 norm 与 LM head 的输入 %1</translation>
    </message>
    <message>
        <source>Recompute %1 (each layer keeps only its input)</source>
        <translation>重计算：%1（每层只保留其输入）</translation>
    </message>
    <message>
        <source>Recompute %1</source>
        <translation>重计算：%1</translation>
    </message>
    <message>
        <source>; %1 attention (no s x s matrices kept)</source>
        <translation>；%1 注意力（不保存 s x s 矩阵）</translation>
    </message>
    <message>
        <source>; %1 attention (fp32 softmax and its cast kept per score)</source>
        <translation>；%1 注意力（每个得分保存 fp32 softmax 及其类型转换结果）</translation>
    </message>
    <message>
        <source>; norm %1</source>
        <translation>；归一化：%1</translation>
    </message>
    <message>
        <source>; fp32 residual stream under autocast</source>
        <translation>；autocast 下残差流为 fp32</translation>
    </message>
    <message>
        <source>; sequence-parallel regions split by tp</source>
        <translation>；序列并行区域按 tp 切分</translation>
    </message>
    <message>
        <source>; sequence split by cp = %1</source>
        <translation>；序列按 cp = %1 切分</translation>
    </message>
    <message>
        <source>%1 tokens x %2 vocab x %3 B = %4</source>
        <translation>%1 tokens x 词表 %2 x %3 B = %4</translation>
    </message>
    <message>
        <source>Hugging Face loss: logits in the compute dtype, an fp32 copy and the fp32 log-softmax at the end of forward; three fp32 vocab-sized tensors in the loss backward.</source>
        <translation>Hugging Face 损失：前向结束时有计算精度的 logits、一份 fp32 副本和 fp32 log-softmax；损失的反向中有三个词表大小的 fp32 张量。</translation>
    </message>
    <message>
        <source>Fused vocab-parallel cross entropy: fp32 logits turned into the softmax in place and reused as the gradient.</source>
        <translation>融合的词表并行交叉熵：fp32 logits 原地转为 softmax，并复用为梯度。</translation>
    </message>
    <message>
        <source>0: the LM head is on the last pipeline stage</source>
        <translation>0：LM head 在最后一个流水线阶段上</translation>
    </message>
    <message>
        <source>DDP gradient buckets %1</source>
        <translation>DDP 梯度桶 %1</translation>
    </message>
    <message>
        <source>gathered layers %1</source>
        <translation>已聚合的层 %1</translation>
    </message>
    <message>
        <source>gathered layers and unsharded layer gradients %1</source>
        <translation>已聚合的层与未分片的层梯度 %1</translation>
    </message>
    <message>
        <source>gathered root (embedding, head) %1</source>
        <translation>已聚合的根模块（嵌入层、LM head）%1</translation>
    </message>
    <message>
        <source>pipeline send/recv %1</source>
        <translation>流水线 send/recv %1</translation>
    </message>
    <message>
        <source>reduce bucket %1</source>
        <translation>reduce 桶 %1</translation>
    </message>
    <message>
        <source>DDP (gradient_as_bucket_view=False) keeps flat bucket copies of every gradient for its all-reduce. </source>
        <translation>DDP（gradient_as_bucket_view=False）为 all-reduce 保留每个梯度的扁平桶副本。</translation>
    </message>
    <message>
        <source>FSDP gathers %1 layers at a time (current + prefetch) in the compute dtype; backward adds the layer&apos;s unsharded gradients and the reduce-scatter input; the root module (embedding, final norm, head) stays gathered from forward to backward (FSDP2). </source>
        <translation>FSDP 每次以计算精度聚合 %1 层（当前层 + 预取）；反向中另有该层未分片的梯度和 reduce-scatter 的输入；根模块（嵌入层、最终 norm、LM head）从前向到反向一直保持聚合（FSDP2）。</translation>
    </message>
    <message>
        <source>FSDP gathers %1 layers at a time (current + prefetch) in the compute dtype; backward adds the layer&apos;s unsharded gradients and the reduce-scatter input. </source>
        <translation>FSDP 每次以计算精度聚合 %1 层（当前层 + 预取）；反向中另有该层未分片的梯度和 reduce-scatter 的输入。</translation>
    </message>
    <message>
        <source>Pipeline stages double-buffer the activations they send and receive. </source>
        <translation>流水线各阶段对收发的激活值使用双缓冲。</translation>
    </message>
    <message>
        <source>ZeRO-1/2 reduce gradients through buckets of %1. </source>
        <translation>ZeRO-1/2 通过 %1 的桶归约梯度。</translation>
    </message>
    <message>
        <source>optimizer temporaries (%1) %2</source>
        <translation>优化器临时张量（%1）%2</translation>
    </message>
    <message>
        <source>layer backward working set %1</source>
        <translation>层反向工作集 %1</translation>
    </message>
    <message>
        <source>forward working set %1</source>
        <translation>前向工作集 %1</translation>
    </message>
    <message>
        <source>Gradients of the FFN intermediates and the residual, flash attention&apos;s dq/dk/dv with an fp32 dq accumulator, the recomputed layer under full recompute.</source>
        <translation>FFN 中间结果与残差的梯度、flash 注意力的 dq/dk/dv 及其 fp32 dq 累加器、完全重计算时重算的层。</translation>
    </message>
    <message>
        <source>foreach: the step materializes sqrt(exp_avg_sq) (Adam) or the update for all parameters at once.</source>
        <translation>foreach：优化器步一次性为所有参数生成 sqrt(exp_avg_sq)（Adam）或更新量。</translation>
    </message>
    <message>
        <source>fused: the step updates in place, no temporaries.</source>
        <translation>fused：优化器步原地更新，没有临时张量。</translation>
    </message>
    <message>
        <source>for_loop: two temporaries of the largest tensor.</source>
        <translation>for_loop：两个与最大张量同样大小的临时张量。</translation>
    </message>
    <message>
        <source>; held at the forward peak: %1</source>
        <translation>；在前向峰值时占用 %1</translation>
    </message>
    <message>
        <source>; held at the backward peak: %1</source>
        <translation>；在反向峰值时占用 %1</translation>
    </message>
    <message>
        <source>; held at the optimizer_step peak: %1</source>
        <translation>；在优化器步峰值时占用 %1</translation>
    </message>
    <message>
        <source>%1 k-bit weights (%2, %3 B each with their constants) + %4 other frozen params in fp32 + %5 adapter params x %6 B + %7 trained params x %8 B</source>
        <translation>%1 个 k 比特权重（%2，含量化常数每个 %3 B）+ %4 个其他冻结参数（fp32）+ %5 个适配器参数 x %6 B + %7 个训练参数 x %8 B</translation>
    </message>
    <message>
        <source>%1 frozen params x %2 B (%3) + %4 adapter params x %5 B + %6 trained params x %7 B</source>
        <translation>%1 个冻结参数 x %2 B（%3）+ %4 个适配器参数 x %5 B + %6 个训练参数 x %7 B</translation>
    </message>
    <message>
        <source>, all / %1 (dp x cp) = %2</source>
        <translation>，全部 / %1（dp x cp）= %2</translation>
    </message>
    <message>
        <source> = %1</source>
        <translation> = %1</translation>
    </message>
    <message>
        <source>DoRA rank %1 on %2: the base stays frozen; each adapted linear gains A (r x in), B (out x r) and a magnitude vector, split like the layer under TP. </source>
        <translation>DoRA 秩 %1，作用于 %2：基座保持冻结；每个被适配的线性层增加 A（r x in）、B（out x r）和一个幅度向量，在 TP 下与该层同样切分。</translation>
    </message>
    <message>
        <source>LoRA rank %1 on %2: the base stays frozen; each adapted linear gains A (r x in) and B (out x r), split like the layer under TP. </source>
        <translation>LoRA 秩 %1，作用于 %2：基座保持冻结；每个被适配的线性层增加 A（r x in）和 B（out x r），在 TP 下与该层同样切分。</translation>
    </message>
    <message>
        <source>bitsandbytes stores the frozen linear weights k-bit; prepare_model_for_kbit_training casts norms, biases, embedding and head to fp32. </source>
        <translation>bitsandbytes 以 k 比特存储冻结的线性层权重；prepare_model_for_kbit_training 将归一化层、偏置、嵌入层和输出头转换为 fp32。</translation>
    </message>
    <message>
        <source>modules_to_save: the original stays frozen and a trained copy is kept beside it. </source>
        <translation>modules_to_save：原模块保持冻结，另保留一份参与训练的副本。</translation>
    </message>
    <message>
        <source>Freezing: the last %1 layers are trained whole; the rest keep their weights without gradients or optimizer states. </source>
        <translation>冻结训练：最后 %1 层整体训练；其余层只保留权重，没有梯度和优化器状态。</translation>
    </message>
    <message>
        <source> A frozen linear keeps its weight, not its input, for backward; each adapter keeps its input (cast to the adapter dtype, or dropped with its mask) and its rank-wide intermediate; frozen layers below every trained one record nothing unless gradient checkpointing makes the embedding output require grad.</source>
        <translation> 冻结的线性层反向时只需要权重，不保存输入；每个适配器保存其输入（转换为适配器数据类型，或经 dropout 后连同掩码）以及秩宽度的中间结果；位于所有训练层之下的冻结层不记录任何张量，除非梯度检查点使嵌入输出需要梯度。</translation>
    </message>
    <message>
        <source>chunks of %1 tokens x %2 vocab x %3 B, and the gradients of the head input (and of a trained head weight) made in forward = %4</source>
        <translation>每块 %1 个 token x %2 词表 x %3 B，以及在前向中求得的输出头输入梯度（和被训练的输出头权重梯度）= %4</translation>
    </message>
    <message>
        <source>Fused linear cross entropy (Liger, Cut Cross-Entropy): the head and the loss run chunk by chunk and the full logits never exist.</source>
        <translation>融合线性交叉熵（Liger、Cut Cross-Entropy）：输出头与损失逐块计算，完整的 logits 从不出现。</translation>
    </message>
    <message>
        <source>Chunked cross entropy (torchtune, %1 chunks): the logits in the compute dtype, each chunk upcast to fp32 on its own; the chunks&apos; fp32 log-softmax is kept for backward.</source>
        <translation>分块交叉熵（torchtune，%1 块）：logits 为计算精度，每块单独提升为 fp32；各块的 fp32 log-softmax 保留至反向。</translation>
    </message>
    <message>
        <source>0: SGD without momentum keeps no state</source>
        <translation>0：不带动量的 SGD 不保存状态</translation>
    </message>
    <message>
        <source>a row and a column per matrix (%1) + %2 vector elements, x %3 B = %4</source>
        <translation>每个矩阵一行一列（%1）+ %2 个向量元素，x %3 B = %4</translation>
    </message>
    <message>
        <source>%1 x 2 states x (1 B + an fp32 absmax per 2048) = %2</source>
        <translation>%1 x 2 个状态 x（1 B + 每 2048 个一个 fp32 absmax）= %2</translation>
    </message>
    <message>
        <source>0 at the peak: %1 of paged states live in host-backed memory and page in for the step</source>
        <translation>峰值时为 0：%1 的分页状态位于主机后备内存中，优化器步时按页调入</translation>
    </message>
    <message>
        <source>%1 matrix elements x 1 momentum + %2 others x 2 AdamW states, x %3 B = %4</source>
        <translation>%1 个矩阵元素 x 1 个动量 + %2 个其他元素 x 2 个 AdamW 状态，x %3 B = %4</translation>
    </message>
    <message>
        <source>, sharded over %1 (dp x cp)</source>
        <translation>，在 %1（dp x cp）上分片</translation>
    </message>
    <message>
        <source>reuse-fp32-param: the bf16 parameters live in the fp32 master copy&apos;s memory, 2 B per parameter less (/ dp with the distributed optimizer). </source>
        <translation>reuse-fp32-param：bf16 参数存放在 fp32 主副本的内存中，每个参数少 2 B（使用分布式优化器时再除以 dp）。</translation>
    </message>
    <message>
        <source>Routed experts: %1 of %2 per rank (ep = %3), each split by etp = %4; their states shard over %5 expert-data-parallel ranks. </source>
        <translation>路由专家：每个 rank 持有 %2 个中的 %1 个（ep = %3），每个按 etp = %4 切分；其状态在 %5 个专家数据并行 rank 上分片。</translation>
    </message>
    <message>
        <source>MLA&apos;s down-projections and latent norms are duplicated on every TP rank. </source>
        <translation>MLA 的降维投影与潜变量归一化在每个 TP rank 上各存一份。</translation>
    </message>
    <message>
        <source>The learned position table (%1 rows) is on this stage, replicated across TP. </source>
        <translation>可学习位置表（%1 行）位于本阶段，在 TP 间复制。</translation>
    </message>
    <message>
        <source>%1 MTP module(s) on this stage, %2 params each on this rank (routed experts split by ep; embedding and head shared with the model). </source>
        <translation>本阶段有 %1 个 MTP 模块，每个在本卡上 %2 个参数（路由专家按 ep 切分；嵌入与输出头与主模型共享）。</translation>
    </message>
    <message>
        <source> + final norm, head input and %1 MTP module(s) %2</source>
        <translation> + 最终归一化、输出头输入与 %1 个 MTP 模块 %2</translation>
    </message>
    <message>
        <source>; LayerNorm (its input and fp32 mean and rstd per token)</source>
        <translation>；LayerNorm（保存输入及每个 token 的 fp32 均值与 rstd）</translation>
    </message>
    <message>
        <source>; multi-head latent attention: the latents (q %1, kv %2) and their norms on every TP rank, q and k of %3 and v of %4 per head</source>
        <translation>；多头潜在注意力：潜变量（q %1、kv %2）及其归一化在每个 TP rank 上，每个头的 q、k 宽 %3，v 宽 %4</translation>
    </message>
    <message>
        <source>; QK norms save q and k before RoPE</source>
        <translation>；QK 归一化保存 RoPE 之前的 q 与 k</translation>
    </message>
    <message>
        <source>; MoE in %1 of this stage&apos;s %2 layers: %3 routed copies per token (top_k %4 x load %5, gathered over etp under SP) keep the expert&apos;s input, intermediates and output; the router keeps fp32 probabilities</source>
        <translation>；本阶段 %2 层中有 %1 层为 MoE：每个 token %3 份路由副本（top_k %4 × 负载 %5，SP 下在 etp 组内汇集）保存专家的输入、中间结果与输出；路由器保存 fp32 概率</translation>
    </message>
    <message>
        <source> and an fp32 copy of its input</source>
        <translation> 及其输入的 fp32 副本</translation>
    </message>
    <message>
        <source>; %1 shared expert(s) of width %2 like a dense FFN</source>
        <translation>；%1 个宽度为 %2 的共享专家，按稠密 FFN 计</translation>
    </message>
    <message>
        <source>; capacity factor %1: the busiest rank assumed at the cap</source>
        <translation>；容量因子 %1：假定最忙的 rank 达到上限</translation>
    </message>
    <message>
        <source>; dropless routing assumed balanced (set model.moe.imbalance for the busiest rank&apos;s margin)</source>
        <translation>；无丢弃路由按均衡假定（用 model.moe.imbalance 设置最忙 rank 的余量）</translation>
    </message>
    <message>
        <source>; dropout hidden %1 (a one-byte mask after attention and after the FFN), attention %2 (flash attention keeps only its RNG state)</source>
        <translation>；dropout：隐藏层 %1（注意力与 FFN 之后各一个单字节掩码），注意力 %2（flash attention 只保存其随机数状态）</translation>
    </message>
    <message>
        <source>; dropout hidden %1 (a one-byte mask after attention and after the FFN), attention %2 (a one-byte mask per score)</source>
        <translation>；dropout：隐藏层 %1（注意力与 FFN 之后各一个单字节掩码），注意力 %2（每个分数一个单字节掩码）</translation>
    </message>
    <message>
        <source>; dropout off</source>
        <translation>；不使用 dropout</translation>
    </message>
    <message>
        <source>. Tokens per micro-batch on this rank: seq_len x micro_batch / cp.</source>
        <translation>。本 rank 每个微批次的 token 数：seq_len × micro_batch / cp。</translation>
    </message>
    <message>
        <source> The token dispatcher (%1) holds %2 hidden states per token while tokens travel: %3.</source>
        <translation> token 分发器（%1）在 token 传输期间每个 token 持有 %2 份隐藏状态：%3。</translation>
    </message>
    <message>
        <source>(%1 dense params / %2 (dp x cp) + %3 expert params / %4 (expert dp)) x %5 B (%6) = %7</source>
        <translation>（%1 个稠密参数 / %2 (dp x cp) + %3 个专家参数 / %4（专家数据并行））× %5 B（%6）= %7</translation>
    </message>
    <message>
        <source>(%1 dense / %2 (dp x cp) + %3 expert / %4 (expert dp)) x %5 B = %6</source>
        <translation>（%1 稠密 / %2 (dp x cp) + %3 专家 / %4（专家数据并行））× %5 B = %6</translation>
    </message>
    <message>
        <source>(%1 dense / %2 (dp x cp) + %3 expert / %4 (expert dp)) x %5 B (%6) = %7</source>
        <translation>（%1 稠密 / %2 (dp x cp) + %3 专家 / %4（专家数据并行））× %5 B（%6）= %7</translation>
    </message>
    <message>
        <source>(%1 dense / %2 (dp x cp) + %3 expert / %4 (expert dp)) x %5 states x %6 B = %7</source>
        <translation>（%1 稠密 / %2 (dp x cp) + %3 专家 / %4（专家数据并行））× %5 个状态 × %6 B = %7</translation>
    </message>
    <message>
        <source>; sequence split by cp = %1, attention by heads (Ulysses: the same bytes saved as the ring)</source>
        <translation>；序列按 cp = %1 切分，注意力按头切分（Ulysses：保存的字节数与环形相同）</translation>
    </message>
    <message>
        <source>; sequence split by cp = %1: heads over Ulysses groups of %2, a ring of %3 across them</source>
        <translation>；序列按 cp = %1 切分：在 %2 个 rank 的 Ulysses 组内按头切分，组间为 %3 个 rank 的环</translation>
    </message>
    <message>
        <source> Ring attention double-buffers the K/V block arriving from its neighbour (the K/V and dK/dV blocks in backward).</source>
        <translation> 环形注意力为来自相邻 rank 的 K/V 块做双缓冲（反向时为 K/V 与 dK/dV 块）。</translation>
    </message>
    <message>
        <source> Ulysses&apos; all-to-alls hold q, k, v (and the output) in both layouts while they exchange them.</source>
        <translation> Ulysses 的 all-to-all 在交换期间同时持有 q、k、v（及输出）的两种布局。</translation>
    </message>
    <message>
        <source>HSDP: the sharded states are split over dp_shard x cp = %1 ranks and replicated over %2 groups (the formulas&apos; dp x cp is that shard group). </source>
        <translation>HSDP：分片状态切分在 dp_shard × cp = %1 个 rank 上，并在 %2 个组之间复制（公式中的 dp x cp 即为该分片组）。</translation>
    </message>
    <message>
        <source>, method block: the first %1 of each chunk&apos;s %2 layers recomputed, the others keep everything</source>
        <translation>，方法 block：每个模型块的 %2 层中前 %1 层重计算，其余层全部保留</translation>
    </message>
    <message>
        <source>, method uniform: groups of %1 layers, one input kept per group, a group recomputed at once</source>
        <translation>，方法 uniform：每 %1 层为一组，每组只保留一个输入，整组一起重计算</translation>
    </message>
    <message>
        <source>; the FFN activation recomputed (its output not kept)</source>
        <translation>；FFN 激活函数重计算（不保留其输出）</translation>
    </message>
    <message>
        <source>; the norms recomputed (their outputs not kept)</source>
        <translation>；归一化重计算（不保留其输出）</translation>
    </message>
    <message>
        <source>Vocabulary padded from %1 to %2 (a multiple of %3 x tp = %4: --make-vocab-size-divisible-by). </source>
        <translation>词表从 %1 填充到 %2（%3 x tp = %4 的倍数：--make-vocab-size-divisible-by）。</translation>
    </message>
    <message>
        <source>Megatron-Core&apos;s contiguous param buffer (param_data, %1): %2 bucket(s), each end padded to a multiple of lcm(dp x cp, 128) = %3, each parameter aligned to 64 elements: %4 padding elements included. </source>
        <translation>Megatron-Core 的连续参数缓冲区（param_data，%1）：%2 个桶，每个桶末尾填充到 lcm(dp x cp, 128) = %3 的倍数，每个参数按 64 个元素对齐：含 %4 个填充元素。</translation>
    </message>
    <message>
        <source> grad_data has the param buffer&apos;s layout (%1 padding elements included); each bucket is reduce-scattered in place into the rank&apos;s shard of it, so there is no separate reduce bucket.</source>
        <translation> grad_data 与参数缓冲区布局相同（含 %1 个填充元素）；每个桶原地 reduce-scatter 到本 rank 的分片中，因此没有单独的归约桶。</translation>
    </message>
    <message>
        <source> The distributed optimizer owns 1/%1 of every bucket; the fullest rank&apos;s shard holds %2 parameter elements (%3 above an even split; padding gets no master copy or states).</source>
        <translation> 分布式优化器拥有每个桶的 1/%1；最满的 rank 的分片含 %2 个参数元素（比均分多 %3；填充部分没有主副本和状态）。</translation>
    </message>
    <message>
        <source> The logits span the padded vocabulary (%1, not %2).</source>
        <translation> logits 覆盖填充后的词表（%1，而非 %2）。</translation>
    </message>
    <message>
        <source>MindSpeed&apos;s --param-and-grad-buffer-pad %1: every shard of a bucket starts on %1 bytes. </source>
        <translation>MindSpeed 的 --param-and-grad-buffer-pad %1：桶的每个分片都从 %1 字节对齐处开始。</translation>
    </message>
    <message>
        <source>This stage holds %1 of the %2 decoder layers (uneven layout: %3). </source>
        <translation>此阶段承载 %2 个解码层中的 %1 个（非均匀划分：%3）。</translation>
    </message>
    <message>
        <source>%1 communicators x %2 (the device profile&apos;s per-communicator buffers) = %3</source>
        <translation>%1 个通信域 x %2（设备配置中每个通信域的缓冲区）= %3</translation>
    </message>
    <message>
        <source>; NCCL: MindSpeed&apos;s per-group HCCL buffers do not apply.</source>
        <translation>；NCCL：MindSpeed 的按通信组 HCCL 缓冲区设置不适用。</translation>
    </message>
    <message>
        <source>HCCL buffers per communication group: %1 = %2</source>
        <translation>各通信组的 HCCL 缓冲区：%1 = %2</translation>
    </message>
    <message>
        <source>; each communicator holds an input and an output buffer of its group&apos;s size (HCCL_BUFFSIZE %1 unless MindSpeed&apos;s --hccl-group-buffer or --hccl-group-buffer-adaptive sets it).</source>
        <translation>；每个通信域持有一个输入缓冲区和一个输出缓冲区，大小为该组的缓冲区大小（除非 MindSpeed 的 --hccl-group-buffer 或 --hccl-group-buffer-adaptive 另行设置，否则为 HCCL_BUFFSIZE %1）。</translation>
    </message>
    <message>
        <source>ZeRO++ hpZ: a secondary copy of the parameters, %1 params / %2 (zero_hpz_partition_size) x %3 B = %4, included; made as the first forward releases each layer, dropped after the optimizer step. </source>
        <translation>ZeRO++ hpZ：参数的二级副本，%1 个参数 / %2（zero_hpz_partition_size）x %3 B = %4，已计入；在第一次前向释放各层时创建，在优化器步之后丢弃。</translation>
    </message>
    <message>
        <source> MindSpeed swap-attention: %1 per layer (what the input norm, attention and post-attention norm save) waits on the host between the layer&apos;s forward and its backward; on the device only the running layer&apos;s, counted as working memory.</source>
        <translation> MindSpeed swap-attention：每层 %1（输入 norm、注意力与注意力后 norm 保存的张量）在该层前向与反向之间存放在主机上；设备上只有正在运行的那一层的这部分，计入工作内存。</translation>
    </message>
    <message>
        <source>%1 tokens x %2 vocab x %3 B = %4 while the loss runs; %5 of it at this phase&apos;s peak, which comes after it</source>
        <translation>%1 tokens x 词表 %2 x %3 B = %4（损失计算期间）；本阶段峰值在其之后，届时仍占 %5</translation>
    </message>
    <message>
        <source>(%1 model chunk(s) in flight + 1) x one layer&apos;s %2 B/token x %3 tokens = %4</source>
        <translation>（在途模型块 %1 个 + 1）x 每层 %2 B/token x %3 tokens = %4</translation>
    </message>
    <message>
        <source> Activations offloaded to host; each model chunk in flight keeps its last layer&apos;s on the device until its backward, and the one running one layer more.</source>
        <translation>激活值卸载到主机；每个在途模型块的最后一层激活值留在设备上直到其反向，正在运行的模型块再多留一层。</translation>
    </message>
    <message>
        <source> + the embedding&apos;s dropout mask, %1 B/token (%2 per micro-batch until its embedding backward)</source>
        <translation> + 嵌入层 dropout 掩码，%1 B/token（每个 micro-batch %2，保留到其嵌入层反向）</translation>
    </message>
    <message>
        <source>; run in the (b, s) layout: its output kept for its backward and a copy in (s, b) kept by the output projection</source>
        <translation>；在 (b, s) 布局中运行：其输出为自身反向保留，输出投影另保留一份 (s, b) 布局的副本</translation>
    </message>
    <message>
        <source>; SwiGLU fused (keeps gate|up and its output)</source>
        <translation>；SwiGLU 融合（保存 gate|up 及其输出）</translation>
    </message>
    <message>
        <source>; SwiGLU unfused (keeps gate, up, silu(gate) and the product)</source>
        <translation>；SwiGLU 未融合（保存 gate、up、silu(gate) 及其乘积）</translation>
    </message>
    <message>
        <source>Vocab-parallel cross entropy as Megatron-LM ran it before 2024-06: the maximum subtracted out of place, so the logits, their fp32 copy and the shifted fp32 tensor exist at once; the shifted tensor becomes the softmax and the gradient.</source>
        <translation>Megatron-LM 在 2024-06 之前的词表并行交叉熵：最大值以非原地方式减去，因此 logits、其 fp32 副本和减去最大值后的 fp32 张量同时存在；减去最大值后的张量随后变为 softmax 和梯度。</translation>
    </message>
    <message>
        <source>; sequence split by cp = %1, attention by heads (Ulysses)</source>
        <translation>；序列按 cp = %1 切分，注意力按头切分（Ulysses）</translation>
    </message>
    <message>
        <source>; K and V repeated from %1 to %2 heads per TP rank before Ulysses&apos; all-to-all (MindSpeed-LLM&apos;s --kv-head-repeat-before-uly-alltoall): attention keeps them at the query width</source>
        <translation>；在 Ulysses 的 all-to-all 之前，每个 TP rank 上的 K 和 V 从 %1 个头重复到 %2 个头（MindSpeed-LLM 的 --kv-head-repeat-before-uly-alltoall）：注意力按查询宽度保存它们</translation>
    </message>
    <message>
        <source>; torch_npu&apos;s npu_fusion_attention keeps its softmax max and sum for backward, 8 fp32 values each per head and token (%1 B), where CUDA&apos;s flash kernels keep one fp32 log-sum-exp</source>
        <translation>；torch_npu 的 npu_fusion_attention 为反向保存其 softmax 最大值与和，每个头每个 token 各 8 个 fp32 值（%1 B），而 CUDA 的 flash 内核只保存一个 fp32 log-sum-exp</translation>
    </message>
    <message>
        <source> + GEMM workspaces %1 x %2 + Transformer Engine&apos;s %3</source>
        <translation> + GEMM 工作区 %1 x %2 + Transformer Engine 自有的 %3</translation>
    </message>
    <message>
        <source> + GEMM workspaces %1 x %2</source>
        <translation> + GEMM 工作区 %1 x %2</translation>
    </message>
    <message>
        <source> PyTorch keeps a cuBLAS workspace in its caching allocator for each handle and stream that ran a GEMM, allocated once and never freed: the forward&apos;s thread and autograd&apos;s backward thread hold one each (CUBLAS_WORKSPACE_CONFIG&apos;s default for the device).</source>
        <translation> PyTorch 在缓存分配器中为每个执行过 GEMM 的 cuBLAS 句柄与流保留一个工作区，只分配一次、从不释放：前向所在线程与 autograd 的反向线程各持有一个（大小为该设备上 CUBLAS_WORKSPACE_CONFIG 的默认值）。</translation>
    </message>
    <message>
        <source> Transformer Engine keeps one more workspace of its own.</source>
        <translation> Transformer Engine 另外保留一个自己的工作区。</translation>
    </message>
    <message>
        <source>sequence-parallel all-gather buffer %1</source>
        <translation>序列并行 all-gather 缓冲区 %1</translation>
    </message>
    <message>
        <source>Megatron&apos;s local tensor-parallel linears all-gather their sequence-parallel input (tokens x hidden) into one global memory buffer, kept for the run and used again for the weight gradients. </source>
        <translation>Megatron 的本地张量并行线性层把序列并行的输入（tokens x hidden）all-gather 到同一个全局内存缓冲区，整个运行期间保留，计算权重梯度时再次使用。</translation>
    </message>
    <message>
        <source> Sequence parallelism all-gathers each column-parallel linear&apos;s input into a fresh tensor (%1), in forward and again for the weight gradient.</source>
        <translation> 序列并行把每个列并行线性层的输入 all-gather 到一个新分配的张量（%1），前向一次，计算权重梯度时再一次。</translation>
    </message>
    <message>
        <source>; before it, the gradient clip&apos;s scaled copy of the largest gradient %1</source>
        <translation>；其前，梯度裁剪对最大梯度的缩放副本 %1</translation>
    </message>
    <message>
        <source>; after it, the largest master parameter&apos;s copy %1</source>
        <translation>；其后，最大主参数的拷贝 %1</translation>
    </message>
    <message>
        <source>Without apex (Ascend), Megatron&apos;s multi_tensor_scale is dst.copy_(src * scale): the gradient clip (when the gradient norm exceeds --clip-grad, assumed here) and, without the distributed optimizer, the copy of the master parameters into the model make a scaled copy of one tensor at a time, the largest as Megatron-Core fuses them (linear_qkv, linear_fc1, the embedding and the output layer). </source>
        <translation>没有 apex（昇腾）时，Megatron 的 multi_tensor_scale 为 dst.copy_(src * scale)：梯度裁剪（梯度范数超过 --clip-grad 时，此处假定如此）以及未使用分布式优化器时主参数拷回模型，都会逐个张量生成缩放副本，最大者按 Megatron-Core 的融合方式计（linear_qkv、linear_fc1、词嵌入与输出层）。</translation>
    </message>
    <message>
        <source>the model chunks&apos; last inputs and their gradients %1</source>
        <translation>各模型块保留的最后输入及其梯度 %1</translation>
    </message>
    <message>
        <source>Megatron receives each micro-batch&apos;s input into a fresh tensor and hands it to the model chunk (set_input_tensor), which keeps it; backward fills its gradient to send back. After the step each of the %1 chunks of this stage that receive their input keeps the last one and its gradient (%2) until its next forward. </source>
        <translation>Megatron 将每个微批次的输入接收到新张量中并交给模型块（set_input_tensor），模型块保留该张量；反向计算填入其梯度以回传。训练步结束后，本阶段接收输入的 %1 个模型块各自保留最后一个输入及其梯度（%2），直到下一次前向。</translation>
    </message>
    <message>
        <source>%1 layers x %2 B/token on average x %3 tokens, each model chunk&apos;s for its micro-batches in flight (%4) with its first %5 layer(s) recomputed = %6</source>
        <translation>%1 层 x 平均 %2 B/token x %3 tokens，每个模型块按其在途微批数（%4）计，各自前 %5 层重计算 = %6</translation>
    </message>
    <message>
        <source>, method block per pipeline rank (MindSpeed&apos;s --enable-recompute-layers-per-pp-rank): %1 of the stage&apos;s %2 layers recomputed, layer l of chunk c being the (l x %3 + c)-th, the others keep everything</source>
        <translation>，方法 block 按流水线阶段计数（MindSpeed 的 --enable-recompute-layers-per-pp-rank）：重计算该阶段 %2 层中的 %1 层，模型块 c 的第 l 层排第 (l x %3 + c) 位，其余层保留全部激活</translation>
    </message>
    <message>
        <source>MindSpeed-LLM adapts Megatron-Core&apos;s fused modules: linear_qkv (q, k and v share one A) and linear_fc1 (gate and up share one A); their gradients are in the main-gradient buffer. </source>
        <translation>MindSpeed-LLM 在 Megatron-Core 的融合模块上加适配器：linear_qkv（q、k、v 共用一个 A）与 linear_fc1（gate 与 up 共用一个 A）；其梯度位于主梯度缓冲区中。</translation>
    </message>
    <message>
        <source>; RoPE (npu_rotary_mul) keeps the q and k it rotates (k a view of the whole q/k/v projection) and its cos and sin: %1 B/token</source>
        <translation>；RoPE（npu_rotary_mul）保留其旋转的 q 与 k（k 是整个 q/k/v 投影输出的视图）以及 cos 与 sin：%1 B/token</translation>
    </message>
    <message>
        <source>; RoPE keeps the cos and sin it makes for q and for k in each layer: %1 B/token</source>
        <translation>；RoPE 在每层为 q 和 k 各自生成并保留 cos 与 sin：%1 B/token</translation>
    </message>
    <message>
        <source>; after it, reuse-fp32-param&apos;s conversion of the master buffer back to bf16 and residuals %1</source>
        <translation>；其后，reuse-fp32-param 将主参数缓冲区转换回 bf16 与残差 %1</translation>
    </message>
    <message>
        <source>MindSpeed&apos;s reuse-fp32-param turns the buffer it shares between the fp32 master and the bf16 parameters into fp32 before the step and back after it by transposing a bf16 view into a contiguous copy: parameter by parameter (4 B per element of the largest) with one rank in the optimizer&apos;s data-parallel group, else block by block through a 64 MiB workspace. </source>
        <translation>MindSpeed 的 reuse-fp32-param 在优化器步之前把 fp32 主参数与 bf16 参数共享的缓冲区转换为 fp32，之后再转换回来，方法是把一个 bf16 视图转置为连续副本：优化器数据并行组只有一个 rank 时逐个参数进行（最大参数每个元素 4 B），否则经由 64 MiB 工作区逐块进行。</translation>
    </message>
</context>
<context>
    <name>PdfReport</name>
    <message>
        <source>ShardScope plan report</source>
        <translation>ShardScope 方案报告</translation>
    </message>
    <message numerus="yes">
        <source>%n plan(s); ShardScope %1; generated %2.</source>
        <translation>
            <numerusform>%n 个方案；ShardScope %1；生成于 %2。</numerusform>
        </translation>
    </message>
    <message>
        <source>ShardScope %1 plan report, generated %2</source>
        <translation>ShardScope %1 方案报告，生成于 %2</translation>
    </message>
    <message>
        <source>Page %1</source>
        <translation>第 %1 页</translation>
    </message>
    <message numerus="yes">
        <source>Comparison of %n plans</source>
        <translation>
            <numerusform>%n 个方案对比</numerusform>
        </translation>
    </message>
    <message>
        <source>Each bar is the fullest rank of a plan at its peak, with the runtime reserve hatched. The solid line is the HBM capacity, the dashed line what remains usable after the largest runtime reserve.</source>
        <translation>每根柱表示一个方案中最满的 rank 在其峰值时的占用，斜线部分为运行时预留。实线为 HBM 容量，虚线为扣除最大运行时预留后仍可用的容量。</translation>
    </message>
    <message>
        <source>Verdict</source>
        <translation>结论</translation>
    </message>
    <message>
        <source>Layout</source>
        <translation>并行布局</translation>
    </message>
    <message>
        <source>Tokens</source>
        <translation>Tokens</translation>
    </message>
    <message>
        <source>Memory options</source>
        <translation>显存选项</translation>
    </message>
    <message>
        <source>Device</source>
        <translation>设备</translation>
    </message>
    <message>
        <source>Peak allocated</source>
        <translation>峰值分配</translation>
    </message>
    <message>
        <source>Runtime reserve</source>
        <translation>运行时预留</translation>
    </message>
    <message>
        <source>Total on device</source>
        <translation>设备上合计</translation>
    </message>
    <message>
        <source>Headroom</source>
        <translation>余量</translation>
    </message>
    <message>
        <source>over by %1</source>
        <translation>超出 %1</translation>
    </message>
    <message>
        <source>Step time</source>
        <translation>单步时间</translation>
    </message>
    <message>
        <source>not estimated</source>
        <translation>未估计</translation>
    </message>
    <message>
        <source>Tokens/s</source>
        <translation>tokens/s</translation>
    </message>
    <message>
        <source>MFU</source>
        <translation>MFU</translation>
    </message>
    <message>
        <source>Memory of the fullest rank of each plan at its peak phase. GiB = 2^30 bytes.</source>
        <translation>各方案最满 rank 在其峰值阶段的显存。GiB = 2^30 字节。</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
    <message>
        <source>Every rank fits. The fullest (%1) needs %2 allocated at its peak in %3 plus %4 runtime reserve: %5 of %6 HBM, leaving %7.</source>
        <translation>所有 rank 均可容纳。最满的（%1）在%3峰值时分配 %2，另加运行时预留 %4：共 %5，HBM 为 %6，余量 %7。</translation>
    </message>
    <message>
        <source>%1 need %2 allocated at the peak in %3 plus %4 runtime reserve: %5 of %6 HBM, over by %7.</source>
        <translation>%1 在%3峰值时需分配 %2，另加运行时预留 %4：共 %5，HBM 仅 %6，超出 %7。</translation>
    </message>
    <message>
        <source>Plan</source>
        <translation>方案</translation>
    </message>
    <message>
        <source>%1, %2 parameters: %3 layers, hidden %4, %5 heads (%6 KV), FFN %7 (%8), vocabulary %9</source>
        <translation>%1，%2 个参数：%3 层，隐藏维度 %4，%5 个注意力头（%6 个 KV 头），FFN %7（%8），词表 %9</translation>
    </message>
    <message>
        <source>%1 experts, top-%2, expert FFN %3</source>
        <translation>%1 个专家，top-%2，专家 FFN %3</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Precision</source>
        <translation>精度</translation>
    </message>
    <message>
        <source>parameters %1, gradients %2, master weights %3, %4 states %5, compute %6</source>
        <translation>参数 %1，梯度 %2，主权重 %3，%4 状态 %5，计算 %6</translation>
    </message>
    <message>
        <source>Framework</source>
        <translation>框架</translation>
    </message>
    <message>
        <source>Cluster</source>
        <translation>集群</translation>
    </message>
    <message>
        <source>%1 x %2 per node x %3 node(s), %4 ranks</source>
        <translation>%1，每节点 %2 个 x %3 个节点，共 %4 个 rank</translation>
    </message>
    <message>
        <source>Memory per rank</source>
        <translation>各 rank 显存</translation>
    </message>
    <message>
        <source>%1, %2</source>
        <translation>%1，%2</translation>
    </message>
    <message>
        <source>Peak of each phase of one steady-state step; the bold label is the rank&apos;s peak. Solid line: HBM capacity (%1). Dashed line: usable after the largest runtime reserve (%2).</source>
        <translation>稳态单步中各阶段的峰值；粗体标签为该 rank 的峰值。实线：HBM 容量（%1）。虚线：扣除最大运行时预留后的可用容量（%2）。</translation>
    </message>
    <message>
        <source>stage %1, %2 layers</source>
        <translation>阶段 %1，%2 层</translation>
    </message>
    <message>
        <source>embedding</source>
        <translation>嵌入层</translation>
    </message>
    <message>
        <source>LM head</source>
        <translation>LM 头</translation>
    </message>
    <message>
        <source>Components of %1 (%2), peak in %3</source>
        <translation>%1 的组成（%2），峰值在%3</translation>
    </message>
    <message>
        <source>Component</source>
        <translation>组成部分</translation>
    </message>
    <message>
        <source>At peak</source>
        <translation>峰值时</translation>
    </message>
    <message numerus="yes">
        <source>context %1, %n communicator(s) %2, allocator %3</source>
        <translation>
            <numerusform>上下文 %1，%n 个通信域 %2，分配器 %3</numerusform>
        </translation>
    </message>
    <message>
        <source>Formulas and assumptions at the peak (%1)</source>
        <translation>峰值时的公式与假设（%1）</translation>
    </message>
    <message>
        <source>Formula</source>
        <translation>公式</translation>
    </message>
    <message>
        <source>Assumptions</source>
        <translation>假设</translation>
    </message>
    <message>
        <source>Collectives and step time</source>
        <translation>集合通信与单步时间</translation>
    </message>
    <message>
        <source>This engine did not estimate collectives for the plan.</source>
        <translation>引擎未估计该方案的集合通信。</translation>
    </message>
    <message>
        <source>Collective</source>
        <translation>集合通信</translation>
    </message>
    <message>
        <source>Group</source>
        <translation>通信组</translation>
    </message>
    <message>
        <source>Message</source>
        <translation>消息</translation>
    </message>
    <message>
        <source>Per step</source>
        <translation>每步</translation>
    </message>
    <message>
        <source>Time each</source>
        <translation>每次耗时</translation>
    </message>
    <message>
        <source>Exposed per step</source>
        <translation>每步暴露时间</translation>
    </message>
    <message>
        <source>Phase and purpose</source>
        <translation>阶段与用途</translation>
    </message>
    <message>
        <source>Compute</source>
        <translation>计算</translation>
    </message>
    <message>
        <source>Exposed communication</source>
        <translation>暴露通信</translation>
    </message>
    <message>
        <source>Pipeline bubble</source>
        <translation>流水线气泡</translation>
    </message>
    <message>
        <source>Offload traffic</source>
        <translation>卸载传输</translation>
    </message>
    <message>
        <source>Throughput</source>
        <translation>吞吐</translation>
    </message>
    <message>
        <source>%1 tokens/s</source>
        <translation>%1 tokens/s</translation>
    </message>
    <message>
        <source>MFU / HFU</source>
        <translation>MFU / HFU</translation>
    </message>
    <message>
        <source>This engine did not estimate the step time for the plan.</source>
        <translation>引擎未估计该方案的单步时间。</translation>
    </message>
    <message>
        <source>Device profile: %1 (%2)</source>
        <translation>设备配置：%1（%2）</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>%1 %2, %3 GB/s per device, latency %4, efficiency %5</source>
        <translation>%1 %2，每设备 %3 GB/s，延迟 %4，效率 %5</translation>
    </message>
    <message>
        <source>HBM</source>
        <translation>HBM</translation>
    </message>
    <message>
        <source>Context reserve</source>
        <translation>上下文预留</translation>
    </message>
    <message>
        <source>Collective buffers</source>
        <translation>集合通信缓冲区</translation>
    </message>
    <message>
        <source>%1 per communicator</source>
        <translation>每个通信域 %1</translation>
    </message>
    <message>
        <source>Peak BF16</source>
        <translation>BF16 峰值</translation>
    </message>
    <message>
        <source>%1 TFLOP/s (GEMM efficiency %2, attention %3)</source>
        <translation>%1 TFLOP/s（GEMM 效率 %2，注意力 %3）</translation>
    </message>
    <message>
        <source>HBM bandwidth</source>
        <translation>HBM 带宽</translation>
    </message>
    <message>
        <source>%1 TB/s (efficiency %2)</source>
        <translation>%1 TB/s（效率 %2）</translation>
    </message>
    <message>
        <source>Intra-node</source>
        <translation>节点内</translation>
    </message>
    <message>
        <source>Inter-node</source>
        <translation>节点间</translation>
    </message>
    <message>
        <source>Host link</source>
        <translation>主机链路</translation>
    </message>
    <message>
        <source>%1 GB/s</source>
        <translation>%1 GB/s</translation>
    </message>
    <message>
        <source>Sources</source>
        <translation>来源</translation>
    </message>
    <message>
        <source>Figure</source>
        <translation>数值</translation>
    </message>
    <message>
        <source>Where it comes from</source>
        <translation>出处</translation>
    </message>
    <message>
        <source>P%1</source>
        <translation>P%1</translation>
    </message>
    <message>
        <source>Fits</source>
        <translation>可容纳</translation>
    </message>
    <message>
        <source>Does not fit</source>
        <translation>无法容纳</translation>
    </message>
    <message>
        <source>rank %1</source>
        <translation>rank %1</translation>
    </message>
    <message>
        <source>ranks %1-%2</source>
        <translation>rank %1-%2</translation>
    </message>
    <message>
        <source>forward</source>
        <translation>前向</translation>
    </message>
    <message>
        <source>backward</source>
        <translation>反向</translation>
    </message>
    <message>
        <source>optimizer step</source>
        <translation>优化器步</translation>
    </message>
    <message>
        <source>Parameters</source>
        <translation>参数</translation>
    </message>
    <message>
        <source>Gradients</source>
        <translation>梯度</translation>
    </message>
    <message>
        <source>Master weights</source>
        <translation>主权重</translation>
    </message>
    <message>
        <source>Optimizer states</source>
        <translation>优化器状态</translation>
    </message>
    <message>
        <source>Activations</source>
        <translation>激活值</translation>
    </message>
    <message>
        <source>Logits and loss</source>
        <translation>logits 与损失</translation>
    </message>
    <message>
        <source>Communication buffers</source>
        <translation>通信缓冲区</translation>
    </message>
    <message>
        <source>Transient</source>
        <translation>临时内存</translation>
    </message>
    <message>
        <source>HBM capacity</source>
        <translation>HBM 容量</translation>
    </message>
    <message>
        <source>usable</source>
        <translation>可用</translation>
    </message>
    <message>
        <source>none (DDP)</source>
        <translation>无（DDP）</translation>
    </message>
    <message>
        <source>optimizer states (ZeRO-1)</source>
        <translation>优化器状态（ZeRO-1）</translation>
    </message>
    <message>
        <source>gradients and optimizer states (ZeRO-2)</source>
        <translation>梯度与优化器状态（ZeRO-2）</translation>
    </message>
    <message>
        <source>full (ZeRO-3 / FSDP)</source>
        <translation>完全分片（ZeRO-3 / FSDP）</translation>
    </message>
    <message>
        <source>DP %1 x TP %2 x PP %3 x CP %4</source>
        <translation>DP %1 x TP %2 x PP %3 x CP %4</translation>
    </message>
    <message>
        <source>EP %1</source>
        <translation>EP %1</translation>
    </message>
    <message>
        <source>sharding %1</source>
        <translation>分片：%1</translation>
    </message>
    <message>
        <source>sequence parallel</source>
        <translation>序列并行</translation>
    </message>
    <message>
        <source>schedule %1, %2 virtual stage(s)</source>
        <translation>调度 %1，%2 个虚拟阶段</translation>
    </message>
    <message>
        <source>%1 tokens x micro-batch %2 x %3 micro-batch(es) per step</source>
        <translation>%1 tokens x 微批 %2 x 每步 %3 个微批</translation>
    </message>
    <message>
        <source>no recompute</source>
        <translation>不重计算</translation>
    </message>
    <message>
        <source>selective recompute</source>
        <translation>选择性重计算</translation>
    </message>
    <message>
        <source>full recompute</source>
        <translation>完全重计算</translation>
    </message>
    <message>
        <source>fused (flash) attention</source>
        <translation>融合（flash）注意力</translation>
    </message>
    <message>
        <source>eager attention</source>
        <translation>eager 注意力</translation>
    </message>
    <message>
        <source>optimizer</source>
        <translation>优化器</translation>
    </message>
    <message>
        <source>parameters</source>
        <translation>参数</translation>
    </message>
    <message>
        <source>gradients</source>
        <translation>梯度</translation>
    </message>
    <message>
        <source>activations</source>
        <translation>激活值</translation>
    </message>
    <message>
        <source>%1, %2, offload: %3</source>
        <translation>%1，%2，卸载：%3</translation>
    </message>
    <message>
        <source>No plan to report.</source>
        <translation>没有可报告的方案。</translation>
    </message>
    <message>
        <source>Cannot evaluate the plan: %1</source>
        <translation>无法评估方案：%1</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <comment>phase: what the collective carries</comment>
        <translation>%1：%2</translation>
    </message>
    <message>
        <source>Training method</source>
        <translation>训练方式</translation>
    </message>
    <message>
        <source>full training</source>
        <translation>全量训练</translation>
    </message>
    <message>
        <source>LoRA rank %1</source>
        <translation>LoRA，秩 %1</translation>
    </message>
    <message>
        <source>DoRA rank %1</source>
        <translation>DoRA，秩 %1</translation>
    </message>
    <message>
        <source>QLoRA rank %1 over a %2 base</source>
        <translation>QLoRA，秩 %1，基座 %2</translation>
    </message>
    <message>
        <source>freezing, the last %1 layers trained</source>
        <translation>冻结训练，训练最后 %1 层</translation>
    </message>
    <message>
        <source>%1 of %2 parameters trained</source>
        <translation>%2 个参数中训练 %1 个</translation>
    </message>
    <message>
        <source>loss head %1</source>
        <translation>损失头 %1</translation>
    </message>
    <message>
        <source>%1 (stage %2)</source>
        <translation>%1（阶段 %2）</translation>
    </message>
    <message>
        <source>The first step peaks higher, at %1, while the optimizer states come into being.</source>
        <translation>第一步的峰值更高，为 %1：优化器状态在此时创建。</translation>
    </message>
    <message>
        <source>model build</source>
        <translation>模型构建</translation>
    </message>
    <message>
        <source>first step</source>
        <translation>第一步</translation>
    </message>
    <message>
        <source>steady step</source>
        <translation>稳态步</translation>
    </message>
    <message>
        <source>On the device the allocator runs out of memory in the %1, allocating %2 (%3).</source>
        <translation>在设备上，分配器在%1中内存不足，当时正在分配 %2（%3）。</translation>
    </message>
    <message>
        <source>Memory over the step</source>
        <translation>训练步中的显存变化</translation>
    </message>
    <message>
        <source>Reserved by the caching allocator (peak %1)</source>
        <translation>缓存分配器保留的显存（峰值 %1）</translation>
    </message>
    <message>
        <source>Peak %1</source>
        <translation>峰值 %1</translation>
    </message>
    <message>
        <source>Allocations and frees of the step (event index)</source>
        <translation>训练步的分配与释放（事件序号）</translation>
    </message>
    <message>
        <source>1 alike micro-batch left out</source>
        <translation>省略了 1 个相同的微批次</translation>
    </message>
    <message>
        <source>%1 alike micro-batches left out</source>
        <translation>省略了 %1 个相同的微批次</translation>
    </message>
    <message>
        <source>Allocated bytes stacked by component after each allocation or free of the step, the bytes the caching allocator reserves (replayed on a device with room) as the dark line; the backward is shaded.</source>
        <translation>每次分配或释放后已分配的字节按组件堆叠；深色线为缓存分配器保留的字节（在显存充足的设备上回放）；反向阶段加了底色。</translation>
    </message>
    <message>
        <source>Largest tensors alive at the peak</source>
        <translation>峰值时存活的最大张量</translation>
    </message>
    <message>
        <source>Tensors</source>
        <translation>张量</translation>
    </message>
    <message>
        <source>Layers</source>
        <translation>层</translation>
    </message>
    <message>
        <source>Micro-batch</source>
        <translation>微批次</translation>
    </message>
    <message>
        <source>Count</source>
        <translation>数量</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>大小</translation>
    </message>
    <message>
        <source>Share</source>
        <translation>占比</translation>
    </message>
    <message>
        <source>1 more group</source>
        <translation>另有 1 组</translation>
    </message>
    <message>
        <source>%1 more groups</source>
        <translation>另有 %1 组</translation>
    </message>
    <message>
        <source>Allocated at the peak</source>
        <translation>峰值时已分配</translation>
    </message>
    <message>
        <source>Tensors alive at the allocated peak, grouped by kind and micro-batch (&quot;-&quot;: held for the whole step), largest first.</source>
        <translation>已分配峰值时存活的张量，按类型和微批次分组（&quot;-&quot;：整个训练步都持有），由大到小。</translation>
    </message>
    <message>
        <source>layer %1</source>
        <translation>第 %1 层</translation>
    </message>
    <message>
        <source>no layer</source>
        <translation>无层</translation>
    </message>
    <message>
        <source>micro-batch %1</source>
        <translation>微批次 %1</translation>
    </message>
    <message>
        <source>step-wide</source>
        <translation>整个训练步</translation>
    </message>
    <message>
        <source>multi-head latent attention: q rank %1, kv rank %2, q/k head %3 + %4, v head %5</source>
        <translation>多头潜在注意力：q 秩 %1，kv 秩 %2，q/k 头宽 %3 + %4，v 头宽 %5</translation>
    </message>
    <message>
        <source>QK norms</source>
        <translation>QK 归一化</translation>
    </message>
    <message>
        <source>%1 shared of %2</source>
        <translation>%1 个宽 %2 的共享专家</translation>
    </message>
    <message>
        <source>MoE in %1 of %2 layers</source>
        <translation>%2 层中 %1 层为 MoE</translation>
    </message>
    <message>
        <source>%1 MTP module(s)</source>
        <translation>%1 个 MTP 模块</translation>
    </message>
    <message>
        <source>%1, %2, %3</source>
        <translation>%1，%2，%3</translation>
    </message>
    <message>
        <source>LayerNorm</source>
        <translation>LayerNorm</translation>
    </message>
    <message>
        <source>RMSNorm</source>
        <translation>RMSNorm</translation>
    </message>
    <message>
        <source>biases on every linear</source>
        <translation>每个线性层带偏置</translation>
    </message>
    <message>
        <source>no linear biases</source>
        <translation>线性层无偏置</translation>
    </message>
    <message>
        <source>learned positions (%1)</source>
        <translation>可学习位置（%1）</translation>
    </message>
    <message>
        <source>RoPE</source>
        <translation>RoPE</translation>
    </message>
    <message>
        <source>expert TP %1</source>
        <translation>专家 TP %1</translation>
    </message>
    <message>
        <source>Step %1, %2 tokens/s, MFU %3.</source>
        <translation>单步 %1，%2 tokens/s，MFU %3。</translation>
    </message>
    <message>
        <source>Appendix: the device profile</source>
        <translation>附录：设备配置</translation>
    </message>
    <message>
        <source>Appendix: the device profiles</source>
        <translation>附录：各设备配置</translation>
    </message>
    <message>
        <source>The figures the estimates above rest on, and where they come from.</source>
        <translation>上述估计所依据的数值及其来源。</translation>
    </message>
    <message>
        <source>Model states, counted roughly</source>
        <translation>模型状态的粗略核算</translation>
    </message>
    <message>
        <source>%1 + %2 + %3 + %4 = %5</source>
        <translation>%1 + %2 + %3 + %4 = %5</translation>
    </message>
    <message>
        <source>Parameters + gradients + master weights + optimizer states, %1 bytes per parameter: %2 per rank unsharded.</source>
        <translation>参数 + 梯度 + 主权重 + 优化器状态，每个参数 %1 字节：不分片时每个 rank %2。</translation>
    </message>
    <message>
        <source>At a nominal %1B parameters: %2.</source>
        <translation>按名义 %1B 参数计：%2。</translation>
    </message>
    <message>
        <source>Fully sharded over dp x cp = %1 ranks: about %2 per rank.</source>
        <translation>在 dp x cp = %1 个 rank 上完全分片：每个 rank 约 %2。</translation>
    </message>
    <message>
        <source>This layout places %1 of them on its fullest rank.</source>
        <translation>该布局在最满的 rank 上放置其中的 %1。</translation>
    </message>
    <message>
        <source>Only %1 parameters are trained: their gradients and optimizer states take %2.</source>
        <translation>只训练 %1 个参数：它们的梯度与优化器状态占 %2。</translation>
    </message>
    <message>
        <source>That count leaves out activations, logits and loss, communication buffers, optimizer temporaries and the runtime reserve; the full accounting follows.</source>
        <translation>该核算未包括激活值、logits 与损失、通信缓冲区、优化器临时张量和运行时预留；完整核算见下文。</translation>
    </message>
    <message>
        <source>One steady-state step of %1, allocation by allocation: %2 allocated at the peak in the %3, as it allocates %4 (%5, %6); the caching allocator reserves up to %7; %8 stays allocated after the step.</source>
        <translation>%1 的一个稳态训练步，逐次分配：%3中峰值分配 %2，此时正在分配 %4（%5，%6）；缓存分配器最多保留 %7；训练步结束后仍占用 %8。</translation>
    </message>
</context>
<context>
    <name>PlanDescription</name>
    <message>
        <source>DDP</source>
        <translation>DDP</translation>
    </message>
    <message>
        <source>ZeRO-1</source>
        <translation>ZeRO-1</translation>
    </message>
    <message>
        <source>ZeRO-2</source>
        <translation>ZeRO-2</translation>
    </message>
    <message>
        <source>FSDP (ZeRO-3)</source>
        <translation>FSDP（ZeRO-3）</translation>
    </message>
    <message>
        <source>LoRA r%1</source>
        <translation>LoRA r%1</translation>
    </message>
    <message>
        <source>DoRA r%1</source>
        <translation>DoRA r%1</translation>
    </message>
    <message>
        <source>QLoRA r%1</source>
        <translation>QLoRA r%1</translation>
    </message>
    <message numerus="yes">
        <source>last %n layer(s) trained</source>
        <translation>
            <numerusform>训练最后 %n 层</numerusform>
        </translation>
    </message>
    <message>
        <source>on</source>
        <translation>开</translation>
    </message>
    <message>
        <source>off</source>
        <translation>关</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>custom %1 model</source>
        <translation>自定义 %1 模型</translation>
    </message>
    <message>
        <source>%1, %2</source>
        <translation>%1，%2</translation>
    </message>
    <message>
        <source>%1 tokens</source>
        <translation>%1 tokens</translation>
    </message>
    <message>
        <source>%1 x %2</source>
        <translation>%1 x %2</translation>
    </message>
    <message>
        <source>%1 (%2 nodes)</source>
        <translation>%1（%2 个节点）</translation>
    </message>
    <message>
        <source>TP %1 + SP</source>
        <translation>TP %1 + SP</translation>
    </message>
    <message>
        <source>TP %1</source>
        <translation>TP %1</translation>
    </message>
    <message>
        <source>PP %1</source>
        <translation>PP %1</translation>
    </message>
    <message>
        <source>%1 interleaved x%2</source>
        <translation>%1 交错 x%2</translation>
    </message>
    <message>
        <source>%1 GPipe</source>
        <translation>%1 GPipe</translation>
    </message>
    <message>
        <source>CP %1</source>
        <translation>CP %1</translation>
    </message>
    <message>
        <source>EP %1</source>
        <translation>EP %1</translation>
    </message>
    <message>
        <source>DDP dp %1</source>
        <translation>DDP dp %1</translation>
    </message>
    <message>
        <source>%1 over dp %2 x cp %3</source>
        <translation>%1 跨 dp %2 x cp %3</translation>
    </message>
    <message>
        <source>%1 over cp %2</source>
        <translation>%1 跨 cp %2</translation>
    </message>
    <message>
        <source>%1 dp %2</source>
        <translation>%1 dp %2</translation>
    </message>
    <message>
        <source>dp %1</source>
        <translation>dp %1</translation>
    </message>
    <message>
        <source>one device</source>
        <translation>单设备</translation>
    </message>
    <message>
        <source>model %1</source>
        <translation>模型 %1</translation>
    </message>
    <message>
        <source>sequence %1 tokens</source>
        <translation>序列 %1 tokens</translation>
    </message>
    <message>
        <source>micro-batch %1</source>
        <translation>微批次 %1</translation>
    </message>
    <message>
        <source>accumulation %1</source>
        <translation>梯度累积 %1</translation>
    </message>
    <message>
        <source>sharding %1</source>
        <translation>分片：%1</translation>
    </message>
    <message>
        <source>SP on</source>
        <translation>SP 开</translation>
    </message>
    <message>
        <source>SP off</source>
        <translation>SP 关</translation>
    </message>
    <message>
        <source>%1 %2</source>
        <translation>%1 %2</translation>
    </message>
    <message>
        <source>%1 as default</source>
        <translation>%1 为默认值</translation>
    </message>
    <message>
        <source>%1 uneven</source>
        <translation>%1 非均匀</translation>
    </message>
</context>
<context>
    <name>ReportExport</name>
    <message>
        <source>pinned for comparison</source>
        <translation>固定用于对比</translation>
    </message>
    <message>
        <source>PDF report...</source>
        <translation>PDF 报告...</translation>
    </message>
    <message>
        <source>plan-report.pdf</source>
        <translation>方案报告.pdf</translation>
    </message>
    <message>
        <source>Export PDF report</source>
        <translation>导出 PDF 报告</translation>
    </message>
    <message>
        <source>PDF documents (*.pdf)</source>
        <translation>PDF 文档 (*.pdf)</translation>
    </message>
    <message>
        <source>Wrote %1</source>
        <translation>已写入 %1</translation>
    </message>
    <message>
        <source>%1, edited</source>
        <translation>%1，已编辑</translation>
    </message>
    <message>
        <source>%1; named “%2”</source>
        <translation>%1；名称“%2”</translation>
    </message>
</context>
<context>
    <name>StepSeries</name>
    <message>
        <source>root module</source>
        <translation>根模块</translation>
    </message>
    <message>
        <source>head</source>
        <translation>输出头</translation>
    </message>
    <message>
        <source>embedding</source>
        <translation>嵌入层</translation>
    </message>
</context>
<context>
    <name>TensorKind</name>
    <message>
        <source>Parameter</source>
        <translation>参数</translation>
    </message>
    <message>
        <source>Master weight</source>
        <translation>主权重</translation>
    </message>
    <message>
        <source>Optimizer state</source>
        <translation>优化器状态</translation>
    </message>
    <message>
        <source>Gradient</source>
        <translation>梯度</translation>
    </message>
    <message>
        <source>Gradient buffer</source>
        <translation>梯度缓冲区</translation>
    </message>
    <message>
        <source>Autocast weight copy</source>
        <translation>autocast 权重副本</translation>
    </message>
    <message>
        <source>Saved activations</source>
        <translation>保存的激活</translation>
    </message>
    <message>
        <source>Final norm and head inputs</source>
        <translation>最终归一化与输出头的输入</translation>
    </message>
    <message>
        <source>Final norm output</source>
        <translation>最终归一化的输出</translation>
    </message>
    <message>
        <source>Logits and loss</source>
        <translation>logits 与损失</translation>
    </message>
    <message>
        <source>Loss gradients</source>
        <translation>损失的梯度</translation>
    </message>
    <message>
        <source>Forward working set</source>
        <translation>前向工作集</translation>
    </message>
    <message>
        <source>Recomputed layer</source>
        <translation>重计算的层</translation>
    </message>
    <message>
        <source>Backward working set</source>
        <translation>反向工作集</translation>
    </message>
    <message>
        <source>All-gather buffer</source>
        <translation>all-gather 缓冲区</translation>
    </message>
    <message>
        <source>Gathered layer</source>
        <translation>已聚合的层</translation>
    </message>
    <message>
        <source>Gathered root module</source>
        <translation>已聚合的根模块</translation>
    </message>
    <message>
        <source>Unsharded gradients</source>
        <translation>未分片的梯度</translation>
    </message>
    <message>
        <source>Reduce-scatter input</source>
        <translation>reduce-scatter 输入</translation>
    </message>
    <message>
        <source>DDP bucket</source>
        <translation>DDP 桶</translation>
    </message>
    <message>
        <source>Reduce bucket</source>
        <translation>归约桶</translation>
    </message>
    <message>
        <source>Pipeline send/recv buffer</source>
        <translation>流水线收发缓冲区</translation>
    </message>
    <message>
        <source>Optimizer temporary</source>
        <translation>优化器临时张量</translation>
    </message>
    <message>
        <source>GEMM library workspace</source>
        <translation>GEMM 库工作区</translation>
    </message>
    <message>
        <source>Sequence-parallel all-gather buffer</source>
        <translation>序列并行 all-gather 缓冲区</translation>
    </message>
    <message>
        <source>Model chunk&apos;s last input and its gradient</source>
        <translation>模型块的最后输入及其梯度</translation>
    </message>
</context>
<context>
    <name>main</name>
    <message>
        <source>Transformer training planner</source>
        <translation>Transformer 训练规划工具</translation>
    </message>
    <message>
        <source>Plan file to open (.plan.json)</source>
        <translation>要打开的方案文件（.plan.json）</translation>
    </message>
    <message>
        <source>Save a PNG of the window to &lt;file&gt; and quit.</source>
        <translation>将窗口保存为 PNG 到 &lt;file&gt; 后退出。</translation>
    </message>
    <message>
        <source>Use a dark palette.</source>
        <translation>使用深色配色。</translation>
    </message>
    <message>
        <source>Window size, e.g. 1366x768.</source>
        <translation>窗口大小，例如 1366x768。</translation>
    </message>
    <message>
        <source>Bring a centre tab or panel to the front by its title, e.g. &quot;Memory over the step&quot;.</source>
        <translation>按标题把一个中央标签页或面板置于前台，例如“训练步中的显存变化”。</translation>
    </message>
</context>
<context>
    <name>shardscope-cli</name>
    <message>
        <source>Usage: shardscope-cli report PLAN.plan.json [PLAN.plan.json...] -o REPORT.pdf
                             [--page a4|letter] [--lang en|zh_CN]

Writes a PDF report: the verdict, the plan, per-rank memory bars against the HBM capacity,
every component with its formula and assumptions, collectives and step time, the device
profile with its sources, and a comparison page when several plans are given. The report&apos;s
language is --lang, else the system&apos;s.
</source>
        <translation>用法：shardscope-cli report PLAN.plan.json [PLAN.plan.json...] -o REPORT.pdf
                             [--page a4|letter] [--lang en|zh_CN]

写出 PDF 报告：结论、方案、对照 HBM 容量的各 rank 显存柱形图、每个组成部分的
公式与假设、集合通信与单步时间、设备配置及其来源；给出多个方案时另附对比页。
报告语言由 --lang 指定，否则跟随系统。
</translation>
    </message>
    <message>
        <source>Usage: shardscope-cli compare PLAN.plan.json PLAN.plan.json... [--format table|json]
</source>
        <translation>用法：shardscope-cli compare PLAN.plan.json PLAN.plan.json... [--format table|json]
</translation>
    </message>
    <message>
        <source>Usage: shardscope-cli &lt;command&gt; [options]

Plans how a transformer is trained on accelerator nodes: per-rank memory, communication,
step time.

Commands:
  estimate PLAN.plan.json [--format table|json] [--hf-config config.json]
      Per-rank peak memory by component, the runtime reserve and whether it fits.
  report PLAN.plan.json [PLAN.plan.json...] -o REPORT.pdf [--page a4|letter] [--lang en|zh_CN]
      A PDF report of one or more plans (runs headless).
  search PLAN.plan.json [--top N] [--global-batch N] [--no-offload] [--format table|json]
      Every layout of the plan&apos;s model, sequence and cluster that fits, fastest first,
      and the Pareto front of memory against step time.
  compare PLAN.plan.json PLAN.plan.json... [--format table|json]
      Per-layer collectives, message sizes, their time on the links, per-rank memory and
      step time of several plans side by side.
  bench PLAN.plan.json --backend cpu|torch [--device cuda|npu|cpu] [--python PATH] [-o FILE]
      Measures the plan&apos;s kernels on the attached device beside the prediction.

Options:
  --help       show this help
  --version    show the version
  --lang LANG  language of the help and the reports: en or zh_CN (default: the system&apos;s)

Exit status: 0 success, 2 bad plan or bad arguments (message on stderr), 1 other failure.
</source>
        <translation>用法：shardscope-cli &lt;命令&gt; [选项]

规划 transformer 在加速器节点上的训练方式：每 rank 显存、通信、单步时间。

命令：
  estimate PLAN.plan.json [--format table|json] [--hf-config config.json]
      按组成部分列出每 rank 峰值显存、运行时预留，以及能否容纳。
  report PLAN.plan.json [PLAN.plan.json...] -o REPORT.pdf [--page a4|letter] [--lang en|zh_CN]
      生成一个或多个方案的 PDF 报告（无需显示器）。
  search PLAN.plan.json [--top N] [--global-batch N] [--no-offload] [--format table|json]
      列出该方案的模型、序列与集群下所有可容纳的布局（最快的在前），
      以及显存与单步时间的 Pareto 前沿。
  compare PLAN.plan.json PLAN.plan.json... [--format table|json]
      并排比较多个方案的逐层集合通信、消息大小、链路耗时、每 rank 显存
      与单步时间。
  bench PLAN.plan.json --backend cpu|torch [--device cuda|npu|cpu] [--python PATH] [-o FILE]
      在所连设备上测量方案的算子，并与预测并列显示。

选项：
  --help       显示本帮助
  --version    显示版本
  --lang LANG  帮助与报告的语言：en 或 zh_CN（默认：跟随系统）

退出状态：0 成功，2 方案或参数有误（信息输出到 stderr），1 其他错误。
</translation>
    </message>
    <message>
        <source>Usage: shardscope-cli estimate PLAN.plan.json [--format table|json] [--hf-config config.json]
</source>
        <translation>用法：shardscope-cli estimate PLAN.plan.json [--format table|json] [--hf-config config.json]
</translation>
    </message>
    <message>
        <source>Usage: shardscope-cli bench PLAN.plan.json [options]

Runs the kernels of one training step of the plan (rank-local GEMMs, attention,
memory-bound ops, collectives) and a memory probe on the attached device, and prints
measured beside predicted.

  --backend cpu|torch     native CPU kernels, or the PyTorch worker (default cpu)
  --device cuda|npu|cpu   device of the torch backend (default cpu)
  --python PATH           interpreter of the torch worker (default /usr/bin/python3)
  --worker PATH           worker script (default: the installed shardscope_worker.py)
  --nproc N               worker processes on this node, &gt;= 2 for collectives (default 1)
  --launcher ARGS         run the worker through torchrun with these arguments (several
                          nodes), e.g. &quot;--nnodes 2 --rdzv-endpoint host:29500&quot;
  --max-tokens N          cap the tokens per kernel (default 256 on a CPU, none otherwise)
  --probe-tokens N        cap the memory probe&apos;s sequence (default 256 on a CPU)
  --no-probe              skip the memory probe
  --snapshot FILE         cuda / npu: record the probe&apos;s steady step as a memory snapshot
                          (JSON; the workbench&apos;s Memory over the step overlays it)
  --no-collectives        skip the collectives
  --warmup N, --repeats N timing (default 2 and 5)
  --timeout SECONDS       longest silence of the worker (default 300)
  --gemm MxNxK[:dtype]    also time this GEMM (repeatable), e.g. 8192x8192x8192:bf16
  --reference             time plain torch.matmul beside each GEMM (torch backend)
  --list                  print the kernel list and stop
  --import FILE           show nccl-tests / hccl_test output or a profiler trace (Chrome
                          JSON) beside the plan&apos;s estimate; runs nothing unless --backend
  --ranks N               ranks of an imported hccl_test run (for busbw)
  -o, --output FILE       write the results JSON
  --profile FILE          write the calibrated device profile JSON
  --format table|json     output on stdout (default table)
</source>
        <translation>用法：shardscope-cli bench PLAN.plan.json [选项]

在所连设备上运行方案一个训练步的算子（rank 本地 GEMM、注意力、访存密集算子、
集合通信）以及一次显存探测，并将实测值与预测值并列输出。

  --backend cpu|torch     本机 CPU 算子，或 PyTorch 工作进程（默认 cpu）
  --device cuda|npu|cpu   torch 后端使用的设备（默认 cpu）
  --python PATH           torch 工作进程的解释器（默认 /usr/bin/python3）
  --worker PATH           工作进程脚本（默认：已安装的 shardscope_worker.py）
  --nproc N               本节点上的工作进程数，测量集合通信需 &gt;= 2（默认 1）
  --launcher ARGS         通过 torchrun 以这些参数运行工作进程（多节点），
                          例如 &quot;--nnodes 2 --rdzv-endpoint host:29500&quot;
  --max-tokens N          每个算子的 token 上限（CPU 上默认 256，其他无上限）
  --probe-tokens N        显存探测的序列上限（CPU 上默认 256）
  --no-probe              跳过显存探测
  --snapshot FILE         cuda / npu：把探测的稳态训练步记录为显存快照
                          （JSON；工作台的“训练步中的显存变化”可叠加显示）
  --no-collectives        跳过集合通信
  --warmup N, --repeats N 计时参数（默认 2 和 5）
  --timeout SECONDS       工作进程最长无响应时间（默认 300）
  --gemm MxNxK[:dtype]    另外对该 GEMM 计时（可重复），例如 8192x8192x8192:bf16
  --reference             在每个 GEMM 旁对普通 torch.matmul 计时（torch 后端）
  --list                  输出算子列表后停止
  --import FILE           将 nccl-tests / hccl_test 输出或性能分析轨迹（Chrome JSON）
                          与方案估计并列显示；除非指定 --backend，否则不运行任何算子
  --ranks N               导入的 hccl_test 运行的 rank 数（用于 busbw）
  -o, --output FILE       写出结果 JSON
  --profile FILE          写出校准后的设备配置 JSON
  --format table|json     标准输出格式（默认 table）

</translation>
    </message>
    <message>
        <source>Usage: shardscope-cli search PLAN.plan.json [--top N] [--global-batch N | --global-tokens N]
                             [--tp N] [--pp N] [--cp N] [--max-devices N] [--min-headroom GIB]
                             [--recompute LIST] [--offload none|LIST] [--no-offload]
                             [--axes all|none|LIST] [--min-cp-tokens N] [--count-fitting]
                             [--format table|json]
</source>
        <translation>用法：shardscope-cli search PLAN.plan.json [--top N] [--global-batch N | --global-tokens N]
                             [--tp N] [--pp N] [--cp N] [--max-devices N] [--min-headroom GIB]
                             [--recompute LIST] [--offload none|LIST] [--no-offload]
                             [--axes all|none|LIST] [--min-cp-tokens N] [--count-fitting]
                             [--format table|json]
</translation>
    </message>
</context>
<context>
    <name>shardscope::CollectiveChartView</name>
    <message>
        <source>Time per step</source>
        <translation>每步时间</translation>
    </message>
    <message>
        <source>Exposed per step</source>
        <translation>每步暴露时间</translation>
    </message>
    <message>
        <source>ms</source>
        <translation>ms</translation>
    </message>
</context>
<context>
    <name>shardscope::CommunicationModel</name>
    <message>
        <source>%1 (%2 ranks)</source>
        <translation>%1（%2 个 rank）</translation>
    </message>
    <message>
        <source>Collective</source>
        <translation>集合通信</translation>
    </message>
    <message>
        <source>Group</source>
        <translation>通信组</translation>
    </message>
    <message>
        <source>Phase</source>
        <translation>阶段</translation>
    </message>
    <message>
        <source>Message size</source>
        <translation>消息大小</translation>
    </message>
    <message>
        <source>Calls / step</source>
        <translation>每步调用次数</translation>
    </message>
    <message>
        <source>Time / call</source>
        <translation>每次耗时</translation>
    </message>
    <message>
        <source>Time / step</source>
        <translation>每步耗时</translation>
    </message>
    <message>
        <source>Exposed / step</source>
        <translation>每步暴露</translation>
    </message>
    <message>
        <source>Carries</source>
        <translation>传输内容</translation>
    </message>
</context>
<context>
    <name>shardscope::CommunicationPanel</name>
    <message>
        <source>&lt;b&gt;Step %1&lt;/b&gt; = compute %2 + exposed communication %3 + pipeline bubble %4 + offload %5 &amp;nbsp;&amp;middot;&amp;nbsp; &lt;b&gt;%6 tokens/s&lt;/b&gt; &amp;nbsp;&amp;middot;&amp;nbsp; &lt;b&gt;MFU %7%&lt;/b&gt; (HFU %8%)</source>
        <translation>&lt;b&gt;单步 %1&lt;/b&gt; = 计算 %2 + 暴露通信 %3 + 流水线气泡 %4 + 卸载 %5 &amp;nbsp;&amp;middot;&amp;nbsp; &lt;b&gt;%6 tokens/s&lt;/b&gt; &amp;nbsp;&amp;middot;&amp;nbsp; &lt;b&gt;MFU %7%&lt;/b&gt;（HFU %8%）</translation>
    </message>
    <message>
        <source>No step-time estimate for this plan yet.</source>
        <translation>该方案尚无单步时间估计。</translation>
    </message>
    <message>
        <source>A single device: this step has no collectives.</source>
        <translation>单个设备：这一步没有集合通信。</translation>
    </message>
    <message>
        <source>The engine reports no collectives for this plan.</source>
        <translation>引擎未报告该方案的集合通信。</translation>
    </message>
</context>
<context>
    <name>shardscope::ComparePanel</name>
    <message>
        <source>&amp;Pin current plan</source>
        <translation>固定当前方案(&amp;P)</translation>
    </message>
    <message>
        <source>&amp;Unpin</source>
        <translation>取消固定(&amp;U)</translation>
    </message>
    <message>
        <source>&amp;Make current</source>
        <translation>设为当前(&amp;M)</translation>
    </message>
    <message>
        <source>Pin the HCIE-AI &amp;cases</source>
        <translation>固定 HCIE-AI 案例(&amp;C)</translation>
    </message>
    <message>
        <source>Load the selected pinned plan into the editor (undoable)</source>
        <translation>将选中的固定方案载入编辑器（可撤销）</translation>
    </message>
    <message>
        <source>Worst rank of each pinned plan</source>
        <translation>各固定方案中最满的 rank</translation>
    </message>
    <message>
        <source>pinned plan</source>
        <translation>固定方案</translation>
    </message>
    <message>
        <source>&lt;b&gt;%1&lt;/b&gt;&lt;br&gt;%2: %3 on rank %4 at its %5 peak</source>
        <translation>&lt;b&gt;%1&lt;/b&gt;&lt;br&gt;%2：rank %4 在%5峰值时为 %3</translation>
    </message>
    <message>
        <source>Load pinned plan</source>
        <translation>载入固定方案</translation>
    </message>
    <message>
        <source>Sa&amp;ve comparison...</source>
        <translation>保存对比(&amp;V)...</translation>
    </message>
    <message>
        <source>DDP, FSDP, FSDP with cp 8, TP8 and TP4 x FSDP2 for the 7B, 32K, 8 x 910B case; asks before replacing the plans pinned already</source>
        <translation>7B、32K、8 x 910B 案例的 DDP、FSDP、cp 8 的 FSDP、TP8 和 TP4 x FSDP2；替换已固定的方案前会先询问</translation>
    </message>
    <message>
        <source>&amp;Open comparison...</source>
        <translation>打开对比(&amp;O)...</translation>
    </message>
    <message>
        <source>Pin the plans of a comparison saved before</source>
        <translation>固定之前保存的对比中的方案</translation>
    </message>
    <message>
        <source>Keep the current plan for comparison (up to %1)</source>
        <translation>保留当前方案用于对比（最多 %1 个）</translation>
    </message>
    <message>
        <source>Save the pinned plans and the baseline to a JSON file</source>
        <translation>将固定的方案和基准保存为 JSON 文件</translation>
    </message>
    <message>
        <source>The plan the others are compared against: the figures show their difference to it, and the last columns what the plan changes</source>
        <translation>其他方案与之对比的方案：各项数字显示与它的差值，最后几列列出方案改动了什么</translation>
    </message>
    <message>
        <source>Save comparison</source>
        <translation>保存对比</translation>
    </message>
    <message>
        <source>Comparisons (*.json)</source>
        <translation>对比文件 (*.json)</translation>
    </message>
    <message>
        <source>Open comparison</source>
        <translation>打开对比</translation>
    </message>
    <message>
        <source>Comparisons (*.json);;All files (*)</source>
        <translation>对比文件 (*.json);;所有文件 (*)</translation>
    </message>
    <message>
        <source>&amp;Baseline:</source>
        <translation>基准(&amp;B)：</translation>
    </message>
    <message>
        <source>Compare</source>
        <translation>对比</translation>
    </message>
    <message>
        <source>%1 plans are pinned; unpin one first.</source>
        <translation>已固定 %1 个方案；请先取消固定一个。</translation>
    </message>
    <message>
        <source>The current plan is pinned already.</source>
        <translation>当前方案已经固定。</translation>
    </message>
    <message>
        <source>Pinned as %1.</source>
        <translation>已固定为 %1。</translation>
    </message>
    <message numerus="yes">
        <source>%n plan(s) are pinned. Add %1 to them, or replace them?</source>
        <translation>
            <numerusform>已固定 %n 个方案。要把 %1 添加进去，还是替换它们？</numerusform>
        </translation>
    </message>
    <message>
        <source>&amp;Add</source>
        <translation>添加(&amp;A)</translation>
    </message>
    <message>
        <source>&amp;Replace</source>
        <translation>替换(&amp;R)</translation>
    </message>
    <message>
        <source>Nothing pinned; the pinned plans are as they were.</source>
        <translation>未固定任何方案；已固定的方案保持不变。</translation>
    </message>
    <message numerus="yes">
        <source>Pinned %n plan(s).</source>
        <translation>
            <numerusform>已固定 %n 个方案。</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n were pinned already.</source>
        <translation>
            <numerusform>其中 %n 个之前已固定。</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n did not fit: at most %1 plans are compared.</source>
        <translation>
            <numerusform>%n 个未能加入：最多对比 %1 个方案。</numerusform>
        </translation>
    </message>
    <message>
        <source>The case %1 cannot be read: %2</source>
        <translation>无法读取案例 %1：%2</translation>
    </message>
    <message numerus="yes">
        <source>the %n HCIE-AI case(s)</source>
        <translation>
            <numerusform>%n 个 HCIE-AI 案例</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Saved the comparison of %n plan(s) to %1.</source>
        <translation>
            <numerusform>已将 %n 个方案的对比保存到 %1。</numerusform>
        </translation>
    </message>
    <message>
        <source>The comparison was not opened; the pinned plans are unchanged.
%1</source>
        <translation>未打开对比；已固定的方案保持不变。
%1</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
</context>
<context>
    <name>shardscope::ComparisonModel</name>
    <message>
        <source>fits</source>
        <translation>可容纳</translation>
    </message>
    <message>
        <source>does not fit</source>
        <translation>无法容纳</translation>
    </message>
    <message>
        <source>n/a</source>
        <translation>不适用</translation>
    </message>
    <message>
        <source>Plan</source>
        <translation>方案</translation>
    </message>
    <message>
        <source>Peak allocated</source>
        <translation>峰值分配</translation>
    </message>
    <message>
        <source>Runtime reserve</source>
        <translation>运行时预留</translation>
    </message>
    <message>
        <source>Needed per rank</source>
        <translation>每个 rank 所需</translation>
    </message>
    <message>
        <source>HBM</source>
        <translation>HBM</translation>
    </message>
    <message>
        <source>Step time</source>
        <translation>单步时间</translation>
    </message>
    <message>
        <source>Tokens/s</source>
        <translation>tokens/s</translation>
    </message>
    <message>
        <source>MFU</source>
        <translation>MFU</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
    <message>
        <source>%1 (edited)</source>
        <translation>%1（已编辑）</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>%1%</source>
        <translation>%1%</translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation>%1（%2）</translation>
    </message>
    <message>
        <source>baseline</source>
        <translation>基准</translation>
    </message>
    <message>
        <source>same plan</source>
        <translation>相同方案</translation>
    </message>
    <message>
        <source>Against %1:
%2</source>
        <translation>相对于 %1：
%2</translation>
    </message>
    <message>
        <source>%1 (the baseline)</source>
        <translation>%1（基准）</translation>
    </message>
    <message>
        <source>Against the baseline</source>
        <translation>相对于基准</translation>
    </message>
    <message>
        <source>%1: %2: %3</source>
        <translation>%1：%2：%3</translation>
    </message>
    <message>
        <source>is not a ShardScope comparison (a JSON object with &quot;format&quot;: &quot;%1&quot;)</source>
        <translation>不是 ShardScope 对比文件（应为带有 &quot;format&quot;: &quot;%1&quot; 的 JSON 对象）</translation>
    </message>
    <message>
        <source>must be &quot;%1&quot;; a plan file opens with File &gt; Open</source>
        <translation>必须为 &quot;%1&quot;；方案文件请用 文件 &gt; 打开</translation>
    </message>
    <message>
        <source>must be a whole number from 1</source>
        <translation>必须是从 1 开始的整数</translation>
    </message>
    <message>
        <source>this comparison was written by a newer ShardScope (format %1); this version reads format %2</source>
        <translation>此对比由更新版本的 ShardScope 写入（格式 %1）；此版本读取格式 %2</translation>
    </message>
    <message>
        <source>must be a list of pinned plans</source>
        <translation>必须是固定方案的列表</translation>
    </message>
    <message>
        <source>must hold 1 to %1 plans, not %2</source>
        <translation>必须包含 1 到 %1 个方案，而不是 %2 个</translation>
    </message>
    <message>
        <source>must be an object with a &quot;plan&quot;</source>
        <translation>必须是带有 &quot;plan&quot; 的对象</translation>
    </message>
    <message>
        <source>must be true or false</source>
        <translation>必须为 true 或 false</translation>
    </message>
    <message>
        <source>must be the index of a plan (0 to %1) or -1 for none</source>
        <translation>必须是方案的序号（0 到 %1），或 -1 表示无</translation>
    </message>
</context>
<context>
    <name>shardscope::LanguageMenu</name>
    <message>
        <source>&amp;Language</source>
        <translation>语言(&amp;L)</translation>
    </message>
    <message>
        <source>System language (%1)</source>
        <translation>系统语言（%1）</translation>
    </message>
</context>
<context>
    <name>shardscope::MainWindow</name>
    <message>
        <source>Not applied: %1</source>
        <translation>未应用：%1</translation>
    </message>
    <message>
        <source>Change the plan on the left; every change redraws the per-rank bars.</source>
        <translation>在左侧修改方案；每次修改都会重绘各 rank 的柱形图。</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <source>&amp;New</source>
        <translation>新建(&amp;N)</translation>
    </message>
    <message>
        <source>Start from the HCIE-AI case as an untitled plan</source>
        <translation>以 HCIE-AI 案例为起点新建未命名方案</translation>
    </message>
    <message>
        <source>&amp;Open...</source>
        <translation>打开(&amp;O)...</translation>
    </message>
    <message>
        <source>Open plan</source>
        <translation>打开方案</translation>
    </message>
    <message>
        <source>Plans (*.plan.json *.json)</source>
        <translation>方案 (*.plan.json *.json)</translation>
    </message>
    <message>
        <source>Open &amp;example</source>
        <translation>打开示例(&amp;E)</translation>
    </message>
    <message>
        <source>Open &amp;recent</source>
        <translation>最近打开(&amp;R)</translation>
    </message>
    <message>
        <source>&amp;Save</source>
        <translation>保存(&amp;S)</translation>
    </message>
    <message>
        <source>Save &amp;as...</source>
        <translation>另存为(&amp;A)...</translation>
    </message>
    <message>
        <source>&amp;Export</source>
        <translation>导出(&amp;E)</translation>
    </message>
    <message>
        <source>Chart as PNG...</source>
        <translation>图表导出为 PNG...</translation>
    </message>
    <message>
        <source>Export chart</source>
        <translation>导出图表</translation>
    </message>
    <message>
        <source>PNG images (*.png)</source>
        <translation>PNG 图像 (*.png)</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <source>&amp;Edit</source>
        <translation>编辑(&amp;E)</translation>
    </message>
    <message>
        <source>&amp;Undo</source>
        <translation>撤销(&amp;U)</translation>
    </message>
    <message>
        <source>&amp;Redo</source>
        <translation>重做(&amp;R)</translation>
    </message>
    <message>
        <source>&amp;Plan</source>
        <translation>方案(&amp;P)</translation>
    </message>
    <message>
        <source>&amp;Pin for comparison</source>
        <translation>固定以便对比(&amp;P)</translation>
    </message>
    <message>
        <source>Ctrl+Shift+P</source>
        <translation>Ctrl+Shift+P</translation>
    </message>
    <message>
        <source>&amp;Search layouts</source>
        <translation>搜索并行布局(&amp;S)</translation>
    </message>
    <message>
        <source>F5</source>
        <translation>F5</translation>
    </message>
    <message>
        <source>&amp;Cancel search</source>
        <translation>取消搜索(&amp;C)</translation>
    </message>
    <message>
        <source>Shift+F5</source>
        <translation>Shift+F5</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation>视图(&amp;V)</translation>
    </message>
    <message>
        <source>&amp;Peak of the step</source>
        <translation>整步峰值(&amp;P)</translation>
    </message>
    <message>
        <source>&amp;Forward</source>
        <translation>前向(&amp;F)</translation>
    </message>
    <message>
        <source>&amp;Backward</source>
        <translation>反向(&amp;B)</translation>
    </message>
    <message>
        <source>&amp;Optimizer step</source>
        <translation>优化器步(&amp;O)</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>帮助(&amp;H)</translation>
    </message>
    <message>
        <source>&amp;About ShardScope</source>
        <translation>关于 ShardScope(&amp;A)</translation>
    </message>
    <message>
        <source>About ShardScope</source>
        <translation>关于 ShardScope</translation>
    </message>
    <message>
        <source>&lt;b&gt;ShardScope %1&lt;/b&gt;&lt;p&gt;Per-rank memory, communication and step time of transformer training layouts.&lt;/p&gt;&lt;p&gt;GPL-3.0-or-later.&lt;/p&gt;</source>
        <translation>&lt;b&gt;ShardScope %1&lt;/b&gt;&lt;p&gt;Transformer 训练并行布局的每 rank 显存、通信与单步时间。&lt;/p&gt;&lt;p&gt;GPL-3.0-or-later。&lt;/p&gt;</translation>
    </message>
    <message>
        <source>Plan</source>
        <translation>方案</translation>
    </message>
    <message>
        <source>Ctrl+Shift+E</source>
        <translation>Ctrl+Shift+E</translation>
    </message>
    <message>
        <source>Communication</source>
        <translation>通信</translation>
    </message>
    <message>
        <source>Compare</source>
        <translation>对比</translation>
    </message>
    <message>
        <source>Search</source>
        <translation>搜索</translation>
    </message>
    <message>
        <source>%1 was not opened; the current plan is unchanged.

%2</source>
        <translation>未打开 %1；当前方案保持不变。

%2</translation>
    </message>
    <message>
        <source>Opened %1</source>
        <translation>已打开 %1</translation>
    </message>
    <message>
        <source>Open example</source>
        <translation>打开示例</translation>
    </message>
    <message>
        <source>Save plan</source>
        <translation>保存方案</translation>
    </message>
    <message>
        <source>Saved %1</source>
        <translation>已保存 %1</translation>
    </message>
    <message>
        <source>Plans (*.plan.json)</source>
        <translation>方案 (*.plan.json)</translation>
    </message>
    <message>
        <source>Unsaved changes</source>
        <translation>未保存的修改</translation>
    </message>
    <message>
        <source>The plan &quot;%1&quot; has unsaved changes. Save them?</source>
        <translation>方案“%1”有未保存的修改。是否保存？</translation>
    </message>
    <message>
        <source>Restore unsaved plan</source>
        <translation>恢复未保存的方案</translation>
    </message>
    <message>
        <source>Restored unsaved edits from %1</source>
        <translation>已从 %1 恢复未保存的修改</translation>
    </message>
    <message>
        <source>ShardScope did not close normally. Unsaved edits of &quot;%1&quot;%2 from %3 were kept. Restore them?</source>
        <translation>ShardScope 上次未正常关闭。已保留“%1”%2 于 %3 的未保存修改。是否恢复？</translation>
    </message>
    <message>
        <source> (%1)</source>
        <translation>（%1）</translation>
    </message>
    <message>
        <source>&amp;Restore</source>
        <translation>恢复(&amp;R)</translation>
    </message>
    <message>
        <source>&amp;Discard</source>
        <translation>丢弃(&amp;D)</translation>
    </message>
    <message>
        <source>Device profiles</source>
        <translation>设备配置</translation>
    </message>
    <message>
        <source>Some user device profiles could not be read and were skipped; plans on the other devices are not affected:</source>
        <translation>部分用户设备配置无法读取，已跳过；使用其他设备的方案不受影响：</translation>
    </message>
    <message>
        <source>&amp;Import model config...</source>
        <translation>导入模型配置(&amp;I)...</translation>
    </message>
    <message>
        <source>Import model config</source>
        <translation>导入模型配置</translation>
    </message>
    <message>
        <source>Hugging Face config (config.json *.json);;All files (*)</source>
        <translation>Hugging Face 配置 (config.json *.json);;所有文件 (*)</translation>
    </message>
    <message>
        <source>%1 has fields ShardScope does not know. They are kept when the plan is saved, but the estimate does not use them:</source>
        <translation>%1 含有 ShardScope 不认识的字段。保存方案时会保留它们，但估算不使用它们：</translation>
    </message>
    <message>
        <source>%1 was not imported; the plan is unchanged.

%2</source>
        <translation>%1 未导入；方案保持不变。

%2</translation>
    </message>
    <message>
        <source>The model of %1 does not fit the current layout; the plan is unchanged.

%2</source>
        <translation>%1 中的模型与当前并行布局不相容；方案保持不变。

%2</translation>
    </message>
    <message>
        <source>Read from %1: %2, %3 layers, hidden %4, %5 heads / %6 KV heads, head dim %7, FFN %8 (%9), vocabulary %10, %11 embeddings; %12 parameters.</source>
        <translation>从 %1 读取：%2，%3 层，隐藏维度 %4，%5 个注意力头 / %6 个 KV 头，头维度 %7，FFN %8（%9），词表 %10，%11嵌入；共 %12 个参数。</translation>
    </message>
    <message>
        <source>tied</source>
        <translation>共享</translation>
    </message>
    <message>
        <source>untied</source>
        <translation>不共享</translation>
    </message>
    <message>
        <source>Mixture of experts: %1 experts, top-%2, expert FFN %3.</source>
        <translation>混合专家：%1 个专家，top-%2，专家 FFN %3。</translation>
    </message>
    <message>
        <source>Cannot save the settings (is the disk full?); the previous settings are kept.</source>
        <translation>无法保存设置（磁盘已满？）；保留原有设置。</translation>
    </message>
    <message>
        <source>Autosave failed: %1</source>
        <translation>自动保存失败：%1</translation>
    </message>
    <message>
        <source>Per-rank HBM</source>
        <translation>各 rank 的 HBM</translation>
    </message>
    <message>
        <source>Every rank&apos;s memory at its peak or at the peak of one phase</source>
        <translation>每个 rank 在其峰值或某一阶段峰值时的显存</translation>
    </message>
    <message>
        <source>One kind of rank over the allocations of a training step, with what drives its peak</source>
        <translation>一类 rank 在一个训练步各次分配中的显存，以及决定其峰值的因素</translation>
    </message>
    <message>
        <source>&amp;Memory over the step</source>
        <translation>训练步中的显存变化(&amp;M)</translation>
    </message>
    <message>
        <source>Ctrl+5</source>
        <translation>Ctrl+5</translation>
    </message>
    <message>
        <source>%1[*]: %2 - ShardScope</source>
        <translation>%1[*]：%2 - ShardScope</translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation>%1（%2）</translation>
    </message>
    <message>
        <source>&amp;Manual and glossary</source>
        <translation>手册与术语表(&amp;M)</translation>
    </message>
</context>
<context>
    <name>shardscope::ManualDialog</name>
    <message>
        <source>ShardScope manual and glossary</source>
        <translation>ShardScope 手册与术语表</translation>
    </message>
    <message>
        <source>What the window shows</source>
        <translation>窗口显示的内容</translation>
    </message>
    <message>
        <source>Plan (left): the model, the sequence and batch, the training method, the dtypes, the parallel layout, the memory switches and the cluster. Every change is an undoable edit (Ctrl+Z, also while a field has the focus); a choice the engine would refuse is disabled and its tooltip gives the reason.</source>
        <translation>方案（左侧）：模型、序列与批次、训练方法、数据类型、并行布局、内存开关和集群。每次修改都是可撤销的编辑（Ctrl+Z，输入框有焦点时也可用）；引擎会拒绝的选项显示为禁用，其提示给出原因。</translation>
    </message>
    <message>
        <source>Centre: what the plan is, derived from it, and whether it fits; then one stacked bar per rank against the HBM capacity and the usable line. Hover a segment for its bytes and its formula. The second tab shows one kind of rank over the allocations of a step.</source>
        <translation>中部：由方案本身得出的方案描述，以及能否容纳；然后是每个 rank 一根堆叠柱，对照 HBM 容量线和可用线。将鼠标悬停在某一段上可查看其字节数和公式。第二个标签页显示一类 rank 在一个训练步的各次分配中的内存变化。</translation>
    </message>
    <message>
        <source>Below: the step&apos;s collectives and its time; Compare, for plans pinned side by side against a baseline; Search, for the layouts of the current model and cluster; the kernel runner, which measures the plan&apos;s kernels on this machine.</source>
        <translation>下方：训练步的集合通信及其时间；对比：将固定的方案并排对照基准；搜索：当前模型与集群的布局；内核运行器：在本机上测量方案的内核。</translation>
    </message>
    <message>
        <source>Glossary</source>
        <translation>术语表</translation>
    </message>
    <message>
        <source>dp, tp, pp, cp, ep</source>
        <translation>dp、tp、pp、cp、ep</translation>
    </message>
    <message>
        <source>Data, tensor, pipeline, context (sequence) and expert parallel degrees; dp fills the rest of the world: world = dp x tp x pp x cp.</source>
        <translation>数据、张量、流水线、上下文（序列）和专家并行度；dp 填满其余部分：world = dp x tp x pp x cp。</translation>
    </message>
    <message>
        <source>SP</source>
        <translation>SP</translation>
    </message>
    <message>
        <source>Megatron sequence parallelism: with tp, norms and residuals are split over the tp group too.</source>
        <translation>Megatron 序列并行：与 tp 一起使用时，norm 和残差也在 tp 组内切分。</translation>
    </message>
    <message>
        <source>DDP, ZeRO-1, ZeRO-2, ZeRO-3 / FSDP</source>
        <translation>DDP、ZeRO-1、ZeRO-2、ZeRO-3 / FSDP</translation>
    </message>
    <message>
        <source>Data parallelism with every state replicated; then sharded optimizer states; plus gradients; plus parameters (gathered layer by layer). The states are sharded over dp x cp ranks.</source>
        <translation>所有状态都复制的数据并行；然后是分片的优化器状态；再加上梯度；再加上参数（逐层聚合）。状态分片在 dp x cp 个 rank 上。</translation>
    </message>
    <message>
        <source>Micro-batch, accumulation</source>
        <translation>微批次、梯度累积</translation>
    </message>
    <message>
        <source>Sequences per forward and backward; micro-batches per optimizer step and DP rank.</source>
        <translation>每次前向与反向的序列数；每个优化器步、每个 DP rank 的微批次数。</translation>
    </message>
    <message>
        <source>Recompute</source>
        <translation>重计算</translation>
    </message>
    <message>
        <source>Activation checkpointing: activations are recomputed in the backward instead of kept (selective: the attention core; full: one checkpoint per layer).</source>
        <translation>激活检查点：激活值在反向时重新计算而不是保留（选择性：注意力核心；完全：每层一个检查点）。</translation>
    </message>
    <message>
        <source>Offload</source>
        <translation>卸载</translation>
    </message>
    <message>
        <source>States or activations kept in host memory and moved over PCIe.</source>
        <translation>状态或激活值保存在主机内存中，经 PCIe 传输。</translation>
    </message>
    <message>
        <source>Runtime reserve</source>
        <translation>运行时预留</translation>
    </message>
    <message>
        <source>Device memory held outside the framework&apos;s allocations: the runtime context, the collective buffers and what the caching allocator reserves beyond what is allocated.</source>
        <translation>框架分配之外占用的设备内存：运行时上下文、集合通信缓冲区，以及缓存分配器在已分配之外预留的部分。</translation>
    </message>
    <message>
        <source>Usable</source>
        <translation>可用</translation>
    </message>
    <message>
        <source>HBM minus the runtime reserve: what the framework can allocate.</source>
        <translation>HBM 减去运行时预留：框架可以分配的内存。</translation>
    </message>
    <message>
        <source>Peak allocated, reserved</source>
        <translation>峰值已分配、已预留</translation>
    </message>
    <message>
        <source>The most the framework holds at one moment of a step, and what the caching allocator has taken from the device to serve it.</source>
        <translation>框架在一个训练步中某一时刻持有的最大内存，以及缓存分配器为此从设备取得的内存。</translation>
    </message>
    <message>
        <source>Exposed communication, bubble</source>
        <translation>暴露的通信、气泡</translation>
    </message>
    <message>
        <source>Collective time not hidden behind compute, and the pipeline&apos;s idle time at the start and end of a step.</source>
        <translation>未被计算掩盖的集合通信时间，以及流水线在训练步开始和结束时的空闲时间。</translation>
    </message>
    <message>
        <source>Tokens/s, MFU, HFU</source>
        <translation>Tokens/s、MFU、HFU</translation>
    </message>
    <message>
        <source>Throughput of the whole cluster; model FLOPs per second over the devices&apos; peak (MFU), and the same with recomputation counted (HFU).</source>
        <translation>整个集群的吞吐量；每秒模型 FLOPs 与设备峰值之比（MFU），以及计入重计算后的同一比值（HFU）。</translation>
    </message>
    <message>
        <source>Baseline</source>
        <translation>基准</translation>
    </message>
    <message>
        <source>In Compare, the pinned plan the others are measured against.</source>
        <translation>在对比中，其他方案与之比较的那个固定方案。</translation>
    </message>
    <message>
        <source>Documentation</source>
        <translation>文档</translation>
    </message>
    <message>
        <source>the memory model: every component, its formula and its sources</source>
        <translation>内存模型：每个组成部分、其公式及出处</translation>
    </message>
    <message>
        <source>collectives, step time and the layout search</source>
        <translation>集合通信、训练步时间与布局搜索</translation>
    </message>
    <message>
        <source>plan files and the command line&apos;s output</source>
        <translation>方案文件与命令行输出</translation>
    </message>
    <message>
        <source>the kernel runner and its worker</source>
        <translation>内核运行器及其 worker</translation>
    </message>
    <message>
        <source>These files are in the docs/ folder of ShardScope&apos;s source.</source>
        <translation>这些文件位于 ShardScope 源码的 docs/ 文件夹中。</translation>
    </message>
</context>
<context>
    <name>shardscope::MemoryChartView</name>
    <message>
        <source>Over HBM capacity</source>
        <translation>超出 HBM 容量</translation>
    </message>
    <message>
        <source>HBM capacity</source>
        <translation>HBM 容量</translation>
    </message>
    <message>
        <source>Usable (HBM minus runtime reserve)</source>
        <translation>可用（HBM 减去运行时预留）</translation>
    </message>
    <message>
        <source>GiB</source>
        <translation>GiB</translation>
    </message>
    <message>
        <source>HBM capacity %1 GiB</source>
        <translation>HBM 容量 %1 GiB</translation>
    </message>
    <message>
        <source>Over capacity</source>
        <translation>超出容量</translation>
    </message>
    <message>
        <source>Usable %1 GiB
(HBM minus runtime reserve)</source>
        <translation>可用 %1 GiB
（HBM 减去运行时预留）</translation>
    </message>
    <message>
        <source>HBM capacity of each bar&apos;s device</source>
        <translation>各柱所在设备的 HBM 容量</translation>
    </message>
    <message>
        <source>Usable, each bar&apos;s own
(HBM minus its runtime reserve)</source>
        <translation>可用，各柱各自的
（HBM 减去其运行时预留）</translation>
    </message>
</context>
<context>
    <name>shardscope::MemoryPanel</name>
    <message>
        <source>Peak of the step</source>
        <translation>整步峰值</translation>
    </message>
    <message>
        <source>Forward</source>
        <translation>前向</translation>
    </message>
    <message>
        <source>Backward</source>
        <translation>反向</translation>
    </message>
    <message>
        <source>Optimizer step</source>
        <translation>优化器步</translation>
    </message>
    <message>
        <source>Show each rank at its own peak, or at the peak of one phase</source>
        <translation>按各 rank 自身峰值显示，或按某一阶段的峰值显示</translation>
    </message>
    <message>
        <source>Hover a segment for its bytes, share and formula.</source>
        <translation>将鼠标悬停在分段上可查看字节数、占比与公式。</translation>
    </message>
    <message>
        <source>HBM per rank at each rank&apos;s peak</source>
        <translation>各 rank 峰值时的 HBM 占用</translation>
    </message>
    <message>
        <source>HBM per rank at the peak of the %1</source>
        <translation>%1峰值时各 rank 的 HBM 占用</translation>
    </message>
    <message>
        <source>ranks (identical ranks grouped)</source>
        <translation>rank（相同的 rank 合并显示）</translation>
    </message>
    <message>
        <source>rank</source>
        <translation>rank</translation>
    </message>
    <message>
        <source>No estimate for this plan.</source>
        <translation>该方案没有估计结果。</translation>
    </message>
    <message>
        <source>Rank %1 needs &lt;b&gt;%2&lt;/b&gt;: %3 allocated at its %4 peak + %5 runtime reserve. Largest part: %6 (%7).</source>
        <translation>Rank %1 需要 &lt;b&gt;%2&lt;/b&gt;：%4峰值时分配 %3 + 运行时预留 %5。最大部分：%6（%7）。</translation>
    </message>
    <message>
        <source>Ranks %1 (%2 identical ranks, stage %3)</source>
        <translation>Rank %1（%2 个相同 rank，阶段 %3）</translation>
    </message>
    <message>
        <source>Rank %1 (stage %2)</source>
        <translation>Rank %1（阶段 %2）</translation>
    </message>
    <message>
        <source>%1 (%2 bytes), %3% of this rank&apos;s %4, %5% of HBM</source>
        <translation>%1（%2 字节），占该 rank %4 的 %3%，占 HBM 的 %5%</translation>
    </message>
    <message>
        <source>Held outside the framework&apos;s allocations: runtime context %1, collective buffers %2 (%3 communicators), allocator overhead %4.</source>
        <translation>框架分配之外占用：运行时上下文 %1，集合通信缓冲区 %2（%3 个通信域），分配器开销 %4。</translation>
    </message>
    <message>
        <source>Formula:</source>
        <translation>公式：</translation>
    </message>
    <message>
        <source>Assumptions:</source>
        <translation>假设：</translation>
    </message>
    <message>
        <source>%1: ranks 0-%2, left to right (hover a bar for its rank)</source>
        <translation>%1：rank 0-%2，从左到右（悬停柱形可查看其 rank）</translation>
    </message>
    <message>
        <source>Name: “%1”</source>
        <translation>名称：“%1”</translation>
    </message>
    <message>
        <source>edited from %1</source>
        <translation>由 %1 编辑而来</translation>
    </message>
    <message>
        <source>&lt;span style=&apos;color:%1; font-weight:bold&apos;&gt;Fits&lt;/span&gt; on %2 (%3 HBM, %4 headroom). %5</source>
        <translation>在 %2 上&lt;span style=&apos;color:%1; font-weight:bold&apos;&gt;可容纳&lt;/span&gt;（HBM %3，余量 %4）。%5</translation>
    </message>
    <message>
        <source>&lt;span style=&apos;color:%1; font-weight:bold&apos;&gt;Does not fit&lt;/span&gt; on %2 (%3 HBM): %4 over. %5</source>
        <translation>在 %2 上&lt;span style=&apos;color:%1; font-weight:bold&apos;&gt;无法容纳&lt;/span&gt;（HBM %3）：超出 %4。%5</translation>
    </message>
    <message>
        <source>Ranks %1 (%2 identical ranks)</source>
        <translation>Rank %1（%2 个相同 rank）</translation>
    </message>
    <message>
        <source>Rank %1</source>
        <translation>Rank %1</translation>
    </message>
    <message>
        <source>This stage holds %1 of the %2 decoder layers.</source>
        <translation>此阶段承载 %2 个解码层中的 %1 个。</translation>
    </message>
</context>
<context>
    <name>shardscope::MemoryTimelinePanel</name>
    <message>
        <source>model build</source>
        <translation>模型构建</translation>
    </message>
    <message>
        <source>first step</source>
        <translation>第一步</translation>
    </message>
    <message>
        <source>steady step</source>
        <translation>稳态步</translation>
    </message>
    <message>
        <source>layer %1</source>
        <translation>第 %1 层</translation>
    </message>
    <message>
        <source>no layer</source>
        <translation>无层</translation>
    </message>
    <message>
        <source>micro-batch %1</source>
        <translation>微批次 %1</translation>
    </message>
    <message>
        <source>step-wide</source>
        <translation>整个训练步</translation>
    </message>
    <message>
        <source>1 rank</source>
        <translation>1 个 rank</translation>
    </message>
    <message>
        <source>%1 ranks</source>
        <translation>%1 个 rank</translation>
    </message>
    <message>
        <source>1 tensor</source>
        <translation>1 个张量</translation>
    </message>
    <message>
        <source>%1 tensors</source>
        <translation>%1 个张量</translation>
    </message>
    <message>
        <source>&amp;Stage:</source>
        <translation>阶段(&amp;S)：</translation>
    </message>
    <message>
        <source>The pipeline stage whose ranks the chart shows</source>
        <translation>图中显示其各 rank 的流水线阶段</translation>
    </message>
    <message>
        <source>Tensors</source>
        <translation>张量</translation>
    </message>
    <message>
        <source>Layers</source>
        <translation>层</translation>
    </message>
    <message>
        <source>Micro-batch</source>
        <translation>微批次</translation>
    </message>
    <message>
        <source>GiB</source>
        <translation>GiB</translation>
    </message>
    <message>
        <source>Share</source>
        <translation>占比</translation>
    </message>
    <message>
        <source>Memory over the step</source>
        <translation>训练步中的显存变化</translation>
    </message>
    <message>
        <source>Stage %1 (%2), %3 peak</source>
        <translation>阶段 %1（%2），峰值 %3</translation>
    </message>
    <message>
        <source>What drives the peak</source>
        <translation>决定峰值的因素</translation>
    </message>
    <message>
        <source>- the tensors alive at the allocated peak (%1), by kind and micro-batch, largest first</source>
        <translation>- 已分配峰值（%1）时存活的张量，按类型和微批次分组，由大到小</translation>
    </message>
    <message>
        <source>%1 (%2): %3, %4 in all; the largest %5 (%6)</source>
        <translation>%1（%2）：%3，共 %4；最大的为 %5（%6）</translation>
    </message>
    <message>
        <source>1 more group</source>
        <translation>另有 1 组</translation>
    </message>
    <message>
        <source>%1 more groups</source>
        <translation>另有 %1 组</translation>
    </message>
    <message>
        <source>%1 in smaller groups</source>
        <translation>较小的组共 %1</translation>
    </message>
    <message>
        <source>No timeline for this plan.</source>
        <translation>此方案没有时间线。</translation>
    </message>
    <message>
        <source>Stage %1 (%2)</source>
        <translation>阶段 %1（%2）</translation>
    </message>
    <message>
        <source>Each rank</source>
        <translation>每个 rank</translation>
    </message>
    <message>
        <source>&lt;b&gt;%1&lt;/b&gt;, steady step: &lt;b&gt;%2&lt;/b&gt; allocated at the peak in the %3 (%4, %5, %6); &lt;b&gt;%7&lt;/b&gt; reserved by the caching allocator.</source>
        <translation>&lt;b&gt;%1&lt;/b&gt;，稳态步：%3中峰值分配 &lt;b&gt;%2&lt;/b&gt;（%4，%5，%6）；缓存分配器保留 &lt;b&gt;%7&lt;/b&gt;。</translation>
    </message>
    <message>
        <source>&lt;b&gt;%1&lt;/b&gt;: no allocations in the steady step.</source>
        <translation>&lt;b&gt;%1&lt;/b&gt;：稳态步中没有分配。</translation>
    </message>
    <message>
        <source>The first step peaks higher, at %1, while the optimizer states come into being.</source>
        <translation>第一步的峰值更高，为 %1：优化器状态在此时创建。</translation>
    </message>
    <message>
        <source>It has %1 of room on the device (HBM minus context and collective buffers).</source>
        <translation>设备上可供分配器使用 %1（HBM 减去上下文与集合通信缓冲区）。</translation>
    </message>
    <message>
        <source>Import measured...</source>
        <translation>导入实测数据...</translation>
    </message>
    <message>
        <source>Overlay a memory snapshot recorded on a device: torch.cuda.memory._dump_snapshot() or torch_npu&apos;s (a pickle, converted by the Python worker), or the JSON the runner&apos;s memory probe writes</source>
        <translation>叠加在设备上记录的显存快照：torch.cuda.memory._dump_snapshot() 或 torch_npu 的对应快照（pickle 文件，由 Python worker 转换），或运行器显存探针写出的 JSON</translation>
    </message>
    <message>
        <source>Import a memory snapshot</source>
        <translation>导入显存快照</translation>
    </message>
    <message>
        <source>Memory snapshots (*.json *.pickle *.pkl);;All files (*)</source>
        <translation>显存快照 (*.json *.pickle *.pkl);;所有文件 (*)</translation>
    </message>
    <message>
        <source>%1: python3 could not convert it (%2)</source>
        <translation>%1：python3 无法转换该文件（%2）</translation>
    </message>
    <message>
        <source>Remove measured</source>
        <translation>移除实测数据</translation>
    </message>
    <message>
        <source>&lt;span style=&apos;color:%1; font-weight:bold&apos;&gt;Runs out of memory&lt;/span&gt; on the device in the %2, allocating %3 (%4).</source>
        <translation>在设备上于%2中&lt;span style=&apos;color:%1; font-weight:bold&apos;&gt;内存不足&lt;/span&gt;，当时正在分配 %3（%4）。</translation>
    </message>
    <message>
        <source>%1 %2</source>
        <translation>%1 %2</translation>
    </message>
    <message>
        <source>After the step &lt;b&gt;%1&lt;/b&gt; stays allocated: %2.</source>
        <translation>训练步结束后仍占用 &lt;b&gt;%1&lt;/b&gt;：%2。</translation>
    </message>
    <message>
        <source>, </source>
        <translation>、</translation>
    </message>
    <message>
        <source>GEMM library workspaces</source>
        <translation>GEMM 库工作区</translation>
    </message>
</context>
<context>
    <name>shardscope::MemoryTimelineView</name>
    <message>
        <source>Peak %1</source>
        <translation>峰值 %1</translation>
    </message>
    <message>
        <source>Reserved by the allocator, peak %1</source>
        <translation>分配器保留的显存，峰值 %1</translation>
    </message>
    <message>
        <source>Event %1 of %2, %3</source>
        <translation>第 %1 个事件（共 %2），%3</translation>
    </message>
    <message>
        <source>allocated peak of the step</source>
        <translation>训练步的已分配峰值</translation>
    </message>
    <message>
        <source>Allocates %1</source>
        <translation>分配 %1</translation>
    </message>
    <message>
        <source>Frees %1</source>
        <translation>释放 %1</translation>
    </message>
    <message>
        <source>%1, %2: %3</source>
        <translation>%1，%2：%3</translation>
    </message>
    <message>
        <source>Allocated in the %1</source>
        <translation>分配于%1</translation>
    </message>
    <message>
        <source>After it: %1 allocated, %2 reserved</source>
        <translation>此后：已分配 %1，已保留 %2</translation>
    </message>
    <message>
        <source>No timeline for this plan.</source>
        <translation>此方案没有时间线。</translation>
    </message>
    <message>
        <source>GiB</source>
        <translation>GiB</translation>
    </message>
    <message>
        <source>HBM %1</source>
        <translation>HBM %1</translation>
    </message>
    <message>
        <source>usable %1</source>
        <translation>可用 %1</translation>
    </message>
    <message>
        <source>Allocations and frees of one steady step (event index)</source>
        <translation>一个稳态训练步的分配与释放（事件序号）</translation>
    </message>
    <message>
        <source>- 1 alike micro-batch left out</source>
        <translation>- 省略了 1 个相同的微批次</translation>
    </message>
    <message>
        <source>- %1 alike micro-batches left out</source>
        <translation>- 省略了 %1 个相同的微批次</translation>
    </message>
    <message>
        <source>Measured allocated, peak %1</source>
        <translation>实测分配量，峰值 %1</translation>
    </message>
    <message>
        <source>Measured reserved, peak %1</source>
        <translation>实测保留量，峰值 %1</translation>
    </message>
    <message>
        <source>Formula:</source>
        <translation>公式：</translation>
    </message>
</context>
<context>
    <name>shardscope::PlanDocument</name>
    <message>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
    <message>
        <source>Untitled</source>
        <translation>未命名</translation>
    </message>
    <message>
        <source>The plan has no file yet</source>
        <translation>该方案尚未保存为文件</translation>
    </message>
</context>
<context>
    <name>shardscope::PlanEditor</name>
    <message>
        <source>%1T parameters</source>
        <translation>%1T 参数</translation>
    </message>
    <message>
        <source>%1B parameters</source>
        <translation>%1B 参数</translation>
    </message>
    <message>
        <source>none (no separate copy)</source>
        <translation>无（不单独保存副本）</translation>
    </message>
    <message>
        <source>Not applied: %1</source>
        <translation>未应用：%1</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>&amp;Name</source>
        <translation>名称(&amp;N)</translation>
    </message>
    <message>
        <source>Rename plan</source>
        <translation>重命名方案</translation>
    </message>
    <message>
        <source>Custom shape</source>
        <translation>自定义结构</translation>
    </message>
    <message>
        <source>&amp;Preset</source>
        <translation>预设(&amp;P)</translation>
    </message>
    <message>
        <source>Choose model %1</source>
        <translation>选择模型 %1</translation>
    </message>
    <message>
        <source>Si&amp;ze</source>
        <translation>规模(&amp;Z)</translation>
    </message>
    <message>
        <source>Resize model</source>
        <translation>调整模型规模</translation>
    </message>
    <message>
        <source>Edit model shape</source>
        <translation>编辑模型结构</translation>
    </message>
    <message>
        <source>Layers</source>
        <translation>层数</translation>
    </message>
    <message>
        <source>Hidden size</source>
        <translation>隐藏维度</translation>
    </message>
    <message>
        <source>Attention heads</source>
        <translation>注意力头数</translation>
    </message>
    <message>
        <source>KV heads</source>
        <translation>KV 头数</translation>
    </message>
    <message>
        <source>Head dim</source>
        <translation>头维度</translation>
    </message>
    <message>
        <source>FFN width</source>
        <translation>FFN 宽度</translation>
    </message>
    <message>
        <source>Vocabulary</source>
        <translation>词表</translation>
    </message>
    <message>
        <source>Training</source>
        <translation>训练</translation>
    </message>
    <message>
        <source>Sequence length, powers of two from 512 to 1M tokens</source>
        <translation>序列长度，2 的幂，512 到 1M tokens</translation>
    </message>
    <message>
        <source> tokens</source>
        <translation> tokens</translation>
    </message>
    <message>
        <source>Se&amp;quence</source>
        <translation>序列(&amp;Q)</translation>
    </message>
    <message>
        <source>Set sequence length</source>
        <translation>设置序列长度</translation>
    </message>
    <message>
        <source>&amp;Micro-batch</source>
        <translation>微批大小(&amp;M)</translation>
    </message>
    <message>
        <source>Set micro-batch</source>
        <translation>设置微批大小</translation>
    </message>
    <message>
        <source>Micro-batches per optimizer step and data-parallel rank</source>
        <translation>每个优化器步、每个数据并行 rank 的微批数</translation>
    </message>
    <message>
        <source>Gradient accumulation</source>
        <translation>梯度累积</translation>
    </message>
    <message>
        <source>Set gradient accumulation</source>
        <translation>设置梯度累积</translation>
    </message>
    <message>
        <source>Precision</source>
        <translation>精度</translation>
    </message>
    <message>
        <source>Change precision</source>
        <translation>修改精度</translation>
    </message>
    <message>
        <source>Parameters</source>
        <translation>参数</translation>
    </message>
    <message>
        <source>Gradients</source>
        <translation>梯度</translation>
    </message>
    <message>
        <source>Master weights</source>
        <translation>主权重</translation>
    </message>
    <message>
        <source>Optimizer states</source>
        <translation>优化器状态</translation>
    </message>
    <message>
        <source>Compute</source>
        <translation>计算</translation>
    </message>
    <message>
        <source>Optimizer</source>
        <translation>优化器</translation>
    </message>
    <message>
        <source>Change optimizer</source>
        <translation>修改优化器</translation>
    </message>
    <message>
        <source>Parallel layout</source>
        <translation>并行布局</translation>
    </message>
    <message>
        <source>Data parallelism fills the rest: dp = world / (tp x pp x cp)</source>
        <translation>数据并行占满其余设备：dp = world / (tp x pp x cp)</translation>
    </message>
    <message>
        <source>Data parallel (dp)</source>
        <translation>数据并行 (dp)</translation>
    </message>
    <message>
        <source>Set %1 to %2</source>
        <translation>将 %1 设为 %2</translation>
    </message>
    <message>
        <source>&amp;Tensor parallel (tp)</source>
        <translation>张量并行 (tp)(&amp;T)</translation>
    </message>
    <message>
        <source>P&amp;ipeline parallel (pp)</source>
        <translation>流水线并行 (pp)(&amp;I)</translation>
    </message>
    <message>
        <source>&amp;Context parallel (cp)</source>
        <translation>上下文并行 (cp)(&amp;C)</translation>
    </message>
    <message>
        <source>&amp;Expert parallel (ep)</source>
        <translation>专家并行 (ep)(&amp;E)</translation>
    </message>
    <message>
        <source>none (DDP)</source>
        <translation>无（DDP）</translation>
    </message>
    <message>
        <source>optimizer states (ZeRO-1)</source>
        <translation>优化器状态（ZeRO-1）</translation>
    </message>
    <message>
        <source>+ gradients (ZeRO-2)</source>
        <translation>+ 梯度（ZeRO-2）</translation>
    </message>
    <message>
        <source>+ parameters (ZeRO-3 / FSDP)</source>
        <translation>+ 参数（ZeRO-3 / FSDP）</translation>
    </message>
    <message>
        <source>Change sharding</source>
        <translation>修改分片</translation>
    </message>
    <message>
        <source>Sequence parallelism (with tp)</source>
        <translation>序列并行（配合 tp）</translation>
    </message>
    <message>
        <source>Enable sequence parallelism</source>
        <translation>启用序列并行</translation>
    </message>
    <message>
        <source>Disable sequence parallelism</source>
        <translation>关闭序列并行</translation>
    </message>
    <message>
        <source>Memory</source>
        <translation>显存</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>selective (attention core)</source>
        <translation>选择性（注意力核心）</translation>
    </message>
    <message>
        <source>full (one checkpoint per layer)</source>
        <translation>完全（每层一个检查点）</translation>
    </message>
    <message>
        <source>&amp;Recompute</source>
        <translation>重计算(&amp;R)</translation>
    </message>
    <message>
        <source>Change recompute</source>
        <translation>修改重计算</translation>
    </message>
    <message>
        <source>flash (fused)</source>
        <translation>flash（融合）</translation>
    </message>
    <message>
        <source>eager (scores materialized)</source>
        <translation>eager（显式保存得分矩阵）</translation>
    </message>
    <message>
        <source>&amp;Attention</source>
        <translation>注意力(&amp;A)</translation>
    </message>
    <message>
        <source>Change attention</source>
        <translation>修改注意力实现</translation>
    </message>
    <message>
        <source>Change offload</source>
        <translation>修改卸载</translation>
    </message>
    <message>
        <source>Offload optimizer states to host</source>
        <translation>将优化器状态卸载到主机</translation>
    </message>
    <message>
        <source>Offload parameters to host</source>
        <translation>将参数卸载到主机</translation>
    </message>
    <message>
        <source>Offload gradients to host</source>
        <translation>将梯度卸载到主机</translation>
    </message>
    <message>
        <source>Offload activations to host</source>
        <translation>将激活值卸载到主机</translation>
    </message>
    <message>
        <source>Framework and cluster</source>
        <translation>框架与集群</translation>
    </message>
    <message>
        <source>&amp;Framework</source>
        <translation>框架(&amp;F)</translation>
    </message>
    <message>
        <source>Change framework</source>
        <translation>修改框架</translation>
    </message>
    <message>
        <source>&amp;Device</source>
        <translation>设备(&amp;D)</translation>
    </message>
    <message>
        <source>Change device</source>
        <translation>修改设备</translation>
    </message>
    <message>
        <source>Devices per node</source>
        <translation>每节点设备数</translation>
    </message>
    <message>
        <source>Change devices per node</source>
        <translation>修改每节点设备数</translation>
    </message>
    <message>
        <source>&amp;Nodes</source>
        <translation>节点数(&amp;N)</translation>
    </message>
    <message>
        <source>Change node count</source>
        <translation>修改节点数</translation>
    </message>
    <message>
        <source>World: %1 devices = dp %2 x tp %3 x pp %4 x cp %5</source>
        <translation>总计：%1 个设备 = dp %2 x tp %3 x pp %4 x cp %5</translation>
    </message>
    <message>
        <source>%1 = %2: %3</source>
        <translation>%1 = %2：%3</translation>
    </message>
    <message>
        <source>Every divisor of the world size is possible</source>
        <translation>world 大小的每个因数都可选</translation>
    </message>
    <message>
        <source>Not possible:
%1</source>
        <translation>不可选：
%1</translation>
    </message>
    <message>
        <source>%1
Not possible now: %2</source>
        <translation>%1
当前不可选：%2</translation>
    </message>
    <message>
        <source>Megatron sequence parallelism: splits norm and residual activations over the tp group</source>
        <translation>Megatron 序列并行：在 tp 组内切分 norm 与残差激活值</translation>
    </message>
    <message>
        <source>Keep optimizer states in host memory</source>
        <translation>将优化器状态保存在主机内存中</translation>
    </message>
    <message>
        <source>Keep parameters in host memory, gathered layer by layer</source>
        <translation>将参数保存在主机内存中，逐层聚合</translation>
    </message>
    <message>
        <source>Move gradients to host memory</source>
        <translation>将梯度移到主机内存</translation>
    </message>
    <message>
        <source>Move saved activations to host memory</source>
        <translation>将保存的激活值移到主机内存</translation>
    </message>
    <message>
        <source>SwiGLU (Llama)</source>
        <translation>SwiGLU（Llama）</translation>
    </message>
    <message>
        <source>GELU (GPT)</source>
        <translation>GELU（GPT）</translation>
    </message>
    <message>
        <source>FFN &amp;kind</source>
        <translation>FFN 类型(&amp;K)</translation>
    </message>
    <message>
        <source>Change FFN kind</source>
        <translation>修改 FFN 类型</translation>
    </message>
    <message>
        <source>Width of the dense FFN; an MoE model uses the expert FFN width instead</source>
        <translation>稠密 FFN 的宽度；MoE 模型改用专家 FFN 宽度</translation>
    </message>
    <message>
        <source>Mi&amp;xture of experts (MoE)</source>
        <translation>混合专家（MoE）(&amp;X)</translation>
    </message>
    <message>
        <source>Turn on mixture of experts</source>
        <translation>启用混合专家</translation>
    </message>
    <message>
        <source>Turn off mixture of experts</source>
        <translation>关闭混合专家</translation>
    </message>
    <message>
        <source>Experts per &amp;layer</source>
        <translation>每层专家数(&amp;L)</translation>
    </message>
    <message>
        <source>T&amp;op-k</source>
        <translation>Top-k(&amp;O)</translation>
    </message>
    <message>
        <source>Expert FFN &amp;width</source>
        <translation>专家 FFN 宽度(&amp;W)</translation>
    </message>
    <message>
        <source>1F1B</source>
        <translation>1F1B</translation>
    </message>
    <message>
        <source>interleaved 1F1B</source>
        <translation>交错式 1F1B</translation>
    </message>
    <message>
        <source>GPipe</source>
        <translation>GPipe</translation>
    </message>
    <message>
        <source>Pipeline sc&amp;hedule</source>
        <translation>流水线调度(&amp;H)</translation>
    </message>
    <message>
        <source>Change pipeline schedule</source>
        <translation>修改流水线调度</translation>
    </message>
    <message>
        <source>Virt&amp;ual stages</source>
        <translation>虚拟阶段(&amp;U)</translation>
    </message>
    <message>
        <source>virtual stages</source>
        <translation>虚拟阶段</translation>
    </message>
    <message>
        <source>Dense model: turn on mixture of experts first</source>
        <translation>稠密模型：请先启用混合专家</translation>
    </message>
    <message>
        <source>Routed experts in every layer; ep must divide it</source>
        <translation>每层的路由专家数；ep 必须整除它</translation>
    </message>
    <message>
        <source>Experts each token is routed to</source>
        <translation>每个 token 路由到的专家数</translation>
    </message>
    <message>
        <source>FFN width of one expert</source>
        <translation>单个专家的 FFN 宽度</translation>
    </message>
    <message>
        <source>%1
%2</source>
        <translation>%1
%2</translation>
    </message>
    <message>
        <source>Model chunks per pipeline stage (interleaved 1F1B); pp x virtual stages divides the layers</source>
        <translation>每个流水线阶段上的模型块数（交错式 1F1B）；pp x 虚拟阶段数须整除层数</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
    <message>
        <source>1F1B: each stage alternates one forward and one backward
interleaved 1F1B: each stage holds several model chunks (virtual stages), a smaller bubble for more communication
GPipe: all forwards, then all backwards</source>
        <translation>1F1B：每个阶段交替执行一次前向与一次反向
交错式 1F1B：每个阶段持有多个模型块（虚拟阶段），气泡更小，通信更多
GPipe：先执行全部前向，再执行全部反向</translation>
    </message>
    <message>
        <source>%1
Not possible now:
%2</source>
        <translation>%1
当前不可选：
%2</translation>
    </message>
    <message>
        <source>Replace the dense FFN of every layer by routed experts (Mixtral style)</source>
        <translation>用路由专家替换每层的稠密 FFN（Mixtral 式）</translation>
    </message>
    <message>
        <source>Training method</source>
        <translation>训练方式</translation>
    </message>
    <message>
        <source>full training</source>
        <translation>全量训练</translation>
    </message>
    <message>
        <source>LoRA</source>
        <translation>LoRA</translation>
    </message>
    <message>
        <source>DoRA</source>
        <translation>DoRA</translation>
    </message>
    <message>
        <source>QLoRA (k-bit base)</source>
        <translation>QLoRA（k 比特基座）</translation>
    </message>
    <message>
        <source>freeze (train the last layers)</source>
        <translation>冻结（只训练最后几层）</translation>
    </message>
    <message>
        <source>Me&amp;thod</source>
        <translation>方式(&amp;T)</translation>
    </message>
    <message>
        <source>Change training method</source>
        <translation>更改训练方式</translation>
    </message>
    <message>
        <source>Adapter ran&amp;k</source>
        <translation>适配器秩(&amp;K)</translation>
    </message>
    <message>
        <source>Set adapter rank</source>
        <translation>设置适配器秩</translation>
    </message>
    <message>
        <source>q, v (PEFT&apos;s default)</source>
        <translation>q、v（PEFT 默认）</translation>
    </message>
    <message>
        <source>q, k, v, o (attention)</source>
        <translation>q、k、v、o（注意力）</translation>
    </message>
    <message>
        <source>all linear layers</source>
        <translation>所有线性层</translation>
    </message>
    <message>
        <source>Adapted layers</source>
        <translation>适配的层</translation>
    </message>
    <message>
        <source>Set adapted layers</source>
        <translation>设置适配的层</translation>
    </message>
    <message>
        <source>NF4</source>
        <translation>NF4</translation>
    </message>
    <message>
        <source>FP4</source>
        <translation>FP4</translation>
    </message>
    <message>
        <source>int8 (LLM.int8())</source>
        <translation>int8（LLM.int8()）</translation>
    </message>
    <message>
        <source>Base &amp;quantization</source>
        <translation>基座量化(&amp;Q)</translation>
    </message>
    <message>
        <source>Set base quantization</source>
        <translation>设置基座量化</translation>
    </message>
    <message>
        <source>Trained last layers</source>
        <translation>训练最后几层</translation>
    </message>
    <message>
        <source>Set trained layers</source>
        <translation>设置训练层数</translation>
    </message>
    <message>
        <source>the framework&apos;s</source>
        <translation>框架默认</translation>
    </message>
    <message>
        <source>Hugging Face (fp32 logits)</source>
        <translation>Hugging Face（fp32 logits）</translation>
    </message>
    <message>
        <source>Megatron fused cross entropy</source>
        <translation>Megatron 融合交叉熵</translation>
    </message>
    <message>
        <source>chunked cross entropy (torchtune)</source>
        <translation>分块交叉熵（torchtune）</translation>
    </message>
    <message>
        <source>fused linear cross entropy (Liger)</source>
        <translation>融合线性交叉熵（Liger）</translation>
    </message>
    <message>
        <source>&amp;Loss head</source>
        <translation>损失头(&amp;L)</translation>
    </message>
    <message>
        <source>Change loss head</source>
        <translation>更改损失头</translation>
    </message>
    <message>
        <source>Trained</source>
        <translation>训练参数</translation>
    </message>
    <message>
        <source>Set trained parts</source>
        <translation>设置训练的部分</translation>
    </message>
    <message>
        <source>Trained parts</source>
        <translation>训练的部分</translation>
    </message>
    <message>
        <source>embedding</source>
        <translation>嵌入层</translation>
    </message>
    <message>
        <source>head</source>
        <translation>输出头</translation>
    </message>
    <message>
        <source>norms</source>
        <translation>归一化层</translation>
    </message>
    <message>
        <source>attention</source>
        <translation>注意力</translation>
    </message>
    <message>
        <source>FFN</source>
        <translation>FFN</translation>
    </message>
    <message>
        <source>experts</source>
        <translation>专家</translation>
    </message>
    <message>
        <source>Fully trained</source>
        <translation>完整训练</translation>
    </message>
    <message>
        <source>%1 of %2 (%3%)</source>
        <translation>%2 中的 %1（%3%）</translation>
    </message>
    <message>
        <source>Expandable segments</source>
        <translation>可扩展段</translation>
    </message>
    <message>
        <source>expandable_segments:True in PYTORCH_CUDA_ALLOC_CONF / PYTORCH_NPU_ALLOC_CONF: segments grow page by page instead of one per miss, which leaves less memory reserved and unused</source>
        <translation>PYTORCH_CUDA_ALLOC_CONF / PYTORCH_NPU_ALLOC_CONF 中的 expandable_segments:True：段按页逐步增长，而不是每次未命中新建一个段，保留而未使用的显存更少</translation>
    </message>
    <message>
        <source>Change allocator</source>
        <translation>更改分配器设置</translation>
    </message>
    <message>
        <source> MiB</source>
        <translation> MiB</translation>
    </message>
    <message>
        <source>no limit</source>
        <translation>不限</translation>
    </message>
    <message>
        <source>max_split_size_mb: cached blocks this large are not split for smaller requests (above 20 MiB, or no limit)</source>
        <translation>max_split_size_mb：不小于此大小的缓存块不会为更小的请求而切分（须大于 20 MiB，或不限）</translation>
    </message>
    <message>
        <source>Max &amp;split size</source>
        <translation>最大切分大小(&amp;S)</translation>
    </message>
    <message>
        <source>off</source>
        <translation>关</translation>
    </message>
    <message>
        <source>garbage_collection_threshold: beyond this fraction of the usable memory, cached segments unused longest are released before a new one is reserved</source>
        <translation>garbage_collection_threshold：保留量超过可用显存的这一比例时，先释放最久未用的缓存段，再保留新段</translation>
    </message>
    <message>
        <source>Allocator &amp;GC threshold</source>
        <translation>分配器 GC 阈值(&amp;G)</translation>
    </message>
    <message>
        <source>squared ReLU (Nemotron)</source>
        <translation>平方 ReLU（Nemotron）</translation>
    </message>
    <message>
        <source>The feed-forward block of every layer: SwiGLU (gate, up and down projections) or a non-gated GELU or squared ReLU (two projections); choosing GELU also picks the GPT family&apos;s LayerNorm and biases, which the fields below change</source>
        <translation>每层的前馈块：SwiGLU（gate、up、down 三个投影），或无门控的 GELU、平方 ReLU（两个投影）；选择 GELU 时同时选用 GPT 系列的 LayerNorm 与偏置，可在下方字段中修改</translation>
    </message>
    <message>
        <source>framework&apos;s</source>
        <translation>框架默认</translation>
    </message>
    <message>
        <source>Set dropout</source>
        <translation>设置 dropout</translation>
    </message>
    <message>
        <source>Hidden dropout</source>
        <translation>隐藏层 dropout</translation>
    </message>
    <message>
        <source>Attention dropout</source>
        <translation>注意力 dropout</translation>
    </message>
    <message>
        <source>Expert tensor parallel (etp)</source>
        <translation>专家张量并行（etp）</translation>
    </message>
    <message>
        <source>Multi-head latent attention: one key and value per head</source>
        <translation>多头潜在注意力：每个头各有键与值</translation>
    </message>
    <message>
        <source>Fewer than the heads for grouped-query attention</source>
        <translation>少于注意力头数即为分组查询注意力</translation>
    </message>
    <message>
        <source>Multi-head latent attention: q/k head without rope + with rope</source>
        <translation>多头潜在注意力：q/k 头宽 = 无 rope 部分 + rope 部分</translation>
    </message>
    <message>
        <source>Width of one attention head</source>
        <translation>一个注意力头的宽度</translation>
    </message>
    <message>
        <source>Saved masks: one byte per element after attention and after the FFN (hidden), per score under eager attention. Now %1 (the lowest value: the framework profile&apos;s)</source>
        <translation>保存的掩码：注意力与 FFN 之后每个元素一个字节（隐藏层），eager 注意力下每个分数一个字节。当前 %1（最小值表示采用框架配置的默认值）</translation>
    </message>
    <message>
        <source>Tensor parallelism inside each expert; experts&apos; data parallelism is world / (ep x etp x pp)</source>
        <translation>专家内部的张量并行；专家的数据并行度为 world / (ep × etp × pp)</translation>
    </message>
    <message>
        <source>as tp</source>
        <translation>同 tp</translation>
    </message>
    <message>
        <source>&amp;Sharding over dp x cp</source>
        <translation>在 dp x cp 上分片(&amp;S)</translation>
    </message>
    <message>
        <source>ZeRO and FSDP shard the model states over the dp x cp = %1 ranks of a model replica&apos;s data and context groups</source>
        <translation>ZeRO 与 FSDP 将模型状态分片到数据并行组与上下文并行组的 dp x cp = %1 个 rank 上</translation>
    </message>
    <message>
        <source>Shards nothing here: the states are sharded over dp x cp ranks, and dp x cp = 1. Raise dp or cp, or choose none.</source>
        <translation>此处不会分片任何内容：状态分片在 dp x cp 个 rank 上，而这里 dp x cp = 1。请增大 dp 或 cp，或选择“无”。</translation>
    </message>
    <message>
        <source>ring (Megatron)</source>
        <translation>环形（Megatron）</translation>
    </message>
    <message>
        <source>Ulysses (all-to-all over heads)</source>
        <translation>Ulysses（按头 all-to-all）</translation>
    </message>
    <message>
        <source>hybrid (Ulysses inside, ring across)</source>
        <translation>混合（组内 Ulysses，组间环形）</translation>
    </message>
    <message>
        <source>CP algorithm</source>
        <translation>CP 算法</translation>
    </message>
    <message>
        <source>Change context-parallel algorithm</source>
        <translation>更改上下文并行算法</translation>
    </message>
    <message>
        <source>Ulysses group (hybrid)</source>
        <translation>Ulysses 组（混合）</translation>
    </message>
    <message>
        <source>Ulysses group</source>
        <translation>Ulysses 组</translation>
    </message>
    <message>
        <source>Ranks of each Ulysses group inside cp; a ring of cp / group across them</source>
        <translation>cp 内每个 Ulysses 组的 rank 数；组间为 cp / 组大小 个 rank 的环</translation>
    </message>
    <message>
        <source>Applies to the hybrid algorithm</source>
        <translation>仅适用于混合算法</translation>
    </message>
    <message>
        <source>Shard group (HSDP)</source>
        <translation>分片组（HSDP）</translation>
    </message>
    <message>
        <source>Shard the states within groups of this many data-parallel ranks and replicate them across the groups (HSDP, hierarchical ZeRO)</source>
        <translation>在这么多个数据并行 rank 组成的组内分片状态，并在组之间复制（HSDP、分层 ZeRO）</translation>
    </message>
    <message>
        <source>all of dp</source>
        <translation>整个 dp</translation>
    </message>
    <message>
        <source>uniform (groups of layers)</source>
        <translation>uniform（按层分组）</translation>
    </message>
    <message>
        <source>block (the first layers of each chunk)</source>
        <translation>block（每个模型块的前若干层）</translation>
    </message>
    <message>
        <source>Recompute method</source>
        <translation>重计算方法</translation>
    </message>
    <message>
        <source>Recompute layers</source>
        <translation>重计算层数</translation>
    </message>
    <message>
        <source>Recompute the norms (MindSpeed)</source>
        <translation>重计算归一化（MindSpeed）</translation>
    </message>
    <message>
        <source>Applies to full recompute (Megatron&apos;s --recompute-method)</source>
        <translation>仅适用于全量重计算（Megatron 的 --recompute-method）</translation>
    </message>
    <message>
        <source>uniform: checkpoint groups of the given layers; block: recompute only the first layers of each chunk</source>
        <translation>uniform：按给定层数分组设置检查点；block：只重计算每个模型块的前若干层</translation>
    </message>
    <message>
        <source>Layers per group (uniform) or recomputed per chunk (block)</source>
        <translation>每组层数（uniform）或每个模型块重计算的层数（block）</translation>
    </message>
    <message>
        <source>Full recompute recomputes everything already</source>
        <translation>全量重计算已重计算全部内容</translation>
    </message>
    <message>
        <source>The norms&apos; outputs are recomputed from their inputs in backward</source>
        <translation>反向时由输入重新计算归一化的输出</translation>
    </message>
    <message>
        <source>Model size, log scale from 0.5B to 1T parameters: Llama-family shapes with 128-wide heads in multiples of 8, 8 KV heads from 30B up, which tp %1 divides</source>
        <translation>模型规模，对数刻度，0.5B 到 1T 参数：Llama 系列结构，头宽 128、头数为 8 的倍数，30B 起 8 个 KV 头，均可被 tp %1 整除</translation>
    </message>
    <message>
        <source>even</source>
        <translation>均匀</translation>
    </message>
    <message>
        <source>Layers per stage</source>
        <translation>每阶段层数</translation>
    </message>
    <message>
        <source>layers per stage: a list of whole numbers, one per stage, such as 7, 8, 8, 8</source>
        <translation>每阶段层数：应为整数列表，每个阶段一个，例如 7, 8, 8, 8</translation>
    </message>
    <message>
        <source>Set layers per stage</source>
        <translation>设置每阶段层数</translation>
    </message>
    <message>
        <source>First stage layers</source>
        <translation>首阶段层数</translation>
    </message>
    <message>
        <source>Set first stage layers</source>
        <translation>设置首阶段层数</translation>
    </message>
    <message>
        <source>Last stage layers</source>
        <translation>末阶段层数</translation>
    </message>
    <message>
        <source>Set last stage layers</source>
        <translation>设置末阶段层数</translation>
    </message>
    <message>
        <source>Change layer layout</source>
        <translation>更改层划分</translation>
    </message>
    <message>
        <source>Embedding counts as a layer</source>
        <translation>嵌入层计为一层</translation>
    </message>
    <message>
        <source>Loss counts as a layer</source>
        <translation>损失计为一层</translation>
    </message>
    <message>
        <source>even: %1</source>
        <translation>均匀：%1</translation>
    </message>
    <message>
        <source>Applies with pipeline parallelism (pp &gt;= 2)</source>
        <translation>需要流水线并行（pp &gt;= 2）</translation>
    </message>
    <message>
        <source>Decoder layers of each stage, comma-separated (MindSpeed-LLM&apos;s --num-layer-list; no virtual stages); empty: the even split</source>
        <translation>各阶段的解码层数，以逗号分隔（MindSpeed-LLM 的 --num-layer-list；不可与虚拟阶段同用）；留空：均匀划分</translation>
    </message>
    <message>
        <source>Megatron-Core&apos;s --decoder-first/last-pipeline-num-layers: this stage holds that many layers, the rest split evenly over the others; each a multiple of the virtual stages</source>
        <translation>Megatron-Core 的 --decoder-first/last-pipeline-num-layers：此阶段承载这么多层，其余层在其他阶段间均分；每个值须为虚拟阶段数的倍数</translation>
    </message>
    <message>
        <source>Change communication overlap</source>
        <translation>修改通信重叠</translation>
    </message>
    <message>
        <source>framework default</source>
        <translation>框架默认</translation>
    </message>
    <message>
        <source>The vocabulary is padded to a multiple of this x tp (Megatron&apos;s --make-vocab-size-divisible-by, 128); 1: not padded</source>
        <translation>词表填充到此值 x tp 的倍数（Megatron 的 --make-vocab-size-divisible-by，默认 128）；1：不填充</translation>
    </message>
    <message>
        <source>Change vocabulary padding</source>
        <translation>修改词表填充</translation>
    </message>
    <message>
        <source>Megatron&apos;s --overlap-grad-reduce: gradients reduced bucket by bucket during backward; off: one bucket after backward, not hidden</source>
        <translation>Megatron 的 --overlap-grad-reduce：反向过程中逐桶归约梯度；关闭时反向结束后作为一个桶归约，无法隐藏</translation>
    </message>
    <message>
        <source>Megatron&apos;s --overlap-param-gather: the updated parameter shards all-gathered bucket by bucket in the next forward (distributed optimizer)</source>
        <translation>Megatron 的 --overlap-param-gather：更新过的参数分片在下一次前向中逐桶 all-gather（分布式优化器）</translation>
    </message>
    <message>
        <source> B</source>
        <translation> B</translation>
    </message>
    <message>
        <source>MindSpeed&apos;s --param-and-grad-buffer-pad (512 on Ascend): each shard of a distributed-optimizer bucket starts on this many bytes</source>
        <translation>MindSpeed 的 --param-and-grad-buffer-pad（昇腾上为 512）：分布式优化器桶的每个分片从该字节数对齐处开始</translation>
    </message>
    <message>
        <source>Buffer pad (MindSpeed)</source>
        <translation>缓冲区填充（MindSpeed）</translation>
    </message>
    <message>
        <source>Change buffer pad</source>
        <translation>修改缓冲区填充</translation>
    </message>
    <message>
        <source>Megatron-Core&apos;s --account-for-embedding/loss-in-pipeline-split: counted as one layer in the split, the first (last) stage builds one decoder layer fewer</source>
        <translation>Megatron-Core 的 --account-for-embedding/loss-in-pipeline-split：在划分中计为一层，首（末）阶段少构建一个解码层</translation>
    </message>
    <message>
        <source>ZeRO++ hpZ group</source>
        <translation>ZeRO++ hpZ 组</translation>
    </message>
    <message>
        <source> MB</source>
        <translation> MB</translation>
    </message>
    <message>
        <source>profile</source>
        <translation>设备配置</translation>
    </message>
    <message>
        <source>HCCL_BUFFSIZE: every communicator holds an input and an output buffer of this size (200 MB by default)</source>
        <translation>HCCL_BUFFSIZE：每个通信域持有此大小的一个输入缓冲区和一个输出缓冲区（默认 200 MB）</translation>
    </message>
    <message>
        <source>HCCL buffer size</source>
        <translation>HCCL 缓冲区大小</translation>
    </message>
    <message>
        <source>Change HCCL buffer size</source>
        <translation>修改 HCCL 缓冲区大小</translation>
    </message>
    <message>
        <source>none, such as dp:200;tp:300</source>
        <translation>无，例如 dp:200;tp:300</translation>
    </message>
    <message>
        <source>MindSpeed&apos;s --hccl-group-buffer: the HCCL buffer size of named groups in MB (dp, dp_cp, tp, pp, cp, cp_ulysses, cp_ring, exp, embd, ...)</source>
        <translation>MindSpeed 的 --hccl-group-buffer：指定通信组的 HCCL 缓冲区大小，单位 MB（dp、dp_cp、tp、pp、cp、cp_ulysses、cp_ring、exp、embd 等）</translation>
    </message>
    <message>
        <source>HCCL buffer per group</source>
        <translation>各通信组的 HCCL 缓冲区</translation>
    </message>
    <message>
        <source>HCCL buffer per group: %1</source>
        <translation>各通信组的 HCCL 缓冲区：%1</translation>
    </message>
    <message>
        <source>Set HCCL buffer per group</source>
        <translation>设置各通信组的 HCCL 缓冲区</translation>
    </message>
    <message>
        <source>MindSpeed&apos;s --hccl-group-buffer-adaptive: the tp, pp, cp and ep groups&apos; buffers sized from the largest message they carry</source>
        <translation>MindSpeed 的 --hccl-group-buffer-adaptive：tp、pp、cp 与 ep 组的缓冲区按其承载的最大消息确定</translation>
    </message>
    <message>
        <source>Change adaptive HCCL buffers</source>
        <translation>修改自适应 HCCL 缓冲区</translation>
    </message>
    <message>
        <source>DeepSpeed ZeRO++ hpZ: ZeRO-3 keeps a second copy of the parameters sharded within groups of this many ranks (a node), so that later all-gathers stay in the group</source>
        <translation>DeepSpeed ZeRO++ hpZ：ZeRO-3 另保留一份参数副本，在这么多个 rank（一个节点）组成的组内分片，使后续的 all-gather 留在组内</translation>
    </message>
    <message>
        <source>MindSpeed&apos;s --swap-attention: what the input norm, attention and post-attention norm save goes to the host after each layer&apos;s forward and comes back as its backward starts</source>
        <translation>MindSpeed 的 --swap-attention：输入 norm、注意力与注意力后 norm 保存的张量在每层前向之后换出到主机，在该层反向开始时换回</translation>
    </message>
    <message>
        <source>Change swap-attention</source>
        <translation>修改 swap-attention</translation>
    </message>
    <message>
        <source>Recompute FFN activation</source>
        <translation>重计算 FFN 激活函数</translation>
    </message>
    <message>
        <source>Overlap gradient reduction</source>
        <translation>梯度归约重叠</translation>
    </message>
    <message>
        <source>Overlap parameter all-gather</source>
        <translation>参数 all-gather 重叠</translation>
    </message>
    <message>
        <source>Swap attention to host (MindSpeed)</source>
        <translation>注意力激活换出到主机（MindSpeed）</translation>
    </message>
    <message>
        <source>Adaptive HCCL buffers</source>
        <translation>自适应 HCCL 缓冲区</translation>
    </message>
    <message>
        <source>Pad vocabulary (x tp)</source>
        <translation>词表填充倍数（x tp）</translation>
    </message>
    <message>
        <source>MindSpeed&apos;s --recompute-activation-function: the FFN activation&apos;s output is recomputed from its input in backward</source>
        <translation>MindSpeed 的 --recompute-activation-function：FFN 激活函数的输出在反向时由其输入重新计算</translation>
    </message>
    <message>
        <source>Megatron cross entropy before 2024-06 (fp32 copy)</source>
        <translation>2024-06 之前的 Megatron 交叉熵（fp32 副本）</translation>
    </message>
    <message>
        <source>Fused SwiGLU</source>
        <translation>融合 SwiGLU</translation>
    </message>
    <message>
        <source>Change SwiGLU fusion</source>
        <translation>更改 SwiGLU 融合</translation>
    </message>
    <message>
        <source>Flash output copied between layouts</source>
        <translation>Flash 输出在布局间复制</translation>
    </message>
    <message>
        <source>Change flash output copy</source>
        <translation>更改 Flash 输出复制</translation>
    </message>
    <message>
        <source>One SwiGLU kernel keeps gate|up and its output; unfused, gate, up, silu(gate) and their product are each kept for backward</source>
        <translation>单个 SwiGLU 内核保存 gate|up 及其输出；未融合时，gate、up、silu(gate) 及其乘积都为反向保存</translation>
    </message>
    <message>
        <source>Flash attention run in the (b, s) layout (legacy Megatron-LM): its output and a copy in (s, b) are both kept for backward</source>
        <translation>Flash 注意力在 (b, s) 布局中运行（旧版 Megatron-LM）：其输出和一份 (s, b) 布局的副本都为反向保存</translation>
    </message>
    <message>
        <source>Repeat K/V heads before Ulysses</source>
        <translation>Ulysses 之前重复 K/V 头</translation>
    </message>
    <message>
        <source>Change K/V repeat before Ulysses</source>
        <translation>更改 Ulysses 之前的 K/V 重复</translation>
    </message>
    <message>
        <source>ring: K/V blocks passed around the cp ranks (Megatron)
Ulysses: all-to-alls trade the sequence split for a head split (heads / tp divisible by cp; KV heads too unless repeated to the query heads)
hybrid: Ulysses inside groups, a ring across them (MindSpeed)</source>
        <translation>环形：K/V 块在 cp 个 rank 间轮转（Megatron）
Ulysses：all-to-all 把按序列切分换成按头切分（注意力头数 / tp 须能被 cp 整除；KV 头数亦然，除非先重复到查询头）
混合：组内 Ulysses，组间环形（MindSpeed）</translation>
    </message>
    <message>
        <source>MindSpeed-LLM&apos;s --kv-head-repeat-before-uly-alltoall: with grouped-query attention, K and V are repeated to the query heads before Ulysses&apos; all-to-all, so they travel and are kept for backward at the query width, and kv_heads / tp need not divide by the Ulysses group</source>
        <translation>MindSpeed-LLM 的 --kv-head-repeat-before-uly-alltoall：对分组查询注意力，K 和 V 在 Ulysses 的 all-to-all 之前重复到查询头，因此按查询宽度传输并为反向保存，且 kv_heads / tp 无需能被 Ulysses 组整除</translation>
    </message>
    <message>
        <source>Applies to the Ulysses and hybrid algorithms</source>
        <translation>仅适用于 Ulysses 和混合算法</translation>
    </message>
    <message>
        <source>No effect: every query head has its own K and V</source>
        <translation>无效果：每个查询头都有自己的 K 和 V</translation>
    </message>
    <message>
        <source>Count per stage (MindSpeed)</source>
        <translation>按阶段计数（MindSpeed）</translation>
    </message>
    <message>
        <source>MindSpeed&apos;s --enable-recompute-layers-per-pp-rank: the recompute layers count the stage&apos;s layers over its model chunks (layer l of chunk c is the (l x chunks + c)-th), not the first layers of each chunk</source>
        <translation>MindSpeed 的 --enable-recompute-layers-per-pp-rank：重计算层数按整个阶段跨其模型块计数（模型块 c 的第 l 层排第 l x 模型块数 + c 位），而不是每个模型块的前若干层</translation>
    </message>
    <message>
        <source>Applies to full recompute with method block under framework megatron (MindSpeed)</source>
        <translation>仅适用于 megatron 框架下方法为 block 的全量重计算（MindSpeed）</translation>
    </message>
    <message>
        <source>Layers recomputed per pipeline stage, over its chunks</source>
        <translation>每个流水线阶段（跨其模型块）重计算的层数</translation>
    </message>
    <message>
        <source>nothing per layer (shared cos, sin)</source>
        <translation>每层不保留（共享 cos、sin）</translation>
    </message>
    <message>
        <source>cos and sin per layer</source>
        <translation>每层保留 cos 与 sin</translation>
    </message>
    <message>
        <source>cos, sin and q, k (npu_rotary_mul)</source>
        <translation>cos、sin 以及 q、k（npu_rotary_mul）</translation>
    </message>
    <message>
        <source>What each layer&apos;s rotary embedding keeps for backward. Shared: cos and sin made once per forward (Transformer Engine&apos;s fused RoPE, Hugging Face). Per layer: each layer makes and keeps its own cos and sin for q and for k (MindSpeed&apos;s fused RoPE, Megatron-Core&apos;s unfused one). npu_rotary_mul also keeps the q and k it rotates (MindSpeed-LLM before 2024-12-21)</source>
        <translation>每层旋转位置编码为反向保留的张量。共享：cos 与 sin 每次前向只生成一次（Transformer Engine 的融合 RoPE、Hugging Face）。每层：每层为 q 和 k 各自生成并保留 cos 与 sin（MindSpeed 的融合 RoPE、Megatron-Core 的非融合实现）。npu_rotary_mul 还保留其旋转的 q 与 k（2024-12-21 之前的 MindSpeed-LLM）</translation>
    </message>
    <message>
        <source>&amp;RoPE keeps</source>
        <translation>RoPE 保留(&amp;R)</translation>
    </message>
    <message>
        <source>Change what RoPE keeps</source>
        <translation>更改 RoPE 保留的张量</translation>
    </message>
</context>
<context>
    <name>shardscope::RichTextLabel</name>
    <message>
        <source>&amp;Copy text</source>
        <translation>复制文字(&amp;C)</translation>
    </message>
</context>
<context>
    <name>shardscope::RunnerPanel</name>
    <message>
        <source>Native CPU (OpenBLAS)</source>
        <translation>本机 CPU（OpenBLAS）</translation>
    </message>
    <message>
        <source>PyTorch worker</source>
        <translation>PyTorch 工作进程</translation>
    </message>
    <message>
        <source>Python interpreter that runs the PyTorch worker</source>
        <translation>运行 PyTorch 工作进程的 Python 解释器</translation>
    </message>
    <message>
        <source>Worker processes on this node; two or more measure collectives</source>
        <translation>本节点上的工作进程数；两个及以上时测量集合通信</translation>
    </message>
    <message>
        <source>plan&apos;s</source>
        <translation>按方案</translation>
    </message>
    <message>
        <source>Tokens per kernel (0: the plan&apos;s); times are extrapolated</source>
        <translation>每个算子的 token 数（0：按方案）；时间按比例外推</translation>
    </message>
    <message>
        <source>Memory probe</source>
        <translation>显存探测</translation>
    </message>
    <message>
        <source>Device:</source>
        <translation>设备：</translation>
    </message>
    <message>
        <source>Processes:</source>
        <translation>进程数：</translation>
    </message>
    <message>
        <source>Backend:</source>
        <translation>后端：</translation>
    </message>
    <message>
        <source>Token cap:</source>
        <translation>token 上限：</translation>
    </message>
    <message>
        <source>Python:</source>
        <translation>Python：</translation>
    </message>
    <message>
        <source>Run</source>
        <translation>运行</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Not run yet.</source>
        <translation>尚未运行。</translation>
    </message>
    <message>
        <source>Save device profile...</source>
        <translation>保存设备配置...</translation>
    </message>
    <message>
        <source>Save results...</source>
        <translation>保存结果...</translation>
    </message>
    <message>
        <source>Import...</source>
        <translation>导入...</translation>
    </message>
    <message>
        <source>nccl-tests or hccl_test output, or a PyTorch / torch_npu profiler trace (Chrome JSON)</source>
        <translation>nccl-tests 或 hccl_test 的输出，或 PyTorch / torch_npu 性能分析轨迹（Chrome JSON）</translation>
    </message>
    <message>
        <source>Starting the %1 backend...</source>
        <translation>正在启动 %1 后端...</translation>
    </message>
    <message>
        <source>Running on %1</source>
        <translation>正在 %1 上运行</translation>
    </message>
    <message>
        <source>Memory probe %1: %2</source>
        <translation>显存探测 %1：%2</translation>
    </message>
    <message>
        <source>Memory probe: %1 layers, %2 tokens, %3, %4 attention. Peak allocated: predicted %5, measured %6 (%7x).</source>
        <translation>显存探测：%1 层，%2 tokens，%3，%4 注意力。峰值分配：预测 %5，实测 %6（%7 倍）。</translation>
    </message>
    <message>
        <source> - finished.</source>
        <translation> - 已完成。</translation>
    </message>
    <message>
        <source>Cancelled; the kernels measured so far are kept.</source>
        <translation>已取消；已测得的算子结果保留。</translation>
    </message>
    <message>
        <source>Stopped: %1 (the kernels measured so far are kept)</source>
        <translation>已停止：%1（已测得的算子结果保留）</translation>
    </message>
    <message>
        <source>Save device profile</source>
        <translation>保存设备配置</translation>
    </message>
    <message>
        <source>Device profile (*.json)</source>
        <translation>设备配置 (*.json)</translation>
    </message>
    <message>
        <source>Save results</source>
        <translation>保存结果</translation>
    </message>
    <message>
        <source>Results (*.json)</source>
        <translation>结果 (*.json)</translation>
    </message>
    <message>
        <source>Import measurements</source>
        <translation>导入测量结果</translation>
    </message>
    <message>
        <source>Benchmark output or trace (*.txt *.log *.json);;All files (*)</source>
        <translation>基准测试输出或轨迹 (*.txt *.log *.json);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Trace %1: %2 events, peak allocated %3 (plan: %4)</source>
        <translation>轨迹 %1：%2 个事件，峰值分配 %3（方案：%4）</translation>
    </message>
    <message>
        <source>  %1: %2 calls, %3 in the trace; plan per step %4</source>
        <translation>  %1：%2 次调用，轨迹中共 %3；方案每步 %4</translation>
    </message>
    <message>
        <source>%1 output %2: %3 sizes</source>
        <translation>%1 输出 %2：%3 种大小</translation>
    </message>
    <message>
        <source>  %1 %2: %3, busbw %4 GB/s</source>
        <translation>  %1 %2：%3，busbw %4 GB/s</translation>
    </message>
    <message>
        <source>Cannot import %1: %2</source>
        <translation>无法导入 %1：%2</translation>
    </message>
    <message>
        <source>%1 s</source>
        <translation>%1 秒</translation>
    </message>
    <message>
        <source>%1 min %2 s</source>
        <translation>%1 分 %2 秒</translation>
    </message>
    <message>
        <source>%1 h %2 min</source>
        <translation>%1 小时 %2 分</translation>
    </message>
    <message>
        <source>about %1 left</source>
        <translation>约剩 %1</translation>
    </message>
</context>
<context>
    <name>shardscope::RunnerResultsModel</name>
    <message>
        <source>pending</source>
        <translation>等待中</translation>
    </message>
    <message>
        <source>Kernel</source>
        <translation>算子</translation>
    </message>
    <message>
        <source>Shape run</source>
        <translation>运行形状</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Time</source>
        <translation>时间</translation>
    </message>
    <message>
        <source>Rate</source>
        <translation>速率</translation>
    </message>
    <message>
        <source>Predicted</source>
        <translation>预测</translation>
    </message>
    <message>
        <source>Measured</source>
        <translation>实测</translation>
    </message>
    <message>
        <source>Ratio</source>
        <translation>比值</translation>
    </message>
    <message>
        <source>Per step</source>
        <translation>每步</translation>
    </message>
    <message>
        <source>Measured on %1; the predictions are for the plan&apos;s %2. The ratio compares two different devices: it says how far this machine is from a %2, not how good the prediction is. Run the PyTorch worker on the plan&apos;s device to check the predictions.</source>
        <translation>测量在 %1 上进行；预测针对的是方案的 %2。比值比较的是两种不同的设备：它说明这台机器与 %2 相差多少，而不是预测有多准确。要检验预测，请在方案的设备上运行 PyTorch worker。</translation>
    </message>
    <message>
        <source>One call at the plan&apos;s full size on %1, as the engine models it</source>
        <translation>引擎模型下，在 %1 上按方案完整规模调用一次的时间</translation>
    </message>
    <message>
        <source>Measured / predicted, on the same device</source>
        <translation>测量值 / 预测值，同一设备</translation>
    </message>
    <message>
        <source>Predicted, %1</source>
        <translation>预测，%1</translation>
    </message>
    <message>
        <source>Ratio (other device)</source>
        <translation>比值（不同设备）</translation>
    </message>
</context>
<context>
    <name>shardscope::SearchPanel</name>
    <message>
        <source>&amp;Search layouts</source>
        <translation>搜索并行布局(&amp;S)</translation>
    </message>
    <message>
        <source>Ca&amp;ncel</source>
        <translation>取消(&amp;N)</translation>
    </message>
    <message>
        <source>&amp;Load selected</source>
        <translation>载入所选(&amp;L)</translation>
    </message>
    <message>
        <source>Finds the fastest layouts of this model, sequence and cluster that fit.</source>
        <translation>为该模型、序列与集群寻找能放下的最快并行布局。</translation>
    </message>
    <message>
        <source>&amp;Global batch</source>
        <translation>全局批大小(&amp;G)</translation>
    </message>
    <message>
        <source>&amp;Keep</source>
        <translation>保留(&amp;K)</translation>
    </message>
    <message>
        <source>%1 of %2 layouts</source>
        <translation>%2 个布局中的 %1 个</translation>
    </message>
    <message>
        <source>%1 layouts evaluated, %2 fit, in %3.</source>
        <translation>已评估 %1 个布局，%2 个可容纳，用时 %3。</translation>
    </message>
    <message>
        <source>Cancelled: %1 Showing the best found so far.</source>
        <translation>已取消：%1 显示目前找到的最佳结果。</translation>
    </message>
    <message>
        <source>%1 Double-click a layout (or press Enter) to load it.</source>
        <translation>%1 双击某个布局（或按回车）即可载入。</translation>
    </message>
    <message>
        <source>Search failed: %1</source>
        <translation>搜索失败：%1</translation>
    </message>
    <message>
        <source>starting</source>
        <translation>正在开始</translation>
    </message>
    <message>
        <source>Load search result</source>
        <translation>载入搜索结果</translation>
    </message>
    <message>
        <source>any</source>
        <translation>任意</translation>
    </message>
    <message>
        <source>Try &amp;offload:</source>
        <translation>尝试卸载(&amp;O)：</translation>
    </message>
    <message>
        <source>Only layouts with this tensor-parallel degree</source>
        <translation>只搜索该张量并行度的布局</translation>
    </message>
    <message>
        <source>Only layouts with this pipeline degree</source>
        <translation>只搜索该流水线并行度的布局</translation>
    </message>
    <message>
        <source>Only layouts with this context-parallel degree</source>
        <translation>只搜索该上下文并行度的布局</translation>
    </message>
    <message>
        <source>Search on at most this many devices: the cluster cut to whole nodes (or part of one node)</source>
        <translation>最多使用这么多设备搜索：集群截为整数个节点（或一个节点的一部分）</translation>
    </message>
    <message>
        <source>Largest that &amp;fits</source>
        <translation>可容纳的最大值(&amp;F)</translation>
    </message>
    <message>
        <source>Global batch of every layout searched: sequences or tokens per optimizer step across all data-parallel ranks</source>
        <translation>所搜索的每个布局的全局批大小：所有数据并行 rank 每个优化器步的序列数或 token 数</translation>
    </message>
    <message>
        <source>tokens</source>
        <translation>tokens</translation>
    </message>
    <message>
        <source>sequences</source>
        <translation>条序列</translation>
    </message>
    <message>
        <source> GiB</source>
        <translation> GiB</translation>
    </message>
    <message>
        <source>Memory every rank keeps free beyond peak and runtime reserve</source>
        <translation>每个 rank 在峰值与运行时预留之外保留的空闲显存</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>selective</source>
        <translation>选择性</translation>
    </message>
    <message>
        <source>full</source>
        <translation>完全</translation>
    </message>
    <message>
        <source>optimizer</source>
        <translation>优化器</translation>
    </message>
    <message>
        <source>optimizer + params + grads</source>
        <translation>优化器 + 参数 + 梯度</translation>
    </message>
    <message>
        <source>activations</source>
        <translation>激活值</translation>
    </message>
    <message>
        <source>The largest sequence length and micro-batch with which the open plan&apos;s layout still fits, keeping the headroom asked for</source>
        <translation>在保留所要求余量的前提下，当前方案的布局仍能容纳的最大序列长度和微批大小</translation>
    </message>
    <message>
        <source>&amp;tp</source>
        <translation>&amp;tp</translation>
    </message>
    <message>
        <source>&amp;pp</source>
        <translation>&amp;pp</translation>
    </message>
    <message>
        <source>c&amp;p</source>
        <translation>c&amp;p</translation>
    </message>
    <message>
        <source>Max &amp;devices</source>
        <translation>最多设备数(&amp;D)</translation>
    </message>
    <message>
        <source>Min &amp;headroom</source>
        <translation>最小余量(&amp;H)</translation>
    </message>
    <message>
        <source>Recompute:</source>
        <translation>重计算：</translation>
    </message>
    <message>
        <source>Memory against step time (click a point to load it)</source>
        <translation>显存与单步时间（单击某点即可载入）</translation>
    </message>
    <message>
        <source>ranked layouts</source>
        <translation>排名中的布局</translation>
    </message>
    <message>
        <source>Pareto front</source>
        <translation>Pareto 前沿</translation>
    </message>
    <message>
        <source>Needed per rank (GiB)</source>
        <translation>每个 rank 所需（GiB）</translation>
    </message>
    <message>
        <source>Step time (s)</source>
        <translation>单步时间（秒）</translation>
    </message>
    <message>
        <source>%1 No layout fits: try a smaller sequence, more devices, offload or fewer constraints.</source>
        <translation>%1 没有可容纳的布局：请尝试更短的序列、更多设备、卸载或更少的约束。</translation>
    </message>
    <message>
        <source>Allow at least one recompute mode.</source>
        <translation>请至少允许一种重计算方式。</translation>
    </message>
    <message numerus="yes">
        <source>global batch %n sequence(s)</source>
        <translation>
            <numerusform>全局批大小 %n 条序列</numerusform>
        </translation>
    </message>
    <message>
        <source>%1 (%2 tokens asked, %3 per sequence)</source>
        <translation>%1（要求 %2 tokens，每条序列 %3）</translation>
    </message>
    <message>
        <source>Searching layouts for %1, %2...</source>
        <translation>正在为 %1 搜索布局，%2...</translation>
    </message>
    <message>
        <source>The plan has changed since this search (model, sequence, precision or cluster): these results are for the earlier plan. Search again.</source>
        <translation>自本次搜索以来方案已改变（模型、序列、精度或集群）：这些结果属于先前的方案。请重新搜索。</translation>
    </message>
    <message>
        <source>With this layout not even %1 token(s) per sequence fit.</source>
        <translation>在该布局下，连每条序列 %1 个 token 都放不下。</translation>
    </message>
    <message>
        <source>With this layout (%1): up to %2 tokens per sequence at micro-batch %3; up to micro-batch %4 at %5 tokens.</source>
        <translation>在该布局下（%1）：微批 %3 时每条序列最多 %2 tokens；%5 tokens 时微批最多 %4。</translation>
    </message>
    <message>
        <source>Sequence lengths in steps of %1 (cp, and tp under SP).</source>
        <translation>序列长度以 %1 为步长（cp，在 SP 下再乘 tp）。</translation>
    </message>
    <message>
        <source>Cannot answer for this plan: %1</source>
        <translation>无法为该方案作答：%1</translation>
    </message>
    <message>
        <source>etp</source>
        <translation>etp</translation>
    </message>
    <message>
        <source>CP algorithm</source>
        <translation>CP 算法</translation>
    </message>
    <message>
        <source>HSDP</source>
        <translation>HSDP</translation>
    </message>
    <message>
        <source>block recompute</source>
        <translation>块重计算</translation>
    </message>
    <message>
        <source>uneven stages</source>
        <translation>非均匀阶段</translation>
    </message>
    <message>
        <source>MoE: expert tensor parallelism 1 beside tp&apos;s (needs sequence parallelism)</source>
        <translation>MoE：除与 tp 相同外，再尝试专家张量并行度 1（需要序列并行）</translation>
    </message>
    <message>
        <source>cp &gt; 1: ring, Ulysses and the hybrids (Ulysses inside, ring across)</source>
        <translation>cp &gt; 1：ring、Ulysses 及混合方式（组内 Ulysses，组间 ring）</translation>
    </message>
    <message>
        <source>Full sharding: HSDP groups of one, two and four nodes&apos; ranks, replicated across</source>
        <translation>全分片：以一个、两个、四个节点的卡为 HSDP 分片组，组间复制</translation>
    </message>
    <message>
        <source>Megatron: full recompute of a quarter, half and three quarters of each chunk&apos;s layers (--recompute-method block)</source>
        <translation>Megatron：仅对每个模型块四分之一、一半、四分之三的层做完全重计算（--recompute-method block）</translation>
    </message>
    <message>
        <source>pp not dividing the layers: uneven first and last stages (--decoder-first/last-pipeline-num-layers)</source>
        <translation>pp 不能整除层数时：首末阶段非均匀（--decoder-first/last-pipeline-num-layers）</translation>
    </message>
    <message>
        <source> (each axis multiplies the layouts searched)</source>
        <translation>（每个维度都会成倍增加搜索的布局数）</translation>
    </message>
    <message>
        <source>Also vary:</source>
        <translation>同时搜索：</translation>
    </message>
    <message>
        <source>swap-attention</source>
        <translation>注意力换出（swap-attention）</translation>
    </message>
    <message>
        <source>Framework megatron: MindSpeed&apos;s swap-attention beside none, with recompute none or selective and activations kept on the device (--swap-attention)</source>
        <translation>框架 megatron：在不换出之外，也尝试 MindSpeed 的 swap-attention（重计算为 none 或 selective，激活留在设备上时；--swap-attention）</translation>
    </message>
    <message>
        <source>MindSpeed recompute</source>
        <translation>MindSpeed 重计算</translation>
    </message>
    <message>
        <source>Framework megatron, recompute none or selective: the FFN activation and the norms recomputed in backward beside neither (--recompute-activation-function, --recompute-norm)</source>
        <translation>框架 megatron，重计算为 none 或 selective 时：在都不重计算之外，也尝试在反向中重计算 FFN 激活函数和归一化（--recompute-activation-function、--recompute-norm）</translation>
    </message>
    <message>
        <source>%1 layouts evaluated in %3: %2 estimated (the others break a rule, cannot fit, or cannot reach the ranking or the front).</source>
        <translation>已评估 %1 个布局，用时 %3：估算了 %2 个（其余违反规则、放不下，或无法进入排名或帕累托前沿）。</translation>
    </message>
</context>
<context>
    <name>shardscope::SearchResultsModel</name>
    <message>
        <source>optimizer</source>
        <translation>优化器</translation>
    </message>
    <message>
        <source>params</source>
        <translation>参数</translation>
    </message>
    <message>
        <source>grads</source>
        <translation>梯度</translation>
    </message>
    <message>
        <source>activations</source>
        <translation>激活值</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>%1 (%2 virtual stages)</source>
        <translation>%1（%2 个虚拟阶段）</translation>
    </message>
    <message>
        <source>%1 x %2</source>
        <translation>%1 x %2</translation>
    </message>
    <message>
        <source>yes</source>
        <translation>是</translation>
    </message>
    <message>
        <source>dp %1, tp %2, pp %3, cp %4, ep %5, sharding %6, sp %7</source>
        <translation>dp %1，tp %2，pp %3，cp %4，ep %5，分片 %6，sp %7</translation>
    </message>
    <message>
        <source>on</source>
        <translation>开</translation>
    </message>
    <message>
        <source>off</source>
        <translation>关</translation>
    </message>
    <message>
        <source>#</source>
        <translation>#</translation>
    </message>
    <message>
        <source>Layout</source>
        <translation>并行布局</translation>
    </message>
    <message>
        <source>Micro-batch x accum</source>
        <translation>微批 x 累积</translation>
    </message>
    <message>
        <source>Recompute</source>
        <translation>重计算</translation>
    </message>
    <message>
        <source>Offload</source>
        <translation>卸载</translation>
    </message>
    <message>
        <source>Peak allocated</source>
        <translation>峰值分配</translation>
    </message>
    <message>
        <source>Needed per rank</source>
        <translation>每个 rank 所需</translation>
    </message>
    <message>
        <source>Step time</source>
        <translation>单步时间</translation>
    </message>
    <message>
        <source>Tokens/s</source>
        <translation>tokens/s</translation>
    </message>
    <message>
        <source>MFU</source>
        <translation>MFU</translation>
    </message>
    <message>
        <source>Pareto</source>
        <translation>Pareto</translation>
    </message>
    <message>
        <source>ZeRO-1 (optimizer)</source>
        <translation>ZeRO-1（优化器）</translation>
    </message>
    <message>
        <source>ZeRO-2 (+ gradients)</source>
        <translation>ZeRO-2（+ 梯度）</translation>
    </message>
    <message>
        <source>ZeRO-3 / FSDP</source>
        <translation>ZeRO-3 / FSDP</translation>
    </message>
    <message>
        <source>Sharding</source>
        <translation>分片</translation>
    </message>
    <message>
        <source>Exposed comm.</source>
        <translation>暴露通信</translation>
    </message>
    <message>
        <source>full, first %1 layers of a chunk</source>
        <translation>full，每个模型块的前 %1 层</translation>
    </message>
    <message>
        <source>%1, swap-attention</source>
        <translation>%1，注意力换出</translation>
    </message>
    <message>
        <source>%1, activation function and norms recomputed</source>
        <translation>%1，重计算激活函数与归一化</translation>
    </message>
    <message>
        <source>%1, activation function recomputed</source>
        <translation>%1，重计算激活函数</translation>
    </message>
    <message>
        <source>%1, norms recomputed</source>
        <translation>%1，重计算归一化</translation>
    </message>
</context>
<context>
    <name>shardscope::ShapeFields</name>
    <message>
        <source>Edit model shape</source>
        <translation>编辑模型形状</translation>
    </message>
    <message>
        <source>MHA / GQA</source>
        <translation>MHA / GQA</translation>
    </message>
    <message>
        <source>MLA (latent)</source>
        <translation>MLA（潜在）</translation>
    </message>
    <message>
        <source>Attention &amp;kind</source>
        <translation>注意力类型(&amp;K)</translation>
    </message>
    <message>
        <source>Change attention kind</source>
        <translation>更改注意力类型</translation>
    </message>
    <message>
        <source>MLA query rank</source>
        <translation>MLA 查询秩</translation>
    </message>
    <message>
        <source>MLA key/value rank</source>
        <translation>MLA 键/值秩</translation>
    </message>
    <message>
        <source>MLA q/k head (no rope)</source>
        <translation>MLA q/k 头宽（无 rope）</translation>
    </message>
    <message>
        <source>MLA q/k head (rope)</source>
        <translation>MLA q/k 头宽（rope）</translation>
    </message>
    <message>
        <source>MLA v head</source>
        <translation>MLA v 头宽</translation>
    </message>
    <message>
        <source>QK &amp;norms (Qwen3)</source>
        <translation>QK 归一化(&amp;N)（Qwen3）</translation>
    </message>
    <message>
        <source>Change QK norms</source>
        <translation>更改 QK 归一化</translation>
    </message>
    <message>
        <source>RMSNorm</source>
        <translation>RMSNorm</translation>
    </message>
    <message>
        <source>LayerNorm</source>
        <translation>LayerNorm</translation>
    </message>
    <message>
        <source>Nor&amp;m</source>
        <translation>归一化(&amp;M)</translation>
    </message>
    <message>
        <source>Change norm</source>
        <translation>更改归一化</translation>
    </message>
    <message>
        <source>&amp;Biases on every linear (GPT)</source>
        <translation>每个线性层带偏置(&amp;B)（GPT）</translation>
    </message>
    <message>
        <source>Change linear biases</source>
        <translation>更改线性层偏置</translation>
    </message>
    <message>
        <source>RoPE</source>
        <translation>RoPE</translation>
    </message>
    <message>
        <source>learned table</source>
        <translation>可学习表</translation>
    </message>
    <message>
        <source>Positions</source>
        <translation>位置编码</translation>
    </message>
    <message>
        <source>Change position embedding</source>
        <translation>更改位置编码</translation>
    </message>
    <message>
        <source>Position table rows</source>
        <translation>位置表行数</translation>
    </message>
    <message>
        <source>MTP modules</source>
        <translation>MTP 模块</translation>
    </message>
    <message>
        <source>Shared experts</source>
        <translation>共享专家</translation>
    </message>
    <message>
        <source>Shared expert width</source>
        <translation>共享专家宽度</translation>
    </message>
    <message>
        <source>Dense first layers</source>
        <translation>前部稠密层</translation>
    </message>
    <message>
        <source>MoE every k-th layer</source>
        <translation>每 k 层一个 MoE</translation>
    </message>
    <message>
        <source>dropless</source>
        <translation>无丢弃</translation>
    </message>
    <message>
        <source>Capacity factor</source>
        <translation>容量因子</translation>
    </message>
    <message>
        <source>Busiest rank&apos;s load</source>
        <translation>最忙 rank 的负载</translation>
    </message>
    <message>
        <source>Router in &amp;fp32</source>
        <translation>路由器使用 fp32(&amp;F)</translation>
    </message>
    <message>
        <source>all-to-all</source>
        <translation>all-to-all</translation>
    </message>
    <message>
        <source>all-gather</source>
        <translation>all-gather</translation>
    </message>
    <message>
        <source>Token dispatcher</source>
        <translation>token 分发器</translation>
    </message>
    <message>
        <source>Multi-head or grouped-query attention (KV heads say which), or DeepSeek&apos;s multi-head latent attention</source>
        <translation>多头或分组查询注意力（由 KV 头数决定），或 DeepSeek 的多头潜在注意力</translation>
    </message>
    <message>
        <source>Applies to multi-head latent attention</source>
        <translation>仅适用于多头潜在注意力</translation>
    </message>
    <message>
        <source>Rank of the query compression (0: queries projected directly)</source>
        <translation>查询压缩的秩（0：直接投影查询）</translation>
    </message>
    <message>
        <source>Rank of the compressed key/value latent</source>
        <translation>压缩后键/值潜变量的秩</translation>
    </message>
    <message>
        <source>Query/key width per head without rotary embedding</source>
        <translation>每个头不带旋转位置编码的查询/键宽度</translation>
    </message>
    <message>
        <source>Query/key width per head with rotary embedding (the key&apos;s is shared by all heads)</source>
        <translation>每个头带旋转位置编码的查询/键宽度（键的这一部分由所有头共享）</translation>
    </message>
    <message>
        <source>Value width per head</source>
        <translation>每个头的值宽度</translation>
    </message>
    <message>
        <source>Per-head RMSNorm on queries and keys before RoPE (Qwen3)</source>
        <translation>RoPE 之前对查询与键逐头做 RMSNorm（Qwen3）</translation>
    </message>
    <message>
        <source>MLA norms its latents instead</source>
        <translation>MLA 改为对潜变量做归一化</translation>
    </message>
    <message>
        <source>RMSNorm saves its input; LayerNorm also an fp32 mean and rstd per token</source>
        <translation>RMSNorm 保存其输入；LayerNorm 还保存每个 token 的 fp32 均值与 rstd</translation>
    </message>
    <message>
        <source>Rows of the learned position table: the longest sequence</source>
        <translation>可学习位置表的行数：即最长序列</translation>
    </message>
    <message>
        <source>Applies to a learned position table</source>
        <translation>仅适用于可学习位置表</translation>
    </message>
    <message>
        <source>Multi-token prediction modules on the last stage (DeepSeek-V3: 1)</source>
        <translation>最后一个阶段上的多 token 预测模块（DeepSeek-V3：1）</translation>
    </message>
    <message>
        <source>Dense model: turn on mixture of experts first</source>
        <translation>稠密模型：请先开启混合专家</translation>
    </message>
    <message>
        <source>Experts every token passes through (DeepSeek, Qwen2-MoE)</source>
        <translation>每个 token 都经过的专家（DeepSeek、Qwen2-MoE）</translation>
    </message>
    <message>
        <source>FFN width of one shared expert</source>
        <translation>一个共享专家的 FFN 宽度</translation>
    </message>
    <message>
        <source>Applies when there are shared experts</source>
        <translation>有共享专家时适用</translation>
    </message>
    <message>
        <source>Leading layers that keep the dense FFN (DeepSeek-V3: 3)</source>
        <translation>保留稠密 FFN 的前部层数（DeepSeek-V3：3）</translation>
    </message>
    <message>
        <source>After the dense layers, every k-th layer is MoE</source>
        <translation>稠密层之后，每 k 层一个 MoE 层</translation>
    </message>
    <message>
        <source>Tokens per expert capped at this factor x the balanced share; dropless when 0. The busiest rank is assumed at the cap</source>
        <translation>每个专家的 token 数上限为此因子 × 均衡份额；为 0 时不丢弃。假定最忙的 rank 达到上限</translation>
    </message>
    <message>
        <source>Dropless routing: the busiest rank&apos;s token copies over the balanced share</source>
        <translation>无丢弃路由：最忙 rank 的 token 副本数相对均衡份额的倍数</translation>
    </message>
    <message>
        <source>A capacity factor bounds each expert instead</source>
        <translation>改由容量因子限制每个专家</translation>
    </message>
    <message>
        <source>Router logits computed in fp32: an fp32 copy of its input is saved</source>
        <translation>路由器 logits 以 fp32 计算：保存其输入的 fp32 副本</translation>
    </message>
    <message>
        <source>How tokens reach their experts under expert parallelism: all-to-all, or every token of the group gathered</source>
        <translation>专家并行下 token 到达专家的方式：all-to-all，或汇集组内所有 token</translation>
    </message>
</context>
<context>
    <name>shardscope::TeachingPanel</name>
    <message>
        <source>Teaching</source>
        <translation>教学</translation>
    </message>
    <message>
        <source>Previous</source>
        <translation>上一步</translation>
    </message>
    <message>
        <source>Next</source>
        <translation>下一步</translation>
    </message>
    <message>
        <source>Check</source>
        <translation>检查</translation>
    </message>
    <message>
        <source>Answer in GiB</source>
        <translation>以 GiB 作答</translation>
    </message>
    <message>
        <source>The lesson cannot be loaded</source>
        <translation>无法载入课程</translation>
    </message>
    <message>
        <source>Teaching: %1</source>
        <translation>教学：%1</translation>
    </message>
    <message>
        <source>A guided walkthrough of the HCIE-AI case. Each step puts its plan in the workbench (undo returns to yours) and cites the engine&apos;s numbers with their formulas. Choose a step to begin.</source>
        <translation>HCIE-AI 案例的分步讲解。每一步都会把对应方案放入工作台（撤销即可回到您自己的方案），并引用引擎计算出的数值及其公式。选择一个步骤开始。</translation>
    </message>
    <message>
        <source>Where the case&apos;s rough accounting and the engine differ</source>
        <translation>案例的粗略估算与引擎的差异</translation>
    </message>
    <message>
        <source>The numbers and their formulas</source>
        <translation>数值及其公式</translation>
    </message>
    <message>
        <source>none of these</source>
        <translation>以上都不是</translation>
    </message>
    <message>
        <source>yes</source>
        <translation>是</translation>
    </message>
    <message>
        <source>no</source>
        <translation>否</translation>
    </message>
    <message>
        <source>Choose one of the answers above first.</source>
        <translation>请先在上面选择一个答案。</translation>
    </message>
    <message>
        <source>The workbench keeps your plan until you check an answer; then it shows the exercise&apos;s plan, to see why.</source>
        <translation>在您检查答案之前，工作台保留您的方案；检查之后才显示本练习的方案，以便看清原因。</translation>
    </message>
</context>
<context>
    <name>shardscope::Workbench</name>
    <message>
        <source>Kernel runner</source>
        <translation>算子基准测试</translation>
    </message>
</context>
</TS>
