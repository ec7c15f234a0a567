#include "comparisonmodel.h"

#include "componentstyle.h"
#include "layouttext.h"
#include "plandescription.h"
#include "qstrings.h"

#include "core/catalog.h"
#include "core/errors.h"
#include "core/files.h"
#include "core/jsoninput.h"
#include "core/units.h"

#include <QBrush>
#include <QColor>
#include <QFileInfo>
#include <QFont>
#include <QGuiApplication>
#include <QLocale>
#include <cmath>

namespace shardscope {

namespace {

constexpr const char *kFormat = "shardscope-comparison";
constexpr int kVersion = 1;

std::string contentJson(const Plan &plan)
{
    nlohmann::json j = planToJson(plan);
    j.erase("name");
    return j.dump();
}

QString signedNumber(double v, int decimals)
{
    // U+2212 MINUS SIGN reads better than a hyphen beside digits.
    const QString n = QLocale().toString(std::abs(v), 'f', decimals);
    return v < 0 ? QStringLiteral("\u2212") + n : QStringLiteral("+") + n;
}

} // namespace

ComparisonModel::ComparisonModel(const Catalog &catalog, QObject *parent)
    : QAbstractTableModel(parent), m_catalog(catalog)
{
}

ComparisonModel::~ComparisonModel() = default;

bool ComparisonModel::pin(const PinnedPlan &plan)
{
    if (int(m_plans.size()) >= kMaxPlans)
        return false;
    const int row = int(m_plans.size());
    beginInsertRows(QModelIndex(), row, row);
    m_plans.push_back(plan);
    if (m_plans.back().description.isEmpty())
        m_plans.back().description = describePlan(plan.plan, m_catalog);
    endInsertRows();
    if (m_baseline < 0 && row == 0)
        setBaseline(0);
    return true;
}

bool ComparisonModel::isPinned(const Plan &plan) const
{
    const std::string content = contentJson(plan);
    for (const PinnedPlan &p : m_plans) {
        if (contentJson(p.plan) == content)
            return true;
    }
    return false;
}

void ComparisonModel::unpin(int row)
{
    if (row < 0 || row >= int(m_plans.size()))
        return;
    // Another baseline first (the first remaining plan), so that the removal itself changes no
    // other row.
    if (row == m_baseline)
        setBaseline(m_plans.size() == 1 ? -1 : row == 0 ? 1 : 0);
    beginRemoveRows(QModelIndex(), row, row);
    m_plans.erase(m_plans.begin() + row);
    if (row < m_baseline)
        --m_baseline; // the same plan, one row up
    endRemoveRows();
    if (!m_plans.empty())
        Q_EMIT headerDataChanged(Qt::Vertical, 0, rowCount() - 1);
}

void ComparisonModel::clear()
{
    beginResetModel();
    m_plans.clear();
    m_baseline = -1;
    endResetModel();
}

void ComparisonModel::setBaseline(int row)
{
    if (row < -1 || row >= int(m_plans.size()))
        row = -1;
    m_baseline = row;
    if (!m_plans.empty()) {
        Q_EMIT dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
        Q_EMIT headerDataChanged(Qt::Vertical, 0, rowCount() - 1);
    }
}

QString ComparisonModel::title(int row) const
{
    if (row < 0 || row >= int(m_plans.size()))
        return {};
    const PinnedPlan &p = m_plans[size_t(row)];
    const QString text = tr("%1: %2").arg(tag(row), p.description);
    return p.edited ? tr("%1 (edited)").arg(text) : text;
}

int ComparisonModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_plans.size());
}

int ComparisonModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QString ComparisonModel::delta(int row, Column column) const
{
    if (m_baseline < 0 || row == m_baseline)
        return {};
    const PinnedPlan &p = m_plans[size_t(row)];
    const PinnedPlan &b = m_plans[size_t(m_baseline)];
    const RankMemory *pw = worstRank(p.estimate.memory), *bw = worstRank(b.estimate.memory);
    const StepEstimate &ps = p.estimate.step, &bs = b.estimate.step;
    auto percent = [](double v, double base) {
        return base > 0 && v > 0 ? tr("%1%").arg(signedNumber(100.0 * (v - base) / base, 0)) : QString();
    };
    switch (column) {
    case RequiredColumn:
        if (!pw || !bw)
            return {};
        return signedNumber((pw->peak_bytes + pw->reserve.total() - bw->peak_bytes - bw->reserve.total()) / kGiB, 1);
    case StepTimeColumn: return percent(ps.step_s, bs.step_s);
    case TokensColumn: return percent(ps.tokens_per_s, bs.tokens_per_s);
    case MfuColumn:
        return ps.mfu > 0 && bs.mfu > 0 ? signedNumber(100.0 * (ps.mfu - bs.mfu), 1) : QString();
    default: return {};
    }
}

QVariant ComparisonModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const PinnedPlan &p = m_plans[size_t(index.row())];
    const RankMemory *worst = worstRank(p.estimate.memory);
    const double peak = worst ? worst->peak_bytes : 0;
    const double reserve = worst ? worst->reserve.total() : 0;
    const StepEstimate &s = p.estimate.step;
    const Column column = Column(index.column());
    if (role == Qt::DisplayRole) {
        // Against a baseline the figures carry their difference: "94.2 GiB (+45.2)".
        auto withDelta = [&](const QString &value) {
            const QString d = delta(index.row(), column);
            return d.isEmpty() ? value : tr("%1 (%2)").arg(value, d);
        };
        switch (column) {
        case PlanColumn: return p.edited ? tr("%1 (edited)").arg(p.description) : p.description;
        case DifferenceColumn: {
            if (m_baseline < 0)
                return QString();
            if (index.row() == m_baseline)
                return tr("baseline");
            const QStringList d = planDifferences(p.plan, m_plans[size_t(m_baseline)].plan, m_catalog);
            return d.isEmpty() ? tr("same plan") : d.join(QStringLiteral(", "));
        }
        case NameColumn: return qs(p.plan.name);
        case PeakColumn: return qs(formatGiB(peak, 1));
        case ReserveColumn: return qs(formatGiB(reserve, 1));
        case RequiredColumn: return withDelta(qs(formatGiB(peak + reserve, 1)));
        case FitsColumn: return p.estimate.memory.fits ? tr("fits") : tr("does not fit");
        case StepTimeColumn: return s.step_s > 0 ? withDelta(qs(formatSeconds(s.step_s))) : tr("n/a");
        case TokensColumn:
            return s.step_s > 0 ? withDelta(qs(formatCount((long long)(s.tokens_per_s + 0.5)))) : tr("n/a");
        case MfuColumn:
            return s.step_s > 0 ? withDelta(QStringLiteral("%1%").arg(s.mfu * 100, 0, 'f', 1)) : tr("n/a");
        case ColumnCount: break;
        }
        return {};
    }
    if (role == SortRole) {
        switch (column) {
        case PeakColumn: return peak;
        case ReserveColumn: return reserve;
        case RequiredColumn: return peak + reserve;
        case FitsColumn: return p.estimate.memory.fits;
        case StepTimeColumn: return s.step_s;
        case TokensColumn: return s.tokens_per_s;
        case MfuColumn: return s.mfu;
        default: return data(index, Qt::DisplayRole);
        }
    }
    if (role == Qt::ForegroundRole && column == FitsColumn)
        return QBrush(ComponentStyle::verdictColor(p.estimate.memory.fits, QGuiApplication::palette()));
    if (role == Qt::TextAlignmentRole && column <= MfuColumn && column != FitsColumn)
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::FontRole && column == DifferenceColumn && index.row() == m_baseline) {
        QFont f;
        f.setItalic(true);
        return f;
    }
    if (role == Qt::ToolTipRole) {
        switch (column) {
        case PlanColumn: return title(index.row());
        case NameColumn: return qs(p.plan.name);
        case DifferenceColumn:
            return m_baseline >= 0 && index.row() != m_baseline
                       ? tr("Against %1:\n%2").arg(title(m_baseline), data(index).toString())
                       : QVariant();
        default: return {};
        }
    }
    return {};
}

QVariant ComparisonModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation == Qt::Vertical) {
        if (role == Qt::DisplayRole)
            return tag(section);
        if (role == Qt::ToolTipRole)
            return section == m_baseline ? tr("%1 (the baseline)").arg(title(section)) : title(section);
        if (role == Qt::FontRole && section == m_baseline) {
            QFont f;
            f.setBold(true);
            return f;
        }
        return QAbstractTableModel::headerData(section, orientation, role);
    }
    if (role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (Column(section)) {
    case PlanColumn: return tr("Plan");
    case DifferenceColumn: return tr("Against the baseline");
    case NameColumn: return tr("Name");
    case PeakColumn: return tr("Peak allocated");
    case ReserveColumn: return tr("Runtime reserve");
    case RequiredColumn: return tr("Needed per rank");
    case FitsColumn: return tr("HBM");
    case StepTimeColumn: return tr("Step time");
    case TokensColumn: return tr("Tokens/s");
    case MfuColumn: return tr("MFU");
    case ColumnCount: break;
    }
    return {};
}

nlohmann::json ComparisonModel::toJson() const
{
    nlohmann::json plans = nlohmann::json::array();
    for (const PinnedPlan &p : m_plans)
        plans.push_back({{"plan", planToJson(p.plan)}, {"edited", p.edited}});
    return {{"format", kFormat}, {"version", kVersion}, {"baseline", m_baseline}, {"plans", plans}};
}

std::optional<std::vector<PinnedPlan>> ComparisonModel::readFile(const QString &path,
                                                                 const Catalog &catalog,
                                                                 int *baseline, QString *error)
{
    const QString file = QFileInfo(path).fileName();
    auto fail = [&](const QString &field, const QString &rule) {
        if (error)
            *error = field.isEmpty() ? tr("%1: %2").arg(file, rule)
                                     : tr("%1: %2: %3").arg(file, field, rule);
        return std::nullopt;
    };
    nlohmann::json j;
    try {
        j = parseJsonText(readTextFile(path.toStdString()), path.toStdString());
    } catch (const std::exception &e) {
        if (error)
            *error = qs(e.what());
        return std::nullopt;
    }
    if (!j.is_object())
        return fail({}, tr("is not a ShardScope comparison (a JSON object with \"format\": \"%1\")")
                            .arg(QLatin1String(kFormat)));
    if (j.value("format", nlohmann::json()) != kFormat)
        return fail(QStringLiteral("format"),
                    tr("must be \"%1\"; a plan file opens with File > Open").arg(QLatin1String(kFormat)));
    if (!j.contains("version") || !j["version"].is_number_integer() || j["version"].get<int64_t>() < 1)
        return fail(QStringLiteral("version"), tr("must be a whole number from 1"));
    if (j["version"].get<int64_t>() > kVersion)
        return fail(QStringLiteral("version"),
                    tr("this comparison was written by a newer ShardScope (format %1); this version "
                       "reads format %2")
                        .arg(j["version"].get<int64_t>())
                        .arg(kVersion));
    if (!j.contains("plans") || !j["plans"].is_array())
        return fail(QStringLiteral("plans"), tr("must be a list of pinned plans"));
    const nlohmann::json &list = j["plans"];
    if (list.empty() || list.size() > size_t(kMaxPlans))
        return fail(QStringLiteral("plans"), tr("must hold 1 to %1 plans, not %2").arg(kMaxPlans).arg(list.size()));
    const std::string dir = QFileInfo(path).absolutePath().toStdString();
    std::vector<PinnedPlan> out;
    for (size_t i = 0; i < list.size(); ++i) {
        const QString where = QStringLiteral("plans[%1]").arg(i);
        const nlohmann::json &item = list[i];
        if (!item.is_object() || !item.contains("plan"))
            return fail(where, tr("must be an object with a \"plan\""));
        if (item.contains("edited") && !item["edited"].is_boolean())
            return fail(where + QStringLiteral(".edited"), tr("must be true or false"));
        PinnedPlan p;
        try {
            p.plan = parsePlan(item["plan"], catalog, dir);
            validatePlan(p.plan, catalog);
            p.estimate = estimate(p.plan, catalog);
        } catch (const PlanError &e) {
            return fail(e.field().empty() ? where + QStringLiteral(".plan")
                                          : where + QStringLiteral(".plan.") + qs(e.field()),
                        qs(e.rule()));
        } catch (const std::exception &e) {
            return fail(where + QStringLiteral(".plan"), qs(e.what()));
        }
        p.edited = item.value("edited", false);
        p.description = describePlan(p.plan, catalog);
        out.push_back(std::move(p));
    }
    int base = 0;
    if (j.contains("baseline")) {
        const nlohmann::json &b = j["baseline"];
        if (!b.is_number_integer() || b.get<int64_t>() < -1 || b.get<int64_t>() >= int64_t(out.size()))
            return fail(QStringLiteral("baseline"),
                        tr("must be the index of a plan (0 to %1) or -1 for none").arg(out.size() - 1));
        base = int(b.get<int64_t>());
    }
    if (baseline)
        *baseline = base;
    return out;
}

} // namespace shardscope
