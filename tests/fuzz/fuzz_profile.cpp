// libFuzzer target: the device and framework profile readers on arbitrary bytes
// (the properties are in input_properties.h).
// A finding is kept as a file of tests/fuzz/corpus-profile/ and a row of
// tests/tst_input_regressions.cpp.
#include "input_properties.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const std::string text(reinterpret_cast<const char *>(data), size);
    shardscope::fuzzing::InputCheck c = shardscope::fuzzing::checkDeviceText(text);
    if (c.violation.empty())
        c = shardscope::fuzzing::checkFrameworkText(text);
    if (!c.violation.empty()) {
        std::fprintf(stderr, "fuzz_profile: %s\n", c.violation.c_str());
        std::abort();
    }
    return 0;
}
