"""`tokenmath validate`: every row of a measurement table predicted, with the error and why it misses."""

from __future__ import annotations

from collections import defaultdict

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ..measure.validate import ValidationReport, validate_table
from .common import BASIS_OPTION, EXPLAIN_HELP, JSON_OPTION, console, emit_json, err_console, fail, guard


def register(app: typer.Typer) -> None:
    @app.command("validate")
    @guard
    def validate_cmd(
        table: str = typer.Option(None, "--table", help="Measurement CSV with the columns of "
                                  "validation/public_measurements.csv (default: that table)."),
        group: str = typer.Option(None, "--group", help="Comma-separated id prefixes, e.g. TRT,MLP,BS1,VLLM "
                                  "(default: every group)."),
        basis: str = BASIS_OPTION,
        row: list[str] = typer.Option([], "--row", help="Only this row id (repeatable)."),
        worst: int = typer.Option(12, "--worst", help="How many of the worst rows to explain."),
        explain: bool = typer.Option(False, "--explain", help=EXPLAIN_HELP + " (serving rows; use --row to pick)."),
        as_json: bool = JSON_OPTION,
    ) -> None:
        """Predicted vs measured for every row; median and p90 |error| per group; the worst rows and why."""
        groups = [g.strip() for g in group.split(",") if g.strip()] if group else None
        if worst < 0:
            fail("--worst must be ≥ 0")
        # a progress bar on stderr (transient: stdout, and --json, stay clean): a table of rows under load simulates
        # each one, minutes for thousands
        with Progress(TextColumn("validating {task.description:<12}"), BarColumn(), MofNCompleteColumn(),
                      TimeElapsedColumn(), console=err_console, transient=True,
                      disable=not err_console.is_terminal) as bar:
            task = bar.add_task("", total=None)
            rep = validate_table(table, basis=basis, groups=groups, explain=explain, ids=row or None,
                                 progress=lambda rid, done, total: bar.update(task, description=rid[:12],
                                                                              completed=done, total=total))
        if row:
            missing = sorted(set(row) - {r.id for r in rep.rows} - {u.id for u in rep.unexpressed})
            if missing:
                fail(f"no row {', '.join(missing)} in {rep.table}")
        if groups and not rep.rows and not rep.unexpressed:
            fail(f"no row of group {', '.join(groups)} in {rep.table} (ids start with the group, e.g. TRT-001)")
        if as_json:
            d = rep.to_dict()
            if explain:
                for r, rd in zip(rep.rows, d["rows"]):
                    if r.derivation is not None:
                        rd["derivation"] = r.derivation.to_dict()
            emit_json(d)
            return
        _print(rep, worst)
        if explain:
            for r in rep.rows:
                if r.derivation is not None:
                    console.print(f"\n[bold]{r.id}[/bold] derivation ({rep.basis} basis)")
                    console.print(r.derivation.explain(), markup=False)


def _pct(x) -> str:
    return "—" if x is None else f"{x:+.1%}" if x < 0 or x > 0 else "0.0%"


def _abs(x) -> str:
    return "—" if x is None else f"{x:.1%}"


def _num(x: float) -> str:
    return f"{x:,.4g}" if abs(x) < 1e4 else f"{x:,.0f}"


def _print(rep: ValidationReport, worst: int) -> None:
    t = Table(title=f"tokenmath validate — {rep.table} ({rep.basis} basis)", title_justify="left")
    for c, j in (("id", "left"), ("kind", "left"), ("predicted", "right"), ("measured", "right"), ("unit", "left"),
                 ("error", "right"), ("spec bound", "right"), ("bound", "left")):
        t.add_column(c, justify=j)
    for r in rep.rows:
        ok = {True: "ok", False: "[red]VIOLATED[/red]", None: ""}[r.bound_ok]
        measured = _num(r.measured) if r.best_case else f"{r.measured_op}{_num(r.measured)}" if r.is_bound else \
            f"{_num(r.measured_low)}–{_num(r.measured_high)}" if r.measured_low is not None and \
            r.measured_high is not None and r.measured_high > r.measured_low else _num(r.measured)
        err = ("passes" if r.bound_passes else "[red]fails[/red]") if r.is_bound else _pct(r.error)
        if r.best_case:
            err = "best case " + err
        t.add_row(r.id, r.kind, _num(r.predicted), measured, r.unit[:18], err,
                  "" if r.spec is None else _num(r.spec), ok)
    console.print(t)

    s = rep.summary()
    st = Table(title="|error| by group (error = (predicted − measured) / measured)", title_justify="left")
    for c in ("group", "rows", "median |error|", "p90 |error|", "median error", "not expressible"):
        st.add_column(c, justify="left" if c == "group" else "right")
    for g, v in s["groups"].items():
        st.add_row(g, str(v["n"]), _abs(v["median_abs_error"]), _abs(v["p90_abs_error"]), _pct(v["median_error"]),
                   str(v["unexpressed"]))
    sv = s["serving"]
    st.add_row("serving", str(sv["n"]),
               _abs(sv["median_abs_error"]), _abs(sv["p90_abs_error"]), _pct(sv["median_error"]), "", style="bold")
    st.add_row("all", str(s["n"]), _abs(s["median_abs_error"]), _abs(s["p90_abs_error"]), _pct(s["median_error"]),
               str(s["unexpressed"]), style="bold")
    console.print(st)
    console.print("serving = the rows that measure end-to-end serving (a token rate or latency of a model), "
                  f"here {', '.join(sv['groups']) or 'none'}; all = every predicted row shown")
    e, b = sv["expressed"], s["bound_rows"]
    if e["of"]:
        console.print(f"serving rows expressed: {e['points'] + e['bounds']} of {e['of']} "
                      f"({(e['points'] + e['bounds']) / e['of']:.1%}): {e['points']} points, {e['bounds']} bounds",
                      markup=False)
    if b["n"]:
        console.print(f"bound rows: {b['passed']} of {b['n']} pass ({b['best_case']} of them checked on the tool's "
                      "best case over a length or acceptance the row leaves unstated)", markup=False)
    if s.get("intervals"):
        c = s["intervals"]
        if c["clusters"] > 1:
            console.print(f"80 % prediction intervals cover {c['left_out_cluster']:.0%} of {c['n']} serving rows with "
                          f"each of {c['clusters']} (model, hardware) clusters left out ({c['in_sample']:.0%} in sample)",
                          markup=False)
        elif c.get("stored_in_sample") is not None:  # one cluster: nothing is left to derive an interval from
            console.print(f"80 % prediction intervals (catalog/intervals/serving.yaml) hold {c['stored_in_sample']:.0%} "
                          f"of {c['n']} serving row(s)", markup=False)

    points = [r for r in rep.rows if not r.is_bound]
    if worst and points:
        console.print(f"\n[bold]The {min(worst, len(points))} worst rows, and why they miss[/bold]")
        worst_rows = rep.worst(worst)
        _explain(worst_rows, worst_rows, lambda r: f"{r.id} {_pct(r.error)} (predicted {_num(r.predicted)}, "
                                                   f"measured {_num(r.measured)} {r.unit})", "these rows")

    bounds = [r for r in rep.rows if r.is_bound]
    if bounds:
        fails = [r for r in bounds if not r.bound_passes]
        console.print(f"\n[bold]{len(bounds)} bound row(s)[/bold]: {len(bounds) - len(fails)} pass, {len(fails)} fail "
                      "(a measured inequality, or a point checked on the tool's best case)")
        _explain(fails, bounds if len(bounds) <= 5 else fails,
                 lambda r: f"{r.id} fails (predicted {_num(r.predicted)}, measured {r.measured_op}{_num(r.measured)} "
                           f"{r.unit})", "these bounds")

    bad = rep.violations()
    if bad:
        console.print(f"\n[bold red]{len(bad)} measurement(s) beat their spec bound[/bold red] — a bug in the catalog, "
                      "the model, or the row's definition of its metric:")
        for r in bad:
            console.print(f"  {r.id}: measured {_num(r.measured)} vs spec bound {_num(r.spec)} {r.unit}; "
                          + "; ".join(r.why), markup=False)
    else:
        console.print("\nNo measurement beats its spec bound.")

    if rep.unexpressed:
        by: dict[str, list[str]] = defaultdict(list)
        for u in rep.unexpressed:
            by[u.reason].append(u.id)
        console.print(f"\n[bold]{len(rep.unexpressed)} row(s) not expressible[/bold]")
        for reason, ids in by.items():
            console.print(f"  {_ids(ids)}: {reason}", markup=False)


def _explain(shown, assuming, head, what: str) -> None:
    """Each row of `shown` with why it lands where it does, then the assumptions behind the rows of `assuming`."""
    for r in shown:
        console.print(f"  {head(r)}: " + "; ".join(r.why), markup=False)
    assumed: dict[str, list[str]] = defaultdict(list)
    for r in assuming:
        for a in r.assumptions:
            assumed[a].append(r.id)
    if assumed:
        console.print(f"  assumptions behind {what}:")
        for a, ids in assumed.items():
            console.print(f"    {_ids(ids)}: {a}", markup=False)


def _ids(ids: list[str]) -> str:
    return ", ".join(ids) if len(ids) <= 6 else f"{', '.join(ids[:3])} … {ids[-1]} ({len(ids)} rows)"
