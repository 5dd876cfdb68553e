"""`tokenmath search MODELS --on SYSTEMS --isl I --osl O`: the best deployment of each model on each system under SLOs."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import typer
from rich.table import Table

from ..core.errors import InputError
from ..core.units import fmt
from ..serving.search import OBJECTIVES, SearchResult, SearchSpec, derivation, search
from ..serving.search_space import POLICIES, Target
from ..serving.serve import check_engine
from ..serving.sim import read_trace
from .common import (
    EXPLAIN_OPTION, JSON_OPTION, KV_DTYPE_OPTION, ON_OPTION, SET_OPTION, console, emit_json, err_console, guard,
    load_triple,
)
from .grid_args import parse_grid, parse_list
from .serving_args import (
    ACCEPTANCE_LENGTH_OPTION, ACCEPTANCE_OPTION, DRAFT_OPTION, FRONTIER_ENGINE_OPTION, MTP_OPTION, parse_seconds,
    speculation,
)


def register(app: typer.Typer) -> None:
    @app.command("search")
    @guard
    def search_cmd(
        models: str = typer.Argument(..., help="Catalog models (or config.json paths), comma-separated."),
        on: str = ON_OPTION,
        precision: str = typer.Option(None, "--precision", help="Precisions to try, comma-separated (default: each model's)."),
        isl: int = typer.Option(None, "--isl", help="Prompt tokens per request."),
        osl: int = typer.Option(None, "--osl", help="Output tokens per request."),
        workload: str = typer.Option(None, "--workload", help="Trace of (isl, osl[, arrival]) rows, CSV or JSONL: its mean lengths in closed form, its rows in the simulations."),
        slo_ttft: str = typer.Option(None, "--slo-ttft", help="Mean TTFT objective, e.g. 2s."),
        slo_tpot: str = typer.Option(None, "--slo-tpot", help="Mean TPOT objective, e.g. 30ms."),
        objective: str = typer.Option("per-chip", "--objective", help=f"Rank by: {', '.join(OBJECTIVES)} (tokens/s per chip, or USD per million output tokens)."),
        policy: str = typer.Option("continuous,disagg", "--policy", help=f"Policies to try: {', '.join(POLICIES)}."),
        max_chips: int = typer.Option(None, "--max-chips", help="Chips of one deployment (default: one scale-up domain); dp replicas fill it."),
        max_num_tokens: str = typer.Option("2048,8192,32768", "--max-num-tokens", help="Token budgets of a prefill step to try."),
        confirm: int = typer.Option(3, "--confirm", help="Layouts per model × system simulated each round."),
        rounds: int = typer.Option(3, "--rounds", help="Rounds of confirmation; round r asks the closed form for 0.85^r of each SLO."),
        requests: int = typer.Option(None, "--requests", "-n", help="Requests per confirming simulation (default: 10 × concurrency, 400 to 4,000)."),
        mtp: int = MTP_OPTION,
        acceptance: float = ACCEPTANCE_OPTION,
        acceptance_length: float = ACCEPTANCE_LENGTH_OPTION,
        draft: str = DRAFT_OPTION,
        kv_dtype: str = KV_DTYPE_OPTION,
        engine: str = FRONTIER_ENGINE_OPTION,
        out: str = typer.Option(None, "--out", "-o", help="Write every evaluated configuration to FILE (Parquet)."),
        ray: str = typer.Option(None, "--ray", metavar="ADDRESS|local",
                                help="Run on Ray: 'local' starts a local instance (--workers CPUs), ADDRESS joins a cluster."),
        workers: int = typer.Option(None, "--workers", "-j", help="Local processes (or local Ray CPUs); default: this machine's cores."),
        seed: int = typer.Option(0, "--seed", help="Seed of the confirming simulations."),
        explain: bool = EXPLAIN_OPTION,
        as_json: bool = JSON_OPTION,
        set_: list[str] = SET_OPTION,
    ) -> None:
        """Search layouts, chip counts, batch and prefill settings for the best deployment under TTFT/TPOT objectives."""
        show = err_console.is_terminal and not as_json
        r = compute(models, on, precision, isl, osl, workload, slo_ttft, slo_tpot, objective, policy, max_chips,
                    max_num_tokens, confirm, rounds, requests, mtp, acceptance, acceptance_length, draft, kv_dtype, out, ray,
                    workers, seed, explain, set_, progress=show, engine=engine)
        if as_json:
            emit_json(to_json(r, explain))
            return
        _print(r)
        if explain:
            for i in r.result.best:
                console.print()
                console.print(f"{r.result.columns['model'][i]} on {r.result.columns['system'][i]}, "
                              f"{r.result.columns['layout'][i]} at concurrency {int(r.result.columns['concurrency'][i])}, "
                              "in closed form (sim/fastpath.py):", markup=False)
                console.print(derivation(r.result, i).explain(["tokens_per_s_per_chip", "tpot_s", "ttft_s"]),
                              markup=False)


class SearchRun(NamedTuple):
    """What `search` computed, and where its rows went."""

    result: SearchResult
    out: str | None = None


def targets(models: str, on: str, precision: str | None, kv_dtype: str | None, spec, set_,
            engine: str | None = None) -> list[Target]:
    names, systems = parse_list(models), parse_list(on)
    if not names:
        raise InputError("MODELS is empty: name one or more catalog models, comma-separated")
    if not systems:
        raise InputError("--on is empty: name one or more systems, comma-separated")
    precisions = parse_list(precision) or [None]
    out = []
    for name in dict.fromkeys(names):
        for sys_name in dict.fromkeys(systems):
            m, s, priors = load_triple(name, sys_name, set_)
            for p in dict.fromkeys(precisions):
                out.append(Target(m, s, priors, p or m.weight_dtype, kv_dtype or m.kv_dtype, spec, engine or "default"))
    return out


def compute(models, on, precision, isl, osl, workload, slo_ttft, slo_tpot, objective, policy, max_chips,
            max_num_tokens, confirm, rounds, requests, mtp, acceptance, acceptance_length, draft, kv_dtype, out, ray, workers,
            seed, explain, set_, progress: bool = False, engine: str | None = None) -> SearchRun:
    """`search` from its options, checked as the command line checks them."""
    from ..serving.search_runners import LocalRunner, RayRunner

    check_engine(engine)
    wl = None
    if workload is not None:
        if isl is not None or osl is not None:
            raise InputError("give --isl/--osl or --workload FILE, not both")
        wl = read_trace(workload, concurrency=1)
        isl, osl = float(wl.isl.mean()), float(wl.osl.mean())
    elif isl is None or osl is None:
        raise InputError("give --isl and --osl (tokens per prompt and per output), or --workload FILE")
    if out is not None:
        from ..serving.search_store import check_writable

        check_writable(out)
    if requests is not None and requests < 1:
        raise InputError(f"--requests must be ≥ 1 (got {requests})")
    spec = SearchSpec(
        targets=tuple(targets(models, on, precision, kv_dtype, speculation(mtp, acceptance, acceptance_length, draft),
                              set_, engine)),
        isl=float(isl), osl=float(osl), workload=wl, slo_ttft=parse_seconds(slo_ttft, "--slo-ttft"),
        slo_tpot=parse_seconds(slo_tpot, "--slo-tpot"), objective=objective,
        policies=tuple(parse_list(policy, POLICIES, "--policy")), max_chips=max_chips,
        budgets=tuple(float(x) for x in parse_grid(max_num_tokens, "--max-num-tokens")), confirm=confirm,
        rounds=rounds, requests=requests, seed=seed)
    runner = RayRunner(None if ray in (None, "local") else ray, workers) if ray else LocalRunner(workers)
    with runner, _progress(progress) as tick:
        result = search(spec, runner, tick)
    if out is not None:
        from ..serving.search_store import write_parquet

        write_parquet(result, out)
        result.summary["out"] = str(out)
    return SearchRun(result, out)


class _progress:
    """A rich progress bar over configurations evaluated (on a terminal only), or nothing."""

    def __init__(self, show: bool):
        self.show, self.bar = show, None

    def __enter__(self):
        if not self.show:
            return None
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.bar = Progress(TextColumn("configurations"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                            console=err_console, transient=True)
        self.bar.start()
        task = self.bar.add_task("evaluate", total=None)
        return lambda n: self.bar.update(task, advance=n)

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.stop()


def to_json(r: SearchRun, explain: bool = False) -> dict:
    """What `--json` prints: `best` (one row per model × system), `summary`; with --explain, the derivations."""
    d = r.result.to_dict()
    if explain:
        d["derivations"] = [derivation(r.result, i).derivations() for i in r.result.best]
    return d


def _ends(iv, unit: str) -> str:
    return f"{fmt(iv[0], unit)} – {fmt(iv[1], unit)}"


def _print(r: SearchRun) -> None:
    res, s = r.result, r.result.summary
    c = res.columns
    slo = " and ".join(([f"TTFT ≤ {fmt(s['slo_ttft_s'], 's')}"] if "slo_ttft_s" in s else []) +
                       ([f"TPOT ≤ {fmt(s['slo_tpot_s'], 's')}"] if "slo_tpot_s" in s else [])) or "no SLO"
    t = Table(title=f"Best deployment per model × system — ISL {fmt(res.spec.isl)} / OSL {fmt(res.spec.osl)}, {slo}, "
                    f"{s['engine']} engine "
                    "(simulated; closed form in brackets; users: concurrency per replica)", title_justify="left")
    several = len({tg.precision for tg in res.spec.targets}) > 1
    for col in ("model", "system") + (("precision",) if several else ()) + (
            "layout", "users", "tok/s per chip", "tok/s per user", "TTFT", "TPOT", "USD/Mtok*"):
        t.add_column(col, justify="left" if col in ("model", "system", "precision", "layout") else "right")
    for i in res.best:
        t.add_row(str(c["model"][i]), str(c["system"][i]), *((str(c["precision"][i]),) if several else ()),
                  str(c["layout"][i]), str(int(c["concurrency"][i])),
                  f"{fmt(c['sim_tokens_per_s_per_chip'][i])} ({fmt(c['tokens_per_s_per_chip'][i])})",
                  fmt(c["sim_tokens_per_s_per_user"][i]),
                  f"{fmt(c['sim_ttft_s'][i], 's')} ({fmt(c['ttft_s'][i], 's')})",
                  f"{fmt(c['sim_tpot_s'][i], 's')} ({fmt(c['tpot_s'][i], 's')})",
                  "—" if np.isnan(c["usd_per_mtok"][i]) else fmt(c["usd_per_mtok"][i]))
    console.print(t)
    console.print("* in closed form, at the catalog's rental price, fully busy", markup=False)
    for i in res.best:
        iv = res.intervals(i)
        parts = [f"{name} {_ends(iv[k], unit)}" for name, k, unit in (
            ("tok/s per chip", "sim_tokens_per_s_per_chip_interval", "tok/s"), ("TTFT", "sim_ttft_s_interval", "s"),
            ("TPOT", "sim_tpot_s_interval", "s"), ("USD/Mtok", "usd_per_mtok_interval", "")) if k in iv]
        if parts:
            console.print(f"  80 % intervals, {c['model'][i]} on {c['system'][i]}: {', '.join(parts)} (residual "
                          "groups of catalog/intervals/serving.yaml; `--json`: every figure's)", markup=False)
    console.print(f"{s['configurations']:,} configurations ({s['layouts']:,} layouts; {s['layouts_pruned']:,} pruned: "
                  f"weights and one request do not fit) in closed form in {fmt(s['evaluate_s'], 's')} "
                  f"({fmt(s['configurations_per_s'])} configurations/s, {s['runner']}); {s['meeting_slo']:,} meet "
                  f"{slo}; {s['confirmed']} simulated; {fmt(s['seconds'], 's')} in all", markup=False)
    for u in s.get("unmet", []):
        console.print(f"  {u['model']} on {u['system']}: no best ({u['why']})", markup=False)
    if len(s["best_per_model"]) and s["systems"] > 1:
        by = "lowest USD per Mtok" if s["objective"] == "cost" else "most tokens/s per chip"
        for b in s["best_per_model"]:
            console.print(f"  {b['model']}: {b['system']} ({b['layout']}) has the {by}", markup=False)
    if r.out:
        console.print(f"every configuration: {r.out} (tokenmath query {r.out} \"SELECT …  FROM results\")", markup=False)
    for n in res.notes[:5]:
        console.print(f"  note: {n}", markup=False)
    if len(res.notes) > 5:
        console.print(f"  … and {len(res.notes) - 5} more notes (--json lists them)", markup=False)
