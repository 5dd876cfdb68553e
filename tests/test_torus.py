"""The Cloud TPU ICI torus (kernels.torus_bus_bandwidth): a ring collective over n chips runs along every axis of
their block at once, on the links of those axes; a block without wraparound runs each axis as a line (half)."""
import pytest

from tokenmath.core import kernels
from tokenmath.core.load import load_model, load_system
from tokenmath.core.roofline import Layout, step
from tokenmath.measure.validate import COLUMNS, Aliases, predict_row


@pytest.mark.parametrize("n, dims, shape", [(8, 2, (2, 4)), (4, 2, (2, 2)), (256, 2, (16, 16)), (4, 3, (1, 2, 2)),
                                            (64, 3, (4, 4, 4)), (3072, 3, (12, 16, 16)), (1, 2, (1, 1))])
def test_a_group_is_the_most_nearly_cubic_block(n, dims, shape):
    assert kernels.torus_shape(n, dims) == shape


def test_the_rate_by_block():
    """v5e: 200 GB/s a chip each way over 4 links (hardware.csv: 1600 Gbps per direction), 50 GB/s a link."""
    B = 200e9
    bw = lambda n: float(kernels.torus_bus_bandwidth(B, n, 2, 16))  # noqa: E731
    assert bw(2) == pytest.approx(50e9)  # one link, a line
    assert bw(8) == pytest.approx(100e9)  # 2 × 4 without wraparound: 2 axes × 1 link-rate
    assert bw(256) == pytest.approx(B)  # the full 16 × 16 pod wraps: every link, the switched-domain rate
    v5p = lambda n: float(kernels.torus_bus_bandwidth(600e9, n, 3, 4))  # noqa: E731
    assert v5p(64) == pytest.approx(600e9) and v5p(8) == pytest.approx(300e9)
    for n in (2, 4, 8, 16, 32, 64, 128, 256):  # never above the chip's rate
        assert bw(n) <= B + 1e-6


def test_systems_carry_the_torus_and_switched_domains_keep_their_rate():
    v5e, h100 = load_system("tpu-v5e-256"), load_system("hgx-h100")
    assert (v5e.torus_dims, v5e.torus_wrap_extent) == (2, 16) and "torus_wrap_extent" in v5e.estimates
    assert float(v5e.ring_bw(8)) == pytest.approx(v5e.scaleup_bw / 2)
    assert float(h100.ring_bw(8)) == h100.scaleup_bw
    for name in ("tpu-v4-pod", "tpu-v5p-pod", "tpu7x-pod"):
        assert load_system(name).torus_dims == 3


def test_tp8_all_reduce_on_a_v5e_8_runs_at_half_the_chips_rate():
    """TP8 on 8 v5e chips (a 2 × 4 block): the prefill all-reduce's bandwidth term doubles against the chip's whole
    ICI rate (it was priced as a switched domain)."""
    m, s = load_model("llama-2-7b"), load_system("tpu-v5e-256")
    t = step(m, s, G=8, B=1, S=4096, phase="prefill", layout=Layout(tp=8), precision="bf16", explain=True).t_comm
    bw = float(t.inputs["t_tp"].inputs["bw_link"]) if "t_tp" in t.inputs else float(t.inputs["bw_link"])
    assert bw == pytest.approx(s.scaleup_bw / 2 * 0.8, rel=0.3)
    assert bw < s.scaleup_bw / 2 + 1


def _row(**kw):
    base = {c: "" for c in COLUMNS}
    base.update({"id": "Q-T1", "source": "probe", "metric": "all_reduce busbw 1GB", "value": "80", "unit": "GB/s",
                 "hardware": "v5e-8", "confidence": "high", **kw})
    return base


def test_an_all_reduce_on_a_v5e_8_slice_is_held_to_its_block():
    p = predict_row(_row(), Aliases())
    full = predict_row(_row(hardware="v5e-256"), Aliases())
    assert p.predicted == pytest.approx(full.predicted / 2, rel=0.01)
    assert any("2 × 4 block" in w for w in p.why)
