"""The memory wall (ledger rows M1–M3): per-GPU HBM bandwidth by generation, scale-up growth, and what
pipelining and scale-up each fix.

    weights per chip ∝ 1/P, KV per chip independent of P          (serving.placement, row P4)
    t_floor = N_total · b_w / (G · W)                             (roofline.latency_floor: ∝ 1/(G·W), no P)
"""

from __future__ import annotations

from ..core import arch
from ..core.derive import given
from ..core.units import fmt
from .claim import OFF, REPRODUCED, Finding, check_text, claim, judge, need, unverifiable
from .claims_pipelining import stage_rows
from .common import model_or_skip, ratio, ref, spec_step, v

SECTION = "memory"

unverifiable("M1", SECTION)


@claim("M2", SECTION)
def m2(ctx):
    gens = ctx.said("M2")["generations"]
    chips = [ctx.chip(n) for n in gens]
    steps = []
    for a, b in zip(chips, chips[1:]):
        steps.append((a.name, b.name, ratio(
            given("a", b.hbm_bandwidth_bytes_per_s, "B/s", b.source_of("hbm_bandwidth_bytes_per_s")),
            given("b", a.hbm_bandwidth_bytes_per_s, "B/s", a.source_of("hbm_bandwidth_bytes_per_s")))))
    top = max(steps, key=lambda t: v(t[2]))
    verdict, note = judge(top[2], ctx.said("M2")["said_value"], ctx.tolerance("M2")[0],
                          what=f"largest per-GPU HBM bandwidth step ({top[0]} → {top[1]})")
    hop, bw = ctx.system("hgx-h100"), ctx.system("gb200-nvl72")
    note += ("; steps " + ", ".join(f"{a}→{b} {fmt(v(q))}×" for a, b, q in steps) +
             f"; scale-up {hop.domain_chips} → {bw.domain_chips} = {fmt(bw.domain_chips / hop.domain_chips)}× "
             "(the lecture: 8×)")
    check = check_text("per-GPU HBM bandwidth steps between the catalog's A100, H100, B200 and Rubin with '1.5–2×'",
                       ctx.tolerance_text("M2") + " on the largest step", "a catalog in which no step exceeds 2.5×")
    return Finding(top[2], "", verdict, note, derivation="\n".join(
        f"{a} → {b}: {q.explain().splitlines()[1].strip()} = {fmt(v(q))}×" for a, b, q in steps),
        plots=["hardware_ratio"], check=check)


@claim("M3", SECTION)
def m3(ctx):
    placement = need("tokenmath.serving.placement", "memory per chip by stage count, issue 3")
    r = ref(ctx)
    m = model_or_skip(ctx, ctx.lecture["reference"]["frontier_model"])
    s = ctx.system(ctx.lecture["reference"]["frontier_system"])
    ep, B, S = (ctx.said_input("P4", k) for k in ("EP", "B", "S"))
    hbm = s.chip.hbm_capacity_bytes
    kv = placement.kv_per_chip(given("pp", 1), given("B", B, "seq", ctx.said_source("P4", "B")),
                               given("kv_held", float(arch.kv_stored_bytes(m, S)), "B",
                                     f"{m.file}: KV held per sequence at S = {fmt(S)}"),
                               given("ep", ep, "", ctx.said_source("P4", "EP")), given("tp_kv", 1))
    capacity_ok = v(kv) < hbm  # pipelining can take the weights per chip towards zero, never the KV
    # bandwidth: the per-token floor through P stages is the unpipelined one (row P2); doubling the domain halves it
    one = spec_step(r.model, r.system, r.G, 1, 0, r.precision)
    two = spec_step(r.model, r.system, 2 * r.G, 1, 0, r.precision)
    halves = ratio(given("a", float(one.t_step) / 2, "s", "batch-1 step on G chips, halved"),
                   given("b", float(two.t_step), "s", "batch-1 step on 2G chips"))
    rows, _, _ = stage_rows(ctx)
    lat = rows[max(rows)]["step_time_s"] / rows[min(rows)]["step_time_s"]
    tol, _ = ctx.tolerance("M3")
    bw_ok = abs(lat - 1) <= tol and abs(v(halves) - 1) <= tol
    ok = capacity_ok and bw_ok
    note = (f"capacity: {m.name} at {fmt(B)} sequences × {fmt(S)} tokens on EP {fmt(ep)} keeps {fmt(v(kv), 'B')} of KV "
            f"per {s.chip.name} at any number of stages, against {fmt(hbm, 'B')} of HBM — pipelining can shrink the "
            f"weights per chip as far as needed {'so it does solve capacity here' if capacity_ok else 'but the KV alone does not fit'}. "
            f"Bandwidth: {r.model.name}'s per-token time moves ×{fmt(lat)} with {max(rows)} stages (P2) but "
            f"×{fmt(float(two.t_step) / float(one.t_step))} with twice the chips in the domain (batch-1 step "
            f"{fmt(float(one.t_step), 's')} → {fmt(float(two.t_step), 's')}): scale-up, not pipelining, buys bandwidth")
    check = check_text("KV per chip (independent of the stage count) with HBM per chip for the frontier case of P4; the "
                       "per-token latency with 4 stages and with 1 (`place`); the batch-1 step on 2G chips with half of "
                       "that on G", ctx.tolerance_text("M3") + " for the two latency ratios; KV below HBM",
                       "a context or batch whose KV alone overflows a chip (pipelining cannot fix that), or hops slow "
                       "enough to make stages cost latency")
    return Finding(kv, "B", REPRODUCED if ok else OFF, note, derivation=kv.explain() + "\n" + halves.explain(),
                   check=check, value_text=f"KV {fmt(v(kv), 'B')}/chip at any P; 2× domain → ×{fmt(float(two.t_step) / float(one.t_step))} latency")
