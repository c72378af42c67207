"""NRCS 24-hour design storms (NEH 630 ch. 4, TR-55 Appendix B)."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from capacitysim.errors import InputError
from capacitysim.hydrology import cumulative_fraction, design_storm
from capacitysim.hydrology import tables


@pytest.mark.parametrize("dist", ["I", "IA", "II", "III"])
def test_distributions_are_monotone_from_0_to_1(dist):
    hours, frac = tables.rainfall_distribution(dist)
    assert hours.size == 241 and hours[0] == 0.0 and hours[-1] == 24.0
    assert frac[0] == 0.0 and frac[-1] == pytest.approx(1.0, abs=1e-9)
    assert np.all(np.diff(frac) >= 0)


@pytest.mark.parametrize(
    "dist, hour, expected",
    [
        # Published ordinates of the NRCS distributions (TR-55 Appendix B; NEH 630 ch. 4):
        # Type II and III are centred on 12 h (III symmetric: 0.500), Type II has 0.663 at 12 h.
        ("II", 12.0, 0.663),
        ("III", 12.0, 0.500),
        ("II", 24.0, 1.000),
    ],
)
def test_published_ordinates(dist, hour, expected):
    assert cumulative_fraction(hour, dist) == pytest.approx(expected, abs=5e-4)


def test_type_ii_peak_is_just_before_noon():
    storm = design_storm(2.1, "II")
    assert float(storm["time_hr"][int(np.argmax(storm.values))]) == pytest.approx(11.9)
    # Type II's steepest 6 minutes: 11.8-11.9 h carry 0.5679 - 0.4308 of the depth.
    assert float(storm.max()) == pytest.approx(2.1 * (0.5679 - 0.4308), rel=1e-9)


@pytest.mark.parametrize("dt_min", [1.0, 5.0, 6.0, 15.0, 60.0])
@pytest.mark.parametrize("dist", ["I", "IA", "II", "III"])
def test_storm_depth_is_conserved_for_any_step(dist, dt_min):
    storm = design_storm(2.1, dist, dt_min=dt_min)
    assert isinstance(storm, xr.DataArray)
    assert storm.dims == ("time_hr",)
    assert storm.size == int(24 * 60 / dt_min)
    assert float(storm["time_hr"][0]) == pytest.approx(dt_min / 60)
    assert float(storm["time_hr"][-1]) == pytest.approx(24.0)
    assert float(storm.sum()) == pytest.approx(2.1, rel=1e-12)
    assert float(storm.min()) >= 0.0
    assert storm.attrs["units"] == "in"


def test_storm_array_of_depths():
    storm = design_storm(np.array([1.0, 2.1, 3.0]))
    assert storm.dims == ("storm", "time_hr")
    np.testing.assert_allclose(storm.sum("time_hr"), [1.0, 2.1, 3.0])


def test_finer_step_agrees_with_tabulation_at_shared_times():
    coarse = design_storm(2.1, "II", dt_min=6.0).cumsum("time_hr")
    fine = design_storm(2.1, "II", dt_min=1.0).cumsum("time_hr")
    np.testing.assert_allclose(fine.sel(time_hr=coarse["time_hr"], method="nearest"), coarse, atol=1e-12)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(depth_in=-1.0), "depth_in must be in"),
        (dict(depth_in=float("nan")), "depth_in must not be NaN"),
        (dict(depth_in=2.0, distribution="V"), "distribution must be one of I, IA, II, III"),
        (dict(depth_in=2.0, dt_min=7.0), "dt_min must divide"),
        (dict(depth_in=2.0, dt_min=0.0), "dt_min must be in"),
        (dict(depth_in=2.0, duration_hr=6.0), "duration_hr must be 24"),
    ],
)
def test_bad_storm_input(kwargs, match):
    with pytest.raises(InputError, match=match):
        design_storm(**kwargs)


def test_distribution_names_are_forgiving():
    assert float(design_storm(1.0, "type ii").sum()) == pytest.approx(1.0)


def test_intensity_order_of_the_four_types():
    """TR-55 Appendix B: "Type IA is the least intense and type II the most intense short duration
    rainfall"; the Pacific types peak earliest (IA near 8 h, I near 10 h), II and III near noon."""
    peak = {d: design_storm(1.0, d) for d in ("I", "IA", "II", "III")}
    top = {d: float(s.max()) for d, s in peak.items()}
    assert top["IA"] < top["I"] < top["III"] < top["II"]
    when = {d: float(s["time_hr"][int(np.argmax(s.values))]) for d, s in peak.items()}
    assert 7.5 <= when["IA"] <= 8.5 and 9.5 <= when["I"] <= 10.5
    assert 11.5 <= when["II"] <= 12.0 and 12.0 <= when["III"] <= 12.5
