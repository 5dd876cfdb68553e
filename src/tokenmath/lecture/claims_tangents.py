"""Metadata and Pope's written work (ledger rows B1–B2, W1–W3)."""

from __future__ import annotations

from ..core import arch
from ..core.derive import given
from ..core.roofline import hardware_ratio, latency_floor
from ..core.units import fmt
from .claim import OFF, REPRODUCED, Finding, claim, judge, unverifiable
from .common import model_or_skip, said_q, v

SECTION = "tangents"

unverifiable("B1", SECTION)
unverifiable("B2", SECTION)


@claim("W1", SECTION)
def w1(ctx):
    m = model_or_skip(ctx, ctx.said_input("W1", "model"))
    s = ctx.system(ctx.said_input("W1", "system"))
    prec = ctx.said_input("W1", "precision")
    q = latency_floor(arch.param_counts(m, explain=True).total, given("b_w", arch.bytes_per(prec), "B", f"{prec} weights"),
                      said_q(ctx, "W1", "G", "G", "chips"),
                      given("W", s.chip.hbm_bandwidth_bytes_per_s, "B/s", s.chip.source_of("hbm_bandwidth_bytes_per_s")))
    said = ctx.said("W1")["said_value"]
    ok = v(q) <= said
    note = (f"the weight-read floor {fmt(v(q), 's')} on {ctx.said_input('W1', 'G')} × {s.chip.name} is below the "
            f"measured {fmt(said, 's')}/token ({fmt(said / v(q))}× above the bound), as a bound must be")
    return Finding(q, "s", REPRODUCED if ok else OFF, note, derivation=q.explain(max_depth=1))


@claim("W2", SECTION)
def w2(ctx):
    out = {}
    for name in ("h100-sxm", "tpu-v5e"):
        c = ctx.chip(name)
        out[name] = hardware_ratio(
            given("F", c.peak("bf16"), "FLOP/s", c.source_of("peak_flop_per_s.bf16")),
            given("W", c.hbm_bandwidth_bytes_per_s, "B/s", c.source_of("hbm_bandwidth_bytes_per_s")),
            given("b_w", 2.0, "B", "bf16"))
    verdict, note = judge(out["h100-sxm"], ctx.said("W2")["said_value"], 0.02, what="H100 R")
    v5e = ctx.said_input("W2", "v5e_said")
    note += f"; TPU v5e {fmt(v(out['tpu-v5e']))} vs {fmt(v5e)}"
    if abs(v(out["tpu-v5e"]) / v5e - 1) > 0.02:
        verdict = OFF
    return Finding(out["h100-sxm"], "", verdict, note,
                   derivation="\n".join(f"{n}: {q.explain().splitlines()[1].strip()} = {fmt(v(q))}" for n, q in out.items()))


unverifiable("W3", SECTION)
