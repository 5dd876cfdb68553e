"""`tokenmath check-local MODEL_OR_CONFIG`: time a real decode step here and set it beside the calibrated roofline."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import typer
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from ..core.errors import InputError
from ..core.load import load_entry, load_model, load_priors, load_system
from ..core.roofline import step
from ..core.units import fmt
from ..measure.calibrate import Backend, calibrate, write_profile
from ..measure.checklocal import check_local, model_dtype, plan, truncate
from .common import EXPLAIN_HELP, JSON_OPTION, console, emit_json, err_console, fail, guard


def _ints(text: str, flag: str) -> list[int]:
    try:
        vals = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise InputError(f"{flag} takes comma-separated whole numbers, e.g. 1,4,16 (got {text!r})") from None
    if not vals or min(vals) < 1:
        raise InputError(f"{flag} needs whole numbers ≥ 1 (got {text!r})")
    return vals


def register(app: typer.Typer) -> None:
    @app.command("check-local")
    @guard
    def check_local_cmd(
        model: str = typer.Argument(..., help="Catalog model, a Hugging Face config.json, or a model YAML."),
        profile: str = typer.Option(None, "--profile", "--on", help="Profile from `tokenmath calibrate` (default: "
                                    "calibrate now, --quick, and write calibrated-profile.yaml)."),
        batch: str = typer.Option("1,4,16,64", "--batch", help="Batch sizes (sequences per decode step)."),
        context: str = typer.Option("256,1024,2048", "--context", help="Cached tokens per sequence."),
        layers: int = typer.Option(None, "--layers", help="Build only the first N layers (for models larger than "
                                   "memory); the full model's step is extrapolated."),
        precision: str = typer.Option(None, "--precision", "--dtype", help="Weights, activations and KV: fp32, bf16, "
                                      "fp16 (default: the config's torch_dtype)."),
        rounds: int = typer.Option(3, "--rounds", help="Interleaved rounds over the grid; each point keeps its median."),
        allow_extrapolation: bool = typer.Option(False, "--allow-extrapolation", help="Predict a format the profile "
                                                 "did not measure (a warning and a wide interval)."),
        save_csv: str = typer.Option(None, "--csv", help="Also write the rows to this CSV file."),
        keep_host_costs: bool = typer.Option(False, "--keep-host-costs", help="Use the profile's host costs as "
                                             "calibrated (default: scaled by how fast the host runs calibrate's tiny "
                                             "step now: a shared host's speed drifts)."),
        explain: bool = typer.Option(False, "--explain", help=EXPLAIN_HELP + " (for the first point)."),
        as_json: bool = JSON_OPTION,
    ) -> None:
        """Predicted (calibrated roofline) vs measured decode-step time over batch × context, error per point."""
        if rounds < 1:
            fail("--rounds must be ≥ 1")
        if precision is not None and precision not in ("fp32", "bf16", "fp16"):
            fail(f"--precision must be fp32, bf16 or fp16 (got {precision!r})")
        B, S = _ints(batch, "--batch"), _ints(context, "--context")
        m = load_entry("models", Path(model)) if model.endswith((".yaml", ".yml")) else load_model(model)
        dtype = precision or model_dtype(m)
        mem = load_system(profile).chip.hbm_capacity_bytes if profile else Backend().memory_bytes()
        plan(m, mem, batches=B, contexts=S, layers=layers, dtype=dtype)  # refuse before the slow part
        with Progress(SpinnerColumn(), TextColumn("{task.description:<40}"), BarColumn(),
                      TextColumn("{task.percentage:>3.0f}%"), TimeElapsedColumn(), console=err_console,
                      transient=True, disable=as_json) as bar:
            task = bar.add_task("", total=1.0)
            say = lambda what, frac: bar.update(task, description=what[:40], completed=frac)  # noqa: E731
            if profile is None:
                profile = "calibrated-profile.yaml"
                write_profile(profile, calibrate(quick=True, progress=lambda w, f: say(f"calibrate: {w}", f)))
            system = load_system(profile)
            pri = load_priors(system.chip.priors)
            if allow_extrapolation:
                pri = pri.model_copy(update={"allow_extrapolation": True})
                if pri.formats is not None and dtype not in pri.formats:
                    err_console.print(f"warning: {profile} did not measure {dtype} (it has "
                                      f"{', '.join(pri.formats)}): predictions are extrapolated, intervals ÷/× 2",
                                      markup=False)
            r = check_local(m, system, batches=B, contexts=S, layers=layers, dtype=dtype, rounds=rounds,
                            progress=say, priors=pri, refresh_host=not keep_host_costs)
        if save_csv:
            with open(save_csv, "w", newline="", encoding="utf-8") as fh:
                rows = [p.to_dict() for p in r.points]
                w = csv.DictWriter(fh, fieldnames=list(rows[0]))
                w.writeheader()
                w.writerows(rows)
        if as_json:
            d = r.to_dict()
            d["profile"] = profile
            emit_json(d)
            return
        _print(r, profile)
        if explain and r.points:
            p = r.points[0]
            mt = truncate(m, layers) if layers else m
            st = step(mt, system, G=1, B=p.B, S=p.S, phase="decode", precision=dtype, kv_dtype=dtype, priors=pri,
                      explain=True)
            console.print(f"\nprediction at batch {p.B}, context {p.S}:")
            console.print(st.t_step.explain(), markup=False)


def _print(r, profile: str) -> None:
    built = f"first {r.layers_built} of {r.layers_full} layers" if r.layers_built < r.layers_full else \
        f"{r.layers_full} layers"
    t = Table(title=f"{r.model} ({built}, {r.dtype}) on {r.system} — {r.backend}; profile {profile}",
              title_justify="left")
    for c in ("batch", "context", "predicted", "interval", "measured", "±", "error", "bound"):
        t.add_column(c, justify="right" if c != "bound" else "left")
    for p in r.points:
        iv = "" if math.isnan(p.low_s) else f"{fmt(p.low_s, 's')} – {fmt(p.high_s, 's')}"
        t.add_row(str(p.B), str(p.S), fmt(p.predicted_s, "s"), iv, fmt(p.measured_s, "s"), f"{p.spread:.0%}",
                  f"{p.error:+.1%}", p.bound)
    console.print(t)
    s = r.summary()
    inside = f"; {s['inside_interval']:.0%} of points inside the predicted interval" if "inside_interval" in s else ""
    console.print(f"median |error| {s['median_abs_error']:.1%}, p90 {s['p90_abs_error']:.1%}, max "
                  f"{s['max_abs_error']:.1%}, median error {s['median_error']:+.1%} over {s['n']} points{inside}",
                  markup=False)
    if r.host_ratio is not None:
        console.print(f"host costs scaled by {r.host_ratio:.3g}: calibrate's tiny step runs {r.host_ratio:.3g}× as long "
                      f"now as when the profile was made (--keep-host-costs to use them as calibrated)", markup=False)
    if r.full_model:
        console.print(f"full {r.layers_full}-layer model, extrapolated from the layers built:", markup=False)
        for f in r.full_model:
            console.print(f"  batch {f['batch']}, context {f['context']}: predicted {fmt(f['predicted_s'], 's')}, "
                          f"measured ≈ {fmt(f['measured_s'], 's')} ({f['error']:+.1%})", markup=False)
