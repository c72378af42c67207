"""The one Zarr writer of the stores written as results finish (a sweep's scenarios, headroom's cells).

Both stores (:mod:`capacitysim.io.sweep_store`, :mod:`capacitysim.io.headroom_store`) are created
empty (metadata and fill values only, :func:`create_empty_store`) and then filled record by record
while a computation runs (:class:`StatusLastWriter`): every variable of a record first, ``status``
last, so a process killed at any moment leaves each record either complete or still missing
(status 0), and a resumed run recomputes exactly the missing ones.

Layout: Zarr format 2 with consolidated metadata (``.zmetadata``), written once when the store is
created: records only write chunks, never metadata, so the index stays true while a computation
fills the store, and ``xarray.open_zarr(store)`` opens it without its warning on stores that have
none. The stores are read with ``consolidated=False`` (:func:`load_store`): a store of an older
capacitysim (no index) reads the same.

References
----------
.. [1] Zarr storage specification version 2; xarray ``Dataset.to_zarr(compute=False)``.
"""

from __future__ import annotations

import os

import numpy as np

#: The variable written last of every record.
STATUS = "status"


def fill_value(dtype) -> object:
    """The value of a cell never written: NaN for floats, "" for text, 0 for integers."""
    dt = np.dtype(dtype)
    return np.nan if dt.kind == "f" else ("" if dt.kind == "U" else 0)


def create_empty_store(path: str | os.PathLike, data_vars: dict, coords: dict, attrs: dict) -> None:
    """Write a store's metadata and fill values only (nothing computed yet: every status 0).

    Parameters
    ----------
    data_vars : dict
        name -> (dims, shape, dtype, fill, chunks, attrs); ``fill`` None: :func:`fill_value`.
    coords, attrs :
        As :class:`xarray.Dataset` takes them.
    """
    import dask.array as da
    from capacitysim.xarray_setup import xr

    arrays, encoding = {}, {}
    for name, (dims, shape, dtype, fill, chunks, var_attrs) in data_vars.items():
        fill = fill_value(dtype) if fill is None else fill
        arrays[name] = (dims, da.full(shape, fill, dtype=dtype, chunks=chunks), var_attrs)
        encoding[name] = {"chunks": chunks}
    ds = xr.Dataset(arrays, coords=coords, attrs=attrs)
    # consolidated: the metadata never changes after this (records write chunks only), so the index stays true
    ds.to_zarr(str(path), mode="w", compute=False, encoding=encoding, zarr_format=2, consolidated=True)


class StatusLastWriter:
    """Writes finished records into an existing store, ``status`` last (a half-written record stays missing).

    Parameters
    ----------
    path : path
        The store.
    names : list of str, optional
        The variables written (default every array of the store); a name the store lacks (a store
        of an older capacitysim) is left out.
    sel_dims : int
        How many leading dimensions a selection of :meth:`write` indexes (1: a sweep's ``scenario``
        slice; 2: headroom's ``(node, storm)`` cell).
    """

    def __init__(self, path, names=None, sel_dims: int = 1):
        import zarr

        self.g = zarr.open_group(str(path), mode="r+")
        names = list(self.g.array_keys()) if names is None else list(names)
        self.arrays = {k: self.g[k] for k in names if k in self.g}
        self.order = [k for k in self.arrays if k != STATUS] + ([STATUS] if STATUS in self.arrays else [])
        self.sel_dims = sel_dims

    def write(self, sel, rec: dict, lead_shape: tuple = ()) -> None:
        """Write ``rec``'s values at ``sel`` (broadcast to ``lead_shape`` + the variable's own trailing dims).

        A value None is the variable's fill value; text is cut to the variable's width.
        """
        for k in self.order:
            if k not in rec:
                continue
            arr = self.arrays[k]
            v = rec[k]
            if v is None:
                v = fill_value(arr.dtype)
            if arr.dtype.kind == "U" and isinstance(v, str):
                v = v[: arr.dtype.itemsize // 4]
            shape = tuple(lead_shape) + tuple(arr.shape[self.sel_dims:])
            arr[sel] = np.broadcast_to(np.asarray(v, dtype=arr.dtype), shape)


def open_identified(path: str | os.PathLike, attr: str, what: str, hint: str):
    """An existing store opened for reading and the identity it holds (its JSON attribute ``attr``).

    Returns ``(group, identity)``: the caller compares the identity with its own run's (a store of
    another run is never resumed).

    Raises
    ------
    capacitysim.errors.DataFileError
        ``path`` is no Zarr store, its attribute does not parse, or it lacks the attribute or the
        ``status`` array (``what`` names the kind of store, ``hint`` says which command writes one).
    """
    import json

    import zarr

    from capacitysim.errors import DataFileError

    try:
        g = zarr.open_group(str(path), mode="r")
        identity = json.loads(g.attrs.get(attr, "null"))
    except Exception as exc:  # noqa: BLE001 - a folder that is no Zarr store, an unreadable attribute
        raise DataFileError(f"{path}: not a {what} ({type(exc).__name__}); {hint}") from None
    if identity is None or STATUS not in g:
        raise DataFileError(f"{path}: not a {what} (no {attr} attribute or {STATUS} array); {hint}")
    return g, identity


def load_store(path: str | os.PathLike, attr: str, what: str):
    """A whole store loaded as an :class:`xarray.Dataset` (raw codes), checked to carry its identity ``attr``.

    Raises
    ------
    capacitysim.errors.DataFileError
        Nothing at ``path``, no readable Zarr store, or no ``attr`` attribute (``what`` names the kind of store).
    """
    from pathlib import Path

    from capacitysim.xarray_setup import xr

    from capacitysim.errors import DataFileError

    p = Path(path)
    if not p.exists():
        raise DataFileError(f"{p}: no {what} here")
    try:
        ds = xr.open_zarr(str(p), consolidated=False).load()
    except Exception as exc:  # noqa: BLE001
        raise DataFileError(f"{p}: not a {what} store ({exc})") from None
    if attr not in ds.attrs:
        raise DataFileError(f"{p}: not a {what} store (no {attr} attribute)")
    return ds
