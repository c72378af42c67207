"""Graphical peak discharge, TR-55 Chapter 4 (Example 4-1, Table 4-2, Table F-1)."""

from __future__ import annotations

import numpy as np
import pytest

from capacitysim.errors import CapacitysimWarning, InputError
from capacitysim.hydrology import (
    design_storm,
    graphical_peak_discharge,
    pond_swamp_adjustment,
    runoff_depth,
    unit_hydrograph_runoff,
    unit_peak_discharge_csm_in,
)
from capacitysim.hydrology import tables


def test_example_4_1_heavenly_acres():
    """TR-55 Example 4-1: 250 ac (0.39 mi2), CN 75, Tc 1.53 h, 6.0 in Type II: Ia/P 0.11,
    Q 3.28 in, qu about 269 csm/in, qp 344-345 cfs (read from Exhibit 4-II; 1 % tolerance)."""
    assert runoff_depth(6.0, 75) == pytest.approx(3.28, abs=0.005)
    assert unit_peak_discharge_csm_in(1.53, 0.11) == pytest.approx(269, rel=0.01)
    assert graphical_peak_discharge(0.39, 75, 6.0, 1.53) == pytest.approx(345, rel=0.01)


def test_unit_peak_equals_table_f1_row_on_its_ia_p():
    ratios, coefs = tables.unit_peak_coefficients()["II"]
    for r, (c0, c1, c2) in zip(ratios, coefs):
        x = np.log10(2.0)
        assert unit_peak_discharge_csm_in(2.0, r) == pytest.approx(10 ** (c0 + c1 * x + c2 * x * x), rel=1e-12)


def test_type_iii_ia_p_050_coefficient_is_the_checked_one():
    """Table F-1 Type III Ia/P 0.50: C2 = -0.09525 (four independent transcriptions agree; one copy
    repeats the 0.45 row's -0.11508)."""
    ratios, coefs = tables.unit_peak_coefficients()["III"]
    assert coefs[ratios == 0.5][0].tolist() == [2.17772, -0.36803, -0.09525]


def test_table_4_2_pond_swamp():
    assert pond_swamp_adjustment([0, 0.2, 1.0, 3.0, 5.0]).tolist() == [1.0, 0.97, 0.87, 0.75, 0.72]
    assert graphical_peak_discharge(1, 80, 5, 1, pond_swamp_pct=1.0) == pytest.approx(
        0.87 * graphical_peak_discharge(1, 80, 5, 1), rel=1e-12
    )
    with pytest.raises(InputError, match="pond_swamp_pct must be in \\[0, 5\\] %"):
        graphical_peak_discharge(1, 80, 5, 1, pond_swamp_pct=6)


def test_peak_is_linear_in_area_and_vectorized():
    qp = graphical_peak_discharge(np.array([0.1, 0.2, 0.4]), 80, 4.0, 1.0)
    np.testing.assert_allclose(qp / qp[0], [1, 2, 4], rtol=1e-12)


def test_peak_decreases_with_tc():
    qp = graphical_peak_discharge(1.0, 80, 4.0, np.array([0.2, 0.5, 1, 2, 5, 9]))
    assert np.all(np.diff(qp) < 0)


def test_limits_are_clamped_with_warnings():
    with pytest.warns(CapacitysimWarning, match="Tc outside"):
        low = graphical_peak_discharge(1.0, 80, 4.0, 0.05)
    assert low == pytest.approx(graphical_peak_discharge(1.0, 80, 4.0, 0.1))
    with pytest.warns(CapacitysimWarning, match="Ia/P outside"):
        graphical_peak_discharge(1.0, 98, 10.0, 1.0)


def test_no_runoff_no_peak():
    assert graphical_peak_discharge(1.0, 60, 1.0, 1.0) == 0.0
    assert graphical_peak_discharge(1.0, 60, 0.0, 1.0) == 0.0


def test_cross_check_against_unit_hydrograph():
    """Two independent NRCS methods on the same watershed: the graphical method (regressions on
    TR-20 runs, Table F-1) and our unit hydrograph convolution agree within 10 % for Type II."""
    for area_ac, cn, tc, p in [(250, 75, 1.53, 6.0), (40, 83, 0.46, 2.1), (640, 70, 3.0, 5.0)]:
        storm = design_storm(p, "II", dt_min=6)
        uh_peak = float(unit_hydrograph_runoff(area_ac / 640, cn, tc, storm).max())
        graphical = graphical_peak_discharge(area_ac / 640, cn, p, tc)
        assert uh_peak == pytest.approx(graphical, rel=0.10), (area_ac, cn, tc, p)


def test_table_f1_curves_fall_with_tc_and_with_ia_p():
    """Exhibit 4 drawn from Table F-1: for every type, qu falls as Tc grows, and at each Tc in
    0.1-10 h a larger Ia/P never gives a larger qu (more of the rain is abstracted). This pins the
    Type I C2 signs at Ia/P 0.35-0.45 (+0.01983, +0.05754, +0.00453): with the negative signs of
    one transcription lineage, the 0.40 curve would lie 8.6 csm/in *under* the 0.50 curve at 10 h."""
    tc = np.logspace(-1, 1, 201)
    for dist, (ratios, _) in tables.unit_peak_coefficients().items():
        qu = np.array([unit_peak_discharge_csm_in(tc, r, dist) for r in ratios])
        assert np.all(np.diff(qu, axis=1) < 0), dist
        assert np.all(np.diff(qu, axis=0) <= 0), dist
    ratios, coefs = tables.unit_peak_coefficients()["I"]
    assert coefs[(ratios > 0.3) & (ratios < 0.5), 2].tolist() == [0.01983, 0.05754, 0.00453]


def test_unit_peak_interpolates_qu_linearly_between_ia_p_rows():
    """TR-55 ch. 4: straight-line interpolation between the Ia/P curves (here 0.30 and 0.35, Type II)."""
    a, b = unit_peak_discharge_csm_in(1.0, 0.30), unit_peak_discharge_csm_in(1.0, 0.35)
    assert a == pytest.approx(10**2.46532, rel=1e-12) and b == pytest.approx(10**2.41896, rel=1e-12)
    assert unit_peak_discharge_csm_in(1.0, 0.32) == pytest.approx(a + 0.4 * (b - a), rel=1e-12)


@pytest.mark.parametrize(
    "tc, ia_p, match",
    [
        (0.05, 0.2, r"tc_hr must be in \[0.1, 10\] h, got 0.05"),
        (12.0, 0.2, r"tc_hr must be in \[0.1, 10\] h"),
        (1.0, 0.6, r"ia_over_p must be in \[0.1, 0.5\], got 0.6"),
        (1.0, float("nan"), "ia_over_p must not be NaN"),
        (-1.0, 0.2, "tc_hr must be in"),
    ],
)
def test_unit_peak_refuses_to_extrapolate(tc, ia_p, match):
    """Outside Exhibit 4 the direct call refuses (linear weights would extrapolate the curves);
    graphical_peak_discharge clamps instead, with a warning."""
    with pytest.raises(InputError, match=match):
        unit_peak_discharge_csm_in(tc, ia_p)


# --- properties ------------------------------------------------------------------------------
import warnings  # noqa: E402

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_dists = st.sampled_from(["I", "IA", "II", "III"])


def _qp(*args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CapacitysimWarning)  # clamping warnings are tested above
        return graphical_peak_discharge(*args, **kw)


@settings(max_examples=200, deadline=None)
@given(st.floats(0.0, 15.0), st.floats(0.0, 15.0), st.floats(30.0, 100.0), st.floats(0.05, 12.0), _dists)
def test_peak_is_monotone_in_precip(p1, p2, cn, tc, dist):
    """More rain: more runoff Q and a smaller Ia/P (a higher qu curve), so never a lower peak."""
    lo, hi = sorted((p1, p2))
    assert _qp(1.0, cn, lo, tc, dist) <= _qp(1.0, cn, hi, tc, dist) * (1 + 1e-12) + 1e-12


@settings(max_examples=200, deadline=None)
@given(st.floats(0.0, 15.0), st.floats(30.0, 100.0), st.floats(30.0, 100.0), st.floats(0.05, 12.0), _dists)
def test_peak_is_monotone_in_cn(p, cn1, cn2, tc, dist):
    lo, hi = sorted((cn1, cn2))
    assert _qp(1.0, lo, p, tc, dist) <= _qp(1.0, hi, p, tc, dist) * (1 + 1e-12) + 1e-12


@settings(max_examples=200, deadline=None)
@given(st.floats(0.5, 15.0), st.floats(40.0, 100.0), st.floats(0.0, 5.0), st.floats(0.0, 5.0), _dists)
def test_peak_never_rises_with_pond_and_swamp_area(p, cn, f1, f2, dist):
    lo, hi = sorted((f1, f2))
    assert _qp(1.0, cn, p, 1.0, dist, pond_swamp_pct=hi) <= _qp(1.0, cn, p, 1.0, dist, pond_swamp_pct=lo) + 1e-12
