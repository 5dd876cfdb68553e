"""Measure the machine tokenmath runs on, per number format and per kernel class, into a hardware profile.

A profile is a catalog chip with its priors inline (`--on PROFILE.yaml`). Through PyTorch (on a CUDA
GPU when one is present, else the CPU; NumPy when PyTorch is absent, fp32 only) `calibrate` times,
for every format the backend runs (fp32, bf16, fp16; int8/fp8 matrix products where it has them):

- the memory: a read of buffers from 8 MiB to several GiB, fitted to two tiers, a last-level cache
  of C bytes at W_c and DRAM/HBM at W (h = min(1, C/working set) of the bytes hit the cache):
      1/rate = h/W_c + (1 − h)/W
- GEMMs as real models call them (F.linear, weights [N, K]) over rows M = 1, 2, 4 … 512 for the
  square, wide and tall shapes of a layer; weights cycled through a pool larger than the cache
  (cold: eta_bw over M, fraction of W) and re-read from cache (hot: eta_mm over M, fraction of the
  format's peak F), after the fixed cost of one call t_kernel (a tiny GEMM):
      eta_bw(M) = bytes_w / (W · (t_cold − t_kernel)),   eta_mm(M) = FLOP / (F · (t_hot − t_kernel))
  on a CPU one weight larger than the cache (32768 × D, an LM head) joins the cold calls and the fit
  takes each weight row's own cost too (narrow rows stream slower per byte; see _fixed_rows_stream):
      t_cold = t_kernel + N · t_row + bytes_w / (W · eta_bw)
- decode attention through scaled_dot_product_attention (enable_gqa): KV streaming by the bytes one
  call reads (eta_kv_bytes, G = 1, cold) and the slowdown by query heads per KV head (eta_gqa over G);
- the elementwise/norm/activation kernels of a layer (add, multiply, SiLU, square, mean, cast): the
  device time of one kernel by the bytes it moves (t_elt), and the MoE routing ops (softmax, top-k,
  one-hot, nonzero, where, gather, index_add) likewise (t_route);
- the host cost of dispatching one operation (t_dispatch) and, on a GPU, the device time of each
  kernel apart from it (CUDA events behind a queued sleep, so the host never starves the device).

Every measurement is repeated in interleaved rounds (each round visits every job of a group once)
and keeps the median round and the spread (max − min)/median; the curves carry that spread, and
`roofline.step` turns it into an interval. Beside the curves the profile keeps the scalar priors
fitted exactly as the GPU priors are fitted to the published microbenchmarks (kernels.gemm_time):

    t(M) = max(2·M·N·K / (F · eta_flop · M/(M + M_half)), bytes(M) / (W · eta_bw)) + t_kernel

so `--explain` can show the physics next to the tables it reads.
"""

from __future__ import annotations

import datetime as _dt
import itertools
import math
import os
import platform
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..core import kernels

__all__ = ["Backend", "Measurement", "Calibration", "Plan", "calibrate", "fit_gemm_priors", "fit_tiers",
           "profile_dict", "write_profile", "backend", "host_label", "FORMAT_BYTES"]

FORMAT_BYTES = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "int8": 1.0, "fp8": 1.0}


# ---- backends ----------------------------------------------------------------------------------------

class Backend:
    """The tensor operations calibration needs, on NumPy or PyTorch (CPU or CUDA)."""

    def __init__(self, prefer: str = "auto"):
        self.torch = None
        self.device = "cpu"
        if prefer in ("auto", "torch"):
            try:
                import torch  # optional extra: pip install 'tokenmath[torch]'

                self.torch = torch
                self.device = "cuda" if torch.cuda.is_available() else "cpu"
            except ImportError:
                if prefer == "torch":
                    raise
        self.name = f"torch {self.torch.__version__} ({self.device})" if self.torch else f"numpy {np.__version__}"
        self.cuda = self.device == "cuda"

    # -- what this backend runs
    def formats(self) -> list[str]:
        """Formats with a full set of kernels (GEMM, attention, elementwise): the profile's `formats`."""
        return ["fp32", "bf16", "fp16"] if self.torch is not None else ["fp32"]

    def gemm_only_formats(self) -> list[str]:
        """Narrow formats with a matrix product only (int8 via torch._int_mm; fp8 via torch._scaled_mm)."""
        out = []
        if self.torch is None:
            return out
        t = self.torch
        try:
            a = t.ones(32, 64, dtype=t.int8, device=self.device)
            t._int_mm(a, a.T)
            out.append("int8")
        except Exception:  # noqa: BLE001 - a backend without int8 GEMM just lacks the format
            pass
        if self.cuda and t.cuda.get_device_capability(0) >= (8, 9):
            out.append("fp8")
        return out

    def dt(self, fmt: str):
        t = self.torch
        return {"fp32": t.float32, "bf16": t.bfloat16, "fp16": t.float16, "int8": t.int8,
                "fp8": getattr(t, "float8_e4m3fn", None)}[fmt]

    @property
    def threads(self) -> int:
        if self.torch is not None and not self.cuda:
            return int(self.torch.get_num_threads())
        return os.cpu_count() or 1

    # -- tensors
    def rand(self, *shape, fmt: str = "fp32"):
        if self.torch is not None:
            t = self.torch
            if fmt in ("int8", "fp8"):
                x = t.randint(-8, 8, shape, dtype=t.int8, device=self.device)
                return x if fmt == "int8" else x.to(t.float16).to(self.dt("fp8"))
            return t.empty(*shape, dtype=self.dt(fmt), device=self.device).uniform_(-1, 1)
        return np.random.default_rng(0).uniform(-1, 1, shape).astype(np.float32)

    def sync(self) -> None:
        if self.cuda:
            self.torch.cuda.synchronize()

    # -- kernels
    def linear(self, x, w, fmt: str = "fp32"):
        """y = x · wᵀ, as nn.Linear calls it (w is [N, K])."""
        if self.torch is None:
            return x @ w.T
        t = self.torch
        if fmt == "int8":
            return t._int_mm(x, w.T)
        if fmt == "fp8":
            one = t.ones((), device=self.device)
            return t._scaled_mm(x, w.T, scale_a=one, scale_b=one, out_dtype=t.bfloat16)
        return t.nn.functional.linear(x, w)

    def attend(self, q, k, v):
        """Decode attention: q [B, N, 1, H] against K, V [B, K, S, H] (grouped heads)."""
        if self.torch is not None:
            return self.torch.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=q.shape[1] != k.shape[1])
        B, N, _, H = q.shape
        Kh = k.shape[1]
        qg = q.reshape(B, Kh, N // Kh, H)
        s = (qg @ np.swapaxes(k, -1, -2)) * (H ** -0.5)
        s = np.exp(s - s.max(axis=-1, keepdims=True))
        return ((s / s.sum(axis=-1, keepdims=True)) @ v).reshape(B, N, 1, H)

    def elementwise_mix(self, x, g):
        """One of each elementwise kernel of a layer on x [T, n]: bytes moved by the 7 kernels."""
        if self.torch is None:
            y = x + x
            y = x * y
            y = x / (1 + np.exp(-x))
            y = x * x
            y.mean(-1)
            y = x * g
            y.astype(np.float32)
            return
        t = self.torch
        y = x + x
        y = x * y
        y = t.nn.functional.silu(x)
        y = x.pow(2)
        y.mean(-1, keepdim=True)
        y = g * x
        x.to(t.float32 if x.dtype != t.float32 else t.bfloat16)

    ELT_OPS = 7

    def elementwise_bytes(self, n: float, b: float) -> float:
        """Bytes the 7 kernels of elementwise_mix read and write on n elements of b bytes."""
        other = 2.0 if b == 4.0 else 4.0
        return n * (3 * b + 3 * b + 2 * b + 2 * b + b + 2 * b + (b + other))

    def route_mix(self, x, logits, k: int):
        """Mixtral's routing glue on x [T, D] with router logits [T, E] (the router GEMM apart): 17 torch calls."""
        t = self.torch
        F = t.nn.functional
        probs = F.softmax(logits, dim=1, dtype=t.float32)
        w, sel = t.topk(probs, k, dim=-1)
        w = w / w.sum(dim=-1, keepdim=True)
        mask = F.one_hot(sel, num_classes=logits.shape[1]).permute(2, 1, 0)
        t.greater(mask.sum(dim=(-1, -2)), 0).nonzero()
        idx, rows = t.where(mask[0])
        y = x[rows] * w[rows, idx, None].to(x.dtype)
        out = t.zeros_like(x)
        out.index_add_(0, rows, y)

    ROUTE_CALLS = 17  # torch calls of route_mix (each pays the dispatch)
    ROUTE_OPS = 15  # of them kernels: softmax, topk, sum, div, one_hot, sum, gt, nonzero, where, two gathers, cast,
    # mul, zeros, index_add (mask[0] and permute are views)

    def route_bytes(self, T: int, D: int, E: int, k: int, b: float) -> float:
        rows = T * k / E
        return (T * E * (4 + b) + 4 * T * E + 12 * T * k + 8 * T * k + 8 * T * k * E * 2 + 9 * E * 2
                + 8 * T * k + 16 * rows + 2 * b * rows * D + 2 * b * rows * D + b * T * D + 3 * b * rows * D)

    def gap_ops(self, fmt: str):
        """A norm on one token's activations (8 small one-thread ops): what a layer runs between two GEMMs."""
        t = self.torch
        x, g = self.rand(1, 1024, fmt=fmt), self.rand(1024, fmt=fmt)

        def norm():
            h = x.to(t.float32)
            h = h * t.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-5)
            return g * h.to(x.dtype)
        return norm

    def trivial_ops(self):
        """Tiny operations a layer dispatches (arithmetic, views, casts): their host cost, device ≈ 0."""
        if self.torch is None:
            x = np.ones((1, 8), dtype=np.float32)
            return lambda: (x + 1.0, x * x, x.reshape(-1), x.T, x.astype(np.float32), x - x), 6
        t = self.torch
        x = t.ones(1, 8, device=self.device)
        return lambda: (x + 1.0, x * x, x.view(-1), x.transpose(0, 1), t.nn.functional.silu(x), x.float()), 6

    def total(self, x):
        return x.sum()

    def memory_bytes(self) -> float:
        if self.cuda:
            return float(self.torch.cuda.get_device_properties(0).total_memory)
        return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))

    def device_label(self) -> str:
        if self.cuda:
            return self.torch.cuda.get_device_name(0)
        u = platform.uname()
        model = ""
        try:
            with open("/proc/cpuinfo", encoding="utf-8") as fh:
                model = next((ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name")), "")
        except OSError:
            pass
        return f"{model or u.machine} CPU ({self.threads} threads)"


def backend(prefer: str = "auto") -> Backend:
    return Backend(prefer)


def host_label() -> str:
    return platform.node() or "localhost"


# ---- timing --------------------------------------------------------------------------------------------

@dataclass
class Job:
    """One thing to time: fn() runs `per` kernel calls; the result is seconds per call."""

    key: tuple
    fn: Callable
    per: int = 1
    device: bool = True  # device time (CUDA events) rather than host-serial time


class Timer:
    """Interleaved rounds: each round runs every job of a group once; a job keeps its median round."""

    def __init__(self, be: Backend, rounds: int, min_time_s: float, dispatch_s: float = 0.0):
        self.be, self.rounds, self.min_time_s, self.dispatch_s = be, rounds, min_time_s, dispatch_s

    def _once(self, job: Job) -> float:
        be = self.be
        if be.cuda and job.device:
            t = be.torch
            e0, e1 = t.cuda.Event(enable_timing=True), t.cuda.Event(enable_timing=True)
            t.cuda._sleep(int(2e6 + job.per * 4e4))  # ~1 ms + 25 µs per call: the host queues fn behind it
            e0.record()
            job.fn()
            e1.record()
            e1.synchronize()
            return e0.elapsed_time(e1) / 1e3
        t0 = time.perf_counter()
        job.fn()
        be.sync()
        return time.perf_counter() - t0

    def _wall(self, job: Job) -> tuple[float, float]:
        """(timed seconds, wall seconds spent) of one run."""
        w0 = time.perf_counter()
        dt = self._once(job)
        return dt, time.perf_counter() - w0

    def run(self, jobs: list[Job], say: Callable[[str], None] | None = None) -> dict[tuple, tuple[float, float]]:
        """{key: (seconds per call, spread)} (CPU device time: host-serial time less the dispatch)."""
        rounds: dict[tuple, list[float]] = {j.key: [] for j in jobs}
        for j in jobs:
            j.fn()
        self.be.sync()
        for r in range(self.rounds):
            order = jobs[r % len(jobs):] + jobs[: r % len(jobs)] if jobs else []
            for j in order:
                if say:
                    say(" ".join(map(str, j.key)))
                best, spent, n = math.inf, 0.0, 0
                while n < 2 or (spent < self.min_time_s and n < 50):
                    dt, wall = self._wall(j)
                    best, spent, n = min(best, dt), spent + wall, n + 1
                rounds[j.key].append(best / j.per)
        out = {}
        for j in jobs:
            v = np.array(rounds[j.key])
            med = float(np.median(v))
            if not self.be.cuda and j.device:
                med = max(med - self.dispatch_s, 0.02 * med)
            out[j.key] = (med, float((v.max() - v.min()) / np.median(v)) if v.size > 1 else 0.0)
        return out


@dataclass(frozen=True)
class Measurement:
    what: str  # 'stream', 'gemm-hot', 'gemm-cold', 'gemm-tiny', 'ceiling', 'sdpa', 'elt', 'route', 'dispatch'
    shape: tuple
    dtype: str
    seconds: float
    flop: float = 0.0
    bytes: float = 0.0
    spread: float = 0.0

    @property
    def flop_per_s(self) -> float:
        return self.flop / self.seconds

    @property
    def bytes_per_s(self) -> float:
        return self.bytes / self.seconds

    def to_dict(self) -> dict:
        d = {"what": self.what, "shape": list(self.shape), "dtype": self.dtype, "seconds": self.seconds,
             "spread": self.spread}
        if self.flop:
            d.update(flop=self.flop, flop_per_s=self.flop_per_s)
        if self.bytes:
            d.update(bytes=self.bytes, bytes_per_s=self.bytes_per_s)
        return d


@dataclass(frozen=True)
class Plan:
    """What to measure: grid sizes (the defaults per backend come from `Plan.make`)."""

    rounds: int
    min_time_s: float
    stream_mib: tuple
    D: int
    Ms: tuple
    shapes: tuple  # (N, K) weight shapes
    ceiling_n: int
    sdpa_bytes: tuple  # (B·K, S) at G = 1
    sdpa_G: tuple
    sdpa_mid: tuple  # (B·K, S) for the G sweep
    H: int
    elt_n: tuple  # elements per kernel
    route_T: tuple
    pool_min_mib: float
    pool_max_mib: float = math.inf
    head: tuple = ()  # (N, K) of one weight larger than the cache (an LM head), cold by its own size
    head_max_M: int = 64
    widths: tuple = ()  # K of the cold F.linear width sweep (a CPU): curves gemm_width, gemm_width_m16
    width_elems: int = 8 * 2**20  # elements of each weight in that sweep (the same bytes at every width)
    H_wide: int = 0  # a second head size for decode attention (0: only H); curves eta_kv_bytes_h<H_wide>, eta_gqa_h<H_wide>

    @staticmethod
    def make(be: Backend, quick: bool) -> "Plan":
        if be.torch is None:  # NumPy: fp32 GEMMs, attention and elementwise only, a few seconds
            return Plan(rounds=2, min_time_s=0.002, stream_mib=(32,), D=512, Ms=(1, 4, 16, 64, 256),
                        shapes=((256, 256), (512, 512), (1408, 512)), ceiling_n=512, sdpa_bytes=((4, 256), (32, 1024)),
                        sdpa_G=(1, 4), sdpa_mid=(32, 512), H=64, elt_n=(1024, 65536), route_T=(), pool_min_mib=16.0)
        gpu = be.cuda
        D = (4096 if gpu else 2048) // (2 if quick else 1)
        F = int(D * 2.75) // 128 * 128
        return Plan(
            rounds=2 if quick else 3,
            min_time_s=0.003 if quick else 0.01,
            stream_mib=((8, 32, 128, 512) if quick else (8, 16, 32, 64, 128, 256, 512, 1024)) + ((2048, 4096) if gpu else ()),
            D=D,
            Ms=(1, 4, 16, 64, 256) if quick else (1, 2, 4, 8, 16, 32, 64, 128, 256, 512),
            shapes=((D // 2, D // 2), (D, D), (F, D)) if quick else ((D // 2, D // 2), (D, D), (F, D), (D, F)),
            ceiling_n=(8192 if gpu else 2048) // (2 if quick else 1),
            sdpa_bytes=((2, 32), (4, 256), (32, 1024), (256, 2048)) if quick else
            ((2, 32), (4, 64), (4, 256), (4, 4096), (32, 256), (32, 1024), (32, 4096), (256, 1024), (256, 4096)) +
            (((1024, 4096),) if gpu else ()),
            sdpa_G=(1, 4, 16) if quick else (1, 2, 4, 8, 16),
            sdpa_mid=(256, 2048) if gpu else (32, 1024),
            H=64,
            elt_n=(1024, 65536, 2**21) if quick else (256, 2048, 16384, 131072, 2**20, 2**23),
            route_T=(1, 16, 256) if quick else (1, 4, 16, 64, 256),
            pool_min_mib=64.0,
            head=() if gpu else (32768, D),
            H_wide=128,
            widths=() if gpu else ((512, 2048, 8192) if quick else (512, 1024, 2048, 4096, 8192)),
        )


@dataclass
class Calibration:
    """What was measured, the tables (curves) and scalar priors taken from it."""

    host: str
    date: str
    backend: str
    device: str
    memory_bytes: float
    formats: list[str]
    peaks: dict[str, float]  # FLOP/s per format
    bandwidth_bytes_per_s: float  # W: DRAM / HBM
    llc_bytes: float
    llc_bandwidth_bytes_per_s: float
    llc_hit_exponent: float
    dispatch_s: float
    host_overlap: float
    kernel_overhead_s: float
    step_overhead_s: float
    fit: dict  # the scalar fit of kernels.gemm_time (main format)
    curves: dict[str, dict]  # key -> {x, y, spread, source}
    main: str  # the format the scalar priors describe
    measurements: list[Measurement] = field(default_factory=list)
    seconds: float = 0.0
    route_dispatch_s: float = 0.0
    expert_dispatch_s: float = 0.0
    dispatch_fit: dict = field(default_factory=dict)

    @property
    def source(self) -> str:
        return f"measured by tokenmath calibrate on {self.host} at {self.date}"

    def to_dict(self) -> dict:
        d = {k: getattr(self, k) for k in ("host", "date", "backend", "device", "memory_bytes", "formats", "peaks",
                                           "bandwidth_bytes_per_s", "llc_bytes", "llc_bandwidth_bytes_per_s", "llc_hit_exponent",
                                           "dispatch_s", "route_dispatch_s", "expert_dispatch_s", "host_overlap", "kernel_overhead_s",
                                           "step_overhead_s", "fit", "dispatch_fit", "main", "seconds")}
        d["source"] = self.source
        d["curves"] = self.curves
        d["measurements"] = [m.to_dict() for m in self.measurements]
        return d


# ---- fits ----------------------------------------------------------------------------------------------

def fit_gemm_priors(mm: list[Measurement], F: float, W: float) -> tuple[float, float, float, float, float, float]:
    """(eta_flop, eta_bw, t_kernel, M_half, median |error|, p90 |error|) of kernels.gemm_time fitted to matmuls."""
    M = np.array([m.shape[0] for m in mm], dtype=float)[:, None, None, None, None]
    flop = np.array([m.flop for m in mm])[:, None, None, None, None]
    byts = np.array([m.bytes for m in mm])[:, None, None, None, None]
    meas = np.array([m.seconds for m in mm])[:, None, None, None, None]
    ef = np.arange(0.40, 1.0001, 0.02)[None, :, None, None, None]
    eb = np.arange(0.30, 1.0001, 0.02)[None, None, :, None, None]
    tk = np.concatenate([[0.0], np.geomspace(1e-7, max(float(np.min(meas)) / 2, 2e-7), 12)])[None, None, None, :, None]
    mh = np.array([0, 1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128], dtype=float)[None, None, None, None, :]
    pred = kernels.gemm_time(flop, F, kernels.small_m_efficiency(ef, M, mh), byts, W, eb, tk)
    err = np.mean(np.abs(np.log(pred / meas)), axis=0)
    i, j, k, h = np.unravel_index(np.argmin(err), err.shape)
    e_flop, e_bw, t_k, m_h = float(ef.flat[i]), float(eb.flat[j]), float(tk.flat[k]), float(mh.flat[h])
    M1, f1, b1, t1 = M[:, 0, 0, 0, 0], flop[:, 0, 0, 0, 0], byts[:, 0, 0, 0, 0], meas[:, 0, 0, 0, 0]
    rel = np.abs(kernels.gemm_time(f1, F, kernels.small_m_efficiency(e_flop, M1, m_h), b1, W, e_bw, t_k) / t1 - 1)
    return e_flop, e_bw, t_k, m_h, float(np.median(rel)), float(np.percentile(rel, 90))


def fit_tiers(ws_bytes, rate_bytes_per_s) -> tuple[float, float, float, float]:
    """(C, W_c, W, p): a cache of C bytes at W_c in front of memory at W, fitted to read rates by working set.

    1/rate = h/W_c + (1 − h)/W with h = min(1, C/ws)^p (p = 1: random replacement keeps C/ws of a cyclic
    stream; a large p: LRU-like, a sharp cliff); least squares in relative error over a grid of C and p.
    """
    ws = np.asarray(ws_bytes, dtype=float)
    inv = 1.0 / np.asarray(rate_bytes_per_s, dtype=float)
    best = (math.inf, float(ws.max()), float(1 / inv.min()), float(1 / inv.min()), 1.0)
    for p in (1.0, 2.0, 4.0):
        for C in np.geomspace(ws.min() / 4, ws.max(), 160):
            h = np.minimum(1.0, C / ws) ** p
            A = np.stack([h, 1 - h], axis=1) / inv[:, None]  # rows scaled: relative residuals
            sol, *_ = np.linalg.lstsq(A, np.ones_like(ws), rcond=None)
            a, b = sol
            if a <= 0 or b <= 0 or a > b:  # the cache must be faster than memory
                continue
            res = float(np.sum((A @ sol - 1) ** 2))
            if res < best[0] * 0.98:  # a sharper cliff must fit clearly better
                best = (res, float(C), float(1 / a), float(1 / b), p)
    _, C, Wc, W, p = best
    if Wc < 1.1 * W:  # no tier worth the name (a GPU's small reads are bound by their launch, not a cache)
        return 0.0, W, W, 1.0
    return C, Wc, W, p


def _curve(x, y, spread, source: str, lo: float = 1e-3, hi: float = 1.5) -> dict:
    """A curve as the profile stores it: x increasing, y clipped to (lo, hi], spreads rounded."""
    order = np.argsort(x)
    xs, ys, ss = np.asarray(x, float)[order], np.clip(np.asarray(y, float)[order], lo, hi), np.asarray(spread)[order]
    groups: list[list[int]] = []
    for i in range(len(xs)):  # points within 5 % of each other in x (shapes of equal size) share one value
        if groups and xs[i] <= xs[groups[-1][0]] * 1.05:
            groups[-1].append(i)
        else:
            groups.append([i])
    gx = [float(np.exp(np.mean(np.log(xs[g])))) for g in groups]
    gy = [float(np.exp(np.mean(np.log(ys[g])))) for g in groups]
    gs = [float(np.max(ss[g])) for g in groups]
    return {"x": [float(f"{v:.6g}") for v in gx], "y": [float(f"{v:.4g}") for v in gy],
            "spread": [round(min(v, 10.0), 3) for v in gs], "source": source}


# ---- measuring -----------------------------------------------------------------------------------------------

def calibrate(quick: bool = False, prefer: str = "auto", progress: Callable[[str, float], None] | None = None,
              plan: Plan | None = None, formats: list[str] | None = None) -> Calibration:
    """Run the measurements (a few minutes; `quick` under one) and build the tables and the fitted priors."""
    t_start = time.perf_counter()
    be = backend(prefer)
    P = plan or Plan.make(be, quick)
    fmts = [f for f in be.formats() if formats is None or f in formats]
    extra_fmts = [f for f in be.gemm_only_formats() if formats is None or f in formats]
    if not fmts:
        raise ValueError(f"--formats: this backend ({be.name}) runs {', '.join(be.formats())}")
    say = progress or (lambda what, frac: None)
    out: list[Measurement] = []
    n_steps = 2 + 4 * len(fmts) + len(extra_fmts)
    step_i = [0]

    def stage(what: str) -> Callable[[str], None]:
        frac0 = step_i[0] / n_steps
        step_i[0] += 1
        say(what, frac0)
        return lambda detail: say(f"{what}: {detail}", frac0)

    # host cost of one dispatched op
    tick = stage("dispatch")
    fn, n_ops = be.trivial_ops()
    reps = 50
    tm = Timer(be, P.rounds, P.min_time_s)
    r = tm.run([Job(("dispatch",), lambda: [fn() for _ in range(reps)], per=reps * n_ops, device=False)], tick)
    dispatch_s, sp = r[("dispatch",)]
    out.append(Measurement("dispatch", (n_ops,), "fp32", dispatch_s, spread=sp))
    step_overhead_s = 0.0
    if be.cuda:
        r = tm.run([Job(("sync",), lambda: be.sync(), per=1, device=False)])
        step_overhead_s = r[("sync",)][0]
    timer = Timer(be, P.rounds, P.min_time_s, dispatch_s)

    # memory tiers: read rate by working set (a CPU: GEMVs over a pool of 4 MiB matrices, the access pattern of a
    # decode step's weights; a GPU: one reduction over the buffer)
    tick = stage("memory read by size")
    jobs, bufs = [], {}
    for mib in P.stream_mib:
        n = int(mib * 2**20 // 4)
        if 3 * n * 4 > be.memory_bytes() * 0.5:
            continue
        if be.cuda:
            bufs[mib] = be.rand(n)
            jobs.append(Job(("stream", mib), (lambda b=bufs[mib]: be.total(b))))
        else:
            bufs[mib] = [be.rand(1024, 1024) for _ in range(max(1, n // 2**20))]
            x1 = be.rand(1, 1024)
            jobs.append(Job(("stream", mib), (lambda ws=bufs[mib], x1=x1: [be.linear(x1, w) for w in ws])))
    res = timer.run(jobs, tick)
    ws, rates = [], []
    for mib in bufs:
        s, sp = res[("stream", mib)]
        out.append(Measurement("stream", (int(mib * 2**20 // 4),), "fp32", s, bytes=mib * 2**20, spread=sp))
        ws.append(mib * 2**20)
        rates.append(mib * 2**20 / s)
    bufs.clear()
    if be.cuda:  # the raw device-to-device copy, reported beside the tiers
        n = int(1024 * 2**20 // 4)
        src_buf, dst_buf = be.rand(n), be.rand(n)
        r = timer.run([Job(("copy",), lambda: dst_buf.copy_(src_buf))])
        out.append(Measurement("copy", (n,), "fp32", r[("copy",)][0], bytes=8.0 * n, spread=r[("copy",)][1]))
        del src_buf, dst_buf
    C, Wc, W, hp = fit_tiers(ws, rates)
    if be.torch is None or len(ws) < 4:
        C, Wc, W, hp = 0.0, max(rates), max(rates), 1.0
    pool_bytes = min(max(8 * C, P.pool_min_mib * 2**20), 0.04 * be.memory_bytes(), P.pool_max_mib * 2**20)

    curves: dict[str, dict] = {}
    peaks: dict[str, float] = {}
    t_kernels: dict[str, float] = {}
    src = f"measured by tokenmath calibrate on {host_label()} at {_dt.date.today().isoformat()}"
    for fmt in fmts + extra_fmts:
        b = FORMAT_BYTES[fmt]
        gemm_only = fmt in extra_fmts
        tick = stage(f"{fmt} GEMM")
        _measure_gemms(be, timer, P, fmt, b, pool_bytes, out, tick)
        mine = [m for m in out if m.dtype == fmt and m.what in ("gemm-hot", "gemm-cold", "ceiling")]
        peaks[fmt] = max(m.flop_per_s for m in mine)
        tiny = {m.shape[0]: m for m in out if m.dtype == fmt and m.what == "gemm-tiny"}
        xs, tks, bws, mms, ss, rws = [], [], [], [], [], []
        for M in P.Ms:
            cold = [m for m in out if m.dtype == fmt and m.what == "gemm-cold" and m.shape[0] == M]
            hot = [m for m in out if m.dtype == fmt and m.what == "gemm-hot" and m.shape[0] == M]
            if not cold:
                continue
            # cold calls of several sizes: t = t_kernel + bytes / (W_pool · eta_bw), the pool's own cache hits in W_pool;
            # on a CPU also + N · t_row, each weight row's own cost (a head-sized weight, P.head, pins the slope)
            floor = tiny[M].seconds - tiny[M].flop / peaks[fmt] if M in tiny else 0.0
            if P.head:
                a, t_row, sec_per_byte = _fixed_rows_stream([m.shape[1] for m in cold], [m.bytes for m in cold],
                                                            [m.seconds for m in cold], max(floor, 0.0))
            else:
                (a, sec_per_byte), t_row = _fixed_plus_stream([m.bytes for m in cold], [m.seconds for m in cold],
                                                              max(floor, 0.0)), 0.0
            w_pool = [_pool_bandwidth(C, Wc, W, hp, _pool_size(pool_bytes, m.bytes)) for m in cold]
            xs.append(M)
            tks.append(a)
            rws.append(t_row)
            bws.append(float(np.median([1.0 / (sec_per_byte * w) for w in w_pool])))
            mms.append(float(np.median([m.flop / (peaks[fmt] * max(m.seconds - a - m.shape[1] * t_row, 0.05 * m.seconds))
                                        for m in hot])))
            ss.append(max(m.spread for m in cold + hot))
        shapes = ", ".join(f"{n}×{k}" for n, k in P.shapes)
        t_kernels[fmt] = tks[0]
        curves[f"t_kernel.{fmt}"] = _curve(xs, tks, ss, f"{src}: F.linear over rows M, weights cold, shapes {shapes}: "
                                           f"the intercept of t = t_kernel + bytes / (W · eta_bw) (fixed cost of one "
                                           f"GEMM call)", lo=1e-9, hi=math.inf)
        curves[f"t_kernel.{fmt}"]["unit"] = "s"
        if P.head:
            curves[f"t_row.{fmt}"] = _curve(xs, [max(r, 1e-12) for r in rws], ss,
                                            f"{src}: the same fit, t = t_kernel + N · t_row + bytes / (W · eta_bw) with "
                                            f"a {P.head[0]}×{P.head[1]} weight beside them: the cost of each weight row "
                                            f"(its reduction and store) at M rows", lo=1e-12, hi=math.inf)
            curves[f"t_row.{fmt}"]["unit"] = "s"
        curves[f"eta_bw.{fmt}"] = _curve(xs, bws, ss, f"{src}: the same fit, its slope: weights streamed from a pool "
                                         f"{pool_bytes / 2**20:.0f} MiB (its own cache hits taken out), fraction of W")
        curves[f"eta_mm.{fmt}"] = _curve(xs, mms, ss, f"{src}: F.linear over rows M, weights in cache, shapes {shapes}, "
                                         f"less t_kernel: FLOP rate, fraction of the {fmt} peak")
        if gemm_only:
            continue
        if P.widths and be.torch is not None:
            _measure_widths(be, timer, P, fmt, b, pool_bytes, out, tick, curves, lambda by: _pool_bandwidth(
                C, Wc, W, hp, _pool_size(pool_bytes, by)), src)
        tick = stage(f"{fmt} attention decode")
        _measure_sdpa(be, timer, P, fmt, b, pool_bytes, out, tick)
        for H in (P.H, P.H_wide) if P.H_wide else (P.H,):
            tag = "" if H == P.H else f"_h{H}"
            pts = [m for m in out if m.what == "sdpa" and m.dtype == fmt and m.shape[2] == 1 and m.shape[4] == H]
            curves[f"eta_kv_bytes{tag}.{fmt}"] = _curve(
                [m.bytes for m in pts],
                [m.bytes_per_s / _pool_bandwidth(C, Wc, W, hp, _pool_size(pool_bytes, m.bytes)) for m in pts],
                [m.spread for m in pts],
                f"{src}: scaled_dot_product_attention, one query per sequence, G = 1, H = {H}, KV cold; by the KV "
                f"bytes one call reads, fraction of W")
            g1 = next(m for m in out if m.what == "sdpa-G" and m.dtype == fmt and m.shape[2] == 1 and m.shape[4] == H)
            gpts = [m for m in out if m.what == "sdpa-G" and m.dtype == fmt and m.shape[4] == H]
            curves[f"eta_gqa{tag}.{fmt}"] = _curve([m.shape[2] for m in gpts], [g1.seconds / m.seconds for m in gpts],
                                                   [m.spread for m in gpts],
                                                   f"{src}: the same call with G query heads per KV head (B·K = "
                                                   f"{P.sdpa_mid[0]}, S = {P.sdpa_mid[1] * P.H // H}, H = {H}): rate relative "
                                                   f"to G = 1")
        tick = stage(f"{fmt} elementwise and norm kernels")
        _measure_elementwise(be, timer, P, fmt, b, out, tick)
        pts = [m for m in out if m.what == "elt" and m.dtype == fmt]
        curves[f"t_elt.{fmt}"] = _curve([m.bytes / be.ELT_OPS for m in pts], [m.seconds / be.ELT_OPS for m in pts],
                                        [m.spread for m in pts],
                                        f"{src}: add, multiply, SiLU, square, mean, scale, cast on activations in "
                                        f"cache: device time of one kernel by the bytes it reads and writes",
                                        lo=1e-9, hi=math.inf)
        curves[f"t_elt.{fmt}"]["unit"] = "s"
        if be.torch is not None:
            tick = stage(f"{fmt} MoE routing ops")
            _measure_routing(be, timer, P, fmt, b, out, tick)
            pts = [m for m in out if m.what == "route" and m.dtype == fmt]
            curves[f"t_route.{fmt}"] = _curve([m.bytes / be.ROUTE_OPS for m in pts],
                                              [m.seconds / be.ROUTE_OPS for m in pts], [m.spread for m in pts],
                                              f"{src}: Mixtral's routing (softmax, top-k, one-hot, nonzero, where, "
                                              f"gather, index_add) over T tokens, E = 8, k = 2: device time of one "
                                              f"op by its bytes", lo=1e-9, hi=math.inf)
            curves[f"t_route.{fmt}"]["unit"] = "s"
        else:
            step_i[0] += 1
    main = main_format(be.cuda, fmts)
    cold = [m for m in out if m.what == "gemm-cold" and m.dtype == main]
    e_flop, e_bw, t_k, m_h, med, p90 = fit_gemm_priors(cold, peaks[main], W)
    fit = {"eta_flop": e_flop, "eta_bw": e_bw, "kernel_overhead_s": t_k, "matmul_m_half": m_h,
           "median_abs_error": med, "p90_abs_error": p90, "n": len(cold)}
    cal = Calibration(host=host_label(), date=_dt.date.today().isoformat(), backend=be.name, device=be.device_label(),
                      memory_bytes=be.memory_bytes(), formats=fmts + extra_fmts, peaks=peaks,
                      bandwidth_bytes_per_s=W, llc_bytes=C, llc_bandwidth_bytes_per_s=Wc, llc_hit_exponent=hp,
                      dispatch_s=dispatch_s,
                      host_overlap=1.0 if be.cuda else 0.0, kernel_overhead_s=float(np.median(list(t_kernels.values()))),
                      step_overhead_s=step_overhead_s, fit=fit, curves=curves, main=main, measurements=out)
    if be.torch is not None:
        _fit_dispatch(be, timer, cal, stage("host cost of eager ops (tiny decode steps)"))
    else:  # NumPy runs no eager decoder: its profile prices kernels only
        cal.dispatch_s = 0.0
    say("fit", 1.0)
    cal.seconds = time.perf_counter() - t_start
    return cal


def _tiny_models(fmt: str):
    """A tiny dense GQA decoder and the same with an 8-expert top-2 MoE: their steps are nearly all dispatch."""
    from ..core.records import Model, MoE

    kw = dict(n_layers=2, d_model=64, n_heads=4, n_kv_heads=2, head_dim=16, d_ff=128, vocab_size=256,
              weight_dtype=fmt, kv_dtype=fmt, eager_code="check-local")
    return (Model(name="calibrate-tiny-dense", **kw),
            Model(name="calibrate-tiny-moe", moe=MoE(n_routed_experts=8, experts_per_token=2, d_ff_expert=64), **kw))


def _fit_dispatch(be: Backend, timer: "Timer", cal: "Calibration", tick) -> None:
    """The host cost of one eager op, and of one MoE routing call, from real tiny decode steps (check-local's).

    A tiny step's kernels take almost no device time, so what it takes beyond them is its ops' dispatch:
        CPU (costs add):        t = t_device + n_ops·t_dispatch + n_route·t_dispatch_route
        GPU (host runs ahead):  t = max(t_device, n_ops·t_dispatch + n_route·t_dispatch_route)
    t_device is this profile's own prediction of the step without host costs (roofline.step).
    """
    import tempfile

    from ..core import eager
    from ..core.load import load_priors, load_system
    from ..core.roofline import step
    from .checklocal import _DecodeModel

    fmt = cal.main
    dense, moe = _tiny_models(fmt)
    t = be.torch
    runs = [(dense, 1), (moe, 1), (moe, 32)]  # one token hits exactly 2 experts; 32 tokens hit all 8 (p ≈ 0.99)
    jobs, hits = [], {}
    for m, B in runs:
        dm = _DecodeModel(m, fmt, be.device)
        cache = dm.kv_cache(B, 16)
        tok = t.arange(B, device=be.device) % m.vocab_size
        if m.moe is not None:  # the experts this batch really hits, layer by layer
            hits[B] = _experts_hit(dm, tok, cache)

        def fn(dm=dm, cache=cache, tok=tok):
            with t.inference_mode():
                dm.step(tok, cache)
        jobs.append(Job((m.name, B), fn, per=1, device=False))
    res = timer.run(jobs, tick)
    with tempfile.TemporaryDirectory() as d:
        path = f"{d}/provisional.yaml"
        write_profile(path, cal)
        system = load_system(path)
        pri = load_priors(system.chip.priors).model_copy(
            update={"dispatch_s": 1e-15, "route_dispatch_s": 1e-15, "expert_dispatch_s": 1e-15})

        def device_time(m, B):
            if be.cuda:  # the host runs ahead: a tiny step's time is its host time
                return 0.0
            return float(step(m, system, G=1, B=B, S=16, precision=fmt, kv_dtype=fmt, priors=pri).v("t_step"))

        rows = []
        for m, B in runs:
            ops = eager.eager_ops(m, B, fmt)
            c = eager.counts(m)  # check-local's: per expert hit its glue and its MLP
            n_exp = 0.0 if m.moe is None else hits[B] * m.n_layers * (c["moe_hit"] + c["mlp_gated"])
            rows.append((res[(m.name, B)][0], device_time(m, B), float(ops.n_host), float(ops.n_host_route), n_exp))
    (t_d, dev_d, n_d, _, _), (t_1, dev_1, n_1, r_1, e_1), (t_32, dev_32, n_32, r_32, e_32) = rows
    d = max((t_d - dev_d) / n_d, 0.3 * cal.dispatch_s)
    # two MoE steps, 2 and 8 experts hit per layer: the per-expert calls from the difference, then the routing
    d_e = max(((t_32 - dev_32 - n_32 * d) - (t_1 - dev_1 - n_1 * d)) / max(e_32 - e_1, 1.0), 0.5 * d)
    d_r = max((t_1 - dev_1 - n_1 * d - e_1 * d_e) / r_1, 0.5 * d)
    cal.measurements += [Measurement("tiny-step", (m.name, B), fmt, res[(m.name, B)][0], spread=res[(m.name, B)][1])
                         for m, B in runs]
    cal.dispatch_s, cal.route_dispatch_s, cal.expert_dispatch_s = d, d_r, d_e
    cal.dispatch_fit = {"dense_step_s": t_d, "dense_device_s": dev_d, "dense_ops": n_d, "moe_steps_s": [t_1, t_32],
                        "moe_device_s": [dev_1, dev_32], "moe_route_calls": r_1, "moe_expert_calls": [e_1, e_32]}


# how far a shared host's per-op cost moves between calibration and use: what an eager step's interval allows
HOST_DRIFT = 0.3
HOST_DRIFT_SOURCE = ("estimate from this project's own measurements (validation/README.md, calibration): a 2-vCPU "
                     "cloud VM's per-op cost moved by ±30 % within minutes, an H100 host's from 17.0 to 12.2 µs per "
                     "op within one session (9 µs earlier that morning); the interval takes the host term at "
                     "t_host/(1 + d) and t_host·(1 + d)")


def main_format(cuda: bool, formats) -> str:
    """The format a profile's scalar priors and its host costs are measured in: bf16 on a GPU, fp32 on a CPU."""
    main = "bf16" if cuda else "fp32"
    return main if main in formats else list(formats)[0]


def host_probe_time(fmt: str, rounds: int = 3, min_time_s: float = 0.01) -> float:
    """The tiny dense decode step `_fit_dispatch` fits the host costs on (B = 1, S = 16), timed now as calibrate
    times it (host-serial time of interleaved rounds, their median): what check-local compares with the
    profile's `host_probe_s` to see how far the host's speed has drifted since."""
    from .checklocal import _DecodeModel

    be = Backend("torch")
    m = _tiny_models(fmt)[0]
    dm = _DecodeModel(m, fmt, be.device)
    cache = dm.kv_cache(1, 16)
    tok = be.torch.arange(1, device=be.device) % m.vocab_size

    def fn():
        with be.torch.inference_mode():
            dm.step(tok, cache)
    return Timer(be, rounds, min_time_s).run([Job(("host probe",), fn, per=1, device=False)])[("host probe",)][0]


def _experts_hit(dm, tok, cache) -> float:
    """Experts hit per MoE layer (mean over layers) by one step of these tokens."""
    t = dm.t
    seen = []
    orig = dm._moe

    def spy(h, lay):
        x = h.view(-1, h.shape[-1])
        probs = t.nn.functional.softmax(t.nn.functional.linear(x, lay["router"]), dim=1, dtype=t.float32)
        seen.append(len(t.unique(t.topk(probs, dm.m.moe.experts_per_token, dim=-1)[1])))
        return orig(h, lay)
    dm._moe = spy
    with t.inference_mode():
        dm.step(tok, cache)
    del dm._moe
    return float(np.mean(seen))


def _pool_size(pool_bytes: float, item_bytes: float) -> float:
    """Bytes a pool of copies of one item really spans (at least two copies)."""
    return max(2, math.ceil(pool_bytes / item_bytes)) * item_bytes


def _pool_bandwidth(C: float, Wc: float, W: float, p: float, ws: float) -> float:
    """The read rate a pool of ws bytes gets from the two tiers (kernels.tiered_bandwidth at h = min(1, C/ws)^p)."""
    if not C:
        return W
    return float(kernels.tiered_bandwidth(kernels.cache_hit_share(C, ws, p), Wc, W))


def _fixed_plus_stream(nbytes, seconds, floor: float = 0.0) -> tuple[float, float]:
    """(a, b) of t = a + b·bytes fitted in relative error, a ≥ floor (a one-size sweep: a = floor)."""
    x, t = np.asarray(nbytes, float), np.asarray(seconds, float)
    if len(set(x)) < 2:
        return floor, float(np.median((t - floor) / x))
    A = np.stack([np.ones_like(x), x], axis=1) / t[:, None]
    (a, b), *_ = np.linalg.lstsq(A, np.ones_like(t), rcond=None)
    if a < floor or b <= 0:
        a = floor
        b = float(np.sum((t - a) * x / t**2) / np.sum(x * x / t**2))
    return float(a), float(max(b, 1e-15))


def _fixed_rows_stream(rows, nbytes, seconds, floor: float = 0.0) -> tuple[float, float, float]:
    """(a, r, s) of t = a + r·N + s·bytes fitted in relative error, a ≥ floor, r ≥ 0 (else the two-term fit).

    A CPU matrix product of an [N, K] weight pays per row of it besides its bytes (the end of each row's dot
    products: a reduction and a store), so at equal bytes a narrow layer's short rows (K = 512–1536) run slower
    than a wide one's. Measured on this VM's check-local steps (2026-11-24, torch 2.13 CPU): a bf16 one-row
    product streamed 49152×1536 (an LM head) at 21 GB/s and 32768×2048 at 23 GB/s; 4096×1536 at 18 GB/s.
    """
    N, x, t = (np.asarray(v, float) for v in (rows, nbytes, seconds))
    if len(set(zip(N / x, x))) < 3:
        return (*_fixed_plus_stream(x, t, floor)[:1], 0.0, _fixed_plus_stream(x, t, floor)[1])
    A = np.stack([np.ones_like(x), N, x], axis=1) / t[:, None]
    (a, r, s), *_ = np.linalg.lstsq(A, np.ones_like(t), rcond=None)
    if a < floor:
        a = floor
        A2 = np.stack([N, x], axis=1) / t[:, None]
        (r, s), *_ = np.linalg.lstsq(A2, 1 - a / t, rcond=None)
    if r < 0 or s <= 0:
        a2, s2 = _fixed_plus_stream(x, t, floor)
        return a2, 0.0, s2
    return float(a), float(r), float(s)


def _pool(be: Backend, shape: tuple, fmt: str, pool_bytes: float, b: float) -> list:
    n = max(2, math.ceil(pool_bytes / (math.prod(shape) * b)))
    return [be.rand(*shape, fmt=fmt) for _ in range(n)]


def _measure_gemms(be, timer, P, fmt, b, pool_bytes, out, tick):
    """Cold (pool) and hot (one weight) F.linear over M for each shape, a tiny GEMM, and the ceiling."""
    for N, K in P.shapes + ((P.head,) if P.head else ()):
        is_head = (N, K) == P.head
        pool = _pool(be, (N, K), fmt, pool_bytes, b)
        ring = itertools.cycle(pool)  # every call takes the next weights: between two reads of one, the pool was read
        xs = {M: be.rand(M, K, fmt=fmt) for M in P.Ms}
        # on a CPU a decode step runs a norm's worth of one-thread ops between GEMMs (the matrix units idle, the
        # threads park): each cold call is followed by one, whose own time is taken out (job "gap")
        gap = be.gap_ops(fmt) if not be.cuda and be.torch is not None else (lambda: None)
        jobs = [Job(("gap", fmt, 0, N, K), lambda: [gap() for _ in range(4)], per=4)]
        for M in P.Ms:
            x = xs[M]
            if fmt in ("int8", "fp8") and M < 32:  # these kernels need M ≥ 17 (int8) / 16-aligned rows
                continue
            if is_head and M > P.head_max_M:  # many rows over a head-sized weight: seconds, and compute-bound
                continue
            k = min(len(pool), 4)
            jobs.append(Job(("cold", fmt, M, N, K),
                            (lambda x=x, k=k: [(be.linear(x, next(ring), fmt), gap()) for _ in range(k)]), per=k))
            if is_head:  # larger than the cache: it has no hot case
                continue
            jobs.append(Job(("hot", fmt, M, N, K), (lambda x=x: [be.linear(x, pool[0], fmt) for _ in range(4)]),
                            per=4))
        res = timer.run(jobs, tick)
        t_gap = res[("gap", fmt, 0, N, K)][0] + timer.dispatch_s  # run() took one dispatch off: the gap is host work
        for j in jobs[1:]:
            kind, _, M, _, _ = j.key
            s, sp = res[j.key]
            if kind == "cold":
                s = max(s - t_gap, 0.5 * s)
            out.append(Measurement(f"gemm-{kind}", (M, N, K), fmt, s, flop=kernels.gemm_flop(M, N, K),
                                   bytes=N * K * b, spread=sp))
        del pool, xs
    w = be.rand(256, 256, fmt=fmt)
    n = P.ceiling_n
    a, c = be.rand(n, n, fmt=fmt), be.rand(n, n, fmt=fmt)
    jobs = [Job(("ceiling", fmt, n), lambda: be.linear(a, c, fmt))]
    for M in P.Ms:
        if fmt in ("int8", "fp8") and M < 32:
            continue
        x = be.rand(M, 256, fmt=fmt)
        jobs.append(Job(("tiny", fmt, M), (lambda x=x: [be.linear(x, w, fmt) for _ in range(20)]), per=20))
    res = timer.run(jobs, tick)
    for j in jobs:
        s, sp = res[j.key]
        M = j.key[2]
        if j.key[0] == "ceiling":
            out.append(Measurement("ceiling", (n, n, n), fmt, s, flop=kernels.gemm_flop(n, n, n), bytes=3 * n * n * b,
                                   spread=sp))
        else:
            out.append(Measurement("gemm-tiny", (M, 256, 256), fmt, s, flop=kernels.gemm_flop(M, 256, 256),
                                   bytes=256 * 256 * b, spread=sp))


def _measure_widths(be, timer, P, fmt, b, pool_bytes, out, tick, curves, w_pool, src):
    """Cold F.linear of equal bytes at widths K (P.widths), M = 1 and 16: each one's time over what the fit
    t_kernel + N · t_row + bytes / (W_pool · eta_bw) prices it at, as a rate relative to the fit (fit / measured)
    -> curves gemm_width (M = 1), gemm_width_m16.

    On this VM (2026-11-24, torch 2.13 CPU, 8-34 MB weights) bf16 ran 1.1-1.5x over the fit at K = 512-1024 and
    1.5x at K = 8192 with one row (1.05x with 16), about 1.0 at K = 2048-4096 (the pool's widths); fp32 within
    ~10 % at every width: the fit's widths do not speak for narrow or very wide rows. Where the fit misses by
    more than 1.5x at the pool's own width D, that is the weight's size, not its width (fp16 ran these 16 MiB
    weights 5x slower than the fit at every width, 2026-11-24): the ratios are then taken relative to D's."""
    NK = P.width_elems
    gap = be.gap_ops(fmt)
    jobs = [Job(("gap", fmt, "w"), lambda: [gap() for _ in range(4)], per=4)]
    pools = []
    for K in P.widths:
        N = NK // K
        pool = _pool(be, (N, K), fmt, pool_bytes, b)
        pools.append(pool)
        ring = itertools.cycle(pool)
        for M in (1, 16):
            x, k = be.rand(M, K, fmt=fmt), min(len(pool), 4)
            jobs.append(Job(("width", fmt, M, N, K),
                            (lambda x=x, k=k, r=ring: [(be.linear(x, next(r), fmt), gap()) for _ in range(k)]), per=k))
    res = timer.run(jobs, tick)
    t_gap = res[jobs[0].key][0] + timer.dispatch_s
    ratios: dict = {1: [], 16: []}
    spreads: dict = {1: [], 16: []}
    for j in jobs[1:]:
        _, _, M, N, K = j.key
        sec, sp = res[j.key]
        sec = max(sec - t_gap, 0.5 * sec)
        by = N * K * b
        out.append(Measurement("gemm-width", (M, N, K), fmt, sec, flop=kernels.gemm_flop(M, N, K), bytes=by, spread=sp))
        fit = (kernels.curve_value(_as_curve(curves[f"t_kernel.{fmt}"]), M)
               + N * (kernels.curve_value(_as_curve(curves[f"t_row.{fmt}"]), M) if f"t_row.{fmt}" in curves else 0.0)
               + by / (w_pool(by) * kernels.curve_value(_as_curve(curves[f"eta_bw.{fmt}"]), M)))
        ratios[M].append(float(fit) / sec)
        spreads[M].append(sp)
    del pools, jobs
    ref = int(np.argmin([abs(math.log(K / P.D)) for K in P.widths]))  # the pool's own width: the fit holds there
    for M, name in ((1, "gemm_width"), (16, "gemm_width_m16")):
        level = ratios[M][ref] if not 2 / 3 <= ratios[M][ref] <= 1.5 else 1.0
        over = f", over its value at the pool's width K = {P.widths[ref]}" if level != 1 else ""
        curves[f"{name}.{fmt}"] = _curve(list(P.widths), [r / level for r in ratios[M]], spreads[M],
                                         f"{src}: F.linear of {NK * b / 2**20:.0f} MiB weights [N, K] at widths K, "
                                         f"M = {M}, cold (a pool, a norm between calls): the fit t_kernel + N · t_row + "
                                         f"bytes / (W · eta_bw) at the same M over the measured time (rate relative "
                                         f"to the fit){over}", lo=0.2, hi=1.5)


class _as_curve:
    """A curve dict (as `_curve` builds it) read by kernels.curve_value."""

    def __init__(self, d: dict):
        self.x, self.y = d["x"], d["y"]


def _measure_sdpa(be, timer, P, fmt, b, pool_bytes, out, tick):
    """Attention decode, KV cold: by bytes per call at G = 1, then by G at one size; at head size H and H_wide.

    The same KV bytes run at different rates by head size (on this VM, 2026-11-24, bf16 at G = 6: H = 128 read
    1.1-1.5x faster per byte than H = 64; at G = 2 and 512 MB per call 0.86x), so both are measured and a
    model reads its own H between them (roofline.attention_head_eta)."""
    for H in (P.H, P.H_wide) if P.H_wide else (P.H,):  # one head size at a time: each pool is ~8x the cache
        jobs, meta = [], {}
        for BK, S in P.sdpa_bytes:
            S = S * P.H // H  # the same bytes per call at either head size
            B, K = max(1, BK // 4), min(4, BK)
            per_call = 2 * B * K * S * H * b
            n_sets = max(2, math.ceil(pool_bytes / per_call))
            if n_sets * per_call > be.memory_bytes() * 0.3:
                continue
            kv = [(be.rand(B, K, S, H, fmt=fmt), be.rand(B, K, S, H, fmt=fmt)) for _ in range(n_sets)]
            q = be.rand(B, K, 1, H, fmt=fmt)
            ring = itertools.cycle(kv)
            jobs.append(Job(("sdpa", fmt, B, K, S, H),
                            (lambda q=q, ring=ring: [be.attend(q, *next(ring)) for _ in range(2)]), per=2))
            meta[jobs[-1].key] = (B, K, 1, S, per_call)
        BK, S = P.sdpa_mid
        S = S * P.H // H
        B, K = max(1, BK // 4), min(4, BK)
        per_call = 2 * B * K * S * H * b
        n_sets = max(2, math.ceil(pool_bytes / per_call))
        kv = [(be.rand(B, K, S, H, fmt=fmt), be.rand(B, K, S, H, fmt=fmt)) for _ in range(n_sets)]
        ring_g = itertools.cycle(kv)
        for G in P.sdpa_G:
            q = be.rand(B, K * G, 1, H, fmt=fmt)
            jobs.append(Job(("sdpa-G", fmt, G, H), (lambda q=q, r=ring_g: [be.attend(q, *next(r)) for _ in range(2)]),
                            per=2))
            meta[jobs[-1].key] = (B, K, G, S, per_call)
        res = timer.run(jobs, tick)
        for j in jobs:
            Bq, Kq, G, S, per_call = meta[j.key]
            s, sp = res[j.key]
            out.append(Measurement(j.key[0], (Bq, Kq, G, S, H), fmt, s, flop=4.0 * Bq * Kq * G * S * H,
                                   bytes=per_call, spread=sp))
        del jobs, kv, ring_g


def _measure_elementwise(be, timer, P, fmt, b, out, tick):
    jobs = []
    for n in P.elt_n:
        T = 8 if n >= 8 * 256 else 1
        x, g = be.rand(T, n // T, fmt=fmt), be.rand(n // T, fmt=fmt)
        jobs.append(Job(("elt", fmt, n), (lambda x=x, g=g: be.elementwise_mix(x, g)), per=1))
    res = timer.run(jobs, tick)
    for j in jobs:
        n = j.key[2]
        s, sp = res[j.key]
        s = max(s - (be.ELT_OPS - 1) * timer.dispatch_s * (0 if be.cuda else 1), 0.02 * s)
        out.append(Measurement("elt", (n,), fmt, s, bytes=be.elementwise_bytes(n, b), spread=sp))


def _measure_routing(be, timer, P, fmt, b, out, tick):
    D, E, k = 1024, 8, 2
    jobs = []
    for T in P.route_T:
        x, logits = be.rand(T, D, fmt=fmt), be.rand(T, E, fmt=fmt)
        jobs.append(Job(("route", fmt, T), (lambda x=x, lg=logits: be.route_mix(x, lg, k)), per=1))
    res = timer.run(jobs, tick)
    for j in jobs:
        T = j.key[2]
        s, sp = res[j.key]
        s = max(s - (be.ROUTE_CALLS - 1) * timer.dispatch_s * (0 if be.cuda else 1), 0.02 * s)
        out.append(Measurement("route", (T, D, E, k), fmt, s, bytes=be.route_bytes(T, D, E, k, b), spread=sp))


# ---- the profile -------------------------------------------------------------------------------------------

def profile_dict(c: Calibration) -> dict:
    """The profile as a catalog chip entry with its priors and tables inline (what `load_system` reads)."""
    src = c.source
    stream = [m for m in c.measurements if m.what == "stream"]
    peaks = {}
    for f, v in c.peaks.items():
        best = max((m for m in c.measurements if m.dtype == f and m.flop), key=lambda m: m.flop_per_s)
        peaks[f] = {"value": f"{v:.4g} FLOP/s", "source": f"{src}: best {f} matrix product, "
                                                           f"M×N×K = {'×'.join(map(str, best.shape))}"}
    fit = c.fit
    sdpa = c.curves.get(f"eta_kv_bytes.{c.main}")
    priors = {
        "eta_flop": {"value": round(fit["eta_flop"], 3),
                     "source": f"{src}: fit of t = max(FLOP/(F·eta_flop·M/(M + M_half)), bytes/(W·eta_bw)) + t_kernel "
                               f"to {fit['n']} cold {c.main} GEMMs (median |error| {fit['median_abs_error']:.1%}, p90 "
                               f"{fit['p90_abs_error']:.1%}); the tables (curves) below are what predictions read"},
        "eta_bw": {"value": round(fit["eta_bw"], 3), "source": f"{src}: same fit"},
        "matmul_m_half": {"value": fit["matmul_m_half"], "source": f"{src}: same fit"},
        "kernel_overhead_s": {"value": f"{c.kernel_overhead_s:.3g} s",
                              "source": f"{src}: device time of a one-row 256×256 F.linear (median over formats), "
                                        f"paid once per GEMM; the curves t_kernel.<format> give it by format and rows"},
        "eta_kv": {"value": round(min(1.0, sdpa["y"][-1]), 3) if sdpa else round(fit["eta_bw"], 3),
                   "source": f"{src}: scaled_dot_product_attention decode at its largest size (curve eta_kv_bytes)"},
        "step_overhead_s": {"value": f"{c.step_overhead_s:.3g} s",
                            "source": f"{src}: one device synchronisation per step" if c.host_overlap else
                            f"{src}: none beyond the ops counted (core.eager)"},
        "dispatch_s": {"value": f"{c.dispatch_s:.3g} s", "source": _dispatch_source(c, src)},
        **({"host_probe_s": {"value": f"{c.dispatch_fit['dense_step_s']:.4g} s",
                             "source": f"{src}: the tiny 2-layer GQA decode step the host costs were fitted on "
                                       f"(check-local times it again and scales them by the ratio: a shared host's "
                                       f"per-op cost drifts by ±30 % within minutes)"}}
           if c.dispatch_fit else {}),
        **({"host_drift": {"value": HOST_DRIFT, "source": HOST_DRIFT_SOURCE}} if c.dispatch_fit else {}),
        **({"route_dispatch_s": {"value": f"{c.route_dispatch_s:.3g} s",
                                 "source": f"{src}: the same fit, MoE routing calls (softmax, top-k, one-hot, the "
                                           f"experts hit) of a tiny 8-expert top-2 step at 1 and 32 tokens"},
            "expert_dispatch_s": {"value": f"{c.expert_dispatch_s:.3g} s",
                                  "source": f"{src}: the same fit, calls per expert hit (where, gather, scale, "
                                            f"index_add): the step's growth from 2 to 8 experts hit"}}
           if c.route_dispatch_s else {}),
        "host_overlap": {"value": c.host_overlap,
                         "source": "CUDA queues kernels behind the host: the slower of host and device sets the pace"
                         if c.host_overlap else "a CPU dispatches and computes on the same threads: the costs add"},
        "eta_scaleup": {"value": 1.0, "source": "one device: no scale-up links"},
        "eta_scaleout": {"value": 1.0, "source": "one device: no scale-out links"},
        "scaleup_latency_s": {"value": "0 s", "source": "one device: no collectives"},
        "scaleout_latency_s": {"value": "0 s", "source": "one device: no collectives"},
        "comm_overlap": {"value": 0.0, "source": "one device: no collectives"},
        "formats": list(c.formats),
        "curves": c.curves,
    }
    chip = {
        "kind": "chip",
        "name": f"local-{c.host}",
        "display_name": f"{c.device} — measured",
        "vendor": platform.uname().system,
        "source": src,
        "peak_flop_per_s": peaks,
        "hbm_capacity_bytes": {"value": f"{c.memory_bytes:.4g} B",
                               "source": f"{src}: {'device memory' if c.host_overlap else 'physical memory'}"},
        "hbm_bandwidth_bytes_per_s": {
            "value": f"{c.bandwidth_bytes_per_s:.4g} B/s",
            "source": f"{src}: memory tier of a two-tier fit to reads of {len(stream)} buffers "
                      f"{min(m.bytes for m in stream) / 2**20:.0f} MiB – {max(m.bytes for m in stream) / 2**20:.0f} MiB"},
    }
    if c.llc_bytes:
        chip["llc_bytes"] = {"value": f"{c.llc_bytes:.4g} B", "source": f"{src}: cache tier of the same fit"}
        chip["llc_bandwidth_bytes_per_s"] = {"value": f"{c.llc_bandwidth_bytes_per_s:.4g} B/s",
                                             "source": f"{src}: cache tier of the same fit"}
        chip["llc_hit_exponent"] = {"value": c.llc_hit_exponent,
                                    "source": f"{src}: the same fit, h = min(1, C/ws)^p (p = 1: random replacement; "
                                              f"larger: a sharper cliff)"}
    chip["priors"] = priors
    return chip


def _dispatch_source(c: Calibration, src: str) -> str:
    f = c.dispatch_fit
    if not f:
        return f"{src}: host time of one eager op (arithmetic, view, activation, cast on a tiny tensor), {c.backend}"
    how = "t_step / n_ops (the host runs ahead of the device)" if c.host_overlap else "(t_step − t_device) / n_ops"
    return (f"{src}: a tiny 2-layer GQA decode step as check-local builds it ({f['dense_ops']:.0f} eager ops, "
            f"{f['dense_step_s'] * 1e6:.0f} µs, device {f['dense_device_s'] * 1e6:.0f} µs by this profile): {how}; "
            f"{c.backend}")


def write_profile(path: str, c: Calibration) -> None:
    """Write the profile YAML, the raw measurements as comments underneath."""
    import yaml

    lines = [f"# tokenmath hardware profile — {c.source}",
             f"# backend: {c.backend}; device: {c.device}; formats: {', '.join(c.formats)}; use it with --on {path}"]
    body = yaml.safe_dump(profile_dict(c), sort_keys=False, allow_unicode=True, width=120, default_flow_style=None)
    lines.append(body.rstrip())
    lines.append("# measurements (what, shape, dtype, seconds, spread, FLOP/s, bytes/s):")
    for m in c.measurements:
        lines.append(f"#   {m.what:9s} {'x'.join(map(str, m.shape)):>22s} {m.dtype:5s} {m.seconds:.4g} s ±{m.spread:.0%}"
                     f"  {m.flop_per_s if m.flop else 0:.4g} FLOP/s  {m.bytes_per_s if m.bytes else 0:.4g} B/s")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
