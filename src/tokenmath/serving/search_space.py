"""The configurations a deployment search enumerates, and the memory check that prunes them.

For one target (model, system, precision) a `Group` is one replica layout — the policy, the chips G,
the tensor / expert / pipeline split (tp, ep, pp), for disagg the prefill and decode pools — and it
is evaluated over a grid of operating points (concurrency U × the engine's token budget of a prefill
step, `max_num_tokens`: how many prompts one prefill step batches) by ONE call of the closed-form
steady state (sim/fastpath.py). dp replicas of a group fill the deployment: dp = floor(max_chips / G).

Memory, per chip (placement.py's accounting, with the checkpoint's own bytes per parameter b̄):

    b̄        = W_all / (N_dense + N_routed)
    W_chip   = N_dense · b̄ / (tp · pp) + N_routed · b̄ / (tp · ep · pp)         (placement.weights_per_chip)
    B_stage  = floor(f_kv · (C − W_chip) · ep · tp_kv / kv_held)               (placement.kv_per_chip, inverted;
                                                                                kv_held at the engine's S_held,
                                                                                sim/fastpath.held_kv_bytes)
    B_cap    = pp · min(B_stage, B_max)                                         sequences in flight per replica

(f_kv: the engine's KV share of the memory left after the weights; tp_kv = min(tp, K), 1 for MLA). A
layout with W_chip ≥ C, or room for less than one request, is pruned and counted, not evaluated.

A pipeline of pp stages of n_stage = tp · ep chips (placement.py: pp micro-batches in flight, one
finishing per stage time) serving U sequences is pp stage-equivalents serving U / pp each: its
tokens/s per chip, per-user speed and TTFT are those of one replica of n_stage chips at U / pp, with
the pipeline's memory (pp times each chip's) and a batch cap of B_stage. So a pp > 1 layout is
evaluated as that replica (`pipeline_system`); the pipeline's hops (microseconds, placement.py) and
each stage's own fixed step cost are left out.

Disagg groups use each pool's default layout (roofline.default_layout: experts over every chip for
MoE, TP over every chip for dense), pp = 1, and a prefill pool of G_p = r · G_d chips, r in RATIOS.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..core import arch
from ..core.derive import formula, value_of
from ..core.errors import InputError
from ..core.records import Model, Priors, System
from ..core.roofline import Layout, default_layout
from .placement import _kv_split, candidate_splits, split_params, weights_per_chip
from .sim.fastpath import held_kv_bytes
from .speculative import Speculation

__all__ = ["Target", "Group", "Space", "enumerate_groups", "stage_batch_cap", "concurrency_grid", "budget_grid",
           "pipeline_system", "RATIOS", "POLICIES"]

POLICIES = ("continuous", "disagg", "cadence")  # the policies with a closed form (sim/fastpath.py)
RATIOS = (0.25, 0.5, 1.0, 2.0)  # prefill : decode chips tried for disagg


@formula("B_stage = floor(f_kv · (C − W_chip) · ep · tp_kv / kv_held)", unit="seq")
def stage_batch_cap(f_kv, C, W_chip, ep, tp_kv, kv_held):
    return np.floor(f_kv * np.maximum(C - W_chip, 0.0) * ep * tp_kv / kv_held)


@dataclass(frozen=True)
class Target:
    """One model on one system at one precision: the records (with --set applied) a worker evaluates."""

    model: Model
    system: System
    priors: Priors
    precision: str
    kv_dtype: str
    spec: Speculation | None = None
    engine: str = "default"  # catalog/engines: KV pool, batch cap, admission, and the kernels measured on it

    @property
    def label(self) -> str:
        return f"{self.model.name} on {self.system.name} ({self.precision})"


@dataclass(frozen=True)
class Group:
    """One replica layout of a target, evaluated over its operating grid."""

    policy: str
    chips: int  # the replica's chips (disagg: both pools)
    tp: int
    ep: int
    pp: int
    replicas: int  # dp: replicas filling the deployment
    weights_per_chip_bytes: float
    batch_cap: int  # sequences in flight per replica (KV and engine cap)
    concurrency: tuple[int, ...]  # per replica
    budgets: tuple[float, ...]  # max_num_tokens per prefill step (cadence: one, unused)
    prefill_chips: int = 0
    decode_chips: int = 0

    @property
    def stage_chips(self) -> int:
        return self.tp * self.ep

    @property
    def size(self) -> int:
        return len(self.concurrency) * len(self.budgets)

    @property
    def layout(self) -> Layout:
        return Layout(tp=self.tp, ep=self.ep)

    @property
    def name(self) -> str:
        if self.policy == "disagg":
            return f"disagg {self.prefill_chips}P+{self.decode_chips}D"
        return f"{self.policy} tp{self.tp}" + (f"·ep{self.ep}" if self.ep > 1 else "") + \
            (f"·pp{self.pp}" if self.pp > 1 else "")


@dataclass
class Space:
    """A target's groups, and what was pruned (layouts whose weights and one request do not fit)."""

    target: Target
    groups: list[Group]
    pruned: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def size(self) -> int:
        return sum(g.size for g in self.groups)


def concurrency_grid(cap: float) -> tuple[int, ...]:
    """Every concurrency from 1 to 16, then steps of about 12 % up to the cap (the cap included)."""
    cap = int(max(1, cap))
    exact = np.arange(1, min(cap, 16) + 1)
    geo = np.round(np.geomspace(16, cap, max(2, int(np.ceil(np.log(cap / 16) / np.log(1.12))) + 1))) if cap > 16 \
        else np.array([], dtype=float)
    return tuple(int(x) for x in np.unique(np.concatenate([exact, geo, [cap]])))


def budget_grid(budgets, isl: float) -> tuple[float, ...]:
    """The token budgets that batch a different number of prompts per prefill step, max(1, floor(b / I))."""
    out, seen = [], set()
    for b in sorted(float(x) for x in budgets):
        n = max(1, int(b // isl))
        if n not in seen:
            seen.add(n)
            out.append(b)
    return tuple(out)


def pipeline_system(system: System, pp: int) -> System:
    """The stage-equivalent of a pp-deep pipeline: the same system with pp times each chip's memory."""
    if pp == 1:
        return system
    chip = system.chip.model_copy(update={"hbm_capacity_bytes": system.chip.hbm_capacity_bytes * pp})
    return system.model_copy(update={"chip": chip})


def _memory(t: Target, isl: float, osl: float, r: float):
    m, spec = t.model, t.spec
    W_all = float(value_of(arch.model_weight_bytes(m, t.precision))) + \
        (spec.extra_weight_bytes(m, t.precision) if spec else 0.0)
    kv_held = float(held_kv_bytes(m, isl, osl, r, t.kv_dtype, spec))
    N_dense, N_routed = split_params(m)
    return W_all, kv_held, N_dense, N_routed, W_all / (N_dense + N_routed)


def enumerate_groups(t: Target, *, isl: float, osl: float, engine: dict, policies=("continuous", "disagg"),
                     max_chips: int | None = None, budgets=(2048, 8192, 32768)) -> Space:
    """Every layout of `t` over at most max_chips chips (default: one scale-up domain) that fits, each with its grid."""
    m, s = t.model, t.system
    dom = s.domain_chips
    max_chips = dom if max_chips is None else int(max_chips)
    if max_chips > dom and not s.scaleout_bw:
        raise InputError(f"{s.name} has no scale-out network in the catalog: --max-chips at most {dom}")
    W_all, kv_held, N_dense, N_routed, b_bar = _memory(t, isl, osl, float(engine["kv_output_reserve"]))
    C, f_kv, B_max = s.chip.hbm_capacity_bytes, float(engine["kv_memory_fraction"]), float(engine["max_batch"])
    budgets_used = budget_grid(budgets, isl)
    groups: list[Group] = []
    space = Space(t, groups)

    def cap_of(tp, ep, pp):
        W_chip = weights_per_chip(N_dense, N_routed, b_bar, tp, ep, pp)
        B = stage_batch_cap(f_kv, C, W_chip, ep, _kv_split(m, np.asarray(tp)), kv_held)
        return float(W_chip), int(min(float(B), B_max))

    closed = [p for p in policies if p != "disagg"]
    if closed:
        T, E, P = candidate_splits(m, s, max_chips)
        for tp, ep, pp in sorted(zip(T.tolist(), E.tolist(), P.tolist()), key=lambda x: (x[0] * x[1] * x[2], x)):
            W_chip, B_stage = cap_of(tp, ep, pp)
            if B_stage < 1:
                space.pruned += len(closed)
                continue
            G = tp * ep * pp
            for pol in closed:
                groups.append(Group(pol, G, tp, ep, pp, max_chips // G, W_chip, pp * B_stage,
                                    concurrency_grid(B_stage), budgets_used if pol == "continuous" else (0.0,)))
    if "disagg" in policies:
        ladder = sorted({int(x) for x in 2 ** np.arange(0, int(np.log2(max_chips)) + 1)} | {dom, max_chips})
        for G_d in (g for g in ladder if g <= max_chips):
            lay = default_layout(m, G_d)
            W_chip, B_d = cap_of(lay.tp, lay.ep, 1)
            for r in RATIOS:
                G_p = int(round(r * G_d))
                if G_p < 1 or G_p + G_d > max_chips or (r != 1.0 and G_p == G_d):
                    continue
                lay_p = default_layout(m, G_p)
                W_p, B_p = cap_of(lay_p.tp, lay_p.ep, 1)
                if B_d < 1 or B_p < 1:
                    space.pruned += 1
                    continue
                G = G_p + G_d
                groups.append(Group("disagg", G, lay.tp, lay.ep, 1, max_chips // G, W_chip, B_d,
                                    concurrency_grid(B_d), budgets_used, prefill_chips=G_p, decode_chips=G_d))
    return space
