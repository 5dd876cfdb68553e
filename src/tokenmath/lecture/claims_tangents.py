"""Metadata and Pope's written work (ledger rows B1–B2, W1–W3)."""

from __future__ import annotations

from ..core import arch
from ..core.derive import given
from ..core.roofline import hardware_ratio, latency_floor, step
from ..core.units import fmt
from .claim import OFF, Finding, check_text, claim, judge, unverifiable
from .common import model_or_skip, said_q, v

SECTION = "tangents"

unverifiable("B1", SECTION)
unverifiable("B2", SECTION)


@claim("W1", SECTION)
def w1(ctx):
    m = model_or_skip(ctx, ctx.said_input("W1", "model"))
    s = ctx.system(ctx.said_input("W1", "system"))
    prec = ctx.said_input("W1", "precision")
    G, B, S = (int(ctx.said_input("W1", k)) for k in ("G", "B", "S"))
    fl = latency_floor(arch.param_counts(m, explain=True).total, given("b_w", arch.bytes_per(prec), "B", f"{prec} weights"),
                       said_q(ctx, "W1", "G", "G", "chips"),
                       given("W", s.chip.hbm_bandwidth_bytes_per_s, "B/s", s.chip.source_of("hbm_bandwidth_bytes_per_s")))
    st = step(m, s, G=G, B=B, S=S, phase="decode", precision=prec, basis="prior", priors=ctx.priors(s.chip.priors),
              explain=True)
    said = ctx.said("W1")["said_value"]
    verdict, note = judge(st.t_step, said, ctx.tolerance("W1")[0], unit="s",
                          what=f"predicted decode step of {m.name} on {G} × {s.chip.name} ({prec}, B = {B}, S = {fmt(S)}, "
                               "priors)")
    note += (f"; the spec floor (weights read once) is {fmt(v(fl), 's')}, {fmt(said / v(fl))}× below the measurement — "
             f"the priors ({s.chip.priors}) explain {fmt(v(st.t_step) / v(fl))}× of it")
    check = check_text(f"the roofline's decode step with the catalog's efficiency priors for {m.name} on {G} × "
                       f"{s.chip.name} with [P22]'s measured 29 ms/token", ctx.tolerance_text("W1"),
                       "priors (HBM efficiency, per-step overhead, ICI collectives) that miss TPU v4's 2D weight-"
                       "stationary layout: the prediction moves with them")
    return Finding(st.t_step, "s", verdict, note, derivation=st.t_step.explain(max_depth=1) + "\n" + fl.explain(),
                   check=check)


@claim("W2", SECTION)
def w2(ctx):
    out = {}
    for name in ("h100-sxm", "tpu-v5e"):
        c = ctx.chip(name)
        out[name] = hardware_ratio(
            given("F", c.peak("bf16"), "FLOP/s", c.source_of("peak_flop_per_s.bf16")),
            given("W", c.hbm_bandwidth_bytes_per_s, "B/s", c.source_of("hbm_bandwidth_bytes_per_s")),
            given("b_w", 2.0, "B", "bf16"))
    tol, _ = ctx.tolerance("W2")
    verdict, note = judge(out["h100-sxm"], ctx.said("W2")["said_value"], tol, what="H100 R")
    v5e = ctx.said_input("W2", "v5e_said")
    note += f"; TPU v5e {fmt(v(out['tpu-v5e']))} vs {fmt(v5e)}"
    if abs(v(out["tpu-v5e"]) / v5e - 1) > tol:
        verdict = OFF
    check = check_text("R = F/(2·W/b_w) at BF16 from the catalog's H100 and TPU v5e with the scaling-book's 295 and 240",
                       ctx.tolerance_text("W2") + ", both", "a catalog peak or bandwidth other than the scaling-book's")
    return Finding(out["h100-sxm"], "", verdict, note, check=check,
                   derivation="\n".join(f"{n}: {q.explain().splitlines()[1].strip()} = {fmt(v(q))}" for n, q in out.items()))


unverifiable("W3", SECTION)
