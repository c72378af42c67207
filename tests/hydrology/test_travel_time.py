"""Travel time and Tc, TR-55 Chapter 3 (Example 3-1, Worksheet 3)."""

from __future__ import annotations

import numpy as np
import pytest

from capacitysim.errors import CapacitysimWarning, InputError
from capacitysim.hydrology import channel_flow_time, shallow_flow_time, sheet_flow_time, time_of_concentration

# TR-55 (1986) Example 3-1 (Heavenly Acres), Figure 3-2 Worksheet 3, published to 0.01 h:
# AB sheet flow, dense grass n 0.24, L 100 ft, P2 3.6 in, s 0.01 -> 0.30 h
# BC shallow concentrated, unpaved, L 1,400 ft, s 0.01 -> 0.24 h
# CD channel, n 0.05, a 27 ft2, pw 28.2 ft, s 0.005, L 7,300 ft -> V 2.05 ft/s, 0.99 h; Tc 1.53 h.
# (Transcribed from a third-party reproduction of the worksheet; every segment checks by hand.)
PRINTED = 0.005 + 1e-9


def test_example_3_1_segments_and_tc():
    sheet = sheet_flow_time(0.24, 100.0, 3.6, 0.01)
    shallow = shallow_flow_time(1400.0, 0.01, paved=False)
    channel = channel_flow_time(7300.0, 0.05, 27.0, 28.2, 0.005)
    assert sheet == pytest.approx(0.30, abs=PRINTED)
    assert shallow == pytest.approx(0.24, abs=PRINTED)
    assert channel == pytest.approx(0.99, abs=PRINTED)
    assert time_of_concentration(sheet, shallow, channel) == pytest.approx(1.53, abs=PRINTED)


def test_shallow_paved_is_faster_by_the_coefficient_ratio():
    unpaved = shallow_flow_time(1000.0, 0.02, False)
    paved = shallow_flow_time(1000.0, 0.02, True)
    assert unpaved / paved == pytest.approx(20.3282 / 16.1345, rel=1e-12)


def test_vectorized_segments():
    tt = sheet_flow_time(np.array([0.011, 0.15, 0.24]), 100.0, 3.0, 0.02)
    assert tt.shape == (3,)
    assert np.all(np.diff(tt) > 0)  # rougher surfaces are slower
    tc = time_of_concentration(tt, np.array([0.1, 0.2, 0.3]))
    np.testing.assert_allclose(tc, tt + [0.1, 0.2, 0.3])


def test_sheet_flow_length_limits():
    with pytest.warns(CapacitysimWarning, match="100 ft"):
        sheet_flow_time(0.15, 250.0, 3.0, 0.02)
    with pytest.raises(InputError, match="length_ft must be in \\(0, 300\\] ft"):
        sheet_flow_time(0.15, 301.0, 3.0, 0.02)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: sheet_flow_time(0.0, 100, 3, 0.01), "n must be in"),
        (lambda: sheet_flow_time(0.2, 100, 3, 0.0), "slope must be in"),
        (lambda: shallow_flow_time(-5, 0.01, True), "length_ft"),
        (lambda: channel_flow_time(100, 0.03, 0.0, 5, 0.01), "area_ft2"),
        (lambda: time_of_concentration(0.2, -0.1), "travel_times_hr\\[1\\]"),
        (lambda: time_of_concentration(), "at least one"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(InputError, match=match):
        call()


# --- properties ------------------------------------------------------------------------------
import warnings  # noqa: E402

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_n = st.floats(0.011, 0.8)
_len = st.floats(1.0, 300.0)
_p2 = st.floats(1.0, 6.0)
_s = st.floats(1e-4, 0.5)


def _sheet(*args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CapacitysimWarning)
        return sheet_flow_time(*args)


@settings(max_examples=200, deadline=None)
@given(_n, _n, _len, _len, _p2, _s)
def test_sheet_flow_slower_with_rougher_and_longer_surfaces(n1, n2, l1, l2, p2, s):
    (na, nb), (la, lb) = sorted((n1, n2)), sorted((l1, l2))
    assert _sheet(na, la, p2, s) <= _sheet(nb, la, p2, s) <= _sheet(nb, lb, p2, s)


@settings(max_examples=200, deadline=None)
@given(_n, _len, _p2, _p2, _s, _s)
def test_sheet_flow_faster_with_more_rain_and_steeper_slopes(n, length, pa, pb, sa, sb):
    (p_lo, p_hi), (s_lo, s_hi) = sorted((pa, pb)), sorted((sa, sb))
    assert _sheet(n, length, p_hi, s_lo) <= _sheet(n, length, p_lo, s_lo)
    assert _sheet(n, length, p_lo, s_hi) <= _sheet(n, length, p_lo, s_lo)


@settings(max_examples=200, deadline=None)
@given(st.floats(1.0, 1e4), st.floats(1.0, 1e4), _s, _s, st.floats(0.01, 0.2), st.floats(0.5, 100.0))
def test_concentrated_and_channel_flow_monotone(la, lb, sa, sb, n, area):
    """Longer: slower; steeper: faster; paved faster than unpaved; channel time grows with n."""
    (l_lo, l_hi), (s_lo, s_hi) = sorted((la, lb)), sorted((sa, sb))
    assert shallow_flow_time(l_lo, s_lo, False) <= shallow_flow_time(l_hi, s_lo, False)
    assert shallow_flow_time(l_lo, s_hi, False) <= shallow_flow_time(l_lo, s_lo, False)
    assert shallow_flow_time(l_lo, s_lo, True) < shallow_flow_time(l_lo, s_lo, False)
    pw = 2.0 * np.sqrt(area) + 1.0
    assert channel_flow_time(l_lo, n, area, pw, s_lo) <= channel_flow_time(l_hi, n, area, pw, s_lo)
    assert channel_flow_time(l_lo, n, area, pw, s_lo) <= channel_flow_time(l_lo, 1.5 * n, area, pw, s_lo)


def test_channel_velocity_hand_calculation():
    """Manning, U.S. units: a = 27 ft2, pw = 28.2 ft, r = 0.9574 ft, s = 0.005, n = 0.05:
    V = 1.49 r^(2/3) s^(1/2) / n = 2.0495 ft/s (TR-55 Example 3-1 prints 2.05)."""
    from capacitysim.hydrology.travel_time import channel_velocity_fps

    r = 27.0 / 28.2
    assert channel_velocity_fps(0.05, 27.0, 28.2, 0.005) == pytest.approx(1.49 * r ** (2 / 3) * 0.005**0.5 / 0.05, rel=1e-12)
    assert channel_velocity_fps(0.05, 27.0, 28.2, 0.005) == pytest.approx(2.05, abs=0.005)
