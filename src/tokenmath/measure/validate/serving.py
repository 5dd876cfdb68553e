"""Serving rows (TRT, MLP, BS1, VLLM): the engine's batch, a run of prefill and decode steps, one phase, batch 1.

Every step is `roofline.step` (one replica of G chips, `n_rep` replicas):

    engine batch (max load):  kv_pool  = the engine's rule (serving/engine_memory.py; TensorRT-LLM:
                                         G · f · (C − W_all/G − W_act − W_rt), f the rows' stated fraction)
                              B_engine = min(floor(kv_pool / kv_held(ISL + OSL)), B_max)
    a run (offline rows):     t_run    = n_prefill · t_prefill(B_p, ISL) + OSL · mean_j t_decode(B, ISL + j)
                              B_p      = dp · max(1, floor(tokens_max / ISL)),  n_prefill = B / B_p
                              (each of the dp attention data-parallel ranks schedules its own token budget)
                              tokens/s = n_rep · B · OSL / t_run
    one phase (per-GPU rows): prefill B_p·ISL / t_prefill / G;  decode B / t_decode(B, ISL + OSL/2) / G
    a decode rate held to a per-user speed X (a TPOT limit T: X = 1/T), no concurrency stated:
                              B_X = the largest B ≤ B_engine with t_decode(B, S) ≤ 1/X;  decode B_X / t_decode / G;
                              both pools stated: min(n_d · B_X / t_decode, n_p · B_p / t_prefill · OSL) over all chips
    batch-1 rows:             tokens/s/user = 1 / t_decode(1, ISL + OSL/2)
    under load (atload.py):   at a concurrency through the simulator, at a per-user speed through the frontier
    speculation (stated α):   tokens/s/user = tau / t_spec at the row's batch (serving/speculative.py)

With basis='spec' (peaks, everything overlapped) the engine may fill the whole HBM with KV, there is
no batch cap, and a run takes max(Σ t_math, Σ (t_weights + t_kv)) over all its steps: a lower bound
on time, so an upper bound on throughput.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass

import numpy as np

from ...core import arch
from ...core.derive import Q, formula, lift
from ...core.load import load_priors, load_system
from ...core.records import MODULE_KINDS, Model, Priors, System
from ...core.roofline import Layout, default_layout, step
from ...core.load import load_engine
from ...serving.engine_memory import held_weight_bytes, kv_pool_engine
from ...serving.serve import interval_phase
from ...serving.sim.fastpath import engine_batch, held_kv_bytes, held_tokens, kv_pool_bytes
from ...serving.sim.steps import mixed_time
from ...serving.speculative import Speculation, speculative_step
from ..intervals import phase_of
from .atload import acceptance_stated, client_lengths, drafts_stated, predict_under_load, quantity_of, row_text, speculation_of, swept_load, under_load
from .match import Aliases, _best, _system_candidates
from .report import Prediction, Unexpressed
from .rows import (BEST_CASE, K_UNSTATED, MBU, batch_of, bench_test_of, chips_of, context_of, disaggregated, gguf_type_of, group_of,
                   lengths_of,
                   output_len_from_samples, output_len_per_request, measured_part, parse_measured, per_node_of, percentiles_as_p,
                   to_int, unit_scope)

__all__ = ["role_split", "pools_of", "predict_serving", "kv_pool_bytes", "engine_batch", "run_time", "run_throughput", "engine_of",
           "stated_kv_dtype"]


# ---- formulas ------------------------------------------------------------------------------------

@formula("t_run = n_prefill · t_prefill + OSL · t_decode_mean", unit="s")
def run_time(n_prefill, t_prefill, OSL, t_decode_mean):
    return n_prefill * t_prefill + OSL * t_decode_mean


@formula("tokens_per_s = n_rep · B · OSL / t_run", unit="tok/s")
def run_throughput(n_rep, B, OSL, t_run):
    return n_rep * B * OSL / t_run


@formula("tokens_per_s = n_rep · T / t_step", unit="tok/s")
def phase_throughput(n_rep, T, t_step):
    return n_rep * T / t_step

@dataclass
class _Setup:
    m: Model
    system: System
    G: int
    n_rep: int
    layout: Layout
    prec: str
    kv: str
    ISL: int
    OSL: int | None
    B: int | None  # stated batch, or None for the engine's
    notes: list[str]
    assumptions: list[str]
    priors: Priors | None = None
    spec: Speculation | None = None
    engine: str | None = None  # the serving engine the row's source names (catalog/engines/<engine>.yaml)
    pools: Pools | None = None  # disaggregated: the prefill workers beside the decode workers (G, layout) of a group
    speed: float | None = None  # a decode rate held to this many tokens/s per user: the decode batch that meets it
    prefix_hit: float = 0.0  # the share of each prompt a prefix cache serves (under load: the simulator's)


@dataclass(frozen=True)
class Pools:
    """One group of a disaggregated deployment (xPyD over n_rep groups): n_p prefill workers of G_p chips split as
    layout_p beside n_d decode workers (the _Setup's G and layout); the deployment's clients are spread over the
    groups, each group's over its own workers."""

    n_p: int
    G_p: int
    layout_p: Layout
    n_d: int


# a rate of input tokens that counts those a prefix cache served (DeepSeek's 'input (including cache hits)')
# ('including on-disk KV cache hits': a few such words before 'cache hits')
_CACHE_HITS = re.compile(r"\b(?:incl(?:uding|udes|\.)?|with)\s+(?:the\s+)?"
                         r"(?:(?:on[\s-]*)?disk[\s-]*|prefix[\s-]*|kv[\s-]*|context[\s-]*){0,3}cache[\s-]*hits?\b", re.I)


# low-rank adapters served beside the base model: 'multi-LoRA', '16 LoRA adapters of rank 16', '--max-loras 16'
_LORA = re.compile(r"\b(?:multi[\s-]*)?q?lora\b|--max-loras?\b|\blora[\s_-]*(?:adapters?|rank)\b", re.I)


# a run at the engine's maximum load ('max throughput', 'offline', 'request rate inf', 'all requests at once', the batch
# column's 'max'), not an engine's limit or a benchmark flag that starts with 'max' ('max_new_tokens', '--max-concurrency')
_MAX_LOAD = re.compile(r"\bmax(?:imum)?\b(?![\s_-]*(?:new|num|input|output|seq|model|tokens?|concurren|len|batch[\s_-]*size))"
                       r"|offline|infinite|(?:\b|_)inf\b|all requests at once|saturat", re.I)


# a prefix cache's hit rate: '80% prefix cache hit rate', '100% cache hit', 'cache hit rate 80%', 'prefix cache hit ratio of
# 0.8', '80% prefix reuse', '80% of each prompt cached'
_CACHE_WORDS = r"(?:(?:prefix|kv|prompt|context|radix)[\s-]*){0,2}cache[\s-]*hits?"
_HIT_RATE = (re.compile(rf"(\d+(?:\.\d+)?)\s*%\s*(?:of\s+)?{_CACHE_WORDS}(?:[\s-]*(?:rate|ratio))?", re.I),
             re.compile(rf"{_CACHE_WORDS}[\s-]*(?:rate|ratio)\s*(?:of|=|:|≈|~|at)?\s*(\d+(?:\.\d+)?)\s*(%)?", re.I),
             re.compile(r"(\d+(?:\.\d+)?)\s*%\s*(?:prefix|prompt)[\s-]*(?:reuse|overlap|sharing|shared)", re.I),
             re.compile(r"(\d+(?:\.\d+)?)\s*%\s*of\s+(?:the\s+|each\s+|every\s+)?(?:prompt|input|context)s?(?:'s)?"
                        r"(?:\s+tokens)?\s+(?:is\s+|are\s+)?(?:cached|reused|shared|served from (?:the )?cache)", re.I))
# a cache outside the GPUs' HBM the cached KV is loaded from: loading it is a transfer the tool does not price
_KV_TIER = re.compile(r"\blmcache\b|offload|\bcpu[\s-]*(?:memory|dram|ram)\b|\bhost[\s-]*(?:memory|dram)\b|\bdisk\b|"
                      r"\bssd\b|\bnvme\b|remote[\s-]*(?:kv|storage|store|cache)|mooncake[\s-]*store|\b3fs\b", re.I)
# prompts that share prefixes a cache serves, the share not stated: SGLang's generated-shared-prefix dataset
_SHARED_PREFIX = re.compile(r"generated[\s_-]*shared[\s_-]*prefix|--gsp-|shared[\s-]*(?:system[\s-]*)?prefix(?:es)?\b|"
                            r"prefix[\s-]*sharing|shared[\s-]*system[\s-]*prompts?", re.I)


def prefix_hit_of(row: dict) -> tuple[float | None, str, str]:
    """(the share h of each prompt a prefix cache serves, the words, a reason the row cannot be read), from the
    row's text: '80% prefix cache hit rate' -> (0.8, ...); a cache in CPU memory, on disk or remote (LMCache,
    offloading) -> a reason (its load is a transfer not priced here); prompts sharing prefixes at an unstated share
    (SGLang's generated-shared-prefix dataset) -> a reason; else (None, '', '')."""
    text = row_text(row, ("metric", "notes", "parallelism", "batch", "input_len", "context_len"))
    m = next((x for x in (p.search(text) for p in _HIT_RATE) if x), None)
    h = None
    if m:
        v = float(m.group(1))
        pct = "%" in m.group(0) or v > 1
        h = v / 100.0 if pct else v
        if not 0 <= h <= 1:
            return None, m.group(0), f"a prefix-cache hit rate {m.group(0)!r} above 100 %"
    tier = _KV_TIER.search(row_text(row))
    if tier and (h is not None or re.search(r"cache[\s-]*hits?|\breuse|\bcached\b", text, re.I)):
        return h, tier.group(0), (f"the cached KV is loaded from outside the GPUs' memory ({tier.group(0)!r}): that "
                                  "transfer (host link, disk, network) is not priced here, only a prefix cache in HBM")
    if h is None:
        shared = _SHARED_PREFIX.search(text)
        if shared:
            return None, shared.group(0), (f"prompts that share prefixes a cache serves ({shared.group(0)!r}) at a "
                                           "hit rate the row does not state")
        return None, "", ""
    return h, m.group(0).strip(), ""


# a quantised release's suffix in a model's name: '-AWQ', '-GPTQ-Int8', '-FP8-dynamic', '-quantized.w8a16', '-NVFP4',
# bitsandbytes' '-bnb-4bit', MLX's '-4bit' / '-8bit', a 16-bit copy's '-BF16' / 'fp16' (Ollama's '8b-instruct-fp16')
_NAMED_PRECISION = re.compile(r"(?<![a-z0-9])(gptq[-_ ]?int[48]|gptq[-_ ]?8[-_ ]?bits?|bnb[-_ ]?[48][-_ ]?bits?|nf4|nvfp4|"
                              r"mxfp4|w8a8[-_ ]?fp8|fp8|fp4|awq|gptq|w8a8|w4a16|w8a16|w4a8|int8|int4|q4f(?:16|32)_[01]|bf16|fp16|"
                              r"[48][-_ ]?bits?)(?![a-z0-9])", re.I)


def precision_of_name(name: str, gguf: str = "") -> str:
    """The precision a model's name states, in the precision table's spelling ('' where it states none): a quantised
    release's suffix, else the GGUF file type `gguf_type_of` read ('llama 7B Q4_0')."""
    # a precision in the name's own parentheses is the precision column's words moved there, all of them:
    # 'Llama-2-7B (int4 weight-only g32)'; a suffix keeps the group size after it: 'Llama-2-7B-INT4-G32'
    for paren in re.findall(r"\(([^()]*)\)", name or ""):
        if _NAMED_PRECISION.search(paren):
            return paren.strip()
    named = _NAMED_PRECISION.search(name or "")
    if not named:
        return gguf
    group = re.match(r"[-_ ]?(g\d{2,3})(?![a-z0-9])", (name or "")[named.end():], re.I)
    return named.group(1) + (f" {group.group(1)}" if group else "")


def predict_serving(row, al: Aliases, system: System, hw_note: str, measured: float, scale: float, basis: str,
             priors: Priors | None, explain: bool) -> Prediction | Unexpressed:
    rid, g = row["id"], group_of(row["id"])
    par, par_note = stated_split(row)  # the split, from the notes where the parallelism column is empty
    row = {**row, "parallelism": par}
    name, gguf = gguf_type_of(row["model"])  # llama-bench's 'llama 7B Q4_0': the model, then its file's type
    m, note = al.model(name)
    if m is None:
        return Unexpressed(rid, g, note)
    # 'Qwen2.5-7B-Instruct-AWQ', 'llama 7B Q4_0': the release or file the name states
    ptext = weight_words(row["precision"]) or precision_of_name(name, gguf)
    if ptext:
        prec, kv, pnote = al.precision(ptext)
        if not weight_words(row["precision"]) and prec is not None:
            pnote = f"precision not stated: {ptext!r} from the model's name, read as {prec}" + (f" ({pnote})" if pnote else "")
    else:  # unstated: the checkpoint as its publisher ships it
        prec, kv, pnote = m.weight_dtype, None, f"precision not stated: the checkpoint's own, {m.weight_dtype} (catalog)"
    if prec is None:
        return Unexpressed(rid, g, pnote)
    said = al.precision(row["notes"]) if prec == "int8" and row.get("notes") else (None, None, "")
    if said[0] == "w8a8":  # the column's INT8 (read weight-only), the notes' 'INT8 weights and activations': W8A8
        prec, pnote = "w8a8", f"{ptext!r} with the notes' W8A8 ({row['notes'][:60]!r}): {said[2]}"
        ptext = f"{ptext}, w8a8"
    m, snote = checkpoint_formats(m, prec, al.storage(ptext), al.source("precision_notes.storage"))
    lower = parse_measured(row.get("value", ""))
    how_osl = ""
    point = lower is not None and not lower.op  # a point or a range, not a stated bound
    spec = speculation_of(row, m, best_case=point, al=al)
    if isinstance(spec, str):
        return Unexpressed(rid, g, spec)
    bench = bench_test_of(row)
    if bench:  # one sequence: a prompt of n tokens prefilled, or n tokens decoded after a one-token prompt; a
        # batch beside llama-bench's test is its n_batch / n_ubatch (tokens per compute batch), not sequences
        row = {**row, "batch": "1", "input_len": str(bench[1] if bench[0] == "prefill" else 1),
               "output_len": str(1 if bench[0] == "prefill" else bench[1])}
    # llama.cpp's and Ollama's timings ('eval rate', 'prompt eval rate'), mlx_lm's ('Generation: … tokens-per-sec',
    # 'Prompt: …'): one request's decode, or its prompt's prefill
    evals = re.search(r"(?<![\w-])(prompt[\s_-]*)?eval(?:uation)?[\s_-]*(?:rate|speed|tok|tps|count\s*/\s*s)",
                      row["metric"], re.I) or \
        (re.fullmatch(r"\s*(?:(prompt(?:[\s_-]*processing)?)|(?:text[\s_-]*|token[\s_-]*)?generation)"
                      r"(?:[\s_-]*(?:speed|rate|tps))?\s*:?\s*", row["metric"], re.I)  # mlx_lm.generate's lines
         if under_load(row) is None else None)
    if evals and not (row.get("batch") or "").strip():
        row = {**row, "batch": "1"}
    metric, unit = row["metric"].lower(), row["unit"].lower()
    scope = unit_scope(row["unit"], row["metric"])
    if scope == "core":
        return Unexpressed(rid, g, f"unit {row['unit']!r}: a rate per core of a chip (NeuronCore, TensorCore); the "
                                   "catalog's parts are whole chips and do not say how a rate shares out over cores")
    if scope == "node" and per_node_of(row) is None and system.domain_chips > 16 and \
            not re.search(r"rack|nvl\d", f"{row['unit']} {row['metric']}", re.I):  # ('/rack': the domain)
        return Unexpressed(rid, g, f"unit {row['unit']!r}: a rate per node of {system.name}, whose scale-up domain is "
                                   f"a rack of {system.domain_chips} chips; its node may be the rack or one of its "
                                   "compute trays, and the row does not say how many chips a node holds")
    per_gpu, per_user = scope == "gpu", scope == "user"
    phase = "prefill" if "prefill" in metric else ("decode" if re.search(r"decod(?:e|ing)", metric) and not per_user
                                                   else None)  # 'decode throughput', 'decoding speed'
    phase = bench[0] if bench else "prefill" if evals and evals.group(1) else phase
    if _unsized_request_rate(row, metric) and lower is not None:
        osl, how_osl = output_len_per_request(row, measured * scale)
        if osl is not None:  # the same run's tokens/s beside its samples/s: the mean output per sample
            row = {**row, "output_len": str(osl)}
    if _unsized_request_rate(row, metric):
        return Unexpressed(rid, g, "a request rate with no output length stated (nor the same run's tokens/s to divide): requests of unstated size (a dataset) "
                                   "bound nothing — the best case, one-token prompts and two-token answers, is any rate")
    split = disaggregated(row) or pools_words(row["parallelism"])
    parts = pools_hardware(row, system) if split else []
    if parts:
        return Unexpressed(rid, g, f"prefill and decode pools on different hardware ({', '.join(parts)}): one system "
                                   "is simulated per row")
    said_phase = notes_phase(row) if phase is None and split and scope in ("gpu", "node") and \
        under_load(row) is None else None
    if said_phase:  # 'throughput per GPU', notes '26.2K prefill TPGS': the prefill chips' rate, not the decode's
        phase = said_phase[0]
    sole = sole_role(row["parallelism"]) if phase is None and not split and under_load(row) is None else None
    if sole and quantity_of(row["metric"], row["unit"])[0] == _ROLE_COUNTS[sole[0]]:
        phase = sole[0]  # 'decode EP48 (DP attention)': the decode workers' rate, the prompts prefilled elsewhere
    else:
        sole = None
    if phase is None and split and scope in ("gpu", "node"):
        # prefill and decode on separate chips: a rate per chip or node is one role's, named by what it counts
        q = quantity_of(row["metric"], row["unit"])[0]
        if q in ("total_tokens_per_s", "requests_per_s"):
            return Unexpressed(rid, g, f"prefill and decode disaggregated ({split!r}): a {q.replace('_', ' ')} per "
                                       f"{scope} mixes the two roles' chips, " + (
                                           "whose counts the row does not give" if not pools_of(row["parallelism"])
                                           else "at the deployment's maximum load, which is not run with separate "
                                                "pools (a stated concurrency is simulated so)"))
        phase = "prefill" if q == "input_tokens_per_s" else "decode"
    hits = _CACHE_HITS.search(row_text(row, ("metric", "unit", "notes")))
    if hits and (phase == "prefill" or quantity_of(row["metric"], row["unit"])[0] in ("input_tokens_per_s",
                                                                                       "total_tokens_per_s")):
        return Unexpressed(rid, g, f"input tokens counted with their prefix-cache hits ({hits.group(0)!r}): tokens read "
                                   "from the cache are not computed, and the tool does not model a prefix cache")
    hit, hit_words, hit_reason = prefix_hit_of(row)
    if hit_reason:
        return Unexpressed(rid, g, hit_reason)
    notes = [n for n in (hw_note, note, pnote, snote) if n]
    assumptions: list[str] = [par_note] if par_note else []
    if hit:
        assumptions.append(f"a prefix cache in HBM serves {hit:.0%} of each prompt ({hit_words!r}): only the rest is "
                           "prefilled, after the cached tokens (whose KV each request holds whole, shared with none)")
    if not weight_words(row["precision"]) or (pnote and al.precision_assumed(ptext)):
        notes.remove(pnote)
        assumptions.append(pnote)
        # the name's precision read on as the column's (weight-only kernels, KV rules), beside the column's KV words
        row = {**row, "precision": ", ".join(t for t in dict.fromkeys((ptext, row["precision"].strip())) if t)}
    if kv == "fp8":
        assumptions.append(al.source("precision_notes.fp8_kv"))
    if re.search("blackwell low precision", row["precision"], re.I):
        assumptions.append(al.source("precision_notes.blackwell_low_precision"))
    lora = _LORA.search(row_text(row, ("model", "precision", "parallelism", "metric", "notes")))
    if lora:
        assumptions.append(f"LoRA adapters ({lora.group(0)!r}) are not counted: the base model's steps, without the "
                           "adapters' low-rank matmuls, their weight reads and their kernels (Punica/S-LoRA's SGMV)")

    ISL, OSL, how = lengths_of(row)
    if how:
        assumptions.append(how)
    if bench:
        assumptions.append(f"llama-bench's {row['metric'].strip()!r}: " + (
            f"one prompt of {ISL} tokens prefilled, input tokens/s" if bench[0] == "prefill" else
            f"{OSL} tokens decoded at batch 1 after a one-token prompt, output tokens/s"))
    if how_osl:
        assumptions.append(how_osl)
    if sole:
        assumptions.append(f"the parallelism names only the {sole[0]} workers ({sole[1]!r}): a rate of the {sole[0]} "
                           f"phase on them, the {'prompts prefilled' if sole[0] == 'decode' else 'answers decoded'} "
                           "on other chips (prefill and decode disaggregated)")
    if said_phase:
        assumptions.append(f"prefill and decode disaggregated ({split!r}): the metric names no phase and the notes "
                           f"name the {phase} ({said_phase[1]!r}): a rate per {scope} of the {phase} chips")
    elif split and phase is not None and scope in ("gpu", "node") and not re.search("prefill|decode", metric):
        assumptions.append(f"prefill and decode disaggregated ({split!r}): a rate per {scope} of " + (
            f"{'input' if phase == 'prefill' else 'output'} tokens is the {phase} chips' rate" if under_load(row) is None
            else "tokens under load is the deployment's rate over all its chips, prefill and decode (as a dashboard "
                 "divides a disaggregated deployment's throughput)"))
    ctx = context_of(row)
    if ctx is not None and ISL is None and phase is None and not per_user and under_load(row) is None:
        # a latency at a stated context, no load: a per-token time is a decode step at that KV length, a TTFT its prefill
        phase = {"tpot_s": "decode", "itl_s": "decode", "ttft_s": "prefill"}.get(quantity_of(row["metric"], row["unit"])[0])
    if ctx is not None and ISL is None and (phase is not None or per_user):
        # a decode step reads the KV the sequence holds, however it splits into prompt and output: ISL + OSL/2 = ctx
        ISL, OSL = (ctx, OSL) if phase == "prefill" else (max(1, ctx - 1), 2)
        assumptions.append(f"the row's context length {ctx} is the " + (
            "prompt prefilled" if phase == "prefill" else "KV each sequence holds at a decode step (how it splits into "
            "prompt and output does not change the step)"))
    if ISL is None and m.name in al.datasets:
        d = al.datasets[m.name]
        ISL, OSL = int(d["input_len"]), int(d["output_len"])
        assumptions += [al.source(f"datasets.{m.name}.input_len"), al.source(f"datasets.{m.name}.output_len")]
    best = False  # the row is checked as a bound on the tool's best case over what it leaves unstated
    if spec is not None and spec.alpha == 1.0 and not acceptance_stated(row):
        assumptions.append(f"acceptance not stated: α = 1 (every one of the K = {spec.K} drafts accepted, K + 1 "
                           "tokens a step), the best case")
        best = point
        if not drafts_stated(row):
            assumptions.append(K_UNSTATED)
    # a rate the row bounds below ('30,000+ TPS', '> 100 tokens/s') is checked as a point is: the best case must reach it
    rate_floor = lower is not None and lower.op in (">", ">=") and quantity_of(row["metric"], row["unit"])[2]
    unstated = best  # something the row leaves unstated is taken at its best case
    if ISL is None and (point or rate_floor):
        # the shortest prompt (the least to prefill, the least KV to read) is the fastest case
        ISL, best, unstated = 1, best or point, True
        assumptions.append("input length not stated: a one-token prompt, the fastest case")
        if OSL is None:
            OSL, how = output_len_from_samples(row, measured * scale, _scope_units(row, system))
            assumptions.append(how)
    if best:
        assumptions.append(BEST_CASE)
    if ISL is None:
        return Unexpressed(rid, g, "input length not in the table (and no dataset mean for this model in the "
                                   "alias table)")
    engine = engine_of(row)
    kv, kv_note = engine_kv_dtype(row, engine, prec, kv)
    if kv_note:
        assumptions = [a for a in assumptions if a != al.source("precision_notes.fp8_kv")] + [kv_note]
    said_kv = stated_kv_dtype(row)
    if said_kv is not None:  # the row's own word for its cache beats the precision rule's and the engine's default
        kv = said_kv[0]
        assumptions = [a for a in assumptions if a not in (al.source("precision_notes.fp8_kv"), kv_note)]
        notes.append(f"the KV cache in {kv or m.kv_dtype}, as the row states ({said_kv[1]!r})")
    pri = (priors or load_priors(system.chip.priors)).for_engine(engine)
    if system.chip.widened_note(prec):
        assumptions.append(system.chip.widened_note(prec))
    if engine and pri.name.endswith(f"@{engine}"):
        notes.append(f"kernels measured on {engine}, the engine the source names ({pri.name})")
    overlap = micro_batch_overlap(row)
    if overlap and not spec:
        pri = pri.model_copy(update={"comm_overlap": 1.0})
        assumptions.append(f"{overlap!r}: the communication of one micro-batch runs behind the other's compute "
                           "(comm_overlap = 1: all of it hidden, the overlap's upper bound)")
    sweep = swept_load(row)
    if sweep:
        return Unexpressed(rid, g, f"the row spans a sweep of loads ({sweep!r}): one figure over many loads is not "
                                   "the measurement of one setup")
    regime = under_load(row)
    one_client = regime is not None and regime.concurrency == 1 and OSL is None and not (
        regime.rate_per_s or regime.user_speed or regime.ttft_s or regime.slo_s)
    if one_client:
        # 'concurrency 1' and no output length: one client's requests run one at a time, each decoding alone; the
        # fixed batch of 1 that 'batch 1' states (a closed loop of one needs the output length only to weigh prefill)
        regime = None
    if MBU.search(row["metric"]):
        if regime is not None or spec is not None or unstated:
            return Unexpressed(rid, g, "a model bandwidth utilisation is read at a stated batch, prompt and no "
                                       "speculation (one decode step's bytes over its time)")
        if OSL is None:
            OSL = int(al.engine["bs1_output_len"])
            assumptions.append("output length not stated: " + al.source("engine.bs1_output_len"))
        return _mbu(row, m, system, prec, kv, ISL, OSL, notes, assumptions, pri, basis, measured, al)
    key = quantity_of(row["metric"], row["unit"])[0]
    cp = int(split_of(row["parallelism"].lower()).get("cp", 0) or 0)
    if cp > 1 and not (regime is None and key == "ttft_s"):
        return Unexpressed(rid, g, f"context parallelism (CP{cp}: each sequence's tokens over {cp} groups) is expressed "
                                   "for a prefill's time (TTFT) only; its decode, and a rate or a load over it, is not")
    if regime is None and key in ("ttft_s", "tpot_s", "itl_s", "e2e_s", "norm_latency_s", "tokens_per_s_per_user_e2e"):
        # a latency measured at a stated batch, no load: one static batch (every prompt prefilled, then the
        # batch decodes together), as latency benchmarks run it; one request if no batch is stated
        if _MAX_LOAD.search(row["batch"] + " " + row["notes"]):
            return Unexpressed(rid, g, "a latency at the engine's maximum load: the requests in flight are not stated")
        if OSL is None and key not in ("e2e_s", "norm_latency_s", "tokens_per_s_per_user_e2e"):
            OSL = 2 if key == "ttft_s" else int(al.engine["bs1_output_len"])
            assumptions.append("output length not stated: " + (
                "2 tokens (a TTFT does not depend on it)" if key == "ttft_s" else al.source("engine.bs1_output_len")))
        if OSL is None:
            return Unexpressed(rid, g, "output length not in the table (an end-to-end latency needs it)")
        return _static_latency(row, m, system, prec, kv, ISL, OSL, key, notes, assumptions, pri, engine, spec,
                               basis, measured, scale, al, hit or 0.0)
    if regime is not None:
        other = re.search(r"\bp(\d{2,3}(?:\.\d+)?)\b", percentiles_as_p(f"{measured_part(row['metric'])} {row['unit']}"),
                          re.I)
        if other and other.group(1) not in ("50", "90", "95", "99"):  # the simulator's percentiles; p75 is not the mean
            return Unexpressed(rid, g, f"the row's statistic {other.group(0)!r} under load: the simulator reports the "
                                       "mean, p50, p90, p95 and p99")
        if OSL is None and key == "ttft_s":
            OSL = 2
            assumptions.append("output length not stated: 2 tokens (a request's TTFT does not depend on it)")
        if OSL is None:
            return Unexpressed(rid, g, "output length not in the table (a row under load needs both lengths)")
        ISL, OSL, regime, how_client = client_lengths(row, regime, engine, ISL, OSL)
        if how_client:
            assumptions.append(how_client)
        pools = pools_of(row["parallelism"]) if split else None
        if split and not pools and (regime.concurrency is not None or regime.rate_per_s is not None):
            return Unexpressed(rid, g, f"prefill and decode disaggregated ({split!r}) under load, but the pools' "
                                       "workers are not stated ('1P2D', '2 prefill (TP4) + 1 decode (TP8)'): the "
                                       "deployment cannot be simulated, and aggregated replicas are another one")
        if pools:  # each pool's workers and split: the deployment simulated as prefill and decode workers
            n_rep, pools, G, layout, lnote = _pools_setup(row, pools, m, system, prec, al, assumptions)
        else:
            G, n_rep, layout, lnote = _layout(row, m, system, prec, chips_of(row, system)[0], None, al, assumptions)
        su = _Setup(m, system, G, n_rep, layout, prec, kv or m.kv_dtype, ISL, OSL, None, notes, assumptions, pri,
                    engine=engine, pools=pools, prefix_hit=hit or 0.0)
        if phase == "decode" and regime.user_speed and regime.concurrency is None and regime.rate_per_s is None \
                and spec is None:
            # a decode rate (the metric's, or a disaggregated deployment's output tokens per chip) held to a per-user
            # speed: the decode workers' batch that meets it, not a frontier of aggregated replicas at the row's prompts
            return _decode_held_to_speed(row, su, regime, scope, lnote, basis, measured, scale, al, explain)
        return predict_under_load(row, su, regime, spec, basis, measured, scale, per_gpu, assumptions,
                                  notes + _diagnose(row, su, "decode"), lnote,
                                  per_node=(per_node_of(row) or system.domain_chips) if scope == "node" else None)
    B = 1 if one_client else batch_of(row)
    if hit and (per_user or phase == "decode") and not unstated:
        assumptions.append("a prefix cache changes no decode step: only the prompts' prefill skips the cached tokens")
    elif hit:
        return Unexpressed(rid, g, f"a prefix-cache hit rate ({hit_words!r}) beside a rate at the engine's maximum "
                                   "load or a prefill rate: expressed under a stated load (simulated) or for a latency "
                                   "only")
    if per_user and B is None and _MAX_LOAD.search(row["batch"] + " " + row["notes"]):
        # trtllm-bench throughput's 'Per User Output Throughput' with every request sent at once: each request's speed
        # at the engine's batch and after its wait in the queue, as a latency at maximum load (it was one sequence's)
        return Unexpressed(rid, g, "a per-user speed at the engine's maximum load: the requests in flight (and the "
                                   "queue each waits in) are not stated")
    if per_user or (B is not None and OSL is None and phase in (None, "decode")) or (
            spec is not None and B is not None and phase == "decode"):
        # (a decode rate with speculation at a stated batch, 'single-request decode speed' at batch 1: that batch's
        # speculative steps, not the engine's maximum load; a decode rate at a stated batch, its output unstated, is
        # that batch's decode as an output rate there is: 'decode tokens/s (batch 1)' reads as tokens/s per user)
        if OSL is None:
            OSL = int(al.engine["bs1_output_len"])
            assumptions.append(al.source("engine.bs1_output_len"))
        mode = "per_user" if per_user else "decode_fixed"
    elif phase is not None:
        mode = phase
    else:
        mode = "run"
    if mode == "run" and split and pools_of(row["parallelism"]):
        # a rate at the engine's maximum load (Mooncake's requests/s) of stated pools: the run at maximum load is
        # one engine over all the row's chips, and the pools are simulated under a stated load only
        return Unexpressed(rid, g, f"prefill and decode disaggregated ({split!r}) at the deployment's maximum load: "
                                   "a run at maximum load is not expressed with separate pools (a stated "
                                   "concurrency or request rate is simulated so)")
    if OSL is None and mode == "decode" and ISL is not None and (point or rate_floor):
        # a decode rate after a stated prompt, its output unstated: the shortest decode (the least KV to read, the most
        # sequences the pool holds) is the best case, and the row a bound on it (the best over BEST_OSL)
        OSL, how = output_len_from_samples(row, measured * scale, _scope_units(row, system))
        assumptions.append(how)
        if BEST_CASE not in assumptions:
            assumptions.append(BEST_CASE)
        unstated = True
    if OSL is None and mode in ("run", "decode"):
        return Unexpressed(rid, g, "output length not in the table")

    G_row, chips_note = chips_of(row, system)
    pools = pools_of(row["parallelism"]) if split and phase in ("prefill", "decode") and scope == "total" else None
    if pools:
        # a whole deployment's prefill (or decode) rate is its prefill (or decode) pool's: that pool's chips, not all
        # of the row's ('32 prefill GPUs (EP32) + 96 decode GPUs (EP96)': the input tokens/s of 32 chips, not 128)
        n, G_w = _pool_worker(row, pools[phase], m, system, prec, al)[:2]
        G_row, chips_note = n * G_w, f"the {phase} pool's {n} worker(s) of {G_w} chips: {n * G_w} chips"
    if G_row is None and scope not in ("gpu", "user", "node") and \
            re.search(r"not stated|unstated|unspecified|unknown|\bsystems\b", row["hardware"], re.I):
        return Unexpressed(rid, g, f"a whole deployment's rate, and the row says its size is not stated "
                                   f"({row['hardware']!r})")
    if chips_note:
        notes.append(f"chips: {chips_note}")
    # a user's decode speed (or a decode at a stated batch) of a disaggregated deployment is its decode workers': their
    # split, not both roles' ('prefill workers 4 (TP4 each), decode workers 1 (DEP56)' ran TP4 EP56 on 224 chips)
    lay_phase = "decode" if phase is None and split and mode in ("per_user", "decode_fixed") and \
        pools_of(row["parallelism"]) else phase
    G, n_rep, layout, lnote = _layout(row, m, system, prec, G_row, lay_phase, al, assumptions)
    if pools and G_row and G * n_rep < G_row:
        # the whole pool's rate: every worker of it ('4 prefill instances x 2 GB200': 4 replicas of 2, not the one
        # instance a rate per GPU is read off)
        n_rep = G_row // G
    if B is not None and lnote and n_rep > 1:
        # a stated batch is the run's, not each replica's: with the split unstated, one replica over the row's chips
        # serves it, as for a latency at a stated batch (a batch of one request was read as one per replica)
        G, layout, words = _one_replica(m, G_row, layout, system, prec, al)
        n_rep = 1
        lnote = f"the split is not stated: one replica over the row's {G} chips serves the stated batch of {B} ({words}, assumed)"
    best = re.search(r"\bbest\b", row["parallelism"], re.I) and G_row and m.moe is None
    # a best-case row (or a floor on a rate) with its split unstated: the best split over its chips, as for its other
    # unstated inputs
    best = best or ((BEST_CASE in assumptions or (unstated and rate_floor)) and lnote and G_row and G_row > 1)
    if lnote and not best:
        assumptions.append(lnote)
    su = _Setup(m, system, G, n_rep, layout, prec, kv or m.kv_dtype, ISL, OSL, B, notes, assumptions, pri, spec,
                engine=engine)
    if best:
        su = _best_split(su, mode, G_row, pri, al)
        assumptions.extend(a for a in su.assumptions if a not in assumptions)
    value, why, deriv = _serving_value(su, mode, basis, pri, al, explain)
    if isinstance(value, str):
        return Unexpressed(rid, g, value)
    spec = _serving_value(su, mode, "spec", pri, al, False)[0] if basis == "prior" else value
    if mode == "run":  # a run's output tokens/s, as the quantity the row names
        key = quantity_of(row["metric"], row["unit"])[0]
        per_out = {"total_tokens_per_s": (ISL + OSL) / OSL, "input_tokens_per_s": ISL / OSL,
                   "requests_per_s": 1.0 / OSL}.get(key, 1.0)
        if per_out != 1.0:
            why.append(f"{key.replace('_', ' ')} = output tokens/s × {per_out:.4g} ({ISL}+{OSL} tokens a request)")
            value = value * per_out
            spec = spec * per_out if not isinstance(spec, str) else spec
    per_node = per_node_of(row) or system.domain_chips
    div = G * n_rep if per_gpu else (G * n_rep / per_node if scope == "node" else 1)
    pred, bound = value / div / scale, (spec / div / scale if not isinstance(spec, str) else None)
    why += notes + _diagnose(row, su, mode)
    gen = pri.generation or "spec-sheet"
    return Prediction(rid, g, mode, float(pred), measured, row["unit"], bound, True, why, assumptions, deriv,
                      interval_key=(gen, phase_of(mode), prec), cluster=f"{m.name}|{system.chip.name}")


def _static_latency(row, m, system, prec, kv, ISL, OSL, key, notes, assumptions, pri, engine, spec, basis, measured,
                    scale, al, hit: float = 0.0) -> Prediction | Unexpressed:
    """A TTFT, TPOT/ITL or end-to-end latency of one static batch of B requests (B = 1 unstated): the prompts
    prefilled B_p at a time, then OSL decode steps of the whole batch over the growing context.

        TTFT = ceil(B / B_p) · t_prefill(B_p, ISL)    TPOT = mean over S = ISL … ISL+OSL−1 of t_decode(B, S)
        e2e  = TTFT + (OSL − 1) · TPOT                (the prefill yields the first token)

    A batch whose weights and KV at ISL + OSL do not fit is refused.

    Speculative decoding divides TPOT by the tokens a verify step yields (serving/speculative.py)."""
    rid, g = row["id"], group_of(row["id"])
    B = batch_of(row) or 1
    G_row = chips_of(row, system)[0]
    cp = max(1, int(split_of(row["parallelism"].lower()).get("cp", 1) or 1))  # context-parallel groups (TTFT only)
    if cp > 1 and G_row is not None and G_row < cp:
        return Unexpressed(rid, g, f"context parallelism CP{cp} over the row's {G_row} chips: fewer chips than groups")
    G_row = G_row // cp if G_row is not None else None  # the chips of one context-parallel group
    G, n_rep, layout, lnote = _layout(row, m, system, prec, G_row, None, al, assumptions)
    if lnote and G_row:  # the split unstated: one batch is served by one replica over the row's chips
        G, layout, words = _one_replica(m, G_row, layout, system, prec, al)
        assumptions.append(f"the split is not stated: one replica over the row's {G} chips serves the batch ({words}, "
                           "assumed)")
    elif lnote:
        assumptions.append(lnote)
    if cp > 1:
        assumptions.append(
            f"context parallelism CP{cp}: each prompt's tokens split over {cp} groups of {G} chips, each holding all the "
            f"weights and 1/{cp} of the KV; a group prefills 1/{cp} of the prompt's tokens and of its causal attention "
            f"(load-balanced shards: t = t_prefill(B/{cp}, ISL)), the ring's KV exchange hidden behind the attention")
    # the batch must fit: weights, and the KV of every sequence at ISL + OSL (a context-parallel group's 1/cp of it)
    su = _Setup(m, system, G, 1, layout, prec, kv or m.kv_dtype, -(-ISL // cp), -(-OSL // cp), B, notes, assumptions,
                pri, spec, engine=engine)
    held = _engine_batch(su, False, al)
    if isinstance(held, str):
        return Unexpressed(rid, g, held)
    if held < B:
        return Unexpressed(rid, g, f"a static batch of {B} needs the KV of {B} sequences of {ISL}+{OSL} tokens; the "
                                   f"KV pool of {G} × {system.chip.name} holds {held}")
    if hit and cp > 1:
        return Unexpressed(rid, g, "a prefix cache beside context parallelism is not expressed")
    tokens_max = int(al.engine["max_num_tokens"])
    dp = int(layout.dp(G))
    cached = min(math.floor(hit * ISL), ISL - 1) if hit else 0  # a prefix cache's tokens are not prefilled
    new = ISL - cached
    B_p = max(1, min(B, _prompts_per_step(dp, tokens_max, new)))
    kw = dict(G=G, precision=prec, kv_dtype=su.kv, layout=layout, priors=pri)

    def times(bs: str) -> tuple[float, float]:
        t_pre = float(step(m, system, B=B_p / cp, S=ISL, phase="prefill", basis=bs, **kw).v("t_step"))
        if cached:  # the share of that step's work the uncached tokens carry after the cached ones, as a step of
            # prompt pieces prices both (the simulator's StepTimes.prompts)
            t_pre *= float(mixed_time(m, system, None, n_dec=0, ctx_dec=0.0, n_pre=B_p, T_pre=B_p * new,
                                      ctx_pre=B_p * (cached + new / 2), basis=bs, **kw)) / float(
                mixed_time(m, system, None, n_dec=0, ctx_dec=0.0, n_pre=B_p, T_pre=B_p * ISL, ctx_pre=B_p * ISL / 2,
                           basis=bs, **kw))
        ttft = math.ceil(B / B_p) * t_pre  # the last chunk waits for the steps before it
        if cp > 1:  # (refused before here for any quantity but the TTFT)
            return ttft, math.nan
        if spec is not None:
            sp = speculative_step(m, system, spec, B=B, S=ISL + OSL / 2, basis=bs, **kw)
            return ttft, float(sp.v("t_spec")) / float(sp.v("tau"))
        dec = step(m, system, B=B, S=ISL + np.arange(OSL), phase="decode", basis=bs, **kw)
        return ttft, float(np.mean(dec.v("t_step")))

    def value(bs: str) -> float:
        ttft, tpot = times(bs)
        e2e = ttft + (OSL - 1) * tpot  # the first token ends the prefill
        return {"ttft_s": ttft, "e2e_s": e2e, "norm_latency_s": e2e / OSL,
                "tokens_per_s_per_user_e2e": OSL / e2e}.get(key, tpot)

    pred = value(basis)
    bound = value("spec") if basis == "prior" else pred
    ttft, tpot = times(basis)
    why = [f"one static batch of {B} request(s) of {ISL}+{OSL} tokens on {G} chip(s): TTFT {ttft * 1e3:.4g} ms "
           f"({B}/{B_p} prefill step(s){f' of {new} uncached tokens after {cached} cached' if cached else ''}), "
           f"TPOT {tpot * 1e3:.4g} ms (mean decode step)" if cp == 1 else
           f"one static batch of {B} prompt(s) of {ISL} tokens over {cp} context-parallel groups of {G} chip(s) "
           f"({cp * G} chips): TTFT {ttft * 1e3:.4g} ms",
           f"a latency at batch {B} with no load stated: a static batch, as a latency benchmark runs it"]
    why += notes + _diagnose(row, su, "decode")
    phase = interval_phase(key)
    gen = pri.generation or "spec-sheet"
    return Prediction(rid, g, "static", pred / scale, measured, row["unit"], bound / scale,
                      key == "tokens_per_s_per_user_e2e", why, assumptions, None, interval_key=(gen, phase, prec),
                      cluster=f"{m.name}|{system.chip.name}")


@formula("MBU = (W_touched + B · kv_seq) / (t_step · G · W)", unit="")
def bandwidth_utilisation(W_touched, B, kv_seq, t_step, G, W):
    return (W_touched + B * kv_seq) / (t_step * G * W)


def _mbu(row, m, system, prec, kv, ISL, OSL, notes, assumptions, pri, basis, measured, al) -> Prediction | Unexpressed:
    """A model bandwidth utilisation (Databricks' MBU): the bytes one decode step reads — the weights it touches and
    the batch's KV at the mean context ISL + OSL/2 — over the step's time, as a share of the replica's HBM bandwidth
    (in % where the row's unit or value says so, else a fraction)."""
    rid, g = row["id"], group_of(row["id"])
    B = batch_of(row) or 1
    G_row = chips_of(row, system)[0]
    G, _, layout, lnote = _layout(row, m, system, prec, G_row, None, al, assumptions)
    if lnote and G_row:
        G, layout, words = _one_replica(m, G_row, layout, system, prec, al)
        assumptions.append(f"the split is not stated: one replica over the row's {G} chips ({words}, assumed)")
    elif lnote:
        assumptions.append(lnote)
    S = ISL + OSL / 2
    kv = kv or m.kv_dtype

    def mbu(bs: str) -> float:
        st = step(m, system, G=G, B=B, S=S, phase="decode", precision=prec, kv_dtype=kv, basis=bs, priors=pri,
                  layout=layout)
        return float(bandwidth_utilisation(float(st.extras["W_touched"]), B, float(arch.kv_read_bytes(m, S, kv)),
                                           float(st.v("t_step")), G, system.chip.hbm_bandwidth_bytes_per_s))

    pct = 100.0 if "%" in f"{row['unit']}{row['value']}" or re.search(r"percent|pct", row["unit"], re.I) else 1.0
    pred = mbu(basis) * pct
    bound = mbu("spec") * pct if basis == "prior" else pred
    why = [f"MBU = (weights touched + {B} × KV at context {S:.0f}) / (decode step × {G} chips × HBM "
           f"{system.chip.hbm_bandwidth_bytes_per_s / 1e12:.3g} TB/s): {pred:.3g}{' %' if pct == 100 else ''}"] + notes
    return Prediction(rid, g, "mbu", pred, measured, row["unit"], bound, True, why, assumptions, None,
                      cluster=f"{m.name}|{system.chip.name}")


def checkpoint_formats(m: Model, prec: str, storage: dict[str, str] | None, source: str = "") -> tuple[Model, str]:
    """The model as a quantised checkpoint stores it: `storage` ('linear' and/or module kinds -> format) over
    the precision's matmuls, where the row's precision re-quantises the model; a model whose own checkpoint
    is at that precision (gpt-oss's MXFP4) keeps its formats. Where the model's published release in the linear
    layers' format keeps some module kinds in another (Model.quantized_formats: NVIDIA's NVFP4 GLM-5 leaves its
    attention in BF16), those kinds take the release's format."""
    if not storage or prec == m.weight_dtype:
        return m, ""
    lin = storage.get("linear", prec)
    release = m.quantized_formats.get(lin, {})
    storage = {**storage, **release}
    if release:
        source = "; ".join(x for x in (source, m.sources.get(f"quantized_formats.{lin}", "")) if x)
    per = {k: storage.get(k, lin) for k in MODULE_KINDS}
    per = {k: v for k, v in per.items() if v != prec}
    if not per:
        return m, ""
    what = ", ".join(f"{k} {v}" for k, v in sorted(per.items()))
    data = m.model_dump()
    data.update(weight_dtype=prec, weight_dtypes=per)
    data["sources"] = {**m.sources, "weight_dtype": source or "the row's precision", "weight_dtypes": source or
                       "the row's precision"}
    kept = ", ".join(f"{k} {v}" for k, v in sorted(release.items()))
    return type(m).model_validate(data), f"checkpoint formats: {prec} matmuls; {what}" + (
        f" (the model's published {lin} release keeps {kept}: catalog quantized_formats)" if release else "")


# an NVIDIA ModelOpt checkpoint (its quantisation config carries an FP8 KV cache), named by the model or precision
_MODELOPT = re.compile(r"model\s*opt|\bnvidia\b", re.I)
# a KV type the row states: 'FP8 KV cache', 'kv_cache_dtype=fp8', 'KV cache: BF16', 'fp8_e4m3 KV', 'FP8 (e4m3) KV',
# '--kv-cache-dtype auto', QServe's and LMDeploy's 'KV4' / 'KV8', llama.cpp's 'q8_0 KV cache' / '-ctk q8_0' (its q8_0 and
# q4_0 cache blocks carry an FP16 scale per 32: 8.5 and 4.5 bits, read as INT8 and INT4, the scales not counted)
_KV_TYPE = r"(fp8(?:[_-]?e4m3(?:fn)?|[_-]?e5m2)?|e4m3|e5m2|bf16|bfloat16|fp16|float16|half|int8|int4|nvfp4|fp4|q8_0|q4_0|auto)"
_KV_STATED = re.compile(rf"\bkv[\s_-]*(?:cache)?[\s_-]*(?:dtype|type|precision|format|quant\w*)?\s*(?:=|:|in|is|as)?\s*"
                        rf"{_KV_TYPE}(?![\w])|(?<![\w]){_KV_TYPE}(?:\s*\([^()]*\))?[\s_-]*kv\b|"
                        rf"(?<![\w-])(?:-ctk|--cache-type-k)[\s=]+{_KV_TYPE}(?![\w])|\bkv([48])\b", re.I)
_KV_OF = {"e4m3": "fp8", "e5m2": "fp8", "bfloat16": "bf16", "fp16": "bf16", "float16": "bf16", "half": "bf16",
          "nvfp4": "fp4", "q8_0": "int8", "q4_0": "int4", "4": "int4", "8": "int8", "auto": None}
# (FP16 and BF16 hold the same bytes; 'auto': the model's own type)
# the KV phrase as the precision column writes it, with the word 'cache' after it: 'BF16, INT4 KV cache (KIVI)'
_KV_CLAUSE = re.compile(rf"(?:{_KV_STATED.pattern})(?:[\s_-]*cache)?", re.I)


def weight_words(precision: str) -> str:
    """The precision column less the words that name the KV cache ('BF16, INT4 KV cache' -> 'BF16'): the cache's type
    is read apart (stated_kv_dtype), and its format is not the weights' (before, 'BF16, INT8 KV cache' stored INT8
    weights). '' where the column names only the cache ('FP8 KV'): the weights are then the model's own."""
    rest = re.sub(r"\s*\(\s*\)|\s+(?=,)", "", re.sub(r"\s+", " ", _KV_CLAUSE.sub(" ", precision or "")))
    return re.sub(r"^[\s,;/+&-]+|[\s,;/+&(-]+$", "", rest)


def stated_kv_dtype(row: dict) -> tuple[str | None, str] | None:
    """(the KV cache type the row states, None for the model's own ('auto'); the words) or None where it states
    none: 'FP8 KV cache', 'kv_cache_dtype=fp8', 'KV cache BF16', 'fp8_e4m3 KV'. A KV cache named for another reason
    ('kv_cache_free_gpu_mem_fraction 0.9', 'KV cache hits') states no type."""
    m = _KV_STATED.search(row_text(row, ("model", "precision", "notes", "parallelism")))
    if m is None:
        return None
    t = next(x for x in m.groups() if x).lower()
    t = "fp8" if t.startswith("fp8") else t
    return _KV_OF.get(t, t), m.group(0).strip()


def engine_kv_dtype(row: dict, engine: str | None, prec: str, kv: str | None) -> tuple[str | None, str]:
    """The KV type of a row whose precision rule assumed an FP8 cache (a bare 'FP8'), on an engine that keeps the
    model's own type unless asked (catalog/engines: kv_cache_dtype 'auto', vLLM and SGLang): the model's own
    (None), with the engine's source; unchanged where the row names a ModelOpt/NVIDIA checkpoint or a KV type."""
    if kv != "fp8" or prec not in ("fp8", "fp8_block") or engine is None:
        return kv, ""
    eng = load_engine(engine)
    if eng.get("kv_cache_dtype") != "auto" or _MODELOPT.search(row_text(row, ("model", "precision"))) or \
            stated_kv_dtype(row) is not None:
        return kv, ""
    return None, (f"catalog/engines/{engine}.yaml: {eng['sources']['kv_cache_dtype']}: the row states no KV type, "
                  "so the cache holds the model's own")


def engine_of(row: dict) -> str | None:
    """The serving engine a row's source or notes name, if any ('trtllm', 'vllm', 'sglang'): the first one named, less
    those named as what it is compared with ('SGLang Runtime (vs. TensorRT-LLM, vLLM)': SGLang); where every one is
    a comparison's, the first."""
    text = " ".join(row.get(c, "") for c in ("source", "notes", "parallelism"))
    named = sorted((m.start(), engine) for engine, pattern in (
        ("trtllm", r"tensorrt[- ]?llm|\btrt[- ]?llm\b"), ("vllm", r"\bvllm\b"), ("sglang", r"\bsglang\b"))
        for m in re.finditer(pattern, text, re.I))
    if not named:
        return None
    own = [e for at, e in named if not _COMPARED.search(text[max(0, at - 40):at])]
    return (own or [e for _, e in named])[0]


# the words before an engine that name it as a baseline: 'vs. TensorRT-LLM', 'compared with vLLM', '(vs. TRT-LLM, vLLM)'
_COMPARED = re.compile(r"\b(?:vs\.?|versus|compared\s+(?:to|with)|against|than|over|baselines?:?)\s*(?:[\w.-]+\s*(?:,|and|or)"
                       r"\s*){0,3}$", re.I)


def _diagnose(row: dict, su: _Setup, mode: str) -> list[str]:
    """Conditions known to pull a prediction away from the measurement (shown beside the worst rows)."""
    out = []
    fill = float(arch.model_weight_bytes(su.m, su.prec)) / su.layout.pp / (su.G * su.system.chip.hbm_capacity_bytes)
    if fill > 0.5 and su.B is None and mode in ("run", "decode"):
        out.append(f"weights fill {fill:.0%} of HBM: the KV pool, and so the batch, hangs on the engine's own "
                   "reservation beside them (serving/engine_memory.py), which a release can change")
    pri = su.priors
    if su.prec == "fp4" and pri is not None and not any(k.startswith("eta_mm.fp4") for k in pri.curves) and \
            su.system.chip.widened_note(su.prec) is None:
        out.append("no measured FP4 GEMM for this chip: the FP4 matmuls run at eta_flop")
    if re.search(r"weight-only|awq", row["precision"], re.I):
        out.append("weight-only quantised kernels dequantise on the fly and stream below eta_bw "
                   "(the row's notes give the achieved bandwidth)")
    if "preliminary" in row["notes"].lower():
        out.append("the source calls the figure preliminary")
    if re.search(r"\bv0\.\d", row["source"]) and su.engine in ("trtllm", None):
        out.append("an early engine release (TensorRT-LLM v0.x, 2023); the v1.0-era tables run such models faster")
    if "batch from footnote" in row["notes"].lower():
        out.append("the batch is read off the order of a footnote")
    if row["confidence"] in ("paraphrased", "interpolated"):
        out.append(f"the figure is {row['confidence']}")
    if su.m.moe is not None and su.layout.ep > 1:
        out.append("uniform expert routing assumed (no load imbalance)")
    return out


def _scope_units(row: dict, system: System) -> dict[str, float | None]:
    """How many of each scope a row's whole setup holds: its chips ('gpu') and nodes ('node'; None where unknown)."""
    G = chips_of(row, system)[0]
    return {"gpu": G, "node": G / (per_node_of(row) or system.domain_chips) if G else None}


_PHASE_WORDS = r"\b(?:input|output|prompt|prefill|decod(?:e|ing)|generat\w*|completions?|context|ctx|gen)\b"
_RATE_WORD = r"\s*(?:tpgs|tps|throughput|tok(?:en)?s?\s*/\s*s\w*|rate)\b"


def notes_phase(row: dict) -> tuple[str, str] | None:
    """The phase the notes name beside a rate ('prefill TPGS', 'decode throughput') where the metric names none
    ('throughput per GPU') and the notes name exactly one: (phase, the words), else None."""
    if re.search(_PHASE_WORDS, f"{row['metric']} {row['unit']}", re.I):
        return None
    said = {ph: re.search(rf"\b{w}{_RATE_WORD}", row["notes"], re.I)
            for ph, w in (("prefill", "prefill"), ("decode", r"decod(?:e|ing)"))}
    named = [(ph, m.group(0)) for ph, m in said.items() if m]
    return named[0] if len(named) == 1 else None


def _unsized_request_rate(row: dict, metric: str) -> bool:
    """A whole run's request rate (requests/s, samples/s, QPS) with no output length stated nor a context."""
    q = quantity_of(row["metric"], row["unit"])[0]
    return q == "requests_per_s" and lengths_of(row)[1] is None and context_of(row) is None


_WAYS = ("tp", "ep", "dp", "pp", "cp", "dep", "tep", "moe_tp")


def stated_split(row: dict) -> tuple[str, str]:
    """(the row's parallelism text, how it was read): its parallelism column, or where that is empty the clauses of its
    notes that state ways ('…; TP8', 'tensor parallel 8', 'tp=8, ep=8'), a flag ('DP+EP', 'attention DP'), a search
    ('best TP/PP/DP over 8 GPUs') or a deployment's pools ('4 prefill instances x 2 GB200 + 1 decode instance x 8
    GB200'), less any naming a comparison ('vs. TP4')."""
    par = row.get("parallelism", "") or ""
    if par.strip():
        return par, ""
    said = [c.strip() for c in re.split(r"[;|]", row.get("notes", "") or "")
            if (any(k in split_of(c) for k in _WAYS + ("ep_flag", "dp_flag")) or _BEST_SPLIT.search(c)
                or pools_of(role_words(c))) and not _COMPARED_SPLIT.search(c)]
    if not said:
        return par, ""
    text = "; ".join(said)
    return text, f"the parallelism column is empty: the split read from the notes, {text!r}"


# a clause that leaves the split to a search, as the column says it: 'best TP/PP/DP over 8 GPUs', 'best split'
_BEST_SPLIT = re.compile(r"\bbest\b[^;|]{0,20}?\b(?:TP|PP|DP|EP|split|parallel\w*|layout|mapping)\b", re.I)
_COMPARED_SPLIT = re.compile(r"\b(?:vs\.?|versus|compared|baseline|than|instead of)\b", re.I)


def split_of(par: str) -> dict[str, int | bool]:
    """The ways a parallelism text names: tp, dp (attention data-parallel), ep, moe_tp (experts split), dep, pp.

    Reads 'TP8', 'tp=8', '--tp 8', 'DP2-TP4', 'TP4xPP2', 'EP8', 'DP8' / 'attention-DP8' / 'DP-attn 8', 'DEP8' (data-parallel attention
    with experts over the same chips), 'TEP8' (tensor-parallel attention, experts over the same chips), 'MoE-TP4', TGI's
    '--num-shard 8' (its shards split every layer: TP8), 'CP16' (context parallel: one sequence's tokens over 16 groups);
    a bare 'EP' or 'DP attention' without a number is a flag (as is vLLM's '--enable-expert-parallel'), and 'wide EP' /
    'large-scale EP' are both flags (attention data-parallel beside the experts)."""
    p = par.lower().replace("_", "-")
    p = re.sub(r"(\d)\s*[x×*]\s*(?=[a-z])", r"\1 ", p)  # 'TP4xPP2', 'DP2×TP4': ways multiplied
    # words for the same ways: 'tensor parallel 8', 'tensor-parallel-size=8', '8-way TP', '--tp-size 8'
    for short, word in (("tp", "tensor"), ("ep", "expert"), ("dp", "data"), ("pp", "pipeline"), ("cp", "context")):
        p = re.sub(rf"\b{word}[- ]?parallel(?:ism)?(?:[- ]?size)?\s*(?:=|:|of)?\s*(\d+)", rf"{short}\1", p)
        p = re.sub(rf"\b(\d+)[- ]way[- ](?:{short}\b|{word}[- ]?parallel(?:ism)?)", rf"{short}\1", p)
        p = re.sub(rf"--{short}-size\s*=?\s*(\d+)", rf"{short}\1", p)
        p = re.sub(rf"\b{short}-degree\s*(?:=|:)?\s*(\d+)", rf"{short}\1", p)  # Neuron's 'tp_degree=32'
    p = re.sub(r"\b(\d+)\s*(?:independent\s+|data[- ]parallel\s+)?replicas\b", r"dp\1", p)  # 'TP1 x 8 replicas'
    p = re.sub(r"(?:--)?num-shards?\s*(?:=|:)?\s*(\d+)", r"tp\1", p)  # TGI's '--num-shard 8': tensor-parallel shards
    num = r"\s*(?:[-\s]?size\s*[=:]?|=|:|-)?\s*(\d+)"  # 'tp8', 'tp=8', 'tp_size=8', 'ctx_tp_size: 4'
    out: dict[str, int | bool] = {}
    for key, pat in (("moe_tp", rf"\b(?:moe|expert)[- ]?tp{num}"), ("dep", rf"\bdep{num}"), ("tep", rf"\btep{num}"),
                     ("tp", rf"(?<![a-z])(?<![a-z]-)(?:--)?tp{num}"), ("ep", rf"(?<![a-z])(?:--)?ep{num}"),
                     ("pp", rf"(?<![a-z])(?:--)?pp{num}"), ("cp", rf"(?<![a-z])(?:--)?cp{num}"),
                     ("dp", rf"(?<![a-z])(?:--)?(?:attention[- ]?|attn[- ]?)?dp(?:[- ]?attn|[- ]?attention)?{num}")):
        m = re.search(pat, p)
        if m:
            out[key] = int(m.group(1))
    # (a flag as engines spell it: vLLM's --enable-expert-parallel, a bare 'expert parallel')
    if re.search(r"\bep\b|dp\s*\+\s*ep|ep per|wide-ep|large[- ]scale[- ]expert|"
                 r"\bexpert[- ]parallel(?:ism)?\b(?!\s*(?:=|:|of)?\s*\d)", p) and "ep" not in out:
        out["ep_flag"] = True
    # wide (large-scale) EP is attention data-parallel beside experts spread over every rank: vLLM's wide-EP
    # deployments (--data-parallel-size with --enable-expert-parallel), SGLang's large-scale EP (--enable-dp-attention),
    # TensorRT-LLM's wide EP (attention DP)
    if re.search(r"dp[- ]?attn|dp[- ]attention|attention[- ]dp|data-parallel attention|dp\s*\+\s*ep|wide[- ]?ep(?:\b|\d)|"
                 r"large[- ]scale[- ](?:ep\b|expert)", p) and "dp" not in out:
        out["dp_flag"] = True
    return out


# Splitwise's words too: a 'prompt machine' prefills, a 'token machine' decodes (the machine, instance or pool after)
_POOL_OF = r"(?=\s+(?:machines?|instances?|pools?)\b)"
_ROLE = {"prefill": rf"prefill|\bcontext\b|\bctx\b|\bprompt{_POOL_OF}",
         "decode": rf"decod(?:e|ing)|\bgeneration\b|\bgen\b|\btoken{_POOL_OF}"}


# the token rate each role's workers produce
_ROLE_COUNTS = {"prefill": "input_tokens_per_s", "decode": "output_tokens_per_s"}


def sole_role(par: str) -> tuple[str, str] | None:
    """The one role a parallelism text names, in a clause that gives that role's workers a split of their own
    ('decode EP48 (DP attention)', 'generation: DEP16'), and that clause; None where it names both roles, neither,
    or a role word with no split beside it ('TP8, speculative decoding', 'context parallelism CP2')."""
    clauses = [c for c in _top_level(role_words(par), lambda t: re.split(_CLAUSES, t)) if c.strip()]
    named = {r for r, pat in _ROLE.items() if re.search(pat, par, re.I)}
    if len(named) != 1:
        return None
    role = named.pop()
    for c in clauses:
        if re.search(_ROLE[role], c, re.I) and not re.search(r"specul\w*|context[\s_-]*parallel|\bcp\s*\d", c, re.I) \
                and any(k in split_of(c) for k in _WAYS):
            return role, c.strip()
    return None


def role_split(par: str, phase: str | None) -> str:
    """The parallelism text of one role where a disaggregated row gives each pool its own split ('prefill EP32,
    decode EP72'; 'prefill pool: 1 worker TP2; decode pool: 2 workers TP4'; '1 prefill node (TP8) + 1 decode node
    (TP8)'): the clauses naming the other role are left out, those naming neither kept. Else the text as it is."""
    par = role_words(par)
    if phase not in _ROLE or not all(re.search(r, par, re.I) for r in _ROLE.values()):
        return par
    other = _ROLE["decode" if phase == "prefill" else "prefill"]
    parts = _top_level(par, lambda t: re.split(rf"({_CLAUSES})", t))
    return "".join(p for p in parts if not (re.search(other, p, re.I) and not re.search(_ROLE[phase], p, re.I)))


def _top_level(par: str, split) -> list[str]:
    """`split` applied to a text outside its brackets only: 'prefill: 4 nodes (EP32, DP32); decode: …' keeps
    '(EP32, DP32)' in the prefill's clause (a comma inside brackets is no clause of its own)."""
    depth, held = 0, []
    for ch in par:
        depth += ch in "([" and 1 or (-1 if ch in ")]" and depth else 0)
        held.append("\x00" if ch == "," and depth else ch)
    return [p.replace("\x00", ",") for p in split("".join(held))]


_WORKER = r"(?:workers?|instances?|nodes?|servers?|engines?|replicas?)"
_CLAUSES = r"\s*(?:[;|,]|\s[+/]\s|\band\b)\s*"
# a pool named by its role's letter with its split beside it: '1P(DEP4) 1D(DEP8)', '2P (TP8) + 1D (DEP16)', '1P TP4 / 2D TP8'
_ROLE_LETTER = re.compile(r"(?<![\w.-])(\d+)\s*([PD])(?=\s*[(\[:]|\s*(?:dep|tp|ep|dp|attn|pp)[\s=-]*\d)", re.I)
# what the count before a role counts: its workers (the default), nodes, or chips ('32 prefill GPUs (EP32)')
_POOL_CHIPS = r"(?:gpus?|chips?|cards?|accelerators?|devices?|[a-z]*\d+[a-z]*s)"


def role_words(par: str) -> str:
    """A parallelism text with each pool named by its role's letter written out as its own clause: '1P(DEP4)
    1D(DEP8)' -> '; 1 prefill (DEP4); 1 decode (DEP8)' ('1P1D', with no split beside a letter, is left as it is),
    and a tail that says 'each' after a list of pools given to every pool (_each_tail)."""
    return _each_tail(_ROLE_LETTER.sub(lambda g: f"; {g.group(1)} {'prefill' if g.group(2) in 'pP' else 'decode'} ",
                                       par))


# a bracket that says 'each' closing the text, or 'each with …' after the last pool: '1 prompt machine + 1 token
# machine (8 GPUs each, TP8)', '2 prefill nodes + 2 decode nodes each with 8 GPUs (TP8)'
_EACH_TAIL = re.compile(r"\s*(\([^()]*\b(?:each|apiece)\b[^()]*\)|,?\s*\beach\s+with\b[^;|]*)\s*$", re.I)


def _each_tail(par: str) -> str:
    """The text with a tail that says 'each' after a list of pools written after every pool of the list with no
    bracket of its own ('1 prompt machine + 1 token machine (8 GPUs each, TP8)' -> '1 prompt machine (8 GPUs each,
    TP8) + 1 token machine (8 GPUs each, TP8)'); a tail after one pool, or after a clause naming no role, is left."""
    m = _EACH_TAIL.search(par)
    if not m:
        return par
    parts = _top_level(par[:m.start()], lambda t: re.split(rf"({_CLAUSES})", t))
    pools = [i for i, p in enumerate(parts[::2]) if any(re.search(r, p, re.I) for r in _ROLE.values())]
    if len(pools) < 2 or pools[-1] != len(parts[::2]) - 1:
        return par
    tail = " " + m.group(1).lstrip(" ,")
    return "".join(p + tail if i % 2 == 0 and i // 2 in pools and "(" not in p else p
                   for i, p in enumerate(parts)) + par[m.end():]


def pools_of(par: str) -> dict[str, tuple[int, str, int | None, str]] | None:
    """Each pool of a disaggregated deployment by role: (its count, the split of one worker as text, the chips of
    one worker where the text counts them: 'instances x 2 GB200', what the count counts: 'worker', 'node' or
    'chip'), or None where it does not give both pools' counts. Reads '1 prefill worker (TP4 EP4) + 4 decode workers
    (TP8 EP8)', '2 prefill (TP4) + 2 decode (TP4)', 'prefill pool: 1 worker TP2; decode pool: 2 workers TP4', '4
    prefill instances x 2 GB200 + 1 decode instance x 8 GB200' (or '(2 GB200 each)'), '1P(DEP4) 1D(DEP8)', '2
    prefill nodes (TP8) + 2
    decode nodes (DEP16)', '32 prefill GPUs (EP32) + 96 decode GPUs (EP96)', and 'xPyD' beside each role's split
    ('1P4D; prefill TP4, decode DEP8'); a clause that names neither role (a split or a flag for both) belongs to
    both, as in role_split."""
    par = role_words(par).replace("_", " ")  # TensorRT-LLM's keys: 'num_ctx_servers=2, ctx_tp_size=4'
    xpyd = re.search(r"(?<![\w.-])(\d+)\s*P\s*(\d+)\s*D\b", par, re.I)
    out = {}
    for i, (role, other) in enumerate((("prefill", "decode"), ("decode", "prefill"))):
        own = _own_clauses(par, role, other)
        n = (re.search(rf"(?<![\w.-])(\d+)\s*(?:x\s*|×\s*)?(?:{_ROLE[role]})", own, re.I)
             or re.search(rf"(?<![\w.-])(\d+)\s*{_WORKER}\b", own, re.I))
        after = None if n else _count_after(own, role)
        workers = int(n.group(1)) if n else after[0] if after else (int(xpyd.group(1 + i)) if xpyd else 0)
        if workers < 1 and not xpyd and any(k in split_of(own) for k in _WAYS):
            workers = 1  # a role named with its own split and no count: one worker ('prefill (TP1) + decode (TP1)')
        if workers < 1:
            return None
        chips = _WORKER_CHIPS.search(own)
        noun = re.match(rf"\s*(?:x\s*|×\s*)?(?:(?:{_ROLE[role]})\s*(?:pool\s*)?)?(?:((?:nodes?|machines?)\b)|({_POOL_CHIPS})\b)?",
                        own[n.end(1):], re.I) if n else None
        counts = "node" if noun and noun.group(1) else "chip" if noun and noun.group(2) else \
            after[1] if after else "worker"
        out[role] = (workers, role_split(par, role), int(next(c for c in chips.groups() if c)) if chips else None,
                     counts)
    return out


def _own_clauses(par: str, role: str, other: str) -> str:
    """The clauses of a parallelism text that name one role and not the other, joined."""
    return " ".join(c for c in _top_level(par, lambda t: re.split(_CLAUSES, t))
                    if re.search(_ROLE[role], c, re.I) and not re.search(_ROLE[other], c, re.I))


def pools_hardware(row: dict, system: System) -> list[str]:
    """The chips a disaggregated row's pools run on where it names more than one: a pool's own clause naming a part
    ('2 prompt machines (DGX-H100) + 2 token machines (DGX-A100)'; a pool naming none runs on the hardware column's),
    or the hardware column naming two ('DGX-H100 + DGX-A100', 'H100 (prefill) / A100 (decode)'); else []."""
    par = role_words(row["parallelism"]).replace("_", " ")
    named = [_part_of(_own_clauses(par, role, other)) for role, other in (("prefill", "decode"), ("decode", "prefill"))]
    parts = [p or system.chip.name for p in named] if any(named) else []
    column = {p for c in _top_level(row["hardware"], lambda t: re.split(r"\s*(?:[+/;,&]|\band\b)\s*", t))
              if (p := _part_of(c))}
    parts += sorted(column) if len(column) > 1 else []
    return list(dict.fromkeys(parts)) if len(set(parts)) > 1 else []


def _part_of(text: str) -> str | None:
    """The catalog chip a text names, or None."""
    m = _best(text, _system_candidates()) if text.strip() else None
    return load_system(m.entry).chip.name if m else None


def pools_words(par: str) -> str:
    """The parallelism text where it gives both pools, each its count or its own split ('context: 1 instance TEP8,
    generation: 1 instance DEP8', 'ctx TP2 x2 + gen TP4 x1'): disaggregated without the word; else ''."""
    return par.strip() if pools_of(par) else ""


def _count_after(own: str, role: str) -> tuple[int, str] | None:
    """A pool's count written after its role (and what it counts): 'prefill 2x TP8', 'ctx: 2 x TP4', 'prefill:
    TP4 ×2', 'ctx TP2 x2', 'prefill GPUs: 3', 'prefill workers 4', 'num ctx servers=2' (TensorRT-LLM's keys), or
    None. A '× n' before a chip noun counts one worker's chips ('instances x 2 GB200'), not workers."""
    r, chip = _ROLE[role], r"(?:gpus?|chips?|cards?)"
    m = re.search(rf"(?:{r})\s*(?:pool\s*)?(?:({_WORKER}|servers?)|(nodes?)|({_POOL_CHIPS}))\s*[:=]?\s*(\d+)\b"
                  r"(?!\s*(?:x|×))", own, re.I)  # 'prefill GPUs: 3', 'prefill workers 4'
    if m:
        return int(m.group(4)), "node" if m.group(2) else "chip" if m.group(3) else "worker"
    m = re.search(rf"\bnum\s*(?:{r})\s*(?:servers?|{_WORKER})\s*[:=]\s*(\d+)", own, re.I)  # 'num ctx servers=2'
    if m:
        return int(m.group(1)), "worker"
    m = (re.search(rf"(?:{r})\s*(?:pool\s*)?[:=]?\s*(\d+)\s*(?:x|×)(?=\s*[a-z(])(?!\s*{chip}\b)", own, re.I)
         or re.search(rf"\b(?:tp|dep|tep|ep|dp)\s*\d+\s*(?:\([^()]*\)\s*)?(?:x|×)\s*(\d+)\b(?!\s*(?:{chip}|[a-z]*\d))",
                      own, re.I))  # 'prefill 2x TP8', 'ctx: 2 x TP4'; 'prefill: TP4 ×2'
    return (int(m.group(1)), "worker") if m else None


# the chips of one worker beside its count: 'instances x 2 GB200', 'instances of 8 GPUs', 'instances (2 GB200 each)',
# '1 decode instance (8 GB200)' (brackets after a plural count the pool's chips unless they say 'each')
_CHIP_NOUN = r"(?:x\s*)?(?:gpus?|chips?|cards?|[a-z]*\d+[a-z]*)\b"
_WORKER_CHIPS = re.compile(rf"{_WORKER}\s*(?:(?:x|×)\s*(\d+)\b|(?:of|with)\s+(\d+)\s*{_CHIP_NOUN}|"
                           rf"\(\s*(\d+)\s*{_CHIP_NOUN}\s*(?:each|apiece|per\s+\w+)\s*\))|"
                           rf"(?:worker|instance|node|server|engine|replica)\s*\(\s*(\d+)\s*{_CHIP_NOUN}\s*\)", re.I)


def _pool_workers(n: int, counts: str, G: int, node_chips: int) -> tuple[int, str]:
    """Workers of G chips in a pool the text counts as n workers, n chips, or n nodes of node_chips (a worker wider
    than a node spans several: '2 decode nodes (DEP16)' is one worker of 16 chips), and how it was read."""
    if counts == "chip" and n >= G:
        return n // G, f"{n} chips: {n // G} worker(s) of {G}"
    if counts == "node" and G > node_chips and n * node_chips >= G:
        return n * node_chips // G, f"{n} nodes of {node_chips}: {n * node_chips // G} worker(s) of {G} chips"
    return n, ""


def _layout(row, m: Model, system: System, prec: str, G_row: int | None, phase: str | None, al: Aliases,
            said: list[str] | None = None):
    """Chips per replica, replicas, and the split, from the row's parallelism text (or the engine rule).

    Attention runs tp ways within each of dp data-parallel groups; experts ep ways, each split moe_tp ways;
    a replica spans max(tp·dp, ep·moe_tp) chips. Two conventions for 'TP t, DP d': the chips are t·d
    (aiconfigurator, TensorRT-LLM's attention DP), or t with d groups of t/d (SGLang's --tp t --dp d) —
    read off the row's chip count where it tells them apart. 'DEP n': dp = ep = n, tp 1; 'DP attention'
    without a number: attention data-parallel over the replica's chips. 'PP p': the replica's G chips are one of
    p streams of a pipeline (roofline.Layout.pp), which spans G·p of the row's chips: each choice above is made
    within n_chips / p, and a pipeline wider than the row's chips is refused (ValueError)."""
    # one role's instance of stated chips ('4 prefill instances x 2 GB200', 'prefill: 4 instances (2 GB200 each)')
    pools = pools_of(row["parallelism"]) if phase in ("prefill", "decode") else None
    inst = re.search(rf"{phase} instances?\s*(?:x\s*)?(\d+)", row["parallelism"].lower()) if phase else None
    inst = pools[phase][2] if pools and pools[phase][2] else (int(inst.group(1)) if inst else None)
    par = role_split(row["parallelism"], phase).lower()
    s, G_row = _chips_of_ranks(split_of(par), system, row["parallelism"], said, G_row)
    if "dep" in s:
        s.setdefault("dp", s["dep"])
        s.setdefault("ep", s["dep"])
        s.setdefault("tp", 1)
    if "tep" in s:  # TensorRT-LLM's TEP n: attention tensor-parallel over n chips, the experts n ways over the same
        s.setdefault("tp", s["tep"])
        s.setdefault("ep", s["tep"])
    tp, dp, ep, mtp = (int(s.get(k, 0)) for k in ("tp", "dp", "ep", "moe_tp"))
    dpf = bool(s.get("dp_flag"))
    # pipeline stages: the replica's G chips are one of pp streams (roofline.Layout.pp), so a pipeline spans
    # G·pp of the row's chips and every choice of G below is made within G_row / pp of them
    pp = max(1, int(s.get("pp", 1) or 1))
    G_pipe = G_row // pp if G_row else None
    rep_note = ""
    if tp and dp and m.moe is not None and not _attention_dp_stated(par, s) and \
            (G_row is None or tp * dp * pp <= G_row):
        why = _dp_groups_are_replicas(row, m, system, prec, tp * pp)
        if why is None:  # 'DP2-TP4' of an MoE: dp engines of tp chips each
            rep_note = (f"'DP{dp}' with TP{tp} and no attention data parallelism stated: {dp} independent replicas "
                        f"of TP{tp}{f' PP{pp}' if pp > 1 else ''} (as SGLang's --dp without --enable-dp-attention, "
                        f"or separate engines)")
            G_row, dp = G_row or tp * dp * pp, 0
        else:
            rep_note = why
    if tp and dp:
        sglang = G_pipe is not None and tp * dp > G_pipe and tp <= G_pipe and tp % dp == 0
        a_tp, a_dp = (tp // dp, dp) if sglang else (tp, dp)
    elif dp:
        a_tp, a_dp = (max(1, G_pipe // dp) if G_pipe and m.moe is None else 1), dp
    elif tp and dpf and m.moe is not None:
        a_tp, a_dp = 1, tp  # 'TP8 … DP attention': attention data-parallel over the tensor-parallel group
    elif tp:
        a_tp, a_dp = tp, 1
    else:
        a_tp, a_dp = (1 if dpf else 0), 0
    if rep_note and said is not None:
        said.append(rep_note)  # how a stated DP was read (the note returned below is for an unstated split)
    note = ""
    stated = max(a_tp * a_dp, ep * max(mtp, 1) if ep else mtp)
    if inst:
        G = inst
    elif stated:
        G = stated
    elif "single" in par or G_row == 1:
        G = 1
    elif dpf and m.moe is not None and G_row:
        G = max(1, G_pipe)
    else:
        G = _replica_chips(m, system, prec, max(1, G_pipe) if G_row else _unstated_chips_max(m, system, prec, pp), al, pp)
        note = (f"replica of {G} chip(s) by the engine rule — " + al.source("engine.replica_weight_fraction"))
        if G > system.domain_chips:
            note += (f"; {'' if G_row else 'the row states no chip count and '}one {system.name} domain of "
                     f"{system.domain_chips} cannot hold the weights, so the replica spans {G // system.domain_chips} "
                     "domains (assumed)")
    if m.moe is None:  # a dense model's data-parallel groups are replicas
        G = a_tp if (a_tp and not inst) else G
    if pp > 1 and G_row and not inst and G * pp > G_row:
        raise ValueError(f"parallelism {row['parallelism']!r}: a pipeline of {pp} stages of {G} chip(s) spans "
                         f"{G * pp} chips, more than the row's {G_row}")
    if m.moe is None:
        n_rep = max(1, (G_row or G * max(a_dp, 1) * pp) // G) if not inst else 1
        return G, n_rep, Layout(tp=G, ep=1, pp=pp), note
    n_rep = max(1, (G_row or G * pp) // G) if not inst else 1
    if (ep or mtp or s.get("ep_flag")) and not re.search(r"\bep\s*1\b", par):
        layout = Layout(tp=min(a_tp or 1, G), ep=ep if ep else (G // mtp if mtp else G))
    elif not (tp or dp or dpf):
        layout = _default_split(m, system, prec, G, al, pp)
    else:
        layout = Layout(tp=a_tp or 1, ep=1)
    return G, n_rep, dataclasses.replace(layout, pp=pp), note


def _default_split(m: Model, system: System, prec: str, G: int, al: Aliases, pp: int = 1) -> Layout:
    """roofline.default_layout, an MoE's attention groups widened (tp doubled) until each chip holds its share of the
    weights within the engine's fraction of its memory: DeepSeek's layout keeps every non-expert weight on every
    chip (tp 1), which a 230 MB SRAM chip cannot (Mixtral's 3.3 GB); where even tp = G cannot hold them, the layout
    stays as it was (the weights do not fit, whatever the split)."""
    lay = default_layout(m, G)
    if m.moe is None:
        return lay
    room = float(al.engine["replica_weight_fraction"]) * G * system.chip.hbm_capacity_bytes
    W_all = float(arch.model_weight_bytes(m, prec))
    fits = lambda tp: float(held_weight_bytes(m, W_all, G, tp, prec, pp=pp)) <= room  # noqa: E731
    tp = lay.tp
    while tp < G and not fits(tp):
        tp *= 2
    return dataclasses.replace(lay, tp=min(tp, G)) if tp > lay.tp and fits(min(tp, G)) else lay


def _one_replica(m: Model, G_row: int, layout: Layout, system: System, prec: str,
                 al: Aliases) -> tuple[int, Layout, str]:
    """A stated batch on chips of unstated split: one replica over the row's chips serves it (with pipeline stages,
    one stream of them: roofline.Layout.pp) in the default split; (its chips, its layout, the split as words)."""
    G = max(1, G_row // layout.pp)
    lay = dataclasses.replace(_default_split(m, system, prec, G, al, layout.pp), pp=layout.pp)
    return G, lay, f"TP{G}" if m.moe is None else f"TP{lay.tp} EP{lay.ep}"


def _pool_worker(row, pool: tuple, m: Model, system: System, prec: str, al: Aliases, said: list[str] | None = None):
    """One pool of a disaggregated row (pools_of's (count, split text, chips, what the count counts)): its workers of
    one replica's chips (a dense worker of d data-parallel ranks is d workers), their chips, split and note, and how
    the count was read ('' where it counts workers)."""
    n, text, chips, counts = pool
    G, n_rep, lay, note = _layout({**row, "parallelism": text}, m, system, prec, chips, None, al, said)
    n, how = _pool_workers(n, counts, G * n_rep, per_node_of(row) or system.domain_chips)
    return n * n_rep, G, lay, note, how


def _pools_setup(row, pools: dict, m: Model, system: System, prec: str, al: Aliases, said: list[str]):
    """A disaggregated row's groups, one group's Pools, and its decode workers' chips, split and note: each pool's
    worker read as a row of its own split (a dense worker of d data-parallel ranks is d workers); the n_p prefill and
    n_d decode workers form gcd(n_p, n_d) identical groups."""
    per = {}
    for role, pool in pools.items():
        n, G, lay, note, how = _pool_worker(row, pool, m, system, prec, al, said)
        if how:
            said.append(f"the {role} pool counted in {pool[3]}s: {how}")
        per[role] = (n, G, lay, note)
    (n_p, G_p, lay_p, note_p), (n_d, G_d, lay_d, note_d) = per["prefill"], per["decode"]
    total, G_row = n_p * G_p + n_d * G_d, chips_of(row, system)[0]
    if G_row is not None and G_row != total:
        said.append(f"n_chips {G_row} is not the pools' {n_p} × {G_p} + {n_d} × {G_d} = {total} chips: the pools "
                    "are simulated as stated")
    g = math.gcd(n_p, n_d)
    lnote = "; ".join(f"{role} worker: {x}" for role, x in (("prefill", note_p), ("decode", note_d)) if x)
    return g, Pools(n_p // g, G_p, lay_p, n_d // g), G_d, lay_d, lnote


def _chips_of_ranks(s: dict, system: System, par: str, said: list[str] | None,
                    G_row: int | None = None) -> tuple[dict, int | None]:
    """The split in chips, and the row's chip count, where the chip's software counts cores (catalog
    `ranks_per_chip`: AWS Neuron's TP counts NeuronCores, 2 a chip on Inferentia2 / Trainium1, 4 logical ones on
    Trainium2): the tensor- and expert-parallel ways over the cores of whole chips, divided by r; data-parallel
    replicas and pipeline stages count replicas, not cores. A chip count equal to the split's span in cores
    ('TP32' on 32 of a trn1.32xlarge's) counts cores too: one replica, not r. A way that is not a whole number of
    chips (a TP1 on one of a chip's cores) is refused (ValueError)."""
    r = system.chip.ranks_per_chip or 1
    ways = {k: s[k] for k in ("tp", "ep", "moe_tp") if isinstance(s.get(k), int) and s[k] > 0}
    if r == 1 or not ways:
        return s, G_row
    bad = [f"{k.upper()}{v}" for k, v in ways.items() if v % r]
    if bad:
        raise ValueError(f"parallelism {par!r}: {', '.join(bad)} on {system.chip.name} counts its cores, {r} a chip "
                         f"(catalog ranks_per_chip): not a whole number of chips (a share of a chip is not expressed)")
    if said is not None:
        said.append(f"{', '.join(f'{k.upper()}{v}' for k, v in ways.items())} counts {system.chip.name} cores, "
                    f"{r} a chip ({system.chip.source_of('ranks_per_chip')}): "
                    f"{', '.join(f'{k.upper()}{v // r}' for k, v in ways.items())} in chips")
    span = max(ways.get("tp", 1), ways.get("ep", 1) * ways.get("moe_tp", 1)) * max(1, int(s.get("pp", 1) or 1)) * \
        max(1, int(s.get("dp", 1) or 1))
    if G_row is not None and G_row == span and G_row % r == 0:
        if said is not None:
            said.append(f"n_chips {G_row} is the split's span in {system.chip.name} cores: {G_row // r} chips")
        G_row //= r
    return {**s, **{k: v // r for k, v in ways.items()}}, G_row


def _attention_dp_stated(par: str, s: dict) -> bool:
    """The parallelism text says its data-parallel ranks share one replica's experts: attention DP in words
    ('DP attention', 'attention-DP8', 'dp-attn', '--enable-dp-attention'), DEP, or an expert-parallel split
    beside the DP ('DP8 EP8', 'DP+EP', 'expert parallel')."""
    return bool(s.get("dp_flag") or "dep" in s or "ep" in s or "moe_tp" in s or s.get("ep_flag")
                or re.search(r"atten|attn|expert", par))


def _dp_groups_are_replicas(row: dict, m: Model, system: System, prec: str, tp: int) -> str | None:
    """None where an MoE row's 'DP d, TP t' reads as d independent TP-t replicas; else why the d ranks are
    one replica sharing its experts: the engine the row names runs MoE data parallelism so (vLLM: the
    expert layers form one tensor-parallel group of d·t chips), or t chips cannot hold the weights."""
    if engine_of(row) == "vllm":
        return ("vLLM's data parallelism of an MoE model: the DP ranks run attention apart and the expert layers "
                "as one tensor-parallel group over all DP × TP chips (vLLM data-parallel deployment docs)")
    if float(arch.model_weight_bytes(m, prec)) > 0.9 * tp * system.chip.hbm_capacity_bytes:
        return (f"'DP' with TP{tp}: {tp} chips cannot hold the weights, so the DP ranks share one replica's "
                "experts (attention data-parallel)")
    return None


def _prompts_per_step(dp: int, tokens_max: int, ISL: int) -> int:
    """Prompts one prefill step takes: each of the dp attention ranks fills its own token budget."""
    return dp * max(1, tokens_max // ISL)


def _best_split(su: _Setup, mode: str, G_row: int, pri: Priors, al: Aliases) -> _Setup:
    """A row that names its chips but not their split ('best TP/PP/DP over 8 GPUs'): the tensor-parallel
    replica size (a power of two) whose replicas serve the most on the row's chips, as the roofline sees
    it — an assumption, stated with the row."""
    best, best_v = None, -1.0
    G, pp = 1, su.layout.pp  # stated pipeline stages stay: each replica is one of pp streams (roofline.Layout.pp)
    while G * pp <= G_row:
        layout = dataclasses.replace(_default_split(su.m, su.system, su.prec, G, al, pp), pp=pp)
        cand = _Setup(**{**su.__dict__, "G": G, "n_rep": max(1, G_row // G), "layout": layout,
                         "notes": [], "assumptions": []})
        v = _serving_value(cand, mode, "prior", pri, al, False)[0]
        if not isinstance(v, str) and v > best_v:
            best, best_v = cand, v
        G *= 2
    if best is None:
        return su
    split = (f"TP{best.G}" if su.m.moe is None else f"{best.G} chips (TP{best.layout.tp} EP{best.layout.ep})") + \
        (f" PP{pp}" if pp > 1 else "")
    note = (f"the split is not stated: the best the roofline finds over the row's {G_row} chips is {split} × "
            f"{best.n_rep} replica(s) (assumed)")
    return _Setup(**{**best.__dict__, "notes": su.notes, "assumptions": su.assumptions + [note]})


def _unstated_chips_max(m: Model, system: System, prec: str, pp: int = 1) -> int:
    """The most chips the engine rule may take where the row states none: one scale-up domain where it holds the
    weights, else as many domains as they need (an SRAM part: a 70B over hundreds of 230 MB Groq chips, four CS-3)."""
    W = float(arch.model_weight_bytes(m, prec)) / pp
    domain_bytes = system.domain_chips * system.chip.hbm_capacity_bytes
    return system.domain_chips * (1 if W <= domain_bytes else 2 ** math.ceil(math.log2(W / domain_bytes) + 1))


def _replica_chips(m: Model, system: System, prec: str, G_max: int, al: Aliases, pp: int = 1) -> int:
    """The engine rule's replica: the fewest chips (a power of two, at most G_max) holding the weights within the
    engine's fraction of their memory — 1/pp of the weights where the chips are one stream of a pipeline."""
    f = float(al.engine["replica_weight_fraction"])
    W_all = float(arch.model_weight_bytes(m, prec)) / pp
    G = 1
    while G < G_max and W_all > f * G * system.chip.hbm_capacity_bytes:
        G *= 2
    return min(G, G_max)


def _serving_value(su: _Setup, mode: str, basis: str, priors: Priors | None, al: Aliases, explain: bool):
    """(value in SI tokens/s for the whole row's chips, why-notes, derivation) — or (reason, ...) if impossible."""
    m, sysm, G = su.m, su.system, su.G
    spec = basis == "spec"
    kw = dict(G=G, precision=su.prec, kv_dtype=su.kv, basis=basis, priors=priors, layout=su.layout)
    why: list[str] = []
    tokens_max = int(al.engine["max_num_tokens"])
    if su.spec is not None and mode == "run" and su.B is not None:
        # a run at a stated batch with speculation ('tokens/s at batch 1, acceptance length 3.6'): its prompts
        # prefilled, then OSL tokens at tau a speculative step
        B = su.B
        held = _engine_batch(su, spec, al)
        if isinstance(held, str):
            return held, why, None
        if held < B:
            return (f"a batch of {B} needs the KV of {B} sequences of {_held_words(su)}; the KV pool of {G} × "
                    f"{sysm.chip.name} holds {held}"), why, None
        B_p = max(1, min(B, _prompts_per_step(int(su.layout.dp(G)), tokens_max, su.ISL)))
        pre = step(m, sysm, B=B_p, S=su.ISL, phase="prefill", **kw)
        sp = speculative_step(m, sysm, su.spec, B=B, S=su.ISL + su.OSL / 2, **kw)
        tau, t = float(sp.v("tau")), float(sp.v("t_spec"))
        t_pre = B / B_p * float(pre.v("t_step"))
        t_run = run_time(B / B_p, float(pre.v("t_step")), su.OSL, t / tau)
        why.append(f"batch {B} as stated, with speculation: prefill {t_pre:.3g} s + {su.OSL} tokens at {tau:.3g} a "
                   f"speculative step of {t * 1e3:.3g} ms (verify + {su.spec.K} draft steps of {su.spec.kind}) at "
                   f"context {su.ISL + su.OSL / 2:.0f}")
        return run_throughput(su.n_rep, B, su.OSL, t_run), why, None
    if su.spec is not None and mode not in ("per_user", "decode_fixed"):
        return ("speculative decoding at the engine's maximum load is not expressed: it needs a stated batch or "
                "concurrency"), why, None
    if mode in ("per_user", "decode_fixed"):  # the stated batch must fit: weights, and its KV at ISL + OSL
        held = _engine_batch(su, spec, al)
        if isinstance(held, str):
            return held, why, None
        if held < (su.B or 1):
            return (f"a batch of {su.B} needs the KV of {su.B} sequences of {_held_words(su)}; the KV pool of {G} × "
                    f"{sysm.chip.name} holds {held}"), why, None
    if mode in ("per_user", "decode_fixed") and su.spec is not None:
        B, S = su.B or 1, su.ISL + su.OSL / 2
        sp = speculative_step(m, sysm, su.spec, B=B, S=S, explain=explain, **kw)
        tau, t = float(sp.v("tau")), float(sp.v("t_spec"))
        why.append(f"speculative decode at batch {B}, context {S:.0f}: {tau:.3g} tokens per step of {t * 1e3:.3g} ms "
                   f"(verify + {su.spec.K} draft steps of {su.spec.kind})")
        value = tau / t if mode == "per_user" else su.n_rep * B * tau / t
        return value, why, (sp.tpot if explain else None)
    if mode in ("per_user", "decode_fixed"):
        B = su.B or 1
        S = su.ISL + su.OSL / 2
        st = step(m, sysm, B=B, S=S, phase="decode", explain=explain, **kw)
        t = float(st.v("t_step"))
        why.append(f"decode at batch {B}, context {S:.0f}: {st.bound}-bound, step {t * 1e3:.3g} ms")
        value = 1 / t if mode == "per_user" else su.n_rep * B / t
        return value, why, (st.t_step if explain else None)
    dp = int(su.layout.dp(G))  # attention DP: each rank's scheduler fills its own token budget
    if mode == "prefill":  # the engine's token budget, or fewer prompts where the row states its batch
        B_p = min(su.B or math.inf, _prompts_per_step(dp, tokens_max, su.ISL))
        st = step(m, sysm, B=B_p, S=su.ISL, phase="prefill", explain=explain, **kw)
        t = float(st.v("t_step"))
        why.append(f"prefill {B_p} prompt(s) of {su.ISL} per step: {st.bound}-bound")
        return su.n_rep * B_p * su.ISL / t, why, (st.t_step if explain else None)
    # engine batch for 'decode' and 'run'
    if su.B is not None:
        B = su.B
        why.append(f"batch {B} as stated")
        held = _engine_batch(su, spec, al)
        if isinstance(held, str):
            return held, why, None
        if held < B:  # the engine admits only what its pool holds (held_tokens: whole KV under no-evict)
            B = held
            why.append(f"but the KV pool holds {held} sequences of {_held_words(su)}: {held} run at a time, "
                       f"the rest wait")
    else:
        B = _engine_batch(su, spec, al)
        if isinstance(B, str):
            return B, why, None
        why.append(f"engine batch {B} (KV pool / KV per sequence at {_held_words(su)}"
                   f"{'' if spec else ', capped at ' + str(int(_batch_cap(su, al)))})")
    if mode == "decode":
        S = su.ISL + su.OSL / 2
        if su.speed is not None:
            B_x = _batch_at_speed(m, sysm, B, S, su.speed, kw)
            if B_x is None:
                t1 = float(step(m, sysm, B=1, S=S, phase="decode", **kw).v("t_step"))
                return (f"no decode batch reaches the row's {su.speed:.3g} tokens/s per user on {G} × "
                        f"{sysm.chip.name}: one sequence decodes at {1 / t1:.3g}"), why, None
            why.append(f"decode batch {B_x}: the largest of the engine's {B} whose step at context {S:.0f} meets "
                       f"≥ {su.speed:.3g} tok/s/user")
            B = B_x
        st = step(m, sysm, B=B, S=S, phase="decode", explain=explain, **kw)
        t = float(st.v("t_step"))
        why.append(f"decode at context {S:.0f}: {st.bound}-bound" + (f", step {t * 1e3:.3g} ms" if su.speed else ""))
        return su.n_rep * B / t, why, (st.t_step if explain else None)
    # a whole run: prefill every prompt, then OSL decode steps over the growing context
    B_p = B if spec else max(1, min(B, _prompts_per_step(dp, tokens_max, su.ISL)))
    n_prefill = B / B_p  # prompts are prefilled B_p at a time (the last chunk pro rata)
    pre = step(m, sysm, B=B_p, S=su.ISL, phase="prefill", **kw)
    dec = step(m, sysm, B=B, S=su.ISL + np.arange(su.OSL), phase="decode", **kw)
    if spec:  # everything overlapped: the run is bound by its total math or its total memory traffic
        math_s = float(n_prefill * pre.v("t_math") + np.sum(dec.v("t_math")))
        mem = lambda s: np.broadcast_to(s.v("t_weights") + s.v("t_kv"), np.shape(s.v("t_step")))  # noqa: E731
        mem_s = float(n_prefill * np.sum(mem(pre)) + np.sum(mem(dec)))
        t_run = max(math_s, mem_s)
        return su.n_rep * B * su.OSL / t_run, why, None
    t_prefill_total = n_prefill * float(pre.v("t_step"))
    t_dec = np.asarray(dec.v("t_step"), dtype=float)
    kinds = {str(b) for b in np.atleast_1d(dec.bound)}
    why.append(f"prefill {t_prefill_total:.3g} s ({pre.bound}-bound) + decode {t_dec.sum():.3g} s "
               f"({'/'.join(sorted(kinds))}-bound)")
    deriv = _explain_run(su, B, B_p, t_dec, al) if explain else None
    t_run = t_prefill_total + t_dec.sum()
    return su.n_rep * B * su.OSL / t_run, why, deriv


def _batch_at_speed(m: Model, sysm: System, B_max: int, S: float, speed: float, kw: dict) -> int | None:
    """The largest decode batch ≤ B_max whose step at context S takes at most 1/speed (the step grows with the
    batch), or None where one sequence is already slower."""
    t_of = lambda b: float(step(m, sysm, B=b, S=S, phase="decode", **kw).v("t_step"))  # noqa: E731
    limit = 1.0 / speed
    if t_of(1) > limit:
        return None
    lo, hi = 1, int(B_max)
    if t_of(hi) <= limit:
        return hi
    while hi - lo > 1:  # t(lo) meets the limit, t(hi) does not
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if t_of(mid) <= limit else (lo, mid)
    return lo


def _decode_held_to_speed(row: dict, su: _Setup, regime, scope: str, lnote: str, basis: str, measured: float,
                          scale: float, al: Aliases, explain: bool) -> Prediction | Unexpressed:
    """A decode rate held to a per-user speed with no concurrency stated (CloudMatrix's '1,943 tokens/s per NPU at
    TPOT < 50 ms'; a disaggregated deployment's 'tok/s/GPU at 30 tok/s/user'): the decode workers run the largest
    batch whose step meets the speed. Where the row gives both pools, its prefill workers must keep up (the output
    rate is at most n_p · B_p / t_prefill · OSL, as serving/sim/fastpath.disagg_rate caps it) and a rate per chip
    counts the prefill chips too, as the simulator's runs of such rows do."""
    rid, g = row["id"], group_of(row["id"])
    su = dataclasses.replace(su, speed=float(regime.user_speed), notes=list(su.notes), assumptions=su.assumptions)
    if lnote:
        su.assumptions.append(lnote)
    if regime.note:  # the decode workers' step, not a frontier's mean TPOT, is held to the limit here
        su.assumptions.append(regime.note.replace("the frontier's mean TPOT", "the decode step"))
    if regime.ttft_s:
        su.assumptions.append(f"the TTFT limit ({regime.ttft_s:.3g} s) is the prefill's, not the decode batch's: not "
                              "applied")
    pools = su.pools
    chips = su.G * su.n_rep
    if pools is not None and scope in ("gpu", "node"):  # both pools stated: the rate is over all of their chips
        su.assumptions[:] = [a for a in su.assumptions if not (a.startswith("prefill and decode disaggregated")
                                                               and a.endswith("the decode chips' rate"))]
        su.assumptions.append(f"both pools stated: a rate per {scope} is the deployment's output over its prefill and "
                              "decode chips together (as the simulator's runs of such rows count it)")
    out = []
    for b in (basis, "spec") if basis == "prior" else (basis,):
        value, why, deriv = _serving_value(su, "decode", b, su.priors, al, explain and b == basis)
        if isinstance(value, str):
            if b == basis:
                return Unexpressed(rid, g, value)
            out.append((None, why, deriv))
            continue
        if pools is not None:  # n_rep groups of n_d decode workers (value is one worker's per group) beside n_p prefill
            value *= pools.n_d
            kw = dict(G=pools.G_p, precision=su.prec, kv_dtype=su.kv, basis=b, priors=su.priors, layout=pools.layout_p)
            B_p = max(1, _prompts_per_step(int(pools.layout_p.dp(pools.G_p)), int(al.engine["max_num_tokens"]), su.ISL))
            t_p = float(step(su.m, su.system, B=B_p, S=su.ISL, phase="prefill", **kw).v("t_step"))
            cap = su.n_rep * pools.n_p * B_p / t_p * su.OSL
            if cap < value:
                why.append(f"but the {pools.n_p} prefill worker(s) of {pools.G_p} chips take {B_p} prompt(s) of "
                           f"{su.ISL} per {t_p * 1e3:.3g} ms step: {cap:.4g} output tok/s at most")
                value = cap
        out.append((value, why, deriv))
    (value, why, deriv), spec_v = out[0], (out[-1][0] if len(out) > 1 else out[0][0])
    if pools is not None:
        chips = su.n_rep * (pools.n_p * pools.G_p + pools.n_d * su.G)
        why.insert(0, f"{su.n_rep} group(s) of {pools.n_p} prefill worker(s) of {pools.G_p} chips + {pools.n_d} decode "
                      f"worker(s) of {su.G} chips: {chips} chips")
    per_node = per_node_of(row) or su.system.domain_chips
    div = chips if scope == "gpu" else (chips / per_node if scope == "node" else 1)
    pred, bound = value / div / scale, (spec_v / div / scale if spec_v is not None else None)
    why += su.notes + _diagnose(row, su, "decode")
    gen = (su.priors.generation if su.priors else "") or "spec-sheet"
    return Prediction(rid, g, "decode", float(pred), measured, row["unit"], bound, True, why, su.assumptions, deriv,
                      interval_key=(gen, phase_of("decode"), su.prec), cluster=f"{su.m.name}|{su.system.chip.name}")


def _max_load_engine(su: _Setup, al: Aliases) -> dict:
    """The engine's memory rule with the settings the max-load rows state (catalog/aliases engine: the KV
    fraction and the token budget of their notes)."""
    eng = dict(load_engine(su.engine or "default"))
    eng["sources"] = {**eng.get("sources", {}), "kv_memory_fraction": al.source("engine.kv_memory_fraction"),
                      "max_num_tokens": al.source("engine.max_num_tokens")}
    eng["kv_memory_fraction"] = float(al.engine["kv_memory_fraction"])
    eng["max_num_tokens"] = float(al.engine["max_num_tokens"])
    eng.pop("max_num_tokens_large_gpu", None)
    return eng


def _reserve(su: _Setup) -> float:
    """The row's engine's kv_output_reserve r (fastpath.held_tokens): 1 where it reserves a request's whole KV
    (TensorRT-LLM, the default), less where it allocates as tokens come (vLLM 0, SGLang 0.098)."""
    return float(load_engine(su.engine or "default")["kv_output_reserve"])


def _held_tokens(su: _Setup) -> float:
    """The tokens of KV one sequence holds in the row's engine's full pool (fastpath.held_tokens)."""
    return float(held_tokens(su.ISL, su.OSL, _reserve(su)))


def _held_words(su: _Setup, S_held: float | None = None) -> str:
    """The tokens one sequence is held at, in words, for a row's why."""
    S_held = _held_tokens(su) if S_held is None else S_held
    if S_held == su.ISL + su.OSL:
        return f"{su.ISL}+{su.OSL} tokens"
    r = _reserve(su)
    return (f"{S_held:.0f} tokens ({su.ISL} + (1 + r)/2 · {su.OSL}, r = {r:g}: the {su.engine} scheduler keeps r of "
            f"the output to come free, so a full pool holds each sequence at its mean)")


def _engine_batch(su: _Setup, spec: bool, al: Aliases, explain: bool = False):
    W_all = float(arch.model_weight_bytes(su.m, su.prec))
    kv_held = float(held_kv_bytes(su.m, su.ISL, su.OSL, _reserve(su), su.kv))
    if spec:
        pool = kv_pool_bytes(1.0, su.G, su.system.chip.hbm_capacity_bytes, W_all / su.layout.pp)
    else:
        pool = float(kv_pool_engine(_max_load_engine(su, al), su.m, su.system, su.G, W_all, tp=float(su.layout.tp),
                                    precision=su.prec, pp=su.layout.pp))
    if pool < float(held_kv_bytes(su.m, su.ISL, su.OSL, 1.0, su.kv)):
        return (f"{su.m.name} at {su.prec} leaves no room for one sequence's KV on {su.G} × "
                f"{su.system.chip.name} ({su.G * su.system.chip.hbm_capacity_bytes / 1e9:.0f} GB)")
    cap = math.inf if spec else _batch_cap(su, al)
    return int(engine_batch(pool, kv_held, cap))


MICRO_BATCH_OVERLAP = re.compile(r"\b(?:[DT]BO|two[- ](?:micro[- ])?batch(?:es)? overlap|dual[- ]batch overlap|"
                                 r"micro[- ]batch overlap|overlap(?:ped|s)? (?:the )?(?:communication|all-to-all) "
                                 r"(?:with|behind) (?:the )?comput\w*)\b", re.I)


def micro_batch_overlap(row: dict) -> str | None:
    """The words by which a row says its expert all-to-all runs behind compute: DeepSeek's two-micro-batch overlap,
    SGLang's TBO (two-batch overlap), vLLM's DBO (dual-batch overlap); None where it says nothing of it."""
    m = MICRO_BATCH_OVERLAP.search(" ".join(row.get(k, "") for k in ("parallelism", "notes", "precision")))
    return m.group(0) if m else None


def _batch_cap(su: _Setup, al: Aliases) -> float:
    """The most sequences the engine runs at once: its per-scheduler cap (the rows' CUDA-graph limit) times the
    attention data-parallel ranks, each of which schedules and captures its own batch (as the simulator's seats)."""
    return float(al.engine["max_batch"]) * float(su.layout.dp(su.G))


def _explain_run(su: _Setup, B, B_p, t_dec, al: Aliases) -> Q:
    """The run's derivation: the engine batch, one prefill step, the mean decode step, and the total."""
    e = True
    W_all = float(arch.model_weight_bytes(su.m, su.prec))
    cap = su.system.chip.hbm_capacity_bytes
    S_held = _held_tokens(su)
    kv_held = float(held_kv_bytes(su.m, su.ISL, su.OSL, _reserve(su), su.kv))
    Bq: Q | int
    if su.B is None:
        pool = kv_pool_engine(_max_load_engine(su, al), su.m, su.system, su.G,
                              lift(e, "W_all", W_all, "B", f"{su.m.file or su.m.name}: every weight in its format ({su.prec})"),
                              tp=float(su.layout.tp), explain=True, precision=su.prec, pp=su.layout.pp)
        Bq = engine_batch(pool, lift(e, "kv_held", kv_held, "B",
                                     f"KV of one sequence at {_held_words(su, S_held)} ({su.kv})"),
                          lift(e, "B_max", _batch_cap(su, al), "seq", al.source("engine.max_batch") + (
                              f" × {su.layout.dp(su.G)} attention-DP ranks" if su.layout.dp(su.G) > 1 else ""))).renamed("B")
    else:
        Bq = lift(e, "B", B, "seq", "row: stated batch")
    n_pre = B / B_p
    mid = step(su.m, su.system, G=su.G, B=B, S=su.ISL + su.OSL // 2, phase="decode", precision=su.prec,
               kv_dtype=su.kv, layout=su.layout, priors=su.priors, explain=True)
    pre = step(su.m, su.system, G=su.G, B=B_p, S=su.ISL, phase="prefill", precision=su.prec, kv_dtype=su.kv,
               layout=su.layout, priors=su.priors, explain=True)
    t_run = run_time(lift(e, "n_prefill", n_pre, "", f"B / B_p, B_p = min(B, dp · (tokens_max // ISL)) = {B_p}"),
                     pre.t_step.renamed("t_prefill"), lift(e, "OSL", su.OSL, "tok", "row"),
                     Q("t_decode_mean", float(np.mean(t_dec)), "s",
                       source=f"mean of roofline.step decode over S = {su.ISL}…{su.ISL + su.OSL - 1}; "
                              f"at the middle: {float(mid.t_step.value) * 1e3:.3g} ms"))
    return run_throughput(lift(e, "n_rep", su.n_rep, "", "replicas"), Bq, lift(e, "OSL", su.OSL, "tok", "row"),
                          t_run)
