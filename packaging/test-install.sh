#!/usr/bin/env bash
# Builds the .deb from a configured and built tree, checks what it holds, and runs the installed
# shardscope-cli from it without SHARDSCOPE_DATA_DIR:
#   1. unpacked with `dpkg -x` into a temporary prefix (a relocated install), also through a symlink;
#   2. installed with `dpkg -i` when running as root (as CI does), then removed again unless it
#      was installed before. SHARDSCOPE_TEST_DPKG_INSTALL=0 skips this step.
# Usage: test-install.sh BUILD_DIR SOURCE_DIR VERSION
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
version=$3
unset SHARDSCOPE_DATA_DIR
export QT_QPA_PLATFORM=offscreen

tmp=$(mktemp -d "${TMPDIR:-/tmp}/shardscope-pkg.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() {
    echo "FAIL: $*" >&2
    exit 1
}

echo "== cpack -G DEB"
cpack --config "$build/CPackConfig.cmake" -G DEB -B "$tmp/pkg" >"$tmp/cpack.log" 2>&1 ||
    { cat "$tmp/cpack.log"; fail "cpack -G DEB"; }
deb=$(ls "$tmp"/pkg/shardscope_"$version"_*.deb 2>/dev/null | head -n1)
[ -n "$deb" ] || { cat "$tmp/cpack.log"; fail "no shardscope_${version}_*.deb produced"; }
dpkg-deb --field "$deb" Package Version Depends Recommends
[ "$(dpkg-deb --field "$deb" Package)" = shardscope ] || fail "package name is not shardscope"
# Opened at run time by the CPU backend, so named by hand (packaging/CMakeLists.txt).
dpkg-deb --field "$deb" Depends | tr ',' '\n' | grep -qx ' *libopenblas0' ||
    fail "the package does not depend on libopenblas0"

echo "== contents"
dpkg-deb --contents "$deb" | awk '{print $6}' | sed 's|^\./|/|' >"$tmp/contents"
expect() {
    grep -qx "$1" "$tmp/contents" || fail "the package lacks $1"
}
expect /usr/bin/shardscope-cli
expect /usr/libexec/shardscope/shardscope-cli-qt
expect /usr/share/shardscope/cases/hcie-ai-fsdp.plan.json
# Every data directory of the source tree is installed (presets, devices, frameworks, cases, the
# worker, translations: whatever resources/ holds).
for dir in "$src"/resources/*/; do
    name=$(basename "$dir")
    grep -q "^/usr/share/shardscope/$name/" "$tmp/contents" ||
        fail "resources/$name is not installed under /usr/share/shardscope"
done
gui=OFF
grep -q '^SHARDSCOPE_BUILD_GUI:BOOL=ON' "$build/CMakeCache.txt" && gui=ON
if [ "$gui" = ON ]; then
    id=io.github.shardscope.ShardScope
    expect /usr/bin/shardscope
    expect /usr/share/applications/$id.desktop
    expect /usr/share/metainfo/$id.metainfo.xml
    expect /usr/share/icons/hicolor/scalable/apps/$id.svg
    for size in 16 22 24 32 48 64 128 256; do
        expect /usr/share/icons/hicolor/${size}x${size}/apps/$id.png
    done
fi

# Runs the installed CLI: --version names the data directory it found, estimate works on an
# installed case file, report renders it, the CPU backend runs a plan's kernels.
check_cli() {
    local cli=$1 data=$2
    local out
    out=$("$cli" --version) || fail "$cli --version"
    echo "$out"
    grep -qx "shardscope-cli $version" <<<"$out" || fail "$cli --version does not say $version"
    grep -qx "data directory: $data" <<<"$out" || fail "$cli does not use $data"
    "$cli" estimate "$data/cases/hcie-ai-fsdp.plan.json" >"$tmp/estimate.txt" ||
        { cat "$tmp/estimate.txt"; fail "$cli estimate"; }
    grep -q '^Verdict: ' "$tmp/estimate.txt" || fail "$cli estimate printed no verdict"
    grep '^Verdict: ' "$tmp/estimate.txt"
    # shardscope-cli links no Qt; it runs the help, report and bench through
    # shardscope-cli-qt from <prefix>/libexec/shardscope, with the data directory found here.
    if ldd "$cli" | grep -q 'libQt6'; then
        fail "$cli links Qt"
    fi
    LANGUAGE= LC_ALL=C.UTF-8 "$cli" search --help | grep -q '^Usage: shardscope-cli search' || fail "$cli search --help"
    rm -f "$tmp/report.pdf"
    "$cli" report "$data/cases/hcie-ai-fsdp.plan.json" -o "$tmp/report.pdf" >"$tmp/report.txt" 2>&1 ||
        { cat "$tmp/report.txt"; fail "$cli report"; }
    pdftotext "$tmp/report.pdf" "$tmp/report-text.txt" || fail "$cli report wrote no PDF"
    grep -q 'hcie-ai-fsdp.plan.json' "$tmp/report-text.txt" || fail "$cli report wrote no report of the case"
    echo "report: $(cat "$tmp/report.txt")"
    # The CPU backend opens OpenBLAS at run time: one GEMM on it.
    "$cli" bench "$src/tests/data/runner/tiny.plan.json" --backend cpu --repeats 1 --no-probe \
        >"$tmp/bench.txt" 2>&1 || { cat "$tmp/bench.txt"; fail "$cli bench --backend cpu"; }
    grep -q '^Backend: cpu on cpu .*OpenBLAS' "$tmp/bench.txt" || { cat "$tmp/bench.txt"; fail "$cli bench ran without OpenBLAS"; }
    grep '^Backend: ' "$tmp/bench.txt"
    # shardscope-cli-qt run by hand (not through shardscope-cli, which hands it the data
    # directory) finds the same one from its own place in <prefix>/libexec/shardscope.
    local qt
    qt=$(dirname "$(readlink -f "$cli")")/../libexec/shardscope/shardscope-cli-qt
    out=$("$qt" --version) || fail "$qt --version"
    grep -qx "data directory: $data" <<<"$out" || { echo "$out"; fail "$qt by hand does not use $data"; }
}

echo "== relocated: dpkg -x into $tmp/root"
dpkg -x "$deb" "$tmp/root"
check_cli "$tmp/root/usr/bin/shardscope-cli" "$tmp/root/usr/share/shardscope"
ln -s "$tmp/root/usr/bin/shardscope-cli" "$tmp/shardscope-cli"
check_cli "$tmp/shardscope-cli" "$tmp/root/usr/share/shardscope"
if [ "$gui" = ON ]; then
    if ldd "$tmp/root/usr/bin/shardscope" | grep 'not found'; then
        fail "the installed GUI misses libraries"
    fi
    # The installed workbench opens the installed case and draws it (offscreen, own settings).
    mkdir -p "$tmp/home/runtime"
    chmod 700 "$tmp/home/runtime"
    HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/home/.config" XDG_DATA_HOME="$tmp/home/.local/share" \
        XDG_CACHE_HOME="$tmp/home/.cache" XDG_RUNTIME_DIR="$tmp/home/runtime" \
        timeout 120 "$tmp/root/usr/bin/shardscope" --screenshot "$tmp/window.png" ||
        fail "the installed shardscope did not start"
    [ -s "$tmp/window.png" ] || fail "the installed shardscope drew nothing"
    echo "installed shardscope drew its window"
fi

if [ "$(id -u)" -eq 0 ] && [ "${SHARDSCOPE_TEST_DPKG_INSTALL:-1}" != 0 ]; then
    echo "== dpkg -i"
    (
        # One package test at a time touches the system's package database.
        flock 9
        before=$(dpkg-query -W -f='${Status}' shardscope 2>/dev/null || true)
        if ! dpkg -i "$deb"; then
            [[ "$before" == *"install ok installed"* ]] || dpkg --purge shardscope >/dev/null || true
            fail "dpkg -i $deb"
        fi
        status=0
        (check_cli /usr/bin/shardscope-cli /usr/share/shardscope) || status=$?
        if [[ "$before" != *"install ok installed"* ]]; then
            dpkg --purge shardscope >/dev/null || fail "dpkg --purge shardscope"
        fi
        exit $status
    ) 9>"${TMPDIR:-/tmp}/shardscope-dpkg-test.lock"
else
    echo "== dpkg -i skipped (not root)"
fi
echo "PASS"
