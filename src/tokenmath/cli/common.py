"""What every command shares: loading with --set, one-line errors, JSON and explanation output.

The one input-checking layer every command passes through is `guard`: before the command runs it
refuses option values no command can use (NaN or infinite numbers, integers past 1e15, text with a NUL
byte); while it runs, the errors a user can cause become one line on stderr and a non-zero exit; and
anything else becomes one "internal error" line (TOKENMATH_DEBUG=1 shows the traceback instead).
Ranges that depend on the command are checked where the value is used (`serve.check_inputs`,
the records' RANGES, the grids' parser).
"""

from __future__ import annotations

import functools
import inspect
import json
import math
import os
import sys

import numpy as np
import typer
from pydantic import ValidationError
from rich.console import Console

from ..core.errors import InputError, TokenmathError
from ..core.load import apply_overrides, load_model, load_priors, load_system
from ..core.records import Model, Priors, System

console = Console(highlight=False, soft_wrap=True)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)

__all__ = ["JSON_OPTION", "EXPLAIN_OPTION", "SET_OPTION", "ON_OPTION", "CHIPS_OPTION", "PRECISION_OPTION",
           "KV_DTYPE_OPTION", "BASIS_OPTION", "ALLOW_EXTRAPOLATION_OPTION", "extrapolation", "console", "err_console",
           "fail", "guard", "user_error", "check_options", "option_labels",
           "load_pair", "load_triple", "emit_json", "jsonable", "SET_HELP", "JSON_HELP", "EXPLAIN_HELP", "MAX_INT_OPTION"]

SET_HELP = "Override a catalog field, e.g. --set hbm_bandwidth_bytes_per_s=3TB/s or --set model.kv_dtype=fp8."
JSON_HELP = "Print the results (and their derivations) as JSON."
EXPLAIN_HELP = "Unfold every number into its formula, the values substituted, and each input's source."

# The options most commands share, declared once.
JSON_OPTION = typer.Option(False, "--json", help=JSON_HELP)
EXPLAIN_OPTION = typer.Option(False, "--explain", help=EXPLAIN_HELP)
SET_OPTION = typer.Option([], "--set", help=SET_HELP)
ON_OPTION = typer.Option(..., "--on", help="System (e.g. gb200-nvl72, hgx-h100), chip, or profile YAML.")
CHIPS_OPTION = typer.Option(None, "--chips", "-G", help="Chips per replica (default: one scale-up domain).")
PRECISION_OPTION = typer.Option(None, "--precision", help="Weights and matmuls: fp8, bf16, fp4; int8 is weight-only "
                                "(W8A16, at the 16-bit rate), w8a8 INT8 weights and activations (SmoothQuant, at the "
                                "INT8 peak) (default: model's).")
KV_DTYPE_OPTION = typer.Option(None, "--kv-dtype", help="KV-cache element type (default: model's).")
BASIS_OPTION = typer.Option("prior", "--basis", help="'prior' (efficiency priors) or 'spec' (peaks: a bound).")
ALLOW_EXTRAPOLATION_OPTION = typer.Option(False, "--allow-extrapolation", help="With a calibrated profile: predict a "
                                          "format it did not measure (a warning and a wide interval).")


MAX_INT_OPTION = 10**15  # no count a command takes (chips, tokens, arrivals, seeds...) is larger


def fail(message: str, code: int = 1):
    """Print one line to stderr and exit non-zero."""
    err_console.print(f"error: {' '.join(str(message).split())}", markup=False)
    raise typer.Exit(code)


def option_labels(fn) -> dict[str, str]:
    """Each parameter of a command function -> how the user wrote it (--batch, MODEL)."""
    out = {}
    for name, par in inspect.signature(fn).parameters.items():
        d = par.default
        if isinstance(d, typer.models.OptionInfo):
            decls = [x for x in (d.param_decls or ()) if x.startswith("--")]
            out[name] = decls[0] if decls else "--" + name.replace("_", "-")
        else:
            out[name] = name.upper()
    return out


def check_options(values: dict, labels: dict[str, str]) -> None:
    """Refuse option values no command can use, whatever the command (see the module docstring)."""
    for name, given in values.items():
        label = labels.get(name, name)
        for v in given if isinstance(given, (list, tuple)) else (given,):
            if isinstance(v, float) and not math.isfinite(v):
                raise InputError(f"{label} must be a finite number (got {v})")
            if isinstance(v, int) and not isinstance(v, bool) and abs(v) > MAX_INT_OPTION:
                raise InputError(f"{label} {v} is absurd (more than 1e15)")
            if isinstance(v, str) and "\0" in v:
                raise InputError(f"{label} contains a NUL byte")


def user_error(e: BaseException) -> str | None:
    """The one-line message of an error the user caused (a bad name, value or file), or None for a bug.

    The command line prints it and exits non-zero; the web API answers it with a 4xx.
    """
    if isinstance(e, TokenmathError):
        msg = str(e)
    elif isinstance(e, ValidationError):
        err = e.errors()[0]
        msg = f"{'.'.join(map(str, err['loc']))}: {err['msg']}"
    elif isinstance(e, OSError):
        msg = f"{e.filename}: {e.strerror or e}" if getattr(e, "filename", None) else (e.strerror or str(e))
    else:
        return None
    return " ".join(msg.split())


def guard(fn):
    """Turn the errors a user can cause into one line and a non-zero exit, never a traceback."""
    labels = option_labels(fn)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            check_options(kwargs, labels)
            return fn(*args, **kwargs)
        except (typer.Exit, typer.Abort, typer.BadParameter, SystemExit):
            raise
        except KeyboardInterrupt:
            fail("interrupted", 130)
        except Exception as e:
            msg = user_error(e)
            if msg is not None:
                fail(msg)
            if os.environ.get("TOKENMATH_DEBUG"):  # a bug, not the user's doing: still one line
                raise
            fail(f"internal error ({type(e).__name__}: {e}); please report it with the command line "
                 "(TOKENMATH_DEBUG=1 shows the traceback)")

    return wrapper


def load_triple(model: str | Model | None, on: str | None, settings: list[str] | None = None, *,
                priors: bool = True) -> tuple[Model | None, System | None, Priors | None]:
    """The one loader of every command: the model and system named (either may be absent), the system's
    efficiency priors, and every --set applied to whichever record has the field (priors changed by --set
    are bound to the chip, so every analysis that reads the chip's priors sees them). `model` may also be
    a record already read (the web page's uploaded config.json). A command that uses no serving priors
    (`train` has its MFU priors) passes priors=False, so a --set on one is refused."""
    m = model if isinstance(model, Model) else load_model(model) if model is not None else None
    s = load_system(on) if on is not None else None
    p = load_priors(s.chip.priors) if s is not None and priors else None
    if settings:
        recs = {k: v for k, v in (("model", m), ("system", s), ("chip", s and s.chip), ("priors", p)) if v}
        if not recs:
            raise InputError("--set needs a MODEL or --on SYSTEM to set a field on")
        recs = apply_overrides(recs, settings)
        m, s, p = recs.get("model"), recs.get("system"), recs.get("priors")
    return m, s, p


def load_pair(model: str | Model | None, on: str | None, settings: list[str] | None = None, *, priors: bool = True
              ) -> tuple[Model | None, System | None]:
    m, s, _ = load_triple(model, on, settings, priors=priors)
    return m, s


def _default(o):
    return str(o)  # anything else JSON cannot hold (a Path, a date) as text


def _applies(v) -> bool:
    return v is not None and not (isinstance(v, float) and math.isinf(v))


def _clean(o, path: str = ""):
    """Python values JSON can hold, with a value that does not apply (None, or ∞: a limit never reached)
    omitted from its mapping.

    JSON has no ∞ or NaN, and a list cannot omit an element without shifting the others: NaN anywhere, or
    None/∞ in a list, is a bug in the command, reported as such rather than printed as null.
    """
    if isinstance(o, np.ndarray):
        if o.dtype.kind == "O":
            return _clean(o.tolist(), path)
        if o.dtype.kind == "f" and not np.all(np.isfinite(o)):
            raise ValueError(f"{o[~np.isfinite(o)].ravel()[0]} in the JSON list at {path or 'the top'}")
        return o.tolist()
    if isinstance(o, (np.generic,)):
        o = o.item()
    if isinstance(o, dict):
        return {str(k): _clean(v, f"{path}.{k}" if path else str(k)) for k, v in o.items()
                if _applies(v.item() if isinstance(v, np.generic) else v)}
    if isinstance(o, (list, tuple)):
        return [_clean(v, f"{path}[{i}]") for i, v in enumerate(o)]
    if o is None or (isinstance(o, float) and not math.isfinite(o)):
        raise ValueError(f"{o} in the JSON at {path or 'the top'}")
    return o if isinstance(o, (str, int, float, bool)) else _default(o)


def jsonable(obj):
    """`obj` as plain JSON values, exactly as --json prints it (the web API answers the same)."""
    return _clean(obj)


def emit_json(obj) -> None:
    sys.stdout.write(json.dumps(jsonable(obj), indent=2, allow_nan=False) + "\n")


def extrapolation(priors: Priors, allow: bool, *precisions: str | None) -> Priors:
    """Priors that predict formats a calibrated profile did not measure, with a warning, when the user allows it."""
    if not allow or priors.formats is None:
        return priors
    missing = [p for p in precisions if p and p not in priors.formats]
    if missing:
        err_console.print(f"warning: {priors.file or priors.name} did not measure {', '.join(missing)} (it has "
                          f"{', '.join(priors.formats)}): extrapolated, intervals ÷/× 2", markup=False)
    return priors.model_copy(update={"allow_extrapolation": True})
