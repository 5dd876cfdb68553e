"""Values that remember how they were made, and the `@formula` decorator that makes them.

Each formula is written once, as a small function whose symbolic form is its decorator's text:

    @formula("t_kv = B · S · kv_bytes_per_token / (G · W · eta_bw)", unit="s")
    def kv_read_time(B, S, kv_bytes_per_token, G, W, eta_bw): ...

Called with plain floats or NumPy arrays it is plain arithmetic (the fast path for sweeps). Called
with at least one `Q` (a quantity with a name, unit and source), it returns a `Q` that holds its
inputs, so `Q.explain()` can print the worked derivation with every value substituted and
`Q.to_dict()` can emit the same tree as JSON. The symbols on the right of the text are the
function's parameters; a test checks that they never drift apart.
"""

from __future__ import annotations

import functools
import inspect
import re
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .units import fmt

__all__ = ["Q", "Numbers", "formula", "given", "value_of", "lift", "plain", "nest", "FORMULAS"]

FORMULAS: list[Callable] = []  # every @formula, for the consistency test


@dataclass(eq=False)
class Q:
    """A number with its name, unit, and either a source (a given) or a formula and inputs (derived)."""

    name: str
    value: Any
    unit: str = ""
    formula: str | None = None
    inputs: dict[str, "Q"] = field(default_factory=dict)
    source: str | None = None

    def __float__(self) -> float:
        return float(self.value)

    def __repr__(self) -> str:
        return f"{self.name} = {fmt(self.value, self.unit)}"

    def renamed(self, name: str) -> "Q":
        text = f"{name} = {self.formula.split('=', 1)[1].strip()}" if self.formula else None
        return Q(name, self.value, self.unit, text, self.inputs, self.source)

    # ---- rendering -------------------------------------------------------------------------
    def substituted(self) -> str:
        """The right-hand side of the formula with each symbol replaced by its value and unit."""
        if not self.formula:
            return ""
        rhs = self.formula.split("=", 1)[1].strip()
        names = sorted(self.inputs, key=len, reverse=True)
        if not names:
            return rhs
        pattern = re.compile(r"(?<![A-Za-z0-9_])(" + "|".join(map(re.escape, names)) + r")(?![A-Za-z0-9_])")
        return pattern.sub(lambda m: fmt(self.inputs[m.group(1)].value, self.inputs[m.group(1)].unit), rhs)

    def explain(self, max_depth: int = 12) -> str:
        """The worked derivation: formula, values substituted, then each derived input, then sources."""
        lines: list[str] = []
        seen: set[int] = set()
        self._render(lines, 0, seen, max_depth)
        by_source: dict[str, list[str]] = {}
        for name, src in self.sources().items():
            by_source.setdefault(src, []).append(name)
        if by_source:
            lines.append("sources:")
            for src, syms in by_source.items():
                lines.append(f"  {', '.join(syms)}: {src}")
        return "\n".join(lines)

    def _render(self, lines: list[str], depth: int, seen: set[int], max_depth: int) -> None:
        pad = "  " * depth
        if not self.formula:
            lines.append(f"{pad}{self.name} = {fmt(self.value, self.unit)}")
            return
        lines.append(f"{pad}{self.formula}  = {fmt(self.value, self.unit)}")
        sub = self.substituted()
        lhs = self.formula.split("=", 1)[0].rstrip()
        lines.append(f"{pad}{' ' * len(lhs)} = {sub}")
        seen.add(id(self))
        if depth >= max_depth:
            return
        for q in self.inputs.values():
            if q.formula and id(q) not in seen:
                q._render(lines, depth + 1, seen, max_depth)

    def sources(self) -> dict[str, str]:
        """Every given leaf under this value that has a source, by name."""
        out: dict[str, str] = {}
        stack, seen = [self], set()
        while stack:
            q = stack.pop()
            if id(q) in seen:
                continue
            seen.add(id(q))
            if q.source and not q.formula:
                out.setdefault(q.name, q.source)
            stack.extend(reversed(list(q.inputs.values())))
        return out

    def to_dict(self) -> dict:
        d: dict[str, Any] = {"symbol": self.name, "value": plain(self.value), "unit": self.unit}
        if self.formula:
            d["formula"] = self.formula
            d["substituted"] = self.substituted()
            d["inputs"] = {k: v.to_dict() for k, v in self.inputs.items()}
        if self.source:
            d["source"] = self.source
        return d


def plain(x):
    """A value as JSON can hold it: Q unwrapped, arrays as lists, NumPy scalars as Python numbers."""
    x = value_of(x)
    if isinstance(x, dict):
        return {k: plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [plain(v) for v in x]
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, (np.floating, np.integer, np.bool_)):
        return x.item()
    return x


def nest(numbers: dict) -> dict:
    """{'decode.step_time_s': q, ...} -> {'decode': {'step_time_s': value}}: dotted keys as nested JSON."""
    out: dict = {}
    for key, q in numbers.items():
        node = out
        *parents, leaf = key.split(".")
        for p in parents:
            node = node.setdefault(p, {})
        node[leaf] = plain(q)
    return out


class Numbers:
    """Mixin for a result that holds `numbers` (key -> Q or plain value): read, explain and export them."""

    numbers: dict

    def value(self, key: str):
        return value_of(self.numbers.get(key))

    def derivations(self) -> dict:
        return {k: q.to_dict() for k, q in self.numbers.items() if isinstance(q, Q) and q.formula}

    def explain(self, keys=None, max_depth: int = 12) -> str:
        """The worked derivation of each derived number (or of `keys`), one block each."""
        keys = keys or [k for k, q in self.numbers.items() if isinstance(q, Q) and q.formula]
        return "\n\n".join(f"── {k} ──\n{self.numbers[k].explain(max_depth)}" for k in keys
                           if isinstance(self.numbers.get(k), Q))


def value_of(x):
    """The bare value of a Q, or x itself."""
    return x.value if isinstance(x, Q) else x


def given(name: str, value, unit: str = "", source: str | None = None) -> Q:
    """A leaf: an input value with its unit and where it came from."""
    return Q(name, value_of(value), unit, source=source)


def lift(explain: bool, name: str, value, unit: str = "", source: str | None = None):
    """A given when a derivation is wanted, the bare value otherwise (the fast path)."""
    return given(name, value, unit, source) if explain else value


def formula(text: str, unit: str = "") -> Callable:
    """Mark a function as the one place a formula is written; see the module docstring."""
    lhs = text.split("=", 1)[0].strip()

    def deco(fn: Callable) -> Callable:
        sig = inspect.signature(fn)
        params = list(sig.parameters)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            # the hot loops' path: no Q among the arguments (defaults never are), so no binding
            if not any(isinstance(v, Q) for v in args) and not any(isinstance(v, Q) for v in kwargs.values()):
                return fn(*args, **kwargs)
            bound = sig.bind(*args, **kwargs)
            bound.apply_defaults()
            arguments = bound.arguments
            values = {k: value_of(v) for k, v in arguments.items()}
            result = fn(**values)
            inputs = {k: (v if isinstance(v, Q) else Q(k, v)) for k, v in arguments.items()}
            return Q(lhs, result, unit, text, inputs)

        wrapper.text = text  # type: ignore[attr-defined]
        wrapper.unit = unit  # type: ignore[attr-defined]
        wrapper.params = params  # type: ignore[attr-defined]
        wrapper.raw = fn  # type: ignore[attr-defined]
        FORMULAS.append(wrapper)
        return wrapper

    return deco
