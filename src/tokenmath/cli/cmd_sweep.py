"""`tokenmath sweep MODEL --on SYSTEM`: cost, latency and throughput over batch and context, with B*, B_bal, L*."""

from __future__ import annotations

import numpy as np
import typer
from rich.table import Table

from ..core.errors import InputError
from ..serving.sweep import check_grid_size, default_contexts, sweep
from ..core.units import PRECISION_BYTES, fmt
from .common import (
    BASIS_OPTION, EXPLAIN_OPTION, JSON_OPTION, KV_DTYPE_OPTION, ON_OPTION, SET_OPTION, console, emit_json, guard, load_pair,
)
from .grid_args import parse_grid, parse_list

MARK_KEYS = ["optimal_batch", "balance_batch", "kv_crossover_context", "kv_crossover_context_roofline",
             "cost_floor_usd_per_mtok", "c1_over_cmin", "c1_over_cmin_two_term", "memory_batch_limit"]


def register(app: typer.Typer) -> None:
    @app.command("sweep")
    @guard
    def sweep_cmd(
        model: str = typer.Argument(..., help="Catalog model name or a Hugging Face config.json path."),
        on: str = ON_OPTION,
        batch: str = typer.Option("1:131072", "--batch", "-B",
                                  help="Batches: a value, a list '1,8,64', or a log range '1:131072[:N]'."),
        context: str = typer.Option("4096", "--context", "-S",
                                    help="Contexts (same forms); marks are taken at the first value."),
        precision: str = typer.Option(None, "--precision",
                                      help="Matmul/weight precision, or a list 'fp8,fp4' to compare."),
        chips: str = typer.Option(None, "--chips", "-G",
                                  help="Chips per replica, or a list '8,64,72' (default: one scale-up domain)."),
        kv_dtype: str = KV_DTYPE_OPTION,
        basis: str = BASIS_OPTION,
        plot: str = typer.Option(None, "--plot", help="Write cost-vs-batch and cost-vs-context to this PNG."),
        explain: bool = EXPLAIN_OPTION,
        as_json: bool = JSON_OPTION,
        set_: list[str] = SET_OPTION,
    ) -> None:
        """Batch and context sweeps: B*, balance batch with KV, KV crossover context L*, cost floor, c(1)/c_min."""
        want_plot = plot is not None
        runs = compute(model, on, batch, context, precision, chips, kv_dtype, basis, explain or as_json, set_,
                       smooth_contexts=want_plot)
        main = runs[0]
        if want_plot:
            from .plots_serving import plot_sweep

            plot_sweep(main, plot)
        if as_json:
            emit_json(to_json(runs, explain) | ({"plot": plot} if want_plot else {}))
            return
        B, S = parse_grid(batch, "--batch"), parse_grid(context, "--context")
        for r in runs:
            _print(r, B, S)
        if len(runs) > 1:
            _print_variants(runs)
        if explain:
            console.print()
            console.print(main.explain(["optimal_batch", "kappa", "balance_batch", "kv_crossover_context",
                                        "cost_floor_usd_per_mtok", "c1_over_cmin", "c1_over_cmin_two_term"]),
                          markup=False)
        if want_plot:
            console.print(f"plot: {plot}", markup=False)


def compute(model, on, batch, context, precision, chips, kv_dtype, basis, explain, set_, smooth_contexts=False):
    """`sweep` from its options, checked as the command line checks them (the web API calls it too): one sweep
    per precision × chips variant. `smooth_contexts` adds log-spaced contexts for a plot's curves."""
    m, s = load_pair(model, on, set_)
    B = parse_grid(batch, "--batch")
    S = parse_grid(context, "--context")
    precs = parse_list(precision, tuple(PRECISION_BYTES), "--precision") or [m.weight_dtype]
    Gs = [int(g) for g in parse_grid(chips, "--chips")] if chips else [s.domain_chips]
    if len(precs) * len(Gs) > 64:
        raise InputError("at most 64 precision × chips variants")
    S_grid = np.unique(np.concatenate([S, default_contexts()])) if smooth_contexts else S
    check_grid_size(batches=B.size, contexts=S_grid.size, variants=len(precs) * len(Gs))
    return [sweep(m, s, G=G, batch=B, context=S_grid, S_ref=float(S[0]), precision=p, kv_dtype=kv_dtype,
                  basis=basis, explain=explain) for p in precs for G in Gs]


def to_json(runs, explain: bool = False) -> dict:
    """What `--json` prints: the first variant in full, the marks of every variant."""
    out = runs[0].to_dict(derivations=True)
    if len(runs) > 1:
        out["variants"] = [{"precision": r.precision, "chips": r.G,
                            **{k: r.to_dict()[k] for k in ["hardware_ratio", "kappa", *MARK_KEYS]}} for r in runs]
    return out


def _cost_label(r) -> tuple[str, str]:
    return ("USD/Mtok", "USD") if r.usd_per_mtok is not None else ("chip-h/Mtok", "")


def _rows(n: int, limit: int = 16) -> np.ndarray:
    if n <= limit:
        return np.arange(n)
    return np.unique(np.round(np.linspace(0, n - 1, limit)).astype(int))


def _print(r, B, S) -> None:
    v = r.value
    label, unit = _cost_label(r)
    cost = r.usd_per_mtok if r.usd_per_mtok is not None else r.chip_hours_per_mtok
    title = (f"{r.model.display_name or r.model.name} on {r.G} × {r.system.chip.name} — decode, {r.precision} "
             f"weights, {r.kv_dtype} KV, {r.basis} basis, context {fmt(r.S_ref)} tok")
    t = Table(title=title, title_justify="left")
    rate_iv = r.interval_of("tokens_per_s_per_chip", r.tokens_per_s_per_chip)
    for col in ("batch", "step time", "tok/s per chip") + (("80 % interval",) if rate_iv is not None else ()) + (
            label, "bound", "fits"):
        t.add_column(col, justify="right")
    j = int(np.argmin(np.abs(r.context - r.S_ref)))
    for i in _rows(len(r.batch)):
        iv = () if rate_iv is None else (f"{fmt(rate_iv[i, j, 0], 'tok/s')} – {fmt(rate_iv[i, j, 1], 'tok/s')}",)
        t.add_row(fmt(r.batch[i]), fmt(r.step_time_s[i, j], "s"), fmt(r.tokens_per_s_per_chip[i, j], "tok/s"), *iv,
                  fmt(cost[i, j], unit), str(r.bound[i, j]), "yes" if r.fits[i, j] else "no")
    console.print(t)
    if r.interval is not None:
        console.print(f"80 % intervals: residual group {r.interval[2].split(' (')[0]} of catalog/intervals/serving.yaml "
                      "(`--json`: every point's step time, rate and cost)", markup=False)
    bb = v("balance_batch")
    lines = [
        f"B* = R·rho = {fmt(v('hardware_ratio'))} × {fmt(v('rho'))} = {fmt(v('optimal_batch'))} sequences "
        "(weights fetched = weights multiplied; spec)",
        f"kappa = t_kv1/t_c1 = {fmt(v('kappa'))} at {fmt(r.S_ref)} tok  ⇒  balance batch B_bal = B*/(1 − kappa) = "
        + (fmt(bb) if np.isfinite(bb) else "∞ (KV reads alone outrun compute: never compute-bound)"),
        f"KV crossover context L* = 2·N_active·W/(F·kv) = {fmt(v('kv_crossover_context'))} tok "
        + (f"(on the roofline, with attention FLOP: {fmt(v('kv_crossover_context_roofline'))} tok)"
           if v("kv_crossover_context_roofline") is not None else
           "(on the roofline KV never catches compute: attention FLOP grow faster with context than KV reads)"),
        f"cost floor c_min = {fmt(v('cost_floor_usd_per_mtok'), 'USD') if v('cost_floor_usd_per_mtok') is not None else 'no price in catalog'}"
        f" per M tokens (two-term model: {fmt(v('cost_floor_usd_per_mtok_two_term'), 'USD') if v('cost_floor_usd_per_mtok_two_term') is not None else '—'})",
        f"c(1)/c_min = {fmt(v('c1_over_cmin'))} on the roofline ({r.basis}); the lecture's all-weights model "
        f"(B* + kappa)/max(1, kappa) = {fmt(v('c1_over_cmin_two_term'))}"
        + ("  — an MoE step at batch 1 reads only the experts its token picks" if r.model.moe else ""),
        f"memory: KV of at most {fmt(np.floor(v('memory_batch_limit')) if np.isfinite(v('memory_batch_limit')) else v('memory_batch_limit'))}"
        f" sequences fits beside the weights at {fmt(r.S_ref)} tok; latency floor {fmt(v('latency_floor_s'), 's')}",
    ]
    for line in lines:
        console.print(line, markup=False)
    if len(S) > 1:
        ct = Table(title="by context", title_justify="left")
        for col in ("context", "kappa", "B_bal", f"floor {label}", "KV fits for B ≤"):
            ct.add_column(col, justify="right")
        floor = r.floor_usd_per_mtok_by_context if r.floor_usd_per_mtok_by_context is not None else \
            r.floor_chip_hours_per_mtok_by_context
        kap = r.context / v("kv_crossover_context")
        for k in range(len(r.context)):
            if r.context[k] not in S:
                continue
            ct.add_row(fmt(r.context[k]), fmt(kap[k]), fmt(r.balance_batch_by_context[k]), fmt(floor[k], unit),
                       fmt(np.floor(r.memory_batch_limit_by_context[k])))
        console.print(ct)


def _print_variants(runs) -> None:
    t = Table(title="variants", title_justify="left")
    for col in ("precision", "chips", "R", "B*", "B_bal", "L* (tok)", "floor", "c(1)/c_min"):
        t.add_column(col, justify="right")
    for r in runs:
        v = r.value
        _, unit = _cost_label(r)
        t.add_row(r.precision, str(r.G), fmt(v("hardware_ratio")), fmt(v("optimal_batch")), fmt(v("balance_batch")),
                  fmt(v("kv_crossover_context")), fmt(v("cost_floor_usd_per_mtok"), "USD"), fmt(v("c1_over_cmin")))
    console.print(t)
