"""Graphical peak discharge method (TR-55 Chapter 4).

References
----------
.. [1] USDA SCS (1986), TR-55, Chapter 4, eq. 4-1, Table 4-1, Table 4-2, Exhibit 4-I..III, and
   Appendix F, Table F-1 (coefficients of the unit peak discharge curves).
"""

from __future__ import annotations

import warnings

import numpy as np

from capacitysim.checks import check_range, scalar_or_array
from capacitysim.errors import CapacitysimWarning, InputError
from capacitysim.hydrology import tables
from capacitysim.hydrology._inputs import MAX_AREA_MI2, MAX_PRECIP_IN, MAX_TC_HR, broadcast_shape
from capacitysim.hydrology.rainfall import _normalise_distribution
from capacitysim.hydrology.runoff import DEFAULT_IA_RATIO, PERCENT, S_NUMERATOR_IN, S_OFFSET_IN, runoff_depth

#: The limits of the graphical method (TR-55 Chapter 4, "Limitations").
TC_MIN_HR = 0.1
TC_MAX_HR = 10.0
IA_P_MIN = 0.1
IA_P_MAX = 0.5
CN_MIN_ADVISED = 40.0
#: TR-55 Table 4-2 ends at 5 % pond and swamp area; beyond, route the storage instead.
POND_SWAMP_MAX_PCT = 5.0


def unit_peak_discharge_csm_in(tc_hr, ia_over_p, distribution: str = "II"):
    r"""Unit peak discharge qu [csm/in] (TR-55 Exhibit 4, Table F-1).

    .. math:: \log_{10} q_u = C_0 + C_1 \log_{10} T_c + C_2 (\log_{10} T_c)^2

    with the coefficients of the Table F-1 rows (Ia/P values) that bracket ``ia_over_p``, and
    straight-line interpolation of qu between those two curves, as TR-55 chapter 4 directs for an
    Ia/P between the curves of Exhibit 4.

    Parameters
    ----------
    tc_hr : array_like
        Time of concentration Tc [h], in [0.1, 10] (the range of Exhibit 4).
    ia_over_p : array_like
        Initial abstraction over rainfall Ia/P [-], in [0.1, 0.5] (the rows of Table F-1).
    distribution : {"I", "IA", "II", "III"}
        Rainfall distribution type.

    Returns
    -------
    float or numpy.ndarray
        qu [csm/in]: cfs per square mile per inch of runoff.

    Raises
    ------
    InputError
        For Tc or Ia/P outside the ranges above (this function does not extrapolate;
        :func:`graphical_peak_discharge` clamps them to the limits with a warning, as TR-55 says),
        NaN, or shapes that do not broadcast.

    References
    ----------
    TR-55 (1986), Chapter 4, "Peak discharge computation" (interpolation between the Ia/P curves,
    limiting values outside them) and Exhibits 4-I, 4-IA, 4-II, 4-III; Appendix F, Table F-1.
    """
    key = _normalise_distribution(distribution)
    tc = check_range("tc_hr", tc_hr, TC_MIN_HR, TC_MAX_HR, unit="h")
    x = check_range("ia_over_p", ia_over_p, IA_P_MIN, IA_P_MAX)
    broadcast_shape(tc_hr=tc, ia_over_p=x)
    ratios, coefs = tables.unit_peak_coefficients()[key]
    log_tc = np.log10(tc)[..., None]
    qu_rows = 10.0 ** (coefs[:, 0] + coefs[:, 1] * log_tc + coefs[:, 2] * log_tc**2)
    x, qu_rows = np.broadcast_arrays(x[..., None], qu_rows)
    x = x[..., 0]
    hi = np.clip(np.searchsorted(ratios, x, side="left"), 1, ratios.size - 1)
    lo = hi - 1
    w = (x - ratios[lo]) / (ratios[hi] - ratios[lo])
    q_lo = np.take_along_axis(qu_rows, lo[..., None], axis=-1)[..., 0]
    q_hi = np.take_along_axis(qu_rows, hi[..., None], axis=-1)[..., 0]
    return scalar_or_array(q_lo + w * (q_hi - q_lo))


def pond_swamp_adjustment(pond_swamp_pct):
    """Pond and swamp adjustment factor Fp [-] (TR-55 Table 4-2, linear between rows).

    Parameters
    ----------
    pond_swamp_pct : array_like
        Pond and swamp areas spread throughout the watershed, percent of the area [%], 0-5.

    References
    ----------
    TR-55 (1986), Chapter 4, Table 4-2.
    """
    pct = check_range("pond_swamp_pct", pond_swamp_pct, 0.0, POND_SWAMP_MAX_PCT, unit="%")
    x, fp = tables.pond_swamp_factor()
    return scalar_or_array(np.interp(pct, x, fp))


def graphical_peak_discharge(area_mi2, cn, precip_in, tc_hr, distribution: str = "II", pond_swamp_pct=0.0):
    r"""Peak discharge by the TR-55 graphical method [cfs].

    .. math:: q_p = q_u A_m Q F_p

    Parameters
    ----------
    area_mi2 : array_like
        Drainage area Am [mi2], in [0, 10,000] (:data:`~capacitysim.hydrology._inputs.MAX_AREA_MI2`).
    cn : array_like
        Runoff curve number [-], in (0, 100]; a warning below 40 (outside the method's range).
    precip_in : array_like
        24-hour rainfall P [in], in [0, 200] (:data:`~capacitysim.hydrology._inputs.MAX_PRECIP_IN`).
    tc_hr : array_like
        Time of concentration [h], in (0, 240]. Clamped to 0.1-10 h with a warning, as TR-55 directs.
    distribution : {"I", "IA", "II", "III"}, default "II"
        Rainfall distribution type.
    pond_swamp_pct : array_like, default 0
        Pond and swamp area [%], 0-5 (Table 4-2).

    Returns
    -------
    float or numpy.ndarray
        Peak discharge qp [cfs]. Ia/P outside 0.1-0.5 is clamped with a warning (TR-55 ch. 4:
        "use the limiting values"); qp is 0 where there is no runoff.

    References
    ----------
    TR-55 (1986), Chapter 4, eq. 4-1, Table 4-1 (Ia), Table 4-2 (Fp), Exhibit 4; Appendix F,
    Table F-1.
    """
    area = check_range("area_mi2", area_mi2, 0.0, MAX_AREA_MI2, unit="mi2")
    cn_arr = check_range("cn", cn, 0.0, PERCENT, low_inclusive=False)
    p = check_range("precip_in", precip_in, 0.0, MAX_PRECIP_IN, unit="in")
    tc = check_range("tc_hr", tc_hr, 0.0, MAX_TC_HR, low_inclusive=False, unit="h")
    fp = np.asarray(pond_swamp_adjustment(pond_swamp_pct))
    broadcast_shape(area_mi2=area, cn=cn_arr, precip_in=p, tc_hr=tc, pond_swamp_pct=fp)
    key = _normalise_distribution(distribution)
    if np.any(cn_arr < CN_MIN_ADVISED):
        warnings.warn("CN below 40: outside the range of the TR-55 graphical method", CapacitysimWarning, stacklevel=2)
    if np.any((tc < TC_MIN_HR) | (tc > TC_MAX_HR)):
        warnings.warn("Tc outside 0.1-10 h: clamped to the limits of TR-55 Exhibit 4", CapacitysimWarning, stacklevel=2)
        tc = np.clip(tc, TC_MIN_HR, TC_MAX_HR)
    q_in = np.asarray(runoff_depth(p, cn_arr))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # tiny P or CN: Ia/P -> inf, clamped below
        ia = DEFAULT_IA_RATIO * (S_NUMERATOR_IN / cn_arr - S_OFFSET_IN)
        ia_p = np.where(p > 0.0, ia / np.where(p > 0.0, p, 1.0), IA_P_MAX)
    wet = q_in > 0.0
    if np.any(wet & ((ia_p < IA_P_MIN) | (ia_p > IA_P_MAX))):
        warnings.warn("Ia/P outside 0.1-0.5: the limiting value is used (TR-55 ch. 4)", CapacitysimWarning, stacklevel=2)
    ia_p = np.clip(ia_p, IA_P_MIN, IA_P_MAX)
    qu = np.asarray(unit_peak_discharge_csm_in(tc, ia_p, key))
    return scalar_or_array(qu * area * q_in * fp)
