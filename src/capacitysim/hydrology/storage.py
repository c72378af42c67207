"""Storage volume for detention basins by TR-55 Chapter 6.

References
----------
.. [1] USDA SCS (1986), TR-55, Chapter 6, Figure 6-1 and Appendix F, Table F-2.
"""

from __future__ import annotations

import warnings

import numpy as np

from capacitysim.checks import check_range, scalar_or_array
from capacitysim.errors import CapacitysimWarning, InputError
from capacitysim.hydrology import tables
from capacitysim.hydrology.rainfall import _normalise_distribution

#: The range of qo/qi over which TR-55 Figure 6-1 is drawn [-].
QO_QI_MIN = 0.1
QO_QI_MAX = 0.8


def detention_storage_ratio(qo_over_qi, distribution: str = "II"):
    r"""Storage volume ratio Vs/Vr for a peak outflow/inflow ratio (TR-55 Figure 6-1).

    .. math:: \frac{V_s}{V_r} = C_0 + C_1 \frac{q_o}{q_i} + C_2 \left(\frac{q_o}{q_i}\right)^2
              + C_3 \left(\frac{q_o}{q_i}\right)^3

    Parameters
    ----------
    qo_over_qi : array_like
        Peak outflow / peak inflow [-], in [0.1, 1). Figure 6-1 is drawn for 0.1-0.8. Above 0.8
        the ratio is clamped to 0.8 with a :class:`CapacitysimWarning` (more storage than the
        extrapolated curve: on the safe side). Below 0.1 it is refused: Vs/Vr falls as qo/qi
        rises, so clamping up to 0.1 would understate the storage; route the hydrograph instead.
    distribution : {"I", "IA", "II", "III"}
        Rainfall distribution (I and IA share a curve, II and III share the other).

    Returns
    -------
    float or numpy.ndarray
        Vs/Vr: storage volume over runoff volume [-].

    References
    ----------
    TR-55 (1986), Chapter 6, Figure 6-1; Appendix F, Table F-2.
    """
    key = _normalise_distribution(distribution)
    x = check_range("qo_over_qi", qo_over_qi, QO_QI_MIN, 1.0, high_inclusive=False)
    coefs = tables.storage_coefficients().get(key)
    if coefs is None:  # pragma: no cover - every type has a curve
        raise InputError(f"no TR-55 Table F-2 curve for distribution {key}")
    if np.any(x > QO_QI_MAX):
        warnings.warn(
            "qo/qi above 0.8, the end of TR-55 Figure 6-1: the storage ratio at 0.8 is used (conservative)",
            CapacitysimWarning,
            stacklevel=2,
        )
        x = np.minimum(x, QO_QI_MAX)
    c0, c1, c2, c3 = coefs
    return scalar_or_array(c0 + x * (c1 + x * (c2 + x * c3)))
