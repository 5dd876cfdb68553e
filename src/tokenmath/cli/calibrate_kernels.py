"""`tokenmath calibrate --from-kernel-tables`: re-derive the catalog's efficiency priors from measured kernel tables."""

from __future__ import annotations

from rich.table import Table

from ..measure.kernel_tables import TABLE_SYSTEMS, derive_all, write_priors
from .common import console, emit_json, fail


def from_kernel_tables(where: str, out: str | None, chips: str | None, as_json: bool) -> None:
    """Derive each table chip's priors (measure/kernel_tables.py) and write catalog/priors/<chip>-kernels.yaml."""
    names = [c.strip() for c in chips.split(",")] if chips else None
    for c in names or []:
        if c not in TABLE_SYSTEMS:
            fail(f"--chips {c!r}: no kernel tables for it; tables exist for {', '.join(TABLE_SYSTEMS)}")
    derived = derive_all(where, names)
    paths = write_priors(derived, out)
    if as_json:
        emit_json({"written": [str(p) for p in paths],
                   "priors": {d.name: {"chip": d.chip, "tables": d.tables, "version": d.version,
                                       "scalars": d.scalars, "curves": sorted(d.curves)} for d in derived}})
        return
    t = Table(title=f"Efficiency priors from kernel tables ({derived[0].version if derived else ''})",
              title_justify="left")
    for col in ("chip", "written", "eta_flop", "eta_bw", "t_kernel", "curves"):
        t.add_column(col)
    for d, p in zip(derived, paths):
        s = d.scalars
        t.add_row(d.chip, p.name, f"{s.get('eta_flop', float('nan')):.2f}", f"{s.get('eta_bw', float('nan')):.2f}",
                  f"{s.get('kernel_overhead_s', 0) * 1e6:.1f} µs", str(len(d.curves)))
    console.print(t)
    console.print(f"written to {paths[0].parent if paths else out}; chips point at them with `priors:`", markup=False)
