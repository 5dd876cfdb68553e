"""benchmarks/silicon_table.py's reading of aiconfigurator-core's silicon sample (no package needed to read a label)."""

import importlib.util
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location("silicon_table",
                                               Path(__file__).parents[1] / "benchmarks" / "silicon_table.py")
silicon_table = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(silicon_table)


@pytest.mark.parametrize("batch, dp, concurrency, ok", [
    ("56", "8", 448, True),    # 56 a rank over 8 attention-DP ranks
    ("448", "1", 448, True),
    ("448", "", 448, True),    # a blank read as one rank
    ("56", "", 448, False),    # 56 at 448 with no attention DP named: how many each rank held is not known
    ("13", "1", 416, False),
    ("1", "0", 2, False),
    ("", "", 64, True),        # no batch size stated: nothing to disagree with
])
def test_a_run_whose_batch_size_and_concurrency_disagree_is_left_out(batch, dp, concurrency, ok):
    assert silicon_table._consistent({"batch_size": batch, "attention_dp_size": dp}, concurrency) is ok
