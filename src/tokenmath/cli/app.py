"""The `tokenmath` command: one sub-command per question, each in its own `cmd_*.py` module.

Every `cmd_*` module in this package defines `register(app)`; they are found at start-up, so a new
command is a new file.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys

import typer
from typer.core import TyperGroup

from .. import __version__
from ..core.load import set_catalog_dirs
from .common import err_console, guard

# click's own errors (unknown option, missing argument, a value of the wrong type): found by name, since
# typer vendors click in recent versions and depends on it in older ones
_CLICK_ERROR = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")


class OneLineErrors(TyperGroup):
    """The `tokenmath` group, with click's usage errors printed as one line (usage and hint dropped)."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except _CLICK_ERROR as e:
            if type(e).__name__ == "NoArgsIsHelpError":  # `tokenmath catalog` alone: its help, as usual
                e.show()
            else:
                ctx = getattr(e, "ctx", None)
                hint = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
                err_console.print(f"error: {' '.join(e.format_message().split())}{hint}", markup=False)
            sys.exit(e.exit_code)
        except typer.Abort:
            err_console.print("error: aborted", markup=False)
            sys.exit(1)
        sys.exit(rv if isinstance(rv, int) else 0)


app = typer.Typer(
    cls=OneLineErrors,
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
    set_catalog_dirs(catalog)  # each command line its own: nothing carries over to the next in one process


_package = importlib.import_module(__package__)
for _mod in sorted(m.name for m in pkgutil.iter_modules(_package.__path__)):
    if _mod.startswith("cmd_"):
        importlib.import_module(f"{__package__}.{_mod}").register(app)


def main() -> None:
    app()
