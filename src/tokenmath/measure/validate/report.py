"""What validation returns: one prediction per row, the rows it could not express, and the summary statistics."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...core.derive import Q
from ..intervals import coverage, residual_rows

__all__ = ["Prediction", "Unexpressed", "ValidationReport"]


@dataclass
class Prediction:
    """One row predicted: value in the row's unit, its spec bound, and what it rests on."""

    id: str
    group: str
    kind: str  # 'run', 'prefill', 'decode', 'per_user', 'static', 'gemm', 'stream', 'link', 'alltoall', 'kernel'
    predicted: float
    measured: float
    unit: str
    spec: float | None = None  # the same prediction on basis 'spec' (a bound)
    higher_is_better: bool = True  # rates; False for times
    why: list[str] = field(default_factory=list)
    assumptions: list[str] = field(default_factory=list)
    derivation: Q | None = None
    interval_key: tuple[str, str, str] | None = None  # (generation, phase, precision): its interval group
    cluster: str = ""  # model|chip: rows that share it are left out together when coverage is measured
    interval: tuple[float, float] | None = None  # the stored 80 % interval of the prediction, in the row's unit
    measured_low: float | None = None  # a measured range [low, high] (rows.parse_measured), in the row's unit
    measured_high: float | None = None
    measured_op: str = ""  # a bound row ('>', '>=', '<', '<='): it passes or fails, it has no error
    best_case: bool = False  # a point row checked as a bound: the tool's best case over what the row leaves unstated
    serving: bool = False  # the row measures an end-to-end serving quantity (rows.row_kind), whatever its id
    matched: dict = field(default_factory=dict)  # what the row's strings matched, with scores (match.Aliases)

    @property
    def is_bound(self) -> bool:
        return bool(self.measured_op)

    @property
    def bound_passes(self) -> bool | None:
        """For a bound row: does the prediction satisfy the measured inequality?"""
        if not self.measured_op:
            return None
        x, v = self.predicted, self.measured
        return {">": x > v, ">=": x >= v, "<": x < v, "<=": x <= v}[self.measured_op]

    @property
    def error(self) -> float:
        """(predicted − measured) / measured; for a range, 0 inside it and from the nearer end outside."""
        if self.measured_low is not None and self.measured_high is not None and self.measured_high > self.measured_low:
            if self.measured_low <= self.predicted <= self.measured_high:
                return 0.0
            end = self.measured_low if self.predicted < self.measured_low else self.measured_high
            return (self.predicted - end) / end
        return (self.predicted - self.measured) / self.measured

    @property
    def abs_error(self) -> float:
        return abs(self.error)

    @property
    def bound_ok(self) -> bool | None:
        """True when the measurement respects the spec bound (rates at or below it, times at or above)."""
        if self.spec is None:
            return None
        slack = 1e-9 * abs(self.spec)
        return self.measured <= self.spec + slack if self.higher_is_better else self.measured >= self.spec - slack

    def to_dict(self) -> dict:
        out = {"id": self.id, "group": self.group, "kind": self.kind, "predicted": self.predicted,
               "measured": self.measured, "unit": self.unit, "spec_bound": self.spec, "bound_ok": self.bound_ok,
               "why": self.why, "assumptions": self.assumptions}
        if self.is_bound and self.best_case:
            # the tool's best case over what the row leaves unstated is a bound, not a prediction of the row: it is
            # kept out of `predicted` so that no error is read off it
            out.update(predicted=None, best_case_prediction=self.predicted,
                       measured_bound=f"best case {self.measured_op} measured {self.measured:g}",
                       bound_passes=self.bound_passes)
        elif self.is_bound:
            out.update(measured_bound=f"{self.measured_op}{self.measured:g}", bound_passes=self.bound_passes)
        else:
            out.update(error=self.error, abs_error=self.abs_error)
        if self.measured_low is not None and self.measured_high is not None and self.measured_high > self.measured_low:
            out["measured_range"] = [self.measured_low, self.measured_high]
        if self.matched:
            out["matched"] = self.matched
        if self.interval and self.interval_key and not self.is_bound:
            out.update(interval=list(self.interval), inside_interval=self.inside_interval,
                       interval_group="|".join(self.interval_key))
        return {k: v for k, v in out.items() if v is not None or k == "predicted"}

    @property
    def inside_interval(self) -> bool | None:
        """Is the measurement (any part of a measured range) inside the prediction's interval?"""
        if self.interval is None or self.is_bound:
            return None
        lo = self.measured_low if self.measured_low is not None else self.measured
        hi = self.measured_high if self.measured_high is not None else self.measured
        return lo <= self.interval[1] and hi >= self.interval[0]


@dataclass(frozen=True)
class Unexpressed:
    id: str
    group: str
    reason: str
    serving: bool = False  # the row measures an end-to-end serving quantity (rows.row_kind)

    def to_dict(self) -> dict:
        return {"id": self.id, "group": self.group, "reason": self.reason}


def _stats(errors: list[float]) -> dict:
    if not errors:
        return {"n": 0, "median_abs_error": None, "p90_abs_error": None, "median_error": None}
    a = np.abs(np.asarray(errors))
    return {"n": len(errors), "median_abs_error": float(np.median(a)), "p90_abs_error": float(np.percentile(a, 90)),
            "median_error": float(np.median(errors))}


@dataclass
class ValidationReport:
    basis: str
    table: str
    rows: list[Prediction]
    unexpressed: list[Unexpressed]

    def groups(self) -> list[str]:
        seen = [r.group for r in self.rows] + [u.group for u in self.unexpressed]
        return list(dict.fromkeys(seen))

    def summary(self) -> dict:
        """Median and 90th-percentile |error| overall, over the serving groups, and per group; bound rows
        (a measured inequality) are counted apart, as passed or failed."""
        rows = [r for r in self.rows if not r.is_bound]
        out = _stats([r.error for r in rows])
        serving = [r.error for r in rows if r.serving]
        out["serving"] = {**_stats(serving), "groups": list(dict.fromkeys(
            [r.group for r in self.rows if r.serving] + [u.group for u in self.unexpressed if u.serving]))}
        bounds = [r for r in self.rows if r.is_bound]
        out["bound_rows"] = {"n": len(bounds), "passed": sum(bool(r.bound_passes) for r in bounds),
                             "best_case": sum(r.best_case for r in bounds)}
        gone = [u for u in self.unexpressed if u.serving]
        n_serv = sum(r.serving for r in self.rows)
        out["serving"]["expressed"] = {"points": len(serving), "bounds": n_serv - len(serving),
                                       "of": n_serv + len(gone)}
        out["range_rows"] = sum(1 for r in rows if r.measured_high is not None and r.measured_low is not None
                                and r.measured_high > r.measured_low)
        out["groups"] = {}
        for g in self.groups():
            s = _stats([r.error for r in rows if r.group == g])
            s["unexpressed"] = sum(1 for u in self.unexpressed if u.group == g)
            out["groups"][g] = s
        out["unexpressed"] = len(self.unexpressed)
        out["bound_violations"] = len(self.violations())
        res = residual_rows([r for r in self.rows if r.serving])
        if res and self.basis == "prior":
            cov = coverage(res)
            out["interval_coverage"] = cov["left_out_cluster"]  # out of sample: (model, hardware) clusters left out
            out["intervals"] = {**cov, "stored_in_sample": self._stored_coverage()}
        return out

    def _stored_coverage(self) -> float | None:
        """Share of serving rows inside the catalog's stored intervals (in sample when derived from this table)."""
        rows = [r for r in self.rows if r.serving and r.interval is not None]
        return sum(bool(r.inside_interval) for r in rows) / len(rows) if rows else None

    def violations(self) -> list[Prediction]:
        """Rows whose measurement beats the spec bound: a catalog or model bug (or a metric the row defines oddly)."""
        return [r for r in self.rows if r.bound_ok is False]

    def worst(self, n: int = 10, groups=None) -> list[Prediction]:
        rows = [r for r in self.rows if (groups is None or r.group in groups) and not r.is_bound]
        return sorted(rows, key=lambda r: -r.abs_error)[:n]

    def to_dict(self) -> dict:
        return {"basis": self.basis, "table": self.table, "summary": self.summary(),
                "rows": [r.to_dict() for r in self.rows], "unexpressed": [u.to_dict() for u in self.unexpressed],
                "bound_violations": [{"id": r.id, "measured": r.measured, "spec_bound": r.spec, "unit": r.unit,
                                      "why": r.why} for r in self.violations()]}
