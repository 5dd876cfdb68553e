"""`tokenmath simulate MODEL --on SYSTEM (--concurrency C | --rate R)`: a request-level simulation of one deployment."""

from __future__ import annotations

import typer

from ..core.units import fmt
from ..core.errors import InputError
from ..serving.serve import check_engine, check_split
from ..serving.sim import POLICIES, simulate
from .common import (
    BASIS_OPTION, CHIPS_OPTION, EXPLAIN_OPTION, JSON_OPTION, KV_DTYPE_OPTION, ON_OPTION, PRECISION_OPTION, SET_OPTION,
    console, emit_json, guard, load_triple,
)
from .serving_args import (
    ACCEPTANCE_LENGTH_OPTION, ACCEPTANCE_OPTION, DECODE_CHIPS_OPTION, DRAFT_OPTION, ENGINE_OPTION, MAX_BATCH_OPTION,
    MTP_OPTION, PREFILL_CHIPS_OPTION, SPLIT_OPTION, engine_policy, layout_of, parse_seconds, speculation,
)


def register(app: typer.Typer) -> None:
    @app.command("simulate")
    @guard
    def simulate_cmd(
        model: str = typer.Argument(..., help="Catalog model name or a Hugging Face config.json path."),
        on: str = ON_OPTION,
        chips: int = CHIPS_OPTION,
        concurrency: int = typer.Option(None, "--concurrency", "-C", help="Closed loop: requests kept in flight."),
        rate: float = typer.Option(None, "--rate", help="Open loop: Poisson arrivals per second."),
        max_concurrency: int = typer.Option(None, "--max-concurrency", help="Open loop: at most this many in flight "
                                            "(an arrival past it waits to be sent, as vLLM's benchmark does)."),
        requests: int = typer.Option(1000, "--requests", "-n", help="Requests to simulate (a trace: its first N rows)."),
        isl: int = typer.Option(None, "--isl", help="Prompt tokens per request."),
        osl: int = typer.Option(None, "--osl", help="Output tokens per request."),
        range_ratio: float = typer.Option(0.0, "--range-ratio", help="Lengths uniform in [L·(1−r), L·(1+r)] (vLLM's random dataset)."),
        prefix_hit: float = typer.Option(0.0, "--prefix-hit", help="Share of each prompt a prefix cache holds (0-1): "
                                         "only the rest is prefilled."),
        workload: str = typer.Option(None, "--workload", help="Trace of (arrival, isl, osl) rows: CSV with a header, or JSONL."),
        policy: str = typer.Option(None, "--policy", help=f"Scheduler: {', '.join(POLICIES)} (default: the engine's, "
                                   "catalog/engines/<engine>.yaml)."),
        engine: str = ENGINE_OPTION,
        split: str = SPLIT_OPTION,
        chunk: int = typer.Option(None, "--chunk", help="Chunked prefill: tokens per step, decodes included (default: engine's)."),
        max_batch: int = MAX_BATCH_OPTION,
        prefill_chips: int = PREFILL_CHIPS_OPTION,
        decode_chips: int = DECODE_CHIPS_OPTION,
        mtp: int = MTP_OPTION,
        acceptance: float = ACCEPTANCE_OPTION,
        acceptance_length: float = ACCEPTANCE_LENGTH_OPTION,
        draft: str = DRAFT_OPTION,
        slo_ttft: str = typer.Option(None, "--slo-ttft", help="TTFT objective, e.g. 2s or 500ms (goodput counts requests meeting all)."),
        slo_tpot: str = typer.Option(None, "--slo-tpot", help="TPOT objective, e.g. 50ms."),
        seed: int = typer.Option(0, "--seed", help="Random seed (arrivals, lengths)."),
        precision: str = PRECISION_OPTION,
        kv_dtype: str = KV_DTYPE_OPTION,
        basis: str = BASIS_OPTION,
        plot: str = typer.Option(None, "--plot", help="Write TTFT/TPOT distributions and batch over time to FILE (.png/.svg)."),
        explain: bool = EXPLAIN_OPTION,
        as_json: bool = JSON_OPTION,
        set_: list[str] = SET_OPTION,
    ) -> None:
        """Simulate requests through one deployment: TTFT, TPOT, ITL, throughput, goodput, batch and KV use."""
        r = compute(model, on, chips, concurrency, rate, requests, isl, osl, range_ratio, workload, policy, chunk,
                    max_batch, prefill_chips, decode_chips, mtp, acceptance, acceptance_length, draft, slo_ttft,
                    slo_tpot, seed, precision, kv_dtype, basis, explain, set_, engine, split, prefix_hit,
                    max_concurrency)
        if plot:
            from .plots_sim import plot_simulation

            plot_simulation(r, plot)
        if as_json:
            emit_json(to_json(r, explain))
            return
        _print(r)
        if plot:
            console.print(f"plot: {plot}", markup=False)
        if explain:
            console.print()
            if r.analytic is not None:
                console.print("The closed-loop steady state in closed form (sim/fastpath.py), beside the simulation:",
                              markup=False)
            console.print(r.explain(), markup=False)


def compute(model, on, chips, concurrency, rate, requests, isl, osl, range_ratio, workload, policy, chunk, max_batch,
            prefill_chips, decode_chips, mtp, acceptance, acceptance_length, draft, slo_ttft, slo_tpot, seed,
            precision, kv_dtype, basis, explain, set_, engine=None, split=None, prefix_hit=0.0,
            max_concurrency=None):
    """`simulate` from its options, checked as the command line checks them (for the web API too). The engine
    sets the scheduling (--policy unless given), the token budget, the batch cap, the KV pool and the kernels; a
    --split is the replica's (disagg: each decode worker's)."""
    check_engine(engine)
    m, s, priors = load_triple(model, on, set_)
    policy = engine_policy(engine, policy)
    G_split = (decode_chips if policy == "disagg" and decode_chips else chips) or s.domain_chips
    layout = layout_of(split, m, G_split)
    check_split(G_split, layout)
    if layout is not None and layout.pp > 1:
        raise InputError(f"--split {split!r}: pipeline stages are not simulated (`tokenmath serve --split` prices "
                         "a pipeline's step and memory)")
    return simulate(m, s, G=chips, concurrency=concurrency, rate=rate, requests=requests, isl=isl, osl=osl,
                    workload=workload, range_ratio=range_ratio, policy=policy, chunk=chunk, max_batch=max_batch,
                    prefill_chips=prefill_chips, decode_chips=decode_chips, engine=engine or "default",
                    layout=layout,
                    spec=speculation(mtp, acceptance, acceptance_length, draft),
                    slo_ttft=parse_seconds(slo_ttft, "--slo-ttft"), slo_tpot=parse_seconds(slo_tpot, "--slo-tpot"),
                    seed=seed, precision=precision, kv_dtype=kv_dtype, basis=basis, priors=priors,
                    prefix_hit=prefix_hit, max_concurrency=max_concurrency)


def to_json(r, explain: bool = False) -> dict:
    """What `--json` prints: the run's settings and metrics (with --explain, the closed form and its derivation)."""
    d = r.to_dict()
    return {**d, **r.derivations()} if explain else d


def _print(r) -> None:
    st, m = r.settings, r.metrics
    load = f"concurrency {st['concurrency']}" if "concurrency" in st else f"Poisson {fmt(st.get('rate_per_s', 0))} req/s" + (
        f", at most {st['max_concurrency']} in flight" if st.get("max_concurrency") else "")
    console.print(f"{st['model']} on {st['chips']} × {st['chip']} ({st['split']}) — {st['engine']} engine, "
                  f"{st['policy']} scheduling, {load}; {st['workload']}; "
                  f"{st['precision']} weights, {st['kv_dtype']} KV, {st['basis']} basis", markup=False)
    if "speculation" in st:
        sp = st["speculation"]
        console.print(f"speculation: K = {sp['draft_tokens']} draft tokens by {sp['draft']}, α = {sp['acceptance']:.3g} "
                      f"→ {sp['tokens_per_step']:.3g} tokens per step", markup=False)
    for key, label in (("ttft_s", "TTFT"), ("tpot_s", "TPOT"), ("itl_s", "ITL"), ("e2e_s", "end-to-end")):
        q = m.get(key)
        if q:
            console.print(f"  {label:<11} mean {fmt(q['mean'], 's'):>9}  p50 {fmt(q['p50'], 's'):>9}  "
                          f"p90 {fmt(q['p90'], 's'):>9}  p95 {fmt(q['p95'], 's'):>9}  p99 {fmt(q['p99'], 's'):>9}",
                          markup=False)
    iv = [(label, m[f"{key}_interval"], unit) for key, label, unit in (
        ("ttft_s", "TTFT", "s"), ("tpot_s", "TPOT", "s"), ("e2e_s", "end-to-end", "s"),
        ("output_tokens_per_s", "output", "tok/s")) if f"{key}_interval" in m]
    if iv:
        console.print("  80 % interval of the means  " + ", ".join(f"{label} {fmt(lo, unit)} – {fmt(hi, unit)}"
                                                             for label, (lo, hi), unit in iv)
                      + " (residual groups " + ", ".join(g.split(" (")[0] for g in m["interval_groups"].values())
                      + " of catalog/intervals/serving.yaml)", markup=False)
    user = m.get("tokens_per_s_per_user")
    console.print(f"  throughput  {fmt(m['output_tokens_per_s'], 'tok/s')} output = {fmt(m['tokens_per_s_per_chip'], 'tok/s')} "
                  "per chip" + (f"; per user {fmt(user['mean'], 'tok/s')} mean, {fmt(user['p50'], 'tok/s')} median"
                                if user else ""), markup=False)
    console.print(f"  {m['requests_completed']:,} requests in {fmt(m['duration_s'], 's')}; mean batch {m['mean_batch']:.1f}; "
                  f"KV pool {fmt(m['kv_pool_bytes'], 'B')}, {m['kv_utilisation']:.0%} reserved on average; "
                  f"in flight {m['in_flight_mean']:.1f}"
                  + (f" ({st['batch_limit_by']} holds {st['batch_limit']:,} at once: the rest queue)"
                     if "batch_limit" in st and m['in_flight_mean'] > st['batch_limit'] + 0.5 else ""), markup=False)
    for note in r.notes:
        console.print(f"  {note}", markup=False)
    if "goodput" in m:
        console.print(f"  goodput {fmt(m['goodput'])} req/s meeting the SLOs ({m['slo_attainment']:.1%} of requests)",
                      markup=False)
    if "worst_wait_s" in st:
        console.print(f"  cadence: a train every {fmt(st['step_s'], 's')}; worst TTFT {fmt(m['ttft_s']['p99'], 's')} (p99)"
                      f" vs the lecture's 2 · t_step = {fmt(st['worst_wait_s'], 's')}", markup=False)
    a = r.analytic
    if a is not None:
        console.print(f"  closed form at the same concurrency: {fmt(float(a['output_tokens_per_s']), 'tok/s')}, "
                      f"TPOT {fmt(float(a['tpot_s']), 's')}, TTFT {fmt(float(a['ttft_s']), 's')}", markup=False)
    console.print(f"  simulated {r.events:,} events ({r.steps:,} steps) in {fmt(r.wall_s, 's')}", markup=False)
