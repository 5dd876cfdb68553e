"""Derive the prediction intervals (catalog/intervals/serving.yaml) from `tokenmath validate` and print their coverage.

    python benchmarks/interval_table.py [--table CSV] [--out YAML] [--dry-run]

Runs the validation on the serving rows (TRT, MLP, BS1, VLLM) with each chip's own priors; then, for
the spec-sheet groups (chips without measured kernels, whose efficiencies are unknown), once more with
every other priors entry in the catalog in turn (catalog/priors/default.yaml and each chip's measured
kernels) applied to every row, to measure how far swapping priors moves a prediction. Derives the
split-conformal groups (tokenmath.measure.intervals), writes them, and prints per group n, bounds and
the out-of-sample coverage (each (model, hardware) cluster left out in turn).
"""

from __future__ import annotations

import argparse
import datetime
import math

from tokenmath.core.load import load_priors, names
from tokenmath.measure.intervals import (coverage, derive, intervals_yaml, prior_shifts, relabel, residual_rows,
                                         widen, write_intervals)
from tokenmath.measure.validate import SERVING_GROUPS, validate_table


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--table", default=None)
    ap.add_argument("--out", default=None)
    ap.add_argument("--dry-run", action="store_true", help="print, do not write")
    args = ap.parse_args()
    rep = validate_table(args.table, groups=list(SERVING_GROUPS))
    rows = residual_rows(rep.rows)
    others = []
    for name in names("priors"):
        pri = load_priors(name)
        if pri.formats is None:  # calibrated profiles measure one machine at a few formats: not a chip's guess
            others.append(residual_rows(validate_table(args.table, groups=list(SERVING_GROUPS), priors=pri).rows))
    shifts = prior_shifts(rows, others)
    table = derive(rows)
    spec_table = widen(derive(relabel(rows, "*")), shifts)
    cov = coverage(rows)
    cov_spec = _spec_coverage(rows, shifts)
    src = (f"tokenmath validate on {rep.table.rsplit('/', 1)[-1]} ({len(rows)} serving rows; spec-sheet groups: the "
           f"pooled groups widened by the shift of predicting with each other catalog priors entry), "
           f"{datetime.date.today().isoformat()}")
    print(f"{'group':32s} {'n':>4s} {'low':>7s} {'high':>7s}   (×predicted)")
    for k, b in list(table.items()) + [(k, v) for k, v in spec_table.items() if k.startswith("spec-sheet|")]:
        print(f"{k:32s} {b['n']:4d} {math.exp(b['lo']):7.2f} {math.exp(b['hi']):7.2f}")
    print(f"coverage of nominal {cov['nominal']:.0%} intervals, measured priors: {cov['left_out_cluster']:.1%} with "
          f"each of {cov['clusters']} (model, hardware) clusters left out; {cov['in_sample']:.1%} in sample; median "
          f"width ×{cov['median_width_factor']:.2f}")
    print(f"coverage of spec-sheet intervals on the same rows predicted with every other priors entry: "
          f"{cov_spec[0]:.1%} with each cluster left out (median width ×{cov_spec[1]:.2f})")
    if not args.dry_run:
        print("wrote", write_intervals(intervals_yaml(table, spec_table, src, cov), args.out))


def _spec_coverage(rows: list[dict], shifts: list[dict]) -> tuple[float, float]:
    """Swapped-priors residuals (r + s) inside spec-sheet intervals built without their own cluster."""
    by_id = {x["id"]: x for x in rows}
    inside, n, widths = 0, 0, []
    for c in {x["cluster"] for x in rows}:
        table = widen(derive(relabel([x for x in rows if x["cluster"] != c], "*")),
                      [x for x in shifts if x["cluster"] != c])
        for x in shifts:
            if x["cluster"] == c:
                g, p, q = by_id[x["id"]]["key"]
                b = next((table[k] for k in (f"spec-sheet|{p}|{q}", f"spec-sheet|*|{q}", f"spec-sheet|{p}|*",
                                             "spec-sheet|*|*") if k in table), None)
                if b is not None:
                    r = by_id[x["id"]]["r"] + x["r"]
                    inside += b["lo"] <= r <= b["hi"]
                    n += 1
                    widths.append(b["hi"] - b["lo"])
    return inside / max(n, 1), math.exp(sorted(widths)[len(widths) // 2]) if widths else float("nan")


if __name__ == "__main__":
    main()
