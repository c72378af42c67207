"""SCS unit hydrograph runoff (NEH 630 ch. 16): volume, peak, batching."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st

from capacitysim.errors import InputError
from capacitysim.hydrology import design_storm, runoff_depth, unit_hydrograph_mass_fraction, unit_hydrograph_runoff
from capacitysim.hydrology.unit_hydrograph import _gamma_shape, time_to_peak_hr
from capacitysim.units import ACRES_PER_SQMI, CUBIC_FEET_PER_SQMI_INCH, SECONDS_PER_HOUR


def _volume_in(flow: xr.DataArray, area_mi2) -> np.ndarray:
    return flow.sum("time_hr").values * flow.attrs["dt_hr"] * SECONDS_PER_HOUR / (np.asarray(area_mi2) * CUBIC_FEET_PER_SQMI_INCH)


def _pulse(depth_in: float, dt_hr: float, n: int = 50) -> xr.DataArray:
    rain = np.zeros(n)
    rain[0] = depth_in
    return xr.DataArray(rain, dims=("time_hr",), coords={"time_hr": dt_hr * np.arange(1, n + 1)})


@settings(max_examples=60, deadline=None)
@given(
    st.floats(0.01, 20.0), st.floats(40.0, 100.0), st.floats(0.1, 10.0), st.floats(0.5, 8.0),
    st.sampled_from(["I", "IA", "II", "III"]),
)
def test_volume_equals_runoff_depth(area_mi2, cn, tc, p, dist):
    """Mass balance: the hydrograph carries exactly Q(P, CN) over the area (NEH 630 ch. 16)."""
    flow = unit_hydrograph_runoff(area_mi2, cn, tc, design_storm(p, dist))
    assert _volume_in(flow, area_mi2) == pytest.approx(runoff_depth(p, cn), rel=1e-9, abs=1e-12)
    assert float(flow.min()) >= 0.0


@pytest.mark.parametrize("tc_hr", [0.5, 1.0, 3.0])
def test_peak_of_an_instantaneous_excess_is_484_a_q_over_tp(tc_hr):
    """qp = 484 A Q / Tp (NEH 630 eq. 16-1) for a short burst of excess (CN 100: excess = rain)."""
    dt = 0.01
    flow = unit_hydrograph_runoff(2.0, 100.0, tc_hr, _pulse(1.0, dt, n=int(6 * tc_hr / dt)))
    tp = time_to_peak_hr(tc_hr, dt)
    assert float(flow.max()) == pytest.approx(484 * 2.0 * 1.0 / tp, rel=0.01)
    # ...and the peak comes Tp after the burst's middle: Table 16-1 is flat (q/qp >= 0.99)
    # from 0.9 to 1.1 Tp, so the discrete maximum lies anywhere in that plateau.
    t_peak = float(flow["time_hr"][int(np.argmax(flow.values))])
    assert t_peak == pytest.approx(tp + dt / 2, abs=0.1 * tp + dt)


@pytest.mark.parametrize("prf", [300.0, 484.0, 600.0])
def test_gamma_form_for_other_peak_rate_factors(prf):
    dt = 0.01
    flow = unit_hydrograph_runoff(1.0, 100.0, 1.0, _pulse(1.0, dt, n=800), peak_rate_factor=prf)
    assert float(flow.max()) == pytest.approx(prf / time_to_peak_hr(1.0, dt), rel=0.01)
    assert _volume_in(flow, 1.0) == pytest.approx(1.0, rel=1e-9)


def test_gamma_shape_of_484_is_3_7():
    """NEH 630 ch. 16: the gamma form with m = 3.7 has PRF 484, and its mass curve follows
    Table 16-1 within 0.025 of the volume everywhere (the table is not exactly a gamma curve;
    the largest gap is in the recession near 2.2 Tp)."""
    assert _gamma_shape(484.0) == pytest.approx(3.7, abs=0.01)
    x = np.linspace(0, 5, 51)
    table = unit_hydrograph_mass_fraction(x, 484.0)
    gamma = unit_hydrograph_mass_fraction(x, 484.0 + 1e-9)
    np.testing.assert_allclose(gamma, table, atol=0.025)
    assert np.abs(gamma - table)[x <= 1.0].max() < 0.01


def test_batched_equals_one_by_one_and_is_a_2d_array():
    storm = design_storm(2.1, "II")
    area = np.array([0.05, 0.3, 1.2])
    cn = np.array([70.0, 85.0, 98.0])
    tc = np.array([0.2, 1.0, 4.0])
    batch = unit_hydrograph_runoff(area, cn, tc, storm)
    assert batch.dims == ("subcatchment", "time_hr") and batch.name == "flow_cfs"
    for i in range(3):
        single = unit_hydrograph_runoff(area[i], cn[i], tc[i], storm)
        n = single.sizes["time_hr"]
        np.testing.assert_allclose(batch[i, :n], single, atol=1e-9 * float(single.max()))
        assert np.max(batch.values[i, n:], initial=0.0) <= 1e-9 * float(single.max())


def test_linear_in_area():
    storm = design_storm(3.0, "II")
    a = unit_hydrograph_runoff(0.5, 80, 1.0, storm)
    b = unit_hydrograph_runoff(1.5, 80, 1.0, storm)
    np.testing.assert_allclose(b, 3 * a, rtol=1e-9, atol=1e-12)


def test_time_coordinate_extends_past_the_storm():
    flow = unit_hydrograph_runoff(40 / ACRES_PER_SQMI, 83, 0.5, design_storm(2.1))
    assert float(flow["time_hr"][0]) == pytest.approx(0.1)
    assert float(flow["time_hr"][-1]) > 24.0
    assert float(flow[-1]) == pytest.approx(0.0, abs=1e-6)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(area_mi2=-1.0), "area_mi2"),
        (dict(area_mi2=0.0), "area_mi2"),
        (dict(cn=0.0), "cn must be in"),
        (dict(cn=float("nan")), "cn must not be NaN"),
        (dict(tc_hr=0.0), "tc_hr"),
        (dict(peak_rate_factor=50.0), "peak_rate_factor"),
        (dict(storm=np.ones(10)), "storm must be an xarray.DataArray"),
        (dict(storm=xr.DataArray(np.ones(3), dims=("time_hr",), coords={"time_hr": [1.0, 2.0, 4.0]})), "uniform"),
        (dict(storm=xr.DataArray(-np.ones(3), dims=("time_hr",), coords={"time_hr": [1.0, 2.0, 3.0]})), "storm must be in"),
    ],
)
def test_bad_input(kwargs, match):
    args = dict(area_mi2=1.0, cn=80.0, tc_hr=1.0, storm=design_storm(2.0))
    args.update(kwargs)
    with pytest.raises(InputError, match=match):
        unit_hydrograph_runoff(**args)


@pytest.mark.parametrize("prf", [110.0, 150.0, 200.0])
def test_low_peak_rate_factors_recede_without_a_spike_at_the_end(prf):
    """The gamma form of a low PRF has a long recession (m = 0.26 at PRF 100): cutting it at a fixed
    12 Tp put up to 7 % of the volume into one last ordinate. After the peak, the hydrograph of one
    burst must fall monotonically to ~0, carry the whole volume, and peak at PRF A Q / Tp."""
    dt = 0.02
    tp = time_to_peak_hr(1.0, dt)
    flow = unit_hydrograph_runoff(1.0, 100.0, 1.0, _pulse(1.0, dt, n=10), peak_rate_factor=prf).values
    k = int(np.argmax(flow))
    assert np.all(np.diff(flow[k:]) <= 1e-12 * flow[k])
    assert flow[-1] < 1e-4 * flow[k]
    assert float(flow.max()) == pytest.approx(prf / tp, rel=0.02)
    assert flow.sum() * dt * SECONDS_PER_HOUR / CUBIC_FEET_PER_SQMI_INCH == pytest.approx(1.0, rel=1e-9)


@settings(max_examples=40, deadline=None)
@given(st.floats(40.0, 100.0), st.floats(40.0, 100.0), st.floats(0.1, 5.0), st.floats(0.5, 8.0), st.sampled_from(["I", "IA", "II", "III"]))
def test_hydrograph_is_pointwise_monotone_in_cn(cn1, cn2, tc, p, dist):
    """The excess of every step, Q(P2) - Q(P1), grows with CN (dQ/dP = 1 - 1/(P/S + 0.8)^2 grows
    as S falls), and the unit hydrograph is non-negative: so the whole hydrograph, and its peak,
    never fall when CN rises."""
    lo, hi = sorted((cn1, cn2))
    storm = design_storm(p, dist)
    both = unit_hydrograph_runoff(1.0, np.array([lo, hi]), tc, storm).values
    assert np.all(both[0] <= both[1] + 1e-9 * max(both[1].max(), 1e-12))
