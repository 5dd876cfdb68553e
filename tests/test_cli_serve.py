"""`tokenmath serve` and `tokenmath catalog` end to end, through typer's runner, including bad input."""

import json
import re

import pytest
from clirun import one_line_error as _one_line_error
from clirun import run
from typer.testing import CliRunner

from tokenmath.cli.app import app
from tokenmath.core.load import load_priors, load_system

runner = CliRunner()


def test_serve_deepseek_on_gb200_matches_the_lecture_corrected():
    r = run("serve", "deepseek-v3", "--on", "gb200-nvl72", "--chips", "64", "--precision", "fp8", "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    # B* = R·rho with R = 5 PFLOP/s / (2 · 8 TB/s / 1 B) = 312.5 and rho = 671/37.6: not the 2,400 of "32 of 256"
    assert 5400 <= d["optimal_batch"] <= 5700
    assert d["latency_floor_s"] == pytest.approx(671e9 / (64 * 8e12), rel=0.01)
    assert d["latency_floor_basis"] == "spec"
    for key in ("step_time_s", "tokens_per_s", "usd_per_mtok"):
        assert d["decode"][key] > 0
    assert d["prefill"]["step_time_s"] > 0 and d["prefill"]["usd_per_mtok"] > 0
    assert d["memory"]["fits"] is True
    assert d["memory"]["required_bytes"] < d["memory"]["capacity_bytes"]
    assert d["derivations"]["optimal_batch"]["formula"] == "B_star = R · rho"


def test_serve_table_and_explain():
    r = run("serve", "deepseek-v3", "--on", "gb200-nvl72", "--chips", "64", "--explain")
    assert r.exit_code == 0, r.output
    assert "optimal batch B* = R·rho" in r.stdout
    assert "t_step = max(t_math, t_weights + t_kv)" in r.stdout
    assert "catalog/hardware/gb200.yaml" in r.stdout


def test_set_overrides_a_chip_field():
    base = json.loads(run("serve", "deepseek-v3", "--on", "gb200-nvl72", "--chips", "64", "--json").stdout)
    r = run("serve", "deepseek-v3", "--on", "gb200-nvl72", "--chips", "64", "--json",
            "--set", "hbm_bandwidth_bytes_per_s=4TB/s")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["latency_floor_s"] == pytest.approx(2 * base["latency_floor_s"])
    assert d["optimal_batch"] == pytest.approx(2 * base["optimal_batch"])


def test_unknown_model_suggests_close_names():
    _one_line_error(run("serve", "deepseek-v4", "--on", "gb200-nvl72"), "unknown model", "deepseek-v3")


def test_unknown_system_suggests_close_names():
    _one_line_error(run("serve", "deepseek-v3", "--on", "gb200-nvl36"), "unknown system", "gb200-nvl72")


@pytest.mark.parametrize("name,entry", [
    ("google/gemma-3-27b-it", "gemma-3-27b"), ("Qwen/Qwen3-30B-A3B-Instruct-2507", "qwen3-30b-a3b"),
    ("meta-llama/Llama-2-7b-chat-hf", "llama-2-7b"), ("mistralai/Mistral-7B-Instruct-v0.2", "mistral-7b-v0.2"),
    ("deepseek-ai/DeepSeek-V2-Lite-Chat", "deepseek-v2-lite"),
    # a dotted version the catalog does not tell apart (Mixtral's one entry), kept where it does (Mistral 7B's)
    ("mistralai/Mixtral-8x22B-v0.1", "mixtral-8x22b"), ("mistralai/Mixtral-8x7B-Instruct-v0.1", "mixtral-8x7b"),
    ("mistralai/Mistral-7B-v0.1", "mistral-7b-v0.1"),
])
def test_a_fine_tunes_hugging_face_id_is_its_base_model(name, entry):
    """Probe 11C: an instruction or chat release has its base's shapes ('google/gemma-3-27b-it' was 'no such
    file'); a version stays part of the name (Mistral 7B v0.2 is not v0.1)."""
    from tokenmath.core.load import load_model

    assert load_model(name).name == entry


@pytest.mark.parametrize("name,needle", [
    ("mistralai/Mistral-7B-Instruct-v0.4", "mistral-7b"), ("unsloth/gpt-oss-20b-GGUF", "gpt-oss-20b"),
])
def test_an_unknown_hugging_face_id_is_an_unknown_model_with_suggestions(name, needle):
    """Probe 11C: an 'org/Name' the catalog does not know is refused as a model, not as a missing file."""
    _one_line_error(run("serve", name, "--on", "hgx-h100"), "unknown model", needle)
    _one_line_error(run("serve", "./no/such/config.json", "--on", "hgx-h100"), "no such file")


@pytest.mark.parametrize("name,needle", [
    ("g6e.48xlarge", "g6e (pcie-l40s-8)"), ("v5litepod-8", "v5litepod (tpu-v5e)"), ("v6e-8", "v6e (tpu-v6e)"),
])
def test_an_unknown_system_suggests_other_names_too(name, needle):
    """Probe 11C: the suggestions read names.yaml's other names ('g6e.48xlarge' had none; 'v5litepod-8' was
    offered the v5p pod)."""
    _one_line_error(run("serve", "qwen3-32b", "--on", name), "unknown system", needle)


@pytest.mark.parametrize("args,needle", [
    (["--batch", "-1"], "--batch"),
    (["--chips", "0"], "--chips"),
    (["--context", "-5"], "--context"),
    (["--precision", "fp7"], "--precision"),
    (["--batch", "10000000000"], "absurd"),
])
def test_impossible_values_are_refused(args, needle):
    _one_line_error(run("serve", "deepseek-v3", "--on", "gb200-nvl72", *args), needle)


def test_a_model_that_does_not_fit_is_refused():
    _one_line_error(run("serve", "deepseek-v3", "--on", "hgx-h100", "--precision", "fp8", "--batch", "128"),
                    "does not fit")
    _one_line_error(run("serve", "deepseek-v3", "--on", "l4"), "does not fit")  # not even one sequence


def test_a_model_that_does_not_fit_names_the_fewest_chips_whose_memory_holds_it():
    """The refusal says from how many chips their memory holds the weights and the batch's KV (a floor), and names the
    memory an SRAM part reads as SRAM, not HBM."""
    r = run("serve", "llama-3.1-405b", "--on", "hgx-h100", "--batch", "128")
    line = next(x for x in r.output.splitlines() if "does not fit" in x)
    assert r.exit_code != 0 and "holds it from 13" in line and "device memory" in line
    line = next(x for x in run("serve", "llama-3.1-70b", "--on", "cs-3").output.splitlines() if "does not fit" in x)
    assert "on-chip SRAM" in line and "HBM" not in line


def test_without_a_batch_serve_takes_the_most_that_fit_and_says_so():
    import json

    r = run("serve", "qwen3-8b", "--on", "l4", "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert 1 <= d["batch"] < 128 and "fits beside the weights" in d["batch_note"] and d["memory"]["fits"]
    more = run("serve", "qwen3-8b", "--on", "l4", "--batch", str(d["batch"] + 1), "--json")
    assert more.exit_code != 0  # one more sequence would not fit


def test_malformed_yaml_names_the_file(tmp_path):
    bad = tmp_path / "broken.yaml"
    bad.write_text("display_name: x\nchip: [unclosed\n")
    _one_line_error(run("serve", "deepseek-v3", "--on", str(bad)), "broken.yaml", "malformed YAML")


def test_yaml_with_a_bad_field_names_the_field(tmp_path):
    bad = tmp_path / "mychip.yaml"
    bad.write_text("kind: chip\npeak_flop_per_s: {bf16: 1 PFLOP/s}\nhbm_capacity_bytes: 80 GB\n"
                   "hbm_bandwidth_bytes_per_s: 3 TB\n")
    _one_line_error(run("serve", "deepseek-v3", "--on", str(bad)), "mychip.yaml", "hbm_bandwidth_bytes_per_s")


def test_malformed_config_json_names_the_file(tmp_path):
    bad = tmp_path / "config.json"
    bad.write_text("{not json")
    _one_line_error(run("serve", str(bad), "--on", "hgx-h100"), "config.json", "malformed JSON")


def test_catalog_list_and_show():
    r = run("catalog", "list", "--json")
    assert r.exit_code == 0
    d = json.loads(r.stdout)
    assert "gb200-nvl72" in d["systems"] and "deepseek-v3" in d["models"] and "h100-sxm" in d["hardware"]
    r = run("catalog", "show", "deepseek-v3")
    assert r.exit_code == 0 and "kv_bytes_per_token" in r.stdout
    r = run("catalog", "show", "h100", "--json")  # the bare name users type: the SXM part
    assert r.exit_code == 0 and json.loads(r.stdout)["name"] == "h100-sxm"
    _one_line_error(run("catalog", "show", "h100-sx"), "h100-sxm")


def test_catalog_list_help_names_every_kind_it_takes():
    """`catalog list KIND --help` named four kinds (hardware, systems, models, priors) of the ten it takes."""
    from tokenmath.core.load import KINDS

    h = " ".join(run("catalog", "list", "--help").output.split())
    assert all(k in h for k in KINDS) and "Print the results" in h
    for k in KINDS:
        r = run("catalog", "list", k, "--json")
        assert r.exit_code == 0 and list(json.loads(r.stdout)) == [k]


GOLDEN_FLOOR = """\
t_floor = N_total · b_w / (G · W)  = 1.31 ms
        = 671B params · 1.00 B / (64 chips · 8.00 TB/s)
  N_total = L·N_attn + L_dense·N_mlp + L_moe·(E·N_expert + E_shared·N_shared + D·E) + V·D·n_emb  = 671B params
          = 61·187M params + 3·396M params + 58·(256·44.0M params + 1·44.0M params + 7,168·256) + 129,280·7,168·2
    N_attn = D·r_q + r_q·N·(d_nope + d_rope) + D·(r_kv + d_rope) + r_kv·N·(d_nope + d_v) + N·d_v·D  = 187M params
           = 7,168·1,536 + 1,536·128·(128 + 64) + 7,168·(512 + 64) + 512·128·(128 + 128) + 128·128·7,168
    N_mlp = m·D·F  = 396M params
          = 3·7,168·18,432
    N_expert = m·D·F_e  = 44.0M params
             = 3·7,168·2,048
sources:
  L, D, N, r_q, r_kv, d_nope, d_rope, d_v, L_dense, m, F, L_moe, E, F_e, E_shared, V, n_emb: catalog/models/deepseek-v3.yaml
  b_w: fp8 weights
  G: given
  W: catalog/hardware/gb200.yaml: glennklockwood.com/garden/processors/B200"""


def test_golden_latency_floor_derivation():
    """Reviewed by hand once: the floor is every weight (671 GB at FP8) over 64 × 8 TB/s."""
    from tokenmath import load_model, load_system, serve
    r = serve(load_model("deepseek-v3"), load_system("gb200-nvl72"), G=64, B=1, S=0, precision="fp8", explain=True)
    assert r.numbers["latency_floor_s"].explain() == GOLDEN_FLOOR


def test_set_reaches_priors_and_nested_peaks():
    d = json.loads(run("serve", "deepseek-v3", "--on", "gb200-nvl72", "--json", "--set", "eta_bw=0.4",
                       "--set", "chip.peak_flop_per_s.fp8=10PFLOP/s").stdout)
    assert d["optimal_batch"] == pytest.approx(2 * 312.5 * d["rho"])
    pri = load_priors(load_system("gb200-nvl72").chip.priors)
    assert d["optimal_batch_prior"] == pytest.approx(d["optimal_batch"] * pri.eta_flop / 0.4, rel=1e-9)
    _one_line_error(run("serve", "deepseek-v3", "--on", "gb200-nvl72", "--set", "eta_bww=0.4"), "eta_bw")


def test_user_catalog_directory_adds_entries(tmp_path, monkeypatch):
    from tokenmath.core import load
    monkeypatch.setattr(load, "_extra_dirs", [])
    load._index.cache_clear()
    load._load_cached.cache_clear()
    (tmp_path / "hardware").mkdir()
    (tmp_path / "hardware" / "my-chip.yaml").write_text(
        "display_name: My chip\nsource: my datasheet\npeak_flop_per_s: {bf16: 1 PFLOP/s, fp8: 2 PFLOP/s}\n"
        "hbm_capacity_bytes: 1 TB\nhbm_bandwidth_bytes_per_s: 10 TB/s\n")
    r = runner.invoke(app, ["--catalog", str(tmp_path), "serve", "deepseek-v3", "--on", "my-chip", "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["optimal_batch"] == pytest.approx(100 * json.loads(r.stdout)["rho"])
    monkeypatch.undo()
    load._index.cache_clear()
    load._load_cached.cache_clear()


def test_a_context_beyond_the_models_own_is_computed_and_said():
    import json

    r = run("serve", "gpt-j-6b", "--on", "h100-sxm", "--batch", "8", "--json")  # default context 4,096 > 2,048
    assert r.exit_code == 0, r.output
    assert "trained context of 2,048" in json.loads(r.stdout)["context_note"]
    ok = run("serve", "gpt-j-6b", "--on", "h100-sxm", "--batch", "8", "--context", "2048", "--json")
    assert "context_note" not in json.loads(ok.stdout)
    assert "trained context" in run("serve", "gpt-j-6b", "--on", "h100-sxm", "--batch", "8").output


def test_serve_takes_a_stated_split():
    """--split reads a parallelism as tables write it: the layout moves the step; pipeline stages (TP4 PP2 on 8
    chips) run as 2 streams of 4 chips with half the sequences each — the tokens/s of two TP4 replicas at 32
    sequences each; a split that does not tile the chips is refused with one line."""
    def run_json(*args):
        r = run("serve", "llama-3.1-70b", "--on", "hgx-h100", "-B", "64", "-S", "2048", "--json", *args)
        assert r.exit_code == 0, r.output
        return json.loads(r.output)
    tp8 = run_json("--split", "TP8")
    pipe = run_json("--split", "TP4 PP2")
    tp4 = run("serve", "llama-3.1-70b", "--on", "hgx-h100", "-G", "4", "-B", "32", "-S", "2048", "--json")
    tp4 = json.loads(tp4.output)
    # equal but for the one activation hop between the stages over NVLink (roofline.pipeline_hop_time: ~0.02 %)
    assert pipe["decode"]["tokens_per_s"] == pytest.approx(2 * tp4["decode"]["tokens_per_s"], rel=1e-3)
    assert pipe["decode"]["tokens_per_s"] < 2 * tp4["decode"]["tokens_per_s"]
    assert pipe["decode"]["step_time_s"] == pytest.approx(tp4["decode"]["step_time_s"], rel=1e-3)
    assert tp8["decode"]["step_time_s"] != pipe["decode"]["step_time_s"]
    for bad, why in (("TP3", "do not divide"), ("TP8 PP2", "do not divide"), ("banana", "names no split"),
                     ("TP0", "0 ways"), ("TP8 PP0", "0 ways")):
        r = run("serve", "llama-3.1-70b", "--on", "hgx-h100", "--split", bad)
        assert r.exit_code != 0 and why in r.output and "Traceback" not in r.output


def test_serve_split_memory_latency_floor_and_misread_splits():
    """A stated split's memory and latency floor follow it: TP1 of a dense 70B on 8 H100s is 8 replicas each
    holding all 141 GB (it 'fit' as one copy over 8 chips); a token passes the stages of TP4 PP2 one after the
    other on 4 chips (the floor is twice TP8's; it was TP8's, all 8 chips at once). A split naming no way of the
    model, or not tiling the chips, is refused with one line (DEP8 of a dense model was TP1 DP8, DP3 of 8 chips
    DP4, TP2 DP2 of 8 chips TP2 DP4)."""
    def run_json(*args):
        r = run("serve", "llama-3.1-70b", "--on", "hgx-h100", "-B", "64", "-S", "2048", "--json", *args)
        assert r.exit_code == 0, r.output
        return json.loads(r.output)
    tp8, pipe, tp4 = run_json("--split", "TP8"), run_json("--split", "TP4 PP2"), run_json("--split", "TP4")
    assert pipe["latency_floor_s"] == pytest.approx(2 * tp8["latency_floor_s"], rel=1e-9)
    assert tp4["latency_floor_s"] == pytest.approx(2 * tp8["latency_floor_s"], rel=1e-9)
    assert pipe["memory"]["weights_bytes"] == pytest.approx(tp8["memory"]["weights_bytes"], rel=1e-9)
    assert tp4["memory"]["weights_bytes"] == pytest.approx(2 * tp8["memory"]["weights_bytes"], rel=1e-9)
    r = run("serve", "llama-3.1-70b", "--on", "hgx-h100", "-B", "64", "-S", "2048", "--split", "TP1")
    _one_line_error(r, "does not fit")
    for bad, why in (("DEP8", "dense model"), ("EP8", "dense model"), ("DP3", "does not divide"),
                     ("TP2 DP2", "not the 8")):
        _one_line_error(run("serve", "llama-3.1-70b", "--on", "hgx-h100", "--split", bad), why)


def test_serve_counts_the_weights_the_default_moe_split_holds():
    """An MoE's default split runs attention data-parallel (roofline.default_layout: tp 1, experts over every chip),
    so each chip holds the non-expert weights: DeepSeek-V3 FP8 on 8 H200s holds 807 GB, not the 673 GB of one copy."""
    d = json.loads(run("serve", "deepseek-v3", "--on", "hgx-h200", "--json").output)
    one = json.loads(run("serve", "deepseek-v3", "--on", "hgx-h200", "--split", "TP8 EP8", "--json").output)
    assert d["memory"]["weights_bytes"] > 1.15 * one["memory"]["weights_bytes"]
    assert one["memory"]["weights_bytes"] == pytest.approx(673e9, rel=0.02)


def test_a_default_moe_split_that_would_crowd_out_the_batch_is_not_chosen():
    """MiniMax-Text-01 keeps 21B of non-expert weights: attention data-parallel holds them on each of 8 H200s and
    leaves one sequence of 32K tokens (the old default ran batch 1 and named TP8 EP8 in a note); the default split is
    now the fastest of those that hold the batch (serving.default_split), tensor-parallel attention, at batch 128."""
    d = json.loads(run("serve", "minimax-text-01", "--on", "hgx-h200", "-S", "32768", "--json").stdout)
    assert d["batch"] == 128 and d["memory"]["fits"] and d["split"] == "TP8"
    assert "TP1 attention-DP8 EP8" in d["split_choice"] and "(does not fit)" in d["split_choice"]


def test_context_as_users_type_it():
    """`serve -S 32k` as sweep, place and fastmode take it (it was refused as 'not a valid integer'); a fraction
    of a token is refused in one line."""
    a = json.loads(run("serve", "llama-3.1-8b", "--on", "h100", "-S", "32k", "--json").stdout)
    b = json.loads(run("serve", "llama-3.1-8b", "--on", "h100", "-S", "32000", "--json").stdout)
    assert a["context"] == b["context"] == 32000 and a["decode"] == b["decode"]
    r = run("serve", "llama-3.1-8b", "--on", "h100", "-S", "1.5")
    assert r.exit_code != 0 and "not a whole number of tokens" in r.output and "Traceback" not in r.output


def test_a_moe_default_split_holds_what_attention_data_parallelism_would_not():
    """DeepSeek-V3 FP8 on 8 H100s: data-parallel attention holds 807 GB of weights on 687 GB (serve failed and named
    TP8 EP8 in its failure line); the default split is now one that holds the weights once, at the most sequences it
    leaves room for, and a --batch no split holds fails in one line."""
    d = json.loads(run("serve", "deepseek-v3", "--on", "hgx-h100", "--json").stdout)
    assert d["memory"]["fits"] and d["split"] in ("TP8", "TP8 EP8") and 1 <= d["batch"] < 128
    n = d["batch"]
    assert run("serve", "deepseek-v3", "--on", "hgx-h100", "--split", d["split"], "--batch", str(n)).exit_code == 0
    assert run("serve", "deepseek-v3", "--on", "hgx-h100", "--split", d["split"], "--batch", str(n + 1)).exit_code != 0
    r = run("serve", "deepseek-v3", "--on", "hgx-h100", "--batch", "256")
    _one_line_error(r, "does not fit")


def test_a_few_expert_moe_runs_tensor_parallel_by_default():
    """Probe 11AB: Mixtral 8x7B on 8 H200s at batch 1 ran DeepSeek's layout (attention data-parallel, one expert per
    chip): the chip holding an active expert read all of it, 5.35 ms a step against 3.49 ms with the experts
    tensor-parallel, the split vLLM, SGLang and TensorRT-LLM run without an expert-parallel flag. The default is now
    the fastest decode step of the engines' splits, and serve says which it compared."""
    d = json.loads(run("serve", "mixtral-8x7b", "--on", "hgx-h200", "--batch", "1", "--json").stdout)
    tp = json.loads(run("serve", "mixtral-8x7b", "--on", "hgx-h200", "--batch", "1", "--split", "TP8",
                        "--json").stdout)
    assert d["split"] == "TP8" and d["decode"]["step_time_s"] <= 4e-3
    assert d["decode"]["step_time_s"] == tp["decode"]["step_time_s"]
    assert all(s in d["split_choice"] for s in ("TP8 ", "TP8 EP8 ", "TP1 attention-DP8 EP8 "))
    assert "split TP8: the fastest decode step" in run("serve", "mixtral-8x7b", "--on", "hgx-h200", "-B", "1").stdout


@pytest.mark.parametrize("chips,why", [(72, "the only split"), (64, "the fastest decode step")])
def test_deepseek_on_an_nvl72_keeps_expert_parallelism(chips, why):
    """The lecture's layout (E1, P6): DeepSeek-V3 on an NVL72 runs attention data-parallel with the experts over every
    chip — on 72 chips because no engine splits its 128 heads 72 ways, on 64 because it is the fastest at batch 128."""
    d = json.loads(run("serve", "deepseek-v3", "--on", "gb200-nvl72", "--chips", str(chips), "--json").stdout)
    assert d["split"] == f"TP1 attention-DP{chips} EP{chips}" and why in d["split_choice"]


def test_a_state_space_model_serves_sweeps_and_simulates_with_no_kv(tmp_path):
    """No attention layer: no KV per token (the KV crossover context is ∞, left out of the JSON), a fixed state per
    sequence held and read every step; every command answers."""
    cfg = {"model_type": "mamba2", "hidden_size": 1024, "num_heads": 32, "head_dim": 64, "state_size": 64,
           "n_groups": 1, "num_hidden_layers": 8, "expand": 2, "conv_kernel": 4, "vocab_size": 32000}
    p = tmp_path / "config.json"
    p.write_text(json.dumps(cfg))
    d = json.loads(run("serve", str(p), "--on", "h100", "-B", "16", "--json").stdout)
    assert d["kv_bytes_per_token"] == 0 and d["memory"]["kv_bytes"] > 0  # the state
    sw = json.loads(run("sweep", str(p), "--on", "h100", "--json").stdout)
    assert "kv_crossover_context" not in sw and sw["kappa"] == 0
    r = run("simulate", str(p), "--on", "h100", "-C", "4", "--isl", "256", "--osl", "32", "-n", "20", "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["requests_completed"] == 20


@pytest.mark.parametrize("args,needle", [
    (["--precision", "FP8"], "did you mean fp8?"), (["--kv-dtype", "fp8_e4m3"], "did you mean fp8?"),
    (["--precision", "q4_k_m"], "did you mean gguf_q4_k_m?"), (["--engine", "vLLM"], "did you mean vllm?"),
])
def test_a_misspelt_choice_is_refused_with_the_nearest_first(args, needle):
    """Probe 11C: '--precision FP8' listed 27 formats and named none; the nearest comes first now."""
    _one_line_error(run("serve", "qwen3-32b", "--on", "hgx-h100", *args), needle)
    _one_line_error(run("sweep", "qwen3-32b", "--on", "hgx-h100", "--precision", "fp8,BF16"), "did you mean bf16?")


def test_a_context_of_a_million_tokens_prints_in_full():
    """Probe 11C: the header printed 'context 1e+06 tok' (a whole count under a billion prints with separators)."""
    r = run("serve", "qwen3-32b", "--on", "hgx-h100", "--context", "1M", "--batch", "1")
    assert r.exit_code == 0, r.output
    assert "context 1,000,000 tok" in r.stdout and "e+06" not in r.stdout


@pytest.mark.parametrize("args,split", [
    (["qwen3-30b-a3b", "--on", "mi300x-8"], "TP1 attention-DP8 EP8"),  # an MoE's default: DeepSeek's layout
    (["qwen3-32b", "--on", "hgx-h100"], "TP8"),
    (["qwen3-32b", "--on", "hgx-h100", "--split", "TP4 PP2"], "TP4 PP2"),
])
def test_serve_states_the_split_it_ran(args, split):
    """Probe 11C: serve printed no split, so a user could not tell an MoE ran data-parallel attention (each chip
    holding the non-expert weights), which sets its memory and step; now the header and --json say it."""
    r = run("serve", *args)
    assert r.exit_code == 0, r.output
    assert f"chips ({split})," in r.stdout
    assert json.loads(run("serve", *args, "--json").stdout)["split"] == split


def test_the_header_counts_one_chip_in_the_singular():
    """A new user's first line on one chip read '— 1 chips (TP1)'."""
    assert "— 1 chip (TP1), batch" in run("serve", "llama-3.1-8b", "--on", "h100-sxm").output
    assert "— 8 chips (TP8), batch" in run("serve", "llama-3.1-70b", "--on", "hgx-h100").output


def test_kv_dtype_refuses_a_weight_only_format():
    """A KV cache is stored per element (engines' kv_cache_dtype): a matmul format such as w8a8 or a GGUF block is
    refused for --kv-dtype in one line (probe 11R: it was accepted and priced)."""
    for bad in ("w8a8", "gguf_q4_0", "int4_g128"):
        _one_line_error(run("serve", "llama-3.1-8b", "--on", "h100", "--kv-dtype", bad), "--kv-dtype")
    assert run("serve", "llama-3.1-8b", "--on", "h100", "--kv-dtype", "fp8").exit_code == 0


def test_a_bare_chip_over_several_chips_says_they_talk_over_the_network():
    """`--on h100 -G 8` is eight lone chips joined only by their NICs (every collective crosses the network); serve
    says so and names the server that joins them over NVLink. One chip, or a named server, says nothing."""
    r = run("serve", "llama-3.1-70b", "--on", "h100", "-G", "8")
    assert r.exit_code == 0 and "no scale-up link" in r.output and "--on hgx-h100" in r.output
    wide = run("serve", "llama-3.1-405b", "--on", "h100", "-G", "16")
    assert "hgx-h100 (8 chips a domain)" in wide.output
    for args in (("--on", "hgx-h100"), ("--on", "h100", "-G", "1", "-B", "1", "-S", "1024")):
        assert "no scale-up link" not in run("serve", "llama-3.1-8b", *args).output
