"""Roofline step time of one model replica spread over G chips, for prefill and decode.

    t_step = max(t_math, t_weights + t_kv) + t_serial + (1 − overlap)·t_comm + t_overhead

- t_math: matmul FLOP at the serving precision's dense peak plus attention FLOP at the BF16 peak,
  over G chips at efficiency eta_flop. The LM head (V·D) multiplies only the rows whose logits the step
  samples: every token of a decode step, but one row per prompt in a prefill (engines gather each
  prompt's last hidden state before the head), FLOP_mm = 2·(N_matmul − V·D)·T + 2·V·D·R_head; on the
  prior basis it runs in the embeddings' format (BF16 in FP8 releases).
- t_weights: the weights the step touches (for MoE, the expected distinct experts hit by its T
  tokens) over G·W·eta_bw.
- t_kv: decode reads each sequence's KV cache; prefill writes it (at eta_kv of W where a profile
  measured attention-decode streaming separately, else at eta_bw).
- small-M matmuls: where the priors give M_half > 0 (a CPU profile), the step's GEMMs, M = T rows
  each, run at eta_flop · T / (T + M_half) (T = 1 is a GEMV: eta_flop), and decode attention, whose
  products have M = N/K query rows per KV head, at eta_flop · M / (M + M_half); see
  kernels.small_m_efficiency.
- prefill attention on measured kernels: the context kernel's law (kernel_tables._prefill_attention; MLA's from
  its own tables), each layer's kernel on a chip paying
      t = t0 + n_seq · t_seq + n_q · t_q + n_kv · t_kv + FLOP_k / (F · eta_ctx)
  for its (sequence, query head) pairs, (token, query head) and (token, KV head) rows, read as the rate FLOP_k / (F·t)
  (kernels.context_attention_eta); without the law, a rate by the kernel's FLOP (eta_attn_prefill).
- t_comm: tensor-parallel all-reduces (2 per layer, ring: 2·(tp−1)/tp of the message per chip) and
  expert-parallel all-to-all (dispatch + combine per MoE layer; the share f_remote of each token's k
  copies that goes to a chip not already holding the token: 1 − 1/EP idealised, 1 − tp/G on the
  critical path — with attention TP over all G chips every chip holds every token, and the experts'
  combine is the all-reduce already counted), on the scale-up links inside a domain and the scale-out
  NICs between domains. Each collective is priced on the tier its own group spans: a TP group inside a
  domain stays on the scale-up link though the experts cross nodes. A TP group over domains of g of its chips
  runs NCCL's rings over the domain's g NICs at once, bw = min(bw_up, g · bw_out) (kernels.ring_bus_bandwidth,
  as a nccl-tests row across nodes is read); a collective that leaves the domain costs at least the fixed
  cost of one inside it.
- t_overhead: a fixed per-step cost (launch, sampling, scheduling), plus a fixed cost per GEMM kernel
  (launch, pipeline fill, tail wave) paid by each of the layer's n_gemm matmuls, and a small kernel's
  fixed cost for each of its n_aux other kernels (norms, activation, RoPE, MoE routing and permutes):
      t_overhead = t_fixed + L · (n_gemm · t_kernel + n_aux · t_aux)
  then the streaming of the elementwise kernels (t_elt) and of the step's sampled logits (t_logits: R_head rows of
  V logits cast to fp32 and read by the sampler, logits_pass_bytes); a TP group also gathers those logits over its
  link (t_gather, in t_comm).
- t_serial (prior basis only): matmuls stream weights and attention streams KV in separate kernels that
  run one after the other, so a step cannot hide the KV reads behind the matmul FLOP (nor the weights
  behind attention FLOP): per kernel class, t = max(t_mm, t_weights) + max(t_attn, t_kv), and
      t_serial = max(t_mm, t_weights) + max(t_attn, t_kv) − max(t_math, t_weights + t_kv)  ≥ 0
  is what that costs over the fully overlapped bound (e.g. a large decode batch whose GEMMs are
  compute-bound while its attention is bound by KV reads; public_measurements.csv TRT-002/012).

Two ways to spread the work over the G chips:

- idealised (the lecture's bound; basis='spec' by default): every FLOP and every byte split evenly,
  t = FLOP / (G·F), t = bytes / (G·W).
- layout-aware critical path (basis='prior' by default): the step waits for the busiest chip
  (core/critical_path.py: attention and dense weights split tp ways and replicated over dp groups, routed
  experts split ep ways, the busiest expert rank under uniform routing).

basis='spec' uses peaks only (eta = 1, no communication or overhead: everything perfectly
overlapped), which bounds the step time from below; basis='prior' applies the catalog's efficiency
priors. Every input may be a NumPy array; results broadcast.

B* (the batch where weight fetch balances weight multiply, Pope's "300 × sparsity"):
    2·B·N_active / F = N_total·b_w / W   ⇒   B* = R·rho,  R = F / (2·W / b_w),  rho = N_total / N_active
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from . import arch, eager
from .critical_path import (
    attention_flop_chip,
    attention_time_chip,
    blom_z,
    busiest_rank_experts,
    busiest_rank_load,
    body_flop_chip,
    dense_bytes_chip,
    dense_head_gemm_time,
    dense_matmul_params,
    dense_weight_time,
    dp_batch,
    dp_tokens,
    dp_tokens_pieces,
    elementwise_time_chip,
    logits_time_chip,
    expert_bytes_chip,
    expert_flop_chip,
    expert_gemm_time,
    expert_op_math_time,
    expert_op_stream_time,
    expert_rows,
    expert_weight_time,
    head_flop_chip,
    kv_time_chip,
    math_time_chip,
    serial_kernel_time_chip,
    serial_kernel_time_moe_op,
    weight_time_chip,
)
from .derive import Q, formula, lift, value_of
from .errors import InputError
from .kernels import (
    between_sizes,
    cache_hit_share,
    check_formats,
    curve_spread,
    context_attention_eta,
    decode_attention_eta,
    efficiency,
    hybrid_context_eta,
    hybrid_decode_eta,
    has_curve,
    ring_bus_bandwidth,
    small_m_efficiency,
    sparse_decode_eta,
    tiered_bandwidth,
)
from .load import load_priors
from .records import Model, Priors, System
from .units import COMPUTE_FORMAT

__all__ = [
    "Step", "Layout", "step", "default_layout", "drain_time", "hardware_ratio", "optimal_batch", "latency_floor",
    "gemms_per_layer", "aux_kernels_per_layer", "elementwise_bytes_per_token", "kernel_format", "moe_format", "MOE_PEAK",
    "CAST_FORMATS",
    "blom_z", "busiest_rank_load", "busiest_rank_experts", "BASES", "PHASES"
]

BASES = ("spec", "prior")
GATED_DELTA = ("gated_deltanet", "kda")  # linear attention whose decode kernels the GDN tables time (a delta-rule state)
PHASES = ("prefill", "decode")


@formula("T = B · S_new", unit="tok")
def step_tokens(B, S_new):
    return B * S_new


@formula("FLOP_mm = 2 · (N_matmul − N_head) · T + 2 · N_head · R_head", unit="FLOP")
def matmul_flop(N_matmul, N_head, T, R_head):
    """Every token through every matmul but the LM head, which multiplies only the R_head rows whose logits the
    step samples (critical_path.head_flop_chip)."""
    return 2 * (N_matmul - N_head) * T + 2 * N_head * R_head


def head_rows(g, phase: str, B, T, sampled=None, share=1.0):
    """R_head: the rows the LM head multiplies — a decode step's every token, a prefill's last position of each
    prompt, or the `sampled` rows a caller states (a mixed step: its decodes and one per prompt piece), of which a
    data-parallel group carries its `share` (B_dp / B)."""
    if sampled is not None:
        return g("R_head", np.asarray(sampled, dtype=float) * share, "rows", "the step's sampled rows: its decode tokens and one per prompt piece")
    if phase == "prefill":
        return g("R_head", B, "rows", "prefill: each prompt's last position (logits of the prompt's other "
                                     "tokens are not computed)")
    return g("R_head", T, "rows", "decode: every token of the step samples a next token")


def head_params(g, m: Model):
    return g("N_head", m.vocab_size * m.d_model, "params", f"{m.file or m.name}: LM head V·D")


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


@formula("t_gather = (tp − 1)/tp · R_head · V · b_h / bw_link + lat", unit="s")
def logits_gather_time(tp, R_head, V, b_h, bw_link, lat):
    """The all-gather of each sampled row's V/tp logit slices to every rank of the tensor-parallel group (SGLang's
    logits processor, roofline.logits_pass_bytes): each chip receives the other (tp − 1)/tp of the row."""
    return (tp - 1) / tp * R_head * V * b_h / bw_link + lat


@formula("g_node = (n − 1) · (1 − (1 − 1/n)^k) / (k · f_out)", unit="")
def node_dedup(n, k, f_out):
    """Scale-out copies of a token per copy counted: DeepEP sends a token once to each other node one of its k
    experts sits on and forwards it over NVLink there (DeepEP README: intranode NVLink, internode RDMA), so the
    RDMA bytes are the distinct remote nodes, (n − 1)·(1 − (1 − 1/n)^k) under uniform routing over n nodes,
    not the k·f_out copies bound for them (2 nodes, k = 8: 1.0 copy for 4)."""
    return np.minimum(1.0, (n - 1) * (1 - (1 - 1 / n) ** k) / np.maximum(k * f_out, 1e-12))


@formula("t_ep = L_moe · (T_chip·k·D·(b_disp + b_comb)·f_remote·((1 − f_out)/bw_up + g_node·f_out/bw_out) + 2·lat)",
         unit="s")
def ep_alltoall_time(L_moe, T_chip, k, D, b_disp, b_comb, f_remote, f_out, bw_up, bw_out, lat, g_node=1.0):
    """Dispatch and combine of the routed experts' tokens. f_remote is the share of a token's k expert copies
    whose destination does not already hold the token: 1 − 1/EP when every chip holds its own tokens (the
    idealised split); on the critical path 1 − tp/G, since attention's tensor-parallel group replicates each
    token over its tp chips (attention TP = G: no all-to-all at all, the experts read the replicated tokens
    and the combine is the all-reduce t_tp already counts). g_node: the copies leaving the domain, one per
    remote node (`node_dedup`)."""
    f = np.asarray(f_remote, dtype=float)
    t = L_moe * (T_chip * k * D * (b_disp + b_comb) * f * ((1 - f_out) / bw_up + g_node * f_out / bw_out)
                 + 2 * lat)
    return np.where(f > 0, t, 0.0) if np.ndim(t) or np.ndim(f) else (t if f > 0 else 0.0 * t)


@formula("t_overhead = t_fixed + L · (n_gemm · t_kernel + n_aux · t_aux)", unit="s")
def overhead_time(t_fixed, L, n_gemm, t_kernel, n_aux, t_aux):
    return t_fixed + L * (n_gemm * t_kernel + n_aux * t_aux)


@formula("t_overhead = t_fixed + L · (n_gemm · t_kernel + n_aux · t_aux) + L_moe · t_moe", unit="s")
def overhead_time_moe(t_fixed, L, n_gemm, t_kernel, n_aux, t_aux, L_moe, t_moe):
    """`overhead_time` where the routed experts run as one fused MoE op: its measured fixed cost t_moe per MoE
    layer stands for the two grouped expert GEMMs and the top-k, permute and un-permute kernels (n_gemm and
    n_aux then count the rest: fused_moe=True)."""
    return t_fixed + L * (n_gemm * t_kernel + n_aux * t_aux) + L_moe * t_moe


def aux_kernels_per_layer(m: Model, fused_moe: bool = False) -> float:
    """Kernels a layer launches besides its matmuls and attention, averaged over layers: the two RMSNorms
    (residual add fused) and the gated activation; RoPE for rotary attention (MLA: the two latent norms
    too); an MoE layer's routing (top-k), token permute and un-permute. Each costs a small kernel's fixed
    time whatever its bytes (decode moves kilobytes)."""
    base = 3 + (2 if m.mla is not None else 1)
    L_moe = arch.n_moe_layers(m)
    return base + (0 if fused_moe else 3) * L_moe / m.n_layers


@formula("t_overhead = t_kernels + t_elt + t_logits", unit="s")
def overhead_with_elementwise(t_kernels, t_elt, t_logits):
    """The step's fixed costs, its elementwise kernels' streaming time (elementwise_bytes_per_token) and the
    passes over its sampled logits (logits_pass_bytes)."""
    return t_kernels + t_elt + t_logits


# What an engine does with the LM head's logits before the next token is known, read from SGLang 0.5.6.post2
# (PyPI wheel): srt/layers/logits_processor.py _get_logits multiplies the hidden states by the vocabulary-parallel
# head in its weights' format (BF16), all-gathers the V/tp slices over the tensor-parallel group
# (distributed/parallel_state.py all_gather: all_gather_into_tensor, then movedim and reshape, a copy), and casts
# them to fp32 (`logits[:, :vocab_size].float()`); srt/layers/sampler.py then takes torch.argmax over them when every
# request is greedy, as sglang.bench_serving's requests are (temperature 0.0). A sampled (non-greedy) request adds
# passes (temperature, softmax, top-p); not counted. vLLM and TensorRT-LLM are taken to do the same (estimate).
LOGIT_BYTES = 2.0  # BF16 logits out of the head


def logits_pass_bytes(tp) -> np.ndarray:
    """Bytes streamed per logit of a sampled row on each chip: the gather's reorder copy (read and write, tp > 1),
    the cast to fp32 (read b_h, write 4) and argmax's read of the fp32 row (4)."""
    reorder = np.where(np.asarray(tp, dtype=float) > 1, 2 * LOGIT_BYTES, 0.0)
    return reorder + LOGIT_BYTES + 4.0 + 4.0


# GEMM kernel formats whose activations a served model casts before the GEMM, and the format cast to. The kernel
# tables time each such op on BF16 input with a dynamic cast inside (kernel_tables._cast_cost reads it apart); a
# served ModelOpt FP8 checkpoint casts at its static input scale (vLLM's static_scaled_fp8_quant, the tables'
# scale_matrix op), NVFP4 per 16-element block, each a streaming kernel. Block-scaled FP8 casts per token group
# inside the GEMM op its curves time, and keeps that cast there.
CAST_FORMATS = {"fp8": "fp8", "fp4": "nvfp4"}


def elementwise_bytes_per_token(m: Model, tp, kf: str, b_act: float):
    """Bytes a layer's elementwise kernels read and write per token on one chip, averaged over layers.

    Laid out as NVIDIA's estimator composes a layer (aiconfigurator-core sdk/models/llama.py: `add_norm` ops of
    2·D in and 2·D out, `act_gate` of 2·F/tp in and F/tp out) and as the engines fuse them:
    - two residual-add RMSNorms, each reading the residual stream and the sublayer's output and writing both:
      2 · 4·D·b_act;
    - where the GEMMs run a cast format (CAST_FORMATS), the QKV and gate-up GEMMs' inputs cast from the norms'
      output, reading b_act and writing b_in an element: 2 · D·(b_act + b_in) (the estimator's QKV and gate-up
      GEMMs pay their quantisation; the projections after attention and after the activation take
      `low_precision_input`: those kernels write the cast format themselves);
    - the MLP's activation, reading its gate and up projections and writing their product in the down
      projection's input format: F/tp·((n_mlp − 1)·b_act + b_in) in dense-MLP layers and over an MoE layer's
      shared experts (the routed experts' activation is inside the fused MoE op's measured time);
    - RoPE, read and written in place on each chip's query and key heads: 2·(N_c + K_c)·H·b_act on attention
      layers (MLA: its rope dimensions, and its two latent RMSNorms, 2·(q_lora + kv_lora)·b_act).
    A decode step of a few sequences moves kilobytes (the kernels' fixed cost, aux_kernels_per_layer, is what
    counts there); a prefill, or a decode of thousands of sequences, moves gigabytes: 65,536 prompt tokens of
    Llama-3.1-8B in BF16, 11 GB a layer."""
    L, L_moe, D = m.n_layers, arch.n_moe_layers(m), m.d_model
    tp = np.asarray(tp, dtype=float)
    b_in = arch.bytes_per(CAST_FORMATS[kf]) if kf in CAST_FORMATS else b_act
    sh = m.moe.n_shared_experts * (m.moe.d_ff_shared_expert or m.moe.d_ff_expert) if m.moe is not None else 0
    F_avg = ((L - L_moe) * m.d_ff + L_moe * sh) / L
    norms = 2 * 4 * D * b_act + (2 * D * (b_act + b_in) if kf in CAST_FORMATS else 0.0)
    act = F_avg / tp * ((m.mlp_matrices - 1) * b_act + b_in)
    N_c = m.n_heads * np.maximum(1.0 / tp, 1.0 / m.n_heads)
    if m.mla is not None:
        a = m.mla
        rope = 2 * (N_c + 1) * a.qk_rope_head_dim * b_act + 2 * ((a.q_lora_rank or 0) + a.kv_lora_rank) * b_act
    else:
        K = m.n_kv_heads or m.n_heads
        rope = 2 * (N_c + K * np.maximum(1.0 / tp, 1.0 / K)) * m.head_dim * b_act
    return norms + act + rope * arch.attention_layers(m) / L


def kernel_format(m: Model, prec: str, pri: Priors, chip=None) -> str:
    """The format whose measured GEMM curves a step's matmuls read: block-scaled FP8 ('fp8_block') for a
    model whose FP8 checkpoint scales weights per block (Model.fp8_block_size: DeepSeek-V3, Kimi K2, the
    Qwen3 FP8 releases) or when asked for, where the priors measured it apart; a storage format's compute
    format (NVFP4 and MXFP4: fp4; weight-only INT8: bf16, the GEMM it is dequantised into; W8A8 and GGUF: int8);
    a format the chip has no tensor cores for, the format it is multiplied at (`Chip.peak_precision`: FP4 on Hopper
    at FP8, FP8 on Ampere and W8A8 on a chip without an INT8 peak at 16 bits) where the priors measured that one,
    as that model runs it — its weights are dequantised inside that format's GEMM, which they cannot outrun (before
    2026-11-29 FP4 on an H100 ran at eta_flop, above the FP8 GEMM's measured rate: a prefill 31 % faster than
    FP8's); else the precision itself."""
    c = prec if prec == "fp8_block" else COMPUTE_FORMAT.get(prec, prec)
    # (the storage name goes to peak_precision: COMPUTE_FORMAT maps once, and its 'int8' is a peak, not weight-only)
    wide = chip.peak_precision(prec) if chip is not None and c in ("fp4", "fp8", "int8") else c
    prec = c
    if wide != prec and any(k.split("@")[0] == f"eta_mm.{wide}" for k in pri.curves):
        return kernel_format(m, wide, pri)  # (a model whose FP8 is block-scaled: its block-scaled kernels)
    if prec == "fp8_block" or (prec == "fp8" and m.fp8_block_size):
        return "fp8_block" if any(k.split("@")[0] in ("eta_mm.fp8_block", "eta_bw.fp8_block") for k in pri.curves) \
            else "fp8"
    return prec


# the peak a fused MoE op's rates are a fraction of, where it is not its format's own: MXFP4 experts multiply MXFP8
# activations (Blackwell's kind::mxf8f6f4 MMA, at the FP8 rate) or BF16 ones (Hopper, which has no FP4 tensor
# cores; vLLM's default on Blackwell) — never at the FP4 peak. One reference (FP8) for both; the curves say how far
# each engine's kernel is from it (measure/kernel_tables.py derives them against the same peak)
MOE_PEAK = {"mxfp4": "fp8", "int4": "bf16"}  # (weight-only INT4 experts multiply BF16 activations)


def moe_format(fe: str, kf_e: str, pri: Priors) -> str:
    """The format whose fused-MoE curves and fixed cost the routed experts read: MXFP4 experts (gpt-oss,
    DeepSeek-V4) their own ('mxfp4': the tables' `w4a8_mxfp4_mxfp8` / `w4a16_mxfp4` kernels, the one each engine
    runs), where the priors measured it; else the GEMM kernel format `kf_e` (before 2026-11-24 round 6 MXFP4
    experts read the NVFP4 table at the FP4 peak, a kernel no engine runs for them)."""
    if fe == "mxfp4" and ("moe_eta_bw.mxfp4" in pri.curves or "mxfp4" in pri.moe_overhead_fmt):
        return "mxfp4"
    return kf_e


def gemms_per_layer(m: Model, fused_moe: bool = False) -> float:
    """Matmul kernels one layer launches, averaged over layers.

    Attention: fused QKV and the output projection (MLA: q down/up, kv down, the absorbed kv up for
    keys and values, output = 6). MLP: fused gate-up and down; an MoE layer adds its router and runs
    the routed experts as two grouped GEMMs (fused_moe: counted in the MoE op instead), plus two for shared
    experts.
    """
    attn = 6 if m.mla is not None else 2
    L_moe = arch.n_moe_layers(m)
    moe = (1 if fused_moe else 3) + (2 if m.moe is not None and m.moe.n_shared_experts else 0)
    return attn + ((m.n_layers - L_moe) * 2 + L_moe * moe) / m.n_layers


@formula("t_math = FLOP_mm / (F_mm · G · eta_mm) + FLOP_attn / (F_attn · G · eta_attn)", unit="s")
def math_time_small_m(FLOP_mm, F_mm, G, eta_mm, FLOP_attn, F_attn, eta_attn):
    return FLOP_mm / (F_mm * G * eta_mm) + FLOP_attn / (F_attn * G * eta_attn)


@formula("t_attn = FLOP_attn / (F_attn · G · eta_flop)", unit="s")
def attention_math_time(FLOP_attn, F_attn, G, eta_flop):
    return FLOP_attn / (F_attn * G * eta_flop)


@formula("t_serial = max(t_mm, t_weights) + max(t_attn, t_kv) − max(t_math, t_weights + t_kv)", unit="s")
def serial_kernel_time(t_mm, t_weights, t_attn, t_kv, t_math):
    # ≥ 0 exactly; t_mm = t_math − t_attn can round it to −1e-16, which is clamped
    return np.maximum(np.maximum(t_mm, t_weights) + np.maximum(t_attn, t_kv) - np.maximum(t_math, t_weights + t_kv),
                      0.0)


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
    """How one replica's G chips split the model.

    tp: tensor-parallel ways of attention and every non-expert weight; those weights are replicated over
        dp = G / tp attention data-parallel groups (tp = 1 on G chips: DeepSeek's data-parallel attention).
    ep: expert-parallel ways of the routed experts; each expert is split moe_tp = G / ep ways.
    imbalance: the busiest expert-parallel rank's load over what uniform routing gives it (None: the
        priors' ep_imbalance).
    adaptive: with fewer sequences than data-parallel groups, spread each over the idle chips (tp_eff), where
        that is faster than leaving them idle (step takes the faster of the two).
    pp: pipeline stages, each holding 1/pp of the layers on its own G chips. The G chips here are one of the
        pp micro-batch streams a full pipeline keeps in flight, read by replica equivalence: pp stage steps of
        L/pp layers at B sequences read the weights and KV one step of L layers at B does on G chips, so a
        token's time through the pipeline is this step's plus its (pp − 1) point-to-point hops of the stage's
        activations (`pipeline_hop_time`, in t_comm), and only the memory differs — each chip holds 1/pp of the weights
        (serving.engine_memory.held_weight_bytes); the KV per chip is the same.
    """

    tp: int = 1
    ep: int = 1
    imbalance: float | None = None
    adaptive: bool = False
    pp: int = 1

    def tp_eff(self, G: int, B):
        """Tensor-parallel ways at batch B: tp, or with `adaptive` and fewer sequences than the dp groups,
        tp · floor(dp / max(B, 1)) — the groups that have a sequence absorb the idle chips, and the busiest
        chip is in the smallest group (an engine that can re-shard chooses so; a fixed data-parallel
        deployment leaves them idle: adaptive=False)."""
        dp = self.dp(G)
        if not self.adaptive or dp <= 1:
            return self.tp
        return self.tp * np.floor(dp / np.clip(np.asarray(B, dtype=float), 1.0, dp))

    def dp(self, G: int) -> float:
        """Attention data-parallel groups: the non-expert weights' replicas."""
        return max(1.0, G / self.tp)

    def moe_tp(self, G: int) -> float:
        """Ways each routed expert is split."""
        return max(1.0, G / self.ep)

    def words(self, G: int) -> str:
        """The split of a stage's G chips as tables write it: 'TP1 attention-DP8 EP8', 'TP4 PP2'; groups that share no
        experts are whole replicas, 'TP4 DP2'."""
        dp = int(self.dp(G))
        groups = (f" attention-DP{dp}" if self.ep > 1 else f" DP{dp}") if dp > 1 else ""
        return (f"TP{self.tp}" + groups + (f" EP{self.ep}" if self.ep > 1 else "")
                + (f" PP{self.pp}" if self.pp > 1 else ""))


def default_layout(m: Model, G: int) -> Layout:
    """Dense: TP = G. MoE: experts spread over all G chips and attention data-parallel over them (DeepSeek's
    layout), adaptive: with fewer sequences than groups the idle chips join the busy groups as tensor
    parallelism, so a lone prompt is not left on one chip (see Layout.adaptive)."""
    return Layout(tp=1, ep=G, adaptive=True) if m.moe is not None else Layout(tp=G, ep=1)


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
         layout: Layout | None = None, ideal: bool | None = None, explain: bool = False, S_new=None,
         sampled=None, S_attn=None, T_piece=None) -> Step:
    """Time of one prefill or decode step of B sequences at context S on G chips of `system`.

    Decode: each of the B sequences adds S_new tokens (default one; K + 1 when verifying K draft
    tokens, or a prompt chunk) and reads its S-token KV cache.
    Prefill: each of the B sequences is a prompt of S tokens, processed in one pass (causal).
    sampled: the rows whose logits the step computes (the LM head's rows; default every token in decode,
    each prompt's last position in prefill) — a mixed step's decodes plus one per prompt piece.
    S_attn: the context the step's new tokens attend over, weighted by tokens (default S): a mixed step's decodes at
    their contexts and each prompt piece of c tokens after `done` at done + c/2, whose attention FLOP the mean
    context S of all its sequences would overcount (64 decodes at 3k beside a 2k-token chunk: 2.8×).
    T_piece: under attention data parallelism, the new tokens of the group holding a mixed step's largest prompt piece
    (critical_path.piece_group_tokens); the busiest group carries at least these, not an even share of the step.
    ideal: True spreads every FLOP and byte evenly over the G chips (the lecture's idealised bound);
    False follows the layout to its busiest chip (module docstring). Default: ideal for basis 'spec',
    the layout's critical path for 'prior'.
    An adaptive layout with fewer sequences than data-parallel groups is priced both ways — idle chips
    joined to the busy groups as tensor parallelism, and left idle — and the faster is the step (what a
    re-sharding engine would choose; it also keeps the step time non-decreasing in B).
    """
    layout = layout or default_layout(m, G)
    kw = dict(G=G, B=B, S=S, phase=phase, precision=precision, kv_dtype=kv_dtype, basis=basis, priors=priors,
              ideal=ideal, explain=explain, S_new=S_new, sampled=sampled, S_attn=S_attn, T_piece=T_piece)
    critical = not (basis == "spec" if ideal is None else ideal)
    if layout.adaptive and critical and np.any(np.asarray(value_of(B), dtype=float) * 2 <= layout.dp(G)):
        return _faster(_step(m, system, layout=replace(layout, adaptive=False), **kw), _step(m, system, layout=layout, **kw))
    return _step(m, system, layout=layout, **kw)


def _faster(idle: Step, joined: Step) -> Step:
    """Elementwise the faster of two pricings of one step (scalars keep the chosen one's derivation)."""
    ta, tb = np.asarray(idle.v("t_step"), dtype=float), np.asarray(joined.v("t_step"), dtype=float)
    if ta.ndim == 0 and tb.ndim == 0:
        return joined if tb < ta else idle
    pick = tb < ta

    def mix(a, b):
        if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b):
            return tuple(mix(x, y) for x, y in zip(a, b))
        va, vb = value_of(a), value_of(b)
        if isinstance(va, (int, float, np.ndarray)) and isinstance(vb, (int, float, np.ndarray)):
            return np.where(pick, vb, va)
        return a

    terms = [mix(getattr(idle, f), getattr(joined, f)) for f in
             ("t_math", "t_weights", "t_kv", "t_comm", "t_overhead", "t_step", "tokens")]
    extras = {k: mix(v, joined.extras[k]) if k in joined.extras else v for k, v in idle.extras.items()}
    return Step(idle.phase, idle.basis, *terms, extras=extras)


def _step(m: Model, system: System, *, G: int, B, S, phase: str, precision: str | None, kv_dtype: str | None,
          basis: str, priors: Priors | None, layout: Layout, ideal: bool | None, explain: bool, S_new,
          sampled=None, S_attn=None, T_piece=None) -> Step:
    """`step` for one layout (see there)."""
    if phase not in PHASES:
        raise ValueError(f"phase must be one of {PHASES}")
    if basis not in BASES:
        raise ValueError(f"basis must be one of {BASES}")
    chip = system.chip
    prec = precision or m.weight_dtype
    b_w = arch.bytes_per(prec)
    if arch.is_native(m, precision) and len(set(arch.weight_formats(m).values())) == 1:
        b_w = arch.bytes_per(next(iter(arch.weight_formats(m).values())))  # one storage format (with its scales)
    pri = priors or load_priors(chip.priors)
    spec = basis == "spec"
    ideal = spec if ideal is None else ideal
    src_m = m.file or m.name
    g = lambda sym, v, unit="", src=None: lift(explain, sym, v, unit, src)  # noqa: E731
    p = lambda sym, fld, unit="": g(sym, 1.0 if spec and fld.startswith("eta") else  # noqa: E731
                                    getattr(pri, fld), unit, "spec: peak" if spec and fld.startswith("eta")
                                    else pri.source_of(fld))

    Bq, Gq = g("B", B, "seq", "given"), g("G", G, "chips", "given")
    n_new = S if phase == "prefill" else (1 if S_new is None else S_new)
    S_new = g("S_new", n_new, "tok", f"{phase}: new tokens per sequence")
    T = step_tokens(Bq, S_new)
    pc = arch.param_counts(m, explain)
    attn_pt = g("attn_per_token", arch.attention_flop_per_token(m, S if S_attn is None else S_attn, phase), "FLOP/tok",
                f"{src_m}: QK and AV over the context ({phase})" if S_attn is None else
                f"{src_m}: QK and AV over each new token's own context (token-weighted S_attn: decodes and prompt pieces)")
    if phase == "prefill" and m.cross_attention is not None and m.cross_attention.kv_tokens:
        # one image per sequence, encoded with its prompt: its FLOP spread over the prompt's S tokens
        attn_pt = with_image(attn_pt.renamed("a_ctx") if isinstance(attn_pt, Q) else attn_pt,
                             arch.image_flop_per_sequence(m, explain), g("S", S, "tok", "prompt tokens"))
    kv = kv_dtype or m.kv_dtype
    # a profile answers only for the formats it multiplied (calibrate's 'int8' is torch._int_mm, W8A8's GEMM)
    extrapolated = False if spec else check_formats(pri, COMPUTE_FORMAT.get(prec, prec), kv)
    F_mm = g("F_mm", chip.peak(prec), "FLOP/s", chip.source_of(f"peak_flop_per_s.{chip.peak_precision(prec)}"))
    att = kv if pri.formats and kv in chip.peak_flop_per_s else "bf16"  # a profile measured attention at kv
    F_attn = g("F_attn", chip.peak(att), "FLOP/s", chip.source_of(f"peak_flop_per_s.{chip.peak_precision(att)}"))
    W = g("W", chip.hbm_bandwidth_bytes_per_s, "B/s", chip.source_of("hbm_bandwidth_bytes_per_s"))
    eta_flop = p("eta_flop", "eta_flop")
    bq = g("b_w", b_w, "B", f"{arch.weight_formats(m, precision)['attention']} weights")
    kf = kernel_format(m, prec, pri, chip)  # the GEMM kernels' format: whose measured curves the matmuls read
    native = arch.is_native(m, precision) and len(set(arch.weight_formats(m).values())) > 1  # per-module formats

    reads: list = []  # (curve, format, size) read, for a profile's interval

    def c(sym, name, fmt_, x, unit=""):  # a prior read off its measured curve at this step's size, where one exists
        if spec:
            return g(sym, 1.0, unit, "spec: peak")
        v, src = efficiency(pri, name, fmt_, value_of(x))
        reads.append((name, fmt_, value_of(x)))
        return g(sym, v, unit, src)

    def has(name, fmt_):
        return f"{name}.{fmt_}" in pri.curves or name in pri.curves

    def eta_mm_at(sym, M, fmt_=None):  # a GEMM of M rows: its measured curve, else the small-M rule, else eta_flop
        fmt_ = fmt_ or kf
        if spec:
            return g(sym, 1.0, "", "spec: peak")
        if has("eta_mm", fmt_):
            return c(sym, "eta_mm", fmt_, M)
        if pri.matmul_m_half:  # tiled GEMMs with few rows run below eta_flop (a CPU profile)
            e = small_m_efficiency(eta_flop, M, p("M_half", "matmul_m_half", "tok"))
            return e.renamed(sym) if isinstance(e, Q) else e
        return eta_flop

    eta_attn = eta_flop
    ctx = "attn_mla_ctx" if m.mla is not None else "attn_ctx"  # the context kernel's measured law (its curves' stem)
    ctx_law = phase == "prefill" and not spec and has(f"{ctx}_eta", "bf16")
    prefill_curve = phase == "prefill" and not spec and (ctx_law or has("eta_attn_prefill", "bf16"))
    attn_kf = kv if f"{ctx}_eta.{kv}" in pri.curves or (not ctx_law and f"eta_attn_prefill.{kv}" in pri.curves) \
        else "bf16"  # the context kernel for this KV format
    if pri.matmul_m_half and not spec:
        # decode attention multiplies each KV head's cache by its G = N/K query rows (MLA: all N heads)
        M_attn = g("M_attn", (m.n_heads if m.mla else m.n_heads / m.n_kv_heads) * n_new,
                   "rows", "query rows per KV head and sequence")
        eta_attn = small_m_efficiency(eta_flop, M_attn, p("M_half", "matmul_m_half", "tok"))
        eta_attn = eta_attn.renamed("eta_attn") if isinstance(eta_attn, Q) else eta_attn
    if phase == "decode":
        kv_seq = g("kv_seq", arch.kv_read_bytes(m, S, kv_dtype), "B",
                   f"{src_m}: KV bytes read per sequence at context S (window/top-k capped)")
    else:
        kv_seq = g("kv_seq", arch.kv_stored_bytes(m, S, kv_dtype), "B",
                   f"{src_m}: KV bytes written per prompt of S tokens")
    if explain and m.cross_attention is not None and m.cross_attention.kv_tokens:  # show the image's fixed cache
        kv_x = arch.cross_kv_bytes(m, kv_dtype, explain)
        kv_seq = with_cross_kv(g("kv_self", value_of(kv_seq) - value_of(kv_x), "B", kv_seq.source.replace(
            "KV bytes", "self-attention KV bytes")), kv_x)

    def value_heads(heads):  # a linear-attention layer's value heads on the chip, split as the query heads are
        la = m.linear_attention
        return g("h_v", np.maximum(la.value_heads * np.asarray(heads, dtype=float) / m.n_heads, 1.0), "",
                 f"{src_m}: value heads of a linear-attention layer on the chip (as the query heads split)")

    def gqa_law(pairs, g_q=None):  # the GQA decode law's terms at G = N/K (or the chip's, g_q): t0, its work items
        # and their cost, the rate
        Gq = g("G_q", m.n_heads / m.n_kv_heads, "", f"{src_m}: query heads per KV head N/K") if g_q is None else \
            g("G_q", g_q, "", f"{src_m}: query heads per KV head on the chip, max(N / max(K, tp), 1) (tp > K: each "
              "chip holds a copy of a KV head and N/tp of the query heads)")
        return (c("t0_attn", "attn_dec_t0", kv, Gq, "s"),
                g("n_pair", pairs, "", "(sequence, KV head) work items of one kernel on the chip"),
                c("t_pair", "attn_dec_t_pair", kv, Gq, "s"), c("eta_dec", "attn_dec_eta", kv, Gq))

    def eta_kv_for(eta_bw, kv_chip_bytes, pairs=None, seqs=None, heads=None, state_share=None, g_q=None):
        """KV streaming: the kernel's law (GQA by G over its (sequence, KV head) pairs; MLA by query heads per
        chip h over its sequences; a Gated DeltaNet hybrid, GQA's over its attention layers and the GDN kernels'
        over its linear ones), else a curve by bytes per kernel, else by context."""
        if spec:
            return eta_bw
        la = m.linear_attention
        if phase == "decode" and la is not None and la.kind in GATED_DELTA and m.mla is None and seqs is not None \
                and pairs is not None and m.n_kv_heads and has("gdn_eta", "fp32") and has("attn_dec_eta", kv):
            # a hybrid (Gated DeltaNet): its attention layers' KV at the attention law, its linear layers' state at theirs
            hv = value_heads(heads)
            state = 2 * arch.state_bytes_per_sequence(m)  # read and written
            # the share of each sequence's state the chip's bytes hold: its value heads' (a tensor-parallel group's
            # chip), else the attention's, as an even split of every byte counts it
            f_kv = state_share if state_share is not None else \
                np.asarray(pairs, dtype=float) / np.maximum(np.asarray(seqs, dtype=float) * m.n_kv_heads, 1e-300)
            return hybrid_decode_eta(
                g("kv_a", np.maximum(np.asarray(kv_chip_bytes, dtype=float) - np.asarray(seqs) * state * f_kv, 0.0),
                  "B", "KV bytes the attention layers read on the chip"),
                g("kv_s", np.asarray(seqs) * state * value_of(hv) / la.value_heads, "B",
                  "recurrent state the linear-attention layers read and write on the chip"), W,
                g("L_a", arch.attention_layers(m), "", f"{src_m}: attention layers"), *gqa_law(pairs, g_q),
                g("L_l", la.n_layers, "", f"{src_m}: linear-attention layers"),
                c("t0_gdn", "gdn_t0", "fp32", hv, "s"), c("eta_gdn", "gdn_eta", "fp32", hv))
        terms, what = None, ""  # the decode law's (t0, work items, their cost, rate) and what one kernel reads
        # one cached vector per token that every query head reads as key and value (MLA's latent; DeepSeek-V4's
        # one_kv_vector groups, whose 512-wide entries FlashMLA's kernels read): the MLA kernel's law, not GQA's at G = N
        latent = m.mla is not None or bool(m.attention_groups) and all(gr.one_kv_vector for gr in m.attention_groups)
        if phase == "decode" and latent and seqs is not None and has("attn_mla_eta", kv):
            hq = g("h_q", heads, "", "query heads per chip: N / tp (the latent is every head's)")
            terms = (c("t0_attn", "attn_mla_t0", kv, hq, "s"), g("n_seq", seqs, "", "sequences of one kernel on the chip"),
                     c("t_seq", "attn_mla_t_seq", kv, hq, "s"), c("eta_dec", "attn_mla_eta", kv, hq))
            what = "latent bytes one MLA decode kernel reads"
        elif phase == "decode" and not latent and pairs is not None and m.n_kv_heads and has("attn_dec_eta", kv):
            terms, what = gqa_law(pairs, g_q), "KV bytes one decode-attention kernel reads"
        if terms and m.sparse_attention is not None and has("dsa_idx_eta", "fp8"):
            return dsa_eta(kv_chip_bytes, seqs, *terms)
        if terms:
            t0, work, t_work, eta_dec = terms
            return decode_attention_eta(
                g("kv_k", np.asarray(kv_chip_bytes, dtype=float) / m.n_layers, "B", what + " (a layer, a chip)"), W,
                t0, work, t_work, eta_dec)
        if has("eta_kv_bytes", kv) and phase == "decode":  # measured on decode attention, which reads the cache
            e = c("eta_kv", "eta_kv_bytes", kv, np.asarray(kv_chip_bytes, dtype=float) / m.n_layers)
            if has("eta_gqa", kv) and m.mla is None:  # a profile: grouped query heads per KV head slow it down
                e = attention_decode_eta(e, c("eta_gqa", "eta_gqa", kv, m.n_heads / m.n_kv_heads))
            if has("eta_kv_bytes_h128", kv) and m.mla is None:  # measured at two head sizes: read at the model's H
                e128 = c("eta_kv_128", "eta_kv_bytes_h128", kv, np.asarray(kv_chip_bytes, dtype=float) / m.n_layers)
                if has("eta_gqa_h128", kv):
                    e128 = attention_decode_eta(e128, c("eta_gqa_128", "eta_gqa_h128", kv, m.n_heads / m.n_kv_heads))
                e = attention_head_eta(e, e128, g("H", m.head_dim, "", f"{src_m}: head size"))
            return e
        if pri.eta_kv is not None or has("eta_kv", kv):
            return c("eta_kv", "eta_kv", kv, S)
        return eta_bw

    def dsa_eta(kv_chip_bytes, seqs, t0, n_seq, t_seq, eta_dec):
        """DeepSeek sparse attention: the MLA law over the top-k latents, the indexer's law over every cached key."""
        sa = m.sparse_attention
        L_i = arch.n_index_layers(m)
        n_idx = g("n_idx", sa.index_n_heads, "", f"{src_m}: indexer heads (the law is measured at GLM-5's 32)")
        kv_i = g("kv_i", np.asarray(seqs, dtype=float) * np.asarray(S, dtype=float) * sa.index_bytes_per_token_layer
                 * L_i, "B", f"{src_m}: index keys the indexer layers read on the chip (every cached token)")
        return sparse_decode_eta(
            g("kv_a", np.maximum(np.asarray(kv_chip_bytes, dtype=float) - value_of(kv_i), 0.0), "B",
              "top-k latent bytes the MLA kernels read on the chip"), kv_i, W,
            g("L", m.n_layers, "", src_m), t0, n_seq, t_seq, eta_dec,
            g("L_i", L_i, "", f"{src_m}: layers running their own indexer"),
            c("t0_idx", "dsa_idx_t0", "fp8", n_idx, "s"), c("t_seq_idx", "dsa_idx_t_seq", "fp8", n_idx, "s"),
            g("sel", (np.asarray(S, dtype=float) > sa.index_topk).astype(float), "",
              f"1 where the context exceeds the {sa.index_topk:,} tokens kept (a top-k to select)"),
            c("t_sel", "dsa_idx_t_sel", "fp8", n_idx, "s"), g("S", S, "tok", "context"),
            c("t_len", "dsa_idx_t_len", "fp8", n_idx, "s"), c("eta_idx", "dsa_idx_eta", "fp8", n_idx))

    def eta_attn_for(flop_chip, seqs, toks, heads, kv_heads):  # prefill attention on one chip: the kernel's law, else
        flop_k = np.asarray(value_of(flop_chip), dtype=float) / m.n_layers  # its rate by the FLOP of one kernel
        if not ctx_law:
            return c("eta_attn", "eta_attn_prefill", attn_kf, flop_k)
        la = m.linear_attention
        if la is not None and la.kind in GATED_DELTA and m.mla is None and has("gdn_ctx_t_tok", "fp32"):
            # a hybrid (Gated DeltaNet): its attention layers at the context law, its linear layers' scans at theirs
            hv = value_heads(heads)
            flop_s = np.asarray(value_of(toks), dtype=float) * arch.recurrent_flop_per_token(m) * np.asarray(
                heads, dtype=float) / m.n_heads
            flop_a = np.maximum(np.asarray(value_of(flop_chip), dtype=float) - flop_s, 0.0)
            eta_a = _context_eta(flop_a / arch.attention_layers(m), seqs, toks, heads, kv_heads)
            return hybrid_context_eta(
                g("FLOP_a", flop_a, "FLOP", "the attention layers' FLOP on the chip"), eta_a,
                g("FLOP_s", flop_s, "FLOP", "the linear-attention layers' state updates on the chip"), F_attn,
                g("L_l", la.n_layers, "", f"{src_m}: linear-attention layers"),
                c("t0_gdn", "gdn_ctx_t0", "fp32", hv, "s"), g("n_seq", value_of(seqs), "", "prompts on the chip"),
                c("t_seq", "gdn_ctx_t_seq", "fp32", hv, "s"), g("n_tok", value_of(toks), "", "prompt tokens on the chip"),
                c("t_tok", "gdn_ctx_t_tok", "fp32", hv, "s"))
        return _context_eta(flop_k, seqs, toks, heads, kv_heads)

    def _context_eta(flop_k, seqs, toks, heads, kv_heads):  # the context kernel's law for FLOP_k a kernel
        mla = m.mla is not None
        x = g("N_c", heads, "", "query heads on one chip (MLA's law is read by them)") if mla else \
            g("H", m.head_dim, "", f"{src_m}: head size")
        return context_attention_eta(
            g("FLOP_k", flop_k, "FLOP", "attention FLOP of one context-attention kernel (a layer, a chip)"), F_attn,
            c("t0_ctx", f"{ctx}_t0", attn_kf, x, "s"),
            g("n_seq", value_of(seqs) * heads, "", "(sequence, query head) pairs of one kernel on the chip"),
            c("t_seq", f"{ctx}_t_seq", attn_kf, x, "s"),
            g("n_q", value_of(toks) * heads, "", "(token, query head) rows of one kernel on the chip"),
            c("t_q", f"{ctx}_t_q", attn_kf, x, "s"),
            g("n_kv", 0.0 if mla else value_of(toks) * kv_heads, "", "MLA: one latent, its rows counted in t_q" if mla
              else "(token, KV head) rows of one kernel on the chip"),
            g("t_kv", 0.0, "s", "MLA: no KV head") if mla else c("t_kv", f"{ctx}_t_kv", attn_kf, x, "s"),
            c("eta_ctx", f"{ctx}_eta", attn_kf, x))

    if chip.llc_bytes and not spec:  # a profile's cache tier: a step whose bytes fit in it reads them faster
        ws = working_set(arch.weight_bytes_touched(m, value_of(T), b_w, False, pc), Bq, kv_seq)
        h = cache_hit_share(g("C", chip.llc_bytes, "B", chip.source_of("llc_bytes")), ws,
                            g("p", chip.llc_hit_exponent or 1.0, "", chip.source_of("llc_hit_exponent")))
        W = tiered_bandwidth(h, g("W_c", chip.llc_bandwidth_bytes_per_s, "B/s",
                                  chip.source_of("llc_bandwidth_bytes_per_s")), W)
    extras: dict = {"layout": layout, "precision": prec, "ideal": ideal}
    if ideal:
        eta_bw = c("eta_bw", "eta_bw", kf, T)  # weight streaming by the GEMMs' rows M = T
        if has("gemm_width", kf) and not spec:  # a CPU profile: streaming rate by each GEMM's width K
            dense_w, exp_w = eager.gemm_widths(m)
            hit = eager.expert_rows(m, value_of(T))[1] if exp_w else 0.0
            eta_bw = _width_eta(eta_bw, dense_w + [(n * hit * arch.n_moe_layers(m), k) for n, k in exp_w], T, kf, c, g)
        flop_attn = attention_flop(T, attn_pt)
        flop_mm = matmul_flop(pc.matmul, head_params(g, m), T, head_rows(g, phase, Bq, T, sampled))
        eta_mm = eta_mm_at("eta_mm", T)
        if prefill_curve:  # flash attention's measured law (or rate by FLOP) on one chip's even share
            K = m.n_kv_heads or m.n_heads
            eta_attn = eta_attn_for(value_of(flop_attn) / G, Bq, T, m.n_heads / G, K / G)
        if eta_mm is eta_flop and eta_attn is eta_flop:
            t_math = math_time(flop_mm, F_mm, flop_attn, F_attn, Gq, eta_flop)
        else:
            t_math = math_time_small_m(flop_mm, F_mm, Gq, eta_mm, flop_attn, F_attn, eta_attn)
        W_touched = arch.weight_bytes_touched(m, T, None if native else bq, explain, pc)
        t_weights = weight_time(W_touched, Gq, W, eta_bw)
        eta_kv = eta_kv_for(eta_bw, value_of(Bq) * value_of(kv_seq) / G, value_of(Bq) * m.n_kv_heads / G,
                            value_of(Bq) / G, m.n_heads / G)
        t_kv = kv_time(Bq, kv_seq, Gq, W, eta_kv)
        extras["W_touched"] = W_touched
        if not spec:
            t_attn = attention_math_time(flop_attn, F_attn, Gq, eta_attn)
            t_mm = value_of(t_math) - value_of(t_attn)
            t_mm = Q("t_mm", t_mm, "s", source="t_math − t_attn (the matmul kernels' FLOP time)") if explain else t_mm
            t_serial = serial_kernel_time(t_mm, t_weights, t_attn, t_kv, t_math)
            extras.update(t_attn=t_attn, t_mm=t_mm)
    else:
        def module_peak(sym, f, what=""):  # a module kind's matmul peak: the step's own unless its format differs
            pk = chip.peak_precision(f)
            return F_mm if pk == chip.peak_precision(prec) else \
                g(sym, chip.peak(f), "FLOP/s", chip.source_of(f"peak_flop_per_s.{pk}") + what)

        kf_dense, kf_exp, F_dense, kf_head, F_head = kf, kf, F_mm, kf, F_mm
        if native:  # each module kind's GEMMs run its own kernels (gpt-oss: BF16 attention beside MXFP4 experts;
            # the LM head in the embeddings' format: BF16 beside the FP8 matmuls of FP8 releases)
            fa, fe, fh = (arch.weight_formats(m)[k] for k in ("attention", "experts", "embeddings"))
            kf_dense, kf_exp, kf_head = (kernel_format(m, f, pri, chip) for f in (fa, fe, fh))
            F_dense, F_head = module_peak("F_dense", fa), module_peak("F_head", fh, f" (the LM head's {fh} weights)")
        kf_moe, F_moe = kf_exp, None
        if native and m.moe is not None:
            kf_moe = moe_format(arch.weight_formats(m)["experts"], kf_exp, pri)
            if kf_moe in MOE_PEAK:
                pk = chip.peak_precision(MOE_PEAK[kf_moe])
                F_moe = g("F_moe", chip.peak(pk), "FLOP/s", chip.source_of(f"peak_flop_per_s.{pk}")
                          + f" ({kf_moe} experts: the MMA rate of their activations, roofline.MOE_PEAK)")
        t_math, t_weights, t_kv, t_serial, more = _critical_path(
            m, layout, G, Bq, S_new, T, pc, attn_pt, F_mm, F_attn, W, bq, native, kv_seq, eta_mm_at,
            eta_attn if not prefill_curve else eta_attn_for, eta_kv_for, c, pri, kf_exp, spec, explain,
            kf_dense=kf_dense, F_dense=F_dense, kf_moe=kf_moe, F_moe=F_moe, attn_kf=attn_kf, phase=phase,
            kf_head=kf_head, F_head=F_head, sampled=sampled, T_piece=T_piece, S=S, kv_dtype=kv)
        extras.update(more)

    if spec:
        t_comm = g("t_comm", 0.0 * np.asarray(value_of(T), dtype=float), "s", "spec: communication fully hidden")
        t_over = g("t_overhead", 0.0, "s", "spec: no fixed overhead")
        overlap = g("overlap", 1.0, "", "spec")
        t_serial = g("t_serial", 0.0, "s", "spec: matmul and attention kernels fully overlapped")
    else:
        t_comm = _comm_time(m, system, layout, G, T, prec, pri, explain, ideal, Bq, S_new, T_piece,
                            extras.get("R_head"))
        t_over = p("t_overhead", "step_overhead_s", "s")
        t_k, t_k_src = pri.kernel_overhead(kf)
        kf_e = kernel_format(m, arch.weight_formats(m)["experts"], pri, chip) if native else kf
        kf_e = moe_format(arch.weight_formats(m)["experts"], kf_e, pri) if native else kf_e
        t_moe, t_moe_src = pri.moe_overhead(kf_e) if m.moe is not None and arch.n_moe_layers(m) else (None, "")
        t_moe_q = extras.get("t_moe_op")  # the fused op's law: its fixed cost read at the step's ep
        fused = t_moe is not None or t_moe_q is not None
        if t_k or pri.aux_kernel_s:
            args = (p("t_fixed", "step_overhead_s", "s"), g("L", m.n_layers, "", src_m),
                    g("n_gemm", gemms_per_layer(m, fused), "", "matmul kernels per layer (roofline.gemms_per_layer)"
                      + ("; the routed experts' in the MoE op" if fused else "")),
                    g("t_kernel", t_k, "s", t_k_src),
                    g("n_aux", aux_kernels_per_layer(m, fused), "",
                      "norm, activation, RoPE and MoE-routing kernels per layer (roofline.aux_kernels_per_layer)"
                      + ("; routing in the MoE op" if fused else "")),
                    p("t_aux", "aux_kernel_s", "s"))
            t_over = overhead_time_moe(*args, g("L_moe", arch.n_moe_layers(m), "", src_m),
                                       t_moe_q if t_moe_q is not None else g("t_moe", t_moe, "s", t_moe_src)) \
                if fused else overhead_time(*args)
        if "t_elt" in extras:  # the elementwise kernels' and the sampled logits' bytes, beside their fixed cost
            t_over = overhead_with_elementwise(t_over, extras["t_elt"], extras["t_logits"])
        overlap = p("overlap", "comm_overlap")
        if pri.dispatch_s:  # an eager framework (a calibrated profile): every op of the step, counted (core.eager)
            t_over = _eager_overhead(m, chip, pri, prec, T, p, g, c)
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
        t_dev, o_host = t, p("o_host", "host_overlap")
        t = eager.eager_step_time(t_dev, eager.host_visible_time(t_host, t_dev, o_host))
        extras["t_host"] = t_host
        if pri.host_drift:  # the step at the host's slowest and fastest per-op cost (module _interval)
            t_h, t_d, o = value_of(t_host), value_of(t_dev), value_of(o_host)
            extras["host_range"] = tuple(eager.eager_step_time(t_d, eager.host_visible_time(t_h * f, t_d, o))
                                         for f in (1 / (1 + pri.host_drift), 1 + pri.host_drift))
    if pri.formats is not None and not spec:
        extras["interval"] = _interval(value_of(t), pri, reads, extrapolated, extras.get("host_range"))
    return Step(phase, basis, t_math, t_weights, t_kv, t_comm, t_over, t, T, extras=extras)


@formula("kv_seq = kv_self + kv_cross", unit="B")
def with_cross_kv(kv_self, kv_cross):
    """A vision model's KV per sequence: the text's own, and the image's fixed cross-attention cache."""
    return kv_self + kv_cross


@formula("attn_per_token = a_ctx + F_image / S", unit="FLOP/tok")
def with_image(a_ctx, F_image, S):
    """Prefill of a vision model's request: the image's encoder and cross K/V FLOP (arch.image_flop_per_sequence),
    run at the attention rate (16-bit, like the encoder's own weights), shared by the prompt's S tokens."""
    return a_ctx + F_image / S


def _act_dtype(prec: str) -> str:
    return prec if prec in ("fp32", "bf16", "fp16") else "bf16"


@formula("ws = W_touched + B · kv_seq", unit="B")
def working_set(W_touched, B, kv_seq):
    return W_touched + B * kv_seq


@formula("eta_bw_K = eta_bw / r_width", unit="")
def width_eta(eta_bw, r_width):
    """Weight streaming at the step's GEMM widths: the fitted rate over the measured ratio at those widths."""
    return eta_bw / r_width


def width_ratio_at_rows(eta_w1, eta_w16, M):
    """A width's rate relative to the fit at M rows, read between its measurements at M = 1 and 16."""
    return between_sizes(eta_w1, eta_w16, M, 1.0, 16.0)


def _width_eta(eta_bw, widths, M, fmt_, c, g, tag=""):
    """eta_bw over the element-weighted time ratio of the GEMMs' widths (calibrate: gemm_width, gemm_width_m16)."""
    e = [width_ratio_at_rows(value_of(c(f"eta_w1_K{k}{tag}", "gemm_width", fmt_, k)),
                             value_of(c(f"eta_w16_K{k}{tag}", "gemm_width_m16", fmt_, k)), value_of(M)) for _, k in widths]
    n_w = [n for n, _ in widths]
    return width_eta(eta_bw, g(f"r_width{tag}", eager.width_share_ratio(n_w, e), "",
                               f"Σ n/eta_w(K) / Σ n over the step's {len(widths)} GEMM widths (core.eager.gemm_widths), "
                               f"eta_w read at M rows between gemm_width (M = 1) and gemm_width_m16"))


def attention_head_eta(eta_64, eta_128, H):
    """Decode attention's rate at head size H, read between its measurements at H = 64 and 128: the same KV bytes
    run at different rates by head size (calibrate._measure_sdpa)."""
    return between_sizes(eta_64, eta_128, H, 64.0, 128.0)


@formula("eta_kv = eta_kv_bytes · eta_gqa", unit="")
def attention_decode_eta(eta_kv_bytes, eta_gqa):
    """Attention decode on a profile: KV streaming at the call's size (G = 1) times the grouped-heads slowdown."""
    return eta_kv_bytes * eta_gqa


def _eager_overhead(m, chip, pri, prec, T, p, g, c):
    """Device time of what an eager step runs besides GEMM streaming and attention: a fixed cost per GEMM call,
    the elementwise/norm/activation kernels and the MoE routing ops, each by its bytes (core.eager)."""
    act = _act_dtype(prec)
    ops = eager.eager_ops(m, value_of(T), act)

    def kernels_time(sym, entries, curve):
        if not entries or not has_curve(pri, curve, act) and not any(k.startswith(curve + ".") for k in pri.curves):
            return g(sym, 0.0 * np.asarray(value_of(T), dtype=float), "s", f"no {curve} table or no such kernels")
        n = [np.asarray(e[0], dtype=float) for e in entries]
        t_op = [efficiency(pri, curve, act, np.asarray(e[1], dtype=float))[0] for e in entries]
        c(curve, curve, act, entries[0][1], "s")  # recorded for the interval (the spread of the curve it reads)
        return g(sym, value_of(eager.kernels_time(n, t_op)), "s",
                 f"Σ n_op · {curve}(bytes_op) over {len(entries)} kernel kinds (core.eager); "
                 f"{efficiency(pri, curve, act, entries[0][1])[1]}")

    t_elt = kernels_time("t_elt", ops.elt, "t_elt")
    t_route = kernels_time("t_route", ops.route, "t_route")
    n_gemm = g("n_gemm", ops.n_gemm, "", "GEMM calls at T rows per eager step (core.eager.gemms_per_step)")
    n_gemm_e = g("n_gemm_e", ops.n_gemm_expert, "", "expert GEMM calls per eager step (core.eager.gemms_per_step)")
    if has_curve(pri, "t_kernel", prec):
        t_k = c("t_kernel", "t_kernel", prec, T, "s")
        t_ke = c("t_kernel_e", "t_kernel", prec, eager.expert_rows(m, value_of(T))[0], "s") if m.moe else t_k
    else:
        t_k = t_ke = p("t_kernel", "kernel_overhead_s", "s")
    if has_curve(pri, "t_row", prec):  # a CPU profile: each GEMM pays per weight row besides its bytes (core.eager)
        n_row, n_row_e = eager.gemm_rows_per_step(m, value_of(T))
        t_r = c("t_row", "t_row", prec, T, "s")
        t_re = c("t_row_e", "t_row", prec, eager.expert_rows(m, value_of(T))[0], "s") if m.moe else t_r
        t_rows = eager.gemm_rows_time(g("n_row", n_row, "", "GEMM weight rows per step (core.eager)"), t_r,
                                      g("n_row_e", n_row_e, "", "expert GEMM weight rows per step (core.eager)"), t_re)
    else:
        t_rows = g("t_rows", 0.0 * np.asarray(value_of(T), dtype=float), "s", "no t_row table")
    return eager.eager_overhead_time(p("t_fixed", "step_overhead_s", "s"), n_gemm, t_k, n_gemm_e, t_ke, t_rows, t_elt,
                                     t_route)


def _interval(t, pri, reads, extrapolated: bool, host_range=None):
    """(low, high) step time of a calibrated profile: ± the largest measurement spread s of the curves read; ÷/× 2
    beyond measured formats. An eager step's host cost drifts on a shared host between calibration and use
    (this project's measurements: ±30 % within minutes on a 2-vCPU VM, 9-17 µs per op over one morning on an
    H100's host; validation/README.md), so with `host_drift` d the ends are the step at t_host/(1 + d) and
    t_host·(1 + d) (`host_range`), each widened by s:

        t_low = t(t_host / (1 + d)) · (1 − s),   t_high = t(t_host · (1 + d)) · (1 + s)
    """
    s = 0.0
    for name, fmt_, x in reads:
        s = np.maximum(s, curve_spread(pri, name, fmt_, x))
    s = np.minimum(s, 0.9)
    lo, hi = host_range if host_range is not None else (t, t)
    if extrapolated:
        return lo / 2 * (1 - s), hi * 2 * (1 + s)
    return lo * (1 - s), hi * (1 + s)


def _critical_path(m: Model, layout: Layout, G: int, Bq, S_new, T, pc, attn_pt, F_mm, F_attn, W, bq, native, kv_seq,
                   eta_mm_at, eta_attn, eta_kv_for, c, pri: Priors, prec: str, spec: bool, explain: bool,
                   kf_dense: str | None = None, F_dense=None, kf_moe: str | None = None, F_moe=None,
                   attn_kf: str = "bf16", phase: str = "decode", kf_head: str | None = None, F_head=None,
                   sampled=None, T_piece=None, S=None, kv_dtype: str | None = None):
    """The busiest chip's time terms under `layout` (module docstring): t_math, t_weights, t_kv, t_serial, extras."""
    g = lambda sym, v, unit="", src=None: lift(explain, sym, v, unit, src)  # noqa: E731
    src_m = m.file or m.name
    tp, dp = layout.tp_eff(G, value_of(Bq)), layout.dp(G)
    tpq = g("tp", tp, "", "layout: tensor-parallel ways of attention and non-expert weights" + (
        " (adaptive: tp · dp / max(B, 1) while B < dp)" if layout.adaptive else ""))
    if dp > 1:
        B_dp = dp_batch(Bq, g("dp", dp, "", "layout: attention data-parallel groups = G / tp"))
        T_dp = dp_tokens(B_dp, S_new)
        if T_piece is not None:  # a mixed step: its largest prompt piece stays whole on one group
            T_dp = dp_tokens_pieces(T_dp, g("T_piece", T_piece, "tok", "the group holding the largest prompt piece: "
                                                                      "c_max + T_dec / dp"))
    else:
        B_dp, T_dp = Bq, T
    L_moe = arch.n_moe_layers(m)
    moe = m.moe
    E = g("E", moe.n_routed_experts if moe else 0, "", src_m)
    k = g("k", moe.experts_per_token if moe else 0, "", src_m)
    L_moeq = g("L_moe", L_moe, "", src_m)
    lookup = g("N_lookup", arch.lookup_params(m, native), "params",
               "untied input embedding: a lookup, not read whole" + (
                   "; the vision encoder and idle cross-attention weights (arch.lookup_params)" if m.cross_attention
                   else ""))
    if native:  # each module kind in the checkpoint's own format
        fmts = arch.weight_formats(m)
        W_all = arch.model_weight_bytes(m, None, explain, pc)
        b_exp = g("b_exp", arch.bytes_per(fmts["experts"]), "B", f"{fmts['experts']} experts")
        b_emb = g("b_emb", arch.bytes_per(fmts["embeddings"]), "B", f"{fmts['embeddings']} embeddings")
    else:
        W_all, b_exp, b_emb = arch.weight_bytes_all(pc.total, bq), bq, bq
    W_dense = dense_bytes_chip(W_all, L_moeq, E, pc.expert, b_exp, lookup, b_emb, tpq)
    N_head = head_params(g, m)
    R_head = head_rows(g, phase, B_dp, T_dp, sampled, share=value_of(B_dp) / np.maximum(value_of(Bq), 1e-300))
    flop_body = body_flop_chip(dense_matmul_params(pc.matmul, L_moeq, k, pc.expert), N_head, T_dp, tpq)
    flop_head = head_flop_chip(N_head, R_head, tpq)
    flop_attn = attention_flop_chip(T_dp, attn_pt, tpq)
    f_att = 1.0 if m.mla is not None else np.maximum(1.0 / np.asarray(tp, dtype=float), 1.0 / m.n_kv_heads)
    f_kv = arch.kv_tp_share(m, S, kv_dtype, tp, read=phase == "decode")  # each cache part split by its own heads
    if callable(eta_attn):  # prefill: flash attention's measured law on this chip's heads (roofline._step eta_attn_for)
        heads = m.n_heads * np.maximum(1.0 / np.asarray(tp, dtype=float), 1.0 / m.n_heads)
        eta_attn = eta_attn(flop_attn, B_dp, T_dp, heads, (m.n_kv_heads or m.n_heads) * f_att)
    kf_dense, F_dense = kf_dense or prec, F_mm if F_dense is None else F_dense
    eta_mm = eta_mm_at("eta_mm", T_dp, kf_dense)  # dense GEMMs: M = the DP group's tokens
    eta_bw = c("eta_bw", "eta_bw", kf_dense, T_dp)
    if has_curve(pri, "gemm_width", kf_dense) and not spec:  # a CPU profile: streaming rate by each GEMM's width K
        eta_bw = _width_eta(eta_bw, eager.gemm_widths(m)[0], T_dp, kf_dense, c, g)
    kf_head, F_head = kf_head or kf_dense, F_dense if F_head is None else F_head
    same_rows = phase != "prefill" and sampled is None  # a decode step's head multiplies the body's rows
    eta_head = eta_mm if kf_head == kf_dense and same_rows else eta_mm_at("eta_head", R_head, kf_head)
    t_mm_d = dense_head_gemm_time(flop_body, F_dense, eta_mm, flop_head, F_head, eta_head)
    t_w_d = dense_weight_time(W_dense, W, eta_bw)
    t_attn = attention_time_chip(flop_attn, F_attn, eta_attn)
    f_kvq = g("f_kv", f_kv, "", "MLA: every chip reads the whole latent" if m.mla is not None else
              f"KV per chip: max(1/tp, 1/K) with K = {m.n_kv_heads} (replicated when tp > K)" + (
                  "; each attention group, state or index part by its own heads (arch.kv_tp_share)"
                  if m.attention_groups or m.linear_attention or m.sparse_attention else ""))
    la = m.linear_attention
    eta_kv = eta_kv_for(eta_bw, value_of(B_dp) * value_of(kv_seq) * f_kv, value_of(B_dp) * m.n_kv_heads * f_att,
                        value_of(B_dp), m.n_heads / np.asarray(tp, dtype=float),
                        np.maximum(1.0 / np.asarray(tp, dtype=float), 1.0 / la.value_heads) if la else None,
                        np.maximum(m.n_heads / np.maximum(m.n_kv_heads, np.asarray(tp, dtype=float)), 1.0))
    t_kv = kv_time_chip(B_dp, kv_seq, f_kvq, W, eta_kv)
    extras: dict = {"B_dp": B_dp, "T_dp": T_dp, "W_dense": W_dense}
    moe_sum = False
    if moe is not None and L_moe:
        ep = layout.ep
        imb = layout.imbalance if layout.imbalance is not None else pri.ep_imbalance
        imbq = g("imbalance", 1.0 if spec else imb, "",
                 "spec: uniform routing" if spec else ("layout: given" if layout.imbalance is not None
                                                       else pri.source_of("ep_imbalance")))
        epq = g("ep", ep, "", "layout: expert-parallel ways")
        z = g("z_ep", blom_z(ep), "", f"expected largest of ep = {ep} normal loads (Blom: Phi⁻¹((n − 0.375)/(n + 0.25)))")
        load = busiest_rank_load(T, k, epq, E, z, imbq)
        hits = busiest_rank_experts(E, epq, load, arch.expected_experts_touched(E, k, T), z)
        mtp = g("moe_tp", layout.moe_tp(G), "", "layout: ways each expert is split = G / ep")
        flop_e = expert_flop_chip(L_moeq, pc.expert, load, mtp)
        W_e = expert_bytes_chip(L_moeq, hits, pc.expert, b_exp, mtp)
        M_e = expert_rows(load, hits)
        kf_moe = kf_moe or prec
        # attention TP: every rank's op routes the group's T tokens, as the tables' rows at this ep do; attention DP:
        # the all-to-all hands each rank only its own (token, expert) pairs, as the tables' ep-1 op sees them
        ep_op = 1 if np.max(np.asarray(dp)) > 1 else ep
        if not spec and has_curve(pri, "moe_eta_bw", kf_moe):  # the fused MoE op's law, measured by ep (module doc)
            epo = g("ep_op", ep_op, "", "expert-parallel ways the op is read at (1 under attention data parallelism)")
            T_op = g("T_op", T if ep_op == ep else np.asarray(value_of(load), dtype=float) / moe.experts_per_token,
                     "tok", "tokens routed through the rank's op: the group's T (attention TP), else load_max / k")
            F_e = F_moe if F_moe is not None else F_mm
            t_mm_e = expert_op_math_time(flop_e, F_e, c("eta_mm_e", "moe_eta_mm", kf_moe, epo), L_moeq,
                                         c("c_route", "moe_route", kf_moe, epo), T_op, k,
                                         g("D", m.d_model, "", src_m), W)
            t_w_e = expert_op_stream_time(W_e, W, c("eta_bw_e", "moe_eta_bw", kf_moe, epo), L_moeq, hits,
                                          c("t_e", "moe_t_expert", kf_moe, epo, "s"))
            extras["t_moe_op"] = c("t_moe", "moe_t0", kf_moe, epo, "s")
            moe_sum = True
        else:  # no MoE tables: the dense GEMM curves at M_e rows (a CPU profile: by each GEMM's width K)
            t_mm_e = expert_gemm_time(flop_e, F_mm, eta_mm_at("eta_mm_e", M_e, prec))
            eta_bw_e = c("eta_bw_e", "eta_bw", prec, M_e)
            if has_curve(pri, "gemm_width", prec) and not spec:
                eta_bw_e = _width_eta(eta_bw_e, eager.gemm_widths(m)[1], M_e, prec, c, g, "_e")
            t_w_e = expert_weight_time(W_e, W, eta_bw_e)
        extras.update(load_max=load, hit_max=hits, M_e=M_e, W_experts=W_e)
    else:
        zero = 0.0 * np.asarray(value_of(T), dtype=float)
        t_mm_e = g("t_mm_experts", zero, "s", "no routed experts")
        t_w_e = g("t_w_experts", zero, "s", "no routed experts")
    t_math = math_time_chip(t_mm_d, t_mm_e, t_attn)
    t_weights = weight_time_chip(t_w_d, t_w_e)
    extras["W_touched"] = value_of(W_dense) + value_of(extras.get("W_experts", 0.0))
    if spec:
        return t_math, t_weights, t_kv, None, extras
    act = _act_dtype(prec)
    cast = f", cast to {CAST_FORMATS[kf_dense]} for the GEMMs" if kf_dense in CAST_FORMATS else ""
    eta_elt = g("eta_elt", pri.eta_bw, "", pri.source_of("eta_bw") + " (an elementwise kernel streams as a GEMV does)")
    extras["t_elt"] = elementwise_time_chip(
        g("L", m.n_layers, "", src_m), T_dp,
        g("a_tok", elementwise_bytes_per_token(m, tp, kf_dense, arch.bytes_per(act)), "B",
          f"{src_m}: norm, residual, RoPE and activation bytes per token and layer on a chip, {act} activations"
          f"{cast} (roofline.elementwise_bytes_per_token)"),
        W, eta_elt)
    extras["t_logits"] = logits_time_chip(
        R_head, g("V", m.vocab_size, "", src_m),
        g("b_logit", logits_pass_bytes(tp), "B", "per logit of a sampled row: the tensor-parallel gather's reorder "
          "copy, the cast to fp32, argmax's read (roofline.logits_pass_bytes: SGLang's logits processor and "
          "greedy sampler)"),
        W, eta_elt)
    extras["R_head"] = value_of(R_head)
    serial = serial_kernel_time_moe_op if moe_sum else serial_kernel_time_chip
    t_serial = serial(t_mm_d, t_w_d, t_mm_e, t_w_e, t_attn, t_kv, t_math, t_weights)
    extras.update(t_attn=t_attn, t_mm=value_of(t_mm_d) + value_of(t_mm_e))
    return t_math, t_weights, t_kv, t_serial, extras


def collective_latency(pri: Priors, crosses: bool) -> tuple[float, str]:
    """The fixed cost of one collective and its source: inside a domain the priors' scale-up latency; across domains
    their scale-out latency, but never less than one inside (the collective still runs its in-domain part)."""
    up, up_src = pri.scaleup_latency_s, pri.source_of("scaleup_latency_s")
    if not crosses:
        return up, up_src
    out, out_src = pri.scaleout_latency_s, pri.source_of("scaleout_latency_s")
    return (out, out_src) if out >= up else (up, f"the scale-up latency, above the scale-out one ({up_src})")


def _comm_time(m: Model, system: System, layout: Layout, G: int, T, prec: str, pri: Priors, explain: bool,
               ideal: bool = True, Bq=None, S_new=None, T_piece=None, R_head=None):
    """Collective time per step for the layout, on the tier each collective crosses.

    Idealised: each chip sends T/G tokens. Critical path: a DP group's all-reduce carries its T_dp tokens
    and each chip dispatches T_dp / tp of them to the experts.
    """
    g = lambda sym, v, unit="", src=None: lift(explain, sym, v, unit, src)  # noqa: E731
    dp = layout.dp(G)
    T_v = np.asarray(value_of(T), dtype=float)
    tp = layout.tp if ideal else layout.tp_eff(G, value_of(Bq))
    if ideal or dp <= 1:
        T_ar, T_chip = T, g("T_chip", T_v / G, "tok", "T / G: tokens per chip")
    else:
        T_dp = dp_batch(value_of(Bq), dp) * value_of(S_new)
        if T_piece is not None:
            T_dp = dp_tokens_pieces(T_dp, value_of(T_piece))
        T_ar = g("T", T_dp, "tok", "B_dp · S_new: the busiest DP group's tokens")
        T_chip = g("T_chip", T_dp / tp, "tok", "T_dp / tp: tokens each chip dispatches")
    dom = system.domain_chips
    up = system.scaleup_bw * pri.eta_scaleup
    out = (system.scaleout_bw or system.scaleup_bw) * pri.eta_scaleout
    if G > dom and system.scaleout_bw == 0:
        raise InputError(f"{system.name} has no scale-out bandwidth in the catalog; use at most {dom} "
                         f"chip{'s' if dom != 1 else ''}")
    total = 0.0 * np.asarray(value_of(T), dtype=float)
    parts = []
    tp_max = float(np.max(tp))
    if tp_max > 1:
        lat, lat_src = collective_latency(pri, tp_max > dom)
        ring, link = system.scaleup_bw, "scale-up link"
        if system.torus_dims:  # the TP group's block of the torus: the links of the axes it spans
            ring = system.ring_bw(np.minimum(np.asarray(tp), dom))
            link = f"{system.torus_dims}D torus links of the TP group's block (kernels.torus_bus_bandwidth)"

        def link_bw(msg):  # the TP group's ring bandwidth for a message of msg bytes, and its source
            bw, bw_src = ring * pri.eta_scaleup, f"{system.file}: {link} × eta_scaleup ({pri.file})"
            if "eta_scaleup.allreduce" in pri.curves:  # measured by message size
                eta, e_src = efficiency(pri, "eta_scaleup", "allreduce", msg)
                bw, bw_src = ring * eta, f"{system.file}: {link} × {e_src}"
            if tp_max > dom and dom == 1:  # one-chip domains (Macs over Ethernet): the ring is all NIC hops
                bw, bw_src = out, f"{system.file}: scale-out × eta_scaleout (one-chip domains: every hop crosses a NIC)"
            elif tp_max > dom:  # NCCL's rings cross the network on each domain's g = domain NICs at once
                bw = ring_bus_bandwidth(bw, dom, out)
                bw_src = (f"min(bw_up, g · bw_out), g = {dom} NICs of each domain the group spans "
                          f"(kernels.ring_bus_bandwidth); bw_up: {bw_src}; bw_out: {system.file}: scale-out × eta_scaleout")
            return bw, bw_src

        def where_tp(t):  # adaptive tp: no collective where a group is one chip
            if np.ndim(tp) and not np.all(np.asarray(tp) > 1):
                v = np.where(np.asarray(tp) > 1, value_of(t), 0.0)
                return Q(t.name, v, "s", t.formula, t.inputs) if isinstance(t, Q) else v
            return t

        bw, bw_src = link_bw(np.asarray(value_of(T_ar), dtype=float) * m.d_model * 2.0)
        parts.append(where_tp(tp_allreduce_time(g("L", m.n_layers), g("tp", tp), T_ar, g("D", m.d_model),
                                                g("b_act", 2.0, "B", "bf16 activations"),
                                                g("bw_link", bw, "B/s", bw_src), g("lat", lat, "s", lat_src))))
        if R_head is not None:  # the vocabulary-parallel logits gathered to every rank (roofline.logits_pass_bytes)
            bw_g, bw_g_src = link_bw(np.asarray(R_head, dtype=float) * m.vocab_size * LOGIT_BYTES)
            parts.append(where_tp(logits_gather_time(
                g("tp", tp), g("R_head", R_head, "rows", "the step's sampled rows"), g("V", m.vocab_size),
                g("b_h", LOGIT_BYTES, "B", "BF16 logits out of the head"),
                g("bw_link", bw_g, "B/s", bw_g_src + " (the all-reduce's rate at the gathered bytes)"),
                g("lat", lat, "s", lat_src))))
    if ideal:
        f_rem = g("f_remote", 1 - 1 / layout.ep, "", "1 − 1/EP: each chip holds only its own tokens (idealised)")
    else:
        f_rem = g("f_remote", np.maximum(1 - np.asarray(tp, dtype=float) / G, 0.0), "",
                  "1 − tp/G: destinations outside the token's attention group (its tp chips already hold it)")
    if layout.ep > 1 and m.moe is not None and np.any(np.asarray(value_of(f_rem)) > 0):
        if system.scaleup_bw == 0:  # a one-chip domain with no link in the catalog (a Mac, a Jetson, a DGX Spark)
            raise InputError(f"{system.name} has no scale-up bandwidth in the catalog: expert parallelism over "
                             f"{G} chips is not modelled on it; use --chips 1 or no expert parallelism")
        f_out = max(0.0, 1.0 - dom / layout.ep) if layout.ep > dom else 0.0
        b_disp = 1.0 if arch.bytes_per(prec) <= 1.01 else 2.0
        lat, lat_src = collective_latency(pri, layout.ep > dom)
        bw_a2a, a2a_src, lat_a2a, lat_a2a_src = up, f"{system.file}: scale-up × eta_scaleup", lat, lat_src
        if "eta_scaleup.alltoall" in pri.curves:  # measured by the bytes one dispatch or combine moves per chip
            msg = (np.asarray(value_of(T_chip), dtype=float) * m.moe.experts_per_token * m.d_model * 2.0
                   * np.maximum(np.asarray(value_of(f_rem), dtype=float), 1e-9))
            eta, e_src = efficiency(pri, "eta_scaleup", "alltoall", msg)
            bw_a2a, a2a_src = system.scaleup_bw * eta, f"{system.file}: scale-up link × {e_src}"
        if pri.alltoall_latency_s is not None and pri.alltoall_latency_s >= lat:
            # a dispatch or combine that leaves the domain costs at least what one inside it does
            lat_a2a, lat_a2a_src = pri.alltoall_latency_s, pri.source_of("alltoall_latency_s")
        parts.append(ep_alltoall_time(
            g("L_moe", arch.n_moe_layers(m)), T_chip, g("k", m.moe.experts_per_token),
            g("D", m.d_model), g("b_disp", b_disp, "B", "dispatch in FP8 when weights are ≤ 8 bit (DeepEP)"),
            g("b_comb", 2.0, "B", "combine in BF16 (DeepEP)"), f_rem,
            g("f_out", f_out, "", "share of destinations outside the scale-up domain = 1 − domain/EP"),
            g("bw_up", bw_a2a, "B/s", a2a_src),
            g("bw_out", out, "B/s", f"{system.file}: scale-out × eta_scaleout"), g("lat", lat_a2a, "s", lat_a2a_src),
            node_dedup(g("n", np.ceil(layout.ep / dom), "", "scale-up domains the experts span = ceil(EP / domain)"),
                       g("k", m.moe.experts_per_token), g("f_out", f_out)) if f_out > 0 else 1.0))
    if layout.pp > 1:
        parts.append(_pipeline_hops(m, system, layout, G, T_chip, pri, g))
    if not parts:
        return g("t_comm", total, "s", "one chip or no split: no collectives")
    if len(parts) == 1:
        return parts[0].renamed("t_comm") if isinstance(parts[0], Q) else parts[0]
    s = sum(value_of(x) for x in parts)
    if explain:
        names = [x.name for x in parts]
        return Q("t_comm", s, "s", "t_comm = " + " + ".join(names), dict(zip(names, parts)))
    return s


@formula("t_pp = (pp − 1 − n_x) · (T_chip·D·b_act / bw_up + lat_up) + n_x · (T_chip·D·b_act / bw_out + lat_out)",
         unit="s")
def pipeline_hop_time(pp, n_x, T_chip, D, b_act, bw_up, lat_up, bw_out, lat_out):
    """A token's (pp − 1) hops between pipeline stages: each chip sends its share of the stage's activations to
    its peer in the next stage (vLLM's send_tensor_dict splits them over the tensor-parallel group, the receiver
    all-gathers), on the scale-up link or, for the n_x boundaries that leave a domain, over its own NIC."""
    hop = T_chip * D * b_act
    inside = pp - 1 - n_x  # (a one-chip domain has no scale-up link: every hop is outside, none priced on it)
    return (inside * (hop / bw_up + lat_up) if inside > 0 else 0.0 * hop) + \
        (n_x * (hop / bw_out + lat_out) if n_x > 0 else 0.0 * hop)


@formula("n_x = min(pp − 1, ceil(G · pp / domain) − 1)", unit="")
def pipeline_boundaries_out(pp, G, domain):
    """Stage boundaries that leave a scale-up domain, stages of G chips packed into domains in order (stages of a
    domain or more: every boundary)."""
    return min(pp - 1, math.ceil(G * pp / domain) - 1)


def _pipeline_hops(m: Model, system: System, layout: Layout, G: int, T_chip, pri: Priors, g):
    """`pipeline_hop_time` for the layout's stages (Layout.pp)."""
    dom = system.domain_chips
    n_x = pipeline_boundaries_out(g("pp", layout.pp), g("G", G, "chips"), g("domain", dom, "chips", system.source_of("domain_chips")))
    if value_of(n_x) > 0 and not system.scaleout_bw:
        raise InputError(f"{system.name} has no scale-out bandwidth in the catalog: a pipeline of {layout.pp} stages "
                         f"of {G} chips does not fit one {dom}-chip domain")
    lat_up, up_src = collective_latency(pri, False)
    lat_out, out_src = collective_latency(pri, True)
    return pipeline_hop_time(
        g("pp", layout.pp), n_x, T_chip, g("D", m.d_model), g("b_act", 2.0, "B", "bf16 activations"),
        g("bw_up", system.scaleup_bw * pri.eta_scaleup, "B/s", f"{system.file}: scale-up × eta_scaleup"),
        g("lat_up", lat_up, "s", up_src),
        g("bw_out", (system.scaleout_bw or system.scaleup_bw) * pri.eta_scaleout, "B/s",
          f"{system.file}: scale-out × eta_scaleout"), g("lat_out", lat_out, "s", out_src))
