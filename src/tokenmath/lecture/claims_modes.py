"""Fast and slow modes (ledger rows FM1–FM4): the batch a fast mode must run, and what a slow mode saves.

All numbers come from `tokenmath.modes` (issue 3) and the price sheets (issue 5).
"""

from __future__ import annotations

from .claim import NotComputable, claim, need

SECTION = "modes"


def _pending(module: str, what: str, fn: str):
    need(module, what)
    raise NotComputable(f"{module} exposes no {fn} yet")


@claim("FM1", SECTION)
def fm1(ctx):
    _pending("tokenmath.pricing", "price sheets with fast tiers, issue 5", "fast-tier price multiple")


@claim("FM2", SECTION)
def fm2(ctx):
    _pending("tokenmath.modes", "fast and slow modes, issue 3", "batch_ratio")


@claim("FM3", SECTION)
def fm3(ctx):
    _pending("tokenmath.modes", "fast and slow modes, issue 3", "frontier fit")


@claim("FM4", SECTION)
def fm4(ctx):
    _pending("tokenmath.modes", "fast and slow modes, issue 3", "slow_mode_max_saving")
