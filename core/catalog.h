#pragma once

#include "device.h"
#include "framework.h"
#include "model.h"

#include <map>
#include <string>
#include <vector>

namespace shardscope {

/// Model presets, device profiles and framework profiles, read from the data directory
/// (resources/ in the source tree, share/shardscope when installed).
class Catalog
{
public:
    /// Reads <dir>/models, <dir>/devices and <dir>/frameworks. Throws PlanError naming the
    /// file and field of a broken entry.
    static Catalog load(const std::string &dataDir);
    /// Adds the device profiles (*.json) of `dir`, replacing built-in ones with the same id:
    /// user-defined profiles and those the kernel runner calibrated. A missing folder adds
    /// nothing. A broken file (malformed, wrong types, out of range, unreadable) is skipped and
    /// reported in warnings(); a plan naming it (by file name) fails with that reason.
    void loadUserDevices(const std::string &dir);
    /// What loading noticed without refusing: skipped user profiles, a user device folder that
    /// is a file. Each names the file and the field.
    const std::vector<std::string> &warnings() const { return m_warnings; }
    /// Why the user profile `<id>.json` was skipped; nullptr when it was not.
    const std::string *brokenDevice(const std::string &id) const;
    /// The catalog of the located data directory, loaded once (thread-safe).
    static const Catalog &builtin();

    const ModelShape *model(const std::string &id) const;
    const DeviceProfile *device(const std::string &id) const;
    const FrameworkProfile *framework(const std::string &id) const;

    std::vector<std::string> modelIds() const;
    std::vector<std::string> deviceIds() const;
    std::vector<std::string> frameworkIds() const;

    /// Adds or replaces a device profile (user-defined or calibrated by the runner).
    void addDevice(DeviceProfile d);
    const std::string &dataDir() const { return m_dataDir; }

private:
    std::string m_dataDir;
    std::map<std::string, ModelShape> m_models;
    std::map<std::string, DeviceProfile> m_devices;
    std::map<std::string, FrameworkProfile> m_frameworks;
    std::vector<std::string> m_warnings;
    std::map<std::string, std::string> m_broken; ///< file stem -> why it was skipped
};

/// The running program (/proc/self/exe, symlinks resolved) and the install prefix its place
/// implies if it is installed in <prefix>/<libexecdir>/shardscope (shardscope-cli-qt) or in
/// <prefix>/<bindir> (CMAKE_INSTALL_LIBEXECDIR, CMAKE_INSTALL_BINDIR, however many components);
/// elsewhere, the directory above the program's. Both empty when /proc cannot say.
struct ProgramPlace
{
    std::string program;
    std::string prefix;
};
ProgramPlace programPlace();
/// The install prefix a program's path implies, as programPlace() gives it.
std::string installPrefixOf(const std::string &program);

/// The data directory: $SHARDSCOPE_DATA_DIR, else <prefix>/share/shardscope where <prefix> is
/// the directory the running executable is installed under (so relocated installs work), else
/// the configured install prefix, else the source tree's resources/. Empty when none exists.
std::string locateDataDir();

/// Where user-defined and calibrated device profiles live: $SHARDSCOPE_USER_DEVICES, else
/// $XDG_DATA_HOME/shardscope/devices, else ~/.local/share/shardscope/devices.
std::string userDevicesDir();

} // namespace shardscope
