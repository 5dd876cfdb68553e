"""Memory tiers (ledger rows K1–K4): drain time = capacity ÷ bandwidth, and which tier holds a cache.

Every number comes from `tokenmath.economics.kvtiers` over the memory-tier catalog (dated prices).
"""

from __future__ import annotations

from ..core.units import fmt
from .claim import OFF, REPRODUCED, WRONG, Finding, NotComputable, check_text, claim, judge, need, unverifiable

SECTION = "tiers"


def _kv():
    return need("tokenmath.economics.kvtiers", "memory tiers, issue 5")


@claim("K1", SECTION)
def k1(ctx):
    kv = _kv()
    rows = ctx.tier_rows()
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
    check = check_text("the tier whose drain time is nearest each hold time (5 min, 1 h) with the tier an explicit "
                       "hold-plus-read-back cost minimum picks, over the catalog's tiers and dated prices",
                       "the same medium", "tier prices that make a slow, cheap medium win over the drain-time match")
    return Finding(None, "", REPRODUCED if agree else OFF, note, derivation="\n".join(lines),
                   value_text="same medium" if agree else "media differ", plots=["memory_tiers"], check=check)


@claim("K2", SECTION)
def k2(ctx):
    kv = _kv()
    rows = ctx.tier_rows(explain=True)
    hdd = [r for r in rows if r.tier.medium == "HDD"]
    if not hdd:
        raise NotComputable("no HDD tier in the catalog")
    fastest = min(hdd, key=lambda r: r.drain_s)
    flags = kv.lecture_drain_flags(rows)
    verdict, note = judge(fastest.drain, ctx.said("K2")["said_value"], ctx.tolerance("K2")[0], unit="s",
                          what=f"fastest HDD ({fastest.name})",
                          wrong="nearline disks drain in about a day; flash spans minutes to hours; HBM and DRAM "
                                "match the lecture")
    spans = []
    for medium in ("HBM", "DRAM", "flash", "HDD"):
        sp = kv.medium_span(rows, medium)
        if sp:
            spans.append(f"{medium} {fmt(sp[0], 's')}–{fmt(sp[1], 's')}")
    note += "; catalog drain times: " + ", ".join(spans)
    check = check_text("capacity ÷ read bandwidth of the fastest-draining HDD in the catalog with 'about an hour'",
                       ctx.tolerance_text("K2"), "a disk of ~24 TB reading at ~7 GB/s (25× today's) would drain in an hour")
    return Finding(fastest.drain, "s", verdict, note, derivation=fastest.drain.explain() + "\n" + "\n".join(flags),
                   plots=["memory_tiers"], check=check)


@claim("K3", SECTION)
def k3(ctx):
    kv = _kv()
    rows = ctx.tier_rows()
    said = dict(ctx.assumptions().lecture_cache_media)  # hold time (s, as text) -> the medium Pope named
    picks = {T: kv.nearest_drain_tier(rows, float(T)) for T in said}
    flags = kv.lecture_tier_flags(rows, said)
    ok = all(picks[T].tier.medium == m for T, m in said.items())
    text = ", ".join(f"{fmt(float(T), 's')} → {p.tier.medium} ({p.name}, drains in {fmt(p.drain_s, 's')})"
                     for T, p in picks.items())
    note = (f"by the lecture's own drain-time rule: {text}" + ("" if ok else
            ". Correction: " + " ".join(flags) + " — Pope's final mapping (flash / spinning disk) does not follow"))
    check = check_text("the media the lecture's own drain-time rule picks for 5 min and 1 h over the catalog's tiers "
                       "with Pope's final answer (flash, spinning disk)", "the same medium for both",
                       "a catalog HDD draining in about an hour (or no flash tier draining in 10 min–6 h)")
    return Finding(None, "", REPRODUCED if ok else WRONG, note, derivation="\n".join([text] + flags), check=check,
                   value_text=" · ".join(f"{fmt(float(T), 's')} → {p.tier.medium}" for T, p in picks.items()))


unverifiable("K4", SECTION)
