"""Counts on the command line for training and lifecycle: '15.6e12', '15.6T', '100B', '50M' (decimal suffixes).

B means billion here (parameters, tokens), never bytes.
"""

from __future__ import annotations

from .grid_args import parse_number

__all__ = ["parse_count"]

_SUFFIX = {"k": 1e3, "K": 1e3, "M": 1e6, "B": 1e9, "G": 1e9, "T": 1e12, "P": 1e15}


def parse_count(text: str, name: str) -> float:
    """'15.6T' -> 1.56e13, '1e11' -> 1e11, '100B' -> 1e11; a clear one-line error otherwise."""
    return parse_number(text, name, _SUFFIX, "15.6e12, 15.6T, 100B, 50M")
