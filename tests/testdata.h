#pragma once

// Locations the tests read from, set by CTest's environment (tests/CMakeLists.txt).
#include "core/catalog.h"
#include "core/files.h"
#include "core/plan.h"

#include <QByteArray>
#include <QString>

namespace shardscope::testing {

inline QString envPath(const char *name, const char *fallback)
{
    const QByteArray v = qgetenv(name);
    return v.isEmpty() ? QString::fromUtf8(fallback) : QString::fromLocal8Bit(v);
}

/// The repository root.
inline QString sourceDir() { return envPath("SHARDSCOPE_SOURCE_DIR", "."); }
/// ../shared beside the checkout (calibration data, the case text).
inline QString sharedDir() { return envPath("SHARDSCOPE_SHARED_DIR", "../shared"); }

/// resources/cases/<name>.plan.json, e.g. casePath("hcie-ai-ddp").
inline QString casePath(const char *name)
{
    return QString::fromStdString(locateDataDir()) + QStringLiteral("/cases/") + QLatin1String(name) +
           QStringLiteral(".plan.json");
}

/// tests/data/runner/tiny.plan.json: a plan small enough to run for real on a CPU.
inline Plan tinyRunnerPlan()
{
    const QString path = qEnvironmentVariable("SHARDSCOPE_TEST_DATA") + QStringLiteral("/runner/tiny.plan.json");
    return parsePlanText(readTextFile(path.toStdString()), Catalog::builtin());
}

} // namespace shardscope::testing

#include <csignal>
#include <sys/resource.h>

namespace shardscope::testing {

/// Makes every write past `bytes` into a regular file fail (RLIMIT_FSIZE; the write returns
/// EFBIG instead of raising SIGXFSZ, which is ignored meanwhile), the way a full disk makes it
/// fail, without needing a small file system. Restores both on destruction.
class FileSizeLimit
{
public:
    explicit FileSizeLimit(rlim_t bytes)
    {
        m_oldHandler = std::signal(SIGXFSZ, SIG_IGN);
        getrlimit(RLIMIT_FSIZE, &m_old);
        rlimit r = m_old;
        r.rlim_cur = bytes;
        m_ok = setrlimit(RLIMIT_FSIZE, &r) == 0;
    }
    ~FileSizeLimit()
    {
        setrlimit(RLIMIT_FSIZE, &m_old);
        std::signal(SIGXFSZ, m_oldHandler);
    }
    bool active() const { return m_ok; }
    FileSizeLimit(const FileSizeLimit &) = delete;
    FileSizeLimit &operator=(const FileSizeLimit &) = delete;

private:
    rlimit m_old{};
    void (*m_oldHandler)(int) = nullptr;
    bool m_ok = false;
};

} // namespace shardscope::testing
