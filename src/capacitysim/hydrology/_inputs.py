"""Shape checks shared by the hydrology functions (each failure names the fields and their shapes)."""

from __future__ import annotations

import numpy as np

from capacitysim.errors import InputError


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
