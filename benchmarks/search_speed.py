"""How fast `tokenmath search` evaluates configurations: in process, in a local process pool, on local Ray.

    python benchmarks/search_speed.py [--workers 2] [--no-ray]

One search of several catalog models on several systems (continuous and disagg, default grids, TTFT ≤
2 s and TPOT ≤ 50 ms), run by each runner. Prints, per runner: configurations, seconds in closed form
(the tasks, after the runner started), configurations per second, seconds in all (confirming
simulations included; Ray's start-up not), and whether `best` is the same as in process.
"""

from __future__ import annotations

import argparse
import time

from tokenmath.core.load import load_model, load_priors, load_system
from tokenmath.serving.search import SearchSpec, search
from tokenmath.serving.search_runners import LocalRunner, RayRunner
from tokenmath.serving.search_space import Target

MODELS = ("llama-3.1-8b", "llama-3.1-70b", "qwen3-32b", "qwen3-30b-a3b", "qwen3-235b-a22b", "gpt-oss-120b",
          "mixtral-8x7b", "deepseek-v3")
SYSTEMS = ("hgx-h100", "hgx-h200", "hgx-b200", "mi300x-8", "gb200-nvl72")


def spec() -> SearchSpec:
    targets = []
    for name in MODELS:
        m = load_model(name)
        for sname in SYSTEMS:
            s = load_system(sname)
            targets.append(Target(m, s, load_priors(s.chip.priors), m.weight_dtype, m.kv_dtype))
    return SearchSpec(tuple(targets), 1000, 1000, slo_ttft=2.0, slo_tpot=0.05)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--no-ray", action="store_true")
    a = ap.parse_args()
    sp = spec()
    runners = [("in process", lambda: LocalRunner(1)), (f"local pool, {a.workers} processes", lambda: LocalRunner(a.workers))]
    if not a.no_ray:
        runners.append((f"ray local, {a.workers} CPUs", lambda: RayRunner(None, a.workers)))
    rows, ref = [], None
    for label, make in runners:
        t0 = time.perf_counter()
        with make() as runner:
            t_start = time.perf_counter() - t0
            r = search(sp, runner)
        s = r.summary
        best = [r.row(i) for i in r.best]
        ref = ref if ref is not None else best
        rows.append((label, s["configurations"], s["evaluate_s"], s["configurations_per_s"], s["seconds"], t_start,
                     best == ref))
    print(f"{len(MODELS)} models × {len(SYSTEMS)} systems, ISL 1000 / OSL 1000, TTFT ≤ 2 s, TPOT ≤ 50 ms")
    print(f"{'runner':<26} {'configs':>9} {'closed form s':>14} {'configs/s':>11} {'all s':>7} {'start s':>8}  same best")
    for label, n, te, cps, tall, ts, same in rows:
        print(f"{label:<26} {n:>9,} {te:>14.2f} {cps:>11,.0f} {tall:>7.2f} {ts:>8.2f}  {'yes' if same else 'NO'}")


if __name__ == "__main__":
    main()
