"""The results store of a scenario sweep (Zarr), as a backend: its schema, creation, resume, writer and reader.

Like xarray's ``backends``, this module knows the format and nothing of how the scenarios are
computed: it never imports :mod:`capacitysim.workflows`. What it needs of a SWMM sweep's network
(basin outlets, plant, CSO outfalls, model name) it takes as plain values (``network``, see
:func:`result_variables`).

Layout
------
A Zarr store (format 2, with consolidated metadata: :func:`capacitysim.io.zarr_cells.create_empty_store`) holding a flat ``scenario`` dimension (C order over the
grid) and the grid's values: for ``product`` grids one coordinate per swept parameter, for ``zip``
grids ``param_<name>`` along ``scenario``. SWMM stores add the ``outlet`` and ``outfall``
dimensions. Attributes: ``sweep`` (JSON: kind, mode, grid, name, criteria and, for SWMM sweeps, the
spin-up: a store whose ``sweep`` differs is another sweep, never resumed), ``dims``, ``verdicts``
(the verdict codes), ``inputs`` (the files the sweep read) and, for SWMM sweeps, ``plant``,
``model`` and ``cso_outfalls``.

:func:`open_results` returns an :class:`xarray.Dataset` with one dimension per swept parameter
(``product``) or ``scenario`` (``zip``). Results are written by the driver as scenarios finish
(:class:`StoreWriter`); ``status`` (0 missing, 1 done, 2 failed) is written last, so a sweep
killed at any moment resumes by recomputing exactly the scenarios whose status is 0
(:func:`missing_indices`); until then a missing scenario has no verdict (never "fail":
:func:`open_results`). A scenario that raises is stored with status 2 and its message
(:func:`failed_record`). SWMM and detention stores also hold, per scenario, the criterion and
element of its first failed check (``failed_criterion``, ``failed_element``; "" when none failed);
SWMM stores written since issue 28 also hold the check that governs it, the failed check that used
the most of its margin (:data:`GOVERNING_VARS`: ``governing_criterion``, ``governing_element``,
``governing_ratio``, ``governing_value``, ``governing_limit``, ``governing_unit``). A store written
before lacks them and is read (and resumed) without them.

References
----------
.. [1] Zarr storage specification version 2; xarray ``Dataset.to_zarr`` / ``open_zarr``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from capacitysim.errors import DataFileError
from capacitysim.io.sweep_files import SweepSpec, sweep_inputs
from capacitysim.io.zarr_cells import (
    StatusLastWriter,
    create_empty_store,
    load_store,
    open_identified,
)
from capacitysim.rules.verdict import VERDICT_NAME

#: Status codes of a scenario in the store.
MISSING, DONE, FAILED = 0, 1, 2
#: Verdict codes: -1 none (failed or missing), 0 fail, 1 pass, 2 untrusted (continuity error).
VERDICTS = VERDICT_NAME  # the one coding of capacitysim.rules.verdict (pass = 1, fail = 0, untrusted = 2)
#: Characters kept of a failure or verdict message.
MESSAGE_CHARS = 240
#: Characters kept of a check's criterion and element (``failed_criterion``, ``failed_element``,
#: ``governing_criterion``, ``governing_element``).
CHECK_CHARS = 120
#: Characters kept of the governing check's unit (``governing_unit``).
UNIT_CHARS = 16
#: The governing check of a SWMM scenario (the failed check that used the most of its margin:
#: :func:`capacitysim.workflows.sweep.network_tasks.governing_check`): name -> (dtype, description).
#: Added after the first stores were written: a store of an older capacitysim lacks them.
GOVERNING_VARS = {
    "governing_criterion": (f"<U{CHECK_CHARS}", "criterion of the failed check that used the most of its margin ('' when none)"),
    "governing_element": (f"<U{CHECK_CHARS}", "element of the governing check"),
    "governing_ratio": ("float64", "share of its margin the governing check used, (after - before) / (limit - before); > 1 fails"),
    "governing_value": ("float64", "the governing check's value after the change (governing_unit)"),
    "governing_limit": ("float64", "the governing check's limit (governing_unit)"),
    "governing_unit": (f"<U{UNIT_CHARS}", "unit of governing_value and governing_limit"),
}

#: Results of a detention sweep (one float64 per scenario; a swept input is a dimension instead).
DETENTION_VARS = ("allowable_flow_cfs", "release_rate_cfs", "weighted_c", "required_volume_cf", "storage_provided_cf",
                  "system_height_ft", "orifice_diameter_in", "release_limit_in", "spill_limit_in", "peak_inflow_cfs",
                  "peak_outflow_cfs", "max_depth_ft", "max_storage_cf")
#: Results of a runoff sweep.
RUNOFF_VARS = ("runoff_depth_in", "runoff_volume_cf", "peak_flow_cfs", "time_to_peak_hr")
#: Scalar results of a SWMM scenario and their units (then ``outlet_peak_inflow_cfs`` per basin
#: outlet and ``outfall_volume_cf`` per outfall).
SWMM_VARS = (("plant_peak_inflow_cfs", "cfs"), ("max_q_over_qfull", "-"), ("flooding_volume_cf", "ft3"),
             ("cso_volume_cf", "ft3"), ("runoff_continuity_error_pct", "%"), ("flow_routing_continuity_error_pct", "%"),
             ("plant_peak_inflow_before_cfs", "cfs"), ("cso_volume_before_cf", "ft3"))


def store_outfalls(plant: str, cso_outfalls) -> list[str]:
    """The ``outfall`` dimension of a SWMM store: the plant and the CSO outfalls, sorted (no plant: "" left out)."""
    return sorted({plant, *cso_outfalls} - {""})


def failed_record(exc: BaseException | str) -> dict:
    """The store record of a scenario (or block) that raised: status failed, no verdict, its message."""
    msg = exc if isinstance(exc, str) else f"{type(exc).__name__}: {exc}"
    return {"status": FAILED, "verdict": -1, "message": str(msg)[:MESSAGE_CHARS]}


def result_variables(spec: SweepSpec, network: Mapping | None) -> dict[str, tuple]:
    """Variables of the store: name -> (extra dims, extra sizes, dtype, units/description).

    Parameters
    ----------
    spec : SweepSpec
    network : mapping, optional
        SWMM sweeps: ``outlets`` (basin outlets, plant first), ``plant`` ("" when none) and
        ``cso_outfalls`` of the network (``model``, its file name, is read by :func:`create_store`);
        None for detention and runoff sweeps.
    """
    base = {"status": ((), (), "int8", "0 missing, 1 done, 2 failed"),
            "verdict": ((), (), "int8", "-1 none, 0 fail, 1 pass, 2 untrusted"),
            "message": ((), (), f"<U{MESSAGE_CHARS}", "failure message or the verdict's reasons")}
    if spec.kind in ("swmm", "detention"):
        base["failed_criterion"] = ((), (), f"<U{CHECK_CHARS}", "criterion of the first failed check ('' when none)")
        base["failed_element"] = ((), (), f"<U{CHECK_CHARS}", "element (node, link, outfall, run, orifice...) of the first failed check")
    if spec.kind == "swmm":
        for k, (dtype, desc) in GOVERNING_VARS.items():
            base[k] = ((), (), dtype, desc)
        n_out = len(network["outlets"])
        outf = store_outfalls(network["plant"], network["cso_outfalls"])
        for k, u in SWMM_VARS:
            base[k] = ((), (), "float64", u)
        base["outlet_peak_inflow_cfs"] = (("outlet",), (n_out,), "float64", "cfs, peak inflow at each basin outlet")
        base["outfall_volume_cf"] = (("outfall",), (len(outf),), "float64", "ft3, volume at each outfall")
    else:
        for k in DETENTION_VARS if spec.kind == "detention" else RUNOFF_VARS:
            if k not in spec.grid:  # a swept input (orifice_diameter_in, weighted_c) is a dimension, not a result
                base[k] = ((), (), "float64", "")
    return base


def sweep_attrs(spec: SweepSpec) -> dict:
    """The store's ``sweep``, ``dims`` and ``verdicts`` attributes (JSON): what identifies the sweep."""
    meta = {"kind": spec.kind, "mode": spec.mode, "grid": [[k, v] for k, v in spec.grid.items()],
            "name": spec.name, "criteria": spec.criteria}
    if spec.kind == "swmm":
        # the runs' spin-up, prepended: a store written otherwise (older capacitysim) is another sweep, never resumed
        meta["spinup_hr"] = "default" if spec.spinup_hr is None else spec.spinup_hr
        meta["spinup"] = "prepended"
        # the scenarios judged by capacity's one judgement (issue 27: injected volumes, rain, noise, initial state);
        # a store judged before it holds other verdicts for the same runs: another sweep, never resumed
        meta["judgement"] = 2
    return {"sweep": json.dumps(meta),
            "dims": json.dumps(spec.dims), "verdicts": json.dumps(VERDICTS)}


def create_store(path: str | os.PathLike, spec: SweepSpec, network: Mapping | None, chunk: int) -> None:
    """Create the Zarr store (metadata and grid values only; scenarios stay unwritten = missing).

    ``network``: SWMM sweeps, ``model``, ``plant``, ``outlets`` and ``cso_outfalls`` of the network
    (:func:`result_variables`); None otherwise.
    """
    n = spec.n_scenarios
    chunk = max(1, min(chunk, n))
    data_vars = {}
    for name, (dims, sizes, dtype, desc) in result_variables(spec, network).items():
        fill = -1 if name == "verdict" else None
        data_vars[name] = (("scenario", *dims), (n, *sizes), dtype, fill, (chunk, *sizes), {"description": desc})
    coords = {}
    if spec.mode == "product":
        for k, v in spec.grid.items():
            coords[k] = (k, np.asarray(v))
    else:
        for k, v in spec.grid.items():
            coords[f"param_{k}"] = ("scenario", np.asarray(v))
    if spec.kind == "swmm":
        coords["outlet"] = ("outlet", np.asarray(network["outlets"]))
        coords["outfall"] = ("outfall", np.asarray(store_outfalls(network["plant"], network["cso_outfalls"])))
    attrs = sweep_attrs(spec)
    attrs["inputs"] = json.dumps(sweep_inputs(spec))  # what `summarize --report` must never overwrite
    if spec.kind == "swmm":
        attrs.update(plant=network["plant"], model=network["model"], cso_outfalls=json.dumps(list(network["cso_outfalls"])))
    create_empty_store(path, data_vars, coords, attrs)


def missing_indices(path: str | os.PathLike, spec: SweepSpec) -> np.ndarray:
    """Flat indices of the scenarios still missing in an existing store (checks it is this sweep)."""
    g, stored = open_identified(path, "sweep", "sweep results store", "--resume continues a store that `sweep run` wrote")
    want = json.loads(sweep_attrs(spec)["sweep"])
    if stored != want:
        raise DataFileError(f"{path}: holds another sweep (grid, kind or criteria differ); use a new --out or remove it")
    status = g["status"][:]
    return np.flatnonzero(status == MISSING)


class StoreWriter(StatusLastWriter):
    """Writes finished scenarios into the store (status last: a half-written scenario stays missing).

    ``names``: the result variables (a store of an older capacitysim may lack one, e.g.
    ``failed_criterion``: it is left out). The writer is :class:`capacitysim.io.zarr_cells.StatusLastWriter`,
    shared with the headroom store.
    """

    def __init__(self, path, names):
        super().__init__(path, names, sel_dims=1)

    def write(self, sl: slice, rec: dict) -> None:
        super().write(sl, rec, (sl.stop - sl.start,))


def open_results(path: str | os.PathLike):
    """The sweep's results as an xarray.Dataset with one dimension per swept parameter (product
    grids) or ``scenario`` (zip), ``verdict`` as text ("pass", "fail", "untrusted", "" when failed
    or missing) and ``status`` as text ("done", "failed", "missing")."""
    from capacitysim.xarray_setup import xr

    p = Path(path)
    flat = load_store(p, "sweep", "sweep results")
    try:
        meta = json.loads(flat.attrs["sweep"])
        meta["grid"] = dict(meta["grid"])  # file order (the flat index is C order over it)
        codes = {int(k): v for k, v in json.loads(flat.attrs["verdicts"]).items()}
        status = np.asarray(flat.status.values).astype(int)
        verdict = np.asarray(flat.verdict.values).astype(int)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise DataFileError(f"{p}: not a sweep results store (its attributes do not parse: {type(exc).__name__}: {exc})") from None
    if not np.isin(status, (MISSING, DONE, FAILED)).all():
        raise DataFileError(f"{p}: status holds codes other than {MISSING} (missing), {DONE} (done), {FAILED} (failed)")
    # a verdict exists only for a done scenario: a missing one's chunk may read the store's fill
    # value (0, "fail") where it was never written; missing is not fail
    verdict = np.where(status == DONE, verdict, -1)
    flat["verdict"] = ("scenario", np.array([codes.get(int(c), "") for c in verdict], dtype=object))
    flat["status"] = ("scenario", np.array([("missing", "done", "failed")[int(s)] for s in status], dtype=object))
    for name in ("message", "failed_criterion", "failed_element", "governing_criterion", "governing_element",
                 "governing_unit"):
        if name in flat:
            flat[name] = flat[name].astype(object).where(status != MISSING, "")
    if meta["mode"] == "zip":
        return flat.rename({f"param_{k}": k for k in meta["grid"]}).set_coords(list(meta["grid"]))
    dims = list(meta["grid"])
    shape = tuple(len(v) for v in meta["grid"].values())
    out = {}
    for name, var in flat.data_vars.items():
        rest = var.dims[1:]
        out[name] = (dims + list(rest), var.values.reshape(shape + var.shape[1:]), var.attrs)
    coords = {k: flat[k].values for k in dims}
    for extra in ("outlet", "outfall"):
        if extra in flat.coords:
            coords[extra] = flat[extra].values
    return xr.Dataset(out, coords=coords, attrs=flat.attrs)
