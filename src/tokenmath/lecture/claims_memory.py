"""The memory wall (ledger rows M1–M3): per-GPU HBM bandwidth by generation, scale-up growth."""

from __future__ import annotations

from ..core.derive import given
from ..core.units import fmt
from .claim import Finding, claim, judge, unverifiable
from .common import ratio, v

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
    verdict, note = judge(top[2], ctx.said("M2")["said_value"], 0.25,
                          what=f"largest per-GPU HBM bandwidth step ({top[0]} → {top[1]})")
    hop, bw = ctx.system("hgx-h100"), ctx.system("gb200-nvl72")
    note += ("; steps " + ", ".join(f"{a}→{b} {fmt(v(q))}×" for a, b, q in steps) +
             f"; scale-up {hop.domain_chips} → {bw.domain_chips} = {fmt(bw.domain_chips / hop.domain_chips)}× "
             "(the lecture: 8×)")
    return Finding(top[2], "", verdict, note, derivation="\n".join(
        f"{a} → {b}: {q.explain().splitlines()[1].strip()} = {fmt(v(q))}×" for a, b, q in steps),
        plots=["hardware_ratio"])


unverifiable("M3", SECTION, "qualitative (capacity vs bandwidth); rows P4 and R4 hold the numbers")
