"""Design storm files (TOML): load, validate, turn into a hyetograph.

The bundled storms are package data (``capacitysim/data/storms``, the top-level ``storms/`` of a
checkout links to it), found by :func:`capacitysim.io.files.bundled_dir` through
:mod:`importlib.resources`, so ``--storm binghamton-1yr-24h`` works from an installed wheel.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import xarray as xr

from capacitysim.errors import DataFileError, InputError
from capacitysim.hydrology.rainfall import design_storm
from capacitysim.hydrology.rainfall import NRCS_DURATION_HR, design_storm_depths
from capacitysim.io.files import bundled_dir, check_keys, path_exists, quoted, read_toml, require_text

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
        Neither a file nor a bundled storm; the message lists the bundled names.
    """
    p = Path(ref)
    if path_exists(p):
        return p
    candidate = bundled_dir("storms") / (p.name if p.suffix == ".toml" else f"{p.name}.toml")
    if path_exists(candidate):
        return candidate
    known = sorted(f.stem for f in bundled_dir("storms").glob("*.toml"))
    raise DataFileError(f"storm {str(ref)!r}: no such file, and no bundled storm by that name (bundled: {', '.join(known)})")


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
    """Load and validate a design storm file; every problem names the file and the key.

    The depth must be in (0, 200] in and the step must cut the 24 hours into at most 10^6 steps
    (:func:`capacitysim.hydrology.design_storm` checks both, before allocating).
    """
    path = resolve_storm_path(ref)
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
