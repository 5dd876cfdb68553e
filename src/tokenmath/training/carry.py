"""Carrying a published run's utilisation to another chip, model or scale by the roofline of its step.

The MFU priors (catalog/training/*.yaml) are measured on one setup. `carry='hfu'` moves the prior's hardware-FLOP
utilisation to any other setup unchanged. This module instead splits one optimizer step of the prior's own setup
into the parts physics can price, leaves what is unexplained as a share of the step, and rebuilds the step on the
target's chip, fabric, model shapes and layout with that share carried.

Notation as training.runs; per chip and per step of B sequences of s tokens on G = tp·cp·pp·dp chips, r the
recompute policy's hardware/model FLOP ratio, D the width and L the layers of the model:

    flop_step = (6·N_active + 3·attn_fwd) · B · s                      model FLOP (what MFU counts)
 (a) t_mm     = r · flop_step / (G · F · eta_mm)                        matmuls at the chip's GEMM efficiency
     eta_mm   = eta_inf · K / (K + K_half),  K = D                      the measured depth law of the chip's BF16
                                                                        GEMMs (priors matmul_k_law_fmt); a layer's
                                                                        GEMMs run K = D, D/tp, F/tp or b·s deep
 (d) t_mem    = r · c_act · D · L · B · s / (G · W · eta_bw)            norms, activations, residuals, dropout: the
                                                                        c_act·D bytes per token and layer of
                                                                        Korthikanti et al. 2022 (arXiv 2205.05198
                                                                        §4.1: 34·s·b·h with 16-bit activations, the
                                                                        5·a·s²·b attention-score term gone with fused
                                                                        attention), written forward and read and
                                                                        differentiated backward: c_act = 3 · 34 B
 (c) t_tp     = n_tp · 2·(tp − 1) · D · b_act · L · B · s / (G · bw_tp) Megatron's all-reduces (or sequence-parallel
                                                                        gather + reduce-scatter, the same bytes) of
                                                                        each layer's b·s/cp·D activations: n_tp = 4
                                                                        (2 forward, 2 backward; 6 with a recomputed
                                                                        forward), on the step's critical path
 (e) t_cp     = 2 · M · L_stage · V_cp / bw_cp                          context parallelism's key-value gathers
     V_cp     = (cp − 1)/cp · 2 · s · b · K_tp · H · b_act              (forward) and gradient reduce-scatters
                                                                        (backward), L_stage = ⌈L/pp⌉ layers a
                                                                        stage; splits.cp_comm_time, not overlapped
                                                                        with attention (as the split search
                                                                        assumes); bw_cp the scale-up link where
                                                                        tp·cp chips fit the domain, else scale-out
     t_dp     = c_zero · 2·(dp − 1)/dp · N_total/(tp·pp) · b_g / bw_dp  the gradient reduce (ZeRO-3: and the weight
                                                                        gathers; splits.dp_comm_time), overlapped
                                                                        with the step's compute as rows.dp_floor is
 (b) bubble   = (pp − 1) / (v·M + pp − 1),  M = B / (dp · b)            1F1B, v interleaved stages, b sequences a
                                                                        micro-batch (splits.pipeline_bubble)
     t_pipe   = (t_mm + t_mem + t_tp + t_cp) / (1 − bubble)           the chips' time inside the pipeline
                                                                        (written without t_cp where cp = 1)

The prior's step at its published MFU leaves the residual share of its pipeline time (launches, stragglers, the
optimizer step, what the terms above miss). Where the terms over-count the prior's step (an assumed layout, such as
a 1F1B bubble for a run that interleaved), no negative share is carried: that would let a target beat its own
matmul time; the carry then starts from the terms alone, and says so. The data-parallel traffic overlaps
that time and binds only where it is longer, so the residual is a share of the pipeline time, not of the traffic:

     t_prior  = flop_step / (G · F · mfu_prior)
     rho      = max(0, 1 − t_pipe,prior / t_prior)                      (a prior bound by its traffic is refused)
and the target's step and MFU:
     t_step   = max(t_pipe / (1 − rho), t_dp)
     mfu      = flop_step / (G · F · t_step)

On the prior's own setup this returns the prior's MFU exactly, unless its terms over-count its step. Left out, and said so: pipeline point-to-point
traffic, expert-parallel all-to-all, and the optimizer's own step (all in rho).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from ..core import arch
from ..core.derive import Q, formula, lift, value_of
from ..core.errors import InputError
from ..core.load import load_priors
from ..core.records import Model, System
from .splits import (MFU_PEAK, cp_bytes_layer, cp_comm_time, dp_comm_time, kv_heads_per_rank, link_bandwidths,
                     pipeline_bubble, zero_factor)

__all__ = ["Layout", "Setup", "read_layout", "carried_mfu", "step_terms", "setup_of_prior", "shapes", "C_ACT", "N_TP"]

C_ACT = 3 * 34  # B per token, layer and unit of width: Korthikanti et al. 2022 §4.1's 34, three passes (module doc)
C_ACT_SOURCE = ("Korthikanti et al. 2022 (arXiv 2205.05198) §4.1: 34·s·b·h bytes of 16-bit activations per layer "
                "besides the attention scores (fused away); written forward, read and differentiated backward: 3 "
                "passes (an estimate of the traffic, not a measurement)")
N_TP = 4  # tensor-parallel collectives per layer: 2 forward, 2 backward (Shoeybi et al. 2019, arXiv 1909.08053 §3)
N_TP_SOURCE = ("Shoeybi et al. 2019 (arXiv 1909.08053) §3: 2 all-reduces forward and 2 backward per layer (6 with "
               "the forward recomputed); not overlapped with the GEMMs (Megatron-LM runs them between the layer's "
               "GEMMs; an assumption for runs that overlap them)")


# ---- the terms ------------------------------------------------------------------------------------

@formula("flop_step = (6 · N_active + 3 · attn_fwd) · B · s", unit="FLOP")
def step_flop(N_active, attn_fwd, B, s):
    return (6 * N_active + 3 * attn_fwd) * B * s


@formula("eta_mm = eta_inf · K / (K + K_half)", unit="")
def gemm_eta(eta_inf, K, K_half):
    return eta_inf * K / (K + K_half)


@formula("t_mm = r · flop_step / (G · F · eta_mm)", unit="s")
def matmul_time(r, flop_step, G, F, eta_mm):
    return r * flop_step / (G * F * eta_mm)


@formula("t_mem = r · c_act · D · L · B · s / (G · W · eta_bw)", unit="s")
def nonmatmul_time(r, c_act, D, L, B, s, G, W, eta_bw):
    return r * c_act * D * L * B * s / (G * W * eta_bw)


@formula("t_tp = n_tp · 2 · (tp − 1) · D · b_act · L · B · s / (G · bw_tp)", unit="s")
def tp_time(n_tp, tp, D, b_act, L, B, s, G, bw_tp):
    return n_tp * 2 * (tp - 1) * D * b_act * L * B * s / (G * bw_tp)


@formula("t_pipe = (t_mm + t_mem + t_tp) / (1 − bubble)", unit="s")
def pipeline_time(t_mm, t_mem, t_tp, bubble):
    return (t_mm + t_mem + t_tp) / (1 - bubble)


@formula("t_pipe = (t_mm + t_mem + t_tp + t_cp) / (1 − bubble)", unit="s")
def pipeline_time_cp(t_mm, t_mem, t_tp, t_cp, bubble):
    """t_pipe of a context-parallel layout: pipeline_time with the cp ranks' traffic on the critical path too."""
    return pipeline_time(t_mm, t_mem, t_tp + t_cp, bubble)


@formula("t_prior = flop_step / (G · F · mfu_prior)", unit="s")
def prior_step(flop_step, G, F, mfu_prior):
    return flop_step / (G * F * mfu_prior)


@formula("rho = max(0, 1 − t_pipe / t_prior)", unit="%")
def residual_share(t_pipe, t_prior):
    return max(0.0, 1 - t_pipe / t_prior)


@formula("t_step = max(t_pipe / (1 − rho), t_dp)", unit="s")
def carried_step(t_pipe, rho, t_dp):
    return max(t_pipe / (1 - rho), t_dp)


@formula("mfu = flop_step / (G · F · t_step)", unit="%")
def step_mfu(flop_step, G, F, t_step):
    return flop_step / (G * F * t_step)


# ---- a setup: chip, model shapes, layout -----------------------------------------------------------

@dataclass(frozen=True)
class Layout:
    """How G chips split a step: tp·cp·pp·dp = G, v interleaved stages, b sequences a micro-batch, a ZeRO stage;
    `assumed` says which of them no text stated."""

    tp: int = 1
    cp: int = 1
    pp: int = 1
    dp: float = 1.0
    v: int = 1
    b: float = 1.0
    zero: int = 0
    assumed: tuple[str, ...] = ()


@dataclass(frozen=True)
class Setup:
    """One training step's setup: the system, chips, the model's sizes and shapes, sequence, batch and layout."""

    label: str
    system: System
    G: float
    N_active: float
    N_total: float
    L: int
    D: int
    attn_fwd: float  # forward attention FLOP per token (0 where the shapes are not known)
    S: float
    B: float  # global batch, sequences
    r: float  # hardware / model FLOP of the recompute policy
    recompute: str
    layout: Layout
    shapes_from: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)
    K: int = 0  # key-value heads (0: not known, multi-head attention assumed where context parallelism needs it)
    H: int = 0  # head dimension


_INTERLEAVE = re.compile(r"interleav\w*(?:[\s_-]*(?:pp|pipeline|schedule))?\s*(?:\(|=|:|,)?\s*(\d+)|"
                         r"(\d+)\s*(?:virtual|model[\s_-]*chunks?)|(?<![a-z])v(?:irtual[\s_-]*)?pp\s*[=:]?\s*(\d+)",
                         re.IGNORECASE)
_MICRO = re.compile(r"micro[\s_-]*batch(?:[\s_-]*size)?\s*(?:=|:|of)?\s*(\d+)|(?<![a-z])mbs\s*[=:]?\s*(\d+)",
                    re.IGNORECASE)
_NO_PP = re.compile(r"no\s+pipelin|data[\s_-]*parallel\s+only|no\s*mp\b", re.IGNORECASE)
_ZERO = re.compile(r"zero[\s_-]*(?:stage[\s_-]*)?([0-3])(?![0-9])|(?<![a-z])(fsdp|fully[\s_-]*sharded|full[\s_-]*shard)",
                   re.IGNORECASE)
_MP = re.compile(r"(?<![a-z])mp\s*[=:]?\s*(\d+)|model[\s_-]*parallel(?:ism)?[\s_-]*(?:size)?\s*[=:]?\s*(\d+)",
                 re.IGNORECASE)


def read_layout(text: str, G: float, domain: int, base: Layout | None = None, base_label: str = "") -> Layout:
    """The layout a parallelism text states ('TP8 PP8, interleaved PP (6 stages)', 'TP8 CP1 PP16 DP(FSDP)64',
    'PTD-P (MP 96); microbatch 1', 'FSDP FULL_SHARD', 'ZeRO-3 (no MP)'); what it leaves out is `base`'s (another
    run's layout) or 1, each said in `assumed`. A model-parallel size (MP 96) is tp = the largest divisor within
    the scale-up domain, pp the rest."""
    from ..measure.validate.serving import split_of  # the serving rows' parser; imported here: it imports us

    t = text or ""
    s = split_of(t)
    z, mp, il, mb = _ZERO.search(t), _MP.search(t), _INTERLEAVE.search(t), _MICRO.search(t)
    assumed: list[str] = []
    base = base or Layout()
    said_any = bool(s.get("tp") or s.get("pp") or z or mp or _NO_PP.search(t))
    if mp:
        ways = int(mp.group(1) or mp.group(2))
        tp = max(d for d in range(1, min(ways, domain) + 1) if ways % d == 0)
        pp = ways // tp
        assumed.append(f"MP {ways} read as TP{tp} PP{pp} (TP within the {domain}-chip scale-up domain)")
    elif said_any:
        tp, pp = int(s.get("tp") or 1), int(s.get("pp") or 1)
    else:
        tp, pp = min(base.tp, int(G)), base.pp
        assumed.append(f"TP{tp} PP{pp} as {base_label or 'assumed'} (the row states no split)")
    while pp > 1 and G % (tp * pp):  # a borrowed layout that does not divide the row's chips
        pp -= 1
    cp = int(s.get("cp") or 1)
    zero = (3 if z.group(2) else int(z.group(1))) if z else (base.zero if not said_any else 0)
    if il:
        v = int(next(g for g in il.groups() if g))
    elif pp > 1 and not said_any:
        v = base.v
    else:
        v = 1
        if pp > 1:
            assumed.append("no interleaving stated: v = 1 (plain 1F1B)")
    if mb:
        b = float(mb.group(1) or mb.group(2))
    else:
        b = 1.0
        if pp > 1:
            assumed.append("micro-batch not stated: 1 sequence")
    dp = max(1.0, G / (tp * pp * cp))
    return Layout(tp, cp, pp, dp, max(v, 1), b, zero, tuple(assumed))


# ---- the step's terms -----------------------------------------------------------------------------

def _gemm_law(system: System):
    """(eta_inf, K_half, source) of the chip's BF16 GEMMs, or None where no table measured them."""
    pri = load_priors(system.chip.priors)
    law = (getattr(pri, "matmul_k_law_fmt", None) or {}).get("bf16")
    if not law:
        return None
    return float(law[0]), float(law[1]), pri.source_of("matmul_k_law_fmt")


def step_terms(x: Setup, law, explain: bool = False) -> dict:
    """Terms (a)-(e) and the physical step of setup x (module doc); `law` the (eta_inf, K_half, source) its
    matmuls run at."""
    g = lambda sym, v, unit="", src=None: lift(explain, sym, v, unit, src)  # noqa: E731
    chip, lay = x.system.chip, x.layout
    pri = load_priors(chip.priors)
    F = g("F", chip.peak(MFU_PEAK), "FLOP/s", chip.source_of(f"peak_flop_per_s.{chip.peak_precision(MFU_PEAK)}"))
    G = g("G", x.G, "chips", x.label)
    B, s = g("B", x.B, "seq", x.label), g("s", x.S, "tok", x.label)
    D, L = g("D", x.D, "", x.shapes_from), g("L", x.L, "", x.shapes_from)
    r = g("r", x.r, "", f"recompute: {x.recompute}")
    flop = step_flop(g("N_active", x.N_active, "params", x.shapes_from), g("attn_fwd", x.attn_fwd, "FLOP/tok",
                     x.shapes_from), B, s)
    eta = gemm_eta(g("eta_inf", law[0], "", law[2]), D.renamed("K") if isinstance(D, Q) else D,
                   g("K_half", law[1], "", law[2]))
    t_mm = matmul_time(r, flop, G, F, eta)
    W = g("W", chip.hbm_bandwidth_bytes_per_s, "B/s", chip.source_of("hbm_bandwidth_bytes_per_s"))
    t_mem = nonmatmul_time(r, g("c_act", C_ACT, "B", C_ACT_SOURCE), D, L, B, s, G, W,
                           g("eta_bw", pri.eta_bw, "", pri.source_of("eta_bw")))
    up, out = link_bandwidths(x.system, pri)
    dom = x.system.domain_chips
    if lay.tp > 1:
        n_tp = N_TP + (2 if x.recompute == "full" else 0)
        bw_tp = up if lay.tp <= dom else out
        t_tp = tp_time(g("n_tp", n_tp, "", N_TP_SOURCE), g("tp", lay.tp, "", x.label), D,
                       g("b_act", 2.0, "B", "BF16 activations"), L, B, s, G,
                       g("bw_tp", bw_tp, "B/s", f"{x.system.name}: {'scale-up' if bw_tp is up else 'scale-out'} "
                                                 f"link × eta (priors {chip.priors})"))
    else:
        t_tp = g("t_tp", 0.0, "s", "no tensor parallelism")
    if lay.dp > 1:
        inside = x.G <= dom
        bw_dp = up if inside else out
        n_chip = x.N_total / (lay.tp * lay.pp)
        t_dp = dp_comm_time(g("c_zero", zero_factor(lay.zero), "", f"ZeRO-{lay.zero}"), g("dp", lay.dp, "", x.label),
                            g("N_chip", n_chip, "params", f"{x.shapes_from}: all parameters / (tp·pp)"),
                            g("b_g", 2.0, "B", "BF16 gradients"),
                            g("bw_dp", bw_dp, "B/s", f"{x.system.name}: {'scale-up' if inside else 'scale-out'} link "
                                                     f"× eta (priors {chip.priors})"))
    else:
        t_dp = g("t_dp", 0.0, "s", "no data parallelism")
    M = g("M", max(1.0, x.B / (lay.dp * lay.b)), "", f"B / (dp · b), b = {lay.b:g}")
    bub = pipeline_bubble(g("pp", lay.pp, "", x.label), g("v", lay.v, "", x.label), M)
    if lay.cp > 1:
        t_cp = cp_time(x, M, s, up, out, g)
        t_pipe = pipeline_time_cp(t_mm, t_mem, t_tp, t_cp, bub)
    else:
        t_cp = g("t_cp", 0.0, "s", "no context parallelism")
        t_pipe = pipeline_time(t_mm, t_mem, t_tp, bub)
    return {"flop_step": flop, "F": F, "G": G, "eta_mm": eta, "t_mm": t_mm, "t_mem": t_mem, "t_tp": t_tp,
            "t_cp": t_cp, "t_dp": t_dp, "bubble": bub, "t_pipe": t_pipe}


def cp_time(x: Setup, M, s, up: float, out: float, g):
    """Term (e) of setup x (module doc): the split search's t_cp (splits.cp_comm_time) on x's layout; a model whose
    key-value heads are not known is taken as multi-head (K_tp · H = D / tp, said)."""
    lay = x.layout
    if x.K and x.H:
        K, H, how = x.K, x.H, x.shapes_from
    else:
        K, H, how = x.D, 1, f"{x.shapes_from}: key-value heads not known: multi-head attention assumed (K·H = D)"
    inside = lay.tp * lay.cp <= x.system.domain_chips
    V = cp_bytes_layer(g("cp", lay.cp, "", x.label), s, g("b", lay.b, "seq", x.label),
                       g("K_tp", kv_heads_per_rank(K, lay.tp), "", f"{how}: key-value heads a TP{lay.tp} rank holds"),
                       g("H", H, "", how), g("b_act", 2.0, "B", "BF16 activations"))
    return cp_comm_time(M, g("L_stage", math.ceil(x.L / lay.pp), "", f"⌈L / pp⌉, {x.shapes_from}"), V,
                        g("bw_cp", up if inside else out, "B/s",
                          f"{x.system.name}: {'scale-up' if inside else 'scale-out'} link × eta (tp·cp = "
                          f"{lay.tp * lay.cp} chips)"))


def carried_mfu(prior: Setup, mfu_prior: float, target: Setup, explain: bool = False, prior_source: str = ""):
    """The target's MFU by the roofline carry (module doc), and the two setups' terms: (mfu, prior_terms,
    target_terms, notes). A chip whose GEMMs no table measured is taken at the other chip's law (said); where
    neither has one, at each chip's default eta_flop with K_half = 0."""
    lp, lt = _gemm_law(prior.system), _gemm_law(target.system)
    notes = [*prior.notes, *(f"prior {prior.label}: {a}" for a in prior.layout.assumed), *target.notes,
             *(f"target: {a}" for a in target.layout.assumed)]
    if lp is None and lt is None:
        fallback = lambda s: (load_priors(s.chip.priors).eta_flop, 0.0,  # noqa: E731
                              f"{load_priors(s.chip.priors).source_of('eta_flop')} (no measured GEMM law)")
        lp, lt = fallback(prior.system), fallback(target.system)
    elif lp is None:
        lp = (lt[0], lt[1], f"{prior.system.chip.name}: no measured GEMM law; {target.system.chip.name}'s assumed "
                            f"({lt[2]})")
        notes.append(f"{prior.system.chip.name}'s GEMMs taken at {target.system.chip.name}'s measured law")
    elif lt is None:
        lt = (lp[0], lp[1], f"{target.system.chip.name}: no measured GEMM law; {prior.system.chip.name}'s assumed "
                            f"({lp[2]})")
        notes.append(f"{target.system.chip.name}'s GEMMs taken at {prior.system.chip.name}'s measured law")
    tp_, tt = step_terms(prior, lp, explain), step_terms(target, lt, explain)
    g = lambda sym, v, unit="", src=None: lift(explain, sym, v, unit, src)  # noqa: E731
    t_prior = prior_step(tp_["flop_step"], tp_["G"], tp_["F"], g("mfu_prior", mfu_prior, "%", prior_source))
    if value_of(tp_["t_dp"]) > value_of(t_prior):
        raise InputError(f"the prior {prior.label}'s data-parallel traffic alone ({value_of(tp_['t_dp']):.3g} s) "
                         f"outlasts its published step ({value_of(t_prior):.3g} s): its fabric or layout is misread; "
                         f"no roofline carry from it")
    rename = lambda q, n: q.renamed(n) if isinstance(q, Q) else q  # noqa: E731
    rho = residual_share(rename(tp_["t_pipe"], "t_pipe_prior"), t_prior)
    if value_of(tp_["t_pipe"]) > value_of(t_prior):
        notes.append(f"the terms over-count the prior's step ({value_of(tp_['t_pipe']):.3g} s against its published "
                     f"{value_of(t_prior):.3g} s): no residual carried")
    t_step = carried_step(tt["t_pipe"], rho, tt["t_dp"])
    mfu = step_mfu(tt["flop_step"], tt["G"], tt["F"], t_step)
    return mfu, tp_, tt, notes, value_of(rho)


# ---- setups from what the catalog and a row say ---------------------------------------------------

_LAYERS = re.compile(r"(\d+)\s*layers", re.IGNORECASE)
_HIDDEN = re.compile(r"(?:hidden|d[\s_-]*model|width)\s*(?:size)?\s*[=:]?\s*(\d+)", re.IGNORECASE)


def shapes(model: Model | None, text: str, N: float) -> tuple[int, int, float, str]:
    """(L, D, N_total, how) of a model: the catalog's; else the layers and width a description states ('96 layers,
    hidden 12288'); else those of the catalog's dense model nearest in size (assumed). N_total is N where the model
    is no catalog entry (a dense model's count)."""
    if model is not None:
        return model.n_layers, model.d_model, float(arch.param_counts(model).total), model.file or model.name
    lm, hm = _LAYERS.search(text or ""), _HIDDEN.search(text or "")
    if lm and hm:
        return int(lm.group(1)), int(hm.group(1)), N, f"{text!r}: layers and width as stated"
    near = _nearest_dense(N)
    return near.n_layers, near.d_model, N, (f"{text!r} states no shapes: layers and width of {near.name}, the "
                                            f"catalog's dense model nearest its {N / 1e9:.3g}B (assumed)")


def setup_of_prior(p) -> Setup:
    """The setup of a published run (a catalog TrainingPrior): its system, chips, model, batch and layout."""
    from ..core.load import CatalogError, load_model, load_system
    from .runs import recompute_ratio

    system = load_system(p.system or system_of_chip(p.chip))
    try:
        model = load_model(p.model) if p.model else None
    except CatalogError:
        model = None
    L, D, N_total, how = shapes(model, p.model or p.display_name, p.active_params)
    S = float(p.seq_len)
    attn = float(arch.attention_flop_per_token(model, int(S), "prefill")) if model is not None else 0.0
    r = float(recompute_ratio(p.recompute, p.active_params, attn))
    lay = read_layout(p.parallelism, p.chips, system.domain_chips)
    return Setup(f"{p.row} ({p.name})", system, float(p.chips), p.active_params, N_total, L, D, attn, S,
                 p.global_batch_tokens / S, r, p.recompute, lay, how, (),
                 *((model.n_kv_heads, model.head_dim) if model is not None else ()))


def system_of_chip(chip: str) -> str:
    """The catalog system built of `chip` with the largest scale-up domain (a prior that names none)."""
    from ..core.load import load_system, names

    found = []
    for n in names("systems"):
        try:
            s = load_system(n)
        except Exception:  # noqa: BLE001
            continue
        if s.chip.name == chip:
            found.append((-s.domain_chips, n))
    return min(found)[1] if found else chip


_DENSE: list | None = None


def _nearest_dense(N: float) -> Model:
    global _DENSE
    if _DENSE is None:
        from ..core.load import load_model, names

        found = []
        for n in names("models"):
            try:
                m = load_model(n)
            except Exception:  # noqa: BLE001  (an entry this path cannot size is no candidate)
                continue
            if m.moe is None and getattr(m, "n_layers", None) and getattr(m, "d_model", None):
                found.append((float(arch.param_counts(m).active), m))
        _DENSE = sorted(found, key=lambda x: (x[0], x[1].name))
    return min(_DENSE, key=lambda x: (abs(math.log(N / x[0])), x[1].name))[1]
