"""The split `serve` runs a mixture-of-experts model on when none is given: the fastest decode step of the splits
engines offer on the G chips, at the command's batch and context (`price` prices the same splits and keeps the
cheapest request: economics.pricing).

The engines' splits of an MoE over G chips (roofline.Layout):

- TP{G}: attention and every expert tensor-parallel over the G chips — what vLLM, SGLang and TensorRT-LLM run on
  `--tensor-parallel-size G` / `--tp G` unless expert parallelism is asked for (vLLM 0.11.0
  config/parallel.py `enable_expert_parallel: bool = False`, "Use expert parallelism instead of tensor parallelism
  for MoE layers"; model_executor/layers/fused_moe/config.py FusedMoEParallelConfig.make: without it the experts'
  tp_size is dp · tp; SGLang 0.5.3 server_args.py `ep_size: int = 1`, distributed/parallel_state.py
  `moe_tp_size = tensor_model_parallel_size // moe_ep_size`);
- TP{G} EP{G}: attention tensor-parallel, each expert whole on one chip (vLLM `--enable-expert-parallel`, SGLang
  `--ep-size G`);
- TP1 attention-DP{G} EP{G}: attention data-parallel, experts over every chip — DeepSeek's large-scale layout
  (roofline.default_layout, adaptive: a lone prompt's idle chips join it as tensor parallelism).

Each is offered where an engine can run it: tensor-parallel attention needs the query heads to divide among the
chips (n_heads mod tp = 0), tensor-parallel experts their hidden size (d_ff_expert mod moe_tp = 0). The default is
the one whose decode step at (B, S) is fastest among those whose weights and KV fit; where none fits, the one that
holds the fewest weights (ties: the order above, the engines' own default first). Tokens per step are B in every
split, so the fastest step is also the most tokens per chip.

Physics behind the choice: at a small batch a step reads the experts its tokens hit; under EP the chip holding an
active expert reads all of it while under TP every chip reads 1/G of each, so few-expert MoEs (Mixtral 8x7B on
8 H200 at batch 1: TP8 3.5 ms against 5.4 ms) decode faster tensor-parallel; at large batches of many-expert
models every expert is hit on every chip either way, and data-parallel attention's smaller all-to-all and unsplit
attention win (DeepSeek-V3 on 8 H200 at batch 128). On 72 chips (an NVL72) no tensor-parallel split of DeepSeek's
128 heads exists, so it keeps the expert-parallel layout the lecture's claims E1 and P6 describe.
"""

from __future__ import annotations

import numpy as np

from ..core import arch
from ..core.records import Model, Priors, System
from ..core.roofline import Layout, default_layout, step
from ..core.units import fmt
from .engine_memory import held_weight_bytes

__all__ = ["engine_splits", "fastest_split"]


def engine_splits(m: Model, G: int) -> list[Layout]:
    """The splits of an MoE over G chips an engine can run (module doc), the engines' default first; a dense model's
    (or one chip's) only split is default_layout's."""
    if m.moe is None or G <= 1:
        return [default_layout(m, G)]
    tp_ok = m.n_heads % G == 0
    out = [Layout(tp=G, ep=1)] if tp_ok and m.moe.d_ff_expert % G == 0 else []
    out += [Layout(tp=G, ep=G)] if tp_ok else []
    return out + [default_layout(m, G)]


def fastest_split(m: Model, system: System, *, G: int, B, S, precision: str, kv_dtype: str, basis: str = "prior",
                  priors: Priors | None = None) -> tuple[Layout, str]:
    """The split of `engine_splits` whose decode step at B sequences of context S is fastest among those that fit
    (module doc), and a line saying so; an array batch or context, or a single candidate, keeps default_layout."""
    cands = engine_splits(m, G)
    if np.ndim(B) or np.ndim(S) or m.moe is None or G <= 1:
        return default_layout(m, G), ""
    if len(cands) == 1:
        return cands[0], (f"split {cands[0].words(G)}: the only split of the engines' here (tensor-parallel "
                          f"attention needs the {m.n_heads} query heads to divide among the {G} chips); give --split "
                          f"to choose")
    cap = G * system.chip.hbm_capacity_bytes
    W_all = arch.model_weight_bytes(m, precision)
    kv = B * float(arch.kv_stored_bytes(m, S, kv_dtype))
    held = [float(held_weight_bytes(m, W_all, G, lay.tp, precision)) for lay in cands]
    t = [float(step(m, system, G=G, B=B, S=S, phase="decode", precision=precision, kv_dtype=kv_dtype, basis=basis,
                    priors=priors, layout=lay).t_step) for lay in cands]
    fits = [w + kv <= cap for w in held]
    key = (lambda i: (not fits[i], t[i])) if any(fits) else (lambda i: (held[i], t[i]))
    best = min(range(len(cands)), key=key)
    said = ", ".join(f"{lay.words(G)} {fmt(ti, 's')}" + ("" if ok else " (does not fit)")
                     for lay, ti, ok in zip(cands, t, fits))
    tie = any(fits) and sum(1 for ti, ok in zip(t, fits) if ok and ti <= t[best]) > 1  # spec basis: every split ties
    why = ("the engines' default of the splits tied for the fastest decode step" if tie else
           "the fastest decode step" if any(fits) else "none fits; the one holding the fewest weights")
    return cands[best], (f"split {cands[best].words(G)}: {why} at batch {fmt(B)}, context {fmt(S)} tok of {said}; "
                         f"give --split to choose")
