"""The pipeline bubble and the search for a tp/cp/pp/dp/ep split of G chips that fits and wastes least.

Pipeline bubble (GPipe / 1F1B; v interleaved virtual stages, Narayanan et al. 2021 arXiv 2104.04473):
    bubble = (pp − 1) / (v · M + pp − 1)
The MFU prior already contains its reference run's bubble, so the bubble is reported, not applied.

Split search: tp over the divisors of the scale-up domain that divide the heads, cp over the divisors
of G/tp for which s splits into 2·cp equal chunks (Llama 3's load-balanced causal split), pp over the
divisors of G/(tp·cp) up to L, dp = G/(tp·cp·pp), ep over the divisors of dp that divide the routed
experts (MoE), ZeRO stage 1–3. Context parallelism (Llama 3, arXiv 2407.21783 §3.3.2) gives each of cp
ranks s_r = s/cp of every sequence's tokens: the activations per chip fall by cp (training.memory), a
step's global_seqs sequences spread over dp (not dp·cp) ranks, so M = global_seqs/dp, and each layer
gathers the sequence's keys and values. Among the splits that fit in HBM, the one with the least bubble +
exposed communication (ring collectives at link bandwidth × eta, latencies ignored; used for ranking only;
the per-token traffic of tp, pp and ep is over the s_r tokens a chip holds):
    t_tp = 4 · M · L_stage · 2·(tp − 1)/tp · s·b·D·b_act / bw     2 all-reduces forward, 2 backward per layer
    t_pp = 2 · M · s·b·D·b_act · (pp − 1) / (pp · tp · bw)        activations forward, gradients back
    t_dp = c_zero · 2·(dp − 1)/dp · N_chip · b_g / bw             c_zero = 1.5 for ZeRO-3 (ZeRO §7)
    t_ep = 4 · M · L_moe_stage · s·b/tp · k · D · b_act · (1 − 1/ep) / bw   dispatch + combine, fwd + bwd
    V_cp = (cp − 1)/cp · 2 · s · b · K_tp · H · b_act               bytes a rank receives per layer, forward:
                                                                  the all-gather of the sequence's K and V
                                                                  (ring attention moves the same), K_tp =
                                                                  K / min(tp, K) key-value heads on each rank
    t_cp = 2 · M · L_stage · V_cp / bw                            forward gather + backward reduce-scatter of
                                                                  dK, dV (the gathered K, V kept from forward)
    score = bubble + (t_tp + t_pp + t_dp + t_ep + t_cp) / t_compute
The cp group spans tp·cp chips (tp innermost): the scale-up link where that fits in the domain, else the
scale-out one. t_cp is not overlapped with attention (an assumption: Llama 3's all-gather CP exposes it).
No compute–communication overlap is assumed, so the search under-rates expert parallelism that
overlapping schedules hide (DeepSeek-V3 ran EP64 with DualPipe; here EP=1 often scores better):
pass --ep/--cp/--pp/--tp to price a given layout. The search has no latency or small-GEMM cost, which
would let it split even 8K sequences over cp ranks where a bubble dominates (a deeper micro-batch stream), so
it keeps each cp rank at least CP_MIN_TOKENS of a sequence: Llama 3's layouts, CP1 at 8K and CP16 at 128K
(8,192 tokens a rank; arXiv 2407.21783 §3.3.2, Table 4). --cp prices any other.

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

# the fewest tokens of a sequence the search leaves on a context-parallel rank: Llama 3's long-context stage split
# 131,072 tokens over CP16 (8,192 a rank) and its 8K stage ran CP1 (arXiv 2407.21783 §3.3.2, Table 4)
CP_MIN_TOKENS = 8192

__all__ = ["Split", "search_splits", "CP_MIN_TOKENS", "pipeline_bubble", "hsdp_comm_time", "hpz_comm_time", "cp_bytes_layer",
           "kv_heads_per_rank", "ZERO_STAGES", "MFU_PEAK"]

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


@formula("V_cp = (cp − 1) / cp · 2 · s · b · K_tp · H · b_act", unit="B")
def cp_bytes_layer(cp, s, b, K_tp, H, b_act):
    return (cp - 1) / cp * 2 * s * b * K_tp * H * b_act


@formula("t_cp = 2 · M · L_stage · V_cp / bw", unit="s")
def cp_comm_time(M, L_stage, V_cp, bw):
    return 2 * M * L_stage * V_cp / bw


@formula("t_compute = flop_step · hfu_ratio / (G · F · mfu)", unit="s")
def compute_time(flop_step, hfu_ratio, G, F, mfu):
    return flop_step * hfu_ratio / (G * F * mfu)


@formula("score = bubble + (t_tp + t_pp + t_dp + t_ep + t_cp) / t_compute", unit="")
def split_score(bubble, t_tp, t_pp, t_dp, t_ep, t_cp, t_compute):
    return bubble + (t_tp + t_pp + t_dp + t_ep + t_cp) / t_compute


@dataclass(frozen=True)
class Split:
    """One way to lay G chips out: tp·cp·pp·dp = G, ep inside dp; its memory, bubble and ranking score."""

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
    cp: int = 1  # context-parallel ways: ranks sharing each sequence's tokens


def link_bandwidths(system: System, pri, n: int | None = None) -> tuple[float, float]:
    """(scale-up, scale-out) bytes/s per chip a split's traffic moves at: each link × its efficiency prior (the
    scale-up link where a system has no scale-out one). Given n, the chips a ring spans inside the domain: on a
    torus, the links of their block's axes (System.ring_bw)."""
    up = float(system.ring_bw(min(n, system.domain_chips))) if n and system.torus_dims else system.scaleup_bw
    return (up * pri.eta_scaleup,
            (system.scaleout_bw or system.scaleup_bw) * pri.eta_scaleout)


def zero_factor(zero: int) -> float:
    """c_zero of dp_comm_time: ZeRO-3 gathers the parameters twice besides reducing the gradients (3 passes over
    N_chip where a gradient all-reduce makes 2)."""
    return 1.5 if zero >= 3 else 1.0


def kv_heads_per_rank(K: int, tp: int) -> float:
    """K_tp of cp_bytes_layer: the key-value heads a tensor-parallel rank attends with (tp > K replicates them)."""
    return K / min(tp, K)


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def search_splits(m: Model, system: System, *, G: int, S: int, global_seqs: float, flop_step: float, mfu: float,
                  hfu: float = 1.0, recompute: str = "selective", reversible: bool = False, tp: int | None = None,
                  pp: int | None = None, ep: int | None = None, zero: int | None = None,
                  microbatches: int | None = None, interleave: int = 1, cp: int | None = None) -> list[Split]:
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
        cps = [cp] if cp else [d for d in _divisors(G // t) if d == 1 or (S % (2 * d) == 0 and S / d >= CP_MIN_TOKENS)]
        for c in cps:
            if (G // t) % c:
                continue
            s_r = S / c  # tokens of each sequence on a chip
            pps = [pp] if pp else [d for d in _divisors(G // (t * c)) if d <= sh.L]
            for p in pps:
                if (G // (t * c)) % p:
                    continue
                d = G // (t * c * p)
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
                    t_tp = tp_comm_time(M, L_stage, t, s_r, b, sh.D, ACT_BYTES, up) if t > 1 else 0.0
                    t_pp = pp_comm_time(M, s_r, b, sh.D, ACT_BYTES, p, t, out if G > dom else up) if p > 1 else 0.0
                    t_ep = ep_comm_time(M, L_moe_stage, s_r, b, t, sh.k, sh.D, ACT_BYTES, e,
                                        up if t * e <= dom else out) if sh.E and e > 1 else 0.0
                    t_cp = cp_comm_time(M, L_stage, cp_bytes_layer(c, S, b, kv_heads_per_rank(sh.K, t), sh.H,
                                                                   ACT_BYTES),
                                        up if t * c <= dom else out) if c > 1 else 0.0
                    n_chip = dense_params_per_chip(sh.N_dense, t, p) + expert_params_per_chip(sh.N_experts, t, p, e)
                    for z in zeros:
                        t_dp = dp_comm_time(zero_factor(z), d, n_chip, b_w, up if t * c * d <= dom else out) \
                            if d > 1 else 0.0
                        mem, _ = _memory(sh, S, b, t, p, d, e, z, M, recompute, reversible, b_w, c)
                        comm = (t_tp + t_pp + t_dp + t_ep + t_cp) / t_compute
                        found.append(Split(t, p, d, e, z, M, b, float(mem), bool(mem <= cap), float(bub),
                                           float(comm),
                                           float(split_score(bub, t_tp, t_pp, t_dp, t_ep, t_cp, t_compute)),
                                           {"tp": t_tp, "pp": t_pp, "dp": t_dp, "ep": t_ep, "cp": t_cp,
                                            "compute": t_compute}, c))
    found.sort(key=lambda x: (not x.fits, x.score if x.fits else x.memory_bytes, x.zero, x.pp, x.tp, x.cp))
    return found
