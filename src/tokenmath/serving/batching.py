"""Fixed-cadence batching: a batch (the lecture's "train") departs every step (ledger T1, T3, T4).

A request that arrives just after a departure waits one whole step for the next train, then rides
one step; on average it waits half a step:

    worst latency = 2 · t_step          (T3: 2 × 20 ms = 40 ms)
    mean latency  = 1.5 · t_step        (uniform arrival phase)
    throughput    = B / t_step          (T4: tokens per second of a replica)
    t_drain       = hbm / W             (T1: the step at which one step reads all of HBM once)

`simulate_cadence` checks the first two with Poisson arrivals and departures every t_step, assuming
every train has room for everyone waiting (the lecture's assumption; the simulation reports the
fullest train so a reader can compare it with the batch).
"""

from __future__ import annotations

import numpy as np

from ..core.derive import formula
from ..core.errors import InputError

__all__ = ["worst_latency", "mean_latency", "simulate_cadence"]


@formula("t_worst = 2 · t_step", unit="s")
def worst_latency(t_step):
    return 2 * t_step


@formula("t_mean = 1.5 · t_step", unit="s")
def mean_latency(t_step):
    return 1.5 * t_step


MAX_SIMULATED_STEPS = 1e12  # trains the arrivals span: beyond it arrival times lose sub-step precision in float64


def simulate_cadence(t_step: float, rate_per_s: float, n: int = 100_000, seed: int = 0) -> dict:
    """Poisson arrivals at `rate_per_s`; a train leaves at every multiple of t_step and takes t_step.

    Each arrival boards the next departure (one exactly at a departure boards it) and is done one
    step later. Vectorised: no loop over arrivals, and memory grows with the arrivals only (trains are
    counted by their distinct indices, not by a bin per train).
    """
    if not (t_step > 0 and rate_per_s > 0 and 1 <= n <= 10_000_000):
        raise InputError("the step and the arrival rate must be positive, and 1 to 10,000,000 arrivals")
    if n / (rate_per_s * t_step) > MAX_SIMULATED_STEPS:
        raise InputError(f"{n:,} arrivals at {rate_per_s:g}/s span more than {MAX_SIMULATED_STEPS:g} steps of "
                         f"{t_step:g} s; raise the rate or the step")
    rng = np.random.default_rng(seed)
    arrive = np.cumsum(rng.exponential(1.0 / rate_per_s, n))
    train = np.ceil(arrive / t_step)
    done = (train + 1) * t_step
    latency = done - arrive
    _, boarded = np.unique(train, return_counts=True)
    return {"arrivals": n, "worst_latency_s": float(latency.max()), "mean_latency_s": float(latency.mean()),
            "worst_over_step": float(latency.max() / t_step), "mean_over_step": float(latency.mean() / t_step),
            "fullest_train": int(boarded.max()), "mean_train": float(n / (train.max() - train.min() + 1)),
            "seed": seed}
