"""Mixture-of-experts on racks (ledger rows S1–S3, E1–E10): sparsity, experts per GPU, scale-up vs
scale-out, what a rack holds.

    experts_per_chip = E / G
    f_out            = 1 − domain / EP              (roofline._comm_time: EP tokens leaving the domain)
    mem_capacity     = G · hbm                      (serve.memory_capacity)
"""

from __future__ import annotations

from ..core import arch
from ..core.derive import formula, given
from ..core.roofline import Layout, step
from ..serving.serve import memory_capacity, memory_required, weight_bytes
from ..core.units import fmt
from .claim import NotComputable, Finding, claim, judge, unverifiable
from .common import model_or_skip, ratio, ref, said_q, v

SECTION = "moe"


@formula("experts_per_chip = E / G", unit="")
def experts_per_chip(E, G):
    return E / G


@claim("S1", SECTION)
def s1(ctx):
    q = ratio(said_q(ctx, "S1", "dense_equivalent_params", "a", "params"),
              said_q(ctx, "S1", "active_params", "b", "params"))
    verdict, note = judge(q, ctx.said("S1")["said_value"], 0.15, what="dense-equivalent ÷ activated")
    note += (f": {fmt(ctx.said_input('S1', 'n_experts'))} experts buy ≈{fmt(v(q))}× dense-equivalent size — "
             "'64× the experts for ≈3.5× the quality-equivalent', not the reverse (seed 002)")
    return Finding(q, "", verdict, note, derivation=q.explain())


unverifiable("S2", SECTION, "qualitative (B* ∝ rho and weight bytes ∝ N_total are rows R7 and E7)")
unverifiable("S3", SECTION)


@claim("E1", SECTION)
def e1(ctx):
    r = ref(ctx)
    moe = r.model.moe
    q = experts_per_chip(given("E", moe.n_routed_experts, "", r.model.source_of("moe")),
                         said_q(ctx, "E1", "G", "G", "chips"))
    verdict, note = judge(q, ctx.said("E1")["said_value"], 1e-9, what="routed experts per GPU")
    note += "; DeepSeek itself decodes on EP144 (2 routed + 1 shared per GPU) and prefills on EP32"
    return Finding(q, "", verdict, note, derivation=q.explain())


unverifiable("E2", SECTION, "structural: the catalog holds no switch topology (hop counts)")


@claim("E3", SECTION)
def e3(ctx):
    lines, qs = [], {}
    for name in ("hgx-h100", "gb200-nvl72", "gb300-nvl72", "vr200-nvl144"):
        s = ctx.system(name)
        if not s.scaleout_bw:
            continue
        qs[name] = ratio(given("a", s.scaleup_bw, "B/s", s.chip.source_of("scaleup_bandwidth_bytes_per_s")),
                         given("b", s.scaleout_bw, "B/s", s.chip.source_of("scaleout_bandwidth_bytes_per_s")))
        lines.append(f"{name}: {fmt(s.scaleup_bw, 'B/s')} / {fmt(s.scaleout_bw, 'B/s')} = {fmt(v(qs[name]))}×")
    main = qs[ref(ctx).system.name]
    verdict, note = judge(main, ctx.said("E3")["said_value"], 0.25, what=f"{ref(ctx).system.name} scale-up ÷ scale-out per GPU")
    span = sorted(v(q) for q in qs.values())
    note += f"; across racks in the catalog {fmt(span[0])}–{fmt(span[-1])}× (NIC generation decides)"
    return Finding(main, "", verdict, note, derivation=main.explain() + "\n" + "\n".join(lines))


@claim("E4", SECTION)
def e4(ctx):
    r = ref(ctx)
    n = int(ctx.said_input("E4", "n_domains"))
    dom = r.system.domain_chips
    st = step(r.model, r.system, G=n * dom, B=1024, S=0, precision=r.precision, layout=Layout(tp=1, ep=n * dom),
              explain=True)
    f_out = st.t_comm.inputs.get("f_out") if hasattr(st.t_comm, "inputs") else None
    if f_out is None:
        raise NotComputable("the roofline's expert-parallel term did not expose f_out")
    verdict, note = judge(f_out, ctx.said("E4")["said_value"], 1e-9,
                          what=f"share of all-to-all traffic leaving the rack with EP over {n} racks")
    note += "; that share rides the scale-out NICs (row E3), so one rack bounds an expert layer"
    return Finding(f_out, "", verdict, note, derivation=f"f_out = 1 − domain/EP = 1 − {dom}/{n * dom} "
                                                        f"(roofline expert-parallel all-to-all, {r.system.name})")


unverifiable("E5", SECTION)


@claim("E6", SECTION)
def e6(ctx):
    hop = ctx.system(ctx.said_input("E6", "hopper_system"))
    bw = ctx.system(ctx.said_input("E6", "blackwell_system"))
    q = ratio(given("a", bw.domain_chips, "chips", bw.source_of("domain_chips")),
              given("b", hop.domain_chips, "chips", hop.source_of("domain_chips")))
    verdict, note = judge(q, ctx.said("E6")["said_value"], 1e-9, what="Hopper → Blackwell scale-up domain")
    note += (" (8 → 72 is 9×, not the '4×' seed 000 wrote); Rubin Ultra NVL576 (576 dies = 144 packages, 4× "
             "Blackwell's dies) is not in the catalog, so the 'genuine 4×' is not checked here")
    return Finding(q, "", verdict, note, derivation=q.explain())


@claim("E7", SECTION)
def e7(ctx):
    lines, caps = [], {}
    for name in ("hgx-h100", "gb200-nvl72", "gb300-nvl72"):
        s = ctx.system(name)
        caps[name] = memory_capacity(given("G", s.domain_chips, "chips", s.source_of("domain_chips")),
                                     given("hbm", s.chip.hbm_capacity_bytes, "B", s.chip.source_of("hbm_capacity_bytes")))
        lines.append(f"{name}: {caps[name].explain().splitlines()[1].strip()} = {fmt(v(caps[name]), 'B')}")
    verdict, note = judge(caps["hgx-h100"], ctx.said("E7")["said_value"], 0.02, unit="B", what="HGX H100 domain HBM")
    bl = [v(caps["gb200-nvl72"]), v(caps["gb300-nvl72"])]
    note += f"; Blackwell racks {fmt(bl[0], 'B')} and {fmt(bl[1], 'B')} (the lecture: 10–20 TB)"
    try:
        m = model_or_skip(ctx, ctx.lecture["reference"]["frontier_model"])
        B, S = ctx.said_input("E7", "B"), ctx.said_input("E7", "S")
        for name in ("hgx-h100", "gb300-nvl72"):
            s = ctx.system(name)
            W_all = weight_bytes(arch.param_counts(m).total, arch.bytes_per("fp8"))
            need_b = memory_required(W_all, B, float(arch.kv_stored_bytes(m, S)))
            fits = need_b <= v(caps[name])
            lines.append(f"{m.name} FP8 with B = {fmt(B)}, S = {fmt(S)}: needs {fmt(need_b, 'B')} on {name} "
                         f"({fmt(v(caps[name]), 'B')}) → {'fits' if fits else 'does not fit'}")
    except NotComputable as e:
        lines.append(f"5T fit not checked: {e}")
    return Finding(caps["hgx-h100"], "B", verdict, note, derivation="\n".join(lines), plots=["domain_capacity"])


unverifiable("E8", SECTION)


@claim("E9", SECTION)
def e9(ctx):
    m = ref(ctx).model
    k = given("k", m.moe.experts_per_token, "experts", m.source_of("moe"))
    verdict, note = judge(k, ctx.said("E9")["said_value"], 1e-9, what="routed experts per token",
                          wrong=f"DeepSeek-V3 routes each token to {m.moe.experts_per_token} of "
                                f"{m.moe.n_routed_experts} experts plus {m.moe.n_shared_experts} shared")
    return Finding(k, "", verdict, note, derivation=f"k = num_experts_per_tok = {m.moe.experts_per_token} "
                                                     f"({m.source_of('moe')})")


unverifiable("E10", SECTION)
