"""Host cost of one eager op right now: a tiny decode step (calibrate's) timed 200 times; prints µs per op.

Run before, between and after timed checks on a shared host to see whether its speed drifted.
"""
import sys
import time

import torch

from tokenmath.core import eager
from tokenmath.measure.calibrate import _tiny_models
from tokenmath.measure.checklocal import _DecodeModel

fmt = sys.argv[1] if len(sys.argv) > 1 else "bf16"
dev = "cuda" if torch.cuda.is_available() else "cpu"
m = _tiny_models(fmt)[0]
dm = _DecodeModel(m, fmt, dev)
cache, tok = dm.kv_cache(1, 16), torch.zeros(1, dtype=torch.long, device=dev)
ts = []
with torch.inference_mode():
    for _ in range(200):
        t0 = time.perf_counter()
        dm.step(tok, cache)
        if dev == "cuda":
            torch.cuda.synchronize()
        ts.append(time.perf_counter() - t0)
n = float(eager.eager_ops(m, 1, fmt).n_host)
ts.sort()
print(f"host probe: {ts[len(ts) // 2] / n * 1e6:.2f} µs per op (median), {ts[0] / n * 1e6:.2f} (best), {n:.0f} ops")
