"""Fast and slow modes: what a price multiple p and a speed multiple s say about batch and KV (ledger FM1–FM4).

Model-free. On the same chips per replica, cost per token is G·t_step/B and speed is 1/t_step, so
    p = (t_f/B_f)/(t_s/B_s),  s = t_s/t_f   ⇒   batch_ratio = B_fast/B_std = m / (p · s)     (FM2)
with m the fast mode's chips per replica over the standard's (1 if the same). 6× and 2.5× give 1/15.

Two-term roofline (lecture R1): below the balance batch t_step = t_w + B·t_kv1 (weights once per step,
KV per sequence). Cutting the batch p·s times cuts the KV time p·s times and leaves the weights, so
the speed multiple fixes the KV share of the standard step, and the weights' share bounds what a
slow mode (batch → ∞) can take off the standard price:
    kv_share             = (1 − 1/s) / (1 − 1/(p · s))          (FM3: 9/14 = 0.643 for 6×, 2.5×)
    slow_mode_max_saving ≤ 1 − kv_share                          (FM4: 0.357)
With a model and a context the KV-to-compute ratio kappa = t_kv1/t_c1 is known (see `sweep`), and the
standard batch u = B_std/B* that makes both multiples hold is
    kappa ≥ kv_share:  u_std = kv_share / ((1 − kv_share) · kappa)   memory-bound, on the frontier
    kappa < kv_share:  u_std = p · s / (p − kappa)                   compute-bound, past the balance batch
so the standard step's KV share is min(kappa, kv_share), and
    slow_mode_max_saving = 1 − max(1, kappa) / max(1, 1/u_std + kappa)     ∈ [0, 1 − kv_share].
The ledger's fit A (standard at the balance batch) and fit B (also 5× output/input) are the two
regimes' meeting point and a kappa = 3.21 case of the first.

The latency–cost frontier comes from the core roofline (`roofline.step`, through `sweep`): every
batch's (step time, cost per token), keeping the points no other point beats on both.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..core.derive import Numbers, formula, lift, plain, value_of
from ..core.errors import InputError
from ..core.records import Model, System
from ..core.roofline import step
from .serve import interval_ends
from .sweep import compute_time_per_seq, kv_compute_ratio, kv_time_per_seq, roofline_inputs, sweep

__all__ = ["batch_ratio", "kv_share_for_multiples", "standard_batch_memory_bound", "standard_batch_compute_bound",
           "slow_mode_saving", "pareto_frontier", "Modes", "fast_slow_modes", "check_multiples"]


@formula("batch_ratio = m / (p · s)", unit="")
def batch_ratio(p, s, m=1.0):
    return m / (p * s)


@formula("kv_share = (1 − 1/s) / (1 − 1/(p · s))", unit="")
def kv_share_for_multiples(p, s):
    return (1 - 1 / s) / (1 - 1 / (p * s))


@formula("u_std = kv_share / ((1 − kv_share) · kappa)", unit="")
def standard_batch_memory_bound(kv_share, kappa):
    return kv_share / ((1 - kv_share) * kappa)


@formula("u_std = p · s / (p − kappa)", unit="")
def standard_batch_compute_bound(p, s, kappa):
    return p * s / (p - kappa)


@formula("slow_mode_max_saving = 1 − max(1, kappa) / max(1, 1/u_std + kappa)", unit="")
def slow_mode_saving(kappa, u_std):
    return 1 - np.maximum(1.0, kappa) / np.maximum(1.0, 1 / u_std + kappa)


@formula("slow_mode_max_saving = 1 − kv_share", unit="")
def slow_mode_saving_bound(kv_share):
    return 1 - kv_share


@formula("B_std = u_std · B_star", unit="seq")
def standard_batch(u_std, B_star):
    return u_std * B_star


@formula("B_fast = B_std · batch_ratio", unit="seq")
def fast_batch(B_std, batch_ratio):
    return B_std * batch_ratio


def check_multiples(p: float, s: float, m: float = 1.0) -> None:
    for name, x in (("--price-multiple", p), ("--speed-multiple", s), ("--chips-multiple", m)):
        if not np.isfinite(x) or x <= 0:
            raise InputError(f"{name} must be a positive number (got {x})")
        if not 1e-6 <= x <= 1e6:
            raise InputError(f"{name} {x} is absurd (more than a million times, or less than a millionth)")


def pareto_frontier(latency_s, cost) -> np.ndarray:
    """Indices of the points no other point beats on both latency and cost, fastest first.

    Along the result latency rises and cost strictly falls (ties in latency keep the cheapest).
    """
    lat = np.asarray(latency_s, dtype=float).ravel()
    c = np.asarray(cost, dtype=float).ravel()
    ok = np.isfinite(lat) & np.isfinite(c)
    idx = np.flatnonzero(ok)
    order = idx[np.lexsort((c[idx], lat[idx]))]
    cs = c[order]
    best_before = np.minimum.accumulate(np.concatenate([[np.inf], cs[:-1]]))
    return order[cs < best_before]


@dataclass
class Modes(Numbers):
    """Fast/slow-mode analysis: model-free numbers, and with a model its frontier and operating points."""

    p: float
    s: float
    m: float
    numbers: dict  # key -> Q or value
    model: Model | None = None
    system: System | None = None
    G: int | None = None
    S: float | None = None
    basis: str = "prior"
    batch: np.ndarray | None = None
    step_time_s: np.ndarray | None = None
    usd_per_mtok: np.ndarray | None = None
    chip_hours_per_mtok: np.ndarray | None = None
    fits: np.ndarray | None = None  # weights + KV fit in HBM at each batch
    frontier_index: np.ndarray | None = None
    points: dict = field(default_factory=dict)  # 'standard', 'fast', 'standard_roofline', 'fast_roofline'
    interval: tuple[float, float, str] | None = None  # serve's decode interval (down, up, group) on the prior basis

    def to_dict(self, derivations: bool = False) -> dict:
        out: dict = {"price_multiple": self.p, "speed_multiple": self.s, "chips_multiple": self.m}
        for k, q in self.numbers.items():
            out[k] = plain(value_of(q))
        if self.model is not None:
            out.update({"model": self.model.name, "system": self.system.name, "chips": self.G, "context": self.S,
                        "basis": self.basis})
            f = self.frontier_index
            out["frontier"] = {"batch": self.batch[f], "step_time_s": self.step_time_s[f],
                               "usd_per_mtok": None if self.usd_per_mtok is None else self.usd_per_mtok[f],
                               "chip_hours_per_mtok": self.chip_hours_per_mtok[f]}
            if self.interval is not None:  # a step time and the costs ∝ it: [x/up, x/down]
                for k in ("step_time_s", "usd_per_mtok", "chip_hours_per_mtok"):
                    if out["frontier"][k] is not None:
                        out["frontier"][f"{k}_interval"] = interval_ends(out["frontier"][k], self.interval, rate=False)
                out["frontier"]["interval_group"] = self.interval[2]
            out["points"] = self.points
        if derivations:
            out["derivations"] = self.derivations()
        return plain(out)


def fast_slow_modes(p: float, s: float, m: float = 1.0, *, model: Model | None = None, system: System | None = None,
                    G: int | None = None, S: float = 4096, precision: str | None = None, kv_dtype: str | None = None,
                    basis: str = "prior", batch=None, explain: bool = False) -> Modes:
    """Model-free batch ratio and KV share; with a model/system/context, the frontier and the operating points."""
    check_multiples(p, s, m)
    g = lambda sym, v, unit="", src=None: lift(explain, sym, v, unit, src)  # noqa: E731
    pq = g("p", p, "", "given: price multiple (fast ÷ standard, per token)")
    sq = g("s", s, "", "given: speed multiple (fast ÷ standard, output tokens/s per sequence)")
    mq = g("m", m, "", "given: chips per replica, fast ÷ standard")
    nums: dict = {"batch_ratio": batch_ratio(pq, sq, mq)}
    consistent = s > 1 and p >= 1  # faster and not cheaper per token: a point on the same frontier
    if consistent:
        f = kv_share_for_multiples(pq, sq)
        nums["kv_share"] = f
        nums["slow_mode_max_saving"] = slow_mode_saving_bound(f)
    else:
        nums["kv_share"] = None
        nums["slow_mode_max_saving"] = None
        nums["note"] = ("the KV-share fit needs a faster mode that is not cheaper (s > 1, p ≥ 1); a mode that is "
                        "slower, or both faster and cheaper per token, is not a fast mode on the latency–cost frontier")
    out = Modes(p, s, m, nums)
    if model is None:
        return out
    if system is None:
        raise InputError("a model needs --on SYSTEM")
    G = system.domain_chips if G is None else int(G)
    out.model, out.system, out.G, out.S, out.basis = model, system, G, float(S), basis
    sw = sweep(model, system, G=G, batch=_frontier_batches() if batch is None else batch, context=[S],
               precision=precision, kv_dtype=kv_dtype, basis=basis)
    out.batch = sw.batch
    out.step_time_s = sw.step_time_s[:, 0]
    out.usd_per_mtok = None if sw.usd_per_mtok is None else sw.usd_per_mtok[:, 0]
    out.chip_hours_per_mtok = sw.chip_hours_per_mtok[:, 0]
    cost = out.usd_per_mtok if out.usd_per_mtok is not None else out.chip_hours_per_mtok
    out.fits = sw.fits[:, 0]
    out.interval = sw.interval
    out.frontier_index = pareto_frontier(out.step_time_s, np.where(out.fits, cost, np.nan))  # only what fits in HBM
    if not consistent:
        return out

    # closed form (two-term model, spec rates): kappa at this context, the standard batch, the saving
    inp = roofline_inputs(model, system, G, precision, kv_dtype, explain)
    kappa = kv_compute_ratio(kv_time_per_seq(g("S", float(S), "tok", "given"), inp.kv, inp.G, inp.W),
                             compute_time_per_seq(inp.N_active, inp.G, inp.F))
    k = value_of(kappa)
    f = nums["kv_share"]
    memory_bound = k >= value_of(f)
    if memory_bound and value_of(f) >= 1:  # p = 1: the standard step would be KV reads alone, weights free
        nums.update({"kappa": kappa, "kv_share_model_free": f,
                     "note": "at the same price per token (p = 1) a faster mode needs a standard step of KV reads "
                             "alone: no finite standard batch gives both multiples"})
        return out
    u = standard_batch_memory_bound(f, kappa) if memory_bound else standard_batch_compute_bound(pq, sq, kappa)
    B_std = standard_batch(u, inp.B_star)
    nums.update({
        "kappa": kappa, "u_std": u, "standard_batch": B_std,
        "fast_batch": fast_batch(B_std, nums["batch_ratio"]),
        "standard_on_frontier": bool(memory_bound),
        "kv_share": f if memory_bound else kappa,
        "slow_mode_max_saving": slow_mode_saving(kappa, u),
        "kv_share_model_free": f,
        "slow_mode_max_saving_bound": nums["slow_mode_max_saving"],
    })
    kw = dict(G=G, S=float(S), precision=precision, kv_dtype=kv_dtype, basis=basis)
    out.points["standard"] = _point(model, system, value_of(B_std), **kw)
    out.points["fast"] = _point(model, system, value_of(nums["fast_batch"]), **kw)
    out.points.update(_roofline_points(model, system, p, s, m, **kw))
    if out.interval is not None:
        for point in out.points.values():
            _point_intervals(point, out.interval)
    nums["roofline_standard_batch"] = out.points.get("standard_roofline", {}).get("batch")
    nums["roofline_kv_share"] = out.points.get("standard_roofline", {}).get("kv_share")
    nums["roofline_slow_mode_max_saving"] = out.points.get("standard_roofline", {}).get("slow_mode_max_saving")
    return out


def _frontier_batches() -> np.ndarray:
    return np.unique(np.round(np.geomspace(1, 2**18, 120)))


def _point(model, system, B, *, G, S, precision, kv_dtype, basis) -> dict:
    """One operating point on the core roofline: step time, cost, the KV share of the step."""
    st = step(model, system, G=G, B=float(B), S=S, phase="decode", precision=precision, kv_dtype=kv_dtype, basis=basis)
    t = float(st.v("t_step"))
    price = system.usd_per_chip_hour
    return {"batch": float(B), "step_time_s": t, "tokens_per_s_per_sequence": 1 / t,
            "usd_per_mtok": G * price / 3600 * t / B * 1e6 if price else None,
            "chip_hours_per_mtok": G * t / B * 1e6 / 3600, "kv_share": float(st.v("t_kv")) / t, "bound": st.bound}


def _point_intervals(point: dict, scale: tuple[float, float, str]) -> None:
    """An operating point's 80 % intervals from serve's decode group: its step, speed and costs (the multiples and
    the KV share are ratios of steps of one model on one chip, left without)."""
    for k, rate in (("step_time_s", False), ("tokens_per_s_per_sequence", True), ("usd_per_mtok", False),
                    ("chip_hours_per_mtok", False)):
        if point.get(k) is not None:
            point[f"{k}_interval"] = interval_ends(point[k], scale, rate)


def _roofline_points(model, system, p, s, m, *, G, S, precision, kv_dtype, basis) -> dict:
    """On the core roofline, the standard batch whose cut by p·s/m gives speed s (so price p), if any.

    speed(B) = t_step(B) / t_step(B·m/(p·s)) is solved on a fine log grid (vectorised).
    Only m = 1 is solved here (more chips per replica change the step, not just the batch).
    """
    if m != 1:
        return {}
    B = np.geomspace(p * s, 1e7, 2000)
    kw = dict(G=G, S=S, phase="decode", precision=precision, kv_dtype=kv_dtype, basis=basis)
    t_s = np.asarray(step(model, system, B=B, **kw).v("t_step"), dtype=float)
    t_f = np.asarray(step(model, system, B=B / (p * s), **kw).v("t_step"), dtype=float)
    speed = t_s / t_f
    # speed(B) is not monotone for an MoE (a tiny batch also touches fewer experts); take the last
    # batch where it rises through s: past it the cut always buys at least s, and the standard is cheapest
    # (none: every cut already buys more than s down to a fast batch of one sequence, or never reaches s)
    up = np.flatnonzero((speed[1:] >= s) & (speed[:-1] < s)) + 1
    if up.size == 0:
        return {}
    i = int(up[-1])
    w = (s - speed[i - 1]) / (speed[i] - speed[i - 1])  # interpolate in log B between the bracketing points
    B_std = float(np.exp(np.log(B[i - 1]) + w * (np.log(B[i]) - np.log(B[i - 1]))))
    std = _point(model, system, B_std, G=G, S=S, precision=precision, kv_dtype=kv_dtype, basis=basis)
    fast = _point(model, system, B_std / (p * s), G=G, S=S, precision=precision, kv_dtype=kv_dtype, basis=basis)
    inf = step(model, system, B=1e9, **kw)
    floor = float(inf.v("t_step")) / 1e9
    std["slow_mode_max_saving"] = 1 - floor / (std["step_time_s"] / B_std)
    fast["price_multiple"] = (fast["step_time_s"] / fast["batch"]) / (std["step_time_s"] / std["batch"])
    fast["speed_multiple"] = std["step_time_s"] / fast["step_time_s"]
    return {"standard_roofline": std, "fast_roofline": fast}
