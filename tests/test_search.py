"""Deployment search (issue 15): the same `best` whichever runner, Parquet that DuckDB reads with the
documented columns, SLO-missing configurations never `best`, the memory pruning, and bad input."""

import json

import numpy as np
import pytest

from clirun import one_line_error, run
from tokenmath.core.load import load_engine, load_model, load_priors, load_system
from tokenmath.serving.search import COLUMNS, SearchSpec, confirm_task, search
from tokenmath.serving.search_runners import LocalRunner
from tokenmath.serving.search_space import Target, enumerate_groups

SMALL = ["llama-3.1-8b,qwen3-30b-a3b", "--on", "hgx-h100", "--max-chips", "4", "--isl", "1000", "--osl", "500"]
SLO = ["--slo-ttft", "300ms", "--slo-tpot", "20ms"]


@pytest.fixture(scope="module")
def searched(tmp_path_factory):
    """One small search under SLOs, in this process, with its Parquet file."""
    out = tmp_path_factory.mktemp("search") / "results.parquet"
    r = run("search", *SMALL, *SLO, "--workers", "1", "--out", out, "--json")
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout), out


def _query(out, sql):
    r = run("query", out, sql, "--json")
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_best_one_row_per_model_and_system_and_meets_the_slos(searched):
    d, _ = searched
    assert [(b["model"], b["system"]) for b in d["best"]] == [("llama-3.1-8b", "hgx-h100"), ("qwen3-30b-a3b", "hgx-h100")]
    for b in d["best"]:
        assert b["best"] and b["confirmed"] and b["meets_slo"] and b["sim_meets_slo"]
        assert b["ttft_s"] <= 0.3 and b["tpot_s"] <= 0.02 and b["sim_ttft_s"] <= 0.3 and b["sim_tpot_s"] <= 0.02
    s = d["summary"]
    assert s["configurations"] > 1000 and s["confirmed"] >= len(d["best"]) and s["meeting_slo"] < s["configurations"]


def test_parquet_read_by_duckdb_with_the_documented_columns(searched):
    d, out = searched
    q = _query(out, "SELECT * FROM results LIMIT 1")
    assert q["columns"] == list(COLUMNS)
    kinds = {r["column_name"]: r["column_type"] for r in _query(out, "DESCRIBE results")["rows"]}
    want = {"int": "BIGINT", "float": "DOUBLE", "bool": "BOOLEAN", "str": "VARCHAR"}
    assert kinds == {k: want[t] for k, (t, _) in COLUMNS.items()}
    n = _query(out, "SELECT count(*) AS n, count(DISTINCT config_id) AS ids, sum(best::INT) AS best FROM results")
    assert n["rows"][0] == {"n": d["summary"]["configurations"], "ids": d["summary"]["configurations"], "best": 2}
    # the question: the cheapest system per model at TPOT ≤ 30 ms
    q = _query(out, "SELECT model, arg_min(system, usd_per_mtok) AS system, min(usd_per_mtok) AS usd FROM results "
                    "WHERE tpot_s <= 0.030 GROUP BY model ORDER BY model")
    assert [r["model"] for r in q["rows"]] == ["llama-3.1-8b", "qwen3-30b-a3b"] and all(r["usd"] > 0 for r in q["rows"])


def test_a_configuration_missing_an_slo_is_never_best(searched):
    _, out = searched
    bad = _query(out, "SELECT count(*) AS n FROM results WHERE best AND NOT (meets_slo AND sim_meets_slo "
                      "AND ttft_s <= slo_ttft_s AND tpot_s <= slo_tpot_s)")
    assert bad["rows"][0]["n"] == 0


class _FirstRoundFails(LocalRunner):
    """A runner whose first round of simulations all miss the SLOs (as disagg's TTFT or varied lengths can)."""

    rounds = 0

    def map(self, fn, items, on_done=None):
        out = super().map(fn, items, on_done)
        if fn is confirm_task:
            self.rounds += 1
            if self.rounds == 1:
                out = [{**r, "sim_meets_slo": 0.0} for r in out]
        return out


def test_a_candidate_that_misses_an_slo_when_simulated_is_never_best():
    m, s = load_model("llama-3.1-8b"), load_system("hgx-h100")
    t = Target(m, s, load_priors(s.chip.priors), m.weight_dtype, m.kv_dtype)
    r = search(SearchSpec((t,), 1000, 500, slo_tpot=0.02, max_chips=4), _FirstRoundFails(1))
    c = r.columns
    failed = np.flatnonzero(c["confirmed"] & (c["sim_meets_slo"] == 0))
    assert len(failed) == 3 and len(r.best) == 1 and r.best[0] not in failed
    i = r.best[0]
    assert c["sim_meets_slo"][i] == 1 and c["tpot_s"][i] <= 0.85 * 0.02  # the second round asks for headroom


def test_the_same_best_in_a_process_pool_and_on_ray(searched):
    d, _ = searched
    pool = run("search", *SMALL, *SLO, "--workers", "2", "--json")
    assert pool.exit_code == 0, pool.output
    assert json.loads(pool.stdout)["best"] == d["best"]
    pytest.importorskip("ray")
    on_ray = run("search", *SMALL, *SLO, "--ray", "local", "--workers", "2", "--json")
    assert on_ray.exit_code == 0, on_ray.output
    r = json.loads(on_ray.stdout)
    assert r["best"] == d["best"] and r["summary"]["runner"].startswith("ray")


def test_layouts_that_do_not_fit_are_pruned_and_pipelines_spread_the_weights():
    m, s = load_model("llama-3.1-70b"), load_system("hgx-h100")
    t = Target(m, s, load_priors(s.chip.priors), "bf16", m.kv_dtype)
    sp = enumerate_groups(t, isl=1000, osl=1000, engine=load_engine(), policies=("continuous",))
    names = {g.name: g for g in sp.groups}
    assert "continuous tp1" not in names and sp.pruned >= 1  # 141 GB of BF16 weights on one 80 GiB chip
    assert names["continuous tp1·pp2"].weights_per_chip_bytes == pytest.approx(names["continuous tp2"].weights_per_chip_bytes)
    assert names["continuous tp4"].batch_cap > names["continuous tp2"].batch_cap
    for g in sp.groups:
        assert g.weights_per_chip_bytes < s.chip.hbm_capacity_bytes and g.chips == g.tp * g.ep * g.pp <= 8


def test_a_pipeline_stage_serves_like_a_replica_of_its_chips():
    """pp stages of n chips at concurrency U: per chip and per user what n chips do at U / pp."""
    m, s = load_model("llama-3.1-70b"), load_system("hgx-h100")
    t = Target(m, s, load_priors(s.chip.priors), "fp8", m.kv_dtype)
    r = search(SearchSpec((t,), 1000, 1000, policies=("continuous",), budgets=(8192,)))
    c = r.columns
    pp2 = np.flatnonzero((c["layout"] == "continuous tp4·pp2") & (c["concurrency"] == 24))[0]
    tp4 = np.flatnonzero((c["layout"] == "continuous tp4") & (c["concurrency"] == 12))[0]
    for k in ("tokens_per_s_per_chip", "tpot_s", "ttft_s"):
        assert c[k][pp2] == pytest.approx(c[k][tp4], rel=1e-9)
    assert c["output_tokens_per_s"][pp2] == pytest.approx(2 * c["output_tokens_per_s"][tp4], rel=1e-9)


def test_an_engine_sets_the_closed_form_and_the_simulations_of_every_configuration():
    """--engine reaches each configuration as `frontier --engine` and `simulate --engine` take it: vLLM's KV pool and
    admission (S_held at r = 0) and its measured kernels, not the default engine's."""
    from tokenmath.serving.sim.fastpath import steady_state

    m, s = load_model("llama-3.1-8b"), load_system("hgx-h100")
    rows = {}
    for engine in ("default", "vllm"):
        t = Target(m, s, load_priors(s.chip.priors), "fp8", m.kv_dtype, engine=engine)
        r = search(SearchSpec((t,), 2000, 500, policies=("continuous",), budgets=(8192,), confirm=1, rounds=1))
        c = r.columns
        i = np.flatnonzero((c["layout"] == "continuous tp2") & (c["concurrency"] == 31))[0]
        ss = steady_state(m, s, G=2, concurrency=31, isl=2000, osl=500, precision="fp8", engine=engine,
                          max_num_tokens=8192, max_batch=int(c["batch_cap"][i]))
        assert c["tpot_s"][i] == pytest.approx(float(ss["tpot_s"]), rel=1e-9)
        assert r.summary["engine"] == engine
        rows[engine] = c["tpot_s"][i]
    assert rows["vllm"] != rows["default"]


@pytest.mark.parametrize("args, needles", [
    (["llama-3.1-8b,not-a-model", "--on", "hgx-h100", "--isl", "1000", "--osl", "500"], ["not-a-model"]),
    (["llama-3.1-8b", "--on", "hgx-h100", "--isl", "1000", "--osl", "500", "--slo-tpot", "1us"], ["no configuration",
                                                                                                 "TPOT"]),
    (["llama-3.1-8b", "--on", "hgx-h100", "--isl", "1000", "--osl", "500", "--slo-ttft", "-2s"], ["--slo-ttft"]),
    (["llama-3.1-8b", "--on", "hgx-h100", "--isl", "1000", "--osl", "500", "--out", "/nonexistent/dir/r.parquet"],
     ["--out", "cannot write"]),
    (["llama-3.1-8b", "--on", "hgx-h100", "--isl", "1000", "--osl", "500", "--out", "/tmp"], ["--out", "directory"]),
    (["llama-3.1-8b", "--on", "hgx-h100", "--isl", "1000", "--osl", "500", "--objective", "speed"], ["--objective"]),
    (["llama-3.1-8b", "--on", "hgx-h100", "--isl", "1000", "--osl", "500", "--policy", "chunked"], ["--policy"]),
    (["llama-3.1-8b", "--on", "hgx-h100"], ["--isl"]),
    (["llama-3.1-8b", "--on", "hgx-h100", "--isl", "1000", "--osl", "500", "--engine", "vlm"], ["--engine", "vllm"]),
])
def test_bad_input_is_one_line(args, needles):
    one_line_error(run("search", *args, "--workers", "1"), *needles)


def test_a_workload_trace_sets_the_lengths_and_is_replayed_in_the_simulations(tmp_path):
    trace = tmp_path / "trace.csv"
    trace.write_text("isl,osl\n800,400\n1200,600\n1000,500\n900,450\n")
    r = run("search", "llama-3.1-8b", "--on", "hgx-h100", "--max-chips", "2", "--workload", trace, "--slo-tpot", "20ms",
            "--workers", "1", "--json")
    assert r.exit_code == 0, r.output
    b = json.loads(r.stdout)["best"][0]
    assert (b["isl"], b["osl"]) == (975, 487.5) and b["sim_tpot_s"] <= 0.02 and b["sim_requests"] >= 400


def test_query_bad_input_is_one_line(searched, tmp_path):
    _, out = searched
    one_line_error(run("query", out, "SELEC nothing"), "query")
    one_line_error(run("query", tmp_path / "none.parquet", "SELECT 1"), "does not exist")
    one_line_error(run("query", out, "SELECT no_such_column FROM results"), "no_such_column")
