"""Long context (ledger rows L1–L3, and A10 on attention compute): how KV reads and attention FLOP grow
with context, from `arch.kv_read_bytes`, `arch.kv_stored_bytes` and `arch.attention_flop_per_token`, and the
context windows the dated price sheets offer.

    growth exponent p = ln(reads(S2) / reads(S1)) / ln(S2 / S1)       (√n would give 0.5, dense 1)
    t_read = S · kv / (G · W)                                          one sequence's KV read per token
                                                                       (sweep.kv_time_per_seq)
"""

from __future__ import annotations

import math

from ..core import arch
from ..core.derive import formula, given
from ..core.pricing_records import date_key
from ..core.units import fmt
from .claim import OFF, REPRODUCED, Finding, NotComputable, check_text, claim, judge, need
from .claims_pricing import real_models
from .common import chip_W, model_or_skip, ref, said_q, solve_increasing, v

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
    verdict, note = judge(q, ctx.said("L1")["said_value"], ctx.tolerance("L1")[0], what=f"{m.name} KV-read growth exponent",
                          wrong=(f"DSA attends to the top {sa.index_topk:,} tokens (constant in n) and its indexer "
                                 f"reads a small key for every token (linear in n): reads = a + b·n, not √n") if sa else None)
    check = check_text(f"the growth exponent of {m.name}'s KV bytes read per decoded token between "
                       f"{fmt(S1.value)} and {fmt(S2.value)} tokens (its config's sparse attention) with 0.5",
                       ctx.tolerance_text("L1"), "a sparse attention whose reads grow as √n (e.g. block selection "
                       "with blocks ∝ √n)")
    return Finding(q, "", verdict, note, derivation=q.explain(), plots=["cost_vs_context"], check=check,
                   value_text=f"n^{fmt(v(q))}")


@claim("L2", SECTION)
def l2(ctx):
    lecture_date = str(ctx.lecture["date"])
    by_date: dict[str, tuple[int, str]] = {}
    for sh in ctx.sheets():
        if date_key(sh.date) > date_key(lecture_date):
            continue
        for oid, o in sh.offers.items():
            w = o.context_window_tokens or 0
            if w > by_date.get(sh.date, (0, ""))[0]:
                by_date[sh.date] = (w, f"{sh.provider}/{oid}")
    if not by_date:
        raise NotComputable("no dated price sheet lists a context window")
    dates = sorted(by_date, key=date_key)
    first_m = next((d for d in dates if by_date[d][0] >= 1e6), None)
    top = max(dates, key=lambda d: (by_date[d][0], date_key(d)))
    widest = by_date[top]
    q = given("window_max", widest[0], "tok", f"catalog/prices/{widest[1].split('/')[0]}/{top}.yaml: "
                                              f"{widest[1]} context_window_tokens")
    said = ctx.said("L2")["said_value"]
    correction = (f"1M-token windows are on the price sheets from {first_m} ({by_date[first_m][1]}) and "
                  f"{widest[0]:,} by {top} ({widest[1]}); what hovered at 200 K is the price break "
                  "(Gemini's and Claude's long-context bands), not the window") if first_m else ""
    verdict, note = judge(q, said, ctx.tolerance("L2")[0], what=f"the widest context window on a sheet dated up to the "
                                                                 f"lecture ({lecture_date})", wrong=correction or None)
    if verdict == REPRODUCED or not correction:
        correction = f"the widest window on the sheets is {widest[0]:,} tokens ({top}, {widest[1]})"
    history = "; ".join(f"{d}: {by_date[d][0]:,} ({by_date[d][1]})" for d in dates)
    check = check_text("the widest context window on every dated price sheet up to the lecture's date with 200 K",
                       ctx.tolerance_text("L2"), "price sheets whose windows stayed at ≤ 250 K")
    return Finding(q, "tok", verdict, note, derivation="widest window by sheet date: " + history, check=check,
                   value_text=f"{widest[0]:,} tok", extras={"history": history, "correction": correction})


@claim("L3", SECTION)
def l3(ctx):
    sweep = need("tokenmath.serving.sweep", "KV read time per sequence, issue 3")
    r = ref(ctx)
    S = said_q(ctx, "L3", "context", "S", "tok")
    step_s = ctx.said_input("L3", "step_s")
    m, s = r.model, r.system
    kv_tok = given("kv", float(arch.kv_bytes_per_token(m)), "B/tok", f"{m.file}: KV bytes per token ({m.kv_dtype})")
    t_read = sweep.kv_time_per_seq(S, kv_tok, r.G_q, chip_W(s))
    held = float(arch.kv_stored_bytes(m, S.value))
    weights = arch.param_counts(m).total * arch.bytes_per(r.precision)
    cap = r.G * s.chip.hbm_capacity_bytes
    fits = weights + held <= cap
    reads_in_step = v(t_read) <= step_s
    ok = fits and reads_in_step
    others = []
    for name in (ctx.lecture["reference"]["frontier_model"], "llama-3.1-405b"):
        try:
            om = model_or_skip(ctx, name)
        except NotComputable:  # a missing comparison model only shortens the note
            continue
        others.append(f"{name} {fmt(float(arch.kv_stored_bytes(om, S.value)), 'B')}")
    note = (f"one {fmt(S.value)}-token sequence of {m.name} holds {fmt(held, 'B')} of KV: with the weights that is "
            f"{fmt(weights + held, 'B')} of {r.G} × {s.chip.name}'s {fmt(cap, 'B')} ({'fits' if fits else 'does not fit'}), "
            f"and reading it once per token takes {fmt(v(t_read), 's')} against the lecture's {fmt(step_s, 's')} step — "
            + ("servable, one such 'employee' per rack" if ok else "not servable on this rack")
            + ". The same context in other shapes: " + ", ".join(others) + ". Whether an employee needs 100 M "
              "tokens is Dwarkesh's framing and not checked")
    check = check_text(f"one {fmt(S.value)}-token sequence's KV for the reference model with the reference rack's HBM "
                       f"beside the weights, and its per-token read time S·kv/(G·W) with the lecture's {fmt(step_s, 's')} step",
                       "fits, and reads within one step", "a model with more KV per token (GQA without sharing: "
                       "hundreds of kB) or a smaller rack cannot hold or read it in time")
    return Finding(t_read, "s", REPRODUCED if ok else OFF, note, derivation=t_read.explain(), check=check)


def attention_crossover(m) -> float:
    """Context where attention FLOP per decoded token equals the matmul FLOP (2·N_matmul)."""
    two_n = 2 * arch.param_counts(m).matmul
    return solve_increasing(lambda S: float(arch.attention_flop_per_token(m, S, "decode")) - two_n, 1.0, 1e12)


@claim("A10", SECTION)
def a10(ctx):
    every = {m.name: attention_crossover(m) for m in real_models(ctx)}
    ordered = sorted(every.items(), key=lambda kv: kv[1])
    top, lo = ordered[-1], ordered[0]
    m = ctx.model(top[0])
    q = given("S_cross", top[1], "tok", f"{m.file}: attention FLOP/token = 2·N_matmul (arch.attention_flop_per_token)")
    verdict, note = judge(q, ctx.said("A10")["said_value"], ctx.tolerance("A10")[0],
                          what=f"the latest decode crossover of any published model in the catalog ({top[0]})")
    frontier = ctx.lecture["reference"]["frontier_model"]
    extra = ""
    try:
        extra = f"; the lecture's hypothetical {frontier}: {fmt(attention_crossover(model_or_skip(ctx, frontier)))}"
    except NotComputable:  # the hypothetical shape is optional context
        pass
    note += (f"; model-dependent: published models cross at {fmt(lo[1])} ({lo[0]}) to {fmt(top[1])} tokens{extra}. "
             "Sliding windows, shared KV and sparse top-k push it out; dense attention crosses at tens of thousands")
    check = check_text("the context where attention FLOP per decoded token equal the matmul FLOP (2·N_matmul), for "
                       "every published model in the catalog — the largest — with 1 M", ctx.tolerance_text("A10"),
                       "a published model whose attention stays cheap to ≈ 1 M tokens (e.g. mostly sliding-window "
                       "layers with very few global ones)")
    return Finding(q, "tok", verdict, note, check=check, value_text=f"{fmt(lo[1])}–{fmt(top[1])} tok",
                   derivation="S where attention_flop_per_token(S) = 2·N_matmul, decode:\n" +
                   "\n".join(f"{n}: {fmt(s)} tok" for n, s in ordered))
