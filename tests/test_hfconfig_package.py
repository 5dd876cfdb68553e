"""Every Hugging Face config.json that aiconfigurator-core ships (model_configs/, verbatim configs of 2025–2026
releases) imports, or is refused with one line naming what is not represented; hybrids keep KV only on their
attention layers plus a fixed state. Skipped where aiconfigurator-core (the `kernels` extra) is not installed."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tokenmath.core.arch import kv_bytes_per_token, kv_read_bytes, kv_stored_bytes, param_counts, \
    state_bytes_per_sequence
from tokenmath.core.errors import CatalogError
from tokenmath.core.load import load_model


def _configs() -> list[Path]:
    spec = importlib.util.find_spec("aiconfigurator_core")
    if spec is None or not spec.submodule_search_locations:
        return []
    d = Path(next(iter(spec.submodule_search_locations))) / "model_configs"
    return sorted(p for p in d.glob("*_config.json") if not p.name.endswith("_hf_quant_config.json"))


CONFIGS = _configs()
needs_package = pytest.mark.skipif(not CONFIGS, reason="aiconfigurator-core not installed (pip install -e '.[kernels]')")
# families refused on purpose, each for a variation the Model record does not express (hfconfig._NOT_YET)
REFUSED: tuple[str, ...] = ()  # every config in aiconfigurator-core 0.12.0 imports


def _find(stem: str) -> Path:
    hits = [p for p in CONFIGS if p.name == f"{stem}_config.json"]
    if not hits:
        pytest.skip(f"{stem} not in this aiconfigurator-core")
    return hits[0]


@needs_package
@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name.removesuffix("_config.json"))
def test_imports_or_refused_in_one_line(path):
    try:
        m = load_model(str(path))
    except CatalogError as e:
        msg = str(e)
        assert "\n" not in msg and "not supported yet" in msg, msg
        assert any(r in path.name for r in REFUSED), f"unexpected refusal: {msg}"
        return
    assert not any(r in path.name for r in REFUSED), f"{path.name} imports: take it out of REFUSED"
    pc = param_counts(m)
    assert 0 < pc.active <= pc.total
    assert kv_bytes_per_token(m) > 0


@needs_package
def test_qwen35_kv_on_attention_layers_only_plus_state():
    m = load_model(str(_find("Qwen--Qwen3.5-397B-A17B")))
    assert m.linear_attention.n_layers == 45 and m.attention_output_gate
    # 15 attention layers · 2 (K, V) · 2 KV heads · 256 · 2 B (bf16)
    assert kv_bytes_per_token(m) == 15 * 2 * 2 * 256 * 2
    # 45 GDN layers: 64 value heads · 128 · 128 fp32 state + conv window (2·16·128 + 64·128) · 3 taps · 2 B
    state = 45 * (64 * 128 * 128 * 4 + (2 * 16 * 128 + 64 * 128) * 3 * 2)
    assert state_bytes_per_sequence(m) == state
    assert float(kv_stored_bytes(m, 0)) == state
    assert float(kv_read_bytes(m, 1000) - kv_read_bytes(m, 0)) == 1000 * kv_bytes_per_token(m)


@needs_package
def test_nemotron_blocks_counted_exactly():
    m = load_model(str(_find("nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16")))
    # 52 blocks: 23 Mamba2 + 6 attention mixers, 23 MoE
    assert (m.n_layers, m.linear_attention.n_layers, m.n_dense_mlp_layers) == (29, 23, 0)
    assert kv_bytes_per_token(m) == 6 * 2 * 2 * 128 * 2
    q = load_model(str(_find("nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-NVFP4")))  # hf_quant_config.json beside it
    assert q.weight_dtype == "fp4" and q.kv_dtype == "fp8"


@needs_package
def test_wrappers_and_sparse_attention_read():
    k = load_model(str(_find("nvidia--Kimi-K2.6-NVFP4")))
    assert k.mla is not None and k.moe.n_routed_experts == 384 and k.weight_dtype == "fp4"
    g = load_model(str(_find("zai-org--GLM-5.3")))
    assert g.sparse_attention.index_topk == 2048 and g.sparse_attention.n_index_layers == 21  # indexer_types: 21 "full", 57 "shared"


@needs_package
def test_deepseek_v4_flash_kv_by_compression_group():
    """DeepSeek-V4-Flash, compress_ratios over 43 layers: 2 × 0 (window only), 21 × 4 (CSA), 20 × 128 (HCA).
    One 512-wide vector per entry serves as key and value: 512 · 2 B (bf16) = 1024 B. Per token of context:
    window-only layers keep every token (1024 B, as sliding layers count); CSA one entry per 4 tokens plus an
    FP4 indexer key of 128/2 = 64 B: (1024 + 64) / 4 = 272 B; HCA 1024 / 128 = 8 B.
    2·1024 + 21·272 + 20·8 = 2048 + 5712 + 160 = 7920 B. A decode step at S = 131072 reads per CSA layer the
    window (128 entries) + top-512 entries + every indexer key (S/4 · 64 B), per HCA layer 128 + S/128 entries,
    per window layer 128 entries."""
    m = load_model(str(_find("deepseek-ai--DeepSeek-V4-Flash")))
    assert [(g.n_layers, g.compress_ratio) for g in m.attention_groups] == [(21, 4), (20, 128), (2, None)]
    assert float(kv_bytes_per_token(m)) == pytest.approx(7920, rel=1e-12)
    S = 131072
    read = 21 * ((128 + 512) * 1024 + S / 4 * 64) + 20 * (128 + S / 128) * 1024 + 2 * 128 * 1024
    assert float(kv_read_bytes(m, S)) == pytest.approx(read, rel=1e-12)
    assert m.weight_dtypes["experts"] == "mxfp4" and m.weight_dtype == "fp8"  # expert_dtype fp4 beside FP8 layers
    q = load_model(str(_find("nvidia--DeepSeek-V4-Flash-NVFP4")))  # MIXED_PRECISION: NVFP4 experts only
    assert q.weight_dtypes["experts"] == "nvfp4" and q.weight_dtypes["attention"] == "bf16"


@needs_package
def test_gemma4_sliding_and_global_shapes():
    """Gemma 4 26B-A4B, 30 layers: 25 sliding (8 KV heads × 256, window 1024), 5 global (2 KV heads × 512;
    attention_k_eq_v drops the V projection, but K and V are cached apart). Per token, bf16:
    25 · 2·8·256·2 + 5 · 2·2·512·2 = 25·8192 + 5·4096 = 204800 + 20480 = 225280 B; at S beyond the window
    the sliding layers hold only 1024 tokens."""
    m = load_model(str(_find("google--gemma-4-26B-A4B")))
    assert kv_bytes_per_token(m) == 225280
    S = 100_000
    assert float(kv_stored_bytes(m, S)) == 25 * 8192 * 1024 + 5 * 4096 * S
    assert m.moe.n_routed_experts == 128 and m.moe.d_ff_shared_expert == 2112  # dense MLP beside the experts
    q = load_model(str(_find("nvidia--Gemma-4-26B-A4B-NVFP4")))  # exclude_modules: attention, dense mlp, router
    assert q.weight_dtypes["experts"] == "nvfp4" and q.weight_dtypes["shared_experts"] == "bf16"


@needs_package
def test_minimax_m3_block_sparse_attention_kv():
    """MiniMax-M3, 60 layers of GQA (4 KV heads × 128), K and V in bf16: 2·4·128·2 = 2048 B per token per layer.
    sparse_attention_freq marks 57 layers block-sparse: each also keeps an index key of sparse_num_index_heads ×
    sparse_index_dim = 4·128 in bf16 = 1024 B (the estimate the reader states). Per token:
    60·2048 + 57·1024 = 122880 + 58368 = 181248 B. A decode step at S = 131072 reads on a sparse layer
    (16 top + 1 local) blocks of 128 = 2176 tokens of KV and every token's index key, on the 3 dense layers all S."""
    m = load_model(str(_find("MiniMaxAI--MiniMax-M3")))
    assert [(g.n_layers, g.topk) for g in m.attention_groups] == [(57, 2176), (3, None)]
    assert float(kv_bytes_per_token(m)) == 181248
    S = 131072
    assert float(kv_stored_bytes(m, S)) == 181248 * S
    assert float(kv_read_bytes(m, S)) == 57 * (2176 * 2048 + S * 1024) + 3 * S * 2048
    assert m.d_ff == 12288 and m.moe.first_dense_layers == 3 and m.moe.n_shared_experts == 1
    q = load_model(str(_find("nvidia--MiniMax-M3-NVFP4")))  # text_config + MIXED_PRECISION: NVFP4 experts, MXFP8 rest
    assert q.attention_groups == m.attention_groups and q.d_ff == m.d_ff and q.moe == m.moe
    assert q.weight_dtypes["experts"] == "nvfp4" and q.weight_dtypes["attention"] == "fp8"


@needs_package
def test_kimi_k3_kda_layers_hold_state_mla_layers_kv():
    """Kimi-K3, 93 layers: linear_attn_config puts KDA on 69 and MLA on 24. MLA caches its latent,
    (kv_lora_rank 512 + rope 64) · 2 B = 1152 B per token per layer: 24·1152 = 27648 B per token. Each KDA layer
    holds per sequence a 96 heads × 128 × 128 FP32 state (6291456 B) and a conv window of 3 taps over q, k, v
    (3·96·128 · 3 · 2 B = 221184 B): 69 · 6512640 = 449372160 B, read and written once per decode step."""
    m = load_model(str(_find("moonshotai--Kimi-K3")))
    assert (m.linear_attention.kind, m.linear_attention.n_layers, m.mla.kv_lora_rank) == ("kda", 69, 512)
    assert float(kv_bytes_per_token(m)) == pytest.approx(27648, rel=1e-12)
    assert state_bytes_per_sequence(m) == 449372160
    S = 131072
    assert float(kv_read_bytes(m, S)) == pytest.approx(27648 * S + 2 * 449372160, rel=1e-12)
    assert m.moe.d_latent == 3584 and m.moe.n_shared_experts == 2 and m.moe.experts_per_token == 16
    assert m.attention_output_gate and m.weight_dtypes["experts"] == "mxfp4" and m.weight_dtypes["attention"] == "bf16"


SHAPES = ("n_layers", "d_model", "n_heads", "n_kv_heads", "head_dim", "d_ff", "vocab_size", "mla", "sparse_attention",
          "sliding_window", "n_sliding_layers", "moe", "linear_attention", "attention_output_gate", "max_context")


@needs_package
@pytest.mark.parametrize("entry, stem", [
    ("llama-4-scout", "meta-llama--Llama-4-Scout-17B-16E-Instruct"), ("qwen3-8b", "Qwen--Qwen3-8B"),
    ("qwen3-0.6b", "Qwen--Qwen3-0.6B"), ("qwen3.5-35b-a3b", "Qwen--Qwen3.5-35B-A3B"), ("kimi-k2.5", "moonshotai--Kimi-K2.5"),
    ("glm-5.2", "zai-org--GLM-5.2"), ("mimo-7b", "XiaomiMiMo--MiMo-7B-Base"),
    ("nemotron-3-ultra-550b-a55b", "nvidia--NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16"),
    ("nemotron-3.5-lightning-30b-a3b", "nvidia--NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4"),
    # other names (catalog/aliases/names.yaml) whose source is a config of the same shapes
    ("qwen3.5-27b", "nvidia--Qwen3.6-27B-NVFP4"), ("qwen3.5-35b-a3b", "nvidia--Qwen3.6-35B-A3B-NVFP4"),
    ("glm-5.2", "zai-org--GLM-5.3"), ("nemotron-3-ultra-550b-a55b", "nvidia--NVIDIA-Nemotron-3-Ultra-550B-A55B-NVFP4"),
])
def test_catalog_entry_is_its_config(entry, stem):
    """A catalog entry (or another name of it) holds the shapes its source config gives."""
    m, c = load_model(entry), load_model(str(_find(stem)))
    assert {f: getattr(m, f) for f in SHAPES} == {f: getattr(c, f) for f in SHAPES}

