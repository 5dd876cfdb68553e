"""Pipelining (ledger rows P1–P9): when a rack boundary costs nothing, what stages save, hop latency.

    pp_ratio = 2 · k · L_stage / r_link        scale-up time over scale-out time at a stage boundary (T ~50:00)
Hop time, stage memory and the bubble come from `placement` (issue 3) and `training` (issue 6).
"""

from __future__ import annotations

from ..core import arch
from ..core.derive import formula, given
from ..serving.serve import memory_capacity, weight_bytes
from ..core.units import fmt
from .claim import OFF, REPRODUCED, Finding, NotComputable, claim, judge, need, unverifiable
from .common import model_or_skip, ratio, ref, said_q, v

SECTION = "pipelining"


@formula("pp_ratio = 2 · k · L_stage / r_link", unit="")
def pp_boundary_ratio(k, L_stage, r_link):
    return 2 * k * L_stage / r_link


@claim("P1", SECTION)
def p1(ctx):
    r = ref(ctx)
    s = r.system
    r_link = ratio(given("a", s.scaleup_bw, "B/s", s.chip.source_of("scaleup_bandwidth_bytes_per_s")),
                   given("b", s.scaleout_bw, "B/s", s.chip.source_of("scaleout_bandwidth_bytes_per_s"))).renamed("r_link")
    k = given("k", r.model.moe.experts_per_token, "", r.model.source_of("moe"))
    q = pp_boundary_ratio(k, said_q(ctx, "P1", "L_stage", "L_stage"), r_link)
    as_said = pp_boundary_ratio(given("k", 32, "", "lecture (R7: '32 of 256')"), 1,
                                said_q(ctx, "P1", "scaleout_ratio", "r_link"))
    need_layers = v(r_link) / (2 * r.model.moe.experts_per_token)
    verdict, note = judge(q, ctx.said("P1")["said_value"], 0.25, what="boundary ratio with one layer per stage",
                          wrong=f"with k = {r.model.moe.experts_per_token} (config) and the catalog's "
                                f"{fmt(v(r_link))}× scale-up/scale-out gap on {s.name}, one layer per stage gives "
                                f"{fmt(v(q))}; the boundary is free from L_stage ≥ r/(2k) = {fmt(need_layers)} layers")
    return Finding(q, "", verdict, note, derivation=q.explain() + "\nas stated: " +
                   as_said.explain().splitlines()[1].strip() + f" = {fmt(v(as_said))}")


@claim("P2", SECTION)
def p2(ctx):
    need("tokenmath.serving.placement", "pipeline placement, issue 3")
    raise NotComputable("tokenmath.serving.placement exposes no per-token latency by stage count yet")


unverifiable("P3", SECTION, "a schedule definition (micro-batches = stages); P4 checks its consequence")


@claim("P4", SECTION)
def p4(ctx):
    placement = need("tokenmath.serving.placement", "pipeline placement, issue 3")
    m = model_or_skip(ctx, ctx.lecture["reference"]["frontier_model"])
    ep, B, S = (ctx.said_input("P4", k) for k in ("EP", "B", "S"))
    N_dense, N_routed = placement.split_params(m)
    kv_held = float(arch.kv_stored_bytes(m, S))
    rows, kv, w = [], [], []
    for pp in ctx.said_input("P4", "stages"):
        W = placement.weights_per_chip(given("N_dense", N_dense, "params", m.file), given("N_routed", N_routed, "params", m.file),
                                       given("b_w", 1.0, "B", "fp8 weights"), given("tp", 1), said_q(ctx, "P4", "EP", "ep"),
                                       given("pp", pp))
        K = placement.kv_per_chip(given("pp", pp), said_q(ctx, "P4", "B", "B", "seq"),
                                  given("kv_held", kv_held, "B", f"{m.file}: KV held per sequence at S = {fmt(S)}"),
                                  said_q(ctx, "P4", "EP", "ep"), given("tp_kv", 1))
        w.append(v(W))
        kv.append(v(K))
        rows.append(f"P = {pp}: weights {fmt(v(W), 'B')}/GPU, KV {fmt(v(K), 'B')}/GPU")
    flat = max(kv) / min(kv) - 1 < 1e-9
    scales = all(abs(w[0] / wi - p) / p < 1e-9 for wi, p in zip(w, ctx.said_input("P4", "stages")))
    note = (f"{m.name} FP8 on EP = {fmt(ep)} with b = {fmt(B)} sequences per micro-batch at {fmt(S)} tokens: "
            + "; ".join(rows) + " — weights fall as 1/P, KV per GPU does not move (micro-batches = stages)")
    return Finding(given("kv_chip", kv[0], "B", "placement.kv_per_chip"), "B", REPRODUCED if flat and scales else OFF,
                   note, derivation=K.explain() + "\n" + W.explain(max_depth=1), value_text=f"KV {fmt(kv[0], 'B')}/GPU at every P")


@claim("P5", SECTION)
def p5(ctx):
    r = ref(ctx)
    one_t = weight_bytes(said_q(ctx, "P5", "total_params", "N_total", "params"), given("b_w", 1.0, "B", "fp8 weights"))
    s = ctx.system("gb200-nvl72")
    hbm = memory_capacity(given("G", s.domain_chips, "chips", s.source_of("domain_chips")),
                          given("hbm", s.chip.hbm_capacity_bytes, "B", s.chip.source_of("hbm_capacity_bytes")))
    host = (s.chip.host_memory_bytes or 0) * s.domain_chips
    verdict, note = judge(hbm, ctx.said("P5")["said_value"], 0.25, unit="B",
                          what="GB200 NVL72 HBM vs 'many tens of TB' (read as ≥ 20 TB)")
    note += (f"; 1T parameters = {fmt(v(one_t), 'B')} at FP8 ✓; 'tens of TB' holds only counting the Grace "
             f"LPDDR ({fmt(host, 'B')}), for {fmt(v(hbm) + host, 'B')} in all")
    del r
    return Finding(hbm, "B", verdict, note, derivation=one_t.explain() + "\n" + hbm.explain())


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
    verdict, note = judge(q, said, 0.5, unit="s", what="one rack-to-rack hand-off",
                          wrong=f"an RDMA hop plus the activation transfer is {fmt(v(q), 's')}, so 4 stages add "
                                f"{fmt(4 * v(q), 's')} to a 20 ms step, not 10 ms" if said / v(q) > 10 else None)
    return Finding(q, "s", verdict, note, derivation=q.explain())


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
            " — more micro-batches (a bigger global batch) shrink it, which is the convergence-vs-systems tension")
    return Finding(qs[0], "%", REPRODUCED if shrinks else OFF, note, derivation="\n".join(q.explain() for q in qs))


unverifiable("P9", SECTION)
