#include "files.h"

#include "errors.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

namespace shardscope {

namespace fs = std::filesystem;

namespace {

std::string mib(size_t bytes)
{
    return std::to_string(bytes >> 20) + " MiB";
}

} // namespace

std::string readTextFile(const std::string &path, size_t maxBytes)
{
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    if (fs::is_directory(st))
        throw PlanError(path, "is a directory, not a file");
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw PlanError(path, ec && ec != std::errc::no_such_file_or_directory
                                  ? "cannot be read (" + ec.message() + ")"
                                  : "cannot be read (no such file or no permission)");
    // Read at most maxBytes + 1, so that a device (/dev/zero) or a huge file is refused instead
    // of filling memory.
    std::string out;
    char buf[65536];
    while (in) {
        in.read(buf, sizeof buf);
        out.append(buf, size_t(in.gcount()));
        if (out.size() > maxBytes)
            throw PlanError(path, "is larger than " + mib(maxBytes) +
                                      ", the most ShardScope reads from such a file (is it the "
                                      "right file?)");
    }
    if (in.bad())
        throw PlanError(path, "cannot be read (read error)");
    return out;
}

namespace {

/// Writes all of `data` to `fd`; returns errno, 0 on success.
int writeAll(int fd, const std::string &data)
{
    size_t done = 0;
    while (done < data.size()) {
        const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        if (n == 0)
            return ENOSPC;
        done += size_t(n);
    }
    return 0;
}

} // namespace

void writeFileAtomically(const std::string &path, const std::string &data)
{
    std::error_code ec;
    fs::path target(path);
    // A link is followed: the file it names is replaced and the link stays.
    if (fs::is_symlink(fs::symlink_status(target, ec))) {
        const fs::path resolved = fs::canonical(target, ec);
        if (!ec)
            target = resolved;
    }
    const fs::file_status st = fs::status(target, ec);
    if (fs::is_directory(st))
        throw WriteError(path + ": cannot be written (it is a directory)");
    if (fs::exists(st) && !fs::is_regular_file(st)) {
        // A device or a pipe (/dev/stdout, a FIFO): there is no file to keep, so the bytes go
        // straight to it. Renaming over it would replace the device node itself.
        const int fd = ::open(target.c_str(), O_WRONLY | O_CLOEXEC);
        if (fd < 0)
            throw WriteError(path + ": cannot be written (" + std::strerror(errno) + ")");
        const int err = writeAll(fd, data);
        const int closed = ::close(fd);
        if (err != 0 || closed != 0)
            throw WriteError(path + ": cannot be written (" + std::strerror(err ? err : errno) + ")");
        return;
    }
    const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
    std::string tmpl = (dir / ("." + target.filename().string() + ".XXXXXX")).string();
    const int fd = ::mkstemp(tmpl.data());
    if (fd < 0)
        throw WriteError(path + ": cannot be written (" + std::strerror(errno) + ")");
    auto fail = [&](const char *what, int err) {
        ::close(fd);
        ::unlink(tmpl.c_str());
        throw WriteError(path + ": cannot be written (" + what + ": " + std::strerror(err) +
                         "); the previous file, if any, is unchanged");
    };
    // mkstemp creates 0600: the file keeps the mode of the one it replaces, and a new one gets
    // the usual 0666 less the umask.
    if (fs::exists(st)) {
        ::fchmod(fd, mode_t(st.permissions()) & 07777);
    } else {
        const mode_t mask = ::umask(0);
        ::umask(mask);
        ::fchmod(fd, 0666 & ~mask);
    }
    if (const int err = writeAll(fd, data); err != 0)
        fail("write", err);
    if (::fsync(fd) != 0 && errno != EINVAL && errno != EROFS)
        fail("fsync", errno);
    if (::close(fd) != 0) {
        const int err = errno;
        ::unlink(tmpl.c_str());
        throw WriteError(path + ": cannot be written (close: " + std::strerror(err) +
                         "); the previous file, if any, is unchanged");
    }
    if (::rename(tmpl.c_str(), target.c_str()) != 0) {
        const int err = errno;
        ::unlink(tmpl.c_str());
        throw WriteError(path + ": cannot be written (rename: " + std::strerror(err) +
                         "); the previous file, if any, is unchanged");
    }
}

} // namespace shardscope
