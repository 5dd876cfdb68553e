"""Fast and slow modes (ledger rows FM1–FM4): the batch a fast mode must run, and what a slow mode saves.

Numbers come from `tokenmath.serving.modes` (issue 3) and the price sheets read by `tokenmath.economics.infer` (issue 5).
"""

from __future__ import annotations

from ..core.units import fmt
from .claim import OFF, REPRODUCED, Finding, NotComputable, claim, judge, need
from .common import ref, said_q, v

SECTION = "modes"


def _multiples(ctx):
    return said_q(ctx, "FM1", "price_multiple", "p"), said_q(ctx, "FM1", "speed_multiple", "s")


@claim("FM1", SECTION)
def fm1(ctx):
    infer = need("tokenmath.economics.infer", "price sheets, issue 5")
    rd = infer.read_offer(ctx.said("FM1")["offer"])
    fast = [i for i in rd.inferences if i.kind == "service_tier" and i.values.get("tier_kind") == "fast"]
    if not fast:
        raise NotComputable(f"{rd.ref} has no fast tier in the catalog")
    vals = fast[0].values
    p, s = vals["price_multiple"], vals["speed_multiple"]
    verdict, note = judge(p, ctx.said("FM1")["said_value"], 1e-9, what=f"{rd.offer.display_name} fast-mode price multiple")
    if s is None or abs(s - ctx.said_input("FM1", "speed_multiple")) > 1e-9:
        verdict = OFF
    note += f"; speed {'up to ' if vals.get('batch_ratio_is_lower_bound') else ''}{fmt(s)}× (catalog price sheet {rd.sheet.date})"
    return Finding(p, "", verdict, note, derivation=fast[0].explain(), value_text=f"{fmt(p)}× price, {fmt(s)}× speed")


@claim("FM2", SECTION)
def fm2(ctx):
    modes = need("tokenmath.serving.modes", "fast and slow modes, issue 3")
    p, s = _multiples(ctx)
    q = modes.batch_ratio(p, s, 1.0)
    ok = v(q) < 1
    return Finding(q, "", REPRODUCED if ok else OFF,
                   f"same chips per replica ⇒ the fast batch is 1/(p·s) = 1/{fmt(1 / v(q))} of the standard one "
                   "(model-free; the lecture names the direction, not the ratio)", derivation=q.explain(),
                   value_text=f"1/{fmt(1 / v(q))}")


@claim("FM3", SECTION)
def fm3(ctx):
    modes = need("tokenmath.serving.modes", "fast and slow modes, issue 3")
    r = ref(ctx)
    p, s = ctx.said_input("FM1", "price_multiple"), ctx.said_input("FM1", "speed_multiple")
    md = modes.fast_slow_modes(p, s, model=r.model, system=r.system, G=r.G, S=ctx.said_input("FM3", "S"),
                               precision=r.precision, basis="spec", explain=True)
    ks = md.numbers.get("kv_share_model_free") or md.numbers["kv_share"]
    B_std, B_fast = md.value("standard_batch"), md.value("fast_batch")
    ok = B_std is not None and 0 < v(ks) < 1
    note = (f"a two-term roofline gives both multiples when KV is {fmt(v(ks) * 100)} % of the standard step's memory "
            f"time; for {r.model.name} at {fmt(md.S)} tokens (κ = {fmt(md.value('kappa'))}) the standard batch is "
            f"{fmt(B_std)} and the fast one {fmt(B_fast)} (ledger reconstruction, not a lecture number)")
    return Finding(ks, "%", REPRODUCED if ok else OFF, note, derivation=md.explain(), plots=["latency_cost_frontier"])


@claim("FM4", SECTION)
def fm4(ctx):
    modes = need("tokenmath.serving.modes", "fast and slow modes, issue 3")
    r = ref(ctx)
    p, s = ctx.said_input("FM1", "price_multiple"), ctx.said_input("FM1", "speed_multiple")
    md = modes.fast_slow_modes(p, s, model=r.model, system=r.system, G=r.G, S=ctx.said_input("FM3", "S"),
                               precision=r.precision, basis="spec", explain=True)
    q = md.numbers["slow_mode_max_saving"]
    bound = md.value("slow_mode_max_saving_bound")
    said = ctx.said("FM4")["said_value"]
    ok = v(q) <= said
    note = (f"the most a slow mode (batch → ∞) saves on {r.model.name} at {fmt(md.S)} tokens is {fmt(v(q) * 100)} % "
            f"(model-free bound {fmt(bound * 100)} %): 'little', as said — per-sequence KV and compute do not amortise")
    return Finding(q, "%", REPRODUCED if ok else OFF, note, derivation=q.explain() if hasattr(q, "explain") else "")
