#!/usr/bin/env bash
# Installs what is missing, builds, and opens ShardScope on the HCIE-AI case. Without a display
# it prints the command-line estimate of the same case instead.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSHARDSCOPE_BUILD_TESTS=OFF >/dev/null
cmake --build build-release --parallel
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
    exec ./build-release/app/shardscope resources/cases/hcie-ai-ddp.plan.json
fi
./build-release/app/shardscope-cli estimate resources/cases/hcie-ai-ddp.plan.json
exec ./build-release/app/shardscope-cli estimate resources/cases/hcie-ai-fsdp.plan.json
