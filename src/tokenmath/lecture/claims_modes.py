"""Fast and slow modes (ledger rows FM1–FM4): the batch a fast mode must run, and what a slow mode saves.

Numbers come from `tokenmath.serving.modes` and the price sheets read by `tokenmath.economics.infer`: the
multiples are the catalog's (the fast tier of the lecture's offer), so the verdicts follow the price sheet.
"""

from __future__ import annotations

from ..core import arch
from ..core.derive import given
from ..core.units import fmt
from ..serving.serve import memory_required, weight_bytes
from .claim import IDENTITY, OFF, REPRODUCED, Finding, NotComputable, check_text, claim, judge, need
from .common import ref, v

SECTION = "modes"


def _fast_tier(ctx):
    """(reading, inference) of the fast tier on the lecture's offer, from the catalog's price sheet."""
    rd = ctx.read_offer(ctx.said("FM1")["offer"])
    fast = [i for i in rd.inferences if i.kind == "service_tier" and i.values.get("tier_kind") == "fast"]
    if not fast or fast[0].values.get("speed_multiple") is None:
        raise NotComputable(f"{rd.ref} has no fast tier with a speed multiple in the catalog")
    return rd, fast[0]


def _multiples(ctx) -> tuple[float, float, str]:
    rd, f = _fast_tier(ctx)
    return f.values["price_multiple"], f.values["speed_multiple"], f"{rd.offer.display_name} fast tier ({rd.sheet.date})"


def _modes(ctx, explain: bool = True):
    modes = need("tokenmath.serving.modes", "fast and slow modes, issue 3")
    r = ref(ctx)
    p, s, where = _multiples(ctx)
    S = ctx.lecture["reference"]["context"]
    return modes.fast_slow_modes(p, s, model=r.model, system=r.system, G=r.G, S=S, precision=r.precision,
                                 basis="spec", explain=explain), where


@claim("FM1", SECTION)
def fm1(ctx):
    rd, fast = _fast_tier(ctx)
    vals = fast.values
    p, s = vals["price_multiple"], vals["speed_multiple"]
    tol, _ = ctx.tolerance("FM1")
    verdict, note = judge(p, ctx.said("FM1")["said_value"], tol, what=f"{rd.offer.display_name} fast-mode price multiple")
    if abs(s / ctx.said_input("FM1", "speed_multiple") - 1) > tol:
        verdict = OFF
    note += f"; speed {'up to ' if vals.get('batch_ratio_is_lower_bound') else ''}{fmt(s)}× (catalog price sheet {rd.sheet.date})"
    check = check_text(f"the fast tier's price and speed multiples on the catalog's {rd.ref} sheet ({rd.sheet.date}) "
                       "with 6× and 2.5×", ctx.tolerance_text("FM1"), "a price sheet with other multiples")
    return Finding(p, "", verdict, note, derivation=fast.explain(), value_text=f"{fmt(p)}× price, {fmt(s)}× speed",
                   check=check)


@claim("FM2", SECTION)
def fm2(ctx):
    modes = need("tokenmath.serving.modes", "fast and slow modes, issue 3")
    p, s, where = _multiples(ctx)
    q = modes.batch_ratio(given("p", p, "", where), given("s", s, "", where), given("m", 1.0, "", "same chips per replica"))
    ok = v(q) < 1
    note = (f"same chips per replica ⇒ the fast batch is 1/(p·s) = 1/{fmt(1 / v(q))} of the standard one at the "
            f"{where}'s multiples (model-free: for any step-time curve, cost per token is G·t/B and speed 1/t). "
            "Whether the roofline can deliver that cut is FM3")
    check = check_text("B_fast/B_std = m/(p·s) with p, s from the price sheet and m = 1 with 1", "below 1",
                       "only through a bug: on the same chips a faster, dearer mode must run a smaller batch "
                       "(p > 1, s > 1 ⇒ 1/(p·s) < 1)")
    return Finding(q, "", IDENTITY if ok else OFF, note, derivation=q.explain(), value_text=f"1/{fmt(1 / v(q))}",
                   check=check)


@claim("FM3", SECTION)
def fm3(ctx):
    r = ref(ctx)
    md, where = _modes(ctx)
    std, fast = md.points.get("standard_roofline"), md.points.get("fast_roofline")
    ks = md.numbers.get("kv_share_model_free") or md.numbers["kv_share"]
    S = md.S
    cap = r.G * r.system.chip.hbm_capacity_bytes
    W_all = weight_bytes(arch.param_counts(r.model).total, arch.bytes_per(r.precision))
    if std is None:
        verdict, note = OFF, (f"no standard batch on the roofline for {r.model.name} at {fmt(S)} tokens gives "
                              f"{fmt(md.s)}× speed when cut {fmt(md.p * md.s)}×: the multiples are not reproduced")
        need_b = None
    else:
        need_b = memory_required(W_all, std["batch"], float(arch.kv_stored_bytes(r.model, S)))
        fits = need_b <= cap and fast["batch"] >= 1
        verdict = REPRODUCED if fits else OFF
        note = (f"on the roofline ({r.model.name}, {r.G} × {r.system.chip.name}, {fmt(S)} tokens, κ = "
                f"{fmt(md.value('kappa'))}) a standard batch of {fmt(std['batch'])} cut to {fmt(fast['batch'])} gives "
                f"{fmt(fast['speed_multiple'])}× the speed at {fmt(fast['price_multiple'])}× the price; the standard "
                f"batch needs {fmt(need_b, 'B')} of {fmt(cap, 'B')} HBM ({'fits' if fits else 'does not fit'}). "
                f"Model-free, the multiples need KV to be {fmt(v(ks) * 100)} % of the standard step's memory time "
                "(ledger reconstruction, not a lecture number)")
    check = check_text(f"the core roofline's operating points for the reference case at {fmt(S)} tokens: a standard "
                       f"batch whose cut by p·s gives the {where}'s multiples, and whether it fits in HBM",
                       "the point must exist, the standard batch must fit the domain's HBM and the fast batch be ≥ 1",
                       "a model with little KV at this context (κ ≪ the needed KV share) cannot buy the speed by "
                       "cutting the batch, and a rack with too little HBM cannot hold the standard batch")
    val = std["batch"] if std else None
    return Finding(given("B_std", val, "seq", "serving.modes: standard batch on the core roofline") if val else None,
                   "seq", verdict, note, derivation=md.explain(), plots=["latency_cost_frontier"], check=check,
                   value_text="" if val else "no operating point")


@claim("FM4", SECTION)
def fm4(ctx):
    r = ref(ctx)
    md, where = _modes(ctx)
    q = md.numbers["slow_mode_max_saving"]
    bound = md.value("slow_mode_max_saving_bound")
    threshold = ctx.said("FM4")["threshold"]
    why = ctx.lecture["sources"].get("claims.FM4.threshold", "")
    ok = v(q) < threshold
    note = (f"the most a slow mode (batch → ∞) saves on {r.model.name} at {fmt(md.S)} tokens is {fmt(v(q) * 100)} % "
            f"(model-free bound from the {where}'s multiples: {fmt(bound * 100)} %) — "
            + ("'little', as said: per-sequence KV and compute do not amortise" if ok else
               "more than 'little': the KV share the multiples imply is small, so most of the standard step is "
               "weights a bigger batch would amortise"))
    check = check_text(f"the largest saving of a batch → ∞ slow mode over the standard operating point (reference "
                       f"case, the {where}'s multiples) with {fmt(threshold * 100)} %", f"below it ({why})",
                       "a fast tier that bought less speed for its price (e.g. 6× for 1.5×) implies a smaller KV share "
                       "and a slow mode that could more than halve the price")
    return Finding(q, "%", REPRODUCED if ok else OFF, note, derivation=q.explain() if hasattr(q, "explain") else "",
                   check=check, value_text=f"≤ {fmt(v(q) * 100)} % off")
