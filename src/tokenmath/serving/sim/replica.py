"""One replica's decode loop: the running set, its KV pool and batch cap, and spans of decode steps.

Between events nothing changes but the contexts, which all grow by tau tokens per step (tau = 1, or the
expected tokens of a speculative step). So a replica advances a whole span of steps at once — up to
the next request that finishes — with the span's step times read from the step table in one
vectorised call; an arrival that can join cuts the span short after the step in flight.

The running set needs no per-step update: with D decode steps done, a sequence that joined at step
D₀ with context s₀ has context s₀ + tau·(D − D₀), so the sum of contexts is Σ(s₀ − tau·D₀) + tau·B·D and
finishing times are kept in a heap of step numbers.
"""

from __future__ import annotations

import heapq

import numpy as np

from .steps import StepTimes

__all__ = ["Running", "Replica"]


class Running:
    """Sequences decoding: B of them, their context sum, and a heap of the step at which each finishes."""

    __slots__ = ("D", "B", "base", "_heap", "_n", "tau")

    def __init__(self, tau: float = 1.0):
        self.D, self.B, self.base, self.tau = 0, 0, 0.0, tau
        self._heap: list = []
        self._n = 0

    def add(self, r: int, ctx0: float, n_steps: int) -> None:
        c = ctx0 - self.tau * self.D
        heapq.heappush(self._heap, (self.D + n_steps, self._n, r, c))
        self._n += 1
        self.base += c
        self.B += 1

    @property
    def steps_to_next(self) -> int:
        return self._heap[0][0] - self.D

    @property
    def ctx_sum(self) -> float:
        return self.base + self.tau * self.B * self.D

    def mean_ctx(self, k: int) -> np.ndarray:
        """Mean context at each of the next k steps."""
        return self.base / self.B + self.tau * (self.D + np.arange(k))

    def advance(self, k: int) -> list[int]:
        """k steps done: the requests that finished."""
        self.D += k
        out = []
        while self._heap and self._heap[0][0] <= self.D:
            _, _, r, c = heapq.heappop(self._heap)
            self.base -= c
            self.B -= 1
            out.append(r)
        return out


class DecidesAtInstantEnd:
    """A scheduler that decides at the end of an instant, once every request arriving at it has arrived (so
    requests that arrive together are scheduled together, unless it was idle: policies.Continuous.arrive); `next` is its
    decision."""

    _waking = False

    def wake(self) -> None:
        if not self._waking:
            self._waking = True
            self.run.engine.at(self.run.engine.now, self._woken)

    def _woken(self) -> None:
        self._waking = False
        if self._free_to_decide():
            self.next()

    def _free_to_decide(self) -> bool:
        return True

    def next(self) -> None:  # what to do when free: each policy says
        raise NotImplementedError


class Replica(DecidesAtInstantEnd):
    """A replica that decodes: admission by seats and KV, spans of decode steps, and finishing requests."""

    def __init__(self, run, steps: StepTimes, kv_pool: float, kv_need: np.ndarray, max_batch: float,
                 ahead: int | None = None):
        self.run, self.steps, self.tau = run, steps, steps.tau
        self.R = Running(steps.tau)
        self.kv_pool, self.kv_need, self.kv_used = kv_pool, kv_need, 0.0
        self.max_batch = max_batch
        self.seats = 0  # running plus admitted and not yet decoding
        self.busy = self._waking = False
        self._token = 0
        self._span = None
        self.stalls: list[tuple[int, float]] = []  # prefill steps since the last decode step: (B decoding, t)
        self.ahead = ahead  # steps the scheduler plans ahead of the one in flight (None: it sees an arrival at once)
        self.n_started = 0  # steps started so far (a step's index is the count before it)
        self._cur = None  # the step(s) in flight: (start, cumulative end times, index of the first)
        self.ready: dict[int, int] = {}  # request -> the first step that can carry it

    # ---- when an arrival can ride ------------------------------------------------------------
    def _inflight(self) -> int:
        """Index of the step running now (at a boundary: the one starting)."""
        t0, cum, i0 = self._cur
        return i0 + int(np.searchsorted(cum, self.run.engine.now - t0, side="right"))

    def note_arrival(self, r: int) -> None:
        """The first step r can ride: the next to start when the replica is free; while a step runs, the one
        after it — and with a scheduler `ahead` steps ahead of the device, that many later. At a step boundary
        (the steps started have all ended) it rides the next."""
        i = self._inflight() if self.busy and self._cur else self.n_started
        self.ready[r] = i + 1 + (self.ahead or 0) if i < self.n_started else self.n_started

    def has_work(self) -> bool:
        """Steps would run without a new request (sequences decoding)."""
        return self.R.B > 0

    def is_ready(self, r: int) -> bool:
        return self.ready.get(r, 0) <= self.n_started or not self.has_work()

    def started(self, t0: float, cum: np.ndarray) -> None:
        self._cur = (t0, cum, self.n_started)
        self.n_started += len(cum)

    # ---- admission ---------------------------------------------------------------------------
    def can_admit(self, r: int) -> bool:
        return self.seats < self.max_batch and self.kv_used + self.kv_need[r] <= self.kv_pool

    def admit(self, r: int) -> None:
        self.seats += 1
        self.kv_used += self.kv_need[r]
        self.run.rec.kv(self.run.engine.now, self.kv_need[r])

    def join(self, r: int, first_step: int = 0) -> None:
        """r has its first token: it decodes its other osl − 1 (after `first_step` extra steps)."""
        wl = self.run.wl
        n = first_step + int(np.ceil((wl.osl[r] - 1) / self.tau - 1e-9))
        self.R.add(r, wl.isl[r] + 1, n)

    def first_token(self, r: int) -> None:
        """r's prompt is done and its first token out: it finishes, or decodes the rest."""
        self.run.rec.first(r, self.run.engine.now)
        if self.run.wl.osl[r] <= 1:
            self.finish(r)
        else:
            self.join(r)

    def finish(self, r: int) -> None:
        self.seats -= 1
        self.kv_used -= self.kv_need[r]
        self.run.rec.kv(self.run.engine.now, -self.kv_need[r])
        self.run.done(r)

    # ---- spans of decode steps ---------------------------------------------------------------
    def times(self, k: int) -> np.ndarray:
        return self.steps.decode(self.R.B, self.R.mean_ctx(k))

    def span(self, until: int | None = None) -> None:
        """Decode until the next request finishes, or up to step index `until` (where a waiting request can
        join); an arrival may cut it short: `cut`."""
        k = self.R.steps_to_next
        if until is not None and until > self.n_started:
            k = min(k, until - self.n_started)
        times = self.times(k)
        cum = np.cumsum(times)
        self._token += 1
        now = self.run.engine.now
        self._span = (now, times, cum)
        self.started(now, cum)
        self.busy = True
        self.run.engine.at(now + cum[-1], self._span_end, self._token, k)

    def cut(self, r: int | None = None) -> None:
        """End the span in flight where a waiting request can join: after its current step, or at the step
        request r is ready for."""
        if self._span is None:
            return
        t0, times, cum = self._span
        i0 = self._cur[2]
        k = (self.ready[r] - i0) if r is not None and r in self.ready else \
            int(np.searchsorted(cum, self.run.engine.now - t0, side="left")) + 1
        if k >= len(cum) or k < 1:
            return
        self._token += 1
        self.n_started = i0 + k
        self.run.engine.at(t0 + cum[k - 1], self._span_end, self._token, k)

    def _span_end(self, token: int, k: int) -> None:
        if token != self._token:
            return
        t0, times, _ = self._span
        self._span = None
        self.run.rec.decode_span(t0, times[:k], self.R.B, self.tau, self.stalls)
        self.stalls = []
        self.busy = False  # the step has ended: a request a finishing client sends now finds the replica free
        for r in self.R.advance(k):
            self.finish(r)
        if not self.busy:
            self.next()

    def _free_to_decide(self) -> bool:
        return not self.busy

