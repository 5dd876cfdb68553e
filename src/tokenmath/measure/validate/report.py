"""What validation returns: one prediction per row, the rows it could not express, and the summary statistics."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...core.derive import Q
from ..intervals import coverage, residual_rows
from .rows import SERVING_GROUPS

__all__ = ["Prediction", "Unexpressed", "ValidationReport"]


@dataclass
class Prediction:
    """One row predicted: value in the row's unit, its spec bound, and what it rests on."""

    id: str
    group: str
    kind: str  # 'run', 'prefill', 'decode', 'per_user', 'gemm', 'stream', 'link', 'alltoall', 'kernel'
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

    @property
    def error(self) -> float:
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
        return {"id": self.id, "group": self.group, "kind": self.kind, "predicted": self.predicted,
                "measured": self.measured, "unit": self.unit, "error": self.error, "abs_error": self.abs_error,
                "spec_bound": self.spec, "bound_ok": self.bound_ok, "why": self.why, "assumptions": self.assumptions,
                **({"interval": list(self.interval), "inside_interval": self.inside_interval,
                    "interval_group": "|".join(self.interval_key)} if self.interval and self.interval_key else {})}

    @property
    def inside_interval(self) -> bool | None:
        if self.interval is None:
            return None
        return self.interval[0] <= self.measured <= self.interval[1]


@dataclass(frozen=True)
class Unexpressed:
    id: str
    group: str
    reason: str

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
        """Median and 90th-percentile |error| overall, over the serving groups, and per group."""
        out = _stats([r.error for r in self.rows])
        serving = [r.error for r in self.rows if r.group in SERVING_GROUPS]
        out["serving"] = {**_stats(serving), "groups": [g for g in SERVING_GROUPS if g in self.groups()]}
        out["groups"] = {}
        for g in self.groups():
            s = _stats([r.error for r in self.rows if r.group == g])
            s["unexpressed"] = sum(1 for u in self.unexpressed if u.group == g)
            out["groups"][g] = s
        out["unexpressed"] = len(self.unexpressed)
        out["bound_violations"] = len(self.violations())
        res = residual_rows([r for r in self.rows if r.group in SERVING_GROUPS])
        if res and self.basis == "prior":
            cov = coverage(res)
            out["interval_coverage"] = cov["left_out_cluster"]  # out of sample: (model, hardware) clusters left out
            out["intervals"] = {**cov, "stored_in_sample": self._stored_coverage()}
        return out

    def _stored_coverage(self) -> float | None:
        """Share of serving rows inside the catalog's stored intervals (in sample when derived from this table)."""
        rows = [r for r in self.rows if r.group in SERVING_GROUPS and r.interval is not None]
        return sum(bool(r.inside_interval) for r in rows) / len(rows) if rows else None

    def violations(self) -> list[Prediction]:
        """Rows whose measurement beats the spec bound: a catalog or model bug (or a metric the row defines oddly)."""
        return [r for r in self.rows if r.bound_ok is False]

    def worst(self, n: int = 10, groups=None) -> list[Prediction]:
        rows = [r for r in self.rows if groups is None or r.group in groups]
        return sorted(rows, key=lambda r: -r.abs_error)[:n]

    def to_dict(self) -> dict:
        return {"basis": self.basis, "table": self.table, "summary": self.summary(),
                "rows": [r.to_dict() for r in self.rows], "unexpressed": [u.to_dict() for u in self.unexpressed],
                "bound_violations": [{"id": r.id, "measured": r.measured, "spec_bound": r.spec, "unit": r.unit,
                                      "why": r.why} for r in self.violations()]}
