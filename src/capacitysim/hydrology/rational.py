"""Modified rational method design hydrographs (HEC-22 ch. 8) for detention sizing.

References
----------
Brown, S. A. et al. (2009), Urban Drainage Design Manual, HEC-22, 3rd ed., FHWA-NHI-10-009, ch. 8.
"""

from __future__ import annotations

import numpy as np

from capacitysim.checks import MAX_BATCH_VALUES, check_steps


def rational_hydrograph_shapes(durations_min, tc_min, a, b, dt_min, tail_min=0.0):
    """Unit modified rational hydrographs [cfs per (C x acre)] for several storm durations.

    Each is a trapezoid rising over Tc to i(t_d) = a/(t_d + b), level to t_d, falling to 0 at t_d + Tc
    (volume i(t_d) t_d, the modified rational inflow volume). Multiply by k C A [ac].

    Parameters
    ----------
    durations_min : array_like
        Storm durations t_d [min], > 0.
    tc_min : float
        Time of concentration [min], > 0.
    a, b : float
        IDF constants, i = a / (t + b) [in/h x min], [min].
    dt_min : float
        Time step [min], > 0.
    tail_min : float, default 0
        Time of zero inflow added after the longest hydrograph [min].

    Returns
    -------
    t_min, shapes, td : ndarray
        Times [min] (T,), the shapes (S, T) and the durations used (S,).

    Raises
    ------
    InputError
        Before allocating, when the series would be longer than
        :data:`~capacitysim.checks.MAX_TIME_STEPS` steps (longest duration plus Tc over the step: a
        Tc of 1e9 min or a step of 1e-9 min) or hold more than :data:`~capacitysim.checks.MAX_BATCH_VALUES`.

    References
    ----------
    HEC-22 (2009) ch. 8 (modified rational method hydrographs).
    """
    td = np.maximum(np.asarray(durations_min, dtype=float), tc_min)
    t_end = td.max() + tc_min + tail_min
    drivers = f"tc_min = {tc_min:g} min, longest storm duration {td.max():g} min, dt_min = {dt_min:g} min"
    with np.errstate(over="ignore"):
        n_steps = t_end / dt_min + 2.0  # may overflow to inf: refused below
    n_t = check_steps(n_steps, "the design hydrographs", drivers)
    check_steps(td.size * n_t, "the design hydrographs", f"{td.size} durations x {n_t:,} steps; {drivers}",
                limit=MAX_BATCH_VALUES, unit="values", hint="fewer durations or a longer time step")
    t = np.arange(0.0, t_end + dt_min, dt_min)
    peak = a / (td + b)
    shapes = np.stack([np.interp(t, [0.0, tc_min, d, d + tc_min], [0.0, p, p, 0.0], right=0.0) for d, p in zip(td, peak)])
    return t, shapes, td
