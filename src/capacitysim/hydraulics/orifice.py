"""Orifice flow: free and submerged, head to the centroid, vectorized over stages and designs.

A vertical (side) circular orifice whose invert sits ``invert_ft`` above the storage bottom:

* stage at or below the invert: no flow;
* stage between invert and crown (partly submerged inlet): the orifice acts as a weir; the
  transition used by EPA SWMM 5, Q = Cd A sqrt(2 g D/2) f^1.5 with f = (h - invert)/D, which is
  continuous with the full-orifice equation at the crown;
* stage at or above the crown: Q = Cd A sqrt(2 g H), H measured from the stage to the centroid
  (free outfall) or to the tailwater when the tailwater is above the centroid (submerged).

References
----------
.. [1] Brater, E.F., King, H.W., Lindell, J.E., Wei, C.Y. (1996), Handbook of Hydraulics, 7th ed.,
   McGraw-Hill, Chapter 4 (orifices: Q = C A sqrt(2 g H), H to the centre of the opening; sharp-edged
   circular orifice coefficient about 0.60-0.62).
.. [2] FHWA (2009), HEC-22 Urban Drainage Design Manual, 3rd ed., § 8.4 (orifice equation; head to the
   centroid for free discharge, to the tailwater for submerged discharge; C = 0.6 for sharp-edged).
.. [3] Rossman, L.A. (2017), Storm Water Management Model Reference Manual Volume II - Hydraulics,
   EPA/600/R-17/111, § 6.1 (orifices: full flow Q = Cd A sqrt(2 g h); partly full as a weir).
"""

from __future__ import annotations

import numpy as np

from capacitysim.checks import check_range, scalar_or_array
from capacitysim.units import GRAVITY_FT_S2, INCHES_PER_FOOT

#: Default discharge coefficient of a sharp-edged circular orifice [-] (Brater & King ch. 4;
#: HEC-22 § 8.4 gives 0.6). The nyc-2012 rule set carries the value used, overridable.
DEFAULT_DISCHARGE_COEFFICIENT = 0.61


def circular_area_sf(diameter_in):
    """Area of a circle of diameter D [in] in [ft^2]: pi (D/12)^2 / 4."""
    d = check_range("diameter_in", diameter_in, 0.0, unit="in")
    return scalar_or_array(np.pi * (d / INCHES_PER_FOOT) ** 2 / 4.0)


def orifice_flow_cfs(stage_ft, diameter_in, invert_ft=0.0, cd=DEFAULT_DISCHARGE_COEFFICIENT, tailwater_ft=None):
    """Flow through a vertical circular orifice [cfs].

    Parameters
    ----------
    stage_ft : float or array_like
        Water level upstream, above the storage bottom [ft].
    diameter_in : float or array_like
        Orifice diameter D [in], >= 0.
    invert_ft : float or array_like, default 0
        Orifice invert above the storage bottom [ft].
    cd : float or array_like, default 0.61
        Discharge coefficient [-], in (0, 1].
    tailwater_ft : float or array_like, optional
        Downstream water level on the same datum [ft]; ``None`` is a free outfall. When it is above
        the centroid the head is the difference of levels (submerged orifice); no reverse flow.

    Returns
    -------
    float or ndarray
        Q [cfs], broadcast over the inputs.

    References
    ----------
    Brater & King (1996) ch. 4; HEC-22 (2009) § 8.4; SWMM Reference Manual Vol. II (2017) § 6.1.
    """
    h = check_range("stage_ft", stage_ft, unit="ft")
    d_in = check_range("diameter_in", diameter_in, 0.0, unit="in")
    inv = check_range("invert_ft", invert_ft, unit="ft")
    cd = check_range("cd", cd, 0.0, 1.0, low_inclusive=False)
    d_ft = d_in / INCHES_PER_FOOT
    area = np.pi * d_ft**2 / 4.0
    centroid = inv + d_ft / 2.0
    crown = inv + d_ft
    if tailwater_ft is None:
        ref = centroid
    else:
        tw = check_range("tailwater_ft", tailwater_ft, unit="ft")
        ref = np.maximum(centroid, tw)
    full_head = np.clip(h - ref, 0.0, None)
    q_full = cd * area * np.sqrt(2.0 * GRAVITY_FT_S2 * full_head)
    with np.errstate(divide="ignore", invalid="ignore"):
        f = np.where(d_ft > 0, np.clip((h - inv) / np.where(d_ft > 0, d_ft, 1.0), 0.0, 1.0), 0.0)
    q_weir = cd * area * np.sqrt(GRAVITY_FT_S2 * d_ft) * f**1.5
    q = np.where(h >= crown, q_full, q_weir)
    return scalar_or_array(np.where(d_ft > 0, q, 0.0))


def orifice_diameter_for_flow_in(flow_cfs, head_ft, cd=DEFAULT_DISCHARGE_COEFFICIENT):
    """Diameter of a fully submerged orifice passing ``flow_cfs`` under head ``head_ft`` to the centroid [in].

    Inverts Q = Cd (pi D^2/4) sqrt(2 g H) (Brater & King ch. 4). A first guess for sizing; the
    sizing workflow refines it by routing.
    """
    q = check_range("flow_cfs", flow_cfs, 0.0, unit="cfs")
    hh = check_range("head_ft", head_ft, 0.0, low_inclusive=False, unit="ft")
    cd = check_range("cd", cd, 0.0, 1.0, low_inclusive=False)
    area = q / (cd * np.sqrt(2.0 * GRAVITY_FT_S2 * hh))
    return scalar_or_array(np.sqrt(4.0 * area / np.pi) * INCHES_PER_FOOT)
