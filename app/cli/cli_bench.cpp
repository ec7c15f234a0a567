// shardscope-cli bench: runs a plan's kernels on the attached device through the runner and
// prints measured beside predicted; imports nccl-tests / hccl_test output and profiler traces.
#include "cli.h"
#include "core/catalog.h"
#include "core/errors.h"
#include "core/estimate.h"
#include "core/files.h"
#include "core/measurement.h"
#include "core/units.h"
#include "core/workload.h"
#include "runner/benchmarkrunner.h"
#include "runner/importers.h"

#include <QCoreApplication>
#include <cmath>
#include <iomanip>
#include <memory>
#include <sstream>

namespace shardscope::cli {

namespace {

const char *kBenchUsage = QT_TRANSLATE_NOOP(
    "shardscope-cli",
    "Usage: shardscope-cli bench PLAN.plan.json [options]\n"
    "\n"
    "Runs the kernels of one training step of the plan (rank-local GEMMs, attention,\n"
    "memory-bound ops, collectives) and a memory probe on the attached device, and prints\n"
    "measured beside predicted.\n"
    "\n"
    "  --backend cpu|torch     native CPU kernels, or the PyTorch worker (default cpu)\n"
    "  --device cuda|npu|cpu   device of the torch backend (default cpu)\n"
    "  --python PATH           interpreter of the torch worker (default /usr/bin/python3)\n"
    "  --worker PATH           worker script (default: the installed shardscope_worker.py)\n"
    "  --nproc N               worker processes on this node, >= 2 for collectives (default 1)\n"
    "  --launcher ARGS         run the worker through torchrun with these arguments (several\n"
    "                          nodes), e.g. \"--nnodes 2 --rdzv-endpoint host:29500\"\n"
    "  --max-tokens N          cap the tokens per kernel (default 256 on a CPU, none otherwise)\n"
    "  --probe-tokens N        cap the memory probe's sequence (default 256 on a CPU)\n"
    "  --no-probe              skip the memory probe\n"
    "  --snapshot FILE         cuda / npu: record the probe's steady step as a memory snapshot\n"
    "                          (JSON; the workbench's Memory over the step overlays it)\n"
    "  --no-collectives        skip the collectives\n"
    "  --warmup N, --repeats N timing (default 2 and 5)\n"
    "  --timeout SECONDS       longest silence of the worker (default 300)\n"
    "  --gemm MxNxK[:dtype]    also time this GEMM (repeatable), e.g. 8192x8192x8192:bf16\n"
    "  --reference             time plain torch.matmul beside each GEMM (torch backend)\n"
    "  --list                  print the kernel list and stop\n"
    "  --import FILE           show nccl-tests / hccl_test output or a profiler trace (Chrome\n"
    "                          JSON) beside the plan's estimate; runs nothing unless --backend\n"
    "  --ranks N               ranks of an imported hccl_test run (for busbw)\n"
    "  -o, --output FILE       write the results JSON\n"
    "  --profile FILE          write the calibrated device profile JSON\n"
    "  --format table|json     output on stdout (default table)\n");

std::string pad(const std::string &s, size_t w, bool right = false)
{
    if (s.size() >= w)
        return s;
    return right ? std::string(w - s.size(), ' ') + s : s + std::string(w - s.size(), ' ');
}

std::string rate(double v, const char *unit)
{
    if (v <= 0)
        return "-";
    const char *pre[] = {"", "K", "M", "G", "T", "P"};
    int i = 0;
    while (v >= 1000 && i < 5) {
        v /= 1000;
        ++i;
    }
    return formatFixed(v, v < 10 ? 2 : 1) + " " + pre[i] + unit;
}

std::string shape(const Kernel &k)
{
    switch (k.kind) {
    case KernelKind::Gemm:
        return std::to_string(k.m) + "x" + std::to_string(k.n) + "x" + std::to_string(k.k) + " " +
               k.layout;
    case KernelKind::Attention:
        return "b" + std::to_string(k.batch) + " h" + std::to_string(k.heads) + "/" +
               std::to_string(k.kv_heads) + " s" + std::to_string(k.seq_q) + " d" +
               std::to_string(k.head_dim);
    case KernelKind::Elementwise:
        return std::to_string(k.elements) + " el";
    case KernelKind::Collective:
        return k.group + " x" + std::to_string(k.group_size) + " " + formatBytes(k.bytes);
    }
    return {};
}

bool parseGemm(const std::string &spec, Kernel &k)
{
    std::string dims = spec, dt = "bf16";
    if (auto c = spec.find(':'); c != std::string::npos) {
        dims = spec.substr(0, c);
        dt = spec.substr(c + 1);
    }
    long long m = 0, n = 0, kk = 0;
    char x1 = 0, x2 = 0;
    std::istringstream in(dims);
    if (!(in >> m >> x1 >> n >> x2 >> kk) || x1 != 'x' || x2 != 'x' || m <= 0 || n <= 0 || kk <= 0)
        return false;
    // Each dimension at most 2^20 and the three operands at most 2^36 elements (128 GiB in
    // bf16): every product below stays far inside int64 and double's exact range.
    constexpr long long kMaxDim = 1 << 20;
    if (m > kMaxDim || n > kMaxDim || kk > kMaxDim || !in.eof())
        return false;
    if (double(m) * double(kk) + double(kk) * double(n) + double(m) * double(n) > double(int64_t(1) << 36))
        return false;
    const auto d = parseDType(dt);
    if (!d)
        return false;
    k = Kernel{};
    k.kind = KernelKind::Gemm;
    k.op = "gemm";
    k.name = "extra.gemm_" + dims + "_" + dt;
    k.phase = "forward";
    k.dtype = *d;
    k.m = m;
    k.n = n;
    k.k = kk;
    k.layout = "nn";
    k.count_per_step = 0;
    k.flops = k.full_flops = 2.0 * double(m) * double(n) * double(kk);
    k.bytes = k.full_bytes = bytesOf(k.dtype) * double(m * kk + kk * n + m * n);
    k.note = "requested with --gemm";
    return true;
}

std::string resultsTable(const Plan &plan, const RunResults &r, const Catalog &cat)
{
    std::ostringstream o;
    const DeviceProfile &dev = *cat.device(plan.cluster.device);
    o << "Plan:    " << plan.name << "\n";
    if (r.info.backend.empty())
        o << "Backend: did not start";
    else
        o << "Backend: " << r.info.backend << " on " << r.info.device
          << (r.info.device_name.empty() ? "" : " (" + r.info.device_name + ")");
    if (!r.info.interpreter.empty())
        o << ", interpreter " << r.info.interpreter;
    if (!r.info.versions.empty())
        o << ", " << r.info.versions;
    if (r.info.world_size > 1)
        o << ", " << r.info.world_size << " processes";
    o << "\nPredicted: " << dev.name << " (" << dev.id << "); times are one call at the plan's "
      << "full size (measured ones extrapolated at the measured rate when run scaled down).\n\n";
    o << pad("kernel", 28) << pad("shape run", 28) << pad("time", 11, true) << pad("rate", 15, true)
      << pad("predicted", 12, true) << pad("measured", 13, true) << pad("ratio", 10, true)
      << "  x/step\n";
    const std::vector<KernelComparison> cmp = compareKernels(r, dev, plan);
    for (size_t i = 0; i < r.kernels.size(); ++i) {
        const Kernel &k = r.kernels[i];
        const KernelMeasurement &m = r.measurements[i];
        std::string time = "-", rt = "-";
        if (m.ok()) {
            time = formatSeconds(m.time_s);
            if (m.flops_per_s > 0)
                rt = rate(m.flops_per_s, "FLOP/s");
            else if (m.busbw > 0)
                rt = rate(m.busbw, "B/s bus");
            else if (m.bytes_per_s > 0)
                rt = rate(m.bytes_per_s, "B/s");
        } else if (!m.status.empty()) {
            time = m.status;
        } else {
            time = "not run";
        }
        const KernelComparison &c = cmp[i];
        o << pad(k.name, 27) << " " << pad(shape(k), 28) << pad(time, 11, true) << pad(rt, 15, true)
          << pad(c.predicted_s > 0 ? formatSeconds(c.predicted_s) : "-", 12, true)
          << pad(c.measured_s > 0 ? formatSeconds(c.measured_s) : "-", 13, true)
          << pad(c.ratio > 0 ? formatFixed(c.ratio, 2) : "-", 10, true) << "  "
          << formatFixed(k.count_per_step, 0) << "\n";
        if (!m.ok() && !m.message.empty())
            o << "    " << m.message << "\n";
    }
    o << "\nMemory probe: ";
    const ProbeMeasurement &p = r.probe_result;
    if (p.status.empty()) {
        o << "not run\n";
    } else if (!p.ran()) {
        o << p.status << (p.message.empty() ? "" : ": " + p.message) << "\n";
    } else {
        const MemoryComparison mc = compareProbe(plan, r, cat);
        o << p.layers << " of " << plan.model.layers << " layers, " << p.seq_len << " tokens x "
          << p.micro_batch << ", " << p.mode << ", " << p.attention << " attention ("
          << p.attention_impl << "), recompute " << p.recompute << "\n";
        o << "  predicted peak allocated " << formatGiB(mc.predicted_peak) << ", measured "
          << formatGiB(mc.measured_peak) << " (" << formatFixed(mc.ratio, 3) << " x); measured by "
          << p.method << "\n";
        o << "  predicted peak reserved " << formatGiB(mc.predicted_reserved) << " (the caching allocator "
          << "replayed over the probe's step)";
        if (mc.measured_reserved > 0)
            o << ", measured " << formatGiB(mc.measured_reserved) << " ("
              << formatFixed(mc.measured_reserved / std::max(1.0, mc.predicted_reserved), 3) << " x)";
        o << "\n";
        if (!p.snapshot.empty())
            o << "  memory snapshot of the step: " << p.snapshot << "\n";
    }
    if (!r.error.empty())
        o << "\nThe run stopped early: " << r.error << "\n";
    return o.str();
}

double interpolateBusbw(const std::vector<CollectivePoint> &pts, const std::string &coll,
                        double bytes)
{
    std::vector<std::pair<double, double>> t;
    for (const CollectivePoint &p : pts)
        if (p.collective == coll && p.busbw > 0)
            t.emplace_back(p.bytes, p.busbw);
    if (t.empty())
        return 0;
    std::sort(t.begin(), t.end());
    if (bytes <= t.front().first)
        return t.front().second;
    if (bytes >= t.back().first)
        return t.back().second;
    for (size_t i = 1; i < t.size(); ++i)
        if (bytes <= t[i].first) {
            const double a = (std::log(bytes) - std::log(t[i - 1].first)) /
                             (std::log(t[i].first) - std::log(t[i - 1].first));
            return t[i - 1].second + a * (t[i].second - t[i - 1].second);
        }
    return t.back().second;
}

int importCommand(const Plan &plan, const Catalog &cat, const std::string &file, int ranks,
                  const std::string &format, std::ostream &out)
{
    const std::string text = readTextFile(file, kMaxTraceFileBytes);
    const Estimate e = estimate(plan, cat);
    const bool isJson = looksLikeChromeTrace(text);
    std::ostringstream o;
    nlohmann::json j;
    j["plan"] = plan.name;
    if (isJson) {
        const TraceImport t = parseChromeTrace(text);
        j["trace"] = traceImportToJson(t);
        o << "Profiler trace " << file << ": " << t.events << " events over "
          << formatSeconds(t.span_s) << "\n\n";
        o << pad("collective", 16) << pad("calls", 8, true) << pad("total", 12, true)
          << pad("longest", 12, true) << "   plan: per step (engine)\n";
        for (const TraceCollective &c : t.collectives) {
            double planTotal = 0;
            for (const Collective &pc : e.communication)
                if (pc.collective == c.collective)
                    planTotal += pc.time_s * pc.count_per_step;
            o << pad(c.collective, 16) << pad(std::to_string(c.calls), 8, true)
              << pad(formatSeconds(c.total_s), 12, true) << pad(formatSeconds(c.max_s), 12, true)
              << "   " << (planTotal > 0 ? formatSeconds(planTotal) : "-") << "\n";
        }
        o << "\nMemory timeline: " << t.memory.size() << " points; peak allocated "
          << formatGiB(t.peak_allocated) << ", peak reserved " << formatGiB(t.peak_reserved)
          << "; the plan's peak allocated (engine): " << formatGiB(e.memory.peak_bytes) << "\n";
    } else {
        const CollectiveImport c = parseCollectiveBenchmark(text, file, ranks);
        j["collectives"] = collectiveImportToJson(c);
        o << c.tool << " output " << file << ": " << c.points.size() << " sizes of "
          << (c.points.empty() ? "?" : c.points.front().collective);
        if (!c.points.empty() && c.points.front().ranks > 0)
            o << " on " << c.points.front().ranks << " ranks";
        o << "\n\n"
          << pad("size", 12, true) << pad("time", 12, true) << pad("algbw", 14, true)
          << pad("busbw", 14, true) << "\n";
        for (const CollectivePoint &p : c.points)
            o << pad(formatBytes(p.bytes), 12, true) << pad(formatSeconds(p.time_s), 12, true)
              << pad(rate(p.algbw, "B/s"), 14, true) << pad(rate(p.busbw, "B/s"), 14, true) << "\n";
        o << "\nThe plan's collectives of that kind, at the imported busbw:\n";
        nlohmann::json rows = nlohmann::json::array();
        for (const Collective &pc : e.communication) {
            const double bw = interpolateBusbw(c.points, pc.collective, pc.bytes);
            if (bw <= 0)
                continue;
            const double t = pc.bytes * busBandwidthFactor(pc.collective, pc.group_size) / bw;
            o << "  "
              << pad(pc.collective + " " + pc.group + " x" + std::to_string(pc.group_size), 26)
              << pad(formatBytes(pc.bytes), 12, true) << "  engine " << formatSeconds(pc.time_s)
              << ", at imported busbw " << formatSeconds(t) << "\n";
            rows.push_back({{"collective", pc.collective},
                            {"group", pc.group},
                            {"bytes", pc.bytes},
                            {"engine_s", pc.time_s},
                            {"imported_s", t}});
        }
        j["comparison"] = rows;
    }
    out << (format == "json" ? j.dump(2) + "\n" : o.str());
    return ExitOk;
}

} // namespace

void useInProcessBench()
{
    detail::registerVerb("bench", benchCommand);
}

int benchCommand(const std::vector<std::string> &args, std::ostream &out, std::ostream &err)
{
    std::string file, output, profileOut, importFile, format = "table";
    RunOptions opt;
    bool backendGiven = false, list = false, collectives = true, reference = false;
    int64_t maxTokens = -1, probeTokens = -1;
    int ranks = 0;
    std::vector<Kernel> extra;
    auto need = [&](size_t &i, const std::string &a) -> const std::string * {
        if (i + 1 >= args.size()) {
            err << "shardscope-cli bench: " << a << " needs a value\n";
            return nullptr;
        }
        return &args[++i];
    };
    // Each count option has a range its uses (timeouts in ms in an int, process counts,
    // repetitions) stay inside; beyond it the value is refused, not wrapped or clamped.
    auto toInt = [&](const std::string &a, const std::string &v, long long &outv) {
        long long hi = 1000000;
        if (a == "--timeout")
            hi = 7 * 86400; // a week of silence, in s (kept in ms in an int)
        else if (a == "--nproc" || a == "--ranks")
            hi = 1 << 20;
        else if (a == "--warmup" || a == "--repeats")
            hi = 100000;
        else if (a == "--max-tokens" || a == "--probe-tokens")
            hi = int64_t(1) << 34;
        try {
            size_t pos = 0;
            outv = std::stoll(v, &pos);
            if (pos != v.size() || outv < 0 || outv > hi)
                throw std::invalid_argument(v);
            return true;
        } catch (const std::exception &) {
            err << "shardscope-cli bench: " << a << " needs a whole number from 0 to " << hi
                << ", not " << v << "\n";
            return false;
        }
    };
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string &a = args[i];
        const std::string *v = nullptr;
        long long n = 0;
        if (a == "--help" || a == "-h") {
            out << helpText(kBenchUsage);
            return ExitOk;
        } else if (a == "--backend") {
            if (!(v = need(i, a)))
                return ExitBadInput;
            opt.backend = QString::fromStdString(*v);
            backendGiven = true;
            if (*v != "cpu" && *v != "torch") {
                err << "shardscope-cli bench: --backend must be cpu or torch, not " << *v << "\n";
                return ExitBadInput;
            }
        } else if (a == "--device") {
            if (!(v = need(i, a)))
                return ExitBadInput;
            if (*v != "cuda" && *v != "npu" && *v != "cpu") {
                err << "shardscope-cli bench: --device must be cuda, npu or cpu, not " << *v
                    << "\n";
                return ExitBadInput;
            }
            opt.device = QString::fromStdString(*v);
        } else if (a == "--python") {
            if (!(v = need(i, a)))
                return ExitBadInput;
            opt.python = QString::fromStdString(*v);
        } else if (a == "--worker") {
            if (!(v = need(i, a)))
                return ExitBadInput;
            opt.workerScript = QString::fromStdString(*v);
        } else if (a == "--launcher") {
            if (!(v = need(i, a)))
                return ExitBadInput;
            opt.launcherArgs =
                QString::fromStdString(*v).split(QLatin1Char(' '), Qt::SkipEmptyParts);
        } else if (a == "--nproc" || a == "--max-tokens" || a == "--probe-tokens" ||
                   a == "--warmup" || a == "--repeats" || a == "--timeout" || a == "--ranks") {
            if (!(v = need(i, a)) || !toInt(a, *v, n))
                return ExitBadInput;
            if (a == "--nproc")
                opt.nproc = int(std::max(1LL, n));
            else if (a == "--max-tokens")
                maxTokens = n;
            else if (a == "--probe-tokens")
                probeTokens = n;
            else if (a == "--warmup")
                opt.warmup = int(n);
            else if (a == "--repeats")
                opt.repeats = int(std::max(1LL, n));
            else if (a == "--timeout")
                opt.kernelTimeoutMs = int(std::max(1LL, n) * 1000);
            else
                ranks = int(n);
        } else if (a == "--no-probe") {
            opt.probe = false;
        } else if (a == "--snapshot") {
            if (!(v = need(i, a)))
                return ExitBadInput;
            opt.probeSnapshot = QString::fromStdString(*v);
        } else if (a == "--no-collectives") {
            collectives = false;
        } else if (a == "--reference") {
            reference = true;
        } else if (a == "--list") {
            list = true;
        } else if (a == "--gemm") {
            if (!(v = need(i, a)))
                return ExitBadInput;
            Kernel k;
            if (!parseGemm(*v, k)) {
                err << "shardscope-cli bench: --gemm needs MxNxK[:dtype] with each dimension from "
                       "1 to 1048576 and the operands at most 2^36 elements, not " << *v << "\n";
                return ExitBadInput;
            }
            extra.push_back(k);
        } else if (a == "--import") {
            if (!(v = need(i, a)))
                return ExitBadInput;
            importFile = *v;
        } else if (a == "-o" || a == "--output") {
            if (!(v = need(i, a)))
                return ExitBadInput;
            output = *v;
        } else if (a == "--profile") {
            if (!(v = need(i, a)))
                return ExitBadInput;
            profileOut = *v;
        } else if (a == "--format") {
            if (!(v = need(i, a)))
                return ExitBadInput;
            format = *v;
            if (format != "table" && format != "json") {
                err << "shardscope-cli bench: --format must be table or json\n";
                return ExitBadInput;
            }
        } else if (!a.empty() && a[0] == '-') {
            err << "shardscope-cli bench: unknown option " << a << "\n";
            return ExitBadInput;
        } else if (file.empty()) {
            file = a;
        } else {
            err << "shardscope-cli bench: one plan file expected, got also " << a << "\n";
            return ExitBadInput;
        }
    }
    if (file.empty()) {
        err << "shardscope-cli bench: missing PLAN.plan.json\n" << helpText(kBenchUsage);
        return ExitBadInput;
    }
    if (opt.backend == QLatin1String("cpu"))
        opt.device = QStringLiteral("cpu");
    if (!opt.probeSnapshot.isEmpty() && opt.device == QLatin1String("cpu")) {
        err << "shardscope-cli bench: --snapshot records the caching allocator of a cuda or npu "
               "device (--backend torch --device cuda|npu); the CPU has none\n";
        return ExitBadInput;
    }

    const Catalog &cat = catalog(err);
    Plan plan;
    try {
        plan = readPlan(file, err);
    } catch (const PlanError &e) {
        err << "shardscope-cli: error: " << located(file, e.what()) << "\n";
        return ExitBadInput;
    }
    if (!importFile.empty()) {
        try {
            const int rc = importCommand(plan, cat, importFile, ranks, format, out);
            if (!backendGiven)
                return rc;
        } catch (const PlanError &e) {
            err << "shardscope-cli: error: " << e.what() << "\n";
            return ExitBadInput;
        } catch (const std::exception &e) {
            err << "shardscope-cli: error: " << located(importFile, e.what()) << "\n";
            return ExitBadInput;
        }
    }

    const bool onCpu = opt.device == QLatin1String("cpu");
    WorkloadOptions wo;
    wo.max_tokens = maxTokens >= 0 ? maxTokens : (onCpu ? 256 : 0);
    wo.probe_max_tokens = probeTokens >= 0 ? probeTokens : (onCpu ? 256 : 0);
    wo.collectives = collectives;
    Workload w = buildWorkload(plan, wo, &cat);
    w.kernels.insert(w.kernels.begin(), extra.begin(), extra.end());

    if (list) {
        if (format == "json") {
            nlohmann::json ks = nlohmann::json::array();
            for (const Kernel &k : w.kernels)
                ks.push_back(kernelToJson(k));
            out << nlohmann::json{{"plan", plan.name},
                                  {"tokens", w.tokens},
                                  {"tokens_run", w.tokens_run},
                                  {"kernels", ks},
                                  {"memory_probe", probeToJson(w.probe)}}
                       .dump(2)
                << "\n";
        } else {
            out << "Kernels of one step on one rank of " << plan.name << " (" << w.tokens
                << " tokens per micro-batch, run at " << w.tokens_run << "):\n";
            for (const Kernel &k : w.kernels)
                out << "  " << pad(k.name, 28) << pad(shape(k), 30)
                    << pad(formatFixed(k.count_per_step, 0), 8, true) << "  " << k.note << "\n";
        }
        return ExitOk;
    }

    std::unique_ptr<QCoreApplication> app;
    static int argc = 1;
    static char name[] = "shardscope-cli";
    static char *argv[] = {name, nullptr};
    if (!QCoreApplication::instance())
        app = std::make_unique<QCoreApplication>(argc, argv);
    opt.reference = reference;
    opt.startTimeoutMs = std::max(opt.startTimeoutMs, opt.kernelTimeoutMs);

    err << "Running " << w.kernels.size() << " kernels"
        << (opt.probe ? " and the memory probe" : "") << " with the " << opt.backend.toStdString()
        << " backend on " << opt.device.toStdString() << "...\n";
    const RunResults r = runBlocking(plan, w, opt, [&](int done, int total, const QString &cur) {
        err << "  [" << done << "/" << total << "] " << cur.toStdString() << "\n";
    });

    if (format == "json")
        out << resultsToJson(plan, r, cat).dump(2) << "\n";
    else
        out << resultsTable(plan, r, cat);

    auto save = [&](const std::string &path, const std::string &data) {
        try {
            writeFileAtomically(path, data);
            return true;
        } catch (const WriteError &e) {
            err << "shardscope-cli bench: " << e.what() << "\n";
            return false;
        }
    };
    if (!output.empty() && !save(output, resultsToJson(plan, r, cat).dump(2) + "\n"))
        return ExitFailure;
    if (!profileOut.empty()) {
        const DeviceProfile calibrated = calibrateDevice(*cat.device(plan.cluster.device), r);
        if (!save(profileOut, deviceToJson(calibrated).dump(2) + "\n"))
            return ExitFailure;
    }
    bool anyOk = false;
    for (const KernelMeasurement &m : r.measurements)
        anyOk = anyOk || m.ok();
    if (!r.error.empty()) {
        err << "shardscope-cli bench: " << r.error << "\n";
        return ExitFailure;
    }
    return anyOk || r.kernels.empty() ? ExitOk : ExitFailure;
}

} // namespace shardscope::cli
