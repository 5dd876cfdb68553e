"""Predict again the rows of a check-local table (measured elsewhere, e.g. on a GPU) with this code and a profile.

    python benchmarks/repredict.py PROFILE.yaml TABLE.csv [--out NEW.csv]

TABLE.csv has the columns `check-local --csv` writes, plus `config` (a config.json path or catalog name) and
`precision` where it covers several models. The measured times are kept; the predictions, errors and
intervals are recomputed (roofline.step is pure arithmetic: no device is needed). Prints per config and
overall median / p90 |error|.
"""

from __future__ import annotations

import argparse
import csv
import math

import numpy as np

from tokenmath.core.load import load_model, load_system
from tokenmath.core.roofline import step
from tokenmath.measure.checklocal import as_built


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("profile")
    ap.add_argument("table")
    ap.add_argument("--out")
    ap.add_argument("--config", help="config for a table without a config column")
    ap.add_argument("--precision", help="precision for a table without a precision column")
    a = ap.parse_args()
    system = load_system(a.profile)
    rows = list(csv.DictReader(open(a.table, encoding="utf-8")))
    by: dict = {}
    for r in rows:
        cfg, prec = r.get("config") or a.config, r.get("precision") or a.precision
        m = as_built(load_model(cfg))  # the stack check-local measured: its own op inventory
        B, S, meas = int(r["batch"]), int(r["context"]), float(r["measured_s"])
        st = step(m, system, G=1, B=B, S=S, phase="decode", precision=prec, kv_dtype=prec)
        p = float(st.v("t_step"))
        lo, hi = st.extras.get("interval", (math.nan, math.nan))
        r.update(predicted_s=p, error=p / meas - 1, abs_error=abs(p / meas - 1), bound=str(st.bound),
                 predicted_low_s=float(lo), predicted_high_s=float(hi), inside_interval=bool(lo <= meas <= hi))
        by.setdefault((cfg, prec), []).append(p / meas - 1)
    allv = []
    for (cfg, prec), e in by.items():
        allv += e
        ea = np.abs(e)
        print(f"{cfg:48s} {prec:5s} n {len(e):3d}  median {np.median(ea):6.1%}  p90 {np.percentile(ea, 90):6.1%}  "
              f"bias {np.median(e):+6.1%}")
    ea = np.abs(allv)
    print(f"{'all':48s} {'':5s} n {len(allv):3d}  median {np.median(ea):6.1%}  p90 {np.percentile(ea, 90):6.1%}  "
          f"bias {np.median(allv):+6.1%}")
    if a.out:
        with open(a.out, "w", newline="", encoding="utf-8") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)


if __name__ == "__main__":
    main()
