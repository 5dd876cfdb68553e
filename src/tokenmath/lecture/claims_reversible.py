"""Reversible layers and the cryptography tangent (ledger rows X1–X6).

    Feistel: (x, y) ↦ (x, y + f(x)); inverse y = z − f(x), for any f (checked numerically here).
"""

from __future__ import annotations

import numpy as np

from ..derive import given
from .claim import REPRODUCED, WRONG, Finding, NotComputable, claim, need, unverifiable

SECTION = "reversible"

unverifiable("X1", SECTION)


@claim("X2", SECTION)
def x2(ctx):
    n, samples, seed = (int(ctx.said_input("X2", k)) for k in ("width", "samples", "seed"))
    rng = np.random.default_rng(seed)
    w1, w2 = ((rng.standard_normal((n, n)) / np.sqrt(n)).astype(np.float32) for _ in range(2))
    f = lambda x: np.tanh(x @ w1) @ w2  # noqa: E731  an arbitrary non-invertible f
    x, y = rng.standard_normal((2, samples, n)).astype(np.float32)
    z = y + f(x)
    err = float(np.max(np.abs((z - f(x)) - y)))
    q = given("max_error", err, "", f"float32, {samples} random (x, y) of width {n}, f = tanh-MLP")
    ok = err < 1e-5
    return Finding(q, "", REPRODUCED if ok else WRONG,
                   f"y recovered as z − f(x) to {err:.1e} (float32 rounding) with a random, non-invertible f",
                   derivation="z = y + f(x);  y' = z − f(x);  max |y' − y| over the samples")


@claim("X3", SECTION)
def x3(ctx):
    need("tokenmath.training", "activation memory with reversible layers, issue 6")
    raise NotComputable("tokenmath.training exposes no reversible-layer memory function yet")


@claim("X4", SECTION)
def x4(ctx):
    need("tokenmath.training", "reversible-layer compute overhead, issue 6")
    raise NotComputable("tokenmath.training exposes no reversible-layer overhead function yet")


unverifiable("X5", SECTION)
unverifiable("X6", SECTION)
