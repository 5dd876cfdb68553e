"""`tokenmath infer`: reading price sheets back into architecture (ledger rows A1–A9, K1–K3, FM2–FM3).

Each inference's derivation is checked against the ledger's numbers; the lecture's own errors must be
flagged by the tool; bad input gives one line and a non-zero exit.
"""

from __future__ import annotations

import json

import pytest
from clirun import one_line_error as _one_line_error
from clirun import run
from hypothesis import given as hgiven
from hypothesis import settings
from hypothesis import strategies as st

from tokenmath.economics.infer import (
    hardware_ratio_range,
    kv_from_price_step,
    read_all,
    read_offer,
)
from tokenmath.core.load import (
    load_assumptions,
    load_price_sheet,
    price_sheet_dates,
    providers,
)


@pytest.fixture(scope="module")
def gemini():
    return read_offer("google/gemini-3.1-pro")


@pytest.fixture(scope="module")
def opus():
    return read_offer("anthropic/claude-opus-4.6")


# ---- 1. long-context step -> KV bytes per token ---------------------------------------------------

def test_lecture_case_gives_1667_bytes():
    """A3: 100B active, R = 300, S* = 200K -> 1e11 / (300 · 2e5) = 1,666.7 B."""
    assert kv_from_price_step(100e9, 300, 200_000) == pytest.approx(1666.67, abs=0.01)


@settings(max_examples=60, deadline=None)
@hgiven(N=st.floats(1e9, 2e12), R=st.floats(50, 3000), S=st.floats(1e3, 1e7))
def test_kv_times_threshold_is_constant(N, R, S):
    """A3(f): kv*(L*) · L* = N_active / R, whatever the threshold."""
    assert kv_from_price_step(N, R, S) * S == pytest.approx(N / R, rel=1e-12)


def test_gemini_31_pro_kv_and_interval(gemini):
    lc = gemini.get("long_context")
    v = lc.values
    assert v["threshold_tokens"] == 200_000
    assert v["kv_bytes_per_token"] == pytest.approx(1666.67, abs=0.01)
    # interval = corners of N_active x R over the assumed chips and precisions
    a = load_assumptions()
    Rs = [r for _, _, r in hardware_ratio_range(a.chips_for("google"), list(a.precisions))]
    assert v["kv_bytes_per_token_low"] == pytest.approx(a.active_params_low / (max(Rs) * 200_000))
    assert v["kv_bytes_per_token_high"] == pytest.approx(a.active_params_high / (min(Rs) * 200_000))
    assert v["kv_bytes_per_token_low"] < v["kv_bytes_per_token"] < v["kv_bytes_per_token_high"]
    assert min(Rs) <= a.lecture_hardware_ratio <= max(Rs)
    # the lecture's "≈2 KB" lies inside; the same 2,048 elements at bf16 (4 KB) do not
    assert v["kv_bytes_per_token_low"] < 2048 < v["kv_bytes_per_token_high"] < 4096
    assert v["kv_elements_per_token"]["fp8"] == pytest.approx(2 * v["kv_elements_per_token"]["bf16"])


GOLDEN_KV = """\
kv_bytes_per_token = N_active / (R · S_star)  = 1.67 kB/tok
                   = 100B params / (300 · 200,000 tok)
sources:
  N_active: catalog/assumptions/default.yaml: lecture T ~1:35:47: a frontier model with ~100B active parameters (lecture-claims.md §2.2, A3) (estimate)
  R: catalog/assumptions/default.yaml: lecture T ~1:35:47: 'FLOPs over memory bandwidth ~300' (lecture-claims.md A3, §1.2)
  S_star: catalog/prices/google/2026-04.yaml: prompts over 200,000 tokens priced higher (lecture-claims.md §2.3 (prices as of ~April 2026) ; api_prices.csv 'Gemini 3 Pro Preview (3.1 Pro same)' ; github simonw/llm-prices data/google.json)"""


def test_golden_explanation_of_the_kv_reading(gemini):
    assert gemini.get("long_context").derivations["kv_bytes_per_token"].explain() == GOLDEN_KV


def test_step_size_implies_and_does_not_imply(gemini):
    lc = gemini.get("long_context")
    assert lc.values["input_multiplier"] == pytest.approx(2.0)  # A1: not "+50%" on input
    assert lc.values["output_multiplier"] == pytest.approx(1.5)
    assert lc.values["cost_parity_context_tokens"] == pytest.approx(300_000)
    assert lc.values["window_cost_multiple"] == pytest.approx(5.0)  # A1(e): 1M / 200K
    text = " ".join(lc.does_not_imply)
    assert "says nothing about KV bytes" in text and "not a KV effect" in text
    assert any("lecture A1" in f and "×2" in f and "×1.5" in f for f in lc.flags)


def test_two_kb_needs_one_byte_elements_is_flagged(gemini):
    flags = gemini.get("long_context").flags
    f = next(f for f in flags if "lecture A4" in f)
    assert "2,048 elements" in f and "only at 1 byte per element" in f and "4.10 kB" in f and "outside" in f


def test_gemini_25_pro_reads_the_same_threshold():
    v = read_offer("google/gemini-2.5-pro").get("long_context").values
    assert v["kv_bytes_per_token"] == pytest.approx(1666.67, abs=0.01)
    assert (v["input_multiplier"], v["output_multiplier"]) == pytest.approx((2.0, 1.5))


def test_wider_precisions_and_fixed_active_params_change_the_interval():
    base = read_offer("openai/gpt-5.4").get("long_context").values
    fixed = read_offer("openai/gpt-5.4", active=(100e9, 100e9, 100e9)).get("long_context").values
    assert base["kv_bytes_per_token_low"] < fixed["kv_bytes_per_token_low"]
    assert fixed["kv_bytes_per_token_high"] < base["kv_bytes_per_token_high"]
    wide = read_offer("openai/gpt-5.4", precisions=["bf16", "fp8", "fp4"]).get("long_context").values
    assert wide["kv_bytes_per_token_high"] > base["kv_bytes_per_token_high"]  # bf16 halves R


def test_every_band_is_read_and_an_older_sheet_can_be_named():
    qwen = read_offer("alibaba/qwen3-max")
    steps = [i.values["threshold_tokens"] for i in qwen.inferences if i.kind == "long_context"]
    assert steps == [32_000, 128_000]
    beta = read_offer("anthropic/claude-opus-4.6", "2026-02")  # the 1M beta premium, before GA dropped it
    assert beta.get("long_context").values["threshold_tokens"] == 200_000
    assert read_offer("anthropic/claude-opus-4.6@2026-02").sheet.date == "2026-02"


# ---- 2. output / input -------------------------------------------------------------------------------

@pytest.mark.parametrize("ref,ratio", [("anthropic/claude-opus-4.6", 5.0), ("openai/gpt-5", 8.0),
                                       ("google/gemini-3.1-pro", 6.0), ("deepseek/deepseek-chat@2025-02-08", 1.1 / 0.27)])
def test_output_input_ratio_and_decode_utilisation(ref, ratio):
    """A6/A7: decode utilisation relative to prefill = p_in / p_out."""
    oi = read_offer(ref).get("output_input")
    assert oi.values["output_over_input"] == pytest.approx(ratio)
    assert oi.values["decode_utilisation_relative"] == pytest.approx(1 / ratio)
    assert (3 <= ratio <= 5) == (not any("lecture A6" in f for f in oi.flags))


# ---- 3. cache ------------------------------------------------------------------------------------------

def test_anthropic_write_premiums_are_holding_prices(opus):
    """A9: 5-min write 1.25x, 1-h write 2x -> 3x and 1x input per hour; break-even at the 1-h rate 0.9 h."""
    ca = opus.get("cache").values
    assert ca["cache_hit_over_input"] == pytest.approx(0.1)  # A8
    assert ca["holding_rate_per_mtok_hour"]["300"] == pytest.approx(15.0)
    assert ca["holding_rate_per_mtok_hour"]["3600"] == pytest.approx(5.0)
    assert ca["break_even_hold_s"] == pytest.approx(0.9 * 3600)
    assert ca["implied_usd_per_gb_hour_low"] <= ca["implied_usd_per_gb_hour"] <= ca["implied_usd_per_gb_hour_high"]


def test_gemini_storage_fee_break_even(gemini):
    ca = gemini.get("cache").values
    assert ca["holding_rate_per_mtok_hour"] == {"storage": 4.5}
    assert ca["break_even_hold_s"] == pytest.approx(3600 * (2.0 - 0.2) / 4.5)
    # the KV used is this offer's own inference
    assert ca["kv_bytes_per_token_used"] == pytest.approx(gemini.get("long_context").values["kv_bytes_per_token"])


def test_cache_lifetimes_sit_in_flash_and_the_lecture_is_flagged(opus):
    """K2/K3: HDD drains in about a day, so by the lecture's own rule both caches sit in flash."""
    ca = opus.get("cache")
    lt = ca.values["lifetimes"]
    assert lt["300"]["nearest_drain_medium"] == "flash"
    assert lt["3600"]["nearest_drain_medium"] == "flash"
    flags = " | ".join(ca.flags)
    assert "lecture K2: HDD drains in ~1.00 h" in flags and "23.4 h–30.3 h" in flags
    assert "the 1.00 h cache sits in HDD" in flags and "it sits in flash" in flags
    assert "both sit in flash" in flags and "runner-up for 5.00 min is DRAM" in flags


# ---- 4. fast / priority ----------------------------------------------------------------------------------

def test_fast_mode_batch_ratio_and_kv_share(opus):
    """FM2: 1/(6·2.5) = 1/15; FM3: KV share (1 − 1/2.5)/(1 − 1/15) = 9/14."""
    fast = next(i for i in opus.inferences if i.kind == "service_tier")
    assert fast.values["batch_ratio"] == pytest.approx(1 / 15, rel=1e-12)
    assert fast.values["kv_share_standard"] == pytest.approx(9 / 14, rel=1e-12)
    assert fast.values["batch_ratio_is_lower_bound"] is True  # "up to 2.5x"
    assert opus.headline()["batch_ratio"] == pytest.approx(1 / 15)


def test_priority_without_speed_gives_only_a_bound():
    gpt = read_offer("openai/gpt-5")
    pr = next(i for i in gpt.inferences if i.kind == "service_tier" and i.values["tier_kind"] == "priority")
    assert pr.values["batch_ratio"] is None and pr.values["batch_ratio_high"] == pytest.approx(0.5)
    off = next(i for i in read_offer("deepseek/deepseek-chat@2025-02-08").inferences if i.kind == "service_tier")
    assert off.values["batch_ratio"] is None and "idle capacity" in off.implies[0]


# ---- every offer ------------------------------------------------------------------------------------------

def test_read_all_covers_every_offer_once():
    refs = {f"{p}/{o}" for p in providers() for d in price_sheet_dates(p) for o in load_price_sheet(p, d).offers}
    readings = read_all()
    assert sorted(r.ref for r in readings) == sorted(refs)
    for r in readings:
        assert r.get("output_input") or r.offer.output_per_mtok is None
        h = r.headline()
        if "kv_bytes_per_token" in h:
            assert h["kv_bytes_per_token_low"] <= h["kv_bytes_per_token"] <= h["kv_bytes_per_token_high"]


# ---- CLI --------------------------------------------------------------------------------------------------

def test_cli_json_keys():
    r = run("infer", "google/gemini-3.1-pro", "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    for k in ("kv_bytes_per_token", "kv_bytes_per_token_low", "kv_bytes_per_token_high", "decode_utilisation_relative"):
        assert isinstance(d[k], float)
    assert {i["kind"] for i in d["inferences"]} >= {"long_context", "output_input", "cache", "service_tier"}
    assert d["flags"]


def test_cli_brief_and_explain():
    r = run("infer", "anthropic/claude-opus-4.6")
    assert r.exit_code == 0, r.output
    assert "batch_ratio = 0.0667" in r.stdout and "! lecture K2" in r.stdout
    r = run("infer", "google/gemini-3.1-pro", "--explain")
    assert r.exit_code == 0, r.output
    assert "kv_bytes_per_token = N_active / (R · S_star)" in r.stdout and "interval:" in r.stdout
    assert "does not imply:" in r.stdout


def test_cli_all_table_and_json():
    r = run("infer", "--all", "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["summary"]["offers"] == len(d["offers"]) >= 40
    assert d["summary"]["kv_bytes_per_token"]["google/gemini-3.1-pro"][1] == pytest.approx(1666.67, abs=0.01)
    r = run("infer", "--all")
    assert r.exit_code == 0 and "what each price sheet implies" in r.stdout and "google/gemini-3.1-pro" in r.stdout


@pytest.mark.parametrize("args,needles", [
    (("googel/gemini-3.1-pro",), ("unknown provider 'googel'", "did you mean google")),
    (("google/gemini-31-pro",), ("no offer 'gemini-31-pro' from google", "did you mean")),
    (("google",), ("expected PROVIDER/OFFER",)),
    (("google/gemini-3.1-pro", "--date", "2025-06"), ("not on the 2025-06 sheet", "2026-04")),
    (("google/gemini-2.5-pro", "--date", "1999-01"), ("no google price sheet dated",)),
    ((), ("give PROVIDER/OFFER",)),
    (("--all", "google/gemini-3.1-pro"), ("not both",)),
    (("google/gemini-3.1-pro", "--active-params", "1:2"), ("--active-params",)),
    (("google/gemini-3.1-pro", "--active-params", "200e9:100e9:50e9"), ("low ≤ central ≤ high",)),
    (("google/gemini-3.1-pro", "--precision", "fp3"), ("--precision 'fp3'",)),
])
def test_cli_bad_input_is_one_line(args, needles):
    _one_line_error(run("infer", *args), *needles)


def test_precisions_are_read_as_serve_reads_them():
    """--precision names a storage format as every command does (README: 'int8' is weight-only at the 16-bit rate,
    'w8a8' at the INT8 peak): `infer --precision w8a8` was refused ('none of h100-sxm, … has a peak at w8a8') and
    'int8' read the INT8 peak."""
    chips = ["h100-sxm", "b200"]
    R = {p: [r for _, _, r in hardware_ratio_range(chips, [p])] for p in ("int8", "w8a8", "bf16", "mxfp4", "fp4")}
    assert R["int8"] == R["bf16"]  # weight-only: dequantised to the 16-bit GEMM
    assert R["w8a8"] == [2 * r for r in R["bf16"]]  # H100 and B200 list INT8 at twice BF16
    assert R["mxfp4"] == R["fp4"] and len(R["fp4"]) == 1  # H100 has no FP4 peak: B200 only
    assert run("infer", "--all", "--precision", "w8a8").exit_code == 0
