"""Physical invariants of the roofline step, checked over random inputs."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokenmath.core import arch
from tokenmath.core.load import load_model, load_system
from tokenmath.core.derive import value_of
from tokenmath.core.roofline import step

SETTINGS = settings(max_examples=40, deadline=None)
MODEL = load_model("deepseek-v3")
SYSTEM = load_system("gb200-nvl72")
batches = st.integers(min_value=1, max_value=20_000)
contexts = st.integers(min_value=0, max_value=500_000)
bases = st.sampled_from(["spec", "prior"])
phases = st.sampled_from(["prefill", "decode"])


def t(B, S, basis="prior", phase="decode", system=SYSTEM, model=MODEL, G=64):
    return np.asarray(step(model, system, G=G, B=B, S=S, basis=basis, phase=phase).t_step)


@SETTINGS
@given(batches, batches, contexts, bases, phases)
def test_step_time_never_decreases_with_batch(b1, b2, S, basis, phase):
    lo, hi = sorted((b1, b2))
    S = min(S, 32_000) if phase == "prefill" else S
    assert t(hi, S, basis, phase) >= t(lo, S, basis, phase) * (1 - 1e-12)


@SETTINGS
@given(batches, contexts, contexts, bases)
def test_step_time_never_decreases_with_context(B, s1, s2, basis):
    lo, hi = sorted((s1, s2))
    assert t(B, hi, basis) >= t(B, lo, basis) * (1 - 1e-12)


@SETTINGS
@given(batches, batches, contexts, bases)
def test_cost_per_token_never_increases_with_batch(b1, b2, S, basis):
    lo, hi = sorted((b1, b2))
    assert t(hi, S, basis) / hi <= t(lo, S, basis) / lo * (1 + 1e-12)


@SETTINGS
@given(st.floats(min_value=0.1, max_value=100.0), batches, contexts, phases)
def test_scaling_every_rate_by_k_divides_every_time_by_k(k, B, S, phase):
    chip = SYSTEM.chip
    fast_chip = chip.evolve(peak_flop_per_s={p: x * k for p, x in chip.peak_flop_per_s.items()},
                            hbm_bandwidth_bytes_per_s=chip.hbm_bandwidth_bytes_per_s * k)
    fast = SYSTEM.evolve(chip=fast_chip)
    S = min(S, 32_000) if phase == "prefill" else S
    np.testing.assert_allclose(t(B, S, "spec", phase, system=fast), t(B, S, "spec", phase) / k, rtol=1e-9)


def test_optimal_batch_independent_of_model_scale():
    """Scale the model's widths (params ×c) and the domain's chips together: B* = R·rho is unchanged."""
    from tokenmath.serving.serve import serve
    m = load_model("deepseek-v3")
    big = m.evolve(d_model=m.d_model * 2, moe=m.moe.model_copy(update={"d_ff_expert": m.moe.d_ff_expert * 2}),
                   d_ff=m.d_ff * 2, n_heads=m.n_heads * 2, mla=m.mla.model_copy(update={"kv_lora_rank": 1024}),
                   vocab_size=m.vocab_size * 2)
    r1 = serve(m, SYSTEM, G=16, B=1, S=0)
    r2 = serve(big, SYSTEM, G=64, B=1, S=0)
    pc1, pc2 = arch.param_counts(m), arch.param_counts(big)
    assert pc2.total > 3 * pc1.total
    # rho shifts slightly because attention and experts scale differently; B*/rho = R must not move at all
    assert r1.value("optimal_batch") / pc1.rho == pytest.approx(r2.value("optimal_batch") / pc2.rho, rel=1e-12)
    dense = load_model("deepseek-v3").evolve(moe=None, d_ff=18432)
    r3 = serve(dense, SYSTEM, G=8, B=1, S=0)
    r4 = serve(dense.evolve(d_model=14336, d_ff=36864), SYSTEM, G=64, B=1, S=0)
    assert r3.value("optimal_batch") == pytest.approx(r4.value("optimal_batch"), rel=1e-12)


def test_moe_weights_touched_rise_from_active_to_all_experts():
    b = 1.0
    pc = arch.param_counts(MODEL)
    T = np.array([1, 2, 8, 64, 512, 4096, 100_000])
    w = arch.weight_bytes_touched(MODEL, T, b)
    assert np.all(np.diff(w) >= 0)
    lookup = MODEL.vocab_size * MODEL.d_model  # the input embedding is a lookup, not a read of the table
    assert w[0] == pytest.approx(pc.active - lookup, rel=1e-9)  # one token reads exactly the active parameters
    assert w[-1] == pytest.approx(pc.total - lookup, rel=1e-9)  # a large batch reads every expert


def test_vectorised_call_matches_scalar_calls():
    B = np.array([[1], [64], [4096]])
    S = np.array([[0, 1000, 100_000]])
    grid = step(MODEL, SYSTEM, G=64, B=B, S=S).t_step
    assert grid.shape == (3, 3)
    for i, b in enumerate(B[:, 0]):
        for j, s in enumerate(S[0]):
            assert grid[i, j] == pytest.approx(float(step(MODEL, SYSTEM, G=64, B=int(b), S=int(s)).t_step))


def test_spec_is_a_lower_bound_on_prior():
    for B in (1, 64, 4096):
        for S in (0, 4096, 131072):
            assert t(B, S, "spec") <= t(B, S, "prior")


def test_batch_one_reads_only_the_active_parameters():
    from tokenmath.serving.serve import serve
    r = serve(MODEL, SYSTEM, G=64, B=1, S=0, basis="spec", precision="fp8")
    pc = arch.param_counts(MODEL)
    # at B=1 an MoE reads only active experts, so the step is faster than reading every weight once
    lookup = MODEL.vocab_size * MODEL.d_model
    # DeepSeek-V3's FP8 checkpoint keeps the LM head and the routers in BF16 (2 B each, 1 B for the rest)
    bf16 = pc.by_kind["embeddings"] - lookup + pc.by_kind["router"]
    read = (pc.active - lookup - bf16) * 1 + bf16 * 2
    assert r.value("decode.step_time_s") == pytest.approx(read / (64 * 8e12), rel=1e-6)
    assert r.value("latency_floor_s") == pytest.approx(pc.total / (64 * 8e12), rel=1e-9)


def test_prefill_lm_head_multiplies_one_row_per_prompt():
    """A prefill samples only each prompt's last position: the LM head's FLOP count B rows, not B·S tokens;
    a decode step samples every token. (Spec basis: FLOP at the peak, no other term in t_math.)"""
    m, sysm = load_model("llama-3.1-8b"), load_system("hgx-h200")
    pc = arch.param_counts(m)
    F = sysm.chip.peak("bf16")
    VD = m.vocab_size * m.d_model
    for B, S in ((1, 1000), (8, 4096)):
        st_ = step(m, sysm, G=1, B=B, S=S, basis="spec", phase="prefill", precision="bf16")
        attn = B * S * arch.attention_flop_per_token(m, S, "prefill")
        want = (2 * (pc.matmul - VD) * B * S + 2 * VD * B + attn) / F
        assert float(st_.t_math) == pytest.approx(want, rel=1e-9)
    dec = step(m, sysm, G=1, B=64, S=1000, basis="spec", phase="decode", precision="bf16")
    assert float(dec.t_math) == pytest.approx((2 * pc.matmul * 64 + 64 * arch.attention_flop_per_token(
        m, 1000, "decode")) / F, rel=1e-9)


def test_a_mixed_step_samples_its_decodes_and_one_row_per_prompt_piece():
    """The simulator's mixed step (decodes plus prompt chunks, one roofline step) computes logits for its decode
    tokens and one row per prompt piece: `sampled` sets the LM head's rows."""
    from tokenmath.serving.sim.steps import mixed_time
    m, sysm = load_model("llama-3.1-8b"), load_system("hgx-h200")
    pc, VD, F = arch.param_counts(m), m.vocab_size * m.d_model, sysm.chip.peak("bf16")
    full = step(m, sysm, G=1, B=5, S=1000, basis="spec", phase="decode", S_new=1640 / 5, precision="bf16")
    part = step(m, sysm, G=1, B=5, S=1000, basis="spec", phase="decode", S_new=1640 / 5, precision="bf16", sampled=5)
    assert float(full.t_math) - float(part.t_math) == pytest.approx(2 * VD * (1640 - 5) / F, rel=1e-9)
    assert pc.matmul > VD
    t = mixed_time(m, sysm, None, n_dec=4, ctx_dec=4000, n_pre=1, T_pre=1636, ctx_pre=1000, G=1, precision="bf16",
                   kv_dtype="bf16", basis="spec", priors=None, layout=None)
    assert t == pytest.approx(float(part.t_step), rel=1e-9)


@SETTINGS
@given(st.floats(min_value=1e6, max_value=1e15), st.floats(min_value=1e6, max_value=1e15),
       st.floats(min_value=0, max_value=1e6), st.floats(min_value=0, max_value=1e9),
       st.floats(min_value=0, max_value=1e-4), st.floats(min_value=0.05, max_value=1.0))
def test_context_attention_never_runs_faster_on_more_flop_nor_above_its_rate(f1, f2, n_seq, n_q, t0, eta):
    """The context-attention law's rate (kernels.context_attention_eta): its time FLOP/(F·eta_attn) never falls as the
    FLOP grow at fixed work items, and the rate is positive and never above the law's eta_ctx."""
    from tokenmath.core.kernels import context_attention_eta

    lo, hi = sorted((f1, f2))
    F = 989e12
    e = [context_attention_eta(x, F, t0, n_seq, 20e-9, n_q, 0.4e-9, n_q / 8, 0.1e-9, eta) for x in (lo, hi)]
    assert 0 < e[0] <= eta * (1 + 1e-12) and 0 < e[1] <= eta * (1 + 1e-12)
    assert hi / (F * e[1]) >= lo / (F * e[0]) * (1 - 1e-12)


@SETTINGS
@given(batches, batches, st.integers(min_value=16, max_value=32_000))
def test_a_gqa_prefill_on_measured_kernels_never_gets_faster_with_more_prompts(b1, b2, S):
    lo, hi = sorted((b1, b2))
    m, s = load_model("llama-3.1-70b"), load_system("hgx-h200")
    assert t(hi, S, "prior", "prefill", system=s, model=m, G=8) >= t(lo, S, "prior", "prefill", system=s, model=m, G=8) \
        * (1 - 1e-12)


@SETTINGS
@given(st.sampled_from(["llama-3.1-70b", "llama-3.1-8b", "qwen3-32b", "deepseek-v3", "gpt-oss-120b"]),
       st.sampled_from(["hgx-h100", "hgx-h200"]), st.integers(min_value=1, max_value=4096),
       st.integers(min_value=128, max_value=16_384), st.sampled_from([1, 2, 4, 8]))
def test_fp4_without_fp4_tensor_cores_never_multiplies_faster_than_fp8(name, system, B, S, G):
    """Hopper has no FP4 tensor cores: FP4 weights are dequantised inside an FP8 GEMM, so its matmul time is never
    below FP8's (only the weights' bytes shrink). Before, FP4 on an H100 ran at eta_flop, above the FP8 GEMM's
    measured rate: a prefill 31 % faster than FP8's (probe 11B)."""
    m, s = load_model(name), load_system(system)
    if arch.model_weight_bytes(m, "fp8") > G * s.chip.hbm_capacity_bytes:
        return
    for phase in ("prefill", "decode"):
        fp8, fp4 = (step(m, s, G=G, B=B if phase == "decode" else 1, S=S, phase=phase, precision=p)
                    for p in ("fp8", "fp4"))
        # (1 %: an FP8 release's own LM head stays BF16 at precision fp8, and is read as FP4 beside fp4 weights)
        assert float(np.asarray(fp4.t_math).max()) >= float(np.asarray(fp8.t_math).max()) * (1 - 0.01)
        assert float(np.asarray(fp4.t_weights).max()) <= float(np.asarray(fp8.t_weights).max()) * (1 + 1e-9)
    assert s.chip.widened_note("fp4") and "FP8 rate" in s.chip.widened_note("fp4")
    assert s.chip.widened_note("fp8") is None and load_system("hgx-b200").chip.widened_note("fp4") is None


def _kv_share_by_hand(parts, tp):
    """Σ bytes · max(1/tp, 1/heads) / Σ bytes over (bytes, heads) written out by hand."""
    return sum(b * max(1 / tp, 1 / h) for b, h in parts) / sum(b for b, _ in parts)


def test_probe11q_each_attention_group_splits_by_its_own_kv_heads():
    """Probe 11Q: Gemma 4 31B's 10 global layers keep 4 KV heads (512 wide, keys and values), its 50 sliding ones 16;
    on 8 tensor-parallel chips the global layers' heads are each held by two chips. The chip's share was the model's
    one K (16: 1/8 for every layer), so 64 sequences of 32k decoded on 8 H100 below the bytes the chip must read."""
    m, S = load_model("gemma-4-31b"), 32768
    sliding = 50 * 1024 * 16 * (256 + 256) * 2
    full = 10 * S * 4 * (512 + 512) * 2
    assert float(arch.kv_read_bytes(m, S)) == pytest.approx(sliding + full)
    share = _kv_share_by_hand([(sliding, 16), (full, 4)], 8)
    assert float(arch.kv_tp_share(m, S, None, 8)) == pytest.approx(share)
    st = step(load_model("gemma-4-31b"), load_system("hgx-h100"), G=8, B=64, S=S, phase="decode", precision="fp8")
    W = load_system("hgx-h100").chip.hbm_bandwidth_bytes_per_s
    assert float(st.t_kv) >= 64 * (sliding + full) * share / W  # no faster than the chip's bytes at the full rate


def test_probe11q_a_recurrent_state_splits_by_its_value_heads():
    """A hybrid's linear-attention state divides over its value heads under tensor parallelism, not over the
    attention's KV heads (Qwen3.5: 2, so the state was held at 1/2 on each of 8 chips) nor, beside MLA, not at all
    (Kimi K3's KDA state was read whole on every chip)."""
    for name, tp in (("qwen3.5-397b-a17b", 8), ("kimi-k3", 8), ("nemotron-3-nano-30b-a3b", 4)):
        m = load_model(name)
        state = 2 * arch.state_bytes_per_sequence(m)
        attn = float(arch.kv_read_bytes(m, 4096)) - state
        K = 1 if m.mla is not None else m.n_kv_heads
        share = _kv_share_by_hand([(attn, K), (state, m.linear_attention.value_heads)], tp)
        assert float(arch.kv_tp_share(m, 4096, None, tp)) == pytest.approx(share), name


def test_probe11q_one_cache_part_keeps_its_share_exactly():
    """A plain GQA or MLA cache: the share is max(1/tp, 1/K) (MLA: 1) to the last bit, as before the parts."""
    for name in ("llama-3.1-70b", "qwen3-32b", "deepseek-v3", "deepseek-v3.2"):
        m = load_model(name)
        for tp in (1, 2, 8, 16):
            want = 1.0 if m.mla is not None else max(1 / tp, 1 / m.n_kv_heads)
            assert float(arch.kv_tp_share(m, 4096, None, tp)) == want, (name, tp)


def test_probe11q_decode_attention_law_reads_the_chips_query_heads_per_kv_head():
    """Probe 11Q: an MQA model on 8 tensor-parallel chips holds a copy of its one KV head and N/8 query heads on each,
    so its decode kernel groups N/8 query heads per KV head, not N. The law was read at N/K: Falcon-7B (71 heads, 1 KV
    head) at G = 71, where TensorRT-LLM's measured kernel rereads the cache per query head (eta 0.014 at G = 64), made
    64 × 8k on 8 B200 43 ms of KV against the median engine's 1.0 ms."""
    from tokenmath.core.load import load_priors
    m, s = load_model("falcon-7b"), load_system("hgx-b200")
    pri = load_priors(s.chip.priors)
    t = {e: float(step(m, s, G=8, B=64, S=8192, phase="decode", priors=pri.for_engine(e)).t_kv)
         for e in (None, "trtllm")}
    assert t["trtllm"] < 1.5 * t[None]


def test_probe11q_one_vector_groups_decode_at_the_mla_kernels_law():
    """DeepSeek-V4 caches one 512-wide vector per entry that all 128 query heads read as key and value: FlashMLA's
    kind of kernel (the MLA law, by query heads per chip), not a GQA kernel at G = 128 — TensorRT-LLM's measured GQA
    kernel at G = 128 (eta 0.008) made 64 × 8k on 8 B200 read its KV in 6.5 ms against the median engine's 0.7."""
    from tokenmath.core.load import load_priors
    m, s = load_model("deepseek-v4-pro"), load_system("hgx-b200")
    pri = load_priors(s.chip.priors)
    t = {e: float(step(m, s, G=8, B=64, S=8192, phase="decode", priors=pri.for_engine(e)).t_kv)
         for e in (None, "trtllm", "sglang", "vllm")}
    assert max(t.values()) < 1.5 * min(t.values())
    d = step(m, s, G=8, B=64, S=8192, phase="decode", explain=True).t_kv.explain()
    assert "latent bytes one MLA decode kernel reads" in d


def test_a_layers_elementwise_bytes_per_token_by_hand():
    """Llama-3.1-8B (D 4,096, F 14,336, 32 query and 8 KV heads of 128), BF16 activations, one chip: two residual
    RMSNorms 2·4·D·2 = 65,536, SwiGLU 3·F·2 = 86,016, RoPE on Q and K 2·(32 + 8)·128·2 = 20,480; with FP8 GEMMs the
    QKV and gate-up inputs are cast (2·D·(2 + 1) = 24,576) and the activation writes FP8 (F·(2·2 + 1) = 71,680)."""
    from tokenmath.core.load import load_model
    from tokenmath.core.roofline import elementwise_bytes_per_token

    m = load_model("llama-3.1-8b")
    assert elementwise_bytes_per_token(m, 1, "bf16", 2.0) == 65_536 + 86_016 + 20_480
    assert elementwise_bytes_per_token(m, 1, "fp8", 2.0) == 65_536 + 24_576 + 71_680 + 20_480
    assert elementwise_bytes_per_token(m, 2, "bf16", 2.0) == 65_536 + 86_016 / 2 + 20_480 / 2  # norms on every rank


def test_a_prefill_pays_its_elementwise_kernels_bytes_and_a_decode_step_almost_none():
    """t_elt = L · T · a_tok / (W · eta): 16,384 prompt tokens of Llama-3.1-8B FP8 on an H200 stream 32 · 16,384 ·
    182,272 B ≈ 96 GB through the norms, RoPE and activation (~23 ms); a decode step of 8 sequences, 8 tokens."""
    from tokenmath.core.load import load_model, load_system
    from tokenmath.core.roofline import step

    m, s = load_model("llama-3.1-8b"), load_system("hgx-h200")
    pre = step(m, s, G=1, B=1, S=16_384, phase="prefill", precision="fp8")
    dec = step(m, s, G=1, B=8, S=16_384, phase="decode", precision="fp8")
    t_pre, t_dec = (float(x.extras["t_elt"]) for x in (pre, dec))
    W = s.chip.hbm_bandwidth_bytes_per_s
    assert t_pre == pytest.approx(32 * 16_384 * 182_272 / (W * 0.865), rel=0.01)
    assert t_dec == pytest.approx(t_pre * 8 / 16_384, rel=1e-9)
    assert t_pre < float(pre.t_overhead) < float(pre.t_step)


def test_probe_hb_a_step_streams_its_sampled_logits_and_gathers_them_over_tp():
    """After the LM head, SGLang gathers each sampled row's V/tp logit slices to every rank (a reorder copy after
    the all-gather), casts them to fp32 and takes argmax: 2·2 + 2 + 4 + 4 = 14 B a logit at tp > 1, 10 B on one
    chip (roofline.logits_pass_bytes). Llama-3.1-8B (V 128,256) FP8 on H200s: a decode step of 512 sequences streams
    512 · 128,256 · 14 B ≈ 0.92 GB on each of 8 chips; a prefill samples one row per prompt, as a decode step of
    that many sequences does; the gather moves (tp − 1)/tp of the row's BF16 logits over NVLink."""
    from tokenmath.core.roofline import logits_pass_bytes

    assert float(logits_pass_bytes(1)) == 10.0 and float(logits_pass_bytes(8)) == 14.0
    m, s = load_model("llama-3.1-8b"), load_system("hgx-h200")
    W = s.chip.hbm_bandwidth_bytes_per_s
    d8 = step(m, s, G=8, B=512, S=1_500, phase="decode", precision="fp8", explain=True)
    d1 = step(m, s, G=1, B=512, S=1_500, phase="decode", precision="fp8")
    t8, t1 = float(value_of(d8.extras["t_logits"])), float(d1.extras["t_logits"])
    eta = 512 * 128_256 * 14 / (W * t8)
    assert 0.5 < eta <= 1.0 and t1 == pytest.approx(t8 * 10 / 14, rel=1e-9)
    pre = step(m, s, G=1, B=4, S=1_000, phase="prefill", precision="fp8")
    dec = step(m, s, G=1, B=4, S=1_000, phase="decode", precision="fp8")
    assert float(pre.extras["t_logits"]) == pytest.approx(float(dec.extras["t_logits"]), rel=1e-9)
    gather = d8.t_comm.inputs["t_gather"]
    bw = 512 * 128_256 * 2 * 7 / 8 / (float(gather.value) - float(gather.inputs["lat"].value))
    assert 0.3 * s.scaleup_bw < bw <= 1.5 * s.scaleup_bw
    assert float(d1.t_comm) == 0.0
