"""Tenstorrent (Wormhole, Blackhole, their Galaxy servers) and Qualcomm Cloud AI 100 Ultra: DRAM accelerators rows
name. They load with sourced estimates, the names tt-metal and Qualcomm tables use find them with the chips those
names hold, and tt-metal's BFP8 reads as block-scaled FP8."""
from __future__ import annotations

import re

import pytest

from tokenmath.core.load import load_chip
from tokenmath.measure.validate.match import Aliases, box_chips

GiB = 2**30


@pytest.mark.parametrize("chip, capacity, bandwidth", [
    ("wormhole", 12 * GiB, 288e9), ("blackhole", 32 * GiB, 512e9), ("cloud-ai-100-ultra", 128 * GiB, 548e9)])
def test_they_load_as_dram_parts_with_estimated_figures(chip, capacity, bandwidth):
    c = load_chip(chip)
    assert not c.on_chip_memory  # the weights live in GDDR6 / LPDDR4x, not in the SRAM beside it
    assert (c.hbm_capacity_bytes, c.hbm_bandwidth_bytes_per_s) == (capacity, bandwidth)
    assert {"hbm_capacity_bytes", "hbm_bandwidth_bytes_per_s"} <= set(c.estimates)
    assert all(re.search(r"recalled, not re-read here|an assumption", c.source_of(k)) for k in c.estimates)


@pytest.mark.parametrize("text, entry, chips", [
    ("n150 (Wormhole)", "tt-galaxy-wormhole", 1), ("n300", "tt-galaxy-wormhole", 2),
    ("Tenstorrent Wormhole n300", "tt-galaxy-wormhole", 2), ("QuietBox (Wormhole)", "tt-galaxy-wormhole", 8),
    ("T3K", "tt-galaxy-wormhole", 8), ("LoudBox", "tt-galaxy-wormhole", 8), ("TT-Galaxy", "tt-galaxy-wormhole", 32),
    ("Galaxy (Wormhole)", "tt-galaxy-wormhole", 32), ("p150 (Blackhole)", "tt-galaxy-blackhole", 1),
    ("Blackhole p150a", "tt-galaxy-blackhole", 1), ("Galaxy (Blackhole)", "tt-galaxy-blackhole", 32),
    ("QuietBox (Blackhole)", "tt-galaxy-blackhole", 4),
    ("Qualcomm Cloud AI 100 Ultra", "cloud-ai-100-ultra-1", None), ("AI 100 Ultra", "cloud-ai-100-ultra-1", None),
])
def test_the_names_rows_use_find_them(text, entry, chips):
    s, note = Aliases().system(text)
    assert (s.name if s else None) == entry, note
    box = box_chips(text, s)
    assert (box[0] if box else None) == chips


@pytest.mark.parametrize("text", ["QAic", "Cloud AI 100", "p100a", "SambaNova SN40L", "Qualcomm Cloud AI 100 Standard",
                                  "Cloud AI 100 Pro"])
def test_names_of_other_parts_stay_unmatched(text):
    """A bare 'QAic' or 'Cloud AI 100' names the family (Standard and Pro: 16 / 32 GB parts), and 'Standard' or 'Pro'
    another tier than the Ultra (match._TIER; it scored 0.82 against the Ultra); the p100a is another Blackhole bin;
    SambaNova's SN40L is not in the catalog (its figures are not recalled well enough to cite)."""
    assert Aliases().system(text)[0] is None


def test_tt_metals_bfp8_is_block_scaled_fp8_unless_bfp4_is_named_beside_it():
    al = Aliases()
    assert al.precision("BFP8")[:2] == al.precision("bfloat8_b")[:2] == ("fp8_block", "fp8")
    assert al.precision("BFP8 attention, BFP4 MLP")[0] is None
