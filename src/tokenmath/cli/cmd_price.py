"""`tokenmath price MODEL --on SYSTEM`: a workload's cost on rented hardware beside what APIs charge for it."""

from __future__ import annotations

import typer
from rich.table import Table

from ..economics.pricing import price_workload
from ..core.units import fmt
from .common import (
    BASIS_OPTION, EXPLAIN_OPTION, JSON_OPTION, KV_DTYPE_OPTION, ON_OPTION,
    PRECISION_OPTION, SET_OPTION, console, emit_json, guard, load_pair,
)


def register(app: typer.Typer) -> None:
    @app.command("price")
    @guard
    def price_cmd(
        model: str = typer.Argument(..., help="Catalog model name or a Hugging Face config.json path."),
        on: str = ON_OPTION,
        input_len: int = typer.Option(2000, "--input-len", help="Prompt tokens per request."),
        output_len: int = typer.Option(500, "--output-len", help="Output tokens per request."),
        cache_hit: float = typer.Option(0.0, "--cache-hit", help="Share of the prompt served from the prefix cache, 0–1."),
        utilisation: float = typer.Option(1.0, "--utilisation", help="Busy share of the rented hardware's time, 0–1."),
        offer: list[str] = typer.Option([], "--offer", help="PROVIDER/OFFER[@DATE] to compare with (repeatable; "
                                        "default: the offers that serve MODEL)."),
        chips: int = typer.Option(None, "--chips", "-G", help="Chips per replica (default: fewest domains that fit)."),
        batch: int = typer.Option(None, "--batch", "-B", help="Decode batch (default: the cheapest that fits)."),
        prefill_chunk: int = typer.Option(8192, "--prefill-chunk", help="Prompt tokens batched per prefill step."),
        precision: str = PRECISION_OPTION,
        kv_dtype: str = KV_DTYPE_OPTION,
        basis: str = BASIS_OPTION,
        explain: bool = EXPLAIN_OPTION,
        as_json: bool = JSON_OPTION,
        set_: list[str] = SET_OPTION,
    ) -> None:
        """Cost per request on rented chips, each API's charge for it, and the implied margin."""
        r = compute(model, on, input_len, output_len, cache_hit, utilisation, offer, chips, batch, prefill_chunk,
                    precision, kv_dtype, basis, explain, set_)
        if as_json:
            emit_json(to_json(r, explain))
            return
        _print(r)
        if explain:
            console.print()
            console.print(r.explain(), markup=False)


def compute(model, on, input_len, output_len, cache_hit, utilisation, offer, chips, batch, prefill_chunk, precision,
            kv_dtype, basis, explain, set_):
    """`price` from its options, checked as the command line checks them (the web API calls it too)."""
    m, s = load_pair(model, on, set_)
    return price_workload(m, s, input_len=input_len, output_len=output_len, cache_hit=cache_hit,
                          utilisation=utilisation, offers=offer or None, G=chips, batch=batch,
                          prefill_chunk_tokens=prefill_chunk, precision=precision, kv_dtype=kv_dtype, basis=basis,
                          explain=explain)


def to_json(r, explain: bool = False) -> dict:
    """What `--json` prints (derivations with --explain)."""
    return r.to_dict(derivations=explain)


def _ends(iv, unit: str = "USD") -> str:
    return "—" if iv is None else f"{fmt(iv[0], unit)} – {fmt(iv[1], unit)}"


def _print(r) -> None:
    v = r.value
    w = (f"{v('workload.input_tokens'):,} in ({v('workload.cache_hit'):.0%} cached) + {v('workload.output_tokens'):,} "
         f"out, {v('workload.utilisation'):.0%} utilised")
    t = Table(title=f"{r.model.display_name or r.model.name} on {r.G} × {r.system.chip.name} ({v('serving.split')}) — {w}",
              title_justify="left")
    t.add_column("serving on rented hardware")
    t.add_column("prefill (uncached input)", justify="right")
    t.add_column("decode (output)", justify="right")
    t.add_row("batch", f"{v('serving.prefill_batch'):,} prompt(s)", f"{v('serving.decode_batch'):,} sequences")
    t.add_row("USD per M tokens (100% busy)", fmt(v("serving.prefill_usd_per_mtok"), "USD"),
              fmt(v("serving.decode_usd_per_mtok"), "USD"))
    if v("serving.decode_usd_per_mtok_interval") is not None:
        t.add_row("  80 % interval", *(_ends(v(f"serving.{ph}_usd_per_mtok_interval")) for ph in ("prefill", "decode")))
    t.add_row("bound by", str(v("serving.prefill_bound")), str(v("serving.decode_bound")))
    t.add_row("USD per request", fmt(v("serving.prefill_usd"), "USD"), fmt(v("serving.decode_usd"), "USD"))
    console.print(t)
    iv = v("serving.usd_per_request_interval")
    console.print(f"serving cost per request: {fmt(v('serving.usd_per_request'), 'USD')} "
                  + (f"[80 % interval {_ends(iv)}] " if iv else "")
                  + f"({r.system.usd_per_chip_hour} USD per chip-hour, {v('serving.basis')} basis)", markup=False)
    if r.offers:
        o = Table(title="what APIs charge for the same request", title_justify="left")
        for c in ("offer", "sheet", "band", "in / cached / out per M", "USD per request", "margin", "markup"):
            o.add_column(c, justify="left" if c in ("offer", "sheet", "band") else "right")
        for row in r.offers:
            o.add_row(row["offer"], row["date"], row["band"],
                      f"{fmt(row['input_per_mtok'], 'USD')} / {fmt(row['cache_read_per_mtok'], 'USD')} / "
                      f"{fmt(row['output_per_mtok'], 'USD')}",
                      fmt(row["api_usd_per_request"], "USD"),
                      (fmt(row["margin"], "%") + (f" [{_ends(row['margin_interval'], '%')}]"
                                                   if "margin_interval" in row else "")) if "margin" in row else "—",
                      f"{row['markup']:.3g}×" if "markup" in row else "—")
        console.print(o)
        other = sorted({f"{row['offer']}@{row['date']} serves {row['serves']}" for row in r.offers
                        if row["serves"] and row["serves"] != r.model.name})
        for x in other:
            console.print(f"note: {x}, not {r.model.name}", markup=False)
    else:
        console.print("no API offer serves this model in the catalog; compare with --offer PROVIDER/OFFER", markup=False)
    console.print("assumptions:", markup=False)
    for a in r.assumptions:
        console.print(f"  - {a}", markup=False)
