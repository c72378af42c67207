"""Design storm files (TOML) in ``storms/``: load, validate, turn into a hyetograph."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import xarray as xr

from capacitysim.errors import DataFileError, InputError
from capacitysim.hydrology import design_storm
from capacitysim.io.files import bundled_dir, check_keys, read_toml

_REQUIRED = {"depth_in", "distribution", "source"}
_OPTIONAL = {"name", "location", "return_period_yr", "duration_hr", "dt_min"}


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

    def hyetograph(self) -> xr.DataArray:
        """Incremental rainfall [in] per step (see :func:`capacitysim.hydrology.design_storm`)."""
        da = design_storm(self.depth_in, self.distribution, self.dt_min, self.duration_hr)
        da.attrs.update({"storm": self.name, "depth_source": self.source})
        return da


def resolve_storm_path(ref: str | os.PathLike) -> Path:
    """A path to a storm file, or the name of a bundled one (``binghamton-1yr-24h``)."""
    p = Path(ref)
    if p.exists():
        return p
    candidate = bundled_dir("storms") / (p.name if p.suffix == ".toml" else f"{p.name}.toml")
    if candidate.exists():
        return candidate
    known = sorted(f.stem for f in bundled_dir("storms").glob("*.toml"))
    raise DataFileError(f"storm {str(ref)!r}: no such file, and no bundled storm by that name (bundled: {', '.join(known)})")


def load_storm(ref: str | os.PathLike) -> StormSpec:
    """Load and validate a design storm file; every problem names the file and the key."""
    path = resolve_storm_path(ref)
    data = read_toml(path)
    where = str(path)
    check_keys(data, where, _REQUIRED, _OPTIONAL)
    try:
        depth = float(data["depth_in"])
    except (TypeError, ValueError):
        raise DataFileError(f"{where}: depth_in must be a number of inches; got {data['depth_in']!r}") from None
    if not depth > 0:
        raise DataFileError(f"{where}: depth_in must be > 0 in; got {depth!r}")
    spec = StormSpec(
        name=str(data.get("name", path.stem)),
        depth_in=depth,
        distribution=str(data["distribution"]),
        duration_hr=float(data.get("duration_hr", 24.0)),
        dt_min=float(data.get("dt_min", 6.0)),
        source=str(data["source"]),
        location=str(data.get("location", "")),
        return_period_yr=data.get("return_period_yr"),
        path=str(path),
    )
    try:
        spec.hyetograph()
    except InputError as exc:
        raise DataFileError(f"{where}: {exc}") from None
    return spec
