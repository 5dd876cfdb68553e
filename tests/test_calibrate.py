"""tokenmath calibrate (NumPy, --quick) and check-local (PyTorch, a tiny config): fast end-to-end checks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clirun import run

from tokenmath.core import kernels
from tokenmath.measure.calibrate import Measurement, fit_gemm_priors
from tokenmath.core.load import load_model, load_priors, load_system
from tokenmath.core.roofline import step

DATA = Path(__file__).parent / "data"
TINY = str(DATA / "tiny-llama-config.json")
TINY_MOE = str(DATA / "tiny-moe-config.json")


@pytest.fixture(scope="module")
def profile(tmp_path_factory) -> str:
    out = tmp_path_factory.mktemp("cal") / "profile.yaml"
    r = run("calibrate", "--quick", "--backend", "numpy", "--out", str(out), "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["profile"] == str(out) and d["backend"].startswith("numpy")
    assert {m["what"] for m in d["measurements"]} == {"stream", "matmul", "attention", "op"}
    assert d["source"].startswith("measured by tokenmath calibrate on ")
    return str(out)


def test_profile_is_a_system_with_its_own_priors(profile):
    s = load_system(profile)
    chip = s.chip
    assert s.domain_chips == 1 and chip.name.startswith("local-")
    assert chip.peak("fp32") > 1e9 and chip.hbm_bandwidth_bytes_per_s > 1e8 and chip.hbm_capacity_bytes > 1e9
    assert "measured by tokenmath calibrate on" in chip.source_of("hbm_bandwidth_bytes_per_s")
    pri = load_priors(chip.priors)
    assert pri.name == chip.priors and 0 < pri.eta_flop <= 1 and 0 < pri.eta_bw <= 1 and 0 < pri.eta_kv <= 1
    assert "measured by tokenmath calibrate" in pri.source_of("eta_flop")
    assert load_priors("default").eta_flop == pytest.approx(0.53)  # the catalog's priors are untouched


def test_roofline_and_serve_accept_the_profile(profile):
    m = load_model(TINY)
    s = load_system(profile)
    st = step(m, s, G=1, B=4, S=64, phase="decode", precision="fp32", kv_dtype="fp32")
    assert st.v("t_step") > 0
    r = run("serve", TINY, "--on", profile, "--batch", "4", "--context", "64", "--precision", "fp32", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["decode"]["step_time_s"] > 0


def test_fit_recovers_the_parameters_it_was_made_with():
    F, W = 1e11, 2e10
    truth = dict(eta_flop=0.8, eta_bw=0.7, t_kernel=2e-6, M_half=16.0)
    mm = []
    for K, N in ((1024, 1024), (1024, 4096), (4096, 1024)):
        for M in (1, 2, 4, 8, 16, 32, 64, 128, 256):
            flop, byts = kernels.gemm_flop(M, N, K), kernels.gemm_bytes(M, N, K, 4, 4, 4)
            eta = kernels.small_m_efficiency(truth["eta_flop"], M, truth["M_half"])
            t = float(kernels.gemm_time(flop, F, eta, byts, W, truth["eta_bw"], truth["t_kernel"]))
            mm.append(Measurement("matmul", (M, N, K), "fp32", t, flop=flop, bytes=byts))
    e_flop, e_bw, t_k, m_h, med, p90 = fit_gemm_priors(mm, F, W)
    assert e_flop == pytest.approx(0.8, abs=0.021) and e_bw == pytest.approx(0.7, abs=0.021)
    assert m_h == 16 and med < 0.03 and p90 < 0.06
    assert t_k == pytest.approx(2e-6, rel=0.6)


def test_small_m_efficiency_keeps_a_gemv_at_full_rate():
    assert kernels.small_m_efficiency(0.9, 1, 32) == pytest.approx(0.9)
    assert kernels.small_m_efficiency(0.9, 32, 32) == pytest.approx(0.45)
    assert kernels.small_m_efficiency(0.9, 10**6, 32) == pytest.approx(0.9, rel=1e-4)


def test_calibrate_bad_input():
    r = run("calibrate", "--backend", "cuda")
    assert r.exit_code == 1 and "--backend" in r.output
    r = run("calibrate", "--out", "profile.txt")
    assert r.exit_code == 1 and ".yaml" in r.output


def test_check_local_refuses_what_it_cannot_build(profile):
    r = run("check-local", "deepseek-v3", "--profile", profile)
    assert r.exit_code == 1 and "MLA" in r.output and "Traceback" not in r.output
    r = run("check-local", "llama-3.1-405b", "--profile", profile)
    assert r.exit_code == 1 and "--layers" in r.output
    r = run("check-local", TINY, "--profile", profile, "--batch", "1,x")
    assert r.exit_code == 1 and "--batch" in r.output
    r = run("check-local", TINY, "--profile", profile, "--layers", "9")
    assert r.exit_code == 1 and "--layers" in r.output


def test_check_local_times_a_tiny_dense_and_moe_model(profile, tmp_path):
    pytest.importorskip("torch")
    csv_path = tmp_path / "rows.csv"
    r = run("check-local", TINY, "--profile", profile, "--batch", "1,2", "--context", "8,32", "--json",
            "--csv", str(csv_path))
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert len(d["rows"]) == 4 and {"batch", "context", "predicted_s", "measured_s", "error"} <= set(d["rows"][0])
    assert all(x["measured_s"] > 0 and x["predicted_s"] > 0 for x in d["rows"])
    assert d["summary"]["median_abs_error"] is not None
    assert csv_path.read_text().startswith("batch,context,measured_s,predicted_s")
    r = run("check-local", TINY_MOE, "--profile", profile, "--batch", "3", "--context", "16", "--layers", "1")
    assert r.exit_code == 0, r.output
    assert "first 1 of 2 layers" in r.stdout and "extrapolated" in r.stdout
