"""Published training runs (TRN-* rows of validation/public_measurements.csv) predicted with `train`."""

from __future__ import annotations

import re

import numpy as np

from ..core.errors import InputError
from ..core.load import load_model, load_system
from .runs import MFU_PEAK, select_prior, train

__all__ = ["predict_training_row", "validate_training", "CARRY"]


# the row's hardware text -> the catalog system it ran on (the chip is the system's)
_SYSTEMS = (("H100", "hgx-h100"), ("H800", "hgx-h800"), ("H200", "hgx-h200"), ("A100", "hgx-a100"),
            ("TPU v4", "tpu-v4-pod"), ("TPU v5p", "tpu-v5p-pod"), ("V100", "dgx1-v100"), ("TPU v3", "tpu-v3-pod"))
_MODELS = (("405B", "llama-3.1-405b"), ("DeepSeek-V3", "deepseek-v3"), ("PaLM 540B", "palm-540b"))
_GPU_HOURS = {"total_training_gpu_hours", "gpu_hours_pre-training", "gpu_hours_per_trillion_tokens"}
CARRY = ("hfu", "mfu")


def _publication(source: str) -> str:
    m = re.search(r"arXiv\s*\d{4}\.\d{4,5}|github\s+[\w.-]+/[\w.-]+", source or "")
    return m.group(0).replace("github ", "") if m else ""


def _row_params(text: str) -> float | None:
    """Active parameters from a model description: '671B MoE, 37B active' -> 37e9, 'MPT-760m' -> 760e6."""
    act = re.search(r"(\d+(?:\.\d+)?)\s*([BbMm])\s+active", text)
    m = act or re.search(r"(\d+(?:\.\d+)?)\s*([BbMm])\b", text)
    if not m:
        return None
    return float(m.group(1)) * (1e9 if m.group(2) in "Bb" else 1e6)


def _row_recompute(row: dict) -> str:
    text = " ".join(row.get(k, "") for k in ("parallelism", "notes")).lower()
    if "checkpointing" in text or "recomputation" in text or "rematerialization" in text:
        return "full"
    return "selective"


def _row_number(text: str) -> float | None:
    m = re.search(r"\d+(?:\.\d+)?", (text or "").replace(",", ""))
    return float(m.group(0)) if m else None


def predict_training_row(row: dict, held_out: bool = True, carry: str = "hfu") -> dict | None:
    """Predict one TRN-* row of public_measurements.csv (MFU, GPU-hours or TFLOP/s per GPU).

    Returns None for rows that are not training rows; otherwise a dict with `id`, `metric`, `unit`,
    `measured`, `predicted`, `error` (predicted/measured − 1), `prior`, `prior_row`, `basis` and, for
    GPU-hours rows, `time_days_measured`/`time_days_predicted`; `predicted` is None and `reason` says
    why when it cannot predict. held_out=True uses no prior from the row's own publication or model;
    held_out=False lets a run's own published MFU predict its GPU-hours (MFU rows then predict
    themselves and are skipped). carry='hfu' carries the prior's hardware-FLOP utilisation over
    (mfu · r_prior / r_row, the assumption `train` makes); carry='mfu' carries the MFU itself.
    """
    rid, metric = row.get("id", ""), row.get("metric", "")
    if not (rid.startswith("TRN") or any(w in metric.lower() for w in ("mfu", "gpu_hours", "gpu-hours", "train"))):
        return None  # not a training row, by its id or by what it measures (another table's ids need no TRN)
    if carry not in CARRY:
        raise InputError(f"carry must be one of {CARRY}")
    measured = _row_number(row.get("value", ""))
    out = {"id": rid, "metric": metric, "unit": row.get("unit", ""), "measured": measured, "predicted": None,
           "error": None, "prior": None, "prior_row": None,
           "basis": ("held-out: no prior from the row's publication or model" if held_out else "own run allowed")
           + f", {carry} carried over"}
    if measured is None or not measured > 0:
        return {**out, "reason": f"measured value {row.get('value', '')!r} is not a positive number"}
    system_name = next((c for key, c in _SYSTEMS if key in row.get("hardware", "")), None)
    if system_name is None:
        return {**out, "reason": f"hardware {row.get('hardware')!r} has no catalog chip"}
    system = load_system(system_name)
    chip = system.chip
    G = _row_number(row.get("n_chips", ""))
    S = _row_number(row.get("context_len", "")) or _row_number(row.get("input_len", ""))
    for label, x in (("n_chips", G), ("sequence length", S)):
        if x is not None and not 1 <= x <= 1e12:
            return {**out, "reason": f"{label} {x:g} is not a count between 1 and 1e12"}
    N = _row_params(row.get("model", ""))
    moe = "moe" in row.get("model", "").lower()
    model_name = next((n for key, n in _MODELS if key in row.get("model", "")), None)
    exclude = (_publication(row.get("source", "")), model_name or "") if held_out else ()
    # hardware FLOP / model FLOP; without the model's shapes the attention share is neglected
    r_of = {"none": 1.0, "selective": 1.0, "full": 4 / 3} if carry == "hfu" else {"none": 1.0, "selective": 1.0,
                                                                                 "full": 1.0}
    rr = _row_recompute(row)
    if metric.startswith("train_MFU") or metric in ("train_BF16_MFU", "train_TFLOPs_per_GPU"):
        if N is None:
            return {**out, "reason": f"no parameter count in {row.get('model')!r}"}
        p, _ = select_prior(chip, G=G, S=S, N_active=N, moe=moe, exclude=exclude)
        if p.row == rid:
            return {**out, "prior": p.name, "prior_row": p.row, "reason": "the row is its own prior (in-sample)"}
        hfu = p.mfu * r_of[p.recompute]
        if metric == "train_TFLOPs_per_GPU":  # Megatron's count includes the recomputed forward: hardware FLOP/s
            pred = hfu * (r_of["full"] if carry == "mfu" else 1.0) * chip.peak(MFU_PEAK) / 1e12
        else:
            pred = 100 * hfu / r_of[rr]
            if "fp8" in row.get("precision", "").lower():  # MosaicML's FP8 MFU is against the FP8 peak
                pred *= chip.peak(MFU_PEAK) / chip.peak("fp8")
        return {**out, "predicted": pred, "error": pred / measured - 1, "prior": p.name, "prior_row": p.row}
    if metric in _GPU_HOURS:
        if model_name is None:
            return {**out, "reason": f"model {row.get('model')!r} is not in the catalog"}
        if "per_trillion" in metric or "per 1T" in row.get("unit", ""):
            tokens = 1e12
        else:
            tk = re.search(r"(\d+(?:\.\d+)?)\s*T tokens", row.get("notes", ""))
            if not tk:
                return {**out, "reason": "the row does not state its token count"}
            tokens = float(tk.group(1)) * 1e12
        r = train(load_model(model_name), system, G=int(G or 1), tokens=tokens, S=int(S) if S else None,
                  exclude_priors=exclude)
        pred = r.value("chip_hours")
        if carry == "mfu":
            pred /= r.value("hfu_ratio")
        days = {"time_days_measured": measured / (G or 1) / 24, "time_days_predicted": pred / (G or 1) / 24}
        return {**out, "predicted": pred, "error": pred / measured - 1, "prior": r.prior.name,
                "prior_row": r.prior.row, **days}
    return {**out, "reason": f"metric {metric!r} mixes phases whose token counts the row does not give"}


def validate_training(rows: list[dict], held_out: bool = True, carry: str = "hfu") -> dict:
    """Predict every TRN-* row; the rows, and the median and 90th-percentile absolute error per metric kind."""
    preds = [p for p in (predict_training_row(r, held_out, carry) for r in rows) if p is not None]

    def kind(metric: str) -> str:
        return "gpu_hours" if "gpu_hours" in metric else ("tflops_per_gpu" if "TFLOPs" in metric else "mfu")

    def stats(errs: list[float]) -> dict:
        if not errs:
            return {"n": 0, "median_abs_error": None, "p90_abs_error": None}
        a = np.abs(np.asarray(errs))
        return {"n": len(errs), "median_abs_error": float(np.median(a)), "p90_abs_error": float(np.quantile(a, 0.9))}

    done = [p for p in preds if p["error"] is not None]
    summary = {"all": stats([p["error"] for p in done])}
    for k in ("mfu", "tflops_per_gpu", "gpu_hours"):
        summary[k] = stats([p["error"] for p in done if kind(p["metric"]) == k])
    summary["not_predicted"] = len(preds) - len(done)
    return {"basis": preds[0]["basis"] if preds else "", "rows": preds, "summary": summary}
