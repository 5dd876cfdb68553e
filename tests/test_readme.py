"""What README.md tells a new user about the command line holds: every option its command table names exists on
that command, the options every command shares are where it says, and the limits it quotes are the code's."""

import re
from pathlib import Path

import pytest
import typer
from clirun import run

from tokenmath.cli.app import app

README = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")


def _commands() -> list[tuple[str, ...]]:
    """Every command and `catalog` subcommand, as a user types it."""
    group = typer.main.get_command(app)
    out = []
    for name, cmd in group.commands.items():
        subs = getattr(cmd, "commands", None)
        out += [(name, s) for s in subs] if subs else [(name,)]
    return out


def _help(cmd: tuple[str, ...]) -> str:
    r = run(*cmd, "--help")
    assert r.exit_code == 0, r.output
    return r.output


def _table_spans() -> list[tuple[tuple[str, ...], str]]:
    """(command, what the table writes after it) for each `tokenmath …` in the command table's first column."""
    spans = []
    for row in (line for line in README.splitlines() if line.startswith("| `tokenmath ")):
        for span in re.findall(r"`([^`]+)`", row.split(" | ")[0]):
            words = span.split()
            words = words[1:] if words[0] == "tokenmath" else words
            cmd = ("catalog", words[1]) if words[0] == "catalog" else ("catalog", "show") if words[0] == "show" \
                else (words[0],)
            spans.append((cmd, span))
    return spans


@pytest.mark.parametrize("cmd,span", _table_spans(), ids=lambda x: x if isinstance(x, str) else " ".join(x))
def test_every_option_the_command_table_names_exists(cmd, span):
    h = _help(cmd)
    for opt in re.findall(r"--[a-z][a-z-]*", span):
        assert re.search(rf"(^|[\s,]){re.escape(opt)}\b", h), f"{' '.join(cmd)} has no {opt}"


def test_the_shared_options_are_where_the_readme_says():
    """'Each takes --json and --explain (lecture and catalog --json only, web neither), all but infer, lifecycle,
    query, validate, calibrate, check-local, catalog and web take --set'."""
    helps = {c: _help(c) for c in _commands()}
    has = {o: {c[0] for c, h in helps.items() if re.search(rf"\s{o}\b", h)} for o in ("--json", "--explain", "--set")}
    every = {c[0] for c in helps}
    assert every - has["--json"] == {"web"}
    assert every - has["--explain"] == {"lecture", "catalog", "web"}
    assert every - has["--set"] == {"infer", "lifecycle", "query", "validate", "calibrate", "check-local", "catalog",
                                    "web"}


def test_the_limits_it_quotes_are_the_codes():
    from tokenmath.core.files import MAX_ENTRY_BYTES, MAX_TABLE_BYTES
    from tokenmath.core.hfconfig import MAX_CONFIG_BYTES
    from tokenmath.serving.sweep import MAX_GRID_POINTS

    text = " ".join(README.split())
    assert (f"({MAX_ENTRY_BYTES >> 20} MiB for YAML, {MAX_CONFIG_BYTES >> 20} MiB for a config.json, "
            f"{MAX_TABLE_BYTES >> 20} MiB for tables)") in text
    assert f"a grid at most {MAX_GRID_POINTS:,} points" in text


def test_cadence_runs_in_each_form_the_table_gives_and_alone_says_what_it_needs():
    assert run("cadence", "--step-ms", "20").exit_code == 0
    assert run("cadence", "--on", "gb200-nvl72").exit_code == 0
    assert run("cadence", "llama-3.1-8b", "--on", "h100-sxm").exit_code == 0
    r = run("cadence")
    assert r.exit_code != 0 and "--step-ms" in r.stderr


def test_the_step_formula_is_the_one_explain_prints():
    """'The model' section's t_step is the derivation --explain unfolds (it left out t_serial)."""
    formula = re.search(r"^ {4}(t_step = .+)$", README, re.M).group(1)
    assert formula in run("serve", "llama-3.1-8b", "--on", "h100-sxm", "--explain").output


def test_an_moes_default_split_spans_the_chips_given():
    """'an MoE's default is TP1 attention-DP{G} EP{G}' (it read DP8 EP8, the 8-chip case, beside a 64-chip example)."""
    import json

    for G in (8, 64):
        d = json.loads(run("serve", "deepseek-v3", "--on", "gb200-nvl72", "--chips", G, "--json").stdout)
        assert d["split"] == f"TP1 attention-DP{G} EP{G}"


def test_the_model_count_is_the_catalogs():
    from tokenmath.core.load import names

    assert f"The catalog holds {len(names('models'))} models" in " ".join(README.split())
