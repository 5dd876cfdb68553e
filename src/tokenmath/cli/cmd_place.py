"""`tokenmath place MODEL --on SYSTEM`: which tensor/expert/pipeline/data splits fit weights + KV, and at what cost."""

from __future__ import annotations

import numpy as np
import typer
from rich.table import Table

from ..serving.placement import place
from ..core.units import fmt
from .common import (
    EXPLAIN_OPTION, JSON_OPTION, KV_DTYPE_OPTION, SET_OPTION, console,
    emit_json, guard, load_pair,
)
from .grid_args import parse_number


def register(app: typer.Typer) -> None:
    @app.command("place")
    @guard
    def place_cmd(
        model: str = typer.Argument(..., help="Catalog model name or a Hugging Face config.json path."),
        on: str = typer.Option(..., "--on", help="System (e.g. gb300-nvl72, hgx-h100), chip, or profile YAML."),
        batch: str = typer.Option("128", "--batch", "-B", help="Sequences each pipeline stage decodes per step."),
        context: str = typer.Option("4096", "--context", "-S", help="KV length per sequence (4k, 100k, 1M accepted)."),
        chips: int = typer.Option(None, "--chips", "-G",
                                  help="Most chips one replica may use (default: one scale-up domain)."),
        tp: int = typer.Option(None, "--tp", help="Tensor-parallel ways (fix it; default: try all)."),
        ep: int = typer.Option(None, "--ep", help="Expert-parallel ways (fix it; default: try all)."),
        pp: int = typer.Option(None, "--pp", help="Pipeline stages (fix it; default: try all)."),
        precision: str = typer.Option(None, "--precision", help="Weights: fp8, bf16, fp4 (default: model's)."),
        kv_dtype: str = KV_DTYPE_OPTION,
        basis: str = typer.Option("prior", "--basis", help="'prior' or 'spec' for step and comm times."),
        show_all: bool = typer.Option(False, "--all", help="List every split, not the best 15."),
        explain: bool = EXPLAIN_OPTION,
        as_json: bool = JSON_OPTION,
        set_: list[str] = SET_OPTION,
    ) -> None:
        """Splits that fit (memory per chip, comm per step and its tier), the best one, the largest model a domain holds."""
        r = compute(model, on, batch, context, chips, tp, ep, pp, precision, kv_dtype, basis, explain or as_json, set_)
        if as_json:
            emit_json(to_json(r, explain))
            return
        _print(r, show_all)
        if explain:
            console.print()
            console.print(r.explain(), markup=False)


def compute(model, on, batch, context, chips, tp, ep, pp, precision, kv_dtype, basis, explain, set_):
    """`place` from its options, checked as the command line checks them (the web API calls it too)."""
    m, s = load_pair(model, on, set_)
    return place(m, s, B=parse_number(batch, "--batch"), S=parse_number(context, "--context"), max_chips=chips,
                 tp=tp, ep=ep, pp=pp, precision=precision, kv_dtype=kv_dtype, basis=basis, explain=explain)


def to_json(r, explain: bool = False) -> dict:
    """What `--json` prints."""
    return r.to_dict(derivations=True)


def _print(r, show_all: bool) -> None:
    sp = r.splits
    n = len(sp["tp"])
    order = np.lexsort((sp["chips"], -np.nan_to_num(sp["tokens_per_s_per_chip"], nan=-1), ~sp["fits"]))
    if r.requested is not None:
        order = np.concatenate([[r.requested], order[order != r.requested]])
    shown = order if show_all else order[:15]
    title = (f"{r.model.display_name or r.model.name} on {r.system.display_name or r.system.name} — up to "
             f"{r.max_chips} chips per replica, {fmt(r.B)} seq per stage step at {fmt(r.S)} tok, {r.precision} "
             f"weights, {r.kv_dtype} KV")
    t = Table(title=title, title_justify="left")
    for col in ("tp·ep·pp", "dp", "G", "W/chip", "KV/chip", "fits", "comm/step", "pp hops", "tok/s/chip"):
        t.add_column(col, justify="right")
    cap = sp["capacity_per_chip_bytes"][0]
    for i in shown:
        mark = "←" if i == r.requested else ("★" if i == r.best else "")
        share = sp["ep_scaleout_share"][i]
        tier = "out" if str(sp["comm_tier"][i]) == "scale-out" else "up"
        if share > 0:
            tier += f" {share:.0%}"
        comm = f"{fmt(sp['t_comm_s'][i], 's')} {tier}" if np.isfinite(sp["t_comm_s"][i]) else "—"
        pipe = "—" if sp["pp"][i] <= 1 or not sp["runs"][i] else (
            f"{fmt(sp['t_pipeline_s'][i], 's')} {'out' if str(sp['pipeline_tier'][i]) == 'scale-out' else 'up'}")
        tps = sp["tokens_per_s_per_chip"][i]
        t.add_row(f"{sp['tp'][i]}·{sp['ep'][i]}·{sp['pp'][i]}", str(sp["dp"][i]), str(sp["chips"][i]),
                  fmt(sp["weights_per_chip_bytes"][i], "B"), fmt(sp["kv_per_chip_bytes"][i], "B"),
                  ("yes" if sp["fits"][i] else "no") + mark, comm, pipe,
                  fmt(round(tps)) if np.isfinite(tps) else "—")
    console.print(t)
    if n > len(shown):
        console.print(f"({n - len(shown)} more splits; --all lists them)", markup=False)
    v = r.numbers
    console.print(f"HBM per chip {fmt(cap, 'B')}; weights {fmt(v['weights_bytes'], 'B')} in all; one stage step's KV "
                  f"= B · kv_held = {fmt(v['kv_bytes_per_stage_step'], 'B')}", markup=False)
    chosen = r.requested if r.requested is not None else r.best
    stuck = sp["fits"] & ~sp["runs"]
    if chosen is None and stuck.any():
        console.print(f"fits: NO — {int(stuck.sum())} split(s) hold weights + KV but cannot run here: "
                      f"{sp['why_not'][np.flatnonzero(stuck)[0]]}", markup=False)
        return
    if chosen is None:
        console.print(f"fits: NO — no split of up to {r.max_chips} chips holds weights + KV; the largest model "
                      f"one {r.system.domain_chips}-chip domain holds at this batch and context is "
                      f"{fmt(v['largest_model_params'], 'params')} ({r.precision}); pipeline across domains with "
                      "--chips N, or lower --batch / --context", markup=False)
        return
    row = r.row(chosen)
    which = "requested" if chosen == r.requested else "best (most tokens/s per chip)"
    console.print(f"fits: {'yes' if row['fits'] else 'NO'} — {which} split tp={row['tp']} ep={row['ep']} "
                  f"pp={row['pp']} on {row['chips']} chips: {fmt(row['memory_per_chip_bytes'], 'B')} of "
                  f"{fmt(cap, 'B')} per chip", markup=False)
    if "tokens_per_s_per_chip_interval" in row:
        lo, hi = row["tokens_per_s_per_chip_interval"]
        t_lo, t_hi = row["step_time_s_interval"]
        console.print(f"80 % interval: {fmt(lo, 'tok/s')} – {fmt(hi, 'tok/s')} per chip, step {fmt(t_lo, 's')} – "
                      f"{fmt(t_hi, 's')} (residual group {v['interval_group'].split(' (')[0]} of "
                      "catalog/intervals/serving.yaml; `--json`: every split's)", markup=False)
    console.print("pipelining: weights per chip fall as 1/pp; KV per chip does not (pp micro-batches of B are in "
                  f"flight: {fmt(row['sequences_in_flight'])} sequences), so KV per stage stays "
                  f"{fmt(row['kv_per_stage_bytes'], 'B')}", markup=False)
    console.print(f"largest model one {r.system.domain_chips}-chip domain holds at this batch and context "
                  "(capacity bound, weights and KV spread evenly): "
                  f"{fmt(v['largest_model_params'], 'params')} ({r.precision})", markup=False)
