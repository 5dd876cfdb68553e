"""serving.default_split: the split `serve` and `price` run an MoE on when none is given (probe 11AB)."""

import pytest

from tokenmath.core.load import load_model, load_system
from tokenmath.core.roofline import Layout, default_layout, step
from tokenmath.serving.default_split import engine_splits, fastest_split


def test_engine_splits_are_those_an_engine_can_run():
    """Tensor-parallel attention needs the query heads to divide among the chips (DeepSeek's 128 heads do not divide
    72 ways), tensor-parallel experts their hidden size; a dense model's one split is tensor parallel."""
    dsv3 = load_model("deepseek-v3")
    assert engine_splits(dsv3, 8) == [Layout(tp=8, ep=1), Layout(tp=8, ep=8), default_layout(dsv3, 8)]
    assert engine_splits(dsv3, 72) == [default_layout(dsv3, 72)]
    assert engine_splits(load_model("llama-3.1-70b"), 8) == [Layout(tp=8, ep=1)]


@pytest.mark.parametrize("model,B", [("mixtral-8x7b", 1), ("mixtral-8x7b", 128), ("deepseek-v3", 1),
                                     ("deepseek-v3", 128), ("qwen3-30b-a3b", 64)])
def test_the_default_is_the_fastest_decode_step_that_fits(model, B):
    m, s = load_model(model), load_system("hgx-h200")
    lay, why = fastest_split(m, s, G=8, B=B, S=4096, precision=m.weight_dtype, kv_dtype=m.kv_dtype)
    t = lambda x: float(step(m, s, G=8, B=B, S=4096, layout=x).t_step)  # noqa: E731
    assert all(t(lay) <= t(x) for x in engine_splits(m, 8)) and why.startswith(f"split {lay.words(8)}:")


def test_a_lone_sequence_of_deepseek_on_a_node_runs_tensor_parallel():
    """At batch 1 every expert the token hits is read whole under EP and 1/8 of it under TP: DeepSeek-V3 on 8 H200
    decodes one sequence TP8 (SGLang's own launch line for it, `--tp 8`), and 128 of them attention data-parallel."""
    m, s = load_model("deepseek-v3"), load_system("hgx-h200")
    pick = lambda B: fastest_split(m, s, G=8, B=B, S=4096, precision="fp8", kv_dtype=m.kv_dtype)[0]  # noqa: E731
    assert pick(1) == Layout(tp=8, ep=1) and pick(128) == default_layout(m, 8)


def test_spec_basis_tie_says_it_keeps_the_engines_default():
    """On the spec basis every split's step ties; the line says the engines' default was kept, not 'the fastest'."""
    m, sys_ = load_model("mixtral-8x7b"), load_system("hgx-h200")
    lay, line = fastest_split(m, sys_, G=8, B=128, S=4096, precision="bf16", kv_dtype="bf16", basis="spec")
    assert lay.tp == 8 and lay.ep == 1
    assert "tied" in line
