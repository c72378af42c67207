"""Shape checks and physical bounds shared by the hydrology functions (each failure names the fields)."""

from __future__ import annotations

import numpy as np

from capacitysim.errors import InputError

# --- physical bounds ---------------------------------------------------------------------------
# The methods accept any finite number mathematically, but a value far outside what nature produces
# is a typing or unit error, and past these bounds the arithmetic overflows (a depth of 1e308 in
# gives Q = inf, an area of 1e308 ac a NaN hydrograph). Each bound sits well above anything real.

#: Largest storm rainfall depth [in]. The greatest point rainfalls ever measured are about 72 in in
#: 24 hours and about 155 in in 72 hours (both at Cilaos, La Reunion, WMO records); the curve number
#: method is applied to single storms, so 200 in is beyond any, and larger is a unit error (mm).
MAX_PRECIP_IN = 200.0
#: Largest drainage area [mi2]. The TR-55 and SCS unit hydrograph methods are for small and
#: mid-size watersheds; 10,000 mi2 is already far past their use, and larger is a unit error (ft2).
MAX_AREA_MI2 = 10_000.0
#: Largest time of concentration [h]. Even the largest basins these methods are applied to have a
#: Tc of a few days; ten days is beyond any, and larger is a unit error (minutes given as hours).
MAX_TC_HR = 240.0


def broadcast_shape(**arrays) -> tuple[int, ...]:
    """The broadcast shape of the named inputs, or an :class:`InputError` naming each field's shape.

    Parameters
    ----------
    **arrays : array_like
        The inputs, keyed by the names the user knows them by (``precip_in=..., cn=...``).

    Returns
    -------
    tuple of int
        The shape numpy broadcasting gives them.

    Raises
    ------
    InputError
        When the shapes do not broadcast together (numpy would raise a bare ``ValueError``).
    """
    shapes = {name: np.shape(value) for name, value in arrays.items()}
    try:
        return np.broadcast_shapes(*shapes.values())
    except ValueError:
        described = ", ".join(f"{name} has shape {shape}" for name, shape in shapes.items())
        raise InputError(
            f"input shapes do not broadcast together: {described} "
            "(allowed: scalars, or arrays whose shapes broadcast, e.g. all of one length)"
        ) from None
