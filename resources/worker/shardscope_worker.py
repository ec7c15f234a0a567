#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""ShardScope kernel runner worker (protocol: docs/runner-protocol.md, version 1).

Runs the kernels of a plan's training step with PyTorch on `cuda`, `npu` (torch_npu) or `cpu`
and answers one JSON line per kernel on stdout. Started by ShardScope as a child process,
through torchrun (python -m torch.distributed.run) when collectives need several processes:
rank 0 reads the requests from stdin, shares them with the other ranks and writes the answers;
every rank takes part in the collectives.

stdout carries only the protocol; everything else (warnings, tracebacks) goes to stderr.

Needs Python 3.8 or later with torch (Debian: python3-torch) and, for --device npu, torch_npu
(Ascend). When one is missing the worker says so in one line on stderr, starting with
"shardscope-worker: ", that names the interpreter, its version, the module and how to get it,
and exits with status 78 (EXIT_ENVIRONMENT) before its hello.
"""

import argparse
import pickle
import json
import math
import os
import platform
import statistics
import sys
import time
import traceback

PROTOCOL = "shardscope-runner"
VERSION = 1
MIN_PYTHON = (3, 8)
EXIT_ENVIRONMENT = 78  # the interpreter cannot run the worker (sysexits EX_CONFIG)

_PROTO = sys.stdout
sys.stdout = sys.stderr  # keep stray prints off the protocol channel

RANK = int(os.environ.get("RANK", "0"))
WORLD = int(os.environ.get("WORLD_SIZE", "1"))
LOCAL_RANK = int(os.environ.get("LOCAL_RANK", "0"))


def send(obj):
    if RANK == 0:
        _PROTO.write(json.dumps(obj) + "\n")
        _PROTO.flush()


def log(message):
    send({"type": "log", "message": str(message)})


# --------------------------------------------------------------------------------------------
# Devices


class Device:
    """The device kernels run on: torch.device, its event timer and memory statistics."""

    def __init__(self, kind, torch):
        self.kind = kind
        self.torch = torch
        self.npu = None
        if kind == "cuda":
            if not torch.cuda.is_available():
                raise RuntimeError("torch.cuda.is_available() is False: no CUDA device visible")
            torch.cuda.set_device(LOCAL_RANK)
            self.dev = torch.device("cuda", LOCAL_RANK)
            self.mod = torch.cuda
        elif kind == "npu":
            import torch_npu  # noqa: F401  (registers the npu device and torch.npu)

            self.npu = torch_npu
            if not torch.npu.is_available():
                raise RuntimeError("torch.npu.is_available() is False: no Ascend NPU visible")
            torch.npu.set_device(LOCAL_RANK)
            self.dev = torch.device("npu", LOCAL_RANK)
            self.mod = torch.npu
        elif kind == "cpu":
            self.dev = torch.device("cpu")
            self.mod = None
        else:
            raise RuntimeError("unknown device %r (cuda, npu or cpu)" % kind)

    @property
    def accelerator(self):
        return self.mod is not None

    def name(self):
        if self.kind == "cuda":
            return self.torch.cuda.get_device_name(self.dev)
        if self.kind == "npu":
            return self.torch.npu.get_device_name(LOCAL_RANK)
        return platform.processor() or platform.machine()

    def synchronize(self):
        if self.mod is not None:
            self.mod.synchronize()

    def memory(self):
        """(total, free, context reserve) in bytes; context = total - free - reserved."""
        if self.mod is not None:
            free, total = self.mod.mem_get_info()
            reserved = self.mod.memory_reserved()
            return float(total), float(free), float(max(0, total - free - reserved))
        total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        free = total
        try:
            with open("/proc/meminfo") as f:
                for line in f:
                    if line.startswith("MemAvailable:"):
                        free = int(line.split()[1]) * 1024
        except OSError:
            pass
        return float(total), float(free), 0.0

    def time(self, fn, warmup, repeats, sets=1, before=None):
        """Median, min and max seconds of fn(i) over `repeats` calls after `warmup` calls.
        Device events on accelerators, perf_counter on the CPU; operands rotate over `sets`;
        `before(i)` runs untimed ahead of each call and its value is passed to fn."""
        for i in range(warmup):
            ctx = before(i) if before else None
            fn(i % sets, ctx)
        self.synchronize()
        times = []
        if self.mod is not None:
            pairs = [(self.mod.Event(enable_timing=True), self.mod.Event(enable_timing=True))
                     for _ in range(repeats)]
            for i, (s, e) in enumerate(pairs):
                ctx = before(i) if before else None
                s.record()
                fn(i % sets, ctx)
                e.record()
            self.synchronize()
            times = [s.elapsed_time(e) / 1e3 for s, e in pairs]
        else:
            for i in range(repeats):
                ctx = before(i) if before else None
                t0 = time.perf_counter()
                fn(i % sets, ctx)
                times.append(time.perf_counter() - t0)
        return statistics.median(times), min(times), max(times), len(times)


DTYPES = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}


def torch_dtype(torch, name):
    if name not in DTYPES:
        raise RuntimeError("dtype %s is not measured by this worker (bf16, fp16, fp32)" % name)
    return getattr(torch, DTYPES[name])


def rotations(set_bytes, device):
    """Operand sets to rotate so that consecutive calls miss the last-level cache."""
    target = 256 * 2**20 if device.accelerator else 64 * 2**20
    if set_bytes >= target:
        return 1
    return max(1, min(8, int(math.ceil(target / max(1.0, set_bytes)))))


# --------------------------------------------------------------------------------------------
# Kernels


def run_gemm(k, device, cfg):
    torch = device.torch
    dt = torch_dtype(torch, k["dtype"])
    m, n, kk = int(k["m"]), int(k["n"]), int(k["k"])
    layout = k.get("layout", "nn")
    es = torch.tensor([], dtype=dt).element_size()
    sets = rotations(es * (m * kk + kk * n + m * n), device)
    a_shape = (kk, m) if layout[0] == "t" else (m, kk)
    b_shape = (n, kk) if layout[1] == "t" else (kk, n)
    A = [torch.randn(a_shape, device=device.dev).to(dt) for _ in range(sets)]
    B = [torch.randn(b_shape, device=device.dev).to(dt) for _ in range(sets)]
    C = [torch.empty((m, n), device=device.dev, dtype=dt) for _ in range(sets)]

    def op(i):
        a = A[i].t() if layout[0] == "t" else A[i]
        b = B[i].t() if layout[1] == "t" else B[i]
        return a, b

    def fn(i, _):
        a, b = op(i)
        torch.matmul(a, b, out=C[i])

    med, lo, hi, reps = device.time(fn, cfg["warmup"], cfg["repeats"], sets)
    res = {"time_s": med, "min_s": lo, "max_s": hi, "repeats": reps,
           "flops_per_s": float(k["flops"]) / med,
           "message": "torch.matmul %s, %d rotating operand sets" % (k["dtype"], sets)}
    if cfg.get("reference"):
        # Plain torch.matmul on one operand pair, one event pair around a loop: the figure
        # a hand-written benchmark would report, for comparison in the same run.
        a, b = op(0)
        for _ in range(max(1, cfg["warmup"])):
            torch.matmul(a, b)
        device.synchronize()
        iters = max(1, cfg["repeats"])
        if device.accelerator:
            s, e = device.mod.Event(enable_timing=True), device.mod.Event(enable_timing=True)
            s.record()
            for _ in range(iters):
                torch.matmul(a, b)
            e.record()
            device.synchronize()
            ref = s.elapsed_time(e) / 1e3 / iters
        else:
            t0 = time.perf_counter()
            for _ in range(iters):
                torch.matmul(a, b)
            ref = (time.perf_counter() - t0) / iters
        res["reference_time_s"] = ref
        res["reference_flops_per_s"] = float(k["flops"]) / ref
    del A, B, C
    return res


def repeat_kv(x, groups):
    if groups == 1:
        return x
    return x.repeat_interleave(groups, dim=1)


class AttentionImpl:
    """Causal attention on the device: torch_npu.npu_fusion_attention on NPU, SDPA
    (flash where available) on PyTorch >= 2.0, else the eager math path."""

    def __init__(self, device):
        self.device = device
        torch = device.torch
        import torch.nn.functional as F

        self.F = F
        self.has_sdpa = hasattr(F, "scaled_dot_product_attention")
        major, minor = (int(x) for x in torch.__version__.split(".")[:2])
        self.sdpa_gqa = (major, minor) >= (2, 5)
        self.mask = None
        if device.kind == "npu":
            self.name = "npu_fusion_attention"
        elif self.has_sdpa:
            self.name = "sdpa"
        else:
            self.name = "math"

    def __call__(self, q, k, v, causal):
        torch = self.device.torch
        heads, kv_heads, d = q.shape[1], k.shape[1], q.shape[-1]
        scale = 1.0 / math.sqrt(d)
        if self.name == "npu_fusion_attention":
            mask = None
            if causal:
                if self.mask is None:
                    # sparse_mode 2 (leftUpCausal) takes the compressed 2048 x 2048 mask.
                    self.mask = torch.triu(torch.ones(2048, 2048, dtype=torch.bool,
                                                      device=q.device), diagonal=1)
                mask = self.mask
            out = self.device.npu.npu_fusion_attention(
                q, k, v, heads, "BNSD", atten_mask=mask, scale=scale, keep_prob=1.0,
                sparse_mode=2 if causal else 0)
            return out[0]
        if self.name == "sdpa":
            if kv_heads != heads:
                if self.sdpa_gqa:
                    return self.F.scaled_dot_product_attention(q, k, v, is_causal=causal,
                                                               enable_gqa=True)
                k = repeat_kv(k, heads // kv_heads)
                v = repeat_kv(v, heads // kv_heads)
            return self.F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        # Eager math (transformers' eager_attention_forward): fp32 softmax, cast back.
        k = repeat_kv(k, heads // kv_heads)
        v = repeat_kv(v, heads // kv_heads)
        w = torch.matmul(q, k.transpose(2, 3)) * scale
        if causal:
            s_q, s_k = q.shape[2], k.shape[2]
            m = torch.ones(s_q, s_k, dtype=torch.bool, device=q.device).triu(1 + s_k - s_q)
            w = w.masked_fill(m, float("-inf"))
        w = torch.softmax(w, dim=-1, dtype=torch.float32).to(q.dtype)
        return torch.matmul(w, v)


def run_attention(k, device, cfg, attn):
    torch = device.torch
    dt = torch_dtype(torch, k["dtype"])
    b, h, kvh = int(k["batch"]), int(k["heads"]), int(k["kv_heads"])
    sq, skv, d = int(k["seq_q"]), int(k["seq_kv"]), int(k["head_dim"])
    dv = int(k.get("v_head_dim") or d)  # MLA: values narrower than queries and keys
    causal = bool(k.get("causal", True))
    bwd = k["op"] == "attention_bwd"
    q = torch.randn(b, h, sq, d, device=device.dev).to(dt).requires_grad_(bwd)
    kk = torch.randn(b, kvh, skv, d, device=device.dev).to(dt).requires_grad_(bwd)
    v = torch.randn(b, kvh, skv, dv, device=device.dev).to(dt).requires_grad_(bwd)
    if not bwd:
        def fn(_, __):
            with torch.no_grad():
                attn(q, kk, v, causal)

        med, lo, hi, reps = device.time(fn, cfg["warmup"], cfg["repeats"])
    else:
        grad = torch.randn(b, h, sq, dv, device=device.dev).to(dt)

        def before(_):
            q.grad = kk.grad = v.grad = None
            return attn(q, kk, v, causal)

        def fn(_, out):
            out.backward(grad)

        med, lo, hi, reps = device.time(fn, cfg["warmup"], cfg["repeats"], before=before)
    return {"time_s": med, "min_s": lo, "max_s": hi, "repeats": reps,
            "flops_per_s": float(k["flops"]) / med,
            "message": "%s (%s)" % (attn.name, "backward only" if bwd else "forward")}


def run_elementwise(k, device, cfg):
    torch = device.torch
    dt = torch_dtype(torch, k["dtype"])
    n = int(k["elements"])
    width = int(k.get("width") or n)
    rows = max(1, n // width)
    op = k["op"]
    es = torch.tensor([], dtype=dt).element_size()
    sets = rotations(3 * es * n, device)
    X = [torch.randn(rows, width, device=device.dev).to(dt) for _ in range(sets)]
    Y = [torch.randn(rows, width, device=device.dev).to(dt) for _ in range(sets)]
    Z = [torch.empty(rows, width, device=device.dev, dtype=dt) for _ in range(sets)]
    weight = torch.ones(width, device=device.dev, dtype=dt)

    def rmsnorm(x):  # transformers LlamaRMSNorm
        xf = x.to(torch.float32)
        var = xf.pow(2).mean(-1, keepdim=True)
        return weight * (xf * torch.rsqrt(var + 1e-6)).to(dt)

    def fn(i, _):
        if op == "rmsnorm":
            rmsnorm(X[i])
        elif op == "swiglu":
            torch.mul(torch.nn.functional.silu(X[i]), Y[i], out=Z[i])
        elif op == "add":
            torch.add(X[i], Y[i], out=Z[i])
        elif op == "copy":
            Z[i].copy_(X[i])
        else:
            raise RuntimeError("op %s is not measured by this worker" % op)

    med, lo, hi, reps = device.time(fn, cfg["warmup"], cfg["repeats"], sets)
    return {"time_s": med, "min_s": lo, "max_s": hi, "repeats": reps,
            "bytes_per_s": float(k["bytes"]) / med, "message": "torch %s" % op}


BUS_FACTOR = {"all_reduce": lambda n: 2.0 * (n - 1) / n,
              "all_gather": lambda n: (n - 1) / n,
              "reduce_scatter": lambda n: (n - 1) / n,
              "all_to_all": lambda n: (n - 1) / n}


class Collectives:
    def __init__(self, device, dist):
        self.device = device
        self.dist = dist
        self.groups = {}

    def group(self, n):
        # new_group must be called by every rank, in the same order.
        if n not in self.groups:
            self.groups[n] = self.dist.new_group(ranks=list(range(n))) if n < WORLD else None
        return self.groups[n]

    def run(self, k, cfg):
        torch, dist, device = self.device.torch, self.dist, self.device
        coll = k["collective"]
        if WORLD < 2:
            return {"status": "skipped",
                    "message": "needs at least 2 worker processes (run with --nproc 2 or more)"}
        n = 2 if coll == "send_recv" else max(2, min(int(k["group_size"]), WORLD))
        g = self.group(n)
        dist.barrier()
        if RANK >= n:
            return None
        gloo = dist.get_backend() == "gloo"
        dt = torch.float32 if gloo else torch_dtype(torch, k["dtype"])
        es = torch.tensor([], dtype=dt).element_size()
        size = max(n * es, int(float(k["bytes"])) // (n * es) * (n * es))  # divisible by n
        count = size // es
        note = []
        if gloo and k["dtype"] != "fp32":
            note.append("fp32 on gloo (same bytes)")
        if int(k["group_size"]) != n and coll != "send_recv":
            note.append("measured on %d of the plan's %d ranks" % (n, int(k["group_size"])))
        dev = device.dev
        x = torch.ones(count, dtype=dt, device=dev)
        out = torch.empty(count, dtype=dt, device=dev)
        shard = torch.ones(count // n, dtype=dt, device=dev)
        emulated = False

        if coll == "all_reduce":
            def fn(_, __):
                dist.all_reduce(x, group=g)
        elif coll == "all_gather":
            into = getattr(dist, "all_gather_into_tensor", None) or getattr(dist, "_all_gather_base", None)
            parts = list(out.chunk(n))

            def fn(_, __):
                try:
                    into(out, shard, group=g)
                except (RuntimeError, AttributeError, TypeError):
                    dist.all_gather(parts, shard, group=g)
        elif coll == "reduce_scatter":
            into = getattr(dist, "reduce_scatter_tensor", None) or getattr(dist, "_reduce_scatter_base", None)
            if gloo:
                emulated = True
                note.append("emulated with all_reduce of the whole buffer (gloo has no reduce_scatter)")

                def fn(_, __):
                    dist.all_reduce(x, group=g)
            else:
                def fn(_, __):
                    into(shard, x, group=g)
        elif coll == "all_to_all":
            def fn(_, __):
                dist.all_to_all_single(out, x, group=g)
        elif coll == "send_recv":
            peer = 1 - RANK
            recv = torch.empty(count, dtype=dt, device=dev)

            def fn(_, __):
                ops = [dist.P2POp(dist.isend, x, peer), dist.P2POp(dist.irecv, recv, peer)]
                for r in dist.batch_isend_irecv(ops):
                    r.wait()
        else:
            raise RuntimeError("collective %s is not measured by this worker" % coll)

        med, lo, hi, reps = device.time(fn, cfg["warmup"], cfg["repeats"])
        # The slowest rank's median is the collective's time.
        t = torch.tensor([med], dtype=torch.float64 if gloo else torch.float32, device=dev)
        dist.all_reduce(t, op=dist.ReduceOp.MAX, group=g)
        med = float(t.item())
        algbw = size / med
        factor = BUS_FACTOR.get(coll, lambda _n: 1.0)(n)
        if emulated:
            factor = BUS_FACTOR["all_reduce"](n)
        return {"time_s": med, "min_s": lo, "max_s": hi, "repeats": reps, "ranks": n,
                "algbw": algbw, "busbw": algbw * factor, "bytes": size,
                "message": "; ".join(note + ["%s over %s" % (coll, dist.get_backend())])}


# --------------------------------------------------------------------------------------------
# Memory probe: a real training step of a Llama-style model, mirroring the memory engine's
# `pytorch` framework profile (transformers LlamaRMSNorm upcast, SDPA, SwiGLU, fp32-logits loss,
# AdamW foreach, zero_grad(set_to_none=True)).


def build_probe_model(p, device, attn):
    torch = device.torch
    nn = torch.nn
    F = torch.nn.functional
    from torch.utils.checkpoint import checkpoint

    hidden, heads, kvh, d = int(p["hidden"]), int(p["heads"]), int(p["kv_heads"]), int(p["head_dim"])
    ffn, vocab = int(p["ffn_hidden"]), int(p["vocab"])
    linear_bias = bool(p.get("linear_bias", False))
    qkv_bias = bool(p.get("attention_bias", False)) or linear_bias
    selective = p["recompute"] == "selective"
    eager = p["attention"] == "eager"
    mla = p.get("mla") if p.get("attention_kind") == "mla" else None
    qk_norm = bool(p.get("qk_norm", False))
    layernorm = p.get("norm", "rmsnorm") == "layernorm"
    kind = p.get("ffn", "swiglu")
    moe = p.get("moe")
    drop = p.get("dropout") or {}
    p_hidden, p_attn = float(drop.get("hidden", 0.0)), float(drop.get("attention", 0.0))
    learned = p.get("position_embedding") == "learned"

    class RMSNorm(nn.Module):  # transformers LlamaRMSNorm
        def __init__(self, width=hidden):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(width))

        def forward(self, x):
            dtype = x.dtype
            x = x.to(torch.float32)
            var = x.pow(2).mean(-1, keepdim=True)
            x = x * torch.rsqrt(var + 1e-6)
            return self.weight * x.to(dtype)

    def Norm(width=hidden):
        return nn.LayerNorm(width) if layernorm else RMSNorm(width)

    def rotate_half(x):
        x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
        return torch.cat((-x2, x1), dim=-1)

    def core(q, k, v):
        if eager:
            k = repeat_kv(k, q.shape[1] // k.shape[1])
            v = repeat_kv(v, q.shape[1] // v.shape[1])
            w = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(q.shape[-1])
            s = q.shape[2]
            mask = torch.full((s, s), float("-inf"), device=q.device, dtype=w.dtype).triu(1)
            w = torch.softmax(w + mask, dim=-1, dtype=torch.float32).to(q.dtype)
            w = F.dropout(w, p_attn, training=True) if p_attn > 0 else w
            return torch.matmul(w, v)
        return attn(q, k, v, True)

    class Attention(nn.Module):
        """Llama / Qwen attention (QK norms for Qwen3)."""

        def __init__(self):
            super().__init__()
            self.q_proj = nn.Linear(hidden, heads * d, bias=qkv_bias)
            self.k_proj = nn.Linear(hidden, kvh * d, bias=qkv_bias)
            self.v_proj = nn.Linear(hidden, kvh * d, bias=qkv_bias)
            self.o_proj = nn.Linear(heads * d, hidden, bias=linear_bias)
            if qk_norm:
                self.q_norm, self.k_norm = RMSNorm(d), RMSNorm(d)

        def forward(self, x, cos, sin):
            b, s, _ = x.shape
            q = self.q_proj(x).view(b, s, heads, d)
            k = self.k_proj(x).view(b, s, kvh, d)
            if qk_norm:
                q, k = self.q_norm(q), self.k_norm(k)
            q, k = q.transpose(1, 2), k.transpose(1, 2)
            v = self.v_proj(x).view(b, s, kvh, d).transpose(1, 2)
            if cos is not None:
                q = q * cos + rotate_half(q) * sin
                k = k * cos + rotate_half(k) * sin
            o = checkpoint(core, q, k, v, use_reentrant=False) if selective else core(q, k, v)
            o = o.transpose(1, 2).reshape(b, s, heads * d)
            return self.o_proj(o)

    class MLAttention(nn.Module):
        """DeepSeek-V2/V3 multi-head latent attention (modeling_deepseek's DeepseekV3Attention)."""

        def __init__(self):
            super().__init__()
            self.ql = int(mla["q_lora_rank"])
            self.kvl = int(mla["kv_lora_rank"])
            self.nope, self.rope = int(mla["qk_nope_head_dim"]), int(mla["qk_rope_head_dim"])
            self.vd = int(mla["v_head_dim"])
            qk = self.nope + self.rope
            if self.ql > 0:
                self.q_a_proj = nn.Linear(hidden, self.ql, bias=qkv_bias)
                self.q_a_layernorm = Norm(self.ql)
                self.q_b_proj = nn.Linear(self.ql, heads * qk, bias=qkv_bias)
            else:
                self.q_proj = nn.Linear(hidden, heads * qk, bias=qkv_bias)
            self.kv_a_proj_with_mqa = nn.Linear(hidden, self.kvl + self.rope, bias=qkv_bias)
            self.kv_a_layernorm = Norm(self.kvl)
            self.kv_b_proj = nn.Linear(self.kvl, heads * (self.nope + self.vd), bias=qkv_bias)
            self.o_proj = nn.Linear(heads * self.vd, hidden, bias=linear_bias)

        def forward(self, x, cos, sin):
            b, s, _ = x.shape
            q = self.q_b_proj(self.q_a_layernorm(self.q_a_proj(x))) if self.ql > 0 else self.q_proj(x)
            q = q.view(b, s, heads, self.nope + self.rope).transpose(1, 2)
            q_nope, q_pe = q.split([self.nope, self.rope], dim=-1)
            kv = self.kv_a_proj_with_mqa(x)
            latent, k_pe = kv.split([self.kvl, self.rope], dim=-1)
            k_pe = k_pe.view(b, s, 1, self.rope).transpose(1, 2)
            kv = self.kv_b_proj(self.kv_a_layernorm(latent))
            kv = kv.view(b, s, heads, self.nope + self.vd).transpose(1, 2)
            k_nope, v = kv.split([self.nope, self.vd], dim=-1)
            c, sn = cos[..., : self.rope], sin[..., : self.rope]
            q_pe = q_pe * c + rotate_half(q_pe) * sn
            k_pe = k_pe * c + rotate_half(k_pe) * sn
            q = torch.cat([q_nope, q_pe], dim=-1)
            k = torch.cat([k_nope, k_pe.expand(-1, heads, -1, -1)], dim=-1)
            o = checkpoint(core, q, k, v, use_reentrant=False) if selective else core(q, k, v)
            o = o.transpose(1, 2).reshape(b, s, heads * self.vd)
            return self.o_proj(o)

    class MLP(nn.Module):
        def __init__(self, width):
            super().__init__()
            if kind == "swiglu":
                self.gate_proj = nn.Linear(hidden, width, bias=linear_bias)
            self.up_proj = nn.Linear(hidden, width, bias=linear_bias)
            self.down_proj = nn.Linear(width, hidden, bias=linear_bias)

        def forward(self, x):
            if kind == "swiglu":
                return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))
            if kind == "squared_relu":
                return self.down_proj(torch.square(F.relu(self.up_proj(x))))
            return self.down_proj(F.gelu(self.up_proj(x)))

    class MoE(nn.Module):
        """Router, routed experts looped over as in transformers' Mixtral / Qwen-MoE / DeepSeek
        blocks (each expert's tokens gathered, its output scaled by the routing weight and added
        back), and the shared experts."""

        def __init__(self):
            super().__init__()
            self.n, self.k = int(moe["experts"]), int(moe["top_k"])
            self.fp32 = bool(moe.get("router_fp32", False))
            self.gate = nn.Linear(hidden, self.n, bias=False)
            self.experts = nn.ModuleList([MLP(int(moe["expert_ffn_hidden"])) for _ in range(self.n)])
            shared = int(moe.get("shared_experts", 0))
            self.shared = MLP(shared * int(moe["shared_expert_ffn_hidden"])) if shared else None
            self.shared_gate = (nn.Linear(hidden, 1, bias=False)
                                if shared and moe.get("shared_expert_gate") else None)

        def forward(self, x):
            b, s, h = x.shape
            flat = x.reshape(-1, h)
            if self.fp32:
                logits = F.linear(flat.float(), self.gate.weight.float())
            else:
                logits = self.gate(flat)
            probs = F.softmax(logits, dim=-1, dtype=torch.float32)
            weights, chosen = torch.topk(probs, self.k, dim=-1)
            weights = (weights / weights.sum(-1, keepdim=True)).to(x.dtype)
            out = torch.zeros_like(flat)
            mask = F.one_hot(chosen, self.n).permute(2, 1, 0)
            for e in range(self.n):
                slot, token = torch.where(mask[e])
                if token.numel() == 0:
                    continue
                y = self.experts[e](flat[token]) * weights[token, slot, None]
                out.index_add_(0, token, y)
            if self.shared is not None:
                y = self.shared(flat)
                if self.shared_gate is not None:
                    y = torch.sigmoid(self.shared_gate(flat)) * y
                out = out + y
            return out.view(b, s, h)

    first_dense = int(moe.get("first_dense_layers", 0)) if moe else 0
    freq = int(moe.get("layer_freq", 1)) if moe else 1

    class Layer(nn.Module):
        def __init__(self, index):
            super().__init__()
            self.input_layernorm = Norm()
            self.self_attn = MLAttention() if mla else Attention()
            self.post_attention_layernorm = Norm()
            sparse = moe and index >= first_dense and (index - first_dense) % freq == 0
            self.mlp = MoE() if sparse else MLP(ffn)

        def forward(self, x, cos, sin):
            a = self.self_attn(self.input_layernorm(x), cos, sin)
            x = x + (F.dropout(a, p_hidden, training=True) if p_hidden > 0 else a)
            y = self.mlp(self.post_attention_layernorm(x))
            return x + (F.dropout(y, p_hidden, training=True) if p_hidden > 0 else y)

    rope_dim = int(mla["qk_rope_head_dim"]) if mla else d

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed_tokens = nn.Embedding(vocab, hidden)
            if learned:
                self.wpe = nn.Embedding(int(p["max_positions"]), hidden)
            self.layers = nn.ModuleList([Layer(i) for i in range(int(p["layers"]))])
            self.norm = Norm()
            self.lm_head = nn.Linear(hidden, vocab, bias=False)
            if p.get("tied_embeddings"):
                self.lm_head.weight = self.embed_tokens.weight
            self.full = p["recompute"] == "full"

        def forward(self, ids, labels):
            h = self.embed_tokens(ids)
            s = ids.shape[1]
            cos = sin = None
            if learned:
                h = h + self.wpe(torch.arange(s, device=ids.device))
            else:
                inv = 1.0 / (10000 ** (torch.arange(0, rope_dim, 2, device=ids.device).float() / rope_dim))
                f = torch.outer(torch.arange(s, device=ids.device).float(), inv)
                emb = torch.cat((f, f), dim=-1)
                cos, sin = emb.cos().to(h.dtype), emb.sin().to(h.dtype)
            for layer in self.layers:
                if self.full:
                    h = checkpoint(layer, h, cos, sin, use_reentrant=False)
                else:
                    h = layer(h, cos, sin)
            logits = self.lm_head(self.norm(h))
            # transformers ForCausalLMLoss: logits upcast to fp32 for the cross entropy.
            return F.cross_entropy(logits.float().view(-1, vocab), labels.view(-1))

    return Model()


def quantize_base(model, q, names, device, compute):
    """QLoRA's base (bitsandbytes Linear4bit / Linear8bitLt, as transformers' BitsAndBytesConfig
    loads it): every decoder-layer linear stored k-bit and frozen; then, as PEFT's
    prepare_model_for_kbit_training does, the remaining 16-bit parameters cast to fp32. Needs
    bitsandbytes and a CUDA device. Written against bitsandbytes' documented API; not run on a
    GPU yet."""
    torch = device.torch
    try:
        import bitsandbytes as bnb
    except ImportError as e:
        raise RuntimeError("QLoRA's k-bit base needs bitsandbytes, which %s cannot import (%s)"
                           % (sys.executable, e))
    if device.kind != "cuda":
        raise RuntimeError("bitsandbytes' k-bit layers run on CUDA devices; this probe runs on %s"
                           % device.kind)
    quant = q.get("quant", "nf4")
    double_quant = bool(q.get("double_quant", True))
    block = int(q.get("block_size", 64))
    for layer in model.layers:
        for part, name in names.values():
            mod = getattr(layer, part)
            old = getattr(mod, name, None)
            if old is None:
                continue
            weight = old.weight.data.to("cpu")
            if quant == "int8":
                new = bnb.nn.Linear8bitLt(old.in_features, old.out_features, bias=False,
                                          has_fp16_weights=False, threshold=6.0)
                new.weight = bnb.nn.Int8Params(weight, requires_grad=False, has_fp16_weights=False)
            else:
                new = bnb.nn.Linear4bit(old.in_features, old.out_features, bias=False,
                                        compute_dtype=compute, compress_statistics=double_quant,
                                        quant_type=quant)
                new.weight = bnb.nn.Params4bit(weight, requires_grad=False, blocksize=block,
                                               compress_statistics=double_quant, quant_type=quant)
            setattr(mod, name, new.to(device.dev))  # quantizes on the move to the GPU
            del old
    for prm in model.parameters():
        if prm.dtype in (torch.float16, torch.bfloat16):
            prm.data = prm.data.float()


def apply_method(model, p, device, compute):
    """Trains what the plan's training method trains (plain PyTorch, no PEFT): LoRA / DoRA
    adapters on the targeted linears of every layer, the base frozen (PEFT's lora.Linear:
    lora_A saves its input cast to the adapter dtype, lora_B saves A's output); modules_to_save
    as a trained copy beside the frozen original; freezing trains the last layers and the named
    parts. Under gradient checkpointing the embedding output is made to require grad
    (transformers' enable_input_require_grads). Returns a note, or raises RuntimeError when the
    method cannot be probed here."""
    torch = device.torch
    nn = torch.nn
    m = p.get("method") or {}
    kind = m.get("method", "full")
    if kind == "full":
        return ""
    for prm in model.parameters():
        prm.requires_grad_(False)
    names = {"q": ("self_attn", "q_proj"), "k": ("self_attn", "k_proj"), "v": ("self_attn", "v_proj"),
             "o": ("self_attn", "o_proj"), "gate": ("mlp", "gate_proj"), "up": ("mlp", "up_proj"),
             "down": ("mlp", "down_proj")}
    if kind == "qlora":
        quantize_base(model, m.get("qlora") or {}, names, device, compute)
    if kind in ("lora", "dora", "qlora"):
        rank, dropout = int(m.get("rank", 8)), float(m.get("dropout", 0.0))
        adtype = torch_dtype(torch, m.get("adapter_dtype", "fp32"))
        dora = kind == "dora"

        class LoraLinear(nn.Module):
            def __init__(self, base):
                super().__init__()
                self.base = base
                dev = base.weight.device
                self.lora_A = nn.Linear(base.in_features, rank, bias=False, device=dev, dtype=adtype)
                self.lora_B = nn.Linear(rank, base.out_features, bias=False, device=dev, dtype=adtype)
                nn.init.zeros_(self.lora_B.weight)
                self.drop = nn.Dropout(dropout) if dropout > 0 else nn.Identity()
                if dora:
                    self.magnitude = nn.Parameter(
                        base.weight.detach().float().norm(dim=1).to(adtype))

            def forward(self, x):
                result = self.base(x)
                lora = self.lora_B(self.lora_A(self.drop(x.to(adtype))))
                if not dora:
                    return result + lora.to(result.dtype)
                # DoRA on a k-bit base is not built by the probe (dora is not a qlora option).
                w = self.base.weight + (self.lora_B.weight @ self.lora_A.weight).to(self.base.weight.dtype)
                scale = (self.magnitude / w.float().norm(dim=1).detach()).to(result.dtype)
                return result + (scale - 1) * result + scale * lora.to(result.dtype)

        targets = set(m.get("targets", ["q", "v"]))
        # MLA's linears answer to the same targets as the engine's (q: q_a / q_b or q_proj, k:
        # kv_a_proj_with_mqa, v: kv_b_proj); FFN targets adapt every expert and the shared ones.
        mla_names = {"q": ("q_proj", "q_a_proj", "q_b_proj"), "k": ("kv_a_proj_with_mqa",),
                     "v": ("kv_b_proj",)}
        for layer in model.layers:
            for t in targets:
                part, name = names[t]
                mods = [getattr(layer, part)]
                if part == "mlp" and hasattr(mods[0], "experts"):
                    mods = list(mods[0].experts) + ([mods[0].shared] if mods[0].shared is not None else [])
                for mod in mods:
                    for n in (name,) + mla_names.get(t, ()):
                        if hasattr(mod, n) and isinstance(getattr(mod, n), nn.Linear):
                            setattr(mod, n, LoraLinear(getattr(mod, n)))
        import copy

        for part in m.get("modules_to_save", []):
            attr = "embed_tokens" if part == "embedding" else "lm_head"
            original = getattr(model, attr)

            class Saved(nn.Module):
                def __init__(self, orig):
                    super().__init__()
                    self.original = orig
                    self.trained = copy.deepcopy(orig)
                    for q in self.trained.parameters():
                        q.requires_grad_(True)

                def forward(self, x):
                    return self.trained(x)

            setattr(model, attr, Saved(original))
    elif kind == "freeze":
        last = int(m.get("last_layers", 0))
        parts = set(m.get("parts", []))
        for i, layer in enumerate(model.layers):
            whole = i >= len(model.layers) - last
            for name, prm in layer.named_parameters():
                norm = "layernorm" in name
                attn = name.startswith("self_attn")
                ffn = name.startswith("mlp")
                if whole or (norm and "norms" in parts) or (attn and "attention" in parts) or (
                        ffn and "ffn" in parts):
                    prm.requires_grad_(True)
        if "norms" in parts:
            model.norm.weight.requires_grad_(True)
        if "embedding" in parts:
            model.embed_tokens.weight.requires_grad_(True)
        if "head" in parts:
            model.lm_head.weight.requires_grad_(True)
    if p["recompute"] != "none":
        model.embed_tokens.register_forward_hook(lambda _m, _i, out: out.requires_grad_(True))
    trained = sum(q.numel() for q in model.parameters() if q.requires_grad)
    return "%s: %d trainable parameters" % (kind, trained)


def cpu_peak_step(torch, step):
    """Peak bytes allocated above the start of `step()` on the CPU, from the profiler's memory
    events (the CPU allocator keeps no peak statistic)."""
    from torch.profiler import profile, ProfilerActivity

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        step()
    events = [e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"]
    events.sort(key=lambda e: e.start_ns() if hasattr(e, "start_ns") else e.start_us())
    cur = peak = 0
    for e in events:
        if e.device_type() != torch.autograd.DeviceType.CPU:
            continue
        cur += e.nbytes()
        peak = max(peak, cur)
    return peak


# --- memory snapshots ------------------------------------------------------------------------
# torch.cuda.memory._dump_snapshot() (and torch_npu.npu.memory._dump_snapshot()) pickle a dict:
# "segments" (each with total_size, allocated_size, blocks) and "device_traces" (per device, a
# list of entries with action, addr, size, stream, time_us). ShardScope reads only JSON: this
# turns it into docs/runner-protocol.md's "shardscope-memory-snapshot".

SNAPSHOT_FORMAT = "shardscope-memory-snapshot"
_TRACE_ACTIONS = ("alloc", "free_requested", "free_completed", "segment_alloc", "segment_free",
                  "segment_map", "segment_unmap", "oom", "snapshot")


def snapshot_to_json(snap, source, device_index=0, phases=None):
    if not isinstance(snap, dict) or "segments" not in snap:
        raise ValueError("not a PyTorch memory snapshot: no 'segments' (record it with "
                         "torch.cuda.memory._record_memory_history() and _dump_snapshot())")
    traces = snap.get("device_traces") or []
    if device_index >= len(traces):
        trace = []
    else:
        trace = traces[device_index] or []
    out_trace = []
    for e in trace:
        action = e.get("action")
        if action not in _TRACE_ACTIONS:
            continue
        entry = {"action": action, "size": int(e.get("size", 0) or 0),
                 "stream": int(e.get("stream", 0) or 0)}
        if "time_us" in e:
            entry["time_us"] = int(e["time_us"])
        out_trace.append(entry)
    reserved = sum(int(seg.get("total_size", 0)) for seg in snap["segments"]
                   if int(seg.get("device", device_index)) == device_index)
    allocated = sum(int(seg.get("allocated_size", 0)) for seg in snap["segments"]
                    if int(seg.get("device", device_index)) == device_index)
    out = {"format": SNAPSHOT_FORMAT, "version": 1, "source": source, "device": device_index,
           "reserved_bytes": reserved, "allocated_bytes": allocated, "trace": out_trace}
    if phases:
        out["phases"] = phases
    return out


class _PlainUnpickler(pickle.Unpickler):
    """A snapshot holds dicts, lists, strings and numbers only: nothing else is loaded (a pickle
    can otherwise run code)."""

    def find_class(self, module, name):
        raise pickle.UnpicklingError("the snapshot names %s.%s: only plain data is read" % (module, name))


def convert_snapshot(src, dst):
    """--convert-snapshot IN.pickle OUT.json; exit 0, or 2 with one line on stderr."""
    try:
        with open(src, "rb") as f:
            snap = _PlainUnpickler(f).load()
        out = snapshot_to_json(snap, os.path.basename(src))
        tmp = dst + ".part"
        with open(tmp, "w") as f:
            json.dump(out, f)
        os.replace(tmp, dst)
    except (OSError, pickle.UnpicklingError, ValueError, EOFError, TypeError, AttributeError) as e:
        sys.stderr.write("shardscope-worker: %s: %s\n" % (src, e))
        return 2
    return 0


def make_gemm_workspaces(torch, device):
    """One GEMM in a forward and one in its backward, so that the GEMM libraries' workspaces
    exist before the probe takes its baseline. PyTorch keeps a cuBLAS workspace per handle and
    stream from its first GEMM on, and autograd runs the backward on its own thread with its own
    handle: both are then in the baseline, and the probe's peak leaves them out, as the
    engine's comparison does (core/measurement.cpp compareProbe)."""
    a = torch.ones(64, 64, device=device.dev, requires_grad=True)
    (a @ a).sum().backward()
    device.synchronize()


def run_probe(p, device, attn):
    torch = device.torch
    import gc

    gc.collect()
    if device.accelerator:
        device.mod.empty_cache()
        device.synchronize()
    mode = p["mode"]
    compute = torch.float16 if mode in ("fp16", "amp_fp16") else (
        torch.float32 if mode == "fp32" else torch.bfloat16)
    amp = mode in ("amp", "amp_fp16")
    attention = p["attention"]
    impl = attn.name
    if attention == "flash" and impl == "math":
        attention = "eager"  # no fused attention in this PyTorch: the math path materializes
        impl = "math (no scaled_dot_product_attention in torch %s)" % torch.__version__
    p = dict(p, attention=attention)

    if device.accelerator:
        make_gemm_workspaces(torch, device)
    baseline = device.mod.memory_allocated() if device.accelerator else 0
    # Built on the device where PyTorch can (>= 2.0: torch.device as a context manager), so
    # that a 7B-sized probe does not initialize its weights on the host first.
    import contextlib

    on_device = device.dev if hasattr(device.dev, "__enter__") else contextlib.nullcontext()
    with on_device:
        model = build_probe_model(p, device, attn)
    if not amp:
        model = model.to(compute)
    model = model.to(device.dev)
    try:
        method_note = apply_method(model, p, device, compute)
    except RuntimeError as e:
        return {"status": "skipped", "message": str(e), "layers": int(p["layers"])}
    kwargs = {"lr": 1e-4}
    trained = [q for q in model.parameters() if q.requires_grad]
    impl_opt = p.get("optimizer_impl", "foreach")
    if impl_opt == "fused":
        kwargs["fused"] = True
    else:
        kwargs["foreach"] = impl_opt == "foreach"
    try:
        opt = torch.optim.AdamW(trained, **kwargs)
    except (TypeError, RuntimeError):
        kwargs.pop("fused", None)
        kwargs["foreach"] = True
        opt = torch.optim.AdamW(trained, **kwargs)
    b, s = int(p["micro_batch"]), int(p["seq_len"])
    ids = torch.randint(0, int(p["vocab"]), (b, s), device=device.dev)
    labels = torch.randint(0, int(p["vocab"]), (b, s), device=device.dev)

    phases = []

    def mark(name):
        phases.append({"phase": name, "time_us": time.time_ns() // 1000})

    def step():
        mark("forward")
        if amp:
            with torch.autocast(device_type=device.kind, dtype=compute):
                loss = model(ids, labels)
        else:
            loss = model(ids, labels)
        mark("backward")
        loss.backward()
        mark("optimizer_step")
        opt.step()
        opt.zero_grad(set_to_none=True)
        mark("end")

    # A memory snapshot of the steady step (CUDA and NPU: torch.cuda.memory /
    # torch_npu.npu.memory _record_memory_history), written where the request asks.
    snapshot_path = p.get("snapshot") if device.accelerator else None
    memory_mod = getattr(device.mod, "memory", None)
    recording = False
    if snapshot_path and memory_mod is not None and hasattr(memory_mod, "_record_memory_history"):
        try:
            memory_mod._record_memory_history(max_entries=1000000)
            recording = True
        except Exception as e:  # noqa: BLE001
            log("no memory snapshot: %s" % e)
    step()  # step 0 allocates the optimizer states
    device.synchronize()
    phases.clear()
    t0 = time.perf_counter()
    if device.accelerator:
        device.mod.reset_peak_memory_stats()
        step()
        device.synchronize()
        peak = device.mod.max_memory_allocated() - baseline
        reserved = device.mod.max_memory_reserved()
        method = ("torch.%s.max_memory_allocated() over one steady-state step, less what was "
                  "allocated before (the GEMM workspaces among it)" % device.kind)
    else:
        # Live before the step: parameters and optimizer states (gradients were set to None).
        live = {}
        for t in list(model.parameters()) + [v for st in opt.state.values() for v in st.values()
                                             if torch.is_tensor(v)]:
            live[t.data_ptr()] = t.numel() * t.element_size()
        peak = sum(live.values()) + cpu_peak_step(torch, step)
        reserved = 0
        method = "parameters + optimizer states + the profiler's allocation peak over one step"
    if method_note:
        method += "; " + method_note
    step_s = time.perf_counter() - t0
    snapshot_written = None
    if recording:
        try:
            snap = memory_mod._snapshot()
            memory_mod._record_memory_history(enabled=None)
            out = snapshot_to_json(snap, "probe %s" % device.name(), 0, phases)
            tmp = snapshot_path + ".part"
            with open(tmp, "w") as f:
                json.dump(out, f)
            os.replace(tmp, snapshot_path)
            snapshot_written = snapshot_path
        except Exception as e:  # noqa: BLE001
            log("memory snapshot not written: %s" % e)
    del model, opt
    gc.collect()
    if device.accelerator:
        device.mod.empty_cache()
    return {"status": "ok", "layers": int(p["layers"]), "seq_len": s, "micro_batch": b,
            "mode": mode, "attention": attention, "attention_impl": impl,
            "recompute": p["recompute"], "peak_allocated": float(peak),
            "baseline": float(baseline), "peak_reserved": float(reserved), "method": method,
            "step_s": step_s, "snapshot": snapshot_written}


def probe_with_retries(p, device, attn):
    """Runs the probe; on out-of-memory halves the layers and tries again (the result says
    how many layers ran, and the prediction is made for those)."""
    p = dict(p)
    while True:
        try:
            return run_probe(p, device, attn)
        except Exception as e:  # noqa: BLE001
            oom = "out of memory" in str(e).lower()
            traceback.print_exc()
            import gc

            gc.collect()
            if device.accelerator:
                device.mod.empty_cache()
            if not oom or int(p["layers"]) <= 1:
                return {"status": "error", "message": "%s: %s" % (type(e).__name__, e)}
            p["layers"] = int(p["layers"]) // 2
            log("memory probe out of memory; retrying with %d layers" % p["layers"])


# --------------------------------------------------------------------------------------------


def read_requests():
    """Rank 0 reads request lines until {"type": "end"} (or end of input)."""
    reqs = []
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            msg = json.loads(line)
        except ValueError:
            raise RuntimeError("malformed request line: %r" % line[:200])
        if not isinstance(msg, dict) or "type" not in msg:
            raise RuntimeError("request without a type: %r" % line[:200])
        if msg["type"] == "end":
            break
        reqs.append(msg)
    return reqs


def spawn_ranks(nproc):
    """Single-node launch without torchrun (what torchrun --standalone does): this process
    becomes rank 0 and starts ranks 1..nproc-1 as children that die with it."""
    global RANK, WORLD, LOCAL_RANK
    import signal
    import socket
    import subprocess

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    base = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                WORLD_SIZE=str(nproc), LOCAL_WORLD_SIZE=str(nproc))

    def die_with_parent():
        try:
            import ctypes

            ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        except OSError:
            pass

    children = []
    argv = [a for a in sys.argv[1:]]
    for r in range(1, nproc):
        env = dict(base, RANK=str(r), LOCAL_RANK=str(r))
        children.append(subprocess.Popen([sys.executable, os.path.abspath(__file__)] + argv,
                                         env=env, stdin=subprocess.DEVNULL, stdout=sys.stderr,
                                         preexec_fn=die_with_parent))
    os.environ.update(base, RANK="0", LOCAL_RANK="0")
    RANK, WORLD, LOCAL_RANK = 0, nproc, 0
    return children


# How to get each module the worker imports.
_INSTALL_HINTS = {
    "torch": "install PyTorch for this interpreter (Debian: apt-get install python3-torch; "
             "elsewhere: pip install torch)",
    "torch_npu": "install torch_npu from Ascend (the Ascend Extension for PyTorch, "
                 "https://gitee.com/ascend/pytorch, matching this torch and the CANN toolkit) "
                 "for this interpreter",
}


def interpreter():
    return "%s (Python %s)" % (sys.executable or "python", platform.python_version())


def environment_error(message):
    """Says on stderr, in one line, why this interpreter cannot run the worker, and exits."""
    sys.stderr.write("shardscope-worker: %s\n" % message)
    sys.stderr.flush()
    sys.exit(EXIT_ENVIRONMENT)


def check_environment(device):
    """The interpreter is recent enough and imports the modules the device needs; exits with
    EXIT_ENVIRONMENT and one line on stderr otherwise."""
    if sys.version_info[:2] < MIN_PYTHON:
        environment_error("%s is too old: the worker needs Python %d.%d or later "
                          "(Debian 12: /usr/bin/python3)" % ((interpreter(),) + MIN_PYTHON))
    modules = ["torch"] + (["torch_npu"] if device == "npu" else [])
    for name in modules:
        try:
            __import__(name)
        except ImportError as e:
            missing = getattr(e, "name", None) or name
            if missing == name:
                what = "cannot import %s (%s)" % (name, e)
            else:  # the module is there, one of its own dependencies is not
                what = "cannot import %s: it needs %s, which is missing (%s)" % (name, missing, e)
            environment_error("%s %s; %s" % (interpreter(), what, _INSTALL_HINTS[name]))
        except Exception as e:  # noqa: BLE001  (a broken install: OSError from a library, ...)
            environment_error("%s cannot import %s (%s: %s); %s"
                              % (interpreter(), name, type(e).__name__, e, _INSTALL_HINTS[name]))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--device", default="cpu", choices=["cuda", "npu", "cpu"])
    parser.add_argument("--nproc", type=int, default=1,
                        help="start this many ranks on this node without torchrun")
    parser.add_argument("--convert-snapshot", nargs=2, metavar=("PICKLE", "JSON"),
                        help="convert a torch memory snapshot (_dump_snapshot) to ShardScope's "
                             "JSON and exit; needs no torch")
    args = parser.parse_args()
    if args.convert_snapshot:
        return convert_snapshot(*args.convert_snapshot)
    check_environment(args.device)
    children = []
    if args.nproc > 1 and "WORLD_SIZE" not in os.environ:
        children = spawn_ranks(args.nproc)
    try:
        return run(args)
    finally:
        for c in children:
            try:
                c.wait(timeout=60)
            except Exception:  # noqa: BLE001
                c.kill()


def run(args):
    import torch  # check_environment() imported it already

    try:
        device = Device(args.device, torch)
    except Exception as e:  # noqa: BLE001
        send({"type": "error", "message": "device %s: %s" % (args.device, e)})
        return 3
    dist = None
    if WORLD > 1:
        import torch.distributed as dist

        backend = {"cuda": "nccl", "npu": "hccl", "cpu": "gloo"}[args.device]
        dist.init_process_group(backend)

    total, free, context = device.memory()
    hello = {"type": "hello", "protocol": PROTOCOL, "version": VERSION, "backend": "torch",
             "device": args.device, "device_name": device.name(), "python": sys.executable,
             "python_version": platform.python_version(), "torch": torch.__version__,
             "world_size": WORLD, "total_memory": total, "free_memory": free,
             "context_reserve": context}
    if device.npu is not None:
        hello["torch_npu"] = getattr(device.npu, "__version__", "")
    send(hello)

    reqs = []
    if RANK == 0:
        try:
            reqs = read_requests()
        except RuntimeError as e:
            send({"type": "error", "message": str(e)})
            reqs = None
    if dist is not None:
        box = [reqs]
        dist.broadcast_object_list(box, src=0)
        reqs = box[0]
    if reqs is None:
        return 2

    cfg = {"warmup": 2, "repeats": 5}
    attn = AttentionImpl(device)
    colls = Collectives(device, dist) if dist is not None else None
    for req in reqs:
        kind = req.get("type")
        if kind == "config":
            cfg.update({k: v for k, v in req.items() if k != "type"})
            continue
        if kind == "probe":
            if RANK == 0:
                send(dict(probe_with_retries(req["probe"], device, attn), type="probe_result"))
            continue
        if kind != "kernel":
            send({"type": "log", "message": "ignored request of type %r" % kind})
            continue
        kid, k = req.get("id"), req.get("kernel", {})
        try:
            if k.get("kind") == "collective":
                if colls is None:
                    res = {"status": "skipped",
                           "message": "needs at least 2 worker processes (run with --nproc 2 or more)"}
                else:
                    res = colls.run(k, cfg)
                    if res is None:
                        continue  # this rank is not in the group
            elif RANK != 0:
                continue  # compute kernels run on rank 0 only
            elif k.get("kind") == "gemm":
                res = run_gemm(k, device, cfg)
            elif k.get("kind") == "attention":
                res = run_attention(k, device, cfg, attn)
            elif k.get("kind") == "elementwise":
                res = run_elementwise(k, device, cfg)
            else:
                raise RuntimeError("unknown kernel kind %r" % k.get("kind"))
            res.setdefault("status", "ok")
            send(dict(res, type="result", id=kid, name=k.get("name", "")))
        except Exception as e:  # noqa: BLE001
            traceback.print_exc()
            if device.accelerator:
                device.mod.empty_cache()
            send({"type": "error", "id": kid, "message": "%s: %s" % (type(e).__name__, e)})
    if dist is not None:
        dist.barrier()
    send({"type": "done"})
    if dist is not None:
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
