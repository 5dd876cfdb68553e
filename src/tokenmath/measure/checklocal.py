"""A local reality check: time a real transformer decode step on this machine, beside the roofline's prediction.

`check_local` builds the model's decode step in PyTorch with random weights — embedding lookup, then
per layer RMSNorm, fused QKV projection, rotary embedding, grouped-query attention over a KV cache of
S tokens (sliding-window layers attend to their window), output projection, RMSNorm and a SwiGLU MLP
or a top-k mixture of experts (with shared experts), then the final norm and the LM head — and times
one step for B sequences. The prediction is `roofline.step` for the same model on a one-chip system
made from a calibrated profile (`tokenmath calibrate`), at the precision the step actually ran in:

    error = (t_predicted − t_measured) / t_measured

A model too large for memory can be truncated to its first N layers (`layers=N`): the comparison is
then made for the truncated model (predicted and measured alike), and the full model's step is
extrapolated as t(N layers) + (L − N) · (t(N layers) − t(0 layers)) / N, both measured and predicted.
MLA (DeepSeek) attention is not built.
"""

from __future__ import annotations

import copy
import math
import time
from dataclasses import dataclass, field

import numpy as np

from ..core import arch
from ..core.errors import InputError
from ..core.records import Model, System
from ..core.roofline import step

__all__ = ["LocalPoint", "LocalCheck", "check_local", "plan", "truncate"]


@dataclass(frozen=True)
class LocalPoint:
    B: int
    S: int
    measured_s: float
    predicted_s: float
    bound: str

    @property
    def error(self) -> float:
        return (self.predicted_s - self.measured_s) / self.measured_s

    def to_dict(self) -> dict:
        return {"batch": self.B, "context": self.S, "measured_s": self.measured_s, "predicted_s": self.predicted_s,
                "error": self.error, "abs_error": abs(self.error), "bound": self.bound}


@dataclass
class LocalCheck:
    model: str
    system: str
    dtype: str
    layers_built: int
    layers_full: int
    points: list[LocalPoint] = field(default_factory=list)
    full_model: list[dict] = field(default_factory=list)  # extrapolated when truncated
    backend: str = ""

    def summary(self) -> dict:
        e = np.abs([p.error for p in self.points]) if self.points else np.array([])
        return {"n": len(self.points), "median_abs_error": float(np.median(e)) if e.size else None,
                "p90_abs_error": float(np.percentile(e, 90)) if e.size else None,
                "median_error": float(np.median([p.error for p in self.points])) if e.size else None}

    def to_dict(self) -> dict:
        return {"model": self.model, "system": self.system, "dtype": self.dtype, "backend": self.backend,
                "layers_built": self.layers_built, "layers_full": self.layers_full,
                "rows": [p.to_dict() for p in self.points], "summary": self.summary(), "full_model": self.full_model}


def truncate(m: Model, layers: int) -> Model:
    """The model's first `layers` layers (MoE layer pattern and sliding layers kept in proportion)."""
    if not 1 <= layers <= m.n_layers:
        raise InputError(f"--layers must be between 1 and {m.n_layers} for {m.name} (got {layers})")
    if layers == m.n_layers:
        return m
    changes: dict = {"n_layers": layers, "name": f"{m.name}-first{layers}"}
    if m.n_sliding_layers:
        changes["n_sliding_layers"] = round(m.n_sliding_layers * layers / m.n_layers)
    if m.moe is not None and m.moe.first_dense_layers > layers:
        changes["moe"] = m.moe.model_copy(update={"first_dense_layers": layers})
    if m.n_kv_layers:
        changes["n_kv_layers"] = max(1, round(m.n_kv_layers * layers / m.n_layers))
    return m.evolve(**changes)  # type: ignore[return-value]


# ---- the PyTorch decode step ---------------------------------------------------------------------------

def _torch():
    try:
        import torch
    except ImportError:
        raise InputError("check-local needs PyTorch: pip install 'torch==2.13.0' (the 'torch' extra)") from None
    return torch


class _DecodeModel:
    """Random-weight decode step of `m` in `dtype` on `device` (weights as [in, out] matrices)."""

    def __init__(self, m: Model, dtype: str, device: str):
        torch = _torch()
        self.t, self.m, self.device = torch, m, device
        self.dt = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[dtype]
        D, N, K, H, V = m.d_model, m.n_heads, m.n_kv_heads, m.head_dim, m.vocab_size
        w = self._w
        self.emb = w(V, D)
        # a tied head is the embedding table read as [D, V]: kept in that layout, as engines do, so the
        # step's largest product is not a transposed one (the lookup touches only B rows of the table)
        self.head = self.emb.T.contiguous() if m.tie_embeddings else w(D, V)
        self.layers = []
        L_moe_start = m.moe.first_dense_layers if m.moe else m.n_layers
        for i in range(m.n_layers):
            lay = {"qkv": w(D, (N + 2 * K) * H), "o": w(N * H, D), "n1": w(D), "n2": w(D)}
            is_moe = m.moe is not None and i >= L_moe_start and (i - L_moe_start) % m.moe.layer_step == 0
            if is_moe:
                e = m.moe
                lay["router"] = w(D, e.n_routed_experts)
                lay["gu"] = w(e.n_routed_experts, D, 2 * e.d_ff_expert)
                lay["down"] = w(e.n_routed_experts, e.d_ff_expert, D)
                if e.n_shared_experts:
                    lay["s_gu"] = w(D, 2 * e.d_ff_expert * e.n_shared_experts)
                    lay["s_down"] = w(e.d_ff_expert * e.n_shared_experts, D)
            else:
                lay["gu"], lay["down"] = w(D, 2 * m.d_ff), w(m.d_ff, D)
            lay["sliding"] = i >= m.n_layers - m.n_sliding_layers if m.n_sliding_layers else False
            self.layers.append(lay)
        self.nf = w(D)

    def _w(self, *shape):
        return self.t.empty(*shape, dtype=self.dt, device=self.device).uniform_(-0.02, 0.02)

    def kv_cache(self, B: int, S: int):
        """Per layer K and V of B sequences holding S tokens (window-capped), with room for the new one."""
        m, t = self.m, self.t
        out = []
        for lay in self.layers:
            s = min(S, m.sliding_window) if lay["sliding"] else S
            k = t.empty(B, m.n_kv_heads, s + 1, m.head_dim, dtype=self.dt, device=self.device).uniform_(-1, 1)
            v = t.empty_like(k).uniform_(-1, 1)
            out.append((k, v, s))
        return out

    def _norm(self, x, g):
        return x * self.t.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * g

    def _rope(self, x, pos: int):
        H = x.shape[-1]
        half = H // 2
        inv = 1.0 / (10000 ** (self.t.arange(half, device=self.device, dtype=x.dtype) / half))
        ang = pos * inv
        c, s = self.t.cos(ang), self.t.sin(ang)
        x1, x2 = x[..., :half], x[..., half:]
        return self.t.cat([x1 * c - x2 * s, x1 * s + x2 * c], dim=-1)

    def step(self, tokens, cache):
        """One decode step: logits for B sequences, KV written at each sequence's end."""
        t, m = self.t, self.m
        D, N, K, H = m.d_model, m.n_heads, m.n_kv_heads, m.head_dim
        B = tokens.shape[0]
        x = self.emb[tokens]
        for lay, (kc, vc, s) in zip(self.layers, cache):
            h = self._norm(x, lay["n1"])
            qkv = h @ lay["qkv"]
            q = qkv[:, : N * H].view(B, K, N // K, H)
            k = qkv[:, N * H: (N + K) * H].view(B, K, 1, H)
            v = qkv[:, (N + K) * H:].view(B, K, 1, H)
            q, k = self._rope(q, s), self._rope(k, s)
            kc[:, :, s: s + 1] = k
            vc[:, :, s: s + 1] = v
            a = t.softmax((q @ kc.transpose(-1, -2)) * (H ** -0.5), dim=-1) @ vc
            x = x + a.reshape(B, N * H) @ lay["o"]
            h = self._norm(x, lay["n2"])
            x = x + (self._moe(h, lay) if "router" in lay else self._mlp(h, lay["gu"], lay["down"]))
        return self._norm(x, self.nf) @ self.head

    def _mlp(self, h, gu, down):
        g, u = (h @ gu).chunk(2, dim=-1)
        return (self.t.nn.functional.silu(g) * u) @ down

    def _moe(self, h, lay):
        t, e = self.t, self.m.moe
        w, idx = t.topk(t.softmax(h @ lay["router"], dim=-1), e.experts_per_token, dim=-1)
        out = t.zeros_like(h)
        flat = idx.reshape(-1)
        rows = t.arange(h.shape[0], device=self.device).repeat_interleave(e.experts_per_token)
        wts = w.reshape(-1, 1)
        for ex in t.unique(flat).tolist():
            sel = flat == ex
            r = rows[sel]
            out.index_add_(0, r, self._mlp(h[r], lay["gu"][ex], lay["down"][ex]) * wts[sel])
        if "s_gu" in lay:
            out = out + self._mlp(h, lay["s_gu"], lay["s_down"])
        return out


def _time_step(dm: _DecodeModel, B: int, S: int, min_time_s: float, max_reps: int) -> float:
    t = dm.t
    cache = dm.kv_cache(B, S)
    tokens = t.randint(0, dm.m.vocab_size, (B,), device=dm.device)
    sync = t.cuda.synchronize if dm.device == "cuda" else (lambda: None)
    best, spent, n = math.inf, 0.0, 0
    with t.inference_mode():
        dm.step(tokens, cache)  # warm-up
        sync()
        while n < 2 or (spent < min_time_s and n < max_reps):
            t0 = time.perf_counter()
            dm.step(tokens, cache)
            sync()
            dt = time.perf_counter() - t0
            best, spent, n = min(best, dt), spent + dt, n + 1
    del cache
    return best


# ---- the check ------------------------------------------------------------------------------------------

def plan(m: Model, memory_bytes: float, *, batches, contexts, layers: int | None = None, dtype: str = "fp32",
         memory_fraction: float = 0.8, where: str = "this machine") -> Model:
    """The model to build (truncated to `layers`), refusing what cannot be built or does not fit in memory."""
    if not batches or not contexts or min(batches) < 1 or min(contexts) < 1:
        raise InputError("--batch and --context need positive whole numbers")
    if m.mla is not None:
        raise InputError(f"{m.name}: check-local builds MHA/GQA/MQA attention; MLA (DeepSeek) is not built")
    mt = truncate(m, layers) if layers else m
    b = arch.bytes_per(dtype)
    # a tied head is kept as a second [D, V] copy (see _DecodeModel)
    weights = (arch.param_counts(mt).total + (mt.vocab_size * mt.d_model if mt.tie_embeddings else 0)) * b
    need = weights + max(batches) * float(arch.kv_stored_bytes(mt, max(contexts) + 1, dtype))
    cap = memory_bytes * memory_fraction
    if need > cap:
        L_fit = max(1, int(mt.n_layers * cap / need))
        raise InputError(f"{mt.name} needs {need / 1e9:.1f} GB ({dtype} weights + KV at batch {max(batches)}, context "
                         f"{max(contexts)}) but {where} has {cap / 1e9:.1f} GB to spare; use --layers "
                         f"{L_fit} or a smaller --batch/--context")
    return mt


def check_local(m: Model, system: System, *, batches=(1, 4, 16, 64), contexts=(128, 1024, 4096),
                layers: int | None = None, dtype: str = "fp32", min_time_s: float = 0.3, max_reps: int = 5,
                memory_fraction: float = 0.8, rounds: int = 2, progress=None) -> LocalCheck:
    """Measure the decode step at every (batch, context) and set it beside roofline.step's prediction.

    The grid is timed `rounds` times and each point keeps its best time, so that a burst of other work
    on a shared machine slows one round, not the result.
    """
    torch = _torch()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    mt = plan(m, system.chip.hbm_capacity_bytes, batches=batches, contexts=contexts, layers=layers, dtype=dtype,
              memory_fraction=memory_fraction, where=system.name)
    say = progress or (lambda what, frac: None)
    out = LocalCheck(model=m.name, system=system.name, dtype=dtype, layers_built=mt.n_layers, layers_full=m.n_layers,
                     backend=f"torch {torch.__version__} ({device})")
    pts = [(B, S) for S in contexts for B in batches]
    say("building the model", 0.0)
    dm = _DecodeModel(mt, dtype, device)
    best = {pt: math.inf for pt in pts}
    for r in range(max(1, rounds)):
        for i, (B, S) in enumerate(pts):
            say(f"round {r + 1}: batch {B}, context {S}", (r * len(pts) + i + 0.5) / (max(1, rounds) * len(pts)))
            best[(B, S)] = min(best[(B, S)], _time_step(dm, B, S, min_time_s, max_reps))
    for B, S in pts:
        st = step(mt, system, G=1, B=B, S=S, phase="decode", precision=dtype, kv_dtype=dtype, basis="prior")
        out.points.append(LocalPoint(B, S, best[(B, S)], float(st.v("t_step")), str(st.bound)))
    if mt.n_layers < m.n_layers:  # extrapolate: the per-layer part scales with L, embedding and head do not
        zero = copy.copy(dm)  # the same embedding and head, no layers
        zero.layers = []
        for p in out.points:
            t0 = _time_step(zero, p.B, p.S, min_time_s, max_reps)
            s_full = step(m, system, G=1, B=p.B, S=p.S, phase="decode", precision=dtype, kv_dtype=dtype)
            meas_full = t0 + (p.measured_s - t0) * m.n_layers / mt.n_layers
            out.full_model.append({"batch": p.B, "context": p.S, "measured_s": meas_full,
                                   "predicted_s": float(s_full.v("t_step")),
                                   "error": float(s_full.v("t_step")) / meas_full - 1})
    say("done", 1.0)
    return out
