"""The records a lecture run reads, with `--set` applied, and the lecture's own statements.

Claims never call the loaders directly: they ask the context (`ctx.system("gb200-nvl72")`,
`ctx.model("deepseek-v3")`, `ctx.chip("h100-sxm")`), which applies every `--set` that targets the record.
A setting names its target in one of three ways:

    gb200.hbm_bandwidth_bytes_per_s=4TB/s     one catalog entry (a chip entry also changes every
                                              system built from it, and its HBM memory tier; a chip
                                              field set on a system changes that system's chip)
    chip.hbm_bandwidth_bytes_per_s=4TB/s      every record of a role: chip, system, model, priors,
                                              tier, prices, assumptions
    hbm_bandwidth_bytes_per_s=4TB/s           every record that has the field
    hdd-exos-x24.read_bandwidth_bytes_per_s=1GB/s          a memory tier
    anthropic/2026-03-13.offers.claude-opus-4.6.input_per_mtok=4   one price sheet's offer
    anthropic/claude-opus-4.6.input_per_mtok=4             that offer on every sheet that lists it
    google/gemini-3.1-pro.long_context.above_200k.above_tokens=50000   nested figures by dotted path

Values are parsed by `load.apply_overrides`, so units follow the field's name.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..core.load import CatalogError, PACKAGE_CATALOG, apply_overrides, bind_priors, load_assumptions, load_chip, load_model
from ..core.load import load_offer, load_price_sheet, load_priors, load_system, load_tier, names, price_sheet_dates
from ..core.load import providers, read_entry, suggest
from ..core.pricing_records import InferenceAssumptions, MemoryTier, PriceSheet
from ..core.records import Chip, Model, Priors, Record, System

__all__ = ["LectureContext", "LECTURE_FILE"]

LECTURE_FILE = PACKAGE_CATALOG / "lecture" / "pope-2026.yaml"
ROLES = {"chip": Chip, "system": System, "model": Model, "priors": Priors, "tier": MemoryTier, "prices": PriceSheet,
         "assumptions": InferenceAssumptions}
KIND_OF_ROLE = {"chip": "hardware", "system": "systems", "model": "models", "priors": "priors", "tier": "tiers",
                "prices": "prices", "assumptions": "assumptions"}
_LOADERS = {"chip": load_chip, "system": load_system, "model": load_model, "priors": load_priors, "tier": load_tier,
            "prices": lambda n: load_price_sheet(*n.split("/", 1)), "assumptions": load_assumptions}


@dataclass(frozen=True)
class Setting:
    text: str  # the original FIELD=VALUE
    target: str  # entry name, role name, or "" for any record with the field
    field: str  # field, possibly dotted (peak_flop_per_s.fp8)
    value: str
    offer: str = ""  # PROVIDER/OFFER shorthand: the offer every matching sheet must list

    @property
    def top(self) -> str:
        return self.field.split(".")[0]


class LectureContext:
    """Catalog records for the claims, with overrides; caches what it loads."""

    def __init__(self, settings: list[str] | None = None, lecture_file: Path | str = LECTURE_FILE):
        self.settings = [self._parse(s) for s in settings or []]
        self.lecture = read_entry(Path(lecture_file))
        self._cache: dict[tuple[str, str], Record] = {}
        self._memo: dict = {}
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

    def tolerance(self, claim_id: str) -> tuple[float, str]:
        """The relative band the lecture's wording allows for a claim, and why (the lecture file's `tolerance`)."""
        tol = self.said(claim_id).get("tolerance")
        if tol is None:
            raise KeyError(f"lecture file gives no tolerance for {claim_id}")
        why = self.lecture["sources"].get(f"claims.{claim_id}.tolerance", "")
        return float(tol), why

    def tolerance_text(self, claim_id: str) -> str:
        from ..core.units import fmt

        tol, why = self.tolerance(claim_id)
        return f"±{fmt(tol * 100)} %" + (f" ({why})" if why else "")

    def seed_errors(self) -> list[dict]:
        """What the seed summaries got wrong: seed file, claim id, what it says, the correction (a template)."""
        return list(self.lecture.get("seed_errors") or [])

    def memo(self, key, make):
        """An analysis result several claims share (e.g. one `place` call), computed once per run."""
        if key not in self._memo:
            self._memo[key] = make()
        return self._memo[key]

    # ---- records -------------------------------------------------------------------------------
    def chip(self, name: str) -> Chip:
        return self._get("chip", name)  # type: ignore[return-value]

    def system(self, name: str) -> System:
        return self._get("system", name)  # type: ignore[return-value]

    def model(self, name: str) -> Model:
        return self._get("model", name)  # type: ignore[return-value]

    def priors(self, name: str = "default") -> Priors:
        return self._get("priors", name)  # type: ignore[return-value]

    def tier(self, name: str) -> MemoryTier:
        return self._get("tier", name)  # type: ignore[return-value]

    def assumptions(self, name: str = "default") -> InferenceAssumptions:
        return self._get("assumptions", name)  # type: ignore[return-value]

    def sheet(self, provider: str, date: str) -> PriceSheet:
        return self._get("prices", f"{provider}/{date}")  # type: ignore[return-value]

    def sheets(self) -> list[PriceSheet]:
        """Every price sheet in the catalog, with overrides, oldest first within a provider."""
        return [self.sheet(p, d) for p in providers() for d in price_sheet_dates(p)]

    def offer(self, ref: str) -> tuple[PriceSheet, str]:
        """`PROVIDER/OFFER[@DATE]` -> (the sheet that lists it, with overrides; the offer id)."""
        name, _, at = ref.partition("@")
        sheet, oid, _ = load_offer(name, at or None)
        return self.sheet(sheet.provider, sheet.date), oid

    def tier_rows(self, explain: bool = False):
        """Every memory tier, with overrides, as `economics.kvtiers` prices them."""
        from ..economics.kvtiers import tier_rows

        return tier_rows(explain=explain, records=[self.tier(n) for n in names("tiers")])

    def read_offer(self, ref: str):
        """An offer's price sheet read backwards (`economics.infer.read_offer`) with every override applied."""
        from ..economics.infer import read_offer

        sheet, oid = self.offer(ref)
        return read_offer(f"{sheet.provider}/{oid}", sheet=sheet, rows=self.tier_rows(),
                          assumptions=self.assumptions())

    def names(self, role: str) -> list[str]:
        return names(KIND_OF_ROLE[role])

    def _get(self, role: str, name: str) -> Record:
        key = (role, name)
        if key not in self._cache:
            self._cache[key] = self._build(role, name)
        return self._cache[key]

    def _build(self, role: str, name: str) -> Record:
        rec: Record = _LOADERS[role](name)
        if role == "system":
            sys_ = rec
            chip = self.chip(sys_.chip.name) if sys_.chip.name in names("hardware") else sys_.chip  # type: ignore[attr-defined]
            rec = sys_.evolve(chip=chip) if chip is not sys_.chip else sys_  # type: ignore[attr-defined]
        elif role == "tier" and rec.chip:  # type: ignore[attr-defined]
            rec = self._hbm_tier(rec)  # type: ignore[arg-type]
        for s in self.settings:
            rec = self._apply(role, name, rec, s)
        if role == "chip":  # priors changed by --set travel with the chip to every analysis that reads them
            p = self.priors(rec.priors)  # type: ignore[attr-defined]
            if p is not load_priors(rec.priors):  # type: ignore[attr-defined]
                rec = rec.evolve(priors=bind_priors(p))
        return rec

    def _hbm_tier(self, t: MemoryTier) -> MemoryTier:
        """An HBM tier follows its chip's capacity and bandwidth (with the chip's overrides)."""
        base, chip = load_chip(t.chip), self.chip(t.chip)  # type: ignore[arg-type]
        changes = {}
        for field, chip_field in (("capacity_bytes", "hbm_capacity_bytes"),
                                  ("read_bandwidth_bytes_per_s", "hbm_bandwidth_bytes_per_s")):
            if getattr(t, field) == getattr(base, chip_field) != getattr(chip, chip_field):
                changes[field] = getattr(chip, chip_field)
        return t.evolve(**changes) if changes else t  # type: ignore[return-value]

    def _apply(self, role: str, name: str, rec: Record, s: Setting) -> Record:
        cls = type(rec)
        if s.target.endswith("/*"):  # PROVIDER/OFFER shorthand: every sheet of that provider listing the offer
            if role != "prices" or not name.startswith(s.target[:-1]) or s.offer not in rec.offers:  # type: ignore[attr-defined]
                return rec
            return apply_overrides({role: rec}, [f"{s.field}={s.value}"])[role]
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
        provider, _, rest = key.partition("/")
        if rest and provider in providers():  # PROVIDER/OFFER.FIELD
            offers = {o for d in price_sheet_dates(provider) for o in load_price_sheet(provider, d).offers}
            for offer in sorted(offers, key=len, reverse=True):
                if rest.startswith(offer + ".") and len(rest) > len(offer) + 1:
                    return Setting(text, f"{provider}/*", f"offers.{offer}.{rest[len(offer) + 1:]}", value, offer)
            hint = suggest(rest.split(".")[0], sorted(offers))
            more = f"; did you mean {', '.join(hint)}?" if hint else ""
            raise CatalogError(f"--set {text!r}: {provider} has no offer {rest.split('.')[0]!r}{more}")
        return Setting(text, "", key, value)

    def _check(self, s: Setting) -> None:
        """Fail early, in one line, on a setting that can apply to nothing or has a bad value."""
        if s.target.endswith("/*"):
            classes = [PriceSheet]
        elif s.target in ROLES:
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
            try:
                apply_overrides({role: rec}, [f"{s.field}={s.value}"])
            except CatalogError as e:  # one line, naming the setting as the user wrote it
                key = s.text.split("=", 1)[0].strip()
                raise CatalogError(str(e).replace(f"--set {s.field}", f"--set {key}", 1)) from None

    def _sample(self, s: Setting) -> tuple[str, Record] | None:
        if s.target.endswith("/*"):
            sheet, _, _ = load_offer(f"{s.target[:-2]}/{s.offer}")
            return "prices", sheet
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
            return role, _LOADERS[role](pick)
        if s.target and s.target in names("systems"):
            return "chip", load_system(s.target).chip
        return None
