"""Each collective priced on the tier its own group spans (roofline._comm_time), checked against hand formulas."""
import pytest

from tokenmath.core.load import load_model, load_priors, load_system
from tokenmath.core.roofline import Layout, step


def _comm(m, s, G, B, S, phase, lay, explain=False):
    return step(m, s, G=G, B=B, S=S, phase=phase, layout=lay, precision="fp8", explain=explain).t_comm


def _tp(t_comm):
    """The TP all-reduce's part of an explained t_comm (beside the logits' gather, roofline.logits_gather_time)."""
    return t_comm.inputs.get("t_tp", t_comm)


def test_tp_group_over_two_nodes_rings_over_every_nic_of_the_node():
    """TP16 over two 8-GPU HGX H100 nodes: NCCL's rings cross on the node's 8 NICs at once, busbw = min(bw_up,
    8 · bw_out) (kernels.ring_bus_bandwidth, as a nccl-tests row across nodes is read); it was one NIC's 40 GB/s,
    8× slow on a prefill."""
    m, s = load_model("llama-3.1-405b"), load_system("hgx-h100")
    pri = load_priors(s.chip.priors)
    S = 8192
    t = float(_tp(_comm(m, s, 16, 1, S, "prefill", Layout(tp=16), explain=True)))
    out = s.scaleout_bw * pri.eta_scaleout
    msg = S * m.d_model * 2.0
    hand_bw = 2 * 15 / 16 * msg / (8 * out)  # 8 · 40 GB/s = 320 GB/s, below the in-node all-reduce at this size
    assert t == pytest.approx(m.n_layers * 2 * (hand_bw + max(pri.scaleout_latency_s, pri.scaleup_latency_s)),
                              rel=1e-6)
    assert t < float(_comm(m, s, 8, 1, S, "prefill", Layout(tp=8))) * 2  # same order as in one node, not 8× it


def test_tp_group_inside_a_node_keeps_its_latency_when_the_experts_cross():
    """TP8 EP16 over two nodes: the attention all-reduce stays in the node (its measured fixed cost), only the
    expert all-to-all crosses; the whole replica's size used to send both over the network's latency."""
    m, s = load_model("deepseek-v3"), load_system("hgx-h100")
    two = _comm(m, s, 16, 1, 2048, "decode", Layout(tp=8, ep=16), explain=True).inputs["t_tp"]
    one = _comm(m, s, 8, 1, 2048, "decode", Layout(tp=8, ep=8), explain=True)
    one_tp = one.inputs.get("t_tp", one)
    assert float(two) == pytest.approx(float(one_tp), rel=1e-9)


@pytest.mark.parametrize("system", ["mi300x-8", "hgx-h100", "gaudi3-8"])
def test_a_collective_that_leaves_the_domain_costs_at_least_one_inside(system):
    """On priors whose scale-out fixed cost (10 µs) is below the scale-up one (20 µs, default.yaml's estimates),
    TP16 over two nodes paid less latency per all-reduce than TP8 in one."""
    m, s = load_model("llama-3.1-70b"), load_system(system)
    t8 = _comm(m, s, 8, 1, 1024, "decode", Layout(tp=8), explain=True)
    t16 = _comm(m, s, 16, 1, 1024, "decode", Layout(tp=16), explain=True)
    assert float(_tp(t16).inputs["lat"]) >= float(_tp(t8).inputs["lat"])


@pytest.mark.parametrize("G,lay", [(16, Layout(tp=16)), (32, Layout(tp=1, ep=32)), (16, Layout(tp=8, ep=16)),
                                   (64, Layout(tp=8, ep=64))])
@pytest.mark.parametrize("phase,B,S", [("decode", 1, 1024), ("decode", 128, 4096), ("prefill", 2, 8192)])
def test_a_faster_nic_never_slows_a_step_and_one_domain_is_never_slower(G, lay, phase, B, S):
    m = load_model("deepseek-v3")
    s = load_system("hgx-h200")
    fast_nic = s.model_copy(update={"scaleout_bandwidth_bytes_per_s": 2 * s.scaleout_bw})
    one_domain = s.model_copy(update={"domain_chips": G})
    t = lambda sy: float(step(m, sy, G=G, B=B, S=S, phase=phase, layout=lay, precision="fp8").v("t_comm"))  # noqa: E731
    assert t(fast_nic) <= t(s) + 1e-15
    assert t(one_domain) <= t(s) + 1e-15


def test_a_pipeline_over_two_nodes_sends_only_its_activations():
    """Llama 3.1 405B TP8 PP2 over two HGX H100 nodes: the stage boundary crosses the NICs with each chip's share of
    the stage's activations, T/G · D · 2 B, once per token (the hops were not counted)."""
    m, s = load_model("llama-3.1-405b"), load_system("hgx-h100")
    pri = load_priors(s.chip.priors)
    S = 8192
    t_pp = float(_comm(m, s, 8, 1, S, "prefill", Layout(tp=8, pp=2))) - float(_comm(m, s, 8, 1, S, "prefill", Layout(tp=8)))
    hop = S / 8 * m.d_model * 2.0 / (s.scaleout_bw * pri.eta_scaleout)
    assert t_pp == pytest.approx(hop + max(pri.scaleout_latency_s, pri.scaleup_latency_s), rel=1e-6)
    # four stages of 2 chips fit one node: the hops stay on NVLink
    inside = float(_comm(m, s, 2, 1, S, "prefill", Layout(tp=2, pp=4))) - float(_comm(m, s, 2, 1, S, "prefill", Layout(tp=2)))
    up_hop = S / 2 * m.d_model * 2.0 / (s.scaleup_bw * pri.eta_scaleup)
    assert inside == pytest.approx(3 * (up_hop + pri.scaleup_latency_s), rel=1e-6)


def test_a_kv_transfer_between_nodes_costs_at_least_one_inside():
    """The simulator's two paths read the KV link in one place (disagg.kv_link); on MI300X's default priors (scale-out
    fixed cost 10 µs, scale-up 20 µs: estimates) a prompt's KV sent to another node paid less than one sent inside."""
    from tokenmath.serving.disagg import kv_link
    s = load_system("mi300x-8")
    pri = load_priors(s.chip.priors)
    bw_in, lat_in, crosses_in, _ = kv_link(s, pri, 4, 4)
    bw_out, lat_out, crosses_out, _ = kv_link(s, pri, 8, 8)
    assert not crosses_in and crosses_out
    assert lat_out >= lat_in and bw_out < bw_in


def test_a_pipeline_over_one_chip_domains_prices_only_its_network_hops():
    """Two Mac Studios (one-chip domains, no scale-up link in the catalog) in PP2: the one hop is over the 10 Gb/s
    Ethernet; the in-domain term's 0 hops × 1/0 made every time n/a."""
    m, s = load_model("llama-3.1-8b"), load_system("mac-studio-m3-ultra")
    t = float(_comm(m, s, 1, 1, 1024, "prefill", Layout(tp=1, pp=2)))
    pri = load_priors(s.chip.priors)
    hop = 1024 * m.d_model * 2.0 / (s.scaleout_bw * pri.eta_scaleout)
    assert t == pytest.approx(hop + max(pri.scaleout_latency_s, pri.scaleup_latency_s), rel=1e-6)


def test_a_tp_group_over_one_chip_domains_rings_over_their_nics():
    """TP2 over two Mac Studios: every hop of the ring is the 10 Gb/s Ethernet (it was min(no scale-up link, NIC) = 0:
    an infinite step)."""
    m, s = load_model("llama-3.1-8b"), load_system("mac-studio-m3-ultra")
    q = _comm(m, s, 2, 1, 1024, "prefill", Layout(tp=2), explain=True)
    pri = load_priors(s.chip.priors)
    assert float(_tp(q).inputs["bw_link"]) == pytest.approx(s.scaleout_bw * pri.eta_scaleout)
    assert 0 < float(q) < 60
