#include "componentstyle.h"

#include "darkpalette.h"

#include <QCoreApplication>

namespace shardscope {

QColor ComponentStyle::color(int segment)
{
    // Tableau 10: distinguishable for common colour-vision deficiencies, on light and dark.
    static const QColor colors[kSegments] = {
        QColor(0x4E, 0x79, 0xA7), // parameters
        QColor(0x76, 0xB7, 0xB2), // gradients
        QColor(0x59, 0xA1, 0x4F), // master weights
        QColor(0xED, 0xC9, 0x48), // optimizer states
        QColor(0xF2, 0x8E, 0x2B), // activations
        QColor(0xE1, 0x57, 0x59), // logits and loss
        QColor(0xB0, 0x7A, 0xA1), // communication buffers
        QColor(0xFF, 0x9D, 0xA7), // transient
        QColor(0x9C, 0x95, 0x8F), // runtime reserve
    };
    return segment >= 0 && segment < kSegments ? colors[segment] : QColor(Qt::gray);
}

QColor ComponentStyle::verdictColor(bool fits, const QPalette &palette)
{
    // At least 4.5:1 against the window of either palette (WCAG AA for text).
    if (isDark(palette))
        return fits ? QColor(0x66, 0xbb, 0x6a) : QColor(0xff, 0x7b, 0x7b);
    return fits ? QColor(0x2e, 0x7d, 0x32) : QColor(0xc6, 0x28, 0x28);
}

QString ComponentStyle::name(int segment)
{
    switch (segment) {
    case int(Component::Parameters): return QCoreApplication::translate("ComponentStyle", "Parameters");
    case int(Component::Gradients): return QCoreApplication::translate("ComponentStyle", "Gradients");
    case int(Component::MasterWeights): return QCoreApplication::translate("ComponentStyle", "Master weights");
    case int(Component::OptimizerStates): return QCoreApplication::translate("ComponentStyle", "Optimizer states");
    case int(Component::Activations): return QCoreApplication::translate("ComponentStyle", "Activations");
    case int(Component::LogitsAndLoss): return QCoreApplication::translate("ComponentStyle", "Logits and loss");
    case int(Component::CommunicationBuffers): return QCoreApplication::translate("ComponentStyle", "Communication buffers");
    case int(Component::Transient): return QCoreApplication::translate("ComponentStyle", "Transient");
    case kReserve: return QCoreApplication::translate("ComponentStyle", "Runtime reserve");
    default: return {};
    }
}

QString ComponentStyle::phaseName(Phase phase)
{
    switch (phase) {
    case Phase::Forward: return QCoreApplication::translate("ComponentStyle", "forward");
    case Phase::Backward: return QCoreApplication::translate("ComponentStyle", "backward");
    case Phase::OptimizerStep: return QCoreApplication::translate("ComponentStyle", "optimizer step");
    case Phase::Count: break;
    }
    return {};
}

} // namespace shardscope
