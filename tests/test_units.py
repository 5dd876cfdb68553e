import math

import numpy as np
import pytest

from tokenmath.core.units import UnitError, fmt, parse_quantity


@pytest.mark.parametrize("text,dim,expected", [
    ("3.35 TB/s", "bytes_per_s", 3.35e12),
    ("400 Gb/s", "bytes_per_s", 50e9),
    ("80 GB", "bytes", 80e9),
    ("32 GiB", "bytes", 32 * 2**30),
    ("20 ms", "s", 0.02),
    ("20 us", "s", 2e-5),
    ("989 TFLOP/s", "flop_per_s", 989e12),
    ("1,979 TFLOP/s", "flop_per_s", 1979e12),
    (4.54, None, 4.54),
    ("671e9", None, 671e9),
])
def test_parse(text, dim, expected):
    assert math.isclose(parse_quantity(text, dim), expected, rel_tol=1e-12)


def test_parse_refuses_wrong_dimension_and_garbage():
    with pytest.raises(UnitError, match="expected bytes per s"):
        parse_quantity("80 GB", "bytes_per_s")
    with pytest.raises(UnitError):
        parse_quantity("fast", "s")
    with pytest.raises(UnitError, match="unknown unit"):
        parse_quantity("3 furlongs", None)


@pytest.mark.parametrize("value,unit,text", [
    (0.00131, "s", "1.31 ms"),
    (8e12, "B/s", "8.00 TB/s"),
    (5584.2, "", "5,584"),
    (671e9, "params", "671B params"),
    (15.6e12, "tokens", "15.6T tokens"),
    (0.0516, "USD", "$0.0516"),
    (3.5, "", "3.50"),
    (61, "", "61"),
    (1_000_000, "", "1,000,000"),
    (1e12, "", "1e+12"),
    (86400 * 3, "s", "3.00 days"),
    (float("inf"), "s", "∞ s"),
])
def test_fmt(value, unit, text):
    assert fmt(value, unit) == text


def test_fmt_array_prints_range():
    assert fmt(np.array([1e-3, 2e-3]), "s") == "[1.00 ms … 2.00 ms] (2 points)"
