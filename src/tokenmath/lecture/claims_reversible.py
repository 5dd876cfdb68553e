"""Reversible layers and the cryptography tangent (ledger rows X1–X6).

    Feistel: (x, y) ↦ (x, y + f(x)); inverse y = z − f(x), for any f (checked numerically here).
"""

from __future__ import annotations

import numpy as np

from ..core import arch
from ..core.derive import given
from ..core.units import fmt
from .claim import REPRODUCED, WRONG, Finding, claim, judge, need, unverifiable
from .common import model_or_skip

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
    training = need("tokenmath.training", "activation memory with reversible layers, issue 6")
    m = model_or_skip(ctx, ctx.said_input("X3", "model"))
    S = ctx.said_input("X3", "S")
    deep = m.evolve(n_layers=2 * m.n_layers)
    rev = [training.activation_bytes(x, s=S, reversible=True) for x in (m, deep)]
    std = [training.activation_bytes(x, s=S, recompute="none") for x in (m, deep)]
    ok = abs(rev[1] / rev[0] - 1) < 1e-9 and std[1] / std[0] > 1.9
    note = (f"{m.name}, one sequence of {fmt(S)} tokens: storing activations takes {fmt(std[0], 'B')} at "
            f"{m.n_layers} layers and {fmt(std[1], 'B')} at {2 * m.n_layers}; reversible layers hold "
            f"{fmt(rev[0], 'B')} at either depth (training.activation_bytes)")
    return Finding(given("act_reversible", rev[0], "B", "training.activation_bytes(reversible=True)"), "B",
                   REPRODUCED if ok else WRONG, note,
                   derivation="activation bytes per chip, recompute none vs reversible, at L and 2L layers:\n" +
                   f"none: {fmt(std[0], 'B')} → {fmt(std[1], 'B')}\nreversible: {fmt(rev[0], 'B')} → {fmt(rev[1], 'B')}")


@claim("X4", SECTION)
def x4(ctx):
    training = need("tokenmath.training", "reversible-layer compute overhead, issue 6")
    m = model_or_skip(ctx, ctx.said_input("X4", "model"))
    S = ctx.said_input("X4", "S")
    pc = arch.param_counts(m)
    attn = float(arch.attention_flop_per_token(m, S, "prefill"))
    q = training.recompute_ratio("none", given("N_active", pc.active, "params", m.file),
                                 given("attn_fwd", attn, "FLOP/tok", f"{m.file}: causal attention at {fmt(S)} tokens"),
                                 reversible=True)
    verdict, note = judge(q, ctx.said("X4")["said_value"], 0.05, what="training FLOP with reversible layers ÷ without")
    note += ": one extra forward pass, ≈ +33 % (the ledger's figure; the lecture states no cost)"
    return Finding(q, "", verdict, note, derivation=q.explain())


unverifiable("X5", SECTION)
unverifiable("X6", SECTION)
