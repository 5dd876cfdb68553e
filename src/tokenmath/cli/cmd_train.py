"""`tokenmath train MODEL --on SYSTEM --chips N --tokens D`: FLOP, time and cost of a pre-training run at a
published MFU, memory per chip, the pipeline bubble and a split that fits; `--validate` predicts the TRN-* rows."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from ..core.errors import InputError
from ..core.load import read_table
from ..training import CARRY, RECOMPUTE, train, validate_training
from ..training.runs import CARRY_RUN
from ..core.units import fmt
from .common import (
    EXPLAIN_OPTION, JSON_OPTION, SET_OPTION, console, emit_json, err_console,
    guard, load_pair,
)
from .count_args import parse_count

# the repository's measurement table (validation/public_measurements.csv), as `tokenmath validate` uses it
DEFAULT_TABLE = Path(__file__).resolve().parents[3] / "validation" / "public_measurements.csv"


def register(app: typer.Typer) -> None:
    @app.command("train")
    @guard
    def train_cmd(
        model: str = typer.Argument(None, help="Catalog model name or a Hugging Face config.json path."),
        on: str = typer.Option(None, "--on", help="System (e.g. hgx-h100, gb200-nvl72), chip, or profile YAML."),
        chips: int = typer.Option(None, "--chips", "-G", help="Chips in the run."),
        tokens: str = typer.Option(None, "--tokens", "-D", help="Training tokens (15.6e12, 15.6T)."),
        seq_len: int = typer.Option(None, "--seq-len", "-S", help="Sequence length (default: the MFU prior's run)."),
        mfu: float = typer.Option(None, "--mfu", help="Model FLOP utilisation, 0–1 (default: nearest published run)."),
        recompute: str = typer.Option("selective", "--recompute",
                                      help="Activation recomputation: none | selective | full."),
        reversible: bool = typer.Option(False, "--reversible",
                                        help="Reversible layers: O(1) activation memory at +33 % FLOP."),
        pp: int = typer.Option(None, "--pp", help="Pipeline stages (default: searched)."),
        microbatches: int = typer.Option(None, "--microbatches", "-M",
                                         help="Micro-batches per step (default: global batch ÷ data-parallel ways)."),
        tp: int = typer.Option(None, "--tp", help="Tensor-parallel ways (default: searched in the scale-up domain)."),
        cp: int = typer.Option(None, "--cp", help="Context-parallel ways: ranks sharing each sequence's tokens "
                                                  "(default: searched)."),
        ep: int = typer.Option(None, "--ep", help="Expert-parallel ways, MoE only (default: searched)."),
        zero: int = typer.Option(None, "--zero", help="ZeRO stage 0–3 (default: searched over 1–3)."),
        interleave: int = typer.Option(1, "--interleave", help="Interleaved virtual stages per chip (1 = 1F1B)."),
        batch_tokens: str = typer.Option(None, "--batch-tokens", help="Global batch in tokens (default: the prior's)."),
        validate: bool = typer.Option(False, "--validate",
                                      help="Predict the TRN-* rows of the measurement table and print the errors."),
        measurements: str = typer.Option(None, "--measurements", help="Measurement table for --validate."),
        in_sample: bool = typer.Option(False, "--in-sample",
                                       help="--validate: let a run's own published MFU predict it."),
        carry: str = typer.Option("hfu", "--carry",
                                  help="What carries from the published run: 'hfu' (default: its hardware-FLOP "
                                       "utilisation unchanged), 'roofline' (its step rebuilt on this chip, fabric, "
                                       "model and split, its unexplained share carried: held out on the published "
                                       "runs it errs more than 'hfu', validation/README.md); --validate also 'mfu'."),
        explain: bool = EXPLAIN_OPTION,
        as_json: bool = JSON_OPTION,
        set_: list[str] = SET_OPTION,
    ) -> None:
        """Training FLOP (6·N·D + attention), time and cost at an MFU prior, memory per chip, bubble, split."""
        r = compute(model, on, chips, tokens, seq_len, mfu, recompute, reversible, pp, microbatches, tp, ep, zero,
                    interleave, batch_tokens, validate, in_sample, carry, explain or as_json, set_, measurements, cp)
        if validate:
            if as_json:
                emit_json(r)
            else:
                _print_validation(r, Path(measurements).name if measurements else DEFAULT_TABLE.name)
            return
        if as_json:
            emit_json(to_json(r, explain))
        else:
            _print(r)
            if explain:
                console.print()
                console.print(r.explain(), markup=False)
        for w in warnings(r):
            err_console.print(f"warning: {w}", markup=False)


def compute(model, on, chips, tokens, seq_len, mfu, recompute, reversible, pp, microbatches, tp, ep, zero, interleave,
            batch_tokens, validate, in_sample, carry, explain, set_, measurements=None, cp=None):
    """`train` from its options, checked as the command line checks them (the web API calls it too): a run, or
    with --validate the TRN-* rows of the measurement table predicted."""
    if validate:
        if carry not in CARRY:
            raise InputError(f"--carry must be one of {', '.join(CARRY)} (got {carry!r})")
        table = Path(measurements) if measurements else DEFAULT_TABLE
        if not table.exists():
            raise InputError(f"measurement table {table} not found; pass --measurements PATH")
        rows = read_table(table)
        if not rows:
            raise InputError(f"{table}: no rows under the header; nothing to validate")
        return validate_training(rows, held_out=not in_sample, carry=carry)
    missing = [n for n, v in (("MODEL", model), ("--on", on), ("--chips", chips), ("--tokens", tokens)) if v is None]
    if missing:
        raise InputError(f"train needs {', '.join(missing)} (e.g. tokenmath train llama-3.1-405b --on hgx-h100 "
                         f"--chips 16384 --tokens 15.6e12), or --validate")
    if recompute not in RECOMPUTE:
        raise InputError(f"--recompute must be one of {', '.join(RECOMPUTE)} (got {recompute!r})")
    if carry not in CARRY_RUN:
        raise InputError(f"--carry must be one of {', '.join(CARRY_RUN)} for a run (got {carry!r})")
    m, s = load_pair(model, on, set_, priors=False)  # MFU priors, not the serving efficiencies
    return train(m, s, G=chips, tokens=parse_count(tokens, "--tokens"), S=seq_len, mfu=mfu, recompute=recompute,
                 reversible=reversible, pp=pp, microbatches=microbatches, tp=tp, ep=ep, zero=zero,
                 interleave=interleave, batch_tokens=parse_count(batch_tokens, "--batch-tokens") if batch_tokens
                 else None, carry=carry, explain=explain, cp=cp)


def to_json(r, explain: bool = False) -> dict:
    """What `--json` prints: the run with its derivations, or the --validate table."""
    return r if isinstance(r, dict) else r.to_dict(derivations=True)


def warnings(r) -> list[str]:
    """No split fits: printed after the numbers (the command still succeeds)."""
    if isinstance(r, dict) or r.fits:
        return []
    v = r.value
    return [f"no split of {r.G} × {r.system.chip.name} fits {r.model.name} with --recompute {v('recompute')}: the "
            f"least memory is {fmt(v('memory.total_bytes'), 'B')} per chip of {fmt(v('memory.capacity_bytes'), 'B')} "
            f"(activations {fmt(v('memory.activations_bytes'), 'B')}); try --recompute full, --reversible, --zero 3, "
            f"a shorter --seq-len or more --chips"]


def _print(r) -> None:
    v = r.value
    m, s = r.model, r.system
    t = Table(title=f"{m.display_name or m.name} on {r.G:,} × {s.chip.display_name or s.chip.name} — "
                    f"{fmt(r.tokens, 'tokens')} in sequences of {r.S:,}", title_justify="left")
    t.add_column("")
    t.add_column("value", justify="right")
    t.add_column("how", overflow="fold")
    rows = [
        ("training FLOP", fmt(v("flop"), "FLOP"), f"6·N·D {fmt(v('flop_6nd'), 'FLOP')} + attention "
                                                    f"{fmt(v('flop_attention'), 'FLOP')}"),
        ("MFU", fmt(v("mfu"), "%"), v("mfu_source") + "".join(f"; {n}" for n in v("carry_notes"))),
        ("recompute", str(v("recompute")), f"hardware/model FLOP vs the prior's: × {v('hfu_ratio'):.3f}"),
        ("time", fmt(v("time_s"), "s"), "flop · hfu_ratio / (G · F_bf16 · MFU)"),
        ("chip-hours", fmt(v("chip_hours"), "chip-h"), ""),
        ("cost", fmt(v("cost_usd"), "USD") if v("cost_usd") is not None else "no price in catalog",
         f"at {fmt(v('usd_per_chip_hour'), 'USD')}/chip-hour" if v("usd_per_chip_hour") else ""),
    ]
    for row in rows:
        t.add_row(*row)
    console.print(t)
    if r.numbers.get("time_s_interval"):
        lo, hi = v("time_days_interval")
        console.print(f"80 % interval: time {fmt(lo)} – {fmt(hi)} days, MFU {fmt(v('mfu_interval')[0], '%')} – "
                      f"{fmt(v('mfu_interval')[1], '%')}, the same factors for chip-hours and cost (residual group "
                      f"{v('interval_group').split(' (')[0]} of catalog/intervals/training.yaml: held-out TRN rows)",
                      markup=False)
    mem = Table(title=f"memory per chip (split TP{v('split.tp')} CP{v('split.cp')} PP{v('split.pp')} DP{v('split.dp')}"
                      f"{' EP' + str(v('split.ep')) if r.model.moe else ''}, ZeRO-{v('split.zero')})",
                title_justify="left")
    mem.add_column("")
    mem.add_column("bytes", justify="right")
    for label, key in (("weights (BF16)", "weights_bytes"), ("gradients (BF16)", "gradients_bytes"),
                       ("optimizer (Adam, 12 B/param)", "optimizer_bytes"),
                       (f"activations ({v('recompute')})", "activations_bytes"), ("total", "total_bytes"),
                       ("HBM capacity", "capacity_bytes")):
        mem.add_row(label, fmt(v(f"memory.{key}"), "B"))
    mem.add_row("fits", "yes" if v("memory.fits") else "NO")
    console.print(mem)
    console.print("activations per chip by policy: " + ", ".join(
        f"{k} {fmt(v(f'activations.{k}_bytes'), 'B')}" for k in ("none", "selective", "full", "reversible"))
        + f"; reversible layers save {fmt(v('reversible.saved_bytes'), 'B')} for "
        f"+{fmt(v('reversible.flop_overhead'), '%')} FLOP", markup=False)
    console.print(f"pipeline bubble (P−1)/(v·M+P−1) = {fmt(v('bubble'), '%')} with P = {v('split.pp')}, "
                  f"M = {v('split.microbatches')} micro-batches of {fmt(v('split.micro_batch_seqs'))} seq, "
                  f"v = {v('split.interleave')}; exposed communication ≈ {fmt(v('split.comm_fraction'), '%')} "
                  f"of compute; global batch {fmt(v('split.global_batch_tokens'))} tokens "
                  f"({v('split.global_batch_source')})", markup=False)


def _print_validation(res: dict, table_name: str) -> None:
    t = Table(title=f"TRN-* rows of {table_name}: {res['basis']}", title_justify="left")
    for c in ("id", "metric", "measured", "predicted", "error", "prior", "note"):
        t.add_column(c, justify="right" if c in ("measured", "predicted", "error") else "left")
    for p in res["rows"]:
        t.add_row(p["id"], p["metric"], _num(p["measured"]), _num(p["predicted"]),
                  f"{100 * p['error']:+.1f} %" if p["error"] is not None else "—", p["prior_row"] or "",
                  p.get("reason", ""))
    console.print(t)
    for k, st in res["summary"].items():
        if isinstance(st, dict) and st["n"]:
            console.print(f"{k}: n = {st['n']}, median |error| = {100 * st['median_abs_error']:.1f} %, "
                          f"p90 = {100 * st['p90_abs_error']:.1f} %", markup=False)
    console.print(f"not predicted: {res['summary']['not_predicted']} rows (reason in the table)", markup=False)


def _num(x) -> str:
    return "—" if x is None else (f"{x:,.4g}" if x < 1e5 else f"{x:.3g}")
