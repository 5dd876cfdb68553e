"""The lifecycle balance (ledger rows C1–C8): 6ND vs RL vs 2ND, tokens over a model's life, over-training.

Numbers come from `tokenmath.training.lifecycle` and `tokenmath.training` (issue 6).
"""

from __future__ import annotations

import numpy as np

from ..core.derive import given
from ..core.units import fmt
from .claim import OFF, REPRODUCED, Finding, claim, judge, need, unverifiable
from .common import ratio, said_q, v

SECTION = "lifecycle"


@claim("C1", SECTION)
def c1(ctx):
    """min of a·x^-α + b·x^β: the terms' ratio at the optimum is β/α (= 1, 'equal', only when α = β)."""
    alpha, beta = ctx.said_input("C1", "alpha"), ctx.said_input("C1", "beta")
    alpha_pl = ctx.said_input("C1", "alpha_powerlaw")
    x = np.geomspace(1e-3, 1e3, 200_001)
    out = []
    for a_exp in (alpha, alpha_pl):
        fall, rise = x ** -a_exp, x ** beta
        i = int(np.argmin(fall + rise))
        out.append(float(fall[i] / rise[i]))
    q = given("ratio_at_min", out[0], "", "numeric minimum of x^-α + x^β over a fine grid, α = β = 1")
    ok = abs(out[0] - 1) < 1e-3
    return Finding(q, "", REPRODUCED if ok else OFF,
                   f"at the minimum of a/x + b·x the two terms are equal (ratio {out[0]:.4f}); with a falling power "
                   f"α = {alpha_pl} and rising β = {beta} the ratio is {out[1]:.3f} = β/α — a heuristic, exact only "
                   "when the exponents match",
                   derivation="d/dx (a·x^-α + b·x^β) = 0 ⇒ α·a·x^-α = β·b·x^β ⇒ falling/rising = β/α")


def _lc(ctx, explain=True):
    lifecycle = need("tokenmath.training.lifecycle", "lifecycle balance, issue 6")
    days = ctx.said_input("C5", "lifetime_s") / 86400
    return lifecycle.lifecycle(ctx.said_input("C5", "serving_tokens_per_s"), days,
                               ctx.said_input("C5", "active_params"), explain=explain)


@claim("C2", SECTION)
def c2(ctx):
    training = need("tokenmath.training", "training FLOP, issue 6")
    N = said_q(ctx, "C5", "active_params", "N_active", "params")
    D = given("D_tok", 1.0, "tok", "one token")
    q = training.flop_dense(N, D)
    per = v(q) / v(N)
    lifecycle = need("tokenmath.training.lifecycle", "lifecycle balance, issue 6")
    ok = abs(per - 6) < 1e-9
    note = (f"training.flop_dense: {fmt(per)} FLOP per parameter per token (forward 2 + backward 4); lifecycle: "
            f"inference 2·e·N·D and RL r_RL·e·N·D with r_RL = {fmt(lifecycle.RL_MULTIPLIER)} (range 2–6) and decode "
            f"inefficiency e = {fmt(lifecycle.DECODE_INEFFICIENCY)}")
    return Finding(given("flop_per_param_token", per, "", "training.flop_dense / N"), "", REPRODUCED if ok else OFF,
                   note, derivation=q.explain())


unverifiable("C3", SECTION)


@claim("C4", SECTION)
def c4(ctx):
    lc = _lc(ctx)
    q = ratio(lc.numbers["pretrain_tokens"].renamed("a"), lc.numbers["rl_tokens"].renamed("b"))
    verdict, note = judge(q, ctx.said("C4")["said_value"], 1e-6, what="D_pre / D_RL")
    d_ratio = lc.value("pretrain_tokens") / lc.value("inference_tokens")
    note += f"; D_pre / D_inf = {fmt(d_ratio)} (flashcard algebra: 6·D_pre = 3·D_RL·3 = 2·D_inf·3)"
    return Finding(q, "", verdict, note, derivation=q.explain())


@claim("C5", SECTION)
def c5(ctx):
    lc = _lc(ctx)
    q = lc.numbers["inference_tokens"]
    verdict, note = judge(q, ctx.said("C5")["said_value"], 0.25, unit="",
                          what="tokens served over the life (= pre-training tokens)")
    note += " — 50 M tok/s × 60 days is 2.59e14; '~200 T' rounds it down"
    return Finding(q, "tok", verdict, note, derivation=q.explain(), value_text=f"{v(q):.3g} tokens")


unverifiable("C6", SECTION)


@claim("C7", SECTION)
def c7(ctx):
    lc = _lc(ctx)
    q = lc.numbers["overtraining_factor"]
    verdict, note = judge(q, ctx.said("C7")["said_value"], 0.25, what="over-training vs Chinchilla (20 tok/param)")
    note += "; 100× follows from the rounded 200 T, 75× from the 150 T rumour (C6)"
    return Finding(q, "", verdict, note, derivation=q.explain())


@claim("C8", SECTION)
def c8(ctx):
    lc = _lc(ctx)
    q = ratio(lc.numbers["inference_tokens"].renamed("a"), lc.numbers["pretrain_tokens"].renamed("b"))
    ok = abs(v(q) - 1) < 1e-6
    return Finding(q, "", REPRODUCED if ok else OFF,
                   f"at equal compute the model serves D_inf = {fmt(v(q))} × D_pre tokens: it emits about its "
                   "pre-training corpus (Dwarkesh's line follows from C4; 'exceeds' in seed 001 does not)",
                   derivation=q.explain(max_depth=1))
