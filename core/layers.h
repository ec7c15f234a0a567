#pragma once

// A decoder layer as the linear layers and vectors it is made of, per layer kind (dense FFN or
// MoE) and attention kind (MHA / GQA or multi-head latent attention): what parameter counts,
// adapters, FLOPs and the per-rank split are derived from.
#include "adapters.h"
#include "errors.h"
#include "model.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace shardscope {

struct Parallel;
struct Plan;

enum class LayerKind { Dense, Moe };

/// How tensor parallelism splits a linear (Megatron-Core's parallel_mode): column-parallel by
/// output rows, row-parallel by input columns, or duplicated on every rank (MLA's
/// down-projections).
enum class Split { Column, Row, Duplicated };

/// What a linear belongs to: attention, the dense FFN, a shared expert, or one routed expert
/// (split by expert tensor parallelism, one copy per local expert).
enum class LayerPart { Attention, DenseFfn, SharedExpert, Expert };

struct LinearSpec
{
    const char *name = "";   ///< Hugging Face's module name ("q_proj", "kv_b_proj", "gate_proj")
    LinearTarget target = kTargetQ; ///< the adapter target it answers to
    int64_t in = 0, out = 0;
    Split split = Split::Column;
    LayerPart part = LayerPart::Attention;
    bool bias = false;
    int copies = 1;          ///< identical linears (shared experts; routed ones are per expert)
    int64_t weights() const { return in * out * copies; }
    int64_t biases() const { return bias ? out * copies : 0; }
};

struct LayerSpec
{
    LayerKind kind = LayerKind::Dense;
    std::vector<LinearSpec> linears; ///< a routed expert's linears once (part Expert)
    /// Norm weights (and LayerNorm biases) outside the linears: the two pre-norms.
    int64_t norms = 0;
    /// Attention's own vectors: MLA's latent norms, Qwen3's QK norms (replicated under TP).
    int64_t attentionVectors = 0;
    int64_t router = 0;      ///< experts x hidden
    int64_t sharedGate = 0;  ///< Qwen2-MoE's shared-expert gate (hidden)
    int experts = 0;         ///< routed experts (0: dense layer)
    /// Parameters of the parts (routed experts all counted).
    int64_t attention() const;
    int64_t denseFfn() const;
    int64_t shared() const;  ///< shared experts and their gate
    int64_t expert() const;  ///< one routed expert
    int64_t total() const;
};

LayerSpec layerSpec(const ModelShape &m, LayerKind kind);
inline LayerKind layerKind(const ModelShape &m, int layer)
{
    return m.moeLayer(layer) ? LayerKind::Moe : LayerKind::Dense;
}

/// Elements of one layer on one rank: tp splits attention, the dense FFN and shared experts,
/// etp splits each routed expert and ep spreads them.
struct RankLayer
{
    double attention = 0, denseFfn = 0, shared = 0, norms = 0, router = 0;
    double experts = 0; ///< all local routed experts
    double matmul = 0;  ///< weights that a matmul reads (what autocast casts)
    double dense() const { return attention + denseFfn + shared + norms + router; }
    double total() const { return dense() + experts; }
};

RankLayer rankLayer(const ModelShape &m, LayerKind kind, int tp, int ep, int etp);
/// One multi-token-prediction module on a rank of the last stage (DeepSeek-V3; Megatron's MTP
/// block): enorm and hnorm, the 2h -> h projection (column-parallel), a layer of the last
/// layer's kind split like it (its routed experts by ep and etp) and its final norm. Zero
/// without MTP.
RankLayer mtpModuleOnRank(const ModelShape &m, int tp, int ep, int etp);
RankLayer rankLayer(const LayerSpec &spec, int tp, int ep, int etp);
/// The Megatron-Core module a linear is part of: standard attention's q, k and v are one
/// linear_qkv, an FFN part's gate and up one linear_fc1 (per part: dense FFN, shared experts, a
/// routed expert); every other linear is its own (MLA's projections included).
enum class FusedModule
{
    Own,
    LinearQkv,
    LinearFc1
};
FusedModule fusedModuleOf(const LinearSpec &l);
/// Elements of the largest parameter tensor of one layer on a rank, as Megatron-Core builds the
/// layer: q, k and v one linear_qkv, each part's gate and up one linear_fc1, a shared-expert MLP
/// one module over all its shared experts, each routed expert its own (split by etp), the router.
double largestFusedTensor(const LayerSpec &spec, int tp, int etp);

/// How the decoder layers are spread over the pipeline: the layers of every model chunk
/// (virtual stage) of every stage. The layers run through the chunks in Megatron's order:
/// virtual stage 0 of stages 0 .. pp-1, then virtual stage 1 of each, ... (one chunk per stage
/// without interleaving).
///
/// What decides the counts (the plan's parallel.* fields, docs/plan-format.md):
///  - the default: layers / (pp x virtual stages) in every chunk;
///  - `first_stage_layers` / `last_stage_layers` (Megatron-Core's
///    --decoder-first/last-pipeline-num-layers, TransformerConfig.num_layers_in_first/
///    last_pipeline_stage): those stages hold that many, the rest split evenly over the others,
///    each stage's layers split evenly over its virtual stages (transformer_block.py,
///    get_num_layers_to_build; transformer_layer.py, get_transformer_layer_offset);
///  - `account_for_embedding` / `account_for_loss` (--account-for-embedding/loss-in-pipeline-
///    split): the embedding (the loss) counted as one more layer, the first chunk of the first
///    stage (the last chunk of the last stage) building one decoder layer fewer;
///  - `stage_layers` (MindSpeed-LLM's --num-layer-list): the layers of each stage, listed; no
///    virtual stages (mindspeed_llm/features_manager/pipeline_parallel/num_layer_list.py);
///  - `pipeline_layout` (Megatron-Core's --pipeline-model-parallel-layout,
///    pipeline_parallel_layer_layout.py): each chunk's layers spelled out.
struct StageLayout
{
    int pp = 1;     ///< stages
    int chunks = 1; ///< model chunks per stage (virtual stages when interleaved)
    std::vector<int> counts; ///< decoder layers of chunk c of stage s at [s * chunks + c]
    int chunk(int stage, int c) const { return counts[size_t(stage * chunks + c)]; }
    int stage(int stage) const; ///< the stage's layers, all its chunks
    std::vector<int> stages() const; ///< each stage's layers (pp entries)
    /// The layers of chunk c of `stage` that Megatron's --recompute-method block recomputes
    /// with --recompute-num-layers n: its first max(1, n). With MindSpeed's
    /// --enable-recompute-layers-per-pp-rank (`perPpRank`) n counts the stage's layers over
    /// its chunks, layer l of chunk c ranking l x chunks + c: the chunk's first
    /// ceil((n - c) / chunks).
    int chunkBlockRecomputed(int stage, int c, int n, bool perPpRank) const;
    /// The same over all of the stage's chunks.
    int blockRecomputed(int stage, int n, bool perPpRank = false) const;
    /// Index of the first layer of chunk c of `stage` (the model's layer numbering).
    int offset(int stage, int c) const;
    int largestChunk() const;
    int largestStage() const; ///< the most layers a stage holds, all its chunks
    /// Whether every chunk of every stage holds the same number of layers.
    bool even() const;
};

/// The layout of `layers` decoder layers under `pa`. It does not check: on a layout that
/// stageLayoutError refuses the counts still add up to `layers` (the rest on the last stage)
/// but mean nothing; with pp 1 every layer is on the one stage whatever the fields say.
StageLayout stageLayout(const Parallel &pa, int layers);
/// The decoder layers of each stage (pp entries): what a search or a view needs per stage.
std::vector<int> stageLayers(const Parallel &pa, int layers);
std::vector<int> stageLayers(const Plan &plan);
/// Megatron-Core's layout string unrolled (PipelineParallelLayerLayout.parse_str_to_list):
/// commas dropped, "(...)*n" and "x*n" repeated, split at `|` into the chunks' symbols (E, t,
/// m, L), in the string's order (virtual stage 0 of every stage, then 1, ...). Throws
/// PlanError on parallel.pipeline_layout for a symbol or a repetition it cannot read.
std::vector<std::string> unrollPipelineLayout(const std::string &layout);

/// The stage of each decoder layer (`layers` entries).
std::vector<int> layerStages(const Parallel &pa, int layers);

/// The first rule of the layer layout that `pa` breaks for `layers` decoder layers, naming its
/// field (the rules of Megatron-Core's TransformerConfig.__post_init__ and MindSpeed-LLM's
/// num_layer_list checks); none when the layout is valid. The schedule's own rules (virtual
/// stages only when interleaved) are validatePlan's.
/// `mtpLayers`: model.mtp_layers (a layout string spells the MTP modules out).
std::optional<PlanError> stageLayoutError(const Parallel &pa, int layers, int mtpLayers);
std::optional<PlanError> stageLayoutError(const Plan &plan);
/// !stageLayoutError(pa, layers, mtpLayers), without writing the error out: the search asks it
/// of millions of layouts.
bool stageLayoutValid(const Parallel &pa, int layers, int mtpLayers);
/// stageLayout(pa, layers).largestChunk(), without building an even layout. Each thread keeps
/// what it found of its last few custom layouts (with stageLayoutValid: `mtpLayers` as there).
int largestChunkLayers(const Parallel &pa, int layers, int mtpLayers = 0);

/// The pipeline stage holding decoder layer `layer` of `layers` (stageLayout's placement).
int stageOfLayer(const Parallel &pa, int layers, int layer);

/// Layers of each kind among `layers` (indices of the decoder layers a stage holds).
struct LayerMix
{
    int dense = 0, moe = 0;
    int total() const { return dense + moe; }
};

/// What the engine derives from a model and a layout's model-parallel degrees and layer layout
/// alone (tp, ep, etp; pp, the schedule's chunks, the stages' layers): the same for every layout
/// that differs only in dp, sharding, micro-batch, recompute or offload, of which a search meets
/// thousands per combination.
struct RankShape
{
    ParameterCounts counts;       ///< countParameters of the model
    StageLayout layout;           ///< stageLayout of the layout's pipeline
    LayerSpec dense, moe;         ///< layerSpec of each kind (moe: only when the model has MoE layers)
    RankLayer denseRank, moeRank; ///< rankLayer of each kind under tp, ep, etp
    std::vector<LayerMix> mixes;  ///< each stage's decoder layers by kind (chunk by chunk, each
                                  ///< through the stages: Megatron's order, layerStages)
    /// largestFusedTensor of each kind under tp and etp (moe: 0 without MoE layers).
    double denseLargest = 0, moeLargest = 0;
};

/// The RankShape of `m` under `pa`. Each thread keeps the last few it was asked for and hands
/// out the kept one for the same model and fields; an entry the keep drops lives on while a
/// caller holds it.
std::shared_ptr<const RankShape> rankShape(const ModelShape &m, const Parallel &pa);

/// What a RankShape is built from beyond the model's decoder shape: the vocabulary (padded by
/// tp in the frameworks that pad) and the fields of the layout that rankShape reads.
struct RankShapeKey
{
    int64_t vocab;
    int vocabDivisibleBy;
    int tp, ep, etp, pp, virtualStages, first, last;
    int schedule; ///< PpSchedule
    bool embedding, loss;
    std::vector<int> stageLayers;
    std::string pipelineLayout;
    static RankShapeKey of(const ModelShape &m, const Parallel &pa);
    bool matches(const ModelShape &m, const Parallel &pa) const; ///< == of(m, pa), without building it
};

/// The last `N` entries a keep was given, the oldest replaced first, the one found last looked at
/// first: the keeps of core/layers.cpp and RankShapeCache. A reference it hands out lasts until
/// the next put or clear.
template <class Entry, size_t N>
class KeptRing
{
public:
    template <class Match>
    Entry *find(const Match &match)
    {
        if (last_ < entries_.size() && match(entries_[last_]))
            return &entries_[last_];
        for (size_t k = 0; k < entries_.size(); ++k) {
            if (match(entries_[k])) {
                last_ = k;
                return &entries_[k];
            }
        }
        return nullptr;
    }
    Entry &put(Entry e)
    {
        if (entries_.size() < N) {
            entries_.push_back(std::move(e));
            last_ = entries_.size() - 1;
        } else {
            last_ = next_;
            entries_[next_] = std::move(e);
            next_ = (next_ + 1) % N;
        }
        return entries_[last_];
    }
    void clear()
    {
        entries_.clear();
        next_ = last_ = 0;
    }

private:
    std::vector<Entry> entries_;
    size_t next_ = 0, last_ = 0;
};

/// RankShapes kept for one caller whose models are all one model but for the vocabulary: the
/// search's threads, each asking about millions of layouts of the search's model (ComputeCache
/// has the same premise). A kept shape is found by its key alone; the model is compared with
/// the one the kept shapes were built from only before a shape is built afresh, and when it
/// differs they are dropped.
class RankShapeCache
{
public:
    std::shared_ptr<const RankShape> of(const ModelShape &m, const Parallel &pa);

private:
    struct Entry
    {
        RankShapeKey key;
        std::shared_ptr<const RankShape> shape;
    };
    std::optional<ModelShape> model_;
    KeptRing<Entry, 8> kept_;
};

} // namespace shardscope
