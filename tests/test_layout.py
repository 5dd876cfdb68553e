"""The layout-aware critical path of roofline.step: replicated weights, the busiest expert rank, split KV heads."""

import numpy as np
import pytest

from tokenmath.core import arch
from tokenmath.core.load import load_model, load_priors, load_system
from tokenmath.core.roofline import Layout, blom_z, busiest_rank_experts, busiest_rank_load, step

DSV3, LLAMA = load_model("deepseek-v3"), load_model("llama-3.1-70b")
H200 = load_system("hgx-h200")
FLAT = load_priors("default")  # scalar priors: the critical path's arithmetic, without measured curves


def test_blom_z_is_the_expected_largest_normal():
    assert blom_z(1) == pytest.approx(0.0, abs=1e-12)
    rng = np.random.default_rng(0)
    for n in (2, 8, 64):
        mc = rng.standard_normal((20_000, n)).max(axis=1).mean()
        assert blom_z(n) == pytest.approx(mc, rel=0.05)  # Blom: within a few per cent (exact for n = 2: 1/sqrt(pi))


@pytest.mark.parametrize("T, ep", [(64, 8), (512, 8), (1024, 64), (32, 64)])
def test_busiest_rank_load_matches_simulated_routing(T, ep):
    """T tokens each pick k = 8 distinct of E = 256 experts uniformly; ranks host E/ep experts each."""
    E, k = 256, 8
    rng = np.random.default_rng(1)
    loads, hits = [], []
    for _ in range(100):
        picks = np.argsort(rng.random((T, E)), axis=1)[:, :k]  # k distinct experts per token
        counts = np.bincount(picks.ravel(), minlength=E).reshape(ep, E // ep)
        loads.append(counts.sum(axis=1).max())
        hits.append((counts > 0).sum(axis=1).max())
    z = blom_z(ep)
    load = busiest_rank_load(T, k, ep, E, z, 1.0)
    hit = busiest_rank_experts(E, ep, load, arch.expected_experts_touched(E, k, T), z)
    assert load == pytest.approx(np.mean(loads), rel=0.15)
    assert hit == pytest.approx(np.mean(hits), rel=0.15)


def test_one_rank_sees_the_mean_and_large_batches_balance():
    assert busiest_rank_load(1000, 8, 1, 256, blom_z(1), 1.0) == pytest.approx(8000)
    small = busiest_rank_load(16, 8, 64, 256, blom_z(64), 1.0) / (16 * 8 / 64)
    large = busiest_rank_load(100_000, 8, 64, 256, blom_z(64), 1.0) / (100_000 * 8 / 64)
    assert small > 2 and 1 < large < 1.05
    assert busiest_rank_load(1000, 8, 8, 256, blom_z(8), 1.3) == pytest.approx(
        1.3 * busiest_rank_load(1000, 8, 8, 256, blom_z(8), 1.0))


def test_dp_attention_reads_the_replicated_weights_on_every_chip():
    """DeepSeek's layout on 8 chips: each chip reads all non-expert weights; the even split reads 1/8 of them."""
    crit = step(DSV3, H200, G=8, B=64, S=2048, priors=FLAT, layout=Layout(tp=1, ep=8))
    ideal = step(DSV3, H200, G=8, B=64, S=2048, priors=FLAT, layout=Layout(tp=1, ep=8), ideal=True)
    pc, fmts = arch.param_counts(DSV3), arch.weight_formats(DSV3)
    b = {k: arch.bytes_per(f) for k, f in fmts.items()}  # the checkpoint's own format per module kind
    dense = (arch.model_weight_bytes(DSV3) - arch.n_moe_layers(DSV3) * DSV3.moe.n_routed_experts * pc.expert
             * b["experts"] - DSV3.vocab_size * DSV3.d_model * b["embeddings"])
    assert crit.extras["W_dense"] == pytest.approx(dense)  # whole on every chip
    assert crit.v("t_weights") > ideal.v("t_weights")
    tp = step(DSV3, H200, G=8, B=64, S=2048, priors=FLAT, layout=Layout(tp=8, ep=8))
    assert tp.extras["W_dense"] == pytest.approx(dense / 8)


def test_mla_kv_is_read_whole_under_tp_and_gqa_heads_replicate_past_k():
    mla_tp = step(DSV3, H200, G=8, B=64, S=8192, priors=FLAT, layout=Layout(tp=8, ep=8))
    mla_dp = step(DSV3, H200, G=8, B=64, S=8192, priors=FLAT, layout=Layout(tp=1, ep=8))
    assert mla_tp.v("t_kv") == pytest.approx(8 * mla_dp.v("t_kv"))  # 64 seqs' latents on each chip vs 8
    kw = dict(B=64, S=8192, priors=FLAT)
    g8 = step(LLAMA, H200, G=8, layout=Layout(tp=8), **kw)  # K = 8: one KV head per chip
    g16 = step(LLAMA, load_system("gb200-nvl72"), G=16, layout=Layout(tp=16), **kw)  # tp > K: heads replicate
    per_chip = lambda st, W: st.v("t_kv") * W  # noqa: E731  (bytes read per chip, up to eta)
    assert per_chip(g16, 8e12) == pytest.approx(per_chip(g8, H200.chip.hbm_bandwidth_bytes_per_s), rel=1e-9)


def test_dense_tensor_parallel_matches_the_even_split():
    kw = dict(G=8, B=np.array([1, 64, 1024]), S=4096, priors=FLAT, layout=Layout(tp=8))
    crit, ideal = step(LLAMA, H200, **kw), step(LLAMA, H200, ideal=True, **kw)
    for term in ("t_math", "t_weights", "t_kv"):
        np.testing.assert_allclose(crit.v(term), ideal.v(term), rtol=1e-9)


def test_spec_keeps_the_idealised_bound_and_is_below_the_critical_path():
    for B in (1, 64, 4096):
        spec = step(DSV3, H200, G=8, B=B, S=4096, basis="spec")
        assert spec.extras["ideal"] is True
        assert spec.v("t_step") <= step(DSV3, H200, G=8, B=B, S=4096).v("t_step")


def test_critical_path_explains_itself():
    st = step(DSV3, H200, G=8, B=64, S=2048, explain=True)
    text = st.t_step.explain()
    for needle in ("load_max = max(", "hit_max = min(", "B_dp = max(B / dp", "W_dense = (W_all − L_moe·E·N_expert·b_exp − N_lookup·b_emb) / tp",
                   "z_ep", "Blom"):
        assert needle in text


def test_default_moe_layout_fills_its_data_parallel_groups():
    from tokenmath.core.roofline import default_layout

    lay = default_layout(DSV3, 72)
    assert lay.tp == 1 and lay.ep == 72 and lay.adaptive
    assert np.allclose(lay.tp_eff(72, np.array([1, 8, 72, 4096])), [72, 9, 1, 1])  # idle chips join as TP
    assert Layout(tp=1, ep=72).tp_eff(72, 1) == 1  # a fixed DP deployment leaves them idle
    lone = step(DSV3, load_system("gb200-nvl72"), G=72, B=1, S=100_000, phase="prefill", priors=FLAT)
    fixed = step(DSV3, load_system("gb200-nvl72"), G=72, B=1, S=100_000, phase="prefill", priors=FLAT,
                 layout=Layout(tp=1, ep=72))
    assert lone.v("t_step") < fixed.v("t_step") / 10  # one chip alone with a 100k prompt is the fixed layout
