"""Derive the prediction intervals (catalog/intervals/serving.yaml) from `tokenmath validate` and print their coverage.

    python benchmarks/interval_table.py [--table CSV] [--out YAML] [--dry-run] [--silicon N]

With aiconfigurator-core installed, the residuals of NVIDIA's measured TTFT/TPOT runs under load
(benchmarks/silicon_table.py, N rows per configuration; 0: none; aggregated and disaggregated deployments)
join the public table's, so the groups of rows under load (phases 'ttft', 'decode' at a concurrency) rest on
measurements of their own kind.

Runs the validation on the serving rows (TRT, MLP, BS1, VLLM) with each chip's own priors; then, for
the spec-sheet groups (chips without measured kernels, whose efficiencies are unknown), once more with
every other priors entry in the catalog in turn (catalog/priors/default.yaml and each chip's measured
kernels) applied to every row, to measure how far swapping priors moves a prediction. Derives the
split-conformal groups (tokenmath.measure.intervals), writes them, and prints per group n, bounds and
the out-of-sample coverage (each (model, hardware) cluster left out in turn), and each table's coverage by
intervals derived from the other table alone (what an unseen table would see).
"""

from __future__ import annotations

import argparse
import csv
import datetime
import importlib.util
import math
import tempfile
from pathlib import Path

from tokenmath.core.load import load_priors, names
from tokenmath.measure.intervals import (_lookup, coverage, derive, intervals_yaml, prior_shifts, relabel,
                                         residual_rows, widen, write_intervals)
from tokenmath.measure.validate import COLUMNS, SERVING_GROUPS, validate_table


def _silicon_residuals(per_config: int) -> list[dict]:
    """Residual rows of NVIDIA's measured TTFT/TPOT runs (benchmarks/silicon_table.py: aggregated and prefill/decode
    disaggregated deployments), if aiconfigurator-core is installed: rows under load, whose groups (phase 'ttft', 'decode', 'run' at a concurrency) the public
    table barely populates."""
    try:
        import aiconfigurator_core  # noqa: F401
    except ImportError:
        return []
    spec = importlib.util.spec_from_file_location("silicon_table", Path(__file__).with_name("silicon_table.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "silicon.csv"
        with path.open("w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=COLUMNS)
            w.writeheader()
            w.writerows(mod.silicon_rows(per_config) + mod.silicon_rows(per_config, mode="disagg"))
        # a measurement that beats its spec bound (e.g. concurrency 416 at 15,000-token prompts, TTFT 0.7 s:
        # more prefill FLOP/s than the chips have) was not taken in the steady state the row names: left out
        return residual_rows([p for p in validate_table(path).rows if p.bound_ok is not False])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--table", default=None)
    ap.add_argument("--out", default=None)
    ap.add_argument("--dry-run", action="store_true", help="print, do not write")
    ap.add_argument("--silicon", type=int, default=2, help="rows per configuration of the silicon sample to pool "
                    "(benchmarks/silicon_table.py; 0: the public table alone)")
    args = ap.parse_args()
    rep = validate_table(args.table, groups=list(SERVING_GROUPS))
    public = residual_rows(rep.rows)
    silicon = _silicon_residuals(args.silicon) if args.silicon else []
    rows = public + silicon
    others = []
    for name in names("priors"):
        pri = load_priors(name)
        if pri.formats is None:  # calibrated profiles measure one machine at a few formats: not a chip's guess
            others.append(residual_rows(validate_table(args.table, groups=list(SERVING_GROUPS), priors=pri).rows))
    shifts = prior_shifts(rows, others)
    measured = [x for x in rows if x["key"][0] != "spec-sheet"]  # rows of chips with measured kernels
    table = derive(measured)
    # every residual pools into the spec-sheet groups, never narrower than a measured generation's
    spec_table = widen(derive(relabel(rows, "*")), shifts, measured=table)
    cov = coverage(measured)
    if silicon:  # each table's rows, with every (model, hardware) cluster of both left out in turn
        ids = {x["id"] for x in silicon}
        pub = [x for x in measured if x["id"] not in ids]
        sil = [x for x in measured if x["id"] in ids]
        for name, part in (("public", pub), ("silicon", sil)):
            c = _coverage_of(measured, part)
            print(f"  {name}: {c:.1%} of {len(part)} rows inside their left-out-cluster interval")
        # a table the intervals never saw: each table's rows inside intervals derived from the other table alone
        for name, train, test in (("public", sil, pub), ("silicon", pub, sil)):
            c, n = _cross_coverage(train, test)
            print(f"  {name}: {c:.1%} of {n} rows inside intervals derived from the other table alone")
    cov_spec = _spec_coverage(rows, shifts, measured)
    src = (f"tokenmath validate on {rep.table.rsplit('/', 1)[-1]} ({len(public)} serving rows)"
           + (f" and aiconfigurator-core's silicon sample ({len(silicon)} TTFT/TPOT rows under load, "
              f"benchmarks/silicon_table.py)" if silicon else "")
           + "; spec-sheet groups: the pooled groups widened by the shift of predicting with each other catalog "
           f"priors entry, {datetime.date.today().isoformat()}")
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


def _coverage_of(rows: list[dict], part: list[dict]) -> float:
    """Share of `part` inside intervals derived from `rows` without the row's own cluster."""
    inside = 0
    for c in {x["cluster"] for x in part}:
        table = derive([x for x in rows if x["cluster"] != c])
        for x in part:
            if x["cluster"] == c:
                b = _lookup(table, x["key"])
                inside += b is not None and b["lo"] <= x["r"] <= b["hi"]
    return inside / max(len(part), 1)


def _cross_coverage(train: list[dict], test: list[dict]) -> tuple[float, int]:
    """Share of `test` inside intervals derived from `train` alone (rows whose group `train` has no ancestor
    for are left out), and how many were checked."""
    table = derive(train)
    inside = n = 0
    for x in test:
        b = _lookup(table, x["key"])
        if b is not None:
            n += 1
            inside += b["lo"] <= x["r"] <= b["hi"]
    return inside / max(n, 1), n


def _spec_coverage(rows: list[dict], shifts: list[dict], measured: list[dict]) -> tuple[float, float]:
    """Swapped-priors residuals (r + s) inside spec-sheet intervals built without their own cluster."""
    by_id = {x["id"]: x for x in rows}
    inside, n, widths = 0, 0, []
    for c in {x["cluster"] for x in rows}:
        table = widen(derive(relabel([x for x in rows if x["cluster"] != c], "*")),
                      [x for x in shifts if x["cluster"] != c], measured=derive([x for x in measured if x["cluster"] != c]))
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
