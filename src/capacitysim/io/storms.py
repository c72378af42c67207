"""Design storm files (TOML): load, validate, turn into a hyetograph.

The bundled storms are package data (``capacitysim/data/storms``, the top-level ``storms/`` of a
checkout links to it), found by :func:`capacitysim.io.files.bundled_dir` through
:mod:`importlib.resources`, so ``--storm binghamton-1yr-24h`` works from an installed wheel.

A storm reference is one of (in this order): an existing storm file, the name of a bundled storm, or a
*storm spec* ``DIST:DEPTH[:DURATION]`` (:data:`SPEC_GRAMMAR`, :func:`parse_storm_spec`): an NRCS 24-hour
storm of a depth the user gives, e.g. ``type2:3.2in``, ``NRCS-II:3.2in:24h``, ``IA:80mm`` (issue 28, item 4).
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from pathlib import Path

from capacitysim.errors import DataFileError, InputError
from capacitysim.hydrology._inputs import MAX_PRECIP_IN
from capacitysim.hydrology.rainfall import design_storm
from capacitysim.hydrology.rainfall import NRCS_DURATION_HR, design_storm_depths
from capacitysim.io.files import bundled_dir, check_keys, path_exists, quoted, read_toml, require_text
from capacitysim.xarray_setup import xr

_REQUIRED = {"depth_in", "distribution", "source"}
#: Default time step of a storm file [min] (the 0.1-h step of the NRCS tabulations).
DEFAULT_DT_MIN = 6.0
_OPTIONAL = {"name", "location", "return_period_yr", "duration_hr", "dt_min", "purpose"}
#: Longest return period a storm file may state [yr]: published frequency estimates (NOAA Atlas 14)
#: stop at 1,000 years; 10,000 leaves room for a probable-maximum study, and more is a typing error.
MAX_RETURN_PERIOD_YR = 10_000.0


@dataclass(frozen=True)
class StormSpec:
    """A design storm as a file describes it."""

    name: str
    depth_in: float
    distribution: str
    duration_hr: float
    dt_min: float
    source: str
    location: str = ""
    return_period_yr: float | None = None
    path: str = ""
    #: What the storm is prescribed for, and by whom (e.g. quantifying inflow credits, Table 174-19.2).
    purpose: str = ""

    def hyetograph(self) -> xr.DataArray:
        """Incremental rainfall [in] per step (see :func:`capacitysim.hydrology.design_storm`)."""
        da = design_storm(self.depth_in, self.distribution, self.dt_min, self.duration_hr)
        da.attrs.update({"storm": self.name, "depth_source": self.source})
        return da


# --- storm specs: DIST:DEPTH[:DURATION] ----------------------------------------------------------------------

#: The grammar of a storm spec, in words (the help of ``--storm``, ``capacitysim list storms``, every error).
SPEC_GRAMMAR = ("DIST:DEPTH[:24h] - DIST an NRCS distribution I, IA, II or III (any case; also 1, 1A, 2, 3, and "
                "prefixed \"type\" or \"NRCS-\": type2, NRCS-II), DEPTH the 24-hour depth with its unit, in or mm "
                "(3.2in, 80mm), and an optional duration, 24h only (the NRCS distributions are 24-hour storms); "
                "e.g. type2:3.2in")
#: The source a spec's storm records.
SPEC_SOURCE = "NRCS TR-55 (1986) Appendix B distribution; depth given by the user"
#: Millimetres per inch (exact).
MM_PER_IN = 25.4
_SPEC_DIST = {"I": "I", "1": "I", "IA": "IA", "1A": "IA", "II": "II", "2": "II", "III": "III", "3": "III"}
_SPEC_PREFIX = re.compile(r"^(?:NRCS)?[\s_-]*(?:TYPE)?[\s_-]*", re.IGNORECASE)
_SPEC_QTY = re.compile(r"^\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?)\s*([a-z\"]*)\s*$", re.IGNORECASE)
#: Each unit's size as a divisor: the value divided by it is in inches (hours).
_DEPTH_UNITS = {"in": 1.0, "inch": 1.0, "inches": 1.0, '"': 1.0, "mm": MM_PER_IN}
_DURATION_UNITS = {"h": 1.0, "hr": 1.0, "hrs": 1.0, "hour": 1.0, "hours": 1.0, "min": 60.0}


def looks_like_storm_spec(ref) -> bool:
    """True when ``ref`` is text written as a spec (``DIST:DEPTH...``), not a path: it has a ``:`` and no
    folder separator and no ``.toml`` (``C:\\storms\\x.toml`` is a path)."""
    if not isinstance(ref, str):
        return False
    text = ref.strip()
    return ":" in text and "/" not in text and "\\" not in text and not text.lower().endswith(".toml")


class StormSpecError(InputError):
    """A malformed storm spec: ``problem`` is what is wrong with it (the message adds the grammar)."""

    def __init__(self, ref: str, problem: str):
        self.ref, self.problem = ref, problem
        super().__init__(f"storm spec {ref!r}: {problem}; a storm spec is {SPEC_GRAMMAR}")


def _spec_error(ref: str, what: str) -> StormSpecError:
    return StormSpecError(ref, what)


def parse_storm_spec(ref: str, *, dt_min: float = DEFAULT_DT_MIN) -> StormSpec:
    """A storm spec ``DIST:DEPTH[:DURATION]`` (:data:`SPEC_GRAMMAR`) as the :class:`StormSpec` a storm file
    with the same fields gives.

    Parameters
    ----------
    ref : str
        ``type2:3.2in``, ``NRCS-II:3.2in:24h``, ``ia:80mm``... Distribution I, IA, II, III (case-insensitive;
        arabic 1, 1A, 2, 3 too; an optional ``NRCS``/``type`` prefix); depth > 0 and <= 200 in, with its unit
        ``in`` or ``mm`` (mm are converted: 25.4 mm per inch); duration 24 h only.
    dt_min : float
        Time step of the hyetograph [min] (the storm files' default, 6).

    Returns
    -------
    StormSpec
        Named ``NRCS Type II 24-hour, 3.2 in``, source :data:`SPEC_SOURCE`, no file (``path`` "").

    Raises
    ------
    StormSpecError
        A malformed spec (an :class:`~capacitysim.errors.InputError`), naming the part that is wrong and the
        grammar.
    """
    text = str(ref).strip()
    parts = [p.strip() for p in text.split(":")]
    if len(parts) not in (2, 3) or not all(parts):
        raise _spec_error(text, "expected two or three parts separated by ':'")
    dist_text = _SPEC_PREFIX.sub("", parts[0], count=1).strip().upper()
    dist = _SPEC_DIST.get(dist_text)
    if dist is None:
        raise _spec_error(text, f"unknown distribution {parts[0]!r} (allowed: I, IA, II, III)")
    m = _SPEC_QTY.match(parts[1])
    if not m:
        raise _spec_error(text, f"depth {parts[1]!r} is not a number with a unit (3.2in, 80mm)")
    unit = m.group(2).lower()
    if unit not in _DEPTH_UNITS:
        raise _spec_error(text, f"depth {parts[1]!r} needs its unit, in or mm"
                                + (f" (got {m.group(2)!r})" if unit else ""))
    value = float(m.group(1))
    depth_in = value / _DEPTH_UNITS[unit]
    if not (math.isfinite(depth_in) and 0 < depth_in <= MAX_PRECIP_IN):
        raise _spec_error(text, f"depth must be > 0 and <= {MAX_PRECIP_IN:g} in ({MAX_PRECIP_IN * MM_PER_IN:g} mm); "
                                f"got {parts[1]!r}")
    if len(parts) == 3:
        d = _SPEC_QTY.match(parts[2])
        dunit = d.group(2).lower() if d else ""
        if not d or dunit not in _DURATION_UNITS:
            raise _spec_error(text, f"duration {parts[2]!r} is not a number of hours (24h)")
        hours = float(d.group(1)) / _DURATION_UNITS[dunit]
        if abs(hours - NRCS_DURATION_HR) > 1e-9:
            raise _spec_error(text, f"duration {parts[2]!r}: only 24h is allowed (the NRCS Type I, IA, II and III "
                                    "distributions are 24-hour storms)")
    shown = f"{value:g} mm ({depth_in:.3g} in)" if unit == "mm" else f"{depth_in:g} in"
    spec = StormSpec(name=f"NRCS Type {dist} 24-hour, {shown}", depth_in=depth_in, distribution=dist,
                     duration_hr=NRCS_DURATION_HR, dt_min=float(dt_min), source=SPEC_SOURCE)
    try:
        design_storm_depths(spec.depth_in, spec.distribution, spec.dt_min, spec.duration_hr)  # the same checks
    except InputError as exc:
        raise _spec_error(text, str(exc)) from None
    return spec


_RETURN_PERIOD = re.compile(r"\d+(?:\.\d+)?\s*[-_ ]?\s*(?:y|yr|yrs|year|years)\b", re.IGNORECASE)


def _not_found(ref) -> DataFileError:
    """What a reference that is neither a file, a bundled name nor a spec gets: everything it could be."""
    known = sorted(f.stem for f in bundled_dir("storms").glob("*.toml"))
    hint = ""
    if _RETURN_PERIOD.search(str(ref)):
        hint = (" A return period is not a storm by itself: give that storm's 24-hour depth for the site "
                "(NOAA Atlas 14) as a spec, e.g. type2:<depth>in, or write a storm file with its source.")
    return DataFileError(
        f"storm {str(ref)!r}: no such file, no bundled storm by that name, and not a storm spec. A storm is a "
        f"bundled storm (bundled: {', '.join(known) or 'none'}; capacitysim list storms), a storm TOML file "
        f"(path/to/storm.toml: docs/reference/storm.md), or a spec {SPEC_GRAMMAR}.{hint}")


def resolve_storm_path(ref: str | os.PathLike) -> Path:
    """A path to a storm file, or the name of a bundled one (``binghamton-1yr-24h``).

    Parameters
    ----------
    ref : str or os.PathLike
        An existing file (returned as given), else a name looked up as ``<name>.toml`` in
        ``bundled_dir("storms")``.

    Returns
    -------
    Path
        The storm file.

    Raises
    ------
    DataFileError
        Neither a file nor a bundled storm; the message lists the bundled names, the file form and the spec
        grammar (a storm spec has no file: :func:`load_storm` reads it).
    """
    p = Path(ref)
    if path_exists(p):
        return p
    candidate = bundled_dir("storms") / (p.name if p.suffix == ".toml" else f"{p.name}.toml")
    if path_exists(candidate):
        return candidate
    raise _not_found(ref)


def _number(data: dict, key: str, where: str, what: str, default: float | None = None) -> float:
    """A numeric key of a storm file as a float; text, booleans and arrays are a DataFileError."""
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise DataFileError(f"{where}: {key} must be {what}; got {quoted(value)}")
    try:
        return float(value)
    except OverflowError:  # a TOML integer longer than a float holds
        raise DataFileError(f"{where}: {key} must be {what} of a usable size; got {quoted(value)}") from None


def load_storm(ref: str | os.PathLike) -> StormSpec:
    """Load and validate a design storm: a file, a bundled name, or a storm spec (``type2:3.2in``,
    :func:`parse_storm_spec`); every problem of a file names the file and the key.

    The depth must be in (0, 200] in and the step must cut the 24 hours into at most 10^6 steps
    (:func:`capacitysim.hydrology.design_storm` checks both, before allocating).
    """
    try:
        path = resolve_storm_path(ref)
    except DataFileError:
        if looks_like_storm_spec(ref):
            return parse_storm_spec(str(ref))
        raise
    data = read_toml(path)
    where = str(path)
    check_keys(data, where, _REQUIRED, _OPTIONAL)
    depth = _number(data, "depth_in", where, "a number of inches")
    if not depth > 0:
        raise DataFileError(f"{where}: depth_in must be > 0 in; got {depth!r}")
    return_period = data.get("return_period_yr")
    if return_period is not None:
        return_period = _number(data, "return_period_yr", where, "a number of years")
        if not 0 < return_period <= MAX_RETURN_PERIOD_YR:
            raise DataFileError(
                f"{where}: return_period_yr must be > 0 and <= {MAX_RETURN_PERIOD_YR:,.0f} years; got {return_period!r}"
            )
    spec = StormSpec(
        name=require_text(where, "name", data.get("name", path.stem)),
        depth_in=depth,
        distribution=require_text(where, "distribution", data["distribution"]),
        duration_hr=_number(data, "duration_hr", where, "a number of hours", NRCS_DURATION_HR),
        dt_min=_number(data, "dt_min", where, "a number of minutes", DEFAULT_DT_MIN),
        source=require_text(where, "source", data["source"]),
        location=require_text(where, "location", data.get("location", "")),
        return_period_yr=return_period,
        path=str(path),
        purpose=require_text(where, "purpose", data.get("purpose", "")),
    )
    try:
        design_storm_depths(spec.depth_in, spec.distribution, spec.dt_min, spec.duration_hr)  # the checks, no xarray
    except InputError as exc:
        raise DataFileError(f"{where}: {exc}") from None
    return spec
