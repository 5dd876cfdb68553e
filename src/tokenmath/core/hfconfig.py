"""Read a Hugging Face `config.json` into a `Model` record (what `tokenmath.core.load.load_model` calls for *.json).

Families (by `model_type`, else by `architectures`): Llama 3 (`llama`), Mistral (`mistral`), Mixtral
(`mixtral`), Qwen2 / Qwen3 (`qwen2`, `qwen3`), Qwen3-MoE (`qwen3_moe`), DeepSeek-V2/V3 and Kimi K2
(`deepseek_v2`, `deepseek_v3`, `kimi_k2`), DeepSeek-V3.2 (`deepseek_v32`), gpt-oss (`gpt_oss`), Gemma 3
(`gemma3`, `gemma3_text`) and Llama 4 (`llama4`, `llama4_text`). Multimodal configs (Gemma 3, Llama 4) keep
the language model under `text_config`; only that part is read (vision towers are not counted).

Key map (config.json -> Model field):

- hidden_size -> d_model; num_hidden_layers -> n_layers; num_attention_heads -> n_heads;
  num_key_value_heads -> n_kv_heads (default n_heads); head_dim -> head_dim (default hidden/heads;
  MLA: v_head_dim); intermediate_size -> d_ff (Llama 4: intermediate_size_mlp); vocab_size;
  tie_word_embeddings -> tie_embeddings (family default: true for Gemma 3, false otherwise);
  max_position_embeddings -> max_context.
- MoE: num_local_experts / n_routed_experts / num_experts -> n_routed_experts; num_experts_per_tok
  (gpt-oss: experts_per_token) -> experts_per_token; n_shared_experts (Llama 4: always 1);
  moe_intermediate_size (Mixtral, gpt-oss, Llama 4: intermediate_size) -> d_ff_expert; the MoE layers
  each family's code selects (first_k_dense_replace + moe_layer_freq, decoder_sparse_step +
  mlp_only_layers, interleave_moe_layer_step / moe_layers) -> first_dense_layers + layer_step. Where the
  positions cannot be written that way the count is kept exact (the parameter count only needs the count).
- MLA: kv_lora_rank, q_lora_rank, qk_rope_head_dim, qk_nope_head_dim, v_head_dim; DeepSeek-V3.2 adds
  index_topk, index_n_heads, index_head_dim -> sparse_attention.
- Local attention: layer_types (sliding_attention / chunked_attention count as windowed) or, without it,
  the family rule: Gemma 3 sliding_window_pattern (every n-th layer global, default 6), gpt-oss
  alternating, Llama 4 no_rope_layers / 3 of 4 chunked (attention_chunk_size, modelled as a window),
  Mistral/Mixtral sliding_window on every layer, Qwen2/3 use_sliding_window above max_window_layers.
- weight_dtype: quantization_config when present (fp8, mxfp4 -> fp4, bits 4/8 -> int4/int8), else
  torch_dtype / dtype (bfloat16 -> bf16 ...). KV dtype is bf16 (what serving stacks default to).

Not represented, and small: biases, norms, attention sinks, MTP heads (num_nextn_predict_layers).
A missing required key raises CatalogError naming the file and the field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .errors import CatalogError
from .records import MLA, Model, MoE, SparseAttention

__all__ = ["model_from_hf_config", "FAMILIES"]

# model_type -> family label used in the record
FAMILIES: dict[str, str] = {
    "llama": "llama", "mistral": "mistral", "mixtral": "mixtral",
    "qwen2": "qwen2", "qwen3": "qwen3", "qwen3_moe": "qwen3-moe",
    "deepseek_v2": "deepseek-v3", "deepseek_v3": "deepseek-v3", "kimi_k2": "deepseek-v3", "deepseek_v32": "deepseek-v3",
    "gpt_oss": "gpt-oss", "gemma3": "gemma-3", "gemma3_text": "gemma-3", "llama4": "llama-4", "llama4_text": "llama-4",
}

_ARCHITECTURES: dict[str, str] = {
    "LlamaForCausalLM": "llama", "MistralForCausalLM": "mistral", "MixtralForCausalLM": "mixtral",
    "Qwen2ForCausalLM": "qwen2", "Qwen3ForCausalLM": "qwen3", "Qwen3MoeForCausalLM": "qwen3_moe",
    "DeepseekV2ForCausalLM": "deepseek_v2", "DeepseekV3ForCausalLM": "deepseek_v3",
    "DeepseekV32ForCausalLM": "deepseek_v32", "GptOssForCausalLM": "gpt_oss",
    "Gemma3ForCausalLM": "gemma3_text", "Gemma3ForConditionalGeneration": "gemma3",
    "Llama4ForCausalLM": "llama4_text", "Llama4ForConditionalGeneration": "llama4",
}

# transformers' Gemma3TextConfig defaults, used where a Gemma 3 config.json leaves the key out
_GEMMA3_DEFAULTS = {"vocab_size": 262208, "head_dim": 256, "sliding_window": 4096, "sliding_window_pattern": 6,
                    "max_position_embeddings": 131072, "tie_word_embeddings": True}

_TORCH_DTYPES = {"bfloat16": "bf16", "float16": "fp16", "half": "fp16", "float32": "fp32", "float": "fp32",
                 "float8_e4m3fn": "fp8"}


class _Cfg:
    """Key lookups on one (possibly nested) config dict, with errors that name the file and field."""

    def __init__(self, d: dict, path: Path, prefix: str = "", defaults: dict | None = None):
        self.d, self.path, self.prefix, self.defaults = d, path, prefix, defaults or {}

    def has(self, key: str) -> bool:
        return self.d.get(key) is not None or key in self.defaults

    def get(self, key: str, default: Any = None) -> Any:
        v = self.d.get(key)
        if v is None:
            return self.defaults.get(key, default)
        return v

    def int(self, *keys: str, default: int | None = None, required: bool = True) -> int | None:
        """The first of `keys` that is set, as an int; missing and required raises CatalogError."""
        for k in keys:
            v = self.get(k)
            if v is not None:
                if isinstance(v, bool) or not isinstance(v, (int, float)) or int(v) != v:
                    raise CatalogError(f"{self.path}: field {self.prefix + k!r} must be an integer, got {v!r}")
                return int(v)
        if default is not None or not required:
            return default
        raise CatalogError(f"{self.path}: field {self.prefix + keys[0]!r} missing")


def _family(cfg: dict, path: Path) -> str:
    mt = cfg.get("model_type")
    if isinstance(mt, str) and mt in FAMILIES:
        return mt
    archs = cfg.get("architectures")
    for arch in archs if isinstance(archs, list) else []:
        if isinstance(arch, str) and arch in _ARCHITECTURES:
            return _ARCHITECTURES[arch]
    what = f"model_type {mt!r}" if mt else f"architectures {cfg.get('architectures')!r}" if cfg.get(
        "architectures") else "no model_type or architectures"
    supported = ", ".join(sorted(FAMILIES))
    raise CatalogError(f"{path}: unsupported {what}; supported model_type values: {supported}")


def _weight_dtype(c: _Cfg, top: dict) -> tuple[str, str]:
    """(dtype, how it was decided) from quantization_config, else torch_dtype / dtype."""
    q = c.get("quantization_config") or top.get("quantization_config")
    if isinstance(q, dict):
        method = str(q.get("quant_method", "")).lower()
        if method in ("fp8", "fbgemm_fp8") or q.get("fmt") == "e4m3":
            return "fp8", f"quantization_config quant_method {method}"
        if method in ("mxfp4", "nvfp4"):
            return "fp4", f"quantization_config quant_method {method} (4-bit values + block scales)"
        if method == "bitsandbytes":
            if q.get("load_in_4bit"):
                return "int4", "quantization_config bitsandbytes 4-bit"
            if q.get("load_in_8bit"):
                return "int8", "quantization_config bitsandbytes 8-bit"
        bits = q.get("bits")
        if bits is None and isinstance(q.get("config_groups"), dict):  # compressed-tensors
            for group in q["config_groups"].values():
                w = (group or {}).get("weights") or {}
                if w.get("num_bits"):
                    bits = w["num_bits"]
                    if w.get("type") == "float":
                        return {8: "fp8", 4: "fp4"}.get(bits, "bf16"), f"quantization_config {method} float{bits}"
                    break
        if bits in (4, 8):
            return f"int{bits}", f"quantization_config {method or 'quantized'} {bits}-bit"
    td = str(c.get("torch_dtype") or c.get("dtype") or top.get("torch_dtype") or top.get("dtype") or "bfloat16")
    return _TORCH_DTYPES.get(td.replace("torch.", ""), "bf16"), f"torch_dtype {td}"


def _layer_step(n_layers: int, moe_layers: list[int]) -> tuple[int, int, str]:
    """(first_dense_layers, layer_step, note) whose MoE-layer count equals len(moe_layers)."""
    n = len(moe_layers)
    if n == 0:
        return 0, 1, ""
    first = moe_layers[0]
    step = moe_layers[1] - moe_layers[0] if n > 1 else 1
    if moe_layers == list(range(first, n_layers, step)):
        # tokenmath counts (L - first_dense) // step MoE layers: take the largest first_dense that agrees
        for dense in range(first, -1, -1):
            if (n_layers - dense) // step == n:
                return dense, step, ""
    # positions not of the form first + k·step: keep the count exact
    return n_layers - n, 1, f"MoE layers {moe_layers} represented as the last {n} layers (count exact)."


def _sliding(fam: str, c: _Cfg, L: int) -> tuple[int | None, int, str]:
    """(window, layers with a window, note)."""
    types = c.get("layer_types")
    if isinstance(types, list) and types:
        n = sum(t in ("sliding_attention", "chunked_attention") for t in types)
        chunked = any(t == "chunked_attention" for t in types)
        w = c.get("attention_chunk_size") if chunked else c.get("sliding_window")
        note = "chunked local attention modelled as a sliding window." if chunked else ""
        return (int(w), n, note) if n and w else (None, 0, "")
    if fam == "gemma3":
        w, p = c.get("sliding_window"), c.get("sliding_window_pattern")
        if w and p:
            n = sum((i + 1) % int(p) != 0 for i in range(L))
            return int(w), n, ""
        return None, 0, ""
    if fam == "gpt_oss":
        w = c.get("sliding_window")
        return (int(w), sum(i % 2 == 0 for i in range(L)), "") if w else (None, 0, "")
    if fam == "llama4":
        w = c.get("attention_chunk_size")
        if not w:
            return None, 0, ""
        rope = c.get("no_rope_layers")
        flags = rope if isinstance(rope, list) and len(rope) == L else [int((i + 1) % 4 != 0) for i in range(L)]
        return int(w), sum(bool(x) for x in flags), "chunked local attention modelled as a sliding window."
    if fam in ("mistral", "mixtral"):
        w = c.get("sliding_window")
        return (int(w), L, "") if w else (None, 0, "")
    if fam in ("qwen2", "qwen3", "qwen3_moe") and c.get("use_sliding_window") and c.get("sliding_window"):
        n = max(0, L - int(c.get("max_window_layers", L)))
        return (int(c.get("sliding_window")), n, "") if n else (None, 0, "")
    return None, 0, ""


def _moe(fam: str, c: _Cfg, L: int, notes: list[str]) -> MoE | None:
    if fam in ("mixtral", "gpt_oss"):
        E = c.int("num_local_experts")
        k = c.int("num_experts_per_tok", "experts_per_token")
        return MoE(n_routed_experts=E, experts_per_token=k, d_ff_expert=c.int("intermediate_size"))
    if fam == "qwen3_moe":
        E = c.int("num_experts")
        step = c.int("decoder_sparse_step", default=1)
        dense = set(c.get("mlp_only_layers") or [])
        layers = [i for i in range(L) if i not in dense and (i + 1) % step == 0]
        first, lstep, note = _layer_step(L, layers)
        notes += [note] if note else []
        return MoE(n_routed_experts=E, experts_per_token=c.int("num_experts_per_tok"),
                   d_ff_expert=c.int("moe_intermediate_size"), first_dense_layers=first, layer_step=lstep)
    if fam in ("deepseek_v2", "deepseek_v3", "kimi_k2", "deepseek_v32"):
        E = c.int("n_routed_experts")
        k0, freq = c.int("first_k_dense_replace", default=0), c.int("moe_layer_freq", default=1)
        layers = [i for i in range(k0, L) if i % freq == 0]
        first, lstep, note = _layer_step(L, layers)
        notes += [note] if note else []
        return MoE(n_routed_experts=E, experts_per_token=c.int("num_experts_per_tok"),
                   n_shared_experts=c.int("n_shared_experts", default=0), d_ff_expert=c.int("moe_intermediate_size"),
                   first_dense_layers=first, layer_step=lstep)
    if fam == "llama4":
        E = c.int("num_local_experts")
        step = c.int("interleave_moe_layer_step", default=1)
        layers = c.get("moe_layers")
        if not isinstance(layers, list):
            layers = list(range(step - 1, L, step))
        first, lstep, note = _layer_step(L, sorted(int(i) for i in layers))
        notes += [note] if note else []
        return MoE(n_routed_experts=E, experts_per_token=c.int("num_experts_per_tok"), n_shared_experts=1,
                   d_ff_expert=c.int("intermediate_size"), first_dense_layers=first, layer_step=lstep)
    return None


def model_from_hf_config(cfg: dict, path: Path) -> Model:
    """A Model record from a parsed config.json (`path` is where it came from, for names and errors)."""
    path = Path(path)
    if not isinstance(cfg, dict):
        raise CatalogError(f"{path}: expected a JSON object of config fields, got {type(cfg).__name__}")
    fam = _family(cfg, path)
    c = _Cfg(cfg, path)
    if fam in ("gemma3", "llama4"):  # multimodal: the language model sits under text_config
        tc = cfg.get("text_config")
        if not isinstance(tc, dict):
            raise CatalogError(f"{path}: field 'text_config' missing")
        c = _Cfg(tc, path, "text_config.")
    if fam in ("gemma3", "gemma3_text"):
        c.defaults = _GEMMA3_DEFAULTS
        fam = "gemma3"
    if fam == "llama4_text":
        fam = "llama4"
    notes: list[str] = []

    D = c.int("hidden_size")
    L = c.int("num_hidden_layers")
    N = c.int("num_attention_heads")
    if N < 1:
        raise CatalogError(f"{path}: field {c.prefix}num_attention_heads must be at least 1, got {N}")
    K = c.int("num_key_value_heads", default=N)
    V = c.int("vocab_size")
    mla = sparse = None
    if fam in ("deepseek_v2", "deepseek_v3", "kimi_k2", "deepseek_v32"):
        mla = MLA(q_lora_rank=c.int("q_lora_rank", required=False), kv_lora_rank=c.int("kv_lora_rank"),
                  qk_nope_head_dim=c.int("qk_nope_head_dim"), qk_rope_head_dim=c.int("qk_rope_head_dim"),
                  v_head_dim=c.int("v_head_dim"))
        H = mla.v_head_dim
        if c.has("index_topk"):
            sparse = SparseAttention(index_topk=c.int("index_topk"), index_n_heads=c.int("index_n_heads"),
                                     index_head_dim=c.int("index_head_dim"))
        if c.get("num_nextn_predict_layers"):
            notes.append(f"{c.get('num_nextn_predict_layers')} MTP layer(s) not counted.")
    else:
        H = c.int("head_dim", default=D // N if D % N == 0 else None)
    moe = _moe(fam, c, L, notes)
    if fam == "llama4":
        F = c.int("intermediate_size_mlp", "intermediate_size")
    elif moe is not None and fam in ("mixtral", "gpt_oss"):
        F = moe.d_ff_expert
    elif moe is not None:
        F = c.int("intermediate_size", default=moe.d_ff_expert)
    else:
        F = c.int("intermediate_size")
    window, n_sliding, note = _sliding(fam, c, L)
    notes += [note] if note else []
    dtype, how = _weight_dtype(c, cfg)
    notes.append(f"weight_dtype from {how}.")
    attention = "mla" if mla else "mha" if K == N else "mqa" if K == 1 else "gqa"
    name = path.parent.name if path.name == "config.json" and path.parent.name else path.stem
    try:
        return Model(
            name=name or "config", display_name=str(cfg.get("_name_or_path") or name), family=FAMILIES[fam],
            file=str(path), source=f"config.json at {path}",
            n_layers=L, d_model=D, n_heads=N, n_kv_heads=K, head_dim=H, d_ff=F, vocab_size=V,
            tie_embeddings=bool(c.get("tie_word_embeddings", cfg.get("tie_word_embeddings", False))),
            attention=attention, mla=mla, sparse_attention=sparse,
            sliding_window=window, n_sliding_layers=n_sliding, moe=moe,
            weight_dtype=dtype, kv_dtype="bf16", max_context=c.int("max_position_embeddings", required=False),
            notes=" ".join(notes),
        )
    except ValidationError as e:
        err = e.errors()[0]
        loc = ".".join(str(x) for x in err["loc"])
        raise CatalogError(f"{path}: {loc}: {err['msg']}") from None
