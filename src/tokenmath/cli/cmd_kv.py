"""`tokenmath kv [MODEL]`: memory tiers for the KV cache — drain time, dated price, hold vs recompute."""

from __future__ import annotations

import typer
from rich.table import Table

from ..economics.kvtiers import HOLD_TIMES_S, kv_report
from ..core.load import load_assumptions
from ..core.pricing_records import date_key
from ..serving.serve import check_inputs
from ..core.units import fmt, parse_quantity
from .common import (
    EXPLAIN_OPTION, JSON_OPTION, KV_DTYPE_OPTION, SET_OPTION, console,
    emit_json, guard, load_pair,
)


def register(app: typer.Typer) -> None:
    @app.command("kv")
    @guard
    def kv_cmd(
        model: str = typer.Argument(None, help="Catalog model (or config.json) whose cached prefix to price."),
        on: str = typer.Option("hgx-h100", "--on", help="System that would recompute the prefix (rented)."),
        prefix_tokens: int = typer.Option(100_000, "--prefix-tokens", help="Tokens in the cached prefix."),
        hold: list[str] = typer.Option([], "--hold", help="Hold times to price, e.g. 5min, 1h (repeatable; "
                                       "default: 5 min and 1 h)."),
        price_date: str = typer.Option(None, "--price-date", help="Tier prices as of this date, e.g. 2025-09 "
                                       "(default: latest)."),
        kv_dtype: str = KV_DTYPE_OPTION,
        precision: str = typer.Option(None, "--precision", help="Weights and matmuls for the recompute."),
        plot: str = typer.Option(None, "--plot", help="Write a PNG: tiers by drain time vs price (log-log)."),
        explain: bool = EXPLAIN_OPTION,
        as_json: bool = JSON_OPTION,
        set_: list[str] = SET_OPTION,
    ) -> None:
        """Tiers with capacity, bandwidth, dated USD/GB and drain time; the right tier for each hold time."""
        r = compute(model, on, prefix_tokens, hold, price_date, kv_dtype, precision, explain, set_)
        if plot:
            from .plots_kv import plot_tiers

            plot_tiers(r, plot)
        if as_json:
            emit_json(to_json(r, explain) | ({"plot": plot} if plot else {}))
            return
        _print(r)
        if explain:
            console.print()
            console.print(r.explain(), markup=False)
        if plot:
            console.print(f"wrote {plot}", markup=False)


def compute(model, on, prefix_tokens, hold, price_date, kv_dtype, precision, explain, set_):
    """`kv` from its options, checked as the command line checks them (the web API calls it too)."""
    holds = tuple(parse_quantity(h, "s") for h in hold) or HOLD_TIMES_S
    if price_date is not None:
        date_key(price_date)
    check_inputs(precision=precision, kv_dtype=kv_dtype)
    m, s = load_pair(model, on, set_)  # --on is checked even without a model, which is what uses it
    return kv_report(m, s, prefix_tokens=prefix_tokens, hold_times_s=holds, price_date=price_date,
                     kv_dtype=kv_dtype, precision=precision, lecture_media=load_assumptions().lecture_cache_media,
                     explain=explain)


def to_json(r, explain: bool = False) -> dict:
    """What `--json` prints (derivations with --explain)."""
    return r.to_dict(derivations=explain)


def _print(r) -> None:
    m = r.model
    what = (f"holding a {r.value('prefix_tokens'):,}-token prefix of {m.name} "
            f"({fmt(r.value('prefix_bytes'), 'B')}, {fmt(r.value('kv_bytes_per_token'), 'B/tok')})" if m is not None
            else "holding 1 GB")
    t = Table(title=f"KV-cache tiers — {what}; prices as of {r.price_date or 'latest'}", title_justify="left")
    for c in ("tier", "medium", "capacity", "read BW", "drain time", "USD/GB (date)", "USD/GB-hour"):
        t.add_column(c, justify="left" if c in ("tier", "medium") else "right")
    for T in r.hold_times_s:
        t.add_column(f"hold {fmt(T, 's')}", justify="right")
    if m is not None:
        t.add_column("break-even hold", justify="right")
    for row in r.rows:
        tier = row.tier
        price = f"{fmt(row.usd_per_gb, 'USD')} ({row.usd_per_gb_date})" if row.usd_per_gb is not None else "—"
        hold = (f"{fmt(row.hold_price, 'USD')} ({row.basis}"
                + (f" {row.price_date}" if row.basis == "rental" and row.price_date else "") + ")"
                if row.hold_price is not None else "unpriced")
        extra = r.per_tier.get(row.name)
        cells = [fmt(float(extra["hold_usd"][T].value if hasattr(extra["hold_usd"][T], "value")
                           else extra["hold_usd"][T]), "USD") if extra else "—" for T in r.hold_times_s]
        if m is not None:
            be = extra.get("break_even_hold_s") if extra else None
            bev = None if be is None else float(be.value if hasattr(be, "value") else be)
            cells.append("—" if bev is None else ("never" if bev <= 0 else fmt(bev, "s")))
        t.add_row(row.name, tier.medium, fmt(tier.capacity_bytes, "B"), fmt(tier.read_bandwidth_bytes_per_s, "B/s"),
                  fmt(row.drain_s, "s"), price, hold, *cells)
    console.print(t)
    if m is not None:
        console.print(f"recompute instead: prefill of the prefix on {r.value('recompute_chips')} × {r.system.chip.name} "
                      f"= {fmt(r.value('recompute_usd'), 'USD')} ({fmt(r.value('recompute_usd_per_mtok'), 'USD')} per "
                      f"M tokens, {r.value('recompute_bound')}-bound)", markup=False)
    for T, c in r.choices.items():
        line = (f"hold {fmt(T, 's')}: drain-time rule → {c['nearest_drain_tier']} ({c['nearest_drain_medium']}); "
                f"runner-up {c['runner_up_tier']} ({c['runner_up_medium']}); cheapest → "
                f"{c['cheapest_tier']} ({c['cheapest_medium']})")
        if "decision" in c:
            line += (f"; {c['decision']} ({fmt(c['cheapest_hold_usd'], 'USD')} to hold vs "
                     f"{fmt(c['recompute_usd'], 'USD')} to recompute)")
        console.print(line, markup=False)
    for f in r.flags:
        console.print(f"! {f}", markup=False)
    console.print("assumptions:", markup=False)
    for a in r.assumptions:
        console.print(f"  - {a}", markup=False)
