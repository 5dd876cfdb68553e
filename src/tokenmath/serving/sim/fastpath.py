"""The closed-loop steady state in closed form: throughput, TPOT and TTFT at a concurrency, vectorised.

U clients (the concurrency) keep one request each in the system (prompt I, output O tokens). Every step time is
`roofline.step` (with speculation, serving/speculative.py: t_d = t_spec, tau tokens per step):

    kv_pool  = f_kv · (G · C − W_all)                  what the engine leaves for KV (C: HBM per chip)
    B_cap    = min(floor(kv_pool / kv_held), B_max)    sequences the pool holds (kv_held at S_held = I + (1 + r)/2 · O,
                                                       held_tokens: r the engine's reserve for the output to come,
                                                       1 the whole I + O); B_max the engine's cap × dp (each
                                                       attention-DP rank's scheduler its own)
    B        = min(U, B_cap)                           sequences decoding
    n_d      = (O − 1) / tau                           decode steps per request (the first token is the prefill's)
    n_b      = min(B, max(1, floor(budget / I)))       prompts per prefill step (the engine's token budget;
                                                       × dp under attention data parallelism: each rank its own)

continuous (prefill first; t_d = t_decode(B, I + O/2), t_p = t_prefill(n_b, I), t_1 = t_prefill(1, I)). With
fixed lengths the clients move in a wave: the B requests that finish together return together. Where they all
fit (U ≤ B_cap) the replica is then idle, and an idle engine starts on the first request it receives (policies.py:
the others reach it after), so the wave is one lone prompt and B − 1 behind it in k = (B − 1) / n_b back-to-back
steps (the j-th group's first token after 1 + j steps); past the cap requests wait and the replica is never idle
(s = 0: one wave of B in B / n_b steps). All then decode together:

    s        = [U ≤ B_cap]                             the lone prompt
    n_b      = max(1, min(B − s, floor(budget / I)))   prompts per prefill step of the wave
    X        = B / (n_d · t_d + s · t_1 + (B − s) · t_p / n_b)
                                                       requests/s: decode steps and prefill steps share the replica
    t_life   = n_d · t_d + (s · k + (B − s) · (k − 1) / 2) · t_p / B,  k = (B − s) / n_b
                                                       first to last token: the wave's prefill steps after one's
                                                       first token stall it (the lone prompt all k)
    tpot     = t_life / (O − 1)
    T_resp   = U / X                                   Little's law for the closed loop
    ttft     = T_resp − t_life                         the prefill steps up to one's own, plus any wait for a seat

disagg (prefill pool G_p, decode pool G_d, KV transfer t_x; decodes never stall; a request is
admitted, its KV reserved on the decode pool, before its prefill). The returning cohorts of n_b
clients find the prefill pool free; t_d is read at the decode batch B_d = X · n_d · t_d (a fixed
point, 6 rounds):

    X        = min(U / (t_p + t_x + n_d · t_d), B_cap / (n_d · t_d), n_b / t_p)
                                                       clients, decode seats, prefill capacity
    tpot     = n_d · t_d / (O − 1),   ttft = T_resp − n_d · t_d   (the first token leaves through the decode
                                                       worker once the KV has landed: t_x is in the TTFT)

cadence (a train of B_cap seats departs every t_c; a request boards the next train, its prompt rides
it and its first token comes one step later). The period is one step of the seats decoding plus the
prompts that board per step in the steady state, B_cap / (n_d + 1) of them (steps.mixed_time):

    X        = B / ((n_d + 1) · t_c),  tpot = n_d · t_c / (O − 1),  ttft = T_resp − n_d · t_c

and for all: tokens_per_s = X · O, per chip ÷ G, per user 1 / tpot.

Where it agrees with the simulator (tests/test_sim_fastpath.py): closed loop, fixed lengths, the
continuous policy: throughput and TPOT within 3 %, mean TTFT within 10 %, from concurrency 1 to
past the KV cap. Random lengths break the clients' synchrony (prefills come one by one) and chunked
prefill has no closed form here; use the simulator for those.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...core import arch
from ...core.derive import Numbers, formula, lift, nest, value_of
from ...core.errors import InputError
from ...core.load import load_engine, load_priors
from ...core.records import Model, Priors, System, kernel_engine
from ...core.roofline import Layout, default_layout, step
from ..disagg import kv_link, kv_transfer_time
from ..engine_memory import kv_pool_engine
from ..engine_memory import kv_pool_simple as kv_pool_bytes
from ..serve import check_inputs
from ..speculative import Speculation, speculative_step
from .steps import mixed_time

__all__ = ["SteadyState", "steady_state", "kv_pool_bytes", "held_tokens", "held_kv_bytes", "engine_batch",
           "cadence_period", "FAST_POLICIES"]

FAST_POLICIES = ("continuous", "disagg", "cadence")


@formula("S_held = I + (1 + r) / 2 · O", unit="tok")
def held_tokens(I, O, r):
    """The tokens of KV a request holds, on average over its life, in a pool its engine keeps full (r: the share of
    the output still to come that admission keeps free for a running request, the engine's kv_output_reserve).

    After o of its O output tokens a request holds I + o and keeps r · (O − o) free for the rest. In a loaded pool's
    steady state, where a finishing request's room goes to a new one, the running requests are at every stage of
    their output: o spreads evenly over [0, O), so the mean is I + O/2 + r · O/2. The pool stays level: a step's B
    requests add B tokens, the B/O that finish free B/O · (I + O) and their successors take B/O · I.
    r = 1 (TensorRT-LLM's guaranteed-no-evict) is the whole I + O from admission on; r = 0 (vLLM V1's blocks as the
    tokens come) I + O/2, so the pool runs (I + O) / (I + O/2) times the sequences; SGLang's steady new_token_ratio
    0.098 is I + 0.549 · O. A steady state only: a burst admitted at once outgrows an r < 1 pool as it decodes and the
    engine preempts and recomputes (vLLM) or retracts (SGLang) its newest requests until the stages spread; neither
    that recompute nor SGLang's room for one whole new request is counted."""
    return I + (1 + r) / 2 * O


def held_kv_bytes(m: Model, I, O, r: float, kv_dtype: str, spec: Speculation | None = None) -> np.ndarray:
    """The KV bytes one request of I + O tokens holds in a full pool of an engine whose admission keeps r of the output
    to come free (held_tokens; r = 1 the whole I + O), the draft's KV included. Every place that sizes a batch by what
    an engine's pool holds (the closed form, the simulator's admission, validate's engine batch, search's layouts)
    reads it here."""
    S_held = held_tokens(I, O, r)
    kv = np.asarray(arch.kv_stored_bytes(m, S_held, kv_dtype), dtype=float)
    return kv + np.asarray(spec.extra_kv_bytes(m, S_held, kv_dtype), dtype=float) if spec else kv


@formula("B_engine = min(floor(kv_pool / kv_held), B_max)", unit="seq")
def engine_batch(kv_pool, kv_held, B_max):
    return np.minimum(np.floor(kv_pool / kv_held), B_max)


@formula("B = min(U, B_cap)", unit="seq")
def decode_batch(U, B_cap):
    return np.minimum(U, B_cap)


@formula("n_d = (O − 1) / tau", unit="step")
def decode_steps(O, tau):
    return (O - 1) / tau


@formula("n_b = min(B, max(1, floor(budget / I)))", unit="seq")
def prefill_cohort(B, budget, I):
    return np.minimum(B, np.maximum(1, np.floor(budget / I)))


@formula("s = [U ≤ B_cap]", unit="seq")
def lone_prompt(U, B_cap):
    return np.asarray(U <= B_cap, dtype=float)


@formula("n_b = max(1, min(B − s, floor(budget / I)))", unit="seq")
def wave_cohort(B, s, budget, I):
    return np.maximum(1, np.minimum(B - s, np.floor(budget / I)))


@formula("X = B / (n_d · t_d + s · t_1 + (B − s) · t_p / n_b)", unit="req/s")
def continuous_rate(B, n_d, t_d, t_p, n_b, s, t_1):
    return B / (n_d * t_d + s * t_1 + (B - s) * t_p / n_b)


@formula("t_life = n_d · t_d + (s · (B − s)/n_b + (B − s) · ((B − s)/n_b − 1) / 2) · t_p / B", unit="s")
def decode_life(n_d, t_d, B, n_b, t_p, s):
    k = (B - s) / n_b
    return n_d * t_d + (s * k + (B - s) * (k - 1) / 2) * t_p / B


@formula("X = min(U / (t_p + t_x + n_d · t_d), B_cap / (n_d · t_d), n_b / t_p)", unit="req/s")
def disagg_rate(U, t_p, t_x, n_d, t_d, B_cap, n_b):
    return np.minimum(np.minimum(U / (t_p + t_x + n_d * t_d), B_cap / (n_d * t_d)), n_b / t_p)


@formula("X = B / ((n_d + 1) · t_c)", unit="req/s")
def cadence_rate(B, n_d, t_c):
    return B / ((n_d + 1) * t_c)


@formula("t_life = n_d · t_d", unit="s")
def stall_free_life(n_d, t_d):
    return n_d * t_d


@formula("tpot = t_life / (O − 1)", unit="s")
def life_tpot(t_life, O):
    return t_life / (O - 1)


@formula("T_resp = U / X", unit="s")
def littles_law_time(U, X):
    return U / X


@formula("ttft = T_resp − t_life", unit="s")
def ttft_closed_loop(T_resp, t_life):
    return T_resp - t_life


@formula("tokens_per_s = X · O", unit="tok/s")
def output_rate(X, O):
    return X * O


@formula("tokens_per_s_per_chip = tokens_per_s / G", unit="tok/s")
def per_chip(tokens_per_s, G):
    return tokens_per_s / G


@formula("tokens_per_s_per_user = 1 / tpot", unit="tok/s")
def per_user(tpot):
    return 1 / tpot


@dataclass
class SteadyState(Numbers):
    """The steady state of one configuration at one or many concurrencies (arrays broadcast)."""

    model: Model
    system: System
    chips: int
    policy: str
    concurrency: object
    isl: object
    osl: object
    numbers: dict

    KEYS = ("output_tokens_per_s", "tokens_per_s_per_chip", "tokens_per_s_per_user", "ttft_s", "tpot_s", "e2e_s",
            "requests_per_s", "batch", "batch_cap", "prefill_batch", "decode_step_s", "prefill_step_s")

    def __getitem__(self, key: str):
        return np.asarray(value_of(self.numbers[key]), dtype=float)

    def to_dict(self, derivations: bool = False) -> dict:
        out = {"model": self.model.name, "system": self.system.name, "chips": self.chips, "policy": self.policy,
               "concurrency": self.concurrency, "isl": self.isl, "osl": self.osl,
               **nest({k: self.numbers[k] for k in self.KEYS if k in self.numbers})}
        if derivations:
            out["derivations"] = self.derivations()
        return out

    def explain(self, keys=None, max_depth: int = 12) -> str:
        return super().explain(keys or ["output_tokens_per_s", "tpot_s", "ttft_s"], max_depth)


def _step_time(m, system, spec, explain, **kw):
    if spec is None:
        return step(m, system, phase="decode", explain=explain, **kw).t_step
    return speculative_step(m, system, spec, explain=explain, **kw).t_spec


def _disagg(m, system, spec, ex, g, U, I_arr, S_dec, n_d, B_cap, n_b, G_p, G_d, layout, lay, pri, kw):
    """The disaggregated steady state: the decode batch's fixed point, then the formulas with derivations."""
    bw, lat, _, src = kv_link(system, pri, G_p, G_d)
    t_x = kv_transfer_time(g("kv_transfer", np.asarray(arch.kv_stored_bytes(m, I_arr, kw["kv_dtype"]), dtype=float),
                             "B", "KV of the prompt"), g("n_links", min(G_p, G_d), "", "chips sending at once"),
                           g("bw_link", bw, "B/s", src), g("lat", lat, "s", src))
    t_p = step(m, system, G=G_p, B=value_of(n_b), S=I_arr, phase="prefill", explain=ex,
               layout=layout or default_layout(m, G_p), **kw).t_step
    t_dec = lambda B, e=False: _step_time(m, system, spec, e, G=G_d, B=B, S=S_dec, layout=lay, **kw)  # noqa: E731
    U0, cap, nd, tx, tp = (np.asarray(value_of(x), dtype=float) for x in (U, B_cap, n_d, t_x, t_p))
    B_d = np.minimum(U0, cap)
    for _ in range(6):
        t_d = np.asarray(value_of(t_dec(B_d)), dtype=float)
        B_d = np.clip(disagg_rate(U0, tp, tx, nd, t_d, cap, value_of(n_b)) * nd * t_d, 1.0, cap)
    t_d = t_dec(B_d, ex)
    if ex:
        t_p, t_d, t_x = t_p.renamed("t_p"), t_d.renamed("t_d"), t_x.renamed("t_x")
    X = disagg_rate(U, t_p, t_x, n_d, t_d, B_cap, n_b)
    life = stall_free_life(n_d, t_d)
    T_resp = littles_law_time(U, X)
    ttft = ttft_closed_loop(T_resp, life)  # (t_x inside: the first token comes from the decode worker)
    more = {"decode_step_s": t_d, "prefill_step_s": t_p, "prefill_batch": n_b, "kv_transfer_s": t_x}
    return X, life, T_resp, ttft, B_d, more


def cadence_period(m: Model, system: System, spec: Speculation | None, *, seats, I, O, G: int, layout, precision: str,
                   kv_dtype: str, basis: str, priors: Priors | None):
    """The train's period: `seats` decoding at I + O/2 plus seats / (n_d + 1) prompts of I tokens boarding."""
    tau = spec.tokens_per_step if spec else 1.0
    board = seats / ((O - 1) / tau + 1)
    return mixed_time(m, system, spec, n_dec=seats, ctx_dec=seats * (I + O / 2), n_pre=board, T_pre=board * I,
                      ctx_pre=board * I / 2, G=G, precision=precision, kv_dtype=kv_dtype, basis=basis, priors=priors,
                      layout=layout)


def steady_state(m: Model, system: System, *, G: int | None = None, concurrency=1, isl=1024, osl=1024,
                 policy: str = "continuous", max_batch: float | None = None, prefill_chips: int | None = None,
                 decode_chips: int | None = None, spec: Speculation | None = None, precision: str | None = None,
                 kv_dtype: str | None = None, basis: str = "prior", priors: Priors | None = None,
                 layout: Layout | None = None, engine: str = "default", max_num_tokens=None,
                 explain: bool = False) -> SteadyState:
    """Throughput, TPOT and TTFT of a closed loop at `concurrency` (arrays of C, I, O broadcast; G scalar).

    `max_num_tokens` (scalar or an array broadcasting with C, I, O) replaces the engine's token budget
    of a prefill step.
    """
    if policy not in FAST_POLICIES:
        raise InputError(f"no closed form for --policy {policy} (closed forms: {', '.join(FAST_POLICIES)}); "
                         "simulate it instead")
    G = system.domain_chips if G is None else G
    precision, kv_dtype = precision or m.weight_dtype, kv_dtype or m.kv_dtype
    check_inputs(G=G, precision=precision, kv_dtype=kv_dtype, basis=basis)
    C_arr, I_arr, O_arr = (np.asarray(x, dtype=float) for x in (concurrency, isl, osl))
    if np.any(C_arr < 1) or np.any(I_arr < 1) or np.any(O_arr < 2):
        raise InputError("the steady state needs concurrency ≥ 1, ISL ≥ 1 and OSL ≥ 2 tokens")
    eng = load_engine(engine)
    pri = (priors or load_priors(system.chip.priors)).for_engine(kernel_engine(engine))
    G_p, G_d = (int(prefill_chips or G), int(decode_chips or G)) if policy == "disagg" else (G, G)
    chips = G_p + G_d if policy == "disagg" else G
    lay = layout or default_layout(m, G_d)
    ex = explain and C_arr.ndim == 0 and I_arr.ndim == 0 and O_arr.ndim == 0
    g = lambda sym, v, unit="", src=None: lift(ex, sym, v, unit, src)  # noqa: E731
    eng_src = lambda k: f"{eng['file']}: {eng['sources'].get(k, eng.get('source', ''))}"  # noqa: E731

    U, I, O = g("U", C_arr, "seq", "given: concurrency (users in flight)"), g("I", I_arr, "tok", "given: ISL"), \
        g("O", O_arr, "tok", "given: OSL")
    W_all = float(value_of(arch.model_weight_bytes(m, precision))) + (spec.extra_weight_bytes(m, precision) if spec else 0)
    pool = kv_pool_engine(eng, m, system, G_d,
                          g("W_all", W_all, "B", f"{m.file or m.name}: every weight in its format (arch.model_weight_bytes)"
                            + (" + the draft's weights" if spec else "")), tp=float(lay.tp),
                          explain=ex, precision=precision, pp=lay.pp)
    if np.any(value_of(pool) <= 0):
        raise InputError(f"{m.name} does not fit on {G_d} × {system.chip.name}: no room for KV beside the weights")
    r = float(eng["kv_output_reserve"])
    held = held_kv_bytes(m, I_arr, O_arr, r, kv_dtype, spec)
    dp = float(lay.dp(G_d))  # attention data parallelism: each rank's scheduler fills its own token budget and batch
    # the engine's batch cap is each attention-DP rank's, as the simulator's (sim/run.py); a --max-batch the replica's
    B_max = float(max_batch or float(eng["max_batch"]) * dp)
    at = "I + O tokens" if r == 1 else \
        f"S_held = I + (1 + r) / 2 · O tokens, r = {r:g} ({eng_src('kv_output_reserve')})"
    B_cap = engine_batch(pool, g("kv_held", held, "B", f"KV of one request at {at} ({kv_dtype})"),
                         g("B_max", B_max, "seq", "given: --max-batch" if max_batch else eng_src("max_batch")
                           + (f" × {dp:g} attention data-parallel ranks" if dp > 1 else "")))
    if np.any(value_of(B_cap) < 1) or np.any(held_kv_bytes(m, I_arr, O_arr, 1.0, kv_dtype, spec) > value_of(pool)):
        raise InputError(f"one request of {I_arr.max():g} + {O_arr.max():g} tokens does not fit in the KV pool on "
                         f"{G_d} × {system.chip.name}")
    if ex:
        B_cap = B_cap.renamed("B_cap")
    tau = g("tau", spec.tokens_per_step if spec else 1.0, "tok", "speculation: (1 − α^(K+1)) / (1 − α)" if spec else
            "one token per decode step")
    n_d = decode_steps(O, tau)
    budget = g("budget", float(eng["max_num_tokens"]) * dp, "tok", eng_src("max_num_tokens")
               + (f" × {dp:g} attention data-parallel ranks" if dp > 1 else "")) if max_num_tokens is None \
        else g("budget", np.asarray(max_num_tokens, dtype=float) * dp, "tok", "given: max_num_tokens"
               + (f" × {dp:g} attention data-parallel ranks" if dp > 1 else ""))
    S_dec = I_arr + O_arr / 2
    kw = dict(precision=precision, kv_dtype=kv_dtype, basis=basis, priors=pri)
    nums: dict = {"batch_cap": B_cap}

    B = decode_batch(U, B_cap)
    if policy == "cadence":
        t_c = g("t_c", cadence_period(m, system, spec, seats=value_of(B), I=I_arr, O=O_arr, G=G_d, layout=lay, **kw),
                "s", "steps.mixed_time: the seats decoding plus the prompts boarding")
        X = cadence_rate(B, n_d, t_c)
        life = stall_free_life(n_d, t_c)
        T_resp = littles_law_time(U, X)
        ttft = ttft_closed_loop(T_resp, life)
        nums.update(decode_step_s=t_c)
    elif policy == "continuous":
        s = lone_prompt(U, B_cap)
        n_b = wave_cohort(B, s, budget, I)
        t_d = _step_time(m, system, spec, ex, G=G_d, B=value_of(B), S=S_dec, layout=lay, **kw)
        t_p = step(m, system, G=G_p, B=value_of(n_b), S=I_arr, phase="prefill", explain=ex, layout=lay, **kw).t_step
        t_1 = step(m, system, G=G_p, B=1, S=I_arr, phase="prefill", explain=ex, layout=lay, **kw).t_step
        if ex:
            t_d, t_p, t_1 = t_d.renamed("t_d"), t_p.renamed("t_p"), t_1.renamed("t_1")
        X = continuous_rate(B, n_d, t_d, t_p, n_b, s, t_1)
        life = decode_life(n_d, t_d, B, n_b, t_p, s)
        T_resp = littles_law_time(U, X)
        ttft = ttft_closed_loop(T_resp, life)
        nums.update(decode_step_s=t_d, prefill_step_s=t_p, prefill_batch=n_b)
    else:
        n_b = prefill_cohort(U, budget, I)
        X, life, T_resp, ttft, B, more = _disagg(m, system, spec, ex, g, U, I_arr, S_dec, n_d, B_cap, n_b, G_p, G_d,
                                                 layout, lay, pri, kw)
        nums.update(more)
    tpot = life_tpot(life, O)
    tps = output_rate(X, O)
    nums.update(requests_per_s=X, output_tokens_per_s=tps,
                tokens_per_s_per_chip=per_chip(tps, g("G", chips, "chips", "chips in the deployment")),
                tokens_per_s_per_user=per_user(tpot), tpot_s=tpot, ttft_s=ttft, e2e_s=T_resp, batch=B)
    return SteadyState(m, system, chips, policy, C_arr if C_arr.ndim else float(C_arr),
                       I_arr if I_arr.ndim else float(I_arr), O_arr if O_arr.ndim else float(O_arr), nums)
