"""Rainfall-derived infiltration and inflow (RDII): RTK unit hydrographs, sump pumps and roof leaders.

Pure array math on a rainfall given as (start of each interval [hr], depth [in]); no model files,
no SWMM. Reading the ``[RDII]`` and ``[HYDROGRAPHS]`` sections of a model and writing the sources
into it is :mod:`capacitysim.network.scenario`'s part.

The module imports only numpy at load time; the TR-55 core (numba, xarray) is imported when a roof
is computed, so a model scenario that uses no roof does not pay for it.

References
----------
.. [1] Rossman, L.A. (2016). SWMM Reference Manual Vol. I Hydrology, EPA/600/R-15/162A, sec. 10
   (RDII: the RTK triangular unit hydrographs, peak at T, recession K T, volume R x rainfall x area).
.. [2] Rossman, L.A. (2022). SWMM 5.2 User's Manual, EPA/600/R-22/030, Appendix D: [RDII] (sewer area
   times the RTK unit hydrograph), [HYDROGRAPHS] (R, T, K per response), [TIMESERIES] (values
   interpolated linearly in time).
.. [3] Binghamton-Johnson City Joint Sewage Board, I/I Offset Program (effective 2013-01-01), Table
   174-19.2 (printed "Table 174-19-2", Inflow Guidelines: sump pumps 5 gpm each, note 1 "over a
   twenty-four-hour-per-day period"; roof drains by TR-55) and Table 174-19.3 (curve numbers).
.. [4] USDA SCS (1986), Urban Hydrology for Small Watersheds, TR-55, 2nd ed., Chapter 2 (eq. 2-1 to
   2-4; Table 2-2a, "Impervious areas: paved parking lots, roofs, driveways, etc.": CN 98 in every
   hydrologic soil group) and Chapter 3 ("Limitations": the minimum Tc used is 0.1 hr).
.. [5] USDA NRCS (2007), National Engineering Handbook Part 630, Chapter 16 (SCS dimensionless unit
   hydrograph).
.. [6] USEPA Stormwater Management Model 5.2, ``src/solver/rdii.c`` (``applyIA``: initial abstraction
   used and recovered per rainfall step; ``getUnitHydConvol``/``getUnitHydOrd``: the triangle sampled
   at the middle of each step), github.com/USEPA/Stormwater-Management-Model.
"""

from __future__ import annotations

import numpy as np

from capacitysim.errors import InputError
from capacitysim.units import (
    CFS_PER_ACRE_INCH_PER_HOUR,
    GPM_PER_CFS,
    INCHES_PER_FOOT,
    MINUTES_PER_HOUR,
    SECONDS_PER_HOUR,
    SQFT_PER_SQMI,
)

# --- parameters ---------------------------------------------------------------------------------
#: TR-55 Table 2-2a [4]_ (repeated in Table 174-19.3 [3]_), "Impervious areas: paved parking lots,
#: roofs, driveways, etc.": CN 98 in every hydrologic soil group [-].
ROOF_CN = 98.0
#: TR-55 (1986) ch. 3, "Limitations": the minimum time of concentration used is 0.1 hr [4]_ [hr].
ROOF_TC_HR = 0.1

# --- computation settings (program choices, not values of a reference) --------------------------
#: Step of the RTK convolution [hr] (3 min; the rainfall interval when that is shorter).
RTK_STEP_HR = 0.05
#: Hours computed after the last rainfall interval [hr], for the recession of the slow responses
#: (the base of a response is T (1 + K)).
RTK_TAIL_HR = 200.0
#: Interval given to a rainfall of a single value [hr] (no second time to take it from).
SINGLE_INTERVAL_HR = 1.0
#: Sump pumps are switched on over this ramp at the start of the rain [hr]: a [TIMESERIES] is
#: interpolated linearly [2]_, so one minute makes the step explicit and costs 0.5 min of flow.
SUMP_RAMP_HR = 1.0 / MINUTES_PER_HOUR
#: Tolerance of time comparisons on the computation grid [hr] (floating-point round-off).
_TIME_TOL_HR = 1e-9


def rtk_hydrograph_cfs(rtk, area_ac: float, rain_t_hr, rain_in, dt_hr: float = RTK_STEP_HR,
                       tail_hr: float = RTK_TAIL_HR) -> np.ndarray:
    """RDII [cfs] of ``area_ac`` acres under a rainfall, by the RTK triangular unit hydrographs [1]_.

    Each response r is a triangle rising to its peak at T_r and falling back to 0 at T_r (1 + K_r),
    holding R_r of the rainfall volume [1]_; the responses add. Initial abstraction (Dmax) is not
    modelled.

    Parameters
    ----------
    rtk : sequence of (float, float, float)
        One (R [-], T [hr], K [-]) triple per response (short, medium, long term) [2]_. Responses
        with R <= 0 or T <= 0 are skipped.
    area_ac : float
        Sewershed area [ac].
    rain_t_hr, rain_in : array_like
        Start of each rainfall interval [hr] and its depth [in] (uniform intervals; a single value
        is taken as :data:`SINGLE_INTERVAL_HR` long).
    dt_hr : float
        Computation step [hr] (the rainfall interval when smaller).
    tail_hr : float
        Hours computed after the last rainfall interval [hr].

    Returns
    -------
    numpy.ndarray
        Flow [cfs] on a uniform grid of ``dt_hr`` from time 0; its volume is
        sum(R) x rainfall x area (1 ac-in/hr = :data:`~capacitysim.units.CFS_PER_ACRE_INCH_PER_HOUR` cfs).

    References
    ----------
    See [1]_ and [2]_ of the module.
    """
    rain_t_hr = np.asarray(rain_t_hr, float)
    rain_in = np.asarray(rain_in, float)
    interval = float(np.min(np.diff(rain_t_hr))) if len(rain_t_hr) > 1 else SINGLE_INTERVAL_HR
    dt = min(dt_hr, interval)
    grid = np.arange(0.0, float(rain_t_hr[-1]) + interval + tail_hr, dt)
    intensity = np.zeros_like(grid)
    for t0, d in zip(rain_t_hr, rain_in):
        mask = (grid >= t0 - _TIME_TOL_HR) & (grid < t0 + interval - _TIME_TOL_HR)
        if mask.any():
            intensity[mask] += d / (mask.sum() * dt)
    total = np.zeros_like(grid)
    for R, T, K in rtk:
        if R <= 0 or T <= 0:
            continue
        u = rtk_kernel(T, K, dt)
        total += R * area_ac * np.convolve(intensity, u * dt)[: len(grid)]
    return total * CFS_PER_ACRE_INCH_PER_HOUR


def rtk_kernel(T: float, K: float, dt_hr: float) -> np.ndarray:
    """One RTK triangle [1/hr] sampled at the middle of each step, scaled to unit area [1]_.

    The ordinate of step i (i = 0, 1, ...) is the triangle at (i + 1/2) dt: rising to its peak at
    T, falling to 0 at T (1 + K); the samples are scaled so that their sum times ``dt_hr`` is 1
    (the response then holds exactly R of the rain). :func:`rtk_hydrograph_cfs` and
    :func:`rtk_convolve_steps` use it.

    Parameters
    ----------
    T : float
        Time to peak [hr] (> 0).
    K : float
        Ratio of the recession time to T [-] (>= 0).
    dt_hr : float
        Step [hr].

    Returns
    -------
    numpy.ndarray
        The ordinates [1/hr], ceil(T (1 + K) / dt) + 1 of them (the last ones 0).

    References
    ----------
    See [1]_ of the module (SWMM's ``getUnitHydOrd`` samples the triangle at the middle of each
    rainfall interval the same way; it does not rescale to unit area).
    """
    dt = dt_hr
    tb = T * (1.0 + K)
    tt = np.arange(0.0, tb + dt, dt) + dt / 2
    u = np.where(tt <= T, tt / T, np.clip((tb - tt) / (tb - T), 0, None))
    return u / (u.sum() * dt)  # unit area [1/hr]


def initial_abstraction_excess(depth_in, dt_hr: float, dmax_in: float, drec_in_per_day: float,
                               d0_in: float) -> np.ndarray:
    """Rain left after the initial abstraction of one RTK response, step by step [in] (the module's references [2] and [6]).

    SWMM 5.2's ``applyIA`` (rdii.c) on each rainfall step: the unused abstraction is
    max(Dmax - used, 0); a step with rain loses up to that much and the loss is added to the
    abstraction used; a step without rain recovers Drec x dt / 24 of it (the used amount never
    below 0). The used amount starts at Do. In a run of wet steps the losses are the cumulative
    rain capped at the unused abstraction at the run's start, so the record is processed run by run.

    Parameters
    ----------
    depth_in : array_like
        Rain depth of each step [in] (>= 0, finite; 0 is a dry step).
    dt_hr : float
        Step [hr].
    dmax_in : float
        Dmax, the maximum initial abstraction depth [in] (0: no abstraction).
    drec_in_per_day : float
        Drec, the rate at which used abstraction is recovered during dry steps [in/day].
    d0_in : float
        Do, the abstraction already used at the start [in].

    Returns
    -------
    numpy.ndarray
        The depth of each step after the abstraction [in] (same length as ``depth_in``).

    References
    ----------
    See [2]_ ([HYDROGRAPHS]: Dmax, Drecov, Dinit) and [6]_ (``applyIA``) of the module.
    """
    d = np.asarray(depth_in, float)
    if dmax_in <= 0:
        return d.copy()
    out = d.copy()
    used = float(d0_in)
    wet = d > 0
    edges = np.flatnonzero(np.diff(wet.astype(np.int8))) + 1
    starts = np.concatenate([[0], edges])
    ends = np.concatenate([edges, [d.size]])
    for a, b in zip(starts, ends):
        if a >= b:
            continue
        if wet[a]:
            avail = max(dmax_in - used, 0.0)
            if avail > 0:
                lost = np.minimum(np.cumsum(d[a:b]), avail)
                out[a:b] = d[a:b] - np.diff(lost, prepend=0.0)
                used += float(lost[-1])
        else:
            used = max(used - (b - a) * dt_hr / 24.0 * drec_in_per_day, 0.0)
    return np.clip(out, 0.0, None)


def rtk_convolve_steps(intensity, T: float, K: float, dt_hr: float) -> np.ndarray:
    """The convolution of rain intensities with one RTK triangle, for a batch of records [in/hr].

    The same sum as :func:`rtk_hydrograph_cfs` (row i of the result: sum over j <= i of
    ``intensity[j] x kernel[i - j] x dt`` with :func:`rtk_kernel`), evaluated by FFT over all the
    rows at once (round-off about 1e-15 of the peak apart), for fitting RTK sets to many events.

    Parameters
    ----------
    intensity : array_like
        Rain intensity of each step [in/hr] (excess, after any abstraction), 1-D or 2-D (records x
        steps, the records padded with zeros to one length).
    T, K : float
        The response's time to peak [hr] and recession ratio [-].
    dt_hr : float
        Step [hr].

    Returns
    -------
    numpy.ndarray
        The response per unit R [in/hr of rain over the area], same shape as ``intensity``.

    References
    ----------
    See [1]_ of the module.
    """
    from scipy import fft

    x = np.asarray(intensity, float)
    n = x.shape[-1]
    u = rtk_kernel(T, K, dt_hr)[:n] * dt_hr
    nfft = fft.next_fast_len(n + u.size - 1, real=True)
    y = fft.irfft(fft.rfft(x, nfft, axis=-1) * fft.rfft(u, nfft), nfft, axis=-1)[..., :n]
    return y


def rtk_peak_cfs(responses, rain_t_hr, rain_in) -> float:
    """Peak [cfs] of the summed RDII of several sewer areas under one rainfall [1]_.

    Parameters
    ----------
    responses : iterable of (rtk, float)
        For each unit hydrograph: its (R [-], T [hr], K [-]) triples (see :func:`rtk_hydrograph_cfs`)
        and the sewer area it applies to [ac].
    rain_t_hr, rain_in : array_like
        Start of each rainfall interval [hr] and its depth [in].

    Returns
    -------
    float
        The largest value of the sum of the hydrographs [cfs]; 0 when ``responses`` is empty.

    References
    ----------
    See [1]_ of the module. Without initial abstraction the peak is slightly high.
    """
    total = None
    for rtk, area_ac in responses:
        q = rtk_hydrograph_cfs(rtk, area_ac, rain_t_hr, rain_in)
        total = q if total is None else total + q
    return 0.0 if total is None else float(total.max())


def rain_on_uniform_grid(rain_t_hr, rain_in) -> tuple[float, np.ndarray, float]:
    """A rainfall on a uniform grid of its shortest interval.

    Parameters
    ----------
    rain_t_hr, rain_in : array_like
        Start of each rainfall interval [hr] (distinct times, in any order) and its depth [in].
        Intervals missing between them are dry.

    Returns
    -------
    (float, numpy.ndarray, float)
        Start of the first interval [hr], the depth of each interval from it [in], the interval [hr]
        (:data:`SINGLE_INTERVAL_HR` for a single value).

    Raises
    ------
    capacitysim.errors.InputError
        No interval, or no rain.
    """
    t = np.asarray(rain_t_hr, float)
    d = np.asarray(rain_in, float)
    if t.size == 0 or not np.nansum(d) > 0:
        raise InputError("rainfall: no interval with rain (give the start of each interval [hr] and its depth [in])")
    order = np.argsort(t)
    t, d = t[order], d[order]
    interval = float(np.min(np.diff(t))) if t.size > 1 else SINGLE_INTERVAL_HR
    k = np.rint((t - t[0]) / interval).astype(int)
    grid = np.zeros(int(k.max()) + 1)
    np.add.at(grid, k, d)
    return float(t[0]), grid, interval


def inflow_sources_cfs(sump_pumps: float, sump_pump_gpm: float, roof_area_sqft: float, roof_cn: float,
                       roof_tc_hr: float, rain_t_hr, rain_in, end_hr: float) -> tuple[np.ndarray, np.ndarray, dict]:
    """Total flow [cfs] of sump pumps and roof leaders over time [hr, on the clock of ``rain_t_hr``].

    Parameters
    ----------
    sump_pumps : float
        Number of sump pumps [-] (0 for none).
    sump_pump_gpm : float
        Flow of one sump pump [gpm] (Table 174-19.2, module reference 3: 5 gpm).
    roof_area_sqft : float
        Roof area drained by the leaders [ft^2] (0 for none).
    roof_cn : float
        Curve number of the roof [-] (:data:`ROOF_CN`).
    roof_tc_hr : float
        Time of concentration of the roof [hr] (:data:`ROOF_TC_HR`).
    rain_t_hr, rain_in : array_like
        Start of each rainfall interval [hr] and its depth [in].
    end_hr : float
        End of the simulation [hr]; the sump pumps run until then.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray, dict)
        ``time_hr``, ``flow_cfs`` and a record. The series is piecewise linear (as SWMM interpolates
        a [TIMESERIES], module reference 2): the sump pumps ``N x gpm / GPM_PER_CFS`` [cfs] from the first interval
        with rain (after the :data:`SUMP_RAMP_HR` ramp) to ``end_hr``, running around the clock
        while the groundwater is high (Table 174-19.2 note 1, module reference 3); the roof runoff by the SCS unit
        hydrograph on TR-55 CN excess (module references 4, 5), each step's mean flow placed at the middle of the
        step. The record holds the inputs and the volumes [ft^3]: of the series as written and,
        for the roof, TR-55's Q(P, CN) x area.

    Raises
    ------
    capacitysim.errors.InputError
        Neither sump pumps nor a roof; no rain; the rain starts at or after ``end_hr``; the roof
        runoff lasts past ``end_hr``.

    References
    ----------
    See references 2 to 5 of the module.
    """
    if not (sump_pumps > 0 or roof_area_sqft > 0):
        raise InputError("sump pump / roof leader sources: give sump_pumps > 0 and/or a roof area > 0")
    t0, grid, dt = rain_on_uniform_grid(rain_t_hr, rain_in)
    rec = {"sump_pumps": sump_pumps, "sump_pump_gpm": sump_pump_gpm, "roof_area_sqft": roof_area_sqft,
           "roof_cn": roof_cn, "roof_tc_hr": roof_tc_hr}
    pieces = []
    if sump_pumps > 0:
        wet = np.flatnonzero(grid > 0)
        on = t0 + float(wet[0]) * dt if wet.size else 0.0
        if on + SUMP_RAMP_HR >= end_hr:
            raise InputError(f"sump pumps: the rain starts at {on:g} h, at or after the end of the simulation ({end_hr:g} h)")
        q = sump_pumps * sump_pump_gpm / GPM_PER_CFS
        pieces.append((np.array([on, on + SUMP_RAMP_HR, end_hr]), np.array([0.0, q, q])))
        rec.update({"sump_flow_cfs": q, "sump_on_hr": on, "sump_off_hr": end_hr,
                    "sump_volume_cf": q * (end_hr - on - SUMP_RAMP_HR / 2) * SECONDS_PER_HOUR})
    if roof_area_sqft > 0:
        from capacitysim.xarray_setup import xr

        from capacitysim.hydrology.runoff import runoff_depth
        from capacitysim.hydrology.unit_hydrograph import unit_hydrograph_runoff

        storm = xr.DataArray(grid, dims="time_hr", coords={"time_hr": dt * np.arange(1, grid.size + 1)}, name="precip_in")
        hyd = unit_hydrograph_runoff(roof_area_sqft / SQFT_PER_SQMI, roof_cn, roof_tc_hr, storm)
        mid = t0 + hyd.time_hr.values - dt / 2
        t = np.concatenate([[mid[0] - dt / 2], mid, [mid[-1] + dt / 2]])
        f = np.concatenate([[0.0], hyd.values, [0.0]])
        if t[-1] > end_hr:
            raise InputError(f"roof leaders: the runoff lasts until {t[-1]:.1f} h, after the end of the simulation ({end_hr:g} h)")
        pieces.append((t, f))
        q_in = float(runoff_depth(float(grid.sum()), roof_cn))
        rec.update({"roof_peak_cfs": float(hyd.max()), "roof_volume_cf": float(np.trapezoid(f, t * SECONDS_PER_HOUR)),
                    "roof_tr55_runoff_in": q_in, "roof_tr55_volume_cf": q_in * roof_area_sqft / INCHES_PER_FOOT})
    times = np.unique(np.concatenate([p[0] for p in pieces]))
    flow = sum(np.interp(times, pt, pf, left=0.0, right=0.0) for pt, pf in pieces)
    rec["volume_cf"] = float(np.trapezoid(flow, times * SECONDS_PER_HOUR))
    return times, flow, rec
