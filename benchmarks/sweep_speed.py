"""How fast one vectorised call evaluates a grid of (batch, context) points.

    python benchmarks/sweep_speed.py            # prints a table; 1,000,000 points should take < 1 s
"""

from __future__ import annotations

import time

import numpy as np

from tokenmath.core.load import load_model, load_system
from tokenmath.core.roofline import step


def main() -> None:
    m, s = load_model("deepseek-v3"), load_system("gb200-nvl72")
    print(f"{'points':>12} {'phase':>8} {'basis':>6} {'seconds':>9} {'points/s':>12}")
    for n in (1_000, 1_000_000, 4_000_000):
        side = int(np.sqrt(n))
        B = np.linspace(1, 20_000, side)[:, None]
        S = np.linspace(0, 256_000, n // side)[None, :]
        for phase in ("decode", "prefill"):
            for basis in ("spec", "prior"):
                step(m, s, G=64, B=B[:2], S=S[:, :2], phase=phase, basis=basis)  # warm caches
                t0 = time.perf_counter()
                r = step(m, s, G=64, B=B, S=S, phase=phase, basis=basis)
                _ = r.bound
                dt = time.perf_counter() - t0
                print(f"{B.size * S.size:>12,} {phase:>8} {basis:>6} {dt:>9.3f} {B.size * S.size / dt:>12,.0f}")


if __name__ == "__main__":
    main()
