#!/usr/bin/env bash
# Self-test of scripts/check-deps.sh against a configured build directory (default build-test):
#   - with the list of scripts/install-deps.sh less libqt6opengl6-dev (which Qt6Charts' CMake
#     package needs) it exits 1 and names libqt6opengl6-dev;
#   - with the whole list it exits 0.
# Usage: tests/check_deps_selftest.sh [BUILD_DIR]
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build-test}
check=$src/scripts/check-deps.sh
list=$(printf '%q --list' "$src/scripts/install-deps.sh")
fail() {
    echo "check_deps_selftest: FAIL: $*" >&2
    exit 1
}

status=0
out=$(SHARDSCOPE_DEPS_LIST_CMD="$list | grep -vx libqt6opengl6-dev" "$check" "$build" 2>&1) || status=$?
[ $status -eq 1 ] || { echo "$out"; fail "without libqt6opengl6-dev: exit $status, expected 1"; }
grep -q 'Qt6OpenGL.*: libqt6opengl6-dev$' <<<"$out" ||
    { echo "$out"; fail "without libqt6opengl6-dev: the Qt6OpenGL files are not reported"; }

status=0
out=$("$check" "$build" 2>&1) || status=$?
[ $status -eq 0 ] || { echo "$out"; fail "with the whole list: exit $status, expected 0"; }
grep -q 'all in the closure' <<<"$out" || { echo "$out"; fail "no summary line"; }
echo "check_deps_selftest: PASS (exit 1 naming libqt6opengl6-dev without it, 0 with the whole list)"
