"""The eager op inventory (core.eager) against Hugging Face transformers' own decode steps.

tests/data/hf_eager_ops.json holds the torch calls of one decode step of transformers 4.57.1's modelling code for
tiny configs of each family (counted on torch 2.13 with a TorchFunctionMode; provenance in the file). No
transformers is needed here: the configs are read by tokenmath's reader and counted by `eager.host_calls`.
"""

import json
from pathlib import Path

import numpy as np
import pytest

from tokenmath.core import arch, eager
from tokenmath.core.hfconfig import model_from_hf_config

DATA = json.loads((Path(__file__).parent / "data" / "hf_eager_ops.json").read_text())
BEYOND_WINDOW = {"gemma2", "gemma3_text"}  # sliding_window 4 < the 7-token cache: HF builds a sliding mask


def _model(case):
    return model_from_hf_config(DATA["configs"][case["config"]], Path(f"{case['config']}/config.json"))


def _calls_at_hf_hits(m, case):
    """tokenmath's calls of the step with the experts HF really hit (the inventory uses the expected number)."""
    B = case["batch"]
    n, r, e = (float(x) for x in eager.host_calls(m, B))
    if arch.n_moe_layers(m) and case["experts_hit_per_layer"]:
        hit_hf = np.mean(list(case["experts_hit_per_layer"].values()))
        hit_tm = float(eager.expert_rows(m, B)[1])
        e_at = [float(eager.host_calls(m, T)[2]) for T in (1, 64)]  # n_expert is a + b·hit: b from two T
        h_at = [float(eager.expert_rows(m, T)[1]) for T in (1, 64)]
        e += (e_at[1] - e_at[0]) / (h_at[1] - h_at[0]) * (hit_hf - hit_tm)
    return n + r + e


@pytest.mark.parametrize("key", sorted(DATA["cases"]))
def test_the_inventory_counts_the_calls_transformers_makes(key):
    case = DATA["cases"][key]
    m = _model(case)
    tm = _calls_at_hf_hits(m, case)
    fam = case["config"]
    if fam in BEYOND_WINDOW:  # not counted: the sliding mask beyond the window (26 per step, 7 per sliding layer)
        assert case["hf_calls"] - tm == 26 + 7 * m.n_sliding_layers
    elif fam == "qwen3_moe-nonorm":  # norm_topk_prob false: no renormalising sum and div_ (counted as Qwen3-MoE's)
        assert tm - case["hf_calls"] == 2 * arch.n_moe_layers(m)
    else:
        assert tm == pytest.approx(case["hf_calls"], abs=1e-9)


def test_each_family_reads_the_code_transformers_runs_and_check_local_its_own():
    from tokenmath.core.errors import InputError
    from tokenmath.measure.checklocal import as_built

    step = {name: eager.counts(_model({"config": name}))["step"] for name in ("llama", "qwen3", "gemma2-win64", "gpt_oss")}
    assert step == {"llama": 26, "qwen3": 26, "gemma2-win64": 30, "gpt_oss": 73}
    assert eager.counts(as_built(_model({"config": "gemma2-win64"})))["step"] == 14
    with pytest.raises(InputError, match="eager_code 'vllm' is not one of"):
        eager.counts(_model({"config": "llama"}).evolve(eager_code="vllm"))


def test_a_loop_over_every_expert_counts_every_expert():
    """OLMoE's block runs each of its E experts (0 rows where not hit); DeepSeek-V3's looks at each; gpt-oss's batches
    them: their calls do not follow the experts hit."""
    for name in ("olmoe", "gpt_oss"):
        m = _model({"config": name})
        assert float(eager.host_calls(m, 1)[2]) == float(eager.host_calls(m, 64)[2])
    m = _model({"config": "olmoe"})
    big = m.evolve(moe=m.moe.model_copy(update={"n_routed_experts": 64, "experts_per_token": 8}))
    assert float(eager.host_calls(big, 1)[2]) == arch.n_moe_layers(m) * 64 * (8 + 5)
