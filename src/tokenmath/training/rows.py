"""Published training measurements predicted with `train`: the TRN-* rows of validation/public_measurements.csv,
or any table with its columns.

A row is read by what it measures, not by an exact metric name (`training_quantity`): MFU or HFU (%), FLOP/s
per chip (T/P/GFLOP/s), training throughput (tokens/s, per chip or over all chips; TGS and torchtitan's WPS per
chip; samples or sequences/s), the time of one step ('iteration time', 's/step', 'ms per iteration'), chip-hours
(in all, or per trillion tokens) and training time (hours, days, weeks; on the chips the metric names, '1K GPUs',
where it names some). Hardware and model are matched by the scored matcher
of the serving rows (measure.validate.match); a model the catalog lacks is sized by the parameter count its
description states ("GPT-3 175B"). The MFU prior is the nearest published run (runs.select_prior), held out:
none from the row's publication or of its model. With F the chip's dense BF16 peak, r = hardware FLOP / model
FLOP of a recompute policy (4/3 for full recomputation, else 1; attention neglected), mfu_p and r_p the prior's:

    hfu               = mfu_p · r_p                      carry='hfu' (the assumption `train` makes);
    mfu               = hfu / r_row                      carry='mfu': mfu = mfu_p, hfu = mfu · r_row
    mfu               = training.carry.carried_mfu       carry='roofline': the prior's step rebuilt on the row's
                                                         chip, fabric, model and layout (its data-parallel traffic
                                                         one of its terms, so no dp_floor); not the default: held
                                                         out on the public TRN rows it was worse (validation/README)
    FLOP/s per chip   = hfu · F                          Megatron's count includes the recomputed forward;
                      = mfu · F                          where the row says model FLOP/s
    tokens/s per chip = mfu · F / (6 · N_active + 3 · attn_fwd)       attn_fwd = 0 without the model's shapes
    samples/s         = tokens/s / s                     s the sequence length
    t_step            = flop_tok · B_glob · s / (G · F · mfu)    splits.compute_time; B_glob the global batch
    chip_hours        = train(model, …).chip_hours       a catalog model (attention, recomputation, its prior)
                      = 6 · N_active · D_tok / (F · mfu) / 3600       a stated parameter count only
    time              = chip_hours / G

A rate (MFU, HFU, FLOP/s, tokens/s) is held to the data-parallel traffic where the row states its split, its
global batch and its sequence length (`dp_floor`): the step cannot be shorter than the bytes each chip moves
over its link, overlapped with compute (ZeRO-3 / FSDP prefetch, the gradient reduce behind backward):

    t_compute = flop_tok · B_glob · s / (G · rate)     the step at the carried utilisation
    t_dp      = c_zero · 2 · (dp − 1)/dp · N/(tp·pp) · b / bw     splits.dp_comm_time; c_zero = 1.5 for ZeRO-3
    rate     ×= t_compute / max(t_compute, t_dp)       bw: the scale-out link × eta_scaleout across nodes

Under hybrid sharding ('HSDP', 'hybrid shard', FSDP's HYBRID_SHARD, 'shard group 8', 'sharding within node',
torchtitan's dp_shard / dp_replicate) t_dp is splits.hsdp_comm_time: ZeRO-3's traffic inside a shard group of s
data-parallel ranks (a scale-up domain's unless the row states s), the gradient all-reduce over the r = dp / s
replicas across them, the slower tier bounding the step; under ZeRO++'s hpZ it is splits.hpz_comm_time.
"""

from __future__ import annotations

import re

import numpy as np

from ..core import arch
from ..core.errors import InputError
from ..core.load import load_training_priors
from .runs import MFU_PEAK, select_prior, train
from .splits import compute_time

__all__ = ["predict_training_row", "validate_training", "training_quantity", "is_training_row", "CARRY", "QUANTITIES"]

CARRY = ("hfu", "mfu", "roofline")
# what a training row can measure -> the summary's name for it
QUANTITIES = {"mfu": "mfu", "hfu": "hfu", "flop_per_s": "tflops_per_gpu", "tokens_per_s": "tokens_per_s",
              "samples_per_s": "samples_per_s", "step_time": "step_time", "chip_hours": "gpu_hours", "time": "time"}
R_FULL = 4 / 3  # one more forward per step: runs.ratio_full with the attention share neglected

_TRAIN = re.compile(r"(?<![a-z])(?:pre-?)?train(?:ing|ed)?(?![a-z])")  # not the 'train' of 'constraint'
# a FLOP rate's prefix, as a letter ('TFLOP/s', 'PFlops') or spelled out ('teraFLOP/s', 'petaFLOP/s': Megatron-LM's
# papers): the letter is the group
_FLOP_PREFIX = re.compile(r"(?<![a-z])(?:(g)iga|(t)era|(p)eta|(e)xa)[\s_-]*flop|([gtpe])flop")
_PER_CHIP = re.compile(r"per[\s_-]*(?:gpu|chip|device|accelerator|tpu)|/\s*(?:gpu|chip|device|tpu)(?![a-z])")
# chip-hours by the word for a chip or by the part's name ('A100-hours', 'H100 hours', 'MI300X hours', 'v5p hours': a
# few letters glued to a model number), which spells its hours out ('hours', 'hrs'; 'H100 h' is no unit)
_PART = r"(?<![a-z0-9])[a-z]{1,5}\d{1,4}[a-z]{0,2}"
_CHIP_HOURS = re.compile(r"(?:gpu|chip|tpu|accelerator|device)s?[\s_-]*h(?:ou)?(?:rs?)?(?![a-z0-9])|"  # not 'GPU H100'
                         rf"{_PART}[\s_-]*h(?:ou)?rs?(?![a-z0-9])")
_CHIP_DAYS = re.compile(rf"(?:(?:gpu|chip|tpu|accelerator|device)s?|{_PART})[\s_-]*days?(?![a-z0-9])")  # in days
# tokens/s, tokens/GPU/s, llm-foundry's 'T/s'; TGS (tokens per GPU per second) and torchtitan's WPS are per chip
_PER_DEVICE = r"(?:[\s_]*(?:/|per)[\s_]*(?:gpu|chip|device|accelerator|tpu))?"
_TOKENS_PER_S = re.compile(rf"tok(?:en)?s?{_PER_DEVICE}[\s_]*(?:/|per)[\s_]*(?:s|sec|second)(?![a-z])|"
                           r"(?<![a-z])(?:tps|tgs|wps)(?![a-z])|(?<![a-z/])t\s*/\s*s(?![a-z])")
_PER_CHIP_RATE = re.compile(r"(?<![a-z])(?:tgs|wps)(?![a-z])")
# a metric that is only a training log's 'tps' key (torchtitan's line 'loss … tps: 6,250 tflops … mfu …', which renamed
# its 'wps') is every rank's own count, per chip, as its tgs and wps are — unless the row says it sums the ranks
_LOG_TPS = re.compile(r"\s*tps\s*:?\s*")
_SUMMED = re.compile(r"total|global|cluster|aggregate|all[\s_-]+(?:gpus|chips|ranks|devices)")
# samples (sequences) per second, llm-foundry's 'S/s': tokens/s ÷ the sequence length
_SAMPLES_PER_S = re.compile(rf"(?:samples?|seqs?|sequences?){_PER_DEVICE}[\s_]*(?:/|per)[\s_]*(?:s|sec|second)(?![a-z])|"
                            r"(?<![a-z/])s\s*/\s*s(?![a-z])")
# the time of one optimizer step: 'step time', 'iteration time (s)', 'time per step', 's/step', 'ms per iteration'
_STEP_TIME = re.compile(r"(?:step|iter(?:ation)?)[\s_-]*(?:time|duration|latency)|time[\s_-]*(?:/|per)[\s_-]*"
                        r"(?:step|iter)|(?<![a-z])(?:s|secs?|seconds?|ms|msecs?|milliseconds?)[\s_]*(?:/|per)[\s_]*"
                        r"(?:step|iter)")
# a collective's or a kernel's time per iteration is no training step
_OP = re.compile(r"all[\s_-]?(?:reduce|gather|to[\s_-]?all)|reduce[\s_-]?scatter|(?<![a-z])(?:nccl|rccl|p2p|deepep)(?![a-z])|"
                 r"dispatch|combine|nvlink|pci-?e|infiniband|memcpy|bandwidth")
_STEP_UNIT = re.compile(r"(?<![a-z])(ms|msecs?|milliseconds?|s|secs?|seconds?|mins?|minutes?)(?![a-z])")
_FRAMEWORKS = re.compile(r"(?<![a-z])(?:fsdp|zero-?[0-3]|deepspeed|megatron)(?![a-z])|activation checkpointing|"
                         r"global batch")
_POST_TRAINING = re.compile(r"post[\s_-]*train|(?<![a-z])(?:sft|rlhf|rl)(?![a-z])|fine[\s_-]*tun")
_SCALE = {"k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12, "thousand": 1e3, "million": 1e6, "billion": 1e9,
          "trillion": 1e12}
_TIME_UNITS = (("month", 30.44 * 86400), ("week", 7 * 86400), ("wk", 7 * 86400), ("day", 86400), ("d", 86400),
               ("hour", 3600), ("hr", 3600), ("h", 3600))


def _publication(source: str) -> str:
    m = re.search(r"arXiv\s*\d{4}\.\d{4,5}|github\s+[\w.-]+/[\w.-]+", source or "")
    return m.group(0).replace("github ", "") if m else ""


_COUNT = r"(\d+(?:\.\d+)?)\s*(trillion|billion|million|[TtBbMm])\b"  # '175B', '1T', '1.6 trillion', '760m'


def _row_params(text: str) -> float | None:
    """Active parameters from a model description: '671B MoE, 37B active' -> 37e9, 'MPT-760m' -> 760e6, 'GPT 1T' and
    'GPT (1 trillion parameters)' -> 1e12."""
    m = re.search(_COUNT + r"\s+(?:parameters\s+)?active", text) or re.search(_COUNT, text)
    if not m:
        return None
    return float(m.group(1)) * _SCALE[m.group(2).lower()[0]]


_NO_RECOMPUTE = re.compile(r"(?<![a-z])(?:no|without|w/o|disabled?)\s+(?:full\s+|activation\s+|gradient\s+)?"
                           r"(?:checkpointing|recomputation|rematerialization)|(?:checkpointing|recomputation|"
                           r"rematerialization)\s*(?:[:=]\s*|\s)(?:off|false|disabled|none|no)\b")


def _row_recompute(row: dict) -> str:
    """'full' where the row says it recomputes activations ('activation checkpointing'), not where it says it does
    not ('no activation checkpointing', 'checkpointing: off')."""
    text = " ".join(row.get(k, "") for k in ("parallelism", "notes")).lower()
    text = _NO_RECOMPUTE.sub(" ", text)
    if "checkpointing" in text or "recomputation" in text or "rematerialization" in text:
        return "full"
    return "selective"


def _row_number(text: str) -> float | None:
    m = re.search(r"\d+(?:\.\d+)?", (text or "").replace(",", ""))
    return float(m.group(0)) if m else None


def _row_value(text: str) -> float | None:
    """The measured value: '41', '41 %', '30.84M', '1.8e5', '180K'."""
    m = re.search(r"(\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)\s*([kKmM](?![a-zA-Z]))?", (text or "").replace(",", ""))
    return float(m.group(1)) * _SCALE.get((m.group(2) or "").lower(), 1.0) if m else None


def _row_tokens(text: str) -> float | None:
    """A training token count: '15.6T tokens', '2 trillion tokens', '300B training tokens', '1.2e12 tokens', '15T+ tokens';
    not a batch ('16M tokens/batch', '4194304 tokens per global batch') nor a rate ('tokens/s')."""
    found = []
    t = (text or "").replace(",", "")
    for m in re.finditer(r"(\d+(?:\.\d+)?(?:e\d+)?)\s*(t|b|m|trillion|billion|million)?\+?\s+(?:(?:pre-?)?training\s+)?"
                         r"tok(?:en)?s(?![\s_]*(?:/|per)[\s_]*(?:batch|step|iter|global|gpu|chip|s(?![a-z])|sec))",
                         t, re.IGNORECASE):
        if m.group(2) is None and "e" not in m.group(1):
            continue  # a bare number of tokens is a sequence length or a batch, not a run
        if re.search(r"batch\s*(?:size)?\s*(?:of|=|:)?\s*$", t[:m.start()], re.IGNORECASE):
            continue  # 'global batch 15.4M tokens'
        found.append(float(m.group(1)) * _SCALE.get((m.group(2) or "").lower(), 1.0))
    return max(found) if found else None  # a run's count is its largest


def _per_tokens(text: str) -> float | None:
    """The tokens a 'per trillion tokens' metric or unit counts: 'per 1T tokens' -> 1e12."""
    m = re.search(r"per[\s_-]*(\d+(?:\.\d+)?)?\s*(t|b|trillion|billion)[\s_-]*tok", text, re.IGNORECASE)
    return float(m.group(1) or 1) * _SCALE[m.group(2).lower()] if m else None


def _time_unit(text: str) -> tuple[str, float] | None:
    """('day', 86400) for 'days', 'wall-clock days', 'd'."""
    for word in re.findall(r"[a-z]+", text.lower()):
        for name, s in _TIME_UNITS:
            if word in (name, name + "s"):
                return name, s
    return None


_BATCHES = re.compile(r"(?<![a-z])[gm]bs(?![a-z])|global[\s_-]*batch|micro[\s_-]*batch")
_SEQ_LEN = re.compile(r"seq(?:uence)?[\s_-]*len(?:gth)?|(?<![a-z])seqlen|(?<![a-z])sl\s*[=:]?\s*\d")
_INFERENCE = re.compile(r"inferenc|serving|(?<![a-z])(?:isl|osl|ttft|tpot|itl|e2e|qps|rps|tgi|trt)(?![a-z])|latency|"
                        r"concurren|decod|prefill|generat|output|input|prompt|request|user|vllm|sglang|tensorrt|"
                        r"jetstream|lmdeploy|offline|server")

_SERVING_METRIC = re.compile(r"decod|prefill|per[\s_-]*user|output|generat|(?<![a-z])(?:ttft|tpot|itl|tbt)(?![a-z])|"
                             r"first[\s_-]*token")


def _not_served(row: dict) -> bool:
    """Nothing in the row speaks of inference: no word of serving anywhere, no input or output length."""
    every = " | ".join(row.get(k, "") or "" for k in ("source", "metric", "unit", "notes", "parallelism", "batch",
                                                       "model")).lower()
    return not _INFERENCE.search(every) and not (row.get("input_len", "") or "").strip() \
        and not (row.get("output_len", "") or "").strip()


def _training_context(row: dict) -> bool:
    """Does anything in the row besides its metric say training (a framework, a global batch, a token count)?
    A table that never says 'train' (NeMo's: tokens/s/GPU beside a GBS and a sequence length) counts where it
    names a global or micro batch size together with a sequence length and has no word of inference, nor an
    input or output length."""
    text = " | ".join(row.get(k, "") for k in ("metric", "notes", "parallelism", "batch")).lower()
    text = re.sub(r"deepspeed[\s_-]*(?:fastgen|inference|mii)|pre-?trained", "", text)  # serving engines, checkpoints
    # (a framework named beside a metric only serving has — a decode or prefill rate, tokens/s per user, output tokens,
    # a first-token or per-token latency: 'decode tokens/s per user' with 'DeepSpeed FP6' — is the engine)
    if _TRAIN.search(text) or (_FRAMEWORKS.search(text) and not _SERVING_METRIC.search(row.get("metric", "").lower())):
        return True
    seq = _SEQ_LEN.search(text) or re.fullmatch(r"\s*\d[\d,]*\s*[kK]?\s*", row.get("context_len", "") or "")
    return bool(_BATCHES.search(text) and seq and _not_served(row))


def training_quantity(row: dict) -> str | None:
    """What a row measures of a training run, read from its metric and unit (one of QUANTITIES), or None.

    A FLOP/s figure is a training one when it is per chip or the metric says training (a kernel's TFLOP/s
    is neither); tokens/s when the row says training anywhere (a serving row's tokens/s does not). A step time
    ('iteration time', 's/step') is a training one where the row says training or speaks of no inference.
    """
    metric, unit = row.get("metric", "").lower(), row.get("unit", "").lower()
    both = f"{metric} | {unit}"
    if re.search(r"(?<![a-z])hfu(?![a-z])|hardware[\s_-]*flops?(?:\s*/\s*s)?[\s_-]*utili[sz]ation", metric):
        return "hfu"
    if re.search(r"mfu|model[\s_-]*flops?(?:\s*/\s*s)?[\s_-]*utili[sz]ation", metric):  # 'Model FLOP/s Utilization'
        return "mfu"
    if _CHIP_HOURS.search(both) or _CHIP_DAYS.search(both):
        return "chip_hours"
    named = f"{metric} | {row.get('model', '').lower()}"
    kernel = re.search(r"gemm|mat[\s_-]?mul|cublas|attention|\battn\b|flash|\d+\s*[x×]\s*\d+\s*[x×]\s*\d+|\^\s*3|\bkernel",
                       named)
    if _STEP_TIME.search(both) and (_TRAIN.search(metric) or _training_context(row) or _not_served(row)) and not \
            (kernel or _OP.search(named)):
        return "step_time"
    tu = _time_unit(unit) or _time_unit(metric)
    if tu and (tu[0] in ("month", "week", "wk", "day", "d") or re.search(r"time|wall|duration", metric)
               or _TRAIN.search(metric)):
        return "time"
    if _FLOP_PREFIX.search(both) and (_PER_CHIP.search(both) or _TRAIN.search(metric) or _training_context(row)) \
            and not (kernel and not _TRAIN.search(metric)):
        return "flop_per_s"
    if _TOKENS_PER_S.search(both) and (_TRAIN.search(metric) or _training_context(row)):
        return "tokens_per_s"
    if _SAMPLES_PER_S.search(both) and (_TRAIN.search(metric) or _training_context(row)):
        return "samples_per_s"
    return None


def is_training_row(row: dict) -> bool:
    """A training row by what it measures, or by a metric naming training this module cannot read."""
    metric = row.get("metric", "").lower()
    return training_quantity(row) is not None or any(w in metric for w in ("mfu", "gpu_hours", "gpu-hours")) \
        or bool(_TRAIN.search(metric))


def _own_model_priors(model_text: str) -> tuple[str, ...]:
    """The `model` of every prior that the row's model string names (held out with the row's own model)."""
    from ..measure.validate.match import MIN_SCORE, score_name

    return tuple(p.model for p in load_training_priors()
                 if score_name(re.sub(r"\(.*?\)", "", p.model).strip(), model_text, generations=True) >= MIN_SCORE)


_ZERO = re.compile(r"zero[\s_-]*(?:stage[\s_-]*)?([0-3])(?![0-9])|(?<![a-z])(fsdp|fully[\s_-]*sharded)", re.IGNORECASE)
# hybrid sharding (HSDP: parameters sharded inside a shard group, replicated across groups) and ZeRO++'s hpZ
_HPZ = re.compile(r"(?<![a-z])hpz(?![a-z])|hierarchical[\s_-]*partition", re.IGNORECASE)
# a TPU multislice job (MaxText's ici_fsdp_parallelism / dcn_data_parallelism, or 'FSDP 256 per slice; DP 2 over
# DCN'): parameters sharded over each slice's ICI, replicas across slices over the data-center network
_ICI_SHARD = r"ici[\s_-]*fsdp(?:[\s_-]*parallelism)?|fsdp(?=\s*[=:]?\s*\d+\s+(?:per|within|in\s+each)\s+(?:slice|pod))"
_DCN_REPLICAS = r"dcn[\s_-]*data(?:[\s_-]*parallelism)?\s*[=:]?\s*(\d+)|\bdp\s*(\d+)\s+(?:over|across)\s+(?:dcn|slices|pods)"
_MULTISLICE = _ICI_SHARD + "|" + _DCN_REPLICAS
_HYBRID = re.compile(r"(?<![a-z])hsdp(?![a-z])|hybrid[\s_-]*shard|fsdp[\s_-]*(?:\(?\s*)?hybrid|"
                     r"shard(?:ing)?[\s_-]*group|shard(?:ing|ed)?\s+(?:with)?in\s+(?:a\s+|the\s+|each\s+)?node|"
                     r"(?<![a-z])dp[\s_-]*shard|shard(?:ing)?[\s_-]*degree|" + _HPZ.pattern + "|" + _MULTISLICE, re.IGNORECASE)
_SHARD_SIZE = re.compile(r"(?:shard(?:ing)?[\s_-]*group(?:[\s_-]*size)?(?:\s+of)?|dp[\s_-]*shard(?:[\s_-]*degree)?|"
                         r"shard(?:ing)?[\s_-]*degree|" + _ICI_SHARD + r")\s*[=:]?\s*(\d+)", re.IGNORECASE)
_REPLICAS = re.compile(r"(?:dp[\s_-]*replicate(?:[\s_-]*degree)?|replicat(?:e|ion)[\s_-]*degree)\s*[=:]?\s*(\d+)|"
                       r"(\d+)\s+replica(?:s|\s+groups)|" + _DCN_REPLICAS, re.IGNORECASE)
_MP = re.compile(r"(?<![a-z])mp\s*[=:]?\s*(\d+)|model[\s_-]*parallel(?:ism)?[\s_-]*(?:size)?\s*[=:]?\s*(\d+)",
                 re.IGNORECASE)


def _split_text(row: dict) -> str:
    """The parallelism column, or where it is empty the clauses of the notes that state a split ('ZeRO-3 (no MP)',
    'TP8 PP8', 'MP 96', 'FSDP'), as the serving reader reads its split from the notes."""
    from ..measure.validate.serving import split_of

    par = row.get("parallelism", "") or ""
    if par.strip():
        return par
    return "; ".join(c.strip() for c in re.split(r"[;|]", row.get("notes", "") or "")
                     if _ZERO.search(c) or _MP.search(c) or re.search(r"no\s*mp\b", c, re.IGNORECASE)
                     or {"tp", "pp"} & set(split_of(c)))


def _row_split(row: dict, system=None) -> tuple[int, int] | None:
    """(model-parallel ways tp·pp in chips, ZeRO stage) the row states, or None when it states no split: 'TP8 PP8',
    'MP 96', 'ZeRO-3 (no MP)', 'FSDP' (full sharding: stage 3). On a chip whose software counts cores (catalog
    `ranks_per_chip`: AWS Neuron's TP counts NeuronCores, 2 a Trainium1, 4 logical ones a Trainium2, as the serving
    reader reads them) the TP is over cores: TP / ranks_per_chip chips; a TP that is not a whole number of chips is no
    split this reads (None)."""
    from ..measure.validate.serving import split_of  # the serving rows' parser; imported here: it imports us

    par = _split_text(row)
    z = _ZERO.search(par)
    zero = (3 if z.group(2) else int(z.group(1))) if z else 0
    if _HYBRID.search(f"{par} {row.get('notes', '')}"):  # hybrid sharding shards the parameters (ZeRO-3) in a group
        z, zero = z or True, 3
    s = split_of(par)
    mp = _MP.search(par)
    tp, r = int(s.get("tp", 1) or 1), int(getattr(getattr(system, "chip", None), "ranks_per_chip", None) or 1)
    if tp % r:
        return None
    ways = tp // r * int(s.get("pp", 1) or 1)
    if mp:
        ways = int(mp.group(1) or mp.group(2))
    elif not (z or "tp" in s or "pp" in s or re.search(r"no\s*mp|data[\s_-]*parallel\s+only", par, re.IGNORECASE)):
        return None
    return max(ways, 1), zero


def _global_batch(text: str, S: float, G: float, dp: float | None) -> float | None:
    """The global batch in sequences a batch column states: '1536', 'GBS=1536 MBS=2', '1536 seqs x 2048 tokens',
    '16M tokens/batch' or '16M tokens' (÷ S), '32 seq per DP group' (× dp), 'batch = #GPUs'; None for a micro-batch,
    a per-chip or local (per-rank, torchtitan's) count, a count per DP group where dp is unknown (None), or a bare
    count in thousands or millions ('3M': of what?), which say nothing sure of the global one. A token count after a count of sequences ('x 2048 tokens', 'of 2048 tokens') is their length."""
    t = (text or "").replace(",", "").lower()
    for tok in re.finditer(r"(\d+(?:\.\d+)?)\s*([kmb])?\s*tok(?:en)?s?(?![\s_]*(?:/|per)[\s_]*(?:s(?![a-z])|sec|gpu|chip))",
                           t):
        if re.search(r"(?:[x×*]|\bof|\beach)\s*$", t[:tok.start()]):  # '1536 seqs x 2048 tokens': a length
            continue
        return float(tok.group(1)) * _SCALE.get(tok.group(2) or "", 1.0) / S
    if re.search(r"#\s*gpus|number of (?:gpus|chips)", t):
        return G
    num = r"(\d+(?:\.\d+)?)\s*([kmb](?![a-z]))?"
    per_dp = re.search(r"per[\s_-]*(?:dp|data[\s_-]*parallel)", t)
    if per_dp and dp is None:
        return None
    said = re.search(rf"(?<![a-z])(?:gbs|global[\s_-]*batch(?:[\s_-]*size)?)\s*(?:=|:|of)?\s*{num}", t) or \
        re.search(rf"{num}\s*(?:seqs?|sequences|samples)\b", t)  # labelled global, or a count of sequences
    if said:
        return None if said.group(2) else float(said.group(1)) * (dp if per_dp else 1.0)
    m = re.search(num, t)
    if m is None or m.group(2) or re.search(r"micro|(?<![a-z])mbs|(?<![a-z])local|per[\s_-]*(?:gpu|chip|device|rank|replica)",
                                            t):
        return None
    return float(m.group(1)) * (dp if per_dp else 1.0)


# a global batch or a sequence length named in a row's other columns ('global batch 512, sequence length 4096' in its
# notes, 'seq_len=8192', MaxText's 'max_target_length=2048'): only where labelled, never a bare number
_GLOBAL_BATCH_SAID = re.compile(r"(?<![a-z])(?:gbs|global[\s_-]*batch(?:[\s_-]*size)?)\s*(?:=|:|of)?\s*\d[\d,.]*\s*"
                                r"[kmb]?(?![a-z])(?:\s*(?:tok(?:en)?s?|seqs?|sequences|samples)\b)?", re.IGNORECASE)
_SEQ_LEN_SAID = re.compile(r"(?<![a-z])(?:seq(?:uence)?[\s_-]*len(?:gth)?|seqlen|context[\s_-]*len(?:gth)?|"
                           r"max[\s_-]*target[\s_-]*length)\s*(?:=|:|of)?\s*(\d[\d,]*)\s*(k)?(?![a-z0-9])", re.IGNORECASE)


def _batch_text(row: dict) -> str:
    """The row's batch column, or where it is empty the global batch its notes or parallelism name."""
    if (row.get("batch", "") or "").strip():
        return row["batch"]
    text = f"{row.get('notes', '')} | {row.get('parallelism', '')} | {row.get('metric', '')}"
    m = _GLOBAL_BATCH_SAID.search(text) or _BATCH_SAID.search(text)
    return m.group(0) if m else ""


# a training row's 'batch size 1536' or 'batch 1536' in its notes or metric (with a 'per DP group' after it): the global
# batch, as in its column; not a micro-batch's, a mini-batch's or one device's ('micro batch 2', 'batch 4 per GPU')
_BATCH_SAID = re.compile(r"(?<![a-z])(?<!micro[\s_-])(?<!micro)(?<!mini[\s_-])(?<!mini)batch(?:[\s_-]*size)?\s*(?:=|:|of)?\s*"
                         r"\d[\d,.]*\s*[kmb]?(?![a-z\d])(?:\s*(?:tok(?:en)?s?|seqs?|sequences|samples)\b)?"
                         r"(?:\s*per[\s_-]*(?:dp|data[\s_-]*parallel)[\s_-]*(?:group|rank|replica)s?\b)?"
                         r"(?!\s*(?:/|per|each)\s*(?:gpu|chip|device|rank|core|replica|dp|data)s?\b)", re.IGNORECASE)


def _row_seq_len(row: dict) -> float | None:
    """The sequence length: the context or input length column, else one the notes, parallelism, batch or metric
    name ('sequence length 4096', 'seq_len=8K')."""
    from ..measure.validate.rows import length_of  # the serving rows' reader; imported here: it imports us
    S = next((float(n) for n in (length_of(row.get(c, "") or "") or _row_number(row.get(c, ""))
                                 for c in ("context_len", "input_len")) if n), None)  # '2k', '4096', '4096 (long)'
    if S is None:
        m = _SEQ_LEN_SAID.search(" | ".join(row.get(c, "") or "" for c in ("notes", "parallelism", "batch", "metric")))
        S = float(m.group(1).replace(",", "")) * (1024 if m.group(2) else 1) if m else None
    return S


def _row_batch(row: dict, system, G: float | None, S: float | None) -> float | None:
    """The row's global batch in sequences (`_global_batch` of `_batch_text`), a count per DP group multiplied by the
    data-parallel ways its split leaves (G / tp·pp), or None."""
    if not (G and S):
        return None
    split = _row_split(row, system)
    return _global_batch(_batch_text(row), S, G, G / split[0] if split else None)


def _metric_chips(text: str) -> float | None:
    """A chip count the metric itself names: NeMo's 'Est. time to train in days (10T tokens, 1K GPUs)' -> 1000,
    'days on 2,048 H800 GPUs' -> 2048."""
    m = re.search(r"(?<![\w.])(\d+(?:\.\d+)?)\s*(k)?\s*(?:[a-z][\w-]*\s+)?(?:gpus|chips|tpus|accelerators|devices)(?![a-z])",
                  text.lower().replace(",", ""))
    return float(m.group(1)) * (1e3 if m.group(2) else 1) if m else None


def _step_unit_s(row: dict) -> float | None:
    """Seconds in the unit of a step time: read from the unit, then the value ('2.3 s'), then the metric
    ('iteration time (ms)', 's/step')."""
    scale = {"m": 1e-3, "s": 1.0}
    for text in (row.get("unit", ""), re.sub(r"^[\s\d.,~≈]+", " ", row.get("value", "") or ""), row.get("metric", "")):
        m = _STEP_UNIT.search((text or "").lower())
        if m:
            w = m.group(1)
            return 60.0 if w.startswith("min") else scale["m" if w.startswith("m") else "s"]
    return None


def _row_hybrid(row: dict, system, mp: int, dp: float) -> tuple[str, float, str] | None:
    """('hsdp' or 'hpz', s, how s was read) where the row's parallelism or notes state hybrid sharding, else None. s
    is the shard group in data-parallel ranks: as stated ('shard group 8', 'dp_shard 8'), or dp over the replicas
    stated ('dp_replicate 64'), else the data-parallel ranks of one scale-up domain (a node), said as assumed."""
    text = f"{row.get('parallelism', '')} {row.get('notes', '')}"
    if not _HYBRID.search(text):
        return None
    kind = "hpz" if _HPZ.search(text) else "hsdp"
    size, reps = _SHARD_SIZE.search(text), _REPLICAS.search(text)
    if size:
        s, how = float(size.group(1)), f"a shard group of {size.group(1)} ranks, as the row states"
    elif reps:
        r = float(next(x for x in reps.groups() if x))
        s, how = dp / r, f"{r:g} replicas, as the row states: shard groups of {dp / r:g} ranks"
    else:
        s = max(1.0, float(system.domain_chips // mp))
        how = (f"shard group not stated: the {s:g} data-parallel ranks of one {system.domain_chips}-chip scale-up "
               f"domain (a node; assumed)")
    return kind, min(max(s, 1.0), dp), how


def dp_floor(row: dict, system, N: float, flop_tok: float, G: float | None, S: float | None, rate: float):
    """The factor t_compute / max(t_compute, t_dp) a per-chip rate (FLOP/s at `rate`) is held to by the row's
    data-parallel traffic (module doc), and a line saying so; (1.0, None) where the row leaves an input unstated."""
    from ..core.load import load_priors
    from .splits import dp_comm_time, link_bandwidths, zero_factor

    split = _row_split(row, system)
    if split is None or not (G and S) or rate <= 0:
        return 1.0, None
    mp, zero = split
    dp = G / mp
    B = _global_batch(_batch_text(row), S, G, dp)
    if dp < 2 or not B:
        return 1.0, None
    inside = G <= system.domain_chips
    links = link_bandwidths(system, load_priors(system.chip.priors), int(G))  # the data-parallel rings span the G chips
    bw = links[0 if inside else 1]
    c_zero, b_g = zero_factor(zero), arch.bytes_per("bf16")
    t_c = float(compute_time(flop_tok * B * S, 1.0, G, rate, 1.0))
    hybrid = _row_hybrid(row, system, mp, dp)
    if hybrid:
        return _hybrid_floor(hybrid, system, links, inside, N / mp, dp, b_g, mp, t_c, B, S)
    t_dp = float(dp_comm_time(c_zero, dp, N / mp, b_g, bw))
    if t_dp <= t_c:
        return 1.0, None
    return t_c / t_dp, (f"held to its data-parallel traffic: {'ZeRO-3 gathers and reduces' if zero >= 3 else 'the gradient reduce moves'} "
                        f"{c_zero * 2 * N / mp * b_g / 1e9:.0f} GB per chip per step over "
                        f"{'the scale-up link' if inside else 'the scale-out link'} ({bw / 1e9:.0f} GB/s): {t_dp:.1f} s, "
                        f"where the compute of its {B:g} × {S:g} tokens takes {t_c:.1f} s at the carried utilisation")


def _hybrid_floor(hybrid, system, links, inside: bool, N_chip: float, dp: float, b_g: float, mp: int, t_c: float,
                  B: float, S: float):
    """dp_floor under hybrid sharding (HSDP or hpZ): the traffic of each tier, the slower one against the compute; the
    reading (shard group, links) is said whether or not it binds."""
    from .splits import hpz_comm_time, hsdp_comm_time

    kind, s, how = hybrid
    up, out = links
    shard_bw = up if s * mp <= system.domain_chips else out  # a shard group larger than a domain gathers over NICs
    cross_bw = up if inside else out
    r = dp / s
    tier = lambda bw: "scale-up" if bw is up else "scale-out"  # noqa: E731
    if kind == "hsdp":
        t_dp = float(hsdp_comm_time(1.5, s, r, N_chip, b_g, shard_bw, cross_bw))
        moves = (f"hybrid sharding (HSDP): shard groups of {s:g} gather and reduce-scatter "
                 f"{3 * (s - 1) / s * N_chip * b_g / 1e9:.3g} GB per chip per step over the {tier(shard_bw)} link "
                 f"({shard_bw / 1e9:.0f} GB/s), " + (f"the {r:g} replicas all-reduce "
                 f"{2 * (r - 1) / r * N_chip / s * b_g / 1e9:.3g} GB of gradients per chip over the {tier(cross_bw)} "
                 f"link ({cross_bw / 1e9:.0f} GB/s)" if r > 1 else "one shard group holds every rank: no replicas"))
    else:
        t_dp = float(hpz_comm_time(s, dp, N_chip, b_g, shard_bw, cross_bw))
        moves = (f"ZeRO++ hpZ: the backward gather of a secondary copy sharded over {s:g} ranks moves "
                 f"{(s - 1) / s * N_chip * b_g / 1e9:.3g} GB per chip over the {tier(shard_bw)} link "
                 f"({shard_bw / 1e9:.0f} GB/s); the forward gather and the gradient reduce-scatter over all {dp:g} "
                 f"ranks {2 * (dp - 1) / dp * N_chip * b_g / 1e9:.3g} GB over the {tier(cross_bw)} link "
                 f"({cross_bw / 1e9:.0f} GB/s; no quantisation read)")
    if t_dp <= t_c:
        return 1.0, (f"not held to its data-parallel traffic: {moves}, {t_dp:.2g} s on the slower tier, under the "
                     f"{t_c:.2g} s the compute of its {B:g} × {S:g} tokens takes ({how})")
    return t_c / t_dp, (f"held to its data-parallel traffic: {moves}: {t_dp:.2g} s on the slower tier, where the "
                        f"compute of its {B:g} × {S:g} tokens takes {t_c:.2g} s at the carried utilisation ({how})")


def predict_training_row(row: dict, held_out: bool = True, carry: str = "hfu", aliases=None) -> dict | None:
    """Predict one training row (see the module docstring for what is read and how it is predicted).

    Returns None for rows that are not training rows; otherwise a dict with `id`, `metric`, `quantity`, `unit`,
    `measured`, `predicted`, `error` (predicted/measured − 1), `higher_is_better`, `prior`, `prior_row`, `basis`,
    `why` (what the row's strings matched) and `assumptions`, and for chip-hours and time rows
    `time_days_measured`/`time_days_predicted` where the chip count is known; `predicted` is None and `reason`
    says why when it cannot predict. held_out=True uses no prior from the row's own publication or model;
    held_out=False lets a run's own published MFU predict its GPU-hours (MFU rows then predict themselves and
    are skipped). carry='hfu' carries the prior's hardware-FLOP utilisation over (mfu · r_prior / r_row, the
    assumption `train` makes); carry='mfu' carries the MFU itself. `aliases`: a measure.validate.match.Aliases
    (one is made when None).
    """
    rid, metric, unit = row.get("id", ""), row.get("metric", ""), row.get("unit", "")
    if not (rid.startswith("TRN") or is_training_row(row)):
        return None  # not a training row, by its id or by what it measures (another table's ids need no TRN)
    if carry not in CARRY:
        raise InputError(f"carry must be one of {CARRY}")
    q = training_quantity(row)
    measured = _row_value(row.get("value", ""))
    out = {"id": rid, "metric": metric, "quantity": q, "unit": unit, "measured": measured, "predicted": None,
           "error": None, "higher_is_better": q not in ("chip_hours", "time", "step_time"), "prior": None, "prior_row": None,
           "basis": ("held-out: no prior from the row's publication or model" if held_out else "own run allowed")
           + f", {carry} carried over", "why": [], "assumptions": []}
    refuse = lambda why: {**out, "reason": why}  # noqa: E731
    if q is None:
        return refuse(f"metric {metric!r} ({unit}) is none of MFU, HFU, FLOP/s per chip, training tokens/s, "
                      f"chip-hours or training time")
    if measured is None or not measured > 0:
        return refuse(f"measured value {row.get('value', '')!r} is not a positive number")
    pre = re.match(r"\s*(k|m|b|thousands?|millions?|billions?)(?:\s+of)?[\s_-]+(?=[a-z])", unit, re.IGNORECASE)
    if q == "chip_hours" and pre:  # 'M GPU-hours', 'million GPU hours': the unit carries a multiplier
        measured *= _SCALE[pre.group(1).lower().rstrip("s")]
        out["measured"], out["unit_multiplier"] = measured, _SCALE[pre.group(1).lower().rstrip("s")]
    if _POST_TRAINING.search(metric.lower()):
        return refuse(f"metric {metric!r} measures post-training (fine-tuning, RL: generation as well as training), "
                      f"not the pre-training `train` predicts")
    if aliases is None:
        from ..measure.validate.match import Aliases  # the serving rows' matcher; imported here: it imports us
        aliases = Aliases()
    system, hw_note = aliases.system(row.get("hardware", ""))
    if system is None:
        return refuse(hw_note)
    chip, F = system.chip, system.chip.peak(MFU_PEAK)
    out["why"].append(hw_note)
    G = _row_number(row.get("n_chips", ""))
    said = (row.get("n_chips", "") or "").strip()
    if not re.fullmatch(r"[\d,]+", said):
        # the hardware's count ('8x H100', '16 x trn1.32xlarge'), or a count the column writes in words or thousands
        # ('2K', '256x8': nodes × chips, '1 node (8 GPUs)'); else its first number ('up to 16384')
        from ..measure.validate.rows import chips_of  # the serving rows' reader; imported here: it imports us
        n, how = chips_of(row, system)
        if n is not None:
            G = float(n)
            out["why"].append(how)
    S = _row_seq_len(row)
    if S is not None and not any((row.get(c, "") or "").strip() for c in ("context_len", "input_len")):
        out["why"].append(f"sequence length {S:g}, as the row's text states")
    for label, x in (("n_chips", G), ("sequence length", S)):
        if x is not None and not 1 <= x <= 1e12:
            return refuse(f"{label} {x:g} is not a count between 1 and 1e12")
    model_text = row.get("model", "")
    model, model_note = aliases.model(model_text)
    N = _row_params(model_text)
    if model is not None:
        N = arch.param_counts(model).active
        out["why"].append(model_note)
    elif N is not None:
        out["why"].append(f"{model_note}: sized by the {N / 1e9:g}B active parameters the row states, attention "
                          f"FLOP neglected")
    if N is None:
        return refuse(f"no parameter count: {model_note}, and {model_text!r} states none (e.g. '175B')")
    moe = "moe" in model_text.lower() or (model is not None and model.moe is not None)
    if q == "step_time":
        unit_s = _step_unit_s(row)
        if unit_s is None:
            return refuse(f"a step time with no unit of time (s, ms) in its unit, value or metric {metric!r}")
        if G is None or S is None:
            return refuse(f"a step time is tokens per step × FLOP per token / (chips · rate), but the row states no "
                          f"{'chip count' if G is None else 'sequence length'}")
        B = _row_batch(row, system, G, S)
        if B is None:
            return refuse(f"a step time is tokens per step × FLOP per token / (chips · rate), but the row states no "
                          f"global batch (sequences or tokens per step; a micro-batch or a per-device one is not it): "
                          f"batch {row.get('batch', '')!r}")
    if q == "samples_per_s" and S is None:
        return refuse("samples (sequences) per second is tokens/s ÷ the sequence length, but the row states none")
    exclude = (_publication(row.get("source", "")), model.name if model else "", *_own_model_priors(model_text)) \
        if held_out else ()
    # hardware FLOP / model FLOP; without the model's shapes the attention share is neglected
    r_of = {"none": 1.0, "selective": 1.0, "full": R_FULL}
    r_carry = r_of if carry in ("hfu", "roofline") else dict.fromkeys(r_of, 1.0)
    rr = _row_recompute(row)
    text = f"{metric} | {unit}".lower()
    per_chip = bool(_PER_CHIP.search(text))
    done = lambda pred, **kw: {**out, "predicted": pred, "error": pred / measured - 1, **kw}  # noqa: E731

    if q in ("chip_hours", "time"):  # the tokens of the run, then `train` (a catalog model) or 6·N·D at a prior's MFU
        own = _metric_chips(text)
        if own:  # the metric's own run ('10T tokens, 1K GPUs'), not the row's configuration
            G = own
            out["why"].append(f"{G:g} chips, as the metric {metric!r} states")
        tokens = _per_tokens(text) or _row_tokens(row.get("notes", "")) or _row_tokens(metric)
        if tokens is None:
            return refuse(f"the row does not state how many tokens its {metric!r} covers (a count such as '15.6T "
                          f"tokens' in notes, or a metric per trillion tokens)")
        if q == "time" and G is None:
            return refuse("training time is chip-hours / chips, but the row states no chip count")
        if model is not None:
            try:
                r = train(model, system, G=int(G or 1), tokens=tokens, S=int(S) if S else None,
                          exclude_priors=exclude, carry="roofline" if carry == "roofline" else "hfu")
            except InputError as e:
                return refuse(str(e))
            hours = r.value("chip_hours") / (r.value("hfu_ratio") if carry == "mfu" else 1.0)
            out.update(prior=r.prior.name, prior_row=r.prior.row)
        else:
            p, _ = select_prior(chip, G=G, S=S, N_active=N, moe=moe, exclude=exclude)
            out.update(prior=p.name, prior_row=p.row)
            mfu_c = p.mfu * r_carry[p.recompute] / r_carry[rr]
            if carry == "roofline":
                mfu_c, notes = _roofline_mfu(row, p, system, None, model_text, N, G, S, rr)
                out["assumptions"] += notes
            hours = 6 * N * tokens / (F * mfu_c) / 3600
        tu = _time_unit(unit) or _time_unit(metric)
        per = 24.0 if q == "chip_hours" and _CHIP_DAYS.search(text) else 1.0  # chip-days: the row's unit is 24 h
        days_measured = measured * tu[1] / 86400 if q == "time" else measured * per / (G or 1) / 24
        days = {} if G is None else {"time_days_measured": days_measured, "time_days_predicted": hours / G / 24}
        return done(hours / per if q == "chip_hours" else hours / G * 3600 / tu[1], **days)

    p, _ = select_prior(chip, G=G, S=S, N_active=N, moe=moe, exclude=exclude)
    if p.row == rid:
        return {**refuse("the row is its own prior (in-sample)"), "prior": p.name, "prior_row": p.row}
    out.update(prior=p.name, prior_row=p.row)
    hfu_p = p.mfu * r_carry[p.recompute]
    mfu = hfu_p / r_carry[rr]  # of the dense BF16 peak
    flop_tok = 6 * N
    if model is not None:
        flop_tok += 3 * arch.attention_flop_per_token(model, int(S or p.seq_len), "prefill")
    k_dp, why_dp = 1.0, None
    if carry == "roofline":  # the step rebuilt on the row's setup: its data-parallel traffic is one of the terms
        mfu, notes = _roofline_mfu(row, p, system, model, model_text, N, G, S, rr)
        hfu_p = mfu * r_carry[rr]
        out["assumptions"] += notes
    else:
        k_dp, why_dp = dp_floor(row, system, float(arch.param_counts(model).total) if model is not None else N,
                                flop_tok, G, S, mfu * F)
    if why_dp:
        hfu_p, mfu = hfu_p * k_dp, mfu * k_dp
        out["why"].append(why_dp)

    if q in ("mfu", "hfu"):
        pred = 100 * hfu_p / r_carry[rr] if q == "mfu" else 100 * (mfu * r_of[rr] if carry == "mfu" else hfu_p)
        if "fp8" in row.get("precision", "").lower() and "fp8" in chip.peak_flop_per_s:
            pred *= F / chip.peak("fp8")  # MosaicML's FP8 MFU is against the FP8 peak
            out["assumptions"].append("an FP8 run's MFU is taken against the FP8 peak (MosaicML's convention)")
        if "%" not in unit and "percent" not in unit.lower() and measured <= 1:
            pred /= 100  # a fraction
        return done(pred)

    if q == "flop_per_s":
        model_flop = re.search(r"(?<![a-z])model(?![a-z])|6nd", text) is not None
        per_s = mfu * F if model_flop else hfu_p * (r_carry["full"] if carry == "mfu" else 1.0) * F
        prefix = _FLOP_PREFIX.search(unit.lower()) or _FLOP_PREFIX.search(metric.lower())
        letter = next(x for x in prefix.groups() if x)
        scale = {"g": 1e9, "t": 1e12, "p": 1e15, "e": 1e18}[letter]
        total = not per_chip and bool(letter in "pe" or re.search(r"aggregate|total|cluster", text))
        if total and G is None:
            return refuse(f"{unit!r} over all chips, but the row states no chip count")
        if not per_chip and not total:
            out["assumptions"].append(f"{unit!r} read as per chip")
        return done(per_s * (G if total else 1) / scale)

    if q == "step_time":  # the compute of the step's B · S tokens at the carried (and floored) utilisation
        return done(float(compute_time(flop_tok * B * S, 1.0, G, F, mfu)) / unit_s)

    # tokens/s or samples/s
    per_chip = per_chip or bool(_PER_CHIP_RATE.search(text)) or bool(
        _LOG_TPS.fullmatch(metric.lower()) and not _SUMMED.search(f"{text} | {row.get('notes', '').lower()}"))
    if not per_chip and G is None:
        return refuse(f"{unit!r} over all chips, but the row states no chip count")
    prefix = re.search(r"(?<![a-z])([km])\s*(?:tok|samples?|seq)", unit.lower())
    scale = {"k": 1e3, "m": 1e6}[prefix.group(1)] if prefix else 1.0
    per_sample = S if q == "samples_per_s" else 1.0
    return done(mfu * F / flop_tok * (1 if per_chip else G) / per_sample / scale)


def _roofline_mfu(row: dict, p, system, model, model_text: str, N: float, G, S, rr: str) -> tuple[float, list[str]]:
    """The row's MFU by the roofline carry from prior p (training.carry): the prior's step split into matmuls,
    non-matmul bytes, tensor-, context- and data-parallel traffic and its bubble, the residual share carried to the
    row's chip, fabric, model and layout; what the row leaves out is the prior's (said)."""
    from .carry import Setup, carried_mfu, read_layout, setup_of_prior, shapes
    from .runs import recompute_ratio

    ps = setup_of_prior(p)
    notes = []
    if not G:
        G = ps.G
        notes.append(f"chips not stated: the prior's {ps.G:g}")
    if not S:
        S = ps.S
        notes.append(f"sequence length not stated: the prior's {ps.S:g}")
    B = _row_batch(row, system, G, S)
    if not B:
        B = ps.B * ps.S / S
        notes.append(f"global batch not stated: the prior's {ps.B * ps.S:,.0f} tokens")
    L, D, N_total, how = shapes(model, model_text, N)
    attn = float(arch.attention_flop_per_token(model, int(S), "prefill")) if model is not None else 0.0
    lay = read_layout(f"{_split_text(row)}; {row.get('notes', '')}", G, system.domain_chips, ps.layout,
                      f"the prior {p.name}'s")
    r = float(recompute_ratio(rr, N, attn))
    target = Setup(row.get("id", "the row"), system, float(G), N, N_total, L, D, attn, float(S), float(B), r, rr,
                   lay, how, K=model.n_kv_heads if model is not None else 0,
                   H=model.head_dim if model is not None else 0)
    mfu, _, _, more, rho = carried_mfu(ps, p.mfu, target)
    return float(mfu), [f"roofline carry from {p.name}: residual share {100 * rho:.1f} % of its step", *notes,
                        *more]


def validate_training(rows: list[dict], held_out: bool = True, carry: str = "hfu") -> dict:
    """Predict every training row; the rows, and the median and 90th-percentile absolute error per quantity."""
    from ..measure.validate.match import Aliases

    al = Aliases()
    preds = [p for p in (predict_training_row(r, held_out, carry, al) for r in rows) if p is not None]

    def stats(errs: list[float]) -> dict:
        if not errs:
            return {"n": 0, "median_abs_error": None, "p90_abs_error": None}
        a = np.abs(np.asarray(errs))
        return {"n": len(errs), "median_abs_error": float(np.median(a)), "p90_abs_error": float(np.quantile(a, 0.9))}

    done = [p for p in preds if p["error"] is not None]
    summary = {"all": stats([p["error"] for p in done])}
    for q, k in QUANTITIES.items():
        summary[k] = stats([p["error"] for p in done if p["quantity"] == q])
    summary["not_predicted"] = len(preds) - len(done)
    return {"basis": preds[0]["basis"] if preds else "", "rows": preds, "summary": summary}
