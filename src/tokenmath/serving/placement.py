"""Fitting a model onto chips: tensor / expert / pipeline / data-parallel splits, memory per chip, comm per step.

One replica is pp pipeline stages of n_stage = tp · ep chips. Within a stage the dense part
(attention, dense MLPs, shared experts, embeddings) is split tp ways and repeated on each of the ep
expert-parallel ranks (attention data-parallel, as DeepSeek serves), and the routed experts are
split over all tp · ep chips. dp replicas share the chips allowed (default: one scale-up domain).

    W_chip  = N_dense · b_w / (tp · pp) + N_routed · b_w / (tp · ep · pp)
    kv_chip = pp · B · kv_held / (pp · ep · tp_kv)        (ledger P3/P4: micro-batches = stages, so the
                                                           pp sequences-in-flight factor cancels)
    tp_kv   = min(tp, K) for GQA/MHA (heads split), 1 for MLA (the latent is shared by all heads)
    fits    ⇔  W_chip + kv_chip ≤ HBM per chip

Here B is the batch one stage works on per step (about B* for efficiency); the replica keeps pp·B
sequences in flight. Weights per chip fall with pp; KV per chip — and per stage, per domain — does not.

Communication per decode step of one micro-batch through the replica:
- expert all-to-all and tensor all-reduce from the core (`roofline.step` with Layout(tp, ep) on the
  stage's chips); an expert group spanning n scale-up domains sends 1 − 1/n of its tokens over the
  scale-out network (ledger E4);
- pipeline hops: t_pp = hops · (B · D · b_act / (n_stage · bw) + lat), on scale-out where a stage
  boundary is a domain boundary, scale-up otherwise (ledger P7: microseconds, not milliseconds).

The largest model a domain can hold at a batch and context (ledger E7, P5, M3):
    N_max = (G_domain · hbm − B · kv_held) / b_w
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..core import arch
from ..core.derive import Numbers, formula, lift, plain, value_of
from ..core.errors import InputError
from ..core.load import load_priors
from ..core.records import Model, System
from ..core.roofline import Layout, step
from .serve import check_inputs, interval_ends, prior_interval_scale

__all__ = ["weights_per_chip", "kv_per_chip", "pipeline_hop_time", "largest_model", "Placement", "place",
           "split_params", "candidate_splits"]


@formula("W_chip = N_dense · b_w / (tp · pp) + N_routed · b_w / (tp · ep · pp)", unit="B")
def weights_per_chip(N_dense, N_routed, b_w, tp, ep, pp):
    return N_dense * b_w / (tp * pp) + N_routed * b_w / (tp * ep * pp)


@formula("kv_chip = pp · B · kv_held / (pp · ep · tp_kv)", unit="B")
def kv_per_chip(pp, B, kv_held, ep, tp_kv):
    return pp * B * kv_held / (pp * ep * tp_kv)


@formula("mem_chip = W_chip + kv_chip", unit="B")
def memory_per_chip(W_chip, kv_chip):
    return W_chip + kv_chip


@formula("t_pp = hops · (B · D · b_act / (n_stage · bw) + lat)", unit="s")
def pipeline_hop_time(hops, B, D, b_act, n_stage, bw, lat):
    return hops * (B * D * b_act / (n_stage * bw) + lat)


@formula("N_max = (G · hbm − B · kv_held) / b_w", unit="params")
def largest_model(G, hbm, B, kv_held, b_w):
    return np.maximum(G * hbm - B * kv_held, 0.0) / b_w


def split_params(m: Model) -> tuple[float, float]:
    """(N_dense, N_routed): parameters every rank keeps vs parameters spread over expert ranks."""
    pc = arch.param_counts(m)
    routed = float(arch.n_moe_layers(m) * m.moe.n_routed_experts * pc.expert) if m.moe else 0.0
    return float(pc.total) - routed, routed


def _kv_split(m: Model, tp):
    """Ways the KV cache splits across tensor-parallel ranks: KV heads for GQA/MHA, none for MLA."""
    return np.ones_like(tp, dtype=float) if m.mla is not None else np.minimum(tp, m.n_kv_heads).astype(float)


def _ladder(limit: int, extra: tuple[int, ...]) -> np.ndarray:
    p = 2 ** np.arange(0, int(np.log2(max(limit, 1))) + 1)
    return np.unique(np.concatenate([p, [x for x in extra if 1 <= x <= limit]])).astype(int)


def candidate_splits(m: Model, system: System, max_chips: int, tp=None, ep=None, pp=None):
    """Every (tp, ep, pp) with tp·ep·pp ≤ max_chips, as arrays (powers of two, the domain size, max_chips)."""
    extra = (system.domain_chips, max_chips)
    tps = np.array([tp]) if tp else _ladder(min(max_chips, m.n_heads), extra)
    tps = tps[tps <= m.n_heads]
    if m.moe is None:
        eps = np.array([1])
        if ep and ep != 1:
            raise InputError(f"{m.name} is dense: expert parallelism needs experts (use --ep 1 or leave it out)")
    else:
        eps = np.array([ep]) if ep else _ladder(min(max_chips, m.moe.n_routed_experts), extra)
    pps = np.array([pp]) if pp else _ladder(min(max_chips, m.n_layers), extra)
    T, E, P = (a.ravel() for a in np.meshgrid(tps, eps, pps, indexing="ij"))
    keep = T * E * P <= max_chips
    return T[keep], E[keep], P[keep]


@dataclass
class Placement(Numbers):
    model: Model
    system: System
    B: float
    S: float
    precision: str
    kv_dtype: str
    basis: str
    max_chips: int
    splits: dict  # column -> array, one row per split
    best: int | None  # row index of the best split that fits (most tokens/s per chip), or None
    requested: int | None  # row index of the split the user asked for, if one
    numbers: dict = field(default_factory=dict)  # key -> Q or value

    @property
    def fits(self) -> bool:
        i = self.requested if self.requested is not None else self.best
        return bool(i is not None and self.splits["fits"][i])

    def row(self, i: int) -> dict:
        """One split; a figure that does not apply to it (a split that cannot run has no step time) is left out."""
        out = {k: plain(v[i]) for k, v in self.splits.items()}
        return {k: v for k, v in out.items() if v != "" and not np.isnan(v if isinstance(v, (float, list)) else 0).any()}

    def to_dict(self, derivations: bool = False) -> dict:
        chosen = self.requested if self.requested is not None else self.best
        out = {"model": self.model.name, "system": self.system.name, "batch": self.B, "context": self.S,
               "precision": self.precision, "kv_dtype": self.kv_dtype, "basis": self.basis,
               "max_chips": self.max_chips, "domain_chips": self.system.domain_chips, "fits": self.fits,
               "split": None if chosen is None else self.row(chosen),
               "requested": None if self.requested is None else self.row(self.requested),
               "best": None if self.best is None else self.row(self.best)}
        for k, q in self.numbers.items():
            out[k] = plain(value_of(q))
        out["splits"] = [self.row(i) for i in range(len(self.splits["tp"]))]
        if derivations:
            out["derivations"] = self.derivations()
        return out


def place(m: Model, system: System, *, B: float = 128, S: float = 4096, max_chips: int | None = None,
          tp: int | None = None, ep: int | None = None, pp: int | None = None, precision: str | None = None,
          kv_dtype: str | None = None, basis: str = "prior", explain: bool = False) -> Placement:
    """Every split of one replica over at most max_chips chips, with memory, fit, comm and throughput."""
    dom = system.domain_chips
    max_chips = dom if max_chips is None else int(max_chips)
    precision = precision or m.weight_dtype
    kv_dtype = kv_dtype or m.kv_dtype
    check_inputs(G=max_chips, B=B, S=S, precision=precision, kv_dtype=kv_dtype, basis=basis)
    for name, x in (("--tp", tp), ("--ep", ep), ("--pp", pp)):
        if x is not None and x < 1:
            raise InputError(f"{name} must be ≥ 1 (got {x})")
    if tp and ep and pp and tp * ep * pp > max_chips:
        max_chips = tp * ep * pp  # a requested split sets its own chip count
    if pp and pp > m.n_layers:
        raise InputError(f"--pp {pp} exceeds the model's {m.n_layers} layers")
    if m.moe is not None and ep and ep > m.moe.n_routed_experts:
        raise InputError(f"--ep {ep} exceeds the model's {m.moe.n_routed_experts} routed experts")
    T, E, P = candidate_splits(m, system, max_chips, tp, ep, pp)
    if T.size == 0:
        raise InputError(f"no split with tp={tp}, ep={ep}, pp={pp} fits in {max_chips} chips")
    chip = system.chip
    pri = load_priors(chip.priors)
    b_w = arch.bytes_per(precision)
    N_dense, N_routed = split_params(m)
    kv_held = float(arch.kv_stored_bytes(m, S, kv_dtype))
    hbm = chip.hbm_capacity_bytes
    n_stage = T * E
    G = n_stage * P

    # memory per chip, vectorised over the splits
    W_chip = weights_per_chip(N_dense, N_routed, b_w, T, E, P)
    tp_kv = _kv_split(m, T)
    kv_chip = kv_per_chip(P, B, kv_held, E, tp_kv)
    mem = memory_per_chip(W_chip, kv_chip)
    fits = mem <= hbm

    # pipeline hops: a boundary is a domain boundary when a stage fills a domain, or between domains
    n_dom = np.ceil(G / dom)
    hops_out = np.where(n_stage >= dom, P - 1, np.minimum(n_dom - 1, P - 1))
    hops_up = P - 1 - hops_out
    out_bw = (system.scaleout_bw or 0.0) * pri.eta_scaleout
    up_bw = (system.scaleup_bw or 0.0) * pri.eta_scaleup
    with np.errstate(divide="ignore", invalid="ignore"):
        t_pp = (pipeline_hop_time(hops_up, B, m.d_model, 2.0, n_stage, up_bw if up_bw else np.inf,
                                  pri.scaleup_latency_s)
                + pipeline_hop_time(hops_out, B, m.d_model, 2.0, n_stage, out_bw if out_bw else np.inf,
                                    pri.scaleout_latency_s))
    t_pp = np.where((hops_out > 0) & (out_bw == 0), np.inf, t_pp)

    # step time and collectives per distinct stage layout, from the core roofline; a layout the system
    # cannot run (a stage spanning domains with no scale-out network in the catalog) gets its reason instead
    t_step = np.full(T.shape, np.nan)
    t_comm = np.full(T.shape, np.nan)
    reason = np.full(T.shape, "", dtype=object)
    for tp_i, ep_i in sorted({(int(a), int(b)) for a, b in zip(T, E)}):
        sel = (T == tp_i) & (E == ep_i)
        try:
            st = step(m, system, G=tp_i * ep_i, B=B, S=S, phase="decode", precision=precision, kv_dtype=kv_dtype,
                      basis=basis, priors=pri, layout=Layout(tp=tp_i, ep=ep_i))
        except InputError as e:
            reason[sel] = str(e)
            continue
        t_step[sel] = float(st.v("t_step"))
        t_comm[sel] = float(np.asarray(st.v("t_comm")))
    reason[(reason == "") & ~np.isfinite(t_pp)] = (f"a pipeline hop crosses domains and {system.name} has no "
                                                   "scale-out bandwidth in the catalog")
    runs = reason == ""
    if not runs.any():  # nothing to compare: the reason is not the split's (e.g. a precision the chip lacks)
        raise InputError(str(reason[0]))
    latency = np.where(runs, t_step + np.where(runs, t_pp, 0.0), np.nan)
    tok_per_chip = B / (n_stage * latency)  # pp micro-batches of B in flight, one finished per stage-time

    ep_domains = np.ceil(np.maximum(n_stage, 1) / dom)
    tier = np.where(n_stage > dom, "scale-out", "scale-up")
    pp_tier = np.where(hops_out > 0, "scale-out", np.where(P > 1, "scale-up", "—"))
    splits = {
        "tp": T, "ep": E, "pp": P, "dp": max_chips // G, "chips": G, "stage_chips": n_stage,
        "weights_per_chip_bytes": W_chip, "kv_per_chip_bytes": kv_chip, "memory_per_chip_bytes": mem,
        "capacity_per_chip_bytes": np.full(T.shape, hbm), "fits": fits,
        "kv_per_stage_bytes": kv_chip * n_stage, "sequences_in_flight": P * B,
        "comm_tier": tier, "ep_scaleout_share": np.where(E > 1, 1 - 1 / ep_domains, 0.0),
        "t_comm_s": t_comm, "pipeline_tier": pp_tier, "t_pipeline_s": np.where(runs, t_pp, np.nan),
        "step_time_s": latency, "tokens_per_s_per_chip": tok_per_chip, "runs": runs, "why_not": reason,
    }
    scale = prior_interval_scale(pri, basis, "decode", precision)  # serve's decode group: a stage step is one
    if scale is not None:
        splits["step_time_s_interval"] = interval_ends(latency, scale, rate=False)
        splits["tokens_per_s_per_chip_interval"] = interval_ends(tok_per_chip, scale, rate=True)
    requested = None
    if tp is not None or ep is not None or pp is not None:
        requested = _pick(splits, fits=None)  # the candidates were filtered to the request: take its best
    best = _pick(splits, fits=True)

    g = lambda sym, v, unit="", src=None: lift(explain, sym, v, unit, src)  # noqa: E731
    Bq = g("B", float(B), "seq", "given: batch per stage step")
    kvq = g("kv_held", kv_held, "B", f"{m.file or m.name}: KV bytes held per sequence at {S:g} tok ({kv_dtype})")
    bq = g("b_w", b_w, "B", f"{precision} weights")
    numbers: dict = {
        "largest_model_params": largest_model(
            g("G", dom, "chips", system.source_of("domain_chips")),
            g("hbm", hbm, "B", chip.source_of("hbm_capacity_bytes")), Bq, kvq, bq),
        "domain_memory_bytes": dom * hbm,
        "weights_bytes": (N_dense + N_routed) * b_w,
        "kv_bytes_per_stage_step": B * kv_held,
    }
    if scale is not None:
        numbers["interval_group"] = scale[2]
    i = requested if requested is not None else best
    if i is not None:  # the chosen split's memory, as a derivation
        src = f"{m.file or m.name}: parameters by component"
        W_q = weights_per_chip(g("N_dense", N_dense, "params", src), g("N_routed", N_routed, "params", src), bq,
                               g("tp", int(T[i])), g("ep", int(E[i])), g("pp", int(P[i])))
        kv_q = kv_per_chip(g("pp", int(P[i])), Bq, kvq, g("ep", int(E[i])),
                           g("tp_kv", float(tp_kv[i]), "", "KV splits over min(tp, K) heads; 1 for MLA"))
        numbers["memory_per_chip_bytes"] = memory_per_chip(W_q, kv_q)
    return Placement(m, system, float(B), float(S), precision, kv_dtype, basis, max_chips, splits, best, requested,
                     numbers)


def _pick(splits: dict, fits: bool | None) -> int | None:
    """The row with the most tokens/s per chip (then fewest chips), among those that fit if asked."""
    ok = np.isfinite(splits["tokens_per_s_per_chip"])
    if fits:
        ok &= splits["fits"]
    idx = np.flatnonzero(ok)
    if idx.size == 0:
        idx = np.arange(len(splits["tp"])) if fits is None else idx
        if idx.size == 0:
            return None
    # prefer splits that fit, then throughput per chip, then fewer chips
    key = np.lexsort((splits["chips"][idx], -np.nan_to_num(splits["tokens_per_s_per_chip"][idx], nan=-1),
                      ~splits["fits"][idx]))
    return int(idx[key[0]])
