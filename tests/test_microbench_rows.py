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
