"""`tokenmath fastmode --price-multiple P --speed-multiple S [MODEL --on SYSTEM]`: what fast and slow modes imply."""

from __future__ import annotations

import numpy as np
import typer
from rich.table import Table

from ..core.errors import InputError
from ..serving.modes import check_multiples, fast_slow_modes
from ..serving.serve import check_inputs, interval_ends
from ..core.units import fmt
from .common import (
    CHIPS_OPTION, EXPLAIN_OPTION, JSON_OPTION, KV_DTYPE_OPTION, PRECISION_OPTION,
    SET_OPTION, console, emit_json, guard, load_pair,
)
from .grid_args import parse_grid, parse_number


def register(app: typer.Typer) -> None:
    @app.command("fastmode")
    @guard
    def fastmode_cmd(
        model: str = typer.Argument(None, help="Optional model: adds its latency–cost frontier and operating points."),
        price_multiple: float = typer.Option(6.0, "--price-multiple", "-p",
                                             help="Fast price ÷ standard price per token (Claude Opus 4.6: 6)."),
        speed_multiple: float = typer.Option(2.5, "--speed-multiple", "-s",
                                             help="Fast ÷ standard output tokens/s per sequence (Opus 4.6: up to 2.5)."),
        chips_multiple: float = typer.Option(1.0, "--chips-multiple",
                                             help="Chips per replica, fast ÷ standard (1 = same replica)."),
        on: str = typer.Option(None, "--on", help="System for the model (e.g. gb200-nvl72)."),
        context: str = typer.Option("4096", "--context", "-S", help="Context per sequence (tokens; 4k, 1M accepted)."),
        chips: int = CHIPS_OPTION,
        batch: str = typer.Option(None, "--batch", "-B", help="Batches for the frontier (default 1:262144, 120 points)."),
        precision: str = PRECISION_OPTION,
        kv_dtype: str = KV_DTYPE_OPTION,
        basis: str = typer.Option("prior", "--basis", help="'prior' or 'spec' for the roofline frontier."),
        plot: str = typer.Option(None, "--plot", help="Write the latency–cost frontier with fast mode to this PNG."),
        explain: bool = EXPLAIN_OPTION,
        as_json: bool = JSON_OPTION,
        set_: list[str] = SET_OPTION,
    ) -> None:
        """Batch ratio 1/(p·s), the KV share that makes p and s consistent, the slow-mode saving, the frontier."""
        if model is not None and on is None:
            raise InputError("a model needs --on SYSTEM (e.g. --on gb200-nvl72)")
        if plot and model is None:
            raise InputError("--plot needs a MODEL and --on SYSTEM (the frontier is the model's)")
        r = compute(model, price_multiple, speed_multiple, chips_multiple, on, context, chips, batch, precision,
                    kv_dtype, basis, explain or as_json, set_)
        if plot:
            from .plots_serving import plot_frontier

            plot_frontier(r, plot)
        if as_json:
            emit_json(to_json(r, explain) | ({"plot": plot} if plot else {}))
            return
        _print(r)
        if explain:
            console.print()
            console.print(r.explain(), markup=False)
        if plot:
            console.print(f"plot: {plot}", markup=False)


def compute(model, price_multiple, speed_multiple, chips_multiple, on, context, chips, batch, precision, kv_dtype,
            basis, explain, set_):
    """`fastmode` from its options, checked as the command line checks them (the web API calls it too)."""
    if model is not None and on is None:
        raise InputError("a model needs --on SYSTEM (e.g. --on gb200-nvl72)")
    # every option is checked, whether or not the model-free reading uses it
    check_multiples(price_multiple, speed_multiple, chips_multiple)
    S = parse_number(context, "--context")
    B = parse_grid(batch, "--batch") if batch else None
    check_inputs(G=chips, B=B, S=S, precision=precision, kv_dtype=kv_dtype, basis=basis)
    m, s = load_pair(model, on, set_)
    return fast_slow_modes(price_multiple, speed_multiple, chips_multiple, model=m, system=s, G=chips, S=S,
                           precision=precision, kv_dtype=kv_dtype, basis=basis, batch=B, explain=explain)


def to_json(r, explain: bool = False) -> dict:
    """What `--json` prints."""
    return r.to_dict(derivations=True)


def _pct(x) -> str:
    return "—" if x is None else fmt(x, "%")


def _ends(point: dict) -> str:
    """A point's step-time interval, printed beside it."""
    iv = point.get("step_time_s_interval")
    return "" if iv is None else f" (80 %: {fmt(iv[0], 's')} – {fmt(iv[1], 's')})"


def _print(r) -> None:
    v = r.value
    p, s = r.p, r.s
    br = v("batch_ratio")
    console.print(f"Fast mode: {fmt(p)}× the price per token for {fmt(s)}× the speed per sequence"
                  + (f", {fmt(r.m)}× the chips per replica" if r.m != 1 else ""), markup=False)
    console.print(f"  batch ratio B_fast/B_std = m/(p·s) = 1/{fmt(1 / br)} = {fmt(br)}  "
                  "(model-free: cost per token = chips·t_step/B, speed = 1/t_step)", markup=False)
    if v("kv_share_model_free" if r.model is not None else "kv_share") is None:
        console.print(f"  {v('note')}", markup=False)
        return
    f = v("kv_share_model_free") if r.model is not None else v("kv_share")
    console.print(f"  KV share of the standard step that makes both hold = (1 − 1/s)/(1 − 1/(p·s)) = {fmt(f)}  "
                  "(two-term roofline, standard at or below its balance batch)", markup=False)
    console.print(f"  a slow mode (batch → ∞) then saves at most 1 − kv_share = {_pct(1 - f)} of the standard price",
                  markup=False)
    if r.model is None:
        return
    k = v("kappa")
    console.print("")
    console.print(f"{r.model.display_name or r.model.name} on {r.G} × {r.system.chip.name}, context {fmt(r.S)} tok:",
                  markup=False)
    if v("standard_batch") is None:
        console.print(f"  kappa = t_kv1/t_c1 = {fmt(k)}; {v('note')}", markup=False)
        return
    regime = ("memory-bound, on the frontier" if v("standard_on_frontier") else
              "compute-bound past the balance batch — off the frontier: the multiples need more KV than this "
              "context has")
    console.print(f"  kappa = t_kv1/t_c1 = {fmt(k)}  ⇒  standard batch = {fmt(v('standard_batch'))} ({regime}), "
                  f"fast batch = {fmt(v('fast_batch'))}", markup=False)
    console.print(f"  KV share of the standard step = {fmt(v('kv_share'))}; slow mode saves at most "
                  f"{_pct(v('slow_mode_max_saving'))}  (two-term model, spec rates)", markup=False)
    std, fast = r.points.get("standard_roofline"), r.points.get("fast_roofline")
    if std:
        console.print(f"  on the roofline ({r.basis}): standard B = {fmt(std['batch'])} at {fmt(std['step_time_s'], 's')}"
                      f"/token{_ends(std)}, fast B = {fmt(fast['batch'])} at {fmt(fast['step_time_s'], 's')}/token"
                      f"{_ends(fast)} → price × "
                      f"{fmt(fast['price_multiple'])}, speed × {fmt(fast['speed_multiple'])}; KV share of the standard "
                      f"step {fmt(std['kv_share'])}; slow mode saves at most {_pct(std['slow_mode_max_saving'])}",
                      markup=False)
    else:
        console.print(f"  on the roofline ({r.basis}): no standard batch gives exactly {fmt(s)}× from a 1/"
                      f"{fmt(1 / br)} cut (every cut buys more, or never that much)", markup=False)
    t = Table(title=f"latency–cost frontier ({r.basis} basis)", title_justify="left")
    cost = r.usd_per_mtok if r.usd_per_mtok is not None else r.chip_hours_per_mtok
    unit = "USD" if r.usd_per_mtok is not None else ""
    iv = r.interval
    for col in ("batch", "step time (latency/token)") + (("80 % interval",) if iv else ()) + (
            "USD/Mtok" if unit else "chip-h/Mtok",):
        t.add_column(col, justify="right")
    fi = r.frontier_index
    for i in fi[np.unique(np.round(np.linspace(0, len(fi) - 1, min(len(fi), 12))).astype(int))]:
        ends = () if iv is None else (" – ".join(fmt(x, "s") for x in interval_ends(r.step_time_s[i], iv, rate=False)),)
        t.add_row(fmt(r.batch[i]), fmt(r.step_time_s[i], "s"), *ends, fmt(cost[i], unit))
    console.print(t)
    if iv is not None:
        console.print(f"80 % intervals: residual group {iv[2].split(' (')[0]} of catalog/intervals/serving.yaml, the "
                      "same factors for the cost (`--json`: every point's step, speed and cost)", markup=False)
