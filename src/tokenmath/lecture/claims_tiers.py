"""Memory tiers (ledger rows K1–K4): drain time = capacity ÷ bandwidth, and which tier holds a cache.

Every number comes from `tokenmath.economics.kvtiers` over the memory-tier catalog (dated prices).
"""

from __future__ import annotations

from ..core.units import fmt
from .claim import OFF, REPRODUCED, WRONG, Finding, NotComputable, claim, judge, need, unverifiable

SECTION = "tiers"


def _kv():
    return need("tokenmath.economics.kvtiers", "memory tiers, issue 5")


@claim("K1", SECTION)
def k1(ctx):
    kv = _kv()
    rows = kv.tier_rows()
    lines, agree = [], True
    for T in kv.HOLD_TIMES_S:
        near, cheap = kv.nearest_drain_tier(rows, T), kv.cheapest_tier(rows, T)
        if cheap is None:
            raise NotComputable("no tier in the catalog has a price")
        same = near.tier.medium == cheap.tier.medium
        agree &= same
        lines.append(f"hold {fmt(T, 's')}: drain-time rule → {near.name} ({near.tier.medium}, {fmt(near.drain_s, 's')}); "
                     f"cost minimum → {cheap.name} ({cheap.tier.medium}, {fmt(cheap.drain_s, 's')})")
    note = ("the drain-time rule and the explicit cost minimum pick the same medium" if agree else
            "the rule and the explicit cost minimum disagree on the medium for some hold time (prices, not just "
            "drain times, decide)") + ": " + "; ".join(lines)
    return Finding(None, "", REPRODUCED if agree else OFF, note, derivation="\n".join(lines),
                   value_text="same medium" if agree else "media differ", plots=["memory_tiers"])


@claim("K2", SECTION)
def k2(ctx):
    kv = _kv()
    rows = kv.tier_rows(explain=True)
    hdd = [r for r in rows if r.tier.medium == "HDD"]
    if not hdd:
        raise NotComputable("no HDD tier in the catalog")
    fastest = min(hdd, key=lambda r: r.drain_s)
    flags = kv.lecture_drain_flags(rows)
    verdict, note = judge(fastest.drain, ctx.said("K2")["said_value"], 0.5, unit="s", what=f"fastest HDD ({fastest.name})",
                          wrong="nearline disks drain in about a day; flash spans minutes to hours; HBM and DRAM "
                                "match the lecture")
    spans = []
    for medium in ("HBM", "DRAM", "flash", "HDD"):
        sp = kv.medium_span(rows, medium)
        if sp:
            spans.append(f"{medium} {fmt(sp[0], 's')}–{fmt(sp[1], 's')}")
    note += "; catalog drain times: " + ", ".join(spans)
    return Finding(fastest.drain, "s", verdict, note, derivation=fastest.drain.explain() + "\n" + "\n".join(flags),
                   plots=["memory_tiers"])


@claim("K3", SECTION)
def k3(ctx):
    kv = _kv()
    rows = kv.tier_rows()
    said = {"300": "flash", "3600": "HDD"}
    picks = {T: kv.nearest_drain_tier(rows, float(T)) for T in said}
    flags = kv.lecture_tier_flags(rows, said)
    ok = all(picks[T].tier.medium == m for T, m in said.items())
    text = ", ".join(f"{fmt(float(T), 's')} → {p.tier.medium} ({p.name}, drains in {fmt(p.drain_s, 's')})"
                     for T, p in picks.items())
    note = (f"by the lecture's own drain-time rule: {text}" + ("" if ok else
            ". Correction: " + " ".join(flags) + " — Pope's final mapping (flash / spinning disk) does not follow"))
    return Finding(None, "", REPRODUCED if ok else WRONG, note, derivation="\n".join([text] + flags),
                   value_text=" · ".join(f"{fmt(float(T), 's')} → {p.tier.medium}" for T, p in picks.items()))


unverifiable("K4", SECTION)
