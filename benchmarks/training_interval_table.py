"""Derive the 80 % interval of training predictions from the held-out TRN residuals; write catalog/intervals/training.yaml.

    python benchmarks/training_interval_table.py [--csv PATH] [--dry-run]

Each TRN row predicted held out (`tokenmath train` at the nearest published run's MFU prior, never its own
publication's or model's) leaves r = ln(measured / predicted) for a rate (MFU, TFLOP/s per chip) and
ln(predicted / measured) for a time (GPU-hours): r > 0 means the run went faster than predicted. Each (model,
hardware) cluster counts as one row (measure/intervals.py, the serving intervals' rules). The public table holds 10
clusters, 47 of 70 rows on A100: no generation reaches the conformal minimum of 9 clusters on its own, so every
generation's group borrows the others' and one pooled group `*|train|*` is all the data allow.
"""

from __future__ import annotations

import argparse
import math
import re
from pathlib import Path

from tokenmath.core.load import PACKAGE_CATALOG, read_table
from tokenmath.measure.intervals import coverage, derive, intervals_yaml, write_intervals
from tokenmath.training import validate_training

ROOT = Path(__file__).resolve().parents[1]


def residuals(rows) -> list[dict]:
    out = []
    for p in validate_training(rows, held_out=True, carry="hfu")["rows"]:
        if p["error"] is None or not p["predicted"] or p["predicted"] <= 0 or p["error"] <= -1:
            continue
        e = float(math.log1p(p["error"]))  # error = predicted / measured − 1
        matched = re.findall(r"matched (\S+)", " ".join(p["why"]))
        out.append({"key": ("*", "train", "*"), "cluster": "@".join(matched) or p["id"], "id": p["id"],
                    "r": -e if p["higher_is_better"] else e})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--csv", default=str(ROOT / "validation" / "public_measurements.csv"))
    ap.add_argument("--dry-run", action="store_true")
    args = ap.parse_args()
    rows = residuals(read_table(args.csv))
    cov = coverage(rows)
    table = {k: v for k, v in derive(rows).items() if k in ("*|train|*", "*|*|*")}
    print(f"{cov['n']} TRN residuals in {cov['clusters']} (model, hardware) clusters: left-out-cluster coverage "
          f"{cov['left_out_cluster']:.1%}, in sample {cov['in_sample']:.1%}, median width ×{cov['median_width_factor']:.2f}")
    for k, b in table.items():
        print(f"  {k}: ×{math.exp(b['lo']):.2f} – ×{math.exp(b['hi']):.2f} (n = {b['n']})")
    text = intervals_yaml(table, {}, f"tokenmath train held out on {Path(args.csv).name} ({cov['n']} TRN rows, "
                          f"{cov['clusters']} (model, hardware) clusters)", cov,
                          title="80 % prediction intervals of training rates, times and costs",
                          script="benchmarks/training_interval_table.py")
    if not args.dry_run:
        print(write_intervals(text, PACKAGE_CATALOG / "intervals" / "training.yaml"))


if __name__ == "__main__":
    main()
