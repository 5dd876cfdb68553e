"""The event loop: callbacks run in time order from a heap; a per-run counter breaks ties first-in first-out.

Nothing here knows about requests or steps: policies schedule their own events (an arrival, the end
of a step or of a span of decode steps, a KV transfer) and may cancel one by bumping a token they
check when it fires. Time is in seconds from the start of the run.
"""

from __future__ import annotations

import heapq
from typing import Callable

__all__ = ["Engine"]


class Engine:
    """A discrete-event loop over a heap of (time, counter, callback, args)."""

    __slots__ = ("now", "events", "_heap", "_n")

    def __init__(self) -> None:
        self.now = 0.0
        self.events = 0
        self._heap: list = []
        self._n = 0

    def at(self, t: float, fn: Callable, *args) -> None:
        """Run fn(*args) at time t (never before now)."""
        heapq.heappush(self._heap, (max(t, self.now), self._n, fn, args))
        self._n += 1

    def run(self) -> None:
        heap, pop = self._heap, heapq.heappop
        while heap:
            t, _, fn, args = pop(heap)
            self.now = t
            self.events += 1
            fn(*args)
