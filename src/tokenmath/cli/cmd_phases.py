"""`tokenmath phases MODEL --on SYSTEM`: prefill vs decode cost per token, beside published output/input
price ratios, and the prefill:decode chip ratio and cost per request of a disaggregated deployment."""

from __future__ import annotations

import numpy as np
import typer
from rich.table import Table

from ..serving.disagg import disaggregate
from ..core.load import load_price_sheet, names, providers
from ..core.units import fmt
from .common import (
    BASIS_OPTION, EXPLAIN_OPTION, JSON_OPTION, KV_DTYPE_OPTION, ON_OPTION,
    PRECISION_OPTION, SET_OPTION, console, emit_json, guard, load_pair,
)
from .grid_args import parse_number


def published_ratios(model_name: str | None = None) -> list[dict]:
    """Output ÷ input price of every offer on each provider's latest sheet, plus any older offer of this model."""
    rows: dict[tuple[str, str], dict] = {}

    def add(sheet, oid, o):
        if o.output_per_mtok and o.input_per_mtok:
            rows[(sheet.provider if hasattr(sheet, "provider") else sheet.name, oid)] = {
                "provider": getattr(sheet, "provider", sheet.name), "offer": oid, "date": sheet.date,
                "catalog_model": o.catalog_model, "output_over_input": o.output_per_mtok / o.input_per_mtok,
                "source": o.source}

    for p in providers():
        sheet = load_price_sheet(p)
        for oid, o in sheet.offers.items():
            add(sheet, oid, o)
    if model_name:  # the model's own offers, from whichever sheet lists them last
        for ref in names("prices"):
            provider, date = ref.split("/", 1)
            sheet = load_price_sheet(provider, date)
            for oid, o in sheet.offers.items():
                if o.catalog_model == model_name:
                    key = (provider, oid)
                    if key not in rows or str(rows[key]["date"]) <= str(sheet.date):
                        add(sheet, oid, o)
    return sorted(rows.values(), key=lambda r: (r["provider"], r["offer"]))


def register(app: typer.Typer) -> None:
    @app.command("phases")
    @guard
    def phases_cmd(
        model: str = typer.Argument(..., help="Catalog model name or a Hugging Face config.json path."),
        on: str = ON_OPTION,
        input_len: str = typer.Option("4096", "--input-len", "-I", help="Prompt tokens per request (4k accepted)."),
        output_len: str = typer.Option("512", "--output-len", "-O", help="Generated tokens per request."),
        cache_hit: float = typer.Option(0.0, "--cache-hit", help="Fraction of prompt tokens served from a cache."),
        prefill_chips: int = typer.Option(None, "--prefill-chips", help="Chips per prefill replica (default: domain)."),
        decode_chips: int = typer.Option(None, "--decode-chips", help="Chips per decode replica (default: domain)."),
        prefill_batch: float = typer.Option(None, "--prefill-batch", help="Prompts per prefill step (default: knee)."),
        decode_batch: float = typer.Option(None, "--decode-batch", help="Sequences per decode step (default: knee)."),
        precision: str = PRECISION_OPTION,
        kv_dtype: str = KV_DTYPE_OPTION,
        basis: str = BASIS_OPTION,
        explain: bool = EXPLAIN_OPTION,
        as_json: bool = JSON_OPTION,
        set_: list[str] = SET_OPTION,
    ) -> None:
        """Prefill vs decode per token and their ratio vs published prices; disaggregated chip ratio and cost."""
        m, s = load_pair(model, on, set_)
        d = disaggregate(m, s, input_len=parse_number(input_len, "--input-len"),
                         output_len=parse_number(output_len, "--output-len"), cache_hit=cache_hit,
                         G_prefill=prefill_chips, G_decode=decode_chips, B_prefill=prefill_batch, B_decode=decode_batch,
                         precision=precision, kv_dtype=kv_dtype, basis=basis, explain=explain or as_json)
        pub = published_ratios(m.name)
        if as_json:
            out = d.to_dict(derivations=True)
            out["published_output_input_ratios"] = pub
            ratios = np.array([r["output_over_input"] for r in pub])
            out["published_output_input_ratio_range"] = [float(ratios.min()), float(np.median(ratios)),
                                                          float(ratios.max())] if ratios.size else None
            emit_json(out)
            return
        _print(d, pub)
        if explain:
            console.print()
            console.print(d.explain(), markup=False)


def _print(d, pub) -> None:
    v = d.value
    usd = v("usd_per_request") is not None
    title = (f"{d.model.display_name or d.model.name} on {d.system.display_name or d.system.name} — {fmt(d.input_len)} tokens in, "
             f"{fmt(d.output_len)} out, {fmt(d.cache_hit, '%')} cache hits, {d.precision} weights, {d.basis} basis")
    t = Table(title=title, title_justify="left")
    for col in ("phase", "chips", "batch", "context", "step", "bound", "chip-s/token", "USD/Mtok"):
        t.add_column(col, justify="right")
    for ph, G, B, S in (("prefill", d.G_p, d.B_p, d.input_len), ("decode", d.G_d, d.B_d, v("decode.context"))):
        t.add_row(ph, str(G), fmt(B), fmt(S), fmt(v(f"{ph}.step_time_s"), "s"), str(v(f"{ph}.bound")),
                  fmt(v(f"{ph}.chip_s_per_token"), "s"), fmt(v(f"{ph}.usd_per_mtok"), "USD") if usd else "no price")
    console.print(t)
    if v("decode.step_time_s_interval") is not None:
        console.print("80 % intervals of the steps: " + ", ".join(
            f"{ph} {fmt(v(f'{ph}.step_time_s_interval')[0], 's')} – {fmt(v(f'{ph}.step_time_s_interval')[1], 's')}"
            for ph in ("prefill", "decode")) + "; chip-s and USD per token in proportion (residual groups "
            + ", ".join(v(f"{ph}.interval_group").split(" (")[0] for ph in ("prefill", "decode"))
            + " of catalog/intervals/serving.yaml)", markup=False)
    r = v("out_over_in_cost_ratio")
    console.print(f"decode ÷ prefill cost per token = {fmt(r)}: if prices followed chip time, output would cost "
                  f"{fmt(r)}× input (each phase at its cheapest batch that fits; decode κ = "
                  f"{fmt(v('decode.kappa'))})", markup=False)
    if pub:
        ratios = np.array([x["output_over_input"] for x in pub])
        console.print(f"published output ÷ input prices ({len(pub)} offers, latest sheets): "
                      f"{ratios.min():.3g}–{ratios.max():.3g}, median {float(np.median(ratios)):.3g}", markup=False)
        by: dict[str, list[float]] = {}
        for x in pub:
            by.setdefault(x["provider"], []).append(x["output_over_input"])
        console.print("  " + "; ".join(f"{p} {min(rs):.3g}" + (f"–{max(rs):.3g}" if max(rs) > min(rs) else "")
                                       for p, rs in by.items()), markup=False)
        own = [x for x in pub if x["catalog_model"] == d.model.name]
        for x in own:
            console.print(f"  this model: {x['provider']}/{x['offer']} ({x['date']}) output ÷ input = "
                          f"{x['output_over_input']:.3g}", markup=False)
        if r < ratios.min():
            console.print("  the roofline's ratio sits below every published one: decode at its cheapest batch is "
                          "nearly as efficient as prefill; the published premium pays for smaller, faster decode "
                          "batches (see `tokenmath fastmode`) and for KV memory held per sequence", markup=False)
    console.print(f"disaggregated: prefill : decode chips = {fmt(v('prefill_to_decode_chips'))} : 1 "
                  f"({fmt(v('prefill_chip_s_per_request'), 's')} + {fmt(v('decode_chip_s_per_request'), 's')} "
                  "of chip time per request)", markup=False)
    if usd:
        console.print(f"cost per request = {fmt(v('usd_per_request'), 'USD')}", markup=False)
    nic = v("kv_transfer_s_per_nic")
    console.print(f"KV moved from prefill to decode per request: {fmt(v('kv_transfer_bytes'), 'B')}"
                  + (f" ({fmt(nic, 's')} on one chip's scale-out NIC)" if nic else ""), markup=False)
