"""The hardware and systems catalog: every entry loads, every figure has a source, and the numbers
agree with each other and with the lecture's hardware ratio R (lecture-claims.md §1.2, §R6)."""

from __future__ import annotations

import json
import re

import pytest
from clirun import run

from tokenmath.core.load import load_chip, load_system, names
from tokenmath.core.records import Chip, System

BYTES_PER_PARAM = {"bf16": 2.0, "fp8": 1.0, "fp4": 0.5}

CHIPS = names("hardware")
SYSTEMS = names("systems")

EXPECTED_CHIPS = {
    "a100-80gb", "h100-sxm", "h800", "h200", "b200", "b300", "gb200", "gb300", "vr200",
    "tpu-v4", "tpu-v5e", "tpu-v5p", "tpu-v6e", "tpu7x", "mi300x", "mi325x", "mi355x",
    "gaudi3", "trainium2", "trainium3", "h20", "l40s", "l4", "a30", "a100-pcie", "h100-pcie", "rtx-pro-6000-server", "b60",
    "v100-sxm2", "v100-sxm2-16gb", "tpu-v3", "gaudi2", "a10", "rtx-4090", "rtx-a6000", "a800",
    "l40", "h200-nvl", "gh200", "gh200-96gb", "rtx-6000-ada", "a40", "mi210", "mi250-gcd", "rtx-3090",
    "a10g", "l20", "h20-141gb", "rtx-5090", "gb10", "mi300a", "inferentia2", "trainium1", "ascend-910b", "ascend-910c",
    "m1-ultra", "m2-ultra", "m3-max", "m3-ultra", "m4-max", "m4-pro", "h800-pcie", "a800-pcie", "a800-pcie-40gb", "mi308x",
    "xeon-6980p", "xeon-8480p", "epyc-9654", "jetson-agx-orin", "jetson-agx-thor",
}
EXPECTED_SYSTEMS = {
    "hgx-a100", "hgx-h100", "hgx-h800", "hgx-h200", "hgx-b200", "hgx-b300", "gb200-nvl72",
    "gb300-nvl72", "vr200-nvl144", "tpu-v4-pod", "tpu-v5e-256", "tpu-v5p-pod", "tpu-v6e-256",
    "tpu7x-pod", "mi300x-8", "mi325x-8", "mi355x-8", "gaudi3-8", "trn2-16", "trn2-ultraserver-64", "hgx-h20",
    "pcie-l40s-8", "pcie-l4-8", "pcie-a30-8", "pcie-a100-8", "pcie-h100-8", "pcie-rtx-pro-6000-8", "pcie-b60-8",
    "dgx1-v100", "dgx1-v100-16gb", "tpu-v3-pod", "gaudi2-8", "pcie-a10-8", "pcie-rtx-4090-8", "pcie-rtx-a6000-8",
    "hgx-a800", "pcie-l40-8", "pcie-h200-nvl-8", "gh200-1", "gh200-96gb-1", "pcie-rtx-6000-ada-8", "pcie-a40-8",
    "pcie-mi210-8", "mi250-node", "pcie-rtx-3090-8", "pcie-a10g-8", "pcie-l20-8", "hgx-h20-141gb", "pcie-rtx-5090-8",
    "dgx-spark", "mi300a-4", "inf2-12", "trn1-16", "atlas-800t-a2", "cloudmatrix-384",
    "mac-studio-m1-ultra", "mac-studio-m2-ultra", "macbook-pro-m3-max", "mac-studio-m3-ultra", "mac-studio-m4-max",
    "mac-mini-m4-pro", "pcie-h800-8", "pcie-a800-8", "pcie-a800-40gb-8", "mi308x-8", "xeon-6980p-1s", "xeon-6980p-2s",
    "xeon-8480p-1s", "xeon-8480p-2s", "epyc-9654-1s", "epyc-9654-2s", "jetson-agx-orin-1", "jetson-agx-thor-1",
}
PCIE_SYSTEMS = ["pcie-l40s-8", "pcie-l4-8", "pcie-a30-8", "pcie-a100-8", "pcie-h100-8", "pcie-rtx-pro-6000-8", "pcie-b60-8",
                "pcie-a10-8", "pcie-rtx-4090-8", "pcie-rtx-a6000-8", "pcie-l40-8", "pcie-rtx-6000-ada-8", "pcie-a40-8",
                "pcie-mi210-8", "pcie-rtx-3090-8", "pcie-a10g-8", "pcie-l20-8", "pcie-rtx-5090-8", "pcie-h800-8",
                "pcie-a800-8", "pcie-a800-40gb-8"]


def hardware_ratio(chip: Chip, precision: str) -> float:
    """R = peak / (2 · HBM bandwidth / bytes per parameter): multiplies per parameter byte fetched."""
    return chip.peak_flop_per_s[precision] / (2 * chip.hbm_bandwidth_bytes_per_s / BYTES_PER_PARAM[precision])


def numeric_figures(rec: Chip | System) -> dict[str, float]:
    """Every numeric figure an entry sets, by its source key (`peak_flop_per_s.fp8`, ...)."""
    skip = {"year", "chip"}
    out: dict[str, float] = {}
    for field in type(rec).model_fields:
        if field in skip:
            continue
        v = getattr(rec, field)
        if isinstance(v, dict):
            out.update({f"{field}.{k}": x for k, x in v.items() if isinstance(x, (int, float))})
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            out[field] = v
    return out


def has_source(rec: Chip | System, key: str) -> bool:
    parent = key.split(".")[0]
    return bool(rec.sources.get(key) or rec.sources.get(parent) or rec.source)


def test_expected_entries_present():
    assert EXPECTED_CHIPS <= set(CHIPS), sorted(EXPECTED_CHIPS - set(CHIPS))
    assert EXPECTED_SYSTEMS <= set(SYSTEMS), sorted(EXPECTED_SYSTEMS - set(SYSTEMS))


@pytest.mark.parametrize("name", CHIPS)
def test_chip_loads_with_sources(name):
    chip = load_chip(name)
    assert chip.display_name and chip.vendor and chip.source
    assert chip.year is None or 2015 <= chip.year <= 2030
    for key in numeric_figures(chip):
        assert has_source(chip, key), f"{name}: {key} has no source"
    for key in chip.estimates:  # an estimate says how it was made, not just the entry's source
        assert chip.sources.get(key), f"{name}: estimate {key} needs its own source"


@pytest.mark.parametrize("name", CHIPS)
def test_chip_figures_are_sane(name):
    chip = load_chip(name)
    assert chip.hbm_capacity_bytes > 0 and chip.hbm_bandwidth_bytes_per_s > 0
    if chip.on_chip_memory:  # SRAM parts: a Groq LPU's 230 MB at 80 TB/s to a Cerebras wafer's 44 GB at 21 PB/s
        assert 1e8 <= chip.hbm_capacity_bytes <= 1e11 and 1e13 <= chip.hbm_bandwidth_bytes_per_s <= 1e17
    else:
        assert 1e9 <= chip.hbm_capacity_bytes <= 2e12  # GB-scale, not bits or GiB counts
        assert 1e11 <= chip.hbm_bandwidth_bytes_per_s <= 1e14
    for p, x in chip.peak_flop_per_s.items():
        assert p in {"fp4", "fp8", "int8", "bf16", "fp16", "fp32"}, p
        assert 1e12 <= x <= 2e17, (p, x)  # a T4's FP32 is 8.1 TFLOP/s, an M4 Pro GPU's FP16 as much; a WSE-3 125 PFLOP/s
    peaks = [chip.peak_flop_per_s.get(p) for p in ("fp4", "fp8", "bf16", "fp32")]
    present = [x for x in peaks if x is not None]
    assert present == sorted(present, reverse=True), f"{name}: expected fp4 >= fp8 >= bf16 >= fp32"
    for f in ("scaleup_bandwidth_bytes_per_s", "scaleout_bandwidth_bytes_per_s", "power_w",
              "rental_usd_per_hour", "host_memory_bytes", "host_memory_bandwidth_bytes_per_s"):
        v = getattr(chip, f)
        assert v is None or v > 0, f
    if chip.scaleup_bandwidth_bytes_per_s and chip.scaleout_bandwidth_bytes_per_s:
        assert chip.scaleout_bandwidth_bytes_per_s < chip.scaleup_bandwidth_bytes_per_s
    if chip.rental_price_date is not None:
        assert chip.rental_usd_per_hour is not None
        assert re.fullmatch(r"20\d\d-(0[1-9]|1[0-2])", chip.rental_price_date)


@pytest.mark.parametrize("name", SYSTEMS)
def test_system_loads_with_sources(name):
    sys_ = load_system(name)
    assert isinstance(sys_, System) and sys_.name == name
    assert sys_.display_name and sys_.source
    assert sys_.domain_chips >= 1
    assert sys_.sources.get("domain_chips"), f"{name}: domain_chips needs its own source"
    for key in numeric_figures(sys_):
        assert has_source(sys_, key), f"{name}: {key} has no source"
    assert sys_.chip.name in CHIPS
    if sys_.scaleup_bw and sys_.scaleout_bw:
        assert sys_.scaleout_bw < sys_.scaleup_bw
    if sys_.rental_usd_per_chip_hour is not None:
        assert sys_.rental_usd_per_chip_hour > 0


@pytest.mark.parametrize("name, domain", [
    ("hgx-h100", 8), ("hgx-h800", 8), ("gb200-nvl72", 72), ("gb300-nvl72", 72), ("vr200-nvl144", 72),
    ("tpu-v5e-256", 256), ("tpu-v6e-256", 256), ("tpu7x-pod", 9216), ("tpu-v4-pod", 4096),
    ("trn2-16", 16), ("trn2-ultraserver-64", 64), *((n, 8) for n in PCIE_SYSTEMS),
    ("dgx1-v100", 8), ("dgx1-v100-16gb", 8), ("tpu-v3-pod", 1024), ("gaudi2-8", 8), ("hgx-a800", 8),
    ("pcie-h200-nvl-8", 8), ("gh200-1", 1), ("gh200-96gb-1", 1), ("mi250-node", 8),
])
def test_domain_sizes(name, domain):
    assert load_system(name).domain_chips == domain


# ---- golden values: lecture-claims.md §2.1 and §R6 ------------------------------------------

@pytest.mark.parametrize("name, precision, expected, tol", [
    ("h100-sxm", "bf16", 295.0, 1.0),
    ("gb200", "fp8", 312.5, 1.0),
    ("a100-80gb", "bf16", 153.0, 1.0),
    ("tpu-v5e", "bf16", 240.0, 2.0),
])
def test_hardware_ratio_golden(name, precision, expected, tol):
    assert hardware_ratio(load_chip(name), precision) == pytest.approx(expected, abs=tol)


def test_hardware_ratio_same_at_every_precision_on_blackwell():
    """R is the same at BF16 and FP8 when FP8 runs at twice the BF16 rate (§1.2: not 2x the naive ratio)."""
    gb200 = load_chip("gb200")
    assert hardware_ratio(gb200, "bf16") == pytest.approx(hardware_ratio(gb200, "fp8"))
    assert hardware_ratio(gb200, "fp4") == pytest.approx(312.5)


@pytest.mark.parametrize("name", ["a100-80gb", "h100-sxm", "b200", "gb200"])
def test_hardware_ratio_near_300_on_nvidia(name):
    """§R6 (f): A100/H100/B200/GB200 all lie in [150, 320] at their best native precision."""
    chip = load_chip(name)
    assert 150 <= max(hardware_ratio(chip, p) for p in chip.peak_flop_per_s if p in BYTES_PER_PARAM) <= 320


def test_per_direction_conventions():
    """Scale-up figures are per chip per direction: bidirectional totals halved, bits read as bits."""
    assert load_chip("h100-sxm").scaleup_bandwidth_bytes_per_s == pytest.approx(450e9)
    assert load_chip("gb200").scaleup_bandwidth_bytes_per_s == pytest.approx(900e9)
    assert load_chip("tpu-v5e").scaleup_bandwidth_bytes_per_s == pytest.approx(200e9)
    assert load_chip("mi300x").scaleup_bandwidth_bytes_per_s == pytest.approx(448e9)
    assert load_chip("gaudi3").scaleup_bandwidth_bytes_per_s == pytest.approx(525e9)
    assert load_chip("gaudi2").scaleup_bandwidth_bytes_per_s == pytest.approx(262.5e9)  # 21 x 100 Gb/s
    assert load_chip("v100-sxm2").scaleup_bandwidth_bytes_per_s == pytest.approx(150e9)  # NVLink2 300 GB/s total
    assert load_chip("v100-sxm2").scaleout_bandwidth_bytes_per_s == pytest.approx(6.25e9)  # 4 x EDR per 8 GPUs
    assert load_chip("h100-sxm").scaleout_bandwidth_bytes_per_s == pytest.approx(50e9)  # 400 Gb/s
    assert load_chip("h800").scaleup_bandwidth_bytes_per_s < load_chip("h100-sxm").scaleup_bandwidth_bytes_per_s


@pytest.mark.parametrize("name", CHIPS)
def test_one_capacity_rule(name):
    """catalog/hardware/README.md: the vendor's nominal capacity read in GiB, for every vendor alike."""
    chip = load_chip(name)
    if chip.on_chip_memory:  # SRAM is not built from 2^n-bit DRAM dies: decimal, as the vendor writes it
        assert "decimal" in chip.source_of("hbm_capacity_bytes") and "SRAM" in chip.source_of("hbm_capacity_bytes")
        return
    gib = chip.hbm_capacity_bytes / 2**30
    assert gib == round(gib), f"{name}: {gib} GiB is not a whole number of GiB"
    assert "GiB" in chip.source_of("hbm_capacity_bytes"), f"{name}: the source must say how the figure was read"


def test_capacity_rule_against_what_devices_report():
    # nvidia-smi: 81,559 MiB on an H100 80GB (issue 11); GB200 189,471 MiB (aiconfigurator-core systems/gb200.yaml)
    assert load_chip("h100-sxm").hbm_capacity_bytes == pytest.approx(81_559 * 2**20, rel=0.005)
    assert load_chip("gb200").hbm_capacity_bytes == pytest.approx(189_471 * 2**20, rel=0.006)
    assert load_chip("tpu-v4").hbm_capacity_bytes == 32 * 2**30  # Google writes GiB
    assert load_chip("trainium2").hbm_capacity_bytes == 96 * 2**30  # AWS writes GiB
    assert load_chip("mi300x").hbm_capacity_bytes == 192 * 2**30


def test_h800_nvlink_is_the_spec_not_the_measurement():
    up = load_chip("h800").scaleup_bandwidth_bytes_per_s
    assert up == pytest.approx(200e9)  # 400 GB/s bidirectional
    assert "scaleup_bandwidth_bytes_per_s" not in load_chip("h800").estimates


def test_fabrics_and_systems_name_them():
    from tokenmath.core.load import _load_cached
    fabrics = names("fabrics")
    assert {"ib-edr", "ib-hdr", "ib-ndr", "ib-xdr", "roce-100g", "roce-400g", "efa", "tpu-dcn"} <= set(fabrics)
    assert _load_cached("fabrics", "ib-ndr").port_bandwidth_bytes_per_s == pytest.approx(50e9)
    for n in SYSTEMS:
        s = load_system(n)
        if s.scaleout_fabric:
            assert s.scaleout_fabric in fabrics, n
    h20 = load_system("hgx-h20")
    assert h20.chip.peak("bf16") == pytest.approx(148e12) and h20.chip.hbm_bandwidth_bytes_per_s == 4e12


def test_only_native_precisions():
    assert set(load_chip("a100-80gb").peak_flop_per_s) == {"bf16", "int8", "fp32"}  # INT8: W8A8's, never FP8's
    assert "fp8" not in load_chip("tpu-v5e").peak_flop_per_s
    for name in ("tpu-v5p", "tpu-v6e"):
        peaks = load_chip(name).peak_flop_per_s
        assert peaks["fp8"] == peaks["bf16"]


def test_no_fp8_peak_where_the_chip_has_none():
    """A30, A100 PCIe and Arc Pro B60 have no FP8 tensor cores: FP8 runs at their BF16 rate, never at INT8's (which
    they list, twice the BF16 rate: W8A8's, core/units.py)."""
    for name in ("a30", "a100-pcie", "b60"):
        chip = load_chip(name)
        assert not {"fp8", "fp4"} & set(chip.peak_flop_per_s), name
        assert chip.peak("fp8") == chip.peak("bf16") == chip.peak("int8") < chip.peak("w8a8"), name
    rtx = load_chip("rtx-pro-6000-server")
    assert rtx.peak("fp4") == pytest.approx(2 * rtx.peak("fp8")) == pytest.approx(4 * rtx.peak("bf16"), rel=1e-3)
    assert load_chip("h100-pcie").peak("bf16") < load_chip("h100-sxm").peak("bf16")


def test_pcie_parts_run_on_pcie_and_their_priors():
    """No NVLink: the scale-up link is PCIe (Gen4 32 GB/s, Gen5 64 GB/s, x8 Gen5 on B60), and a GPU's scale-out
    share stays below it. Only the A100 PCIe (the A100 SXM's silicon and clocks) takes measured kernel priors."""
    links = {"l4": 32e9, "a30": 32e9, "a100-pcie": 32e9, "h100-pcie": 64e9, "rtx-pro-6000-server": 64e9, "b60": 32e9,
             "a10": 32e9, "rtx-4090": 32e9, "rtx-a6000": 32e9, "l40": 32e9, "rtx-6000-ada": 32e9, "a40": 32e9,
             "mi210": 32e9, "rtx-3090": 32e9, "a10g": 32e9, "l20": 32e9, "rtx-5090": 64e9}
    for name, bw in links.items():
        chip = load_chip(name)
        assert chip.scaleup_bandwidth_bytes_per_s == pytest.approx(bw), name
        assert "scaleout_bandwidth_bytes_per_s" in chip.estimates, name
        assert chip.priors == ("a100-80gb-kernels" if name == "a100-pcie" else "default"), name
    assert load_chip("a100-pcie").peak("bf16") == load_chip("a100-80gb").peak("bf16")


@pytest.mark.parametrize("system", PCIE_SYSTEMS)
def test_serve_runs_on_pcie_servers(system):
    r = run("serve", "llama-3.1-8b", "--on", system, "--batch", "8", "--context", "2048", "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["system"] == system and d["chips"] == 8


def test_derived_figures_marked_estimate():
    assert "peak_flop_per_s.fp8" in load_chip("vr200").estimates
    # probe 11D: its notes said no BF16 peak was listed, beside the one estimated at half the FP8 peak
    vr200 = load_chip("vr200")
    assert "peak_flop_per_s.bf16" in vr200.estimates and vr200.peak_flop_per_s["bf16"] == vr200.peak_flop_per_s["fp8"] / 2
    assert "no bf16 peak is listed" not in vr200.notes
    assert "scaleout_bandwidth_bytes_per_s" in load_chip("h20").estimates


def test_fp16_runs_at_the_bf16_rate():
    """A chip listing only bf16 runs fp16 at that 16-bit rate (not refused, not fp32's), and the reverse."""
    h100 = load_chip("h100-sxm")
    assert "fp16" not in h100.peak_flop_per_s
    assert h100.peak("fp16") == h100.peak("bf16") and h100.peak_precision("fp16") == "bf16"
    assert load_chip("a100-80gb").peak("fp8") == load_chip("a100-80gb").peak("bf16")


def test_4bit_integer_weights_multiply_at_16_bits():
    """AWQ/GPTQ/gpt-fast int4 (W4A16) dequantise in the kernel and multiply 16-bit activations: the 16-bit rate,
    not FP8's (an H100 prefill of an AWQ model was priced at 1,979 TFLOP/s) nor a T4's INT8."""
    for name in ("h100-sxm", "b200", "l40s", "mi300x", "a100-80gb", "t4"):
        chip = load_chip(name)
        assert chip.peak("int4") == chip.peak("int4_g128") == chip.peak("bf16"), name


def test_gguf_blocks_multiply_at_the_int8_rate():
    """llama.cpp's quantised matmul quantises the activations to q8_1 and runs int8 dot products: GGUF Q4_0 and Q8_0
    both at the INT8 rate where a chip lists one (not the W4A16 16-bit rate of AWQ/GPTQ), else the 16-bit one."""
    for name in ("l40s", "t4", "rtx-4090"):
        chip = load_chip(name)
        want = chip.peak("w8a8") if "int8" in chip.peak_flop_per_s else chip.peak("bf16")
        assert chip.peak("gguf_q4_0") == chip.peak("gguf_q8_0") == want, name


def test_v100_has_fp16_only_and_bf16_runs_at_that_rate():
    """Volta tensor cores take FP16 only: BF16 (the 16-bit sibling) and FP8 (the next wider listed format) run at
    the FP16 peak, not refused; the 16 GB part differs from the 32 GB one in memory only."""
    v100 = load_chip("v100-sxm2")
    assert set(v100.peak_flop_per_s) == {"fp16", "fp32"} and v100.peak("fp16") == pytest.approx(125e12)
    assert v100.peak_precision("bf16") == "fp16" and v100.peak("bf16") == v100.peak("fp16")
    assert v100.peak("fp8") == v100.peak("fp16")
    small = load_chip("v100-sxm2-16gb")
    assert (v100.hbm_capacity_bytes, small.hbm_capacity_bytes) == (32 * 2**30, 16 * 2**30)
    assert small.peak_flop_per_s == v100.peak_flop_per_s
    assert small.hbm_bandwidth_bytes_per_s == v100.hbm_bandwidth_bytes_per_s == pytest.approx(900e9)


def test_tpu_v3_and_gaudi2_figures():
    tpu = load_chip("tpu-v3")
    assert set(tpu.peak_flop_per_s) == {"bf16"} and tpu.peak("bf16") == pytest.approx(123e12)
    assert tpu.hbm_capacity_bytes == 32 * 2**30  # Google writes GiB
    assert "scaleup_bandwidth_bytes_per_s" in tpu.estimates and tpu.power_w is None
    g2 = load_chip("gaudi2")
    assert g2.peak("bf16") == pytest.approx(432e12) and g2.peak("fp8") == pytest.approx(865e12)
    assert g2.hbm_capacity_bytes == 96 * 2**30 and g2.hbm_bandwidth_bytes_per_s == pytest.approx(2.45e12)
    for name in ("v100-sxm2", "v100-sxm2-16gb", "tpu-v3", "gaudi2"):  # no kernel tables: spec-sheet priors
        assert load_chip(name).priors == "default", name
    assert "domain_chips" in load_system("dgx1-v100").estimates  # a hybrid cube mesh taken as a flat domain
    assert "not all-to-all" in load_system("dgx1-v100").notes.lower()


@pytest.mark.parametrize("name, entry", [
    ("V100", "v100-sxm2"), ("V100-SXM2-32GB", "v100-sxm2"), ("NVIDIA V100", "v100-sxm2"),
    ("Tesla V100-SXM2-16GB", "v100-sxm2-16gb"), ("V100 16GB", "v100-sxm2-16gb"), ("TPU v3", "tpu-v3"),
    ("v3-32", "tpu-v3"), ("Intel Gaudi 2", "gaudi2"), ("Gaudi2", "gaudi2"), ("HL-225", "gaudi2"),
    ("dgx1-v100", "dgx1-v100"), ("dgx1-v100-16gb", "dgx1-v100-16gb"), ("tpu-v3-pod", "tpu-v3-pod"),
    ("gaudi2-8", "gaudi2-8"),
])
def test_v100_tpu_v3_gaudi2_names_resolve_and_serve(name, entry):
    from tokenmath.core.load import other_hardware_name
    assert other_hardware_name(name) == entry
    r = run("catalog", "show", name, "--json")
    assert r.exit_code == 0, r.output
    r = run("serve", "llama-3.1-8b", "--on", name, "--batch", "8", "--context", "2048", "--json")
    if entry == "v100-sxm2-16gb":  # 16.1 GB of BF16 weights and their KV: more than one 16 GiB part holds
        assert r.exit_code != 0 and "does not fit on 1 × v100-sxm2-16gb" in r.output
        return
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["system"] == entry and d["chips"] == load_system(entry).domain_chips


def test_a10_rtx4090_rtx_a6000_figures():
    """Vendor datasheet figures (not re-read here): dense BF16 peaks only, no FP8 (the RTX 4090's FP8 rate is not
    listed, so FP8 runs at its FP16/BF16-with-FP32-accumulate rate); the A6000's 2-card NVLink bridge is not
    modelled (PCIe, an estimate); each card's 8-GPU server is the L4's, an estimate."""
    expect = {  # bf16 peak, capacity GiB, bandwidth, power
        "a10": (125e12, 24, 600e9, 150), "rtx-4090": (165.2e12, 24, 1008e9, 450), "rtx-a6000": (154.85e12, 48, 768e9, 300),
    }
    for name, (bf16, gib, bw, watts) in expect.items():
        chip = load_chip(name)
        assert set(chip.peak_flop_per_s) - {"int8"} == {"bf16", "fp32"}, name
        assert chip.peak("bf16") == pytest.approx(bf16) and chip.peak("fp8") == chip.peak("bf16")
        assert chip.peak("fp16") == chip.peak("bf16")
        assert chip.hbm_capacity_bytes == gib * 2**30 and chip.hbm_bandwidth_bytes_per_s == pytest.approx(bw)
        assert chip.power_w == watts, name
        for key in chip.sources:
            if key != "scaleout_bandwidth_bytes_per_s":  # the L4 server's assumed fabric, cited as such
                assert "not re-read here" in chip.source_of(key), (name, key)
    assert "scaleup_bandwidth_bytes_per_s" in load_chip("rtx-a6000").estimates  # the NVLink bridge is not modelled
    assert "56.25 GB/s" in load_chip("rtx-a6000").source_of("scaleup_bandwidth_bytes_per_s")
    for name in ("a10", "rtx-4090"):
        assert "scaleup_bandwidth_bytes_per_s" not in load_chip(name).estimates
    l4 = load_system("pcie-l4-8")
    for system in ("pcie-a10-8", "pcie-rtx-4090-8", "pcie-rtx-a6000-8"):
        s = load_system(system)
        assert s.scaleout_fabric == l4.scaleout_fabric and s.scaleout_bw == l4.scaleout_bw
        assert "domain_chips" in s.estimates


@pytest.mark.parametrize("name, entry", [
    ("A10", "a10"), ("NVIDIA A10", "a10"), ("A10 24GB", "a10"), ("RTX 4090", "rtx-4090"),
    ("GeForce RTX 4090", "rtx-4090"), ("NVIDIA GeForce RTX 4090", "rtx-4090"), ("4090", "rtx-4090"),
    ("RTX A6000", "rtx-a6000"), ("A6000", "rtx-a6000"), ("NVIDIA RTX A6000", "rtx-a6000"),
    ("pcie-a10-8", "pcie-a10-8"), ("pcie-rtx-4090-8", "pcie-rtx-4090-8"), ("pcie-rtx-a6000-8", "pcie-rtx-a6000-8"),
])
def test_a10_rtx4090_rtx_a6000_names_resolve_and_serve(name, entry):
    """8B at BF16 (16.1 GB of weights) fits on one 24 GB card at a small batch."""
    from tokenmath.core.load import other_hardware_name
    from tokenmath.measure.validate.match import Aliases
    assert other_hardware_name(name) == entry
    system = load_system(entry)
    assert Aliases().system(name)[0].chip.name == system.chip.name  # the scored matcher agrees
    r = run("catalog", "show", name, "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["name"] == entry
    r = run("serve", "llama-3.1-8b", "--on", name, "--batch", "4", "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["system"] == entry and d["chips"] == system.domain_chips


@pytest.mark.parametrize("text, entry", [
    ("A100", "hgx-a100"), ("A100 80GB", "hgx-a100"), ("A100 PCIe", "pcie-a100-8"), ("NVIDIA A10 PCIe", "pcie-a10-8"),
    ("1x RTX 4090 24GB", "pcie-rtx-4090-8"), ("2x RTX A6000 (NVLink)", "pcie-rtx-a6000-8"),
    ("RTX PRO 6000", "pcie-rtx-pro-6000-8"), ("RTX PRO 6000 Blackwell", "pcie-rtx-pro-6000-8"),
    # other parts: AWS's A10G (G5 instances, its own entry) is not the A10; RTX 6000 Ada (its own entry) and A5000 are not
    # the A6000
    ("A10G", "pcie-a10g-8"), ("NVIDIA A10G", "pcie-a10g-8"), ("A10G 24GB", "pcie-a10g-8"),
    ("AWS g5.xlarge (A10G)", "pcie-a10g-8"),
    ("RTX 6000 Ada", "pcie-rtx-6000-ada-8"), ("RTX 6000 Ada Generation 48GB", "pcie-rtx-6000-ada-8"),
    ("RTX A5000", None), ("RTX 4080", None),
])
def test_a10_rtx4090_rtx_a6000_neighbours(text, entry):
    from tokenmath.core.load import other_hardware_name
    from tokenmath.measure.validate.match import Aliases
    s, note = Aliases().system(text)
    assert (s.name if s else None) == entry, note
    if entry is None:
        assert other_hardware_name(text) is None
        assert run("serve", "llama-3.1-8b", "--on", text, "--batch", "4").exit_code != 0


@pytest.mark.parametrize("name, chip", [("h100", "h100-sxm"), ("H100", "h100-sxm"), ("NVIDIA H100", "h100-sxm"),
                                        ("a100", "a100-80gb"), ("A100-SXM4-80GB", "a100-80gb"),
                                        ("H100 PCIe", "h100-pcie"), ("A100 PCIe", "a100-pcie")])
def test_the_bare_part_names_users_type_resolve(name, chip):
    """`--on h100` and `--on a100`, the names users type first: the SXM part (what HGX servers and the clouds'
    8-GPU instances carry); the PCIe cards keep their own names."""
    r = run("serve", "llama-3.1-8b", "--on", name, "--batch", "4", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["system"] == chip


@pytest.mark.parametrize("text, entry", [("A100 40GB", "hgx-a100-40gb"), ("A100-SXM4-40GB", "hgx-a100-40gb"),
                                         ("8x A100 40GB", "hgx-a100-40gb"), ("p4d.24xlarge", "hgx-a100-40gb"),
                                         ("A100 80GB", "hgx-a100"), ("A100", "hgx-a100"),
                                         ("p4de.24xlarge", "hgx-a100")])
def test_the_a100_40gb_is_its_own_part(text, entry):
    """The 40 GB A100 (HBM2, 1,555 GB/s) is not the 80 GB one: a row naming it gets its own memory and bandwidth."""
    from tokenmath.measure.validate.match import Aliases
    s, note = Aliases().system(text)
    assert s is not None and s.name == entry, note
    if entry == "hgx-a100-40gb":
        c = s.chip
        assert c.hbm_capacity_bytes == 40 * 2**30 and c.hbm_bandwidth_bytes_per_s == pytest.approx(1.555e12)
        assert c.peak("bf16") == load_system("hgx-a100").chip.peak("bf16")


@pytest.mark.parametrize("name, system", [("DGX H100", "hgx-h100"), ("dgx-h100", "hgx-h100"), ("HGX H200", "hgx-h200"),
                                          ("DGX B200", "hgx-b200"), ("DGX A100", "hgx-a100"),
                                          ("DGX A100 320GB", "hgx-a100-40gb")])
def test_dgx_and_hgx_names_are_the_eight_gpu_boards(name, system):
    r = run("serve", "llama-3.1-8b", "--on", name, "--batch", "4", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["system"] == system


def test_the_table_of_other_names_parses_and_names_catalog_entries():
    """A broken names.yaml must fail here, not silently empty every other name."""
    from tokenmath.core.load import load_aliases, names
    t = load_aliases("names")
    for kind, entries in (("hardware", t.get("hardware") or {}), ("models", t.get("models") or {})):
        known = set(names("models")) if kind == "models" else set(names("hardware")) | set(names("systems"))
        for entry, rec in entries.items():
            assert entry in known, f"{kind}: {entry} is no catalog entry"
            assert rec.get("names") and rec.get("source"), entry


def test_the_h100_nvl_is_its_own_card():
    """94 GB at 3.9 TB/s, the PCIe card's form: neither the SXM module nor the 80 GB PCIe card."""
    from tokenmath.measure.validate.match import Aliases
    s, note = Aliases().system("NVIDIA H100 NVL")
    assert s is not None and s.name == "pcie-h100-nvl-8", note
    c = s.chip
    assert c.hbm_capacity_bytes == 94 * 2**30 and c.hbm_bandwidth_bytes_per_s == pytest.approx(3.9e12)
    assert c.peak("bf16") == pytest.approx(835.5e12) and c.peak("fp8") == pytest.approx(1670.5e12)
    r = run("serve", "llama-3.1-8b", "--on", "H100 NVL", "--batch", "4", "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["system"] == "h100-nvl"


def test_float32_checkpoint_runs_at_the_fp32_peak():
    """A float32 config.json is served at the chip's FP32 (non-tensor) rate with an fp32 KV cache, not refused."""
    r = run("serve", "validation/llama-1b-config.json", "--on", "h100", "-G", "1", "-B", "1", "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert d["precision"] == "fp32" and d["kv_dtype"] == "fp32"
    assert load_chip("h100-sxm").peak("fp32") == pytest.approx(67e12)
    r = run("serve", "validation/llama-1b-config.json", "--on", "tpu-v5e", "-G", "1", "-B", "1")
    assert r.exit_code != 0 and "no fp32" in r.output and "--precision" in r.output


@pytest.mark.parametrize("text, entry", [("A800", "hgx-a800"), ("NVIDIA A800-SXM4-80GB", "hgx-a800"),
                                         ("8x A800 80GB", "hgx-a800"), ("HGX A800", "hgx-a800"),
                                         ("A800 PCIe", "pcie-a800-8"), ("A800 40GB", "pcie-a800-40gb-8"),
                                         ("A100", "hgx-a100")])
def test_the_a800_is_the_a100_with_a_slower_nvlink(text, entry):
    """The A800 SXM is the A100 80GB SXM's silicon, memory and power with NVLink cut to 400 GB/s (200 each way):
    its own entry, the A100's measured priors; its PCIe cards (40 and 80 GB) are not it (their own entries)."""
    from tokenmath.measure.validate.match import Aliases
    s, note = Aliases().system(text)
    assert (s.name if s else None) == entry, note
    if entry != "hgx-a800":
        return
    c, a100 = s.chip, load_chip("a100-80gb")
    assert c.peak_flop_per_s == a100.peak_flop_per_s and c.priors == a100.priors == "a100-80gb-kernels"
    assert (c.hbm_capacity_bytes, c.hbm_bandwidth_bytes_per_s, c.power_w) == \
        (a100.hbm_capacity_bytes, a100.hbm_bandwidth_bytes_per_s, a100.power_w)
    assert c.scaleup_bandwidth_bytes_per_s == pytest.approx(200e9)  # 400 GB/s bidirectional; the A100's 300 each way
    assert s.domain_chips == 8 and "scaleout_bandwidth_bytes_per_s" in c.estimates


@pytest.mark.parametrize("name, system", [("A800", "a800"), ("NVIDIA A800-SXM4-80GB", "a800"), ("hgx-a800", "hgx-a800")])
def test_serve_runs_on_the_a800(name, system):
    r = run("serve", "llama-3.1-8b", "--on", name, "-G", "1", "--batch", "4", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["system"] == system


def test_the_l40_is_not_the_l40s():
    """The L40 (datasheet, not re-read here): the L40S's 48 GB GDDR6 at 864 GB/s and PCIe Gen4 link, half its dense
    tensor rates (181.05 BF16, 362 FP8), 300 W; its 8-card server is the L40S's."""
    c, s = load_chip("l40"), load_chip("l40s")
    assert c.peak("bf16") == pytest.approx(181.05e12) and c.peak("fp8") == pytest.approx(362e12)
    assert c.peak("w8a8") == c.peak("fp8") and c.peak("fp32") == pytest.approx(90.5e12) and c.power_w == 300
    assert (c.hbm_capacity_bytes, c.hbm_bandwidth_bytes_per_s) == (s.hbm_capacity_bytes, s.hbm_bandwidth_bytes_per_s)
    assert c.peak("bf16") == pytest.approx(s.peak("bf16") / 2, rel=0.001) and c.priors == s.priors == "default"
    node, ref = load_system("pcie-l40-8"), load_system("pcie-l40s-8")
    assert (node.domain_chips, node.scaleout_fabric, node.scaleout_bw) == (8, ref.scaleout_fabric, ref.scaleout_bw)


@pytest.mark.parametrize("text, entry", [("L40", "pcie-l40-8"), ("NVIDIA L40", "pcie-l40-8"), ("L40 48GB", "pcie-l40-8"),
                                         ("8x L40 PCIe", "pcie-l40-8"), ("L40S", "pcie-l40s-8"),
                                         ("NVIDIA L40S", "pcie-l40s-8"), ("L4", "pcie-l4-8"), ("NVIDIA L4", "pcie-l4-8")])
def test_l40_l40s_and_l4_names(text, entry):
    from tokenmath.measure.validate.match import Aliases
    s, note = Aliases().system(text)
    assert s is not None and s.name == entry, note


@pytest.mark.parametrize("name, system", [("L40", "l40"), ("NVIDIA L40", "l40"), ("L40 PCIe", "l40")])
def test_serve_runs_on_the_l40(name, system):
    r = run("serve", "llama-3.1-8b", "--on", name, "-G", "1", "--batch", "4", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["system"] == system


@pytest.mark.parametrize("text, entry", [("H200 NVL", "pcie-h200-nvl-8"), ("NVIDIA H200 NVL", "pcie-h200-nvl-8"),
                                         ("4x H200 NVL 141GB", "pcie-h200-nvl-8"), ("H200", "hgx-h200"),
                                         ("H200 SXM", "hgx-h200"), ("H100 NVL", "pcie-h100-nvl-8")])
def test_the_h200_nvl_is_its_own_card(text, entry):
    """141 GB at 4.8 TB/s as the SXM module, with the H100 NVL's tensor rates (835.5 / 1,670.5 TFLOP/s dense) and
    600 W, in the PCIe card's form: an 8-card server over PCIe Gen5 (the NVLink bridge of 2 or 4 cards not modelled)."""
    from tokenmath.measure.validate.match import Aliases
    s, note = Aliases().system(text)
    assert s is not None and s.name == entry, note
    if entry != "pcie-h200-nvl-8":
        return
    c, sxm, nvl = s.chip, load_chip("h200"), load_chip("h100-nvl")
    assert (c.hbm_capacity_bytes, c.hbm_bandwidth_bytes_per_s) == (sxm.hbm_capacity_bytes, sxm.hbm_bandwidth_bytes_per_s)
    assert c.peak_flop_per_s == nvl.peak_flop_per_s and c.peak("bf16") == pytest.approx(835.5e12)
    assert c.scaleup_bandwidth_bytes_per_s == pytest.approx(64e9) and c.power_w == 600 and c.priors == "default"
    r = run("serve", "llama-3.1-8b", "--on", "NVIDIA H200 NVL", "-G", "1", "--batch", "4", "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["system"] == "h200-nvl", r.output


@pytest.mark.parametrize("text, entry", [
    ("GH200-96GB_aarch64x1", "gh200-96gb-1"), ("GH200-GraceHopper-Superchip_GH200-96GB_aarch64x1_TRT", "gh200-96gb-1"),
    ("GH200 96GB", "gh200-96gb-1"), ("GH200-144GB_aarch64x1", "gh200-1"), ("GH200 144GB", "gh200-1"),
    ("NVIDIA GH200 Grace Hopper Superchip", "gh200-1"), ("GH200", "gh200-1"),
    ("NVIDIA GH200 SXM (900W, 141GB)", "gh200-1"),  # UB-081: the HBM3e part, its 141 GB within the size check of 144
    ("H200", "hgx-h200"), ("GB200 NVL72", "gb200-nvl72"),
])
def test_the_gh200_superchips_resolve(text, entry):
    """GH200 (the H100 SXM's GPU with 96 GB HBM3 at 4 TB/s or 144 GB HBM3e at 4.9 TB/s, and a Grace CPU's LPDDR5X):
    its own entries, no longer the H200 by the validation's alias rule; a GH200 of unstated memory is the 144 GB part."""
    from tokenmath.measure.validate.match import Aliases
    s, note = Aliases().system(text)
    assert s is not None and s.name == entry, note
    if not entry.startswith("gh200"):
        return
    c, h100 = s.chip, load_chip("h100-sxm")
    assert s.domain_chips == 1
    for p in ("bf16", "fp8", "fp32"):
        assert c.peak(p) == h100.peak(p), p
    gib, bw, pri = (96, 4.0e12, "h100-sxm-kernels") if "96gb" in entry else (144, 4.9e12, "h200-kernels")
    assert c.hbm_capacity_bytes == gib * 2**30 and c.hbm_bandwidth_bytes_per_s == pytest.approx(bw)
    assert c.priors == pri
    assert c.host_memory_bytes == pytest.approx(480e9) and c.host_memory_bandwidth_bytes_per_s == pytest.approx(512e9)
    assert "450 GB/s each way" in c.source_of("host_memory_bandwidth_bytes_per_s")  # NVLink-C2C, said beside it


def test_a_gh200_that_states_another_memory_is_not_matched():
    """A GH200 stating 480 GB of memory states the Grace CPU's LPDDR5X, not its HBM: refused. nvidia-smi's name for
    the 96 GB HBM3 part is 'NVIDIA GH200 480GB' (names.yaml): that size is the name's, not a capacity."""
    from tokenmath.measure.validate.match import Aliases
    s, note = Aliases().system("GH200 (480 GB)")
    assert s is None and "480 GB" in note
    s, note = Aliases().system("NVIDIA GH200 480GB")
    assert s is not None and s.name == "gh200-96gb-1", note


@pytest.mark.parametrize("name, system", [("GH200", "gh200"), ("GH200-96GB_aarch64x1", "gh200-96gb"),
                                          ("GH200 144GB", "gh200"), ("NVIDIA GH200 Grace Hopper Superchip", "gh200"),
                                          ("gh200-1", "gh200-1"), ("gh200-96gb-1", "gh200-96gb-1")])
def test_serve_runs_on_the_gh200(name, system):
    r = run("serve", "llama-3.1-8b", "--on", name, "-G", "1", "--batch", "4", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["system"] == system


def test_training_runs_on_one_superchip_nodes():
    """A node of one GH200: every chip beyond the first is reached over the scale-out NIC."""
    r = run("train", "llama-3.1-8b", "--on", "gh200-1", "--tokens", "1e12", "--chips", "64")
    assert r.exit_code == 0, r.output


def test_t4_fp16_card_and_its_names():
    """The T4 (Turing): FP16/INT8 tensor cores only, BF16 runs at the FP16 rate; 16 GiB at 320 GB/s over PCIe
    Gen3; 'Tesla T4' resolves to its 4-card server, not to the L4 or a TPU v4."""
    from tokenmath.measure.validate.match import Aliases
    t4 = load_chip("t4")
    assert set(t4.peak_flop_per_s) == {"fp16", "int8", "fp32"} and t4.peak("bf16") == pytest.approx(65e12)
    assert t4.hbm_bandwidth_bytes_per_s == pytest.approx(320e9) and t4.hbm_capacity_bytes == 16 * 2**30
    for text in ("Tesla T4", "NVIDIA T4", "1x T4"):
        s, note = Aliases().system(text)
        assert s is not None and s.name == "pcie-t4-4", note
    assert Aliases().system("NVIDIA L4")[0].name == "pcie-l4-8"
    r = run("serve", "llama-2-7b", "--on", "pcie-t4-4", "-G", "1", "-B", "1", "-S", "512", "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert 1 / d["decode"]["step_time_s"] < 320e9 / 13.4e9  # below the bandwidth bound of 13.4 GB of FP16 weights


def test_rtx_6000_ada_a40_mi210_mi250_figures():
    """Vendor datasheet figures (not re-read here), dense: the RTX 6000 Ada's one tensor figure is FP8 with sparsity
    (1,457 TFLOPS, halved; BF16 a quarter, an estimate); the A40's BF16 299.4 with sparsity halved; AMD's CDNA2
    figures are dense, and the MI250 is read per GCD as the MI250X is. No FP8 (nor INT8, which FP8 would borrow)
    on Ampere or CDNA2; bridges (NVLink pairs, Infinity Fabric quads) are not modelled: PCIe Gen4, an estimate."""
    expect = {  # bf16, fp32, capacity GiB, bandwidth, power
        "rtx-6000-ada": (364.25e12, 91.1e12, 48, 960e9, 300), "a40": (149.7e12, 37.4e12, 48, 696e9, 300),
        "mi210": (181.0e12, 45.3e12, 64, 1638.4e9, 300), "mi250-gcd": (181.05e12, 45.25e12, 64, 1638.4e9, 280),
    }
    for name, (bf16, fp32, gib, bw, watts) in expect.items():
        c = load_chip(name)
        assert c.peak("bf16") == pytest.approx(bf16) and c.peak("fp32") == pytest.approx(fp32), name
        assert c.hbm_capacity_bytes == gib * 2**30 and c.hbm_bandwidth_bytes_per_s == pytest.approx(bw), name
        assert c.power_w == watts and c.priors == "default", name
        assert "scaleout_bandwidth_bytes_per_s" in c.estimates, name
    ada = load_chip("rtx-6000-ada")
    assert ada.peak("fp8") == pytest.approx(1457e12 / 2) and "peak_flop_per_s.bf16" in ada.estimates
    assert "peak_flop_per_s.fp8" not in ada.estimates and "scaleup_bandwidth_bytes_per_s" not in ada.estimates
    for name in ("a40", "mi210", "mi250-gcd"):
        c = load_chip(name)
        assert set(c.peak_flop_per_s) == {"bf16", "int8", "fp32"}, name  # INT8: W8A8's rate, never FP8's
        assert c.peak("fp8") == c.peak("bf16") == c.peak("fp16"), name
        assert "scaleup_bandwidth_bytes_per_s" in c.estimates, name
    assert "56.25 GB/s" in load_chip("a40").source_of("scaleup_bandwidth_bytes_per_s")
    mi250, mi250x = load_chip("mi250-gcd"), load_chip("mi250x-gcd")
    assert mi250.peak("bf16") == pytest.approx(362.1e12 / 2) and mi250.peak("bf16") < mi250x.peak("bf16")
    assert (mi250.hbm_capacity_bytes, mi250.hbm_bandwidth_bytes_per_s) == \
        (mi250x.hbm_capacity_bytes, mi250x.hbm_bandwidth_bytes_per_s)
    node = load_system("mi250-node")
    assert node.domain_chips == load_system("mi250x-node").domain_chips == 8 and "domain_chips" in node.estimates


@pytest.mark.parametrize("text, entry", [
    ("RTX 6000 Ada", "pcie-rtx-6000-ada-8"), ("NVIDIA RTX 6000 Ada Generation", "pcie-rtx-6000-ada-8"),
    ("2x RTX 6000 Ada 48GB", "pcie-rtx-6000-ada-8"), ("A40", "pcie-a40-8"), ("NVIDIA A40", "pcie-a40-8"),
    ("4x A40 48GB", "pcie-a40-8"), ("MI210", "pcie-mi210-8"), ("AMD Instinct MI210", "pcie-mi210-8"),
    ("MI250", "mi250-node"), ("Instinct MI250", "mi250-node"), ("AMD Instinct MI250", "mi250-node"),
    # their neighbours keep their own entries
    ("RTX A6000", "pcie-rtx-a6000-8"), ("RTX PRO 6000", "pcie-rtx-pro-6000-8"), ("L40S", "pcie-l40s-8"),
    ("L40", "pcie-l40-8"), ("A10", "pcie-a10-8"), ("MI250X", "mi250x-node"), ("AMD Instinct MI250X", "mi250x-node"),
    ("MI300X", "mi300x-8"),
    # parts not in the catalog: the Turing Quadro RTX 6000, RTX 5000 Ada, A4000; an MI250 stated by its package's memory
    ("RTX 6000", None), ("Quadro RTX 6000", None), ("RTX 5000 Ada", None), ("RTX A4000", None),
    ("AMD Instinct MI250 128GB", None), ("A10G", "pcie-a10g-8"), ("L20", "pcie-l20-8"),
])
def test_rtx_6000_ada_a40_mi210_mi250_names(text, entry):
    from tokenmath.measure.validate.match import Aliases
    s, note = Aliases().system(text)
    assert (s.name if s else None) == entry, note


@pytest.mark.parametrize("name, system", [("RTX 6000 Ada", "rtx-6000-ada"), ("A40", "a40"), ("MI210", "mi210"),
                                          ("MI250", "mi250-gcd"), ("MI250X", "mi250x-gcd"), ("mi250-node", "mi250-node")])
def test_serve_runs_on_rtx_6000_ada_a40_mi210_mi250(name, system):
    r = run("serve", "llama-3.1-8b", "--on", name, "--batch", "4", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["system"] == system


def test_rtx_3090_is_ga102_at_the_fp32_accumulate_rate_and_its_ti_is_another_board():
    """GA102 whitepaper (not re-read here): BF16 at the FP32-accumulate rate (71 TFLOPS dense), INT8 at four times
    it, no FP8: an FP8 checkpoint runs as W8A16 at the BF16 rate, never at the INT8 one; the Ti is refused."""
    from tokenmath.measure.validate.match import Aliases
    chip = load_chip("rtx-3090")
    assert (chip.peak("bf16"), chip.peak("w8a8")) == (pytest.approx(71e12), pytest.approx(284e12))
    assert "fp8" not in chip.peak_flop_per_s and chip.hbm_bandwidth_bytes_per_s == pytest.approx(936e9)
    assert chip.peak("fp8") == chip.peak("bf16") and load_chip("t4").peak("fp8") == load_chip("t4").peak("fp16")
    assert Aliases().system("NVIDIA GeForce RTX 3090")[0].name == "pcie-rtx-3090-8"
    for text in ("RTX 3090 Ti", "GeForce RTX 4080 SUPER"):
        s, note = Aliases().system(text)
        assert s is None and ("board" in note or "matches no" in note), note


def _figures_are(expect: dict) -> None:
    """Each chip's BF16 peak, capacity in GiB, bandwidth, and the figures that must be marked estimates."""
    for name, (bf16, gib, bw, estimates) in expect.items():
        c = load_chip(name)
        assert c.peak("bf16") == pytest.approx(bf16), name
        assert c.hbm_capacity_bytes == gib * 2**30 and c.hbm_bandwidth_bytes_per_s == pytest.approx(bw), name
        assert estimates <= set(c.estimates), name


@pytest.mark.parametrize("text, entry", [
    ("g6e.12xlarge", "pcie-l40s-8"), ("g6.48xlarge", "pcie-l4-8"), ("g6.xlarge", "pcie-l4-8"),
    ("ct5lp-hightpu-8t", "tpu-v5e-256"), ("ct6e-standard-4t", "tpu-v6e-256"), ("BM.GPU.H100.8", "hgx-h100"),
    ("a2-highgpu-4g", "hgx-a100-40gb"), ("a2-ultragpu-8g", "hgx-a100"), ("g2-standard-8", "pcie-l4-8"),
    # Azure's NC A100 v4 is the PCIe card, not the SXM board the 'A100' in its name would match
    ("Standard_NC24ads_A100_v4", "pcie-a100-8"), ("Standard_NC40ads_H100_v5", "pcie-h100-nvl-8"),
    ("g5.12xlarge", "pcie-a10g-8"), ("g5.xlarge", "pcie-a10g-8"),
])
def test_cloud_instance_names_resolve_to_their_parts(text, entry):
    from tokenmath.measure.validate.match import Aliases
    s, note = Aliases().system(text)
    assert (s.name if s else None) == entry, note


def test_a10g_l20_h20_141gb_rtx_5090_gb10_mi300a_figures():
    """The A10G's peaks are GA102 estimates (80 SMs x 1,710 MHz x 1,024 flop/clock/SM); the RTX 5090's tensor peaks are
    GeForce's FP32-accumulate rates (half the FP16-accumulate ones); the H20 141GB is the H20's GPU with HBM3e (its
    bandwidth the H200's, an estimate); GB10 and MI300A share their memory with the CPU, one GB10 per DGX Spark."""
    expect = {  # bf16, capacity GiB, bandwidth, estimates that must be marked
        "a10g": (140.1e12, 24, 600e9, {"peak_flop_per_s.bf16", "peak_flop_per_s.fp32"}),
        "l20": (119.5e12, 48, 864e9, set()),
        "h20-141gb": (148e12, 141, 4.8e12, {"hbm_bandwidth_bytes_per_s"}),
        "rtx-5090": (209.5e12, 32, 1792e9, {"peak_flop_per_s.fp4"}),
        "gb10": (125e12, 128, 273e9, {"peak_flop_per_s.bf16", "peak_flop_per_s.fp8"}),
        "mi300a": (980.6e12, 128, 5.3e12, {"scaleup_bandwidth_bytes_per_s"}),
    }
    _figures_are(expect)
    assert load_chip("a10g").peak("bf16") == pytest.approx(80 * 1.71e9 * 1024, rel=1e-3)
    assert load_chip("a10g").peak("fp8") == load_chip("a10g").peak("bf16")  # no FP8 on Ampere
    h20, h20e = load_chip("h20"), load_chip("h20-141gb")
    assert h20.hbm_capacity_bytes == 96 * 2**30 and h20.peak_flop_per_s == h20e.peak_flop_per_s
    assert load_chip("rtx-5090").peak("fp8") == pytest.approx(2 * load_chip("rtx-5090").peak("bf16"))
    assert load_chip("gb10").peak("fp4") == pytest.approx(1e15 / 2)  # 1 PFLOP FP4 with sparsity
    assert (load_system("dgx-spark").domain_chips, load_system("mi300a-4").domain_chips,
            load_system("hgx-h20-141gb").domain_chips) == (1, 4, 8)


ROUND11_PART_NAMES = [
    ("A10G", "pcie-a10g-8"), ("1x NVIDIA A10G (g5.xlarge)", "pcie-a10g-8"), ("4x A10G (g5.12xlarge)", "pcie-a10g-8"),
    ("g5.48xlarge", "pcie-a10g-8"), ("NVIDIA L20", "pcie-l20-8"), ("L20 48GB", "pcie-l20-8"),
    ("H20 141GB", "hgx-h20-141gb"), ("H20-141G", "hgx-h20-141gb"), ("8x NVIDIA H20 141GB", "hgx-h20-141gb"),
    ("RTX 5090", "pcie-rtx-5090-8"), ("NVIDIA GeForce RTX 5090", "pcie-rtx-5090-8"), ("RTX5090", "pcie-rtx-5090-8"),
    ("DGX Spark", "dgx-spark"), ("NVIDIA DGX Spark", "dgx-spark"), ("NVIDIA GB10", "dgx-spark"),
    ("MI300A", "mi300a-4"), ("AMD Instinct MI300A", "mi300a-4"),
    # their neighbours keep their own entries
    ("H20", "hgx-h20"), ("NVIDIA H20 96GB", "hgx-h20"), ("H200 SXM 141GB", "hgx-h200"), ("A10", "pcie-a10-8"),
    ("L40", "pcie-l40-8"), ("L4", "pcie-l4-8"), ("RTX 4090", "pcie-rtx-4090-8"), ("GB200", "gb200-nvl72"),
    ("DGX H100", "hgx-h100"), ("MI300X", "mi300x-8"), ("RTX 5080", None),
]


ROUND11_PARTS_SERVED = [("g5.xlarge", "pcie-a10g-8"), ("H20-141G", "h20-141gb"),
                                          ("DGX Spark", "dgx-spark"), ("MI300A", "mi300a")]


def test_inferentia2_trainium1_ascend_figures_and_neuron_cores():
    """Inferentia2 and Trainium1 share NeuronCore-v2 and their memory (32 GiB at 820 GB/s); Trainium1's peaks are
    estimates (AWS's instance figure / 16); the 910B's rate is one bin's, an estimate; the 910C is two 910B-class
    dies. Neuron's TP counts cores: 2 a chip on NeuronCore-v2 parts, 4 logical ones on Trainium2 (LNC=2)."""
    expect = {  # bf16, capacity GiB, bandwidth, estimates that must be marked
        "inferentia2": (190e12, 32, 820e9, {"scaleup_bandwidth_bytes_per_s"}),
        "trainium1": (210e12, 32, 820e9, {"peak_flop_per_s.bf16", "peak_flop_per_s.fp8"}),
        "ascend-910b": (376e12, 64, 1.6e12, {"peak_flop_per_s.bf16", "hbm_bandwidth_bytes_per_s"}),
        "ascend-910c": (752e12, 128, 3.2e12, {"scaleup_bandwidth_bytes_per_s"}),
    }
    _figures_are(expect)
    assert load_chip("ascend-910b").peak("fp8") == load_chip("ascend-910b").peak("bf16")  # no FP8 cube units
    assert load_chip("ascend-910c").hbm_bandwidth_bytes_per_s == 2 * load_chip("ascend-910b").hbm_bandwidth_bytes_per_s
    assert {c: load_chip(c).ranks_per_chip for c in ("inferentia2", "trainium1", "trainium2", "h100-sxm")} == \
        {"inferentia2": 2, "trainium1": 2, "trainium2": 4, "h100-sxm": None}
    assert [load_system(s).domain_chips for s in ("inf2-12", "trn1-16", "atlas-800t-a2", "cloudmatrix-384")] == \
        [12, 16, 8, 384]


ROUND12_PART_NAMES = [
    ("inf2.48xlarge", "inf2-12"), ("inf2.xlarge", "inf2-12"), ("AWS Inferentia2", "inf2-12"), ("Inferentia2", "inf2-12"),
    ("Trn1", "trn1-16"), ("trn1.32xlarge", "trn1-16"), ("trn1n.32xlarge", "trn1-16"), ("AWS Trainium1", "trn1-16"),
    ("Ascend 910B", "atlas-800t-a2"), ("8x Ascend 910B NPU", "atlas-800t-a2"), ("Huawei Ascend 910B", "atlas-800t-a2"),
    ("Atlas 800T A2", "atlas-800t-a2"), ("Ascend 910C", "cloudmatrix-384"), ("CloudMatrix 384", "cloudmatrix-384"),
    ("HL-325L", "gaudi3-8"), ("HL-338", "gaudi3-8"), ("Intel Gaudi 3", "gaudi3-8"),
    # their neighbours keep their own entries; parts and bins not in the catalog stay refused
    ("Trn2", "trn2-16"), ("Trainium2", "trn2-16"), ("trn2.48xlarge", "trn2-16"), ("HL-225B", "gaudi2-8"),
    ("AWS Inferentia", None), ("Trainium", None), ("Ascend 910B3", None), ("Ascend 910", None),
]


ROUND12_PARTS_SERVED = [("inf2.48xlarge", "inf2-12"), ("Trn1", "trainium1"),
                                          ("Ascend 910B", "ascend-910b"), ("HL-325L", "gaudi3")]


def test_apple_china_market_cpu_and_jetson_figures():
    """Apple parts: unified memory at the vendor's bandwidth, GPU FP16 = FP32 peaks estimated (cores x 128 x 2 x clock),
    no matrix units; H800 PCIe / A800 PCIe are the H100 PCIe / A100 PCIe with a slower bridge; the MI308X's compute is
    the export rule's ceiling; a CPU socket's bandwidth is channels x rate x 8 B and its peaks cores x clock x flop/cycle
    (estimates); Jetson modules share their memory with the CPU."""
    expect = {  # bf16 (or the 16-bit rate it runs at), capacity GiB, bandwidth, estimates that must be marked
        "m1-ultra": (21.2e12, 128, 800e9, {"peak_flop_per_s.fp16"}), "m2-ultra": (27.2e12, 192, 800e9, {"peak_flop_per_s.fp16"}),
        "m3-max": (14.3e12, 128, 400e9, {"peak_flop_per_s.fp16"}), "m3-ultra": (28.6e12, 512, 819e9, {"peak_flop_per_s.fp16"}),
        "m4-max": (16.2e12, 128, 546e9, {"peak_flop_per_s.fp16"}), "m4-pro": (8.1e12, 64, 273e9, {"peak_flop_per_s.fp16"}),
        "h800-pcie": (756.5e12, 80, 2e12, set()), "a800-pcie": (312e12, 80, 1.935e12, set()),
        "a800-pcie-40gb": (312e12, 40, 1.555e12, set()),
        "mi308x": (300e12, 192, 5.3e12, {"peak_flop_per_s.bf16", "peak_flop_per_s.fp8", "hbm_bandwidth_bytes_per_s"}),
        "xeon-6980p": (262.1e12, 1536, 844.8e9, {"peak_flop_per_s.bf16", "peak_flop_per_s.int8", "hbm_capacity_bytes"}),
        "xeon-8480p": (114.7e12, 512, 307.2e9, {"peak_flop_per_s.bf16", "scaleup_bandwidth_bytes_per_s"}),
        "epyc-9654": (14.75e12, 768, 460.8e9, {"peak_flop_per_s.bf16", "peak_flop_per_s.fp32"}),
        "jetson-agx-orin": (42.5e12, 64, 204.8e9, {"peak_flop_per_s.bf16"}),
        "jetson-agx-thor": (258.75e12, 128, 273e9, {"peak_flop_per_s.bf16", "peak_flop_per_s.fp8"}),
    }
    _figures_are(expect)
    clocks = {"m1-ultra": 1.296e9, "m2-ultra": 1.398e9, "m3-max": 1.398e9, "m3-ultra": 1.398e9, "m4-max": 1.578e9,
              "m4-pro": 1.578e9}
    for apple, clock in clocks.items():
        c = load_chip(apple)
        assert set(c.peak_flop_per_s) == {"fp16", "fp32"} and c.peak("fp8") == c.peak("int8") == c.peak("w8a8") == c.peak("fp16"), apple
        cores = int(re.search(r"(\d+)-core GPU", c.display_name).group(1))
        assert c.peak("fp32") == pytest.approx(cores * 128 * 2 * clock, rel=0.01), apple
    # channels x transfer rate x 8 bytes; AMX 1,024 BF16 flop per cycle per core at the 2.0 GHz base
    assert load_chip("xeon-8480p").hbm_bandwidth_bytes_per_s == pytest.approx(8 * 4800e6 * 8)
    assert load_chip("epyc-9654").hbm_bandwidth_bytes_per_s == pytest.approx(12 * 4800e6 * 8)
    assert load_chip("xeon-6980p").peak("bf16") == pytest.approx(128 * 2.0e9 * 1024, rel=1e-3)
    assert load_chip("xeon-8480p").peak("w8a8") == pytest.approx(2 * load_chip("xeon-8480p").peak("bf16"))
    h800p, h100p = load_chip("h800-pcie"), load_chip("h100-pcie")
    assert h800p.peak_flop_per_s == h100p.peak_flop_per_s and h800p.priors == h100p.priors == "default"
    assert {load_chip(n).priors for n in ("a800-pcie", "a800-pcie-40gb")} == {"a100-80gb-kernels"}
    assert load_chip("mi308x").peak("bf16") * 16 <= 4800e12  # TPP = dense TOPS x bit width below the export ceiling
    assert [load_system(s).domain_chips for s in ("mac-studio-m2-ultra", "xeon-6980p-1s", "xeon-6980p-2s",
                                                  "epyc-9654-2s", "jetson-agx-orin-1", "mi308x-8")] == [1, 1, 2, 2, 1, 8]


ROUND13_PART_NAMES = [
    ("Apple M2 Ultra (76-core GPU)", "mac-studio-m2-ultra"), ("M3 Max 40c", "macbook-pro-m3-max"),
    ("Mac Studio M2 Ultra 192GB", "mac-studio-m2-ultra"), ("M1 Ultra", "mac-studio-m1-ultra"),
    ("M3 Ultra 512GB", "mac-studio-m3-ultra"), ("MacBook Pro M4 Max", "mac-studio-m4-max"), ("M4 Pro", "mac-mini-m4-pro"),
    ("MacBook Pro 16 M3 Max 128GB", "macbook-pro-m3-max"), ("2x Xeon 6980P", "xeon-6980p-2s"),
    ("Xeon 6980P", "xeon-6980p-1s"), ("EPYC 9654", "epyc-9654-1s"), ("Dual AMD EPYC 9654", "epyc-9654-2s"),
    ("Sapphire Rapids 8480+", "xeon-8480p-1s"), ("2x Intel Xeon Platinum 8480+", "xeon-8480p-2s"), ("MI308X", "mi308x-8"),
    ("H800 PCIe", "pcie-h800-8"), ("A800 PCIe", "pcie-a800-8"), ("NVIDIA A800 40GB PCIe", "pcie-a800-40gb-8"),
    ("Jetson AGX Orin", "jetson-agx-orin-1"), ("Jetson AGX Thor", "jetson-agx-thor-1"),
    ("M2 Ultra 64GB", "mac-studio-m2-ultra"), ("Mac mini M4 Pro 24GB", "mac-mini-m4-pro"),
    # their neighbours keep their own entries; bins, memory options and parts not in the catalog stay refused
    ("H800", "hgx-h800"), ("A800", "hgx-a800"), ("MI300X", "mi300x-8"), ("H100 PCIe", "pcie-h100-8"),
    ("M2 Ultra 60-core GPU", None), ("M3 Max 30c", None), ("M3 Max 36GB", None), ("MacBook Pro M4", None),
    # another module number beside names that carry none (was the T5000 entry); the part's own number beside another
    ("Jetson AGX Thor T4000", None), ("Jetson AGX Thor T5000", "jetson-agx-thor-1"), ("H100 SXM (H200 same)", "hgx-h100"),
    ("M2 Max", None), ("Xeon 6972P", None), ("EPYC 9754", None), ("Jetson AGX Orin 32GB", None),
    ("Jetson Orin Nano", None), ("Command R+", None),
]


ROUND13_PARTS_SERVED = [("Mac Studio M2 Ultra", "mac-studio-m2-ultra"), ("M4 Pro", "m4-pro"), ("MI308X", "mi308x"),
                        ("H800 PCIe", "h800-pcie"), ("2x Xeon 6980P", "xeon-6980p-2s"), ("EPYC 9654", "epyc-9654"),
                        ("Jetson AGX Orin", "jetson-agx-orin")]


def test_a_stated_memory_option_sets_the_capacity():
    """A Mac sold with 64, 128 or 192 GB at one bandwidth: 'M2 Ultra 64GB' is the part with 64 GB (what fits
    changes, not the speed); a size no option has (96 GB) is another part."""
    from tokenmath.measure.validate.match import Aliases
    system, note = Aliases().system("M2 Ultra 64GB")
    assert system.chip.hbm_capacity_bytes == 64 * 2**30 and "one of its options" in note
    assert "memory option" in system.chip.source_of("hbm_capacity_bytes")
    assert system.chip.hbm_bandwidth_bytes_per_s == load_chip("m2-ultra").hbm_bandwidth_bytes_per_s
    assert Aliases().system("M2 Ultra 96GB")[0] is None
    # a server CPU's DIMMs are a configuration: the stated size, shared over the sockets of the matched server
    assert Aliases().system("Xeon 8480+ 256GB")[0].chip.hbm_capacity_bytes == 256 * 2**30
    assert Aliases().system("2x EPYC 9654 1536GB")[0].chip.hbm_capacity_bytes == 768 * 2**30


def test_m2_ultra_decodes_llama_2_7b_q4_0_below_its_bandwidth_bound():
    """llama.cpp's Apple-silicon table reports ~95 tok/s tg128 for Llama 2 7B Q4_0 on an M2 Ultra (ggml-org/llama.cpp
    discussion 4167, as recalled, not re-read here); the roofline's bound is 800 GB/s / 3.8 GB ~ 210 tok/s. The
    prediction lies under the bound, and its spec-sheet interval is reported (no factor is tuned to the row)."""
    r = run("serve", "llama-2-7b", "--on", "mac-studio-m2-ultra", "--batch", "1", "--context", "128",
            "--precision", "gguf_q4_0", "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)["decode"]
    assert 50 < d["tokens_per_s"] < 800e9 / 3.5e9 and d["interval_group"].startswith("spec-sheet")
    lo, hi = d["tokens_per_s_interval"]
    assert lo < d["tokens_per_s"] < hi


@pytest.mark.parametrize("text, entry", ROUND11_PART_NAMES + ROUND12_PART_NAMES + ROUND13_PART_NAMES)
def test_each_rounds_part_names_resolve_and_neighbours_keep_theirs(text, entry):
    """A10G, L20, H20 141GB, RTX 5090, GB10, MI300A (round 11); Inferentia2, Trainium1, Ascend, Gaudi 3's cards
    (round 12); Apple silicon, China-market cards, server CPUs and Jetson modules (round 13): as tables write them,
    and their neighbours."""
    from tokenmath.measure.validate.match import Aliases
    s, note = Aliases().system(text)
    assert (s.name if s else None) == entry, note


@pytest.mark.parametrize("name, system", ROUND11_PARTS_SERVED + ROUND12_PARTS_SERVED + ROUND13_PARTS_SERVED)
def test_each_rounds_parts_show_and_serve(name, system):
    r = run("catalog", "show", name, "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["name"] == system
    r = run("serve", "llama-3.1-8b", "--on", name, "--batch", "4", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["system"] == system


def test_a_model_too_large_for_a_module_with_no_link_is_not_told_to_add_chips():
    """Snowflake Arctic on a Jetson: one line, and no '--chips' advice (the module has no link to another: roofline
    refuses a second chip); on a Mac, which has Ethernet, more chips stay a way out."""
    r = run("serve", "snowflake-arctic", "--on", "jetson-agx-thor-1", "--json")
    line = [x for x in r.output.splitlines() if "does not fit" in x]
    assert r.exit_code != 0 and len(line) == 1 and "1 × jetson-agx-thor" in line[0] and "--chips" not in line[0]
    r = run("serve", "snowflake-arctic", "--on", "mac-studio-m2-ultra", "--json")
    assert r.exit_code != 0 and "use more --chips" in r.output


@pytest.mark.parametrize("hw, par, chips", [("trn2.48xlarge", "TP64", 16), ("inf2.48xlarge", "TP24", 12),
                                            ("Trn1", "TP32", 16), ("AWS Inferentia2", "TP2", 1),
                                            ("8x Ascend 910B NPU", "TP8", 8), ("H100", "TP8", 8)])
def test_a_neuron_tp_degree_counts_neuroncores(hw, par, chips):
    """Neuron's tp_degree counts NeuronCores (catalog ranks_per_chip): a trn2.48xlarge TP64 is 16 chips of 4 logical
    cores; other parts' TP counts chips. A TP that is a share of a chip (TP1 on Inferentia2's 2 cores) is refused."""
    from tokenmath.core.load import load_model
    from tokenmath.measure.validate.match import Aliases
    from tokenmath.measure.validate.serving import _layout
    system = Aliases().system(hw)[0]
    said: list[str] = []
    G = _layout({"parallelism": par}, load_model("llama-3.1-70b"), system, "bf16", None, None, Aliases(), said)[0]
    assert G == chips and (("in chips" in " ".join(said)) == (system.chip.ranks_per_chip is not None)), said
    with pytest.raises(ValueError, match="share of a chip"):
        _layout({"parallelism": "TP1"}, load_model("llama-3.1-8b"), load_system("inf2-12"), "bf16", 1, None, Aliases())
    # a chip count equal to the split's span in cores counts cores: one replica, not r of them (n_chips 64 on a
    # trn2.48xlarge TP64 read as 4 instances, 4x the rate); a count the split tiles in chips keeps its replicas
    for n, par, want in ((64, "TP64", (16, 1)), (16, "TP64", (16, 1)), (12, "TP8", (4, 3)), (24, "TP8, 3 replicas", (4, 3))):
        G, n_rep = _layout({"parallelism": par}, load_model("llama-3.1-70b"), load_system("trn2-16" if n != 12 and n != 24
                                                                                          else "inf2-12"),
                           "bf16", n, None, Aliases())[:2]
        assert (G, n_rep) == want, (n, par)
