"""What the web refuses that the CLI runs: simulations too long to answer a page in seconds.

`tokenmath simulate` and `tokenmath frontier` run as long as they are asked to; a web request must
answer in seconds, whoever sends it. The simulator's cost (serving/sim/) has three drivers, and each
gets a cap:

- requests: every request is a few events (arrival, admission, first token, finish);
- decode steps: a span of decode steps is one vectorised read of the step-time table, so its cost
  grows with its length; a run's decode steps are at most requests · OSL (all at batch 1);
- prompt chunks (chunked prefill): every mixed step is one event, about requests · ⌈ISL / chunk⌉.

The frontier's closed form is cheap per concurrency but one roofline call per configuration (chip
count × layout); its simulations are the answer's check (`confirm`: by default max(400, 12·C) ≤ 20,000
requests at concurrency C, so decode steps ≈ requests · OSL / C ≤ 400 · OSL) and every point of the
chunked policy. Measured 2026-11-24 on the 2-core dev machine, runs at the caps answer in 0.2–3 s
(20,000 requests × OSL 1,000 at concurrency 1: 2.5 s; 200,000 prompt chunks: 2.7 s; the frontier's
check at OSL 50,000: 1.3 s). A refusal is one line naming the cap, the value asked and the CLI command
that has no cap.
"""

from __future__ import annotations

import math

import numpy as np

from ..cli.grid_args import parse_grid, parse_list
from ..core.errors import InputError
from ..core.load import load_engine, load_system
from ..core.records import ENGINES
from ..serving.frontier import replica_sizes

__all__ = ["MAX_REQUESTS", "MAX_DECODE_STEPS", "MAX_PROMPT_CHUNKS", "MAX_CONFIGURATIONS", "MAX_POINTS",
           "check_simulate", "check_frontier"]

MAX_REQUESTS = 20_000
MAX_DECODE_STEPS = 20_000_000
MAX_PROMPT_CHUNKS = 200_000
MAX_CONFIGURATIONS = 100
MAX_POINTS = 10_000
_CONFIRM_REQUESTS_PER_USER = 400  # serving/frontier.py: n = max(400, 12·C) ≤ 20,000, so n / C ≤ 400


def _refuse(what: str, cap: str, got: str, command: str) -> InputError:
    return InputError(f"the web answers in seconds: {what} at most {cap} (got {got}); "
                      f"`tokenmath {command}` on the command line has no such cap")


def _simulations(command: str, requests: float, isl: float, osl: float, chunk: float | None) -> None:
    """The caps on one request's simulations: `requests` in all, their decode steps and prompt chunks."""
    if requests > MAX_REQUESTS:
        raise _refuse("its simulations run", f"{MAX_REQUESTS:,} requests in all", f"{requests:,.0f}", command)
    if requests * osl > MAX_DECODE_STEPS:
        raise _refuse("requests × OSL (decode steps at batch 1) is", f"{MAX_DECODE_STEPS:,}",
                      f"{requests:,.0f} × {osl:,.0f}", command)
    if chunk and requests * math.ceil(isl / chunk) > MAX_PROMPT_CHUNKS:
        raise _refuse("chunked prefill's requests × ⌈ISL / chunk⌉ is", f"{MAX_PROMPT_CHUNKS:,} prompt chunks",
                      f"{requests:,.0f} × ⌈{isl:,.0f} / {chunk:,.0f}⌉", command)


def _positive(*xs) -> bool:
    """Whether every value is a positive finite number (otherwise the command's own check answers)."""
    return all(isinstance(x, (int, float)) and math.isfinite(x) and x > 0 for x in xs)


def _engine(kw: dict) -> dict | None:
    """The scheduler settings the query names (None for a name that is no engine: the command refuses it)."""
    name = kw.get("engine")
    return load_engine(name or "default") if name is None or name in ENGINES else None


def check_simulate(kw: dict) -> None:
    """`/api/simulate`: its requests, decode steps and prompt chunks within the caps."""
    n, isl, osl, r = kw.get("requests", 1000), kw.get("isl"), kw.get("osl"), kw.get("range_ratio") or 0.0
    if not _positive(n, isl, osl) or not 0 <= r <= 1:
        return
    engine = _engine(kw)
    if engine is None:
        return
    policy = kw.get("policy") or engine["policy"]  # simulate's default: the engine's (cli/serving_args.engine_policy)
    chunk = (kw.get("chunk") or float(engine["chunk_tokens"])) if policy == "chunked" else None
    if chunk is not None and not _positive(chunk):
        return
    _simulations("simulate", n, isl * (1 + r), osl * (1 + r), chunk)


def _default_replicas(kw: dict) -> list:
    """The replica sizes a frontier sweeps when none are given (serving/frontier.py replica_sizes); one where the
    system cannot be read (the command refuses it with its own line)."""
    try:
        return replica_sizes(load_system(kw["on"]), kw.get("policy") or "continuous")
    except (InputError, KeyError, TypeError, OSError):
        return [None]


def check_frontier(kw: dict) -> None:
    """`/api/frontier`: its configurations and points, and the simulations it would run, within the caps."""
    try:
        chips = parse_grid(kw["chips"], "--chips") if kw.get("chips") else _default_replicas(kw)
        layouts = parse_list(kw.get("layout") or "all") or ["all"]
        C = parse_grid(kw["concurrency"], "--concurrency") if kw.get("concurrency") else None
    except InputError:
        return  # the command refuses it with its own line
    n_layouts = sum(3 if k == "all" else 1 for k in set(layouts))  # 'all': up to three layouts (frontier._layouts)
    configs = len(chips) * n_layouts
    if configs > MAX_CONFIGURATIONS:
        raise _refuse("chip counts × layouts is", f"{MAX_CONFIGURATIONS}", f"{len(chips)} × {n_layouts}", "frontier")
    points = configs * (len(set(C)) if C is not None else 40)
    if points > MAX_POINTS:
        raise _refuse("chip counts × layouts × concurrencies is", f"{MAX_POINTS:,} points", f"{points:,}", "frontier")
    isl, osl, n = kw.get("isl"), kw.get("osl"), kw.get("requests")
    if not _positive(isl, osl) or (n is not None and not _positive(n)):
        return
    engine = _engine(kw)
    if engine is None:
        return
    if kw.get("policy") == "chunked":  # serving/frontier.py simulates every point: its grid and requests per point
        if C is None:
            cap = kw.get("max_batch") or float(engine["max_batch"])
            C = np.unique(np.round(np.geomspace(1, max(cap, 1), 10))) if _positive(cap) else []
        each = [n or min(4000, max(200, 8 * int(c))) for c in set(C)]
        _simulations("frontier", configs * sum(each), isl, osl, float(engine["chunk_tokens"]))
    elif kw.get("confirm", True) and (kw.get("at_user_speed") is not None or kw.get("at_ttft") is not None):
        if n is not None:
            _simulations("frontier", n, isl, osl, None)
        elif _CONFIRM_REQUESTS_PER_USER * osl > MAX_DECODE_STEPS:
            raise _refuse("the answer's check (confirm) simulates up to 400 · OSL decode steps,",
                          f"{MAX_DECODE_STEPS:,}", f"400 × {osl:,.0f}; confirm=false skips it", "frontier")
