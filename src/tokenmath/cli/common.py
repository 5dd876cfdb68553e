"""What every command shares: loading with --set, one-line errors, JSON and explanation output."""

from __future__ import annotations

import functools
import json
import sys

import numpy as np
import typer
from pydantic import ValidationError
from rich.console import Console

from ..core.errors import TokenmathError
from ..core.load import apply_overrides, load_model, load_priors, load_system
from ..core.records import Model, Priors, System

console = Console(highlight=False, soft_wrap=True)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)

__all__ = ["JSON_OPTION", "EXPLAIN_OPTION", "SET_OPTION", "ON_OPTION", "CHIPS_OPTION", "PRECISION_OPTION",
           "KV_DTYPE_OPTION", "BASIS_OPTION", "ALLOW_EXTRAPOLATION_OPTION", "extrapolation", "console", "err_console", "fail", "guard", "load_pair", "load_triple", "emit_json", "SET_HELP", "JSON_HELP",
           "EXPLAIN_HELP"]

SET_HELP = "Override a catalog field, e.g. --set hbm_bandwidth_bytes_per_s=3TB/s or --set model.kv_dtype=fp8."
JSON_HELP = "Print the results (and their derivations) as JSON."
EXPLAIN_HELP = "Unfold every number into its formula, the values substituted, and each input's source."

# The options most commands share, declared once.
JSON_OPTION = typer.Option(False, "--json", help=JSON_HELP)
EXPLAIN_OPTION = typer.Option(False, "--explain", help=EXPLAIN_HELP)
SET_OPTION = typer.Option([], "--set", help=SET_HELP)
ON_OPTION = typer.Option(..., "--on", help="System (e.g. gb200-nvl72, hgx-h100), chip, or profile YAML.")
CHIPS_OPTION = typer.Option(None, "--chips", "-G", help="Chips per replica (default: one scale-up domain).")
PRECISION_OPTION = typer.Option(None, "--precision", help="Weights and matmuls: fp8, bf16, fp4 (default: model's).")
KV_DTYPE_OPTION = typer.Option(None, "--kv-dtype", help="KV-cache element type (default: model's).")
BASIS_OPTION = typer.Option("prior", "--basis", help="'prior' (efficiency priors) or 'spec' (peaks: a bound).")
ALLOW_EXTRAPOLATION_OPTION = typer.Option(False, "--allow-extrapolation", help="With a calibrated profile: predict a "
                                          "format it did not measure (a warning and a wide interval).")


def fail(message: str, code: int = 1):
    """Print one line to stderr and exit non-zero."""
    err_console.print(f"error: {message}", markup=False)
    raise typer.Exit(code)


def guard(fn):
    """Turn the errors a user can cause into one line and a non-zero exit, never a traceback."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (typer.Exit, typer.Abort, SystemExit):
            raise
        except TokenmathError as e:
            fail(str(e))
        except ValidationError as e:
            err = e.errors()[0]
            fail(f"{'.'.join(map(str, err['loc']))}: {err['msg']}")
        except (ValueError, OSError, KeyError) as e:
            fail(str(e) or type(e).__name__)
        except KeyboardInterrupt:
            fail("interrupted", 130)

    return wrapper


def load_pair(model: str, on: str, settings: list[str] | None) -> tuple[Model, System]:
    m, s, _ = load_triple(model, on, settings)
    return m, s


def load_triple(model: str, on: str, settings: list[str] | None) -> tuple[Model, System, Priors]:
    """Model, system and the system's efficiency priors, with every --set applied to whichever has the field."""
    m, s = load_model(model), load_system(on)
    p = load_priors(s.chip.priors)
    if settings:
        recs = apply_overrides({"model": m, "system": s, "chip": s.chip, "priors": p}, settings)
        m, s, p = recs["model"], recs["system"], recs["priors"]
    return m, s, p


def _default(o):
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, (np.floating, np.integer)):
        return o.item()
    if isinstance(o, np.bool_):
        return bool(o)
    return str(o)


def _finite(o):
    """JSON has no Infinity or NaN: they become null."""
    if isinstance(o, float):
        return o if np.isfinite(o) else None
    if isinstance(o, dict):
        return {k: _finite(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_finite(v) for v in o]
    return o


def emit_json(obj) -> None:
    text = json.dumps(obj, default=_default)
    sys.stdout.write(json.dumps(_finite(json.loads(text)), indent=2) + "\n")


def extrapolation(priors: Priors, allow: bool, *precisions: str | None) -> Priors:
    """Priors that predict formats a calibrated profile did not measure, with a warning, when the user allows it."""
    if not allow or priors.formats is None:
        return priors
    missing = [p for p in precisions if p and p not in priors.formats]
    if missing:
        err_console.print(f"warning: {priors.file or priors.name} did not measure {', '.join(missing)} (it has "
                          f"{', '.join(priors.formats)}): extrapolated, intervals ÷/× 2", markup=False)
    return priors.model_copy(update={"allow_extrapolation": True})
