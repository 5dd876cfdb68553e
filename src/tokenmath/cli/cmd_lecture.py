"""`tokenmath lecture`: derive every claim of the lecture from the catalog and write a report."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ..core.errors import InputError
from .common import JSON_OPTION, console, emit_json, guard

SET_HELP_LECTURE = ("Override a catalog figure for this run: ENTRY.FIELD=VALUE (gb200.hbm_bandwidth_bytes_per_s=4TB/s, "
                    "hdd-exos-x24.read_bandwidth_bytes_per_s=1GB/s), PROVIDER/OFFER.FIELD=VALUE "
                    "(anthropic/claude-opus-4.6.input_per_mtok=4; nested: ...long_context.above_200k.input_per_mtok), "
                    "ROLE.FIELD=VALUE (chip., system., model., priors., tier., prices., assumptions.) or FIELD=VALUE "
                    "for every record that has it.")
_STYLE = {"reproduced": "green", "identity": "blue", "off by a factor": "yellow", "wrong as stated": "red",
          "not computable": "dim"}
# the keys of one claim in --json (issue 13), then what helps a reader; absent values are left out
_CLAIM_KEYS = ("id", "statement", "said", "value", "unit", "verdict", "check", "note", "value_text", "section", "at")


def claim_json(c) -> dict:
    """One claim for --json: a value that does not apply is omitted, never null."""
    d = c.to_dict()
    return {k: d[k] for k in _CLAIM_KEYS if d.get(k) not in (None, "", "–")}


_WIDTHS = (4, 0, 16, 16, 15)  # the claim column takes what the terminal leaves


def _row_table(header: bool) -> Table:
    t = Table(show_header=header, box=None, pad_edge=False, expand=False)
    fixed = sum(_WIDTHS) + 2 * (len(_WIDTHS) - 1)
    widths = [w or max(16, min(70, console.width - fixed - 1)) for w in _WIDTHS]
    for name, w in zip(("id", "claim", "lecture", "tool", "verdict"), widths):
        t.add_column(name, width=w, no_wrap=True, overflow="ellipsis")
    return t


def register(app: typer.Typer) -> None:
    @app.command("lecture")
    @guard
    def lecture_cmd(
        out: Path = typer.Option(Path("lecture-report"), "--out", help="Folder for the report and its pictures."),
        form: str = typer.Option("html", "--format", help="html (self-contained page), md or text."),
        set_: list[str] = typer.Option([], "--set", help=SET_HELP_LECTURE),
        as_json: bool = JSON_OPTION,
    ) -> None:
        """Run every claim of the lecture against the catalog and write the report (HTML, Markdown or text)."""
        from ..lecture import LectureContext, ids, seed_errors
        from ..report import FORMATS, build, value_text

        if form not in FORMATS:
            raise InputError(f"--format must be one of {', '.join(FORMATS)} (got {form!r})")
        ctx = LectureContext(set_)  # bad --set fails here, in one line, before any work
        if as_json:
            path, claims, pics = build(out, form, set_, ctx=ctx)
            emit_json({"report": str(path), "counts": dict(Counter(c.verdict for c in claims)),
                       "claims": [claim_json(c) for c in claims],
                       "seed_errors": [e.to_dict() for e in seed_errors(ctx.seed_errors(), claims)],
                       "pictures": pics, "settings": set_})
            return

        console.print(_row_table(True))
        with Progress(TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(),
                      TimeElapsedColumn(), console=console, transient=True) as progress:
            task = progress.add_task("deriving claims", total=len(ids()) + 1)

            def show(c) -> None:
                t = _row_table(False)
                t.add_row(c.id, c.statement, c.said, value_text(c),
                          f"[{_STYLE.get(c.verdict, '')}]{c.verdict}[/]")
                progress.console.print(t)
                progress.update(task, advance=1, description=f"deriving claims ({c.id})")

            def drawn(c) -> None:
                show(c)
                if c.id == ids()[-1]:
                    progress.update(task, description="drawing pictures")

            path, claims, pics = build(out, form, set_, on_claim=drawn, ctx=ctx)
            progress.update(task, advance=1)
        counts = Counter(c.verdict for c in claims)
        summary = Table(title="verdicts", title_justify="left")
        summary.add_column("verdict")
        summary.add_column("claims", justify="right")
        for v in _STYLE:
            summary.add_row(f"[{_STYLE[v]}]{v}[/]", str(counts.get(v, 0)))
        console.print(summary)
        missing = [k for k, p in pics.items() if "missing" in p]
        drawn_n = len(pics) - len(missing)
        console.print(f"{drawn_n} pictures drawn" + (f"; not drawn: {', '.join(missing)}" if missing else ""),
                      markup=False)
        console.print(f"{len(ctx.seed_errors())} seed-summary errors listed under 'Where the summaries are wrong'",
                      markup=False)
        console.print(f"report written to {path}", markup=False)
