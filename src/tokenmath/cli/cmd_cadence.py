"""`tokenmath cadence`: a batch departs every step — worst wait ≈ 2 steps, mean ≈ 1.5 (the lecture's train)."""

from __future__ import annotations

import typer

from ..serving.batching import mean_latency, simulate_cadence, worst_latency
from ..core.roofline import drain_time
from ..serving.serve import tokens_per_s
from ..core.derive import lift, value_of
from ..core.errors import InputError
from ..core.roofline import step
from ..serving.serve import check_inputs, interval_ends, prior_interval_scale
from ..core.load import load_priors
from ..core.units import fmt
from .common import (
    CHIPS_OPTION, EXPLAIN_OPTION, JSON_OPTION, PRECISION_OPTION, SET_OPTION,
    console, emit_json, guard, load_pair,
)
from .grid_args import parse_number


def register(app: typer.Typer) -> None:
    @app.command("cadence")
    @guard
    def cadence_cmd(
        model: str = typer.Argument(None, help="Optional model: the step is its decode step on --on SYSTEM."),
        on: str = typer.Option(None, "--on", help="System; alone, the step is its chips' HBM drain time (T1)."),
        step_ms: float = typer.Option(None, "--step-ms", help="The step (ms), e.g. 20; overrides the others."),
        batch: str = typer.Option("128", "--batch", "-B", help="Sequences per train (decode batch)."),
        context: str = typer.Option("4096", "--context", "-S", help="KV length per sequence (with a model)."),
        chips: int = CHIPS_OPTION,
        precision: str = PRECISION_OPTION,
        basis: str = typer.Option("prior", "--basis", help="'prior' or 'spec' for the model's step."),
        rate: float = typer.Option(None, "--rate", help="Arrivals per second to simulate (default: 80 % of batch ÷ step)."),
        arrivals: int = typer.Option(100_000, "--arrivals", help="Arrivals to simulate."),
        seed: int = typer.Option(0, "--seed", help="Random seed of the simulation."),
        explain: bool = EXPLAIN_OPTION,
        as_json: bool = JSON_OPTION,
        set_: list[str] = SET_OPTION,
    ) -> None:
        """Fixed-cadence batching: worst and mean latency, throughput, and a simulation that checks them."""
        ex = explain or as_json
        # every option is checked, whether or not this mode uses it
        B, S = parse_number(batch, "--batch"), parse_number(context, "--context")
        check_inputs(B=B, S=S, G=chips, precision=precision, basis=basis)
        if step_ms is not None and not 1e-6 <= step_ms <= 1e8:
            raise InputError(f"--step-ms must be between 1e-6 ms (1 ns) and 1e8 ms (about a day) (got {step_ms:g})")
        if rate is not None and not 0 < rate <= 1e12:
            raise InputError(f"--rate must be between 0 and 1e12 arrivals per second (got {rate:g})")
        if not 1 <= arrivals <= 10_000_000:
            raise InputError(f"--arrivals must be between 1 and 10,000,000 (got {arrivals})")
        if seed < 0:
            raise InputError(f"--seed must be ≥ 0 (got {seed})")
        if model is not None and on is None:
            raise InputError("a model needs --on SYSTEM")
        m, s = load_pair(model, on, set_)
        iv = None  # a model's decode step on the prior basis: serve's 80 % interval (down, up, group)
        if step_ms is not None:
            t = lift(ex, "t_step", step_ms / 1e3, "s", "given: --step-ms")
            origin = f"given step {fmt(step_ms / 1e3, 's')}"
        elif m is not None:
            G = chips or s.domain_chips
            st = step(m, s, G=G, B=B, S=S, phase="decode", precision=precision, basis=basis, explain=ex)
            t = st.t_step
            origin = f"{m.name} decode step on {G} × {s.chip.name}, batch {fmt(B)}, context {fmt(S)} ({basis})"
            iv = prior_interval_scale(load_priors(s.chip.priors), basis, "decode", precision or m.weight_dtype)
        elif s is not None:
            chip = s.chip
            t = drain_time(lift(ex, "hbm", chip.hbm_capacity_bytes, "B", chip.source_of("hbm_capacity_bytes")),
                           lift(ex, "W", chip.hbm_bandwidth_bytes_per_s, "B/s",
                                chip.source_of("hbm_bandwidth_bytes_per_s")))
            origin = f"HBM drain time of {chip.name} (capacity ÷ bandwidth: one step reads all of HBM once)"
        else:
            raise InputError("give --step-ms MS, or MODEL --on SYSTEM, or --on SYSTEM (its HBM drain time)")
        t_s = float(value_of(t))
        worst, mean = worst_latency(t), mean_latency(t)
        tput = tokens_per_s(lift(ex, "B", B, "seq", "given: sequences per train"), t)
        lam = rate if rate else 0.8 * B / t_s
        sim = simulate_cadence(t_s, lam, arrivals, seed)
        ends = {}
        if iv is not None:  # times [t/up, t/down], the rate [x·down, x·up]
            ends = {f"{k}_interval": interval_ends(float(value_of(q)), iv, rate=False)
                    for k, q in (("step_time_s", t), ("worst_latency_s", worst), ("mean_latency_s", mean))}
            ends.update(tokens_per_s_interval=interval_ends(float(value_of(tput)), iv, rate=True),
                        trains_per_s_interval=interval_ends(1 / t_s, iv, rate=True), interval_group=iv[2])
        if as_json:
            emit_json({"step_time_s": t_s, "step_origin": origin, "worst_latency_s": value_of(worst),
                       "mean_latency_s": value_of(mean), "batch": B, "tokens_per_s": value_of(tput),
                       "trains_per_s": 1 / t_s, "arrival_rate_per_s": lam, **ends, "simulated": sim,
                       "derivations": {k: q.to_dict() for k, q in (("worst_latency_s", worst),
                                                                     ("mean_latency_s", mean),
                                                                     ("tokens_per_s", tput))}})
            return
        console.print(f"step (a train departs every step): {fmt(t_s, 's')} — {origin}", markup=False)
        if ends:
            lo, hi = ends["step_time_s_interval"]
            console.print(f"  80 % interval of the step {fmt(lo, 's')} – {fmt(hi, 's')}, the latencies and "
                          "throughput "
                          f"in proportion (residual group {ends['interval_group'].split(' (')[0]} of "
                          "catalog/intervals/serving.yaml)", markup=False)
        console.print(f"worst latency = 2 · t_step = {fmt(value_of(worst), 's')} (arrive just after a departure: "
                      "wait one step, ride one)", markup=False)
        console.print(f"mean latency  = 1.5 · t_step = {fmt(value_of(mean), 's')} (wait half a step on average)",
                      markup=False)
        console.print(f"throughput = B / t_step = {fmt(B)} / {fmt(t_s, 's')} = {fmt(value_of(tput), 'tok/s')} "
                      f"({fmt(1 / t_s)} trains per second)", markup=False)
        console.print(f"simulated ({sim['arrivals']:,} Poisson arrivals at {fmt(lam)}/s, "
                      f"seed {seed}): worst {fmt(sim['worst_latency_s'], 's')} = {sim['worst_over_step']:.3f} steps, "
                      f"mean {fmt(sim['mean_latency_s'], 's')} = {sim['mean_over_step']:.3f} steps; fullest train "
                      f"{sim['fullest_train']:,} vs batch {fmt(B)}"
                      + (" — more than the batch holds: the lecture's bound assumes room for all"
                         if sim["fullest_train"] > B else ""), markup=False)
        if explain:
            console.print()
            for q in (worst, mean, tput):
                console.print(q.explain(), markup=False)
