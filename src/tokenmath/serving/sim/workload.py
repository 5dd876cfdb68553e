"""Requests for the simulator: when they arrive and how long their prompts and outputs are.

Two arrival processes and three sources of lengths:

- closed loop at a concurrency C: C clients each send a request, wait for its last token, and send
  the next at once (zero think time; how `--max-concurrency` benchmarks drive a server);
- open loop at a rate λ: Poisson arrivals, gaps drawn from Exp(λ), seeded; with a cap C (vLLM's
  `--request-rate λ --max-concurrency C`) an arrival that finds C in flight waits for one to finish,
  and its times start when it is sent (the benchmark's semaphore is outside what it times);
- lengths fixed (ISL, OSL), drawn uniformly from [L·(1 − r), L·(1 + r)] (vLLM's random dataset,
  `--random-range-ratio r`), or read from a trace file of (arrival, isl, osl) rows, CSV with a
  header or JSON Lines;
- a prefix cache's hits: a share h of each prompt already in the cache (`with_prefix_hits`), its
  KV computed before, so only the rest is prefilled, after it (vLLM's automatic prefix caching skips
  the cached blocks; at least the prompt's last token is computed, for its logits).
"""

from __future__ import annotations

import csv
import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...core.errors import InputError
from ...core.units import fmt

__all__ = ["Workload", "closed_loop", "poisson", "read_trace", "check_lengths", "with_prefix_hits"]

_ISL = ("isl", "input_len", "input_tokens", "prompt_tokens", "input_length")
_OSL = ("osl", "output_len", "output_tokens", "completion_tokens", "output_length")
_ARRIVAL = ("arrival", "arrival_s", "timestamp", "time", "t")
_MAX_LEN = 1e8


@dataclass(frozen=True)
class Workload:
    """N requests: prompt and output lengths (tokens), and arrival times (s) or a closed-loop concurrency."""

    isl: np.ndarray
    osl: np.ndarray
    arrival_s: np.ndarray | None = None  # None: closed loop at `concurrency`
    concurrency: int | None = None
    source: str = ""
    cached: np.ndarray | None = None  # prompt tokens a prefix cache already holds (None: none)
    max_in_flight: int | None = None  # an open loop's cap: an arrival waits (untimed) while this many are in flight

    @property
    def n(self) -> int:
        return len(self.isl)

    @property
    def new_isl(self) -> np.ndarray:
        """Prompt tokens each request's prefill computes: the prompt less its cached prefix."""
        return self.isl if self.cached is None else self.isl - self.cached

    def describe(self) -> str:
        return f"{self.n:,} requests, mean ISL {self.isl.mean():,.0f} / OSL {self.osl.mean():,.0f} ({self.source})"


def check_lengths(isl, osl) -> None:
    for name, x in (("--isl", isl), ("--osl", osl)):
        a = np.asarray(x, dtype=float)
        if not np.all(np.isfinite(a)) or np.any(a < 1) or np.any(a != np.floor(a)):
            raise InputError(f"{name} must be whole numbers of tokens ≥ 1 (got {x if np.ndim(x) == 0 else 'a row below 1'})")
        if np.any(a > _MAX_LEN):
            raise InputError(f"{name} above 100M tokens is absurd")


def _lengths(n: int, isl: float, osl: float, range_ratio: float, rng: np.random.Generator):
    check_lengths(isl, osl)
    if not 0 <= range_ratio < 1:
        raise InputError(f"--range-ratio is a fraction in [0, 1) (got {range_ratio})")
    if range_ratio == 0:
        return np.full(n, int(isl), dtype=np.int64), np.full(n, int(osl), dtype=np.int64)

    def draw(L):
        lo, hi = max(1, int(np.floor(L * (1 - range_ratio)))), int(np.ceil(L * (1 + range_ratio)))
        return rng.integers(lo, hi + 1, n)

    return draw(isl), draw(osl)


def _count(n, name="--requests") -> int:
    if not n >= 1 or n != int(n):
        raise InputError(f"{name} must be a whole number ≥ 1 (got {n})")
    if n > 10_000_000:
        raise InputError(f"{name} {n} is absurd (more than 10 million requests)")
    return int(n)


def closed_loop(concurrency: int, n: int, isl: float, osl: float, range_ratio: float = 0.0,
                seed: int = 0) -> Workload:
    """C clients, each sending its next request the moment the previous one finishes."""
    if not concurrency >= 1 or concurrency != int(concurrency):
        raise InputError(f"--concurrency must be a whole number ≥ 1 (got {concurrency})")
    if concurrency > 10_000_000:
        raise InputError(f"--concurrency {concurrency} is absurd")
    n = _count(n)
    i, o = _lengths(n, isl, osl, range_ratio, np.random.default_rng(seed))
    return Workload(i, o, None, int(concurrency), _lengths_words(isl, osl, range_ratio))


def poisson(rate_per_s: float, n: int, isl: float, osl: float, range_ratio: float = 0.0, seed: int = 0) -> Workload:
    """Poisson arrivals at `rate_per_s` (gaps ~ Exp(rate)), seeded."""
    if not np.isfinite(rate_per_s) or not rate_per_s > 0:
        raise InputError(f"--rate must be a positive number of requests per second (got {rate_per_s})")
    n = _count(n)
    rng = np.random.default_rng(seed)
    arrive = np.cumsum(rng.exponential(1.0 / rate_per_s, n))
    i, o = _lengths(n, isl, osl, range_ratio, rng)
    return Workload(i, o, arrive - arrive[0], None, f"Poisson {rate_per_s:g}/s, " + _lengths_words(isl, osl, range_ratio))


def _lengths_words(isl: float, osl: float, range_ratio: float) -> str:
    """The lengths as the workload line prints them: counts in full ('ISL 1,000,000', not 1e+06)."""
    if range_ratio == 0:
        return f"fixed ISL {fmt(isl)} / OSL {fmt(osl)}"
    return f"uniform ±{range_ratio:g} around {fmt(isl)} / {fmt(osl)}"


def with_prefix_hits(wl: Workload, hit: float) -> Workload:
    """The workload with a share `hit` of every prompt served by a prefix cache: floor(hit · ISL) tokens cached, at
    most ISL − 1 (the last prompt token is computed, for the first output token's logits)."""
    if not 0 <= hit <= 1:
        raise InputError(f"a prefix-cache hit rate is a fraction in [0, 1] (got {hit})")
    if hit == 0:
        return wl
    cached = np.minimum(np.floor(hit * wl.isl), wl.isl - 1).astype(np.int64)
    return dataclasses.replace(wl, source=f"{wl.source}, {hit:.0%} of each prompt cached", cached=cached)


def _pick(row: dict, names: tuple[str, ...]):
    for k in names:
        if k in row and row[k] not in (None, ""):
            return row[k]
    return None


def read_trace(path: str | Path, concurrency: int | None = None, n: int | None = None) -> Workload:
    """A trace of (arrival, isl, osl) rows: CSV with a header, or JSON Lines (.jsonl / .json).

    Arrival times (s, any origin) drive an open loop; without them, or with `concurrency`, the
    lengths are replayed in a closed loop. `n` keeps the first n rows. Every bad row is refused
    with its line number.
    """
    p = Path(path)
    if not p.is_file():
        raise InputError(f"workload file {p} does not exist")
    text = p.read_text()
    if not text.strip():
        raise InputError(f"workload file {p} is empty")
    rows: list[tuple[int, dict]] = []
    if p.suffix.lower() in (".jsonl", ".json", ".ndjson"):
        for ln, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                raise InputError(f"{p}:{ln}: not a JSON object ({e.msg})") from None
            if not isinstance(obj, dict):
                raise InputError(f"{p}:{ln}: expected a JSON object with isl and osl")
            rows.append((ln, {str(k).lower(): v for k, v in obj.items()}))
    else:
        reader = csv.DictReader(text.splitlines())
        if not reader.fieldnames:
            raise InputError(f"{p} has no header row (expected columns arrival, isl, osl)")
        for ln, r in enumerate(reader, 2):
            rows.append((ln, {str(k).strip().lower(): (v.strip() if isinstance(v, str) else v)
                              for k, v in r.items() if k is not None}))
    if not rows:
        raise InputError(f"workload file {p} has no rows")
    rows = rows[:n] if n else rows
    isl, osl, arr = [], [], []
    for ln, r in rows:
        vals = []
        for names, what in ((_ISL, "isl"), (_OSL, "osl"), (_ARRIVAL, "arrival")):
            v = _pick(r, names)
            if v is None:
                if what == "arrival":
                    vals.append(None)
                    continue
                raise InputError(f"{p}:{ln}: no {what} (columns: {', '.join(names[:3])})")
            try:
                x = float(v)
            except (TypeError, ValueError):
                raise InputError(f"{p}:{ln}: {what} {v!r} is not a number") from None
            if not np.isfinite(x) or (what != "arrival" and (x < 1 or x != int(x) or x > _MAX_LEN)) or \
                    (what == "arrival" and x < 0):
                raise InputError(f"{p}:{ln}: {what} {v!r} is not " +
                                 ("a time ≥ 0 s" if what == "arrival" else "a whole number of tokens ≥ 1"))
            vals.append(x)
        isl.append(vals[0])
        osl.append(vals[1])
        arr.append(vals[2])
    have = [a is not None for a in arr]
    if any(have) and not all(have):
        raise InputError(f"{p}: some rows have an arrival time and some do not")
    i, o = np.asarray(isl, dtype=np.int64), np.asarray(osl, dtype=np.int64)
    if concurrency is not None or not all(have):
        if concurrency is None:
            raise InputError(f"{p} has no arrival times: give --concurrency to replay it in a closed loop")
        return Workload(i, o, None, int(concurrency), f"trace {p.name}, replayed closed-loop")
    a = np.asarray(arr, dtype=float)
    order = np.argsort(a, kind="stable")
    return Workload(i[order], o[order], a[order] - a[order][0], None, f"trace {p.name}")
