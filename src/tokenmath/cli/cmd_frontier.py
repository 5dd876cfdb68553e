"""`tokenmath frontier MODEL --on SYSTEM --isl I --osl O [--at-user-speed X]`: tokens/s per chip vs tokens/s per user."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import typer
from rich.table import Table

from ..core.units import fmt
from ..serving.frontier import LAYOUTS, Frontier, frontier, point_layout
from ..serving.serve import check_engine
from ..serving.sim.fastpath import steady_state
from .common import (
    BASIS_OPTION, EXPLAIN_OPTION, JSON_OPTION, KV_DTYPE_OPTION, ON_OPTION, PRECISION_OPTION, SET_OPTION, console,
    emit_json, guard, load_triple,
)
from .grid_args import parse_grid, parse_list
from .serving_args import (
    ACCEPTANCE_LENGTH_OPTION, ACCEPTANCE_OPTION, DECODE_CHIPS_OPTION, DRAFT_OPTION, FRONTIER_ENGINE_OPTION,
    MAX_BATCH_OPTION, MTP_OPTION, PREFILL_CHIPS_OPTION, parse_seconds, speculation,
)


def register(app: typer.Typer) -> None:
    @app.command("frontier")
    @guard
    def frontier_cmd(
        model: str = typer.Argument(..., help="Catalog model name or a Hugging Face config.json path."),
        on: str = ON_OPTION,
        chips: str = typer.Option(None, "--chips", "-G", help="Chips per replica: one count or several, e.g. 4,8,16."),
        layout: str = typer.Option("all", "--layout", help=f"Layouts to compare: {', '.join(LAYOUTS)} (comma-separated; all: the best of those that suit the model)."),
        isl: int = typer.Option(..., "--isl", help="Prompt tokens per request."),
        osl: int = typer.Option(..., "--osl", help="Output tokens per request."),
        at_user_speed: float = typer.Option(None, "--at-user-speed", help="Best tokens/s per chip at ≥ X tokens/s per user."),
        at_ttft: str = typer.Option(None, "--at-ttft", help="… and a mean TTFT at most T (e.g. 2s)."),
        concurrency: str = typer.Option(None, "--concurrency", "-C", help="Concurrencies to evaluate (default: 1 to the KV cap), e.g. 1:512."),
        policy: str = typer.Option("continuous", "--policy", help="continuous, disagg, cadence (closed form) or chunked (simulated)."),
        engine: str = FRONTIER_ENGINE_OPTION,
        max_batch: int = MAX_BATCH_OPTION,
        prefill_chips: int = PREFILL_CHIPS_OPTION,
        decode_chips: int = DECODE_CHIPS_OPTION,
        mtp: int = MTP_OPTION,
        acceptance: float = ACCEPTANCE_OPTION,
        acceptance_length: float = ACCEPTANCE_LENGTH_OPTION,
        draft: str = DRAFT_OPTION,
        confirm: bool = typer.Option(True, "--confirm/--no-confirm", help="Simulate the answer's operating point."),
        requests: int = typer.Option(None, "--requests", "-n", help="Requests per simulation (default: 12 × the "
                                     "answer's concurrency, 400 to 20,000; under --policy chunked 8 × each point's, "
                                     "200 to 4,000)."),
        precision: str = PRECISION_OPTION,
        kv_dtype: str = KV_DTYPE_OPTION,
        basis: str = BASIS_OPTION,
        plot: str = typer.Option(None, "--plot", help="Write the frontier to FILE (.png/.svg)."),
        all_points: bool = typer.Option(False, "--all", help="JSON: every evaluated point, not only the frontier."),
        explain: bool = EXPLAIN_OPTION,
        as_json: bool = JSON_OPTION,
        set_: list[str] = SET_OPTION,
    ) -> None:
        """The Pareto frontier of tokens/s per chip against tokens/s per user, over concurrency, chips and layouts."""
        r = compute(model, on, chips, layout, isl, osl, at_user_speed, at_ttft, concurrency, policy, max_batch,
                    prefill_chips, decode_chips, mtp, acceptance, acceptance_length, draft, confirm, requests,
                    precision, kv_dtype, basis, all_points, explain, set_, engine)
        fr, ss = r.frontier, r.derivation
        if plot:
            from .plots_sim import plot_frontier_points

            plot_frontier_points(fr, plot)
        if as_json:
            emit_json(to_json(r, explain))
            return
        _print(fr)
        if plot:
            console.print(f"plot: {plot}", markup=False)
        if ss is not None:
            console.print()
            console.print(f"At concurrency {int(ss.concurrency)} on {ss.chips} chips, in closed form (sim/fastpath.py):",
                          markup=False)
            console.print(ss.explain(["tokens_per_s_per_chip", "tokens_per_s_per_user", "ttft_s"]), markup=False)


class FrontierRun(NamedTuple):
    """What `frontier` computed: the frontier, whether --json lists every point, the closed form at the answer."""

    frontier: Frontier
    all_points: bool = False
    derivation: object = None


def compute(model, on, chips, layout, isl, osl, at_user_speed, at_ttft, concurrency, policy, max_batch, prefill_chips,
            decode_chips, mtp, acceptance, acceptance_length, draft, confirm, requests, precision, kv_dtype, basis,
            all_points, explain, set_, engine=None) -> FrontierRun:
    """`frontier` from its options, checked as the command line checks them (for the web API too)."""
    check_engine(engine)
    m, s, priors = load_triple(model, on, set_)
    spec = speculation(mtp, acceptance, acceptance_length, draft)
    G = parse_grid(chips, "--chips") if chips else None
    C = parse_grid(concurrency, "--concurrency") if concurrency else None
    fr = frontier(m, s, isl=isl, osl=osl, chips=G, layouts=parse_list(layout, LAYOUTS, "--layout"),
                  concurrencies=C, at_user_speed=at_user_speed, at_ttft=parse_seconds(at_ttft, "--at-ttft"),
                  policy=policy, spec=spec, max_batch=max_batch, prefill_chips=prefill_chips, decode_chips=decode_chips,
                  confirm=confirm, requests=requests, precision=precision, kv_dtype=kv_dtype, basis=basis,
                  priors=priors, engine=engine or "default")
    ss = _derivation(fr, m, s, spec, policy, max_batch, prefill_chips, decode_chips, precision, kv_dtype, basis,
                     priors, engine or "default") if explain else None
    return FrontierRun(fr, all_points, ss)


def to_json(r: FrontierRun, explain: bool = False) -> dict:
    """What `--json` prints: the frontier's `points` (and `at`); with --explain, the closed form's derivations."""
    d = r.frontier.to_dict(r.all_points)
    if explain and r.derivation is not None:
        d["derivations"] = r.derivation.derivations()
    return d


def _derivation(fr, m, s, spec, policy, max_batch, prefill_chips, decode_chips, precision, kv_dtype, basis, priors,
                engine="default"):
    """The closed form's derivation at the answer (or at the frontier's fastest-per-chip point)."""
    if policy == "chunked":
        return None
    p = fr.at if fr.at and fr.at.get("met") else fr.points[fr.frontier[0]]
    G = p["chips"] if policy != "disagg" else None
    kw = dict(prefill_chips=prefill_chips, decode_chips=decode_chips) if policy == "disagg" else {}
    return steady_state(m, s, G=G, concurrency=p["concurrency"], isl=fr.isl, osl=fr.osl, policy=policy,
                        max_batch=max_batch, spec=spec, precision=precision, kv_dtype=kv_dtype, basis=basis,
                        priors=priors, engine=engine, layout=point_layout(p), explain=True, **kw)


def _print(fr) -> None:
    t = Table(title=f"{fr.model.display_name or fr.model.name} on {fr.system.display_name or fr.system.name} — "
                    f"ISL {fmt(fr.isl)} / OSL {fmt(fr.osl)}, {fr.engine} engine, {fr.policy}; {len(fr.frontier)} of {len(fr.points)} "
                    f"points on the frontier ({fr.method})", title_justify="left")
    for col in ("tok/s per user", "tok/s per chip", "concurrency", "chips", "layout", "TTFT", "TPOT"):
        t.add_column(col, justify="right")
    idx = fr.frontier
    if len(idx) > 16:
        idx = [idx[i] for i in np.unique(np.round(np.linspace(0, len(idx) - 1, 16)).astype(int))]
    for i in idx:
        p = fr.points[i]
        t.add_row(fmt(p["tokens_per_s_per_user"]), fmt(p["tokens_per_s_per_chip"]), str(p["concurrency"]),
                  str(p["chips"]), p["layout"], fmt(p["ttft_s"], "s"), fmt(p["tpot_s"], "s"))
    console.print(t)
    g = fr.interval_groups
    if g:
        down, up = (x / p["tokens_per_s_per_chip"] for x in p["tokens_per_s_per_chip_interval"])
        console.print(f"80 % intervals: tok/s per chip ×{down:.2f} – ×{up:.2f} of each point, TTFT and TPOT theirs "
                      f"(residual groups {', '.join(x.split(' (')[0] for x in g.values())} of "
                      "catalog/intervals/serving.yaml; `--json`: every point's)", markup=False)
    for note in fr.notes:
        console.print(f"note: {note}", markup=False)
    at = fr.at
    if at is None:
        return
    asked = " and ".join(([f"≥ {fmt(at['asked']['user_speed'])} tok/s per user"] if "user_speed" in at["asked"] else [])
                         + ([f"mean TTFT ≤ {fmt(at['asked']['ttft_s'], 's')}"] if "ttft_s" in at["asked"] else []))
    if not at["met"]:
        f = at["fastest"]
        console.print(f"no operating point reaches {asked}: the fastest is {fmt(f['tokens_per_s_per_user'])} tok/s "
                      f"per user (concurrency {f['concurrency']} on {f['chips']} chips {f['layout']}, TTFT "
                      f"{fmt(f['ttft_s'], 's')})", markup=False)
        return
    console.print(f"at {asked}: {fmt(at['tokens_per_s_per_chip'])} tok/s per chip "
                  f"({fmt(at['output_tokens_per_s'])} tok/s on {at['chips']} chips {at['layout']}) at concurrency "
                  f"{at['concurrency']}: {fmt(at['tokens_per_s_per_user'])} tok/s per user, TTFT {fmt(at['ttft_s'], 's')}",
                  markup=False)
    if "tokens_per_s_per_chip_interval" in at:
        lo, hi = at["tokens_per_s_per_chip_interval"]
        console.print(f"  80 % interval: {fmt(lo)} – {fmt(hi)} tok/s per chip (residual group "
                      f"{at['interval_groups']['run'].split(' (')[0]} of catalog/intervals/serving.yaml)", markup=False)
    sim = at.get("simulated")
    if sim:
        console.print(f"  simulated ({sim['requests']:,} requests): {fmt(sim['tokens_per_s_per_chip'])} tok/s per chip, "
                      f"{fmt(sim['tokens_per_s_per_user'])} tok/s per user, TTFT {fmt(sim['ttft_s'], 's')}",
                      markup=False)
