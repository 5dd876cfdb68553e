"""`tokenmath serve MODEL --on SYSTEM`: prefill and decode of one replica, priced, bounded, checked for fit."""

from __future__ import annotations

import typer
from rich.table import Table

from ..serving.serve import serve
from ..core.units import fmt
from .common import (
    ALLOW_EXTRAPOLATION_OPTION, BASIS_OPTION, CHIPS_OPTION, EXPLAIN_OPTION, JSON_OPTION, KV_DTYPE_OPTION, ON_OPTION,
    PRECISION_OPTION, SET_OPTION, console, emit_json, extrapolation, fail, guard, load_triple,
)


def register(app: typer.Typer) -> None:
    @app.command("serve")
    @guard
    def serve_cmd(
        model: str = typer.Argument(..., help="Catalog model name or a Hugging Face config.json path."),
        on: str = ON_OPTION,
        chips: int = CHIPS_OPTION,
        batch: int = typer.Option(128, "--batch", "-B", help="Sequences in flight (decode tokens per step)."),
        context: int = typer.Option(4096, "--context", "-S", help="KV length per sequence (prompt length in prefill)."),
        precision: str = PRECISION_OPTION,
        kv_dtype: str = KV_DTYPE_OPTION,
        basis: str = BASIS_OPTION,
        explain: bool = EXPLAIN_OPTION,
        as_json: bool = JSON_OPTION,
        set_: list[str] = SET_OPTION,
        allow_extrapolation: bool = ALLOW_EXTRAPOLATION_OPTION,
    ) -> None:
        """Step time, tokens/s, USD per million tokens, B*, latency floor and memory fit."""
        m, s, priors = load_triple(model, on, set_)
        priors = extrapolation(priors, allow_extrapolation, precision or m.weight_dtype, kv_dtype)
        r = serve(m, s, G=chips, B=batch, S=context, precision=precision, kv_dtype=kv_dtype, basis=basis,
                  priors=priors, explain=explain or as_json)
        if as_json:
            emit_json(r.to_dict())
        else:
            _print(r)
            if explain:
                console.print()
                console.print(r.explain(), markup=False)
        if not r.fits:
            v = r.value
            fail(f"{m.name} does not fit on {r.G} × {s.chip.name}: needs {fmt(v('memory.required_bytes'), 'B')} "
                 f"(weights {fmt(v('memory.weights_bytes'), 'B')} + KV {fmt(v('memory.kv_bytes'), 'B')}) of "
                 f"{fmt(v('memory.capacity_bytes'), 'B')} HBM; use more --chips, a smaller --batch or --context, "
                 f"or a narrower --precision")


def _print(r) -> None:
    v = r.value
    title = (f"{r.model.display_name or r.model.name} on {r.system.display_name or r.system.name} — {r.G} chips, "
             f"batch {fmt(r.B)}, context {fmt(r.S)} tok, {r.precision} weights, {r.kv_dtype} KV, {r.basis} basis")
    t = Table(title=title, title_justify="left")
    t.add_column("")
    t.add_column("prefill (prompt)", justify="right")
    t.add_column("decode (output)", justify="right")
    rows = [("step time", "step_time_s", "s"), ("tokens/s per replica", "tokens_per_s", "tok/s"),
            ("tokens/s per chip", "tokens_per_s_per_chip", "tok/s"),
            ("USD per M tokens", "usd_per_mtok", "USD"), ("bound by", "bound", None),
            ("  compute t_math", "t_math_s", "s"), ("  weights t_weights", "t_weights_s", "s"),
            ("  KV t_kv", "t_kv_s", "s"), ("  comm t_comm", "t_comm_s", "s"), ("  overhead", "t_overhead_s", "s")]
    for label, key, unit in rows:
        cells = []
        for ph in ("prefill", "decode"):
            x = v(f"{ph}.{key}")
            cells.append("no price in catalog" if x is None else (str(x) if unit is None else fmt(x, unit)))
        t.add_row(label, *cells)
    console.print(t)
    console.print(f"optimal batch B* = R·rho = {fmt(v('hardware_ratio'))} × {fmt(v('rho'))} = "
                  f"{fmt(v('optimal_batch'))} sequences (spec); with efficiency priors ≈ "
                  f"{fmt(v('optimal_batch_prior'))}", markup=False)
    console.print(f"latency floor (all weights read once) = {fmt(v('latency_floor_s'), 's')} (spec bound)",
                  markup=False)
    if v("decode.step_time_low_s") is not None:
        console.print(f"decode step interval (the profile's measurement spread): {fmt(v('decode.step_time_low_s'), 's')}"
                      f" – {fmt(v('decode.step_time_high_s'), 's')}", markup=False)
    fits = "fits" if r.fits else "DOES NOT FIT"
    console.print(f"memory: weights {fmt(v('memory.weights_bytes'), 'B')} + KV {fmt(v('memory.kv_bytes'), 'B')} "
                  f"= {fmt(v('memory.required_bytes'), 'B')} of {fmt(v('memory.capacity_bytes'), 'B')} HBM — {fits}",
                  markup=False)
