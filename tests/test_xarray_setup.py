"""capacitysim.xarray_setup: xarray's first array no longer imports dask.array, and dask arrays stay dask arrays.

Each claim runs in a fresh interpreter (what a command's process is); the control runs plain xarray there and shows the
import the module saves.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from capacitysim.xarray_setup import defer_dask_array_check, xr

FIRST_RESULT = """
import json, sys
import numpy as np
{imp}
ds = xr.Dataset({{"max_depth_ft": (("node",), np.arange(3.0))}}, coords={{"node": ["a", "b", "c"]}})
ds = ds.where(ds.max_depth_ft > 0.5, drop=True).sel(node="b").load()
print(json.dumps({{"dask.array": "dask.array" in sys.modules, "value": float(ds.max_depth_ft)}}))
"""


def _fresh(imp: str) -> dict:
    out = subprocess.run([sys.executable, "-c", FIRST_RESULT.format(imp=imp)], capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout)


def test_a_first_result_imports_no_dask_array_and_plain_xarray_does():
    ours = _fresh("from capacitysim.xarray_setup import xr")
    plain = _fresh("import xarray as xr")
    assert ours == {"dask.array": False, "value": 1.0}
    assert plain == {"dask.array": True, "value": 1.0}, "xarray no longer imports dask.array: the module can go"


def test_dask_arrays_are_still_dask_arrays_once_dask_array_is_loaded():
    import dask.array as da

    x = xr.DataArray(da.arange(6.0, chunks=2), dims="time")
    assert isinstance(x.data, da.Array) and x.chunks == ((2, 2, 2),)  # wrapped lazily, not computed
    assert float((x * 2).sum().compute()) == 30.0
    assert isinstance(xr.DataArray(np.arange(3.0)).data, np.ndarray)


def test_xarrays_record_of_dask_answers_as_its_own():
    import dask
    from xarray.namedarray import pycompat

    assert defer_dask_array_check() is True  # installed at import (or xarray layout changed: this fails)
    assert str(pycompat.mod_version("dask")) == dask.__version__
    assert pycompat._get_cached_duck_array_module("dask").available is True


@pytest.mark.parametrize("cached", ["installed", "xarray's own"])
def test_it_never_replaces_a_record_xarray_already_made(monkeypatch, cached):
    from xarray.namedarray import pycompat

    cache = dict(pycompat._cached_duck_array_modules)
    if cached != "installed":
        cache["dask"] = pycompat.DuckArrayModule("dask")
    monkeypatch.setattr(pycompat, "_cached_duck_array_modules", cache)
    before = cache["dask"]
    assert defer_dask_array_check() is (cached == "installed")
    assert cache["dask"] is before
