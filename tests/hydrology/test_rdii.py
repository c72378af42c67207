"""RDII by RTK unit hydrographs, sump pumps and roof leaders (hydrology/rdii.py)."""

from __future__ import annotations

import numpy as np
import pytest

from capacitysim.errors import InputError
from capacitysim.hydrology import curve_number, runoff_depth
from capacitysim.hydrology.peak import TC_MIN_HR
from capacitysim.hydrology.rdii import (
    ROOF_CN,
    ROOF_TC_HR,
    RTK_STEP_HR,
    SUMP_RAMP_HR,
    inflow_sources_cfs,
    rain_on_uniform_grid,
    rtk_hydrograph_cfs,
    rtk_peak_cfs,
)
from capacitysim.units import CUBIC_FEET_PER_ACRE_INCH, GPM_PER_CFS, INCHES_PER_FOOT, SECONDS_PER_HOUR

#: A 1-hour storm in 0.1-hour intervals [hr], [in]: 1.0 in in all.
RAIN_T_HR = np.arange(10) * 0.1
RAIN_IN = np.full(10, 0.1)


def test_parameters_are_the_cited_table_values():
    # TR-55 Table 2-2a and the program's Table 174-19.3: roofs are "impervious", CN 98 in every group
    for table in ("TR-55", "BJC 174-19.3"):
        assert np.all(curve_number(["impervious"] * 4, ["A", "B", "C", "D"], table=table) == ROOF_CN)
    assert ROOF_TC_HR == TC_MIN_HR == 0.1  # TR-55's minimum time of concentration


def test_rtk_volume_is_sum_of_r_times_rain_times_area():
    rtk = [(0.02, 1.0, 2.0), (0.01, 5.0, 3.0)]
    area_ac = 10.0
    q = rtk_hydrograph_cfs(rtk, area_ac, RAIN_T_HR, RAIN_IN)
    volume_cf = q.sum() * RTK_STEP_HR * SECONDS_PER_HOUR
    assert volume_cf == pytest.approx(0.03 * RAIN_IN.sum() * area_ac * CUBIC_FEET_PER_ACRE_INCH, rel=1e-6)
    assert np.all(q >= 0)


def test_rtk_triangle_peaks_near_t_after_a_short_burst():
    q = rtk_hydrograph_cfs([(0.1, 2.0, 2.0)], 1.0, [0.0], [1.0], dt_hr=0.01)
    # a 1-hour burst (a single value is taken as 1 h) convolved with a triangle peaking at 2 h
    t_peak_hr = np.argmax(q) * 0.01
    assert 2.0 <= t_peak_hr <= 3.0


def test_responses_without_volume_or_time_are_skipped():
    q = rtk_hydrograph_cfs([(0.0, 1.0, 2.0), (0.05, 0.0, 2.0)], 10.0, RAIN_T_HR, RAIN_IN)
    assert not q.any()


def test_rtk_peak_is_the_peak_of_the_sum():
    a = ([(0.02, 1.0, 2.0)], 10.0)
    b = ([(0.01, 5.0, 3.0)], 4.0)
    qa = rtk_hydrograph_cfs(*a, RAIN_T_HR, RAIN_IN)
    qb = rtk_hydrograph_cfs(*b, RAIN_T_HR, RAIN_IN)
    assert rtk_peak_cfs([a, b], RAIN_T_HR, RAIN_IN) == pytest.approx(float((qa + qb).max()), rel=1e-12)
    assert rtk_peak_cfs([a, b], RAIN_T_HR, RAIN_IN) <= float(qa.max() + qb.max())
    assert rtk_peak_cfs([], RAIN_T_HR, RAIN_IN) == 0.0


def test_rain_on_uniform_grid_sorts_and_fills_the_gaps():
    t0, grid, dt = rain_on_uniform_grid([2.5, 1.0, 1.5], [0.3, 0.1, 0.2])
    assert (t0, dt) == (1.0, 0.5)
    np.testing.assert_allclose(grid, [0.1, 0.2, 0.0, 0.3])
    with pytest.raises(InputError, match="no interval with rain"):
        rain_on_uniform_grid([], [])
    with pytest.raises(InputError, match="no interval with rain"):
        rain_on_uniform_grid([0.0, 1.0], [0.0, 0.0])


def test_sump_pumps_run_from_the_first_rain_to_the_end():
    t = np.array([0.0, 0.5, 1.0, 1.5])
    d = np.array([0.0, 0.0, 0.2, 0.1])
    times, flow, rec = inflow_sources_cfs(3, 5.0, 0.0, ROOF_CN, ROOF_TC_HR, t, d, end_hr=24.0)
    q = 3 * 5.0 / GPM_PER_CFS
    np.testing.assert_allclose(times, [1.0, 1.0 + SUMP_RAMP_HR, 24.0])
    np.testing.assert_allclose(flow, [0.0, q, q])
    assert rec["sump_flow_cfs"] == pytest.approx(q)
    assert rec["sump_on_hr"] == 1.0 and rec["sump_off_hr"] == 24.0
    assert rec["volume_cf"] == pytest.approx(rec["sump_volume_cf"], rel=1e-12)
    assert rec["sump_volume_cf"] == pytest.approx(q * (24.0 - 1.0 - SUMP_RAMP_HR / 2) * SECONDS_PER_HOUR)
    with pytest.raises(InputError, match="at or after the end of the simulation"):
        inflow_sources_cfs(3, 5.0, 0.0, ROOF_CN, ROOF_TC_HR, t, d, end_hr=1.0)


def test_roof_runoff_holds_the_tr55_volume():
    area_sqft = 20_000.0
    times, flow, rec = inflow_sources_cfs(0, 5.0, area_sqft, ROOF_CN, ROOF_TC_HR, RAIN_T_HR, RAIN_IN, end_hr=48.0)
    q_in = float(runoff_depth(RAIN_IN.sum(), ROOF_CN))
    assert rec["roof_tr55_runoff_in"] == pytest.approx(q_in)
    assert rec["roof_tr55_volume_cf"] == pytest.approx(q_in * area_sqft / INCHES_PER_FOOT)
    assert rec["volume_cf"] == pytest.approx(rec["roof_tr55_volume_cf"], rel=0.02)
    assert flow[0] == 0.0 and flow[-1] == 0.0 and rec["roof_peak_cfs"] == pytest.approx(flow.max())
    assert np.all(np.diff(times) > 0)
    with pytest.raises(InputError, match="after the end of the simulation"):
        inflow_sources_cfs(0, 5.0, area_sqft, ROOF_CN, ROOF_TC_HR, RAIN_T_HR, RAIN_IN, end_hr=1.0)


def test_no_source_is_refused():
    with pytest.raises(InputError, match="sump_pumps > 0 and/or a roof area"):
        inflow_sources_cfs(0, 5.0, 0.0, ROOF_CN, ROOF_TC_HR, RAIN_T_HR, RAIN_IN, end_hr=24.0)
