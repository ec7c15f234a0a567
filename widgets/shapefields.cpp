#include "shapefields.h"

#include "core/plan.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QSignalBlocker>
#include <QSpinBox>

namespace shardscope {

namespace {

void show(QSpinBox *box, int64_t v)
{
    if (box->value() == int(v))
        return;
    const QSignalBlocker block(box);
    box->setValue(int(v));
}

void show(QDoubleSpinBox *box, double v)
{
    if (box->value() == v)
        return;
    const QSignalBlocker block(box);
    box->setValue(v);
}

void show(QComboBox *combo, int data)
{
    const QSignalBlocker block(combo);
    combo->setCurrentIndex(combo->findData(data));
}

void show(QCheckBox *box, bool on)
{
    const QSignalBlocker block(box);
    box->setChecked(on);
}

/// Enables a field, or disables it and says what it needs.
void applies(QWidget *w, bool on, const QString &help, const QString &needs)
{
    w->setEnabled(on);
    w->setToolTip(on ? help : help + QLatin1Char('\n') + needs);
}

} // namespace

ShapeFields::ShapeFields(QWidget *parent, Edit edit) : QObject(parent), m_parent(parent), m_edit(std::move(edit)) {}

QSpinBox *ShapeFields::spinRow(QFormLayout *form, const char *name, const QString &label, int lo, int hi,
                               std::function<void(ModelShape &, int)> set)
{
    auto *box = new QSpinBox(m_parent);
    box->setObjectName(QLatin1String(name));
    box->setRange(lo, hi);
    box->setKeyboardTracking(false);
    box->setGroupSeparatorShown(true);
    form->addRow(label, box);
    connect(box, &QSpinBox::valueChanged, this, [this, set](int v) {
        m_edit(tr("Edit model shape"), [&](ModelShape &m) { set(m, v); });
    });
    return box;
}

void ShapeFields::addModelRows(QFormLayout *form)
{
    m_attention = new QComboBox(m_parent);
    m_attention->setObjectName(QStringLiteral("attentionKind"));
    m_attention->addItem(tr("MHA / GQA"), int(AttentionKind::Standard));
    m_attention->addItem(tr("MLA (latent)"), int(AttentionKind::MLA));
    form->addRow(tr("Attention &kind"), m_attention);
    connect(m_attention, &QComboBox::currentIndexChanged, this, [this](int index) {
        const auto kind = AttentionKind(m_attention->itemData(index).toInt());
        m_edit(tr("Change attention kind"), [&](ModelShape &m) {
            m.attention = kind;
            if (kind == AttentionKind::MLA) {
                // DeepSeek-V3's ranks and head widths as a starting point.
                if (m.mla.kv_lora_rank == 0)
                    m.mla = MlaShape{1536, 512, 128, 64, 128};
                m.kv_heads = m.heads;
                m.head_dim = m.mla.qkHeadDim();
                m.qk_norm = false;
            } else {
                m.mla = MlaShape{};
                m.head_dim = m.heads > 0 && m.hidden % m.heads == 0 ? m.hidden / m.heads : m.head_dim;
            }
        });
    });
    auto mla = [&](QSpinBox *&box, const char *name, const QString &label, int lo,
                   int64_t MlaShape::*field) {
        box = spinRow(form, name, label, lo, 65536, [field](ModelShape &m, int v) {
            m.mla.*field = v;
            m.head_dim = m.mla.qkHeadDim();
        });
    };
    mla(m_qLora, "mlaQLoraRank", tr("MLA query rank"), 0, &MlaShape::q_lora_rank);
    mla(m_kvLora, "mlaKvLoraRank", tr("MLA key/value rank"), 1, &MlaShape::kv_lora_rank);
    mla(m_qkNope, "mlaQkNope", tr("MLA q/k head (no rope)"), 1, &MlaShape::qk_nope_head_dim);
    mla(m_qkRope, "mlaQkRope", tr("MLA q/k head (rope)"), 1, &MlaShape::qk_rope_head_dim);
    mla(m_vHead, "mlaVHead", tr("MLA v head"), 1, &MlaShape::v_head_dim);

    m_qkNorm = new QCheckBox(tr("QK &norms (Qwen3)"), m_parent);
    m_qkNorm->setObjectName(QStringLiteral("qkNorm"));
    form->addRow(m_qkNorm);
    connect(m_qkNorm, &QCheckBox::toggled, this, [this](bool on) {
        m_edit(tr("Change QK norms"), [&](ModelShape &m) { m.qk_norm = on; });
    });

    m_norm = new QComboBox(m_parent);
    m_norm->setObjectName(QStringLiteral("normKind"));
    m_norm->addItem(tr("RMSNorm"), int(NormKind::RMSNorm));
    m_norm->addItem(tr("LayerNorm"), int(NormKind::LayerNorm));
    form->addRow(tr("Nor&m"), m_norm);
    connect(m_norm, &QComboBox::currentIndexChanged, this, [this](int index) {
        const auto kind = NormKind(m_norm->itemData(index).toInt());
        m_edit(tr("Change norm"), [&](ModelShape &m) { m.norm = kind; });
    });
    m_linearBias = new QCheckBox(tr("&Biases on every linear (GPT)"), m_parent);
    m_linearBias->setObjectName(QStringLiteral("linearBias"));
    form->addRow(m_linearBias);
    connect(m_linearBias, &QCheckBox::toggled, this, [this](bool on) {
        m_edit(tr("Change linear biases"), [&](ModelShape &m) { m.linear_bias = on; });
    });
    m_positions = new QComboBox(m_parent);
    m_positions->setObjectName(QStringLiteral("positionEmbedding"));
    m_positions->addItem(tr("RoPE"), int(PositionEmbedding::Rope));
    m_positions->addItem(tr("learned table"), int(PositionEmbedding::Learned));
    form->addRow(tr("Positions"), m_positions);
    connect(m_positions, &QComboBox::currentIndexChanged, this, [this](int index) {
        const auto kind = PositionEmbedding(m_positions->itemData(index).toInt());
        m_edit(tr("Change position embedding"), [&](ModelShape &m) {
            m.position_embedding = kind;
            m.max_positions = kind == PositionEmbedding::Learned ? std::max<int64_t>(m.max_positions, 4096) : 0;
        });
    });
    m_maxPositions = spinRow(form, "maxPositions", tr("Position table rows"), 1, 16777216,
                             [](ModelShape &m, int v) { m.max_positions = v; });
    m_mtp = spinRow(form, "mtpLayers", tr("MTP modules"), 0, 16, [](ModelShape &m, int v) { m.mtp_layers = v; });
}

void ShapeFields::addMoeRows(QFormLayout *form)
{
    m_shared = spinRow(form, "moeShared", tr("Shared experts"), 0, 256, [](ModelShape &m, int v) {
        m.moe.shared_experts = v;
        if (v > 0 && m.moe.shared_expert_ffn_hidden == 0)
            m.moe.shared_expert_ffn_hidden = m.moe.expert_ffn_hidden;
        if (v == 0)
            m.moe.shared_expert_gate = false;
    });
    m_sharedFfn = spinRow(form, "moeSharedFfn", tr("Shared expert width"), 1, 1048576,
                          [](ModelShape &m, int v) { m.moe.shared_expert_ffn_hidden = v; });
    m_firstDense = spinRow(form, "moeFirstDense", tr("Dense first layers"), 0, 1023,
                           [](ModelShape &m, int v) { m.moe.first_dense_layers = v; });
    m_layerFreq = spinRow(form, "moeLayerFreq", tr("MoE every k-th layer"), 1, 1024,
                          [](ModelShape &m, int v) { m.moe.layer_freq = v; });
    m_capacity = new QDoubleSpinBox(m_parent);
    m_capacity->setObjectName(QStringLiteral("moeCapacity"));
    m_capacity->setRange(0, 64);
    m_capacity->setSingleStep(0.25);
    m_capacity->setSpecialValueText(tr("dropless"));
    m_capacity->setKeyboardTracking(false);
    form->addRow(tr("Capacity factor"), m_capacity);
    connect(m_capacity, &QDoubleSpinBox::valueChanged, this, [this](double v) {
        m_edit(tr("Edit model shape"), [&](ModelShape &m) {
            // Below 1 / top_k every token would be dropped: the cap starts there.
            m.moe.capacity_factor = v > 0 ? std::max(v, 1.0 / std::max(1, m.moe.top_k)) : 0.0;
            if (v > 0)
                m.moe.imbalance = 1.0;
        });
    });
    m_imbalance = new QDoubleSpinBox(m_parent);
    m_imbalance->setObjectName(QStringLiteral("moeImbalance"));
    m_imbalance->setRange(1, 64);
    m_imbalance->setSingleStep(0.05);
    m_imbalance->setKeyboardTracking(false);
    form->addRow(tr("Busiest rank's load"), m_imbalance);
    connect(m_imbalance, &QDoubleSpinBox::valueChanged, this, [this](double v) {
        m_edit(tr("Edit model shape"), [&](ModelShape &m) { m.moe.imbalance = v; });
    });
    m_routerFp32 = new QCheckBox(tr("Router in &fp32"), m_parent);
    m_routerFp32->setObjectName(QStringLiteral("moeRouterFp32"));
    form->addRow(m_routerFp32);
    connect(m_routerFp32, &QCheckBox::toggled, this, [this](bool on) {
        m_edit(tr("Edit model shape"), [&](ModelShape &m) { m.moe.router_fp32 = on; });
    });
    m_dispatcher = new QComboBox(m_parent);
    m_dispatcher->setObjectName(QStringLiteral("moeDispatcher"));
    m_dispatcher->addItem(tr("all-to-all"), int(MoeShape::Dispatcher::AllToAll));
    m_dispatcher->addItem(tr("all-gather"), int(MoeShape::Dispatcher::AllGather));
    form->addRow(tr("Token dispatcher"), m_dispatcher);
    connect(m_dispatcher, &QComboBox::currentIndexChanged, this, [this](int index) {
        const auto d = MoeShape::Dispatcher(m_dispatcher->itemData(index).toInt());
        m_edit(tr("Edit model shape"), [&](ModelShape &m) { m.moe.dispatcher = d; });
    });
}

void ShapeFields::refresh(const Plan &p)
{
    const ModelShape &m = p.model;
    const bool mla = m.mla_attention();
    show(m_attention, int(m.attention));
    m_attention->setToolTip(tr("Multi-head or grouped-query attention (KV heads say which), or "
                               "DeepSeek's multi-head latent attention"));
    const MlaShape shown = mla ? m.mla : MlaShape{1536, 512, 128, 64, 128};
    const QString needsMla = tr("Applies to multi-head latent attention");
    const std::pair<QSpinBox *, std::pair<int64_t, QString>> rows[] = {
        {m_qLora, {shown.q_lora_rank, tr("Rank of the query compression (0: queries projected directly)")}},
        {m_kvLora, {shown.kv_lora_rank, tr("Rank of the compressed key/value latent")}},
        {m_qkNope, {shown.qk_nope_head_dim, tr("Query/key width per head without rotary embedding")}},
        {m_qkRope, {shown.qk_rope_head_dim, tr("Query/key width per head with rotary embedding (the key's is shared by all heads)")}},
        {m_vHead, {shown.v_head_dim, tr("Value width per head")}},
    };
    for (const auto &[box, v] : rows) {
        show(box, v.first);
        applies(box, mla, v.second, needsMla);
    }
    show(m_qkNorm, m.qk_norm);
    applies(m_qkNorm, !mla, tr("Per-head RMSNorm on queries and keys before RoPE (Qwen3)"),
            tr("MLA norms its latents instead"));
    show(m_norm, int(m.norm));
    m_norm->setToolTip(tr("RMSNorm saves its input; LayerNorm also an fp32 mean and rstd per token"));
    show(m_linearBias, m.linear_bias);
    show(m_positions, int(m.position_embedding));
    const bool learned = m.position_embedding == PositionEmbedding::Learned;
    show(m_maxPositions, learned ? m.max_positions : 4096);
    applies(m_maxPositions, learned, tr("Rows of the learned position table: the longest sequence"),
            tr("Applies to a learned position table"));
    show(m_mtp, m.mtp_layers);
    m_mtp->setToolTip(tr("Multi-token prediction modules on the last stage (DeepSeek-V3: 1)"));

    const bool moe = m.moe.enabled();
    const QString needsMoe = tr("Dense model: turn on mixture of experts first");
    show(m_shared, m.moe.shared_experts);
    applies(m_shared, moe, tr("Experts every token passes through (DeepSeek, Qwen2-MoE)"), needsMoe);
    show(m_sharedFfn, m.moe.shared_expert_ffn_hidden > 0 ? m.moe.shared_expert_ffn_hidden
                                                         : std::max<int64_t>(1, m.moe.expert_ffn_hidden));
    applies(m_sharedFfn, moe && m.moe.shared_experts > 0, tr("FFN width of one shared expert"),
            moe ? tr("Applies when there are shared experts") : needsMoe);
    show(m_firstDense, m.moe.first_dense_layers);
    m_firstDense->setMaximum(std::max(0, m.layers - 1));
    applies(m_firstDense, moe, tr("Leading layers that keep the dense FFN (DeepSeek-V3: 3)"), needsMoe);
    show(m_layerFreq, m.moe.layer_freq);
    m_layerFreq->setMaximum(std::max(1, m.layers));
    applies(m_layerFreq, moe, tr("After the dense layers, every k-th layer is MoE"), needsMoe);
    show(m_capacity, m.moe.capacity_factor);
    applies(m_capacity, moe,
            tr("Tokens per expert capped at this factor x the balanced share; dropless when 0. "
               "The busiest rank is assumed at the cap"),
            needsMoe);
    show(m_imbalance, m.moe.imbalance);
    applies(m_imbalance, moe && m.moe.capacity_factor == 0,
            tr("Dropless routing: the busiest rank's token copies over the balanced share"),
            moe ? tr("A capacity factor bounds each expert instead") : needsMoe);
    show(m_routerFp32, m.moe.router_fp32);
    applies(m_routerFp32, moe, tr("Router logits computed in fp32: an fp32 copy of its input is saved"),
            needsMoe);
    show(m_dispatcher, int(m.moe.dispatcher));
    applies(m_dispatcher, moe,
            tr("How tokens reach their experts under expert parallelism: all-to-all, or every "
               "token of the group gathered"),
            needsMoe);
}

} // namespace shardscope
