"""Hybrid sharding (FSDP's HYBRID_SHARD / HSDP, torchtitan's dp_shard × dp_replicate) and ZeRO++'s hpZ in training
rows: the traffic of each tier (splits.hsdp_comm_time, splits.hpz_comm_time), never more than full ZeRO-3's over the
same links, and how a row's parallelism and notes are read (probe round 9: an OLMo-style 7B with HSDP on 1,024 H100
was held to ZeRO-3's traffic over the NICs, 3,905 against ~10,500 tokens/s/GPU recalled)."""

from __future__ import annotations

import csv
import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokenmath.core.derive import given as given_q
from tokenmath.core.load import load_system
from tokenmath.measure.validate import COLUMNS
from tokenmath.training import predict_training_row
from tokenmath.training.rows import _row_hybrid, _row_split, dp_floor
from tokenmath.training.splits import dp_comm_time, hpz_comm_time, hsdp_comm_time

H100 = load_system("hgx-h100")


def table_row(line: str) -> dict:
    return next(csv.DictReader(io.StringIO(",".join(COLUMNS) + "\n" + line + "\n")))


GOLDEN_HSDP = """\
t_hsdp = max(c_zero · 2 · (s − 1) / s · N_chip · b_g / bw_shard, 2 · (r − 1) / r · N_chip / s · b_g / bw_replica)  \
= 102 ms
       = max(1.50 · 2 · (8 − 1) / 8 · 7.00B params · 2 B/param / 360 GB/s, 2 · (128 − 1) / 128 · 7.00B params / 8 \
· 2 B/param / 40.0 GB/s)
sources:
  c_zero: ZeRO-3: two gathers and a reduce-scatter (ZeRO §7)
  s: one node of 8 H100
  r: 1,024 chips / 8
  N_chip: a 7B model, no model parallelism
  b_g: bf16
  bw_shard: NVLink 450 GB/s × eta_scaleup 0.8
  bw_replica: NIC 50 GB/s × eta_scaleout 0.8"""


def test_golden_hsdp_derivation():
    """Reviewed by hand once: inside the node 3 · 7/8 · 14 GB over 360 GB/s = 102 ms; across, each chip all-reduces its
    eighth of the gradients with 127 others, 2 · 127/128 · 1.75 GB over 40 GB/s = 87 ms: the node's tier is slower."""
    q = hsdp_comm_time(given_q("c_zero", 1.5, "", "ZeRO-3: two gathers and a reduce-scatter (ZeRO §7)"),
                       given_q("s", 8, "", "one node of 8 H100"), given_q("r", 128, "", "1,024 chips / 8"),
                       given_q("N_chip", 7e9, "params", "a 7B model, no model parallelism"),
                       given_q("b_g", 2, "B/param", "bf16"),
                       given_q("bw_shard", 360e9, "B/s", "NVLink 450 GB/s × eta_scaleup 0.8"),
                       given_q("bw_replica", 40e9, "B/s", "NIC 50 GB/s × eta_scaleout 0.8"))
    assert q.explain() == GOLDEN_HSDP
    assert float(q) == pytest.approx(max(3 * 7 / 8 * 14e9 / 360e9, 2 * 127 / 128 * 1.75e9 / 40e9))


def test_hsdp_limits_are_ddp_and_zero3():
    """One rank per shard group is plain data parallelism (a gradient all-reduce over dp); one group holding every
    rank is ZeRO-3 over it."""
    N, b, bw = 7e9, 2.0, 40e9
    assert hsdp_comm_time(1.5, 1, 64, N, b, 1e12, bw) == pytest.approx(dp_comm_time(1.0, 64, N, b, bw))
    assert hsdp_comm_time(1.5, 64, 1, N, b, bw, 1.0) == pytest.approx(dp_comm_time(1.5, 64, N, b, bw))
    # hpZ with a secondary copy on one rank is ZeRO-3's forward gather and reduce-scatter: 2 of its 3 passes
    assert hpz_comm_time(1, 64, N, b, 1e12, bw) == pytest.approx(dp_comm_time(1.0, 64, N, b, bw))


@settings(max_examples=200, deadline=None)
@given(s=st.integers(1, 64), r=st.integers(1, 512), N=st.floats(1e8, 1e12), up=st.floats(1e9, 2e12),
       ratio=st.floats(1.0, 100.0))
def test_hybrid_sharding_never_moves_more_than_zero3_over_the_same_links(s, r, N, up, ratio):
    """Over the same links (the shard group's at least as fast as the NICs ZeRO-3's ring crosses), HSDP's and hpZ's
    slower tier is never slower than full ZeRO-3 over all s · r ranks on the NICs."""
    out = up / ratio
    zero3 = dp_comm_time(1.5, s * r, N, 2.0, out)
    assert hsdp_comm_time(1.5, s, r, N, 2.0, up, out) <= zero3 * (1 + 1e-12)
    assert hpz_comm_time(s, s * r, N, 2.0, up, out) <= zero3 * (1 + 1e-12)


@settings(max_examples=40, deadline=None)
@given(nodes=st.integers(2, 256), params_b=st.floats(0.5, 200), seqs_per_chip=st.integers(1, 8),
       words=st.sampled_from(["HSDP", "FSDP HYBRID_SHARD", "hybrid sharding, shard group 8", "ZeRO-3 with hpZ"]))
def test_a_hybrid_rows_floor_never_exceeds_full_zero3s(nodes, params_b, seqs_per_chip, words):
    """The factor a row's rate is held to under hybrid sharding is never below full sharding's (FSDP) on the same
    chips, batch and model."""
    G = 8 * nodes
    base = {c: "" for c in COLUMNS} | {"batch": str(G * seqs_per_chip)}
    N, flop_tok, rate = params_b * 1e9, 6 * params_b * 1e9, 400e12
    k_full, _ = dp_floor({**base, "parallelism": "FSDP"}, H100, N, flop_tok, G, 4096, rate)
    k_hyb, why = dp_floor({**base, "parallelism": words}, H100, N, flop_tok, G, 4096, rate)
    assert k_hyb >= k_full * (1 - 1e-12) and why


@pytest.mark.parametrize("parallelism, notes, kind, s, stated", [
    ("HSDP", "", "hsdp", 8, False),  # a node's 8 ranks, assumed
    ("FSDP HYBRID_SHARD", "", "hsdp", 8, False),
    ("FSDP (hybrid sharding)", "", "hsdp", 8, False),
    ("FSDP hybrid", "", "hsdp", 8, False),
    ("FSDP", "sharding within node, replicated across nodes", "hsdp", 8, False),
    ("HYBRID_SHARD, shard group 16", "", "hsdp", 16, True),
    ("FSDP", "sharding group size 4", "hsdp", 4, True),
    ("HSDP dp_shard 8, dp_replicate 64", "", "hsdp", 8, True),
    ("HSDP, dp_replicate=32", "", "hsdp", 16, True),  # 512 ranks over 32 replicas
    ("TP2 HSDP", "", "hsdp", 4, False),  # 4 data-parallel ranks in a node of 8
    ("ZeRO-3 with hpZ", "", "hpz", 8, False),
    ("ZeRO++ (hpZ, qwZ, qgZ)", "", "hpz", 8, False),
    # TPU multislice (MaxText): sharded over each slice's ICI, replicated across slices over DCN (was full ZeRO-3
    # over the DCN: 5 % MFU predicted for 2 v5e-256 slices)
    ("FSDP 256 per slice; DP 2 over DCN", "", "hsdp", 256, True),
    ("ici_fsdp_parallelism=256, dcn_data_parallelism=2", "", "hsdp", 256, True),
    ("FSDP", "dcn_data_parallelism=4", "hsdp", 128, True),
])
def test_hybrid_sharding_as_rows_write_it(parallelism, notes, kind, s, stated):
    row = {"parallelism": parallelism, "notes": notes}
    split = _row_split(row, H100)
    assert split is not None and split[1] == 3
    got = _row_hybrid(row, H100, split[0], 512 / split[0])
    assert got[:2] == (kind, s)
    assert ("assumed" in got[2]) == (not stated)


@pytest.mark.parametrize("parallelism, notes, hardware", [
    ("FSDP FULL_SHARD, activation checkpointing", "", "H100"), ("FSDP", "", "H100"), ("ZeRO-3", "", "H100"),
    ("FSDP", "", "A100-SXM 80GB, hybrid cube-mesh NVLink"),  # the hardware's mesh is no sharding
    ("TP8 PP8", "sharded optimizer", "H100"),
])
def test_full_sharding_and_other_words_are_not_hybrid(parallelism, notes, hardware):
    assert _row_hybrid({"parallelism": parallelism, "notes": notes, "hardware": hardware}, H100, 1, 64) is None


OLMO = table_row("H-1,recalled,OLMo 7B,bf16,H100 SXM,1024,\"FSDP HYBRID_SHARD, shard group 8\",global batch 1024,,,4096,"
                 "training throughput,10500,tokens/s/GPU,recalled,pretraining")


def test_probe9_an_hsdp_row_is_not_held_to_zero3s_traffic_over_the_nics():
    """Probe round 9: OLMo-style 7B with HSDP on 1,024 H100 (~10,500 tokens/s/GPU recalled) was held to ZeRO-3's 41 GB
    per chip per step over a 40 GB/s NIC (3,968). Hybrid sharding moves 37 GB over NVLink and 3.4 GB over the NIC:
    ~0.1 s under a 0.4 s step, no floor. The reading is said in the row's why."""
    hsdp = predict_training_row(OLMO)
    full = predict_training_row({**OLMO, "parallelism": "FSDP FULL_SHARD"})
    assert any("held to its data-parallel traffic: ZeRO-3" in w for w in full["why"])
    assert hsdp["predicted"] > 2 * full["predicted"]
    assert abs(hsdp["error"]) < 0.25, hsdp
    said = [w for w in hsdp["why"] if "hybrid sharding (HSDP)" in w]
    assert said and "not held" in said[0] and "shard group of 8 ranks, as the row states" in said[0]
    # unstated, the shard group is a node's ranks, said as assumed
    bare = predict_training_row({**OLMO, "parallelism": "HSDP"})
    assert bare["predicted"] == pytest.approx(hsdp["predicted"])
    assert any("assumed" in w and "hybrid sharding" in w for w in bare["why"])


def test_a_shard_group_beyond_a_node_gathers_over_the_nics():
    """A shard group of 16 on 8-GPU nodes spans two: its gathers cross the NICs, and the row is held to them where
    they outweigh the compute."""
    row = {**OLMO, "parallelism": "HYBRID_SHARD, shard group 16", "model": "Llama 2 70B", "batch": "global batch 256"}
    p = predict_training_row(row)
    said = next(w for w in p["why"] if "hybrid sharding" in w)
    assert "shard groups of 16 gather and reduce-scatter" in said and "over the scale-out link" in said.split("replicas")[0]
    node = predict_training_row({**row, "parallelism": "HYBRID_SHARD, shard group 8"})
    assert node["predicted"] > p["predicted"]
