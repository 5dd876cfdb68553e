"""Read a Hugging Face `config.json` into a `Model` record (what `tokenmath.core.load.load_model` calls for *.json).

Every field the reader uses is validated first (`_Fields`, pydantic: type, range, a sane upper bound), so a
malformed or hostile config gives one line naming the file and field, never a traceback: booleans or
strings where sizes belong, Infinity / 1e30 / 10**400, zero or negative sizes, 2**31 layers, lists of the
wrong kind. The file is read with a size limit and JSON nested deeper than a config ever is is refused.

Families (by `model_type`, else by `architectures`; `FAMILIES` lists them): Llama 1-3 and the models
that reuse its config (`llama`: Llama 2/3.x, CodeLlama, Yi, DeepSeek-LLM, TinyLlama, SmolLM...),
Mistral, Mixtral, Qwen2/2.5/3 dense and MoE (`qwen2`, `qwen3`, `qwen2_moe`, `qwen3_moe`), DeepSeek
MoE / V2 / V3 / V3.2 and Kimi K2 (`deepseek`, `deepseek_v2`, `deepseek_v3`, `deepseek_v32`, `kimi_k2`),
GLM-4 and GLM-4.5/4.6/4.7 (`glm4`, `glm4_moe`), gpt-oss, Gemma 1/2/3, Llama 4, Phi-3/Phi-4 and
Phi-3.5-MoE (`phi3`, `phimoe`), OLMo/OLMo 2/OLMoE, Falcon (MQA, and the new decoder of 40B/180B),
GPT-J, GPT-NeoX/Pythia, GPT-2, StarCoder 1/2 (`gpt_bigcode`, `starcoder2`), Bloom, OPT, MPT, DBRX,
Cohere Command R (`cohere`, `cohere2`), Granite, StableLM, InternLM2, Nemotron, MiniMax-M2. A
multimodal config whose language model sits under `text_config` (Gemma 3, Llama 4, Mistral 3, Qwen-VL
...), or wrapped by one (Kimi K2.5/K2.6), is read from there (vision towers are not counted; Llama 3.2 Vision,
`mllama`, counts its vision tower and reads cross_attention_layers as records.CrossAttention). GLM-5.x
(`glm_moe_dsa`: MLA + sparse indexer; indexer_types shares indexers), Step-3.7 and MiMo read as their
relatives. Hybrids are modelled physically (records.LinearAttention): Qwen3-Next / Qwen3.5 / Qwen3.6
Gated DeltaNet layers (layer_types 'linear_attention'; linear_num_* heads and dims) and Nemotron-H /
Nemotron 3 Mamba2 blocks (hybrid_override_pattern or layers_block_type; blocks regrouped as mixer + MLP
pairs, counts exact; moe_latent_size latent MoE), Mamba2 in transformers' own naming (`bamba`: attn_layer_indices;
`granitemoehybrid`, Granite 4.0-H: layer_types mamba/attention, routed experts beside a shared MLP, or dense where
num_local_experts is 0; `falcon_h1`: attention and Mamba2 side by side in every layer, counted as 2L mixer layers
sharing L MLPs), Jamba's Mamba1 layers (`jamba`: attn_layer_period/offset, expert_layer_period/offset;
mamba_d_state, mamba_expand, mamba_dt_rank), MiniMax-Text-01 / M1's lightning attention (`minimax`,
`minimax_text_01`: layer_types 'linear_attention' or attn_type_list 0), and Kimi K3's Kimi Delta Attention layers beside MLA
(`kimi_linear`: linear_attn_config kda_layers / full_attn_layers; mla_use_output_gate; routed_expert_hidden_size
latent MoE; num_experts_per_token, num_shared_experts). Layers of several attention shapes are read as groups
(records.AttentionGroup): Gemma 4 (sliding layers, and global layers with global_head_dim,
num_global_key_value_heads, attention_k_eq_v), MiMo-V2-Flash (hybrid_layer_pattern, swa_* shapes, v_head_dim),
DeepSeek-V4 (compress_ratios 0/4/128: window, CSA with a top-k indexer over FP4 keys, HCA; q/o low rank with
o_groups; hc_mult hyper-connection mixers; expert_dtype fp4), MiniMax-M3 (sparse_attention_config: block-sparse
layers reading the top sparse_topk_blocks + local blocks, index keys estimated; dense_intermediate_size) and Llama-Nemotron NAS (block_configs: attention
kept or removed per layer, FFN widths summed exactly). Pure state-space models (`mamba`, `falcon_mamba`, `mamba2`)
keep no KV at all: every layer one mixer and no MLP. Other recurrent models (RWKV, xLSTM, Griffin...) and the
variants in _NOT_YET are refused with the reason. A ModelOpt `hf_quant_config.json` beside the config is read as its
quantization_config; per-module mixed precision (quantized_layers, config_groups by module name) is read
per module kind.

Key map (config.json -> Model field), with the aliases older families use:

- hidden_size | n_embd | d_model -> d_model; num_hidden_layers | n_layer | n_layers -> n_layers;
  num_attention_heads | n_head | n_heads -> n_heads; num_key_value_heads | num_kv_heads |
  multi_query_group_num | attn_config.kv_n_heads (multi_query -> 1) -> n_kv_heads (default n_heads);
  head_dim | kv_channels -> head_dim (default hidden/heads; MLA: v_head_dim); intermediate_size |
  n_inner | ffn_hidden_size | ffn_dim (else expansion_ratio·D or 4·D) -> d_ff; vocab_size |
  padded_vocab_size; tie_word_embeddings (family default where absent); max_position_embeddings |
  n_positions | max_seq_len | seq_length -> max_context. MLP matrices: 3 for gated (SwiGLU/GeGLU)
  families, 2 for GPT-2/J/NeoX, Falcon, Bloom, OPT, MPT, StarCoder, Nemotron.
- MoE: num_local_experts | num_experts | n_routed_experts | ffn_config.moe_num_experts ->
  n_routed_experts; num_experts_per_tok | experts_per_token | moe_top_k -> experts_per_token;
  n_shared_experts (Qwen2-MoE: one shared expert of shared_expert_intermediate_size; Llama 4: one);
  moe_intermediate_size (Mixtral-style families: intermediate_size) -> d_ff_expert; the MoE layers each
  family's code selects (first_k_dense_replace + moe_layer_freq, decoder_sparse_step + mlp_only_layers,
  interleave_moe_layer_step / moe_layers) -> first_dense_layers + layer_step. Where the positions cannot
  be written that way the count is kept exact (the parameter count only needs the count).
- MLA: kv_lora_rank, q_lora_rank, qk_rope_head_dim, qk_nope_head_dim, v_head_dim; DeepSeek-V3.2 adds
  index_topk, index_n_heads, index_head_dim -> sparse_attention.
- Local attention: layer_types (sliding_attention / chunked_attention count as windowed) or, without it,
  the family rule: Gemma 2 and gpt-oss alternate (even layers local), Gemma 3 / Cohere 2
  sliding_window_pattern (every n-th layer global), Llama 4 no_rope_layers / 3 of 4 chunked
  (attention_chunk_size, modelled as a window), Mistral, Phi-3 and StarCoder 2 sliding_window on every
  layer, Qwen2/3 use_sliding_window above max_window_layers.
- Weight formats, per module kind (Model.weight_dtypes): quantization_config names the quantised
  format of the linear layers (fp8; mxfp4 at 4.25 bits with its scales; ModelOpt NVFP4 at 4.5 bits;
  int4/int8 from bits or bitsandbytes, weight-only; compressed-tensors config_groups, whose 8-bit integer weights
  beside 8-bit integer input_activations, as ModelOpt's INT8_SQ, are w8a8: core/units.py); the embedding tables and the
  MoE routers stay in torch_dtype (quantisers leave them, e.g. DeepSeek-V3's FP8 checkpoint), and so does
  every module `modules_to_not_convert` / `ignore` names (gpt-oss: attention, router, embeddings -> BF16,
  MXFP4 experts). Without quantization_config every module is in torch_dtype / dtype. KV dtype is bf16
  (what serving stacks default to) unless the config quantises the KV cache (kv_cache_quant_algo FP8).

Not represented, and small: biases, norms, attention sinks, MTP heads (num_nextn_predict_layers); each
is named in the record's notes where the config has it.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictBool, StrictStr, ValidationError

from .errors import CatalogError
from .files import read_text
from .records import MLA, MODULE_KINDS, AttentionGroup, CrossAttention, LinearAttention, Model, MoE, SparseAttention

__all__ = ["model_from_hf_config", "read_hf_config", "FAMILIES", "MAX_CONFIG_BYTES"]

MAX_CONFIG_BYTES = 4 * 2**20  # a config.json is a few kB; tokenizer-sized files are not configs
_MAX_DEPTH = 32  # configs nest three or four levels deep


# ---- validated fields ------------------------------------------------------------------------------

def _integral(v: Any) -> Any:
    """JSON has one number type: accept 4096.0 as 4096; refuse Infinity, NaN, 0.5 and booleans."""
    if isinstance(v, bool):
        raise ValueError("must be an integer, got a boolean")
    if isinstance(v, float):
        if not math.isfinite(v):
            raise ValueError(f"must be a finite integer, got {v!r}")
        if not v.is_integer():
            raise ValueError(f"must be an integer, got {v!r}")
        if abs(v) > 2**53:
            raise ValueError("is absurdly large")
        return int(v)
    if isinstance(v, int) and abs(v) > 2**53:
        raise ValueError("is absurdly large")
    if not isinstance(v, int):
        raise ValueError(f"must be an integer, got {_short(v)}")
    return v


def _layer_freq(v: Any) -> Any:
    """moe_layer_freq: every n-th layer (1..4096), or a list of 0/1, one per layer (MiMo-V2-Flash, MiniMax-M3)."""
    if v is None:
        return v
    if isinstance(v, list):
        if len(v) > 4096 or any(_integral(x) not in (0, 1) for x in v):
            raise ValueError("must be a layer step or a list of 0/1 per layer")
        return [_integral(x) for x in v]
    n = _integral(v)
    if not 1 <= n <= 4096:
        raise ValueError(f"must be at least 1, got {n}" if n < 1 else f"must be at most 4096, got {n}")
    return n


def _auto_size(v: Any) -> Any:
    """A width that transformers also accepts as "auto" (mamba_d_head: derived from the Mamba width and heads)."""
    if v is None or v == "auto":
        return None
    n = _integral(v)
    if not 1 <= n <= 2**20:
        raise ValueError(f"must be a width from 1 to {2**20}, got {n}")
    return n


def _int(lo: int, hi: int):
    return Annotated[int, BeforeValidator(_integral), Field(ge=lo, le=hi)]


def _same_per_layer(v: Any) -> Any:
    """A value written once per layer (Hunyuan-A13B's moe_topk and moe_intermediate_size, which transformers'
    HunYuanMoEV1 indexes by layer): read where every layer has the same one."""
    if not isinstance(v, list):
        return v
    if not v or any(x != v[0] for x in v):
        raise ValueError("must be one value, or the same value for every layer")
    return v[0]


Size = _int(1, 2**20)  # widths: d_model, heads, head dim, d_ff, ranks
Count = _int(0, 2**16)  # counts that may be zero (dense layers, shared experts)
Layers = _int(1, 4096)
Experts = _int(1, 2**16)
Tokens = _int(1, 2**31)  # context lengths, windows, chunks, top-k
Vocab = _int(1, 2**24)
Step = _int(1, 4096)


class _Quant(BaseModel):
    model_config = ConfigDict(extra="ignore")
    quant_method: StrictStr | None = None
    quant_algo: StrictStr | None = None  # ModelOpt: FP8, NVFP4, W4A16_AWQ...
    fmt: StrictStr | None = None
    bits: _int(1, 32) | None = None
    load_in_4bit: StrictBool | None = None
    load_in_8bit: StrictBool | None = None
    modules_to_not_convert: list[StrictStr] | None = None
    ignore: list[StrictStr] | None = None
    exclude_modules: list[StrictStr] | None = None
    config_groups: dict[str, "_Group"] | None = None
    kv_cache_quant_algo: StrictStr | None = None
    kv_cache_scheme: "_Scheme | StrictStr | None" = None  # ModelOpt writes a plain "FP8" here
    weight_block_size: list[_int(1, 2**16)] | None = None  # block-scaled FP8: [rows, cols] per scale
    quantized_layers: dict[str, "_Layer"] | None = None  # ModelOpt MIXED_PRECISION: module -> its quant_algo


class _Scheme(BaseModel):
    model_config = ConfigDict(extra="ignore")
    num_bits: _int(1, 32) | None = None
    type: StrictStr | None = None
    group_size: _int(1, 2**20) | None = None


class _Group(BaseModel):
    model_config = ConfigDict(extra="ignore")
    weights: _Scheme | None = None
    input_activations: _Scheme | None = None
    targets: list[StrictStr] | None = None


class _Layer(BaseModel):
    model_config = ConfigDict(extra="ignore")
    quant_algo: StrictStr | None = None


class _Fields(BaseModel):
    """The keys the reader uses, each with its type and range (everything else in a config is ignored)."""

    model_config = ConfigDict(extra="ignore")
    model_type: StrictStr | None = None
    architectures: list[StrictStr] | None = None
    hidden_size: Size | None = None
    n_embd: Size | None = None
    d_model: Size | None = None
    n_embed: Size | None = None
    num_hidden_layers: Layers | None = None
    n_layer: Layers | None = None
    n_layers: Layers | None = None
    num_layers: Layers | None = None
    num_attention_heads: Size | None = None
    n_head: Size | None = None
    n_heads: Size | None = None
    num_heads: Size | None = None
    attention_heads: Size | None = None
    num_key_value_heads: Size | None = None
    num_kv_heads: Size | None = None
    n_head_kv: Size | None = None
    multi_query_group_num: Size | None = None
    multi_query: StrictBool | None = None
    new_decoder_architecture: StrictBool | None = None
    head_dim: Size | None = None
    kv_channels: Size | None = None
    dim_head: Size | None = None
    intermediate_size: Size | None = None
    intermediate_size_mlp: Size | None = None
    n_inner: Size | None = None
    ffn_hidden_size: Size | None = None
    ffn_dim: Size | None = None
    dff: Size | None = None
    dim_ff: Size | None = None
    expansion_ratio: _int(1, 1024) | None = None
    intermediate_multiple_size: _int(1, 1024) | None = None
    vocab_size: Vocab | None = None
    padded_vocab_size: Vocab | None = None
    tie_word_embeddings: StrictBool | None = None
    max_position_embeddings: Tokens | None = None
    n_positions: Tokens | None = None
    max_seq_len: Tokens | None = None
    seq_length: Tokens | None = None
    # MoE
    num_local_experts: Count | None = None  # 0: Granite 4.0-H's dense models
    num_experts: Experts | None = None
    n_routed_experts: Experts | None = None
    num_experts_per_tok: Count | None = None  # 0: Granite 4.0-H dense models
    experts_per_token: Experts | None = None
    moe_top_k: Experts | None = None
    moe_topk: Annotated[Experts, BeforeValidator(_same_per_layer)] | None = None
    moe_k: Experts | None = None
    moe_num_experts: Experts | None = None
    moe_num_shared_experts: Count | None = None
    shared_intermediate_size: _int(0, 2**20) | None = None
    moe_layer_start_index: _int(0, 4096) | None = None
    moe_layer_end_index: _int(0, 4096) | None = None
    moe_layer_interval: Step | None = None
    is_moe: StrictBool | None = None
    n_shared_experts: Count | None = None
    moe_intermediate_size: Annotated[Size, BeforeValidator(_same_per_layer)] | None = None
    shared_expert_intermediate_size: _int(0, 2**20) | None = None
    first_k_dense_replace: _int(0, 4096) | None = None
    moe_layer_freq: Annotated[Any, BeforeValidator(_layer_freq)] = None  # a step, or one 0/1 per layer (MiMo-V2-Flash)
    decoder_sparse_step: Step | None = None
    mlp_only_layers: list[_int(0, 4095)] | None = None
    moe_layers: list[_int(0, 4095)] | None = None
    interleave_moe_layer_step: Step | None = None
    no_rope_layers: list[_int(0, 1)] | None = None
    # MLA and sparse attention
    kv_lora_rank: Size | None = None
    q_lora_rank: Size | None = None
    qk_nope_head_dim: Size | None = None
    qk_rope_head_dim: Size | None = None
    v_head_dim: Size | None = None
    index_topk: Tokens | None = None
    index_n_heads: Size | None = None
    index_head_dim: Size | None = None
    num_nextn_predict_layers: Count | None = None
    # local attention
    layer_types: list[StrictStr] | None = None
    sliding_window: Tokens | None = None
    sliding_window_pattern: Step | None = None
    use_sliding_window: StrictBool | None = None
    max_window_layers: _int(0, 4096) | None = None
    attention_chunk_size: Tokens | None = None
    attn_type_list: list[_int(0, 1)] | None = None
    cross_attention_layers: list[_int(0, 4095)] | None = None  # mllama text_config: layers that read the image
    # mllama vision_config (read as its own _Cfg): the image encoder's shape
    num_global_layers: Count | None = None
    image_size: Size | None = None
    patch_size: Size | None = None
    num_channels: Size | None = None
    max_num_tiles: _int(1, 64) | None = None
    supported_aspect_ratios: list[list[_int(1, 64)]] | None = None
    vision_output_dim: Size | None = None
    attention_layers: list[StrictStr] | None = None  # GPT-Neo: 'global' / 'local' per layer
    window_size: Tokens | None = None
    # hybrids: Gated DeltaNet (Qwen3-Next / Qwen3.5) and Mamba2 (Nemotron-H) layers
    linear_num_key_heads: Size | None = None
    linear_key_head_dim: Size | None = None
    linear_num_value_heads: Size | None = None
    linear_value_head_dim: Size | None = None
    linear_conv_kernel_dim: _int(1, 64) | None = None
    full_attention_interval: Step | None = None
    attn_output_gate: StrictBool | None = None
    use_qk_norm: StrictBool | None = None
    qk_layernorm: StrictBool | None = None
    mamba_ssm_dtype: StrictStr | None = None
    mamba_ssm_cache_dtype: StrictStr | None = None
    hybrid_override_pattern: StrictStr | None = None
    layers_block_type: list[StrictStr] | None = None
    mamba_num_heads: Size | None = None
    mamba_head_dim: Size | None = None
    n_groups: Size | None = None
    ssm_state_size: Size | None = None
    conv_kernel: _int(1, 64) | None = None
    attention_head_dim: Size | None = None
    moe_latent_size: Size | None = None
    # Mamba2 hybrids in transformers' own naming (Bamba, Granite 4.0-H, Falcon-H1)
    attn_layer_indices: list[_int(0, 4095)] | None = None
    mamba_n_heads: Size | None = None
    mamba_d_head: Annotated[Any, BeforeValidator(_auto_size)] = None
    mamba_n_groups: Size | None = None
    mamba_d_state: Size | None = None
    mamba_d_conv: _int(1, 64) | None = None
    mamba_expand: _int(1, 64) | None = None
    mamba_d_ssm: Size | None = None
    mamba_dt_rank: Annotated[Any, BeforeValidator(_auto_size)] = None  # Jamba: 'auto' = ceil(D / 16)
    attn_layer_period: Step | None = None
    attn_layer_offset: _int(0, 4095) | None = None
    expert_layer_period: Step | None = None
    expert_layer_offset: _int(0, 4095) | None = None
    # pure state-space models (Mamba, Falcon Mamba, Mamba2 / Codestral Mamba)
    state_size: Size | None = None
    expand: _int(1, 64) | None = None
    time_step_rank: Annotated[Any, BeforeValidator(_auto_size)] = None
    moe_shared_expert_intermediate_size: Size | None = None
    share_expert_dim: Size | None = None
    indexer_types: list[StrictStr] | None = None
    mtp_num_hidden_layers: Count | None = None
    # several attention shapes: Gemma 4, MiMo-V2-Flash, DeepSeek-V4, NAS blocks
    top_k_experts: Experts | None = None
    enable_moe_block: StrictBool | None = None
    global_head_dim: Size | None = None
    num_global_key_value_heads: Size | None = None
    attention_k_eq_v: StrictBool | None = None
    hidden_size_per_layer_input: _int(0, 2**20) | None = None
    num_kv_shared_layers: Count | None = None
    swa_num_attention_heads: Size | None = None
    swa_num_key_value_heads: Size | None = None
    swa_head_dim: Size | None = None
    swa_v_head_dim: Size | None = None
    hybrid_layer_pattern: list[_int(0, 1)] | None = None
    o_lora_rank: Size | None = None
    o_groups: Size | None = None
    hc_mult: _int(1, 64) | None = None
    compress_ratios: list[_int(0, 2**16)] | None = None
    num_hash_layers: Count | None = None
    expert_dtype: StrictStr | None = None
    block_configs: list["_Block"] | None = None
    sparse_attention_config: "_SparseAttnCfg | None" = None
    linear_attn_config: "_KdaCfg | None" = None
    num_experts_per_token: Experts | None = None
    num_shared_experts: Count | None = None
    routed_expert_hidden_size: Size | None = None
    mla_use_output_gate: StrictBool | None = None
    attn_res_block_size: Count | None = None
    dense_intermediate_size: Size | None = None
    # formats
    torch_dtype: StrictStr | None = None
    dtype: StrictStr | None = None
    quantization_config: _Quant | None = None
    # nested blocks of DBRX / MPT
    attn_config: "_AttnCfg | None" = None
    ffn_config: "_FfnCfg | None" = None


class _AttnCfg(BaseModel):
    model_config = ConfigDict(extra="ignore")
    kv_n_heads: Size | None = None


class _BlockAttn(BaseModel):
    model_config = ConfigDict(extra="ignore")
    no_op: StrictBool = False
    replace_with_linear: StrictBool = False
    n_heads_in_group: Size | None = None
    window_length: Tokens | None = None
    sparsify: Any = None


class _BlockFfn(BaseModel):
    model_config = ConfigDict(extra="ignore")
    no_op: StrictBool = False
    replace_with_linear: StrictBool = False
    ffn_mult: Annotated[float, Field(gt=0, le=1024, allow_inf_nan=False)] | None = None
    sparsify: Any = None


class _Block(BaseModel):
    """One layer of a NAS-searched model (Llama-Nemotron: DeciLM block_configs)."""
    model_config = ConfigDict(extra="ignore")
    attention: _BlockAttn
    ffn: _BlockFfn


class _SparseAttnCfg(BaseModel):
    """MiniMax-M3's block-sparse attention (MSA): which layers index, the block size, how many blocks a query reads."""
    model_config = ConfigDict(extra="ignore")
    use_sparse_attention: StrictBool = True
    sparse_attention_freq: list[_int(0, 1)] | None = None
    sparse_block_size: Tokens | None = None
    sparse_topk_blocks: _int(1, 2**20) | None = None
    sparse_local_block: _int(0, 2**20) = 0
    sparse_init_block: _int(0, 2**20) = 0
    sparse_num_index_heads: Size | None = None
    sparse_index_dim: Size | None = None


class _KdaCfg(BaseModel):
    """Kimi K3 (kimi_linear): which layers are Kimi Delta Attention, which full attention (1-based), and the KDA shape."""
    model_config = ConfigDict(extra="ignore")
    kda_layers: list[_int(0, 2**16)] | None = None
    full_attn_layers: list[_int(0, 2**16)] | None = None
    num_heads: Size | None = None
    head_dim: Size | None = None
    short_conv_kernel_size: _int(1, 64) = 4


class _FfnCfg(BaseModel):
    model_config = ConfigDict(extra="ignore")
    ffn_hidden_size: Size | None = None
    moe_num_experts: Experts | None = None
    moe_top_k: Experts | None = None


_Group.model_rebuild()
_SparseAttnCfg.model_rebuild()
_KdaCfg.model_rebuild()
_Quant.model_rebuild()
_Fields.model_rebuild()


def _short(v: Any) -> str:
    r = repr(v)
    return r if len(r) <= 40 else r[:37] + "..."


_MESSAGES = {"greater_than_equal": "must be at least {ge}", "less_than_equal": "must be at most {le}",
             "string_type": "must be a string", "list_type": "must be a list", "bool_type": "must be true or false",
             "dict_type": "must be an object", "model_type": "must be an object", "model_attributes_type":
             "must be an object"}


def _fields(d: dict, path: Path, prefix: str) -> _Fields:
    try:
        return _Fields.model_validate(d)
    except ValidationError as e:
        err = e.errors()[0]
        loc = prefix + ".".join(str(x) for x in err["loc"])
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] in _MESSAGES:
            msg = _MESSAGES[err["type"]].format(**err.get("ctx", {}))
            msg += f", got {_short(err['input'])}" if "input" in err else ""
        raise CatalogError(f"{path}: field {loc!r} {msg}") from None


# ---- families --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Family:
    label: str  # Model.family
    mlp: int = 3  # matrices per MLP: 3 gated (SwiGLU/GeGLU), 2 plain
    tie: bool = False  # tie_word_embeddings where the config leaves it out (the transformers config default)
    moe: str | None = None  # how the MoE layers are read: mixtral, qwen, deepseek, llama4, dbrx, ernie
    shared_ff: bool = False  # one shared expert of intermediate_size beside the routed ones (Hunyuan MoE)
    expert_ff: tuple[str, ...] = ("moe_intermediate_size",)
    mla: bool = False
    sliding: str = "none"  # all, alternate, pattern, qwen, llama4 (layer_types, where present, wins)
    groups: str | None = None  # several attention shapes (records.AttentionGroup): gemma4, mimo_v2, dsv4, nas
    linear: str | None = None  # layers that are not attention: gdn (Qwen3-Next/3.5 Gated DeltaNet), mamba2 (Nemotron-H),
    # mamba2_hf (Mamba2 in transformers' naming: Bamba, Granite 4.0-H, Falcon-H1), kda (Kimi K3), mamba1 (Jamba),
    # lightning (MiniMax-Text-01 / M1)
    output_gate: bool = False  # attention's q_proj also yields an output gate (attn_output_gate where the config says)
    qk_norm: bool = False  # q and k each normed before RoPE (use_qk_norm / qk_layernorm where the config says)
    sandwich: bool = False  # post-attention and post-feedforward norms beside the pre-norms (Gemma 2 / 3)
    pattern: int = 0  # default sliding_window_pattern
    ff_ratio: int = 0  # d_ff = ff_ratio · D when the config gives none
    defaults: dict = field(default_factory=dict)
    notes: str = ""


_MOE_FF = ("intermediate_size",)
FAMILY_SPECS: dict[str, _Family] = {
    "llama": _Family("llama"), "mistral": _Family("mistral", sliding="all"),
    "mixtral": _Family("mixtral", moe="mixtral", expert_ff=_MOE_FF, sliding="all"),
    "qwen2": _Family("qwen2", sliding="qwen"), "qwen3": _Family("qwen3", sliding="qwen", qk_norm=True),
    "qwen2_moe": _Family("qwen2-moe", moe="qwen", sliding="qwen"),
    "qwen3_moe": _Family("qwen3-moe", moe="qwen", sliding="qwen", qk_norm=True),
    "deepseek": _Family("deepseek-moe", moe="deepseek"),
    "deepseek_v2": _Family("deepseek-v3", moe="deepseek", mla=True),
    "deepseek_v3": _Family("deepseek-v3", moe="deepseek", mla=True),
    "kimi_k2": _Family("deepseek-v3", moe="deepseek", mla=True),
    "kimi_linear": _Family("kimi-k3", moe="deepseek", mla=True, linear="kda",
                           notes="mla_use_nope: the rope slice is cached without positions (same size). Attention "
                                 "residuals (attn_res_block_size) mix earlier blocks' outputs per token: elementwise, "
                                 "no parameters or cache counted."),
    "deepseek_v32": _Family("deepseek-v3", moe="deepseek", mla=True),
    "glm4": _Family("glm-4"), "glm4_moe": _Family("glm-4-moe", moe="deepseek",
                                                  notes="partial RoPE does not change the accounting."),
    "gpt_oss": _Family("gpt-oss", moe="mixtral", expert_ff=_MOE_FF, sliding="alternate",
                       notes="learned attention sinks (one scalar per head) not counted."),
    "gemma": _Family("gemma", tie=True), "gemma2": _Family("gemma-2", tie=True, sliding="alternate", sandwich=True),
    "gemma3": _Family("gemma-3", tie=True, sliding="pattern", pattern=6, qk_norm=True, sandwich=True,
                      defaults={"vocab_size": 262208, "head_dim": 256, "sliding_window": 4096,
                                "sliding_window_pattern": 6, "max_position_embeddings": 131072}),
    "llama4": _Family("llama-4", moe="llama4", expert_ff=_MOE_FF, sliding="llama4"),
    "phi3": _Family("phi-3", sliding="all"), "phimoe": _Family("phi-3.5-moe", moe="mixtral", expert_ff=_MOE_FF,
                                                              sliding="all"),
    "olmo": _Family("olmo"), "olmo2": _Family("olmo-2", qk_norm=True), "olmo3": _Family("olmo-3", qk_norm=True),
    "olmoe": _Family("olmoe", moe="mixtral", expert_ff=_MOE_FF, qk_norm=True),
    "falcon": _Family("falcon", mlp=2, tie=True, ff_ratio=4),
    "gptj": _Family("gpt-j", mlp=2, ff_ratio=4), "gpt_neox": _Family("gpt-neox", mlp=2, ff_ratio=4),
    "gpt2": _Family("gpt-2", mlp=2, tie=True, ff_ratio=4), "gpt_bigcode": _Family("starcoder", mlp=2, tie=True,
                                                                                ff_ratio=4),
    "starcoder2": _Family("starcoder2", mlp=2, tie=True, sliding="all"),
    "bloom": _Family("bloom", mlp=2, tie=True, ff_ratio=4), "opt": _Family("opt", mlp=2, tie=True),
    "mpt": _Family("mpt", mlp=2, tie=True, ff_ratio=4), "dbrx": _Family("dbrx", moe="dbrx"),
    "cohere": _Family("command-r", tie=True), "cohere2": _Family("command-r", tie=True, sliding="pattern", pattern=4),
    "granite": _Family("granite"), "granitemoe": _Family("granite-moe", moe="mixtral", expert_ff=_MOE_FF),
    "stablelm": _Family("stablelm"), "internlm2": _Family("internlm2"), "nemotron": _Family("nemotron", mlp=2),
    "minimax_m2": _Family("minimax-m2", moe="mixtral", expert_ff=_MOE_FF),
    "minimax_m3": _Family("minimax-m3", moe="deepseek", groups="msa", expert_ff=("moe_intermediate_size", "intermediate_size"),
                          notes="partial RoPE and per-head QK norms do not change the accounting."),
    "exaone": _Family("exaone"), "seed_oss": _Family("seed-oss"), "smollm3": _Family("smollm3"),
    # plain decoders that differ from Llama / GPT-2 in field names, activation or norms only
    "exaone4": _Family("exaone-4", sliding="pattern", pattern=4, qk_norm=True), "helium": _Family("helium"),
    "glm": _Family("glm", notes="partial RoPE does not change the accounting."),
    "ernie4_5": _Family("ernie-4.5", tie=True), "hunyuan_v1_dense": _Family("hunyuan"),
    "diffllama": _Family("diffllama", notes="differential attention: two softmax maps over the same q/k/v projections "
                                            "(same weights and KV as Llama; the per-layer lambdas not counted)."),
    "bitnet": _Family("bitnet", notes="BitNet b1.58: ternary weights where the checkpoint packs them (quantization_config "
                                      "bitnet is not read: the weights are taken at torch_dtype)."),
    "doge": _Family("doge", notes="dynamic mask attention's dt projection (D × heads) not counted."),
    "vaultgemma": _Family("vaultgemma", tie=True, sliding="alternate"),
    "apertus": _Family("apertus", mlp=2, qk_norm=True), "arcee": _Family("arcee", mlp=2),  # xIELU / ReLU² up-down MLPs
    "phi": _Family("phi", mlp=2), "persimmon": _Family("persimmon", mlp=2),
    "codegen": _Family("codegen", mlp=2, ff_ratio=4), "openai-gpt": _Family("gpt-1", mlp=2, tie=True, ff_ratio=4),
    "ctrl": _Family("ctrl", mlp=2, tie=True), "biogpt": _Family("biogpt", mlp=2, tie=True),
    "xglm": _Family("xglm", mlp=2, tie=True),
    "gpt_neo": _Family("gpt-neo", mlp=2, tie=True, ff_ratio=4, sliding="gpt_neo"),
    "gpt_neox_japanese": _Family("gpt-neox-japanese", mlp=2, tie=True, ff_ratio=4),
    "cpmant": _Family("cpm-ant", tie=True, notes="prompt/segment embeddings and relative position bias not counted."),
    "granitemoeshared": _Family("granite-moe", moe="mixtral", expert_ff=_MOE_FF),
    "aria_text": _Family("aria", moe="mixtral", expert_ff=_MOE_FF),
    "hunyuan_v1_moe": _Family("hunyuan-moe", moe="mixtral", expert_ff=_MOE_FF, shared_ff=True),
    "ernie4_5_moe": _Family("ernie-4.5-moe", tie=True, moe="ernie"),
    "dots1": _Family("dots1", moe="deepseek", sliding="qwen", qk_norm=True),
    "glm_moe_dsa": _Family("glm-5", moe="deepseek", mla=True,
                           notes="GLM-5: DeepSeek-V3.2's MLA and sparse-attention indexer at GLM's sizes."),
    "mimo": _Family("mimo", sliding="qwen"),
    "step3p7": _Family("step-3.7", moe="deepseek"),
    "qwen3_5": _Family("qwen3.5", sliding="qwen", linear="gdn", output_gate=True),
    "qwen3_5_moe": _Family("qwen3.5-moe", moe="qwen", sliding="qwen", linear="gdn", output_gate=True),
    "gemma4": _Family("gemma-4", tie=True, moe="gemma4", groups="gemma4"),
    "deepseek_v4": _Family("deepseek-v4", moe="deepseek", groups="dsv4"),
    "mimo_v2_flash": _Family("mimo-v2-flash", moe="deepseek", groups="mimo_v2",
                             notes="attention sinks (one scalar per head) not counted."),
    "nemotron-nas": _Family("nemotron-nas", groups="nas"),
    "bamba": _Family("bamba", linear="mamba2_hf"),
    "granitemoehybrid": _Family("granite-4.0-h", linear="mamba2_hf", expert_ff=_MOE_FF),
    "falcon_h1": _Family("falcon-h1", linear="mamba2_hf"),
    "jamba": _Family("jamba", linear="mamba1", expert_ff=_MOE_FF),
    "minimax": _Family("minimax", moe="mixtral", expert_ff=_MOE_FF, linear="lightning"),
    "mamba": _Family("mamba", linear="ssm1"), "falcon_mamba": _Family("falcon-mamba", linear="ssm1"),
    "mamba2": _Family("mamba2", linear="ssm2"),
    "mllama": _Family("mllama", notes="Llama 3.2 Vision: cross-attention layers read a fixed cache of one image's "
                                      "vision tokens (at the most tiles); the vision encoder is counted, its FLOP at "
                                      "prefill; the input table's 8 image-token rows are not."),
    "nemotron_h": _Family("nemotron-h", mlp=2, linear="mamba2",
                          notes="Nemotron-H blocks regrouped: each Mamba2 or attention block paired with an MLP/MoE "
                                "block (counts exact)."),
}
# text-only names of multimodal families, and families whose config reuses another's reader
_SAME_AS = {"gemma3_text": "gemma3", "llama4_text": "llama4", "mistral3": "mistral", "qwen2_vl": "qwen2",
            "qwen2_5_vl": "qwen2", "qwen3_vl": "qwen3", "qwen3_vl_moe": "qwen3_moe", "ministral": "mistral",
            "falcon3": "llama", "deepseek_vl_v2": "deepseek_v2", "glm4v": "glm4", "glm4v_moe": "glm4_moe",
            "RefinedWeb": "falcon", "RefinedWebModel": "falcon", "chatglm": "glm4",
            "qwen3_5_text": "qwen3_5", "qwen3_5_moe_text": "qwen3_5_moe", "qwen3_next": "qwen3_5_moe",
            "minimax_text_01": "minimax", "minimax_m1": "minimax",
            "kimi_k25": "deepseek_v3", "minimax_m3_vl": "minimax_m3", "kimi_k3": "kimi_linear", "gemma4_text": "gemma4", "deepseek_ref": "deepseek_v4",
            "flex_olmo": "olmoe", "mllama_text_model": "mllama"}
FAMILIES: dict[str, str] = {k: FAMILY_SPECS[_SAME_AS.get(k, k)].label for k in (*FAMILY_SPECS, *_SAME_AS)}

_NOT_ATTENTION = {
    "rwkv": "recurrent (RWKV)", "zamba": "Mamba hybrid", "zamba2": "Mamba hybrid",
    "recurrent_gemma": "recurrent (Griffin)", "lfm2": "convolution/attention hybrid", "xlstm": "recurrent (xLSTM)",
}
# attention transformers whose variations the Model record does not express yet: refused with the reason
# families whose variation the model record does not express yet, each with the reason (none of the configs in
# aiconfigurator-core 0.12.0 since MiniMax-M3 and Kimi K3 import)
_NOT_YET: dict[str, str] = {
    "blt": "Byte Latent Transformer: byte patches through a local encoder and decoder around the global transformer",
    "gemma3n": "Gemma 3n: per-layer input embeddings, AltUp and layers that share another layer's KV cache",
    "gemma3n_text": "Gemma 3n: per-layer input embeddings, AltUp and layers that share another layer's KV cache",
    "longcat_flash": "LongCat-Flash: two MLA blocks per layer, zero-computation experts and a shortcut-connected MoE",
    "jetmoe": "JetMoE: mixture of attention heads (routed query/output projections over shared K/V)",
}

_ARCH_SUFFIX = ("ForCausalLM", "ForConditionalGeneration", "LMHeadModel", "Model")

_TORCH_DTYPES = {"bfloat16": "bf16", "float16": "fp16", "half": "fp16", "float32": "fp32", "float": "fp32",
                 "float8_e4m3fn": "fp8"}

_KEYS = {  # Model field -> config keys, first present wins
    "D": ("hidden_size", "n_embd", "d_model", "n_embed"),
    "L": ("num_hidden_layers", "n_layer", "n_layers", "num_layers"),
    "N": ("num_attention_heads", "n_head", "n_heads", "num_heads", "attention_heads"),
    "K": ("num_key_value_heads", "num_kv_heads", "n_head_kv", "multi_query_group_num"),
    "H": ("head_dim", "kv_channels", "attention_head_dim", "dim_head"),
    "F": ("intermediate_size", "n_inner", "ffn_hidden_size", "ffn_dim", "dff", "dim_ff"),
    "V": ("vocab_size", "padded_vocab_size"),
    "ctx": ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length"),
    "E": ("num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts"),
    "k": ("num_experts_per_tok", "experts_per_token", "moe_top_k", "top_k_experts", "num_experts_per_token", "moe_topk",
          "moe_k"),
}


class _Cfg:
    """Validated lookups on one (possibly nested) config, with errors that name the file and field."""

    def __init__(self, d: dict, path: Path, prefix: str = "", defaults: dict | None = None):
        self.path, self.prefix, self.defaults = path, prefix, defaults or {}
        self.f = _fields(d, path, prefix)
        self.set = {k for k, v in self.f if v is not None}

    def get(self, key: str, default: Any = None) -> Any:
        v = getattr(self.f, key, None)
        return self.defaults.get(key, default) if v is None else v

    def int(self, *keys: str, default: int | None = None, required: bool = True) -> int | None:
        """The first of `keys` that is set; missing and required raises CatalogError."""
        for k in keys:
            v = self.get(k)
            if v is not None:
                return int(v)
        if default is not None or not required:
            return default
        raise CatalogError(f"{self.path}: field {self.prefix + keys[0]!r} missing")

    def key(self, name: str, **kw) -> int | None:
        return self.int(*_KEYS[name], **kw)


def _family(cfg: dict, path: Path) -> str:
    mt = cfg.get("model_type")
    if mt is not None and not isinstance(mt, str):
        raise CatalogError(f"{path}: field 'model_type' must be a string, got {type(mt).__name__}")
    arches = cfg.get("architectures")
    if arches is not None and not (isinstance(arches, list) and all(isinstance(a, str) for a in arches)):
        raise CatalogError(f"{path}: field 'architectures' must be a list of strings")
    for name in [mt] + [a for a in arches or []]:
        if name in _NOT_ATTENTION or (name and name.lower() in _NOT_ATTENTION):
            what = _NOT_ATTENTION.get(name) or _NOT_ATTENTION[name.lower()]
            raise CatalogError(f"{path}: model_type {name!r} is a {what} model; tokenmath's roofline covers "
                               "attention transformers only")
    tc = cfg.get("text_config")
    sub = tc.get("model_type") if isinstance(tc, dict) else None
    for name in (mt, sub):
        if isinstance(name, str) and name in _NOT_YET:
            raise CatalogError(f"{path}: model_type {name!r} not supported yet: {_NOT_YET[name]} "
                               "(not represented in tokenmath's model record)")
    if mt in FAMILIES:
        return _SAME_AS.get(mt, mt)
    if isinstance(sub, str) and sub in FAMILIES:  # a multimodal wrapper around a known language model (Kimi K2.5)
        return _SAME_AS.get(sub, sub)
    for arch in arches or []:  # GemmaForCausalLM -> gemma, Qwen2MoeForCausalLM -> qwen2_moe
        stem = arch
        for s in _ARCH_SUFFIX:
            if stem.endswith(s):
                stem = stem[: -len(s)]
                break
        guess = "".join("_" + c.lower() if c.isupper() and i else c.lower() for i, c in enumerate(stem))
        for cand in (guess, guess.replace("_", ""), stem.lower()):
            if cand in FAMILIES:
                return _SAME_AS.get(cand, cand)
    what = f"model_type {mt!r}" if mt else f"architectures {arches!r}" if arches else "no model_type or architectures"
    supported = ", ".join(sorted(FAMILIES))
    raise CatalogError(f"{path}: unsupported {what}; supported model_type values: {supported}")


# ---- weight formats --------------------------------------------------------------------------------

def _module_kinds(pattern: str) -> set[str]:
    """Which module kinds a modules_to_not_convert / ignore entry names (gpt-oss: 'model.layers.*.self_attn')."""
    p = pattern.lower()
    kinds = set()
    last = p.rstrip("*").rsplit(".", 1)[-1]
    if "norm" in last or last == "bias" or last.endswith("_bias") or last == "indexers_proj":
        # norms and biases are not matmul weights; DSA's per-head weight projection (D × n_idx) is under 0.1%
        # of a layer's attention: neither decides the format of the kind's matrices (GLM-5's FP8 list names both)
        return kinds
    if "embed" in p or "lm_head" in p or "wte" in p or "output" == p.rsplit(".", 1)[-1]:
        kinds.add("embeddings")
    if "attn" in p or "attention" in p or "q_proj" in p or "kv_proj" in p or "o_proj" in p or (
            "mixer" in p and "expert" not in p and "gate" not in p):
        kinds.add("attention")  # a hybrid's linear-attention / Mamba mixers are counted with attention
    if "router" in p or p.endswith("mlp.gate") or p.endswith(".gate") or "gate.weight" in p:
        kinds.add("router")
    if "shared_expert" in p:
        kinds.add("shared_experts")
    elif "expert" in p:
        kinds.add("experts")
    elif re.search(r"mlp\W{0,3}\(?(gate|up|down)[|_]", p):  # 'mlp.gate_proj', 're:.*mlp\.(gate|up|down)_proj': the dense MLP
        kinds.add("mlp")
    elif ("mlp" in p or "ffn" in p) and not kinds:
        kinds.update({"mlp", "experts", "shared_experts"})
    return kinds


def _formats(c: _Cfg, top: _Fields, mlp_beside_experts: bool = False) -> tuple[str, dict[str, str], str | None, str]:
    """(matmul format, storage format per module kind where it differs, KV dtype or None, how decided).
    `mlp_beside_experts`: a module named mlp is the dense MLP beside the experts, not their parent (Gemma 4)."""
    td = str(c.get("torch_dtype") or c.get("dtype") or top.torch_dtype or top.dtype or "bfloat16")
    base = _TORCH_DTYPES.get(td.replace("torch.", ""), "bf16")
    q = c.get("quantization_config") or top.quantization_config
    if q is None:
        return base, {}, None, f"torch_dtype {td}"
    method = (q.quant_method or "").lower()
    algo = (q.quant_algo or "").upper()
    scheme = q.kv_cache_scheme
    kv = "fp8" if (q.kv_cache_quant_algo or "").upper() == "FP8" or (
        isinstance(scheme, str) and scheme.upper() == "FP8") or (
        isinstance(scheme, _Scheme) and scheme.num_bits == 8) else None
    store = compute = None
    per_mixed = _mixed(q, base)
    if per_mixed is not None:
        bulk = per_mixed["experts"] if per_mixed["experts"] != base else per_mixed["mlp"]
        compute = {"nvfp4": "fp4", "mxfp4": "fp4"}.get(bulk, bulk)
        overrides = {k: v for k, v in per_mixed.items() if v != compute}
        shown = ", ".join(f"{k} {v}" for k, v in per_mixed.items())
        return compute, overrides, kv, f"quantization_config {method or algo} per module: {shown}"
    if method in ("fp8", "fbgemm_fp8") or q.fmt == "e4m3" or algo == "FP8":
        store = compute = "fp8"
    elif method == "mxfp4":
        store, compute = "mxfp4", "fp4"
    elif method == "nvfp4" or algo == "NVFP4":
        store, compute = "nvfp4", "fp4"
    elif method == "bitsandbytes":
        store = compute = "int4" if q.load_in_4bit else "int8" if q.load_in_8bit else None
    if store is None and q.config_groups:  # compressed-tensors
        for group in q.config_groups.values():
            w = group.weights
            if w and w.num_bits:
                store = _scheme_format(w, group.input_activations)
                break
        compute = {"nvfp4": "fp4", "mxfp4": "fp4"}.get(store or "", store)
    if store is None and q.bits in (4, 8):
        store = compute = f"int{q.bits}"
    if store is None:
        return base, {}, kv, f"torch_dtype {td} (quantization_config {method or algo or '?'} not read)"
    kept = {"embeddings", "router"}  # quantisers leave the tables and the routers in the model's dtype
    for p in (q.modules_to_not_convert or []) + (q.ignore or []) + (q.exclude_modules or []):
        ks = _module_kinds(p)
        if mlp_beside_experts and ks == {"mlp", "experts", "shared_experts"} and "expert" not in p.lower():
            ks = {"mlp", "shared_experts"}
        kept |= ks
    per = {k: (base if k in kept else store) for k in MODULE_KINDS}
    overrides = {k: v for k, v in per.items() if v != compute}
    how = f"quantization_config {method or algo}: {store} linear layers, {'/'.join(sorted(kept))} in {base}"
    return compute, overrides, kv, how


# MXFP8 (MiniMax-M3's NVIDIA release): 8-bit values with an E8M0 scale per 32, read as FP8 (scales, 3 % of the
# bytes, left out)
_ALGO_FORMAT = {"MXFP8": "fp8", "FP8": "fp8", "NVFP4": "nvfp4", "W4A16_NVFP4": "nvfp4", "W4A8_NVFP4_FP8": "nvfp4", "MXFP4": "mxfp4",
                "W4A16_AWQ": "int4_g128", "W4A8_AWQ": "int4_g128", "INT8_SQ": "w8a8"}


def _scheme_format(w: _Scheme, a: _Scheme | None = None) -> str | None:
    """A compressed-tensors weight scheme's format; 8-bit integer weights beside 8-bit integer activations are W8A8
    (the INT8 tensor-core rate), without them weight-only INT8 (the 16-bit rate)."""
    if w.type == "float":
        return {8: "fp8", 4: {16: "nvfp4", 32: "mxfp4"}.get(w.group_size or 0, "fp4")}.get(w.num_bits or 0)
    if w.num_bits == 8 and a is not None and a.num_bits == 8 and a.type != "float":
        return "w8a8"
    return {8: "int8", 4: "int4"}.get(w.num_bits or 0)


def _mixed(q: _Quant, base: str) -> dict[str, str] | None:
    """Per module kind, the format most of its named modules have, where a checkpoint quantises modules one
    by one (ModelOpt MIXED_PRECISION quantized_layers; compressed-tensors config_groups whose targets are
    module names, not 'Linear'); None when it does not."""
    named: list[tuple[str, str | None]] = []
    if q.quantized_layers:
        named = [(name, _ALGO_FORMAT.get((layer.quant_algo or "").upper())) for name, layer in q.quantized_layers.items()]
    elif q.config_groups and any(g.targets and "Linear" not in g.targets for g in q.config_groups.values()):
        named = [(t, _scheme_format(g.weights, g.input_activations) if g.weights else None)
                 for g in q.config_groups.values() for t in (g.targets or [])]
    if not named:
        return None
    votes: dict[str, dict[str, int]] = {}
    for name, fmt_ in named:
        for kind in _module_kinds(name):
            if kind != "embeddings" and fmt_:  # the input table stays in the model's dtype
                votes.setdefault(kind, {}).setdefault(fmt_, 0)
                votes[kind][fmt_] += 1
    return {k: max(votes[k], key=votes[k].get) if k in votes else base for k in MODULE_KINDS}


def _fp8_block(c: _Cfg, top: _Fields, dtype: str) -> int | None:
    """quantization_config weight_block_size of an FP8 checkpoint (DeepSeek-V3: [128, 128]), else None."""
    q = c.get("quantization_config") or top.quantization_config
    if dtype != "fp8" or q is None or not q.weight_block_size:
        return None
    return int(max(q.weight_block_size))


# ---- layers: MoE positions and local attention ---------------------------------------------------

def _layer_step(n_layers: int, moe_layers: list[int]) -> tuple[int, int, str]:
    """(first_dense_layers, layer_step, note) whose MoE-layer count equals len(moe_layers)."""
    n = len(moe_layers)
    if n == 0:
        return n_layers, 1, "no MoE layers."
    first = moe_layers[0]
    step = moe_layers[1] - moe_layers[0] if n > 1 else 1
    if step >= 1 and moe_layers == list(range(first, n_layers, step)):
        # tokenmath counts (L - first_dense) // step MoE layers: take the largest first_dense that agrees
        for dense in range(first, -1, -1):
            if (n_layers - dense) // step == n:
                return dense, step, ""
    # positions not of the form first + k·step: keep the count exact
    return n_layers - n, 1, f"{n} MoE layers represented as the last {n} (count exact)."


def _sliding(spec: _Family, c: _Cfg, L: int) -> tuple[int | None, int, str]:
    """(window, layers with a window, note)."""
    types = c.get("layer_types")
    if types:
        if len(types) != L:
            raise CatalogError(f"{c.path}: field {c.prefix + 'layer_types'!r} has {len(types)} entries for "
                               f"{L} layers")
        n = sum(t in ("sliding_attention", "chunked_attention") for t in types)
        chunked = "chunked_attention" in types
        w = c.get("attention_chunk_size") if chunked else c.get("sliding_window")
        note = "chunked local attention modelled as a sliding window." if chunked else ""
        return (int(w), n, note) if n and w else (None, 0, "")
    rule = spec.sliding
    w = c.get("sliding_window")
    if rule == "gpt_neo":  # attention_layers: 'local' layers see the last window_size tokens
        kinds = c.get("attention_layers")
        if kinds is None:
            return None, 0, ""
        if len(kinds) != L:
            raise CatalogError(f"{c.path}: field {c.prefix + 'attention_layers'!r} has {len(kinds)} entries for {L} layers")
        n, w = kinds.count("local"), c.get("window_size")
        return (int(w), n, "") if n and w else (None, 0, "")
    if rule == "pattern":
        p = c.int("sliding_window_pattern", default=spec.pattern)
        return (int(w), L - L // p, "") if w and p > 1 else (None, 0, "")
    if rule == "alternate":
        return (int(w), (L + 1) // 2, "") if w else (None, 0, "")
    if rule == "llama4":
        cw = c.get("attention_chunk_size")
        if not cw:
            return None, 0, ""
        rope = c.get("no_rope_layers")
        n = sum(rope) if rope and len(rope) == L else L - L // 4
        return int(cw), n, "chunked local attention modelled as a sliding window."
    if rule == "all":
        return (int(w), L, "") if w else (None, 0, "")
    if rule == "qwen" and c.get("use_sliding_window") and w:
        n = max(0, L - c.int("max_window_layers", default=L))
        return (int(w), n, "") if n else (None, 0, "")
    return None, 0, ""


def _moe(spec: _Family, c: _Cfg, L: int, D: int, notes: list[str]) -> MoE | None:
    kind = spec.moe
    if kind is None:
        return None
    if kind == "dbrx":
        ffn = c.get("ffn_config")
        if ffn is None or ffn.moe_num_experts is None or ffn.ffn_hidden_size is None:
            raise CatalogError(f"{c.path}: field {c.prefix + 'ffn_config'!r} missing (moe_num_experts, "
                               "ffn_hidden_size)")
        return MoE(n_routed_experts=ffn.moe_num_experts, experts_per_token=ffn.moe_top_k or 1,
                   d_ff_expert=ffn.ffn_hidden_size)
    if kind == "gemma4":  # routed experts beside a dense MLP of intermediate_size on every layer
        if not c.get("enable_moe_block"):
            return None
        E, k = c.key("E"), c.key("k")
        if k > E:
            raise CatalogError(f"{c.path}: field {c.prefix + 'top_k_experts'!r} ({k}) exceeds the {E} experts")
        notes.append("a dense MLP runs beside the routed experts on every layer (counted as one shared expert of "
                     "intermediate_size).")
        return MoE(n_routed_experts=E, experts_per_token=k, n_shared_experts=1,
                   d_ff_expert=c.int("moe_intermediate_size"), d_ff_shared_expert=c.int("intermediate_size"))
    E = c.key("E")
    k = c.key("k")
    if E == 0 or k == 0:
        what = "num_local_experts" if E == 0 else "num_experts_per_tok"
        raise CatalogError(f"{c.path}: field {c.prefix + what!r} is 0: a {spec.label} model routes to experts")
    if k > E:
        raise CatalogError(f"{c.path}: field {c.prefix + 'num_experts_per_tok'!r} ({k}) exceeds the {E} experts")
    F_e = c.int(*spec.expert_ff)
    shared, F_sh = 0, None
    if kind == "mixtral":
        first, lstep = 0, 1
        n_sh = c.int("moe_num_shared_experts", default=0)
        if spec.shared_ff:  # Hunyuan MoE: a shared MLP of intermediate_size on every MoE layer
            shared, F_sh = 1, c.int("intermediate_size")
        elif n_sh:  # Aria: the shared experts are one MLP n_sh times as wide
            shared, F_sh = 1, n_sh * F_e
        elif c.int("shared_intermediate_size", default=0):  # Granite MoE shared
            shared, F_sh = 1, c.int("shared_intermediate_size")
    elif kind == "ernie":  # (i + 1) % interval == 0 and start <= i <= end; shared experts as one MLP n_sh times as wide
        step = c.int("moe_layer_interval", default=1)
        lo, hi = c.int("moe_layer_start_index", default=0), c.int("moe_layer_end_index", default=L - 1)
        layers = [i for i in range(L) if (i + 1) % step == 0 and lo <= i <= hi]
        first, lstep, note = _layer_step(L, layers)
        notes += [note] if note else []
        n_sh = c.int("moe_num_shared_experts", default=0)
        if n_sh:
            shared, F_sh = 1, n_sh * F_e
    elif kind == "qwen":
        step = c.int("decoder_sparse_step", default=1)
        dense = set(c.get("mlp_only_layers") or [])
        layers = [i for i in range(L) if i not in dense and (i + 1) % step == 0]
        first, lstep, note = _layer_step(L, layers)
        notes += [note] if note else []
        sh = c.int("shared_expert_intermediate_size", default=0)
        if sh:
            shared, F_sh = 1, sh
    elif kind == "deepseek":
        k0, freq = c.int("first_k_dense_replace", default=0), c.get("moe_layer_freq", 1)
        if k0 > L:
            raise CatalogError(f"{c.path}: field {c.prefix + 'first_k_dense_replace'!r} ({k0}) exceeds the {L} layers")
        if isinstance(freq, list):  # one 0/1 per layer (MiMo-V2-Flash)
            if len(freq) != L:
                raise CatalogError(f"{c.path}: field {c.prefix + 'moe_layer_freq'!r} has {len(freq)} entries for {L} layers")
            layers = [i for i, f in enumerate(freq) if f and i >= k0]
        else:
            layers = [i for i in range(k0, L) if i % freq == 0]
        first, lstep, note = _layer_step(L, layers)
        notes += [note] if note else []
        shared = c.int("n_shared_experts", "num_shared_experts", default=0)
        F_sh = c.get("share_expert_dim") if shared else None  # Step-3.7: the shared expert's own width
        lat = c.int("routed_expert_hidden_size", required=False)  # Kimi K3's latent MoE
        lat = lat if lat and lat != D else None
    else:  # llama4
        step = c.int("interleave_moe_layer_step", default=1)
        layers = c.get("moe_layers")
        if layers is None:
            layers = list(range(step - 1, L, step))
        bad = [i for i in layers if i >= L]
        if bad:  # transformers builds layer i as MoE where i is in moe_layers: indices past the last layer do nothing
            notes.append(f"moe_layers names {len(bad)} layer(s) past the last of {L}: ignored (as transformers does).")
            layers = [i for i in layers if i < L]
        first, lstep, note = _layer_step(L, sorted(set(layers)))
        notes += [note] if note else []
        shared = 1
    if first >= L:
        return None
    return MoE(n_routed_experts=E, experts_per_token=k, n_shared_experts=shared, d_ff_expert=F_e,
               d_ff_shared_expert=F_sh, first_dense_layers=first, layer_step=lstep,
               d_latent=lat if kind == "deepseek" else None)


# ---- hybrids: layers that are not attention ---------------------------------------------------------

def _state_dtype(c: _Cfg, top: _Fields, key: str) -> str:
    """The recurrent state's format: the config's own (text_config before the root, as SGLang reads it),
    else FP32 (what SGLang and the Hugging Face code keep Mamba/GDN state in)."""
    td = c.get(key) or getattr(top, key, None) or "float32"
    fmt_ = _TORCH_DTYPES.get(str(td).replace("torch.", ""))
    if fmt_ is None:
        raise CatalogError(f"{c.path}: field {c.prefix + key!r} {td!r} is not a known torch dtype")
    return fmt_


def _gated_deltanet(c: _Cfg, top: _Fields, L: int) -> LinearAttention:
    """Qwen3-Next / Qwen3.5: layer_types 'linear_attention' (else every full_attention_interval-th layer is
    attention) are Gated DeltaNet layers."""
    types = c.get("layer_types")
    if types:
        n = sum(t == "linear_attention" for t in types)
    else:
        n = L - L // c.int("full_attention_interval")
    return LinearAttention(kind="gated_deltanet", n_layers=n, key_heads=c.int("linear_num_key_heads"),
                           key_dim=c.int("linear_key_head_dim"), value_heads=c.int("linear_num_value_heads"),
                           value_dim=c.int("linear_value_head_dim"), gates_per_head=2,
                           conv_kernel=c.int("linear_conv_kernel_dim"), state_dtype=_state_dtype(c, top, "mamba_ssm_dtype"),
                           state_flop_per_element=7.0)


def _kda(c: _Cfg, L: int, D: int) -> LinearAttention:
    """Kimi K3 (kimi_linear): the layers linear_attn_config.kda_layers names are Kimi Delta Attention, the
    full_attn_layers MLA. A KDA layer: q, k, v and a full-rank output gate of num_heads × head_dim each from D,
    a β per head, a per-channel forget gate through a rank-head_dim bottleneck (D·d + d·h·d, extra_params),
    a short convolution over q, k, v, the output projection, and a state of h × d × d (FP32) per sequence:
    shapes as aiconfigurator-core 0.12.0 sdk/models/kimi_k3.py (qkvg, bfa and fb GEMMs; _kda_state_bytes_per_request).
    The decay is per key channel, not per head: 1 FLOP per state element either way (7 in all, as Gated DeltaNet)."""
    la = c.get("linear_attn_config")
    if la is None or la.kda_layers is None or la.full_attn_layers is None or not la.num_heads or not la.head_dim:
        raise CatalogError(f"{c.path}: field {c.prefix + 'linear_attn_config'!r} must give kda_layers, full_attn_layers, "
                           "num_heads and head_dim")
    kda, full = set(la.kda_layers), set(la.full_attn_layers)
    if len(kda) != len(la.kda_layers) or kda & full or len(kda) + len(full) != L:
        raise CatalogError(f"{c.path}: field {c.prefix + 'linear_attn_config'!r}: kda_layers ({len(la.kda_layers)}) and "
                           f"full_attn_layers ({len(la.full_attn_layers)}) must split the {L} layers")
    h, d = la.num_heads, la.head_dim
    return LinearAttention(kind="kda", n_layers=len(kda), key_heads=h, key_dim=d, value_heads=h, value_dim=d,
                           gates_per_head=1, conv_kernel=la.short_conv_kernel_size, state_dtype="fp32",
                           state_flop_per_element=7.0, extra_params=float(D * d + d * h * d))


_NEMOTRON_BLOCKS = {"M": "mamba", "*": "attention", "-": "mlp", "E": "moe"}


def _nemotron_h(c: _Cfg, top: _Fields, L_blocks: int, notes: list[str]):
    """Nemotron-H / Nemotron 3: (layers, Mamba2 mixer, MoE, dense-MLP layers) from the block pattern
    (hybrid_override_pattern M * - E, or layers_block_type). Each block holds one mixer: Mamba2, attention,
    a dense MLP or an MoE; tokenmath's layer pairs a token mixer with a channel mixer, so L is the count
    of Mamba2 + attention blocks and the MLP/MoE blocks are spread over them (every count exact)."""
    pat = c.get("hybrid_override_pattern")
    if pat is not None:
        bad = set(pat) - set(_NEMOTRON_BLOCKS)
        if bad:
            raise CatalogError(f"{c.path}: field {c.prefix + 'hybrid_override_pattern'!r} has unknown block "
                               f"{sorted(bad)[0]!r} (known: M * - E)")
        blocks = [_NEMOTRON_BLOCKS[ch] for ch in pat]
    else:
        blocks = c.get("layers_block_type")
        if blocks is None:
            raise CatalogError(f"{c.path}: field {c.prefix + 'hybrid_override_pattern'!r} missing (or layers_block_type)")
        bad = set(blocks) - set(_NEMOTRON_BLOCKS.values())
        if bad:
            raise CatalogError(f"{c.path}: field {c.prefix + 'layers_block_type'!r} has unknown block {sorted(bad)[0]!r}")
    if len(blocks) != L_blocks:
        raise CatalogError(f"{c.path}: the block pattern has {len(blocks)} blocks for {L_blocks} layers")
    n = {k: blocks.count(k) for k in ("mamba", "attention", "mlp", "moe")}
    L = n["mamba"] + n["attention"]
    if n["attention"] == 0 or n["mlp"] + n["moe"] > L:
        raise CatalogError(f"{c.path}: block pattern with {n['attention']} attention, {n['mamba']} Mamba, {n['mlp']} "
                           f"MLP and {n['moe']} MoE blocks cannot be paired into attention/Mamba layers")
    lin = _mamba2_layer(n["mamba"], c.int("n_groups"), c.int("ssm_state_size"), c.int("mamba_num_heads"),
                        c.int("mamba_head_dim"), c.int("conv_kernel"), _state_dtype(c, top, "mamba_ssm_cache_dtype"))
    moe = None
    if n["moe"]:
        E, k = c.key("E"), c.key("k")
        if k > E:
            raise CatalogError(f"{c.path}: field {c.prefix + 'num_experts_per_tok'!r} ({k}) exceeds the {E} experts")
        moe = MoE(n_routed_experts=E, experts_per_token=k, n_shared_experts=c.int("n_shared_experts", default=0),
                  d_ff_expert=c.int("moe_intermediate_size"),
                  d_ff_shared_expert=c.int("moe_shared_expert_intermediate_size", required=False),
                  first_dense_layers=L - n["moe"], layer_step=1, d_latent=c.int("moe_latent_size", required=False))
    notes.append(f"{len(blocks)} blocks: {n['mamba']} Mamba2, {n['attention']} attention, {n['mlp']} MLP, "
                 f"{n['moe']} MoE.")
    return L, lin, moe, (n["mlp"] if n["mlp"] != L - n["moe"] else None)


def _mamba2_layer(n_layers: int, groups: int, S: int, heads: int, head: int, conv: int, state: str) -> LinearAttention:
    """A Mamba2 mixer (Nemotron-H, Bamba, Granite 4.0-H, Falcon-H1, Mamba2): B and C of groups × S (the keys), x of
    heads × head (the values), z the output gate, one dt per head, a conv-tap convolution; decay·h + dt·x⊗B 3 +
    C·h 2 = 5 FLOP per state element a token."""
    return LinearAttention(kind="mamba2", n_layers=n_layers, key_heads=groups, key_dim=S, value_heads=heads,
                           value_dim=head, gates_per_head=1, conv_kernel=conv, state_dtype=state,
                           state_flop_per_element=5.0)


def _mamba2_mixer(c: _Cfg, top: _Fields, D: int, n_layers: int) -> LinearAttention:
    """A Mamba2 mixer in transformers' own naming (Bamba, Granite 4.0-H, Falcon-H1): mamba_n_heads heads of
    mamba_d_head over a width of mamba_d_ssm (Falcon-H1) or mamba_expand · D; B and C of mamba_n_groups ×
    mamba_d_state; a mamba_d_conv-tap convolution; the state in the config's mamba_ssm_dtype, else FP32."""
    width = c.int("mamba_d_ssm", required=False) or c.int("mamba_expand", default=2) * D
    heads = c.int("mamba_n_heads")
    if width % heads:
        raise CatalogError(f"{c.path}: field {c.prefix + 'mamba_n_heads'!r} ({heads}) does not divide the Mamba width "
                           f"{width}")
    head = c.int("mamba_d_head", default=width // heads)
    if head * heads != width:
        raise CatalogError(f"{c.path}: field {c.prefix + 'mamba_d_head'!r} ({head}) × {heads} heads is not the Mamba "
                           f"width {width}")
    return _mamba2_layer(n_layers, c.int("mamba_n_groups", default=1), c.int("mamba_d_state"), heads, head,
                         c.int("mamba_d_conv", default=4), _state_dtype(c, top, "mamba_ssm_dtype"))


def _mamba1_mixer(n_layers: int, d_in: int, S: int, r_dt: int, conv: int) -> LinearAttention:
    """A Mamba1 mixer (Jamba, Mamba, Falcon Mamba): in_proj D → 2·d_inner (x, z), a conv-tap convolution over x,
    x_proj d_inner → r_dt + 2·S (dt, B, C), dt_proj r_dt → d_inner, A of d_inner × S, out_proj d_inner → D; a
    state of d_inner × S (FP32) per sequence: one value channel per head, the x_proj, dt_proj and A as extra."""
    return LinearAttention(kind="mamba1", n_layers=n_layers, key_heads=0, key_dim=S, value_heads=d_in, value_dim=1,
                           gates_per_head=0, conv_kernel=conv, state_dtype="fp32", state_flop_per_element=5.0,
                           extra_params=float(d_in * (r_dt + 2 * S) + r_dt * d_in + d_in * S))


def _experts_per_token(c: _Cfg, E: int) -> int:
    """num_experts_per_tok, which must pick 1 to E experts."""
    k = c.key("k")
    if not 1 <= k <= E:
        raise CatalogError(f"{c.path}: field {c.prefix + 'num_experts_per_tok'!r} ({k}) must be from 1 to the {E} experts")
    return k


def _mamba2_hybrid(fam: str, c: _Cfg, top: _Fields, L: int, D: int, notes: list[str]):
    """(layers, Mamba2 mixer, MoE, dense-MLP layers, d_ff or None) of the Mamba2/attention hybrids that
    transformers names itself:
      bamba             each layer one mixer, attention at attn_layer_indices, Mamba2 elsewhere; a gated MLP
                        of intermediate_size on every layer
      granitemoehybrid  layer_types 'mamba' / 'attention'; every layer a shared gated MLP of
                        shared_intermediate_size and, where num_local_experts > 0, routed experts of
                        intermediate_size (Granite 4.0-H; the shared MLP counted as one shared expert)
      falcon_h1         every layer runs attention and a Mamba2 mixer side by side (their outputs summed),
                        then an MLP: tokenmath's layer holds one mixer, so Falcon-H1's L layers are 2L mixer
                        layers (L attention, L Mamba2) sharing L MLPs; every count is exact"""
    if fam == "falcon_h1":
        notes.append(f"Falcon-H1 runs attention and Mamba2 side by side in each of its {L} layers: counted as "
                     f"{2 * L} mixer layers ({L} attention, {L} Mamba2) and {L} MLPs (counts exact).")
        return 2 * L, _mamba2_mixer(c, top, D, L), None, L, None
    if fam == "bamba":
        attn = c.get("attn_layer_indices") or []
        if any(i >= L for i in attn):
            raise CatalogError(f"{c.path}: field {c.prefix + 'attn_layer_indices'!r} names a layer past the {L} layers")
        types = ["attention" if i in set(attn) else "mamba" for i in range(L)]
    else:
        types = c.get("layer_types") or ["mamba"] * L
        bad = set(types) - {"mamba", "attention"}
        if bad:
            raise CatalogError(f"{c.path}: field {c.prefix + 'layer_types'!r} has unknown layer {sorted(bad)[0]!r} "
                               "(known: mamba, attention)")
        if len(types) != L:
            raise CatalogError(f"{c.path}: field {c.prefix + 'layer_types'!r} has {len(types)} entries for {L} layers")
    n_attn = types.count("attention")
    if n_attn == 0:
        notes.append(f"no attention layer: {L} Mamba2 layers, no KV cache (a fixed state per sequence).")
    lin = _mamba2_mixer(c, top, D, L - n_attn) if n_attn < L else None
    if fam != "granitemoehybrid":
        return L, lin, None, None, None
    E = c.int("num_local_experts", default=0)
    F_sh = c.int("shared_intermediate_size")
    if E == 0:
        return L, lin, None, None, F_sh
    k = _experts_per_token(c, E)
    notes.append("a shared MLP of shared_intermediate_size runs beside the routed experts on every layer (counted "
                 "as one shared expert).")
    return L, lin, MoE(n_routed_experts=E, experts_per_token=k, n_shared_experts=1, d_ff_expert=c.key("F"),
                       d_ff_shared_expert=F_sh, first_dense_layers=0, layer_step=1), None, None


def _jamba(c: _Cfg, top: _Fields, L: int, D: int, notes: list[str]):
    """(layers, Mamba1 mixer, MoE, None, None) of Jamba: attention where i % attn_layer_period ==
    attn_layer_offset, Mamba1 elsewhere; experts of intermediate_size where i % expert_layer_period ==
    expert_layer_offset, a dense MLP of the same width elsewhere (transformers 4.57.1 JambaConfig); the Mamba1
    mixer (_mamba1_mixer) of d_inner = mamba_expand · D, r_dt = ceil(D / 16) where 'auto'."""
    p_a, o_a = c.int("attn_layer_period", default=8), c.int("attn_layer_offset", default=4)
    p_e, o_e = c.int("expert_layer_period", default=2), c.int("expert_layer_offset", default=1)
    for what, p, o in (("attn", p_a, o_a), ("expert", p_e, o_e)):
        if o >= p:
            raise CatalogError(f"{c.path}: field {c.prefix + what + '_layer_offset'!r} ({o}) must be below its period ({p})")
    n_attn = sum(i % p_a == o_a for i in range(L))
    lin = _mamba1_mixer(L - n_attn, c.int("mamba_expand", default=2) * D, c.int("mamba_d_state", default=16),
                        c.int("mamba_dt_rank", default=math.ceil(D / 16)), c.int("mamba_d_conv", default=4))
    moe_layers = [i for i in range(L) if i % p_e == o_e]
    moe = None
    if moe_layers and c.key("E", default=0) > 1:
        E = c.key("E")
        k = _experts_per_token(c, E)
        first, lstep, note = _layer_step(L, moe_layers)
        notes += [note] if note else []
        moe = MoE(n_routed_experts=E, experts_per_token=k, d_ff_expert=c.key("F"), first_dense_layers=first,
                  layer_step=lstep)
    notes.append(f"{L} layers: {n_attn} attention, {L - n_attn} Mamba1; {len(moe_layers) if moe else 0} MoE.")
    return L, lin, moe, None, None


def _lightning(c: _Cfg, top: _Fields, L: int, D: int, N: int, notes: list[str]) -> LinearAttention | None:
    """MiniMax-Text-01 / MiniMax-M1: layer_types 'linear_attention' (transformers 4.57.1 MiniMaxConfig; its default
    alternates from a full layer) or attn_type_list 0 (the release's own config: 1 = softmax) are lightning
    attention: qkv_proj D → 3·N·H, output_gate D → N·H, out_proj N·H → D, no convolution, and a decayed
    state of H × H per head (MiniMaxLightningAttention), in the config's state dtype, else FP32."""
    types = c.get("layer_types")
    atl = c.get("attn_type_list")
    if types:
        if len(types) != L:
            raise CatalogError(f"{c.path}: field {c.prefix + 'layer_types'!r} has {len(types)} entries for {L} layers")
        n = sum(t == "linear_attention" for t in types)
    elif atl:
        if len(atl) != L:
            raise CatalogError(f"{c.path}: field {c.prefix + 'attn_type_list'!r} has {len(atl)} entries for {L} layers")
        n = sum(t == 0 for t in atl)
    else:
        n = L // 2  # MiniMaxConfig's default: full attention on even layers, lightning on odd ones
    if n == 0:
        return None
    H = c.key("H", default=D // N)
    notes.append(f"{n} of {L} layers lightning attention (MiniMax's decayed linear attention), {L - n} softmax.")
    return LinearAttention(kind="lightning", n_layers=n, key_heads=N, key_dim=H, value_heads=N, value_dim=H,
                           gates_per_head=0, conv_kernel=0, state_dtype=_state_dtype(c, top, "mamba_ssm_dtype"),
                           state_flop_per_element=5.0)


def _state_space(fam: str, c: _Cfg, top: _Fields, L: int, D: int, notes: list[str]):
    """(layers, mixer, None, 0 dense MLPs, d_ff) of a pure state-space model: every layer one mixer and no MLP,
    no attention and so no KV cache, a fixed state per sequence. Mamba / Falcon Mamba (Mamba1): intermediate_size
    (= expand · D) channels of state_size, time_step_rank ('auto': ceil(D / 16)); Mamba2 (Codestral Mamba):
    num_heads × head_dim (= expand · D), n_groups × state_size for B and C (transformers 4.57.1 MambaConfig,
    FalconMambaConfig, Mamba2Config)."""
    S, conv = c.int("state_size", default=16 if fam != "mamba2" else 128), c.int("conv_kernel", default=4)
    if fam == "mamba2":
        heads, head = c.int("num_heads", default=128), c.int("head_dim", default=64)
        width = c.int("expand", default=2) * D
        if heads * head != width:
            raise CatalogError(f"{c.path}: fields {c.prefix + 'num_heads'!r} × {c.prefix + 'head_dim'!r} ({heads} × "
                               f"{head}) must equal expand × hidden_size ({width})")
        lin = _mamba2_layer(L, c.int("n_groups", default=8), S, heads, head, conv,
                            _state_dtype(c, top, "mamba_ssm_dtype"))
    else:
        lin = _mamba1_mixer(L, c.key("F", default=c.int("expand", default=2) * D), S,
                            c.int("time_step_rank", default=math.ceil(D / 16)), conv)
    notes.append(f"a state-space model: {L} {lin.kind} layers, no attention (no KV cache, a fixed state per "
                 "sequence) and no MLP.")
    return L, lin, None, 0, D


# ---- several attention shapes: records.AttentionGroup -------------------------------------------------

def _gemma4(c: _Cfg, L: int, D: int, N: int, notes: list[str]) -> tuple[list[AttentionGroup], dict]:
    """Gemma 4: layer_types sliding_attention (num_key_value_heads × head_dim, window sliding_window) and
    full_attention (num_global_key_value_heads × global_head_dim; attention_k_eq_v: no V projection, the
    values are the key projection's output, normed apart, so the cache still holds K and V: aiconfigurator-core
    0.12.0 sdk/models/gemma4.py)."""
    for key, what in (("hidden_size_per_layer_input", "per-layer input embeddings"),
                      ("num_kv_shared_layers", "layers sharing another layer's KV cache")):
        if c.get(key):
            raise CatalogError(f"{c.path}: field {c.prefix + key!r} ({c.get(key)}): model_type 'gemma4' with {what} "
                               "is not supported yet (the small Gemma 4 models; not represented in tokenmath's model record)")
    types = c.get("layer_types")
    if not types or len(types) != L or set(types) - {"sliding_attention", "full_attention"}:
        raise CatalogError(f"{c.path}: field {c.prefix + 'layer_types'!r} must list sliding_attention / full_attention "
                           f"for each of the {L} layers")
    K, H = c.key("K", default=N), c.key("H", default=D // N)
    n_sw = types.count("sliding_attention")
    groups = [AttentionGroup(name="sliding_attention", n_layers=n_sw, n_heads=N, n_kv_heads=K, head_dim=H,
                             window=c.int("sliding_window"))] if n_sw else []
    if L - n_sw:
        groups.append(AttentionGroup(name="full_attention", n_layers=L - n_sw, n_heads=N,
                                     n_kv_heads=c.int("num_global_key_value_heads", default=K),
                                     head_dim=c.int("global_head_dim", default=H),
                                     values_from_keys=bool(c.get("attention_k_eq_v"))))
    return groups, {}


def _mimo_v2(c: _Cfg, L: int, D: int, N: int, notes: list[str]) -> tuple[list[AttentionGroup], dict]:
    """MiMo-V2-Flash: hybrid_layer_pattern 1 = sliding-window layers (swa_* heads and sizes, window
    sliding_window), 0 = full attention (num_key_value_heads, head_dim, v_head_dim)."""
    pat = c.get("hybrid_layer_pattern")
    if pat is None or len(pat) != L:
        raise CatalogError(f"{c.path}: field {c.prefix + 'hybrid_layer_pattern'!r} must give 0/1 for each of the {L} layers")
    K, H = c.key("K", default=N), c.key("H", default=D // N)
    Hv = c.int("v_head_dim", default=H)
    n_sw = sum(pat)
    notes.append("hybrid_layer_pattern 1 read as sliding-window layers (estimate: the 0s sit at layer 0 and every "
                 "6th layer, where Gemma-style 5:1 hybrids put their full layers; aiconfigurator-core 0.12.0 reads "
                 "1 as global).")
    groups = []
    if n_sw:
        groups.append(AttentionGroup(name="sliding_attention", n_layers=n_sw,
                                     n_heads=c.int("swa_num_attention_heads", default=N),
                                     n_kv_heads=c.int("swa_num_key_value_heads", default=K),
                                     head_dim=c.int("swa_head_dim", default=H), v_head_dim=c.int("swa_v_head_dim", default=Hv),
                                     window=c.int("sliding_window")))
    if L - n_sw:
        groups.append(AttentionGroup(name="full_attention", n_layers=L - n_sw, n_heads=N, n_kv_heads=K, head_dim=H,
                                     v_head_dim=Hv))
    return groups, {}


def _dsv4(c: _Cfg, L: int, D: int, N: int, notes: list[str]) -> tuple[list[AttentionGroup], dict]:
    """DeepSeek-V4: every layer is MQA over one head_dim-wide vector that serves as key and value (wkv: D×H),
    queries through q_lora_rank, a grouped low-rank output (o_groups groups into o_lora_rank each, then
    G_o·r_o → D), and a window of sliding_window recent tokens. compress_ratios per layer (entries beyond
    num_hidden_layers are the MTP layer's): 0 = window only; 4 = CSA: one compressed entry per 4 tokens
    (overlapping, coff = 2), of which a top-index_topk is read, chosen by an indexer (wq_b r_q × n_idx·d_idx,
    weights D × n_idx, its own compressor) over FP4 keys of d_idx/2 bytes; 128 = HCA: one entry per 128
    tokens, all read. Compressor per layer: wkv and wgate D × coff·H and a position bias r × coff·H; its
    FP32 decode buffers (kv and score, r × coff·H each, + the indexer's) are held per sequence — sizes as in
    aiconfigurator-core 0.12.0 sdk/models/deepseek_v4.py get_kvcache_bytes_per_sequence. Hyper-connections
    (hc_mult copies of the residual): a mixer of hc·D × (2 + hc)·hc before attention and before the MoE of
    each layer, counted with attention."""
    ratios = c.get("compress_ratios")
    if ratios is None or len(ratios) < L:
        raise CatalogError(f"{c.path}: field {c.prefix + 'compress_ratios'!r} must give a ratio for each of the {L} layers")
    ratios = ratios[:L]
    bad = set(ratios) - {0, 4, 128}
    if bad:
        raise CatalogError(f"{c.path}: field {c.prefix + 'compress_ratios'!r} has ratio {sorted(bad)[0]}: "
                           "not supported yet (DeepSeek-V4 uses 0, 4 and 128)")
    H, r_q, r_o, G_o = c.int("head_dim"), c.int("q_lora_rank"), c.int("o_lora_rank"), c.int("o_groups", default=1)
    w, topk, n_idx, d_idx = c.int("sliding_window"), c.int("index_topk"), c.int("index_n_heads"), c.int("index_head_dim")
    hc = c.int("hc_mult", default=1)
    mhc = 2 * (hc * D) * (2 + hc) * hc if hc > 1 else 0
    shape = dict(n_heads=N, n_kv_heads=c.key("K", default=1), head_dim=H, q_lora_rank=r_q, o_lora_rank=r_o, o_groups=G_o,
                 values_from_keys=True, one_kv_vector=True, window=w)
    groups = []
    for r, name in ((4, "CSA (1/4, top-k)"), (128, "HCA (1/128)"), (0, "sliding window")):
        n = ratios.count(r)
        if not n:
            continue
        if r == 0:
            groups.append(AttentionGroup(name=name, n_layers=n, extra_params=mhc, **shape))
            continue
        coff = 2 if r == 4 else 1
        comp = 2 * D * coff * H + r * coff * H
        state = 2 * r * coff * H * 4
        idx = {}
        if r == 4:
            comp += r_q * n_idx * d_idx + D * n_idx + 2 * D * coff * d_idx + r * coff * d_idx
            state += 2 * r * coff * d_idx * 4
            idx = dict(topk=topk, index_n_heads=n_idx, index_head_dim=d_idx, index_bytes_per_entry=d_idx * 0.5)
        groups.append(AttentionGroup(name=name, n_layers=n, compress_ratio=r, extra_params=comp + mhc,
                                     state_bytes=state, **idx, **shape))
    notes.append(f"compress_ratios: {', '.join(f'{g.n_layers} {g.name}' for g in groups)} layers; window "
                 f"{w}, one {H}-wide key/value vector per entry. The config does not state the KV cache's "
                 "format: bf16 assumed (estimate); the indexer's keys FP4 (d_idx/2 bytes, as aiconfigurator-core). "
                 f"{c.get('num_hash_layers') or 0} hash-routed layers counted with a router; hyper-connection "
                 f"mixers (hc_mult {hc}) counted with attention.")
    return groups, {}


def _ffn_width(mult: float, D: int) -> int:
    """DeciLM's FFN width: 2·mult·D/3 rounded up to a multiple of 256 (transformers' modeling_decilm)."""
    f = int(2 * mult * D / 3)
    return -(-f // 256) * 256


def _nas(c: _Cfg, L: int, D: int, N: int, notes: list[str]) -> tuple[list[AttentionGroup], dict]:
    """Llama-Nemotron NAS (DeciLM block_configs): per layer, attention kept (N / n_heads_in_group KV heads,
    optional window_length) or removed (no_op), and an FFN of _ffn_width(ffn_mult) or none. Layers of one KV
    width and window form one group; the FFN widths are summed (F·n_dense equals their sum: parameters and
    FLOP exact)."""
    blocks = c.get("block_configs")
    if not blocks or len(blocks) != L:
        raise CatalogError(f"{c.path}: field {c.prefix + 'block_configs'!r} must describe each of the {L} layers")
    if any(b.attention.replace_with_linear or b.ffn.replace_with_linear or b.attention.sparsify or b.ffn.sparsify
           for b in blocks):
        raise CatalogError(f"{c.path}: model_type 'nemotron-nas' with blocks replaced by linear layers or sparsified "
                           "is not supported yet (not represented in tokenmath's model record)")
    shapes: dict[tuple, int] = {}
    for b in blocks:
        if not b.attention.no_op:
            g = b.attention.n_heads_in_group
            if not g or N % g:
                raise CatalogError(f"{c.path}: block_configs n_heads_in_group {g} does not divide the {N} heads")
            key = (N // g, b.attention.window_length)
            shapes[key] = shapes.get(key, 0) + 1
    if not shapes:
        raise CatalogError(f"{c.path}: block_configs keep no attention layer")
    H = c.key("H", default=D // N)
    groups = sorted((AttentionGroup(name="attention" + (f" window {w}" if w else ""), n_layers=n, n_heads=N,
                                    n_kv_heads=K, head_dim=H, window=w) for (K, w), n in shapes.items()),
                    key=lambda g: -g.n_layers)
    widths = [_ffn_width(b.ffn.ffn_mult or 0, D) for b in blocks if not b.ffn.no_op and b.ffn.ffn_mult]
    total = sum(widths)
    n = next(n for n in range(min(L, len(widths) or 1), 0, -1) if total % n == 0) if total else 0
    n_attn = sum(shapes.values())
    notes.append(f"NAS blocks: {n_attn} of {L} layers keep attention, {len(widths)} an FFN (widths "
                 f"{min(widths)}..{max(widths)}, sum {total}: modelled as {n} of width {total // max(n, 1)}, "
                 "parameters and FLOP exact).")
    return groups, {"F": total // n if n else 1, "n_dense_mlp": n}


def _msa(c: _Cfg, L: int, D: int, N: int, notes: list[str]) -> tuple[list[AttentionGroup], dict]:
    """MiniMax-M3: GQA (num_key_value_heads × head_dim) on every layer; the layers sparse_attention_freq marks
    index their keys in blocks of sparse_block_size tokens and attend to the top sparse_topk_blocks blocks
    plus sparse_local_block recent and sparse_init_block first blocks: top-k = (topk + local + init)·block
    tokens read per step, all tokens held. The indexer (index_q_proj, index_k_proj in NVIDIA's release) scores
    every token's index key with sparse_num_index_heads heads of sparse_index_dim. The dense MLP of the
    first_k_dense_replace layers is dense_intermediate_size wide (intermediate_size is the experts')."""
    sa = c.get("sparse_attention_config")
    K, H = c.key("K", default=N), c.key("H", default=D // N)
    groups = []
    n_sp = 0
    if sa is not None and sa.use_sparse_attention:
        freq = sa.sparse_attention_freq
        if freq is None or len(freq) != L:
            raise CatalogError(f"{c.path}: field {c.prefix + 'sparse_attention_config.sparse_attention_freq'!r} must give "
                               f"0/1 for each of the {L} layers")
        for key in ("sparse_block_size", "sparse_topk_blocks", "sparse_num_index_heads", "sparse_index_dim"):
            if getattr(sa, key) is None:
                raise CatalogError(f"{c.path}: field {c.prefix + 'sparse_attention_config.' + key!r} missing")
        n_sp = sum(freq)
        blocks = sa.sparse_topk_blocks + sa.sparse_local_block + sa.sparse_init_block
        n_idx, d_idx = sa.sparse_num_index_heads, sa.sparse_index_dim
        if n_sp:
            groups.append(AttentionGroup(name="block_sparse_attention", n_layers=n_sp, n_heads=N, n_kv_heads=K,
                                         head_dim=H, topk=blocks * sa.sparse_block_size, index_n_heads=n_idx,
                                         index_head_dim=d_idx, index_bytes_per_entry=n_idx * d_idx * 2,
                                         extra_params=2 * D * n_idx * d_idx))
        notes.append(f"block-sparse attention on {n_sp} of {L} layers: {sa.sparse_topk_blocks} top + "
                     f"{sa.sparse_local_block} local + {sa.sparse_init_block} initial blocks of {sa.sparse_block_size} "
                     f"tokens read per step (all tokens held). Estimate (the config does not say): each token keeps an "
                     f"index key of sparse_num_index_heads × sparse_index_dim = {n_idx}×{d_idx} in BF16 beside its KV, "
                     f"and the indexer's q and k projections are D × {n_idx * d_idx} each.")
    if L - n_sp:
        groups.append(AttentionGroup(name="full_attention", n_layers=L - n_sp, n_heads=N, n_kv_heads=K, head_dim=H))
    over = {"F": c.int("dense_intermediate_size")} if "dense_intermediate_size" in c.set else {}
    return groups, over


_GROUPS = {"gemma4": _gemma4, "mimo_v2": _mimo_v2, "dsv4": _dsv4, "nas": _nas, "msa": _msa}


# ---- reading ---------------------------------------------------------------------------------------

def _mllama(cfg: dict, c: _Cfg, path: Path, L: int, D: int) -> CrossAttention:
    """Llama 3.2 Vision: text_config cross_attention_layers, and the image encoder from vision_config. One image of
    max_num_tiles tiles leaves tiles·((image_size/patch_size)² + 1) vision tokens. The encoder's weights outside its
    linears (transformers 4.57.1 MllamaVisionModel): a gated tile-position table of (R + 1)·T·P_t·D_v, a position
    table P_t·D_v, pre- and post-tile tables 2·(R + 1)·T·D_v (R supported aspect ratios), the patch convolution
    c·p²·D_v, a class embedding, layer norms and MLP biases per layer, 2 gates per global layer, 3 embedding gates,
    and the projector's bias."""
    cross = c.get("cross_attention_layers")
    if not cross or len(set(cross)) != len(cross) or max(cross) >= L:
        raise CatalogError(f"{path}: field {c.prefix + 'cross_attention_layers'!r} must list distinct layers below {L}")
    vc = cfg.get("vision_config")
    if not isinstance(vc, dict):
        raise CatalogError(f"{path}: field 'vision_config' missing or not an object")
    v = _Cfg(vc, path, "vision_config.")
    D_v, F_v, p = v.int("hidden_size"), v.int("intermediate_size"), v.int("patch_size")
    L_loc, L_glob, T = v.int("num_hidden_layers"), v.int("num_global_layers", default=0), v.int("max_num_tiles")
    img, ch = v.int("image_size"), v.int("num_channels", default=3)
    R = len(v.get("supported_aspect_ratios") or []) or 8
    P_t = (img // p) ** 2 + 1
    extra = ((R + 1) * T * P_t * D_v + P_t * D_v + 2 * (R + 1) * T * D_v + ch * p * p * D_v + D_v + 4 * D_v
             + (L_loc + L_glob) * (4 * D_v + F_v + D_v) + 2 * L_glob + 3 + D)
    return CrossAttention(n_layers=len(cross), kv_tokens=T * P_t, vision_layers=L_loc + L_glob, vision_d_model=D_v,
                          vision_d_ff=F_v, vision_out_dim=v.int("vision_output_dim"), vision_extra_params=extra)


def _depth(x: Any, limit: int) -> bool:
    """True when `x` nests deeper than `limit` (checked without recursion)."""
    stack = [(x, 0)]
    while stack:
        v, d = stack.pop()
        if d > limit:
            return True
        if isinstance(v, dict):
            stack.extend((w, d + 1) for w in v.values())
        elif isinstance(v, list):
            stack.extend((w, d + 1) for w in v)
    return False


def read_hf_config(path: Path) -> dict:
    """Parse a config.json: at most MAX_CONFIG_BYTES of UTF-8 (files.read_text), nested no deeper than configs are."""
    try:
        cfg = json.loads(read_text(path, MAX_CONFIG_BYTES))
    except json.JSONDecodeError as e:
        raise CatalogError(f"{path}: malformed JSON at line {e.lineno} ({e.msg})") from None
    except RecursionError:
        raise CatalogError(f"{path}: JSON nested too deeply to be a config.json") from None
    if isinstance(cfg, (dict, list)) and _depth(cfg, _MAX_DEPTH):
        raise CatalogError(f"{path}: JSON nested deeper than {_MAX_DEPTH} levels: not a config.json")
    if isinstance(cfg, dict) and "quantization_config" not in cfg:
        cfg = _with_quant_file(cfg, Path(path))
    return cfg


def _with_quant_file(cfg: dict, path: Path) -> dict:
    """NVIDIA's ModelOpt checkpoints state their quantisation in hf_quant_config.json beside config.json
    (`<stem>_hf_quant_config.json` beside `<stem>_config.json` in aiconfigurator-core's copies): read its
    `quantization` block as the quantization_config."""
    name = path.name
    if name == "config.json":
        q = path.with_name("hf_quant_config.json")
    elif name.endswith("_config.json") and not name.endswith("_hf_quant_config.json"):
        q = path.with_name(name[: -len("config.json")] + "hf_quant_config.json")
    else:
        return cfg
    if not q.is_file():
        return cfg
    try:
        qc = json.loads(read_text(q, MAX_CONFIG_BYTES))
    except json.JSONDecodeError as e:
        raise CatalogError(f"{q}: malformed JSON at line {e.lineno} ({e.msg})") from None
    block = qc.get("quantization") if isinstance(qc, dict) else None
    if not isinstance(block, dict) or _depth(block, _MAX_DEPTH):
        raise CatalogError(f"{q}: field 'quantization' missing or not an object")
    return {**cfg, "quantization_config": {"quant_method": "modelopt", **block}, "_quant_file": q.name}


def model_from_hf_config(cfg: dict, path: Path) -> Model:
    """A Model record from a parsed config.json (`path` is where it came from, for names and errors)."""
    path = Path(path)
    if not isinstance(cfg, dict):
        raise CatalogError(f"{path}: expected a JSON object of config fields, got {type(cfg).__name__}")
    if _depth(cfg, _MAX_DEPTH):
        raise CatalogError(f"{path}: JSON nested deeper than {_MAX_DEPTH} levels: not a config.json")
    fam = _family(cfg, path)
    notes: list[str] = []
    top = _fields(cfg, path, "")
    c = _Cfg(cfg, path)
    tc = cfg.get("text_config")
    if tc is not None and not isinstance(tc, dict):
        raise CatalogError(f"{path}: field 'text_config' must be an object, got {type(tc).__name__}")
    if cfg.get("model_type") in ("gemma3", "gemma4", "llama4") and tc is None:
        raise CatalogError(f"{path}: field 'text_config' missing")
    if isinstance(tc, dict) and (not c.set & set(_KEYS["D"]) or cfg.get("model_type") in ("gemma3", "gemma4", "llama4")):
        sub = tc.get("model_type")
        if isinstance(sub, str) and _SAME_AS.get(sub, sub) in FAMILY_SPECS:
            fam = _SAME_AS.get(sub, sub)
        c = _Cfg(tc, path, "text_config.")
        notes.append("language model read from text_config" + ("." if fam == "mllama" else
                                                                 "; the vision encoder is not counted."))
    spec = FAMILY_SPECS[fam]
    c.defaults = spec.defaults

    D = c.key("D")
    blocks = c.get("hybrid_override_pattern") or c.get("layers_block_type") if spec.linear == "mamba2" else None
    L = c.key("L", default=len(blocks) if blocks else None)  # Nemotron 3 Ultra lists its blocks only
    N = c.key("N", default=1 if spec.linear in ("ssm1", "ssm2") else None)  # a state-space model has no attention
    lin = blocks_moe = n_dense_mlp = F_hybrid = None
    if spec.linear == "mamba2":
        L, lin, blocks_moe, n_dense_mlp = _nemotron_h(c, top, L, notes)
    elif spec.linear == "mamba2_hf":
        L, lin, blocks_moe, n_dense_mlp, F_hybrid = _mamba2_hybrid(fam, c, top, L, D, notes)
    elif spec.linear == "mamba1":
        L, lin, blocks_moe, n_dense_mlp, F_hybrid = _jamba(c, top, L, D, notes)
    elif spec.linear == "lightning":
        lin = _lightning(c, top, L, D, N, notes)
    elif spec.linear in ("ssm1", "ssm2"):
        L, lin, blocks_moe, n_dense_mlp, F_hybrid = _state_space(fam, c, top, L, D, notes)
    elif spec.linear == "gdn":
        lin = _gated_deltanet(c, top, L)
    elif spec.linear == "kda":
        lin = _kda(c, L, D)
    if c.get("multi_query") and fam in ("falcon", "gpt_bigcode") and not c.get("new_decoder_architecture"):
        K = 1
    else:
        attn = c.get("attn_config")
        K = c.key("K", required=False) or (attn.kv_n_heads if attn and attn.kv_n_heads else None) or N
    if K > N:
        raise CatalogError(f"{path}: field {c.prefix + 'num_key_value_heads'!r} ({K}) exceeds the {N} attention heads")
    V = c.key("V")
    mla = sparse = None
    if spec.mla:
        mla = MLA(q_lora_rank=c.int("q_lora_rank", required=False), kv_lora_rank=c.int("kv_lora_rank"),
                  qk_nope_head_dim=c.int("qk_nope_head_dim"), qk_rope_head_dim=c.int("qk_rope_head_dim"),
                  v_head_dim=c.int("v_head_dim"))
        H = mla.v_head_dim
        if "index_topk" in c.set:
            itypes = c.get("indexer_types")
            if itypes is not None and len(itypes) != L:
                raise CatalogError(f"{path}: field {c.prefix + 'indexer_types'!r} has {len(itypes)} entries for {L} layers")
            n_idx = sum(t == "full" for t in itypes) if itypes and "full" in itypes else None
            if n_idx is not None and n_idx < L:
                notes.append(f"{n_idx} of {L} layers run their own indexer (indexer_types); the others reuse it.")
            sparse = SparseAttention(index_topk=c.int("index_topk"), index_n_heads=c.int("index_n_heads"),
                                     index_head_dim=c.int("index_head_dim"),
                                     n_index_layers=n_idx if n_idx is not None and n_idx < L else None)
    else:
        H = c.key("H", default=D // N)  # transformers' default where head_dim is absent: hidden // heads, floored
    mtp = c.get("num_nextn_predict_layers") or c.get("mtp_num_hidden_layers")
    if mtp:
        notes.append(f"{mtp} MTP layer(s) not counted.")
    if fam == "doge" and c.get("is_moe"):
        raise CatalogError(f"{path}: model_type 'doge' with is_moe (cross-domain MoE: {c.key('E')} single-neuron experts "
                           "retrieved per token) is not supported yet (not represented in tokenmath's model record)")
    if c.get("attn_type_list") and 0 in c.get("attn_type_list") and spec.linear != "lightning":
        raise CatalogError(f"{path}: field {c.prefix + 'attn_type_list'!r} has linear-attention layers; tokenmath's "
                           "roofline covers softmax attention only")
    moe = blocks_moe if spec.linear in ("mamba2", "mamba2_hf", "mamba1", "ssm1", "ssm2") else _moe(spec, c, L, D, notes)
    groups, over = _GROUPS[spec.groups](c, L, D, N, notes) if spec.groups else (None, {})
    if groups:  # the largest group names the model's main shape (layouts split its KV heads)
        K, H = groups[0].n_kv_heads, groups[0].head_dim
        n_dense_mlp = over.get("n_dense_mlp", n_dense_mlp)
    if "F" in over:
        F = over["F"]
    elif F_hybrid is not None:
        F = F_hybrid
    elif fam == "llama4":
        F = c.int("intermediate_size_mlp", "intermediate_size")
    elif fam == "dbrx":
        F = moe.d_ff_expert
    elif moe is not None and spec.expert_ff == _MOE_FF:
        F = moe.d_ff_expert
    elif moe is not None:
        F = c.key("F", default=moe.d_ff_expert)
    elif spec.ff_ratio:
        ratio = c.int("expansion_ratio", "intermediate_multiple_size", default=spec.ff_ratio)
        F = c.key("F", default=ratio * D)
    else:
        F = c.key("F")
    window, n_sliding, note = _sliding(spec, c, L) if not groups else (None, 0, "")
    notes += [note] if note else []
    if spec.notes:
        notes.append(spec.notes)
    dtype, per_kind, kv, how = _formats(c, top, mlp_beside_experts=fam == "gemma4")
    notes.append(f"weight formats from {how}.")
    if c.get("expert_dtype") == "fp4" and per_kind.get("experts", dtype) not in ("fp4", "mxfp4", "nvfp4"):
        per_kind = {**per_kind, "experts": "mxfp4"}  # DeepSeek-V4's own release: FP4 experts beside FP8 layers
        notes.append("expert_dtype fp4: routed experts stored in FP4, taken as MXFP4 (one 8-bit scale per 32 "
                     "values, 4.25 bits; estimate: the config names no scale layout).")
    attention = "mla" if mla else "mha" if K == N else "mqa" if K == 1 else "gqa"
    gate = c.get("attn_output_gate")
    gate = spec.output_gate if gate is None else gate
    qk = c.get("use_qk_norm")
    qk = c.get("qk_layernorm") if qk is None else qk
    qk = spec.qk_norm if qk is None else qk
    if mla is not None:  # Kimi K3: a gate on the MLA output
        gate = bool(c.get("mla_use_output_gate"))
    if lin is not None:
        notes.append(f"{lin.n_layers} of {L} layers are {lin.kind.replace('_', ' ')} (fixed state per sequence, "
                     f"{lin.state_dtype}), {L - lin.n_layers} attention.")
    cross = _mllama(cfg, c, path, L, D) if fam == "mllama" else None
    if cfg.get("_quant_file"):
        notes.append(f"quantisation read from {cfg['_quant_file']}.")
    name = path.parent.name if path.name == "config.json" and path.parent.name else path.stem
    tie = c.get("tie_word_embeddings")
    if tie is None:
        tie = top.tie_word_embeddings
    if tie is None:
        tie = spec.tie
    display = cfg.get("_name_or_path")
    try:
        return Model(
            name=name or "config", display_name=display if isinstance(display, str) and display else name,
            family=spec.label, file=str(path), source=f"config.json at {path}",
            n_layers=L, d_model=D, n_heads=N, n_kv_heads=K, head_dim=H, d_ff=F, vocab_size=V,
            tie_embeddings=bool(tie), mlp_matrices=spec.mlp,
            attention=attention, mla=mla, sparse_attention=sparse,
            sliding_window=window, n_sliding_layers=n_sliding, moe=moe,
            linear_attention=lin, cross_attention=cross, attention_groups=tuple(groups) if groups else None, attention_output_gate=bool(gate), qk_norm=bool(qk), sandwich_norms=spec.sandwich,
            n_dense_mlp_layers=n_dense_mlp,
            weight_dtype=dtype, weight_dtypes=per_kind, kv_dtype=kv or "bf16", fp8_block_size=_fp8_block(c, top, dtype),
            max_context=c.key("ctx", required=False), notes=" ".join(notes),
        )
    except ValidationError as e:
        err = e.errors()[0]
        loc = ".".join(str(x) for x in err["loc"])
        raise CatalogError(f"{path}: {loc}: {err['msg'].removeprefix('Value error, ')}") from None
