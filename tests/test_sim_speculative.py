"""Speculative decoding and MTP: tokens per step, the draft's cost in serve/simulate, and validation rows that state it."""

import csv
import json

import pytest
from clirun import one_line_error, run
from hypothesis import given, settings
from hypothesis import strategies as st

from tokenmath.core.load import load_model, load_system
from tokenmath.measure.validate import validate_table
from tokenmath.measure.validate.rows import COLUMNS
from tokenmath.serving.default_split import fastest_split
from tokenmath.serving.serve import serve
from tokenmath.serving.sim import simulate
from tokenmath.serving.speculative import Speculation, acceptance_from_length, mtp_module, tokens_per_step

DS, GB200 = load_model("deepseek-v3"), load_system("gb200-nvl72")


def test_tokens_per_step():
    assert tokens_per_step(0.0, 3) == 1.0
    assert tokens_per_step(1.0, 3) == 4.0
    assert tokens_per_step(0.8, 3) == pytest.approx((1 - 0.8**4) / 0.2)
    assert tokens_per_step(0.85, 1) == pytest.approx(1.85)  # DeepSeek-V3's MTP: 85–90 % acceptance, ~1.8×


@settings(max_examples=30, deadline=None)
@given(alpha=st.floats(0.0, 0.999), K=st.integers(1, 8))
def test_acceptance_length_inverts_tokens_per_step(alpha, K):
    assert acceptance_from_length(tokens_per_step(alpha, K), K) == pytest.approx(alpha, abs=1e-6)


def test_mtp_module_is_one_moe_block_with_the_head():
    d = mtp_module(DS)
    assert d.n_layers == 1 and d.moe.first_dense_layers == 0 and d.vocab_size == DS.vocab_size
    w = Speculation(K=1, alpha=0.8).extra_weight_bytes(DS, "fp8")
    assert 10e9 < w < 15e9  # DeepSeek-V3: 685B with the MTP module vs 671B without


def test_serve_reports_the_speculative_step_and_the_draft_memory():
    plain = serve(DS, GB200, G=16, B=8, S=4000)
    sp = serve(DS, GB200, G=16, B=8, S=4000, spec=Speculation(K=1, alpha=0.85))
    v = sp.value
    t_plain = plain.value("decode.step_time_s")
    assert v("decode.step_time_s") == pytest.approx(t_plain)  # the plain step is unchanged
    assert v("decode.speculative.step_time_s") > t_plain  # verify 2 tokens + one draft step
    assert v("decode.speculative.tpot_s") == pytest.approx(v("decode.speculative.step_time_s") / 1.85)
    assert v("decode.speculative.speedup") > 1.3  # small batch: memory-bound, the second token is nearly free
    assert v("memory.required_bytes") > plain.value("memory.required_bytes")


def test_simulated_tpot_at_concurrency_one_is_the_speculative_step_over_tau():
    spec = Speculation(K=2, alpha=0.7)
    s = serve(DS, GB200, G=16, B=1, S=3000 + 301 / 2, spec=spec)
    lay, _ = fastest_split(DS, GB200, G=16, B=1, S=3000 + 301 / 2, precision=DS.weight_dtype, kv_dtype=DS.kv_dtype)
    r = simulate(DS, GB200, G=16, concurrency=1, requests=3, isl=3000, osl=301, spec=spec, layout=lay)  # serve's split
    steps = -(-300 // spec.tokens_per_step)  # the last step's extra tokens are not counted
    assert r["tpot_s"]["mean"] == pytest.approx(s.value("decode.speculative.step_time_s") * steps / 300, rel=3e-3)


def test_cli_serve_and_simulate_with_mtp():
    r = run("serve", "deepseek-v3", "--on", "gb200-nvl72", "--chips", "16", "--mtp", "1", "--acceptance-length", "1.8",
            "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["decode"]["speculative"]["tokens_per_step"] == pytest.approx(1.8)
    r = run("simulate", "deepseek-v3", "--on", "gb200-nvl72", "--chips", "16", "-C", "8", "-n", "16", "--isl", "500",
            "--osl", "50", "--mtp", "2", "--acceptance", "0.7", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["speculation"]["draft_tokens"] == 2
    one_line_error(run("serve", "deepseek-v3", "--on", "gb200-nvl72", "--mtp", "1", "--acceptance-length", "3"),
                   "acceptance length")
    one_line_error(run("serve", "deepseek-v3", "--on", "gb200-nvl72", "--mtp", "0", "--acceptance", "0.5"), "--mtp")


ROWS = [
    # id, model, precision, parallelism, batch, metric, unit, notes
    ("X-001", "Llama 3.3 70B", "FP8", "TP8", "concurrency 64", "output_tokens_per_s_per_gpu", "tokens/s/GPU", ""),
    ("X-002", "Llama 3.3 70B", "FP8", "TP8", "", "output_tokens_per_s_per_gpu at 50 tok/s/user", "tokens/s/GPU", ""),
    ("X-003", "Llama 3.3 70B", "FP8", "TP8", "concurrency 16", "ttft_ms", "ms", ""),
    ("X-004", "Llama 3.3 70B", "FP8 + EAGLE3 speculative decoding (draft len 3)", "TP8", "1",
     "output_tokens_per_s_per_user", "tokens/s/user", "acceptance length 2.8"),
    ("X-005", "Llama 3.3 70B", "FP8 + EAGLE3 speculative decoding (draft len 3)", "TP8", "1",
     "output_tokens_per_s_per_user", "tokens/s/user", ""),
    ("X-006", "DeepSeek-R1", "FP8", "TP8 + MTP", "concurrency 32", "tokens_per_s_per_user", "tok/s/user",
     "MTP acceptance rate 0.8"),
    ("X-007", "Llama 3.3 70B", "FP8", "TP8", "", "output_tokens_per_s", "tokens/s", "server: TTFT <= 2 s, TPOT <= 40 ms"),
]


def test_validate_expresses_rows_under_load_and_with_stated_speculation(tmp_path):
    f = tmp_path / "t.csv"
    with f.open("w", newline="") as fh:
        w = csv.DictWriter(fh, COLUMNS)
        w.writeheader()
        for rid, model, prec, par, batch, metric, unit, notes in ROWS:
            w.writerow({"id": rid, "source": "test", "model": model, "precision": prec, "hardware": "H200 SXM 141GB",
                        "n_chips": "8", "parallelism": par, "batch": batch, "input_len": "1024", "output_len": "1024",
                        "metric": metric, "value": "500" if unit == "ms" else "100", "unit": unit,
                        "confidence": "test", "notes": notes})
    rep = validate_table(f)
    kinds = {p.id: p.kind for p in rep.rows}
    assert kinds == {"X-001": "concurrency", "X-002": "at_speed", "X-003": "concurrency", "X-004": "per_user",
                     "X-005": "per_user", "X-006": "concurrency", "X-007": "at_speed"}
    assert not rep.unexpressed
    by = {p.id: p for p in rep.rows}
    # no acceptance stated: the row is a bound on the tool's best case (α = 1), never a point with an error
    assert by["X-005"].best_case and by["X-005"].measured_op == ">=" and not by["X-004"].best_case
    assert any("α = 1" in a for a in by["X-005"].assumptions)
    assert by["X-003"].higher_is_better is False and by["X-003"].bound_ok  # a time: the bound is from below
    assert all(p.bound_ok for p in rep.rows)
    assert any("speculative decode at batch 1" in w for w in by["X-004"].why)


def test_a_named_draft_model_is_found_and_an_unstated_k_is_the_best_of_a_few():
    from tokenmath.measure.validate import Aliases, predict_row

    row = {c: "" for c in COLUMNS}
    row.update(id="BS1-X16", model="Llama-2-70B (int4) verifier + Llama-7B (int4) draft", precision="int4",
               hardware="A100-80GB", n_chips="1", parallelism="speculative decoding", batch="1", input_len="5",
               metric="decode_tokens_per_s_per_user", value="48.4", unit="tokens/s")
    r = predict_row(row, Aliases())
    assert r.best_case and r.measured_op == ">="
    assert any("draft model llama-7b" in w for w in r.why)
    assert any(a.startswith("drafts per step not stated: the best over K = ") for a in r.assumptions)
    # a stated K is used as stated, and is no better than the best over K
    k3 = predict_row({**row, "notes": "draft tokens 3"}, Aliases())
    assert not any(a.startswith("drafts per step not stated") for a in k3.assumptions)
    assert k3.predicted <= r.predicted * 1.0001
    gone = predict_row({**row, "model": "Llama-2-70B verifier + Imaginary-3B draft"}, Aliases())
    assert "draft model" in gone.reason
