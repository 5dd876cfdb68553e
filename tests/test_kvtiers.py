"""`tokenmath kv`: memory tiers, drain times, dated holding prices, hold vs recompute (ledger K1–K4, B1–B3).

Anchors from the ledger (K2 f): HDD 24 TB at 285 MB/s drains in 23.4 h; a 30.72 TB SSD at 14 GB/s in
36.6 min; H100 HBM in 23.9 ms.
"""

from __future__ import annotations

import json

import pytest
from clirun import one_line_error as _one_line_error
from clirun import run
from hypothesis import given as hgiven
from hypothesis import settings
from hypothesis import strategies as st

from tokenmath.economics.kvtiers import (
    break_even_hold_s,
    cheapest_tier,
    drains_within_tier,
    hold_usd,
    kv_report,
    lecture_drain_flags,
    nearest_drain_tier,
    tier_rows,
)
from tokenmath.core.load import load_assumptions, load_model, load_system, load_tier, names
from tokenmath.core.pricing_records import date_key

TIERS = names("tiers")


@pytest.fixture(scope="module")
def rows():
    return tier_rows()


# ---- catalog --------------------------------------------------------------------------------------

def test_the_issue_asks_for_these_media():
    media = {load_tier(n).tier_class for n in TIERS}
    assert {"hbm", "lpddr", "ddr", "cxl", "nvme-tlc", "nvme-qlc", "hdd"} <= media
    assert sum(load_tier(n).tier_class == "hbm" for n in TIERS) >= 5  # HBM of several chips


@pytest.mark.parametrize("name", TIERS)
def test_tier_loads_with_sources_and_dated_prices(name):
    t = load_tier(name)
    assert t.capacity_bytes > 0 and t.read_bandwidth_bytes_per_s > 0
    for f in ("capacity_bytes", "read_bandwidth_bytes_per_s"):
        assert t.sources.get(f) or t.source, f"{name}: {f} has no source"
    for date, p in t.prices.items():
        date_key(date)  # every price carries a date that parses
        assert t.sources.get(f"prices.{date}.usd_per_gb"), f"{name}: price on {date} has no source"
    for key in t.estimates:
        assert t.sources.get(key), f"{name}: estimate {key} needs its own source"
    if t.tier_class != "hbm":
        assert t.prices and t.service_life_s, f"{name}: a non-HBM tier needs a dated price and a service life"


@pytest.mark.parametrize("name,drain_s,tol", [("hdd-exos-x24", 23.4 * 3600, 0.1 * 3600),
                                              ("nvme-tlc-gen5-30tb", 36.6 * 60, 0.5 * 60),
                                              ("hbm-h100", 80 * 2**30 / 3.35e12, 0.0001), ("lpddr5x-grace", 0.9375, 1e-4),
                                              ("ddr5-socket", 2.5, 1e-3)])
def test_golden_drain_times(rows, name, drain_s, tol):
    r = next(r for r in rows if r.name == name)
    assert r.drain_s == pytest.approx(drain_s, abs=tol)


def test_memory_prices_moved_3_to_10x_and_are_dated():
    """B3: DDR5 ~$3.4/GB (Sep 2025) -> $27-37/GB (H1 2026); 30 TB TLC $0.10 -> $0.36/GB."""
    ddr = load_tier("ddr5-socket")
    early, late = ddr.price_on("2025-09")[1].usd_per_gb, ddr.price_on()[1].usd_per_gb
    assert 3 <= late / early <= 10
    tlc = load_tier("nvme-tlc-gen5-30tb")
    assert tlc.price_on("2025-06")[1].usd_per_gb == pytest.approx(0.10)
    assert tlc.price_on()[1].usd_per_gb == pytest.approx(0.36)
    assert tlc.price_on("2020")[0] == "2025-Q2"  # before every date: the earliest


def test_hbm_holding_is_the_chips_rental(rows):
    h100 = next(r for r in rows if r.name == "hbm-h100")
    assert h100.basis == "rental"
    assert h100.hold_price == pytest.approx(2.95 / (80 * 2**30 / 1e9), rel=0.01)  # B2: $2.95/h / 80 GiB


# ---- the drain-time rule and the explicit cost ----------------------------------------------------------

def test_five_minutes_and_one_hour_sit_in_flash_one_day_in_hdd(rows):
    """K3 corrected: both provider lifetimes fall in the flash range; HDD matches a ~1-day hold."""
    for T in (300, 3600):
        assert nearest_drain_tier(rows, T).tier.medium == "flash"
        assert cheapest_tier(rows, T).tier.medium == "flash"
    assert nearest_drain_tier(rows, 86400).tier.medium == "HDD"
    assert cheapest_tier(rows, 86400).tier.medium == "HDD"
    assert drains_within_tier(rows, 60).tier.medium == "DRAM"  # a 1-minute hold: DRAM drains within it


@pytest.mark.parametrize("price_date", ["2025-09", None])
@pytest.mark.parametrize("T", [120.0, 300.0, 3600.0, 86400.0, 7 * 86400.0])
def test_cheapest_tier_agrees_with_the_drain_rule_on_the_medium(T, price_date):
    """K1: from minutes up, the explicit cost minimum and the drain-time rule pick the same medium."""
    rows = tier_rows(price_date)
    assert cheapest_tier(rows, T).tier.medium == nearest_drain_tier(rows, T).tier.medium


def test_the_2026_price_shock_moves_second_long_holds_from_dram_to_flash():
    """B3: DRAM rose ~9x, flash ~3.6x: at 2026 prices a flash read-back is cheaper than a second of DRAM."""
    assert cheapest_tier(tier_rows("2025-09"), 1.0).tier.medium == "DRAM"
    assert cheapest_tier(tier_rows(), 1.0).tier.medium == "flash"


@settings(max_examples=50, deadline=None)
@hgiven(kv=st.floats(1e3, 1e12), p=st.floats(1e-7, 1.0), T=st.floats(0, 1e6), d=st.floats(1e-3, 1e5),
        dT=st.floats(1.0, 1e5))
def test_hold_cost_grows_with_time(kv, p, T, d, dT):
    assert hold_usd(kv, p, T + dT, d) > hold_usd(kv, p, T, d) >= 0


@settings(max_examples=50, deadline=None)
@hgiven(kv=st.floats(1e6, 1e12), p=st.floats(1e-7, 1.0), d=st.floats(1e-3, 1e4), rc=st.floats(1e-4, 1e3))
def test_break_even_hold_costs_exactly_the_recompute(kv, p, d, rc):
    T = break_even_hold_s(rc, kv, p, d)
    if T > 0:
        assert hold_usd(kv, p, T, d) == pytest.approx(rc, rel=1e-9)


# ---- the lecture's errors, flagged by the tool --------------------------------------------------------

def test_lecture_drain_errors_are_flagged(rows):
    flags = lecture_drain_flags(rows)
    hdd = next(f for f in flags if "HDD" in f)
    assert "~1.00 h" in hdd and "23.4 h–30.3 h" in hdd and "23–30× longer" in hdd
    assert not any(f.startswith("lecture K2: HBM") or f.startswith("lecture K2: DRAM") for f in flags)


def test_report_flags_both_caches_in_flash():
    rep = kv_report(lecture_media=load_assumptions().lecture_cache_media)
    text = " | ".join(rep.flags)
    assert "the 1.00 h cache sits in HDD" in text and "both sit in flash" in text
    assert rep.choices[300.0]["runner_up_medium"] == "DRAM"


# ---- a model's prefix: hold vs recompute --------------------------------------------------------------

@pytest.fixture(scope="module")
def deepseek():
    return kv_report(load_model("deepseek-v3"), load_system("hgx-h100"), prefix_tokens=32_768)


def test_prefix_hold_vs_recompute(deepseek):
    v = deepseek.value
    assert v("kv_bytes_per_token") == pytest.approx(70_272)  # MLA 576 el x 61 layers x 2 B (ledger 2.2)
    assert v("prefix_bytes") == pytest.approx(70_272 * 32_768)
    assert v("recompute_usd") > 0
    for name, extra in deepseek.per_tier.items():
        be = float(extra["break_even_hold_s"])
        row = next(r for r in deepseek.rows if r.name == name)
        if be > 0:  # holding exactly the break-even time costs exactly the recompute
            assert hold_usd(v("prefix_bytes"), row.hold_price, be, row.drain_s) == pytest.approx(v("recompute_usd"))
    for T, c in deepseek.choices.items():
        assert c["decision"].startswith("hold in") == (c["cheapest_hold_usd"] < c["recompute_usd"])


def test_break_even_falls_with_the_tiers_price(deepseek):
    """T_break_even + t_drain = 3600 · recompute / (bytes · price): a dearer tier is worth it for less time."""
    pts = sorted((r.hold_price, float(deepseek.per_tier[r.name]["break_even_hold_s"]) + r.drain_s)
                 for r in deepseek.rows if r.name in deepseek.per_tier)
    totals = [t for _, t in pts]
    assert all(a >= b * (1 - 1e-9) for a, b in zip(totals, totals[1:]))


def test_explain_shows_the_hold_and_break_even_derivations():
    rep = kv_report(load_model("deepseek-v3"), load_system("hgx-h100"), prefix_tokens=32_768, explain=True)
    text = rep.explain()
    assert "recompute_usd = N · c_prefill / 1e6" in text
    assert "hold_usd = kv_bytes / 1e9 · usd_per_gb_hour · (T + t_drain) / 3600" in text
    assert "T_break_even = 3600 · recompute_usd / (kv_bytes / 1e9 · usd_per_gb_hour) − t_drain" in text


# ---- CLI ------------------------------------------------------------------------------------------------

def test_cli_json_lists_every_tier_with_its_drain_time():
    r = run("kv", "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert sorted(t["name"] for t in d["tiers"]) == sorted(TIERS)
    assert all(t["drain_time_s"] > 0 for t in d["tiers"])
    assert d["choices"]["300"]["nearest_drain_medium"] == "flash"
    assert d["choices"]["3600"]["nearest_drain_medium"] == "flash"
    assert any("HDD" in f for f in d["flags"])


def test_cli_model_prefix_table_json_and_plot(tmp_path):
    png = tmp_path / "tiers.png"
    r = run("kv", "deepseek-v3", "--prefix-tokens", "32768", "--hold", "5min", "--hold", "1 day", "--json",
            "--plot", str(png))
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["prefix_tokens"] == 32768 and d["prefix_bytes"] > 0 and d["recompute_usd"] > 0
    assert set(d["choices"]) == {"300", "86400"}
    assert png.stat().st_size > 20_000 and png.read_bytes()[:4] == b"\x89PNG"
    r = run("kv", "deepseek-v3", "--prefix-tokens", "32768", "--price-date", "2025-09")
    assert r.exit_code == 0, r.output
    assert "recompute instead" in r.stdout and "drain-time rule" in r.stdout


@pytest.mark.parametrize("args,needles", [
    (("deepsek-v3",), ("unknown model", "deepseek-v3")),
    (("deepseek-v3", "--on", "hgx-h10"), ("unknown system", "hgx-h100")),
    (("--hold", "-5min"), ("--hold must be a positive time",)),
    (("--hold", "5 parsecs"), ("unknown unit",)),
    (("--price-date", "last year"), ("is not YYYY",)),
    (("deepseek-v3", "--prefix-tokens", "0"), ("--prefix-tokens",)),
])
def test_cli_bad_input_is_one_line(args, needles):
    _one_line_error(run("kv", *args), *needles)
