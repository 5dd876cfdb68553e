"""Pipelining (ledger rows P1–P9): when a rack boundary costs nothing, what stages save, hop latency.

    pp_ratio = 2 · k · L_stage / r_link        scale-up time over scale-out time at a stage boundary (T ~50:00)
    t_hop    = lat + B · D · b_act / (G · bw_out)   one activation hand-off between racks
"""

from __future__ import annotations

from ..derive import formula, given
from ..serve import memory_capacity, weight_bytes
from ..units import fmt
from .claim import NotComputable, REPRODUCED, Finding, claim, judge, need, unverifiable
from .common import ratio, ref, said_q, v

SECTION = "pipelining"


@formula("pp_ratio = 2 · k · L_stage / r_link", unit="")
def pp_boundary_ratio(k, L_stage, r_link):
    return 2 * k * L_stage / r_link


@formula("t_hop = lat + B · D · b_act / (G · bw_out)", unit="s")
def hop_time(lat, B, D, b_act, G, bw_out):
    return lat + B * D * b_act / (G * bw_out)


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
    need("tokenmath.placement", "pipeline placement, issue 3")
    raise NotComputable("tokenmath.placement exposes no per-token latency by stage count yet")


unverifiable("P3", SECTION, "a schedule definition (micro-batches = stages); P4 checks its consequence")


@claim("P4", SECTION)
def p4(ctx):
    need("tokenmath.placement", "pipeline placement, issue 3")
    raise NotComputable("tokenmath.placement exposes no per-stage memory split yet")


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
    q = hop_time(given("lat", pri.scaleout_latency_s, "s", pri.source_of("scaleout_latency_s")),
                 said_q(ctx, "P7", "B", "B", "seq"), given("D", r.model.d_model, "", r.model.source_of("d_model")),
                 said_q(ctx, "P7", "act_bytes", "b_act", "B"),
                 given("G", s.domain_chips, "chips", s.source_of("domain_chips")),
                 given("bw_out", s.scaleout_bw, "B/s", s.chip.source_of("scaleout_bandwidth_bytes_per_s")))
    said = ctx.said("P7")["said_value"]
    verdict, note = judge(q, said, 0.5, unit="s", what="one rack-to-rack hand-off",
                          wrong=f"an RDMA hop plus the activation transfer is {fmt(v(q), 's')}, so 4 stages add "
                                f"{fmt(4 * v(q), 's')} to a 20 ms step, not 10 ms" if said / v(q) > 10 else None)
    return Finding(q, "s", verdict, note, derivation=q.explain())


@claim("P8", SECTION)
def p8(ctx):
    need("tokenmath.training", "pipeline bubble, issue 6")
    raise NotComputable("tokenmath.training exposes no pipeline-bubble function yet")


unverifiable("P9", SECTION)
