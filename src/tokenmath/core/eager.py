"""What an eager PyTorch decode step launches, op by op: the inventory `roofline.step` prices on a profile.

A framework that runs a model one operation at a time (PyTorch eager, as Hugging Face's modelling code
and `tokenmath check-local` do) pays for every operation a host cost to dispatch it (Python, the
dispatcher, allocating the output, on a GPU the launch) and a device cost to run it. For a small model
that bookkeeping, not the weights, can be most of a decode step; on a CPU it adds to the device work,
on a GPU the host runs ahead of the device and the slower of the two sets the pace.

Per decoder layer, T = B tokens this step, activations of b bytes, RMSNorm internals in fp32
(Hugging Face's LlamaRMSNorm / MixtralSparseMoeBlock, one kernel per torch call):

- GEMMs: q, k, v, o; gate, up, down, or up, down for a plain MLP (mlp_matrices 2) (an MoE layer: a router,
  then the MLP's per expert hit, and once for the shared experts, one MLP of their summed width);
- elementwise kernels, bytes = what each reads and writes:
  RMSNorm ×2: to fp32 (b+4)·T·D, x² 8·T·D, mean 4·T·D, +eps, rsqrt, × 8·T·D, to dtype (4+b)·T·D
  (the casts are free at fp32), ×g 3·b·T·D; with q/k norms (Qwen3, Gemma 3, OLMo 2) the same over the
  T·N and T·K rows of H, and with sandwich norms (Gemma 2/3) two more over T·D; rotary embedding of q and k (n = T·heads·H each):
  −x₂ b·n, cat 2·b·n, ·cos 2·b·n, ·sin 2·b·n, + 3·b·n; the KV-cache write of k and v 2·b·T·K·H
  each; two residual adds 3·b·T·D; SiLU 2·b·T·F and the gate product 3·b·T·F (a plain MLP: its
  activation 2·b·T·F alone);
- views (view, transpose, slice, unsqueeze): host cost only;
- one attention call (scaled_dot_product_attention): priced by the KV it reads (roofline t_kv);
- MoE routing (Mixtral's block): softmax, top-k, renormalise, cast, zeros, one-hot, hit list; per
  expert hit: its rows (where), gather, routing weight, scale, index_add into the output.

Per step: the token embedding (a gather of T·D), the rotary angles, the final norm and the LM head.

    t_rows  = n_row · t_row(T) + n_row_e · t_row(rows per expert)       device: GEMM output rows (weights' N)
    t_elt   = Σ_ops n_op · t_elt(bytes_op)                             device: a kernel's measured time at its bytes
    t_host  = n_ops · t_dispatch + n_route · t_dispatch_route + n_expert · t_dispatch_expert    host
    t_host_visible = (1 − o_host)·t_host + o_host·max(0, t_host − t_device)

`o_host` = 0 on a CPU (one thread dispatches and computes), 1 on a GPU (kernels queue behind the host).

The host calls (`host_calls`) are counted per modelling code (`catalog/eager/ops.yaml`): the code a model's family
runs in transformers 4.57.1 (tests/test_eager_hf.py pins them to its measured steps: Llama's for Llama, Qwen2/3,
Mistral, Mixtral, Qwen3-MoE; Gemma 2/3's norms; Phi-3's and GPT-NeoX's fused projections; OLMoE's loop over every
expert; gpt-oss's batched experts; DeepSeek-V3's MLA), or check-local's own stack (`checklocal.as_built`), whose
counts a test reads off its step with a TorchFunctionMode. The elementwise kernels' bytes above are Llama's for
every code.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import arch
from .derive import formula
from .errors import InputError
from .load import load_eager_ops
from .records import Model

__all__ = ["EagerOps", "eager_ops", "kernels_time", "host_time", "host_visible_time", "gemms_per_step", "gemm_rows_per_step",
           "gemm_rows_time", "gemm_widths", "width_share_ratio",
           "expert_rows", "eager_overhead_time", "eager_step_time", "counts", "host_calls"]

def counts(m: Model) -> dict:
    """Torch calls of each part of the eager step `m` runs (catalog/eager/ops.yaml): its `eager_code`, else the code
    its family runs in transformers, else Llama's."""
    codes, families = load_eager_ops()
    code = m.eager_code or families.get(m.family, "llama")
    if code not in codes:
        raise InputError(f"{m.name}: eager_code {code!r} is not one of {', '.join(sorted(codes))} (catalog/eager/ops.yaml)")
    return codes[code]


@dataclass(frozen=True)
class EagerOps:
    """One eager decode step's inventory: host calls, GEMM calls, elementwise and routing kernels.

    `elt` and `route` are (kernels per step, bytes per kernel) pairs; counts and bytes broadcast with T.
    `n_gemm` GEMMs have T rows, `n_gemm_expert` an expert's rows (MoE).
    """

    n_host: object
    n_host_route: object
    n_host_expert: object
    n_gemm: object
    n_gemm_expert: object
    elt: tuple
    route: tuple


def expert_rows(m: Model, T):
    """Rows each expert hit multiplies: the T·k routed copies over the E_hit experts they land on."""
    e = m.moe
    T = np.asarray(T, dtype=float)
    hit = arch.expected_experts_touched(e.n_routed_experts, e.experts_per_token, T)
    return T * e.experts_per_token / hit, hit


def _mm(m: Model) -> int:
    """An MLP's weight matrices: gate, up, down (mlp_matrices 3) or up, down (2)."""
    return 3 if m.mlp_matrices == 3 else 2


def _mm_calls(m: Model, c: dict) -> int:
    """A dense MLP's GEMM calls: its matrices, or 2 where gate and up are one fused weight (Phi-3's gate_up_proj)."""
    return c["gemms_mlp_gated"] if _mm(m) == 3 else 2


def mlp_calls(m: Model, c: dict) -> int:
    """torch calls of one MLP: gate, up, act, mul, down; a plain one up, activation, down (as its code writes them)."""
    return c["mlp_gated"] if _mm(m) == 3 else c["mlp_plain"]


def shared_width(m: Model) -> int:
    """The shared experts' hidden width together: one MLP F_sh·E_sh wide (DeepSeek's, Qwen2-MoE's shared MLP)."""
    e = m.moe
    return (e.d_ff_shared_expert or e.d_ff_expert) * e.n_shared_experts if e else 0


def gemms_per_step(m: Model, T):
    """(GEMM calls with T rows, GEMM calls with an expert's rows) of one eager step: per layer the attention's
    projections (q, k, v, o; 2 where qkv is fused) and a dense layer's MLP (gate, up, down; 2 fused or plain);
    an MoE layer's router, the shared experts' MLP at T rows and mm per expert hit at its rows (or two batched
    matmuls over every expert); the head."""
    c = counts(m)
    L_moe = arch.n_moe_layers(m)
    mm, mm_e = _mm_calls(m, c), _mm(m)
    T = np.asarray(T, dtype=float)
    n = c["gemms_attention"] * m.n_layers + mm * (m.n_layers - L_moe) + 1 + 0 * T
    n_e = 0 * T
    if L_moe:
        _, hit = expert_rows(m, T)
        batched = c["moe_experts"] == "batched"
        n = n + L_moe * (1 + mm * bool(m.moe.n_shared_experts) + 2 * batched)
        n_e = 0 * T if batched else L_moe * mm_e * hit
    return n, n_e


def gemm_rows_per_step(m: Model, T):
    """(weight rows N summed over the GEMM calls with T rows, the same over expert GEMMs) of one eager step.

    A CPU matrix product pays per output row of its weight (the N of an [N, K] F.linear weight) besides the
    bytes it streams: each row's dot products end in a reduction and a store, so short rows (narrow models,
    K = D of 512–1536) stream slower than long ones. Per layer q, k, v, o: N·H + 2·K·H + D; a dense MLP:
    2·F + D (a plain one F + D); an MoE layer: the router's E, per expert hit 2·F_e + D, the shared experts'
    MLP 2·F_sh·E_sh + D; the head V.
    """
    L_moe = arch.n_moe_layers(m)
    T = np.asarray(T, dtype=float)
    D, g = m.d_model, _mm(m) - 1  # gate and up, or up
    n = m.n_layers * (m.n_heads * m.head_dim + 2 * m.n_kv_heads * m.head_dim + D) + \
        (m.n_layers - L_moe) * (g * m.d_ff + D) + m.vocab_size + 0 * T
    n_e = 0 * T
    if L_moe:
        e = m.moe
        _, hit = expert_rows(m, T)
        Fs = shared_width(m)
        n = n + L_moe * (e.n_routed_experts + (g * Fs + D if Fs else 0))
        n_e = L_moe * hit * (g * e.d_ff_expert + D)
    return n, n_e


def gemm_widths(m: Model) -> tuple[list, list]:
    """([(weight elements, K)] of the GEMMs with T rows, the same for one routed expert) of one eager step.

    A CPU matrix product streams a weight at a rate that depends on its row length K (the reduction width:
    kernel blocking, the end of each row's dot product), so a step's weight time is read at each GEMM's own
    K: per layer q, k, v (K = D), o (K = N·H); a dense MLP gate, up (K = D), down (K = F); an MoE layer's
    router and shared experts; the head (K = D). An expert's gate, up (K = D) and down (K = F_e).
    """
    D, L, H = m.d_model, m.n_layers, m.head_dim
    L_moe = arch.n_moe_layers(m)
    g = _mm(m) - 1  # gate and up, or up
    dense = [(L * (m.n_heads + 2 * m.n_kv_heads) * H * D, D), (L * D * m.n_heads * H, m.n_heads * H),
             ((L - L_moe) * g * m.d_ff * D, D), ((L - L_moe) * m.d_ff * D, m.d_ff), (m.vocab_size * D, D)]
    expert: list = []
    if L_moe:
        e = m.moe
        Fs = shared_width(m)
        dense += [(L_moe * e.n_routed_experts * D, D), (L_moe * g * Fs * D, D), (L_moe * Fs * D, max(Fs, 1))]
        expert = [(g * e.d_ff_expert * D, D), (e.d_ff_expert * D, e.d_ff_expert)]
    return [(n, k) for n, k in dense if n], expert


@formula("r_width = Σ n_w / eta_w / Σ n_w", unit="")
def width_share_ratio(n_w, eta_w):
    """A step's weight-streaming time relative to the calibration's fit: each GEMM's measured rate relative to
    the fit at its width K (eta_w), weighted by its weight elements."""
    return sum(n / e for n, e in zip(n_w, eta_w)) / sum(n_w)


@formula("t_rows = n_row · t_row + n_row_e · t_row_e", unit="s")
def gemm_rows_time(n_row, t_row, n_row_e, t_row_e):
    """Device time of the GEMMs' per-row cost: weight rows at T token rows, and expert weight rows at theirs."""
    return n_row * t_row + n_row_e * t_row_e


def host_calls(m: Model, T):
    """(layer and step calls, MoE routing calls, expert calls) of one eager step carrying T tokens, as its code
    (counts) writes them. Per layer: its norms (2, 1 for GPT-J; 2 more each for sandwich norms and q/k norms), the
    attention block, the residual adds, a dense layer's MLP, a sliding layer's extra; per MoE layer the routing,
    per expert hit its glue and MLP (every expert's where the code loops over all), the shared experts' MLP and
    glue; per step the embedding, rotary angles, head and final norm."""
    c = counts(m)
    L, T = m.n_layers, np.asarray(T, dtype=float)
    L_moe = arch.n_moe_layers(m)
    mlp = mlp_calls(m, c)
    norms = c["norms"] + 2 * m.qk_norm + 2 * m.sandwich_norms
    n_host = L * (norms * c["norm"] + c["attention"] + c["residual"]) + (L - L_moe) * mlp + \
        m.n_sliding_layers * c["sliding"] + c["step"] + c["norm"] + 0 * T
    n_route = n_expert = 0 * T
    if L_moe:
        e = m.moe
        _, hit = expert_rows(m, T)
        loop = c["moe_experts"]
        n_route = L_moe * c["moe_route"] + 0 * T
        per_hit = 0 if loop == "batched" else c["moe_hit"] + mlp * (loop == "hit")
        n_expert = L_moe * (hit * per_hit + e.n_routed_experts * (c["moe_expert"] + mlp * (loop == "all")))
        n_host = n_host + L_moe * bool(e.n_shared_experts) * (mlp + c["shared"])  # the shared MLP and its glue
    return n_host, n_route, n_expert


def eager_ops(m: Model, T, act_dtype: str) -> EagerOps:
    """The inventory of one decode step carrying T tokens with activations in `act_dtype`."""
    L, D, N, K, H, F = m.n_layers, m.d_model, m.n_heads, m.n_kv_heads, m.head_dim, m.d_ff
    T = np.asarray(T, dtype=float)
    b = arch.bytes_per(act_dtype)
    cast = b != 4.0
    L_moe = arch.n_moe_layers(m)
    L_dense = L - L_moe

    def norm(n_norms, rows=T, width=D):
        """RMSNorm kernels over `rows` rows of `width` (a layer's: T rows of D; a q/k norm: T·heads rows of H)."""
        n_el = rows * width
        out = [(n_norms, 8 * n_el), (n_norms, 4 * n_el), (2 * n_norms, 8 * rows), (n_norms, 8 * n_el),
               (n_norms, 2 * b * n_el + b * width)]
        if cast:
            out += [(2 * n_norms, (4 + b) * n_el)]
        return out

    def rope(n_el):
        return [(L, b * n_el), (L, 2 * b * n_el), (2 * L, 2 * b * n_el), (L, 3 * b * n_el)]

    elt = norm((2 + 2 * m.sandwich_norms) * L + 1)  # Gemma 2/3: a norm after attention and after the MLP too
    if m.qk_norm:  # Qwen3 / Gemma 3 / OLMo 2: q and k each normed before RoPE
        elt += norm(L, T * N, H) + norm(L, T * K, H)
    elt += rope(T * N * H) + rope(T * K * H)
    elt += [(2 * L, 2 * b * T * K * H), (2 * L, 3 * b * T * D), (1, 2 * b * T * D)]  # cache writes, residuals, lookup
    elt += [(8, 8 * T * H)]  # the rotary angles
    gated = _mm(m) == 3
    elt += [(L_dense, 2 * b * T * F)] + ([(L_dense, 3 * b * T * F)] if gated else [])  # activation, gate product
    route: list = []
    n_host, n_route, n_expert = host_calls(m, T)
    if L_moe:
        e = m.moe
        Fe, E, k = e.d_ff_expert, e.n_routed_experts, e.experts_per_token
        rows, hit = expert_rows(m, T)
        # softmax, top-k, sum, div_, to, zeros, one-hot, mask sum, greater, nonzero
        route += [(L_moe, (4 + b) * T * E), (L_moe, 4 * T * E + 12 * T * k), (2 * L_moe, 4 * T * k),
                  (L_moe, (4 + b) * T * k), (L_moe, b * T * D), (L_moe, 8 * T * k * E), (L_moe, 8 * T * k * E + 8 * E),
                  (L_moe, 9 * E), (L_moe, 9 * E)]
        route += [(L_moe * hit, 8 * T * k + 16 * rows), (L_moe * hit, 2 * b * rows * D + 8 * rows),
                  (L_moe * hit, 8 * rows), (L_moe * hit, 2 * b * rows * D), (L_moe * hit, 3 * b * rows * D)]
        elt += [(L_moe * hit, 2 * b * rows * Fe)] + ([(L_moe * hit, 3 * b * rows * Fe)] if gated else [])
        if e.n_shared_experts:
            Fs = shared_width(m)
            elt += [(L_moe, 2 * b * T * Fs)] + ([(L_moe, 3 * b * T * Fs)] if gated else []) + [(L_moe, 3 * b * T * D)]
    n_gemm, n_gemm_e = gemms_per_step(m, T)
    return EagerOps(n_host=n_host, n_host_route=n_route, n_host_expert=n_expert, n_gemm=n_gemm, n_gemm_expert=n_gemm_e, elt=tuple(elt), route=tuple(route))


@formula("t_kernels = Σ n_op · t_op", unit="s")
def kernels_time(n_op, t_op):
    """Device time of a list of kernels: counts and each kernel's measured time at its bytes (t_elt, t_route)."""
    return sum(n * t for n, t in zip(n_op, t_op))


@formula("t_overhead = t_fixed + n_gemm · t_kernel + n_gemm_e · t_kernel_e + t_rows + t_elt + t_route", unit="s")
def eager_overhead_time(t_fixed, n_gemm, t_kernel, n_gemm_e, t_kernel_e, t_rows, t_elt, t_route):
    """Device time besides streaming and attention: each GEMM call's fixed cost (at T rows; an expert's at its
    own rows), the GEMMs' per-row cost (gemm_rows_time), the elementwise kernels and the routing ops."""
    return t_fixed + n_gemm * t_kernel + n_gemm_e * t_kernel_e + t_rows + t_elt + t_route


@formula("t_step = t_device + t_host_visible", unit="s")
def eager_step_time(t_device, t_host_visible):
    return t_device + t_host_visible


@formula("t_host = n_ops · t_dispatch + n_route · t_dispatch_route + n_expert · t_dispatch_expert", unit="s")
def host_time(n_ops, t_dispatch, n_route, t_dispatch_route, n_expert, t_dispatch_expert):
    """Host time of an eager step: its layer ops, its MoE routing (softmax, top-k, one-hot, the list of experts
    hit) and the glue of each expert hit (its rows, gather, scale, index_add), whose calls cost more (on a GPU
    the list of experts and each expert's rows wait for the device)."""
    return n_ops * t_dispatch + n_route * t_dispatch_route + n_expert * t_dispatch_expert


@formula("t_host_visible = (1 − o_host)·t_host + o_host·max(0, t_host − t_device)", unit="s")
def host_visible_time(t_host, t_device, o_host):
    return (1 - o_host) * t_host + o_host * np.maximum(0.0, t_host - t_device)
