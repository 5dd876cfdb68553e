"""Prediction intervals: split-conformal groups, honest coverage, and the keys serve and validate expose."""

import json

import numpy as np
import pytest
from clirun import run

from tokenmath.core.load import load_intervals
from tokenmath.measure.intervals import coverage, derive, relabel


def _rows(n_clusters=40, per=5, between=0.15, within=0.05, seed=0, key=("hopper", "run", "fp8")):
    rng = np.random.default_rng(seed)
    out = []
    for c in range(n_clusters):
        off = rng.normal(0, between)
        for i in range(per):
            out.append({"key": key, "cluster": f"c{c}", "r": off + rng.normal(0, within), "id": f"{c}-{i}"})
    return out


def test_left_out_cluster_coverage_is_near_nominal_for_exchangeable_clusters():
    cov = coverage(_rows())
    assert 0.7 <= cov["left_out_cluster"] <= 0.95
    assert cov["in_sample"] >= cov["left_out_cluster"] - 0.05


def test_a_group_with_few_clusters_is_wider_than_its_parent_spread_alone():
    rows = _rows() + _rows(n_clusters=2, per=3, seed=1, key=("hopper", "decode", "fp8"))
    t = derive(rows)
    big, small = t["hopper|run|fp8"], t["hopper|decode|fp8"]
    assert small["n"] == 6 and big["n"] == 200
    assert small["hi"] - small["lo"] > 0.5 * (big["hi"] - big["lo"])  # borrows the parent's spread
    assert "*|*|*" in t and "hopper|*|*" in t


def test_a_small_decode_group_borrows_from_decode_rows_not_from_ttft_rows_of_its_format():
    decode = _rows(n_clusters=30, seed=2, key=("hopper", "decode", "fp8"))
    ttft = _rows(n_clusters=30, between=1.0, seed=3, key=("hopper", "ttft", "bf16"))
    small = _rows(n_clusters=2, per=3, seed=4, key=("hopper", "decode", "bf16"))
    t = derive(decode + ttft + small)
    g = t["hopper|decode|bf16"]
    assert g["hi"] - g["lo"] < 0.5 * (t["hopper|ttft|bf16"]["hi"] - t["hopper|ttft|bf16"]["lo"])


def test_a_parent_holding_only_the_group_s_own_rows_is_skipped():
    rows = _rows() + _rows(n_clusters=1, per=1, seed=5, key=("hopper", "prefill", "fp4"))
    t = derive(rows)
    assert t["hopper|prefill|fp4"]["hi"] > t["hopper|prefill|fp4"]["lo"]  # not one row's residual twice


def test_spec_sheet_groups_are_filed_apart():
    t = derive(relabel(_rows(), "spec-sheet"))
    assert "spec-sheet|run|fp8" in t and not any(k.startswith("hopper") for k in t)


def test_stored_intervals_widen_for_chips_without_measured_kernels():
    iv = load_intervals()
    assert iv.nominal == pytest.approx(0.8)
    _, hop = iv.group("hopper", "decode", "fp8")
    _, spec = iv.group("", "decode", "fp8")  # an AMD/TPU/Trainium chip: spec-sheet priors
    assert spec.hi - spec.lo > hop.hi - hop.lo
    assert iv.group("hopper", "decode", "fp6")[0].startswith("hopper|")  # unknown precision: its parent group


def test_serve_json_gives_intervals_around_the_prediction():
    d = json.loads(run("serve", "llama-3.1-70b", "--on", "hgx-h100", "--batch", "64", "--json").stdout)
    for ph in ("prefill", "decode"):
        lo, hi = d[ph]["tokens_per_s_interval"]
        assert lo < d[ph]["tokens_per_s"] < hi
        t_lo, t_hi = d[ph]["step_time_s_interval"]
        assert t_lo < d[ph]["step_time_s"] < t_hi
        assert "interval_group" in d[ph]
    spec = json.loads(run("serve", "llama-3.1-70b", "--on", "hgx-h100", "--basis", "spec", "--json").stdout)
    assert "tokens_per_s_interval" not in spec["decode"]  # a bound has no interval: omitted, not null


def test_validate_json_reports_out_of_sample_coverage():
    d = json.loads(run("validate", "--group", "BS1", "--json").stdout)
    s = d["summary"]
    assert 0 <= s["interval_coverage"] <= 1 and s["intervals"]["clusters"] >= 2
    row = d["rows"][0]
    assert row["interval"][0] < row["predicted"] < row["interval"][1] and "interval_group" in row


def test_catalog_lists_the_interval_table():
    r = run("catalog", "list")
    assert r.exit_code == 0 and "prediction intervals" in r.stdout and "serving" in r.stdout


def test_simulate_rates_scale_alike_and_times_invert_them():
    """A throughput's interval is a rate's ([x·e^lo, x·e^hi]): the run's output rate and its rate per chip differ only
    by the chip count, so their intervals are the same factors of their points; a time's is the inverse (TPOT against
    per-user speed). `output_tokens_per_s` ends in `_s` and was read as a time (×0.77–2.6 beside ×0.39–1.3)."""
    d = json.loads(run("simulate", "llama-3.1-70b", "--on", "hgx-h100", "-C", "16", "--isl", "1024", "--osl", "128",
                       "-n", "64", "--json").stdout)
    factors = {k: [e / (d[k]["mean"] if isinstance(d[k], dict) else d[k]) for e in d[f"{k}_interval"]]
               for k in ("output_tokens_per_s", "tokens_per_s_per_chip", "tokens_per_s_per_user", "tpot_s")}
    assert factors["output_tokens_per_s"] == pytest.approx(factors["tokens_per_s_per_chip"])
    assert factors["output_tokens_per_s"][0] < 1 < factors["output_tokens_per_s"][1]
    lo, hi = factors["tokens_per_s_per_user"]
    assert factors["tpot_s"] == pytest.approx([1 / hi, 1 / lo])


def test_a_generation_of_few_clusters_borrows_until_its_interval_is_a_conformal_one():
    """Three (model, hardware) clusters, each measured at two formats, make every group of that generation: the
    parent's other rows were the same clusters' (no new draw), so nothing was lent and the 80 % interval was the
    three clusters' own range — A100's ×0.82–1.16, narrower than H100's ×0.46–1.29 from 168 rows. With fewer
    than n_min = 9 effective rows no order statistic is a conformal bound: the group borrows from a parent with other
    clusters, as wide as that spread says."""
    many = _rows(n_clusters=40, between=0.5, key=("hopper", "decode", "fp8"))
    few = [x for fmt in ("bf16", "int8") for x in _rows(n_clusters=3, per=2, between=0.03, seed=7,
                                                       key=("ampere", "decode", fmt))]
    few = [{**x, "id": f"{x['key'][2]}-{x['id']}"} for x in few]
    t = derive(many + few)
    small, big = t["ampere|decode|bf16"], t["hopper|decode|fp8"]
    own = [x["r"] for x in few]
    assert small["hi"] - small["lo"] > 2 * (max(own) - min(own))  # not the few clusters' own range
    assert small["hi"] - small["lo"] >= 0.8 * (big["hi"] - big["lo"])


def test_simulate_gives_every_time_and_rate_its_interval_percentiles_in_order():
    """Every mean and percentile `simulate` predicts carries its 80 % interval (end-to-end, ITL and the request rate
    had none; percentiles had none); p50 ≤ p90 ≤ p99 holds for the points and for each end of their intervals."""
    d = json.loads(run("simulate", "llama-3.1-8b", "--on", "mi300x-8", "-G", "1", "-C", "24", "--isl", "2048",
                       "--osl", "128", "-n", "96", "--json").stdout)
    for k in ("ttft_s", "tpot_s", "itl_s", "e2e_s", "requests_per_s", "output_tokens_per_s", "tokens_per_s_per_user"):
        x = d[k]["mean"] if isinstance(d[k], dict) else d[k]
        lo, hi = d[f"{k}_interval"]
        assert 0 < lo < x < hi, k
    for k in ("ttft_s", "tpot_s", "e2e_s"):
        s = d[k]
        for p in ("p50", "p90", "p99"):
            assert 0 < s[f"{p}_interval"][0] <= s[p] <= s[f"{p}_interval"][1], (k, p)
        for end in (0, 1):
            assert s["p50_interval"][end] <= s["p90_interval"][end] <= s["p99_interval"][end], k
    assert d["interval_groups"]["ttft"].startswith("spec-sheet|ttft|")


def test_serve_speculative_decode_carries_the_decode_group_s_interval():
    """`serve --mtp`'s speculative rate, step and TPOT carry intervals (they had none), the decode group's; the rate's
    ends are τ·B over the step's ends, and the human line states it."""
    args = ("serve", "deepseek-v3", "--on", "hgx-h200", "--precision", "fp8", "--mtp", "1", "--acceptance", "0.8",
            "-B", "32")
    sp = json.loads(run(*args, "--json").stdout)["decode"]["speculative"]
    for k in ("tokens_per_s", "step_time_s", "tpot_s"):
        lo, hi = sp[f"{k}_interval"]
        assert 0 < lo < sp[k] < hi, k
    n = sp["tokens_per_step"] * 32
    assert sp["tokens_per_s_interval"] == pytest.approx([n / sp["step_time_s_interval"][1],
                                                         n / sp["step_time_s_interval"][0]])
    line = next(x for x in run(*args).stdout.splitlines() if x.startswith("speculative decoding"))
    assert "80 % interval" in line


def test_price_costs_carry_intervals_from_serve_s_groups():
    """`price`'s costs are step times at a chip-hour price: each phase's carries serve's group interval (they had
    none), the request's spans the sum of the phases' ends, and a margin its range; a bound (spec basis) none."""
    d = json.loads(run("price", "deepseek-v3", "--on", "hgx-h200", "--precision", "fp8", "--json").stdout)
    s = d["serving"]
    for k in ("prefill_usd_per_mtok", "decode_usd_per_mtok", "prefill_usd", "decode_usd", "usd_per_request"):
        lo, hi = s[f"{k}_interval"]
        assert 0 < lo < s[k] < hi, k
    assert s["usd_per_request_interval"] == pytest.approx(
        [s["prefill_usd_interval"][0] + s["decode_usd_interval"][0],
         s["prefill_usd_interval"][1] + s["decode_usd_interval"][1]])
    o = d["offers"][0]
    assert o["margin_interval"][0] < o["margin"] < o["margin_interval"][1]
    spec = json.loads(run("price", "deepseek-v3", "--on", "hgx-h200", "--precision", "fp8", "--basis", "spec",
                          "--json").stdout)
    assert not any(k.endswith("_interval") for k in spec["serving"])


def test_sweep_points_carry_serve_s_interval_at_the_same_batch_and_context():
    """Each grid point of `sweep` carries its 80 % interval (there were none), and at the same batch and context it is
    serve's decode interval, rate and step time alike; on the spec basis (a bound) none."""
    sw = json.loads(run("sweep", "llama-3.1-70b", "--on", "mi300x-8", "-B", "1,64", "-S", "4096,8192",
                        "--json").stdout)["points"]
    sv = json.loads(run("serve", "llama-3.1-70b", "--on", "mi300x-8", "-B", "64", "-S", "4096", "--json").stdout)
    assert sw["tokens_per_s_per_chip_interval"][1][0] == pytest.approx(sv["decode"]["tokens_per_s_per_chip_interval"])
    assert sw["step_time_s_interval"][1][0] == pytest.approx(sv["decode"]["step_time_s_interval"])
    for k in ("step_time_s", "tokens_per_s_per_chip", "usd_per_mtok"):
        for row, ivs in zip(sw[k], sw[f"{k}_interval"]):
            assert all(0 < lo < x < hi for x, (lo, hi) in zip(row, ivs)), k
    spec = json.loads(run("sweep", "llama-3.1-70b", "--on", "mi300x-8", "-B", "1,64", "--basis", "spec",
                          "--json").stdout)["points"]
    assert "step_time_s_interval" not in spec


def test_frontier_points_carry_intervals_as_its_answer_does():
    """Every frontier point carries the intervals its answer carries (only the answer had them, and only when asked
    for with --at-user-speed); the groups are named once; the answer's are its point's."""
    d = json.loads(run("frontier", "llama-3.1-70b", "--on", "hgx-h100", "--isl", "1024", "--osl", "1024",
                       "--at-user-speed", "30", "--no-confirm", "--json").stdout)
    assert set(d["interval_groups"]) == {"ttft", "decode", "run"}
    for p in d["points"]:
        for k in ("tokens_per_s_per_chip", "output_tokens_per_s", "tokens_per_s_per_user", "ttft_s", "tpot_s"):
            lo, hi = p[f"{k}_interval"]
            assert 0 < lo < p[k] < hi, k
    at = d["at"]
    assert at["tokens_per_s_per_chip_interval"][1] / at["tokens_per_s_per_chip"] == pytest.approx(
        d["points"][0]["tokens_per_s_per_chip_interval"][1] / d["points"][0]["tokens_per_s_per_chip"])


def test_a_phase_a_generation_has_no_rows_of_reads_that_phase_over_every_generation():
    """A100 rows are decode steps only: its TTFT under load read `ampere|*|bf16`, the spread of decode steps, where
    TTFTs miss by several times more on every generation measured. It reads `*|ttft|bf16` now; a phase the generation
    has rows of keeps its own group."""
    from tokenmath.core.records import Intervals

    ttft = _rows(n_clusters=30, between=1.0, seed=3, key=("hopper", "ttft", "bf16"))
    decode = _rows(n_clusters=30, between=0.1, seed=2, key=("hopper", "decode", "bf16"))
    a100 = _rows(n_clusters=12, per=2, between=0.05, seed=8, key=("ampere", "decode", "bf16"))
    t = derive(ttft + decode + [{**x, "id": f"a{x['id']}", "cluster": f"a{x['cluster']}"} for x in a100])
    first = lambda *key: next(k for k in Intervals.lookup_order(*key) if k in t)  # noqa: E731
    assert first("ampere", "ttft", "bf16") == "*|ttft|bf16"
    assert first("ampere", "decode", "bf16") == "ampere|decode|bf16"
    assert first("hopper", "ttft", "fp8") == "hopper|ttft|*"
    g = t["*|ttft|bf16"]
    assert g["hi"] - g["lo"] > 3 * (t["ampere|*|bf16"]["hi"] - t["ampere|*|bf16"]["lo"])


def test_cadence_model_step_carries_serve_s_decode_interval():
    """`cadence MODEL --on SYSTEM` predicts a decode step and from it the latencies and throughput: they carry serve's
    decode interval (none before); a given --step-ms is no prediction and has none."""
    d = json.loads(run("cadence", "llama-3.1-70b", "--on", "hgx-h100", "--json").stdout)
    sv = json.loads(run("serve", "llama-3.1-70b", "--on", "hgx-h100", "--json").stdout)["decode"]
    assert d["step_time_s"] == pytest.approx(sv["step_time_s"])
    assert d["step_time_s_interval"] == pytest.approx(sv["step_time_s_interval"])
    assert d["worst_latency_s_interval"] == pytest.approx([2 * x for x in d["step_time_s_interval"]])
    lo, hi = d["tokens_per_s_interval"]
    t_lo, t_hi = d["step_time_s_interval"]
    assert [lo, hi] == pytest.approx([128 / t_hi, 128 / t_lo])
    assert d["trains_per_s_interval"] == pytest.approx([1 / t_hi, 1 / t_lo])
    assert "step_time_s_interval" not in json.loads(run("cadence", "--step-ms", "20", "--json").stdout)


def test_phases_times_and_costs_carry_serve_s_intervals():
    """`phases` predicts each phase's step, chip-seconds and cost per token: each carries serve's group interval (none
    before), the request's cost the phases' ends summed; the spec basis (a bound) none."""
    d = json.loads(run("phases", "llama-3.1-70b", "--on", "hgx-h100", "--json").stdout)
    for ph in ("prefill", "decode"):
        for k in ("step_time_s", "chip_s_per_token", "usd_per_mtok"):
            lo, hi = d[f"{ph}.{k}_interval"]
            assert 0 < lo < d[f"{ph}.{k}"] < hi, (ph, k)
        assert d[f"{ph}.step_time_s_interval"][1] / d[f"{ph}.step_time_s"] == pytest.approx(
            d[f"{ph}.usd_per_mtok_interval"][1] / d[f"{ph}.usd_per_mtok"])
    lo, hi = d["usd_per_request_interval"]
    assert 0 < lo < d["usd_per_request"] < hi
    spec = json.loads(run("phases", "llama-3.1-70b", "--on", "hgx-h100", "--basis", "spec", "--json").stdout)
    assert "decode.step_time_s_interval" not in spec


def test_spec_sheet_groups_are_never_narrower_than_a_measured_generation_s():
    """The spec-sheet groups pool every generation's residuals and add the prior-swap shift; the pool can be narrower
    than one generation's group (Hopper's TTFTs miss far more than Blackwell's), so an AMD or TPU TTFT had a narrower
    interval (×27 high/low) than an H100's (×93). Each spec-sheet bound is now at least the widest measured one."""
    from tokenmath.measure.intervals import widen

    wide = _rows(n_clusters=20, between=1.5, seed=9, key=("hopper", "ttft", "bf16"))
    tight = _rows(n_clusters=60, between=0.2, seed=10, key=("blackwell", "ttft", "bf16"))
    measured = derive(wide + tight)
    shifts = [{**x, "r": 0.01 * (i % 3 - 1)} for i, x in enumerate(wide + tight)]
    spec = widen(derive(relabel(wide + tight, "*")), shifts, measured=measured)["spec-sheet|ttft|bf16"]
    hop = measured["hopper|ttft|bf16"]
    assert spec["lo"] <= hop["lo"] and spec["hi"] >= hop["hi"]
    pooled_only = widen(derive(relabel(wide + tight, "*")), shifts)["spec-sheet|ttft|bf16"]
    assert pooled_only["hi"] - pooled_only["lo"] < hop["hi"] - hop["lo"]  # what it was


def test_a_generation_s_decode_group_borrows_decode_rows_of_other_generations_not_its_own_ttft_rows():
    """A100's decode groups rest on three clusters that hold no other phase: the chain went g|decode|* → g|*|* →
    *|*|*, so they borrowed the spread of every phase pooled (TTFTs under load included: ×0.24–1.79 beside H100's
    decode ×0.46–1.29). The phase's rows of every generation come first now (*|decode|*), as in the lookup."""
    hop_decode = _rows(n_clusters=30, between=0.1, seed=2, key=("hopper", "decode", "bf16"))
    hop_ttft = _rows(n_clusters=30, between=1.0, seed=3, key=("hopper", "ttft", "bf16"))
    hop_ttft = [{**x, "id": f"t{x['id']}", "cluster": f"t{x['cluster']}"} for x in hop_ttft]
    a100 = _rows(n_clusters=3, per=2, between=0.05, seed=8, key=("ampere", "decode", "bf16"))
    a100 = [{**x, "id": f"a{x['id']}", "cluster": f"a{x['cluster']}"} for x in a100]
    t = derive(hop_decode + hop_ttft + a100)
    a, d, tt = t["ampere|decode|bf16"], t["hopper|decode|bf16"], t["hopper|ttft|bf16"]
    assert a["hi"] - a["lo"] < 0.5 * (tt["hi"] - tt["lo"])
    assert a["hi"] - a["lo"] >= 0.8 * (d["hi"] - d["lo"])


def test_place_splits_carry_serve_s_decode_interval():
    """`place` predicts each split's stage step and tokens/s per chip: each carries serve's decode interval (none
    before), the same factors as serve's at that split; the printed verdict gives the chosen split's; spec none."""
    d = json.loads(run("place", "llama-3.1-70b", "--on", "hgx-h100", "--json").stdout)
    sv = json.loads(run("serve", "llama-3.1-70b", "--on", "hgx-h100", "--json").stdout)["decode"]
    assert d["interval_group"] == sv["interval_group"]
    down, up = (x / sv["tokens_per_s"] for x in sv["tokens_per_s_interval"])
    for sp in d["splits"]:
        if "step_time_s" in sp:
            assert sp["tokens_per_s_per_chip_interval"] == pytest.approx([sp["tokens_per_s_per_chip"] * down,
                                                                          sp["tokens_per_s_per_chip"] * up])
            assert sp["step_time_s_interval"] == pytest.approx([sp["step_time_s"] / up, sp["step_time_s"] / down])
    assert "80 % interval:" in run("place", "llama-3.1-70b", "--on", "hgx-h100").stdout
    spec = json.loads(run("place", "llama-3.1-70b", "--on", "hgx-h100", "--basis", "spec", "--json").stdout)
    assert "tokens_per_s_per_chip_interval" not in spec["split"] and "interval_group" not in spec


def test_fastmode_points_and_frontier_carry_serve_s_decode_interval():
    """`fastmode MODEL --on SYSTEM` predicts operating points and a latency–cost frontier: each step, speed and cost
    carries serve's decode interval (none before), the factors sweep's at the same batch; spec none."""
    d = json.loads(run("fastmode", "llama-3.1-70b", "--on", "hgx-h100", "--json").stdout)
    sv = json.loads(run("serve", "llama-3.1-70b", "--on", "hgx-h100", "--json").stdout)["decode"]
    up = sv["step_time_s"] / sv["step_time_s_interval"][0]
    down = sv["step_time_s"] / sv["step_time_s_interval"][1]
    for name, p in d["points"].items():
        assert p["step_time_s_interval"] == pytest.approx([p["step_time_s"] / up, p["step_time_s"] / down]), name
        assert p["tokens_per_s_per_sequence_interval"] == pytest.approx(
            [p["tokens_per_s_per_sequence"] * down, p["tokens_per_s_per_sequence"] * up]), name
        lo, hi = p["usd_per_mtok_interval"]
        assert 0 < lo < p["usd_per_mtok"] < hi
    f = d["frontier"]
    assert f["interval_group"] == sv["interval_group"]
    for k in ("step_time_s", "usd_per_mtok", "chip_hours_per_mtok"):
        assert all(0 < lo < x < hi for x, (lo, hi) in zip(f[k], f[f"{k}_interval"])), k
    assert "80 % interval" in run("fastmode", "llama-3.1-70b", "--on", "hgx-h100").stdout
    spec = json.loads(run("fastmode", "llama-3.1-70b", "--on", "hgx-h100", "--basis", "spec", "--json").stdout)
    assert "step_time_s_interval" not in spec["frontier"] and "step_time_s_interval" not in spec["points"]["fast"]


def test_search_best_rows_carry_serve_s_intervals():
    """`search` predicts each best deployment's steps, rates, times and cost, closed form and simulated: each carries
    the residual group validate keys such a quantity to (none before) — the decode step serve's decode interval, a
    TTFT the ttft group's, a percentile its mean's factors — and the table prints the best row's."""
    args = ("search", "llama-3.1-8b", "--on", "hgx-h100", "--isl", "1000", "--osl", "200", "--slo-tpot", "30ms",
            "--confirm", "1", "--rounds", "1", "-n", "400", "-j", "1")
    b = json.loads(run(*args, "--json").stdout)["best"][0]
    assert set(b["interval_groups"]) == {"prefill", "decode", "ttft", "run"}
    for k in ("decode_step_s", "prefill_step_s", "tokens_per_s_per_chip", "ttft_s", "tpot_s", "usd_per_mtok",
              "sim_ttft_s", "sim_tpot_p90_s", "sim_tokens_per_s_per_chip", "sim_tokens_per_s_per_user"):
        lo, hi = b[f"{k}_interval"]
        assert 0 < lo < b[k] < hi, k
    assert b["sim_ttft_p90_s_interval"][1] / b["sim_ttft_p90_s"] == pytest.approx(
        b["ttft_s_interval"][1] / b["ttft_s"])
    assert b["tokens_per_s_per_chip_interval"][1] * b["usd_per_mtok_interval"][0] == pytest.approx(
        b["tokens_per_s_per_chip"] * b["usd_per_mtok"])  # a cost ∝ 1 / rate: the same group's ends, inverted
    assert "80 % intervals, llama-3.1-8b on hgx-h100" in run(*args).stdout


def test_train_carries_the_held_out_trn_interval():
    """`train` at a published run's MFU prior carries the 80 % interval of catalog/intervals/training.yaml (split-
    conformal on the held-out TRN residuals, one pooled group): MFU a rate, time, chip-hours and cost its inverse
    factors; a given --mfu is no prediction and has none."""
    args = ("train", "llama-3.1-70b", "--on", "hgx-h100", "-G", "1024", "-D", "15T")
    d = json.loads(run(*args, "--json").stdout)
    b = load_intervals("training").groups["*|train|*"]
    assert d["interval_group"].startswith("*|train|*")
    assert d["time_s_interval"] == pytest.approx([d["time_s"] / np.exp(b.hi), d["time_s"] / np.exp(b.lo)])
    assert d["mfu_interval"] == pytest.approx([d["mfu"] * np.exp(b.lo), d["mfu"] * np.exp(b.hi)])
    for k in ("chip_hours", "cost_usd", "time_days"):
        lo, hi = d[f"{k}_interval"]
        assert 0 < lo < d[k] < hi, k
    assert "80 % interval: time" in run(*args).stdout
    assert "time_s_interval" not in json.loads(run(*args, "--mfu", "0.4", "--json").stdout)
