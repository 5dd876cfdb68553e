"""Efficiency priors read off measured kernel tables: NVIDIA's aiconfigurator-core (Apache-2.0).

The wheel `aiconfigurator-core` (pip; the optional extra `kernels`) ships, under
`aiconfigurator_core/systems/data/<system>/`, kernel latencies measured with TensorRT-LLM, SGLang and
vLLM on H100/H200/B200/GB200/B300/GB300 (and A100): GEMMs by shape and format (BF16, FP8, NVFP4),
context and generation attention, and NCCL/custom all-reduce. This module turns them into the few
curves the roofline reads (`Priors.curves`, keys `<prior>.<format>`), as fractions of THIS catalog's
peaks, so the core needs no heavy dependency:

    GEMM (M rows, N·K weights):   t = t_kernel + max(FLOP / F, bytes / W) / eta
        FLOP = 2·M·N·K,  bytes = M·K·b_in + K·N·b_w + M·N·2             (each operand once)
        at each M, over model-sized shapes (1024 ≤ N, K ≤ 32768), the line t = a_M + X / eta_M
        (X = max(FLOP/F, bytes/W); least squares in relative error):
        t_kernel.<f> = median a_M over memory-bound M ≤ 256, per format and engine: FP8/NVFP4 ops
                       also quantise their activations in a separate kernel (their a_M is 5-15 µs
                       above BF16's), so each format's rate is read after its own fixed cost (one
                       fixed cost for every format made the NVFP4 streaming rate absorb the
                       difference: 0.25 of W where the slope says 0.4-0.9). In a served model that
                       quantisation is fused into the preceding norm or activation, so the GEMM's
                       fixed cost in a step, kernel_overhead_s, is the BF16 intercept
        eta_bw.<f>(M): memory-bound M, 1/slope, held non-increasing in M (a weight read never gets
                       cheaper because more rows ride on it)
        eta_mm.<f>(M): compute-bound M, median of X / (t − t_kernel.<f>) where t > 2·t_kernel
        FP8 / NVFP4 (roofline.CAST_FORMATS): each op's rows less its activation cast, t − c·M·K, c fitted on
                       its own compute-bound rows (`_cast_cost`); the served model's cast is priced with the
                       norms' and activation's bytes (roofline.elementwise_bytes_per_token)
    decode attention (one layer, B sequences at context S, K KV heads of H):
        bytes = B · S · 2 · K · H · b_kv;   eta_kv_bytes.<kv>(bytes) = median of bytes / (W · t),
        by bins of bytes (factor-2 wide), with t held non-decreasing in bytes
    prefill attention (causal, B prompts of S, N query and K KV heads of H; MLA's in its own tables):
        FLOP = B · S · 2·N·2H · (S + 1)/2
        t = t0 + B·N·t_seq + B·S·N·t_q + B·S·K·t_kv + FLOP / (F_bf16 · eta)   by H (`attn_ctx_*`; MLA: `attn_mla_ctx_*`)
        eta_attn_prefill.bf16(FLOP) = median of FLOP / (F_bf16 · t)           (one curve: a profile without the law)
    expert all-to-all (DeepEP dispatch/combine in one node): t = lat + bytes / (bw_up · eta),
        bytes = T·k·D·2·(1 − 1/EP) per chip; eta_scaleup.alltoall(bytes), alltoall_latency_s = lat
    all-reduce over n ≤ 8 chips of a message of m bytes (ring accounting; the faster of the engine's
    custom kernel and NCCL at each size; the tables count BF16 elements, m = 2 · elements):
        t = lat + 2·(n − 1)/n · m / (bw_up · eta);  lat = median t at m ≤ 4 kB;
        eta_scaleup.allreduce(m) = 2·(n − 1)/n · m / (bw_up · (t − lat)),  where t > 2·lat

What is read off the MoE tables (balanced routing, the fastest gated kernel path per shape) is the fused MoE
op's law on one rank (`_moe_law`, round 7, 2026-11-24), fitted per format, engine and expert-parallel width ep:

    t = t0 + hits · t_e + bytes / (W · eta_bw) + FLOP / (F · eta_mm) + c_route · T·k·D·2 / W

a sum, not a max: at serving's few rows per expert the grouped GEMM does not hide its weight read under its
MMAs. t0 replaces, once per MoE layer, the two grouped expert GEMMs' and the top-k / permute / un-permute
kernels' fixed costs (roofline.overhead_time_moe); t_e is each expert's own fixed cost (what makes small
experts stream slowly); c_route the passes over the group's routed activations (why the op slows with ep at
equal rows per expert). Stored as curves by ep (`moe_t0`, `moe_t_expert`, `moe_eta_bw`, `moe_eta_mm`,
`moe_route`), read at the layout's ep (1 under attention data parallelism). It replaced rates by rows per
expert M_e (rounds 5-6), whose curves, held non-increasing from a low first point, read Hopper TensorRT-LLM
FP8 experts at ep ≥ 8 at a quarter of the bandwidth the tables show (median miss on the tables' own rows
60-126 %, of the law 5-17 %). MXFP4 experts ('mxfp4': gpt-oss, DeepSeek-V4) read the MXFP4 kernel each engine
runs (`MOE_FORMATS`), as fractions of the FP8 peak (roofline.MOE_PEAK). `moe_overhead_fmt` (the op at one
token, `_moe_fixed`) is kept for priors without the law.

DeepSeek sparse attention's indexer (DeepSeek-V3.2, GLM-5) in decode is read as the difference of SGLang's two
measured attention modules, GLM-5's whole DSA block less GLM-5.2's block on a layer that skips its indexer
(`_dsa_indexer`, round 19): t = t0 + B·t_seq + [S > k]·t_sel + S·t_len + B·S·132/(W·eta) a layer (`dsa_idx_*`).

Each engine (TensorRT-LLM, SGLang, vLLM; their newest collected version) gives its own curve, stored
as `<key>@<engine>` (e.g. `eta_kv_bytes.fp8@trtllm`) and used when the engine is known
(`Priors.for_engine`: `serve --engine`, and validation rows whose source names it); the plain key is
the median over engines at each size, for an engine not stated, and `spread` is their half-range. No table row is fitted to a serving
measurement: the curves are what single kernels achieve.

    tokenmath calibrate --from-kernel-tables installed          # the pip package's tables
    tokenmath calibrate --from-kernel-tables PATH/systems       # an unpacked wheel or a checkout
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..core.arch import bytes_per
from ..core.errors import InputError
from ..core.load import PACKAGE_CATALOG, load_chip
from ..core.records import ENGINES
from ..core.roofline import CAST_FORMATS, MOE_PEAK
from ..core.units import COMPUTE_FORMAT

__all__ = ["TABLE_SYSTEMS", "Derived", "find_tables", "derive_priors", "derive_all", "write_priors", "priors_yaml"]

# catalog chip -> (aiconfigurator system folder, priors entry written, hardware generation)
TABLE_SYSTEMS = {
    "h100-sxm": ("h100_sxm", "h100-sxm-kernels", "hopper"),
    "h200": ("h200_sxm", "h200-kernels", "hopper"),
    "b200": ("b200_sxm", "b200-kernels", "blackwell"),
    "b300": ("b300_sxm", "b300-kernels", "blackwell"),
    "gb200": ("gb200", "gb200-kernels", "blackwell"),
    "gb300": ("gb300", "gb300-kernels", "blackwell"),
    "a100-80gb": ("a100_sxm", "a100-80gb-kernels", "ampere"),
}
# our format -> the tables' GEMM format (FP8 per-tensor: what ModelOpt FP8 checkpoints run; FP8 with 128 × 128
# weight blocks: what DeepSeek-V3 and the Qwen3 / Kimi FP8 releases run)
GEMM_FORMATS = {"bf16": "bfloat16", "fp8": "fp8", "fp8_block": "fp8_block", "fp4": "nvfp4"}
KV_FORMATS = {"bf16": "bfloat16", "fp8": "fp8"}
M_GRID = tuple(2 ** i for i in range(16))  # GEMM rows 1 … 32768
PACKAGE = "aiconfigurator-core"


@dataclass
class Derived:
    """One chip's priors from the tables: scalars and curves, each with where it came from."""

    chip: str
    name: str
    generation: str
    tables: str
    version: str
    scalars: dict[str, float] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    curves: dict[str, dict] = field(default_factory=dict)
    kernel_fmt: dict[str, float] = field(default_factory=dict)
    moe_fmt: dict[str, float] = field(default_factory=dict)
    k_law: dict[str, tuple[float, float]] = field(default_factory=dict)  # format -> (eta_inf, K_half)
    best: dict[str, float] = field(default_factory=dict)  # format -> a large GEMM's best-shape efficiency
    notes: list[str] = field(default_factory=list)


# ---- finding and reading the tables --------------------------------------------------------------

def find_tables(where: str = "installed") -> tuple[Path, str]:
    """(the `systems/` folder holding `data/<system>/…`, the package version) from 'installed' or a path."""
    if where == "installed":
        try:
            import aiconfigurator_core  # noqa: F401  (only its files are read)
        except ImportError:
            raise InputError("--from-kernel-tables installed: aiconfigurator-core is not installed "
                             "(pip install 'tokenmath[kernels]', or give the path of an unpacked wheel)") from None
        from importlib.metadata import version

        return Path(aiconfigurator_core.__file__).parent / "systems", version(PACKAGE)
    p = Path(where)
    for cand in (p, p / "systems", p / "aiconfigurator_core" / "systems"):
        if (cand / "data").is_dir():
            m = re.search(r"(\d+\.\d+[\w.]*)", str(p.resolve()))
            return cand, (m.group(1) if m else "unknown version")
    raise InputError(f"--from-kernel-tables {where}: no systems/data/ folder there (expected an unpacked "
                     f"{PACKAGE} wheel or its systems/ folder)")


def _read(path: Path, columns=None):
    import pandas as pd  # the kernels extra (aiconfigurator-core depends on pandas and pyarrow)

    return pd.read_parquet(path, columns=columns)


def _version_key(v: str):
    return tuple(int(x) if x.isdigit() else -1 for x in re.split(r"[.\-a-z]+", v) if x)


def _newest(folder: Path, filename: str) -> dict[str, Path]:
    """engine -> the table `filename` of its newest collected version under `folder/<engine>/<version>/`."""
    out = {}
    for eng in ENGINES:
        found = sorted((d for d in (folder / eng).glob("*") if (d / filename).is_file()),
                       key=lambda d: _version_key(d.name))
        if found:
            out[f"{eng} {found[-1].name}"] = found[-1] / filename
    return out


# ---- the statistics ------------------------------------------------------------------------------

def _across_engines(per_engine: list[dict[float, float]]) -> tuple[list[float], list[float], list[float]]:
    """x, median over engines, half-range over the median — at the sizes every engine measured."""
    xs = sorted(set.intersection(*(set(d) for d in per_engine))) if per_engine else []
    med, spread = [], []
    for x in xs:
        v = np.array([d[x] for d in per_engine])
        m = float(np.median(v))
        med.append(m)
        spread.append(float((v.max() - v.min()) / 2 / m) if m > 0 else 0.0)
    return xs, med, spread


def _curve(x, y, spread, source: str, cap: float = 1.0, work: bool = True) -> dict:
    """A curve for the catalog; efficiencies above `cap` (the spec bound) are held at it, and points below
    0.1 % of the peak (a kernel's fixed cost spread over a few bytes) are dropped. With `work` (x is the
    job's size, its time x / eta), the time is held non-decreasing in x: a larger job is never faster."""
    if work and len(x):
        t = np.maximum.accumulate(np.asarray(x, dtype=float) / np.asarray(y, dtype=float))
        y = list(np.asarray(x, dtype=float) / t)
    keep = [i for i, v in enumerate(y) if v >= 0.001]
    return {"x": [float(x[i]) for i in keep], "y": [_sig(min(y[i], cap)) for i in keep],
            "spread": [_sig(min(spread[i], 10.0)) for i in keep], "source": source}


def _sig(v: float, n: int = 3) -> float:
    if v == 0 or not math.isfinite(v):
        return float(v)
    return float(f"{v:.{n}g}")


# ---- GEMMs ---------------------------------------------------------------------------------------

def _by_engine(items: list[tuple]) -> list[tuple[str, list[tuple]]]:
    """('', every engine's item) for the median, then ('@<engine>', [its item]) for each engine's own curve."""
    out = [("", items)]
    for it in items:
        out.append((f"@{it[-1].split()[0]}", [it]))
    return out


def _store_split(out: Derived, key_mm: str, key_bw: str, per: list[dict], bounds: list[dict], used: list[str],
                 src: str, what: str, held: str = "") -> None:
    """Each engine's points (and the median over engines) split where they turn compute-bound: `key_mm` for the
    compute-bound sizes, `key_bw` for the memory-bound ones, held non-increasing (a weight read never gets
    cheaper with more rows on it)."""
    for suffix, group in _by_engine(list(zip(per, bounds, used))):
        xs, med, spread = _across_engines([g[0] for g in group])
        compute = [x for x in xs if np.mean([g[1].get(x, False) for g in group]) >= 0.5]
        memory = [x for x in xs if x not in compute]
        text = src.format(engines=", ".join(g[2] for g in group)) + ("; median over engines" if not suffix else "")
        if compute:
            i = [xs.index(x) for x in compute]
            out.curves[f"{key_mm}{suffix}"] = _curve(compute, [med[j] for j in i], [spread[j] for j in i],
                                                     text + f"; compute-bound {what}")
        if memory:
            i = [xs.index(x) for x in memory]
            y = np.minimum.accumulate([med[j] for j in i])
            out.curves[f"{key_bw}{suffix}"] = _curve(memory, list(y), [spread[j] for j in i],
                                                     text + f"; memory-bound {what}, held non-increasing{held}",
                                                     work=False)


def _store_curves(out: Derived, key: str, per: list[dict], used: list[str], src: str, cap: float = 1.0) -> None:
    """The engines' median curve under `key`, and each engine's own under `key@<engine>`."""
    for suffix, group in _by_engine(list(zip(per, used))):
        xs, med, spread = _across_engines([g[0] for g in group])
        if xs:
            what = ", ".join(g[1] for g in group)
            out.curves[f"{key}{suffix}"] = _curve(xs, med, spread, src.format(engines=what) + (
                "; median over engines" if not suffix else ""), cap=cap)


def _line(X: np.ndarray, t: np.ndarray) -> tuple[float, float]:
    """t = a + X / eta by least squares in relative error (weights 1/t): (a ≥ 0, eta)."""
    w = 1.0 / t
    (a, slope), *_ = np.linalg.lstsq(np.vstack([np.ones_like(X), X]).T * w[:, None], t * w, rcond=None)
    if a < 0 or slope <= 0:  # no fixed cost resolved: a line through the origin
        a, slope = 0.0, float(np.sum(X * t * w * w) / np.sum(X * X * w * w))
    return float(a), 1.0 / float(slope)


def _cast_cost(M: np.ndarray, K: np.ndarray, t: np.ndarray, X: np.ndarray, compute: np.ndarray) -> float:
    """Seconds per activation element an FP8 / NVFP4 GEMM op spends quantising its A operand.

    The tables time the op as a served model would call it on BF16 activations: the scale and the cast of the
    M·K input, then the MMA. The cast grows with M·K, not with the MMA's M·N·K, so at each compute-bound M
    (≥ 1024 rows) the shapes give t = a_M + c_M · M·K + X / eta_M (least squares in relative error); c is the
    median c_M, held ≥ 0. On H200 (aiconfigurator-core 0.12.0) c·M·K is 2.3-3.6× the time of streaming 3 bytes
    an element at W for TensorRT-LLM's and vLLM's ops, 1.2-1.4× for SGLang's; the BF16 tables fit −0.8…+0.3
    (no cast)."""
    cs = []
    for m in np.unique(M[compute & (M >= 1024)]):
        s = compute & (M == m)
        if s.sum() >= 8:
            A = np.vstack([np.ones(s.sum()), M[s] * K[s], X[s]]).T / t[s, None]
            (_, c, _), *_ = np.linalg.lstsq(A, np.ones(s.sum()), rcond=None)
            cs.append(c)
    return max(float(np.median(cs)), 0.0) if cs else 0.0


def _gemm_engine(df, F: float, W: float, b_w: float, quantised: bool = False) -> tuple[dict, dict, float]:
    """One engine's GEMM table at one format -> ({M: eta}, {M: compute-bound?}, t_kernel).

    At each M the shapes give a line t = a_M + X / eta_M (X = max(FLOP/F, bytes/W)): the intercept is the op's
    fixed cost (launch, fill, tail, and for FP8/NVFP4 the activations' quantisation), the slope its rate.
    t_kernel = the median intercept over the memory-bound rows M ≤ 256 (the weight-streaming regime of
    decode); memory-bound M take eta from the slope; compute-bound M take the median X / (t − t_kernel).
    A `quantised` op's rows are read less their activation cast, c · M·K (`_cast_cost`), never below X: a
    served model fuses that cast into the norm or activation before the GEMM, whose bytes
    roofline.elementwise_bytes_per_token counts (before 2026-11-29 the FP8 rate at large M, 0.54 of the peak on
    H200, held the cast as well: counted twice once the elementwise kernels' bytes were priced)."""
    d = df[(df.n >= 1024) & (df.k >= 1024) & (df.n <= 32768) & (df.k <= 32768) & df.m.isin(M_GRID)]
    t = d.latency.to_numpy() * 1e-3  # the tables are in ms
    M, N, K = (d[c].to_numpy(dtype=float) for c in ("m", "n", "k"))
    flop_t = 2 * M * N * K / F
    bytes_t = (M * K * (b_w if b_w < 2 else 2.0) + K * N * b_w + M * N * 2.0) / W
    X = np.maximum(flop_t, bytes_t)
    if quantised:
        t = np.maximum(t - _cast_cost(M, K, t, X, flop_t > bytes_t) * M * K, X)
    fits, bound = {}, {}
    for m in np.unique(M):
        s = M == m
        if s.sum() >= 5:
            fits[float(m)] = _line(X[s], t[s])
            bound[float(m)] = bool(np.median(flop_t[s] > bytes_t[s]) >= 0.5)
    small = [fits[m][0] for m in fits if m <= 256 and not bound[m]]
    t_kernel = float(np.clip(np.median(small), 0.0, 50e-6)) if small else 0.0
    eta = {}
    for m, (a, e) in fits.items():
        if not bound[m]:
            eta[m] = e
        else:
            s = (M == m) & (t > 2 * t_kernel)
            if s.sum() >= 3:
                eta[m] = float(np.median(X[s] / (t[s] - t_kernel)))
    return eta, {m: bound[m] for m in eta}, t_kernel


def _gemm_k_law(df, F: float) -> tuple[float, float] | None:
    """One engine's compute-bound GEMMs at one format -> (eta_inf, K_half) of eta = eta_inf · K / (K + K_half).

    Every output tile pays a fixed prologue and epilogue (the pipeline's fill, the accumulator's scaling and
    write-back) besides its K-loop: the time of K_half multiply-adds per output element. Fitted in relative
    error on the shapes whose math dominates (M ≥ 2048, N ≥ 4096, K from 128 to 32768); None if the fit does
    not resolve a K_half inside (0, 8192)."""
    d = df[(df.m >= 2048) & (df.n >= 4096) & (df.n <= 32768) & (df.k >= 128) & (df.k <= 32768)]
    if len(d) < 20:
        return None
    M, N, K = (d[c].to_numpy(dtype=float) for c in ("m", "n", "k"))
    eta = 2 * M * N * K / (d.latency.to_numpy() * 1e-3) / F
    # eta = eta_inf · K/(K + K_half)  <=>  1/eta = 1/eta_inf + (K_half/eta_inf) · (1/K): a line in 1/K,
    # weighted by eta so that each row counts in relative error
    A = np.vstack([np.ones_like(K), 1.0 / K]).T
    (a, b), *_ = np.linalg.lstsq(A * eta[:, None], np.ones_like(eta), rcond=None)
    if a <= 0 or b <= 0 or not 0 < b / a < 8192:
        return None
    return float(1.0 / a), float(b / a)


BEST_QUANTILE = 99  # the tables' best shapes: the 99th percentile, not the maximum (one noisy timing)


def _gemm_best(df, F: float) -> float | None:
    """One engine's GEMMs at one format -> the efficiency its best large shapes reach: the BEST_QUANTILE-th
    percentile of 2·M·N·K / (t · F) over the shapes with M, N and K all ≥ 1024 (what a search over shapes, as
    the MAMF finder runs, finds); None with fewer than 20 such shapes."""
    d = df[(df.m >= 1024) & (df.n >= 1024) & (df.k >= 1024)]
    if len(d) < 20:
        return None
    eta = 2 * d.m.to_numpy(dtype=float) * d.n.to_numpy(dtype=float) * d.k.to_numpy(dtype=float) \
        / (d.latency.to_numpy() * 1e-3) / F
    return float(np.percentile(eta, BEST_QUANTILE))


def _gemm(root: Path, sysdir: str, chip, out: Derived) -> None:
    files = _newest(root / "data" / sysdir / "gemm", "gemm_perf.parquet")
    if not files:
        out.notes.append("no GEMM tables")
        return
    tables = {k: _read(f) for k, f in files.items()}
    kernels, fixed = [], {}
    for fmt_, tab_fmt in GEMM_FORMATS.items():
        if chip.peak_precision(fmt_) != COMPUTE_FORMAT.get(fmt_, fmt_):
            continue  # the chip has no tensor-core peak at this format
        F, W, b_w = chip.peak(fmt_), chip.hbm_bandwidth_bytes_per_s, bytes_per(fmt_)
        per, bounds, used = [], [], []
        for eng, df in tables.items():
            sub = df[df.gemm_dtype == tab_fmt]
            if len(sub) == 0:
                continue
            eta, bound, tk = _gemm_engine(sub, F, W, b_w, quantised=fmt_ in CAST_FORMATS)
            law = _gemm_k_law(sub, F)
            if law:
                out.k_law[f"{fmt_}@{eng.split()[0]}"] = law
            top = _gemm_best(sub, F)
            if top:
                out.best[f"{fmt_}@{eng.split()[0]}"] = top
            if eta:
                per.append(eta)
                bounds.append(bound)
                used.append(eng)
                fixed[(fmt_, eng.split()[0])] = tk
                if fmt_ == "bf16":
                    kernels.append(tk)
        if not per:
            continue
        src = (f"{PACKAGE} {out.version} {sysdir}/gemm ({{engines}}; {tab_fmt}): t = t_kernel + max(FLOP/F, bytes/W)"
               f" / eta at model-sized shapes (memory-bound M: the slope; compute-bound M: median of "
               f"max(FLOP/F, bytes/W)/(t − t_kernel)), against F = {F / 1e12:g} TFLOP/s and W = {W / 1e12:g} TB/s "
               f"of catalog chip {chip.name}" + ("; each op's rows less its activation cast c·M·K, fitted on its own "
                                                  "rows (kernel_tables._cast_cost)" if fmt_ in CAST_FORMATS else ""))
        _store_split(out, f"eta_mm.{fmt_}", f"eta_bw.{fmt_}", per, bounds, used, src, "rows", " in M")
    if kernels:
        out.scalars["kernel_overhead_s"] = float(np.median(kernels))
        out.sources["kernel_overhead_s"] = (f"{PACKAGE} {out.version} {sysdir}/gemm: median over engines of the BF16 "
                                            f"GEMM's intercept of t = t_kernel + max(FLOP/F, bytes/W) / eta at "
                                            f"memory-bound M ≤ 256 (model-sized shapes). The FP8 and NVFP4 ops' "
                                            f"intercepts are larger by their separate activation-quantisation "
                                            f"kernel, which the engines fuse into the preceding norm or activation")
    for fmt_ in sorted({k.split("@")[0] for k in out.k_law}):
        laws = [v for k, v in out.k_law.items() if k.split("@")[0] == fmt_]
        out.k_law[fmt_] = (float(np.median([e for e, _ in laws])), float(np.median([h for _, h in laws])))
    for fmt_ in sorted({k.split("@")[0] for k in out.best}):
        out.best[fmt_] = float(np.median([v for k, v in out.best.items() if k.split("@")[0] == fmt_]))
    if out.best:
        out.sources["matmul_best_fmt"] = (
            f"{PACKAGE} {out.version} {sysdir}/gemm: the {BEST_QUANTILE}th percentile of 2·M·N·K / (t · F) over each "
            f"engine's shapes with M, N, K ≥ 1024 of each format (the best shapes a search finds), against the "
            f"format's dense peak of catalog chip {chip.name}; '<format>' the median over engines")
    if out.k_law:
        out.sources["matmul_k_law_fmt"] = (
            f"{PACKAGE} {out.version} {sysdir}/gemm: eta = eta_inf · K / (K + K_half) fitted in relative error on "
            f"each engine's compute-bound shapes (M ≥ 2048, 4096 ≤ N ≤ 32768, 128 ≤ K ≤ 32768) of each format, "
            f"against the format's dense peak of catalog chip {chip.name}; '<format>' the median over engines")
    quant = _quantize(root, sysdir)
    for (fmt_, eng), tk in fixed.items():  # a quantised GEMM's fixed cost less its (fused in models) quantisation
        bf = fixed.get(("bf16", eng), 0.0)
        out.kernel_fmt[f"{fmt_}@{eng}"] = max(bf, tk - (quant.get(eng, 0.0) if fmt_ != "bf16" else 0.0))
    for fmt_ in {f for f, _ in fixed}:
        v = [out.kernel_fmt[f"{fmt_}@{e}"] for f, e in fixed if f == fmt_]
        out.kernel_fmt[fmt_] = float(np.median(v))
    if out.kernel_fmt:
        out.sources["kernel_overhead_fmt"] = (
            f"{PACKAGE} {out.version} {sysdir}/gemm and quantize: each format's intercept of t = t_kernel + "
            f"max(FLOP/F, bytes/W) / eta at memory-bound M ≤ 256, less the engine's activation-quantisation ops "
            f"(compute_scale + scale_matrix at M ≤ 16), which a served model fuses into the preceding norm or "
            f"activation; never below the BF16 GEMM's; '<format>' the median over engines")
    if "eta_mm.bf16" in out.curves:
        c = out.curves["eta_mm.bf16"]
        out.scalars["eta_flop"] = c["y"][-1]
        out.sources["eta_flop"] = f"eta_mm.bf16 at M = {c['x'][-1]:g} rows (largest measured): {c['source']}"
    if "eta_bw.bf16" in out.curves:
        c = out.curves["eta_bw.bf16"]
        out.scalars["eta_bw"] = c["y"][0]
        out.sources["eta_bw"] = f"eta_bw.bf16 at M = {c['x'][0]:g} row (a GEMV streaming its weights): {c['source']}"


def _quantize(root: Path, sysdir: str) -> dict[str, float]:
    """engine -> seconds its FP8 activation quantisation takes at decode sizes (M ≤ 16, 4k ≤ K ≤ 8k):
    the quantize tables' compute_scale plus scale_matrix ops."""
    out = {}
    for name in ("computescale_perf.parquet", "scale_matrix_perf.parquet"):
        for eng, f in _newest(root / "data" / sysdir / "quantize", name).items():
            d = _read(f)
            d = d[(d.m <= 16) & (d.k >= 4096) & (d.k <= 8192)]
            if len(d):
                e = eng.split()[0]
                out[e] = out.get(e, 0.0) + float(np.median(d.latency)) * 1e-3
    return out


# ---- attention -----------------------------------------------------------------------------------

def _binned(x: np.ndarray, eff: np.ndarray, time_monotone: bool, scale: float) -> dict[float, float]:
    """Median efficiency in factor-2 bins of x (bin centres as x); time x/(scale·eta) held non-decreasing."""
    if len(x) == 0:
        return {}
    lo, hi = math.floor(math.log2(x.min())), math.ceil(math.log2(x.max()))
    pts = {}
    for b in range(lo, hi + 1):
        s = (x >= 2.0 ** (b - 0.5)) & (x < 2.0 ** (b + 0.5))
        if s.sum() >= 3:
            pts[2.0 ** b] = float(np.median(eff[s]))
    if time_monotone and pts:
        xs = sorted(pts)
        t = np.maximum.accumulate([x_ / (scale * pts[x_]) for x_ in xs])
        pts = {x_: x_ / (scale * t_) for x_, t_ in zip(xs, t)}
    return pts


def _full_attention(df):
    """Rows without a sliding window (tables that have no window column measured none)."""
    return df[df.window_size == 0] if "window_size" in df else df


# query heads per KV head G at which the decode-attention law is fitted (rows to the nearest in log2)
GQA_GROUPS = (1, 2, 4, 8, 16, 32, 64, 128)
# the law's terms, curves by G, and their units
ATTN_DECODE_LAW = {"attn_dec_t0": "s", "attn_dec_t_pair": "s", "attn_dec_eta": ""}


def _streaming_law(law: dict, errs: dict, eng: str, width: np.ndarray, widths, work: np.ndarray | None,
                   bytes_t: np.ndarray, t: np.ndarray) -> None:
    """A decode kernel's t = t0 + work · t_w + bytes_t / eta (bytes_t = bytes / W) fitted at each width its rows have
    (≥ 20 rows, those slower than W) by least squares in relative error, every term ≥ 0 and eta ≤ 1 (y = t − bytes_t
    is fitted): law[eng][width] = (t0, t_w, eta), errs[eng] the rows' |errors|; without work items (bytes in
    proportion to the work at one width) t = t0 + bytes_t / eta and law[eng][width] = (t0, eta)."""
    y = t - bytes_t
    for w in widths:
        s = (width == w) & (y > 0)
        if s.sum() < 20:
            continue
        A = np.stack([np.ones(s.sum())] + ([] if work is None else [work[s]]) + [bytes_t[s]], 1)
        x = _nnls(A / t[s, None], y[s] / t[s])
        law.setdefault(eng, {})[w] = (max(x[0], 1e-7),) + (() if work is None else (max(x[1], 1e-12),)) + (
            1 / (1 + x[-1]),)
        errs.setdefault(eng, []).extend(np.abs((A @ x + bytes_t[s]) / t[s] - 1))


def _decode_attention(root: Path, sysdir: str, chip, out: Derived) -> None:
    """One decode-attention kernel (a layer, B sequences of context S, K KV heads of H, N query heads), read off the
    tables' rows two ways.

    As a law, a sum (what GQA, MQA and MHA models read, at their own G = N/K):

        t = t0 + n_pair · t_pair + bytes / (W · eta),   n_pair = B · K,   bytes = B · S · 2 · K · H · b_kv

    t0 the kernel's fixed cost, t_pair what each (sequence, KV head) work item costs beyond its bytes (its page
    table, its softmax and output: why 2,048 short sequences run 3-5× slower than 64 long ones of the same bytes),
    eta the streaming rate. Fitted per engine, KV format and G (rows to the nearest of GQA_GROUPS) by least
    squares in relative error with every term ≥ 0 and eta ≤ 1 (y = t − bytes/W is fitted), rows faster than
    W left out. Stored as curves by G: `attn_dec_t0`, `attn_dec_t_pair`, `attn_dec_eta` (`.<kv>`,
    `.<kv>@<engine>`; the plain key the median over engines).

    As one curve by bytes over every row, `eta_kv_bytes.<kv>` (what MLA reads: its latent is no KV head). Before
    2026-11-28 every model read that curve; the kernels differ by G (H200 TensorRT-LLM, FP8 KV: G 2-16 at 1.3-1.8×
    its median, G ≥ 48 at 0.1×) and by B at equal bytes: it missed the tables' rows by a median 8-21 %, p90
    46-67 %, the law by 7-17 %, p90 25-48 % (B ≥ 64: 20-33 % → 9-19 %)."""
    files = _newest(root / "data" / sysdir / "attention", "generation_attention_perf.parquet")
    W = chip.hbm_bandwidth_bytes_per_s
    for fmt_, tab_fmt in KV_FORMATS.items():
        per, used = [], []
        law: dict[str, dict[int, tuple]] = {}
        errs: dict[str, list] = {}
        for eng, f in files.items():
            df = _full_attention(_read(f))
            d = df[(df.kv_cache_dtype == tab_fmt) & (df.head_dim >= 64)]
            if len(d) == 0:
                continue
            K = d.num_key_value_heads.to_numpy(dtype=float)
            pairs = d.batch_size.to_numpy(dtype=float) * K
            by = pairs * (d.step + d.isl).to_numpy(dtype=float) * 2 * d.head_dim.to_numpy() * bytes_per(fmt_)
            t = d.latency.to_numpy() * 1e-3
            pts = _binned(by, by / (W * t), True, W)
            if pts:
                per.append(pts)
                used.append(eng)
            G = np.asarray(GQA_GROUPS)[np.abs(np.log2(d.num_heads.to_numpy(dtype=float) / K)[:, None]
                                              - np.log2(GQA_GROUPS)[None, :]).argmin(axis=1)]
            _streaming_law(law, errs, eng, G, GQA_GROUPS, pairs, by / W, t)
        _store_curves(out, f"eta_kv_bytes.{fmt_}", per, used, (
            f"{PACKAGE} {out.version} {sysdir}/attention generation_attention ({{engines}}; KV {tab_fmt}, full "
            f"attention): KV bytes / (W·t) by KV bytes one kernel reads (one layer), W = {W / 1e12:g} TB/s of "
            f"catalog chip {chip.name}"))
        _store_law(out, law, errs, ATTN_DECODE_LAW, fmt_, "query heads per KV head G", lambda used: (
            f"{PACKAGE} {out.version} {sysdir}/attention generation_attention ({used}; KV {tab_fmt}, full "
            f"attention, head ≥ 64): t = t0 + B·K·t_pair + bytes/(W·eta) fitted per G = N/K "
            f"(kernel_tables._decode_attention), W = {W / 1e12:g} TB/s of catalog chip {chip.name}; "))


# query heads per chip h at which MLA's decode law is fitted (the tables' num_heads: 128 / tp of DeepSeek-V3)
MLA_HEADS = (1, 2, 4, 8, 16, 32, 64, 128)
# the law's terms, curves by h, and their units
MLA_DECODE_LAW = {"attn_mla_t0": "s", "attn_mla_t_seq": "s", "attn_mla_eta": ""}
# the latent one cached token holds per layer: kv_lora_rank + qk_rope_head_dim of DeepSeek-V3, the tables' model
MLA_LATENT = 512 + 64


def _mla_decode(root: Path, sysdir: str, chip, out: Derived) -> None:
    """MLA's decode-attention kernel (a layer, B sequences at context S, h query heads on the chip, one latent of
    c = 576 values a token: DeepSeek-V3's shape), read off the tables' own MLA rows as a law:

        t = t0 + B · t_seq + bytes / (W · eta),   bytes = B · S · c · b_kv

    t0 the kernel's fixed cost, t_seq what each sequence costs beyond its bytes, eta the rate its latent streams
    at. The h heads multiply the latent in the absorbed form (2·h·S·(c + 512) FLOP a sequence), so at h = 128 the
    kernel is compute-bound and eta, fitted per h, carries it (FLOP and bytes are in a fixed ratio at one h).
    Fitted per engine, KV format and h as _decode_attention fits GQA's law per G; stored as curves by h
    (`attn_mla_t0`, `attn_mla_t_seq`, `attn_mla_eta`). Before 2026-11-28 (round 16) MLA read the GQA kernels'
    pooled curve by bytes (`eta_kv_bytes`), which has no heads in it."""
    files = _newest(root / "data" / sysdir / "mla", "generation_mla_perf.parquet")
    W = chip.hbm_bandwidth_bytes_per_s
    for fmt_, tab_fmt in KV_FORMATS.items():
        law: dict[str, dict[int, tuple]] = {}
        errs: dict[str, list] = {}
        for eng, f in files.items():
            d = _read(f)
            d = d[d.kv_cache_dtype == tab_fmt]
            if len(d) == 0:
                continue
            B = d.batch_size.to_numpy(dtype=float)
            bytes_t = B * (d.step + d.isl).to_numpy(dtype=float) * MLA_LATENT * bytes_per(fmt_) / W
            _streaming_law(law, errs, eng, d.num_heads.to_numpy(dtype=float), MLA_HEADS, B, bytes_t,
                           d.latency.to_numpy() * 1e-3)
        _store_law(out, law, errs, MLA_DECODE_LAW, fmt_, "query heads per chip h", lambda used: (
            f"{PACKAGE} {out.version} {sysdir}/mla generation_mla ({used}; KV {tab_fmt}, latent {MLA_LATENT} "
            f"values a token): t = t0 + B·t_seq + bytes/(W·eta) fitted per h (kernel_tables._mla_decode), "
            f"W = {W / 1e12:g} TB/s of catalog chip {chip.name}; "))


# the DSA indexer's decode law (DeepSeek-V3.2's lightning indexer at GLM-5's sizes): one curve point each, at the
# tables' indexer heads, and their units
DSA_INDEXER_LAW = {"dsa_idx_t0": "s", "dsa_idx_t_seq": "s", "dsa_idx_t_sel": "s", "dsa_idx_t_len": "s",
                   "dsa_idx_eta": ""}
# the tables' GLM-5 / GLM-5.2 indexer (aiconfigurator-core sdk/operations/dsa.py DSA_MODEL_DIMS GlmMoeDsaForCausalLM):
# d_model 6144, q_lora_rank 2048, index_n_heads 32, index_head_dim 128, index_topk 2048; its key cached in FP8 with
# one fp32 scale a token (128 + 4 B, the catalog's index_bytes_per_token_layer for glm-5)
DSA_TABLE_DIMS = {"d_model": 6144, "q_lora_rank": 2048, "n_idx": 32, "d_idx": 128, "topk": 2048, "key_bytes": 132}
# bytes a weight holds in each GEMM format the DSA tables name (NVFP4: 4 bits and an FP8 scale per 16)
DSA_GEMM_BYTES = {"fp8_block": 1.0, "bfloat16": 2.0, "nvfp4": 0.5625}
DSA_MAX_BATCH = 512  # the 1,024-sequence rows run 8-15× the 512's in both modules: another regime, left out


def _dsa_indexer(root: Path, sysdir: str, chip, out: Derived) -> None:
    """The DSA indexer's decode cost on one layer (DeepSeek-V3.2's lightning indexer: its q/k projections and
    weights, the FP8 logits of every cached key, the top-k), read as the difference of two measured modules:
    SGLang's GLM-5 `dsa_generation_module` (the whole attention block) less GLM-5.2's
    `dsa_generation_module_skip_indexer` (the same block on a layer that reuses another's top-k), matched by GEMM
    format, KV format, tp, B and S (the median of each side). Less the indexer's weight read at W (the roofline
    streams those weights with the step's others), fitted as

        t = t0 + B · t_seq + [S > k] · t_sel + S · t_len + B · S · c / (W · eta)

    t0 the indexer's dozen kernels' fixed cost, t_seq each sequence's, t_sel the top-k selection once the context
    exceeds the k = 2,048 tokens kept, t_len the walk along one sequence's keys (one sequence's logits and top-k
    run on a few SMs: at B = 1 the cost grows with S, not with B·S), c = 132 B the cached key a token, eta its
    streaming rate. The indexer is replicated on every tp rank (the difference is the same at tp 1-8), so its
    rows are pooled over tp and the KV format; B ≤ DSA_MAX_BATCH. Stored as one-point curves at the tables' 32
    indexer heads (`dsa_idx_*`, format key 'fp8', the key's). Only SGLang's tables hold the skip module: the law
    is SGLang's, read for every engine."""
    files = _newest(root / "data" / sysdir / "sparse_attention", "dsa_generation_module_perf.parquet")
    W, dims = chip.hbm_bandwidth_bytes_per_s, DSA_TABLE_DIMS
    w_params = dims["q_lora_rank"] * dims["n_idx"] * dims["d_idx"] + dims["d_model"] * (dims["d_idx"] + dims["n_idx"])
    law: dict[str, dict[int, tuple]] = {}
    errs: dict[str, list] = {}
    keys = ["gemm_type", "kv_cache_dtype", "tp_size", "batch_size", "step"]
    for eng, f in files.items():
        d = _read(f)
        d = d[(d.batch_size <= DSA_MAX_BATCH) & d.gemm_type.isin(list(DSA_GEMM_BYTES))]
        full = d[(d.op_name == "dsa_generation_module") & (d.architecture == "GlmMoeDsaForCausalLM")]
        skip = d[d.op_name == "dsa_generation_module_skip_indexer"]
        if len(full) == 0 or len(skip) == 0:
            continue
        j = full.groupby(keys).latency.median().rename("full").to_frame().join(
            skip.groupby(keys).latency.median().rename("skip"), how="inner").reset_index()
        B, S = j.batch_size.to_numpy(dtype=float), j.step.to_numpy(dtype=float)
        t = (j.full - j.skip).to_numpy() * 1e-3 - w_params * j.gemm_type.map(DSA_GEMM_BYTES).to_numpy() / W
        bytes_t = B * S * dims["key_bytes"] / W
        y = t - bytes_t
        s = y > 0
        if s.sum() < 20:
            continue
        A = np.stack([np.ones(s.sum()), B[s], (S[s] > dims["topk"]).astype(float), S[s], bytes_t[s]], 1)
        x = _nnls(A / t[s, None], y[s] / t[s])
        law[eng] = {dims["n_idx"]: (max(x[0], 1e-7), max(x[1], 1e-12), x[2], max(x[3], 1e-15), 1 / (1 + x[4]))}
        errs[eng] = list(np.abs((A @ x + bytes_t[s]) / t[s] - 1))
    _store_law(out, law, errs, DSA_INDEXER_LAW, "fp8", "indexer heads (the tables' GLM-5: 32)", lambda used: (
        f"{PACKAGE} {out.version} {sysdir}/sparse_attention dsa_generation_module GLM-5 less "
        f"dsa_generation_module_skip_indexer GLM-5.2 ({used}; B ≤ {DSA_MAX_BATCH}, pooled over tp and KV format, "
        f"the indexer's weights at W taken off): t = t0 + B·t_seq + [S > 2048]·t_sel + S·t_len + B·S·132 B/(W·eta) "
        f"(kernel_tables._dsa_indexer), W = {W / 1e12:g} TB/s of catalog chip {chip.name}; "))


# head sizes H at which the context-attention law is fitted (other sizes, H = 512's special kernels, left out)
CTX_HEADS = (64, 128, 192, 256)
CTX_MIN_TOKENS = 16  # the law's rows: prompts of at least 16 tokens (a chunk's tail, a short prompt)
# the law's terms, curves by H, and their units
ATTN_CTX_LAW = {"attn_ctx_t0": "s", "attn_ctx_t_seq": "s", "attn_ctx_t_q": "s", "attn_ctx_t_kv": "s", "attn_ctx_eta": ""}
# MLA's context kernel (the mla tables): curves by query heads per chip; its latent has no KV head to count
ATTN_MLA_CTX_LAW = {"attn_mla_ctx_t0": "s", "attn_mla_ctx_t_seq": "s", "attn_mla_ctx_t_q": "s", "attn_mla_ctx_eta": ""}
# the context_mla tables' shape (they name no model; the same collection's mla_context_module rows are DeepSeek-V3's):
# DeepSeek-V3's MLA in prefill, d_qk = 128 + 64 (RoPE), d_v = 128 — an assumption about the collector
MLA_CTX_HEAD = (192, 128)


def _context_law(cols: list, flop_t: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """t = Σ cols · x + flop_t / eta by least squares in relative error, every x ≥ 0 and eta ≤ 1 (y = t − flop_t is
    fitted, so 1/eta − 1 ≥ 0), rows faster than the peak left out: (x with 1/eta − 1 last, |error| of the rows)."""
    s = t > flop_t
    A = np.stack([c[s] for c in cols] + [flop_t[s]], 1)
    x = _nnls(A / t[s, None], (t[s] - flop_t[s]) / t[s])
    return x, np.abs((A @ x + flop_t[s]) / t[s] - 1)


# value heads per chip at which the Gated DeltaNet decode law is fitted (the tables' num_v_heads: 64 / tp of Qwen3.5)
GDN_HEADS = (1, 2, 4, 8, 16, 32, 64)
GDN_DECODE_LAW = {"gdn_t0": "s", "gdn_eta": ""}
GDN_STATE_BYTES = 4  # the tables' recurrent state in FP32 (the catalog's Qwen3.5 state_dtype), its conv window in BF16


def _gdn_decode(root: Path, sysdir: str, chip, out: Derived) -> None:
    """A Gated DeltaNet layer's decode kernels (the causal-conv update and the recurrent state update, summed: one
    layer, B sequences, h_v value heads on the chip), read off the tables' `gdn_perf` generation rows as a law:

        t = t0 + bytes / (W · eta),
        bytes = B · 2 · (h_v·d_k·d_v·4 + (2·h_k·d_k + h_v·d_v)·(c − 1)·2)    (state and conv window, read and written)

    fitted per engine and h_v as _decode_attention fits GQA's law per G (`_streaming_law`; at one h_v the bytes are
    in proportion to B, so a cost per sequence is not told apart from the rate); stored as curves by h_v (`gdn_t0`,
    `gdn_eta`, format key 'fp32', the state's). Before 2026-11-28 (round 16) a hybrid's state streamed at the
    attention kernels' rates, its layers paying the attention law's fixed costs."""
    files = _newest(root / "data" / sysdir / "linear_attention", "gdn_perf.parquet")
    W = chip.hbm_bandwidth_bytes_per_s
    law: dict[str, dict[int, tuple]] = {}
    errs: dict[str, list] = {}
    num = ["batch_size", "num_v_heads", "num_k_heads", "head_k_dim", "head_v_dim", "d_conv"]
    for eng, f in files.items():
        d = _read(f)
        d = d[d.phase == "generation"].astype({c: float for c in num})
        layer = d.groupby(num + ["model_name", "d_model"]).latency.agg(["sum", "count"]).reset_index()
        layer = layer[layer["count"] == 2]  # both kernels of the layer timed
        if len(layer) == 0:
            continue
        B, hv, hk = (layer[c].to_numpy(dtype=float) for c in ("batch_size", "num_v_heads", "num_k_heads"))
        dk, dv, c = (layer[c].to_numpy(dtype=float) for c in ("head_k_dim", "head_v_dim", "d_conv"))
        by = B * 2 * (hv * dk * dv * GDN_STATE_BYTES + (2 * hk * dk + hv * dv) * np.maximum(c - 1, 0) * 2)
        _streaming_law(law, errs, eng, hv, GDN_HEADS, None, by / W, layer["sum"].to_numpy() * 1e-3)
    _store_law(out, law, errs, GDN_DECODE_LAW, "fp32", "value heads per chip h_v", lambda used: (
        f"{PACKAGE} {out.version} {sysdir}/linear_attention gdn_perf generation ({used}; causal_conv1d_update + the "
        f"recurrent gated-delta-rule update, an FP32 state): t = t0 + bytes/(W·eta) fitted per h_v "
        f"(kernel_tables._gdn_decode), W = {W / 1e12:g} TB/s of catalog chip {chip.name}; "))


GDN_PREFILL_LAW = {"gdn_ctx_t0": "s", "gdn_ctx_t_seq": "s", "gdn_ctx_t_tok": "s"}


def _gdn_prefill(root: Path, sysdir: str, chip, out: Derived) -> None:
    """A Gated DeltaNet layer's prefill kernels (the causal convolution and the chunked gated-delta-rule scan, summed:
    one layer, B prompts of S tokens, h_v value heads on the chip), read off the tables' `gdn_perf` context rows as

        t = t0 + B · t_seq + B·S · t_tok

    fitted per engine and h_v by least squares in relative error, every term ≥ 0; stored as curves by h_v
    (`gdn_ctx_t0`, `gdn_ctx_t_seq`, `gdn_ctx_t_tok`, format key 'fp32'). The scan walks its chunks in order and runs
    far below its FLOP (Qwen3.5-397B's 64 value heads on B200: ~0.11 µs a token a layer, where 2·7·h_v·d_k·d_v FLOP a
    token at the BF16 peak take ~3 ns), so a time per token, not a FLOP rate, is what the tables give."""
    files = _newest(root / "data" / sysdir / "linear_attention", "gdn_perf.parquet")
    law: dict[str, dict[int, tuple]] = {}
    errs: dict[str, list] = {}
    num = ["batch_size", "seq_len", "num_v_heads", "num_k_heads"]
    for eng, f in files.items():
        d = _read(f)
        d = d[d.phase == "context"].astype({c: float for c in num})
        layer = d.groupby(num + ["model_name", "d_model"]).latency.agg(["sum", "count"]).reset_index()
        layer = layer[layer["count"] == 2]  # both kernels of the layer timed
        B, S, hv = (layer[c].to_numpy(dtype=float) for c in ("batch_size", "seq_len", "num_v_heads"))
        t = layer["sum"].to_numpy() * 1e-3
        for w in GDN_HEADS:
            s = hv == w
            if s.sum() < 20:
                continue
            A = np.stack([np.ones(s.sum()), B[s], B[s] * S[s]], 1)
            x = _nnls(A / t[s, None], np.ones(s.sum()))
            law.setdefault(eng, {})[w] = (max(x[0], 1e-7), max(x[1], 1e-12), max(x[2], 1e-12))
            errs.setdefault(eng, []).extend(np.abs(A @ x / t[s] - 1))
    _store_law(out, law, errs, GDN_PREFILL_LAW, "fp32", "value heads per chip h_v", lambda used: (
        f"{PACKAGE} {out.version} {sysdir}/linear_attention gdn_perf context ({used}; causal_conv1d_fn + the chunked "
        f"gated-delta-rule scan): t = t0 + B·t_seq + B·S·t_tok fitted per h_v (kernel_tables._gdn_prefill); "))


def _prefill_attention(root: Path, sysdir: str, chip, out: Derived) -> None:
    """Flash attention over a prompt (one layer, B prompts of S tokens, N query heads and K KV heads of H), by the KV
    cache's format, read off the tables' rows two ways.

    With an FP8 cache an engine runs its FP8 context kernel (Q, K, V in FP8 on the FP8 tensor cores) where it
    has one, as aiconfigurator-core infers for an FP8/NVFP4 checkpoint (sdk/models/helpers.py
    `_infer_quant_modes_from_raw_config`: fmha_quant_mode fp8), else its BF16 kernel reading the FP8 cache (vLLM:
    the same file falls back to bfloat16 FMHA). Both are read against the BF16 peak, the F_attn a step uses.

    As a law, a sum (causal: FLOP = B · S · 2·N·2H · (S + 1)/2):

        t = t0 + n_seq · t_seq + n_q · t_q + n_kv · t_kv + FLOP / (F · eta),
        n_seq = B · N  (sequence, query head),  n_q = B · S · N  (token, query head),  n_kv = B · S · K  (token, KV head)

    t0 the kernel's fixed cost; t_seq what each (sequence, head) costs beyond its FLOP (its tiles' scheduling, the
    causal diagonal); t_q each query row's load, softmax and output, t_kv each key and value row's load — why 256
    prompts of 128 tokens run 2-5× slower than one of 4,096 at equal FLOP, and why G = N/K = 1 runs slower per row
    than G = 16. Fitted per engine, KV format and head size H (CTX_HEADS), over full-attention rows of
    S ≥ CTX_MIN_TOKENS, by `_context_law` against the kernel's own MMA peak (an FP8 kernel's, 2× the BF16 one, so
    its eta, stored as a fraction of the BF16 peak F, may exceed 1). The rates differ by H and kernel: on H200, BF16
    0.45-0.52 at H = 64, 0.54-0.66 at 128, 0.58-0.76 at 256; on Blackwell SGLang and vLLM run H = 192 on slow
    fallbacks (SGLang's Triton kernel: 0.11 of the peak). Stored as curves by H: `attn_ctx_t0`, `attn_ctx_t_seq`, `attn_ctx_t_q`, `attn_ctx_t_kv`, `attn_ctx_eta` (`.<kv>`, `.<kv>@<engine>`;
    the plain key the median over engines). MLA's context kernel, measured in the mla tables, is `_prefill_mla`.

    As one curve by FLOP over every row of S ≥ 128, `eta_attn_prefill.<kv>` (what a profile without the law reads).
    Before 2026-11-29 every model read that curve: it missed the tables' own rows (S ≥ 16) by a median 18-26 %,
    p90 62-74 % on H200, the law by 4-7 %, p90 13-23 % (a law with t0 and t_seq alone, rows S ≥ 128: p90 36-48 %)."""
    files = _newest(root / "data" / sysdir / "attention", "context_attention_perf.parquet")
    F = chip.peak("bf16")
    for fmt_, tab_fmt in KV_FORMATS.items():
        per, used = [], []
        law: dict[str, dict[int, tuple]] = {}
        errs: dict[str, list] = {}
        for eng, f in files.items():
            df = _full_attention(_read(f))
            d = df[(df.kv_cache_dtype == tab_fmt) & (df.isl >= CTX_MIN_TOKENS)]
            attn = tab_fmt if (d.attn_dtype == tab_fmt).any() else "bfloat16"
            d = d[d.attn_dtype == attn]
            if len(d) == 0:
                continue
            B, S, N, K, H = (d[c].to_numpy(dtype=float) for c in
                             ("batch_size", "isl", "num_heads", "num_key_value_heads", "head_dim"))
            flop = B * S * 2 * N * 2 * H * (S + 1) / 2
            t = d.latency.to_numpy() * 1e-3
            name = eng if fmt_ == "bf16" else f"{eng} {attn} kernel"
            F_k = chip.peak(fmt_) if attn == tab_fmt else F  # the law's rate is bounded by the kernel's own MMA peak
            s = S >= 128
            pts = _binned(flop[s], flop[s] / (F * t[s]), True, F)
            if pts:
                per.append(pts)
                used.append(name)
            for h in CTX_HEADS:
                s = H == h
                if s.sum() < 20:
                    continue
                x, e = _context_law([np.ones(s.sum()), B[s] * N[s], B[s] * S[s] * N[s], B[s] * S[s] * K[s]],
                                    flop[s] / F_k, t[s])
                law.setdefault(name, {})[h] = (max(x[0], 1e-7), max(x[1], 1e-12), max(x[2], 1e-15), max(x[3], 1e-15),
                                               F_k / F / (1 + x[4]))
                errs.setdefault(name, []).extend(e)
        kernels = "BF16" if fmt_ == "bf16" else "KV FP8: the engine's FP8 kernel where measured, else BF16 over FP8 KV"
        _store_curves(out, f"eta_attn_prefill.{fmt_}", per, used, (
            f"{PACKAGE} {out.version} {sysdir}/attention context_attention ({{engines}}; {kernels}, causal): FLOP / "
            f"(F·t) by FLOP of one kernel (one layer), F = {F / 1e12:g} TFLOP/s BF16 of catalog chip {chip.name}"))
        _store_law(out, law, errs, ATTN_CTX_LAW, fmt_, "head size H", lambda used: (
            f"{PACKAGE} {out.version} {sysdir}/attention context_attention ({used}; {kernels}, causal, full attention, "
            f"S ≥ {CTX_MIN_TOKENS}): t = t0 + B·N·t_seq + B·S·N·t_q + B·S·K·t_kv + FLOP/(F·eta) fitted per H "
            f"(kernel_tables._prefill_attention; an FP8 kernel's eta at most its FP8 peak's share of F), F = "
            f"{F / 1e12:g} TFLOP/s BF16 of catalog chip {chip.name}; "))
    _prefill_mla(root, sysdir, chip, out)


def _prefill_mla(root: Path, sysdir: str, chip, out: Derived) -> None:
    """MLA's context kernel (DeepSeek-V3's shape, MLA_CTX_HEAD: the latent decompressed into N heads of d_qk = 192,
    d_v = 128; FLOP = B · S · 2·N·(d_qk + d_v) · (S + 1)/2), read off the mla tables' context_mla rows (TensorRT-LLM,
    SGLang; vLLM's collection times the whole module only) as the same law without a KV-head term:

        t = t0 + B·N·t_seq + B·S·N·t_q + FLOP / (F · eta)

    fitted per engine, KV format and N, the query heads on one chip (128 / tp), by `_context_law`. Stored as curves by
    N: `attn_mla_ctx_t0`, `attn_mla_ctx_t_seq`, `attn_mla_ctx_t_q`, `attn_mla_ctx_eta`. Before 2026-11-29 an MLA
    model's prefill read the GQA tables' FLOP curve, which missed these rows (S ≥ 16) by a median 21-70 %, p90 74-86 %
    on H200 and B200 (SGLang's Hopper MLA prefill runs at 0.19 of the peak); this law by 4-6 %, p90 14-21 %."""
    files = _newest(root / "data" / sysdir / "mla", "context_mla_perf.parquet")
    F = chip.peak("bf16")
    d_qk, d_v = MLA_CTX_HEAD
    for fmt_, tab_fmt in KV_FORMATS.items():
        law: dict[str, dict[int, tuple]] = {}
        errs: dict[str, list] = {}
        for eng, f in files.items():
            df = _read(f)
            d = df[(df.kv_cache_dtype == tab_fmt) & (df.isl >= CTX_MIN_TOKENS)]
            if "mla_dtype" in d:
                d = d[d.mla_dtype == "bfloat16"]
            if len(d) == 0:
                continue
            B, S, N = (d[c].to_numpy(dtype=float) for c in ("batch_size", "isl", "num_heads"))
            flop = B * S * 2 * N * (d_qk + d_v) * (S + 1) / 2
            t = d.latency.to_numpy() * 1e-3
            for n in np.unique(N):
                s = N == n
                if s.sum() < 20:
                    continue
                x, e = _context_law([np.ones(s.sum()), B[s] * N[s], B[s] * S[s] * N[s]], flop[s] / F, t[s])
                law.setdefault(eng, {})[int(n)] = (max(x[0], 1e-7), max(x[1], 1e-12), max(x[2], 1e-15), 1 / (1 + x[3]))
                errs.setdefault(eng, []).extend(e)
        _store_law(out, law, errs, ATTN_MLA_CTX_LAW, fmt_, "query heads per chip N", lambda used: (
            f"{PACKAGE} {out.version} {sysdir}/mla context_mla ({used}; BF16 MLA, KV {tab_fmt}, causal, S ≥ "
            f"{CTX_MIN_TOKENS}, d_qk = {d_qk}, d_v = {d_v}): t = t0 + B·N·t_seq + B·S·N·t_q + FLOP/(F·eta) fitted "
            f"per N (kernel_tables._prefill_mla), F = {F / 1e12:g} TFLOP/s BF16 of catalog chip {chip.name}; "))


# ---- all-reduce ----------------------------------------------------------------------------------

def _link_fit(x: np.ndarray, t: np.ndarray, small: np.ndarray, bw: float, factor: float = 1.0):
    """A collective's fixed cost and link efficiency by size: t = lat + factor · x / (bw · eta).

    lat = the median time of the `small` operations; eta is read where the time is at least twice it.
    Returns (lat, x, eta) at the sizes read.
    """
    lat = float(np.median(t[small])) if small.any() else float(t.min())
    s = t > 2 * lat
    return lat, x[s], factor * x[s] / (bw * (t[s] - lat))


def _store_link(out: Derived, key: str, lat_key: str, per: list, lats: list, used: list, src: str, x_what: str,
                lat_what: str, cap: float = 1.0) -> None:
    _store_curves(out, key, per, used, f"{src}; by {x_what}", cap=cap)
    out.scalars[lat_key] = float(np.median(lats))
    out.sources[lat_key] = f"{src.format(engines=', '.join(used))}; lat = {lat_what}, median over engines"


def _allreduce(root: Path, sysdir: str, chip, out: Derived) -> None:
    files = _newest(root / "data" / sysdir / "comm", "custom_allreduce_perf.parquet")
    bw = chip.scaleup_bandwidth_bytes_per_s
    if not files or not bw:
        return
    nccl = sorted((root / "data" / sysdir / "comm" / "nccl").glob("*/nccl_perf.parquet"),
                  key=lambda f: _version_key(f.parent.name))
    ref = _read(nccl[-1]) if nccl else None
    if ref is not None:
        ref = ref[(ref.op_name == "all_reduce") & (ref.nccl_dtype == "half")] if "nccl_dtype" in ref else None
    per, lats, used, ns = [], [], [], []
    for eng, f in files.items():
        df = _read(f)
        n = int(max(x for x in df.num_gpus.unique() if x <= 8))
        d = df[df.num_gpus == n]
        for col in ("backend", "implementation"):  # CUDA-graph variants where the table has both
            if col in d and d[col].astype(str).str.contains("graph").any():
                d = d[d[col].astype(str).str.contains("graph")]
        if len(d) == 0:
            continue
        t_of = dict(zip(d.message_size.astype(float), d.latency * 1e-3))
        if ref is not None:  # engines hand large messages to NCCL: the faster of the two at each size
            r = ref[ref.num_gpus == n]
            for size, lat_ms in zip(r.message_size.astype(float), r.latency):
                if size in t_of:
                    t_of[size] = min(t_of[size], lat_ms * 1e-3)
        elems = np.array(sorted(t_of))
        t = np.array([t_of[e] for e in elems])
        m = 2.0 * elems  # the tables count BF16 elements
        lat, x, eta = _link_fit(m, t, m <= 4096, bw, 2 * (n - 1) / n)
        pts = {float(a): float(e) for a, e in zip(x, eta)}  # one time per message size
        if pts:
            per.append(pts)
            lats.append(lat)
            used.append(eng)
            ns.append(n)
    if not per:
        return
    src = (f"{PACKAGE} {out.version} {sysdir}/comm all-reduce of BF16 messages over {max(ns)} GPUs ({{engines}} "
           f"custom kernels with CUDA graphs, or NCCL {nccl[-1].parent.name if nccl else ''} where faster): "
           f"t = lat + 2·(n − 1)/n · m / (bw · eta), bw = {bw / 1e9:g} GB/s per direction of catalog chip "
           f"{chip.name} (NVLink SHARP reductions can exceed the ring's 1.0)")
    _store_link(out, "eta_scaleup.allreduce", "scaleup_latency_s", per, lats, used, src, "message bytes m",
                "median time of messages ≤ 4 kB", cap=1.5)


def _alltoall(root: Path, sysdir: str, chip, out: Derived) -> None:
    """DeepEP dispatch/combine inside one node: the faster backend (low-latency or high-throughput) at each size.

        bytes = T · k · D · 2 · (1 − 1/EP)      (BF16, every expert copy: the accounting of roofline t_ep)
        lat   = median combine time at T ≤ 4 tokens per rank
        eta_scaleup.alltoall(bytes) = bytes / (bw · (t − lat)),  where t > 2·lat
    """
    files = _newest(root / "data" / sysdir / "comm", "moe_a2a_perf.parquet")
    bw = chip.scaleup_bandwidth_bytes_per_s
    if not files or not bw:
        return
    per, lats, used = [], [], []
    for eng, f in files.items():
        df = _read(f)
        d = df[(df.phase == "combine") & (df.node_num == 1)]
        if "comm_dtype" in d and (d.comm_dtype == "bfloat16").any():
            d = d[d.comm_dtype == "bfloat16"]
        if len(d) == 0:
            continue
        keys = ["num_tokens", "topk", "hidden_size", "ep_size"]
        b = d.groupby(keys, as_index=False).latency.min()  # the faster backend at each shape
        T, k, D, ep = (b[c].to_numpy(dtype=float) for c in keys)
        xs = T * k * D * 2 * (1 - 1 / ep)
        ts = b.latency.to_numpy() * 1e-6  # microseconds in these tables
        lat, x, eta = _link_fit(xs, ts, T <= 4, bw)
        pts = _binned(x, eta, False, 1.0)
        if pts:
            per.append(pts)
            lats.append(lat)
            used.append(eng)
    if not per:
        return
    src = (f"{PACKAGE} {out.version} {sysdir}/comm moe_a2a DeepEP combine in one node ({{engines}}; the faster "
           f"of low-latency and high-throughput kernels): t = lat + T·k·D·2·(1 − 1/EP) / (bw · eta), bw = "
           f"{bw / 1e9:g} GB/s per direction of catalog chip {chip.name}")
    _store_link(out, "eta_scaleup.alltoall", "alltoall_latency_s", per, lats, used, src, "bytes per chip",
                "median time at ≤ 4 tokens per rank")
    _alltoall_small(root, sysdir, out)


A2A_SMALL_BYTES = 64 * 1024  # a decode step's dispatch per rank: 8 tokens · 8 experts · 7,168 · 1 B is 0.46 MB in all


def _alltoall_small(root: Path, sysdir: str, out: Derived) -> None:
    """A decode step's dispatch and combine are latency-bound, and where the DeepEP table's fixed cost is the
    high-throughput kernels' (with their host notify: 48-72 µs on B200 at 1-16 tokens, where its low-latency
    kernels were not collected) an engine's CUDA-graph decode path runs a plain all-to-all instead (TensorRT-LLM's
    NVLink all-to-all, NCCL's): the fixed cost is the faster of the DeepEP one and NCCL's all-to-all at
    messages ≤ 64 kB over the node's 8 GPUs (median), measured in the same tables."""
    nccl = sorted((root / "data" / sysdir / "comm" / "nccl").glob("*/nccl_perf.parquet"),
                  key=lambda f: _version_key(f.parent.name))
    if not nccl or "alltoall_latency_s" not in out.scalars:
        return
    df = _read(nccl[-1])
    d = df[(df.op_name == "alltoall") & (df.num_gpus == min(8, int(df.num_gpus.max())))
           & (df.message_size <= A2A_SMALL_BYTES)]
    if len(d) < 3:
        return
    lat = float(np.median(d.latency)) * 1e-3
    if lat < out.scalars["alltoall_latency_s"]:
        out.sources["alltoall_latency_s"] = (
            f"{PACKAGE} {out.version} {sysdir}/comm/nccl/{nccl[-1].parent.name} alltoall over "
            f"{int(d.num_gpus.iloc[0])} GPUs, median time of messages ≤ {A2A_SMALL_BYTES // 1024} kB "
            f"({lat * 1e6:.3g} µs), below DeepEP's measured fixed cost ({out.scalars['alltoall_latency_s'] * 1e6:.3g} "
            f"µs, kernel_tables._alltoall): a decode step's all-to-all is latency-bound and runs the faster path "
            f"(kernel_tables._alltoall_small)")
        out.scalars["alltoall_latency_s"] = lat


# ---- all of it -----------------------------------------------------------------------------------

# our expert format -> the MoE tables' formats, in order of preference. NVFP4 ('fp4') reads NVFP4 only. MXFP4 experts
# (gpt-oss, DeepSeek-V4) read the MXFP4 kernel each engine runs for such a checkpoint (`_moe_names`): on Blackwell
# TensorRT-LLM and SGLang quantise the activations to MXFP8 (`w4a8_mxfp4_mxfp8`: TensorRT-LLM's newest Blackwell
# collection, 1.3.0rc23, measured only that mode; SGLang's flashinfer MXFP4 MoE, default precision), vLLM keeps BF16
# activations (`w4a16_mxfp4`, the table's GptOssMxfp4MoE flashinfer mxfp4_bf16 kernel; MXFP8 only by opt-in env); on
# Hopper every engine runs `w4a16_mxfp4` (no FP4 tensor cores: weights dequantised in the kernel). Weight-only INT4
# experts (Kimi K2.x's INT4 release) read `int4_wo`, BF16 activations times INT4 weights dequantised in the kernel
# (measured on vLLM and SGLang; TensorRT-LLM's INT4 experts read their median).
MOE_FORMATS = {"bf16": ("bfloat16",), "fp8": ("fp8",), "fp8_block": ("fp8_block",), "fp4": ("nvfp4",),
               "mxfp4": ("w4a8_mxfp4_mxfp8", "w4a16_mxfp4"), "int4": ("int4_wo",)}
MOE_ENGINE_FORMATS = {("mxfp4", "vllm"): ("w4a16_mxfp4", "w4a8_mxfp4_mxfp8")}


def _moe_names(fmt_: str, engine: str) -> tuple[str, ...]:
    return MOE_ENGINE_FORMATS.get((fmt_, engine), MOE_FORMATS[fmt_])


def _moe_bytes(fmt_: str, name: str) -> float:
    """Bytes per expert weight of a MoE table format (NVFP4: 4.5 bits with its scales, MXFP4: 4.25, INT4: 4)."""
    if fmt_ in ("mxfp4", "int4"):
        return bytes_per(fmt_)
    return {"bfloat16": 2.0, "fp8": 1.0, "fp8_block": 1.0}.get(name, 0.5625)


def _moe_fixed(root: Path, sysdir: str, chip, out: Derived) -> None:
    """The fused MoE op's fixed cost per layer (moe_overhead_fmt), by format and engine: at one token
    (balanced routing; the fastest kernel path the engine measured for each shape), the busiest rank reads
    max(1, k/ep) experts of 3·D·F/moe_tp weights; t_moe = t − bytes/W over shapes with D·F ≥ 6e6 whose weight
    read is at most a quarter of t (so the peak-rate subtraction errs little); median over them. The op
    replaces what a decode layer would otherwise pay per kernel: the two grouped expert GEMMs and the
    top-k, permute and un-permute kernels (roofline.overhead_time_moe)."""
    folder = root / "data" / sysdir / "moe"
    if not folder.is_dir():
        return
    W = chip.hbm_bandwidth_bytes_per_s
    per_fmt: dict[str, list[float]] = {}
    used = []
    for eng_dir in sorted(p for p in folder.iterdir() if p.is_dir()):
        files = sorted((p / "moe_perf.parquet" for p in eng_dir.iterdir() if (p / "moe_perf.parquet").is_file()),
                       key=lambda f: _version_key(f.parent.name), reverse=True)
        tables = [(f.parent.name, _read(f)) for f in files]
        for fmt_ in MOE_FORMATS:
            names = _moe_names(fmt_, eng_dir.name)
            for name, ver, df in ((n, v, d) for n in names for v, d in tables):  # preferred format, newest version
                sub = df[(df.moe_dtype == name) & (df.distribution == "balanced") & (df.num_tokens == 1)
                         & ~df.kernel_source.astype(str).str.contains("nongated")]
                if len(sub) == 0:
                    continue
                b = _moe_bytes(fmt_, name)
                g = sub.groupby(["hidden_size", "inter_size", "topk", "moe_tp_size", "moe_ep_size"]).latency.min()
                a = []
                for (D, F, k, tp, ep), lat_ms in g.items():
                    t = lat_ms * 1e-3
                    byts = max(1.0, k / ep) * 3 * D * F * b / tp
                    if D * F >= 6e6 and byts / W <= 0.25 * t:
                        a.append(t - byts / W)
                if a:
                    v = float(np.median(a))
                    out.moe_fmt[f"{fmt_}@{eng_dir.name}"] = v
                    per_fmt.setdefault(fmt_, []).append(v)
                    used.append(f"{eng_dir.name} {ver} {name}")
                break
    for fmt_, v in per_fmt.items():
        out.moe_fmt[fmt_] = float(np.median(v))
    if out.moe_fmt:
        out.sources["moe_overhead_fmt"] = (
            f"{PACKAGE} {out.version} {sysdir}/moe ({', '.join(sorted(set(used)))}): the fused MoE op at one token "
            f"(balanced routing, fastest kernel path per shape), less its weight read at W = {W / 1e12:g} TB/s, "
            f"median over shapes with D·F ≥ 6e6 where that read is ≤ 1/4 of the op; '<format>' the median over engines")


# expert-parallel widths fitted on their own (read at the layout's ep, roofline._critical_path): every rank's op still
# routes, permutes and combines the group's T tokens, and its fixed and per-expert costs change with the split
MOE_EP_WAYS = (1, 2, 4, 8, 16, 32, 64)
MOE_MIN_EXPERT_BYTES = 1e6  # per-rank experts of at least 1 MB (a 0.6 MB expert is Qwen3-30B's FP8 one split 8 ways)
# the law's terms, curves by ep, and their units
MOE_LAW = {"moe_t0": "s", "moe_t_expert": "s", "moe_eta_bw": "", "moe_eta_mm": "", "moe_route": "count"}


def _store_law(out: Derived, per: dict, errs: dict, law: dict, fmt_: str, axis: str, describe) -> None:
    """A fitted law's terms as curves by the width they were fitted at (`per[engine][width]` = the terms in `law`'s
    order): the engines' median under `<term>.<f>`, each engine's own under `<term>.<f>@<engine>`; `describe(used)`
    opens each curve's source, which then states the law's miss on its rows."""
    if not per:
        return
    for suffix, group in _by_engine([(v, k) for k, v in per.items()]):
        ways = sorted(set.intersection(*(set(v) for v, _ in group)))
        if not ways:
            continue
        used = ", ".join(k for _, k in group)
        e = np.concatenate([errs[k] for _, k in group])
        src = (describe(used) + f"the law misses the rows by a median {np.median(e):.0%}, p90 {np.quantile(e, 0.9):.0%}"
               + ("; median over engines" if not suffix else "") + f"; by {axis}")
        for i, name in enumerate(law):
            vals = [[v[w][i] for v, _ in group] for w in ways]
            med = [float(np.median(v)) for v in vals]
            spread = [float((max(v) - min(v)) / 2 / m) if m > 0 else 0.0 for v, m in zip(vals, med)]
            out.curves[f"{name}.{fmt_}{suffix}"] = {"x": [float(w) for w in ways], "y": [_sig(m) for m in med],
                                                    "spread": [_sig(min(sp, 10.0)) for sp in spread],
                                                    "source": src, "unit": law[name]}


def _nnls(A: np.ndarray, y: np.ndarray) -> np.ndarray:
    """min |A x − y| with x ≥ 0 (active set: solve on the free columns, drop those that go negative)."""
    scale = np.maximum(np.linalg.norm(A, axis=0), 1e-300)
    As = A / scale
    free = np.ones(A.shape[1], bool)
    x = np.zeros(A.shape[1])
    for _ in range(A.shape[1] + 1):
        sol, *_ = np.linalg.lstsq(As[:, free], y, rcond=None)
        if np.all(sol >= 0):
            x[:] = 0.0
            x[free] = sol
            break
        idx = np.flatnonzero(free)
        free[idx[sol < 0]] = False
        if not free.any():
            break
    return x / scale


def _moe_law(root: Path, sysdir: str, chip, out: Derived) -> None:
    """The fused MoE op's time on one rank, by expert-parallel width ep, read off the tables' own rows:

        t = t0 + hits · t_e + bytes / (W · eta_bw) + FLOP / (F · eta_mm) + c_route · T·k·D·2 / W

        balanced routing of T tokens (the tables count every rank's) over E experts, ep ranks:
        load = max(1, T·k/ep),  hits = min(E/ep, load),  bytes = hits · 3·D·F_e/moe_tp · b_w,
        FLOP = 2 · 3·D·F_e/moe_tp · load

    a SUM, not a max: at the few rows per expert of serving (M_e = load/hits ≲ 10³) the grouped GEMM does
    not hide its weight stream under its MMAs (H200 TensorRT-LLM FP8, Llama-4-Maverick's 126 MB experts at
    ep 8: 0.52 ms at T = 256, 0.63 ms at T = 8192, 0.72 ms at T = 16384 — each doubling of T adds its FLOP at
    the peak on top of the same read). t0 is the op's fixed cost, t_e each expert's (a grouped GEMM's tiles
    per expert: what makes small experts stream slowly), c_route the passes over the T·k routed BF16
    activations (permute, un-permute, combine of the group's tokens: why the op slows with ep at equal M_e).
    Fitted per engine, format and ep by least squares in relative error with every term ≥ 0 and the
    rates at most the peaks (y = t − bytes/W − FLOP/F is fitted, so 1/eta − 1 ≥ 0), over gated shapes (the
    fastest kernel path per shape) with per-rank experts ≥ 1 MB; rows faster than the peaks are left out
    (their routing reaches fewer experts than counted). Stored as curves by ep: `moe_t0`, `moe_t_expert`,
    `moe_eta_bw`, `moe_eta_mm`, `moe_route` (`.<f>`, `.<f>@<engine>`; the plain key the median over engines).
    Before 2026-11-24 round 7 the op was read as max(bytes/(W·eta_bw(M_e)), FLOP/(F·eta_mm(M_e))) with
    curves by M_e held non-increasing, and one low point at M_e = 1 flattened a whole curve: TensorRT-LLM
    FP8 at ep ≥ 8 on Hopper read 0.25 of W where the tables run Maverick's experts at 0.66 (median error of
    the old reading on those rows 60-126 %, of this law 5-17 %)."""
    folder = root / "data" / sysdir / "moe"
    if not folder.is_dir():
        return
    W = chip.hbm_bandwidth_bytes_per_s
    for fmt_ in MOE_FORMATS:
        F = chip.peak(MOE_PEAK.get(fmt_, fmt_))
        per: dict[str, dict[int, tuple]] = {}
        errs: dict[str, list[float]] = {}
        for eng_dir in sorted(p for p in folder.iterdir() if p.is_dir()):
            files = sorted((p / "moe_perf.parquet" for p in eng_dir.iterdir() if (p / "moe_perf.parquet").is_file()),
                           key=lambda f: _version_key(f.parent.name), reverse=True)
            found = None
            for name in _moe_names(fmt_, eng_dir.name):
                for f in files:
                    df = _read(f)
                    sub = df[(df.moe_dtype == name) & (df.distribution == "balanced")
                             & ~df.kernel_source.astype(str).str.contains("nongated")]
                    if len(sub):
                        found = (f"{eng_dir.name} {f.parent.name} {name}", sub)
                        break
                if found:
                    break
            if not found:
                continue
            keys = ["num_tokens", "hidden_size", "inter_size", "topk", "num_experts", "moe_tp_size", "moe_ep_size"]
            g = found[1].groupby(keys, as_index=False).latency.min()
            T, D, Fi, k, E, tp, ep = (g[c].to_numpy(dtype=float) for c in keys)
            t = g.latency.to_numpy() * 1e-3
            load = np.maximum(1.0, T * k / ep)
            hits = np.minimum(E / ep, load)
            size = 3 * D * Fi / tp * bytes_per(fmt_)
            bytes_t, flop_t, route_t = hits * size / W, 2 * 3 * D * Fi / tp * load / F, T * k * D * 2.0 / W
            y = t - bytes_t - flop_t
            for w in MOE_EP_WAYS:
                s = (ep == w) & (size >= MOE_MIN_EXPERT_BYTES) & (y > 0)
                if s.sum() < 20:
                    continue
                A = np.stack([np.ones(s.sum()), hits[s], bytes_t[s], flop_t[s], route_t[s]], 1)
                x = _nnls(A / t[s, None], y[s] / t[s])
                pred = A @ x + bytes_t[s] + flop_t[s]
                per.setdefault(found[0], {})[w] = (max(x[0], 1e-7), max(x[1], 1e-9), 1 / (1 + x[2]), 1 / (1 + x[3]),
                                                   max(x[4], 1e-3))
                errs.setdefault(found[0], []).extend(np.abs(pred / t[s] - 1))
        if not per:
            continue
        _store_law(out, per, errs, MOE_LAW, fmt_, "expert-parallel ways ep", lambda used: (
            f"{PACKAGE} {out.version} {sysdir}/moe ({used}; balanced routing, fastest gated kernel path per "
            f"shape, per-rank experts ≥ {MOE_MIN_EXPERT_BYTES / 1e6:g} MB): t = t0 + hits·t_e + bytes/(W·eta_bw) "
            f"+ FLOP/(F·eta_mm) + c_route·T·k·D·2/W fitted per ep (kernel_tables._moe_law), F = {F / 1e12:g} "
            f"TFLOP/s ({MOE_PEAK.get(fmt_, fmt_)} peak), W = {W / 1e12:g} TB/s of catalog chip {chip.name}; "))


def derive_priors(chip_name: str, root: Path, version: str) -> Derived:
    """One catalog chip's priors from the tables of its system."""
    sysdir, name, gen = TABLE_SYSTEMS[chip_name]
    chip = load_chip(chip_name)
    out = Derived(chip_name, name, gen, sysdir, version)
    if not (root / "data" / sysdir).is_dir():
        raise InputError(f"{root}/data/{sysdir}: no tables for {chip_name}")
    _gemm(root, sysdir, chip, out)
    _decode_attention(root, sysdir, chip, out)
    _mla_decode(root, sysdir, chip, out)
    _gdn_decode(root, sysdir, chip, out)
    _gdn_prefill(root, sysdir, chip, out)
    _dsa_indexer(root, sysdir, chip, out)
    _prefill_attention(root, sysdir, chip, out)
    _allreduce(root, sysdir, chip, out)
    _alltoall(root, sysdir, chip, out)
    _moe_fixed(root, sysdir, chip, out)
    _moe_law(root, sysdir, chip, out)
    return out


def derive_all(where: str = "installed", chips: list[str] | None = None) -> list[Derived]:
    root, version = find_tables(where)
    return [derive_priors(c, root, version) for c in (chips or list(TABLE_SYSTEMS))]


# ---- writing catalog/priors/<name>.yaml ----------------------------------------------------------

# priors the tables do not measure: taken from catalog/priors/default.yaml, with its sources
CARRIED = ("eta_scaleup", "eta_scaleout", "scaleout_latency_s", "step_overhead_s", "comm_overlap", "matmul_m_half",
           "ep_imbalance", "scaleup_latency_s", "alltoall_latency_s", "kernel_overhead_s", "aux_kernel_s", "eta_flop",
           "eta_bw")


def priors_yaml(d: Derived) -> str:
    """The priors entry as YAML text: every scalar with its source, every curve with its points and source."""
    import yaml

    from ..core.load import load_priors

    base = load_priors("default")
    lines = [f"# Efficiency priors for {d.chip} derived from measured kernel tables ({PACKAGE} {d.version},",
             f"# systems/data/{d.tables}) by `tokenmath calibrate --from-kernel-tables` (tokenmath.measure.kernel_tables).",
             "# Regenerate; do not edit by hand. Priors the tables do not measure are the default's, with its sources.",
             f"display_name: Efficiency priors for {d.chip} from {PACKAGE} kernel tables",
             f"source: \"{PACKAGE} {d.version} (Apache-2.0), systems/data/{d.tables}\"",
             f"generation: {d.generation}"]
    for k in CARRIED:
        if k in d.scalars:
            v, src = d.scalars[k], d.sources[k]
        elif getattr(base, k) is None:
            continue
        else:
            v, src = getattr(base, k), "as default: " + (base.sources.get(k) or base.source)
        est = k in base.estimates and k not in d.scalars
        val = f"{_sig(v * 1e6)} us" if k.endswith("_s") else _sig(v)
        lines.append(f"{k}: {{value: {val}, source: {yaml.safe_dump(src, width=10**6).strip()}"
                     f"{', estimate: true' if est else ''}}}")
    if d.kernel_fmt:
        vals = ", ".join(f"{k}: {_sig(v):g}" for k, v in sorted(d.kernel_fmt.items()))
        lines.append(f"kernel_overhead_fmt: {{value: {{{vals}}}, source: "
                     f"{yaml.safe_dump(d.sources['kernel_overhead_fmt'], width=10**6).strip()}}}")
    if d.moe_fmt:
        vals = ", ".join(f"{k}: {_sig(v):g}" for k, v in sorted(d.moe_fmt.items()))
        lines.append(f"moe_overhead_fmt: {{value: {{{vals}}}, source: "
                     f"{yaml.safe_dump(d.sources['moe_overhead_fmt'], width=10**6).strip()}}}")
    if d.k_law:
        vals = ", ".join(f"{k}: [{_sig(e):g}, {_sig(h):g}]" for k, (e, h) in sorted(d.k_law.items()))
        lines.append(f"matmul_k_law_fmt: {{value: {{{vals}}}, source: "
                     f"{yaml.safe_dump(d.sources['matmul_k_law_fmt'], width=10**6).strip()}}}")
    if d.best:
        vals = ", ".join(f"{k}: {_sig(v):g}" for k, v in sorted(d.best.items()))
        lines.append(f"matmul_best_fmt: {{value: {{{vals}}}, source: "
                     f"{yaml.safe_dump(d.sources['matmul_best_fmt'], width=10**6).strip()}}}")
    lines.append("curves:")
    for key, c in d.curves.items():
        lines.append(f"  {key}:")
        for part in ("x", "y", "spread"):
            lines.append(f"    {part}: [{', '.join(f'{v:g}' for v in c[part])}]")
        lines.append(f"    source: {yaml.safe_dump(c['source'], width=10**6).strip()}")
        if c.get("unit"):
            lines.append(f"    unit: {c['unit']}")
    return "\n".join(lines) + "\n"


def write_priors(derived: list[Derived], out_dir: str | Path | None = None) -> list[Path]:
    """Write each chip's entry to `out_dir` (default: the package catalog's priors/ folder)."""
    folder = Path(out_dir) if out_dir else PACKAGE_CATALOG / "priors"
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for d in derived:
        p = folder / f"{d.name}.yaml"
        p.write_text(priors_yaml(d), encoding="utf-8")
        paths.append(p)
    return paths
