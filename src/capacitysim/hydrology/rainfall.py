"""NRCS 24-hour design storms: distributions and hyetographs.

References
----------
.. [1] USDA NRCS (2019), National Engineering Handbook Part 630, Chapter 4, Storm Rainfall Depth
   and Distribution (the Type I, IA, II and III 24-hour distributions).
.. [2] USDA SCS (1986), TR-55, Appendix B, Synthetic rainfall distributions and rainfall data
   sources (Figure B-1, Table B-2 for Type I, IA, II and III).
"""

from __future__ import annotations

import numpy as np

from capacitysim.checks import check_range, check_steps
from capacitysim.errors import InputError
from capacitysim.hydrology import tables
from capacitysim.hydrology._inputs import MAX_PRECIP_IN
from capacitysim.units import MINUTES_PER_HOUR
from capacitysim.xarray_setup import xr

#: The NRCS synthetic distributions are defined over 24 hours [h] (NEH 630 ch. 4).
NRCS_DURATION_HR = 24.0
#: Tolerance for time steps that must divide the duration [-].
_STEP_RTOL = 1e-9


def _normalise_distribution(distribution: str) -> str:
    key = str(distribution).strip().upper().removeprefix("TYPE").strip()
    if key not in tables.DISTRIBUTIONS:
        raise InputError(
            f"distribution must be one of I, IA, II, III (NRCS 24-hour types); got {distribution!r}"
        )
    return key


def cumulative_fraction(hours, distribution: str = "II"):
    """Cumulative fraction of the 24-hour depth fallen by time ``hours`` [-].

    Linear interpolation between the 0.1-h NRCS tabulation; 0 before the storm, 1 after.

    Parameters
    ----------
    hours : array_like
        Time from the storm's start [h].
    distribution : {"I", "IA", "II", "III"}
        NRCS rainfall distribution type.

    References
    ----------
    NEH 630 ch. 4 (dimensionless 24-hour distributions); TR-55 Appendix B.
    """
    key = _normalise_distribution(distribution)
    try:
        t_tab, f_tab = tables.rainfall_distribution(key)
    except FileNotFoundError:
        raise InputError(
            f"distribution {key} is not bundled with capacitysim: no public tabulation of the "
            f"NRCS Type {key} 24-hour distribution is shipped"
        ) from None
    h = check_range("hours", hours)
    return np.interp(h, t_tab, f_tab, left=0.0, right=1.0)


def design_storm(depth_in, distribution: str = "II", dt_min: float = 6.0, duration_hr: float = NRCS_DURATION_HR):
    """Incremental rainfall of an NRCS 24-hour design storm.

    Parameters
    ----------
    depth_in : float or array_like
        Total storm depth P [in], in [0, 200] (:data:`~capacitysim.hydrology._inputs.MAX_PRECIP_IN`).
        An array of depths gives one storm per depth along a leading dimension ``storm``.
    distribution : {"I", "IA", "II", "III"}, default "II"
        NRCS rainfall distribution type.
    dt_min : float, default 6
        Time step [min]; must divide the duration into at most
        :data:`~capacitysim.checks.MAX_TIME_STEPS` steps (24 h at 0.00144 min). Steps finer than
        the 6-min tabulation are linearly interpolated from the cumulative curve (so depth is
        conserved exactly).
    duration_hr : float, default 24
        Storm duration [h]. The NRCS distributions are 24-hour storms, so only 24 is accepted.

    Returns
    -------
    xarray.DataArray
        ``precip_in``: incremental depth [in] in each step, dimension and coordinate
        ``time_hr`` (end of each step [h]); the steps sum to ``depth_in``.

    References
    ----------
    NEH 630 ch. 4; TR-55 (1986) Appendix B.
    """
    key, depth, dt_min, duration_hr, edges, values = _design_storm_arrays(depth_in, distribution, dt_min, duration_hr)
    dims = ("time_hr",) if depth.ndim == 0 else tuple(f"storm{'' if i == 0 else i}" for i in range(depth.ndim)) + ("time_hr",)
    coords = {"time_hr": edges[1:]}
    if depth.ndim == 1:
        coords["depth_in"] = ("storm", depth)
    return xr.DataArray(
        values,
        dims=dims,
        coords=coords,
        name="precip_in",
        attrs={
            "units": "in",
            "long_name": "incremental rainfall depth per step",
            "distribution": f"NRCS Type {key}",
            "dt_min": dt_min,
            "duration_hr": duration_hr,
            "source": "NEH 630 ch. 4 / TR-55 Appendix B 24-hour distribution",
        },
    )


def design_storm_depths(depth_in, distribution: str = "II", dt_min: float = 6.0,
                        duration_hr: float = NRCS_DURATION_HR) -> tuple[np.ndarray, np.ndarray]:
    """:func:`design_storm` as plain arrays: (end of each step [h], incremental depth [in]).

    The same numbers without building an xarray object (for callers that only write them out,
    such as a SWMM rain gauge series). References: NEH 630 ch. 4; TR-55 (1986) Appendix B.
    """
    _, _, _, _, edges, values = _design_storm_arrays(depth_in, distribution, dt_min, duration_hr)
    return edges[1:], values


def _design_storm_arrays(depth_in, distribution, dt_min, duration_hr):
    key = _normalise_distribution(distribution)
    depth = check_range("depth_in", depth_in, 0.0, MAX_PRECIP_IN, unit="in")
    dt_min = float(check_range("dt_min", dt_min, 0.0, low_inclusive=False, unit="min"))
    duration_hr = float(check_range("duration_hr", duration_hr, 0.0, low_inclusive=False, unit="h"))
    if abs(duration_hr - NRCS_DURATION_HR) > _STEP_RTOL:
        raise InputError(
            f"duration_hr must be 24 for the NRCS Type {key} distribution (a 24-hour storm); got {duration_hr:g}"
        )
    n_steps = duration_hr * MINUTES_PER_HOUR / dt_min
    # before anything is allocated (and before round(), which fails on inf): a step of 1e-9 min
    # would ask for 1.44 x 10^12 steps
    check_steps(n_steps, "the design storm", f"duration_hr = {duration_hr:g} h at dt_min = {dt_min:g} min",
                hint="a longer dt_min")
    if abs(n_steps - round(n_steps)) > _STEP_RTOL * n_steps or round(n_steps) < 1:
        raise InputError(f"dt_min must divide the {duration_hr:g}-h duration into whole steps; got {dt_min:g} min")
    n_steps = int(round(n_steps))
    dt_hr = dt_min / MINUTES_PER_HOUR
    edges = np.arange(n_steps + 1) * dt_hr
    cum = cumulative_fraction(edges, key)
    cum[-1] = 1.0  # the tabulation ends at exactly 1 at 24 h
    increments = np.diff(cum)
    values = depth[..., None] * increments
    return key, depth, dt_min, duration_hr, edges, values


def storm_step_hr(storm: xr.DataArray) -> float:
    """The uniform time step [h] of a storm DataArray over ``time_hr``; errors if uneven."""
    if "time_hr" not in storm.dims:
        raise InputError(f"storm must have a time_hr dimension; got dimensions {storm.dims}")
    t = np.asarray(storm["time_hr"], dtype=float)
    if not np.all(np.isfinite(t)):
        raise InputError("storm time_hr must be finite numbers of hours")
    if t.size < 2:
        raise InputError("storm must have at least two time steps")
    steps = np.diff(t)
    if np.any(steps <= 0) or np.ptp(steps) > 1e-6 * steps[0]:
        raise InputError("storm time_hr must increase in uniform steps")
    return float(steps[0])
