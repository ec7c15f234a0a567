// libFuzzer target over plan files: parsing, validation, the estimate and save/load round trips
// (the properties are in plan_properties.h). Run with the seed corpus in corpus/:
//   fuzz_plan -max_total_time=60 corpus-work/ tests/fuzz/corpus/
// A finding is kept as a corpus file and a row of tests/tst_plan_regressions.cpp.
#include "core/catalog.h"
#include "plan_properties.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

const shardscope::Catalog *g_catalog = nullptr;

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
    const std::string dir = shardscope::locateDataDir();
    if (dir.empty()) {
        std::fprintf(stderr, "fuzz_plan: no data directory; set SHARDSCOPE_DATA_DIR\n");
        std::abort();
    }
    static const shardscope::Catalog catalog = shardscope::Catalog::load(dir);
    g_catalog = &catalog;
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const std::string text(reinterpret_cast<const char *>(data), size);
    const shardscope::fuzzing::PlanCheck check = shardscope::fuzzing::checkPlanText(text, *g_catalog);
    if (!check.violation.empty()) {
        std::fprintf(stderr, "fuzz_plan: %s\n", check.violation.c_str());
        std::abort();
    }
    return 0;
}
