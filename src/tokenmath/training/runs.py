"""Training runs: FLOP, time and cost at a published MFU, memory per chip, the pipeline bubble, and a split.

Notation: N_active active parameters, D_tok training tokens (the D of "6ND"; D alone is d_model), s
sequence length, b sequences per micro-batch, D d_model, N query heads, L layers, G chips, F the
chip's dense BF16 peak, tp/cp/pp/dp/ep tensor/context/pipeline/data/expert-parallel ways, M micro-batches per
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

Memory per chip is `training.memory`; the bubble and the split search `training.splits`; published
runs predicted in `training.rows`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..core import arch
from ..core.derive import Numbers, Q, formula, lift, nest, value_of
from ..core.errors import InputError
from ..core.load import CatalogError, load_chip, load_intervals, load_training_priors
from ..core.records import Chip, Model, System, TrainingPrior
from .memory import (ADAM_SOURCE, OPTIMIZER_BYTES_PER_PARAM, act_full, act_layer_input, act_layer_none,
                     act_layer_selective, act_reversible, act_stored, in_flight, dense_params_per_chip, expert_params_per_chip,
                     memory_total, state_bytes, _shape)
from .splits import MFU_PEAK, ZERO_STAGES, Split, pipeline_bubble, search_splits

__all__ = ["TrainReport", "train", "select_prior", "recompute_ratio", "check_train_inputs", "RECOMPUTE", "MFU_PEAK"]

RECOMPUTE = ("none", "selective", "full")
CARRY_RUN = ("hfu", "roofline")  # what `train` carries from the prior run (rows.CARRY adds 'mfu' for validation)


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
        if self.numbers.get("carry") == "roofline" and "mfu" not in keys:
            keys = ["mfu", *keys]  # the carried MFU's derivation: both steps' terms and the residual share
        return "\n\n".join(f"── {k} ──\n{self.numbers[k].explain()}" for k in keys if isinstance(self.numbers[k], Q))


def check_train_inputs(*, G, tokens, S=None, mfu=None, recompute="selective", pp=None, microbatches=None,
                       tp=None, ep=None, zero=None, interleave=1, batch_tokens=None, cp=None) -> None:
    """Refuse impossible or absurd values with one line each."""
    if G < 1 or G != int(G):
        raise InputError(f"--chips must be a whole number ≥ 1 (got {G})")
    if G > 10_000_000:
        raise InputError(f"--chips {G} is absurd (more than ten million chips)")
    if not tokens >= 1:
        raise InputError(f"--tokens must be at least 1 token (got {tokens:g})")
    if tokens > 1e18:
        raise InputError(f"--tokens {tokens:g} is absurd (more than 1e18 tokens)")
    if S is not None and not 1 <= S <= 1e8:
        raise InputError(f"--seq-len must be between 1 and 1e8 tokens (got {S})")
    if mfu is not None and not 1e-3 <= mfu <= 1:
        raise InputError(f"--mfu must be a fraction in [0.001, 1] (got {mfu:g}); 40 % is 0.4")
    if recompute not in RECOMPUTE:
        raise InputError(f"--recompute must be one of {', '.join(RECOMPUTE)} (got {recompute!r})")
    for name, x in (("--pp", pp), ("--microbatches", microbatches), ("--tp", tp), ("--ep", ep),
                    ("--interleave", interleave), ("--cp", cp)):
        if x is not None and not 1 <= x <= 1e9:
            raise InputError(f"{name} must be between 1 and 1e9 (got {x})")
    if pp is not None and G % pp:
        raise InputError(f"--pp {pp} does not divide --chips {G}")
    if cp is not None and G % cp:
        raise InputError(f"--cp {cp} does not divide --chips {G}")
    if zero is not None and zero not in ZERO_STAGES:
        raise InputError(f"--zero must be one of 0, 1, 2, 3 (got {zero})")
    if batch_tokens is not None and not 1 <= batch_tokens <= 1e13:
        raise InputError(f"--batch-tokens must be between 1 and 1e13 tokens (got {batch_tokens:g})")


def _intervals(numbers: dict) -> dict:
    """80 % intervals of the MFU (a rate: [x·e^lo, x·e^hi]) and the time, chip-hours and cost (∝ 1/MFU: [x·e^−hi,
    x·e^−lo]) from catalog/intervals/training.yaml: split-conformal on the held-out TRN residuals, one pooled group
    (benchmarks/training_interval_table.py). {} without the table."""
    try:
        iv = load_intervals("training")
    except CatalogError:
        return {}
    key, b = iv.group("*", "train", "*")
    down, up = math.exp(b.lo), math.exp(b.hi)
    out = {"mfu_interval": [value_of(numbers["mfu"]) * down, min(1.0, value_of(numbers["mfu"]) * up)]}
    for k in ("time_s", "time_days", "chip_hours", "cost_usd"):
        if numbers.get(k) is not None:
            x = float(value_of(numbers[k]))
            out[f"{k}_interval"] = [x / up, x / down]
    out["interval_group"] = f"{key} ({iv.file or iv.name}; n = {b.n})"
    return out


def train(m: Model, system: System, *, G: int, tokens: float, S: int | None = None, mfu: float | None = None,
          recompute: str = "selective", reversible: bool = False, pp: int | None = None,
          microbatches: int | None = None, tp: int | None = None, ep: int | None = None, zero: int | None = None,
          interleave: int = 1, batch_tokens: float | None = None, exclude_priors: tuple[str, ...] = (),
          carry: str = "hfu", explain: bool = False, cp: int | None = None) -> TrainReport:
    """FLOP, time, cost, memory per chip, bubble and split of pre-training m on G chips of `system`. carry='hfu'
    carries the prior's hardware-FLOP utilisation unchanged; carry='roofline' rebuilds the prior's step on this
    run's chip, fabric, model and chosen split and carries its residual share (training.carry)."""
    if carry not in CARRY_RUN:
        raise InputError(f"--carry must be one of {', '.join(CARRY_RUN)} (got {carry!r})")
    check_train_inputs(G=G, tokens=tokens, S=S, mfu=mfu, recompute=recompute, pp=pp, microbatches=microbatches,
                       tp=tp, ep=ep, zero=zero, interleave=interleave, batch_tokens=batch_tokens, cp=cp)
    chip = system.chip
    pc = arch.param_counts(m)
    prior, why = select_prior(chip, G=G, S=S, N_active=pc.active, moe=m.moe is not None, exclude=exclude_priors)
    S = int(S or prior.seq_len)
    src_m = m.file or m.name
    g = lambda sym, v, unit="", src=None: lift(explain, sym, v, unit, src)  # noqa: E731

    # FLOP
    Nq = g("N_active", pc.active, "params", f"{src_m}: active parameters (tokenmath.core.arch.param_counts)")
    Dq = g("D_tok", tokens, "tok", "given (--tokens)")
    attn = g("attn_fwd", arch.attention_flop_per_token(m, S, "prefill"), "FLOP/tok",
             f"{src_m}: forward QK and AV per token over a causal sequence of {S:,} (tokenmath.core.arch)")
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

    # split and memory
    bt = batch_tokens or prior.global_batch_tokens
    bt_src = "given (--batch-tokens)" if batch_tokens else prior.source_of("global_batch_tokens")
    global_seqs = max(1.0, bt / S)
    flop_step = (value_of(f6) + value_of(fa)) / tokens * global_seqs * S
    splits = search_splits(m, system, G=G, S=S, global_seqs=global_seqs, flop_step=flop_step, mfu=value_of(mfu_q),
                           hfu=value_of(ratio), recompute=recompute, reversible=reversible, tp=tp, pp=pp, ep=ep,
                           zero=zero, microbatches=microbatches, interleave=interleave, cp=cp)
    if not splits:
        raise InputError(f"no tensor/context/pipeline/data split of {G} chips works for {m.name} with a global batch "
                         f"of {global_seqs:,.0f} sequences of {S:,} (check --tp/--cp/--pp/--ep/--microbatches against "
                         f"--chips, --seq-len and --batch-tokens)")
    sp = splits[0]
    carry_notes: list[str] = []
    if carry == "roofline" and mfu is None:
        mfu_q, carry_notes = _roofline(m, system, prior, sp, G, S, bt, recompute, reversible, interleave,
                                       value_of(Nq), value_of(attn), explain)
        ratio = g("hfu_ratio", 1.0, "", "the roofline carry prices this run's recomputation in its matmul time")
        mfu_source += "; carried by the roofline of its step (training.carry)"
    t = train_time(flop, ratio, Gq, Fq, mfu_q)
    hours = chip_hours(Gq, t)
    price = system.usd_per_chip_hour
    cost = train_cost(hours, g("usd_per_chip_hour", price, "USD", system.price_source())) if price else None
    numbers: dict = {"flop": flop, "flop_6nd": f6, "flop_attention": fa, "mfu": mfu_q, "mfu_source": mfu_source,
                     "mfu_prior": prior.name if mfu is None else None, "mfu_prior_row": prior.row if mfu is None else None,
                     "recompute": "reversible" if reversible else recompute, "hfu_ratio": ratio, "time_s": t,
                     "time_days": value_of(t) / 86400, "chip_hours": hours, "cost_usd": cost,
                     "usd_per_chip_hour": price, "price_source": system.price_source() if price else None,
                     "carry": carry if mfu is None else "given", "carry_notes": carry_notes}
    if mfu is None and carry == "hfu":  # the carry the held-out TRN residuals were predicted with
        numbers.update(_intervals(numbers))
    numbers.update(_memory_numbers(m, system, sp, S, recompute, reversible, explain))
    numbers.update(_split_numbers(sp, bt, bt_src, S, interleave, len([x for x in splits if x.fits]), explain))
    numbers["reversible.flop_overhead"] = value_of(ratio_full(pc.active, value_of(attn))) - 1
    return TrainReport(m, system, G, tokens, S, prior, sp, numbers)


def _roofline(m: Model, system: System, prior: TrainingPrior, sp: Split, G: int, S: int, bt: float, recompute: str,
              reversible: bool, v: int, N_active: float, attn_fwd: float, explain: bool):
    """The MFU of this run's chosen split by the roofline carry from `prior` (training.carry), and its notes."""
    from .carry import Layout, Setup, carried_mfu, setup_of_prior

    policy = "full" if reversible else recompute
    r = float(recompute_ratio(recompute, N_active, attn_fwd, reversible))
    lay = Layout(sp.tp, sp.cp, sp.pp, float(sp.dp), v, float(sp.b), sp.zero)
    target = Setup("this run", system, float(G), N_active, float(arch.param_counts(m).total), m.n_layers, m.d_model,
                   attn_fwd, float(S), bt / S, r, policy, lay, m.file or m.name, K=m.n_kv_heads, H=m.head_dim)
    q, _, _, notes, rho = carried_mfu(setup_of_prior(prior), prior.mfu, target, explain,
                                      f"{prior.source_of('mfu')} [{prior.name}]")
    return (q.renamed("mfu") if isinstance(q, Q) else q), [f"residual share of {prior.name}'s step: "
                                                           f"{100 * rho:.1f} %", *notes]


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
    s_r = g("s_r", S / sp.cp, "tok", f"sequence length / cp = {sp.cp} (tokens per context-parallel rank)") \
        if sp.cp > 1 else s
    D, N = g("D", m.d_model, "", src_m), g("N", m.n_heads, "", src_m)
    kor = "Korthikanti et al. 2022 (arXiv 2205.05198) §4, with sequence parallelism"
    n_fl = in_flight(g("M", sp.M, "", "micro-batches per step"), pp)
    L_stage = g("L_stage", math.ceil(m.n_layers / sp.pp), "", f"⌈L/pp⌉ layers on the first stage ({src_m})")
    a_sel = act_layer_selective(s_r, b, D, tp)
    a_none = act_layer_none(s_r, b, D, N, s, tp)
    variants = {
        "none": act_stored(n_fl, L_stage, a_none.renamed("a_layer") if explain else a_none),
        "selective": act_stored(n_fl, L_stage, a_sel.renamed("a_layer") if explain else a_sel),
        "full": act_full(n_fl, L_stage, act_layer_input(s_r, b, D, tp), a_sel),
        "reversible": act_reversible(n_fl, act_layer_input(s_r, b, D, tp), a_sel),
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
    return {"bubble": bub, "split.tp": sp.tp, "split.cp": sp.cp, "split.pp": sp.pp, "split.dp": sp.dp,
            "split.ep": sp.ep, "split.zero": sp.zero, "split.microbatches": sp.M, "split.micro_batch_seqs": sp.b,
            "split.global_batch_tokens": bt, "split.global_batch_source": bt_src, "split.interleave": v,
            "split.comm_fraction": sp.comm_fraction, "split.score": sp.score,
            **{f"split.t_{k}_s": x for k, x in sp.comm_s.items()}, "split.fitting_candidates": n_fitting}
