"""Serving cost over batch and context (and precision, chip count), with the marks the lecture draws.

The lecture's two-term model (lecture-claims.md R1, R2, R3, R7, R9, A2, A3), per sequence on G chips
of peak F FLOP/s and W bytes/s:

    t_c1  = 2 · N_active / (G · F)              compute per sequence per step
    t_kv1 = S · kv / (G · W)                    KV read per sequence per step
    c(B)  = max(t_c1, t_w / B + t_kv1)          time per token: a hyperbola on a floor (R2)

    B*     = R · rho                            weights balanced against compute (R7, from the core)
    kappa  = t_kv1 / t_c1                       the KV share of compute, per sequence
    B_bal  = B* / (1 − kappa)                   balance batch with KV included; ∞ if kappa ≥ 1 (R9)
    L*     = 2 · N_active · W / (F · kv)        context where KV reads cost as much as compute (A2/A3)
    c_min  = max(t_c1, t_kv1)                   the floor no batch beats
    c(1) / c_min = (B* + kappa) / max(1, kappa) what not batching costs (R3): B* at S = 0

The curves come from the core roofline (`roofline.step`), which refines that model: an MoE step
reads only the experts its tokens hit (at batch 1 about N_active, not N_total), attention FLOP grow
with context, the embedding lookup is no matmul, and on the `prior` basis efficiencies,
communication and a per-step overhead apply. So `c1_over_cmin` and `cost_floor_usd_per_mtok` are
read off those curves, beside the closed forms (`*_two_term`). For a dense model at S = 0 on the
spec basis the two agree to the embedding's share of the parameters.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..core import arch
from ..core.derive import Q, formula, lift, plain, value_of
from ..core.errors import InputError
from ..core.load import load_priors
from ..core.records import Model, System
from ..core.roofline import hardware_ratio, optimal_batch, step
from .serve import check_inputs, interval_ends, prior_interval_scale, usd_per_mtok

__all__ = ["Sweep", "Inputs", "sweep", "roofline_inputs", "compute_time_per_seq", "kv_time_per_seq",
           "kv_compute_ratio", "balance_batch", "kv_crossover_context", "cost_floor_time", "unbatched_ratio",
           "memory_batch_limit", "B_INF", "default_batches", "default_contexts", "MAX_GRID_POINTS",
           "check_grid_size"]

B_INF = 1e9  # "infinite" batch for the floor read off the roofline: weights/B_INF is < 1e-5 of the floor
MAX_GRID_POINTS = 1_000_000  # ≈0.1 s and a few hundred MB at most (benchmarks/sweep_speed.py); 10^10 would be 30 GiB


def check_grid_size(**axes: int) -> None:
    """Refuse a grid whose product of axes (not each axis) exceeds MAX_GRID_POINTS."""
    n = 1
    for size in axes.values():
        n *= int(size)
    if n > MAX_GRID_POINTS:
        shape = " × ".join(f"{v:,} {k}" for k, v in axes.items())
        raise InputError(f"{shape} = {n:,} points; at most {MAX_GRID_POINTS:,} in one run (use fewer points per "
                         "axis, e.g. LO:HI:N)")


@formula("t_c1 = 2 · N_active / (G · F)", unit="s")
def compute_time_per_seq(N_active, G, F):
    return 2 * N_active / (G * F)


@formula("t_kv1 = S · kv / (G · W)", unit="s")
def kv_time_per_seq(S, kv, G, W):
    return S * kv / (G * W)


@formula("kappa = t_kv1 / t_c1", unit="")
def kv_compute_ratio(t_kv1, t_c1):
    return t_kv1 / t_c1


@formula("B_bal = B_star / (1 − kappa)", unit="seq")
def balance_batch(B_star, kappa):
    """∞ where kappa ≥ 1: KV reads alone outrun compute, so no batch is compute-bound."""
    k = np.asarray(kappa, dtype=float)
    return _scalar(np.where(k < 1, B_star / np.where(k < 1, 1 - k, 1.0), np.inf))


@formula("L_star = 2 · N_active · W / (F · kv)", unit="tok")
def kv_crossover_context(N_active, W, F, kv):
    """∞ where kv = 0: a state-space model keeps no KV, so no context makes its KV reads outrun compute."""
    k = np.asarray(kv, dtype=float)
    return _scalar(np.where(k > 0, 2 * np.asarray(N_active) * W / (F * np.where(k > 0, k, 1.0)), np.inf))


@formula("c_min = max(t_c1, t_kv1)", unit="s")
def cost_floor_time(t_c1, t_kv1):
    return np.maximum(t_c1, t_kv1)


@formula("c1_over_cmin_two_term = (B_star + kappa) / max(1, kappa)", unit="")
def unbatched_ratio(B_star, kappa):
    return (B_star + kappa) / np.maximum(1.0, kappa)


@formula("c1_over_cmin = t_step_1 / (t_step_inf / B_inf)", unit="")
def roofline_unbatched_ratio(t_step_1, t_step_inf, B_inf):
    return t_step_1 / (t_step_inf / B_inf)


@formula("c_floor = t_step_inf / B_inf", unit="s")
def roofline_floor_time(t_step_inf, B_inf):
    return t_step_inf / B_inf


@formula("B_mem = (G · hbm − W_all) / kv_held", unit="seq")
def memory_batch_limit(G, hbm, W_all, kv_held):
    """Sequences whose KV fits beside the weights (0 when the weights alone do not fit)."""
    kv = np.asarray(kv_held, dtype=float)
    room = np.maximum(G * hbm - W_all, 0.0)
    return _scalar(np.where(kv > 0, room / np.where(kv > 0, kv, 1.0), np.inf))


def _scalar(x):
    a = np.asarray(x)
    return float(a) if a.ndim == 0 else a


@dataclass(frozen=True)
class Inputs:
    """The two-term model's inputs for one model on one system, lifted with sources when explaining."""

    G: object
    F: object
    W: object
    b_w: object
    N_total: object
    N_active: object
    rho: object
    R: object
    B_star: object
    kv: object
    hbm: object
    price: object  # USD per chip-hour, or None
    precision: str
    kv_dtype: str


def roofline_inputs(m: Model, system: System, G: int, precision: str | None = None, kv_dtype: str | None = None,
                    explain: bool = False) -> Inputs:
    """F, W, b_w at the matmul precision, parameter counts, KV bytes per token, R and B* (as `serve` does)."""
    chip = system.chip
    prec = precision or m.weight_dtype
    kvd = kv_dtype or m.kv_dtype
    g = lambda sym, v, unit="", src=None: lift(explain, sym, v, unit, src)  # noqa: E731
    pc = arch.param_counts(m, explain)
    F = g("F", chip.peak(prec), "FLOP/s", chip.source_of(f"peak_flop_per_s.{chip.peak_precision(prec)}"))
    W = g("W", chip.hbm_bandwidth_bytes_per_s, "B/s", chip.source_of("hbm_bandwidth_bytes_per_s"))
    b_w = g("b_w", arch.bytes_per(prec), "B", f"{prec} weights")
    R = hardware_ratio(F, W, b_w)
    kv = arch.kv_bytes_per_token(m, kvd, explain)
    if explain:
        kv = kv.renamed("kv")
    price = system.usd_per_chip_hour
    return Inputs(
        G=g("G", G, "chips", "given"), F=F, W=W, b_w=b_w, N_total=pc.total, N_active=pc.active, rho=pc.rho, R=R,
        B_star=optimal_batch(R, pc.rho), kv=kv,
        hbm=g("hbm", chip.hbm_capacity_bytes, "B", chip.source_of("hbm_capacity_bytes")),
        price=g("usd_per_chip_hour", price, "USD", system.price_source()) if price else None,
        precision=prec, kv_dtype=kvd)


def default_batches() -> np.ndarray:
    """1 … 131,072 sequences, log-spaced (about 8 points per factor of 10)."""
    return np.unique(np.round(np.geomspace(1, 2**17, 42)))


def default_contexts() -> np.ndarray:
    """256 … 2M tokens, log-spaced."""
    return np.unique(np.round(np.geomspace(256, 2**21, 40)))


@dataclass
class Sweep:
    """One model on one system at one precision and chip count: the grid and the marks."""

    model: Model
    system: System
    G: int
    precision: str
    kv_dtype: str
    basis: str
    batch: np.ndarray  # (nB,)
    context: np.ndarray  # (nS,)
    S_ref: float
    step_time_s: np.ndarray  # (nB, nS)
    tokens_per_s_per_chip: np.ndarray
    usd_per_mtok: np.ndarray | None  # None when the catalog has no price
    chip_hours_per_mtok: np.ndarray
    bound: np.ndarray
    fits: np.ndarray
    floor_usd_per_mtok_by_context: np.ndarray | None  # (nS,) core floor per context
    floor_chip_hours_per_mtok_by_context: np.ndarray
    balance_batch_by_context: np.ndarray
    memory_batch_limit_by_context: np.ndarray
    marks: dict = field(default_factory=dict)  # key -> Q or value, at S_ref
    interval: tuple[float, float, str] | None = None  # a decode step's 80 % interval (down, up, group): serve's

    def interval_of(self, name: str, x: np.ndarray) -> np.ndarray | None:
        """The 80 % interval of each grid point, [..., (low, high)]: a rate [x·down, x·up], a time or a cost
        [x/up, x/down]."""
        if self.interval is None or x is None:
            return None
        return interval_ends(np.asarray(x), self.interval, rate=name.startswith("tokens_per_s"))

    def value(self, key: str):
        return value_of(self.marks[key])

    def explain(self, keys: list[str] | None = None) -> str:
        keys = keys or [k for k, q in self.marks.items() if isinstance(q, Q) and q.formula]
        return "\n\n".join(f"── {k} ──\n{self.marks[k].explain()}" for k in keys if isinstance(self.marks.get(k), Q))

    def to_dict(self, derivations: bool = False) -> dict:
        out: dict = {"model": self.model.name, "system": self.system.name, "chips": self.G,
                     "precision": self.precision, "kv_dtype": self.kv_dtype, "basis": self.basis,
                     "context": self.S_ref}
        for k, q in self.marks.items():
            out[k] = plain(value_of(q))
        out["points"] = {
            "batch": self.batch, "context": self.context, "step_time_s": self.step_time_s,
            "tokens_per_s_per_chip": self.tokens_per_s_per_chip, "usd_per_mtok": self.usd_per_mtok,
            "chip_hours_per_mtok": self.chip_hours_per_mtok, "bound": self.bound, "fits": self.fits,
        }
        if self.interval is not None:
            for k in ("step_time_s", "tokens_per_s_per_chip", "usd_per_mtok", "chip_hours_per_mtok"):
                out["points"][f"{k}_interval"] = self.interval_of(k, out["points"][k])
            out["points"]["interval_group"] = self.interval[2]
        columns = {"context": self.context, "cost_floor_usd_per_mtok": self.floor_usd_per_mtok_by_context,
                   "cost_floor_chip_hours_per_mtok": self.floor_chip_hours_per_mtok_by_context,
                   "balance_batch": self.balance_batch_by_context,
                   "memory_batch_limit": self.memory_batch_limit_by_context}
        # one record per context, so a balance batch that is ∞ (KV alone outruns compute) can be left out
        out["by_context"] = [{k: float(v[i]) for k, v in columns.items() if v is not None and np.isfinite(v[i])}
                             for i in range(len(self.context))]
        if derivations:
            out["derivations"] = {k: q.to_dict() for k, q in self.marks.items() if isinstance(q, Q) and q.formula}
        return out


def sweep(m: Model, system: System, *, G: int | None = None, batch=None, context=None, S_ref: float | None = None,
          precision: str | None = None, kv_dtype: str | None = None, basis: str = "prior",
          explain: bool = False) -> Sweep:
    """The batch × context grid of step time, throughput and cost in one roofline call, plus the marks.

    Marks are taken at S_ref (default: the first context). `explain=True` makes them derivations.
    """
    G = system.domain_chips if G is None else int(G)
    B = np.atleast_1d(np.asarray(default_batches() if batch is None else batch, dtype=float))
    S = np.atleast_1d(np.asarray([4096.0] if context is None else context, dtype=float))
    S0 = float(S[0] if S_ref is None else S_ref)
    precision = precision or m.weight_dtype
    kv_dtype = kv_dtype or m.kv_dtype
    check_inputs(G=G, B=B, S=np.append(S, S0), precision=precision, kv_dtype=kv_dtype, basis=basis)
    check_grid_size(batches=B.size, contexts=S.size)
    kw = dict(G=G, precision=precision, kv_dtype=kv_dtype, basis=basis)
    inp = roofline_inputs(m, system, G, precision, kv_dtype, explain)
    price = value_of(inp.price) if inp.price is not None else None

    # the grid: one vectorised roofline call over (batch, context)
    grid = step(m, system, B=B[:, None], S=S[None, :], phase="decode", **kw)
    t = np.broadcast_to(grid.v("t_step"), (B.size, S.size))
    T = np.broadcast_to(np.asarray(grid.v("tokens"), dtype=float), t.shape)
    chip_h = G * t / T * 1e6 / 3600
    usd = usd_per_mtok(G, price, t, T) if price else None
    bound = np.broadcast_to(np.asarray(grid.bound), t.shape)

    # memory: weights + B · KV held vs the G chips' HBM
    b_w, hbm = value_of(inp.b_w), value_of(inp.hbm)
    W_all = value_of(inp.N_total) * b_w
    kv_held_S = arch.kv_stored_bytes(m, S, kv_dtype)
    fits = W_all + B[:, None] * kv_held_S[None, :] <= G * hbm
    B_mem_S = memory_batch_limit(G, hbm, W_all, kv_held_S)

    # the floor on the roofline, per context: the step of an "infinite" batch, per token
    inf = step(m, system, B=B_INF, S=S, phase="decode", **kw)
    floor_S = np.asarray(inf.v("t_step"), dtype=float) / B_INF
    floor_usd_S = usd_per_mtok(G, price, floor_S, 1.0) if price else None
    floor_chip_h_S = G * floor_S * 1e6 / 3600

    # two-term marks over every context (vectorised), then with derivations at S_ref
    t_c1_v = compute_time_per_seq(value_of(inp.N_active), G, value_of(inp.F))
    kappa_S = kv_time_per_seq(S, value_of(inp.kv), G, value_of(inp.W)) / t_c1_v
    B_bal_S = np.atleast_1d(balance_batch(value_of(inp.B_star), kappa_S))

    marks = _marks(m, system, inp, S0, kw, explain)
    pri = load_priors(system.chip.priors)
    iv = prior_interval_scale(pri, basis, "decode", precision)
    return Sweep(m, system, G, precision, kv_dtype, basis, B, S, S0, t, T / t / G, usd, chip_h, bound, fits,
                 floor_usd_S, floor_chip_h_S, B_bal_S, np.atleast_1d(B_mem_S), marks, iv)


def _marks(m: Model, system: System, inp: Inputs, S0: float, kw: dict, explain: bool) -> dict:
    g = lambda sym, v, unit="", src=None: lift(explain, sym, v, unit, src)  # noqa: E731
    G = value_of(inp.G)
    Sq = g("S", S0, "tok", "given: reference context")
    t_c1 = compute_time_per_seq(inp.N_active, inp.G, inp.F)
    t_kv1 = kv_time_per_seq(Sq, inp.kv, inp.G, inp.W)
    kappa = kv_compute_ratio(t_kv1, t_c1)
    marks: dict = {
        "hardware_ratio": inp.R, "rho": inp.rho, "optimal_batch": inp.B_star, "kappa": kappa,
        "balance_batch": balance_batch(inp.B_star, kappa),
        "kv_crossover_context": kv_crossover_context(inp.N_active, inp.W, inp.F, inp.kv),
        "kv_crossover_context_roofline": kv_crossover_context_roofline(m, system, B=float(value_of(inp.B_star)), **kw),
    }
    c_min2 = cost_floor_time(t_c1, t_kv1)
    marks["cost_floor_s_per_tok_two_term"] = c_min2
    # on the roofline: batch 1 and an "infinite" batch at S_ref
    one = step(m, system, B=1.0, S=S0, phase="decode", explain=explain, **kw)
    inf = step(m, system, B=B_INF, S=S0, phase="decode", explain=explain, **kw)
    t1 = one.t_step.renamed("t_step_1") if explain else one.t_step
    tinf = inf.t_step.renamed("t_step_inf") if explain else inf.t_step
    Binf = g("B_inf", B_INF, "seq", "a batch large enough that weights/B vanish (< 1e-5 of the floor)")
    c_min = roofline_floor_time(tinf, Binf)
    marks["cost_floor_s_per_tok"] = c_min
    if inp.price is not None:
        one_tok = g("T", 1.0, "tok", "per token")
        marks["cost_floor_usd_per_mtok"] = usd_per_mtok(inp.G, inp.price, c_min, one_tok)
        marks["cost_floor_usd_per_mtok_two_term"] = usd_per_mtok(inp.G, inp.price, c_min2, one_tok)
    else:
        marks["cost_floor_usd_per_mtok"] = None
        marks["cost_floor_usd_per_mtok_two_term"] = None
    marks["c1_over_cmin"] = roofline_unbatched_ratio(t1, tinf, Binf)
    marks["c1_over_cmin_two_term"] = unbatched_ratio(inp.B_star, kappa)
    W_all = value_of(inp.N_total) * value_of(inp.b_w)
    marks["memory_batch_limit"] = memory_batch_limit(
        inp.G, inp.hbm, g("W_all", W_all, "B", "N_total · b_w"),
        g("kv_held", float(arch.kv_stored_bytes(m, S0, inp.kv_dtype)), "B",
          f"{m.file or m.name}: KV bytes held per sequence at S ({inp.kv_dtype})"))
    marks["latency_floor_s"] = value_of(inp.N_total) * value_of(inp.b_w) / (G * value_of(inp.W))
    return marks


def _interpolate_crossing(S_lo, S_hi, d_lo, d_hi):
    return S_lo + (S_hi - S_lo) * d_lo / (d_lo - d_hi)


def kv_crossover_context_roofline(m: Model, system: System, *, G: int, precision: str, kv_dtype: str,
                                  basis: str = "spec", B: float = 1.0, S_max: float = 1e9, n: int = 4000):
    """The context where the step's KV read time reaches its compute time on the core roofline, at batch B.

    In the two-term model the crossing does not depend on B (both terms grow as B); on the prior basis
    the measured efficiency curves do (GEMM rows, bytes per attention kernel), so the sweep asks at B*,
    where the GEMMs run at the sizes they are tuned for, not at B = 1 where fixed kernel costs dominate.

    Unlike the closed-form L*, this counts attention FLOP (which also grow with S), sliding windows
    and sparse top-k caps on what is read. None if KV never catches compute below S_max tokens.
    One sequence's work is spread evenly over the G chips (ideal=True), as in the closed form: on the
    layout's critical path a lone sequence sits on one data-parallel rank, and the per-sequence ratio
    would compare one chip's KV read with G chips' compute.
    """
    S = np.concatenate([[0.0], np.geomspace(1, S_max, n)])
    st = step(m, system, G=G, B=B, S=S, phase="decode", precision=precision, kv_dtype=kv_dtype, basis=basis,
              ideal=True)
    d = np.asarray(st.v("t_math"), dtype=float) - np.asarray(st.v("t_kv"), dtype=float)  # > 0: compute wins
    idx = np.flatnonzero(d <= 0)
    if idx.size == 0:
        return None
    i = int(idx[0])
    if i == 0:
        return 0.0
    return float(_interpolate_crossing(S[i - 1], S[i], d[i - 1], d[i]))
