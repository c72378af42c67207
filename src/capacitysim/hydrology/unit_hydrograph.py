"""SCS (NRCS) dimensionless unit hydrograph applied to the curve-number excess of a storm.

The runoff hydrographs of n subcatchments are one batched convolution (FFT along time), not a
Python loop over subcatchments.

References
----------
.. [1] USDA NRCS (2007), National Engineering Handbook Part 630, Chapter 16, Hydrographs:
   Table 16-1 (dimensionless unit hydrograph and mass curve), eq. 16-1 to 16-6 (qp = 484 A Q / Tp,
   Tp = D/2 + L), and the gamma-function form of the dimensionless unit hydrograph for other
   peak rate factors.
.. [2] USDA NRCS (2010), NEH Part 630, Chapter 15, Time of Concentration: lag L = 0.6 Tc.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import scipy.fft
import scipy.optimize
import scipy.special

from capacitysim.checks import MAX_BATCH_VALUES, check_finite_result, check_range, check_steps
from capacitysim.errors import InputError
from capacitysim.hydrology import tables
from capacitysim.hydrology._inputs import MAX_AREA_MI2, MAX_PRECIP_IN, MAX_TC_HR, broadcast_shape
from capacitysim.hydrology.rainfall import storm_step_hr
from capacitysim.hydrology.runoff import PERCENT, runoff_depth
from capacitysim.units import CUBIC_FEET_PER_SQMI_INCH, MINUTES_PER_HOUR, SECONDS_PER_HOUR
from capacitysim.xarray_setup import xr

#: NEH 630 ch. 15: lag L = 0.6 Tc.
LAG_OVER_TC = 0.6
#: The standard peak rate factor of the SCS dimensionless unit hydrograph (NEH 630 ch. 16).
STANDARD_PEAK_RATE_FACTOR = 484.0
#: The gamma form is cut where all but this fraction of its volume has passed; the mass curve is
#: rescaled to end at 1, so volume stays exact and no ordinate carries the cut tail [-].
_GAMMA_TAIL_FRACTION = 1e-6
#: Table 16-1 ends at t/Tp = 5.
_TABLE_SPAN_TP = 5.0
#: cfs of 1 in of runoff per hour from 1 mi2: the constant behind the peak rate factor (645.33).
_PRF_UNIT = CUBIC_FEET_PER_SQMI_INCH / SECONDS_PER_HOUR


@lru_cache(maxsize=64)
def _gamma_shape(peak_rate_factor: float) -> float:
    """Shape m of the gamma unit hydrograph q/qp = (t/Tp)^m exp(m (1 - t/Tp)) for a peak rate factor.

    The volume condition gives PRF = 645.33 m^(m+1) / (e^m Gamma(m+1)) (NEH 630 ch. 16).
    """

    def prf(m):
        return _PRF_UNIT * np.exp((m + 1) * np.log(m) - m - scipy.special.gammaln(m + 1)) - peak_rate_factor

    return float(scipy.optimize.brentq(prf, 1e-3, 200.0, xtol=1e-12))


def unit_hydrograph_span_tp(peak_rate_factor=STANDARD_PEAK_RATE_FACTOR) -> float:
    """Length of the dimensionless unit hydrograph [t/Tp]: where its mass curve reaches 1.

    Table 16-1 (PRF 484) ends at t/Tp = 5. The gamma form never ends; it is cut where all but
    ``_GAMMA_TAIL_FRACTION`` of the volume has passed: about 4.8 Tp at PRF 600, 12 Tp at 300 and
    57 Tp at 100 (low peak rate factors have long recessions).

    Parameters
    ----------
    peak_rate_factor : float
        Peak rate factor PRF [cfs h / (mi2 in)].

    Returns
    -------
    float
        Span [t/Tp].

    References
    ----------
    NEH 630 (2007), Chapter 16, Table 16-1 and the gamma equation of the dimensionless unit hydrograph.
    """
    if peak_rate_factor == STANDARD_PEAK_RATE_FACTOR:
        return _TABLE_SPAN_TP
    m = _gamma_shape(float(peak_rate_factor))
    return float(scipy.special.gammaincinv(m + 1.0, 1.0 - _GAMMA_TAIL_FRACTION) / m)


def unit_hydrograph_mass_fraction(t_over_tp, peak_rate_factor=STANDARD_PEAK_RATE_FACTOR):
    """Mass curve of the dimensionless unit hydrograph: fraction of the volume passed by t/Tp [-].

    For the standard peak rate factor 484 this interpolates NEH 630 ch. 16 Table 16-1; for other
    factors it is the gamma-distribution form, gammainc(m + 1, m t/Tp).

    References
    ----------
    NEH 630 (2007), Chapter 16, Table 16-1 and the gamma equation of the dimensionless unit hydrograph.
    """
    x = np.asarray(t_over_tp, dtype=float)
    if peak_rate_factor == STANDARD_PEAK_RATE_FACTOR:
        t_tab, _, m_tab = tables.dimensionless_unit_hydrograph()
        return np.interp(x, t_tab, m_tab, left=0.0, right=1.0)
    m = _gamma_shape(float(peak_rate_factor))
    return scipy.special.gammainc(m + 1.0, m * np.clip(x, 0.0, None))


def time_to_peak_hr(tc_hr, dt_hr):
    """Time to peak of the unit hydrograph, Tp = D/2 + L with lag L = 0.6 Tc [h].

    Parameters
    ----------
    tc_hr : array_like
        Time of concentration Tc [h].
    dt_hr : float
        Unit duration D [h]: the step of the rainfall excess.

    Returns
    -------
    numpy.ndarray
        Tp [h].

    References
    ----------
    NEH 630 (2007), Chapter 16, Tp = D/2 + L; NEH 630 (2010), Chapter 15, L = 0.6 Tc.
    """
    return dt_hr / 2.0 + LAG_OVER_TC * np.asarray(tc_hr, dtype=float)


def unit_hydrograph_runoff(area_mi2, cn, tc_hr, storm: xr.DataArray, peak_rate_factor=STANDARD_PEAK_RATE_FACTOR):
    r"""Runoff hydrograph of one or many subcatchments by the SCS unit hydrograph [cfs].

    The storm's cumulative rainfall gives the cumulative curve-number runoff (TR-55 eq. 2-3), whose
    increments (the excess of each step of length D) are convolved with the unit hydrograph of
    each subcatchment. Unit hydrograph ordinates are step averages of the dimensionless mass curve
    (NEH 630 Table 16-1), so runoff volume is conserved exactly; the instantaneous peak of a single
    excess approaches :math:`q_p = \mathrm{PRF}\, A Q / T_p`. Each returned value is the mean flow
    over the step ending at its ``time_hr``, so with a step D that is long against Tp the peak is
    smoothed: NEH 630 ch. 16 takes D near 0.133 Tc and no more than 0.25 Tp (use a finer storm
    step for small, fast subcatchments).

    Parameters
    ----------
    area_mi2 : float or array_like, shape (n,)
        Drainage areas A [mi2], in (0, 10,000] (:data:`~capacitysim.hydrology._inputs.MAX_AREA_MI2`).
    cn : float or array_like, shape (n,)
        Curve numbers [-], in (0, 100].
    tc_hr : float or array_like, shape (n,)
        Times of concentration [h], in (0, 240] (:data:`~capacitysim.hydrology._inputs.MAX_TC_HR`).
    storm : xarray.DataArray
        Incremental rainfall [in] over a uniform ``time_hr`` coordinate (end of each step), as
        returned by :func:`~capacitysim.hydrology.design_storm`; at most 200 in in all.
    peak_rate_factor : float, default 484
        Peak rate factor PRF [cfs h / (mi2 in)], in (100, 600]; 484 uses Table 16-1 exactly,
        others the gamma form.

    Returns
    -------
    xarray.DataArray
        ``flow_cfs`` [cfs] over ``time_hr`` (end of each step [h]), extended past the storm until
        the recession ends; with array inputs of length n, dimensions (``subcatchment``, ``time_hr``).

    Raises
    ------
    InputError
        For inputs out of range, and before allocating when the hydrograph would be longer than
        :data:`~capacitysim.checks.MAX_TIME_STEPS` steps (the span of the unit hydrograph is about
        5 Tp over the storm step: Tc of 1e9 h asks for 10^11 steps) or hold more than
        :data:`~capacitysim.checks.MAX_BATCH_VALUES` values (subcatchments x steps).

    References
    ----------
    NEH 630 (2007), Chapter 16, Table 16-1, eq. 16-1 to 16-6; NEH 630 ch. 15 (L = 0.6 Tc);
    TR-55 (1986), Chapter 2, eq. 2-3.
    """
    area = check_range("area_mi2", area_mi2, 0.0, MAX_AREA_MI2, low_inclusive=False, unit="mi2")
    cn_arr = check_range("cn", cn, 0.0, PERCENT, low_inclusive=False)
    tc = check_range("tc_hr", tc_hr, 0.0, MAX_TC_HR, low_inclusive=False, unit="h")
    prf = float(check_range("peak_rate_factor", peak_rate_factor, 100.0, 600.0, low_inclusive=False))
    if not isinstance(storm, xr.DataArray):
        raise InputError("storm must be an xarray.DataArray over time_hr (see design_storm)")
    if storm.ndim != 1:
        raise InputError(f"storm must be one hyetograph over time_hr; got dimensions {storm.dims}")
    dt_hr = storm_step_hr(storm)
    rain = check_range("storm", storm.values, 0.0, unit="in")
    total_in = float(rain.sum())
    if not total_in <= MAX_PRECIP_IN:
        raise InputError(f"storm must hold at most {MAX_PRECIP_IN:g} in of rain in all; got {total_in:g} in")
    scalar = area.ndim == 0 and cn_arr.ndim == 0 and tc.ndim == 0
    broadcast_shape(area_mi2=area, cn=cn_arr, tc_hr=tc)
    area, cn_arr, tc = (np.atleast_1d(a) for a in np.broadcast_arrays(area, cn_arr, tc))
    if area.ndim != 1:
        raise InputError("area_mi2, cn and tc_hr must be scalars or 1-D arrays of subcatchments")

    # Sizes before allocating anything: a Tc of 1e9 h would ask for 10^11 steps (hundreds of GiB).
    tp = time_to_peak_hr(tc, dt_hr)
    span = unit_hydrograph_span_tp(prf)
    n_t = rain.size
    with np.errstate(over="ignore"):
        n_uh_f = np.ceil(span * tp.max() / dt_hr) + 1.0
    drivers = f"tc_hr up to {tc.max():g} h, storm step {dt_hr * MINUTES_PER_HOUR:g} min, peak_rate_factor {prf:g}"
    check_steps(n_t + n_uh_f - 1.0, "the hydrograph", drivers)
    n_uh = int(n_uh_f)
    check_steps(area.size * scipy.fft.next_fast_len(n_t + n_uh - 1, real=True), "the hydrographs",
                f"{area.size:,} subcatchments x {n_t + n_uh - 1:,} steps; {drivers}", limit=MAX_BATCH_VALUES,
                unit="values", hint="fewer subcatchments per call")

    # Excess per step: increments of the cumulative CN runoff of the cumulative rainfall.
    cum_p = np.concatenate(([0.0], np.cumsum(rain)))
    cum_q = np.asarray(runoff_depth(cum_p[None, :], cn_arr[:, None]))
    excess = np.diff(cum_q, axis=1)  # (n, T) [in]

    # Unit hydrograph ordinates [cfs per in of excess]: step averages of the mass curve.
    edges = np.arange(n_uh + 1) * dt_hr
    mass = unit_hydrograph_mass_fraction(edges[None, :] / tp[:, None], prf)
    mass /= mass[:, -1:]  # the whole unit volume leaves within the span (a gamma tail of 1e-6 spread, not lumped)
    volume_cf = area * CUBIC_FEET_PER_SQMI_INCH  # ft3 per inch of excess
    uh = np.diff(mass, axis=1) * (volume_cf / (dt_hr * SECONDS_PER_HOUR))[:, None]

    n_out = n_t + n_uh - 1
    n_fft = scipy.fft.next_fast_len(n_out, real=True)
    flow = scipy.fft.irfft(scipy.fft.rfft(excess, n_fft, axis=1) * scipy.fft.rfft(uh, n_fft, axis=1), n_fft, axis=1)
    flow = np.clip(flow[:, :n_out], 0.0, None)  # FFT round-off only
    check_finite_result("flow_cfs", flow, drivers + f", area_mi2 up to {area.max():g}")

    t0 = float(storm["time_hr"].values[0]) - dt_hr
    time_hr = t0 + dt_hr * np.arange(1, n_out + 1)
    attrs = {
        "units": "cfs",
        "long_name": "runoff hydrograph",
        "method": "SCS dimensionless unit hydrograph (NEH 630 ch. 16) on TR-55 CN excess",
        "peak_rate_factor": prf,
        "dt_hr": dt_hr,
    }
    if scalar:
        return xr.DataArray(flow[0], dims=("time_hr",), coords={"time_hr": time_hr}, name="flow_cfs", attrs=attrs)
    return xr.DataArray(
        flow,
        dims=("subcatchment", "time_hr"),
        coords={"time_hr": time_hr, "subcatchment": np.arange(area.size)},
        name="flow_cfs",
        attrs=attrs,
    )
