"""Property-based fuzz of the whole CLI: every registered command, every option, malformed files.

For each command typer knows (found by walking the app, so a command added later is fuzzed too),
Hypothesis draws a command line: each option present or not, each value drawn by its type from
values a user might type (catalog names, numbers with suffixes, grids) and from values that broke
the tool before (NaN, 1e999, '0:0', ',', NUL bytes, malformed YAML/JSON/CSV files, /dev/zero, a
recursive YAML alias, a billion-laughs file, `--set` values that are not YAML). Every invocation must
end in one of two ways:

- exit 0, and with --json a document with no NaN, ∞ or null (a value that does not apply is omitted),
  and no RuntimeWarning;
- a non-zero exit with exactly one line on stderr, `error: ...`, that is not an internal error;

never a traceback. Commands that by nature run for long (measuring this machine, writing the lecture
report, serving a web page) are left to their own tests. The run is bounded per command by examples
and by time (FUZZ_EXAMPLES = 60, FUZZ_SECONDS = 2.5 s; TOKENMATH_FUZZ_EXAMPLES / _SECONDS raise them
for a deep run, TOKENMATH_FUZZ_RANDOM=1 draws new examples instead of the fixed, derandomized ones).
The tool enforces its own limits (input sizes, grid products); this test only observes them.
"""

from __future__ import annotations

import inspect
import json
import os
import time
import typing
import warnings
from pathlib import Path

import pytest
import typer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from tokenmath.cli.app import app
from tokenmath.core.load import names, set_catalog_dirs

FUZZ_SECONDS = float(os.environ.get("TOKENMATH_FUZZ_SECONDS", "2.5"))
FUZZ_EXAMPLES = int(os.environ.get("TOKENMATH_FUZZ_EXAMPLES", "60"))
# long by nature: they time this machine, write a report with plots, or serve until stopped
LONG = {"calibrate", "check-local", "lecture", "web"}
# options never drawn: they write files (a plot, a profile, a CSV), start processes or join a Ray cluster
NEVER = {"plot", "out", "save_csv", "csv", "output", "ray", "workers"}
# what a command always gets: work in this process
ALWAYS = {"search": ["--workers", "1"]}
# a command whose options need one another (none marked required) starts its plausible lines from these; the
# drawn options follow and override them. A command missing here is still fuzzed, less deeply.
HINTS = {"simulate": ["--isl", "256", "--osl", "32", "--concurrency", "8", "--requests", "32"],
         "train": ["--chips", "64", "--tokens", "1e12"], "search": ["--isl", "512", "--osl", "64"]}

runner = CliRunner()


def _commands():
    def walk(cmd, path):
        if hasattr(cmd, "commands"):
            for name, sub in sorted(cmd.commands.items()):
                yield from walk(sub, [*path, name])
        else:
            yield path, cmd

    return [(p, c) for p, c in walk(typer.main.get_command(app), []) if p[-1] not in LONG]


COMMANDS = _commands()


def _kind(cmd, param) -> type:
    """The Python type a parameter takes, read off the command function's annotations."""
    fn = inspect.unwrap(cmd.callback)
    hint = typing.get_type_hints(fn).get(param.name, str)
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    if typing.get_origin(hint) is list:
        return list
    return args[0] if args and typing.get_origin(hint) is not list else hint


# ---- malformed inputs, written once -----------------------------------------------------------------

BILLION_LAUGHS = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [{', '.join(['*' + p] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi"))
CHIP = "kind: chip\npeak_flop_per_s: {bf16: 1 PFLOP/s}\nhbm_capacity_bytes: 80 GB\nhbm_bandwidth_bytes_per_s: 3 TB/s\n"
BAD_YAML = {
    "sources5.yaml": CHIP + "sources: 5\n",
    "estimates5.yaml": CHIP + "estimates: 5\n",
    "intkey.yaml": CHIP + "1: 2\n",
    "recursive.yaml": "x: &a [*a]\n",
    "laughs.yaml": BILLION_LAUGHS,
    "nul.yaml": CHIP + "notes: a\0b\n",
    "nanbw.yaml": CHIP.replace("3 TB/s", ".nan"),
    "infpeak.yaml": CHIP.replace("1 PFLOP/s", ".inf"),
    "negcap.yaml": CHIP.replace("80 GB", "-80 GB"),
    "negrent.yaml": CHIP + "rental_usd_per_hour: -1\n",
    "tinycap.yaml": CHIP.replace("80 GB", "1e-300"),
    "deep.yaml": "[" * 20000,
    "list.yaml": "- 1\n- 2\n",
    "empty.yaml": "",
    "latin1.yaml": None,  # written as bytes below
    "chip.yaml": CHIP,
    "system.yaml": "kind: system\nchip: h100-sxm\ndomain_chips: 0\n",
    "profile.yaml": CHIP + "priors: {eta_flop: 0, eta_bw: 2, eta_scaleup: 1, eta_scaleout: 1, "
                           "scaleup_latency_s: -1, scaleout_latency_s: 0, step_overhead_s: .inf}\n",
}
BAD_JSON = {
    "config.json": '{"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, '
                   '"intermediate_size": 128, "vocab_size": 1000}',
    "listtype.json": '{"model_type": ["llama"], "architectures": {"a": 1}}',
    "infinity.json": '{"model_type": "llama", "hidden_size": Infinity, "num_hidden_layers": 2}',
    "huge.json": '{"model_type": "llama", "hidden_size": 1' + "0" * 400 + ', "num_hidden_layers": 2}',
    "nested.json": "[" * 100000 + "]" * 100000,
    "zeroheads.json": '{"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 0, '
                      '"intermediate_size": 128, "vocab_size": 1000}',
    "negative.json": '{"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, '
                     '"intermediate_size": -5, "vocab_size": 1000}',
    "notjson.json": "{not json",
    "array.json": "[1, 2]",
}
HEADER = ("id,source,model,precision,hardware,n_chips,parallelism,batch,input_len,output_len,context_len,metric,"
          "value,unit,confidence,notes\n")
BAD_CSV = {
    "empty.csv": "",
    "header.csv": HEADER,
    "inf.csv": HEADER + "BS1-001,x,Llama-2-7B,bf16,A100-SXM 80GB,1,single GPU,1,5,,,decode_tokens_per_s_per_user,"
                        "inf,tokens/s,verbatim,\n",
    "trnempty.csv": HEADER + 'TRN-001,arXiv 2407.21783,"Llama 3 405B (dense, GQA)",BF16,H100 80GB,16384,TP8,,8192,,'
                             "8192,train_BF16_MFU,,%,verbatim,\n",
    "zerobatch.csv": HEADER + "TRT-001,x,Llama-3.1-8B,FP8,H100 SXM,1,TP1,0,0,128,,output_tokens_per_s,1000,"
                              "tokens/s,verbatim,\n",
    "ragged.csv": HEADER + "a,b\n\"unclosed\n",
    "nul.csv": HEADER.replace("id", "i\0d"),
}


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> list[str]:
    d = tmp_path_factory.mktemp("fuzz")
    out = []
    for name, text in {**BAD_YAML, **BAD_JSON, **BAD_CSV}.items():
        p = d / name
        if text is None:
            p.write_bytes(CHIP.encode() + b"notes: caf\xe9\n")
        else:
            p.write_text(text, encoding="utf-8")
        out.append(str(p))
    big = d / "big.yaml"
    big.write_text("notes: " + "x" * (2 << 20) + "\n")
    cat = d / "catalog"  # a --catalog DIR whose entries are malformed
    for kind, fname in (("hardware", "sources5.yaml"), ("models", "recursive.yaml"), ("systems", "system.yaml"),
                        ("priors", "profile.yaml"), ("tiers", "nanbw.yaml")):
        (cat / kind).mkdir(parents=True, exist_ok=True)
        (cat / kind / f"bad-{kind}.yaml").write_text((d / fname).read_text())
    (cat / "engines").mkdir()
    (cat / "engines" / "default.yaml").write_text("kv_memory_fraction: .nan\nmax_num_tokens: 0\nmax_batch: -1\n"
                                                  "chunk_tokens: 1\n")
    return [*out, str(big), str(cat), str(d), "/dev/zero", "/dev/null", str(d / "missing.yaml")]


# ---- values --------------------------------------------------------------------------------------------

NASTY = ["", " ", "0", "-1", "1", "1e999", "-1e999", "nan", "inf", "1e-300", "1e300", "0:0", ",", ":", "1:1e12:30",
         "1:0", "4k", "1M", "2G", "1,8,64", "1:131072", "0:4096:5", "1:1e6:1000000", "x", "fp7", "bf16", "fp8", "fp4",
         "fp32", "int4", "prior", "spec", "2026-13", "2026-02-30", "2026-Q1", "5 s", "3 TB/s", "100B", "\0", "a" * 300,
         "é", "-5min", "1h", "1,,2", "1:2:3:4", "1e6:1", "0.5", "1_000"]
SETTINGS = ["eta_bw=[", "mla=*x", "x='", "x=!!python/object/apply:os.system [echo]", "eta_bw=0", "eta_kv=0",
            "peak_flop_per_s.bf16=1e999", "rental_usd_per_hour=-1", "hbm_capacity_bytes=1e-300", "n_layers=0",
            "n_layers=1e12", "d_ff=-5", "step_overhead_s=.inf", "comm_overlap=2", "domain_chips=0", "kv_dtype=fp7",
            "name=x", "sources=5", "chip.priors=nope", "peak_flop_per_s=5", "=", "noequals",
            "scaleout_bandwidth_bytes_per_s=1e300", "step_overhead_s=1 h",
            # the last twelve are plausible
            "eta_bw=0.01", "eta_kv=0.001", "hbm_bandwidth_bytes_per_s=4TB/s", "hbm_capacity_bytes=1 MB",
            "step_overhead_s=5 ms", "kv_dtype=fp8", "moe=null", "priors.eta_flop=0.5", "model.vocab_size=1",
            "peak_flop_per_s.fp32=1 TFLOP/s", "rental_usd_per_hour=1e4", "domain_chips=1"]


# values a user would type for some option of some command: most draws are these, so the fuzz gets past
# parsing into the arithmetic, where NaN and division by zero live
PLAUSIBLE = ["1", "8", "64", "128", "4096", "32k", "1,8,64", "1:1024", "1:131072:20", "0:4096:4", "bf16", "fp8",
             "fp4", "prior", "spec", "2025-09", "2026-03-13", "5min", "1h", "100B", "50e9:100e9:200e9", "selective",
             "full", "none", "hfu", "mfu", "TRT", "BS1,TRT", "TRN-001", "0.5"]
# options whose plausible values are few, by name (any command that has such an option draws from these)
PLAUSIBLE_BY_NAME = {"precision": ["fp8", "bf16", "fp4", "fp8,fp4"], "kv_dtype": ["fp8", "bf16"],
                     "basis": ["prior", "spec"], "date": ["2026-03-13", "2026-04"], "price_date": ["2025-09", "2026"],
                     "hold": ["5min", "1h", "30 s"], "recompute": ["none", "selective", "full"],
                     "carry": ["hfu", "mfu", "roofline"], "group": ["TRT", "BS1,UB"], "row": ["TRT-001", "BS1-002"],
                     "active_params": ["100B", "50e9:100e9:200e9"]}
PLAUSIBLE_INT = ["1", "2", "4", "8", "16", "64", "128", "512", "4096"]
PLAUSIBLE_FLOAT = ["0", "0.1", "0.5", "0.9", "1", "2", "2.5", "6", "20", "365"]


_NAMES = {k: names(k) for k in ("models", "systems", "hardware")}  # read once: strategies must not depend on state


def _names(kind: str) -> list[str]:
    return _NAMES[kind]


def _mostly(plausible, nasty):
    """Three draws in four plausible, one nasty (or only plausible ones, when nasty is st.nothing())."""
    if nasty.is_empty:
        return plausible
    return st.integers(0, 3).flatmap(lambda i: plausible if i else nasty)


def values_for(param_name: str, kind: type, files: list[str], default=None, clean: bool = False):
    """Strategy for one value (as text) of a parameter, by its name, type and default (a valid value by
    construction, drawn about half the time); `clean` draws only plausible values."""
    nasty = st.nothing() if clean else st.one_of(st.sampled_from(NASTY), st.sampled_from(files))
    if param_name in ("model", "models"):
        plausible = st.sampled_from(_names("models"))
    elif param_name == "on":
        plausible = st.sampled_from(_names("systems") + _names("hardware"))
    elif param_name in ("offer", "name"):
        plausible = st.sampled_from(["anthropic/claude-opus-4.6", "google/gemini-3.1-pro", "openai/x"]
                                    + _names("models") + _names("hardware"))
    elif param_name in ("set_", "set"):
        plausible = st.sampled_from(SETTINGS[-12:])
        nasty = nasty if clean else st.sampled_from(SETTINGS)
    elif kind is int:
        plausible = st.sampled_from(PLAUSIBLE_INT)
        nasty = nasty if clean else st.one_of(
            st.sampled_from(["0", "-1", str(10**15), str(10**16), str(-10**18), "1.5", "x"]),
            st.integers(-5, 5000).map(str))
    elif kind is float:
        plausible = st.sampled_from(PLAUSIBLE_FLOAT)
        nasty = nasty if clean else st.one_of(
            st.sampled_from(["0", "-1", "1e-300", "1e300", "nan", "inf", "-inf", "1e999", "x"]),
            st.floats(allow_nan=True, allow_infinity=True).map(repr))
    elif PLAUSIBLE_BY_NAME.get(param_name):
        plausible = st.sampled_from(PLAUSIBLE_BY_NAME[param_name])
    else:
        plausible = st.sampled_from(PLAUSIBLE)
    if default is not None and not isinstance(default, (bool, list, tuple)):
        plausible = st.one_of(st.just(str(default)), plausible)
    return _mostly(plausible, nasty)


@st.composite
def command_lines(draw, cmd_path: list[str], cmd, files: list[str]) -> list[str]:
    argv: list[str] = []
    if draw(st.integers(0, 9)) == 0:  # a malformed catalog directory, mostly
        argv += ["--catalog", draw(st.sampled_from([f for f in files if Path(f).is_dir()] * 3 + files))]
    argv += cmd_path + ALWAYS.get(" ".join(cmd_path), [])
    params = [p for p in cmd.params if p.name not in NEVER and p.name != "help"]
    # a third of the lines are all plausible, a third have one wild value, a third are wild throughout
    mode = draw(st.sampled_from(["clean", "one", "wild"]))
    if mode != "wild":
        argv += HINTS.get(" ".join(cmd_path), [])
    wild = draw(st.sampled_from([p.name for p in params])) if mode == "one" and params else None
    # optional ones: up to three on a clean line (options that need one another rarely meet), else a third each
    optional = [p.name for p in params if not p.required]
    few = set(draw(st.lists(st.sampled_from(optional), max_size=3, unique=True))) if optional else set()
    arguments: list[str] = []
    for param in params:
        kind = _kind(cmd, param)
        clean = mode == "clean" or (mode == "one" and param.name != wild)
        is_option = param.opts[0].startswith("-")
        if kind is bool and is_option:
            if draw(st.booleans()):
                argv.append(param.opts[0])
            continue
        if not param.required and not (param.name in few if mode == "clean" else draw(st.integers(0, 2)) == 0):
            continue
        n = draw(st.integers(1, 3)) if kind is list else 1
        for _ in range(n):
            v = draw(values_for(param.name, kind, files, param.default, clean))
            if is_option:
                argv += [param.opts[0], v]
            else:
                arguments.append(v)
    if any(p.opts[0] == "--json" for p in cmd.params) and draw(st.booleans()):
        argv.append("--json")
    # arguments last, after "--" when one looks like an option (-1, -5min)
    return argv + (["--"] if any(a.startswith("-") for a in arguments) else []) + arguments


# ---- the property ---------------------------------------------------------------------------------------

def _no_constants(c):
    raise ValueError(f"{c} in JSON output")


def _no_nulls(o, path="") -> None:
    assert o is not None, f"null in JSON output at {path or 'top'}"
    if isinstance(o, dict):
        for k, v in o.items():
            _no_nulls(v, f"{path}.{k}")
    elif isinstance(o, list):
        for i, v in enumerate(o):
            _no_nulls(v, f"{path}[{i}]")


def check(argv: list[str]):
    """Run one command line and assert the property; the runner's result."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            r = runner.invoke(app, argv)
        finally:
            set_catalog_dirs([])  # a --catalog of this line must not reach the next test
    shown = " ".join(repr(a) if " " in a or not a else a for a in argv)
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        import traceback

        tb = "".join(traceback.format_exception(r.exception))
        pytest.fail(f"traceback from tokenmath {shown}\n{tb}")
    err = r.stderr.strip()
    if r.exit_code == 0:
        runtime = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
        assert not runtime, f"RuntimeWarning on a successful run: tokenmath {shown}: {runtime[0]}"
        assert all(line.startswith("warning:") for line in err.splitlines()), f"tokenmath {shown}: stderr {err!r}"
        if "--json" in argv and "--help" not in argv:
            d = json.loads(r.stdout, parse_constant=_no_constants)
            _no_nulls(d)
        return r
    assert len(err.splitlines()) == 1 and err.startswith("error: "), f"tokenmath {shown} (exit {r.exit_code}): {err!r}"
    assert "internal error" not in err, f"tokenmath {shown}: {err}"
    return r


@pytest.mark.parametrize("cmd_path,cmd", COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_fuzz_command(cmd_path, cmd, files):
    budget = {"spent": 0.0, "failed": False}

    @settings(max_examples=FUZZ_EXAMPLES, deadline=None, derandomize=not os.environ.get("TOKENMATH_FUZZ_RANDOM"),
              database=None, suppress_health_check=list(HealthCheck))
    @given(command_lines(cmd_path, cmd, files))
    def run(argv):
        if budget["spent"] > FUZZ_SECONDS and not budget["failed"]:  # bounded in time; shrinking a failure is not
            return
        t0 = time.monotonic()
        try:
            check(argv)
        except BaseException:
            budget["failed"] = True
            raise
        finally:
            budget["spent"] += time.monotonic() - t0

    run()


def test_fuzz_covers_every_command():
    """The fuzz enumerates typer's commands, so one added later is fuzzed too."""
    fuzzed = {" ".join(p) for p, _ in COMMANDS}
    assert {"serve", "sweep", "place", "phases", "price", "cadence", "fastmode", "kv", "infer", "train", "lifecycle",
            "validate", "catalog show"} <= fuzzed
