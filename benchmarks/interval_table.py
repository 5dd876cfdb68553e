"""Derive the prediction intervals (catalog/intervals/serving.yaml) from `tokenmath validate` and print their coverage.

    python benchmarks/interval_table.py [--table CSV] [--out YAML] [--dry-run]

Runs the validation on the serving rows (TRT, MLP, BS1, VLLM) with each chip's own priors; then, for
the spec-sheet groups (chips without measured kernels, whose efficiencies are unknown), once more with
every other priors entry in the catalog in turn (catalog/priors/default.yaml and each chip's measured
kernels) applied to every row: a chip's efficiencies could be any of them. Derives the split-conformal
groups (tokenmath.measure.intervals), writes them, and prints per group n, bounds and the out-of-sample
coverage (each (model, hardware) cluster left out in turn).
"""

from __future__ import annotations

import argparse
import datetime
import math

from tokenmath.core.load import load_priors, names
from tokenmath.measure.intervals import (coverage, derive, intervals_yaml, relabel, residual_rows,
                                         write_intervals)
from tokenmath.measure.validate import SERVING_GROUPS, validate_table


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--table", default=None)
    ap.add_argument("--out", default=None)
    ap.add_argument("--dry-run", action="store_true", help="print, do not write")
    args = ap.parse_args()
    rep = validate_table(args.table, groups=list(SERVING_GROUPS))
    rows = residual_rows(rep.rows)
    spec = []
    for name in names("priors"):
        pri = load_priors(name)
        if pri.formats is None:  # calibrated profiles measure one machine at a few formats: not a chip's guess
            spec += residual_rows(validate_table(args.table, groups=list(SERVING_GROUPS), priors=pri).rows)
    table = derive(rows)
    spec_table = derive(relabel(spec, "spec-sheet"))
    cov = coverage(rows)
    cov_spec = coverage(relabel(spec, "spec-sheet"))
    src = (f"tokenmath validate on {rep.table.rsplit('/', 1)[-1]} ({len(rows)} serving rows; spec-sheet groups: the "
           f"same rows with each catalog priors entry in turn), {datetime.date.today().isoformat()}")
    print(f"{'group':32s} {'n':>4s} {'low':>7s} {'high':>7s}   (×predicted)")
    for k, b in list(table.items()) + [(k, v) for k, v in spec_table.items() if k.startswith("spec-sheet|")]:
        print(f"{k:32s} {b['n']:4d} {math.exp(b['lo']):7.2f} {math.exp(b['hi']):7.2f}")
    for name, c in (("measured priors", cov), ("spec-sheet priors", cov_spec)):
        print(f"coverage of nominal {c['nominal']:.0%} intervals, {name}: {c['left_out_cluster']:.1%} with each of "
              f"{c['clusters']} (model, hardware) clusters left out; {c['in_sample']:.1%} in sample; median width "
              f"×{c['median_width_factor']:.2f}")
    if not args.dry_run:
        print("wrote", write_intervals(intervals_yaml(table, spec_table, src, cov), args.out))


if __name__ == "__main__":
    main()
