"""Where the closed-form steady state (sim/fastpath.py) agrees with the simulator, and that it is vectorised."""

import numpy as np
import pytest

from tokenmath.core.load import load_model, load_system
from tokenmath.serving.sim import simulate, steady_state
from tokenmath.serving.speculative import Speculation

M70, DS = load_model("llama-3.1-70b"), load_model("deepseek-v3")
H100, GB200 = load_system("hgx-h100"), load_system("gb200-nvl72")
CASES = [(M70, H100, 8), (DS, GB200, 16)]


def _pair(m, s, G, C, isl, osl, policy, **kw):
    a = steady_state(m, s, G=G, concurrency=C, isl=isl, osl=osl, policy=policy, **kw)
    wave = int(min(C, float(a["batch_cap"])))
    n = int(np.ceil(max(20 * C, 200) / wave)) * wave  # ~20 requests per client, in whole waves
    r = simulate(m, s, G=G, concurrency=C, requests=n, isl=isl, osl=osl, policy=policy, **kw)
    return r, a


@pytest.mark.parametrize("m,s,G", CASES)
@pytest.mark.parametrize("C", [1, 16, 256, 2048])
@pytest.mark.parametrize("policy", ["continuous", "cadence"])
def test_closed_form_agrees_with_the_simulator(m, s, G, C, policy):
    """Closed loop, fixed lengths: throughput and TPOT within 3 %, mean TTFT within 10 %, past the KV cap too."""
    for isl, osl in ((1000, 1000), (8000, 300)):
        r, a = _pair(m, s, G, C, isl, osl, policy)
        assert r["output_tokens_per_s"] == pytest.approx(float(a["output_tokens_per_s"]), rel=0.03)
        assert r["tpot_s"]["mean"] == pytest.approx(float(a["tpot_s"]), rel=0.03)
        assert r["ttft_s"]["mean"] == pytest.approx(float(a["ttft_s"]), rel=0.10)


@pytest.mark.parametrize("m,s,G", CASES)
@pytest.mark.parametrize("C", [16, 256, 2048])
def test_disagg_closed_form_agrees_on_throughput_and_tpot(m, s, G, C):
    r, a = _pair(m, s, G, C, 1000, 1000, "disagg", prefill_chips=G, decode_chips=G)
    assert r["output_tokens_per_s"] == pytest.approx(float(a["output_tokens_per_s"]), rel=0.03)
    assert r["tpot_s"]["mean"] == pytest.approx(float(a["tpot_s"]), rel=0.03)
    assert r["ttft_s"]["mean"] >= 0.9 * float(a["ttft_s"])  # the closed form leaves out cohorts colliding


def test_closed_form_with_mtp_agrees_with_the_simulator():
    spec = Speculation(K=2, alpha=0.8)
    r, a = _pair(DS, GB200, 16, 64, 2000, 500, "continuous", spec=spec)
    assert r["output_tokens_per_s"] == pytest.approx(float(a["output_tokens_per_s"]), rel=0.03)
    assert r["tpot_s"]["mean"] == pytest.approx(float(a["tpot_s"]), rel=0.03)


def test_closed_form_is_vectorised_over_concurrency_and_lengths():
    C = np.array([1, 8, 64, 512, 4096])
    I = np.array([[128], [1024], [8192]])
    a = steady_state(M70, H100, G=8, concurrency=C, isl=I, osl=512)
    assert a["output_tokens_per_s"].shape == (3, 5)
    one = steady_state(M70, H100, G=8, concurrency=64, isl=1024, osl=512)
    assert a["output_tokens_per_s"][1, 2] == pytest.approx(float(one["output_tokens_per_s"]), rel=1e-12)
    assert np.all(np.diff(a["output_tokens_per_s"], axis=1) >= -1e-9)  # throughput never falls with concurrency
    assert np.all(np.diff(a["tokens_per_s_per_user"], axis=1) <= 1e-9)  # ... and per-user speed never rises


def test_closed_form_explains_itself():
    a = steady_state(M70, H100, G=8, concurrency=32, isl=1000, osl=1000, explain=True)
    text = a.explain()
    assert "X = B / (n_d · t_d + s · t_1 + (B − s) · t_p / n_b)" in text
    assert "T_resp = U / X" in text and "catalog/engines/default.yaml" in text
    assert a.to_dict(derivations=True)["derivations"]["tpot_s"]["formula"] == "tpot = t_life / (O − 1)"


def test_an_engine_that_allocates_kv_as_tokens_come_holds_more_sequences():
    """TensorRT-LLM reserves a request's whole KV (prompt + output) at admission; vLLM V1 allocates blocks as tokens
    come and SGLang keeps only new_token_ratio (0.098 when steady) of the output still to come (probe 11AW, read from
    the vllm-0.11.0 and sglang-0.5.4 wheels). In a full pool whose requests are at every stage of their output a
    sequence holds I + (1 + r)/2 · O on average, so at 2,000 + 2,000 tokens vLLM's pool runs 4/3 the sequences."""
    from tokenmath.core import arch
    from tokenmath.serving.engine_memory import kv_pool_engine
    from tokenmath.serving.sim.fastpath import held_tokens
    from tokenmath.core.load import load_engine

    assert held_tokens(2000, 2000, 1) == 4000 and held_tokens(2000, 2000, 0) == 3000
    assert held_tokens(2000, 2000, 0.098) == pytest.approx(3098)
    assert [load_engine(e)["kv_output_reserve"] for e in ("default", "trtllm", "vllm", "sglang")] == [1, 1, 0, 0.098]
    m, s = load_model("llama-3.1-8b"), load_system("h200")
    a = steady_state(m, s, G=1, concurrency=2000, isl=2000, osl=2000, engine="vllm")
    pool = float(kv_pool_engine(load_engine("vllm"), m, s, 1, float(arch.model_weight_bytes(m, m.weight_dtype)), tp=1.0,
                                precision=m.weight_dtype, pp=1))
    assert float(a["batch_cap"]) == np.floor(pool / float(arch.kv_stored_bytes(m, 3000)))
    r = simulate(m, s, G=1, concurrency=2000, isl=2000, osl=2000, requests=2500, engine="vllm")
    assert r.settings["batch_limit"] == int(a["batch_cap"]) and r.settings["batch_limit_by"] == "the KV pool"
    assert r["mean_batch"] > 0.9 * r.settings["batch_limit"]


@pytest.mark.parametrize("engine", ["vllm", "sglang", "trtllm"])
@pytest.mark.parametrize("policy", ["continuous", "disagg"])
def test_frontier_search_and_simulate_size_the_batch_by_one_admission_rule(engine, policy):
    """Every place that sizes a batch by what an engine's pool holds reads fastpath.held_kv_bytes at the engine's
    kv_output_reserve r (probe 11AW2): beyond the pool, frontier's batch, the closed form's cap and the simulator's
    batch limit are one number, and search's layouts are sized at the same S_held (their per-chip accounting is the
    engine-less pool, a bound the closed form then takes the engine's pool under)."""
    from tokenmath.core import arch
    from tokenmath.core.load import load_engine, load_priors
    from tokenmath.serving.frontier import frontier, point_layout
    from tokenmath.serving.search_space import Target, enumerate_groups
    from tokenmath.serving.sim.fastpath import held_kv_bytes

    m, s = load_model("llama-3.1-8b"), load_system("hgx-h200")
    G, eng = 2, load_engine(engine)
    r = float(eng["kv_output_reserve"])
    pools = dict(prefill_chips=G, decode_chips=G) if policy == "disagg" else {}
    fr = frontier(m, s, isl=2000, osl=2000, chips=[G], concurrencies=[5000], policy=policy, engine=engine,
                  confirm=False, **pools)
    a = steady_state(m, s, G=G, concurrency=5000, isl=2000, osl=2000, policy=policy, engine=engine, **pools)
    sim = simulate(m, s, G=G, concurrency=5000, requests=200, isl=2000, osl=2000, policy=policy, engine=engine,
                   layout=point_layout(fr.points[0]), **pools)
    assert fr.points[0]["batch"] == float(a["batch_cap"]) == sim.settings["batch_limit"]
    assert sim.settings["batch_limit_by"] == "the KV pool"
    t = Target(m, s, load_priors(s.chip.priors), m.weight_dtype, m.kv_dtype)
    g = next(g for g in enumerate_groups(t, isl=2000, osl=2000, engine=eng, policies=("continuous",)).groups
             if (g.tp, g.ep, g.pp) == (G, 1, 1))
    held = float(held_kv_bytes(m, 2000, 2000, r, m.kv_dtype))
    W = float(arch.model_weight_bytes(m, m.weight_dtype)) / G
    assert g.batch_cap == min(np.floor(eng["kv_memory_fraction"] * (s.chip.hbm_capacity_bytes - W) * G / held),
                              eng["max_batch"])
    # the engine's pool keeps about what the engine-less rule does (0.9 of the free memory): less, or (SGLang's static
    # reserve at tp < 4 below 160 GB, its CUDA-graph batch 256) up to a few seats more
    assert g.batch_cap >= 0.99 * sim.settings["batch_limit"]


def test_the_whole_kv_where_the_engine_reserves_it():
    """r = 1 (TensorRT-LLM, the default engine) holds exactly the whole I + O, the draft's KV included: the engine-less
    and TensorRT-LLM paths size their batches as before."""
    from tokenmath.core import arch
    from tokenmath.serving.sim.fastpath import held_kv_bytes

    m = load_model("deepseek-v3")
    sp = Speculation(K=1, alpha=0.8)
    I, O = np.array([1000.0, 3000.0]), np.array([500.0, 2000.0])
    assert np.array_equal(held_kv_bytes(m, I, O, 1.0, m.kv_dtype), arch.kv_stored_bytes(m, I + O, m.kv_dtype))
    assert np.array_equal(held_kv_bytes(m, I, O, 1.0, m.kv_dtype, sp),
                          arch.kv_stored_bytes(m, I + O, m.kv_dtype) + sp.extra_kv_bytes(m, I + O, m.kv_dtype))


def test_sglangs_static_reserve_reads_its_cuda_graph_batch_and_tp_size_as_its_code_does():
    """SGLang's reserve (server_args.py _handle_gpu_memory_settings): a CUDA-graph batch of 256 at tp_size < 4 on GPUs
    under 160 GB (512 from tp 4, and on a B200), and tp_size · pp_size / 8 GiB over every chip of the stage,
    attention-DP ranks included (it was read at the attention groups' tp)."""
    from tokenmath.core import arch
    from tokenmath.core.load import load_engine
    from tokenmath.serving.engine_memory import kv_pool_engine

    MiB, eng = 2.0**20, load_engine("sglang")
    m, h100 = load_model("qwen3-32b"), load_system("hgx-h100")
    W, C = float(arch.model_weight_bytes(m, "bf16")), h100.chip.hbm_capacity_bytes
    R = (512 + 1.5 * 8192 + 2 * 256 + 1 / 8 * 1024) * MiB
    assert float(kv_pool_engine(eng, m, h100, 1, W, tp=1.0, precision="bf16")) == pytest.approx(C - R - W)
    R8 = (512 + 1.5 * 8192 + 2 * 512 + 8 / 8 * 1024) * MiB  # 8 chips, attention DP 8: tp_size 8
    assert float(kv_pool_engine(eng, m, h100, 8, W, tp=1.0, precision="bf16")) == pytest.approx(8 * (C - R8) - W)
