#include "distoptimizer.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>

namespace shardscope {

namespace {

int64_t padTo(int64_t v, int64_t divisor) { return divisor <= 1 ? v : (v + divisor - 1) / divisor * divisor; }

struct Interval
{
    int64_t start, end;
};

/// Adds to each of the dp equal shards of [begin, end) the parameter elements inside it.
void addShards(const std::vector<Interval> &params, int64_t begin, int64_t end, std::vector<int64_t> &perRank)
{
    const int dp = int(perRank.size());
    const int64_t size = (end - begin) / std::max(1, dp);
    size_t i = 0;
    for (int r = 0; r < dp; ++r) {
        const int64_t lo = begin + r * size, hi = lo + size;
        int64_t owned = 0;
        while (i < params.size() && params[i].end <= lo)
            ++i;
        for (size_t j = i; j < params.size() && params[j].start < hi; ++j)
            owned += std::max<int64_t>(0, std::min(hi, params[j].end) - std::max(lo, params[j].start));
        perRank[size_t(r)] += owned;
    }
}

} // namespace

double defaultBucketElements(int dp) { return std::max(40000000.0, 1000000.0 * std::max(1, dp)); }

double bucketEndDivisor(int dp, bool padForHighBusbw, int padBytes, int elementBytes)
{
    int64_t shard = std::max(1, dp);
    if (padBytes > 0)
        shard *= padBytes / std::gcd<int64_t>(padBytes, std::max(1, elementBytes));
    int64_t d = std::lcm<int64_t>(shard, 128);
    if (padForHighBusbw)
        d = std::lcm<int64_t>(d, 65536);
    return double(d);
}

BufferLayout layoutBuffer(const std::vector<BufferTensor> &tensors, const BufferOptions &o)
{
    BufferLayout out;
    const int dp = std::max(1, o.dp);
    if (!o.distributedOptimizer) {
        // _compute_default_per_buffer_param_layout: no alignment, no padding.
        for (const BufferTensor &t : tensors)
            out.unpadded += std::ceil(t.elements);
        out.padded = out.unpadded;
        out.buckets = tensors.empty() ? 0 : 1;
        if (o.bucketElements > 0 && out.unpadded > 0)
            out.buckets = int(std::max(1.0, std::ceil(out.unpadded / o.bucketElements)));
        out.largestBucket = out.buckets > 0 ? std::min(out.unpadded, o.bucketElements > 0 ? o.bucketElements : out.unpadded) : 0.0;
        out.shardElements = out.padded;
        out.shardPadded = out.padded;
        return out;
    }
    const int64_t divisor = int64_t(bucketEndDivisor(dp, o.padForHighBusbw, o.padBytes, o.elementBytes));
    const int64_t bucketSize = o.bucketElements > 0 ? int64_t(std::ceil(o.bucketElements)) : 0;
    int64_t paramStart = 0, bucketStart = 0, paramEnd = 0;
    std::vector<Interval> bucketParams; // the open bucket's parameters
    std::vector<int64_t> perRank(size_t(dp), 0);
    auto finalize = [&](int64_t end) {
        const int64_t bucketEnd = padTo(end, divisor);
        addShards(bucketParams, bucketStart, bucketEnd, perRank);
        out.largestBucket = std::max(out.largestBucket, double(bucketEnd - bucketStart));
        ++out.buckets;
        bucketParams.clear();
        bucketStart = bucketEnd;
        return bucketEnd;
    };
    for (auto it = tensors.rbegin(); it != tensors.rend(); ++it) {
        const int64_t n = int64_t(std::ceil(it->elements));
        if (n <= 0)
            continue;
        paramStart = padTo(paramStart, 64);
        if (it->sharedEmbedding && !bucketParams.empty())
            paramStart = finalize(paramStart);
        paramEnd = paramStart + n;
        bucketParams.push_back({paramStart, paramEnd});
        out.unpadded += double(n);
        if ((bucketSize > 0 && paramEnd - bucketStart >= bucketSize) || it->sharedEmbedding)
            paramStart = finalize(paramEnd);
        else
            paramStart = paramEnd;
    }
    if (!bucketParams.empty())
        finalize(paramEnd);
    out.padded = double(bucketStart);
    out.shardElements = double(*std::max_element(perRank.begin(), perRank.end()));
    out.shardPadded = out.padded / dp;
    return out;
}

} // namespace shardscope

// --- a stage's parameters as Megatron's modules hold them --------------------------------------

#include "dtype.h"
#include "layers.h"
#include "model.h"
#include "plan.h"

namespace shardscope {

namespace {

/// One decoder layer's tensors on a rank (core/layers.h's linears: Hugging Face's separate
/// q / k / v and gate / up where Megatron fuses linear_qkv and linear_fc1; the 64-element
/// alignment between them is what that changes, below 64 elements a tensor).
void appendLayer(const LayerSpec &s, const Parallel &pa, std::vector<BufferTensor> &dense,
                 std::vector<BufferTensor> &expert)
{
    const double tp = pa.tp, etp = pa.expertTp();
    if (s.norms > 0) {
        dense.push_back({double(s.norms) / 2.0});
        dense.push_back({double(s.norms) / 2.0});
    }
    if (s.attentionVectors > 0)
        dense.push_back({double(s.attentionVectors)});
    const int localExperts = s.experts > 0 ? std::max(1, s.experts / std::max(1, pa.ep)) : 0;
    if (s.router > 0)
        dense.push_back({double(s.router)});
    if (s.sharedGate > 0)
        dense.push_back({double(s.sharedGate)});
    for (const LinearSpec &l : s.linears) {
        const bool routed = l.part == LayerPart::Expert;
        const double split = l.split == Split::Duplicated ? 1.0 : (routed ? etp : tp);
        const double w = double(l.in) * double(l.out) / split;
        const double b = l.bias ? double(l.out) / (l.split == Split::Column ? split : 1.0) : 0.0;
        const int n = routed ? localExperts : l.copies;
        for (int i = 0; i < n; ++i) {
            (routed ? expert : dense).push_back({w});
            if (b > 0)
                (routed ? expert : dense).push_back({b});
        }
    }
}

} // namespace

StageBuffers megatronStageBuffers(const Plan &plan, int stage, const MegatronDdp &ddp)
{
    const ModelShape &mo = plan.model;
    // The stage's chunks and their layers as the plan lays them out (core/layers.h: even, uneven
    // first / last stages, listed per stage).
    return megatronStageBuffers(plan, stage, ddp, countParameters(mo), stageLayout(plan.parallel, int(mo.layers)),
                                layerSpec(mo, LayerKind::Dense),
                                mo.moe.enabled() ? layerSpec(mo, LayerKind::Moe) : LayerSpec{});
}

namespace {

StageBuffers buildStageBuffers(const Plan &plan, int stage, const MegatronDdp &ddp, const ParameterCounts &pc,
                               const StageLayout &layout, const LayerSpec &denseSpec, const LayerSpec &moeSpec);

/// Everything buildStageBuffers reads of its arguments but the model (whose counts and layer
/// specs the caller derives from it).
std::vector<double> bufferKey(const Plan &plan, int stage, const MegatronDdp &ddp, const StageLayout &layout)
{
    const Parallel &pa = plan.parallel;
    std::vector<double> k = {double(stage), double(pa.tp), double(pa.pp), double(pa.ep), double(pa.expertTp()),
                             double(pa.dp), double(pa.shardGroup()), pa.expertDp(), double(layout.chunks),
                             double(ddp.distributedOptimizer), double(ddp.overlapGradReduce), ddp.bucketElements,
                             double(ddp.padForHighBusbw), double(ddp.padBytes), double(bytesOf(plan.precision.params))};
    for (int c = 0; c < std::max(1, layout.chunks); ++c) {
        k.push_back(double(layout.offset(stage, c)));
        k.push_back(double(layout.chunk(stage, c)));
    }
    return k;
}

} // namespace

StageBuffers megatronStageBuffers(const Plan &plan, int stage, const MegatronDdp &ddp, const ParameterCounts &pc,
                                  const StageLayout &layout, const LayerSpec &denseSpec, const LayerSpec &moeSpec)
{
    // A search asks for the same stages' buffers under every micro-batch, recompute and
    // offload choice: the last few are kept, per thread, by the model and everything else read.
    struct Entry
    {
        ModelShape model;
        std::vector<double> key;
        StageBuffers buffers;
    };
    constexpr size_t kKept = 8;
    thread_local std::vector<Entry> kept;
    thread_local size_t next = 0;
    std::vector<double> key = bufferKey(plan, stage, ddp, layout);
    for (const Entry &e : kept)
        if (e.key == key && e.model == plan.model)
            return e.buffers;
    Entry e{plan.model, std::move(key), buildStageBuffers(plan, stage, ddp, pc, layout, denseSpec, moeSpec)};
    if (kept.size() < kKept) {
        kept.push_back(std::move(e));
        return kept.back().buffers;
    }
    kept[next] = std::move(e);
    const StageBuffers &b = kept[next].buffers;
    next = (next + 1) % kKept;
    return b;
}

namespace {

StageBuffers buildStageBuffers(const Plan &plan, int stage, const MegatronDdp &ddp, const ParameterCounts &pc,
                               const StageLayout &layout, const LayerSpec &denseSpec, const LayerSpec &moeSpec)
{
    const ModelShape &mo = plan.model;
    const Parallel &pa = plan.parallel;
    const double tp = pa.tp;
    const int v = std::max(1, layout.chunks);
    const int chunkCount = pa.pp * v;
    StageBuffers out;
    out.chunks = v;
    const int dp = pa.shardGroup();
    const int expertDp = std::max(1, int(std::lround(pa.expertDp())));
    for (int k = 0; k < v; ++k) {
        const int chunk = k * pa.pp + stage; // the chunk's place in the model
        const bool firstChunk = chunk == 0, lastChunk = chunk == chunkCount - 1;
        std::vector<BufferTensor> dense, expert;
        if (firstChunk) {
            dense.push_back({double(pc.embedding) / tp, chunkCount > 1 && mo.tied_embeddings});
            if (pc.position > 0)
                dense.push_back({double(pc.position)});
        }
        const int begin = layout.offset(stage, k), end = begin + layout.chunk(stage, k);
        for (int layer = begin; layer < std::min<int>(int(mo.layers), end); ++layer)
            appendLayer(mo.moeLayer(layer) ? moeSpec : denseSpec, pa, dense, expert);
        if (lastChunk) {
            dense.push_back({double(pc.final_norm)});
            // Multi-token prediction modules (before the output layer): enorm, hnorm, the 2h -> h
            // column-parallel projection, a layer of the last layer's kind, its final norm; the
            // embedding they share is a shared_embedding copy on a later stage.
            if (mo.mtp_layers > 0 && chunkCount > 1 && !mo.tied_embeddings)
                dense.push_back({double(pc.embedding) / tp, true});
            for (int i = 0; i < mo.mtp_layers; ++i) {
                const double h = double(mo.hidden);
                dense.push_back({h});
                dense.push_back({h});
                dense.push_back({2.0 * h * h / tp});
                if (mo.linear_bias)
                    dense.push_back({h / tp});
                appendLayer(mo.moeLayer(mo.layers - 1) ? moeSpec : denseSpec, pa, dense, expert);
                dense.push_back({double(pc.final_norm)});
            }
            if (!mo.tied_embeddings)
                dense.push_back({double(pc.lm_head) / tp});
            else if (chunkCount > 1)
                dense.push_back({double(pc.embedding) / tp, true});
        }
        // dist_utils.py: bucketing only for the first model chunk of the first stage, and
        // DistributedDataParallel.__init__: only with overlap_grad_reduce.
        BufferOptions o;
        o.distributedOptimizer = ddp.distributedOptimizer;
        o.padForHighBusbw = ddp.padForHighBusbw;
        o.padBytes = ddp.padBytes;
        o.elementBytes = int(bytesOf(plan.precision.params));
        const bool bucketing = ddp.overlapGradReduce && stage == 0 && k == 0;
        o.dp = dp;
        o.bucketElements = bucketing ? (ddp.bucketElements > 0 ? ddp.bucketElements : defaultBucketElements(pa.dp)) : 0;
        const BufferLayout d = layoutBuffer(dense, o);
        o.dp = expertDp;
        const BufferLayout e = layoutBuffer(expert, o);
        for (auto [sum, one] : {std::pair{&out.dense, &d}, std::pair{&out.expert, &e}}) {
            sum->unpadded += one->unpadded;
            sum->padded += one->padded;
            sum->buckets += one->buckets;
            sum->largestBucket = std::max(sum->largestBucket, one->largestBucket);
            sum->shardElements += one->shardElements;
            sum->shardPadded += one->shardPadded;
        }
    }
    return out;
}

} // namespace

} // namespace shardscope
