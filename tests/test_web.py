"""`tokenmath web`: the JSON API against the CLI's --json, bad input as one-line 4xx, OpenAPI fuzzing with no
5xx, loopback binding, and the page itself in Debian's headless Chromium.

One server (a thread, bound to 127.0.0.1, stopped at the end of the module) serves every test here.
"""

import builtins
import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="needs the web extra: pip install -e '.[web]'")
import httpx  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from clirun import run  # noqa: E402
from tokenmath.web import server as web_server  # noqa: E402
from tokenmath.web.api import ENDPOINTS, query_parameters  # noqa: E402

DATA = Path(__file__).parent / "data"
LECTURE = dict(model="deepseek-v3", on="gb200-nvl72", chips=64, precision="fp8")  # the lecture's example


@pytest.fixture(scope="module")
def server():
    with web_server.running() as url:
        yield url


@pytest.fixture(scope="module")
def client(server):
    with httpx.Client(base_url=server, timeout=60) as c:
        yield c


def cli_json(*args):
    r = run(*args, "--json")
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def cli_args(params: dict) -> list[str]:
    """Query parameters as the CLI's options: model (and offer) positional, then --name value."""
    args, rest = [], dict(params)
    for positional in ("model", "offer", "kind", "name"):
        if positional in rest:
            args.append(rest.pop(positional))
    for k, v in rest.items():
        flag = "--" + {"all_points": "all"}.get(k, k).replace("_", "-")
        for x in v if isinstance(v, list) else [v]:
            args += [flag] if x is True else ["--no-" + flag[2:]] if x is False else [flag, x]
    return args


# ---- the API answers what the CLI prints ------------------------------------------------------

SAME_AS_CLI = [
    ("serve", LECTURE),
    ("serve", dict(model="llama-3.1-70b", on="hgx-h100", batch=64, context=8192, kv_dtype="fp8",
                   set=["hbm_bandwidth_bytes_per_s=4TB/s"])),
    ("sweep", dict(LECTURE, batch="1,64,4096", context="4096,32k")),
    ("sweep", dict(model="llama-3.1-8b", on="hgx-h100", precision="fp8,bf16", chips="1,8", basis="spec")),
    ("fastmode", dict(LECTURE)),
    ("frontier", dict(LECTURE, isl=1000, osl=1000, at_user_speed=100, explain=True)),
    ("frontier", dict(model="llama-3.1-8b", on="hgx-h100", chips="1,2", layout="default,tp", isl=2000, osl=200,
                      concurrency="1:256:12", at_user_speed=50, at_ttft="1s", confirm=False, all_points=True)),
    ("simulate", dict(LECTURE, concurrency=64, requests=300, isl=1000, osl=500, slo_ttft="2s", explain=True)),
    ("simulate", dict(model="llama-3.1-8b", on="h100-sxm", rate=5, requests=200, isl=512, osl=128, range_ratio=0.5,
                      policy="chunked", chunk=256, seed=3)),
    ("simulate", dict(model="deepseek-v3", on="hgx-h200", concurrency=8, requests=40, isl=512, osl=32, engine="sglang",
                      split="DEP8")),
    ("frontier", dict(model="llama-3.1-8b", on="hgx-h100", chips="1", isl=1000, osl=100, engine="vllm",
                      concurrency="1:64:4", confirm=False)),
    ("place", dict(model="llama-3.1-405b", on="hgx-h100", batch="64", context="8k")),
    ("price", dict(model="deepseek-v3", on="gb200-nvl72", input_len=4000, output_len=1000, cache_hit=0.5)),
    ("price", dict(model="deepseek-v3", on="hgx-h200", explain=True)),
    ("infer", dict(offer="google/gemini-3.1-pro")),
    ("infer", dict(all=True)),
    ("kv", dict(model="deepseek-v3", hold=["5min", "1h"])),
    ("train", dict(model="llama-3.1-8b", on="hgx-h100", chips=64, tokens="1T")),
    ("train", dict(validate=True)),
    ("catalog/list", dict(kind="systems")),
    ("catalog/show", dict(name="gb200")),
]


@pytest.mark.parametrize("path,params", SAME_AS_CLI, ids=[f"{p}-{i}" for i, (p, _) in enumerate(SAME_AS_CLI)])
def test_endpoint_answers_what_the_cli_prints(client, path, params):
    r = client.get(f"/api/{path}", params=params)
    assert r.status_code == 200, r.text
    web = r.json()
    web.pop("explain", None)  # the web's addition with explain=true; everything else is the CLI's --json
    assert web == cli_json(*path.split("/"), *cli_args(params))


def test_the_page_offers_the_engines_the_commands_take(client):
    """The page's engine choice lists the engines whose kernels serve and frontier read (records.ENGINES)."""
    from tokenmath.core.records import ENGINES

    assert client.get("/api/options").json()["engines"] == list(ENGINES)


def test_every_endpoint_is_compared_with_the_cli():
    assert {p for p, _ in SAME_AS_CLI} == {ep.path for ep in ENDPOINTS}


def test_query_parameters_are_the_cli_options(client):
    spec = client.get("/openapi.json").json()
    names = {p["name"] for p in spec["paths"]["/api/serve"]["get"]["parameters"]}
    assert names == {"model", "on", "system", "chips", "batch", "context", "precision", "kv_dtype", "basis",
                     "explain", "set", "mtp", "acceptance", "acceptance_length", "draft", "engine",
                     "allow_extrapolation", "split"}
    for ep in ENDPOINTS:
        assert f"/api/{ep.path}" in spec["paths"]
        assert not {o.python for o in query_parameters(ep)} & {"plot", "measurements", "as_json", "workload"}


def test_serve_takes_a_split(client):
    d = client.get("/api/serve", params=dict(model="llama-3.1-70b", on="hgx-h100", batch=64, split="TP4 PP2")).json()
    cli = json.loads(run("serve", "llama-3.1-70b", "--on", "hgx-h100", "-B", "64", "--split", "TP4 PP2", "--json").output)
    assert d["decode"]["tokens_per_s"] == pytest.approx(cli["decode"]["tokens_per_s"])


def test_lecture_example_with_derivations(client):
    d = client.get("/api/serve", params=dict(LECTURE, explain=True)).json()
    assert d["optimal_batch"] == pytest.approx(5584.24, rel=1e-4)
    e = d["explain"]["optimal_batch"]
    assert e["value"].startswith("5,584") and e["text"].startswith("B_star = R · rho")
    assert "catalog/hardware/gb200.yaml" in e["text"]
    by_system = {("system" if k == "on" else k): v for k, v in LECTURE.items()}
    assert client.get("/api/serve", params=by_system).json() == client.get("/api/serve", params=LECTURE).json()


def test_a_model_that_does_not_fit_answers_with_a_warning(client):
    r = client.get("/api/serve", params=dict(model="llama-3.1-405b", on="hgx-h100", chips=1, precision="bf16"))
    assert r.status_code == 200
    assert r.json()["memory"]["fits"] is False
    cli = run("serve", "llama-3.1-405b", "--on", "hgx-h100", "--chips", 1, "--precision", "bf16")
    assert r.json()["warnings"] == [cli.stderr.strip().removeprefix("error: ")]


# ---- bad input: a 4xx with one line of JSON, the CLI's own line -------------------------------

BAD = [
    ("serve", dict(model="deepseek-v3", on="gb200-nvl72", batch=-5), "--batch must be ≥ 1"),
    ("serve", dict(model="deepseek-v4", on="gb200-nvl72"), "did you mean"),
    ("serve", dict(model="deepseek-v3", on="gb300-nvl73"), "unknown system"),
    ("serve", dict(model="deepseek-v3", on="gb200-nvl72", precision="fp3"), "--precision 'fp3'"),
    ("serve", dict(model="deepseek-v3", on="gb200-nvl72", chips="many"), "chips"),
    ("serve", dict(model="deepseek-v3"), "on is required"),
    ("serve", dict(model="deepseek-v3", on="hgx-h100", system="gb200-nvl72"), "not both"),
    ("serve", dict(model="deepseek-v3", on="gb200-nvl72", set="hbm_bandwidth_bytes_per_s=fast"), "--set"),
    ("serve", dict(model="/etc/passwd", on="gb200-nvl72"), "reads no files"),
    ("serve", dict(model="deepseek-v3", on="../profile.yaml"), "reads no files"),
    ("sweep", dict(model="deepseek-v3", on="gb200-nvl72", batch="1:1M:100000", context="1:1M:100"), "at most"),
    ("sweep", dict(model="deepseek-v3", on="gb200-nvl72", batch="-1:5"), "need 0 ≤ LO ≤ HI"),
    ("place", dict(model="deepseek-v3", on="gb200-nvl72", context="lots"), "--context 'lots' is not a number"),
    ("price", dict(model="deepseek-v3", on="gb200-nvl72", cache_hit=2), "--cache-hit"),
    ("infer", dict(), "give PROVIDER/OFFER"),
    ("kv", dict(hold="forever"), "cannot read 'forever'"),
    ("train", dict(model="llama-3.1-8b", on="hgx-h100"), "train needs --chips, --tokens"),
    ("train", dict(model="llama-3.1-8b", on="hgx-h100", chips=8, tokens="1T", mfu=3), "--mfu"),
    ("frontier", dict(model="deepseek-v3", on="gb200-nvl72", isl=1000, osl=1), "--osl ≥ 2"),
    ("frontier", dict(model="deepseek-v3", on="gb200-nvl72", isl=1000, osl=1000, chips="1:1000:500"),
     "chip counts × layouts is at most 100"),
    ("frontier", dict(model="deepseek-v3", on="gb200-nvl72", isl=1000, osl=10**6, at_user_speed=10),
     "confirm=false skips it"),
    ("simulate", dict(model="deepseek-v3", on="gb200-nvl72", isl=100, osl=100, concurrency=8, requests=10**5),
     "at most 20,000 requests"),
    ("simulate", dict(model="deepseek-v3", on="gb200-nvl72", isl=100, osl=10**5, concurrency=8),
     "requests × OSL (decode steps at batch 1) is at most 20,000,000"),
    ("simulate", dict(model="deepseek-v3", on="gb200-nvl72", isl=10**5, osl=10, concurrency=8, policy="chunked",
                      chunk=16), "prompt chunks"),
    ("simulate", dict(model="deepseek-v3", on="gb200-nvl72", isl=100, osl=10, rate=-1), "--rate must be"),
    ("simulate", dict(model="deepseek-v3", on="gb200-nvl72", isl=100, osl=10, concurrency=4, engine="vlm"),
     "did you mean vllm"),
    ("frontier", dict(model="deepseek-v3", on="gb200-nvl72", isl=100, osl=10, engine="tensorrt"), "--engine"),
    ("catalog/list", dict(kind="widgets"), "unknown kind"),
    ("catalog/show", dict(name="h1000"), "no catalog entry"),
    ("nowhere", dict(), "Not Found"),
    # an option the command does not have is refused, as the CLI refuses it, not answered with the defaults' numbers
    ("price", dict(model="deepseek-v3", on="hgx-h100", split="TP8"), "No such option: split"),
    ("serve", dict(model="deepseek-v3", on="hgx-h200", kv_type="fp8"), "No such option: kv_type"),
]


@pytest.mark.parametrize("path,params,needle", BAD, ids=[f"{p}-{i}" for i, (p, _, _) in enumerate(BAD)])
def test_bad_input_is_a_one_line_4xx(client, path, params, needle):
    r = client.get(f"/api/{path}", params=params)
    assert 400 <= r.status_code < 500, r.text
    assert "\n" not in r.text and list(r.json()) == ["error"]
    assert needle in r.json()["error"]


def test_a_value_of_the_wrong_type_gets_the_cli_words(client):
    """The CLI: "Invalid value for '--concurrency' / '-C': Input should be a valid integer, …"; the web names the
    query parameter in the same words (it answered "concurrency: Input should be …")."""
    params = dict(model="llama-3.1-8b", on="h100-sxm", isl=512, osl=64, concurrency="many")
    r = client.get("/api/simulate", params=params)
    cli = run("simulate", *cli_args(params)).stderr.strip().removeprefix("error: ")
    assert r.status_code == 422
    assert r.json()["error"] == ("Invalid value for 'concurrency': Input should be a valid integer, unable to parse "
                                 "string as an integer (got 'many')")
    assert cli.startswith("Invalid value for '--concurrency' / '-C': Input should be a valid integer")
    r = client.get("/api/frontier", params=dict(model="llama-3.1-8b", on="h100-sxm", osl=64))
    assert r.status_code == 422 and r.json()["error"] == "Missing option 'isl'"
    assert run("frontier", "llama-3.1-8b", "--on", "h100-sxm", "--osl", 64).stderr.startswith("error: Missing option '--isl'")


def test_bad_input_gets_the_cli_line(client):
    r = client.get("/api/serve", params=dict(model="deepseek-v3", on="gb200-nvl72", batch=10**10))
    cli = run("serve", "deepseek-v3", "--on", "gb200-nvl72", "--batch", 10**10)
    assert r.status_code == 400 and r.json()["error"] == cli.stderr.strip().removeprefix("error: ")


# ---- upload: evaluated in memory, size-limited ------------------------------------------------

def test_uploaded_config_is_evaluated_without_touching_disk(client, monkeypatch):
    body = (DATA / "tiny-llama-config.json").read_bytes()
    real_open = builtins.open

    def no_writes(file, mode="r", *a, **k):
        assert not set(mode) & set("wax+"), f"upload wrote {file}"
        return real_open(file, mode, *a, **k)

    monkeypatch.setattr(builtins, "open", no_writes)
    r = client.post("/api/models", content=body, headers={"content-type": "application/json"})
    monkeypatch.undo()
    assert r.status_code == 200, r.text
    name = r.json()["model"]
    assert name.startswith("upload-") and r.json()["n_layers"] == 2
    web = client.get("/api/serve", params=dict(model=name, on="h100-sxm", batch=8, precision="bf16")).json()
    cli = cli_json("serve", DATA / "tiny-llama-config.json", "--on", "h100-sxm", "--batch", 8, "--precision", "bf16")
    for key in ("prefill", "decode", "optimal_batch", "memory", "kv_bytes_per_token"):
        assert web[key] == cli[key]
    assert name in client.get("/api/options").json()["uploads"]


@pytest.mark.parametrize("body,status,needle", [
    (b"{not json", 400, "malformed JSON"),
    (b"[1, 2]", 400, "expected a JSON object"),
    (b'{"model_type": "llama"}', 400, "hidden_size"),
    (b" " * (300 * 1024), 413, "at most"),
])
def test_bad_upload_is_a_one_line_4xx(client, body, status, needle):
    r = client.post("/api/models", content=body, headers={"content-type": "application/json"})
    assert r.status_code == status and needle in r.json()["error"], r.text


# ---- fuzzing: never a 5xx ---------------------------------------------------------------------

def _no_server_error(r, label, failures):
    if r.status_code >= 500:
        failures.append(f"{label} {r.status_code} {r.text[:300]}")
    elif r.status_code >= 400:
        assert "\n" not in r.text and list(r.json()) == ["error"], r.text


def test_openapi_fuzzing_finds_no_server_error(server):
    """Schemathesis: every operation of /openapi.json with values drawn from its schema."""
    schemathesis = pytest.importorskip("schemathesis")
    failures: list[str] = []
    for result in schemathesis.openapi.from_url(server + "openapi.json").get_all_operations():
        op = result.ok()

        @settings(max_examples=25, deadline=None, database=None, derandomize=True,
                  suppress_health_check=list(HealthCheck))
        @given(case=op.as_strategy())
        def check(case):
            _no_server_error(case.call(timeout=60), f"{op.label} {case.query}", failures)

        check()
    assert not failures, failures


def _near_valid():
    """Catalog names with numbers from absurd to zero, and the CLI's number forms: past the name checks."""
    from tokenmath.core.load import names

    n = st.one_of(st.integers(-5, 10**7), st.sampled_from([0, 1, 2**31, 10**12, 10**18]))
    text = st.one_of(n.map(str), st.sampled_from(["4k", "1M", "1:1k", "1:1M:5", "0:10", "nan", "inf", "1e308", "1,2"]))
    opt = lambda x: st.one_of(st.none(), x)  # noqa: E731
    common = dict(model=st.sampled_from(names("models")), on=st.sampled_from(names("systems") + names("hardware")),
                  chips=opt(n), precision=st.sampled_from([None, "fp8", "bf16", "fp4", "fp32", "int4", "x"]),
                  kv_dtype=st.sampled_from([None, "fp8", "bf16", "int4"]), basis=st.sampled_from(["prior", "spec"]))
    frac = st.floats(-1, 2)
    return {
        "serve": dict(common, batch=n, context=n),
        "sweep": dict(common, chips=opt(text), batch=text, context=text),
        "fastmode": dict(common, context=text, batch=opt(text), price_multiple=st.floats(-1, 20),
                         speed_multiple=st.floats(-1, 20), chips_multiple=st.floats(-1, 10)),
        "place": dict(common, batch=text, context=text, tp=opt(n), ep=opt(n), pp=opt(n)),
        "price": dict(common, input_len=n, output_len=n, cache_hit=frac, utilisation=frac, batch=opt(n),
                      prefill_chunk=n),
        "kv": dict(common, model=opt(common["model"]), prefix_tokens=n),
        "frontier": _one_edge(_FRONTIER, _FRONTIER_EDGES),
        "simulate": _one_edge(_SIMULATE, _SIMULATE_EDGES),
        "train": dict(model=common["model"], on=common["on"], chips=n, tokens=text, seq_len=opt(n), mfu=opt(frac),
                      tp=opt(n), ep=opt(n), pp=opt(n), zero=opt(st.integers(-1, 5)), microbatches=opt(n),
                      interleave=st.integers(-1, 8), recompute=st.sampled_from(["none", "selective", "full"]),
                      reversible=st.booleans()),
    }


# The simulator's endpoints run only when every field is runnable: valid values with at most one field at an edge
# (zero, absurd, malformed, over the web's caps), so most examples simulate. A dict value spreads into fields.
_SPEC = st.sampled_from([{}, {}, {}, dict(mtp=2, acceptance=0.7)])
_SIM_MODELS = dict(model=st.sampled_from(["llama-3.1-8b", "deepseek-v3", "qwen3-30b-a3b", "llama-3.1-70b"]),
                   on=st.sampled_from(["gb200-nvl72", "hgx-h100", "hgx-b200", "h100-sxm"]),
                   precision=st.sampled_from([None, "fp8", "fp4"]), spec=_SPEC)
_FRONTIER = dict(_SIM_MODELS, chips=st.sampled_from([None, "8", "4,8"]), isl=st.integers(1, 8192), osl=st.integers(2, 4096),
                 at_user_speed=st.one_of(st.none(), st.floats(5, 200)), at_ttft=st.sampled_from([None, "2s"]),
                 confirm=st.booleans(), requests=st.one_of(st.none(), st.integers(1, 300)),
                 concurrency=st.sampled_from([None, "1:64:5"]), layout=st.sampled_from(["default", "tp"]),
                 policy=st.sampled_from(["continuous", "disagg", "cadence"]))
_FRONTIER_EDGES = dict(isl=st.sampled_from([0, -1, 10**6, 10**12]), osl=st.sampled_from([0, 1, 10**6]),
                       chips=st.sampled_from(["0", "1:1M", "x", "1:1k:500"]),
                       at_user_speed=st.sampled_from([-1.0, 0.0, 1e4]), at_ttft=st.sampled_from(["0", "soon"]),
                       concurrency=st.sampled_from(["0:10", "1,1e7", "1:1M:10000"]), layout=st.just("x"),
                       requests=st.sampled_from([0, 10**5]), max_batch=st.sampled_from([0, 1, 10**12]),
                       policy=st.just("chunked"), spec=st.sampled_from([dict(mtp=0, acceptance=0.7), dict(acceptance=0.5),
                                                                        dict(mtp=3, acceptance_length=9)]),
                       kv_dtype=st.just("int4"), precision=st.just("x"))
_SIMULATE = dict(_SIM_MODELS, chips=st.sampled_from([None, 8]), requests=st.integers(1, 300), isl=st.integers(1, 8192),
                 osl=st.integers(1, 2048), load=st.one_of(st.integers(1, 2048).map(lambda c: dict(concurrency=c)),
                                                          st.floats(0.5, 50).map(lambda r: dict(rate=r))),
                 range_ratio=st.sampled_from([0.0, 0.5]), policy=st.sampled_from(["continuous", "chunked", "disagg", "cadence"]),
                 chunk=st.one_of(st.none(), st.integers(16, 8192)), max_batch=st.one_of(st.none(), st.integers(1, 4096)),
                 slo_tpot=st.sampled_from([None, "20ms"]), seed=st.integers(0, 3))
_SIMULATE_EDGES = dict(load=st.sampled_from([dict(concurrency=0), dict(concurrency=10**7), dict(rate=-1.0), dict(rate=1e9),
                                             dict(concurrency=4, rate=3.0), {}]),
                       requests=st.sampled_from([0, 10**5]), isl=st.sampled_from([0, 10**6, 10**12]),
                       osl=st.sampled_from([0, 10**6]), range_ratio=st.sampled_from([1.5, -0.1]), chunk=st.sampled_from([0, 1]),
                       slo_tpot=st.just("-1s"), max_batch=st.sampled_from([0, 10**12]), precision=st.just("x"),
                       spec=_FRONTIER_EDGES["spec"], chips=st.sampled_from([0, 10**9]))


def _one_edge(valid: dict, edges: dict):
    edge = st.one_of(st.just({}), st.sampled_from(sorted(edges)).flatmap(lambda k: edges[k].map(lambda v: {k: v})))
    return st.tuples(st.fixed_dictionaries(valid), edge).map(lambda t: {**t[0], **t[1]})


def _query(drawn: dict) -> dict:
    out: dict = {}
    for k, v in drawn.items():
        out.update(v) if isinstance(v, dict) else out.__setitem__(k, v)
    return {k: v for k, v in out.items() if v is not None}


def test_near_valid_fuzzing_finds_no_server_error(client):
    """Hypothesis: valid names with edge-case numbers, deeper than the schema alone reaches."""
    failures: list[str] = []
    for path, fields in _near_valid().items():

        @settings(max_examples=20, deadline=None, database=None, derandomize=True,
                  suppress_health_check=list(HealthCheck))
        @given(params=fields if isinstance(fields, st.SearchStrategy) else st.fixed_dictionaries(fields))
        def check(params):
            params = _query(params)
            _no_server_error(client.get(f"/api/{path}", params=params), f"{path} {params}", failures)

        check()

    # uploads: a real config.json with a few fields broken
    base = json.loads((DATA / "tiny-moe-config.json").read_text())
    junk = st.one_of(st.integers(-3, 10**6), st.sampled_from([0, 1.5, 10**12, "x", None, [], {}, True]))

    @settings(max_examples=30, deadline=None, database=None, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(patch=st.dictionaries(st.sampled_from([*base, "layer_types", "text_config", "quantization_config"]), junk,
                                 max_size=3))
    def upload(patch):
        r = client.post("/api/models", content=json.dumps({**base, **patch}))
        _no_server_error(r, f"upload {patch}", failures)
        if r.status_code == 200:
            q = dict(model=r.json()["model"], on="h100-sxm", precision="bf16", batch=8)
            _no_server_error(client.get("/api/serve", params=q), f"serve upload {patch}", failures)

    upload()
    assert not failures, failures


# ---- the server: loopback by default, a warning for anything else ------------------------------

def test_binds_loopback_by_default():
    with web_server.bind(port=0) as s:
        assert s.getsockname()[0] == "127.0.0.1"
    assert web_server.exposure_warning("127.0.0.1", 1) is None
    assert web_server.exposure_warning("::1", 1) is None
    assert web_server.exposure_warning("localhost", 1) is None
    assert "not loopback" in web_server.exposure_warning("0.0.0.0", 8321)


def test_web_command_serves_loopback_and_stops(tmp_path):
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(["timeout", "30", sys.executable, "-c", "from tokenmath.cli.app import main; main()", "web", "--port", "0",
                             "--no-browser"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = proc.stdout.readline()
        assert line.startswith("tokenmath web: http://127.0.0.1:"), line + proc.stderr.read()
        url = line.split()[2]
        assert httpx.get(url + "api/options", timeout=10).status_code == 200
        port = int(url.rsplit(":", 1)[1].strip("/"))
        other = _non_loopback_address()
        if other:
            with pytest.raises(OSError), socket.create_connection((other, port), timeout=2):
                pass
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _non_loopback_address() -> str | None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("10.255.255.255", 1))  # no packet is sent: this only picks the outgoing interface
            addr = s.getsockname()[0]
        except OSError:
            return None
    return None if addr.startswith("127.") else addr


def test_another_host_must_be_asked_for_and_warns(monkeypatch):
    seen, bind = {}, web_server.bind

    def fake_bind(host, port):
        seen["host"] = host
        return bind("127.0.0.1", 0)  # tests never listen beyond loopback

    class NoServer:
        def run(self, sockets):
            seen["served"] = True

    monkeypatch.setattr(web_server, "bind", fake_bind)
    monkeypatch.setattr(web_server, "_server", NoServer)
    r = run("web", "--host", "0.0.0.0", "--port", 0, "--no-browser")
    assert r.exit_code == 0, r.output
    assert seen == {"host": "0.0.0.0", "served": True}
    assert "warning: serving on 0.0.0.0, not loopback" in r.stderr


def test_web_without_the_extra_says_how_to_install(monkeypatch):
    for mod in [m for m in sys.modules if m.startswith("tokenmath.web.")]:
        monkeypatch.delitem(sys.modules, mod)
    monkeypatch.setitem(sys.modules, "fastapi", None)
    r = run("web", "--no-browser")
    assert r.exit_code != 0 and "pip install 'tokenmath[web]'" in r.stderr and "Traceback" not in r.output


def test_core_and_cli_do_not_import_fastapi():
    code = ("import sys, tokenmath.cli.app, tokenmath.serving.serve, tokenmath.economics.pricing; "
            "sys.exit('fastapi' in sys.modules or 'uvicorn' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


# ---- the page in headless Chromium -------------------------------------------------------------

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-quic",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


def test_page_in_headless_chromium(server, tmp_path):
    if not CHROMIUM.exists() or importlib.util.find_spec("playwright") is None:
        pytest.skip("needs /usr/bin/chromium (apt-get install chromium) and playwright (pip install playwright)")
    from playwright.sync_api import sync_playwright

    errors, offsite = [], []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        page = browser.new_page(viewport={"width": 1600, "height": 1300})
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("request", lambda r: None if r.url.startswith((server, "data:")) else offsite.append(r.url))
        page.goto(server)
        page.wait_for_selector("body[data-state=ready]", timeout=30_000)

        # the lecture's example: B* ≈ 5,584 and the five plots drawn
        assert page.input_value("#model") == "deepseek-v3" and page.input_value("#chips") == "64"
        assert page.inner_text("#bstar").startswith("5,584")
        for plot in ("latency", "cost", "context", "fastmode", "frontier"):
            assert page.locator(f"#plot-{plot} .main-svg .scatterlayer .trace").count() >= 2, plot
        assert "B* = 5,584" in page.inner_text("#plot-cost")
        assert "L* = 1,710" in page.inner_text("#plot-context")
        assert "fast mode" in page.inner_text("#plot-fastmode")

        # the frontier under load (tokenmath frontier) with its answer at the fast mode's speed, as the API gives it
        fast = httpx.get(server + "api/fastmode", params=LECTURE).json()["points"]["fast_roofline"]
        fr = httpx.get(server + "api/frontier", params=dict(LECTURE, isl=1000, osl=1000, explain=True,
                                                            at_user_speed=fast["tokens_per_s_per_sequence"])).json()
        assert fr["at"]["met"], "the lecture's fast-mode speed is out of reach under load: a default to revisit"
        assert "at the fast mode's speed" in page.inner_text("#plot-frontier")
        assert page.inner_text("#at-chip") == fr["explain"]["tokens_per_s_per_chip"]["value"]
        assert page.locator("#plot-frontier .scatterlayer .trace:first-child path.point").count() == len(fr["points"])

        # a number unfolds into its derivation
        page.click("#bstar button")
        assert page.inner_text("tr.derivation").startswith("B_star = R · rho")

        def changed(selector, value):
            before_renders, before = page.get_attribute("body", "data-renders"), page.inner_text("#step")
            page.select_option(selector, value) if selector in ("#precision", "#engine") else page.fill(selector, value)
            page.wait_for_function(f"document.body.dataset.renders !== '{before_renders}'", timeout=30_000)
            return before, page.inner_text("#step")

        before, after = changed("#chips", "72")
        assert before != after and "72 chips" in page.inner_text("#title")
        before, after = changed("#precision", "bf16")
        assert before != after and "bf16 weights" in page.inner_text("#title")
        assert "#" in page.url and "precision=bf16" in page.url  # the view is in the URL
        before, after = changed("#split", "TP4 PP2")  # serve --split: two pipeline streams of 36 chips
        assert before != after and "split=TP4" in page.url
        before, after = changed("#engine", "trtllm")  # serve and frontier --engine: its measured kernels
        assert "engine=trtllm" in page.url and "Traceback" not in after
        shot = tmp_path / "web.png"
        page.screenshot(path=str(shot), full_page=True)

        # an uploaded config.json becomes the model
        page.set_input_files("#upload", str(DATA / "tiny-moe-config.json"))
        page.wait_for_function("document.querySelector('#model').value.startsWith('upload-')", timeout=30_000)
        page.wait_for_function("document.querySelector('#title').textContent.startsWith('upload-')", timeout=30_000)
        browser.close()
    assert not errors, errors
    assert not offsite, offsite  # everything, Plotly included, comes from the package
    assert shot.stat().st_size > 50_000
    keep = os.environ.get("TOKENMATH_WEB_SCREENSHOT")  # where to keep the screenshot for a person to look at
    if keep:
        shutil.copy(shot, keep)
