"""Microbenchmark rows: one GEMM, one HBM stream, one link, one all-to-all or one NCCL-style collective, on the
single-kernel rooflines of `kernels` (the formulas, with their derivations, are there).

How a published microbenchmark is read:
- a GEMM's shape is 'M=4096 N=7168 K=16384', 'M=N=K=8192', '8192x8192x8192', '8k x 8k x 8k' or '4096^3' in
  the model, metric or notes column; a matmul rate with no shape is the large square GEMM's (8192³), stated; a
  GEMM's bandwidth (DeepGEMM's 'Memory bandwidth') is its operands' and output's bytes over its time;
- an HBM stream (STREAM copy/triad, memcpy device to device, 'memory bandwidth') counts the bytes read and
  written, as STREAM and CUDA's bandwidthTest do: W · eta_bw;
- a link (NVLink or PCIe peer to peer, InfiniBand/RoCE) runs at the catalog's per-direction rate × eta;
  'bidirectional' is both directions at once, 2×;
- a collective (all_reduce, all_gather, reduce_scatter, alltoall) over n GPUs moves m bytes in
  t = f_bus · m / bw_bus + lat, and nccl-tests report algbw = m / t and busbw = f_bus · m / t
  (f_bus = 2(n − 1)/n for all-reduce, (n − 1)/n for the others), so busbw approaches bw_bus at large m; their
  'Avg bus bandwidth' is the mean busbw over the sizes the run swept (-b, -e, -f);
- a share of the peak ('% of peak', '% of theoretical', the MAMF finder's efficiency) is 100 · the rate predicted
  as above / the spec peak of the same thing: the catalog's dense peak of the GEMM's or the attention kernel's
  format (the peak the rates are predicted from), HBM's or the link's datasheet rate. A format whose own peak the
  catalog lacks (FP4 on Hopper, which `peak` would run at FP8's) is refused, as is a collective's (which peak?).
"""

from __future__ import annotations

import math
import re

import numpy as np

from ...core import arch, kernels
from ...core.load import load_priors
from ...core.records import Priors, System
from .match import Aliases
from .report import Prediction, Unexpressed
from .rows import (A2A_TIME, COLLECTIVE_OPS, LINK, batch_of, chips_of, dimension_of_unit, group_of, per_node_of, share_of_peak,
                   to_int)
from .serving import split_of, stated_split

__all__ = ["predict_microbenchmark"]


def _eta(pri: Priors, name: str, basis: str) -> float:
    return 1.0 if basis == "spec" else float(getattr(pri, name))


def predict_microbenchmark(row, kind: str, al: Aliases, system: System, hw_note: str, measured: float, scale: float,
                           basis: str, priors: Priors | None) -> Prediction | Unexpressed:
    """One microbenchmark row predicted in its unit (a rate, a time, or a share of the peak), or why it cannot be."""
    if share_of_peak(row):
        return _peak_share(row, kind, al, system, hw_note, measured, basis, priors)
    return _predict_rate(row, kind, al, system, hw_note, measured, scale, basis, priors)


_RATE_UNIT = {"gemm": "FLOP/s", "kernel": "FLOP/s", "stream": "B/s", "link": "B/s"}


def _peak_share(row, kind: str, al: Aliases, system: System, hw_note: str, measured: float, basis: str,
                priors: Priors | None) -> Prediction | Unexpressed:
    """100 · rate / peak: the rate as the row's kind predicts it, over the spec peak of the same format or link."""
    rid, g, chip = row["id"], group_of(row["id"]), system.chip
    if kind not in _RATE_UNIT:
        return Unexpressed(rid, g, f"a share of the peak of a {kind}: which peak (a link's rate per direction, the "
                                   "bus bandwidth's bound?) is not stated")
    out = _predict_rate({**row, "unit": _RATE_UNIT[kind]}, kind, al, system, hw_note, measured, 1.0, basis, priors)
    if not isinstance(out, Prediction):
        return out
    if kind in ("gemm", "kernel"):
        fmt = _precision(row, al)[0] if kind == "gemm" else _attention_format(row)
        key = "int8" if fmt == "w8a8" else chip.peak_precision(fmt)  # INT8 operands: the INT8 peak itself
        if key not in chip.peak_flop_per_s or arch.bytes_per(key) != arch.bytes_per(fmt):
            return Unexpressed(rid, g, f"a share of the {fmt} peak, but the catalog holds no {fmt} peak for {chip.name} "
                                       f"(it lists {', '.join(chip.peak_flop_per_s)})")
        peak, field = chip.peak_flop_per_s[key], f"peak_flop_per_s.{key}"
        what = f"the chip's {key} dense peak"
    elif kind == "stream":
        peak, field, what = chip.hbm_bandwidth_bytes_per_s, "hbm_bandwidth_bytes_per_s", "the chip's HBM bandwidth"
    else:  # the link's datasheet rate (both directions where the row's are): the same prediction on the spec basis
        peak, field, what = (out.spec if out.spec is not None else out.predicted), "", "the link's datasheet rate"
    flop = kind in ("gemm", "kernel")
    num = lambda x: f"{x / 1e12:.4g} TFLOP/s" if flop else f"{x / 1e9:.4g} GB/s"  # noqa: E731
    why = out.why + [f"a share of {what}, {num(peak)} ({f'catalog {chip.name}: {field}' if field else 'the spec basis'}"
                     f"): 100 · {num(out.predicted)} predicted / {num(peak)}"]
    return Prediction(rid, g, kind, 100 * out.predicted / peak, measured, row["unit"],
                      100 * out.spec / peak if out.spec is not None else None, True, why, out.assumptions)


def _attention_format(row) -> str:
    """An attention kernel's matmul format: FP8 where it runs FP8 matmuls (FlashAttention-3 FP8), not for FP8 KV."""
    fp8 = re.search(_FP8, row["precision"], re.I) and not re.search(r"kv", row["precision"], re.I)
    return "fp8" if fp8 else "bf16"


def _predict_rate(row, kind: str, al: Aliases, system: System, hw_note: str, measured: float, scale: float,
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
        if shape is None and (re.search(r"\b[MNK]\s*=", _own_words(row)) or _M_PER_GROUP.search(_own_words(row))):
            return Unexpressed(rid, g, "GEMM shape (M, N, K) only partly stated in the row")
        assume = []
        if shape is None:  # a matmul rate with no shape: what a large square GEMM reaches
            shape = (*_SQUARE, 1)
            assume.append(f"GEMM shape not stated: a large square GEMM ({_SQUARE[0]}³), the chip's best-case "
                          "matmul rate")
        M, N, K, groups = shape
        if min(M, N, K, groups) < 1:
            return Unexpressed(rid, g, f"GEMM shape {M}×{N}×{K} has an empty dimension")
        prec, pnote = _precision(row, al)
        if prec is None:
            return Unexpressed(rid, g, pnote)
        if prec == "w8a8" and "int8" not in chip.peak_flop_per_s:
            # a GEMM of INT8 operands measures the INT8 tensor cores' rate itself: carried at the 16-bit rate (as a
            # serving step's W8A8 matmuls are, Chip.widened_note) it would predict another kernel's rate
            return Unexpressed(rid, g, f"a GEMM of INT8 operands, but the catalog holds no INT8 peak for {chip.name} "
                                       f"(it lists {', '.join(chip.peak_flop_per_s)}; weight-only INT8 would run at "
                                       "its 16-bit rate)")
        if not row["precision"].strip():
            notes.append(pnote)
        widened = chip.widened_note(prec)  # FP8 on Ampere, FP4 on Hopper: a weight-only kernel at the wider rate
        if widened:
            notes.append(widened)
        b = arch.bytes_per(prec)
        b_in = 2.0 if prec == "int8" else b  # weight-only: 16-bit activations
        # (a GEMM of INT8 operands runs the INT8 tensor cores even where they are slower than the 16-bit ones: B300)
        F = chip.peak_flop_per_s["int8"] if prec == "w8a8" else chip.peak(prec)
        W = chip.hbm_bandwidth_bytes_per_s
        flop = kernels.gemm_flop(M, N, K, groups)
        byts = kernels.gemm_bytes(M, N, K, b_in, b, 2.0, groups)

        law_key = next((f for f in (prec, "fp8" if prec == "fp8_block" else None) if f in pri.matmul_k_law_fmt), None)
        eta_inf, k_half = pri.matmul_k_law_fmt[law_key] if law_key else (pri.eta_flop, 0.0)
        if law_key and "bf16" in pri.matmul_k_law_fmt:
            # a microbenchmark's operands are already in their format, while the engines' FP8/NVFP4 GEMM ops also
            # quantise their activations (an M·K pass, measure/kernel_tables.py): the asymptote is the BF16
            # op's fraction of the peak. The epilogue's time per tile is the format's own: 1/eta = 1/eta_inf +
            # (K_half/eta_inf)/K keeps its 1/K term, so K_half scales with the asymptote
            eta_bf16 = pri.matmul_k_law_fmt["bf16"][0]
            eta_inf, k_half = eta_bf16, k_half * eta_bf16 / eta_inf

        # a rate the row found by searching shapes ('max achievable', 'best shape found': the MAMF finder) is the
        # best of many: the best shapes the kernel tables measured, not the depth law's typical shape of that K
        best_key = next((f for f in (prec, "fp8" if prec == "fp8_block" else None) if f in pri.matmul_best_fmt),
                        None) if _BEST.search(" ".join(row[c] for c in ("model", "metric"))) else None

        def depth(bs):
            if bs == "spec":
                return 1.0
            if best_key:
                return float(pri.matmul_best_fmt[best_key])
            return float(kernels.depth_efficiency(eta_inf, K, k_half))

        def rate(bs):
            t0, m_half = (0.0, 0.0) if bs == "spec" else (pri.kernel_overhead_s, pri.matmul_m_half)
            eta_mm = kernels.small_m_efficiency(depth(bs), M, m_half)
            return flop / float(kernels.gemm_time(flop, F, eta_mm, byts, W, _eta(pri, "eta_bw", bs), t0))
        timed = dimension_of_unit(row["unit"]) == "time"  # the GEMM's time: its FLOP at that rate
        moved = dimension_of_unit(row["unit"]) == "bandwidth"  # its operands' and output's bytes over that time
        pred, spec = both((lambda bs: flop / rate(bs)) if timed else (lambda bs: byts * rate(bs) / flop) if moved
                          else rate)
        eta_k = depth("prior")
        bound = "compute" if flop / (F * eta_k) >= byts / (W * pri.eta_bw) else "memory"
        why = [f"GEMM {groups}×{M}×{N}×{K} {prec}: {bound}-bound"]
        if best_key:
            why.append(f"the best of a search over shapes: eta = {eta_k:.3g}, the best large shapes of the measured "
                       f"kernel tables ({pri.file or pri.name}: matmul_best_fmt.{best_key})")
        elif law_key:
            why.append(f"depth law eta = {eta_inf:.3g} · K/(K + {k_half:.0f}) = {eta_k:.3g} at K = {K} "
                       f"({pri.file or pri.name}: matmul_k_law_fmt.{law_key}, measured kernel tables)")
        if timed:
            why.append(f"time = 2·M·N·K·groups / rate = {flop:.3g} FLOP at {flop / pred / 1e12:.3g} TFLOP/s")
        if moved:
            why.append(f"bandwidth = (M·K·{b:g} + K·N·{b:g} + M·N·2) B · groups / time = {byts / 1e6:.3g} MB in "
                       f"{byts / pred * 1e6:.3g} µs (the GEMM's time at {flop * pred / byts / 1e12:.3g} TFLOP/s)")
        return Prediction(rid, g, "gemm", pred / scale, measured, row["unit"], spec / scale if spec else None,
                          not timed, why + notes, assume)
    if kind == "kernel":  # attention kernels: compute-bound at the BF16 peak (as in roofline's F_attn)
        fp8 = _attention_format(row) == "fp8"
        F = chip.peak("fp8" if fp8 else "bf16")  # FP8 matmuls in the kernel (FlashAttention-3 FP8), not FP8 KV
        c = pri.curves.get("eta_attn_prefill.bf16") or pri.curves.get("eta_attn_prefill")
        if c is not None:  # the measured attention kernels' rate at their largest size, not a GEMM's
            eta, what = float(c.y[-1]), (f"the measured prefill-attention kernels' rate at their largest size "
                                         f"({pri.file or pri.name}: eta_attn_prefill = {c.y[-1]:.3g})")
        else:
            eta, what = pri.eta_flop, "eta_flop (no attention kernel measured for this chip)"
        why = [f"compute-bound attention kernel at the {'FP8' if fp8 else 'BF16'} peak × {what}"]
        if dimension_of_unit(row["unit"]) == "time":  # its time: FlashAttention's FLOP count at that rate
            flop, how = _attention_flop(row)
            if flop is None:
                return Unexpressed(rid, g, how)
            pred, spec = both(lambda bs: flop / (F * (1.0 if bs == "spec" else eta)))
            return Prediction(rid, g, "kernel", pred / scale, measured, row["unit"], spec / scale if spec else None,
                              False, why + [how] + notes)
        pred, spec = both(lambda bs: F * (1.0 if bs == "spec" else eta))
        return Prediction(rid, g, "kernel", pred / scale, measured, row["unit"], spec / scale if spec else None,
                          True, why + notes)
    if kind == "link":
        return _link(row, al, system, pri, basis, measured, scale, notes)
    if kind == "collective":
        return _collective(row, system, pri, basis, measured, scale, notes)
    if kind == "stream":
        W = chip.hbm_bandwidth_bytes_per_s
        if re.search(r"kernel[\s_-]*time", row["metric"], re.I):
            moved = _bytes_moved(row["notes"])
            if moved is None:
                return Unexpressed(rid, g, "bytes moved not found in the row's notes")
            pred, spec = both(lambda bs: float(kernels.stream_time(moved, W, _eta(pri, "eta_bw", bs))))
            return Prediction(rid, g, "stream", pred / scale, measured, row["unit"], spec / scale if spec else None,
                              False, [f"stream of {moved / 1e6:.0f} MB at W · eta_bw"] + notes)
        pred, spec = both(lambda bs: W * _eta(pri, "eta_bw", bs))
        return Prediction(rid, g, "stream", pred / scale, measured, row["unit"], spec / scale if spec else None,
                          True, ["HBM stream at W · eta_bw (bytes read and written, as STREAM and bandwidthTest "
                                 "count them)"] + notes)
    # all-to-all (DeepEP)
    # across nodes where the row's words say so, its metric included ('lowlatency_dispatch_rdma_bandwidth'), or where
    # its experts span more chips than one scale-up domain holds (EP16 on 8-GPU H800 nodes)
    ep = split_of(row["parallelism"]).get("ep")  # 'EP8', 'EP=8', 'expert parallel 8', '--ep 8'
    if ep is None and not row["parallelism"].strip():  # the split in the notes where the column is empty
        ep = split_of(stated_split(row)[0]).get("ep")
    outside = bool(re.search(r"internode|rdma|ep\s*\d+\s*x\s*\d+", f"{text} {row['hardware']} {row['metric']}", re.I)) \
        or int(ep or 0) > system.domain_chips
    bw_spec = system.scaleout_bw if outside else system.scaleup_bw
    eta_name = "eta_scaleout" if outside else "eta_scaleup"
    tier = "scale-out (RDMA)" if outside else "scale-up (NVLink)"
    if not bw_spec:
        return Unexpressed(rid, g, f"{system.name} has no {tier} bandwidth in the catalog")
    if outside:
        notes.append("DeepEP's RDMA figures count logical bytes (every expert copy, including traffic that stays "
                     "local or is forwarded over NVLink after one RDMA hop per node), so they can exceed the NIC")
    if re.search(A2A_TIME, row["metric"].lower()):
        # tokens per batch: the batch column's count, or the notes' ('128 tokens per batch', 'batch of 4096 tokens')
        T = re.search(r"(\d+)\s*tokens", row["batch"]) or re.search(
            r"(\d+)\s*tokens?\s*(?:/|per)\s*(?:batch|rank|gpu|step)\b|"
            r"\bbatch\s*(?:size\s*)?(?:of|=|:)?\s*(\d+)\s*tokens", row["notes"], re.I)
        D = re.search(r"hidden\s*(?:size\s*)?[=:]?\s*(\d+)|(\d+)\s*hidden", row["notes"])  # 'hidden 7168', '7168 hidden'
        # experts per token: 'top-8', 'top-8 experts', 'topk=8' (not DeepSeek's 'top-4 groups' of experts)
        k = re.search(r"\btop-?(\d+)\b(?!\s*(?:node\s*)?groups?)|\btop[-_]?k\s*[=:]?\s*(\d+)", row["notes"], re.I)
        if not (ep and T and D and k):
            return Unexpressed(rid, g, "EP size, tokens, hidden size or top-k not found in the row")
        kk = int(k.group(1) or k.group(2))
        # the formats in the precision column, or where it is empty in the kernel's name ('... (FP8 dispatch / BF16 combine)')
        formats = (row["precision"] if row["precision"].strip() else row["model"]).lower()
        b = 1.0 if "dispatch" in row["metric"].lower() and "fp8 dispatch" in formats else 2.0
        lat = pri.scaleout_latency_s if outside else pri.scaleup_latency_s

        def t(bs):
            return float(kernels.alltoall_time(int(T.group(1) or T.group(2)), kk, int(D.group(1) or D.group(2)), b,
                                               int(ep), bw_spec * _eta(pri, eta_name, bs),
                                               0.0 if bs == "spec" else lat))
        pred, spec = both(t)
        return Prediction(rid, g, "alltoall", pred / scale, measured, row["unit"], spec / scale if spec else None,
                          False, [f"one all-to-all over {tier}: bytes / (bw · {eta_name}) + latency"] + notes)
    pred, spec = both(lambda bs: bw_spec * _eta(pri, eta_name, bs))
    why = [f"{tier} link × {eta_name}"]
    return Prediction(rid, g, "link", pred / scale, measured, row["unit"], spec / scale if spec else None, True,
                      why + notes)


def _attention_flop(row) -> tuple[float | None, str]:
    """(FLOP, how read) of one attention kernel call as FlashAttention's benchmarks count it: forward
    4 · B · S² · H · D (half of it causal), backward 2.5× the forward, forward + backward 3.5×; B, S, H, D from the
    row's text ('batch 4, seqlen 8192, 32 heads, hdim 128') or its batch and context columns. (None, why) where one
    is not stated."""
    text = " ".join(row[c] for c in ("model", "metric", "notes", "parallelism")).replace(",", " , ")
    num = r"\s*(?:=|:)?\s*" + _DIM

    def find(*pats):
        m = next((x for x in (re.search(p, text, re.I) for p in pats) if x), None)
        return _dim(m.group(1), m.group(2) if m.re.groups > 1 else None) if m else None
    B = find(r"\bbatch(?:[\s_-]*size)?" + num, r"\bbs" + num) or to_int(row["batch"])
    S = find(r"\bseq(?:uence)?[\s_-]*len(?:gth)?" + num, r"\bseqlen" + num) or to_int(row["context_len"]) or \
        to_int(row["input_len"])
    H = find(r"(\d+)\s*(?:attention\s+|query\s+|q\s+)?heads\b", r"\bn_?heads" + num, r"\bheads" + num)
    D = find(r"\bhdim" + num, r"\bhead[\s_-]*dim(?:ension)?" + num, r"\bheaddim" + num, r"\bd_?head" + num)
    missing = [w for w, x in (("batch", B), ("sequence length", S), ("heads", H), ("head dim", D)) if not x]
    if missing:
        return None, (f"an attention kernel's time is its FLOP (4 · batch · seqlen² · heads · head dim forward) at "
                      f"the kernel's rate, but the row states no {', '.join(missing)}")
    causal = bool(re.search(r"(?<!non-)(?<!non )\bcausal\b", text, re.I))
    bwd, fwd = re.search(r"backward|\bbwd\b", text, re.I), re.search(r"forward|\bfwd\b", text, re.I)
    passes, which = (3.5, "forward + backward") if bwd and fwd else (2.5, "backward") if bwd else (1.0, "forward")
    flop = 4.0 * B * S * S * H * D * passes / (2 if causal else 1)
    return flop, (f"{which}{' causal' if causal else ''}: 4 · {B} · {S}² · {H} · {D}" +
                  (f" × {passes:g}" if passes != 1 else "") + (" / 2" if causal else "") + f" = {flop:.3g} FLOP "
                  "(FlashAttention's count)")


_SQUARE = (8192, 8192, 8192)  # the large square GEMM a matmul rate with no shape is read as
_BEST = re.compile(r"max(?:imum)?[\s_-]*achiev|best[\s_-]*shape|\bmamf\b", re.I)
# a count, maybe in k ('8k', '8kx8k'); not the K of a following 'K=7168'
_DIM = r"(\d+(?:\.\d+)?)(?:\s*([kK])(?![a-wyzA-WYZ0-9_=]))?"


def _dim(n: str, k: str | None) -> int:
    """'8192' -> 8192; '8k', '16k' -> 8,192, 16,384 (a power-of-two count of k is 1,024s); '1.5k' -> 1,500."""
    x = float(n)
    if k:
        x *= 1024 if x == int(x) and int(x) & (int(x) - 1) == 0 else 1000
    return int(round(x))


def _gemm_shape(row) -> tuple[int, int, int, int] | None:
    """(M, N, K, groups) from the model, metric or notes: 'best shape AxBxC', 'M=.. N=.. K=..', 'M=N=K=8192',
    'AxBxC' or '(A, B, C)' (M×N×K), '8k x 8k x 8k', 'N^3' / 'N³'."""
    for text in (row["model"], row["metric"], row["notes"]):
        shape = _shape_in(text, row)
        if shape is not None:
            return shape
    return None


# a grouped GEMM's groups ('groups=4', '#Groups 4', 'num_groups: 4', '4 groups') and rows per group ('M/group=8192',
# 'M per group 8192', 'm_per_group=8192': DeepGEMM's README columns)
_GROUPS = re.compile(r"(?:#\s*|num[\s_-]*)?groups\s*[=:]?\s*(\d+)|(?<![\w.])(\d+)\s+groups\b", re.I)
_M_PER_GROUP = re.compile(r"\bM\s*(?:/\s*|[\s_-]*per[\s_-]*)group\s*[=:]?\s*" + r"(\d+(?:\.\d+)?)(?:\s*([kK])(?![a-zA-Z0-9_=]))?",
                          re.I)


def _shape_in(text: str, row) -> tuple[int, int, int, int] | None:
    groups = _GROUPS.search(text)
    G = int(groups.group(1) or groups.group(2)) if groups else 1
    best = re.search(r"best shape (\d+)x(\d+)x(\d+)", text)
    if best:
        return int(best.group(1)), int(best.group(2)), int(best.group(3)), 1
    # '(m, n, k) = (64, 7168, 2112)', 'M, N, K = 4096, 4096, 8192': the letters name the numbers in their order
    tup = re.search(rf"\(?\s*\b([MNK])\s*,\s*([MNK])\s*,\s*([MNK])\b\s*\)?\s*[=:]\s*\(?\s*{_DIM}\s*,\s*{_DIM}\s*,"
                    rf"\s*{_DIM}", text, re.I)
    if tup and len({x.upper() for x in tup.groups()[:3]}) == 3:
        dims = {sym.upper(): _dim(tup.group(4 + 2 * i), tup.group(5 + 2 * i)) for i, sym in enumerate(tup.groups()[:3])}
        return dims["M"], dims["N"], dims["K"], G
    text = re.sub(r"\b([mnk])(?=\s*=)", lambda x: x.group(1).upper(), text)  # 'm=1024 n=1024 k=1024'
    same = re.search(r"\b([MNK])\s*=\s*([MNK])\s*=\s*(?:([MNK])\s*=\s*)?" + _DIM, text)  # M=N=K=8192, M=N=4096
    named = {}
    if same:
        for sym in same.groups()[:3]:
            if sym:
                named[sym] = _dim(same.group(4), same.group(5))
    per_group = _M_PER_GROUP.search(text)
    # beside the rows per group, a table's columns name N and K with no '=' ('N 4096, K 7168')
    sep = r"\s*[=:]?\s*" if per_group else r"\s*=\s*"
    for sym in "NK":
        m = re.search(rf"\b{sym}{sep}" + _DIM, text)
        if m and sym not in named:
            named[sym] = _dim(m.group(1), m.group(2))
    M = per_group or re.search(r"\bM\s*=\s*" + _DIM, text)
    if "M" not in named and M:
        named["M"] = _dim(M.group(1), M.group(2))
    rows_m = re.fullmatch(r"\s*(?:M\s*=\s*)?(\d+)\s*", row["batch"] or "", re.I)  # the batch column: '16', 'M=16'
    # the batch column empty: a batch the notes or metric state, as a serving row reads it ('batch size 64', '(bs=64)')
    said = None if rows_m or (row["batch"] or "").strip() else batch_of(row)
    if "M" not in named and re.search(r"M=batch", text) and (rows_m or said):
        named["M"] = int(rows_m.group(1)) if rows_m else said
    if len(named) == 3:
        return named["M"], named["N"], named["K"], G
    triple = re.search(rf"(?<![\w.]){_DIM}\s*[x×]\s*{_DIM}\s*[x×]\s*{_DIM}(?![\w.])", text)
    if triple:
        a = triple.groups()
        return _dim(a[0], a[1]), _dim(a[2], a[3]), _dim(a[4], a[5]), G
    # a bare tuple of three counts, '(4096, 2112, 7168)': M, N, K in that order, as 'AxBxC' is read (it was the
    # unstated 8192³)
    bare = re.search(rf"\(\s*{_DIM}\s*,\s*{_DIM}\s*,\s*{_DIM}\s*\)", text)
    if bare:
        a = bare.groups()
        return _dim(a[0], a[1]), _dim(a[2], a[3]), _dim(a[4], a[5]), G
    cube = re.search(rf"(?<![\w.]){_DIM}\s*(?:\^\s*3|³)", text)
    if cube:
        n = _dim(cube.group(1), cube.group(2))
        return n, n, n, 1
    return None


_PRECISION_WORD = r"\b(nvfp4|mxfp4|fp4|fp8|bf16|fp16|int8|w8a8|tf32|fp32)\b"
_FP8 = r"fp8|float8|\be4m3|\be5m2"  # FP8 as a format's name or its bits (FlashAttention-3's 'e4m3')


def _precision(row, al: Aliases) -> tuple[str | None, str]:
    """The GEMM's format: the precision column, else a format the metric or model names ('dense fp8 gemm'). A GEMM
    whose format reads as INT8 multiplies INT8 operands ('w8a8', the INT8 tensor-core rate) unless the row says it is
    weight-only ('W8A16', 'weight-only': 'int8', dequantised to the 16-bit rate). A TF32 GEMM is refused: it runs on
    the tensor cores at the TF32 rate, which the catalog does not hold."""
    prec, note = _named_precision(row, al)
    if prec == "int8" and not re.search(r"weight[\s_-]*only|\bw8a16\b|int8[\s_-]*wo\b",
                                        f"{row['precision']} {row['model']} {row['notes']}", re.I):
        return "w8a8", note + ("; " if note else "") + "a GEMM of INT8 operands (W8A8: the INT8 tensor-core rate)"
    return prec, note


def _named_precision(row, al: Aliases) -> tuple[str | None, str]:
    m = re.search(_PRECISION_WORD, f"{row['metric']} {row['model']} {row['notes']}", re.I)
    if re.search(r"tf32", row["precision"] if row["precision"].strip() else (m.group(1) if m else ""), re.I):
        return None, ("a TF32 GEMM runs on the tensor cores at the TF32 rate, which the catalog does not hold (its "
                      "fp32 peak is the CUDA cores' rate, several times slower)")
    if row["precision"].strip():
        prec, _, note = al.precision(row["precision"])
        return prec, note
    # the column's words moved into the kernel's name: 'dense FP8 GEMM ... (FP8 e4m3, 128-block scaling, BF16 out)'
    said = next((p for p in re.findall(r"\(([^()]*)\)", row["model"]) if re.search(_PRECISION_WORD, p, re.I)), None)
    if said:
        prec, _, note = al.precision(said)
        if prec is not None:
            return prec, f"precision {said!r} read from the kernel's name"
    if m is None:
        return None, "GEMM precision not stated (the precision column is empty and the row names no format)"
    prec, _, note = al.precision(m.group(1).lower())
    return prec, note if prec is None else f"precision {m.group(1)} read from the row's text"


def _bytes_moved(notes: str) -> float | None:
    mb = re.search(r"([\d.]+)\s*MB moved", notes)
    if mb:
        return float(mb.group(1)) * 1e6
    prod = re.search(r"((?:\d+x)+\d+)B(?:\s*x(\d+))?", notes)
    if prod:
        v = float(np.prod([float(x) for x in prod.group(1).split("x")]))
        return v * (float(prod.group(2)) if prod.group(2) else 1.0)
    return None


# ---- links and collectives -----------------------------------------------------------------------------

_OUTSIDE = r"infiniband|\bib\b|\brdma\b|roce|\bnics?\b|ethernet|\befa\b|connectx|\bcx-?\d\b|inter-?node|across nodes|" \
           r"multi-?node|scale-?out|ib_(?:write|read|send)_bw"
_HOST = r"pci-?e|\bh2d\b|\bd2h\b|host[\s_-]?to[\s_-]?device|device[\s_-]?to[\s_-]?host|\bhost\b"
_BIDIRECTIONAL = r"bi-?directional|\bbidir\b|\bduplex\b|both directions"


def _scaleup_is_pcie(system: System) -> bool:
    """Is the scale-up link PCIe (a PCIe server: 'PCIe Gen5 x16 without NVLink'), by the source of its rate?"""
    rec = system if system.scaleup_bandwidth_bytes_per_s else system.chip
    src = rec.sources.get("scaleup_bandwidth_bytes_per_s", "")
    return bool(re.search(r"pci-?e", src, re.I)) and not re.search(
        r"(?<!without )(?<!no )(?:nvlink|xgmi|infinity fabric)", src, re.I)


def _link(row, al, system: System, pri: Priors, basis: str, measured: float, scale: float, notes: list[str]):
    """One point-to-point link's rate: NVLink/peer-to-peer on the scale-up link, InfiniBand/RoCE on the NIC, PCIe
    on the scale-up link where that is PCIe (else the catalog has no host link); bidirectional = 2 directions."""
    rid, g = row["id"], group_of(row["id"])
    named = f"{row['metric']} | {row['model']}"
    text = f"{named} | {row['notes']}"
    outside = re.search(_OUTSIDE, named, re.I) or (not re.search(LINK, named, re.I)
                                                    and re.search(_OUTSIDE, row["notes"], re.I))
    if outside:
        bw, eta_name, tier = system.scaleout_bw, "eta_scaleout", "scale-out NIC"
    elif re.search(_HOST, named, re.I) and not _scaleup_is_pcie(system):
        return Unexpressed(rid, g, f"a PCIe / host link: the catalog has no host-link bandwidth for "
                                   f"{system.chip.name} (its scale-up link, {system.scaleup_bw / 1e9:.0f} GB/s per "
                                   "direction, is not PCIe)")
    else:
        bw, eta_name, tier = system.scaleup_bw, "eta_scaleup", "scale-up link"
        if _scaleup_is_pcie(system):
            tier = "scale-up link (PCIe)"
    if not bw:
        return Unexpressed(rid, g, f"{system.name} has no {tier} bandwidth in the catalog")
    ways = 2 if re.search(_BIDIRECTIONAL, text, re.I) else 1
    pred = ways * bw * _eta(pri, eta_name, basis)
    spec = ways * bw if basis == "prior" else None
    why = [f"{tier}: {bw / 1e9:.3g} GB/s per direction × {eta_name}" + (" × 2 directions (bidirectional)"
                                                                         if ways == 2 else " (one direction)")]
    return Prediction(rid, g, "link", pred / scale, measured, row["unit"], spec / scale if spec else None, True,
                      why + notes)


_SIZE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*([kKMGT]i?)?B(?![\w/])(?!\s*(?:HBM|memory|VRAM|of memory))")
_SIZE_PREFIXED = re.compile(_SIZE.pattern.replace("i?)?B", "i?)B"))  # outside the metric, '70B' is a parameter count
_SIZE_NAMED = re.compile(r"\b(?:size|message|msg|bytes)\s*(?:=|:|of)?\s*(\d+(?:\.\d+)?)\s*([kKMGT]i?)?B?(?![\w/.])",
                         re.I)
_LARGE_MSG, _SMALL_MSG = 2.0**30, 8.0


def message_bytes(row) -> tuple[float | None, str]:
    """(bytes, how read) of a collective's message: '8GB', '256 MB', '8 B', '1 GiB', 'size=8G', in the metric, the
    notes, the batch or the model column. K/M/G with 'i' are binary; without it, binary where the count is a
    power of two (nccl-tests' sizes: '8GB' is 8 GiB), else decimal."""
    for col in ("metric", "notes", "batch", "model"):
        m = (_SIZE if col == "metric" else _SIZE_PREFIXED).search(row[col]) or _SIZE_NAMED.search(row[col])
        if m:
            x, p = float(m.group(1)), (m.group(2) or "")
            power2 = x == int(x) and int(x) > 0 and int(x) & (int(x) - 1) == 0
            base = 1024.0 if ("i" in p or power2) else 1000.0
            v = x * base ** " KMGT".index(p[:1].upper() or " ")
            return v, f"message {m.group(0).strip()!r} = {v:,.0f} B" + (" (a power of two: binary)" if p and
                                                                       "i" not in p and power2 else "")
    return None, ""


# nccl-tests' closing line '# Avg bus bandwidth : 150.2': the mean busbw over every size of the run's sweep
_AVERAGE = r"\bavg\b|\baverage\b|\bmean\b"
_SWEEP_SIZE = r"(\d+(?:\.\d+)?)\s*([KMGT]?)\b"


def sweep_sizes(text: str) -> tuple[list[float] | None, str]:
    """(sizes in bytes, how read) of an nccl-tests sweep: '-b 8 -e 8G -f 2' (from 8 B to 8 GiB, doubling; K/M/G are
    1,024s, as nccl-tests parses them), '-b 1M -e 1G -i 1M' (a fixed step, nccl-tests' default 1 MiB where neither
    -f nor -i is given); (None, why) where the row gives no sweep."""
    def size(flag):
        m = re.search(rf"(?<![\w-])(?:-{flag[0]}|--{flag[1:]})\s*[= ]?\s*{_SWEEP_SIZE}", text)
        return float(m.group(1)) * 1024.0 ** " KMGT".index(m.group(2) or " ") if m else None
    lo, hi = size("bminbytes"), size("emaxbytes")
    if lo is None or hi is None or not 0 < lo <= hi:
        return None, ("nccl-tests' average bus bandwidth is the mean over the sizes its run swept (-b, -e, -f), which "
                      "the row does not give")
    f = re.search(r"(?<![\w-])(?:-f|--stepfactor)\s*[= ]?\s*(\d+)", text)
    if f and int(f.group(1)) > 1:
        k = int(f.group(1))
        sizes = [lo * k**i for i in range(int(math.log(hi / lo, k) + 1e-9) + 1)]
        how = f"a sweep from {lo:,.0f} B to {hi:,.0f} B, ×{k} a step"
    else:
        step = size("istepbytes") or 2.0**20
        sizes = list(np.arange(lo, hi + 1, step))
        how = f"a sweep from {lo:,.0f} B to {hi:,.0f} B in steps of {step:,.0f} B"
    return sizes, how


def _own_words(row: dict) -> str:
    """What the row says of the kernel itself: its model, metric and notes (not the hardware column, which may
    describe the whole cluster)."""
    return " ".join(row[c] for c in ("model", "metric", "notes"))


# a collective said to run over the scale-out NICs, not the scale-up links
_OVER_NIC = r"\b(?:over|via|through|across|on)\s+(?:infiniband|ib|roce(?:v2)?|ethernet|the\s+nics?|rdma)\b"


_RING_OPS = ("all_reduce", "all_gather", "reduce_scatter")  # rings along every axis of a torus block at once


def _collective(row, system: System, pri: Priors, basis: str, measured: float, scale: float, notes: list[str]):
    """An NCCL-style collective: t = f_bus · m / bw_bus + lat (kernels.collective_time), reported as the row's
    busbw = f_bus · m / t, algbw = m / t, or the time t."""
    rid, g = row["id"], group_of(row["id"])
    named = f"{row['metric']} | {row['model']}"
    text = f"{named} | {row['notes']} | {row['parallelism']} | {row['batch']}"
    op = next((o for o, pat in COLLECTIVE_OPS.items() if re.search(pat, named, re.I)), None) or \
        next((o for o, pat in COLLECTIVE_OPS.items() if re.search(pat, text, re.I)), None)
    if op is None:
        return Unexpressed(rid, g, "collective not named (all_reduce, all_gather, reduce_scatter, alltoall, broadcast, "
                                   "reduce or sendrecv)")
    dim = dimension_of_unit(row["unit"])
    if dim not in ("bandwidth", "time"):
        return Unexpressed(rid, g, f"a collective's time or bandwidth is predicted, not {row['unit']!r}")
    n, n_how = chips_of(row, system)
    if n is None:
        return Unexpressed(rid, g, "number of GPUs the collective spans not stated (n_chips or the hardware column)")
    if n < 2:
        return Unexpressed(rid, g, f"a collective over {n} GPU moves nothing between GPUs")
    if n_how:
        notes.append(n_how)
    sweep, sweep_how = None, ""
    if dim == "bandwidth" and re.search(_AVERAGE, row["metric"], re.I):
        sweep, sweep_how = sweep_sizes(text)
        if sweep is None and message_bytes(row)[0] is None:  # a mean at one stated size is of repeated runs
            return Unexpressed(rid, g, sweep_how)
    m, m_how = (sweep[-1], sweep_how) if sweep is not None else message_bytes(row)
    if m is not None and not m > 0:
        return Unexpressed(rid, g, f"{m_how}: a collective of no bytes moves nothing")
    if m is None:
        m = _LARGE_MSG if dim == "bandwidth" else _SMALL_MSG
        m_how = (f"message size not stated: {'1 GiB, where busbw plateaus' if dim == 'bandwidth' else '8 B, a latency'}"
                 " (assumed)")
    assume = [m_how] if "assumed" in m_how else []
    if not assume and sweep is None:  # a sweep's reading is said beside its mean
        notes.append(m_how)
    # across scale-up domains: more chips than one domain holds, or the row says the collective leaves the node
    nodes = re.search(r"(\d+)\s*(?:x\s*)?nodes?\b", text, re.I)
    dom = system.domain_chips
    if nodes and int(nodes.group(1)) >= 2 and n % int(nodes.group(1)) == 0:
        outside, per = True, n // int(nodes.group(1))
    elif n > dom:
        outside, per = True, per_node_of(row) or dom
    elif re.search(r"inter-?node|across nodes|multi-?node|scale-?out", text, re.I) or (
            re.search(_OVER_NIC, _own_words(row), re.I)
            and not re.search(r"nvlink|nvswitch", text, re.I)):  # the collective said to run over the NICs (the
        # hardware column may name the cluster's fabric beside NVLink, so only the row's own words count)
        outside, per = True, per_node_of(row) or 1
        if not per_node_of(row):
            assume.append("across nodes with no count of GPUs per node: one GPU per node (assumed)")
    else:
        outside, per = False, n
    if outside and per >= n:  # as many per node as in all: one domain after all
        outside, per = False, n
    if outside and not system.scaleout_bw:
        return Unexpressed(rid, g, f"{system.name} has no scale-out bandwidth in the catalog")
    f_bus = float(kernels.bus_factor(op, n))
    curve = "eta_scaleup.allreduce" in pri.curves and op == "all_reduce" and not outside
    torus = bool(system.torus_dims) and op in _RING_OPS  # a ring over the block of the torus each domain's share spans
    up_bw = float(system.ring_bw(per)) if torus else system.scaleup_bw

    def parts(bs: str, m: float = m) -> tuple[float, float]:
        """(bw_bus, lat) on basis bs for a message of m bytes: links at their rates × eta, the fixed cost of one
        collective."""
        eta_up = _eta(pri, "eta_scaleup", bs)
        if curve and bs != "spec":  # the chip's all-reduce measured by message size (8 GPUs in one node)
            eta_up = float(kernels.efficiency(pri, "eta_scaleup", "allreduce", m)[0])
            if n != 8:  # the in-switch reduction that lifts it past the ring was measured on 8 GPUs only
                eta_up = min(eta_up, 1.0)
        up = up_bw * eta_up
        if not outside:
            lat = pri.alltoall_latency_s if op == "alltoall" and pri.alltoall_latency_s is not None \
                else pri.scaleup_latency_s
            return up, 0.0 if bs == "spec" else lat
        out = system.scaleout_bw * _eta(pri, "eta_scaleout", bs)
        # a send/receive ring crosses each domain boundary on one chip's NIC, not striped over the domain's g
        bw = kernels.alltoall_bus_bandwidth(up, out, n, per) if op == "alltoall" else \
            kernels.ring_bus_bandwidth(up, 1 if op == "sendrecv" else per, out)
        return float(bw), 0.0 if bs == "spec" else pri.scaleout_latency_s

    def value(bs: str, m: float = m) -> float:
        bw, lat = parts(bs, m)
        # with a reduction in the switch (measured where the chip's all-reduce beat the ring), the spec bound is
        # the (n − 1)/n · m each chip must still send, not the ring's 2(n − 1)/n · m (kernels module docstring)
        f = (n - 1) / n if bs == "spec" and in_switch else f_bus
        t = float(kernels.collective_time(f, m, bw, lat))
        return t if dim == "time" else (m / t if algbw else f_bus * m / t)

    in_switch = curve and max(pri.curves["eta_scaleup.allreduce"].y) > 1.0
    algbw = bool(re.search(r"\balg\s?bw\b|algorithm bandwidth", text, re.I))
    if dim == "bandwidth" and not algbw and not re.search(r"\bbus\s?bw\b|bus bandwidth", text, re.I):
        assume.append("bus or algorithm bandwidth not stated: busbw, nccl-tests' headline figure (assumed)")

    def reported(bs: str) -> float:
        """The row's figure: one size's, or nccl-tests' 'Avg bus bandwidth', the mean over the sweep's sizes."""
        return value(bs) if sweep is None else float(np.mean([value(bs, x) for x in sweep]))

    pred = reported(basis)
    spec = reported("spec") if basis == "prior" else None
    bw, lat = parts(basis)
    across = "min(bw_up·(n−1)/(g−1), bw_out·(n−1)/(n−g))" if op == "alltoall" else \
        "min(bw_up, bw_out)" if op == "sendrecv" else "min(bw_up, g·bw_out)"
    tier = (f"across domains ({n // per if per else n} × {per} GPUs): scale-out NICs × eta_scaleout, "
            f"bw_bus = {across}" if outside else "inside one scale-up domain: " + (
                f"the {system.torus_dims}D torus links of a {' × '.join(map(str, kernels.torus_shape(per, system.torus_dims)))} "
                f"block ({up_bw / 1e9:.3g} GB/s of {system.scaleup_bw / 1e9:.3g}; kernels.torus_bus_bandwidth) × "
                if torus else "scale-up link × ") +
            ("the chip's measured all-reduce efficiency at this size (eta_scaleup.allreduce)" if curve else
             "eta_scaleup"))
    what = "time" if dim == "time" else ("algbw = m / t" if algbw else "busbw = f_bus · m / t")
    lat_name = "scaleout_latency_s" if outside else "alltoall_latency_s" if (
        op == "alltoall" and pri.alltoall_latency_s is not None) else "scaleup_latency_s"
    why = [f"{op} over {n} GPUs, {tier}; t = f_bus · m / bw_bus + lat, f_bus = {f_bus:.3g}, "
           f"bw_bus = {bw / 1e9:.3g} GB/s, lat = {lat * 1e6:.3g} µs ({lat_name} of {pri.file or pri.name}); {what}"]
    if sweep is not None:
        why.append(f"{sweep_how}: the mean of busbw over its {len(sweep)} sizes (the figures above at the largest)")
    if in_switch:
        why.append("the chip's measured all-reduce beats the ring at large sizes (a reduction in the NVLink "
                   "switch): the spec bound is (n − 1)/n · m per chip, busbw ≤ 2 · bw_up")
    return Prediction(rid, g, "collective", pred / scale, measured, row["unit"], spec / scale if spec else None,
                      dim != "time", why + notes, assume)
