"""Serving rows measured under load: at a concurrency, at a per-user speed or latency target, with speculation.

A dashboard row such as "tokens/s per GPU at 50 tokens/s per user" or "throughput at concurrency
64" is not the engine's maximum-throughput run, which can be 5–15× higher at high interactivity.
These rows go through the request-level simulator and the frontier (serving/sim, serving/frontier):

    at a concurrency U:   a closed loop of U clients per replica group (U / n_rep per replica; U · G a replica of G
                          chips where the row counts clients per GPU, U where it counts them per replica),
                          fixed ISL/OSL (or uniform at a stated range ratio), simulated (max(400, 8·U) requests, at most max(4,000, 4·U)): the
                          row's quantity (output or total tokens/s, per user, TTFT, TPOT, E2E;
                          mean unless the metric names p50/p90/p95/p99) read off the run
    at a per-user speed:  the frontier over concurrency for the row's chips and layout: the best
                          tokens/s per chip with tokens/s per user ≥ X (a TPOT limit T gives X = 1/T;
                          a TTFT limit bounds the mean TTFT)

Speculative decoding and MTP (serving/speculative.py) are expressed where the row states an
acceptance rate or an acceptance length (mean tokens per step); the draft is an MTP module of the
model (MTP; EAGLE's one-layer head is taken as one too: Li et al. 2024, EAGLE, a single decoder
layer over the target's features) with K draft tokens as stated (default: one MTP module's one
token). A row that states speculation without either stays unexpressed, with that reason.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

import numpy as np

from ...core.errors import InputError
from ...core.load import load_engine
from ...serving.frontier import frontier
from ...serving.serve import interval_phase
from ...serving.sim import simulate
from ...serving.speculative import Speculation, acceptance_from_length
from .report import Prediction, Unexpressed
from .rows import dimension_of_unit, measured_part, parse_measured, percentiles_as_p, row_text, unit_scope

__all__ = ["LoadRegime", "under_load", "client_lengths", "swept_load", "speculation_of", "drafts_stated", "acceptance_stated", "predict_under_load", "quantity_of",
           "row_text"]

_NUM = r"([0-9]+(?:\.[0-9]+)?)"
_SPEC = re.compile(r"speculat|eagle|medusa|\bdraft|\bmtp\b|multi.token prediction|nextn|prompt[\s_-]*lookup", re.I)
# speculation the row says was not used: 'MTP off', 'speculation off', 'no MTP', 'without speculative decoding',
# 'spec decode disabled', 'MTP=0', 'w/o EAGLE'
_SPEC_WORD = (r"(?:spec(?:ulative)?(?:[\s_-]+decod(?:e|ing))?|speculation|mtp|eagle[\w-]*|medusa|nextn|draft(?:ing|s)?"
              r"|multi.token prediction)")
_NO_SPEC = re.compile(rf"\b(?:no|without|w/o|disabled?|off)\s+{_SPEC_WORD}\b"
                      rf"|\b{_SPEC_WORD}\s*(?:(?:=|:|is)\s*)?(?:off|disabled|none|false|not used)\b"
                      rf"|\b{_SPEC_WORD}\s*(?:=|:)\s*0\b(?!\.\d)", re.I)


@dataclass(frozen=True)
class LoadRegime:
    """What load a row was measured at: a concurrency, a request rate (open loop), and/or a per-user speed or TTFT
    target."""

    concurrency: int | None = None
    user_speed: float | None = None
    ttft_s: float | None = None
    note: str = ""
    range_ratio: float = 0.0  # lengths uniform in [L(1 − r), L(1 + r)] when the row says so
    rate_per_s: float | None = None  # Poisson arrivals (vLLM's --request-rate, QPS): an open loop
    concurrency_per: str = ""  # 'gpu' or 'replica' where the row counts its clients so ('concurrency 256 per GPU')
    range_stated: float | None = None  # the '--random-range-ratio' as written (its meaning is the client's: below)
    slo_s: tuple = ()  # the latency SLOs a goodput counts requests against: (('ttft', s), ('tpot', s), ('e2el', s))


def _seconds(x: str, unit: str) -> float:
    return float(x) * (1e-3 if unit.lower() == "ms" else 1.0)


def _limit(what: str, text: str) -> re.Match | None:
    """A latency limit on `what` (groups: the number, 'ms' or 's'): 'TPOT <= 50 ms', 'TPOT SLO < 50 ms', 'at p99
    TPOT 100 ms', 'under 50 ms TPOT', an SLO's value ('TBT SLO 1 s', 'SLO: TTFT 2.5 s, TPOT 0.15 s'). A bare 'TPOT
    25 ms' in the notes is a measurement, not a limit."""
    pre = r"(?:\b(?:at|under|below|within|and)\s+|@\s*)(?:an?\s+)?(?:p\d\d\s+|mean\s+|median\s+)?"
    return (re.search(what + r"\s*(?:SLO\s*)?(?:<=|≤|<|of at most|max(?:imum)?)\s*" + _NUM + r"\s*(ms|s)\b", text, re.I)
            or re.search(pre + what + r"(?:\s*SLO)?\s*(?:of\s+)?" + _NUM + r"\s*(ms|s)\b", text, re.I)
            or re.search(pre + _NUM + r"\s*(ms|s)\s*(?:p\d\d\s+)?" + what, text, re.I)
            # an SLO's value: 'P99 TBT SLO 1 s', 'TBT SLO of 200 ms', 'SLO: TTFT 2.5 s, TPOT 0.15 s'
            or re.search(what + r"\s*SLOs?\s*(?:of|=|:)?\s*" + _NUM + r"\s*(ms|s)\b", text, re.I)
            or re.search(r"\bSLOs?\b[^.;|]{0,40}?(?<![a-z])(?:p\d\d\s+)?" + what + r"\s*(?:of|=|:)?\s*" + _NUM +
                         r"\s*(ms|s)\b", text, re.I))


# a sweep of loads: 'concurrency 1-64', 'batch sizes 1 to 256', 'QPS 1–8'
_SWEEP = (r"(?:concurren(?:cy|t[-_ ]requests|t[-_ ]users)|\bconc\.?|\bbatch(?:[ _-]?sizes?)?|\bbs|\busers|"
          r"\bclients|\bQPS|\bRPS|request[-_ ]rates?)\s*(?:of|=|:|from)?\s*\d+(?:\.\d+)?\s*(?:-|–|—|to|\.\.\.?|…)\s*"
          r"\d+(?:\.\d+)?(?![\d.])(?!\s*(?:[kKmM]\b|tok|%))")


def swept_load(row: dict) -> str | None:
    """The words that say a row spans a sweep of loads ('concurrency 1-64', 'batch sizes 1 to 256', 'QPS 1–8'), or
    None: one number measured over many loads is not the measurement of one setup (the first load is not it)."""
    pat = _SWEEP
    batch = row.get("batch", "") or ""
    m = re.search(pat, batch, re.I)
    if m is None and re.search(r"\d", batch):  # the batch column states the row's one load: a sweep in the notes is
        return None                            # the study around it
    m = m or re.search(pat, row_text(row, ("parallelism", "metric", "notes")), re.I)
    return m.group(0) if m else None


def under_load(row: dict) -> LoadRegime | None:
    """The load a row states, or None for a max-load / fixed-batch row."""
    # a sweep beside the row's one load is the study around it, not the load ('concurrency 1 to 256' reads no 1)
    text = re.sub(_SWEEP, " ", percentiles_as_p(row_text(row, ("batch", "parallelism", "metric", "notes"))), flags=re.I)
    conc = re.search(r"(?:max[-_ ]?)?concurren(?:cy|t[-_ ]requests|t[-_ ]users)\s*(?:of|=|:|at)?\s*(\d+)|"
                     r"\bconc\.?\s*[=:]?\s*(\d+)|(\d+)\s+concurrent\b|\bC\s*=\s*(\d+)|"
                     r"(\d+)\s+(?:simultaneous\s+|parallel\s+)?users\b|"
                     r"(\d+)\s*\(\s*(?:concurren(?:cy|t(?:[-_ ](?:requests|users))?)|conc\.?)\s*\)", text, re.I)
    # ('64 (concurrency)': the count with what it counts in brackets after it)
    C = next((int(x) for x in conc.groups() if x), None) if conc else None
    per = re.match(r"\s*(?:/|per|each|a)\s*(?:(gpu|chip|device|card|accelerator)|(replica|instance|engine|server))\b",
                   text[conc.end():], re.I) if conc else None  # 'concurrency 256 per GPU': the clients of one chip
    # ('_qps_4': the vLLM dashboard's test names, 'serving_llama8B_tp1_sharegpt_qps_4')
    rate = re.search(r"(?:request[-_ ]rate|arrival[-_ ]rate|(?:\b|_)QPS|(?:\b|_)RPS)[\s_]*(?:of|=|:)?\s*" + _NUM +
                     r"|" + _NUM + r"\s*(?:req(?:uest)?s?\s*/\s*s(?:ec)?|QPS|RPS)\b", text, re.I)
    # a rate beside a concurrency is vLLM's '--request-rate 4 --max-concurrency 8': Poisson arrivals, at most C in
    # flight (a concurrency stated in other words stays a closed loop)
    capped = C is not None and re.search(r"max[-_ ]?concurren", conc.group(0), re.I)
    R = next((float(x) for x in rate.groups() if x), None) if rate and (C is None or capped) else None
    measured = parse_measured(row.get("value", ""))
    if R is not None and re.search(r"req(?:uest)?s?\s*/\s*s|qps|rps", row.get("unit", ""), re.I) and (
            rate.group(1) is None or measured is None or abs(R - measured.value) <= 0.01 * R):
        R = None  # a request rate the row measures, not one it was driven at ('QPS 16' measured at 12.5 req/s is)
    # a per-user rate is what the row measures only where its scope says so: 'tokens/s per GPU at 50 tokens/s per user'
    # measures a rate per GPU held at a per-user speed (the speed was dropped)
    per_user_metric = unit_scope(row["unit"], row["metric"]) == "user"
    speed = None
    # 'at 50 tok/s/user', 'at ~100 tok/s/user', '@ 100 TPS/user', 'at 30 tokens/s per user'
    target = re.search(r"(?:at|@|≥|>=|min(?:imum)?|interactivity(?: of)?)\s*[~≈]?\s*" + _NUM +
                       r"\s*(?:tok(?:en)?s?\s*(?:/|per)\s*s(?:ec(?:ond)?)?|tps)\s*(?:/|per)\s*(?:user|u)\b", text, re.I) or \
        re.search(r"interactivity\s*(?:of|=|:)?\s*" + _NUM, text, re.I) or \
        re.search(r"(?:tok(?:en)?s?\s*/\s*s(?:ec)?|\btps)\s*(?:/|per)\s*(?:user|u)\s*(?:≥|>=|>)\s*" + _NUM +
                  r"(?![\d.])(?!\s*[x×%])", text, re.I)
    # ('TPS/user ≥ 100': the speed before its bound; not 'TPS/user > 2x baseline', a ratio)
    if target and not per_user_metric:
        speed = float(target.group(1))
    tpot, ttft = _limit(r"(?:TPOT|ITL|TBT|time per output token|time between tokens)", text), _limit(r"(?:TTFT|time to first token)", text)
    note = []
    if tpot and speed is None and C is None:
        speed = 1.0 / _seconds(tpot.group(1), tpot.group(2))
        note.append(f"a TPOT limit of {tpot.group(1)} {tpot.group(2)} read as ≥ {speed:.3g} tokens/s per user "
                    "(the frontier's mean TPOT against the row's limit)")
    T = _seconds(ttft.group(1), ttft.group(2)) if ttft and C is None else None
    if C is None and speed is None and T is None and R is None:
        return None
    rr = re.search(r"range[-_ ]ratio\s*(?:of|=|:)?\s*" + _NUM, text, re.I)
    return LoadRegime(C, speed, T, "; ".join(note), float(rr.group(1)) if rr and float(rr.group(1)) < 1 else 0.0,
                      R if R and R > 0 else None, ("gpu" if per.group(1) else "replica") if per else "",
                      float(rr.group(1)) if rr else None, _slos(text, tpot, ttft))


# vLLM's and SGLang's '--goodput ttft:200 tpot:50 e2el:5000': SLOs in milliseconds, KEY:VALUE
_GOODPUT_FLAG = re.compile(r"--goodput((?:\s+(?:ttft|tpot|e2el)\s*:\s*\d+(?:\.\d+)?)+)", re.I)


def _slos(text: str, tpot: re.Match | None, ttft: re.Match | None) -> tuple:
    """The latency SLOs the row states: a benchmark's '--goodput ttft:200 tpot:50' (ms), else its TTFT and TPOT
    limits in words ('TTFT ≤ 200 ms and TPOT ≤ 50 ms')."""
    flag = _GOODPUT_FLAG.search(text)
    if flag:
        return tuple((k.lower(), float(v) / 1e3) for k, v in re.findall(r"(ttft|tpot|e2el)\s*:\s*(\d+(?:\.\d+)?)",
                                                                       flag.group(1), re.I))
    return tuple((k, _seconds(x.group(1), x.group(2))) for k, x in (("ttft", ttft), ("tpot", tpot)) if x)


# SGLang's benchmark client (sglang.bench_serving, sglang.benchmark.serving) draws a random dataset's lengths uniformly
# in [L·r, L] for '--random-range-ratio r', default 0.0 (sglang 0.5.23 benchmark/datasets/common.py compute_random_lens,
# benchmark/serving.py); vLLM's current client draws them in [L(1 − r), L(1 + r)], default 0.0 (the simulator's)
_SGLANG_CLIENT = re.compile(r"\bsglang\.bench(?:mark)?[._]serving|\bsglang\b[^|;]{0,40}\bbench_serving\b", re.I)
_VLLM_CLIENT = re.compile(r"\bvllm\s+bench\b|benchmark_serving\.py|\bvllm\b[^|;]{0,40}\bbench(?:mark)?_serving", re.I)
_RANDOM_FLAGS = re.compile(r"--random-(?:input|output)\b", re.I)


def client_lengths(row: dict, regime: LoadRegime, engine: str | None, isl: int, osl: int
                   ) -> tuple[int, int, LoadRegime, str]:
    """(ISL, OSL, regime, how) of a random dataset drawn by SGLang's client, whose '--random-range-ratio r' draws
    lengths uniformly in [L·r, L] (r = 1: fixed; unstated beside its '--random-input' flags: its default 0, [1, L]):
    the same uniform law as the simulator's ±r' around the middle, c = L(1 + r)/2, r' = (1 − r)/(1 + r). Other
    clients' rows are returned as they are."""
    text = row_text(row)
    sglang = _SGLANG_CLIENT.search(text) or (engine == "sglang" and re.search(r"\bbench_serving\b", text, re.I)
                                             and not _VLLM_CLIENT.search(text))
    r = regime.range_stated
    if not sglang or (r is None and not _RANDOM_FLAGS.search(text)):
        return isl, osl, regime, ""
    r = 0.0 if r is None else min(max(r, 0.0), 1.0)
    if r >= 1.0:
        return isl, osl, dataclasses.replace(regime, range_ratio=0.0), \
            "SGLang's client at --random-range-ratio 1: fixed lengths"
    mid = lambda L: max(1, int(round(L * (1 + r) / 2)))  # noqa: E731
    rr = min((1 - r) / (1 + r), 0.999)
    how = (f"SGLang's client draws random lengths uniformly in [L·r, L] (r = {r:g}"
           f"{'' if regime.range_stated is not None else ', its default, the row states none'}; sglang 0.5.23 "
           f"benchmark/datasets/common.py): prompts in [{max(1, int(isl * r))}, {isl}], outputs in "
           f"[{max(1, int(osl * r))}, {osl}], means {mid(isl)} and {mid(osl)}")
    return mid(isl), mid(osl), dataclasses.replace(regime, range_ratio=rr), how


_DRAFTS = re.compile(r"(?:(?:speculative[-_ ])?num[-_ ]steps|"  # SGLang's --speculative-num-steps, written first
                     r"draft(?:ing)?\s*(?:len(?:gth)?|tokens?|steps?)|num[_ ]?(?:speculative|draft)[_ ]?tokens|"
                     r"speculative (?:tokens|steps|length)|mtp\s*(?:depth|layers|modules|tokens|k)?|nextn)\s*"
                     r"(?:of|=|:)?\s*\(?\s*(?:k\s*=\s*)?(\d+)"
                     # or the count before its noun: '4 speculative tokens', '3 draft tokens', '5 drafts'
                     r"|\b(\d+)\s*(?:speculative|draft(?:ed)?)\s*(?:tokens?|steps?)\b|\b(\d+)\s*drafts\b"
                     r"|(?<![\w-])K\s*=\s*(\d+)", re.I)
# a separate draft model named beside the verifier: '… + Llama-7B (int4) draft', 'with Llama 3.2 1B draft',
# 'Llama-3.2-1B as (the) draft (model)', 'draft model: Llama-3.2-1B'
_DRAFT_MODEL = re.compile(r"(?:\+|\bwith(?:\s+an?)?)\s*([\w.-]+(?:\s+[\w.-]+){0,3}?)\s*(?:\(\w+\)\s*)?"
                          r"(?:as\s+(?:the\s+|a\s+)?)?draft\b(?!\s*(?:len|tokens?|steps?))"
                          r"|\bdraft(?:\s+model)?\s*(?::|=)\s*([\w.-]+(?:\s+[\w.-]+){0,3})"
                          r"|(?:^|[,;(|]\s*)([\w.-]+(?:\s+[\w.-]+){0,3}?)\s+as\s+(?:the\s+|a\s+)?draft"
                          # a clause of its own: '…, Llama-7B int4 draft model'
                          r"|[,;|]\s*([\w.-]+(?:\s+[\w.-]+){0,3}?)\s*(?:\(\w+\)\s*)?draft\s+model\b", re.I)
# drafting heads trained on the verifier's hidden states: one-layer modules, as an MTP module, not a separate model
# drafts copied from the sequence's own tokens (vLLM's '[ngram]' / prompt lookup, suffix decoding): no model drafts them
_LOOKUP = re.compile(r"\bn-?gram\b|prompt[\s_-]*lookup|suffix[\s_-]*decod", re.I)
_DRAFT_HEAD = re.compile(r"eagle|medusa|\bmtp\b|nextn|hydra|lookahead|n-?gram", re.I)


_ACCEPT_RATE = re.compile(r"accept(?:ance|ed)?\s*(?:rate|ratio|probability)\s*(?:of|=|:|≈|~)?\s*" + _NUM + r"\s*(%)?",
                          re.I)
_ACCEPT_LENGTH = re.compile(r"(?:accept(?:ance|ed)?\s*length|mean accepted tokens|accepted tokens per step|\bAL)\s*"
                            r"(?:of|=|:|≈|~)?\s*" + _NUM, re.I)


def acceptance_stated(row: dict) -> bool:
    """Does the row state an acceptance rate or length (a number: 'acceptance unstated' states none)?"""
    text = _spec_text(row)
    return bool(_ACCEPT_RATE.search(text) or _ACCEPT_LENGTH.search(text))


def _spec_text(row: dict) -> str:
    """The row's free text less any speculation it says was off ('MTP off', 'no speculative decoding')."""
    return _NO_SPEC.sub(" ", row_text(row))


def drafts_stated(row: dict) -> bool:
    """Does the row state its drafts per step (K)?"""
    return _DRAFTS.search(_spec_text(row)) is not None


def speculation_of(row: dict, m, best_case: bool = False, al=None) -> Speculation | str | None:
    """The row's speculation (K drafts at acceptance α), a reason it cannot be expressed, or None (no speculation).
    With `best_case` (the caller checks the row as a bound on the tool's best case) an unstated acceptance is
    α = 1. A separate draft model ('… + Llama-7B (int4) draft') is found by the name matcher `al`."""
    text = _spec_text(row)
    if not _SPEC.search(text):
        return None
    rate, length = _ACCEPT_RATE.search(text), _ACCEPT_LENGTH.search(text)
    alpha_one = False
    if rate is None and length is None:
        # a lower bound on a speed is still a check: the best a step of K drafts can do is K + 1 tokens (α = 1); a
        # tool whose best case falls short contradicts the row, one whose best case reaches it does not (the
        # caller states the assumption: Speculation.alpha == 1 on a bound row)
        lower = parse_measured(row.get("value", ""))
        if not best_case and not (lower is not None and lower.op in (">", ">=")
                                  and quantity_of(row["metric"], row["unit"])[2]):
            return ("speculative decoding / MTP without a stated acceptance rate or length: the tokens per step "
                    "(1 − α^(K+1)) / (1 − α) cannot be derived")
        alpha_one = True
    draft = None
    named = _DRAFT_MODEL.search(text)
    name = next(g for g in named.groups() if g).strip() if named else None
    if name and _DRAFT_HEAD.search(name):
        name = None  # 'with EAGLE-3 draft': a drafting head (the MTP-module kind), not a separate model
    if name or (re.search(r"\bdraft model\b|\bverifier\b", text, re.I) and not _DRAFT_HEAD.search(text)):
        if name is None or al is None:
            return "speculative decoding with a separate draft model the row does not name"
        target = al.matched.get("model")
        draft, note = al.model(name)
        if target is not None:  # the row's model stays the one matched; the draft is reported beside it
            al.matched["draft"], al.matched["model"] = al.matched["model"], target
        if draft is None:
            return f"speculative decoding with a separate draft model: {note}"
    k = _DRAFTS.search(text)
    K = int(next(g for g in k.groups() if g)) if k else 1
    lookup = draft is None and _LOOKUP.search(text) is not None
    if alpha_one:
        return Speculation(K=K, alpha=1.0, draft=draft, mtp_layers=int(load_engine()["mtp_layers"]), lookup=lookup)
    if rate is not None:
        a = float(rate.group(1)) / (100.0 if rate.group(2) or float(rate.group(1)) > 1 else 1.0)
    else:
        L = float(length.group(1))
        K = max(K, int(np.ceil(L - 1)))  # an acceptance length needs at least L − 1 drafts
        a = acceptance_from_length(L, K)
    return Speculation(K=K, alpha=min(max(a, 0.0), 1.0), draft=draft, mtp_layers=int(load_engine()["mtp_layers"]),
                       lookup=lookup)


def quantity_of(metric: str, unit: str) -> tuple[str, str, bool]:
    """(simulated quantity, statistic, higher is better) that a row's metric names (less any latency limit the
    rate was held to: rows.measured_part)."""
    m, u = measured_part(metric).lower(), percentiles_as_p(unit).lower()
    mu = m + " " + u  # the statistic may be in the unit: 'ms (p99)'
    stat = ("p99" if "p99" in mu else "p95" if "p95" in mu else "p90" if "p90" in mu
            else "p50" if ("p50" in mu or "median" in mu) else "mean")
    if re.search(r"(?<![a-z])ttft|time.to.first|(?:first|1st).?token.?latency", m):
        return "ttft_s", stat, False
    if re.search(r"normali[sz]ed[\s_-]*(?:e2e[\s_-]*|end.to.end[\s_-]*|request[\s_-]*)?latency", m):
        # vLLM's, Orca's 'normalized latency' (s/token): a request's end-to-end latency over its output length
        return "norm_latency_s", stat, False
    if re.search(r"(?<![a-z])(tpot|itl|tbt)|inter.token|time.per.output|time.between.tokens", m):  # TBT: time between tokens
        return ("itl_s" if re.search(r"itl|inter|tbt|between", m) else "tpot_s"), stat, False
    e2e = re.search(r"e2e|end.to.end|request.latency|total.latency", m)  # 'decode latency (e2e)': the whole request
    if re.search(r"s\s*/\s*tok|per[\s_-]+(?:output[\s_-]+)?token", u + " " + m) or not e2e and re.search(
            r"(?:decod(?:e|ing)|next[\s_-]token|token[\s_-]*gen(?:eration)?(?:[\s_-]*model)?)[.:\s_-]*"
            r"(?:(?:median|mean|avg|average|p\d\d)[\s_-]*)?"  # SGLang bench_one_batch's 'Decode.  median latency'
            r"(?:step[\s_-]*|\(\s*(?:token|step)\s*\)[\s_-]*)?latency", m):
        # Neuron's 'token generation (model) latency': one call of the decode graph, a step; TGI's benchmark prints
        # 'Decode (token)' latency, one step, beside 'Decode (total)', every step of the request
        return "tpot_s", stat, False  # '25 ms/token', 'latency per token', TGI's 'decode latency' (one step)
    if not e2e and re.search(r"(?:prefill|context[\s_-]*encoding(?:[\s_-]*model)?)[\s_-]*(?:step[\s_-]*)?(?:latency|time\b)|"
                             r"prompt[\s_-]*processing[\s_-]*(?:latency|time\b)", m):
        return "ttft_s", stat, False  # TGI's 'prefill latency', Neuron's 'context encoding latency': the prefill step
    if e2e or re.search(r"(?<![a-z])latency|(?:response|completion)[\s_-]*time\b", m):
        return "e2e_s", stat, False
    target = re.search(r"(?:\bat|@|≥|>=)\s*[~≈]?\s*\d", m)  # 'throughput per GPU at 50 tok/s/user': a speed it was held at
    if re.search(r"/\s*user", u) or (re.search(r"(?<![a-z])per[\s_-]user|/\s*user|interactivity", m) and not target):
        # trtllm-bench's 'Per User Output Throughput [w/ ctx]': the output over the request's whole latency, its
        # prefill (and wait) included, not 1/TPOT
        e2e_user = re.search(r"\bw(?:/|ith)\s*ctx\b|with\s+(?:the\s+)?context\b|incl(?:uding|\.)?\s+(?:the\s+)?(?:ttft|prefill|"
                             r"context(?:\s+phase)?)\b", m)
        return "tokens_per_s_per_user" + ("_e2e" if e2e_user else ""), "mean" if stat == "mean" else "p50", True
    if re.search(r"total.?tokens?(?!.*output)|total.?throughput(?!.*output)|input.?\+.?output|in.?out.?tokens", m):
        return "total_tokens_per_s", "mean", True
    if re.search(r"(?:input|prompt|prefill).?(?:tok|throughput)", m) or \
            re.fullmatch(r"\s*prompt(?:[\s_-]*processing)?(?:[\s_-]*(?:speed|rate|tps))?\s*:?\s*", m):
        # vLLM's 'prompt throughput': input tokens/s; mlx_lm's 'Prompt: … tokens-per-sec', one prompt's
        return "input_tokens_per_s", "mean", True
    if re.search(r"requests?.?per.?(?:s|min)|req(?:uest)?s?\s*/\s*(?:s|min)|samples|quer(?:y|ies)\s*(?:/|per)\s*s|\bqps\b|\brps\b",
                 m + " " + u) or dimension_of_unit(u) == "request_rate":  # (the unit's own words: 'RPM')
        return "requests_per_s", "mean", True
    if re.match(r"(?:input|prompt|prefill)\s+tok", u):  # the unit names what it counts: 'input tokens/s'
        return "input_tokens_per_s", "mean", True
    if re.match(r"total\s+tok", u):
        return "total_tokens_per_s", "mean", True
    return "output_tokens_per_s", "mean", True


def _from_sim(r, key: str, stat: str, isl: float) -> float:
    if key == "norm_latency_s":  # (the simulated requests share one output length)
        return float(r["e2e_s"][stat]) / float(r.settings["osl_mean"])
    if key == "tokens_per_s_per_user_e2e":  # a request's output over its whole latency
        return float(r.settings["osl_mean"]) / float(r["e2e_s"][stat])
    if key == "total_tokens_per_s":
        return r["requests_per_s"] * (isl + r.settings["osl_mean"])
    if key == "input_tokens_per_s":
        return r["requests_per_s"] * isl
    v = r[key]
    return float(v[stat] if isinstance(v, dict) else v)


def _clients_per_replica(regime: LoadRegime, G: int, n_rep: int) -> int | None:
    """The closed loop's clients on one replica of G chips: the row's over its n_rep replicas, or as many per chip or
    per replica as it counts them ('concurrency 256 per GPU'); None for an open loop."""
    C = regime.concurrency
    if C is None:
        return None
    return {"gpu": G * C, "replica": C}.get(regime.concurrency_per) or max(1, int(np.ceil(C / n_rep)))


def predict_under_load(row: dict, su, regime: LoadRegime, spec: Speculation | None, basis: str, measured: float,
                       scale: float, per_gpu: bool, assumptions: list[str], notes: list[str],
                       layout_note: str, per_node: int | None = None) -> Prediction | Unexpressed:
    """A row under load through the simulator (at a concurrency) or the frontier (at a per-user speed); a rate per
    GPU is divided by the chips, one per node (or rack) by the nodes, `per_node` chips each."""
    rid, g = row["id"], row["id"].split("-", 1)[0].upper()
    key, stat, higher = quantity_of(row["metric"], row["unit"])
    pools = getattr(su, "pools", None)  # disaggregated: each group's prefill workers beside its decode workers
    G_group = su.G if pools is None else pools.n_p * pools.G_p + pools.n_d * su.G
    chips = G_group * su.n_rep
    kw = dict(precision=su.prec, kv_dtype=su.kv, priors=su.priors, spec=spec)
    engine = getattr(su, "engine", None) or "default"
    policy = "disagg" if pools else str(load_engine(engine).get("policy", "continuous"))
    pool_kw = dict(prefill_chips=pools.G_p, decode_chips=su.G, prefill_layout=pools.layout_p,
                   prefill_workers=pools.n_p, decode_workers=pools.n_d) if pools else {}
    why = [n for n in (regime.note, layout_note) if n] + notes
    if spec is not None:
        why.append(f"speculation: K = {spec.K}, α = {spec.alpha:.3g} → {spec.tokens_per_step:.3g} tokens per step "
                   f"({spec.kind})")
    loaded = regime.concurrency is not None or regime.rate_per_s is not None
    slo = dict(regime.slo_s)
    goodput = loaded and re.search(r"goodput", measured_part(row["metric"]), re.I) is not None
    if goodput and (not slo or "e2el" in slo or key not in ("requests_per_s", "output_tokens_per_s")):
        return Unexpressed(rid, g, "a goodput (the requests that meet every latency SLO, per second) " + (
            "with no SLO stated ('--goodput ttft:200 tpot:50', 'TTFT ≤ 200 ms')" if not slo else
            "against an end-to-end latency SLO, which the simulator does not count" if "e2el" in slo else
            f"as {key.replace('_', ' ')}: the simulator counts good requests and their output tokens"))
    try:
        if loaded:
            U = _clients_per_replica(regime, G_group, su.n_rep)
            R = regime.rate_per_s / su.n_rep if regime.rate_per_s is not None else None
            cap = U if U is not None and R is not None else None  # arrivals at R, at most `cap` in flight
            if cap is not None:
                U = None
                why.append(f"Poisson arrivals at the row's request rate with at most {cap} in flight (its maximum "
                           "concurrency: an arrival past it waits to be sent, untimed)")
            # at least 4 requests a client (a run of fewer requests than clients is one burst, never the closed
            # loop's steady state that a benchmark of many requests a client measures)
            n = int(min(max(4000, 4 * U), max(400, 8 * U))) if U is not None else 1000

            slo_kw = dict(slo_ttft=slo.get("ttft"), slo_tpot=slo.get("tpot")) if goodput else {}

            def run(b):
                return simulate(su.m, su.system, G=su.G, concurrency=U, rate=R, requests=n, isl=su.ISL,
                                osl=su.OSL, range_ratio=regime.range_ratio, layout=su.layout, basis=b, engine=engine,
                                policy=policy, prefix_hit=getattr(su, "prefix_hit", 0.0), max_concurrency=cap, **kw,
                                **pool_kw, **slo_kw)

            def of(r):  # a goodput counts the requests that met every SLO (and their output tokens)
                if goodput:
                    return r["goodput"] * (r.settings["osl_mean"] if key == "output_tokens_per_s" else 1.0)
                return _from_sim(r, key, stat, su.ISL)

            r = run(basis)
            rate_like = key.endswith("per_s") and not key.startswith("tokens_per_s_per_user")
            val = of(r) * (su.n_rep if rate_like else 1)
            bound = of(run("spec")) * (su.n_rep if rate_like else 1) if basis == "prior" else val
            if goodput:
                why.append("goodput: the simulated requests meeting " + " and ".join(
                    f"{k.upper()} ≤ {v * 1e3:.4g} ms" for k, v in slo.items()) +
                    f" ({r['slo_attainment']:.1%} of them), per second")
            load = f"closed loop at concurrency {U}" if U is not None else f"Poisson arrivals at {R:.3g} requests/s"
            over = (f"{su.n_rep} replica(s) of {su.G} chips" if pools is None else
                    f"{su.n_rep} group(s) of {pools.n_p} prefill worker(s) of {pools.G_p} chips "
                    f"({pools.layout_p.words(pools.G_p)}) + {pools.n_d} decode worker(s) of {su.G} chips "
                    f"({su.layout.words(su.G)}), KV moved in {r.settings['kv_transfer_s_mean'] * 1e3:.3g} ms")
            why.insert(0, f"simulated {load} per {'replica' if pools is None else 'group'} ({over}; {engine} "
                          f"scheduling: {r.settings['policy']}), {n} requests of {su.ISL}+{su.OSL} "
                          f"tokens: mean batch {r['mean_batch']:.0f}, "
                          f"{r['output_tokens_per_s']:.4g} tok/s, TPOT {r['tpot_s']['mean'] * 1e3:.3g} ms, "
                          f"TTFT {r['ttft_s']['mean'] * 1e3:.3g} ms")
            why[1:1] = r.notes  # (a rate past what the deployment serves: the run says it is saturated)
            if U is not None and U > r.settings["batch_limit"]:
                why.insert(1, f"{r.settings['batch_limit_by']} holds {r.settings['batch_limit']} sequences a "
                              f"{'replica' if pools is None else 'group'}: "
                              f"of its {U} clients the rest queue, and their wait is in TTFT")
            mode = "concurrency"
        else:
            if key not in ("output_tokens_per_s", "total_tokens_per_s", "input_tokens_per_s", "requests_per_s"):
                return Unexpressed(rid, g, f"a {key} measured at a per-user speed target: the frontier answers "
                                           "throughput at a speed")
            if getattr(su, "prefix_hit", 0.0):
                return Unexpressed(rid, g, "a prefix-cache hit rate at a per-user speed target: the frontier runs "
                                           "uncached prompts; a stated concurrency or request rate is simulated with it")

            # a split the row does not state: a dashboard's curve is the envelope of the configurations it ran,
            # so the best of the layouts that suit the model at each speed (serving/frontier.py 'all')
            from .serving import split_of  # serving.py imports this module: read at call time

            stated = bool(split_of(row["parallelism"].lower()))
            lays = [su.layout] if stated else ["all"] if su.m.moe is not None else ["default"]
            # and over the replica sizes the row's chips allow: the smallest that holds the model (the engine rule),
            # doubled while the chips last (an 8-GPU node runs DeepSeek-R1 as one replica of 8 or two of 4)
            total = su.G * su.n_rep
            sizes = [su.G] if stated else [su.G * 2 ** i for i in range(8) if su.G * 2 ** i <= total]

            def best(b):
                fr = frontier(su.m, su.system, isl=su.ISL, osl=su.OSL, chips=sizes, layouts=lays,
                              at_user_speed=regime.user_speed, at_ttft=regime.ttft_s, confirm=False, basis=b, **kw)
                return fr.at

            at = best(basis)
            if not at["met"]:
                f = at["fastest"]
                return Unexpressed(rid, g, f"no operating point reaches the row's target on {su.G} chips: the "
                                           f"fastest is {f['tokens_per_s_per_user']:.3g} tokens/s per user")

            def rate(a):  # the row's quantity over all its chips, from the best point's rate per chip
                out = a["tokens_per_s_per_chip"] * total
                return {"output_tokens_per_s": out, "total_tokens_per_s": out * (su.ISL + su.OSL) / su.OSL,
                        "input_tokens_per_s": out * su.ISL / su.OSL, "requests_per_s": out / su.OSL}[key]

            val = rate(at)
            b_at = best("spec") if basis == "prior" else at
            bound = rate(b_at) if b_at["met"] else None
            asked = " and ".join(x for x in (f"≥ {regime.user_speed:.3g} tok/s/user" if regime.user_speed else "",
                                             f"mean TTFT ≤ {regime.ttft_s:.3g} s" if regime.ttft_s else "") if x)
            on = f"{su.G} chips" if len(sizes) == 1 else f"replicas of {', '.join(map(str, sizes))} chips"
            why.insert(0, f"frontier over concurrency on {on}"
                          f"{'' if stated else ' and layouts (split not stated: ' + ('dep, tp, tp·ep' if su.m.moe else 'tp') + ')'}"
                          f": best at {asked} is {at['layout']} on {at.get('chips', su.G)} chips at concurrency "
                          f"{at['concurrency']} ({at['tokens_per_s_per_user']:.3g} tok/s/user, "
                          f"{at['tokens_per_s_per_chip']:.4g} tok/s per chip, TTFT {at['ttft_s'] * 1e3:.3g} ms)")
            mode = "at_speed"
    except InputError as e:
        return Unexpressed(rid, g, str(e))
    except KeyError as e:  # e.g. a TPOT of requests with a single output token
        return Unexpressed(rid, g, f"the simulated run has no {e.args[0]} for this row")
    is_rate = higher and not key.startswith("tokens_per_s_per_user")
    div = chips if per_gpu and is_rate else (chips / per_node if per_node and is_rate else 1)
    pred = val / div / scale
    spec_b = bound / div / scale if bound is not None else None
    phase = interval_phase(key)
    gen = getattr(su.priors, "generation", "") or "spec-sheet"
    return Prediction(rid, g, mode, float(pred), measured, row["unit"], spec_b, higher, why, assumptions, None,
                      interval_key=(gen, phase, su.prec), cluster=f"{su.m.name}|{su.system.chip.name}")
