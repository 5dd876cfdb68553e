"""Long context (ledger rows L1–L3, and A10 on attention compute): how KV reads and attention FLOP grow
with context, from `arch.kv_read_bytes`, `arch.kv_stored_bytes` and `arch.attention_flop_per_token`.

    growth exponent p = ln(reads(S2) / reads(S1)) / ln(S2 / S1)       (√n would give 0.5, dense 1)
"""

from __future__ import annotations

import math


from ..core import arch
from ..core.derive import formula, given
from ..core.units import fmt
from .claim import NOT_COMPUTABLE, Finding, claim, judge, unverifiable
from .common import model_or_skip, ref, said_q, solve_increasing

SECTION = "context"


@formula("p = ln(r2 / r1) / ln(S2 / S1)", unit="")
def growth_exponent(r2, r1, S2, S1):
    return math.log(r2 / r1) / math.log(S2 / S1)


@claim("L1", SECTION)
def l1(ctx):
    m = model_or_skip(ctx, ctx.said_input("L1", "model"))
    S1, S2 = said_q(ctx, "L1", "context_low", "S1", "tok"), said_q(ctx, "L1", "context_high", "S2", "tok")
    r1 = given("r1", float(arch.kv_read_bytes(m, S1.value)), "B", f"{m.file}: KV + indexer bytes read per token at S1")
    r2 = given("r2", float(arch.kv_read_bytes(m, S2.value)), "B", f"{m.file}: KV + indexer bytes read per token at S2")
    q = growth_exponent(r2, r1, S2, S1)
    sa = m.sparse_attention
    verdict, note = judge(q, ctx.said("L1")["said_value"], 0.15, what=f"{m.name} KV-read growth exponent",
                          wrong=(f"DSA attends to the top {sa.index_topk:,} tokens (constant in n) and its indexer "
                                 f"reads a small key for every token (linear in n): reads = a + b·n, not √n") if sa else None)
    return Finding(q, "", verdict, note, derivation=q.explain(), plots=["cost_vs_context"])


unverifiable("L2", SECTION)


@claim("L3", SECTION)
def l3(ctx):
    S = said_q(ctx, "L3", "context", "S", "tok")
    lines = []
    for name in (ref(ctx).model.name, ctx.lecture["reference"]["frontier_model"]):
        try:
            m = model_or_skip(ctx, name)
        except Exception:
            continue
        lines.append(f"{name}: KV for one {fmt(S.value)}-token sequence = {fmt(float(arch.kv_stored_bytes(m, S.value)), 'B')}")
    return Finding(None, "", NOT_COMPUTABLE, "Dwarkesh's framing (UNVERIFIED); for scale: " + "; ".join(lines),
                   derivation="\n".join(lines))


def attention_crossover(m) -> float:
    """Context where attention FLOP per decoded token equals the matmul FLOP (2·N_matmul)."""
    two_n = 2 * arch.param_counts(m).matmul
    return solve_increasing(lambda S: float(arch.attention_flop_per_token(m, S, "decode")) - two_n, 1.0, 1e12)


@claim("A10", SECTION)
def a10(ctx):
    names = ctx.names("model")
    every = {n: attention_crossover(ctx.model(n)) for n in names}
    main = ctx.lecture["reference"]["frontier_model"]
    main = main if main in every else ref(ctx).model.name
    m = ctx.model(main)
    q = given("S_cross", every[main], "tok", f"{m.file}: attention FLOP/token = 2·N_matmul (arch.attention_flop_per_token)")
    verdict, note = judge(q, ctx.said("A10")["said_value"], 0.5, what=f"{main} decode crossover",
                          wrong="attention compute matches the matmuls at tens of thousands of tokens for dense "
                                "attention; only sliding windows, sparse top-k or shared KV push it out")
    ordered = sorted(every.items(), key=lambda kv: kv[1])
    note += f"; across the catalog {fmt(ordered[0][1])} ({ordered[0][0]}) to {fmt(ordered[-1][1])} ({ordered[-1][0]}) tokens"
    return Finding(q, "tok", verdict, note, derivation="S where attention_flop_per_token(S) = 2·N_matmul, decode:\n" +
                   "\n".join(f"{n}: {fmt(s)} tok" for n, s in ordered))
