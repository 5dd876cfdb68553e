"""Microbenchmark rows (UB): one GEMM, one stream, one link or all-to-all, on the single-kernel rooflines of `kernels`."""

from __future__ import annotations

import re

import numpy as np

from ...core import arch, kernels
from ...core.load import load_priors
from ...core.records import Priors, System
from .match import Aliases
from .report import Prediction, Unexpressed
from .rows import group_of, to_int

__all__ = ["predict_microbenchmark"]


def _eta(pri: Priors, name: str, basis: str) -> float:
    return 1.0 if basis == "spec" else float(getattr(pri, name))


def predict_microbenchmark(row, kind: str, al: Aliases, system: System, hw_note: str, measured: float, scale: float,
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
    Mv = int(M.group(1)) if M else (to_int(row["batch"]) if re.search(r"M=batch", text) else None)
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
