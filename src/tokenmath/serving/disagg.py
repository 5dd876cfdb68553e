"""Prefill vs decode, and prefill/decode disaggregation for a workload (input I, output O, cache-hit rate h).

Each phase runs on its own pool of replicas (G_p and G_d chips) at its own batch, with step times
from the core roofline (`roofline.step`):
    prefill: B_p prompts of I tokens per step, T_p = B_p · I tokens; decode: B_d sequences at the
    mean context I + O/2, one token each. By default each batch is the smallest within 1 % of that
    phase's cheapest token among batches whose KV fits (the knee of its cost curve).

    c_in          = G_p · t_p / T_p                        chip-seconds per uncached input token
    c_out         = G_d · t_d / B_d                        chip-seconds per output token
    chip_s_p      = (1 − h) · I · c_in                     prefill chip-seconds per request (hits skip it)
    chip_s_d      = O · c_out                              decode chip-seconds per request
    prefill_to_decode_chips = chip_s_p / chip_s_d          pool sizes that keep both busy
    usd_request   = (chip_s_p + chip_s_d) · usd_per_chip_hour / 3600
    out_over_in   = c_out / c_in                           what the price ratio would be if prices followed
                                                           chip time (compare: published output/input)
    kv_transfer   = I · kv                                 bytes moved from the prefill to the decode pool
    t_transfer    = kv_transfer / (n_links · bw_link) + lat    its time over the link tier it crosses (n_links
                                                           chips sending in parallel; used by the simulator)

A cached prefix is assumed free to reuse (its holding cost belongs to the memory-tier analysis), and
the uncached part of a prompt is costed at the full prompt's per-token rate (its attention still
spans the whole prompt).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core import arch
from ..core.derive import Numbers, formula, lift, value_of
from ..core.errors import InputError
from ..core.records import Model, System
from ..core.roofline import collective_latency, step
from .serve import check_inputs, phase_time_intervals
from .sweep import balance_batch, compute_time_per_seq, kv_compute_ratio, kv_time_per_seq, memory_batch_limit, \
    roofline_inputs

__all__ = ["per_token_chip_s", "prefill_chip_s", "decode_chip_s", "chip_ratio", "request_usd", "Disagg",
           "disaggregate", "check_workload",
           "kv_transfer_time"]

_KNEE = 0.01  # default batches: the smallest within 1 % of the phase's cheapest token that fits


@formula("c = G · t_step / T", unit="s")
def per_token_chip_s(G, t_step, T):
    return G * t_step / T


@formula("chip_s_p = (1 − h) · I · c_in", unit="s")
def prefill_chip_s(h, I, c_in):
    return (1 - h) * I * c_in


@formula("chip_s_d = O · c_out", unit="s")
def decode_chip_s(O, c_out):
    return O * c_out


@formula("prefill_to_decode_chips = chip_s_p / chip_s_d", unit="")
def chip_ratio(chip_s_p, chip_s_d):
    return chip_s_p / chip_s_d


@formula("usd_request = (chip_s_p + chip_s_d) · usd_per_chip_hour / 3600", unit="USD")
def request_usd(chip_s_p, chip_s_d, usd_per_chip_hour):
    return (chip_s_p + chip_s_d) * usd_per_chip_hour / 3600


@formula("usd_per_mtok = c · usd_per_chip_hour / 3600 · 1e6", unit="USD")
def chip_s_to_usd_per_mtok(c, usd_per_chip_hour):
    return c * usd_per_chip_hour / 3600 * 1e6


@formula("out_over_in = c_out / c_in", unit="")
def cost_ratio(c_out, c_in):
    return c_out / c_in


@formula("kv_transfer = I · kv", unit="B")
def kv_transfer_bytes(I, kv):
    return I * kv


@formula("t_transfer = kv_transfer / (n_links · bw_link) + lat", unit="s")
def kv_transfer_time(kv_transfer, n_links, bw_link, lat):
    return kv_transfer / (n_links * bw_link) + lat


def kv_link(system: System, pri, G_p: int, G_d: int) -> tuple[float, float, bool, str]:
    """The link a prompt's KV crosses from a prefill worker of G_p chips to a decode worker of G_d: (bandwidth per chip,
    fixed cost, whether it leaves the scale-up domain, its source). The two workers leave one domain where they do
    not fit in it together; a transfer that leaves costs at least one inside it (roofline.collective_latency)."""
    crosses = G_p + G_d > system.domain_chips
    bw = (system.scaleout_bw or system.scaleup_bw) * pri.eta_scaleout if crosses else system.scaleup_bw * pri.eta_scaleup
    lat, lat_src = collective_latency(pri, crosses)
    return bw, lat, crosses, f"{system.file}: {'scale-out' if crosses else 'scale-up'} link × eta; lat: {lat_src}"


def check_workload(input_len, output_len, cache_hit) -> None:
    if not input_len >= 1 or not output_len >= 1:
        raise InputError(f"--input-len and --output-len must be ≥ 1 token (got {input_len}, {output_len})")
    if input_len > 1e8 or output_len > 1e8:
        raise InputError("--input-len/--output-len above 100M tokens are absurd")
    if not 0 <= cache_hit < 1:
        raise InputError(f"--cache-hit is a fraction in [0, 1) (got {cache_hit})")


@dataclass
class Disagg(Numbers):
    model: Model
    system: System
    input_len: float
    output_len: float
    cache_hit: float
    G_p: int
    G_d: int
    B_p: float
    B_d: float
    precision: str
    kv_dtype: str
    basis: str
    numbers: dict  # key -> Q or value

    def to_dict(self, derivations: bool = False) -> dict:
        out = {"model": self.model.name, "system": self.system.name, "input_len": self.input_len,
               "output_len": self.output_len, "cache_hit": self.cache_hit, "prefill_chips": self.G_p,
               "decode_chips": self.G_d, "prefill_batch": self.B_p, "decode_batch": self.B_d,
               "precision": self.precision, "kv_dtype": self.kv_dtype, "basis": self.basis}
        for k, q in self.numbers.items():
            x = value_of(q)
            out[k] = x.item() if isinstance(x, np.generic) else (float(x) if isinstance(x, np.ndarray) else x)
        if derivations:
            out["derivations"] = self.derivations()
        return out


def _default_batch(m, system, G, S, phase, precision, kv_dtype, basis) -> float:
    """The smallest batch within 1 % of the cheapest token of the phase, among batches whose KV fits."""
    inp = roofline_inputs(m, system, G, precision, kv_dtype)
    W_all = value_of(inp.N_total) * value_of(inp.b_w)
    B_mem = memory_batch_limit(G, value_of(inp.hbm), W_all, float(arch.kv_stored_bytes(m, S, kv_dtype)))
    if not B_mem >= 1:
        raise InputError(f"{m.name} on {G} × {system.chip.name}: the weights and one sequence's KV at {S:g} tokens "
                         "do not fit; use more chips or a shorter workload")
    B = np.unique(np.round(np.geomspace(1, min(B_mem, 1e7), 256)))
    st = step(m, system, G=G, B=B, S=S, phase=phase, precision=precision, kv_dtype=kv_dtype, basis=basis)
    c = np.asarray(st.v("t_step"), dtype=float) / np.asarray(st.v("tokens"), dtype=float)
    return float(B[np.flatnonzero(c <= c.min() * (1 + _KNEE))[0]])


def disaggregate(m: Model, system: System, *, input_len: float, output_len: float, cache_hit: float = 0.0,
                 G_prefill: int | None = None, G_decode: int | None = None, B_prefill: float | None = None,
                 B_decode: float | None = None, precision: str | None = None, kv_dtype: str | None = None,
                 basis: str = "prior", explain: bool = False) -> Disagg:
    """Cost per token of each phase, their ratio, the prefill:decode chip ratio and the cost per request."""
    check_workload(input_len, output_len, cache_hit)
    precision = precision or m.weight_dtype
    kv_dtype = kv_dtype or m.kv_dtype
    G_p = system.domain_chips if G_prefill is None else int(G_prefill)
    G_d = system.domain_chips if G_decode is None else int(G_decode)
    I, O = float(input_len), float(output_len)
    S_d = I + O / 2
    check_inputs(G=G_p, S=I, precision=precision, kv_dtype=kv_dtype, basis=basis)
    check_inputs(G=G_d, S=S_d)
    inp = roofline_inputs(m, system, G_p, precision, kv_dtype)
    if B_prefill is None:
        B_prefill = _default_batch(m, system, G_p, I, "prefill", precision, kv_dtype, basis)
    if B_decode is None:
        B_decode = _default_batch(m, system, G_d, S_d, "decode", precision, kv_dtype, basis)
    check_inputs(B=B_prefill)
    check_inputs(B=B_decode)
    kw = dict(precision=precision, kv_dtype=kv_dtype, basis=basis, explain=explain)
    pre = step(m, system, G=G_p, B=B_prefill, S=I, phase="prefill", **kw)
    dec = step(m, system, G=G_d, B=B_decode, S=S_d, phase="decode", **kw)
    g = lambda sym, v, unit="", src=None: lift(explain, sym, v, unit, src)  # noqa: E731
    c_in = per_token_chip_s(g("G", G_p, "chips", "given: prefill chips per replica"), pre.t_step, pre.tokens)
    c_out = per_token_chip_s(g("G", G_d, "chips", "given: decode chips per replica"), dec.t_step, dec.tokens)
    if explain:
        c_in, c_out = c_in.renamed("c_in"), c_out.renamed("c_out")
    p_chip = prefill_chip_s(g("h", cache_hit, "", "given: cache-hit rate"), g("I", I, "tok", "given"), c_in)
    d_chip = decode_chip_s(g("O", O, "tok", "given"), c_out)
    nums: dict = {
        "prefill.step_time_s": pre.t_step, "prefill.bound": pre.bound,
        "decode.step_time_s": dec.t_step, "decode.bound": dec.bound, "decode.context": S_d,
        "prefill.chip_s_per_token": c_in, "decode.chip_s_per_token": c_out,
        "out_over_in_cost_ratio": cost_ratio(c_out, c_in),
        "prefill_chip_s_per_request": p_chip, "decode_chip_s_per_request": d_chip,
        "prefill_to_decode_chips": chip_ratio(p_chip, d_chip),
        "kv_transfer_bytes": kv_transfer_bytes(g("I", I, "tok", "given"),
                                               g("kv", value_of(inp.kv), "B/tok", f"{m.file or m.name} ({kv_dtype})")),
    }
    out_bw = system.scaleout_bw
    nums["kv_transfer_s_per_nic"] = value_of(nums["kv_transfer_bytes"]) / out_bw if out_bw else None
    price = system.usd_per_chip_hour
    if price:
        pq = g("usd_per_chip_hour", price, "USD", system.price_source())
        nums["prefill.usd_per_mtok"] = chip_s_to_usd_per_mtok(c_in, pq)
        nums["decode.usd_per_mtok"] = chip_s_to_usd_per_mtok(c_out, pq)
        nums["usd_per_request"] = request_usd(p_chip, d_chip, pq)
    else:
        nums["prefill.usd_per_mtok"] = nums["decode.usd_per_mtok"] = nums["usd_per_request"] = None
    # the two-term view of decode at this context: is it past the KV crossover?
    t_kv1 = kv_time_per_seq(S_d, value_of(inp.kv), G_d, value_of(inp.W))
    kappa = kv_compute_ratio(t_kv1, compute_time_per_seq(value_of(inp.N_active), G_d, value_of(inp.F)))
    nums["decode.kappa"] = kappa
    nums["decode.balance_batch"] = balance_batch(value_of(inp.B_star), kappa)
    if basis == "prior":
        _intervals(nums, system, precision)
    return Disagg(m, system, I, O, float(cache_hit), G_p, G_d, float(B_prefill), float(B_decode), precision,
                  kv_dtype, basis, nums)


def _intervals(nums: dict, system: System, precision: str) -> None:
    """80 % intervals of each phase's times and costs from serve's residual groups (each ∝ the phase's step time);
    the request's cost spans the phases' ends summed, their misses taken as going the same way."""
    if not phase_time_intervals(nums, system, precision,
                                lambda ph: (f"{ph}.step_time_s", f"{ph}.chip_s_per_token", f"{ph}_chip_s_per_request",
                                            f"{ph}.usd_per_mtok"),
                                lambda ph: f"{ph}.interval_group"):
        return
    ends = [nums[f"{ph}_chip_s_per_request_interval"] for ph in ("prefill", "decode")]
    usd, chip_s = value_of(nums.get("usd_per_request")), sum(value_of(nums[f"{ph}_chip_s_per_request"])
                                                            for ph in ("prefill", "decode"))
    if usd is not None and chip_s > 0:
        nums["usd_per_request_interval"] = [float(usd) * sum(e[i] for e in ends) / chip_s for i in (0, 1)]
