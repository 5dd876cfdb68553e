"""A request-level simulator of one deployment: `simulate(...) -> SimResult`.

vidur's split, each part small: `engine` (the event loop), `workload` (arrivals and lengths),
`steps` (step times: `roofline.step`, tabulated), `replica` (a decoding replica's running set and
spans of decode steps), `policies` (continuous, chunked, disagg, cadence), `metrics` (what a run
measured), `run` (one run from end to end), `fastpath` (the closed-loop steady state in closed
form, vectorised: what the frontier and a deployment search evaluate by the million, confirmed here).
"""

from __future__ import annotations

from ..speculative import Speculation
from .engine import Engine
from .fastpath import SteadyState, steady_state
from .metrics import SimResult
from .policies import POLICIES
from .run import simulate
from .workload import Workload, closed_loop, poisson, read_trace

__all__ = ["simulate", "SimResult", "Workload", "closed_loop", "poisson", "read_trace", "steady_state", "SteadyState",
           "POLICIES", "Speculation", "Engine"]
