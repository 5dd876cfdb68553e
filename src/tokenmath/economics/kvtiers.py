"""KV-cache memory tiers: drain time, the cost of holding a cached prefix, and when that beats recomputing it.

Pope's argument (lecture T ~1:56–2:03, ledger K1): holding B bytes for a time T in a tier costs its
share of the device, B/capacity × $/s × T; reading them back costs B/bandwidth × $/s. Both terms carry
the same device price, so

    t_drain        = capacity / bandwidth                              time to stream the tier once
    usd_per_gb_hour = usd_per_chip_hour / capacity_gb                  HBM: the rented chip, pro rata
                    = usd_per_gb / service_life_h                      other tiers: purchase price over its life
    hold_usd       = bytes / 1e9 · usd_per_gb_hour · (T + t_drain) / 3600
    T_break_even   = 3600 · recompute_usd / (bytes / 1e9 · usd_per_gb_hour) − t_drain

and the cheapest tier for a hold time T is roughly the one whose drain time is T: a faster tier pays
for capacity it holds idle, a slower one for the time it takes to read back. Two readings of that rule
are reported beside the explicit cost minimum: the tier whose drain time is nearest T (in log), and the
slowest tier that drains within T. Recomputing means running prefill again (`pricing.phase_cost`).

Prices are dated (`MemoryTier.prices`): DRAM and flash moved 3–10× in 2025–26, so the answer depends on
the date. HBM's holding cost is the chip's rental, whatever the date (catalog/hardware/*.yaml).
Ignored: servers, power and the network that moves the bytes; a tier's partial use; the accelerator's
wait while a prefix is read back (assumed overlapped). At 2026 prices flash bandwidth is cheaper per
byte than DRAM's, so the cost minimum picks flash even for second-long holds; at 2025 prices, DRAM.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field


from ..core import arch
from ..core.derive import Numbers, Q, formula, lift, plain, value_of
from ..core.errors import InputError
from ..core.load import load_chip, load_tier, names
from ..core.pricing_records import MemoryTier
from ..core.records import Model, System
from ..core.roofline import drain_time

__all__ = ["TierRow", "tier_rows", "drain_time", "usd_per_gb_hour_rental", "usd_per_gb_hour_purchase",
           "hold_usd", "break_even_hold_s", "recompute_usd", "lecture_tier_flags", "runner_up_tier", "nearest_drain_tier", "drains_within_tier", "cheapest_tier",
           "lecture_drain_flags", "KVReport", "kv_report", "HOLD_TIMES_S", "medium_span"]

# the cache lifetimes providers sell (Anthropic's 5-minute and 1-hour writes; Gemini's default 1-hour TTL)
HOLD_TIMES_S = (300.0, 3600.0)


@formula("usd_per_gb_hour = usd_per_chip_hour / capacity_gb", unit="USD")
def usd_per_gb_hour_rental(usd_per_chip_hour, capacity_gb):
    return usd_per_chip_hour / capacity_gb


@formula("usd_per_gb_hour = usd_per_gb / service_life_h", unit="USD")
def usd_per_gb_hour_purchase(usd_per_gb, service_life_h):
    return usd_per_gb / service_life_h


@formula("hold_usd = kv_bytes / 1e9 · usd_per_gb_hour · (T + t_drain) / 3600", unit="USD")
def hold_usd(kv_bytes, usd_per_gb_hour, T, t_drain):
    return kv_bytes / 1e9 * usd_per_gb_hour * (T + t_drain) / 3600


@formula("T_break_even = 3600 · recompute_usd / (kv_bytes / 1e9 · usd_per_gb_hour) − t_drain", unit="s")
def break_even_hold_s(recompute_usd, kv_bytes, usd_per_gb_hour, t_drain):
    return 3600 * recompute_usd / (kv_bytes / 1e9 * usd_per_gb_hour) - t_drain


@formula("recompute_usd = N · c_prefill / 1e6", unit="USD")
def recompute_usd(N, c_prefill):
    return N * c_prefill / 1e6


@dataclass
class TierRow:
    """One tier as priced on a date: its drain time and holding price (Q when explained)."""

    tier: MemoryTier
    drain: object  # t_drain, s
    usd_per_gb_hour: object | None  # None: no price in the catalog
    basis: str  # 'rental', 'purchase' or 'unpriced'
    price_date: str | None  # the date of the price the holding cost uses (rental or purchase)
    usd_per_gb: float | None  # purchase price (HBM: the HBM3e estimate, shown but not used)
    usd_per_gb_date: str | None = None

    @property
    def name(self) -> str:
        return self.tier.name

    @property
    def drain_s(self) -> float:
        return float(value_of(self.drain))

    @property
    def hold_price(self) -> float | None:
        return None if self.usd_per_gb_hour is None else float(value_of(self.usd_per_gb_hour))


def tier_rows(price_date: str | None = None, explain: bool = False, tiers: list[str] | None = None,
              records: list[MemoryTier] | None = None) -> list[TierRow]:
    """Every catalog tier (or these `records`), fastest drain first, priced as of `price_date` (default: latest)."""
    out = []
    for t in records if records is not None else [load_tier(n) for n in tiers or names("tiers")]:
        g = lambda sym, v, unit, fld: lift(explain, sym, v, unit, t.source_of(fld))  # noqa: E731
        d = drain_time(g("capacity", t.capacity_bytes, "B", "capacity_bytes"),
                       g("bandwidth", t.read_bandwidth_bytes_per_s, "B/s", "read_bandwidth_bytes_per_s"))
        dated = t.price_on(price_date)
        usd_per_gb = dated[1].usd_per_gb if dated else None
        chip = load_chip(t.chip) if t.chip else None
        if chip is not None and chip.rental_usd_per_hour:
            p = usd_per_gb_hour_rental(lift(explain, "usd_per_chip_hour", chip.rental_usd_per_hour, "USD",
                                            chip.source_of("rental_usd_per_hour")),
                                       g("capacity_gb", t.capacity_bytes / 1e9, "GB", "capacity_bytes"))
            basis, date = "rental", chip.rental_price_date
        elif dated and t.service_life_s:
            p = usd_per_gb_hour_purchase(
                lift(explain, "usd_per_gb", dated[1].usd_per_gb, "USD", t.source_of(f"prices.{dated[0]}.usd_per_gb")),
                g("service_life_h", t.service_life_s / 3600, "h", "service_life_s"))
            basis, date = "purchase", dated[0]
        else:
            p, basis, date = None, "unpriced", dated[0] if dated else None
        out.append(TierRow(t, d, p, basis, date, usd_per_gb, dated[0] if dated else None))
    return sorted(out, key=lambda r: r.drain_s)


def nearest_drain_tier(rows: list[TierRow], T: float) -> TierRow:
    """The tier whose drain time is nearest the hold time, on a log scale (the lecture's rule, K1)."""
    return min(rows, key=lambda r: abs(math.log(r.drain_s / T)))


def runner_up_tier(rows: list[TierRow], T: float) -> TierRow:
    """The nearest-drain tier of another medium than the nearest tier's: the second choice."""
    first = nearest_drain_tier(rows, T).tier.medium
    return nearest_drain_tier([r for r in rows if r.tier.medium != first] or rows, T)


def drains_within_tier(rows: list[TierRow], T: float) -> TierRow | None:
    """The slowest tier that still drains within the hold time (None if none does)."""
    ok = [r for r in rows if r.drain_s <= T]
    return max(ok, key=lambda r: r.drain_s) if ok else None


def cheapest_tier(rows: list[TierRow], T: float) -> TierRow | None:
    """The priced tier with the lowest cost to hold a byte for T and read it back once."""
    priced = [r for r in rows if r.hold_price is not None]
    if not priced:
        return None
    return min(priced, key=lambda r: hold_usd(1e9, r.hold_price, T, r.drain_s))


def medium_span(rows: list[TierRow], medium: str) -> tuple[float, float] | None:
    """(fastest, slowest) drain time of the tiers of one medium."""
    d = [r.drain_s for r in rows if r.tier.medium == medium]
    return (min(d), max(d)) if d else None


def lecture_drain_flags(rows: list[TierRow]) -> list[str]:
    """The lecture's drain times (K2) against the catalog's, one line per medium it got wrong."""
    from ..core.units import fmt

    flags = []
    by_medium: dict[str, list[TierRow]] = {}
    for r in rows:
        if r.tier.lecture_drain_claim_s:
            by_medium.setdefault(r.tier.medium, []).append(r)
    for medium, rs in by_medium.items():
        lo_claim = min(r.tier.lecture_drain_claim_s for r in rs)
        hi_claim = max(r.tier.lecture_drain_claim_high_s or r.tier.lecture_drain_claim_s for r in rs)
        lo, hi = min(r.drain_s for r in rs), max(r.drain_s for r in rs)
        said = fmt(lo_claim, "s") if lo_claim == hi_claim else f"{fmt(lo_claim, 's')}–{fmt(hi_claim, 's')}"
        head = f"lecture K2: {medium} drains in ~{said}; the catalog's {medium} tiers drain in {fmt(lo, 's')}–{fmt(hi, 's')}"
        if lo > 3 * hi_claim:
            flags.append(f"{head}, {lo / hi_claim:.0f}–{hi / hi_claim:.0f}× longer")
        elif hi < lo_claim / 3:
            flags.append(f"{head}, {lo_claim / hi:.0f}–{lo_claim / lo:.0f}× shorter")
    return flags


def lecture_tier_flags(rows: list[TierRow], lecture_media: dict[str, str]) -> list[str]:
    """The lecture's mapping of cache lifetimes to media (K3), against the drain-time rule it stated (K1)."""
    from ..core.units import fmt

    flags = []
    media = {float(T): nearest_drain_tier(rows, float(T)).tier.medium for T in lecture_media}
    for T_text, medium in lecture_media.items():
        T = float(T_text)
        near, within = nearest_drain_tier(rows, T), drains_within_tier(rows, T)
        if near.tier.medium != medium:
            span = medium_span(rows, medium)
            where = f" ({medium} drains in {fmt(span[0], 's')}–{fmt(span[1], 's')})" if span else ""
            alt = (f"; the slowest tier that drains within it is {within.name} ({within.tier.medium}, "
                   f"{fmt(within.drain_s, 's')})" if within is not None and within.tier.medium != near.tier.medium
                   else "")
            flags.append(f"lecture K3: the {fmt(T, 's')} cache sits in {medium}; by the lecture's own rule "
                         f"(drain time ≈ hold time) it sits in {near.tier.medium}: {near.name} drains in "
                         f"{fmt(near.drain_s, 's')}{alt}{where}")
    if len(set(media.values())) == 1 and len(media) > 1 and set(lecture_media.values()) != set(media.values()):
        medium = next(iter(media.values()))
        shortest = min(media)
        second = runner_up_tier(rows, shortest)
        lifetimes = " and ".join(fmt(T, "s") for T in sorted(media))
        flags.append(f"lecture K3: by the drain-time rule the {lifetimes} caches both sit in {medium} "
                     f"(the runner-up for {fmt(shortest, 's')} is {second.tier.medium}: {second.name} drains in "
                     f"{fmt(second.drain_s, 's')})")
    return flags


# ---- one model's cached prefix ---------------------------------------------------------------

@dataclass
class KVReport(Numbers):
    rows: list[TierRow]
    price_date: str | None
    hold_times_s: tuple[float, ...]
    model: Model | None = None
    system: System | None = None
    numbers: dict = field(default_factory=dict)  # key -> Q or value
    per_tier: dict = field(default_factory=dict)  # tier name -> {hold_usd: {T: Q}, break_even_hold_s: Q}
    choices: dict = field(default_factory=dict)  # T -> {...}
    flags: list[str] = field(default_factory=list)
    assumptions: list[str] = field(default_factory=list)

    def to_dict(self, derivations: bool = False) -> dict:
        tiers = []
        for r in self.rows:
            t = r.tier
            d = {"name": r.name, "display_name": t.display_name, "medium": t.medium, "tier_class": t.tier_class,
                 "capacity_bytes": t.capacity_bytes, "read_bandwidth_bytes_per_s": t.read_bandwidth_bytes_per_s,
                 "drain_time_s": r.drain_s, "usd_per_gb": r.usd_per_gb, "usd_per_gb_date": r.usd_per_gb_date,
                 "usd_per_gb_hour": r.hold_price, "holding_basis": r.basis, "holding_price_date": r.price_date,
                 "lecture_drain_claim_s": t.lecture_drain_claim_s, "source": t.source_of("capacity_bytes")}
            extra = self.per_tier.get(r.name)
            if extra:
                d["hold_usd"] = {f"{T:g}": float(value_of(q)) for T, q in extra["hold_usd"].items()}
                be = extra.get("break_even_hold_s")
                d["break_even_hold_s"] = None if be is None else float(value_of(be))
            tiers.append(d)
        out: dict = {"price_date": self.price_date or "latest", "hold_times_s": list(self.hold_times_s)}
        if self.model is not None:
            out.update({"model": self.model.name, "system": self.system.name})
        out.update({k: plain(v) for k, v in self.numbers.items()})
        out["tiers"] = tiers
        out["choices"] = {f"{T:g}": plain(c) for T, c in self.choices.items()}
        out["flags"] = self.flags
        out["assumptions"] = self.assumptions
        if derivations:
            dv = self.derivations()
            for name, extra in self.per_tier.items():
                for T, q in extra["hold_usd"].items():
                    if isinstance(q, Q):
                        dv[f"{name}.hold_usd.{T:g}"] = q.to_dict()
            out["derivations"] = dv
        return out

    def explain(self) -> str:
        parts = [f"── {k} ──\n{q.explain(max_depth=3)}" for k, q in self.numbers.items() if isinstance(q, Q) and q.formula]
        for T, c in self.choices.items():
            name = c.get("cheapest_tier")
            q = self.per_tier.get(name, {}).get("hold_usd", {}).get(T) if name else None
            if isinstance(q, Q):
                parts.append(f"── hold for {T:g} s in {name} (the cheapest tier) ──\n{q.explain(max_depth=2)}")
            be = self.per_tier.get(name, {}).get("break_even_hold_s") if name else None
            if isinstance(be, Q):
                parts.append(f"── break-even hold time in {name} ──\n{be.explain(max_depth=2)}")
        return "\n\n".join(parts)


def kv_report(model: Model | None = None, system: System | None = None, *, prefix_tokens: int = 100_000,
              hold_times_s: tuple[float, ...] = HOLD_TIMES_S, price_date: str | None = None,
              kv_dtype: str | None = None, precision: str | None = None, prefill_chunk_tokens: int = 8192,
              lecture_media: dict[str, str] | None = None, explain: bool = False) -> KVReport:
    """The tier table; with a model, the cost of holding its prefix in each tier vs recomputing it."""
    for T in hold_times_s:
        if not 0 < T <= 1e10:
            raise InputError(f"--hold must be a positive time of at most 1e10 s, about 300 years (got {T:g} s)")
    if not 1 <= prefix_tokens <= 1e9:
        raise InputError(f"--prefix-tokens must be between 1 and a billion (got {prefix_tokens})")
    rows = tier_rows(price_date, explain)
    rep = KVReport(rows, price_date, tuple(hold_times_s))
    rep.flags = lecture_drain_flags(rows) + (lecture_tier_flags(rows, lecture_media) if lecture_media else [])
    rep.assumptions = [
        "holding cost = the tier's price per GB-hour × (hold time + drain time): hold, then read back once",
        "HBM is priced at the chip's rental per GB; other tiers at their dated purchase price over their "
        "service life; servers, power and the network are not counted",
        "the accelerator's wait while a prefix is read back is not charged (reads overlap other work)",
        f"tier prices as of {price_date or 'the latest date in the catalog'}",
    ]
    for T in hold_times_s:
        near, within, cheap = nearest_drain_tier(rows, T), drains_within_tier(rows, T), cheapest_tier(rows, T)
        second = runner_up_tier(rows, T)
        rep.choices[T] = {"nearest_drain_tier": near.name, "nearest_drain_medium": near.tier.medium,
                          "runner_up_tier": second.name, "runner_up_medium": second.tier.medium,
                          "drains_within_tier": within.name if within else None,
                          "drains_within_medium": within.tier.medium if within else None,
                          "cheapest_tier": cheap.name if cheap else None,
                          "cheapest_medium": cheap.tier.medium if cheap else None}
    if model is None:
        for T in hold_times_s:
            for r in rows:
                if r.hold_price is not None:
                    rep.per_tier.setdefault(r.name, {"hold_usd": {}})["hold_usd"][T] = hold_usd(
                        1e9, r.hold_price, T, r.drain_s)
        rep.assumptions.append("hold_usd per tier is for 1 GB")
        return rep

    from .pricing import phase_cost, price_split, replica_chips

    if system is None:
        raise InputError("a model's recompute cost needs a system: add --on SYSTEM")
    precision = precision or model.weight_dtype
    kv_dtype = kv_dtype or model.kv_dtype
    N = float(prefix_tokens)
    G = replica_chips(model, system, precision=precision, kv_dtype=kv_dtype, S=N)
    B_pre = max(1, math.ceil(prefill_chunk_tokens / N))
    c_pre, st = phase_cost(model, system, phase="prefill", G=G, B=B_pre, S=N, precision=precision,
                           kv_dtype=kv_dtype, explain=explain,
                           layout=price_split(model, system, G=G, precision=precision, kv_dtype=kv_dtype, S=N))
    src = model.file or model.name
    Nq = lift(explain, "N", N, "tok", "given: cached prefix")
    recompute = recompute_usd(Nq, c_pre)
    prefix = lift(explain, "kv_bytes", float(arch.kv_stored_bytes(model, N, kv_dtype)), "B",
                  f"{src}: KV bytes held for a prefix of N tokens ({kv_dtype})")
    rep.model, rep.system = model, system
    rep.numbers = {"prefix_tokens": prefix_tokens, "kv_bytes_per_token": arch.kv_bytes_per_token(model, kv_dtype, explain),
                   "prefix_bytes": prefix, "recompute_usd": recompute, "recompute_usd_per_mtok": c_pre,
                   "recompute_chips": G, "recompute_bound": st.bound}
    for r in rows:
        if r.hold_price is None:
            continue
        p = r.usd_per_gb_hour if explain else r.hold_price
        d = r.drain if explain else r.drain_s
        rep.per_tier[r.name] = {
            "hold_usd": {T: hold_usd(prefix, p, lift(explain, "T", T, "s", "given: hold time"), d)
                         for T in hold_times_s},
            "break_even_hold_s": break_even_hold_s(recompute, prefix, p, d)}
    for T in hold_times_s:
        c = rep.choices[T]
        cheap = c["cheapest_tier"]
        hold = float(value_of(rep.per_tier[cheap]["hold_usd"][T])) if cheap else math.inf
        rc = float(value_of(recompute))
        c["cheapest_hold_usd"] = hold
        c["recompute_usd"] = rc
        c["decision"] = f"hold in {cheap}" if hold < rc else "recompute"
    rep.assumptions.append(
        f"recompute = prefill of the {prefix_tokens:,}-token prefix on {G} × {system.chip.name} at "
        f"{system.usd_per_chip_hour} USD per chip-hour ({B_pre} prompt(s) per step), fully utilised")
    return rep

