"""Memory per chip of a training run: weights, gradients, optimizer state and activations.


Memory per chip. Mixed-precision Adam holds, per parameter, BF16 weights (2 B) and gradients (2 B) and
12 B of optimizer state: an FP32 master copy and two FP32 moments (Rajbhandari et al. 2020, "ZeRO",
arXiv 1910.02054 §3.1: 2 + 2 + 12 = 16 B/param). ZeRO stage 1 shards the optimizer state over the
data-parallel ranks, stage 2 also the gradients, stage 3 also the weights:
    N_dense_chip = N_dense / (tp · pp);  N_exp_chip = N_experts / (tp · pp · ep)
    M_state = (N_dense_chip / z_dense + N_exp_chip / z_exp) · bytes     (z = dp, resp. dp/ep, when sharded)
Activations per layer, 2-byte values, with sequence parallelism (Korthikanti et al. 2022, "Reducing
Activation Recomputation in Large Transformer Models", arXiv 2205.05198 §4, Table 2):
    none       a = s_r·b·D·(34 + 5·N·s/D) / tp    (the 5·N·s/D term is the stored attention scores)
    selective  a = 34·s·b·D / tp                  (scores recomputed: what fused-attention kernels do)
    full       2·s·b·D / tp per layer (its input) + one layer's selective working set
    reversible 2 streams of 2·s·b·D / tp per stage + one working layer: O(1) layers instead of O(L)
               (RevNets, Gomez et al. 2017, arXiv 1707.04585; ledger X3, X4), at r = 4/3 (+33 % FLOP)
The 34 counts dropout masks (2·s·b·D) that models trained without dropout do not keep. With 1F1B the
first stage holds min(M, pp) micro-batches in flight, each with L_stage = ⌈L/pp⌉ layers.
Context parallelism (cp ranks share each sequence; Llama 3, arXiv 2407.21783 §3.3.2) leaves each chip
s_r = s/cp of a sequence's tokens: every per-token activation above is written with s_r in place of s
(the scores of s_r queries still span all s keys); weights, gradients and optimizer state are not split by cp.

"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..core import arch
from ..core.derive import formula
from ..core.records import Model

__all__ = ["activation_bytes", "state_bytes", "OPTIMIZER_BYTES_PER_PARAM", "ADAM_SOURCE", "ACT_BYTES"]

# Mixed-precision Adam (ZeRO, arXiv 1910.02054 §3.1): FP32 master weights 4 B + momentum 4 B + variance 4 B.
OPTIMIZER_BYTES_PER_PARAM = 12.0
ADAM_SOURCE = "mixed-precision Adam: FP32 master 4 B + 2 FP32 moments 8 B (ZeRO, arXiv 1910.02054 §3.1)"
ACT_BYTES = 2.0  # BF16 activations and gradients on the wire


# ---- memory per chip ---------------------------------------------------------------------------

@formula("N_dense_chip = N_dense / (tp · pp)", unit="params")
def dense_params_per_chip(N_dense, tp, pp):
    return N_dense / (tp * pp)


@formula("N_exp_chip = N_experts / (tp · pp · ep)", unit="params")
def expert_params_per_chip(N_experts, tp, pp, ep):
    return N_experts / (tp * pp * ep)


@formula("M_state = (N_dense_chip / z_dense + N_exp_chip / z_exp) · b_state", unit="B")
def state_bytes(N_dense_chip, z_dense, N_exp_chip, z_exp, b_state):
    return (N_dense_chip / z_dense + N_exp_chip / z_exp) * b_state


@formula("a_none = s_r · b · D · (34 + 5 · N · s / D) / tp", unit="B")
def act_layer_none(s_r, b, D, N, s, tp):
    return s_r * b * D * (34 + 5 * N * s / D) / tp


@formula("a_sel = 34 · s · b · D / tp", unit="B")
def act_layer_selective(s, b, D, tp):
    return 34 * s * b * D / tp


@formula("a_in = 2 · s · b · D / tp", unit="B")
def act_layer_input(s, b, D, tp):
    return 2 * s * b * D / tp


@formula("n_fl = min(M, pp)", unit="")
def in_flight(M, pp):
    return np.minimum(M, pp)


@formula("M_act = n_fl · L_stage · a_layer", unit="B")
def act_stored(n_fl, L_stage, a_layer):
    return n_fl * L_stage * a_layer


@formula("M_act = n_fl · L_stage · a_in + a_sel", unit="B")
def act_full(n_fl, L_stage, a_in, a_sel):
    return n_fl * L_stage * a_in + a_sel


@formula("M_act = n_fl · 2 · a_in + a_sel", unit="B")
def act_reversible(n_fl, a_in, a_sel):
    return n_fl * 2 * a_in + a_sel


@formula("M_total = M_weights + M_grads + M_opt + M_act", unit="B")
def memory_total(M_weights, M_grads, M_opt, M_act):
    return M_weights + M_grads + M_opt + M_act


@dataclass(frozen=True)
class _Shape:
    """What the memory and communication formulas need from a model, bound once."""

    L: int
    D: int
    N: int
    L_moe: int
    k: int
    E: int
    N_dense: float
    N_experts: float
    K: int = 1  # key-value heads
    H: int = 1  # head dimension


def _shape(m: Model) -> _Shape:
    pc = arch.param_counts(m)
    L_moe = arch.n_moe_layers(m)
    N_exp = L_moe * m.moe.n_routed_experts * pc.expert if m.moe else 0.0
    return _Shape(m.n_layers, m.d_model, m.n_heads, L_moe, m.moe.experts_per_token if m.moe else 0,
                  m.moe.n_routed_experts if m.moe else 0, pc.total - N_exp, N_exp, m.n_kv_heads, m.head_dim)


def _z(zero: int, stage: int, ways: float) -> float:
    return ways if zero >= stage else 1.0


def _activations(sh: _Shape, s, b, tp, pp, M, recompute: str, reversible: bool, cp=1) -> float:
    L_stage = math.ceil(sh.L / pp)
    n = min(M, pp)
    s_r = s / cp  # tokens of a sequence on each context-parallel rank
    a_sel = act_layer_selective(s_r, b, sh.D, tp)
    if reversible:
        return act_reversible(n, act_layer_input(s_r, b, sh.D, tp), a_sel)
    if recompute == "full":
        return act_full(n, L_stage, act_layer_input(s_r, b, sh.D, tp), a_sel)
    a = act_layer_none(s_r, b, sh.D, sh.N, s, tp) if recompute == "none" else a_sel
    return act_stored(n, L_stage, a)


def activation_bytes(m: Model, *, s, b=1.0, tp=1, pp=1, M=1, recompute="selective", reversible=False,
                     cp=1) -> float:
    """Activation bytes per chip on the first pipeline stage (fast path, plain floats)."""
    return _activations(_shape(m), s, b, tp, pp, M, recompute, reversible, cp)


def _memory(sh: _Shape, s, b, tp, pp, dp, ep, zero, M, recompute, reversible, b_w, cp=1) -> tuple[float, dict]:
    nd, ne = dense_params_per_chip(sh.N_dense, tp, pp), expert_params_per_chip(sh.N_experts, tp, pp, ep)
    parts = {
        "weights": state_bytes(nd, _z(zero, 3, dp), ne, _z(zero, 3, dp / ep), b_w),
        "grads": state_bytes(nd, _z(zero, 2, dp), ne, _z(zero, 2, dp / ep), b_w),
        "opt": state_bytes(nd, _z(zero, 1, dp), ne, _z(zero, 1, dp / ep), OPTIMIZER_BYTES_PER_PARAM),
        "act": _activations(sh, s, b, tp, pp, M, recompute, reversible, cp),
    }
    return sum(parts.values()), parts
