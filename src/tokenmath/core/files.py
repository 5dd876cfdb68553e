"""Reading a file the user names: size-limited, UTF-8, no NUL bytes — so `/dev/zero` or a huge file is one line.

The one reader under `load` (catalog YAML, profiles, tables) and `hfconfig` (config.json).
"""

from __future__ import annotations

from pathlib import Path

from .errors import CatalogError

__all__ = ["read_text", "MAX_ENTRY_BYTES", "MAX_TABLE_BYTES"]

MAX_ENTRY_BYTES = 1 << 20  # a catalog entry, profile or config.json: the largest in the catalog is ~25 kB
MAX_TABLE_BYTES = 16 << 20  # a measurement table: validation/public_measurements.csv is ~130 kB


def read_text(file: str | Path, limit: int = MAX_ENTRY_BYTES) -> str:
    """A UTF-8 text file, refused in one line if it is missing, a folder, larger than `limit` or not text."""
    p = Path(file)
    try:
        with p.open("rb") as fh:
            data = fh.read(limit + 1)
    except IsADirectoryError:
        raise CatalogError(f"{p}: is a folder, not a file") from None
    except OSError as e:
        raise CatalogError(f"{p}: cannot read ({e.strerror or type(e).__name__})") from None
    if len(data) > limit:
        raise CatalogError(f"{p}: larger than {limit >> 20} MiB; not a file tokenmath reads")
    if b"\0" in data:
        raise CatalogError(f"{p}: contains a NUL byte; not a text file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise CatalogError(f"{p}: not UTF-8 text (byte {e.start})") from None
