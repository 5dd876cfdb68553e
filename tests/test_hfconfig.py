"""Hugging Face config.json import: the real configs of tests/data/hf-configs (verbatim copies, origins in
SOURCES.md there) against the catalog, the breadth of families a user may drop in, checkpoint formats per
module kind, and hostile configs, each refused with one line naming the file and field (issue 16 item 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tokenmath.core import arch
from tokenmath.core.load import CatalogError, load_model

DATA = Path(__file__).parent / "data" / "hf-configs"
BASE = json.loads((DATA / "Llama-3.3-70B-Instruct.json").read_text())

# reference config -> catalog entry it was transcribed into
REFERENCE = {
    "DeepSeek-V3.json": "deepseek-v3", "DeepSeek-V3.2.json": "deepseek-v3.2", "GLM-4.7.json": "glm-4.7",
    "Kimi-K2-Instruct.json": "kimi-k2", "Llama-3.3-70B-Instruct.json": "llama-3.3-70b",
    "Llama-4-Maverick-17B-128E-Instruct.json": "llama-4-maverick", "Mixtral-8x22B-v0.1.json": "mixtral-8x22b",
    "Qwen3-235B-A22B.json": "qwen3-235b-a22b", "Qwen3-30B-A3B.json": "qwen3-30b-a3b", "Qwen3-32B.json": "qwen3-32b",
    "gemma-3-27b-it.json": "gemma-3-27b", "gpt-oss-120b.json": "gpt-oss-120b", "gpt-oss-20b.json": "gpt-oss-20b",
}


def test_every_reference_config_has_a_catalog_entry():
    assert set(REFERENCE) == {p.name for p in DATA.glob("*.json")}


@pytest.mark.parametrize("file", sorted(REFERENCE))
def test_reference_config_matches_catalog(file):
    m, cat = load_model(str(DATA / file)), load_model(REFERENCE[file])
    mine, theirs = arch.param_counts(m), arch.param_counts(cat)
    assert mine.total == pytest.approx(theirs.total, rel=0.005)
    assert mine.active == pytest.approx(theirs.active, rel=0.005)
    assert arch.kv_bytes_per_token(m, "bf16") == arch.kv_bytes_per_token(cat, "bf16")
    assert (m.n_sliding_layers, m.sliding_window) == (cat.n_sliding_layers, cat.sliding_window)
    assert arch.n_moe_layers(m) == arch.n_moe_layers(cat)
    held = [k for k, n in mine.by_kind.items() if n > 0]  # kinds the model has
    assert {k: arch.weight_formats(m)[k] for k in held} == {k: arch.weight_formats(cat)[k] for k in held}
    assert float(arch.model_weight_bytes(m)) == pytest.approx(float(arch.model_weight_bytes(cat)), rel=0.005)


def test_gpt_oss_checkpoint_bytes():
    """MXFP4 experts at 4.25 bits with their scales; attention, router and embeddings in BF16."""
    m = load_model(str(DATA / "gpt-oss-120b.json"))
    f = arch.weight_formats(m)
    assert f["experts"] == "mxfp4" and f["attention"] == f["router"] == f["embeddings"] == "bf16"
    pc = arch.param_counts(m)
    k = pc.by_kind
    want = k["experts"] * 4.25 / 8 + (k["attention"] + k["router"] + k["embeddings"]) * 2
    assert float(arch.model_weight_bytes(m)) == pytest.approx(want)
    assert 60e9 < want < 66e9  # the published checkpoint is ~65 GB (safetensors, with biases and sinks)
    assert float(arch.model_weight_bytes(m, "fp8")) == pytest.approx(pc.total * 1.0)  # another format: all of it
    assert arch.is_native(m, "fp4") and not arch.is_native(m, "fp8")


def test_deepseek_fp8_keeps_tables_in_bf16():
    m = load_model(str(DATA / "DeepSeek-V3.json"))
    f = arch.weight_formats(m)
    assert f["experts"] == f["attention"] == "fp8" and f["embeddings"] == f["router"] == "bf16"


def test_weights_touched_uses_the_checkpoint_formats():
    m = load_model("gpt-oss-120b")
    pc = arch.param_counts(m)
    at_one = float(arch.weight_bytes_touched(m, 1))
    # batch 1: attention + 4 of 128 experts per layer + the LM head (the input table is a lookup)
    k = pc.by_kind
    want = (k["attention"] + k["router"]) * 2 + 36 * 4 * float(pc.expert) * 4.25 / 8 + m.vocab_size * m.d_model * 2
    assert at_one == pytest.approx(want, rel=1e-9)
    assert float(arch.weight_bytes_touched(m, 1e9)) == pytest.approx(float(arch.model_weight_bytes(m))
                                                                      - m.vocab_size * m.d_model * 2, rel=1e-6)


# ---- breadth: configs a user may drop in (published values, only the keys the reader uses) ---------

BREADTH = {  # name: (config, published total params, source of the published figure)
    "llama-2-7b": ({"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
                    "num_key_value_heads": 32, "intermediate_size": 11008, "vocab_size": 32000,
                    "tie_word_embeddings": False, "torch_dtype": "float16"}, 6.74e9, "Llama 2 paper"),
    "mistral-7b-v0.1": ({"model_type": "mistral", "hidden_size": 4096, "num_hidden_layers": 32,
                         "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
                         "vocab_size": 32000, "sliding_window": 4096, "tie_word_embeddings": False}, 7.24e9,
                        "Mistral 7B paper"),
    "qwen2.5-7b": ({"model_type": "qwen2", "hidden_size": 3584, "num_hidden_layers": 28, "num_attention_heads": 28,
                    "num_key_value_heads": 4, "intermediate_size": 18944, "vocab_size": 152064,
                    "tie_word_embeddings": False, "use_sliding_window": False, "sliding_window": 131072,
                    "max_window_layers": 28}, 7.61e9, "Qwen2.5-7B model card: 7.61B"),
    "qwen2.5-0.5b": ({"model_type": "qwen2", "hidden_size": 896, "num_hidden_layers": 24, "num_attention_heads": 14,
                      "num_key_value_heads": 2, "intermediate_size": 4864, "vocab_size": 151936,
                      "tie_word_embeddings": True}, 0.49e9, "Qwen2.5-0.5B model card: 0.49B"),
    "phi-3-mini": ({"model_type": "phi3", "hidden_size": 3072, "num_hidden_layers": 32, "num_attention_heads": 32,
                    "num_key_value_heads": 32, "intermediate_size": 8192, "vocab_size": 32064,
                    "sliding_window": 2047, "tie_word_embeddings": False}, 3.8e9, "Phi-3 report: 3.8B"),
    "gemma-2-9b": ({"model_type": "gemma2", "hidden_size": 3584, "num_hidden_layers": 42, "num_attention_heads": 16,
                    "num_key_value_heads": 8, "head_dim": 256, "intermediate_size": 14336, "vocab_size": 256000,
                    "sliding_window": 4096}, 9.24e9, "Gemma 2 model card: 9.24B"),
    "gemma-7b": ({"model_type": "gemma", "hidden_size": 3072, "num_hidden_layers": 28, "num_attention_heads": 16,
                  "num_key_value_heads": 16, "head_dim": 256, "intermediate_size": 24576, "vocab_size": 256000},
                 8.54e9, "Gemma report: 8.54B"),
    "falcon-7b": ({"model_type": "falcon", "hidden_size": 4544, "num_hidden_layers": 32, "num_attention_heads": 71,
                   "multi_query": True, "new_decoder_architecture": False, "vocab_size": 65024}, 6.92e9,
                  "Falcon-7B model card: 7B (6.92B)"),
    "falcon-180b": ({"model_type": "falcon", "hidden_size": 14848, "num_hidden_layers": 80,
                     "num_attention_heads": 232, "num_kv_heads": 8, "new_decoder_architecture": True,
                     "vocab_size": 65024}, 180e9, "Falcon-180B model card: 180B"),
    "deepseek-v2-lite": ({"model_type": "deepseek_v2", "hidden_size": 2048, "num_hidden_layers": 27,
                          "num_attention_heads": 16, "num_key_value_heads": 16, "q_lora_rank": None,
                          "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
                          "intermediate_size": 10944, "moe_intermediate_size": 1408, "n_routed_experts": 64,
                          "n_shared_experts": 2, "num_experts_per_tok": 6, "first_k_dense_replace": 1,
                          "moe_layer_freq": 1, "vocab_size": 102400}, 15.7e9, "DeepSeek-V2-Lite model card: 15.7B"),
    "olmoe-1b-7b": ({"model_type": "olmoe", "hidden_size": 2048, "num_hidden_layers": 16, "num_attention_heads": 16,
                     "num_key_value_heads": 16, "intermediate_size": 1024, "num_experts": 64,
                     "num_experts_per_tok": 8, "vocab_size": 50304, "tie_word_embeddings": False}, 6.9e9,
                    "OLMoE paper: 6.9B total"),
    "qwen1.5-moe-a2.7b": ({"model_type": "qwen2_moe", "hidden_size": 2048, "num_hidden_layers": 24,
                           "num_attention_heads": 16, "num_key_value_heads": 16, "intermediate_size": 5632,
                           "moe_intermediate_size": 1408, "shared_expert_intermediate_size": 5632,
                           "num_experts": 60, "num_experts_per_tok": 4, "vocab_size": 151936,
                           "decoder_sparse_step": 1, "tie_word_embeddings": False}, 14.3e9,
                          "Qwen1.5-MoE-A2.7B model card: 14.3B total"),
    "gpt-j-6b": ({"model_type": "gptj", "n_embd": 4096, "n_layer": 28, "n_head": 16, "n_inner": None,
                  "vocab_size": 50400, "n_positions": 2048}, 6.05e9, "GPT-J model card: 6,053,381,344"),
    "pythia-6.9b": ({"model_type": "gpt_neox", "hidden_size": 4096, "num_hidden_layers": 32,
                     "num_attention_heads": 32, "intermediate_size": 16384, "vocab_size": 50432,
                     "tie_word_embeddings": False}, 6.86e9, "Pythia paper: 6.86B total"),
    "mpt-7b": ({"model_type": "mpt", "d_model": 4096, "n_heads": 32, "n_layers": 32, "expansion_ratio": 4,
                "max_seq_len": 2048, "vocab_size": 50432}, 6.7e9, "MPT-7B model card: 6.7B"),
    "dbrx": ({"model_type": "dbrx", "d_model": 6144, "n_heads": 48, "n_layers": 40, "vocab_size": 100352,
              "attn_config": {"kv_n_heads": 8}, "ffn_config": {"ffn_hidden_size": 10752, "moe_num_experts": 16,
                                                               "moe_top_k": 4}}, 132e9, "DBRX model card: 132B"),
}


@pytest.mark.parametrize("name", sorted(BREADTH))
def test_breadth_of_families(tmp_path, name):
    cfg, published, _src = BREADTH[name]
    p = tmp_path / f"{name}.json"
    p.write_text(json.dumps(cfg))
    m = load_model(str(p))
    assert arch.param_counts(m).total == pytest.approx(published, rel=0.03), name


def test_family_rules(tmp_path):
    def load(name):
        cfg = BREADTH[name][0]
        p = tmp_path / f"{name}.json"
        p.write_text(json.dumps(cfg))
        return load_model(str(p))
    assert load("falcon-7b").attention == "mqa" and load("falcon-180b").n_kv_heads == 8
    assert load("gemma-2-9b").n_sliding_layers == 21 and load("gemma-2-9b").tie_embeddings
    assert load("mistral-7b-v0.1").n_sliding_layers == 32
    assert load("qwen2.5-7b").n_sliding_layers == 0
    assert load("qwen1.5-moe-a2.7b").moe.d_ff_shared_expert == 5632
    assert load("gpt-j-6b").mlp_matrices == 2 and load("gpt-j-6b").d_ff == 4 * 4096
    assert load("deepseek-v2-lite").attention == "mla" and load("deepseek-v2-lite").moe.first_dense_layers == 1


# Decoders that differ from Llama / GPT-2 only in field names, activation or norms, and MoE variants of them:
# each must read, with the non-embedding parameter count transformers 4.57.1 builds for the same config (its
# defaults, AutoModelForCausalLM.from_config on the meta device, matrices without the embedding tables).
_L = {"hidden_size": 1024, "num_hidden_layers": 4, "num_attention_heads": 16, "intermediate_size": 2816,
      "vocab_size": 32000}
NAMED_LIKE = {  # name: (config, non-embedding matmul parameters in transformers 4.57.1)
    "apertus": ({"model_type": "apertus", **_L, "num_key_value_heads": 4}, 4 * (1024 * 1024 * 2 + 1024 * 256 * 2
                                                                                + 2 * 1024 * 2816)),
    "arcee": ({"model_type": "arcee", "hidden_size": 2560, "num_hidden_layers": 32, "num_attention_heads": 32,
               "num_key_value_heads": 32, "head_dim": 80, "intermediate_size": 18432, "vocab_size": 32000},
              3858.76e6),
    "phi": ({"model_type": "phi", "hidden_size": 2048, "num_hidden_layers": 24, "num_attention_heads": 32,
             "intermediate_size": 8192, "vocab_size": 51200}, 1207.96e6),
    "codegen": ({"model_type": "codegen", "n_embd": 4096, "n_layer": 28, "n_head": 16, "n_inner": None,
                 "vocab_size": 50400}, 5637.14e6),
    "ctrl": ({"model_type": "ctrl", "n_embd": 1280, "n_layer": 48, "n_head": 16, "dff": 8192, "vocab_size": 246534},
             1321.21e6),
    "xglm": ({"model_type": "xglm", "d_model": 1024, "num_layers": 24, "attention_heads": 16, "ffn_dim": 4096,
              "vocab_size": 256008}, 301.99e6),
    "cpmant": ({"model_type": "cpmant", "hidden_size": 4096, "num_attention_heads": 32, "dim_head": 128,
                "dim_ff": 10240, "num_hidden_layers": 48, "vocab_size": 30720}, 9261.07e6),
    "gpt_neox_japanese": ({"model_type": "gpt_neox_japanese", "hidden_size": 2560, "num_hidden_layers": 32,
                           "num_attention_heads": 32, "intermediate_multiple_size": 4, "vocab_size": 32000},
                          2516.58e6),
    "ernie4_5_moe": ({"model_type": "ernie4_5_moe", "hidden_size": 2560, "intermediate_size": 12288,
                      "num_hidden_layers": 28, "num_attention_heads": 20, "num_key_value_heads": 4,
                      "vocab_size": 103424, "moe_intermediate_size": 1536, "moe_k": 6, "moe_num_experts": 64,
                      "moe_num_shared_experts": 2, "moe_layer_start_index": 1, "moe_layer_end_index": 27,
                      "moe_layer_interval": 1}, 21560.53e6),
    "aria_text": ({"model_type": "aria_text", "hidden_size": 4096, "intermediate_size": 4096, "num_hidden_layers": 32,
                   "num_attention_heads": 32, "num_key_value_heads": 32, "vocab_size": 32000, "moe_num_experts": 8,
                   "moe_topk": 2, "moe_num_shared_experts": 2}, 18254.66e6),
    "granitemoeshared": ({"model_type": "granitemoeshared", "hidden_size": 4096, "intermediate_size": 11008,
                          "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32,
                          "num_local_experts": 8, "num_experts_per_tok": 2, "shared_intermediate_size": 1024,
                          "vocab_size": 32000}, 32 * (4 * 4096**2 + 8 * 3 * 4096 * 11008 + 4096 * 8
                                                      + 3 * 4096 * 1024)),
    "hunyuan_v1_moe": ({"model_type": "hunyuan_v1_moe", **_L, "num_experts": 4, "moe_topk": 2},
                       4 * (4 * 1024**2 + 5 * 3 * 1024 * 2816 + 1024 * 4)),
    "glm4_moe": ({"model_type": "glm4_moe", "hidden_size": 4096, "intermediate_size": 10944,
                  "num_hidden_layers": 46, "num_attention_heads": 96, "num_key_value_heads": 8,
                  "moe_intermediate_size": 1408, "n_routed_experts": 128, "n_shared_experts": 1,
                  "num_experts_per_tok": 8, "first_k_dense_replace": 1, "vocab_size": 151552}, 102239.31e6),
}


@pytest.mark.parametrize("name", sorted(NAMED_LIKE))
def test_plain_decoders_named_otherwise(tmp_path, name):
    cfg, hf = NAMED_LIKE[name]
    p = tmp_path / f"{name}.json"
    p.write_text(json.dumps(cfg))
    m = load_model(str(p))
    assert arch.param_counts(m).total_matmul == pytest.approx(hf, rel=2e-5), name


def test_variants_transformers_runs(tmp_path):
    def load(cfg):
        p = tmp_path / "c.json"
        p.write_text(json.dumps(cfg))
        return load_model(str(p))
    # no head_dim and heads that do not divide the width: transformers floors hidden // heads (GLM-4.5's default)
    assert load({"model_type": "glm4_moe", **NAMED_LIKE["glm4_moe"][0]}).head_dim == 4096 // 96
    # GPT-Neo: attention_layers 'local' layers see window_size tokens
    neo = load({"model_type": "gpt_neo", "hidden_size": 768, "num_layers": 4, "num_heads": 12, "vocab_size": 50257,
                "attention_layers": ["global", "local", "global", "local"], "window_size": 256})
    assert (neo.n_sliding_layers, neo.sliding_window, neo.d_ff, neo.mlp_matrices) == (2, 256, 4 * 768, 2)
    # Ernie 4.5 MoE: MoE on layers start..end; the shared experts as one MLP
    e = load(NAMED_LIKE["ernie4_5_moe"][0])
    assert arch.n_moe_layers(e) == 27 and e.moe.d_ff_shared_expert == 2 * 1536 and e.d_ff == 12288
    # Llama 4 text: moe_layers past the last layer are ignored, as transformers builds them
    l4 = load({"model_type": "llama4_text", **_L, "num_key_value_heads": 4, "intermediate_size_mlp": 4096,
               "num_local_experts": 4, "num_experts_per_tok": 1, "moe_layers": [0, 1, 2, 3, 4, 5]})
    assert arch.n_moe_layers(l4) == 4


# Mamba2/attention hybrids in transformers' own naming: per layer the attention projections (q, k, v, o), the
# Mamba2 in_proj D → 2·W + 2·G·S + h (z, x, B, C, dt) and out_proj W → D, and the depthwise convolution over x, B,
# C (W + 2·G·S channels × taps), counted as tokenmath counts a Nemotron-H layer. These totals equal transformers
# 4.57.1's own (its ≥ 2-D parameters less the embedding tables, the models built on the meta device): Bamba-9B's
# shape 8,728,802,304; the Granite MoE and dense, Falcon-H1 and Jamba 1.5 Mini shapes below likewise
def _mamba2(D, W, G, S, h, taps=4):
    return D * (2 * W + 2 * G * S + h) + W * D + (W + 2 * G * S) * taps


_HYBRID = {
    "bamba": {"model_type": "bamba", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
              "num_key_value_heads": 8, "intermediate_size": 14336, "attn_layer_indices": [9, 18, 27],
              "mamba_n_heads": 128, "mamba_d_head": 64, "mamba_n_groups": 1, "mamba_d_state": 128,
              "mamba_d_conv": 4, "mamba_expand": 2, "vocab_size": 128256},
    "granitemoehybrid": {"model_type": "granitemoehybrid", "hidden_size": 1024, "num_hidden_layers": 4,
                         "num_attention_heads": 16, "num_key_value_heads": 4, "intermediate_size": 512,
                         "num_local_experts": 8, "num_experts_per_tok": 2, "shared_intermediate_size": 2048,
                         "layer_types": ["mamba", "attention", "mamba", "mamba"], "mamba_n_heads": 32,
                         "mamba_d_head": "auto", "mamba_n_groups": 1, "mamba_d_state": 128, "vocab_size": 32000},
    "falcon_h1": {"model_type": "falcon_h1", "hidden_size": 3072, "num_hidden_layers": 4, "num_attention_heads": 12,
                  "num_key_value_heads": 2, "head_dim": 128, "intermediate_size": 12288, "mamba_d_ssm": 3072,
                  "mamba_n_heads": 24, "mamba_d_head": 128, "mamba_n_groups": 1, "mamba_d_state": 256,
                  "vocab_size": 130048},
}


def test_mamba2_hybrids_in_transformers_naming(tmp_path):
    def load(cfg):
        p = tmp_path / "c.json"
        p.write_text(json.dumps(cfg))
        return load_model(str(p))
    D = 4096  # Bamba-9B's shape: 3 attention layers of 32, 29 Mamba2, a SwiGLU MLP on each
    attn = 2 * D * D + 2 * D * 1024
    b = load(_HYBRID["bamba"])
    assert (b.n_layers, b.linear_attention.n_layers, b.linear_attention.kind) == (32, 29, "mamba2")
    assert arch.param_counts(b).total_matmul == 3 * attn + 29 * _mamba2(D, 8192, 1, 128, 128) + 32 * 3 * D * 14336
    assert arch.param_counts(b).total == pytest.approx(9.78e9, rel=0.01)  # Bamba-9B model card: 9.78B
    assert arch.kv_bytes_per_token(b) == 3 * 2 * 8 * 128 * 2  # only the attention layers keep a cache
    # Granite 4.0-H: routed experts of intermediate_size and a shared MLP of shared_intermediate_size per layer
    g = load(_HYBRID["granitemoehybrid"])
    assert (g.moe.n_routed_experts, g.moe.experts_per_token, g.moe.d_ff_shared_expert) == (8, 2, 2048)
    assert arch.param_counts(g).total_matmul == (2 * 1024 * 1024 + 2 * 1024 * 256 + 3 * _mamba2(1024, 2048, 1, 128, 32)
                                                 + 4 * (8 * 3 * 1024 * 512 + 3 * 1024 * 2048 + 1024 * 8))
    dense = load({**_HYBRID["granitemoehybrid"], "num_local_experts": 0, "num_experts_per_tok": 0})
    assert dense.moe is None and dense.d_ff == 2048
    # Falcon-H1: attention and Mamba2 side by side in every layer, then the MLP
    f = load(_HYBRID["falcon_h1"])
    assert (f.n_layers, f.linear_attention.n_layers, f.n_dense_mlp_layers) == (8, 4, 4)
    assert arch.param_counts(f).total_matmul == 4 * (3072 * 1536 * 2 + 3072 * 256 * 2 + _mamba2(3072, 3072, 1, 256, 24)
                                                     + 3 * 3072 * 12288)
    pure = load(dict(_HYBRID["granitemoehybrid"], layer_types=["mamba"] * 4))  # no attention: no KV, a state
    assert pure.linear_attention.n_layers == 4 and arch.kv_bytes_per_token(pure) == 0
    for cfg, words in ((dict(_HYBRID["granitemoehybrid"], layer_types=["mamba", "conv"] * 2), "unknown layer 'conv'"),
                       (dict(_HYBRID["bamba"], attn_layer_indices=[40]), "past the 32 layers"),
                       (dict(_HYBRID["bamba"], mamba_d_head=60), "is not the Mamba width")):
        with pytest.raises(CatalogError, match=words):
            load(cfg)


def test_jamba_reads_its_mamba1_layers_and_matches_the_cards(tmp_path):
    """Jamba: attention every attn_layer_period-th layer, Mamba1 elsewhere (in_proj to x and z, a 4-tap
    convolution over x, x_proj to dt, B and C, dt_proj, A, out_proj; a state of d_inner × d_state), experts every
    expert_layer_period-th layer. Jamba 1.5 Mini's and Large's shapes give their cards' 52B / 12B and 398B / 94B."""
    mini = {"model_type": "jamba", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
            "num_key_value_heads": 8, "intermediate_size": 14336, "num_experts": 16, "num_experts_per_tok": 2,
            "expert_layer_period": 2, "expert_layer_offset": 1, "attn_layer_period": 8, "attn_layer_offset": 4,
            "mamba_d_state": 16, "mamba_d_conv": 4, "mamba_expand": 2, "mamba_dt_rank": 256, "vocab_size": 65536}
    p = tmp_path / "c.json"
    p.write_text(json.dumps(mini))
    m = load_model(str(p))
    D, di, r = 4096, 8192, 256
    mamba = D * 2 * di + di * 4 + di * (r + 2 * 16) + r * di + di * 16 + di * D
    attn, mlp = 2 * D * D + 2 * D * 1024, 3 * D * 14336
    assert (m.linear_attention.kind, m.linear_attention.n_layers, arch.n_moe_layers(m)) == ("mamba1", 28, 16)
    assert arch.param_counts(m).total_matmul == 28 * mamba + 4 * attn + 16 * mlp + 16 * (16 * mlp + D * 16)
    assert arch.param_counts(m).total == pytest.approx(52e9, rel=0.01)
    assert arch.param_counts(m).active == pytest.approx(12e9, rel=0.02)
    assert arch.state_bytes_per_sequence(m) == 28 * (di * 16 * 4 + di * 3 * 2)  # FP32 state, BF16 conv window
    assert arch.kv_bytes_per_token(m) == 4 * 2 * 8 * 128 * 2
    p.write_text(json.dumps({**mini, "hidden_size": 8192, "num_hidden_layers": 72, "num_attention_heads": 64,
                             "intermediate_size": 24576, "mamba_dt_rank": "auto"}))
    large = arch.param_counts(load_model(str(p)))
    assert large.total == pytest.approx(398e9, rel=0.01) and large.active == pytest.approx(94e9, rel=0.01)
    p.write_text(json.dumps({**mini, "attn_layer_offset": 9}))
    with pytest.raises(CatalogError, match="must be below its period"):
        load_model(str(p))


def test_minimax_lightning_attention_layers_read_from_either_config(tmp_path):
    """MiniMax-Text-01 / M1: lightning layers (qkv_proj D → 3·N·H, output_gate, out_proj; an H × H state per head,
    no convolution) beside softmax ones, from transformers' layer_types or the release's attn_type_list. A reduced
    shape's matmul count equals transformers 4.57.1's MiniMaxForCausalLM on the meta device (89,686,016)."""
    types = ["full_attention" if (i + 1) % 8 == 0 else "linear_attention" for i in range(8)]
    small = {"model_type": "minimax", "hidden_size": 1024, "num_hidden_layers": 8, "num_attention_heads": 8,
             "head_dim": 128, "num_key_value_heads": 2, "intermediate_size": 512, "num_local_experts": 4,
             "num_experts_per_tok": 2, "vocab_size": 32000, "layer_types": types}
    p = tmp_path / "c.json"
    p.write_text(json.dumps(small))
    m = load_model(str(p))
    assert (m.linear_attention.kind, m.linear_attention.n_layers) == ("lightning", 7)
    assert arch.param_counts(m).total_matmul == 89_686_016
    assert arch.kv_bytes_per_token(m) == 1 * 2 * 2 * 128 * 2  # the one softmax layer keeps KV
    assert arch.state_bytes_per_sequence(m) == 7 * 8 * 128 * 128 * 4
    rel = {k: v for k, v in small.items() if k != "layer_types"}
    p.write_text(json.dumps({**rel, "model_type": "minimax_text_01", "attn_type_list": [0] * 7 + [1]}))
    assert arch.param_counts(load_model(str(p))).total_matmul == 89_686_016


def test_pure_state_space_models_read_with_no_kv_and_no_mlp(tmp_path):
    """Mamba, Falcon Mamba (Mamba1) and Mamba2 (Codestral Mamba): every layer one mixer, no attention, no MLP. The
    matmul counts equal transformers 4.57.1's own on the meta device; Falcon Mamba 7B's and Codestral Mamba's totals
    are their cards' 7.27B and 7,285,403,648."""
    def load(cfg):
        p = tmp_path / "c.json"
        p.write_text(json.dumps(cfg))
        return load_model(str(p))
    small = load({"model_type": "mamba", "hidden_size": 768, "state_size": 16, "num_hidden_layers": 24, "expand": 2,
                  "conv_kernel": 4, "time_step_rank": 48, "intermediate_size": 1536, "vocab_size": 50280,
                  "tie_word_embeddings": True})
    assert arch.param_counts(small).total_matmul == 90_390_528 and small.n_dense_mlp_layers == 0
    falcon = load({"model_type": "falcon_mamba", "hidden_size": 4096, "state_size": 16, "num_hidden_layers": 64,
                   "expand": 16, "conv_kernel": 4, "intermediate_size": 8192, "time_step_rank": 256,
                   "vocab_size": 65024, "tie_word_embeddings": False})
    assert arch.param_counts(falcon).total_matmul == 6_738_149_376
    assert arch.param_counts(falcon).total == pytest.approx(7.27e9, rel=0.01)
    codestral = load({"model_type": "mamba2", "hidden_size": 4096, "num_heads": 128, "head_dim": 64, "state_size": 128,
                      "n_groups": 8, "num_hidden_layers": 64, "expand": 2, "conv_kernel": 4, "vocab_size": 32768,
                      "tie_word_embeddings": False})
    assert arch.param_counts(codestral).total == 7_285_403_648 - 1_470_464  # less its 1-D parameters (norms, A, D)
    for m in (small, falcon, codestral):
        assert arch.kv_bytes_per_token(m) == 0 and arch.state_bytes_per_sequence(m) > 0


@pytest.mark.parametrize("mt, words", [("blt", "Byte Latent"), ("gemma3n_text", "AltUp"), ("jetmoe", "attention heads"),
                                       ("longcat_flash", "zero-computation")])
def test_architectures_not_expressed_refused_with_reason(tmp_path, mt, words):
    p = tmp_path / "c.json"
    p.write_text(json.dumps({"model_type": mt, **_L}))
    with pytest.raises(CatalogError, match=f"not supported yet: .*{words}") as e:
        load_model(str(p))
    assert "\n" not in str(e.value)
    p.write_text(json.dumps({"model_type": "doge", **_L, "is_moe": True, "num_experts": 16384,
                             "num_experts_per_tok": 64}))
    with pytest.raises(CatalogError, match="is_moe"):
        load_model(str(p))


def test_multimodal_text_config_is_read(tmp_path):
    cfg = {"model_type": "mistral3", "architectures": ["Mistral3ForConditionalGeneration"],
           "text_config": {"model_type": "mistral", "hidden_size": 5120, "num_hidden_layers": 40,
                           "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
                           "intermediate_size": 32768, "vocab_size": 131072},
           "vision_config": {"hidden_size": 1024}}
    p = tmp_path / "config.json"
    p.write_text(json.dumps(cfg))
    m = load_model(str(p))
    assert m.family == "mistral" and m.d_model == 5120 and "text_config" in m.notes


@pytest.mark.parametrize("q, dtype, formats", [
    ({"quant_method": "awq", "bits": 4}, "int4", {"attention": "int4", "embeddings": "bf16"}),
    ({"quant_method": "modelopt", "quant_algo": "NVFP4", "kv_cache_quant_algo": "FP8"}, "fp4",
     {"mlp": "nvfp4", "embeddings": "bf16"}),
    ({"quant_method": "compressed-tensors", "config_groups": {"g": {"weights": {"num_bits": 8, "type": "float"}}},
      "ignore": ["lm_head"]}, "fp8", {"mlp": "fp8", "embeddings": "bf16"}),
    ({"quant_method": "bitsandbytes", "load_in_4bit": True}, "int4", {"mlp": "int4"}),
])
def test_quantization_configs(tmp_path, q, dtype, formats):
    p = tmp_path / "q.json"
    p.write_text(json.dumps({**BASE, "quantization_config": q}))
    m = load_model(str(p))
    assert m.weight_dtype == dtype
    f = arch.weight_formats(m)
    assert all(f[k] == v for k, v in formats.items()), f
    if q.get("kv_cache_quant_algo"):
        assert m.kv_dtype == "fp8"


# ---- hostile configs: one line naming the file and field, never a traceback ---------------------------

HOSTILE = [  # (change to the Llama 3.3 70B config, the words the error must contain)
    ({"model_type": ["llama"]}, "'model_type' must be a string"),
    ({"model_type": {"a": 1}}, "'model_type' must be a string"),
    ({"architectures": {"LlamaForCausalLM": 1}}, "'architectures' must be a list"),
    ({"hidden_size": float("inf")}, "'hidden_size' must be a finite integer"),
    ({"hidden_size": 1e30}, "'hidden_size'"),
    ({"num_hidden_layers": 10**400}, "'num_hidden_layers'"),
    ({"num_attention_heads": 0, "head_dim": None}, "'num_attention_heads' must be at least 1"),
    ({"intermediate_size": -5}, "'intermediate_size' must be at least 1"),
    ({"vocab_size": True}, "'vocab_size' must be an integer"),
    ({"num_hidden_layers": 2**31}, "'num_hidden_layers' must be at most"),
    ({"sliding_window": {}}, "'sliding_window'"),
    ({"tie_word_embeddings": "yes"}, "'tie_word_embeddings'"),
    ({"num_key_value_heads": 128}, "exceeds the 64 attention heads"),
    ({"quantization_config": {"config_groups": [1]}}, "'quantization_config.config_groups'"),
    ({"quantization_config": "fp8"}, "'quantization_config' must be an object"),
    ({"model_type": "gemma3", "sliding_window_pattern": 0.5}, "'sliding_window_pattern' must be an integer"),
    ({"model_type": "qwen3_moe", "num_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 64,
      "decoder_sparse_step": 0}, "'decoder_sparse_step' must be at least 1"),
    ({"model_type": "qwen3_moe", "num_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 64,
      "mlp_only_layers": 3}, "'mlp_only_layers' must be a list"),
    ({"model_type": "qwen3_moe", "num_experts": 8, "num_experts_per_tok": 9, "moe_intermediate_size": 64},
     "exceeds the 8 experts"),
    ({"model_type": "deepseek_v3", "n_routed_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 64,
      "kv_lora_rank": 64, "qk_nope_head_dim": 32, "qk_rope_head_dim": 16, "v_head_dim": 32, "moe_layer_freq": 0},
     "'moe_layer_freq' must be at least 1"),
    ({"model_type": "llama4", "text_config": {"model_type": "llama4_text", "hidden_size": 64,
                                              "num_hidden_layers": 4, "num_attention_heads": 4,
                                              "intermediate_size": 64, "vocab_size": 10, "num_local_experts": 4,
                                              "num_experts_per_tok": 1, "moe_layers": [None]}},
     "'text_config.moe_layers.0'"),
    ({"layer_types": ["sliding_attention"] * 3}, "'layer_types' has 3 entries for 80 layers"),
]


@pytest.mark.parametrize("change, words", HOSTILE, ids=[str(i) for i in range(len(HOSTILE))])
def test_hostile_config_one_line(tmp_path, change, words):
    cfg = {**BASE, **change}
    p = tmp_path / "config.json"
    p.write_text(json.dumps(cfg, allow_nan=True) if not any(isinstance(v, int) and v > 2**64 for v in change.values())
                 else json.dumps(cfg).replace(str(change.get("num_hidden_layers")), "1" + "0" * 400))
    with pytest.raises(CatalogError) as e:
        load_model(str(p))
    msg = str(e.value)
    assert words in msg and str(p) in msg and "\n" not in msg, msg


def test_deeply_nested_and_oversized_json(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(CatalogError, match="nested"):
        load_model(str(deep))
    big = tmp_path / "big.json"
    big.write_text('{"pad": "' + "x" * (5 * 2**20) + '"}')
    with pytest.raises(CatalogError, match="larger than"):
        load_model(str(big))
    binary = tmp_path / "bin.json"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(CatalogError, match="UTF-8|NUL"):
        load_model(str(binary))
