"""Travel time and time of concentration (TR-55 Chapter 3).

References
----------
.. [1] USDA SCS (1986), TR-55, Chapter 3, equations 3-1 to 3-4, Figure 3-1 and Appendix F
   (equations of the shallow concentrated flow curves), Table 3-1 (Manning's n for sheet flow).
.. [2] USDA NRCS (2010), National Engineering Handbook Part 630, Chapter 15, Time of
   Concentration (sheet flow limited to 100 ft).
"""

from __future__ import annotations

import warnings

import numpy as np

from capacitysim.checks import check_range, scalar_or_array
from capacitysim.errors import CapacitysimWarning, InputError
from capacitysim.hydrology._inputs import broadcast_shape
from capacitysim.units import SECONDS_PER_HOUR

#: TR-55 eq. 3-3 coefficient (Overton and Meadows kinematic solution) [-].
SHEET_FLOW_COEF = 0.007
SHEET_FLOW_N_EXP = 0.8
SHEET_FLOW_P2_EXP = 0.5
SHEET_FLOW_SLOPE_EXP = 0.4
#: Maximum sheet flow length: 300 ft in TR-55 (1986); NEH 630 ch. 15 (2010) limits it to 100 ft.
SHEET_FLOW_MAX_LENGTH_FT = 300.0
SHEET_FLOW_ADVISED_LENGTH_FT = 100.0
#: TR-55 Appendix F: shallow concentrated flow V = 16.1345 s^0.5 (unpaved), 20.3282 s^0.5 (paved) [ft/s].
SHALLOW_UNPAVED_COEF_FPS = 16.1345
SHALLOW_PAVED_COEF_FPS = 20.3282
#: Manning's equation in U.S. units, V = 1.49 r^(2/3) s^(1/2) / n (TR-55 eq. 3-4).
MANNING_US_COEF = 1.49


def sheet_flow_time(n, length_ft, p2_in, slope):
    r"""Travel time of sheet flow [h], TR-55 eq. 3-3.

    .. math:: T_t = \frac{0.007 (n L)^{0.8}}{P_2^{0.5} s^{0.4}}

    Parameters
    ----------
    n : array_like
        Manning's roughness for sheet flow [-] (TR-55 Table 3-1), > 0.
    length_ft : array_like
        Flow length L [ft], in (0, 300]; a warning above 100 ft (NEH 630 ch. 15).
    p2_in : array_like
        2-year, 24-hour rainfall P2 [in], > 0.
    slope : array_like
        Slope of the hydraulic grade line s [ft/ft], > 0.

    Returns
    -------
    float or numpy.ndarray
        Travel time [h].

    References
    ----------
    TR-55 (1986), Chapter 3, "Sheet flow", eq. 3-3 and Table 3-1; NEH 630 ch. 15.
    """
    n = check_range("n", n, 0.0, low_inclusive=False)
    length_ft = check_range("length_ft", length_ft, 0.0, SHEET_FLOW_MAX_LENGTH_FT, low_inclusive=False, unit="ft")
    p2_in = check_range("p2_in", p2_in, 0.0, low_inclusive=False, unit="in")
    slope = check_range("slope", slope, 0.0, low_inclusive=False, unit="ft/ft")
    broadcast_shape(n=n, length_ft=length_ft, p2_in=p2_in, slope=slope)
    if np.any(length_ft > SHEET_FLOW_ADVISED_LENGTH_FT):
        warnings.warn(
            "sheet flow length over 100 ft: TR-55 (1986) allows 300 ft, current NRCS guidance "
            "(NEH 630 ch. 15) limits sheet flow to 100 ft",
            CapacitysimWarning,
            stacklevel=2,
        )
    tt = SHEET_FLOW_COEF * (n * length_ft) ** SHEET_FLOW_N_EXP / (p2_in**SHEET_FLOW_P2_EXP * slope**SHEET_FLOW_SLOPE_EXP)
    return scalar_or_array(tt)


def shallow_flow_velocity_fps(slope, paved):
    """Average velocity of shallow concentrated flow [ft/s] (TR-55 Figure 3-1, Appendix F).

    Parameters
    ----------
    slope : array_like
        Watercourse slope [ft/ft], > 0.
    paved : array_like of bool
        Paved (True) or unpaved (False) surface.

    References
    ----------
    TR-55 (1986), Chapter 3, Figure 3-1; Appendix F, equations for Figure 3-1.
    """
    slope = check_range("slope", slope, 0.0, low_inclusive=False, unit="ft/ft")
    broadcast_shape(slope=slope, paved=paved)
    coef = np.where(np.asarray(paved, dtype=bool), SHALLOW_PAVED_COEF_FPS, SHALLOW_UNPAVED_COEF_FPS)
    return scalar_or_array(coef * np.sqrt(slope))


def shallow_flow_time(length_ft, slope, paved):
    """Travel time of shallow concentrated flow [h], Tt = L / (3600 V) (TR-55 eq. 3-1).

    Parameters
    ----------
    length_ft : array_like
        Flow length [ft], > 0.
    slope : array_like
        Watercourse slope [ft/ft], > 0.
    paved : array_like of bool
        Paved surface (True) or unpaved (False).

    References
    ----------
    TR-55 (1986), Chapter 3, eq. 3-1 and Figure 3-1.
    """
    length_ft = check_range("length_ft", length_ft, 0.0, low_inclusive=False, unit="ft")
    broadcast_shape(length_ft=length_ft, slope=slope, paved=paved)
    v = np.asarray(shallow_flow_velocity_fps(slope, paved))
    return scalar_or_array(length_ft / (SECONDS_PER_HOUR * v))


def channel_velocity_fps(n, area_ft2, wetted_perimeter_ft, slope):
    """Manning's velocity of open channel flow [ft/s], V = 1.49 r^(2/3) s^(1/2) / n (TR-55 eq. 3-4).

    References
    ----------
    TR-55 (1986), Chapter 3, "Open channels", eq. 3-4 and 3-5 (r = a / pw).
    """
    n = check_range("n", n, 0.0, low_inclusive=False)
    area_ft2 = check_range("area_ft2", area_ft2, 0.0, low_inclusive=False, unit="ft2")
    pw = check_range("wetted_perimeter_ft", wetted_perimeter_ft, 0.0, low_inclusive=False, unit="ft")
    slope = check_range("slope", slope, 0.0, low_inclusive=False, unit="ft/ft")
    broadcast_shape(n=n, area_ft2=area_ft2, wetted_perimeter_ft=pw, slope=slope)
    r = area_ft2 / pw
    return scalar_or_array(MANNING_US_COEF * r ** (2.0 / 3.0) * np.sqrt(slope) / n)


def channel_flow_time(length_ft, n, area_ft2, wetted_perimeter_ft, slope):
    """Travel time in an open channel or pipe flowing at bankfull [h] (TR-55 eq. 3-1, 3-4).

    Parameters
    ----------
    length_ft : array_like
        Flow length [ft], > 0.
    n : array_like
        Manning's roughness [-], > 0.
    area_ft2 : array_like
        Cross-sectional flow area [ft2], > 0.
    wetted_perimeter_ft : array_like
        Wetted perimeter [ft], > 0.
    slope : array_like
        Channel slope [ft/ft], > 0.

    References
    ----------
    TR-55 (1986), Chapter 3, eq. 3-1, 3-4 and 3-5.
    """
    length_ft = check_range("length_ft", length_ft, 0.0, low_inclusive=False, unit="ft")
    broadcast_shape(length_ft=length_ft, n=n, area_ft2=area_ft2, wetted_perimeter_ft=wetted_perimeter_ft, slope=slope)
    v = np.asarray(channel_velocity_fps(n, area_ft2, wetted_perimeter_ft, slope))
    return scalar_or_array(length_ft / (SECONDS_PER_HOUR * v))


def time_of_concentration(*travel_times_hr):
    """Time of concentration [h]: the sum of the travel times of consecutive segments (TR-55 eq. 3-2).

    Parameters
    ----------
    *travel_times_hr : array_like
        Travel times of the flow segments [h], each >= 0, broadcast together.

    References
    ----------
    TR-55 (1986), Chapter 3, eq. 3-2 and Worksheet 3.
    """
    if not travel_times_hr:
        raise InputError("time_of_concentration needs at least one travel time")
    arrays = [check_range(f"travel_times_hr[{i}]", t, 0.0, unit="h") for i, t in enumerate(travel_times_hr)]
    broadcast_shape(**{f"travel_times_hr[{i}]": a for i, a in enumerate(arrays)})
    return scalar_or_array(np.sum(np.broadcast_arrays(*arrays), axis=0))
