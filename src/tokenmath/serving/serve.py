"""What `tokenmath serve` answers: one replica's prefill and decode on G chips, priced and checked for fit.

    tokens_per_s  = T / t_step
    usd_per_mtok  = G · usd_per_chip_hour / 3600 · t_step / T · 1e6
    B*            = R · rho                          (spec: peaks only; Pope's "300 × sparsity")
    B*_prior      = B* · eta_flop / eta_bw           (the knee with efficiency priors)
    t_floor       = N_total · b_w / (G · W)          (every weight read once: no batch beats it)
    memory        = W_all + B · kv_held(S)            vs G · HBM capacity
    W_all         = Σ_kind N_kind · b_kind           (each module kind in the checkpoint's own format; one
                                                      format for all when --precision names another)
    params.total / params.active: matmul parameters WITHOUT the embedding tables (input table and LM head);
    params.total_with_embeddings / params.active_with_embeddings: the model-card counts, with them.
    intervals     rate x: [x·e^lo, x·e^hi];  time or cost t: [t·e^−hi, t·e^−lo]   (basis 'prior' only)
                  lo, hi: the 80 % group of catalog/intervals/serving.yaml for the chip's generation × phase ×
                  precision (split-conformal on validation residuals; measure/intervals.py)

With speculative decoding / MTP (`spec`, serving/speculative.py) decode also reports the speculative
step: t_spec = t_verify + K · t_draft, tau = (1 − α^(K+1)) / (1 − α) tokens per step, and the draft's
weights and KV count in memory.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ..core import arch
from ..core.derive import Numbers, Q, formula, lift, nest, plain, value_of
from ..core.errors import CatalogError, InputError, not_one_of
from ..core.load import load_intervals, load_priors
from ..core.records import ENGINES, Model, Priors, System
from ..core.roofline import BASES, Layout, Step, default_layout, hardware_ratio, latency_floor, optimal_batch, step
from ..core.units import KV_FORMATS, PRECISION_BYTES
from .default_split import fastest_split
from .speculative import Speculation, speculative_step

__all__ = ["ServeReport", "serve", "check_engine", "check_inputs", "held_weights_bytes", "interval_ends", "interval_phase", "interval_scale", "prior_interval_scale", "tokens_per_s", "usd_per_mtok"]


@formula("tokens_per_s = T / t_step", unit="tok/s")
def tokens_per_s(T, t_step):
    return T / t_step


@formula("usd_per_mtok = G · usd_per_chip_hour / 3600 · t_step / T · 1e6", unit="USD")
def usd_per_mtok(G, usd_per_chip_hour, t_step, T):
    with np.errstate(divide="ignore", invalid="ignore"):  # a step with no tokens (empty prompt) costs ∞ per token
        return G * usd_per_chip_hour / 3600 * t_step / T * 1e6


@formula("B_star_prior = B_star · eta_flop / eta_bw", unit="seq")
def optimal_batch_prior(B_star, eta_flop, eta_bw):
    return B_star * eta_flop / eta_bw


@formula("mem_required = W_all + B · kv_held", unit="B")
def memory_required(W_all, B, kv_held):
    return W_all + B * kv_held


weight_bytes = arch.weight_bytes_all  # W_all = N_total · b_w (the lecture's claims use it by this name)


@formula("speedup = (tau / t_spec) / (1 / t_step)", unit="")
def speculative_speedup(tau, t_spec, t_step):
    return (tau / t_spec) / (1 / t_step)


@formula("mem_capacity = G · hbm", unit="B")
def memory_capacity(G, hbm):
    return G * hbm


def _shown(x, pick) -> str:
    """The offending value of a scalar or an array (its min or max), for a one-line message."""
    a = np.asarray(x, dtype=float)
    return f"{float(pick(a)):g}" if a.ndim else f"{float(a):g}"


def check_engine(engine: str | None) -> None:
    """--engine: None, or one of the serving engines whose kernels and scheduler defaults the catalog holds (one
    line with the nearest name otherwise)."""
    if engine is not None and engine not in ENGINES:
        raise not_one_of("--engine", engine, ENGINES)


def check_inputs(*, G=None, B=None, S=None, precision=None, kv_dtype=None, basis=None) -> None:
    """Refuse impossible or absurd values with one line each (arrays: every element)."""
    if G is not None and (np.any(np.asarray(G) < 1) or np.any(np.asarray(G) != np.floor(G))):
        raise InputError(f"--chips must be a whole number ≥ 1 (got {_shown(G, np.min)})")
    if G is not None and np.any(np.asarray(G) > 1_000_000):
        raise InputError(f"--chips {_shown(G, np.max)} is absurd (more than a million chips in one replica)")
    if B is not None and not np.all(np.asarray(B) >= 1):
        raise InputError(f"--batch must be ≥ 1 sequence (got {_shown(B, np.min)})")
    if B is not None and np.any(np.asarray(B) > 1e9):
        raise InputError(f"--batch {_shown(B, np.max)} is absurd (more than a billion sequences per step)")
    if S is not None and not np.all(np.asarray(S) >= 0):
        raise InputError(f"--context must be ≥ 0 tokens (got {_shown(S, np.min)})")
    if S is not None and np.any(np.asarray(S) > 1e9):
        raise InputError(f"--context {_shown(S, np.max)} is absurd (more than a billion tokens)")
    for name, p, ok in (("--precision", precision, PRECISION_BYTES), ("--kv-dtype", kv_dtype, KV_FORMATS)):
        if p is not None and p not in ok:
            raise not_one_of(name, p, ok)
    if basis is not None and basis not in BASES:
        raise InputError(f"--basis must be one of {', '.join(BASES)} (got {basis!r})")


@dataclass
class ServeReport(Numbers):
    model: Model
    system: System
    G: int
    B: object
    S: object
    precision: str
    kv_dtype: str
    basis: str
    prefill: Step
    decode: Step
    numbers: dict  # key -> Q or value: everything the CLI prints

    @property
    def fits(self) -> bool:
        return bool(np.all(self.value("memory.fits")))

    def to_dict(self, derivations: bool = True) -> dict:
        """The JSON the CLI prints: nested keys as documented in the README."""
        out: dict = {
            "model": self.model.name, "system": self.system.name, "chips": self.G, "batch": plain(self.B),
            "context": plain(self.S), "precision": self.precision, "kv_dtype": self.kv_dtype, "basis": self.basis,
            **nest(self.numbers),
        }
        if derivations:
            out["derivations"] = self.derivations()
        return out



@formula("T = pp · T_stream", unit="tok")
def pipeline_tokens(pp, T_stream):
    return pp * T_stream


def check_split(G: int, layout: Layout | None) -> None:
    """A split must tile the replica: pp stages of G/pp chips, tp and ep dividing each stage's chips."""
    if layout is None:
        return
    if layout.pp < 1 or G % layout.pp:
        raise InputError(f"{layout.pp} pipeline stages do not divide {G} chips: give --chips a multiple of pp")
    G_s = G // layout.pp
    for name, ways in (("tensor-parallel", layout.tp), ("expert-parallel", layout.ep)):
        if ways < 1 or ways > G_s or G_s % ways:
            raise InputError(f"{ways} {name} ways do not divide the {G_s} chip(s) of a stage "
                             f"({G} chips{f' in {layout.pp} stages' if layout.pp > 1 else ''})")


def held_weights_bytes(m: Model, G: int, precision: str, layout: Layout | None = None) -> float:
    """The weights G chips hold together under `layout` (the model's default split if None), each module kind in
    its checkpoint's format: what `serve`'s memory fit counts (an MoE's attention data-parallel groups each hold the
    non-expert weights)."""
    W_all = arch.model_weight_bytes(m, precision)
    return float(value_of(_held_weights(m, W_all, G, layout or default_layout(m, G), precision, False)))


def _held_weights(m: Model, W_all, G: int, layout: Layout, precision: str, explain: bool):
    """The weights a stated split's chips hold together: a dense model's G_stage/tp tensor-parallel groups are
    replicas, each with every weight; an MoE's attention groups each hold the non-expert weights
    (engine_memory.held_weight_bytes). The pp stages of a pipeline share one copy between them."""
    from .engine_memory import held_weight_bytes, weights_held
    G_s = G // layout.pp
    if m.moe is None:  # every weight held once per tensor-parallel group: W_held with no experts (W_exp = 0)
        if layout.tp >= G_s:
            return W_all
        return weights_held(lift(explain, "W_exp", 0.0, "B", "a dense model: no experts"), W_all,
                            lift(explain, "G", G_s, "chips", "given: chips / pp"),
                            lift(explain, "tp", layout.tp, "", "given: --split"))
    return held_weight_bytes(m, W_all, G_s, layout.tp, precision, explain)


def _token_chips(m: Model, G: int, layout: Layout | None, g):
    """The chips one token's weights are read on, for the latency floor: all G by default; with a stated split
    one stage's chips (a token passes the pp stages one after another), and of a dense model only its
    tensor-parallel group (its other groups are replicas serving other sequences)."""
    if layout is None:
        return g("G", G, "chips", "given")
    G_s = G // layout.pp
    n = min(layout.tp, G_s) if m.moe is None else G_s
    return g("G", n, "chips", f"given: the chips one token's weights are read on ({G} chips split by --split)")


def serve(m: Model, system: System, *, G: int | None = None, B=128, S=4096, precision: str | None = None,
          kv_dtype: str | None = None, basis: str = "prior", priors: Priors | None = None,
          engine: str | None = None, explain: bool = False, spec: Speculation | None = None,
          layout: Layout | None = None) -> ServeReport:
    """Prefill and decode of B sequences at context S on G chips (default: one scale-up domain), split as `layout`
    says (default: tensor parallel for a dense model; for an MoE the split of the engines' whose decode step at B, S
    is fastest, default_split.fastest_split; a speculative step runs on the same split). With pipeline
    stages (layout.pp) the G chips are pp streams of G/pp chips, each with B/pp of the sequences
    (roofline.Layout.pp: a token's time through the stages is one step of every layer on G/pp chips)."""
    G = system.domain_chips if G is None else G
    pp = layout.pp if layout is not None else 1
    check_split(G, layout)
    if layout is not None and spec is not None:
        raise InputError("a stated split with speculative decoding is not modelled: drop --split or --mtp")
    precision = precision or m.weight_dtype
    chip = system.chip
    pri = (priors or load_priors(chip.priors)).for_engine(engine)
    # on a calibrated profile (a local framework) the KV cache is kept in the model's own dtype; a stack that
    # computes in fp32 stores its keys and values in fp32 too
    local_kv = (pri.formats is not None and precision in ("fp32", "bf16", "fp16")) or precision == "fp32"
    kv_dtype = kv_dtype or (precision if local_kv else m.kv_dtype)
    check_inputs(G=G, B=B, S=S, precision=precision, kv_dtype=kv_dtype, basis=basis)
    check_engine(engine)
    lay, chosen = (layout, "") if layout is not None else fastest_split(
        m, system, G=G, B=B, S=S, precision=precision, kv_dtype=kv_dtype, basis=basis, priors=pri)
    kw = dict(G=G // pp, B=B / pp if pp > 1 else B, S=S, precision=precision, kv_dtype=kv_dtype, basis=basis,
              priors=pri, explain=explain, layout=lay)
    pre, dec = step(m, system, phase="prefill", **kw), step(m, system, phase="decode", **kw)
    g = lambda sym, v, unit="", src=None: lift(explain, sym, v, unit, src)  # noqa: E731
    if pp > 1:  # the pp streams' tokens, each stream's step in flight at once
        ppq = g("pp", pp, "", "given: pipeline stages (--split)")
        pre, dec = (dataclasses.replace(st, tokens=pipeline_tokens(ppq, st.tokens)) for st in (pre, dec))
    Gq = g("G", G, "chips", "given")
    price = system.usd_per_chip_hour
    numbers: dict = {"split": (lay or default_layout(m, G // pp)).words(G // pp)}  # a stage's, as tables write it
    if chosen:
        numbers["split_choice"] = chosen
    for name, st in (("prefill", pre), ("decode", dec)):
        numbers[f"{name}.step_time_s"] = st.t_step
        numbers[f"{name}.tokens_per_s"] = tps = tokens_per_s(st.tokens, st.t_step)
        numbers[f"{name}.tokens_per_s_per_chip"] = tokens_per_s(st.tokens, st.t_step) / G if not explain else \
            Q("tokens_per_s_per_chip", value_of(tps) / G, "tok/s", "tokens_per_s_per_chip = tokens_per_s / G",
              {"tokens_per_s": tps, "G": Gq})
        empty = not np.all(np.asarray(value_of(st.tokens)) > 0)  # a prefill at context 0: no prompt
        numbers[f"{name}.usd_per_mtok"] = (
            usd_per_mtok(Gq, g("usd_per_chip_hour", price, "USD", system.price_source()), st.t_step, st.tokens)
            if price and not empty else None)
        if empty:
            numbers[f"{name}.note"] = "no tokens in this step (an empty prompt): no cost per token"
        numbers[f"{name}.bound"] = st.bound
        for term in ("t_math", "t_weights", "t_kv", "t_comm", "t_overhead"):
            numbers[f"{name}.{term}_s"] = getattr(st, term)
        numbers[f"{name}.basis"] = basis
    b_w = arch.bytes_per(precision)
    pc = arch.param_counts(m, explain)
    peak_src = chip.source_of(f"peak_flop_per_s.{chip.peak_precision(precision)}")
    F = g("F", chip.peak(precision), "FLOP/s", peak_src)
    W = g("W", chip.hbm_bandwidth_bytes_per_s, "B/s", chip.source_of("hbm_bandwidth_bytes_per_s"))
    bq = g("b_w", b_w, "B", f"{precision} weights")
    R = hardware_ratio(F, W, bq)
    Bs = optimal_batch(R, pc.rho)
    numbers["hardware_ratio"] = R
    numbers["rho"] = pc.rho
    # parameter counts, one convention (README): matmul parameters without the embedding tables (input
    # table and LM head), and with them (a tied table once); active = what one token's forward pass uses
    emb = float(value_of(pc.embedding))
    src_p = f"{m.file or m.name}: tokenmath.core.arch.param_counts"
    for key, sym, v, what in (
            ("params.total", "N_total_no_emb", pc.total_matmul, "all weights but the embedding tables"),
            ("params.active", "N_active_no_emb", pc.active_matmul, "weights one token uses, no embedding tables"),
            ("params.total_with_embeddings", "N_total", float(value_of(pc.total)), "all weights, embeddings included"),
            ("params.active_with_embeddings", "N_active", float(value_of(pc.active)),
             "weights one token uses, embeddings included"),
            ("params.embeddings", "N_emb", emb, "input embedding table + untied LM head")):
        numbers[key] = g(sym, v, "params", f"{src_p} ({what})")
    numbers["optimal_batch"] = Bs
    numbers["optimal_batch_prior"] = optimal_batch_prior(Bs, g("eta_flop", pri.eta_flop, "", pri.source_of("eta_flop")),
                                                         g("eta_bw", pri.eta_bw, "", pri.source_of("eta_bw")))
    numbers["latency_floor_s"] = latency_floor(pc.total, bq, _token_chips(m, G, layout, g), W)
    numbers["latency_floor_basis"] = "spec"
    W_all = arch.model_weight_bytes(m, precision, explain, pc)  # each module kind in the checkpoint's format
    kv_held = g("kv_held", arch.kv_stored_bytes(m, S, kv_dtype), "B",
                f"{m.file or m.name}: KV bytes held per sequence at context S ({kv_dtype})")
    # the split's data-parallel groups each hold their copy of the weights: a stated split's, or the default one the
    # step ran (an MoE's data-parallel attention: the non-expert weights once per chip)
    W_all = _held_weights(m, W_all, G, lay or default_layout(m, G), precision, explain)
    req = memory_required(W_all, g("B", B, "seq", "given"), kv_held)
    cap = memory_capacity(Gq, g("hbm", chip.hbm_capacity_bytes, "B", chip.source_of("hbm_capacity_bytes")))
    numbers["memory.required_bytes"] = req
    numbers["memory.capacity_bytes"] = cap
    numbers["memory.weights_bytes"] = W_all
    numbers["memory.kv_bytes"] = value_of(req) - value_of(W_all)
    numbers["memory.fits"] = value_of(req) <= value_of(cap)
    if spec is not None:
        sp = speculative_step(m, system, spec, G=G, B=B, S=S, precision=precision, kv_dtype=kv_dtype, basis=basis,
                              priors=pri, explain=explain, layout=lay)
        numbers["decode.speculative.draft_tokens"] = spec.K
        numbers["decode.speculative.acceptance"] = spec.alpha
        numbers["decode.speculative.draft"] = spec.kind
        numbers["decode.speculative.tokens_per_step"] = sp.tau
        numbers["decode.speculative.step_time_s"] = sp.t_spec
        numbers["decode.speculative.tpot_s"] = sp.tpot
        numbers["decode.speculative.tokens_per_s"] = tokens_per_s(value_of(sp.tau) * value_of(B), sp.t_spec)
        numbers["decode.speculative.speedup"] = speculative_speedup(sp.tau, sp.t_spec, dec.t_step)
        draft = spec.extra_weight_bytes(m, precision) + value_of(B) * spec.extra_kv_bytes(m, S, kv_dtype)
        numbers["memory.draft_bytes"] = draft
        numbers["memory.required_bytes"] = value_of(req) + draft
        numbers["memory.fits"] = value_of(req) + draft <= value_of(cap)
    numbers["kv_bytes_per_token"] = arch.kv_bytes_per_token(m, kv_dtype, explain)
    if engine:
        numbers["engine"] = engine
    if basis == "prior":
        _intervals(numbers, pri, precision)
        for ph, st in (("prefill", pre), ("decode", dec)):
            if "interval" in st.extras:  # a calibrated profile: its own measurement spread (÷/× 2 extrapolated)
                lo, hi = st.extras["interval"]
                t, tps = value_of(st.t_step), value_of(numbers[f"{ph}.tokens_per_s"])
                numbers[f"{ph}.step_time_s_interval"] = [lo, hi]
                numbers[f"{ph}.tokens_per_s_interval"] = [tps * t / hi, tps * t / lo]
                numbers[f"{ph}.interval_group"] = f"{pri.file or pri.name}: the spread of the measured tables read"
                numbers.pop(f"{ph}.usd_per_mtok_interval", None)
                for name in ("tokens_per_s_per_chip", "speculative.tokens_per_s", "speculative.step_time_s",
                             "speculative.tpot_s"):
                    numbers.pop(f"{ph}.{name}_interval", None)
    return ServeReport(m, system, G, B, S, precision, kv_dtype, basis, pre, dec, numbers)


def interval_phase(key: str) -> str:
    """The interval phase of a quantity under load (how validation rows key their residuals): a TTFT's own, the
    decode steps' for TPOT, ITL and per-user speed, a whole run's for throughput and end-to-end times."""
    return "ttft" if key == "ttft_s" else "decode" if key in ("tpot_s", "itl_s", "tokens_per_s_per_user") else "run"


def interval_scale(pri: Priors, phase: str, precision: str) -> tuple[float, float, str] | None:
    """The 80 % interval of a predicted rate x in this phase ('prefill', 'decode', 'ttft', 'run'), as factors
    (x·down, x·up) — a time t ∝ 1/rate lies in [t/up, t/down] — and the group's name; None without a stored table
    (catalog/intervals/serving.yaml: the chip's generation × phase × precision, split-conformal on validation
    residuals)."""
    try:
        iv = load_intervals()
    except CatalogError:  # no interval table in the catalog: no intervals
        return None
    key, b = iv.group(pri.generation, phase, precision)
    return float(np.exp(b.lo)), float(np.exp(b.hi)), f"{key} ({iv.file or iv.name}; n = {b.n})"


def prior_interval_scale(pri: Priors, basis: str, phase: str, precision: str) -> tuple[float, float, str] | None:
    """interval_scale where serve's residual groups apply: the prior basis on catalog priors (a calibrated profile
    carries its own measured spread, the spec basis is a bound); None elsewhere."""
    return interval_scale(pri, phase, precision) if basis == "prior" and pri.formats is None else None


def interval_ends(x, scale: tuple[float, float, str], rate: bool):
    """The 80 % interval of a predicted x (a float or an array: the ends stacked on a last axis) from an
    interval_scale: a rate [x·down, x·up], a time or a cost ∝ time [x/up, x/down]."""
    down, up = scale[0], scale[1]
    ends = [x * down, x * up] if rate else [x / up, x / down]
    return np.stack(ends, axis=-1) if isinstance(x, np.ndarray) else [float(e) for e in ends]


def phase_time_intervals(numbers: dict, system: System, precision: str, keys, group_key) -> bool:
    """80 % intervals of quantities ∝ each phase's step time (a time, chip-seconds, a cost: [x/up, x/down]) from serve's
    residual groups: keys(phase) names them, group_key(phase) where the group is written; False (none written) on a
    calibrated profile, whose own measured spread serve gives, or without a stored table."""
    pri = load_priors(system.chip.priors)
    if pri.formats is not None:
        return False
    scales = {ph: interval_scale(pri, ph, precision) for ph in ("prefill", "decode")}
    if any(sc is None for sc in scales.values()):
        return False
    for ph, scale in scales.items():
        numbers[group_key(ph)] = scale[2]
        for k in keys(ph):
            x = value_of(numbers.get(k))
            if x is not None:
                numbers[f"{k}_interval"] = interval_ends(float(x), scale, rate=False)
    return True


def _intervals(numbers: dict, pri: Priors, precision: str) -> None:
    """80 % prediction intervals of each phase's rates, times and costs, from the stored validation residuals."""
    for ph in ("prefill", "decode"):
        scale = interval_scale(pri, ph, precision)
        if scale is None:
            return
        down, up, group = scale
        # a speculative decode's verify step is a decode step (the acceptance is the user's, taken as given)
        for name, rate in (("tokens_per_s", True), ("tokens_per_s_per_chip", True), ("step_time_s", False),
                           ("usd_per_mtok", False), ("speculative.tokens_per_s", True),
                           ("speculative.step_time_s", False), ("speculative.tpot_s", False)):
            x = value_of(numbers.get(f"{ph}.{name}"))
            if x is not None:
                numbers[f"{ph}.{name}_interval"] = [x * down, x * up] if rate else [x / up, x / down]
        numbers[f"{ph}.interval_group"] = group
