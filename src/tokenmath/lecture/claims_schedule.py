"""The departing-train schedule (ledger rows T1–T6): HBM drain time, queueing, throughput per deployment.

    t_drain, worst latency, throughput              (roofline.drain_time, batching.worst_latency, serve.tokens_per_s)
    tok_per_s    = tokens_per_month / (days · day_s)
"""

from __future__ import annotations

from ..core.derive import formula, given
from ..core.units import fmt, parse_quantity
from .claim import Finding, claim, judge, need, unverifiable
from ..core.roofline import drain_time
from ..serving.serve import tokens_per_s
from .common import ratio, said_q, v

SECTION = "schedule"
DAY_S = parse_quantity("1 day", "s")


@formula("tok_per_s = tokens_per_month / (days · day_s)", unit="tok/s")
def monthly_to_rate(tokens_per_month, days, day_s):
    return tokens_per_month / (days * day_s)


def chip_drain(ctx, name: str):
    c = ctx.chip(name)
    return drain_time(given("hbm", c.hbm_capacity_bytes, "B", c.source_of("hbm_capacity_bytes")),
                      given("W", c.hbm_bandwidth_bytes_per_s, "B/s", c.source_of("hbm_bandwidth_bytes_per_s")))


@claim("T1", SECTION)
def t1(ctx):
    rubin = chip_drain(ctx, "vr200")
    as_said = drain_time(said_q(ctx, "T1", "hbm_capacity_bytes", "hbm", "B"),
                         said_q(ctx, "T1", "hbm_bandwidth_bytes_per_s", "W", "B/s"))
    every = {n: v(chip_drain(ctx, n)) for n in ctx.names("chip")}
    lo, hi = min(every, key=every.get), max(every, key=every.get)
    verdict, note = judge(rubin, ctx.said("T1")["said_value"], 0.15, unit="s", what="Rubin (vr200) drain")
    note += (f"; the lecture's own inputs give {fmt(v(as_said), 's')}; across the catalog drain times span "
             f"{fmt(every[lo], 's')} ({lo}) to {fmt(every[hi], 's')} ({hi}), so '15–20 ms, stable' is loose. "
             f"Drain time is not the weight floor: it equals the step only when HBM is full of weights and KV")
    deriv = (rubin.explain() + "\nas stated: " + as_said.explain().splitlines()[1].strip() + f" = {fmt(v(as_said), 's')}\n"
             + "\n".join(f"{n}: {fmt(t, 's')}" for n, t in sorted(every.items(), key=lambda kv: kv[1])))
    return Finding(rubin, "s", verdict, note, derivation=deriv, plots=["hardware_ratio"])


unverifiable("T2", SECTION, "a design argument (read each byte of HBM once per step); no quantity to compare")


@claim("T3", SECTION)
def t3(ctx):
    batching = need("tokenmath.serving.batching", "fixed-cadence batching, issue 3")
    step_s = said_q(ctx, "T3", "step_s", "t_step", "s")
    q = batching.worst_latency(step_s)
    sim = batching.simulate_cadence(v(step_s), 100 / v(step_s), n=20_000, seed=1)
    verdict, note = judge(q, ctx.said("T3")["said_value"], 0.02, unit="s", what="worst-case latency")
    note += (f"; a Poisson simulation (20,000 arrivals, trains every {fmt(v(step_s), 's')}) gives worst "
             f"{fmt(sim['worst_latency_s'], 's')} and mean {fmt(sim['mean_latency_s'], 's')} (= 1.5 steps)")
    return Finding(q, "s", verdict, note, derivation=q.explain())


@claim("T4", SECTION)
def t4(ctx):
    B = said_q(ctx, "T4", "B", "B", "tok")
    t = chip_drain(ctx, "vr200").renamed("t_step")
    q = tokens_per_s(B, t)
    verdict, note = judge(q, ctx.said("T4")["said_value"], 0.25, unit="tok/s",
                          what="B / t_step with t_step = Rubin drain")
    note += (" — the arithmetic holds, but B = 2,000 is not R7's 2,400 (nor the corrected B*), and a 15–20 ms step "
             "is a KV-bound step: at B* the weight-only step is the latency floor (R4), far shorter")
    return Finding(q, "tok/s", verdict, note, derivation=q.explain())


@claim("T5", SECTION)
def t5(ctx):
    said = ctx.said("T5")
    per = said_q(ctx, "T5", "deployment_tok_per_s", "b", "tok/s")
    days = said_q(ctx, "T5", "days_per_month", "days")
    lines, last = [], None
    for row in said["google_monthly_tokens"]:
        rate = monthly_to_rate(given("tokens_per_month", float(row["value"]), "tok", row.get("source") or "lecture file"), days,
                               given("day_s", DAY_S, "s", "86,400 s per day"))
        last = ratio(rate.renamed("a"), per)
        lines.append(f"{row['label']}: {fmt(v(rate), 'tok/s')} → 1/{fmt(v(last))} of Google ({row.get('source', '')})")
    verdict, note = judge(last, said["said_value"], 0.5, what="Google's latest catalogued volume ÷ 128k tok/s")
    note += "; 'hundreds of millions of tokens/s' is right for 2025"
    return Finding(last, "", verdict, note, derivation=last.explain() + "\n" + "\n".join(lines),
                   value_text=f"1/{fmt(v(last))}")


unverifiable("T6", SECTION)
