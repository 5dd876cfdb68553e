"""Helpers the claim modules share: the reference case, B*, spec-basis steps and two small solvers.

Formulas owned here (only those no analysis module owns; each written once):

    mfu     = t_math / t_step                 fraction of peak FLOP/s a step uses
    ratio   = a / b                           a named ratio of two quantities
"""

from __future__ import annotations

import numpy as np

from ..core import arch
from ..core.roofline import drain_time  # noqa: F401  (re-exported: the one drain-time formula)
from ..core.derive import Q, formula, given, value_of
from ..core.records import Model, System
from ..core.roofline import hardware_ratio, optimal_batch, step
from .claim import NotComputable
from .context import LectureContext

__all__ = ["Ref", "ref", "bstar", "spec_step", "solve_increasing", "mfu", "ratio", "chip_W",
           "chip_F", "model_or_skip", "said_q"]


@formula("mfu = t_math / t_step", unit="%")
def mfu(t_math, t_step):
    return t_math / t_step


@formula("ratio = a / b", unit="")
def ratio(a, b):
    return a / b


class Ref:
    """The lecture's running example: DeepSeek-V3 in FP8 on 64 GPUs of a GB200 NVL72 rack."""

    def __init__(self, ctx: LectureContext):
        r = ctx.lecture["reference"]
        src = ctx.lecture["sources"]
        self.model: Model = ctx.model(r["model"])
        self.system: System = ctx.system(r["system"])
        self.G: int = int(r["G"])
        self.precision: str = r["precision"]
        self.G_q = given("G", self.G, "chips", f"lecture ({src.get('reference.G', '')})")


def ref(ctx: LectureContext) -> Ref:
    return Ref(ctx)


def chip_F(system: System, precision: str) -> Q:
    c = system.chip
    return given("F", c.peak(precision), "FLOP/s", c.source_of(f"peak_flop_per_s.{c.peak_precision(precision)}"))


def chip_W(system: System) -> Q:
    c = system.chip
    return given("W", c.hbm_bandwidth_bytes_per_s, "B/s", c.source_of("hbm_bandwidth_bytes_per_s"))


def bstar(m: Model, system: System, precision: str) -> Q:
    """B* = R·rho at the precision the matmuls run at, from the catalog."""
    R = hardware_ratio(chip_F(system, precision), chip_W(system),
                       given("b_w", arch.bytes_per(precision), "B", f"{precision} weights"))
    return optimal_batch(R, arch.param_counts(m, explain=True).rho)


def spec_step(m: Model, system: System, G: int, B, S, precision: str, explain: bool = False, phase="decode"):
    """A decode step on peaks only (the lecture's roofline: no efficiency factors, no overhead)."""
    return step(m, system, G=G, B=B, S=S, phase=phase, precision=precision, basis="spec", explain=explain)


def solve_increasing(f, lo: float, hi: float, iters: int = 80) -> float:
    """x in [lo, hi] where the increasing function f crosses 0 (geometric bisection); inf if never."""
    flo, fhi = f(lo), f(hi)
    if flo >= 0:
        return lo
    if fhi < 0:
        return float("inf")
    for _ in range(iters):
        mid = float(np.sqrt(lo * hi))
        if f(mid) < 0:
            lo = mid
        else:
            hi = mid
    return float(np.sqrt(lo * hi))


def model_or_skip(ctx: LectureContext, name: str) -> Model:
    """A catalog model, or NotComputable naming the missing entry."""
    from ..core.load import CatalogError

    try:
        return ctx.model(name)
    except CatalogError:
        raise NotComputable(f"model {name!r} is not in the catalog yet") from None


def said_q(ctx: LectureContext, claim_id: str, key: str, sym: str, unit: str = "") -> Q:
    """One of the lecture's own inputs as a given, sourced to the lecture."""
    return given(sym, ctx.said_input(claim_id, key), unit, ctx.said_source(claim_id, key))


def v(x) -> float:
    return float(value_of(x))
