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

void writeFileAtomically(const std::string &path, const std::string &data)
{
    const fs::path target(path);
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
    // mkstemp creates 0600; a saved plan or profile should be as readable as any other file.
    const mode_t mask = ::umask(0);
    ::umask(mask);
    ::fchmod(fd, 0666 & ~mask);
    size_t done = 0;
    while (done < data.size()) {
        const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            fail("write", errno);
        }
        if (n == 0)
            fail("write", ENOSPC);
        done += size_t(n);
    }
    if (::fsync(fd) != 0 && errno != EINVAL && errno != EROFS)
        fail("fsync", errno);
    if (::close(fd) != 0) {
        const int err = errno;
        ::unlink(tmpl.c_str());
        throw WriteError(path + ": cannot be written (close: " + std::strerror(err) +
                         "); the previous file, if any, is unchanged");
    }
    if (::rename(tmpl.c_str(), path.c_str()) != 0) {
        const int err = errno;
        ::unlink(tmpl.c_str());
        throw WriteError(path + ": cannot be written (rename: " + std::strerror(err) +
                         "); the previous file, if any, is unchanged");
    }
}

} // namespace shardscope
