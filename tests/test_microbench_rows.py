"""Published microbenchmarks read by what they measure: GEMM shapes in any column, HBM streams, NVLink/PCIe/
InfiniBand links, NCCL collectives (busbw, algbw, latency; in a node or across nodes), each predicted below its
spec bound and within sight of it, and refused with the true reason where it cannot be."""

from __future__ import annotations

import csv
import json

import pytest
from clirun import run

from tokenmath.core import kernels
from tokenmath.measure.validate import COLUMNS, PACKAGE_TABLE, Aliases, predict_row, validate_table
from tokenmath.measure.validate.microbench import _gemm_shape, message_bytes
from tokenmath.measure.validate.rows import row_kind


def _row(id, metric, value, unit, hardware="H100 SXM", n_chips="1", **kw) -> dict:
    base = {c: "" for c in COLUMNS}
    base.update({"id": id, "source": "microbench", "metric": metric, "value": value, "unit": unit,
                 "hardware": hardware, "n_chips": n_chips, "confidence": "high", **kw})
    return base


# (row, kind): rows of an unseen table of published microbenchmarks
ROWS = [
    (_row("Q-004", "all_reduce busbw 8GB", "450", "GB/s", "8x H100 SXM", "8", source="nccl-tests"), "collective"),
    (_row("Q-005", "gemm 8192x8192x8192", "750", "TFLOP/s", precision="BF16"), "gemm"),
    (_row("Q-007", "dense fp8 gemm 16384^3", "3.9", "PFLOP/s", "B200", precision="FP8"), "gemm"),
    (_row("Q-101", "TFLOPS", "700", "TFLOP/s", model="M=N=K=8192", precision="BF16"), "gemm"),
    (_row("Q-102", "matmul throughput", "700", "TFLOP/s", precision="BF16", notes="8k x 8k x 8k"), "gemm"),
    (_row("Q-103", "GEMM TFLOPS", "700", "TFLOP/s", precision="BF16"), "gemm"),  # no shape: 8192³
    (_row("Q-104", "dense bf16 TFLOPS", "650", "TFLOPS"), "gemm"),  # precision from the metric
    (_row("Q-105", "matmul 4096^3", "1.4", "PFLOP/s", "H200", precision="FP8"), "gemm"),
    (_row("Q-106", "HBM bandwidth", "3.0", "TB/s"), "stream"),
    (_row("Q-107", "memory bandwidth", "2900", "GB/s", "H200"), "stream"),
    (_row("Q-108", "stream triad", "3.1", "TB/s"), "stream"),
    (_row("Q-109", "memcpy device to device", "2.8", "TB/s"), "stream"),
    (_row("Q-110", "p2p bandwidth", "370", "GB/s", "8x H100 SXM", "2"), "link"),
    (_row("Q-111", "nvlink bandwidth unidirectional", "370", "GB/s", "8x H100 SXM", "2"), "link"),
    (_row("Q-112", "nvlink bandwidth bidirectional", "740", "GB/s", "8x H100 SXM", "2"), "link"),
    (_row("Q-113", "PCIe p2p bandwidth", "50", "GB/s", "H100 PCIe", "2"), "link"),
    (_row("Q-114", "InfiniBand bandwidth", "48", "GB/s", n_chips="2", notes="ib_write_bw, ConnectX-7"), "link"),
    (_row("Q-123", "RDMA write bandwidth", "47", "GB/s", n_chips="2"), "link"),
    (_row("Q-115", "all_gather busbw", "360", "GB/s", "8x H100 SXM", "8", notes="1 GB"), "collective"),
    (_row("Q-116", "reduce_scatter busbw 256MB", "350", "GB/s", "8x H100 SXM", "8"), "collective"),
    (_row("Q-117", "alltoall algbw 1GB", "380", "GB/s", "8x H100 SXM", "8"), "collective"),
    (_row("Q-118", "all_reduce busbw 1GB", "370", "GB/s", "H100 SXM", "16", notes="2 nodes, IB NDR 400G"),
     "collective"),
    (_row("Q-119", "alltoall busbw 1GB", "40", "GB/s", "H100 SXM", "32", notes="4 nodes"), "collective"),
    (_row("Q-120", "all_reduce latency 8B", "15", "us", "8x H100 SXM", "8"), "collective"),
    (_row("Q-121", "all_reduce bus bandwidth", "700", "GB/s", "B200", "8"), "collective"),
    (_row("Q-122", "allreduce busbw 64MB", "500", "GB/s", "GB200 NVL72", "72"), "collective"),
]


@pytest.mark.parametrize("row, kind", ROWS, ids=[r["id"] for r, _ in ROWS])
def test_published_microbenchmarks_are_expressed_near_and_below_their_bound(row, kind):
    assert row_kind(row) == kind
    out = predict_row(row, Aliases())
    assert hasattr(out, "predicted"), out.reason
    assert out.kind == kind and out.spec is not None
    if out.higher_is_better:  # a rate: at most the spec bound, not far below it, and near what was measured
        assert 0.3 * out.spec <= out.predicted <= out.spec * (1 + 1e-9)
        assert 0.5 <= out.predicted / out.measured <= 2.0
    else:  # a small collective's time: at least the bound, and microseconds
        assert out.spec <= out.predicted <= 100 and out.unit == "us"


@pytest.mark.parametrize("text, shape", [
    ("M=N=K=8192", (8192, 8192, 8192, 1)), ("8192x8192x8192", (8192, 8192, 8192, 1)),
    ("8k x 8k x 8k", (8192, 8192, 8192, 1)), ("8kx8kx8k", (8192, 8192, 8192, 1)), ("4096^3", (4096, 4096, 4096, 1)),
    ("16384³", (16384, 16384, 16384, 1)), ("M=N=4096 K=8192", (4096, 4096, 8192, 1)),
    ("dense FP8 GEMM M=64 N=2112 K=7168", (64, 2112, 7168, 1)),  # the K of 'K=' is not a thousand
    ("M=4096 N=7168 K=16384, BM x BN 128x160", (4096, 7168, 16384, 1)),
    ("grouped FP8 GEMM (contiguous) groups=4 M/group=8192 N=4096 K=7168", (8192, 4096, 7168, 4)),
])
def test_gemm_shapes_in_any_column(text, shape):
    for col in ("model", "metric", "notes"):
        row = {"model": "", "metric": "", "notes": "", "batch": "", col: text}
        assert _gemm_shape(row) == shape


def test_an_unstated_gemm_shape_is_the_large_square_one_stated():
    out = predict_row(_row("Q-201", "matmul TFLOPS", "700", "TFLOP/s", precision="BF16"), Aliases())
    square = predict_row(_row("Q-202", "gemm 8192x8192x8192", "700", "TFLOP/s", precision="BF16"), Aliases())
    assert out.predicted == pytest.approx(square.predicted)
    assert any("shape not stated" in a for a in out.assumptions)


@pytest.mark.parametrize("text, size", [("8GB", 8 * 2**30), ("256 MB", 256 * 2**20), ("100MB", 100e6), ("8B", 8),
                                        ("1 GiB", 2**30), ("size=8G", 8 * 2**30)])
def test_message_sizes(text, size):
    assert message_bytes({"metric": f"all_reduce {text}", "notes": "", "batch": "", "model": ""})[0] == size


def test_network_rates_and_memory_sizes_are_not_message_sizes():
    assert message_bytes({"metric": "all_reduce busbw", "notes": "IB NDR 400G, 400Gb/s, 80GB HBM3", "batch": "",
                          "model": ""})[0] is None


def test_collective_busbw_approaches_the_link_and_algbw_is_its_definition():
    """nccl-tests: busbw = algbw · 2(n − 1)/n for all-reduce, · (n − 1)/n for the others; at large sizes busbw
    approaches bw_bus, whatever n."""
    bw, lat = 360e9, 10e-6
    for op, n in (("all_reduce", 8), ("all_gather", 8), ("alltoall", 4), ("reduce_scatter", 16)):
        f = kernels.bus_factor(op, n)
        t = kernels.collective_time(f, 2.0**33, bw, lat)
        assert f * 2.0**33 / t == pytest.approx(bw, rel=1e-3)
        small = kernels.collective_time(f, 8.0, bw, lat)
        assert small == pytest.approx(lat, rel=1e-3)  # a small message is its latency
    assert kernels.bus_factor("all_reduce", 8) == pytest.approx(2 * 7 / 8)
    row = _row("Q-203", "all_reduce algbw 8GB", "250", "GB/s", "8x H100 SXM", "8")
    alg = predict_row(row, Aliases())
    bus = predict_row({**row, "metric": "all_reduce busbw 8GB"}, Aliases())
    assert bus.predicted == pytest.approx(alg.predicted * 2 * 7 / 8)


def test_across_nodes_the_nics_bound_the_bus():
    """16 H100 in 2 nodes: the rings leave each node on its 8 NICs (8 × 50 GB/s < NVLink's 450 GB/s); an all-to-all
    sends through each GPU's own NIC, so its bus rate is about one NIC's."""
    ar = predict_row(_row("Q-204", "all_reduce busbw 1GB", "370", "GB/s", "H100 SXM", "16", notes="2 nodes"),
                     Aliases())
    inside = predict_row(_row("Q-205", "all_reduce busbw 1GB", "370", "GB/s", "8x H100 SXM", "8"), Aliases())
    assert ar.spec == pytest.approx(400) and ar.predicted < inside.predicted
    a2a = predict_row(_row("Q-206", "alltoall busbw 1GB", "40", "GB/s", "H100 SXM", "64", notes="8 nodes"), Aliases())
    assert 50 <= a2a.spec <= 50 * 63 / 56 + 1e-9


def test_bidirectional_is_both_directions():
    one = predict_row(_row("Q-207", "nvlink bandwidth unidirectional", "370", "GB/s", "8x H100 SXM", "2"), Aliases())
    two = predict_row(_row("Q-208", "nvlink bandwidth bidirectional", "740", "GB/s", "8x H100 SXM", "2"), Aliases())
    assert two.predicted == pytest.approx(2 * one.predicted) and one.spec == pytest.approx(450)


@pytest.mark.parametrize("row, reason", [
    (_row("Q-301", "PCIe H2D bandwidth", "55", "GB/s"), "no host-link bandwidth for h100-sxm"),
    (_row("Q-302", "TFLOPS", "700", "TFLOP/s", precision="BF16"), "a FLOP rate of no kernel the row names"),
    (_row("Q-303", "throughput", "700", "GB/s"), "a bandwidth of nothing the row names"),
    (_row("Q-304", "all_reduce busbw 1GB", "400", "GB/s", n_chips=""), "number of GPUs"),
    (_row("Q-305", "all_reduce busbw 1GB", "400", "us", "8x H100 SXM", "8"), "different dimensions"),
    (_row("Q-306", "gemm 8192x8192x8192", "700", "TFLOP/s"), "precision not stated"),
    (_row("Q-307", "gemm M=4096 N=4096", "700", "TFLOP/s", precision="BF16"), "only partly stated"),
])
def test_refusals_say_the_true_reason(row, reason):
    out = predict_row(row, Aliases())
    assert not hasattr(out, "predicted") and reason in out.reason, getattr(out, "reason", out)


def test_the_public_tables_microbenchmarks_keep_their_kinds():
    """The UB rows of the shipped table: GEMMs, attention kernels, streams, DeepEP all-to-all, as before."""
    rep = validate_table(PACKAGE_TABLE, groups=["UB"])
    kinds = {p.id: p.kind for p in rep.rows}
    assert {kinds[i] for i in ("UB-045", "UB-080", "UB-100", "UB-108")} == {"gemm"}
    assert {kinds[i] for i in ("UB-075", "UB-076", "UB-077", "UB-078")} == {"kernel"}
    assert kinds["UB-074"] == "stream" and kinds["UB-001"] == "stream"
    assert kinds["UB-003"] == "link" and kinds["UB-011"] == "alltoall"
    assert [u.id for u in rep.unexpressed] == ["UB-079"]


def test_cli_reads_a_table_of_published_microbenchmarks(tmp_path):
    path = tmp_path / "ub.csv"
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=COLUMNS)
        w.writeheader()
        for row, _ in ROWS:
            w.writerow(row)
    r = run("validate", "--table", str(path), "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert not d["unexpressed"], d["unexpressed"]
    assert sorted(x["id"] for x in d["rows"]) == sorted(row["id"] for row, _ in ROWS)
    assert all(x["bound_ok"] for x in d["rows"])
    r = run("validate", "--table", str(path))
    assert r.exit_code == 0 and "median |error|" in r.stdout


@pytest.mark.parametrize("model, hardware, n, notes, metric, unit", [
    ("nccl all_reduce_perf", "DGX H100", "8", "size=0B", "busbw", "GB/s"),           # no bytes
    ("alltoall", "DGX H100", "16", "8GB, 16 GPUs per node", "busbw", "GB/s"),      # n = GPUs per node
    ("GEMM M=0 N=4096 K=4096", "H100 SXM", "1", "", "gemm TFLOPs", "TFLOP/s"),      # an empty dimension
])
def test_degenerate_microbenchmarks_are_refused_or_sane_never_a_crash(model, hardware, n, notes, metric, unit):
    r = {c: "" for c in COLUMNS}
    r.update(id="Q-900", model=model, hardware=hardware, n_chips=n, notes=notes, metric=metric, value="100",
             unit=unit, precision="BF16")
    out = predict_row(r, Aliases())
    assert getattr(out, "reason", None) or (out.predicted > 0 and out.predicted < 1e300)


def test_a_huge_exponent_or_a_lower_case_shape():
    from tokenmath.measure.validate.rows import parse_measured
    assert parse_measured("1e400") is None
    assert _gemm_shape({"model": "GEMM m=1024 n=2048 k=4096", "metric": "", "notes": "", "batch": ""})[:3] == \
        (1024, 2048, 4096)


# ---- probe round 9: microbenchmarks as nccl-tests, nvbandwidth, perftest, BabelStream, FlashAttention, DeepGEMM and
# DeepEP write them (approximate values, recalled)

@pytest.mark.parametrize("unit, scale", [("Gb/sec", 1e9 / 8), ("Gbits/sec", 1e9 / 8), ("MBytes/sec", 1e6),
                                         ("GBytes/s", 1e9), ("MiB/s", 2.0**20), ("Gbps", 1e9 / 8), ("GB/s", 1e9)])
def test_probe9_bandwidth_units_as_tools_print_them(unit, scale):
    """ib_write_bw's 'Gb/sec' is bits (it was read as bytes, 8× off); BabelStream's 'MBytes/sec' and 'MiB/s' were
    refused as no unit."""
    from tokenmath.measure.validate.rows import dimension_of_unit, unit_scale
    assert unit_scale(unit) == pytest.approx(scale) and dimension_of_unit(unit) == "bandwidth"


def test_probe9_an_fp8_format_named_by_its_bits():
    """'e4m3' (FlashAttention-3, Transformer Engine) is FP8: a GEMM was refused for it, an attention kernel ran at the
    BF16 peak. A TF32 GEMM is refused: the catalog's fp32 peak is the CUDA cores', not the TF32 tensor cores'."""
    gemm = predict_row(_row("Q-401", "throughput", "1210", "TFLOPS", precision="e4m3", notes="4096x4096x4096"),
                       Aliases())
    assert gemm.kind == "gemm" and "fp8" in gemm.why[0]
    fa3 = _row("Q-402", "forward speed", "1200", "TFLOPs/s", model="FlashAttention-3 forward FP8", precision="e4m3")
    bf16 = predict_row({**fa3, "precision": "bf16"}, Aliases())
    assert predict_row(fa3, Aliases()).predicted == pytest.approx(2 * bf16.predicted, rel=2e-3)  # 1979 / 989 TF
    tf32 = predict_row(_row("Q-403", "TFLOPS", "140", "TFLOPS", "A100 80GB SXM4", precision="TF32", notes="8192^3"),
                       Aliases())
    assert "TF32 rate" in tf32.reason


def test_probe9_a_gemm_shape_as_a_tuple_and_a_gemms_time():
    """DeepGEMM's '(m, n, k) = (128, 7168, 2048)' (it was the unstated 8192³, 2.9× off); a GEMM's time in ms is its
    FLOP at the predicted rate (it was refused)."""
    assert _gemm_shape({"model": "", "metric": "", "notes": "(m, n, k) = (128, 7168, 2048)", "batch": ""}) == \
        (128, 7168, 2048, 1)
    assert _gemm_shape({"model": "M, N, K = 64, 2112, 7168", "metric": "", "notes": "", "batch": ""})[:3] == \
        (64, 2112, 7168)
    rate = predict_row(_row("Q-404", "TFLOPS", "750", "TFLOPS", model="torch.matmul 16384 x 16384 x 16384",
                            precision="bf16"), Aliases())
    t = predict_row(_row("Q-405", "kernel time", "11.8", "ms", model="torch.matmul 16384 x 16384 x 16384",
                         precision="bf16"), Aliases())
    assert t.kind == "gemm" and not t.higher_is_better
    assert t.predicted * 1e-3 == pytest.approx(2 * 16384**3 / (rate.predicted * 1e12)) and t.spec < t.predicted


def test_probe9_an_attention_kernels_time_is_flashattentions_flop_count_at_its_rate():
    """'flash_attn_func forward (batch 4, seqlen 8192, 32 heads, hdim 128, causal)' in ms was read as a serving
    latency of an unknown model; it is 4·B·S²·H·D / 2 FLOP at the kernel's rate. A row without the heads is refused."""
    model = "flash_attn_func forward (batch 4, seqlen 8192, 32 heads, hdim 128, causal)"
    row = _row("Q-406", "latency", "3.1", "ms", model=model, precision="bf16")
    assert row_kind(row) == "kernel"
    t = predict_row(row, Aliases())
    rate = predict_row(_row("Q-407", "forward", "600", "TFLOPs/s", model=model, precision="bf16"), Aliases())
    assert t.predicted * 1e-3 == pytest.approx(4 * 4 * 8192**2 * 32 * 128 / 2 / (rate.predicted * 1e12))
    bwd = predict_row({**row, "model": model.replace("forward", "backward")}, Aliases())
    assert bwd.predicted == pytest.approx(2.5 * t.predicted)
    out = predict_row({**row, "model": "flash_attn_func forward (batch 4, seqlen 8192, hdim 128)"}, Aliases())
    assert "states no heads" in out.reason


def test_probe9_peer_and_host_copies_are_links_not_hbm():
    """nvbandwidth's device_to_device_memcpy_read_ce between 2 GPUs is the NVLink (it was an HBM stream, 7× off), and
    host_to_device_memcpy_ce a host link the catalog lacks (it was an HBM stream, 50× off); a device-to-device copy on
    one chip stays a copy within its HBM."""
    peer = predict_row(_row("Q-408", "device_to_device_memcpy_read_ce", "390", "GB/s", n_chips="2",
                            model="nvbandwidth"), Aliases())
    assert peer.kind == "link" and peer.spec == pytest.approx(450)
    assert predict_row(_row("Q-409", "peer bandwidth", "48", "GB/s", "MI300X", "2"), Aliases()).kind == "link"
    host = predict_row(_row("Q-410", "host_to_device_memcpy_ce", "55", "GB/s", model="nvbandwidth"), Aliases())
    assert "host-link bandwidth" in host.reason
    assert predict_row(_row("Q-411", "memcpy device to device", "2.8", "TB/s"), Aliases()).kind == "stream"


def test_probe9_broadcast_reduce_and_sendrecv_move_the_message_once():
    """nccl-tests' broadcast_perf, reduce_perf and sendrecv_perf: busbw = algbw (f_bus = 1), so at large sizes busbw
    approaches the link; they were refused as no collective. all_reduce and reduce_scatter keep their own names."""
    for model, op in (("broadcast_perf", "broadcast"), ("reduce_perf", "reduce"), ("sendrecv_perf", "sendrecv")):
        out = predict_row(_row("Q-412", "busbw", "360", "GB/s", "DGX H100", "8", model=model, notes="1GB"), Aliases())
        assert out.kind == "collective" and out.why[0].startswith(op) and out.spec == pytest.approx(450, rel=1e-3)
    assert kernels.bus_factor("broadcast", 8) == 1.0
    for model, op in (("all_reduce_perf", "all_reduce"), ("reduce_scatter_perf", "reduce_scatter")):
        out = predict_row(_row("Q-413", "busbw", "360", "GB/s", "DGX H100", "8", model=model, notes="1GB"), Aliases())
        assert out.why[0].startswith(op)
    across = predict_row(_row("Q-414", "busbw", "40", "GB/s", "H100 SXM", "16", model="sendrecv_perf",
                              notes="1GB, 2 nodes"), Aliases())
    assert across.spec == pytest.approx(50)  # the ring crosses each node boundary on one chip's NIC


def test_probe9_deepep_latency_as_its_readme_writes_it():
    """DeepEP's README table: 'Dispatch latency' in us, '#EP 8', '7168 hidden' (it was refused as a bandwidth); the
    kernels' 'lowlatency_…_bandwidth' rows stay bandwidths."""
    row = _row("Q-415", "Dispatch latency", "77", "us", "H800 with CX7 InfiniBand 400 Gb/s RDMA network cards", "8",
               model="DeepEP low-latency kernels", precision="FP8 dispatching, BF16 combining",
               parallelism="Dispatch #EP 8", batch="128 tokens per batch",
               notes="128 tokens per batch, 7168 hidden, top-8 experts")
    public = _row("Q-416", "lowlatency_dispatch_latency", "77", "us", "H800 + CX7 IB 400 Gb/s (pure RDMA)", "8",
                  model="DeepEP low-latency kernels (V3/R1 decode setting)", precision="FP8 dispatch / BF16 combine",
                  parallelism="EP8", batch="128 tokens/batch", notes="RDMA bandwidth 98 GB/s; hidden 7168, top-8")
    a, b = predict_row(row, Aliases()), predict_row(public, Aliases())
    assert a.kind == "alltoall" and a.predicted == pytest.approx(b.predicted)
    bw = predict_row({**public, "metric": "lowlatency_dispatch_rdma_bandwidth", "unit": "GB/s", "value": "98"},
                     Aliases())
    assert bw.unit == "GB/s" and bw.higher_is_better


def test_probe9_a_count_of_servers_or_instances_counts_their_chips():
    """'16 x trn1.32xlarge' is 16 instances of 16 chips; '4x DGX H100' 32 chips; a count glued to a part stays chips."""
    from tokenmath.core.load import load_system
    from tokenmath.measure.validate.rows import boxes_of, chips_of
    trn1, h100 = load_system("trn1-16"), load_system("hgx-h100")
    assert boxes_of("16 x trn1.32xlarge") == (16, "trn1.32xlarge") and boxes_of("p5.48xlarge x 2") == (2, "p5.48xlarge")
    assert chips_of({"n_chips": "", "hardware": "16 x trn1.32xlarge"}, trn1)[0] == 256
    assert chips_of({"n_chips": "", "hardware": "4x DGX H100"}, h100)[0] == 32
    assert chips_of({"n_chips": "", "hardware": "8x H100 (DGX H100)"}, h100)[0] == 8
    assert chips_of({"n_chips": "4", "hardware": "4x DGX H100"}, h100)[0] == 4  # the column speaks first


# ---- a share of the chip's peak ('% of peak', '% of theoretical', the MAMF finder's efficiency column) -----------

@pytest.mark.parametrize("metric, unit, value, model, precision, kind", [
    ("MAMF efficiency", "% of peak", "80", "torch.matmul max achievable", "bf16", "gemm"),
    ("efficiency", "%", "86", "torch.matmul max achievable", "bf16", "gemm"),
    ("GEMM efficiency", "% of theoretical", "70", "gemm 8192x8192x8192", "fp8", "gemm"),
    ("efficiency %", "", "75", "gemm 8192x8192x8192", "bf16", "gemm"),
    ("TFLOPS", "% of theoretical peak", "75 %", "gemm 8192x8192x8192", "bf16", "gemm"),
    ("FLOP utilization", "% of peak", "75", "flash_attn forward causal, hdim 128", "bf16", "kernel"),
    ("memory bandwidth efficiency", "% of peak", "90", "stream triad", "", "stream"),
    ("nvlink bandwidth", "percent of peak", "80", "p2p", "", "link"),
])
def test_a_share_of_the_peak_is_the_predicted_rate_over_the_spec_peak(metric, unit, value, model, precision, kind):
    """Probe round 9: a '% of peak' unit was refused as no unit. It is 100 · the rate the same row predicts in its rate
    unit / the spec peak of the same format (the catalog's dense peak the rate is predicted from), or HBM's or the
    link's datasheet rate; the peak is said in the why, the spec bound is 100 % at a large compute-bound shape."""
    row = _row("Q-501", metric, value, unit, "8x H100 SXM" if kind == "link" else "H100 SXM",
               "2" if kind == "link" else "1", model=model, precision=precision)
    assert row_kind(row) == kind
    out = predict_row(row, Aliases())
    rate_unit = {"gemm": "TFLOP/s", "kernel": "TFLOP/s", "stream": "GB/s", "link": "GB/s"}[kind]
    rate = predict_row({**row, "metric": "throughput" if kind != "link" else "nvlink bandwidth", "unit": rate_unit,
                        "value": "1"}, Aliases())
    peak = {"gemm": (1979e12 if precision == "fp8" else 989e12), "kernel": 989e12, "stream": 3350e9,
            "link": rate.spec * 1e9}[kind] / (1e12 if rate_unit == "TFLOP/s" else 1e9)
    assert out.kind == kind and out.higher_is_better
    assert out.predicted == pytest.approx(100 * rate.predicted / peak, rel=1e-9)
    assert out.measured == pytest.approx(float(value.rstrip(" %"))) and 30 < out.predicted <= 100
    assert "a share of" in out.why[-1] and ("peak_flop_per_s" in out.why[-1] or kind in ("stream", "link"))
    if kind == "gemm" and "8192" in model:
        assert out.spec == pytest.approx(100.0)


@pytest.mark.parametrize("row, reason", [
    (_row("Q-511", "GEMM efficiency", "70", "% of peak", model="gemm 8192x8192x8192", precision="fp4"),
     "no fp4 peak for h100-sxm"),  # `peak` would run FP4 at FP8's: a share of it is not FP4's
    (_row("Q-512", "GEMM efficiency", "70", "% of peak", model="gemm 8192x8192x8192", precision="tf32"), "TF32 rate"),
    (_row("Q-513", "all_reduce busbw efficiency", "80", "% of peak", "8x H100 SXM", "8"), "which peak"),
    (_row("Q-514", "efficiency", "80", "% of peak", model="my kernel"), "a share of the peak of nothing the row names"),
])
def test_a_share_of_a_peak_the_catalog_lacks_is_refused_with_the_reason(row, reason):
    out = predict_row(row, Aliases())
    assert not hasattr(out, "predicted") and reason in out.reason, getattr(out, "reason", out)


@pytest.mark.parametrize("row, share", [
    (_row("Q-521", "KV cache hit rate", "80", "%", model="Llama 3.1 8B"), False),
    (_row("Q-522", "GPU utilization", "95", "%", model="Llama 3.1 8B"), False),
    (_row("Q-523", "decode memory bandwidth utilization", "70", "%", model="Llama 3.1 70B"), True),
])
def test_other_percentages_are_not_predicted_as_a_kernels_share(row, share):
    """A hit rate or a GPU's busy time is no share of a peak; a model's decode MBU is one, but of no kernel or stream
    this predicts (it is not read as an HBM stream's): all three are refused."""
    from tokenmath.measure.validate.rows import share_of_peak
    assert share_of_peak(row) == share and row_kind(row) == "unknown"
    assert not hasattr(predict_row(row, Aliases()), "predicted")


def test_probe10d_an_attention_kernel_named_only_by_its_api():
    """Probe round 10D: cuDNN's and PyTorch's SDPA ('cuDNN SDPA forward', 'F.scaled_dot_product_attention') name an
    attention kernel without the word: a FLOP rate or a time of one is an attention kernel's (the rate was refused as
    a FLOP rate of no kernel)."""
    rate = _row("Q-501", "TFLOPS", "1450", "TFLOPS", "B200", model="cuDNN SDPA forward (hdim 128)", precision="bf16",
                context_len="8192")
    assert row_kind(rate) == "kernel"
    out = predict_row(rate, Aliases())
    fa = predict_row({**rate, "model": "FlashAttention forward (hdim 128)"}, Aliases())
    assert out.kind == "kernel" and out.predicted == pytest.approx(fa.predicted)
    t = _row("Q-502", "latency", "3.1", "ms", model="F.sdpa forward (batch 4, seqlen 8192, 32 heads, hdim 128, causal)",
             precision="bf16")
    assert row_kind(t) == "kernel" and predict_row(t, Aliases()).kind == "kernel"


def test_probe10d_a_gemms_memory_bandwidth_is_its_bytes_over_its_time():
    """Probe round 10D: DeepGEMM's README gives each shape's 'Memory bandwidth' beside its TFLOPS: the GEMM's operand
    and output bytes over its time (it was an HBM stream at W · eta_bw, 1.7× off). A bandwidth with no GEMM shape
    stays a stream."""
    row = _row("Q-503", "Memory bandwidth", "1688", "GB/s", "H800", model="DeepGEMM dense GEMM", precision="FP8",
               notes="(m, n, k) = (64, 2112, 7168)")
    assert row_kind(row) == "gemm"
    bw = predict_row(row, Aliases())
    t = predict_row({**row, "metric": "kernel time", "unit": "us"}, Aliases())
    byts = 64 * 7168 + 7168 * 2112 + 64 * 2112 * 2
    assert bw.kind == "gemm" and bw.higher_is_better
    assert bw.predicted * 1e9 == pytest.approx(byts / (t.predicted * 1e-6)) and bw.predicted < bw.spec
    assert row_kind({**row, "notes": ""}) == "stream"


@pytest.mark.parametrize("text, shape", [
    ("#Groups 4, M per group 8192, N 4096, K 7168", (8192, 4096, 7168, 4)),
    ("num_groups: 8, m_per_group=4096, n=4096, k=7168", (4096, 4096, 7168, 8)),
    ("4 groups, M per group 8k, N 4096, K 7168", (8192, 4096, 7168, 4)),
    ("groups=4 M/group=8192 N=4096 K=7168", (8192, 4096, 7168, 4)),
    ("top-K 8, M=1", None),
])
def test_probe10d_a_grouped_gemms_shape_as_its_readme_columns_write_it(text, shape):
    """Probe round 10D: DeepGEMM's grouped GEMMs ('#Groups 4, M per group 8192, N 4096, K 7168') were read as the
    unstated 8192³ with one group; the columns name N and K without '=' only beside the rows per group."""
    assert _gemm_shape({"model": "", "metric": "", "notes": text, "batch": ""}) == shape


def test_probe10d_a_grouped_gemm_with_its_shape_half_stated_is_refused():
    row = _row("Q-504", "Computation", "1297", "TFLOPS", "H800", model="DeepGEMM grouped GEMM", precision="FP8",
               notes="M per group 8192, N 4096")
    assert "only partly stated" in predict_row(row, Aliases()).reason


def test_probe10d_a_bandwidth_between_chips_is_a_link():
    """Probe round 10D: NVSHMEM's shmem_put_bw between 2 GPUs ('put bandwidth', NVLink in the notes) is one chip writing
    into another's memory over the link (it was an HBM stream, 7.6× off). A bandwidth that names memory, or one chip's
    kernel bandwidth with no link said, stays a stream."""
    put = _row("Q-505", "put bandwidth", "380", "GB/s", n_chips="2", model="shmem_put_bw (device)",
               notes="NVLink; size 1 MiB per PE")
    assert row_kind(put) == "link" and predict_row(put, Aliases()).spec == pytest.approx(450)
    assert row_kind({**put, "notes": ""}) == "link"  # two chips, no memory word
    assert row_kind({**put, "n_chips": "1", "notes": "", "model": "FlashMLA decoding"}) == "stream"
    assert row_kind({**put, "metric": "memory bandwidth", "notes": "", "n_chips": "8"}) == "stream"


def test_probe10d_an_integer_gemm_in_tops():
    """Probe round 10D: an INT8 GEMM's rate in TOPS (cuBLASLt's) was refused as no unit; it is 1e12 operations a
    second, at the chip's INT8 peak where the catalog holds one (the A100 SXM's since probe 11D: weight-only INT8 runs
    at the 16-bit rate by its name, core/units.py, not by the peak's absence). Where it holds none (MI300X) a GEMM of
    INT8 operands is refused with that reason, not run at the BF16 peak; an INT8 weight-only GEMM runs at the 16-bit
    rate."""
    from tokenmath.measure.validate.rows import unit_scale
    assert unit_scale("TOPS") == 1e12 and unit_scale("POPS") == 1e15
    l4 = predict_row(_row("Q-506", "throughput", "200", "TOPS", "L4", model="cuBLASLt INT8 GEMM", precision="int8",
                          notes="M=N=K=8192"), Aliases())
    assert l4.kind == "gemm" and l4.spec == pytest.approx(242) and "w8a8" in l4.why[0]
    a100 = _row("Q-507", "throughput", "550", "TOPS", "A100 80GB SXM4", model="cuBLASLt INT8 GEMM", precision="int8",
                notes="M=N=K=8192")
    assert predict_row(a100, Aliases()).spec == pytest.approx(624)
    assert "no INT8 peak" in predict_row({**a100, "hardware": "MI300X"}, Aliases()).reason
    wo = predict_row({**a100, "precision": "int8 weight-only", "unit": "TFLOPS"}, Aliases())
    assert wo.kind == "gemm" and wo.spec == pytest.approx(312)


def test_probe10d_nccl_tests_average_bus_bandwidth_is_the_mean_over_its_sweep():
    """Probe round 10D: nccl-tests' closing 'Avg bus bandwidth' (run -b 8 -e 8G -f 2) is the mean busbw over the 31
    sizes swept, most of them latency-bound (it was read at an assumed 1 GiB, 3× high); a row that gives no sweep is
    refused with the reason."""
    from tokenmath.measure.validate.microbench import sweep_sizes
    sizes, _ = sweep_sizes("-b 8 -e 8G -f 2 -g 8")
    assert len(sizes) == 31 and sizes[0] == 8 and sizes[-1] == 8 * 2**30
    assert sweep_sizes("-b 1M -e 4M -i 1M")[0] == [2**20, 2 * 2**20, 3 * 2**20, 4 * 2**20]
    row = _row("Q-508", "Avg bus bandwidth", "150", "GB/s", "DGX H100", "8", model="all_reduce_perf",
               notes="-b 8 -e 8G -f 2 -g 8")
    avg = predict_row(row, Aliases())
    one = {x: predict_row({**row, "metric": "busbw", "notes": f"size {x}"}, Aliases()).predicted
           for x in ("8B", "1GB", "8GB")}
    assert one["8B"] < avg.predicted < one["1GB"] < one["8GB"] * 1.01
    assert avg.spec is not None and avg.predicted < avg.spec
    assert "sizes its run swept" in predict_row({**row, "notes": "8 GPUs"}, Aliases()).reason
    at_1g = predict_row({**row, "metric": "mean busbw over 5 runs", "notes": "size 1GB"}, Aliases())
    assert at_1g.predicted == pytest.approx(one["1GB"])  # a mean at one stated size: of repeated runs


def _ub(rid: str) -> dict:
    return next({**{c: "" for c in COLUMNS}, **r} for r in csv.DictReader(open(PACKAGE_TABLE)) if r["id"] == rid)


@pytest.mark.parametrize("rid, kw", [
    ("UB-011", dict(parallelism="EP=8")), ("UB-011", dict(parallelism="expert parallel 8")),
    # tokens per batch in the notes, after the top-k (the top-k was read only at the end of the notes)
    ("UB-011", dict(batch="", notes="RDMA bandwidth 98 GB/s; hidden 7168, top-8; 128 tokens per batch")),
    # RDMA named by the metric alone (it was the NVLink rate, 4x high)
    ("UB-012", dict(hardware="H800, ConnectX-7 InfiniBand 400 Gb/s")),
    # DeepEP's 'Low-latency' kernels: a bandwidth, not a latency (it was refused as a time)
    ("UB-012", dict(metric="Low-latency dispatch RDMA bandwidth")),
    ("UB-100", dict(batch="M=1")),  # the rows of 'M=batch' from the batch column written 'M=1' (it was refused)
])
def test_a_microbenchmark_reworded_reads_as_the_row(rid, kw):
    """Probe round 10E: the same DeepEP or GEMM measurement worded as another author would."""
    row = _ub(rid)
    a, b = predict_row(row, Aliases()), predict_row({**row, **kw}, Aliases())
    assert not hasattr(b, "reason"), b.reason
    assert b.predicted == pytest.approx(a.predicted, rel=1e-9)


def test_a_copy_kernels_time_spelled_with_spaces():
    """'kernel time (copy, before)' is UB-001's 'kernel_time_copy_before': an HBM stream of the notes' bytes (it was
    read as an attention kernel's time, the MLA in the model's name, and refused); an attention kernel's 'kernel time'
    names no copy and stays an attention kernel's."""
    row = _ub("UB-001")
    a, b = predict_row(row, Aliases()), predict_row({**row, "metric": "kernel time (copy, before)"}, Aliases())
    assert b.predicted == pytest.approx(a.predicted, rel=1e-9)
    fa = _row("Q-9", "kernel time", "1.2", "ms",
              model="FlashAttention-2 forward, batch 4, seqlen 8192, 32 heads, hdim 128")
    assert row_kind(fa) == "kernel"


def test_probe10g_a_gemms_batch_and_deeps_ep_split_and_formats_moved_out_of_their_columns():
    """vLLM's skinny GEMM 'M=batch' with the batch as 'batch size 64' in the notes or '(batch 64)' in the metric, and
    DeepEP's low-latency dispatch with 'EP128' in the notes (both were refused) or its formats in the kernel's name
    '(FP8 dispatch / BF16 combine)' (read as BF16: +95 %), read as in their columns."""
    gemm, ep = _ub("UB-105"), _ub("UB-027")
    base = predict_row(gemm, Aliases()).predicted
    for moved in ({**gemm, "batch": "", "notes": "batch size 64"}, {**gemm, "batch": "", "metric": "gemm_TFLOPs (batch 64)"}):
        assert predict_row(moved, Aliases()).predicted == pytest.approx(base, rel=1e-9)
    base = predict_row(ep, Aliases()).predicted
    for moved in ({**ep, "parallelism": "", "notes": ep["notes"] + "; EP128"},
                  {**ep, "precision": "", "model": f"{ep['model']} ({ep['precision']})"}):
        assert predict_row(moved, Aliases()).predicted == pytest.approx(base, rel=1e-9)


def test_probe10g_a_gemms_formats_in_the_kernels_name_read_as_the_precision_column():
    """DeepGEMM's 'dense FP8 GEMM ... (FP8 e4m3, 128-block scaling, BF16 out)' with the precision column empty: the
    block-scaled format the column names, not the first 'FP8' (per-tensor) of the name."""
    row = _ub("UB-046")
    moved = {**row, "precision": "", "model": f"{row['model']} ({row['precision']})"}
    assert predict_row(moved, Aliases()).predicted == pytest.approx(predict_row(row, Aliases()).predicted, rel=1e-9)


def test_probe11v_a_gemm_shape_as_a_bare_tuple_reads_as_m_n_k():
    """Probe round 11V: '(4096, 2112, 7168)' with no letters is M, N, K, as '4096x2112x7168' is (it was the unstated
    8192³, 1.05× to 6.8× off on DeepGEMM's shapes)."""
    row = lambda model: _row("Q-11V", "gemm_TFLOPs", "1058", "TFLOP/s", "H800 SXM", precision="FP8",  # noqa: E731
                             model=model)
    named, bare = (predict_row(row(f"dense FP8 GEMM {s}"), Aliases()) for s in ("M=4096 N=2112 K=7168",
                                                                              "(4096, 2112, 7168)"))
    assert bare.predicted == pytest.approx(named.predicted) and not bare.assumptions
    assert _gemm_shape({"model": "GEMM (8k, 8k, 4096)", "metric": "", "notes": "", "batch": ""}) == (8192, 8192, 4096, 1)


def test_probe11v_an_fp8_gemm_on_a_chip_without_fp8_says_it_is_carried_at_the_16_bit_rate():
    """Probe round 11V: an FP8 GEMM on an A100 (no FP8 tensor cores) is a weight-only kernel at the BF16 rate, at best
    as fast as the BF16 GEMM; the row's why now says so (it predicted below BF16 with no word why)."""
    row = lambda p: _row("Q-11V2", "max_achievable_matmul_TFLOPs", "250", "TFLOP/s", "NVIDIA A100 SXM",  # noqa: E731
                         precision=p, model="dense matmul (best shape found)", notes="best shape 1024x10240x5120")
    fp8, bf16 = predict_row(row("FP8 e4m3fn"), Aliases()), predict_row(row("BF16"), Aliases())
    assert fp8.predicted <= bf16.predicted and any("no FP8 tensor cores" in w for w in fp8.why)
    assert not any("tensor cores" in w for w in bf16.why)


def test_an_all_reduce_said_to_run_over_infiniband_crosses_the_nics(tmp_path):
    """'over InfiniBand' in a row's own words on 8 GPUs: the scale-out NICs, not NVLink (probe 11V: 468 GB/s busbw,
    past a 400 Gb/s NIC); the same row without those words stays inside the node."""
    from tokenmath.measure.validate import validate_table
    f = tmp_path / "t.csv"
    f.write_text("id,model,precision,hardware,n_chips,metric,value,unit,notes\n"
                 "A-1,NCCL all_reduce_perf,BF16,H100 SXM,8,allreduce_busbw,40,GB/s,\"message 1 GB, over InfiniBand\"\n"
                 "A-2,NCCL all_reduce_perf,BF16,H100 SXM,8,allreduce_busbw,400,GB/s,message 1 GB\n", encoding="utf-8")
    r = {x.id: x for x in validate_table(f).rows}
    assert r["A-1"].predicted < 60 < 300 < r["A-2"].predicted


def test_a_deepep_all_to_all_whose_experts_span_more_than_a_node_crosses_the_nics():
    """DeepEP's low-latency dispatch at EP16 on 8-GPU H800 nodes, the row not saying 'RDMA': its experts span two
    domains, so it runs over the NICs as the public row that says 'pure RDMA' does (it was NVLink's, 46 µs against
    118 µs published); EP8 in one node stays on NVLink."""
    row = _row("Q-417", "lowlatency_dispatch_latency", "118", "us", "H800 + CX7 IB 400 Gb/s", "16",
               model="DeepEP low-latency kernels", precision="FP8 dispatch", parallelism="EP16",
               batch="128 tokens/batch", notes="hidden 7168, top-8")
    public = {**row, "hardware": "H800 + CX7 IB 400 Gb/s (pure RDMA)"}
    a, b = predict_row(row, Aliases()), predict_row(public, Aliases())
    assert a.predicted == pytest.approx(b.predicted) and any("scale-out" in w for w in a.why)
    inside = predict_row({**row, "parallelism": "EP8", "n_chips": "8"}, Aliases())
    assert any("scale-up (NVLink)" in w for w in inside.why)
