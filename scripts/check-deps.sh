#!/usr/bin/env bash
# Checks that the packages scripts/install-deps.sh lists pull in every Debian package a configured
# build and the tests use, so that a fresh Debian 12 machine builds and tests ShardScope after
# install-deps.sh alone.
#
#   check-deps.sh BUILD_DIR
#
# The files checked:
#   - the paths CMake found, from BUILD_DIR/CMakeCache.txt: every *_DIR entry (the package's
#     <Name>Config.cmake in it where there is one) and every FILEPATH / PATH entry (libraries,
#     include directories, programs), plus cmake, cpack and ctest themselves;
#   - a fixed list of what the build and the tests run outside CMake: Xvfb, xvfb-run, xauth, the
#     poppler tools, clang++-14 and its libFuzzer runtime, the GCC sanitizer runtimes,
#     appstreamcli, desktop-file-validate, ccache, the OpenBLAS the CPU backend opens at run time,
#     Qt's lupdate / lrelease and offscreen platform plugin, /usr/bin/python3 with its torch and
#     numpy packages, and the report's fonts (DejaVu Sans and Noto Sans CJK SC, regular and
#     bold, as fontconfig picks them).
# Each file's owning package (dpkg -S, for the path as written and for its realpath, both also
# on the other side of the /usr merge) must be in the dependency closure of the list
# (apt-cache depends --recurse --installed, no recommends or suggests). A file of the fixed list
# must exist and be owned by a package; any other path owned by none (/usr/local, the build
# tree) is only noted.
#
# Prints each file whose package is outside the closure and exits 1; otherwise prints one
# summary line and exits 0. Exit 2: usage or a missing CMakeCache.txt.
# SHARDSCOPE_DEPS_LIST_CMD: a shell command that prints the package list one a line, instead
# of `scripts/install-deps.sh --list` (the self-test tests/check_deps_selftest.sh uses it).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -ne 1 ]; then
    echo "usage: $0 BUILD_DIR" >&2
    exit 2
fi
build=$1
cache=$build/CMakeCache.txt
if [ ! -f "$cache" ]; then
    echo "check-deps: $cache not found (configure the build first)" >&2
    exit 2
fi

# ---- The package list and its closure ------------------------------------------------------
list_cmd=${SHARDSCOPE_DEPS_LIST_CMD:-$(printf '%q --list' "$here/install-deps.sh")}
list_name=${SHARDSCOPE_DEPS_LIST_CMD:+"SHARDSCOPE_DEPS_LIST_CMD"}
list_name=${list_name:-"install-deps.sh --list"}
if ! list_out=$(bash -o pipefail -c "$list_cmd"); then
    echo "check-deps: $list_name failed" >&2
    exit 1
fi
mapfile -t listed < <(printf '%s\n' "$list_out" | sed -e 's/#.*//' | tr -s ' \t' '\n' | sed '/^$/d')
if [ ${#listed[@]} -eq 0 ]; then
    echo "check-deps: $list_name printed no packages" >&2
    exit 1
fi
norm() { echo "${1%%:*}"; } # libfoo:amd64 -> libfoo

fail=0
# Every package of the list is installed (else the closure below would silently lack it).
declare -A installed=()
while read -r name status; do
    [ "$status" = installed ] && installed[$(norm "$name")]=1
done < <(dpkg-query -W -f='${binary:Package} ${db:Status-Status}\n' 2>/dev/null)
not_installed=()
for p in "${listed[@]}"; do
    [ -n "${installed[$(norm "$p")]:-}" ] || not_installed+=("$p")
done
if [ ${#not_installed[@]} -gt 0 ]; then
    echo "check-deps: listed but not installed: ${not_installed[*]} (run scripts/install-deps.sh)"
    fail=1
fi

# The closure: every package apt-cache prints in column 0, from the list and the Essential
# packages (on every Debian system: coreutils, dpkg, bash...). Virtual packages (<name>) own no
# files; they are kept apart and counted. Provider lines (four spaces) are recursed into by
# apt-cache itself when installed, so they show up in column 0 too.
mapfile -t essential < <(dpkg-query -W -f='${Package} ${Essential} ${db:Status-Status}\n' |
    awk '$2 == "yes" && $3 == "installed" { print $1 }')
declare -A closure=() virtual=()
while IFS= read -r line; do
    case $line in
    ' '*) ;;
    '<'*) virtual[$(norm "${line:1:${#line}-2}")]=1 ;;
    *) closure[$(norm "$line")]=1 ;;
    esac
done < <(apt-cache depends --recurse --installed --no-recommends --no-suggests --no-conflicts \
    --no-breaks --no-replaces --no-enhances "${listed[@]}" "${essential[@]}" 2>/dev/null)

# ---- The files -----------------------------------------------------------------------------
files=()           # in order
declare -A label=() required=()
add() { # PATH LABEL [required]
    local p=$1
    if [ -z "${label[$p]:-}" ]; then
        files+=("$p")
        label[$p]=$2
    elif [[ " ${label[$p]} " != *" $2 "* ]]; then
        label[$p]+=" $2"
    fi
    [ "${3:-}" = required ] && required[$p]=1
    return 0
}
missing=() # "LABEL: what" of the fixed list that is not on this machine
need() { # LABEL PATH-OR-EMPTY [what it is, for the message]
    if [ -n "$2" ] && [ -e "$2" ]; then
        add "$2" "$1" required
    else
        missing+=("$1: ${3:-${2:-not found}}")
    fi
}

# From the CMake cache. Include directories that hold many packages' headers (/usr/include)
# are checked through the header the find module looked for.
declare -A header=(
    [OPENGL_INCLUDE_DIR]=GL/gl.h [OPENGL_GLX_INCLUDE_DIR]=GL/glx.h
    [OPENGL_EGL_INCLUDE_DIR]=EGL/egl.h [Vulkan_INCLUDE_DIR]=vulkan/vulkan.h
    [SHARDSCOPE_CBLAS_INCLUDE_DIR]=cblas.h
)
while IFS=$'\t' read -r name type value; do
    case $name in
    CMAKE_INSTALL_* | CMAKE_CACHEFILE_DIR | CMAKE_HOME_DIRECTORY | CMAKE_FIND_PACKAGE_REDIRECTS_DIR | \
        *_BINARY_DIR | *_SOURCE_DIR) continue ;;
    esac
    take=0
    case $type in FILEPATH | PATH) take=1 ;; esac
    case $name in
    *_DIR) [ "$type" = STATIC ] || take=1 ;;
    CMAKE_COMMAND | CMAKE_CPACK_COMMAND | CMAKE_CTEST_COMMAND) take=1 ;;
    esac
    [ $take = 1 ] || continue
    IFS=';' read -ra values <<<"$value"
    for v in "${values[@]}"; do
        if [[ $v != /* ]] || [ ! -e "$v" ]; then
            continue
        fi
        p=$v
        if [ -d "$v" ]; then
            base=${name%_DIR}
            if [[ $name == *_DIR ]] && [ -f "$v/${base}Config.cmake" ]; then
                p=$v/${base}Config.cmake
            elif [[ $name == *_DIR ]] && [ -f "$v/${base,,}-config.cmake" ]; then
                p=$v/${base,,}-config.cmake
            elif [ -n "${header[$name]:-}" ] && [ -e "$v/${header[$name]}" ]; then
                p=$v/${header[$name]}
            fi
        fi
        add "$p" "$name"
    done
done < <(awk '/^[A-Za-z0-9_.+-]+:[A-Z]+=/ {
    i = index($0, ":"); j = index($0, "=")
    print substr($0, 1, i - 1) "\t" substr($0, i + 1, j - i - 1) "\t" substr($0, j + 1) }' "$cache")

# From the generated build: every file the configure step read (build.ninja reruns CMake when
# one changes: the Qt6*Config.cmake files, CMake's own modules), the include directories, the
# libraries linked and the tools run (moc, uic, rcc, cmake). Source and build tree left out.
gen=()
if [ -f "$build/build.ninja" ]; then
    gen=("$build/build.ninja")
    [ -f "$build/rules.ninja" ] && gen+=("$build/rules.ninja")
    [ -f "$build/CMakeFiles/rules.ninja" ] && gen+=("$build/CMakeFiles/rules.ninja")
elif [ -f "$build/CMakeFiles/Makefile.cmake" ]; then
    mapfile -t gen < <(find "$build" -name flags.make -o -name link.txt)
    gen+=("$build/CMakeFiles/Makefile.cmake")
fi
if [ ${#gen[@]} -gt 0 ]; then
    while IFS= read -r p; do
        [ -e "$p" ] && add "$p" "$(basename "${gen[0]}")"
    done < <(grep -ohE "(^|[][ =:;'\"(])/(usr|lib|lib32|lib64|bin|sbin|opt|etc)/[^] :;\"'\$()]+" "${gen[@]}" |
        sed -E "s/^[][ =:;'\"(]//" | sort -u)
fi

# The fixed list: what the build and the tests run outside the cache.
for tool in Xvfb xvfb-run xauth pdftotext pdftoppm pdfinfo pdffonts clang-14 clang++-14 \
    appstreamcli desktop-file-validate ccache file ldd; do
    need "$tool" "$(command -v "$tool" || true)" "$tool is not on PATH"
done
arch=$(uname -m)
if command -v clang++-14 >/dev/null; then
    rt=$(clang++-14 -print-runtime-dir 2>/dev/null || true)
    need "libFuzzer runtime" "$rt/libclang_rt.fuzzer-$arch.a" "$rt/libclang_rt.fuzzer-$arch.a"
else
    missing+=("libFuzzer runtime: clang++-14 is not on PATH")
fi
if command -v g++ >/dev/null; then
    for lib in libasan.so libubsan.so; do
        f=$(g++ -print-file-name=$lib)
        need "g++ $lib" "$(realpath -e "$f" 2>/dev/null || true)" "g++ finds no $lib"
    done
fi
# The OpenBLAS the CPU backend opens at run time (runner/openblas.h), as the loader finds it.
soname=$(sed -n 's/^SHARDSCOPE_OPENBLAS_SONAME:STRING=//p' "$cache")
if [ -n "$soname" ]; then
    f=$soname
    if [[ $soname != /* ]]; then
        f=$({ /sbin/ldconfig -p 2>/dev/null || true; } | awk -v n="$soname" '$1 == n { print $NF; exit }')
    fi
    need "OpenBLAS $soname" "$f" "the dynamic loader finds no $soname"
fi
qtbins=/usr/lib/qt6/bin
qtplugins=
if [ -x "$qtbins/qtpaths6" ]; then
    qtbins=$("$qtbins/qtpaths6" --query QT_INSTALL_BINS)
    qtplugins=$("$qtbins/qtpaths6" --query QT_INSTALL_PLUGINS)
fi
for tool in lupdate lrelease; do
    need "$tool" "$qtbins/$tool" "$qtbins/$tool"
done
need "Qt offscreen platform plugin" "${qtplugins:+$qtplugins/platforms/libqoffscreen.so}" \
    "${qtplugins:-qtpaths6 not found}/platforms/libqoffscreen.so"
python=/usr/bin/python3
need python3 "$([ -x $python ] && echo $python)" "$python"
if [ -x $python ]; then
    while read -r module dir; do
        need "python3 module $module" "$([ "$dir" != - ] && echo "$dir")" \
            "$python $(
                $python -c 'import sys; print("%d.%d" % sys.version_info[:2])'
            ) cannot import $module"
    done < <($python - <<'PY'
import importlib.util
for name in ("torch", "numpy"):
    try:
        spec = importlib.util.find_spec(name)
    except Exception:
        spec = None
    locations = list(spec.submodule_search_locations or []) if spec else []
    print(name, locations[0] if locations else "-")
PY
    )
fi
# report/reportcanvas.cpp: DejaVu Sans for Latin, Noto Sans CJK SC for Chinese; regular and bold.
for font in 'DejaVu Sans' 'DejaVu Sans:bold' 'Noto Sans CJK SC' 'Noto Sans CJK SC:bold'; do
    family=${font%%:*}
    f=
    if command -v fc-match >/dev/null; then
        match=$(fc-match -f '%{family}\t%{file}' "$font" 2>/dev/null || true)
        [[ ",${match%%$'\t'*}," == *",$family,"* ]] && f=${match#*$'\t'}
    fi
    need "font $font" "$f" "fontconfig has no $family"
done

# ---- Owners ----------------------------------------------------------------------------------
# dpkg records paths as the packages ship them: /lib/... for some, /usr/lib/... for others.
merged() {
    case $1 in
    /usr/bin/* | /usr/sbin/* | /usr/lib/* | /usr/lib32/* | /usr/lib64/* | /usr/libx32/*) echo "${1#/usr}" ;;
    /bin/* | /sbin/* | /lib/* | /lib32/* | /lib64/* | /libx32/*) echo "/usr$1" ;;
    esac
}
declare -A real=() queried=()
queries=()
ask() {
    local q
    for q in "$1" $(merged "$1"); do
        [ -n "${queried[$q]:-}" ] || { queried[$q]=1; queries+=("$q"); }
    done
}
for p in "${files[@]}"; do
    r=$(realpath -e -- "$p" 2>/dev/null || echo "$p")
    real[$p]=$r
    ask "$p"
    [ "$r" = "$p" ] || [ "$(merged "$r")" = "$p" ] || ask "$r"
done
declare -A owners=()
if [ ${#queries[@]} -gt 0 ]; then
    while IFS= read -r line; do
        case $line in "diversion by "*) continue ;; esac
        [[ $line == *': /'* ]] || continue
        who=${line%%: /*}
        path=/${line#*: /}
        for o in ${who//,/ }; do
            owners[$path]+=" $(norm "$o")"
        done
    done < <(dpkg-query -S -- "${queries[@]}" 2>/dev/null || true)
fi
owners_of() { # PATH -> the owners of it and of its /usr-merge twin
    local q out=""
    for q in "$1" $(merged "$1"); do out+="${owners[$q]:-}"; done
    echo "$out"
}

outside=() unowned=()
declare -A used=() bad_pkgs=()
for p in "${files[@]}"; do
    forms=("$p")
    r=${real[$p]}
    [ "$r" = "$p" ] || [ "$(merged "$r")" = "$p" ] || forms+=("$r")
    any=0
    for f in "${forms[@]}"; do
        read -ra os <<<"$(owners_of "$f")"
        [ ${#os[@]} -gt 0 ] || continue
        any=1
        ok=0
        for o in "${os[@]}"; do # a directory has many owners: one in the closure will do
            if [ -n "${closure[$o]:-}" ]; then
                ok=1
                used[$o]=1
                break
            fi
        done
        if [ $ok = 0 ]; then
            shown=$f
            [ "$f" = "$p" ] || shown="$p -> $f"
            outside+=("$shown (${label[$p]}): ${os[*]}")
            for o in "${os[@]}"; do bad_pkgs[$o]=1; done
        fi
    done
    if [ $any = 0 ]; then
        if [ -n "${required[$p]:-}" ]; then
            outside+=("$p (${label[$p]}): owned by no Debian package")
        else
            unowned+=("$p (${label[$p]})")
        fi
    fi
done

for u in "${unowned[@]}"; do
    echo "check-deps: note: owned by no package (not checked): $u"
done
if [ ${#missing[@]} -gt 0 ]; then
    for m in "${missing[@]}"; do
        echo "check-deps: missing: $m"
    done
    fail=1
fi
if [ ${#outside[@]} -gt 0 ]; then
    echo "check-deps: these files come from packages outside the closure of $list_name:"
    for o in "${outside[@]}"; do
        echo "  $o"
    done
    [ ${#bad_pkgs[@]} -eq 0 ] ||
        echo "check-deps: packages outside the closure:" \
            "$(printf '%s\n' "${!bad_pkgs[@]}" | sort | paste -sd ' ')"
    fail=1
fi
if [ $fail != 0 ]; then
    exit 1
fi
echo "check-deps: ${#files[@]} files, ${#used[@]} packages, all in the closure of $list_name" \
    "(${#listed[@]} packages listed + ${#essential[@]} essential, ${#closure[@]} in the closure," \
    "${#virtual[@]} virtual)"
