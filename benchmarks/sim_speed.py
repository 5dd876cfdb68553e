"""How fast the simulator runs: requests and events per second, and the closed form's configurations per second.

    python benchmarks/sim_speed.py     # prints a table; 20,000 requests at concurrency 256 should take well under 1 min

Each row is one `simulate` call (step tables included, best of 3 runs); events are the engine's heap
pops (arrivals, prefill steps, spans of decode steps, transfers), steps every prefill/decode step
simulated. The last rows time `steady_state` on arrays of configurations (the fast path a deployment
search evaluates by the million).
"""

from __future__ import annotations

import time

import numpy as np

from tokenmath.core.load import load_model, load_system
from tokenmath.serving.sim import simulate, steady_state
from tokenmath.serving.speculative import Speculation

CASES = [  # (label, model, system, chips, simulate kwargs)
    ("continuous C=256, fixed 1k/1k", "llama-3.1-70b", "hgx-h100", 8, dict(concurrency=256, isl=1000, osl=1000)),
    ("continuous C=256, ±50 % 1k/1k", "llama-3.1-70b", "hgx-h100", 8,
     dict(concurrency=256, isl=1000, osl=1000, range_ratio=0.5)),
    ("continuous Poisson 5/s, ±50 %", "llama-3.1-70b", "hgx-h100", 8,
     dict(rate=5.0, isl=1000, osl=1000, range_ratio=0.5)),
    ("chunked C=256, ±50 % 1k/1k", "llama-3.1-70b", "hgx-h100", 8,
     dict(concurrency=256, isl=1000, osl=1000, range_ratio=0.5, policy="chunked")),
    ("disagg 8+8 C=256, ±50 %", "llama-3.1-70b", "hgx-h100", 8,
     dict(concurrency=256, isl=1000, osl=1000, range_ratio=0.5, policy="disagg", prefill_chips=8, decode_chips=8)),
    ("cadence C=256, ±50 %", "llama-3.1-70b", "hgx-h100", 8,
     dict(concurrency=256, isl=1000, osl=1000, range_ratio=0.5, policy="cadence")),
    ("DeepSeek-V3 MTP C=1024, ±50 %", "deepseek-v3", "gb200-nvl72", 16,
     dict(concurrency=1024, isl=2000, osl=500, range_ratio=0.5, spec=Speculation(K=1, alpha=0.85))),
]


def _best(fn, n=3):
    best, out = np.inf, None
    for _ in range(n):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main(requests: int = 20_000) -> None:
    print(f"{'simulation (' + format(requests, ',') + ' requests)':<34} {'seconds':>8} {'requests/s':>11} "
          f"{'events':>8} {'events/s':>10} {'steps/s':>11} {'tok/s/chip':>10}")
    for label, model, system, G, kw in CASES:
        m, s = load_model(model), load_system(system)
        dt, r = _best(lambda: simulate(m, s, G=G, requests=requests, **kw))
        print(f"{label:<34} {dt:>8.2f} {requests / dt:>11,.0f} {r.events:>8,} {r.events / dt:>10,.0f} "
              f"{r.steps / dt:>11,.0f} {r['tokens_per_s_per_chip']:>10,.0f}")
    m, s = load_model("llama-3.1-70b"), load_system("hgx-h100")
    print(f"\n{'closed form (steady_state)':<34} {'seconds':>8} {'configs/s':>11}")
    for n in (1_000, 1_000_000):
        C = np.geomspace(1, 4096, n // 100)[:, None]
        isl = np.geomspace(128, 32_000, 100)[None, :]
        dt, _ = _best(lambda: steady_state(m, s, G=8, concurrency=C, isl=isl, osl=1000))
        print(f"{format(C.size * isl.size, ',') + ' (C × ISL)':<34} {dt:>8.3f} {C.size * isl.size / dt:>11,.0f}")


if __name__ == "__main__":
    main()
