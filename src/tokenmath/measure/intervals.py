"""Prediction intervals from validation residuals: split-conformal by hardware generation × phase × precision.

Each predicted serving row leaves a residual r = ln(measured / predicted). Rows are grouped by
g = generation|phase|precision (generation: the chip's priors — 'hopper', 'blackwell', 'ampere', or
'spec-sheet' for chips without measured kernels; phase: 'prefill', 'decode', or 'run' for a whole
offline run; precision of the weights), and each group's 80 % interval is a split-conformal one:

    weights   each (model, hardware) cluster of the group counts as one row, its rows sharing that
              weight (rows of one cluster share its offset: they are not independent draws); the rest
              of the parent group's clusters count min(n0, their number) rows in all, n0 = 10, so a group
              with few clusters borrows its parent's spread
    lookup    g|p|q → g|p|* → *|p|q → *|p|* → g|*|q → g|*|* → *|*|* (Intervals.lookup_order): a phase the
              generation has no rows of reads that phase over every generation before the generation's other
              phases (`*|p|q`, `*|p|*` are derived for that)
    parents   g|p|q → g|p|* → *|p|* → *|*|*;  g|*|q → g|*|* → *|*|*;  *|p|q → *|p|* → *|*|*;  a parent
              lends its clusters that are not the group's own (a cluster's rows at other formats or phases
              share its offset: they are no new draw).
              The phase is kept before the precision and the generation because it sets the spread: a TTFT
              under load misses by several times what a decode step does, so a decode group of two clusters
              borrows from decode rows of other formats and generations, not from TTFT rows of its own
    n_eff     = c + the parent's lent rows, c = the group's clusters; a parent that leaves n_eff below
              n_min = (1 − α/2)/(α/2) (9 at 80 %) is passed over for the next one up: with fewer rows no
              order statistic is a conformal bound (the level below exceeds 1), and the few rows' own range
              would be narrower than a well-measured group's
    level     u = min(1, (1 − α/2) · (n_eff + 1) / n_eff)          (the finite-sample conformal level)
    bounds    hi = weighted quantile of r at u,  lo = weighted quantile of r at 1 − u
    interval  a predicted rate x: [x·e^lo, x·e^hi];  a time t: [t·e^−hi, t·e^−lo]

Chips without kernel tables keep spec-sheet priors, and their efficiencies could be any chip's. Their
groups (`spec-sheet|…`) are the measured groups (all generations pooled) widened by the shift that
swapping priors causes: each row predicted with every other priors entry of the catalog (the default
and each chip's measured kernels), s = ln(predicted with its own / predicted with the other), and

    spec-sheet lo = min(lo + q_{α/2}(s), lo_g),  hi = max(hi + q_{1−α/2}(s), hi_g)   (cluster-weighted
                                                  quantiles of s; lo_g, hi_g: the widest measured generation's
                                                  group of the same phase and precision)

— never narrower than the measured groups, wider by what not having measured kernels costs. The pooled
spread alone can be narrower than one generation's (Hopper's TTFTs under load miss by ×0.03 at the 10th
percentile, Blackwell's by ×0.2; their mixture by ×0.14): a chip whose efficiencies could be any chip's
could miss as Hopper's do.

Coverage is measured out of sample (`coverage`): every (model, hardware) cluster of rows is left out
in turn, the groups are rebuilt from the other clusters, and the cluster's rows are checked against
those intervals — a model or machine the intervals have never seen, as in an unseen table. In-sample
coverage (the stored table against the rows it came from) is reported beside it and is optimistic.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import numpy as np

from ..core.load import PACKAGE_CATALOG
from ..core.records import Intervals

__all__ = ["NOMINAL", "PSEUDO_ROWS", "phase_of", "derive", "coverage", "intervals_yaml", "write_intervals",
           "residual_rows", "relabel", "prior_shifts", "widen"]

NOMINAL = 0.8
PSEUDO_ROWS = 10.0  # n0: how many rows a group's parent counts for when it lends its spread


def phase_of(kind: str) -> str | None:
    """A validation row's kind -> the phase its interval group uses."""
    return {"run": "run", "prefill": "prefill", "decode": "decode", "per_user": "decode",
            "decode_fixed": "decode"}.get(kind)


def residual_rows(preds) -> list[dict]:
    """(key, cluster, r) of each prediction that carries an interval key (the serving rows)."""
    out = []
    for p in preds:
        if getattr(p, "interval_key", None) and not getattr(p, "is_bound", False) and p.predicted > 0 \
                and p.measured > 0 and p.error > -1:
            # error = predicted / measured − 1 (a measured range: from its nearer end, 0 inside it)
            r = -float(np.log1p(p.error)) if p.higher_is_better else float(np.log1p(p.error))
            out.append({"key": tuple(p.interval_key), "cluster": p.cluster, "r": r, "id": p.id})
    return out


def relabel(rows: list[dict], generation: str) -> list[dict]:
    """The same residual rows filed under another generation (the spec-sheet groups)."""
    return [{**x, "key": (generation, *x["key"][1:])} for x in rows]


def prior_shifts(own: list[dict], others: list[list[dict]]) -> list[dict]:
    """s = ln(pred_own / pred_other) = r_other − r_own for every row predicted under another priors entry."""
    by_id = {x["id"]: x for x in own}
    return [{**x, "r": x["r"] - by_id[x["id"]]["r"]} for rows in others for x in rows if x["id"] in by_id]


def widen(table: dict[str, dict], shifts: list[dict], generation: str = "spec-sheet",
          nominal: float = NOMINAL, measured: dict[str, dict] | None = None) -> dict[str, dict]:
    """The groups of `table` with generation `*` refiled under `generation`, widened by the shifts' quantiles, and
    never narrower than a group of `measured` (each generation's) of the same phase and precision."""
    if not shifts:
        return {}
    r = np.array([x["r"] for x in shifts])
    size: dict[str, int] = defaultdict(int)
    for x in shifts:
        size[x["cluster"]] += 1
    w = np.array([1.0 / size[x["cluster"]] for x in shifts])
    alpha = 1 - nominal
    s_lo, s_hi = min(0.0, _weighted_quantile(r, w, alpha / 2)), max(0.0, _weighted_quantile(r, w, 1 - alpha / 2))
    out = {}
    for key, b in table.items():
        g, rest = key.split("|", 1)
        if g == "*":
            same = [m for k, m in (measured or {}).items() if k.split("|", 1) != ["*", rest] and k.endswith(f"|{rest}")]
            out[f"{generation}|{rest}"] = {"n": b["n"], "lo": min([b["lo"] + s_lo] + [m["lo"] for m in same]),
                                           "hi": max([b["hi"] + s_hi] + [m["hi"] for m in same])}
    return out


def _parents(key: tuple[str, str, str]) -> tuple[str, str, str] | None:
    g, p, q = key
    if key == ("*", "*", "*"):
        return None
    if p != "*" and q != "*":
        return (g, p, "*")
    if g != "*" and p != "*":  # the phase's rows of every generation before this generation's other phases
        return ("*", p, "*")
    if g != "*" and q != "*":
        return (g, "*", "*")
    return ("*", "*", "*")


def _members(rows: list[dict], key) -> list[dict]:
    return [x for x in rows if all(k == "*" or k == v for k, v in zip(key, x["key"]))]


def _weighted_quantile(r: np.ndarray, w: np.ndarray, q: float) -> float:
    order = np.argsort(r)
    r, w = r[order], w[order]
    c = (np.cumsum(w) - 0.5 * w) / w.sum()
    return float(np.interp(q, c, r))


def _bounds(own: list[dict], parent: list[dict], alpha: float) -> tuple[float, float]:
    """Weighted conformal quantiles: each (model, hardware) cluster counts as one row (its rows share its
    offset, so they are not independent), the parent's other clusters as PSEUDO_ROWS rows in all."""
    def cluster_weights(rows):
        size: dict[str, int] = defaultdict(int)
        for x in rows:
            size[x["cluster"]] += 1
        return [1.0 / size[x["cluster"]] for x in rows], len(size)

    w_own, n_own = cluster_weights(own)
    w_par, n_par = cluster_weights(parent) if parent else ([], 0)
    lend = min(PSEUDO_ROWS, n_par)  # a parent lends at most as many rows as it has clusters
    w_par = [w * lend / n_par for w in w_par] if n_par else []
    r = np.array([x["r"] for x in own] + [x["r"] for x in parent])
    w = np.array(w_own + w_par)
    n_eff = n_own + lend
    u = min(1.0, (1 - alpha / 2) * (n_eff + 1) / n_eff)
    return _weighted_quantile(r, w, 1 - u), _weighted_quantile(r, w, u)


def derive(rows: list[dict], nominal: float = NOMINAL) -> dict[str, dict]:
    """Group name -> {n, lo, hi} for every group (and parent group) the rows populate."""
    alpha = 1 - nominal
    keys: set[tuple[str, str, str]] = set()
    for x in rows:
        g, p, q = x["key"]
        keys |= {(g, p, q), (g, "*", q), (g, p, "*"), (g, "*", "*"), ("*", p, q), ("*", p, "*"), ("*", "*", "*")}
    out = {}
    for key in sorted(keys):
        own = _members(rows, key)
        if not own:
            continue
        lo, hi = _bounds(own, _lender(rows, key, own, alpha), alpha)
        out["|".join(key)] = {"n": len(own), "lo": lo, "hi": hi}
    return out


def _lender(rows: list[dict], key, own: list[dict], alpha: float) -> list[dict]:
    """The rows the group borrows: the nearest parent's clusters that are not the group's own, from the first parent
    that brings n_eff to the conformal minimum (the last one, `*|*|*`, where none does)."""
    mine = {x["cluster"] for x in own}
    n_min = (1 - alpha / 2) / (alpha / 2) - 1e-9
    par, parent = _parents(key), []
    while par:
        parent = [x for x in _members(rows, par) if x["cluster"] not in mine]
        if len(mine) + min(PSEUDO_ROWS, len({x["cluster"] for x in parent})) >= n_min:
            break
        par = _parents(par)
    return parent


def _lookup(table: dict[str, dict], key: tuple[str, str, str]) -> dict | None:
    for k in Intervals.lookup_order(*key):  # the order serve and validate read the stored table in
        if k in table:
            return table[k]
    return None


def coverage(rows: list[dict], nominal: float = NOMINAL) -> dict:
    """Share of rows inside their interval: left out by (model, hardware) cluster, and in sample."""
    if not rows:
        return {"n": 0}
    by_cluster: dict[str, list[dict]] = defaultdict(list)
    for x in rows:
        by_cluster[x["cluster"]].append(x)
    inside = 0
    widths = []
    for c, members in by_cluster.items():
        table = derive([x for x in rows if x["cluster"] != c], nominal)
        for x in members:
            b = _lookup(table, x["key"])
            if b is not None:
                inside += b["lo"] <= x["r"] <= b["hi"]
                widths.append(b["hi"] - b["lo"])
    full = derive(rows, nominal)
    in_sample = sum(_lookup(full, x["key"])["lo"] <= x["r"] <= _lookup(full, x["key"])["hi"] for x in rows)
    return {"n": len(rows), "clusters": len(by_cluster), "nominal": nominal,
            "left_out_cluster": inside / len(rows), "in_sample": in_sample / len(rows),
            "median_width_factor": float(np.exp(np.median(widths))) if widths else None}


# ---- catalog/intervals/<name>.yaml ---------------------------------------------------------------

def intervals_yaml(table: dict[str, dict], spec_sheet: dict[str, dict], source: str, cov: dict,
                   nominal: float = NOMINAL, title: str = "80 % prediction intervals of serving rates and times",
                   script: str = "benchmarks/interval_table.py") -> str:
    """The stored interval table: measured-priors groups, then the spec-sheet groups."""
    lines = ["# Prediction intervals from validation residuals (tokenmath.measure.intervals). Regenerate with",
             f"# `python {script}`; do not edit by hand.",
             f"display_name: {title}",
             f"source: \"{source}\"",
             f"nominal: {nominal}",
             "method: \"split-conformal on ln(measured / predicted) by generation|phase|precision, each (model, "
             f"hardware) cluster one row; a group's parent lends up to {PSEUDO_ROWS:g} pseudo-rows of clusters the "
             "group does not hold, a parent passed over while fewer than the conformal minimum; a phase a generation "
             "has no rows of read from *|phase|precision; finite-sample level "
             "(1 − α/2)(n_eff + 1)/n_eff" + ("; spec-sheet groups: the pooled groups widened by the quantiles of the "
                                              "shift that predicting with each other catalog priors entry causes, never "
                                              "narrower than a measured generation's group"
                                              if any(k.startswith("spec-sheet|") for k in spec_sheet) else "") + "\"",
             f"notes: \"coverage of nominal {nominal:.0%} intervals on {cov.get('n', 0)} rows: "
             f"{cov.get('left_out_cluster', float('nan')):.1%} with each (model, hardware) cluster left out, "
             f"{cov.get('in_sample', float('nan')):.1%} in sample\"",
             "groups:"]
    for name, b in list(table.items()) + [(k, v) for k, v in spec_sheet.items() if k.startswith("spec-sheet|")]:
        lines.append(f"  \"{name}\": {{n: {b['n']}, lo: {b['lo']:.4f}, hi: {b['hi']:.4f}}}")
    return "\n".join(lines) + "\n"


def write_intervals(text: str, path: str | Path | None = None) -> Path:
    p = Path(path) if path else PACKAGE_CATALOG / "intervals" / "serving.yaml"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")
    return p
