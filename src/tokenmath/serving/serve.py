"""What `tokenmath serve` answers: one replica's prefill and decode on G chips, priced and checked for fit.

    tokens_per_s  = T / t_step
    usd_per_mtok  = G · usd_per_chip_hour / 3600 · t_step / T · 1e6
    B*            = R · rho                          (spec: peaks only; Pope's "300 × sparsity")
    B*_prior      = B* · eta_flop / eta_bw           (the knee with efficiency priors)
    t_floor       = N_total · b_w / (G · W)          (every weight read once: no batch beats it)
    memory        = N_total · b_w + B · kv_held(S)   vs G · HBM capacity
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core import arch
from ..core.derive import Numbers, Q, formula, lift, nest, plain, value_of
from ..core.errors import InputError
from ..core.load import load_priors
from ..core.records import Model, Priors, System
from ..core.roofline import BASES, Step, hardware_ratio, latency_floor, optimal_batch, step
from ..core.units import PRECISION_BYTES

__all__ = ["ServeReport", "serve", "check_inputs", "tokens_per_s", "usd_per_mtok"]


@formula("tokens_per_s = T / t_step", unit="tok/s")
def tokens_per_s(T, t_step):
    return T / t_step


@formula("usd_per_mtok = G · usd_per_chip_hour / 3600 · t_step / T · 1e6", unit="USD")
def usd_per_mtok(G, usd_per_chip_hour, t_step, T):
    with np.errstate(divide="ignore", invalid="ignore"):  # a step with no tokens (empty prompt) costs ∞ per token
        return G * usd_per_chip_hour / 3600 * t_step / T * 1e6


@formula("B_star_prior = B_star · eta_flop / eta_bw", unit="seq")
def optimal_batch_prior(B_star, eta_flop, eta_bw):
    return B_star * eta_flop / eta_bw


@formula("mem_required = W_all + B · kv_held", unit="B")
def memory_required(W_all, B, kv_held):
    return W_all + B * kv_held


@formula("W_all = N_total · b_w", unit="B")
def weight_bytes(N_total, b_w):
    return N_total * b_w


@formula("mem_capacity = G · hbm", unit="B")
def memory_capacity(G, hbm):
    return G * hbm


def check_inputs(*, G=None, B=None, S=None, precision=None, kv_dtype=None, basis=None) -> None:
    """Refuse impossible or absurd values with one line each."""
    if G is not None and (np.any(np.asarray(G) < 1) or np.any(np.asarray(G) != np.floor(G))):
        raise InputError(f"--chips must be a whole number ≥ 1 (got {G})")
    if G is not None and np.any(np.asarray(G) > 1_000_000):
        raise InputError(f"--chips {G} is absurd (more than a million chips in one replica)")
    if B is not None and np.any(np.asarray(B) < 1):
        raise InputError(f"--batch must be ≥ 1 sequence (got {B})")
    if B is not None and np.any(np.asarray(B) > 1e9):
        raise InputError(f"--batch {B} is absurd (more than a billion sequences per step)")
    if S is not None and np.any(np.asarray(S) < 0):
        raise InputError(f"--context must be ≥ 0 tokens (got {S})")
    if S is not None and np.any(np.asarray(S) > 1e9):
        raise InputError(f"--context {S} is absurd (more than a billion tokens)")
    for name, p in (("--precision", precision), ("--kv-dtype", kv_dtype)):
        if p is not None and p not in PRECISION_BYTES:
            raise InputError(f"{name} {p!r} is not one of {', '.join(PRECISION_BYTES)}")
    if basis is not None and basis not in BASES:
        raise InputError(f"--basis must be one of {', '.join(BASES)} (got {basis!r})")


@dataclass
class ServeReport(Numbers):
    model: Model
    system: System
    G: int
    B: object
    S: object
    precision: str
    kv_dtype: str
    basis: str
    prefill: Step
    decode: Step
    numbers: dict  # key -> Q or value: everything the CLI prints

    @property
    def fits(self) -> bool:
        return bool(np.all(self.value("memory.fits")))

    def to_dict(self, derivations: bool = True) -> dict:
        """The JSON the CLI prints: nested keys as documented in the README."""
        out: dict = {
            "model": self.model.name, "system": self.system.name, "chips": self.G, "batch": plain(self.B),
            "context": plain(self.S), "precision": self.precision, "kv_dtype": self.kv_dtype, "basis": self.basis,
            **nest(self.numbers),
        }
        if derivations:
            out["derivations"] = self.derivations()
        return out



def serve(m: Model, system: System, *, G: int | None = None, B=128, S=4096, precision: str | None = None,
          kv_dtype: str | None = None, basis: str = "prior", priors: Priors | None = None,
          explain: bool = False) -> ServeReport:
    """Prefill and decode of B sequences at context S on G chips (default: one scale-up domain)."""
    G = system.domain_chips if G is None else G
    precision = precision or m.weight_dtype
    chip = system.chip
    pri = priors or load_priors(chip.priors)
    # on a calibrated profile (a local framework) the KV cache is kept in the model's own dtype
    local_kv = pri.formats is not None and precision in ("fp32", "bf16", "fp16")
    kv_dtype = kv_dtype or (precision if local_kv else m.kv_dtype)
    check_inputs(G=G, B=B, S=S, precision=precision, kv_dtype=kv_dtype, basis=basis)
    kw = dict(G=G, B=B, S=S, precision=precision, kv_dtype=kv_dtype, basis=basis, priors=pri, explain=explain)
    pre, dec = step(m, system, phase="prefill", **kw), step(m, system, phase="decode", **kw)
    g = lambda sym, v, unit="", src=None: lift(explain, sym, v, unit, src)  # noqa: E731
    Gq = g("G", G, "chips", "given")
    price = system.usd_per_chip_hour
    numbers: dict = {}
    for name, st in (("prefill", pre), ("decode", dec)):
        numbers[f"{name}.step_time_s"] = st.t_step
        numbers[f"{name}.tokens_per_s"] = tps = tokens_per_s(st.tokens, st.t_step)
        numbers[f"{name}.tokens_per_s_per_chip"] = tokens_per_s(st.tokens, st.t_step) / G if not explain else \
            Q("tokens_per_s_per_chip", value_of(tps) / G, "tok/s", "tokens_per_s_per_chip = tokens_per_s / G",
              {"tokens_per_s": tps, "G": Gq})
        numbers[f"{name}.usd_per_mtok"] = (
            usd_per_mtok(Gq, g("usd_per_chip_hour", price, "USD", system.price_source()), st.t_step, st.tokens)
            if price else None)
        numbers[f"{name}.bound"] = st.bound
        for term in ("t_math", "t_weights", "t_kv", "t_comm", "t_overhead"):
            numbers[f"{name}.{term}_s"] = getattr(st, term)
        if "interval" in st.extras:  # a calibrated profile: its measurement spread (÷/× 2 when extrapolated)
            numbers[f"{name}.step_time_low_s"], numbers[f"{name}.step_time_high_s"] = st.extras["interval"]
        numbers[f"{name}.basis"] = basis
    b_w = arch.bytes_per(precision)
    pc = arch.param_counts(m, explain)
    peak_src = chip.source_of(f"peak_flop_per_s.{chip.peak_precision(precision)}")
    F = g("F", chip.peak(precision), "FLOP/s", peak_src)
    W = g("W", chip.hbm_bandwidth_bytes_per_s, "B/s", chip.source_of("hbm_bandwidth_bytes_per_s"))
    bq = g("b_w", b_w, "B", f"{precision} weights")
    R = hardware_ratio(F, W, bq)
    Bs = optimal_batch(R, pc.rho)
    numbers["hardware_ratio"] = R
    numbers["rho"] = pc.rho
    numbers["optimal_batch"] = Bs
    numbers["optimal_batch_prior"] = optimal_batch_prior(Bs, g("eta_flop", pri.eta_flop, "", pri.source_of("eta_flop")),
                                                         g("eta_bw", pri.eta_bw, "", pri.source_of("eta_bw")))
    numbers["latency_floor_s"] = latency_floor(pc.total, bq, Gq, W)
    numbers["latency_floor_basis"] = "spec"
    W_all = weight_bytes(pc.total, bq)
    kv_held = g("kv_held", arch.kv_stored_bytes(m, S, kv_dtype), "B",
                f"{m.file or m.name}: KV bytes held per sequence at context S ({kv_dtype})")
    req = memory_required(W_all, g("B", B, "seq", "given"), kv_held)
    cap = memory_capacity(Gq, g("hbm", chip.hbm_capacity_bytes, "B", chip.source_of("hbm_capacity_bytes")))
    numbers["memory.required_bytes"] = req
    numbers["memory.capacity_bytes"] = cap
    numbers["memory.weights_bytes"] = W_all
    numbers["memory.kv_bytes"] = value_of(req) - value_of(W_all)
    numbers["memory.fits"] = value_of(req) <= value_of(cap)
    numbers["kv_bytes_per_token"] = arch.kv_bytes_per_token(m, kv_dtype, explain)
    return ServeReport(m, system, G, B, S, precision, kv_dtype, basis, pre, dec, numbers)
