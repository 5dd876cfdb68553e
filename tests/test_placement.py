"""Placement (lecture-claims.md E4, E7, P3, P4, P5, M3): splits that fit, memory per chip, the tier each
collective crosses, pipelining's effect on weights vs KV, and `tokenmath place` end to end."""

from __future__ import annotations

import json

import numpy as np
import pytest
from clirun import frontier, run
from hypothesis import given, settings
from hypothesis import strategies as st

from tokenmath.core.load import load_model, load_system
from tokenmath.serving.placement import kv_per_chip, largest_model, place, weights_per_chip

FAST = settings(max_examples=40, deadline=None)


# ---- P4: pipelining shrinks weights per chip, not KV ----------------------------------------------

def test_ledger_p4_example():
    """5T FP8 on E = 64, P = 4, micro-batch 2,400 at 100K tokens of 2 KB: 19.5 GB weights, 7.5 GB KV per GPU."""
    w = weights_per_chip(0.0, 5e12, 1.0, 1, 64, 4)
    kv = kv_per_chip(4, 2400, 100_000 * 2000.0, 64, 1)
    assert w == pytest.approx(19.53e9, rel=1e-3)
    assert kv == pytest.approx(7.5e9, rel=1e-12)
    assert weights_per_chip(0.0, 5e12, 1.0, 1, 64, 8) == pytest.approx(w / 2)
    assert kv_per_chip(8, 2400, 100_000 * 2000.0, 64, 1) == pytest.approx(kv, rel=1e-12)


@FAST
@given(pp=st.sampled_from([1, 2, 4, 8, 16]), B=st.floats(1, 1e4), kv_held=st.floats(1e3, 1e9),
       ep=st.sampled_from([1, 8, 64]), tp_kv=st.sampled_from([1, 2, 8]))
def test_kv_per_chip_independent_of_pipeline_stages(pp, B, kv_held, ep, tp_kv):
    assert kv_per_chip(pp, B, kv_held, ep, tp_kv) == pytest.approx(kv_per_chip(1, B, kv_held, ep, tp_kv), rel=1e-12)


def test_place_kv_per_stage_same_across_stages_and_weights_fall():
    m, s = load_model("deepseek-v3"), load_system("gb200-nvl72")
    rows = []
    for pp in (1, 2, 4, 8):
        r = place(m, s, B=2048, S=8192, tp=1, ep=8, pp=pp)
        rows.append(r.row(r.requested))
    kv = [x["kv_per_stage_bytes"] for x in rows]
    assert np.allclose(kv, kv[0], rtol=1e-12)
    w = [x["weights_per_chip_bytes"] for x in rows]
    assert all(a > b for a, b in zip(w, w[1:]))
    assert w[0] / w[3] == pytest.approx(8.0, rel=1e-9)
    assert [x["sequences_in_flight"] for x in rows] == [2048, 4096, 8192, 16384]  # micro-batches = stages


# ---- E7: a 5T-parameter model on Hopper vs Blackwell racks ------------------------------------------

def test_frontier_5t_does_not_fit_hgx_h100_but_fits_gb300_with_a_long_context_batch():
    m = frontier()
    h100 = place(m, load_system("hgx-h100"), B=2400, S=100_000)
    assert h100.fits is False and h100.best is None
    gb300 = place(m, load_system("gb300-nvl72"), B=2400, S=100_000)
    assert gb300.fits is True
    row = gb300.row(gb300.best)
    assert row["memory_per_chip_bytes"] <= row["capacity_per_chip_bytes"] and row["chips"] <= 72
    # and the lecture's GB200 NVL72 case (row E7 test)
    assert place(m, load_system("gb200-nvl72"), B=2400, S=100_000).fits is True


def test_largest_model_per_domain():
    s = load_system("hgx-h100")
    kv = 100_000 * 2048.0
    N = largest_model(8, s.chip.hbm_capacity_bytes, 2400, kv, 1.0)
    assert N == pytest.approx(8 * 80 * 2**30 - 2400 * kv)
    assert N < 5e12
    r = place(frontier(), load_system("gb300-nvl72"), B=2400, S=100_000)
    assert r.numbers["largest_model_params"] > 5e12  # 72 × 288 GB − 0.49 TB of KV ≈ 20 TB at FP8
    assert largest_model(8, 80e9, 1e9, 1e9, 1.0) == 0.0  # never negative


# ---- E4: an expert group spanning n domains sends 1 − 1/n of its tokens over scale-out -------------

def test_expert_parallel_across_domains_uses_scale_out():
    m, s = load_model("deepseek-v3"), load_system("gb200-nvl72")
    inside = place(m, s, B=4096, S=4096, tp=1, ep=64, pp=1)
    across = place(m, s, B=9216, S=4096, max_chips=144, tp=1, ep=144, pp=1)  # the same 64 tokens a chip
    a, b = inside.row(inside.requested), across.row(across.requested)
    assert a["comm_tier"] == "scale-up" and a["ep_scaleout_share"] == 0
    assert b["comm_tier"] == "scale-out" and b["ep_scaleout_share"] == pytest.approx(0.5)
    assert b["t_comm_s"] > a["t_comm_s"]


def test_pipeline_hops_cross_domains_only_at_domain_edges():
    m, s = load_model("deepseek-v3"), load_system("hgx-h100")
    r = place(m, s, B=512, S=4096, max_chips=32, tp=1, ep=8, pp=4, precision="fp8")
    row = r.row(r.requested)
    assert row["pipeline_tier"] == "scale-out" and row["chips"] == 32
    assert 0 < row["t_pipeline_s"] < 0.01 * row["step_time_s"] * 10  # microseconds per hop, not milliseconds


def test_golden_memory_per_chip_derivation():
    """DeepSeek-V3 on EP64: 17.1B dense parameters (attention, 3 dense MLPs, shared experts, embeddings) on
    every chip, 654B routed over 64; 1,024 sequences of 4,096 tokens × 70.3 kB of MLA latent over 64 ranks."""
    r = place(load_model("deepseek-v3"), load_system("gb200-nvl72"), B=1024, S=4096, tp=1, ep=64, pp=1,
              explain=True)
    lines = r.numbers["memory_per_chip_bytes"].explain().splitlines()
    assert lines[:6] == [
        "mem_chip = W_chip + kv_chip  = 31.9 GB",
        "         = 27.3 GB + 4.61 GB",
        "  W_chip = N_dense · b_w / (tp · pp) + N_routed · b_w / (tp · ep · pp)  = 27.3 GB",
        "         = 17.1B params · 1.00 B / (1 · 1) + 654B params · 1.00 B / (1 · 64 · 1)",
        "  kv_chip = pp · B · kv_held / (pp · ep · tp_kv)  = 4.61 GB",
        "          = 1 · 1,024 seq · 288 MB / (1 · 64 · 1)",
    ]


# ---- CLI -------------------------------------------------------------------------------------------

def test_cli_place_frontier_on_hgx_h100_does_not_fit():
    r = run("place", "frontier-5t", "--on", "hgx-h100", "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["fits"] is False and "best" not in d  # no split fits: omitted, not null
    assert d["splits"] and all(not x["fits"] for x in d["splits"])


def test_cli_place_frontier_on_gb300_long_context_fits():
    r = run("place", "frontier-5t", "--on", "gb300-nvl72", "--batch", "2400", "--context", "100k", "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["fits"] is True and d["split"]["fits"] is True
    assert d["derivations"]["memory_per_chip_bytes"]["formula"] == "mem_chip = W_chip + kv_chip"


def test_cli_place_table_requested_split():
    r = run("place", "deepseek-v3", "--on", "gb200-nvl72", "--tp", "1", "--ep", "64", "--pp", "1")
    assert r.exit_code == 0, r.output
    assert "fits: yes — requested split tp=1 ep=64 pp=1" in r.stdout
    assert "KV per chip does not" in r.stdout


@pytest.mark.parametrize("args, needle", [
    (("place", "deepseek-v3", "--on", "gb200-nvl72", "--tp", "0"), "--tp"),
    (("place", "deepseek-v3", "--on", "gb200-nvl72", "--pp", "999"), "--pp"),
    (("place", "llama-3.1-8b", "--on", "hgx-h100", "--ep", "2"), "dense"),
    (("place", "deepseek-v3", "--on", "gb200-nvl72", "--batch", "-1"), "--batch"),
    (("place", "deepseek-v3", "--on", "nvl99"), "unknown system"),
])
def test_cli_place_bad_input(args, needle):
    r = run(*args)
    assert r.exit_code != 0
    err = r.stderr.strip()
    assert len(err.splitlines()) == 1 and err.startswith("error:") and needle in err
