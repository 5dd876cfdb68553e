"""Issue 16's reproducers, each now one line and a non-zero exit, or a clean answer; and the layers that fix them:
record ranges, the file readers, the one loader, the option checks, the JSON writer."""

import json
import math

import numpy as np
import pytest
import typer
from clirun import one_line_error, run
from pydantic import ValidationError
from typer.testing import CliRunner

from tokenmath.cli.common import emit_json, guard
from tokenmath.core.errors import CatalogError
from tokenmath.core.load import apply_overrides, load_priors, load_system, parse_yaml, read_entry
from tokenmath.core.records import Priors

M, ON = "llama-3.1-8b", "hgx-h100"


def ok_json(*args) -> dict:
    r = run(*args, "--json")
    assert r.exit_code == 0, r.output
    assert not r.stderr.strip(), r.stderr
    return json.loads(r.stdout, parse_constant=lambda c: pytest.fail(f"{c} in JSON"))


@pytest.mark.parametrize("args,needle", [
    # --set values that are not YAML flow scalars, or break the math
    (("serve", M, "--on", ON, "--set", "eta_bw=["), "malformed YAML"),
    (("serve", M, "--on", ON, "--set", "mla=*x"), "aliases"),
    (("serve", M, "--on", ON, "--set", "eta_bw=!!python/object/apply:os.system [echo]"), "eta_bw"),
    (("serve", M, "--on", ON, "--set", "eta_bw=0"), "eta_bw must be in [0.001, 1]"),
    (("serve", M, "--on", ON, "--set", "eta_kv=0"), "eta_kv"),
    (("serve", M, "--on", ON, "--set", "peak_flop_per_s.bf16=1e999"), "finite"),
    (("serve", M, "--on", ON, "--set", "rental_usd_per_hour=-1"), "rental_usd_per_hour"),
    (("serve", M, "--on", ON, "--set", "hbm_capacity_bytes=1e-300"), "hbm_capacity_bytes"),
    (("serve", M, "--on", ON, "--set", "sources=5"), "bookkeeping"),
    (("serve", M, "--on", ON, "--set", "chip.priors=nope"), "unknown priors"),
    (("train", M, "--on", ON, "--chips", "8", "--tokens", "1e12", "--set", "eta_bw=0.5"), "does not read"),
    # grids
    (("sweep", M, "--on", ON, "-B", "0:0"), "--batch"),
    (("sweep", M, "--on", ON, "-S", ","), "no values"),
    (("sweep", M, "--on", ON, "-B", "1:1e12:30"), "absurd"),
    (("sweep", M, "--on", ON, "-B", "1:1e5:100000", "-S", "1:1e5:100000"), "points; at most"),
    # item 6 and the NaN list
    (("cadence", "--step-ms", "1e-9", "--rate", "2"), "--step-ms"),
    (("cadence", "--step-ms", "1e-6", "--rate", "2"), "span more than"),
    (("cadence", "--step-ms", "20", "--rate", "inf"), "finite"),
    (("phases", M, "--on", ON, "--prefill-batch", "nan"), "finite"),
    (("infer", "--all", "--active-params", "1e999"), "not a finite number"),
    (("infer", "--all", "--active-params", "5 s"), "is not a number"),
    (("place", M, "--on", "tpu-v5e", "--precision", "fp32"), "no fp32"),
    (("serve", "/dev/zero", "--on", ON), "larger than"),
    (("serve", M, "--on", "/dev/zero"), "larger than"),
    (("validate", "--table", "/dev/zero"), "larger than"),
    # options that do nothing in a mode are still checked
    (("cadence", "--context", "x", "--step-ms", "20"), "--context"),
    (("kv", "--on", "x"), "unknown system"),
    (("fastmode", "--chips", "-1"), "--chips"),
    (("infer", "--all", "--date", "garbage"), "date"),
    (("kv", "--price-date", "2026-13"), "no such month"),
    (("cadence", "--step-ms", "20", "--set", "eta_bw=0.5"), "needs a MODEL or --on"),
    # click's own errors are one line too
    (("serve", M, "--on", ON, "--batch", "abc"), "--batch"),
    (("serve",), "Missing argument"),
    (("nosuch",), "No such command"),
])
def test_reproducers_are_one_line_errors(args, needle):
    one_line_error(run(*args), needle)


def test_t_serial_is_never_negative():
    d = ok_json("serve", "qwen3-30b-a3b", "--on", "b200")
    for ph in ("prefill", "decode"):
        assert all(d[ph][k] >= 0 for k in d[ph] if k.endswith("_s"))


def test_context_zero_omits_the_prefill_cost_with_a_note():
    d = ok_json("serve", M, "--on", ON, "--context", "0")
    assert "usd_per_mtok" not in d["prefill"] and "no tokens" in d["prefill"]["note"]
    assert d["decode"]["usd_per_mtok"] > 0


def test_fastmode_at_the_same_price_has_no_finite_standard_batch():
    d = ok_json("fastmode", "llama-3.1-70b", "--on", ON, "-p", "1")
    assert d["kv_share"] == 1 and d["slow_mode_max_saving"] == 0
    assert "standard_batch" not in d and "p = 1" in d["note"]


def test_place_reports_splits_that_fit_but_cannot_run():
    d = ok_json("place", "gemma-3-27b", "--on", "tpu-v4", "--chips", "8")
    stuck = [s for s in d["splits"] if s["fits"] and not s["runs"]]
    assert len(stuck) == 2 and all("scale-out" in s["why_not"] and "step_time_s" not in s for s in stuck)
    r = run("place", "gemma-3-27b", "--on", "tpu-v4", "--chips", "8")
    assert r.exit_code == 0 and "hold weights + KV but cannot run here" in r.stdout


def test_set_on_a_prior_reaches_every_command():
    """`load_pair` used to throw priors away: only `serve` saw --set eta_bw."""
    for args in (("sweep", "llama-3.1-70b", "--on", ON, "-B", "64"), ("phases", "llama-3.1-70b", "--on", ON),
                 ("place", "llama-3.1-70b", "--on", ON), ("cadence", "llama-3.1-70b", "--on", ON)):
        assert ok_json(*args) != ok_json(*args, "--set", "eta_bw=0.01"), args


def test_priors_changed_by_set_are_bound_to_the_chip():
    s = load_system(ON)
    p = load_priors(s.chip.priors)
    out = apply_overrides({"system": s, "chip": s.chip, "priors": p}, ["eta_bw=0.5"])
    assert out["system"].chip.priors != s.chip.priors
    assert load_priors(out["system"].chip.priors).eta_bw == 0.5
    assert load_priors(s.chip.priors).eta_bw == p.eta_bw  # the catalog's own priors are untouched


def test_lifecycle_accepts_inputs_near_a_limit():
    """Its sensitivity perturbs inputs by ×2: those are not the user's and are not checked again."""
    d = ok_json("lifecycle", "--serving-tokens-per-s", "5e7", "--lifetime-days", "30000", "--active-params", "1e11")
    assert d["sensitivity"]["lifetime_days"]["scaled"]["x2"]["inference_tokens"] > 0


def test_sweep_omits_an_infinite_balance_batch():
    d = ok_json("sweep", "llama-3.1-70b", "--on", ON, "-B", "64")
    assert "balance_batch" not in d and "balance_batch" not in d["by_context"][0]


# ---- catalog files --------------------------------------------------------------------------------------

CHIP = "kind: chip\npeak_flop_per_s: {bf16: 1 PFLOP/s}\nhbm_capacity_bytes: 80 GB\nhbm_bandwidth_bytes_per_s: 3 TB/s\n"


@pytest.mark.parametrize("text,needle", [
    (CHIP + "sources: 5\n", "'sources' must map"),
    (CHIP + "estimates: 5\n", "'estimates' must be a list"),
    (CHIP + "1: 2\n", "must be text"),
    ("x: &a [*a]\n", "aliases"),
    ("a: &a [x, x]\nb: &b [*a, *a]\n", "aliases"),
    (CHIP + "notes: a\0b\n", "NUL"),
    (CHIP.replace("3 TB/s", ".nan"), "hbm_bandwidth_bytes_per_s"),
    (CHIP.replace("1 PFLOP/s", ".inf"), "peak_flop_per_s"),
    (CHIP.replace("80 GB", "-80 GB"), "hbm_capacity_bytes"),
    (CHIP + "rental_usd_per_hour: -1\n", "rental_usd_per_hour"),
    ("[" * 20000, "nested too deeply"),
    ("notes: " + "x" * (2 << 20), "larger than 1 MiB"),
])
def test_malformed_catalog_files_are_one_line(tmp_path, text, needle):
    f = tmp_path / "chip.yaml"
    f.write_text(text)
    one_line_error(run("serve", M, "--on", str(f)), needle)


def test_a_malformed_catalog_directory_is_one_line(tmp_path):
    (tmp_path / "hardware").mkdir()
    (tmp_path / "hardware" / "bad.yaml").write_text(CHIP + "sources: 5\n")
    (tmp_path / "engines").mkdir()
    (tmp_path / "engines" / "default.yaml").write_text("kv_memory_fraction: -0.9\nmax_num_tokens: 8192\n"
                                                      "max_batch: 64\nchunk_tokens: 2048\n")
    one_line_error(run("--catalog", str(tmp_path), "serve", M, "--on", "bad"), "sources")
    sim = ("simulate", M, "--on", ON, "--isl", "256", "--osl", "32", "-C", "4", "-n", "8")
    one_line_error(run("--catalog", str(tmp_path), *sim), "kv_memory_fraction")
    assert run(*sim).exit_code == 0  # the next command line does not see that directory


def test_yaml_reader_refuses_aliases_and_reports_one_line():
    with pytest.raises(CatalogError, match="aliases"):
        parse_yaml("a: &x 1\nb: *x\n", "t")
    with pytest.raises(CatalogError) as e:
        parse_yaml("a: [1,\n", "t")
    assert "\n" not in str(e.value)
    with pytest.raises(CatalogError, match="line 3: key 'b' given twice"):  # YAML would keep the last silently
        parse_yaml("a: 1\nb: 2\nb: 3\n", "t")
    assert parse_yaml("a: {b: 1}\nc: {b: 2}\n", "t") == {"a": {"b": 1}, "c": {"b": 2}}


def test_not_utf8_is_one_line(tmp_path):
    f = tmp_path / "latin1.yaml"
    f.write_bytes(CHIP.encode() + b"notes: caf\xe9\n")
    with pytest.raises(CatalogError, match="not UTF-8"):
        read_entry(f)


# ---- records --------------------------------------------------------------------------------------------

def test_every_figure_has_a_range_and_no_nan():
    p = load_priors()
    for bad in ({"eta_flop": 0.0}, {"eta_bw": 1.5}, {"step_overhead_s": -1.0}, {"comm_overlap": float("nan")},
                {"scaleup_latency_s": float("inf")}):
        with pytest.raises(ValidationError):
            p.evolve(**bad)
    assert isinstance(p.evolve(eta_bw=0.5), Priors)
    chip = load_system(ON).chip
    for bad in ({"hbm_capacity_bytes": 1e-300}, {"peak_flop_per_s": {"bf16": 1e300}}, {"rental_usd_per_hour": 0.0}):
        with pytest.raises(ValidationError):
            chip.evolve(**bad)


# ---- measurement tables ----------------------------------------------------------------------------------

HEADER = ("id,source,model,precision,hardware,n_chips,parallelism,batch,input_len,output_len,context_len,metric,"
          "value,unit,confidence,notes\n")


def test_validate_refuses_an_empty_table(tmp_path):
    f = tmp_path / "t.csv"
    f.write_text(HEADER)
    one_line_error(run("validate", "--table", str(f)), "no rows")
    one_line_error(run("train", "--validate", "--measurements", str(f)), "no rows")


def test_validate_rows_with_inf_empty_or_zero_values_are_not_expressible(tmp_path):
    f = tmp_path / "t.csv"
    f.write_text(HEADER
                 + "BS1-001,x,Llama-2-7B,bf16,A100-SXM 80GB,1,single GPU,1,5,,,decode_tokens_per_s_per_user,inf,"
                   "tokens/s,verbatim,\n"
                 + 'TRN-001,arXiv 2407.21783,"Llama 3 405B (dense, GQA)",BF16,H100 80GB,16384,TP8,,8192,,8192,'
                   "train_BF16_MFU,,%,verbatim,\n"
                 + "TRT-001,x,Llama-3.1-8B,FP8,H100 SXM,1,TP1,0,0,128,,output_tokens_per_s,1000,tokens/s,verbatim,\n")
    d = ok_json("validate", "--table", str(f))
    assert {u["id"] for u in d["unexpressed"]} == {"BS1-001", "TRN-001", "TRT-001"}
    assert d["summary"]["n"] == 0 and "median_abs_error" not in d["summary"]


# ---- the input-checking layer and the JSON writer ---------------------------------------------------------

def test_guard_turns_a_bug_into_one_internal_error_line(monkeypatch):
    app = typer.Typer()

    @app.command()
    @guard
    def boom(x: float = typer.Option(1.0, "--x")) -> None:
        raise TypeError("a bug")

    r = CliRunner().invoke(app, ["--x", "2"])
    assert r.exit_code == 1 and r.stderr.count("\n") == 1 and "internal error (TypeError: a bug)" in r.stderr
    r = CliRunner().invoke(app, ["--x", "nan"])
    assert r.exit_code == 1 and "--x must be a finite number" in r.stderr


def test_json_omits_what_does_not_apply_and_refuses_nan(capsys):
    emit_json({"a": None, "b": math.inf, "c": np.float64(2.0), "d": np.array([1.0, 2.0]), "e": {"f": None}})
    assert json.loads(capsys.readouterr().out) == {"c": 2.0, "d": [1.0, 2.0], "e": {}}
    for bad in ({"a": math.nan}, {"a": [1.0, None]}, {"a": np.array([1.0, math.inf])}):
        with pytest.raises(ValueError):
            emit_json(bad)
