"""Reading API prices (ledger rows A1–A9): the price-sheet catalog read forwards and backwards.

Every number comes from `tokenmath.economics.infer.read_offer` (which reads the dated price sheets and the
assumptions catalog) and, for the crossover context, from `tokenmath.serving.sweep`.
"""

from __future__ import annotations

from ..core import arch
from ..core.derive import given
from ..core.records import Model
from ..core.units import fmt
from .claim import OFF, REPRODUCED, Finding, NotComputable, claim, judge, need, unverifiable
from .common import model_or_skip, ratio, v

SECTION = "pricing"


def _read(ref: str):
    infer = need("tokenmath.economics.infer", "reading price sheets backwards, issue 5")
    return infer.read_offer(ref)


def _readings(ctx, claim_id: str):
    return [_read(r) for r in ctx.said(claim_id)["offers"]]


@claim("A1", SECTION)
def a1(ctx):
    rd = _read(ctx.said("A1")["offer"])
    lc = rd.get("long_context")
    if lc is None:
        raise NotComputable(f"{rd.ref} has no long-context band in the catalog")
    m_in, m_out = lc.values["input_multiplier"], lc.values["output_multiplier"]
    o, band = rd.offer, rd.offer.bands[0]
    q = given("m_in", m_in, "", f"{rd.sheet.file}: input {fmt(o.input_per_mtok, 'USD')} → {fmt(band.input_per_mtok, 'USD')}")
    verdict, note = judge(q, ctx.said("A1")["said_value"], 0.02, what=f"{rd.offer.display_name} input multiple above "
                          f"{fmt(band.above_tokens)} tokens",
                          wrong=f"input ×{fmt(m_in)}, output ×{fmt(m_out)} — '50 % more' is true of output only")
    deriv = (f"{rd.ref} (sheet {rd.sheet.date}): input {fmt(o.input_per_mtok, 'USD')} → {fmt(band.input_per_mtok, 'USD')}"
             f" per Mtok (×{fmt(m_in)}); output {fmt(o.output_per_mtok, 'USD')} → {fmt(band.output_per_mtok, 'USD')}"
             f" (×{fmt(m_out)}) above {fmt(band.above_tokens)} tokens")
    return Finding(q, "", verdict, note, derivation=deriv, value_text=f"input ×{fmt(m_in)}, output ×{fmt(m_out)}")


@claim("A2", SECTION)
def a2(ctx):
    sweep = need("tokenmath.serving.sweep", "KV crossover context, issue 3")
    m = model_or_skip(ctx, ctx.said_input("A2", "model"))
    ref = ctx.lecture["reference"]
    s = ctx.system(ref["frontier_system"])
    inp = sweep.roofline_inputs(m, s, s.domain_chips, ref["precision"], None, explain=True)
    q = sweep.kv_crossover_context(inp.N_active, inp.W, inp.F, inp.kv)
    verdict, note = judge(q, ctx.said("A2")["said_value"], 0.5, unit="",
                          what=f"L* for {m.name} ({fmt(v(inp.N_active), 'params')} active, {fmt(v(inp.kv), 'B/tok')}) "
                               f"on {s.chip.name} at {ref['precision']}")
    note += ("; the price break's placement is consistent with a KV crossover, but the size of the step (×2 input, "
             "×1.5 output) is not derived by the lecture")
    return Finding(q, "tok", verdict, note, derivation=q.explain(max_depth=1), plots=["cost_vs_context"])


@claim("A3", SECTION)
def a3(ctx):
    rd = _read(ctx.said("A3")["offer"])
    lc = rd.get("long_context")
    if lc is None:
        raise NotComputable(f"{rd.ref} has no long-context band")
    q = lc.derivations["kv_bytes_per_token"]
    lo, hi = lc.values["kv_bytes_per_token_low"], lc.values["kv_bytes_per_token_high"]
    verdict, note = judge(q, ctx.said("A3")["said_value"], 0.01, unit="B",
                          what=f"KV bytes/token implied by {rd.offer.display_name}'s {fmt(lc.values['threshold_tokens'])}"
                               "-token step")
    note += (f"; over the assumed ranges (active parameters, chips and precision, hence R) the interval is "
             f"{fmt(lo, 'B')}–{fmt(hi, 'B')}: the answer scales as 1/R, so FP4 matmuls halve it")
    return Finding(q, "B", verdict, note, derivation=lc.explain())


@claim("A4", SECTION)
def a4(ctx):
    n_kv_layers, K, H = (int(ctx.said_input("A4", k)) for k in ("n_kv_layers", "n_kv_heads", "head_dim"))
    out = {}
    for dtype in ("fp8", "bf16"):
        toy = Model(name="lecture-a4", display_name="one global KV layer, 8 KV heads × 128", n_layers=n_kv_layers,
                    d_model=K * H, n_heads=K, n_kv_heads=K, head_dim=H, d_ff=K * H, vocab_size=1, kv_dtype=dtype,
                    file="lecture A4 (T ~1:39)")
        out[dtype] = arch.kv_bytes_per_token(toy, dtype, explain=True)
    said = ctx.said("A4")["said_value"]
    verdict, note = judge(out["fp8"], said, 0.05, unit="B", what="KV bytes/token at 1 byte per element")
    note += (f"; the blackboard's 1 × 2 × 8 × 128 counts elements: {fmt(v(out['bf16']), 'B')} at BF16, so '2 KB' "
             f"needs FP8/int8 KV. Against A3's inference ({fmt(ctx.said('A3')['said_value'], 'B')}) it is "
             f"{fmt(v(out['fp8']) / ctx.said('A3')['said_value'])}×")
    return Finding(out["fp8"], "B", verdict, note, derivation=out["fp8"].explain() + "\n" + out["bf16"].explain())


unverifiable("A5", SECTION)


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
    return Finding(top[2], "", verdict, note, value_text=f"{fmt(min(vals))}–{fmt(max(vals))}×",
                   derivation="\n".join(f"{rd.ref} ({rd.sheet.date}): {fmt(rd.offer.output_per_mtok, 'USD')} / "
                                        f"{fmt(rd.offer.input_per_mtok, 'USD')} = {fmt(x)}" for rd, _, x in rows))


@claim("A7", SECTION)
def a7(ctx):
    rows = {rd.ref: (rd, oi) for rd, oi, _ in _ratios(ctx, "A7", "decode_utilisation_relative")}
    main_ref = ctx.said("A7")["offer"].split("@")[0]
    rd, oi = rows.get(main_ref) or next(iter(rows.values()))
    q = oi.derivations.get("decode_utilisation_relative") or given("u", oi.values["decode_utilisation_relative"])
    verdict, note = judge(q, ctx.said("A7")["said_value"], 0.05, what=f"{rd.offer.display_name} p_in/p_out")
    note += ("; across the offers " + ", ".join(f"{r.offer.display_name} {fmt(o.values['decode_utilisation_relative'])}"
                                                for r, o in rows.values()) +
             " — MODEL: assumes prices follow chip time and prefill runs at the compute floor")
    return Finding(q, "", verdict, note, derivation=oi.explain())


@claim("A8", SECTION)
def a8(ctx):
    rows = _ratios(ctx, "A8", "cache_hit_over_input")
    said = ctx.said("A8")["said_value"]
    first = rows[0]
    q = ratio(given("a", first[0].offer.input_per_mtok, "USD", f"{first[0].sheet.file}: input"),
              given("b", first[0].offer.cache_read_per_mtok, "USD", f"{first[0].sheet.file}: cache read"))
    verdict, note = judge(q, said, 0.05, what=f"{first[0].offer.display_name} miss/hit price")
    note += ("; hit/input across offers: " + ", ".join(f"{rd.offer.display_name} {fmt(x)}" for rd, _, x in rows) +
             ". The lecture explains why hits are cheaper (retrieval vs recompute) but never derives the factor 10")
    return Finding(q, "", verdict, note, derivation=q.explain())


@claim("A9", SECTION)
def a9(ctx):
    rd = _read(ctx.said("A9")["offer"])
    o = rd.offer
    if o.cache_write_5m_per_mtok is None:
        raise NotComputable(f"{rd.ref} lists no 5-minute cache write")
    q = given("p_write_5m", o.cache_write_5m_per_mtok, "USD", f"{rd.sheet.file}: cache_write_5m_per_mtok")
    verdict, note = judge(q, ctx.said("A9")["said_value"], 0.001, unit="USD", what=f"{o.display_name} 5-minute write")
    base_ok = abs(o.input_per_mtok - ctx.said("A9")["said_input"]) < 1e-9
    if not base_ok:
        verdict = OFF
    note += (f"; base input {fmt(o.input_per_mtok, 'USD')} ({'as said' if base_ok else 'differs'}); write = "
             f"{fmt(o.cache_write_5m_per_mtok / o.input_per_mtok)}× input; the 1-hour write is "
             f"{fmt(o.cache_write_1h_per_mtok or 0, 'USD')} ({fmt((o.cache_write_1h_per_mtok or 0) / o.input_per_mtok)}×) "
             "— Anthropic's lifetimes, not Gemini's (seed 004)")
    return Finding(q, "USD", verdict, note, derivation=f"{rd.ref}, sheet {rd.sheet.date} ({rd.sheet.file})")
