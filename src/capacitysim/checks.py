"""Input checks shared by every layer: each failure names the field, the value and what is allowed.

These helpers are part of the foundation (they import only numpy and :mod:`capacitysim.errors`);
the pure computation layers call them on their arguments before computing.
"""

from __future__ import annotations

import numpy as np

from capacitysim.errors import InputError


def _first_bad(values: np.ndarray, bad: np.ndarray) -> str:
    """Describe the first offending element, with its index when the input is an array."""
    flat_bad = np.flatnonzero(bad)
    idx = int(flat_bad[0])
    value = values.reshape(-1)[idx].item()
    where = "" if values.ndim == 0 else f" at index {tuple(int(i) for i in np.unravel_index(idx, values.shape))}"
    more = "" if flat_bad.size == 1 else f" ({flat_bad.size} values in all)"
    return f"{value!r}{where}{more}"


def as_float_array(name: str, value) -> np.ndarray:
    """Convert ``value`` to a float64 array, refusing text, None and NaN with a named error."""
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a number or an array of numbers, got {value!r}") from None
    nan = np.isnan(arr)
    if nan.any():
        raise InputError(f"{name} must not be NaN (got NaN{_first_bad(arr, nan)[3:]})")
    return arr


def check_range(
    name: str,
    value,
    low: float | None = None,
    high: float | None = None,
    *,
    low_inclusive: bool = True,
    high_inclusive: bool = True,
    unit: str = "",
) -> np.ndarray:
    """Return ``value`` as a float array after checking it is finite and within the bounds.

    Parameters
    ----------
    name : str
        The field's name as the user knows it (``"cn"``, ``"precip_in"``).
    value : array_like
        The values to check.
    low, high : float or None
        The allowed range; ``None`` leaves that side open.
    low_inclusive, high_inclusive : bool
        Whether the bound itself is allowed.
    unit : str
        Unit shown in the message.
    """
    arr = as_float_array(name, value)
    bad = ~np.isfinite(arr)
    if low is not None:
        bad |= (arr < low) if low_inclusive else (arr <= low)
    if high is not None:
        bad |= (arr > high) if high_inclusive else (arr >= high)
    if bad.any():
        lo = "-inf" if low is None else f"{low:g}"
        hi = "inf" if high is None else f"{high:g}"
        interval = f"{'[' if low_inclusive and low is not None else '('}{lo}, {hi}{']' if high_inclusive and high is not None else ')'}"
        u = f" {unit}" if unit else ""
        raise InputError(f"{name} must be in {interval}{u}, got {_first_bad(arr, bad)}")
    return arr


def check_choice(name: str, value: str, allowed) -> str:
    """Check a string against a set of allowed values (case-sensitive after normalisation by the caller)."""
    allowed = list(allowed)
    if value not in allowed:
        raise InputError(f"{name} must be one of {', '.join(map(str, allowed))}; got {value!r}")
    return value


def scalar_or_array(arr: np.ndarray):
    """Return a Python float for 0-d results (scalars in give scalars out), else the array."""
    arr = np.asarray(arr)
    return float(arr) if arr.ndim == 0 else arr
