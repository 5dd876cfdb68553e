"""Architecture accounting: parameters, FLOP per token and KV-cache bytes, from a model's shapes.

Notation: L layers, D d_model, N query heads, K KV heads, H head dim, F d_ff, V vocab, E routed
experts, k experts per token, m matrices per MLP (3 for gated SwiGLU/GeGLU, 2 otherwise).

- Attention parameters, GQA/MHA/MQA: D·N·H (Q) + 2·D·K·H (K, V) + N·H·D (O).
  MLA (DeepSeek-V2/V3): Q through a rank-r_q bottleneck, K and V rebuilt from a rank-r_kv latent plus
  a shared RoPE key (arXiv 2405.04434 §2.1).
- MLP: m·D·F; an MoE layer holds E routed + shared experts of m·D·F_e each, and a D·E router.
- FLOP per token = 2 × matmul parameters (one multiply-accumulate each) + attention over the context:
  QK and AV, 2·N·(d_qk + d_v)·S per layer, where S is capped by a sliding window or sparse top-k.
  MLA decodes in its absorbed form (scores against the latent: d_qk = r_kv + rope, d_v = r_kv).
- KV bytes per token per layer: 2·K·H·b (K and V); MLA caches (r_kv + rope)·b; DeepSeek sparse
  attention adds its indexer's key per token per layer.
- Hybrids (Model.linear_attention: Qwen3.5's Gated DeltaNet, Kimi K3's KDA, Nemotron-H's Mamba2, Jamba's Mamba1,
  MiniMax's lightning attention): L_lin of the L layers
  mix tokens through a fixed-size state instead of attention, so only the L − L_lin attention layers
  keep KV that grows with context. A linear layer holds
  N_lin = D·(2·h_k·d_k + 2·h_v·d_v + g·h_v) + h_v·d_v·D + (2·h_k·d_k + h_v·d_v)·c
  (input projections of keys, queries, values and the output gate, g scalar gates per value head; the
  output projection; a depthwise convolution of c taps), and per sequence a state of
  h_v·d_k·d_v·b_state + (2·h_k·d_k + h_v·d_v)·(c − 1)·b_conv bytes that every decode step reads and
  rewrites (read + write counted), and f·h_v·d_k·d_v FLOP per token for the recurrence (f per state
  element, LinearAttention.state_flop_per_element). Sources: the Qwen3-Next / Qwen3.5 and NemotronH
  modeling code in transformers, and aiconfigurator-core 0.12.0 sdk/models/qwen35.py
  (_gdn_state_bytes_per_request) for the same state and projection sizes.
- Attention groups (Model.attention_groups: Gemma 4, MiMo-V2-Flash, DeepSeek-V4, NAS models): layers of several
  shapes, each group g with L_g layers of its own N, K, H, H_v. A layer holds
  N_attn,g = Q + D·K·H + D·K·H_v (no V projection where values come from the keys) + O + N_extra, with
  Q = D·N·H (or D·r_q + r_q·N·H through a bottleneck) and O = N·H_v·D (or N·H_v·r_o + G_o·r_o·D, DeepSeek-V4's
  grouped low-rank output). Each token of context leaves an entry of e_g = K·(H + H_v)·b bytes (K·H·b where
  one cached vector serves as key and value); a window keeps the last w tokens, compression one entry per r
  tokens of the whole context, and an indexer's key i_g bytes per entry. Held: L_g·(e_g·(min(S, w) + S/r) +
  i_g·S/r); read per decode step: L_g·(e_g·(min(S, w) + min(S/r, top-k)) + i_g·S/r) (r = 1 without
  compression; a window-only layer keeps no body). Attention FLOP per key read 2·N·(H + H_v), per indexed
  entry 2·n_idx·d_idx. Sources: aiconfigurator-core 0.12.0 sdk/models/gemma4.py and deepseek_v4.py
  (get_kvcache_bytes_per_sequence) for the same per-group KV.
- Cross-attention (Model.cross_attention: Llama 3.2 Vision): L_x of the L layers attend to P = tiles·(patches + 1)
  vision tokens of the image instead of the text (Q, K, V, O of the self-attention shape; K and V projected from
  the P tokens once, at prefill). They keep no entry per text token; each sequence holds a fixed cache of
  kv_cross = L_x·P·2·K·H·b bytes, written at prefill and read in full by every decode step, and each text token
  spends 4·N·H·P FLOP per cross layer (QK and AV over all P, not causal). What a text token multiplies leaves out
  the cross K/V projections and the vision encoder: N_idle = L_x·2·D·K·H + N_vis, with the encoder
  N_vis = L_v·(4·D_v² + 2·D_v·F_v) + D_o·D + N_vis_extra (ViT layers, projector D_o → D, tables/norms/biases),
  held in memory and run once per image at prefill: F_image = P·(2·N_vis_mm + 4·L_v·D_v·P) + L_x·P·2·(2·D·K·H)
  (its linears over every vision token, attention over the image's P tokens, the cross K/V projections).
  P = 0 is a text-only request: the cross layers are skipped whole (N_idle adds their N_attn + N_mlp). Sources:
  transformers 4.57.1 models/mllama/modeling_mllama.py (MllamaVisionModel, MllamaCrossAttentionDecoderLayer) and
  vLLM model_executor/models/mllama.py (skip_cross_attention; encoder tokens per image).
- Output-gated attention (Qwen3.5): the query projection also yields a gate, + D·N·H parameters (MLA, Kimi K3:
  + D·N·d_v).
- Latent MoE (Nemotron 3 Super/Ultra): routed experts work in d_lat, N_expert = m·d_lat·F_e, plus a
  D×d_lat projection in and out per MoE layer (always active).
- Weight bytes: each module kind (attention, dense MLP, routed experts, shared experts, routers,
  embeddings) in its own storage format (Model.weight_dtypes, e.g. gpt-oss's MXFP4 experts beside BF16
  attention): W_all = Σ_kind N_kind·b_kind. A precision given by the caller that differs from the
  checkpoint's own (Model.weight_dtype) stores every kind in it (W_all = N_total·b_w); none, or the
  checkpoint's own, means the checkpoint as shipped.

Parameter conventions (ParamCounts): `total` and `active` count every parameter, embedding tables
included (a tied table once), as model cards do; `embedding` is the input table plus an untied LM head;
`matmul` is what one token multiplies (active minus the input lookup); `total_matmul` / `active_matmul`
leave out both tables (the non-embedding counts).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .derive import Q, formula, lift, value_of
from .records import MODULE_KINDS, Model
from .units import PRECISION_BYTES

__all__ = [
    "ParamCounts", "param_counts", "kv_bytes_per_token", "kv_read_bytes", "kv_stored_bytes", "kv_parts", "kv_tp_share",
    "flop_per_token", "attention_flop_per_token", "expected_experts_touched", "weight_bytes_touched",
    "bytes_per", "n_moe_layers", "layer_kinds", "weight_formats", "model_weight_bytes", "weight_bytes_all",
    "is_native", "n_linear_layers", "attention_layers", "recurrent_flop_per_token", "linear_layer_params", "state_bytes_per_sequence", "group_layer_params",
    "n_cross_layers", "cross_kv_bytes", "vision_params", "idle_params", "image_flop_per_sequence", "n_index_layers",
]


def bytes_per(dtype: str) -> float:
    try:
        return PRECISION_BYTES[dtype]
    except KeyError:
        raise ValueError(f"unknown precision {dtype!r}; one of {', '.join(PRECISION_BYTES)}") from None


def n_moe_layers(m: Model) -> int:
    """Layers with experts: every layer_step-th layer after the leading dense ones."""
    if m.moe is None:
        return 0
    return (m.n_layers - m.moe.first_dense_layers) // m.moe.layer_step


def n_linear_layers(m: Model) -> int:
    """Layers whose token mixer keeps a fixed-size state (Gated DeltaNet, Mamba2) instead of attention."""
    return m.linear_attention.n_layers if m.linear_attention is not None else 0


def attention_layers(m: Model) -> int:
    """Layers that run an attention kernel (full, sliding-window, cross-attention): every layer but the linear-attention
    ones, whose state update is no attention kernel."""
    return max(1, m.n_layers - n_linear_layers(m))


def n_cross_layers(m: Model) -> int:
    """Layers that attend to the image's vision tokens instead of the text (Llama 3.2 Vision)."""
    return m.cross_attention.n_layers if m.cross_attention is not None else 0


def layer_kinds(m: Model) -> tuple[int, int]:
    """(full-attention layers, sliding-window layers); linear-attention and cross-attention layers are neither."""
    return m.n_layers - m.n_sliding_layers - n_linear_layers(m) - n_cross_layers(m), m.n_sliding_layers


@formula("kv_cross = L_x · P · 2·K·H·b", unit="B")
def cross_kv(L_x, P, K, H, b):
    return L_x * P * 2 * K * H * b


def cross_kv_bytes(m: Model, kv_dtype: str | None = None, explain: bool = False):
    """The fixed cache one sequence's image leaves in the cross-attention layers (0 without any)."""
    x = m.cross_attention
    if x is None:
        return 0.0
    src = m.file or m.name
    g = lambda sym, v, unit="": lift(explain, sym, v, unit, src)  # noqa: E731
    return cross_kv(g("L_x", x.n_layers), lift(explain, "P", x.kv_tokens, "tok", m.source_of("cross_attention.kv_tokens")), g("K", m.n_kv_heads), g("H", m.head_dim),
                    g("b", bytes_per(kv_dtype or m.kv_dtype), "B"))


@formula("N_vis = L_v·(4·D_v² + 2·D_v·F_v) + D_o·D + N_vis_extra", unit="params")
def vision_encoder_params(L_v, D_v, F_v, D_o, D, N_vis_extra):
    return L_v * (4 * D_v ** 2 + 2 * D_v * F_v) + D_o * D + N_vis_extra


def vision_params(m: Model, matmul_only: bool = False) -> float:
    """The vision encoder and projector (their linear layers only where `matmul_only`); 0 without one."""
    x = m.cross_attention
    if x is None:
        return 0.0
    return float(vision_encoder_params(x.vision_layers, x.vision_d_model, x.vision_d_ff, x.vision_out_dim,
                                       m.d_model, 0.0 if matmul_only else x.vision_extra_params))


def idle_params(m: Model) -> float:
    """Parameters held but not multiplied by a text token: the vision encoder, the cross layers' K/V projections
    (their inputs are the image's tokens, projected once at prefill), and on a text-only request (P = 0) the
    cross layers whole, MLP included (serving stacks skip them)."""
    x = m.cross_attention
    if x is None:
        return 0.0
    D, N, K, H = m.d_model, m.n_heads, m.n_kv_heads, m.head_dim
    per_layer = 2 * D * K * H if x.kv_tokens else attn_params_gqa(D, N, K, H) + mlp_params(m.mlp_matrices, D, m.d_ff)
    return x.n_layers * per_layer + vision_params(m)


@formula("F_image = P·(2·N_vis_mm + 4·L_v·D_v·P) + L_x·P·2·(2·D·K·H)", unit="FLOP")
def image_flop(P, N_vis_mm, L_v, D_v, L_x, D, K, H):
    return P * (2 * N_vis_mm + 4 * L_v * D_v * P) + L_x * P * 2 * (2 * D * K * H)


def image_flop_per_sequence(m: Model, explain: bool = False):
    """FLOP one image costs at prefill, once per sequence: the vision encoder over its P tokens and the cross
    layers' K/V projections of them (0 without cross-attention, or on a text-only request)."""
    x = m.cross_attention
    if x is None or not x.kv_tokens:
        return 0.0
    src = m.file or m.name
    g = lambda sym, v, unit="": lift(explain, sym, v, unit, src)  # noqa: E731
    return image_flop(lift(explain, "P", x.kv_tokens, "tok", m.source_of("cross_attention.kv_tokens")), lift(explain, "N_vis_mm", vision_params(m, True), "params",
                      f"{src}: vision encoder and projector linears L_v·(4·D_v² + 2·D_v·F_v) + D_o·D"),
                      g("L_v", x.vision_layers), g("D_v", x.vision_d_model), g("L_x", x.n_layers), g("D", m.d_model),
                      g("K", m.n_kv_heads), g("H", m.head_dim))


@formula("N_lin = D·(2·h_k·d_k + 2·h_v·d_v + g·h_v) + h_v·d_v·D + (2·h_k·d_k + h_v·d_v)·c", unit="params")
def linear_attn_params(D, h_k, d_k, h_v, d_v, g, c):
    return D * (2 * h_k * d_k + 2 * h_v * d_v + g * h_v) + h_v * d_v * D + (2 * h_k * d_k + h_v * d_v) * c


def linear_layer_params(m: Model, explain: bool = False):
    """Parameters of one linear-attention (Gated DeltaNet / Mamba2) layer; 0 for a model without any."""
    la = m.linear_attention
    if la is None:
        return 0
    src = m.file or m.name
    g = lambda sym, v: lift(explain, sym, v, "", src)  # noqa: E731
    n = linear_attn_params(g("D", m.d_model), g("h_k", la.key_heads), g("d_k", la.key_dim), g("h_v", la.value_heads),
                           g("d_v", la.value_dim), g("g", la.gates_per_head), g("c", la.conv_kernel))
    what = {"kda": "forget-gate projection D·d_k + d_k·h_v·d_k",
            "mamba1": "x_proj d_inner·(r_dt + 2·d_state), dt_proj r_dt·d_inner and A d_inner·d_state"}.get(la.kind, "")
    return _plus(n, la.extra_params, "N_lin", what) if la.extra_params else n


@formula("state_bytes = L_lin·(h_v·d_k·d_v·b_state + (2·h_k·d_k + h_v·d_v)·max(c − 1, 0)·b_conv)", unit="B")
def linear_state_bytes(L_lin, h_k, d_k, h_v, d_v, b_state, c, b_conv):
    return L_lin * (h_v * d_k * d_v * b_state + (2 * h_k * d_k + h_v * d_v) * np.maximum(c - 1, 0) * b_conv)


def state_bytes_per_sequence(m: Model) -> float:
    """Fixed recurrent state one sequence holds over all linear-attention layers (0 without any); the
    convolution window is kept in the activations' format (BF16)."""
    la = m.linear_attention
    if la is None:
        return 0.0
    return float(linear_state_bytes(la.n_layers, la.key_heads, la.key_dim, la.value_heads, la.value_dim,
                                    bytes_per(la.state_dtype), la.conv_kernel, bytes_per("bf16")))


def group_layer_params(g, D: int) -> float:
    """Parameters of one layer of an attention group (AttentionGroup): Q + K + V + O + extra."""
    q = D * g.q_lora_rank + g.q_lora_rank * g.n_heads * g.head_dim if g.q_lora_rank else D * g.n_heads * g.head_dim
    kv = D * g.n_kv_heads * g.head_dim + (0 if g.values_from_keys else D * g.n_kv_heads * g.h_v)
    o = g.n_heads * g.h_v * g.o_lora_rank + g.o_groups * g.o_lora_rank * D if g.o_lora_rank else g.n_heads * g.h_v * D
    return float(q + kv + o + g.extra_params)


def _group_label(g) -> str:
    return f"{g.n_layers} {g.name or 'layers'}"


def _group_entry_bytes(g, b: float) -> float:
    """Bytes one cached entry of a group holds: K·(H + H_v)·b, or K·H·b where one vector is key and value."""
    return g.n_kv_heads * (g.head_dim + (0 if g.one_kv_vector else g.h_v)) * b


def _group_kv_parts(m: Model, S, kv_dtype: str | None, read: bool) -> list:
    """Each attention group's KV bytes held (read=False) or read by one decode step (read=True) for one sequence at
    context S, with its fixed per-sequence buffers (held only), as (bytes, K_g) pairs: a group's entries, index keys and
    buffers divide over its own K_g KV heads under tensor parallelism."""
    S = np.asarray(S, dtype=float)
    b = bytes_per(kv_dtype or m.kv_dtype)
    out = []
    for g in m.attention_groups:
        e = _group_entry_bytes(g, b)
        win = np.minimum(S, g.window) if g.window else 0.0
        body = S / g.compress_ratio if g.compress_ratio else (0.0 * S if g.window else S)
        kept = np.minimum(body, g.topk) if read and g.topk else body
        out.append((g.n_layers * (e * (win + kept) + g.index_bytes_per_entry * body
                                  + (0.0 if read else g.state_bytes)), g.n_kv_heads))
    return out


def _group_attention_flop(m: Model, S, causal: bool):
    """Attention FLOP for one token over the groups: 2·N·(H + H_v) per key read, 2·n_idx·d_idx per indexed entry."""
    out = 0.0
    for g in m.attention_groups:
        per_key = 2 * g.n_heads * (g.head_dim + g.h_v)
        full = _mean_context(S, None, causal)
        win = _mean_context(S, g.window, causal) if g.window else 0.0
        body = full / g.compress_ratio if g.compress_ratio else (0.0 * full if g.window else full)
        kept = np.minimum(body, g.topk) if g.topk else body
        idx = 2 * (g.index_n_heads or 0) * (g.index_head_dim or 0) * body
        out = out + g.n_layers * (per_key * (win + kept) + idx)
    return out


def n_index_layers(m: Model) -> int:
    """Layers that run their own sparse-attention indexer (all attention layers unless the config shares them)."""
    sa = m.sparse_attention
    if sa is None:
        return 0
    return sa.n_index_layers if sa.n_index_layers is not None else m.n_layers - n_linear_layers(m)


# ---- parameters ------------------------------------------------------------------------------

@formula("N_attn = D·N·H + 2·D·K·H + N·H·D", unit="params")
def attn_params_gqa(D, N, K, H):
    return D * N * H + 2 * D * K * H + N * H * D


@formula("N_attn = D·r_q + r_q·N·(d_nope + d_rope) + D·(r_kv + d_rope) + r_kv·N·(d_nope + d_v) + N·d_v·D",
         unit="params")
def attn_params_mla(D, N, r_q, r_kv, d_nope, d_rope, d_v):
    return D * r_q + r_q * N * (d_nope + d_rope) + D * (r_kv + d_rope) + r_kv * N * (d_nope + d_v) + N * d_v * D


@formula("N_index = r_q·n_idx·d_idx + D·d_idx + D·n_idx", unit="params")
def indexer_params(D, r_q, n_idx, d_idx):
    return r_q * n_idx * d_idx + D * d_idx + D * n_idx


@formula("N_mlp = m·D·F", unit="params")
def mlp_params(m, D, F):
    return m * D * F


@formula("N_expert = m·D·F_e", unit="params")
def expert_params(m, D, F_e):
    return m * D * F_e


@formula("N_total = L·N_attn + L_dense·N_mlp + L_moe·(E·N_expert + E_shared·N_shared + D·E) + V·D·n_emb",
         unit="params")
def total_params(L, N_attn, L_dense, N_mlp, L_moe, E, N_expert, E_shared, N_shared, D, V, n_emb):
    return L * N_attn + L_dense * N_mlp + L_moe * (E * N_expert + E_shared * N_shared + D * E) + V * D * n_emb


@formula("N_active = N_total − L_moe·(E − k)·N_expert", unit="params")
def active_params(N_total, L_moe, E, k, N_expert):
    return N_total - L_moe * (E - k) * N_expert


@formula("N_matmul = N_active − V·D·(n_emb − 1)", unit="params")
def matmul_params(N_active, V, D, n_emb):
    """The input embedding is a table lookup, not a matmul; a tied table is also the LM head."""
    return N_active - V * D * (n_emb - 1)


@formula("rho = N_total / N_active", unit="")
def param_ratio(N_total, N_active):
    return N_total / N_active


@dataclass(frozen=True)
class ParamCounts:
    """Parameters by component (plain floats, or Q when built with explain=True).

    `by_kind` splits `total` over MODULE_KINDS (plain floats): what each storage format multiplies.
    """

    attention_per_layer: object
    mlp_per_layer: object
    expert: object  # one routed expert
    total: object
    active: object
    matmul: object  # active minus the embedding lookup: what a token multiplies
    rho: object  # N_total / N_active
    embedding: object = 0.0  # V·D·n_emb: the input table and an untied LM head
    by_kind: dict = None  # type: ignore[assignment]

    @property
    def total_matmul(self) -> float:
        """Total without the embedding tables (the non-embedding count)."""
        return float(value_of(self.total)) - float(value_of(self.embedding))

    @property
    def active_matmul(self) -> float:
        """Active without the embedding tables."""
        return float(value_of(self.active)) - float(value_of(self.embedding))

    def as_floats(self) -> dict[str, float]:
        return {k: float(getattr(self, k).value if isinstance(getattr(self, k), Q) else getattr(self, k))
                for k in self.__dataclass_fields__ if k != "by_kind"}


def param_counts(m: Model, explain: bool = False) -> ParamCounts:
    src = m.file or m.name
    g = lambda sym, v, unit="": lift(explain, sym, v, unit, src)  # noqa: E731
    D, N, K, H, V, L = g("D", m.d_model), g("N", m.n_heads), g("K", m.n_kv_heads), g("H", m.head_dim), \
        g("V", m.vocab_size), g("L", m.n_layers)
    if m.mla is not None:
        a = m.mla
        r_q = a.q_lora_rank
        n_attn = attn_params_mla(D, N, g("r_q", r_q) if r_q else g("r_q", 0), g("r_kv", a.kv_lora_rank),
                                 g("d_nope", a.qk_nope_head_dim), g("d_rope", a.qk_rope_head_dim),
                                 g("d_v", a.v_head_dim))
        if not r_q:  # no Q bottleneck: the Q projection is D·N·(d_nope + d_rope)
            extra = m.d_model * m.n_heads * (a.qk_nope_head_dim + a.qk_rope_head_dim)
            n_attn = _plus(n_attn, extra, "N_attn", "Q projection without bottleneck")
        if m.attention_output_gate:  # Kimi K3: a D → N·d_v gate on the attention output
            n_attn = _plus(n_attn, m.d_model * m.n_heads * a.v_head_dim, "N_attn", "output gate D·N·d_v")
    elif m.attention_groups:
        L_grp = sum(gr.n_layers for gr in m.attention_groups)
        n_attn = lift(explain, "N_attn", sum(gr.n_layers * group_layer_params(gr, m.d_model) for gr in m.attention_groups)
                      / L_grp, "params", f"{src}: mean over the attention groups, Σ_g L_g·N_attn,g / L_attn "
                      f"({', '.join(_group_label(gr) for gr in m.attention_groups)})")
    else:
        n_attn = attn_params_gqa(D, N, K, H)
        if m.attention_output_gate:
            n_attn = _plus(n_attn, m.d_model * m.n_heads * m.head_dim, "N_attn", "output gate D·N·H")
    v = lambda x: float(value_of(x))  # noqa: E731
    extra = {}  # parameters outside the per-layer terms of N_total, by module kind
    if m.sparse_attention is not None:
        s = m.sparse_attention
        n_idx = indexer_params(D, g("r_q", m.mla.q_lora_rank if m.mla and m.mla.q_lora_rank else m.d_model),
                               g("n_idx", s.index_n_heads), g("d_idx", s.index_head_dim))
        if s.n_index_layers is None:
            n_attn = _plus(n_attn, n_idx, "N_attn", "attention + sparse indexer")
        else:  # indexers on some layers only (GLM-5.3)
            extra["attention"] = s.n_index_layers * v(n_idx)
    L_lin = n_linear_layers(m)
    if L_lin:
        extra["attention"] = extra.get("attention", 0.0) + L_lin * v(linear_layer_params(m))
    if m.cross_attention is not None:  # held with the embeddings: an input encoder, kept in 16 bits by FP8 releases
        extra["embeddings"] = vision_params(m)
    mm = g("m", m.mlp_matrices)
    n_mlp = mlp_params(mm, D, g("F", m.d_ff))
    L_moe = n_moe_layers(m)
    L_dense = m.n_layers - L_moe if m.n_dense_mlp_layers is None else m.n_dense_mlp_layers
    if m.moe is not None:
        E, E_sh, k = g("E", m.moe.n_routed_experts), g("E_shared", m.moe.n_shared_experts), \
            g("k", m.moe.experts_per_token)
        lat = m.moe.d_latent
        n_exp = expert_params(mm, g("d_lat", lat) if lat else D, g("F_e", m.moe.d_ff_expert))
        n_sh = n_exp
        if m.moe.d_ff_shared_expert is not None or lat:  # a shared expert of its own size (Qwen2-MoE), or in D
            n_sh = expert_params(mm, D, g("F_sh", m.moe.d_ff_shared_expert or m.moe.d_ff_expert))
            n_sh = n_sh.renamed("N_shared") if isinstance(n_sh, Q) else n_sh
        if lat:  # latent MoE: a D×d_lat projection into and out of the experts' space per MoE layer
            extra["shared_experts"] = L_moe * 2 * m.d_model * lat
    else:
        E, E_sh, k, n_exp, n_sh = g("E", 0), g("E_shared", 0), g("k", 0), g("N_expert", 0), g("N_shared", 0)
    n_emb = g("n_emb", 1 if m.tie_embeddings else 2)
    L_attn_n = sum(gr.n_layers for gr in m.attention_groups) if m.attention_groups else m.n_layers - L_lin
    L_attn = g("L_attn", L_attn_n) if L_attn_n != m.n_layers else L
    tot = total_params(L_attn, n_attn, g("L_dense", L_dense), n_mlp, g("L_moe", L_moe), E, n_exp, E_sh, n_sh,
                       D, V, n_emb)
    if extra:
        what = {"attention": "linear-attention layers L_lin·N_lin and layer-shared indexers",
                "shared_experts": "latent MoE projections L_moe·2·D·d_lat",
                "embeddings": "vision encoder and projector N_vis"}
        tot = _plus(tot, sum(extra.values()), "N_total", " + ".join(what[k] for k in extra))
    act = active_params(tot, g("L_moe", L_moe), E, k, n_exp)
    mat = matmul_params(act, V, D, n_emb)
    if m.cross_attention is not None:
        what = "the cross K/V projections" if m.cross_attention.kv_tokens else "the skipped cross layers (text only)"
        mat = _plus(mat, -idle_params(m), "N_matmul",
                    f"− N_idle: the vision encoder and {what}, not multiplied by a text token")
    emb = m.vocab_size * m.d_model * (1 if m.tie_embeddings else 2)
    nE, nS = (m.moe.n_routed_experts, m.moe.n_shared_experts) if m.moe else (0, 0)
    by_kind = {"attention": L_attn_n * v(n_attn) + extra.get("attention", 0.0),
               "mlp": L_dense * v(n_mlp), "experts": L_moe * nE * v(n_exp),
               "shared_experts": L_moe * nS * v(n_sh) + extra.get("shared_experts", 0.0),
               "router": L_moe * m.d_model * nE, "embeddings": float(emb) + extra.get("embeddings", 0.0)}
    return ParamCounts(n_attn, n_mlp, n_exp, tot, act, mat, param_ratio(tot, act), g("N_emb", emb, "params"),
                       by_kind)


def _plus(q, extra, name: str, what: str):
    if isinstance(q, Q):
        e = extra if isinstance(extra, Q) else Q(what, extra, "params")
        return Q(name, q.value + e.value, "params", f"{name} = a + b", {"a": q, "b": e})
    return q + (extra.value if isinstance(extra, Q) else extra)


# ---- KV cache --------------------------------------------------------------------------------

def _kv_per_attention_layer(m: Model, kv_dtype: str | None = None) -> float:
    """Bytes the main attention caches per token, averaged over the attention layers (cross-layer sharing:
    only n_kv_layers of them keep a cache)."""
    b = bytes_per(kv_dtype or m.kv_dtype)
    L_attn = m.n_layers - n_linear_layers(m) - n_cross_layers(m)
    if L_attn == 0:  # a state-space model: no attention layer, no KV cache
        return 0.0
    share = (m.n_kv_layers or L_attn) / L_attn
    if m.mla is not None:
        return (m.mla.kv_lora_rank + m.mla.qk_rope_head_dim) * b * share
    return 2 * m.n_kv_heads * m.head_dim * b * share


def kv_bytes_per_token_layer(m: Model, kv_dtype: str | None = None) -> float:
    """Bytes the main attention caches per token per layer (excluding a sparse indexer's keys).

    With cross-layer KV sharing (`n_kv_layers` < L), or a hybrid's linear-attention layers, this is the mean
    over all L layers: only the layers that keep a cache count.
    """
    return _kv_per_attention_layer(m, kv_dtype) * (m.n_layers - n_linear_layers(m) - n_cross_layers(m)) / m.n_layers


@formula("kv_bytes_per_token = L · (kv_layer + idx_layer)", unit="B/tok")
def kv_per_token(L, kv_layer, idx_layer):
    return L * (kv_layer + idx_layer)


def kv_bytes_per_token(m: Model, kv_dtype: str | None = None, explain: bool = False):
    """KV bytes per token of context over all layers, as if every layer kept every token."""
    src = m.file or m.name
    if m.attention_groups:  # each group: entry bytes per token, 1/r of them where compressed
        b = bytes_per(kv_dtype or m.kv_dtype)
        grp = m.attention_groups
        kv = sum(gr.n_layers * _group_entry_bytes(gr, b) / (gr.compress_ratio or 1) for gr in grp) / m.n_layers
        ix = sum(gr.n_layers * gr.index_bytes_per_entry / (gr.compress_ratio or 1) for gr in grp) / m.n_layers
        what = "; ".join(f"{_group_label(gr)}: {_group_entry_bytes(gr, b):g} B"
                         + (f"/{gr.compress_ratio}" if gr.compress_ratio else "") for gr in grp)
        return kv_per_token(lift(explain, "L", m.n_layers, "", src),
                            lift(explain, "kv_layer", kv, "B/tok", f"mean over layers of K·(H + H_v)·b per group "
                                 f"({what}), {kv_dtype or m.kv_dtype} ({src})"),
                            lift(explain, "idx_layer", ix, "B/tok", "indexer keys per compressed entry"))
    idx = m.sparse_attention.index_bytes_per_token_layer * n_index_layers(m) / m.n_layers if m.sparse_attention \
        else 0.0
    kind = "MLA latent (r_kv + d_rope)·b" if m.mla else "2·K·H·b"
    if m.n_kv_layers or m.linear_attention or m.cross_attention:
        kind += (f" × {m.n_kv_layers or m.n_layers - n_linear_layers(m) - n_cross_layers(m)}/{m.n_layers} layers "
                 "with their own KV")
    return kv_per_token(lift(explain, "L", m.n_layers, "", src),
                        lift(explain, "kv_layer", kv_bytes_per_token_layer(m, kv_dtype), "B/tok", f"{kind}, "
                             f"{kv_dtype or m.kv_dtype} ({src})"),
                        lift(explain, "idx_layer", idx, "B/tok", "sparse-attention indexer key (FP8 + scale)"))


def kv_parts(m: Model, S, kv_dtype: str | None = None, read: bool = False) -> list:
    """A sequence's KV bytes at context S, held (read=False) or read by one decode step (read=True), as (bytes, heads)
    pairs: the bytes divide over `heads` ways under tensor parallelism (KV heads; a linear-attention state's value
    heads; 1 where every chip of the group reads them whole: MLA's latent, a sparse indexer's one key per token).

    Held: full layers keep all S tokens, sliding layers min(S, W); a hybrid's linear-attention layers their fixed
    state whatever S, cross-attention layers the image's cache. Read: sparse attention reads its top-k tokens plus the
    indexer's key for every token; a linear-attention layer reads its state and writes it back (2 × state bytes)."""
    S = np.asarray(S, dtype=float)
    state = state_bytes_per_sequence(m) * (2 if read else 1)
    la = m.linear_attention
    parts = [(state if state else 0.0, la.value_heads if la else 1)]
    if m.attention_groups:
        return _group_kv_parts(m, S, kv_dtype, read) + parts
    full, sliding = layer_kinds(m)
    per = _kv_per_attention_layer(m, kv_dtype)
    S_full = np.minimum(S, m.sparse_attention.index_topk) if m.sparse_attention and read else S
    kept = full * S_full + (sliding * np.minimum(S, m.sliding_window) if sliding else 0.0)
    idx = m.sparse_attention.index_bytes_per_token_layer * n_index_layers(m) * S if m.sparse_attention else 0.0
    cross = cross_kv_bytes(m, kv_dtype)  # the image's cache: read whole, never rewritten
    return [(per * kept, 1 if m.mla is not None else m.n_kv_heads), (idx, 1), *parts,
            (cross if cross else 0.0, m.n_kv_heads)]


def kv_stored_bytes(m: Model, S, kv_dtype: str | None = None):
    """KV bytes held for one sequence of S tokens (kv_parts, held)."""
    return sum(b for b, _ in kv_parts(m, S, kv_dtype, read=False))


def kv_read_bytes(m: Model, S, kv_dtype: str | None = None):
    """KV bytes one decode step reads for one sequence at context S (kv_parts, read)."""
    return sum(b for b, _ in kv_parts(m, S, kv_dtype, read=True))


def kv_tp_share(m: Model, S, kv_dtype: str | None, tp, read: bool = True):
    """The share of a sequence's KV bytes one chip of a tp-way tensor-parallel group reads (read) or holds: each
    part's max(1/tp, 1/heads) (a part replicated where tp exceeds its heads), weighted by the part's bytes; written as
    f_main + Σ b·(f − f_main)/Σ b about the main cache's share (max(1/tp, 1/K), MLA 1), so a cache of one part is
    that share exactly."""
    tp = np.asarray(tp, dtype=float)
    f_main = 1.0 if m.mla is not None else np.maximum(1.0 / tp, 1.0 / m.n_kv_heads)
    parts = kv_parts(m, S, kv_dtype, read)
    total = sum(np.asarray(b, dtype=float) for b, _ in parts)
    dev = sum(np.asarray(b, dtype=float) * (np.maximum(1.0 / tp, 1.0 / h) - f_main) for b, h in parts)
    return f_main + np.where(total > 0, dev / np.where(total > 0, total, 1.0), 0.0)


# ---- FLOP ------------------------------------------------------------------------------------

def _mean_context(S, window, causal: bool):
    """Mean number of keys a query sees: S in decode; (S+1)/2 over a causal prompt; window-capped."""
    S = np.asarray(S, dtype=float)
    if not causal:
        return S if window is None else np.minimum(S, window)
    if window is None:
        return (S + 1) / 2
    W = float(window)
    Ssafe = np.maximum(S, 1.0)
    capped = (W * (W + 1) / 2 + (Ssafe - W) * W) / Ssafe
    return np.where(S <= W, (S + 1) / 2, capped)


def recurrent_flop_per_token(m: Model) -> float:
    """The linear-attention layers' state update, FLOP a token (0 without any): L_lin · f · h_v · d_k · d_v, f the
    FLOP each state element costs (LinearAttention.state_flop_per_element)."""
    la = m.linear_attention
    return float(la.n_layers * la.state_flop_per_element * la.value_heads * la.key_dim * la.value_dim) if la else 0.0


def attention_flop_per_token(m: Model, S, phase: str = "decode"):
    """Attention FLOP for one token at context S (decode) or averaged over a causal prompt of S (prefill)."""
    causal = phase == "prefill"
    recur = recurrent_flop_per_token(m)
    if m.attention_groups:
        return _group_attention_flop(m, S, causal) + recur
    full, sliding = layer_kinds(m)
    if m.mla is not None:
        a = m.mla
        if phase == "decode":  # absorbed: scores and values against the latent
            d_qk, d_v = a.kv_lora_rank + a.qk_rope_head_dim, a.kv_lora_rank
        else:
            d_qk, d_v = a.qk_nope_head_dim + a.qk_rope_head_dim, a.v_head_dim
    else:
        d_qk = d_v = m.head_dim
    per_key = 2 * m.n_heads * (d_qk + d_v)
    if m.sparse_attention is not None:
        sa = m.sparse_attention
        ctx = np.minimum(_mean_context(S, None, causal), sa.index_topk)
        indexer = 2 * sa.index_n_heads * sa.index_head_dim * _mean_context(S, None, causal)
        return full * per_key * ctx + n_index_layers(m) * indexer + recur
    out = full * per_key * _mean_context(S, None, causal)
    if m.cross_attention is not None and m.cross_attention.kv_tokens:  # every text token sees all P image tokens
        out = out + n_cross_layers(m) * per_key * m.cross_attention.kv_tokens
    if sliding:
        out = out + sliding * per_key * _mean_context(S, m.sliding_window, causal)
    return out + recur if recur else out


def flop_per_token(m: Model, S, phase: str = "decode"):
    """2·N_matmul + attention FLOP at context S."""
    return 2 * param_counts(m).matmul + attention_flop_per_token(m, S, phase)


# ---- weight bytes: per module kind, and touched by a step ------------------------------------------

def is_native(m: Model, precision: str | None) -> bool:
    """True when `precision` means the checkpoint as shipped: none given, or the checkpoint's own format."""
    return precision is None or precision == m.weight_dtype


def weight_formats(m: Model, precision: str | None = None) -> dict[str, str]:
    """The storage format of each module kind: the checkpoint's own (native), else `precision` for all."""
    if not is_native(m, precision):
        return {k: precision for k in MODULE_KINDS}
    return {k: m.weight_dtypes.get(k, m.weight_dtype) for k in MODULE_KINDS}


@formula("W_all = N_total · b_w", unit="B")
def weight_bytes_all(N_total, b_w):
    return N_total * b_w


@formula("W_all = N_attn·b_attn + N_mlp·b_mlp + N_exp·b_exp + N_shared·b_shared + N_router·b_router + N_emb·b_emb",
         unit="B")
def weight_bytes_mixed(N_attn, b_attn, N_mlp, b_mlp, N_exp, b_exp, N_shared, b_shared, N_router, b_router, N_emb,
                       b_emb):
    return N_attn * b_attn + N_mlp * b_mlp + N_exp * b_exp + N_shared * b_shared + N_router * b_router + N_emb * b_emb


_SYM = {"attention": "attn", "mlp": "mlp", "experts": "exp", "shared_experts": "shared", "router": "router",
        "embeddings": "emb"}


def model_weight_bytes(m: Model, precision: str | None = None, explain: bool = False, pc: ParamCounts | None = None):
    """Bytes of every weight: one format for all (N_total·b_w), or each module kind in its own."""
    pc = pc or param_counts(m, explain)
    fmts = weight_formats(m, precision)
    src = m.file or m.name
    if len(set(fmts.values())) == 1:
        f = next(iter(fmts.values()))
        return weight_bytes_all(pc.total, lift(explain, "b_w", bytes_per(f), "B", f"{f} weights"))
    args = {}
    for k in MODULE_KINDS:
        sym = _SYM[k]
        args[f"N_{sym}"] = lift(explain, f"N_{sym}", pc.by_kind[k], "params", f"{src}: {k} parameters")
        how = m.sources.get(f"weight_dtypes.{k}") or m.sources.get("weight_dtypes") or src
        args[f"b_{sym}"] = lift(explain, f"b_{sym}", bytes_per(fmts[k]), "B", f"{fmts[k]} {k} ({how})")
    return weight_bytes_mixed(**args)


@formula("E_hit = E · (1 − (1 − k/E)^(T·imbalance_free))", unit="")
def expected_experts_touched(E, k, T, imbalance_free=1.0):
    """Distinct experts hit when T tokens each pick k of E uniformly (imbalance_free ≤ 1 shrinks T)."""
    T = np.asarray(T, dtype=float)
    return E * (1.0 - np.power(1.0 - k / E, T * imbalance_free))


@formula("W_touched = W_all − L_moe·(E − E_hit)·N_expert·b_exp − N_lookup·b_emb", unit="B")
def weights_touched(W_all, L_moe, E, E_hit, N_expert, b_exp, N_lookup, b_emb):
    return W_all - L_moe * (E - E_hit) * N_expert * b_exp - N_lookup * b_emb


def lookup_params(m: Model, native: bool = True) -> float:
    """Parameters a text step does not read, counted at the embedding tables' format: an untied input table (a
    lookup), and the idle weights of a vision model (idle_params): the encoder (stored like the embeddings) and the
    cross layers' idle projections, scaled by their format's bytes over the tables' where the checkpoint stores
    them apart (`native`)."""
    n = 0.0 if m.tie_embeddings else float(m.vocab_size * m.d_model)
    x = m.cross_attention
    if x is None:
        return n
    fmts = weight_formats(m) if native else {k: "bf16" for k in MODULE_KINDS}
    b_emb = bytes_per(fmts["embeddings"])
    D, N, K, H = m.d_model, m.n_heads, m.n_kv_heads, m.head_dim
    attn = 2 * D * K * H if x.kv_tokens else attn_params_gqa(D, N, K, H)
    mlp = 0 if x.kv_tokens else mlp_params(m.mlp_matrices, D, m.d_ff)
    return n + vision_params(m) + x.n_layers * (attn * bytes_per(fmts["attention"])
                                                + mlp * bytes_per(fmts["mlp"])) / b_emb


def weight_bytes_touched(m: Model, T, weight_bytes_per_param=None, explain: bool = False,
                         pc: ParamCounts | None = None):
    """Bytes of weights one step reads when it carries T tokens: all but the experts nobody chose.

    At T = 1 an MoE reads only its k active experts per layer; as T grows it reads all E. An untied
    input-embedding table is a lookup: the step reads T of its V rows, not the table (N_lookup = V·D,
    counted as not read); a tied table is read whole as the LM head. `weight_bytes_per_param` stores
    every weight in one format (a number, or a Q); None reads the checkpoint's own formats per module kind.
    """
    pc = pc or param_counts(m, explain)
    src = m.file or m.name
    g = lambda sym, v, unit="": lift(explain, sym, v, unit, src)  # noqa: E731
    if weight_bytes_per_param is None:
        fmts = weight_formats(m)
        W_all = model_weight_bytes(m, None, explain, pc)
        b_exp = lift(explain, "b_exp", bytes_per(fmts["experts"]), "B", f"{fmts['experts']} experts")
        b_emb = lift(explain, "b_emb", bytes_per(fmts["embeddings"]), "B", f"{fmts['embeddings']} embeddings")
    else:
        W_all = weight_bytes_all(pc.total, weight_bytes_per_param)
        b_exp = b_emb = weight_bytes_per_param
    lookup = g("N_lookup", lookup_params(m, weight_bytes_per_param is None), "params")
    if m.moe is None:
        T0 = np.asarray(T.value if isinstance(T, Q) else T, dtype=float)
        return weights_touched(W_all, g("L_moe", 0), g("E", 0), g("E_hit", 0.0 * T0), g("N_expert", 0), b_exp,
                               lookup, b_emb)
    E, k = g("E", m.moe.n_routed_experts), g("k", m.moe.experts_per_token)
    hit = expected_experts_touched(E, k, T)
    return weights_touched(W_all, g("L_moe", n_moe_layers(m)), E, hit, pc.expert, b_exp, lookup, b_emb)
