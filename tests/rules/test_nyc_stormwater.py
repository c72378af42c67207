"""15 RCNY § 31-03 release rate, alteration proration, rational Allowable Flow, modified rational volume."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from capacitysim.errors import InputError
from capacitysim.rules import nyc_stormwater as nyc


# --- § 31-03(a)(1) boundaries, exactly as worded -------------------------------------------------
@pytest.mark.parametrize(
    "allowable, expected",
    [
        (0.0, 0.0),
        (0.10, 0.10),  # under 0.25 cfs: the Allowable Flow itself
        (0.2499, 0.2499),
        (0.25, 0.25),  # at 0.25: the greater of 0.25 or 10 % = 0.25
        (1.0, 0.25),
        (2.4999, 0.25),
        (2.5, 0.25),  # 10 % of 2.5 = 0.25: both branches agree
        (2.5001, 0.25001),  # above 2.5 cfs 10 % takes over
        (4.0, 0.40),
        (10.0, 1.0),
    ],
)
def test_release_rate_boundaries(allowable, expected):
    assert nyc.release_rate_cfs(allowable) == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_ten_percent_takes_over_at_2_5_cfs():
    assert nyc.TEN_PERCENT_TAKES_OVER_CFS == pytest.approx(2.5)
    eps = 1e-9
    assert nyc.release_rate_cfs(2.5 - eps) == 0.25
    assert nyc.release_rate_cfs(2.5 + 1e-6) > 0.25


def test_release_rate_is_continuous_and_vectorized():
    q = np.linspace(0, 5, 5001)
    r = nyc.release_rate_cfs(q)
    assert isinstance(r, np.ndarray) and r.shape == q.shape
    assert np.all(np.diff(r) >= 0)  # never decreases with Allowable Flow
    assert np.max(np.abs(np.diff(r))) <= 1e-3 + 1e-12  # no jump at 0.25 or 2.5
    assert np.all(r <= np.maximum(q, 0.25) + 1e-15)
    assert isinstance(nyc.release_rate_cfs(1.0), float)


@given(st.floats(0, 1e4, allow_nan=False))
def test_release_rate_never_exceeds_allowable_flow_or_its_floor(q):
    r = nyc.release_rate_cfs(q)
    if q < 0.25:
        assert r == q
    else:
        assert r == max(0.25, 0.1 * q)


def test_release_rate_rejects_negative():
    with pytest.raises(InputError, match="allowable_flow_cfs"):
        nyc.release_rate_cfs(-0.1)


# --- § 31-03(a)(2) alterations ---------------------------------------------------------------------
def test_alteration_prorated_by_area():
    # entire site release rate 0.25 (Allowable Flow 1.2 cfs); altered 2,000 of 8,000 ft2 -> 0.0625 cfs
    assert nyc.alteration_release_rate_cfs(1.2, 2000.0, 8000.0) == pytest.approx(0.0625, rel=1e-12)
    # above 2.5 cfs: 10 % x ratio
    assert nyc.alteration_release_rate_cfs(5.0, 1.0, 4.0) == pytest.approx(0.125, rel=1e-12)
    # whole site altered = new development rate
    assert nyc.alteration_release_rate_cfs(0.2, 10.0, 10.0) == pytest.approx(0.2)


def test_alteration_refuses_altered_area_larger_than_site():
    with pytest.raises(InputError, match="altered_area must not exceed site_area"):
        nyc.alteration_release_rate_cfs(1.0, 9000.0, 8000.0)
    with pytest.raises(InputError, match="altered_area"):
        nyc.alteration_release_rate_cfs(1.0, 0.0, 8000.0)


# --- Allowable Flow and the rational method ----------------------------------------------------------
def test_allowable_flow_hand_calculation():
    # 1 acre, drainage-plan C 0.60, 5.95 in/h -> 3.57 cfs (PC Eq. 11-1 convention, factor 1.0)
    assert nyc.allowable_flow_cfs(1.0, 0.60, 5.95) == pytest.approx(3.57, rel=1e-12)
    # 0.5 ac, C 0.45 -> 1.33875 cfs -> release rate 0.25 (between 0.25 and 2.5)
    q = nyc.allowable_flow_cfs(0.5, 0.45, 5.95)
    assert q == pytest.approx(1.33875)
    assert nyc.release_rate_cfs(q) == 0.25


@pytest.mark.parametrize("c", [-0.1, 0.0, 1.01])
def test_allowable_flow_rejects_c_outside_0_1(c):
    with pytest.raises(InputError, match="drainage_plan_c"):
        nyc.allowable_flow_cfs(1.0, c, 5.95)


def test_weighted_c_pc_eq_11_2():
    # 6,000 ft2 roof (0.95) + 2,000 asphalt (0.85) + 2,000 grass (0.20) -> 0.78
    assert nyc.weighted_runoff_coefficient([6000, 2000, 2000], [0.95, 0.85, 0.20]) == pytest.approx(0.78)


def test_infiltration_eq_11_3():
    # 1,200 ft2 bottom at 2 in/h -> 1200 * 2 / 43200 = 0.05556 cfs
    assert nyc.infiltration_outflow_cfs(1200, 2.0) == pytest.approx(1200 * 2 / 43200)


# --- modified rational volume --------------------------------------------------------------------
def test_modified_rational_closed_form_matches_numerical_maximum():
    c, a_ac, qo, a, b = 0.9, 0.5, 0.25, 211.7016, 15.0
    v, t = nyc.modified_rational_volume_cf(c, a_ac, qo, a, b)
    ts = np.linspace(0.01, 600, 600001)
    curve = nyc.modified_rational_storage_curve_cf(ts, c, a_ac, qo, a, b)
    assert v == pytest.approx(curve.max(), rel=1e-8)
    assert t == pytest.approx(ts[np.argmax(curve)], abs=2e-3)


def test_critical_duration_reproduces_pc_eq_11_5_with_the_derived_curve():
    # With a = 0.27^2 * 43,560 / 15 and b = 15 the optimum of the constant-outflow method is
    # exactly Eq. 11-5 (the derivation the rule set documents; it tests the maximisation).
    a = 0.27**2 * 43560 / 15
    for c, area_sf, q in [(0.95, 20000, 0.25), (0.6, 100000, 0.7), (0.8, 43560, 1.0)]:
        _, t = nyc.modified_rational_volume_cf(c, area_sf / 43560, q, a, 15.0)
        assert t == pytest.approx(nyc.eq_11_5_duration_min(c, area_sf, q), rel=1e-12)


def test_no_storage_when_outflow_passes_the_shortest_storm():
    v, t = nyc.modified_rational_volume_cf(0.5, 0.1, 10.0, 211.7016, 15.0)
    assert v == 0.0 and t == 0.0


@settings(max_examples=50)
@given(st.floats(0.05, 1.0), st.floats(0.01, 10.0), st.floats(0.01, 5.0), st.floats(0.01, 1.0))
def test_volume_decreases_with_outflow(c, area_ac, q, dq):
    v1, _ = nyc.modified_rational_volume_cf(c, area_ac, q, 211.7016, 15.0)
    v2, _ = nyc.modified_rational_volume_cf(c, area_ac, q + dq, 211.7016, 15.0)
    assert v2 <= v1 + 1e-9


def test_rule_set_idf_constants_reproduce_eq_11_5_to_rounding():
    # The nyc-2012 rule set documents a = 0.27^2 x 43,560 / 15 and b = 15 min; the stored numbers must be
    # that (a typo of 211.68 shifted the critical duration by 0.004 min).
    from capacitysim.io.site_files import load_rule_set

    rs = load_rule_set("nyc-2012")
    assert rs.value("idf_10yr", "b_min") == 15.0
    assert rs.value("idf_10yr", "a") == pytest.approx(0.27**2 * 43560 / 15, rel=1e-7)
    _, t = nyc.modified_rational_volume_cf(0.855, 20000 / 43560, 0.25, rs.value("idf_10yr", "a"), 15.0)
    # Eq. 11-5 by hand: 0.27 sqrt(0.855 x 20,000 / 0.25) - 15 = 0.27 x 261.534 - 15 = 55.614 min
    assert t == pytest.approx(0.27 * math.sqrt(0.855 * 20000 / 0.25) - 15, abs=1e-4)
    assert t == pytest.approx(55.614, abs=1e-3)
