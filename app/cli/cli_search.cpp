// `shardscope-cli search` and `shardscope-cli compare`: the layout search and a side-by-side
// comparison of plans (per-layer collectives, their time on the cluster's links, per-rank
// memory and step time).
#include "cli.h"
#include "core/catalog.h"
#include "core/comm.h"
#include "core/compute.h"
#include "core/errors.h"
#include "core/estimate.h"
#include "core/files.h"
#include "core/search.h"
#include "core/units.h"
#include "translate_marker.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace shardscope::cli {

namespace {

using nlohmann::json;

std::string padTo(const std::string &s, size_t w, bool right = false)
{
    if (s.size() >= w)
        return s;
    return right ? std::string(w - s.size(), ' ') + s : s + std::string(w - s.size(), ' ');
}

std::string layoutText(const Plan &p)
{
    const Parallel &pa = p.parallel;
    std::ostringstream o;
    o << "dp" << pa.dp << " tp" << pa.tp << " pp" << pa.pp << " cp" << pa.cp;
    if (pa.cp_algo == CpAlgo::Ulysses)
        o << "u";
    else if (pa.cp_algo == CpAlgo::Hybrid)
        o << "h" << pa.ulysses_degree;
    if (pa.ep > 1)
        o << " ep" << pa.ep;
    if (pa.etp > 0 && pa.etp != pa.tp)
        o << " etp" << pa.etp;
    if (pa.pp_schedule == PpSchedule::Interleaved)
        o << " v" << pa.virtual_stages;
    if (pa.first_stage_layers > 0 || pa.last_stage_layers > 0)
        o << " L" << pa.first_stage_layers << "/" << pa.last_stage_layers;
    o << " " << toString(pa.sharding);
    if (pa.dp_shard > 0)
        o << "/" << pa.dp_shard;
    o << (pa.sp ? " sp" : "") << " rc:" << toString(p.memory.recompute);
    if (p.memory.recompute == Recompute::Full && p.memory.recompute_method == RecomputeMethod::Block)
        o << "/" << p.memory.recompute_num_layers;
    if (p.memory.recompute_activation_function)
        o << "+act";
    if (p.memory.recompute_norm)
        o << "+norm";
    if (p.memory.swap_attention)
        o << " swap";
    const Offload &off = p.memory.offload;
    if (off.optimizer || off.params || off.grads || off.activations) {
        o << " off:";
        if (off.optimizer)
            o << "O";
        if (off.params)
            o << "P";
        if (off.grads)
            o << "G";
        if (off.activations)
            o << "A";
    }
    o << " mb" << p.training.micro_batch << "x" << p.training.grad_accum;
    return o.str();
}

json resultJson(const SearchResult &r)
{
    const json pj = planToJson(r.plan);
    return {{"layout", layoutText(r.plan)},
            {"parallel", pj["parallel"]},
            {"training", pj["training"]},
            {"memory", pj["memory"]},
            {"peak_bytes", r.peak_bytes},
            {"required_bytes", r.required_bytes},
            {"step_s", r.step_s},
            {"compute_s", r.step.compute_s},
            {"communication_s", r.step.communication_s},
            {"bubble_s", r.step.bubble_s},
            {"offload_s", r.step.offload_s},
            {"tokens_per_s", r.tokens_per_s},
            {"mfu", r.mfu},
            {"hfu", r.step.hfu},
            {"pareto", r.pareto}};
}

void resultRows(std::ostream &o, const std::vector<SearchResult> &rs)
{
    o << "  " << padTo("#", 4) << padTo("layout", 58) << padTo("memory", 11, true)
      << padTo("step", 11, true) << padTo("comm", 11, true) << padTo("bubble", 11, true)
      << padTo("tokens/s", 11, true) << padTo("MFU", 7, true) << "\n";
    int i = 0;
    for (const SearchResult &r : rs) {
        o << "  " << padTo(std::to_string(++i), 4)
          << padTo(layoutText(r.plan) + (r.pareto ? " *" : ""), 58)
          << padTo(formatFixed(r.required_bytes / kGiB, 1) + " GiB", 11, true)
          << padTo(formatSeconds(r.step_s), 11, true)
          << padTo(formatSeconds(r.step.communication_s), 11, true)
          << padTo(formatSeconds(r.step.bubble_s), 11, true)
          << padTo(formatFixed(r.tokens_per_s, 0), 11, true)
          << padTo(formatFixed(100 * r.mfu, 1) + "%", 7, true) << "\n";
    }
}

/// Parses `--name value` / `--name=value`; returns false (message on err) on a bad option.
struct Options
{
    std::vector<std::string> files;
    std::string format = "table";
    int top = 20;
    int64_t globalBatch = 0;
    int64_t globalTokens = 0;
    bool offload = true;
    bool countFitting = false; ///< --count-fitting: estimate every layout, count every fit
    int64_t tp = 0, pp = 0, cp = 0, maxDevices = 0;
    double minHeadroomGiB = 0;
    uint8_t recompute = 0b111;
    uint8_t offloadSets = 0b111;
    uint32_t axes = kSearchAllAxes;
    int64_t minCpTokens = 1024;
};

/// A comma-separated list of names as a bit set (bit i for names[i]); false on an unknown name.
bool nameSet(const std::string &value, const std::vector<std::string> &names, uint8_t &bits)
{
    bits = 0;
    std::stringstream in(value);
    std::string item;
    while (std::getline(in, item, ',')) {
        const auto it = std::find(names.begin(), names.end(), item);
        if (it == names.end())
            return false;
        bits |= uint8_t(1u << (it - names.begin()));
    }
    return bits != 0;
}

bool parseOptions(const char *verb, const std::vector<std::string> &args, Options &o,
                  bool allowSearch, std::ostream &err)
{
    for (size_t i = 0; i < args.size(); ++i) {
        std::string a = args[i];
        std::string value;
        const auto eq = a.find('=');
        if (a.rfind("--", 0) == 0 && eq != std::string::npos) {
            value = a.substr(eq + 1);
            a = a.substr(0, eq);
        }
        auto need = [&](const char *what) {
            if (!value.empty())
                return true;
            if (i + 1 >= args.size()) {
                err << "shardscope-cli " << verb << ": " << a << " needs a value (" << what
                    << ")\n";
                return false;
            }
            value = args[++i];
            return true;
        };
        auto integer = [&](const char *field, int64_t lo, int64_t hi, int64_t &outV) {
            try {
                size_t used = 0;
                const long long v = std::stoll(value, &used);
                if (used != value.size() || v < lo || v > hi)
                    throw std::invalid_argument(field);
                outV = v;
                return true;
            } catch (const std::exception &) {
                err << "shardscope-cli " << verb << ": " << field << " must be an integer between "
                    << lo << " and " << hi << ", got \"" << value << "\"\n";
                return false;
            }
        };
        if (a == "--format") {
            if (!need("table or json"))
                return false;
            o.format = value;
            if (o.format != "table" && o.format != "json") {
                err << "shardscope-cli " << verb << ": --format must be table or json, not "
                    << value << "\n";
                return false;
            }
        } else if (allowSearch && a == "--top") {
            int64_t v = 0;
            if (!need("a count") || !integer("--top", 1, 100000, v))
                return false;
            o.top = int(v);
        } else if (allowSearch && a == "--global-batch") {
            if (!need("sequences per step") ||
                !integer("--global-batch", 1, int64_t(1) << 40, o.globalBatch))
                return false;
        } else if (allowSearch && a == "--global-tokens") {
            if (!need("tokens per step") ||
                !integer("--global-tokens", 1, int64_t(1) << 50, o.globalTokens))
                return false;
        } else if (allowSearch && (a == "--tp" || a == "--pp" || a == "--cp" ||
                                   a == "--max-devices")) {
            int64_t &target = a == "--tp" ? o.tp : a == "--pp" ? o.pp : a == "--cp" ? o.cp : o.maxDevices;
            if (!need("a degree") || !integer(a.c_str(), 1, 1 << 20, target))
                return false;
        } else if (allowSearch && a == "--min-headroom") {
            if (!need("GiB"))
                return false;
            try {
                size_t used = 0;
                o.minHeadroomGiB = std::stod(value, &used);
                if (used != value.size() || !(o.minHeadroomGiB >= 0 && o.minHeadroomGiB <= 1e6))
                    throw std::invalid_argument("--min-headroom");
            } catch (const std::exception &) {
                err << "shardscope-cli " << verb
                    << ": --min-headroom must be a number of GiB between 0 and 1e6, got \"" << value
                    << "\"\n";
                return false;
            }
        } else if (allowSearch && a == "--recompute") {
            if (!need("none,selective,full") ||
                !nameSet(value, {"none", "selective", "full"}, o.recompute)) {
                if (!value.empty())
                    err << "shardscope-cli " << verb
                        << ": --recompute takes a list of none, selective, full, got \"" << value
                        << "\"\n";
                return false;
            }
        } else if (allowSearch && a == "--offload") {
            if (!need("optimizer,full,activations"))
                return false;
            if (value == "none") {
                o.offload = false;
            } else if (!nameSet(value, {"optimizer", "full", "activations"}, o.offloadSets)) {
                err << "shardscope-cli " << verb
                    << ": --offload takes none or a list of optimizer, full, activations, got \""
                    << value << "\"\n";
                return false;
            }
        } else if (allowSearch && a == "--axes") {
            if (!need("all, none or a list of etp,cp-algo,hsdp,recompute-block,uneven,swap,ms-recompute"))
                return false;
            uint8_t bits = 0;
            if (value == "all") {
                o.axes = kSearchAllAxes;
            } else if (value == "none") {
                o.axes = 0;
            } else if (nameSet(value, {"etp", "cp-algo", "hsdp", "recompute-block", "uneven", "swap", "ms-recompute"}, bits)) {
                o.axes = bits;
            } else {
                err << "shardscope-cli " << verb
                    << ": --axes takes all, none or a list of etp, cp-algo, hsdp, recompute-block, "
                       "uneven, swap, ms-recompute, got \""
                    << value << "\"\n";
                return false;
            }
        } else if (allowSearch && a == "--min-cp-tokens") {
            if (!need("tokens per CP rank") || !integer("--min-cp-tokens", 0, int64_t(1) << 40, o.minCpTokens))
                return false;
        } else if (allowSearch && a == "--no-offload") {
            o.offload = false;
        } else if (allowSearch && a == "--count-fitting") {
            o.countFitting = true;
        } else if (!a.empty() && a[0] == '-') {
            err << "shardscope-cli " << verb << ": unknown option " << a << "\n";
            return false;
        } else {
            o.files.push_back(a);
        }
    }
    return true;
}

} // namespace

int searchCommand(const std::vector<std::string> &args, std::ostream &out, std::ostream &err)
{
    if (std::find(args.begin(), args.end(), "--help") != args.end()) {
        out << helpText(QT_TRANSLATE_NOOP("shardscope-cli",
                                          "Usage: shardscope-cli search PLAN.plan.json [--top N] "
                                          "[--global-batch N | --global-tokens N]\n"
                                          "                             [--tp N] [--pp N] [--cp N] "
                                          "[--max-devices N] [--min-headroom GIB]\n"
                                          "                             [--recompute LIST] "
                                          "[--offload none|LIST] [--no-offload]\n"
                                          "                             [--axes all|none|LIST] "
                                          "[--min-cp-tokens N] [--count-fitting]\n"
                                          "                             [--format table|json]\n"));
        return ExitOk;
    }
    Options o;
    if (!parseOptions("search", args, o, true, err))
        return ExitBadInput;
    if (o.files.size() != 1) {
        err << "shardscope-cli search: "
            << (o.files.empty() ? "missing PLAN.plan.json" : "one plan file expected") << "\n";
        return ExitBadInput;
    }
    if (o.globalBatch > 0 && o.globalTokens > 0) {
        err << "shardscope-cli search: --global-batch and --global-tokens exclude each other\n";
        return ExitBadInput;
    }
    const std::string &file = o.files.front();
    try {
        const Catalog &cat = catalog(err);
        SearchRequest req;
        req.base = readPlan(file, err);
        req.top = o.top;
        req.global_batch = o.globalBatch;
        if (o.globalTokens > 0)
            req.global_batch = std::max<int64_t>(1, o.globalTokens / req.base.training.seq_len);
        req.allow_offload = o.offload;
        req.fixed_tp = int(o.tp);
        req.fixed_pp = int(o.pp);
        req.fixed_cp = int(o.cp);
        req.max_devices = int(o.maxDevices);
        req.min_headroom_bytes = o.minHeadroomGiB * kGiB;
        req.allowed_recompute = o.recompute;
        req.allowed_offload = o.offloadSets;
        req.axes = o.axes;
        req.min_tokens_per_cp_rank = o.minCpTokens;
        req.count_all_fitting = o.countFitting;
        const SearchOutcome res = searchLayouts(req, cat);
        const double rate = res.seconds > 0 ? double(res.evaluated) / res.seconds : 0.0;
        const int64_t global = req.global_batch > 0
                                   ? req.global_batch
                                   : int64_t(req.base.parallel.dp) * req.base.training.micro_batch *
                                         req.base.training.grad_accum;
        if (o.format == "json") {
            json j;
            j["plan"] = req.base.name;
            j["global_batch"] = global;
            j["constraints"] = {{"tp", o.tp},
                                {"pp", o.pp},
                                {"cp", o.cp},
                                {"max_devices", o.maxDevices},
                                {"min_headroom_gib", o.minHeadroomGiB},
                                {"recompute", o.recompute},
                                {"offload", o.offload ? o.offloadSets : 0},
                                {"axes", o.axes},
                                {"min_cp_tokens", o.minCpTokens}};
            j["evaluated"] = res.evaluated;
            j["estimated"] = res.estimated;
            j["fitting"] = res.fitting;
            j["fitting_complete"] = res.fitting_complete;
            j["replayed"] = res.replayed;
            j["rejected_by_allocator"] = res.rejected_by_allocator;
            j["seconds"] = res.seconds;
            j["evaluations_per_s"] = rate;
            j["ranked"] = json::array();
            for (const SearchResult &r : res.ranked)
                j["ranked"].push_back(resultJson(r));
            j["pareto"] = json::array();
            for (const SearchResult &r : res.pareto)
                j["pareto"].push_back(resultJson(r));
            out << j.dump(2) << "\n";
            return ExitOk;
        }
        const Plan &b = req.base;
        out << "Search: " << b.name << "\n";
        out << "Model " << modelName(b) << ", "
            << b.training.seq_len << " tokens per sequence, global batch " << global
            << " sequences, " << searchCluster(b.cluster, req.max_devices).nodes << " x "
            << searchCluster(b.cluster, req.max_devices).devices_per_node << " "
            << b.cluster.device << ", framework " << b.framework << "\n";
        if (o.tp || o.pp || o.cp || o.maxDevices || o.minHeadroomGiB > 0 || o.recompute != 0b111 ||
            (o.offload && o.offloadSets != 0b111)) {
            out << "Constraints:";
            if (o.tp)
                out << " tp " << o.tp;
            if (o.pp)
                out << " pp " << o.pp;
            if (o.cp)
                out << " cp " << o.cp;
            if (o.maxDevices)
                out << " at most " << o.maxDevices << " devices";
            if (o.minHeadroomGiB > 0)
                out << " " << formatFixed(o.minHeadroomGiB, 1) << " GiB kept free";
            if (o.recompute != 0b111)
                out << " recompute mask " << int(o.recompute);
            if (o.offload && o.offloadSets != 0b111)
                out << " offload mask " << int(o.offloadSets);
            out << "\n";
        }
        out << res.evaluated << " layouts evaluated in " << formatSeconds(res.seconds) << " ("
            << formatFixed(rate / 1000.0, 0) << "k/s), " << res.estimated;
        if (res.fitting_complete)
            out << " estimated (the others break a rule or cannot fit by their memory floor), " << res.fitting
                << " within the allocated bound";
        else
            out << " estimated (the others break a rule, cannot fit, or cannot reach the ranking or the "
                   "Pareto front by bounds of their memory and step time), "
                << res.fitting << " of those within the allocated bound (--count-fitting counts every fit)";
        out << "; the allocator replayed on " << res.replayed << ", " << res.rejected_by_allocator
            << " of them run out of memory.\n\n";
        if (res.ranked.empty()) {
            out << "No layout fits.\n";
            return ExitOk;
        }
        out << "Fastest layouts (memory = peak allocated + runtime reserve on the worst rank; * = "
               "on the "
               "Pareto front):\n";
        resultRows(out, res.ranked);
        out << "\nPareto front, least memory first (no layout is both smaller and faster):\n";
        resultRows(out, res.pareto);
        out << "\nLayout: dp/tp/pp/cp degrees (cp..u Ulysses, cp..hN hybrid with Ulysses degree N), ep "
               "and etp, v virtual stages, L first/last stage layers (uneven), sharding (/N: HSDP "
               "shard group), sp, recompute (full/N: Megatron's block method over N layers per "
               "chunk; +act / +norm: MindSpeed's activation-function / norm recompute; swap: MindSpeed's "
               "swap-attention), offload (O optimizer, P params, G grads, A "
               "activations), micro-batch x "
               "micro-batches.\n";
    } catch (const PlanError &e) {
        err << "shardscope-cli: error: " << located(file, e.what()) << "\n";
        return ExitBadInput;
    }
    return ExitOk;
}

int compareCommand(const std::vector<std::string> &args, std::ostream &out, std::ostream &err)
{
    if (std::find(args.begin(), args.end(), "--help") != args.end()) {
        out << helpText(QT_TRANSLATE_NOOP("shardscope-cli",
                                          "Usage: shardscope-cli compare PLAN.plan.json "
                                          "PLAN.plan.json... [--format table|json]\n"));
        return ExitOk;
    }
    Options o;
    if (!parseOptions("compare", args, o, false, err))
        return ExitBadInput;
    if (o.files.size() < 2) {
        err << "shardscope-cli compare: at least two plan files expected\n";
        return ExitBadInput;
    }
    struct Row
    {
        Plan plan;
        Estimate est;
        std::vector<CommItem> items;
        int layers = 0;
    };
    std::vector<Row> rows;
    const Catalog &cat = catalog(err);
    for (const std::string &file : o.files) {
        try {
            Row r;
            r.plan = readPlan(file, err);
            r.est = estimate(r.plan, cat);
            const DeviceProfile &dev = *cat.device(r.plan.cluster.device);
            const FrameworkProfile &fw = *cat.framework(r.plan.framework);
            const ComputeEstimate ce =
                estimateCompute(r.plan, computeProfile(dev, fw, r.plan.precision.compute));
            struct Sink final : CommSink
            {
                std::vector<CommItem> *v;
                void add(const CommItem &it) override { v->push_back(it); }
            } sink;
            sink.v = &r.items;
            forEachCollective(r.plan, dev, fw, ce, sink);
            r.layers = ce.layers;
            rows.push_back(std::move(r));
        } catch (const PlanError &e) {
            err << "shardscope-cli: error: " << located(file, e.what()) << "\n";
            return ExitBadInput;
        }
    }

    auto required = [](const Estimate &e) { return worstRankBytes(e.memory); };

    if (o.format == "json") {
        json j = json::array();
        for (const Row &r : rows) {
            json cols = json::array();
            for (const CommItem &it : r.items) {
                cols.push_back({{"collective", std::string(collectiveKey(it.kind))},
                                {"group", std::string(groupKey(it.group))},
                                {"group_size", it.group_size},
                                {"bytes", it.bytes},
                                {"per_layer", it.per_layer},
                                {"count_per_layer", it.per_layer_count},
                                {"count_per_step", it.count},
                                {"time_s", it.time_s},
                                {"exposed_time_s", it.exposed_s},
                                {"phase", std::string(commPhaseKey(it.phase))},
                                {"note", it.note}});
            }
            j.push_back({{"plan", r.plan.name},
                         {"layout", layoutText(r.plan)},
                         {"micro_batch", r.plan.training.micro_batch},
                         {"fits", r.est.memory.fits},
                         {"peak_bytes", r.est.memory.peak_bytes},
                         {"required_bytes", required(r.est)},
                         {"hbm_bytes", r.est.memory.hbm_bytes},
                         {"collectives", cols},
                         {"step", estimateToJson(r.plan, r.est)["step"]}});
        }
        out << json({{"plans", j}}).dump(2) << "\n";
        return ExitOk;
    }

    for (const Row &r : rows) {
        const Plan &p = r.plan;
        const DeviceProfile &dev = *cat.device(p.cluster.device);
        out << p.name << "\n  " << layoutText(p) << "; " << p.training.seq_len
            << " tokens x micro-batch " << p.training.micro_batch << "; " << dev.name << " ("
            << dev.intra_node.kind << " intra-node, " << dev.inter_node.kind << " inter-node)\n";
        out << "  memory: peak " << formatGiB(r.est.memory.peak_bytes)
            << " + reserve = " << formatGiB(required(r.est)) << " of "
            << formatGiB(r.est.memory.hbm_bytes) << " -> "
            << (r.est.memory.fits ? "fits" : "DOES NOT FIT") << "\n";
        if (r.items.empty()) {
            out << "  no collectives\n";
        } else {
            out << "  " << padTo("collective", 16) << padTo("group", 8)
                << padTo("message", 12, true) << padTo("per layer", 11, true)
                << padTo("per step", 10, true) << padTo("time each", 12, true)
                << padTo("exposed/step", 14, true) << "  what\n";
            // Whole counts as they are; a fraction (recomputed MoE layers in proportion) kept.
            auto countText = [](double n) { return formatFixed(n, std::floor(n) == n ? 0 : 2); };
            for (const CommItem &it : r.items) {
                out << "  " << padTo(std::string(collectiveKey(it.kind)), 16)
                    << padTo(std::string(groupKey(it.group)) + " x" + std::to_string(it.group_size),
                             8)
                    << padTo(formatBytes(it.bytes), 12, true)
                    << padTo(it.per_layer ? countText(it.per_layer_count) : std::string("-"), 11, true)
                    << padTo(countText(it.count), 10, true)
                    << padTo(formatSeconds(it.time_s), 12, true)
                    << padTo(formatSeconds(it.exposed_s), 14, true) << "  " << it.note << "\n";
            }
        }
        const StepEstimate &s = r.est.step;
        out << "  step " << formatSeconds(s.step_s) << " = compute " << formatSeconds(s.compute_s)
            << " + exposed communication " << formatSeconds(s.communication_s) << " + bubble "
            << formatSeconds(s.bubble_s) << " + offload " << formatSeconds(s.offload_s) << "; "
            << formatFixed(s.tokens_per_s, 0) << " tokens/s, MFU " << formatFixed(100 * s.mfu, 1)
            << "%\n\n";
    }
    out << "Summary\n  " << padTo("plan", 84) << padTo("memory", 12, true) << padTo("fits", 6, true)
        << padTo("step", 11, true) << padTo("exposed comm", 14, true) << padTo("tokens/s", 11, true)
        << "\n";
    for (const Row &r : rows) {
        out << "  " << padTo(r.plan.name.substr(0, 82), 84)
            << padTo(formatFixed(required(r.est) / kGiB, 1) + " GiB", 12, true)
            << padTo(r.est.memory.fits ? "yes" : "no", 6, true)
            << padTo(formatSeconds(r.est.step.step_s), 11, true)
            << padTo(formatSeconds(r.est.step.communication_s), 14, true)
            << padTo(formatFixed(r.est.step.tokens_per_s, 0), 11, true) << "\n";
    }
    return ExitOk;
}

} // namespace shardscope::cli
