"""Predict a table of published measurements and report how far the predictions land.

Each row (columns of validation/public_measurements.csv) is matched to catalog entries through the
alias table `catalog/aliases/validation.yaml`, predicted with the core, and compared:
error = (predicted − measured) / measured. Rows the tool cannot express are listed with the reason.

Serving rows use `roofline.step` for every step (one replica of G chips, `n_rep` replicas):

    engine batch (max load):  kv_pool  = f_kv · (G · C − W_all)
                              B_engine = min(floor(kv_pool / kv_held(ISL + OSL)), B_max)
    a run (offline rows):     t_run    = n_prefill · t_prefill(B_p, ISL) + OSL · mean_j t_decode(B, ISL + j)
                              B_p      = max(1, floor(tokens_max / ISL)),  n_prefill = B / B_p
                              tokens/s = n_rep · B · OSL / t_run
    one phase (per-GPU rows): prefill B_p·ISL / t_prefill / G;  decode B / t_decode(B, ISL + OSL/2) / G
    batch-1 rows:             tokens/s/user = 1 / t_decode(1, ISL + OSL/2)

With basis='spec' (peaks, everything overlapped) the engine may fill the whole HBM with KV, there is
no batch cap, and a run takes max(Σ t_math, Σ (t_weights + t_kv)) over all its steps: a lower bound
on time, so an upper bound on throughput. A measurement above its spec bound is reported as a bug.

Microbenchmark rows use the single-kernel rooflines of `kernels` (one GEMM, one stream, one
all-to-all) with the same priors. Training rows belong to `tokenmath train`.
"""

from __future__ import annotations

import importlib.util
import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from . import arch, kernels
from .derive import Q, formula, lift
from .errors import InputError
from .load import CatalogError, load_alias_model, load_aliases, load_model, load_priors, load_system, read_table
from .records import Model, Priors, System
from .roofline import Layout, default_layout, step

__all__ = ["Prediction", "Unexpressed", "ValidationReport", "validate", "validate_table", "Aliases", "group_of",
           "COLUMNS", "SERVING_GROUPS", "engine_batch", "run_time", "run_throughput", "kv_pool_bytes"]

COLUMNS = ("id", "source", "model", "precision", "hardware", "n_chips", "parallelism", "batch", "input_len",
           "output_len", "context_len", "metric", "value", "unit", "confidence", "notes")
SERVING_GROUPS = ("TRT", "MLP", "BS1", "VLLM")
PACKAGE_TABLE = Path(__file__).resolve().parents[2] / "validation" / "public_measurements.csv"

# measured units -> SI multiplier of the predicted quantity
_UNIT_SCALE = [(r"^tflop/s", 1e12), (r"^gb/s", 1e9), (r"^tib/s", 2.0**40), (r"^us$", 1e-6), (r"^ms$", 1e-3),
               (r"^s$", 1.0), (r"^tokens/s", 1.0)]


# ---- formulas ------------------------------------------------------------------------------------

@formula("kv_pool = f_kv · (G · C − W_all)", unit="B")
def kv_pool_bytes(f_kv, G, C, W_all):
    return f_kv * (G * C - W_all)


@formula("B_engine = min(floor(kv_pool / kv_held), B_max)", unit="seq")
def engine_batch(kv_pool, kv_held, B_max):
    return np.minimum(np.floor(kv_pool / kv_held), B_max)


@formula("t_run = n_prefill · t_prefill + OSL · t_decode_mean", unit="s")
def run_time(n_prefill, t_prefill, OSL, t_decode_mean):
    return n_prefill * t_prefill + OSL * t_decode_mean


@formula("tokens_per_s = n_rep · B · OSL / t_run", unit="tok/s")
def run_throughput(n_rep, B, OSL, t_run):
    return n_rep * B * OSL / t_run


@formula("tokens_per_s = n_rep · T / t_step", unit="tok/s")
def phase_throughput(n_rep, T, t_step):
    return n_rep * T / t_step


# ---- records ---------------------------------------------------------------------------------------

@dataclass
class Prediction:
    """One row predicted: value in the row's unit, its spec bound, and what it rests on."""

    id: str
    group: str
    kind: str  # 'run', 'prefill', 'decode', 'per_user', 'gemm', 'stream', 'link', 'alltoall', 'kernel'
    predicted: float
    measured: float
    unit: str
    spec: float | None = None  # the same prediction on basis 'spec' (a bound)
    higher_is_better: bool = True  # rates; False for times
    why: list[str] = field(default_factory=list)
    assumptions: list[str] = field(default_factory=list)
    derivation: Q | None = None

    @property
    def error(self) -> float:
        return (self.predicted - self.measured) / self.measured

    @property
    def abs_error(self) -> float:
        return abs(self.error)

    @property
    def bound_ok(self) -> bool | None:
        """True when the measurement respects the spec bound (rates at or below it, times at or above)."""
        if self.spec is None:
            return None
        slack = 1e-9 * abs(self.spec)
        return self.measured <= self.spec + slack if self.higher_is_better else self.measured >= self.spec - slack

    def to_dict(self) -> dict:
        return {"id": self.id, "group": self.group, "kind": self.kind, "predicted": self.predicted,
                "measured": self.measured, "unit": self.unit, "error": self.error, "abs_error": self.abs_error,
                "spec_bound": self.spec, "bound_ok": self.bound_ok, "why": self.why, "assumptions": self.assumptions}


@dataclass(frozen=True)
class Unexpressed:
    id: str
    group: str
    reason: str

    def to_dict(self) -> dict:
        return {"id": self.id, "group": self.group, "reason": self.reason}


def _stats(errors: list[float]) -> dict:
    if not errors:
        return {"n": 0, "median_abs_error": None, "p90_abs_error": None, "median_error": None}
    a = np.abs(np.asarray(errors))
    return {"n": len(errors), "median_abs_error": float(np.median(a)), "p90_abs_error": float(np.percentile(a, 90)),
            "median_error": float(np.median(errors))}


@dataclass
class ValidationReport:
    basis: str
    table: str
    rows: list[Prediction]
    unexpressed: list[Unexpressed]

    def groups(self) -> list[str]:
        seen = [r.group for r in self.rows] + [u.group for u in self.unexpressed]
        return list(dict.fromkeys(seen))

    def summary(self) -> dict:
        """Median and 90th-percentile |error| overall, over the serving groups, and per group."""
        out = _stats([r.error for r in self.rows])
        serving = [r.error for r in self.rows if r.group in SERVING_GROUPS]
        out["serving"] = {**_stats(serving), "groups": [g for g in SERVING_GROUPS if g in self.groups()]}
        out["groups"] = {}
        for g in self.groups():
            s = _stats([r.error for r in self.rows if r.group == g])
            s["unexpressed"] = sum(1 for u in self.unexpressed if u.group == g)
            out["groups"][g] = s
        out["unexpressed"] = len(self.unexpressed)
        out["bound_violations"] = len(self.violations())
        return out

    def violations(self) -> list[Prediction]:
        """Rows whose measurement beats the spec bound: a catalog or model bug (or a metric the row defines oddly)."""
        return [r for r in self.rows if r.bound_ok is False]

    def worst(self, n: int = 10, groups=None) -> list[Prediction]:
        rows = [r for r in self.rows if groups is None or r.group in groups]
        return sorted(rows, key=lambda r: -r.abs_error)[:n]

    def to_dict(self) -> dict:
        return {"basis": self.basis, "table": self.table, "summary": self.summary(),
                "rows": [r.to_dict() for r in self.rows], "unexpressed": [u.to_dict() for u in self.unexpressed],
                "bound_violations": [{"id": r.id, "measured": r.measured, "spec_bound": r.spec, "unit": r.unit,
                                      "why": r.why} for r in self.violations()]}


# ---- the alias table ---------------------------------------------------------------------------------

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


# ---- parsing helpers -----------------------------------------------------------------------------

def group_of(row_id: str) -> str:
    """The id's prefix: 'TRT-001' -> 'TRT'."""
    return row_id.split("-", 1)[0].upper() if "-" in row_id else row_id.upper()


def _int(text: str) -> int | None:
    t = (text or "").replace(",", "").strip()
    return int(t) if re.fullmatch(r"\d+", t) else None


def _float(text: str) -> float | None:
    t = (text or "").replace(",", "").strip()
    try:
        return float(t)
    except ValueError:
        return None


def _unit_scale(unit: str) -> float | None:
    u = unit.strip().lower()
    for pat, scale in _UNIT_SCALE:
        if re.search(pat, u):
            return scale
    return None


def _row_kind(row: dict) -> str:
    metric, model, unit = row["metric"].lower(), row["model"].lower(), row["unit"].lower()
    if any(w in metric for w in ("mfu", "gpu_hours", "train", "gpu-hours")):
        return "training"
    if "token" in metric or unit.startswith("tokens"):
        return "serving"
    if "deepep" in model or "dispatch" in metric or "combine" in metric:
        return "alltoall"
    if "tflop" in metric:
        return "gemm" if re.search(r"\bgemm\b|dense matmul", model) else "kernel"
    if "kernel_time" in metric or "bandwidth" in metric or "read_throughput" in metric:
        return "stream"
    return "unknown"


# ---- validation ---------------------------------------------------------------------------------------

def validate_table(path: str | Path | None = None, *, basis: str = "prior", groups: list[str] | None = None,
                   priors: Priors | None = None, aliases: str = "validation", explain: bool = False,
                   ids: list[str] | None = None) -> ValidationReport:
    """Read a measurement table (default: the repository's validation/public_measurements.csv) and validate it."""
    p = Path(path) if path else PACKAGE_TABLE
    rows = read_table(p)
    if rows:
        missing = [c for c in ("id", "model", "hardware", "metric", "value", "unit") if c not in rows[0]]
        if missing:
            raise InputError(f"{p}: missing column(s) {', '.join(missing)}; expected the columns of "
                             f"public_measurements.csv ({', '.join(COLUMNS)})")
    return validate(rows, basis=basis, groups=groups, priors=priors, aliases=aliases, table=str(p), explain=explain,
                    ids=ids)


def validate(rows: list[dict], *, basis: str = "prior", groups: list[str] | None = None,
             priors: Priors | None = None, aliases: str = "validation", table: str = "", explain: bool = False,
             ids: list[str] | None = None) -> ValidationReport:
    """Predict every row (or those of `groups` / `ids`); rows that cannot be predicted are listed with the reason."""
    if basis not in ("prior", "spec"):
        raise InputError(f"--basis must be 'prior' or 'spec' (got {basis!r})")
    al = Aliases(aliases)
    want = {g.upper() for g in groups} if groups else None
    preds: list[Prediction] = []
    skipped: list[Unexpressed] = []
    for raw in rows:
        row = {c: raw.get(c, "") or "" for c in COLUMNS}
        if not row["id"]:
            continue
        g = group_of(row["id"])
        if (want is not None and g not in want) or (ids and row["id"] not in ids):
            continue
        out = predict_row(row, al, basis=basis, priors=priors, explain=explain)
        (preds if isinstance(out, Prediction) else skipped).append(out)
    return ValidationReport(basis, table, preds, skipped)


def predict_row(row: dict, al: Aliases, *, basis: str = "prior", priors: Priors | None = None,
                explain: bool = False) -> Prediction | Unexpressed:
    rid, g = row["id"], group_of(row["id"])
    skip = lambda why: Unexpressed(rid, g, why)  # noqa: E731
    kind = _row_kind(row)
    if kind == "training":
        return _training(row)
    measured = _float(row["value"])
    if measured is None or measured <= 0:
        return skip(f"measured value {row['value']!r} is not a positive number (a bound or a range)")
    scale = _unit_scale(row["unit"])
    if scale is None:
        return skip(f"unit {row['unit']!r} is not one this validation predicts")
    reason = al.unsupported(row)
    if reason:
        return skip(reason)
    if kind == "unknown":
        return skip(f"metric {row['metric']!r}: not a serving, kernel or training quantity this tool predicts")
    system, hw_note = al.system(row["hardware"])
    if system is None:
        return skip(hw_note)
    try:
        if kind == "serving":
            return _serving(row, al, system, hw_note, measured, scale, basis, priors, explain)
        return _microbenchmark(row, kind, al, system, hw_note, measured, scale, basis, priors)
    except (ValueError, CatalogError) as e:
        return skip(str(e))


# ---- training rows ------------------------------------------------------------------------------------

def _training(row: dict) -> Prediction | Unexpressed:
    """TRN-* rows belong to `tokenmath train`: predicted through tokenmath.training when it is installed."""
    rid, g = row["id"], group_of(row["id"])
    if importlib.util.find_spec("tokenmath.training") is None:
        return Unexpressed(rid, g, "not a serving row: see tokenmath train")
    from .training import predict_training_row

    out = predict_training_row(row)
    if out is None or out.get("predicted") is None or not out.get("measured"):
        why = (out or {}).get("reason", "not a training row")
        return Unexpressed(rid, g, f"training row not predicted by tokenmath train: {why}")
    why = [f"tokenmath train at the MFU prior {out.get('prior')} (from {out.get('prior_row')}); {out.get('basis')}"]
    return Prediction(rid, g, "training", float(out["predicted"]), float(out["measured"]), row["unit"], None,
                      "hours" not in out.get("metric", "").lower(), why)


# ---- serving rows -------------------------------------------------------------------------------------

@dataclass
class _Setup:
    m: Model
    system: System
    G: int
    n_rep: int
    layout: Layout
    prec: str
    kv: str
    ISL: int
    OSL: int | None
    B: int | None  # stated batch, or None for the engine's
    notes: list[str]
    assumptions: list[str]
    priors: Priors | None = None


def _serving(row, al: Aliases, system: System, hw_note: str, measured: float, scale: float, basis: str,
             priors: Priors | None, explain: bool) -> Prediction | Unexpressed:
    rid, g = row["id"], group_of(row["id"])
    m, note = al.model(row["model"])
    if m is None:
        return Unexpressed(rid, g, note)
    prec, kv, pnote = al.precision(row["precision"])
    if prec is None:
        return Unexpressed(rid, g, pnote)
    metric, unit = row["metric"].lower(), row["unit"].lower()
    per_gpu = "per_gpu" in metric or "/gpu" in unit
    per_user = "per_user" in metric or "/user" in unit
    phase = "prefill" if "prefill" in metric else ("decode" if "decode" in metric and not per_user else None)
    notes = [n for n in (hw_note, note, pnote) if n]
    assumptions: list[str] = []
    if kv == "fp8":
        assumptions.append(al.source("precision_notes.fp8_kv"))
    if re.search("blackwell low precision", row["precision"], re.I):
        assumptions.append(al.source("precision_notes.blackwell_low_precision"))

    ISL, OSL = _int(row["input_len"]), _int(row["output_len"])
    if ISL is None and m.name in al.datasets:
        d = al.datasets[m.name]
        ISL, OSL = int(d["input_len"]), int(d["output_len"])
        assumptions += [al.source(f"datasets.{m.name}.input_len"), al.source(f"datasets.{m.name}.output_len")]
    if ISL is None:
        return Unexpressed(rid, g, "input length not in the table (and no dataset mean for this model in the "
                                   "alias table)")
    B = _int(row["batch"])
    if per_user or (B is not None and OSL is None and phase is None):
        if OSL is None:
            OSL = int(al.engine["bs1_output_len"])
            assumptions.append(al.source("engine.bs1_output_len"))
        mode = "per_user" if per_user else "decode_fixed"
    elif phase is not None:
        mode = phase
    else:
        mode = "run"
    if OSL is None and mode in ("run", "decode"):
        return Unexpressed(rid, g, "output length not in the table")

    G_row = _int(row["n_chips"])
    G, n_rep, layout, lnote = _layout(row, m, system, prec, G_row, phase, al)
    if lnote:
        assumptions.append(lnote)
    su = _Setup(m, system, G, n_rep, layout, prec, kv or m.kv_dtype, ISL, OSL, B, notes, assumptions, priors)
    pri = priors
    value, why, deriv = _serving_value(su, mode, basis, pri, al, explain)
    if isinstance(value, str):
        return Unexpressed(rid, g, value)
    spec = _serving_value(su, mode, "spec", pri, al, False)[0] if basis == "prior" else value
    div = (G * n_rep if per_gpu else 1)
    pred, bound = value / div / scale, (spec / div / scale if not isinstance(spec, str) else None)
    why += notes + _diagnose(row, su, mode)
    return Prediction(rid, g, mode, float(pred), measured, row["unit"], bound, True, why, assumptions, deriv)


def _diagnose(row: dict, su: _Setup, mode: str) -> list[str]:
    """Conditions known to pull a prediction away from the measurement (shown beside the worst rows)."""
    out = []
    fill = arch.param_counts(su.m).total * arch.bytes_per(su.prec) / (su.G * su.system.chip.hbm_capacity_bytes)
    if fill > 0.5 and su.B is None and mode in ("run", "decode"):
        out.append(f"weights fill {fill:.0%} of HBM: the engine's activation/workspace reservation (not modelled) "
                   "shrinks the KV pool, so the real batch is smaller")
    if su.prec == "fp4":
        out.append("no microbenchmark of FP4 GEMMs: eta_flop is carried over from FP8")
    if re.search(r"weight-only|awq", row["precision"], re.I):
        out.append("weight-only quantised kernels dequantise on the fly and stream below eta_bw "
                   "(the row's notes give the achieved bandwidth)")
    if "preliminary" in row["notes"].lower():
        out.append("the source calls the figure preliminary")
    if re.search(r"\bv0\.\d", row["source"]):
        out.append("an early engine release (TensorRT-LLM v0.x, 2023); the v1.0-era tables run such models faster")
    if "batch from footnote" in row["notes"].lower():
        out.append("the batch is read off the order of a footnote")
    if row["confidence"] in ("paraphrased", "interpolated"):
        out.append(f"the figure is {row['confidence']}")
    if su.m.moe is not None and su.layout.ep > 1:
        out.append("uniform expert routing assumed (no load imbalance)")
    return out


def _layout(row, m: Model, system: System, prec: str, G_row: int | None, phase: str | None, al: Aliases):
    """Chips per replica, replicas, and the split, from the row's parallelism text (or the engine rule)."""
    par = row["parallelism"].lower()
    tp = re.search(r"\btp\s*(\d+)", par)
    inst = re.search(rf"{phase} instances?\s*(?:x\s*)?(\d+)", par) if phase else None
    note = ""
    if inst:
        G = int(inst.group(1))
    elif tp:
        G = int(tp.group(1))
    elif "single" in par or G_row == 1:
        G = 1
    else:
        G = _replica_chips(m, system, prec, G_row or system.domain_chips, al)
        note = (f"replica of {G} chip(s) by the engine rule — " + al.source("engine.replica_weight_fraction"))
    n_rep = max(1, (G_row or G) // G) if not inst else 1
    if m.moe is not None and re.search(r"\bep\b|dp\s*\+\s*ep|ep per", par) and not re.search(r"\bep\s*1\b", par):
        layout = Layout(tp=int(tp.group(1)) if tp else 1, ep=G)
    elif m.moe is not None and not tp:
        layout = default_layout(m, G)
    else:
        layout = Layout(tp=G, ep=1)
    return G, n_rep, layout, note


def _replica_chips(m: Model, system: System, prec: str, G_max: int, al: Aliases) -> int:
    f = float(al.engine["replica_weight_fraction"])
    W_all = arch.param_counts(m).total * arch.bytes_per(prec)
    G = 1
    while G < G_max and W_all > f * G * system.chip.hbm_capacity_bytes:
        G *= 2
    return min(G, G_max)


def _serving_value(su: _Setup, mode: str, basis: str, priors: Priors | None, al: Aliases, explain: bool):
    """(value in SI tokens/s for the whole row's chips, why-notes, derivation) — or (reason, ...) if impossible."""
    m, sysm, G = su.m, su.system, su.G
    spec = basis == "spec"
    kw = dict(G=G, precision=su.prec, kv_dtype=su.kv, basis=basis, priors=priors, layout=su.layout)
    why: list[str] = []
    tokens_max = int(al.engine["max_num_tokens"])
    if mode in ("per_user", "decode_fixed"):
        B = su.B or 1
        S = su.ISL + su.OSL / 2
        st = step(m, sysm, B=B, S=S, phase="decode", explain=explain, **kw)
        t = float(st.v("t_step"))
        why.append(f"decode at batch {B}, context {S:.0f}: {st.bound}-bound, step {t * 1e3:.3g} ms")
        value = 1 / t if mode == "per_user" else su.n_rep * B / t
        return value, why, (st.t_step if explain else None)
    if mode == "prefill":
        B_p = max(1, tokens_max // su.ISL)
        st = step(m, sysm, B=B_p, S=su.ISL, phase="prefill", explain=explain, **kw)
        t = float(st.v("t_step"))
        why.append(f"prefill {B_p} prompt(s) of {su.ISL} per step: {st.bound}-bound")
        return su.n_rep * B_p * su.ISL / t, why, (st.t_step if explain else None)
    # engine batch for 'decode' and 'run'
    if su.B is not None:
        B = su.B
        why.append(f"batch {B} as stated")
    else:
        B = _engine_batch(su, spec, al)
        if isinstance(B, str):
            return B, why, None
        why.append(f"engine batch {B} (KV pool / KV per sequence at {su.ISL}+{su.OSL} tokens"
                   f"{'' if spec else ', capped at ' + str(int(al.engine['max_batch']))})")
    if mode == "decode":
        S = su.ISL + su.OSL / 2
        st = step(m, sysm, B=B, S=S, phase="decode", explain=explain, **kw)
        t = float(st.v("t_step"))
        why.append(f"decode at context {S:.0f}: {st.bound}-bound")
        return su.n_rep * B / t, why, (st.t_step if explain else None)
    # a whole run: prefill every prompt, then OSL decode steps over the growing context
    B_p = B if spec else max(1, min(B, tokens_max // su.ISL))
    n_prefill = B / B_p  # prompts are prefilled B_p at a time (the last chunk pro rata)
    pre = step(m, sysm, B=B_p, S=su.ISL, phase="prefill", **kw)
    dec = step(m, sysm, B=B, S=su.ISL + np.arange(su.OSL), phase="decode", **kw)
    if spec:  # everything overlapped: the run is bound by its total math or its total memory traffic
        math_s = float(n_prefill * pre.v("t_math") + np.sum(dec.v("t_math")))
        mem = lambda s: np.broadcast_to(s.v("t_weights") + s.v("t_kv"), np.shape(s.v("t_step")))  # noqa: E731
        mem_s = float(n_prefill * np.sum(mem(pre)) + np.sum(mem(dec)))
        t_run = max(math_s, mem_s)
        return su.n_rep * B * su.OSL / t_run, why, None
    t_prefill_total = n_prefill * float(pre.v("t_step"))
    t_dec = np.asarray(dec.v("t_step"), dtype=float)
    kinds = {str(b) for b in np.atleast_1d(dec.bound)}
    why.append(f"prefill {t_prefill_total:.3g} s ({pre.bound}-bound) + decode {t_dec.sum():.3g} s "
               f"({'/'.join(sorted(kinds))}-bound)")
    deriv = _explain_run(su, B, B_p, t_dec, al) if explain else None
    t_run = t_prefill_total + t_dec.sum()
    return su.n_rep * B * su.OSL / t_run, why, deriv


def _engine_batch(su: _Setup, spec: bool, al: Aliases, explain: bool = False):
    W_all = arch.param_counts(su.m).total * arch.bytes_per(su.prec)
    kv_held = float(arch.kv_stored_bytes(su.m, su.ISL + su.OSL, su.kv))
    f_kv = 1.0 if spec else float(al.engine["kv_memory_fraction"])
    pool = kv_pool_bytes(f_kv, su.G, su.system.chip.hbm_capacity_bytes, W_all)
    if pool < kv_held:
        return (f"{su.m.name} at {su.prec} leaves no room for one sequence's KV on {su.G} × "
                f"{su.system.chip.name} ({su.G * su.system.chip.hbm_capacity_bytes / 1e9:.0f} GB)")
    cap = math.inf if spec else float(al.engine["max_batch"])
    return int(engine_batch(pool, kv_held, cap))


def _explain_run(su: _Setup, B, B_p, t_dec, al: Aliases) -> Q:
    """The run's derivation: the engine batch, one prefill step, the mean decode step, and the total."""
    e = True
    W_all = arch.param_counts(su.m).total * arch.bytes_per(su.prec)
    cap = su.system.chip.hbm_capacity_bytes
    kv_held = float(arch.kv_stored_bytes(su.m, su.ISL + su.OSL, su.kv))
    Bq: Q | int
    if su.B is None:
        pool = kv_pool_bytes(lift(e, "f_kv", al.engine["kv_memory_fraction"], "", al.source("engine.kv_memory_fraction")),
                             lift(e, "G", su.G, "chips", "row"),
                             lift(e, "C", cap, "B", su.system.chip.source_of("hbm_capacity_bytes")),
                             lift(e, "W_all", W_all, "B", f"{su.m.file or su.m.name}: N_total · b_w ({su.prec})"))
        Bq = engine_batch(pool, lift(e, "kv_held", kv_held, "B", f"KV of one sequence at ISL + OSL = {su.ISL + su.OSL} tok ({su.kv})"),
                          lift(e, "B_max", al.engine["max_batch"], "seq", al.source("engine.max_batch"))).renamed("B")
    else:
        Bq = lift(e, "B", B, "seq", "row: stated batch")
    n_pre = B / B_p
    mid = step(su.m, su.system, G=su.G, B=B, S=su.ISL + su.OSL // 2, phase="decode", precision=su.prec,
               kv_dtype=su.kv, layout=su.layout, priors=su.priors, explain=True)
    pre = step(su.m, su.system, G=su.G, B=B_p, S=su.ISL, phase="prefill", precision=su.prec, kv_dtype=su.kv,
               layout=su.layout, priors=su.priors, explain=True)
    t_run = run_time(lift(e, "n_prefill", n_pre, "", f"B / B_p, B_p = min(B, tokens_max // ISL) = {B_p}"),
                     pre.t_step.renamed("t_prefill"), lift(e, "OSL", su.OSL, "tok", "row"),
                     Q("t_decode_mean", float(np.mean(t_dec)), "s",
                       source=f"mean of roofline.step decode over S = {su.ISL}…{su.ISL + su.OSL - 1}; "
                              f"at the middle: {float(mid.t_step.value) * 1e3:.3g} ms"))
    return run_throughput(lift(e, "n_rep", su.n_rep, "", "replicas"), Bq, lift(e, "OSL", su.OSL, "tok", "row"),
                          t_run)


# ---- microbenchmark rows ---------------------------------------------------------------------------------

def _eta(pri: Priors, name: str, basis: str) -> float:
    return 1.0 if basis == "spec" else float(getattr(pri, name))


def _microbenchmark(row, kind: str, al: Aliases, system: System, hw_note: str, measured: float, scale: float,
                    basis: str, priors: Priors | None) -> Prediction | Unexpressed:
    rid, g = row["id"], group_of(row["id"])
    pri = priors or load_priors(system.chip.priors)
    chip = system.chip
    text = " ".join(row[c] for c in ("model", "batch", "parallelism", "notes"))
    notes = [hw_note] if hw_note else []

    def both(fn):
        return fn(basis), (fn("spec") if basis == "prior" else None)

    if kind == "gemm":
        shape = _gemm_shape(row)
        if shape is None:
            return Unexpressed(rid, g, "GEMM shape (M, N, K) not found in the row")
        M, N, K, groups = shape
        prec, _, pnote = al.precision(row["precision"])
        if prec is None:
            return Unexpressed(rid, g, pnote)
        b = arch.bytes_per(prec)
        F, W = chip.peak(prec), chip.hbm_bandwidth_bytes_per_s
        flop = kernels.gemm_flop(M, N, K, groups)
        byts = kernels.gemm_bytes(M, N, K, b, b, 2.0, groups)

        def rate(bs):
            t0, m_half = (0.0, 0.0) if bs == "spec" else (pri.kernel_overhead_s, pri.matmul_m_half)
            eta_mm = kernels.small_m_efficiency(_eta(pri, "eta_flop", bs), M, m_half)
            return flop / float(kernels.gemm_time(flop, F, eta_mm, byts, W, _eta(pri, "eta_bw", bs), t0))
        pred, spec = both(rate)
        bound = "compute" if flop / (F * pri.eta_flop) >= byts / (W * pri.eta_bw) else "memory"
        why = [f"GEMM {groups}×{M}×{N}×{K} {prec}: {bound}-bound"]
        return Prediction(rid, g, "gemm", pred / scale, measured, row["unit"], spec / scale if spec else None, True,
                          why + notes)
    if kind == "kernel":  # attention kernels: compute-bound at the BF16 peak (as in roofline's F_attn)
        F = chip.peak("bf16")
        pred, spec = both(lambda bs: F * _eta(pri, "eta_flop", bs))
        return Prediction(rid, g, "kernel", pred / scale, measured, row["unit"], spec / scale if spec else None,
                          True, ["compute-bound attention kernel at the BF16 peak × eta_flop"] + notes)
    if kind == "stream":
        W = chip.hbm_bandwidth_bytes_per_s
        if "kernel_time" in row["metric"].lower():
            moved = _bytes_moved(row["notes"])
            if moved is None:
                return Unexpressed(rid, g, "bytes moved not found in the row's notes")
            pred, spec = both(lambda bs: float(kernels.stream_time(moved, W, _eta(pri, "eta_bw", bs))))
            return Prediction(rid, g, "stream", pred / scale, measured, row["unit"], spec / scale if spec else None,
                              False, [f"stream of {moved / 1e6:.0f} MB at W · eta_bw"] + notes)
        pred, spec = both(lambda bs: W * _eta(pri, "eta_bw", bs))
        return Prediction(rid, g, "stream", pred / scale, measured, row["unit"], spec / scale if spec else None,
                          True, ["HBM stream at W · eta_bw"] + notes)
    # all-to-all (DeepEP)
    outside = bool(re.search(r"internode|rdma|ep\s*\d+\s*x\s*\d+", text + " " + row["hardware"], re.I))
    bw_spec = system.scaleout_bw if outside else system.scaleup_bw
    eta_name = "eta_scaleout" if outside else "eta_scaleup"
    tier = "scale-out (RDMA)" if outside else "scale-up (NVLink)"
    if not bw_spec:
        return Unexpressed(rid, g, f"{system.name} has no {tier} bandwidth in the catalog")
    if outside:
        notes.append("DeepEP's RDMA figures count logical bytes (every expert copy, including traffic that stays "
                     "local or is forwarded over NVLink after one RDMA hop per node), so they can exceed the NIC")
    if row["metric"].lower().endswith("_latency"):
        ep = re.search(r"ep\s*(\d+)", row["parallelism"], re.I)
        T = re.search(r"(\d+)\s*tokens", row["batch"])
        D = re.search(r"hidden\s*(\d+)", row["notes"])
        k = re.search(r"top-(\d+)(?:\s*experts)?\s*$|top-(\d+)\s*experts", row["notes"])
        if not (ep and T and D and k):
            return Unexpressed(rid, g, "EP size, tokens, hidden size or top-k not found in the row")
        kk = int(k.group(1) or k.group(2))
        b = 1.0 if "dispatch" in row["metric"].lower() and "fp8 dispatch" in row["precision"].lower() else 2.0
        lat = pri.scaleout_latency_s if outside else pri.scaleup_latency_s

        def t(bs):
            return float(kernels.alltoall_time(int(T.group(1)), kk, int(D.group(1)), b, int(ep.group(1)),
                                               bw_spec * _eta(pri, eta_name, bs), 0.0 if bs == "spec" else lat))
        pred, spec = both(t)
        return Prediction(rid, g, "alltoall", pred / scale, measured, row["unit"], spec / scale if spec else None,
                          False, [f"one all-to-all over {tier}: bytes / (bw · {eta_name}) + latency"] + notes)
    pred, spec = both(lambda bs: bw_spec * _eta(pri, eta_name, bs))
    why = [f"{tier} link × {eta_name}"]
    return Prediction(rid, g, "link", pred / scale, measured, row["unit"], spec / scale if spec else None, True,
                      why + notes)


def _gemm_shape(row) -> tuple[int, int, int, int] | None:
    text = f"{row['model']} {row['notes']}"
    groups = re.search(r"groups=(\d+)", text)
    G = int(groups.group(1)) if groups else 1
    best = re.search(r"best shape (\d+)x(\d+)x(\d+)", text)
    cube = re.search(r"(\d+)\^3", text)
    if best:
        return int(best.group(1)), int(best.group(2)), int(best.group(3)), 1
    if cube:
        n = int(cube.group(1))
        return n, n, n, 1
    M = re.search(r"M/group=(\d+)", text) or re.search(r"\bM=(\d+)", text)
    N, K = re.search(r"\bN=(\d+)", text), re.search(r"\bK=(\d+)", text)
    Mv = int(M.group(1)) if M else (_int(row["batch"]) if re.search(r"M=batch", text) else None)
    if Mv is None or not (N and K):
        return None
    return Mv, int(N.group(1)), int(K.group(1)), G


def _bytes_moved(notes: str) -> float | None:
    mb = re.search(r"([\d.]+)\s*MB moved", notes)
    if mb:
        return float(mb.group(1)) * 1e6
    prod = re.search(r"((?:\d+x)+\d+)B(?:\s*x(\d+))?", notes)
    if prod:
        v = float(np.prod([float(x) for x in prod.group(1).split("x")]))
        return v * (float(prod.group(2)) if prod.group(2) else 1.0)
    return None
