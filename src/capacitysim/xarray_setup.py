"""xarray as capacitysim uses it: ``from capacitysim.xarray_setup import xr``, one place that imports it.

xarray asks, for every array it wraps, whether the array is a dask array, and the first time it asks it imports
``dask.array`` to find out: about 0.5 s of CPU [measured: the first ``Dataset`` of a process took 0.61 s with the
import and 0.11 s without it, xarray 2026.9, dask 2026.8] in every process that reads a SWMM run, most of which never
touch dask (``capacitysim capacity`` runs its engines in child processes). An object is a ``dask.array.Array`` only
if ``dask.array`` has been imported, so the answer "not dask" is certain until then. :func:`defer_dask_array_check`
gives xarray that answer: its entry for dask reports ``dask.array.Array`` as soon as that module is loaded (a sweep or
a service job that makes dask arrays gets them recognised as before) and the empty type before. Where xarray's
internals are not the ones this was written for, nothing is changed (xarray keeps its own check).

References
----------
.. [1] xarray, ``xarray/namedarray/pycompat.py`` (``DuckArrayModule``, ``array_type``), github.com/pydata/xarray.
"""

from __future__ import annotations

import sys

import xarray as xr

__all__ = ["xr", "defer_dask_array_check"]


class _DaskArrayWhenLoaded:
    """xarray's record of the dask module, asked only when dask is loaded: ``type`` is ``(dask.array.Array,)`` once
    ``dask.array`` is imported and ``()`` before (when no dask array can exist); the rest is the real record."""

    def __init__(self, real_record):
        self._real_record = real_record  # xarray's DuckArrayModule class, built on first use of anything but .type
        self._record = None

    @property
    def type(self) -> tuple:
        module = sys.modules.get("dask.array")
        return (module.Array,) if module is not None and hasattr(module, "Array") else ()

    def __getattr__(self, name):  # module, version, available: xarray's own record
        if name.startswith("_"):
            raise AttributeError(name)
        if self._record is None:
            self._record = self._real_record("dask")
        return getattr(self._record, name)


def defer_dask_array_check() -> bool:
    """Install :class:`_DaskArrayWhenLoaded` as xarray's record of dask; True when installed (or already)."""
    try:
        from xarray.namedarray import pycompat
    except ImportError:  # another layout of xarray: its own check stays
        return False
    cache = getattr(pycompat, "_cached_duck_array_modules", None)
    real = getattr(pycompat, "DuckArrayModule", None)
    if not isinstance(cache, dict) or real is None or not callable(getattr(pycompat, "array_type", None)):
        return False
    if "dask" in cache:  # xarray has already looked (dask.array is loaded): nothing left to save
        return isinstance(cache["dask"], _DaskArrayWhenLoaded)
    cache["dask"] = _DaskArrayWhenLoaded(real)
    return True


defer_dask_array_check()
