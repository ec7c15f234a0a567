// libFuzzer target: the nccl-tests / hccl_test and profiler-trace importers on arbitrary bytes
// (the properties are in input_properties.h).
// A finding is kept as a file of tests/fuzz/corpus-import/ and a row of
// tests/tst_input_regressions.cpp.
#include "input_properties.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const std::string text(reinterpret_cast<const char *>(data), size);
    // Both readers, whatever the text looks like; then the dispatch bench --import uses.
    shardscope::fuzzing::InputCheck c = shardscope::fuzzing::checkCollectiveText(text);
    if (c.violation.empty())
        c = shardscope::fuzzing::checkTraceText(text);
    if (c.violation.empty())
        c = shardscope::fuzzing::checkImportText(text);
    if (!c.violation.empty()) {
        std::fprintf(stderr, "fuzz_import: %s\n", c.violation.c_str());
        std::abort();
    }
    return 0;
}
