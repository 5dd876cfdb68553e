"""`tokenmath query FILE.parquet "SQL"`: DuckDB over a deployment search's results (the table `results`)."""

from __future__ import annotations

import datetime
import decimal
from typing import NamedTuple

import typer
from rich.table import Table

from ..core.units import fmt
from ..serving.search import COLUMNS
from .common import EXPLAIN_OPTION, JSON_OPTION, console, emit_json, guard

MAX_PRINTED = 200


def register(app: typer.Typer) -> None:
    @app.command("query")
    @guard
    def query_cmd(
        file: str = typer.Argument(..., help="Parquet file written by `tokenmath search … --out FILE`."),
        sql: str = typer.Argument(..., help="SQL over the table `results`, e.g. \"SELECT model, min(usd_per_mtok) FROM results WHERE meets_slo GROUP BY model\"."),
        explain: bool = EXPLAIN_OPTION,
        as_json: bool = JSON_OPTION,
    ) -> None:
        """Ask SQL questions of a search's results: e.g. the cheapest system per model at TPOT ≤ 30 ms."""
        r = compute(file, sql, explain)
        if as_json:
            emit_json(to_json(r, explain))
            return
        _print(r)
        if explain:
            console.print()
            for c in r.columns:
                if c in COLUMNS:
                    console.print(f"  {c}: {COLUMNS[c][1]}", markup=False)


class QueryRun(NamedTuple):
    """The answer's column names and rows."""

    columns: list[str]
    rows: list[tuple]


def compute(file, sql, explain=False) -> QueryRun:
    """`query` from its arguments (DuckDB over the Parquet file as table `results`)."""
    from ..serving.search_store import query

    cols, rows = query(file, sql)
    return QueryRun(cols, rows)


def _plain(v):
    if isinstance(v, decimal.Decimal):
        return float(v)
    if isinstance(v, (datetime.date, datetime.datetime, datetime.time, datetime.timedelta)):
        return str(v)
    if isinstance(v, float) and v != v:
        return None
    return v


def to_json(r: QueryRun, explain: bool = False) -> dict:
    """What `--json` prints: `columns` and `rows` (each a mapping; a null is left out), with --explain `meaning`."""
    d = {"columns": r.columns, "rows": [{c: _plain(v) for c, v in zip(r.columns, row)} for row in r.rows],
         "count": len(r.rows)}
    if explain:
        d["meaning"] = {c: COLUMNS[c][1] for c in r.columns if c in COLUMNS}
    return d


def _cell(v) -> str:
    v = _plain(v)
    if v is None:
        return "—"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return fmt(v)
    if isinstance(v, int):
        return f"{v:,}" if abs(v) >= 10_000 else str(v)
    return str(v)


def _print(r: QueryRun) -> None:
    if not r.columns:
        console.print("(no result set)", markup=False)
        return
    t = Table(title=f"{len(r.rows):,} rows", title_justify="left")
    for c in r.columns:
        t.add_column(c, justify="right")
    for row in r.rows[:MAX_PRINTED]:
        t.add_row(*(_cell(v) for v in row))
    console.print(t)
    if len(r.rows) > MAX_PRINTED:
        console.print(f"… {len(r.rows) - MAX_PRINTED:,} more rows (--json prints them all)", markup=False)
