"""Memory tiers (ledger rows K1–K4): drain time = capacity ÷ bandwidth, and which tier holds a cache.

Numbers come from the memory-tier catalog and `tokenmath.kvtiers` (issue 5).
"""

from __future__ import annotations

from .claim import NotComputable, claim, need, unverifiable

SECTION = "tiers"


def _pending(what: str):
    need("tokenmath.kvtiers", "memory tiers, issue 5")
    raise NotComputable(f"tokenmath.kvtiers exposes no {what} yet")


@claim("K1", SECTION)
def k1(ctx):
    _pending("best tier by hold time")


@claim("K2", SECTION)
def k2(ctx):
    _pending("drain times")


@claim("K3", SECTION)
def k3(ctx):
    _pending("tier for 5 minutes and 1 hour")


unverifiable("K4", SECTION)
