"""Pipelining (ledger rows P1–P9): when a rack boundary costs nothing, what stages save, hop latency.

    pp_ratio = 2 · k · L_stage / r_link        scale-up time over scale-out time at a stage boundary (T ~50:00)
    M_min    = P · (t_step + t_pp) / t_step    micro-batches that keep every stage busy: a micro-batch's round
                                               trip (all P stage-times and the hops) over one stage-time
Latency, hop time and memory per chip by stage count come from `serving.placement.place`; the bubble
from `training`.
"""

from __future__ import annotations

from ..core import arch
from ..core.derive import formula, given
from ..serving.serve import memory_capacity, weight_bytes
from ..core.units import fmt
from .claim import IDENTITY, OFF, REPRODUCED, Finding, check_text, claim, judge, need, unverifiable
from .common import bstar, model_or_skip, ratio, ref, said_q, v

SECTION = "pipelining"


@formula("pp_ratio = 2 · k · L_stage / r_link", unit="")
def pp_boundary_ratio(k, L_stage, r_link):
    return 2 * k * L_stage / r_link


@formula("M_min = P · (t_step + t_pp) / t_step", unit="")
def microbatches_to_fill(P, t_step, t_pp):
    return P * (t_step + t_pp) / t_step


@claim("P1", SECTION)
def p1(ctx):
    r = ref(ctx)
    s = r.system
    k = given("k", r.model.moe.experts_per_token, "", r.model.source_of("moe"))
    q = pp_boundary_ratio(k, said_q(ctx, "P1", "L_stage", "L_stage"), said_q(ctx, "P1", "scaleout_ratio", "r_link"))
    threshold = ctx.said_input("P1", "threshold")
    r_cat = s.scaleup_bw / s.scaleout_bw
    q_cat = 2 * r.model.moe.experts_per_token * ctx.said_input("P1", "L_stage") / r_cat
    as_said = pp_boundary_ratio(given("k", ctx.said_input("R7", "experts_active"), "", "lecture (R7: '32 of 256')"), 1,
                                said_q(ctx, "P1", "scaleout_ratio", "r_link"))
    ok = v(q) >= threshold
    note = (f"with the config's k = {r.model.moe.experts_per_token} and the lecture's own 8× link gap, one layer per stage "
            f"gives {fmt(v(q))} ≥ {fmt(threshold)}: the boundary is free, as said (the lecture's '8' came from its "
            f"32-expert error, judged in E9). With the catalog's {fmt(r_cat)}× gap on {s.name} (E3) one layer gives "
            f"{fmt(q_cat)}; the boundary is free from L_stage ≥ r/(2k) = {fmt(r_cat / (2 * r.model.moe.experts_per_token))} layers")
    check = check_text(f"2·k·L_stage/r with the config's k and the lecture's L_stage = 1 and r = 8 with the claim's "
                       f"condition ≥ {fmt(threshold)}", "the condition itself", "a model routing to fewer than 4 "
                       "experts per token (k < r/2) needs more than one layer per stage")
    return Finding(q, "", REPRODUCED if ok else OFF, note, check=check, derivation=q.explain() + "\nas stated: " +
                   as_said.explain().splitlines()[1].strip() + f" = {fmt(v(as_said))}")


def stage_rows(ctx):
    """`place` for the reference model with tp 1, ep G per stage, at P = 1 and P = 4 stages (rack-to-rack hops)."""
    placement = need("tokenmath.serving.placement", "pipeline placement, issue 3")
    r = ref(ctx)
    S = ctx.lecture["reference"]["context"]
    B = round(v(bstar(r.model, r.system, r.precision)))

    def make():
        out = {}
        for pp in ctx.said_input("P2", "stages"):
            p = placement.place(r.model, r.system, B=B, S=S, precision=r.precision, tp=1, ep=r.G, pp=int(pp),
                                basis="prior")
            out[int(pp)] = p.row(p.requested)
        return out
    return ctx.memo(("stages", B, S), make), B, S


@claim("P2", SECTION)
def p2(ctx):
    r = ref(ctx)
    rows, B, S = stage_rows(ctx)
    one, many = rows[min(rows)], rows[max(rows)]
    P = max(rows)
    q = ratio(given("a", many["step_time_s"], "s", f"place: per-token time through {P} stages (stage steps + hops)"),
              given("b", one["step_time_s"], "s", "place: per-token time, one stage"))
    tol, _ = ctx.tolerance("P2")
    verdict, note = judge(q, ctx.said("P2")["said_value"], tol, what=f"per-token latency with {P} stages ÷ 1")
    note += (f": {r.model.name}, B = {fmt(B)} per stage at {fmt(S)} tokens, {r.G} chips per stage (`place`, prior basis): "
             f"{fmt(one['step_time_s'], 's')} at P = 1, {fmt(many['step_time_s'], 's')} at P = {P} of which "
             f"{fmt(many['t_pipeline_s'], 's')} is {P - 1} {many['pipeline_tier']} hops; tokens/s per chip "
             f"{fmt(one['tokens_per_s_per_chip'], 'tok/s')} → {fmt(many['tokens_per_s_per_chip'], 'tok/s')} (no time "
             f"saved); memory per chip {fmt(one['memory_per_chip_bytes'], 'B')} → {fmt(many['memory_per_chip_bytes'], 'B')} "
             "(capacity saved)")
    check = check_text(f"the per-token latency `place` gives with {P} pipeline stages (rack-to-rack hops) and with one, "
                       "at the same chips per stage", ctx.tolerance_text("P2"),
                       "a rack-to-rack hop of milliseconds (the lecture's own P7 guess) would add "
                       f"{P - 1} × that to every token")
    return Finding(q, "", verdict, note, derivation=q.explain(), check=check)


@claim("P3", SECTION)
def p3(ctx):
    rows, B, S = stage_rows(ctx)
    P = max(rows)
    row = rows[P]
    t_pp = row["t_pipeline_s"]
    q = microbatches_to_fill(given("P", P, "stages"), given("t_step", row["step_time_s"] - t_pp, "s",
                                                            "place: per-token time through the stages, hops excluded"),
                             given("t_pp", t_pp, "s", "place: pipeline hop time"))
    verdict, note = judge(q, P, ctx.tolerance("P3")[0], what=f"micro-batches that keep {P} stages busy")
    note += (f"; each of them is a batch of B = {fmt(B)} (≈ B*), so {fmt(P * B)} sequences are in flight (global batch "
             "= stages × micro-batch)")
    check = check_text(f"the micro-batches a {P}-stage decode ring needs so no stage idles, P·(t_step + t_pp)/t_step "
                       f"from `place`, with P", ctx.tolerance_text("P3"),
                       "hops comparable to a stage-time (milliseconds, as the lecture guessed in P7) need extra "
                       "micro-batches in flight")
    return Finding(q, "", verdict, note, derivation=q.explain(), check=check)


@claim("P4", SECTION)
def p4(ctx):
    placement = need("tokenmath.serving.placement", "pipeline placement, issue 3")
    m = model_or_skip(ctx, ctx.lecture["reference"]["frontier_model"])
    ep, B, S = (ctx.said_input("P4", k) for k in ("EP", "B", "S"))
    N_dense, N_routed = placement.split_params(m)
    kv_held = float(arch.kv_stored_bytes(m, S))
    b_w = arch.bytes_per(ctx.lecture["reference"]["precision"])
    rows, kv, w = [], [], []
    for pp in ctx.said_input("P4", "stages"):
        W = placement.weights_per_chip(given("N_dense", N_dense, "params", m.file), given("N_routed", N_routed, "params", m.file),
                                       given("b_w", b_w, "B", "reference precision"), given("tp", 1),
                                       said_q(ctx, "P4", "EP", "ep"), given("pp", pp))
        K = placement.kv_per_chip(given("pp", pp), said_q(ctx, "P4", "B", "B", "seq"),
                                  given("kv_held", kv_held, "B", f"{m.file}: KV held per sequence at S = {fmt(S)}"),
                                  said_q(ctx, "P4", "EP", "ep"), given("tp_kv", 1))
        w.append(v(W))
        kv.append(v(K))
        rows.append(f"P = {pp}: weights {fmt(v(W), 'B')}/GPU, KV {fmt(v(K), 'B')}/GPU")
    flat = max(kv) / min(kv) - 1 < 1e-9
    scales = all(abs(w[0] / wi - p) / p < 1e-9 for wi, p in zip(w, ctx.said_input("P4", "stages")))
    note = (f"{m.name} on EP = {fmt(ep)} with b = {fmt(B)} sequences per micro-batch at {fmt(S)} tokens: "
            + "; ".join(rows) + " — weights fall as 1/P, KV per GPU does not move (micro-batches = stages)")
    check = check_text("`placement.weights_per_chip` and `kv_per_chip` at P = 1, 2, 4, 8",
                       "weights ∝ 1/P and KV constant, to 1e-9", "only through a bug: with P micro-batches in flight "
                       "the P in the KV term cancels by construction")
    return Finding(given("kv_chip", kv[0], "B", "placement.kv_per_chip"), "B", IDENTITY if flat and scales else OFF,
                   note, derivation=K.explain() + "\n" + W.explain(max_depth=1), value_text=f"KV {fmt(kv[0], 'B')}/GPU at every P",
                   check=check)


@claim("P5", SECTION)
def p5(ctx):
    one_t = weight_bytes(said_q(ctx, "P5", "total_params", "N_total", "params"),
                         given("b_w", arch.bytes_per(ctx.lecture["reference"]["precision"]), "B", "reference precision"))
    s = ctx.system("gb200-nvl72")
    hbm = memory_capacity(given("G", s.domain_chips, "chips", s.source_of("domain_chips")),
                          given("hbm", s.chip.hbm_capacity_bytes, "B", s.chip.source_of("hbm_capacity_bytes")))
    host = (s.chip.host_memory_bytes or 0) * s.domain_chips
    verdict, note = judge(hbm, ctx.said("P5")["said_value"], ctx.tolerance("P5")[0], unit="B",
                          what="GB200 NVL72 HBM vs 'many tens of TB' (read as ≥ 20 TB)")
    note += (f"; 1T parameters = {fmt(v(one_t), 'B')} at FP8 ✓; 'tens of TB' holds only counting the Grace "
             f"LPDDR ({fmt(host, 'B')}), for {fmt(v(hbm) + host, 'B')} in all")
    check = check_text("GB200 NVL72's domain HBM (catalog) with 'many tens of TB' read as 20 TB",
                       ctx.tolerance_text("P5"), "a rack with ≥ 15 TB of HBM (GB300 NVL72's 20.7 TB reproduces it)")
    return Finding(hbm, "B", verdict, note, derivation=one_t.explain() + "\n" + hbm.explain(), check=check)


unverifiable("P6", SECTION)


@claim("P7", SECTION)
def p7(ctx):
    r = ref(ctx)
    s = r.system
    pri = ctx.priors(s.chip.priors)
    placement = need("tokenmath.serving.placement", "pipeline hop time, issue 3")
    q = placement.pipeline_hop_time(given("hops", 1), said_q(ctx, "P7", "B", "B", "seq"),
                                    given("D", r.model.d_model, "", r.model.source_of("d_model")),
                                    said_q(ctx, "P7", "act_bytes", "b_act", "B"),
                                    given("n_stage", s.domain_chips, "chips", s.source_of("domain_chips")),
                                    given("bw", s.scaleout_bw, "B/s", s.chip.source_of("scaleout_bandwidth_bytes_per_s")),
                                    given("lat", pri.scaleout_latency_s, "s", pri.source_of("scaleout_latency_s")))
    said = ctx.said("P7")["said_value"]
    verdict, note = judge(q, said, ctx.tolerance("P7")[0], unit="s", what="one rack-to-rack hand-off",
                          wrong=f"an RDMA hop plus the activation transfer is {fmt(v(q), 's')}, so 4 stages add "
                                f"{fmt(4 * v(q), 's')} to a 20 ms step, not 10 ms" if said / v(q) > 10 else None)
    check = check_text("the activation hand-off between racks (B × D × 2 B over the rack's NICs, plus the priors' "
                       "scale-out latency) with 'a few milliseconds'", ctx.tolerance_text("P7"),
                       "a scale-out latency prior of milliseconds (it is a sourced microsecond estimate)")
    return Finding(q, "s", verdict, note, derivation=q.explain(), check=check)


@claim("P8", SECTION)
def p8(ctx):
    training = need("tokenmath.training", "pipeline bubble, issue 6")
    pp = ctx.said_input("P8", "pp")
    qs = [training.pipeline_bubble(said_q(ctx, "P8", "pp", "pp"), given("v", 1, "", "no interleaving"),
                                   given("M", M, "", "micro-batches per step")) for M in ctx.said_input("P8", "microbatches")]
    vals = [v(q) for q in qs]
    shrinks = all(a > b for a, b in zip(vals, vals[1:]))
    note = (f"bubble (pp − 1)/(v·M + pp − 1) with pp = {pp}: " +
            ", ".join(f"M = {M} → {fmt(x * 100)} %" for M, x in zip(ctx.said_input("P8", "microbatches"), vals)) +
            " — more micro-batches (a bigger global batch) shrink it: the systems half. The convergence half "
            "(smaller batches train better per token) has no data in the catalog and is not checked")
    check = check_text("the pipeline bubble at 4, 16 and 64 micro-batches", "strictly shrinking",
                       "only through a bug: (pp − 1)/(M + pp − 1) falls with M by construction; the convergence half "
                       "is unchecked")
    return Finding(qs[0], "%", IDENTITY if shrinks else OFF, note, derivation="\n".join(q.explain() for q in qs),
                   check=check)


unverifiable("P9", SECTION)
