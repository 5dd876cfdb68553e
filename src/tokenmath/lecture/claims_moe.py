"""Mixture-of-experts on racks (ledger rows S1–S3, E1–E10): sparsity, experts per GPU, scale-up vs
scale-out, what a rack holds, who had big scale-up domains first, whether tensor parallelism pays.

    experts_per_chip = E / G
    rho_max          = M / (N_active · b_w + R · kv_seq)   sparsity at which weights + B*·kv_seq fill HBM M (S2):
                                                          weights = rho · N_active · b_w, B* = R · rho
    f_out            = 1 − domain / EP                     (roofline._comm_time: EP tokens leaving the domain)
    mem_capacity     = G · hbm                             (serve.memory_capacity)
"""

from __future__ import annotations

import numpy as np

from ..core import arch
from ..core.derive import formula, given
from ..core.roofline import Layout, hardware_ratio, step
from ..serving.serve import memory_capacity, memory_required, weight_bytes
from ..core.units import fmt
from .claim import IDENTITY, OFF, REPRODUCED, Finding, NotComputable, check_text, claim, judge, need
from .claim import unverifiable
from .common import bstar, chip_F, chip_W, model_or_skip, ratio, ref, said_q, spec_step, v

SECTION = "moe"


@formula("experts_per_chip = E / G", unit="")
def experts_per_chip(E, G):
    return E / G


@formula("rho_max = M / (N_active · b_w + R · kv_seq)", unit="")
def sparsity_capacity_limit(M, N_active, b_w, R, kv_seq):
    return M / (N_active * b_w + R * kv_seq)


@claim("S1", SECTION)
def s1(ctx):
    q = ratio(said_q(ctx, "S1", "dense_equivalent_params", "a", "params"),
              said_q(ctx, "S1", "active_params", "b", "params"))
    verdict, note = judge(q, ctx.said("S1")["said_value"], ctx.tolerance("S1")[0], what="dense-equivalent ÷ activated")
    note += (f": {fmt(ctx.said_input('S1', 'n_experts'))} experts buy ≈{fmt(v(q))}× dense-equivalent size — "
             "'64× the experts for ≈3.5× the quality-equivalent', not the reverse (seed 002)")
    check = check_text("Clark et al.'s dense-equivalent size over the activated size (1.3 B / 370 M, the paper's "
                       "figures) with 4×", ctx.tolerance_text("S1"), "a different dense equivalent in the paper: "
                       "≥ 1.5 B would reproduce '4×'")
    return Finding(q, "", verdict, note, derivation=q.explain(), check=check)


@claim("S2", SECTION)
def s2(ctx):
    r = ref(ctx)
    m, s = r.model, r.system
    S = ctx.lecture["reference"]["context"]
    pc = arch.param_counts(m, explain=True)
    b = arch.bytes_per(r.precision)
    R = hardware_ratio(chip_F(s, r.precision), chip_W(s), given("b_w", b, "B", f"{r.precision} weights"))
    kv_seq = given("kv_seq", float(arch.kv_stored_bytes(m, S)), "B", f"{m.file}: KV held per sequence at {fmt(S)} tokens "
                   f"({m.kv_dtype})")
    M = memory_capacity(r.G_q, given("hbm", s.chip.hbm_capacity_bytes, "B", s.chip.source_of("hbm_capacity_bytes")))
    q = sparsity_capacity_limit(M, pc.active, given("b_w", b, "B", f"{r.precision} weights"), R, kv_seq)
    rho = pc.rho
    Bs = round(v(bstar(m, s, r.precision)))
    # the 'pure win': cost per token at B* does not depend on rho (weights amortised, compute per token fixed)
    st = spec_step(m, s, r.G, Bs, 0, r.precision)
    c_bs, c_floor = v(st.t_step) / Bs, 2 * v(pc.active) / (r.G * v(chip_F(s, r.precision)))
    ok = v(rho) < v(q)
    need_b = memory_required(weight_bytes(v(pc.total), b), Bs, v(kv_seq))
    note = (f"{m.name} has rho = {fmt(v(rho))}; at B* = R·rho = {fmt(Bs)} sequences of {fmt(S)} tokens its weights and "
            f"KV take {fmt(need_b, 'B')} of {fmt(v(M), 'B')} on {r.G} × {s.chip.name}. Cost per token at B* is the "
            f"compute floor ({fmt(c_bs / c_floor)}× 2·N_active/(G·F)), which holds N_active but not rho, so more "
            f"experts at the same active size cost nothing per token up to rho = {fmt(v(q))}: "
            + ("the model is inside the free region" if ok else "the model is past it — HBM runs out before the users do"))
    check = check_text(f"{m.name}'s rho with the sparsity at which weights (rho·N_active·b_w) plus B* = R·rho sequences "
                       f"of {fmt(S)}-token KV fill the reference rack's HBM", "rho below that limit",
                       "a rack with less HBM, a longer context or a fatter KV cache brings the limit below the "
                       "model's rho (e.g. ≈ 24 GB per GPU here)")
    return Finding(q, "", REPRODUCED if ok else OFF, note, derivation=q.explain(max_depth=1), check=check,
                   value_text=f"rho ≤ {fmt(v(q))} (model {fmt(v(rho))})")


unverifiable("S3", SECTION)


@claim("E1", SECTION)
def e1(ctx):
    r = ref(ctx)
    moe = r.model.moe
    q = experts_per_chip(given("E", moe.n_routed_experts, "", r.model.source_of("moe")),
                         said_q(ctx, "E1", "G", "G", "chips"))
    verdict, note = judge(q, ctx.said("E1")["said_value"], ctx.tolerance("E1")[0], what="routed experts per GPU")
    note += "; DeepSeek itself decodes on EP144 (2 routed + 1 shared per GPU) and prefills on EP32"
    check = check_text("the config's routed experts ÷ the lecture's 64 GPUs with 4", ctx.tolerance_text("E1"),
                       "a model with another expert count (the catalog's config, not the lecture, gives 256)")
    return Finding(q, "", verdict, note, derivation=q.explain(), check=check)


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
    verdict, note = judge(main, ctx.said("E3")["said_value"], ctx.tolerance("E3")[0],
                          what=f"{ref(ctx).system.name} scale-up ÷ scale-out per GPU")
    span = sorted(v(q) for q in qs.values())
    note += f"; across racks in the catalog {fmt(span[0])}–{fmt(span[-1])}× (NIC generation decides)"
    check = check_text("per-GPU scale-up ÷ scale-out bandwidth of the reference rack (catalog, per direction) with 8×",
                       ctx.tolerance_text("E3"), "an 800 Gb/s NIC on the same rack (9×) would reproduce it")
    return Finding(main, "", verdict, note, derivation=main.explain() + "\n" + "\n".join(lines), check=check,
                   extras={"span": f"{fmt(span[0])}–{fmt(span[-1])}"})


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
    ok = abs(v(f_out) / ctx.said("E4")["said_value"] - 1) <= ctx.tolerance("E4")[0]
    note = (f"share of all-to-all traffic leaving the rack with EP over {n} racks: {fmt(v(f_out))} = 1 − 1/{n}; that "
            "share rides the scale-out NICs (row E3), so one rack bounds an expert layer")
    check = check_text("the roofline's expert-parallel all-to-all share that leaves the domain, EP over two racks, "
                       "with ½", ctx.tolerance_text("E4"), "only through a bug: uniform routing over n domains sends "
                       "1 − 1/n of the tokens out by definition")
    return Finding(f_out, "", IDENTITY if ok else OFF, note, check=check,
                   derivation=f"f_out = 1 − domain/EP = 1 − {dom}/{n * dom} (roofline expert-parallel all-to-all, "
                              f"{r.system.name})")


unverifiable("E5", SECTION)


@claim("E6", SECTION)
def e6(ctx):
    hop = ctx.system(ctx.said_input("E6", "hopper_system"))
    bw = ctx.system(ctx.said_input("E6", "blackwell_system"))
    ru = ctx.system(ctx.said_input("E6", "rubin_system"))
    dies = ctx.said_input("E6", "dies_per_package")
    src = lambda chip: ctx.said_source("E6", f"dies_per_package.{chip}")  # noqa: E731
    for chip in (bw.chip.name, ru.chip.name):
        if chip not in dies:
            raise NotComputable(f"the lecture file gives no die count for {chip}")
    d_bw = given("dies_bw", bw.domain_chips * dies[bw.chip.name], "dies",
                 f"{bw.source_of('domain_chips')} × {dies[bw.chip.name]} dies ({src(bw.chip.name)})")
    d_ru = given("dies_ru", ru.domain_chips * dies[ru.chip.name], "dies",
                 f"{ru.source_of('domain_chips')} × {dies[ru.chip.name]} dies ({src(ru.chip.name)})")
    q = ratio(d_ru.renamed("a"), d_bw.renamed("b"))
    packages = ru.domain_chips / bw.domain_chips
    hopper_step = bw.domain_chips / hop.domain_chips
    tol, _ = ctx.tolerance("E6")
    verdict, note = judge(q, ctx.said("E6")["said_value"], tol,
                          what="Blackwell NVL72 → Rubin Ultra NVL576 scale-up domain in dies")
    said_800 = v(d_ru)
    counts_ok = (hop.domain_chips == ctx.said_input("E6", "hopper_domain")
                 and bw.domain_chips == ctx.said_input("E6", "blackwell_domain") and 500 <= said_800 < 1000)
    if not counts_ok and verdict == REPRODUCED:
        verdict = OFF
    note += (f" ({fmt(packages)}× in packages: {bw.domain_chips} → {ru.domain_chips}; NVIDIA's '576' counts "
             f"{fmt(said_800)} dies, the '500-something'). Hopper {hop.domain_chips} → Blackwell {bw.domain_chips} is "
             f"{fmt(hopper_step)}×, not the '4×' seed 000 wrote; the catalog's domain sizes "
             f"{'match' if counts_ok else 'differ from'} the lecture's 8 and 72")
    check = check_text("the catalog's scale-up domains — HGX H100, GB200 NVL72 and the roadmap Rubin Ultra NVL576 "
                       "(packages × dies per package) — with the lecture's 8, 72, '500-something' and 4×",
                       ctx.tolerance_text("E6") + "; 8 and 72 exact",
                       "a Rubin Ultra rack of 72 packages (2× in dies), or a die count other than 4 per package")
    return Finding(q, "", verdict, note, derivation=q.explain(max_depth=1), check=check,
                   extras={"hopper_step": fmt(hopper_step), "packages": fmt(packages)})


@claim("E7", SECTION)
def e7(ctx):
    lines, caps = [], {}
    for name in ("hgx-h100", "gb200-nvl72", "gb300-nvl72"):
        s = ctx.system(name)
        caps[name] = memory_capacity(given("G", s.domain_chips, "chips", s.source_of("domain_chips")),
                                     given("hbm", s.chip.hbm_capacity_bytes, "B", s.chip.source_of("hbm_capacity_bytes")))
        lines.append(f"{name}: {caps[name].explain().splitlines()[1].strip()} = {fmt(v(caps[name]), 'B')}")
    verdict, note = judge(caps["hgx-h100"], ctx.said("E7")["said_value"], ctx.tolerance("E7")[0], unit="B",
                          what="HGX H100 domain HBM")
    bl = [v(caps["gb200-nvl72"]), v(caps["gb300-nvl72"])]
    note += f"; Blackwell racks {fmt(bl[0], 'B')} and {fmt(bl[1], 'B')} (the lecture: 10–20 TB)"
    try:
        m = model_or_skip(ctx, ctx.lecture["reference"]["frontier_model"])
        B, S = ctx.said_input("E7", "B"), ctx.said_input("E7", "S")
        for name in ("hgx-h100", "gb300-nvl72"):
            W_all = weight_bytes(arch.param_counts(m).total, arch.bytes_per("fp8"))
            need_b = memory_required(W_all, B, float(arch.kv_stored_bytes(m, S)))
            fits = need_b <= v(caps[name])
            lines.append(f"{m.name} FP8 with B = {fmt(B)}, S = {fmt(S)}: needs {fmt(need_b, 'B')} on {name} "
                         f"({fmt(v(caps[name]), 'B')}) → {'fits' if fits else 'does not fit'}")
    except NotComputable as e:
        lines.append(f"5T fit not checked: {e}")
    check = check_text("HGX H100's domain HBM (8 × the catalog's H100 capacity) with 640 GB, and the Blackwell racks' "
                       "with 10–20 TB", ctx.tolerance_text("E7"), "a different HBM figure in the catalog (an H100 of "
                       "94 GB, as the NVL part, would not reproduce it)")
    return Finding(caps["hgx-h100"], "B", verdict, note, derivation="\n".join(lines), plots=["domain_capacity"],
                   check=check)


@claim("E8", SECTION)
def e8(ctx):
    goo = ctx.system(ctx.said_input("E8", "google_system"))
    nv = [ctx.system(n) for n in ctx.said_input("E8", "nvidia_systems")]
    big = int(ctx.said_input("E8", "large_domain"))
    rows = [goo] + nv
    for s in rows:
        if s.chip.year is None:
            raise NotComputable(f"{s.chip.name} has no year in the catalog")
    first_nv = min((s.chip.year for s in nv if s.domain_chips >= big), default=None)
    lead = given("lead_years", (first_nv - goo.chip.year) if first_nv is not None and goo.domain_chips >= big else 0,
                 "years", f"{goo.chip.file}: year; " + "; ".join(f"{s.chip.file}: year" for s in nv))
    ok = goo.domain_chips >= big and (first_nv is None or goo.chip.year < first_nv)
    same_year = [s for s in nv if s.chip.year <= goo.chip.year + 1]
    note = ("scale-up domains by year: " + "; ".join(f"{s.chip.year} {s.name} {fmt(s.domain_chips)} chips, "
                                                    f"{fmt(s.domain_chips * s.chip.hbm_capacity_bytes, 'B')} HBM"
                                                    for s in sorted(rows, key=lambda s: s.chip.year))
            + f". A ≥ {big}-chip domain: Google from {goo.chip.year}, NVIDIA from {first_nv}"
            + (f"; beside {', '.join(s.name for s in same_year)} it is {fmt(goo.domain_chips / same_year[0].domain_chips)}× "
               "the chips" if same_year else "")
            + ". But a TPU pod is a 3D torus (links to neighbours, many hops for an all-to-all), not NVLink's any-to-any "
              "switch; whether that explains Gemini's lead is not public (Pope hedged)")
    check = check_text(f"the first year each vendor had a scale-up domain of ≥ {big} chips (the lecture's rack) in the "
                       "catalog: TPU v4 pod against HGX H100 and GB200 NVL72", "Google earlier",
                       "a catalog in which NVIDIA's racks predate the TPU pods, or the TPU pod were smaller than a rack")
    return Finding(lead, "years", REPRODUCED if ok else OFF, note, derivation=lead.explain(), check=check,
                   value_text=f"{fmt(v(lead))} years earlier" if ok else f"{fmt(v(lead))} years")


@claim("E9", SECTION)
def e9(ctx):
    m = ref(ctx).model
    k = given("k", m.moe.experts_per_token, "experts", m.source_of("moe"))
    verdict, note = judge(k, ctx.said("E9")["said_value"], ctx.tolerance("E9")[0], what="routed experts per token",
                          wrong=f"DeepSeek-V3 routes each token to {m.moe.experts_per_token} of "
                                f"{m.moe.n_routed_experts} experts plus {m.moe.n_shared_experts} shared")
    check = check_text("the config's experts per token (num_experts_per_tok) with 16 (and 32)", ctx.tolerance_text("E9"),
                       "a config routing to 16 or 32 experts")
    return Finding(k, "", verdict, note, derivation=f"k = num_experts_per_tok = {m.moe.experts_per_token} "
                                                     f"({m.source_of('moe')})", check=check)


@claim("E10", SECTION)
def e10(ctx):
    placement = need("tokenmath.serving.placement", "tensor / expert / pipeline splits, issue 3")
    r = ref(ctx)
    S = ctx.lecture["reference"]["context"]
    B = round(v(bstar(r.model, r.system, r.precision)))
    p = placement.place(r.model, r.system, B=B, S=S, precision=r.precision, basis="prior", max_chips=r.G)
    sp = p.splits
    tp, tput = sp["tp"], np.asarray(sp["tokens_per_s_per_chip"], dtype=float)
    ok_rows = np.isfinite(tput) & sp["fits"]
    if not (ok_rows & (tp == 1)).any() or not (ok_rows & (tp > 1)).any():
        raise NotComputable(f"no split with and without tensor parallelism fits {r.model.name} on {r.G} chips")
    i1 = int(np.flatnonzero(ok_rows & (tp == 1))[np.argmax(tput[ok_rows & (tp == 1)])])
    i2 = int(np.flatnonzero(ok_rows & (tp > 1))[np.argmax(tput[ok_rows & (tp > 1)])])
    q = ratio(given("a", tput[i2], "tok/s", "serving.placement.place: best split with tp > 1, tokens/s per chip"),
              given("b", tput[i1], "tok/s", "serving.placement.place: best split with tp = 1, tokens/s per chip"))
    tol, _ = ctx.tolerance("E10")
    ok = v(q) <= 1 - tol
    a, b = p.row(i2), p.row(i1)
    note = (f"`tokenmath place` for {r.model.name} on up to {r.G} × {r.system.chip.name}, B = {fmt(B)} per stage, "
            f"{fmt(S)} tokens, prior basis: best without TP {b['tp']}·{b['ep']}·{b['pp']} (tp·ep·pp) "
            f"{fmt(tput[i1], 'tok/s')} per chip; best with TP {a['tp']}·{a['ep']}·{a['pp']} {fmt(tput[i2], 'tok/s')} "
            f"({fmt(v(q))}×)" + ((": TP adds all-reduces" + (" and, for MLA, replicates the latent KV on every TP "
                                                                 "rank" if r.model.mla is not None else "")
                                   + " — unprofitable, as said") if ok else " — within the margin: not clearly "
                                                                            "unprofitable for this model and network"))
    check = check_text(f"tokens/s per chip of the best split with tensor parallelism and the best without it "
                       f"(`place`, reference case at B* and {fmt(S)} tokens)", ctx.tolerance_text("E10"),
                       "cheap all-reduces and a KV cache that TP splits (GQA heads) bring TP level with EP/PP, "
                       "e.g. a small GQA MoE on a much faster scale-up network")
    return Finding(q, "", REPRODUCED if ok else OFF, note, derivation=q.explain(), check=check)
