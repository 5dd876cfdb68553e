"""Table strings -> catalog records, by the first matching rule of catalog/aliases/NAME.yaml."""

from __future__ import annotations

import re
from functools import lru_cache

from ...core.errors import CatalogError
from ...core.load import load_alias_model, load_aliases, load_model, load_system
from ...core.records import Model, System

__all__ = ["Aliases"]


class Aliases:
    """Table strings -> catalog records, by the first matching rule of catalog/aliases/NAME.yaml."""

    def __init__(self, name: str = "validation"):
        self.data = load_aliases(name)
        self.file = self.data.get("file", name)
        self.engine = self.data.get("engine", {})
        self.datasets = self.data.get("datasets", {}) or {}

    def source(self, path: str) -> str:
        src = self.data["sources"].get(path, self.data.get("source", ""))
        tag = " (estimate)" if path in self.data["estimates"] else ""
        return f"{self.file}: {src}{tag}"

    def _match(self, kind: str, text: str) -> dict | None:
        for rule in self.data.get(kind, []):
            if re.search(rule["pattern"], text, re.IGNORECASE):
                return rule
        return None

    def unsupported(self, row: dict) -> str | None:
        text = " | ".join(row.get(c, "") for c in ("model", "precision", "parallelism", "batch", "metric"))
        rule = self._match("unsupported", text)
        return rule["reason"] if rule else None

    def model(self, text: str) -> tuple[Model | None, str]:
        rule = self._match("models", text)
        if rule is None:
            return None, f"model {text!r} matches no rule in {self.file}"
        m = _model(rule["model"])
        if m is None:
            return None, f"model {rule['model']!r} is neither in the catalog nor among the alias fallbacks"
        return m, rule.get("note", "")

    def system(self, text: str) -> tuple[System | None, str]:
        rule = self._match("hardware", text)
        if rule is None:
            return None, f"hardware {text!r} matches no rule in {self.file}"
        return load_system(rule["system"]), rule.get("note", "")

    def precision(self, text: str) -> tuple[str | None, str | None, str]:
        rule = self._match("precision", text)
        if rule is None:
            return None, None, f"precision {text!r} matches no rule in {self.file}"
        return rule["precision"], rule.get("kv_dtype"), rule.get("note", "")


@lru_cache(maxsize=None)
def _model(name: str) -> Model | None:
    try:
        return load_model(name)
    except CatalogError:
        return load_alias_model(name)
