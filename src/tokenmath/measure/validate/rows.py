"""Reading a measurement table: its columns, row groups, numbers and units, and what kind of quantity a row is.

- A measured value is a point ("27,911", "~250"), a range ("8-31", "8 to 31": an interval the prediction
  should fall in) or a bound (">250", ">= 1,000", "up to 800", "<5": an inequality the prediction passes or
  fails); `parse_measured` reads all three.
- A unit has a dimension (rate of tokens, time, bandwidth, FLOP rate) and a scope: the whole setup, per
  GPU, per node, per user. A prediction is compared only with a measurement of its own dimension
  (`dimension_of_unit`, `DIMENSION_OF_KIND`); anything else is refused with the reason.
- Chips: the n_chips column, or nodes × "N per node" read from the row's text (`chips_of`).
- A microbenchmark's share of the chip's peak ('% of peak', '% of theoretical', an efficiency column in %, the MAMF
  finder's) has no dimension: it is the rate predicted over the spec peak (`share_of_peak`, microbench).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

from ...training import is_training_row

# GB200 NVL36x2: two racks of 36 GPUs cabled into one 72-GPU NVLink domain (names.yaml's gb200-nvl72 source), a
# product's name: neither two chips nor two NVL36 domains
NVL36X2 = re.compile(r"\bNVL36\s*[x×*]\s*2\b", re.I)

__all__ = ["COLUMNS", "MBU", "SERVING_GROUPS", "PACKAGE_TABLE", "group_of", "row_kind", "to_int", "to_float", "unit_scale",
           "Measured", "parse_measured", "dimension_of_unit", "prediction_dimension", "unit_scope", "chips_of",
           "per_node_of", "length_of", "gguf_type_of", "hardware_count", "boxes_of", "node_product", "lengths_of", "without_footnote", "context_of", "bench_test_of", "with_unit", "disaggregated", "batch_of", "row_text",
           "output_len_from_samples", "output_len_per_request", "BEST_CASE", "unknown_reason", "measured_part", "percentiles_as_p", "COLLECTIVE_OPS", "GEMM_SHAPE", "LINK", "A2A_TIME", "ATTENTION_KERNEL",
           "PHASE_TIME", "OSL_UNSTATED", "BEST_OSL", "K_UNSTATED", "BEST_K", "ratio_reason", "share_of_peak"]

COLUMNS = ("id", "source", "model", "precision", "hardware", "n_chips", "parallelism", "batch", "input_len",
           "output_len", "context_len", "metric", "value", "unit", "confidence", "notes")
SERVING_GROUPS = ("TRT", "MLP", "BS1", "VLLM")
PACKAGE_TABLE = Path(__file__).resolve().parents[4] / "validation" / "public_measurements.csv"

# a time per token after its unit of time: 'ms/token', 'ms/tok', 'ms per token', 'ms/output token'
_PER_TOKEN = r"\s*(?:/|per)\s*(?:output\s+|generated\s+)?tok\w*"

# measured units -> SI multiplier of the predicted quantity
_UNIT_SCALE = [(r"^tflop/?s", 1e12), (r"^pflop/?s", 1e15), (r"^gflop/?s", 1e9),
               (r"^tera[\s_-]?flop", 1e12), (r"^peta[\s_-]?flop", 1e15), (r"^giga[\s_-]?flop", 1e9),  # spelled out
               (r"^tops\b", 1e12), (r"^pops\b", 1e15), (r"^gops\b", 1e9),  # an integer GEMM's operations a second
               (r"^gb/s", 1e9), (r"^tb/s", 1e12),
               (r"^gib/s", 2.0**30), (r"^tib/s", 2.0**40), (r"^gbit/s", 1e9 / 8),
               (rf"^(?:us|µs|μs)(?:{_PER_TOKEN})?(?:\s*\(.*\))?$", 1e-6),
               (rf"^ms(?:{_PER_TOKEN})?(?:\s*\(.*\))?$", 1e-3), (rf"^s{_PER_TOKEN}$", 1.0),
               (r"^(?:ns|nsecs?|nanosec(?:ond)?s?)$", 1e-9),
               (r"^(?:s|sec|seconds?)(?:\s*\(.*\))?$", 1.0), (r"^(?:min|minutes?)$", 60.0),
               (r"^k\s*tok(?:en)?s?\s*/\s*s", 1e3), (r"^m\s*tok(?:en)?s?\s*/\s*s", 1e6),
               (r"^tok(?:en)?s?\s*/\s*s", 1.0), (r"^tok(?:en)?s?[\s_-]*per[\s_-]*s(?:ec(?:ond)?)?\b", 1.0), (r"^tps\b", 1.0),
               (r"^tok(?:en)?s?\s*(?:/|per)\s*min(?:ute)?\b", 1 / 60),
               (r"^t\s*/\s*s$", 1.0),  # llama-bench writes 't/s'
               (r"^t\s*/\s*s\s*/\s*u$", 1.0),  # Tenstorrent's tt-metal tables write 't/s/u': tokens/s per user
               (r"^(?:req(?:uest)?s?|samples?|quer(?:y|ies))\s*(?:/|per)\s*s(?:ec(?:ond)?)?\b", 1.0),
               (r"^(?:qps|rps)\b", 1.0),
               (r"^(?:msecs?|millisec(?:ond)?s?)$", 1e-3), (r"^(?:usecs?|microsec(?:ond)?s?)$", 1e-6),
               (r"^req(?:uest)?s?\s*/\s*min|^rpm\b", 1 / 60)]  # RPM: requests a minute, as rate limits write it

def group_of(row_id: str) -> str:
    """The id's prefix: 'TRT-001' -> 'TRT'."""
    return row_id.split("-", 1)[0].upper() if "-" in row_id else row_id.upper()


def to_int(text: str) -> int | None:
    t = (text or "").replace(",", "").strip()
    return int(t) if re.fullmatch(r"\d+", t) else None


_LEN = r"(\d+(?:,\d{3})*(?:\.\d+)?\s*(?:[kK]|M(?![a-zA-Z]))?)"  # '1M': a million, not '1 MB'
# what a count of 'generated' things may be other than tokens ('1000 generated prompts'), a rate of tokens per step
# ('MTP generates 2 tokens per step'), and a time after '=' ('time out = 600 s'): none is a request's length
_GENERATED_THINGS = r"(?:prompts?|requests?|samples?|quer(?:y|ies)|sequences?|inputs?|examples?|conversations?|questions?|datasets?|texts?|images?|traces?)\b"
_PER_STEP = r"(?:per|each|every|a|/)[ \t]*(?:decode[ \t]+|forward[ \t]+)?(?:step|iteration|iter|forward|pass|cycle)"
_NOT_TIME = r"(?![\d.]|,\d|\s*(?:ms|s|sec(?:onds?)?|min(?:utes?)?|h|hours?)\b)"


def _length(text: str) -> int | None:
    """'1024', '1,024', '1k', '8K', '1.5k', '1M' -> tokens."""
    m = re.fullmatch(r"\s*(\d[\d,]*(?:\.\d+)?)\s*([kKmM]?)\s*", text or "")
    if not m:
        return None
    x = float(m.group(1).replace(",", ""))
    if m.group(2):  # 1k, 8k, 128k: the benchmarks' 1,024, 8,192, 131,072; 1.5k, 10k: thousands; 1M: 1,048,576
        k = 1024 if x == int(x) and int(x) & (int(x) - 1) == 0 else 1000
        x *= k * k if m.group(2) in "mM" else k
    return int(round(x)) if x >= 1 else None


def length_of(text: str) -> int | None:
    """A length (a sequence, a prompt) as a table's column writes it: '2048', '2,048', '2k', '8K', '1.5k', '4096
    tokens'."""
    return _column_length(text)


def _column_length(text: str) -> int | None:
    """A length column as tables fill it: '1024', '1k', or with words around the count ('input 1024', '~1000',
    '1024 tokens', 'mean 550')."""
    n = _length(text)
    if n is not None or not (text or "").strip():
        return n
    m = re.fullmatch(r"\s*(?:(?:input|output|isl|osl|prompt|mean|avg|average)\s*[:=]?\s*|(?:in|out)\s*[:=]\s*|[~≈]\s*)?"
                     r"(\d[\d,]*(?:\.\d+)?\s*[kKmM]?)\s*(?:tokens?|toks?)?\s*", text, re.I)
    return _length(m.group(1)) if m else None


def batch_of(row: dict) -> int | None:
    """A fixed batch the row states: the batch column as a count, or 'batch size 64', 'BS=32', 'batch 8', '64
    sequences'; where the column is empty, such words in the metric or notes ('tokens/s (bs=1)', 'bs=32, prompt 4k
    tokens'), not an engine's limit ('max batch 256'), a
    count of tokens ('batch 8192 tokens') or a sweep ('batch 1-64'); else one sequence where the metric or notes say
    so ('single-request decode speed', 'single stream', 'one request')."""
    b = to_int(row.get("batch", ""))
    if b is not None:
        return b
    pat = r"(?:\bbatch(?:[ _-]?size)?|\bbs)\s*(?:of|=|:)?\s*(\d+)\b"
    m = re.search(pat, row.get("batch", "") or "", re.I) or re.fullmatch(
        r"\s*(\d[\d,]*)\s*(?:seq(?:uence)?s?|req(?:uest)?s?|prompts?|samples?|\(\s*(?:batch(?:[ _-]?size)?|bs)\s*\))\s*",
        row.get("batch", "") or "", re.I)  # ('64 (batch)': the count with what it counts in brackets after it)
    if m or (row.get("batch") or "").strip():  # ('64 sequences': a count of what a batch holds)
        return to_int(m.group(1)) if m else None
    notes = f"{row.get('metric', '') or ''} | {row.get('notes', '') or ''}"  # 'tokens/s (bs=1)', or the notes'

    m = next((x for x in re.finditer(pat + r"(?!\s*(?:[-–]|to\b|k\b|tok|\.\d))", notes, re.I)
              if not re.search(r"(?:max|maximum|micro|global|mini|prefill|decode|chunk(?:ed)?|tokens?|eval|train(?:ing)?|"
                               r"up[\s_-]*to|graphs?)[\s_-]*$", notes[:x.start()], re.I)
              and not re.search(r"(?:https?://|www\.)\S*$", notes[:x.start()], re.I)), None)
    # ('CUDA graphs up to batch 512' is a limit, a 'bs=32' inside a URL a link's parameter)
    if m:
        return int(m.group(1))
    # 'single-request decode speed', 'single stream', 'one request': one sequence, batch 1
    return 1 if _SINGLE.search(f"{row.get('metric', '') or ''} | {notes}") else None


_SINGLE = re.compile(r"\b(?:single|one)[\s-]+(?:request|stream|user|sequence|prompt|query|client)s?\b"
                     r"(?![\s-]*(?:per|each|every|a|an)\b)", re.I)  # not 'one request per second'


# what an arrow's pair of counts may follow to be prompt -> output lengths: the start of a clause, a length word, a
# preposition, or a word with a digit (a model's '70B', 'TP8'); after another word it is a change of that quantity
# ('concurrency raised 32 → 64', 'throughput 2,400 -> 4,000')
_ARROW_LEAD = re.compile(r"(?:^|[,;|(\[:]|\b(?:isl|osl|in(?:put)?|out(?:put)?|lengths?|tokens?|prompts?|seq(?:uence)?s?|"
                         r"at|with|for|on|of)|\w*\d\w*|[→/-])\s*$", re.I)
# counted things a pair of numbers may be, not lengths: '4 -> 8 GPUs'
_COUNTED = r"\s*(?:gpus?|chips?|nodes?|cards?|devices?|users?|clients?|requests?|reqs?|replicas?|concurren\w*|ways?|layers?|experts?)\b"


# lengths a dataset was filtered or cut to, not the requests' lengths: 'max 1024 in / 1024 out', 'up to 2k input'
# the word after 'input' / 'output' that makes it a length, in prose or a benchmark's flag: 'input length 1024',
# vLLM's '--random-input-len 1024' and '--input-len=1024', LLMPerf's '--mean-input-tokens 550', trtllm-bench's
# prepare_dataset '--input-mean 1024', genai-perf's '--output-tokens-mean 500' (SGLang's '--random-input 1024' needs none)
_LEN_WORD = r"(?:[ \t_-]*(?:length|len|tokens?|mean)){1,2}"  # (genai-perf: '--synthetic-input-tokens-mean 1000')
# a flag for the spread of the lengths or an engine's limit, not a length: LLMPerf's '--stddev-input-tokens 150',
# TensorRT-LLM's build flag '--max_input_len 2048'
_NOT_SPREAD = r"(?<!std[-_])(?<!stddev[-_])(?<!stdev[-_])(?<!max[-_])"


_LIMITED = re.compile(rf"\b(?:max(?:imum)?|up[ \t]+to|at[ \t]+most)[ \t]+(?:of[ \t]+)?{_LEN}[ \t]*(?:tokens?[ \t]+)?"
                      rf"(?:in(?:put)?|out(?:put)?|prompts?)\b(?:[ \t]*(?:tokens?)?[ \t]*/[ \t]*{_LEN}[ \t]*"
                      r"(?:tokens?[ \t]+)?(?:in(?:put)?|out(?:put)?)\b)?", re.I)


def lengths_of(row: dict) -> tuple[int | None, int | None, str]:
    """(ISL, OSL, how they were read): the input_len / output_len columns ('1024', '1k', or both in one: '128/2048'),
    else the row's text ('ISL/OSL 1024/128', 'ISL=2048 OSL=256', 'input 1k, output 1k', '1024 in / 128 out', 'throughput
    @ 128/2048'), less the limits a dataset was cut
    to ('max 1024 in / 1024 out'). A 'k' after a power-of-two count is 1,024 (1k, 8k: the benchmarks' 1,024 and 8,192),
    else 1,000 (1.5k)."""
    isl, osl = _column_length(row.get("input_len", "")), _column_length(row.get("output_len", ""))
    if isl is not None and osl is not None:
        return isl, osl, ""
    for col in ("input_len", "output_len"):  # one column holding both, prompt first: '128/2048', '1k / 1k'
        pair = re.fullmatch(rf"\s*{_LEN}\s*(?:tokens?\s*)?/\s*{_LEN}\s*(?:tokens?)?\s*", row.get(col) or "")
        if pair and (isl is None or osl is None):
            i, o = _length(pair.group(1)), _length(pair.group(2))
            return (isl if isl is not None else i), (osl if osl is not None else o), \
                f"lengths read from the {col} column as ISL/OSL: '{pair.group(0).strip()}'"
    # a length column that holds more than one count ('ISL 1024 / OSL 128' in input_len) is read as text too
    text = " | ".join([str(row.get(c, "") or "") for c in ("notes", "batch", "metric", "parallelism")] +
                      [row.get(c) or "" for c, n in (("input_len", isl), ("output_len", osl)) if n is None] +
                      re.findall(r"\(([^()]*)\)", row.get("context_len") or ""))  # '32k context (1k output)'
    text = _LIMITED.sub(" ", text)
    pats = [(rf"\b(?:ISL\s*/\s*OSL|in\s*/\s*out|input\s*/\s*output)\s*(?:of|=|:)?\s*{_LEN}\s*/\s*{_LEN}", 1, 2),
            (rf"{_LEN}\s*/\s*{_LEN}\s*(?:ISL\s*/\s*OSL|in\s*/\s*out|input\s*/\s*output)", 1, 2),
            (rf"{_LEN}\s*(?:tokens?\s*)?in(?:put)?\s*[/,]\s*{_LEN}\s*(?:tokens?\s*)?out(?:put)?", 1, 2),
            (rf"\b(?:ISL\s*:\s*OSL|in\s*:\s*out|input\s*:\s*output)\s*(?:of|=|:)?\s*{_LEN}\s*:\s*{_LEN}", 1, 2),
            # a pair after the at sign: 'throughput @ 128/2048' (not '@ 8/16 GPUs', '@ 3/4 load': a word after it
            # other than 'tokens' counts something else)
            (rf"@\s*{_LEN}\s*/\s*{_LEN}(?![\d.,/])(?!\s*(?:%|[x×]\b|[mµu]?s\b|[kmgt]i?b\b|tok\w*\s*/|{_COUNTED}))"
             r"(?!\s*(?!tok(?:en)?s?\b)[a-z])", 1, 2),
            # an arrow from prompt to output ('2K→256', '2048 -> 128'), not a change of a value ('120 → 80 ms')
            (rf"(?<![\w.]){_LEN}\s*(?:→|->|=>|⟶)\s*{_LEN}(?![\d.]|,\d)(?!\s*(?:%|[x×]\b|[mµu]?s\b|[kmgt]i?b\b|tok\w*\s*/|/|"
             rf"{_COUNTED}))", 1, 2),
            # a bare pair with a 'k' on either side
            (r"(?<![\w./])(?=\d+(?:\.\d+)?\s*[kK]\s*/|\d+\s*/\s*\d+(?:\.\d+)?\s*[kK](?![\w/]))(\d+(?:\.\d+)?\s*[kK]?)\s*/\s*"
             r"(\d+(?:\.\d+)?\s*[kK]?)(?![\w/.])(?!\s*(?:%|m?s\b|tok\w*\s*/))", 1, 2)]  # '8k/1k'
    for k, (pat, a, b) in enumerate(pats):
        m = next((x for x in re.finditer(pat, text, re.I) if (k < len(pats) - 1 or not re.search(
            r"\b(?:context|ctx|window|batch|bs|vocab(?:ulary)?|max|seq(?:uence)?s?(?:[ \t]*len(?:gth)?s?)?)[ \t]*(?:[:=]|of)?"
            r"[ \t]*$", text[:x.start()], re.I)) and (k != len(pats) - 2 or _ARROW_LEAD.search(text[:x.start()]))),
                 None)  # a bare '8k/1k', not a 'context 32k/128k' or 'batch 1k/2k'; an arrow not after 'concurrency 32'
        if m:
            i, o = _length(m.group(a)), _length(m.group(b))
            return isl or i, osl or o, f"lengths read from the row's text: '{m.group(0).strip()}'"
    mi = re.search(rf"{_LEN}[- ]tokens?\s+(?:prompt|input)", text, re.I) or re.search(
        rf"{_LEN}[- ]?(?:input|prompt)[- ]tokens?", text, re.I) or re.search(
        rf"\b{_NOT_SPREAD}(?:ISL|input(?:{_LEN_WORD})?|prompt(?:{_LEN_WORD})?)[ \t]*(?:of|=|:)?"
        rf"[ \t]*{_LEN}", text, re.I) or re.search(rf"(?<![\w-])in[ \t]*=[ \t]*{_LEN}{_NOT_TIME}", text, re.I)  # 'in=1k'
    # TGI's 'decode length 128', 'max_new_tokens 128', 'gen 128' (not PCIe 'Gen5')
    mo = re.search(rf"{_LEN}[- ]?(?:output|new|generated)[- ]tokens?", text, re.I) or re.search(
        rf"{_LEN}[ \t]+(?:tokens?[ \t]+)?generated\b(?![ \t]+{_GENERATED_THINGS})|\bgenerat(?:e|es|ed|ing)[ \t]+{_LEN}[ \t]*"
        rf"(?:new[ \t]+)?tokens?\b(?![ \t]*{_PER_STEP})|(?<![\w-])out[ \t]*=[ \t]*{_LEN}{_NOT_TIME}", text, re.I) or re.search(
        rf"\b{_NOT_SPREAD}(?:OSL|output(?:{_LEN_WORD})?|(?:decode|generation|gen)[ \t_-]*(?:length|len)|"
        rf"max[ \t_-]*new[ \t_-]*tokens)[ \t]*(?:of|=|:)?[ \t]*{_LEN}", text, re.I) or re.search(
        rf"(?<![\w.]){_LEN}[ \t]+out(?:put)?(?=[ \t]*(?:[),;|]|$))", text, re.I) or re.search(  # '(1k output)'
        rf"\bgen(?:eration)?(?:[ \t]*(?:length|len|tokens))?[ \t]*(?:[:=][ \t]*|[ \t]+)(?=\d\d){_LEN}"
        r"(?![\w.])(?!\s*(?:[kmgtp]i?b|[kmg]?hz|w|watts?|%|gbps|gb/s|tb/s)(?![\w/]))", text, re.I)  # not '4th gen 80GB'
    if mi is None and mo is not None:  # 'sequence length 512, decode length 128': with the output apart, the prompt
        mi = re.search(rf"\bseq(?:uence)?[ \t_-]*len(?:gth)?[ \t]*(?:of|=|:)?[ \t]*{_LEN}", text, re.I)
    i = isl if isl is not None else (_length(mi.group(1)) if mi else None)
    o = osl if osl is not None else (_length(next(g for g in mo.groups() if g)) if mo else None)
    how = "lengths read from the row's text: " + ", ".join(f"'{x.group(0).strip()}'" for x in (mi, mo) if x) \
        if (mi or mo) else ""
    return i, o, how


# a GGUF file type as llama-bench prints it after the model ('llama 7B Q4_0', 'llama 8B Q4_K - Medium', 'qwen2 7B F16')
_GGUF_FTYPE = re.compile(r"(?<![A-Za-z0-9])(?:Q[2-8]_(?:[01]|K)(?:(?:_|\s*-\s*)(?:S|M|L|Small|Medium|Large))?|B?F16)"
                         r"(?![A-Za-z0-9])", re.I)


def gguf_type_of(model: str) -> tuple[str, str]:
    """(the model string less a GGUF file type, the type in the precision table's spelling): 'llama 8B Q4_K - Medium'
    -> ('llama 8B', 'Q4_K_M'); ('llama 7B Q4_0', no type) -> ('llama 7B', 'Q4_0'); else (model, ''). The type's size
    word is no sibling of the model ('Medium' is not Phi-3-medium)."""
    m = _GGUF_FTYPE.search(model or "")
    if not m:
        return model, ""
    kind = re.sub(r"\s*-\s*(S|M|L)\w*$", lambda g: "_" + g.group(1).upper(), m.group(0), flags=re.I)
    return (model[:m.start()] + model[m.end():]).strip(" -_"), kind


def bench_test_of(row: dict) -> tuple[str, int] | None:
    """llama-bench's test named in the metric: 'pp512' (prompt processing: one prompt of 512 tokens, input tokens/s)
    -> ('prefill', 512); 'tg128' (text generation: 128 tokens at batch 1 from an empty context) -> ('decode', 128)."""
    m = re.fullmatch(r"\s*(pp|tg)\s*(\d{2,})\s*(?:\(.*\))?\s*", row.get("metric", "") or "", re.I)
    return ("prefill" if m.group(1).lower() == "pp" else "decode", int(m.group(2))) if m else None


def context_of(row: dict) -> int | None:
    """The KV length per sequence a row states in its context_len column ('4989', '8k', '32k context', 'ctx=8192',
    '32k (1k output)': a parenthesis there says more of the run, read by `lengths_of`)."""
    text = row.get("context_len", "") or ""
    n = _length(text)
    if n is not None or not text.strip():
        return n
    m = re.fullmatch(r"\s*(?:(?:context|ctx|kv)(?:[ \t_-]*(?:length|len))?\s*[:=]?\s*)?(\d[\d,]*(?:\.\d+)?\s*[kKmM]?)\s*"
                     r"(?:tokens?|toks?)?\s*(?:context|ctx)?\s*(?:\([^()]*\))?\s*", text, re.I)
    return _length(m.group(1)) if m else None


# words after 'N prefill' / 'N decode' that count something other than a pool of chips: '4 prefill + 60 decode requests'
# (one mixed batch), '1 prefill-heavy and 3 decode-heavy workloads'
_NOT_POOL = r"[\s-]*(?:tok|step|chunk|len|phase|time|laten|iter|req|seq|heavy|bench|workload|batch|job|quer|sample|prompt)"


def disaggregated(row: dict) -> str:
    """The words that say prefill and decode ran on separate chips ('PD disaggregation', '1P1D', 'P/D', 'xPyD',
    '2 prefill (TP4) + 2 decode (TP4)', '1P(DEP4) 1D(DEP8)'), or ''."""
    m = re.search(r"disagg\w*|\bP\s*/\s*D\b|\bPD\b|\b\d+\s*P\s*\d+\s*D\b|\bxPyD\b|prefill[- /]decode split|"
                  r"\b\d+\s*P\s*\([^()|]*\)[^|]*?\b\d+\s*D\s*\(|"
                  rf"\b\d+\s*prefill\b(?!{_NOT_POOL})[^|]*?\b\d+\s*decode\b(?!{_NOT_POOL})",
                  " | ".join(row.get(c, "") or "" for c in ("parallelism", "notes", "batch", "metric")), re.I)
    return m.group(0) if m else ""


BEST_CASE = ("the row leaves an input unstated, so it is checked as a bound: the tool's best case over what is "
             "unstated must reach the measured rate (or undercut the measured time); it has no error")


def output_len_from_samples(row: dict, tokens_per_s: float, units: dict[str, float | None] | None = None) \
        -> tuple[int, str]:
    """(OSL, how it was read) for a best-case check: the row's tokens/s ÷ its samples/s (MLPerf logs give both,
    the mean output per sample as measured), else 2 tokens, the shortest decode (the least KV read). Each figure is
    of its own scope: a samples/s with none ('84.5 samples/s', as MLPerf prints it) is the whole setup's, one saying
    '/GPU' a chip's; `units` gives the units of a scope in the whole setup ({'gpu': chips, 'node': nodes}), so a
    tokens/s per GPU is set against the whole setup's samples/s as chips × it."""
    m = re.search(r"([\d][\d,]*(?:\.\d+)?)\s*(?:samples|requests|queries)\s*/\s*s\b", row_text(row), re.I)
    n = to_float(m.group(1)) if m else None
    if n and n > 0 and dimension_of_unit(row.get("unit", "")) == "token_rate":  # 'tokens/s', 'TPS', 't/s'
        per = re.match(r"\s*(?:/|per)\s*(?:(gpu|chip|device|accelerator|card)|(node))\b", row_text(row)[m.end():], re.I)
        said = "gpu" if per and per.group(1) else "node" if per else "total"
        own = unit_scope(row.get("unit", ""), row.get("metric", ""))
        k = {"total": 1.0, **(units or {})}
        if own != said and (k.get(own) is None or k.get(said) is None):
            return 2, OSL_UNSTATED  # the two figures cover different chips, and the row does not say how many
        a, b = (k[own], k[said]) if own != said else (1.0, 1.0)  # both over the whole setup where they differ
        ratio = tokens_per_s * a / (n * b)
        if ratio >= 1:
            osl = int(round(ratio))
            times = lambda x: f" × {x:g}" if x != 1.0 else ""  # noqa: E731
            return osl, (f"output length: the row's {tokens_per_s:,.6g} tokens/s{times(a)} ÷ its {m.group(0).strip()}"
                         f"{times(b)} = {osl} tokens a sample (the measured mean" + (
                             ", both over the whole setup)" if own != said else ")"))
    return 2, OSL_UNSTATED


_TOK_RATE = r"(?:output\s+|generated\s+)?tok(?:en)?s?\s*(?:/|per)\s*s(?:ec(?:ond)?)?\b(?!\s*(?:/|per)\s*[a-z])"


def output_len_per_request(row: dict, requests_per_s: float) -> tuple[int | None, str]:
    """(OSL, how it was read) for a request-rate row (samples/s, requests/s) whose free text gives the same run's
    output tokens/s ('24,525 tokens/s', 'tokens/s: 24,525'): the mean output per request is tokens/s ÷ requests/s.
    A total, input, prompt or prefill tokens/s, a rate per GPU or user, a per-user speed target ('interactivity
    target 50 tok/s', 'at least 20 tok/s'), or two different figures read nothing."""
    text = row_text(row, ("notes", "metric", "batch"))
    num = r"(\d[\d,]*(?:\.\d+)?)\s*([kK])?"
    found = [(m.group(1), m.group(2), m.group(0)) for m in re.finditer(rf"{num}\s*{_TOK_RATE}", text, re.I)]
    found += [(m.group(1), m.group(2), m.group(0)) for m in re.finditer(rf"{_TOK_RATE}\s*(?:[:=]|of)?\s*{num}",
                                                                         text, re.I)]
    vals = {to_float(a) * (1e3 if k else 1.0) for a, k, _ in found if to_float(a)}
    if len(vals) != 1 or requests_per_s <= 0 or re.search(r"(?:total|input|prompt|prefill)\s+(?:\d[\d,.]*\s*[kK]?\s*)?tok"
                                                          r"|interactiv|target|\bslo\b|minimum|at least", text, re.I):
        return None, ""
    tok = vals.pop()
    osl = int(round(tok / requests_per_s))
    if osl < 1:
        return None, ""
    return osl, (f"output length: the same run's {found[0][2].strip()!r} ÷ its {requests_per_s:,.6g} requests/s = "
                 f"{osl} tokens a request (the measured mean)")


OSL_UNSTATED = "output length not stated: 2 tokens, the shortest decode (the least KV to read)"
K_UNSTATED = "drafts per step not stated: K = 1"
BEST_K = (1, 2, 3, 4, 5, 6, 8)  # drafts per step a best case is taken over (α = 1: each adds a token and a draft step)
BEST_OSL = (2, 16, 128, 1024)  # output lengths a best case is taken over: a short decode reads the least KV, a
# long one spreads each request's prefill and fixed costs over more tokens


def row_text(row: dict, cols=("batch", "parallelism", "metric", "notes", "model", "precision")) -> str:
    """The row's free-text columns joined: where loads, speculation and acceptance rates are read."""
    return " | ".join(str(row.get(c, "") or "") for c in cols)


def to_float(text: str) -> float | None:
    t = (text or "").replace(",", "").strip()
    try:
        return float(t)
    except ValueError:
        return None


# a unit may name what it counts before the count: 'output tok/s', 'input tokens/s', 'generated tokens/sec', LMDeploy's
# 'out tok/s'
_UNIT_QUALIFIER = r"^(?:output|out|input|prompt|generated|generation|total|decode|prefill|completion)\s+(?=tok)"


_MARKS = "*†‡§¶¹²³⁴⁵⁶⁷⁸⁹⁰"


def without_footnote(row: dict) -> dict:
    """A value carrying a footnote mark ('7,200†', '1,234*', '12,400* tok/s') without it; where the notes hold the
    footnote ('* total (input+output) tokens'), its words join the metric, since they say what the number counts."""
    value = row.get("value") or ""
    m = re.search(rf"(?<=[\d.kKmM%])\s*([{re.escape(_MARKS)}]+)(?![\d.])", value) or \
        re.search(rf"(?<=[\w)])([{re.escape(_MARKS)}]+)\s*$", value)  # or after a unit: '~25 ms†'
    if not m:
        return row
    out = {**row, "value": (value[:m.start()] + value[m.end():]).strip()}
    said = re.search(rf"(?:^|[;|,(]|\s){re.escape(m.group(1))}\s*[:=)]?\s*([A-Za-z(][^;|]*)", row.get("notes") or "")
    # a footnote that says what is left out ('* excluding prefill time') names no quantity the row measures
    if said and not re.search(r"\b(?:exclud\w*|without|w/o|not|except|omit\w*)\b", said.group(1), re.I):
        out["metric"] = f"{row.get('metric') or ''} ({said.group(1).strip()})"
    return out


# a unit that says only 'a second' (genai-perf prints 'Request throughput (per sec)', 'Output token throughput (per
# sec)'): the metric names what is counted
_RATE_ONLY = re.compile(r"\s*(?:per|/|1\s*/)\s*(?:s|sec|second)\s*", re.I)


def _counted_of(metric: str) -> str | None:
    """The unit of a rate whose unit column says only 'per sec', from what its metric counts: requests (queries,
    samples) or tokens, with the metric's scope ('per user', 'per GPU'); None where it names neither."""
    if re.search(r"\b(?:req(?:uest)?s?|quer(?:y|ies)|samples?)\b", metric, re.I):
        return "requests/s"
    if re.search(r"\btok(?:en)?s?\b", metric, re.I):
        scope = unit_scope("", metric)
        return "tokens/s" + ("" if scope == "total" else f"/{scope}")
    return None


def with_unit(row: dict) -> dict:
    """A row whose unit column is empty, its unit read from where tables also put it: after the value ('9000
    tok/s'), or in the metric ('Throughput (tokens/s)', 'tokens per second per user'). A footnote mark on the
    value is dropped first (`without_footnote`)."""
    row = without_footnote(row)
    if _localised(row.get("value") or "") != (row.get("value") or ""):  # '12 345 tok/s': the number in one piece
        row = {**row, "value": _localised(row["value"])}
    lead = re.fullmatch(r"\s*([A-Za-zµ][A-Za-zµ/ ]*?)\s*[:=]?\s*([<>≤≥~≈]?=?\s*\d[\d.,]*\s*[kKmM]?"
                        r"(?:\s*(?:-|to|±|\+/-)\s*[\d.,]+\s*[kKmM]?)?)\s*", row.get("value") or "")
    if lead and unit_scale(lead.group(1)) is not None:  # the unit before the value: 'samples/s 28', 'tok/s: 1,234'
        have = (row.get("unit") or "").strip()
        if not have or unit_scale(have) == unit_scale(lead.group(1)):
            return {**row, "value": lead.group(2), "unit": have or lead.group(1).strip()}
        return row
    if _RATE_ONLY.fullmatch(row.get("unit") or ""):  # genai-perf's '(per sec)': what it counts is in the metric
        counted = _counted_of(row.get("metric") or "")
        return {**row, "unit": counted} if counted else row
    if (row.get("unit") or "").strip():
        return row
    value = re.sub(r"^\s*(?:approx(?:imately|\.)?|about|around|circa|ca\.)\s*", "~", row.get("value") or "", flags=re.I)
    v = re.fullmatch(r"\s*([<>≤≥~≈]?=?\s*[\d.,]+\s*[kKmM]?(?:\s*(?:-|to)\s*[\d.,]+\s*[kKmM]?)?)\s+([A-Za-zµ/].*)", value)
    if v and unit_scale(v.group(2)) is not None:
        return {**row, "value": v.group(1), "unit": v.group(2).strip()}
    v = re.fullmatch(r"\s*([<>≤≥~≈]?=?\s*[\d.,]*\d)([A-Za-zµ/].*)", value)  # glued: '12.3s', '350ms', '1.2k tok/s'
    if v and unit_scale(v.group(2)) is not None:
        return {**row, "value": v.group(1), "unit": v.group(2).strip()}
    metric = row.get("metric") or ""
    for paren in re.finditer(r"\(([^()]+)\)", metric):  # 'Throughput (tokens/s)', 'TPOT (ms) p99'
        if unit_scale(paren.group(1)) is not None:
            return {**row, "unit": paren.group(1).strip()}
    words = re.search(r"(?:tok(?:en)?s?\s*(?:/|per)\s*s(?:ec(?:ond)?)?|\btps|\btok(?:en)?s?\s+throughput)\b(?:\s*(?:/|per[\s_-]?)\s*"
                      r"(?:(?:decode|prefill|decoding)\s+)?(gpu|user|node|chip))?",
                      metric, re.I)  # 'tokens per second per user', 'Output TPS per GPU', 'tps/user', 'token throughput'
    if words:
        return {**row, "unit": "tokens/s" + (f"/{words.group(1)}" if words.group(1) else "")}
    counted = re.search(r"\b(samples?|queries|quer(?:y)|req(?:uest)?s?)\s*(?:/|per)\s*s(?:ec(?:ond)?)?\b(?!\s*(?:/|per))",
                        metric, re.I)  # 'Offline samples/s', 'requests per second'
    if counted:
        return {**row, "unit": f"{counted.group(1).lower()}/s"}
    if re.fullmatch(r"\s*[A-Za-zµ/]{2,12}\s*", metric) and unit_scale(metric) is not None:  # the metric is its unit: 'TFLOPs'
        return {**row, "unit": metric.strip()}
    return row


def unit_scale(unit: str) -> float | None:
    raw = unit.strip()
    # the case tells bits (Gb/s, Gbps) from bytes (GB/s); spelled out, 'Gbits/sec' (iperf, ib_write_bw's 'Gb/sec') and
    # 'MBytes/sec' (BabelStream); an 'i' is binary (MiB/s)
    rate = re.match(r"([kKMGT])(i?)(bits?|Bytes?|bytes?|b|B)\s*(?:/\s*s(?:ec(?:onds?)?)?|ps)(?![\w/])", raw)
    if rate:
        v = (1024.0 ** (" KMGT".index(rate.group(1).upper())) if rate.group(2) else
             {"k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}[rate.group(1)])
        return v / 8 if rate.group(3) == "b" or rate.group(3).startswith("bit") else v
    u = re.sub(_UNIT_QUALIFIER, "", raw.lower())
    for pat, scale in _UNIT_SCALE:
        if re.search(pat, u):
            return scale
    return None


# a model's decode 'Model Bandwidth Utilization' (Databricks): the bytes a decode step reads (weights, KV) over its time,
# as a share of the chips' HBM bandwidth — a serving quantity, not an HBM stream's
MBU = re.compile(r"\bmbu\b|model[\s_-]*bandwidth[\s_-]*utili[sz]ation", re.I)


def row_kind(row: dict) -> str:
    metric, model, unit = row["metric"].lower(), row["model"].lower(), row["unit"].lower()
    if is_training_row(row):  # by what it measures: MFU, chip-hours, a training time or rate (training.rows)
        return "training"
    if MBU.search(metric):
        return "serving"
    unit = re.sub(_UNIT_QUALIFIER, "", unit)
    if "token" in metric or dimension_of_unit(unit) in ("token_rate", "request_rate") or re.match(
            rf"(?:[mµμu]?s|msecs?){_PER_TOKEN}", unit):  # a time per token ('ms/token'): a TPOT
        return "serving"
    if "deepep" in model or "dispatch" in metric or "combine" in metric:
        return "alltoall"
    if re.search(r"(?<![a-z])(ttft|tpot|itl|tbt|e2e)|end.to.end|request.latency|requests?.per.s|(?:first|1st).?token|time.between.tokens", metric):
        return "serving"
    if re.search(r"latency|" + PHASE_TIME, metric) and re.match(r"(?:ns|us|µs|μs|ms|msecs?|usecs?|millisec\w*|microsec\w*|s|sec|seconds?|min|minutes?)\b", unit) and not \
            re.search(r"kernel|all.?reduce|all.?gather|all.?to.?all|reduce.?scatter|nccl|rccl|p2p|gemm|matmul|nvlink|"
                      r"pci-?e|infiniband|rdma|\bhbm|memory|cache|broadcast|send.?recv|" + ATTENTION_KERNEL,
                      f"{metric} | {model}"):
        return "serving"  # a model's latency ('latency, batch 1' in ms/token, 'latency' in s)
    return _microbenchmark_kind(row, metric, model, unit)


# what a microbenchmark row measures, by the words it uses (metric and model first, then the notes)
COLLECTIVE_OPS = {"all_reduce": r"all[\s_-]?reduce", "all_gather": r"all[\s_-]?gather",
                  "reduce_scatter": r"reduce[\s_-]?scatter", "alltoall": r"all[\s_-]?to[\s_-]?all",
                  # nccl-tests' other three: broadcast_perf, reduce_perf (not all_reduce, reduce_scatter), sendrecv_perf
                  "broadcast": r"broadcast|\bbcast\b", "reduce": r"(?<!all[\s-])\breduce(?:_perf)?\b(?![\s_-]?scatter)",
                  "sendrecv": r"send[\s_-]?recv"}
_COLLECTIVE = "|".join(COLLECTIVE_OPS.values()) + r"|\bnccl\b|\brccl\b|\bbus\s?bw\b|\balg\s?bw\b|bus bandwidth"
_ATTENTION = r"attention|\battn\b|\bmla\b|\bmha\b|\bgqa\b|flash"
# an attention kernel by its name (FlashAttention's flash_attn_func, FlashInfer, FlashMLA, PyTorch's SDPA): its latency
# is a kernel's time, not a model's
ATTENTION_KERNEL = r"flash[\s_-]?(?:attn|attention|infer|mla)|\bfa[23]\b|\bsdpa\b|scaled.dot.product"
_GEMM = r"gemm|mat[\s_-]?mul|\bmm\b|cublas|\bdense\b"
GEMM_SHAPE = (r"\d+\s*[kK]?\s*[x×]\s*\d+\s*[kK]?\s*[x×]\s*\d+|\d+\s*[kK]?\s*(?:\^\s*3|³)"
              r"|\b[MNK]\s*=\s*[MNK]?\s*=?\s*\d|\(\s*[MNKmnk]\s*,\s*[MNKmnk]\s*,\s*[MNKmnk]\s*\)\s*[=:]")
LINK = (r"\bp2p\b|peer[\s-]?to[\s-]?peer|nvlink|nvswitch|pci-?e|infiniband|\bib\b|\brdma\b|roce|\bnics?\b|ethernet|"
        r"interconnect|xgmi|infinity fabric|\bici\b|\bh2d\b|\bd2h\b|host[\s_-]?to[\s_-]?device|device[\s_-]?to[\s_-]?host|"
        r"ib_(?:write|read|send)_bw|link bandwidth|\befa\b|\bpeer\b")
# a cache's, a disk's or a host's rate: the catalog has no figure for any of them
_NO_FIGURE = r"\bl[123]\b|cache|smem|shared memory|storage|\bdisk|\bssd|nvme|file ?system|\bcpu\b|\bdram"
_MEMORY = r"\bhbm|memory|\bdram\b|\bmem\b|\bstream\b|triad|copy|memcpy|\bd2d\b|device[\s_-]?to[\s_-]?device|read|write"
# a copy from one device to another: on one chip it is a copy within its HBM (CUDA's bandwidthTest 'Device to Device'),
# on two or more a peer copy over the link between them (nvbandwidth's device_to_device_memcpy_read_ce)
_DEVICE_TO_DEVICE = r"\bd2d\b|device[\s_-]?to[\s_-]?device"


# a share of the spec peak: in the unit ('% of peak', '% of theoretical peak', 'percent of peak', '% efficiency'), or a
# percentage whose metric says efficiency or of-peak ('MAMF efficiency' in %, 'efficiency %', 'FLOP utilization')
_SHARE_UNIT = re.compile(r"%\s*(?:of\s+)?(?:the\s+)?(?:theoretical|peak|spec|max)|percent(?:age)?\s+of\s+(?:the\s+)?"
                         r"(?:theoretical|peak|spec)|%\s*eff|eff\w*\s*\(?\s*%", re.I)
_SHARE_METRIC = re.compile(r"efficien|of\s+(?:the\s+)?(?:theoretical|peak|spec)|(?:flop|bandwidth|\bbw|hbm)s?[\s_-]*"
                           r"utili[sz]ation|\bmamf\b", re.I)


def share_of_peak(row: dict) -> bool:
    """Does the row measure a share of the chip's spec peak: its unit says so, or it is a percentage ('%' in the unit,
    the value or the metric) of a metric naming an efficiency or a peak?"""
    unit, metric, value = (row.get(c, "") or "" for c in ("unit", "metric", "value"))
    if _SHARE_UNIT.search(unit):
        return True
    pct = re.fullmatch(r"\s*(?:%|percent|pct)?\s*", unit) and "%" in f"{unit}{value}{metric}" or \
        re.fullmatch(r"\s*(?:%|percent|pct)\s*", unit)
    return bool(pct and _SHARE_METRIC.search(metric))


def _share_kind(row: dict, named: str, notes: str) -> str:
    """What a share of the peak is of: an attention kernel's or a GEMM's FLOP rate, a link's or HBM's rate."""
    raw = " | ".join(row.get(c, "") or "" for c in ("metric", "model", "notes"))
    if re.search(_ATTENTION, named) or re.search(ATTENTION_KERNEL, named):
        return "kernel"
    if re.search(_GEMM + r"|\bmamf\b|flop", f"{named} | {notes}") or re.search(GEMM_SHAPE, raw):
        return "gemm"
    if re.search(LINK, named):
        return "link"
    # a stream's words, not 'memory bandwidth' alone: a model's decode MBU is no HBM stream
    if re.search(r"\bhbm|\bstream\b|triad|\bcopy\b|memcpy|babelstream", f"{named} | {notes}"):
        return "stream"
    return "unknown"


def _microbenchmark_kind(row: dict, metric: str, model: str, unit: str) -> str:
    """'collective' (an NCCL-style all-reduce, all-gather, reduce-scatter or all-to-all), 'gemm', 'kernel' (an
    attention kernel's FLOP rate), 'link' (a point-to-point NVLink, PCIe or network link), 'stream' (HBM), or
    'unknown'."""
    named = f"{metric} | {model}"
    notes = (row.get("notes", "") or "").lower()
    if re.search(_COLLECTIVE, named) or (re.search(_COLLECTIVE, notes) and not re.search(r"flop", named)):
        return "collective"
    if share_of_peak(row):
        return _share_kind(row, named, notes)
    dim = dimension_of_unit(unit)
    if "flop" in metric or dim == "flop_rate":
        if re.search(_ATTENTION, named) or re.search(ATTENTION_KERNEL, named):  # 'cuDNN SDPA forward'
            return "kernel"
        raw = " | ".join(row.get(c, "") or "" for c in ("metric", "model", "notes"))  # shapes keep M, N, K's case
        if re.search(_GEMM, f"{named} | {notes}") or re.search(GEMM_SHAPE, raw):
            return "gemm"
        return "unknown"
    if "kernel_time" in metric or (re.search(r"kernel[\s_-]*time", metric) and re.search(r"copy|\bstream\b", named)):
        return "stream"  # a copy kernel's time ('kernel_time_copy_before', 'kernel time (copy)'), bytes in the notes
    if dim == "time":  # one kernel's time: an attention kernel's, or a GEMM's
        if re.search(_ATTENTION, named) or re.search(ATTENTION_KERNEL, named):
            return "kernel"
        raw = " | ".join(row.get(c, "") or "" for c in ("metric", "model", "notes"))
        if re.search(_GEMM, named) or re.search(GEMM_SHAPE, raw):
            return "gemm"
    if re.search(_NO_FIGURE, named) and not re.search(r"\bhbm", named):
        return "unknown"
    if dim == "bandwidth" or re.search(r"bandwidth|throughput|\bbw\b", metric):
        raw = " | ".join(row.get(c, "") or "" for c in ("metric", "model", "notes"))
        if dim == "bandwidth" and re.search(_GEMM, named) and re.search(GEMM_SHAPE, raw):
            return "gemm"  # a GEMM of a stated shape: its operands' bytes over its time (DeepGEMM's README)
        two = (chips_of(row)[0] or 1) >= 2
        if re.search(LINK, named) or (re.search(_DEVICE_TO_DEVICE, named) and two):
            return "link"
        if re.search(_MEMORY, named):
            return "stream"
        # a bandwidth named by no memory word, between chips or over a link the notes name (NVSHMEM's shmem_put_bw
        # on 2 GPUs, 'NVLink'): one chip writing into another's memory, not a stream within one
        if re.search(LINK, notes) or two:
            return "link"
        if "bandwidth" in metric:
            return "stream"
    return "unknown"


def unknown_reason(row: dict) -> str:
    """Why a row of kind 'unknown' is not predicted, in terms of what it measures."""
    metric, unit = row["metric"], row["unit"]
    if share_of_peak(row):
        return (f"metric {metric!r} ({unit or row.get('value', '')}): a share of the peak of nothing the row names (a "
                "GEMM/matmul, an attention kernel, an HBM stream or a link), so which peak is not known")
    dim = dimension_of_unit(unit)
    what = re.search(_NO_FIGURE, f"{metric} | {row.get('model', '')}", re.I)
    if what and dim in ("bandwidth", "time"):
        return (f"metric {metric!r}: a rate of {what.group(0)!r}, which the catalog has no figure for (it holds HBM, "
                "scale-up and scale-out links)")
    if "flop" in metric.lower() or dim == "flop_rate":
        return (f"metric {metric!r}: a FLOP rate of no kernel the row names (a GEMM/matmul, or an attention kernel): "
                "which roofline applies is not known")
    if dim == "bandwidth":
        return (f"metric {metric!r}: a bandwidth of nothing the row names (HBM/memory, a link such as NVLink, PCIe "
                "or InfiniBand, or a collective)")
    return f"metric {metric!r}: not a serving, kernel or training quantity this tool predicts"


# a value that is a multiple of another setup's: '2.7x', '1.4x vs H100', 'up to 7x over baseline', '3× faster'
_RATIO_VALUE = (r"\s*(?:[~≈]|up\s+to|about|over|more\s+than)?\s*[\d.,]+\s*[x×](?:\s+(?:faster|slower|higher|lower|more|"
                r"less|better|speed[\s-]?up|(?:over|vs\.?|versus|than|relative\s+to|compared\s+(?:to|with))\b.*))?\s*")


def ratio_reason(row: dict) -> str | None:
    """Why a row is a ratio, not a measurement of its setup: a value such as '2.7x' or '+498%', a unit 'x', or a
    metric naming a speedup or a comparison ('speedup over v0.5.3', 'throughput relative to H100'); else None."""
    value, unit, metric = (row.get(c, "") or "" for c in ("value", "unit", "metric"))
    if re.fullmatch(_RATIO_VALUE, value, re.I) or re.fullmatch(
            r"\s*(?:[x×]|times)(?:\s+(?:faster|slower|higher|lower|more|less|better|speed[\s-]?up|over\b.*|vs\b.*))?\s*",
            unit, re.I):  # 'x', 'x faster', 'times higher'
        what = f"measured value {value!r}" + (f" {unit!r}" if unit.strip() else "")
    elif re.fullmatch(r"\s*[+-]\s*[\d.,]+\s*%\s*", value):
        what = f"measured value {value!r} (a relative change)"
    elif re.search(r"speed[\s-]?up|\bratio\b(?!\s*(?:of\s*)?[:=]?\s*\d)|relative to|improvement|"
                   r"times (?:faster|higher|more)", metric, re.I):  # not a setting: 'KV cache hit ratio 50%'
        what = f"metric {metric!r}"
    elif re.search(r"per[\s_-]*(?:dollar|usd|\$|watt|w\b|kw\b|joule|j\b|kwh|mw\b)|/\s*(?:\$|(?:usd|dollar|w|kw|watt|j|joule|kwh|mw)\b)"
                   r"|\$\s*/|\b(?:cost|price)\b(?![\s-]*(?:optimal|efficien|effective|aware))", f"{metric} | {unit}",
                   re.I):  # not a setting chosen for cost: 'throughput at the cost-optimal batch'
        return (f"metric {metric!r} ({unit}) is normalised by cost, power or energy, which the catalog does not "
                "price: nothing to predict")
    else:
        return None
    return f"{what} is a ratio between two setups, not a measurement of one: nothing to predict"


# ---- measured values: points, ranges, bounds -----------------------------------------------------------

_NUM = r"([0-9][0-9,]*(?:\.[0-9]+)?|\.[0-9]+)\s*([kKmM])?"


@dataclass(frozen=True)
class Measured:
    """A measured value: a point (low == high), a range [low, high], or a bound (op '>', '>=', '<', '<=')."""

    low: float
    high: float
    op: str = ""  # '' for a point or range; the inequality of a bound

    @property
    def kind(self) -> str:
        return "bound" if self.op else ("range" if self.high > self.low else "point")

    @property
    def value(self) -> float:
        """The number a point or range error is measured from: the point, or the range's nearest end (see error)."""
        return self.low if self.op in (">", ">=") else self.high if self.op else (self.low + self.high) / 2


def _num(m: re.Match) -> float:
    v = float(m.group(1).replace(",", ""))
    return v * {"k": 1e3, "m": 1e6}.get((m.group(2) or "").lower(), 1.0)


_GROUP_SPACE = "[ \u00a0\u2009\u202f]"  # a space, no-break space, thin space, narrow no-break space (SI, French)
_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")


def _localised(t: str) -> str:
    """A number as other locales and typesetting write it, in the plain form: digits grouped by spaces ('12 345',
    '12 345,6', '12 345.6'), German grouping by dots with a decimal comma ('12.345,6', '1.234.567'), a power of ten ('2.4×10^5',
    '2.4 x 10⁵', '2.4·10^5'). A lone '12.345' stays a decimal: nothing tells it from German grouping."""
    t = re.sub(rf"(?<![\d.,])(\d{{1,3}}(?:{_GROUP_SPACE}\d{{3}})+)([,.]\d+)?(?![\d.,])",
               lambda m: re.sub(_GROUP_SPACE, "", m.group(1)) + (m.group(2) or "").replace(",", "."), t)
    t = re.sub(r"(?<![\d.,])(\d{1,3}(?:\.\d{3})+)(,\d+)?(?![\d.,])", lambda m: m.group(0) if not (
        m.group(2) or m.group(1).count(".") > 1) else m.group(1).replace(".", "") + (m.group(2) or "").replace(",", "."), t)
    # a power of ten needs its caret or superscript: '8 x 10' is no number
    return re.sub(r"(?<![\d.,])(\d+(?:\.\d+)?)\s*[x×·*]\s*10\s*(?:(?:\^|\*\*)\s*([-+−]?\d+)|([⁻]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+))(?![\d.])",
                  lambda m: f"{m.group(1)}e{(m.group(2) or m.group(3)).translate(_SUPERSCRIPT).replace('−', '-')}", t)


def parse_measured(text: str) -> Measured | None:
    """'27,911', 'up to 800' -> point; '8-31' / '8 to 31' -> range; '>250', '≥250', '250+', '<5' -> bound; other
    locales' digits ('12 345', '12.345,6', '2.4×10^5') as `_localised` reads them."""
    t = _localised((text or "").strip()).replace("≥", ">=").replace("≤", "<=").replace("–", "-").replace("—", "-")
    t = re.sub(r"^[~≈]|^approx\.?\s*|^about\s+", "", t, flags=re.I).strip()
    t = re.sub(r"\s*\((?:p\d\d|mean|median|avg|average)\)\s*$", "", t, flags=re.I)  # '12.5 (p50)': the statistic
    if re.fullmatch(r"[0-9]+(?:\.[0-9]+)?\s*[eE]\s*[+-]?[0-9]+", t):  # '3.2e4'
        v = float(t.replace(" ", ""))
        return Measured(v, v) if 0 < v < math.inf else None
    t = re.sub(r"^(.*?\d)\s*\(\s*((?:±|\+/-|\+-)\s*[\d.,]+\s*[kKmM]?)\s*\)$", r"\1 \2", t)  # '320 (±15)'
    pm = re.fullmatch(rf"{_NUM}\s*(?:±|\+/-|\+-)\s*{_NUM}", t)  # '1,234 ± 50': the spread is a range
    if pm:
        mid, half = (_num(x) for x in list(re.finditer(_NUM, t))[:2])
        return None if mid <= 0 else Measured(mid - half, mid + half) if mid - half > 0 else Measured(mid, mid)
    if not t:
        return None
    m = re.fullmatch(rf"(>=|<=|>|<)\s*{_NUM}", t)
    if m:
        v = _num(re.match(_NUM, t[len(m.group(1)):].strip()))
        return Measured(v, v, m.group(1))
    m = re.fullmatch(rf"{_NUM}\s*\+", t)
    if m:
        v = _num(m)
        return Measured(v, v, ">=")
    m = re.fullmatch(rf"(?:up to|peak of)\s+{_NUM}", t, flags=re.I)  # the best the setup reached: a point
    if m:
        v = _num(re.search(_NUM, t))
        return Measured(v, v)
    m = re.fullmatch(rf"(?:at most|below|under)\s+{_NUM}", t, flags=re.I)
    if m:
        v = _num(re.search(_NUM, t))
        return Measured(v, v, "<=")
    m = re.fullmatch(rf"(?:at least|min(?:imum)?)\s+{_NUM}", t, flags=re.I)
    if m:
        v = _num(re.search(_NUM, t))
        return Measured(v, v, ">=")
    m = re.fullmatch(rf"(?:over|more than|above|exceeding|in excess of)\s+{_NUM}", t, flags=re.I)  # 'over 1,000'
    if m:
        v = _num(re.search(_NUM, t))
        return Measured(v, v, ">")
    m = re.fullmatch(rf"{_NUM}\s*(?:-|to)\s*{_NUM}", t)
    if m:
        parts = re.findall(_NUM, t)
        lo, hi = (float(a.replace(",", "")) * {"k": 1e3, "m": 1e6}.get(b.lower(), 1.0) for a, b in parts[:2])
        if hi <= 0 or lo <= 0:
            return None
        return Measured(min(lo, hi), max(lo, hi))
    m = re.fullmatch(_NUM, t)
    if m:
        v = _num(m)
        return Measured(v, v) if v > 0 else None
    return None


# ---- dimensions and scopes -----------------------------------------------------------------------------

_DIM_OF_UNIT = [(r"tok(en)?s?\s*/\s*s|tok(?:en)?s?[\s_-]*per[\s_-]*s|^tps\b|^t\s*/\s*s(?:\s*/\s*u)?$|^tok(?:en)?s?\s*(?:/|per)\s*min(?:ute)?\b",
                 "token_rate"),
                (r"flop/?s|flops\b|^[tpg]ops\b", "flop_rate"),
                (r"^[kmgtp]?i?b/s|[kmgt]i?b\s*/\s*s(?:ec)?\b|^[kmgt]i?bps\b|gbps|gb/s|^[kmgt]i?(?:bits?|bytes?)\s*/\s*s", "bandwidth"),
                (r"^(us|µs|μs|usec|ms|msec|s|ns|nsec|sec|seconds?|minutes?|min|hours?|h|millisec\w*|microsec\w*|nanosec\w*)\b", "time"),
                # requests a second: a token rate times the tokens of a request, never a time
                (r"^(?:req(?:uest)?s?|quer(?:y|ies)|samples?)\s*(?:/|per)\s*(?:s|sec|second|min)|^(?:qps|rps|rpm)\b",
                 "request_rate")]

# what each prediction kind returns
DIMENSION_OF_KIND = {"run": "token_rate", "prefill": "token_rate", "decode": "token_rate", "per_user": "token_rate",
                     "decode_fixed": "token_rate", "serving": "token_rate", "gemm": "flop_rate", "kernel": "flop_rate",
                     "stream": "bandwidth", "link": "bandwidth", "alltoall": "time", "stream_time": "time",
                     "collective": "bandwidth"}


def dimension_of_unit(unit: str) -> str | None:
    u = re.sub(_UNIT_QUALIFIER, "", unit.strip().lower())
    for pat, dim in _DIM_OF_UNIT:
        if re.search(pat, u):
            return dim
    return None


# a latency limit a rate was held to: 'under 50 ms TPOT', 'at p99 TPOT 100 ms', 'TTFT<1s' (not what it measures)
_LAT = r"(?:TPOT|ITL|TBT|TTFT|time per output token|time between tokens|time to first token)"
_LIMIT_BODY = (r"(?:" + _LAT + r"(?:\s*SLO)?\s*(?:<=|≤|<|=|of)?\s*[\d.]+\s*m?s\b|[\d.]+\s*m?s\s*(?:p\d\d\s+)?" + _LAT +
               r")")  # 'TPOT 100 ms' or '50 ms TPOT', after a preposition
_LIMIT = re.compile(r"\s*(?:\b(?:at|under|below|with|within|for)\s+|@\s*)(?:an?\s+)?(?:p\d\d\s+|mean\s+|median\s+)?"
                    + _LIMIT_BODY + r"|\s*(?:(?:\band\b|,|&)\s*)?(?:\bp\d\d\s+)?\b" + _LAT +
                    r"\s*(?:SLO\s*)?(?:<=|≤|<)\s*[\d.]+\s*m?s\b"  # '… and p95 TTFT < 2 s'
                    # a limit named by its SLO, its value given elsewhere: 'capacity under a relaxed P99 TBT SLO'
                    r"|\s*\b(?:at|under|below|with|within|meeting)\s+(?:an?\s+|the\s+)?(?:(?!p\d\d\b)[a-z]+\s+)?"
                    r"(?:p\d\d\s+)?" + _LAT + r"(?:\s*(?:and|/|,|&)\s*(?:p\d\d\s+)?" + _LAT + r")*\s*SLOs?\b", re.I)


_ORDINAL_PCT = re.compile(r"\b(\d{2}(?:\.\d+)?)(?:st|nd|rd|th)?[\s_-]*(?:percentile|pctl?|%ile)\b", re.I)


def percentiles_as_p(text: str) -> str:
    """'95th percentile', '99.9th pct', '90 %ile' written as the 'p95' the readers look for."""
    return _ORDINAL_PCT.sub(lambda g: f"p{g.group(1)}", text)


def measured_part(metric: str) -> str:
    """The metric less the latency limits it was held to ('output throughput at p99 TPOT 100 ms' -> 'output
    throughput'), where what remains names a rate; else the metric as it is (a percentile written as a word,
    '99th percentile', as its pNN)."""
    metric = percentiles_as_p(metric)
    rest = _LIMIT.sub("", metric)
    rest = re.sub(r"\s*(?:\band\b|,|&)\s*(?:p\d\d\s+)?" + _LIMIT_BODY, "", rest, flags=re.I) if rest != metric else rest  # '… and 0.05 s TPOT'
    return rest if rest != metric and re.search(r"throughput|goodput|capacity|tok|req|\btps\b|\bqps\b|\brps\b", rest, re.I) \
        else metric


# a DeepEP kernel's time: 'lowlatency_dispatch_latency', 'Dispatch latency', 'combine time (us)'
# a kernel's time, not the "lowlatency" / "low-latency" of a kernel family (DeepEP's)
A2A_TIME = r"(?<![a-z])(?<!low[\s_-])(?:latency|time)(?![a-z])"


# a phase's or a request's time named as a time, not a latency: 'prefill time', 'prompt processing time', 'response time'
PHASE_TIME = (r"(?:prefill|prompt[\s_-]*processing|context[\s_-]*encoding|response|completion)[\s_-]*(?:wall[\s_-]*)?time\b")


def prediction_dimension(kind: str, metric: str, unit: str = "") -> str | None:
    """The dimension of what tokenmath predicts for a row of this kind and metric (and unit: a time per token is a
    TPOT whatever the metric calls it, 'Decode' in ms/token)."""
    m = measured_part(metric).lower()
    if kind == "stream" and re.search(r"kernel[\s_-]*time", m):
        return "time"
    if kind in ("gemm", "kernel") and re.search(r"time|latency|duration|runtime|elapsed", m):
        return "time"  # one kernel's time ('torch.matmul time', 'forward latency')
    if kind == "gemm" and dimension_of_unit(unit) == "bandwidth":
        return "bandwidth"  # a GEMM's bytes over its time (DeepGEMM's 'Memory bandwidth' column)
    if kind == "alltoall" and not re.search(A2A_TIME, m):
        return "bandwidth"
    if kind == "collective":  # a collective's time or its bus/algorithm bandwidth, as the row names it
        if re.search(r"latency|\btime\b|duration", m):
            return "time"
        return "bandwidth" if re.search(r"bus\s?bw|alg\s?bw|bandwidth|\bbw\b|throughput", m) else None
    if kind == "serving" and (re.search(r"(?<![a-z])(ttft|tpot|itl|tbt|e2e)|time.to.first|inter.token|time.between|end.to.end|"
                                        r"latency|time.per.(?:output.)?token|" + PHASE_TIME, m) or re.match(
            rf"(?:[mµμu]?s|msecs?){_PER_TOKEN}", unit.strip().lower()) or (dimension_of_unit(unit) == "time" and re.search(
            r"(?<![a-z])per[\s_-]+(?:output[\s_-]+|generated[\s_-]+)?token\b", m))):
        return "time"  # rows under load measure latencies too (measure/validate/atload.py)
    if kind == "serving" and re.search(r"requests?.per.s|req/s|samples.per.s|samples/s|quer(?:y|ies).per.s|quer(?:y|ies)/s", m):
        return None  # a request rate: no unit dimension of its own here
    return DIMENSION_OF_KIND.get(kind)


def unit_scope(unit: str, metric: str) -> str:
    """'gpu', 'node', 'user', 'core' (a core of a chip: NeuronCore, TensorCore) or 'total': what one unit of the
    measurement covers."""
    # the unit speaks first: a metric may name a per-user speed as its target ('throughput per GPU at 50
    # tok/s/user') while its unit says what one number covers
    # nor does a per-user speed the metric was held at say what it covers ('throughput/GPU at 20 tok/s/user')
    metric = re.sub(r"(?:\bat|@|≥|>=)\s*[~≈]?\s*\d[\d.,]*\s*(?:tok(?:en)?s?|tps)\s*(?:/|per)\s*(?:s(?:ec(?:ond)?)?\s*"
                    r"(?:/|per)\s*)?(?:user|u)\b|(?:tok(?:en)?s?\s*/\s*s(?:ec)?|\btps)\s*(?:/|per)\s*(?:user|u)\s*(?:≥|>=|>)\s*\d",
                    " ", metric, flags=re.I)
    metric = re.sub(r"\b(per|/)\s*(?:decode|prefill|decoding)\s+(?=gpu|chip|node)", r"\1 ", metric, flags=re.I)  # 'per decode GPU'
    # a part's name between 'per' and what it counts: 'per H800 node', 'per H100 GPU', 'per MI300X GPU'
    metric = re.sub(r"(?<![a-z])(per[\s_-])[a-z]+\d+[a-z0-9]*[\s_-](?=(?:gpu|chip|node|card|device|accelerator)s?\b)",
                    r"\1", metric, flags=re.I)
    for text in (unit.lower(), metric.lower()):
        if re.search(r"/\s*user|(?<![a-z])per[\s_-]user|^t\s*/\s*s\s*/\s*u$", text):  # 't/s/u' (tt-metal)
            return "user"
        if re.search(r"/\s*(?:node|rack|nvl\d+)|(?<![a-z])per[\s_-](?:node|rack|nvl\d+)", text):  # a scale-up domain's chips
            return "node"
        if re.search(r"/\s*[a-z]*cores?\b|(?<![a-z])per[\s_-](?:[a-z]*[ _-]?)?cores?\b", text):
            return "core"  # 'tok/s per NeuronCore', '/TensorCore': a share of a chip
        if re.search(r"/\s*(?:tpu[ _-]?)?(gpu|chip|device|accelerator|hpu|card|npu|xpu)|/\s*tpu\b"
                     r"|(?<![a-z])per[\s_-](?:tpu[ _-]?)?(gpu|chip|device|accelerator|hpu|card|npu|xpu)|(?<![a-z])per[\s_-]tpu\b", text):
            return "gpu"  # Gaudi tables write 'tokens/s/HPU' and 'per card'
    return "total"


# ---- chip counts -------------------------------------------------------------------------------------------

_NUMBER_WORDS = {"one": 1, "single": 1, "two": 2, "dual": 2, "three": 3, "four": 4, "quad": 4, "five": 5, "six": 6,
                 "seven": 7, "eight": 8, "sixteen": 16}


def numerals(text: str) -> str:
    """A count written in words as digits: 'a single H100' -> '1 H100', 'two 8xH100 nodes' -> '2 8xH100 nodes',
    'dual RTX 4090' -> '2 RTX 4090', 'one node' -> '1 node'; a count grouped by thousands as one number: '12,288 A100
    (1,536 nodes)' -> '12288 A100 (1536 nodes)' (the nodes were read as 536)."""
    text = re.sub(r"(?<![\d.,])(\d{1,3})((?:,\d{3})+)(?![\d.,])", lambda m: m.group(1) + m.group(2).replace(",", ""),
                  text or "")
    return re.sub(r"\b(?:an?\s+(?=single\b))?(" + "|".join(_NUMBER_WORDS) + r")\b",
                  lambda m: str(_NUMBER_WORDS[m.group(1).lower()]), text, flags=re.I)


def per_node_of(row: dict) -> int | None:
    """GPUs per node stated anywhere in the row: '8 per node', '8 GPUs/node', '8-GPU nodes'."""
    text = " ".join(row.get(c, "") for c in ("n_chips", "hardware", "parallelism", "notes"))
    m = re.search(r"(\d+)\s*(?:x\s*)?(?:gpus?|chips?|accelerators?)?\s*(?:per|/)\s*node", text, re.I) or \
        re.search(r"(\d+)-(?:gpu|chip)\s+nodes?", text, re.I)
    return int(m.group(1)) if m else None


def node_product(hw: str) -> tuple[int | None, str]:
    """(chips, how) of a hardware string that writes nodes × chips per node before the part: '2x8xH100',
    '2 x 8 x H100', '2x8 H100' (16 chips, not the 8 glued to the part)."""
    m = re.match(r"\s*(\d+)\s*[xX×*]\s*(\d+)\s*[xX×*]\s*(?=[A-Za-z])", hw or "") or (
        None if re.search(r"\btpu|\bv\d[a-z]*\b", hw or "", re.I) else  # 'TPU v5e 2x4' is a topology
        re.match(r"\s*(\d+)\s*[xX×*]\s*(\d+)\s+(?=[A-Za-z])", hw or ""))  # '2x8 H100'
    if not m:
        return None, ""
    n = int(m.group(1)) * int(m.group(2))
    return n, f"hardware {hw!r}: {m.group(1)} nodes × {m.group(2)} chips = {n}"


def _racks(t: str, n: int) -> tuple[int, str]:
    """n counted beside an NVLink domain named by its GPU count ('4 GB200 NVL72', 'GB300 NVL72 x 2', '2 HGX B200
    NVL8'): n domains of that many chips, not n chips — unless the string counts GPUs itself or n is more than 16
    (published deployments count a few racks; '36 GB200 NVL72' counts chips). Rubin's NVL144/NVL576 count dies, not packages, and are left as stated."""
    nvl = re.search(r"\bnvl\s?(\d{1,2})\b", t, re.I)
    if nvl and not re.search(r"\d\s*(?:gpus?|chips?|cards?)\b", t, re.I) and n <= 16:
        k = int(nvl.group(1))  # ('72 GB200 NVL72', '36 GB200 NVL72': a count of that size counts chips)
        return n * k, f"hardware {t!r}: {n} NVL{k} domains of {k} chips, {n * k} chips"
    return n, f"hardware {t!r}: {n} chips"


def hardware_count(hw: str) -> tuple[int | None, str]:
    """(chips, how) a hardware string gives with its part: a count glued before it ('8xH100', '8x H100 SXM',
    '8*H100', '4xA100-40GB'), after it ('H100x8', 'L40Sx4', 'MI300X x 8', 'A100 40GB x 4'), or a Cloud TPU slice's
    suffix ('v5e-8', 'v6e-256': chips; 'v4-8', 'v5p-128': TensorCores, two a chip) or topology ('TPU v5e 2x4',
    'v4 2x2x4': chips along each axis, multiplied). The 'X' of a part's name (RTX, MI300X) is not a count: after a
    part the sign is a lower-case 'x', '×' or '*'; nor is the last number of a topology ('2x4' is not 4 chips)."""
    t = numerals(hw or "")
    nodes = node_product(t)
    if nodes[0]:
        return nodes
    slices = _tpu_slices(t)
    if slices[0]:
        return slices
    m = re.search(r"(?<![\w.])(\d+)\s*[xX×*]\s*(?=[A-Za-z])", t) or re.search(
        r"\bnodes?\s*(?:of|with|[x×*])\s*(\d+)\s*[xX×*]?\s*(?=[A-Za-z])(?![KMGT]i?B\b|W\b|cores?\b|CPUs?\b)", t, re.I) or re.fullmatch(
        r"\s*(\d+)\s+(?=(?:[A-Za-z]+\s+)?[A-Za-z]+[- ]?\d)(?!\w+\s*(?:gb|gib|w)\b)(?!(?:[\w-]+\s+){1,3}nodes?\b).*", t, re.I)
    # ('2 HGX H100 nodes' counts nodes, not chips)
    # '4 nodes of 8 H200', '8 nodes x 8 H100' (chips per node; not 'nodes with 2 TB'); a count before the part,
    # '64 B200', '8 NVIDIA H100', the whole count
    if m:
        return _racks(t, int(m.group(1)))
    topo = re.search(r"(?<![\w.])(\d+)[x×](\d+)(?:[x×](\d+))?(?![\w.])", t)
    if topo:  # a Cloud TPU slice's topology, or a grid of something else: not a count after a part
        if not re.search(r"\btpu|\bv\d[a-z]*\b", t, re.I):
            return None, ""
        n = math.prod(int(x) for x in topo.groups() if x)
        return n, f"hardware {t!r}: a TPU slice of topology {topo.group(0)}, {n} chips"
    m = re.search(r"(?:(?:(?<=[0-9A-Z])|(?<=[0-9][a-z]))[x×*](?=\d)|(?<=[A-Za-z])[×*](?=\d)|\s[x×*]\s*|×\s*)(\d+)\s*(?:gpus?|cards?|chips?|racks?)?\s*(?:\([^()]*\)\s*)?$", t)
    if m:
        return _racks(t, int(m.group(1))) if not re.search(r"\d\s*(?:gpus?|cards?|chips?)\b", t, re.I) else \
            (int(m.group(1)), f"hardware {t!r}: {m.group(1)} chips")
    # 'B200 (x8)', 'MI300X (8x, Infinity Fabric)', 'x8 H100'
    m = re.search(r"\(\s*[x×]\s*(\d+)\s*[),;]|\(\s*(\d+)\s*[x×]\s*[),;]|^\s*[x×]\s*(\d+)\s+(?=[A-Za-z])", t)
    if m:
        return _racks(t, int(next(g for g in m.groups() if g)))
    return _tpu_slice(t)


_SLICE = r"\bv(\d)([a-z]*)(?:\s*pod)?-(\d+)\b"  # 'v5e-8', 'v5litepod-16', 'v4-3072', 'v5p-128'


def _tpu_slice(t: str) -> tuple[int | None, str]:
    """(chips, how) of a Cloud TPU slice name: v5e and v6e count chips ('v5e-8', 'v5litepod-8'), v2-v5p TensorCores,
    two a chip ('v4-3072' is 1,536 chips, 'v5p-128' 64: catalog/hardware/tpu-v3.yaml's notes)."""
    m = re.search(_SLICE, t, re.I)
    if m:
        n, per_chip = int(m.group(3)), (1 if m.group(2).lower() in ("e", "lite", "litepod") else 2)
        if n % per_chip == 0:
            return n // per_chip, (f"hardware {t!r}: a TPU slice of {n // per_chip} chips" +
                                   (f" ({n} TensorCores, two a chip)" if per_chip == 2 else ""))
    return None, ""


def _tpu_slices(t: str) -> tuple[int | None, str]:
    """(chips, how) of a count of TPU slices before the slice's name: '2x v5e-256 slices over DCN', '4 v5p-128
    slices' (a multislice job: the count times each slice's chips, not 2 or 4 chips)."""
    m = re.search(r"(?<![\w.])(\d+)\s*(?:[xX×*]\s*)?(?:(?:cloud\s+)?tpu\s*)?(?=v\d[a-z]*(?:\s*pod)?-\d+\b)", t, re.I)
    if not m:
        return None, ""
    per = _tpu_slice(t[m.end():])[0]
    if not per:
        return None, ""
    k = int(m.group(1))
    return k * per, f"hardware {t!r}: {k} TPU slices of {per} chips each, {k * per} chips"


# a server or cloud instance named by its type ('trn1.32xlarge', 'p5.48xlarge', 'a3-highgpu-8g', 'DGX H100'): a count
# before or after it counts boxes, not chips
_BOX = re.compile(r"^(?:[a-z][\w-]*\.\d*xlarge|[a-z]\d[a-z]?-(?:high|mega|ultra|edge)gpu-\d+g|dgx|hgx)$", re.I)


def boxes_of(hw: str) -> tuple[int | None, str]:
    """(count, name) of servers or instances a hardware string counts: '16 x trn1.32xlarge', '4x DGX H100',
    'p5.48xlarge x 2', 'Trn2 UltraServer (4x trn2.48xlarge)'; (None, '') where its count is not of boxes."""
    m = re.match(r"\s*(\d+)\s*(?:[xX×*]\s*)?([A-Za-z][\w.-]*)", hw or "")
    if m and _BOX.match(m.group(2)):
        return int(m.group(1)), m.group(2)
    m = re.search(r"(?<![\w.])(\d+)\s*[xX×*]\s*([A-Za-z][\w.-]*)", hw or "")
    if m and re.fullmatch(r"[a-z][\w-]*\.\d*xlarge", m.group(2), re.I):
        return int(m.group(1)), m.group(2)
    m = re.search(r"(?:^|\s)([A-Za-z][\w.-]*)\s*[x×*]\s*(\d+)\s*$", hw or "")
    if m and _BOX.match(m.group(1)):
        return int(m.group(2)), m.group(1)
    return None, ""


def chips_of(row: dict, system=None) -> tuple[int | None, str]:
    """Chips the row's measurement ran on: n_chips ('8', '2,048 GPUs', '2K': 2,048, '1 node (8 GPUs)': the bracket's
    count), or nodes × "N per node" read from the row's text (with how it was read). Given the row's system, a count
    of servers or instances ('16 x trn1.32xlarge') is that many of them, each of the chips its name says
    (`match.box_chips`: 'g5.xlarge' one A10G, 'p5.48xlarge' eight H100) or else of the system's scale-up domain; nodes
    of unstated size are servers of the system (its domain, where that is a server's 16 chips or fewer, not a rack);
    and a server or instance named with no count is one of it ('DGX H100': 8)."""
    from .match import box_chips

    n = to_int(row.get("n_chips", ""))
    if n is not None:
        return n, ""
    k = re.fullmatch(r"\s*(\d+(?:\.\d+)?\s*[kK])\s*(?:gpus?|chips?|accelerators?|cards?)?\s*", row.get("n_chips", "") or "",
                     re.I)
    if k and _length(k.group(1)):  # '16K' (16,384, a power of two in k), '2K GPUs'
        return _length(k.group(1)), f"n_chips {row['n_chips']!r} read as {_length(k.group(1))}"
    hw = NVL36X2.sub("NVL72", row.get("hardware", ""))  # one 72-GPU domain in two racks: not two chips, nor 36
    nc = (row.get("n_chips", "") or "").replace("×", "x")
    boxes, box = boxes_of(hw)
    if boxes and system is not None and not nc.strip():
        per_box, why = box_chips(box, system) or (system.domain_chips, "")
        n = boxes * per_box
        return n, f"hardware {hw!r}: {boxes} × {box} of {per_box} chips each, {n} chips"
    ab = re.fullmatch(r"\s*(\d+)\s*x\s*(\d+)\s*", nc, re.I)  # '2x8': nodes x chips per node
    if ab:
        return int(ab.group(1)) * int(ab.group(2)), f"n_chips {nc!r} read as {ab.group(1)} × {ab.group(2)}"
    text = numerals(" ".join(row.get(c, "") for c in ("n_chips", "hardware", "parallelism")).replace("×", "x"))
    # chips per node: stated per node, else the count glued to the part in the hardware string ('8x H100')
    glued, glued_how = hardware_count(hw)
    if (node_product(hw)[0] or re.search(r"\(\s*\d+\s*nodes?\s*\)", hw, re.I)) \
            and glued and not nc.strip():
        return glued, glued_how  # '2x8xH100', 'H200 x 16 (2 nodes)': the count is the whole, nodes said beside it
    whole = re.fullmatch(r"\s*(\d{1,3}(?:,\d{3})+|\d+)\s*(?:gpus?|chips?|accelerators?|cards?|hpus?|npus?)?\s*", nc, re.I)
    if whole:  # '2,048 GPUs' in the count column: the chips, whatever nodes the parallelism text names
        return to_int(whole.group(1)), f"n_chips {row['n_chips']!r} read as {to_int(whole.group(1))}"
    said = re.search(r"\(\s*(\d+)\s*(?:gpus?|chips?|accelerators?|cards?)\s*(?:total|in all)?\s*\)", nc, re.I)
    if said:  # '1 node (8 GPUs)': the chips the count in brackets names
        return int(said.group(1)), f"n_chips {row['n_chips']!r} read as {said.group(1)}"
    if glued and not nc.strip() and system is not None and glued > system.domain_chips and not per_node_of(row):
        # '2048x H800' beside 'EP64 across 8 nodes': more chips than one node holds, so the whole, not a node's
        return glued, glued_how
    per, per_how = per_node_of(row) or glued, ""
    # (not the part's own number: 'two 8xH100 nodes' is 2 nodes, not 100)
    # ('two 8xH100 nodes': a part between the count and its nodes)
    nodes = re.search(r"(?<![\w.])(\d+)(?!\d)[\s-]*(?:x\s*)?(?:[dh]gx[\s-]*)?(?:[a-z0-9-]*\d[a-z0-9-]*\s+){0,2}nodes?\b", text,
                      re.I)  # ('2 HGX H100 nodes': a server's name between the count and its nodes)
    if nodes and not per and system is not None:
        box_n = box_chips(hw, system)
        if box_n:
            per, per_how = box_n[0], f" ({box_n[1]})"
        elif system.domain_chips <= 16:
            per, per_how = system.domain_chips, f" (a node of {system.name}'s {system.domain_chips}, assumed)"
    if nodes and per:
        return int(nodes.group(1)) * per, f"{nodes.group(1)} nodes × {per} per node{per_how}"
    m = re.match(r"\s*(\d{1,3}(?:,\d{3})+|\d+)\b", nc)  # '8 GPUs', '2,048 GPUs'
    if m:
        return to_int(m.group(1)), f"n_chips {row['n_chips']!r} read as {to_int(m.group(1))}"
    bracket = re.search(r"\(\s*(\d+)\s*(?:gpus?|chips?|accelerators?|hpus?|cards?)\s*(?:total|in all)?\s*\)",
                        row.get("hardware", ""), re.I)
    if not nc.strip() and bracket:  # '4 x GB300 NVL72 (288 GPUs)': the chips the brackets count, not the 4 racks
        return int(bracket.group(1)), f"hardware {row['hardware']!r}: {bracket.group(1)} chips"
    if not nc.strip() and glued:  # no count column: the hardware string's '8x H200', 'H100x8', 'v5e-8'
        return glued, glued_how
    # 'GB200 NVL72 (72 GPUs)', 'Gaudi 3 (8 HPUs)', 'MI300X (single GPU)', '8-GPU HGX H100'; not 'Gaudi 2 HPU', whose
    # number is the part's generation
    own = {t for k in ((system.chip.name, system.chip.display_name) if system is not None else ()) for t in _joined(k)}
    stated = next((x for x in re.finditer(r"\b(\d+)\s*-?\s*(?:gpus?|chips?|accelerators?|hpus?|npus?|gcds?|cards?)\b",
                                          numerals(hw), re.I)
                   if not _part_number(numerals(hw), x.start(1), own)), None)
    if not nc.strip() and stated:
        return int(stated.group(1)), f"hardware {hw!r}: {stated.group(1)} chips"
    unit = re.search(r"\(\s*(\d+)\s*(?:gpus?|chips?|accelerators?|hpus?|cards?)\s*\)", row.get("unit", "") or "", re.I)
    unknown = re.search(r"not stated|unstated|unspecified|unknown", row.get("hardware", ""), re.I)
    if not nc.strip() and unit and not unknown:
        # MLPerf's 'tokens/s (72 GPUs)': the chips the figure covers (unless the hardware says its size is not known)
        return int(unit.group(1)), f"unit {row['unit']!r}: {unit.group(1)} chips"
    bare = re.sub(r"\([^()]*\)|\[[^\[\]]*\]", " ", hw)  # (a server in brackets glosses the part: 'H100 (DGX H100)')
    if not nc.strip() and system is not None and not re.search(
            r"not stated|unstated|unspecified|unknown|\b(?:systems|servers|instances|racks|nodes|pods)\b", hw, re.I):
        one = box_chips(bare, system)  # 'p5.48xlarge', 'DGX H100', 'GB200 NVL72': one of them
        if one:
            return one[0], f"hardware {hw!r}: one instance or server, {one[1]}"
    return None, ""


def _joined(name: str) -> set[str]:
    """A part name's words and numbers, a word joined to the number after it ('Intel Gaudi 2' -> gaudi2)."""
    raw = re.findall(r"[a-z]+|[0-9]+", name.lower())
    return {a + b for a, b in zip(raw, raw[1:]) if a.isalpha() and b.isdigit()}


def _part_number(text: str, at: int, own: set[str]) -> bool:
    """True when the number at `at` closes a word of the part's name ('Gaudi 2' of 'Habana Gaudi 2 HPU')."""
    word = re.search(r"([A-Za-z]+)[\s-]*$", text[:at])
    return bool(word) and (word.group(1).lower() + re.match(r"\d+", text[at:]).group(0)) in own
