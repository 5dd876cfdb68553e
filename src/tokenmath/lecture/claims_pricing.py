"""Reading API prices (ledger rows A1–A9): the price-sheet catalog read forwards and backwards.

Every number comes from `tokenmath.economics.infer.read_offer` (the dated price sheets and the assumptions
catalog, with `--set` applied through the lecture context), `economics.pricing` (a workload's cost on rented
chips against an API's charge), `serving.disagg` (prefill vs decode cost per token) and, for the crossover
context, `serving.sweep`.
"""

from __future__ import annotations

from collections import Counter

from ..core import arch
from ..core.derive import given
from ..core.records import Model
from ..core.units import fmt
from .claim import OFF, REPRODUCED, Finding, NotComputable, check_text, claim, judge, need, within
from .common import ratio, ref, v

SECTION = "pricing"


def _readings(ctx, claim_id: str):
    return [ctx.read_offer(r) for r in ctx.said(claim_id)["offers"]]


def real_models(ctx) -> list[Model]:
    """Every catalog model with a published architecture (the hypothetical frontier shape left out)."""
    return [m for m in (ctx.model(n) for n in ctx.names("model")) if not m.hypothetical]


@claim("A1", SECTION)
def a1(ctx):
    rd = ctx.read_offer(ctx.said("A1")["offer"])
    lc = rd.get("long_context")
    if lc is None:
        raise NotComputable(f"{rd.ref} has no long-context band in the catalog")
    m_in, m_out = lc.values["input_multiplier"], lc.values["output_multiplier"]
    o, band = rd.offer, rd.offer.bands[0]
    q = given("m_in", m_in, "", f"{rd.sheet.file}: input {fmt(o.input_per_mtok, 'USD')} → {fmt(band.input_per_mtok, 'USD')}")
    verdict, note = judge(q, ctx.said("A1")["said_value"], ctx.tolerance("A1")[0],
                          what=f"{rd.offer.display_name} input multiple above {fmt(band.above_tokens)} tokens",
                          wrong=f"input ×{fmt(m_in)}, output ×{fmt(m_out)} — '50 % more' is true of output only")
    deriv = (f"{rd.ref} (sheet {rd.sheet.date}): input {fmt(o.input_per_mtok, 'USD')} → {fmt(band.input_per_mtok, 'USD')}"
             f" per Mtok (×{fmt(m_in)}); output {fmt(o.output_per_mtok, 'USD')} → {fmt(band.output_per_mtok, 'USD')}"
             f" (×{fmt(m_out)}) above {fmt(band.above_tokens)} tokens")
    check = check_text(f"the input price multiple of the long-context band on the {rd.ref} sheet ({rd.sheet.date}) with "
                       "1.5 (output checked alongside)", ctx.tolerance_text("A1"), "a sheet pricing input +50 %")
    return Finding(q, "", verdict, note, derivation=deriv, value_text=f"input ×{fmt(m_in)}, output ×{fmt(m_out)}",
                   check=check)


@claim("A2", SECTION)
def a2(ctx):
    sweep = need("tokenmath.serving.sweep", "KV crossover context, issue 3")
    ref_ = ctx.lecture["reference"]
    s = ctx.system(ref_["frontier_system"])
    every = {}
    for m in real_models(ctx):
        inp = sweep.roofline_inputs(m, s, s.domain_chips, ref_["precision"], None)
        every[m.name] = v(sweep.kv_crossover_context(inp.N_active, inp.W, inp.F, inp.kv))
    top = max(every, key=every.get)
    inp = sweep.roofline_inputs(ctx.model(top), s, s.domain_chips, ref_["precision"], None, explain=True)
    q = sweep.kv_crossover_context(inp.N_active, inp.W, inp.F, inp.kv)
    verdict, note = judge(q, ctx.said("A2")["said_value"], ctx.tolerance("A2")[0], unit="",
                          what=f"the latest KV crossover of any published architecture in the catalog ({top}, "
                               f"{fmt(v(inp.kv), 'B/tok')}) on {s.chip.name} at {ref_['precision']}")
    lo = min(every, key=every.get)
    note += (f"; published architectures cross at {fmt(every[lo])} ({lo}) to {fmt(every[top])} tokens — a 200 K "
             "crossover needs ≈ 2 KB of KV per token (A3), which no published model in the catalog comes near; the "
             "lecture's frontier shape was built to that figure, so using it here would be circular")
    check = check_text(f"L* = 2·N_active·W/(F·kv) for every published model in the catalog on {s.chip.name} "
                       f"({ref_['precision']}) — the largest — with 200 K", ctx.tolerance_text("A2"),
                       "a published architecture with ≈ 2 KB of KV per token at ~100 B active (or a chip with ≈ 14× "
                       "the HBM bandwidth per FLOP) would place the crossover at 200 K")
    return Finding(q, "tok", verdict, note, derivation=q.explain(max_depth=1) + "\n" + "\n".join(
        f"{n}: {fmt(x)} tok" for n, x in sorted(every.items(), key=lambda kv: kv[1])), plots=["cost_vs_context"],
        check=check, value_text=f"{fmt(every[lo])}–{fmt(every[top])} tok", extras={"range": f"{fmt(every[lo])}–{fmt(every[top])}"})


@claim("A3", SECTION)
def a3(ctx):
    rd = ctx.read_offer(ctx.said("A3")["offer"])
    lc = rd.get("long_context")
    if lc is None:
        raise NotComputable(f"{rd.ref} has no long-context band")
    q = lc.derivations["kv_bytes_per_token"]
    lo, hi = lc.values["kv_bytes_per_token_low"], lc.values["kv_bytes_per_token_high"]
    said = ctx.said("A3")["said_value"]
    ok = within(said, lo, hi)
    real = {m.name: float(arch.kv_bytes_per_token(m)) for m in real_models(ctx)}
    least = min(real, key=real.get)
    note = (f"KV bytes per token implied by {rd.offer.display_name}'s {fmt(lc.values['threshold_tokens'])}-token step, "
            f"kv = N_active/(R·S*), over the catalog's assumed ranges (active parameters {fmt(lc.values['active_params_low'], 'params')}"
            f"–{fmt(lc.values['active_params_high'], 'params')}; R of the chips and precisions the provider may use): "
            f"{fmt(lo, 'B')}–{fmt(hi, 'B')}; the lecture's {fmt(said, 'B')} is {'inside' if ok else 'outside'}. The "
            f"lecture's own inputs give exactly {fmt(v(q), 'B')}; the answer scales as 1/R, so FP4 matmuls halve it. "
            f"Published architectures store ≥ {fmt(real[least], 'B')} per token ({least})")
    check = check_text("the lecture's 1,667 B with the interval kv = N_active/(R·S*) spans over the assumptions "
                       "catalog's active-parameter range and the R of every chip and precision it allows",
                       "inside the interval", "a price step at another threshold (S*), or assumptions that move the "
                       "interval (a 50 K-token step puts it at 3–14 kB)")
    return Finding(given("kv_low", lo, "B", "economics.infer: interval low end"), "B", REPRODUCED if ok else OFF, note,
                   derivation=lc.explain(), value_text=f"{fmt(lo, 'B')}–{fmt(hi, 'B')}", check=check)


@claim("A4", SECTION)
def a4(ctx):
    n_kv_layers, K, H = (int(ctx.said_input("A4", k)) for k in ("n_kv_layers", "n_kv_heads", "head_dim"))
    dtypes = Counter(m.kv_dtype for m in real_models(ctx))
    dtype = dtypes.most_common(1)[0][0]
    out = {}
    for dt in dict.fromkeys((dtype, "fp8", "bf16")):
        toy = Model(name="lecture-a4", display_name="one global KV layer, 8 KV heads × 128", n_layers=n_kv_layers,
                    d_model=K * H, n_heads=K, n_kv_heads=K, head_dim=H, d_ff=K * H, vocab_size=1, kv_dtype=dt,
                    file="lecture A4 (T ~1:39)")
        out[dt] = arch.kv_bytes_per_token(toy, dt, explain=True)
    said = ctx.said("A4")["said_value"]
    verdict, note = judge(out[dtype], said, ctx.tolerance("A4")[0], unit="B",
                          what=f"KV bytes/token of the blackboard's shape at {dtype}, the KV format of "
                               f"{dtypes[dtype]} of {sum(dtypes.values())} published models in the catalog")
    note += (f"; the blackboard's 1 × 2 × 8 × 128 counts elements: {fmt(v(out['fp8']), 'B')} at one byte (FP8/int8), "
             f"{fmt(v(out['bf16']), 'B')} at BF16, against A3's {fmt(ctx.said('A3')['said_value'], 'B')}")
    check = check_text(f"layers × 2 × KV heads × d_head × bytes per element at the KV format most published models "
                       f"in the catalog store ({dtype}) with 2 KB", ctx.tolerance_text("A4"),
                       "a catalog in which most models cache KV in one byte per element (FP8/int8)")
    return Finding(out[dtype], "B", verdict, note, derivation="\n".join(q.explain() for q in out.values()), check=check)


@claim("A5", SECTION)
def a5(ctx):
    pricing = need("tokenmath.economics.pricing", "a workload's cost against an API's charge, issue 5")
    r = ref(ctx)
    s = ctx.system(ctx.said_input("A5", "system"))
    I, O = ctx.lecture["reference"]["input_len"], ctx.lecture["reference"]["output_len"]
    reps = [pricing.price_workload(r.model, s, input_len=I, output_len=O, offers=[], precision=r.precision, G=int(G),
                                   explain=True) for G in ctx.said_input("A5", "replica_chips")]
    rep = min(reps, key=lambda x: v(x.numbers["serving.usd_per_request"]))  # the cheapest replica: what undercuts
    serve = rep.numbers["serving.usd_per_request"]
    sheet, oid = ctx.offer(ctx.said("A5")["offer"])
    o = sheet.offers[oid]
    band = o.band_for(I)
    p = lambda f: getattr(band, f, None) if band is not None and getattr(band, f, None) is not None else getattr(o, f)  # noqa: E731
    api = pricing.api_usd(given("h", 0.0, "%", "no cache hits"), given("N_in", I, "tok"),
                          given("p_in", p("input_per_mtok"), "USD", sheet.figure_source(oid, "input_per_mtok")),
                          given("p_read", p("cache_read_per_mtok") or p("input_per_mtok"), "USD",
                                sheet.figure_source(oid, "cache_read_per_mtok")),
                          given("N_out", O, "tok"),
                          given("p_out", p("output_per_mtok"), "USD", sheet.figure_source(oid, "output_per_mtok")))
    mk = pricing.markup(api, serve)
    verdict, note = judge(mk, ctx.said("A5")["said_value"], ctx.tolerance("A5")[0],
                          what=f"{o.display_name}'s price ({sheet.date}) ÷ its cost on rented {s.chip.name}")
    note += (f": a {fmt(I)}-in, {fmt(O)}-out request costs {fmt(v(serve), 'USD')} on {rep.numbers['serving.chips']} × "
             f"{s.chip.name} at {fmt(s.usd_per_chip_hour, 'USD')}/h (fully busy, prior basis) and is billed "
             f"{fmt(v(api), 'USD')}. DeepSeek itself reported a theoretical 545 % cost-profit margin at list prices "
             "(ledger A5)" + ("" if verdict == REPRODUCED else f"; prices at cost would need the chips busy only "
                                                              f"{fmt(100 / v(mk))} % of the time"))
    check = check_text(f"an offer's charge for a {fmt(I)}/{fmt(O)}-token request with the same request's cost on the "
                       f"rented hardware it runs on ({s.name}, the cheapest of {ctx.said_input('A5', 'replica_chips')} "
                       "chips per replica, `economics.pricing`, prior basis, 100 % busy)",
                       ctx.tolerance_text("A5"), "a list price within 1.5× of the roofline cost (or a rental price "
                       "several times the catalog's)")
    return Finding(mk, "", verdict, note, derivation=mk.explain(max_depth=2), check=check)


def _ratios(ctx, claim_id, key):
    rows = []
    for rd in _readings(ctx, claim_id):
        oi = rd.get("output_input") if key != "cache_hit_over_input" else rd.get("cache")
        if oi is None or oi.values.get(key) is None:
            continue
        rows.append((rd, oi, oi.values[key]))
    if not rows:
        raise NotComputable(f"no catalog offer has {key}")
    return rows


@claim("A6", SECTION)
def a6(ctx):
    rows = _ratios(ctx, "A6", "output_over_input")
    said, low = ctx.said("A6")["said_value"], ctx.said("A6")["said_low"]
    vals = [r[2] for r in rows]
    top = max(rows, key=lambda r: r[2])
    inside = all(low <= x <= said for x in vals)
    ratio_ = max(vals) / said
    note = ("output/input today: " + ", ".join(f"{rd.offer.display_name} {fmt(x)}×" for rd, _, x in rows) +
            f" — span {fmt(min(vals))}–{fmt(max(vals))}× against the lecture's {fmt(low)}–{fmt(said)}×")
    verdict = REPRODUCED if inside else OFF
    if not inside:
        note += f": off by ×{fmt(ratio_)} at the top ({top[0].offer.display_name})"
    note += "; the structural claim (decode memory-bound, prefill compute-bound) is the roofline's (R1, R9)"
    check = check_text("output ÷ input prices of the lecture's four offers on their catalog sheets with 3–5×",
                       "every offer inside 3–5×", "sheets with other prices")
    return Finding(top[2], "", verdict, note, value_text=f"{fmt(min(vals))}–{fmt(max(vals))}×", check=check,
                   derivation="\n".join(f"{rd.ref} ({rd.sheet.date}): {fmt(rd.offer.output_per_mtok, 'USD')} / "
                                        f"{fmt(rd.offer.input_per_mtok, 'USD')} = {fmt(x)}" for rd, _, x in rows))


@claim("A7", SECTION)
def a7(ctx):
    disagg = need("tokenmath.serving.disagg", "prefill vs decode cost per token, issue 3")
    r = ref(ctx)
    I, O = ctx.lecture["reference"]["input_len"], ctx.lecture["reference"]["output_len"]
    d = disagg.disaggregate(r.model, r.system, input_len=I, output_len=O, precision=r.precision, explain=True)
    cr = d.numbers["out_over_in_cost_ratio"]
    q = ratio(given("a", 1.0, "", "decode MFU ÷ prefill MFU = c_in/c_out (same FLOP per token)"), cr.renamed("b"))
    verdict, note = judge(q, ctx.said("A7")["said_value"], ctx.tolerance("A7")[0],
                          what=f"decode ÷ prefill utilisation on the roofline ({r.model.name}, {r.system.name})")
    prices = {rd.offer.display_name: oi.values["decode_utilisation_relative"]
              for rd, oi, _ in _ratios(ctx, "A7", "decode_utilisation_relative")}
    note += (f": each phase at its cheapest batch that fits ({fmt(I)} in, {fmt(O)} out, prior basis) decode costs "
             f"{fmt(v(cr))}× prefill per token. What prices imply if they follow chip time (input ÷ output): "
             + ", ".join(f"{n} {fmt(x)}" for n, x in prices.items())
             + ("" if verdict == REPRODUCED else " — output is priced further above input than batching-efficient "
                "decode costs: prices carry interactive latency targets, not the roofline's floor"))
    check = check_text("c_in/c_out from `serving.disagg` for the reference case (decode and prefill each at their "
                       "cheapest batch that fits) with 1/5", ctx.tolerance_text("A7"),
                       "a model or context where decode is ≈ 5× dearer per token than prefill at its best batch "
                       "(e.g. heavier KV per token, longer contexts)")
    return Finding(q, "", verdict, note, derivation=cr.explain(max_depth=1), check=check)


@claim("A8", SECTION)
def a8(ctx):
    rows = _ratios(ctx, "A8", "cache_hit_over_input")
    said = ctx.said("A8")["said_value"]
    first = rows[0]
    q = ratio(given("a", first[0].offer.input_per_mtok, "USD", f"{first[0].sheet.file}: input"),
              given("b", first[0].offer.cache_read_per_mtok, "USD", f"{first[0].sheet.file}: cache read"))
    verdict, note = judge(q, said, ctx.tolerance("A8")[0], what=f"{first[0].offer.display_name} miss/hit price")
    note += ("; hit/input across offers: " + ", ".join(f"{rd.offer.display_name} {fmt(x)}" for rd, _, x in rows) +
             ". The lecture explains why hits are cheaper (retrieval vs recompute) but never derives the factor 10")
    check = check_text(f"input ÷ cache-read price on the {first[0].ref} sheet with 10×", ctx.tolerance_text("A8"),
                       "a sheet with another cache discount (DeepSeek's is ≈ 4×)")
    return Finding(q, "", verdict, note, derivation=q.explain(), check=check)


@claim("A9", SECTION)
def a9(ctx):
    rd = ctx.read_offer(ctx.said("A9")["offer"])
    o = rd.offer
    if o.cache_write_5m_per_mtok is None:
        raise NotComputable(f"{rd.ref} lists no 5-minute cache write")
    q = given("p_write_5m", o.cache_write_5m_per_mtok, "USD", f"{rd.sheet.file}: cache_write_5m_per_mtok")
    tol, _ = ctx.tolerance("A9")
    verdict, note = judge(q, ctx.said("A9")["said_value"], tol, unit="USD", what=f"{o.display_name} 5-minute write")
    base_ok = abs(o.input_per_mtok / ctx.said("A9")["said_input"] - 1) <= tol
    if not base_ok:
        verdict = OFF
    note += (f"; base input {fmt(o.input_per_mtok, 'USD')} ({'as said' if base_ok else 'differs'}); write = "
             f"{fmt(o.cache_write_5m_per_mtok / o.input_per_mtok)}× input; the 1-hour write is "
             f"{fmt(o.cache_write_1h_per_mtok or 0, 'USD')} ({fmt((o.cache_write_1h_per_mtok or 0) / o.input_per_mtok)}×) "
             "— Anthropic's lifetimes, not Gemini's (seed 004)")
    check = check_text(f"the base input and 5-minute cache-write prices on the {rd.ref} sheet ({rd.sheet.date}) with "
                       "$5 and $6.25", ctx.tolerance_text("A9"), "a sheet with other prices")
    return Finding(q, "USD", verdict, note, derivation=f"{rd.ref}, sheet {rd.sheet.date} ({rd.sheet.file})", check=check)

