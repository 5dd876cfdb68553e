"""Scheduling policies, one short class each: what a replica does when it is free and when a request arrives.

- continuous: continuous batching with prefill first (vLLM without chunking, Orca's iteration-level
  scheduling): waiting requests that fit (batch cap, KV) are prefilled together in one step, up to
  the engine's token budget, while the running sequences wait; otherwise every running sequence
  decodes one token per step.
- chunked: chunked prefill (Sarathi-Serve; vLLM's default): every step carries all running decodes
  plus prompt chunks up to a token budget `chunk`, so a prefill never stalls the decodes; a mixed
  step is one roofline.step (steps.StepTimes.mixed).
- disagg: prefill and decode on separate pools (DistServe, Splitwise; serving/disagg.py): the
  prefill pool batches prompts, the KV moves over the link tier, and the decode pool admits it by
  KV and never stalls for a prefill; the first token reaches the client when the decode worker
  takes the request at its next step boundary, after the KV has landed. Each pool may hold several
  workers (xPyD: x prefill workers sharing one queue, y decode workers; a request goes to the decode
  worker with the fewest seats taken).
- cadence: the lecture's fixed cadence (serving/batching.py): a train of `seats` departs every
  t_step whether full or not; a request boards the next departure and its first token arrives one
  step later, so it waits at most 2 · t_step.

A prompt whose prefix a cache holds (workload.with_prefix_hits) prefills only its other tokens, after the cached
ones (chunked: its chunks start there; continuous and disagg: a step of such pieces, steps.StepTimes.prompts);
its KV is reserved whole, as if no other request shared the cached blocks.

Admission is first come, first served and charges a request's KV when it is admitted: its whole KV (prompt plus
output), so a running sequence is never evicted (TensorRT-LLM's guaranteed-no-evict policy), or for an engine that
allocates as tokens come (vLLM, SGLang) its mean hold in a full pool (fastpath.held_kv_bytes); disagg admits on the
decode pool before the prefill. A free replica decides at the end of the instant, so requests that arrive together
are scheduled together — except at an idle one (nothing running, waiting or being prefilled): an idle engine starts
a step on the first request it receives, and requests sent with it reach it after, one at a time, and ride a later
step. vLLM's engine core blocks on its input queue while it has no request, then drains only what is queued and
steps (vllm 0.11.0 v1/engine/core.py `_process_input_queue`); SGLang's scheduler polls without blocking and
schedules what has arrived (sglang 0.5.9 srt/managers/scheduler.py `recv_requests`, zmq.NOBLOCK, in
`event_loop_overlap`); and each frontend tokenises and forwards a request on its own (vLLM's AsyncLLM.add_request,
SGLang's TokenizerManager `_tokenize_one_request` / `_send_one_request`; its dynamic batch tokenizer is off by
default), so C clients started at once reach the engine C times, not once. TensorRT-LLM's executor is read the same
way (estimate: its request queue was not checked against a wheel). A closed loop of identical clients therefore
starts as one prompt and a wave of C − 1 behind it, not one wave of C; the offset holds while they run, and a
wave that finishes in one step leaves the replica idle again (the clients' next requests, sent at a step's end,
find it free: `busy` is cleared before the finished requests are retired).
"""

from __future__ import annotations

from collections import deque

import numpy as np

from .replica import DecidesAtInstantEnd, Replica
from .steps import StepTimes

__all__ = ["Continuous", "Chunked", "Disagg", "Cadence", "POLICIES"]

POLICIES = ("continuous", "chunked", "disagg", "cadence")


class Continuous(Replica):
    """Prefill first: a free replica prefills every waiting request that fits, else decodes a span."""

    def __init__(self, run, steps: StepTimes, kv_pool, kv_need, max_batch, budget: float,
                 ahead: int | None = None):
        super().__init__(run, steps, kv_pool, kv_need, max_batch, ahead)
        self.budget = budget
        self.queue: deque[int] = deque()

    def arrive(self, r: int) -> None:
        idle = not self.busy and not self.has_work() and not self.queue
        self.queue.append(r)
        self.note_arrival(r)
        if idle:  # an idle engine starts on the first request it receives (module docstring)
            self.next()
        elif not self.busy:
            self.wake()
        elif self.queue[0] == r and self.can_admit(r):
            self.cut(r if self.ahead is not None else None)

    def _head_ready(self) -> bool:
        return bool(self.queue) and self.can_admit(self.queue[0]) and self.is_ready(self.queue[0])

    def _until(self) -> int | None:
        """The step a waiting request can join (a span of decodes ends there)."""
        return self.ready.get(self.queue[0]) if self.queue and self.can_admit(self.queue[0]) else None

    def next(self) -> None:
        isl, batch, tokens = self.run.wl.new_isl, [], 0  # (the tokens computed: a cached prefix is not)
        while self._head_ready() and (not batch or tokens + isl[self.queue[0]] <= self.budget):
            r = self.queue.popleft()
            self.admit(r)
            batch.append(r)
            tokens += isl[r]
        if batch:
            t = self.steps.prompts(batch, self.run.wl)
            if self.R.B:
                self.stalls.append((self.R.B, t))
            now = self.run.engine.now
            self.run.rec.prefill_step(now, self.R.B)
            self.started(now, np.array([t]))
            self.busy = True
            self.run.engine.at(now + t, self._prefilled, batch)
        elif self.R.B:
            self.span(self._until())

    def _prefilled(self, batch: list[int]) -> None:
        self.busy = False
        for r in batch:
            self.first_token(r)
        if not self.busy:
            self.next()


class Chunked(Continuous):
    """Every step carries the running decodes plus prompt chunks up to `budget` tokens in all."""

    def __init__(self, run, steps: StepTimes, kv_pool, kv_need, max_batch, budget: float,
                 ahead: int | None = None):
        super().__init__(run, steps, kv_pool, kv_need, max_batch, budget, ahead)
        self.filling: deque[list] = deque()  # [request, prompt tokens done]
        self.per_dec = steps.spec.K + 1 if steps.spec else 1

    def has_work(self) -> bool:
        return self.R.B > 0 or bool(self.filling)

    def next(self) -> None:
        cached = self.run.wl.cached
        while self._head_ready():
            r = self.queue.popleft()
            self.admit(r)
            self.filling.append([r, 0 if cached is None else int(cached[r])])  # a cached prefix is done already
        room = self.budget - self.R.B * self.per_dec
        if self.filling and room > 0:
            isl, chunks = self.run.wl.isl, []
            for entry in self.filling:
                c = min(isl[entry[0]] - entry[1], room)
                chunks.append((c, entry))
                room -= c
                if room <= 0:
                    break
            t = self.steps.mixed(self.R.B, self.R.ctx_sum, [(c, e[1]) for c, e in chunks])
            now = self.run.engine.now
            self.started(now, np.array([t]))
            if self.R.B:
                self.run.rec.decode_span(now, np.array([t]), self.R.B, self.tau)
            else:
                self.run.rec.prefill_step(now)
            self.busy = True
            self.run.engine.at(now + t, self._stepped, chunks)
        elif self.R.B:
            self.span(self._until())

    def _stepped(self, chunks: list) -> None:
        self.busy = False
        if self.R.B:
            for r in self.R.advance(1):
                self.finish(r)
        for c, entry in chunks:
            entry[1] += c
            r = entry[0]
            if entry[1] >= self.run.wl.isl[r]:
                self.filling.remove(entry)
                self.first_token(r)
        if not self.busy:
            self.next()


class Cadence(Replica):
    """A train of `max_batch` seats departs every `period` s; boarders get their first token one step later."""

    def __init__(self, run, steps: StepTimes, kv_pool, kv_need, max_batch, period: float):
        super().__init__(run, steps, kv_pool, kv_need, max_batch)
        self.period = period
        self.queue: deque[int] = deque()
        self.ticking = False

    def times(self, k: int) -> np.ndarray:
        return np.full(k, self.period)

    def arrive(self, r: int) -> None:
        self.queue.append(r)
        if not self.ticking:
            self.ticking = True
            now = self.run.engine.now
            self.run.engine.at(np.ceil(now / self.period - 1e-12) * self.period, self.next)
        elif self.queue[0] == r and self.can_admit(r):
            self.cut()

    def next(self) -> None:  # a departure
        now = self.run.engine.now
        while self.queue and self.can_admit(self.queue[0]):
            r = self.queue.popleft()
            self.admit(r)
            self.run.rec.first(r, now + self.period)  # the prompt rides this train (the lecture's abstraction)
            self.join(r, first_step=1)
        if self.R.B:
            self.span()
        else:
            self.ticking = False


class _DecodePool(Replica):
    """One decode worker of a disaggregated deployment: a request whose KV has landed joins at the worker's next step
    boundary, and its first token (sampled by the prefill worker, sent with the KV) reaches the client then: the
    client's stream is the decode worker's (SGLang 0.5.23 disaggregation/decode.py: pop_transferred moves a request
    whose KV arrived to the waiting queue once per scheduler iteration, and get_next_disagg_decode_batch_to_run streams
    its first token before the decode batch that carries it is launched; TensorRT-LLM's PyTorch executor answers a
    generation-only request's first token when it first schedules it, as remembered). Its TTFT therefore holds the
    KV transfer and the wait for the step in flight; it used to end with the prefill."""

    def __init__(self, run, steps, kv_pool, kv_need, max_batch, front):
        super().__init__(run, steps, kv_pool, kv_need, max_batch)
        self.queue: deque[int] = deque()
        self.front = front

    def finish(self, r: int) -> None:
        super().finish(r)
        if self.front.free and self.front.queue:  # a seat came free: an idle prefill worker may go on
            self.front.wake()

    def arrive(self, r: int) -> None:
        self.queue.append(r)
        if not self.busy:
            self.wake()
        else:
            self.cut()

    def next(self) -> None:
        joined = list(self.queue)
        self.queue.clear()
        for r in joined:
            self.join(r)
        if self.R.B:
            self.span()
            for r in joined:  # the client's first token leaves through this worker, when it schedules r
                self.run.rec.first(r, self.run.engine.now)


class Disagg(DecidesAtInstantEnd):
    """`n_prefill` prefill workers that batch prompts up to `budget` tokens each from one queue, a KV transfer, and
    `n_decode` decode workers (xPyD). A request is admitted, its KV reserved, on the decode worker with the fewest
    seats taken that can hold it (the first of equals), before its prefill. The prefill workers keep the instant's
    batch (requests that arrive together are prefilled together), not an idle engine's lone first prompt (Continuous):
    tried in round 20, it took the disaggregated silicon TTFT, already too fast (median e −38 %), to −43 %."""

    def __init__(self, run, prefill_steps: StepTimes, decode_steps: StepTimes, kv_pool, kv_need, max_batch,
                 budget: float, transfer_s: np.ndarray, n_prefill: int = 1, n_decode: int = 1):
        self.run, self.steps, self.budget, self.transfer_s = run, prefill_steps, budget, transfer_s
        self.decodes = [_DecodePool(run, decode_steps, kv_pool, kv_need, max_batch, self) for _ in range(n_decode)]
        self.queue: deque[int] = deque()
        self.free = n_prefill  # prefill workers idle

    def arrive(self, r: int) -> None:
        self.queue.append(r)
        if self.free:
            self.wake()

    def _decode_for(self, r: int) -> _DecodePool | None:
        fits = [d for d in self.decodes if d.can_admit(r)]
        return min(fits, key=lambda d: d.seats) if fits else None

    def next(self) -> None:
        isl = self.run.wl.new_isl
        while self.free and self.queue:
            batch, tokens = [], 0
            while self.queue and (not batch or tokens + isl[self.queue[0]] <= self.budget):
                d = self._decode_for(self.queue[0])
                if d is None:
                    break
                r = self.queue.popleft()
                d.admit(r)
                batch.append((r, d))
                tokens += isl[r]
            if not batch:
                return
            now = self.run.engine.now
            self.run.rec.prefill_step(now)
            self.free -= 1
            self.run.engine.at(now + self.steps.prompts([r for r, _ in batch], self.run.wl), self._prefilled, batch)

    def _prefilled(self, batch: list) -> None:
        now = self.run.engine.now
        for r, d in batch:
            if self.run.wl.osl[r] <= 1:  # the prefill worker's one token is the whole answer
                self.run.rec.first(r, now)
                d.finish(r)
            else:
                self.run.engine.at(now + self.transfer_s[r], self._delivered, r, d)
        self.free += 1
        self.next()

    def _delivered(self, r: int, d: _DecodePool) -> None:
        """r's KV reached its decode worker, which streams the answer from its first token on (SGLang's and vLLM's
        P/D, Dynamo: the client reads the decode worker); the token leaves when the worker takes r at its next step
        boundary (_DecodePool.next)."""
        d.arrive(r)
