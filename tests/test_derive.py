"""The symbols on the right of every formula are its function's inputs, and the text matches the code."""

import importlib
import pkgutil
import re

import tokenmath
from tokenmath.core.derive import FORMULAS, Q, formula, given

ALLOWED = {"max", "min", "exp", "log", "sqrt", "e", "ln", "floor", "ceil", "min_", "max_"}


def _import_all():
    for info in pkgutil.walk_packages(tokenmath.__path__, "tokenmath."):
        if ".cli" in info.name or info.name.endswith("calibrate") or "checklocal" in info.name:
            continue
        try:
            importlib.import_module(info.name)
        except ImportError:
            pass


def test_every_formula_text_names_exactly_its_inputs():
    _import_all()
    assert len(FORMULAS) > 20
    for f in FORMULAS:
        rhs = f.text.split("=", 1)[1]
        symbols = set(re.findall(r"(?<![0-9.])[A-Za-z_][A-Za-z0-9_]*", rhs)) - ALLOWED
        params = set(f.params)
        assert symbols <= params, f"{f.__module__}.{f.__name__}: {symbols - params} not inputs"
        assert params <= symbols, f"{f.__module__}.{f.__name__}: inputs {params - symbols} not in its text"


@formula("y = a · x + b", unit="s")
def _line(a, x, b):
    return a * x + b


def test_formula_fast_path_and_derivation_agree():
    assert _line(2.0, 3.0, 1.0) == 7.0
    q = _line(given("a", 2.0, "", "slope src"), 3.0, 1.0)
    assert isinstance(q, Q) and q.value == 7.0
    assert q.substituted() == "2 · 3 + 1"
    text = q.explain()
    assert text.splitlines()[0] == "y = a · x + b  = 7.00 s"
    assert "a: slope src" in text
    assert q.to_dict()["inputs"]["a"]["source"] == "slope src"
