"""Measured efficiency curves (Priors.curves): read in log space, used by the roofline where present."""

import numpy as np
import pytest
from pydantic import ValidationError

from tokenmath.core.kernels import curve_value, efficiency
from tokenmath.core.load import load_model, load_priors, load_system
from tokenmath.core.records import Curve
from tokenmath.core.roofline import step


def test_curve_is_a_power_law_between_points_and_flat_beyond_its_ends():
    c = Curve(x=(1, 100), y=(0.2, 0.8))
    assert curve_value(c, 10) == pytest.approx(0.4)  # sqrt(0.2 · 0.8): log y linear in log x
    assert curve_value(c, 0.01) == pytest.approx(0.2)
    assert curve_value(c, 1e6) == pytest.approx(0.8)
    assert np.allclose(curve_value(c, np.array([1, 10, 100])), [0.2, 0.4, 0.8])


def test_time_through_a_curve_is_monotone_when_its_points_are():
    """x / eta(x) never falls between points whose times do not fall (a fixed cost: eta doubles per bin)."""
    c = Curve(x=(1e3, 2e3, 4e3, 8e3), y=(0.001, 0.002, 0.004, 0.0075))
    x = np.geomspace(1e3, 8e3, 400)
    assert np.all(np.diff(x / curve_value(c, x)) >= -1e-12 * x[1:] / curve_value(c, x[1:]))


@pytest.mark.parametrize("bad", [dict(x=(), y=()), dict(x=(2, 1), y=(0.5, 0.5)), dict(x=(1,), y=(0.0,)),
                                 dict(x=(1, 2), y=(0.5,))])
def test_malformed_curves_are_refused(bad):
    with pytest.raises(ValidationError):
        Curve(**bad)


def test_lookup_prefers_the_precision_curve_then_the_plain_one_then_the_scalar():
    pri = load_priors("default")
    assert efficiency(pri, "eta_bw", "bf16", 8)[0] == pri.eta_bw
    pri2 = pri.model_copy(update={"curves": {"eta_bw": Curve(x=(1, 64), y=(0.5, 0.5)),
                                             "eta_bw.fp8": Curve(x=(1, 64), y=(0.7, 0.7))}})
    assert efficiency(pri2, "eta_bw", "fp8", 8)[0] == pytest.approx(0.7)
    assert efficiency(pri2, "eta_bw", "bf16", 8)[0] == pytest.approx(0.5)


def test_the_roofline_reads_gemm_and_kv_curves_at_the_step_size():
    m, s = load_model("llama-3.1-8b"), load_system("hgx-h100")
    pri = load_priors("default")
    base = step(m, s, G=1, B=np.array([1, 256]), S=4096, priors=pri)
    slow = pri.model_copy(update={"curves": {"eta_mm.bf16": Curve(x=(1, 1024), y=(0.05, 0.05)),
                                             "eta_kv.bf16": Curve(x=(1, 1e6), y=(0.3, 0.3))}})
    st = step(m, s, G=1, B=np.array([1, 256]), S=4096, priors=slow, explain=True)
    assert np.all(st.v("t_kv") > base.v("t_kv"))
    assert np.all(st.v("t_math") > base.v("t_math"))
    assert "curve eta_kv.bf16" in st.t_step.explain()
