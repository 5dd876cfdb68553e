"""The model lifecycle: how many tokens to pre-train, RL-train and serve so each phase costs the same compute.

Notation: N active parameters, r_serve serving tokens per second, T_life the serving lifetime, r_RL
RL FLOP per parameter per token, e (e_dec in code) the decode inefficiency (how much more a decode FLOP costs than a
pre-training FLOP: training MFU / decode MFU).

Compute of each phase (lecture ledger C2; Dwarkesh's flashcards F, card 2):
    C_pre = 6 · N · D_pre            forward + backward
    C_RL  = r_RL · e · N · D_RL       RL is mostly sampling (decode) plus a training pass: 2–6 FLOP/param/token
    C_inf = 2 · e · N · D_inf         forward only, at decode efficiency
    D_inf = r_serve · T_life          the tokens the model serves over its life (ledger C5)
Equal compute in the three phases (a sum of a falling and rising cost is least near where the terms
are equal: ledger C1, C3) gives
    D_pre = e · D_inf / 3             from 6·N·D_pre = 2·e·N·D_inf
    D_RL  = 2 · D_inf / r_RL          from r_RL·e·N·D_RL = 2·e·N·D_inf
With the flashcards' r_RL = 3 and e = 3 (card 4: 6·D_pre = 3·D_RL·3 = 2·D_inf·3) this is ledger C4:
D_pre = D_inf = 1.5 · D_RL. N cancels: the token counts depend only on the serving volume.

Over-training against Chinchilla (Hoffmann et al. 2022, "Training Compute-Optimal Large Language
Models", arXiv 2203.15556: ≈ 20 tokens per parameter at the compute optimum; ledger C7):
    overtraining_factor = D_pre / (c_chin · N),  c_chin = 20 tokens per parameter
The lecture's case, 5e7 tok/s for 60 days at N = 1e11: D_inf = 5e7 · 5.184e6 s = 2.59e14 tokens
= D_pre, 2.59e14 / 2e12 = 130× (the lecture rounds to "~200 T" and "~100×": ledger C5, C7).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.derive import Numbers, Q, formula, lift, value_of
from ..core.errors import InputError

__all__ = ["Lifecycle", "lifecycle", "sensitivity", "RL_MULTIPLIER", "DECODE_INEFFICIENCY",
           "CHINCHILLA_TOKENS_PER_PARAM", "OUTPUTS"]

RL_MULTIPLIER = 3.0
RL_SOURCE = "flashcards F card 4: RL costs 3 FLOP/param/token (range 2–6, ledger C2)"
DECODE_INEFFICIENCY = 3.0
DECODE_SOURCE = "flashcards F card 4: decode runs at ~1/3 of training's FLOP efficiency (ledger C4)"
CHINCHILLA_TOKENS_PER_PARAM = 20.0
CHINCHILLA_SOURCE = "Hoffmann et al. 2022 (Chinchilla, arXiv 2203.15556): ≈ 20 tokens per parameter"
OUTPUTS = ("pretrain_tokens", "rl_tokens", "inference_tokens", "overtraining_factor")


@formula("T_life = days · 86400", unit="s")
def lifetime_s(days):
    return days * 86400


@formula("D_inf = r_serve · T_life", unit="tok")
def inference_tokens(r_serve, T_life):
    return r_serve * T_life


@formula("D_pre = e_dec · D_inf / 3", unit="tok")
def pretrain_tokens(e_dec, D_inf):
    return e_dec * D_inf / 3


@formula("D_RL = 2 · D_inf / r_RL", unit="tok")
def rl_tokens(D_inf, r_RL):
    return 2 * D_inf / r_RL


@formula("D_chinchilla = c_chin · N", unit="tok")
def chinchilla_tokens(c_chin, N):
    return c_chin * N


@formula("overtraining_factor = D_pre / D_chinchilla", unit="")
def overtraining(D_pre, D_chinchilla):
    return D_pre / D_chinchilla


@formula("C_phase = 6 · N · D_pre", unit="FLOP")
def phase_compute(N, D_pre):
    return 6 * N * D_pre


@dataclass
class Lifecycle(Numbers):
    """The balanced token counts; `numbers` maps each key to a Q (with derivation) or a value."""

    numbers: dict
    inputs: dict

    def to_dict(self, derivations: bool = True) -> dict:
        out: dict = {"inputs": dict(self.inputs)}
        out.update({k: float(value_of(q)) for k, q in self.numbers.items()})
        if derivations:
            out["derivations"] = self.derivations()
        return out

    def explain(self, keys: tuple[str, ...] = ("pretrain_tokens", "rl_tokens", "overtraining_factor")) -> str:
        return "\n\n".join(f"── {k} ──\n{self.numbers[k].explain()}" for k in keys if isinstance(self.numbers[k], Q))


# each input's range: wide enough for any real model and fleet, narrow enough that no product or ratio of
# them under- or overflows a float (the sensitivity's ×0.5 and ×2 stay finite too)
LIMITS = {"serving_tokens_per_s": ("--serving-tokens-per-s", 1e-3, 1e13, "tok/s"),
          "lifetime_days": ("--lifetime-days", 1e-6, 365 * 100, "days"),
          "active_params": ("--active-params", 1.0, 1e16, "parameters"),
          "rl_multiplier": ("--rl-multiplier", 1e-2, 1e3, "FLOP per parameter per token"),
          "decode_inefficiency": ("--decode-inefficiency", 1e-2, 1e3, "×")}


def check_lifecycle_inputs(**inputs) -> None:
    """Refuse impossible or absurd values with one line each (LIMITS)."""
    for key, x in inputs.items():
        flag, lo, hi, unit = LIMITS[key]
        a = np.asarray(x, dtype=float)
        if not np.all((a >= lo) & (a <= hi)):
            bad = a[~((a >= lo) & (a <= hi))].ravel()[0] if a.ndim else a
            raise InputError(f"{flag} must be between {lo:g} and {hi:g} {unit} (got {float(bad):g})")


def lifecycle(serving_tokens_per_s, lifetime_days, active_params, rl_multiplier=RL_MULTIPLIER,
              decode_inefficiency=DECODE_INEFFICIENCY, explain: bool = False) -> Lifecycle:
    """Pre-training, RL and inference tokens that give each phase equal compute; over-training vs Chinchilla.

    Every numeric input may be a NumPy array (results broadcast).
    """
    check_lifecycle_inputs(serving_tokens_per_s=serving_tokens_per_s, lifetime_days=lifetime_days,
                           active_params=active_params, rl_multiplier=rl_multiplier,
                           decode_inefficiency=decode_inefficiency)
    return _balance(serving_tokens_per_s, lifetime_days, active_params, rl_multiplier, decode_inefficiency, explain)


def _balance(serving_tokens_per_s, lifetime_days, active_params, rl_multiplier, decode_inefficiency,
             explain: bool = False) -> Lifecycle:
    """`lifecycle` on inputs already checked (the sensitivity's perturbed inputs may pass the limits)."""
    g = lambda sym, v, unit="", src=None: lift(explain, sym, v, unit, src)  # noqa: E731
    r_src = RL_SOURCE if np.all(np.asarray(rl_multiplier) == RL_MULTIPLIER) else "given (--rl-multiplier)"
    e_src = DECODE_SOURCE if np.all(np.asarray(decode_inefficiency) == DECODE_INEFFICIENCY) \
        else "given (--decode-inefficiency)"
    T = lifetime_s(g("days", lifetime_days, "days", "given (--lifetime-days)"))
    D_inf = inference_tokens(g("r_serve", serving_tokens_per_s, "tok/s", "given (--serving-tokens-per-s)"), T)
    e_dec = g("e_dec", decode_inefficiency, "", e_src)
    D_pre = pretrain_tokens(e_dec, D_inf)
    D_rl = rl_tokens(D_inf, g("r_RL", rl_multiplier, "FLOP/param/tok", r_src))
    N = g("N", active_params, "params", "given (--active-params)")
    D_ch = chinchilla_tokens(g("c_chin", CHINCHILLA_TOKENS_PER_PARAM, "tok/param", CHINCHILLA_SOURCE), N)
    numbers = {"inference_tokens": D_inf, "pretrain_tokens": D_pre, "rl_tokens": D_rl,
               "chinchilla_tokens": D_ch, "overtraining_factor": overtraining(D_pre, D_ch),
               "compute_per_phase_flop": phase_compute(N, D_pre), "lifetime_s": T}
    inputs = {"serving_tokens_per_s": _plain(serving_tokens_per_s), "lifetime_days": _plain(lifetime_days),
              "active_params": _plain(active_params), "rl_multiplier": _plain(rl_multiplier),
              "decode_inefficiency": _plain(decode_inefficiency)}
    return Lifecycle(numbers, inputs)


def _plain(x):
    x = value_of(x)
    return np.asarray(x).tolist() if np.ndim(x) else float(x)


def sensitivity(serving_tokens_per_s, lifetime_days, active_params, rl_multiplier=RL_MULTIPLIER,
                decode_inefficiency=DECODE_INEFFICIENCY, factors=(0.5, 2.0)) -> dict:
    """For each input: the elasticity d ln(output) / d ln(input) of each output, and each output with
    that input scaled by each factor (the others held)."""
    base = dict(serving_tokens_per_s=serving_tokens_per_s, lifetime_days=lifetime_days,
                active_params=active_params, rl_multiplier=rl_multiplier, decode_inefficiency=decode_inefficiency)
    check_lifecycle_inputs(**base)  # the user's inputs; the perturbed ones below are ours, not checked again
    at = lambda **kw: _balance(**{**base, **kw})  # noqa: E731
    ref = at()
    out: dict = {}
    h = 1e-4
    for name, x in base.items():
        up, down = at(**{name: x * (1 + h)}), at(**{name: x * (1 - h)})
        entry: dict = {"elasticity": {}, "scaled": {}}
        for k in OUTPUTS:
            entry["elasticity"][k] = round(float(np.log(up.value(k) / down.value(k)) / np.log((1 + h) / (1 - h))), 6)
        for f in factors:
            r = at(**{name: x * f})
            entry["scaled"][f"x{f:g}"] = {k: float(r.value(k)) for k in OUTPUTS}
        out[name] = entry
    out["_base"] = {k: float(ref.value(k)) for k in OUTPUTS}
    return out
