"""The lecture, executable: every claim of the ledger derived from the catalog, with a verdict.

    from tokenmath.lecture import run, LectureContext
    claims = run(LectureContext(["gb200.hbm_bandwidth_bytes_per_s=4TB/s"]))

Claims live in one module per lecture section (`claims_roofline.py`, ...); each registers itself
with its ledger id. `run` calls them in ledger order and turns anything a claim cannot compute into
an explicit "not computable" verdict with the reason.
"""

from __future__ import annotations

import importlib
import re
import time
from typing import Callable

from ..core.derive import Q, value_of
from ..core.errors import TokenmathError
from .claim import NOT_COMPUTABLE, REGISTRY, VERDICTS, Claim, Finding, NotComputable
from .seeds import SeedError, seed_errors
from .context import LectureContext

__all__ = ["run", "run_one", "LectureContext", "Claim", "SECTIONS", "ids", "VERDICTS", "SeedError", "seed_errors"]

# The lecture's sections, in its order (ledger letters in brackets).
SECTIONS = {
    "batching": "Batching and the roofline",
    "schedule": "The departing-train schedule",
    "modes": "Fast and slow modes",
    "moe": "Mixture-of-experts on racks",
    "pipelining": "Pipelining",
    "memory": "The memory wall",
    "lifecycle": "The lifecycle balance",
    "pricing": "Reading API prices",
    "tiers": "Memory tiers",
    "context": "Long context",
    "reversible": "Reversible layers",
    "tangents": "Tangents and metadata",
}

_MODULES = ["claims_roofline", "claims_schedule", "claims_modes", "claims_moe", "claims_pipelining",
            "claims_memory", "claims_lifecycle", "claims_pricing", "claims_tiers", "claims_context",
            "claims_reversible", "claims_tangents"]
for _m in _MODULES:
    importlib.import_module(f"{__name__}.{_m}")

_ORDER = ["R", "T", "FM", "S", "E", "P", "M", "C", "A", "K", "L", "X", "B", "W"]


def _key(claim_id: str) -> tuple[int, int]:
    letters, num = re.match(r"([A-Z]+)(\d+)", claim_id).groups()  # type: ignore[union-attr]
    return _ORDER.index(letters), int(num)


def ids() -> list[str]:
    """Every registered claim id, in the lecture's order."""
    return sorted(REGISTRY, key=_key)


def run_one(ctx: LectureContext, claim_id: str) -> Claim:
    spec = REGISTRY[claim_id]
    said = ctx.said(claim_id)
    t0 = time.perf_counter()
    try:
        f = spec.fn(ctx)
    except NotComputable as e:
        f = Finding(note=str(e))
    except TokenmathError as e:
        f = Finding(note=f"input not available: {e}")
    except Exception as e:  # a bug in a claim must not sink the report; the test suite looks for these
        f = Finding(note=f"internal error {type(e).__name__}: {e}")
    if f.verdict == NOT_COMPUTABLE and not f.note:
        f.note = "no reason given"
    derivation = f.derivation or (value_of(f.value) is not None and isinstance(f.value, Q) and f.value.explain()) or ""
    val = value_of(f.value)
    return Claim(
        id=claim_id, section=spec.section, statement=said.get("statement", ""), said=str(said.get("said", "–")),
        value=None if val is None else float(val), unit=f.unit, value_text=f.value_text, derivation=derivation,
        verdict=f.verdict, note=f.note, at=str(said.get("at", "")), plots=list(f.plots),
        seconds=time.perf_counter() - t0, check=f.check, extras=dict(f.extras))


def run(ctx: LectureContext | None = None, on_claim: Callable[[Claim], None] | None = None,
        only: list[str] | None = None) -> list[Claim]:
    """Every claim (or `only` these ids), in order; `on_claim` sees each as it is computed."""
    ctx = ctx or LectureContext()
    out = []
    for cid in ids():
        if only and cid not in only:
            continue
        c = run_one(ctx, cid)
        out.append(c)
        if on_claim:
            on_claim(c)
    return out
