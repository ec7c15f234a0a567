#include "catalog.h"

#include "errors.h"
#include "files.h"
#include "shardscope_config.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <mutex>

namespace shardscope {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

json readJsonFile(const fs::path &file)
{
    const std::string text = readTextFile(file.string());
    try {
        return json::parse(text);
    } catch (const json::parse_error &e) {
        throw PlanError(file.string(), std::string("malformed JSON: ") + e.what());
    }
}

template<typename F>
void forEachJson(const fs::path &dir, F &&f)
{
    if (!fs::is_directory(dir))
        return;
    std::vector<fs::path> files;
    for (const auto &e : fs::directory_iterator(dir)) {
        if (e.is_regular_file() && e.path().extension() == ".json")
            files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    for (const auto &file : files)
        f(file, readJsonFile(file));
}

template<typename M>
std::vector<std::string> keys(const M &m)
{
    std::vector<std::string> out;
    for (const auto &[k, v] : m)
        out.push_back(k);
    return out;
}

} // namespace

Catalog Catalog::load(const std::string &dataDir)
{
    Catalog c;
    c.m_dataDir = dataDir;
    const fs::path root(dataDir);
    forEachJson(root / "models", [&](const fs::path &file, const json &j) {
        try {
            ModelShape m = shapeFromHuggingFaceConfig(json{
                {"hidden_size", j.at("hidden")}, {"num_hidden_layers", j.at("layers")},
                {"num_attention_heads", j.at("heads")}, {"num_key_value_heads", j.at("kv_heads")},
                {"head_dim", j.at("head_dim")}, {"intermediate_size", j.at("ffn_hidden")},
                {"vocab_size", j.at("vocab")}, {"tie_word_embeddings", j.value("tied_embeddings", false)},
                {"attention_bias", j.value("attention_bias", false)}});
            m.ffn = j.value("ffn", std::string("swiglu")) == "gelu" ? FfnKind::GELU : FfnKind::SwiGLU;
            if (auto moe = j.find("moe"); moe != j.end()) {
                m.moe.experts = moe->at("experts").get<int>();
                m.moe.top_k = moe->at("top_k").get<int>();
                m.moe.expert_ffn_hidden = moe->at("expert_ffn_hidden").get<int64_t>();
            }
            m.preset = j.at("id").get<std::string>();
            m.display_name = j.value("display_name", m.preset);
            c.m_models[m.preset] = m;
        } catch (const json::exception &e) {
            throw PlanError(file.string(), std::string("bad model preset: ") + e.what());
        }
    });
    forEachJson(root / "devices", [&](const fs::path &, const json &j) {
        DeviceProfile d = deviceFromJson(j);
        c.m_devices[d.id] = d;
    });
    forEachJson(root / "frameworks", [&](const fs::path &, const json &j) {
        FrameworkProfile f = frameworkFromJson(j);
        c.m_frameworks[f.id] = f;
    });
    return c;
}

const Catalog &Catalog::builtin()
{
    static const Catalog instance = [] {
        const std::string dir = locateDataDir();
        if (dir.empty())
            throw PlanError("data directory",
                            "cannot find ShardScope's data (models/, devices/, frameworks/); set "
                            "SHARDSCOPE_DATA_DIR");
        Catalog c = Catalog::load(dir);
        c.loadUserDevices(userDevicesDir());
        return c;
    }();
    return instance;
}

void Catalog::loadUserDevices(const std::string &dir)
{
    if (dir.empty())
        return;
    forEachJson(fs::path(dir), [&](const fs::path &file, const json &j) {
        try {
            DeviceProfile d = deviceFromJson(j);
            m_devices[d.id] = d;
        } catch (const PlanError &e) {
            throw PlanError(file.string(), e.what());
        }
    });
}

std::string userDevicesDir()
{
    if (const char *env = std::getenv("SHARDSCOPE_USER_DEVICES"); env && *env)
        return env;
    if (const char *xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg)
        return (fs::path(xdg) / "shardscope" / "devices").string();
    if (const char *home = std::getenv("HOME"); home && *home)
        return (fs::path(home) / ".local" / "share" / "shardscope" / "devices").string();
    return {};
}

const ModelShape *Catalog::model(const std::string &id) const
{
    auto it = m_models.find(id);
    return it == m_models.end() ? nullptr : &it->second;
}
const DeviceProfile *Catalog::device(const std::string &id) const
{
    auto it = m_devices.find(id);
    return it == m_devices.end() ? nullptr : &it->second;
}
const FrameworkProfile *Catalog::framework(const std::string &id) const
{
    auto it = m_frameworks.find(id);
    return it == m_frameworks.end() ? nullptr : &it->second;
}
std::vector<std::string> Catalog::modelIds() const { return keys(m_models); }
std::vector<std::string> Catalog::deviceIds() const { return keys(m_devices); }
std::vector<std::string> Catalog::frameworkIds() const { return keys(m_frameworks); }
void Catalog::addDevice(DeviceProfile d) { m_devices[d.id] = std::move(d); }

std::string locateDataDir()
{
    auto valid = [](const fs::path &p) {
        std::error_code ec;
        return fs::is_directory(p / "models", ec) && fs::is_directory(p / "devices", ec);
    };
    if (const char *env = std::getenv("SHARDSCOPE_DATA_DIR"); env && *env) {
        if (valid(env))
            return env;
    }
    // Relative to the running executable, so that an install works wherever its prefix was
    // unpacked (a .deb under /usr, a tarball anywhere, `dpkg -x` into a scratch directory).
    // /proc/self/exe resolves symlinks; a binary replaced while running reads " (deleted)".
    std::error_code ec;
    fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        std::string s = exe.string();
        constexpr std::string_view deleted = " (deleted)";
        if (s.size() > deleted.size() && s.ends_with(deleted))
            exe = s.substr(0, s.size() - deleted.size());
        // <prefix>/<bindir>/exe -> <prefix>, however many components bindir has.
        fs::path prefix = exe.parent_path();
        const fs::path bindir(SHARDSCOPE_INSTALL_BINDIR);
        if (bindir.is_relative()) {
            for (auto it = bindir.begin(); it != bindir.end(); ++it) {
                if (!it->empty() && *it != ".")
                    prefix = prefix.parent_path();
            }
        } else {
            prefix = prefix.parent_path();
        }
        const fs::path installed = prefix / SHARDSCOPE_DATA_SUBDIR;
        if (valid(installed))
            return installed.lexically_normal().string();
        const fs::path sibling = exe.parent_path().parent_path() / "share" / "shardscope";
        if (valid(sibling))
            return sibling.lexically_normal().string();
    }
    const fs::path prefix = fs::path(SHARDSCOPE_INSTALL_PREFIX) / SHARDSCOPE_DATA_SUBDIR;
    if (valid(prefix))
        return prefix.string();
    if (valid(SHARDSCOPE_SOURCE_RESOURCES_DIR))
        return SHARDSCOPE_SOURCE_RESOURCES_DIR;
    return {};
}

} // namespace shardscope
