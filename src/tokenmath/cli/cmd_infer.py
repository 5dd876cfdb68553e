"""`tokenmath infer PROVIDER/OFFER` (or `--all`): what an API price sheet says about the model behind it."""

from __future__ import annotations

import typer
from rich.table import Table

from ..core.errors import InputError
from ..economics.infer import read_all, read_offer
from ..core.pricing_records import date_key
from ..core.units import PRECISION_BYTES, fmt
from .common import EXPLAIN_OPTION, JSON_OPTION, console, emit_json, guard
from .count_args import parse_count
from .grid_args import parse_list


def _active(text: str | None):
    """'100B' -> (1e11, 1e11, 1e11); '50B:100B:200B' -> a low, central and high count of active parameters."""
    if not text:
        return None
    parts = [parse_count(x, "--active-params") for x in text.split(":")]
    if len(parts) not in (1, 3):
        raise InputError(f"--active-params takes N or LOW:CENTRAL:HIGH, e.g. 50e9:100e9:200e9 (got {text!r})")
    lo, mid, hi = parts * 3 if len(parts) == 1 else parts
    if not 1e6 <= lo <= mid <= hi <= 1e16:
        raise InputError(f"--active-params needs 1e6 ≤ low ≤ central ≤ high ≤ 1e16 (got {text!r})")
    return lo, mid, hi


def register(app: typer.Typer) -> None:
    @app.command("infer")
    @guard
    def infer_cmd(
        offer: str = typer.Argument(None, help="PROVIDER/OFFER[@DATE], e.g. google/gemini-3.1-pro."),
        date: str = typer.Option(None, "--date", help="Use the price sheet of this date (default: latest listing it)."),
        all_: bool = typer.Option(False, "--all", help="A table over every offer in the catalog."),
        precision: str = typer.Option(None, "--precision", help="Matmul precisions to range over, e.g. fp8,fp4 "
                                      "(default: catalog/assumptions)."),
        active_params: str = typer.Option(None, "--active-params", help="Active parameters: N or LOW:CENTRAL:HIGH "
                                          "(default: catalog/assumptions, 50B:100B:200B)."),
        explain: bool = EXPLAIN_OPTION,
        as_json: bool = JSON_OPTION,
    ) -> None:
        """Read prices backwards: KV bytes per token, decode utilisation, cache tiers, fast-mode batch ratio."""
        r = compute(offer, date, all_, precision, active_params, explain)
        if as_json:
            emit_json(to_json(r, explain))
        elif isinstance(r, list):
            _table(r)
            if explain:
                for x in r:
                    console.print()
                    console.print(x.explain(), markup=False)
        elif explain:
            console.print(r.explain(), markup=False)
        else:
            _brief(r)


def compute(offer, date, all_, precision, active_params, explain=False):
    """`infer` from its options, checked as the command line checks them (the web API calls it too): one
    reading, or the list of every offer's with --all."""
    precisions = parse_list(precision, tuple(PRECISION_BYTES), "--precision") or None
    active = _active(active_params)
    if date is not None:
        date_key(date)
    if all_:
        if offer:
            raise InputError("give PROVIDER/OFFER or --all, not both")
        return read_all(precisions=precisions, active=active)
    if not offer:
        raise InputError("give PROVIDER/OFFER (e.g. google/gemini-3.1-pro) or --all; "
                         "`tokenmath catalog list prices` lists the sheets")
    return read_offer(offer, date, precisions=precisions, active=active)


def to_json(r, explain: bool = False) -> dict:
    """What `--json` prints: one reading (derivations with --explain), or every offer's headline and a summary."""
    if isinstance(r, list):
        return {"offers": [x.headline() | {"flags": x.flags} for x in r], "summary": _summary(r)}
    return r.to_dict(derivations=explain)


def _brief(r) -> None:
    console.print(f"[bold]{r.offer.display_name}[/bold] ({r.ref}, price sheet {r.sheet.date})")
    h = r.headline()
    for inf in r.inferences:
        console.print(f"\n{inf.title}", markup=False)
        for line in _numbers(inf, h):
            console.print(f"  {line}", markup=False)
        for x in inf.implies:
            console.print(f"  → {x}", markup=False)
        for x in inf.flags:
            console.print(f"  ! {x}", markup=False)
    console.print("\n(--explain shows each derivation, its assumptions and sources; --json the numbers)", markup=False)


def _numbers(inf, h) -> list[str]:
    v = inf.values
    if inf.kind == "long_context":
        return [f"kv_bytes_per_token = {fmt(v['kv_bytes_per_token'], 'B/tok')} "
                f"(interval {fmt(v['kv_bytes_per_token_low'], 'B/tok')} … {fmt(v['kv_bytes_per_token_high'], 'B/tok')}); "
                f"step ×{v['input_multiplier']:.3g} input, ×{v['output_multiplier']:.3g} output"
                if v.get("output_multiplier") else
                f"kv_bytes_per_token = {fmt(v['kv_bytes_per_token'], 'B/tok')} "
                f"(interval {fmt(v['kv_bytes_per_token_low'], 'B/tok')} … {fmt(v['kv_bytes_per_token_high'], 'B/tok')})"]
    if inf.kind == "output_input":
        return [f"output/input = {v['output_over_input']:.3g}; decode utilisation relative to prefill = "
                f"{v['decode_utilisation_relative']:.3g}"]
    if inf.kind == "cache":
        out = [f"cache hit / input = {v['cache_hit_over_input']:.3g}"]
        if v.get("break_even_hold_s") is not None:
            out.append(f"holding worth it up to {fmt(v['break_even_hold_s'], 's')} at these prices")
        for lt in v.get("lifetimes", {}).values():
            out.append(f"{fmt(lt['lifetime_s'], 's')} cache → {lt['nearest_drain_medium']} ({lt['nearest_drain_tier']}, "
                       f"drains in {fmt(lt['nearest_drain_time_s'], 's')})")
        return out
    if v.get("batch_ratio") is not None:
        return [f"batch_ratio = {v['batch_ratio']:.3g}; KV share of the standard step = {v['kv_share_standard']:.3g}"]
    if v.get("batch_ratio_high") is not None:
        return [f"batch_ratio ≤ {v['batch_ratio_high']:.3g} (no speed multiple published)"]
    return []


def _summary(readings) -> dict:
    kv = [r.headline() for r in readings if r.get("long_context")]
    fast = [r.headline() for r in readings if r.headline().get("batch_ratio") is not None]
    oi = [r.headline()["output_over_input"] for r in readings if r.get("output_input")]
    return {"offers": len(readings), "with_long_context_step": len(kv),
            "kv_bytes_per_token": {h["offer"]: [h["kv_bytes_per_token_low"], h["kv_bytes_per_token"],
                                                h["kv_bytes_per_token_high"]] for h in kv},
            "output_over_input_range": [min(oi), max(oi)] if oi else None,
            "batch_ratio": {h["offer"]: h["batch_ratio"] for h in fast},
            "flags": sum(len(r.flags) for r in readings)}


def _table(readings) -> None:
    t = Table(title="what each price sheet implies (latest sheet listing each offer)", title_justify="left")
    for c in ("offer", "sheet", "out/in", "decode util.", "hit/in", "step at", "kv per token [interval]",
              "hold ≤", "cache tiers", "fast: batch ratio, KV share", "flags"):
        t.add_column(c, justify="left" if c in ("offer", "sheet", "cache tiers") else "right", no_wrap=c == "offer")
    for r in readings:
        h = r.headline()
        kv = (f"{fmt(h['kv_bytes_per_token'], 'B')} [{fmt(h['kv_bytes_per_token_low'], 'B')}–"
              f"{fmt(h['kv_bytes_per_token_high'], 'B')}]" if h.get("kv_bytes_per_token") else "—")
        tiers = ", ".join(f"{fmt(float(k), 's')}→{r.get('cache').values['lifetimes'][k]['nearest_drain_medium']}"
                          for k in h.get("tiers_for_lifetimes") or {})
        fast = "—"
        for inf in r.inferences:
            if inf.kind == "service_tier" and inf.values.get("batch_ratio") is not None:
                fast = f"{inf.values['batch_ratio']:.3g}, {inf.values['kv_share_standard']:.3g}"
                break
            if inf.kind == "service_tier" and inf.values.get("batch_ratio_high") is not None and fast == "—":
                fast = f"≤ {inf.values['batch_ratio_high']:.3g}"
        t.add_row(r.ref, h["date"], _g(h.get("output_over_input")), _g(h.get("decode_utilisation_relative")),
                  _g(h.get("cache_hit_over_input")), fmt(h["threshold_tokens"]) if h.get("threshold_tokens") else "—",
                  kv, fmt(h["break_even_hold_s"], "s") if h.get("break_even_hold_s") else "—", tiers or "—", fast,
                  str(len(r.flags)))
    console.print(t)
    console.print("kv per token: N_active/(R·S*) at the lecture's 100B and R = 300; interval over 50–200B active and "
                  "the assumed chips and precisions. `tokenmath infer PROVIDER/OFFER --explain` shows one in full.",
                  markup=False)


def _g(x) -> str:
    return "—" if x is None else f"{x:.3g}"
