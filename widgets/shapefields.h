#pragma once

// The Plan panel's fields for the 2025-26 model shapes: attention kind and MLA's ranks, QK
// norms, norm kind, linear biases, position embedding, MTP modules, and the MoE block beyond
// experts / top-k / width (shared experts, dense first layers, MoE layer frequency, capacity or
// imbalance, fp32 router, dispatcher). Every change goes through the editor's undoable edit.
#include <QObject>
#include <functional>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QSpinBox;
class QWidget;

namespace shardscope {

struct ModelShape;
struct Plan;

class ShapeFields : public QObject
{
    Q_OBJECT

public:
    /// Applies `change` to a copy of the plan's model as one undoable edit named `label`.
    using Edit = std::function<void(const QString &label, const std::function<void(ModelShape &)> &change)>;

    ShapeFields(QWidget *parent, Edit edit);
    /// Attention, norm, biases, positions and MTP rows.
    void addModelRows(QFormLayout *form);
    /// The MoE block's further rows (after experts, top-k and expert width).
    void addMoeRows(QFormLayout *form);
    /// Shows `p`'s shape; fields that do not apply are disabled and say why.
    void refresh(const Plan &p);

private:
    QSpinBox *spinRow(QFormLayout *form, const char *name, const QString &label, int lo, int hi,
                      std::function<void(ModelShape &, int)> set);

    QWidget *m_parent;
    Edit m_edit;
    QComboBox *m_attention = nullptr, *m_norm = nullptr, *m_positions = nullptr,
              *m_dispatcher = nullptr;
    QCheckBox *m_qkNorm = nullptr, *m_linearBias = nullptr, *m_routerFp32 = nullptr;
    QSpinBox *m_qLora = nullptr, *m_kvLora = nullptr, *m_qkNope = nullptr, *m_qkRope = nullptr,
             *m_vHead = nullptr, *m_maxPositions = nullptr, *m_mtp = nullptr;
    QSpinBox *m_shared = nullptr, *m_sharedFfn = nullptr, *m_firstDense = nullptr, *m_layerFreq = nullptr;
    QDoubleSpinBox *m_capacity = nullptr, *m_imbalance = nullptr;
};

} // namespace shardscope
