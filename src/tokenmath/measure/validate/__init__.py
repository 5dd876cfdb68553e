"""Predict a table of published measurements and report how far the predictions land.

Each row (columns of validation/public_measurements.csv) is matched to catalog entries by a scored name
matcher (match.py: catalog names, display names, catalog/aliases/names.yaml, the rules of
catalog/aliases/validation.yaml), predicted with the core, and compared only with a measurement of the
same dimension: error = (predicted − measured) / measured for a point; for a measured range, 0 inside it
and from the nearer end outside; a measured bound (">250") passes or fails and is counted apart
(rows.py). Rows the tool cannot express are listed with the reason.

Serving rows use `roofline.step` for every step (one replica of G chips, `n_rep` replicas):

    engine batch (max load):  kv_pool  = f_kv · (G · C − W_all)
                              B_engine = min(floor(kv_pool / kv_held(ISL + OSL)), B_max)
    a run (offline rows):     t_run    = n_prefill · t_prefill(B_p, ISL) + OSL · mean_j t_decode(B, ISL + j)
                              B_p      = max(1, floor(tokens_max / ISL)),  n_prefill = B / B_p
                              tokens/s = n_rep · B · OSL / t_run
    one phase (per-GPU rows): prefill B_p·ISL / t_prefill / G;  decode B / t_decode(B, ISL + OSL/2) / G
    batch-1 rows:             tokens/s/user = 1 / t_decode(1, ISL + OSL/2)

With basis='spec' (peaks, everything overlapped) the engine may fill the whole HBM with KV, there is
no batch cap, and a run takes max(Σ t_math, Σ (t_weights + t_kv)) over all its steps: a lower bound
on time, so an upper bound on throughput. A measurement above its spec bound is reported as a bug.

Microbenchmark rows use the single-kernel rooflines of `kernels` (one GEMM, one stream, one link,
one all-to-all, one NCCL-style collective) with the same priors (microbench.py). Training rows belong to `tokenmath train`.
"""

from __future__ import annotations

import dataclasses
import math
import re
from pathlib import Path


from ...core.errors import CatalogError, InputError
from ...core.load import load_intervals, read_table
from ...core.records import Priors
from ...training import predict_training_row
from .match import Aliases
from .microbench import predict_microbenchmark
from .report import Prediction, Unexpressed, ValidationReport
from .rows import (COLUMNS, MBU, PACKAGE_TABLE, SERVING_GROUPS, dimension_of_unit, group_of, parse_measured,
                   prediction_dimension, row_kind, share_of_peak, to_int, unit_scale, unknown_reason, with_unit)
from .rows import BEST_CASE, BEST_K, BEST_OSL, K_UNSTATED, OSL_UNSTATED, ratio_reason
from .serving import engine_batch, kv_pool_bytes, predict_serving, run_throughput, run_time, split_of, stated_split

__all__ = ["Prediction", "Unexpressed", "ValidationReport", "validate", "validate_table", "Aliases", "group_of",
           "COLUMNS", "SERVING_GROUPS", "engine_batch", "run_time", "run_throughput", "kv_pool_bytes", "predict_row"]


def validate_table(path: str | Path | None = None, *, basis: str = "prior", groups: list[str] | None = None,
                   priors: Priors | None = None, aliases: str = "validation", explain: bool = False,
                   ids: list[str] | None = None, progress=None) -> ValidationReport:
    """Read a measurement table (default: the repository's validation/public_measurements.csv) and validate it."""
    p = Path(path) if path else PACKAGE_TABLE
    # column names in any case, words joined by spaces or hyphens ("N Chips"); the columns a table leaves out read
    # as empty cells
    rows = [{**{c: "" for c in COLUMNS}, **{re.sub(r"[\s\-]+", "_", k.strip().lower()): v for k, v in r.items()}}
            for r in read_table(p)]
    if not rows:
        raise InputError(f"{p}: no rows under the header; nothing to validate")
    if rows:
        missing = [c for c in ("id", "model", "hardware", "metric", "value", "unit") if not any(r[c] for r in rows)]
        if missing:
            raise InputError(f"{p}: missing column(s) {', '.join(missing)}; expected the columns of "
                             f"public_measurements.csv ({', '.join(COLUMNS)})")
    return validate(rows, basis=basis, groups=groups, priors=priors, aliases=aliases, table=str(p), explain=explain,
                    ids=ids, progress=progress)


def validate(rows: list[dict], *, basis: str = "prior", groups: list[str] | None = None,
             priors: Priors | None = None, aliases: str = "validation", table: str = "", explain: bool = False,
             ids: list[str] | None = None, progress=None) -> ValidationReport:
    """Predict every row (or those of `groups` / `ids`); rows that cannot be predicted are listed with the reason.
    `progress(row_id, done, total)`, if given, is called after each row (a table under load simulates every row)."""
    if basis not in ("prior", "spec"):
        raise InputError(f"--basis must be 'prior' or 'spec' (got {basis!r})")
    al = Aliases(aliases)
    want = {g.upper() for g in groups} if groups else None
    preds: list[Prediction] = []
    skipped: list[Unexpressed] = []
    for i, raw in enumerate(rows):
        row = {c: raw.get(c, "") or "" for c in COLUMNS}
        if progress is not None:
            progress(row["id"], i, len(rows))
        if not row["id"]:
            continue
        g = group_of(row["id"])
        if (want is not None and g not in want) or (ids and row["id"] not in ids):
            continue
        out = predict_row(row, al, basis=basis, priors=priors, explain=explain)
        (preds if isinstance(out, Prediction) else skipped).append(out)
    if progress is not None:
        progress("", len(rows), len(rows))
    if basis == "prior":
        _attach_intervals(preds)
    return ValidationReport(basis, table, preds, skipped)


def _attach_intervals(preds: list[Prediction]) -> None:
    """Each serving prediction's stored 80 % interval: predicted · e^[lo, hi] (catalog/intervals/serving.yaml)."""
    try:
        iv = load_intervals()
    except CatalogError:
        return
    for p in preds:
        if p.interval_key:
            _, b = iv.group(*p.interval_key)
            # the groups bound ln(measured / predicted) of a rate; a time's ratio is the inverse
            lo, hi = (b.lo, b.hi) if p.higher_is_better else (-b.hi, -b.lo)
            p.interval = (p.predicted * math.exp(lo), p.predicted * math.exp(hi))


def predict_row(row: dict, al: Aliases, *, basis: str = "prior", priors: Priors | None = None,
                explain: bool = False) -> Prediction | Unexpressed:
    """One row predicted, or the reason it cannot be; either says whether the row is a serving row (by what it
    measures, not by its id, so another table's ids need no prefix of this one's)."""
    row = with_unit(row)  # a unit left out of its column, read where tables also put it
    out = _predict_row(row, al, basis=basis, priors=priors, explain=explain)
    serving = row_kind(row) == "serving"
    if isinstance(out, Prediction):
        out.serving = serving
        return out
    return dataclasses.replace(out, serving=serving)


def _predict_row(row: dict, al: Aliases, *, basis: str = "prior", priors: Priors | None = None,
                 explain: bool = False) -> Prediction | Unexpressed:
    rid, g = row["id"], group_of(row["id"])
    skip = lambda why: Unexpressed(rid, g, why)  # noqa: E731
    kind = row_kind(row)
    if kind == "training":
        return _training(row, al)
    ratio = ratio_reason(row)
    if ratio:
        return skip(ratio)
    share = share_of_peak(row) and kind in ("gemm", "kernel", "stream", "link", "collective", "unknown") or (
        kind == "serving" and MBU.search(row["metric"]) is not None)  # a model's bandwidth utilisation, in %
    meas = parse_measured(row["value"].replace("%", "") if share else row["value"])  # '80 %' of the peak
    if meas is None and re.fullmatch(r"\s*[~≈<>]?=?\s*[\d.,]+\s*%\s*", row["value"]):
        return skip(f"measured value {row['value']!r} is a percentage of something the row does not give (a hit "
                    "rate, a utilisation, an SLO attainment): not a rate, a time or a bandwidth this validation predicts")
    if meas is None:
        return skip(f"measured value {row['value']!r} is not a positive number, a range or a bound")
    for col in ("n_chips", "batch", "input_len", "output_len", "context_len"):  # counts the predictions divide by
        if row[col].strip() and to_int(row[col]) is not None and not 1 <= to_int(row[col]) <= 1e12:
            return skip(f"{col} {row[col]!r} is not a count between 1 and 1e12")
    scale = 1.0 if share else unit_scale(row["unit"])  # a share of the peak: percent in, percent out
    if scale is None:
        return skip(f"unit {row['unit']!r} is not one this validation predicts")
    reason = al.unsupported(row)
    if reason:
        return skip(reason)
    if kind == "unknown":
        return skip(unknown_reason(row))
    have, want = dimension_of_unit(row["unit"]), prediction_dimension(kind, row["metric"], row["unit"])
    if have is not None and want is not None and have != want and {have, want} != {"request_rate", "token_rate"}:
        # (a request rate is a token rate over a request's tokens: the serving reader converts; never a time)
        return skip(f"the row measures a {have.replace('_', ' ')} ({row['unit']}) but metric {row['metric']!r} is "
                    f"predicted as a {want.replace('_', ' ')}: quantities of different dimensions are never compared")
    al.matched = {}
    system, hw_note = al.system(row["hardware"])
    if system is None:
        return skip(hw_note)
    try:
        if kind == "serving":
            out = predict_serving(row, al, system, hw_note, meas.value, scale, basis, priors, explain)
        else:
            out = predict_microbenchmark(row, kind, al, system, hw_note, meas.value, scale, basis, priors)
    except (ValueError, CatalogError) as e:
        return skip(str(e))
    if kind == "serving":
        out = _pipeline(row, out)
    if isinstance(out, Prediction) and (BEST_CASE in out.assumptions or meas.op in (">", ">=")) and (
            OSL_UNSTATED in out.assumptions or K_UNSTATED in out.assumptions):
        out = _best_over_unstated(row, out, al, system, hw_note, meas.value, scale, basis, priors, explain)
    if isinstance(out, Prediction) and not (math.isfinite(out.predicted) and out.predicted > 0):
        return skip(f"the prediction came out as {out.predicted!r}, not a positive number: the row's inputs are "
                    "out of the model's range")
    if isinstance(out, Prediction):
        out.measured_op = meas.op
        if BEST_CASE in out.assumptions:  # the tool's best case must reach a rate, or undercut a time
            out.best_case, out.measured_op = True, (">=" if out.higher_is_better else "<=")
        if meas.kind == "range":
            out.measured_low, out.measured_high = meas.low, meas.high
        out.matched = dict(al.matched)
    return out


def _pipeline(row: dict, out: Prediction | Unexpressed) -> Prediction | Unexpressed:
    """A serving row with pipeline stages ('TP4 PP2', '--pp 2'): its chips are pp micro-batch streams of the
    tensor-parallel group, each chip holding 1/pp of the weights (roofline.Layout.pp: replica equivalence — a
    token's time through the stages is one step of all layers on the group plus its hops between stages,
    roofline.pipeline_hop_time). Said as an assumption; a refusal for want of memory says how the stages were read."""
    pp = int(split_of(stated_split(row)[0]).get("pp", 1))
    if pp <= 1:
        return out
    how = f"pipeline parallelism PP{pp}: each pipeline's chips are read as {pp} micro-batch streams of its " \
          f"tensor-parallel group, each chip holding 1/{pp} of the weights (a token's time through the stages " \
          f"is one step of every layer on the group plus its {pp - 1} point-to-point hop(s) of activations)"
    if isinstance(out, Prediction):
        out.assumptions.append(how)
        return out
    if re.search(r"no room|does not fit|KV pool .* holds", out.reason):
        return dataclasses.replace(out, reason=f"{out.reason} — {how}")
    return out


def _best_over_unstated(row, out, al, system, hw_note, measured, scale, basis, priors, explain):
    """A best case over what a row leaves unstated, as the best prediction (highest rate, shortest time) over:
    the output length (BEST_OSL tokens: a short decode reads the least KV, a long one spreads each request's
    prefill and fixed costs), and the drafts per step (BEST_K at α = 1: each draft adds a token and a draft step).
    Neither end is the best for every row."""
    osls = BEST_OSL if OSL_UNSTATED in out.assumptions else (None,)
    ks = BEST_K if K_UNSTATED in out.assumptions else (None,)
    best, at = out, (osls[0], ks[0])
    for osl in osls:
        for K in ks:
            if (osl, K) == at:
                continue
            r = dict(row)
            if osl is not None:
                r["output_len"] = str(osl)
            if K is not None:
                r["notes"] = f"{r.get('notes', '')} | num_speculative_tokens = {K}"
            o = predict_serving(r, al, system, hw_note, measured, scale, basis, priors, explain)
            if isinstance(o, Prediction) and (o.predicted > best.predicted if o.higher_is_better
                                              else o.predicted < best.predicted):
                best, at = o, (osl, K)
    was_best_case = BEST_CASE in out.assumptions
    best.assumptions = [a for a in best.assumptions if a not in (OSL_UNSTATED, K_UNSTATED)]
    if osls[0] is not None:
        best.assumptions.insert(0, f"output length not stated: the best over {', '.join(map(str, osls))} tokens "
                                   f"({at[0]})")
    if ks[0] is not None:
        best.assumptions.insert(0, f"drafts per step not stated: the best over K = {', '.join(map(str, ks))} "
                                   f"({at[1]})")
    if was_best_case and BEST_CASE not in best.assumptions:
        best.assumptions.append(BEST_CASE)
    return best


# ---- training rows ------------------------------------------------------------------------------------

def _training(row: dict, al: Aliases) -> Prediction | Unexpressed:
    """Training rows belong to `tokenmath train`: predicted through tokenmath.training (the same matcher)."""
    rid, g = row["id"], group_of(row["id"])
    al.matched = {}
    # a range ('45-55') or a bound ('>40', 'at least 40') read as the serving rows read it; the training reader is
    # given its one number (the range's middle, the bound's value) and the inequality or ends are kept here
    meas = parse_measured(row["value"].replace("%", ""))
    spread = meas is not None and meas.kind != "point"
    out = predict_training_row({**row, "value": f"{meas.value:.12g}"} if spread else row, aliases=al)
    if out is None or out.get("predicted") is None or not out.get("measured"):
        why = (out or {}).get("reason", "not a training row")
        return Unexpressed(rid, g, f"training row not predicted by tokenmath train: {why}")
    why = [f"tokenmath train at the MFU prior {out.get('prior')} (from {out.get('prior_row')}); {out.get('basis')}",
           *out["why"]]
    # in the row's unit: the training reader gives chip-hours where the unit carries a multiplier ('M GPU-hours')
    k = out.get("unit_multiplier", 1.0)
    pred = Prediction(rid, g, "training", float(out["predicted"]) / k, float(out["measured"]) / k, row["unit"], None,
                      out["higher_is_better"], why, list(out["assumptions"]))
    if spread:
        pred.measured_op = meas.op
        if meas.kind == "range":
            pred.measured_low, pred.measured_high = meas.low, meas.high
    pred.matched = dict(al.matched)
    return pred
