#include "cli.h"

#include "core/catalog.h"
#include "core/errors.h"
#include "core/estimate.h"
#include "core/files.h"
#include "core/jsoninput.h"
#include "core/layers.h"
#include "core/optimizers.h"
#include "core/stateaccounting.h"
#include "core/units.h"
#include "shardscope_config.h"
#include "translate_marker.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>

namespace shardscope::cli {

namespace {

// Translated at run time (helpText, context "shardscope-cli"); the language follows the system
// locale or --lang.
const char *kUsage = QT_TRANSLATE_NOOP(
    "shardscope-cli",
    "Usage: shardscope-cli <command> [options]\n"
    "\n"
    "Plans how a transformer is trained on accelerator nodes: per-rank memory, communication,\n"
    "step time.\n"
    "\n"
    "Commands:\n"
    "  estimate PLAN.plan.json [--format table|json] [--hf-config config.json]\n"
    "      Per-rank peak memory by component, the runtime reserve and whether it fits.\n"
    "  report PLAN.plan.json [PLAN.plan.json...] -o REPORT.pdf [--page a4|letter] [--lang en|zh_CN]\n"
    "      A PDF report of one or more plans (runs headless).\n"
    "  search PLAN.plan.json [--top N] [--global-batch N] [--no-offload] [--format table|json]\n"
    "      Every layout of the plan's model, sequence and cluster that fits, fastest first,\n"
    "      and the Pareto front of memory against step time.\n"
    "  compare PLAN.plan.json PLAN.plan.json... [--format table|json]\n"
    "      Per-layer collectives, message sizes, their time on the links, per-rank memory and\n"
    "      step time of several plans side by side.\n"
    "  bench PLAN.plan.json --backend cpu|torch [--device cuda|npu|cpu] [--python PATH] [-o FILE]\n"
    "      Measures the plan's kernels on the attached device beside the prediction.\n"
    "\n"
    "Options:\n"
    "  --help       show this help\n"
    "  --version    show the version\n"
    "  --lang LANG  language of the help and the reports: en or zh_CN (default: the system's)\n"
    "\n"
    "Exit status: 0 success, 2 bad plan or bad arguments (message on stderr), 1 other failure.\n");

std::string usage()
{
    return helpText(kUsage);
}

struct Command
{
    const char *name;
    std::function<int(const std::vector<std::string> &, std::ostream &, std::ostream &)> run;
};

/// The verbs that need Qt, where this program links them (useInProcessReport / Bench).
std::map<std::string, Verb> &registered()
{
    static std::map<std::string, Verb> verbs;
    return verbs;
}

/// A verb this program may not link: runs it where it does, else says which program does.
Command qtVerb(const char *name)
{
    return {
        name, [name](const std::vector<std::string> &args, std::ostream &out, std::ostream &err) {
            const auto it = registered().find(name);
            if (it != registered().end())
                return it->second(args, out, err);
            err << "shardscope-cli " << name << ": this program does not run it (shardscope-cli "
                << "hands it to shardscope-cli-qt)\n";
            return int(ExitFailure);
        }};
}

std::vector<Command> &commands()
{
    static std::vector<Command> list = {
        {"estimate", estimateCommand}, qtVerb("report"), {"search", searchCommand},
        {"compare", compareCommand},   qtVerb("bench"),
    };
    return list;
}

std::string pad(const std::string &s, size_t w, bool right = false)
{
    if (s.size() >= w)
        return s;
    return right ? std::string(w - s.size(), ' ') + s : s + std::string(w - s.size(), ' ');
}

std::string gibgb(double b)
{
    return pad(formatFixed(b / kGiB, 2), 9, true) + " GiB " + pad(formatFixed(b / kGB, 2), 9, true) + " GB";
}

} // namespace

void detail::registerVerb(const char *name, Verb verb)
{
    registered()[name] = verb;
}

bool runsWithoutQt(const std::vector<std::string> &args)
{
    if (args.size() == 1 && (args[0] == "--version" || args[0] == "-V"))
        return true;
    if (args.empty() || (args[0] != "estimate" && args[0] != "search" && args[0] != "compare"))
        return false;
    return std::none_of(args.begin() + 1, args.end(),
                        [](const std::string &a) { return a == "--help" || a == "-h"; });
}

std::string qtProgram(std::vector<std::string> *looked)
{
    const ProgramPlace here = programPlace();
    if (here.program.empty())
        return {};
    namespace fs = std::filesystem;
    const fs::path candidates[] = {
        fs::path(here.program).parent_path() / "shardscope-cli-qt",
        fs::path(here.prefix) / SHARDSCOPE_INSTALL_LIBEXECDIR / "shardscope" / "shardscope-cli-qt",
    };
    for (const fs::path &c : candidates) {
        const std::string path = c.lexically_normal().string();
        if (looked)
            looked->push_back(path);
        std::error_code ec;
        if (fs::is_regular_file(c, ec))
            return path;
    }
    return {};
}

std::string located(const std::string &file, const std::string &message)
{
    return message.rfind(file, 0) == 0 ? message : file + ": " + message;
}

std::string modelName(const Plan &plan)
{
    if (!plan.model.preset.empty())
        return plan.model.preset;
    return plan.model.display_name.empty() ? std::string("custom shape") : plan.model.display_name;
}

const Catalog &catalog(std::ostream &err)
{
    const Catalog &cat = Catalog::builtin();
    static bool reported = false;
    if (!reported) {
        reported = true;
        for (const std::string &w : cat.warnings())
            err << "shardscope-cli: warning: " << w << "\n";
    }
    return cat;
}

Plan readPlan(const std::string &file, std::ostream &err, const std::string &hfConfig)
{
    const Catalog &cat = catalog(err);
    Plan plan;
    if (hfConfig.empty()) {
        plan = parsePlanFile(file, cat);
    } else {
        // The config replaces the plan's model; it is resolved against the working directory,
        // like any path on the command line.
        nlohmann::json j = parseJsonText(readTextFile(file), "");
        if (!j.is_object())
            throw PlanError("plan", "must be a JSON object");
        std::error_code ec;
        const auto abs = std::filesystem::absolute(hfConfig, ec);
        j["model"] = {{"hf_config", ec ? hfConfig : abs.string()}};
        plan = parsePlan(j, cat, std::filesystem::path(file).parent_path().string());
    }
    for (const std::string &w : plan.warnings)
        err << "shardscope-cli: warning: " << file << ": " << w << "\n";
    return plan;
}

std::string estimateTable(const std::string &planText)
{
    return estimateTable(parsePlanText(planText, Catalog::builtin()));
}

std::string estimateTable(const Plan &plan)
{
    const Catalog &cat = Catalog::builtin();
    const Estimate e = estimate(plan, cat);
    const DeviceProfile &dev = *cat.device(plan.cluster.device);
    // Counted over the vocabulary the framework trains (Megatron pads it).
    ModelShape trained = plan.model;
    trained.vocab = e.padded_vocab > 0 ? e.padded_vocab : plan.model.vocab;
    const ParameterCounts pc = countParameters(trained);
    const auto &pa = plan.parallel;
    const auto &pr = plan.precision;
    std::ostringstream o;

    o << "Plan:    " << plan.name << "\n";
    o << "Model:   " << modelName(plan) << ", "
      << formatCount(pc.total) << " parameters (" << plan.model.layers << " layers, hidden "
      << plan.model.hidden << ", " << plan.model.heads << " heads / " << plan.model.kv_heads
      << " KV, FFN " << plan.model.ffn_hidden << " " << toString(plan.model.ffn) << ", vocab "
      << plan.model.vocab;
    if (trained.vocab != plan.model.vocab)
        o << ", padded to " << trained.vocab;
    o << ")\n";
    if (const ModelShape &m = plan.model; m.mla_attention() || m.moe.enabled() || m.qk_norm ||
                                           m.mtp_layers > 0 || m.norm == NormKind::LayerNorm ||
                                           m.linear_bias || m.position_embedding == PositionEmbedding::Learned) {
        o << "Shape:  ";
        if (m.mla_attention())
            o << " MLA (q rank " << m.mla.q_lora_rank << ", kv rank " << m.mla.kv_lora_rank
              << ", q/k head " << m.mla.qk_nope_head_dim << "+" << m.mla.qk_rope_head_dim
              << ", v head " << m.mla.v_head_dim << ");";
        if (m.qk_norm)
            o << " QK norms;";
        if (m.moe.enabled()) {
            o << " MoE " << m.moe.experts << " experts top-" << m.moe.top_k << " of "
              << m.moe.expert_ffn_hidden;
            if (m.moe.shared_experts > 0)
                o << " + " << m.moe.shared_experts << " shared of " << m.moe.shared_expert_ffn_hidden;
            o << " in " << pc.moe_layers << " of " << m.layers << " layers";
            if (m.moe.capacity_factor > 0)
                o << ", capacity factor " << formatFixed(m.moe.capacity_factor, 2);
            else
                o << ", dropless (load " << formatFixed(m.moe.imbalance, 2) << ")";
            o << ", " << toString(m.moe.dispatcher) << " dispatcher"
              << (m.moe.router_fp32 ? ", fp32 router" : "") << ";";
        }
        if (m.mtp_layers > 0)
            o << " " << m.mtp_layers << " MTP module(s);";
        o << " " << toString(m.norm) << (m.linear_bias ? ", linear biases" : "")
          << (m.position_embedding == PositionEmbedding::Learned
                  ? ", learned positions " + std::to_string(m.max_positions)
                  : std::string(", rope"))
          << "\n";
    }
    if (const MethodOptions &mo = plan.training.method; mo.method != TrainingMethod::Full) {
        o << "Method:  " << toString(mo.method);
        if (mo.usesAdapters()) {
            o << " rank " << mo.lora.rank << " on";
            for (const std::string &t : targetNames(mo.lora.targets))
                o << " " << t;
            if (mo.lora.dropout > 0)
                o << ", dropout " << formatFixed(mo.lora.dropout, 2);
        }
        if (mo.method == TrainingMethod::QLoRA)
            o << ", base " << toString(mo.qlora.quant) << (mo.qlora.double_quant ? " (double quant)" : "")
              << ", block " << mo.qlora.block_size;
        if (mo.method == TrainingMethod::Freeze)
            o << ", last " << mo.freeze.last_layers << " layers trained";
        o << "; " << formatCount(trainableParameters(plan)) << " trainable parameters ("
          << formatFixed(100.0 * double(trainableParameters(plan)) / double(pc.total), 3) << "%)\n";
    }
    o << "Layout:  dp " << pa.dp << " x tp " << pa.tp << " x pp " << pa.pp << " x cp " << pa.cp
      << (pa.ep > 1 ? " (ep " + std::to_string(pa.ep) + ")" : "")
      << (pa.etp > 0 ? " (etp " + std::to_string(pa.etp) + ")" : "") << ", sharding "
      << toString(pa.sharding) << (pa.sp ? ", SP" : "") << ", recompute "
      << toString(plan.memory.recompute) << ", " << toString(plan.memory.attention)
      << " attention; " << plan.training.seq_len << " tokens x micro-batch "
      << plan.training.micro_batch << " x " << plan.training.grad_accum << " micro-batches\n";
    if (pa.pp > 1 && pa.customLayout()) {
        // The uneven layer layout (core/layers.h): runs of alike stages as "4 x 14".
        const std::vector<int> counts = stageLayers(plan);
        o << "Stages:  layers per stage ";
        for (size_t i = 0; i < counts.size();) {
            size_t j = i;
            while (j < counts.size() && counts[j] == counts[i])
                ++j;
            o << (i > 0 ? ", " : "") << counts[i];
            if (j - i > 1)
                o << " x " << (j - i);
            i = j;
        }
        o << " (";
        const char *sep = "";
        if (!pa.stage_layers.empty()) {
            o << "stage_layers";
            sep = ", ";
        }
        if (pa.first_stage_layers > 0) {
            o << sep << "first_stage_layers " << pa.first_stage_layers;
            sep = ", ";
        }
        if (pa.last_stage_layers > 0) {
            o << sep << "last_stage_layers " << pa.last_stage_layers;
            sep = ", ";
        }
        if (pa.account_for_embedding) {
            o << sep << "account_for_embedding";
            sep = ", ";
        }
        if (pa.account_for_loss) {
            o << sep << "account_for_loss";
            sep = ", ";
        }
        if (!pa.pipeline_layout.empty())
            o << sep << "pipeline_layout \"" << pa.pipeline_layout << "\"";
        o << ")\n";
    }
    o << "Precision: params " << toString(pr.params) << ", grads " << toString(pr.grads)
      << ", master " << toString(pr.master_weights) << ", " << toString(pr.optimizer) << " states "
      << toString(pr.optimizer_state) << ", compute " << toString(pr.compute) << "; framework "
      << plan.framework << "\n";
    o << "Device:  " << dev.name << ", " << formatGiB(dev.hbm_bytes) << " (" << formatGB(dev.hbm_bytes)
      << ") HBM, " << plan.cluster.devices_per_node << " per node x " << plan.cluster.nodes
      << " node(s)\n\n";

    // The rough model-state accounting people do first (the case's worked answer), then the
    // engine's full accounting.
    const RoughStateAccounting ra = roughStateAccounting(plan, e.memory);
    o << "Rough model-state accounting (parameters + gradients + master weights + optimizer states):\n";
    o << "  " << formatFixed(ra.params_bytes / kGB, 1) << " + " << formatFixed(ra.grads_bytes / kGB, 1)
      << " + " << formatFixed(ra.master_bytes / kGB, 1) << " + "
      << formatFixed(ra.optimizer_bytes / kGB, 1) << " = " << formatGB(ra.total_bytes, 1)
      << " per rank unsharded (" << formatFixed(ra.bytes_per_param, 0) << " B/param)";
    if (ra.nominal_differs)
        o << "; at a nominal " << formatFixed(ra.nominal_parameters / 1e9, 0) << "B parameters: "
          << formatGB(ra.nominal(ra.total_bytes), 0);
    o << "\n";
    if (ra.layout_shards) {
        // The same four states as this layout places them on its fullest rank.
        o << "  with this layout (sharding " << toString(pa.sharding) << " over dp x cp = "
          << pa.dp * pa.cp << ", tp " << pa.tp << ", pp " << pa.pp << "): "
          << formatGB(ra.placed_bytes, 1) << " on the fullest rank";
        if (ra.nominal_differs)
            o << " (nominal: " << formatGB(ra.nominal(ra.placed_bytes), 0) << ")";
        o << "\n";
    }
    if (const MethodOptions &mo = plan.training.method; mo.method != TrainingMethod::Full) {
        o << "  Under " << toString(mo.method) << " only "
          << formatCount((long long)ra.trained_parameters)
          << " parameters are trained: gradients and optimizer states of "
          << formatGB(ra.trained_states_bytes, 1)
          << " at these dtypes, beside the frozen weights (the engine's accounting follows).\n";
    }
    o << "  That count leaves out activations, logits and loss, communication buffers, optimizer\n"
         "  temporaries and the runtime reserve. The full accounting follows.\n\n";

    for (const RankMemory &r : e.memory.ranks) {
        o << "Ranks " << r.rank << "-" << (r.rank + r.count - 1) << " (stage " << r.stage << ", "
          << r.layers << " layers" << (r.has_embedding ? ", embedding" : "") << (r.has_head ? ", head" : "")
          << "): peak in " << phaseKey(r.peak_phase) << "\n";
        o << "  " << pad("component", 26) << pad("at peak", 28) << "   forward   backward  optimizer after step (GiB)\n";
        for (int c = 0; c < kComponentCount; ++c) {
            o << "  " << pad(std::string(componentLabel(Component(c))), 26)
              << gibgb(r.peak().bytes[size_t(c)]);
            for (int p = 0; p < kPhaseCount; ++p)
                o << pad(formatFixed(r.phases[size_t(p)].bytes[size_t(c)] / kGiB, 2), 10, true);
            o << pad(formatFixed(r.after_step.bytes[size_t(c)] / kGiB, 2), 11, true) << "\n";
        }
        o << "  " << pad("peak allocated", 26) << gibgb(r.peak_bytes);
        for (int p = 0; p < kPhaseCount; ++p)
            o << pad(formatFixed(r.phases[size_t(p)].total() / kGiB, 2), 10, true);
        o << pad(formatFixed(r.after_step.total() / kGiB, 2), 11, true) << "\n";
        o << "  " << pad("runtime reserve", 26) << gibgb(r.reserve.total()) << "  (context "
          << formatGiB(r.reserve.context) << ", " << r.reserve.communicators << " communicator(s) "
          << formatGiB(r.reserve.comm_buffers) << ", allocator " << formatGiB(r.reserve.allocator) << ")\n";
        // The per-group HCCL buffers when MindSpeed's options size them (JSON: comm_groups always).
        if (!r.reserve.groups.empty() && plan.memory.hcclOptionsSet()) {
            o << "  " << pad("communication groups", 26);
            for (size_t i = 0; i < r.reserve.groups.size(); ++i)
                o << (i ? ", " : "") << r.reserve.groups[i].group << " " << formatBytes(r.reserve.groups[i].bytes);
            o << "\n";
            o << "    " << explainCommGroups(plan, dev, r.reserve.groups).english() << "\n";
        }
        o << "  " << pad("reserved (allocator)", 26) << gibgb(r.reserved_bytes)
          << "  (the caching allocator replayed on a device with room; first step peak allocated "
          << formatGiB(r.first_step_peak_bytes) << ")\n";
        if (r.oom) {
            o << "  runs out of memory at: " << r.oom_tensor;
            if (r.oom_layer >= 0)
                o << " of layer " << r.oom_layer;
            o << ", " << formatGiB(r.oom_request_bytes) << ", in the " << phaseKey(r.oom_phase) << " of the "
              << (r.oom_step == "setup" ? std::string("model build") : r.oom_step == "first_step" ? std::string("first step") : std::string("steady step"))
              << " (after the allocator released its cache and retried)\n";
        }
        const double need = r.peak_bytes + r.reserve.total();
        o << "  " << pad("total on device", 26) << gibgb(need) << "\n";
        o << "  " << pad("HBM capacity", 26) << gibgb(e.memory.hbm_bytes) << "\n";
        if (need <= e.memory.hbm_bytes)
            o << "  fits, " << formatGiB(e.memory.hbm_bytes - need) << " headroom\n";
        else
            o << "  DOES NOT FIT: over by " << formatGiB(need - e.memory.hbm_bytes) << "\n";
        o << "  How the " << phaseKey(r.peak_phase) << " peak is made up:\n";
        const MemoryExplanation ex = explainMemory(plan, cat, r, r.peak_phase);
        for (int c = 0; c < kComponentCount; ++c) {
            if (r.peak().bytes[size_t(c)] <= 0)
                continue;
            o << "    " << componentLabel(Component(c)) << ": " << ex[size_t(c)].formula.english() << "\n";
            if (!ex[size_t(c)].assumptions.empty())
                o << "      (" << ex[size_t(c)].assumptions.english() << ")\n";
        }
        o << "\n";
    }
    if (!e.communication.empty()) {
        o << "Communication per step (one rank):\n";
        o << "  " << pad("collective", 16) << pad("group", 10) << pad("message", 14) << pad("count", 8)
          << pad("time each", 12) << "exposed/step\n";
        for (const Collective &c : e.communication) {
            o << "  " << pad(c.collective, 16) << pad(c.group + " x" + std::to_string(c.group_size), 10)
              << pad(formatBytes(c.bytes), 14) << pad(formatFixed(c.count_per_step, 0), 8)
              << pad(formatSeconds(c.time_s), 12) << formatSeconds(c.exposed_time_s) << "\n";
        }
        o << "\n";
    }
    if (e.step.step_s > 0) {
        o << "Step: " << formatSeconds(e.step.step_s) << " (compute " << formatSeconds(e.step.compute_s)
          << ", exposed communication " << formatSeconds(e.step.communication_s) << ", bubble "
          << formatSeconds(e.step.bubble_s) << ", offload " << formatSeconds(e.step.offload_s) << "); "
          << formatFixed(e.step.tokens_per_s, 0) << " tokens/s, MFU " << formatFixed(100 * e.step.mfu, 1)
          << "%\n\n";
    }
    const HostMemory &host = e.memory.host;
    if (host.offloads()) {
        o << "Host memory for the offload (node " << host.fullest_node << ", its "
          << plan.cluster.devices_per_node << (plan.cluster.devices_per_node == 1 ? " rank): " : " ranks together): ") << formatGiB(host.bytesPerNode())
          << " (pinned " << formatGiB(host.pinned_per_node) << ", pageable "
          << formatGiB(host.pageable_per_node) << ") of ";
        if (host.capacity_bytes > 0)
            o << formatGiB(host.capacity_bytes) << (host.fits ? ": fits" : ": DOES NOT FIT") << "\n\n";
        else
            o << "an unknown host memory (not checked; set cluster.host_memory_bytes)\n\n";
    }
    o << "Verdict: " << (e.memory.fits ? "FITS" : "DOES NOT FIT") << " on " << dev.name
      << "; peak rank " << e.memory.peak_rank << " needs "
      << formatGiB(e.memory.peak_bytes) << " allocated + reserve, of " << formatGiB(e.memory.hbm_bytes)
      << " HBM" << (e.memory.hbm_fits && !host.fits ? "; the offloaded states do not fit the host memory" : "")
      << ".\n";
    o << "Units: GiB = 2^30 bytes (what allocators report), GB = 10^9 bytes (datasheets).\n";
    return o.str();
}

int estimateCommand(const std::vector<std::string> &args, std::ostream &out, std::ostream &err)
{
    std::string file;
    std::string format = "table";
    std::string hfConfig;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string &a = args[i];
        if (a == "--hf-config") {
            if (i + 1 >= args.size()) {
                err << "shardscope-cli estimate: --hf-config needs a config.json\n";
                return ExitBadInput;
            }
            hfConfig = args[++i];
        } else if (a.rfind("--hf-config=", 0) == 0) {
            hfConfig = a.substr(12);
        } else if (a == "--format") {
            if (i + 1 >= args.size()) {
                err << "shardscope-cli estimate: --format needs a value (table or json)\n";
                return ExitBadInput;
            }
            format = args[++i];
        } else if (a.rfind("--format=", 0) == 0) {
            format = a.substr(9);
        } else if (a == "--help" || a == "-h") {
            out << helpText(QT_TRANSLATE_NOOP("shardscope-cli",
                                              "Usage: shardscope-cli estimate PLAN.plan.json "
                                              "[--format table|json] [--hf-config config.json]\n"));
            return ExitOk;
        } else if (!a.empty() && a[0] == '-') {
            err << "shardscope-cli estimate: unknown option " << a << "\n";
            return ExitBadInput;
        } else if (file.empty()) {
            file = a;
        } else {
            err << "shardscope-cli estimate: one plan file expected, got also " << a << "\n";
            return ExitBadInput;
        }
    }
    if (format != "table" && format != "json") {
        err << "shardscope-cli estimate: --format must be table or json, not " << format << "\n";
        return ExitBadInput;
    }
    if (file.empty()) {
        err << "shardscope-cli estimate: missing PLAN.plan.json\n";
        return ExitBadInput;
    }
    try {
        const Plan plan = readPlan(file, err, hfConfig);
        if (format == "json")
            out << estimateToJson(plan, estimate(plan, Catalog::builtin())).dump(2) << "\n";
        else
            out << estimateTable(plan);
    } catch (const PlanError &e) {
        err << "shardscope-cli: error: " << located(file, e.what()) << "\n";
        return ExitBadInput;
    }
    return ExitOk;
}

int run(const std::vector<std::string> &args, std::ostream &out, std::ostream &err)
{
    if (args.empty()) {
        err << usage();
        return ExitBadInput;
    }
    const std::string &verb = args[0];
    if (verb == "--help" || verb == "-h" || verb == "help") {
        out << usage();
        return ExitOk;
    }
    if (verb == "--version" || verb == "-V") {
        out << "shardscope-cli " << SHARDSCOPE_VERSION << "\n";
        const std::string data = locateDataDir();
        out << "data directory: " << (data.empty() ? "(none found; set SHARDSCOPE_DATA_DIR)" : data)
            << "\n";
        return ExitOk;
    }
    for (const Command &c : commands()) {
        if (verb == c.name) {
            try {
                return c.run(std::vector<std::string>(args.begin() + 1, args.end()), out, err);
            } catch (const PlanError &e) {
                err << "shardscope-cli: error: " << e.what() << "\n";
                return ExitBadInput;
            } catch (const std::exception &e) {
                err << "shardscope-cli: internal error: " << e.what() << "\n";
                return ExitFailure;
            }
        }
    }
    err << "shardscope-cli: unknown command \"" << verb << "\"\n\n" << usage();
    return ExitBadInput;
}

} // namespace shardscope::cli
