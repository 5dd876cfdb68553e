"""`tokenmath lifecycle --serving-tokens-per-s X --lifetime-days T --active-params N`: the pre-training, RL and
inference token counts that give each phase equal compute, the over-training factor, and their sensitivities."""

from __future__ import annotations

import typer
from rich.table import Table

from ..training.lifecycle import DECODE_INEFFICIENCY, OUTPUTS, RL_MULTIPLIER, lifecycle, sensitivity
from ..core.units import fmt
from .common import EXPLAIN_OPTION, JSON_OPTION, console, emit_json, guard
from .count_args import parse_count

INPUT_LABELS = {"serving_tokens_per_s": "serving tok/s", "lifetime_days": "lifetime", "active_params": "active params",
                "rl_multiplier": "RL FLOP/param/tok", "decode_inefficiency": "decode inefficiency"}
LABELS = {"pretrain_tokens": "pre-training tokens D_pre", "rl_tokens": "RL tokens D_RL",
          "inference_tokens": "inference tokens D_inf", "overtraining_factor": "over-training vs Chinchilla"}


def register(app: typer.Typer) -> None:
    @app.command("lifecycle")
    @guard
    def lifecycle_cmd(
        serving_tokens_per_s: str = typer.Option(..., "--serving-tokens-per-s",
                                                 help="Tokens per second the model serves (5e7, 50M)."),
        lifetime_days: float = typer.Option(..., "--lifetime-days", help="Days the model serves before it is replaced."),
        active_params: str = typer.Option(..., "--active-params", help="Active parameters per token (1e11, 100B)."),
        rl_multiplier: float = typer.Option(RL_MULTIPLIER, "--rl-multiplier",
                                            help="RL FLOP per parameter per token, 2–6 (flashcards: 3)."),
        decode_inefficiency: float = typer.Option(DECODE_INEFFICIENCY, "--decode-inefficiency",
                                                  help="Cost of a decode FLOP ÷ a pre-training FLOP (flashcards: 3)."),
        explain: bool = EXPLAIN_OPTION,
        as_json: bool = JSON_OPTION,
    ) -> None:
        """Equal compute in pre-training (6ND), RL (r·e·ND) and inference (2·e·ND) over the serving lifetime."""
        kw = dict(serving_tokens_per_s=parse_count(serving_tokens_per_s, "--serving-tokens-per-s"),
                  lifetime_days=lifetime_days, active_params=parse_count(active_params, "--active-params"),
                  rl_multiplier=rl_multiplier, decode_inefficiency=decode_inefficiency)
        r = lifecycle(**kw, explain=True)
        sens = sensitivity(**kw)
        if as_json:
            d = r.to_dict(derivations=True)
            d["sensitivity"] = {k: v for k, v in sens.items() if not k.startswith("_")}
            emit_json(d)
            return
        _print(r, sens)
        if explain:
            console.print()
            console.print(r.explain(), markup=False)


def _print(r, sens: dict) -> None:
    v = r.value
    i = r.inputs
    t = Table(title=f"{fmt(i['serving_tokens_per_s'], 'tok/s')} for {fmt(i['lifetime_days'])} days, "
                    f"{fmt(i['active_params'], 'params')} active, RL {fmt(i['rl_multiplier'])} FLOP/param/tok, "
                    f"decode inefficiency {fmt(i['decode_inefficiency'])}×", title_justify="left")
    t.add_column("")
    t.add_column("value", justify="right")
    t.add_column("formula")
    t.add_row("inference tokens D_inf", f"{v('inference_tokens'):.3g}", "r_serve · T_life")
    t.add_row("pre-training tokens D_pre", f"{v('pretrain_tokens'):.3g}", "e_dec · D_inf / 3  (6·N·D_pre = 2·e_dec·N·D_inf)")
    t.add_row("RL tokens D_RL", f"{v('rl_tokens'):.3g}", "2 · D_inf / r_RL  (r_RL·e_dec·N·D_RL = 2·e_dec·N·D_inf)")
    t.add_row("Chinchilla tokens", f"{v('chinchilla_tokens'):.3g}", "20 · N (Hoffmann et al. 2022)")
    t.add_row("over-training factor", f"{v('overtraining_factor'):.3g}×", "D_pre / (20 · N)")
    t.add_row("compute per phase", fmt(v("compute_per_phase_flop"), "FLOP"), "6 · N · D_pre")
    console.print(t)
    for key in ("inference_tokens", "pretrain_tokens", "rl_tokens", "overtraining_factor"):
        q = r.numbers[key]
        console.print(f"{q.formula} = {q.substituted()} = {v(key):.3g}", markup=False)
    s = Table(title="sensitivity: d ln(output) / d ln(input), and outputs at input ×0.5 / ×2", title_justify="left")
    s.add_column("input")
    for k in OUTPUTS:
        s.add_column(LABELS[k], justify="right")
    for name, entry in sens.items():
        if name.startswith("_"):
            continue
        cells = [f"{entry['elasticity'][k]:+.2g}  ({entry['scaled']['x0.5'][k]:.3g} / {entry['scaled']['x2'][k]:.3g})"
                 for k in OUTPUTS]
        s.add_row(INPUT_LABELS.get(name, name), *cells)
    console.print(s)
