#include "openblas.h"

#include <cblas.h> // the entry points' types only: the library is not linked

#include <cstdlib>
#include <dlfcn.h>
#include <fstream>
#include <limits>
#include <stdexcept>

#ifndef SHARDSCOPE_OPENBLAS_SONAME
#define SHARDSCOPE_OPENBLAS_SONAME "libopenblas.so.0"
#endif

namespace shardscope::openblas {

namespace {

using SgemmFn = decltype(&::cblas_sgemm);
using ConfigFn = decltype(&::openblas_get_config);

blasint checkedInt(int64_t v, const char *what)
{
    if (v < 0 || v > int64_t(std::numeric_limits<blasint>::max()))
        throw std::out_of_range(std::string("OpenBLAS sgemm: ") + what + " " + std::to_string(v) +
                                " is outside its integer range");
    return blasint(v);
}

} // namespace

std::optional<Library> Library::open(const std::string &file, std::string *error)
{
    auto fail = [&](const std::string &why) -> std::optional<Library> {
        if (error)
            *error = why;
        return std::nullopt;
    };
    void *handle = ::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *why = ::dlerror();
        return fail("cannot open OpenBLAS (" + file + "): " + (why ? why : "unknown error"));
    }
    Library lib;
    lib.sgemm_ = ::dlsym(handle, "cblas_sgemm");
    lib.config_ = ::dlsym(handle, "openblas_get_config");
    if (!lib.sgemm_ || !lib.config_) {
        const char *missing = !lib.sgemm_ ? "cblas_sgemm" : "openblas_get_config";
        ::dlclose(handle);
        return fail(file + " is not OpenBLAS: it has no " + missing);
    }
    return lib;
}

void Library::sgemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha,
                    const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c,
                    int64_t ldc) const
{
    const auto fn = reinterpret_cast<SgemmFn>(sgemm_);
    fn(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, transB ? CblasTrans : CblasNoTrans,
       checkedInt(m, "m"), checkedInt(n, "n"), checkedInt(k, "k"), alpha, a, checkedInt(lda, "lda"), b,
       checkedInt(ldb, "ldb"), beta, c, checkedInt(ldc, "ldc"));
}

std::string Library::config() const
{
    const char *cfg = reinterpret_cast<ConfigFn>(config_)();
    return cfg ? cfg : "";
}

std::string libraryFile()
{
    const char *env = std::getenv("SHARDSCOPE_OPENBLAS");
    return env && *env ? env : SHARDSCOPE_OPENBLAS_SONAME;
}

const Library *library(std::string *error)
{
    struct Opened
    {
        std::optional<Library> lib;
        std::string error;
    };
    static const Opened opened = [] {
        Opened o;
        o.lib = Library::open(libraryFile(), &o.error);
        return o;
    }();
    if (!opened.lib && error)
        *error = opened.error;
    return opened.lib ? &*opened.lib : nullptr;
}

bool mapped()
{
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line)) {
        if (line.find("libopenblas") != std::string::npos)
            return true;
    }
    return false;
}

} // namespace shardscope::openblas
