"""The pipeline bubble and the search for a tp/pp/dp/ep split of G chips that fits and wastes least.

Pipeline bubble (GPipe / 1F1B; v interleaved virtual stages, Narayanan et al. 2021 arXiv 2104.04473):
    bubble = (pp − 1) / (v · M + pp − 1)
The MFU prior already contains its reference run's bubble, so the bubble is reported, not applied.

Split search: tp over the divisors of the scale-up domain that divide the heads, pp over the divisors
of G/tp up to L, dp = G/(tp·pp), ep over the divisors of dp that divide the routed experts (MoE), ZeRO
stage 1–3. Among the splits that fit in HBM, the one with the least bubble + exposed communication
(ring collectives at link bandwidth × eta, latencies ignored; used for ranking only):
    t_tp = 4 · M · L_stage · 2·(tp − 1)/tp · s·b·D·b_act / bw     2 all-reduces forward, 2 backward per layer
    t_pp = 2 · M · s·b·D·b_act · (pp − 1) / (pp · tp · bw)        activations forward, gradients back
    t_dp = c_zero · 2·(dp − 1)/dp · N_chip · b_g / bw             c_zero = 1.5 for ZeRO-3 (ZeRO §7)
    t_ep = 4 · M · L_moe_stage · s·b/tp · k · D · b_act · (1 − 1/ep) / bw   dispatch + combine, fwd + bwd
    score = bubble + (t_tp + t_pp + t_dp + t_ep) / t_compute
No compute–communication overlap is assumed, so the search under-rates expert parallelism that
overlapping schedules hide (DeepSeek-V3 ran EP64 with DualPipe; here EP=1 often scores better):
pass --ep/--pp/--tp to price a given layout.

Hybrid sharding (read from training rows, not searched). FSDP's HYBRID_SHARD / HSDP (Zhao et al. 2023,
arXiv 2304.11277 §3.2) shards the parameters over a shard group of s data-parallel ranks (usually one node)
and replicates them over the r = dp / s groups: ZeRO-3's gathers and reduce-scatter stay inside the group
(c_zero = 1.5 over s ranks), and each rank all-reduces the 1/s of the gradients it holds with its r − 1
counterparts (a ring: 2·(r − 1)/r of them). The two tiers run on different links (the shard group's on the
scale-up link, the replicas' on each chip's NIC), so the slower one bounds the step:
    t_hsdp = max(c_zero · 2·(s − 1)/s · N_chip · b_g / bw_shard,  2·(r − 1)/r · N_chip/s · b_g / bw_replica)
ZeRO++'s hpZ (Wang et al. 2023, arXiv 2306.10209 §3.2) is not that: it keeps a secondary copy of the weights
sharded inside the node for the backward gather only, while the forward gather and the gradient reduce-scatter
still span all dp ranks:
    t_hpz  = max((s − 1)/s · N_chip · b_g / bw_shard,  2·(dp − 1)/dp · N_chip · b_g / bw_dp)
(qwZ's and qgZ's quantised traffic, ZeRO++'s other two parts, are not read.)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..core import arch
from ..core.derive import formula
from ..core.errors import InputError
from ..core.load import load_priors
from ..core.records import Model, System
from .memory import ACT_BYTES, _memory, _shape, dense_params_per_chip, expert_params_per_chip

__all__ = ["Split", "search_splits", "pipeline_bubble", "hsdp_comm_time", "hpz_comm_time", "ZERO_STAGES", "MFU_PEAK"]

ZERO_STAGES = (0, 1, 2, 3)
MFU_PEAK = "bf16"  # MFU and split ranking are against the dense BF16 peak


@formula("bubble = (pp − 1) / (v · M + pp − 1)", unit="%")
def pipeline_bubble(pp, v, M):
    return (pp - 1) / (v * M + pp - 1)


# ---- communication per step (for ranking splits) -----------------------------------------------

@formula("t_tp = 4 · M · L_stage · 2 · (tp − 1) / tp · s · b · D · b_act / bw", unit="s")
def tp_comm_time(M, L_stage, tp, s, b, D, b_act, bw):
    return 4 * M * L_stage * 2 * (tp - 1) / tp * s * b * D * b_act / bw


@formula("t_pp = 2 · M · s · b · D · b_act · (pp − 1) / (pp · tp · bw)", unit="s")
def pp_comm_time(M, s, b, D, b_act, pp, tp, bw):
    return 2 * M * s * b * D * b_act * (pp - 1) / (pp * tp * bw)


@formula("t_dp = c_zero · 2 · (dp − 1) / dp · N_chip · b_g / bw", unit="s")
def dp_comm_time(c_zero, dp, N_chip, b_g, bw):
    return c_zero * 2 * (dp - 1) / dp * N_chip * b_g / bw


@formula("t_hsdp = max(c_zero · 2 · (s − 1) / s · N_chip · b_g / bw_shard, "
         "2 · (r − 1) / r · N_chip / s · b_g / bw_replica)", unit="s")
def hsdp_comm_time(c_zero, s, r, N_chip, b_g, bw_shard, bw_replica):
    return np.maximum(c_zero * 2 * (s - 1) / s * N_chip * b_g / bw_shard,
                      2 * (r - 1) / r * N_chip / s * b_g / bw_replica)


@formula("t_hpz = max((s − 1) / s · N_chip · b_g / bw_shard, 2 · (dp − 1) / dp · N_chip · b_g / bw_dp)",
         unit="s")
def hpz_comm_time(s, dp, N_chip, b_g, bw_shard, bw_dp):
    return np.maximum((s - 1) / s * N_chip * b_g / bw_shard, 2 * (dp - 1) / dp * N_chip * b_g / bw_dp)


@formula("t_ep = 4 · M · L_moe_stage · s · b / tp · k · D · b_act · (1 − 1 / ep) / bw", unit="s")
def ep_comm_time(M, L_moe_stage, s, b, tp, k, D, b_act, ep, bw):
    return 4 * M * L_moe_stage * s * b / tp * k * D * b_act * (1 - 1 / ep) / bw


@formula("t_compute = flop_step · hfu_ratio / (G · F · mfu)", unit="s")
def compute_time(flop_step, hfu_ratio, G, F, mfu):
    return flop_step * hfu_ratio / (G * F * mfu)


@formula("score = bubble + (t_tp + t_pp + t_dp + t_ep) / t_compute", unit="")
def split_score(bubble, t_tp, t_pp, t_dp, t_ep, t_compute):
    return bubble + (t_tp + t_pp + t_dp + t_ep) / t_compute


@dataclass(frozen=True)
class Split:
    """One way to lay G chips out: tp·pp·dp = G, ep inside dp; its memory, bubble and ranking score."""

    tp: int
    pp: int
    dp: int
    ep: int
    zero: int
    M: int  # micro-batches per step
    b: float  # sequences per micro-batch
    memory_bytes: float
    fits: bool
    bubble: float
    comm_fraction: float
    score: float
    comm_s: dict = field(default_factory=dict)


def link_bandwidths(system: System, pri) -> tuple[float, float]:
    """(scale-up, scale-out) bytes/s per chip a split's traffic moves at: each link × its efficiency prior (the
    scale-up link where a system has no scale-out one)."""
    return (system.scaleup_bw * pri.eta_scaleup,
            (system.scaleout_bw or system.scaleup_bw) * pri.eta_scaleout)


def zero_factor(zero: int) -> float:
    """c_zero of dp_comm_time: ZeRO-3 gathers the parameters twice besides reducing the gradients (3 passes over
    N_chip where a gradient all-reduce makes 2)."""
    return 1.5 if zero >= 3 else 1.0


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def search_splits(m: Model, system: System, *, G: int, S: int, global_seqs: float, flop_step: float, mfu: float,
                  hfu: float = 1.0, recompute: str = "selective", reversible: bool = False, tp: int | None = None,
                  pp: int | None = None, ep: int | None = None, zero: int | None = None,
                  microbatches: int | None = None, interleave: int = 1) -> list[Split]:
    """Every valid split of G chips, scored; fitting ones first, then by score (least bubble + comm)."""
    sh = _shape(m)
    pri = load_priors(system.chip.priors)
    dom = system.domain_chips
    up, out = link_bandwidths(system, pri)
    if G > 1 and not (up > 0 and out > 0):
        raise InputError(f"{system.name} has no link between chips in the catalog (a calibrated machine's profile): "
                         f"train on one chip (--chips 1) or on a system with links")
    cap = system.chip.hbm_capacity_bytes
    F = system.chip.peak(MFU_PEAK)
    b_w = arch.bytes_per("bf16")
    t_compute = compute_time(flop_step, hfu, G, F, mfu)
    tps = [tp] if tp else [d for d in _divisors(min(dom, G)) if sh.N % d == 0 and G % d == 0]
    zeros = [zero] if zero is not None else [1, 2, 3]
    found: list[Split] = []
    for t in tps:
        if G % t:
            continue
        pps = [pp] if pp else [d for d in _divisors(G // t) if d <= sh.L]
        for p in pps:
            if (G // t) % p:
                continue
            d = G // (t * p)
            if microbatches:
                M, b = microbatches, global_seqs / (d * microbatches)
            else:
                M, b = math.ceil(global_seqs / d), 1.0
            if b < 1 or M < 1 or global_seqs < d:
                continue
            eps = [ep] if ep else ([e for e in _divisors(d) if sh.E % e == 0] if sh.E else [1])
            for e in eps:
                if d % e or (sh.E and sh.E % e):
                    continue
                L_stage, L_moe_stage = math.ceil(sh.L / p), math.ceil(sh.L_moe / p)
                bub = pipeline_bubble(p, interleave, M)
                # one way of a split moves nothing (and a one-chip profile has no link to divide by)
                t_tp = tp_comm_time(M, L_stage, t, S, b, sh.D, ACT_BYTES, up) if t > 1 else 0.0
                t_pp = pp_comm_time(M, S, b, sh.D, ACT_BYTES, p, t, out if G > dom else up) if p > 1 else 0.0
                t_ep = ep_comm_time(M, L_moe_stage, S, b, t, sh.k, sh.D, ACT_BYTES, e, up if t * e <= dom else out) \
                    if sh.E and e > 1 else 0.0
                n_chip = dense_params_per_chip(sh.N_dense, t, p) + expert_params_per_chip(sh.N_experts, t, p, e)
                for z in zeros:
                    t_dp = dp_comm_time(zero_factor(z), d, n_chip, b_w, up if t * d <= dom else out) \
                        if d > 1 else 0.0
                    mem, _ = _memory(sh, S, b, t, p, d, e, z, M, recompute, reversible, b_w)
                    comm = (t_tp + t_pp + t_dp + t_ep) / t_compute
                    found.append(Split(t, p, d, e, z, M, b, float(mem), bool(mem <= cap), float(bub), float(comm),
                                       float(split_score(bub, t_tp, t_pp, t_dp, t_ep, t_compute)),
                                       {"tp": t_tp, "pp": t_pp, "dp": t_dp, "ep": t_ep, "compute": t_compute}))
    found.sort(key=lambda x: (not x.fits, x.score if x.fits else x.memory_bytes, x.zero, x.pp, x.tp))
    return found
