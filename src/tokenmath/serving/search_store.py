"""A deployment search's results on disk: Parquet (pyarrow) out, SQL (DuckDB) over it.

Every evaluated configuration is one row with the columns of `search.COLUMNS` (their types and
meaning), null where a column does not apply. `query(file, sql)` runs DuckDB with the file as the
table `results`. pyarrow and duckdb are the `search` extra, imported here only.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ..core.errors import InputError
from .search import COLUMNS, SearchResult

__all__ = ["check_writable", "write_parquet", "query"]

_NEED = "pip install 'tokenmath[search]'"


def check_writable(path: str | Path) -> Path:
    """Refuse an --out that cannot be written, before any work is done (one line)."""
    p = Path(path)
    if p.is_dir():
        raise InputError(f"--out {p} is a directory; name a file, e.g. {p / 'results.parquet'}")
    existed = p.exists()
    try:
        with open(p, "ab"):
            pass
    except OSError as e:
        raise InputError(f"--out {p}: cannot write there ({e.strerror or e})") from None
    if not existed:
        os.unlink(p)
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise InputError(f"--out needs pyarrow: {_NEED}") from None
    return p


def write_parquet(result: SearchResult, path: str | Path) -> Path:
    """Every evaluated configuration of `result`, one row each, with the documented columns."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    types = {"int": pa.int64(), "float": pa.float64(), "bool": pa.bool_(), "str": pa.string()}
    arrays = []
    for name, (kind, _) in COLUMNS.items():
        col = result.columns[name]
        if kind == "str":
            arr = pa.array([str(x) for x in col], type=pa.string())
        else:
            x = np.asarray(col, dtype=float)
            arr = pa.array(x, mask=np.isnan(x), type=pa.float64()).cast(types[kind]) if kind != "float" else \
                pa.array(x, mask=np.isnan(x), type=pa.float64())
        arrays.append(arr)
    schema = pa.schema([pa.field(n, types[k]).with_metadata({"description": d}) for n, (k, d) in COLUMNS.items()])
    table = pa.Table.from_arrays(arrays, schema=schema)
    p = Path(path)
    try:
        pq.write_table(table, p, compression="zstd")
    except OSError as e:
        raise InputError(f"--out {p}: cannot write there ({e})") from None
    return p


def query(path: str | Path, sql: str) -> tuple[list[str], list[tuple]]:
    """Run `sql` with the Parquet file as table `results`: (column names, rows)."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"{p} does not exist (write one with `tokenmath search … --out {p.name}`)")
    if not sql.strip():
        raise InputError("the SQL is empty (e.g. \"SELECT model, system, max(tokens_per_s_per_chip) FROM results "
                         "GROUP BY ALL\")")
    try:
        import duckdb
    except ImportError:
        raise InputError(f"query needs DuckDB: {_NEED}") from None
    con = duckdb.connect()
    try:
        con.execute(f"CREATE VIEW results AS SELECT * FROM read_parquet('{_quoted(p)}')")
        cur = con.execute(sql)
        if cur.description is None:
            return [], []
        return [d[0] for d in cur.description], cur.fetchall()
    except duckdb.Error as e:
        raise InputError(f"query: {type(e).__name__}: {' '.join(str(e).split())}") from None
    finally:
        con.close()


def _quoted(p: Path) -> str:
    return str(p.resolve()).replace("'", "''")
