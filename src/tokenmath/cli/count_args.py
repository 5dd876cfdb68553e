"""Counts on the command line for training and lifecycle: '15.6e12', '15.6T', '100B', '50M' (decimal suffixes).

B means billion here (parameters, tokens), never bytes.
"""

from __future__ import annotations

import math

from ..errors import InputError

__all__ = ["parse_count"]

_SUFFIX = {"k": 1e3, "K": 1e3, "M": 1e6, "B": 1e9, "G": 1e9, "T": 1e12, "P": 1e15}


def parse_count(text: str, name: str) -> float:
    """'15.6T' -> 1.56e13, '1e11' -> 1e11, '100B' -> 1e11; a clear one-line error otherwise."""
    t = str(text).strip().replace("_", "").replace(",", "")
    mult = 1.0
    if t and t[-1] in _SUFFIX:
        mult, t = _SUFFIX[t[-1]], t[:-1]
    try:
        x = float(t) * mult
    except ValueError:
        raise InputError(f"{name} {text!r} is not a number (e.g. 15.6e12, 15.6T, 100B, 50M)") from None
    if not math.isfinite(x):
        raise InputError(f"{name} {text!r} is not a finite number")
    return x
