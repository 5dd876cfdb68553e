"""Predicted vs measured decode steps of several configs on one calibrated profile: per config and overall.

    python benchmarks/check_local_table.py PROFILE.yaml CONFIG[:PRECISION] ... [--batch 1,4,16,64]
        [--context 256,1024,2048] [--rounds 3] [--csv OUT.csv]

Prints one line per config (median, p90, max |error|, median signed error, share of points inside the
predicted interval) and the same over every point; --csv writes every row with its config. On a shared
machine run it alone (e.g. under `flock -x`): other work on the cores slows the measured steps.
"""

from __future__ import annotations

import argparse
import csv

import numpy as np

from tokenmath.core.load import load_model, load_system
from tokenmath.measure.checklocal import check_local, model_dtype


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("profile")
    ap.add_argument("configs", nargs="+", help="config.json[:fp32|bf16|fp16]")
    ap.add_argument("--batch", default="1,4,16,64")
    ap.add_argument("--context", default="256,1024,2048")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--csv")
    a = ap.parse_args()
    system = load_system(a.profile)
    B = [int(x) for x in a.batch.split(",")]
    S = [int(x) for x in a.context.split(",")]
    rows, errs = [], []
    print(f"{'config':34s} {'prec':5s} {'n':>3s} {'median':>8s} {'p90':>8s} {'max':>8s} {'bias':>8s} {'inside':>7s}")
    for spec in a.configs:
        path, _, prec = spec.partition(":")
        m = load_model(path)
        r = check_local(m, system, batches=B, contexts=S, dtype=prec or model_dtype(m), rounds=a.rounds)
        s = r.summary()
        print(f"{m.name:34s} {r.dtype:5s} {s['n']:3d} {s['median_abs_error']:8.1%} {s['p90_abs_error']:8.1%} "
              f"{s['max_abs_error']:8.1%} {s['median_error']:+8.1%} {s.get('inside_interval', float('nan')):7.0%}",
              flush=True)
        for p in r.points:
            rows.append({"config": m.name, "precision": r.dtype, **p.to_dict()})
            errs.append(p.error)
    e = np.abs(errs)
    print(f"{'all':34s} {'':5s} {len(e):3d} {np.median(e):8.1%} {np.percentile(e, 90):8.1%} {e.max():8.1%} "
          f"{np.median(errs):+8.1%}")
    if a.csv:
        with open(a.csv, "w", newline="", encoding="utf-8") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)


if __name__ == "__main__":
    main()
