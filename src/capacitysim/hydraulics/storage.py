"""Stage-storage tables of detention systems: blue roofs, subsurface tanks and chambers (open or
closed bottom), and ponds; batched over designs (one row per design).

A system is described by its wetted (storage) area as a function of depth above its bottom; the
stored volume is the trapezoidal integral of that area over depth, the same rule EPA SWMM 5 applies
to a TABULAR storage curve, so a table here and the storage node built from it hold the same
volume. Every table extends ``extension`` times its height above the top with vertical walls of
the top area: a routed stage above the top is an overtopping to report, not a clipped value.

References
----------
.. [1] FHWA (2009), HEC-22 Urban Drainage Design Manual, 3rd ed., § 8.3 (stage-storage relationships;
   prismoidal and average-end-area volumes).
.. [2] Rossman, L.A. (2017), SWMM Reference Manual Vol. II - Hydraulics, § 3.2 (storage units: surface
   area versus depth curves).
.. [3] NYC DEP (2012), Guidelines for the Design and Construction of Stormwater Management Systems
   (system types: rooftop "blue roof" detention, subsurface tanks and chambers, open-bottom systems
   with infiltration) - cited for the system types only; body text not verified.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from capacitysim.checks import MAX_BATCH_VALUES, check_range, check_steps
from capacitysim.errors import InputError
from capacitysim.units import INCHES_PER_FOOT

#: Default number of table points between the bottom and the top of a system.
DEFAULT_POINTS = 41
#: Default extension of each table above the top, as a fraction of the height.
DEFAULT_EXTENSION = 1.0
#: Most points of one stage-storage table [-]: 10,000 points resolve a 100-ft system to 0.01 ft; the
#: routing interpolates in the table at every time step, so more only costs time and memory.
MAX_TABLE_POINTS = 10_000
#: Largest extension of a table above the top, as a fraction of the height [-]: a routed stage ten
#: heights above the top is an overtopping long past reporting.
MAX_EXTENSION = 10.0


@dataclass(frozen=True)
class StageStorage:
    """Stage-storage tables of n designs on K points.

    Attributes
    ----------
    depth_ft : ndarray, shape (n, K)
        Depth above the system bottom [ft], strictly increasing along K.
    area_sf : ndarray, shape (n, K)
        Storage (water surface x porosity) area at each depth [ft^2].
    storage_cf : ndarray, shape (n, K)
        Stored volume [ft^3], the trapezoidal integral of ``area_sf``.
    top_ft : ndarray, shape (n,)
        Height of the system (the overtopping level) [ft].
    footprint_sf : ndarray, shape (n,)
        Bottom footprint area [ft^2] (the infiltrating area of an open-bottom system).
    """

    depth_ft: np.ndarray
    area_sf: np.ndarray
    storage_cf: np.ndarray
    top_ft: np.ndarray
    footprint_sf: np.ndarray

    @property
    def capacity_cf(self) -> np.ndarray:
        """Volume stored at the top [ft^3], shape (n,)."""
        return volume_at_depth_cf(self, self.top_ft)


def volume_from_area_cf(depth_ft, area_sf):
    """Cumulative trapezoidal integral of area over depth [ft^3] along the last axis.

    References
    ----------
    HEC-22 (2009) § 8.3 (average-end-area method); SWMM Reference Manual Vol. II § 3.2.
    """
    d = np.asarray(depth_ft, dtype=float)
    a = np.asarray(area_sf, dtype=float)
    inc = 0.5 * (a[..., 1:] + a[..., :-1]) * np.diff(d, axis=-1)
    return np.concatenate([np.zeros(inc.shape[:-1] + (1,)), np.cumsum(inc, axis=-1)], axis=-1)


def _grid(top_ft, points, extension):
    """Depths of n tables: ``points`` from bottom to top, then ``extension`` x the height above it.

    Refuses (before allocating) fewer than 3 or more than :data:`MAX_TABLE_POINTS` points, an
    extension outside [0, :data:`MAX_EXTENSION`], and more than
    :data:`~capacitysim.checks.MAX_BATCH_VALUES` values in all.
    """
    top = np.atleast_1d(check_range("depth_ft", top_ft, 0.0, low_inclusive=False, unit="ft"))
    pts = float(check_range("points", points, 3.0, MAX_TABLE_POINTS))
    if pts != int(pts):
        raise InputError(f"points must be a whole number in [3, {MAX_TABLE_POINTS:,}]; got {points!r}")
    ext = float(check_range("extension", extension, 0.0, MAX_EXTENSION))
    n_top = int(pts)
    check_steps(top.size * n_top * (1.0 + ext), "the stage-storage tables", f"{top.size:,} designs x {n_top:,} points, extension {ext:g}",
                limit=MAX_BATCH_VALUES, unit="values", hint="fewer designs per call or fewer points")
    frac = np.linspace(0.0, 1.0, n_top)
    n_ext = max(int(np.ceil(ext * (n_top - 1))), 1 if ext > 0 else 0)
    if n_ext:
        frac = np.concatenate([frac, 1.0 + ext * np.arange(1, n_ext + 1) / n_ext])
    return top, top[:, None] * frac[None, :]


def _per_design(**arrays) -> list[np.ndarray]:
    """The per-design inputs broadcast to one 1-D shape (n,), or an InputError naming their shapes."""
    from capacitysim.hydrology._inputs import broadcast_shape

    shape = broadcast_shape(**arrays)
    if len(shape) > 1:
        raise InputError(f"the sizes of the designs must be scalars or 1-D arrays (one value per design); got shape {shape}")
    return [np.broadcast_to(np.atleast_1d(np.asarray(a, dtype=float)), shape or (1,)) for a in arrays.values()]


def _build(depth, area, top, footprint):
    return StageStorage(depth, area, volume_from_area_cf(depth, area), top, footprint)


def prism_table(length_ft, width_ft, height_ft, porosity=1.0, points=DEFAULT_POINTS, extension=DEFAULT_EXTENSION):
    """A vertical-walled system: tank (porosity 1) or stone / chamber bed (porosity < 1).

    Parameters
    ----------
    length_ft, width_ft : float or array_like, shape (n,)
        Plan dimensions [ft], > 0.
    height_ft : float or array_like, shape (n,)
        Storage height from bottom to the overtopping level [ft], > 0.
    porosity : float or array_like, default 1
        Void fraction of the storage [-], in (0, 1]: 1 for an open tank, about 0.4 for a stone bed
        (the value of the product or the geotechnical report; no default is assumed for stone).
    """
    l_ft = check_range("length_ft", length_ft, 0.0, low_inclusive=False, unit="ft")
    w_ft = check_range("width_ft", width_ft, 0.0, low_inclusive=False, unit="ft")
    por = check_range("porosity", porosity, 0.0, 1.0, low_inclusive=False)
    l_ft, w_ft, por, height_ft = _per_design(length_ft=l_ft, width_ft=w_ft, porosity=por, height_ft=height_ft)
    top, depth = _grid(height_ft, points, extension)
    footprint = np.broadcast_to(np.atleast_1d(l_ft * w_ft), top.shape).astype(float)
    area = np.broadcast_to((footprint * np.broadcast_to(np.atleast_1d(por), top.shape))[:, None], depth.shape).copy()
    return _build(depth, area, top, footprint)


def blue_roof_table(roof_area_sf, max_depth_ft, points=DEFAULT_POINTS, extension=DEFAULT_EXTENSION):
    """A blue roof: water ponded on a flat roof area up to the overflow (parapet scupper) level.

    Parameters
    ----------
    roof_area_sf : float or array_like, shape (n,)
        Ponding area of the roof [ft^2], > 0.
    max_depth_ft : float or array_like, shape (n,)
        Ponding depth at the overflow [ft], > 0 (structural limit given by the engineer).
    """
    a = check_range("roof_area_sf", roof_area_sf, 0.0, low_inclusive=False, unit="ft2")
    a, max_depth_ft = _per_design(roof_area_sf=a, max_depth_ft=max_depth_ft)
    top, depth = _grid(max_depth_ft, points, extension)
    footprint = np.broadcast_to(np.atleast_1d(a), top.shape).astype(float)
    area = np.broadcast_to(footprint[:, None], depth.shape).copy()
    return _build(depth, area, top, footprint)


def pond_table(bottom_length_ft, bottom_width_ft, side_slope_h_per_v, depth_ft, points=DEFAULT_POINTS, extension=DEFAULT_EXTENSION):
    """A rectangular pond with side slopes z (horizontal per vertical): A(h) = (L + 2 z h)(W + 2 z h).

    Above the top the walls are vertical at the top area (overtopping). The trapezoidal volume of
    the table differs from the exact prismoidal volume by O((dz)^2) per step (HEC-22 § 8.3).
    """
    l_ft = check_range("bottom_length_ft", bottom_length_ft, 0.0, low_inclusive=False, unit="ft")
    w_ft = check_range("bottom_width_ft", bottom_width_ft, 0.0, low_inclusive=False, unit="ft")
    z = check_range("side_slope_h_per_v", side_slope_h_per_v, 0.0)
    l_ft, w_ft, z, depth_ft = _per_design(bottom_length_ft=l_ft, bottom_width_ft=w_ft, side_slope_h_per_v=z, depth_ft=depth_ft)
    top, depth = _grid(depth_ft, points, extension)
    l_ft, w_ft, z = (np.broadcast_to(np.atleast_1d(v), top.shape)[:, None] for v in (l_ft, w_ft, z))
    h = np.minimum(depth, top[:, None])
    area = (l_ft + 2 * z * h) * (w_ft + 2 * z * h)
    footprint = (l_ft * w_ft)[:, 0]
    return _build(depth, area, top, footprint)


def rowwise_interp(x, xp, fp):
    """Linear interpolation of x (n,) in each row of increasing xp (n, K) -> fp (n, K); clamped at the ends."""
    x = np.asarray(x, dtype=float)
    xp = np.asarray(xp, dtype=float)
    fp = np.asarray(fp, dtype=float)
    k = xp.shape[-1]
    idx = np.clip((xp <= x[..., None]).sum(axis=-1) - 1, 0, k - 2)
    x0 = np.take_along_axis(xp, idx[..., None], -1)[..., 0]
    x1 = np.take_along_axis(xp, idx[..., None] + 1, -1)[..., 0]
    f0 = np.take_along_axis(fp, idx[..., None], -1)[..., 0]
    f1 = np.take_along_axis(fp, idx[..., None] + 1, -1)[..., 0]
    w = np.clip((x - x0) / np.where(x1 > x0, x1 - x0, 1.0), 0.0, 1.0)
    return f0 + w * (f1 - f0)


def volume_at_depth_cf(table: StageStorage, depth_ft):
    """Stored volume at given depths [ft^3], interpolated in each design's table; shape (n,)."""
    d = np.broadcast_to(np.asarray(depth_ft, dtype=float), table.top_ft.shape)
    return rowwise_interp(d, table.depth_ft, table.storage_cf)


def stack_tables(tables: list[StageStorage]) -> StageStorage:
    """Stack tables with the same number of points into one batch."""
    k = {t.depth_ft.shape[1] for t in tables}
    if len(k) != 1:
        raise InputError(f"tables must have the same number of points to be stacked; got {sorted(k)}")
    return StageStorage(*(np.concatenate([getattr(t, f) for t in tables]) for f in ("depth_ft", "area_sf", "storage_cf", "top_ft", "footprint_sf")))


def system_table(system: dict, points: int) -> StageStorage:
    """The stage-storage table of a detention system described by a site file's ``[system]`` table.

    Parameters
    ----------
    system : dict
        ``type`` (``blue_roof``, ``tank``, ``chamber`` or ``pond``) and its dimensions: roof area [ft2]
        and max depth [in]; length, width, height [ft] (and porosity [-] of a chamber); bottom
        length and width [ft], side slope [H:V] and depth [ft] of a pond. Values may be arrays (n,).
    points : int
        Points of the table.

    Returns
    -------
    StageStorage

    References
    ----------
    HEC-22 (2009) § 8.3 (stage-storage by average end area); NYC DEP (2012), Guidelines for the Design
    and Construction of Stormwater Management Systems, ch. 4 (blue roofs, tanks, chambers).
    """
    t = system["type"]
    if t == "blue_roof":
        return blue_roof_table(system["roof_area_sf"], system["max_depth_in"] / INCHES_PER_FOOT, points)
    if t == "tank":
        return prism_table(system["length_ft"], system["width_ft"], system["height_ft"], 1.0, points)
    if t == "chamber":
        return prism_table(system["length_ft"], system["width_ft"], system["height_ft"], system["porosity"], points)
    return pond_table(system["bottom_length_ft"], system["bottom_width_ft"], system["side_slope_h_per_v"], system["depth_ft"], points)
