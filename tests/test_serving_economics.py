"""Serving economics (lecture-claims.md R2, R3, R7, R9, A2/A3, T3, FM2–FM4): sweeps, fast/slow modes,
fixed-cadence batching, prefill vs decode and disaggregation — derivations, invariants and the CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest
from clirun import frontier, run
from hypothesis import given, settings
from hypothesis import strategies as st

from tokenmath.serving.batching import mean_latency, simulate_cadence, worst_latency
from tokenmath.serving.disagg import disaggregate
from tokenmath.core.load import load_model, load_system
from tokenmath.serving.modes import (
    batch_ratio,
    fast_slow_modes,
    kv_share_for_multiples,
    pareto_frontier,
    slow_mode_saving,
    standard_batch_compute_bound,
    standard_batch_memory_bound,
)
from tokenmath.core.records import Chip, Model, System
from tokenmath.serving.sweep import balance_batch, kv_crossover_context, sweep, unbatched_ratio

FAST = settings(max_examples=40, deadline=None)


# ---- fixtures: records built here so the numbers do not move when the catalog does ---------------

def ratio_chip(R: float = 300.0) -> Chip:
    """A chip with hardware ratio R at FP8: F = R · 2 · W / b_w with W = 8 TB/s, b_w = 1 B."""
    W = 8e12
    return Chip(name=f"ratio-{R:g}", peak_flop_per_s={"fp8": R * 2 * W, "bf16": R * W}, hbm_capacity_bytes=288e9,
                hbm_bandwidth_bytes_per_s=W, rental_usd_per_hour=2.0, file="test",
                sources={"peak_flop_per_s.fp8": "test: R at fp8", "hbm_bandwidth_bytes_per_s": "test: 8 TB/s"})


def ratio_system(R: float = 300.0, domain: int = 72) -> System:
    return System(name=f"test-{domain}", chip=ratio_chip(R), domain_chips=domain, file="test")


def dense_tied() -> Model:
    """A dense 70B-class model with tied embeddings: every weight read is a weight multiplied."""
    return Model(name="dense-70b", file="test", n_layers=80, d_model=8192, n_heads=64, n_kv_heads=8, head_dim=128,
                 d_ff=28672, vocab_size=128256, tie_embeddings=True, weight_dtype="fp8", kv_dtype="fp8")


# ---- R3: what not batching costs ------------------------------------------------------------------

def test_c1_over_cmin_equals_optimal_batch_at_zero_context_on_the_roofline():
    """Dense, tied embeddings, spec basis, S = 0: c(1)/c_min = R·rho = B* (within 1 %)."""
    r = sweep(dense_tied(), ratio_system(), G=72, batch=[1, 64], context=[0], basis="spec")
    assert r.value("hardware_ratio") == pytest.approx(300.0)
    assert r.value("c1_over_cmin") == pytest.approx(r.value("optimal_batch"), rel=0.01)


def test_c1_over_cmin_catalog_dense_model_within_one_percent():
    m = load_model("llama-3.1-405b")
    r = sweep(m, load_system("gb200-nvl72"), batch=[1], context=[0], basis="spec", precision="fp8")
    assert r.value("c1_over_cmin") == pytest.approx(r.value("optimal_batch"), rel=0.01)


def test_lecture_closed_form_is_b_star_at_zero_context_and_moe_batch_one_reads_only_active_experts():
    r = sweep(load_model("deepseek-v3"), load_system("gb200-nvl72"), G=64, batch=[1], context=[0], basis="spec")
    B_star = r.value("optimal_batch")
    assert 5400 <= B_star <= 5700  # R = 312.5, rho = 671/37.6 (ledger R7 corrected)
    assert r.value("c1_over_cmin_two_term") == pytest.approx(B_star, rel=1e-12)
    # on the roofline a batch-1 MoE step reads ≈ N_active, so not batching costs ≈ R, not R·rho
    assert r.value("c1_over_cmin") == pytest.approx(r.value("hardware_ratio"), rel=0.1)


@FAST
@given(B_star=st.floats(1, 1e5), kappa=st.floats(0, 50))
def test_unbatched_ratio_is_b_star_plus_kappa_over_max_1_kappa(B_star, kappa):
    assert unbatched_ratio(B_star, kappa) == pytest.approx((B_star + kappa) / max(1.0, kappa), rel=1e-12)
    assert unbatched_ratio(B_star, 0.0) == pytest.approx(B_star)


# ---- R9 and A2/A3: balance batch and the KV crossover context ----------------------------------------

@FAST
@given(B_star=st.floats(1, 1e5), kappa=st.floats(0, 0.999))
def test_balance_batch_balances_compute_against_weights_plus_kv(B_star, kappa):
    B = balance_batch(B_star, kappa)
    assert B >= B_star
    # 2·N_act·B/F = N_tot·b/W + B·S·kv/W in units of t_c1: B = B* + kappa·B
    assert B == pytest.approx(B_star + kappa * B, rel=1e-9)


def test_balance_batch_is_infinite_past_the_crossover():
    assert balance_batch(5000.0, 1.0) == np.inf
    assert balance_batch(5000.0, 2.5) == np.inf


def test_kv_crossover_near_200k_for_100b_active_2kb_on_a_ratio_300_chip():
    m = frontier()
    r = sweep(m, ratio_system(300.0), batch=[1], context=[4096], basis="spec")
    L_star = r.value("kv_crossover_context")
    assert 150_000 <= L_star <= 210_000  # 99.6B / (300 · 2,048 B) = 162K
    # the lecture's own inversion (A3): 1e11 / (300 · 1,667 B) = 200K, exactly the formula
    W, F = 8e12, 300 * 2 * 8e12
    assert kv_crossover_context(1e11, W, F, 1e11 / (300 * 200_000)) == pytest.approx(200_000, rel=1e-9)


def test_deepseek_kv_crossover_matches_ledger_r9():
    r = sweep(load_model("deepseek-v3"), load_system("gb200-nvl72"), G=64, batch=[1], context=[4096])
    assert r.value("kv_crossover_context") == pytest.approx(1685, rel=0.03)  # 70.3 KB BF16 (ledger R9)
    assert r.value("kappa") > 1 and r.value("balance_batch") == np.inf


def test_golden_kv_crossover_derivation_head():
    r = sweep(dense_tied(), ratio_system(), G=72, batch=[1], context=[4096], basis="spec", explain=True)
    lines = r.marks["kv_crossover_context"].explain().splitlines()
    assert lines[:2] == [
        "L_star = 2 · N_active · W / (F · kv)  = 1,414 tok",
        "       = 2 · 69.5B params · 8.00 TB/s / (4.80 PFLOP/s · 164 kB/tok)",
    ]
    assert "  W: test: test: 8 TB/s" in lines


# ---- R2: the curves ------------------------------------------------------------------------------

def test_sweep_cost_falls_with_batch_and_step_rises():
    r = sweep(load_model("deepseek-v3"), load_system("gb200-nvl72"), batch=np.geomspace(1, 1e5, 30).round(),
              context=[0, 4096, 65536], basis="spec")
    assert np.all(np.diff(r.usd_per_mtok, axis=0) <= 1e-12)
    assert np.all(np.diff(r.step_time_s, axis=0) >= -1e-15)
    assert np.all(np.diff(r.step_time_s, axis=1) >= -1e-15)
    # the floor read off the roofline is below every point of its column
    assert np.all(r.usd_per_mtok >= r.floor_usd_per_mtok_by_context[None, :] * (1 - 1e-9))


# ---- FM2–FM4: fast and slow modes ------------------------------------------------------------------

def test_batch_ratio_one_fifteenth():
    assert batch_ratio(6, 2.5) == pytest.approx(1 / 15, rel=1e-12)
    assert batch_ratio(6, 2.5, 2) == pytest.approx(2 / 15, rel=1e-12)
    r = fast_slow_modes(6, 2.5)
    assert r.value("batch_ratio") == pytest.approx(1 / 15, rel=1e-12)
    assert r.value("kv_share") == pytest.approx(9 / 14, rel=1e-12)
    assert r.value("slow_mode_max_saving") == pytest.approx(5 / 14, rel=1e-12)


def test_ledger_fits_a_and_b():
    f = kv_share_for_multiples(6, 2.5)
    # fit A: standard at the balance batch: kappa = f, u0 = 1/(1 − kappa) = 2.8
    assert standard_batch_memory_bound(f, f) == pytest.approx(2.8)
    assert standard_batch_compute_bound(6, 2.5, f) == pytest.approx(2.8)
    assert slow_mode_saving(f, 2.8) == pytest.approx(0.0, abs=1e-12)
    # fit B: kappa = 225/70, u0 = 0.56, the slow mode saves 1 − kappa/5 = 0.357
    k = 225 / 70
    u = standard_batch_memory_bound(f, k)
    assert u == pytest.approx(0.56)
    assert 1 / u + k == pytest.approx(5.0)  # decode costs 5× prefill (A6)
    assert slow_mode_saving(k, u) == pytest.approx(5 / 14)


@FAST
@given(p=st.floats(1.01, 50), s=st.floats(1.01, 20), kappa=st.floats(0, 100))
def test_two_term_model_reproduces_the_multiples_and_savings_are_bounded(p, s, kappa):
    """At the standard batch the closed form picks, cutting the batch p·s times gives s× speed and p× price."""
    f = kv_share_for_multiples(p, s)
    assert 0 < f < 1
    u0 = standard_batch_memory_bound(f, kappa) if kappa >= f and kappa > 0 else standard_batch_compute_bound(p, s, kappa)
    if kappa == 0:
        return
    u1 = u0 / (p * s)
    step = lambda u: max(u, 1 + kappa * u)  # noqa: E731  (units of t_w)
    cost = lambda u: max(1, 1 / u + kappa)  # noqa: E731  (units of t_c1)
    assert step(u0) / step(u1) == pytest.approx(s, rel=1e-9)
    assert cost(u1) / cost(u0) == pytest.approx(p, rel=1e-9)
    saving = slow_mode_saving(kappa, u0)
    assert 0 <= saving < 1
    assert saving <= 1 - f + 1e-12


@FAST
@given(p=st.floats(0.01, 100), s=st.floats(0.01, 100))
def test_model_free_saving_bounded(p, s):
    r = fast_slow_modes(p, s)
    x = r.value("slow_mode_max_saving")
    assert x is None or 0 <= x < 1


@FAST
@given(st.lists(st.tuples(st.floats(1e-4, 1), st.floats(1e-3, 1e3)), min_size=1, max_size=60))
def test_pareto_frontier_is_monotone_and_undominated(points):
    lat, cost = np.array(points).T
    f = pareto_frontier(lat, cost)
    assert np.all(np.diff(lat[f]) >= 0)
    assert np.all(np.diff(cost[f]) < 0)
    for i in f:  # nothing is at least as good on both and better on one
        better = (lat <= lat[i]) & (cost <= cost[i]) & ((lat < lat[i]) | (cost < cost[i]))
        assert not better.any()


def test_model_frontier_monotone_and_fast_point_on_the_roofline():
    r = fast_slow_modes(6, 2.5, model=load_model("deepseek-v3"), system=load_system("gb200-nvl72"), G=64, S=4096)
    f = r.frontier_index
    assert np.all(np.diff(r.step_time_s[f]) >= 0) and np.all(np.diff(r.usd_per_mtok[f]) < 0)
    assert r.fits[f].all()
    assert r.value("kv_share") == pytest.approx(9 / 14) and r.value("standard_on_frontier") is True
    fast = r.points["fast_roofline"]
    assert fast["price_multiple"] == pytest.approx(6, rel=1e-3)
    assert fast["speed_multiple"] == pytest.approx(2.5, rel=1e-3)
    assert 0 <= r.value("slow_mode_max_saving") < 1


def test_golden_fast_mode_explanation():
    assert fast_slow_modes(6, 2.5, explain=True).explain() == GOLDEN_FASTMODE


GOLDEN_FASTMODE = """\
── batch_ratio ──
batch_ratio = m / (p · s)  = 0.0667
            = 1 / (6 · 2.50)
sources:
  p: given: price multiple (fast ÷ standard, per token)
  s: given: speed multiple (fast ÷ standard, output tokens/s per sequence)
  m: given: chips per replica, fast ÷ standard

── kv_share ──
kv_share = (1 − 1/s) / (1 − 1/(p · s))  = 0.643
         = (1 − 1/2.50) / (1 − 1/(6 · 2.50))
sources:
  p: given: price multiple (fast ÷ standard, per token)
  s: given: speed multiple (fast ÷ standard, output tokens/s per sequence)

── slow_mode_max_saving ──
slow_mode_max_saving = 1 − kv_share  = 0.357
                     = 1 − 0.643
  kv_share = (1 − 1/s) / (1 − 1/(p · s))  = 0.643
           = (1 − 1/2.50) / (1 − 1/(6 · 2.50))
sources:
  p: given: price multiple (fast ÷ standard, per token)
  s: given: speed multiple (fast ÷ standard, output tokens/s per sequence)"""


# ---- T3: fixed-cadence batching --------------------------------------------------------------------

def test_cadence_worst_two_steps_mean_one_and_a_half():
    assert worst_latency(0.020) == pytest.approx(0.040)
    assert mean_latency(0.020) == pytest.approx(0.030)
    sim = simulate_cadence(0.020, 50_000.0, n=100_000, seed=1)
    assert sim["worst_latency_s"] <= 0.040 + 1e-12
    assert sim["worst_over_step"] > 1.99
    assert sim["mean_latency_s"] == pytest.approx(0.030, abs=0.001)


# ---- prefill vs decode, disaggregation -----------------------------------------------------------

def test_disaggregated_chip_ratio_scales_with_cache_misses():
    m, s = load_model("deepseek-v3"), load_system("gb200-nvl72")
    kw = dict(input_len=4096, output_len=512, B_prefill=64, B_decode=4096)
    d0 = disaggregate(m, s, cache_hit=0.0, **kw)
    d9 = disaggregate(m, s, cache_hit=0.9, **kw)
    assert d9.value("prefill_to_decode_chips") == pytest.approx(0.1 * d0.value("prefill_to_decode_chips"), rel=1e-9)
    assert d9.value("usd_per_request") < d0.value("usd_per_request")
    assert d0.value("out_over_in_cost_ratio") > 1  # decode dearer per token than prefill
    assert d0.value("kv_transfer_bytes") == pytest.approx(4096 * 70272, rel=0.01)  # 70.3 kB/token BF16 MLA


# ---- CLI -------------------------------------------------------------------------------------------

def test_cli_sweep_json_keys_and_values():
    r = run("sweep", "deepseek-v3", "--on", "gb200-nvl72", "--chips", "64", "--batch", "1:65536:12",
            "--context", "4096", "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    for k in ("optimal_batch", "kv_crossover_context", "cost_floor_usd_per_mtok", "c1_over_cmin"):
        assert k in d
    assert 5400 <= d["optimal_batch"] <= 5700
    assert "balance_batch" not in d  # ∞ (kappa > 1 at 4,096 tokens of BF16 MLA KV): omitted, not null
    assert d["kv_crossover_context"] == pytest.approx(1710, rel=0.02)
    assert len(d["points"]["batch"]) == 12
    assert d["derivations"]["kv_crossover_context"]["formula"] == "L_star = 2 · N_active · W / (F · kv)"


def test_cli_sweep_table_variants_and_plot(tmp_path):
    png = tmp_path / "sweep.png"
    r = run("sweep", "deepseek-v3", "--on", "gb200-nvl72", "--batch", "1,64,4096", "--context", "0,4096",
            "--precision", "fp8,fp4", "--plot", str(png))
    assert r.exit_code == 0, r.output
    assert "B* = R·rho" in r.stdout and "variants" in r.stdout
    assert png.exists() and png.stat().st_size > 20_000


def test_cli_fastmode_model_free_and_with_model(tmp_path):
    r = run("fastmode", "--price-multiple", "6", "--speed-multiple", "2.5", "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["batch_ratio"] == pytest.approx(1 / 15)
    assert d["kv_share"] == pytest.approx(9 / 14) and d["slow_mode_max_saving"] == pytest.approx(5 / 14)
    png = tmp_path / "frontier.png"
    r = run("fastmode", "deepseek-v3", "--on", "gb200-nvl72", "--context", "4k", "--plot", str(png))
    assert r.exit_code == 0, r.output
    assert "1/15" in r.stdout and "frontier" in r.stdout and png.exists()


def test_cli_phases_and_cadence_json():
    r = run("phases", "deepseek-v3", "--on", "gb200-nvl72", "--cache-hit", "0.5", "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["prefill_to_decode_chips"] > 0 and d["usd_per_request"] > 0
    assert d["published_output_input_ratios"] and all(x["source"] for x in d["published_output_input_ratios"])
    r = run("cadence", "--step-ms", "20", "--batch", "2000", "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["worst_latency_s"] == pytest.approx(0.040) and d["mean_latency_s"] == pytest.approx(0.030)
    assert d["tokens_per_s"] == pytest.approx(100_000)


@pytest.mark.parametrize("args, needle", [
    (("sweep", "deepseek-v3", "--on", "gb200-nvl72", "--batch", "-5"), "--batch"),
    (("sweep", "deepseek-v3", "--on", "gb200-nvl72", "--batch", "lots"), "not a number"),
    (("sweep", "deepsek-v3", "--on", "gb200-nvl72"), "deepseek-v3"),
    (("sweep", "deepseek-v3", "--on", "gb200-nvl72", "--precision", "fp7"), "--precision"),
    (("fastmode", "--price-multiple", "-6"), "--price-multiple"),
    (("fastmode", "deepseek-v3"), "--on"),
    (("phases", "deepseek-v3", "--on", "gb200-nvl72", "--cache-hit", "1.5"), "--cache-hit"),
    (("cadence",), "--step-ms"),
    (("cadence", "--step-ms", "0"), "--step-ms"),
])
def test_cli_bad_input_one_line_nonzero(args, needle):
    r = run(*args)
    assert r.exit_code != 0
    err = r.stderr.strip()
    assert len(err.splitlines()) == 1 and err.startswith("error:") and needle in err
    assert "Traceback" not in r.output
