"""Reading a measurement table: its columns, row groups, numbers and units, and what kind of quantity a row is."""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["COLUMNS", "SERVING_GROUPS", "PACKAGE_TABLE", "group_of", "row_kind", "to_int", "to_float", "unit_scale"]

COLUMNS = ("id", "source", "model", "precision", "hardware", "n_chips", "parallelism", "batch", "input_len",
           "output_len", "context_len", "metric", "value", "unit", "confidence", "notes")
SERVING_GROUPS = ("TRT", "MLP", "BS1", "VLLM")
PACKAGE_TABLE = Path(__file__).resolve().parents[4] / "validation" / "public_measurements.csv"

# measured units -> SI multiplier of the predicted quantity
_UNIT_SCALE = [(r"^tflop/s", 1e12), (r"^gb/s", 1e9), (r"^tib/s", 2.0**40), (r"^us$", 1e-6), (r"^ms$", 1e-3),
               (r"^s$", 1.0), (r"^tok(?:en)?s?/s", 1.0), (r"^req(?:uest)?s?/s", 1.0)]

def group_of(row_id: str) -> str:
    """The id's prefix: 'TRT-001' -> 'TRT'."""
    return row_id.split("-", 1)[0].upper() if "-" in row_id else row_id.upper()


def to_int(text: str) -> int | None:
    t = (text or "").replace(",", "").strip()
    return int(t) if re.fullmatch(r"\d+", t) else None


def to_float(text: str) -> float | None:
    t = (text or "").replace(",", "").strip()
    try:
        return float(t)
    except ValueError:
        return None


def unit_scale(unit: str) -> float | None:
    u = unit.strip().lower()
    for pat, scale in _UNIT_SCALE:
        if re.search(pat, u):
            return scale
    return None


def row_kind(row: dict) -> str:
    metric, model, unit = row["metric"].lower(), row["model"].lower(), row["unit"].lower()
    if any(w in metric for w in ("mfu", "gpu_hours", "train", "gpu-hours")):
        return "training"
    if "token" in metric or re.match(r"tok(?:en)?s?/s", unit):
        return "serving"
    if "deepep" in model or "dispatch" in metric or "combine" in metric:
        return "alltoall"
    if re.search(r"(?<![a-z])(ttft|tpot|itl|e2e)|end.to.end|request.latency|requests?.per.s", metric):
        return "serving"
    if "tflop" in metric:
        return "gemm" if re.search(r"\bgemm\b|dense matmul", model) else "kernel"
    if "kernel_time" in metric or "bandwidth" in metric or "read_throughput" in metric:
        return "stream"
    return "unknown"
