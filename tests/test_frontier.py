"""The throughput-at-speed frontier: Pareto points, the answer at a per-user speed, and `tokenmath frontier`."""

import json

import numpy as np
import pytest
from clirun import one_line_error, run

from tokenmath.core.load import load_model, load_system
from tokenmath.serving.frontier import frontier, pareto, replica_sizes

M70, H100 = load_model("llama-3.1-70b"), load_system("hgx-h100")


def test_pareto_keeps_the_points_nothing_beats_on_both_axes():
    user = [10, 20, 30, 15, 30, 5]
    chip = [100, 80, 10, 90, 5, 50]
    assert list(pareto(user, chip)) == [0, 3, 1, 2]


def test_answer_at_a_user_speed_is_the_best_point_that_meets_it():
    fr = frontier(M70, H100, isl=1000, osl=1000, chips=[4, 8], at_user_speed=50, confirm=True)
    at = fr.at
    assert at["met"] and at["tokens_per_s_per_user"] >= 50
    ok = [p["tokens_per_s_per_chip"] for p in fr.points if p["tokens_per_s_per_user"] >= 50]
    assert at["tokens_per_s_per_chip"] == max(ok)
    assert at["simulated"]["tokens_per_s_per_chip"] == pytest.approx(at["tokens_per_s_per_chip"], rel=0.03)
    front = [fr.points[i] for i in fr.frontier]
    u = [p["tokens_per_s_per_user"] for p in front]
    c = [p["tokens_per_s_per_chip"] for p in front]
    assert np.all(np.diff(u) > 0) and np.all(np.diff(c) < 0)  # faster per user costs throughput per chip
    # at high interactivity the answer is far below the maximum throughput (the 5–15×)
    fast = frontier(M70, H100, isl=1000, osl=1000, chips=[8], at_user_speed=75, confirm=False).at
    assert max(p["tokens_per_s_per_chip"] for p in fr.points) > 3 * fast["tokens_per_s_per_chip"]


def test_without_chips_the_frontier_sweeps_replica_sizes_up_to_the_domain():
    fr = frontier(M70, H100, isl=1000, osl=1000, confirm=False)
    assert {p["chips"] for p in fr.points} == {2, 4, 8}  # 70B in BF16 needs two 80 GB chips
    assert fr.notes and fr.notes[0].startswith("replicas of 1 chips left out")
    nvl = load_system("gb200-nvl72")
    assert replica_sizes(nvl, "continuous") == [1, 2, 4, 8, 16, 32, 64, 72]
    assert replica_sizes(nvl, "chunked") == replica_sizes(nvl, "disagg") == [72]  # one replica, the domain
    r = run(*FR, "--at-user-speed", "50", "--no-confirm")
    assert r.exit_code == 0 and "note: replicas of 1 chips left out" in r.output


def test_unreachable_speed_says_so():
    at = frontier(M70, H100, isl=1000, osl=1000, chips=[8], at_user_speed=10_000, confirm=False).at
    assert at["met"] is False and at["fastest"]["concurrency"] == 1


def test_ttft_limit_bounds_the_answer():
    at = frontier(M70, H100, isl=1000, osl=1000, chips=[8], at_ttft=0.5, confirm=False).at
    assert at["met"] and at["ttft_s"] <= 0.5


FR = ["frontier", "llama-3.1-70b", "--on", "hgx-h100", "--isl", "1000", "--osl", "1000"]


def test_frontier_json_points_and_at(tmp_path):
    plot = tmp_path / "fr.png"
    r = run(*FR, "--chips", "4,8", "--at-user-speed", "50", "--no-confirm", "--json", "--plot", plot)
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["points"] and d["evaluated"] >= len(d["points"])
    for p in d["points"]:
        assert {"tokens_per_s_per_user", "tokens_per_s_per_chip", "concurrency", "layout", "chips"} <= set(p)
    assert d["at"]["met"] and d["at"]["tokens_per_s_per_user"] >= 50
    assert plot.stat().st_size > 10_000
    assert "at" not in json.loads(run(*FR, "--chips", "8", "--json").stdout)


def test_frontier_table_and_explain():
    r = run(*FR, "--at-user-speed", "50", "--explain")
    assert r.exit_code == 0, r.output
    assert "at ≥ 50 tok/s per user" in r.stdout and "simulated" in r.stdout
    assert "tokens_per_s_per_chip = tokens_per_s / G" in r.stdout


def test_frontier_layouts_for_a_moe_model():
    r = run("frontier", "mixtral-8x7b", "--on", "hgx-h100", "--chips", "8", "--layout", "tp,ep", "--isl", "512",
            "--osl", "256", "--json", "--all")
    assert r.exit_code == 0, r.output
    assert {p["layout"] for p in json.loads(r.stdout)["all_points"]} == {"tp8", "tp1·ep8"}


def test_all_layouts_is_the_envelope_of_each():
    """'all' (the default) answers at a speed with the best of the MoE layouts; a dense model's 'all' is its TP."""
    m, s = load_model("deepseek-v3"), load_system("hgx-b200")
    kw = dict(isl=1024, osl=1024, chips=[8], precision="fp4", at_user_speed=40, confirm=False)
    each = {k: frontier(m, s, layouts=(k,), **kw).at["tokens_per_s_per_chip"] for k in ("default", "tp", "tpep")}
    env = frontier(m, s, layouts=("all",), **kw)
    assert env.at["tokens_per_s_per_chip"] == pytest.approx(max(each.values()))
    assert {p["layout"] for p in env.points} == {"dep8", "tp8", "tp8·ep8"}
    d = load_model("llama-3.1-70b")
    dk = dict(isl=512, osl=256, chips=[8], confirm=False, at_user_speed=30)
    assert frontier(d, s, layouts=("all",), **dk).points == frontier(d, s, layouts=("tp",), **dk).points


@pytest.mark.parametrize("args,needle", [
    (["--at-user-speed", "-5"], "--at-user-speed"),
    (["--layout", "pp"], "--layout"),
    (["--chips", "1"], "does not fit"),
    (["--concurrency", "0"], "--concurrency"),
    (["--at-ttft", "soon"], "soon"),
    (["--engine", "trt"], "--engine"),
])
def test_frontier_bad_input_is_one_line(args, needle):
    one_line_error(run(*FR, *args), needle)


def test_frontier_engine_reads_its_kernels_and_memory():
    """--engine: the engine's KV pool rule, batch cap and measured kernels (DeepSeek-V3 on 8 × H200: SGLang's
    reserve and MLA kernels against the engines' median), and the JSON says which."""
    args = ["frontier", "deepseek-v3", "--on", "hgx-h200", "--chips", "8", "--isl", "1000", "--osl", "200",
            "--concurrency", "1,16,64", "--layout", "default", "--no-confirm", "--all", "--json"]
    med, sgl = (json.loads(run(*args, *extra).stdout) for extra in ((), ("--engine", "sglang")))
    assert (med["engine"], sgl["engine"]) == ("default", "sglang")
    assert [p["tpot_s"] for p in med["all_points"]] != [p["tpot_s"] for p in sgl["all_points"]]


def test_frontier_explain_derives_the_answer_at_its_own_split():
    """The closed form --explain unfolds is the answer's point, at the split that point was evaluated at (a tp8
    answer of an MoE, whose default split is dep8: it derived 41.5 tok/s per chip beside an answer of 56.7)."""
    r = run("frontier", "deepseek-r1", "--on", "hgx-b200", "--chips", "8", "--isl", "1000", "--osl", "1000",
            "--at-user-speed", "150", "--precision", "fp4", "--explain", "--no-confirm", "--json")
    d = json.loads(r.stdout)
    assert d["at"]["layout"] != "dep8"
    assert d["derivations"]["tokens_per_s_per_chip"]["value"] == pytest.approx(d["at"]["tokens_per_s_per_chip"])


def test_frontier_answer_carries_its_interval():
    """The answer at a per-user speed carries the 80 % intervals of its means (the validation rows under load of the
    chip's generation × phase × precision), as simulate's means and serve's rates do; a spec-basis frontier none."""
    at = frontier(M70, H100, isl=1000, osl=1000, chips=[8], at_user_speed=50, confirm=False).at
    lo, hi = at["tokens_per_s_per_chip_interval"]
    assert lo < at["tokens_per_s_per_chip"] < hi and at["interval_groups"]["run"].startswith("hopper|run|")
    spec = frontier(M70, H100, isl=1000, osl=1000, chips=[8], at_user_speed=50, confirm=False, basis="spec").at
    assert "tokens_per_s_per_chip_interval" not in spec


def test_frontier_missing_lengths_is_refused():
    r = run("frontier", "llama-3.1-70b", "--on", "hgx-h100")
    assert r.exit_code != 0 and "Traceback" not in r.output


def test_a_simulated_policy_takes_its_concurrency_grid_from_the_kv_cap():
    f = frontier(load_model("llama-3.1-8b"), load_system("hgx-h100"), isl=1000, osl=200, policy="chunked", requests=60)
    C = [p["concurrency"] for p in f.points]
    assert min(C) == 1 and max(C) > 100  # 1 … the KV cap, as for the closed-form policies


def test_the_closed_forms_batch_cap_is_each_attention_dp_ranks_as_the_simulators():
    """The engine's max_batch bounds each attention-DP rank's scheduler in the simulator (sim/run.py); the closed form
    capped a DEP8 replica at 2,048 in all, so the frontier stopped at concurrency 2,048 and answered a low per-user
    speed ~16 % below what the simulator runs at 4,096 (probe 11G: DeepSeek-V3 FP4 on 8×B200, trtllm)."""
    from tokenmath.core.roofline import Layout
    from tokenmath.serving.sim import simulate, steady_state

    m, s = load_model("deepseek-v3"), load_system("hgx-b200")
    kw = dict(G=8, isl=1024, osl=1024, precision="fp4", kv_dtype="fp8", engine="trtllm", layout=Layout(tp=1, ep=8))
    ss = steady_state(m, s, concurrency=8192, policy="continuous", **kw)
    r = simulate(m, s, concurrency=20000, requests=1, policy="continuous", **kw)
    assert float(ss["batch_cap"]) == r.settings["batch_limit"] > 2048
    fr = frontier(m, s, chips=[8], layouts=[kw["layout"]], isl=1024, osl=1024, precision="fp4", kv_dtype="fp8",
                  engine="trtllm", confirm=False)
    assert max(p["concurrency"] for p in fr.points) > 2048
    tp = steady_state(m, s, concurrency=8192, policy="continuous", **{**kw, "layout": Layout(tp=8, ep=8)})
    assert float(tp["batch_cap"]) <= 2048  # one scheduler: the cap as the engine states it


def test_given_concurrencies_leave_out_the_replicas_too_small_as_the_default_grid_does():
    """`-C 1:512` (the option's own example) on a model that needs several chips: the swept replica sizes that cannot
    hold the weights are left out with a note, as without -C (it was refused: 'does not fit on 1 × h100-sxm')."""
    fr = frontier(M70, H100, isl=1000, osl=1000, concurrencies=[1, 64], confirm=False)
    assert {p["chips"] for p in fr.points} == {2, 4, 8}
    assert fr.notes and fr.notes[0].startswith("replicas of 1 chips left out")
    one_line_error(run(*FR, "--chips", "1", "--concurrency", "1,64"), "does not fit")  # one size given: still refused


def test_frontier_engine_keeps_the_policy_its_help_says():
    """frontier --engine brings the engine's budget, cap, KV pool and kernels, not its policy (the closed form runs
    --policy, continuous unless given); its help said 'that engine's scheduler defaults (… policy …)' as simulate's."""
    d = json.loads(run(*FR, "--chips", "8", "--concurrency", "1,16", "--engine", "trtllm", "--no-confirm", "--json").stdout)
    assert (d["engine"], d["policy"]) == ("trtllm", "continuous")  # trtllm.yaml's own policy is chunked
    h = " ".join(run("frontier", "--help").output.split())
    assert "the policy stays --policy's" in h and "policy, token budget" not in h


def test_the_confirming_simulations_length_is_the_one_its_help_gives():
    """-n's default: 12 × the answer's concurrency, at least 400 (the help said '12 × concurrency': 96 at 8)."""
    at = frontier(M70, H100, isl=1000, osl=1000, chips=[8], concurrencies=[8], at_user_speed=1).at
    assert at["concurrency"] == 8 and at["simulated"]["requests"] == 400
    assert "12 × the answer's concurrency, 400 to 20,000" in " ".join(run("frontier", "--help").output.split())
