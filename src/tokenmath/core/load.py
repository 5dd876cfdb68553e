"""The one place that reads files: catalog YAML and Hugging Face config.json into frozen records.

Catalog entries are YAML, one per file, under `catalog/<kind>/NAME.yaml` in the package, and in any
directory named by `--catalog DIR` or the TOKENMATH_CATALOG environment variable (later directories
override earlier ones). A figure may be written bare (`hbm_bandwidth_bytes_per_s: 3.35 TB/s`, the
entry's `source` applies) or with its own source (`{value: 3.35 TB/s, source: ..., estimate: true}`).
Quantities with units are parsed by the unit the field's name promises.

Every file is read through `read_text`, with a size limit (MAX_ENTRY_BYTES for YAML and config.json,
MAX_TABLE_BYTES for CSV tables), so `/dev/zero` or a huge file is refused in one line instead of
filling memory. YAML is read without aliases (`&a`/`*a`): catalog entries never need them, and they
are how a file expands to gigabytes ("billion laughs") or into a cycle.
"""

from __future__ import annotations

import copy
import difflib
import io
import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from .errors import CatalogError
from .files import MAX_ENTRY_BYTES, MAX_TABLE_BYTES, read_text
from .hfconfig import model_from_hf_config, read_hf_config
from .pricing_records import InferenceAssumptions, MemoryTier, PriceSheet, date_key
from .records import Chip, EngineSettings, Fabric, Intervals, Model, Priors, Record, System, TrainingPrior
from .units import DIMENSION_OF_SUFFIX, UnitError, parse_quantity

__all__ = [
    "CatalogError", "load_chip", "load_system", "load_model", "load_priors", "names", "catalog_dirs",
    "add_catalog_dir", "set_catalog_dirs", "read_entry", "apply_overrides", "suggest", "load_entry", "KINDS",
    "load_aliases", "load_alias_model", "read_table", "load_training_priors", "read_text", "parse_yaml",
    "MAX_ENTRY_BYTES", "MAX_TABLE_BYTES", "bind_priors", "load_intervals", "other_hardware_name", "other_model_name",
    "suggest_named",
]

PACKAGE_CATALOG = Path(__file__).resolve().parents[1] / "catalog"

# catalog folder -> record type
KINDS: dict[str, type[Record]] = {"hardware": Chip, "systems": System, "models": Model, "priors": Priors,
                                  "training": TrainingPrior, "fabrics": Fabric,
                                  "intervals": Intervals}
# price sheets, memory tiers and the assumptions for reading prices backwards (pricing_records.py)
KINDS.update({"prices": PriceSheet, "tiers": MemoryTier, "assumptions": InferenceAssumptions})
# kinds whose entries sit one folder deeper and are named by it: prices/<provider>/<date>.yaml
NESTED_KINDS = {"prices"}

_extra_dirs: list[Path] = []


def add_catalog_dir(path: str | Path) -> None:
    set_catalog_dirs([*_extra_dirs, path])


def set_catalog_dirs(paths: list[str | Path]) -> None:
    """Exactly these extra catalog directories (one command line's --catalog), replacing earlier ones."""
    for p in paths:
        if not Path(p).is_dir():
            raise CatalogError(f"catalog directory {p} does not exist")
    if [Path(p) for p in paths] != _extra_dirs:
        _extra_dirs[:] = [Path(p) for p in paths]
        for cached in (_index, _load_cached, _engine_cached, _other_names, load_eager_ops):
            cached.cache_clear()


def catalog_dirs() -> list[Path]:
    env = [Path(p) for p in os.environ.get("TOKENMATH_CATALOG", "").split(os.pathsep) if p]
    return [PACKAGE_CATALOG, *env, *_extra_dirs]


@lru_cache(maxsize=None)
def _index(kind: str) -> dict[str, Path]:
    out: dict[str, Path] = {}
    for d in catalog_dirs():
        sub = d / kind
        if sub.is_dir():
            for f in sorted(sub.rglob("*.yaml")):
                out[f.relative_to(sub).with_suffix("").as_posix() if kind in NESTED_KINDS else f.stem] = f
    return out


def names(kind: str) -> list[str]:
    """Every entry name of a kind ('hardware', 'systems', 'models', 'priors', ...)."""
    return sorted(_index(kind))


def suggest(name: str, candidates: list[str], n: int = 3) -> list[str]:
    low = name.lower()
    close = difflib.get_close_matches(low, candidates, n=n, cutoff=0.4)
    contains = [c for c in candidates if low in c or c in low]
    return list(dict.fromkeys(contains[:n] + close))[:n]


def _unknown(kind: str, name: str) -> CatalogError:
    label = {"hardware": "chip", "systems": "system", "models": "model", "priors": "priors"}.get(kind, kind)
    hint = suggest_named(name, kind)
    more = f"; did you mean {', '.join(hint)}?" if hint else ""
    return CatalogError(f"unknown {label} {name!r}{more} (see `tokenmath catalog list`)")


def suggest_named(name: str, *kinds: str, n: int = 3) -> list[str]:
    """Entries of `kinds` close to `name`, by their catalog names and their other names (catalog/aliases/
    names.yaml: a cloud instance, a product name, a release): an other name is offered as 'NAME (entry)'.
    A Hugging Face org/ prefix is ignored and case does not count."""
    key = _name_key(name.rsplit("/", 1)[-1])
    table = _other_names()
    offer: dict[str, tuple[str, str]] = {}  # a name's key -> (the entry, how to offer it)
    for kind in kinds:
        offer.update({e: (e, e) for e in names(kind)})
        group = "models" if kind == "models" else "hardware" if kind in ("hardware", "systems") else None
        for entry, rec in ((table.get(group) or {}).items() if group else ()):
            if entry in _index(kind) or kind == "systems" and entry in _index("hardware"):
                offer.update({_name_key(o): (entry, f"{o} ({entry})") for o in rec.get("names", [])
                              if _name_key(o) not in offer})
    picked: dict[str, str] = {}  # one offer per entry, the closest
    for k in suggest(key, list(offer), 4 * n):
        picked.setdefault(*offer[k])
    return list(picked.values())[:n]


# ---- reading one YAML entry --------------------------------------------------------------------

def _dimension(key: str) -> str | None:
    for suffix, dim in sorted(DIMENSION_OF_SUFFIX.items(), key=lambda kv: -len(kv[0])):
        if key.endswith(suffix):
            return dim
    return None


def _figures(node: Any, path: str, dim: str | None, sources: dict, estimates: list, file: Path) -> Any:
    """Replace {value, source, estimate} figures by their parsed value, collecting sources."""
    if isinstance(node, dict) and "value" in node and set(node) <= {"value", "source", "estimate", "note"}:
        if node.get("source"):
            sources[path] = str(node["source"])
        if node.get("estimate"):
            estimates.append(path)
        return _figures(node["value"], path, dim, sources, estimates, file)
    if isinstance(node, dict):
        out = {}
        for k, v in node.items():
            sub = f"{path}.{k}" if path else str(k)
            out[k] = _figures(v, sub, _dimension(str(k)) or (dim if path else None), sources, estimates, file)
        return out
    if isinstance(node, list):
        return [_figures(v, path, dim, sources, estimates, file) for v in node]
    if isinstance(node, str) and dim is not None:
        try:
            return parse_quantity(node, dim)
        except UnitError as e:
            raise CatalogError(f"{file}: field {path!r}: {e}") from None
    return node


class _NoAliasLoader(yaml.SafeLoader):
    """SafeLoader that refuses aliases (no cycles, no exponential expansion) and a key given twice in one map
    (YAML keeps the last silently: the first entry's fields would vanish)."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                dup = key in seen
            except TypeError:  # an unhashable key: SafeLoader's own error follows
                break
            if dup:
                raise yaml.constructor.ConstructorError(None, None, f"key {key!r} given twice",
                                                        key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep)

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(None, None, "aliases (*name) are not allowed", event.start_mark)
        return super().compose_node(parent, index)


def _yaml_problem(e: yaml.YAMLError) -> str:
    """One line for any YAML error: where, and what."""
    mark = getattr(e, "problem_mark", None)
    if isinstance(e, yaml.reader.ReaderError):
        return f"character {e.position}: {e.reason}"
    where = f"line {mark.line + 1}: " if mark is not None else ""
    what = getattr(e, "problem", None) or str(e)
    return where + " ".join(str(what).split())


def parse_yaml(text: str, where: str):
    """YAML text (a file's, or a --set value) into Python values; any problem is one CatalogError line."""
    try:
        return yaml.load(text, Loader=_NoAliasLoader)  # noqa: S506 (a SafeLoader)
    except yaml.YAMLError as e:
        raise CatalogError(f"{where}: malformed YAML ({_yaml_problem(e)})") from None
    except RecursionError:
        raise CatalogError(f"{where}: nested too deeply") from None


def _text_keys(node: Any, file: Path, path: str = "") -> None:
    """Field names must be text (nested maps may be keyed by dates or numbers; records convert those)."""
    for k in node:
        if not isinstance(k, str):
            raise CatalogError(f"{file}: field name {k!r}{f' under {path!r}' if path else ''} must be text")


def read_entry(file: Path) -> dict:
    """The YAML of one entry with figures parsed and `sources`/`estimates` filled in."""
    raw = parse_yaml(read_text(file), str(file))
    if not isinstance(raw, dict):
        raise CatalogError(f"{file}: expected a mapping of fields, got {type(raw).__name__}")
    _text_keys(raw, file)
    sources = raw.pop("sources", None) or {}
    estimates = raw.pop("estimates", None) or []
    if not isinstance(sources, dict) or not all(isinstance(v, str) for v in sources.values()):
        raise CatalogError(f"{file}: 'sources' must map field names to text")
    if not isinstance(estimates, list) or not all(isinstance(v, str) for v in estimates):
        raise CatalogError(f"{file}: 'estimates' must be a list of field names")
    sources = {str(k): v for k, v in sources.items()}
    try:
        data = {k: _figures(v, k, _dimension(k), sources, estimates, file) for k, v in raw.items()}
    except RecursionError:
        raise CatalogError(f"{file}: nested too deeply") from None
    data.setdefault("name", Path(file).stem)
    data["sources"] = sources
    data["estimates"] = tuple(estimates)
    data["file"] = _display_path(file)
    return data


def _display_path(file: Path) -> str:
    try:
        return "catalog/" + str(Path(file).resolve().relative_to(PACKAGE_CATALOG.resolve()))
    except ValueError:
        return str(file)


def _validate(cls: type[Record], data: dict, file: Path) -> Record:
    try:
        return cls.model_validate(data)
    except ValidationError as e:
        raise CatalogError(f"{file}: {_validation_message(e)}") from None


@lru_cache(maxsize=None)
def _load_cached(kind: str, name: str) -> Record:
    idx = _index(kind)
    if name not in idx:
        raise _unknown(kind, name)
    return load_entry(kind, idx[name])


def load_entry(kind: str, file: Path) -> Record:
    data = read_entry(file)
    if kind == "systems":
        chip = data.get("chip")
        if isinstance(chip, str):
            data["chip"] = load_chip(chip)
        elif isinstance(chip, dict):
            data["chip"] = _validate(Chip, {"name": data["name"] + "-chip", **chip}, file)
    return _validate(KINDS[kind], data, file)


# ---- public loaders ----------------------------------------------------------------------------

def _is_file(name: str, *suffixes: str) -> bool:
    return any(name.endswith(s) for s in suffixes) or os.sep in name


def load_chip(name: str) -> Chip:
    if _is_file(name, ".yaml", ".yml"):
        return load_entry("hardware", Path(name))  # type: ignore[return-value]
    return _load_cached("hardware", name)  # type: ignore[return-value]


def load_system(name: str) -> System:
    """A system by name, or a YAML file (a calibrated profile or a user's own system).

    A chip name is accepted too: it becomes a one-domain system of that chip.
    """
    if _is_file(name, ".yaml", ".yml"):
        p = Path(name)
        if not p.exists():
            raise CatalogError(f"{name}: no such file")
        data = read_entry(p)
        if data.get("kind") == "chip" or "chip" not in data:
            if isinstance(data.get("priors"), dict):  # a calibrated profile carries its own priors inline
                data["priors"] = _inline_priors(data, p)
            chip = _validate(Chip, {**data, "kind": "chip"}, p)
            return System(name=chip.name, display_name=chip.display_name, chip=chip, domain_chips=1,
                          file=chip.file, source=chip.source)
        return load_entry("systems", p)  # type: ignore[return-value]
    if name in _index("systems"):
        return _load_cached("systems", name)  # type: ignore[return-value]
    if name in _index("hardware"):
        chip = load_chip(name)
        return System(name=name, display_name=chip.display_name, chip=chip, domain_chips=1, file=chip.file,
                      source=chip.source)
    other = other_hardware_name(name)
    if other is not None:
        return load_system(other)
    hint = suggest_named(name, "systems", "hardware")
    more = f"; did you mean {', '.join(hint)}?" if hint else ""
    raise CatalogError(f"unknown system {name!r}{more} (see `tokenmath catalog list`)")


def load_model(name: str) -> Model:
    """A model by catalog name, by another name of the same architecture (`catalog/aliases/names.yaml`:
    "DeepSeek-R1", "deepseek-ai/DeepSeek-R1" -> deepseek-v3), or a Hugging Face config.json on disk."""
    if name.endswith(".json") or os.sep in name:
        p = Path(name)
        if p.is_dir():
            p = p / "config.json"
        if p.exists():
            return model_from_hf_config(read_hf_config(p), p)
        if name.endswith(".json") or _looks_like_path(name):
            raise CatalogError(f"{name}: no such file")
        if other_model_name(name) is None:  # a Hugging Face id ('org/Name') that names no catalog model
            raise _unknown("models", name)
    if name not in _index("models") and (other := other_model_name(name)):
        return _load_cached("models", other)  # type: ignore[return-value]
    return _load_cached("models", name)  # type: ignore[return-value]


# a quantised release's suffix: the same architecture as the model it quantises (the format is --precision's)
_QUANT_SUFFIX = re.compile(r"-(fp8|fp8-dynamic|nvfp4|fp4|mxfp4|int4|int8|awq|gptq|w4a16|w8a8)$")
# a fine-tune's word, before a release's version or date if any ('-Instruct-2507', '-it', '-chat-hf',
# '-Instruct-v0.2'): instruction and chat tuning keep the base model's shapes (its config.json differs in
# generation settings and context length only), so the base's entry describes it; a version stays (Mistral
# 7B v0.1 and v0.2 differ), a release date ('-2507') goes once the fine-tune's word is gone
_TUNE_WORD = re.compile(r"-(instruct|it|chat|base|hf)(?=(-v?\d[\d.]*)?$)")
_RELEASE_DATE = re.compile(r"-\d{4}$")
# a release's dotted version ('-v0.1'): dropped only where the catalog holds no versioned entry of that model
# (Mixtral 8x22B's one entry is its v0.1; Mistral 7B's v0.1, v0.2 and v0.3 are three entries)
_VERSION = re.compile(r"-v\d+\.\d+$")


def _looks_like_path(name: str) -> bool:
    """A file system path rather than a Hugging Face id ('org/Name'): absolute, relative to '.' or '~', or
    deeper than one folder."""
    return name.startswith((os.sep, ".", "~")) or name.count(os.sep) > 1


def _name_keys(key: str) -> list[str]:
    """`key`, then without a quantised release's suffix, then without its fine-tune's words (and the date
    after them), then without a version the catalog does not tell apart."""
    out = [key, _QUANT_SUFFIX.sub("", key)]
    k = out[-1]
    while (shorter := _TUNE_WORD.sub("", k, count=1)) != k:
        out += [k := shorter, _RELEASE_DATE.sub("", shorter)]
    for k in list(out):
        base = _VERSION.sub("", k)
        if base != k and not any(n.startswith(base + "-v") for n in _index("models")):
            out.append(base)
    return list(dict.fromkeys(out))


def _name_key(name: str) -> str:
    """Case, spaces and underscores aside: "Llama 4 Scout" and "llama_4_scout" are "llama-4-scout"."""
    return re.sub(r"[\s_]+", "-", name.strip().lower())


def other_model_name(name: str) -> str | None:
    """The catalog model that `name` is another name of: any case, spaces or underscores for hyphens, a Hugging
    Face org/ prefix ignored, and a quantised release's suffix (-FP8, -NVFP4, -AWQ...) and a fine-tune's
    (-Instruct-2507, -it, -chat-hf) dropped if need be."""
    key = _name_key(name.rsplit("/", 1)[-1])
    for k in _name_keys(key):
        if k in _index("models"):
            return k
        for entry, rec in (_other_names().get("models") or {}).items():
            if entry == k or k in {_name_key(n) for n in rec.get("names", [])}:
                return entry
    return None


def other_hardware_name(name: str) -> str | None:
    """The catalog system or chip that `name` is another name of (a cloud instance, a product name: catalog/
    aliases/names.yaml `hardware:`), in any case, spaces or underscores for hyphens; exact names only (the
    validation's scored matcher reads free text)."""
    k = _name_key(name)
    if k in _index("systems") or k in _index("hardware"):
        return k
    for entry, rec in (_other_names().get("hardware") or {}).items():
        if k in {_name_key(n) for n in rec.get("names", [])}:
            return entry
    return None


@lru_cache(maxsize=1)
def _other_names() -> dict:
    if _alias_path("names.yaml") is None:  # no table of other names: none (a broken one is an error, not none)
        return {}
    return load_aliases("names")


def load_priors(name: str = "default") -> Priors:
    """Priors by name: a catalog entry, a calibrated profile's inline block, or priors changed by --set."""
    if name in _profile_priors:
        return _profile_priors[name]
    return _load_cached("priors", name)  # type: ignore[return-value]  (an unknown name: one line, with suggestions)


_profile_priors: dict[str, Priors] = {}  # priors read inline from profile YAMLs, by the name their chip refers to


def _inline_priors(data: dict, file: Path) -> str:
    """Validate a profile's inline `priors:` mapping into a Priors record; return the name its chip uses."""
    block = dict(data["priors"])
    name = f"{data.get('name', file.stem)}-priors"
    sources = {k.split(".", 1)[1]: v for k, v in data["sources"].items() if k.startswith("priors.")}
    estimates = tuple(k.split(".", 1)[1] for k in data["estimates"] if k.startswith("priors."))
    data["sources"] = {k: v for k, v in data["sources"].items() if not k.startswith("priors.")}
    data["estimates"] = tuple(k for k in data["estimates"] if not k.startswith("priors."))
    rec = {"name": name, "source": data.get("source", ""), "file": data.get("file", str(file)), **block,
           "sources": sources, "estimates": estimates}
    pri = _validate(Priors, rec, file)
    if name in _profile_priors and _profile_priors[name] != pri:  # two profiles of one machine name, one process
        name = bind_priors(pri)
    _profile_priors[name] = pri  # type: ignore[assignment]
    return name


def load_intervals(name: str = "serving") -> Intervals:
    """Prediction-interval bounds derived from validation residuals (`catalog/intervals/NAME.yaml`)."""
    return _load_cached("intervals", name)  # type: ignore[return-value]


def load_training_priors() -> list[TrainingPrior]:
    """Every published training run's MFU prior (`catalog/training/*.yaml`), by name."""
    return [_load_cached("training", n) for n in names("training")]  # type: ignore[misc]


# ---- alias tables and measurement tables (validation) ------------------------------------------

def _alias_path(relative: str) -> Path | None:
    """`catalog/aliases/<relative>` in the last catalog directory that has it."""
    found = None
    for d in catalog_dirs():
        f = d / "aliases" / relative
        if f.is_file():
            found = f
    return found


def load_aliases(name: str = "validation") -> dict:
    """An alias table `catalog/aliases/NAME.yaml`, parsed like any entry (figures, sources, estimates)."""
    f = _alias_path(f"{name}.yaml")
    if f is None:
        raise CatalogError(f"no alias table {name!r} (catalog/aliases/{name}.yaml)")
    return read_entry(f)


def load_alias_model(name: str) -> Model | None:
    """A model kept beside an alias table (`catalog/aliases/models/NAME.yaml`), or None.

    These are fallbacks for validation: callers try the catalog first, so a catalog entry of the
    same name always wins.
    """
    f = _alias_path(f"models/{name}.yaml")
    return None if f is None else load_entry("models", f)  # type: ignore[return-value]


_EAGER_KEYS = {"norm", "norms", "attention", "sliding", "residual", "mlp_gated", "mlp_plain", "gemms_attention",
               "gemms_mlp_gated", "moe_route", "moe_hit", "moe_expert", "shared", "step"}
_EAGER_LOOPS = ("hit", "all", "batched")


@lru_cache(maxsize=1)
def load_eager_ops() -> tuple[dict, dict]:
    """({code: torch calls of its eager step's parts}, {family: code}) from `catalog/eager/ops.yaml`; each code
    lists what differs from llama's."""
    found = [d / "eager" / "ops.yaml" for d in catalog_dirs() if (d / "eager" / "ops.yaml").is_file()]
    if not found:
        raise CatalogError("no eager op inventory (catalog/eager/ops.yaml)")
    f = found[-1]
    data = read_entry(f)
    raw, fams = data.get("codes"), data.get("families") or {}
    if not isinstance(raw, dict) or "llama" not in raw or not isinstance(fams, dict):
        raise CatalogError(f"{f}: needs 'codes' with a 'llama' entry and a 'families' map")
    codes = {}
    for name, c in raw.items():
        c = {**raw["llama"], **(c or {})}
        bad = [k for k, v in c.items() if not (k in _EAGER_KEYS and isinstance(v, int) and v >= 0 or
                                               k == "moe_experts" and v in _EAGER_LOOPS)]
        if bad or set(c) != _EAGER_KEYS | {"moe_experts"}:
            raise CatalogError(f"{f}: code {name!r}: {', '.join(map(str, bad)) or 'missing fields'} (counts are "
                               f"whole numbers ≥ 0; moe_experts one of {', '.join(_EAGER_LOOPS)})")
        codes[str(name)] = c
    unknown = sorted(str(v) for v in fams.values() if v not in codes)
    if unknown:
        raise CatalogError(f"{f}: families name unknown codes {', '.join(unknown)}")
    return codes, {str(k): str(v) for k, v in fams.items()}


def read_table(path: str | Path) -> list[dict[str, str]]:
    """A CSV table with a header row (comma-, tab- or semicolon-separated), as one dict per row (column name ->
    text, stripped)."""
    import csv

    p = Path(path)
    text = read_text(p, MAX_TABLE_BYTES)
    header = text.lstrip("\ufeff").split("\n", 1)[0]
    delimiter = max(",\t;", key=header.count)  # a tab- or semicolon-separated export; a tie keeps the comma
    try:
        rows = list(csv.DictReader(io.StringIO(text, newline=""), delimiter=delimiter))
    except csv.Error as e:
        raise CatalogError(f"{p}: malformed CSV ({e})") from None
    # a byte-order mark (spreadsheets' "CSV UTF-8") would otherwise stick to the first column's name
    out = [{k.replace("\ufeff", "").strip(): (v or "").strip() for k, v in r.items() if k is not None} for r in rows]
    if delimiter == ";":  # a locale whose list separator is ';' writes decimals with a comma: '150,5' is 150.5
        out = [{k: _decimal_comma(v) for k, v in r.items()} for r in out]
    return out


def _decimal_comma(cell: str) -> str:
    """'150,5' or '0,125' -> the number with a decimal point; a group of three after the comma ('1,024') is left
    as written, a thousands separator as readily as a decimal."""
    m = re.fullmatch(r"([~≈<>]?\s*-?\d+),(\d+)", cell)
    return f"{m.group(1)}.{m.group(2)}" if m and (len(m.group(2)) != 3 or m.group(1).lstrip("~≈<> -") == "0") else cell


# ---- price sheets, memory tiers, inference assumptions ---------------------------------------

__all__ += ["providers", "price_sheet_dates", "load_price_sheet", "load_offer", "load_tier", "load_assumptions"]


def providers() -> list[str]:
    """Every provider with a price sheet (`catalog/prices/<provider>/`)."""
    return sorted({n.split("/", 1)[0] for n in names("prices")})


def price_sheet_dates(provider: str) -> list[str]:
    """The dates a provider has sheets for, oldest first."""
    if provider not in providers():
        hint = suggest(provider, providers())
        more = f"; did you mean {', '.join(hint)}?" if hint else f"; providers: {', '.join(providers())}"
        raise CatalogError(f"unknown provider {provider!r}{more}")
    dates = [n.split("/", 1)[1] for n in names("prices") if n.split("/", 1)[0] == provider]
    return sorted(dates, key=date_key)


def load_price_sheet(provider: str, date: str | None = None) -> PriceSheet:
    """A provider's price sheet on `date` (default: the latest)."""
    dates = price_sheet_dates(provider)
    if date is None:
        date = dates[-1]
    if date not in dates:
        raise CatalogError(f"no {provider} price sheet dated {date!r}; dates: {', '.join(dates)}")
    return _load_cached("prices", f"{provider}/{date}")  # type: ignore[return-value]


def load_offer(ref: str, date: str | None = None):
    """`PROVIDER/OFFER` -> (sheet, offer id, Offer), from the latest sheet that lists it (or the one on `date`)."""
    provider, _, offer = ref.partition("/")
    if not offer:
        raise CatalogError(f"expected PROVIDER/OFFER, e.g. anthropic/claude-opus-4.6 (got {ref!r})")
    dates = price_sheet_dates(provider)
    sheets = [load_price_sheet(provider, d) for d in ([date] if date else reversed(dates))]
    for sh in sheets:
        if offer in sh.offers:
            return sh, offer, sh.offers[offer]
    every = sorted({o for d in dates for o in load_price_sheet(provider, d).offers})
    if offer in every:
        have = [d for d in dates if offer in load_price_sheet(provider, d).offers]
        raise CatalogError(f"{provider}/{offer} is not on the {date} sheet; it is on {', '.join(have)}")
    hint = suggest(offer, every)
    more = f"; did you mean {', '.join(hint)}?" if hint else f"; offers: {', '.join(every)}"
    raise CatalogError(f"no offer {offer!r} from {provider}{more}")


def load_tier(name: str) -> MemoryTier:
    """A memory tier; an HBM tier takes capacity and bandwidth (with their sources) from its chip."""
    t: MemoryTier = _load_cached("tiers", name)  # type: ignore[assignment]
    if t.chip is None or (t.capacity_bytes and t.read_bandwidth_bytes_per_s):
        return t
    chip = load_chip(t.chip)
    data = t.model_dump()
    sources = dict(t.sources)
    for field, chip_field in (("capacity_bytes", "hbm_capacity_bytes"),
                              ("read_bandwidth_bytes_per_s", "hbm_bandwidth_bytes_per_s")):
        if data[field] is None:
            data[field] = getattr(chip, chip_field)
            sources[field] = chip.source_of(chip_field)
    data["sources"] = sources
    return MemoryTier.model_validate(data)


def load_assumptions(name: str = "default") -> InferenceAssumptions:
    return _load_cached("assumptions", name)  # type: ignore[return-value]


# ---- --set FIELD=VALUE ------------------------------------------------------------------------

# bookkeeping, not figures: --set on these is refused
_NOT_SETTABLE = set(Record.model_fields) | {"kind"}
_ROLES: dict[str, type[Record]] = {"model": Model, "system": System, "chip": Chip, "priors": Priors}


def apply_overrides(records: dict[str, Record], settings: list[str]) -> dict[str, Record]:
    """Apply `--set FIELD=VALUE` to whichever record has FIELD (or `chip.FIELD`, `model.FIELD`...).

    `records` maps a role ('model', 'system', 'chip', 'priors') to its record; a changed chip is put
    back into its system, and changed priors are bound to the chip (`bind_priors`), so every analysis
    that looks up the chip's priors sees them. Values with units are parsed by the field's suffix; the
    record's validators then check every value's range.
    """
    out = dict(records)
    for s in settings:
        if "=" not in s:
            raise CatalogError(f"--set {s!r}: expected FIELD=VALUE, e.g. hbm_bandwidth_bytes_per_s=3TB/s")
        key, text = (x.strip() for x in s.split("=", 1))
        role, _, field = key.rpartition(".")
        sub = None
        if "." in field or (role and role not in out):  # peak_flop_per_s.fp8 or chip.peak_flop_per_s.fp8
            parts = key.split(".")
            if parts[0] in out:
                role, field, sub = parts[0], parts[1], ".".join(parts[2:]) or None
            else:
                role, field, sub = "", parts[0], ".".join(parts[1:]) or None
        roles = [role] if role else [r for r, rec in out.items() if field in type(rec).model_fields]
        roles = [r for r in roles if r in out and field in type(out[r]).model_fields]
        if field in _NOT_SETTABLE:
            raise CatalogError(f"--set {key}: {field!r} is bookkeeping, not a figure")
        if not roles:
            elsewhere = [r for r, cls in _ROLES.items() if r not in out and field in cls.model_fields]
            if elsewhere:
                raise CatalogError(f"--set {key}: {field!r} is a field of the {elsewhere[0]}, which this command "
                                   "does not read")
            every = sorted({f for rec in out.values() for f in type(rec).model_fields if f not in _NOT_SETTABLE})
            hint = suggest(field, every)
            more = f"; did you mean {', '.join(hint)}?" if hint else ""
            raise CatalogError(f"--set: no field {key!r}{more}")
        r = roles[0]
        rec = out[r]
        dim = (_dimension(sub.split(".")[-1]) if sub else None) or _dimension(field)
        try:
            value: Any = parse_quantity(text, dim) if dim else parse_yaml(text, f"--set {key}")
        except UnitError as e:
            raise CatalogError(f"--set {key}: {e}") from None
        if sub is not None:
            current = getattr(rec, field)
            if not isinstance(current, dict | BaseModel | None):
                raise CatalogError(f"--set {key}: {field!r} has no parts to set")
            current = rec.model_dump()[field] or {}
            _set_path(current, sub, value, key)
            value = current
        try:
            new = rec.evolve(**{field: value})
        except ValidationError as e:
            raise CatalogError(f"--set {key}={text}: {_validation_message(e)}") from None
        if sub is not None:  # the nested figure itself now comes from the override
            new = new.model_copy(update={"sources": {**new.sources, f"{field}.{sub}": "overridden with --set"}})
        out[r] = new
        if r == "chip" and "system" in out:
            out["system"] = out["system"].evolve(chip=new)
        if r == "chip" and field == "priors" and "priors" in out:  # another priors entry: read it (or refuse it)
            out["priors"] = load_priors(new.priors)  # type: ignore[attr-defined]
    if "priors" in out and out["priors"] is not records.get("priors") and "chip" in out:
        chip = out["chip"].evolve(priors=bind_priors(out["priors"]))  # type: ignore[arg-type]
        out["chip"] = chip
        if "system" in out:
            out["system"] = out["system"].evolve(chip=chip)
    return out


def bind_priors(p: Priors) -> str:
    """Register priors changed by --set under a name of their own; a chip naming it looks them up."""
    import hashlib

    name = f"{p.name}+set-{hashlib.sha1(p.model_dump_json().encode()).hexdigest()[:10]}"
    _profile_priors[name] = p
    return name


def _validation_message(e: ValidationError) -> str:
    """One line from a pydantic error: the field (when it names one) and what is wrong with it."""
    err = e.errors()[0]
    loc = ".".join(str(x) for x in err["loc"])
    msg = str(err["msg"]).removeprefix("Value error, ")
    return f"field {loc!r}: {msg}" if loc else msg


def _set_path(node: dict, path: str, value: Any, key: str) -> None:
    """Set a dotted `path` inside nested mappings; keys may hold dots themselves (offers.claude-opus-4.6.input_per_mtok)."""
    if path in node or "." not in path:
        node[path] = value
        return
    for k in sorted((k for k in node if path.startswith(f"{k}.") and isinstance(node[k], dict)), key=len, reverse=True):
        _set_path(node[k], path[len(k) + 1:], value, key)
        return
    hint = suggest(path.split(".")[0], [str(k) for k in node])
    more = f"; did you mean {', '.join(hint)}?" if hint else ""
    raise CatalogError(f"--set {key}: no entry {path.split('.')[0]!r}{more}")


# ---- serving-engine settings (the simulator's defaults) -----------------------------------------

__all__ += ["load_engine"]


def load_engine(name: str = "default") -> dict:
    """An engine's scheduler settings, `catalog/engines/NAME.yaml` (figures parsed, with sources).

    Read once per name (a deployment search asks thousands of times); each caller gets its own copy.
    """
    return copy.deepcopy(_engine_cached(name))


@lru_cache(maxsize=None)
def _engine_cached(name: str) -> dict:
    found = None
    for d in catalog_dirs():
        f = d / "engines" / f"{name}.yaml"
        if f.is_file():
            found = f
    if found is None:
        raise CatalogError(f"no engine settings {name!r} (catalog/engines/{name}.yaml)")
    data = read_entry(found)
    _validate(EngineSettings, data, found)  # every figure in its range; callers read the entry as a mapping
    return data
