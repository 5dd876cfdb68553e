"""Command-line options shared by serve, simulate and frontier: speculative decoding / MTP, and the scheduler."""

from __future__ import annotations

import typer

from ..core.errors import InputError
from ..core.load import load_engine, load_model
from ..core.units import parse_quantity
from ..serving.speculative import Speculation, acceptance_from_length

__all__ = ["ENGINE_OPTION", "FRONTIER_ENGINE_OPTION", "MTP_OPTION", "ACCEPTANCE_OPTION", "ACCEPTANCE_LENGTH_OPTION",
           "DRAFT_OPTION", "MAX_BATCH_OPTION", "PREFILL_CHIPS_OPTION", "DECODE_CHIPS_OPTION", "speculation", "parse_seconds"]

MTP_OPTION = typer.Option(None, "--mtp", help="Draft tokens per step K (MTP or a draft model: speculative decoding).")
ACCEPTANCE_OPTION = typer.Option(None, "--acceptance", help="Per-token acceptance rate α of the drafts, in [0, 1].")
ACCEPTANCE_LENGTH_OPTION = typer.Option(None, "--acceptance-length",
                                        help="Or: mean tokens per verify step (1 ≤ L ≤ K + 1), as papers report it.")
DRAFT_OPTION = typer.Option(None, "--draft", help="Draft model from the catalog (default: an MTP module of the model).")
MAX_BATCH_OPTION = typer.Option(None, "--max-batch", help="Sequences in flight at most (default: the engine's, and the KV cap).")
PREFILL_CHIPS_OPTION = typer.Option(None, "--prefill-chips", help="Disagg: chips of the prefill pool.")
DECODE_CHIPS_OPTION = typer.Option(None, "--decode-chips", help="Disagg: chips of the decode pool.")
ENGINE_OPTION = typer.Option(None, "--engine", help="trtllm, sglang or vllm: that engine's scheduler defaults "
                             "(catalog/engines/<engine>.yaml: policy, token budget, batch cap, KV pool) and the "
                             "attention, MoE and communication kernels measured on it (default: "
                             "catalog/engines/default.yaml and the engines' median kernels).")
# frontier's closed form keeps its --policy (continuous unless given): the engine brings all else
FRONTIER_ENGINE_OPTION = typer.Option(None, "--engine", help="trtllm, sglang or vllm: that engine's token budget, "
                                      "batch cap and KV pool (catalog/engines/<engine>.yaml; the policy stays "
                                      "--policy's) and the attention, MoE and communication kernels measured on it "
                                      "(default: catalog/engines/default.yaml and the engines' median kernels).")


def engine_policy(engine: str | None, policy: str | None) -> str:
    """--policy as given, else the scheduling the engine runs by default (its catalog entry's `policy`)."""
    return policy or str(load_engine(engine or "default")["policy"])


def speculation(mtp: int | None, acceptance: float | None, acceptance_length: float | None,
                draft: str | None) -> Speculation | None:
    """The Speculation the options describe, or None when --mtp is not given."""
    if mtp is None:
        if acceptance is not None or acceptance_length is not None or draft is not None:
            raise InputError("--acceptance/--acceptance-length/--draft need --mtp K (draft tokens per step)")
        return None
    if not 1 <= mtp <= 64:
        raise InputError(f"--mtp (draft tokens per step) must be a whole number from 1 to 64 (got {mtp})")
    if (acceptance is None) == (acceptance_length is None):
        raise InputError("with --mtp give one of --acceptance RATE or --acceptance-length TOKENS")
    alpha = acceptance if acceptance is not None else acceptance_from_length(acceptance_length, mtp)
    layers = int(load_engine()["mtp_layers"])
    return Speculation(K=mtp, alpha=alpha, draft=load_model(draft) if draft else None, mtp_layers=layers)


def parse_seconds(text: str | None, name: str) -> float | None:
    """'2s', '200ms' or '0.5' (seconds) -> seconds; a positive time or one clear line."""
    if text is None:
        return None
    x = parse_quantity(text, "s")
    if not x > 0:
        raise InputError(f"{name} must be a positive time, e.g. 2s or 200ms (got {text})")
    return x


def split_option(moe_default: str):
    """--split, its help ending with what an MoE runs without it (the commands differ)."""
    return typer.Option(None, "--split", help="How the replica's chips split the model, as tables write it: 'TP8', "
                        "'TP2 EP4', 'TP4 PP2', 'DEP8' (attention data-parallel, experts over the same chips). "
                        f"Default: tensor parallel for a dense model; for an MoE {moe_default}.")


SPLIT_OPTION = split_option("attention data-parallel with the experts over every chip (DeepSeek's layout, 'DEP8' "
                            "on 8 chips)")
SERVE_SPLIT_OPTION = split_option("the fastest decode step at --batch and --context of the splits engines run: "
                                  "'TP8' (experts tensor-parallel, the engines' own default), 'TP8 EP8' and 'DEP8' "
                                  "on 8 chips, among those that fit")


def layout_of(split: str | None, m, G: int):
    """--split as a roofline.Layout over G chips (None: the default split). Read by the validation table's parser
    (measure.validate.serving.split_of), so 'TP8', 'tp=4,pp=2', '--tp 8 --pp 2' and 'DEP8' all work, and read as
    the table's rows are: 'TP t DP d' is t·d chips a stage (an MoE's also SGLang's t chips with d attention groups
    inside), 'TP8 … DP attention' of an MoE is attention data-parallel over the 8, 'MoE-TP t' splits each expert
    t ways (ep = chips / t). A split that names no way of this model (EP of a dense one) or does not tile the
    stage's chips (DP3 of 8) is refused with one line, not rounded to another."""
    if split is None:
        return None
    from ..core.roofline import Layout
    from ..measure.validate.serving import split_of
    s = split_of(split)
    if not any(isinstance(v, int) and not isinstance(v, bool) for v in s.values()):
        raise InputError(f"--split {split!r} names no split with a number of ways (e.g. 'TP8', 'TP2 EP4', 'TP4 PP2')")
    zero = [k for k, v in s.items() if isinstance(v, int) and not isinstance(v, bool) and v < 1]
    if zero:
        raise InputError(f"--split {split!r}: {', '.join(k.upper() for k in zero)} of 0 ways (each way is at least 1)")
    pp = int(s.get("pp", 1) or 1)
    if pp < 1 or G % pp:
        raise InputError(f"--split {split!r}: {pp} pipeline stages do not divide {G} chips")
    stage = G // pp
    moe = m.moe is not None
    experts = [k.upper().replace("MOE_TP", "MoE-TP") for k in ("dep", "ep", "moe_tp") if k in s]
    if experts and not moe:
        raise InputError(f"--split {split!r}: {m.name} is a dense model, it has no experts to split "
                         f"({', '.join(experts)}); give its TP, DP or PP")
    if s.get("dep"):
        return Layout(tp=1, ep=int(s["dep"]), pp=pp)
    tp, ep, dp, mtp = (int(s.get(k, 0) or 0) for k in ("tp", "ep", "dp", "moe_tp"))
    if dp and tp:
        if moe and tp == stage and dp > 1 and tp % dp == 0:
            tp = tp // dp  # SGLang's '--tp 8 --dp 2': 8 chips, 2 attention groups of 4
        elif tp * dp != stage:
            raise InputError(f"--split {split!r}: TP{tp} × DP{dp} is {tp * dp} chips, not the {stage} of "
                             f"{'a stage' if pp > 1 else '--chips'}")
    elif dp:
        if stage % dp:
            raise InputError(f"--split {split!r}: DP{dp} does not divide the {stage} chips of "
                             f"{'a stage' if pp > 1 else '--chips'}")
        tp = stage // dp
    elif tp and moe and s.get("dp_flag"):
        tp = 1  # 'TP8 … DP attention': attention data-parallel over the tensor-parallel group
    if not tp:
        tp = 1 if (ep or mtp) and moe else stage
    if moe and not ep and mtp:
        if stage % mtp:
            raise InputError(f"--split {split!r}: MoE-TP{mtp} does not divide the {stage} chips of "
                             f"{'a stage' if pp > 1 else '--chips'}")
        ep = stage // mtp
    return Layout(tp=tp, ep=(ep or 1) if moe else 1, pp=pp)
