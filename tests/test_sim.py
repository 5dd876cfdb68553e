"""The simulator's laws: concurrency 1 is serve's batch-1 step, Little's law, throughput rising to the KV cap,
the lecture's cadence (worst wait 2 steps), KV admission, a golden small run, and determinism."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokenmath.core import arch
from tokenmath.core.load import load_model, load_system
from tokenmath.core.roofline import step
from tokenmath.serving.serve import serve
from tokenmath.serving.sim import POLICIES, simulate

SETTINGS = settings(max_examples=12, deadline=None)
M8 = load_model("llama-3.1-8b")
M70 = load_model("llama-3.1-70b")
H100 = load_system("hgx-h100")


@SETTINGS
@given(isl=st.integers(16, 6000), osl=st.integers(2, 500), G=st.sampled_from([1, 2, 8]))
def test_concurrency_one_tpot_is_serves_batch_one_decode_step_at_the_mean_context(isl, osl, G):
    r = simulate(M8, H100, G=G, concurrency=1, requests=3, isl=isl, osl=osl)
    s = serve(M8, H100, G=G, B=1, S=isl + osl / 2)
    # exactly the mean of the roofline's decode steps over the contexts the request passes through ...
    steps = step(M8, H100, G=G, B=1, S=isl + np.arange(osl), phase="decode").v("t_step")
    assert r["tpot_s"]["mean"] == pytest.approx(float(np.mean(steps)), rel=2e-3)
    # ... which is serve's step at the mean context up to the curvature of the measured kernel-efficiency
    # curves (attention kernels of a few kB at short contexts): within 3 %
    assert r["tpot_s"]["mean"] == pytest.approx(s.value("decode.step_time_s"), rel=3e-2)
    # the prompt's step is read off a 400-point table over prompt length (linear between points): 1 %
    assert r["ttft_s"]["mean"] == pytest.approx(serve(M8, H100, G=G, B=1, S=isl).value("prefill.step_time_s"), rel=1e-2)


@SETTINGS
@given(C=st.integers(1, 300), rr=st.sampled_from([0.0, 0.6]), policy=st.sampled_from(POLICIES))
def test_littles_law_in_flight_is_throughput_times_time_in_system(C, rr, policy):
    kw = dict(prefill_chips=4, decode_chips=4) if policy == "disagg" else {}
    r = simulate(M8, H100, G=4, concurrency=C, requests=max(3 * C, 50), isl=400, osl=120, range_ratio=rr,
                 policy=policy, **kw)
    assert r["requests_completed"] == max(3 * C, 50)
    assert r["in_flight_mean"] == pytest.approx(r["requests_per_s"] * r["e2e_s"]["mean"], rel=1e-9)
    assert r["in_flight_mean"] <= C + 1e-9


def test_littles_law_open_loop_poisson():
    r = simulate(M8, H100, G=1, rate=20.0, requests=3000, isl=300, osl=100, range_ratio=0.5, seed=3)
    assert r["in_flight_mean"] == pytest.approx(r["requests_per_s"] * r["e2e_s"]["mean"], rel=1e-9)
    assert r["requests_per_s"] == pytest.approx(20.0, rel=0.06)  # stable: throughput follows the arrivals


def test_throughput_rises_with_concurrency_until_the_kv_cap():
    # 70B in BF16 on 4 H100: the KV pool 0.9·(320 GB − weights) holds a few hundred requests of 1000 + 1000 tokens
    probe = simulate(M70, H100, G=4, concurrency=1, requests=1, isl=1000, osl=1000)
    cap = int(np.floor(probe["kv_pool_bytes"] / arch.kv_stored_bytes(M70, 2000)))
    assert 150 <= cap <= 400
    C = [1, 4, 16, 64, 128, 200, cap, 400, 800]
    # whole waves (the run's last requests do not leave a half-empty batch behind)
    runs = [simulate(M70, H100, G=4, concurrency=c, requests=5 * min(c, cap), isl=1000, osl=1000) for c in C]
    tps = [r["output_tokens_per_s"] for r in runs]
    assert all(b >= a * (1 - 1e-3) for a, b in zip(tps, tps[1:]))
    assert all(r["mean_batch"] <= cap + 1e-9 for r in runs)
    assert tps[-1] == pytest.approx(tps[-3], rel=0.03)  # past the cap the batch stops growing
    assert runs[-1]["ttft_s"]["mean"] > 5 * runs[-3]["ttft_s"]["mean"]  # ... and requests queue for KV
    assert all(r["kv_utilisation"] <= 1 + 1e-9 for r in runs)


@SETTINGS
@given(load=st.floats(0.05, 0.5), seed=st.integers(0, 1000))
def test_cadence_worst_wait_is_two_steps(load, seed):
    probe = simulate(M8, H100, G=1, rate=1.0, requests=2, isl=200, osl=50, policy="cadence", max_batch=64)
    t_c, seats = probe.settings["step_s"], probe.settings["seats"]
    capacity = seats / (50 * t_c)  # requests/s a full train serves
    r = simulate(M8, H100, G=1, rate=load * capacity, requests=600, isl=200, osl=50, policy="cadence",
                 max_batch=64, seed=seed)
    assert r.settings["worst_wait_s"] == pytest.approx(2 * t_c)
    assert np.max(r.ttft_s) <= 2 * t_c * (1 + 1e-9)
    assert np.min(r.ttft_s) >= t_c * (1 - 1e-9)
    assert r["tpot_s"]["mean"] == pytest.approx(t_c, rel=1e-9)


def test_cadence_mean_wait_is_one_and_a_half_steps():
    probe = simulate(M8, H100, G=1, rate=1.0, requests=2, isl=200, osl=50, policy="cadence", max_batch=64)
    t_c = probe.settings["step_s"]
    r = simulate(M8, H100, G=1, rate=0.3 * 64 / (50 * t_c), requests=4000, isl=200, osl=50, policy="cadence",
                 max_batch=64, seed=1)
    assert r["ttft_s"]["mean"] == pytest.approx(1.5 * t_c, rel=0.03)


def test_kv_admission_holds_requests_until_their_kv_fits():
    probe = simulate(M70, H100, G=4, concurrency=1, requests=1, isl=1000, osl=1000)
    cap = int(np.floor(probe["kv_pool_bytes"] / arch.kv_stored_bytes(M70, 2000)))
    r = simulate(M70, H100, G=4, concurrency=2 * cap, requests=6 * cap, isl=1000, osl=1000)
    assert r["mean_batch"] <= cap
    assert r["kv_utilisation"] > 0.75  # the pool stays mostly full: requests wait for their KV, not for seats


def test_golden_small_run():
    """2 clients, 4 requests of 100 + 3 tokens, prefill first: the first prompt alone (an idle engine starts on the
    first request it receives), the second's next while the first waits, two decode steps of both; both finish in
    one step, so the engine is idle again and the next two go the same way. Every time from roofline.step."""
    r = simulate(M8, H100, G=1, concurrency=2, requests=4, isl=100, osl=3)
    t_p = float(step(M8, H100, G=1, B=1, S=100, phase="prefill").v("t_step"))
    t_d = float(np.sum(step(M8, H100, G=1, B=2, S=np.array([101.0, 102.0])).v("t_step")))
    cycle = 2 * t_p + t_d
    assert r["duration_s"] == pytest.approx(2 * cycle, rel=1e-4)
    assert r["ttft_s"]["mean"] == pytest.approx(1.5 * t_p, rel=1e-4)
    assert r["tpot_s"]["mean"] == pytest.approx((t_p + 2 * t_d) / 4, rel=1e-4)  # the first waits one prefill
    assert r["e2e_s"]["p99"] == pytest.approx(cycle, rel=1e-4)
    assert r["mean_batch"] == 2.0 and r["decode_steps"] == 4 and r["prefill_steps"] == 4
    assert r["output_tokens_per_s"] == pytest.approx(12 / (2 * cycle), rel=1e-4)
    assert r.events == 6  # (two prefills, a decode span) twice
    d = r.to_dict()
    for key in ("ttft_s", "tpot_s", "itl_s", "e2e_s"):  # each percentile beside its 80 % interval
        assert [k for k in d[key] if not k.endswith("_interval")] == ["mean", "p50", "p90", "p95", "p99"]
        assert [k for k in d[key] if k.endswith("_interval")] == ["p50_interval", "p90_interval", "p95_interval",
                                                                  "p99_interval"]
    assert set(d["tokens_per_s_per_user"]) == {"mean", "p50", "p50_interval"}
    for key in ("output_tokens_per_s", "tokens_per_s_per_chip", "requests_completed", "mean_batch", "kv_utilisation"):
        assert key in d
    assert "goodput" not in d  # no SLO given: the value does not apply


def test_an_idle_engine_starts_on_the_first_request_and_the_rest_ride_the_next_step():
    """4 clients sent at once reach an idle engine one at a time (vllm 0.11.0 v1/engine/core.py _process_input_queue
    drains only what is queued; sglang 0.5.9 scheduler.py recv_requests polls without blocking): the first prompt is
    prefilled alone, the other three together in the step after it — not one wave of four."""
    t = {B: float(step(M8, H100, G=1, B=B, S=1000, phase="prefill").v("t_step")) for B in (1, 3, 4)}
    for policy, rel in (("continuous", 1e-3), ("chunked", 0.05)):  # (chunked: a mixed step, read off its table)
        r = simulate(M8, H100, G=1, concurrency=4, requests=4, isl=1000, osl=1, policy=policy, chunk=8192)
        assert r["prefill_steps"] == 2
        assert r["ttft_s"]["mean"] == pytest.approx((t[1] + 3 * (t[1] + t[3])) / 4, rel=rel)
        assert r["ttft_s"]["mean"] != pytest.approx(t[4], rel=0.05)
    # a closed loop keeps the offset: one prompt, then three, each cycle (prefill first: the three stall the one)
    r = simulate(M8, H100, G=1, concurrency=4, requests=400, isl=1000, osl=50)
    assert r["ttft_s"]["p50"] == pytest.approx(t[3] + t[1], rel=0.05)  # behind the one's prefill, or its own three


def test_goodput_counts_requests_meeting_the_slos():
    r = simulate(M8, H100, G=1, concurrency=32, requests=200, isl=500, osl=100, slo_ttft=1e9, slo_tpot=1e9)
    assert r["goodput"] == pytest.approx(r["requests_per_s"])
    r = simulate(M8, H100, G=1, concurrency=32, requests=200, isl=500, osl=100, slo_ttft=1e-9)
    assert r["goodput"] == 0.0


def test_same_seed_same_run_other_seed_other_run():
    kw = dict(G=1, rate=10.0, requests=300, isl=300, osl=80, range_ratio=0.5)
    a, b, c = simulate(M8, H100, seed=1, **kw), simulate(M8, H100, seed=1, **kw), simulate(M8, H100, seed=2, **kw)
    assert a.to_dict() == b.to_dict()
    assert a["e2e_s"] != c["e2e_s"]


def test_chunked_prefill_removes_the_decode_stalls():
    kw = dict(G=8, concurrency=256, requests=1024, isl=2000, osl=200, range_ratio=0.5)
    cont, chunk = simulate(M70, H100, **kw), simulate(M70, H100, policy="chunked", chunk=2048, **kw)
    assert chunk["itl_s"]["p99"] < cont["itl_s"]["p99"] / 2  # no decode waits for a whole prefill step
    for key in ("ttft_s", "tpot_s", "itl_s", "e2e_s"):  # the percentiles in order, the histogram's (ITL) too
        q = cont[key]
        assert q["p50"] <= q["p90"] <= q["p95"] <= q["p99"]
    assert chunk["output_tokens_per_s"] == pytest.approx(cont["output_tokens_per_s"], rel=0.2)


def test_disagg_decodes_never_wait_for_a_prefill():
    kw = dict(concurrency=64, requests=512, isl=4000, osl=300, range_ratio=0.5)
    d = simulate(M70, H100, G=8, policy="disagg", prefill_chips=8, decode_chips=8, **kw)
    c = simulate(M70, H100, G=8, **kw)
    assert d.settings["chips"] == 16 and d.settings["link"] == "scale-out"
    assert d["itl_s"]["p99"] < c["itl_s"]["p99"] / 3


def test_disagg_first_token_reaches_the_client_through_the_decode_worker():
    """The client's stream is the decode worker's: a request's first token is out once its KV has landed and the decode
    worker takes it at a step boundary (SGLang's disaggregation/decode.py). At concurrency 1 the decode worker is
    idle, so the TTFT is the prefill step plus the KV transfer (it ended with the prefill); under load it waits for
    the step in flight, at most one decode step more."""
    kw = dict(G=8, policy="disagg", prefill_chips=8, decode_chips=8, isl=8000, osl=50)
    one = simulate(M70, H100, concurrency=1, requests=4, **kw)
    t_p = serve(M70, H100, G=8, B=1, S=8000).value("prefill.step_time_s")
    t_x = one.settings["kv_transfer_s_mean"]
    assert one.settings["link"] == "scale-out" and t_x > 1e-3  # 2.6 GB of KV over InfiniBand: milliseconds
    assert one["ttft_s"]["mean"] == pytest.approx(t_p + t_x, rel=1e-2)
    busy = simulate(M70, H100, concurrency=16, requests=64, **kw)
    assert busy["ttft_s"]["p50"] >= t_p + t_x


def test_disagg_workers_share_the_load_of_an_xpyd_deployment():
    """xPyD: y decode workers split the clients (2 decode workers at 2U run each at U's batch and TPOT, and the chips
    count both pools' workers); x prefill workers share one queue (a prefill-bound 1P1D waits less with 3P); one worker
    of each is the plain disagg run, exactly; a worker count that is not a whole number ≥ 1 is refused."""
    from tokenmath.core.errors import InputError

    kw = dict(G=8, policy="disagg", prefill_chips=8, decode_chips=8, isl=2000, osl=200)
    one = simulate(M70, H100, concurrency=32, requests=256, **kw)
    assert simulate(M70, H100, concurrency=32, requests=256, prefill_workers=1, decode_workers=1, **kw)["ttft_s"] == \
        one["ttft_s"]
    two = simulate(M70, H100, concurrency=64, requests=512, decode_workers=2, prefill_workers=2, **kw)
    assert two.settings["chips"] == 32 and two["tpot_s"]["mean"] == pytest.approx(one["tpot_s"]["mean"], rel=0.05)
    assert two["output_tokens_per_s"] == pytest.approx(2 * one["output_tokens_per_s"], rel=0.05)
    long = dict(kw, isl=16000, osl=100)
    slow = simulate(M70, H100, concurrency=128, requests=512, **long)
    fast = simulate(M70, H100, concurrency=128, requests=512, prefill_workers=3, **long)
    assert fast["ttft_s"]["mean"] < slow["ttft_s"]["mean"] / 2
    for bad in (0, 1.5):
        with pytest.raises(InputError, match="workers"):
            simulate(M70, H100, concurrency=8, requests=16, decode_workers=bad, **kw)
    with pytest.raises(InputError, match="disagg"):
        simulate(M70, H100, G=8, concurrency=8, requests=16, isl=100, osl=10, decode_workers=2)


def test_the_engines_batch_cap_is_each_attention_dp_ranks():
    """TensorRT-LLM's max_batch_size (vLLM's max_num_seqs) bounds each attention-DP rank's scheduler: a DEP8 replica
    runs 8 × 2,048 sequences where the KV holds them (it was capped at 2,048 for the whole replica; the silicon
    sample's disaggregated DEP8 decode workers ran 3,700-5,400); a --max-batch given is the replica's."""
    from tokenmath.core.roofline import Layout

    m, s = load_model("deepseek-v3"), load_system("gb200-nvl72")
    kw = dict(G=8, concurrency=6000, requests=6000, isl=128, osl=32, precision="fp4", kv_dtype="fp8", engine="trtllm")
    dep = simulate(m, s, layout=Layout(tp=1, ep=8), **kw)
    tp = simulate(m, s, layout=Layout(tp=8, ep=8), **kw)
    assert dep["mean_batch"] > 2048 >= tp["mean_batch"]
    assert simulate(m, s, layout=Layout(tp=1, ep=8), max_batch=2048, **kw)["mean_batch"] <= 2048


def test_a_scheduler_one_step_ahead_delays_arrivals_by_about_one_step(monkeypatch):
    import tokenmath.serving.sim.run as run_mod
    kw = dict(G=1, rate=20.0, requests=300, isl=500, osl=60, range_ratio=0.5, engine="sglang")
    ahead = simulate(M8, H100, **kw)
    eng = dict(run_mod.load_engine("sglang"))
    eng.pop("schedule_ahead")
    monkeypatch.setattr(run_mod, "load_engine", lambda name="default": eng)
    now = simulate(M8, H100, **kw)
    extra = ahead["ttft_s"]["mean"] - now["ttft_s"]["mean"]
    assert 0 < extra < 3 * ahead["tpot_s"]["mean"]  # the step already launched behind the one in flight
    assert ahead["tpot_s"]["mean"] == pytest.approx(now["tpot_s"]["mean"], rel=0.1)


def test_a_mixed_steps_attention_follows_each_new_tokens_own_context():
    """8 decodes at 16k beside a 2,048-token prompt chunk at its start: the chunk's tokens attend over 0 … 2k (mean
    1k), not over the step's mean context (~14k): attention FLOP = per_key · (8·16000 + 2048·1024); the mean context
    made the step 48 ms where it is 31 ms."""
    from tokenmath.core.derive import value_of
    from tokenmath.serving.sim.steps import StepTimes, mixed_time

    m, s = load_model("llama-3.1-8b"), load_system("hgx-h200")
    kw = dict(G=1, precision="fp8", kv_dtype="fp8", priors=None, layout=None)
    t = mixed_time(m, s, None, n_dec=8, ctx_dec=8 * 16000, n_pre=1, T_pre=2048, ctx_pre=1024, basis="prior", **kw)
    one = step(m, s, B=9, S=(8 * 16000 + 1024) / 9, phase="decode", S_new=2056 / 9, sampled=9,
               S_attn=(8 * 16000 + 2048 * 1024) / 2056, explain=True, **kw)
    assert t == pytest.approx(value_of(one.t_step), rel=1e-9)
    per_key = arch.attention_flop_per_token(m, 1.0)
    assert value_of(one.t_math.inputs["t_attn"].inputs["FLOP_attn"]) == pytest.approx(
        per_key * (8 * 16000 + 2048 * 1024), rel=1e-6)
    mean = step(m, s, B=9, S=(8 * 16000 + 1024) / 9, phase="decode", S_new=2056 / 9, sampled=9, **kw)
    assert value_of(mean.t_step) > 1.4 * t  # the mean context overcounted the chunk's attention
    st_ = StepTimes(m, s, G=1, precision="fp8", kv_dtype="fp8", basis="prior", priors=None, layout=None, spec=None,
                    B_max=16, S_max=32768)
    assert st_.mixed(8, 8 * 16000, [(2048, 0)]) == pytest.approx(t, rel=0.1)  # its table: the attention share in bins


def test_an_mla_prompt_piece_is_priced_in_the_expanded_form_it_is_prefilled_in():
    """MLA decodes multiply the absorbed latent (2·N·(512 + 64 + 512) FLOP a key, DeepSeek-V3) while a prompt is
    prefilled in the expanded form (2·N·(128 + 64 + 128), the context_mla tables' shape): a mixed step counts the
    piece's attention at that share, rho = 320 / 1,088."""
    from tokenmath.serving.sim.steps import mixed_time, prompt_key_share

    ds, s = load_model("deepseek-v3"), load_system("hgx-h200")
    assert prompt_key_share(ds) == pytest.approx(320 / 1088) and prompt_key_share(load_model("llama-3.1-8b")) == 1.0
    kw = dict(G=8, precision="fp8", kv_dtype="bf16", basis="prior", priors=None, layout=None)
    t = mixed_time(ds, s, None, n_dec=8, ctx_dec=8 * 4000, n_pre=1, T_pre=4096, ctx_pre=2048, **kw)
    same = mixed_time(ds, s, None, n_dec=8, ctx_dec=8 * 4000, n_pre=1, T_pre=4096, ctx_pre=2048,
                      attn_ctx=8 * 4000 + 320 / 1088 * 4096 * 2048, **kw)
    absorbed = mixed_time(ds, s, None, n_dec=8, ctx_dec=8 * 4000, n_pre=1, T_pre=4096, ctx_pre=2048,
                          attn_ctx=8 * 4000 + 4096 * 2048, **kw)
    assert t == pytest.approx(same, rel=1e-12) and t < absorbed


def test_explain_without_a_closed_form_derives_the_decode_step_behind_the_tpot():
    """Probe 11C: under the default (chunked) policy `simulate --explain` printed only 'no closed-form
    counterpart'; now the decode step at the run's mean batch and mean context, the term its TPOT is made of."""
    import json

    from clirun import run

    args = ("simulate", "qwen3-30b-a3b", "--on", "mi300x-8", "--concurrency", "32", "--isl", "2000", "--osl", "500")
    r = run(*args, "--explain")
    assert r.exit_code == 0, r.output
    assert "t_step = max(t_math, t_weights + t_kv)" in r.stdout and "mean context 2,250 tok" in r.stdout
    d = json.loads(run(*args, "--explain", "--json").stdout)
    ds = d["decode_step"]
    assert ds["context"] == 2250 and ds["derivation"]["value"] == pytest.approx(ds["step_time_s"])
    # the step the TPOT is made of: the mean TPOT carries prompt chunks on top, never less
    assert ds["step_time_s"] <= d["tpot_s"]["mean"] <= 1.2 * ds["step_time_s"]


def test_simulate_says_when_the_pool_holds_fewer_than_are_in_flight():
    """2,000 clients of 2,000+2,000 tokens on one H200: the KV pool holds a few hundred; the printed line and
    --json say so (batch_limit / batch_limit_by), so a TTFT of minutes reads as queueing."""
    import json

    from clirun import run as cli
    out = cli("simulate", "llama-3.1-8b", "--on", "h200", "--concurrency", "2000", "--isl", "2000", "--osl", "2000",
              "--requests", "3000")
    assert out.exit_code == 0 and "(the KV pool holds " in out.output and "the rest queue)" in out.output
    d = json.loads(cli("simulate", "llama-3.1-8b", "--on", "h200", "--concurrency", "2000", "--isl", "2000",
                        "--osl", "2000", "--requests", "3000", "--json").output)
    assert d["batch_limit_by"] == "the KV pool" and 100 < d["batch_limit"] < 1000


def test_under_attention_dp_a_prompt_chunk_stays_whole_on_its_group():
    """A mixed step's prompt chunk belongs to one attention-DP group (its request's); the step was priced as n
    sequences each adding T / n tokens, which spread a 4,000-token chunk over the groups once a few decodes ran
    beside it, so the step got faster with more load and an open loop's mean TTFT fell as its rate rose (probe 11G:
    Qwen3-235B FP8 TP1 attention-DP4 EP4 on 4×H200, vLLM's chunked steps, 259 → 143 ms; DeepSeek-V3 DEP8 299 → 102). Now a chunk beside decodes is never priced below
    the chunk alone, and TTFT does not fall with the rate; without DP the step is as before."""
    from tokenmath.core.roofline import Layout
    from tokenmath.serving.sim.steps import mixed_time

    m, s = load_model("qwen3-235b-a22b"), load_system("hgx-h200")
    kw = dict(G=4, precision="fp8", kv_dtype="fp8", basis="prior", priors=None)
    one = dict(n_pre=1, T_pre=4000.0, ctx_pre=2000.0, c_max=4000.0)
    dep, tp = Layout(tp=1, ep=4), Layout(tp=4, ep=4)
    alone = mixed_time(m, s, None, n_dec=0, ctx_dec=0.0, layout=dep, **one, **kw)
    beside = mixed_time(m, s, None, n_dec=7, ctx_dec=7 * 5000.0, layout=dep, **one, **kw)
    assert beside >= alone
    even = mixed_time(m, s, None, n_dec=7, ctx_dec=7 * 5000.0, layout=dep, **{**one, "c_max": None}, **kw)
    assert even < 0.8 * beside  # (the even spread it was)
    assert mixed_time(m, s, None, n_dec=7, ctx_dec=7 * 5000.0, layout=tp, **one, **kw) == \
        mixed_time(m, s, None, n_dec=7, ctx_dec=7 * 5000.0, layout=tp, **{**one, "c_max": None}, **kw)
    run = dict(G=4, requests=300, isl=4000, osl=1000, layout=dep, precision="fp8", kv_dtype="fp8", engine="vllm",
               policy="chunked")
    X = simulate(m, s, concurrency=8, **run)["requests_per_s"]
    low, high = (simulate(m, s, rate=f * X, **run)["ttft_s"]["mean"] for f in (0.02, 0.6))
    assert low <= high < 1.1 * low  # (it was 259 → 143 ms)


def test_a_disaggregated_first_token_comes_after_the_kv_transfer():
    """The user reads a disaggregated answer from the decode worker (SGLang's and vLLM's P/D, Dynamo), so its first
    token comes after the prompt's KV reaches it: TTFT = the prefill + the transfer, TTFT + TPOT · (OSL − 1) = E2E, and
    the closed form's TTFT is T_resp − t_life (it subtracted t_x from TTFT and E2E alike; the simulator charged the
    transfer to TPOT). Probe 11G: at concurrency 1 a disagg TTFT equalled the aggregated one, transfer left out."""
    from tokenmath.serving.sim import steady_state

    s = load_system("hgx-h200")
    kw = dict(G=8, isl=8000, osl=200, precision="fp8", kv_dtype="fp8")
    pool = dict(policy="disagg", prefill_chips=8, decode_chips=8)  # 16 chips: the KV crosses the scale-out link
    one = simulate(M70, s, concurrency=1, requests=10, **kw, **pool)
    t_x = one.settings["kv_transfer_s_mean"]
    agg = simulate(M70, s, concurrency=1, requests=10, policy="continuous", **kw)
    assert t_x > 1e-3 and one["ttft_s"]["mean"] == pytest.approx(agg["ttft_s"]["mean"] + t_x, rel=1e-6)
    assert one["e2e_s"]["mean"] == pytest.approx(one["ttft_s"]["mean"] + one["tpot_s"]["mean"] * 199, rel=1e-9)
    ss = steady_state(M70, s, concurrency=1, **kw, **pool)
    assert float(ss["ttft_s"]) + float(ss["tpot_s"]) * 199 == pytest.approx(float(ss["e2e_s"]), rel=1e-9)
    assert float(ss["ttft_s"]) == pytest.approx(one["ttft_s"]["mean"], rel=0.02)


def test_the_batch_limit_counts_every_decode_worker_of_a_disaggregated_deployment():
    """batch_limit is what the deployment holds decoding at once; with three decode workers it was one worker's (141
    of 423 seats), so 240 clients read as 'the KV pool holds 141 at once: the rest queue' (probe 11G)."""
    s = load_system("hgx-h200")
    kw = dict(G=2, concurrency=240, requests=240, isl=8000, osl=1000, policy="disagg", prefill_chips=2, decode_chips=2,
              precision="fp8", kv_dtype="fp8")
    one = simulate(M70, s, **kw).settings
    three = simulate(M70, s, decode_workers=3, **kw).settings
    assert one["batch_limit_by"] == "the KV pool" and one["batch_limit"] < 240
    assert three["batch_limit_by"] == "the concurrency" and three["batch_limit"] == 240
    wide = simulate(M70, s, decode_workers=3, **{**kw, "concurrency": 2000, "requests": 2000}).settings
    assert wide["batch_limit_by"] == "the KV pool" and wide["batch_limit"] == 3 * one["batch_limit"]
