#include "plandescription.h"

#include "qstrings.h"

#include "core/catalog.h"
#include "core/model.h"

#include <QCoreApplication>
#include <QLocale>
#include <algorithm>

namespace shardscope {

namespace {

// The translation context of these phrases.
struct PlanDescription
{
    Q_DECLARE_TR_FUNCTIONS(PlanDescription)
};

const QString kSeparator = QStringLiteral(" \u00b7 ");

// 32768 -> "32K", 1048576 -> "1M"; other counts with group separators.
QString compactCount(int64_t n)
{
    if (n >= (int64_t(1) << 20) && n % (int64_t(1) << 20) == 0)
        return QStringLiteral("%1M").arg(n >> 20);
    if (n >= 1024 && n % 1024 == 0)
        return QStringLiteral("%1K").arg(n >> 10);
    return QLocale().toString(qlonglong(n));
}

QString parameterCount(double n)
{
    if (n >= 1e12)
        return QStringLiteral("%1T").arg(n / 1e12, 0, 'f', 2);
    return QStringLiteral("%1B").arg(n / 1e9, 0, 'f', n < 10e9 ? 1 : 0);
}

QString shardingName(Sharding s)
{
    switch (s) {
    case Sharding::None: return PlanDescription::tr("DDP");
    case Sharding::Optimizer: return PlanDescription::tr("ZeRO-1");
    case Sharding::Grads: return PlanDescription::tr("ZeRO-2");
    case Sharding::Full: return PlanDescription::tr("FSDP (ZeRO-3)");
    }
    return {};
}

QString methodText(const MethodOptions &mo)
{
    switch (mo.method) {
    case TrainingMethod::Full: return {};
    case TrainingMethod::LoRA: return PlanDescription::tr("LoRA r%1").arg(mo.lora.rank);
    case TrainingMethod::DoRA: return PlanDescription::tr("DoRA r%1").arg(mo.lora.rank);
    case TrainingMethod::QLoRA: return PlanDescription::tr("QLoRA r%1").arg(mo.lora.rank);
    case TrainingMethod::Freeze: return PlanDescription::tr("last %n layer(s) trained", "", mo.freeze.last_layers);
    }
    return {};
}

QString jsonValue(const nlohmann::json &v)
{
    if (v.is_boolean())
        return v.get<bool>() ? PlanDescription::tr("on") : PlanDescription::tr("off");
    if (v.is_string())
        return qs(v.get<std::string>());
    if (v.is_null())
        return PlanDescription::tr("none");
    return qs(v.dump());
}

// Leaves of a JSON object by dotted path; arrays and nulls are leaves.
void flatten(const nlohmann::json &j, const std::string &prefix,
             std::vector<std::pair<std::string, nlohmann::json>> &out)
{
    if (j.is_object()) {
        for (auto it = j.begin(); it != j.end(); ++it)
            flatten(it.value(), prefix.empty() ? it.key() : prefix + "." + it.key(), out);
        return;
    }
    out.emplace_back(prefix, j);
}

} // namespace

QString describeModel(const Plan &plan)
{
    const ModelShape &m = plan.model;
    QString model = !m.display_name.empty() ? qs(m.display_name)
                                            : PlanDescription::tr("custom %1 model")
                                                  .arg(parameterCount(double(countParameters(m).total)));
    const QString method = methodText(plan.training.method);
    return method.isEmpty() ? model : PlanDescription::tr("%1, %2").arg(model, method);
}

QString describeTokens(const Plan &plan)
{
    const QString tokens = PlanDescription::tr("%1 tokens").arg(compactCount(plan.training.seq_len));
    return plan.training.micro_batch > 1 ? PlanDescription::tr("%1 x %2").arg(plan.training.micro_batch).arg(tokens)
                                         : tokens;
}

QString describeDevices(const Plan &plan, const Catalog &catalog)
{
    const DeviceProfile *device = catalog.device(plan.cluster.device);
    const QString name = device ? qs(device->name) : qs(plan.cluster.device);
    const QString devices = PlanDescription::tr("%1 x %2").arg(plan.cluster.world()).arg(name);
    return plan.cluster.nodes > 1 ? PlanDescription::tr("%1 (%2 nodes)").arg(devices).arg(plan.cluster.nodes) : devices;
}

QString describeLayout(const Plan &plan)
{
    const Parallel &pa = plan.parallel;
    QStringList parts;
    if (pa.tp > 1)
        parts << (pa.sp ? PlanDescription::tr("TP %1 + SP") : PlanDescription::tr("TP %1")).arg(pa.tp);
    if (pa.pp > 1) {
        QString pp = PlanDescription::tr("PP %1").arg(pa.pp);
        if (pa.pp_schedule == PpSchedule::Interleaved)
            pp = PlanDescription::tr("%1 interleaved x%2").arg(pp).arg(pa.virtual_stages);
        else if (pa.pp_schedule == PpSchedule::GPipe)
            pp = PlanDescription::tr("%1 GPipe").arg(pp);
        if (pa.customLayout()) // Megatron's uneven first / last stages, MindSpeed's layer list
            pp = PlanDescription::tr("%1 uneven").arg(pp);
        parts << pp;
    }
    if (pa.cp > 1)
        parts << PlanDescription::tr("CP %1").arg(pa.cp);
    if (pa.ep > 1)
        parts << PlanDescription::tr("EP %1").arg(pa.ep);
    // The engine shards the model states over dp x cp.
    if (pa.sharding == Sharding::None) {
        if (pa.dp > 1)
            parts << PlanDescription::tr("DDP dp %1").arg(pa.dp);
    } else if (pa.cp > 1 && pa.dp > 1) {
        parts << PlanDescription::tr("%1 over dp %2 x cp %3").arg(shardingName(pa.sharding)).arg(pa.dp).arg(pa.cp);
    } else if (pa.cp > 1) {
        parts << PlanDescription::tr("%1 over cp %2").arg(shardingName(pa.sharding)).arg(pa.cp);
    } else if (pa.dp > 1) {
        parts << PlanDescription::tr("%1 dp %2").arg(shardingName(pa.sharding)).arg(pa.dp);
    }
    if (parts.isEmpty())
        return plan.parallel.world() > 1 ? PlanDescription::tr("dp %1").arg(pa.dp) : PlanDescription::tr("one device");
    return parts.join(kSeparator);
}

QString describePlan(const Plan &plan, const Catalog &catalog)
{
    return QStringList{describeModel(plan), describeTokens(plan), describeDevices(plan, catalog),
                       describeLayout(plan)}
        .join(kSeparator);
}

QStringList planDifferences(const Plan &plan, const Plan &baseline, const Catalog &catalog)
{
    QStringList out;
    nlohmann::json a = planToJson(plan), b = planToJson(baseline);
    if (a["model"] != b["model"] || a["training"].value("method", nlohmann::json()) !=
                                        b["training"].value("method", nlohmann::json()))
        out << PlanDescription::tr("model %1").arg(describeModel(plan));
    for (nlohmann::json *j : {&a, &b}) {
        j->erase("format");
        j->erase("version");
        j->erase("name");
        j->erase("model");
    }
    // In the order of the plan editor, not of the JSON keys.
    std::vector<std::pair<std::string, nlohmann::json>> left, right;
    for (const char *section : {"training", "precision", "parallel", "memory", "framework", "cluster"}) {
        if (a.contains(section))
            flatten(a[section], section, left);
        if (b.contains(section))
            flatten(b[section], section, right);
        a.erase(section);
        b.erase(section);
    }
    flatten(a, {}, left); // sections a later version adds
    flatten(b, {}, right);
    // The degrees as the layout names them: tp, pp, cp, ep, then dp and its sharding.
    static const std::vector<std::string> order{
        "parallel.tp", "parallel.sp", "parallel.pp", "parallel.pp_schedule", "parallel.virtual_stages",
        "parallel.first_stage_layers", "parallel.last_stage_layers", "parallel.account_for_embedding",
        "parallel.account_for_loss", "parallel.stage_layers",
        "parallel.cp", "parallel.ep", "parallel.dp", "parallel.sharding", "parallel.reshard_after_forward"};
    auto rank = [](const std::string &path) {
        const auto it = std::find(order.begin(), order.end(), path);
        return it == order.end() ? order.size() : size_t(it - order.begin());
    };
    auto isParallel = [](const auto &entry) { return entry.first.rfind("parallel.", 0) == 0; };
    const auto first = std::find_if(left.begin(), left.end(), isParallel);
    const auto last = std::find_if_not(first, left.end(), isParallel);
    std::stable_sort(first, last, [&](const auto &x, const auto &y) { return rank(x.first) < rank(y.first); });
    auto baseValue = [&right](const std::string &path) -> const nlohmann::json * {
        for (const auto &[p, v] : right)
            if (p == path)
                return &v;
        return nullptr;
    };
    bool devicesNamed = false;
    for (const auto &[path, value] : left) {
        const nlohmann::json *before = baseValue(path);
        if (before && *before == value)
            continue;
        if (path == "training.seq_len") {
            out << PlanDescription::tr("sequence %1 tokens").arg(compactCount(plan.training.seq_len));
        } else if (path == "training.micro_batch") {
            out << PlanDescription::tr("micro-batch %1").arg(plan.training.micro_batch);
        } else if (path == "training.grad_accum") {
            out << PlanDescription::tr("accumulation %1").arg(plan.training.grad_accum);
        } else if (path.rfind("training.", 0) == 0) {
            continue; // the method, named with the model
        } else if (path == "parallel.sharding") {
            out << PlanDescription::tr("sharding %1").arg(shardingName(plan.parallel.sharding));
        } else if (path == "parallel.sp") {
            out << (plan.parallel.sp ? PlanDescription::tr("SP on") : PlanDescription::tr("SP off"));
        } else if (path.rfind("cluster.", 0) == 0) {
            if (!devicesNamed)
                out << describeDevices(plan, catalog);
            devicesNamed = true;
        } else {
            // "parallel.tp" -> "tp 4", "memory.offload.optimizer" -> "offload.optimizer on"
            const size_t dot = path.find('.');
            QString key = qs(dot == std::string::npos ? path : path.substr(dot + 1));
            key.replace(QLatin1Char('_'), QLatin1Char(' '));
            out << PlanDescription::tr("%1 %2").arg(key, jsonValue(value));
        }
    }
    // Fields only the baseline has (an optional field the plan dropped).
    for (const auto &[path, value] : right) {
        bool present = false;
        for (const auto &l : left)
            present = present || l.first == path;
        if (!present && path.rfind("training.", 0) != 0) {
            const size_t dot = path.find('.');
            QString key = qs(dot == std::string::npos ? path : path.substr(dot + 1));
            key.replace(QLatin1Char('_'), QLatin1Char(' '));
            out << PlanDescription::tr("%1 as default").arg(key);
        }
    }
    return out;
}

} // namespace shardscope
