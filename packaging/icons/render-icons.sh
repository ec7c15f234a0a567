#!/usr/bin/env bash
# Renders the committed PNG icons from the SVG (run after editing the SVG; needs rsvg-convert
# from librsvg2-bin). The build installs the committed files and needs no renderer.
set -euo pipefail
cd "$(dirname "$0")"
id=io.github.shardscope.ShardScope
for size in 16 22 24 32 48 64 128 256; do
    rsvg-convert -w "$size" -h "$size" "$id.svg" -o "$id-$size.png"
done
