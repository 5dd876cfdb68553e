"""The JSON API: one endpoint per CLI command, built from the command itself.

An endpoint's query parameters are its command's options — the same names (`--kv-dtype` is `kv_dtype`,
`--set` is `set`, repeatable), defaults and help — read from the typer signature, and it calls the same
`compute` and `to_json` the command calls. The checks and the numbers are therefore the CLI's by
construction: `GET /api/serve?model=deepseek-v3&on=gb200-nvl72&chips=64&precision=fp8` answers what
`tokenmath serve deepseek-v3 --on gb200-nvl72 --chips 64 --precision fp8 --json` prints.

What the web adds to that JSON, and only when asked or needed:
- `explain=true` adds `"explain": {key: {"value": "5,584", "text": <the --explain derivation>}}` for every
  derived number, formatted by the one formatter (`core.units.fmt`);
- `"warnings"`: a model that does not fit (where `serve` prints its numbers and then fails) and similar.

Left out: options that write or read files the client names (`--plot`, `--measurements`, `--workload`)
and one that only shapes the terminal table (`place --all`). `model` and `on` take catalog names, or
the name of a config.json uploaded to `POST /api/models`, never a path: the server reads no file a
client names.
`system` is accepted as another name for `on`. `simulate` and `frontier` run within the caps of
limits.py (requests, decode steps, prompt chunks, points), so that a request answers in seconds.
"""

from __future__ import annotations

import functools
import inspect
import typing
from dataclasses import dataclass
from typing import Annotated, Any, Callable

import numpy as np
import typer
from fastapi import Query
from typer.models import ParameterInfo

from ..cli import (
    cmd_catalog, cmd_fastmode, cmd_frontier, cmd_infer, cmd_kv, cmd_place, cmd_price, cmd_serve, cmd_simulate, cmd_sweep,
    cmd_train,
)
from ..cli.common import check_options, jsonable, option_labels
from ..core.derive import Q
from ..core.errors import InputError
from ..core.units import fmt
from .limits import check_frontier, check_simulate
from .uploads import Uploads

__all__ = ["Endpoint", "ENDPOINTS", "SKIPPED", "query_parameters", "answer", "explained"]

# options of a command that the web leaves out (see the module docstring)
SKIPPED = {"as_json", "plot", "show_all", "measurements", "workload"}
_PATHLIKE = ("/", "\\", ".json", ".yaml", ".yml")


@dataclass(frozen=True)
class Endpoint:
    """`GET /api/{path}` mirrors `tokenmath {' '.join(command)}`."""

    path: str
    command: tuple[str, ...]
    compute: Callable
    to_json: Callable | None = None
    warnings: Callable | None = None
    limits: Callable | None = None  # the web's own caps on work (limits.py), checked before compute

    @property
    def callback(self) -> Callable:
        """The typer command function: its signature declares the options."""
        from ..cli.app import app

        t: typer.Typer = app
        for part in self.command[:-1]:
            t = next(g.typer_instance for g in t.registered_groups if g.name == part)
        return next(c.callback for c in t.registered_commands if c.name == self.command[-1])


ENDPOINTS = [
    Endpoint("serve", ("serve",), cmd_serve.compute, cmd_serve.to_json, cmd_serve.warnings),
    Endpoint("sweep", ("sweep",), cmd_sweep.compute, cmd_sweep.to_json),
    Endpoint("fastmode", ("fastmode",), cmd_fastmode.compute, cmd_fastmode.to_json),
    Endpoint("frontier", ("frontier",), cmd_frontier.compute, cmd_frontier.to_json, limits=check_frontier),
    Endpoint("simulate", ("simulate",), cmd_simulate.compute, cmd_simulate.to_json, limits=check_simulate),
    Endpoint("place", ("place",), cmd_place.compute, cmd_place.to_json),
    Endpoint("price", ("price",), cmd_price.compute, cmd_price.to_json),
    Endpoint("infer", ("infer",), cmd_infer.compute, cmd_infer.to_json),
    Endpoint("kv", ("kv",), cmd_kv.compute, cmd_kv.to_json),
    Endpoint("train", ("train",), cmd_train.compute, cmd_train.to_json, cmd_train.warnings),
    Endpoint("catalog/list", ("catalog", "list"), cmd_catalog.list_entries),
    Endpoint("catalog/show", ("catalog", "show"), cmd_catalog.show_entry),
]


@dataclass(frozen=True)
class Option:
    """One query parameter: its name on the web, the command's parameter name, and how FastAPI reads it."""

    query: str
    python: str
    annotation: Any
    default: Any
    help: str

    def parameter(self) -> inspect.Parameter:
        return inspect.Parameter(self.query, inspect.Parameter.KEYWORD_ONLY,
                                 annotation=Annotated[self.annotation, Query(description=self.help)],
                                 default=inspect.Parameter.empty if self.default is ... else self.default)


@functools.cache
def query_parameters(ep: Endpoint) -> list[Option]:
    """The command's options as query parameters, in the command's order."""
    fn = ep.callback
    hints = typing.get_type_hints(fn)
    out: list[Option] = []
    for name, p in inspect.signature(fn).parameters.items():
        if name in SKIPPED:
            continue
        info = p.default
        assert isinstance(info, ParameterInfo), f"{ep.command}: {name} is not a typer option"
        default = [] if isinstance(info.default, list) else info.default
        ann = hints[name]
        if default is None:
            ann = ann | None
        help_ = info.help or ""
        if name == "model":
            help_ += " On the web: a catalog name, or an uploaded config.json's name (POST /api/models); no paths."
        if name == "on":  # `system` may stand in for it, so neither is required here; see _resolve_system
            help_ += (" On the web: a catalog name, no paths" + ("" if default in (..., None) else f"; default {default}")
                      + ". `system` is another name for it.")
            default, ann = None, str | None
        out.append(Option(name.rstrip("_"), name, ann, default, help_))
        if name == "on":
            out.append(Option("system", "system", str | None, None, "Another name for `on`."))
    return out


def answer(ep: Endpoint, query: dict, uploads: Uploads) -> dict:
    """The endpoint's JSON for these query values (raises the command's own errors on bad input)."""
    opts = {o.query: o for o in query_parameters(ep)}
    kw = {opts[k].python: v for k, v in query.items()}
    check_options(kw, option_labels(ep.callback))  # what the CLI's guard refuses before any command runs
    _resolve_system(ep, kw)
    for key in ("model", "on"):
        if isinstance(kw.get(key), str):
            kw[key] = _name(key, kw[key], uploads)
    cli = inspect.signature(ep.callback).parameters
    for name in SKIPPED & inspect.signature(ep.compute).parameters.keys():
        kw[name] = cli[name].default.default  # an option the web does not take: as when the CLI is not given it
    if ep.limits:
        ep.limits(kw)
    explain = bool(kw.get("explain", False))
    if "explain" in kw:
        kw["explain"] = True  # derivations for the texts; to_json keeps the --json shape of `explain`
    r = ep.compute(**kw)
    doc = jsonable(ep.to_json(r, explain) if ep.to_json else r)
    if explain:
        doc["explain"] = explained(r)
    notes = ep.warnings(r) if ep.warnings else []
    if notes:
        doc["warnings"] = notes
    return doc


def _resolve_system(ep: Endpoint, kw: dict) -> None:
    """`on` or `system`, else the command's default for --on."""
    if "system" not in kw:
        return
    on, system = kw.get("on"), kw.pop("system")
    if on is not None and system is not None and on != system:
        raise InputError(f"give on or system, not both (on={on!r}, system={system!r})")
    value = on if on is not None else system
    if value is None:
        value = inspect.signature(ep.callback).parameters["on"].default.default
        if value is ...:
            raise InputError("on is required: the system the model runs on (e.g. on=gb200-nvl72), as the CLI's --on")
    kw["on"] = value


def _name(key: str, value: str, uploads: Uploads):
    if key == "model" and value in uploads:
        return uploads[value]
    if any(value.endswith(x) if x.startswith(".") else x in value for x in _PATHLIKE):
        raise InputError(f"{key} {value!r}: the web API reads no files; give a catalog name"
                         + (" or upload the config.json (POST /api/models)" if key == "model" else ""))
    return value


def explained(r) -> dict:
    """Every derived number of a result: its value as the CLI prints it, and its --explain derivation."""
    r = r[0] if isinstance(r, list) and r else r  # sweep: the first variant is the one shown in full
    closed_form = getattr(r, "derivation", None) or getattr(r, "analytic", None)  # frontier, simulate
    numbers = getattr(r, "numbers", None) or getattr(r, "marks", None) or getattr(closed_form, "numbers", None) or {}
    out = {}
    for k, q in numbers.items():
        if isinstance(q, Q) and q.formula and np.ndim(q.value) == 0:
            out[k] = {"value": fmt(q.value, q.unit), "text": q.explain()}
    return out
