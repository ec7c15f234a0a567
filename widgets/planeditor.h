#pragma once

#include "planeditcommand.h"

#include "core/plan.h"

#include <QWidget>
#include <functional>
#include <vector>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QSlider;
class QSpinBox;
class QDoubleSpinBox;

namespace shardscope {

class ShapeFields;

class PlanDocument;

/// Edits the plan: model, sequence, precision, parallel layout, memory switches and cluster.
/// Choices the engine would reject are offered disabled with the engine's reason.
class PlanEditor final : public QWidget
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(PlanEditor)

public:
    explicit PlanEditor(PlanDocument *document, QWidget *parent = nullptr);
    ~PlanEditor() override;

    /// The last refusal shown to the user; empty after a successful edit.
    QString statusText() const;

    /// The shapes the model-size slider offers, smallest first, one per position: the derived
    /// Llama-family shapes (shapeForParameterCount) the current layout accepts.
    const std::vector<ModelShape> &sizeShapes() const { return m_sizeShapes; }

public Q_SLOTS:
    void refresh();

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;

private:
    using Mutation = std::function<void(Plan &)>;
    bool edit(const QString &text, EditId id, const Mutation &mutate);
    /// Whether a spin box or the name field holds typing not yet applied to the plan.
    bool hasPendingTyping(const QObject *control) const;
    void showRefusal(const QString &reason);
    void setStatus(const QString &text);
    void layOutStatus();
    void refreshSizeShapes();
    void refreshDegrees();
    void refreshChoices();
    void fillDegreeCombo(QComboBox *combo, const QString &what,
                         const std::function<void(Plan &, int)> &set, int current);
    void fillChoiceCombo(QComboBox *combo, const QString &what, const QList<int> &values,
                         const std::function<void(Plan &, int)> &set, int current,
                         const QString &allPossible);
    void buildUi();

    PlanDocument *m_document;
    bool m_refreshing = false;

    QLineEdit *m_name = nullptr;
    QString m_shownName; ///< the plan name the name field was last filled with or applied
    QComboBox *m_preset = nullptr;
    QSlider *m_size = nullptr;
    QLabel *m_sizeLabel = nullptr;
    std::vector<ModelShape> m_sizeShapes;
    QString m_sizeShapesKey; ///< the layout m_sizeShapes were checked against
    QSpinBox *m_layers = nullptr, *m_hidden = nullptr, *m_heads = nullptr, *m_kvHeads = nullptr,
             *m_headDim = nullptr, *m_ffn = nullptr, *m_vocab = nullptr;
    QComboBox *m_ffnKind = nullptr;
    QCheckBox *m_moe = nullptr;
    QSpinBox *m_experts = nullptr, *m_topK = nullptr, *m_expertFfn = nullptr;
    ShapeFields *m_shape = nullptr; ///< attention kind, MLA, norms, positions, MTP, MoE extras
    QDoubleSpinBox *m_dropoutHidden = nullptr, *m_dropoutAttention = nullptr;
    QSlider *m_seqSlider = nullptr;
    QSpinBox *m_seqEntry = nullptr, *m_microBatch = nullptr, *m_gradAccum = nullptr;
    QComboBox *m_method = nullptr, *m_loraTargets = nullptr, *m_quant = nullptr, *m_loss = nullptr;
    QSpinBox *m_loraRank = nullptr, *m_freezeLayers = nullptr;
    QLabel *m_trainable = nullptr;
    /// Freezing's trained parts and LoRA's modules_to_save, one box per part (bit).
    QList<QPair<QCheckBox *, uint8_t>> m_freezeParts, m_savedModules;
    QComboBox *m_dtParams = nullptr, *m_dtGrads = nullptr, *m_dtMaster = nullptr,
              *m_dtOptimizer = nullptr, *m_dtCompute = nullptr, *m_optimizer = nullptr;
    QComboBox *m_tp = nullptr, *m_pp = nullptr, *m_cp = nullptr, *m_ep = nullptr, *m_etp = nullptr;
    QComboBox *m_cpAlgo = nullptr, *m_ulyssesDegree = nullptr, *m_dpShard = nullptr;
    QComboBox *m_hpz = nullptr; ///< parallel.zero_hpz_partition_size
    QComboBox *m_recomputeMethod = nullptr;
    QSpinBox *m_recomputeLayers = nullptr;
    QCheckBox *m_recomputeActivation = nullptr, *m_recomputeNorm = nullptr;
    QCheckBox *m_recomputePerPpRank = nullptr;
    QComboBox *m_ppSchedule = nullptr, *m_virtualStages = nullptr;
    QLineEdit *m_stageLayers = nullptr; ///< parallel.stage_layers, or the layout's counts
    QSpinBox *m_firstStageLayers = nullptr, *m_lastStageLayers = nullptr;
    QCheckBox *m_accountEmbedding = nullptr, *m_accountLoss = nullptr;
    QLabel *m_dp = nullptr;
    QComboBox *m_sharding = nullptr, *m_recompute = nullptr, *m_attention = nullptr,
              *m_rope = nullptr;
    QLabel *m_shardingHint = nullptr; ///< says when sharding has nothing to shard over
    QCheckBox *m_sp = nullptr, *m_offOptimizer = nullptr, *m_offParams = nullptr,
              *m_offGrads = nullptr, *m_offActivations = nullptr;
    QCheckBox *m_expandable = nullptr;        ///< memory.allocator.expandable_segments
    QCheckBox *m_overlapGrads = nullptr;      ///< memory.overlap_grad_reduce
    QCheckBox *m_overlapParams = nullptr;     ///< memory.overlap_param_gather
    QCheckBox *m_fusedSwiglu = nullptr;       ///< memory.fused_swiglu
    QCheckBox *m_flashOutputCopy = nullptr;   ///< memory.flash_output_copy
    QCheckBox *m_ulyssesKvRepeat = nullptr;   ///< parallel.ulysses_kv_repeat
    QSpinBox *m_vocabDivisor = nullptr;       ///< model.vocab_divisible_by (0: the profile's)
    QSpinBox *m_bufferPad = nullptr;          ///< memory.param_and_grad_buffer_pad
    QSpinBox *m_hcclBuffer = nullptr;         ///< memory.hccl_buffer_mb
    QLineEdit *m_hcclGroupBuffer = nullptr;   ///< memory.hccl_group_buffer
    QCheckBox *m_hcclAdaptive = nullptr;      ///< memory.hccl_buffer_adaptive
    QCheckBox *m_swapAttention = nullptr;     ///< memory.swap_attention
    QSpinBox *m_maxSplit = nullptr;           ///< memory.allocator.max_split_size_mb
    QDoubleSpinBox *m_gcThreshold = nullptr;  ///< memory.allocator.garbage_collection_threshold
    QComboBox *m_framework = nullptr, *m_device = nullptr;
    QSpinBox *m_devicesPerNode = nullptr, *m_nodes = nullptr;
    QLabel *m_world = nullptr;
    QLabel *m_status = nullptr; ///< a fixed-height line below the form: showing it moves nothing
    QString m_statusText;       ///< the whole refusal; the line may show it shortened
};

} // namespace shardscope
