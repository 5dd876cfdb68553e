"""Training runs: FLOP, time and cost at a published MFU, memory per chip, the pipeline bubble, and a split.

Notation: N_active active parameters, D_tok training tokens (the D of "6ND"; D alone is d_model), s
sequence length, b sequences per micro-batch, D d_model, N query heads, L layers, G chips, F the
chip's dense BF16 peak, tp/pp/dp/ep tensor/pipeline/data/expert-parallel ways, M micro-batches per
step, v interleaved virtual stages.

FLOP (model FLOP: what MFU counts; PaLM arXiv 2204.02311 App. B; lecture ledger C2):
    flop_6nd  = 6 · N_active · D_tok                 forward 2, backward 4 per parameter per token
    flop_attn = 3 · attn_fwd · D_tok                 QK and AV at context s, causal; backward = 2 × forward
    flop      = flop_6nd + flop_attn
Time at a published run's MFU (catalog/training/*.yaml, each from a TRN-* row of
shared/validation/public_measurements.csv). What carries over from the reference run is its
hardware-FLOP utilisation mfu · r_prior, where r = hardware FLOP / model FLOP of a recompute policy:
    r_none = 1;  r_selective = 1 + attn_fwd / (6·N_active + 3·attn_fwd)  (attention core recomputed)
    r_full = r_reversible = 1 + (2·N_active + attn_fwd) / (6·N_active + 3·attn_fwd) = 4/3  (one more forward)
    t_train = flop · hfu_ratio / (G · F · mfu),  hfu_ratio = r / r_prior
    chip_hours = G · t_train / 3600;  cost = chip_hours · usd_per_chip_hour (catalog rental price)
MFU is always against the dense BF16 peak (DeepSeek-V3 trained in FP8 and reached ≈0.40 of it).

Memory per chip. Mixed-precision Adam holds, per parameter, BF16 weights (2 B) and gradients (2 B) and
12 B of optimizer state: an FP32 master copy and two FP32 moments (Rajbhandari et al. 2020, "ZeRO",
arXiv 1910.02054 §3.1: 2 + 2 + 12 = 16 B/param). ZeRO stage 1 shards the optimizer state over the
data-parallel ranks, stage 2 also the gradients, stage 3 also the weights:
    N_dense_chip = N_dense / (tp · pp);  N_exp_chip = N_experts / (tp · pp · ep)
    M_state = (N_dense_chip / z_dense + N_exp_chip / z_exp) · bytes     (z = dp, resp. dp/ep, when sharded)
Activations per layer, 2-byte values, with sequence parallelism (Korthikanti et al. 2022, "Reducing
Activation Recomputation in Large Transformer Models", arXiv 2205.05198 §4, Table 2):
    none       a = s·b·D·(34 + 5·N·s/D) / tp      (the 5·N·s/D term is the stored attention scores)
    selective  a = 34·s·b·D / tp                  (scores recomputed: what fused-attention kernels do)
    full       2·s·b·D / tp per layer (its input) + one layer's selective working set
    reversible 2 streams of 2·s·b·D / tp per stage + one working layer: O(1) layers instead of O(L)
               (RevNets, Gomez et al. 2017, arXiv 1707.04585; ledger X3, X4), at r = 4/3 (+33 % FLOP)
The 34 counts dropout masks (2·s·b·D) that models trained without dropout do not keep. With 1F1B the
first stage holds min(M, pp) micro-batches in flight, each with L_stage = ⌈L/pp⌉ layers.

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
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np

from . import arch
from .derive import Numbers, Q, formula, lift, nest, value_of
from .errors import InputError
from .load import CatalogError, load_chip, load_model, load_priors, load_system, load_training_priors
from .records import Chip, Model, System, TrainingPrior

__all__ = [
    "TrainReport", "Split", "train", "search_splits", "select_prior", "pipeline_bubble", "activation_bytes",
    "state_bytes", "recompute_ratio", "predict_training_row", "validate_training", "RECOMPUTE",
    "OPTIMIZER_BYTES_PER_PARAM",
]

RECOMPUTE = ("none", "selective", "full")
ZERO_STAGES = (0, 1, 2, 3)
# Mixed-precision Adam (ZeRO, arXiv 1910.02054 §3.1): FP32 master weights 4 B + momentum 4 B + variance 4 B.
OPTIMIZER_BYTES_PER_PARAM = 12.0
ADAM_SOURCE = "mixed-precision Adam: FP32 master 4 B + 2 FP32 moments 8 B (ZeRO, arXiv 1910.02054 §3.1)"
ACT_BYTES = 2.0  # BF16 activations and gradients on the wire
MFU_PEAK = "bf16"


# ---- FLOP, time, cost ----------------------------------------------------------------------------

@formula("flop_6nd = 6 · N_active · D_tok", unit="FLOP")
def flop_dense(N_active, D_tok):
    return 6 * N_active * D_tok


@formula("flop_attn = 3 · attn_fwd · D_tok", unit="FLOP")
def flop_attention(attn_fwd, D_tok):
    return 3 * attn_fwd * D_tok


@formula("flop = flop_6nd + flop_attn", unit="FLOP")
def flop_total(flop_6nd, flop_attn):
    return flop_6nd + flop_attn


@formula("r_selective = 1 + attn_fwd / (6·N_active + 3·attn_fwd)", unit="")
def ratio_selective(attn_fwd, N_active):
    return 1 + attn_fwd / (6 * N_active + 3 * attn_fwd)


@formula("r_full = 1 + (2·N_active + attn_fwd) / (6·N_active + 3·attn_fwd)", unit="")
def ratio_full(N_active, attn_fwd):
    return 1 + (2 * N_active + attn_fwd) / (6 * N_active + 3 * attn_fwd)


@formula("hfu_ratio = r / r_prior", unit="")
def hfu_ratio(r, r_prior):
    return r / r_prior


@formula("t_train = flop · hfu_ratio / (G · F · mfu)", unit="s")
def train_time(flop, hfu_ratio, G, F, mfu):
    return flop * hfu_ratio / (G * F * mfu)


@formula("chip_hours = G · t_train / 3600", unit="chip-h")
def chip_hours(G, t_train):
    return G * t_train / 3600


@formula("cost = chip_hours · usd_per_chip_hour", unit="USD")
def train_cost(chip_hours, usd_per_chip_hour):
    return chip_hours * usd_per_chip_hour


def recompute_ratio(policy: str, N_active, attn_fwd, reversible: bool = False):
    """Hardware FLOP / model FLOP for a recompute policy (reversible layers cost one more forward)."""
    if reversible or policy == "full":
        q = ratio_full(N_active, attn_fwd)
        return q.renamed("r_reversible") if reversible and isinstance(q, Q) else q
    if policy == "selective":
        return ratio_selective(attn_fwd, N_active)
    if policy == "none":
        return Q("r_none", 1.0, "", source="no recomputation") if isinstance(N_active, Q) else 1.0
    raise InputError(f"--recompute must be one of {', '.join(RECOMPUTE)} (got {policy!r})")


# ---- memory per chip ---------------------------------------------------------------------------

@formula("N_dense_chip = N_dense / (tp · pp)", unit="params")
def dense_params_per_chip(N_dense, tp, pp):
    return N_dense / (tp * pp)


@formula("N_exp_chip = N_experts / (tp · pp · ep)", unit="params")
def expert_params_per_chip(N_experts, tp, pp, ep):
    return N_experts / (tp * pp * ep)


@formula("M_state = (N_dense_chip / z_dense + N_exp_chip / z_exp) · b_state", unit="B")
def state_bytes(N_dense_chip, z_dense, N_exp_chip, z_exp, b_state):
    return (N_dense_chip / z_dense + N_exp_chip / z_exp) * b_state


@formula("a_none = s · b · D · (34 + 5 · N · s / D) / tp", unit="B")
def act_layer_none(s, b, D, N, tp):
    return s * b * D * (34 + 5 * N * s / D) / tp


@formula("a_sel = 34 · s · b · D / tp", unit="B")
def act_layer_selective(s, b, D, tp):
    return 34 * s * b * D / tp


@formula("a_in = 2 · s · b · D / tp", unit="B")
def act_layer_input(s, b, D, tp):
    return 2 * s * b * D / tp


@formula("n_fl = min(M, pp)", unit="")
def in_flight(M, pp):
    return np.minimum(M, pp)


@formula("M_act = n_fl · L_stage · a_layer", unit="B")
def act_stored(n_fl, L_stage, a_layer):
    return n_fl * L_stage * a_layer


@formula("M_act = n_fl · L_stage · a_in + a_sel", unit="B")
def act_full(n_fl, L_stage, a_in, a_sel):
    return n_fl * L_stage * a_in + a_sel


@formula("M_act = n_fl · 2 · a_in + a_sel", unit="B")
def act_reversible(n_fl, a_in, a_sel):
    return n_fl * 2 * a_in + a_sel


@formula("M_total = M_weights + M_grads + M_opt + M_act", unit="B")
def memory_total(M_weights, M_grads, M_opt, M_act):
    return M_weights + M_grads + M_opt + M_act


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


@formula("t_ep = 4 · M · L_moe_stage · s · b / tp · k · D · b_act · (1 − 1 / ep) / bw", unit="s")
def ep_comm_time(M, L_moe_stage, s, b, tp, k, D, b_act, ep, bw):
    return 4 * M * L_moe_stage * s * b / tp * k * D * b_act * (1 - 1 / ep) / bw


@formula("t_compute = flop_step · hfu_ratio / (G · F · mfu)", unit="s")
def compute_time(flop_step, hfu_ratio, G, F, mfu):
    return flop_step * hfu_ratio / (G * F * mfu)


@formula("score = bubble + (t_tp + t_pp + t_dp + t_ep) / t_compute", unit="")
def split_score(bubble, t_tp, t_pp, t_dp, t_ep, t_compute):
    return bubble + (t_tp + t_pp + t_dp + t_ep) / t_compute


# ---- priors --------------------------------------------------------------------------------------

def _peak_class(chip_name: str) -> float | None:
    try:
        return load_chip(chip_name).peak(MFU_PEAK)
    except (CatalogError, ValueError):
        return None


def select_prior(chip: Chip, *, G: float | None, S: float | None, N_active: float, moe: bool,
                 exclude: tuple[str, ...] = ()) -> tuple[TrainingPrior, str]:
    """The published run nearest to this one: same chip, else same BF16 peak (±5 %), else any chip;
    then the least |ln G/G_p| + |ln S/S_p| + |ln N/N_p| + (1 if MoE differs). `exclude` drops priors
    whose source mentions, or whose model is, any of the given strings (held-out validation)."""
    pool = [p for p in load_training_priors() if not any(x and (x in p.source or x == p.model) for x in exclude)]
    if not pool:
        raise CatalogError("no training MFU priors in the catalog (catalog/training/)")
    peak = chip.peak(MFU_PEAK) if MFU_PEAK in chip.peak_flop_per_s else None
    same = [p for p in pool if p.chip == chip.name]
    how = f"same chip ({chip.name})"
    if not same and peak:
        same = [p for p in pool if (pk := _peak_class(p.chip)) and abs(pk / peak - 1) <= 0.05]
        how = f"same BF16 peak as {chip.name}"
    if not same:
        same, how = pool, f"no published run on a chip like {chip.name}: nearest of all"

    def dist(p: TrainingPrior) -> float:
        d = abs(math.log(N_active / p.active_params)) + (1.0 if p.moe != moe else 0.0)
        d += abs(math.log(G / p.chips)) if G else 0.0
        d += abs(math.log(S / p.seq_len)) if S else 0.0
        return d

    best = min(same, key=lambda p: (dist(p), p.row))
    return best, f"{how}; nearest by chips, sequence length, size and MoE"


# ---- split search --------------------------------------------------------------------------------

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


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


@dataclass(frozen=True)
class _Shape:
    """What the memory and communication formulas need from a model, bound once."""

    L: int
    D: int
    N: int
    L_moe: int
    k: int
    E: int
    N_dense: float
    N_experts: float


def _shape(m: Model) -> _Shape:
    pc = arch.param_counts(m)
    L_moe = arch.n_moe_layers(m)
    N_exp = L_moe * m.moe.n_routed_experts * pc.expert if m.moe else 0.0
    return _Shape(m.n_layers, m.d_model, m.n_heads, L_moe, m.moe.experts_per_token if m.moe else 0,
                  m.moe.n_routed_experts if m.moe else 0, pc.total - N_exp, N_exp)


def _z(zero: int, stage: int, ways: float) -> float:
    return ways if zero >= stage else 1.0


def _activations(sh: _Shape, s, b, tp, pp, M, recompute: str, reversible: bool) -> float:
    L_stage = math.ceil(sh.L / pp)
    n = min(M, pp)
    a_sel = act_layer_selective(s, b, sh.D, tp)
    if reversible:
        return act_reversible(n, act_layer_input(s, b, sh.D, tp), a_sel)
    if recompute == "full":
        return act_full(n, L_stage, act_layer_input(s, b, sh.D, tp), a_sel)
    a = act_layer_none(s, b, sh.D, sh.N, tp) if recompute == "none" else a_sel
    return act_stored(n, L_stage, a)


def activation_bytes(m: Model, *, s, b=1.0, tp=1, pp=1, M=1, recompute="selective", reversible=False) -> float:
    """Activation bytes per chip on the first pipeline stage (fast path, plain floats)."""
    return _activations(_shape(m), s, b, tp, pp, M, recompute, reversible)


def _memory(sh: _Shape, s, b, tp, pp, dp, ep, zero, M, recompute, reversible, b_w) -> tuple[float, dict]:
    nd, ne = dense_params_per_chip(sh.N_dense, tp, pp), expert_params_per_chip(sh.N_experts, tp, pp, ep)
    parts = {
        "weights": state_bytes(nd, _z(zero, 3, dp), ne, _z(zero, 3, dp / ep), b_w),
        "grads": state_bytes(nd, _z(zero, 2, dp), ne, _z(zero, 2, dp / ep), b_w),
        "opt": state_bytes(nd, _z(zero, 1, dp), ne, _z(zero, 1, dp / ep), OPTIMIZER_BYTES_PER_PARAM),
        "act": _activations(sh, s, b, tp, pp, M, recompute, reversible),
    }
    return sum(parts.values()), parts


def search_splits(m: Model, system: System, *, G: int, S: int, global_seqs: float, flop_step: float, mfu: float,
                  hfu: float = 1.0, recompute: str = "selective", reversible: bool = False, tp: int | None = None,
                  pp: int | None = None, ep: int | None = None, zero: int | None = None,
                  microbatches: int | None = None, interleave: int = 1) -> list[Split]:
    """Every valid split of G chips, scored; fitting ones first, then by score (least bubble + comm)."""
    sh = _shape(m)
    pri = load_priors(system.chip.priors)
    dom = system.domain_chips
    up = system.scaleup_bw * pri.eta_scaleup
    out = (system.scaleout_bw or system.scaleup_bw) * pri.eta_scaleout
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
                t_tp = tp_comm_time(M, L_stage, t, S, b, sh.D, ACT_BYTES, up)
                t_pp = pp_comm_time(M, S, b, sh.D, ACT_BYTES, p, t, out if G > dom else up)
                t_ep = ep_comm_time(M, L_moe_stage, S, b, t, sh.k, sh.D, ACT_BYTES, e, up if t * e <= dom else out) \
                    if sh.E else 0.0
                n_chip = dense_params_per_chip(sh.N_dense, t, p) + expert_params_per_chip(sh.N_experts, t, p, e)
                for z in zeros:
                    t_dp = dp_comm_time(1.5 if z >= 3 else 1.0, d, n_chip, b_w, up if t * d <= dom else out)
                    mem, _ = _memory(sh, S, b, t, p, d, e, z, M, recompute, reversible, b_w)
                    comm = (t_tp + t_pp + t_dp + t_ep) / t_compute
                    found.append(Split(t, p, d, e, z, M, b, float(mem), bool(mem <= cap), float(bub), float(comm),
                                       float(split_score(bub, t_tp, t_pp, t_dp, t_ep, t_compute)),
                                       {"tp": t_tp, "pp": t_pp, "dp": t_dp, "ep": t_ep, "compute": t_compute}))
    found.sort(key=lambda x: (not x.fits, x.score if x.fits else x.memory_bytes, x.zero, x.pp, x.tp))
    return found


# ---- the report ----------------------------------------------------------------------------------

@dataclass
class TrainReport(Numbers):
    model: Model
    system: System
    G: int
    tokens: float
    S: int
    prior: TrainingPrior
    split: Split
    numbers: dict  # key -> Q or value

    @property
    def fits(self) -> bool:
        return bool(self.split.fits)

    def to_dict(self, derivations: bool = True) -> dict:
        out: dict = {"model": self.model.name, "system": self.system.name, "chips": self.G, "tokens": self.tokens,
                     "seq_len": self.S, **nest(self.numbers)}
        if derivations:
            out["derivations"] = self.derivations()
        return out

    def explain(self, keys: list[str] | None = None) -> str:
        """Derivations of the headline numbers (cost unfolds into chip-hours, time and FLOP), or of `keys`."""
        keys = keys or [k for k in ("cost_usd" if self.numbers.get("cost_usd") is not None else "chip_hours",
                                    "memory.total_bytes", "bubble")]
        return "\n\n".join(f"── {k} ──\n{self.numbers[k].explain()}" for k in keys if isinstance(self.numbers[k], Q))


def check_train_inputs(*, G, tokens, S=None, mfu=None, recompute="selective", pp=None, microbatches=None,
                       tp=None, ep=None, zero=None, interleave=1, batch_tokens=None) -> None:
    """Refuse impossible or absurd values with one line each."""
    if G < 1 or G != int(G):
        raise InputError(f"--chips must be a whole number ≥ 1 (got {G})")
    if G > 10_000_000:
        raise InputError(f"--chips {G} is absurd (more than ten million chips)")
    if not tokens > 0:
        raise InputError(f"--tokens must be positive (got {tokens})")
    if tokens > 1e18:
        raise InputError(f"--tokens {tokens:g} is absurd (more than 1e18 tokens)")
    if S is not None and not 1 <= S <= 1e8:
        raise InputError(f"--seq-len must be between 1 and 1e8 tokens (got {S})")
    if mfu is not None and not 0 < mfu <= 1:
        raise InputError(f"--mfu must be a fraction in (0, 1] (got {mfu}); 40 % is 0.4")
    if recompute not in RECOMPUTE:
        raise InputError(f"--recompute must be one of {', '.join(RECOMPUTE)} (got {recompute!r})")
    for name, x in (("--pp", pp), ("--microbatches", microbatches), ("--tp", tp), ("--ep", ep),
                    ("--interleave", interleave)):
        if x is not None and x < 1:
            raise InputError(f"{name} must be ≥ 1 (got {x})")
    if pp is not None and G % pp:
        raise InputError(f"--pp {pp} does not divide --chips {G}")
    if zero is not None and zero not in ZERO_STAGES:
        raise InputError(f"--zero must be one of 0, 1, 2, 3 (got {zero})")
    if batch_tokens is not None and not batch_tokens > 0:
        raise InputError(f"--batch-tokens must be positive (got {batch_tokens})")


def train(m: Model, system: System, *, G: int, tokens: float, S: int | None = None, mfu: float | None = None,
          recompute: str = "selective", reversible: bool = False, pp: int | None = None,
          microbatches: int | None = None, tp: int | None = None, ep: int | None = None, zero: int | None = None,
          interleave: int = 1, batch_tokens: float | None = None, exclude_priors: tuple[str, ...] = (),
          explain: bool = False) -> TrainReport:
    """FLOP, time, cost, memory per chip, bubble and split of pre-training m on G chips of `system`."""
    check_train_inputs(G=G, tokens=tokens, S=S, mfu=mfu, recompute=recompute, pp=pp, microbatches=microbatches,
                       tp=tp, ep=ep, zero=zero, interleave=interleave, batch_tokens=batch_tokens)
    chip = system.chip
    pc = arch.param_counts(m)
    prior, why = select_prior(chip, G=G, S=S, N_active=pc.active, moe=m.moe is not None, exclude=exclude_priors)
    S = int(S or prior.seq_len)
    src_m = m.file or m.name
    g = lambda sym, v, unit="", src=None: lift(explain, sym, v, unit, src)  # noqa: E731

    # FLOP
    Nq = g("N_active", pc.active, "params", f"{src_m}: active parameters (tokenmath.arch.param_counts)")
    Dq = g("D_tok", tokens, "tok", "given (--tokens)")
    attn = g("attn_fwd", arch.attention_flop_per_token(m, S, "prefill"), "FLOP/tok",
             f"{src_m}: forward QK and AV per token over a causal sequence of {S:,} (tokenmath.arch)")
    f6, fa = flop_dense(Nq, Dq), flop_attention(attn, Dq)
    flop = flop_total(f6, fa)

    # time and cost at the prior's hardware-FLOP utilisation
    if mfu is None:
        mfu_q = g("mfu", prior.mfu, "%", f"{prior.source_of('mfu')} [{prior.name}: {prior.display_name}]")
        r_prior = recompute_ratio(prior.recompute, Nq, attn)
        if isinstance(r_prior, Q):
            r_prior = r_prior.renamed("r_prior")
        mfu_source = f"{prior.row} ({prior.name}): {prior.display_name}; {why}"
    else:
        mfu_q = g("mfu", mfu, "%", "given (--mfu)")
        r_prior = None
        mfu_source = "given (--mfu)"
    r_user = recompute_ratio(recompute, Nq, attn, reversible)
    if r_prior is None:
        r_prior = r_user.renamed("r_prior") if isinstance(r_user, Q) else r_user
    ratio = hfu_ratio(r_user, r_prior)
    Gq = g("G", G, "chips", "given (--chips)")
    Fq = g("F", chip.peak(MFU_PEAK), "FLOP/s",
           chip.source_of(f"peak_flop_per_s.{chip.peak_precision(MFU_PEAK)}") + " (dense BF16: the peak MFU is against)")
    t = train_time(flop, ratio, Gq, Fq, mfu_q)
    hours = chip_hours(Gq, t)
    price = system.usd_per_chip_hour
    cost = train_cost(hours, g("usd_per_chip_hour", price, "USD", system.price_source())) if price else None

    # split and memory
    bt = batch_tokens or prior.global_batch_tokens
    bt_src = "given (--batch-tokens)" if batch_tokens else prior.source_of("global_batch_tokens")
    global_seqs = max(1.0, bt / S)
    flop_step = (value_of(f6) + value_of(fa)) / tokens * global_seqs * S
    splits = search_splits(m, system, G=G, S=S, global_seqs=global_seqs, flop_step=flop_step, mfu=value_of(mfu_q),
                           hfu=value_of(ratio), recompute=recompute, reversible=reversible, tp=tp, pp=pp, ep=ep,
                           zero=zero, microbatches=microbatches, interleave=interleave)
    if not splits:
        raise InputError(f"no tensor/pipeline/data split of {G} chips works for {m.name} with a global batch of "
                         f"{global_seqs:,.0f} sequences (check --tp/--pp/--ep/--microbatches against --chips and "
                         f"--batch-tokens)")
    sp = splits[0]
    numbers: dict = {"flop": flop, "flop_6nd": f6, "flop_attention": fa, "mfu": mfu_q, "mfu_source": mfu_source,
                     "mfu_prior": prior.name if mfu is None else None, "mfu_prior_row": prior.row if mfu is None else None,
                     "recompute": "reversible" if reversible else recompute, "hfu_ratio": ratio, "time_s": t,
                     "time_days": value_of(t) / 86400, "chip_hours": hours, "cost_usd": cost,
                     "usd_per_chip_hour": price, "price_source": system.price_source() if price else None}
    numbers.update(_memory_numbers(m, system, sp, S, recompute, reversible, explain))
    numbers.update(_split_numbers(sp, bt, bt_src, S, interleave, len([x for x in splits if x.fits]), explain))
    numbers["reversible.flop_overhead"] = value_of(ratio_full(pc.active, value_of(attn))) - 1
    return TrainReport(m, system, G, tokens, S, prior, sp, numbers)


def _memory_numbers(m: Model, system: System, sp: Split, S: int, recompute: str, reversible: bool,
                    explain: bool) -> dict:
    """Memory per chip of the chosen split, with derivations when asked."""
    sh = _shape(m)
    src_m = m.file or m.name
    g = lambda sym, v, unit="", src=None: lift(explain, sym, v, unit, src)  # noqa: E731
    tp, pp, dp, ep = (g(n, v, "", "chosen split") for n, v in (("tp", sp.tp), ("pp", sp.pp), ("dp", sp.dp),
                                                                ("ep", sp.ep)))
    nd = dense_params_per_chip(g("N_dense", sh.N_dense, "params", f"{src_m}: all but the routed experts"), tp, pp)
    ne = expert_params_per_chip(g("N_experts", sh.N_experts, "params", f"{src_m}: routed experts"), tp, pp, ep)

    def z(stage: int, what: str, group: str, ways: float):
        on = sp.zero >= stage
        label = "dense" if group == "dense" else "expert"
        return g(f"z_{group}", ways if on else 1.0, "",
                 f"ZeRO-{sp.zero}: {what} {'sharded over' if on else 'not sharded over'} the {ways:g} "
                 f"data-parallel ranks of the {label} parameters")

    def state(name, stage, what, b, b_src):
        q = state_bytes(nd, z(stage, what, "dense", sp.dp), ne, z(stage, what, "exp", sp.dp / sp.ep),
                        g("b_state", b, "B", b_src))
        return q.renamed(name) if isinstance(q, Q) else q

    w = state("M_weights", 3, "weights", 2.0, "BF16 weights: 2 B/param")
    gr = state("M_grads", 2, "gradients", 2.0, "BF16 gradients: 2 B/param")
    op = state("M_opt", 1, "optimizer states", OPTIMIZER_BYTES_PER_PARAM, ADAM_SOURCE)
    s, b = g("s", S, "tok", "sequence length"), g("b", sp.b, "seq", "sequences per micro-batch")
    D, N = g("D", m.d_model, "", src_m), g("N", m.n_heads, "", src_m)
    kor = "Korthikanti et al. 2022 (arXiv 2205.05198) §4, with sequence parallelism"
    n_fl = in_flight(g("M", sp.M, "", "micro-batches per step"), pp)
    L_stage = g("L_stage", math.ceil(m.n_layers / sp.pp), "", f"⌈L/pp⌉ layers on the first stage ({src_m})")
    a_sel = act_layer_selective(s, b, D, tp)
    variants = {
        "none": act_stored(n_fl, L_stage, act_layer_none(s, b, D, N, tp).renamed("a_layer") if explain else
                           act_layer_none(s, b, D, N, tp)),
        "selective": act_stored(n_fl, L_stage, a_sel.renamed("a_layer") if explain else a_sel),
        "full": act_full(n_fl, L_stage, act_layer_input(s, b, D, tp), a_sel),
        "reversible": act_reversible(n_fl, act_layer_input(s, b, D, tp), a_sel),
    }
    act = variants["reversible" if reversible else recompute]
    total = memory_total(w, gr, op, act)
    cap = system.chip.hbm_capacity_bytes
    out = {"memory.weights_bytes": w, "memory.gradients_bytes": gr, "memory.optimizer_bytes": op,
           "memory.activations_bytes": act, "memory.total_bytes": total, "memory.capacity_bytes": cap,
           "memory.fits": bool(value_of(total) <= cap), "memory.headroom_bytes": cap - value_of(total),
           "memory.bytes_per_param": 2.0 + 2.0 + OPTIMIZER_BYTES_PER_PARAM,
           "memory.optimizer_bytes_per_param": OPTIMIZER_BYTES_PER_PARAM,
           "memory.activation_formula": kor}
    for k, q in variants.items():
        out[f"activations.{k}_bytes"] = value_of(q)
    out["reversible.saved_bytes"] = value_of(variants[recompute]) - value_of(variants["reversible"])
    return out


def _split_numbers(sp: Split, bt: float, bt_src: str, S: int, v: int, n_fitting: int, explain: bool) -> dict:
    g = lambda sym, val, unit="", src=None: lift(explain, sym, val, unit, src)  # noqa: E731
    bub = pipeline_bubble(g("pp", sp.pp, "", "chosen split"), g("v", v, "", "interleaved virtual stages (--interleave)"),
                          g("M", sp.M, "", "micro-batches per step: global batch ÷ (dp · b)"))
    return {"bubble": bub, "split.tp": sp.tp, "split.pp": sp.pp, "split.dp": sp.dp, "split.ep": sp.ep,
            "split.zero": sp.zero, "split.microbatches": sp.M, "split.micro_batch_seqs": sp.b,
            "split.global_batch_tokens": bt, "split.global_batch_source": bt_src, "split.interleave": v,
            "split.comm_fraction": sp.comm_fraction, "split.score": sp.score,
            **{f"split.t_{k}_s": x for k, x in sp.comm_s.items()}, "split.fitting_candidates": n_fitting}


# ---- validation against published runs ----------------------------------------------------------

# the row's hardware text -> the catalog system it ran on (the chip is the system's)
_SYSTEMS = (("H100", "hgx-h100"), ("H800", "hgx-h800"), ("H200", "hgx-h200"), ("A100", "hgx-a100"),
            ("TPU v4", "tpu-v4-pod"), ("TPU v5p", "tpu-v5p-pod"))
_MODELS = (("405B", "llama-3.1-405b"), ("DeepSeek-V3", "deepseek-v3"), ("PaLM 540B", "palm-540b"))
_GPU_HOURS = {"total_training_gpu_hours", "gpu_hours_pre-training", "gpu_hours_per_trillion_tokens"}
CARRY = ("hfu", "mfu")


def _publication(source: str) -> str:
    m = re.search(r"arXiv\s*\d{4}\.\d{4,5}|github\s+[\w.-]+/[\w.-]+", source or "")
    return m.group(0).replace("github ", "") if m else ""


def _row_params(text: str) -> float | None:
    """Active parameters from a model description: '671B MoE, 37B active' -> 37e9, 'MPT-760m' -> 760e6."""
    act = re.search(r"(\d+(?:\.\d+)?)\s*([BbMm])\s+active", text)
    m = act or re.search(r"(\d+(?:\.\d+)?)\s*([BbMm])\b", text)
    if not m:
        return None
    return float(m.group(1)) * (1e9 if m.group(2) in "Bb" else 1e6)


def _row_recompute(row: dict) -> str:
    text = " ".join(row.get(k, "") for k in ("parallelism", "notes")).lower()
    if "checkpointing" in text or "recomputation" in text or "rematerialization" in text:
        return "full"
    return "selective"


def _row_number(text: str) -> float | None:
    m = re.search(r"\d+(?:\.\d+)?", (text or "").replace(",", ""))
    return float(m.group(0)) if m else None


def predict_training_row(row: dict, held_out: bool = True, carry: str = "hfu") -> dict | None:
    """Predict one TRN-* row of public_measurements.csv (MFU, GPU-hours or TFLOP/s per GPU).

    Returns None for rows that are not training rows; otherwise a dict with `id`, `metric`, `unit`,
    `measured`, `predicted`, `error` (predicted/measured − 1), `prior`, `prior_row`, `basis` and, for
    GPU-hours rows, `time_days_measured`/`time_days_predicted`; `predicted` is None and `reason` says
    why when it cannot predict. held_out=True uses no prior from the row's own publication or model;
    held_out=False lets a run's own published MFU predict its GPU-hours (MFU rows then predict
    themselves and are skipped). carry='hfu' carries the prior's hardware-FLOP utilisation over
    (mfu · r_prior / r_row, the assumption `train` makes); carry='mfu' carries the MFU itself.
    """
    rid, metric = row.get("id", ""), row.get("metric", "")
    if not rid.startswith("TRN"):
        return None
    if carry not in CARRY:
        raise ValueError(f"carry must be one of {CARRY}")
    measured = _row_number(row.get("value", ""))
    out = {"id": rid, "metric": metric, "unit": row.get("unit", ""), "measured": measured, "predicted": None,
           "error": None, "prior": None, "prior_row": None,
           "basis": ("held-out: no prior from the row's publication or model" if held_out else "own run allowed")
           + f", {carry} carried over"}
    system_name = next((c for key, c in _SYSTEMS if key in row.get("hardware", "")), None)
    if system_name is None:
        return {**out, "reason": f"hardware {row.get('hardware')!r} has no catalog chip"}
    system = load_system(system_name)
    chip = system.chip
    G = _row_number(row.get("n_chips", ""))
    S = _row_number(row.get("context_len", "")) or _row_number(row.get("input_len", ""))
    N = _row_params(row.get("model", ""))
    moe = "moe" in row.get("model", "").lower()
    model_name = next((n for key, n in _MODELS if key in row.get("model", "")), None)
    exclude = (_publication(row.get("source", "")), model_name or "") if held_out else ()
    # hardware FLOP / model FLOP; without the model's shapes the attention share is neglected
    r_of = {"none": 1.0, "selective": 1.0, "full": 4 / 3} if carry == "hfu" else {"none": 1.0, "selective": 1.0,
                                                                                 "full": 1.0}
    rr = _row_recompute(row)
    if metric.startswith("train_MFU") or metric in ("train_BF16_MFU", "train_TFLOPs_per_GPU"):
        if N is None:
            return {**out, "reason": f"no parameter count in {row.get('model')!r}"}
        p, _ = select_prior(chip, G=G, S=S, N_active=N, moe=moe, exclude=exclude)
        if p.row == rid:
            return {**out, "prior": p.name, "prior_row": p.row, "reason": "the row is its own prior (in-sample)"}
        hfu = p.mfu * r_of[p.recompute]
        if metric == "train_TFLOPs_per_GPU":  # Megatron's count includes the recomputed forward: hardware FLOP/s
            pred = hfu * (r_of["full"] if carry == "mfu" else 1.0) * chip.peak(MFU_PEAK) / 1e12
        else:
            pred = 100 * hfu / r_of[rr]
            if "fp8" in row.get("precision", "").lower():  # MosaicML's FP8 MFU is against the FP8 peak
                pred *= chip.peak(MFU_PEAK) / chip.peak("fp8")
        return {**out, "predicted": pred, "error": pred / measured - 1, "prior": p.name, "prior_row": p.row}
    if metric in _GPU_HOURS:
        if model_name is None:
            return {**out, "reason": f"model {row.get('model')!r} is not in the catalog"}
        if "per_trillion" in metric or "per 1T" in row.get("unit", ""):
            tokens = 1e12
        else:
            tk = re.search(r"(\d+(?:\.\d+)?)\s*T tokens", row.get("notes", ""))
            if not tk:
                return {**out, "reason": "the row does not state its token count"}
            tokens = float(tk.group(1)) * 1e12
        r = train(load_model(model_name), system, G=int(G or 1), tokens=tokens, S=int(S) if S else None,
                  exclude_priors=exclude)
        pred = r.value("chip_hours")
        if carry == "mfu":
            pred /= r.value("hfu_ratio")
        days = {"time_days_measured": measured / (G or 1) / 24, "time_days_predicted": pred / (G or 1) / 24}
        return {**out, "predicted": pred, "error": pred / measured - 1, "prior": r.prior.name,
                "prior_row": r.prior.row, **days}
    return {**out, "reason": f"metric {metric!r} mixes phases whose token counts the row does not give"}


def validate_training(rows: list[dict], held_out: bool = True, carry: str = "hfu") -> dict:
    """Predict every TRN-* row; the rows, and the median and 90th-percentile absolute error per metric kind."""
    preds = [p for p in (predict_training_row(r, held_out, carry) for r in rows) if p is not None]

    def kind(metric: str) -> str:
        return "gpu_hours" if "gpu_hours" in metric else ("tflops_per_gpu" if "TFLOPs" in metric else "mfu")

    def stats(errs: list[float]) -> dict:
        if not errs:
            return {"n": 0, "median_abs_error": None, "p90_abs_error": None}
        a = np.abs(np.asarray(errs))
        return {"n": len(errs), "median_abs_error": float(np.median(a)), "p90_abs_error": float(np.quantile(a, 0.9))}

    done = [p for p in preds if p["error"] is not None]
    summary = {"all": stats([p["error"] for p in done])}
    for k in ("mfu", "tflops_per_gpu", "gpu_hours"):
        summary[k] = stats([p["error"] for p in done if kind(p["metric"]) == k])
    summary["not_predicted"] = len(preds) - len(done)
    return {"basis": preds[0]["basis"] if preds else "", "rows": preds, "summary": summary}
