"""A local reality check: time a real transformer decode step on this machine, beside the roofline's prediction.

`check_local` builds the model's decode step in PyTorch with random weights, as Hugging Face's eager
modelling code runs it — embedding lookup; per layer RMSNorm, q/k/v projections, rotary embedding, the
new token's K and V written into a static cache of S tokens (sliding-window layers hold their window),
grouped-query attention through scaled_dot_product_attention (enable_gqa), output projection, RMSNorm
and the MLP — gated (SwiGLU: gate, up, down) or plain (up, GELU, down) as mlp_matrices says — or Mixtral's
top-k mixture of experts (shared experts where the config has them, as one MLP of their summed width);
the final norm and the LM head (tied or untied) — at the config's own dtype or the one asked, and times
one step for B sequences over a batch × context grid. The prediction is `roofline.step` for the same
model on a one-chip system made from a calibrated profile (`tokenmath calibrate`), at that precision for
weights, activations and KV alike (what an eager PyTorch model keeps):

    error = (t_predicted − t_measured) / t_measured

A model too large for memory can be truncated to its first N layers (`layers=N`): the comparison is
then made for the truncated model (predicted and measured alike), and the full model's step is
extrapolated as t(N layers) + (L − N) · (t(N layers) − t(0 layers)) / N, both measured and predicted.
MLA (DeepSeek) attention, linear-attention hybrids, attention groups, output gates, sparse indexers, latent
MoEs and shared KV caches are not built: check-local refuses them in one line.

A shared host's speed drifts (its per-op cost by ±30 % within minutes on a cloud VM; an H100's eager step
of a small model is nothing but host time): where the profile records the tiny step its host costs were
fitted on (`host_probe_s`), the check times that step again before the grid and after each round, and
scales the profile's dispatch costs by the median ratio now / then (`refresh_host=False` keeps them):

    t_dispatch,now = t_dispatch · median(t_probe,now) / t_probe,calibrate
"""

from __future__ import annotations

import copy
import math
import time
from dataclasses import dataclass, field

import numpy as np

from ..core import arch, eager
from ..core.errors import InputError
from ..core.load import load_priors
from ..core.records import Model, System
from ..core.roofline import step

__all__ = ["LocalPoint", "LocalCheck", "check_local", "plan", "truncate", "model_dtype", "as_built"]


@dataclass(frozen=True)
class LocalPoint:
    B: int
    S: int
    measured_s: float
    predicted_s: float
    bound: str
    spread: float = 0.0  # measured: (max − min)/median over rounds
    low_s: float = math.nan  # predicted interval (the profile's measurement spread)
    high_s: float = math.nan

    @property
    def error(self) -> float:
        return (self.predicted_s - self.measured_s) / self.measured_s

    @property
    def inside(self) -> bool:
        return self.low_s <= self.measured_s <= self.high_s

    def to_dict(self) -> dict:
        d = {"batch": self.B, "context": self.S, "measured_s": self.measured_s, "predicted_s": self.predicted_s,
             "error": self.error, "abs_error": abs(self.error), "bound": self.bound, "measured_spread": self.spread}
        if not math.isnan(self.low_s):
            d.update(predicted_low_s=self.low_s, predicted_high_s=self.high_s, inside_interval=self.inside)
        return d


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
    host_ratio: float | None = None  # the host's speed now against calibrate's: tiny-step time now / then

    def summary(self) -> dict:
        if not self.points:
            return {"n": 0}
        e = np.abs([p.error for p in self.points])
        out = {"n": len(self.points), "median_abs_error": float(np.median(e)), "p90_abs_error": float(np.percentile(e, 90)),
               "max_abs_error": float(e.max()), "median_error": float(np.median([p.error for p in self.points]))}
        with_interval = [p for p in self.points if not math.isnan(p.low_s)]
        if with_interval:
            out["inside_interval"] = sum(p.inside for p in with_interval) / len(with_interval)
        return out

    def to_dict(self) -> dict:
        return {"model": self.model, "system": self.system, "dtype": self.dtype, "backend": self.backend,
                "layers_built": self.layers_built, "layers_full": self.layers_full,
                "rows": [p.to_dict() for p in self.points], "summary": self.summary(), "full_model": self.full_model,
                **({"host_ratio": self.host_ratio} if self.host_ratio is not None else {})}


def truncate(m: Model, layers: int) -> Model:
    """The model's first `layers` layers (MoE layer pattern and sliding layers kept in proportion; no MoE
    block where those layers hold no MoE layer)."""
    if not 1 <= layers <= m.n_layers:
        raise InputError(f"--layers must be between 1 and {m.n_layers} for {m.name} (got {layers})")
    if layers == m.n_layers:
        return m
    changes: dict = {"n_layers": layers, "name": f"{m.name}-first{layers}"}
    if m.n_sliding_layers:
        changes["n_sliding_layers"] = round(m.n_sliding_layers * layers / m.n_layers)
    if m.moe is not None and (layers - m.moe.first_dense_layers) // m.moe.layer_step < 1:
        changes["moe"] = None  # the first `layers` hold no MoE layer (arch.n_moe_layers): a dense model
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
    """Random-weight decode step of `m` in `dtype` on `device`, written as Hugging Face's eager modules run it.

    Weights in nn.Linear's [out, in] layout (F.linear), q/k/v/o and gate/up/down as separate projections,
    Llama's RMSNorm (fp32 inside; Qwen3's q/k norms over each head where the config has them) and rotary embedding, a static KV cache written in place and read by
    scaled_dot_product_attention (enable_gqa for grouped heads), Mixtral's sparse MoE block (softmax,
    top-k, renormalised weights, a loop over the experts hit with index_add), shared experts where the
    config has them, the final norm and the LM head (a tied head is the embedding table itself).
    """

    def __init__(self, m: Model, dtype: str, device: str):
        torch = _torch()
        self.t, self.F, self.m, self.device = torch, torch.nn.functional, m, device
        self.dt = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[dtype]
        D, N, K, H, V = m.d_model, m.n_heads, m.n_kv_heads, m.head_dim, m.vocab_size
        w = self._w
        self.emb = w(V, D)
        self.head = self.emb if m.tie_embeddings else w(V, D)
        self.layers = []
        L_moe_start = m.moe.first_dense_layers if m.moe else m.n_layers
        for i in range(m.n_layers):
            lay = {"q": w(N * H, D), "k": w(K * H, D), "v": w(K * H, D), "o": w(D, N * H), "n1": w(D), "n2": w(D)}
            if m.qk_norm:  # Qwen3's q_norm / k_norm: an RMSNorm over each head's H before RoPE
                lay["nq"], lay["nk"] = w(H), w(H)
            if m.sandwich_norms:  # Gemma 2/3: post_attention and post_feedforward norms of each block's output
                lay["pa"], lay["pf"] = w(D), w(D)
            # the last of every layer_step layers after the dense ones: (L − first) // step of them, as
            # arch.n_moe_layers counts (Llama 4's interleave step, Qwen2-MoE's decoder_sparse_step)
            is_moe = m.moe is not None and i >= L_moe_start and (i - L_moe_start + 1) % m.moe.layer_step == 0
            if is_moe:
                e = m.moe
                lay["router"] = w(e.n_routed_experts, D)
                lay["experts"] = [self._mlp_w(e.d_ff_expert) for _ in range(e.n_routed_experts)]
                if e.n_shared_experts:  # one MLP as wide as the shared experts together (DeepSeek, Qwen2-MoE)
                    lay["shared"] = self._mlp_w(eager.shared_width(m))
            else:
                lay["mlp"] = self._mlp_w(m.d_ff)
            lay["sliding"] = i >= m.n_layers - m.n_sliding_layers if m.n_sliding_layers else False
            self.layers.append(lay)
        self.nf = w(D)
        self.inv_freq = 1.0 / (10000.0 ** (torch.arange(0, H, 2, device=device, dtype=torch.float32) / H))

    def _mlp_w(self, F: int):
        """An MLP's weights: gate, up, down for a gated one (mlp_matrices 3), up, down for a plain one (2)."""
        D, w = self.m.d_model, self._w
        return (w(F, D), w(F, D), w(D, F)) if self.m.mlp_matrices == 3 else (w(F, D), w(D, F))

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
        h = x.to(self.t.float32)
        h = h * self.t.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-5)
        return g * h.to(x.dtype)

    @staticmethod
    def _rope(x, cos, sin, t):
        half = x.shape[-1] // 2
        x1, x2 = x[..., :half], x[..., half:]
        return x * cos + t.cat((-x2, x1), dim=-1) * sin

    def _rotary(self, pos: int, B: int):
        """cos and sin of the new token's position, [B, 1, H] (Llama's rotary embedding, computed per step)."""
        t = self.t
        p = t.full((B, 1, 1), float(pos), device=self.device)
        f = self.inv_freq[None, None, :].expand(B, 1, -1)
        ang = (p * f).float()
        emb = t.cat((ang, ang), dim=-1)
        return emb.cos().to(self.dt), emb.sin().to(self.dt)

    def step(self, tokens, cache):
        """One decode step: logits for B sequences, KV written at each sequence's end."""
        t, F, m = self.t, self.F, self.m
        N, K, H = m.n_heads, m.n_kv_heads, m.head_dim
        B = tokens.shape[0]
        x = F.embedding(tokens[:, None], self.emb)  # [B, 1, D]
        cos, sin = self._rotary(cache[0][2] if cache else 0, B)
        gqa = N != K
        for lay, (kc, vc, s) in zip(self.layers, cache):
            h = self._norm(x, lay["n1"])
            q = F.linear(h, lay["q"]).view(B, 1, N, H).transpose(1, 2)
            k = F.linear(h, lay["k"]).view(B, 1, K, H).transpose(1, 2)
            v = F.linear(h, lay["v"]).view(B, 1, K, H).transpose(1, 2)
            if "nq" in lay:
                q, k = self._norm(q, lay["nq"]), self._norm(k, lay["nk"])
            c, sn = cos.unsqueeze(1), sin.unsqueeze(1)
            q, k = self._rope(q, c, sn, t), self._rope(k, c, sn, t)
            kc[:, :, s: s + 1].copy_(k)
            vc[:, :, s: s + 1].copy_(v)
            a = F.scaled_dot_product_attention(q, kc, vc, enable_gqa=gqa)
            y = F.linear(a.transpose(1, 2).reshape(B, 1, N * H), lay["o"])
            x = x + (self._norm(y, lay["pa"]) if "pa" in lay else y)
            h = self._norm(x, lay["n2"])
            y = self._moe(h, lay) if "router" in lay else self._mlp(h, *lay["mlp"])
            x = x + (self._norm(y, lay["pf"]) if "pf" in lay else y)
        return F.linear(self._norm(x, self.nf)[:, -1], self.head)

    def _mlp(self, h, *ws):
        F = self.F
        if len(ws) == 2:  # plain: up, activation, down (GPT-2's GELU; one elementwise op as ReLU² or GELU)
            up, down = ws
            return F.linear(F.gelu(F.linear(h, up)), down)
        gate, up, down = ws
        return F.linear(F.silu(F.linear(h, gate)) * F.linear(h, up), down)

    def _moe(self, h, lay):
        t, F, e = self.t, self.F, self.m.moe
        B, _, D = h.shape
        x = h.view(-1, D)
        probs = F.softmax(F.linear(x, lay["router"]), dim=1, dtype=t.float32)
        w, sel = t.topk(probs, e.experts_per_token, dim=-1)
        w /= w.sum(dim=-1, keepdim=True)
        w = w.to(x.dtype)
        out = t.zeros_like(x)
        mask = F.one_hot(sel, num_classes=e.n_routed_experts).permute(2, 1, 0)
        hit = t.greater(mask.sum(dim=(-1, -2)), 0).nonzero().flatten().tolist()
        for ex in hit:
            idx, rows = t.where(mask[ex])
            y = self._mlp(x[rows], *lay["experts"][ex]) * w[rows, idx, None]
            out.index_add_(0, rows, y.to(x.dtype))
        if "shared" in lay:
            out = out + self._mlp(x, *lay["shared"])
        return out.view(B, 1, D)


def _time_step(dm: _DecodeModel, B: int, S: int, min_time_s: float, max_reps: int) -> float:
    """Best time of one decode step at batch B, context S (one warm-up; at least two timed steps)."""
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
    missing = [what for what, has in (
        ("linear-attention layers", m.linear_attention is not None),
        ("attention groups of several shapes", m.attention_groups is not None),
        ("a gated attention output", m.attention_output_gate),
        ("a sparse-attention indexer", m.sparse_attention is not None),
        ("a latent MoE", m.moe is not None and m.moe.d_latent is not None),
        ("layers without an MLP", m.n_dense_mlp_layers is not None),
        ("KV caches shared across layers", m.n_kv_layers is not None and m.n_kv_layers < m.n_layers),
        (f"a {m.mlp_matrices}-matrix MLP", m.mlp_matrices not in (2, 3))) if has]
    if missing:
        raise InputError(f"{m.name}: check-local builds dense or MoE stacks of full or sliding-window attention; "
                         f"{' and '.join([', '.join(missing[:-1]), missing[-1]] if len(missing) > 1 else missing)} "
                         f"{'is' if len(missing) == 1 else 'are'} not built")
    if m.n_heads % m.n_kv_heads:
        raise InputError(f"{m.name}: {m.n_heads} query heads do not split into {m.n_kv_heads} KV-head groups")
    mt = truncate(m, layers) if layers else m
    b = arch.bytes_per(dtype)
    weights = arch.param_counts(mt).total * b
    need = weights + max(batches) * float(arch.kv_stored_bytes(mt, max(contexts) + 1, dtype))
    cap = memory_bytes * memory_fraction
    if need > cap:
        L_fit = max(1, int(mt.n_layers * cap / need))
        raise InputError(f"{mt.name} needs {need / 1e9:.1f} GB ({dtype} weights + KV at batch {max(batches)}, context "
                         f"{max(contexts)}) but {where} has {cap / 1e9:.1f} GB to spare; use --layers "
                         f"{L_fit} or a smaller --batch/--context")
    return mt


def as_built(m: Model) -> Model:
    """The model as check-local builds it, for its prediction: every weight in one format (not the checkpoint's
    mixed ones) and its own stack's op inventory (core.eager code 'check-local': Llama's modules and Mixtral's
    MoE block, whatever the family's modelling code)."""
    return m.evolve(weight_dtypes={}, eager_code="check-local")  # type: ignore[return-value]


def model_dtype(m: Model) -> str:
    """The precision a config asks for (its torch_dtype) when PyTorch can run it, else bf16."""
    return m.weight_dtype if m.weight_dtype in ("fp32", "bf16", "fp16") else "bf16"


def check_local(m: Model, system: System, *, batches=(1, 4, 16, 64), contexts=(256, 1024, 2048),
                layers: int | None = None, dtype: str | None = None, min_time_s: float = 0.2, max_reps: int = 5,
                memory_fraction: float = 0.8, rounds: int = 3, progress=None, priors=None,
                refresh_host: bool = True) -> LocalCheck:
    """Measure the decode step at every (batch, context) and set it beside roofline.step's prediction.

    The grid is timed in `rounds` interleaved rounds (every point once per round); each point keeps its
    median round and the spread (max − min)/median, so a burst of other work on a shared machine moves
    one round, not the result. The prediction is made before anything is built: a profile that did not
    measure the format refuses it (roofline.step), unless its priors allow extrapolation.
    """
    torch = _torch()
    dtype = dtype or model_dtype(m)
    m = as_built(m)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    mt = plan(m, system.chip.hbm_capacity_bytes, batches=batches, contexts=contexts, layers=layers, dtype=dtype,
              memory_fraction=memory_fraction, where=system.name)
    pts = [(B, S) for S in contexts for B in batches]
    kw = dict(G=1, phase="decode", precision=dtype, kv_dtype=dtype, basis="prior", priors=priors)
    preds = {(B, S): step(mt, system, B=B, S=S, **kw) for B, S in pts}  # refuses a format the profile lacks
    say = progress or (lambda what, frac: None)
    out = LocalCheck(model=m.name, system=system.name, dtype=dtype, layers_built=mt.n_layers, layers_full=m.n_layers,
                     backend=f"torch {torch.__version__} ({device})")
    pri = priors or load_priors(system.chip.priors)
    probe = refresh_host and pri.host_probe_s and pri.dispatch_s
    if probe:
        from .calibrate import host_probe_time, main_format
        fmt_probe = main_format(device == "cuda", pri.formats or [dtype])
        say("timing the host (calibrate's tiny step)", 0.0)
        probes = [host_probe_time(fmt_probe)]
    say("building the model", 0.0)
    dm = _DecodeModel(mt, dtype, device)
    times: dict = {pt: [] for pt in pts}
    R = max(1, rounds)
    for r in range(R):
        for i, (B, S) in enumerate(pts):
            say(f"round {r + 1}/{R}: batch {B}, context {S}", (r * len(pts) + i + 0.5) / (R * len(pts)))
            times[(B, S)].append(_time_step(dm, B, S, min_time_s, max_reps))
        if probe:
            probes.append(host_probe_time(fmt_probe))
    if probe:  # the host's per-op costs, scaled by how fast it runs calibrate's tiny step now (module doc)
        out.host_ratio = float(np.median(probes)) / pri.host_probe_s
        now = pri.model_copy(update={k: getattr(pri, k) * out.host_ratio
                                     for k in ("dispatch_s", "route_dispatch_s", "expert_dispatch_s")})
        kw["priors"] = now
        preds = {(B, S): step(mt, system, B=B, S=S, **kw) for B, S in pts}
    for B, S in pts:
        v = np.array(times[(B, S)])
        st = preds[(B, S)]
        lo, hi = st.extras.get("interval", (math.nan, math.nan))
        out.points.append(LocalPoint(B, S, float(np.median(v)), float(st.v("t_step")), str(st.bound),
                                     spread=float((v.max() - v.min()) / np.median(v)), low_s=float(lo), high_s=float(hi)))
    if mt.n_layers < m.n_layers:  # extrapolate: the per-layer part scales with L, embedding and head do not
        zero = copy.copy(dm)  # the same embedding and head, no layers
        zero.layers = []
        for p in out.points:
            t0 = _time_step(zero, p.B, p.S, min_time_s, max_reps)
            s_full = step(m, system, B=p.B, S=p.S, **kw)
            meas_full = t0 + (p.measured_s - t0) * m.n_layers / mt.n_layers
            out.full_model.append({"batch": p.B, "context": p.S, "measured_s": meas_full,
                                   "predicted_s": float(s_full.v("t_step")),
                                   "error": float(s_full.v("t_step")) / meas_full - 1})
    say("done", 1.0)
    return out
