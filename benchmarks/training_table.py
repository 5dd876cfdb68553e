"""Predict the TRN-* rows of the measurement table (MFU, GPU-hours, TFLOP/s per GPU) and print the errors.

    python benchmarks/training_table.py [--csv PATH] [--in-sample] [--carry hfu|mfu]

Held out (default): a row is never predicted with a prior from its own publication or of its own
model. In-sample: a run's own published MFU predicts its GPU-hours (MFU rows then predict
themselves and are skipped). `--carry` chooses what transfers between runs: the hardware-FLOP
utilisation (hfu, what `tokenmath train` assumes) or the MFU itself. The summary at the end compares
all four combinations, so the choice is visible.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from tokenmath.core.load import read_table
from tokenmath.training import validate_training

ROOT = Path(__file__).resolve().parents[1]
CANDIDATES = (ROOT / "validation" / "public_measurements.csv",
              ROOT.parent / "shared" / "validation" / "public_measurements.csv")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--csv", default=None, help="measurement table (default: validation/public_measurements.csv)")
    ap.add_argument("--in-sample", action="store_true", help="let a run's own published MFU predict it")
    ap.add_argument("--carry", default="hfu", choices=("hfu", "mfu"))
    args = ap.parse_args()
    path = Path(args.csv) if args.csv else next((p for p in CANDIDATES if p.exists()), None)
    if path is None:
        raise SystemExit("no measurement table found; pass --csv PATH")
    rows = read_table(path)
    t0 = time.perf_counter()
    res = validate_training(rows, held_out=not args.in_sample, carry=args.carry)
    dt = time.perf_counter() - t0
    print(f"{path}: {res['basis']}  ({len(res['rows'])} TRN rows in {dt:.2f} s)\n")
    print(f"{'id':8} {'metric':30} {'measured':>12} {'predicted':>12} {'error':>8}  {'prior':9} note")
    for p in res["rows"]:
        err = f"{100 * p['error']:+.1f}%" if p["error"] is not None else "—"
        extra = ""
        if "time_days_predicted" in p:
            extra = f"time {p['time_days_predicted']:.1f} d vs {p['time_days_measured']:.1f} d"
        print(f"{p['id']:8} {p['metric'][:30]:30} {_n(p['measured']):>12} {_n(p['predicted']):>12} {err:>8}  "
              f"{(p['prior_row'] or ''):9} {p.get('reason', extra)}")
    print()
    _summary("this run", res["summary"])
    print("\nall four combinations (median / p90 absolute error, n):")
    for held in (True, False):
        for carry in ("hfu", "mfu"):
            s = validate_training(rows, held_out=held, carry=carry)["summary"]
            parts = [f"{k} {_pct(s[k])}" for k in ("all", "mfu", "tflops_per_gpu", "gpu_hours")]
            print(f"  {'held-out ' if held else 'in-sample'} carry={carry}:  " + "  ".join(parts))


def _summary(label: str, s: dict) -> None:
    for k in ("all", "mfu", "tflops_per_gpu", "gpu_hours"):
        print(f"{label} {k:15} {_pct(s[k])}")
    print(f"{label} not predicted   {s['not_predicted']} rows")


def _pct(st: dict) -> str:
    if not st["n"]:
        return "n=0"
    return f"{100 * st['median_abs_error']:.1f}% / {100 * st['p90_abs_error']:.1f}% (n={st['n']})"


def _n(x) -> str:
    return "—" if x is None else (f"{x:,.4g}" if x < 1e5 else f"{x:.4g}")


if __name__ == "__main__":
    main()
