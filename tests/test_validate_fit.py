"""A per-user speed, or a decode at a stated batch, is predicted only on a replica that holds the weights and the
batch's KV (the static-latency path refused such a replica; the per-user path read a step time off it)."""
from __future__ import annotations

import pytest

from tokenmath.measure.validate import COLUMNS, Aliases, predict_row
from tokenmath.measure.validate.report import Unexpressed


def _row(**kw) -> dict:
    base = {c: "" for c in COLUMNS}
    base.update(id="FIT-X01", batch="1", input_len="1000", output_len="100", unit="tokens/s/user",
                metric="output_tokens_per_s_per_user", value="30", confidence="paraphrased")
    base.update(kw)
    return base


@pytest.mark.parametrize("kw", [
    dict(model="Llama 3.1 405B", precision="BF16", hardware="H100", n_chips="8"),  # 810 GB of weights, 687 GB
    dict(model="Llama 3.1 70B", precision="BF16", hardware="Cerebras CS-3", n_chips="1"),  # 141 GB on 44 GB
    dict(model="Llama 3.1 70B", precision="BF16", hardware="GroqRack", n_chips="576"),  # 141 GB on 576 x 230 MB
])
def test_a_per_user_speed_on_a_replica_that_cannot_hold_the_model_is_refused(kw):
    r = predict_row(_row(**kw), Aliases())
    assert isinstance(r, Unexpressed) and "no room" in r.reason, r


@pytest.mark.parametrize("kw, chips", [
    (dict(model="Llama 3.1 70B", precision="BF16", hardware="Cerebras CS-3", n_chips="4"), 4),
    (dict(model="Llama 3.1 70B", precision="INT8", hardware="Groq LPU", n_chips="576"), 512),
])
def test_the_best_split_over_stated_chips_is_one_that_holds_the_model(kw, chips):
    """Unstated split and lengths (a bound): the best over the row's chips was TP1 × 576 replicas of one 230 MB
    chip holding a 70B; only replicas that hold the weights are candidates now."""
    r = predict_row(_row(**{**kw, "input_len": "", "output_len": ""}), Aliases())
    assert not isinstance(r, Unexpressed), r
    split = next(a for a in r.assumptions if "the split is not stated" in a)
    assert f"TP{chips} " in split, split


@pytest.mark.parametrize("kw, chips", [
    (dict(model="Llama 3.1 70B", precision="BF16", hardware="Cerebras CS-3"), 8),  # 141 GB over 44 GB wafers
    (dict(model="Llama 3.1 70B", precision="INT8", hardware="GroqRack"), 1024),  # 70.6 GB over 230 MB chips
    (dict(model="Llama 3.1 405B", precision="BF16", hardware="H100"), 32),  # 810 GB: more than one 8-GPU node
    (dict(model="Llama 3.1 8B", precision="BF16", hardware="H100"), 1),  # one domain holds it: as before
])
def test_a_row_stating_no_chips_gets_a_replica_that_holds_the_weights(kw, chips):
    """The engine rule (the fewest chips holding the weights in half their memory) stopped at one scale-up domain,
    so a model larger than the domain was predicted on a replica that cannot hold it; it spans domains now."""
    r = predict_row(_row(**kw), Aliases())
    assert not isinstance(r, Unexpressed), r
    rule = next(a for a in r.assumptions if "by the engine rule" in a)
    assert f"replica of {chips} chip(s)" in rule, rule
    assert ("spans" in rule) == (chips > 8 or "CS-3" in kw["hardware"]), rule
