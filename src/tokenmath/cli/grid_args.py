"""Command-line grids for the serving commands: '4096', '1,8,64', '1:131072' (log-spaced), '1k:2M:30'.

Numbers may carry k / M / G suffixes (decimal). A range LO:HI[:N] is N log-spaced points (default
about 8 per decade), rounded to whole numbers when `integer` is set.
"""

from __future__ import annotations

import numpy as np

from ..core.errors import InputError, not_one_of

__all__ = ["parse_number", "parse_grid", "parse_list", "MAX_AXIS_POINTS"]

_SUFFIX = {"k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9}


def parse_number(text: str, name: str, suffixes: dict[str, float] = _SUFFIX,
                 example: str = "4096, 4k, 1M") -> float:
    """'4k' -> 4000.0 with the given decimal suffixes; a clear one-line error otherwise."""
    t = str(text).strip().replace("_", "").replace(",", "")
    mult = 1.0
    if t and t[-1] in suffixes:
        mult, t = suffixes[t[-1]], t[:-1]
    try:
        x = float(t) * mult
    except ValueError:
        raise InputError(f"{name} {text!r} is not a number (e.g. {example})") from None
    if not np.isfinite(x):
        raise InputError(f"{name} {text!r} is not a finite number")
    return x


MAX_AXIS_POINTS = 100_000


def parse_grid(text: str, name: str, integer: bool = True) -> np.ndarray:
    """'4096' -> [4096]; '1,8,64' -> [1, 8, 64]; '1:1M' -> log-spaced; '1:1M:20' -> 20 log-spaced points.

    A range that starts at 0 has 0 and then log-spaced points from 1. One axis holds at most
    MAX_AXIS_POINTS points; a command that crosses axes caps their product (`sweep.check_grid_size`).
    """
    text = text.strip()
    if ":" in text:
        parts = text.split(":")
        if len(parts) not in (2, 3):
            raise InputError(f"{name} {text!r}: a range is LO:HI or LO:HI:N")
        lo, hi = parse_number(parts[0], name), parse_number(parts[1], name)
        if lo < 0 or hi < lo:
            raise InputError(f"{name} {text!r}: need 0 ≤ LO ≤ HI")
        lo_pos = max(lo, 1.0)
        if len(parts) == 3:
            n_text = parse_number(parts[2], name)
            if n_text != int(n_text):
                raise InputError(f"{name} {text!r}: N, the number of points, is a whole number")
            n = int(n_text)
        else:
            n = max(2, int(round(8 * np.log10(hi / lo_pos))) + 1) if hi > lo_pos else 1
        if not 1 <= n <= MAX_AXIS_POINTS:
            raise InputError(f"{name} {text!r}: between 1 and {MAX_AXIS_POINTS:,} points")
        pts = np.geomspace(lo_pos, hi, n) if hi > lo_pos else np.array([hi])
        if lo == 0 and hi > 0:
            pts = np.concatenate([[0.0], pts])
    else:
        items = [p for p in text.split(",") if p.strip()]
        if len(items) > MAX_AXIS_POINTS:
            raise InputError(f"{name}: at most {MAX_AXIS_POINTS:,} values")
        pts = np.array([parse_number(p, name) for p in items])
    if pts.size == 0:
        raise InputError(f"{name} {text!r} has no values (e.g. 4096, 1,8,64 or 1:131072)")
    if integer:
        pts = np.round(pts)
    return np.unique(pts) if ":" in text else pts


def parse_list(text: str | None, allowed: tuple[str, ...] | None = None, name: str = "") -> list[str]:
    if not text:
        return []
    items = [x.strip() for x in text.split(",") if x.strip()]
    if allowed is not None:
        for x in items:
            if x not in allowed:
                raise not_one_of(name, x, allowed)
    return items
