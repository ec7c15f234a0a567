#include "runnerresultsmodel.h"

#include "core/units.h"

#include <QGuiApplication>
#include <QPalette>

namespace shardscope {

namespace {

QString rateText(double v, const QString &unit)
{
    if (v <= 0)
        return QStringLiteral("-");
    static const char *prefixes[] = {"", "K", "M", "G", "T", "P"};
    int i = 0;
    while (v >= 1000 && i < 5) {
        v /= 1000;
        ++i;
    }
    return QStringLiteral("%1 %2%3")
        .arg(v, 0, 'f', v < 10 ? 2 : 1)
        .arg(QLatin1String(prefixes[i]), unit);
}

QString shapeText(const Kernel &k)
{
    switch (k.kind) {
    case KernelKind::Gemm:
        return QStringLiteral("%1 x %2 x %3 (%4)")
            .arg(k.m)
            .arg(k.n)
            .arg(k.k)
            .arg(QString::fromStdString(k.layout));
    case KernelKind::Attention:
        return QStringLiteral("b%1 h%2/%3 s%4 d%5")
            .arg(k.batch)
            .arg(k.heads)
            .arg(k.kv_heads)
            .arg(k.seq_q)
            .arg(k.head_dim);
    case KernelKind::Elementwise:
        return QStringLiteral("%1 elements").arg(k.elements);
    case KernelKind::Collective:
        return QStringLiteral("%1 x%2, %3")
            .arg(QString::fromStdString(k.group))
            .arg(k.group_size)
            .arg(QString::fromStdString(formatBytes(k.bytes)));
    }
    return {};
}

QString seconds(double s)
{
    return s > 0 ? QString::fromStdString(formatSeconds(s)) : QStringLiteral("-");
}

} // namespace

RunnerResultsModel::RunnerResultsModel(QObject *parent) : QAbstractTableModel(parent) {}

void RunnerResultsModel::setResults(const RunResults &results, const DeviceProfile *device,
                                    const Plan *plan)
{
    beginResetModel();
    m_results = results;
    m_device = device ? std::optional<DeviceProfile>(*device) : std::nullopt;
    m_plan = plan ? std::optional<Plan>(*plan) : std::nullopt;
    const size_t had = m_results.measurements.size();
    m_results.measurements.resize(m_results.kernels.size());
    for (size_t i = had; i < m_results.measurements.size(); ++i) {
        m_results.measurements[i].name = m_results.kernels[i].name;
        m_results.measurements[i].status.clear(); // not measured yet
    }
    recompare();
    endResetModel();
}

QString RunnerResultsModel::predictedDevice() const
{
    return m_device ? QString::fromStdString(m_device->name) : QString();
}

QString RunnerResultsModel::measuredDevice() const
{
    const BackendInfo &info = m_results.info;
    const QString device = QString::fromStdString(info.device);
    return info.device_name.empty() ? device
                                    : QStringLiteral("%1 (%2)").arg(device, QString::fromStdString(info.device_name));
}

bool RunnerResultsModel::crossDevice() const
{
    const BackendInfo &info = m_results.info;
    if (!m_device || info.device.empty())
        return false;
    if (info.device == "cpu")
        return true;
    if (info.device_name.empty())
        return false; // a GPU or NPU that did not name itself: taken as the plan's
    // "NVIDIA H200" and "NVIDIA H200 SXM 141GB", "Ascend910B2" and "Ascend 910B2" are the same.
    auto key = [](QString s) { return s.remove(QLatin1Char(' ')).remove(QLatin1Char('-')).toLower(); };
    const QString measured = key(QString::fromStdString(info.device_name));
    const QString predicted = key(QString::fromStdString(m_device->name));
    return !measured.contains(predicted) && !predicted.contains(measured);
}

QString RunnerResultsModel::crossDeviceNote() const
{
    if (!crossDevice())
        return {};
    return tr("Measured on %1; the predictions are for the plan's %2. The ratio compares two "
              "different devices: it says how far this machine is from a %2, not how good the "
              "prediction is. Run the PyTorch worker on the plan's device to check the predictions.")
        .arg(measuredDevice(), predictedDevice());
}

void RunnerResultsModel::recompare()
{
    m_comparison.clear();
    if (m_device && m_plan)
        m_comparison = compareKernels(m_results, *m_device, *m_plan);
}

void RunnerResultsModel::updateKernel(int row, const KernelMeasurement &m)
{
    if (row < 0 || row >= rowCount())
        return;
    m_results.measurements[size_t(row)] = m;
    recompare();
    emit dataChanged(index(row, 0), index(row, ColumnCount - 1));
}

int RunnerResultsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_results.kernels.size());
}

int RunnerResultsModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant RunnerResultsModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= rowCount() || index.column() >= ColumnCount)
        return {};
    const Kernel &k = m_results.kernels[size_t(index.row())];
    const KernelMeasurement &m = m_results.measurements[size_t(index.row())];
    const KernelComparison *c =
        size_t(index.row()) < m_comparison.size() ? &m_comparison[size_t(index.row())] : nullptr;
    const double rate = m.flops_per_s > 0 ? m.flops_per_s : (m.busbw > 0 ? m.busbw : m.bytes_per_s);
    if (role == SortRole) {
        switch (Column(index.column())) {
        case Time:
            return m.time_s;
        case Rate:
            return rate;
        case Predicted:
            return c ? c->predicted_s : 0.0;
        case Measured:
            return c ? c->measured_s : 0.0;
        case Ratio:
            return c ? c->ratio : 0.0;
        case PerStep:
            return k.count_per_step;
        default:
            return data(index, Qt::DisplayRole);
        }
    }
    if (role == Qt::TextAlignmentRole) {
        return index.column() >= Time ? QVariant(Qt::AlignRight | Qt::AlignVCenter)
                                      : QVariant(Qt::AlignLeft | Qt::AlignVCenter);
    }
    if (role == Qt::ForegroundRole && index.column() == Ratio && crossDevice())
        return QGuiApplication::palette().brush(QPalette::Disabled, QPalette::Text);
    if (role == Qt::ToolTipRole && crossDevice() &&
        (index.column() == Ratio || index.column() == Predicted))
        return crossDeviceNote();
    if (role == Qt::ToolTipRole) {
        QString tip = QString::fromStdString(k.note);
        if (!m.message.empty())
            tip += QStringLiteral("\n") + QString::fromStdString(m.message);
        return tip;
    }
    if (role != Qt::DisplayRole)
        return {};
    switch (Column(index.column())) {
    case Name:
        return QString::fromStdString(k.name);
    case Shape:
        return shapeText(k);
    case Status:
        return m.status.empty() ? tr("pending") : QString::fromStdString(m.status);
    case Time:
        return m.ok() ? seconds(m.time_s) : QStringLiteral("-");
    case Rate:
        if (!m.ok())
            return QStringLiteral("-");
        if (m.flops_per_s > 0)
            return rateText(m.flops_per_s, QStringLiteral("FLOP/s"));
        if (m.busbw > 0)
            return rateText(m.busbw, QStringLiteral("B/s bus"));
        return rateText(m.bytes_per_s, QStringLiteral("B/s"));
    case Predicted:
        return c ? seconds(c->predicted_s) : QStringLiteral("-");
    case Measured:
        return c ? seconds(c->measured_s) : QStringLiteral("-");
    case Ratio:
        return c && c->ratio > 0 ? QString::number(c->ratio, 'f', 2) : QStringLiteral("-");
    case PerStep:
        return QString::number(k.count_per_step, 'f', 0);
    case ColumnCount:
        break;
    }
    return {};
}

QVariant RunnerResultsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation == Qt::Horizontal && role == Qt::ToolTipRole) {
        if (section == Predicted && m_device)
            return tr("One call at the plan's full size on %1, as the engine models it").arg(predictedDevice());
        if (section == Ratio)
            return crossDevice() ? crossDeviceNote() : tr("Measured / predicted, on the same device");
    }
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    if (section == Predicted && m_device)
        return tr("Predicted, %1").arg(predictedDevice());
    if (section == Ratio && crossDevice())
        return tr("Ratio (other device)");
    switch (Column(section)) {
    case Name:
        return tr("Kernel");
    case Shape:
        return tr("Shape run");
    case Status:
        return tr("Status");
    case Time:
        return tr("Time");
    case Rate:
        return tr("Rate");
    case Predicted:
        return tr("Predicted");
    case Measured:
        return tr("Measured");
    case Ratio:
        return tr("Ratio");
    case PerStep:
        return tr("Per step");
    case ColumnCount:
        break;
    }
    return {};
}

} // namespace shardscope
