"""Every repaired check of `tokenmath lecture` can fail: perturb its input (a `--set` or a modified lecture
record) and the verdict flips. Identities are labelled as such; every claim states its check; the seed
summaries' errors are listed with corrections taken from the claims; `--set` reaches price sheets and tiers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from tokenmath.cli.app import app
from tokenmath.core.load import load_system
from tokenmath.lecture import LectureContext, ids, run, seed_errors
from tokenmath.lecture.claim import IDENTITY, NOT_COMPUTABLE, OFF, REPRODUCED, WRONG
from tokenmath.lecture.context import LECTURE_FILE


def lecture_with(tmp_path: Path, changes: dict) -> Path:
    """A copy of the lecture file with `a/b/c` paths replaced (a figure's value when the node is a figure)."""
    raw = yaml.safe_load(LECTURE_FILE.read_text(encoding="utf-8"))
    for path, value in changes.items():
        *parents, leaf = path.split("/")
        node = raw
        for k in parents:
            node = node[k]
        if isinstance(node.get(leaf), dict) and "value" in node[leaf]:
            node[leaf]["value"] = value
        else:
            node[leaf] = value
    out = tmp_path / "lecture.yaml"
    out.write_text(yaml.safe_dump(raw, allow_unicode=True), encoding="utf-8")
    return out


# claim, --set settings, lecture-file changes, verdict now, verdict in the perturbed world
FLIPS = [
    ("R3", ["gb200.peak_flop_per_s.fp8=1PFLOP/s"], {}, OFF, REPRODUCED),  # R·rho ≈ 1,100
    ("R4", ["deepseek-v3.moe.experts_per_token=256"], {}, WRONG, REPRODUCED),  # a token touches every expert
    ("R6", ["a100-80gb.hbm_bandwidth_bytes_per_s=1.1TB/s"], {}, OFF, REPRODUCED),
    ("T2", ["gb200.peak_flop_per_s.fp8=10PFLOP/s"], {}, OFF, REPRODUCED),  # full-HBM step memory-bound
    ("T4", ["gb200.peak_flop_per_s.fp8=2.7PFLOP/s"], {}, OFF, REPRODUCED),  # B* ≈ 3,000 at a 23 ms drain
    ("FM3", ["gb200.hbm_capacity_bytes=20GB"], {}, REPRODUCED, OFF),  # the standard batch no longer fits
    ("FM4", ["anthropic/claude-opus-4.6.service_tiers.fast.speed_multiple=1.5"], {}, REPRODUCED, OFF),
    ("S2", ["gb200.hbm_capacity_bytes=24GB"], {}, REPRODUCED, OFF),
    ("E6", ["rubin-ultra-nvl576.domain_chips=72"], {}, REPRODUCED, OFF),
    ("E8", ["tpu-v4-pod.domain_chips=8"], {}, REPRODUCED, OFF),
    ("E10", ["gb200.scaleup_bandwidth_bytes_per_s=100TB/s"], {"reference/model": "mixtral-8x7b"}, REPRODUCED, OFF),
    ("P1", ["deepseek-v3.moe.experts_per_token=2"], {}, REPRODUCED, OFF),
    ("P2", ["priors.scaleout_latency_s=3ms"], {}, REPRODUCED, OFF),  # the lecture's own millisecond hops (P7)
    ("P3", ["priors.scaleout_latency_s=3ms"], {}, REPRODUCED, OFF),
    ("M3", ["gb300.hbm_capacity_bytes=5GB"], {}, REPRODUCED, OFF),  # the KV alone overflows a chip
    ("C1", [], {"claims/C1/inputs/alpha_powerlaw": 0.5}, REPRODUCED, OFF),
    ("C2", [], {"reference/model": "llama-3.1-70b"}, OFF, REPRODUCED),  # light attention per parameter
    ("C3", [], {"claims/C3/inputs/share_other": 0.1}, REPRODUCED, OFF),
    ("C6", [], {"claims/C5/inputs/serving_tokens_per_s": 3e7}, OFF, REPRODUCED),
    ("A1", ["google/gemini-3.1-pro.long_context.above_200k.input_per_mtok=3"], {}, WRONG, REPRODUCED),
    ("A2", ["gb300.hbm_bandwidth_bytes_per_s=112TB/s"], {}, OFF, REPRODUCED),
    ("A3", ["google/gemini-3.1-pro.long_context.above_200k.above_tokens=50000"], {}, REPRODUCED, OFF),
    ("A4", ["model.kv_dtype=fp8"], {}, OFF, REPRODUCED),
    ("A5", ["h800.rental_usd_per_hour=3.6"], {}, OFF, REPRODUCED),  # price ~1.8× cost at the catalog hour; dearer hours flip it
    ("A7", [], {"reference/input_len": 65536}, OFF, REPRODUCED),  # long prompts: decode ≈ 5× prefill
    ("A10", ["mistral-7b-v0.1.n_sliding_layers=0", "phi-3-medium.n_sliding_layers=0", "starcoder2-3b.n_sliding_layers=0",
             "starcoder2-7b.n_sliding_layers=0", "starcoder2-15b.n_sliding_layers=0", "gemma-3-27b.head_dim=32"], {},
     OFF, REPRODUCED),  # Mistral 7B v0.1, Phi-3 medium 4K and StarCoder2: every layer windowed, never cross
    ("K2", ["hdd-exos-x24.read_bandwidth_bytes_per_s=7GB/s"], {}, WRONG, REPRODUCED),
    ("L3", ["deepseek-v3.kv_dtype=fp32"], {}, REPRODUCED, OFF),
    ("X5", ["tier.service_life_s=1s"], {"claims/X5/inputs/hold_s": 36000}, REPRODUCED, OFF),
    ("W1", ["tpu-v4.hbm_bandwidth_bytes_per_s=4.8TB/s"], {}, REPRODUCED, OFF),
]


@pytest.mark.parametrize("cid, settings, changes, now, flipped", FLIPS, ids=[f[0] for f in FLIPS])
def test_a_different_world_flips_the_verdict(tmp_path, cid, settings, changes, now, flipped):
    (base,) = run(only=[cid])
    assert base.verdict == now, base.note
    kw = {"lecture_file": lecture_with(tmp_path, changes)} if changes else {}
    (new,) = run(LectureContext(settings, **kw), only=[cid])
    assert new.verdict == flipped, new.note


def test_l2_context_windows_stalled_only_in_a_world_of_200k_sheets():
    (base,) = run(only=["L2"])
    assert base.verdict == WRONG and "2025-06" in base.note and "2026-03" in base.note

    class Capped(LectureContext):
        """Every offer's window capped at 200 K: the world the lecture described."""

        def sheets(self):
            return [sh.evolve(offers={k: o.model_copy(update={"context_window_tokens": min(
                o.context_window_tokens or 0, 200_000) or None}) for k, o in sh.offers.items()})
                for sh in super().sheets()]

    (capped,) = run(Capped(), only=["L2"])
    assert capped.verdict == REPRODUCED, capped.note


IDENTITIES = ["R1", "R2", "R8", "R9", "T3", "FM2", "E4", "P4", "P8", "C4", "C8", "X2", "X3", "X4"]


def test_model_identities_are_labelled_identity():
    claims = {c.id: c for c in run(only=IDENTITIES)}
    for cid in IDENTITIES:
        assert claims[cid].verdict == IDENTITY, (cid, claims[cid].note)
        assert "only through a bug" in claims[cid].check, cid


def test_every_claim_states_its_check():
    for c in run():
        if c.verdict == NOT_COMPUTABLE:
            continue
        assert re.search(r"^Compared .+\. Tolerance: .+\. Could fail: .+\.$", c.check, re.S), (c.id, c.check)


def test_seed_errors_are_filled_from_the_claims():
    claims = run()
    errors = seed_errors(LectureContext().seed_errors(), claims)
    assert len(errors) >= 35
    known = set(ids())
    for e in errors:
        assert e.seed and e.says and e.correction and e.claim in known, e
        assert re.fullmatch(r"\d{3}(, \d{3})*", e.seed), e.seed
        assert "{" not in e.correction and "not computed" not in e.correction, e
    text = " ".join(f"{e.seed} {e.claim} {e.says} {e.correction}" for e in errors)
    for must in ("Maddox", "Character.AI", "dark GPUs", "sum of human knowledge", "Gemini 3", "1 T capex",
                 "GPT-5", "larger batches", "3,750", "stalled at 200 K", "~30 %", "exactly where memory"):
        assert must in text, must
    r7 = next(e for e in errors if e.claim == "R7")
    assert "5,584" in r7.correction  # the claim's number, not a typed one


def test_set_reaches_price_sheets_and_tiers():
    ctx = LectureContext(["anthropic/claude-opus-4.6.input_per_mtok=4", "hdd-exos-x24.capacity_bytes=1TB",
                          "gb200.hbm_capacity_bytes=100GB"])
    sheet, oid = ctx.offer("anthropic/claude-opus-4.6@2026-03-13")
    assert sheet.offers[oid].input_per_mtok == 4
    assert sheet.figure_source(oid, "input_per_mtok") == "overridden with --set"
    assert ctx.tier("hdd-exos-x24").capacity_bytes == 1e12
    assert ctx.tier("hbm-gb200").capacity_bytes == 100e9  # an HBM tier follows its chip
    (a9,) = run(ctx, only=["A9"])
    assert a9.verdict == OFF and "differs" in a9.note


@pytest.mark.parametrize("setting, hint", [
    ("anthropic/claude-opus-9.input_per_mtok=4", "has no offer"),
    ("anthropic/2026-03-13.offers.claude-opus-4.6.input_per_mtok=-1", "input_per_mtok must be in"),
    ("google/gemini-3.1-pro.long_context.above_900k.input_per_mtok=3", "no entry"),
    ("hdd-exos-x24.capacity_bytes=lots", "hdd-exos-x24"),
])
def test_bad_price_and_tier_settings_are_one_line(tmp_path, setting, hint):
    r = CliRunner().invoke(app, ["lecture", "--out", str(tmp_path), "--set", setting])
    assert r.exit_code == 1 and "Traceback" not in r.output
    assert hint in r.output and len(r.output.strip().splitlines()) == 1, r.output


def test_rubin_ultra_nvl576_is_sourced_and_flagged_estimate():
    s = load_system("rubin-ultra-nvl576")
    assert s.domain_chips == 144 and s.sources.get("domain_chips")
    chip = s.chip
    for key in ("hbm_capacity_bytes", "hbm_bandwidth_bytes_per_s", "peak_flop_per_s.fp8", "scaleup_bandwidth_bytes_per_s"):
        assert key in chip.estimates and chip.sources.get(key), key
