"""Issue 12: the hydrology core refuses runaway sizes before allocating, and inputs whose results overflow.

The sizes asked for here are astronomically large (10^11 to 10^300 steps): before the bounds, numpy
failed at once with a MemoryError (or the machine ran out of memory); now each is an InputError
naming the inputs that drive the count.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import xarray as xr

import capacitysim.checks as checks
import capacitysim.hydrology._inputs as bounds
from capacitysim.errors import InputError
from capacitysim.hydrology import (
    design_storm,
    graphical_peak_discharge,
    initial_abstraction_in,
    potential_retention_in,
    runoff_depth,
    unit_hydrograph_runoff,
)


@pytest.mark.parametrize("dt_min", [1e-9, 1e-300, 5e-324])
def test_design_storm_step_count_is_bounded(dt_min):
    with pytest.raises(InputError, match=r"the design storm would need .* time steps .*dt_min = .*at most 1,000,000"):
        design_storm(2.1, "II", dt_min)


def test_design_storm_finest_step_allowed_still_works():
    dt_min = 24 * 60 / checks.MAX_TIME_STEPS  # exactly a million steps
    storm = design_storm(2.1, "II", dt_min)
    assert storm.size == checks.MAX_TIME_STEPS and float(storm.sum()) == pytest.approx(2.1)


def test_design_storm_step_longer_than_the_storm_is_refused():
    with pytest.raises(InputError, match="dt_min must divide"):
        design_storm(2.1, "II", 2880.0)


@pytest.mark.parametrize("depth", [1e308, math.inf, 202.0])
def test_storm_depth_is_bounded(depth):
    with pytest.raises(InputError, match=r"depth_in must be in \[0, 200\] in"):
        design_storm(depth)


def test_unit_hydrograph_tc_is_bounded():
    """Tc = 1e9 h asked for 3 x 10^10 ordinates (224 GiB); refused by its bound before allocating."""
    with pytest.raises(InputError, match=r"tc_hr must be in \(0, 240\] h, got 1000000000.0"):
        unit_hydrograph_runoff(0.1, 80.0, 1e9, design_storm(2.1))


def test_unit_hydrograph_step_count_is_bounded_for_a_fine_storm():
    """A legal Tc with a storm step of 10^-5 h: 5 Tp / dt ordinates, over the limit, refused with the drivers."""
    dt = 1e-5
    rain = xr.DataArray(np.full(4, 0.1), dims=("time_hr",), coords={"time_hr": dt * np.arange(1, 5)})
    with pytest.raises(InputError, match=r"the hydrograph would need [\d,]+ time steps \(tc_hr up to 100 h, storm step"):
        unit_hydrograph_runoff(0.1, 80.0, 100.0, rain)


def test_unit_hydrograph_batch_size_is_bounded():
    """200,000 subcatchments x 72,007 steps (1.4 x 10^10 values, 115 GB per array): refused at once."""
    n = 200_000
    dt = 0.01
    rain = xr.DataArray(np.full(4, 0.5), dims=("time_hr",), coords={"time_hr": dt * np.arange(1, 5)})
    with pytest.raises(InputError, match=r"the hydrographs would need [\d,]+ values \(200,000 subcatchments x 72,007 steps"):
        unit_hydrograph_runoff(np.full(n, 1.0), np.full(n, 80.0), np.full(n, 240.0), rain)


def test_unit_hydrograph_longest_tc_allowed_still_works():
    q = unit_hydrograph_runoff(1.0, 80.0, bounds.MAX_TC_HR, design_storm(2.1))
    assert np.isfinite(q.values).all() and q.size < checks.MAX_TIME_STEPS


@pytest.mark.parametrize("area", [1e308, math.inf, 10_100.0])
def test_areas_are_bounded(area):
    """area 1e308 mi2 gave a NaN hydrograph and a 3e307 cfs peak."""
    with pytest.raises(InputError, match=r"area_mi2 must be in \(0, 10000\] mi2"):
        unit_hydrograph_runoff(area, 80.0, 1.0, design_storm(2.1))
    with pytest.raises(InputError, match=r"area_mi2 must be in \[0, 10000\] mi2"):
        graphical_peak_discharge(area, 80.0, 2.1, 1.0)


def test_storm_holding_more_than_the_maximum_depth_is_refused():
    rain = xr.DataArray(np.full(10, 30.0), dims=("time_hr",), coords={"time_hr": np.arange(1.0, 11.0)})
    with pytest.raises(InputError, match="storm must hold at most 200 in of rain in all; got 300 in"):
        unit_hydrograph_runoff(1.0, 80.0, 1.0, rain)


def test_storm_with_non_finite_times_is_refused():
    rain = xr.DataArray(np.full(3, 0.1), dims=("time_hr",), coords={"time_hr": [1.0, np.nan, 3.0]})
    with pytest.raises(InputError, match="time_hr must be finite"):
        unit_hydrograph_runoff(1.0, 80.0, 1.0, rain)


@pytest.mark.parametrize("kernel", ["auto", "numpy"])
@pytest.mark.parametrize("p", [1e308, math.inf, 200.5])
def test_runoff_depth_refuses_precipitation_beyond_any_storm(kernel, p):
    """Q was inf for P = 1e308 in."""
    with pytest.raises(InputError, match=r"precip_in must be in \[0, 200\] in"):
        runoff_depth(p, 80.0, kernel=kernel)
    assert runoff_depth(bounds.MAX_PRECIP_IN, 80.0, kernel=kernel) == pytest.approx((200.0 - 0.5) ** 2 / (200.0 - 0.5 + 2.5))  # S = 2.5 in


def test_graphical_peak_precipitation_and_tc_bounded():
    with pytest.raises(InputError, match=r"precip_in must be in \[0, 200\] in"):
        graphical_peak_discharge(1.0, 80.0, 1e308, 1.0)
    with pytest.raises(InputError, match=r"tc_hr must be in \(0, 240\] h"):
        graphical_peak_discharge(1.0, 80.0, 2.0, 1e9)


def test_retention_and_abstraction_overflow_is_refused():
    with pytest.raises(InputError, match=r"S = 1000/CN - 10 is not a finite number \(inf\) for cn = 4.94066e-324"):
        potential_retention_in(5e-324)
    with pytest.raises(InputError, match=r"Ia = ia_ratio x S is not a finite number"):
        initial_abstraction_in(80.0, 1e308)
    assert math.isfinite(potential_retention_in(1e-300))


def test_shared_checks():
    check_steps, check_count, check_finite_result = checks.check_steps, checks.check_count, checks.check_finite_result
    MAX_BATCH_VALUES = checks.MAX_BATCH_VALUES
    assert check_steps(10.0, "x", "y") == 10
    with pytest.raises(InputError, match=r"x would need infinitely many time steps \(y\); allowed: at most 1,000,000"):
        check_steps(math.inf, "x", "y")
    with pytest.raises(InputError, match="infinitely many"):
        check_steps(math.nan, "x", "y")
    with pytest.raises(InputError, match=f"at most {MAX_BATCH_VALUES:,}"):
        check_steps(MAX_BATCH_VALUES + 1, "x", "y", limit=MAX_BATCH_VALUES, unit="values")
    np.testing.assert_array_equal(check_count("count", [0, 3]), [0.0, 3.0])
    with pytest.raises(InputError, match=r"count must be a whole number >= 0 \(a count\), got 2.5"):
        check_count("count", 2.5)
    with pytest.raises(InputError, match=r"count must be in \[0, 10\]"):
        check_count("count", 11, 10)
    with pytest.raises(InputError, match=r"q is not a finite number \(nan at index \(1,\)\) for P = 1"):
        check_finite_result("q", [1.0, math.nan], "P = 1")
