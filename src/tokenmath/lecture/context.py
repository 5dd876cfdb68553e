"""The records a lecture run reads, with `--set` applied, and the lecture's own statements.

Claims never call the loaders directly: they ask the context (`ctx.system("gb200-nvl72")`,
`ctx.model("deepseek-v3")`, `ctx.chip("h100-sxm")`), which applies every `--set` that targets the record.
A setting names its target in one of three ways:

    gb200.hbm_bandwidth_bytes_per_s=4TB/s     one catalog entry (a chip entry also changes every
                                              system built from it; a chip field set on a system
                                              changes that system's chip)
    chip.hbm_bandwidth_bytes_per_s=4TB/s      every record of a role: chip, system, model, priors
    hbm_bandwidth_bytes_per_s=4TB/s           every record that has the field

Values are parsed by `load.apply_overrides`, so units follow the field's name.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..core.load import CatalogError, PACKAGE_CATALOG, apply_overrides, load_chip, load_model, load_priors, load_system
from ..core.load import names, read_entry, suggest
from ..core.records import Chip, Model, Priors, Record, System

__all__ = ["LectureContext", "LECTURE_FILE"]

LECTURE_FILE = PACKAGE_CATALOG / "lecture" / "pope-2026.yaml"
ROLES = {"chip": Chip, "system": System, "model": Model, "priors": Priors}
KIND_OF_ROLE = {"chip": "hardware", "system": "systems", "model": "models", "priors": "priors"}


@dataclass(frozen=True)
class Setting:
    text: str  # the original FIELD=VALUE
    target: str  # entry name, role name, or "" for any record with the field
    field: str  # field, possibly dotted (peak_flop_per_s.fp8)
    value: str

    @property
    def top(self) -> str:
        return self.field.split(".")[0]


class LectureContext:
    """Catalog records for the claims, with overrides; caches what it loads."""

    def __init__(self, settings: list[str] | None = None, lecture_file: Path | str = LECTURE_FILE):
        self.settings = [self._parse(s) for s in settings or []]
        self.lecture = read_entry(Path(lecture_file))
        self._cache: dict[tuple[str, str], Record] = {}
        for s in self.settings:
            self._check(s)

    # ---- the lecture's statements ----------------------------------------------------------------
    def said(self, claim_id: str) -> dict:
        return (self.lecture.get("claims") or {}).get(claim_id, {})

    def said_input(self, claim_id: str, key: str):
        inputs = self.said(claim_id).get("inputs") or {}
        if key not in inputs:
            raise KeyError(f"lecture file has no input {key!r} for {claim_id}")
        return inputs[key]

    def said_source(self, claim_id: str, key: str) -> str:
        src = self.lecture["sources"].get(f"claims.{claim_id}.inputs.{key}", "")
        return f"lecture ({src})" if src else "lecture"

    # ---- records -------------------------------------------------------------------------------
    def chip(self, name: str) -> Chip:
        return self._get("chip", name)  # type: ignore[return-value]

    def system(self, name: str) -> System:
        return self._get("system", name)  # type: ignore[return-value]

    def model(self, name: str) -> Model:
        return self._get("model", name)  # type: ignore[return-value]

    def priors(self, name: str = "default") -> Priors:
        return self._get("priors", name)  # type: ignore[return-value]

    def names(self, role: str) -> list[str]:
        return names(KIND_OF_ROLE[role])

    def _get(self, role: str, name: str) -> Record:
        key = (role, name)
        if key not in self._cache:
            self._cache[key] = self._build(role, name)
        return self._cache[key]

    def _build(self, role: str, name: str) -> Record:
        if role == "chip":
            rec: Record = load_chip(name)
        elif role == "model":
            rec = load_model(name)
        elif role == "priors":
            rec = load_priors(name)
        else:
            sys_ = load_system(name)
            chip = self.chip(sys_.chip.name) if sys_.chip.name in names("hardware") else sys_.chip
            rec = sys_.evolve(chip=chip) if chip is not sys_.chip else sys_
        for s in self.settings:
            rec = self._apply(role, name, rec, s)
        return rec

    def _apply(self, role: str, name: str, rec: Record, s: Setting) -> Record:
        cls = type(rec)
        if s.target and s.target not in ROLES and s.target != name:
            return rec
        if s.target in ROLES and s.target != role:
            return rec
        if s.top in cls.model_fields:
            return apply_overrides({role: rec}, [f"{s.field}={s.value}"])[role]
        if role == "system" and s.target == name and s.top in Chip.model_fields:
            chip = apply_overrides({"chip": rec.chip}, [f"{s.field}={s.value}"])["chip"]  # type: ignore[attr-defined]
            return rec.evolve(chip=chip)
        return rec

    # ---- checking settings up front --------------------------------------------------------------
    @staticmethod
    def _parse(text: str) -> Setting:
        if "=" not in text:
            raise CatalogError(f"--set {text!r}: expected FIELD=VALUE, e.g. gb200.hbm_bandwidth_bytes_per_s=4TB/s")
        key, value = (x.strip() for x in text.split("=", 1))
        every = {n for kind in KIND_OF_ROLE.values() for n in names(kind)} | set(ROLES)
        for target in sorted(every, key=len, reverse=True):  # entry names may hold dots (llama-3.1-8b)
            if key.startswith(target + ".") and len(key) > len(target) + 1:
                return Setting(text, target, key[len(target) + 1:], value)
        return Setting(text, "", key, value)

    def _check(self, s: Setting) -> None:
        """Fail early, in one line, on a setting that can apply to nothing or has a bad value."""
        if s.target in ROLES:
            classes = [ROLES[s.target]]
        elif s.target:
            classes = [ROLES[r] for r, kind in KIND_OF_ROLE.items() if s.target in names(kind)]
            if System in classes:
                classes.append(Chip)
        else:
            classes = list(ROLES.values())
        if not any(s.top in c.model_fields for c in classes):
            every = sorted({f for c in classes for f in c.model_fields if f not in Record.model_fields})
            hint = suggest(s.top, every)
            more = f"; did you mean {', '.join(hint)}?" if hint else ""
            where = f" on {s.target}" if s.target else ""
            raise CatalogError(f"--set {s.text!r}: no field {s.top!r}{where}{more}")
        sample = self._sample(s)
        if sample is not None:
            role, rec = sample
            apply_overrides({role: rec}, [f"{s.field}={s.value}"])  # raises a one-line CatalogError

    def _sample(self, s: Setting) -> tuple[str, Record] | None:
        for role, kind in KIND_OF_ROLE.items():
            if s.target and s.target not in ROLES and s.target not in names(kind):
                continue
            if s.target in ROLES and s.target != role:
                continue
            if s.top not in ROLES[role].model_fields:
                continue
            pick = s.target if s.target and s.target not in ROLES else (names(kind) or [None])[0]
            if pick is None:
                continue
            loader = {"chip": load_chip, "system": load_system, "model": load_model, "priors": load_priors}[role]
            return role, loader(pick)
        if s.target and s.target in names("systems"):
            return "chip", load_system(s.target).chip
        return None
