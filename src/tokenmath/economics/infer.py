"""Backward: read a price sheet back into architecture (ledger rows A1–A9, K1–K3, FM2–FM3).

Each reading states its assumptions, shows its derivation and gives an interval from the input ranges
in `catalog/assumptions/default.yaml` (active parameters; the chips, hence the hardware ratio R; the
matmul precision).

1. A long-context price step at S* (A2–A3). Past the context where fetching a sequence's KV takes as
   long as computing its next token, decode cost grows with context; a step placed there reveals KV size:
       2·N_active / F = S*·kv / W   ⇒   kv_bytes_per_token = N_active / (R · S*),   R = F / (2·W)
   R counts multiplies per byte at the matmul precision: KV bytes do not shrink with the weights'
   precision, so R does not cancel here (A3e) and FP4 halves the answer. The SIZE of the step is read
   separately: above S*, decode cost per token rises as S/S*, so an output multiple m covers contexts up
   to m·S*; a window S_max costs up to S_max/S* at worst.
2. Output/input price ratio (A6–A7): if prices follow chip time and prefill runs at the compute floor,
       decode_utilisation_relative = p_in / p_out
3. Cache prices (A8–A9, K1–K3): a write premium or storage fee is a price for holding, a hit discount a
   price for not recomputing:
       holding_rate    = (p_write − p_in) / lifetime        (or the storage fee per MTok-hour)
       T_break_even    = 3600 · (p_in − p_read) / holding_rate
       usd_per_gb_hour = holding_rate / (kv_bytes_per_token · 1e6 / 1e9)
   and the memory tier whose drain time matches each lifetime (`kvtiers`, the lecture's own rule K1).
4. Fast and priority tiers (FM2–FM3): batch_ratio = 1/(p·s) and the KV share of the standard step,
   kv_share = (1 − 1/s)/(1 − 1/(p·s)), both from `modes` (issue 3's module, reused).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core import arch
from ..core.derive import Q, formula, given, value_of
from ..core.errors import InputError, not_one_of
from .kvtiers import drains_within_tier, lecture_drain_flags, lecture_tier_flags, nearest_drain_tier, tier_rows
from ..core.load import CatalogError, load_assumptions, load_chip, load_model, load_offer, load_price_sheet, \
    price_sheet_dates, providers
from ..serving.modes import batch_ratio, kv_share_for_multiples
from ..core.pricing_records import InferenceAssumptions, LongContextBand, Offer, PriceSheet
from ..core.roofline import hardware_ratio
from ..core.units import COMPUTE_FORMAT, PRECISION_BYTES, fmt

__all__ = ["Inference", "Reading", "read_offer", "read_all", "kv_from_price_step", "decode_utilisation_relative",
           "holding_rate_from_write", "break_even_hold_s", "implied_usd_per_gb_hour", "cost_parity_context",
           "window_cost_multiple", "hardware_ratio_range"]


@formula("kv_bytes_per_token = N_active / (R · S_star)", unit="B/tok")
def kv_from_price_step(N_active, R, S_star):
    return N_active / (R * S_star)


@formula("decode_utilisation_relative = p_in / p_out", unit="")
def decode_utilisation_relative(p_in, p_out):
    return p_in / p_out


@formula("holding_rate = (p_write − p_in) / lifetime_h", unit="USD")
def holding_rate_from_write(p_write, p_in, lifetime_h):
    return (p_write - p_in) / lifetime_h


@formula("T_break_even = 3600 · (p_in − p_read) / holding_rate", unit="s")
def break_even_hold_s(p_in, p_read, holding_rate):
    return 3600 * (p_in - p_read) / holding_rate


@formula("usd_per_gb_hour = holding_rate / (kv_bytes_per_token · 1e6 / 1e9)", unit="USD")
def implied_usd_per_gb_hour(holding_rate, kv_bytes_per_token):
    return holding_rate / (kv_bytes_per_token * 1e6 / 1e9)


@formula("cost_parity_context = m_out · S_star", unit="tok")
def cost_parity_context(m_out, S_star):
    return m_out * S_star


@formula("window_multiple = S_max / S_star", unit="")
def window_cost_multiple(S_max, S_star):
    return S_max / S_star


@dataclass
class Inference:
    """One reading of a price: its numbers, derivations, assumptions, and what it does and does not imply."""

    kind: str  # 'long_context', 'output_input', 'cache', 'service_tier'
    title: str
    values: dict
    derivations: dict = field(default_factory=dict)  # name -> Q
    assumptions: list[str] = field(default_factory=list)
    implies: list[str] = field(default_factory=list)
    does_not_imply: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)  # extra worked lines (intervals, tables)

    def to_dict(self, derivations: bool = False) -> dict:
        d = {"kind": self.kind, "title": self.title, **self.values, "assumptions": self.assumptions,
             "implies": self.implies, "does_not_imply": self.does_not_imply, "flags": self.flags}
        if derivations:
            d["derivations"] = {k: q.to_dict() for k, q in self.derivations.items() if isinstance(q, Q)}
        return d

    def explain(self) -> str:
        out = [f"── {self.title} ──"]
        for q in self.derivations.values():
            if isinstance(q, Q):
                out.append(q.explain())
        out += self.lines
        for head, items, mark in (("assumptions", self.assumptions, "-"), ("implies", self.implies, "-"),
                                  ("does not imply", self.does_not_imply, "-"), ("flags", self.flags, "!")):
            if items:
                out.append(f"{head}:")
                out += [f"  {mark} {x}" for x in items]
        return "\n".join(out)


@dataclass
class Reading:
    """Every inference one offer's prices support."""

    ref: str  # provider/offer
    sheet: PriceSheet
    offer_id: str
    offer: Offer
    inferences: list[Inference]

    @property
    def flags(self) -> list[str]:
        return [f for i in self.inferences for f in i.flags]

    def get(self, kind: str) -> Inference | None:
        return next((i for i in self.inferences if i.kind == kind), None)

    def headline(self) -> dict:
        """The numbers the issue names, flat: kv_bytes_per_token (+ _low/_high), batch_ratio, ..."""
        h: dict = {"offer": self.ref, "date": self.sheet.date, "display_name": self.offer.display_name,
                   "currency": self.offer.currency}
        lc, oi, ca = self.get("long_context"), self.get("output_input"), self.get("cache")
        if lc:
            for k in ("threshold_tokens", "kv_bytes_per_token", "kv_bytes_per_token_low", "kv_bytes_per_token_high",
                      "input_multiplier", "output_multiplier"):
                h[k] = lc.values.get(k)
        if oi:
            h["output_over_input"] = oi.values["output_over_input"]
            h["decode_utilisation_relative"] = oi.values["decode_utilisation_relative"]
        if ca:
            for k in ("cache_hit_over_input", "holding_rate_per_mtok_hour", "break_even_hold_s"):
                h[k] = ca.values.get(k)
            h["tiers_for_lifetimes"] = {k: v["nearest_drain_tier"] for k, v in ca.values.get("lifetimes", {}).items()}
        fast = [i for i in self.inferences if i.kind == "service_tier" and i.values.get("batch_ratio") is not None]
        if fast:
            h["batch_ratio"] = fast[0].values["batch_ratio"]
            h["kv_share_standard"] = fast[0].values.get("kv_share_standard")
        return h

    def to_dict(self, derivations: bool = False) -> dict:
        return {**self.headline(), "inferences": [i.to_dict(derivations) for i in self.inferences],
                "flags": self.flags}

    def explain(self) -> str:
        head = f"{self.offer.display_name} ({self.ref}, price sheet {self.sheet.date}: {self.sheet.file})"
        return "\n\n".join([head] + [i.explain() for i in self.inferences])


# ---- the hardware ratio over the assumed chips and precisions ----------------------------------

def hardware_ratio_range(chips: list[str], precisions: list[str]) -> list[tuple[str, str, float]]:
    """(chip, precision, R) for each chip and each precision whose matmul rate it has a native peak for (a storage
    format read as serve reads it, units.COMPUTE_FORMAT: 'int8' weight-only at the 16-bit rate, 'w8a8' at the INT8
    one, 'mxfp4' at FP4's); R = F / (2·W) per byte."""
    out = []
    for c in chips:
        chip = load_chip(c)
        for p in precisions:
            peak = COMPUTE_FORMAT.get(p, p)
            if peak in chip.peak_flop_per_s:
                out.append((c, p, float(hardware_ratio(chip.peak_flop_per_s[peak], chip.hbm_bandwidth_bytes_per_s,
                                                       1.0))))
    if not out:
        raise InputError(f"none of {', '.join(chips)} has a peak at {', '.join(precisions)} in the catalog")
    return out


def _src(sheet: PriceSheet, oid: str, path: str) -> str:
    """A price's source, with the sheet it is read from."""
    return f"{sheet.file}: {sheet.figure_source(oid, path)}"


def _multiple(band_value, base_value):
    return None if band_value is None or base_value in (None, 0) else band_value / base_value


# ---- 1. long-context step -----------------------------------------------------------------------

def _long_context(sheet: PriceSheet, oid: str, o: Offer, band: LongContextBand, a: InferenceAssumptions,
                  precisions: list[str], active: tuple[float, float, float]) -> Inference:
    key = next(k for k, b in o.long_context.items() if b is band)
    S = band.above_tokens
    Rs = hardware_ratio_range(a.chips_for(sheet.provider), precisions)
    lo_c, hi_c = min(Rs, key=lambda r: r[2]), max(Rs, key=lambda r: r[2])
    N_lo, N_mid, N_hi = active
    src_band = sheet.figure_source(oid, f"long_context.{key}.input_per_mtok")
    q = kv_from_price_step(given("N_active", N_mid, "params", a.source_of("active_params")),
                           given("R", a.lecture_hardware_ratio, "", a.source_of("lecture_hardware_ratio")),
                           given("S_star", S, "tok", f"{sheet.file}: prompts over {S:,} tokens priced higher "
                                                    f"({src_band})"))
    kv_lo = kv_from_price_step(N_lo, hi_c[2], S)
    kv_hi = kv_from_price_step(N_hi, lo_c[2], S)
    m_in = _multiple(band.input_per_mtok, o.input_per_mtok)
    m_out = _multiple(band.output_per_mtok, o.output_per_mtok)
    values = {"threshold_tokens": S, "kv_bytes_per_token": q.value, "kv_bytes_per_token_low": kv_lo,
              "kv_bytes_per_token_high": kv_hi, "hardware_ratio": a.lecture_hardware_ratio,
              "hardware_ratio_low": lo_c[2], "hardware_ratio_high": hi_c[2],
              "active_params": N_mid, "active_params_low": N_lo, "active_params_high": N_hi,
              "input_multiplier": m_in, "output_multiplier": m_out,
              "kv_elements_per_token": {p: q.value / PRECISION_BYTES[p] for p in ("bf16", "fp8")}}
    lines = [f"interval: {fmt(kv_lo, 'B/tok')} … {fmt(kv_hi, 'B/tok')}",
             f"  low:  N_active {fmt(N_lo, 'params')}, R {fmt(hi_c[2])} ({hi_c[0]} {hi_c[1]})",
             f"  high: N_active {fmt(N_hi, 'params')}, R {fmt(lo_c[2])} ({lo_c[0]} {lo_c[1]})",
             "  R = F / (2·W) per chip and precision: " + "; ".join(f"{c} {p} {fmt(r)}" for c, p, r in Rs),
             f"  as KV elements: {fmt(values['kv_elements_per_token']['bf16'])} at bf16, "
             f"{fmt(values['kv_elements_per_token']['fp8'])} at fp8"]
    derivs = {"kv_bytes_per_token": q}
    implies, not_implies, flags = [], [], []
    if m_out is not None:
        par = cost_parity_context(given("m_out", m_out, "", f"{sheet.file}: output {band.output_per_mtok} vs "
                                                             f"{o.output_per_mtok}"), given("S_star", S, "tok"))
        derivs["cost_parity_context"] = par
        values["cost_parity_context_tokens"] = par.value
        implies.append(f"above S* decode cost per token grows as S/S* (KV reads dominate), so the ×{m_out:g} "
                       f"output step pays for decode up to about {fmt(par.value)} tokens of context at cost parity")
    if o.context_window_tokens and o.context_window_tokens > S:
        w = window_cost_multiple(given("S_max", o.context_window_tokens, "tok", _src(sheet, oid, "context_window_tokens")),
                                 given("S_star", S, "tok"))
        derivs["window_multiple"] = w
        values["window_cost_multiple"] = w.value
        if m_out is not None and m_out >= w.value:
            implies.append(f"a full {o.context_window_tokens:,}-token window costs up to {w.value:.3g}× a token at "
                           f"S* in decode, so the ×{m_out:g} step covers even a full window at cost parity")
        else:
            implies.append(f"a full {o.context_window_tokens:,}-token window costs up to {w.value:.3g}× a token at "
                           f"S* in decode: a flat step means the provider expects long requests well below the "
                           f"window (or averages over them)")
    not_implies.append("the step's size says nothing about KV bytes: only where the step sits (S*) carries "
                       "kv = N_active/(R·S*)")
    if m_in is not None and m_out is not None and m_in > m_out:
        not_implies.append(f"the input step (×{m_in:g}) exceeding the output step (×{m_out:g}) is not a KV "
                           "effect: prefill is compute-bound and reads each prompt's KV once, so the roofline "
                           "raises output (decode) cost more than input cost; a larger input step is a pricing "
                           "choice (or attention FLOPs at very long context), not a readout")
    not_implies.append("that S* is exactly the crossover: a provider may round it, or price on averages "
                       "(the lecture: 'somewhat aligned … maybe not exactly', A2)")
    if m_in is not None and m_out is not None and abs(m_in - m_out) > 1e-9:
        flags.append(f"lecture A1: the step is not one number — input ×{m_in:g}, output ×{m_out:g} "
                     f"(the lecture quoted '+50%' for Gemini 3.1 above 200K)")
    elements = a.lecture_kv_layers * 2 * a.lecture_kv_heads * a.lecture_kv_head_dim
    at_bf16 = elements * PRECISION_BYTES["bf16"]
    inside = kv_lo <= at_bf16 <= kv_hi
    if band is o.bands[0]:  # once per offer
        flags.append(f"lecture A4: {a.lecture_kv_layers} layer × 2 × {a.lecture_kv_heads} KV heads × d_head "
                     f"{a.lecture_kv_head_dim} = {elements:,} elements is {fmt(a.lecture_kv_claim_bytes, 'B')} only "
                     f"at 1 byte per element (fp8/int8); at bf16 it is {fmt(at_bf16, 'B')}, "
                     f"{'inside' if inside else 'outside'} this interval")
    fp4 = [r for r in Rs if r[1] == "fp4"]
    if fp4 and "fp8" in precisions:
        not_implies.append(f"a precision: FP4 matmuls (R up to {fmt(max(r[2] for r in fp4))}) halve the "
                           "answer against FP8, and nothing in a price tells them apart (A3e)")
    assumptions = [
        "the step sits at the decode crossover: 2·N_active/F = S*·kv/W (weights amortised by a large batch)",
        f"N_active {fmt(N_mid, 'params')} ({fmt(N_lo, 'params')}–{fmt(N_hi, 'params')}): "
        f"{a.source_of('active_params')}",
        f"R at the lecture's {fmt(a.lecture_hardware_ratio)}; range over {', '.join(a.chips_for(sheet.provider))} "
        f"at {', '.join(precisions)}: {a.source_of('hardware')}",
    ]
    if o.catalog_model:
        try:
            actual = float(arch.kv_bytes_per_token(load_model(o.catalog_model)))
            lines.append(f"  the catalog model {o.catalog_model} caches {fmt(actual, 'B/tok')}")
            values["catalog_kv_bytes_per_token"] = actual
        except CatalogError:
            pass
    return Inference("long_context", f"long-context step at {fmt(S)} tokens → KV bytes per token", values, derivs,
                     assumptions, implies, not_implies, flags, lines)


# ---- 2. output/input ratio ----------------------------------------------------------------------

def _output_input(sheet: PriceSheet, oid: str, o: Offer) -> Inference:
    pin = given("p_in", o.input_per_mtok, o.currency, _src(sheet, oid, "input_per_mtok"))
    pout = given("p_out", o.output_per_mtok, o.currency, _src(sheet, oid, "output_per_mtok"))
    q = decode_utilisation_relative(pin, pout)
    r = o.output_per_mtok / o.input_per_mtok
    values = {"output_over_input": r, "decode_utilisation_relative": q.value,
              "decode_batch_over_optimal_if_no_kv": q.value}
    flags = []
    if not 3 <= r <= 5:
        flags.append(f"lecture A6: output costs 3–5× input; here {r:.3g}×")
    return Inference(
        "output_input", "output/input price ratio → decode utilisation relative to prefill", values, {"decode_utilisation_relative": q},
        ["prices follow chip time per token with the same margin on both", "prefill runs at the compute floor",
         "no speculative decoding or other decode-side savings"],
        [f"decode runs at {q.value:.3g} of prefill's compute utilisation (A7)",
         f"with KV reads negligible, decode batch ≈ {q.value:.3g} × B* (u = B/B* = p_in/p_out); with KV the "
         f"ratio is 1/u + kappa = {r:.3g} (FM3)"],
        ["a model size or a batch size on its own: only their ratio to the compute floor"], flags)


# ---- 3. cache prices ----------------------------------------------------------------------------

def _kv_for_cache(reading_lc: Inference | None, o: Offer, a: InferenceAssumptions, sheet: PriceSheet,
                  precisions: list[str], active) -> tuple[float, float, float, str]:
    if reading_lc is not None:
        v = reading_lc.values
        return v["kv_bytes_per_token"], v["kv_bytes_per_token_low"], v["kv_bytes_per_token_high"], \
            "inferred from this offer's long-context step"
    if o.catalog_model:
        try:
            kv = float(arch.kv_bytes_per_token(load_model(o.catalog_model)))
            return kv, kv, kv, f"the catalog model {o.catalog_model}"
        except CatalogError:
            pass
    S = a.lecture_threshold_tokens
    Rs = hardware_ratio_range(a.chips_for(sheet.provider), precisions)
    lo, hi = min(r[2] for r in Rs), max(r[2] for r in Rs)
    return (kv_from_price_step(active[1], a.lecture_hardware_ratio, S), kv_from_price_step(active[0], hi, S),
            kv_from_price_step(active[2], lo, S), f"assumed: the lecture's frontier model (crossover at {fmt(S)})")


def _cache(sheet: PriceSheet, oid: str, o: Offer, a: InferenceAssumptions, lc: Inference | None,
           precisions: list[str], active, rows) -> Inference | None:
    if o.cache_read_per_mtok is None:
        return None
    src = lambda f: _src(sheet, oid, f)  # noqa: E731
    cur = o.currency
    values: dict = {"cache_hit_over_input": o.cache_read_per_mtok / o.input_per_mtok}
    derivs: dict = {}
    implies, not_implies, flags, lines = [], [], [], []
    implies.append(f"a hit costs {values['cache_hit_over_input']:.3g} of a miss: holding and reloading KV is "
                   f"priced {1 / values['cache_hit_over_input']:.3g}× below recomputing it (A8)"
                   if o.cache_read_per_mtok > 0 else "hits are free")
    rates: dict[str, Q] = {}
    for lifetime_s, field_name in ((300.0, "cache_write_5m_per_mtok"), (3600.0, "cache_write_1h_per_mtok")):
        pw = getattr(o, field_name)
        if pw is not None:
            rates[f"{lifetime_s:g}"] = holding_rate_from_write(
                given("p_write", pw, cur, src(field_name)), given("p_in", o.input_per_mtok, cur, src("input_per_mtok")),
                given("lifetime_h", lifetime_s / 3600, "h", src("cache_lifetimes_s")))
    if o.cache_storage_per_mtok_hour is not None:
        rates["storage"] = given("holding_rate", o.cache_storage_per_mtok_hour, cur, src("cache_storage_per_mtok_hour"))
    kv, kv_lo, kv_hi, kv_how = _kv_for_cache(lc, o, a, sheet, precisions, active)
    if rates:
        key = "3600" if "3600" in rates else ("storage" if "storage" in rates else next(iter(rates)))
        rate = rates[key]
        be = break_even_hold_s(given("p_in", o.input_per_mtok, cur, src("input_per_mtok")),
                               given("p_read", o.cache_read_per_mtok, cur, src("cache_read_per_mtok")), rate)
        gbh = implied_usd_per_gb_hour(rate, given("kv_bytes_per_token", kv, "B/tok", kv_how))
        derivs.update({"holding_rate": rate, "break_even_hold_s": be, "usd_per_gb_hour": gbh})
        values.update({"holding_rate_per_mtok_hour": {k: float(value_of(v)) for k, v in rates.items()},
                       "break_even_hold_s": be.value, "implied_usd_per_gb_hour": gbh.value,
                       "implied_usd_per_gb_hour_low": implied_usd_per_gb_hour(rate.value, kv_hi),
                       "implied_usd_per_gb_hour_high": implied_usd_per_gb_hour(rate.value, kv_lo),
                       "kv_bytes_per_token_used": kv})
        lines.append(f"holding price per GB-hour over the KV interval {fmt(kv_lo, 'B/tok')} … {fmt(kv_hi, 'B/tok')}: "
                     f"{_money(values['implied_usd_per_gb_hour_low'], cur)} … "
                     f"{_money(values['implied_usd_per_gb_hour_high'], cur)} (kv from {kv_how})")
        cheaper = [r for r in rows if r.hold_price is not None and r.hold_price < values["implied_usd_per_gb_hour_low"]]
        if cur == "USD":
            media = sorted({r.tier.medium for r in cheaper}, key=["HBM", "DRAM", "flash", "HDD"].index)
            implies.append(f"at these prices holding is worth it for up to {fmt(be.value, 's')}; the price per GB-hour "
                           f"({_money(gbh.value, cur)}) covers holding in " +
                           (", ".join(media) if media else "no catalog tier") + " (tiers priced below it)")
        for k, r in rates.items():
            if k != "storage":
                lines.append(f"  write premium for {fmt(float(k), 's')}: {_money(float(value_of(r)), cur)} per MTok-hour "
                             f"({float(value_of(r)) / o.input_per_mtok:.3g}× input per hour)")
        not_implies.append("the medium itself: a price per hour bounds what holding may cost, not where it is held")
    lifetimes = {}
    for T in o.cache_lifetimes_s:
        near, within = nearest_drain_tier(rows, T), drains_within_tier(rows, T)
        lifetimes[f"{T:g}"] = {"lifetime_s": T, "nearest_drain_tier": near.name, "nearest_drain_medium": near.tier.medium,
                               "nearest_drain_time_s": near.drain_s,
                               "drains_within_tier": within.name if within else None,
                               "drains_within_medium": within.tier.medium if within else None}
        lines.append(f"lifetime {fmt(T, 's')}: drain-time rule → {near.name} ({near.tier.medium}, drains in "
                     f"{fmt(near.drain_s, 's')}); slowest tier draining within it: "
                     f"{within.name + ' (' + within.tier.medium + ')' if within else 'none'}")
    if lifetimes:
        values["lifetimes"] = lifetimes
        media = {float(k): v for k, v in a.lecture_cache_media.items() if float(k) in o.cache_lifetimes_s}
        flags += lecture_drain_flags([r for r in rows if r.tier.medium == "HDD"])
        flags += lecture_tier_flags(rows, {f"{T:g}": m for T, m in media.items()}) if media else []
        not_implies.append("which tier a provider uses: no provider documents it (K3, K4)")
    elif o.cache_note:
        lines.append(f"cache: {o.cache_note}")
    return Inference("cache", "cache prices → holding vs recomputing, and the tier for each lifetime", values, derivs,
                     ["a hit saves the customer what a miss would cost the provider: prefill at the input price",
                      "a write premium (or storage fee) pays for holding the KV for the cache's lifetime",
                      f"KV bytes per token: {kv_how}",
                      "tiers: the drain-time rule (K1) on catalog/tiers; prices as of the latest date"],
                     implies, not_implies, flags, lines)


def _money(x: float, currency: str) -> str:
    return fmt(x, "USD") if currency == "USD" else f"{fmt(x)} {currency}"


# ---- 4. service tiers -----------------------------------------------------------------------------

def _service_tier(sheet: PriceSheet, oid: str, o: Offer, key: str) -> Inference:
    t = o.service_tiers[key]
    src = lambda f: _src(sheet, oid, f"service_tiers.{key}.{f}")  # noqa: E731
    m_in = _multiple(t.input_per_mtok, o.input_per_mtok)
    m_out = _multiple(t.output_per_mtok, o.output_per_mtok)
    P = t.price_multiple or m_out or m_in
    values: dict = {"tier": key, "tier_kind": t.kind, "price_multiple": P, "price_multiple_low": t.price_multiple_low,
                    "input_multiple": m_in, "output_multiple": m_out, "speed_multiple": t.speed_multiple,
                    "batch_ratio": None, "batch_ratio_high": None, "kv_share_standard": None}
    derivs: dict = {}
    implies, not_implies, lines = [], [], []
    title = f"{t.kind} tier '{key}' (×{P:.3g} price) → batch ratio and KV share"
    assumptions = ["same chips per replica in both tiers; cost per token = chip time / batch (FM2)"]
    if t.kind == "off-peak":
        implies.append("a time-of-day discount prices idle capacity (utilisation), not a batch size")
        return Inference("service_tier", f"off-peak tier '{key}' (×{P:.3g} price)", values, {}, [], implies,
                         ["a batch ratio: the service is the same, only the hour differs"], [], [t.note] if t.note else [])
    if m_in and m_out and abs(m_in - m_out) > 1e-9:
        lines.append(f"input ×{m_in:.3g}, output ×{m_out:.3g}: the output multiple is used (speed is output tokens/s)")
    if t.speed_multiple:
        p = given("p", P, "", src("price_multiple") if t.price_multiple else src("output_per_mtok"))
        s = given("s", t.speed_multiple, "", src("speed_multiple"))
        br, ks = batch_ratio(p, s), kv_share_for_multiples(p, s)
        derivs = {"batch_ratio": br, "kv_share": ks}
        values.update({"batch_ratio": br.value, "kv_share_standard": ks.value,
                       "slow_mode_max_saving": 1 - ks.value})
        values["batch_ratio_is_lower_bound"] = t.speed_is_upper_bound
        if t.speed_is_upper_bound:  # speed ≤ s: batches shrink at most p·s times, the KV share is at most ks
            implies.append(f"the fast tier runs batches at most {1 / br.value:.3g}× smaller than standard "
                           f"(batch ratio ≥ {br.value:.3g}; the speed multiple is 'up to')")
            implies.append(f"for a two-term roofline (weights + KV per sequence) to give both multiples, KV is at most "
                           f"{ks.value:.3g} of the standard step's memory time (FM3), so a slow mode could save at "
                           f"most 1 − kv_share, {1 - ks.value:.3g} or more of the standard price (FM4)")
        else:
            implies.append(f"the fast tier runs {1 / br.value:.3g}× smaller batches (batch ratio {br.value:.3g})")
            implies.append(f"for a two-term roofline (weights + KV per sequence) to give both multiples, KV is "
                           f"{ks.value:.3g} of the standard step's memory time (FM3); a slow mode can save at most "
                           f"{1 - ks.value:.3g} of the standard price (FM4)")
        assumptions.append("standard and fast are both below the balance batch: step = weights + B·KV per sequence")
    elif P > 1:
        hi = 1 / P
        values["batch_ratio_high"] = hi
        if t.price_multiple_low:
            values["batch_ratio_high"] = 1 / t.price_multiple_low
        implies.append(f"with no published speed multiple, only a bound: batch ratio ≤ 1/p = "
                       f"{values['batch_ratio_high']:.3g} (speed ≥ 1)")
        not_implies.append("the KV share: it needs the speed multiple")
    else:
        implies.append(f"a cheaper, slower tier (×{P:.3g}): if it only batched more, the batch would be ≥ "
                       f"{1 / P:.3g}× standard; but a slow mode saves at most the weights' share of the standard "
                       "step (FM4), so a large cut also reflects preemptible, off-peak capacity")
        not_implies.append("a batch ratio: no speed multiple, and the tier may run on spare capacity")
    if t.note:
        lines.append(f"tier: {t.note}")
    return Inference("service_tier", title, values, derivs, assumptions, implies, not_implies, [], lines)


# ---- one offer, every offer ------------------------------------------------------------------------

def _active_range(a: InferenceAssumptions, active: tuple[float, float, float] | None):
    if active is None:
        return a.active_params_low, a.active_params, a.active_params_high
    lo, mid, hi = active
    if not 0 < lo <= mid <= hi:
        raise InputError(f"--active-params needs 0 < low ≤ central ≤ high (got {lo:g}:{mid:g}:{hi:g})")
    return lo, mid, hi


def read_offer(ref: str, date: str | None = None, *, precisions: list[str] | None = None,
               active: tuple[float, float, float] | None = None, rows=None, sheet: PriceSheet | None = None,
               assumptions: InferenceAssumptions | None = None) -> Reading:
    """Every inference `provider/offer` supports (the latest sheet that lists it, or the one on `date`).

    `sheet` and `assumptions` replace the catalog's (a caller that applied `--set` passes its own).
    """
    name, _, at = ref.partition("@")
    if sheet is None:
        sheet, oid, o = load_offer(name, date or at or None)
    else:
        oid = name.partition("/")[2]
        o = sheet.offers[oid]
    a = assumptions or load_assumptions()
    precisions = precisions or list(a.precisions)
    for p in precisions:
        if p not in PRECISION_BYTES:
            raise not_one_of("--precision", p, PRECISION_BYTES)
    active = _active_range(a, active)
    rows = rows if rows is not None else tier_rows()
    out: list[Inference] = []
    lc = None
    for band in o.bands:
        inf = _long_context(sheet, oid, o, band, a, precisions, active)
        out.append(inf)
        lc = lc or inf
    if o.output_per_mtok:
        out.append(_output_input(sheet, oid, o))
    ca = _cache(sheet, oid, o, a, lc, precisions, active, rows)
    if ca:
        out.append(ca)
    out += [_service_tier(sheet, oid, o, k) for k in o.service_tiers]
    return Reading(f"{sheet.provider}/{oid}", sheet, oid, o, out)


def read_all(*, precisions: list[str] | None = None, active=None) -> list[Reading]:
    """Every offer in the catalog, each from the latest sheet that lists it."""
    rows = tier_rows()
    seen: dict[str, str] = {}
    for p in providers():
        for d in price_sheet_dates(p):
            for oid in load_price_sheet(p, d).offers:
                seen[f"{p}/{oid}"] = d
    return [read_offer(ref, d, precisions=precisions, active=active, rows=rows) for ref, d in sorted(seen.items())]
