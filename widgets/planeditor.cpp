#include "planeditor.h"

#include "plandocument.h"
#include "qstrings.h"
#include "shapefields.h"

#include "core/adapters.h"
#include "core/catalog.h"
#include "core/hcclbuffers.h"
#include "core/framework.h"
#include "core/layers.h"
#include "core/model.h"
#include "core/units.h"

#include <QAbstractSpinBox>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QKeyEvent>
#include <QKeySequence>
#include <QLabel>
#include <QLineEdit>
#include <QScrollArea>
#include <QSignalBlocker>
#include <QSlider>
#include <QSpinBox>
#include <QStyle>
#include <QStyleOptionComboBox>
#include <QStylePainter>
#include <QAbstractItemView>
#include <QStandardItemModel>
#include <QVBoxLayout>
#include <QResizeEvent>
#include <QFontMetrics>
#include <cmath>

namespace shardscope {

namespace {

constexpr int kMinSeqLog2 = 9;  // 512
constexpr int kMaxSeqLog2 = 20; // 1M
constexpr int kMaxVirtualStages = 64; // what parsePlan accepts

const DType kDTypes[] = {DType::FP32, DType::BF16, DType::FP16, DType::FP8, DType::INT8};

void selectData(QComboBox *combo, int value)
{
    const QSignalBlocker block(combo);
    combo->setCurrentIndex(combo->findData(value));
}

void setItemReason(QComboBox *combo, int index, const QString &reason)
{
    auto *model = qobject_cast<QStandardItemModel *>(combo->model());
    if (!model)
        return;
    QStandardItem *item = model->item(index);
    const bool enable = reason.isEmpty();
    if (item->isEnabled() != enable)
        item->setEnabled(enable);
    if (item->toolTip() != reason)
        item->setToolTip(reason);
}

void setValue(QSpinBox *box, int value)
{
    if (box->value() == value)
        return;
    const QSignalBlocker block(box);
    box->setValue(value);
}

void setChecked(QCheckBox *box, bool on)
{
    const QSignalBlocker block(box);
    box->setChecked(on);
}

// Fills the world with data parallelism once the other degrees are chosen.
void rebalanceDp(Plan &p)
{
    const int rest = p.parallel.tp * p.parallel.pp * p.parallel.cp;
    const int world = p.cluster.world();
    if (rest > 0 && world % rest == 0)
        p.parallel.dp = world / rest;
    // ZeRO++ hpZ's group divides dp: one that no longer does is dropped.
    const int hpz = p.parallel.zero_hpz_partition_size;
    if (hpz > 1 && (hpz > p.parallel.dp || p.parallel.dp % hpz != 0))
        p.parallel.zero_hpz_partition_size = 0;
}

// An edited shape is no longer its preset.
void makeCustom(ModelShape &m)
{
    m.preset.clear();
    m.display_name.clear();
}

// The MoE block a dense model gets when experts are turned on (Mixtral proportions).
MoeShape defaultMoe(const ModelShape &m)
{
    MoeShape moe;
    moe.experts = 8;
    moe.top_k = 2;
    moe.expert_ffn_hidden = m.ffn_hidden;
    return moe;
}

// The layer layout fields back to the even split.
void clearLayout(Parallel &pa)
{
    pa.first_stage_layers = pa.last_stage_layers = 0;
    pa.account_for_embedding = pa.account_for_loss = false;
    pa.stage_layers.clear();
    pa.pipeline_layout.clear();
}

// After pp or the virtual stages change: a layout that no longer fits goes, and when the even
// split does not fit either (DeepSeek-V3's 61 layers), Megatron's uneven first and last stages
// are chosen: the fewest layers per middle stage, the first and last stages sharing the rest
// (the last, with the head, the smaller).
void fitLayout(Plan &p)
{
    Parallel &pa = p.parallel;
    const int layers = p.model.layers;
    if (pa.pp < 2) {
        clearLayout(pa);
        return;
    }
    if (!stageLayoutError(pa, layers, p.model.mtp_layers))
        return;
    clearLayout(pa);
    if (!stageLayoutError(pa, layers, p.model.mtp_layers))
        return;
    const int v = pa.pp_schedule == PpSchedule::Interleaved ? std::max(1, pa.virtual_stages) : 1;
    const int middles = pa.pp - 2;
    for (int m = (layers + pa.pp - 1) / pa.pp; m <= layers; ++m) {
        if (m % v != 0 && middles > 0)
            continue;
        const int rest = layers - middles * m;
        if (rest < 2 * v)
            break;
        int first = ((rest + 1) / 2 + v - 1) / v * v;
        const int last = rest - first;
        if ((middles > 0 && (first > m || last > m)) || last < v || last % v != 0)
            continue;
        Parallel candidate = pa;
        candidate.first_stage_layers = first;
        candidate.last_stage_layers = last;
        if (!stageLayoutError(candidate, layers, p.model.mtp_layers)) {
            pa = candidate;
            return;
        }
    }
}

// Only the interleaved schedule has virtual stages: choosing it picks the fewest that fit the
// layer layout, leaving it goes back to one.
void setSchedule(Plan &p, PpSchedule s)
{
    p.parallel.pp_schedule = s;
    if (s != PpSchedule::Interleaved) {
        p.parallel.virtual_stages = 1;
        fitLayout(p);
        return;
    }
    if (p.parallel.virtual_stages >= 2)
        return;
    p.parallel.virtual_stages = 2; // when none fits, the engine says why
    for (int v = 2; v <= kMaxVirtualStages && p.parallel.pp > 0; ++v) {
        Parallel candidate = p.parallel;
        candidate.virtual_stages = v;
        if (!stageLayoutError(candidate, p.model.layers, p.model.mtp_layers)) {
            p.parallel.virtual_stages = v;
            return;
        }
    }
}

// "7, 8, 8, 8" (MindSpeed-LLM's --num-layer-list, spaces optional): the layers of each stage;
// empty: none. False when a piece is not a positive whole number.
bool parseStageList(const QString &text, std::vector<int> &out)
{
    out.clear();
    const QString t = text.trimmed();
    if (t.isEmpty())
        return true;
    for (const QString &piece : t.split(QLatin1Char(','))) {
        bool ok = false;
        const int n = piece.trimmed().toInt(&ok);
        if (!ok || n < 1)
            return false;
        out.push_back(n);
    }
    return true;
}

// More than one virtual stage means the interleaved schedule; one means plain 1F1B.
void setVirtualStages(Plan &p, int v)
{
    p.parallel.virtual_stages = v;
    if (v > 1)
        p.parallel.pp_schedule = PpSchedule::Interleaved;
    else if (p.parallel.pp_schedule == PpSchedule::Interleaved)
        p.parallel.pp_schedule = PpSchedule::OneFOneB;
}

QString paramsText(double n)
{
    if (n >= 1e12)
        return PlanEditor::tr("%1T parameters").arg(n / 1e12, 0, 'f', 2);
    return PlanEditor::tr("%1B parameters").arg(n / 1e9, 0, 'f', n < 10e9 ? 2 : 1);
}

QComboBox *dtypeCombo(QWidget *parent, bool allowNone)
{
    auto *c = new QComboBox(parent);
    for (DType t : kDTypes)
        c->addItem(qs(toString(t)), int(t));
    if (allowNone)
        c->addItem(PlanEditor::tr("none (no separate copy)"), int(DType::None));
    return c;
}

QSpinBox *spin(QWidget *parent, int lo, int hi)
{
    auto *s = new QSpinBox(parent);
    s->setRange(lo, hi);
    s->setKeyboardTracking(false);
    s->setGroupSeparatorShown(true);
    s->setAccelerated(true);
    return s;
}

// The text a spin box shows for its value (textFromValue() is protected).
template <typename Box, typename... Precision>
QString shownText(const Box *box, Precision... precision)
{
    if (!box->specialValueText().isEmpty() && box->value() == box->minimum())
        return box->specialValueText();
    QString text = box->locale().toString(box->value(), precision...);
    if (!box->isGroupSeparatorShown())
        text.remove(box->locale().groupSeparator());
    return box->prefix() + text + box->suffix();
}

} // namespace

bool PlanEditor::hasPendingTyping(const QObject *control) const
{
    if (control == m_name)
        return m_name->text() != m_shownName;
    if (const auto *box = qobject_cast<const QSpinBox *>(control))
        return box->text() != shownText(box);
    if (const auto *box = qobject_cast<const QDoubleSpinBox *>(control))
        return box->text() != shownText(box, 'f', box->decimals());
    return false;
}

bool PlanEditor::eventFilter(QObject *watched, QEvent *event)
{
    if (event->type() == QEvent::ShortcutOverride) {
        // A spin box or line edit takes Ctrl+Z for its own text. Once its text is applied to the
        // plan, Undo and Redo are the plan's (Edit > Undo); typing not yet applied is undone first.
        const auto *key = static_cast<QKeyEvent *>(event);
        if ((key->matches(QKeySequence::Undo) || key->matches(QKeySequence::Redo)) &&
            !hasPendingTyping(watched)) {
            event->ignore();
            return true;
        }
    }
    if (event->type() == QEvent::Paint) {
        // A combo narrower than its choice shows the start of it and an ellipsis (Fusion cuts it
        // off mid-letter); the whole choice is in the list and the tooltip.
        if (auto *combo = qobject_cast<QComboBox *>(watched); combo && !combo->isEditable()) {
            QStylePainter painter(combo);
            QStyleOptionComboBox option;
            option.initFrom(combo);
            option.editable = false;
            option.frame = combo->hasFrame();
            option.currentText = combo->currentText();
            option.currentIcon = combo->itemIcon(combo->currentIndex());
            option.iconSize = combo->iconSize();
            if (combo->view()->isVisible())
                option.state |= QStyle::State_On;
            painter.drawComplexControl(QStyle::CC_ComboBox, option);
            const QRect field = combo->style()->subControlRect(QStyle::CC_ComboBox, &option,
                                                                QStyle::SC_ComboBoxEditField, combo);
            const int room = field.width() - (option.currentIcon.isNull() ? 0 : option.iconSize.width() + 4) - 2;
            option.currentText = combo->fontMetrics().elidedText(option.currentText, Qt::ElideRight, room);
            painter.drawControl(QStyle::CE_ComboBoxLabel, option);
            return true;
        }
    }
    if (event->type() == QEvent::Wheel) {
        auto *w = qobject_cast<QWidget *>(watched);
        if (w && !w->hasFocus()) {
            event->ignore(); // to the scroll area
            return true;
        }
    }
    return QWidget::eventFilter(watched, event);
}

PlanEditor::PlanEditor(PlanDocument *document, QWidget *parent)
    : QWidget(parent), m_document(document)
{
    buildUi();
    // Scrolling the panel must not change the plan: a combo box, spin box or slider takes the
    // mouse wheel only once it has the focus (a click or Tab gives it; the wheel does not).
    const auto controls = findChildren<QWidget *>();
    for (QWidget *w : controls) {
        if (qobject_cast<QComboBox *>(w) || qobject_cast<QAbstractSpinBox *>(w) || qobject_cast<QSlider *>(w)) {
            w->setFocusPolicy(Qt::StrongFocus);
            w->installEventFilter(this);
        }
    }
    m_name->installEventFilter(this);
    connect(m_document, &PlanDocument::planChanged, this, [this] {
        setStatus(QString());
        refresh();
    });
    connect(m_document, &PlanDocument::editRefused, this, &PlanEditor::showRefusal);
    refresh();
}

PlanEditor::~PlanEditor() = default;

QString PlanEditor::statusText() const
{
    return m_statusText;
}

bool PlanEditor::edit(const QString &text, EditId id, const Mutation &mutate)
{
    if (m_refreshing)
        return false;
    Plan p = m_document->plan();
    mutate(p);
    return m_document->apply(p, text, id);
}

void PlanEditor::showRefusal(const QString &reason)
{
    setStatus(tr("Not applied: %1").arg(reason));
    refresh();
}

void PlanEditor::setStatus(const QString &text)
{
    if (text == m_statusText)
        return;
    m_statusText = text;
    m_status->setToolTip(text);
    m_status->setProperty("refusal", !text.isEmpty());
    m_status->style()->unpolish(m_status);
    m_status->style()->polish(m_status);
    layOutStatus();
}

// The line keeps its height: a refusal longer than its lines ends in an ellipsis (the whole text
// is the tooltip).
void PlanEditor::layOutStatus()
{
    const int width = std::max(40, m_status->contentsRect().width() - 8);
    const QFontMetrics fm = m_status->fontMetrics();
    const int room = m_status->height() - 4;
    auto fits = [&](const QString &t) {
        return fm.boundingRect(QRect(0, 0, width, 100000), Qt::TextWordWrap, t).height() <= room;
    };
    QString shown = m_statusText;
    if (!fits(shown)) {
        QString head = shown;
        while (!head.isEmpty() && !fits(head + QChar(0x2026))) {
            const int cut = head.lastIndexOf(QLatin1Char(' '));
            head.truncate(cut > 0 ? cut : head.size() - 1);
        }
        shown = head + QChar(0x2026);
    }
    if (m_status->text() != shown)
        m_status->setText(shown);
}

void PlanEditor::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event);
    layOutStatus();
}

// The derived shapes the slider offers: those the layout accepts (tp divides their heads, KV
// heads and FFN; pp x virtual stages their layers). Checked again only when the layout changes.
void PlanEditor::refreshSizeShapes()
{
    const Plan &p = m_document->plan();
    const QString key = QStringLiteral("%1/%2/%3/%4/%5/%6/%7/%8/%9")
                            .arg(p.parallel.tp)
                            .arg(p.parallel.pp)
                            .arg(p.parallel.virtual_stages)
                            .arg(p.parallel.cp)
                            .arg(p.parallel.ep)
                            .arg(p.parallel.etp)
                            .arg(int(p.parallel.sp))
                            .arg(p.training.seq_len)
                            .arg(qs(p.framework));
    if (key == m_sizeShapesKey)
        return;
    m_sizeShapesKey = key;
    m_sizeShapes.clear();
    QString refused;
    for (ModelShape &shape : derivedShapes(p.parallel.tp)) {
        Plan candidate = p;
        candidate.model = shape;
        candidate.model.preset.clear();
        const QString reason = m_document->validationError(candidate);
        if (reason.isEmpty())
            m_sizeShapes.push_back(std::move(shape));
        else if (refused.isEmpty())
            refused = reason;
    }
    const QSignalBlocker block(m_size);
    m_size->setRange(0, std::max<int>(0, int(m_sizeShapes.size()) - 1));
    m_size->setEnabled(!m_sizeShapes.empty());
    m_size->setPageStep(std::max(1, int(m_sizeShapes.size()) / 10));
    const QString help = tr("Model size, log scale from 0.5B to 1T parameters: Llama-family shapes "
                            "with 128-wide heads in multiples of 8, 8 KV heads from 30B up, which "
                            "tp %1 divides").arg(p.parallel.tp);
    m_size->setToolTip(m_sizeShapes.empty() ? tr("%1\nNot possible now: %2").arg(help, refused) : help);
}

void PlanEditor::buildUi()
{
    auto *content = new QWidget;
    auto *column = new QVBoxLayout(content);
    column->setContentsMargins(4, 4, 4, 4);

    // Refusals go to a line of fixed height below the form (built at the end), so that one
    // appearing mid-drag moves nothing.
    m_status = new QLabel(this);
    m_status->setObjectName(QStringLiteral("status"));
    m_status->setWordWrap(true);
    m_status->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_status->setFixedHeight(3 * fontMetrics().lineSpacing() + 6);
    m_status->setProperty("refusal", false);
    m_status->setStyleSheet(QStringLiteral("QLabel { padding: 2px 4px; border-radius: 3px; }"
                                           "QLabel[refusal=\"true\"] { color: white; background: #b23b3b; }"));

    auto group = [&](const QString &title) {
        auto *box = new QGroupBox(title, content);
        auto *form = new QFormLayout(box);
        form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
        // A row whose field cannot sit beside its label in the dock's width (the part check
        // boxes two to a row at 1366x768) puts it under the label instead of widening the form
        // past the dock, which does not scroll sideways.
        form->setRowWrapPolicy(QFormLayout::WrapLongRows);
        column->addWidget(box);
        return form;
    };

    // ---- Model ----
    QFormLayout *model = group(tr("Model"));
    m_name = new QLineEdit(content);
    m_name->setObjectName(QStringLiteral("name"));
    model->addRow(tr("&Name"), m_name);
    connect(m_name, &QLineEdit::editingFinished, this, [this] {
        const std::string name = toStd(m_name->text());
        if (edit(tr("Rename plan"), EditId::Name, [&](Plan &p) { p.name = name; }))
            m_shownName = m_name->text();
    });

    m_preset = new QComboBox(content);
    m_preset->setObjectName(QStringLiteral("preset"));
    m_preset->addItem(tr("Custom shape"), QString());
    for (const std::string &id : m_document->catalog().modelIds()) {
        const ModelShape *m = m_document->catalog().model(id);
        m_preset->addItem(QStringLiteral("%1 (%2)").arg(qs(m->display_name.empty() ? id : m->display_name),
                                                        paramsText(double(countParameters(*m).total))),
                          qs(id));
    }
    model->addRow(tr("&Preset"), m_preset);
    connect(m_preset, &QComboBox::currentIndexChanged, this, [this](int index) {
        const std::string id = toStd(m_preset->itemData(index).toString());
        const ModelShape *shape = m_document->catalog().model(id);
        if (!shape)
            return;
        edit(tr("Choose model %1").arg(qs(id)), EditId::ModelPreset, [&](Plan &p) {
            p.model = *shape;
            p.model.preset = id;
            // A RoPE choice the new model cannot have (a learned table; MLA's own q/k split).
            if (shape->position_embedding != PositionEmbedding::Rope ||
                (shape->mla_attention() && p.memory.rope == RopeSaves::KeepsInput))
                p.memory.rope = RopeSaves::Framework;
        });
    });

    m_size = new QSlider(Qt::Horizontal, content);
    m_size->setObjectName(QStringLiteral("modelSize"));
    m_sizeLabel = new QLabel(content);
    m_sizeLabel->setObjectName(QStringLiteral("modelSizeLabel"));
    m_sizeLabel->setMinimumWidth(fontMetrics().horizontalAdvance(QStringLiteral("000.0B parameters")));
    auto *sizeRow = new QVBoxLayout;
    sizeRow->setSpacing(0);
    sizeRow->addWidget(m_size);
    sizeRow->addWidget(m_sizeLabel);
    auto *sizeLabel = new QLabel(tr("Si&ze"), content);
    sizeLabel->setBuddy(m_size);
    model->addRow(sizeLabel, sizeRow);
    connect(m_size, &QSlider::sliderPressed, m_document, &PlanDocument::beginInteraction);
    connect(m_size, &QSlider::sliderReleased, this, [this] {
        m_document->endInteraction();
        refresh();
    });
    connect(m_size, &QSlider::valueChanged, this, [this](int pos) {
        if (pos < 0 || pos >= int(m_sizeShapes.size()))
            return;
        const ModelShape shape = m_sizeShapes.at(size_t(pos));
        edit(tr("Resize model"), EditId::ModelSize, [&](Plan &p) {
            p.model = shape;
            p.model.preset.clear();
        });
    });

    auto shapeField = [&](QSpinBox *&box, const char *name, const QString &label, int lo, int hi,
                          auto setter) {
        box = spin(content, lo, hi);
        box->setObjectName(QLatin1String(name));
        model->addRow(label, box);
        connect(box, &QSpinBox::valueChanged, this, [this, setter](int v) {
            edit(tr("Edit model shape"), EditId::ModelShape, [&](Plan &p) {
                setter(p.model, v);
                makeCustom(p.model);
            });
        });
    };
    // When hidden or heads change and head_dim followed them, keep it following.
    auto followHeadDim = [](ModelShape &m, int64_t oldHidden, int oldHeads) {
        if (oldHeads > 0 && m.head_dim == oldHidden / oldHeads && m.heads > 0)
            m.head_dim = std::max<int64_t>(1, m.hidden / m.heads);
    };
    shapeField(m_layers, "layers", tr("Layers"), 1, 1024, [](ModelShape &m, int v) { m.layers = v; });
    shapeField(m_hidden, "hidden", tr("Hidden size"), 1, 262144, [followHeadDim](ModelShape &m, int v) {
        const int64_t old = m.hidden;
        m.hidden = v;
        followHeadDim(m, old, m.heads);
    });
    shapeField(m_heads, "heads", tr("Attention heads"), 1, 4096, [followHeadDim](ModelShape &m, int v) {
        const int old = m.heads;
        m.heads = v;
        followHeadDim(m, m.hidden, old);
    });
    shapeField(m_kvHeads, "kvHeads", tr("KV heads"), 1, 4096, [](ModelShape &m, int v) { m.kv_heads = v; });
    shapeField(m_headDim, "headDim", tr("Head dim"), 1, 4096, [](ModelShape &m, int v) { m.head_dim = v; });
    m_ffnKind = new QComboBox(content);
    m_ffnKind->setObjectName(QStringLiteral("ffnKind"));
    m_ffnKind->addItem(tr("SwiGLU (Llama)"), int(FfnKind::SwiGLU));
    m_ffnKind->addItem(tr("GELU (GPT)"), int(FfnKind::GELU));
    m_ffnKind->addItem(tr("squared ReLU (Nemotron)"), int(FfnKind::SquaredReLU));
    m_ffnKind->setToolTip(
        tr("The feed-forward block of every layer: SwiGLU (gate, up and down projections) or a "
           "non-gated GELU or squared ReLU (two projections); choosing GELU also picks the GPT "
           "family's LayerNorm and biases, which the fields below change"));
    model->addRow(tr("FFN &kind"), m_ffnKind);
    connect(m_ffnKind, &QComboBox::currentIndexChanged, this, [this](int index) {
        const auto kind = FfnKind(m_ffnKind->itemData(index).toInt());
        edit(tr("Change FFN kind"), EditId::ModelShape, [&](Plan &p) {
            p.model.ffn = kind;
            // As a plan's "ffn" alone means: GELU the GPT family's LayerNorm and biases.
            p.model.norm = kind == FfnKind::GELU ? NormKind::LayerNorm : NormKind::RMSNorm;
            p.model.linear_bias = kind == FfnKind::GELU;
            if (kind != FfnKind::SwiGLU)
                p.memory.fused_swiglu.reset(); // a SwiGLU kernel choice means nothing now
            makeCustom(p.model);
        });
    });
    shapeField(m_ffn, "ffnHidden", tr("FFN width"), 1, 1048576, [](ModelShape &m, int v) { m.ffn_hidden = v; });
    m_ffn->setToolTip(tr("Width of the dense FFN; an MoE model uses the expert FFN width instead"));
    shapeField(m_vocab, "vocab", tr("Vocabulary"), 1, 16777216, [](ModelShape &m, int v) { m.vocab = v; });
    m_shape = new ShapeFields(content, [this](const QString &label, const std::function<void(ModelShape &)> &change) {
        edit(label, EditId::ModelShape, [&](Plan &p) {
            change(p.model);
            makeCustom(p.model);
        });
    });
    m_shape->addModelRows(model);

    m_moe = new QCheckBox(tr("Mi&xture of experts (MoE)"), content);
    m_moe->setObjectName(QStringLiteral("moe"));
    model->addRow(m_moe);
    connect(m_moe, &QCheckBox::toggled, this, [this](bool on) {
        edit(on ? tr("Turn on mixture of experts") : tr("Turn off mixture of experts"),
             EditId::ModelShape, [&](Plan &p) {
                 p.model.moe = on ? defaultMoe(p.model) : MoeShape{};
                 makeCustom(p.model);
             });
    });
    // The expert fields edit an MoE block; a dense model has none to edit (they are disabled).
    auto moeField = [&](QSpinBox *&box, const char *name, const QString &label, int lo, int hi,
                        auto setter) {
        box = spin(content, lo, hi);
        box->setObjectName(QLatin1String(name));
        model->addRow(label, box);
        connect(box, &QSpinBox::valueChanged, this, [this, setter](int v) {
            if (!m_document->plan().model.moe.enabled()) {
                refresh();
                return;
            }
            edit(tr("Edit model shape"), EditId::ModelShape, [&](Plan &p) {
                setter(p.model.moe, v);
                makeCustom(p.model);
            });
        });
    };
    moeField(m_experts, "moeExperts", tr("Experts per &layer"), 1, 4096,
             [](MoeShape &m, int v) { m.experts = v; });
    moeField(m_topK, "moeTopK", tr("T&op-k"), 1, 4096, [](MoeShape &m, int v) { m.top_k = v; });
    moeField(m_expertFfn, "moeExpertFfn", tr("Expert FFN &width"), 1, 1048576,
             [](MoeShape &m, int v) { m.expert_ffn_hidden = v; });
    m_shape->addMoeRows(model);

    // ---- Training ----
    QFormLayout *training = group(tr("Training"));
    m_seqSlider = new QSlider(Qt::Horizontal, content);
    m_seqSlider->setObjectName(QStringLiteral("seqLen"));
    m_seqSlider->setRange(kMinSeqLog2, kMaxSeqLog2);
    m_seqSlider->setPageStep(1);
    m_seqSlider->setTickPosition(QSlider::TicksBelow);
    m_seqSlider->setToolTip(tr("Sequence length, powers of two from 512 to 1M tokens"));
    m_seqEntry = spin(content, 1, 16777216);
    m_seqEntry->setObjectName(QStringLiteral("seqLenEntry"));
    m_seqEntry->setSuffix(tr(" tokens"));
    auto *seqRow = new QVBoxLayout;
    seqRow->setSpacing(2);
    seqRow->addWidget(m_seqSlider);
    seqRow->addWidget(m_seqEntry);
    auto *seqLabel = new QLabel(tr("Se&quence"), content);
    seqLabel->setBuddy(m_seqSlider);
    training->addRow(seqLabel, seqRow);
    connect(m_seqSlider, &QSlider::sliderPressed, m_document, &PlanDocument::beginInteraction);
    connect(m_seqSlider, &QSlider::sliderReleased, this, [this] {
        m_document->endInteraction();
        refresh();
    });
    connect(m_seqSlider, &QSlider::valueChanged, this, [this](int log2) {
        const int64_t s = int64_t(1) << log2;
        edit(tr("Set sequence length"), EditId::SequenceLength, [&](Plan &p) { p.training.seq_len = s; });
    });
    connect(m_seqEntry, &QSpinBox::valueChanged, this, [this](int s) {
        edit(tr("Set sequence length"), EditId::SequenceLength, [&](Plan &p) { p.training.seq_len = s; });
    });
    m_microBatch = spin(content, 1, 4096);
    m_microBatch->setObjectName(QStringLiteral("microBatch"));
    training->addRow(tr("&Micro-batch"), m_microBatch);
    connect(m_microBatch, &QSpinBox::valueChanged, this, [this](int v) {
        edit(tr("Set micro-batch"), EditId::MicroBatch, [&](Plan &p) { p.training.micro_batch = v; });
    });
    auto dropoutBox = [&](QDoubleSpinBox *&box, const char *name, const QString &label,
                          double Dropout::*field) {
        box = new QDoubleSpinBox(content);
        box->setObjectName(QLatin1String(name));
        box->setRange(-0.01, 0.99);
        box->setSingleStep(0.05);
        box->setSpecialValueText(tr("framework's"));
        box->setKeyboardTracking(false);
        training->addRow(label, box);
        connect(box, &QDoubleSpinBox::valueChanged, this, [this, field](double v) {
            edit(tr("Set dropout"), EditId::Dropout, [&](Plan &p) {
                p.training.dropout.*field = v < 0 ? -1.0 : v;
            });
        });
    };
    dropoutBox(m_dropoutHidden, "dropoutHidden", tr("Hidden dropout"), &Dropout::hidden);
    dropoutBox(m_dropoutAttention, "dropoutAttention", tr("Attention dropout"), &Dropout::attention);
    m_gradAccum = spin(content, 1, 65536);
    m_gradAccum->setObjectName(QStringLiteral("gradAccum"));
    m_gradAccum->setToolTip(tr("Micro-batches per optimizer step and data-parallel rank"));
    training->addRow(tr("Gradient accumulation"), m_gradAccum);
    connect(m_gradAccum, &QSpinBox::valueChanged, this, [this](int v) {
        edit(tr("Set gradient accumulation"), EditId::GradAccum, [&](Plan &p) { p.training.grad_accum = v; });
    });

    // ---- Training method ----
    QFormLayout *method = group(tr("Training method"));
    m_method = new QComboBox(content);
    m_method->setObjectName(QStringLiteral("method"));
    m_method->addItem(tr("full training"), int(TrainingMethod::Full));
    m_method->addItem(tr("LoRA"), int(TrainingMethod::LoRA));
    m_method->addItem(tr("DoRA"), int(TrainingMethod::DoRA));
    m_method->addItem(tr("QLoRA (k-bit base)"), int(TrainingMethod::QLoRA));
    m_method->addItem(tr("freeze (train the last layers)"), int(TrainingMethod::Freeze));
    method->addRow(tr("Me&thod"), m_method);
    connect(m_method, &QComboBox::currentIndexChanged, this, [this](int index) {
        const auto m = TrainingMethod(m_method->itemData(index).toInt());
        edit(tr("Change training method"), EditId::Method, [&](Plan &p) {
            p.training.method.method = m;
            // Freezing needs something to train: the last layer unless already set.
            if (m == TrainingMethod::Freeze && p.training.method.freeze.last_layers == 0 &&
                p.training.method.freeze.parts == 0)
                p.training.method.freeze.last_layers = 1;
        });
    });
    m_loraRank = spin(content, 1, 4096);
    m_loraRank->setObjectName(QStringLiteral("loraRank"));
    method->addRow(tr("Adapter ran&k"), m_loraRank);
    connect(m_loraRank, &QSpinBox::valueChanged, this, [this](int v) {
        edit(tr("Set adapter rank"), EditId::Method, [&](Plan &p) { p.training.method.lora.rank = v; });
    });
    m_loraTargets = new QComboBox(content);
    m_loraTargets->setObjectName(QStringLiteral("loraTargets"));
    m_loraTargets->addItem(tr("q, v (PEFT's default)"), int(kTargetQ | kTargetV));
    m_loraTargets->addItem(tr("q, k, v, o (attention)"), int(kTargetQ | kTargetK | kTargetV | kTargetO));
    m_loraTargets->addItem(tr("all linear layers"), int(kTargetAllLinear));
    method->addRow(tr("Adapted layers"), m_loraTargets);
    connect(m_loraTargets, &QComboBox::currentIndexChanged, this, [this](int index) {
        const auto t = uint8_t(m_loraTargets->itemData(index).toInt());
        edit(tr("Set adapted layers"), EditId::Method, [&](Plan &p) { p.training.method.lora.targets = t; });
    });
    m_quant = new QComboBox(content);
    m_quant->setObjectName(QStringLiteral("quant"));
    m_quant->addItem(tr("NF4"), int(Quantization::NF4));
    m_quant->addItem(tr("FP4"), int(Quantization::FP4));
    m_quant->addItem(tr("int8 (LLM.int8())"), int(Quantization::INT8));
    method->addRow(tr("Base &quantization"), m_quant);
    connect(m_quant, &QComboBox::currentIndexChanged, this, [this](int index) {
        const auto q = Quantization(m_quant->itemData(index).toInt());
        edit(tr("Set base quantization"), EditId::Method, [&](Plan &p) { p.training.method.qlora.quant = q; });
    });
    m_freezeLayers = spin(content, 0, 1024);
    m_freezeLayers->setObjectName(QStringLiteral("freezeLayers"));
    method->addRow(tr("Trained last layers"), m_freezeLayers);
    connect(m_freezeLayers, &QSpinBox::valueChanged, this, [this](int v) {
        edit(tr("Set trained layers"), EditId::Method, [&](Plan &p) { p.training.method.freeze.last_layers = v; });
    });
    // Part check boxes: freezing's trained parts, LoRA's fully trained copies.
    auto partBoxes = [&](const QString &label, const char *prefix,
                         std::initializer_list<std::pair<uint8_t, QString>> parts,
                         QList<QPair<QCheckBox *, uint8_t>> &boxes, bool freeze) {
        // Two to a row, so that the narrow Plan panel shows them all.
        auto *row = new QWidget(content);
        auto *layout = new QGridLayout(row);
        layout->setContentsMargins(0, 0, 0, 0);
        int index = 0;
        for (const auto &[bit, text] : parts) {
            auto *box = new QCheckBox(text, row);
            box->setObjectName(QString::fromLatin1(prefix) + QString::fromStdString(std::string(partName(ModelPart(bit)))));
            layout->addWidget(box, index / 2, index % 2);
            ++index;
            boxes.append({box, bit});
            connect(box, &QCheckBox::toggled, this, [this, bit = bit, freeze](bool on) {
                edit(tr("Set trained parts"), EditId::Method, [&](Plan &p) {
                    uint8_t &bits = freeze ? p.training.method.freeze.parts
                                           : p.training.method.lora.modules_to_save;
                    bits = on ? uint8_t(bits | bit) : uint8_t(bits & ~bit);
                });
            });
        }
        method->addRow(label, row);
    };
    partBoxes(tr("Trained parts"), "freezePart_",
              {{kPartEmbedding, tr("embedding")}, {kPartHead, tr("head")}, {kPartNorms, tr("norms")},
               {kPartAttention, tr("attention")}, {kPartFfn, tr("FFN")}, {kPartExperts, tr("experts")}},
              m_freezeParts, true);
    partBoxes(tr("Fully trained"), "savedModule_",
              {{kPartEmbedding, tr("embedding")}, {kPartHead, tr("head")}}, m_savedModules, false);
    m_loss = new QComboBox(content);
    m_loss->setObjectName(QStringLiteral("lossHead"));
    m_loss->addItem(tr("the framework's"), int(LossHead::Framework));
    m_loss->addItem(tr("Hugging Face (fp32 logits)"), int(LossHead::HfUpcast));
    m_loss->addItem(tr("Megatron fused cross entropy"), int(LossHead::FusedFp32));
    m_loss->addItem(tr("Megatron cross entropy before 2024-06 (fp32 copy)"), int(LossHead::FusedFp32Copy));
    m_loss->addItem(tr("chunked cross entropy (torchtune)"), int(LossHead::Chunked));
    m_loss->addItem(tr("fused linear cross entropy (Liger)"), int(LossHead::FusedLinear));
    method->addRow(tr("&Loss head"), m_loss);
    connect(m_loss, &QComboBox::currentIndexChanged, this, [this](int index) {
        const auto l = LossHead(m_loss->itemData(index).toInt());
        edit(tr("Change loss head"), EditId::Method, [&](Plan &p) { p.memory.loss = l; });
    });
    m_trainable = new QLabel(content);
    m_trainable->setObjectName(QStringLiteral("trainable"));
    m_trainable->setWordWrap(true);
    method->addRow(tr("Trained"), m_trainable);

    // ---- Precision ----
    QFormLayout *precision = group(tr("Precision"));
    auto dtypeRow = [&](QComboBox *&combo, const char *name, const QString &label, bool none,
                        DType Precision::*field) {
        combo = dtypeCombo(content, none);
        combo->setObjectName(QLatin1String(name));
        precision->addRow(label, combo);
        connect(combo, &QComboBox::currentIndexChanged, this, [this, combo, field](int index) {
            const DType t = DType(combo->itemData(index).toInt());
            edit(tr("Change precision"), EditId::Precision, [&](Plan &p) { p.precision.*field = t; });
        });
    };
    dtypeRow(m_dtParams, "dtypeParams", tr("Parameters"), false, &Precision::params);
    dtypeRow(m_dtGrads, "dtypeGrads", tr("Gradients"), false, &Precision::grads);
    dtypeRow(m_dtMaster, "dtypeMaster", tr("Master weights"), true, &Precision::master_weights);
    dtypeRow(m_dtOptimizer, "dtypeOptimizer", tr("Optimizer states"), false, &Precision::optimizer_state);
    dtypeRow(m_dtCompute, "dtypeCompute", tr("Compute"), false, &Precision::compute);
    m_optimizer = new QComboBox(content);
    m_optimizer->setObjectName(QStringLiteral("optimizer"));
    for (Optimizer o : {Optimizer::AdamW, Optimizer::Adam, Optimizer::SGD, Optimizer::Lion,
                        Optimizer::Adafactor, Optimizer::AdamW8bit, Optimizer::PagedAdamW,
                        Optimizer::PagedAdamW8bit, Optimizer::Muon})
        m_optimizer->addItem(qs(toString(o)), int(o));
    precision->addRow(tr("Optimizer"), m_optimizer);
    connect(m_optimizer, &QComboBox::currentIndexChanged, this, [this](int index) {
        const auto o = Optimizer(m_optimizer->itemData(index).toInt());
        edit(tr("Change optimizer"), EditId::Precision, [&](Plan &p) { p.precision.optimizer = o; });
    });

    // ---- Parallel layout ----
    QFormLayout *parallel = group(tr("Parallel layout"));
    m_dp = new QLabel(content);
    m_dp->setObjectName(QStringLiteral("dp"));
    m_dp->setToolTip(tr("Data parallelism fills the rest: dp = world / (tp x pp x cp)"));
    parallel->addRow(tr("Data parallel (dp)"), m_dp);
    auto degree = [&](QComboBox *&combo, const char *name, const QString &label, const QString &what,
                      std::function<void(Plan &, int)> set) {
        combo = new QComboBox(content);
        combo->setObjectName(QLatin1String(name));
        parallel->addRow(label, combo);
        connect(combo, &QComboBox::currentIndexChanged, this, [this, combo, what, set](int index) {
            const int v = combo->itemData(index).toInt();
            edit(tr("Set %1 to %2").arg(what).arg(v), EditId::Parallel, [&](Plan &p) { set(p, v); });
        });
    };
    degree(m_tp, "tp", tr("&Tensor parallel (tp)"), QStringLiteral("tp"), [](Plan &p, int v) {
        p.parallel.tp = v;
        rebalanceDp(p);
    });
    degree(m_pp, "pp", tr("P&ipeline parallel (pp)"), QStringLiteral("pp"), [](Plan &p, int v) {
        p.parallel.pp = v;
        rebalanceDp(p);
        fitLayout(p);
    });
    m_ppSchedule = new QComboBox(content);
    m_ppSchedule->setObjectName(QStringLiteral("ppSchedule"));
    m_ppSchedule->addItem(tr("1F1B"), int(PpSchedule::OneFOneB));
    m_ppSchedule->addItem(tr("interleaved 1F1B"), int(PpSchedule::Interleaved));
    m_ppSchedule->addItem(tr("GPipe"), int(PpSchedule::GPipe));
    parallel->addRow(tr("Pipeline sc&hedule"), m_ppSchedule);
    connect(m_ppSchedule, &QComboBox::currentIndexChanged, this, [this](int index) {
        const auto s = PpSchedule(m_ppSchedule->itemData(index).toInt());
        edit(tr("Change pipeline schedule"), EditId::Parallel, [&](Plan &p) { setSchedule(p, s); });
    });
    degree(m_virtualStages, "virtualStages", tr("Virt&ual stages"), tr("virtual stages"),
           setVirtualStages);

    // The layer layout over the stages (core/layers.h): Megatron-Core's uneven first / last
    // stages and embedding / loss counted as layers, MindSpeed-LLM's list per stage.
    m_stageLayers = new QLineEdit(content);
    m_stageLayers->setObjectName(QStringLiteral("stageLayers"));
    m_stageLayers->setPlaceholderText(tr("even"));
    parallel->addRow(tr("Layers per stage"), m_stageLayers);
    connect(m_stageLayers, &QLineEdit::editingFinished, this, [this] {
        std::vector<int> list;
        if (!parseStageList(m_stageLayers->text(), list)) {
            showRefusal(tr("layers per stage: a list of whole numbers, one per stage, such as 7, 8, 8, 8"));
            return;
        }
        // The list as shown is the layout's own: only a changed list is an edit.
        if (list == stageLayers(m_document->plan()) || (list.empty() && !m_document->plan().parallel.customLayout()))
            return;
        edit(tr("Set layers per stage"), EditId::Parallel, [&](Plan &p) {
            clearLayout(p.parallel);
            p.parallel.stage_layers = list;
        });
    });
    auto stageSpin = [&](QSpinBox *&box, const char *name, const QString &label, int Parallel::*field,
                         const QString &undo) {
        box = spin(content, 0, 1024);
        box->setObjectName(QLatin1String(name));
        box->setSpecialValueText(tr("even"));
        parallel->addRow(label, box);
        connect(box, &QSpinBox::valueChanged, this, [this, field, undo](int v) {
            edit(undo, EditId::Parallel, [&](Plan &p) {
                p.parallel.stage_layers.clear();
                p.parallel.pipeline_layout.clear();
                p.parallel.*field = v;
            });
        });
    };
    stageSpin(m_firstStageLayers, "firstStageLayers", tr("First stage layers"),
              &Parallel::first_stage_layers, tr("Set first stage layers"));
    stageSpin(m_lastStageLayers, "lastStageLayers", tr("Last stage layers"),
              &Parallel::last_stage_layers, tr("Set last stage layers"));
    auto stageBox = [&](QCheckBox *&box, const char *name, const QString &label, bool Parallel::*field) {
        box = new QCheckBox(label, content);
        box->setObjectName(QLatin1String(name));
        parallel->addRow(box);
        connect(box, &QCheckBox::toggled, this, [this, field](bool on) {
            edit(tr("Change layer layout"), EditId::Parallel, [&](Plan &p) {
                p.parallel.stage_layers.clear();
                p.parallel.pipeline_layout.clear();
                p.parallel.*field = on;
            });
        });
    };
    stageBox(m_accountEmbedding, "accountForEmbedding", tr("Embedding counts as a layer"),
             &Parallel::account_for_embedding);
    stageBox(m_accountLoss, "accountForLoss", tr("Loss counts as a layer"), &Parallel::account_for_loss);
    degree(m_cp, "cp", tr("&Context parallel (cp)"), QStringLiteral("cp"), [](Plan &p, int v) {
        p.parallel.cp = v;
        rebalanceDp(p);
    });
    m_cpAlgo = new QComboBox(content);
    m_cpAlgo->setObjectName(QStringLiteral("cpAlgo"));
    m_cpAlgo->addItem(tr("ring (Megatron)"), int(CpAlgo::Ring));
    m_cpAlgo->addItem(tr("Ulysses (all-to-all over heads)"), int(CpAlgo::Ulysses));
    m_cpAlgo->addItem(tr("hybrid (Ulysses inside, ring across)"), int(CpAlgo::Hybrid));
    parallel->addRow(tr("CP algorithm"), m_cpAlgo);
    connect(m_cpAlgo, &QComboBox::currentIndexChanged, this, [this](int index) {
        const auto a = CpAlgo(m_cpAlgo->itemData(index).toInt());
        edit(tr("Change context-parallel algorithm"), EditId::Parallel, [&](Plan &p) {
            p.parallel.cp_algo = a;
            // The hybrid starts with the smallest Ulysses group its cp allows.
            p.parallel.ulysses_degree = a == CpAlgo::Hybrid ? 2 : 0;
        });
    });
    degree(m_ulyssesDegree, "ulyssesDegree", tr("Ulysses group (hybrid)"), QStringLiteral("ulysses"),
           [](Plan &p, int v) { p.parallel.ulysses_degree = v; });
    m_ulyssesKvRepeat = new QCheckBox(tr("Repeat K/V heads before Ulysses"), content);
    m_ulyssesKvRepeat->setObjectName(QStringLiteral("ulyssesKvRepeat"));
    parallel->addRow(m_ulyssesKvRepeat);
    connect(m_ulyssesKvRepeat, &QCheckBox::toggled, this, [this](bool on) {
        edit(tr("Change K/V repeat before Ulysses"), EditId::Parallel,
             [&](Plan &p) { p.parallel.ulysses_kv_repeat = on; });
    });
    degree(m_ep, "ep", tr("&Expert parallel (ep)"), QStringLiteral("ep"),
           [](Plan &p, int v) { p.parallel.ep = v; });
    degree(m_etp, "etp", tr("Expert tensor parallel (etp)"), QStringLiteral("etp"),
           [](Plan &p, int v) { p.parallel.etp = v; });
    degree(m_dpShard, "dpShard", tr("Shard group (HSDP)"), QStringLiteral("dp_shard"),
           [](Plan &p, int v) { p.parallel.dp_shard = v; });
    degree(m_hpz, "zeroHpzPartitionSize", tr("ZeRO++ hpZ group"), QStringLiteral("zero_hpz_partition_size"),
           [](Plan &p, int v) { p.parallel.zero_hpz_partition_size = v; });

    m_sharding = new QComboBox(content);
    m_sharding->setObjectName(QStringLiteral("sharding"));
    m_sharding->addItem(tr("none (DDP)"), int(Sharding::None));
    m_sharding->addItem(tr("optimizer states (ZeRO-1)"), int(Sharding::Optimizer));
    m_sharding->addItem(tr("+ gradients (ZeRO-2)"), int(Sharding::Grads));
    m_sharding->addItem(tr("+ parameters (ZeRO-3 / FSDP)"), int(Sharding::Full));
    parallel->addRow(tr("&Sharding over dp x cp"), m_sharding);
    // ZeRO / FSDP at dp x cp = 1 is accepted (a plan may be written so) but shards nothing.
    m_shardingHint = new QLabel(content);
    m_shardingHint->setObjectName(QStringLiteral("shardingHint"));
    m_shardingHint->setWordWrap(true);
    m_shardingHint->setEnabled(false); // the muted colour of a hint
    m_shardingHint->hide();
    parallel->addRow(m_shardingHint);
    connect(m_sharding, &QComboBox::currentIndexChanged, this, [this](int index) {
        const auto s = Sharding(m_sharding->itemData(index).toInt());
        edit(tr("Change sharding"), EditId::Parallel, [&](Plan &p) { p.parallel.sharding = s; });
    });
    m_sp = new QCheckBox(tr("Sequence parallelism (with tp)"), content);
    m_sp->setObjectName(QStringLiteral("sp"));
    parallel->addRow(m_sp);
    connect(m_sp, &QCheckBox::toggled, this, [this](bool on) {
        edit(on ? tr("Enable sequence parallelism") : tr("Disable sequence parallelism"),
             EditId::Parallel, [&](Plan &p) { p.parallel.sp = on; });
    });

    // ---- Memory ----
    QFormLayout *memory = group(tr("Memory"));
    m_recompute = new QComboBox(content);
    m_recompute->setObjectName(QStringLiteral("recompute"));
    m_recompute->addItem(tr("none"), int(Recompute::None));
    m_recompute->addItem(tr("selective (attention core)"), int(Recompute::Selective));
    m_recompute->addItem(tr("full (one checkpoint per layer)"), int(Recompute::Full));
    memory->addRow(tr("&Recompute"), m_recompute);
    connect(m_recompute, &QComboBox::currentIndexChanged, this, [this](int index) {
        const auto r = Recompute(m_recompute->itemData(index).toInt());
        edit(tr("Change recompute"), EditId::Memory, [&](Plan &p) {
            p.memory.recompute = r;
            // Method and layers are full recompute's; the finer recomputes add nothing to it.
            if (r != Recompute::Full) {
                p.memory.recompute_method = RecomputeMethod::Uniform;
                p.memory.recompute_num_layers = 1;
                p.memory.recompute_layers_per_pp_rank = false;
            } else {
                p.memory.recompute_activation_function = p.memory.recompute_norm = false;
            }
        });
    });
    m_recomputeMethod = new QComboBox(content);
    m_recomputeMethod->setObjectName(QStringLiteral("recomputeMethod"));
    m_recomputeMethod->addItem(tr("uniform (groups of layers)"), int(RecomputeMethod::Uniform));
    m_recomputeMethod->addItem(tr("block (the first layers of each chunk)"), int(RecomputeMethod::Block));
    memory->addRow(tr("Recompute method"), m_recomputeMethod);
    connect(m_recomputeMethod, &QComboBox::currentIndexChanged, this, [this](int index) {
        const auto mth = RecomputeMethod(m_recomputeMethod->itemData(index).toInt());
        edit(tr("Change recompute"), EditId::Memory, [&](Plan &p) {
            p.memory.recompute_method = mth;
            if (mth != RecomputeMethod::Block)
                p.memory.recompute_layers_per_pp_rank = false; // counts block's layers only
        });
    });
    m_recomputeLayers = spin(content, 1, 1024);
    m_recomputeLayers->setObjectName(QStringLiteral("recomputeLayers"));
    memory->addRow(tr("Recompute layers"), m_recomputeLayers);
    connect(m_recomputeLayers, &QSpinBox::valueChanged, this, [this](int v) {
        edit(tr("Change recompute"), EditId::Memory, [&](Plan &p) { p.memory.recompute_num_layers = v; });
    });
    // The Plan dock is about 330 px wide at 1366x768: a check box's text, which does not wrap,
    // stays short; its tooltip (set with the plan, in refresh()) says the rest.
    m_recomputePerPpRank = new QCheckBox(tr("Count per stage (MindSpeed)"), content);
    m_recomputePerPpRank->setObjectName(QStringLiteral("recomputePerPpRank"));
    memory->addRow(m_recomputePerPpRank);
    connect(m_recomputePerPpRank, &QCheckBox::toggled, this, [this](bool on) {
        edit(tr("Change recompute"), EditId::Memory, [&](Plan &p) {
            p.memory.recompute_layers_per_pp_rank = on;
            // The count may now run over the stage's chunks, and no further.
            const StageLayout layout = stageLayout(p.parallel, p.model.layers);
            p.memory.recompute_num_layers = std::min(
                p.memory.recompute_num_layers, on ? layout.largestStage() : layout.largestChunk());
        });
    });
    m_recomputeActivation = new QCheckBox(tr("Recompute FFN activation"), content);
    m_recomputeActivation->setObjectName(QStringLiteral("recomputeActivation"));
    memory->addRow(m_recomputeActivation);
    connect(m_recomputeActivation, &QCheckBox::toggled, this, [this](bool on) {
        edit(tr("Change recompute"), EditId::Memory, [&](Plan &p) { p.memory.recompute_activation_function = on; });
    });
    m_recomputeNorm = new QCheckBox(tr("Recompute the norms (MindSpeed)"), content);
    m_recomputeNorm->setObjectName(QStringLiteral("recomputeNorm"));
    memory->addRow(m_recomputeNorm);
    connect(m_recomputeNorm, &QCheckBox::toggled, this, [this](bool on) {
        edit(tr("Change recompute"), EditId::Memory, [&](Plan &p) { p.memory.recompute_norm = on; });
    });
    m_attention = new QComboBox(content);
    m_attention->setObjectName(QStringLiteral("attention"));
    m_attention->addItem(tr("flash (fused)"), int(Attention::Flash));
    m_attention->addItem(tr("eager (scores materialized)"), int(Attention::Eager));
    memory->addRow(tr("&Attention"), m_attention);
    connect(m_attention, &QComboBox::currentIndexChanged, this, [this](int index) {
        const auto a = Attention(m_attention->itemData(index).toInt());
        edit(tr("Change attention"), EditId::Memory, [&](Plan &p) {
            p.memory.attention = a;
            if (a == Attention::Eager)
                p.memory.flash_output_copy.reset(); // no flash kernel whose output could be copied
        });
    });
    m_rope = new QComboBox(content);
    m_rope->setObjectName(QStringLiteral("rope"));
    m_rope->addItem(tr("the framework's"), int(RopeSaves::Framework));
    m_rope->addItem(tr("nothing per layer (shared cos, sin)"), int(RopeSaves::Shared));
    m_rope->addItem(tr("cos and sin per layer"), int(RopeSaves::PerLayer));
    m_rope->addItem(tr("cos, sin and q, k (npu_rotary_mul)"), int(RopeSaves::KeepsInput));
    m_rope->setToolTip(
        tr("What each layer's rotary embedding keeps for backward. Shared: cos and sin made once "
           "per forward (Transformer Engine's fused RoPE, Hugging Face). Per layer: each layer "
           "makes and keeps its own cos and sin for q and for k (MindSpeed's fused RoPE, "
           "Megatron-Core's unfused one). npu_rotary_mul also keeps the q and k it rotates "
           "(MindSpeed-LLM before 2024-12-21)"));
    memory->addRow(tr("&RoPE keeps"), m_rope);
    connect(m_rope, &QComboBox::currentIndexChanged, this, [this](int index) {
        const auto r = RopeSaves(m_rope->itemData(index).toInt());
        edit(tr("Change what RoPE keeps"), EditId::Memory, [&](Plan &p) { p.memory.rope = r; });
    });
    auto offload = [&](QCheckBox *&box, const char *name, const QString &label, bool Offload::*field) {
        box = new QCheckBox(label, content);
        box->setObjectName(QLatin1String(name));
        memory->addRow(box);
        connect(box, &QCheckBox::toggled, this, [this, field](bool on) {
            edit(tr("Change offload"), EditId::Memory, [&](Plan &p) { p.memory.offload.*field = on; });
        });
    };
    offload(m_offOptimizer, "offloadOptimizer", tr("Offload optimizer states to host"), &Offload::optimizer);
    offload(m_offParams, "offloadParams", tr("Offload parameters to host"), &Offload::params);
    offload(m_offGrads, "offloadGrads", tr("Offload gradients to host"), &Offload::grads);
    offload(m_offActivations, "offloadActivations", tr("Offload activations to host"), &Offload::activations);

    // Megatron-Core's --overlap-grad-reduce / --overlap-param-gather: shown as the plan trains
    // (the profile's default until set); ticking either writes the plan field.
    m_overlapGrads = new QCheckBox(tr("Overlap gradient reduction"), content);
    m_overlapGrads->setObjectName(QStringLiteral("overlapGradReduce"));
    memory->addRow(m_overlapGrads);
    connect(m_overlapGrads, &QCheckBox::toggled, this, [this](bool on) {
        edit(tr("Change communication overlap"), EditId::Memory, [&](Plan &p) {
            p.memory.overlap_grad_reduce = on;
            // --overlap-param-gather needs --overlap-grad-reduce.
            if (!on && p.memory.overlap_param_gather.value_or(false))
                p.memory.overlap_param_gather = false;
        });
    });
    m_overlapParams = new QCheckBox(tr("Overlap parameter all-gather"), content);
    m_overlapParams->setObjectName(QStringLiteral("overlapParamGather"));
    memory->addRow(m_overlapParams);
    connect(m_overlapParams, &QCheckBox::toggled, this, [this](bool on) {
        edit(tr("Change communication overlap"), EditId::Memory, [&](Plan &p) {
            p.memory.overlap_param_gather = on;
            if (on)
                p.memory.overlap_grad_reduce = true;
        });
    });
    // Kernel choices the profile makes (Megatron-Core's --bias-swiglu-fusion; the flash kernel's
    // output copied between the (b, s) and (s, b) layouts, as legacy Megatron-LM's FlashSelfAttention
    // did): shown as the plan trains, ticking writes the plan field.
    m_fusedSwiglu = new QCheckBox(tr("Fused SwiGLU"), content);
    m_fusedSwiglu->setObjectName(QStringLiteral("fusedSwiglu"));
    memory->addRow(m_fusedSwiglu);
    connect(m_fusedSwiglu, &QCheckBox::toggled, this, [this](bool on) {
        edit(tr("Change SwiGLU fusion"), EditId::Memory, [&](Plan &p) { p.memory.fused_swiglu = on; });
    });
    m_flashOutputCopy = new QCheckBox(tr("Flash output copied between layouts"), content);
    m_flashOutputCopy->setObjectName(QStringLiteral("flashOutputCopy"));
    memory->addRow(m_flashOutputCopy);
    connect(m_flashOutputCopy, &QCheckBox::toggled, this, [this](bool on) {
        edit(tr("Change flash output copy"), EditId::Memory, [&](Plan &p) { p.memory.flash_output_copy = on; });
    });
    m_bufferPad = spin(content, 0, 4096);
    m_bufferPad->setObjectName(QStringLiteral("paramAndGradBufferPad"));
    m_bufferPad->setSingleStep(128);
    m_bufferPad->setSuffix(tr(" B"));
    m_bufferPad->setSpecialValueText(tr("off"));
    m_bufferPad->setToolTip(tr("MindSpeed's --param-and-grad-buffer-pad (512 on Ascend): each "
                               "shard of a distributed-optimizer bucket starts on this many bytes"));
    memory->addRow(tr("Buffer pad (MindSpeed)"), m_bufferPad);
    connect(m_bufferPad, &QSpinBox::valueChanged, this, [this](int b) {
        edit(tr("Change buffer pad"), EditId::Memory, [&](Plan &p) { p.memory.param_and_grad_buffer_pad = b; });
    });

    // MindSpeed's swap-attention (core/swapattention.h).
    m_swapAttention = new QCheckBox(tr("Swap attention to host (MindSpeed)"), content);
    m_swapAttention->setObjectName(QStringLiteral("swapAttention"));
    m_swapAttention->setToolTip(tr("MindSpeed's --swap-attention: what the input norm, attention and "
                                   "post-attention norm save goes to the host after each layer's "
                                   "forward and comes back as its backward starts"));
    memory->addRow(m_swapAttention);
    connect(m_swapAttention, &QCheckBox::toggled, this, [this](bool on) {
        edit(tr("Change swap-attention"), EditId::Memory, [&](Plan &p) { p.memory.swap_attention = on; });
    });

    // HCCL buffers per communication group (core/hcclbuffers.h): HCCL_BUFFSIZE and MindSpeed's
    // --hccl-group-buffer / --hccl-group-buffer-adaptive; HCCL devices only.
    m_hcclBuffer = spin(content, 0, 65536);
    m_hcclBuffer->setObjectName(QStringLiteral("hcclBufferMb"));
    m_hcclBuffer->setSingleStep(50);
    m_hcclBuffer->setSuffix(tr(" MB"));
    m_hcclBuffer->setSpecialValueText(tr("profile"));
    m_hcclBuffer->setToolTip(tr("HCCL_BUFFSIZE: every communicator holds an input and an output "
                                "buffer of this size (200 MB by default)"));
    memory->addRow(tr("HCCL buffer size"), m_hcclBuffer);
    connect(m_hcclBuffer, &QSpinBox::valueChanged, this, [this](int mb) {
        edit(tr("Change HCCL buffer size"), EditId::Memory, [&](Plan &p) { p.memory.hccl_buffer_mb = mb; });
    });
    m_hcclGroupBuffer = new QLineEdit(content);
    m_hcclGroupBuffer->setObjectName(QStringLiteral("hcclGroupBuffer"));
    m_hcclGroupBuffer->setPlaceholderText(tr("none, such as dp:200;tp:300"));
    m_hcclGroupBuffer->setToolTip(tr("MindSpeed's --hccl-group-buffer: the HCCL buffer size of named "
                                     "groups in MB (dp, dp_cp, tp, pp, cp, cp_ulysses, cp_ring, exp, embd, ...)"));
    memory->addRow(tr("HCCL buffer per group"), m_hcclGroupBuffer);
    connect(m_hcclGroupBuffer, &QLineEdit::editingFinished, this, [this] {
        std::map<std::string, int> groups;
        std::string error;
        if (!parseHcclGroupBuffer(m_hcclGroupBuffer->text().toStdString(), groups, &error)) {
            showRefusal(tr("HCCL buffer per group: %1").arg(QString::fromStdString(error)));
            return;
        }
        if (groups == m_document->plan().memory.hccl_group_buffer)
            return;
        edit(tr("Set HCCL buffer per group"), EditId::Memory, [&](Plan &p) { p.memory.hccl_group_buffer = groups; });
    });
    m_hcclAdaptive = new QCheckBox(tr("Adaptive HCCL buffers"), content);
    m_hcclAdaptive->setObjectName(QStringLiteral("hcclBufferAdaptive"));
    m_hcclAdaptive->setToolTip(tr("MindSpeed's --hccl-group-buffer-adaptive: the tp, pp, cp and ep groups' "
                                  "buffers sized from the largest message they carry"));
    memory->addRow(m_hcclAdaptive);
    connect(m_hcclAdaptive, &QCheckBox::toggled, this, [this](bool on) {
        edit(tr("Change adaptive HCCL buffers"), EditId::Memory, [&](Plan &p) {
            p.memory.hccl_buffer_adaptive = on;
            if (!on)
                p.memory.hccl_ep_group_buffer_adaptive_factor = 0; // the factor needs it
        });
    });

    // The caching allocator's settings (PYTORCH_CUDA_ALLOC_CONF / PYTORCH_NPU_ALLOC_CONF): the
    // estimate replays the allocator with them.
    m_expandable = new QCheckBox(tr("Expandable segments"), content);
    m_expandable->setObjectName(QStringLiteral("expandableSegments"));
    m_expandable->setToolTip(tr("expandable_segments:True in PYTORCH_CUDA_ALLOC_CONF / "
                                "PYTORCH_NPU_ALLOC_CONF: segments grow page by page instead of one "
                                "per miss, which leaves less memory reserved and unused"));
    memory->addRow(m_expandable);
    connect(m_expandable, &QCheckBox::toggled, this, [this](bool on) {
        edit(tr("Change allocator"), EditId::Memory, [&](Plan &p) { p.memory.allocator.expandable_segments = on; });
    });
    m_maxSplit = new QSpinBox(content);
    m_maxSplit->setObjectName(QStringLiteral("maxSplitSize"));
    m_maxSplit->setRange(0, 1 << 20);
    m_maxSplit->setSingleStep(64);
    m_maxSplit->setSuffix(tr(" MiB"));
    m_maxSplit->setSpecialValueText(tr("no limit"));
    m_maxSplit->setToolTip(tr("max_split_size_mb: cached blocks this large are not split for "
                              "smaller requests (above 20 MiB, or no limit)"));
    memory->addRow(tr("Max &split size"), m_maxSplit);
    connect(m_maxSplit, &QSpinBox::valueChanged, this, [this](int mb) {
        edit(tr("Change allocator"), EditId::Memory, [&](Plan &p) { p.memory.allocator.max_split_size_mb = mb; });
    });
    m_gcThreshold = new QDoubleSpinBox(content);
    m_gcThreshold->setObjectName(QStringLiteral("gcThreshold"));
    m_gcThreshold->setRange(0, 0.99);
    m_gcThreshold->setDecimals(2);
    m_gcThreshold->setSingleStep(0.05);
    m_gcThreshold->setSpecialValueText(tr("off"));
    m_gcThreshold->setToolTip(tr("garbage_collection_threshold: beyond this fraction of the usable "
                                 "memory, cached segments unused longest are released before a new "
                                 "one is reserved"));
    memory->addRow(tr("Allocator &GC threshold"), m_gcThreshold);
    connect(m_gcThreshold, &QDoubleSpinBox::valueChanged, this, [this](double t) {
        edit(tr("Change allocator"), EditId::Memory,
             [&](Plan &p) { p.memory.allocator.garbage_collection_threshold = t; });
    });

    // ---- System ----
    QFormLayout *system = group(tr("Framework and cluster"));
    m_framework = new QComboBox(content);
    m_framework->setObjectName(QStringLiteral("framework"));
    for (const std::string &id : m_document->catalog().frameworkIds()) {
        const FrameworkProfile *f = m_document->catalog().framework(id);
        m_framework->addItem(qs(f->name.empty() ? id : f->name), qs(id));
        m_framework->setItemData(m_framework->count() - 1, qs(f->description), Qt::ToolTipRole);
    }
    system->addRow(tr("&Framework"), m_framework);
    connect(m_framework, &QComboBox::currentIndexChanged, this, [this](int index) {
        const std::string id = toStd(m_framework->itemData(index).toString());
        edit(tr("Change framework"), EditId::Framework, [&](Plan &p) { p.framework = id; });
    });
    m_device = new QComboBox(content);
    m_device->setObjectName(QStringLiteral("device"));
    for (const std::string &id : m_document->catalog().deviceIds()) {
        const DeviceProfile *d = m_document->catalog().device(id);
        m_device->addItem(QStringLiteral("%1 (%2)").arg(qs(d->name.empty() ? id : d->name),
                                                        qs(formatGiB(d->hbm_bytes, 0))),
                          qs(id));
    }
    system->addRow(tr("&Device"), m_device);
    connect(m_device, &QComboBox::currentIndexChanged, this, [this](int index) {
        const std::string id = toStd(m_device->itemData(index).toString());
        edit(tr("Change device"), EditId::Cluster, [&](Plan &p) { p.cluster.device = id; });
    });
    m_devicesPerNode = spin(content, 1, 64);
    m_devicesPerNode->setObjectName(QStringLiteral("devicesPerNode"));
    system->addRow(tr("Devices per node"), m_devicesPerNode);
    connect(m_devicesPerNode, &QSpinBox::valueChanged, this, [this](int v) {
        edit(tr("Change devices per node"), EditId::Cluster, [&](Plan &p) {
            p.cluster.devices_per_node = v;
            rebalanceDp(p);
        });
    });
    m_vocabDivisor = spin(content, 0, 1048576);
    m_vocabDivisor->setObjectName(QStringLiteral("vocabDivisibleBy"));
    m_vocabDivisor->setSpecialValueText(tr("framework default"));
    m_vocabDivisor->setToolTip(tr("The vocabulary is padded to a multiple of this x tp "
                                  "(Megatron's --make-vocab-size-divisible-by, 128); 1: not padded"));
    system->addRow(tr("Pad vocabulary (x tp)"), m_vocabDivisor);
    connect(m_vocabDivisor, &QSpinBox::valueChanged, this, [this](int v) {
        edit(tr("Change vocabulary padding"), EditId::Framework, [&](Plan &p) { p.model.vocab_divisible_by = v; });
    });
    m_nodes = spin(content, 1, 4096);
    m_nodes->setObjectName(QStringLiteral("nodes"));
    system->addRow(tr("&Nodes"), m_nodes);
    connect(m_nodes, &QSpinBox::valueChanged, this, [this](int v) {
        edit(tr("Change node count"), EditId::Cluster, [&](Plan &p) {
            p.cluster.nodes = v;
            rebalanceDp(p);
        });
    });
    m_world = new QLabel(content);
    m_world->setObjectName(QStringLiteral("world"));
    m_world->setWordWrap(true);
    system->addRow(m_world);
    column->addStretch();

    // Long preset and device names must not widen the dock beyond a 1366-pixel screen.
    for (QComboBox *combo : content->findChildren<QComboBox *>()) {
        combo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        combo->setMinimumContentsLength(8);
    }

    auto *scroll = new QScrollArea(this);
    scroll->setWidget(content);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    auto *outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    outer->addWidget(scroll);
    outer->addWidget(m_status);
}

void PlanEditor::refresh()
{
    m_refreshing = true;
    const Plan &p = m_document->plan();
    // The name field keeps what is being typed into it; otherwise it shows the plan's name.
    if (!m_name->hasFocus() || m_name->text() == m_shownName) {
        m_shownName = qs(p.name);
        if (m_name->text() != m_shownName)
            m_name->setText(m_shownName);
    }
    {
        const QSignalBlocker block(m_preset);
        const int i = m_preset->findData(qs(p.model.preset));
        m_preset->setCurrentIndex(i < 0 ? 0 : i);
        m_preset->setToolTip(m_preset->currentText());
    }
    const int64_t n = countParameters(p.model).total;
    m_sizeLabel->setText(paramsText(double(n)));
    refreshSizeShapes();
    if (!m_size->isSliderDown() && !m_sizeShapes.empty()) {
        // The handle sits on the offered shape nearest the model's count (on a log scale).
        int nearest = 0;
        double best = 1e300;
        for (size_t i = 0; i < m_sizeShapes.size(); ++i) {
            const double d = std::fabs(std::log(double(countParameters(m_sizeShapes[i]).total) / double(std::max<int64_t>(1, n))));
            if (d < best) {
                best = d;
                nearest = int(i);
            }
        }
        const QSignalBlocker block(m_size);
        m_size->setValue(nearest);
    }
    setValue(m_layers, p.model.layers);
    setValue(m_hidden, int(p.model.hidden));
    setValue(m_heads, p.model.heads);
    setValue(m_kvHeads, p.model.kv_heads);
    setValue(m_headDim, int(p.model.head_dim));
    {
        // Under MLA every head has its own keys and values and the head width is nope + rope.
        const bool mla = p.model.mla_attention();
        m_kvHeads->setEnabled(!mla);
        m_headDim->setEnabled(!mla);
        m_kvHeads->setToolTip(mla ? tr("Multi-head latent attention: one key and value per head")
                                  : tr("Fewer than the heads for grouped-query attention"));
        m_headDim->setToolTip(mla ? tr("Multi-head latent attention: q/k head without rope + with rope")
                                  : tr("Width of one attention head"));
    }
    selectData(m_ffnKind, int(p.model.ffn));
    setValue(m_ffn, int(p.model.ffn_hidden));
    setValue(m_vocab, int(p.model.vocab));
    {
        // A dense model shows, disabled, the experts that turning MoE on would give it.
        const bool moe = p.model.moe.enabled();
        const MoeShape shown = moe ? p.model.moe : defaultMoe(p.model);
        setChecked(m_moe, moe);
        setValue(m_experts, shown.experts);
        setValue(m_topK, shown.top_k);
        setValue(m_expertFfn, int(shown.expert_ffn_hidden));
        const QString dense = tr("Dense model: turn on mixture of experts first");
        const std::pair<QSpinBox *, QString> fields[] = {
            {m_experts, tr("Routed experts in every layer; ep must divide it")},
            {m_topK, tr("Experts each token is routed to")},
            {m_expertFfn, tr("FFN width of one expert")},
        };
        for (const auto &[box, help] : fields) {
            box->setEnabled(moe);
            box->setToolTip(moe ? help : tr("%1\n%2").arg(help, dense));
        }
    }

    if (!m_seqSlider->isSliderDown()) {
        const QSignalBlocker block(m_seqSlider);
        m_seqSlider->setValue(int(std::lround(std::log2(double(std::max<int64_t>(1, p.training.seq_len))))));
    }
    setValue(m_seqEntry, int(p.training.seq_len));
    setValue(m_microBatch, p.training.micro_batch);
    setValue(m_gradAccum, p.training.grad_accum);
    {
        const Dropout d = dropoutOf(p, *m_document->catalog().framework(p.framework));
        const std::pair<QDoubleSpinBox *, std::pair<double, double>> boxes[] = {
            {m_dropoutHidden, {p.training.dropout.hidden, d.hidden}},
            {m_dropoutAttention, {p.training.dropout.attention, d.attention}}};
        for (const auto &[box, v] : boxes) {
            const double shown = v.first < 0 ? -0.01 : v.first;
            if (box->value() != shown) {
                const QSignalBlocker block(box);
                box->setValue(shown);
            }
            box->setToolTip(tr("Saved masks: one byte per element after attention and after the FFN "
                               "(hidden), per score under eager attention. Now %1 (the lowest value: "
                               "the framework profile's)")
                                .arg(v.second, 0, 'f', 2));
        }
    }
    m_shape->refresh(p);

    {
        const MethodOptions &mo = p.training.method;
        selectData(m_method, int(mo.method));
        setValue(m_loraRank, mo.lora.rank);
        if (m_loraTargets->findData(int(mo.lora.targets)) < 0) {
            // Targets a plan file named that the presets do not: shown as they are.
            QStringList names;
            for (const std::string &t : targetNames(mo.lora.targets))
                names << qs(t);
            const QSignalBlocker block(m_loraTargets);
            m_loraTargets->addItem(names.join(QStringLiteral(", ")), int(mo.lora.targets));
        }
        selectData(m_loraTargets, int(mo.lora.targets));
        selectData(m_quant, int(mo.qlora.quant));
        m_freezeLayers->setMaximum(p.model.layers);
        setValue(m_freezeLayers, mo.freeze.last_layers);
        selectData(m_loss, int(p.memory.loss));
        m_loraRank->setEnabled(mo.usesAdapters());
        m_loraTargets->setEnabled(mo.usesAdapters());
        m_quant->setEnabled(mo.method == TrainingMethod::QLoRA);
        m_freezeLayers->setEnabled(mo.method == TrainingMethod::Freeze);
        for (const auto &[box, bit] : m_freezeParts) {
            setChecked(box, (mo.freeze.parts & bit) != 0);
            box->setEnabled(mo.method == TrainingMethod::Freeze &&
                            (bit != kPartExperts || p.model.moe.enabled()) &&
                            (bit != kPartFfn || !p.model.moe.enabled()));
        }
        for (const auto &[box, bit] : m_savedModules) {
            setChecked(box, (mo.lora.modules_to_save & bit) != 0);
            box->setEnabled(mo.usesAdapters());
        }
        const double trained = double(trainableParameters(p));
        m_trainable->setText(tr("%1 of %2 (%3%)")
                                 .arg(qs(formatCount((long long)trained)), qs(formatCount(countParameters(p.model).total)))
                                 .arg(100.0 * trained / double(std::max<int64_t>(1, countParameters(p.model).total)), 0,
                                      'f', trained < double(countParameters(p.model).total) ? 3 : 0));
    }
    selectData(m_dtParams, int(p.precision.params));
    selectData(m_dtGrads, int(p.precision.grads));
    selectData(m_dtMaster, int(p.precision.master_weights));
    selectData(m_dtOptimizer, int(p.precision.optimizer_state));
    selectData(m_dtCompute, int(p.precision.compute));
    selectData(m_optimizer, int(p.precision.optimizer));
    selectData(m_sharding, int(p.parallel.sharding));
    selectData(m_cpAlgo, int(p.parallel.cp_algo));
    {
        const int over = p.parallel.dp * p.parallel.cp;
        m_sharding->setToolTip(tr("ZeRO and FSDP shard the model states over the dp x cp = %1 ranks "
                                  "of a model replica's data and context groups").arg(over));
        const bool idle = p.parallel.sharding != Sharding::None && over == 1;
        m_shardingHint->setText(idle ? tr("Shards nothing here: the states are sharded over dp x cp "
                                          "ranks, and dp x cp = 1. Raise dp or cp, or choose none.")
                                     : QString());
        m_shardingHint->setVisible(idle);
    }
    selectData(m_ppSchedule, int(p.parallel.pp_schedule));
    selectData(m_recompute, int(p.memory.recompute));
    {
        const bool full = p.memory.recompute == Recompute::Full;
        selectData(m_recomputeMethod, int(p.memory.recompute_method));
        setValue(m_recomputeLayers, p.memory.recompute_num_layers);
        const StageLayout layout = stageLayout(p.parallel, p.model.layers);
        const bool perPpRank = p.memory.recompute_layers_per_pp_rank;
        m_recomputeLayers->setMaximum(
            std::max(1, perPpRank ? layout.largestStage() : layout.largestChunk()));
        m_recomputeMethod->setEnabled(full);
        m_recomputeLayers->setEnabled(full);
        setChecked(m_recomputePerPpRank, perPpRank);
        const bool block = full && p.memory.recompute_method == RecomputeMethod::Block;
        m_recomputePerPpRank->setEnabled(perPpRank || (block && p.framework == "megatron"));
        m_recomputePerPpRank->setToolTip(
            block && p.framework == "megatron"
                ? tr("MindSpeed's --enable-recompute-layers-per-pp-rank: the recompute layers "
                     "count the "
                     "stage's layers over its model chunks (layer l of chunk c is the (l x chunks "
                     "+ c)-th), "
                     "not the first layers of each chunk")
                : tr("Applies to full recompute with method block under framework megatron "
                     "(MindSpeed)"));
        const QString needsFull = tr("Applies to full recompute (Megatron's --recompute-method)");
        m_recomputeMethod->setToolTip(full ? tr("uniform: checkpoint groups of the given layers; block: "
                                                "recompute only the first layers of each chunk")
                                           : needsFull);
        m_recomputeLayers->setToolTip(
            full ? (perPpRank ? tr("Layers recomputed per pipeline stage, over its chunks")
                              : tr("Layers per group (uniform) or recomputed per chunk (block)"))
                 : needsFull);
        setChecked(m_recomputeActivation, p.memory.recompute_activation_function);
        setChecked(m_recomputeNorm, p.memory.recompute_norm);
        m_recomputeActivation->setEnabled(!full);
        m_recomputeNorm->setEnabled(!full);
        const QString underFull = tr("Full recompute recomputes everything already");
        m_recomputeActivation->setToolTip(full ? underFull : tr("MindSpeed's --recompute-activation-function: the FFN activation's "
                                                              "output is recomputed from its input in backward"));
        m_recomputeNorm->setToolTip(full ? underFull : tr("The norms' outputs are recomputed from their inputs in backward"));
    }
    selectData(m_attention, int(p.memory.attention));
    selectData(m_rope, int(p.memory.rope));
    m_rope->setEnabled(p.model.position_embedding == PositionEmbedding::Rope);
    setChecked(m_sp, p.parallel.sp);
    {
        // The layer layout: what each stage holds, and the fields that made it.
        const Parallel &pa = p.parallel;
        const bool piped = pa.pp > 1;
        QStringList counts;
        if (piped)
            for (int layers : stageLayers(p))
                counts << QString::number(layers);
        if (!m_stageLayers->hasFocus()) {
            const QSignalBlocker block(m_stageLayers);
            m_stageLayers->setText(pa.customLayout() ? counts.join(QStringLiteral(", ")) : QString());
        }
        m_stageLayers->setPlaceholderText(piped ? tr("even: %1").arg(counts.join(QStringLiteral(", "))) : tr("even"));
        setValue(m_firstStageLayers, pa.first_stage_layers);
        setValue(m_lastStageLayers, pa.last_stage_layers);
        setChecked(m_accountEmbedding, pa.account_for_embedding);
        setChecked(m_accountLoss, pa.account_for_loss);
        for (QWidget *w : {static_cast<QWidget *>(m_stageLayers), static_cast<QWidget *>(m_firstStageLayers),
                           static_cast<QWidget *>(m_lastStageLayers), static_cast<QWidget *>(m_accountEmbedding),
                           static_cast<QWidget *>(m_accountLoss)})
            w->setEnabled(piped);
        const QString needsPp = tr("Applies with pipeline parallelism (pp >= 2)");
        m_stageLayers->setToolTip(piped ? tr("Decoder layers of each stage, comma-separated (MindSpeed-LLM's "
                                             "--num-layer-list; no virtual stages); empty: the even split")
                                        : needsPp);
        const QString uneven = tr("Megatron-Core's --decoder-first/last-pipeline-num-layers: this stage holds "
                                  "that many layers, the rest split evenly over the others; each a multiple "
                                  "of the virtual stages");
        m_firstStageLayers->setToolTip(piped ? uneven : needsPp);
        m_lastStageLayers->setToolTip(piped ? uneven : needsPp);
        const QString counted = tr("Megatron-Core's --account-for-embedding/loss-in-pipeline-split: counted as "
                                   "one layer in the split, the first (last) stage builds one decoder layer fewer");
        m_accountEmbedding->setToolTip(piped ? counted : needsPp);
        m_accountLoss->setToolTip(piped ? counted : needsPp);
    }
    setChecked(m_offOptimizer, p.memory.offload.optimizer);
    setChecked(m_offParams, p.memory.offload.params);
    setChecked(m_offGrads, p.memory.offload.grads);
    setChecked(m_offActivations, p.memory.offload.activations);
    setChecked(m_expandable, p.memory.allocator.expandable_segments);
    if (const FrameworkProfile *fw = m_document->catalog().framework(p.framework)) {
        setChecked(m_overlapGrads, overlapGradReduceOf(p, *fw));
        setChecked(m_overlapParams, overlapParamGatherOf(p, *fw));
        setChecked(m_fusedSwiglu, p.model.ffn == FfnKind::SwiGLU && fusedSwigluOf(p, *fw));
        setChecked(m_flashOutputCopy, p.memory.attention != Attention::Eager && flashOutputCopyOf(p, *fw));
        setChecked(m_ulyssesKvRepeat,
                   p.parallel.cp_algo != CpAlgo::Ring && ulyssesKvRepeatOf(p, *fw));
    }
    setValue(m_vocabDivisor, p.model.vocab_divisible_by);
    setValue(m_bufferPad, p.memory.param_and_grad_buffer_pad);
    m_bufferPad->setEnabled(p.framework == "megatron" && p.parallel.sharding == Sharding::Optimizer);
    {
        const DeviceProfile *dev = m_document->catalog().device(p.cluster.device);
        const bool hccl = dev && isHcclDevice(*dev);
        setValue(m_hcclBuffer, p.memory.hccl_buffer_mb);
        setChecked(m_hcclAdaptive, p.memory.hccl_buffer_adaptive);
        setChecked(m_swapAttention, p.memory.swap_attention);
        m_swapAttention->setEnabled(p.framework == "megatron" || p.memory.swap_attention);
        const QString groups = QString::fromStdString(formatHcclGroupBuffer(p.memory.hccl_group_buffer));
        if (m_hcclGroupBuffer->text() != groups)
            m_hcclGroupBuffer->setText(groups);
        m_hcclBuffer->setEnabled(hccl || p.memory.hccl_buffer_mb > 0);
        m_hcclGroupBuffer->setEnabled((hccl && p.framework == "megatron") || !p.memory.hccl_group_buffer.empty());
        m_hcclAdaptive->setEnabled((hccl && p.framework == "megatron") || p.memory.hccl_buffer_adaptive);
    }
    setValue(m_maxSplit, int(p.memory.allocator.max_split_size_mb));
    if (m_gcThreshold->value() != p.memory.allocator.garbage_collection_threshold) {
        const QSignalBlocker block(m_gcThreshold);
        m_gcThreshold->setValue(p.memory.allocator.garbage_collection_threshold);
    }
    {
        const QSignalBlocker b1(m_framework);
        m_framework->setCurrentIndex(m_framework->findData(qs(p.framework)));
        const QSignalBlocker b2(m_device);
        m_device->setCurrentIndex(m_device->findData(qs(p.cluster.device)));
    }
    setValue(m_devicesPerNode, p.cluster.devices_per_node);
    setValue(m_nodes, p.cluster.nodes);
    m_dp->setText(QString::number(p.parallel.dp));
    m_world->setText(tr("World: %1 devices = dp %2 x tp %3 x pp %4 x cp %5")
                         .arg(p.cluster.world())
                         .arg(p.parallel.dp)
                         .arg(p.parallel.tp)
                         .arg(p.parallel.pp)
                         .arg(p.parallel.cp));
    refreshDegrees();
    refreshChoices();
    m_refreshing = false;
}

void PlanEditor::fillDegreeCombo(QComboBox *combo, const QString &what,
                                 const std::function<void(Plan &, int)> &set, int current)
{
    const int world = m_document->plan().cluster.world();
    QList<int> values;
    for (int v = 1; v <= world; ++v) {
        if (world % v == 0)
            values.append(v);
    }
    fillChoiceCombo(combo, what, values, set, current,
                    tr("Every divisor of the world size is possible"));
}

void PlanEditor::fillChoiceCombo(QComboBox *combo, const QString &what, const QList<int> &values,
                                 const std::function<void(Plan &, int)> &set, int current,
                                 const QString &allPossible)
{
    const Plan &base = m_document->plan();
    const QSignalBlocker block(combo);
    bool same = combo->count() == values.size();
    for (int i = 0; same && i < values.size(); ++i)
        same = combo->itemData(i).toInt() == values.at(i);
    if (!same) {
        combo->clear();
        for (int v : values)
            combo->addItem(QString::number(v), v);
    }
    QStringList refused;
    for (int i = 0; i < values.size(); ++i) {
        const int v = values.at(i);
        QString reason;
        if (v != current) {
            Plan candidate = base;
            set(candidate, v);
            reason = m_document->validationError(candidate);
        }
        setItemReason(combo, i, reason);
        if (!reason.isEmpty())
            refused.append(tr("%1 = %2: %3").arg(what).arg(v).arg(reason));
    }
    combo->setCurrentIndex(combo->findData(current));
    combo->setToolTip(refused.isEmpty()
                          ? allPossible
                          : tr("Not possible:\n%1").arg(refused.join(QLatin1Char('\n'))));
}

void PlanEditor::refreshDegrees()
{
    const Plan &p = m_document->plan();
    fillDegreeCombo(m_tp, QStringLiteral("tp"), [](Plan &c, int v) { c.parallel.tp = v; rebalanceDp(c); }, p.parallel.tp);
    fillDegreeCombo(m_pp, QStringLiteral("pp"), [](Plan &c, int v) { c.parallel.pp = v; rebalanceDp(c); fitLayout(c); }, p.parallel.pp);
    fillDegreeCombo(m_cp, QStringLiteral("cp"), [](Plan &c, int v) { c.parallel.cp = v; rebalanceDp(c); }, p.parallel.cp);
    fillDegreeCombo(m_ep, QStringLiteral("ep"), [](Plan &c, int v) { c.parallel.ep = v; }, p.parallel.ep);
    {
        // The hybrid's Ulysses group: divisors of cp from 2 up, below cp.
        QList<int> values;
        if (p.parallel.cp_algo == CpAlgo::Hybrid)
            for (int v = 2; v < p.parallel.cp; ++v)
                if (p.parallel.cp % v == 0)
                    values.append(v);
        if (values.isEmpty())
            values.append(p.parallel.ulysses_degree);
        fillChoiceCombo(m_ulyssesDegree, tr("Ulysses group"), values,
                        [](Plan &c, int v) { c.parallel.ulysses_degree = v; }, p.parallel.ulysses_degree,
                        tr("Ranks of each Ulysses group inside cp; a ring of cp / group across them"));
        m_ulyssesDegree->setEnabled(p.parallel.cp_algo == CpAlgo::Hybrid);
        if (p.parallel.cp_algo != CpAlgo::Hybrid)
            m_ulyssesDegree->setToolTip(tr("Applies to the hybrid algorithm"));
    }
    {
        // Expert tensor parallelism: tp's (0) or its own degree (Megatron's
        // expert_tensor_parallel_size).
        QList<int> values{0};
        for (int v = 1; v <= p.cluster.world(); ++v)
            if (p.cluster.world() % v == 0)
                values.append(v);
        fillChoiceCombo(m_etp, QStringLiteral("etp"), values, [](Plan &c, int v) { c.parallel.etp = v; },
                        p.parallel.etp,
                        tr("Tensor parallelism inside each expert; experts' data parallelism is world / "
                           "(ep x etp x pp)"));
        m_etp->setItemText(0, tr("as tp"));
    }
    {
        // HSDP: shard within groups of dp_shard data-parallel ranks, replicate across them.
        QList<int> values{0};
        for (int v = 1; v < p.parallel.dp; ++v)
            if (p.parallel.dp % v == 0)
                values.append(v);
        fillChoiceCombo(m_dpShard, QStringLiteral("dp_shard"), values,
                        [](Plan &c, int v) { c.parallel.dp_shard = v; }, p.parallel.dp_shard,
                        tr("Shard the states within groups of this many data-parallel ranks and "
                           "replicate them across the groups (HSDP, hierarchical ZeRO)"));
        m_dpShard->setItemText(0, tr("all of dp"));
    }
    {
        // DeepSpeed ZeRO++ hpZ: a secondary copy of the ZeRO-3 parameters sharded within groups
        // of this many data-parallel ranks (core/hpz.h).
        QList<int> values{0};
        for (int v = 2; v <= p.parallel.dp; ++v)
            if (p.parallel.dp % v == 0)
                values.append(v);
        fillChoiceCombo(m_hpz, QStringLiteral("zero_hpz_partition_size"), values,
                        [](Plan &c, int v) { c.parallel.zero_hpz_partition_size = v; },
                        p.parallel.zero_hpz_partition_size,
                        tr("DeepSpeed ZeRO++ hpZ: ZeRO-3 keeps a second copy of the parameters sharded "
                           "within groups of this many ranks (a node), so that later all-gathers stay "
                           "in the group"));
        m_hpz->setItemText(0, tr("off"));
    }

    // Virtual stages: the counts v for which the layer layout splits into v chunks per stage
    // (pp x v dividing the layers when even).
    QList<int> stages;
    for (int v = 1; v <= kMaxVirtualStages; ++v) {
        Parallel candidate = p.parallel;
        candidate.virtual_stages = v;
        candidate.pp_schedule = v > 1 ? PpSchedule::Interleaved : PpSchedule::OneFOneB;
        if (v == p.parallel.virtual_stages || (p.parallel.pp > 0 && !stageLayoutError(candidate, p.model.layers, p.model.mtp_layers)))
            stages.append(v);
    }
    fillChoiceCombo(m_virtualStages, tr("virtual stages"), stages, setVirtualStages,
                    p.parallel.virtual_stages,
                    tr("Model chunks per pipeline stage (interleaved 1F1B); pp x virtual stages "
                       "divides the layers"));
}

void PlanEditor::refreshChoices()
{
    const Plan &base = m_document->plan();
    // Returns "choice: reason" for each refused choice.
    auto comboReasons = [&](QComboBox *combo,
                            const std::function<void(Plan &, const QVariant &)> &set) {
        QStringList refused;
        for (int i = 0; i < combo->count(); ++i) {
            if (i == combo->currentIndex()) {
                setItemReason(combo, i, QString());
                continue;
            }
            Plan candidate = base;
            set(candidate, combo->itemData(i));
            const QString reason = m_document->validationError(candidate);
            setItemReason(combo, i, reason);
            if (!reason.isEmpty())
                refused.append(tr("%1: %2").arg(combo->itemText(i), reason));
        }
        return refused;
    };
    auto dtypeReasons = [&](QComboBox *combo, DType Precision::*field) {
        comboReasons(combo, [field](Plan &c, const QVariant &v) { c.precision.*field = DType(v.toInt()); });
    };
    dtypeReasons(m_dtParams, &Precision::params);
    dtypeReasons(m_dtGrads, &Precision::grads);
    dtypeReasons(m_dtMaster, &Precision::master_weights);
    dtypeReasons(m_dtOptimizer, &Precision::optimizer_state);
    dtypeReasons(m_dtCompute, &Precision::compute);
    comboReasons(m_sharding, [](Plan &c, const QVariant &v) { c.parallel.sharding = Sharding(v.toInt()); });
    {
        const QStringList algos = comboReasons(m_cpAlgo, [](Plan &c, const QVariant &v) {
            c.parallel.cp_algo = CpAlgo(v.toInt());
            c.parallel.ulysses_degree = c.parallel.cp_algo == CpAlgo::Hybrid ? 2 : 0;
        });
        const QString help = tr("ring: K/V blocks passed around the cp ranks (Megatron)\n"
                                "Ulysses: all-to-alls trade the sequence split for a head split "
                                "(heads / tp divisible by cp; KV heads too unless repeated to the "
                                "query heads)\n"
                                "hybrid: Ulysses inside groups, a ring across them (MindSpeed)");
        m_cpAlgo->setToolTip(algos.isEmpty() ? help
                                             : tr("%1\nNot possible now:\n%2").arg(help, algos.join(QLatin1Char('\n'))));
    }
    const QStringList schedules = comboReasons(
        m_ppSchedule, [](Plan &c, const QVariant &v) { setSchedule(c, PpSchedule(v.toInt())); });
    const QString scheduleHelp =
        tr("1F1B: each stage alternates one forward and one backward\n"
           "interleaved 1F1B: each stage holds several model chunks (virtual stages), a smaller "
           "bubble for more communication\n"
           "GPipe: all forwards, then all backwards");
    m_ppSchedule->setToolTip(
        schedules.isEmpty()
            ? scheduleHelp
            : tr("%1\nNot possible now:\n%2").arg(scheduleHelp, schedules.join(QLatin1Char('\n'))));
    comboReasons(m_ffnKind, [](Plan &c, const QVariant &v) {
        c.model.ffn = FfnKind(v.toInt());
        if (c.model.ffn != FfnKind::SwiGLU)
            c.memory.fused_swiglu.reset();
        makeCustom(c.model);
    });
    comboReasons(m_framework, [](Plan &c, const QVariant &v) { c.framework = toStd(v.toString()); });

    auto toggleReason = [&](QCheckBox *box, const QString &help, const std::function<void(Plan &)> &flip) {
        Plan candidate = base;
        flip(candidate);
        const QString reason = m_document->validationError(candidate);
        box->setEnabled(reason.isEmpty());
        box->setToolTip(reason.isEmpty() ? help : tr("%1\nNot possible now: %2").arg(help, reason));
    };
    toggleReason(m_moe,
                 tr("Replace the dense FFN of every layer by routed experts (Mixtral style)"),
                 [](Plan &c) {
                     c.model.moe = c.model.moe.enabled() ? MoeShape{} : defaultMoe(c.model);
                     makeCustom(c.model);
                 });
    toggleReason(m_sp, tr("Megatron sequence parallelism: splits norm and residual activations over the tp group"),
                 [](Plan &c) { c.parallel.sp = !c.parallel.sp; });
    toggleReason(m_offOptimizer, tr("Keep optimizer states in host memory"),
                 [](Plan &c) { c.memory.offload.optimizer = !c.memory.offload.optimizer; });
    toggleReason(m_offParams, tr("Keep parameters in host memory, gathered layer by layer"),
                 [](Plan &c) { c.memory.offload.params = !c.memory.offload.params; });
    toggleReason(m_offGrads, tr("Move gradients to host memory"),
                 [](Plan &c) { c.memory.offload.grads = !c.memory.offload.grads; });
    toggleReason(m_offActivations, tr("Move saved activations to host memory"),
                 [](Plan &c) { c.memory.offload.activations = !c.memory.offload.activations; });
    if (const FrameworkProfile *fw = m_document->catalog().framework(base.framework)) {
        const bool grads = overlapGradReduceOf(base, *fw), params = overlapParamGatherOf(base, *fw);
        toggleReason(m_overlapGrads,
                     tr("Megatron's --overlap-grad-reduce: gradients reduced bucket by bucket during "
                        "backward; off: one bucket after backward, not hidden"),
                     [grads](Plan &c) {
                         c.memory.overlap_grad_reduce = !grads;
                         if (grads && c.memory.overlap_param_gather.value_or(false))
                             c.memory.overlap_param_gather = false;
                     });
        toggleReason(m_overlapParams,
                     tr("Megatron's --overlap-param-gather: the updated parameter shards all-gathered "
                        "bucket by bucket in the next forward (distributed optimizer)"),
                     [params](Plan &c) {
                         c.memory.overlap_param_gather = !params;
                         if (!params)
                             c.memory.overlap_grad_reduce = true;
                     });
        const bool fused = fusedSwigluOf(base, *fw), copied = flashOutputCopyOf(base, *fw);
        toggleReason(m_fusedSwiglu,
                     tr("One SwiGLU kernel keeps gate|up and its output; unfused, gate, up, silu(gate) "
                        "and their product are each kept for backward"),
                     [fused](Plan &c) { c.memory.fused_swiglu = !fused; });
        toggleReason(m_flashOutputCopy,
                     tr("Flash attention run in the (b, s) layout (legacy Megatron-LM): its output and "
                        "a copy in (s, b) are both kept for backward"),
                     [copied](Plan &c) { c.memory.flash_output_copy = !copied; });
        const bool repeat = ulyssesKvRepeatOf(base, *fw);
        toggleReason(
            m_ulyssesKvRepeat,
            tr("MindSpeed-LLM's --kv-head-repeat-before-uly-alltoall: with grouped-query "
               "attention, K and V are repeated to the query heads before Ulysses' all-to-all, "
               "so they travel and are kept for backward at the query width, and kv_heads / tp "
               "need not divide by the Ulysses group"),
            [repeat](Plan &c) { c.parallel.ulysses_kv_repeat = !repeat; });
        if (base.parallel.cp_algo == CpAlgo::Ring) {
            m_ulyssesKvRepeat->setEnabled(false);
            m_ulyssesKvRepeat->setToolTip(tr("Applies to the Ulysses and hybrid algorithms"));
        } else if (!kvRepeatWidens(base.model)) {
            m_ulyssesKvRepeat->setEnabled(false);
            m_ulyssesKvRepeat->setToolTip(tr("No effect: every query head has its own K and V"));
        }
    }
}

} // namespace shardscope
