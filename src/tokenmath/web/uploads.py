"""Hugging Face config.json files uploaded to the page, read in memory and never written to disk.

An upload becomes a Model record named `upload-<first 12 hex of its SHA-256>` (the same file, the same
name), which every endpoint then takes as `model=`. The server keeps the last few in memory only.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from pathlib import PurePosixPath

from ..core.errors import InputError
from ..core.hfconfig import model_from_hf_config
from ..core.records import Model

__all__ = ["MAX_UPLOAD_BYTES", "Uploads"]

MAX_UPLOAD_BYTES = 256 * 1024  # real config.json files are 1–20 kB
KEEP = 32


class Uploads:
    """The uploaded models, newest last; a read-only mapping name -> Model for the endpoints."""

    def __init__(self, keep: int = KEEP):
        self._models: OrderedDict[str, Model] = OrderedDict()
        self._keep = keep
        self._lock = threading.Lock()

    def add(self, body: bytes) -> Model:
        """Read a config.json's bytes into a Model (one-line errors for what is not one)."""
        if len(body) > MAX_UPLOAD_BYTES:
            raise InputError(f"config.json of {len(body):,} bytes: at most {MAX_UPLOAD_BYTES:,}")
        name = "upload-" + hashlib.sha256(body).hexdigest()[:12]
        try:
            cfg = json.loads(body)
        except UnicodeDecodeError:
            raise InputError("config.json: not UTF-8 text") from None
        except json.JSONDecodeError as e:
            raise InputError(f"config.json: malformed JSON at line {e.lineno} ({e.msg})") from None
        # the path only names the record and its errors; nothing is read from or written to it
        m = model_from_hf_config(cfg, PurePosixPath(name) / "config.json")
        with self._lock:
            self._models[m.name] = m
            self._models.move_to_end(m.name)
            while len(self._models) > self._keep:
                self._models.popitem(last=False)
        return m

    def __contains__(self, name: object) -> bool:
        return name in self._models

    def __getitem__(self, name: str) -> Model:
        return self._models[name]

    def names(self) -> list[str]:
        return list(self._models)
