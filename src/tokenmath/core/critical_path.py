"""The layout-aware critical path of a step: what the busiest chip of a replica does (`roofline.step`,
basis='prior').

With Layout(tp, ep) on G chips, attention and every non-expert weight (dense MLPs, shared experts, router,
  embeddings) are split tp ways and replicated over dp = G / tp data-parallel groups; the routed
  experts are split ep ways (each expert G / ep ways). Per chip:
      B_dp  = max(B / dp, min(B, 1)),  T_dp = B_dp · S_new   sequences and tokens of its DP group
      (a step of prompt pieces and decodes: a piece stays whole on its group, T_dp ≥ c_max + T_dec / dp)
      W_dense  = N_dense · b_w / tp                            every chip reads its replica's shard
      FLOP_body = 2 · (N_dense_mm − N_head) · T_dp / tp,  FLOP_attn = T_dp · attn_per_token / tp
      FLOP_head = 2 · N_head · R_head / tp                     the LM head (V·D) multiplies only the rows whose
                                                               logits the step samples: R_head = T_dp in decode,
                                                               B_dp in prefill (each prompt's last position)
      KV read  = B_dp · kv_seq · f_kv,  f_kv = max(1/tp, 1/K)  (KV heads split; replicated when tp > K;
                                                                MLA's latent is read whole: f_kv = 1)
  and, for the routed experts, the busiest of the ep ranks under uniform routing. A rank hosts E/ep
  experts and receives each of the T·k token-expert assignments with probability 1/ep: its load has
  mean mu = T·k/ep and variance sigma² = T·k·(1/ep)·(1 − 1/ep)·(E − k)/(E − 1) (k distinct experts per
  token: hypergeometric). The expected maximum of ep such loads is taken as mu + z_ep·sigma with
  z_n = Phi⁻¹((n − 0.375)/(n + 0.25)) (Blom's approximation to the expected largest of n normal
  order statistics), never below one assignment once there is one, times an explicit
  imbalance factor (1 = uniform; Priors.ep_imbalance or Layout.imbalance). The experts it must read
  are the same order statistic of Binomial(E/ep, E_hit/E). The busiest rank's expert GEMMs have
  M_e = load_max / hit_max rows. Matmuls with different M run at their own measured efficiency
  (Priors.curves, e.g. eta_mm.fp8 at M), and each kernel class (dense GEMMs, expert GEMMs,
  attention) pays max(its FLOP time, its bytes time).
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np

from .derive import formula

__all__ = [
    "blom_z", "dp_batch", "dp_tokens", "piece_group_tokens", "dp_tokens_pieces", "dense_matmul_params", "dense_bytes_chip", "body_flop_chip",
    "head_flop_chip",
    "attention_flop_chip", "elementwise_time_chip", "busiest_rank_load", "busiest_rank_experts", "expert_rows", "expert_flop_chip",
    "expert_bytes_chip", "dense_head_gemm_time", "expert_gemm_time", "attention_time_chip", "dense_weight_time",
    "expert_weight_time", "kv_time_chip", "math_time_chip", "weight_time_chip", "serial_kernel_time_chip",
    "expert_op_math_time", "expert_op_stream_time", "serial_kernel_time_moe_op",
]

def blom_z(n: int) -> float:
    """z_n = Phi⁻¹((n − 0.375)/(n + 0.25)): the expected largest of n standard normals (Blom 1958); z_1 = 0."""
    return NormalDist().inv_cdf((n - 0.375) / (n + 0.25))


@formula("B_dp = max(B / dp, min(B, 1))", unit="seq")
def dp_batch(B, dp):
    """Sequences on the busiest DP group: an even share, but a lone sequence still fills a whole group."""
    B = np.asarray(B, dtype=float)
    return np.maximum(B / dp, np.minimum(B, 1.0))


@formula("T_dp = B_dp · S_new", unit="tok")
def dp_tokens(B_dp, S_new):
    return B_dp * S_new


@formula("T_piece = c_max + T_dec / dp", unit="tok")
def piece_group_tokens(c_max, T_dec, dp):
    """The new tokens of the DP group that holds a step's largest prompt piece: the piece whole (a request is one
    group's, its prompt never split across groups) and that group's share of the decodes' tokens."""
    return c_max + T_dec / dp


@formula("T_dp = max(T_even, T_piece)", unit="tok")
def dp_tokens_pieces(T_even, T_piece):
    """A group's new tokens: its even share T_even = B_dp · S_new (dp_tokens), or the piece group's (piece_group_tokens)
    where one request's prompt piece is larger."""
    return np.maximum(T_even, T_piece)


@formula("N_dense_mm = N_matmul − L_moe·k·N_expert", unit="params")
def dense_matmul_params(N_matmul, L_moe, k, N_expert):
    return N_matmul - L_moe * k * N_expert


@formula("W_dense = (W_all − L_moe·E·N_expert·b_exp − N_lookup·b_emb) / tp", unit="B")
def dense_bytes_chip(W_all, L_moe, E, N_expert, b_exp, N_lookup, b_emb, tp):
    """Every weight outside the routed experts that a step reads (attention, dense MLPs, shared experts, router,
    LM head), split tp ways: each chip reads its shard of its replica."""
    return (W_all - L_moe * E * N_expert * b_exp - N_lookup * b_emb) / tp


@formula("FLOP_body = 2 · (N_dense_mm − N_head) · T_dp / tp", unit="FLOP")
def body_flop_chip(N_dense_mm, N_head, T_dp, tp):
    """The non-expert GEMMs but the LM head: every token of the DP group through its tp shard."""
    return 2 * (N_dense_mm - N_head) * T_dp / tp


@formula("FLOP_head = 2 · N_head · R_head / tp", unit="FLOP")
def head_flop_chip(N_head, R_head, tp):
    """The LM head (N_head = V·D, vocabulary-parallel over tp) on the rows whose logits the step samples: a decode
    step's every token, but a prefill's last position of each prompt only — vLLM, SGLang and TensorRT-LLM gather
    those hidden states before the head (TensorRT-LLM's gather_context_logits is off by default)."""
    return 2 * N_head * R_head / tp


@formula("FLOP_attn = T_dp · attn_per_token / tp", unit="FLOP")
def attention_flop_chip(T_dp, attn_per_token, tp):
    return T_dp * attn_per_token / tp


@formula("load_max = max(min(T·k, 1), imbalance · (T·k/ep + z_ep · sqrt(T·k·(1/ep)·(1 − 1/ep)·(E − k)/(E − 1))))",
         unit="tok")
def busiest_rank_load(T, k, ep, E, z_ep, imbalance):
    """Token-expert assignments the busiest of ep expert-parallel ranks receives (see the module docstring)."""
    T = np.asarray(T, dtype=float)
    mu = T * k / ep
    var = T * k * (1 / ep) * (1 - 1 / ep) * (E - k) / max(E - 1, 1)
    return np.maximum(np.minimum(T * k, 1.0), imbalance * (mu + z_ep * np.sqrt(var)))


@formula("hit_max = min(E/ep, load_max, max(min(1, E_hit), E_hit/ep + z_ep · sqrt(E_hit/ep · (1 − E_hit/E))))",
         unit="experts")
def busiest_rank_experts(E, ep, load_max, E_hit, z_ep):
    """Distinct experts the busiest rank must read: the largest of ep Binomial(E/ep, E_hit/E) counts."""
    E_hit = np.asarray(E_hit, dtype=float)
    mean = E_hit / ep
    approx = mean + z_ep * np.sqrt(np.maximum(mean * (1 - E_hit / E), 0.0))
    return np.minimum(np.minimum(E / ep, load_max), np.maximum(np.minimum(1.0, E_hit), approx))


@formula("M_e = load_max / hit_max", unit="tok")
def expert_rows(load_max, hit_max):
    hit = np.asarray(hit_max, dtype=float)
    return np.divide(load_max, hit, out=np.zeros(np.broadcast(load_max, hit).shape), where=hit > 0)


@formula("FLOP_experts = 2 · L_moe · N_expert · load_max / moe_tp", unit="FLOP")
def expert_flop_chip(L_moe, N_expert, load_max, moe_tp):
    return 2 * L_moe * N_expert * load_max / moe_tp


@formula("W_experts = L_moe · hit_max · N_expert · b_exp / moe_tp", unit="B")
def expert_bytes_chip(L_moe, hit_max, N_expert, b_exp, moe_tp):
    return L_moe * hit_max * N_expert * b_exp / moe_tp


@formula("t_mm_dense = FLOP_body / (F_mm · eta_mm) + FLOP_head / (F_head · eta_head)", unit="s")
def dense_head_gemm_time(FLOP_body, F_mm, eta_mm, FLOP_head, F_head, eta_head):
    """The LM head runs in its own format at its own rows: the embeddings' format, BF16 in FP8 releases, which keep
    lm_head unquantised (ModelOpt's hf_quant_config.json: "exclude_modules": ["lm_head"], e.g. aiconfigurator-core
    0.12.0 model_configs/nvidia--Llama-3.1-70B-Instruct-FP8_hf_quant_config.json)."""
    return FLOP_body / (F_mm * eta_mm) + FLOP_head / (F_head * eta_head)


@formula("t_mm_experts = FLOP_experts / (F_mm · eta_mm_e)", unit="s")
def expert_gemm_time(FLOP_experts, F_mm, eta_mm_e):
    return FLOP_experts / (F_mm * eta_mm_e)


@formula("t_mm_experts = FLOP_experts / (F_mm · eta_mm_e) + L_moe · c_route · T_op · k · D · 2 / W", unit="s")
def expert_op_math_time(FLOP_experts, F_mm, eta_mm_e, L_moe, c_route, T_op, k, D, W):
    """The fused MoE op's work that grows with its tokens (measurement.kernel_tables._moe_law): the experts' FLOP,
    and c_route passes over the T_op·k routed BF16 activations (permute, un-permute, combine)."""
    return FLOP_experts / (F_mm * eta_mm_e) + L_moe * c_route * T_op * k * D * 2.0 / W


@formula("t_w_experts = W_experts / (W · eta_bw_e) + L_moe · hit_max · t_e", unit="s")
def expert_op_stream_time(W_experts, W, eta_bw_e, L_moe, hit_max, t_e):
    """The fused MoE op's work that grows with the experts it runs: their weight read, and each one's fixed
    cost t_e (its grouped-GEMM tiles' fill and drain: what makes small experts stream slowly)."""
    return W_experts / (W * eta_bw_e) + L_moe * hit_max * t_e


@formula("t_attn = FLOP_attn / (F_attn · eta_attn)", unit="s")
def attention_time_chip(FLOP_attn, F_attn, eta_attn):
    return FLOP_attn / (F_attn * eta_attn)


@formula("t_elt = L · T_dp · a_tok / (W · eta_elt)", unit="s")
def elementwise_time_chip(L, T_dp, a_tok, W, eta_elt):
    """The layers' norm, residual-add, RoPE and activation kernels streaming their activations
    (roofline.elementwise_bytes_per_token): every rank of a tensor-parallel group runs the norms over the group's
    T_dp tokens on the whole hidden state, the activation on its 1/tp share of the MLP."""
    return L * T_dp * a_tok / (W * eta_elt)


@formula("t_logits = R_head · V · b_logit / (W · eta_elt)", unit="s")
def logits_time_chip(R_head, V, b_logit, W, eta_elt):
    """What a step does with its R_head rows of V logits after the LM head, streamed as an elementwise kernel
    (logits_pass_bytes: the tensor-parallel gather's reorder, the cast to fp32, the sampler's pass)."""
    return R_head * V * b_logit / (W * eta_elt)


@formula("t_w_dense = W_dense / (W · eta_bw)", unit="s")
def dense_weight_time(W_dense, W, eta_bw):
    return W_dense / (W * eta_bw)


@formula("t_w_experts = W_experts / (W · eta_bw_e)", unit="s")
def expert_weight_time(W_experts, W, eta_bw_e):
    return W_experts / (W * eta_bw_e)


@formula("t_kv = B_dp · kv_seq · f_kv / (W · eta_kv)", unit="s")
def kv_time_chip(B_dp, kv_seq, f_kv, W, eta_kv):
    return B_dp * kv_seq * f_kv / (W * eta_kv)


@formula("t_math = t_mm_dense + t_mm_experts + t_attn", unit="s")
def math_time_chip(t_mm_dense, t_mm_experts, t_attn):
    return t_mm_dense + t_mm_experts + t_attn


@formula("t_weights = t_w_dense + t_w_experts", unit="s")
def weight_time_chip(t_w_dense, t_w_experts):
    return t_w_dense + t_w_experts


@formula("t_serial = max(t_mm_dense, t_w_dense) + t_mm_experts + t_w_experts + max(t_attn, t_kv) "
         "− max(t_math, t_weights + t_kv)", unit="s")
def serial_kernel_time_moe_op(t_mm_dense, t_w_dense, t_mm_experts, t_w_experts, t_attn, t_kv, t_math, t_weights):
    """`serial_kernel_time_chip` where the routed experts run as one fused MoE op whose measured time is the SUM
    of its stream and its math (kernel_tables._moe_law: at serving's few rows per expert the grouped GEMM does
    not hide its weight read under its MMAs)."""
    return np.maximum(np.maximum(t_mm_dense, t_w_dense) + t_mm_experts + t_w_experts
                      + np.maximum(t_attn, t_kv) - np.maximum(t_math, t_weights + t_kv), 0.0)


@formula("t_serial = max(t_mm_dense, t_w_dense) + max(t_mm_experts, t_w_experts) + max(t_attn, t_kv) "
         "− max(t_math, t_weights + t_kv)", unit="s")
def serial_kernel_time_chip(t_mm_dense, t_w_dense, t_mm_experts, t_w_experts, t_attn, t_kv, t_math, t_weights):
    # ≥ 0 exactly; rounding can leave −1e-16, which is clamped
    return np.maximum(np.maximum(t_mm_dense, t_w_dense) + np.maximum(t_mm_experts, t_w_experts)
                      + np.maximum(t_attn, t_kv) - np.maximum(t_math, t_weights + t_kv), 0.0)


