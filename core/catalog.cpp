#include "catalog.h"

#include "errors.h"
#include "files.h"
#include "jsoninput.h"
#include "plan.h"
#include "shardscope_config.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <optional>
#include <vector>

namespace shardscope {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

json readJsonFile(const fs::path &file)
{
    return parseJsonText(readTextFile(file.string()), file.string());
}

/// The *.json files of a folder, sorted. Entries that cannot be examined (a dangling link, a
/// symlink loop) are returned too, so that reading them reports the problem by name.
std::vector<fs::path> jsonFiles(const fs::path &dir)
{
    std::vector<fs::path> files;
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
        return files;
    fs::directory_iterator it(dir, ec), end;
    if (ec)
        throw PlanError(dir.string(), "cannot be listed (" + ec.message() + ")");
    for (; it != end; it.increment(ec)) {
        if (ec)
            throw PlanError(dir.string(), "cannot be listed (" + ec.message() + ")");
        if (it->path().extension() == ".json")
            files.push_back(it->path());
    }
    std::sort(files.begin(), files.end());
    return files;
}

template<typename F>
void forEachJson(const fs::path &dir, F &&f)
{
    for (const auto &file : jsonFiles(dir)) {
        try {
            f(file, readJsonFile(file));
        } catch (const PlanError &e) {
            // Name the file once, whoever threw.
            const std::string what = e.what();
            if (what.rfind(file.string(), 0) == 0)
                throw;
            throw PlanError(file.string(), what);
        }
    }
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
        ModelShape m = modelFromPresetJson(j, file.string());
        c.m_models[m.preset] = m;
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
    std::error_code ec;
    const fs::file_status st = fs::status(dir, ec);
    if (!ec && fs::exists(st) && !fs::is_directory(st)) {
        m_warnings.push_back(dir + ": the user device folder is not a folder; no user device "
                                   "profiles were read");
        return;
    }
    std::vector<fs::path> files;
    try {
        files = jsonFiles(fs::path(dir));
    } catch (const PlanError &e) {
        m_warnings.push_back(std::string(e.what()) + "; no user device profiles were read");
        return;
    }
    // A broken profile is skipped with a warning; only a plan that asks for it fails (see
    // brokenDevice). Built-in devices and the other user profiles stay usable.
    for (const fs::path &file : files) {
        try {
            DeviceProfile d = deviceFromJson(readJsonFile(file));
            m_devices[d.id] = d;
        } catch (const PlanError &e) {
            std::string what = e.what();
            if (what.rfind(file.string(), 0) != 0)
                what = file.string() + ": " + what;
            m_warnings.push_back(what + " (profile skipped)");
            m_broken[file.stem().string()] = what;
        }
    }
}

const std::string *Catalog::brokenDevice(const std::string &id) const
{
    auto it = m_broken.find(id);
    return it == m_broken.end() ? nullptr : &it->second;
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

namespace {

/// `dir` without its last components when they are those of the relative path `tail`
/// ("/opt/x/lib/exec" less "lib/exec" is "/opt/x"); none when they are not, or `tail` is
/// absolute or empty.
std::optional<fs::path> withoutTail(const fs::path &dir, const fs::path &tail)
{
    if (tail.is_absolute())
        return std::nullopt;
    std::vector<fs::path> want;
    for (const fs::path &c : tail)
        if (!c.empty() && c != ".")
            want.push_back(c);
    if (want.empty())
        return std::nullopt;
    fs::path at = dir;
    for (auto c = want.rbegin(); c != want.rend(); ++c) {
        if (at.filename() != *c || !at.has_parent_path() || at.parent_path() == at)
            return std::nullopt;
        at = at.parent_path();
    }
    return at;
}

} // namespace

ProgramPlace programPlace()
{
    // /proc/self/exe resolves symlinks; a binary replaced while running reads " (deleted)".
    std::error_code ec;
    fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (ec)
        return {};
    std::string s = exe.string();
    constexpr std::string_view deleted = " (deleted)";
    if (s.size() > deleted.size() && s.ends_with(deleted))
        exe = s.substr(0, s.size() - deleted.size());
    return {exe.string(), installPrefixOf(exe.string())};
}

std::string installPrefixOf(const std::string &program)
{
    const fs::path dir = fs::path(program).parent_path();
    if (const std::optional<fs::path> prefix =
            withoutTail(dir, fs::path(SHARDSCOPE_INSTALL_LIBEXECDIR) / "shardscope"))
        return prefix->string();
    if (const std::optional<fs::path> prefix =
            withoutTail(dir, fs::path(SHARDSCOPE_INSTALL_BINDIR)))
        return prefix->string();
    return dir.parent_path().string();
}

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
    if (const ProgramPlace here = programPlace(); !here.program.empty()) {
        const fs::path installed = fs::path(here.prefix) / SHARDSCOPE_DATA_SUBDIR;
        if (valid(installed))
            return installed.lexically_normal().string();
        const fs::path sibling =
            fs::path(here.program).parent_path().parent_path() / "share" / "shardscope";
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
