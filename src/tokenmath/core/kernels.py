"""Rooflines of single kernels: one GEMM, one memory stream, one all-to-all.

These are what microbenchmarks measure (the `UB-*` rows of the validation table, and what
`tokenmath calibrate` times on this machine), so they are what the efficiency priors are read from.
A model's step time is NOT built from these: that is `roofline.step`, over the whole model.

    FLOP_gemm  = 2 · M · N · K · groups                                   (one multiply-add = 2 FLOP)
    bytes_gemm = groups · (M·K·b_in + K·N·b_w + M·N·b_out)                 (each operand once)
    eta_mm     = eta_flop · M / (M + M_half · [M > 1])      (M = 1 is a GEMV: no tile to fill)
    t_gemm     = max(FLOP_gemm / (F · eta_mm), bytes_gemm / (W · eta_bw)) + t_kernel
    t_stream   = bytes / (W · eta_bw)
    t_a2a      = T_chip · k · D · b · (1 − 1/EP) / bw_link + lat           (dispatch or combine, one way)
    t_coll     = f_bus · m / bw_bus + lat                                   (one collective of m bytes on n chips)

A collective's bytes per chip (nccl-tests' PERFORMANCE.md): a ring all-reduce sends 2(n − 1)/n · m from each
chip (a reduce-scatter, then an all-gather, each (n − 1) steps of m/n); all-gather, reduce-scatter and
all-to-all send (n − 1)/n · m; a broadcast or a reduce (pipelined along a chain) and a send/receive pair move
the whole m through each chip once, f_bus = 1 (busbw = algbw). That factor is f_bus, and nccl-tests' bus bandwidth busbw = f_bus · m / t =
algbw · f_bus is the rate at which each chip's busiest link runs, so at large m busbw → bw_bus, the link
rate × efficiency, whatever n. bw_bus inside one scale-up domain is the scale-up link per direction (on a TPU
torus, the links of the axes the group spans: torus_bus_bandwidth); across
domains the rings are striped over the g NICs of each domain (NCCL's one ring per NIC), so the domain's
share of the ring crosses the network on g NICs at once:
    bw_bus (ring, across domains)     = min(bw_up, g · bw_out)
while an all-to-all sends (g − 1)/n · m over the domain's links and (n − g)/n · m through each chip's own NIC:
    bw_bus (all-to-all, across)       = min(bw_up · (n − 1)/(g − 1), bw_out · (n − 1)/(n − g))
With a reduction inside the switch (NVLink SHARP), an all-reduce chip sends its (n − 1)/n · m once and
receives the reduced (n − 1)/n · m: t ≥ (n − 1)/n · m / bw, so busbw can exceed bw, up to 2 · bw.

A small-M GEMM is memory-bound by the same max(): its weights (K·N·b_w) dominate the bytes and its
FLOP are few, so `t_gemm` falls back to the bandwidth term without any shape-specific factor; the
fixed t_kernel (launch, pipeline fill, tail wave) is what keeps the smallest GEMMs below W · eta_bw.
M_half is the row count at which a tiled GEMM's register tiles are half full: on a GPU the memory
bound hides it (the UB rows fit with M_half = 0); on a CPU, whose FLOP-to-byte ratio is small, a
GEMM with a few rows runs far below peak FLOP/s while a one-row product runs as a streaming GEMV.
"""

from __future__ import annotations

import numpy as np

from .derive import formula
from .errors import InputError
from .units import PRECISION_BYTES

__all__ = ["between_sizes", "gemm_flop", "gemm_bytes", "gemm_time", "small_m_efficiency", "depth_efficiency",
           "stream_time", "alltoall_time", "context_attention_eta", "sparse_decode_eta",
           "bus_factor", "collective_time", "ring_bus_bandwidth", "alltoall_bus_bandwidth",
           "achieved_rate", "curve_value", "efficiency", "cache_hit_share", "tiered_bandwidth", "curve_spread",
           "has_curve", "check_formats"]


@formula("FLOP_gemm = 2 · M · N · K · groups", unit="FLOP")
def gemm_flop(M, N, K, groups=1):
    return 2 * M * N * K * groups


@formula("bytes_gemm = groups · (M·K·b_in + K·N·b_w + M·N·b_out)", unit="B")
def gemm_bytes(M, N, K, b_in, b_w, b_out, groups=1):
    return groups * (M * K * b_in + K * N * b_w + M * N * b_out)


@formula("eta_mm = eta_flop · M / (M + M_half · [M > 1])", unit="")
def small_m_efficiency(eta_flop, M, M_half):
    """M / (M + M_half) of eta_flop for M > 1 rows; a one-row product (GEMV) keeps eta_flop."""
    M = np.asarray(M, dtype=float)
    return eta_flop * M / (M + M_half * (M > 1))


@formula("eta_K = eta_inf · K / (K + K_half)", unit="")
def depth_efficiency(eta_inf, K, K_half):
    """A compute-bound GEMM's rate by its depth K. Every output tile pays, besides its K-loop, a fixed prologue
    and epilogue (filling the load pipeline, scaling and writing back the accumulators): the time of K_half
    multiply-adds per output element. So a shallow GEMM (K = 512: an MoE expert's down projection, a LoRA)
    runs well below a deep one; K_half is measured per format (Priors.matmul_k_law_fmt: ~200–250 for BF16,
    ~500–1,200 for FP8 and NVFP4, whose faster MACs make the same epilogue worth more of them)."""
    K = np.asarray(K, dtype=float)
    return eta_inf * K / (K + K_half)


@formula("t_gemm = max(FLOP_gemm / (F · eta_mm), bytes_gemm / (W · eta_bw)) + t_kernel", unit="s")
def gemm_time(FLOP_gemm, F, eta_mm, bytes_gemm, W, eta_bw, t_kernel=0.0):
    return np.maximum(FLOP_gemm / (F * eta_mm), bytes_gemm / (W * eta_bw)) + t_kernel


@formula("eta_kv = kv_k / (W · (t0_attn + n_pair · t_pair) + kv_k / eta_dec)", unit="")
def decode_attention_eta(kv_k, W, t0_attn, n_pair, t_pair, eta_dec):
    """Decode attention's KV streaming rate, from one kernel's measured law (kernel_tables._decode_attention):
    t = t0 + n_pair · t_pair + kv_k / (W · eta_dec) for the kv_k bytes of one layer on one chip and its n_pair
    (sequence, KV head) work items; the rate the step's KV read runs at is kv_k / (W · t). A step that reads no KV
    (kv_k = 0) has no kernel to pay for: its rate is eta_dec (0 bytes at any rate take no time)."""
    kv_k = np.asarray(kv_k, dtype=float)
    return np.where(kv_k > 0, kv_k / (W * (t0_attn + n_pair * t_pair) + kv_k / eta_dec), eta_dec)


@formula("eta_attn = FLOP_k / (F · (t0_ctx + n_seq · t_seq + n_q · t_q + n_kv · t_kv) + FLOP_k / eta_ctx)", unit="")
def context_attention_eta(FLOP_k, F, t0_ctx, n_seq, t_seq, n_q, t_q, n_kv, t_kv, eta_ctx):
    """Context (prefill) attention's FLOP rate, from one kernel's measured law (kernel_tables._prefill_attention):
    t = t0 + n_seq · t_seq + n_q · t_q + n_kv · t_kv + FLOP_k / (F · eta_ctx) for the FLOP_k of one layer on one chip,
    its n_seq (sequence, query head) pairs, n_q (token, query head) and n_kv (token, KV head) rows; the rate the step's
    attention FLOP run at is FLOP_k / (F · t). A step without attention FLOP has no kernel to pay for: eta_ctx."""
    FLOP_k = np.asarray(FLOP_k, dtype=float)
    fixed = F * (t0_ctx + n_seq * t_seq + n_q * t_q + n_kv * t_kv)
    return np.where(FLOP_k > 0, FLOP_k / (fixed + FLOP_k / eta_ctx), eta_ctx)


@formula("eta_kv = (kv_a + kv_s) / (W·(L_a·(t0_attn + n_pair·t_pair) + L_l·t0_gdn) + kv_a/eta_dec + kv_s/eta_gdn)",
         unit="")
def hybrid_decode_eta(kv_a, kv_s, W, L_a, t0_attn, n_pair, t_pair, eta_dec, L_l, t0_gdn, eta_gdn):
    """A hybrid's decode-step state and KV reads as one rate: its L_a attention layers each run the attention kernel's
    law over the kv_a bytes of KV (decode_attention_eta), its L_l linear-attention layers each the Gated DeltaNet
    kernels' law (kernel_tables._gdn_decode: a fixed cost and a streaming rate) over the kv_s bytes of recurrent state
    they read and write; the step's reads, kv_a + kv_s, run at what the two take together."""
    kv_a, kv_s = np.asarray(kv_a, dtype=float), np.asarray(kv_s, dtype=float)
    t = W * (L_a * (t0_attn + n_pair * t_pair) + L_l * t0_gdn) + kv_a / eta_dec + kv_s / eta_gdn
    return np.where(kv_a + kv_s > 0, (kv_a + kv_s) / np.maximum(t, 1e-300), eta_dec)


@formula("eta_kv = (kv_a + kv_i) / (W·(L·(t0_attn + n_seq·t_seq) + L_i·(t0_idx + n_seq·t_seq_idx + sel·t_sel "
         "+ S·t_len)) + kv_a/eta_dec + kv_i/eta_idx)", unit="")
def sparse_decode_eta(kv_a, kv_i, W, L, t0_attn, n_seq, t_seq, eta_dec, L_i, t0_idx, t_seq_idx, sel, t_sel, S, t_len,
                      eta_idx):
    """A DeepSeek-sparse-attention model's decode reads as one rate: each of its L layers runs the MLA kernel's law
    over the kv_a bytes of the top-k latents it attends to (decode_attention_eta), each of its L_i indexer layers the
    indexer's measured law (kernel_tables._dsa_indexer: a fixed cost, one per sequence, the top-k selection where the
    context S exceeds the k kept (sel = 1), the walk along one sequence's S keys, and the kv_i bytes of every cached
    index key at eta_idx)."""
    kv_a, kv_i = np.asarray(kv_a, dtype=float), np.asarray(kv_i, dtype=float)
    idx = L_i * (t0_idx + n_seq * t_seq_idx + sel * t_sel + S * t_len)
    t = W * (L * (t0_attn + n_seq * t_seq) + idx) + kv_a / eta_dec + kv_i / eta_idx
    return np.where(kv_a + kv_i > 0, (kv_a + kv_i) / np.maximum(t, 1e-300), eta_dec)


@formula("eta_attn = (FLOP_a + FLOP_s) / (FLOP_a/eta_a + F·L_l·(t0_gdn + n_seq·t_seq + n_tok·t_tok))", unit="")
def hybrid_context_eta(FLOP_a, eta_a, FLOP_s, F, L_l, t0_gdn, n_seq, t_seq, n_tok, t_tok):
    """A hybrid's prefill mixing as one FLOP rate: its attention layers' FLOP_a at the context kernel's rate eta_a, its
    L_l Gated DeltaNet layers each the chunked scan's measured time (kernel_tables._gdn_prefill: a fixed cost, one per
    sequence, one per token) for the FLOP_s of their state updates."""
    FLOP_a, FLOP_s = np.asarray(FLOP_a, dtype=float), np.asarray(FLOP_s, dtype=float)
    return (FLOP_a + FLOP_s) / np.maximum(FLOP_a / eta_a + F * L_l * (t0_gdn + n_seq * t_seq + n_tok * t_tok), 1e-300)


@formula("t_stream = bytes_moved / (W · eta_bw)", unit="s")
def stream_time(bytes_moved, W, eta_bw):
    return bytes_moved / (W * eta_bw)


@formula("t_a2a = T_chip · k · D · b · (1 − 1/EP) / bw_link + lat", unit="s")
def alltoall_time(T_chip, k, D, b, EP, bw_link, lat):
    return T_chip * k * D * b * (1 - 1 / EP) / bw_link + lat


def bus_factor(op: str, n):
    """f_bus: bytes each chip sends per byte of message, for the nccl-tests collective `op` over n chips."""
    if op == "all_reduce":
        return 2 * (n - 1) / n
    if op in ("all_gather", "reduce_scatter", "alltoall"):
        return (n - 1) / n
    if op in ("broadcast", "reduce", "sendrecv"):
        return 1.0 + 0 * n  # the whole message through each chip once (nccl-tests: busbw = algbw)
    raise InputError(f"collective {op!r}: not one of all_reduce, all_gather, reduce_scatter, alltoall, broadcast, "
                     "reduce, sendrecv")


@formula("t_coll = f_bus · m / bw_bus + lat", unit="s")
def collective_time(f_bus, m, bw_bus, lat):
    return f_bus * m / bw_bus + lat


@formula("bw_bus = min(bw_up, g · bw_out)", unit="B/s")
def ring_bus_bandwidth(bw_up, g, bw_out):
    """A ring collective across domains of g chips: the rings cross the network on the domain's g NICs at once."""
    return np.minimum(bw_up, g * bw_out)


def torus_shape(n: int, dims: int) -> tuple[int, ...]:
    """Axis extents of the most nearly cubic block of n chips on a dims-axis torus, as Cloud TPU slices are laid out
    (8 chips on 2 axes: 2 × 4; 64 on 3: 4 × 4 × 4): each prime factor of n, largest first, on the shortest axis."""
    axes, k, p = [1] * dims, int(n), 2
    primes = []
    while k > 1:
        while k % p == 0:
            primes.append(p)
            k //= p
        p += 1
    for f in sorted(primes, reverse=True):
        axes[axes.index(min(axes))] *= f
    return tuple(sorted(axes))


def _torus_bw(bw_chip, n, dims, wrap):
    """torus_bus_bandwidth for one group size."""
    b_link, shape = bw_chip / (2 * dims), torus_shape(max(int(n), 1), dims)
    wraps = bool(wrap) and all(a % wrap == 0 for a in shape)
    return sum(b_link * (2 if wraps else 1) for a in shape if a > 1)


@formula("bw_bus = Σ{α(n, dims) > 1} bw_chip / (2·dims) · (1 + 𝟙[∀α: wrap ∣ α])", unit="B/s")
def torus_bus_bandwidth(bw_chip, n, dims, wrap):
    """A ring collective over n chips of a torus (Cloud TPU ICI): the group is a block of `torus_shape(n, dims)` and
    runs a bidirectional ring along every axis it spans at once, each on that axis's 2 links of bw_chip / (2·dims)
    per direction (the chip's rate is over its 2·dims links). A block whose every axis is a multiple of `wrap` (whole
    4 × 4 × 4 cubes on v4/v5p, the whole 16 × 16 pod on v5e/v6e) closes each axis into a ring; a smaller block's axes
    are lines, whose ring runs each link both ways: half the rate. A full torus gets the chip's whole rate, as a
    switched domain does; 8 chips of a v5e (2 × 4, no wraparound) a half."""
    return np.vectorize(_torus_bw, otypes=[float])(bw_chip, n, dims, wrap)


@formula("bw_bus = min(bw_up · (n − 1)/(g − 1), bw_out · (n − 1)/(n − g))", unit="B/s")
def alltoall_bus_bandwidth(bw_up, bw_out, n, g):
    """An all-to-all across domains of g chips: (g − 1)/n of each chip's message stays on the domain's links,
    (n − g)/n leaves through its own NIC, both at once (g = 1: the NIC alone)."""
    with np.errstate(divide="ignore"):
        up = np.where(np.asarray(g) > 1, bw_up * (n - 1) / np.maximum(np.asarray(g, dtype=float) - 1, 1e-300), np.inf)
    return np.minimum(up, bw_out * (n - 1) / (n - g))


@formula("rate = work / t", unit="")
def achieved_rate(work, t):
    return work / t


def curve_value(curve, x):
    """A measured curve read at x: a power law between its points (linear in log y against log x), flat
    beyond its ends. Between two points the time a size-x job takes, x / eta(x), then moves monotonically
    from one point's to the other's, so a curve whose points never make a larger job faster never does
    in between either."""
    lx = np.log(np.maximum(np.asarray(x, dtype=float), 1e-300))
    return np.exp(np.interp(lx, np.log(np.asarray(curve.x, dtype=float)), np.log(np.asarray(curve.y, dtype=float))))


@formula("y = y0 · (y1 / y0)^min(1, max(0, log(x / x0) / log(x1 / x0)))", unit="")
def between_sizes(y0, y1, x, x0, x1):
    """`curve_value`'s law between two measurements y0 at x0 and y1 at x1 whose values are themselves arrays (read
    off other curves): a power law in x between them, flat beyond."""
    lx = np.log(np.maximum(np.asarray(x, dtype=float), 1e-300) / x0)
    return y0 * (y1 / y0) ** np.clip(lx / np.log(x1 / x0), 0.0, 1.0)


def efficiency(priors, name: str, precision: str | None, x):
    """The prior `name` at size x: the precision's measured curve, else the plain curve, else the scalar.

    Returns (value, source): value broadcasts with x where a curve applies, else it is the scalar.
    """
    for key in ((f"{name}.{precision}",) if precision else ()) + (name,):
        c = priors.curves.get(key)
        if c is not None:
            where = f"{priors.file}: " if priors.file else ""
            return curve_value(c, x), f"{where}curve {key} read at the step's size ({c.source or 'no source given'})"
    if hasattr(priors, name):
        return getattr(priors, name), priors.source_of(name)
    key = _nearest_format_curve(priors, name, precision)  # extrapolating: a measured format's table stands in
    if key is None:
        raise KeyError(f"{priors.file or priors.name} has no {name} table")
    return curve_value(priors.curves[key], x), f"{priors.file or priors.name}: curve {key} stands in for {precision} " \
                                               f"(not measured; extrapolated)"


def _nearest_format_curve(priors, name: str, precision: str | None):
    keys = [k for k in priors.curves if k.startswith(name + ".")]
    if not keys:
        return None
    w = PRECISION_BYTES.get(precision or "", 2.0)
    return min(keys, key=lambda k: (abs(np.log2(PRECISION_BYTES.get(k.split(".", 1)[1], 2.0) / w)), k))




@formula("h = min(1, C / ws)^p", unit="")
def cache_hit_share(C, ws, p=1.0):
    """Share of a step's reads served by a cache of C bytes when it streams ws bytes in the same order each step:
    p = 1 when the cache keeps a random C/ws of the stream, larger p for a sharper (LRU-like) cliff; C and p come
    from `tokenmath calibrate`'s two-tier fit to reads of 2 MiB – 1 GiB."""
    return np.minimum(1.0, C / ws) ** p


@formula("W_eff = 1 / (h / W_c + (1 − h) / W)", unit="B/s")
def tiered_bandwidth(h, W_c, W):
    return 1.0 / (h / W_c + (1 - h) / W)


def curve_spread(priors, name: str, precision: str | None, x):
    """The relative measurement spread of the curve `efficiency` reads (0 where none was recorded)."""
    for key in ((f"{name}.{precision}",) if precision else ()) + (name,) + \
            ((_nearest_format_curve(priors, name, precision),) if not hasattr(priors, name) else ()):
        c = priors.curves.get(key)
        if c is not None:
            if not c.spread:
                return 0.0
            lx = np.log(np.maximum(np.asarray(x, dtype=float), 1e-300))
            return np.interp(lx, np.log(np.asarray(c.x, dtype=float)), np.asarray(c.spread, dtype=float))
    return 0.0


def has_curve(priors, name: str, precision: str | None) -> bool:
    return (precision is not None and f"{name}.{precision}" in priors.curves) or name in priors.curves


def check_formats(priors, *precisions: str) -> bool:
    """Refuse a precision a calibrated profile did not measure; True when one is let through (extrapolated)."""
    if priors.formats is None:
        return False
    missing = [p for p in dict.fromkeys(precisions) if p not in priors.formats]
    if not missing:
        return False
    if priors.allow_extrapolation:
        return True
    raise InputError(f"{priors.file or priors.name} measured {', '.join(priors.formats)}, not "
                     f"{', '.join(missing)}: calibrate at that format, pick a measured one with --precision/--kv-dtype, "
                     f"or pass --allow-extrapolation for a wide interval")
