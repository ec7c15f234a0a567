// Bad input, class by class: what once crashed a reader, lost a file, passed as valid or passed
// in silence. Each test names the class it guards; each fails on the reader it replaced.
#include "core/catalog.h"
#include "core/device.h"
#include "core/errors.h"
#include "core/estimate.h"
#include "core/files.h"
#include "core/framework.h"
#include "core/jsoninput.h"
#include "core/plan.h"
#include "runner/importers.h"
#include "testdata.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>
#include <nlohmann/json.hpp>

using namespace shardscope;
using nlohmann::json;

namespace {

json casePlan()
{
    return json::parse(readTextFile(testing::casePath("hcie-ai-fsdp").toStdString()));
}

json deviceJson()
{
    return json::parse(readTextFile(locateDataDir() + "/devices/h200.json"));
}

std::string refusal(const std::function<void()> &f)
{
    try {
        f();
    } catch (const PlanError &e) {
        return e.what();
    } catch (const std::runtime_error &e) {
        return e.what();
    }
    return {};
}

QString readAll(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QString();
}

} // namespace

class TestBadInput : public QObject
{
    Q_OBJECT

private slots:
    // --- 1. crashes ---------------------------------------------------------------------------

    // 100,000 levels under a key the reader does not know: keeping the unknown field copied it
    // recursively and overflowed the stack. The depth is now bounded while parsing.
    void deepNestingIsRefusedWhileParsing()
    {
        json j = casePlan();
        std::string text = j.dump();
        text.pop_back();
        text += ",\"extra\":" + std::string(100000, '[') + std::string(100000, ']') + "}";
        const std::string why = refusal([&] { parsePlanText(text, Catalog::builtin()); });
        QVERIFY2(QString::fromStdString(why).contains(QStringLiteral("nests deeper than 64 levels")),
                 why.c_str());
        QVERIFY2(QString::fromStdString(why).contains(QStringLiteral("extra")), why.c_str());
        // What a plan legitimately holds still reads.
        std::string ok = j.dump();
        ok.pop_back();
        ok += ",\"extra\":" + std::string(40, '[') + std::string(40, ']') + "}";
        QCOMPARE(parsePlanText(ok, Catalog::builtin()).unknown["extra"].is_array(), true);
    }

    void importerContainerAccess_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("word");
        // "# Avg bus bandwidth" with no value: front() of an empty token list.
        QTest::addRow("avg busbw without value")
            << QStringLiteral("#  Avg bus bandwidth    : \n") << QStringLiteral("no nccl-tests result rows");
        // A header naming more columns than the rows have.
        QTest::addRow("short rows")
            << QStringLiteral("#  size count type redop root time algbw busbw #wrong time algbw busbw\n"
                              "  1024 256 float sum -1 5.0 0.2\n")
            << QStringLiteral("no nccl-tests result rows");
        QTest::addRow("hccl header only") << QStringLiteral("data_size(Bytes) | aveg_time(us)\n")
                                          << QStringLiteral("no hccl_test result rows");
    }

    void importerContainerAccess()
    {
        QFETCH(QString, text);
        QFETCH(QString, word);
        const std::string why = refusal([&] { parseCollectiveBenchmark(text.toStdString(), "x", 8); });
        QVERIFY2(QString::fromStdString(why).contains(word), why.c_str());
    }

    // --- 2. lost data -------------------------------------------------------------------------

    // A write that fails half-way (a full disk) leaves the old file as it was, leaves no
    // temporary file behind and says so.
    void failedWriteKeepsTheOldFile()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("results.json"));
        writeFileAtomically(path.toStdString(), "old contents\n");
        {
            testing::FileSizeLimit limit(4096);
            QVERIFY(limit.active());
            const std::string big(1 << 20, 'x');
            try {
                writeFileAtomically(path.toStdString(), big);
                QFAIL("a write beyond the file size limit succeeded");
            } catch (const WriteError &e) {
                QVERIFY2(QString::fromUtf8(e.what()).contains(path), e.what());
                QVERIFY2(QString::fromUtf8(e.what()).contains(QStringLiteral("unchanged")), e.what());
            }
        }
        QCOMPARE(readAll(path), QStringLiteral("old contents\n"));
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden).size(), 1);
        // A folder that does not exist is an error too, not a silent no-op.
        QVERIFY_THROWS_EXCEPTION(WriteError, writeFileAtomically(dir.filePath(QStringLiteral("no/such/f.json")).toStdString(), "x"));
    }

    // What a write target can be besides a file: a link is followed (the link stays), a device
    // is written to (renaming over /dev/null as root would replace the device node), a folder
    // is refused; an existing file keeps its mode.
    void writeTargetsOtherThanFiles()
    {
        QTemporaryDir dir;
        const QString real = dir.filePath(QStringLiteral("real.json"));
        const QString link = dir.filePath(QStringLiteral("link.json"));
        writeFileAtomically(real.toStdString(), "one");
        QVERIFY(QFile::setPermissions(real, QFile::ReadOwner | QFile::WriteOwner));
        QVERIFY(QFile::link(real, link));
        writeFileAtomically(link.toStdString(), "two");
        QVERIFY(QFileInfo(link).isSymLink());
        QCOMPARE(readAll(real), QStringLiteral("two"));
        QVERIFY(!(QFileInfo(real).permissions() & (QFile::ReadGroup | QFile::ReadOther))); // still 0600
        writeFileAtomically("/dev/null", "discarded");
        QVERIFY(!QFileInfo(QStringLiteral("/dev/null")).isFile());
        QVERIFY_THROWS_EXCEPTION(WriteError, writeFileAtomically(dir.path().toStdString(), "x"));
    }

    // --- 3. nonsense accepted as valid -------------------------------------------------------

    void overflowingProductsAreRefused_data()
    {
        QTest::addColumn<QString>("patch");
        QTest::addColumn<QString>("field");
        // 8 x 65536 x 1e6 sequences: grad_accum products overflowed the search's int.
        QTest::addRow("sequences per step")
            << QStringLiteral(R"({"training": {"seq_len": 2048, "micro_batch": 65536, "grad_accum": 1000000}})")
            << QStringLiteral("training");
        QTest::addRow("tokens per step")
            << QStringLiteral(R"({"training": {"seq_len": 32768, "micro_batch": 16, "grad_accum": 1000000}})")
            << QStringLiteral("training");
    }

    void overflowingProductsAreRefused()
    {
        QFETCH(QString, patch);
        QFETCH(QString, field);
        json j = casePlan();
        j.merge_patch(json::parse(patch.toStdString()));
        try {
            parsePlan(j, Catalog::builtin());
            QFAIL("accepted");
        } catch (const PlanError &e) {
            QCOMPARE(QString::fromStdString(e.field()), field);
            QVERIFY2(QString::fromStdString(e.rule()).contains(QStringLiteral("beyond any run")), e.what());
        }
    }

    // A model so large that its parameters alone exceed the HBM: the allocator replay runs out
    // of memory while the model is built, names what it was allocating, and the usable capacity
    // stays a sane number (never negative, never beyond the HBM).
    void usableNeverNegative()
    {
        json j = casePlan();
        j["model"] = {{"parameters", 1e12}};
        j["parallel"] = {{"dp", 8}, {"sharding", "none"}};
        const Plan p = parsePlan(j, Catalog::builtin());
        const Estimate e = estimate(p, Catalog::builtin());
        const RankMemory &r = e.memory.ranks.front();
        QVERIFY(r.oom);
        QCOMPARE(QString::fromStdString(r.oom_tensor), QStringLiteral("parameter"));
        QCOMPARE(QString::fromStdString(r.oom_step), QStringLiteral("setup"));
        QVERIFY(r.peak_bytes + r.reserve.total() > e.memory.hbm_bytes);
        QVERIFY(e.memory.usable_bytes >= 0.0 && e.memory.usable_bytes <= e.memory.hbm_bytes);
        QVERIFY(!e.memory.fits);
    }

    // A 1T-parameter model fully offloaded to one H200 fits the HBM, but its optimizer states
    // (12 TB) do not fit the node's 2 TiB of host memory: the verdict says so.
    void offloadMustFitTheHost()
    {
        json j = casePlan();
        j["model"] = {{"parameters", 1e12}};
        j["training"]["seq_len"] = 4096;
        j["parallel"] = {{"dp", 1}, {"sharding", "full"}};
        j["memory"]["offload"] = {{"optimizer", true}, {"params", true}, {"grads", true},
                                  {"activations", true}};
        j["cluster"] = {{"device", "h200"}, {"devices_per_node", 1}, {"nodes", 1}};
        const Plan p = parsePlan(j, Catalog::builtin());
        const Estimate e = estimate(p, Catalog::builtin());
        QVERIFY(e.memory.hbm_fits);
        QVERIFY(!e.memory.host.fits);
        QVERIFY(!e.memory.fits);
        const double P = double(countParameters(p.model).total);
        // fp32 master + two fp32 Adam states, pageable; bf16 params and grads, pinned.
        QCOMPARE(e.memory.host.pageable_per_node, 12.0 * P);
        QVERIFY(e.memory.host.pinned_per_node >= 4.0 * P);
        QCOMPARE(e.memory.host.capacity_bytes, 2199023255552.0);
        const json out = estimateToJson(p, e);
        QCOMPARE(out["fits"].get<bool>(), false);
        QCOMPARE(out["hbm_fits"].get<bool>(), true);
        QCOMPARE(out["host"]["fits"].get<bool>(), false);

        // Eight ranks of a node share it: ZeRO-3 over 8 with optimizer offload holds each
        // rank's eighth, eight times.
        json k = casePlan(); // 7B FSDP over 8 x 910B
        k["memory"]["offload"] = {{"optimizer", true}};
        const Plan q = parsePlan(k, Catalog::builtin());
        const Estimate f = estimate(q, Catalog::builtin());
        const double Q = double(countParameters(q.model).total);
        QVERIFY(std::abs(f.memory.host.pageable_per_node - 12.0 * Q) < 1e-6 * Q);
        QVERIFY(std::abs(f.memory.host.pinned_per_node - 4.0 * Q) < 1e-6 * Q);
        QVERIFY(f.memory.host.fits);
        // A plan can say what its nodes really have.
        k["cluster"]["host_memory_bytes"] = 64e9;
        QVERIFY(!estimate(parsePlan(k, Catalog::builtin()), Catalog::builtin()).memory.fits);
    }

    void brokenDeviceProfiles_data()
    {
        QTest::addColumn<QString>("patch");
        QTest::addColumn<QString>("field");
        QTest::addRow("zero efficiency") << QStringLiteral(R"({"gemm_efficiency": 0})")
                                         << QStringLiteral("gemm_efficiency");
        QTest::addRow("zero elementwise efficiency")
            << QStringLiteral(R"({"elementwise_efficiency": 0})") << QStringLiteral("elementwise_efficiency");
        QTest::addRow("negative bandwidth")
            << QStringLiteral(R"({"intra_node": {"bandwidth": -1}})") << QStringLiteral("intra_node.bandwidth");
        QTest::addRow("negative overhead")
            << QStringLiteral(R"({"gemm_overhead_s": -1e-5})") << QStringLiteral("gemm_overhead_s");
        QTest::addRow("negative peak") << QStringLiteral(R"({"peak_flops": {"bf16": -1}})")
                                       << QStringLiteral("peak_flops.bf16");
        QTest::addRow("unknown topology")
            << QStringLiteral(R"({"inter_node": {"topology": "torus"}})") << QStringLiteral("inter_node.topology");
        QTest::addRow("wrong type") << QStringLiteral(R"({"name": 5})") << QStringLiteral("name");
        QTest::addRow("string hbm") << QStringLiteral(R"({"hbm_bytes": "141 GB"})") << QStringLiteral("hbm_bytes");
        QTest::addRow("nan-like host memory")
            << QStringLiteral(R"({"host_memory_bytes": -5})") << QStringLiteral("host_memory_bytes");
    }

    void brokenDeviceProfiles()
    {
        QFETCH(QString, patch);
        QFETCH(QString, field);
        json d = deviceJson();
        d.merge_patch(json::parse(patch.toStdString()));
        try {
            deviceFromJson(d);
            QFAIL("accepted");
        } catch (const PlanError &e) {
            QCOMPARE(QString::fromStdString(e.field()), field);
        }
    }

    void brokenFrameworkProfiles_data()
    {
        QTest::addColumn<QString>("patch");
        QTest::addColumn<QString>("field");
        QTest::addRow("wrong type") << QStringLiteral(R"({"ddp_bucket_copy": "yes"})")
                                    << QStringLiteral("ddp_bucket_copy");
        QTest::addRow("negative host time") << QStringLiteral(R"({"host_s_per_kernel": {"forward": -1}})")
                                            << QStringLiteral("host_s_per_kernel.forward");
        QTest::addRow("obsolete flat allocator share")
            << QStringLiteral(R"({"allocator_overhead_fraction": 0.05})")
            << QStringLiteral("allocator_overhead_fraction");
        QTest::addRow("prefetch") << QStringLiteral(R"({"fsdp_prefetch_layers": 2.5})")
                                  << QStringLiteral("fsdp_prefetch_layers");
    }

    void brokenFrameworkProfiles()
    {
        QFETCH(QString, patch);
        QFETCH(QString, field);
        json f = json::parse(readTextFile(locateDataDir() + "/frameworks/pytorch.json"));
        f.merge_patch(json::parse(patch.toStdString()));
        try {
            frameworkFromJson(f);
            QFAIL("accepted");
        } catch (const PlanError &e) {
            QCOMPARE(QString::fromStdString(e.field()), field);
        }
    }

    // Heads that do not divide hidden, with no head_dim: hidden / heads used to be truncated.
    void headDimIsNotTruncated()
    {
        json j = casePlan();
        j["model"] = {{"layers", 4}, {"hidden", 4000}, {"heads", 48}, {"ffn_hidden", 8192}, {"vocab", 32000}};
        try {
            parsePlan(j, Catalog::builtin());
            QFAIL("accepted");
        } catch (const PlanError &e) {
            QCOMPARE(QString::fromStdString(e.field()), QStringLiteral("model.heads"));
        }
        j["model"]["head_dim"] = 96;
        QCOMPARE(parsePlan(j, Catalog::builtin()).model.head_dim, int64_t(96));
    }

    // Preset files go through the plan's ranges and rules.
    void presetFilesAreValidated()
    {
        json preset = json::parse(readTextFile(locateDataDir() + "/models/llama2-7b.json"));
        QCOMPARE(modelFromPresetJson(preset, "llama2-7b.json").hidden, int64_t(4096));
        preset["layers"] = 0;
        QVERIFY(refusal([&] { modelFromPresetJson(preset, "llama2-7b.json"); })
                    .find("llama2-7b.json: preset.layers: must be between 1") != std::string::npos);
        preset["layers"] = 32;
        preset["kv_heads"] = 5;
        QVERIFY(!refusal([&] { modelFromPresetJson(preset, "x.json"); }).empty());
        preset["kv_heads"] = 32;
        preset["layres"] = 32;
        QVERIFY(refusal([&] { modelFromPresetJson(preset, "x.json"); }).find("preset.layres") !=
                std::string::npos);
    }

    void nonsenseMeasurements_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("word");
        const QString header = QStringLiteral(
            "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n");
        QTest::addRow("negative size") << header + QStringLiteral("  -1024 256 float sum -1 5.0 0.2 0.35 0 5.0 0.2 0.35 0\n")
                                       << QStringLiteral("line 2: the size");
        QTest::addRow("nan busbw") << header + QStringLiteral("  1024 256 float sum -1 5.0 0.2 nan 0 5.0 0.2 nan 0\n")
                                   << QStringLiteral("line 2: busbw");
        QTest::addRow("inf time") << header + QStringLiteral("  1024 256 float sum -1 inf 0.2 0.3 0 5.0 0.2 0.3 0\n")
                                  << QStringLiteral("line 2: the time");
        QTest::addRow("hccl negative") << QStringLiteral("data_size(Bytes) | aveg_time(us) | alg_bandwidth(GB/s)\n"
                                                         "1024 | -3.0 | 0.3\n")
                                       << QStringLiteral("line 2: aveg_time");
    }

    void nonsenseMeasurements()
    {
        QFETCH(QString, text);
        QFETCH(QString, word);
        const std::string why = refusal([&] { parseCollectiveBenchmark(text.toStdString(), "all_reduce_perf", 8); });
        QVERIFY2(QString::fromStdString(why).contains(word), why.c_str());
    }

    void nonsenseTraces_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("word");
        QTest::addRow("negative dur")
            << QStringLiteral(R"({"traceEvents": [{"ph": "X", "name": "ncclKernel_AllReduce", "cat": "kernel", "ts": 10, "dur": -5}]})")
            << QStringLiteral("traceEvents[0].dur");
        QTest::addRow("absurd dur")
            << QStringLiteral(R"({"traceEvents": [{"ph": "X", "name": "x", "ts": 10, "dur": 1e300}]})")
            << QStringLiteral("traceEvents[0].dur");
        QTest::addRow("object ts")
            << QStringLiteral(R"({"traceEvents": [{"ph": "X", "name": "x"}, {"ph": "X", "name": "x", "ts": {}}]})")
            << QStringLiteral("traceEvents[1].ts must be a number");
        QTest::addRow("args not an object")
            << QStringLiteral(R"({"traceEvents": [{"ph": "i", "name": "[memory]", "ts": 1, "args": 5}, {"ph": "i", "name": "[memory]", "ts": 1, "args": {"Total Allocated": -1}}]})")
            << QStringLiteral("traceEvents[1].Total Allocated");
    }

    void nonsenseTraces()
    {
        QFETCH(QString, text);
        QFETCH(QString, word);
        const std::string why = refusal([&] { parseChromeTrace(text.toStdString()); });
        QVERIFY2(QString::fromStdString(why).contains(word), why.c_str());
    }

    // --- 4. silence where a word is needed ---------------------------------------------------

    // A misspelt key is kept (forward compatibility) and reported, with the field it likely
    // misspells; the real field's default no longer applies in silence.
    void misspeltKeysAreReported()
    {
        json j = casePlan();
        j["memory"]["recompte"] = "full";
        j["parallel"]["shard"] = "full";
        j["parallel"].erase("sharding");
        j["future_section"] = {{"x", 1}};
        const Plan p = parsePlan(j, Catalog::builtin());
        QCOMPARE(p.warnings.size(), size_t(3));
        const QString all = QString::fromStdString(p.warnings[0] + "\n" + p.warnings[1] + "\n" + p.warnings[2]);
        QVERIFY2(all.contains(QStringLiteral("\"memory.recompte\"")) &&
                     all.contains(QStringLiteral("did you mean \"memory.recompute\"")), qPrintable(all));
        QVERIFY2(all.contains(QStringLiteral("did you mean \"parallel.sharding\"")), qPrintable(all));
        QVERIFY2(all.contains(QStringLiteral("\"future_section\"")), qPrintable(all));
        QVERIFY(p.unknown["memory"]["recompte"] == "full"); // still kept
        QVERIFY(parsePlan(casePlan(), Catalog::builtin()).warnings.empty());
    }

    void closestKeySuggestions()
    {
        const std::vector<std::string> known = {"recompute", "attention", "offload", "sharding", "sp"};
        QCOMPARE(closestKey("recompte", known), std::string("recompute"));
        QCOMPARE(closestKey("shard", known), std::string("sharding"));
        QCOMPARE(closestKey("attn", known), std::string());
        QCOMPARE(closestKey("zzzzzz", known), std::string());
        QCOMPARE(closestKey("s", known), std::string()); // too short to guess
    }

    void duplicateKeysAreRefused()
    {
        const std::string text = R"({"format": "shardscope-plan", "model": {"preset": "llama2-7b",
            "layers": 32, "layers": 16}})";
        try {
            parsePlanText(text, Catalog::builtin());
            QFAIL("accepted");
        } catch (const PlanError &e) {
            QCOMPARE(QString::fromStdString(e.field()), QStringLiteral("model.layers"));
            QVERIFY(QString::fromStdString(e.rule()).contains(QStringLiteral("twice")));
        }
    }

    // A plan followed by a NUL byte and garbage used to be accepted (the reader stopped at the
    // NUL); a binary file is named as one.
    void binaryContentIsNamed()
    {
        std::string text = casePlan().dump();
        text += std::string(1, '\0') + "garbage";
        const std::string why = refusal([&] { parsePlanText(text, Catalog::builtin()); });
        QVERIFY2(why.find("NUL byte") != std::string::npos && why.find("binary") != std::string::npos,
                 why.c_str());
    }

    void whatIsReadIsCapped()
    {
        QTemporaryDir dir;
        // A directory is named as one, not "unexpected end of input".
        const std::string d = refusal([&] { readTextFile(dir.path().toStdString()); });
        QVERIFY2(d.find("is a directory") != std::string::npos, d.c_str());
        // /dev/zero is read only up to the cap.
        const std::string z = refusal([&] { readTextFile("/dev/zero"); });
        QVERIFY2(z.find("larger than 16 MiB") != std::string::npos, z.c_str());
        // A missing file names the file.
        const std::string m = refusal([&] { readTextFile(dir.filePath(QStringLiteral("none.json")).toStdString()); });
        QVERIFY2(m.find("none.json") != std::string::npos, m.c_str());
    }

    // model.hf_config: a plan can name a Hugging Face config.json, relative to the plan.
    void planNamesAHuggingFaceConfig()
    {
        QTemporaryDir dir;
        QVERIFY(QDir().mkpath(dir.filePath(QStringLiteral("models/q"))));
        QFile cfg(dir.filePath(QStringLiteral("models/q/config.json")));
        QVERIFY(cfg.open(QIODevice::WriteOnly));
        cfg.write(R"({"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2",
            "hidden_size": 3584, "intermediate_size": 18944, "num_attention_heads": 28,
            "num_hidden_layers": 28, "num_key_value_heads": 4, "vocab_size": 152064,
            "tie_word_embeddings": false})");
        cfg.close();
        json j = casePlan();
        j["model"] = {{"hf_config", "models/q/config.json"}, {"layers", 14}};
        const QString planPath = dir.filePath(QStringLiteral("p.plan.json"));
        writeFileAtomically(planPath.toStdString(), j.dump());
        const Plan p = parsePlanFile(planPath.toStdString(), Catalog::builtin());
        QCOMPARE(p.model.hidden, int64_t(3584));
        QCOMPARE(p.model.layers, 14); // explicit fields override the config
        QVERIFY(p.model.attention_bias);
        QVERIFY(QDir::isAbsolutePath(QString::fromStdString(p.model.hf_config)));
        // Saved, it names the config by its absolute path, and reads back from anywhere.
        const json saved = planToJson(p);
        QCOMPARE(saved["model"]["hf_config"].get<std::string>(), p.model.hf_config);
        QCOMPARE(parsePlan(saved, Catalog::builtin()).model.hidden, int64_t(3584));

        j["model"] = {{"hf_config", "missing/config.json"}};
        const std::string why = refusal([&] { parsePlan(j, Catalog::builtin(), dir.path().toStdString()); });
        QVERIFY2(why.find("model.hf_config") != std::string::npos && why.find("missing/config.json") != std::string::npos,
                 why.c_str());
        j["model"] = {{"hf_config", "models/q/config.json"}, {"preset", "llama2-7b"}};
        QVERIFY(refusal([&] { parsePlan(j, Catalog::builtin(), dir.path().toStdString()); }).find("not both") !=
                std::string::npos);
    }
};

QTEST_APPLESS_MAIN(TestBadInput)
#include "tst_badinput.moc"
