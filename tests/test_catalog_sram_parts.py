"""SRAM-centred inference parts (Groq LPU, Cerebras WSE-3): they load, the names rows use find them, and a 70B fits
only on the chip counts their vendors deploy it on (the replica sized by SRAM capacity)."""
from __future__ import annotations

import pytest

from tokenmath.core.load import load_chip, load_system
from tokenmath.measure.validate.match import Aliases

GB = 1e9


@pytest.mark.parametrize("chip, capacity, bandwidth", [("groq-lpu", 230e6, 80e12), ("wse-3", 44 * GB, 21e15)])
def test_sram_parts_load_with_their_sram_as_memory(chip, capacity, bandwidth):
    c = load_chip(chip)
    assert c.on_chip_memory
    assert c.hbm_capacity_bytes == capacity and c.hbm_bandwidth_bytes_per_s == bandwidth
    assert "SRAM" in c.source_of("hbm_capacity_bytes") and "hbm_capacity_bytes" in c.estimates


@pytest.mark.parametrize("text, entry", [
    ("Groq LPU", "groqrack"), ("GroqChip", "groqrack"), ("GroqRack", "groqrack"), ("GroqCloud", "groqrack"),
    ("LPU", "groqrack"), ("Cerebras CS-3", "cs-3"), ("CS-3", "cs-3"), ("CS3", "cs-3"), ("Cerebras WSE-3", "cs-3"),
    ("Wafer-Scale Engine 3", "cs-3"), ("Cerebras Inference", "cs-3"),
    ("Cerebras CS-2", None), ("WSE-2", None),  # the earlier wafer is another part, not in the catalog
])
def test_the_names_rows_use_find_them(text, entry):
    s, note = Aliases().system(text)
    assert (s.name if s else None) == entry, note


@pytest.mark.parametrize("system, chips, bits, fits", [
    ("groqrack", 576, 8, True), ("groqrack", 64, 8, False),  # Groq's 70B demos ran on 576 chips (recalled)
    ("cs-3", 4, 16, True), ("cs-3", 1, 16, False),  # Cerebras: a 16-bit 70B on 4 CS-3 (recalled)
])
def test_a_70b_fits_on_the_stated_count(system, chips, bits, fits):
    weights_bytes = 70.6e9 * bits / 8  # Llama 3.1 70B
    s = load_system(system)
    assert (chips * s.chip.hbm_capacity_bytes > weights_bytes) == fits


def test_an_moe_on_sram_chips_widens_its_attention_groups_to_fit():
    """Mixtral 8x7B (93 GB at 16 bits) on 1,024 Groq chips (236 GB of SRAM) was refused with 'no room for one
    sequence's KV': DeepSeek's default layout (attention data-parallel, tp 1) kept its 3.3 GB of non-expert weights on
    every 230 MB chip. The attention groups widen until the chips hold them; on an HBM part the layout stays tp 1."""
    from tokenmath.core.load import load_model
    from tokenmath.measure.validate import predict_row
    from tokenmath.measure.validate.report import Prediction
    from tokenmath.measure.validate.serving import _default_split
    al, m = Aliases(), load_model("mixtral-8x7b")
    assert _default_split(m, load_system("groqrack"), "bf16", 1024, al).tp > 1
    assert _default_split(m, load_system("hgx-h100"), "bf16", 8, al).tp == 1
    row = dict(id="G-1", source="probe", model="Mixtral-8x7B-Instruct-v0.1", precision="FP16", hardware="GroqChip",
               n_chips="1024", parallelism="", batch="1", input_len="128", output_len="128", context_len="",
               metric="decode speed", value="480", unit="tokens/s/user", confidence="", notes="")
    assert isinstance(predict_row(row, al), Prediction)


def test_a_replica_spanning_racks_on_a_stated_count_does_not_say_the_count_is_unstated():
    """Mixtral on 1,024 stated Groq chips: the note said 'the row states no chip count' (it states 1,024)."""
    from tokenmath.measure.validate import predict_row
    row = dict(id="G-2", source="probe", model="Mixtral-8x7B-Instruct-v0.1", precision="FP16", hardware="GroqChip",
               n_chips="1024", parallelism="", batch="1", input_len="128", output_len="128", context_len="",
               metric="decode speed", value="480", unit="tokens/s/user", confidence="", notes="")
    said = " ".join(predict_row(row, Aliases()).assumptions)
    assert "spans 16 domains" in said and "states no chip count" not in said
    stated = predict_row({**row, "n_chips": ""}, Aliases())
    assert "states no chip count" in " ".join(stated.assumptions)
