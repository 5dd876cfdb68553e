"""Where the seed summaries are wrong: the lecture file's `seed_errors`, each correction filled in from the claims.

A correction is a template: `{R7}` becomes claim R7's value as the report prints it, `{R4.floor}` a named
number claim R4 exposes (`Finding.extras`). So a correction follows the catalog like the verdicts do.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from .claim import Claim

__all__ = ["SeedError", "seed_errors"]

_SLOT = re.compile(r"\{([A-Z]+\d+)(?:\.([a-z_]+))?\}")


@dataclass
class SeedError:
    seed: str  # the summary's file id(s): "000", "002, 004"
    claim: str  # the ledger row that checks it
    says: str
    correction: str

    def to_dict(self) -> dict:
        return asdict(self)


def _fill(text: str, by_id: dict[str, Claim]) -> str:
    def one(m: re.Match) -> str:
        c = by_id.get(m.group(1))
        if c is None:
            return "(not computed in this run)"
        if m.group(2):
            return c.extras.get(m.group(2), "(not computed in this run)")
        return c.printed() if c.value is not None or c.value_text else "(not computable)"

    return _SLOT.sub(one, text)


def seed_errors(rows: list[dict], claims: list[Claim]) -> list[SeedError]:
    """The lecture file's seed errors with corrections filled in from these claims."""
    by_id = {c.id: c for c in claims}
    return [SeedError(str(r["seed"]), str(r["claim"]), str(r["says"]), _fill(str(r["correction"]), by_id))
            for r in rows]
