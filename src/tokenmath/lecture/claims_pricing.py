"""Reading API prices (ledger rows A1–A9): price sheets read forwards and backwards.

Numbers come from the price-sheet catalog and `tokenmath.pricing` / `tokenmath.infer` (issue 5).
"""

from __future__ import annotations

from .claim import NotComputable, claim, need, unverifiable

SECTION = "pricing"


def _pending(module: str, what: str):
    need(module, "price sheets and their inversion, issue 5")
    raise NotComputable(f"{module} exposes no {what} yet")


@claim("A1", SECTION)
def a1(ctx):
    _pending("tokenmath.pricing", "long-context price step")


@claim("A2", SECTION)
def a2(ctx):
    _pending("tokenmath.sweep", "KV crossover context")


@claim("A3", SECTION)
def a3(ctx):
    _pending("tokenmath.infer", "KV bytes per token from a price step")


@claim("A4", SECTION)
def a4(ctx):
    _pending("tokenmath.infer", "KV layout check")


unverifiable("A5", SECTION)


@claim("A6", SECTION)
def a6(ctx):
    _pending("tokenmath.pricing", "output/input ratios")


@claim("A7", SECTION)
def a7(ctx):
    _pending("tokenmath.infer", "decode utilisation from the price ratio")


@claim("A8", SECTION)
def a8(ctx):
    _pending("tokenmath.pricing", "cache-hit discounts")


@claim("A9", SECTION)
def a9(ctx):
    _pending("tokenmath.pricing", "Claude cache-write prices")
