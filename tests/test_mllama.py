"""Llama 3.2 Vision (mllama): cross-attention layers that read a fixed cache of one image's vision tokens.

Anchors: parameter counts against transformers 4.57.1's MllamaForConditionalGeneration built on the meta device
from the configs the entries cite (the named parameters grouped by module, counted when the entries were added), and against the model cards (10.6B, 88.6B). tests/data/mllama-11b-vision-config.json is the
Llama-3.2-11B-Vision-Instruct config.json as recalled (not a verbatim copy): the shapes the catalog entry cites.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clirun import run

from tokenmath.core import arch
from tokenmath.core.load import load_model, load_system
from tokenmath.core.roofline import step

FIXTURE = Path(__file__).parent / "data" / "mllama-11b-vision-config.json"

# transformers 4.57.1, meta device: total; text-decoder linears (40 / 100 layers, cross layers included); the LM
# head; the cross layers' K and V projections; the vision encoder's and projector's linear weights; text norms and
# gates; the 8 image-token rows of the input table (vocab 128,264, not 128,256)
TRANSFORMERS = {
    "llama-3.2-11b-vision": dict(total=10_670_220_835, text_linear=8_724_152_320, lm_head=525_336_576,
                                 cross_kv=67_108_864, vision_linear=786_432_000 + 31_457_280, text_norms=333_840,
                                 image_rows=8 * 4096),
    "llama-3.2-90b-vision": dict(total=88_593_355_323, text_linear=85_563_801_600, lm_head=1_050_673_152,
                                 cross_kv=335_544_320, vision_linear=786_432_000 + 62_914_560, text_norms=1_651_752,
                                 image_rows=8 * 8192),
}
CARD = {"llama-3.2-11b-vision": 10.6e9, "llama-3.2-90b-vision": 88.6e9}


def _text_only(m):
    return m.model_copy(update={"cross_attention": m.cross_attention.model_copy(update={"kv_tokens": 0})})


@pytest.mark.parametrize("name", sorted(TRANSFORMERS))
def test_counts_match_transformers_and_card(name):
    m, t = load_model(name), TRANSFORMERS[name]
    pc = arch.param_counts(m)
    # what one text token multiplies: the decoder's linears and the LM head, less the cross K/V (fed by the image)
    assert pc.matmul == t["text_linear"] + t["lm_head"] - t["cross_kv"]
    assert arch.vision_params(m, matmul_only=True) == t["vision_linear"]
    # the total: transformers' less the text norms and gates and the image-token rows, nothing else
    assert pc.total == t["total"] - t["text_norms"] - t["image_rows"]
    assert pc.total == pytest.approx(CARD[name], rel=0.015)


def test_kv_holds_and_reads_the_image_cache():
    m = load_model("llama-3.2-11b-vision")
    S, per_tok = 1000, 2 * 8 * 128 * 2  # one self-attention layer's K and V per token, BF16
    cross = 8 * 6404 * per_tok  # 8 cross layers × 4 tiles × 1,601 vision tokens
    assert arch.kv_bytes_per_token(m) == 32 * per_tok  # only the 32 self-attention layers grow with the text
    assert float(arch.kv_read_bytes(m, S)) == 32 * S * per_tok + cross  # read whole every decode step
    assert float(arch.kv_stored_bytes(m, S)) == 32 * S * per_tok + cross
    t = _text_only(m)  # a request without an image: no cross cache, the cross layers skipped whole
    assert float(arch.kv_read_bytes(t, S)) == 32 * S * per_tok
    assert arch.param_counts(t).matmul == arch.param_counts(load_model("llama-3.1-8b")).matmul
    assert arch.image_flop_per_sequence(t) == 0.0
    assert float(arch.attention_flop_per_token(m, S)) > float(arch.attention_flop_per_token(t, S))


def test_decode_step_reads_the_cross_cache():
    m, sysm = load_model("llama-3.2-11b-vision"), load_system("h100-sxm")
    kw = dict(G=1, B=8, S=2048, phase="decode", basis="spec")
    with_image, text = step(m, sysm, **kw), step(_text_only(m), sysm, **kw)
    W = sysm.chip.hbm_bandwidth_bytes_per_s
    assert float(with_image.v("t_kv")) - float(text.v("t_kv")) == pytest.approx(8 * 8 * 6404 * 4096 / W, rel=1e-9)
    pre = step(m, sysm, G=1, B=1, S=2048, phase="prefill", basis="spec")
    pre_text = step(_text_only(m), sysm, G=1, B=1, S=2048, phase="prefill", basis="spec")
    assert float(pre.v("t_math")) > float(pre_text.v("t_math"))  # the image's encoder runs at prefill


def test_config_reader_reads_mllama(tmp_path):
    m, cat = load_model(str(FIXTURE)), load_model("llama-3.2-11b-vision")
    assert m.cross_attention == cat.cross_attention
    assert arch.param_counts(m).total == arch.param_counts(cat).total
    assert arch.kv_read_bytes(m, 100) == arch.kv_read_bytes(cat, 100)
    cfg = json.loads(FIXTURE.read_text())
    big = {**cfg, "text_config": {**cfg["text_config"], "hidden_size": 8192, "intermediate_size": 28672,
                                  "num_attention_heads": 64, "num_hidden_layers": 100,
                                  "cross_attention_layers": list(range(3, 100, 5))}}
    p = tmp_path / "mllama-90b.json"
    p.write_text(json.dumps(big))
    assert arch.param_counts(load_model(str(p))).total == arch.param_counts(load_model("llama-3.2-90b-vision")).total


def test_serve_and_explain_end_to_end():
    r = run("serve", "llama-3.2-90b-vision", "--on", "hgx-h100", "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["decode"]["step_time_s"] > 0 and d["memory"]["fits"]
    r = run("serve", "llama-3.2-11b-vision", "--on", "h100-sxm", "--context", "2048", "--batch", "8", "--explain")
    assert r.exit_code == 0, r.output
    assert "kv_cross = L_x · P · 2·K·H·b" in r.stdout and "F_image" in r.stdout
    assert "--set model.cross_attention.kv_tokens=0 is a text-only request" in r.stdout
    r = run("serve", "llama-3.2-11b-vision", "--on", "h100-sxm", "--set", "model.cross_attention.kv_tokens=0",
            "--explain")
    assert r.exit_code == 0, r.output
    assert "kv_cross" not in r.stdout
    assert run("catalog", "show", "llama-3.2-90b-vision").exit_code == 0
