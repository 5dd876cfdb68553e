"""Forward: what serving a workload costs on rented hardware, beside what an API charges for it.

A request has N_in prompt tokens, of which a share h hits the provider's prefix cache, and N_out output
tokens. On G rented chips of a system (one replica; by default the fewest whole scale-up domains that
hold the weights), the core roofline (`roofline.step`) prices each phase per token:

    c_prefill = usd_per_mtok(prefill step of B_p prompts of N_in tokens)      (serve.usd_per_mtok)
    c_decode  = usd_per_mtok(decode step of B sequences at S = N_in + N_out/2)
    serve_usd = ((1 − h)·N_in·c_prefill + N_out·c_decode) / (1e6 · u)

Cached prompt tokens skip prefill compute (holding them is priced by `tokenmath kv`); the hardware is
paid for all the time but busy a share u of it, so utilisation divides. The decode batch defaults to
the smallest one within 1% of the cheapest token that still fits in HBM (past it cost per token stops
falling and only latency grows); prefill batches prompts up to a token budget per step.

The API side bills the same request at the offer's prices, in the long-context band its prompt falls in:

    api_usd = ((1 − h)·N_in·p_in + h·N_in·p_read + N_out·p_out) / 1e6
    margin  = 1 − serve_usd / api_usd          markup = api_usd / serve_usd

(cache writes, batch discounts and service tiers are not applied: standard interactive prices.)

The split: an MoE is priced on each split an engine runs on the G chips that holds the batch
(serving.default_split.engine_splits: experts tensor-parallel, expert-parallel beside tensor-parallel attention,
attention data-parallel), and the cheapest request is kept and named; where none holds it, `price_split`'s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..core import arch
from ..core.derive import Numbers, Q, formula, lift, value_of
from ..core.errors import InputError
from ..core.load import load_offer, load_priors
from ..core.pricing_records import Offer, PriceSheet
from ..core.records import Model, System
from ..core.roofline import Layout, default_layout, step
from ..core.units import fmt
from ..serving.default_split import engine_splits
from ..serving.serve import check_inputs, held_weights_bytes, phase_time_intervals, usd_per_mtok

__all__ = ["PriceReport", "price_workload", "price_split", "price_splits", "replica_chips", "max_batch", "phase_cost", "serving_usd", "api_usd",
           "margin", "markup", "offers_for_model", "parse_offer_ref", "check_workload"]

# the cheapest batch is the smallest within this fraction of the lowest cost per token
_KNEE_TOLERANCE = 0.01


@formula("serve_usd = ((1 − h) · N_in · c_prefill + N_out · c_decode) / (1e6 · u)", unit="USD")
def serving_usd(h, N_in, c_prefill, N_out, c_decode, u):
    return ((1 - h) * N_in * c_prefill + N_out * c_decode) / (1e6 * u)


@formula("api_usd = ((1 − h) · N_in · p_in + h · N_in · p_read + N_out · p_out) / 1e6", unit="USD")
def api_usd(h, N_in, p_in, p_read, N_out, p_out):
    return ((1 - h) * N_in * p_in + h * N_in * p_read + N_out * p_out) / 1e6


@formula("margin = 1 − serve_usd / api_usd", unit="%")
def margin(serve_usd, api_usd):
    return 1 - serve_usd / api_usd


@formula("markup = api_usd / serve_usd", unit="")
def markup(api_usd, serve_usd):
    return api_usd / serve_usd


def check_workload(*, input_len, output_len, cache_hit, utilisation) -> None:
    """Refuse impossible workloads with one line each."""
    if not input_len >= 1:
        raise InputError(f"--input-len must be ≥ 1 token (got {input_len})")
    if not output_len >= 0:
        raise InputError(f"--output-len must be ≥ 0 tokens (got {output_len})")
    if input_len + output_len > 1e9:
        raise InputError(f"--input-len + --output-len = {input_len + output_len} is absurd (over a billion tokens)")
    if not 0 <= cache_hit <= 1:
        raise InputError(f"--cache-hit is a fraction of the prompt in [0, 1] (got {cache_hit})")
    if not 0 < utilisation <= 1:
        raise InputError(f"--utilisation is the busy share of the rented time, in (0, 1] (got {utilisation})")


def price_split(m: Model, system: System, *, G: int, precision: str, kv_dtype: str, S: float) -> Layout:
    """The split the workload is priced on: the model's default (an MoE's attention data-parallel, experts over every
    chip), or where its weights leave no room for one sequence of context S, attention tensor-parallel over each
    scale-up domain (the non-expert weights held once a domain, as `serve` suggests)."""
    kv = float(arch.kv_stored_bytes(m, S, kv_dtype))
    first = default_layout(m, G)
    for lay in (first, Layout(tp=min(G, system.domain_chips), ep=G) if m.moe is not None else None):
        if lay is not None and held_weights_bytes(m, G, precision, lay) + kv <= G * system.chip.hbm_capacity_bytes:
            return lay
    return first


def price_splits(m: Model, system: System, *, G: int, precision: str, kv_dtype: str, S: float, B: int = 1
                 ) -> list[Layout]:
    """The splits a workload is priced on, each holding B sequences of context S beside the weights it holds: the
    engines' (serving.default_split.engine_splits: an MoE's experts tensor-parallel, expert-parallel beside
    tensor-parallel attention, and attention data-parallel), or where none holds them `price_split`'s; price_workload
    keeps the cheapest request."""
    lays = [lay for lay in engine_splits(m, G)
            if max_batch(m, system, G=G, precision=precision, kv_dtype=kv_dtype, S=S, layout=lay) >= B]
    if lays:
        return lays
    lay = price_split(m, system, G=G, precision=precision, kv_dtype=kv_dtype, S=S)
    return [lay] if max_batch(m, system, G=G, precision=precision, kv_dtype=kv_dtype, S=S, layout=lay) >= B else []


def replica_chips(m: Model, system: System, *, precision: str, kv_dtype: str, S: float) -> int:
    """The fewest whole scale-up domains whose HBM holds the weights their split holds (`price_split`, as `serve`
    counts them) plus one sequence's KV at context S."""
    n = 1
    while n < 4096:
        G = system.domain_chips * n
        if max_batch(m, system, G=G, precision=precision, kv_dtype=kv_dtype, S=S) >= 1:
            return G
        n += 1 if n < 8 else n // 2
    return system.domain_chips * n


def max_batch(m: Model, system: System, *, G: int, precision: str, kv_dtype: str, S: float,
              layout: Layout | None = None) -> int:
    """Sequences of context S whose KV fits in G chips' HBM beside the weights the split holds there (`price_split`
    unless given), as `serve` counts them (0 if none)."""
    lay = layout or price_split(m, system, G=G, precision=precision, kv_dtype=kv_dtype, S=S)
    room = G * system.chip.hbm_capacity_bytes - held_weights_bytes(m, G, precision, lay)
    per_seq = float(arch.kv_stored_bytes(m, S, kv_dtype))
    return max(0, int(room // per_seq)) if per_seq > 0 else 10**9


def phase_cost(m: Model, system: System, *, phase: str, G: int, B: int, S: float, precision: str, kv_dtype: str,
               basis: str = "prior", explain: bool = False, layout: Layout | None = None):
    """USD per million tokens of one phase at batch B and context S (with the step behind it)."""
    price = system.usd_per_chip_hour
    if not price:
        raise InputError(f"{system.name} has no rental price in the catalog; set one with "
                         f"--set rental_usd_per_hour=2.0")
    st = step(m, system, G=G, B=B, S=S, phase=phase, precision=precision, kv_dtype=kv_dtype, basis=basis,
              priors=load_priors(system.chip.priors), explain=explain, layout=layout)
    c = usd_per_mtok(lift(explain, "G", G, "chips", "given"),
                     lift(explain, "usd_per_chip_hour", price, "USD", system.price_source()), st.t_step, st.tokens)
    return (c.renamed(f"c_{phase}") if isinstance(c, Q) else c), st


def cheapest_decode_batch(m: Model, system: System, *, G: int, S: float, B_max: int, precision: str,
                          kv_dtype: str, basis: str = "prior", layout: Layout | None = None) -> int:
    """The smallest batch within 1% of the cheapest decode token, among batches that fit (≤ B_max)."""
    grid = np.unique(np.round(np.geomspace(1, max(1, B_max), 256))).astype(float)
    c, _ = phase_cost(m, system, phase="decode", G=G, B=grid, S=S, precision=precision, kv_dtype=kv_dtype,
                      basis=basis, layout=layout)
    c = np.asarray(c, dtype=float)
    ok = np.flatnonzero(c <= c.min() * (1 + _KNEE_TOLERANCE))
    return int(grid[ok[0]])


def parse_offer_ref(ref: str) -> tuple[str, str | None]:
    """'provider/offer@date' -> ('provider/offer', 'date'); the date is optional."""
    name, _, date = ref.partition("@")
    return name, (date or None)


def offers_for_model(model_name: str) -> list[tuple[PriceSheet, str, Offer]]:
    """Every offer that serves this catalog model, each from the latest sheet that lists it."""
    from ..core.load import load_price_sheet, price_sheet_dates, providers

    found: dict[str, tuple[PriceSheet, str, Offer]] = {}
    for p in providers():
        for d in price_sheet_dates(p):
            sh = load_price_sheet(p, d)
            for oid, o in sh.offers.items():
                if o.catalog_model == model_name:
                    found[f"{p}/{oid}"] = (sh, oid, o)  # later dates overwrite earlier ones
    return list(found.values())


@dataclass
class PriceReport(Numbers):
    model: Model
    system: System
    G: int
    numbers: dict  # key -> Q or value: the serving side
    offers: list[dict] = field(default_factory=list)  # one per API offer: prices, api_usd, margin (Q or value)
    assumptions: list[str] = field(default_factory=list)

    def to_dict(self, derivations: bool = False) -> dict:
        def plain(x):
            x = value_of(x)
            if isinstance(x, (np.floating, np.integer, np.bool_)):
                return x.item()
            return x

        out: dict = {"model": self.model.name, "system": self.system.name, "chips": self.G}
        for k, q in self.numbers.items():
            node = out
            parts = k.split(".")
            for part in parts[:-1]:
                node = node.setdefault(part, {})
            node[parts[-1]] = plain(q)
        out["offers"] = [{k: plain(v) for k, v in o.items() if k != "_q"} for o in self.offers]
        out["assumptions"] = self.assumptions
        if derivations:
            d = self.derivations()
            for o in self.offers:
                for k, q in o.get("_q", {}).items():
                    d[f"{o['offer']}.{k}"] = q.to_dict()
            out["derivations"] = d
        return out

    def explain(self) -> str:
        parts = [f"── {k} ──\n{q.explain(max_depth=3)}" for k, q in self.numbers.items()
                 if isinstance(q, Q) and q.formula and k == "serving.usd_per_request"]
        for o in self.offers:
            for k in ("api_usd", "margin"):
                q = o.get("_q", {}).get(k)
                if isinstance(q, Q):
                    parts.append(f"── {o['offer']} ({o['date']}): {k} ──\n{q.explain()}")
        return "\n\n".join(parts)


def price_workload(m: Model, system: System, *, input_len: int, output_len: int, cache_hit: float = 0.0,
                   utilisation: float = 1.0, offers: list[str] | None = None, G: int | None = None,
                   batch: int | None = None, prefill_chunk_tokens: int = 8192, precision: str | None = None,
                   kv_dtype: str | None = None, basis: str = "prior", explain: bool = False) -> PriceReport:
    """Cost of serving the workload on `system`, and each offer's charge and margin for the same request."""
    check_workload(input_len=input_len, output_len=output_len, cache_hit=cache_hit, utilisation=utilisation)
    precision = precision or m.weight_dtype
    kv_dtype = kv_dtype or m.kv_dtype
    check_inputs(G=G, B=batch, precision=precision, kv_dtype=kv_dtype, basis=basis)
    if prefill_chunk_tokens < 1:
        raise InputError(f"--prefill-chunk must be ≥ 1 token (got {prefill_chunk_tokens})")
    N_in, N_out = float(input_len), float(output_len)
    S_max = N_in + N_out
    S_dec = N_in + N_out / 2
    G = G or replica_chips(m, system, precision=precision, kv_dtype=kv_dtype, S=S_max)
    g = lambda sym, v, unit="", src="given": lift(explain, sym, v, unit, src)  # noqa: E731
    h, Nin, Nout, u = g("h", cache_hit, "%"), g("N_in", N_in, "tok"), g("N_out", N_out, "tok"), g("u", utilisation, "%")

    def priced(lay: Layout) -> tuple:
        """(serve_usd, B_fit, B_dec, B_pre, c_pre, st_pre, c_dec, st_dec) of the workload on split `lay`."""
        B_fit = max_batch(m, system, G=G, precision=precision, kv_dtype=kv_dtype, S=S_max, layout=lay)
        kw = dict(G=G, precision=precision, kv_dtype=kv_dtype, basis=basis, layout=lay)
        B_dec = batch or cheapest_decode_batch(m, system, S=S_dec, B_max=B_fit, **kw)
        B_pre = max(1, min(B_fit, math.ceil(prefill_chunk_tokens / N_in)))
        c_pre, st_pre = phase_cost(m, system, phase="prefill", B=B_pre, S=N_in, explain=explain, **kw)
        c_dec, st_dec = phase_cost(m, system, phase="decode", B=B_dec, S=S_dec, explain=explain, **kw)
        return serving_usd(h, Nin, c_pre, Nout, c_dec, u), B_fit, B_dec, B_pre, c_pre, st_pre, c_dec, st_dec

    lays = price_splits(m, system, G=G, precision=precision, kv_dtype=kv_dtype, S=S_max, B=batch or 1)
    if not lays:
        B_fit = max(max_batch(m, system, G=G, precision=precision, kv_dtype=kv_dtype, S=S_max, layout=x)
                    for x in [*engine_splits(m, G), price_split(m, system, G=G, precision=precision,
                                                                kv_dtype=kv_dtype, S=S_max)])
        if B_fit < 1:
            raise InputError(f"{m.name} with one {int(S_max):,}-token sequence does not fit on {G} × "
                             f"{system.chip.name}; use more --chips or a shorter workload")
        raise InputError(f"--batch {batch} does not fit: at most {B_fit:,} sequences of {int(S_max):,} tokens fit "
                         f"on {G} × {system.chip.name}")
    runs = [priced(lay) for lay in lays]
    best = min(range(len(lays)), key=lambda i: float(value_of(runs[i][0])))
    lay = lays[best]
    serve, B_fit, B_dec, B_pre, c_pre, st_pre, c_dec, st_dec = runs[best]
    numbers: dict = {
        "workload.input_tokens": input_len, "workload.output_tokens": output_len, "workload.cache_hit": cache_hit,
        "workload.utilisation": utilisation,
        "serving.chips": G, "serving.split": lay.words(G), "serving.decode_batch": B_dec, "serving.prefill_batch": B_pre,
        "serving.decode_context": S_dec, "serving.max_batch_fits": B_fit,
        "serving.prefill_usd_per_mtok": c_pre, "serving.decode_usd_per_mtok": c_dec,
        "serving.prefill_bound": st_pre.bound, "serving.decode_bound": st_dec.bound,
        "serving.prefill_usd": value_of(serving_usd(cache_hit, N_in, value_of(c_pre), 0.0, 0.0, utilisation)),
        "serving.decode_usd": value_of(serving_usd(0.0, 0.0, 0.0, N_out, value_of(c_dec), utilisation)),
        "serving.usd_per_request": serve,
        "serving.usd_per_chip_hour": system.usd_per_chip_hour,
        "serving.rental_price_date": system.rental_price_date or system.chip.rental_price_date,
        "serving.basis": basis, "serving.precision": precision, "serving.kv_dtype": kv_dtype,
    }
    if basis == "prior":
        _cost_intervals(numbers, system, precision)
    refs = offers if offers is not None else [f"{sh.provider}/{oid}@{sh.date}" for sh, oid, _ in offers_for_model(m.name)]
    rows = [_offer_row(ref, h, Nin, Nout, serve, N_in, explain, numbers.get("serving.usd_per_request_interval"))
            for ref in refs]
    assumptions = [
        f"one replica on {G} × {system.chip.name} rented at {system.usd_per_chip_hour} USD per chip-hour "
        f"({system.price_source()}), busy {utilisation:.0%} of the time",
        f"decode batch {B_dec:,} ({'given' if batch else 'smallest within 1% of the cheapest token that fits'}; "
        f"{B_fit:,} fit at {int(S_max):,} tokens), at the mean context N_in + N_out/2 = {int(S_dec):,}",
        f"prefill batches {B_pre:,} prompt(s) of {input_len:,} tokens per step (token budget {prefill_chunk_tokens:,})",
        *([f"split {lay.words(G)}: the cheapest request of the engines' splits that fit, " + ", ".join(
            f"{x.words(G)} {fmt(float(value_of(r[0])), 'USD')}" for x, r in zip(lays, runs))] if len(lays) > 1 else []),
        "cached prompt tokens skip prefill compute; holding them is not charged here (see `tokenmath kv`)",
        "API side at standard interactive prices: no cache-write premium, batch discount or service tier",
    ]
    return PriceReport(m, system, G, numbers, rows, assumptions)


def _cost_intervals(numbers: dict, system: System, precision: str) -> None:
    """80 % intervals of the serving costs, each phase's from serve's residual group (a cost ∝ step time); the
    request's is the sum of the phases' ends, their misses taken as going the same way (the wider reading)."""
    if phase_time_intervals(numbers, system, precision,
                            lambda ph: (f"serving.{ph}_usd_per_mtok", f"serving.{ph}_usd"),
                            lambda ph: f"serving.{ph}_interval_group"):
        ends = [numbers[f"serving.{ph}_usd_interval"] for ph in ("prefill", "decode")]
        numbers["serving.usd_per_request_interval"] = [sum(e[0] for e in ends), sum(e[1] for e in ends)]


def _offer_row(ref: str, h, Nin, Nout, serve, N_in: float, explain: bool, serve_interval=None) -> dict:
    name, date = parse_offer_ref(ref)
    sheet, oid, o = load_offer(name, date)
    if o.currency != "USD":
        raise InputError(f"{name} is priced in {o.currency}; the comparison with rented hardware needs USD prices")
    if o.output_per_mtok is None:
        raise InputError(f"{name} ({sheet.date}) has no output price in the catalog")
    band = o.band_for(N_in)

    def pick(field_name: str):
        v = getattr(band, field_name, None) if band is not None else None
        path = f"long_context.{_band_key(o, band)}.{field_name}" if v is not None else field_name
        v = v if v is not None else getattr(o, field_name)
        return v, sheet.figure_source(oid, path)

    (p_in, s_in), (p_out, s_out) = pick("input_per_mtok"), pick("output_per_mtok")
    p_read, s_read = pick("cache_read_per_mtok")
    if p_read is None:
        p_read, s_read = p_in, "no cache price: a hit is billed as input"
    g = lambda sym, v, unit, src: lift(explain, sym, v, unit, f"{sheet.file}: {src}")  # noqa: E731
    api = api_usd(h, Nin, g("p_in", p_in, "USD", s_in), g("p_read", p_read, "USD", s_read), Nout,
                  g("p_out", p_out, "USD", s_out))
    # the serving side's derivation is printed once, under serving.usd_per_request
    cost = lift(explain, "serve_usd", value_of(serve), "USD", "serving.usd_per_request (derived above)")
    row = {"offer": f"{sheet.provider}/{oid}", "date": sheet.date, "display_name": o.display_name,
           "band": f"prompt > {band.above_tokens:,} tokens" if band else "base",
           "input_per_mtok": p_in, "cache_read_per_mtok": p_read, "output_per_mtok": p_out,
           "api_usd_per_request": value_of(api), "serves": o.catalog_model}
    q = {"api_usd": api}
    if value_of(api) > 0:  # a request the API charges nothing for (all cached, free reads) has no margin
        q.update(margin=margin(cost, api), markup=markup(api, cost))
        row.update(margin=value_of(q["margin"]), markup=value_of(q["markup"]))
        if serve_interval is not None:  # margin = 1 − serve/api falls as the serving cost rises
            a = value_of(api)
            row["margin_interval"] = [1 - serve_interval[1] / a, 1 - serve_interval[0] / a]
    if explain:
        row["_q"] = q
    return row


def _band_key(o: Offer, band) -> str:
    return next(k for k, b in o.long_context.items() if b is band)
