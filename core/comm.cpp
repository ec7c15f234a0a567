// The communication engine: the collectives of one training step (see comm.h for the model).
// Message sizes follow the nccl-tests convention (S = the whole buffer); times use the
// algbw/busbw relation of nccl-tests doc/PERFORMANCE.md with the device profile's link tiers.
#include "comm.h"

#include "layers.h"
#include "moe.h"

#include "adapters.h"

#include "compute.h"
#include "device.h"
#include "distoptimizer.h"
#include "framework.h"
#include "hpz.h"
#include "model.h"
#include "text.h"

#include <algorithm>
#include <cmath>

namespace shardscope {

std::string_view collectiveKey(CollectiveKind k)
{
    switch (k) {
    case CollectiveKind::AllReduce:
        return "all_reduce";
    case CollectiveKind::AllGather:
        return "all_gather";
    case CollectiveKind::ReduceScatter:
        return "reduce_scatter";
    case CollectiveKind::AllToAll:
        return "all_to_all";
    case CollectiveKind::SendRecv:
        return "send_recv";
    }
    return "";
}

std::string_view groupKey(CommGroup g)
{
    switch (g) {
    case CommGroup::DP:
        return "dp";
    case CommGroup::TP:
        return "tp";
    case CommGroup::CP:
        return "cp";
    case CommGroup::PP:
        return "pp";
    case CommGroup::EP:
        return "ep";
    case CommGroup::ETP:
        return "etp";
    case CommGroup::ExpertDP:
        return "edp";
    }
    return "";
}

std::string_view commPhaseKey(CommPhase p)
{
    switch (p) {
    case CommPhase::Forward:
        return "forward";
    case CommPhase::Backward:
        return "backward";
    case CommPhase::OptimizerStep:
        return "optimizer_step";
    }
    return "";
}

double busBandwidthFactor(CollectiveKind k, int n)
{
    if (n <= 1)
        return 0.0;
    switch (k) {
    case CollectiveKind::AllReduce:
        return 2.0 * (n - 1) / n;
    case CollectiveKind::AllGather:
    case CollectiveKind::ReduceScatter:
    case CollectiveKind::AllToAll:
        return double(n - 1) / n;
    case CollectiveKind::SendRecv:
        return 1.0;
    }
    return 1.0;
}

int latencySteps(CollectiveKind k, int n)
{
    if (n <= 1)
        return 0;
    switch (k) {
    case CollectiveKind::AllReduce:
        return 2 * (n - 1);
    case CollectiveKind::AllGather:
    case CollectiveKind::ReduceScatter:
    case CollectiveKind::AllToAll:
        return n - 1;
    case CollectiveKind::SendRecv:
        return 1;
    }
    return 1;
}

GroupPlacement placeGroup(int size, int stride, const Cluster &cluster, const LinkProfile &intra)
{
    GroupPlacement g;
    g.size = size;
    if (size <= 1)
        return g;
    const int node = std::max(1, cluster.devices_per_node);
    // Groups are aligned blocks in rank order: the members span stride x size consecutive
    // ranks, which fit in one node exactly when that span does.
    g.inter_node = int64_t(stride) * size > node;
    if (!g.inter_node && intra.topology == "full_mesh" && node > 1)
        g.bandwidth_share = double(size - 1) / double(node - 1);
    return g;
}

double collectiveTime(CollectiveKind k, const GroupPlacement &g, double bytes,
                      const DeviceProfile &dev)
{
    if (g.size <= 1 || bytes <= 0)
        return 0.0;
    const LinkProfile &link = g.inter_node ? dev.inter_node : dev.intra_node;
    const double bw = link.bandwidth * g.bandwidth_share * link.efficiency;
    return link.latency * latencySteps(k, g.size) + bytes * busBandwidthFactor(k, g.size) / bw;
}

namespace {

/// Parameter elements of the heaviest stage on one rank (per tp rank, before DP sharding).
struct StageParams
{
    double layer = 0; ///< one decoder layer (dense part / tp, norms, router, local experts)
    double root = 0;  ///< embedding and/or head + final norm of the stage
    double total = 0; ///< layers x layer + root
    /// The same for what is trained (training.method; equal to the above for full training):
    /// gradients are reduced and updated shards gathered only for these.
    double trainedLayer = 0, trainedRoot = 0, trainedTotal = 0;
    /// Share of the trained elements that are adapters (their gradients have the adapter dtype).
    double adapterShare = 0;
    /// Share of the trained elements that are routed experts: Megatron reduces their gradients
    /// over the expert data-parallel group, not the dense one.
    double expertShare = 0;
    /// Routed-expert elements of `layer` (the largest layer kind) on the rank.
    double layerExperts = 0;
};

/// `shape`: rankShape of the plan's model and layout (core/layers.h).
StageParams stageParams(const Plan &plan, const RankShape &shape)
{
    const ModelShape &mo = plan.model;
    const Parallel &pa = plan.parallel;
    const ParameterCounts &pc = shape.counts;
    const double t = pa.tp;
    const int mostLayers = shape.layout.largestStage();
    StageParams sp;
    // The largest layer kind on a rank (what FSDP gathers per layer), core/layers.h's split.
    const double dense = pc.dense_layers > 0 ? shape.denseRank.total() : 0.0;
    const double moe = pc.moe_layers > 0 ? shape.moeRank.total() : 0.0;
    sp.layer = std::max(dense, moe);
    if (pc.moe_layers > 0 && moe >= dense)
        sp.layerExperts = shape.moeRank.experts;
    const double first = double(pc.embedding) / t + double(pc.position);
    // The last stage: final norm, head (or the tied embedding's copy), and the MTP modules with
    // their routed experts split by ep like any MoE layer (and the embedding copy they share).
    const RankLayer mtp = mtpModuleOnRank(mo, pa.tp, pa.ep, pa.expertTp());
    const double last =
        double(pc.final_norm) + (mo.tied_embeddings ? (pa.pp > 1 ? double(pc.embedding) / t : 0.0)
                                                    : double(pc.lm_head) / t) +
        (mo.mtp_layers > 0 && pa.pp > 1 && !mo.tied_embeddings ? double(pc.embedding) / t : 0.0) +
        mtp.total() * mo.mtp_layers;
    sp.root = pa.pp == 1 ? first + last : std::max(first, last);
    const double meanLayer = mo.layers > 0 ? (dense * pc.dense_layers + moe * pc.moe_layers) / mo.layers : 0.0;
    sp.total = meanLayer * mostLayers + sp.root;
    sp.trainedLayer = sp.layer;
    sp.trainedRoot = sp.root;
    sp.trainedTotal = sp.total;
    if (pc.moe_layers > 0 && sp.total > 0 && mo.layers > 0) {
        const double experts = shape.moeRank.experts;
        const bool lastHeaviest = pa.pp == 1 || last >= first;
        sp.expertShare = (experts * pc.moe_layers / double(mo.layers) * mostLayers +
                          (lastHeaviest ? mtp.experts * mo.mtp_layers : 0.0)) /
                         sp.total;
    }
    if (plan.training.method.method != TrainingMethod::Full) {
        const StageElements a = stageElements(plan, 0), b = stageElements(plan, pa.pp - 1);
        sp.trainedLayer = std::max(a.trainedPerLayer, b.trainedPerLayer);
        sp.trainedRoot = pa.pp == 1 ? a.trainedEmbedding + a.trainedHead
                                    : std::max(a.trainedEmbedding, b.trainedHead);
        sp.trainedTotal = std::max(a.trained(), b.trained());
        sp.adapterShare = a.trained() > 0 ? (a.adapterDense + a.adapterExpert) / a.trained() : 0.0;
        sp.expertShare = 0; // adapters and frozen experts: reduced with the rest
    }
    return sp;
}

/// forEachCollective's collectives; without `dataParallel`, not those of the data-parallel
/// groups (the first ones).
void emitCollectives(const Plan &given, const DeviceProfile &dev, const FrameworkProfile &fw,
                     const ComputeEstimate &ce, CommSink &sink, bool dataParallel)
{
    const PaddedVocabPlan padded(given, fw.vocab_divisible_by); // the framework's padded vocabulary
    const Plan &plan = padded.get();

    const ModelShape &mo = plan.model;
    const Parallel &pa = plan.parallel;
    const Precision &pr = plan.precision;
    const Cluster &cl = plan.cluster;
    const double m = plan.training.grad_accum;
    const double T = double(plan.training.seq_len) * plan.training.micro_batch / pa.cp;
    const double c = bytesOf(pr.compute);
    const double h = double(mo.hidden);
    // The stage with the most decoder layers (core/layers.h; layers / pp when even): its
    // per-layer collectives are the pipeline's.
    const std::shared_ptr<const RankShape> shape = rankShape(mo, pa);
    const int L = shape->layout.largestStage();
    // Of that stage's layers, those whose forward runs again in backward, and with it the
    // forward's collectives: all under full recompute, the first recompute_num_layers of each
    // model chunk under Megatron's --recompute-method block (as compute.cpp counts them).
    double recomputed = 0;
    if (plan.memory.recompute == Recompute::Full) {
        recomputed = L;
        if (plan.memory.recompute_method == RecomputeMethod::Block) {
            for (int s = 0; s < pa.pp; ++s) {
                if (shape->layout.stage(s) == L) {
                    recomputed =
                        shape->layout.blockRecomputed(s, plan.memory.recompute_num_layers,
                                                      plan.memory.recompute_layers_per_pp_rank);
                    break;
                }
            }
        }
    }
    const double recomputedShare = L > 0 ? recomputed / L : 0.0;
    // Selective recompute runs the attention core again, and the context-parallel exchanges are
    // inside it: a ring's K/V (Megatron's TE attention, MindSpeed's CPDotProductAttention) and
    // Ulysses' all-to-alls (MindSpeed wraps the core attention in UlyssesContextAttention).
    const double attentionRecomputed = plan.memory.recompute == Recompute::Selective ? L : recomputed;

    bool layerWise = false;
    auto emit = [&](CollectiveKind k, CommGroup grp, const GroupPlacement &g, double bytes,
                    double count, double exposed, CommPhase ph, const char *note) {
        if (g.size <= 1 || count <= 0)
            return;
        CommItem it;
        it.kind = k;
        it.group = grp;
        it.group_size = g.size;
        it.bytes = bytes;
        it.count = count;
        it.time_s = collectiveTime(k, g, bytes, dev);
        it.exposed_s = exposed < 0 ? it.time_s * count : exposed;
        it.phase = ph;
        it.note = note;
        const double perLayer = count / (m * L);
        // Layer-wise collectives have counts that are whole multiples of layers x micro-batches.
        it.per_layer = layerWise;
        it.per_layer_count = layerWise ? perLayer : 0.0;
        sink.add(it);
    };

    // ---- data parallel (dp x cp ranks hold the same parameters) ---------------------------
    const int dpGroup = pa.dp * pa.cp;
    if (dataParallel && dpGroup > 1) {
        const GroupPlacement g = placeGroup(dpGroup, pa.tp, cl, dev.intra_node);
        // HSDP / hierarchical ZeRO: the sharded collectives within a shard group of dp_shard x cp
        // ranks, the gradients' shards all-reduced across the replica groups (size 1: none).
        const GroupPlacement gs = pa.replicas() > 1 ? placeGroup(pa.shardGroup(), pa.tp, cl, dev.intra_node) : g;
        const GroupPlacement gr = placeGroup(pa.replicas(), pa.tp * pa.shardGroup(), cl, dev.intra_node);
        const StageParams sp = stageParams(plan, *shape);
        const DType mainGrads = mainGradDtype(plan, fw);
        const double baseGradBytes =
            mainGrads != DType::None ? bytesOf(mainGrads) : bytesOf(pr.grads);
        // Adapters' gradients are in the main-gradient buffer where the framework keeps one
        // (Megatron's DDP), else in the adapter dtype (PEFT: fp32).
        const double adapterGradBytes = sp.adapterShare <= 0 || mainGrads != DType::None
                                            ? baseGradBytes
                                            : adapterBytes(plan, fw);
        const double gradBytes =
            baseGradBytes * (1.0 - sp.adapterShare) + adapterGradBytes * sp.adapterShare;
        const double backwardWindow = ce.backward_microbatch_s; // the last micro-batch's backward
        // Megatron's --overlap-grad-reduce (memory.overlap_grad_reduce): without it
        // DistributedDataParallel has one bucket (bucket_size None), reduced once backward is
        // done, all of it exposed. --overlap-param-gather: the updated shards are all-gathered
        // bucket by bucket in the next forward's pre-hooks (the first micro-batch's forward
        // hides them) instead of right after the optimizer step.
        const bool overlapGrads = overlapGradReduceOf(plan, fw);
        const bool overlapParams = overlapParamGatherOf(plan, fw);
        const double forwardPass = ce.layer_forward_s * L;
        // DDP and the distributed optimizer: the dense gradients over the data-parallel group,
        // the routed experts' over the expert data-parallel group (Megatron-Core's
        // expert_data_parallel_group: world / (ep x etp x pp) ranks, ep x etp apart), each with
        // its own buffer's buckets (core/distoptimizer.h).
        const double expertDp = pa.expertDp();
        const bool expertGroup = sp.expertShare > 0 && pa.sharding != Sharding::Full &&
                                 std::lround(expertDp) != dpGroup;
        auto reduceGrads = [&](double share, bool experts) {
            const CommGroup grpDp = experts ? CommGroup::ExpertDP : CommGroup::DP;
            const GroupPlacement ge =
                experts ? placeGroup(int(std::lround(expertDp)), pa.ep * pa.expertTp(), cl, dev.intra_node) : g;
            const GroupPlacement &gD = experts ? ge : g;
            const GroupPlacement &gsD = experts ? ge : gs;
            const GroupPlacement grD = experts ? placeGroup(1, 1, cl, dev.intra_node) : gr;
            const int shardD = experts ? int(std::lround(expertDp)) : pa.shardGroup();
            const double trained = sp.trainedTotal * share;
            // Both buffers' buckets share the backward (and forward) they hide behind.
            const double window = backwardWindow * share;
            const double forwardWindow = forwardPass * share;
            switch (pa.sharding) {
            case Sharding::None: {
                // DDP: buckets of ddp_bucket_bytes all-reduced as backward fills them.
                const double total = trained * gradBytes;
                const double buckets =
                    overlapGrads ? std::max(1.0, std::ceil(total / std::max(1.0, fw.ddp_bucket_bytes))) : 1.0;
                const double S = total / buckets;
                const double t1 = collectiveTime(CollectiveKind::AllReduce, gD, S, dev);
                const double exposed = overlapGrads ? std::max(t1, buckets * t1 - window) : t1;
                emit(CollectiveKind::AllReduce, grpDp, gD, S, buckets, exposed,
                     CommPhase::Backward,
                     overlapGrads ? QT_TRANSLATE_NOOP("Collective",
                                                      "gradient buckets (DDP), overlapped with backward")
                                  : QT_TRANSLATE_NOOP("Collective",
                                                      "gradients (DDP) in one bucket after backward, not overlapped"));
                break;
            }
            case Sharding::Optimizer:
            case Sharding::Grads: {
                const double bucket =
                    fw.reduce_bucket_bytes > 0 ? fw.reduce_bucket_bytes : fw.ddp_bucket_bytes;
                const double gTotal = trained * gradBytes;
                // Megatron-Core's buckets close at parameter ends once they reach bucket_size
                // elements (core/distoptimizer.h): the first stage's count, both buffers.
                double megatronBuckets = 0;
                if (fw.contiguous_buffers && pa.sharding == Sharding::Optimizer && overlapGrads &&
                    plan.training.method.method == TrainingMethod::Full) {
                    MegatronDdp ddp;
                    ddp.overlapGradReduce = true;
                    ddp.bucketElements = fw.ddp_bucket_elements;
                    ddp.padForHighBusbw = fw.pad_buckets_for_high_nccl_busbw;
                    ddp.padBytes = plan.memory.param_and_grad_buffer_pad;
                    const StageBuffers b = megatronStageBuffers(plan, 0, ddp);
                    megatronBuckets = double(experts ? b.expert.buckets : expertGroup ? b.dense.buckets : b.dense.buckets + b.expert.buckets);
                }
                const double gBuckets =
                    !overlapGrads ? 1.0
                    : megatronBuckets > 0 ? megatronBuckets
                                          : std::max(1.0, std::ceil(gTotal / std::max(1.0, bucket)));
                const double gS = gTotal / gBuckets;
                const double t1 = collectiveTime(CollectiveKind::ReduceScatter, gsD, gS, dev);
                emit(CollectiveKind::ReduceScatter, grpDp, gsD, gS, gBuckets,
                     overlapGrads ? std::max(t1, gBuckets * t1 - window) : t1, CommPhase::Backward,
                     overlapGrads ? QT_TRANSLATE_NOOP("Collective",
                                                      "gradient buckets (ZeRO-1/2), overlapped with backward")
                                  : QT_TRANSLATE_NOOP("Collective",
                                                      "gradients (ZeRO-1/2) in one bucket after backward, "
                                                      "not overlapped"));
                emit(CollectiveKind::AllReduce, grpDp, grD, gS / std::max(1, shardD), gBuckets,
                     -1, CommPhase::Backward,
                     QT_TRANSLATE_NOOP("Collective", "HSDP: each bucket's shard all-reduced across the replicas"));
                const double pTotal = trained * bytesOf(pr.params);
                const double pBuckets =
                    !overlapGrads ? 1.0
                    : megatronBuckets > 0 ? megatronBuckets // param_data has grad_data's buckets
                                          : std::max(1.0, std::ceil(pTotal / std::max(1.0, bucket)));
                if (overlapParams) {
                    const double tAg = collectiveTime(CollectiveKind::AllGather, gsD, pTotal / pBuckets, dev);
                    emit(CollectiveKind::AllGather, grpDp, gsD, pTotal / pBuckets, pBuckets,
                         std::max(tAg, pBuckets * tAg - forwardWindow), CommPhase::Forward,
                         QT_TRANSLATE_NOOP("Collective",
                                           "updated parameter shards, bucket by bucket in the next "
                                           "forward (overlap-param-gather)"));
                } else {
                    emit(CollectiveKind::AllGather, grpDp, gsD, pTotal / pBuckets, pBuckets, -1,
                         CommPhase::OptimizerStep,
                         QT_TRANSLATE_NOOP("Collective",
                                           "updated parameter shards after the optimizer step"));
                }
                break;
            }
            default:
                break;
            }
        };
        switch (pa.sharding) {
        case Sharding::None:
        case Sharding::Optimizer:
        case Sharding::Grads:
            reduceGrads(expertGroup ? 1.0 - sp.expertShare : 1.0, false);
            if (expertGroup)
                reduceGrads(sp.expertShare, true);
            break;
        case Sharding::Full: {
            // FSDP2 / ZeRO-3: parameters gathered in the compute dtype (mixed-precision policy),
            // gradients reduce-scattered in the gradient dtype, layer by layer. With experts
            // sharded over their own group (torchtitan's dp_shard_mod_ep mesh: world / (ep x
            // etp x pp) ranks, as the memory engine shards their states), a layer's routed
            // experts are gathered and reduce-scattered over that group after its dense part,
            // on the same stream: their times add, and each part is exposed by its share.
            struct Part
            {
                CommGroup grp;
                GroupPlacement g;
                double ag, rs; ///< all-gather and reduce-scatter bytes per layer
                double tAg = 0, tRs = 0;
            };
            const int hpz = hpzGroup(plan);
            const double layerExperts = sp.layer > 0 ? sp.layerExperts / sp.layer : 0.0;
            const bool splitExperts = layerExperts > 0 && hpz == 0 && plan.training.method.method == TrainingMethod::Full &&
                                      std::lround(expertDp) != pa.shardGroup();
            std::vector<Part> parts;
            parts.push_back({CommGroup::DP, gs, sp.layer * c, sp.trainedLayer * bytesOf(pr.grads)});
            if (splitExperts) {
                const GroupPlacement ge = placeGroup(int(std::lround(expertDp)), pa.ep * pa.expertTp(), cl, dev.intra_node);
                Part e{CommGroup::ExpertDP, ge, parts[0].ag * layerExperts, parts[0].rs * layerExperts};
                parts[0].ag -= e.ag;
                parts[0].rs -= e.rs;
                parts.push_back(e);
            }
            double tAg = 0, tRs = 0;
            for (Part &pt : parts) {
                pt.tAg = collectiveTime(CollectiveKind::AllGather, pt.g, pt.ag, dev);
                pt.tRs = collectiveTime(CollectiveKind::ReduceScatter, pt.g, pt.rs, dev);
                tAg += pt.tAg;
                tRs += pt.tRs;
            }
            const double agS = sp.layer * c;
            // DeepSpeed ZeRO++ hpZ (core/hpz.h): once the first forward has made the secondary
            // partitions, the gathers run within the hpZ group (a node's ranks).
            const GroupPlacement gh = hpz > 0 ? placeGroup(hpz, pa.tp, cl, dev.intra_node) : gs;
            const double tAgH = hpz > 0 ? collectiveTime(CollectiveKind::AllGather, gh, agS, dev) : tAg;
            const double mH = hpzForwardGathers(plan, int(m)); // forwards gathering within hpZ
            // Forward: layer i+1 is gathered while layer i computes; the first is waited for.
            layerWise = true;
            auto forwardExposed = [&](double t) { return t + (L - 1) * std::max(0.0, t - ce.layer_forward_s); };
            for (const Part &pt : parts)
                emit(CollectiveKind::AllGather, pt.grp, pt.g, pt.ag, (m - mH) * L,
                     (m - mH) * forwardExposed(tAg) * (tAg > 0 ? pt.tAg / tAg : 0.0), CommPhase::Forward,
                     pt.grp == CommGroup::ExpertDP
                         ? QT_TRANSLATE_NOOP("Collective", "layer routed experts, forward, over their own shard "
                                                           "group (after the dense part)")
                         : QT_TRANSLATE_NOOP("Collective", "layer parameters, forward (prefetched one layer ahead)"));
            emit(CollectiveKind::AllGather, CommGroup::DP, gh, agS, mH * L, mH * forwardExposed(tAgH),
                 CommPhase::Forward,
                 QT_TRANSLATE_NOOP("Collective",
                                   "ZeRO++ hpZ: layer parameters of the later micro-batches' forwards, "
                                   "gathered from the secondary partitions within the hpZ group"));
            const double bwdWin = ce.layer_backward_s + recomputedShare * ce.layer_recompute_s;
            const double bwdComm = (pa.reshard_after_forward ? tAgH : 0.0) + tRs;
            const double bwdExposed = m * (L * std::max(0.0, bwdComm - bwdWin) + tRs);
            const double share =
                bwdComm > 0 ? (pa.reshard_after_forward ? tAgH : 0.0) / bwdComm : 0.0;
            if (pa.reshard_after_forward) {
                if (hpz > 0)
                    emit(CollectiveKind::AllGather, CommGroup::DP, gh, agS, m * L, bwdExposed * share,
                         CommPhase::Backward,
                         QT_TRANSLATE_NOOP("Collective", "ZeRO++ hpZ: layer parameters again in backward, "
                                                         "from the secondary partitions within the hpZ group"));
                else
                    for (const Part &pt : parts)
                        emit(CollectiveKind::AllGather, pt.grp, pt.g, pt.ag, m * L,
                             bwdExposed * share * (tAg > 0 ? pt.tAg / tAg : 0.0), CommPhase::Backward,
                             pt.grp == CommGroup::ExpertDP
                                 ? QT_TRANSLATE_NOOP("Collective", "layer routed experts again in backward")
                                 : QT_TRANSLATE_NOOP("Collective",
                                                     "layer parameters again in backward (reshard_after_forward)"));
            }
            for (const Part &pt : parts)
                emit(CollectiveKind::ReduceScatter, pt.grp, pt.g, pt.rs, m * L,
                     bwdExposed * (1 - share) * (tRs > 0 ? pt.tRs / tRs : 0.0), CommPhase::Backward,
                     pt.grp == CommGroup::ExpertDP
                         ? QT_TRANSLATE_NOOP("Collective", "layer routed experts' gradients, over their own "
                                                           "shard group")
                         : QT_TRANSLATE_NOOP("Collective",
                                             "layer gradients, overlapped with the next layer's backward"));
            for (const Part &pt : parts)
                emit(CollectiveKind::AllReduce, CommGroup::DP, gr,
                     pt.rs / std::max(1.0, pt.grp == CommGroup::ExpertDP ? expertDp : double(pa.shardGroup())), m * L,
                     -1, CommPhase::Backward,
                     QT_TRANSLATE_NOOP("Collective", "HSDP: each layer's gradient shard all-reduced across the replicas"));
            layerWise = false;
            if (sp.root > 0) {
                emit(CollectiveKind::AllGather, CommGroup::DP, gs, sp.root * c, m, -1,
                     CommPhase::Forward,
                     QT_TRANSLATE_NOOP(
                         "Collective",
                         "root module (embedding, final norm, head), kept until backward ends"));
                if (sp.trainedRoot > 0)
                    emit(CollectiveKind::ReduceScatter, CommGroup::DP, gs,
                         sp.trainedRoot * bytesOf(pr.grads), m, -1, CommPhase::Backward,
                         QT_TRANSLATE_NOOP("Collective", "root module gradients"));
            }
            break;
        }
        }
    }

    // ---- tensor parallel ----------------------------------------------------------------------
    layerWise = true; // TP, CP and EP collectives are issued layer by layer
    if (pa.tp > 1) {
        const GroupPlacement g = placeGroup(pa.tp, 1, cl, dev.intra_node);
        const double S = T * h * c; // the full activation [T, h] (SP: the gathered buffer)
        const double perMb = 2.0 * L;
        if (!pa.sp) {
            emit(CollectiveKind::AllReduce, CommGroup::TP, g, S, m * perMb, -1, CommPhase::Forward,
                 QT_TRANSLATE_NOOP("Collective", "after attention and MLP (row-parallel outputs)"));
            emit(CollectiveKind::AllReduce, CommGroup::TP, g, S, m * perMb, -1, CommPhase::Backward,
                 QT_TRANSLATE_NOOP("Collective", "input gradients of the column-parallel inputs"));
            if (recomputed > 0)
                emit(CollectiveKind::AllReduce, CommGroup::TP, g, S, m * 2.0 * recomputed, -1,
                     CommPhase::Backward,
                     QT_TRANSLATE_NOOP("Collective",
                                       "forward all-reduces repeated by full recompute"));
        } else {
            emit(CollectiveKind::AllGather, CommGroup::TP, g, S, m * perMb, -1, CommPhase::Forward,
                 QT_TRANSLATE_NOOP("Collective",
                                   "SP: gather the sequence before attention and MLP"));
            emit(CollectiveKind::ReduceScatter, CommGroup::TP, g, S, m * perMb, -1,
                 CommPhase::Forward,
                 QT_TRANSLATE_NOOP("Collective", "SP: scatter attention and MLP outputs"));
            emit(CollectiveKind::AllGather, CommGroup::TP, g, S, m * perMb, -1, CommPhase::Backward,
                 QT_TRANSLATE_NOOP("Collective", "SP: backward of the reduce-scatters"));
            emit(CollectiveKind::ReduceScatter, CommGroup::TP, g, S, m * perMb, -1,
                 CommPhase::Backward,
                 QT_TRANSLATE_NOOP("Collective", "SP: backward of the all-gathers"));
            if (recomputed > 0) {
                emit(CollectiveKind::AllGather, CommGroup::TP, g, S, m * 2.0 * recomputed, -1,
                     CommPhase::Backward,
                     QT_TRANSLATE_NOOP("Collective", "SP: all-gathers repeated by full recompute"));
                emit(CollectiveKind::ReduceScatter, CommGroup::TP, g, S, m * 2.0 * recomputed, -1,
                     CommPhase::Backward,
                     QT_TRANSLATE_NOOP("Collective",
                                       "SP: reduce-scatters repeated by full recompute"));
            }
        }
    }

    // ---- context parallel: Ulysses all-to-alls inside, the K/V ring across -------------------
    const int ulysses = pa.ulyssesDegree(), ring = pa.ringDegree();
    // MindSpeed-LLM repeats K and V to the query heads before the all-to-all (grouped-query
    // attention): they travel, and go round the hybrid's ring, at the query heads' width.
    const double kvScale =
        ulyssesRepeatsKv(plan, fw) ? double(mo.heads) / double(mo.kv_heads) : 1.0;
    if (ulysses > 1) {
        // DeepSpeed-Ulysses (MindSpeed's ulysses_cp_algo): q, k and v go from the sequence split
        // to the head split before attention, the output back after it; their gradients the
        // same way in backward. On the critical path of every layer.
        const GroupPlacement g = placeGroup(ulysses, pa.tp, cl, dev.intra_node);
        const double qkv =
            T * (double(mo.qDim()) + double(mo.kvDim() + mo.vDim()) * kvScale) / pa.tp * c / 3.0;
        const double out = T * double(mo.outDim()) / pa.tp * c;
        emit(CollectiveKind::AllToAll, CommGroup::CP, g, qkv, 3.0 * m * (L + attentionRecomputed), -1,
             CommPhase::Forward,
             QT_TRANSLATE_NOOP("Collective", "Ulysses: q, k and v to the head split (again for each recomputed attention)"));
        emit(CollectiveKind::AllToAll, CommGroup::CP, g, out, m * (L + attentionRecomputed), -1, CommPhase::Forward,
             QT_TRANSLATE_NOOP("Collective", "Ulysses: the attention output back to the sequence split"));
        emit(CollectiveKind::AllToAll, CommGroup::CP, g, out, m * L, -1, CommPhase::Backward,
             QT_TRANSLATE_NOOP("Collective", "Ulysses: the output's gradient to the head split"));
        emit(CollectiveKind::AllToAll, CommGroup::CP, g, qkv, 3.0 * m * L, -1, CommPhase::Backward,
             QT_TRANSLATE_NOOP("Collective", "Ulysses: dq, dk and dv back to the sequence split"));
    }
    if (ring > 1) {
        const GroupPlacement g = placeGroup(ring, pa.tp * ulysses, cl, dev.intra_node);
        // This rank's K and V block (MLA: keys of qk_nope + qk_rope, values of v_head_dim); under
        // the hybrid it holds ulysses x the tokens of 1 / ulysses of the heads: the same bytes.
        const double S = T * double(mo.kvDim() + mo.vDim()) * kvScale / pa.tp * c;
        const double steps = ring - 1.0;
        const double t1 = collectiveTime(CollectiveKind::SendRecv, g, S, dev);
        const double blockF = ce.layer_attention_forward_s / ring;
        const double blockB = ce.layer_attention_backward_s / ring;
        const double fwdCount = m * (L + attentionRecomputed) * steps;
        emit(CollectiveKind::SendRecv, CommGroup::CP, g, S, fwdCount,
             fwdCount * std::max(0.0, t1 - blockF), CommPhase::Forward,
             QT_TRANSLATE_NOOP("Collective",
                               "K/V block to the next rank of the ring (again for each recomputed attention)"));
        const double bwdCount = m * L * steps * 2.0;
        emit(CollectiveKind::SendRecv, CommGroup::CP, g, S, bwdCount,
             m * L * steps * std::max(0.0, 2.0 * t1 - blockB), CommPhase::Backward,
             QT_TRANSLATE_NOOP("Collective", "K/V and dK/dV blocks around the ring"));
    }

    // ---- pipeline parallel ---------------------------------------------------------------------
    if (pa.pp > 1) {
        layerWise = false;
        const GroupPlacement g = placeGroup(2, pa.tp * pa.cp * pa.dp, cl, dev.intra_node);
        const double v = pa.pp_schedule == PpSchedule::Interleaved ? pa.virtual_stages : 1;
        const double S = T * h / (pa.sp ? pa.tp : 1) * c;
        emit(CollectiveKind::SendRecv, CommGroup::PP, g, S, m * v, -1, CommPhase::Forward,
             QT_TRANSLATE_NOOP("Collective",
                               "activations to the next stage (per micro-batch and model chunk)"));
        emit(CollectiveKind::SendRecv, CommGroup::PP, g, S, m * v, -1, CommPhase::Backward,
             QT_TRANSLATE_NOOP("Collective", "activation gradients to the previous stage"));
    }

    // ---- expert parallel and expert tensor parallel ----------------------------------------
    // Per MoE layer of a stage, each micro-batch: the dispatch and the combine (core/moe.h's
    // routed copies: top_k x the busiest rank's load per token entering the block), the
    // gradients of both in backward. Under expert tensor parallelism with sequence parallelism
    // the dispatched tokens are all-gathered over the etp group and the experts' outputs
    // reduce-scattered back.
    // MoE layers per stage: the mean, or on an uneven layout the most any stage holds.
    double moeLayers = double(mo.moeLayers()) / pa.pp;
    if (pa.customLayout()) {
        int most = 0;
        for (const LayerMix &mix : shape->mixes)
            most = std::max(most, mix.moe);
        moeLayers = most;
    }
    // The MoE layers among the recomputed ones (in proportion): their dispatch and combine run
    // again before their gradients.
    const double moeRecomputed = moeLayers * recomputedShare;
    // An all-gather and a reduce-scatter per MoE layer and micro-batch, forward and backward,
    // and the forward's again for the recomputed layers.
    auto gatherAndScatter = [&](CommGroup grp, const GroupPlacement &g, double S, const char *gathered,
                                const char *scattered, const char *backward) {
        emit(CollectiveKind::AllGather, grp, g, S, m * moeLayers, -1, CommPhase::Forward, gathered);
        emit(CollectiveKind::ReduceScatter, grp, g, S, m * moeLayers, -1, CommPhase::Forward, scattered);
        emit(CollectiveKind::AllGather, grp, g, S, m * (moeLayers + moeRecomputed), -1, CommPhase::Backward,
             backward);
        emit(CollectiveKind::ReduceScatter, grp, g, S, m * (moeLayers + moeRecomputed), -1, CommPhase::Backward,
             backward);
    };
    if (mo.moe.enabled() && moeLayers > 0) {
        const MoeRouting route = moeRouting(mo, pa);
        const int etp = pa.expertTp();
        if (pa.ep > 1) {
            layerWise = true;
            const GroupPlacement g = placeGroup(pa.ep, etp, cl, dev.intra_node);
            const double S = T * route.dispatchCopies * h * c;
            const bool gather = mo.moe.dispatcher == MoeShape::Dispatcher::AllGather;
            if (gather) {
                gatherAndScatter(CommGroup::EP, g, S,
                                 QT_TRANSLATE_NOOP("Collective", "tokens gathered for the local experts (all-gather dispatcher)"),
                                 QT_TRANSLATE_NOOP("Collective", "expert outputs returned (all-gather dispatcher)"),
                                 QT_TRANSLATE_NOOP("Collective", "gradients of dispatch and combine"));
            } else {
                emit(CollectiveKind::AllToAll, CommGroup::EP, g, S, m * moeLayers * 2.0, -1, CommPhase::Forward,
                     QT_TRANSLATE_NOOP("Collective", "token dispatch and combine"));
                // Full recompute runs the dispatch and combine again before their gradients.
                emit(CollectiveKind::AllToAll, CommGroup::EP, g, S,
                     m * 2.0 * (moeLayers + moeRecomputed), -1, CommPhase::Backward,
                     QT_TRANSLATE_NOOP("Collective", "gradients of dispatch and combine"));
            }
            layerWise = false;
        }
        if (etp > 1 && pa.sp) {
            layerWise = true;
            const GroupPlacement g = placeGroup(etp, 1, cl, dev.intra_node);
            const double S = T * route.copies * h * c; // the gathered copies (all-gather output)
            gatherAndScatter(CommGroup::ETP, g, S,
                             QT_TRANSLATE_NOOP("Collective", "dispatched tokens across the expert tensor-parallel group"),
                             QT_TRANSLATE_NOOP("Collective", "expert outputs summed back over the expert tensor-parallel group"),
                             QT_TRANSLATE_NOOP("Collective", "gradients across the expert tensor-parallel group"));
            layerWise = false;
        }
    }
}

class VectorSink final : public CommSink
{
public:
    std::vector<Collective> out;
    void add(const CommItem &it) override
    {
        Collective c;
        c.collective = std::string(collectiveKey(it.kind));
        c.group = std::string(groupKey(it.group));
        c.group_size = it.group_size;
        c.bytes = it.bytes;
        c.count_per_step = it.count;
        c.time_s = it.time_s;
        c.exposed_time_s = it.exposed_s;
        c.phase = std::string(commPhaseKey(it.phase));
        c.note = it.note;
        out.push_back(std::move(c));
    }
};

class SumSink final : public CommSink
{
public:
    double exposed = 0;
    void add(const CommItem &it) override { exposed += it.exposed_s; }
};

} // namespace

void forEachCollective(const Plan &plan, const DeviceProfile &dev, const FrameworkProfile &fw,
                       const ComputeEstimate &compute, CommSink &sink)
{
    emitCollectives(plan, dev, fw, compute, sink, true);
}

std::vector<Collective> communicationInventory(const Plan &plan, const DeviceProfile &dev,
                                               const FrameworkProfile &fw,
                                               const ComputeEstimate &compute)
{
    VectorSink sink;
    forEachCollective(plan, dev, fw, compute, sink);
    return std::move(sink.out);
}

double exposedCommunication(const Plan &plan, const DeviceProfile &dev, const FrameworkProfile &fw,
                            const ComputeEstimate &compute)
{
    SumSink sink;
    forEachCollective(plan, dev, fw, compute, sink);
    return sink.exposed;
}

double modelParallelCommunication(const Plan &plan, const DeviceProfile &dev, const FrameworkProfile &fw,
                                  const ComputeEstimate &compute)
{
    SumSink sink;
    emitCollectives(plan, dev, fw, compute, sink, false);
    return sink.exposed;
}

} // namespace shardscope
