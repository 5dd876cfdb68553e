"""`tokenmath catalog list|show`: what the catalog holds, and each entry with its sources."""

from __future__ import annotations

import typer
import yaml
from rich.table import Table

from ..core import arch
from ..core.load import KINDS, CatalogError, _index, load_entry, names, other_hardware_name, other_model_name, suggest
from ..core.units import fmt
from .common import JSON_OPTION, console, emit_json, guard

LABELS = {"hardware": "chips", "systems": "systems", "models": "models", "priors": "priors", "fabrics": "scale-out fabrics",
          "training": "training runs (MFU priors)"}
LABELS.update({"prices": "price sheets (provider/date)", "tiers": "memory tiers (KV cache)",
               "assumptions": "assumptions for reading prices backwards",
               "intervals": "prediction intervals (from validation residuals)"})


def register(app: typer.Typer) -> None:
    cat = typer.Typer(help="List and show catalog entries.", no_args_is_help=True)
    app.add_typer(cat, name="catalog")

    @cat.command("list")
    @guard
    def list_cmd(kind: str = typer.Argument(None, help=f"{', '.join(KINDS)} (default: all)."),
                 as_json: bool = JSON_OPTION) -> None:
        """Every entry name, by kind."""
        listing = list_entries(kind)
        if as_json:
            emit_json(listing)
            return
        for k in listing:
            t = Table(title=LABELS[k], title_justify="left")
            t.add_column("name")
            t.add_column("description")
            for n in names(k):
                rec = load_entry(k, _index(k)[n])
                t.add_row(n, _summary(k, rec))
            console.print(t)

    @cat.command("show")
    @guard
    def show_cmd(name: str = typer.Argument(..., help="Entry name, e.g. h100-sxm, gb200-nvl72, deepseek-v3."),
                 as_json: bool = JSON_OPTION) -> None:
        """One entry: every field, and the source of each figure."""
        k, rec = find_entry(name)
        data = entry_json(k, rec)
        if as_json:
            emit_json(data)
        else:
            console.print(f"[bold]{name}[/bold] ({k}, {rec.file})")
            console.print(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=110), markup=False)


def list_entries(kind: str | None) -> dict[str, list[str]]:
    """`catalog list [KIND]`: entry names by kind (the web API calls it too)."""
    kinds = [kind] if kind else list(KINDS)
    for k in kinds:
        if k not in KINDS:
            raise CatalogError(f"unknown kind {k!r}; one of {', '.join(KINDS)}")
    return {k: names(k) for k in kinds}


def find_entry(name: str):
    """The kind and record of a catalog entry by name; unknown names get suggestions."""
    for k in KINDS:
        if name in _index(k):
            return k, load_entry(k, _index(k)[name])
    other = other_model_name(name) or other_hardware_name(name)  # another name: a release, a cloud instance
    if other is not None:
        return find_entry(other)
    every = [n for k in KINDS for n in names(k)]
    hint = suggest(name, every)
    raise CatalogError(f"no catalog entry {name!r}" + (f"; did you mean {', '.join(hint)}?" if hint else ""))


def entry_json(kind: str, rec) -> dict:
    """What `catalog show NAME --json` prints: every field, a model's computed counts, the sources."""
    data = rec.model_dump(exclude={"sources", "estimates"})
    if kind == "models":
        data["computed"] = {kk: v for kk, v in arch.param_counts(rec).as_floats().items()}
        data["computed"]["kv_bytes_per_token"] = float(arch.kv_bytes_per_token(rec))
    data["sources"] = rec.sources
    data["estimates"] = list(rec.estimates)
    return data


def show_entry(name: str) -> dict:
    """`catalog show NAME`: the entry as --json prints it (the web API calls it too)."""
    return entry_json(*find_entry(name))


def _summary(kind: str, rec) -> str:
    if kind == "hardware":
        peaks = ", ".join(f"{p} {fmt(x, 'FLOP/s')}" for p, x in rec.peak_flop_per_s.items())
        return (f"{rec.display_name}: {peaks}; HBM {fmt(rec.hbm_capacity_bytes, 'B')} at "
                f"{fmt(rec.hbm_bandwidth_bytes_per_s, 'B/s')}")
    if kind == "systems":
        return f"{rec.display_name}: {rec.domain_chips} × {rec.chip.name}"
    if kind == "models":
        pc = arch.param_counts(rec)
        return f"{rec.display_name}: {fmt(pc.total, 'params')} total, {fmt(pc.active, 'params')} active"
    if kind == "prices":
        return f"{rec.display_name}: {', '.join(rec.offers)}"
    return rec.display_name
