"""Reversible layers and the cryptography tangent (ledger rows X1–X6).

    Feistel: (x, y) ↦ (x, y + f(x)); inverse y = z − f(x), for any f (checked numerically here).
    KV cache (X5): hold a prefix's KV in the cheapest tier (kvtiers.hold_usd) against recomputing it by prefill
    (kvtiers.recompute_usd, through `economics.kvtiers.kv_report`).
"""

from __future__ import annotations

import numpy as np

from ..core import arch
from ..core.derive import given
from ..core.units import fmt
from .claim import IDENTITY, OFF, REPRODUCED, WRONG, Finding, check_text, claim, need, unverifiable
from .common import model_or_skip, ref, v

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
    check = check_text("y recovered as z − f(x) with y, over random inputs and a random non-invertible f", "1e-5 "
                       "(float32 rounding)", "only through a bug: the inverse is algebra, true for any f")
    return Finding(q, "", IDENTITY if ok else WRONG,
                   f"y recovered as z − f(x) to {err:.1e} (float32 rounding) with a random, non-invertible f",
                   derivation="z = y + f(x);  y' = z − f(x);  max |y' − y| over the samples", check=check)


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
    check = check_text("activation bytes with and without reversible layers at L and 2L layers "
                       "(training.activation_bytes)", "reversible unchanged to 1e-9, stored ≥ 1.9× at 2L",
                       "only through a bug: the memory model holds O(1) layer inputs for a reversible stack by "
                       "construction")
    return Finding(given("act_reversible", rev[0], "B", "training.activation_bytes(reversible=True)"), "B",
                   IDENTITY if ok else WRONG, note, check=check,
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
    ok = abs(v(q) / ctx.said("X4")["said_value"] - 1) <= 1e-3
    full = training.activation_bytes(m, s=S, recompute="full")
    rev = training.activation_bytes(m, s=S, reversible=True)
    note = (f"training FLOP with reversible layers ÷ without: {fmt(v(q))} — one extra forward pass (2 of 6 FLOP per "
            f"parameter), the same price as full activation checkpointing; for it reversibility keeps {fmt(rev, 'B')} "
            f"of activations where checkpointing keeps {fmt(full, 'B')} ({m.name}, {fmt(S)} tokens). The lecture states "
            "no cost: the +33 % is the ledger's")
    check = check_text("training.recompute_ratio with reversible layers (matmuls and attention) with (2 + 4 + 2)/6",
                       "1e-3", "only through a bug: one more forward pass adds 2 of every 6 FLOP by definition")
    return Finding(q, "", IDENTITY if ok else WRONG, note, derivation=q.explain(), check=check)


@claim("X5", SECTION)
def x5(ctx):
    kvtiers = need("tokenmath.economics.kvtiers", "memory tiers, issue 5")
    r = ref(ctx)
    N = int(ctx.said_input("X5", "prefix_tokens"))
    T = float(ctx.said_input("X5", "hold_s"))
    rep = kvtiers.kv_report(r.model, r.system, prefix_tokens=N, hold_times_s=(T,), precision=r.precision, explain=True)
    recompute, prefix = rep.numbers["recompute_usd"], rep.numbers["prefix_bytes"]
    rows = [row for row in ctx.tier_rows(explain=True) if row.hold_price is not None]
    holds = {row.name: kvtiers.hold_usd(prefix, row.usd_per_gb_hour, given("T", T, "s", ctx.said_source("X5", "hold_s")),
                                        row.drain) for row in rows}
    best = min(holds, key=lambda n: v(holds[n]))
    q = given("recompute_over_hold", v(recompute) / v(holds[best]), "",
              f"kvtiers: recompute {fmt(v(recompute), 'USD')} ÷ hold in {best} {fmt(v(holds[best]), 'USD')}")
    ok = v(q) > 1
    note = (f"{r.model.name}'s {fmt(N)}-token prefix ({fmt(v(prefix), 'B')} of KV): recomputing it by prefill costs "
            f"{fmt(v(recompute), 'USD')}; holding it {fmt(T, 's')} in {best} costs {fmt(v(holds[best]), 'USD')} — "
            f"spending memory saves {fmt(v(q))}× " + ("(the KV-cache half of the claim holds)" if ok else
                                                      "— here recomputing is cheaper")
            + ". RevNets go the other way (X4: +33 % FLOP to drop activations); 'generally' is not checked")
    check = check_text(f"the cost of recomputing a {fmt(N)}-token prefix (prefill on the reference rack, `kv`) with "
                       f"holding its KV for {fmt(T, 's')} in the cheapest catalog tier", "holding cheaper (ratio > 1)",
                       "tier prices thousands of times higher, or a prefill thousands of times cheaper")
    return Finding(q, "", REPRODUCED if ok else OFF, note, derivation=v_explain(holds[best]) + "\n" +
                   v_explain(recompute), check=check)


def v_explain(x) -> str:
    return x.explain() if hasattr(x, "explain") else str(x)
unverifiable("X6", SECTION)
