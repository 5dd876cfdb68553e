"""Roofline step time of one model replica spread over G chips, for prefill and decode.

    t_step = max(t_math, t_weights + t_kv) + t_serial + (1 − overlap)·t_comm + t_overhead

- t_math: matmul FLOP at the serving precision's dense peak plus attention FLOP at the BF16 peak,
  over G chips at efficiency eta_flop.
- t_weights: the weights the step touches (for MoE, the expected distinct experts hit by its T
  tokens) over G·W·eta_bw.
- t_kv: decode reads each sequence's KV cache; prefill writes it (at eta_kv of W where a profile
  measured attention-decode streaming separately, else at eta_bw).
- small-M matmuls: where the priors give M_half > 0 (a CPU profile), the step's GEMMs, M = T rows
  each, run at eta_flop · T / (T + M_half) (T = 1 is a GEMV: eta_flop), and decode attention, whose
  products have M = N/K query rows per KV head, at eta_flop · M / (M + M_half); see
  kernels.small_m_efficiency.
- t_comm: tensor-parallel all-reduces (2 per layer, ring: 2·(tp−1)/tp of the message per chip) or
  expert-parallel all-to-all (dispatch + combine per MoE layer, (1 − 1/EP) of each token's k copies
  leave the chip), on the scale-up links inside a domain and the scale-out NICs between domains.
- t_overhead: a fixed per-step cost (launch, sampling, scheduling), plus a fixed cost per GEMM kernel
  (launch, pipeline fill, tail wave) paid by each of the layer's n_gemm matmuls:
      t_overhead = t_fixed + L · n_gemm · t_kernel
- t_serial (prior basis only): matmuls stream weights and attention streams KV in separate kernels that
  run one after the other, so a step cannot hide the KV reads behind the matmul FLOP (nor the weights
  behind attention FLOP): per kernel class, t = max(t_mm, t_weights) + max(t_attn, t_kv), and
      t_serial = max(t_mm, t_weights) + max(t_attn, t_kv) − max(t_math, t_weights + t_kv)  ≥ 0
  is what that costs over the fully overlapped bound (e.g. a large decode batch whose GEMMs are
  compute-bound while its attention is bound by KV reads; public_measurements.csv TRT-002/012).

basis='spec' uses peaks only (eta = 1, no communication or overhead: everything perfectly
overlapped), which bounds the step time from below; basis='prior' applies the catalog's efficiency
priors. Every input may be a NumPy array; results broadcast.

B* (the batch where weight fetch balances weight multiply, Pope's "300 × sparsity"):
    2·B·N_active / F = N_total·b_w / W   ⇒   B* = R·rho,  R = F / (2·W / b_w),  rho = N_total / N_active
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import arch, eager
from .derive import Q, formula, lift, value_of
from .kernels import (cache_hit_share, check_formats, curve_spread, efficiency, has_curve, small_m_efficiency,
                      tiered_bandwidth)
from .load import load_priors
from .records import Model, Priors, System

__all__ = ["Step", "Layout", "step", "default_layout", "drain_time", "hardware_ratio", "optimal_batch", "latency_floor",
           "gemms_per_layer", "BASES", "PHASES"]

BASES = ("spec", "prior")
PHASES = ("prefill", "decode")


@formula("T = B · S_new", unit="tok")
def step_tokens(B, S_new):
    return B * S_new


@formula("FLOP_mm = 2 · N_matmul · T", unit="FLOP")
def matmul_flop(N_matmul, T):
    return 2 * N_matmul * T


@formula("FLOP_attn = T · attn_per_token", unit="FLOP")
def attention_flop(T, attn_per_token):
    return T * attn_per_token


@formula("t_math = (FLOP_mm / F_mm + FLOP_attn / F_attn) / (G · eta_flop)", unit="s")
def math_time(FLOP_mm, F_mm, FLOP_attn, F_attn, G, eta_flop):
    return (FLOP_mm / F_mm + FLOP_attn / F_attn) / (G * eta_flop)


@formula("t_weights = W_touched / (G · W · eta_bw)", unit="s")
def weight_time(W_touched, G, W, eta_bw):
    return W_touched / (G * W * eta_bw)


@formula("t_kv = B · kv_seq / (G · W · eta_bw)", unit="s")
def kv_time(B, kv_seq, G, W, eta_bw):
    return B * kv_seq / (G * W * eta_bw)


@formula("t_tp = L · 2 · (2·(tp − 1)/tp · T·D·b_act / bw_link + lat)", unit="s")
def tp_allreduce_time(L, tp, T, D, b_act, bw_link, lat):
    return L * 2 * (2 * (tp - 1) / tp * T * D * b_act / bw_link + lat)


@formula("t_ep = L_moe · ((T/G)·k·D·(b_disp + b_comb)·(1 − 1/EP)·((1 − f_out)/bw_up + f_out/bw_out) + 2·lat)",
         unit="s")
def ep_alltoall_time(L_moe, T, G, k, D, b_disp, b_comb, EP, f_out, bw_up, bw_out, lat):
    return L_moe * ((T / G) * k * D * (b_disp + b_comb) * (1 - 1 / EP) * ((1 - f_out) / bw_up + f_out / bw_out)
                    + 2 * lat)


@formula("t_overhead = t_fixed + L · n_gemm · t_kernel", unit="s")
def overhead_time(t_fixed, L, n_gemm, t_kernel):
    return t_fixed + L * n_gemm * t_kernel


def gemms_per_layer(m: Model) -> float:
    """Matmul kernels one layer launches, averaged over layers.

    Attention: fused QKV and the output projection (MLA: q down/up, kv down, the absorbed kv up for
    keys and values, output = 6). MLP: fused gate-up and down; an MoE layer adds its router and runs
    the routed experts as two grouped GEMMs, plus two for shared experts.
    """
    attn = 6 if m.mla is not None else 2
    L_moe = arch.n_moe_layers(m)
    moe = 3 + (2 if m.moe is not None and m.moe.n_shared_experts else 0)
    return attn + ((m.n_layers - L_moe) * 2 + L_moe * moe) / m.n_layers


@formula("t_math = FLOP_mm / (F_mm · G · eta_mm) + FLOP_attn / (F_attn · G · eta_attn)", unit="s")
def math_time_small_m(FLOP_mm, F_mm, G, eta_mm, FLOP_attn, F_attn, eta_attn):
    return FLOP_mm / (F_mm * G * eta_mm) + FLOP_attn / (F_attn * G * eta_attn)


@formula("t_attn = FLOP_attn / (F_attn · G · eta_flop)", unit="s")
def attention_math_time(FLOP_attn, F_attn, G, eta_flop):
    return FLOP_attn / (F_attn * G * eta_flop)


@formula("t_serial = max(t_mm, t_weights) + max(t_attn, t_kv) − max(t_math, t_weights + t_kv)", unit="s")
def serial_kernel_time(t_mm, t_weights, t_attn, t_kv, t_math):
    return np.maximum(t_mm, t_weights) + np.maximum(t_attn, t_kv) - np.maximum(t_math, t_weights + t_kv)


@formula("t_step = max(t_math, t_weights + t_kv) + t_serial + (1 − overlap)·t_comm + t_overhead", unit="s")
def step_time(t_math, t_weights, t_kv, t_serial, overlap, t_comm, t_overhead):
    return np.maximum(t_math, t_weights + t_kv) + t_serial + (1 - overlap) * t_comm + t_overhead


@formula("t_drain = capacity / bandwidth", unit="s")
def drain_time(capacity, bandwidth):
    """Time to stream a whole memory once (HBM: the lecture's ~20 ms step; a tier: its hold-time match)."""
    return capacity / bandwidth


@formula("R = F / (2 · W / b_w)", unit="")
def hardware_ratio(F, W, b_w):
    """Multiplies per parameter fetched, at the precision the matmuls run at (ledger §1.2)."""
    return F / (2 * W / b_w)


@formula("B_star = R · rho", unit="seq")
def optimal_batch(R, rho):
    return R * rho


@formula("t_floor = N_total · b_w / (G · W)", unit="s")
def latency_floor(N_total, b_w, G, W):
    return N_total * b_w / (G * W)


@dataclass(frozen=True)
class Layout:
    """How one replica's G chips split the model: tensor-parallel ways and expert-parallel ways."""

    tp: int = 1
    ep: int = 1


def default_layout(m: Model, G: int) -> Layout:
    """MoE: experts spread over all G chips, attention data-parallel (DeepSeek's layout); dense: TP = G."""
    return Layout(tp=1, ep=G) if m.moe is not None else Layout(tp=G, ep=1)


@dataclass
class Step:
    """One forward step: its time terms (s), the tokens it carries, and what bounds it."""

    phase: str
    basis: str
    t_math: object
    t_weights: object
    t_kv: object
    t_comm: object
    t_overhead: object
    t_step: object
    tokens: object
    extras: dict = field(default_factory=dict)

    def v(self, name: str):
        return value_of(getattr(self, name))

    @property
    def bound(self):
        """'compute', 'weights', 'kv', 'comm' or 'overhead': the largest term (array-valued if inputs are)."""
        terms = [self.v("t_math"), self.v("t_weights"), self.v("t_kv"), self.v("t_comm"), self.v("t_overhead")]
        mem = terms[1] + terms[2]
        labels = np.array(["compute", "weights", "kv", "comm", "overhead"])
        mem_label = np.where(terms[1] >= terms[2], 1, 2)
        core = np.where(terms[0] >= mem, 0, mem_label)
        core_t = np.maximum(terms[0], mem)
        pick = np.where(terms[3] > core_t, 3, core)
        pick = np.where((terms[4] > core_t) & (terms[4] > terms[3]), 4, pick)
        out = labels[pick]
        return str(out) if np.ndim(out) == 0 else out


def step(m: Model, system: System, *, G: int, B, S, phase: str = "decode", precision: str | None = None,
         kv_dtype: str | None = None, basis: str = "prior", priors: Priors | None = None,
         layout: Layout | None = None, explain: bool = False) -> Step:
    """Time of one prefill or decode step of B sequences at context S on G chips of `system`.

    Decode: each of the B sequences adds one token and reads its S-token KV cache.
    Prefill: each of the B sequences is a prompt of S tokens, processed in one pass (causal).
    """
    if phase not in PHASES:
        raise ValueError(f"phase must be one of {PHASES}")
    if basis not in BASES:
        raise ValueError(f"basis must be one of {BASES}")
    chip = system.chip
    prec = precision or m.weight_dtype
    b_w = arch.bytes_per(prec)
    pri = priors or load_priors(chip.priors)
    spec = basis == "spec"
    layout = layout or default_layout(m, G)
    src_m = m.file or m.name
    g = lambda sym, v, unit="", src=None: lift(explain, sym, v, unit, src)  # noqa: E731
    p = lambda sym, fld, unit="": g(sym, 1.0 if spec and fld.startswith("eta") else  # noqa: E731
                                    getattr(pri, fld), unit, "spec: peak" if spec and fld.startswith("eta")
                                    else pri.source_of(fld))

    Bq, Gq = g("B", B, "seq", "given"), g("G", G, "chips", "given")
    S_new = g("S_new", S if phase == "prefill" else 1, "tok", f"{phase}: new tokens per sequence")
    T = step_tokens(Bq, S_new)
    pc = arch.param_counts(m, explain)
    attn_pt = g("attn_per_token", arch.attention_flop_per_token(m, S, phase), "FLOP/tok",
                f"{src_m}: QK and AV over the context ({phase})")
    kv = kv_dtype or m.kv_dtype
    extrapolated = False if spec else check_formats(pri, prec, kv)  # a profile answers only for what it measured
    F_mm = g("F_mm", chip.peak(prec), "FLOP/s", chip.source_of(f"peak_flop_per_s.{chip.peak_precision(prec)}"))
    att = kv if pri.formats and kv in chip.peak_flop_per_s else "bf16"  # a profile measured attention at kv
    F_attn = g("F_attn", chip.peak(att), "FLOP/s", chip.source_of(f"peak_flop_per_s.{chip.peak_precision(att)}"))
    W = g("W", chip.hbm_bandwidth_bytes_per_s, "B/s", chip.source_of("hbm_bandwidth_bytes_per_s"))
    eta_flop = p("eta_flop", "eta_flop")
    reads: list = []  # (curve, format, size) read, for the interval

    def c(sym, name, fmt_, x, unit=""):  # a prior read off its measured curve at this step's size, where one exists
        if spec:
            return g(sym, 1.0, unit, "spec: peak")
        v, src = efficiency(pri, name, fmt_, value_of(x))
        if m.moe is not None and name in ("eta_bw", "eta_mm") and has_curve(pri, name, fmt_):
            v, src = _expert_rows_eta(pri, name, fmt_, m, value_of(x), pc, v, src)
        reads.append((name, fmt_, value_of(x)))
        return g(sym, v, unit, src)

    eta_bw = c("eta_bw", "eta_bw", prec, T)  # weight streaming by the GEMMs' rows M = T

    flop_attn = attention_flop(T, attn_pt)
    flop_mm = matmul_flop(pc.matmul, T)
    eta_attn = eta_flop
    if not spec and (f"eta_mm.{prec}" in pri.curves or "eta_mm" in pri.curves):  # GEMM efficiency measured by rows
        eta_mm = c("eta_mm", "eta_mm", prec, T)
        t_math = math_time_small_m(flop_mm, F_mm, Gq, eta_mm, flop_attn, F_attn, eta_attn)
    elif pri.matmul_m_half and not spec:  # tiled GEMMs with few rows run below eta_flop (a CPU profile)
        M_half = p("M_half", "matmul_m_half", "tok")
        eta_mm = small_m_efficiency(eta_flop, T, M_half)  # the weight GEMMs: M = T tokens
        # decode attention multiplies each KV head's cache by its G = N/K query rows (MLA: all N heads)
        M_attn = g("M_attn", (m.n_heads if m.mla else m.n_heads / m.n_kv_heads) * (S if phase == "prefill" else 1),
                   "rows", "query rows per KV head and sequence")
        eta_attn = small_m_efficiency(eta_flop, M_attn, M_half).renamed("eta_attn") if explain else \
            small_m_efficiency(eta_flop, M_attn, M_half)
        t_math = math_time_small_m(flop_mm, F_mm, Gq, eta_mm, flop_attn, F_attn, eta_attn)
    else:
        t_math = math_time(flop_mm, F_mm, flop_attn, F_attn, Gq, eta_flop)
    W_touched = arch.weight_bytes_touched(m, T, g("b_w", b_w, "B", f"{prec} weights"), explain, pc)
    if phase == "decode":
        kv_seq = g("kv_seq", arch.kv_read_bytes(m, S, kv_dtype), "B",
                   f"{src_m}: KV bytes read per sequence at context S (window/top-k capped)")
    else:
        kv_seq = g("kv_seq", arch.kv_stored_bytes(m, S, kv_dtype), "B",
                   f"{src_m}: KV bytes written per prompt of S tokens")
    if chip.llc_bytes and not spec:  # a profile's cache tier: a step whose bytes fit in it reads them faster
        h = cache_hit_share(g("C", chip.llc_bytes, "B", chip.source_of("llc_bytes")),
                            working_set(W_touched, Bq, kv_seq))
        W = tiered_bandwidth(h, g("W_c", chip.llc_bandwidth_bytes_per_s, "B/s",
                                  chip.source_of("llc_bandwidth_bytes_per_s")), W)
    t_weights = weight_time(W_touched, Gq, W, eta_bw)
    has_kv = pri.eta_kv is not None or f"eta_kv.{kv}" in pri.curves or "eta_kv" in pri.curves
    if phase == "decode" and not spec and has_curve(pri, "eta_sdpa", kv):  # attention decode measured by call size
        per_call = value_of(Bq) * value_of(kv_seq) / max(1, m.n_layers)
        G_q = m.n_heads / m.n_kv_heads if m.mla is None else 1.0
        eta_kv = attention_decode_eta(c("eta_sdpa", "eta_sdpa", kv, per_call), c("eta_gqa", "eta_gqa", kv, G_q))
    else:
        eta_kv = c("eta_kv", "eta_kv", kv, S) if has_kv and not spec else eta_bw
    t_kv = kv_time(Bq, kv_seq, Gq, W, eta_kv)

    if spec:
        t_comm = g("t_comm", 0.0 * np.asarray(value_of(T), dtype=float), "s", "spec: communication fully hidden")
        t_over = g("t_overhead", 0.0, "s", "spec: no fixed overhead")
        overlap = g("overlap", 1.0, "", "spec")
    else:
        t_comm = _comm_time(m, system, layout, G, T, prec, pri, explain)
        t_over = p("t_overhead", "step_overhead_s", "s")
        if pri.kernel_overhead_s:
            t_over = overhead_time(p("t_fixed", "step_overhead_s", "s"), g("L", m.n_layers, "", src_m),
                                   g("n_gemm", gemms_per_layer(m), "", "matmul kernels per layer (roofline.gemms_per_layer)"),
                                   p("t_kernel", "kernel_overhead_s", "s"))
        overlap = p("overlap", "comm_overlap")
        if pri.dispatch_s:  # an eager framework: every op of the layer, counted (core.eager)
            t_over = _eager_overhead(m, chip, pri, prec, T, p, g, c, explain)
    extras = {"W_touched": W_touched, "layout": layout, "precision": prec}
    if spec:
        t_serial = g("t_serial", 0.0, "s", "spec: matmul and attention kernels fully overlapped")
    else:
        t_attn = attention_math_time(flop_attn, F_attn, Gq, eta_attn)
        t_mm = value_of(t_math) - value_of(t_attn)
        t_mm = Q("t_mm", t_mm, "s", source="t_math − t_attn (the matmul kernels' FLOP time)") if explain else t_mm
        t_serial = serial_kernel_time(t_mm, t_weights, t_attn, t_kv, t_math)
        extras.update(t_attn=t_attn, t_mm=t_mm)
    extras["t_serial"] = t_serial
    t = step_time(t_math, t_weights, t_kv, t_serial, overlap, t_comm, t_over)
    if pri.dispatch_s and not spec:  # the host's dispatch of every op: added on a CPU, overlapped on a GPU
        ops = eager.eager_ops(m, value_of(T), _act_dtype(prec))
        t_host = eager.host_time(g("n_ops", ops.n_host, "", "eager ops per step (core.eager)"),
                                 p("t_dispatch", "dispatch_s", "s"),
                                 g("n_route", ops.n_host_route, "", "MoE routing calls per step (core.eager)"),
                                 p("t_dispatch_route", "route_dispatch_s" if pri.route_dispatch_s else "dispatch_s", "s"),
                                 g("n_expert", ops.n_host_expert, "", "calls per expert hit, per step (core.eager)"),
                                 p("t_dispatch_expert", "expert_dispatch_s" if pri.expert_dispatch_s else "dispatch_s",
                                   "s"))
        t = eager.eager_step_time(t, eager.host_visible_time(t_host, t, p("o_host", "host_overlap")))
        extras["t_host"] = t_host
    if pri.formats is not None and not spec:
        extras["interval"] = _interval(value_of(t), pri, reads, extrapolated)
    return Step(phase, basis, t_math, t_weights, t_kv, t_comm, t_over, t, T, extras=extras)


def _act_dtype(prec: str) -> str:
    return prec if prec in ("fp32", "bf16", "fp16") else "bf16"


@formula("ws = W_touched + B · kv_seq", unit="B")
def working_set(W_touched, B, kv_seq):
    return W_touched + B * kv_seq


@formula("eta_kv = eta_sdpa · eta_gqa", unit="")
def attention_decode_eta(eta_sdpa, eta_gqa):
    """Attention decode on a profile: KV streaming at the call's size (G = 1) times the grouped-heads slowdown."""
    return eta_sdpa * eta_gqa


def _expert_rows_eta(pri, name, fmt_, m, T, pc, v_T, src):
    """A GEMM curve read for an MoE step: dense weights at M = T rows, each expert hit at its own T·k/E_hit
    rows, combined by the experts' share of the bytes (eta_bw) or FLOP (eta_mm): times add, so harmonically."""
    rows, hit = eager.expert_rows(m, T)
    v_e, _ = efficiency(pri, name, fmt_, rows)
    L_moe = arch.n_moe_layers(m)
    if name == "eta_bw":
        expert = L_moe * hit * value_of(pc.expert)
        total = np.asarray(value_of(pc.total), dtype=float) - L_moe * (m.moe.n_routed_experts - hit) * value_of(pc.expert)
    else:
        expert = L_moe * m.moe.experts_per_token * value_of(pc.expert)
        total = np.asarray(value_of(pc.matmul), dtype=float)
    share = np.clip(expert / total, 0.0, 1.0)
    return 1.0 / ((1 - share) / v_T + share / v_e), f"{src}; expert GEMMs read at their own rows T·k/E_hit"


def _eager_overhead(m, chip, pri, prec, T, p, g, c, explain):
    """Device time of what an eager step runs besides GEMM streaming and attention: a fixed cost per GEMM call,
    the elementwise/norm/activation kernels and the MoE routing ops, each by its bytes (core.eager)."""
    act = _act_dtype(prec)
    ops = eager.eager_ops(m, value_of(T), act)
    W_c = g("W_c", chip.llc_bandwidth_bytes_per_s or chip.hbm_bandwidth_bytes_per_s, "B/s",
            chip.source_of("llc_bandwidth_bytes_per_s" if chip.llc_bandwidth_bytes_per_s else "hbm_bandwidth_bytes_per_s"))

    def kernels_time(sym, entries, curve):
        if not entries:
            return g(sym, 0.0 * np.asarray(value_of(T), dtype=float), "s", "no such kernels in this model")
        n = [np.asarray(e[0], dtype=float) for e in entries]
        by = [np.asarray(e[1], dtype=float) for e in entries]
        eta = [efficiency(pri, curve, act, x)[0] for x in by]
        c(curve, curve, act, by[0])  # recorded for the interval (the spread of the curve it reads)
        return g(sym, value_of(eager.elementwise_time(n, by, value_of(W_c), eta)), "s",
                 f"Σ n_op · bytes_op / (W_c · {curve}(bytes_op)) over {len(entries)} kernel kinds (core.eager), "
                 f"W_c = {value_of(W_c):.4g} B/s; {efficiency(pri, curve, act, by[0])[1]}")

    t_elt = kernels_time("t_elt", ops.elt, "eta_elt")
    t_route = kernels_time("t_route", ops.route, "eta_route")
    n_gemm = g("n_gemm", ops.n_gemm, "", "GEMM calls at T rows per eager step (core.eager.gemms_per_step)")
    n_gemm_e = g("n_gemm_e", ops.n_gemm_expert, "", "expert GEMM calls per eager step (core.eager.gemms_per_step)")
    if has_curve(pri, "t_kernel", prec):
        t_k = c("t_kernel", "t_kernel", prec, T, "s")
        t_ke = c("t_kernel_e", "t_kernel", prec, eager.expert_rows(m, value_of(T))[0], "s") if m.moe else t_k
    else:
        t_k = t_ke = p("t_kernel", "kernel_overhead_s", "s")
    return eager.eager_overhead_time(p("t_fixed", "step_overhead_s", "s"), n_gemm, t_k, n_gemm_e, t_ke, t_elt, t_route)


def _interval(t, pri, reads, extrapolated: bool):
    """(low, high) step time: ± the largest measurement spread of the curves read; ÷/× 2 beyond measured formats."""
    s = 0.0
    for name, fmt_, x in reads:
        s = np.maximum(s, curve_spread(pri, name, fmt_, x))
    s = np.minimum(s, 0.9)
    if extrapolated:
        return t / 2 * (1 - s), t * 2 * (1 + s)
    return t * (1 - s), t * (1 + s)


def _comm_time(m: Model, system: System, layout: Layout, G: int, T, prec: str, pri: Priors, explain: bool):
    """Collective time per step for the layout, on the tier each collective crosses."""
    g = lambda sym, v, unit="", src=None: lift(explain, sym, v, unit, src)  # noqa: E731
    dom = system.domain_chips
    crosses = G > dom
    up = system.scaleup_bw * pri.eta_scaleup
    out = (system.scaleout_bw or system.scaleup_bw) * pri.eta_scaleout
    if crosses and system.scaleout_bw == 0:
        raise ValueError(f"{system.name} has no scale-out bandwidth in the catalog; use at most {dom} chips")
    lat = pri.scaleout_latency_s if crosses else pri.scaleup_latency_s
    lat_src = pri.source_of("scaleout_latency_s" if crosses else "scaleup_latency_s")
    src_sys = f"{system.file}: scale-{'out' if crosses else 'up'} link × eta ({pri.file})"
    total = 0.0 * np.asarray(value_of(T), dtype=float)
    parts = []
    if layout.tp > 1:
        bw = out if layout.tp > dom else up
        parts.append(tp_allreduce_time(g("L", m.n_layers), g("tp", layout.tp), T, g("D", m.d_model),
                                       g("b_act", 2.0, "B", "bf16 activations"),
                                       g("bw_link", bw, "B/s", src_sys), g("lat", lat, "s", lat_src)))
    if layout.ep > 1 and m.moe is not None:
        f_out = max(0.0, 1.0 - dom / layout.ep) if layout.ep > dom else 0.0
        b_disp = 1.0 if prec in ("fp8", "fp4", "int8", "int4") else 2.0
        parts.append(ep_alltoall_time(
            g("L_moe", arch.n_moe_layers(m)), T, g("G", G, "chips"), g("k", m.moe.experts_per_token),
            g("D", m.d_model), g("b_disp", b_disp, "B", "dispatch in FP8 when weights are ≤ 8 bit (DeepEP)"),
            g("b_comb", 2.0, "B", "combine in BF16 (DeepEP)"), g("EP", layout.ep),
            g("f_out", f_out, "", "share of destinations outside the scale-up domain = 1 − domain/EP"),
            g("bw_up", up, "B/s", f"{system.file}: scale-up × eta_scaleup"),
            g("bw_out", out, "B/s", f"{system.file}: scale-out × eta_scaleout"), g("lat", lat, "s", lat_src)))
    if not parts:
        return g("t_comm", total, "s", "one chip or no split: no collectives")
    if len(parts) == 1:
        return parts[0].renamed("t_comm") if isinstance(parts[0], Q) else parts[0]
    s = sum(value_of(x) for x in parts)
    if explain:
        return Q("t_comm", s, "s", "t_comm = t_tp + t_ep", {"t_tp": parts[0], "t_ep": parts[1]})
    return s
