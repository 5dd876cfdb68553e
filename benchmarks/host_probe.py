"""Host cost of one eager op right now: calibrate's tiny decode step, timed as calibrate times it; prints µs per op.

    python benchmarks/host_probe.py [fmt]

Run before, between and after timed checks on a shared host to see whether its speed drifted (check-local
does this itself against a profile's `host_probe_s`).
"""
import sys

from tokenmath.core import eager
from tokenmath.measure.calibrate import _tiny_models, host_probe_time

fmt = sys.argv[1] if len(sys.argv) > 1 else "bf16"
t = host_probe_time(fmt)
n = float(eager.eager_ops(_tiny_models(fmt)[0], 1, fmt).n_host)
print(f"host probe: {t * 1e6:.1f} µs per tiny step, {t / n * 1e6:.2f} µs per op ({n:.0f} ops, {fmt})")
