#!/usr/bin/env bash
# Installs what is missing, builds everything and runs the whole test suite headless.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
export QT_QPA_PLATFORM=offscreen
jobs=$(nproc)
# One compiler cache for every stage below, and for any checkout of the project: paths under the
# checkout are hashed relative to it and the working directory is left out of the hash, so a
# fresh clone reuses what an earlier clone compiled (debug info may then name that clone's
# directory; nothing here reads it).
launcher=()
if command -v ccache >/dev/null; then
    export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
start=$SECONDS
cmake -S . -B build-test -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" >/dev/null
# Every package the configured build and the tests use is pulled in by install-deps.sh's list
# (a fresh machine gets it all from install-deps.sh); the self-test shows the check can fail.
./scripts/check-deps.sh build-test
./tests/check_deps_selftest.sh build-test
cmake --build build-test --parallel "$jobs"
ctest --test-dir build-test --output-on-failure --parallel "$jobs" --timeout 600
echo "Main stage (build, dependency check, all tests): $((SECONDS - start)) s"

# Reliability stages, each in its own build directory with only the targets it needs.

# The core and CLI tests (label "core") again under AddressSanitizer + UndefinedBehaviorSanitizer,
# in a Debug build (assertions on) at -O1, as the sanitizers' documentation advises: the searches'
# long tests run in 80 s there against 220 s at -O0. SHARDSCOPE_TEST_SANITIZE=0 skips this stage.
if [ "${SHARDSCOPE_TEST_SANITIZE:-1}" != 0 ]; then
    start=$SECONDS
    cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-g -O1" \
        -DSHARDSCOPE_SANITIZE=ON \
        -DSHARDSCOPE_BUILD_GUI=OFF -DSHARDSCOPE_BUILD_BENCHMARKS=OFF "${launcher[@]}" >/dev/null
    cmake --build build-asan --parallel "$jobs" --target shardscope_core_checks
    # QtTest's watchdog (300 s a test function by default) can carry its deadline over from one
    # function to the next on a loaded machine (Qt 6.4: it fired 42 s into tst_search's
    # floorIsBelowEstimate after 480 s of earlier functions). Here ctest's timeout bounds each test.
    QTEST_FUNCTION_TIMEOUT=850000 \
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        ctest --test-dir build-asan -L core --output-on-failure --parallel "$jobs" --timeout 900
    echo "Sanitizer stage (ASan + UBSan, core and CLI tests): $((SECONDS - start)) s"
fi

# libFuzzer over plan parsing, validation, estimate and save/load (tests/fuzz/), for a bounded
# time from the seed corpus. A finding is written to build-fuzz/findings/: fix it and keep it as
# a corpus file and a row of tests/tst_plan_regressions.cpp. SHARDSCOPE_TEST_FUZZ=0 skips this
# stage; SHARDSCOPE_FUZZ_SECONDS sets its length (default 60).
if [ "${SHARDSCOPE_TEST_FUZZ:-1}" != 0 ]; then
    start=$SECONDS
    CC=clang-14 CXX=clang++-14 cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DSHARDSCOPE_FUZZ=ON -DSHARDSCOPE_BUILD_GUI=OFF -DSHARDSCOPE_BUILD_TESTS=OFF \
        -DSHARDSCOPE_BUILD_BENCHMARKS=OFF "${launcher[@]}" >/dev/null
    cmake --build build-fuzz --parallel "$jobs" --target fuzz_plan
    mkdir -p build-fuzz/corpus build-fuzz/findings
    if ! SHARDSCOPE_DATA_DIR="$PWD/resources" build-fuzz/tests/fuzz/fuzz_plan \
        -max_total_time="${SHARDSCOPE_FUZZ_SECONDS:-60}" -timeout=10 -rss_limit_mb=2048 \
        -dict=tests/fuzz/plan.dict -artifact_prefix=build-fuzz/findings/ -print_final_stats=1 \
        build-fuzz/corpus tests/fuzz/corpus >build-fuzz/fuzz.log 2>&1; then
        tail -n 80 build-fuzz/fuzz.log
        echo "fuzz_plan found a problem; the input is in build-fuzz/findings/" >&2
        exit 1
    fi
    grep -E '^(Done|stat::number_of_executed_units|stat::new_units_added)' build-fuzz/fuzz.log
    # The readers of measurements and profiles, SHARDSCOPE_FUZZ_INPUT_SECONDS each (default 20):
    # imports (nccl-tests, hccl_test, traces) seeded with tests/data/runner, device and
    # framework profiles seeded with resources/, Hugging Face configs.
    cmake --build build-fuzz --parallel "$jobs" --target fuzz_import fuzz_profile fuzz_hfconfig
    for target in import profile hfconfig; do
        seeds=(tests/fuzz/corpus-$target)
        case $target in
            import) seeds+=(tests/data/runner) ;;
            profile) seeds+=(resources/devices resources/frameworks) ;;
        esac
        mkdir -p "build-fuzz/corpus-$target"
        if ! build-fuzz/tests/fuzz/fuzz_$target -max_total_time="${SHARDSCOPE_FUZZ_INPUT_SECONDS:-20}" \
            -timeout=10 -rss_limit_mb=2048 -artifact_prefix=build-fuzz/findings/ -print_final_stats=1 \
            "build-fuzz/corpus-$target" "${seeds[@]}" >"build-fuzz/fuzz-$target.log" 2>&1; then
            tail -n 80 "build-fuzz/fuzz-$target.log"
            echo "fuzz_$target found a problem; the input is in build-fuzz/findings/" >&2
            exit 1
        fi
        echo "fuzz_$target: $(grep -E '^stat::number_of_executed_units' "build-fuzz/fuzz-$target.log")"
    done
    echo "Fuzz stage (fuzz_plan, fuzz_import, fuzz_profile, fuzz_hfconfig): $((SECONDS - start)) s"
fi
