"""Price sheets in the catalog, and `tokenmath price`: a workload's cost on rented chips beside an API's charge.

Catalog checks: every sheet loads, every price has a source and a date, the ledger's price ratios hold
exactly (A1, A8, A9, FM1). Forward checks: the formulas' invariants, the report's internal consistency,
a golden derivation, and the CLI including bad input.
"""

from __future__ import annotations

import json

import pytest
from clirun import one_line_error as _one_line_error
from clirun import run
from hypothesis import given as hgiven
from hypothesis import assume, settings
from hypothesis import strategies as st

from tokenmath.core.load import (
    CatalogError,
    load_model,
    load_offer,
    load_price_sheet,
    load_system,
    names,
    price_sheet_dates,
    providers,
)
from tokenmath.economics.pricing import api_usd, margin, price_workload, serving_usd
from tokenmath.core.pricing_records import date_key

SHEETS = names("prices")
PRICE_FIELDS = ("input_per_mtok", "output_per_mtok", "cache_read_per_mtok", "cache_write_per_mtok",
                "cache_write_5m_per_mtok", "cache_write_1h_per_mtok", "cache_storage_per_mtok_hour",
                "batch_discount", "context_window_tokens", "cache_lifetimes_s")


# ---- catalog ------------------------------------------------------------------------------------------

def test_every_provider_in_the_reference_has_sheets():
    assert {"anthropic", "openai", "google", "deepseek", "moonshot", "xai", "alibaba", "minimax"} <= set(providers())
    assert len(price_sheet_dates("deepseek")) >= 3  # a provider may have several dates


def _figures(sheet):
    """(offer id, dotted path, value) of every figure a sheet sets."""
    for oid, o in sheet.offers.items():
        for f in PRICE_FIELDS:
            v = getattr(o, f)
            if v not in (None, ()):
                yield oid, f, v
        for key, b in o.long_context.items():
            for f, v in b.model_dump().items():
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    yield oid, f"long_context.{key}.{f}", v
        for key, t in o.service_tiers.items():
            for f, v in t.model_dump().items():
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    yield oid, f"service_tiers.{key}.{f}", v


@pytest.mark.parametrize("name", SHEETS)
def test_every_price_figure_has_a_source_and_a_date(name):
    provider, date = name.split("/")
    sheet = load_price_sheet(provider, date)
    assert sheet.provider == provider and sheet.date == date and sheet.name == name
    date_key(sheet.date)
    assert sheet.source and sheet.display_name
    for oid, o in sheet.offers.items():
        assert o.source.strip(), f"{name}: {oid} has no source"
        assert o.as_of, f"{name}: {oid} does not say when its prices held"
        assert o.confidence, f"{name}: {oid} has no confidence"
    n = 0
    for oid, path, v in _figures(sheet):
        assert sheet.figure_source(oid, path).strip(), f"{name}: {oid}.{path} has no source"
        n += 1
    assert n > 0
    for key in sheet.estimates:
        assert sheet.sources.get(key), f"{name}: estimate {key} needs its own source"


@pytest.mark.parametrize("name", SHEETS)
def test_prices_are_sane(name):
    sheet = load_price_sheet(*name.split("/"))
    for oid, o in sheet.offers.items():
        assert 0 < o.input_per_mtok < 100
        if o.cache_read_per_mtok is not None:
            assert o.cache_read_per_mtok <= o.input_per_mtok  # a hit never costs more than a miss
        for b in o.bands:
            assert b.above_tokens >= 1000
            if b.input_per_mtok is not None:
                assert b.input_per_mtok >= o.input_per_mtok  # long context never cheaper
        for t in o.service_tiers.values():
            assert t.price_multiple or t.input_per_mtok or t.output_per_mtok
        if o.catalog_model:
            assert o.catalog_model in names("models"), f"{name}: {oid} names unknown model {o.catalog_model}"


def test_ledger_price_ratios_exactly():
    _, _, gem = load_offer("google/gemini-3.1-pro")
    band = gem.band_for(250_000)
    assert band.input_per_mtok / gem.input_per_mtok == 2.0  # A1: input x2.0
    assert band.output_per_mtok / gem.output_per_mtok == 1.5  # A1: output x1.5
    assert gem.band_for(200_000) is None  # "over 200K": exactly 200K is the base band
    _, _, opus = load_offer("anthropic/claude-opus-4.6")
    fast = opus.service_tiers["fast"]
    assert fast.price_multiple == 6.0 and fast.speed_multiple == 2.5  # FM1
    assert fast.input_per_mtok / opus.input_per_mtok == fast.output_per_mtok / opus.output_per_mtok == 6.0
    assert opus.cache_write_5m_per_mtok / opus.input_per_mtok == 1.25  # A9
    assert opus.cache_write_1h_per_mtok / opus.input_per_mtok == 2.0
    assert opus.cache_lifetimes_s == (300.0, 3600.0)
    for ref in ("anthropic/claude-opus-4.6", "openai/gpt-5", "google/gemini-3.1-pro"):  # A8
        o = load_offer(ref)[2]
        assert o.cache_read_per_mtok / o.input_per_mtok == pytest.approx(0.1)
    ds = load_offer("deepseek/deepseek-chat", "2025-02-08")[2]
    assert ds.cache_read_per_mtok / ds.input_per_mtok == pytest.approx(0.26, abs=0.005)


def test_latest_sheet_is_the_default():
    for p in providers():
        dates = price_sheet_dates(p)
        assert load_price_sheet(p).date == dates[-1]
        assert [date_key(d) for d in dates] == sorted(date_key(d) for d in dates)
    # an offer comes from the latest sheet that lists it; an older one can be named
    assert load_offer("anthropic/claude-opus-4.6")[0].date == "2026-03-13"
    assert load_offer("anthropic/claude-opus-4.6", "2026-02")[2].long_context  # the 1M-beta premium
    assert load_offer("deepseek/deepseek-chat")[0].date == "2025-09-29"


@pytest.mark.parametrize("ref,date,needle", [
    ("antropic/claude-opus-4.6", None, "did you mean anthropic"),
    ("anthropic/claude-opus", None, "did you mean claude-opus"),
    ("anthropic", None, "expected PROVIDER/OFFER"),
    ("anthropic/claude-opus-4.6", "2025-11", "it is on 2026-02, 2026-03-13"),
])
def test_unknown_offers_get_suggestions(ref, date, needle):
    with pytest.raises(CatalogError, match=needle):
        load_offer(ref, date)


# ---- forward: formulas -----------------------------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@hgiven(h=st.floats(0, 1), h2=st.floats(0, 1), N_in=st.floats(1, 1e6), N_out=st.floats(0, 1e5),
        cp=st.floats(0.001, 100), cd=st.floats(0.001, 100), u=st.floats(0.01, 1))
def test_serving_cost_invariants(h, h2, N_in, N_out, cp, cd, u):
    lo, hi = sorted((h, h2))
    assert serving_usd(hi, N_in, cp, N_out, cd, u) <= serving_usd(lo, N_in, cp, N_out, cd, u) + 1e-15  # hits save
    assert serving_usd(h, N_in, cp, N_out, cd, u / 2) == pytest.approx(2 * serving_usd(h, N_in, cp, N_out, cd, u))


@settings(max_examples=60, deadline=None)
@hgiven(h=st.floats(0, 1), N_in=st.floats(1, 1e6), N_out=st.floats(0, 1e5), p_in=st.floats(0.01, 50),
        read=st.floats(0, 1), ratio=st.floats(1, 10), serve=st.floats(1e-9, 10))
def test_api_charge_and_margin(h, N_in, N_out, p_in, read, ratio, serve):
    a = api_usd(h, N_in, p_in, read * p_in, N_out, ratio * p_in)
    assert a <= api_usd(0.0, N_in, p_in, read * p_in, N_out, ratio * p_in) * (1 + 1e-12)  # a hit never costs more
    assume(a > 0)  # all cached with free reads and no output: nothing charged, no margin (price_workload omits it)
    assert margin(serve, a) == pytest.approx(1 - serve / a)
    assert margin(a, a) == pytest.approx(0.0)


GOLDEN_API = """\
api_usd = ((1 − h) · N_in · p_in + h · N_in · p_read + N_out · p_out) / 1e6  = $0.00089
        = ((1 − 50.0 %) · 2,000 tok · $0.270 + 50.0 % · 2,000 tok · $0.0700 + 500 tok · $1.10) / 1e6
sources:
  h, N_in, N_out: given
  p_in, p_read, p_out: catalog/prices/deepseek/2025-02-08.yaml: api-docs.deepseek.com/quick_start/pricing-details-usd ; deepseek-apk.com/blogs/125 ; github simonw/llm-prices data/deepseek.json (api_prices.csv, as of 2025-02-08..2025-09-05, high)"""


@pytest.fixture(scope="module")
def report():
    return price_workload(load_model("deepseek-v3"), load_system("hgx-h100"), input_len=2000, output_len=500,
                          cache_hit=0.5, utilisation=0.6, offers=["deepseek/deepseek-chat@2025-02-08"], explain=True)


def test_golden_api_charge_derivation(report):
    assert report.offers[0]["_q"]["api_usd"].explain() == GOLDEN_API


def test_report_is_consistent(report):
    v = report.value
    assert v("serving.usd_per_request") == pytest.approx(v("serving.prefill_usd") + v("serving.decode_usd"))
    assert v("serving.prefill_usd") == pytest.approx(0.5 * 2000 * v("serving.prefill_usd_per_mtok") / 1e6 / 0.6)
    assert v("serving.decode_usd") == pytest.approx(500 * v("serving.decode_usd_per_mtok") / 1e6 / 0.6)
    assert 1 <= v("serving.decode_batch") <= v("serving.max_batch_fits")
    assert report.G % 8 == 0  # whole HGX domains: 671 GB of FP8 weights need two
    o = report.offers[0]
    assert o["api_usd_per_request"] == pytest.approx((1000 * 0.27 + 1000 * 0.07 + 500 * 1.1) / 1e6)
    assert o["margin"] == pytest.approx(1 - v("serving.usd_per_request") / o["api_usd_per_request"])
    assert o["markup"] == pytest.approx(o["api_usd_per_request"] / v("serving.usd_per_request"))


def test_cache_hits_skip_prefill_and_idle_hardware_costs_more():
    m, s = load_model("deepseek-v3"), load_system("hgx-h100")
    kw = dict(input_len=2000, output_len=500, offers=[])
    full = price_workload(m, s, cache_hit=1.0, **kw)
    assert full.value("serving.prefill_usd") == 0
    a = price_workload(m, s, utilisation=1.0, **kw).value("serving.usd_per_request")
    b = price_workload(m, s, utilisation=0.5, **kw).value("serving.usd_per_request")
    assert b == pytest.approx(2 * a)


def test_default_offers_are_those_serving_the_model():
    r = price_workload(load_model("deepseek-v3"), load_system("hgx-h100"), input_len=1000, output_len=200)
    assert r.offers and all(o["serves"] == "deepseek-v3" for o in r.offers)


def test_long_context_band_is_billed():
    r = price_workload(load_model("llama-3.1-8b"), load_system("hgx-h100"), input_len=210_000, output_len=1000,
                       offers=["google/gemini-3.1-pro"])
    o = r.offers[0]
    assert o["band"] == "prompt > 200,000 tokens" and (o["input_per_mtok"], o["output_per_mtok"]) == (4.0, 18.0)


# ---- CLI ----------------------------------------------------------------------------------------------------

def test_cli_json_and_table():
    r = run("price", "deepseek-v3", "--on", "hgx-h100", "--input-len", "2000", "--output-len", "500",
            "--cache-hit", "0.5", "--utilisation", "0.6", "--offer", "deepseek/deepseek-chat@2025-02-08", "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["serving"]["usd_per_request"] > 0 and d["offers"][0]["margin"] < 1
    assert d["workload"] == {"input_tokens": 2000, "output_tokens": 500, "cache_hit": 0.5, "utilisation": 0.6}
    r = run("price", "deepseek-v3", "--on", "hgx-h100", "--explain")
    assert r.exit_code == 0, r.output
    assert "what APIs charge" in r.stdout and "serve_usd = ((1 − h)" in r.stdout and "margin = 1 − serve_usd" in r.stdout


@pytest.mark.parametrize("args,needles", [
    (("deepseek-v4", "--on", "hgx-h100"), ("unknown model",)),
    (("deepseek-v3", "--on", "hgx-h100", "--offer", "deepsek/deepseek-chat"), ("unknown provider", "deepseek")),
    (("deepseek-v3", "--on", "hgx-h100", "--offer", "deepseek/deepseek-caht"), ("did you mean deepseek-chat",)),
    (("deepseek-v3", "--on", "hgx-h100", "--offer", "alibaba/qwen3-max"), ("priced in CNY",)),
    (("deepseek-v3", "--on", "hgx-h100", "--cache-hit", "1.5"), ("--cache-hit",)),
    (("deepseek-v3", "--on", "hgx-h100", "--utilisation", "0"), ("--utilisation",)),
    (("deepseek-v3", "--on", "hgx-h100", "--input-len", "0"), ("--input-len",)),
    (("deepseek-v3", "--on", "hgx-h100", "--batch", "10000000"), ("does not fit",)),
    (("kimi-k2", "--on", "hgx-h100", "--chips", "8"), ("does not fit",)),
])
def test_cli_bad_input_is_one_line(args, needles):
    _one_line_error(run("price", *args), *needles)


def test_price_holds_the_weights_serve_holds_and_names_its_split():
    """DeepSeek-V3 FP8 under its default split (attention data-parallel: every chip holds the non-expert weights)
    does not fit on 8 H100 — `serve` runs attention tensor-parallel there — so `price` prices 'TP8 EP8' (the
    non-expert weights once; of the engines' splits that fit, the cheaper request than TP8), not the default split
    with HBM that counted a single copy of the weights; and it names the split it priced (probe 11R)."""
    from tokenmath.core.load import load_model, load_system
    from tokenmath.economics.pricing import price_workload
    m, s = load_model("deepseek-v3"), load_system("hgx-h100")
    r = price_workload(m, s, input_len=1000, output_len=200, offers=[])
    assert r.G == 8 and r.to_dict()["serving"]["split"] == "TP8 EP8"
    mem = json.loads(run("serve", "deepseek-v3", "--on", "hgx-h100", "--split", "TP8 EP8", "--context", "1200",
                         "--json").output)["memory"]
    room = (mem["capacity_bytes"] - mem["weights_bytes"]) / (mem["kv_bytes"] / 128)  # serve's sequences that fit
    assert abs(r.to_dict()["serving"]["max_batch_fits"] - room) <= 1


def test_price_keeps_the_cheapest_of_the_engines_splits():
    """Probe 11AB: `price` ran an MoE on attention data-parallel, or on 'TP EP' where that did not fit; it now prices
    each split an engine runs that holds the batch (serving.default_split.engine_splits) and keeps the cheapest
    request, naming them. DeepSeek-V3 on 8 H200 at 2,500 tokens: attention data-parallel holds 2,303 sequences, the
    tensor-parallel splits 3,063, so a batch of 3,000 is priced on one of those (it was refused)."""
    from tokenmath.core.load import load_model, load_system
    from tokenmath.economics.pricing import price_workload
    m, s = load_model("deepseek-v3"), load_system("hgx-h200")
    r = price_workload(m, s, input_len=2000, output_len=500, offers=[])
    said = [a for a in r.assumptions if a.startswith("split ")]
    assert len(said) == 1 and all(x in said[0] for x in ("TP8 $", "TP8 EP8 $", "TP1 attention-DP8 EP8 $"))
    assert said[0].startswith(f"split {r.to_dict()['serving']['split']}: the cheapest request")
    big = price_workload(m, s, input_len=2000, output_len=500, offers=[], batch=3000)
    assert big.to_dict()["serving"]["split"] in ("TP8", "TP8 EP8")
    _one_line_error(run("price", "deepseek-v3", "--on", "hgx-h200", "--batch", "3100"), "at most 3,063 sequences")
