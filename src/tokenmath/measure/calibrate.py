"""Measure the machine tokenmath runs on and write a hardware profile that `--on PROFILE.yaml` accepts.

Measured (PyTorch when importable — on a CUDA GPU when one is present, else the CPU — otherwise NumPy):

- matmul throughput by shape: C[M×N] = A[M×K] · B[K×N] for M from 1 (a GEMV, bound by reading B)
  to large M (bound by FLOP);
- streaming bandwidth: the best rate at which one large buffer is read;
- attention-decode bandwidth: one query per sequence against its cached K and V (scores, softmax,
  weighted sum), as a decode step does;
- per-op overhead: the time of an operation on a one-element tensor.

The profile's peaks are the best rates measured (F: matmul FLOP/s, W: bytes/s read). Its priors are
fitted exactly as the GPU priors are fitted to the published microbenchmarks (kernels.gemm_time):

    t(M) = max(2·M·N·K / (F · eta_flop), bytes(M) / (W · eta_bw)) + t_kernel

minimising the mean |log(predicted / measured)| over the matmul sweep, so that
`roofline.step` on this profile predicts this machine with the same physics it uses for a GPU.
"""

from __future__ import annotations

import datetime as _dt
import math
import os
import platform
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..core import kernels

__all__ = ["Backend", "Measurement", "Calibration", "calibrate", "fit_gemm_priors", "profile_dict", "write_profile",
           "backend", "host_label"]


# ---- backends ----------------------------------------------------------------------------------------

class Backend:
    """The few tensor operations calibration needs, on NumPy or PyTorch (CPU or CUDA)."""

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

    @property
    def threads(self) -> int:
        if self.torch is not None and self.device == "cpu":
            return int(self.torch.get_num_threads())
        return os.cpu_count() or 1

    def randn(self, *shape, dtype: str = "fp32"):
        if self.torch is not None:
            t = self.torch
            dt = {"fp32": t.float32, "bf16": t.bfloat16, "fp16": t.float16}[dtype]
            return t.randn(*shape, dtype=dt, device=self.device)
        return np.random.default_rng(0).standard_normal(shape, dtype=np.float32)

    def ones(self, n: int):
        if self.torch is not None:
            return self.torch.ones(n, dtype=self.torch.float32, device=self.device)
        return np.ones(n, dtype=np.float32)

    def sync(self) -> None:
        if self.torch is not None and self.device == "cuda":
            self.torch.cuda.synchronize()

    def matmul(self, a, b):
        return a @ b

    def total(self, x):
        return x.sum()

    def attend(self, q, k, v):
        """One decode query per (sequence, query head) against K, V: [B, Kh, G, d] × [B, Kh, S, d]."""
        if self.torch is not None:
            s = (q @ k.transpose(-1, -2)) * (q.shape[-1] ** -0.5)
            return self.torch.softmax(s, dim=-1) @ v
        s = (q @ np.swapaxes(k, -1, -2)) * (q.shape[-1] ** -0.5)
        s = np.exp(s - s.max(axis=-1, keepdims=True))
        return (s / s.sum(axis=-1, keepdims=True)) @ v

    def tiny_op(self):
        x = self.ones(1)
        return lambda: x + 1.0

    def element_size(self, dtype: str) -> float:
        return {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0}[dtype]

    def memory_bytes(self) -> float:
        if self.torch is not None and self.device == "cuda":
            return float(self.torch.cuda.get_device_properties(0).total_memory)
        return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))

    def device_label(self) -> str:
        if self.torch is not None and self.device == "cuda":
            return self.torch.cuda.get_device_name(0)
        u = platform.uname()
        return f"{u.machine} CPU ({self.threads} threads)"


def backend(prefer: str = "auto") -> Backend:
    return Backend(prefer)


def host_label() -> str:
    return platform.node() or "localhost"


# ---- timing --------------------------------------------------------------------------------------------

def _best_time(be: Backend, fn: Callable, min_time_s: float, max_reps: int = 50) -> float:
    """Best of repeated runs after one warm-up (the machine's capability, not its noise)."""
    fn()
    be.sync()
    best, spent, n = math.inf, 0.0, 0
    while n < 2 or (spent < min_time_s and n < max_reps):
        t0 = time.perf_counter()
        fn()
        be.sync()
        dt = time.perf_counter() - t0
        best, spent, n = min(best, dt), spent + dt, n + 1
    return best


@dataclass(frozen=True)
class Measurement:
    what: str  # 'matmul', 'stream', 'attention', 'op'
    shape: tuple
    dtype: str
    seconds: float
    flop: float = 0.0
    bytes: float = 0.0

    @property
    def flop_per_s(self) -> float:
        return self.flop / self.seconds

    @property
    def bytes_per_s(self) -> float:
        return self.bytes / self.seconds

    def to_dict(self) -> dict:
        return {"what": self.what, "shape": list(self.shape), "dtype": self.dtype, "seconds": self.seconds,
                "flop": self.flop, "bytes": self.bytes, "flop_per_s": self.flop_per_s if self.flop else None,
                "bytes_per_s": self.bytes_per_s if self.bytes else None}


@dataclass
class Calibration:
    """What was measured, the peaks taken from it, and the fitted priors."""

    host: str
    date: str
    backend: str
    device: str
    dtype: str
    memory_bytes: float
    peak_flop_per_s: float
    bandwidth_bytes_per_s: float
    eta_flop: float
    eta_bw: float
    kernel_overhead_s: float
    matmul_m_half: float
    op_overhead_s: float
    attention_bytes_per_s: float
    fit_median_abs_error: float
    fit_p90_abs_error: float
    measurements: list[Measurement] = field(default_factory=list)
    extra_peaks: dict[str, float] = field(default_factory=dict)

    @property
    def source(self) -> str:
        return f"measured by tokenmath calibrate on {self.host} at {self.date}"

    def to_dict(self) -> dict:
        d = {k: getattr(self, k) for k in ("host", "date", "backend", "device", "dtype", "memory_bytes",
                                           "peak_flop_per_s", "bandwidth_bytes_per_s", "eta_flop", "eta_bw",
                                           "kernel_overhead_s", "matmul_m_half", "op_overhead_s",
                                           "attention_bytes_per_s",
                                           "fit_median_abs_error", "fit_p90_abs_error", "extra_peaks")}
        d["source"] = self.source
        d["attention_eta_bw"] = self.attention_bytes_per_s / self.bandwidth_bytes_per_s
        d["measurements"] = [m.to_dict() for m in self.measurements]
        return d


# ---- the fit -----------------------------------------------------------------------------------------------

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


# ---- measuring -----------------------------------------------------------------------------------------------

def calibrate(quick: bool = False, prefer: str = "auto", progress: Callable[[str, float], None] | None = None,
              dtype: str = "fp32") -> Calibration:
    """Run the measurements (under ~1 minute on a 2-core machine; `quick` in a few seconds) and fit the priors."""
    be = backend(prefer)
    say = progress or (lambda what, frac: None)
    min_t = 0.02 if quick else 0.15
    out: list[Measurement] = []
    es = be.element_size(dtype)

    # streaming read of one buffer much larger than the caches
    n = (32 if quick else 512) * 2**20 // 4
    say("streaming read", 0.0)
    buf = be.ones(n)
    t = _best_time(be, lambda: be.total(buf), min_t, 20)
    out.append(Measurement("stream", (n,), "fp32", t, bytes=4.0 * n))
    del buf

    # matmul by shape: small M (reads B) to large M (FLOP-bound), for the weight shapes of a transformer
    # layer as engines run them — square D→D (attention output), wide D→7D (gate and up projections
    # fused, F = 3.5·D), tall 3.5D→D (down projection) — and one tiny product: the fixed cost of a call
    D = 512 if quick else 2048
    shapes = [(2 * D, 2 * D), (D, 7 * D), (7 * D // 2, D)]
    Ms = [1, 4, 16, 64, 256] if quick else [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
    todo = [(M, K, N) for K, N in shapes for M in Ms] + [(1, 128, 128), (16, 128, 128)]
    for i, (M, K, N) in enumerate(todo):
        say(f"matmul M={M} K={K} N={N}", 0.1 + 0.6 * i / len(todo))
        b = be.randn(K, N, dtype=dtype)
        a = be.randn(M, K, dtype=dtype)
        t = _best_time(be, lambda: be.matmul(a, b), min_t, 30)
        out.append(Measurement("matmul", (M, N, K), dtype, t, flop=kernels.gemm_flop(M, N, K),
                               bytes=kernels.gemm_bytes(M, N, K, es, es, es)))
        del a, b

    # attention decode: B sequences, Kh KV heads, G queries per KV head, S cached tokens, head dim d.
    # G = 1 isolates the streaming of K and V (eta_kv); G = 8 checks the small-M model of its products.
    for j, G in enumerate((1, 8)):
        Bq, Kh, S, d = (2, 4, 1024, 64) if quick else (8, 8, 4096, 64)
        say(f"attention decode B={Bq} G={G} S={S}", 0.75 + 0.05 * j)
        q, k, v = be.randn(Bq, Kh, G, d, dtype=dtype), be.randn(Bq, Kh, S, d, dtype=dtype), \
            be.randn(Bq, Kh, S, d, dtype=dtype)
        t = _best_time(be, lambda: be.attend(q, k, v), min_t, 30)
        out.append(Measurement("attention", (Bq, Kh, G, S, d), dtype, t, flop=4.0 * Bq * Kh * G * S * d,
                               bytes=2.0 * Bq * Kh * S * d * es))
        del q, k, v

    # per-op overhead
    say("per-op overhead", 0.9)
    op = be.tiny_op()
    reps = 200 if quick else 2000
    t = _best_time(be, lambda: [op() for _ in range(reps)], min_t, 10) / reps
    out.append(Measurement("op", (1,), "fp32", t))

    # other precisions: kept as a peak only where the machine runs them about as fast (CPUs without
    # BF16 units emulate it hundreds of times slower: probe a small product before a large one)
    extra: dict[str, float] = {}
    fp32_rate = max(m.flop_per_s for m in out if m.what == "matmul")
    N = max(m.shape[1] for m in out if m.what == "matmul")
    if be.torch is not None and dtype == "fp32":
        say("bf16 matmul", 0.95)
        a2, b2 = be.randn(64, 256, dtype="bf16"), be.randn(256, 256, dtype="bf16")
        probe = kernels.gemm_flop(64, 256, 256) / _best_time(be, lambda: be.matmul(a2, b2), 0.0, 3)
        if probe > 0.25 * fp32_rate:
            M2 = 256 if quick else 1024
            a2, b2 = be.randn(M2, N, dtype="bf16"), be.randn(N, N, dtype="bf16")
            extra["bf16"] = kernels.gemm_flop(M2, N, N) / _best_time(be, lambda: be.matmul(a2, b2), min_t, 10)
    say("fit", 1.0)

    mm = [m for m in out if m.what == "matmul"]
    stream = next(m for m in out if m.what == "stream")
    att = next(m for m in out if m.what == "attention" and m.shape[2] == 1)
    F = max(m.flop_per_s for m in mm)
    W = max(stream.bytes_per_s, max(m.bytes_per_s for m in mm), att.bytes_per_s)
    e_flop, e_bw, t_k, m_h, med, p90 = fit_gemm_priors(mm, F, W)
    peaks = {k: v for k, v in extra.items() if v >= 0.5 * F}
    return Calibration(host=host_label(), date=_dt.date.today().isoformat(), backend=be.name,
                       device=be.device_label(), dtype=dtype, memory_bytes=be.memory_bytes(), peak_flop_per_s=F,
                       bandwidth_bytes_per_s=W, eta_flop=e_flop, eta_bw=e_bw, kernel_overhead_s=t_k,
                       matmul_m_half=m_h,
                       op_overhead_s=next(m for m in out if m.what == "op").seconds,
                       attention_bytes_per_s=att.bytes_per_s, fit_median_abs_error=med, fit_p90_abs_error=p90,
                       measurements=out, extra_peaks=peaks)


# ---- the profile -------------------------------------------------------------------------------------------

def profile_dict(c: Calibration) -> dict:
    """The profile as a catalog chip entry with its priors inline (what `load_system(PROFILE.yaml)` reads)."""
    src = c.source
    mm = [m for m in c.measurements if m.what == "matmul"]
    best = max(mm, key=lambda m: m.flop_per_s)
    stream = next(m for m in c.measurements if m.what == "stream")
    att = next(m for m in c.measurements if m.what == "attention" and m.shape[2] == 1)
    peaks = {c.dtype: {"value": f"{c.peak_flop_per_s:.4g} FLOP/s",
                       "source": f"{src}: best {c.dtype} matmul, M×N×K = {'×'.join(map(str, best.shape))}"}}
    for p, v in c.extra_peaks.items():
        peaks[p] = {"value": f"{v:.4g} FLOP/s", "source": f"{src}: a large {p} matmul"}
    return {
        "kind": "chip",
        "name": f"local-{c.host}",
        "display_name": f"{c.device} — measured",
        "vendor": platform.uname().system,
        "source": src,
        "peak_flop_per_s": peaks,
        "hbm_capacity_bytes": {"value": f"{c.memory_bytes:.4g} B", "source": f"{src}: physical memory"},
        "hbm_bandwidth_bytes_per_s": {
            "value": f"{c.bandwidth_bytes_per_s:.4g} B/s",
            "source": f"{src}: best read rate of a {stream.bytes / 2**20:.0f} MiB stream, the matmul sweep and "
                      f"the attention-decode kernel ({c.backend})"},
        "priors": {
            "eta_flop": {"value": round(c.eta_flop, 3), "source": f"{src}: fit of t = max(FLOP/(F·eta_flop), "
                         f"bytes/(W·eta_bw)) + t_kernel to {len(mm)} matmul shapes (median |error| "
                         f"{c.fit_median_abs_error:.1%}, p90 {c.fit_p90_abs_error:.1%})"},
            "eta_bw": {"value": round(c.eta_bw, 3), "source": f"{src}: same fit"},
            "kernel_overhead_s": {"value": f"{c.kernel_overhead_s:.3g} s", "source": f"{src}: same fit"},
            "matmul_m_half": {"value": c.matmul_m_half, "source": f"{src}: same fit, eta_flop · M/(M + M_half) for "
                              "M > 1 rows (a one-row product runs as a GEMV)"},
            "eta_kv": {"value": round(min(1.0, c.attention_bytes_per_s / c.bandwidth_bytes_per_s), 3),
                       "source": f"{src}: attention decode (scores, softmax, weighted sum) over "
                                 f"{'×'.join(map(str, att.shape))} (B×Kh×G×S×d) streams K and V at "
                                 f"{c.attention_bytes_per_s / 1e9:.3g} GB/s"},
            "step_overhead_s": {"value": f"{c.op_overhead_s:.3g} s",
                                "source": f"{src}: one operation on a one-element tensor ({c.backend})"},
            "eta_scaleup": {"value": 1.0, "source": "one device: no scale-up links"},
            "eta_scaleout": {"value": 1.0, "source": "one device: no scale-out links"},
            "scaleup_latency_s": {"value": "0 s", "source": "one device: no collectives"},
            "scaleout_latency_s": {"value": "0 s", "source": "one device: no collectives"},
            "comm_overlap": {"value": 0.0, "source": "one device: no collectives"},
        },
    }


def write_profile(path: str, c: Calibration) -> None:
    """Write the profile YAML, the raw measurements as comments underneath."""
    import yaml

    lines = [f"# tokenmath hardware profile — {c.source}",
             f"# backend: {c.backend}; device: {c.device}; use it with --on {path}"]
    body = yaml.safe_dump(profile_dict(c), sort_keys=False, allow_unicode=True, width=120)
    lines.append(body.rstrip())
    lines.append("# measurements (what, shape, dtype, seconds, FLOP/s, bytes/s):")
    for m in c.measurements:
        lines.append(f"#   {m.what:9s} {'x'.join(map(str, m.shape)):>22s} {m.dtype:5s} {m.seconds:.4g} s"
                     f"  {m.flop_per_s if m.flop else 0:.4g} FLOP/s  {m.bytes_per_s if m.bytes else 0:.4g} B/s")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
