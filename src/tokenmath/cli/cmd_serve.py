"""`tokenmath serve MODEL --on SYSTEM`: prefill and decode of one replica, priced, bounded, checked for fit."""

from __future__ import annotations

import numpy as np
import typer
from rich.table import Table

from ..serving.serve import serve
from ..core.errors import InputError
from ..core.load import load_system, names
from ..core.units import fmt
from .grid_args import parse_number
from .serving_args import (ACCEPTANCE_LENGTH_OPTION, ACCEPTANCE_OPTION, DRAFT_OPTION, MTP_OPTION, SERVE_SPLIT_OPTION,
                           layout_of, speculation)
from .common import (
    ALLOW_EXTRAPOLATION_OPTION, BASIS_OPTION, CHIPS_OPTION, EXPLAIN_OPTION, JSON_OPTION, KV_DTYPE_OPTION, ON_OPTION,
    PRECISION_OPTION, SET_OPTION, console, emit_json, extrapolation, fail, guard, load_triple,
)


DEFAULT_BATCH = 128  # sequences in flight when --batch is not given (fewer where their KV does not fit)


def register(app: typer.Typer) -> None:
    @app.command("serve")
    @guard
    def serve_cmd(
        model: str = typer.Argument(..., help="Catalog model name or a Hugging Face config.json path."),
        on: str = ON_OPTION,
        chips: int = CHIPS_OPTION,
        batch: int = typer.Option(None, "--batch", "-B", help="Sequences in flight (decode tokens per step; default "
                                  "128, or the most whose KV fits beside the weights where 128 do not)."),
        context: str = typer.Option("4096", "--context", "-S", help="KV length per sequence (prompt length in "
                                    "prefill; 32k, 1M accepted)."),
        precision: str = PRECISION_OPTION,
        kv_dtype: str = KV_DTYPE_OPTION,
        basis: str = BASIS_OPTION,
        mtp: int = MTP_OPTION,
        acceptance: float = ACCEPTANCE_OPTION,
        acceptance_length: float = ACCEPTANCE_LENGTH_OPTION,
        draft: str = DRAFT_OPTION,
        explain: bool = EXPLAIN_OPTION,
        as_json: bool = JSON_OPTION,
        set_: list[str] = SET_OPTION,
        engine: str = typer.Option(None, "--engine", help="trtllm, sglang or vllm: use the attention, MoE and "
                                   "communication kernels measured on that engine where the chip's priors have them "
                                   "(default: the engines' median; dense GEMMs always read the median)."),
        allow_extrapolation: bool = ALLOW_EXTRAPOLATION_OPTION,
        split: str = SERVE_SPLIT_OPTION,
    ) -> None:
        """Step time, tokens/s, USD per million tokens, B*, latency floor and memory fit."""
        r = compute(model, on, chips, batch, context, precision, kv_dtype, basis, explain or as_json, set_, engine,
                    mtp=mtp, acceptance=acceptance, acceptance_length=acceptance_length, draft=draft,
                    allow_extrapolation=allow_extrapolation, split=split)
        if as_json:
            emit_json(to_json(r, explain))
        else:
            _print(r)
            if explain:
                console.print()
                console.print(r.explain(), markup=False)
        for w in warnings(r):
            fail(w)


def _tokens(text: str, name: str) -> int:
    """A token count as users type it ('4096', '32k', '1M'): a whole number, else one line."""
    x = parse_number(text, name)
    if x != int(x):
        raise InputError(f"{name} {text!r} is not a whole number of tokens")
    return int(x)


def compute(model, on, chips, batch, context, precision, kv_dtype, basis, explain, set_, engine=None, mtp=None,
            acceptance=None, acceptance_length=None, draft=None, allow_extrapolation=False, split=None):
    """`serve` from its options, checked as the command line checks them (the web API calls it too)."""
    context = _tokens(str(context), "--context")  # '32k' as the command line and the web take it
    m, s, priors = load_triple(model, on, set_)
    priors = extrapolation(priors, allow_extrapolation, precision or m.weight_dtype, kv_dtype)
    sp = speculation(mtp, acceptance, acceptance_length, draft)
    lay = layout_of(split, m, s.domain_chips if chips is None else chips)
    run = lambda B, layout=lay: serve(m, s, G=chips, B=B, S=context, precision=precision,  # noqa: E731
                                      kv_dtype=kv_dtype, basis=basis, priors=priors, engine=engine, explain=explain,
                                      spec=sp, layout=layout)
    r = run(DEFAULT_BATCH if batch is None else batch)
    fit = _most_that_fit(r) if batch is None and not r.fits else 0  # no batch asked for: the most whose KV fits
    if fit >= 1:
        r = run(fit)
        r.numbers["batch_note"] = (f"batch {fit}: the most sequences of {context} tokens whose KV fits beside the "
                                   f"weights ({DEFAULT_BATCH}, the default, do not); give --batch to choose")
    if s.chip.widened_note(r.precision):
        r.numbers["precision_note"] = s.chip.widened_note(r.precision)
    if s.domain_chips == 1 and r.G > 1:
        r.numbers["domain_note"] = _lone_chip_note(s, r)
    if m.max_context and context > m.max_context:
        r.numbers["context_note"] = (f"context {context:,} tokens is beyond {m.name}'s trained context of "
                                     f"{m.max_context:,} (catalog); computed anyway, the model would not serve it")
    return r


def _lone_chip_note(s, r) -> str:
    """--on names one chip and --chips asks for more: they share no scale-up link, so every collective crosses the
    network; name the servers of that chip that would hold them over NVLink or its like."""
    homes = sorted((h.domain_chips < r.G, n, h.domain_chips) for n in names("systems")
                   if (h := load_system(n)).chip.name == s.chip.name and h.domain_chips > 1)
    said = [f"{n}" + (f" ({d} chips a domain)" if d < r.G else "") for _, n, d in homes[:2]]
    return (f"{s.name} names one chip with no scale-up link: its {r.G} chips talk over the network at "
            f"{fmt(s.scaleout_bw, 'B/s')} a chip (comm {fmt(r.value('decode.t_comm_s'), 's')} a decode step)"
            + (f"; for servers of them joined by their scale-up link say --on {' or '.join(said)}" if said else ""))


def _most_that_fit(r) -> int:
    """The most sequences whose KV fits beside the weights (and a draft's), from a report run at DEFAULT_BATCH."""
    v = lambda k: float(np.max(np.asarray(r.value(k) or 0.0, dtype=float)))  # noqa: E731
    room = v("memory.capacity_bytes") - v("memory.weights_bytes") - v("memory.draft_bytes")
    return int(room // (v("memory.kv_bytes") / DEFAULT_BATCH))


def to_json(r, explain: bool = False) -> dict:
    """What `--json` prints."""
    return r.to_dict()


def warnings(r) -> list[str]:
    """A model that does not fit: after the numbers, the command fails with this line."""
    if r.fits:
        return []
    v = r.value
    # a one-module system with no link to another (a Jetson) takes no more chips (roofline refuses them)
    more_chips = bool(r.system.scaleout_bw) or r.G < r.system.domain_chips
    kind = "on-chip SRAM" if r.system.chip.on_chip_memory else "device memory"
    # the fewest chips whose memory holds what this batch and context need (a floor: the split may ask more)
    n = int(np.ceil(v("memory.required_bytes") / (v("memory.capacity_bytes") / r.G)))
    return [f"{r.model.name} does not fit on {r.G} × {r.system.chip.name}: needs {fmt(v('memory.required_bytes'), 'B')} "
            f"(weights {fmt(v('memory.weights_bytes'), 'B')} + KV {fmt(v('memory.kv_bytes'), 'B')}) of "
            f"{fmt(v('memory.capacity_bytes'), 'B')} {kind}; use " +
            (f"more --chips (their memory alone holds it from {n:,}), " if more_chips else "") +
            "a smaller --batch or --context, or a narrower --precision"]


def _interval_words(iv, unit: str) -> str:
    return "" if iv is None else f" [80 % interval {fmt(iv[0], unit)} – {fmt(iv[1], unit)}]"


def _print(r) -> None:
    v = r.value
    chips = f"{r.G} chip" + ("s" if r.G != 1 else "")
    title = (f"{r.model.display_name or r.model.name} on {r.system.display_name or r.system.name} — {chips} ({v('split')}), "
             f"batch {fmt(r.B)}, context {fmt(r.S)} tok, {r.precision} weights, {r.kv_dtype} KV, {r.basis} basis")
    t = Table(title=title, title_justify="left")
    t.add_column("")
    t.add_column("prefill (prompt)", justify="right")
    t.add_column("decode (output)", justify="right")
    rows = [("step time", "step_time_s", "s"), ("tokens/s per replica", "tokens_per_s", "tok/s"),
            ("  80 % interval", "tokens_per_s_interval", "tok/s"),
            ("tokens/s per chip", "tokens_per_s_per_chip", "tok/s"),
            ("USD per M tokens", "usd_per_mtok", "USD"), ("bound by", "bound", None),
            ("  compute t_math", "t_math_s", "s"), ("  weights t_weights", "t_weights_s", "s"),
            ("  KV t_kv", "t_kv_s", "s"), ("  comm t_comm", "t_comm_s", "s"), ("  overhead", "t_overhead_s", "s")]
    for label, key, unit in rows:
        cells = []
        for ph in ("prefill", "decode"):
            x = v(f"{ph}.{key}")
            if key.endswith("_interval"):
                cells.append("—" if x is None else f"{fmt(x[0], unit)} – {fmt(x[1], unit)}")
                continue
            missing = "— (empty prompt)" if v(f"{ph}.note") else "no price in catalog"
            cells.append(missing if x is None else (str(x) if unit is None else fmt(x, unit)))
        t.add_row(label, *cells)
    console.print(t)
    console.print(f"optimal batch B* = R·rho = {fmt(v('hardware_ratio'))} × {fmt(v('rho'))} = "
                  f"{fmt(v('optimal_batch'))} sequences (spec); with efficiency priors ≈ "
                  f"{fmt(v('optimal_batch_prior'))}", markup=False)
    console.print(f"latency floor (all weights read once) = {fmt(v('latency_floor_s'), 's')} (spec bound)",
                  markup=False)
    if v("decode.speculative.tokens_per_step") is not None:
        console.print(f"speculative decoding: K = {v('decode.speculative.draft_tokens')} drafts by "
                      f"{v('decode.speculative.draft')}, α = {fmt(v('decode.speculative.acceptance'))} → "
                      f"tau = {fmt(v('decode.speculative.tokens_per_step'))} tokens per step of "
                      f"{fmt(v('decode.speculative.step_time_s'), 's')} (verify + drafts): TPOT "
                      f"{fmt(v('decode.speculative.tpot_s'), 's')}, {fmt(v('decode.speculative.tokens_per_s'), 'tok/s')}"
                      f" per replica{_interval_words(v('decode.speculative.tokens_per_s_interval'), 'tok/s')}, "
                      f"{fmt(v('decode.speculative.speedup'))}× plain decode", markup=False)
    if v("split_choice"):
        console.print(v("split_choice"), markup=False)
    if v("batch_note"):
        console.print(v("batch_note"), markup=False)
    if v("context_note"):
        console.print(v("context_note"), markup=False)
    if v("domain_note"):
        console.print(v("domain_note"), markup=False)
    if v("precision_note"):
        console.print(v("precision_note"), markup=False)
    fits = "fits" if r.fits else "DOES NOT FIT"
    draft = f" + draft {fmt(v('memory.draft_bytes'), 'B')}" if v("memory.draft_bytes") is not None else ""
    console.print(f"memory: weights {fmt(v('memory.weights_bytes'), 'B')} + KV {fmt(v('memory.kv_bytes'), 'B')}{draft} "
                  f"= {fmt(v('memory.required_bytes'), 'B')} of {fmt(v('memory.capacity_bytes'), 'B')} device memory — {fits}",
                  markup=False)
