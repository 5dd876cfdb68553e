"""Workloads (closed loop, Poisson, trace files) and `tokenmath simulate` end to end, bad input included."""

import json

import numpy as np
import pytest
from clirun import one_line_error, run

from tokenmath.core.errors import InputError
from tokenmath.core.load import load_engine, load_model, load_priors, load_system
from tokenmath.serving.sim import closed_loop, poisson, read_trace, simulate


def test_poisson_arrivals_have_the_asked_rate_and_are_seeded():
    w = poisson(50.0, 20_000, 100, 50, seed=4)
    assert w.arrival_s[0] == 0 and np.all(np.diff(w.arrival_s) >= 0)
    assert w.n / w.arrival_s[-1] == pytest.approx(50.0, rel=0.03)
    assert np.array_equal(w.arrival_s, poisson(50.0, 20_000, 100, 50, seed=4).arrival_s)


def test_range_ratio_draws_lengths_around_the_mean():
    w = closed_loop(8, 5000, 1000, 200, range_ratio=0.5, seed=1)
    assert w.isl.min() >= 500 and w.isl.max() <= 1500 and w.osl.min() >= 100 and w.osl.max() <= 300
    assert w.isl.mean() == pytest.approx(1000, rel=0.02)


def test_trace_csv_and_jsonl(tmp_path):
    csv = tmp_path / "t.csv"
    csv.write_text("arrival,isl,osl\n0.5,100,20\n0.0,200,10\n1.5,50,5\n")
    w = read_trace(csv)
    assert list(w.isl) == [200, 100, 50] and list(w.arrival_s) == [0.0, 0.5, 1.5]  # sorted, from 0
    js = tmp_path / "t.jsonl"
    js.write_text('{"timestamp": 3, "input_len": 10, "output_len": 4}\n\n{"timestamp": 4, "input_len": 12, "output_len": 5}\n')
    assert list(read_trace(js).osl) == [4, 5]
    lengths = tmp_path / "l.csv"
    lengths.write_text("isl,osl\n100,20\n")
    assert read_trace(lengths, concurrency=4).concurrency == 4
    with pytest.raises(InputError, match="no arrival times"):
        read_trace(lengths)


@pytest.mark.parametrize("text,needle", [
    ("", "is empty"),
    ("arrival,isl,osl\n", "no rows"),
    ("arrival,isl,osl\n0,abc,5\n", ":2: isl 'abc' is not a number"),
    ("arrival,isl,osl\n0,100,5\n1,-3,5\n", ":3: isl '-3' is not a whole number"),
    ("arrival,isl,osl\n0,100,0\n", "osl '0'"),
    ("arrival,isl,osl\n-1,100,5\n", "arrival '-1' is not a time"),
    ("arrival,osl\n0,5\n", ":2: no isl"),
])
def test_malformed_traces_are_refused_with_their_line(tmp_path, text, needle):
    f = tmp_path / "bad.csv"
    f.write_text(text)
    with pytest.raises(InputError, match=needle.replace("(", r"\(")):
        read_trace(f)


def test_malformed_jsonl_line(tmp_path):
    f = tmp_path / "bad.jsonl"
    f.write_text('{"arrival": 0, "isl": 5, "osl": 5}\n{not json}\n')
    with pytest.raises(InputError, match=":2: not a JSON object"):
        read_trace(f)


SIM = ["simulate", "llama-3.1-8b", "--on", "hgx-h100", "--chips", "1"]


def test_simulate_json_has_every_key_the_issue_lists(tmp_path):
    plot = tmp_path / "sim.png"
    r = run(*SIM, "--concurrency", "16", "--requests", "64", "--isl", "512", "--osl", "64", "--slo-ttft", "2s",
            "--slo-tpot", "50ms", "--json", "--plot", plot)
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    for key in ("ttft_s", "tpot_s", "itl_s", "e2e_s"):
        assert [k for k in d[key] if not k.endswith("_interval")] == ["mean", "p50", "p90", "p95", "p99"]
        assert "p99_interval" in d[key]  # each percentile beside its 80 % interval (probe 11AN)
    for key in ("output_tokens_per_s", "tokens_per_s_per_chip", "requests_completed", "goodput", "mean_batch",
                "kv_utilisation"):
        assert key in d
    assert set(d["tokens_per_s_per_user"]) - {"mean_interval", "p50_interval"} == {"mean", "p50"}
    assert d["requests_completed"] == 64 and d["concurrency"] == 16
    # no --engine, no --policy: catalog/engines/default.yaml's scheduling (chunked), the engines' median kernels
    assert d["engine"] == "default" and d["policy"] == load_engine()["policy"] == "chunked" and d["split"] == "TP1"
    assert plot.stat().st_size > 10_000


def test_simulate_table_explain_and_trace(tmp_path):
    r = run(*SIM, "--concurrency", "8", "--requests", "32", "--isl", "256", "--osl", "32", "--policy", "continuous",
            "--explain")
    assert r.exit_code == 0, r.output
    assert "TTFT" in r.stdout and "X = B / (n_d · t_d + s · t_1 + (B − s) · t_p / n_b)" in r.stdout
    f = tmp_path / "trace.jsonl"
    f.write_text("\n".join(json.dumps({"arrival": i * 0.01, "isl": 100 + i, "osl": 10}) for i in range(40)))
    r = run(*SIM, "--workload", f, "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["requests_completed"] == 40


def test_simulate_engine_sets_scheduling_kernels_and_split():
    """--engine reads the engine's scheduler defaults (its policy unless --policy is given) and its measured
    kernels; --split is the replica's, written back as tables write it."""
    args = ["simulate", "deepseek-v3", "--on", "hgx-h200", "-C", "16", "-n", "48", "--isl", "512", "--osl", "32",
            "--json"]
    d = json.loads(run(*args, "--engine", "sglang", "--split", "DEP8").stdout)
    assert (d["engine"], d["policy"], d["split"]) == ("sglang", load_engine("sglang")["policy"], "TP1 attention-DP8 EP8")
    d = json.loads(run(*args, "--engine", "sglang", "--policy", "chunked", "--split", "TP8 EP8").stdout)
    assert (d["policy"], d["split"]) == ("chunked", "TP8 EP8")
    # the engine's kernels: the same run as with the priors already read for that engine (the validation rows'
    # path), and not the engines' median
    m, s = load_model("deepseek-v3"), load_system("hgx-h200")
    kw = dict(concurrency=8, requests=24, isl=512, osl=32, policy="continuous")
    own = simulate(m, s, engine="trtllm", **kw)
    given = simulate(m, s, engine="trtllm", priors=load_priors(s.chip.priors).for_engine("trtllm"), **kw)
    median = simulate(m, s, engine="default", **kw)
    assert own["tpot_s"]["mean"] == given["tpot_s"]["mean"] != median["tpot_s"]["mean"]


def test_simulate_means_carry_the_validation_intervals():
    """Every mean a run predicts carries the 80 % interval of the rows under load of its generation × phase ×
    precision (TTFT from the TTFT rows, TPOT and per-user speed from the decode rows, throughput from the runs), as
    serve's rates do; a spec-basis run is a bound and carries none."""
    m, s = load_model("llama-3.1-70b"), load_system("hgx-h200")
    kw = dict(G=2, concurrency=8, requests=32, isl=512, osl=64, precision="fp8")
    d = simulate(m, s, **kw).to_dict()
    for key in ("ttft_s", "tpot_s", "tokens_per_s_per_user", "output_tokens_per_s", "tokens_per_s_per_chip"):
        x = d[key]["mean"] if isinstance(d[key], dict) else d[key]
        lo, hi = d[f"{key}_interval"]
        assert lo < x < hi, key
    assert d["interval_groups"]["ttft"].startswith("hopper|ttft|fp8")
    assert "ttft_s_interval" not in simulate(m, s, basis="spec", **kw).to_dict()
    r = run("simulate", "llama-3.1-70b", "--on", "hgx-h200", "-G", "2", "-C", "8", "-n", "32", "--isl", "512", "--osl",
            "64", "--precision", "fp8")
    assert "80 % interval of the means" in r.stdout and "hopper|decode|fp8" in r.stdout


@pytest.mark.parametrize("args,needle", [
    (["--rate", "0", "--isl", "10", "--osl", "10"], "--rate"),
    (["--concurrency", "4", "--isl", "10", "--osl", "10", "--engine", "sglng"], "did you mean sglang"),
    (["--concurrency", "4", "--isl", "10", "--osl", "10", "--split", "EP8"], "dense model"),
    (["--concurrency", "4", "--isl", "10", "--osl", "10", "--split", "TP3"], "tensor-parallel ways do not divide"),
    (["--concurrency", "4", "--isl", "10", "--osl", "10", "--split", "TP1 PP2", "--chips", "2"], "pipeline"),
    (["--rate", "-2", "--isl", "10", "--osl", "10"], "--rate"),
    (["--concurrency", "0", "--isl", "10", "--osl", "10"], "--concurrency"),
    (["--concurrency", "4", "--rate", "1", "--isl", "10", "--osl", "10"], "not both"),
    (["--concurrency", "4", "--isl", "0", "--osl", "10"], "--isl"),
    (["--concurrency", "4"], "--isl"),
    (["--isl", "10", "--osl", "10"], "--concurrency"),
    (["--concurrency", "4", "--isl", "10", "--osl", "10", "--policy", "fifo"], "--policy"),
    (["--concurrency", "4", "--isl", "10", "--osl", "10", "--requests", "0"], "--requests"),
    (["--concurrency", "4", "--isl", "10", "--osl", "10", "--slo-ttft", "-1s"], "--slo-ttft"),
    (["--concurrency", "4", "--isl", "10", "--osl", "10", "--prefill-chips", "2"], "disagg"),
    (["--concurrency", "4", "--isl", "10", "--osl", "10", "--mtp", "2"], "--acceptance"),
    (["--concurrency", "4", "--isl", "10", "--osl", "10", "--mtp", "2", "--acceptance", "1.2"], "--acceptance"),
    (["--concurrency", "4", "--isl", "3000000", "--osl", "10"], "KV"),
])
def test_simulate_bad_input_is_one_line(args, needle):
    one_line_error(run(*SIM, *args), needle)


def test_simulate_empty_and_malformed_workload_files_are_one_line(tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    one_line_error(run(*SIM, "--workload", empty), "empty")
    bad = tmp_path / "bad.csv"
    bad.write_text("arrival,isl,osl\n0,10,x\n")
    one_line_error(run(*SIM, "--workload", bad), "bad.csv:2")
    one_line_error(run(*SIM, "--workload", tmp_path / "missing.csv"), "does not exist")


def test_a_prefix_cache_prefills_only_the_uncached_tokens_under_every_policy_but_cadence():
    """with_prefix_hits(h): floor(h·ISL) tokens of each prompt cached (at most ISL − 1); chunked prefill starts after
    them, continuous and disagg steps price the uncached pieces after them; the first token comes sooner, no cache
    is the plain run, and the cadence train refuses in one line."""
    from tokenmath.serving.sim.workload import with_prefix_hits

    w = with_prefix_hits(closed_loop(4, 10, 1000, 10), 1.0)
    assert w.cached.max() == 999 and np.all(w.new_isl == 1)
    m, s = load_model("llama-3.1-8b"), load_system("hgx-h100")
    for policy in ("continuous", "chunked"):
        run = lambda h: simulate(m, s, G=1, concurrency=16, requests=200, isl=8000, osl=100, policy=policy,  # noqa: E731
                                 prefix_hit=h)
        cold, warm = run(0.0), run(0.8)
        assert warm["ttft_s"]["mean"] < 0.5 * cold["ttft_s"]["mean"], policy
        assert run(0.001)["ttft_s"]["mean"] == pytest.approx(cold["ttft_s"]["mean"], rel=0.05), policy
    dis = lambda h: simulate(m, s, G=1, rate=2, requests=100, isl=8000, osl=100, policy="disagg", prefill_chips=1,  # noqa: E731
                             decode_chips=1, prefix_hit=h)
    assert dis(0.8)["ttft_s"]["mean"] < 0.5 * dis(0.0)["ttft_s"]["mean"]
    with pytest.raises(InputError, match="cadence"):
        simulate(m, s, G=1, concurrency=4, requests=20, isl=1000, osl=10, policy="cadence", prefix_hit=0.5)


def test_an_open_loop_capped_at_a_concurrency_sends_an_arrival_when_a_slot_frees():
    """vLLM's '--request-rate R --max-concurrency C': Poisson arrivals, at most C in flight, an arrival past the cap
    sent (and timed) when one finishes; a cap that never binds changes nothing, one that binds holds the batch to C
    and the run's rate below R; a cap on a closed loop is refused."""
    m, s = load_model("llama-3.1-8b"), load_system("hgx-h100")
    run = lambda **kw: simulate(m, s, G=1, rate=40, requests=300, isl=1024, osl=256, policy="chunked", **kw)  # noqa: E731
    free, capped = run(), run(max_concurrency=4)
    assert free["in_flight_mean"] > 8 and capped["in_flight_mean"] <= 4 + 1e-9
    assert capped["requests_per_s"] < 0.8 * free["requests_per_s"] and capped.settings["max_concurrency"] == 4
    loose = run(max_concurrency=10_000)
    assert loose["ttft_s"]["mean"] == pytest.approx(free["ttft_s"]["mean"], rel=1e-9)
    with pytest.raises(InputError, match=r"open loop .*a closed loop's --concurrency \(4\) already"):
        simulate(m, s, G=1, concurrency=4, requests=20, isl=100, osl=10, max_concurrency=8)  # it said '(got 8)'
    with pytest.raises(InputError, match="whole number"):
        run(max_concurrency=0)


def test_workload_line_prints_lengths_in_full():
    """The workload line writes counts as counts: 'ISL 1,000,000', never 1e+06 (probe 11C)."""
    w = closed_loop(4, 8, 1_000_000, 10)
    assert "mean ISL 1,000,000 / OSL 10" in w.describe() and "fixed ISL 1,000,000 / OSL 10" in w.describe()
    assert "1e+06" not in poisson(1.0, 8, 1_000_000, 10).describe()


def test_an_open_loop_past_what_it_serves_says_it_is_saturated():
    """Poisson arrivals at several times what one H100 serves: the wait for the first token grows through the run (by
    λ/μ − 1 seconds a second), so the run says it is saturated rather than reporting a steady state (probe 11G: it
    printed a mean TTFT that grew with --requests and said nothing). Below saturation it says nothing; under
    --max-concurrency the wait before a request is sent counts (the benchmark does not time it, but it grows)."""
    m, s = load_model("llama-3.1-8b"), load_system("hgx-h100")
    kw = dict(G=1, requests=1500, isl=2000, osl=500)
    over = simulate(m, s, rate=60.0, **kw)
    assert over.settings["saturated"] and any(n.startswith("saturated") for n in over.notes)
    assert over["queue_growth"] == pytest.approx(60.0 / over["requests_per_s"] - 1, rel=0.25)
    under = simulate(m, s, rate=4.0, **kw)
    assert not under.settings["saturated"] and abs(under["queue_growth"]) < 0.02 and not under.notes
    capped = simulate(m, s, rate=60.0, max_concurrency=64, **kw)
    assert capped.settings["saturated"] and "before it is sent" in capped.notes[0]
    assert "concurrency" not in over.settings and "saturated" not in simulate(m, s, concurrency=8, **kw).settings
    out = run("simulate", "llama-3.1-8b", "--on", "h100", "--chips", "1", "--rate", "60", "--isl", "2000", "--osl",
              "500", "--requests", "1500")
    assert out.exit_code == 0 and "saturated: the offered" in out.output
