"""Input checks shared by every layer: each failure names the field, the value and what is allowed.

These helpers are part of the foundation (they import only numpy and :mod:`capacitysim.errors`);
the pure computation layers call them on their arguments before computing.
"""

from __future__ import annotations

import re

import numpy as np

from capacitysim.errors import InputError
from capacitysim.units import CUBIC_FEET_PER_CUBIC_METER, GPD_PER_CFS, GPD_PER_GPM, GPD_PER_MGD, LITERS_PER_CUBIC_METER

#: Largest number of time steps (ordinates) one series may be given along time [-]. A million steps
#: is 24 h at 0.09 s or a year at 32 s: far past any design storm, hydrograph or routing the methods
#: here are used for. More comes only from a runaway input (a time of concentration of centuries,
#: a step of nanoseconds) and would exhaust memory (10^9 steps of float64 are 8 GB per array), so it
#: is refused before anything is allocated, naming the inputs that drive the count.
MAX_TIME_STEPS = 1_000_000
#: Largest number of values (series x time steps) one batched computation may allocate [-]:
#: 5 x 10^7 float64 values are 400 MB per array; an FFT convolution or a routing call holds a few
#: such arrays at once. Larger batches are split by the caller (the sweeps compute by chunk).
MAX_BATCH_VALUES = 50_000_000


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


def _count_text(n: float) -> str:
    """A count for a message: thousands separators, or 3 significant digits when astronomical."""
    if not np.isfinite(n):
        return "infinitely many"
    return f"{n:,.0f}" if n < 1e15 else f"{n:.3g}"


def check_steps(n_steps, what: str, drivers: str, *, limit: int = MAX_TIME_STEPS, unit: str = "time steps",
                hint: str = "a shorter duration or time of concentration, or a longer time step") -> int:
    """Refuse a series longer than ``limit`` before it is allocated.

    Parameters
    ----------
    n_steps : float
        The number of steps the inputs ask for (a float: it may be astronomically large or inf).
    what : str
        What would be allocated (``"the unit hydrograph"``).
    drivers : str
        The inputs that drive the count, with their values (``"tc_hr = 1e+09 h, storm step 0.1 h"``).
    limit : int, default :data:`MAX_TIME_STEPS`
        The largest count allowed.
    unit : str
        What is counted, for the message.
    hint : str
        How to bring the count down, for the message.

    Returns
    -------
    int
        ``n_steps`` as an int when allowed.

    Raises
    ------
    InputError
        When ``n_steps`` is above ``limit``, not finite or NaN; the message names ``drivers``.
    """
    n = float(n_steps)
    if not n <= limit:  # NaN-safe
        raise InputError(
            f"{what} would need {_count_text(n)} {unit} ({drivers}); allowed: at most {limit:,} ({hint})"
        )
    return int(n)


def check_count(name: str, value, high: float | None = None, unit: str = "") -> np.ndarray:
    """Return ``value`` as a float array after checking it is a whole number >= 0 (and <= ``high``).

    A count of things (sump pumps, manholes) is a whole number: 2.5 pumps is a typing error.
    """
    arr = check_range(name, value, 0.0, high, unit=unit)
    frac = arr != np.floor(arr)
    if frac.any():
        u = f" {unit}" if unit else ""
        raise InputError(f"{name} must be a whole number >= 0{u} (a count), got {_first_bad(arr, frac)}")
    return arr


def check_finite_result(name: str, value, inputs: str) -> np.ndarray:
    """Refuse a result that overflowed (inf) or is undefined (NaN), naming the inputs that caused it.

    Parameters
    ----------
    name : str
        The result's name (``"s_in"``).
    value : array_like
        The computed values.
    inputs : str
        The inputs that produced it, with their values, for the message.
    """
    arr = np.asarray(value, dtype=np.float64)
    bad = ~np.isfinite(arr)
    if bad.any():
        raise InputError(
            f"{name} is not a finite number ({_first_bad(arr, bad)}) for {inputs}: "
            "the inputs are outside the range the method can compute"
        )
    return arr


#: The units a flow may be written in, by the names a user types (case-insensitive) -> gpd per unit [gpd].
#: gpd: U.S. gallons per day (a bare number is read in it); MGD 10^6 gal/day; gpm gal/min (x 1,440);
#: cfs ft^3/s (x 646,316.9); L/s (x 22,824.5: 86,400 L/day at 3.785 L/gal, the exact bridge of
#: :mod:`capacitysim.units`, NIST SP 811 appendix B).
FLOW_UNITS_GPD = {"gpd": 1.0, "mgd": GPD_PER_MGD, "gpm": GPD_PER_GPM, "cfs": GPD_PER_CFS,
                  "l/s": GPD_PER_CFS * CUBIC_FEET_PER_CUBIC_METER / LITERS_PER_CUBIC_METER,
                  "lps": GPD_PER_CFS * CUBIC_FEET_PER_CUBIC_METER / LITERS_PER_CUBIC_METER}
#: How the units of :data:`FLOW_UNITS_GPD` are named in messages.
FLOW_UNITS_TEXT = "gpd (a bare number), MGD, gpm, cfs or L/s (e.g. 35000, 0.05MGD, 35gpm)"
_FLOW = re.compile(r"^\s*([-+]?[0-9][0-9_,]*(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?|\.[0-9]+)\s*([A-Za-z/]*)\s*$")


def flow_gpd(text, field: str) -> tuple[float, str]:
    """A flow as a user writes it -> ``(gpd, the unit it was read in)``.

    ``"35000"`` is 35,000 gpd (a bare number is gpd, the unit of the program's flows: I/I Offset
    Program Tables 174-19.1 to 19.3 and section F); ``"0.05MGD"``, ``"35 gpm"``, ``"0.1cfs"``,
    ``"2 L/s"`` are converted by :data:`FLOW_UNITS_GPD`. Thousands separators (``,`` and ``_``) are
    allowed. Refused with an :class:`~capacitysim.errors.InputError` naming ``field``, the text and the
    units allowed: anything else (another unit, two numbers, text).
    """
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return float(text), "gpd"
    m = _FLOW.match(str(text))
    if m is None:
        raise InputError(f"{field}: flow {str(text)!r} is not a number with a unit; allowed: {FLOW_UNITS_TEXT}")
    number, unit = m.group(1).replace(",", "").replace("_", ""), (m.group(2) or "gpd").lower()
    if unit not in FLOW_UNITS_GPD:
        raise InputError(f"{field}: unit {m.group(2)!r} of {str(text)!r} is not a flow unit; allowed: {FLOW_UNITS_TEXT}")
    try:
        value = float(number)
    except ValueError:
        raise InputError(f"{field}: flow {str(text)!r} is not a number with a unit; allowed: {FLOW_UNITS_TEXT}") from None
    return value * FLOW_UNITS_GPD[unit], ("L/s" if unit in ("l/s", "lps") else "MGD" if unit == "mgd" else unit)
