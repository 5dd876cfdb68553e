"""What a simulated run measured, per request and over time, and its summary (`SimResult`).

Per request (arrival, first token, last token):

    ttft = t_first − t_arrival               e2e = t_done − t_arrival
    tpot = (t_done − t_first) / (osl − 1)    (requests with osl ≥ 2)
    tokens_per_s_per_user = 1 / tpot         (the decode speed a user sees; its mean and median)

Over the run (duration D from the first arrival to the last token):

    output_tokens_per_s   = Σ osl / D        tokens_per_s_per_chip = output_tokens_per_s / chips
    goodput               = requests meeting every SLO given / D
    in_flight             = ∫ N(t) dt / D    (N: requests arrived and not done; Little: = λ · mean e2e)
    mean_batch            = Σ_steps B / steps (sequences per decode step)
    kv_utilisation        = ∫ KV reserved dt / (D · KV pool)

An open loop past what the deployment serves has no steady state: the queue, and each request's wait for its first
token, grow through the run. The run measures that growth on the requests in arrival order, over the last half of the arrivals
(third against last quarter: the state as the arrivals end, so a queue still building from the empty start counts;
t_sched: the arrival as drawn, before any wait under --max-concurrency):

    queue_growth = Δ mean(t_first − t_sched) / Δ mean(t_sched)    (≈ λ/μ − 1 past saturation, ≈ 0 below it)

and above SATURATED (the offered rate λ ≥ 1.1 × the served rate μ) says the run is saturated.

Inter-token latencies (one per output token after the first, a stall for a prefill included in the
gap it lengthens) go into a log-spaced histogram (0.58 % bins), so their percentiles cost no memory
per token; with speculation a step's tau tokens each count t_step / tau.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...core.derive import plain, value_of
from ...core.units import fmt

__all__ = ["Recorder", "SimResult", "stats", "queue_growth", "SATURATED"]

_EDGES = np.logspace(-7, 4, 4401)  # 100 ns .. 10,000 s
SATURATED = 0.1  # queue growth above which an open loop is saturated (λ ≥ 1.1 μ; below saturation it is ~0)


def stats(x) -> dict:
    """mean, p50, p90, p95, p99 of the finite values of x (empty: {})."""
    a = np.asarray(x, dtype=float)
    a = a[np.isfinite(a)]
    if a.size == 0:
        return {}
    p = np.percentile(a, [50, 90, 95, 99])
    return {"mean": float(a.mean()), "p50": float(p[0]), "p90": float(p[1]), "p95": float(p[2]), "p99": float(p[3])}


def queue_growth(sched_at, first_at) -> float:
    """The growth of the wait for the first token as the arrivals end: seconds more wait per second later an arrival
    comes (third against last quarter of the requests in arrival order); 0 for runs of fewer than 8 requests."""
    t, w = np.asarray(sched_at, dtype=float), np.asarray(first_at, dtype=float) - np.asarray(sched_at, dtype=float)
    q = len(t) // 4
    if q < 2:
        return 0.0
    order = np.argsort(t, kind="stable")
    t, w = t[order], w[order]
    third = slice(len(t) - 2 * q, len(t) - q)
    span = t[-q:].mean() - t[third].mean()
    return float((w[-q:].mean() - w[third].mean()) / span) if span > 0 else 0.0


class Recorder:
    """Collects the run as it happens: request times, decode steps, KV reserved, requests in flight."""

    def __init__(self, n: int, series_every: float = 0.0):
        self.arrival_at = np.full(n, np.nan)
        self.first_at = np.full(n, np.nan)
        self.done_at = np.full(n, np.nan)
        self.itl_hist = np.zeros(len(_EDGES) + 1)
        self.itl_sum = 0.0
        self.itl_n = 0.0
        self._gaps: list = []  # ITLs waiting to be binned (binned in bulk: one bincount per ~10⁶)
        self._w: list[float] = []  # one weight per array in _gaps
        self._fix: list[tuple] = []  # (gaps, weights) arrays: the stalls' corrections
        self._buffered = 0
        self.steps = 0
        self.prefill_steps = 0
        self.batch_sum = 0.0
        self.series_t: list[float] = []
        self.series_B: list[float] = []
        self._kv = 0.0
        self._kv_int = 0.0
        self._kv_t = 0.0
        self._inflight = 0
        self._inflight_int = 0.0
        self._inflight_t = 0.0

    # ---- requests ----------------------------------------------------------------------------
    def arrive(self, r: int, t: float) -> None:
        self.arrival_at[r] = t
        self._inflight_int += self._inflight * (t - self._inflight_t)
        self._inflight_t, self._inflight = t, self._inflight + 1

    def first(self, r: int, t: float) -> None:
        self.first_at[r] = t

    def done(self, r: int, t: float) -> None:
        self.done_at[r] = t
        self._inflight_int += self._inflight * (t - self._inflight_t)
        self._inflight_t, self._inflight = t, self._inflight - 1

    # ---- KV memory ---------------------------------------------------------------------------
    def kv(self, t: float, delta_bytes: float) -> None:
        self._kv_int += self._kv * (t - self._kv_t)
        self._kv_t, self._kv = t, self._kv + delta_bytes

    # ---- steps -------------------------------------------------------------------------------
    def decode_span(self, t0: float, times: np.ndarray, B: int, tau: float = 1.0, stalls=()) -> None:
        """k decode steps of B sequences from t0, after prefill steps `stalls` = [(sequences decoding, t), ...].

        The sequences that were decoding before the j-th of those prefill steps waited for it and
        every later one: their first gap is longer by the sum of those steps.
        """
        k = len(times)
        gaps = times / tau if tau != 1.0 else times
        self._gaps.append(gaps)
        self._w.append(B * tau)
        self.itl_sum += B * tau * float(gaps.sum())
        self.itl_n += B * tau * k
        if stalls:
            prev, extra, fix_g, fix_w = 0, sum(t for _, t in stalls), [], []
            for b, t in stalls:  # those decoding before this prefill step waited for it and every later one
                n = b - prev
                prev = b
                fix_g += [(times[0] + extra) / tau, times[0] / tau]
                fix_w += [n * tau, -n * tau]
                extra -= t
            g, w = np.array(fix_g), np.array(fix_w)
            self._fix.append((g, w))
            self.itl_sum += float(g @ w)
        self._buffered += k
        if self._buffered > 1_000_000:
            self._bin()
        self.steps += k
        self.batch_sum += B * k
        self.series_t.append(t0)
        self.series_B.append(B)

    def prefill_step(self, t0: float, running_B: int = 0) -> None:
        self.prefill_steps += 1
        self.series_t.append(t0)
        self.series_B.append(running_B)

    def _bin(self) -> None:
        if self._gaps:
            g = np.concatenate(self._gaps + [f[0] for f in self._fix])
            w = np.concatenate([np.repeat(self._w, [len(x) for x in self._gaps])] + [f[1] for f in self._fix])
            self.itl_hist += np.bincount(np.searchsorted(_EDGES, g), weights=w, minlength=len(_EDGES) + 1)
        self._gaps, self._w, self._fix, self._buffered = [], [], [], 0

    # ---- summary -----------------------------------------------------------------------------
    def itl_stats(self) -> dict:
        self._bin()
        if self.itl_n <= 0:
            return {}
        cum = np.cumsum(self.itl_hist) / self.itl_n
        mids = np.sqrt(_EDGES[:-1] * _EDGES[1:])
        mids = np.concatenate([[_EDGES[0]], mids, [_EDGES[-1]]])
        pick = lambda q: float(mids[min(int(np.searchsorted(cum, q)), len(mids) - 1)])  # noqa: E731
        return {"mean": self.itl_sum / self.itl_n, "p50": pick(0.5), "p90": pick(0.9), "p95": pick(0.95),
                "p99": pick(0.99)}

    def close(self, t_end: float) -> tuple[float, float]:
        """(∫ requests in flight dt, ∫ KV reserved dt) up to t_end."""
        return (self._inflight_int + self._inflight * (t_end - self._inflight_t),
                self._kv_int + self._kv * (t_end - self._kv_t))


@dataclass
class SimResult:
    """A simulated run: its settings, its summary (`metrics`), and the raw series behind the plots."""

    settings: dict
    metrics: dict
    ttft_s: np.ndarray
    tpot_s: np.ndarray
    series_t: np.ndarray
    series_B: np.ndarray
    events: int
    steps: int
    wall_s: float
    analytic: object = None  # the closed-loop steady state at the same concurrency (fastpath.SteadyState)
    decode_step: tuple | None = None  # where there is no closed form: (mean batch, mean context, its decode step's Q)
    notes: list = field(default_factory=list)

    def __getitem__(self, key: str):
        return self.metrics[key]

    def to_dict(self) -> dict:
        out = {**self.settings, **self.metrics, "events": self.events, "steps": self.steps}
        if self.notes:
            out["notes"] = list(self.notes)
        return plain(out)

    def explain(self) -> str:
        """The closed-loop steady state's derivation; where a run has none, the decode step at its mean batch and
        mean context, the term its TPOT is made of."""
        if self.analytic is not None:
            return self.analytic.explain()
        why = ("no closed-form counterpart for this run (the steady state is derived for a closed loop of "
               "fixed lengths under the continuous, disagg or cadence policy)")
        if self.decode_step is None:
            return why
        B, S, t = self.decode_step
        tpot = self.metrics["tpot_s"].get("mean", float("nan"))
        return (f"{why}; the decode step at the run's mean batch {fmt(B)} seq and mean context {fmt(S)} tok, "
                f"{fmt(value_of(t), 's')}, is what its TPOT is made of (the simulated mean TPOT, {fmt(tpot, 's')}, "
                f"adds the prompt chunks that share steps and the batch's spread):\n{t.explain()}")

    def derivations(self) -> dict:
        """--json --explain: the closed form's derivations, else the decode step's."""
        if self.analytic is not None:
            return {"closed_form": self.analytic.to_dict(derivations=True)}
        if self.decode_step is None:
            return {}
        B, S, t = self.decode_step
        return {"decode_step": {"batch": B, "context": S, "step_time_s": float(value_of(t)), "derivation": t.to_dict()}}

    def __repr__(self) -> str:
        m = self.metrics
        return (f"SimResult({self.settings.get('model')} on {self.settings.get('chips')} × {self.settings.get('chip')}, "
                f"{self.settings.get('policy')}: {m['output_tokens_per_s']:.4g} tok/s, "
                f"TTFT p50 {m['ttft_s'].get('p50', float('nan')):.3g} s, TPOT p50 {m['tpot_s'].get('p50', float('nan')):.3g} s)")
