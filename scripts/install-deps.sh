#!/usr/bin/env bash
# Installs the Debian 12 packages ShardScope needs to build, test and run, if any is missing.
#   install-deps.sh          installs what is missing (sudo when not root)
#   install-deps.sh --list   prints the packages, one a line, and installs nothing
# scripts/check-deps.sh reads the list through --list and checks that it pulls in every package
# a configured build and the tests use.
set -euo pipefail
packages=(
    # build; dpkg-shlibdeps (dpkg-dev) derives the .deb's library dependencies, and CPack's DEB
    # generator runs `file` on every installed binary to find what to pass it
    cmake ninja-build g++ pkg-config ccache dpkg-dev file
    # Qt 6 (Qt6Charts' CMake package needs Qt6OpenGL, whose CMake files are in libqt6opengl6-dev).
    # FindOpenGL, through Qt6Gui, also records EGL and GLU when present: listed so that a fresh
    # machine configures as a developer's does.
    qt6-base-dev qt6-charts-dev libqt6opengl6-dev qt6-tools-dev qt6-l10n-tools linguist-qt6
    libgl-dev libegl-dev libglu1-mesa-dev
    nlohmann-json3-dev libbenchmark-dev libopenblas-dev
    # tests: X server, PDF tools, the report's fonts, packaging validators
    xvfb xauth poppler-utils fonts-dejavu-core fonts-noto-cjk
    desktop-file-utils appstream
    # fuzzing (clang++-14 and its libFuzzer runtime)
    clang-14 libclang-rt-14-dev
    # the PyTorch worker of the kernel runner (/usr/bin/python3)
    python3 python3-torch python3-numpy
)
if [ "${1:-}" = --list ]; then
    printf '%s\n' "${packages[@]}"
    exit 0
fi
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi
echo "Installing: ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
