"""How serving rows are read and what physics they meet: splits, checkpoint formats, engines' memory and
scheduling, expert all-to-all under attention TP, block-scaled FP8, per-layer kernel costs."""

from __future__ import annotations

import re

import pytest

from tokenmath.core import arch
from tokenmath.core.load import load_engine, load_model, load_priors, load_system
from tokenmath.core.roofline import Layout, aux_kernels_per_layer, kernel_format, step
from tokenmath.measure.validate import predict_row
from tokenmath.measure.validate.report import Prediction, Unexpressed
from tokenmath.measure.validate.match import Aliases
from tokenmath.measure.validate.rows import unit_scale
from tokenmath.measure.validate.serving import _layout, checkpoint_formats, sole_role, split_of
from tokenmath.serving.engine_memory import kv_pool_engine

DSV3 = load_model("deepseek-v3")
LLAMA = load_model("llama-3.1-70b")


@pytest.mark.parametrize("text, want", [
    ("TP8 (MoE: EP per doc defaults)", {"tp": 8, "ep_flag": True}),
    ("TP1 attention-DP8 EP8", {"tp": 1, "dp": 8, "ep": 8}),
    ("--tp 8 --dp 8 --enable-dp-attention", {"tp": 8, "dp": 8}),
    ("DEP8", {"dep": 8}),
    ("TP64 EP8 MoE-TP8", {"tp": 64, "ep": 8, "moe_tp": 8}),
    ("TP1 x 8 replicas", {"tp": 1, "dp": 8}),  # was one replica of one chip at the row's whole concurrency
    # engines' flags: vLLM's expert parallelism with its data-parallel size (the experts were replicated)
    ("--data-parallel-size 8 --enable-expert-parallel", {"dp": 8, "ep_flag": True}),
    ("tensor parallel 8, expert parallel", {"tp": 8, "ep_flag": True}),
])
def test_split_texts(text, want):
    assert split_of(text) == want


def test_layouts_of_both_tp_dp_conventions():
    al, sysm = Aliases(), load_system("hgx-b200")
    lay = lambda par, G: _layout({"parallelism": par}, DSV3, sysm, "fp8", G, None, al)[:3]  # noqa: E731
    assert lay("TP1 attention-DP8 EP8", 8) == (8, 1, Layout(tp=1, ep=8))  # aiconfigurator: tp · dp chips
    assert lay("--tp 8 --dp 8", 8)[:2] == (8, 1) and lay("--tp 8 --dp 8", 8)[2].tp == 1  # SGLang: tp chips
    assert lay("DEP8", 8)[2] == Layout(tp=1, ep=8)
    assert lay("TP8 (MoE: EP per doc defaults)", 8)[2] == Layout(tp=8, ep=8)
    dense = _layout({"parallelism": "TP2 DP4"}, LLAMA, sysm, "fp8", 8, None, al)
    assert dense[:2] == (2, 4)  # a dense model's data-parallel groups are replicas


def test_moe_dp_without_attention_dp_is_replicas():
    """'DP2-TP4' of an MoE on 8 chips with nothing saying the ranks share experts: two TP4 replicas (SGLang's --dp
    without --enable-dp-attention, separate engines); attention DP where the text says so (words, DEP, an EP beside
    it), where the row names vLLM (its MoE DP ranks share the expert layers), or where TP4 cannot hold the weights."""
    al, mi300 = Aliases(), load_system("mi300x-8")
    mixtral = load_model("mixtral-8x7b")
    lay = lambda par, src="", m=mixtral, prec="bf16": _layout({"parallelism": par, "source": src}, m, mi300, prec, 8,  # noqa: E731
                                                               None, al, [])[:3]
    assert lay("DP2-TP4") == (4, 2, Layout(tp=4, ep=1))
    assert lay("DP=2, TP=4") == (4, 2, Layout(tp=4, ep=1))
    for said in ("DP2-TP4 DP attention", "TP4 attention-DP2", "DP2 TP4 EP8", "DP2-TP4 expert parallel"):
        assert lay(said)[:2] == (8, 1), said
    assert lay("DP2-TP4", "vLLM blog")[:2] == (8, 1)
    said: list[str] = []
    _layout({"parallelism": "DP2-TP4"}, mixtral, mi300, "bf16", 8, None, al, said)
    assert said and "2 independent replicas of TP4" in said[0]
    h100 = load_system("hgx-h100")  # DeepSeek-V3 FP8 (~690 GB) cannot sit on 4 H100s: the ranks share the experts
    assert _layout({"parallelism": "DP2-TP4"}, DSV3, h100, "fp8", 8, None, al, [])[:2] == (8, 1)


def test_no_expert_all_to_all_under_attention_tp_over_every_chip():
    sysm = load_system("hgx-b200")
    kw = dict(G=8, B=64, S=2048, precision="fp8")
    tp8 = step(DSV3, sysm, layout=Layout(tp=8, ep=8), **kw)
    dp8 = step(DSV3, sysm, layout=Layout(tp=1, ep=8), **kw)
    tp8_only = step(DSV3, sysm, layout=Layout(tp=8, ep=1), **kw)
    assert float(tp8.v("t_comm")) == pytest.approx(float(tp8_only.v("t_comm")))  # the all-reduce alone
    assert float(dp8.v("t_comm")) > 0


def test_block_scaled_fp8_reads_its_own_kernels():
    pri = load_priors("h200-kernels")
    assert DSV3.fp8_block_size == 128
    assert kernel_format(DSV3, "fp8", pri) == "fp8_block"
    assert kernel_format(LLAMA, "fp8", pri) == "fp8"
    assert arch.bytes_per("fp8_block") == pytest.approx(1 + 4 / 128**2)


def test_checkpoint_formats_of_quantised_rows():
    al = Aliases()
    m, note = checkpoint_formats(LLAMA, "fp4", al.storage("FP4 (NVIDIA ModelOpt checkpoint)"))
    assert arch.weight_formats(m) == {**{k: "nvfp4" for k in arch.weight_formats(m)}, "embeddings": "bf16"}
    W = float(arch.model_weight_bytes(m, "fp4"))
    pc = arch.param_counts(m)
    assert W == pytest.approx(pc.by_kind["embeddings"] * 2 + (pc.total - pc.by_kind["embeddings"]) * 4.5 / 8)
    gpt_oss = load_model("gpt-oss-120b")  # its own checkpoint is FP4: kept
    assert checkpoint_formats(gpt_oss, "fp4", al.storage("MXFP4"))[0] is gpt_oss
    assert al.storage("int4 weight-only g32") == {"linear": "int4_g32"}


def test_nvfp4_release_keeps_its_bf16_modules():
    """NVIDIA's NVFP4 GLM-5 (hf_quant_config exclude_modules) keeps every attention projection and the sparse
    indexer in BF16: an NVFP4 row of GLM-5 streams those at 2 bytes, not 4.5 bits; an FP8 row is untouched."""
    al = Aliases()
    glm = load_model("glm-5")
    m, note = checkpoint_formats(glm, "fp4", al.storage("FP4"))
    assert arch.weight_formats(m)["attention"] == "bf16" and arch.weight_formats(m)["experts"] == "nvfp4"
    assert "release keeps attention bf16" in note and "nvidia--GLM-5-NVFP4" in m.sources["weight_dtypes"]
    plain, _ = checkpoint_formats(DSV3, "fp4", al.storage("FP4"))  # no release recorded: every matmul NVFP4
    assert arch.weight_formats(plain)["attention"] == "nvfp4"
    pc = arch.param_counts(glm)
    extra = float(arch.model_weight_bytes(m, "fp4")) - float(arch.model_weight_bytes(
        checkpoint_formats(glm.model_copy(update={"quantized_formats": {}}), "fp4", al.storage("FP4"))[0], "fp4"))
    assert extra == pytest.approx(pc.by_kind["attention"] * (2 - 4.5 / 8))
    assert checkpoint_formats(glm, "fp8", al.storage("FP8"))[0].weight_dtypes.get("attention") in (None, "fp8")


@pytest.mark.parametrize("name, kept", [
    ("minimax-m2", {"attention": "bf16", "router": "bf16", "experts": "nvfp4"}),  # nvidia/MiniMax-M2.5-NVFP4
    ("qwen3.5-397b-a17b", {"attention": "bf16", "shared_experts": "bf16", "experts": "nvfp4"}),  # incl. linear_attn
])
def test_nvfp4_releases_of_other_moes(name, kept):
    m, _ = checkpoint_formats(load_model(name), "fp4", Aliases().storage("NVFP4"))
    assert {k: arch.weight_formats(m)[k] for k in kept} == kept


def test_engines_memory_rules_order_and_sglang_reserve():
    m, s = load_model("llama-4-maverick"), load_system("hgx-h100")
    W = float(arch.model_weight_bytes(m, "fp8"))
    pools = {e: float(kv_pool_engine(load_engine(e), m, s, 8, W, tp=8)) for e in ("default", "trtllm", "sglang")}
    assert pools["sglang"] < pools["trtllm"] < pools["default"]
    C = s.chip.hbm_capacity_bytes
    R = (512 + 1.5 * 8192 + 2 * 512 + 8 / 8 * 1024) * 2**20  # server_args.py: MB of metadata, prefill, graphs, TP
    assert pools["sglang"] == pytest.approx(8 * (C - R) - W)
    assert load_engine("sglang")["policy"] == "continuous" and load_engine("trtllm")["policy"] == "chunked"


def test_attention_data_parallel_groups_each_hold_the_non_expert_weights():
    from tokenmath.serving.engine_memory import held_weight_bytes

    m, s, eng = load_model("llama-4-maverick"), load_system("hgx-h200"), load_engine("trtllm")
    W = float(arch.model_weight_bytes(m, "fp8"))
    W_exp = arch.n_moe_layers(m) * m.moe.n_routed_experts * float(arch.param_counts(m).expert)  # FP8: 1 B each
    assert held_weight_bytes(m, W, 8, 1, "fp8") - W == pytest.approx(7 * (W - W_exp), rel=1e-9)  # 7 more copies
    assert held_weight_bytes(m, W, 8, 8, "fp8") == W
    tp8, dp8 = (float(kv_pool_engine(eng, m, s, 8, W, tp=tp, precision="fp8")) for tp in (8, 1))
    assert dp8 < tp8 - 8 * 9e9  # ≥ 9 GB less KV on each of the 8 chips (also a larger activation workspace)
    dense = load_model("llama-3.1-70b")  # no experts: one copy whatever the split
    assert held_weight_bytes(dense, 1e11, 8, 1, "fp8") == 1e11


def test_every_layer_pays_its_small_kernels():
    assert aux_kernels_per_layer(LLAMA) == 4
    assert aux_kernels_per_layer(DSV3) == pytest.approx(5 + 3 * 58 / 61)


def test_an_unstated_split_takes_the_best_and_says_so():
    row = dict(id="TRT-X90", source="TensorRT-LLM blog", model="Llama 2 70B", precision="FP8",
               hardware="H200 SXM 141GB", n_chips="8", parallelism="best TP/PP/DP over 8 GPUs", batch="960",
               input_len="128", output_len="128", context_len="", metric="output_tokens_per_s_per_gpu",
               value="3803", unit="tokens/s/GPU", confidence="verbatim", notes="")
    r = predict_row(row, Aliases())
    assert r.kind == "run" and any("best the roofline finds" in a for a in r.assumptions)


def test_a_lower_bound_on_speed_is_checked_against_the_best_case_of_what_the_row_leaves_unstated():
    row = dict(id="TRT-X88", source="TensorRT-LLM blog", model="Llama 4 Maverick 17B-128E",
               precision="FP8 + Eagle3 speculative decoding (draft len 3)", hardware="B200 (DGX B200)", n_chips="8",
               parallelism="TP8 EP1, min-latency mode", batch="1", input_len="", output_len="", context_len="",
               metric="output_tokens_per_s_per_user", value=">1000", unit="tokens/s/user", confidence="paraphrased",
               notes="")
    r = predict_row(row, Aliases())
    assert r.kind == "per_user" and r.measured_op == ">"
    assert any("α = 1" in a for a in r.assumptions) and any("one-token prompt" in a for a in r.assumptions)
    # a point row leaving the same things unstated is checked the same way: a bound on the tool's best case
    point = predict_row({**row, "value": "1000"}, Aliases())
    assert point.best_case and point.measured_op == ">=" and point.predicted == pytest.approx(r.predicted)


def test_a_per_gpu_rate_at_a_user_speed_reads_its_unit_and_the_replica_sizes_its_chips_allow():
    from tokenmath.measure.validate.rows import unit_scope

    assert unit_scope("tokens/s/GPU", "throughput per GPU at 50 tok/s/user") == "gpu"  # the unit speaks first
    assert unit_scope("tokens/s", "output_tokens_per_s_per_user") == "user"
    row = dict(id="X-908", source="InferenceX-style dashboard", model="DeepSeek-R1", precision="FP4",
               hardware="B200", n_chips="8", parallelism="", batch="", input_len="1024", output_len="1024",
               context_len="", metric="throughput per GPU at 50 tok/s/user", value="2000", unit="tokens/s/GPU",
               confidence="verbatim", notes="SGLang")
    r = predict_row(row, Aliases())
    assert r.kind == "at_speed" and "replicas of 4, 8 chips" in r.why[0]
    per_chip = float(re.search(r"\((?:[\d.]+) tok/s/user, ([\d,.]+) tok/s per chip", r.why[0]).group(1).replace(",", ""))
    assert r.predicted == pytest.approx(per_chip, rel=2e-3)  # per GPU: the best point's rate per chip


@pytest.mark.parametrize("hardware, system", [("8xH200", "hgx-h200"), ("4xA100 80GB", "hgx-a100"),
                                              ("8× B200", "hgx-b200"), ("H100x8", "hgx-h100"), ("L40Sx4", "pcie-l40s-8"),
                                              ("RTX4090", "pcie-rtx-4090-8"), ("A100-80G", "hgx-a100"),
                                              ("A100-40G", "hgx-a100-40gb"), ("4xA100-40GB", "hgx-a100-40gb"),
                                              ("H100-SXM5-80GB", "hgx-h100"), ("8x H100 SXM", "hgx-h100"),
                                              ("H100 SXM5 80GB HBM3", "hgx-h100"), ("GB200 NVL72", "gb200-nvl72"),
                                              ("H100 PCIe Gen5", "pcie-h100-8"), ("H100 SXM5, PCIe Gen5", "hgx-h100")])
def test_a_count_glued_to_the_part_is_read(hardware, system):
    assert Aliases().system(hardware)[0].name == system


def test_rates_in_other_units_and_other_quantities_of_a_run():
    from tokenmath.measure.validate.rows import row_kind, unit_scale

    assert unit_scale("k tokens/s") == 1e3 and unit_scale("TPS/GPU") == 1.0 and unit_scale("tokens per second") == 1.0
    assert unit_scale("req/s") == 1.0 and unit_scale("sec") == 1.0
    assert row_kind({"metric": "Request throughput", "model": "x", "unit": "req/s"}) == "serving"
    base = dict(id="X-950", source="TensorRT-LLM perf overview", model="Llama 3.1 8B", precision="FP8",
                hardware="H200 SXM 141GB", n_chips="1", parallelism="TP1", batch="", input_len="1000",
                output_len="500", context_len="", metric="output throughput", value="1000", unit="tokens/s",
                confidence="verbatim", notes="")
    out = predict_row(base, Aliases()).predicted
    for metric, factor in (("total token throughput", 1500 / 500), ("input tokens/s", 1000 / 500),
                           ("request throughput", 1 / 500)):
        r = predict_row({**base, "metric": metric, "unit": "req/s" if "request" in metric else "tokens/s"}, Aliases())
        assert r.predicted == pytest.approx(out * factor, rel=1e-9), metric


@pytest.mark.parametrize("name, system", [("p5.48xlarge", "hgx-h100"), ("AWS p5e.48xlarge", "hgx-h200"),
                                          ("GCP a4-highgpu-8g", "hgx-b200"), ("Azure ND MI300X v5", "mi300x-8")])
def test_cloud_instances_name_their_node(name, system):
    assert Aliases().system(name)[0].name == system
    if " " not in name:
        assert load_system(name).name == system  # --on takes the instance's own name too


def test_each_attention_data_parallel_rank_prefills_its_own_token_budget():
    base = dict(id="X-960", source="SGLang blog", model="DeepSeek-V3", precision="FP8", hardware="H200 SXM 141GB",
                n_chips="8", parallelism="TP8", batch="", input_len="2000", output_len="100", context_len="",
                metric="output throughput", value="1000", unit="tokens/s", confidence="verbatim", notes="")
    dep = predict_row({**base, "parallelism": "DEP8"}, Aliases())
    assert any("prefill" in w for w in dep.why)
    al = Aliases()
    from tokenmath.measure.validate.serving import _layout
    assert _layout({"parallelism": "DEP8"}, DSV3, load_system("hgx-h200"), "fp8", 8, None, al)[2].dp(8) == 8
    # eight ranks each fill their 8,192-token budget: four prompts of 2,000 a rank, 32 a step
    r = predict_row({**base, "parallelism": "DEP8"}, al, explain=True)
    assert r.derivation.inputs["t_run"].inputs["n_prefill"].source.endswith("= 32")


def test_an_all_to_all_across_nodes_sends_a_token_once_to_each_remote_node():
    from tokenmath.core.roofline import node_dedup

    assert float(node_dedup(2, 8, 0.5)) == pytest.approx((1 - 0.5 ** 8) / 4)  # 2 nodes: 1 RDMA copy for 4
    assert float(node_dedup(9, 1, 8 / 9)) == pytest.approx(1.0)  # one expert a token: nothing to share
    m, s = DSV3, load_system("hgx-h800")
    kw = dict(G=16, B=256, S=2048, phase="decode", precision="fp8", layout=Layout(tp=1, ep=16), explain=True)
    st = step(m, s, **kw)
    assert "g_node" in st.t_comm.formula and st.t_comm.inputs["g_node"].value == pytest.approx(0.249, abs=1e-3)


@pytest.mark.parametrize("cols, notes, want", [
    (("1k", "1k"), "", (1024, 1024)), (("", ""), "ISL/OSL 1024/128", (1024, 128)),
    (("", ""), "input 1k, output 1k", (1024, 1024)), (("", ""), "ISL=2048 OSL=256", (2048, 256)),
    (("", ""), "8k/1k ISL/OSL", (8192, 1024)), (("", ""), "1.5k in / 200 out", (1500, 200)),
    (("", ""), "gpt-fast, 5-token prompt", (5, None)), (("", ""), "prompt 1k, 200 output tokens", (1024, 200)),
    (("", ""), "no lengths here", (None, None)), (("", ""), "ISL:OSL 1k:1k", (1024, 1024)),
    (("", ""), "1K/1K", (1024, 1024)), (("", ""), "InferenceMAX 8k/1k", (8192, 1024)),
    (("", ""), "1/8 of the node, 100k/s", (None, None)),
    # a bare pair after a word naming another quantity is not ISL/OSL (it was 32k in, 128k out)
    (("", ""), "context 32k/128k", (None, None)), (("", ""), "max batch 1k/2k", (None, None)),
    (("", ""), "ctx: 32k/128k, InferenceMAX 8k/1k", (8192, 1024)),
    # an arrow from prompt to output; TGI's 'sequence length … decode length'; words in the length columns
    (("", ""), "2K→256", (2048, 256)), (("", ""), "2048 -> 128", (2048, 128)), (("", ""), "latency 120 → 80 ms", (None, None)),
    (("", ""), "sequence length 512, decode length 128", (512, 128)), (("", ""), "sequence length 2048", (None, None)),
    (("input 1024", "output 256"), "", (1024, 256)), (("~550", "150 tokens"), "", (550, 150)),
    (("", ""), "128 input tokens and 2048 output tokens", (128, 2048)), (("", ""), "in/out 128/2048", (128, 2048)),
    (("", ""), "prompt 2048 / gen 128", (2048, 128)), (("", ""), "mean; 2K/128", (2048, 128)),
    (("", ""), "PCIe Gen5, 1/8 of a node", (None, None)),
    # an arrow or a 'gen' that is no length: a change of another quantity, a GPU generation's memory
    (("", ""), "concurrency raised 32 → 64", (None, None)), (("", ""), "scaled 4 -> 8 GPUs", (None, None)),
    (("", ""), "throughput 2,400 -> 4,000 after v0.6", (None, None)), (("", ""), "Llama 70B 2048 -> 128, TP8", (2048, 128)),
    (("", ""), "4th gen 80GB HBM3", (None, None)),
    # 'in=1k,out=8k'; a count before 'generated' with no 'tokens'; bare in/out only with '=' ('logged in: 5')
    (("in=1k", "out=1k"), "", (1024, 1024)), (("", ""), "vLLM, in=1k,out=8k", (1024, 8192)),
    (("", ""), "prompt 2k tokens, 256 generated", (2048, 256)), (("", ""), "logged in: 5, out: 3", (None, None)),
])
def test_lengths_from_the_columns_or_the_rows_text(cols, notes, want):
    from tokenmath.measure.validate.rows import lengths_of

    isl, osl, how = lengths_of({"input_len": cols[0], "output_len": cols[1], "notes": notes, "batch": "1"})
    assert (isl, osl) == want and (bool(how) == (cols == ("", "") and want != (None, None)))


@pytest.mark.parametrize("cols, want", [
    (("128/2048", ""), (128, 2048)), (("1k / 1k", ""), (1024, 1024)), (("", "128/2048"), (128, 2048)),
    (("128 tokens / 2048 tokens", ""), (128, 2048)), (("128/2048", "4096"), (128, 4096)),
])
def test_both_lengths_in_one_column(cols, want):
    """Probe round 10E: 'ISL/OSL' written in one length column (it was read as no lengths: a best case)."""
    from tokenmath.measure.validate.rows import lengths_of

    isl, osl, how = lengths_of({"input_len": cols[0], "output_len": cols[1], "notes": "", "batch": ""})
    assert (isl, osl) == want and "column as ISL/OSL" in how


@pytest.mark.parametrize("metric, want", [
    ("Total Output Throughput @ 128/2048", (128, 2048)), ("throughput @ 1000/1000", (1000, 1000)),
    ("tokens/s @ 8/16 GPUs", (None, None)), ("speedup @ 3/4 load", (None, None)),
])
def test_lengths_after_an_at_sign(metric, want):
    from tokenmath.measure.validate.rows import lengths_of

    assert lengths_of({"input_len": "", "output_len": "", "notes": "", "metric": metric})[:2] == want


def test_a_request_rate_per_minute_is_a_request_rate():
    base = dict(id="X-970", source="blog", model="Llama 3.1 70B", precision="FP8", hardware="8x H100", n_chips="8",
                parallelism="TP8", batch="concurrency 64", input_len="1024", output_len="1024", context_len="",
                metric="throughput", value="60", unit="req/min", confidence="verbatim", notes="")
    per_min = predict_row(base, Aliases()).predicted
    per_s = predict_row({**base, "unit": "req/s", "value": "1"}, Aliases()).predicted
    assert per_min == pytest.approx(60 * per_s, rel=1e-6)


def test_rows_driven_at_a_request_rate_run_an_open_loop_and_users_are_a_concurrency():
    from tokenmath.measure.validate.atload import quantity_of, under_load

    row = dict(id="X-980", source="vLLM blog", model="Llama 3.1 8B", precision="BF16", hardware="H100", n_chips="1",
               parallelism="TP1", batch="request rate 4 req/s", input_len="512", output_len="128", context_len="",
               metric="median TTFT", value="40", unit="ms", confidence="verbatim", notes="vLLM")
    assert under_load(row).rate_per_s == 4.0 and under_load({**row, "batch": "64 users"}).concurrency == 64
    for said in ("--num-concurrent-requests 8", "num_concurrent_requests=8", "c=8"):  # LLMPerf's flags; was batch 1
        assert under_load({**row, "batch": said}).concurrency == 8, said
    # a request rate measured at a stated QPS is driven at it (it ran at the engine's max load); one that only
    # restates the measured value is not
    driven = {**row, "batch": "QPS 16", "metric": "request throughput", "unit": "req/s"}
    assert under_load({**driven, "value": "12.5"}).rate_per_s == 16 and under_load({**driven, "value": "16"}) is None
    r = predict_row(row, Aliases())
    assert r.kind == "concurrency" and "Poisson arrivals at 4 requests/s" in r.why[0]
    assert under_load({**row, "batch": "", "metric": "request throughput", "unit": "req/s"}) is None  # measured, not driven
    for metric in ("TPS per user", "tokens per second per user", "interactivity (tok/s/user)"):
        assert quantity_of(metric, "tok/s")[0] == "tokens_per_s_per_user"
    # TGI's benchmark: 'decode latency' is one decode step (was an end-to-end latency, 200x off), 'prefill latency'
    # the prefill that yields the first token
    assert quantity_of("Decode latency p50", "ms")[0] == "tpot_s" and quantity_of("Prefill latency (p50)", "ms")[0] == "ttft_s"
    assert quantity_of("decode latency (e2e)", "s")[0] == quantity_of("end-to-end latency incl. prefill latency", "s")[0] == "e2e_s"


@pytest.mark.parametrize("n, hardware, want", [("2x8", "H100", 16), ("1 node", "8x H100", 8), ("", "8x H200", 8),
                                               ("", "2 nodes of 8x H100", 16), ("", "MI300X x 8", 8),
                                               ("", "GB200 NVL72 (72 GPUs)", 72), ("", "H100 80GB", None),
                                               ("", "4 GB200 NVL72", 288), ("", "GB300 NVL72 x 2", 144),
                                               ("", "72 GB200 NVL72", 72), ("", "36 GB200 NVL72", 36),
                                               ("", "H100x8", 8), ("", "8*H100", 8), ("", "RTX 4090 x2", 2),
                                               ("", "RTX 4090", None), ("", "MI300X", None), ("", "A100 40GB x 4", 4),
                                               ("", "4xA100-40GB", 4), ("", "TPU v5e-8", 8), ("", "v6e-256", 256),
                                               ("", "TPU v5p-128", 64), ("", "TPU v4-8", 4), ("", "GB200 NVL72", None),
                                               ("", "H100 SXM5 80GB HBM3", None), ("4", "H100x8", 4),
                                               # a TPU topology's last number is not a count after the part (was 4, 1)
                                               ("", "TPU v5e 2x4", 8), ("", "TPU v4 2x2x1", 4), ("", "v5e-8 (2x4)", 8),
                                               ("", "H100 2x4", None),
                                               # a count of TPU slices before the slice's name (was 2 chips)
                                               ("", "2x v5e-256 slices over DCN", 512), ("", "4 v5p-128 slices", 256),
                                               # nodes × chips before the part (was no match), nodes of a bare
                                               # count (was none), a bare count before the part (was none)
                                               ("", "2x8xH100", 16), ("", "2 x 8 x H100", 16),
                                               ("", "4 nodes of 8 H200", 32), ("", "8 nodes x 8 H100", 64),
                                               ("", "64 B200", 64), ("", "8 H100 80GB", 8)])
def test_chip_counts_from_the_count_column_or_the_hardware_string(n, hardware, want):
    from tokenmath.measure.validate.rows import chips_of

    assert chips_of({"n_chips": n, "hardware": hardware, "parallelism": "", "notes": ""})[0] == want


@pytest.mark.parametrize("metric, unit", [("TPOT", "ms"), ("decode latency per token", "ms/token"), ("TTFT", "ms"),
                                          ("end-to-end latency", "s")])
def test_a_latency_without_a_stated_load_is_one_static_batch(metric, unit):
    row = dict(id="X-990", source="blog", model="Llama 3.1 8B", precision="BF16", hardware="H100", n_chips="1",
               parallelism="TP1", batch="1", input_len="128", output_len="128", context_len="", metric=metric,
               value="8", unit=unit, confidence="verbatim", notes="")
    r = predict_row(row, Aliases())
    assert r.kind == "static" and "one static batch of 1 request(s)" in r.why[0]
    assert 1e-3 < r.predicted * unit_scale(unit) < 10  # seconds, not a token rate


@pytest.mark.parametrize("hardware, system", [("A100 PCIe 40GB", None), ("A100 80GB", "hgx-a100"),
                                              ("v5p-128", "tpu-v5p-pod"), ("Trillium", "tpu-v6e-256"),
                                              ("B200 180GB (DGX B200)", "hgx-b200")])
def test_a_stated_memory_size_that_contradicts_the_part_is_not_matched(hardware, system):
    s, why = Aliases().system(hardware)
    assert (s.name if s else None) == system
    if system is None:
        assert "a different part" in why


def test_a_rate_per_node_or_rack_under_load_is_divided_by_the_nodes():
    base = dict(id="X-995", source="blog", model="DeepSeek-R1", precision="FP4", hardware="GB200 NVL72", n_chips="72",
                parallelism="DEP72", batch="concurrency 4096", input_len="1024", output_len="1024", context_len="",
                metric="output throughput", value="1", unit="tokens/s", confidence="verbatim", notes="")
    total = predict_row(base, Aliases()).predicted
    rack = predict_row({**base, "unit": "tokens/s/rack"}, Aliases()).predicted
    gpu = predict_row({**base, "unit": "tokens/s/GPU"}, Aliases()).predicted
    assert rack == pytest.approx(total, rel=1e-9) and gpu == pytest.approx(total / 72, rel=1e-9)


@pytest.mark.parametrize("hardware, system", [("H100 NVL", "pcie-h100-nvl-8"), ("H200 NVL", "pcie-h200-nvl-8"), ("V100 PCIe", None),
                                              ("H100 PCIe", "pcie-h100-8"), ("A100-PCIE-80GB", "pcie-a100-8"),
                                              ("H100 SXM5", "hgx-h100"), ("GB200 NVL72", "gb200-nvl72")])
def test_a_form_factor_that_contradicts_the_part_is_not_matched(hardware, system):
    """A PCIe or NVL card (other memory, clocks and power) is not the SXM module; 'NVL72' is a rack, not a card."""
    s, why = Aliases().system(hardware)
    assert (s.name if s else None) == system, why
    if system is None:
        assert "another form factor" in why


@pytest.mark.parametrize("text, want", [("tensor parallel 8", {"tp": 8}), ("8-way TP", {"tp": 8}),
                                        ("tensor_parallel_size=8", {"tp": 8}), ("--tp-size 8", {"tp": 8}),
                                        ("expert parallel 16", {"ep": 16}), ("8-way tensor parallelism", {"tp": 8}),
                                        ("data parallel 2, tensor parallel 4", {"tp": 4, "dp": 2})])
def test_parallelism_in_words(text, want):
    from tokenmath.measure.validate.serving import split_of
    assert split_of(text) == want


@pytest.mark.parametrize("text, want", [("DP2-TP4", {"tp": 4, "dp": 2}), ("TP4xPP2", {"tp": 4, "pp": 2}),
                                        ("tp=4,pp=2", {"tp": 4, "pp": 2}), ("-tp 8", {"tp": 8}),
                                        ("--tp 8 --pp 2", {"tp": 8, "pp": 2}), ("MoE-TP4 EP2", {"moe_tp": 4, "ep": 2}),
                                        ("pipeline parallel 2, tensor parallel 4", {"tp": 4, "pp": 2})])
def test_parallelism_joined_by_dashes_and_times(text, want):
    """'DP2-TP4' is TP4 (a dash before 'tp' is a separator; 'MoE-TP' stays the experts' split); 'TP4xPP2' has PP2."""
    assert split_of(text) == want


def test_pipeline_stages_hold_a_share_of_the_weights():
    """A PP row's chips are PP micro-batch streams of its TP group, each chip holding 1/PP of the weights
    (roofline.Layout.pp), said as an assumption: 405B BF16 (810 GB) over TP8 PP2 on 16 H100s fits, where one TP
    group of 8 (687 GB) cannot hold it; TP8 alone on the same 16 chips is still refused for memory."""
    row = dict(id="X-1", source="vllm", model="Llama 3.1 405B", precision="fp8", hardware="H100", n_chips="16",
               parallelism="TP8 PP2", batch="concurrency 16", input_len="1024", output_len="1024", context_len="",
               metric="output throughput", value="300", unit="tok/s", confidence="", notes="")
    out = predict_row(row, Aliases())
    assert any("PP2: each pipeline's chips are read as 2 micro-batch streams" in a and "plus its 1 point-to-point hop"
               in a for a in out.assumptions)  # (the hops are priced: roofline.pipeline_hop_time)
    bf16 = {**row, "precision": "bf16", "batch": "bs=1", "metric": "TPOT", "unit": "ms"}
    out = predict_row(bf16, Aliases())
    assert isinstance(out, Prediction), out
    # a token passes both stages: the time of one step over all the weights on one TP group of 8
    assert 810e9 / 8 / 3.35e12 < out.predicted / 1e3 < 3 * 810e9 / 8 / 3.35e12
    out = predict_row({**bf16, "parallelism": "TP8"}, Aliases())
    assert not isinstance(out, Prediction) and "room" in out.reason


def test_pipeline_stages_are_counted_against_the_rows_chips():
    """A pipeline of PP stages of G chips spans G·PP of the row's chips: 'TP8 PP2' on 8 H100s is refused (it was
    read as one stream of 8 chips each holding half the weights — 16 chips' memory — and 405B BF16 'fit'); the
    engine rule, SGLang's TP-within-DP reading and an MoE's DP-replica rule choose within n_chips / PP, and an
    MoE's TP4 PP2 replica holds the weights a TP4 alone cannot."""
    row = dict(id="X-1", source="vllm", model="Llama 3.1 405B", precision="bf16", hardware="H100", n_chips="8",
               parallelism="TP8 PP2", batch="", input_len="1024", output_len="1024", context_len="",
               metric="output throughput", value="300", unit="tok/s", confidence="", notes="")
    out = predict_row(row, Aliases())
    assert not isinstance(out, Prediction) and "spans 16 chips, more than the row's 8" in out.reason
    out = predict_row({**row, "n_chips": "16"}, Aliases())
    assert isinstance(out, Prediction), out
    # dense DP2 PP2 on 16 chips: pipelines of TP4 (405B BF16 does not fit 8 chips; it was TP8 streams: 32 chips)
    out = predict_row({**row, "n_chips": "16", "parallelism": "DP2 PP2"}, Aliases())
    assert not isinstance(out, Prediction) and "4 × h100-sxm" in out.reason
    moe = {**row, "source": "blog", "model": "DeepSeek-V3", "precision": "fp8", "hardware": "H200", "n_chips": "16"}
    out = predict_row({**moe, "parallelism": "DP2-TP4 PP2"}, Aliases())
    assert isinstance(out, Prediction), out
    assert any("2 independent replicas of TP4 PP2" in a for a in out.assumptions), out.assumptions
    out = predict_row({**moe, "n_chips": "8", "parallelism": "TP4 DP2 dp-attention PP2"}, Aliases())
    assert isinstance(out, Prediction), out  # SGLang's TP4 with DP2 inside it, two stages: 8 chips


@pytest.mark.parametrize("text, K, draft", [
    ("speculative decoding with Llama 3.2 1B draft; 4 speculative tokens", 4, "llama-3.2-1b"),
    ("Llama-2-70B (int4) verifier + Llama-7B (int4) draft", 1, "llama-7b"),
    ("draft model: Llama-3.2-1B-Instruct, K=5", 5, "llama-3.2-1b"),
    ("speculative decoding, Llama-3.2-1B as the draft model, 5 drafts", 5, "llama-3.2-1b"),
    ("with EAGLE-3 draft, 3 draft tokens", 3, None),  # a drafting head, not a separate model
    ("FP8 + Eagle3 speculative decoding (draft len 3)", 3, None),
    ("top-K=8 sampling; MTP 2", 2, None),
])
def test_drafts_and_draft_models_are_read_as_tables_write_them(text, K, draft):
    from tokenmath.measure.validate.atload import speculation_of

    row = dict(id="X-1", source="", model="Llama 3.1 70B", precision="FP8", hardware="H100", n_chips="4",
               parallelism="TP4", batch="1", input_len="1024", output_len="512", context_len="",
               metric="output_tokens_per_s_per_user", value="95", unit="tokens/s", confidence="approx",
               notes=text + "; acceptance length 1.5")
    s = speculation_of(row, None, al=Aliases())
    assert not isinstance(s, str), s
    assert s.K == K and (s.draft.name if s.draft else None) == draft


def test_llama_bench_tests_and_gguf_formats_are_read():
    """llama-bench's 'pp512' is one 512-token prompt's prefill rate, 'tg128' 128 tokens decoded at batch 1; Q4_0
    weights stream at 4.5 bits (both were refused: unit 't/s', precision 'Q4_0')."""
    from tokenmath.core.units import PRECISION_BYTES

    row = dict(id="LC-1", source="llama.cpp", model="llama 7B Q4_0", precision="Q4_0", hardware="RTX 4090",
               n_chips="1", parallelism="", batch="", input_len="", output_len="", context_len="", metric="tg128",
               value="155 ± 1", unit="t/s", confidence="approx", notes="")
    tg, pp = predict_row(row, Aliases()), predict_row({**row, "metric": "pp512", "value": "11800"}, Aliases())
    assert tg.kind == "decode" and "decode at context 65" in " ".join(tg.why)
    assert pp.kind == "prefill" and "prefill 1 prompt(s) of 512" in pp.why[0]
    assert PRECISION_BYTES["gguf_q4_0"] == 4.5 / 8 and "gguf_q4_0" in " ".join(tg.why)
    assert predict_row({**row, "batch": "512"}, Aliases()).predicted == tg.predicted  # llama-bench's n_batch: tokens
    f16 = predict_row({**row, "precision": "F16"}, Aliases())
    assert 0.25 < f16.predicted / tg.predicted < 0.4  # a weight-bound step: 16 bits a weight against 4.5


def test_probe5_reading_footnotes_hyphenated_scopes_and_lengths_in_one_column():
    """Round-13 probes: a footnote mark on the value ('7,200†' was refused as no number) is dropped, and the footnote
    the notes give joins the metric ('* total (input+output) tokens'); 'per-user' is a per-user speed (it was read
    as the run's output tokens/s, 94× off); '≈ 400 tok/s' in the value cell; both lengths in the input_len column."""
    from tokenmath.measure.validate.atload import quantity_of
    from tokenmath.measure.validate.rows import lengths_of, unit_scope, with_unit, without_footnote

    assert without_footnote({"value": "~7,200†", "notes": "", "metric": "m"})["value"] == "~7,200"
    assert without_footnote({"value": "~25 ms†", "notes": "", "metric": "m"})["value"] == "~25 ms"
    r = with_unit({"value": "12,400* tok/s", "unit": "", "notes": "TRT; * total (input+output) tokens", "metric": "throughput"})
    assert (r["value"], r["unit"]) == ("12,400", "tok/s") and quantity_of(r["metric"], r["unit"])[0] == "total_tokens_per_s"
    assert without_footnote({"value": "8*", "notes": "8*H100", "metric": "m"})["metric"] == "m"  # no footnote there
    assert with_unit({"value": "≈ 400 tok/s", "unit": "", "metric": "decode speed"})["unit"] == "tok/s"
    assert quantity_of("per-user throughput", "tok/s")[0] == "tokens_per_s_per_user"
    assert unit_scope("", "output tokens/s per-GPU") == "gpu" and unit_scope("", "super node rate") == "total"
    assert unit_scope("tok/s", "throughput/GPU at 20 tok/s/user") == "gpu"  # the speed it was held at is no scope
    assert lengths_of({"input_len": "ISL 1024 / OSL 128", "output_len": "", "notes": ""})[:2] == (1024, 128)


def test_probe5_a_sweep_of_loads_is_refused_and_the_batch_may_sit_in_the_notes():
    """'concurrency 1-64' was read as concurrency 1; a batch the notes state ('bs=32') was batch 1; an engine's
    limit ('max batch 256') or a sweep in the notes is no batch."""
    from tokenmath.measure.validate.atload import swept_load
    from tokenmath.measure.validate.rows import batch_of

    row = dict(id="X-13", source="vLLM blog", model="Llama 3.1 8B", precision="BF16", hardware="H100", n_chips="1",
               parallelism="TP1", batch="concurrency 1-64", input_len="1024", output_len="128", context_len="",
               metric="TTFT", value="25-180", unit="ms", confidence="approx", notes="")
    out = predict_row(row, Aliases())
    assert isinstance(out, Unexpressed) and "sweep of loads" in out.reason
    assert swept_load({**row, "batch": "concurrency 64"}) is None and swept_load({**row, "batch": "bs=1-8"})
    assert [batch_of({"batch": "", "notes": n}) for n in ("bs=32, prompt 4k", "max batch 256", "batch 1-64",
                                                           "batch 8192 tokens", "global batch 256")] == [32, None, None, None, None]
    assert batch_of({"batch": "concurrency 8", "notes": "bs=4"}) is None  # the column speaks first


def test_probe5_each_disaggregated_pool_reads_its_own_split():
    """'prefill EP32, decode EP72': a decode rate per node is the decode pool's EP72 (it read the first split, the
    prefill's EP32, for both roles); a clause naming neither role is kept."""
    from tokenmath.measure.validate.serving import role_split

    assert split_of(role_split("PD disaggregation, prefill EP32, decode EP72", "decode").lower()) == {"ep": 72}
    assert split_of(role_split("prefill pool: 1 worker TP2; decode pool: 2 workers TP4", "prefill").lower()) == {"tp": 2}
    assert split_of(role_split("DEP32 decode + prefill workers", "decode").lower()) == {"dep": 32}
    assert role_split("TP8, context 8k", "decode") == "TP8, context 8k"  # one role named: nothing to choose
    base = dict(id="X-14", source="SGLang blog", model="DeepSeek-V3", precision="FP8", hardware="H100", n_chips="96",
                parallelism="PD disaggregation, prefill EP32, decode EP72", batch="", input_len="2000",
                output_len="100", context_len="", metric="output throughput per node", value="22.3k",
                unit="tok/s/node", confidence="approx", notes="")
    r = predict_row(base, Aliases())
    same = predict_row({**base, "parallelism": "PD disaggregation, decode EP72"}, Aliases())
    assert r.kind == "decode" and r.predicted == pytest.approx(same.predicted, rel=1e-9)


def test_probe5_speed_bounds_pools_glued_units_and_shares():
    """'TPS/user ≥ 100' holds a rate to a speed (it was a max-load run); 'token throughput' is tokens/s and 'per
    decode GPU' per GPU (refused, and read as a total); 'xPyD' and '2 prefill (TP4) + 2 decode (TP4)' are
    disaggregated (a max-load run of all chips); '12.3s', 'approx. 350 ms' in the value cell; a count with its nodes
    beside it in parentheses is the whole ('H200 x 16 (2 nodes)' was 32); a percentile the simulator does not give
    (p75) under load is refused (it was the mean; p95 was too, until the simulator gave one); a percentage says what
    it is."""
    from tokenmath.measure.validate.atload import under_load
    from tokenmath.measure.validate.rows import chips_of, disaggregated, measured_part, unit_scope, with_unit

    row = dict(id="X-15", source="InferenceMAX", model="Llama 3.1 8B", precision="BF16", hardware="H100",
               n_chips="1", parallelism="TP1", batch="", input_len="1024", output_len="1024", context_len="",
               metric="throughput per GPU (TPS/user ≥ 100)", value="3300", unit="", confidence="approx", notes="")
    assert under_load(row).user_speed == 100 and unit_scope("", row["metric"]) == "gpu"
    assert with_unit({**row, "metric": "total token throughput per GPU"})["unit"].lower() == "tokens/s/gpu"
    assert unit_scope("", "output tokens/s per decode GPU") == "gpu"
    assert disaggregated({"parallelism": "xPyD: 2 prefill (TP4) + 2 decode (TP4)"})
    assert disaggregated({"parallelism": "2 prefill (TP4) + 2 decode (TP4)"})
    assert not disaggregated({"notes": "2 prefill steps then 128 decode steps"})
    assert [(with_unit({"value": v, "unit": "", "metric": "TTFT"})["value"], with_unit({"value": v, "unit": "", "metric": "TTFT"})["unit"])
            for v in ("12.3s", "approx. 350 ms", "1.2ms")] == [("12.3", "s"), ("~350", "ms"), ("1.2", "ms")]
    assert measured_part("goodput @ P90 TTFT 2s and P90 TPOT 100ms") == "goodput"
    assert chips_of({"n_chips": "", "hardware": "H200 x 16 (2 nodes)", "parallelism": ""})[0] == 16
    assert chips_of({"n_chips": "", "hardware": "32 H200 (4 nodes)", "parallelism": ""})[0] == 32
    load = {**row, "metric": "ITL p75", "unit": "ms", "value": "9.5", "batch": "concurrency 16"}
    out = predict_row(load, Aliases())
    assert isinstance(out, Unexpressed) and "p75" in out.reason
    share = predict_row({**row, "metric": "SLO attainment", "value": "90%"}, Aliases())
    assert isinstance(share, Unexpressed) and "percentage" in share.reason


def test_a_p95_under_load_is_the_simulators_p95(monkeypatch):
    """genai-perf, NIM and LLMPerf print p95 beside p50/p90/p99: under load it is read off the simulated run's p95 (of
    the ITL histogram, the TTFTs), not its mean; a percentile the simulator does not give stays refused."""
    import tokenmath.measure.validate.atload as atload
    from tokenmath.measure.validate.atload import quantity_of

    runs, real = [], atload.simulate

    def spy(*a, **k):
        runs.append(real(*a, **k))
        return runs[-1]

    monkeypatch.setattr(atload, "simulate", spy)
    row = dict(id="X-16", source="genai-perf", model="Llama 3.1 8B", precision="BF16", hardware="H100", n_chips="1",
               parallelism="TP1", batch="concurrency 16", input_len="1024", output_len="1024", context_len="",
               metric="ITL p95", value="9.5", unit="ms", confidence="approx", notes="")
    for metric, unit, key in (("ITL p95", "ms", "itl_s"), ("TTFT", "ms (P95)", "ttft_s")):
        runs.clear()
        out = predict_row({**row, "metric": metric, "unit": unit}, Aliases())
        q = runs[0][key]  # the prior basis' run (the second is the spec sheet's bound)
        assert out.predicted == pytest.approx(1e3 * q["p95"], rel=1e-12) and q["p95"] != q["mean"]
    for stat in ("p75", "p999", "p99.9"):
        out = predict_row({**row, "metric": f"ITL {stat}"}, Aliases())
        assert isinstance(out, Unexpressed) and stat in out.reason and "p95" in out.reason
    # the same statistics written as words: an ordinal percentile is its pNN (it was read as the mean)
    assert [quantity_of(m, u)[1] for m, u in (("TTFT 95th percentile", "ms"), ("ITL", "ms (90th pct)"),
                                               ("99th-percentile E2E latency", "s"), ("TTFT", "ms"))] == \
        ["p95", "p90", "p99", "mean"]
    out = predict_row({**row, "metric": "ITL 75th percentile"}, Aliases())
    assert isinstance(out, Unexpressed) and "p75" in out.reason
    from tokenmath.measure.validate.rows import measured_part
    assert measured_part("throughput per GPU at 99th percentile TPOT < 50 ms") == "throughput per GPU"  # a limit


def test_probe5_the_new_rules_leave_lookalikes_alone():
    """Lookalikes of the round's rules: a footnote saying what is left out joins no metric; a batch after 'prefill'
    or 'chunked' in the notes is no sequence count; a sweep in the notes beside a load the batch column states is
    the study around the row; 'TP8 (prefill) / TP4 (decode)' splits by role."""
    from tokenmath.measure.validate.atload import swept_load
    from tokenmath.measure.validate.rows import batch_of, without_footnote
    from tokenmath.measure.validate.serving import role_split

    r = without_footnote({"value": "1,234*", "metric": "throughput", "notes": "* excluding prefill time"})
    assert (r["value"], r["metric"]) == ("1,234", "throughput")
    assert batch_of({"batch": "", "notes": "chunked prefill batch 2048"}) is None
    assert swept_load({"batch": "concurrency 64", "notes": "swept concurrency 1-256", "metric": "", "parallelism": ""}) is None
    assert split_of(role_split("TP8 (prefill) / TP4 (decode)", "decode").lower()) == {"tp": 4}


def test_review4_lookalikes_of_the_probe5_rules_are_not_read():
    """Review of round 13: '1000 generated prompts' was an output length of 1000, 'MTP generates 2 tokens per step'
    one of 2, 'time out = 600 s' one of 600; 'CUDA graphs up to batch 512' and a URL's '?bs=32' were the batch;
    'nodes with 2 TB host RAM' was 2 chips; a mixed batch's '4 prefill + 60 decode requests' was a disaggregated
    deployment; 'and p95 TTFT < 2 s' after a limit was read as the statistic measured; 'TPS/user > 2x baseline' a speed
    of 2; and the sweep beside a batch column's load ('concurrency 1 to 256') set the concurrency to 1."""
    from tokenmath.measure.validate.atload import under_load
    from tokenmath.measure.validate.rows import batch_of, disaggregated, hardware_count, lengths_of, measured_part

    def osl(notes):
        return lengths_of({"input_len": "", "output_len": "", "notes": notes})[1]
    assert [osl(n) for n in ("1000 generated prompts; output 128", "MTP generates 2 tokens per step",
                             "request time out = 600 s", "prompt 1024, 256 generated", "in=1k/out=8k")] == \
        [128, None, None, 256, 8192]
    assert [batch_of({"batch": "", "notes": n}) for n in ("CUDA graphs up to batch 512", "see https://x.org/run?bs=32",
                                                          "bs=32, prompt 1k tokens")] == [None, None, 32]
    assert hardware_count("H100 SXM (nodes with 2 TB host RAM)")[0] is None and hardware_count("4 nodes of 8 H200")[0] == 8
    assert not disaggregated({"notes": "mixed batch per step: 4 prefill + 60 decode requests"})
    assert disaggregated({"notes": "4 prefill + 4 decode workers"})
    assert measured_part("output throughput at p99 TPOT < 50 ms and p95 TTFT < 2 s") == "output throughput"
    row = {"batch": "", "parallelism": "TP1", "metric": "output throughput", "unit": "tokens/s", "value": "5000"}
    assert under_load({**row, "notes": "TPS/user > 2x baseline"}) is None
    assert under_load({**row, "notes": "TPS/user >= 50"}).user_speed == 50
    assert under_load({**row, "batch": "32", "notes": "concurrency 1 to 256 swept in the blog"}) is None


def test_probe6_neuron_degrees_latencies_totals_and_rates_per_dollar():
    """Round-14 probes: Neuron's 'tp_degree=64' is TP64 (the row ran on 4 of a trn2.48xlarge's 16 chips, by the
    memory rule); NxD's 'token generation latency' is one decode step (it was the end-to-end time, 1,000× off) and
    its 'context encoding latency' the prefill; a 'total throughput' counts input and output tokens (it was output
    only); a rate per dollar written '/$' is refused (it was read as tokens/s)."""
    from tokenmath.measure.validate.atload import quantity_of
    from tokenmath.measure.validate.rows import ratio_reason

    assert split_of("tp_degree=64") == {"tp": 64} and split_of("pp_degree: 2, tp_degree 8") == {"tp": 8, "pp": 2}
    assert [quantity_of(m, "ms")[0] for m in ("Token Gen Latency (P50)", "token_generation_model latency p99",
                                              "Context Encoding Latency", "e2e latency")] == \
        ["tpot_s", "tpot_s", "ttft_s", "e2e_s"]
    assert [quantity_of(m, "tok/s")[0] for m in ("Total throughput", "total output throughput", "throughput")] == \
        ["total_tokens_per_s", "output_tokens_per_s", "output_tokens_per_s"]
    assert "normalised by cost" in ratio_reason({"metric": "output tokens/s/$", "unit": "tok/s/$", "value": "2500"})
    assert ratio_reason({"metric": "output tokens/s", "unit": "tok/s", "value": "2500"}) is None
    row = dict(id="X-17", source="AWS Neuron docs", model="Llama-3.1-70B-Instruct", precision="BF16",
               hardware="trn2.48xlarge", n_chips="", parallelism="tp_degree=64", batch="1", input_len="2048",
               output_len="256", context_len="", metric="TPOT (P50)", value="14.5", unit="ms", confidence="approx",
               notes="")
    assert "on 16 chip(s)" in predict_row(row, Aliases()).why[0]


def test_probe6_a_latency_at_a_stated_context_is_a_step_at_that_context():
    """A TPOT at a batch and a context_len, no prompt length ('32k context (1k output)' in the context column, or
    '32768'), is the decode step at that KV length; it was checked as a best case over a one-token prompt, 3.1×
    under the step at 32k."""
    from tokenmath.measure.validate.rows import context_of, lengths_of

    assert [context_of({"context_len": t}) for t in ("32k context (1k output)", "ctx=8192", "8k", "", "32k/128k")] == \
        [32768, 8192, 8192, None, None]
    assert lengths_of({"input_len": "", "output_len": "", "notes": "", "context_len": "32k (1k output)"})[1] == 1024
    assert lengths_of({"input_len": "", "output_len": "", "notes": "1,000 output tok/s"})[1] is None
    row = dict(id="X-18", source="blog", model="Llama 3.1 70B", precision="FP8", hardware="8x H100", n_chips="8",
               parallelism="TP8", batch="64", input_len="", output_len="", context_len="32k context (1k output)",
               metric="TPOT", value="38", unit="ms", confidence="approx", notes="")
    at = predict_row(row, Aliases())
    plain = predict_row({**row, "input_len": "32767", "output_len": "2", "context_len": ""}, Aliases())
    assert at.predicted == pytest.approx(plain.predicted, rel=1e-9)


def test_probe6_other_locales_digits_gguf_k_quants_and_llama_cpp_timings():
    """Values as other locales write them ('12 345', '12.345,6', '2.4×10^5': refused as no number); GGUF k-quants
    (Q4_K_M, the most common Ollama download, was refused as an unknown precision) at their file-average bits;
    llama.cpp's / Ollama's 'eval rate' is one request's decode (it was a max-load run of 8,192 sequences) and
    'prompt eval rate' one prompt's prefill (refused for no output length)."""
    from tokenmath.core.units import COMPUTE_FORMAT, PRECISION_BYTES
    from tokenmath.measure.validate.rows import parse_measured

    assert [parse_measured(t).value for t in ("12 345", "12\u202f345,6", "12.345,6", "1.234.567", "2.4×10^5",
                                              "2.4 x 10⁵", "1.2E+04")] == \
        pytest.approx([12345, 12345.6, 12345.6, 1234567, 2.4e5, 2.4e5, 1.2e4])
    assert parse_measured("12.345").value == 12.345 and parse_measured("8 x 10") is None  # a lone dot is a decimal
    assert parse_measured("1 234-1 500").kind == "range"
    al = Aliases()
    assert [al.storage(p)["linear"] for p in ("Q4_K_M", "GGUF q5_k_m", "Q6_K")] == ["gguf_q4_k_m", "gguf_q5_k_m", "gguf_q6_k"]
    assert 4.5 < PRECISION_BYTES["gguf_q4_k_m"] * 8 < 5 and PRECISION_BYTES["gguf_q6_k"] * 8 == 6.5625
    assert COMPUTE_FORMAT["gguf_q4_k_m"] == "int8"
    row = dict(id="OL-1", source="Ollama", model="llama3.1:8b", precision="Q4_K_M", hardware="RTX 4090",
               n_chips="1", parallelism="", batch="", input_len="512", output_len="", context_len="",
               metric="prompt eval rate", value="6,400", unit="tokens/s", confidence="approx", notes="")
    pp = predict_row(row, al)
    assert pp.kind == "prefill" and "prefill 1 prompt(s) of 512" in pp.why[0]
    tg = predict_row({**row, "metric": "eval rate", "value": "120", "input_len": ""}, al)
    assert "batch 1 as stated" in tg.why
    assert "engine batch" in " ".join(predict_row({**row, "metric": "throughput", "input_len": ""}, al).why)


def test_probe6_a_words_own_x_is_no_count_glued_to_the_part():
    """'CloudMatrix384' (the paper's own spelling) was read as 384 × 'CloudMatri' and matched nothing; a count glued
    after a part follows its digit or capital ('H100x8', 'L40Sx4', 'l40sx4'); 'GB200NVL72' is GB200 NVL72."""
    from tokenmath.measure.validate.rows import hardware_count

    al = Aliases()
    assert al.system("CloudMatrix384")[0].name == "cloudmatrix-384" and hardware_count("CloudMatrix384")[0] is None
    assert al.system("GB200NVL72")[0].name == "gb200-nvl72"
    assert [hardware_count(h)[0] for h in ("H100x8", "L40Sx4", "l40sx4", "A100*8", "H200×8")] == [8, 4, 4, 8, 8]


def _probe7_row(**kw) -> dict:
    base = dict(id="P7-X", source="blog", model="Llama 3.1 8B", precision="BF16", hardware="H100 SXM", n_chips="1",
                parallelism="", batch="", input_len="", output_len="", context_len="", metric="", value="",
                unit="", confidence="approx", notes="")
    return {**base, **kw}


def test_probe7_lmdeploys_out_unit_and_tgis_decode_token_latency_and_shards():
    """LMDeploy's 'out tok/s' is output tokens/s (it was refused as an unknown unit); TGI's benchmark 'Decode (token)'
    latency is one decode step (it was read as end-to-end, 100× off) and its '--num-shard 8' a TP8 (it was the
    engine rule's replica of 4 Gaudi2 chips)."""
    from tokenmath.measure.validate.atload import quantity_of

    assert unit_scale("out tok/s") == 1.0
    assert quantity_of("Decode (token) latency avg", "ms")[0] == "tpot_s"
    assert quantity_of("Decode (step) latency", "ms")[0] == "tpot_s"
    assert split_of("--sharded true --num-shard 8") == {"tp": 8} and split_of("num_shard=4") == {"tp": 4}
    row = _probe7_row(batch="32", input_len="512", output_len="128", metric="Decode (token) latency avg",
                      value="13.2", unit="ms")
    r = predict_row(row, Aliases())
    assert r.kind == "static" and 2 < r.predicted < 30
    assert predict_row(_probe7_row(batch="64", input_len="1", output_len="512", metric="token throughput (out tok/s)",
                                   value="3420", unit="out tok/s"), Aliases()).kind == "run"
    gaudi = _probe7_row(model="Llama 2 70B", hardware="8x Gaudi2", n_chips="", parallelism="--sharded true --num-shard 8",
                        batch="bs=128", input_len="1024", output_len="1024", metric="throughput", value="2650",
                        unit="tokens/s")
    assert not any("engine rule" in a for a in predict_row(gaudi, Aliases()).assumptions)


def test_probe7_llama_bench_names_its_files_type_after_the_model():
    """llama-bench prints 'llama 7B Q4_0' and 'llama 8B Q4_K - Medium': the type is the precision where the column is
    empty (the row ran as the checkpoint's BF16, about 3× slow), and its size word is no sibling of the model ('Medium'
    refused every model); 'llama 8B' is a Llama 3.x 8B."""
    from tokenmath.measure.validate.rows import gguf_type_of

    assert gguf_type_of("llama 8B Q4_K - Medium") == ("llama 8B", "Q4_K_M")
    assert gguf_type_of("llama 7B Q4_0") == ("llama 7B", "Q4_0") and gguf_type_of("qwen2 7B F16") == ("qwen2 7B", "F16")
    assert gguf_type_of("gpt-oss 20B MXFP4 MoE") == ("gpt-oss 20B MXFP4 MoE", "")
    row = _probe7_row(model="llama 8B Q4_K - Medium", precision="", hardware="NVIDIA GeForce RTX 4090",
                      metric="tg128", value="150.3 ± 0.2", unit="t/s")
    r = predict_row(row, Aliases())
    assert r.matched["model"]["entry"] == "llama-3.1-8b" and any("'Q4_K_M' from the model's name" in a
                                                                  for a in r.assumptions)
    q4 = predict_row({**row, "model": "llama 7B Q4_0"}, Aliases())
    bf = predict_row({**row, "model": "llama 7B"}, Aliases())
    assert q4.predicted > 2.5 * bf.predicted  # 4.5 bits a weight against 16


def test_probe7_mlc_q4f16_and_exl2_and_mig_slices():
    """MLC-LLM's q4f16_1 is a Q4_0 block (4.5 bits; it was refused as unknown); an EXL2 quantisation (any average bits
    per weight) is refused with the reason; a MIG slice is no whole chip (it was priced as a whole H100)."""
    al = Aliases()
    assert al.precision("q4f16_1")[0] == "int4" and al.storage("q4f16_1")["linear"] == "gguf_q4_0"
    exl2 = predict_row(_probe7_row(model="Llama 2 7B", precision="EXL2 4.0 bpw", hardware="RTX 4090", batch="1",
                                   metric="decode speed", value="205", unit="t/s"), al)
    assert isinstance(exl2, Unexpressed) and "EXL2" in exl2.reason
    system, why = al.system("H100 MIG 3g.40gb")
    assert system is None and "MIG instance (MIG 3g.40gb)" in why
    assert al.system("A100 (1g.10gb)")[0] is None and al.system("H100 SXM")[0] is not None


def test_probe7_lengths_a_dataset_was_cut_to_are_no_lengths():
    """'OpenOrca (filtered, max 1024 in / 1024 out)' states limits; the run was read at 1024 / 1024."""
    from tokenmath.measure.validate.rows import lengths_of

    assert lengths_of({"notes": "OpenOrca (filtered, max 1024 in / 1024 out), request rate inf"})[:2] == (None, None)
    assert lengths_of({"notes": "up to 2k input, 256 output"})[:2] == (None, 256)
    assert lengths_of({"notes": "1024 in / 128 out"})[:2] == (1024, 128)


def test_probe7_a_floor_on_a_rate_is_checked_on_the_best_case_and_its_best_split():
    """'30,000+ TPS' and '> 100 tokens/s' with no lengths were refused for want of an input length, though a floor on a
    rate bounds the best case as a point does; with the split unstated the best split over the row's chips is taken
    (a per-user floor on 8 B200s took the engine rule's 4-chip replica)."""
    row = _probe7_row(model="DeepSeek-R1 671B", precision="FP4", hardware="DGX B200 (8 GPUs)", n_chips="",
                      batch="max throughput", metric="throughput", value="30,000+", unit="TPS")
    r = predict_row(row, Aliases())
    assert isinstance(r, Prediction) and r.measured_op == ">=" and any("one-token prompt" in a for a in r.assumptions)
    assert any("best the roofline finds over the row's 8 chips" in a for a in r.assumptions)
    user = predict_row({**row, "batch": "", "metric": "tokens per second per user", "value": ">250", "unit": "TPS/user"},
                       Aliases())
    assert user.kind == "per_user" and any("over the row's 8 chips" in a for a in user.assumptions)
    slow = predict_row({**row, "metric": "TTFT", "value": "> 2", "unit": "s", "batch": "1"}, Aliases())
    assert isinstance(slow, Unexpressed)  # a time bounded above the best case bounds nothing


def test_probe7_a_stated_batch_on_chips_of_unstated_split_is_one_replicas():
    """Qwen's speed table, batch 1 on 2 A100s: one request on a TP2 replica; it was two 1-chip replicas' output, two
    requests' worth."""
    row = _probe7_row(model="Qwen2.5-72B-Instruct-GPTQ-Int4", precision="", hardware="A100 80GB", n_chips="2",
                      input_len="1", metric="Speed (tokens/s)", value="47.5", unit="",
                      notes="vLLM 0.6.3, batch size 1, generating 2048 tokens")
    r = predict_row(row, Aliases())
    assert any("one replica over the row's 2 chips serves the stated batch of 1 (TP2" in a for a in r.assumptions)
    one = predict_row({**row, "n_chips": "1"}, Aliases())
    assert one.predicted < r.predicted < 2 * one.predicted


def test_probe7_input_counted_with_cache_hits_ratios_written_with_words_and_hints_for_names():
    """DeepSeek's '73.7k tokens/s input (including cache hits)' counts tokens the prefill did not compute (it was a
    best case that failed); '1.4x vs H100' is a ratio (refused as no number); a name matching nothing gets the
    nearest entries."""
    row = _probe7_row(model="DeepSeek-V3/R1", precision="FP8", hardware="H800 (8 per node)", n_chips="",
                      parallelism="prefill: EP32 DP32; decode: EP144 DP144; PD disaggregation",
                      metric="average prefill throughput per node (input, incl. cache hits)", value="73.7k",
                      unit="tokens/s/node")
    r = predict_row(row, Aliases())
    assert isinstance(r, Unexpressed) and "prefix-cache hits" in r.reason
    decode = predict_row({**row, "metric": "average decode throughput per node (output)", "value": "14.8k"}, Aliases())
    assert isinstance(decode, Prediction)
    for value in ("1.4x vs H100", "up to 7x over baseline", "3× faster"):
        out = predict_row(_probe7_row(metric="throughput", value=value), Aliases())
        assert isinstance(out, Unexpressed) and "ratio" in out.reason, value
    al = Aliases()
    assert al.model("Llama 3.7 8B")[1].endswith("did you mean llama-3.1-8b, llama-3-8b, ministral-8b?")
    assert "did you mean" in al.system("RTX 4080")[1] and "did you mean" not in al.model("Foo-Bar-9000")[1]


def test_probe7_a_concurrency_counted_per_gpu_or_replica():
    """'concurrency 256 per GPU' on eight 1-chip replicas is 256 clients each; it was 256 over all eight (32 each)."""
    from tokenmath.measure.validate.atload import under_load

    row = _probe7_row(model="Llama 3.1 70B", precision="FP8", hardware="MI325X x8", n_chips="", parallelism="TP1 DP8",
                      batch="concurrency 256 per GPU", input_len="2048", output_len="2048", metric="total throughput",
                      value="55,000", unit="tokens/s")
    assert under_load(row).concurrency_per == "gpu"
    assert under_load({**row, "batch": "concurrency 64 per replica"}).concurrency_per == "replica"
    assert under_load({**row, "batch": "concurrency 256"}).concurrency_per == ""
    assert "closed loop at concurrency 256 per replica (8 replica(s)" in predict_row(row, Aliases()).why[0]


def test_a_closed_loop_row_that_names_no_engine_mixes_prompts_into_the_decode_steps():
    """The default engine summarises TensorRT-LLM and vLLM, which both put a new prompt into the running decode steps:
    a row under load that names no engine runs the chunked scheduler, not prefill-first (whose stalled decodes keep
    identical clients in lockstep: a whole concurrency's prompts in every TTFT)."""
    assert load_engine("default")["policy"] == "chunked" and load_engine("sglang")["policy"] == "continuous"
    row = dict(id="X-990", source="NIM docs", model="Llama 3.1 70B", precision="FP8", hardware="4 x H100 SXM",
               n_chips="4", parallelism="TP4", batch="concurrency 100", input_len="1000", output_len="1000",
               context_len="", metric="TTFT avg", value="260", unit="ms", confidence="approximate", notes="")
    r = predict_row(row, Aliases())
    assert "default scheduling: chunked" in r.why[0]
    sglang = predict_row({**row, "id": "X-991", "notes": "SGLang"}, Aliases())
    assert "sglang scheduling: continuous" in sglang.why[0] and sglang.predicted > 2 * r.predicted


def test_disaggregated_pools_are_read_with_their_workers():
    """Each pool's workers and split as tables write them: 'N prefill worker(s) (split)', 'prefill pool: 1 worker
    TP2', 'instances x 2 GB200', 'xPyD' beside each role's split; no worker counts (or one role only): None."""
    from tokenmath.measure.validate.serving import pools_of

    p = pools_of("1 prefill worker (TP1 attention-DP4 EP4) + 4 decode workers (TP8 EP8) (trtllm)")
    assert (p["prefill"][0], p["decode"][0]) == (1, 4)
    assert split_of(p["prefill"][1].lower()) == {"tp": 1, "dp": 4, "ep": 4}
    assert split_of(p["decode"][1].lower()) == {"tp": 8, "ep": 8}
    assert [v[0] for v in pools_of("2 prefill (TP4) + 2 decode (TP4)").values()] == [2, 2]
    assert [v[0] for v in pools_of("prefill pool: 1 worker TP2; decode pool: 2 workers TP4").values()] == [1, 2]
    inst = pools_of("4 prefill instances x 2 GB200 + 1 decode instance x 8 GB200; DP+EP")
    assert (inst["prefill"][0], inst["prefill"][2], inst["decode"][0], inst["decode"][2]) == (4, 2, 1, 8)
    x = pools_of("1P4D; prefill TP4 EP4, decode DEP8")
    assert (x["prefill"][0], x["decode"][0]) == (1, 4) and split_of(x["decode"][1].lower()) == {"dep": 8}
    # a role named with its own split and no count is one worker of it ('EP8 prefill': a split's number, not a count)
    for text in ("PD disaggregation, prefill EP32, decode EP72", "TP8 (prefill) / TP4 (decode)",
                 "DEP8 prefill + TP8 decode", "--disaggregation-mode prefill (TP1) + --disaggregation-mode decode (TP1)"):
        assert [v[0] for v in pools_of(text).values()] == [1, 1], text
    assert pools_of("PD disaggregation, prefill and decode on separate nodes") is None
    assert pools_of("prefill and decode on the same GPUs") is None


def test_disaggregated_pools_counted_after_their_role():
    """A pool's count written after its role, as TensorRT-LLM, Dynamo and dashboards write it: 'ctx: 2 x TP4', 'prefill
    2x TP8', 'prefill: TP4 ×2', 'ctx TP2 x2', 'prefill GPUs: 3', 'prefill workers 4', TensorRT-LLM's keys
    'num_ctx_servers=2, ctx_tp_size=4'; a comma inside a pool's brackets stays in its clause ('prefill: 4 nodes (EP32,
    DP32); decode: 18 nodes (EP144, DP144)' read the decode's DP32). These were read as aggregated replicas."""
    from tokenmath.measure.validate.serving import pools_of

    def counts(text):
        p = pools_of(text)
        return (p["prefill"][0], p["decode"][0], p["prefill"][3], split_of(p["prefill"][1].lower()),
                split_of(p["decode"][1].lower()))

    assert counts("ctx: 2 x TP4 (attention DP); gen: 1 x DEP12")[:2] == (2, 1)
    assert counts("Dynamo SGLang disagg: prefill 2x TP8, decode 1x DEP8")[:2] == (2, 1)
    assert counts("prefill: TP4 ×2, decode: DEP16")[:2] == (2, 1)
    assert counts("ctx TP2 x2 + gen TP4 x1")[:2] == (2, 1)
    assert counts("prefill GPUs: 3; decode GPUs: 1")[:3] == (3, 1, "chip")
    assert counts("prefill workers 4 (TP4 each), decode workers 1 (DEP56)")[:2] == (4, 1)
    assert counts("num_ctx_servers=2, ctx_tp_size=4; num_gen_servers=1, gen_tp_size=16, gen_enable_attention_dp=true") \
        == (2, 1, "worker", {"tp": 4}, {"tp": 16, "dp_flag": True})
    assert counts("prefill: 4 nodes (EP32, DP32); decode: 18 nodes (EP144, DP144)") == \
        (4, 18, "node", {"ep": 32, "dp": 32}, {"ep": 144, "dp": 144})
    inst = pools_of("prefill: 2 instances x 12 GPUs (EP12); decode: 1 instance x 32 GPUs (DEP32)")
    assert (inst["prefill"][0], inst["prefill"][2], inst["decode"][0], inst["decode"][2]) == (2, 12, 1, 32)
    assert split_of("tp_size=8") == {"tp": 8} and split_of("tp-size: 4") == {"tp": 4}


def test_a_whole_deployments_prefill_rate_counts_every_prefill_instance():
    """'4 prefill instances x 2 GB200 + 1 decode instance x 8 GB200' with a prefill rate in tokens/s (the deployment's)
    is 4 instances' worth: 8 prefill chips at the per-GPU reading's rate (it was one instance's, 4× low)."""
    row = dict(id="X-D9", source="vLLM blog", model="DeepSeek-R1", precision="NVFP4", hardware="GB200", n_chips="16",
               parallelism="4 prefill instances x 2 GB200 + 1 decode instance x 8 GB200; DP+EP", batch="",
               input_len="2048", output_len="2048", context_len="", metric="prefill throughput", value="209600",
               unit="tokens/s", confidence="paraphrased", notes="")
    whole = predict_row(row, Aliases())
    per_gpu = predict_row({**row, "id": "X-D10", "metric": "prefill_tokens_per_s_per_gpu", "value": "26200",
                           "unit": "tokens/s/GPU"}, Aliases())
    assert whole.kind == per_gpu.kind == "prefill"
    assert whole.predicted == pytest.approx(8 * per_gpu.predicted, rel=1e-6)


def test_a_users_speed_in_a_disaggregated_deployment_is_its_decode_workers():
    """A tokens/s per user with both pools stated is a decode worker's speed, in the decode pool's split: 'prefill
    workers 4 (TP4 each), decode workers 1 (DEP56)' is the DEP56 decode worker's (it ran TP4 EP56 on 224 chips)."""
    row = dict(id="X-D12", source="Dynamo", model="DeepSeek-R1", precision="FP4", hardware="GB200 NVL72", n_chips="72",
               parallelism="prefill workers 4 (TP4 each), decode workers 1 (DEP56)", batch="", input_len="8192",
               output_len="1024", context_len="", metric="tokens/s per user", value="60", unit="tokens/s/user",
               confidence="approximate", notes="")
    pools = predict_row(row, Aliases())
    alone = predict_row({**row, "id": "X-D13", "parallelism": "DEP56"}, Aliases())
    assert pools.kind == alone.kind == "per_user" and pools.predicted == pytest.approx(alone.predicted, rel=1e-9)


def test_a_row_that_gives_both_pools_is_disaggregated_without_the_word():
    """'context: 1 instance TEP8, generation: 1 instance DEP8' at a concurrency is that deployment (it was two
    aggregated replicas of 8); a disaggregated row under load whose pools have no counts is refused in one line (it
    was simulated as aggregated replicas)."""
    row = dict(id="X-D7", source="TensorRT-LLM disaggregated", model="DeepSeek-R1", precision="NVFP4", hardware="B200",
               n_chips="16", parallelism="context: 1 instance TEP8, generation: 1 instance DEP8",
               batch="concurrency 256", input_len="1024", output_len="1024", context_len="", metric="TPOT", value="22",
               unit="ms", confidence="approximate", notes="")
    p = predict_row(row, Aliases())
    assert isinstance(p, Prediction) and "disagg" in p.why[0] and "1 prefill worker(s) of 8 chips" in p.why[0]
    u = predict_row({**row, "id": "X-D8", "parallelism": "PD disaggregation, prefill and decode on separate nodes"},
                    Aliases())
    assert isinstance(u, Unexpressed) and "pools' workers are not stated" in u.reason
    # a requests/s per GPU with no load: refused, and the reason no longer says the pools' counts are missing
    rps = predict_row({**row, "id": "X-D11", "parallelism": "1P1D (prefill TP1, decode TP1)", "batch": "",
                       "metric": "throughput", "value": "2.2", "unit": "requests/s/GPU"}, Aliases())
    assert isinstance(rps, Unexpressed) and "maximum load" in rps.reason and "does not give" not in rps.reason


def test_a_disaggregated_row_under_load_simulates_its_pools(monkeypatch):
    """A disaggregated row at a concurrency runs the disagg policy with its pools (it was an aggregated continuous run
    of 3 replicas of 4 chips for '1P (DEP4) + 1D (DEP8)' on 12 chips): the workers form gcd(n_p, n_d) groups, the
    deployment's concurrency is spread over the groups, each pool keeps its own split, and a rate per GPU divides by
    both pools' chips."""
    import tokenmath.measure.validate.atload as atload

    calls, real = [], atload.simulate

    def spy(*a, **k):
        calls.append(k)
        return real(*a, **k)

    monkeypatch.setattr(atload, "simulate", spy)
    row = dict(id="X-D1", source="Dynamo sglang", model="DeepSeek-V3", precision="FP8", hardware="H200", n_chips="32",
               parallelism="2 prefill workers (TP1 attention-DP8 EP8) + 2 decode workers (TP8 EP8) (sglang)",
               batch="concurrency 256", input_len="2048", output_len="256", context_len="", metric="TPOT", value="30",
               unit="ms", confidence="verbatim", notes="")
    out = predict_row(row, Aliases())
    assert isinstance(out, Prediction), out
    k = calls[0]
    assert (k["policy"], k["concurrency"], k["prefill_workers"], k["decode_workers"]) == ("disagg", 128, 1, 1)
    assert (k["prefill_chips"], k["decode_chips"]) == (8, 8)
    assert (k["prefill_layout"].tp, k["prefill_layout"].ep, k["layout"].tp, k["layout"].ep) == (1, 8, 8, 8)
    assert "2 group(s) of 1 prefill worker(s)" in out.why[0]
    calls.clear()
    x = predict_row({**row, "parallelism": "3 prefill workers (DEP8) + 2 decode workers (TP8 EP8)", "n_chips": "40"},
                    Aliases())
    assert (calls[0]["prefill_workers"], calls[0]["decode_workers"], calls[0]["concurrency"]) == (3, 2, 256)
    assert not any("n_chips" in a for a in x.assumptions)
    calls.clear()
    rate = predict_row({**row, "metric": "output tokens/s per GPU", "value": "1000", "unit": "tok/s/gpu"}, Aliases())
    r = real(load_model("deepseek-v3"), load_system("hgx-h200"), **calls[0])
    assert rate.predicted == pytest.approx(2 * r["output_tokens_per_s"] / 32, rel=1e-9)
    wrong = predict_row({**row, "n_chips": "24"}, Aliases())
    assert any("n_chips 24 is not the pools'" in a for a in wrong.assumptions)


# ---- probe round 8: large-scale and MoE serving rows as LMSYS, Dynamo, InferenceMAX, DeepSeek and Neuron write them

def _probe_row(**kw) -> dict:
    row = dict(id="X-P8", source="", model="DeepSeek-R1", precision="NVFP4", hardware="GB200", n_chips="",
               parallelism="", batch="", input_len="1024", output_len="1024", context_len="", metric="",
               value="1000", unit="tok/s/GPU", confidence="recalled", notes="")
    return {**row, **kw}


@pytest.mark.parametrize("said", ["wide EP with EPLB; MTP off", "speculation off", "no MTP",
                                  "without speculative decoding", "spec decode disabled", "MTP=0", "EAGLE: none"])
def test_speculation_the_row_says_was_off_is_no_speculation(said):
    """'MTP off', 'speculation off' named speculation and were read as it: a best case at K = 8, α = 1 (9 tokens a
    step) for a row measured without it."""
    from tokenmath.measure.validate.atload import drafts_stated, speculation_of

    row = _probe_row(notes=said)
    assert speculation_of(row, DSV3, best_case=True) is None and not drafts_stated(row)
    assert speculation_of({**row, "notes": "MTP=3, acceptance rate 0.8"}, DSV3).K == 3


def test_a_per_user_speed_written_approximately_or_in_tps_is_the_speed_the_rate_was_held_at():
    """'at ~100 tok/s/user' in the notes (a max-load run before, 13.7× off) and 'TPS/GPU at 100 TPS/user' (refused as
    speculation at max load before) are rates per GPU at a per-user speed."""
    from tokenmath.measure.validate.atload import under_load

    assert under_load(_probe_row(metric="tok/s/gpu", notes="at ~100 tok/s/user interactivity")).user_speed == 100
    assert under_load(_probe_row(metric="TPS/GPU at 100 TPS/user")).user_speed == 100
    assert under_load(_probe_row(metric="tokens/s/GPU", notes="at 30 tokens/s per user")).user_speed == 30
    assert under_load(_probe_row(metric="tokens per user")) is None


def test_an_acceptance_the_row_says_it_does_not_state_is_unstated():
    """'MTP=3 (acceptance unstated)' names no acceptance: the row is a bound on the best case α = 1 (it was a point,
    as if α = 1 were measured)."""
    from tokenmath.measure.validate.atload import acceptance_stated

    assert not acceptance_stated(_probe_row(notes="MTP=3 (acceptance unstated)"))
    assert acceptance_stated(_probe_row(notes="MTP=3, acceptance rate 0.87"))
    assert acceptance_stated(_probe_row(notes="EAGLE-3, acceptance length 3.4"))
    row = _probe_row(hardware="B200", n_chips="8", parallelism="TP8 (TRT-LLM) MTP", metric="TPS/GPU at 100 TPS/user",
                     value="2300", unit="TPS/GPU", notes="MTP=3 (acceptance unstated)")
    out = predict_row(row, Aliases())
    assert isinstance(out, Prediction) and out.best_case and "at ≥ 100 tok/s/user" in out.why[0]


def test_sglang_num_steps_are_the_drafts_and_a_stated_batch_runs_speculation():
    """SGLang's '--speculative-num-steps 3 … num-draft-tokens 4' drafts 3 tokens a step (its draft tokens count the
    verified one at topk 1), and a decode rate at a stated batch with speculation is that batch's speculative steps
    (it was refused as speculation at the engine's maximum load)."""
    row = _probe_row(model="GLM-4.5-FP8", precision="FP8", hardware="H200", n_chips="8", batch="1",
                     parallelism="--tp 8, EAGLE MTP (num-steps 3, topk 1, draft tokens 4)", input_len="1000",
                     output_len="1000", metric="single-request decode speed", value="120", unit="tok/s",
                     notes="accept length ~3.2")
    out = predict_row(row, Aliases())
    assert isinstance(out, Prediction), out
    assert out.kind == "decode_fixed" and "speculative decode at batch 1" in out.why[0] and "verify + 3 draft" in out.why[0]


def test_a_prefill_rate_counting_cache_hits_in_other_words_is_refused():
    row = _probe_row(model="DeepSeek-V3", precision="FP8", hardware="H800", parallelism="Prefill: EP32, DP32",
                     input_len="", output_len="", metric="prefill throughput per node", value="73700",
                     unit="input tokens/s per node", notes="including on-disk KV cache hits; 24h average")
    out = predict_row(row, Aliases())
    assert isinstance(out, Unexpressed) and "cache hits" in out.reason


def test_a_decode_rate_after_a_stated_prompt_with_its_output_unstated_is_a_bound_on_the_shortest_decode():
    """LMSYS's '22.3k output tokens/s per node for 2,000-token inputs' gives no output length: the shortest decode
    (least KV, most sequences held) is the best case; the row was refused."""
    row = _probe_row(model="DeepSeek-V3", precision="FP8", hardware="H100", parallelism="4 prefill nodes + 9 decode "
                     "nodes (EP72)", input_len="2000", output_len="", metric="decode throughput per node",
                     value="22300", unit="output tokens/s per node")
    out = predict_row(row, Aliases())
    assert isinstance(out, Prediction) and out.best_case and out.kind == "decode"
    assert any("output length not stated: the best over" in a for a in out.assumptions)


def test_pools_named_by_their_letters_or_counted_in_nodes_or_chips():
    """'1P(DEP4) 1D(DEP8)' gives each pool (it was an aggregated DEP4); '2 prefill nodes (TP8) + 2 decode nodes
    (DEP16)' is 2 TP8 workers and one DEP16 worker on 32 chips (it was two DEP16 workers, 48 chips); '32 prefill GPUs
    (EP32)' is one worker of 32 chips, not 32 workers."""
    from tokenmath.measure.validate.rows import disaggregated
    from tokenmath.measure.validate.serving import _pool_workers, pools_of

    p = pools_of("Dynamo-TRT, 1P(DEP4) 1D(DEP8)")
    assert (p["prefill"][0], p["decode"][0]) == (1, 1)
    assert split_of(p["prefill"][1].lower()) == {"dep": 4} and split_of(p["decode"][1].lower()) == {"dep": 8}
    assert disaggregated({"parallelism": "1P(DEP4)+1D(DEP8)"}) and pools_of("TP8 PP2") is None
    n = pools_of("2 prefill nodes (TP8) + 2 decode nodes (DEP16)")
    assert (n["prefill"][3], n["decode"][3]) == ("node", "node")
    assert _pool_workers(2, "node", 8, 8)[0] == 2 and _pool_workers(2, "node", 16, 8)[0] == 1
    c = pools_of("32 prefill GPUs (EP32) + 96 decode GPUs (EP96)")
    assert (c["prefill"][:1], c["prefill"][3]) == ((32,), "chip") and _pool_workers(32, "chip", 32, 8)[0] == 1
    assert pools_of("1 prefill worker (TP1 attention-DP4 EP4) + 4 decode workers (TP8 EP8)")["decode"][3] == "worker"


def test_disaggregated_pools_in_nodes_and_letters_under_load(monkeypatch):
    import tokenmath.measure.validate.atload as atload

    calls, real = [], atload.simulate
    monkeypatch.setattr(atload, "simulate", lambda *a, **k: calls.append(k) or real(*a, **k))
    row = _probe_row(precision="FP8", hardware="H200", n_chips="32", parallelism="2 prefill nodes (TP8) + 2 decode "
                     "nodes (DEP16)", batch="concurrency 512", input_len="4096", output_len="256")
    out = predict_row(row, Aliases())
    assert isinstance(out, Prediction), out
    assert (calls[0]["prefill_workers"], calls[0]["decode_workers"], calls[0]["prefill_chips"],
            calls[0]["decode_chips"]) == (2, 1, 8, 16)
    assert not any("n_chips 32 is not" in a for a in out.assumptions)
    calls.clear()
    predict_row({**row, "n_chips": "12", "hardware": "GB200", "parallelism": "disagg, 1P(DEP4) 1D(DEP8)"}, Aliases())
    assert (calls[0]["policy"], calls[0]["prefill_chips"], calls[0]["decode_chips"]) == ("disagg", 4, 8)


def test_a_whole_deployments_prefill_rate_is_its_prefill_pools():
    """Kimi K2 on 128 H200, '32 prefill GPUs (EP32) + 96 decode GPUs (EP96)': the cluster's input tokens/s are the 32
    prefill chips' (it was 4 prefill replicas over all 128, 3.4× off)."""
    row = _probe_row(model="Kimi K2 Instruct", precision="FP8", hardware="H200", n_chips="128",
                     parallelism="32 prefill GPUs (EP32) + 96 decode GPUs (EP96)", input_len="2000", output_len="100",
                     metric="prefill throughput (cluster)", value="224000", unit="tok/s")
    cluster = predict_row(row, Aliases())
    per_gpu = predict_row({**row, "unit": "tok/s/GPU", "value": "7000"}, Aliases())
    assert cluster.predicted == pytest.approx(32 * per_gpu.predicted, rel=1e-9)


def test_a_max_load_run_caps_each_attention_dp_rank_not_the_replica():
    """The rows' batch limit (CUDA graphs up to 8,192) is each scheduler's: under attention data parallelism every
    rank schedules and captures its own batch, so a DEP8 replica may hold 8 × 8,192 sequences; TP attention, one."""
    row = dict(id="X-995", source="TensorRT-LLM perf overview", model="DeepSeek-R1", precision="FP4", hardware="B200",
               n_chips="8", parallelism="TP1 attention-DP8 EP8", batch="max (offline)", input_len="128",
               output_len="128", context_len="", metric="total_output_throughput", value="100000",
               unit="tokens/s (whole TP group)", confidence="verbatim", notes="trtllm-bench")
    dep = predict_row(row, Aliases())
    tp = predict_row({**row, "id": "X-996", "parallelism": "TP8 EP8"}, Aliases())
    assert any("capped at 65536" in w for w in dep.why) and any("capped at 8192" in w for w in tp.why)


def test_a_row_that_overlaps_its_all_to_all_with_compute_hides_its_communication():
    """DeepSeek's two-micro-batch overlap, SGLang's TBO, vLLM's DBO: a row that says so is predicted with its
    communication behind the other micro-batch's compute (comm_overlap = 1, the upper bound), stated as an assumption."""
    from tokenmath.measure.validate.serving import micro_batch_overlap

    assert micro_batch_overlap({"parallelism": "DP attention + EP, DBO"}) == "DBO"
    assert micro_batch_overlap({"notes": "SGLang with two-batch overlap"}) == "two-batch overlap"
    assert micro_batch_overlap({"parallelism": "TP8 EP8", "notes": "TBOX"}) is None
    row = dict(id="X-997", source="blog", model="DeepSeek-R1", precision="FP8", hardware="H200", n_chips="16",
               parallelism="DP16 EP16", batch="64", input_len="2000", output_len="", context_len="2000",
               metric="decode tokens/s per GPU", value="2000", unit="tokens/s/GPU", confidence="approximate", notes="")
    plain, tbo = predict_row(row, Aliases()), predict_row({**row, "id": "X-998", "notes": "TBO on"}, Aliases())
    assert tbo.predicted > plain.predicted and any("comm_overlap = 1" in a for a in tbo.assumptions)


def test_a_count_of_instances_is_that_many_of_the_systems_chips():
    """'2x p5.48xlarge' with no n_chips: two instances of 8 H100s, 16 chips (it was read as 2)."""
    from tokenmath.measure.validate import COLUMNS

    r = {c: "" for c in COLUMNS}
    r.update(id="TRT-X9", model="Llama 3.1 70B", precision="FP8", hardware="2x p5.48xlarge", parallelism="TP8 PP2",
             batch="1", input_len="128", output_len="128", metric="output_tokens_per_s", value="40", unit="tokens/s")
    p = predict_row(r, Aliases())
    assert isinstance(p, Prediction) and any("2 × p5.48xlarge of 8 chips each, 16 chips" in w for w in p.why)


def _probe10b_row(**kw) -> dict:
    return _probe7_row(**{"id": "P10B-X", **kw})


def test_probe10b_mlx_lm_timings_and_a_bare_bit_width():
    """mlx_lm.generate prints 'Prompt: 1024 tokens, 350 tokens-per-sec' and 'Generation: 256 tokens, 18
    tokens-per-sec': the hyphenated unit was refused, 'Prompt' read as a decode at batch 1; now one prompt's prefill
    and one request's decode. A bare '4-bit' (mlx-community's conversions) was refused as no precision: MLX's group-64
    quantisation, 4.5 bits."""
    from tokenmath.core.units import PRECISION_BYTES

    assert unit_scale("tokens-per-sec") == 1.0 and unit_scale("tokens per sec") == 1.0
    al = Aliases()
    assert al.storage("4-bit")["linear"] == "int4_g64" and PRECISION_BYTES["int4_g64"] * 8 == 4.5
    assert al.precision("8bit")[0] == "int8" and al.precision("4 bit")[0] == "int4"
    row = _probe10b_row(model="Qwen3-235B-A22B 4bit", precision="4-bit", hardware="M3 Ultra", input_len="1024",
                        metric="Prompt", value="350", unit="tokens-per-sec")
    pp = predict_row(row, al)
    assert pp.kind == "prefill" and "prefill 1 prompt(s) of 1024" in pp.why[0]
    tg = predict_row({**row, "metric": "Generation", "value": "30", "input_len": ""}, al)
    assert isinstance(tg, Prediction) and "batch 1 as stated" in tg.why
    # a generation rate at a stated load stays a rate under that load
    loaded = predict_row({**row, "metric": "generation speed", "batch": "concurrency 8", "input_len": "1024",
                          "output_len": "256"}, al)
    assert loaded.kind == "concurrency"


def test_probe10b_tep_and_wide_ep_splits():
    """TensorRT-LLM's (and InferenceMAX's) 'TEP4' is attention TP4 with the experts four ways over the same chips (it
    was not read: the worker took the engine rule's replica); 'wide EP' is attention data-parallel with the experts over
    every rank (it was an EP flag on the engine rule's 4 chips of a 72-chip row)."""
    assert split_of("1P(TEP4) 2D(DEP8)") == {"dep": 8, "tep": 4}
    al, gb300 = Aliases(), load_system("gb300-nvl72")
    lay = lambda par, G: _layout({"parallelism": par}, DSV3, gb300, "fp4", G, None, al, [])[:3]  # noqa: E731
    assert lay("TEP4", 4) == (4, 1, Layout(tp=4, ep=4))
    assert split_of("disaggregated, wide EP") == {"ep_flag": True, "dp_flag": True}
    assert split_of("wide EP32")["dp_flag"] and split_of("large-scale expert parallelism")["dp_flag"]
    assert lay("disaggregated, wide EP", 72) == (72, 1, Layout(tp=1, ep=72))


def test_probe10b_a_decode_rate_held_to_a_speed_is_the_decode_batch_that_meets_it():
    """CloudMatrix384's '1,943 tokens/s per NPU at TPOT < 50 ms, KV 4K' was run through the frontier as 4,095-token
    prompts with 2-token answers (1.8 tokens/s per NPU); a disaggregated 'tok/s/gpu at 30 tok/s/user' went through an
    aggregated frontier of one decode worker and was divided over both pools (one of its two decode workers counted).
    Now the decode workers run the largest batch whose step meets the speed; with both pools stated the prefill
    workers cap the output and the rate is over all the chips."""
    al = Aliases()
    row = _probe10b_row(model="DeepSeek-R1", precision="INT8 (W8A8)", hardware="Ascend 910C (CloudMatrix384)",
                        n_chips="160", parallelism="decode EP320, PD disaggregated", context_len="4096",
                        metric="decode throughput per NPU", value="1943", unit="tokens/s/NPU", notes="TPOT < 50 ms")
    p = predict_row(row, al)
    assert p.kind == "decode" and any("meets ≥ 20 tok/s/user" in w for w in p.why)
    assert 200 < p.predicted < 20000  # a decode batch's rate per chip, not a trickle of 2-token answers
    step_ms = float(re.search(r"step ([\d.]+) ms", " ".join(p.why)).group(1))
    assert step_ms <= 50.0
    row = _probe10b_row(model="DeepSeek-R1-0528", precision="FP4", hardware="GB300 NVL72", n_chips="",
                        parallelism="Dynamo-TRT disagg, 1P(TEP4) 2D(DEP8)", input_len="1024", output_len="1024",
                        metric="tok/s/gpu at 30 tok/s/user", value="7000", unit="tok/s/gpu")
    d = predict_row(row, al)
    assert d.kind == "decode" and "1 prefill worker(s) of 4 chips + 2 decode worker(s) of 8 chips: 20 chips" in d.why[0]
    assert not any(a.endswith("the decode chips' rate") for a in d.assumptions)
    # the decode workers alone, per decode chip, where the pools are not given
    one = predict_row({**row, "parallelism": "disaggregated, DEP8", "n_chips": "8"}, al)
    assert one.kind == "decode" and one.predicted > d.predicted


def _p10(**kw) -> dict:
    """A serving row as probe round 10A wrote them: every column, the given ones filled."""
    from tokenmath.measure.validate import COLUMNS

    r = {c: "" for c in COLUMNS}
    r.update(id="P10-X1", confidence="recalled-approx", **kw)
    return r


def test_a_stated_memory_size_picks_the_part_of_that_size_over_a_vendor_named_sibling():
    """'NVIDIA A100 40GB': 'A100 40GB' holds the part's number and its memory, 'NVIDIA A100' (the 80 GB part's name)
    the number and a vendor word; both are wholly found in the string, and the one that says more of it wins (the row
    was refused: 40 GB stated, the 80 GB part matched)."""
    al = Aliases()
    for hw in ("NVIDIA A100 40GB", "A100 40GB", "NVIDIA A100-SXM4-40GB"):
        assert al.system(hw)[0].chip.name == "a100-40gb", hw
    for hw in ("NVIDIA A100", "A100", "NVIDIA A100 80GB"):
        assert al.system(hw)[0].chip.name == "a100-80gb", hw


def test_a_run_at_a_stated_batch_with_speculation_prefills_then_decodes_speculatively():
    """'output tokens/s' at batch 1, ISL/OSL 1000/1000, MTP with an 85 % acceptance: the prompt prefilled, then 1000
    tokens at tau a speculative step (it was refused as speculation at the engine's maximum load)."""
    row = _p10(model="DeepSeek-R1", precision="FP8", hardware="H200", n_chips="8", parallelism="TP8", batch="1",
               input_len="1000", output_len="1000", metric="output tokens/s", value="85", unit="tokens/s",
               notes="MTP with 1 draft token, acceptance rate 85%")
    out = predict_row(row, Aliases())
    assert isinstance(out, Prediction), out
    assert out.kind == "run" and "with speculation: prefill" in out.why[0] and "1.85 a speculative step" in out.why[0]
    plain = predict_row({**row, "notes": ""}, Aliases())
    assert plain.predicted < out.predicted  # 1.85 tokens a step at a little more than a step's time


@pytest.mark.parametrize("metric, notes, want", [
    ("single-request decode speed", "", 1),
    ("output tokens/s", "single stream", 1),
    ("decode speed", "one request", 1),
    ("output tokens/s", "", None),
    ("request throughput", "one request per second per client", None),  # a rate, not a batch
])
def test_single_request_words_are_batch_one(metric, notes, want):
    """'single-request decode speed' with the batch column empty is one sequence: it was read at the engine's batch
    (gpt-oss-20b on an H100 at 25,700 tokens/s against 260 measured)."""
    from tokenmath.measure.validate.rows import batch_of

    assert batch_of(_p10(metric=metric, notes=notes)) == want


def test_a_time_per_output_token_and_a_prefill_time_are_latencies():
    """'ms per output token' in ms is a TPOT (it was refused as a token rate against a time), 'prefill time' in s a
    TTFT (it was refused as no serving quantity)."""
    tpot = _p10(model="Llama 3.1 8B", precision="FP8", hardware="H100", n_chips="1", batch="1", input_len="128",
                output_len="2048", metric="ms per output token", value="4.2", unit="ms")
    out = predict_row(tpot, Aliases())
    assert isinstance(out, Prediction) and out.kind == "static" and out.predicted == pytest.approx(4.6, rel=0.3)
    pre = _p10(model="Llama-3.1-70B", precision="FP8", hardware="8x H100", n_chips="8", parallelism="TP8", batch="1",
               input_len="131072", metric="prefill time", value="7.5", unit="s")
    out = predict_row(pre, Aliases())
    assert isinstance(out, Prediction) and "TTFT" in out.why[0] and out.predicted == pytest.approx(7.4, rel=0.3)


def test_a_capacity_under_a_named_slo_is_a_rate_at_the_slos_speed_and_a_request_rate_is_never_a_time():
    """Sarathi-Serve's 'capacity (QPS) under relaxed P99 TBT SLO' with 'relaxed SLO P99 TBT 1 s' in the notes: a
    request rate at ≥ 1 token/s per user (it was read as a TBT and its TPOT of 27.6 ms compared with 1 QPS); and a
    metric naming a latency against a request-rate unit is refused, not compared."""
    from tokenmath.measure.validate.rows import measured_part

    assert measured_part("capacity (QPS) under relaxed P99 TBT SLO") == "capacity (QPS)"
    assert measured_part("goodput under TTFT and TPOT SLOs") == "goodput"
    row = _p10(model="Yi-34B", precision="fp16", hardware="A100 80GB", n_chips="2", parallelism="TP2",
               metric="capacity (QPS) under relaxed P99 TBT SLO", value="1.0", unit="QPS",
               notes="arxiv_summarization (median prompt 7.9K, median output 228 tokens); relaxed SLO P99 TBT 1 s")
    out = predict_row(row, Aliases())
    assert isinstance(out, Prediction) and out.kind == "at_speed" and "TPOT limit of 1 s" in " ".join(out.why)
    for notes in ("relaxed P99 TBT SLO 1 s", "SLO: TTFT 2.5 s, TBT 1 s"):
        assert predict_row({**row, "notes": "prompt 1730, output 415; " + notes}, Aliases()).kind == "at_speed", notes
    odd = predict_row({**row, "metric": "P99 TBT", "notes": "prompt 1730, output 415"}, Aliases())
    assert isinstance(odd, Unexpressed) and "different dimensions" in odd.reason


@pytest.mark.parametrize("source, want", [
    ("lmsys.org blog 'Achieving Faster Open-Source Llama3 Serving with SGLang Runtime (vs. TensorRT-LLM, vLLM)'",
     "sglang"),
    ("vLLM v0.6 blog: faster than SGLang and TensorRT-LLM", "vllm"),
    ("SGLang vs vLLM", "sglang"),
    ("benchmark compared with vLLM", "vllm"),  # only a comparison's engine: still the one named
    ("TensorRT-LLM perf overview", "trtllm"),
])
def test_the_engine_is_the_first_named_not_a_comparisons(source, want):
    """An SGLang blog comparing itself with TensorRT-LLM and vLLM ran SGLang (it was read as TensorRT-LLM: its
    kernels, its FP8 KV cache)."""
    from tokenmath.measure.validate.serving import engine_of

    assert engine_of({"source": source, "notes": "", "parallelism": ""}) == want


def test_a_million_token_length_is_read():
    """'1M' in a length column (or '1M-token prompt' in the notes) is 1,048,576 tokens, as '1k' is 1,024; it was
    unread, and the row's TTFT checked against a one-token prompt."""
    from tokenmath.measure.validate.rows import _length, context_of, lengths_of

    assert (_length("1M"), _length("1.5M"), _length("128K")) == (1048576, 1500000, 131072)
    assert lengths_of(_p10(input_len="1M"))[0] == 1048576
    assert lengths_of(_p10(notes="one 1M-token prompt; 16 MB buffers; 500 ms"))[0] == 1048576
    assert context_of(_p10(context_len="1M")) == 1048576


def test_context_parallelism_splits_a_prompts_prefill_over_its_groups():
    """Meta's context-parallel TTFT ('CP16 TP8' on 128 H100s, a 128K prompt): each of 16 groups of 8 chips prefills
    1/16 of the prompt's tokens and causal attention (it was one TP8 group prefilling the whole prompt, 7.7x
    slower); the decode, a rate or a load under CP is refused with the reason."""
    assert split_of("CP16 TP8") == {"cp": 16, "tp": 8}
    assert split_of("16-way context parallel, TP8")["cp"] == 16
    row = _p10(model="Llama 3 405B", precision="FP8 (row-wise)", hardware="H100 (Grand Teton)", n_chips="128",
               parallelism="CP16 TP8", batch="1", input_len="128K", metric="prefill latency", value="3.8", unit="s")
    cp = predict_row(row, Aliases())
    tp = predict_row({**row, "n_chips": "8", "parallelism": "TP8"}, Aliases())
    assert isinstance(cp, Prediction) and "16 context-parallel groups of 8 chip(s)" in cp.why[0]
    assert cp.predicted == pytest.approx(tp.predicted / 16, rel=0.1)  # compute-bound: 1/16 of the work a group
    dec = predict_row({**row, "metric": "TPOT", "unit": "ms", "output_len": "128"}, Aliases())
    assert isinstance(dec, Unexpressed) and "context parallelism" in dec.reason


def test_three_bit_and_w4a8_checkpoints_store_what_they_say():
    """'3-bit GPTQ' stores 3 bits and a group's scale and zero (it was read as 4-bit GPTQ, and OPT-175B refused for
    memory on one A100 it fits at 3 bits); 'W4A8KV4' (QServe) 4-bit weights at the INT8 rate and a 4-bit KV cache (it
    matched no rule). 'per-token latency' is a TPOT (it was read as the request's end-to-end latency)."""
    from tokenmath.core.units import COMPUTE_FORMAT, PRECISION_BYTES

    al = Aliases()
    assert al.precision("3-bit GPTQ")[:2] == ("int4", "bf16") and al.storage("3-bit GPTQ")["linear"] == "int3_g128"
    assert al.storage("GPTQ")["linear"] == "int4_g128"  # the 4-bit default unchanged
    assert al.precision("W4A8KV4")[:2] == ("w8a8", "int4") and al.storage("W4A8KV4")["linear"] == "w4a8_g128"
    assert COMPUTE_FORMAT["w4a8_g128"] == "int8" and PRECISION_BYTES["int3_g128"] < PRECISION_BYTES["int4_g128"]
    row = _p10(model="OPT-175B", precision="3-bit GPTQ", hardware="A100 80GB", n_chips="1", batch="1",
               input_len="128", output_len="128", metric="per-token latency", value="71", unit="ms")
    out = predict_row(row, Aliases())
    assert isinstance(out, Prediction) and "TPOT" in out.why[0] and 30 < out.predicted < 100


def test_a_kv_type_the_row_states_is_read_and_a_kv_memory_setting_states_none():
    """'FP8 weights + FP8 KV cache' is an FP8 cache as stated (it was the ModelOpt estimate 'the table does not state
    the KV dtype'); 'BF16 KV cache' beside a bare FP8 is a BF16 cache (it stayed FP8); TensorRT-LLM's
    'kv_cache_free_gpu_mem_fraction' states no type. A disaggregated rate per GPU under load is the deployment's over
    all its chips, and says so (it said the decode chips', while dividing by all)."""
    from tokenmath.measure.validate.serving import stated_kv_dtype

    assert stated_kv_dtype(_p10(precision="FP8 weights + FP8 KV cache (kv_cache_dtype=fp8)"))[0] == "fp8"
    assert stated_kv_dtype(_p10(notes="--kv-cache-dtype auto")) == (None, "kv-cache-dtype auto")
    assert stated_kv_dtype(_p10(notes="kv_cache_free_gpu_mem_fraction 0.90")) is None
    assert stated_kv_dtype(_p10(notes="including KV cache hits")) is None
    row = _p10(model="Llama-3.1-70B-Instruct", precision="FP8", hardware="H100 80GB", n_chips="2", parallelism="TP2",
               batch="concurrency 64", input_len="2000", output_len="500", metric="output token throughput",
               value="2200", unit="tok/s", notes="FP8 KV cache")
    out = predict_row(row, Aliases())
    assert "the KV cache in fp8, as the row states ('FP8 KV')" in out.why and not any("estimate" in a for a in
                                                                                       out.assumptions)
    bf = predict_row({**row, "notes": "BF16 KV cache"}, Aliases())
    assert "the KV cache in bf16, as the row states ('BF16 KV')" in bf.why and bf.predicted < out.predicted
    dis = _p10(model="Llama-3.3-70B-Instruct", precision="FP8", hardware="H100 80GB", n_chips="8",
               parallelism="disaggregated 2P1D: 2 prefill workers TP2 + 1 decode worker TP4", input_len="3000",
               output_len="150", metric="throughput per GPU", value="800", unit="tok/s/GPU", notes="concurrency 64")
    out = predict_row(dis, Aliases())
    assert any("over all its chips, prefill and decode" in a for a in out.assumptions)
    assert not any("decode chips' rate" in a for a in out.assumptions)


def test_a_normalized_latency_is_the_end_to_end_latency_over_the_output_length():
    """vLLM's and Orca's 'normalized latency' (s/token) is a request's end-to-end latency over its output tokens (it
    was read as the TPOT, without the prefill and the queueing)."""
    from tokenmath.measure.validate.atload import quantity_of

    assert quantity_of("normalized latency", "s/token")[0] == "norm_latency_s"
    row = _p10(model="OPT-13B", precision="FP16", hardware="A100 80GB", n_chips="1", batch="1", input_len="2000",
               output_len="20", metric="normalized latency", value="0.05", unit="s/token")
    norm, tpot = predict_row(row, Aliases()), predict_row({**row, "metric": "TPOT"}, Aliases())
    e2e = predict_row({**row, "metric": "end-to-end latency", "unit": "s"}, Aliases())
    assert norm.predicted == pytest.approx(e2e.predicted / 20, rel=1e-6) and norm.predicted > tpot.predicted


def test_diagnoses_count_pipeline_stages_and_name_the_early_release_only_for_tensorrt_llm():
    """Falcon-180B on TP4-PP2: each chip holds 1/8 of the weights, not 1/4 ('weights fill 104 % of HBM' was wrong);
    an SGLang 'v0.4.1' source is no early TensorRT-LLM release."""
    row = _p10(model="Falcon-180B", precision="fp16", hardware="A100 80GB", n_chips="8", parallelism="TP4-PP2",
               input_len="1730", output_len="415", metric="output throughput", value="100", unit="tokens/s")
    out = predict_row(row, Aliases())
    assert not any("weights fill 104%" in w for w in out.why)
    sg = _p10(source="lmsys.org SGLang v0.4.1 DeepSeek-V3 support", model="DeepSeek-V3", precision="FP8",
              hardware="8 x H200", n_chips="8", parallelism="TP8", batch="1", input_len="128", output_len="256",
              metric="decode speed", value="35", unit="tokens/s")
    assert not any("TensorRT-LLM v0.x" in w for w in predict_row(sg, Aliases()).why)


@pytest.mark.parametrize("notes, want", [
    ("--dataset-name random --random-input-len 1024 --random-output-len 128 --max-concurrency 64", (1024, 128)),
    ("--random-input-len=2000 --random-output-len=500 --request-rate 8", (2000, 500)),
    ("python -m sglang.bench_serving --random-input 1024 --random-output 1024", (1024, 1024)),
    ("--stddev-input-tokens 150 --mean-input-tokens 550 --mean-output-tokens 150", (550, 150)),  # LLMPerf
    ("prepare_dataset.py token-norm-dist --input-mean 1024 --output-mean 128 --input-stdev 0", (1024, 128)),
    ("trtllm-build --max_input_len 2048 --max_output_len 512", (None, None)),  # the engine's limits, no lengths
    ("input tokens 1024, output tokens 128", (1024, 128)),  # the comma ends the count (OSL was read as 1024)
])
def test_probe10c_lengths_in_a_benchmarks_flags(notes, want):
    """vLLM's '--random-input-len 1024 --random-output-len 128' (and '=1024'), LLMPerf's '--mean-input-tokens 550',
    trtllm-bench's '--input-mean 1024' are the requests' lengths: they were unread, and vllm bench serve rows checked
    as bounds on one-token prompts. A spread or an engine's limit is none; a comma after a count is not its digits."""
    from tokenmath.measure.validate.rows import lengths_of

    assert lengths_of(_p10(notes=notes))[:2] == want


def test_probe10c_a_unit_of_only_per_second_counts_what_the_metric_names():
    """genai-perf prints 'Request throughput (per sec)' and 'Output token throughput (per sec)': the unit 'per sec'
    counts requests or tokens as the metric says (both rows were refused for the unit)."""
    from tokenmath.measure.validate.rows import with_unit

    assert with_unit(_p10(metric="Request throughput", unit="per sec"))["unit"] == "requests/s"
    assert with_unit(_p10(metric="Output token throughput", unit="per sec"))["unit"] == "tokens/s"
    assert with_unit(_p10(metric="Output token throughput per user", unit="/s"))["unit"] == "tokens/s/user"
    assert with_unit(_p10(metric="Throughput", unit="per sec"))["unit"] == "per sec"  # counts nothing it names
    row = _p10(model="meta/llama-3.1-70b-instruct", precision="FP8", hardware="H100 SXM", n_chips="4", parallelism="TP4",
               batch="concurrency 50", input_len="200", output_len="200", metric="Request throughput", value="9.1",
               unit="per sec")
    req = predict_row(row, Aliases())
    tok = predict_row({**row, "metric": "Output token throughput", "value": "1820"}, Aliases())
    assert isinstance(req, Prediction) and isinstance(tok, Prediction)
    assert tok.predicted == pytest.approx(req.predicted * 200, rel=1e-6)


def test_probe10c_a_rate_per_gpu_at_a_per_user_speed_is_held_to_that_speed():
    """'output tokens/s per GPU at 50 tokens/s per user' (unit tok/s/gpu): the speed is the target the rate was held
    at, as the scope of the unit says; the 'per user' in the metric had dropped it, and the decode ran at the KV
    pool's batch (6,048 against 900 tokens/s per GPU)."""
    from tokenmath.measure.validate.atload import under_load

    row = _p10(source="NVIDIA Dynamo blog", model="DeepSeek-R1", precision="FP4", hardware="GB200 NVL72", n_chips="72",
               parallelism="disaggregated: prefill DEP16 x 2 workers, decode DEP32 x 1 worker", input_len="8192",
               output_len="1024", metric="output tokens/s per GPU at 50 tokens/s per user", value="900",
               unit="tok/s/gpu", notes="TensorRT-LLM backend")
    assert under_load(row).user_speed == 50
    assert under_load({**row, "metric": "output tokens/s per user at 50 tokens/s per user", "unit": "tok/s"}) is None
    out = predict_row(row, Aliases())
    assert isinstance(out, Prediction) and any("meets ≥ 50 tok/s/user" in w for w in out.why)


def test_probe10c_a_per_user_speed_at_maximum_load_is_refused_as_a_latency_there_is():
    """trtllm-bench throughput's 'Per User Output Throughput' with every request sent at once: the speed of a request
    in the engine's batch and queue, as a latency at maximum load (it was read as one sequence's, 95 against 14
    tps/user). An engine's limit or a flag that starts with 'max' is no maximum load."""
    from tokenmath.measure.validate.serving import _MAX_LOAD

    row = _p10(source="trtllm-bench throughput report", model="meta-llama/Llama-3.1-70B-Instruct", precision="FP8",
               hardware="H100 SXM 80GB", n_chips="4", parallelism="TP4", input_len="1024", output_len="1024",
               metric="Per User Output Throughput (tps/user)", value="14", unit="tps/user",
               notes="trtllm-bench throughput: all requests at once (max throughput), 3000 requests")
    out = predict_row(row, Aliases())
    assert isinstance(out, Unexpressed) and "maximum load" in out.reason
    assert isinstance(predict_row({**row, "notes": "one request at a time"}, Aliases()), Prediction)
    for said in ("max throughput", "batch max", "offline", "request rate inf", "all requests at once"):
        assert _MAX_LOAD.search(said), said
    for said in ("max_new_tokens 128", "--max-concurrency 8", "max_num_seqs 256", "--max-batch-size 64"):
        assert not _MAX_LOAD.search(said), said


def test_probe10c_sglangs_client_draws_random_lengths_below_the_stated_length():
    """SGLang's bench_serving draws '--random-range-ratio r' lengths uniformly in [L·r, L] (default r = 0), vLLM's
    client in [L(1 − r), L(1 + r)]: an SGLang row at r = 0.5 and 1024/1024 runs prompts of 512-1024 tokens, mean 768
    (it ran 512-1536, mean 1024); r = 1 is fixed; its flags with no ratio are its default, [1, L]."""
    from tokenmath.measure.validate.atload import client_lengths, under_load

    row = _p10(source="SGLang bench_serving", model="meta-llama/Llama-3.1-8B-Instruct", precision="bf16",
               hardware="H100", n_chips="1", parallelism="--tp 1", input_len="1024", output_len="1024",
               metric="Median E2E Latency (ms)", value="21000", unit="ms",
               notes="python -m sglang.bench_serving --backend sglang --dataset-name random --random-range-ratio 0.5 "
                     "--max-concurrency 32")
    isl, osl, reg, how = client_lengths(row, under_load(row), "sglang", 1024, 1024)
    assert (isl, osl) == (768, 768) and reg.range_ratio == pytest.approx(1 / 3) and "[512, 1024]" in how
    fixed = {**row, "notes": row["notes"].replace("0.5", "1")}
    assert client_lengths(fixed, under_load(fixed), "sglang", 1024, 1024)[:2] == (1024, 1024)
    dflt = {**row, "notes": "sglang.bench_serving --random-input 1024 --random-output 1024 --max-concurrency 32"}
    assert client_lengths(dflt, under_load(dflt), "sglang", 1024, 1024)[:2] == (512, 512)
    vllm = {**row, "source": "vllm bench serve", "notes": "--random-range-ratio 0.5 --max-concurrency 32"}
    assert client_lengths(vllm, under_load(vllm), "vllm", 1024, 1024)[:2] == (1024, 1024)
    out = predict_row(row, Aliases())
    assert isinstance(out, Prediction) and "768+768 tokens" in out.why[0]


def test_probe10c_a_goodput_under_load_counts_the_requests_meeting_its_slos():
    """vLLM's 'Request goodput (req/s)' at '--request-rate 16 --goodput ttft:200 tpot:50': the simulated requests
    meeting both SLOs per second (it was the request throughput, the SLOs unread); the SLOs in words too; a goodput
    with no SLO, or against an end-to-end SLO the simulator does not count, is refused."""
    from tokenmath.measure.validate.atload import under_load

    row = _p10(source="vllm bench serve", model="meta-llama/Llama-3.1-8B-Instruct", precision="bf16", hardware="H100",
               n_chips="1", parallelism="TP1", input_len="1024", output_len="256", metric="Request goodput (req/s)",
               value="11.4", unit="req/s", notes="--request-rate 16 --goodput ttft:200 tpot:50 (SLOs in ms)")
    assert dict(under_load(row).slo_s) == {"ttft": 0.2, "tpot": 0.05}
    assert dict(under_load({**row, "notes": "request rate 16, TTFT <= 200 ms and TPOT <= 50 ms"}).slo_s) == \
        {"ttft": 0.2, "tpot": 0.05}
    out = predict_row(row, Aliases())
    assert isinstance(out, Prediction) and any("meeting TTFT ≤ 200 ms and TPOT ≤ 50 ms" in w for w in out.why)
    tight = predict_row({**row, "notes": "--request-rate 16 --goodput ttft:200 tpot:12"}, Aliases())
    assert tight.predicted < 0.9 * out.predicted  # a TPOT SLO under the run's mean leaves requests out
    for notes in ("--request-rate 16", "--request-rate 16 --goodput e2el:5000"):
        assert isinstance(predict_row({**row, "notes": notes}, Aliases()), Unexpressed), notes


def test_probe10c_a_draft_model_is_reported_beside_the_rows_model_it_does_not_replace():
    """Llama 3.1 405B with 'Llama 3.2 1B as draft': the row's matched model is the 405B, the draft beside it (the JSON
    said the row matched llama-3.2-1b, the last name looked up)."""
    row = _p10(source="NVIDIA technical blog", model="Llama 3.1 405B Instruct", precision="FP8", hardware="H200 SXM",
               n_chips="4", parallelism="TP4", batch="1", input_len="1000", output_len="1000",
               metric="output tokens/s per user", value="111", unit="tok/s/user",
               notes="TensorRT-LLM draft-target speculative decoding with Llama 3.2 1B as draft, draft length 3, "
                     "acceptance rate 0.7")
    out = predict_row(row, Aliases())
    assert isinstance(out, Prediction)
    assert out.matched["model"]["entry"] == "llama-3.1-405b" and out.matched["draft"]["entry"] == "llama-3.2-1b"


def test_probe10c_n_gram_drafts_run_no_draft_model():
    """vLLM's n-gram / prompt-lookup speculation copies its drafts from the context: no draft step, weights or KV (it
    was priced as K steps of a one-block MTP module, 13.3 against 10.6 ms a token for Llama 3.1 70B on TP4)."""
    from tokenmath.core.load import load_system
    from tokenmath.serving.speculative import Speculation, speculative_step

    m, sysm = LLAMA, load_system("hgx-h100")
    kw = dict(G=4, B=8, S=2000, precision="bf16")
    look = speculative_step(m, sysm, Speculation(K=5, alpha=0.55, lookup=True), **kw)
    mtp = speculative_step(m, sysm, Speculation(K=5, alpha=0.55), **kw)
    assert look.v("t_spec") == pytest.approx(look.verify.v("t_step")) and look.v("t_spec") < mtp.v("t_spec")
    assert Speculation(K=5, alpha=0.5, lookup=True).extra_weight_bytes(m, "bf16") == 0
    row = _p10(source="vLLM n-gram speculative decoding blog", model="Llama-3.1-70B-Instruct", precision="bf16",
               hardware="4x H100", n_chips="4", parallelism="TP4", input_len="2000", output_len="300", metric="mean TPOT",
               value="18", unit="ms", notes="prompt lookup (ngram) with num_speculative_tokens 5, acceptance rate 0.55; "
                                            "request rate 2 QPS")
    out = predict_row(row, Aliases())
    assert isinstance(out, Prediction) and any("no draft model" in w for w in out.why)


def test_probe10c_lora_adapters_are_said_to_be_left_out():
    """A multi-LoRA row ('16 LoRA adapters of rank 16, --max-loras 16') is predicted as the base model, and says so
    (the adapters were dropped silently)."""
    row = _p10(source="vLLM multi-LoRA blog", model="meta-llama/Llama-2-7b-hf", precision="fp16", hardware="A100 80GB",
               n_chips="1", input_len="512", output_len="128", metric="output throughput", value="1700", unit="tok/s",
               notes="16 LoRA adapters of rank 16, --max-loras 16, concurrency 32")
    out = predict_row(row, Aliases())
    assert isinstance(out, Prediction) and any(a.startswith("LoRA adapters") for a in out.assumptions)
    plain = predict_row({**row, "notes": "concurrency 32"}, Aliases())
    assert plain.predicted == out.predicted and not any("LoRA" in a for a in plain.assumptions)


def test_probe10c_a_prefix_cache_hit_rate_is_read():
    """llm-d's 'TTFT p90 at an 80% prefix cache hit rate' (12 QPS over 8 replicas): the simulated prompts prefill only
    their uncached 20 % (the hits were dropped: 28 s against 0.38 s); a single request's TTFT too. A cache loaded from
    CPU memory (LMCache), and prompts sharing prefixes at an unstated rate (SGLang's generated-shared-prefix
    dataset), are refused with the reason; a rate at maximum load with hits too."""
    from tokenmath.measure.validate.serving import prefix_hit_of

    for text, h in (("80% prefix cache hit rate", 0.8), ("cache hit rate 80%", 0.8), ("prefix cache hit ratio of 0.5", 0.5),
                    ("100% cache hit", 1.0), ("75 % of each prompt cached", 0.75), ("90% prefix reuse", 0.9)):
        assert prefix_hit_of(_p10(notes=text))[0] == pytest.approx(h), text
    assert prefix_hit_of(_p10(notes="including KV cache hits")) == (None, "", "")  # input tokens counted, no rate
    row = _p10(source="llm-d blog 'KV-cache-aware routing'", model="meta-llama/Llama-3.1-70B-Instruct", precision="FP8",
               hardware="H100 (8 replicas x TP2)", n_chips="16", parallelism="8 replicas of TP2", input_len="8000",
               output_len="200", metric="TTFT p90", value="380", unit="ms",
               notes="prefix-cache-aware scheduler; 80% prefix cache hit rate; request rate 12 QPS")
    warm = predict_row(row, Aliases())
    cold = predict_row({**row, "notes": "request rate 12 QPS"}, Aliases())
    assert isinstance(warm, Prediction) and warm.predicted < 0.2 * cold.predicted
    one = _p10(model="mistralai/Mistral-7B-Instruct-v0.2", precision="bf16", hardware="A100 80GB", n_chips="1",
               batch="1", input_len="32000", output_len="100", metric="TTFT", value="0.25", unit="s",
               notes="90% prefix cache hit rate, single request")
    o = predict_row(one, Aliases())
    assert isinstance(o, Prediction) and "3200 uncached tokens after 28800 cached" in o.why[0]
    assert o.predicted < 0.2 * predict_row({**one, "notes": "single request"}, Aliases()).predicted
    for notes, why in (("LMCache: the context's KV loaded from CPU memory (100% cache hit)", "outside the GPUs"),
                       ("--dataset-name generated-shared-prefix --gsp-system-prompt-len 2048", "share prefixes")):
        out = predict_row({**one, "notes": notes}, Aliases())
        assert isinstance(out, Unexpressed) and why in out.reason, notes
    peak = predict_row({**one, "batch": "", "metric": "output throughput", "unit": "tok/s", "value": "5000",
                        "notes": "80% prefix cache hit rate, request rate inf"}, Aliases())
    assert isinstance(peak, Unexpressed) and "maximum load" in peak.reason


def test_probe10c_a_models_bandwidth_utilisation_is_a_decode_steps_bytes_over_its_time():
    """Databricks' 'Model Bandwidth Utilization (MBU)' of MPT-7B at batch 1 on an A100 40GB: the weights and KV one
    decode step reads over its time and the HBM bandwidth, in % (it was refused as 'a share of the peak of nothing the
    row names'); under load it is refused."""
    from tokenmath.measure.validate.rows import row_kind

    row = _p10(source="Databricks blog", model="MPT-7B", precision="fp16", hardware="A100 40GB", n_chips="1", batch="1",
               metric="Model Bandwidth Utilization (MBU)", value="60", unit="%", notes="batch 1, 512 input tokens")
    assert row_kind(row) == "serving"
    out = predict_row(row, Aliases())
    assert isinstance(out, Prediction) and out.kind == "mbu" and 40 < out.predicted < 95 and out.spec >= out.predicted
    frac = predict_row({**row, "value": "0.6", "unit": ""}, Aliases())
    assert frac.predicted == pytest.approx(out.predicted / 100, rel=1e-9)
    assert isinstance(predict_row({**row, "notes": "512 input tokens, concurrency 16"}, Aliases()), Unexpressed)


def test_probe10c_sglang_one_batch_decode_latency_and_genai_perf_lengths():
    """SGLang bench_one_batch's 'Decode.  median latency' is one decode step (it was the request's end-to-end
    latency, 1.0 s against 8 ms); genai-perf's '--synthetic-input-tokens-mean 1000 --output-tokens-mean 500' are the
    lengths (they were unread)."""
    from tokenmath.measure.validate.atload import quantity_of
    from tokenmath.measure.validate.rows import lengths_of

    assert quantity_of("Decode median latency", "s")[0] == "tpot_s"
    assert quantity_of("Decode.  median latency", "s")[0] == "tpot_s"
    assert quantity_of("decode latency (e2e)", "s")[0] == "e2e_s"
    notes = "genai-perf profile --concurrency 100 --synthetic-input-tokens-mean 1000 --output-tokens-mean 500"
    assert lengths_of(_p10(notes=notes))[:2] == (1000, 500)
    assert lengths_of(_p10(notes="--output-tokens-stddev 0 --output-tokens-mean 500"))[:2] == (None, 500)


def test_probe10c_a_request_rate_beside_a_maximum_concurrency_is_a_capped_open_loop():
    """'--max-concurrency 8 --request-rate 4' (vllm bench serve): Poisson arrivals at 4/s with at most 8 in flight (it
    was a closed loop of 8 clients, the rate dropped); a concurrency in other words stays a closed loop."""
    from tokenmath.measure.validate.atload import under_load

    row = _p10(source="vLLM 'vllm bench serve' output", model="meta-llama/Llama-3.1-8B-Instruct", precision="bf16",
               hardware="H100", n_chips="1", parallelism="TP1", input_len="1024", output_len="256",
               metric="P99 TTFT (ms)", value="160", unit="ms", notes="--max-concurrency 8 --request-rate 4")
    reg = under_load(row)
    assert (reg.concurrency, reg.rate_per_s) == (8, 4.0)
    assert under_load({**row, "notes": "concurrency 8, request rate 4"}).rate_per_s is None
    out = predict_row(row, Aliases())
    assert isinstance(out, Prediction) and "Poisson arrivals at 4" in out.why[0]
    assert any("at most 8 in flight" in w for w in out.why)


def test_probe10c_the_vllm_dashboards_test_names_state_their_request_rate():
    """The vLLM dashboard's 'serving_llama8B_tp1_sharegpt_qps_4' runs Poisson arrivals at 4/s (the rate was unread and
    the TTFT predicted for one request); '_qps_inf' is the maximum load."""
    from tokenmath.measure.validate.atload import under_load
    from tokenmath.measure.validate.serving import _MAX_LOAD

    assert under_load(_p10(metric="Mean TTFT (ms)", unit="ms",
                           notes="serving_llama8B_tp1_sharegpt_qps_4")).rate_per_s == 4.0
    assert _MAX_LOAD.search("serving_llama70B_tp4_sharegpt_qps_inf") and not _MAX_LOAD.search("Infinity Fabric")


def test_probe10c_a_per_user_rate_with_its_context_phase_is_the_output_over_the_whole_latency():
    """trtllm-bench's 'Per User Output Throughput [w/ ctx]': a request's output tokens over its end-to-end latency, its
    prefill included (it was 1/TPOT: at a 16k prompt the prefill is a large share of the request), alone or under
    load."""
    from tokenmath.measure.validate.atload import quantity_of

    assert quantity_of("Per User Output Throughput [w/ ctx] (tps/user)", "tps/user")[0] == "tokens_per_s_per_user_e2e"
    assert quantity_of("Per User Output Throughput (tps/user)", "tps/user")[0] == "tokens_per_s_per_user"
    row = _p10(source="trtllm-bench latency report", model="meta-llama/Llama-3.1-8B-Instruct", precision="FP8",
               hardware="H100 SXM 80GB", n_chips="1", parallelism="TP1", input_len="16384", output_len="128",
               metric="Per User Output Throughput [w/ ctx] (tps/user)", value="120", unit="tps/user",
               notes="one request at a time")
    ctx = predict_row(row, Aliases())
    bare = predict_row({**row, "metric": "Per User Output Throughput (tps/user)"}, Aliases())
    assert isinstance(ctx, Prediction) and ctx.higher_is_better and ctx.predicted < 0.9 * bare.predicted
    load = predict_row({**row, "notes": "concurrency 8"}, Aliases())
    assert isinstance(load, Prediction) and load.predicted < ctx.predicted


def test_probe10g_concurrency_one_without_an_output_length_is_batch_one():
    """gpt-fast's batch-1 decode with its batch written as 'concurrency 1' in the notes (the batch column empty): one
    client's requests run one at a time, the batch-1 decode the batch column states (it was refused as a row under
    load without an output length)."""
    row = _p10(source="github pytorch-labs/gpt-fast README.md", model="Llama-2-7B", precision="bf16",
               hardware="A100-SXM 80GB", n_chips="1", parallelism="single GPU", batch="1", input_len="5",
               metric="decode_tokens_per_s_per_user", value="104.9", unit="tokens/s")
    base = predict_row(row, Aliases())
    moved = predict_row({**row, "batch": "", "notes": "concurrency 1"}, Aliases())
    assert isinstance(moved, Prediction) and moved.predicted == pytest.approx(base.predicted, rel=1e-9)


def test_probe10g_a_precision_in_the_models_name_keeps_its_group_size_and_its_words():
    """gpt-fast's int4 g32 with the precision column empty and the precision in the model's name: 'Llama-2-7B-INT4-G32'
    keeps the group size, 'Llama-2-7B (int4 weight-only g32)' all the words of the column (they read as a plain int4,
    13 % faster, without the weight-only kernels' note)."""
    row = _p10(source="github pytorch-labs/gpt-fast README.md", model="Llama-2-7B", precision="int4 weight-only g32",
               hardware="A100-SXM 80GB", n_chips="1", parallelism="single GPU", batch="1", input_len="5",
               metric="decode_tokens_per_s_per_user", value="196.8", unit="tokens/s")
    base = predict_row(row, Aliases())
    for name in ("Llama-2-7B (int4 weight-only g32)",):
        moved = predict_row({**row, "model": name, "precision": ""}, Aliases())
        assert moved.predicted == pytest.approx(base.predicted, rel=1e-9), name
    suffix = predict_row({**row, "model": "Llama-2-7B-INT4-G32", "precision": "int4 g32"}, Aliases())
    assert predict_row({**row, "model": "Llama-2-7B-INT4-G32", "precision": ""}, Aliases()).predicted == \
        pytest.approx(suffix.predicted, rel=1e-9)


def test_probe10g_a_split_search_a_flag_or_pools_in_the_notes_read_as_in_the_parallelism_column():
    """With the parallelism column empty, the notes' 'best TP/PP/DP over 8 GPUs' (a search over the chips' splits, not
    one TP8 replica: -45 %), vLLM's pools '4 prefill instances x 2 GB200 + 1 decode instance x 8 GB200; DP+EP' (-14 %)
    and MLPerf's 'attention DP' read as they do in the column."""
    best = _p10(source="TensorRT-LLM docs", model="Llama 2 70B", precision="FP8", hardware="H200 SXM 141GB",
                n_chips="8", parallelism="best TP/PP/DP over 8 GPUs", batch="560", input_len="128",
                output_len="2048", metric="output_tokens_per_s_per_gpu", value="3163", unit="tokens/s/GPU",
                notes="out_tps = OSL*batch/total_latency/tp")
    pools = _p10(source="blog.vllm.ai", model="DeepSeek R1/V3/V3.1", precision="Blackwell low precision",
                 hardware="GB200", n_chips="16",
                 parallelism="4 prefill instances x 2 GB200 + 1 decode instance x 8 GB200; DP+EP", input_len="2048",
                 output_len="2048", metric="prefill_tokens_per_s_per_gpu", value="26200", unit="tokens/s/GPU")
    dp = _p10(source="NVIDIA MLPerf Inference v6.0", model="DeepSeek-R1", precision="NVFP4", hardware="GB300 NVL72",
              n_chips="per GPU", parallelism="TensorRT-LLM (attention DP, load balancing)", batch="Server scenario",
              metric="server_tokens_per_s_per_gpu_v6.0", value="8064", unit="tokens/s/GPU")
    for row in (best, pools, dp):
        base = predict_row(row, Aliases())
        moved = predict_row({**row, "parallelism": "", "notes": f"{row['notes']}; {row['parallelism']}"}, Aliases())
        key = "predicted" if base.predicted is not None else "best_case"
        assert getattr(moved, key) == pytest.approx(getattr(base, key), rel=1e-9), row["parallelism"]


def test_probe11a_a_count_with_what_it_counts_in_brackets_after_it():
    """'256 (concurrency)' in the batch column is a concurrency of 256 (was read as no load at all: a static batch,
    TPOT -49 %, TTFT -89 %), and '64 (batch)' a batch of 64 (was read as unstated: +107 % on a 64-batch row)."""
    from tokenmath.measure.validate.atload import under_load
    from tokenmath.measure.validate.rows import batch_of
    row = dict(id="X-1", source="x", model="Llama-3.1-70B", precision="FP8", hardware="H200 SXM 141GB", n_chips="1",
               parallelism="TP1", batch="concurrency 64", input_len="1024", output_len="8192", context_len="",
               metric="tpot_ms", value="30.49", unit="ms", confidence="", notes="")
    for said in ("64 (concurrency)", "64 (concurrent requests)", "64 ( conc. )"):
        assert under_load({**row, "batch": said}).concurrency == 64, said
    assert under_load({**row, "batch": "64 (batch)"}) is None
    assert [batch_of({"batch": b}) for b in ("64 (batch)", "64 (batch size)", "64 (BS)", "64 (concurrency)")] == \
        [64, 64, 64, None]
    base, moved = predict_row(row, Aliases()), predict_row({**row, "batch": "64 (concurrency)"}, Aliases())
    assert moved.kind == base.kind == "concurrency" and moved.predicted == pytest.approx(base.predicted, rel=1e-9)


def test_probe11a_a_token_rate_written_tps_reads_its_output_length_from_the_samples():
    """MLPerf's tokens/s ÷ samples/s is the mean output a sample: read for any unit of a token rate, 'TPS' and
    'TPS/GPU' too (they were not: the best case over unstated lengths instead, +3 % to +23 %)."""
    from tokenmath.core.load import read_table
    from tokenmath.measure.validate.rows import COLUMNS, PACKAGE_TABLE
    pub = {r["id"]: r for r in read_table(PACKAGE_TABLE)}
    for rid in ("MLP-003", "MLP-008"):
        row = {c: pub[rid].get(c, "") or "" for c in COLUMNS}
        base = predict_row(row, Aliases())
        for unit, k in (("TPS", 1.0), ("TPS/GPU", 1.0 / int(row["n_chips"]))):
            moved = predict_row({**row, "unit": unit, "value": f"{float(row['value']) * k:.10g}"}, Aliases())
            assert moved.predicted == pytest.approx(base.predicted * k, rel=1e-6), (rid, unit)


@pytest.mark.parametrize("unit, scale", [("tokens/min", 1 / 60), ("tok per minute", 1 / 60), ("ns", 1e-9),
                                         ("nanoseconds", 1e-9), ("ms per token", 1e-3), ("ms per output token", 1e-3),
                                         ("us per token", 1e-6), ("s per token", 1.0), ("RPM", 1 / 60)])
def test_probe11a_units_tables_write_are_read(unit, scale):
    """Units refused before probe 11A: tokens a minute, nanoseconds, a time 'per token' in words, requests a minute
    written 'RPM' (as rate limits write it); each of its own dimension."""
    from tokenmath.measure.validate.rows import dimension_of_unit, row_kind
    assert unit_scale(unit) == pytest.approx(scale)
    dim = {"tokens/min": "token_rate", "tok per minute": "token_rate", "RPM": "request_rate"}.get(unit, "time")
    assert dimension_of_unit(unit) == dim
    if dim != "time" or "token" in unit:
        assert row_kind({"metric": "throughput", "model": "Llama 3.1 8B", "unit": unit, "notes": ""}) == "serving"


def test_probe11a_a_rate_in_other_units_predicts_the_same_rate():
    """A token rate in tokens/min, a TPOT in 'ms per token', a request rate in RPM: the original's prediction,
    converted (RPM was read as an output token rate: ×1,000)."""
    row = dict(id="X-1", source="x", model="Llama-3.1-70B", precision="FP8", hardware="H200 SXM 141GB", n_chips="1",
               parallelism="TP1", batch="concurrency 64", input_len="1024", output_len="8192", context_len="",
               metric="request_throughput", value="0.23", unit="req/s", confidence="", notes="")
    base = predict_row(row, Aliases())
    rpm = predict_row({**row, "value": "13.8", "unit": "RPM"}, Aliases())
    assert rpm.predicted == pytest.approx(60 * base.predicted, rel=1e-6)
    tpot = {**row, "metric": "TPOT", "value": "30.5", "unit": "ms"}
    assert predict_row({**tpot, "unit": "ms per token"}, Aliases()).predicted == \
        pytest.approx(predict_row(tpot, Aliases()).predicted, rel=1e-9)
    run = {**row, "batch": "max (offline)", "metric": "total_output_throughput", "value": "2000", "unit": "tokens/s"}
    assert predict_row({**run, "value": "120000", "unit": "tokens/min"}, Aliases()).predicted == \
        pytest.approx(60 * predict_row(run, Aliases()).predicted, rel=1e-9)


def test_probe11a_digits_grouped_by_spaces_with_a_decimal_point():
    """'29 228.22' (SI grouping with a decimal point, MLPerf's two decimals) was refused as no number; a space beside
    a point that groups nothing stays unread."""
    from tokenmath.measure.validate.rows import parse_measured
    assert [parse_measured(t).value for t in ("29 228.22", "29\u202f228.22", "1 234 567.5")] == \
        pytest.approx([29228.22, 29228.22, 1234567.5])
    assert parse_measured("1 234.5-1 500.5").kind == "range"
    assert parse_measured("12 34.5") is None and parse_measured("1234 567.5") is None


def test_probe11a_a_rate_per_node_of_a_rack_scale_domain_says_what_a_node_is_or_is_refused():
    """On GB200 NVL72 a 'node' may be the rack (72 chips) or one of its compute trays: 'tok/s/node' was read as per
    72 chips, a guess 18× off where the table meant a tray; refused unless the row says the node's chips. Per rack,
    and per node of an 8-GPU server, are read as before."""
    base = dict(id="X-1", source="blog", model="DeepSeek-R1", precision="FP4", hardware="GB200 NVL72", n_chips="72",
                parallelism="DEP72", batch="concurrency 4096", input_len="1024", output_len="1024", context_len="",
                metric="output throughput", value="1", unit="tok/s/node", confidence="", notes="")
    out = predict_row(base, Aliases())
    assert isinstance(out, Unexpressed) and "compute trays" in out.reason
    gpu = predict_row({**base, "unit": "tokens/s/GPU"}, Aliases()).predicted
    tray = predict_row({**base, "notes": "4 GPUs per node"}, Aliases()).predicted
    assert tray == pytest.approx(4 * gpu, rel=1e-9)
    assert predict_row({**base, "unit": "tokens/s/rack"}, Aliases()).predicted == pytest.approx(72 * gpu, rel=1e-9)
    h = {**base, "model": "Llama 3.1 70B", "precision": "FP8", "hardware": "H200 SXM 141GB (DGX H200)", "n_chips": "16",
         "parallelism": "TP8", "batch": "concurrency 64"}
    assert predict_row(h, Aliases()).predicted == pytest.approx(
        8 * predict_row({**h, "unit": "tokens/s/GPU"}, Aliases()).predicted, rel=1e-9)


def test_disaggregated_max_load_rate_of_stated_pools_is_refused():
    """Mooncake's requests/s of '2 prefill instances (TP4) and 2 decode instances (TP4)' with no load stated ran as
    one aggregated engine over all 16 chips; the pools are simulated under a stated load only, so it is refused."""
    base = dict(id="X-PD", source="Mooncake", model="Llama-2-70B", precision="FP16", hardware="A800", n_chips="16",
                parallelism="2 prefill instances (TP4) and 2 decode instances (TP4)", batch="", input_len="8192",
                output_len="512", context_len="", metric="throughput", value="1.5", unit="requests/s",
                confidence="approximate", notes="")
    r = predict_row(base, Aliases())
    assert isinstance(r, Unexpressed) and "maximum load" in r.reason
    loaded = predict_row({**base, "batch": "concurrency 32"}, Aliases())  # a stated load: the pools simulated
    assert isinstance(loaded, Prediction) and "prefill worker" in loaded.why[0]


def test_splitwise_prompt_and_token_machines_are_the_two_pools():
    """Splitwise's words: 'prompt machines' prefill and 'token machines' decode (a machine a node); the row under load
    ran as aggregated replicas of all its chips. A prompt or token without machine/instance/pool names no role."""
    from tokenmath.measure.validate.serving import pools_of

    p = pools_of("Splitwise: 2 prompt machines (TP8) + 2 token machines (TP8)")
    assert (p["prefill"][0], p["decode"][0], p["prefill"][3]) == (2, 2, "node")
    assert split_of(p["decode"][1].lower()) == {"tp": 8}
    i = pools_of("1 prompt instance (TP4) and 2 token instances (TP8)")
    assert (i["prefill"][0], i["decode"][0], i["decode"][3]) == (1, 2, "worker")
    assert split_of(i["prefill"][1].lower()) == {"tp": 4}
    assert pools_of("TP8, 2 prompt tokens + 2 token budget") is None
    row = dict(id="X-SW", source="Splitwise", model="Llama-2-70B", precision="FP16", hardware="H100", n_chips="32",
               parallelism="Splitwise: 2 prompt machines (TP8) + 2 token machines (TP8)", batch="concurrency 32",
               input_len="1500", output_len="150", context_len="", metric="P50 TTFT", value="180", unit="ms",
               confidence="approximate", notes="")
    r = predict_row(row, Aliases())
    assert isinstance(r, Prediction) and "prefill worker" in r.why[0] and "disagg" in r.why[0]


def test_disaggregated_rate_per_gpu_takes_the_phase_its_notes_name():
    """'throughput per GPU' of a disaggregated deployment with notes '26.2K prefill TPGS' is the prefill chips' rate
    (it was read as the decode chips'); notes naming both phases, or none beside a rate, leave the metric's reading."""
    from tokenmath.measure.validate.serving import notes_phase

    base = dict(id="X-NP", source="vLLM blog", model="DeepSeek-R1", precision="NVFP4", hardware="GB200",
                n_chips="16", parallelism="4 prefill instances x 2 GB200 + 1 decode instance x 8 GB200; DP+EP",
                batch="", input_len="2048", output_len="2048", context_len="", metric="throughput per GPU",
                value="26200", unit="tokens/s/GPU", confidence="paraphrased", notes="'26.2K prefill TPGS'")
    r = predict_row(base, Aliases())
    same = predict_row({**base, "metric": "prefill TPGS", "notes": ""}, Aliases())
    assert r.kind == "prefill" and r.predicted == pytest.approx(same.predicted, rel=1e-9)
    assert notes_phase({**base, "notes": "decode throughput 3K"})[0] == "decode"
    assert notes_phase({**base, "notes": "prefill TPGS 26K, decode TPGS 3K"}) is None
    assert notes_phase({**base, "notes": "chunked prefill on"}) is None
    assert notes_phase({**base, "metric": "output throughput per GPU"}) is None


def test_a_bracket_saying_each_after_the_last_pool_is_every_pools():
    """'1 prompt machine + 1 token machine (8 GPUs each, TP8)': the bracket after the last pool says 'each', so both
    pools run TP8 (the prompt machine fell to the engine's default split); a pool with its own bracket keeps it, and
    'each with …' after the list reads the same."""
    from tokenmath.measure.validate.serving import pools_of

    p = pools_of("Splitwise: 1 prompt machine + 1 token machine (8 GPUs each, TP8)")
    assert split_of(p["prefill"][1].lower()) == split_of(p["decode"][1].lower()) == {"tp": 8}
    w = pools_of("2 prompt machines + 2 token machines each with 8 GPUs TP8")
    assert split_of(w["prefill"][1].lower()) == {"tp": 8}
    own = pools_of("1 prefill (TP4) + 2 decode (TP8 each)")
    assert split_of(own["prefill"][1].lower()) == {"tp": 4} and split_of(own["decode"][1].lower()) == {"tp": 8}
    row = dict(id="X-SW", source="Splitwise", model="Llama-2-70B", precision="FP16", hardware="H100", n_chips="16",
               parallelism="Splitwise: 1 prompt machine + 1 token machine (8 GPUs each, TP8)", batch="concurrency 16",
               input_len="1500", output_len="150", context_len="", metric="P50 TTFT", value="180", unit="ms",
               confidence="approximate", notes="")
    r = predict_row(row, Aliases())
    assert isinstance(r, Prediction) and not any("engine rule" in w for w in r.why)


def test_pools_on_two_kinds_of_hardware_are_refused():
    """Prefill and decode pools on two parts (named in each pool's clause, or two parts in the hardware column) are
    refused in one line: one system is simulated per row (serving/sim/run.py takes one); one part is read as before."""
    base = dict(id="X-HW", source="Splitwise", model="Llama-2-70B", precision="FP16", hardware="H100", n_chips="32",
                parallelism="2 prompt machines (DGX-H100) + 2 token machines (DGX-A100)", batch="concurrency 32",
                input_len="1500", output_len="150", context_len="", metric="P50 TTFT", value="180", unit="ms",
                confidence="approximate", notes="")
    for row in (base, {**base, "hardware": "DGX-H100 + DGX-A100",
                       "parallelism": "Splitwise: 2 prompt machines (TP8) + 2 token machines (TP8)"}):
        r = predict_row(row, Aliases())
        assert isinstance(r, Unexpressed) and "different hardware" in r.reason and "\n" not in r.reason
    same = predict_row({**base, "parallelism": "2 prompt machines (DGX-H100) + 2 token machines (TP8)"}, Aliases())
    assert isinstance(same, Prediction)


@pytest.mark.parametrize("precision, kv", [
    ("BF16, INT4 KV cache (KIVI)", "int4"),  # the cache's INT4 stored the weights in INT4
    ("BF16, INT8 KV cache", "int8"),  # INT8 weights
    ("BF16, FP8 (e4m3) KV cache", "fp8"),  # FP8 weights, and the cache the engine's default
    ("BF16 weights, KV4", "int4"),  # QServe's and LMDeploy's shorthand: a BF16 cache
    ("FP8 KV", "fp8"),  # only the cache named: the model's own weights (they were FP8)
])
def test_the_kv_words_of_the_precision_column_are_the_caches_not_the_weights(precision, kv):
    """The precision column's KV clause names the cache's type; the weights are read from the rest of the column:
    each row predicts what BF16 weights with that cache stated in the notes predict."""
    from tokenmath.measure.validate.serving import stated_kv_dtype

    def row(**kw):
        return _p10(**{**dict(model="Llama-3.1-8B", hardware="H100 SXM", n_chips="1", parallelism="TP1", batch="1",
                              input_len="128", output_len="4096", metric="decode_tokens_per_s_per_user", value="100",
                              unit="tokens/s", notes="vLLM"), **kw})
    said, plain = predict_row(row(precision=precision), Aliases()), \
        predict_row(row(precision="BF16", notes=f"vLLM, KV cache {kv}"), Aliases())
    assert stated_kv_dtype(row(precision=precision))[0] == kv
    assert isinstance(said, Prediction) and said.predicted == pytest.approx(plain.predicted, rel=1e-9)


@pytest.mark.parametrize("precision, linear, bits, peak", [
    ("MXFP8", "mxfp8", 8.25, "fp8"),  # refused: no rule
    ("MXFP6", "mxfp6", 6.25, "fp8"),
    ("FP6 (FP6-LLM)", "fp6", 6.0, "bf16"),  # weight-only: FP16 activations
    ("FP6_e3m2", "fp6", 6.0, "bf16"),
    ("W4A8_AWQ (ModelOpt)", "w4a8_fp8_g128", 4.125, "fp8"),  # read as ModelOpt FP8: 8-bit weights
    ("INT4 weights, FP8 activations (W4A8 FP8)", "w4a8_fp8_g128", 4.125, "fp8"),  # at the INT8 rate, QServe's
    ("GGUF Q8_0", "gguf_q8_0", 8.5, "int8"),  # refused: the rule wanted Q8_0 first
    ("Q4_1", "gguf_q4_1", 5.0, "int8"),
    ("Q5_0", "gguf_q5_0", 5.5, "int8"),
    ("Q5_1", "gguf_q5_1", 6.0, "int8"),
])
def test_microscaled_fp6_fp8_w4a8_fp8_and_legacy_gguf_formats_are_read_at_their_bits_and_rate(precision, linear, bits,
                                                                                                   peak):
    """Formats an unseen table writes that no rule read (refused in one line) or read as another: each stores its
    bits (the scales counted) and multiplies at its rate on an H100 (W4A16-like FP6 at 16 bits, MX and W4A8-FP8 at
    FP8, GGUF blocks at INT8)."""
    from tokenmath.core.units import PRECISION_BYTES

    al = Aliases()
    assert al.storage(precision)["linear"] == linear and PRECISION_BYTES[linear] * 8 == pytest.approx(bits)
    assert load_system("hgx-h100").chip.peak_precision(linear) == peak


@pytest.mark.parametrize("precision, linear, prec", [
    ("load_in_4bit (bitsandbytes FP4)", "int4_g64", "int4"),  # refused: no rule
    ("HQQ 4-bit g64", "int4_g64", "int4"),  # refused
    ("AutoRound W4G128", "int4_g128", "int4"),  # refused
    ("AutoRound int4 g128", "int4_g128", "int4"),  # a bare 4.0-bit int4, the LM head in 4 bits too
    ("int4wo-128", "int4_g128", "int4"),  # as the last
    ("torchao int8dq", None, "w8a8"),  # refused
    ("int8_dynamic_activation_int8_weight", None, "w8a8"),  # refused
])
def test_library_spellings_of_group_int4_and_dynamic_int8_are_read(precision, linear, prec):
    """bitsandbytes', HQQ's, AutoRound's and torchao's names of formats the catalog holds: a stated group size is the
    group's format (scales counted, the embeddings and LM head in 16 bits); torchao's int8dq multiplies INT8 activations."""
    al = Aliases()
    assert al.precision(precision)[0] == prec and (al.storage(precision) or {}).get("linear") == linear


def test_modelopt_names_glued_by_underscores_are_their_formats_not_modelopt_fp8():
    """ModelOpt writes its formats with underscores ('INT4_AWQ', 'INT8_SQ'): a word boundary did not see them, so a
    ModelOpt INT4 AWQ checkpoint was read as ModelOpt FP8 (8-bit weights)."""
    al = Aliases()
    assert al.storage("INT4_AWQ (ModelOpt)")["linear"] == "int4_g128"
    assert al.precision("INT8_SQ (ModelOpt)")[0] == "w8a8"


def test_a_parallelism_naming_only_the_decode_workers_is_their_rate():
    """'decode EP48 (DP attention)' on GB200 NVL72 with an output rate per GPU (SGLang's GB200 post as recalled): the
    decode workers' rate, the 2,000-token prompts prefilled elsewhere; it was an aggregated run that prefilled every
    prompt on the same chips, 15× low. A role word with no split of its own is no pool."""
    row = dict(id="X-1", source="lmsys", model="DeepSeek-V3", precision="fp8", hardware="GB200 NVL72", n_chips="56",
               parallelism="decode EP48 (DP attention)", batch="", input_len="2000", output_len="100", context_len="",
               metric="output_tokens_per_s_per_gpu", value="7500", unit="tokens/s/GPU", confidence="", notes="")
    out = predict_row(row, Aliases())
    assert isinstance(out, Prediction) and out.kind == "decode", out
    assert any("names only the decode workers" in a for a in out.assumptions)
    assert out.predicted > 3000
    assert sole_role("TP8, speculative decoding (EAGLE3)") is None and sole_role("TP8 context parallel 2") is None
    assert sole_role("prefill EP8 x 2 + decode EP48") is None


def test_gb200_nvl36x2_is_one_72_gpu_nvlink_domain():
    """'GB200 NVL36x2' (two racks of 36 cabled into one NVLink domain) is the GB200 NVL72 system and 72 chips: it was
    refused as 'another model number', and its 'x2' read as 2 chips; a bare NVL36 is still refused, and 'GB200 NVL72
    x 2' is still two racks."""
    from tokenmath.measure.validate.rows import chips_of
    al, s = Aliases(), load_system("gb200-nvl72")
    for hw in ("GB200 NVL36x2", "GB200 NVL36 × 2", "NVIDIA GB200 NVL36x2 (72 GPUs)"):
        assert al.system(hw)[0].name == "gb200-nvl72", hw
        assert chips_of({"n_chips": "", "hardware": hw}, s)[0] == 72, hw
    assert al.system("GB200 NVL36")[0] is None
    assert chips_of({"n_chips": "", "hardware": "GB200 NVL72 x 2"}, s)[0] == 144


def test_a_line_rate_spelt_out_before_ethernet_names_the_fabric():
    """'100 Gb/s Ethernet' is the 100G Ethernet fabric at 100 Gb/s a GPU, as '100G Ethernet' was; it was no fabric, and
    the system's 400 Gb/s NIC stood."""
    from tokenmath.measure.validate.match import _fabric
    assert _fabric("H100 x 16 (2 nodes, 100 Gb/s Ethernet)") == ("roce-100g", 100e9 / 8, "chip")
    assert _fabric("2 nodes, 200 Gbps Ethernet")[0] == "roce-200g"
    assert _fabric("H100, Ethernet") is None
    s, _ = Aliases().system("H100 x 16 (2 nodes, 100 Gb/s Ethernet)")
    assert s.scaleout_bw == 100e9 / 8


@pytest.mark.parametrize("hw,gbps", [("2 x p5.48xlarge (3200 Gbps EFA)", 400), ("p5.48xlarge (3,200 Gbps EFAv2)", 400),
                                     ("p4d.24xlarge (400 Gbps EFA)", 50), ("H100 (3.2 Tb/s InfiniBand NDR per node)", 400),
                                     ("2 nodes × 8 H100 (8×CX7 NDR 400G per node)", 400),
                                     ("a3-megagpu-8g (1,600 Gbps GPUDirect-TCPXO, RoCE)", 200),
                                     ("H800 + CX7 IB 400 Gb/s (pure RDMA)", 400), ("B200 (ConnectX-8, 800G per GPU)", 800)])
def test_a_network_rate_is_read_per_chip_from_whose_it_is(hw, gbps):
    """A cloud instance's network is quoted for the instance (p5.48xlarge's 3,200 Gbps EFA is its eight GPUs': it was
    3,200 Gb/s a GPU; p4d's 400 Gbps was 400 a GPU, 8× high), a rate 'per node' or above any one port the node's, a
    count of NICs times their rate the node's; a NIC's own rate a chip's. '3,200' was read as 200."""
    s, _ = Aliases().system(hw)
    assert s.scaleout_bw * 8 / 1e9 == pytest.approx(gbps)


@pytest.mark.parametrize("hw,chips", [("12,288 A100 (1,536 nodes)", 12288), ("two HGX H100 nodes", 16),
                                      ("2 H100 nodes", 16), ("2 H100 80GB nodes", 16), ("GB300 NVL72 × 2 racks", 144),
                                      ("1,024 H100 (128 nodes, IB)", 1024), ("two 8xH100 nodes", 16)])
def test_chips_of_a_cluster_written_by_its_nodes(hw, chips):
    """Counts grouped by thousands are one number ('1,536 nodes' was 536), a count before a server's name and 'nodes'
    counts nodes ('two HGX H100 nodes' was 2 chips; '2 H100 nodes' 2 × 2), and racks after an NVL72 are racks."""
    from tokenmath.measure.validate.rows import chips_of
    s, _ = Aliases().system(hw)
    assert chips_of({"n_chips": "", "hardware": hw, "parallelism": ""}, s)[0] == chips


@pytest.mark.parametrize("precision, notes", [
    ("INT8 weights and activations", ""),
    ("int8 (weights and activations)", ""),
    ("A8W8", ""),
    ("int8", "int8 weights and activations (SmoothQuant-style)"),
    ("INT8", "W8A8 checkpoint"),
])
def test_int8_weights_and_activations_is_w8a8_in_the_column_or_its_notes(precision, notes):
    """'INT8 weights and activations' was read as a bare INT8 (weight-only, the 16-bit rate); a column's bare INT8 whose
    notes say W8A8 multiplies 8-bit activations too (probe 11BB's TPU row)."""
    row = _probe_row(id="X-W8", model="Llama 3.1 8B", precision=precision, hardware="H100 SXM", n_chips="1",
                     batch="64", input_len="1024", output_len="1024", metric="output_tokens_per_s",
                     unit="tokens/s", notes=notes)
    p = predict_row(row, Aliases())
    text = " ".join(p.why + p.assumptions)
    assert isinstance(p, Prediction) and "W8A8" in text and "weight-only (W8A16)" not in text
    bare = predict_row({**row, "precision": "int8", "notes": ""}, Aliases())
    assert "weight-only (W8A16)" in " ".join(bare.why + bare.assumptions)
