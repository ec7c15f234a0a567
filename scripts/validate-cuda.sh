#!/usr/bin/env bash
# Checks the kernel runner's torch backend on one NVIDIA GPU: builds shardscope-cli, runs
# `bench` with the torch backend on cuda for the HCIE-AI case (one process: the case's
# collectives are skipped on a single GPU), and prints
#   - the runner's bf16 8192^3 GEMM against plain torch.matmul timed in the same run (within 5%),
#   - the attention rates of the plan's shapes,
#   - the memory probe's measured peak allocated and reserved against the engine's prediction
#     (the caching allocator replayed over its timeline), and a recorded memory snapshot of the
#     probe's step ($BUILD/validate-cuda.snapshot.json) to overlay on the predicted timeline.
# Needs a Python with PyTorch 2.x (CUDA), CMake >= 3.25, Ninja, Qt 6.4+ Core and nlohmann-json.
#
#   scripts/validate-cuda.sh [PLAN.plan.json]      (PYTHON=/path/to/python to choose one)
#
# DEVICE=cpu GEMM=1024 scripts/validate-cuda.sh rehearses the same steps and table on the CPU
# (torch's CPU backend) where no GPU is attached; its figures say nothing about a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
PLAN=${1:-resources/cases/hcie-ai-fsdp.plan.json}
PYTHON=${PYTHON:-$(command -v python3)}
BUILD=${BUILD:-build-validate}
OUT=${OUT:-$BUILD/validate-cuda.results.json}
DEVICE=${DEVICE:-cuda}
GEMM=${GEMM:-8192}
export DEVICE GEMM

"$PYTHON" - <<'PY'
import os
import sys
import torch
if os.environ["DEVICE"] == "cpu":
    print("python %s, torch %s, CPU rehearsal" % (sys.executable, torch.__version__))
    sys.exit(0)
if not torch.cuda.is_available():
    sys.exit("validate-cuda: torch.cuda.is_available() is False (no GPU or a CPU-only torch)")
print("python %s, torch %s, %s" % (sys.executable, torch.__version__, torch.cuda.get_device_name(0)))
PY

cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSHARDSCOPE_BUILD_GUI=OFF \
    -DSHARDSCOPE_BUILD_TESTS=OFF -DSHARDSCOPE_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build "$BUILD" --target shardscope-cli

"$BUILD/app/shardscope-cli" bench "$PLAN" --backend torch --device "$DEVICE" --python "$PYTHON" \
    --nproc 1 --gemm "${GEMM}x${GEMM}x${GEMM}:bf16" --reference --warmup 5 --repeats 20 \
    -o "$OUT" --profile "$BUILD/validate-cuda.profile.json" \
    $([ "$DEVICE" != cpu ] && echo --snapshot "$BUILD/validate-cuda.snapshot.json")

"$PYTHON" - "$OUT" <<'PY'
import json
import os
import sys

r = json.load(open(sys.argv[1]))
n = int(os.environ["GEMM"])
kernels = {k["name"]: k for k in r["kernels"]}
ok = True
print()
print("Validation on %s (%s, %s)" % (r["backend"]["device_name"], r["backend"]["interpreter"],
                                      r["backend"]["versions"]))
print("%-34s %12s %12s %8s" % ("bf16 GEMM %d^3" % n, "runner", "torch.matmul", "diff"))
g = kernels.get("extra.gemm_%dx%dx%d_bf16" % (n, n, n), {}).get("measured", {})
if g.get("status") == "ok" and g.get("reference_time_s"):
    flops = 2 * n ** 3
    runner, ref = flops / g["time_s"] / 1e12, flops / g["reference_time_s"] / 1e12
    diff = (runner - ref) / ref
    ok = ok and abs(diff) <= 0.05
    print("%-34s %9.1f TF %9.1f TF %+7.1f%%  %s" % ("", runner, ref, 100 * diff,
                                                  "ok" if abs(diff) <= 0.05 else "OFF BY > 5%"))
else:
    ok = False
    print("  GEMM not measured: %s" % g.get("message", g.get("status", "missing")))
print()
print("%-34s %12s %12s" % ("attention (plan shapes)", "TFLOP/s", "time"))
for name, k in kernels.items():
    if k["kind"] == "attention":
        m = k.get("measured", {})
        if m.get("status") == "ok":
            print("%-34s %12.1f %10.3f ms  (%s)" % (name, m["flops_per_s"] / 1e12, m["time_s"] * 1e3,
                                                   m.get("message", "")))
        else:
            print("%-34s %s" % (name, m.get("message", m.get("status"))))
print()
p = r["memory_probe"]
m = p.get("measured", {})
if m.get("status") == "ok":
    gib = 2.0 ** 30
    print("memory probe: %d layers, %d tokens, %s, %s attention (%s), recompute %s" % (
        m["layers"], m["seq_len"] * m["micro_batch"], m["mode"], m["attention"],
        m["attention_impl"], m["recompute"]))
    print("  peak allocated: predicted %.2f GiB, measured %.2f GiB (%.3fx)" % (
        p["predicted_peak"] / gib, m["peak_allocated"] / gib, p["ratio"]))
    if m.get("peak_reserved"):
        print("  peak reserved:  predicted %.2f GiB, measured %.2f GiB (%.3fx)" % (
            p["predicted_reserved"] / gib, m["peak_reserved"] / gib,
            m["peak_reserved"] / max(1.0, p["predicted_reserved"])))
    if m.get("snapshot"):
        print("  memory snapshot of the step: %s (Memory over the step > Import measured)" % m["snapshot"])
else:
    print("memory probe: %s" % m.get("message", m.get("status", "not run")))
print()
print("results: %s" % sys.argv[1])
sys.exit(0 if ok else 1)
PY
