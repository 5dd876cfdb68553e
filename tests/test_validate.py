"""tokenmath validate: every row predicted or listed with a reason, spec bounds, the summary, the CLI."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
from clirun import run

from tokenmath.core import arch, kernels
from tokenmath.core.load import load_alias_model, load_aliases, read_table
from tokenmath.measure.validate import (
    COLUMNS,
    PACKAGE_TABLE,
    Aliases,
    engine_batch,
    predict_row,
    validate,
    validate_table,
)
from tokenmath.measure.validate.report import Unexpressed


def _row(**kw) -> dict:
    base = {c: "" for c in COLUMNS}
    base.update(kw)
    return base


TRT = _row(id="TRT-X01", model="Llama 3.1 8B", precision="FP8 (NVIDIA ModelOpt checkpoint)",
           hardware="H200 SXM 141GB (DGX H200)", n_chips="1", parallelism="TP1", batch="max (offline)",
           input_len="1000", output_len="1000", metric="total_output_throughput", value="17744",
           unit="tokens/s (whole TP group)", confidence="verbatim")
BS1 = _row(id="BS1-X01", model="Llama-2-7B", precision="bf16", hardware="A100-SXM 80GB (330 W cap)", n_chips="1",
           parallelism="single GPU", batch="1", input_len="5", metric="decode_tokens_per_s_per_user", value="104.9",
           unit="tokens/s", confidence="verbatim")
GEMM = _row(id="UB-X01", model="dense FP8 GEMM M=64 N=7168 K=16384", precision="FP8 e4m3, 128-block scaling, BF16 out",
            hardware="H800 SXM", n_chips="1", batch="M=64", metric="gemm_TFLOPs", value="336", unit="TFLOP/s")
ODD = _row(id="TRT-X02", model="Llama 3.1 8B", precision="FP8", hardware="Imaginary Accelerator 9000", n_chips="1",
           parallelism="TP1", batch="max (offline)", input_len="128", output_len="128",
           metric="total_output_throughput", value="1000", unit="tokens/s (whole TP group)")
TRN = _row(id="TRN-X01", model="GPT 1.7B", precision="FP16", hardware="A100 80GB", n_chips="32",
           metric="train_TFLOPs_per_GPU", value="137", unit="TFLOP/s/GPU")


def test_every_row_is_predicted_or_listed_with_a_reason():
    rep = validate([TRT, BS1, GEMM, ODD, TRN])
    ids = sorted([r.id for r in rep.rows] + [u.id for u in rep.unexpressed])
    assert ids == sorted(["TRT-X01", "BS1-X01", "UB-X01", "TRT-X02", "TRN-X01"])
    odd = next(u for u in rep.unexpressed if u.id == "TRT-X02")
    assert "Imaginary Accelerator 9000" in odd.reason and "matches no catalog chip" in odd.reason
    for r in rep.rows:
        assert r.predicted > 0 and np.isfinite(r.error)
        assert r.abs_error == pytest.approx(abs((r.predicted - r.measured) / r.measured))


def test_the_whole_shipped_table_is_accounted_for():
    rows = read_table(PACKAGE_TABLE)
    rep = validate_table()
    assert len(rep.rows) + len(rep.unexpressed) == len(rows)
    assert {"TRT", "BS1", "UB"} <= {r.group for r in rep.rows}
    assert all(u.reason for u in rep.unexpressed)
    s = rep.summary()
    # a regression guard, not the target: the end-to-end rows stay within a loose band
    assert s["serving"]["n"] >= 100 and s["serving"]["median_abs_error"] < 0.25


def test_spec_prediction_bounds_the_prior_one_and_serving_measurements():
    rep = validate_table(groups=["TRT", "BS1", "VLLM"])
    for r in rep.rows:
        assert r.spec is not None and r.spec >= r.predicted * (1 - 1e-9), r.id
    assert rep.violations() == []  # no end-to-end measurement beats its peak-only bound


def test_spec_basis_run_is_bounded_by_total_math_and_memory():
    al = Aliases()
    spec = predict_row(TRT, al, basis="spec")
    prior = predict_row(TRT, al, basis="prior")
    assert spec.predicted > prior.predicted
    assert spec.spec == spec.predicted  # on the spec basis the prediction is its own bound


def test_engine_batch_is_kv_pool_over_kv_per_sequence_capped():
    assert engine_batch(100e9, 1e9, 8192) == 100
    assert engine_batch(100e9, 1e6, 8192) == 8192
    assert np.all(engine_batch(np.array([10e9, 50e9]), 1e9, 20) == [10, 20])


def test_batch_one_decode_is_weight_bound_near_bandwidth():
    r = predict_row(BS1, Aliases())
    # Llama-2-7B in BF16 on a 2.04 TB/s A100: ~13.5 GB per token at 0.91 of peak, plus fixed costs
    assert 80 < r.predicted < 140
    assert r.kind == "per_user"


def test_one_gemm_roofline_memory_bound_at_small_m():
    al = Aliases()
    r = predict_row(GEMM, al)
    assert r.kind == "gemm" and "memory-bound" in r.why[0]
    flop = kernels.gemm_flop(64, 7168, 16384)
    b = arch.bytes_per("fp8_block")  # '128-block scaling': FP8 plus one FP32 scale per 128 × 128 block
    byts = kernels.gemm_bytes(64, 7168, 16384, b, b, 2.0)
    assert flop == 2 * 64 * 7168 * 16384
    t = kernels.gemm_time(flop, 1979e12, 1.0, byts, 3.35e12, 1.0)
    assert t == pytest.approx(byts / 3.35e12)
    assert r.spec == pytest.approx(flop / t / 1e12)


def test_alias_table_and_fallback_models_load():
    d = load_aliases("validation")
    assert {"models", "hardware", "precision", "engine"} <= set(d)
    assert d["engine"]["max_batch"] == 8192
    assert load_alias_model("no-such-model") is None  # fallbacks beside the alias table: none needed today
    m, _ = Aliases().model("GPT-J 6B")  # a catalog model since round 8 (it was such a fallback)
    assert m is not None and m.name == "gpt-j-6b" and m.n_kv_heads == 16
    al = Aliases()
    assert al.system("GB200 NVL72 (72 GPUs)")[0].name == "gb200-nvl72"
    assert al.system("B200 180GB (DGX B200)")[0].name == "hgx-b200"
    assert al.precision("FP4 (NVIDIA ModelOpt checkpoint)")[:2] == ("fp4", "fp8")


@pytest.mark.parametrize("text,prec", [("FP8 (NVIDIA ModelOpt checkpoint)", "fp8"), ("FP8 (per NVIDIA submission)", "fp8"),
                                       ("BF16 (per NVIDIA submission)", "bf16"), ("FP16 (NVIDIA's H100 submission)", "bf16"),
                                       ("INT4 AWQ (NVIDIA ModelOpt checkpoint)", "int4"),
                                       ("INT8 SmoothQuant (per NVIDIA submission)", "w8a8"), ("ModelOpt", "fp8")])
def test_a_modelopt_or_nvidia_submission_is_fp8_only_where_no_format_is_named(text, prec):
    """ModelOpt writes INT4 AWQ, W4A8 and INT8 SmoothQuant checkpoints too: 'INT4 AWQ (NVIDIA ModelOpt checkpoint)'
    and 'BF16 (per NVIDIA submission)' were read as FP8 (probe 11B)."""
    assert Aliases().precision(text)[0] == prec


def test_a_bare_fp8_on_vllm_or_sglang_keeps_the_models_kv_type():
    """vLLM and SGLang hold the model's own KV type unless asked (catalog/engines kv_cache_dtype 'auto'); TensorRT-LLM
    the checkpoint's (ModelOpt: FP8). A bare 'FP8' row keeps the FP8-KV assumption only where the engine takes the
    checkpoint's, or the row names a ModelOpt/NVIDIA checkpoint or a KV type."""
    from tokenmath.measure.validate.serving import engine_kv_dtype

    row = _row(model="Qwen3-235B-A22B-FP8", precision="FP8", source="vllm 0.12.0", notes="")
    kv, note = engine_kv_dtype(row, "vllm", "fp8", "fp8")
    assert kv is None and "catalog/engines/vllm.yaml" in note and "'auto'" in note
    assert engine_kv_dtype(row, "sglang", "fp8_block", "fp8")[0] is None
    assert engine_kv_dtype(row, "trtllm", "fp8", "fp8") == ("fp8", "")  # the checkpoint's config decides
    assert engine_kv_dtype(row, None, "fp8", "fp8") == ("fp8", "")  # no engine named: the alias rule stands
    assert engine_kv_dtype({**row, "model": "nvidia/Llama-3.1-8B-Instruct-FP8"}, "vllm", "fp8", "fp8")[0] == "fp8"
    assert engine_kv_dtype({**row, "notes": "FP8 KV cache"}, "vllm", "fp8", "fp8")[0] == "fp8"
    assert engine_kv_dtype(row, "vllm", "fp4", "fp8") == ("fp8", "")  # NVFP4 releases are ModelOpt's
    r = predict_row(_row(**{**TRT, "precision": "FP8", "source": "vLLM benchmark", "parallelism": "TP1"}), Aliases())
    assert any("catalog/engines/vllm.yaml" in a for a in r.assumptions)


def test_training_rows_never_vanish():
    rep = validate([TRN])
    assert len(rep.rows) + len(rep.unexpressed) == 1


def test_explained_run_derivation_golden():
    r = predict_row(TRT, Aliases(), explain=True)
    text = r.derivation.explain()
    lines = text.splitlines()
    assert lines[0].startswith("tokens_per_s = n_rep · B · OSL / t_run  = ")
    assert lines[2].strip().startswith("B = min(floor(kv_pool / kv_held), B_max)")
    assert lines[4].strip().startswith("kv_pool = f_kv · (G · C − W_all)")
    assert lines[5].strip() == "= 0.900 · (1 chips · 151 GB − 9.08 GB)"  # 141 GiB; FP8 with the tables in BF16
    assert "t_run = n_prefill · t_prefill + OSL · t_decode_mean" in text
    assert "catalog/aliases/validation.yaml: TRT-* notes: kv_cache_free_gpu_mem_fraction" in text
    assert float(r.derivation.value) == pytest.approx(r.predicted)


# ---- CLI --------------------------------------------------------------------------------------------

def test_cli_json_keys():
    r = run("validate", "--group", "BS1,UB", "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    row = d["rows"][0]
    assert {"id", "predicted", "measured", "abs_error"} <= set(row)
    s = d["summary"]
    assert {"median_abs_error", "p90_abs_error"} <= set(s)
    assert {"BS1", "UB"} <= set(s["groups"])
    assert 0 <= s["groups"]["BS1"]["median_abs_error"] <= s["groups"]["BS1"]["p90_abs_error"]
    assert all(u["reason"] for u in d["unexpressed"])


def test_cli_table_prints_groups_worst_rows_and_reasons():
    r = run("validate", "--group", "BS1", "--worst", "3")
    assert r.exit_code == 0, r.output
    assert "median |error|" in r.stdout and "worst rows" in r.stdout
    # the speculative row with a draft model and no acceptance is a bound on the best case (α = 1, best K)
    assert "BS1-016" in r.stdout and "α = 1" in r.stdout and "drafts per step not stated" in r.stdout


def test_cli_explain_one_row():
    r = run("validate", "--row", "BS1-001", "--explain")
    assert r.exit_code == 0, r.output
    assert "t_step = max(t_math, t_weights + t_kv) + t_serial" in r.stdout


def test_cli_other_table_and_bad_input(tmp_path):
    good = tmp_path / "t.csv"
    with good.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=COLUMNS)
        w.writeheader()
        w.writerow(BS1)
        w.writerow(ODD)
    r = run("validate", "--table", str(good), "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert [x["id"] for x in d["rows"]] == ["BS1-X01"] and d["unexpressed"][0]["id"] == "TRT-X02"

    bad = tmp_path / "bad.csv"
    bad.write_text("name,number\nx,1\n")
    r = run("validate", "--table", str(bad))
    assert r.exit_code == 1 and "missing column" in r.output and "Traceback" not in r.output
    r = run("validate", "--table", str(tmp_path / "nope.csv"))
    assert r.exit_code == 1 and "cannot read" in r.output
    r = run("validate", "--basis", "magic")
    assert r.exit_code == 1 and "--basis" in r.output
    r = run("validate", "--row", "NOPE-1")
    assert r.exit_code == 1 and "no row NOPE-1" in r.output


# ---- reading rows: dimensions, ranges, bounds, chips per node, the scored matcher -------------------

def test_rows_of_another_dimension_are_refused():
    row = {**GEMM, "id": "UB-X02", "model": "MLA decode, per layer", "metric": "decode_bandwidth_per_layer",
           "unit": "us", "value": "12.5"}
    out = predict_row(row, Aliases())
    assert not hasattr(out, "predicted")
    assert "different dimensions" in out.reason and "time" in out.reason and "bandwidth" in out.reason


def test_measured_ranges_and_bounds():
    from tokenmath.measure.validate.rows import parse_measured
    assert parse_measured("8-31").kind == "range" and parse_measured("8 to 31").high == 31
    assert parse_measured(">250").op == ">" and parse_measured("≥1,000").low == 1000
    assert parse_measured("250+").op == ">=" and parse_measured("27,911").kind == "point"
    assert parse_measured("up to 800").kind == "point" and parse_measured("n/a") is None
    base = predict_row(BS1, Aliases()).predicted  # ~110 tok/s
    inside = predict_row({**BS1, "value": f"{base * 0.5:.1f}-{base * 2:.1f}"}, Aliases())
    assert inside.error == 0.0 and inside.measured_low < inside.predicted < inside.measured_high
    above = predict_row({**BS1, "value": f"{base * 2:.1f}-{base * 3:.1f}"}, Aliases())
    assert above.error == pytest.approx(-0.5, rel=1e-3)  # from the nearer end
    passes = predict_row({**BS1, "value": f">{base / 2:.1f}"}, Aliases())
    fails = predict_row({**BS1, "value": f">{base * 2:.1f}"}, Aliases())
    assert passes.bound_passes is True and fails.bound_passes is False
    rep = validate([{**BS1, "id": "BS1-X09", "value": f">{base / 2:.1f}"}, BS1])
    s = rep.summary()
    assert s["bound_rows"] == {"n": 1, "passed": 1, "best_case": 0} and s["n"] == 1  # bounds apart from medians
    assert "bound_passes" in passes.to_dict() and "error" not in passes.to_dict()


MLPERF = _row(id="MLP-X01", model="Llama 2 70B (OpenOrca subset)", precision="FP8", hardware="H100 SXM 80GB",
              n_chips="8", parallelism="", batch="LoadGen Offline", input_len="dataset", output_len="dataset",
              metric="offline_tokens_per_s", value="24524.9", unit="tokens/s (8 GPUs)",
              notes="v4.1; 84.4792 samples/s; VALID")


def test_a_row_without_its_input_length_is_a_bound_on_the_best_case():
    """An unstated prompt is checked on the tool's fastest case (a one-token prompt): the measured rate must not
    beat it. The mean output per sample is the row's own tokens/s ÷ samples/s; with neither, 2 tokens."""
    out = predict_row(MLPERF, Aliases())
    assert out.best_case and out.measured_op == ">=" and out.bound_passes
    assert any("= 290 tokens a sample" in a for a in out.assumptions)
    assert any("one-token prompt" in a for a in out.assumptions)
    d = out.to_dict()
    assert "error" not in d and d["measured_bound"].startswith("best case >=")
    assert d["predicted"] is None and d["best_case_prediction"] == out.predicted  # a bound, not the row's prediction
    # the best case really is the best: a stated prompt of any length predicts less
    for isl in ("128", "1024"):
        stated = predict_row({**MLPERF, "input_len": isl, "output_len": "290"}, Aliases())
        assert not stated.best_case and stated.predicted <= out.predicted * 1.001
    # with no samples/s either, the best over a few output lengths; a rate beyond it fails the row
    bare = predict_row({**MLPERF, "notes": ""}, Aliases())
    assert any(a.startswith("output length not stated: the best over 2, 16, 128, 1024") for a in bare.assumptions)
    slow = predict_row({**MLPERF, "value": f"{bare.predicted * 1.5:.0f}", "notes": ""}, Aliases())
    assert slow.bound_passes is False and slow.predicted == pytest.approx(bare.predicted)
    rep = validate([MLPERF, TRT])
    e = rep.summary()["serving"]["expressed"]
    assert e == {"points": 1, "bounds": 1, "of": 2}
    # a deployment whose size the row says it does not state is not guessed
    gone = predict_row({**MLPERF, "n_chips": "", "hardware": "GB300 NVL72 (system size not stated)"}, Aliases())
    assert "not stated" in gone.reason


def test_chips_per_node_and_per_node_units():
    from tokenmath.measure.validate.rows import chips_of, unit_scope
    assert chips_of({"n_chips": "", "hardware": "H800 SXM nodes, 8 per node", "parallelism": "4 nodes"})[0] == 32
    assert unit_scope("tokens/s/node", "") == "node" and unit_scope("tokens/s/GPU", "") == "gpu"
    total = predict_row({**TRT, "id": "TRT-X05", "n_chips": "8", "parallelism": "TP1"}, Aliases())
    node = predict_row({**TRT, "id": "TRT-X06", "n_chips": "16", "parallelism": "TP1, 8 per node",
                        "unit": "tokens/s/node"}, Aliases())
    assert node.predicted == pytest.approx(total.predicted, rel=1e-9)  # 16 GPUs = 2 nodes of 8: per node = 8 GPUs


def test_a_refused_part_is_told_its_kin_by_model_number_probe_10f():
    """An MI350X (not in the catalog) was refused with no names to try: its siblings share no word but their number's
    family and shape, nearest number first."""
    s, note = Aliases().system("AMD Instinct MI350X")
    assert s is None and note.endswith("did you mean mi355x-8, mi325x-8, mi308x-8?"), note


@pytest.mark.parametrize("hardware, chips", [
    # an instance or server named with no count is one of it: the chips its name says (Google's '-4g' / '-4t',
    # Oracle's '.4'), names.yaml's instance_chips (AWS, Azure), a DGX / HGX server's 8, an NVL domain's size (Rubin's
    # NVL144 counts dies: 72 packages); a server in brackets glosses the part, and a size the row says is not stated
    # stays unstated
    ("p5.48xlarge", 8), ("ml.p5.48xlarge", 8), ("g5.xlarge", 1), ("g6.12xlarge", 4), ("inf2.24xlarge", 6),
    ("a3-highgpu-4g", 4), ("ct5lp-hightpu-4t", 4), ("BM.GPU.L40S.4", 4), ("gpu_8x_h100_sxm5", 8),
    ("Standard_NC24ads_A100_v4", 1), ("ND GB200 v6", 4), ("DGX H100", 8), ("GB200 NVL72", 72), ("Vera Rubin NVL144", 72),
    ("CloudMatrix384", 384), ("Atlas 800T A2", 8), ("H100", None), ("H100 SXM 80GB (DGX H100)", None),
    ("GB300 NVL72 (system size for this entry not stated)", None), ("GB300 NVL72 systems", None),
    # a count of instances times each one's chips ('2 x g5.xlarge' was 16: the 8-card system's domain)
    ("2 x g5.xlarge", 2), ("Trn2 UltraServer (4x trn2.48xlarge)", 64), ("2x DGX H100", 16),
    # counts in words, a single part, nodes of the system's server when their size is unstated
    ("a single H100", 1), ("two H100s", 2), ("dual RTX 4090", 2), ("MI300X (single GPU)", 1), ("one H100", 1),
    ("two 8xH100 nodes", 16), ("H100 80GB, 2 nodes", 16), ("DGX SuperPOD H100 (32 nodes)", 256),
    # other forms: nodes x chips with a space, a bracketed 'x8', an 'N-GPU' server; not a part's generation
    ("2x8 H100", 16), ("B200 (x8)", 8), ("AMD Instinct MI300X (8x, Infinity Fabric)", 8), ("x8 H100", 8), ("8-GPU H100 node", 8), ("8 NVIDIA H100", 8), ("Habana Gaudi 2 HPU", None),
    ("Intel Gaudi 3 (8 HPUs)", 8),
])
def test_chips_a_hardware_string_says_probe_10f(hardware, chips):
    from tokenmath.measure.validate.rows import chips_of
    s, note = Aliases().system(hardware)
    assert s is not None, note
    assert chips_of({"n_chips": "", "hardware": hardware, "parallelism": ""}, s)[0] == chips


def test_an_instance_named_without_a_count_is_all_of_its_chips():
    """'p5.48xlarge' with no n_chips is its 8 H100s: a whole instance's throughput is 8 replicas' (it was one's)."""
    eight = predict_row({**TRT, "id": "TRT-X71", "hardware": "H100 SXM 80GB", "n_chips": "8", "parallelism": ""},
                        Aliases())
    box = predict_row({**TRT, "id": "TRT-X72", "hardware": "p5.48xlarge", "n_chips": "", "parallelism": ""}, Aliases())
    assert box.predicted == pytest.approx(eight.predicted, rel=1e-9)
    assert any("p5.48xlarge: 8 chips" in w for w in box.why)


@pytest.mark.parametrize("text, entry", [
    ("TPU v4 (275 TFLOP/s bf16, 32 GiB HBM)", "tpu-v4-pod"), ("H800 SXM nodes, 8 per node", "hgx-h800"),
    ("H200 (CoreWeave, IB ConnectX-7)", "hgx-h200"), ("Intel Gaudi 3", "gaudi3-8"), ("8x H20", "hgx-h20"),
    # PCIe parts by name; an unstated form factor stays the SXM part, as before they existed
    ("NVIDIA L4", "pcie-l4-8"), ("L4 24GB", "pcie-l4-8"), ("A30", "pcie-a30-8"), ("A100 PCIe 80GB", "pcie-a100-8"),
    ("NVIDIA A100 PCIe", "pcie-a100-8"), ("H100 PCIe", "pcie-h100-8"), ("H100 80GB PCIe", "pcie-h100-8"),
    ("RTX PRO 6000 Blackwell", "pcie-rtx-pro-6000-8"), ("RTX Pro 6000", "pcie-rtx-pro-6000-8"),
    ("Intel Arc Pro B60", "pcie-b60-8"), ("H100 SXM", "hgx-h100"), ("H100", "hgx-h100"), ("H100 80GB", "hgx-h100"),
    ("A100 80GB SXM", "hgx-a100"), ("A100", "hgx-a100"), ("A100 80GB", "hgx-a100"), ("L40S", "pcie-l40s-8"),
    ("L40S PCIe", "pcie-l40s-8"),
    # V100 (16 GB only when stated), TPU v3 and its slices, Gaudi 2 beside Gaudi 3
    ("V100", "dgx1-v100"), ("Tesla V100-SXM2-32GB", "dgx1-v100"), ("V100 16GB", "dgx1-v100-16gb"),
    ("NVIDIA V100 SXM2 16GB", "dgx1-v100-16gb"), ("TPU v3", "tpu-v3-pod"), ("TPU v3-8", "tpu-v3-pod"),
    ("v3-32", "tpu-v3-pod"), ("Intel Gaudi 2", "gaudi2-8"), ("Gaudi2", "gaudi2-8"), ("HL-225", "gaudi2-8"),
    ("Intel Gaudi 3", "gaudi3-8"),
    # parts added later beside their neighbours: the L40 is not the L40S nor the L4; the A800 is not the A100
    ("NVIDIA L40", "pcie-l40-8"), ("L40 PCIe", "pcie-l40-8"), ("A800", "hgx-a800"),
    ("NVIDIA A800-SXM4-80GB", "hgx-a800"), ("H200 NVL", "pcie-h200-nvl-8"), ("NVIDIA H200 NVL", "pcie-h200-nvl-8"),
    ("GH200-96GB_aarch64x1", "gh200-96gb-1"), ("GH200 144GB", "gh200-1"),
    ("NVIDIA GH200 Grace Hopper Superchip", "gh200-1"),
    # Google's name for TPU7x; a Trn2 UltraServer is the 64-chip domain, even beside the instances it is built of
    ("Ironwood TPU", "tpu7x-pod"), ("Google Ironwood", "tpu7x-pod"), ("TPU7x", "tpu7x-pod"),
    ("Trn2 UltraServer (4x trn2.48xlarge)", "trn2-ultraserver-64"), ("trn2u.48xlarge", "trn2-ultraserver-64"),
    ("trn2.48xlarge", "trn2-16"),
])
def test_scored_hardware_matcher(text, entry):
    al = Aliases()
    s, note = al.system(text)
    assert s.name == entry and "score" in note and al.matched["hardware"]["entry"] == entry


@pytest.mark.parametrize("text, entry", [
    # cloud instance and shape names (names.yaml): AWS's single-H100 P5 and GB200 UltraServer instance, Google's A3
    # sizes, A3 Edge, A4X, A2 Mega and TPU v5p VMs, TPU v4 slices, Azure's ND A100 v4 (40 GB; NDm the 80 GB), Oracle's
    # B200, GB200 and A10 shapes
    ("p5.4xlarge", "hgx-h100"), ("p6e-gb200.36xlarge", "gb200-nvl72"), ("a3-highgpu-1g", "hgx-h100"),
    ("a3-edgegpu-8g", "hgx-h100"), ("a4x-highgpu-4g", "gb200-nvl72"), ("a2-megagpu-16g", "hgx-a100-40gb"),
    ("ct5p-hightpu-4t", "tpu-v5p-pod"), ("v4-32", "tpu-v4-pod"), ("ND A100 v4", "hgx-a100-40gb"),
    ("Standard_ND96asr_v4", "hgx-a100-40gb"), ("ND A100 v4 80GB", "hgx-a100"), ("NDm A100 v4", "hgx-a100"),
    ("BM.GPU.B200.8", "hgx-b200"), ("BM.GPU.GB200.4", "gb200-nvl72"), ("VM.GPU.A10.1", "pcie-a10-8"),
    # a tool's or vendor's own name: Gaudi 2's HL-225H card; nvidia-smi's 'GH200 480GB' (its LPDDR5X in the name) and
    # a DGX A100 named by its total memory: a size the matched name carries is no capacity
    ("HL-225H", "gaudi2-8"), ("NVIDIA GH200 480GB", "gh200-96gb-1"), ("gpu_1x_gh200", "gh200-96gb-1"),
    ("DGX A100 320GB", "hgx-a100-40gb"), ("DGX A100 640GB", "hgx-a100"),
    # a plural ('two H100s'), after the string as written ('L40s' is the L40S)
    ("two H100s", "hgx-h100"), ("8 MI300Xs", "mi300x-8"), ("NVIDIA L40s", "pcie-l40s-8"),
    # the RTX 4090 D (the China-market cut, fewer SMs) is not the RTX 4090
    ("NVIDIA GeForce RTX 4090 D", None), ("NVIDIA GeForce RTX 4090", "pcie-rtx-4090-8"),
])
def test_hardware_names_probe_10f(text, entry):
    s, note = Aliases().system(text)
    assert (s.name if s else None) == entry, note
    if entry is None:
        assert "board" in note


@pytest.mark.parametrize("text, entry", [
    ("Qwen3-235B-A22B", "qwen3-235b-a22b"), ("gpt-oss-120b", "gpt-oss-120b"), ("GLM-4.6", "glm-4.7"),
    ("Qwen3-30B-A3B-Instruct-2507", "qwen3-30b-a3b"), ("DeepSeek-R1-0528", "deepseek-v3"),
    ("DeepSeek-V3.2-Exp", "deepseek-v3.2"), ("Llama-3.1-70B-Instruct", "llama-3.1-70b"), ("Llama-2-70B", "llama-2-70b"),
    ("GLM-4.5-Air", "glm-4.5-air"), ("Llama 4 Scout 17B-16E", "llama-4-scout"), ("Intel Gaudi 1", None), ("Qwen2.5-72B", "qwen2.5-72b"),
    ("Llama 4 Maverick", "llama-4-maverick"), ("Qwen3-8B-FP8", "qwen3-8b"), ("Qwen3-0.6B", "qwen3-0.6b"),
    ("Qwen3.6-35B-A3B", "qwen3.5-35b-a3b"), ("Kimi-K2.5", "kimi-k2.5"), ("Kimi-K2-Instruct", "kimi-k2"),
    ("Llama 2 13B", "llama-2-13b"),
    # transformers-default entries, and the neighbours they must not take: another generation of the family (a bare
    # number after one of the name's words), a larger sibling (R+), a model not in the catalog
    ("Falcon 7B", "falcon-7b"), ("tiiuae/falcon-7b", "falcon-7b"), ("Falcon-7B-Instruct", "falcon-7b"),
    ("Falcon 2 11B", None), ("Falcon 3 7B", "falcon3-7b"), ("Falcon-40B", "falcon-40b"), ("GPT-NeoX 20B", "gpt-neox-20b"),
    ("EleutherAI/gpt-neox-20b", "gpt-neox-20b"), ("Command R", "command-r-v01"), ("Command-R (35B)", "command-r-v01"),
    ("CohereForAI/c4ai-command-r-v01", "command-r-v01"), ("Command R+", "command-r-plus"), ("Command R Plus", "command-r-plus"),
    ("c4ai-command-r-plus", "command-r-plus"), ("Command R 08-2024", None), ("c4ai-command-r-08-2024", None), ("Command R7B", None),
    ("OLMo 7B", "olmo-7b"), ("allenai/OLMo-7B-hf", "olmo-7b"), ("OLMo 2 7B", None), ("OLMo-2-1124-7B", None),
    ("Gemma 7B", "gemma-7b"), ("google/gemma-7b-it", "gemma-7b"), ("Gemma 2 7B", None), ("Gemma 2 9B", "gemma-2-9b"),
    ("Qwen1.5-MoE-A2.7B", "qwen1.5-moe-a2.7b"), ("Qwen/Qwen1.5-MoE-A2.7B-Chat", "qwen1.5-moe-a2.7b"),
    ("Qwen2-57B-A14B", "qwen2-57b-a14b"), ("StarCoder2-7B", "starcoder2-7b"), ("StarCoder 15B", None), ("MPT-7b", "mpt-7b"),
    ("Llama 3 405B (dense, GQA)", "llama-3.1-405b"),  # 'Llama 3' for a name's 3.1: half credit, not another generation
])
def test_scored_model_matcher(text, entry):
    from tokenmath.measure.validate.match import _best, _model_candidates, _system_candidates
    if text == "Intel Gaudi 1":  # a generation the catalog lacks: neither Gaudi 2 nor Gaudi 3
        assert _best(text, _system_candidates()) is None
        return
    m, note = Aliases().model(text)
    assert (m.name if m else None) == entry, note


def test_another_generation_refuses_a_model_name_only():
    from tokenmath.measure.validate.match import score_name
    assert score_name("OLMo-7B", "OLMo 2 7B") == 1.0  # every token of the name is there...
    assert score_name("OLMo-7B", "OLMo 2 7B", generations=True) == 0.0  # ...but '2' after 'olmo' is OLMo 2
    assert score_name("Gemma-3-27B", "Gemma 3 27B", generations=True) == 1.0  # the name's own generation
    # a number after a packaging word is a release date, not a generation
    assert score_name("Kimi-K2-Instruct", "Kimi-K2-Instruct-0711", generations=True) == 1.0


def test_model_names_say_their_sibling_their_generation_and_their_mixer():
    """A name's sibling word is part of the model ('Phi-3-medium' is not any Phi-3 with a 128k context); a letter and
    digit after the family word ('Falcon-H1') or a letter glued to the version ('GLM-4.5V') is another model; a string
    naming Mamba is no attention-only entry; a MoE name's active size ('A22B') weighs little beside its stated total;
    'bloom-7b1' states 7.1B."""
    from tokenmath.measure.validate.match import score_name
    assert score_name("Phi-3-medium-128k-instruct", "Phi-3-vision-128k-instruct", generations=True) == 0.0
    assert score_name("Phi-3-medium-128k-instruct", "Phi-3-vision-128k-instruct") > 0.8  # hardware: not applied
    assert score_name("falcon-7b", "Falcon-H1-7B", generations=True) == 0.0
    assert score_name("glm-4.5", "GLM-4.5V", generations=True) == 0.0
    assert score_name("glm-4.5", "GLM-4.5-FP8", generations=True) == 1.0
    assert score_name("qwen3-235b-a22b", "Qwen3 235B", generations=True) > 0.95
    assert score_name("qwen3-235b-a22b", "Qwen3-235B-A3B", generations=True) == 0.0
    assert score_name("hunyuan-a13b", "Hunyuan-Large", generations=True) < 0.8  # no total stated: the A13B counts
    for text in ("tiiuae/falcon-mamba-7b", "bigscience/bloom-7b1"):
        m, note = Aliases().model(text)
        assert m is None and "a different model" in note
    assert Aliases().model("Jamba (Mamba hybrid) 1.5 Mini")[0].name == "jamba-1.5-mini"  # its mixer is a recurrent one
    m, note = Aliases().model("Llama 3 4090")  # a chip's other name ('4090') names no model
    assert m is None and "rtx-4090" not in note


@pytest.mark.parametrize("text,entry", [
    ("Llama2-70B", "llama-2-70b"), ("llama2-70b-99", "llama-2-70b"), ("LLaMA2-13B", "llama-2-13b"),
    ("Llama3-70B", "llama-3-70b"), ("Llama3.1-405B", "llama-3.1-405b"), ("Gemma2-27B", "gemma-2-27b"),
    ("Phi3-mini", "phi-3-mini"), ("OLMo2 7B", None), ("Falcon2-11B", None),  # another generation, glued or not
    ("Qwen2-14B", None), ("Qwen2.5-14B", "qwen2.5-14b"),  # Qwen2 is not Qwen2.5: the name's own tokens stay whole
    ("Qwen2-7B", "qwen2.5-7b"),  # ...except where the catalog names it: Qwen2-7B has Qwen2.5-7B's shapes (an alias)
    ("Falcon3-7B", "falcon3-7b"),  # Falcon3 is in the catalog (round 13): the glued generation is its own entry
])
def test_a_family_glued_to_its_generation(text, entry):
    """'Llama2-70B' is 'Llama 2 70B': a family word glued to its generation number is read as two tokens (model
    names only, the string's side), so the generation check still refuses OLMo2 for OLMo-7B."""
    m, note = Aliases().model(text)
    assert (m.name if m else None) == entry, note


def test_prediction_reports_what_it_matched():
    r = predict_row(TRT, Aliases())
    assert r.matched["model"]["entry"] == "llama-3.1-8b" and r.matched["hardware"]["entry"] == "hgx-h200"
    assert r.to_dict()["matched"]["model"]["score"] == 1.0


def test_another_table_with_a_byte_order_mark_other_case_and_fewer_columns(tmp_path):
    """A spreadsheet's CSV: BOM, capitalised headers, only the six columns a row needs; an unstated precision
    is the checkpoint's own, said as an assumption."""
    f = tmp_path / "t.csv"
    f.write_text("\ufeffID,Model,Hardware,N_chips,Batch,Input_len,Output_len,Metric,Value,Unit\n"
                 "X-1,Llama 3.1 8B,H100 SXM 80GB,1,1,128,128,decode_tokens_per_s_per_user,150,tokens/s\n",
                 encoding="utf-8")
    rep = validate_table(f)
    assert not rep.unexpressed, rep.unexpressed
    (r,) = rep.rows
    assert any("precision not stated: the checkpoint's own, bf16" in a for a in r.assumptions)


@pytest.mark.parametrize("sep", ["\t", ";"])
def test_a_tab_or_semicolon_export_with_spaced_headers_reads_as_the_csv(tmp_path, sep):
    """A spreadsheet's tab- or semicolon-separated export, headers written as words ("N Chips", "Input Len"):
    read as the comma-separated table (before: a missing-column refusal, or the spaced columns read empty)."""
    head = ["ID", "Model", "Hardware", "N Chips", "Batch", "Input Len", "Output-Len", "Metric", "Value", "Unit"]
    cells = ["X-1", "Llama 3.1 8B", "H100 SXM 80GB", "1", "1", "60000", "128", "decode_tokens_per_s_per_user", "150",
             "tokens/s"]
    f = tmp_path / "t.tsv"
    f.write_text(sep.join(head) + "\n" + sep.join(cells) + "\n", encoding="utf-8")
    (r,) = validate_table(f).rows
    g = tmp_path / "t.csv"
    g.write_text(",".join(h.lower().replace(" ", "_").replace("-", "_") for h in head) + "\n" + ",".join(cells)
                 + "\n", encoding="utf-8")
    (want,) = validate_table(g).rows
    (short,) = validate_table(g.write_text(g.read_text().replace(",60000,", ",128,")) and g).rows
    assert r.predicted == pytest.approx(want.predicted) and short.predicted > 1.1 * want.predicted
    # a semicolon export writes decimals with a comma ('150,5'); it was read as 1,505, ten times the figure
    f.write_text(sep.join(head) + "\n" + sep.join(cells[:-2] + ["150,5", "tokens/s"]) + "\n", encoding="utf-8")
    assert sep != ";" or validate_table(f).rows[0].measured == 150.5


def test_serving_rows_are_known_by_what_they_measure_not_by_their_id():
    rows = [{**TRT, "id": "HID-001"}, {**BS1, "id": "ZZ-9"}, {**GEMM, "id": "HID-002"}]
    s = validate(rows).summary()
    assert s["serving"]["n"] == 2 and set(s["serving"]["groups"]) == {"HID", "ZZ"}
    assert s["serving"]["expressed"]["of"] == 2


def test_a_decode_rate_at_a_stated_context_length_is_a_point():
    """DeepSeek's decode nodes: a rate per node at an average KV length, no prompt/output split: the decode step
    at that context, not a best case over an unstated prompt."""
    row = _row(id="X-1", model="DeepSeek-V3", precision="FP8", hardware="H800 SXM nodes (8 per node)",
               n_chips="144", parallelism="EP144", context_len="4989", metric="decode_output_tokens_per_s_per_node",
               value="14800", unit="tokens/s per node")
    out = predict_row(row, Aliases())
    assert not out.best_case and out.kind == "decode" and out.predicted > 0
    assert "decode at context 4989" in " ".join(out.why)
    assert any("context length 4989" in a for a in out.assumptions)


@pytest.mark.parametrize("metric, unit, phase", [
    ("output_tokens_per_s_per_node", "tokens/s per node", "decode"),
    ("throughput per GPU", "output tok/s/GPU", "decode"),
    ("input_tokens_per_s_per_node", "tokens/s per node", "prefill"),
    ("throughput per GPU", "input tokens/s/GPU", "prefill"),
])
def test_prefill_decode_disaggregation_reads_one_role_per_node(metric, unit, phase):
    """With prefill and decode on separate chips, a rate per node or GPU is one role's: output tokens are the
    decode chips', input tokens the prefill chips' (their whole run would mix both on one chip)."""
    row = _row(id="X-2", model="DeepSeek-V3", precision="FP8", hardware="H100 80GB", n_chips="96",
               parallelism="PD disaggregation, 12 nodes", input_len="2000", output_len="100", metric=metric,
               value="20000", unit=unit)
    out = predict_row(row, Aliases())
    assert out.kind == phase, out.why
    assert any("disaggregated" in a for a in out.assumptions)
    whole = predict_row({**row, "parallelism": "12 nodes"}, Aliases())  # no split stated: a whole run
    assert whole.kind == "run"


@pytest.mark.parametrize("metric, unit, key", [("TPOT", "ms", "TPOT"), ("per_token_latency", "ms", "TPOT"),
                                               ("time to first token", "ms", "TTFT"), ("1st-token latency", "ms", "TTFT"),
                                               ("e2e latency", "s", "e2e")])
def test_a_latency_at_a_stated_batch_is_one_static_batch(metric, unit, key):
    """A latency at 'batch 64' with no load stated: the batch prefilled, then decoded together (as latency
    benchmarks run it); TPOT is the mean decode step, TTFT the batch's prefill, e2e both."""
    from tokenmath.core.load import load_model, load_system
    from tokenmath.core.roofline import Layout, step
    row = _row(id="X-3", model="Llama 3.1 8B", precision="BF16", hardware="H100 SXM 80GB", n_chips="1",
               parallelism="TP1", batch="8", input_len="512", output_len="64", metric=metric, value="10", unit=unit)
    out = predict_row(row, Aliases())
    assert out.kind == "static" and not out.higher_is_better, out
    m, s = load_model("llama-3.1-8b"), load_system("hgx-h100")
    dec = step(m, s, G=1, B=8, S=512 + np.arange(64), phase="decode", precision="bf16", layout=Layout(tp=1, ep=1))
    pre = step(m, s, G=1, B=8, S=512, phase="prefill", precision="bf16", layout=Layout(tp=1, ep=1))
    tpot, ttft = float(np.mean(dec.v("t_step"))), float(pre.v("t_step"))
    scale = 1e-3 if unit == "ms" else 1.0
    want = {"TPOT": tpot, "TTFT": ttft, "e2e": ttft + 63 * tpot}[key] / scale
    assert out.predicted == pytest.approx(want, rel=0.02)
    assert out.spec <= out.predicted  # the peaks' time undercuts the priors'
    # a stated concurrency is a load: the simulator's closed loop, not a static batch
    loaded = predict_row({**row, "batch": "concurrency 8"}, Aliases())
    assert loaded.kind != "static"


def test_a_latency_on_chips_with_no_split_is_one_replica_over_them():
    row = _row(id="X-4", model="PaLM 540B", precision="int8", hardware="TPU v4 (275 TFLOP/s bf16, 32 GiB HBM)",
               n_chips="64", parallelism="2D weight-stationary", batch="64", input_len="2048", output_len="64",
               metric="per_token_latency", value="29", unit="ms")
    out = predict_row(row, Aliases())
    assert out.kind == "static" and "on 64 chip(s)" in out.why[0]
    assert any("one replica over the row's 64 chips" in a for a in out.assumptions)
    assert any("INT8 with no more said: read as weight-only" in a for a in out.assumptions)  # a choice, stated


@pytest.mark.parametrize("text, prec", [("int8", "int8"), ("INT8", "int8"), ("float16", "bf16"), ("FP16", "bf16"),
                                        ("bfloat16", "bf16"), ("GPTQ 4-bit", "int4"), ("fp32", "fp32"),
                                        ("FP8", "fp8"), ("INT8 weight-only", "int8")])
def test_plain_precision_words(text, prec):
    assert Aliases().precision(text)[0] == prec


def test_a_best_case_row_with_its_split_unstated_takes_the_best_split():
    """A per-user speed on 8 chips with nothing but the chips stated: the best case is taken over how a
    replica splits them, as over its other unstated inputs."""
    row = _row(id="X-5", model="DeepSeek-R1", precision="FP4", hardware="B200", n_chips="8", batch="1",
               metric="tokens/s/user", value="250", unit="tok/s/user")
    out = predict_row(row, Aliases())
    assert out.best_case
    assert any("the best the roofline finds over the row's 8 chips" in a for a in out.assumptions)
    assert not any("by the engine rule" in a for a in out.assumptions)


@pytest.mark.parametrize("value, metric, unit, want_value, want_unit", [
    ("9000 tok/s", "output throughput", "", "9000", "tok/s"),
    ("1,234.5 tokens/s/GPU", "throughput", "", "1,234.5", "tokens/s/GPU"),
    ("9000", "Throughput (tokens/s)", "", "9000", "tokens/s"),
    ("40", "tokens per second per user", "", "40", "tokens/s/user"),
    ("9000", "throughput", "tokens/s", "9000", "tokens/s"),  # a stated unit is kept
    ("600", "Output TPS per GPU", "", "600", "tokens/s/GPU"), ("55", "tps/user", "", "55", "tokens/s/user"),
])
def test_a_unit_left_out_of_its_column_is_read_where_tables_put_it(value, metric, unit, want_value, want_unit):
    from tokenmath.measure.validate.rows import with_unit
    r = with_unit(_row(value=value, metric=metric, unit=unit))
    assert (r["value"], r["unit"]) == (want_value, want_unit)


def test_a_time_per_output_token_at_users_is_a_tpot_under_load():
    row = _row(id="X-7", model="Llama 3.1 8B", precision="FP8", hardware="H100 SXM 80GB", n_chips="1",
               parallelism="TP1", input_len="128", output_len="128", metric="time per output token at 16 users",
               value="10", unit="ms")
    out = predict_row(row, Aliases())
    assert out.kind == "concurrency" and not out.higher_is_better and "concurrency 16" in out.why[0]


def test_a_models_latency_in_a_time_unit_is_a_serving_row():
    from tokenmath.measure.validate.rows import row_kind
    assert row_kind(_row(metric="latency, batch 1", unit="ms/token")) == "serving"
    assert row_kind(_row(metric="latency", unit="s", notes="end-to-end")) == "serving"
    assert row_kind(_row(metric="all_reduce latency", unit="us")) != "serving"


def test_a_stated_batch_beyond_the_kv_pool_runs_what_the_pool_holds():
    """Llama 2 70B FP8 on one H200 at 128+4096 tokens: the pool holds ~100 sequences, so a stated batch of
    640 runs no faster than the pool's batch (the scheduler admits a request only when its whole KV fits)."""
    base = _row(id="X-6", model="Llama 2 70B", precision="FP8", hardware="H200 SXM 141GB", n_chips="1",
                parallelism="TP1", input_len="128", output_len="4096", metric="output_tokens_per_s_per_gpu",
                value="2000", unit="tokens/s/GPU")
    big = predict_row({**base, "batch": "640"}, Aliases())
    assert any("the KV pool holds" in w for w in big.why)
    held = int(next(w for w in big.why if "the KV pool holds" in w).split("holds ")[1].split()[0])
    assert held < 640
    at_pool = predict_row({**base, "batch": str(held)}, Aliases())
    assert big.predicted == pytest.approx(at_pool.predicted, rel=1e-9)


@pytest.mark.parametrize("metric, unit, speed", [
    ("throughput per GPU under 50 ms TPOT", "tokens/s/GPU", 20.0),
    ("output throughput at p99 TPOT 100 ms", "tokens/s", 10.0),
    ("throughput with TPOT < 40 ms", "tokens/s", 25.0),
])
def test_a_rate_held_to_a_latency_limit_is_a_rate_at_that_speed(metric, unit, speed):
    """The TPOT in 'throughput under 50 ms TPOT' is the limit the rate was held to, not what the row measures:
    a rate at ≥ 1/TPOT tokens/s per user (the frontier)."""
    from tokenmath.measure.validate.atload import quantity_of
    from tokenmath.measure.validate.rows import measured_part
    assert "TPOT" not in measured_part(metric)
    assert quantity_of(metric, unit)[2]  # a rate: higher is better
    row = _row(id="X-8", model="Llama 3.1 8B", precision="FP8", hardware="H100 SXM 80GB", n_chips="1",
               parallelism="TP1", input_len="1024", output_len="256", metric=metric, value="1000", unit=unit)
    out = predict_row(row, Aliases())
    assert out.kind == "at_speed" and f"≥ {speed:g} tok/s/user" in out.why[0], out.why
    assert measured_part("median TPOT") == "median TPOT" and measured_part("TPOT at 64 users") == "TPOT at 64 users"


@pytest.mark.parametrize("text, want", [("1,234 ± 50", (1184.0, 1284.0, "")), ("3.2e4", (32000.0, 32000.0, "")),
                                        ("12.5 (p50)", (12.5, 12.5, "")), ("0 ± 1", None)])
def test_measured_values_with_a_spread_an_exponent_or_a_statistic(text, want):
    from tokenmath.measure.validate.rows import parse_measured
    m = parse_measured(text)
    assert (None if m is None else (m.low, m.high, m.op)) == want


def test_a_time_unit_may_carry_its_statistic():
    from tokenmath.measure.validate.atload import quantity_of
    from tokenmath.measure.validate.rows import unit_scale
    assert unit_scale("ms (p99)") == 1e-3 and quantity_of("TTFT", "ms (p99)")[:2] == ("ttft_s", "p99")


@pytest.mark.parametrize("model, prec", [("Qwen/Qwen2.5-7B-Instruct-AWQ", "int4"), ("Llama-3.1-8B-Instruct-FP8", "fp8"),
                                         ("Llama-3.1-8B-Instruct", "bf16")])
def test_an_unstated_precision_is_read_from_the_models_name(model, prec):
    row = _row(id="X-9", model=model, hardware="H100 SXM 80GB", n_chips="1", parallelism="TP1", batch="1",
               input_len="128", output_len="128", metric="decode_tokens_per_s_per_user", value="100", unit="tokens/s")
    out = predict_row(row, Aliases())
    assert out.interval_key[2] == prec
    assert any(a.startswith("precision not stated") for a in out.assumptions)


@pytest.mark.parametrize("model, prec", [
    # suffixes of quantised releases the name reader missed (probe round 10F): they were read as the checkpoint's own
    # BF16: Red Hat's '.w8a16', bitsandbytes' '-bnb-4bit', MLX's '-4bit' / '-8bit', a 16-bit copy of an MXFP4 model,
    # Ollama's '-fp16' tag, an 8-bit GPTQ
    ("RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w8a16", "int8"), ("unsloth/Meta-Llama-3.1-8B-Instruct-bnb-4bit", "int4"),
    ("mlx-community/Meta-Llama-3.1-8B-Instruct-4bit", "int4"), ("mlx-community/Qwen2.5-7B-Instruct-8bit", "int8"),
    ("unsloth/gpt-oss-20b-BF16", "bf16"), ("llama3.1:8b-instruct-fp16", "bf16"), ("TheBloke/Llama-2-13B-GPTQ-8bit", "int8"),
    ("nm-testing/Meta-Llama-3.1-8B-Instruct-W8A8-FP8", "fp8"),
])
def test_a_quantised_releases_suffix_is_its_precision_probe_10f(model, prec):
    row = _row(id="X-9", model=model, hardware="H100 SXM 80GB", n_chips="1", parallelism="TP1", batch="1",
               input_len="128", output_len="128", metric="decode_tokens_per_s_per_user", value="100", unit="tokens/s")
    out = predict_row(row, Aliases())
    assert out.interval_key[2] == prec
    assert any(a.startswith("precision not stated") and "from the model's name" in a for a in out.assumptions)


@pytest.mark.parametrize("text, prec", [
    # FP8 W8A8 (llm-compressor's W8A8-FP8) is FP8, not INT8 (it was read as INT8); W8A8 alone or SmoothQuant stays
    # INT8 W8A8 ('w8a8': the INT8 tensor-core rate, not weight-only 'int8'); FP8 named after another word is FP8 (it
    # matched no rule); a string that starts with BF16 is BF16
    ("FP8 W8A8", "fp8"), ("W8A8-FP8", "fp8"), ("w8a8", "w8a8"), ("SmoothQuant W8A8", "w8a8"),
    ("compressed-tensors FP8", "fp8"), ("BF16 weights, FP8 KV cache", "bf16"),
])
def test_precision_strings_probe_10f(text, prec):
    assert Aliases().precision(text)[0] == prec


@pytest.mark.parametrize("model", ["Meta-Llama-3.1-70B-Instruct-IQ2_XS.gguf", "Qwen3-30B-A3B-UD-Q4_K_XL.gguf"])
def test_a_gguf_i_quant_or_dynamic_mix_is_refused_with_its_reason(model):
    """llama.cpp's i-quants and Unsloth's dynamic mixes have no storage format here: refused as such (IQ2_XS was read
    as BF16, UD-Q4_K_XL as a 'Q4_K' no rule knew)."""
    row = _row(id="X-9", model=model, hardware="H100 SXM 80GB", n_chips="1", parallelism="TP1", batch="1",
               input_len="128", output_len="128", metric="decode_tokens_per_s_per_user", value="100", unit="tokens/s")
    assert "i-quant or dynamic quantisation" in predict_row(row, Aliases()).reason


@pytest.mark.parametrize("text, entry", [
    # Ollama's deepseek-r1 tags name R1's distills by size (32b matched DeepSeek-V3: its 37B active is within the
    # size tolerance); its 8b tag has named two models, and stays refused
    ("deepseek-r1:70b", "llama-3.3-70b"), ("deepseek-r1:32b", "qwen2.5-32b"), ("deepseek-r1:14b", "qwen2.5-14b"),
    ("deepseek-r1:7b", "qwen2.5-7b"), ("deepseek-r1:8b", None), ("deepseek-r1:671b", "deepseek-v3"),
    # the one Phi-3 of each size (Ollama's phi3:14b, phi3:3.8b); Llama Guard 3 8B is a Llama 3.1 8B
    ("phi3:14b", "phi-3-medium"), ("phi3:3.8b", "phi-3-mini"), ("meta-llama/Llama-Guard-3-8B", "llama-3.1-8b"),
    # providers' ids that write a version without its point: AWS Bedrock's 'llama3-1' (was Llama 3), Fireworks' 'v3p1'
    # (was refused); a generation glued to the size is no version ('qwen2-57b-a14b', 'llama3-70b-8192')
    ("meta.llama3-1-70b-instruct-v1:0", "llama-3.1-70b"), ("us.meta.llama3-3-70b-instruct-v1:0", "llama-3.3-70b"),
    ("meta.llama3-2-1b-instruct-v1:0", "llama-3.2-1b"), ("accounts/fireworks/models/llama-v3p1-70b-instruct", "llama-3.1-70b"),
    ("qwen2-57b-a14b", "qwen2-57b-a14b"), ("llama3-70b-8192", "llama-3-70b"),
])
def test_model_names_probe_10f(text, entry):
    m, note = Aliases().model(text)
    assert (m.name if m else None) == entry, note


def test_a_static_batch_that_does_not_fit_is_refused():
    row = _row(id="X-10", model="Llama 3.1 405B", precision="BF16", hardware="H100 SXM 80GB", n_chips="1",
               parallelism="TP1", batch="1", input_len="128", output_len="128", metric="TTFT", value="100", unit="ms")
    assert "no room" in predict_row(row, Aliases()).reason
    big = {**row, "model": "Llama 3.1 8B", "batch": "4096", "input_len": "8192", "output_len": "8192"}
    assert "KV pool" in predict_row(big, Aliases()).reason


@pytest.mark.parametrize("unit, scale", [("GB/s", 1e9), ("Gb/s", 1e9 / 8), ("Gbps", 1e9 / 8), ("GBps", 1e9),
                                         ("Tb/s", 1e12 / 8), ("TB/s", 1e12), ("GiB/s", 2.0**30)])
def test_bits_and_bytes_by_their_case(unit, scale):
    from tokenmath.measure.validate.rows import unit_scale
    assert unit_scale(unit) == pytest.approx(scale)


@pytest.mark.parametrize("hardware, system", [("H100 SXM5, PCIe Gen5", "hgx-h100"), ("DGX H100, ConnectX-7 PCIe", "hgx-h100"),
                                              ("H100 PCIe", "pcie-h100-8")])
def test_a_host_link_named_beside_the_part_is_not_its_form_factor(hardware, system):
    s, why = Aliases().system(hardware)
    assert s is not None and s.name == system, why


def test_caches_disks_and_gptq_int8():
    assert "no figure" in predict_row(_row(id="X-11", metric="L2 cache bandwidth", unit="TB/s", value="10",
                                           hardware="H100 SXM", n_chips="1"), Aliases()).reason
    assert Aliases().precision("GPTQ-Int8")[0] == "int8"
    pd_total = _row(id="X-12", model="DeepSeek-V3", precision="FP8", hardware="H100 80GB", n_chips="96",
                    parallelism="PD disaggregation", input_len="2000", output_len="100",
                    metric="total tokens per second per node", value="20000", unit="tokens/s per node")
    assert "mixes the two roles" in predict_row(pd_total, Aliases()).reason


@pytest.mark.parametrize("value, unit, metric", [("2.7x", "", "throughput"), ("3.5", "x", "decode speed"),
                                                 ("+498%", "", "throughput"), ("2.18", "", "speedup over vLLM"),
                                                 ("1.9", "tokens/s", "throughput relative to H100")])
def test_a_ratio_is_refused_as_a_ratio(value, unit, metric):
    """'2.7x', '+498%' or a speedup metric compare two setups: refused with that reason, never read as a rate."""
    out = predict_row(dict(TRT, value=value, unit=unit, metric=metric), Aliases())
    assert isinstance(out, Unexpressed) and "a ratio between two setups" in out.reason, out


@pytest.mark.parametrize("unit, metric, scale", [("msec", "Time per output token", 1e-3),
                                                 ("milliseconds", "TTFT", 1e-3), ("usec", "ITL", 1e-6),
                                                 ("samples/s", "offline", 1.0), ("queries/s", "throughput", 1.0),
                                                 ("queries per second", "throughput", 1.0)])
def test_more_unit_spellings(unit, metric, scale):
    from tokenmath.measure.validate.rows import row_kind, unit_scale
    assert unit_scale(unit) == scale
    assert row_kind(dict(TRT, unit=unit, metric=metric)) == "serving"


def test_a_request_rate_of_unsized_requests_is_refused_not_a_vacuous_bound():
    """requests/s with no output length: one-token prompts and two-token answers would 'pass' any rate."""
    row = dict(TRT, input_len="ShareGPT", output_len="", metric="throughput (req/s)", value="25", unit="")
    out = predict_row(row, Aliases())
    assert isinstance(out, Unexpressed) and "request rate with no output length" in out.reason
    sized = predict_row(dict(row, input_len="1200", output_len="60"), Aliases())
    assert not isinstance(sized, Unexpressed) and sized.unit == "req/s"


def test_tbt_is_the_time_between_tokens():
    """Sarathi-Serve's and Splitwise's TBT is the inter-token latency, as a metric or as a limit."""
    from tokenmath.measure.validate.atload import quantity_of
    from tokenmath.measure.validate.rows import measured_part
    assert quantity_of("P99 TBT", "ms")[:2] == ("itl_s", "p99")
    assert measured_part("capacity (QPS) under P99 TBT 100 ms") == "capacity (QPS)"


def test_decoding_speed_at_a_stated_context_is_a_decode_step():
    row = dict(TRT, model="CodeLlama-34B", precision="fp16", hardware="A100 80GB", parallelism="", batch="bs=1",
               input_len="", output_len="", context_len="64000", metric="decoding speed", value="25",
               unit="tokens/s")
    out = predict_row(row, Aliases())
    assert out.kind == "decode" and any("context 64000" in w for w in out.why), out


def test_prompt_throughput_counts_input_tokens():
    """vLLM's 'prompt throughput' (beside 'generation throughput') is input tokens/s, not output."""
    from tokenmath.measure.validate.atload import quantity_of
    assert quantity_of("Prompt throughput", "tokens/s")[0] == "input_tokens_per_s"
    assert quantity_of("Avg generation throughput", "tokens/s")[0] == "output_tokens_per_s"


def test_a_samples_rate_beside_the_same_runs_tokens_per_s_reads_its_output_length():
    """MLPerf-style samples/s with the run's output tokens/s in its notes: the mean output per sample is
    tokens/s ÷ samples/s (24,525 / 84.5 = 290), then the usual best case over the unstated prompt; a total
    tokens/s, or none, derives nothing and the row stays refused."""
    row = dict(MLPERF, metric="Offline", value="84.5", unit="samples/s", input_len="", output_len="",
               notes="24,525 tokens/s in the same run")
    out = predict_row(row, Aliases())
    assert out.best_case and any("= 290 tokens a request" in a for a in out.assumptions), out
    after = predict_row(dict(row, notes="output tokens/s: 24,525"), Aliases())
    assert any("= 290 tokens a request" in a for a in after.assumptions)
    # a prefill rate or a per-user speed target is not the run's output tokens/s (they gave 118 and 1 token)
    for notes in ("", "24,525 total tokens/s", "3,000 tokens/s/GPU", "prefill 10k tokens/s",
                  "interactivity target 50 tok/s"):
        gone = predict_row(dict(row, notes=notes), Aliases())
        assert isinstance(gone, Unexpressed) and "request rate with no output length" in gone.reason, notes


@pytest.mark.parametrize("value, metric, unit, want_value, want_unit", [
    ("samples/s 28", "offline", "", "28", "samples/s"),
    ("tok/s: 1,234", "output throughput", "", "1,234", "tok/s"),
    ("tok/s: 1,234", "output throughput", "tokens/s", "1,234", "tokens/s"),  # the same unit twice
    ("ms 12.5", "TTFT", "", "12.5", "ms"),
    ("84.5", "Offline samples/s", "", "84.5", "samples/s"),  # a count per second named in the metric
])
def test_a_value_written_after_its_unit(value, metric, unit, want_value, want_unit):
    from tokenmath.measure.validate.rows import with_unit
    r = with_unit(_row(value=value, metric=metric, unit=unit))
    assert (r["value"], r["unit"]) == (want_value, want_unit)
    assert with_unit(_row(value="ms 12.5", unit="tok/s"))["value"] == "ms 12.5"  # units that disagree: not read


@pytest.mark.parametrize("metric, unit", [("throughput per dollar", "tokens/s"), ("tokens per watt", "tok/s/W"),
                                          ("cost", "$/M tokens"), ("throughput", "tokens/s per kW")])
def test_a_rate_normalised_by_cost_or_power_is_refused(metric, unit):
    """'tok/s/W' was read as tokens/s (1,000x off): a rate per dollar, watt or joule is refused with the reason."""
    out = predict_row(dict(TRT, metric=metric, unit=unit), Aliases())
    assert isinstance(out, Unexpressed) and "normalised by cost, power or energy" in out.reason, out


@pytest.mark.parametrize("metric", ["throughput at the cost-optimal batch", "throughput (KV cache hit ratio 50%)",
                                    "output throughput, cost-efficient config"])
def test_a_rate_measured_at_a_setting_named_by_cost_or_a_ratio_is_a_rate(metric):
    """A throughput measured at a setting chosen for cost, or at a stated ratio, is still the throughput: it was
    refused as a rate per dollar or a ratio between setups."""
    from tokenmath.measure.validate.rows import ratio_reason
    assert ratio_reason(dict(TRT, metric=metric, unit="tokens/s")) is None


def test_tpu_chip_scopes_paren_units_and_paren_spreads():
    from tokenmath.measure.validate.rows import parse_measured, unit_scope, with_unit
    for unit in ("tokens/s/TPU chip", "tok/s per TPU chip", "tokens/s/TPU"):
        assert unit_scope(unit, "throughput") == "gpu", unit
    assert with_unit(_row(value="9.5", metric="TPOT (ms) p99", unit=""))["unit"] == "ms"
    assert parse_measured("320 (±15)") == parse_measured("320 ± 15")
    assert parse_measured("320 (±15)").low == 305


def test_units_and_scopes_as_other_tables_write_them():
    """Round-12 probes: llama-bench's 't/s', a metric that is its unit ('TFLOPs' with the unit column empty), a time
    per token under any metric name, 'x faster' as a ratio, Gaudi's per-HPU / per-card rates, a rate per core."""
    from tokenmath.measure.validate.rows import prediction_dimension, ratio_reason, row_kind, unit_scale, unit_scope, with_unit
    assert unit_scale("t/s") == 1.0 and row_kind({"metric": "tg128", "model": "x", "unit": "t/s"}) == "serving"
    assert with_unit(_row(value="855", metric="TFLOPs", unit=""))["unit"] == "TFLOPs"
    assert row_kind({"metric": "Decode", "model": "x", "unit": "ms/token"}) == "serving"
    assert prediction_dimension("serving", "Decode", "ms/token") == "time"
    for unit in ("x faster", "× faster", "times higher", "x"):
        assert "ratio between two setups" in ratio_reason(dict(TRT, value="2.5", unit=unit)), unit
    for unit in ("tokens/s/HPU", "tokens/s per card", "tok/s/NPU"):
        assert unit_scope(unit, "throughput") == "gpu", unit  # was the whole setup's: 8× off on 8 Gaudis
    out = predict_row(dict(TRT, unit="tok/s per NeuronCore"), Aliases())
    assert isinstance(out, Unexpressed) and "a rate per core of a chip" in out.reason


def test_tenstorrents_t_s_u_is_a_per_user_speed():
    """tt-metal's tables write a per-user decode speed 't/s/u' (tokens/s per user), beside 't/s' for the whole batch;
    'u' read as nothing left it refused ('not a unit this validation predicts')."""
    from tokenmath.measure.validate.rows import dimension_of_unit, unit_scale, unit_scope, with_unit
    for unit in ("t/s/u", "t / s / u"):
        assert (unit_scale(unit), unit_scope(unit, "decode"), dimension_of_unit(unit)) == (1.0, "user", "token_rate")
    assert unit_scope("t/s", "decode") == "total"
    assert with_unit(_row(value="23.1", metric="t/s/u", unit=""))["unit"] == "t/s/u"


# ---- probe round 10E: the same setup reworded reads the same --------------------------------------------------

def _public(rid: str) -> dict:
    return next({**{c: "" for c in COLUMNS}, **r} for r in read_table(PACKAGE_TABLE) if r["id"] == rid)


def _same(row: dict, al: Aliases, scale: float = 1.0, **kw) -> float:
    """The prediction of `row` reworded by kw, over the row's own (× scale, where the rewording rescales its unit)."""
    a, b = predict_row(row, al), predict_row({**row, **kw}, al)
    assert not isinstance(b, Unexpressed), (kw, b.reason)
    return b.predicted / (a.predicted * scale)


@pytest.mark.parametrize("precision", ["fp8_e4m3", "FP8 (E4M3)", "float8_e4m3fn", "FP8 W8A8"])
def test_fp8_named_by_its_format_reads_as_fp8(precision):
    """FP8 named by its format is the bare 'FP8' (ModelOpt's BF16 embeddings: they were stored in FP8, 0.3-2 % apart);
    'FP8 W8A8' is FP8 weights and activations (it was read as INT8 W8A8, 27 % low)."""
    assert _same(TRT, Aliases(), precision=precision) == pytest.approx(1.0, rel=1e-9)


def test_precisions_as_frameworks_and_quantisers_name_them():
    al = Aliases()
    for text in ("W4A16 g32", "int4 weight-only (group size 32)", "INT4 group_size=32", "int4 weight-only g32"):
        assert al.precision(text)[0] == "int4" and al.storage(text) == {"linear": "int4_g32"}, text  # was g128
    assert al.storage("W4A16") == al.storage("AWQ") and al.storage("AWQ")["linear"] == "int4_g128"
    for text in ("torch.bfloat16", "torch.float16", "torch.float32"):
        assert al.precision(text)[0] is not None, text  # was 'matches no rule'
    assert al.precision("FP8 W8A8 (per-token)")[0] == "fp8" and al.precision("W8A8")[0] == "w8a8"
    assert al.storage("fp8_e4m3") == al.storage("FP8") == al.storage("FP8 (ModelOpt)")


@pytest.mark.parametrize("kw", [dict(input_len="1000/1000", output_len=""),
                                dict(input_len="", output_len="", metric="Total Output Throughput @ 1000/1000")])
def test_lengths_in_one_column_or_after_an_at_sign_read_as_the_row(kw):
    """'ISL/OSL' in one length column or after an '@' in the metric (read as unstated: a best case, 2-4x off)."""
    assert _same(TRT, Aliases(), **kw) == pytest.approx(1.0, rel=1e-9)


def test_chip_counts_in_thousands_or_beside_a_node_count():
    from tokenmath.measure.validate.rows import chips_of
    assert chips_of({"n_chips": "2K"})[0] == 2048 and chips_of({"n_chips": "16K GPUs"})[0] == 16384
    assert chips_of({"n_chips": "2,048 GPUs"})[0] == 2048  # was 2
    assert chips_of({"n_chips": "1 node (8 GPUs)", "hardware": "H200"})[0] == 8  # was the 1 of the node
    assert _same(_public("TRT-184"), Aliases(), n_chips="1 node (8 GPUs)") == pytest.approx(1.0, rel=1e-9)


def test_a_decode_rate_at_a_stated_batch_reads_as_the_same_rate_per_user():
    """'decode tokens/s (batch 1)', or 'tokens/s (bs=1)' with the batch column empty, is the batch-1 row's
    per-user speed: it was a best case over output lengths, or refused for want of one."""
    al = Aliases()
    assert _same(BS1, al, metric="decode tokens/s (batch 1)") == pytest.approx(1.0, rel=1e-9)
    assert _same(BS1, al, metric="tokens/s (bs=1)", batch="") == pytest.approx(1.0, rel=1e-9)
    row = _public("TRT-177")  # GPT-J at batch 64
    assert _same(row, al, batch="64 sequences") == pytest.approx(1.0, rel=1e-9)  # was the engine's batch, 2x high


def test_an_mlperf_rate_per_gpu_sets_its_chips_against_the_systems_samples_per_second():
    """MLPerf's samples/s is the system's: a tokens/s per GPU is × chips before dividing (the output length was 8×
    short, 290 / 8 tokens a sample)."""
    row = _public("MLP-001")
    per_gpu = dict(unit="tokens/s/GPU", value=f"{float(row['value']) / 8:.6g}")
    assert _same(row, Aliases(), 1 / 8, **per_gpu) == pytest.approx(1.0, rel=1e-9)
    assert _same(row, Aliases(), 1.0, unit="tokens/s/node") == pytest.approx(1.0, rel=1e-9)  # 8 chips, one node


def test_the_split_stated_in_the_notes_when_its_column_is_empty():
    """A split in the notes ('…; TP8 EP8') is the row's when the parallelism column is empty (it took the engine
    rule's replica: Maverick FP4 on 8 B200s 3.4x high), and the row says where it was read."""
    al = Aliases()
    row = {**_public("TRT-128"), "parallelism": "TP8 EP8"}
    moved = {**row, "parallelism": "", "notes": row["notes"] + "; TP8 EP8"}
    out = predict_row(moved, al)
    assert out.predicted == pytest.approx(predict_row(row, al).predicted, rel=1e-9)
    assert any("split read from the notes, 'TP8 EP8'" in a for a in out.assumptions)
    assert predict_row({**moved, "notes": row["notes"] + "; 2.7x faster than TP4 EP4 (vs. TP4)"}, al).predicted != \
        pytest.approx(out.predicted, rel=1e-3)  # a comparison's split is not the row's


def test_a_disaggregated_rows_instances_worded_otherwise():
    """'4 prefill instances (2 GB200 each) + 1 decode instance (8 GB200)' is VLLM-002's '… x 2 GB200 …' (the prefill
    instance was read as all 16 chips); vLLM's '--data-parallel-size 8 --enable-expert-parallel' is DP8 + EP (the
    experts were replicated)."""
    al = Aliases()
    two = _public("VLLM-002")
    for par in ("4 prefill instances (2 GB200 each) + 1 decode instance (8 GB200); DP+EP",
                "prefill: 4 instances x 2 GB200; decode: 1 instance x 8 GB200; DP+EP"):
        assert _same(two, al, parallelism=par) == pytest.approx(1.0, rel=1e-9), par
    three = _public("VLLM-003")
    assert _same(three, al, parallelism="--data-parallel-size 8 --enable-expert-parallel") == \
        pytest.approx(_same(three, al, parallelism="DEP8"), rel=1e-9)


def test_a_systems_chips_in_brackets_or_in_the_unit_and_a_bound_in_words():
    """'4 x GB300 NVL72 (288 GPUs)' is 288 chips (it read 4), MLPerf's 'tokens/s (72 GPUs)' with no count elsewhere is
    72 (it was one replica); 'over 1000' is the bound '> 1000' (it was refused)."""
    from tokenmath.measure.validate.rows import chips_of, parse_measured
    assert chips_of({"n_chips": "", "hardware": "4 x GB300 NVL72 (288 GPUs)"})[0] == 288
    assert chips_of({"n_chips": "", "hardware": "GB200 NVL72", "unit": "tokens/s (72 GPUs)"})[0] == 72
    assert _same(_public("MLP-012"), Aliases(), hardware="GB200 NVL72", n_chips="") == pytest.approx(1.0, rel=1e-9)
    for text in ("over 1000", "more than 1,000", "above 1000"):
        assert parse_measured(text) == parse_measured(">1000"), text
    row = _public("TRT-188")
    assert _same(row, Aliases(), value="over 1000") == pytest.approx(1.0, rel=1e-9)


def test_a_separate_draft_model_named_in_a_clause_of_its_own():
    """'…, Llama-7B int4 draft model' names the draft as '… + Llama-7B (int4) draft' does (it was refused)."""
    row = _public("BS1-016")
    assert _same(row, Aliases(), model="Llama-2-70B int4 verifier, Llama-7B int4 draft model") == \
        pytest.approx(1.0, rel=1e-9)


def test_a_row_under_load_beyond_what_the_pool_holds_says_the_rest_queue(tmp_path):
    """Concurrency above the sequences the KV pool holds: the why names the limit and that the others queue
    (their wait is TTFT), the regime change behind a TTFT cliff (probe 11B)."""
    f = tmp_path / "t.csv"
    f.write_text("id,model,precision,hardware,n_chips,parallelism,batch,input_len,output_len,metric,value,unit\n"
                 "Q-1,Llama-3.1-8B-Instruct,FP8,H200 SXM 141GB,1,TP1 (sglang),concurrency 4096,2000,2000,tpot_ms,"
                 "36,ms\n", encoding="utf-8")
    (r,) = validate_table(f).rows
    assert any(w.startswith("the KV pool holds ") and "the rest queue" in w for w in r.why), r.why


def test_probe11a_a_training_rows_range_or_bound_is_read_as_a_serving_rows():
    """A training row's '34.2-41.8' % was read as a point at 34.2 and '>38' as a point at 38 (the training reader takes
    the first number): a range is kept as a range, a bound as a bound, the prediction unchanged."""
    row = {c: "" for c in COLUMNS} | {k: v for k, v in next(
        r for r in read_table(PACKAGE_TABLE) if r["id"] == "TRN-015").items() if k in COLUMNS}
    base = predict_row(row, Aliases())
    rng = predict_row({**row, "value": "44.91-54.89"}, Aliases())
    assert (rng.measured_low, rng.measured_high, rng.measured_op) == (44.91, 54.89, "")
    assert rng.predicted == pytest.approx(base.predicted) and rng.error == pytest.approx(
        0 if 44.91 <= base.predicted <= 54.89 else base.predicted / (54.89 if base.predicted > 54.89 else 44.91) - 1)
    for said, op in ((">49.9", ">"), ("≥49.9", ">="), ("at least 49.9", ">="), ("49.9+", ">=")):
        b = predict_row({**row, "value": said}, Aliases())
        assert b.measured_op == op and b.measured == 49.9 and b.predicted == pytest.approx(base.predicted), said
    hours = predict_row({**row, "metric": "gpu_hours_total", "value": "under 2.788", "unit": "M GPU-hours",
                         "model": "DeepSeek-V3", "hardware": "H800", "n_chips": "2048", "notes": "14.8T tokens"},
                        Aliases())
    assert hours.measured_op == "<=" and hours.measured == pytest.approx(2.788)


def test_probe11a_a_training_rows_hours_in_millions_are_given_in_millions():
    """'2.788' 'M GPU-hours': predicted and measured in the row's unit (they were in GPU-hours under the unit 'M
    GPU-hours': '2,788,000 M GPU-hours' printed), the error unchanged."""
    row = _row(id="TRN-Y", model="DeepSeek-V3", precision="FP8", hardware="H800", n_chips="2048",
               metric="gpu_hours_total", value="2788000", unit="H800 GPU-hours", notes="14.8T tokens")
    base, m = predict_row(row, Aliases()), predict_row({**row, "value": "2.788", "unit": "M GPU-hours"}, Aliases())
    assert m.measured == pytest.approx(2.788) and m.predicted == pytest.approx(base.predicted / 1e6)
    assert m.error == pytest.approx(base.error)


def test_a_part_named_between_per_and_what_it_counts():
    """'output throughput per H800 node' is a rate per node and 'per H100 GPU' per GPU (both were totals: DeepSeek's
    per-node decode rate read as the whole deployment's); 'per 8 GPUs' stays a total."""
    from tokenmath.measure.validate.rows import unit_scope

    assert unit_scope("tokens/s", "output throughput per H800 node") == "node"
    assert unit_scope("tokens/s", "throughput per H100 GPU") == "gpu"
    assert unit_scope("tokens/s", "throughput per MI300X GPU") == "gpu"
    assert unit_scope("tokens/s", "throughput per 8 GPUs") == "total"


def test_a_serving_metric_beside_a_training_frameworks_name_is_a_serving_row():
    """'DeepSpeed FP6' in the notes of a decode rate per user names the engine (DeepSpeed's FP6-LLM kernels), not a
    training run: the row was predicted by `tokenmath train` as a training throughput."""
    from tokenmath.measure.validate.rows import row_kind

    row = {c: "" for c in COLUMNS} | dict(metric="decode_tokens_per_s_per_user", unit="tokens/s", notes="DeepSpeed FP6",
                                         input_len="128", output_len="256", batch="1")
    assert row_kind(row) == "serving"
    assert row_kind(row | dict(metric="tokens_per_s_per_gpu", input_len="", output_len="",
                               notes="DeepSpeed ZeRO-3, global batch 1024")) == "training"


def test_a_vllm_max_load_batch_holds_each_sequence_at_its_mean_kv():
    """vLLM V1 allocates KV blocks as tokens come (no reservation of the output to come; SGLang keeps new_token_ratio
    0.098 of it): its full pool holds a sequence at ISL + OSL/2 on average, not the ISL + OSL that TensorRT-LLM's
    guaranteed-no-evict reserves (probe 11AW). A TensorRT-LLM row reads as before."""
    import re

    row = dict(TRT, input_len="2000", output_len="8000")
    trt = predict_row(dict(row, source="TensorRT-LLM performance overview"), Aliases())
    vllm = predict_row(dict(row, source="vLLM benchmark"), Aliases())
    assert "KV per sequence at 2000+8000 tokens" in trt.why[0]
    assert "KV per sequence at 6000 tokens (2000 + (1 + r)/2 · 8000, r = 0" in vllm.why[0]
    B_trt, B_vllm = (int(re.search(r"engine batch (\d+)", r.why[0]).group(1)) for r in (trt, vllm))
    assert B_vllm > 1.5 * B_trt  # 10,000 / 6,000 tokens a sequence, in pools the engines size by their own rules
