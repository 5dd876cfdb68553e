"""The `tokenmath` command: one sub-command per question, each in its own `cmd_*.py` module.

Every `cmd_*` module in this package defines `register(app)`; they are found at start-up, so a new
command is a new file.
"""

from __future__ import annotations

import importlib
import pkgutil

import typer

from .. import __version__
from ..core.load import add_catalog_dir
from .common import guard

app = typer.Typer(
    name="tokenmath",
    help="The roofline math of LLM training and serving, with every number's derivation.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"tokenmath {__version__}")
        raise typer.Exit()


@app.callback()
@guard
def _root(
    catalog: list[str] = typer.Option([], "--catalog", metavar="DIR", help="Extra catalog directory (hardware/, systems/, models/...)."),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
) -> None:
    for d in catalog:
        add_catalog_dir(d)


_package = importlib.import_module(__package__)
for _mod in sorted(m.name for m in pkgutil.iter_modules(_package.__path__)):
    if _mod.startswith("cmd_"):
        importlib.import_module(f"{__package__}.{_mod}").register(app)


def main() -> None:
    app()
