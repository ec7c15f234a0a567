#pragma once

// OpenBLAS, opened (dlopen) when the native CPU backend first needs it rather than linked.
// A process linked to OpenBLAS starts its thread server while the library loads, and each
// server thread waits for work by spinning on sched_yield for 2^28 cycles (OpenBLAS's
// thread_timeout, driver/others/blas_server.c) before it sleeps: about 0.1 s of a core at every
// start of the CLI and the workbench, taken from the search's threads on a small machine. Opened
// here, the library costs only the processes that run CPU kernels.
//
// The library is SHARDSCOPE_OPENBLAS when that is set (a file name or path), else the soname
// the build found (libopenblas.so.0). An opened library stays open for the process.
#include <cstdint>
#include <optional>
#include <string>

namespace shardscope::openblas {

/// An opened OpenBLAS: the entry points the CPU backend calls.
class Library
{
public:
    /// Opens `file` and looks its entry points up; nothing, with `error` naming the file and the
    /// cause (dlopen's message, or the symbol it lacks), when that fails. Each call opens anew.
    static std::optional<Library> open(const std::string &file, std::string *error = nullptr);

    /// C = alpha op(A) op(B) + beta C, row-major (cblas_sgemm).
    void sgemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha, const float *a,
               int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc) const;
    /// openblas_get_config(): the version, the kernels' target and the threads it was built for.
    std::string config() const;

private:
    void *sgemm_ = nullptr;
    void *config_ = nullptr;
};

/// The file the CPU backend opens: SHARDSCOPE_OPENBLAS, or the build's soname.
std::string libraryFile();

/// The CPU backend's library, opened on the first call (thread-safe) and kept; null, with
/// `error` set, when it cannot be opened (every call then reports the same cause).
const Library *library(std::string *error = nullptr);

/// Whether an OpenBLAS is mapped into this process (from /proc/self/maps).
bool mapped();

} // namespace shardscope::openblas
