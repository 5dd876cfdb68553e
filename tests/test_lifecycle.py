"""The lifecycle balance (tokenmath.training.lifecycle, `tokenmath lifecycle`): ledger rows C2, C4, C5, C7.

Anchors: 5e7 tok/s × 60 days = 2.592e14 tokens (C5, corrected from the lecture's "~200 T");
D_pre = D_inf = 1.5·D_RL with the flashcards' algebra (C4); 2.592e14 / (20 × 1e11) = 129.6× (C7;
Chinchilla, Hoffmann et al. 2022, arXiv 2203.15556).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from clirun import run
from hypothesis import given, settings
from hypothesis import strategies as st

from tokenmath.core.errors import InputError
from tokenmath.training.lifecycle import lifecycle, sensitivity

LECTURE = dict(serving_tokens_per_s=5e7, lifetime_days=60, active_params=1e11)


def test_the_lectures_case():
    r = lifecycle(**LECTURE)
    assert r.value("inference_tokens") == pytest.approx(5e7 * 60 * 86400, rel=1e-12)  # 2.592e14
    assert r.value("pretrain_tokens") == pytest.approx(2.592e14, rel=1e-12)
    assert 2.0e14 <= r.value("pretrain_tokens") <= 2.6e14  # ledger §7: "≈200 T" band
    assert r.value("overtraining_factor") == pytest.approx(129.6, rel=1e-12)
    assert 75 <= r.value("overtraining_factor") <= 130  # ledger C7 band
    assert r.value("chinchilla_tokens") == pytest.approx(2e12)


def test_flashcard_algebra_gives_equal_pretrain_and_inference_and_1_5_rl():
    r = lifecycle(**LECTURE)
    assert r.value("pretrain_tokens") / r.value("inference_tokens") == pytest.approx(1.0, rel=1e-12)
    assert r.value("pretrain_tokens") / r.value("rl_tokens") == pytest.approx(1.5, rel=1e-12)


def test_the_three_phases_cost_the_same_compute():
    """6·N·D_pre = r·e·N·D_RL = 2·e·N·D_inf for any RL multiplier and decode inefficiency."""
    for r_rl in (2.0, 3.0, 6.0):
        for e in (2.0, 3.0, 5.0):
            N = 1e11
            r = lifecycle(5e7, 60, N, rl_multiplier=r_rl, decode_inefficiency=e)
            pre = 6 * N * r.value("pretrain_tokens")
            assert r_rl * e * N * r.value("rl_tokens") == pytest.approx(pre, rel=1e-12)
            assert 2 * e * N * r.value("inference_tokens") == pytest.approx(pre, rel=1e-12)
            assert r.value("compute_per_phase_flop") == pytest.approx(pre, rel=1e-12)


def test_sensitivities():
    s = sensitivity(**LECTURE)
    el = {k: v["elasticity"] for k, v in s.items() if not k.startswith("_")}
    assert el["serving_tokens_per_s"]["pretrain_tokens"] == pytest.approx(1.0)
    assert el["lifetime_days"]["overtraining_factor"] == pytest.approx(1.0)
    assert el["active_params"]["pretrain_tokens"] == pytest.approx(0.0, abs=1e-9)  # N cancels
    assert el["active_params"]["overtraining_factor"] == pytest.approx(-1.0)
    assert el["rl_multiplier"]["rl_tokens"] == pytest.approx(-1.0)
    assert el["rl_multiplier"]["pretrain_tokens"] == pytest.approx(0.0, abs=1e-9)
    assert el["decode_inefficiency"]["pretrain_tokens"] == pytest.approx(1.0)
    assert s["lifetime_days"]["scaled"]["x2"]["pretrain_tokens"] == pytest.approx(2 * 2.592e14)
    assert s["active_params"]["scaled"]["x0.5"]["overtraining_factor"] == pytest.approx(2 * 129.6)


GOLDEN_OVERTRAINING = """\
overtraining_factor = D_pre / D_chinchilla  = 130
                    = 2.59e+14 tok / 2e+12 tok
  D_pre = e_dec · D_inf / 3  = 2.59e+14 tok
        = 3 · 2.59e+14 tok / 3
    D_inf = r_serve · T_life  = 2.59e+14 tok
          = 50.0 Mtok/s · 60.0 days
      T_life = days · 86400  = 60.0 days
             = 60 days · 86400
  D_chinchilla = c_chin · N  = 2e+12 tok
               = 20 tok/param · 100B params
sources:
  e_dec: flashcards F card 4: decode runs at ~1/3 of training's FLOP efficiency (ledger C4)
  r_serve: given (--serving-tokens-per-s)
  days: given (--lifetime-days)
  c_chin: Hoffmann et al. 2022 (Chinchilla, arXiv 2203.15556): ≈ 20 tokens per parameter
  N: given (--active-params)"""


def test_golden_overtraining_derivation():
    r = lifecycle(**LECTURE, explain=True)
    assert r.numbers["overtraining_factor"].explain() == GOLDEN_OVERTRAINING


@settings(max_examples=60, deadline=None)
@given(st.floats(1e3, 1e10), st.floats(1, 3650), st.floats(1e8, 1e13), st.floats(2, 6), st.floats(1, 10))
def test_token_counts_are_positive_and_scale_with_serving_volume(r_serve, days, N, r_rl, e):
    a = lifecycle(r_serve, days, N, r_rl, e)
    b = lifecycle(2 * r_serve, days, N, r_rl, e)
    for k in ("pretrain_tokens", "rl_tokens", "inference_tokens", "overtraining_factor"):
        assert a.value(k) > 0
        assert b.value(k) == pytest.approx(2 * a.value(k), rel=1e-9)


def test_vectorised_inputs_broadcast():
    r = lifecycle(np.array([5e7, 5e8]), 60, 1e11)
    assert np.allclose(r.value("pretrain_tokens"), [2.592e14, 2.592e15])


@pytest.mark.parametrize("kw", [dict(serving_tokens_per_s=-1), dict(lifetime_days=0), dict(active_params=-5),
                                dict(rl_multiplier=0), dict(lifetime_days=1e6), dict(serving_tokens_per_s=np.nan)])
def test_bad_inputs_are_refused(kw):
    with pytest.raises(InputError):
        lifecycle(**{**LECTURE, **kw})


# ---- CLI --------------------------------------------------------------------------------------------


def test_cli_lifecycle_json_lecture_case():
    r = run("lifecycle", "--serving-tokens-per-s", "5e7", "--lifetime-days", "60", "--active-params", "1e11",
            "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["pretrain_tokens"] == pytest.approx(2.6e14, rel=0.01)
    assert d["overtraining_factor"] == pytest.approx(130, rel=0.01)
    assert d["rl_tokens"] == pytest.approx(d["pretrain_tokens"] / 1.5)
    assert d["inference_tokens"] == pytest.approx(2.592e14)
    assert d["sensitivity"]["active_params"]["elasticity"]["overtraining_factor"] == pytest.approx(-1.0)
    assert d["derivations"]["pretrain_tokens"]["formula"] == "D_pre = e_dec · D_inf / 3"


def test_cli_lifecycle_table_explain_and_suffixes():
    r = run("lifecycle", "--serving-tokens-per-s", "50M", "--lifetime-days", "60", "--active-params", "100B",
            "--rl-multiplier", "2", "--explain")
    assert r.exit_code == 0, r.output
    assert "D_inf = r_serve · T_life = 50.0 Mtok/s · 60.0 days = 2.59e+14" in r.stdout
    assert "D_RL = 2 · D_inf / r_RL" in r.stdout and "Hoffmann" in r.stdout


@pytest.mark.parametrize("args,needle", [
    (["--serving-tokens-per-s", "-5e7", "--lifetime-days", "60", "--active-params", "1e11"], "--serving-tokens-per-s"),
    (["--serving-tokens-per-s", "fast", "--lifetime-days", "60", "--active-params", "1e11"], "not a number"),
    (["--serving-tokens-per-s", "5e7", "--lifetime-days", "0", "--active-params", "1e11"], "--lifetime-days"),
    (["--serving-tokens-per-s", "5e7", "--lifetime-days", "60", "--active-params", "1e11", "--rl-multiplier", "-3"],
     "--rl-multiplier"),
])
def test_cli_lifecycle_bad_input(args, needle):
    r = run("lifecycle", *args)
    assert r.exit_code != 0 and "Traceback" not in r.output
    err = r.stderr.strip()
    assert len(err.splitlines()) == 1 and needle in err, err


def test_cli_lifecycle_missing_option_is_a_usage_error():
    r = run("lifecycle", "--lifetime-days", "60")
    assert r.exit_code != 0 and "Traceback" not in r.output
