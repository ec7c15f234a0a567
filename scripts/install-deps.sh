#!/usr/bin/env bash
# Installs the Debian 12 packages ShardScope needs to build, test and run, if any is missing.
set -euo pipefail
packages=(
    cmake ninja-build g++ pkg-config
    qt6-base-dev qt6-charts-dev qt6-tools-dev qt6-l10n-tools linguist-qt6 libgl-dev
    nlohmann-json3-dev libbenchmark-dev libopenblas-dev
    xvfb xauth poppler-utils fonts-dejavu-core fonts-noto-cjk
    desktop-file-utils appstream
    clang-14 libclang-rt-14-dev
    python3 python3-torch python3-numpy
)
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
