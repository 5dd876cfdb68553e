"""The throughput-at-speed frontier: tokens/s per chip against tokens/s per user, over concurrency.

Each configuration (chip count, layout) is evaluated at a grid of concurrencies C by the closed-loop
steady state (sim/fastpath.py, vectorised: one roofline call per configuration), or by the
simulator for policies without a closed form (chunked). A point is kept on the frontier when no
other point is both faster per user and cheaper per chip (Pareto):

    per chip  = output_tokens_per_s / G          per user = 1 / tpot

`at_user_speed X` answers the best per-chip throughput among points with tokens/s/user ≥ X (and
mean TTFT ≤ `at_ttft`, when given), with the operating point that achieves it; the simulator then
runs that point (`confirm`) so the answer carries its simulated value beside the closed form.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..core.errors import InputError
from ..core.load import load_priors
from ..core.records import Model, Priors, System, kernel_engine
from ..core.roofline import Layout, default_layout
from .speculative import Speculation
from .sim import simulate
from .sim.fastpath import FAST_POLICIES, steady_state
from .sim.run import mean_intervals

__all__ = ["Frontier", "frontier", "pareto", "point_layout", "LAYOUTS"]

LAYOUTS = ("all", "default", "tp", "ep", "tpep")
_KEYS = ("tokens_per_s_per_user", "tokens_per_s_per_chip", "output_tokens_per_s", "ttft_s", "tpot_s", "batch")


def pareto(user, chip) -> np.ndarray:
    """Indices of the points no other point beats on both axes, in order of rising per-user speed."""
    u, c = np.asarray(user, dtype=float), np.asarray(chip, dtype=float)
    order = np.lexsort((-c, -u))  # fastest per user first; ties: cheapest first
    keep, best = [], -np.inf
    for i in order:
        if np.isfinite(u[i]) and np.isfinite(c[i]) and c[i] > best:
            keep.append(i)
            best = c[i]
    return np.array(keep[::-1], dtype=int)


def _layouts(kinds, m: Model, G: int) -> list[Layout]:
    """The layouts to evaluate on G chips. 'all' is the envelope a dashboard's frontier is: for a dense model
    tensor parallelism; for an MoE the default (data-parallel attention, experts over all chips, adaptive),
    attention TP with experts over all chips ('tpep', TensorRT-LLM's and SGLang's `--tp G --ep G`), and pure
    TP — the best of them at each per-user speed."""
    out: list[Layout] = []
    for kind in kinds:
        for k in (("default", "tp", "tpep") if m.moe is not None else ("tp",)) if kind == "all" else (kind,):
            lay = _layout(k, m, G)
            if lay not in out:
                out.append(lay)
    return out


def _layout(kind, m: Model, G: int) -> Layout:
    if isinstance(kind, Layout):
        return kind
    if kind == "tp":
        return Layout(tp=G, ep=1)
    if kind in ("ep", "tpep"):
        if m.moe is None:
            raise InputError(f"--layout {kind} needs a mixture-of-experts model; {m.name} is dense")
        return Layout(tp=1, ep=G) if kind == "ep" else Layout(tp=G, ep=G)
    if kind == "default":
        return default_layout(m, G)
    raise InputError(f"--layout {kind!r} is not one of {', '.join(LAYOUTS)}")


def _name(lay: Layout) -> str:
    """tp8, tp8·ep8, tp1·ep8; 'dep8' for the adaptive default (data-parallel attention, idle chips join as TP)."""
    if lay.adaptive and lay.tp == 1 and lay.ep > 1:
        return f"dep{lay.ep}"
    return f"tp{lay.tp}" + (f"·ep{lay.ep}" if lay.ep > 1 else "")


@dataclass
class Frontier:
    """Every evaluated point, the Pareto frontier among them, and the answer at a per-user speed."""

    model: Model
    system: System
    isl: float
    osl: float
    policy: str
    points: list[dict]
    frontier: list[int]
    at: dict | None = None
    method: str = "closed form (sim/fastpath.py)"
    notes: list[str] = field(default_factory=list)
    engine: str = "default"
    interval_groups: dict | None = None  # the residual groups of the points' 80 % intervals

    def to_dict(self, all_points: bool = False) -> dict:
        out = {"model": self.model.name, "system": self.system.name, "isl": self.isl, "osl": self.osl,
               "policy": self.policy, "engine": self.engine, "method": self.method, "evaluated": len(self.points),
               "points": [self.points[i] for i in self.frontier]}
        if all_points:
            out["all_points"] = self.points
        if self.interval_groups:
            out["interval_groups"] = self.interval_groups
        if self.at is not None:
            out["at"] = self.at
        if self.notes:
            out["notes"] = self.notes
        return out


def frontier(m: Model, system: System, *, isl: float, osl: float, chips=None, layouts=("default",),
             concurrencies=None, at_user_speed: float | None = None, at_ttft: float | None = None,
             policy: str = "continuous", spec: Speculation | None = None, max_batch: float | None = None,
             prefill_chips: int | None = None, decode_chips: int | None = None, confirm: bool = True,
             requests: int | None = None, precision: str | None = None, kv_dtype: str | None = None,
             basis: str = "prior", priors: Priors | None = None, seed: int = 0, engine: str = "default") -> Frontier:
    """Tokens/s per chip against tokens/s per user over concurrency, chip counts and layouts.

    `layouts` holds names ('all': the best of the layouts that suit the model; 'default', 'tp', 'ep', 'tpep':
    all G chips on that axis) or `Layout` objects. `engine` (catalog/engines) sets the KV pool rule, the batch cap,
    the token budget and, for trtllm/sglang/vllm, the kernels measured on that engine.
    """
    if not osl >= 2 or not isl >= 1:
        raise InputError(f"the frontier needs --isl ≥ 1 and --osl ≥ 2 tokens (per-user speed is 1 / TPOT; got {isl}, "
                         f"{osl})")
    for x, name in ((at_user_speed, "--at-user-speed"), (at_ttft, "--at-ttft")):
        if x is not None and (not np.isfinite(x) or x <= 0):
            raise InputError(f"{name} must be a positive number (got {x})")
    swept = chips is None or len(np.atleast_1d(chips)) == 0
    chips = replica_sizes(system, policy) if swept else [int(g) for g in np.atleast_1d(chips)]
    kw = dict(spec=spec, precision=precision, kv_dtype=kv_dtype, basis=basis, priors=priors, max_batch=max_batch,
              engine=engine)
    if policy == "disagg":
        kw.update(prefill_chips=prefill_chips, decode_chips=decode_chips)
    points: list[dict] = []
    notes: list[str] = []
    too_small: list[tuple[int, str]] = []
    for G in chips:
        for lay in _layouts(dict.fromkeys(layouts or ("default",)), m, G):
            try:  # a replica too small for the weights is left out, whether the concurrencies are given or not
                C = _concurrencies(m, system, G, isl, osl, concurrencies, lay, kw, policy)
                if policy in FAST_POLICIES:
                    ss = steady_state(m, system, G=G, concurrency=C, isl=isl, osl=osl, policy=policy, layout=lay, **kw)
                    cols = {k: np.broadcast_to(ss[k], C.shape) for k in _KEYS}
                    chips_total = ss.chips
                else:
                    cols, chips_total = _simulated(m, system, G, C, isl, osl, policy, lay, requests, seed, kw)
            except InputError as e:
                if len(chips) == 1:
                    raise
                if swept:
                    too_small.append((G, str(e)))
                    break
                notes.append(f"{G} chips {_name(lay)} left out: {e}")
                continue
            for i, c in enumerate(C):
                points.append({"concurrency": int(c), "chips": int(chips_total), "layout": _name(lay),
                               **{k: float(cols[k][i]) for k in _KEYS}})
    if too_small:
        notes.append(f"replicas of {', '.join(str(g) for g, _ in too_small)} chips left out "
                     f"({too_small[0][0]} chips: {too_small[0][1]})")
    user = [p["tokens_per_s_per_user"] for p in points]
    chip = [p["tokens_per_s_per_chip"] for p in points]
    if not points:
        raise InputError("; ".join(notes))
    fr = Frontier(m, system, float(isl), float(osl), policy, points, [int(i) for i in pareto(user, chip)],
                  method="closed form (sim/fastpath.py)" if policy in FAST_POLICIES else "simulator", notes=notes,
                  engine=engine)
    pri = (priors or load_priors(system.chip.priors)).for_engine(kernel_engine(engine))
    if basis == "prior" and pri.formats is None:  # every point's 80 % intervals (simulate's), the groups named once
        for p in points:
            iv = mean_intervals(p, pri, precision or m.weight_dtype)
            fr.interval_groups = iv.pop("interval_groups", None) or fr.interval_groups
            p.update(iv)
    if at_user_speed is not None or at_ttft is not None:
        fr.at = _answer(fr, at_user_speed, at_ttft)
        if fr.at["met"] and fr.interval_groups:
            fr.at["interval_groups"] = fr.interval_groups
        if confirm and fr.at.get("met") and policy in FAST_POLICIES:
            best = fr.at
            n = int(requests or min(20_000, max(400, 12 * best["concurrency"])))
            r = simulate(m, system, G=_replica(best, policy, chips), concurrency=best["concurrency"], requests=n,
                         isl=isl, osl=osl, policy=policy, layout=point_layout(best), seed=seed,
                         **{k: v for k, v in kw.items() if k != "max_batch" or v is not None})
            best["simulated"] = {"requests": n, **{k: (r[k]["mean"] if isinstance(r[k], dict) else r[k])
                                                   for k in ("tokens_per_s_per_chip", "output_tokens_per_s",
                                                             "ttft_s", "tpot_s")},
                                 "tokens_per_s_per_user": r["tokens_per_s_per_user"]["mean"]}
    return fr


def replica_sizes(system: System, policy: str) -> list[int]:
    """Chips per replica a frontier compares when none are given: every power of two up to the scale-up domain and
    the domain itself (8-GPU HGX: 1, 2, 4, 8; NVL72: 1 … 64 and 72). The fastest replica per user is the widest, the
    cheapest per chip often a narrower one copied across the domain, so the frontier is the envelope of both. The
    simulated policy (chunked) runs every point through the simulator, and a disaggregated deployment sizes its
    pools with --prefill-chips / --decode-chips: one replica, the domain."""
    D = int(system.domain_chips)
    if policy not in FAST_POLICIES or policy == "disagg":
        return [D]
    return sorted({2 ** i for i in range(D.bit_length()) if 2 ** i <= D} | {D})


def _replica(best: dict, policy: str, chips: list[int]) -> int:
    return chips[0] if policy == "disagg" else best["chips"]


def point_layout(point: dict) -> Layout:
    """The split a frontier point was evaluated at, from its name (frontier._name: 'dep8', 'tp8', 'tp2·ep8')."""
    name = point["layout"]
    if name.startswith("dep"):
        return Layout(tp=1, ep=int(name[3:]), adaptive=True)
    tp = int(name.split("·")[0][2:])
    ep = int(name.split("ep")[1]) if "ep" in name else 1
    return Layout(tp=tp, ep=ep)


def _concurrencies(m, system, G, isl, osl, given, lay, kw, policy) -> np.ndarray:
    if given is not None:
        C = np.unique(np.asarray(given, dtype=float))
        if C.size == 0 or np.any(C < 1):
            raise InputError("--concurrency values must be ≥ 1")
        return C
    # the KV cap is memory's, the same whatever schedules the steps: a simulated policy reads it off continuous
    one = steady_state(m, system, G=G, concurrency=1, isl=isl, osl=osl,
                       policy=policy if policy in FAST_POLICIES else "continuous", layout=lay, **kw)
    cap = float(one["batch_cap"])
    n = 40 if policy in FAST_POLICIES else 10
    return np.unique(np.round(np.geomspace(1, max(cap, 1.0), n)))


def _simulated(m, system, G, C, isl, osl, policy, lay, requests, seed, kw):
    cols: dict = {k: np.zeros(len(C)) for k in _KEYS}
    chips_total = G
    sim_kw = {k: v for k, v in kw.items() if v is not None}
    for i, c in enumerate(C):
        n = int(requests or min(4000, max(200, 8 * int(c))))
        r = simulate(m, system, G=G, concurrency=int(c), requests=n, isl=isl, osl=osl, policy=policy, layout=lay,
                     seed=seed, **sim_kw)
        chips_total = r.settings["chips"]
        for k in _KEYS:
            v = r[k] if k != "batch" else r["mean_batch"]
            cols[k][i] = v["mean"] if isinstance(v, dict) else v
    return cols, chips_total


def _answer(fr: Frontier, speed: float | None, ttft: float | None) -> dict:
    pts = fr.points
    ok = [i for i, p in enumerate(pts) if (speed is None or p["tokens_per_s_per_user"] >= speed)
          and (ttft is None or p["ttft_s"] <= ttft)]
    want = {k: v for k, v in (("user_speed", speed), ("ttft_s", ttft)) if v is not None}
    if not ok:
        fastest = max(pts, key=lambda p: p["tokens_per_s_per_user"])
        return {"met": False, "asked": want, "fastest": fastest}
    best = max(ok, key=lambda i: (pts[i]["tokens_per_s_per_chip"], -pts[i]["concurrency"]))
    return {"met": True, "asked": want, **pts[best]}
