"""One claim of the lecture, checked: what was said, what the tool derives, and the verdict.

A claim is a small function registered with its ledger id (`@claim("R7", "batching")`). It receives a
`LectureContext` (catalog records with `--set` applied, and the lecture's own statements) and returns a
`Finding`: the tool's value with its unit and derivation, and a verdict. `judge` turns a tool value and
the lecture's value into a verdict by one rule, so verdicts follow the catalog when inputs change:

    |tool / said − 1| ≤ tol        → reproduced
    otherwise, premise is factual  → wrong as stated (with the correction)
    otherwise                      → off by a factor (tool / said, stated)

A claim that is an identity of the lecture's own model (it can only fail through a bug in the tool) is
labelled "identity", not "reproduced". Every finding states its `check`: what was compared, the
tolerance and why, and what in the world would have changed the verdict (`check_text`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Callable

from ..core.derive import Q, value_of
from ..core.units import fmt

__all__ = ["Claim", "Finding", "NotComputable", "REGISTRY", "claim", "judge", "factor_text", "VERDICTS",
           "REPRODUCED", "IDENTITY", "OFF", "WRONG", "NOT_COMPUTABLE", "need", "check_text", "within"]

REPRODUCED, IDENTITY, OFF, WRONG, NOT_COMPUTABLE = ("reproduced", "identity", "off by a factor", "wrong as stated",
                                                    "not computable")
VERDICTS = (REPRODUCED, IDENTITY, OFF, WRONG, NOT_COMPUTABLE)


class NotComputable(Exception):
    """Raised inside a claim when it cannot be computed; the message is the reason."""


@dataclass
class Finding:
    """What a claim function returns."""

    value: object = None  # a float, or a Q (its explain() becomes the derivation)
    unit: str = ""
    verdict: str = NOT_COMPUTABLE
    note: str = ""  # the stated factor, the correction, or the reason it is not computable
    derivation: str = ""  # extra derivation text (after the Q's explain())
    value_text: str = ""  # how to print the value when it is not one number (e.g. a range)
    plots: list[str] = field(default_factory=list)  # names of pictures that illustrate it
    check: str = ""  # what was compared, the tolerance and why, what would change the verdict
    extras: dict[str, str] = field(default_factory=dict)  # named numbers, as printed, for seed corrections


@dataclass
class Claim:
    """One row of the report."""

    id: str
    section: str
    statement: str
    said: str
    value: float | None
    unit: str
    value_text: str
    derivation: str
    verdict: str
    note: str
    at: str = ""
    plots: list[str] = field(default_factory=list)
    seconds: float = 0.0
    check: str = ""
    extras: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)

    def printed(self) -> str:
        """The value as the report prints it: its text, else the number with its unit, else a dash."""
        if self.value_text:
            return self.value_text
        return "—" if self.value is None else fmt(self.value, self.unit)


@dataclass
class Spec:
    id: str
    section: str
    fn: Callable


REGISTRY: dict[str, Spec] = {}


def claim(claim_id: str, section: str) -> Callable:
    """Register a claim function under its ledger id."""

    def deco(fn: Callable) -> Callable:
        if claim_id in REGISTRY:
            raise ValueError(f"claim {claim_id} registered twice")
        REGISTRY[claim_id] = Spec(claim_id, section, fn)
        return fn

    return deco


def factor_text(ratio: float) -> str:
    """'×2.33' for a ratio above 1, '×0.43 (2.33× lower)' below."""
    if ratio >= 1:
        return f"×{fmt(ratio)}"
    return f"×{fmt(ratio)} ({fmt(1 / ratio)}× lower)" if ratio > 0 else f"×{fmt(ratio)}"


def judge(tool, said: float, tol: float, *, wrong: str | None = None, unit: str = "",
          what: str = "") -> tuple[str, str]:
    """Verdict and note for a tool value against the lecture's value.

    `tol` is the relative band the lecture's rounding allows ("≈15 ms" → 0.15). `wrong` is the
    correction to state when the gap comes from a false premise rather than rounding.
    """
    t = float(value_of(tool))
    ratio = t / said
    shown = f"tool {fmt(t, unit)} vs lecture {fmt(said, unit)}"
    if what:
        shown = f"{what}: {shown}"
    if abs(ratio - 1) <= tol:
        return REPRODUCED, f"{shown} (within ±{fmt(tol * 100)} %)"
    if wrong:
        return WRONG, f"{shown} ({factor_text(ratio)}). Correction: {wrong}"
    return OFF, f"{shown}: off by {factor_text(ratio)}"


def within(x: float, lo: float, hi: float) -> bool:
    return lo <= x <= hi


def check_text(compared: str, tolerance: str, fails_if: str) -> str:
    """The check beside a verdict: what was compared, the tolerance (and why), what would change the verdict."""
    return f"Compared {compared}. Tolerance: {tolerance}. Could fail: {fails_if}."


def need(module: str, what: str):
    """Import a module another issue is building, or say the claim is not computable yet."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise NotComputable(f"needs `{module}` ({what}), not in this build yet") from None


def explained(q) -> str:
    return q.explain() if isinstance(q, Q) else ""


def unverifiable(claim_id: str, section: str, default: str = "qualitative: no quantity to compute") -> None:
    """Register a claim that cannot be computed; the reason is the lecture file's `unverified`/`withheld`."""

    def fn(ctx):
        said = ctx.said(claim_id)
        raise NotComputable(said.get("withheld") or said.get("unverified") or default)

    fn.__name__ = f"claim_{claim_id}"
    claim(claim_id, section)(fn)
