"""The lifecycle balance (ledger rows C1–C8): 6ND vs RL vs 2ND, tokens over a model's life, over-training.

    penalty = (r + 1/r) / 2 − 1      extra cost of a·x^-1 + b·x at x = r·x_opt (C3)

Numbers come from `tokenmath.training.lifecycle`, `tokenmath.training` and `core.arch`.
"""

from __future__ import annotations

import numpy as np

from ..core import arch
from ..core.derive import formula, given
from ..core.load import load_training_priors
from ..core.units import fmt
from .claim import IDENTITY, OFF, REPRODUCED, Finding, NotComputable, check_text, claim, judge, need
from .common import ratio, ref, v

SECTION = "lifecycle"


@formula("penalty = (r + 1/r) / 2 − 1", unit="")
def split_penalty(r):
    """Extra total cost of a·x^-1 + b·x when x sits a factor r off its optimum (where the two terms are equal)."""
    return (r + 1 / r) / 2 - 1


def _terms_at_minimum(alpha: float, beta: float) -> float:
    """Falling over rising term at the numeric minimum of x^-α + x^β (a fine log grid)."""
    x = np.geomspace(1e-3, 1e3, 200_001)
    fall, rise = x ** -alpha, x ** beta
    i = int(np.argmin(fall + rise))
    return float(fall[i] / rise[i])


@claim("C1", SECTION)
def c1(ctx):
    """min of a·x^-α + b·x^β: the terms' ratio at the optimum is β/α (= 1, 'equal', only when α = β)."""
    alpha, beta = ctx.said_input("C1", "alpha"), ctx.said_input("C1", "beta")
    a_pl, b_pl = ctx.said_input("C1", "alpha_powerlaw"), ctx.said_input("C1", "beta_powerlaw")
    exact, real = _terms_at_minimum(alpha, beta), _terms_at_minimum(a_pl, b_pl)
    q = given("ratio_at_min", real, "", f"numeric minimum of x^-{a_pl} + x^{b_pl} over a fine grid "
              f"({ctx.said_source('C1', 'alpha_powerlaw')})")
    verdict, note = judge(q, ctx.said("C1")["said_value"], ctx.tolerance("C1")[0],
                          what=f"falling ÷ rising term at the optimum of Chinchilla's loss at fixed compute "
                               f"(N^-{a_pl} against N^{b_pl})")
    note += (f"; it is β/α in general, so exactly 1 only when the exponents match (the blackboard's a/x + b·x: "
             f"{exact:.4f})")
    check = check_text("the ratio of the two terms at the numeric minimum of a·x^-α + b·x^β with Chinchilla's fitted "
                       "exponents (a real sum of a falling and a rising cost) with 1", ctx.tolerance_text("C1"),
                       "exponents further apart than 4:3 (β/α outside 0.75–1.25) make the terms unequal at the optimum")
    return Finding(q, "", verdict, note, check=check,
                   derivation="d/dx (a·x^-α + b·x^β) = 0 ⇒ α·a·x^-α = β·b·x^β ⇒ falling/rising = β/α")


def _lc(ctx, explain=True):
    lifecycle = need("tokenmath.training.lifecycle", "lifecycle balance, issue 6")
    days = ctx.said_input("C5", "lifetime_s") / 86400
    return lifecycle.lifecycle(ctx.said_input("C5", "serving_tokens_per_s"), days,
                               ctx.said_input("C5", "active_params"), explain=explain)


@claim("C2", SECTION)
def c2(ctx):
    runs = need("tokenmath.training.runs", "training FLOP, issue 6")
    lifecycle = need("tokenmath.training.lifecycle", "lifecycle balance, issue 6")
    m = ref(ctx).model
    run_name = ctx.said_input("C2", "training_run")
    run = next((t for t in load_training_priors() if t.name == run_name), None)
    if run is None:
        raise NotComputable(f"no training run {run_name!r} in the catalog")
    S_train, S_inf = run.seq_len, ctx.lecture["reference"]["context"]
    pc = arch.param_counts(m)
    N = given("N_active", pc.active, "params", m.file)
    D = given("D_tok", 1.0, "tok", "one token")
    attn = given("attn_fwd", float(arch.attention_flop_per_token(m, S_train, "prefill")), "FLOP/tok",
                 f"{m.file}: causal attention at the run's {fmt(S_train)}-token sequences ({run.file})")
    train = runs.flop_total(runs.flop_dense(N, D), runs.flop_attention(attn, D))
    per_train = v(train) / pc.active
    per_inf = float(arch.flop_per_token(m, S_inf, "decode")) / pc.active
    tol, _ = ctx.tolerance("C2")
    worst = max(((per_train, 6.0, "training"), (per_inf, 2.0, "inference")), key=lambda t: abs(t[0] / t[1] - 1))
    verdict, note = judge(worst[0], worst[1], tol, what=f"{worst[2]} FLOP per active parameter per token")
    note += (f"; {m.name}: training {fmt(per_train)} at its run's {fmt(S_train)}-token sequences (6 + attention), "
             f"decode {fmt(per_inf)} at {fmt(S_inf)} tokens (2 + attention — MLA's absorbed decode attention is heavy, "
             f"row A10); RL's {fmt(lifecycle.RL_MULTIPLIER)} (range 2–6) is the flashcards' figure, unchecked")
    check = check_text(f"FLOP per active parameter per token from the model's shapes (matmuls + attention: "
                       f"training.flop_total, arch.flop_per_token) for {m.name} with 6 (training) and 2 (inference)",
                       ctx.tolerance_text("C2") + ", for both", "attention FLOP grow with context: long sequences, or "
                       "a heavy attention per token, break '6ND' and '2ND'")
    return Finding(given("flop_per_param_token", worst[0], "", f"{worst[2]}: FLOP per token / N_active"), "", verdict,
                   note, derivation=train.explain(), check=check,
                   value_text=f"train {fmt(per_train)}, decode {fmt(per_inf)}")


@claim("C3", SECTION)
def c3(ctx):
    eq, other = ctx.said_input("C3", "share_equal"), ctx.said_input("C3", "share_other")
    r = ratio(given("a", eq, "", ctx.said_source("C3", "share_equal")),
              given("b", other, "", ctx.said_source("C3", "share_other"))).renamed("r")
    q = split_penalty(r)
    tol, _ = ctx.tolerance("C3")
    ok = v(q) <= tol
    note = (f"a phase given {fmt(other * 100)} % instead of {fmt(eq * 100)} % of the compute sits ×{fmt(v(r))} off the "
            f"balance; in the lecture's own sum-of-a-falling-and-a-rising-cost picture (C1) that costs "
            f"{fmt(v(q) * 100)} % more in all — {'a small factor, as said' if ok else 'more than a small factor'}. "
            "Which split labs use is not public")
    check = check_text("the extra total cost of a·x^-1 + b·x at x a factor r = (1/3)/(1/4) off its optimum with 'only a "
                       "small factor'", ctx.tolerance_text("C3"), "a split more than ≈ 1.55× off the balance (e.g. "
                       "10 % against a third) costs over 10 % more")
    return Finding(q, "%", REPRODUCED if ok else OFF, note, derivation=q.explain(), check=check)


@claim("C4", SECTION)
def c4(ctx):
    lc = _lc(ctx)
    q = ratio(lc.numbers["pretrain_tokens"].renamed("a"), lc.numbers["rl_tokens"].renamed("b"))
    ok = abs(v(q) / ctx.said("C4")["said_value"] - 1) <= ctx.tolerance("C4")[0]
    d_ratio = lc.value("pretrain_tokens") / lc.value("inference_tokens")
    note = (f"D_pre / D_RL = {fmt(v(q))}, D_pre / D_inf = {fmt(d_ratio)} (flashcard algebra: 6·D_pre = 3·D_RL·3 = "
            "2·D_inf·3)")
    check = check_text("D_pre/D_RL from `training.lifecycle` (equal compute per phase) with 1.5", ctx.tolerance_text("C4"),
                       "only through a bug: with the flashcards' coefficients (6, 3·3, 2·3) the ratio is 1.5 by algebra")
    return Finding(q, "", IDENTITY if ok else OFF, note, derivation=q.explain(), check=check)


@claim("C5", SECTION)
def c5(ctx):
    lc = _lc(ctx)
    q = lc.numbers["inference_tokens"]
    verdict, note = judge(q, ctx.said("C5")["said_value"], ctx.tolerance("C5")[0], unit="",
                          what="tokens served over the life (= pre-training tokens)")
    note += f" — {fmt(ctx.said_input('C5', 'serving_tokens_per_s'))} tok/s × 60 days; '~200 T' rounds it down"
    check = check_text("the lecture's own r_serve × T_life (lifecycle.inference_tokens) with 200 T",
                       ctx.tolerance_text("C5"), "only an arithmetic slip: the inputs are the lecture's")
    return Finding(q, "tok", verdict, note, derivation=q.explain(), value_text=f"{v(q):.3g} tokens", check=check)


@claim("C6", SECTION)
def c6(ctx):
    lc = _lc(ctx)
    q = lc.numbers["pretrain_tokens"]
    said = ctx.said("C6")
    verdict, note = judge(q, said["said_value"], ctx.tolerance("C6")[0],
                          what="the lecture's own lifecycle balance for D_pre against the rumoured 150 T")
    note += (f". The rumour itself ({said['unverified'].split(';')[0]}) cannot be checked; against the lecture's back-of-"
             f"envelope (C5) it is ×{fmt(said['said_value'] / v(q))}")
    check = check_text("the pre-training tokens the lecture's balance gives (C4, C5: D_pre = D_inf) with 150 T",
                       ctx.tolerance_text("C6"), "lifecycle inputs giving 110–190 T (e.g. 30 M tok/s for 60 days) "
                       "would agree with the rumour")
    return Finding(q, "tok", verdict, note, derivation=q.explain(), value_text=f"{v(q):.3g} tokens", check=check)


@claim("C7", SECTION)
def c7(ctx):
    lc = _lc(ctx)
    q = lc.numbers["overtraining_factor"]
    verdict, note = judge(q, ctx.said("C7")["said_value"], ctx.tolerance("C7")[0],
                          what="over-training vs Chinchilla (20 tok/param)")
    note += "; 100× follows from the rounded 200 T, 75× from the 150 T rumour (C6)"
    check = check_text("D_pre/(20·N) from `training.lifecycle` with the lecture's inputs with 100×", ctx.tolerance_text("C7"),
                       "only an arithmetic slip: the inputs are the lecture's")
    return Finding(q, "", verdict, note, derivation=q.explain(), check=check)


@claim("C8", SECTION)
def c8(ctx):
    lc = _lc(ctx)
    q = ratio(lc.numbers["inference_tokens"].renamed("a"), lc.numbers["pretrain_tokens"].renamed("b"))
    ok = abs(v(q) - 1) < 1e-6
    check = check_text("D_inf/D_pre from `training.lifecycle` with 1", "1e-6",
                       "only through a bug: equal compute with the flashcards' coefficients makes them equal")
    return Finding(q, "", IDENTITY if ok else OFF,
                   f"at equal compute the model serves D_inf = {fmt(v(q))} × D_pre tokens: it emits about its "
                   "pre-training corpus (Dwarkesh's line follows from C4; 'exceeds' in seed 001 does not)",
                   derivation=q.explain(max_depth=1), check=check)
