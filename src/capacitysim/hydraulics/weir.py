"""Weir flow: sharp-crested rectangular (Francis, with end contractions and Villemonte submergence)
and V-notch weirs, vectorized.

References
----------
.. [1] Brater, E.F., King, H.W., et al. (1996), Handbook of Hydraulics, 7th ed., Chapter 5 (weirs):
   Francis formula Q = 3.33 (L - 0.1 n H) H^1.5 [cfs, ft]; triangular weir Q = C tan(theta/2) H^2.5,
   C about 2.5 for a 90-degree notch.
.. [2] Villemonte, J.R. (1947), Submerged-weir discharge studies, Engineering News-Record 139,
   pp. 54-56: Qs = Q (1 - (H2/H1)^n)^0.385, n = 1.5 for a rectangular weir, 2.5 for a V-notch.
.. [3] FHWA (2009), HEC-22 3rd ed., § 8.4 (weirs in detention outlet structures).
"""

from __future__ import annotations

import numpy as np

from capacitysim.checks import check_range, scalar_or_array
from capacitysim.units import GRAVITY_FT_S2

#: Francis coefficient of a sharp-crested rectangular weir [ft^0.5/s] (Brater & King ch. 5).
FRANCIS_COEFFICIENT = 3.33
#: Largest coefficient of a rectangular weir [ft^0.5/s]: Cw = (2/3) Cd sqrt(2 g) with a discharge
#: coefficient Cd of at most 1 (Brater & King ch. 5 derive the weir formula so), 5.35; a larger
#: coefficient claims more flow than the head can drive.
MAX_RECTANGULAR_WEIR_COEFFICIENT = 2.0 / 3.0 * (2.0 * GRAVITY_FT_S2) ** 0.5
#: Coefficient of a 90-degree V-notch weir, Q = C tan(theta/2) H^2.5 [ft^0.5/s] (Brater & King ch. 5).
V_NOTCH_COEFFICIENT = 2.5
#: End contraction reduces the effective length by 0.1 H per contraction (Francis).
CONTRACTION_FACTOR = 0.1
#: Villemonte (1947) submergence exponent 0.385.
VILLEMONTE_EXPONENT = 0.385


def _submergence(h1, tailwater_head, n):
    if tailwater_head is None:
        return 1.0
    h2 = np.clip(check_range("tailwater_head_ft", tailwater_head, unit="ft"), 0.0, None)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(h1 > 0, np.clip(h2 / np.where(h1 > 0, h1, 1.0), 0.0, 1.0), 1.0)
    return (1.0 - ratio**n) ** VILLEMONTE_EXPONENT


def rectangular_weir_flow_cfs(head_ft, length_ft, coefficient=FRANCIS_COEFFICIENT, contractions=0, tailwater_head_ft=None):
    """Flow over a sharp-crested rectangular weir Q = Cw (L - 0.1 n H) H^1.5 [cfs].

    Parameters
    ----------
    head_ft : float or array_like
        Head over the crest H [ft]; negative heads give no flow.
    length_ft : float or array_like
        Crest length L [ft], >= 0.
    coefficient : float, default 3.33
        Weir coefficient Cw [ft^0.5/s], in (0, 5.35] (:data:`MAX_RECTANGULAR_WEIR_COEFFICIENT`).
    contractions : int, default 0
        Number of end contractions n (0, 1 or 2).
    tailwater_head_ft : float or array_like, optional
        Downstream head over the crest [ft]; applies the Villemonte correction.

    References
    ----------
    Brater & King (1996) ch. 5 (Francis formula); Villemonte (1947).
    """
    h = np.clip(check_range("head_ft", head_ft, unit="ft"), 0.0, None)
    length = check_range("length_ft", length_ft, 0.0, unit="ft")
    cw = check_range("coefficient", coefficient, 0.0, MAX_RECTANGULAR_WEIR_COEFFICIENT, low_inclusive=False)
    n = check_range("contractions", contractions, 0.0, 2.0)
    eff = np.clip(length - CONTRACTION_FACTOR * n * h, 0.0, None)
    q = cw * eff * h**1.5 * _submergence(h, tailwater_head_ft, 1.5)
    return scalar_or_array(q)


def v_notch_weir_flow_cfs(head_ft, angle_deg=90.0, coefficient=V_NOTCH_COEFFICIENT, tailwater_head_ft=None):
    """Flow over a sharp-crested V-notch weir Q = C tan(theta/2) H^2.5 [cfs].

    References
    ----------
    Brater & King (1996) ch. 5; Villemonte (1947) with n = 2.5.
    """
    h = np.clip(check_range("head_ft", head_ft, unit="ft"), 0.0, None)
    theta = check_range("angle_deg", angle_deg, 0.0, 180.0, low_inclusive=False, high_inclusive=False, unit="deg")
    c = check_range("coefficient", coefficient, 0.0, low_inclusive=False)
    q = c * np.tan(np.radians(theta) / 2.0) * h**2.5 * _submergence(h, tailwater_head_ft, 2.5)
    return scalar_or_array(q)
