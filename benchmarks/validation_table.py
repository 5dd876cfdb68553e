"""Per-group validation error of tokenmath against the published measurements, and how long it takes.

    python benchmarks/validation_table.py [--basis prior|spec] [--table CSV]

Prints, per id prefix (TRT, MLP, BS1, VLLM, UB, TRN), the rows predicted, the median and 90th-percentile
absolute error, the median signed error, and the rows not expressible; then the end-to-end serving
groups together (issue 11's target: median ≤ 10 %, p90 ≤ 25 %), and the out-of-sample coverage of
the 80 % prediction intervals (target 70-95 %).
"""

from __future__ import annotations

import argparse
import time

from tokenmath.measure.validate import SERVING_GROUPS, validate_table


def _f(x) -> str:
    return "   —  " if x is None else f"{x:6.1%}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--basis", default="prior", choices=("prior", "spec"))
    ap.add_argument("--table", default=None)
    args = ap.parse_args()
    t0 = time.perf_counter()
    rep = validate_table(args.table, basis=args.basis)
    dt = time.perf_counter() - t0
    s = rep.summary()
    print(f"{rep.table} — {args.basis} basis — {len(rep.rows)} rows predicted, {len(rep.unexpressed)} not "
          f"expressible, {dt:.2f} s")
    print(f"{'group':10s} {'rows':>5s} {'median|e|':>10s} {'p90|e|':>8s} {'median e':>9s} {'not expr.':>10s}")
    for g, v in s["groups"].items():
        print(f"{g:10s} {v['n']:5d} {_f(v['median_abs_error']):>10s} {_f(v['p90_abs_error']):>8s} "
              f"{_f(v['median_error']):>9s} {v['unexpressed']:10d}")
    sv = s["serving"]
    print(f"{'serving':10s} {sv['n']:5d} {_f(sv['median_abs_error']):>10s} {_f(sv['p90_abs_error']):>8s} "
          f"{_f(sv['median_error']):>9s}   ({', '.join(SERVING_GROUPS)})")
    print(f"{'all':10s} {s['n']:5d} {_f(s['median_abs_error']):>10s} {_f(s['p90_abs_error']):>8s} "
          f"{_f(s['median_error']):>9s} {s['unexpressed']:10d}")
    print(f"spec-bound violations: {s['bound_violations']}")
    if s.get("intervals"):
        c = s["intervals"]
        print(f"80 % intervals cover {c['left_out_cluster']:.1%} of {c['n']} serving rows with each of {c['clusters']} "
              f"(model, hardware) clusters left out ({c['in_sample']:.1%} in sample)")


if __name__ == "__main__":
    main()
