"""The lifecycle balance (ledger rows C1–C8): 6ND vs RL vs 2ND, tokens over a model's life, over-training.

Numbers come from `tokenmath.lifecycle` and `tokenmath.training` (issue 6).
"""

from __future__ import annotations

import numpy as np

from ..derive import given
from .claim import NotComputable, REPRODUCED, OFF, Finding, claim, need, unverifiable

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


def _pending(what: str):
    need("tokenmath.lifecycle", "lifecycle balance, issue 6")
    raise NotComputable(f"tokenmath.lifecycle exposes no {what} yet")


@claim("C2", SECTION)
def c2(ctx):
    _pending("FLOP coefficients")


unverifiable("C3", SECTION)


@claim("C4", SECTION)
def c4(ctx):
    _pending("token ratios")


@claim("C5", SECTION)
def c5(ctx):
    _pending("pretrain_tokens")


unverifiable("C6", SECTION)


@claim("C7", SECTION)
def c7(ctx):
    _pending("overtraining_factor")


@claim("C8", SECTION)
def c8(ctx):
    _pending("inference vs pre-training tokens")
