"""The results store of a headroom run (Zarr, node x storm) and its CSV and GeoJSON exports.

Like :mod:`capacitysim.io.sweep_store` (whose Zarr writer it shares: :mod:`capacitysim.io.zarr_cells`), this module knows the format and nothing of how the figures
are computed (it never imports :mod:`capacitysim.workflows`).

Layout
------
A Zarr store (format 2, not consolidated) with dimensions ``node`` and ``storm`` (the storm labels
the command was given) and, per cell: ``max_connection_gpd``, ``passing_gpd``, ``failing_gpd``,
``screen_gpd`` [gpd]; ``bounded`` (0/1); ``runs`` (SWMM runs of the cell, the shared run before not
counted), ``runs_stopped`` (those that stopped once their failure was certain) and ``simulated_hr``
(hours they simulated); ``result`` (``ok`` bracketed, ``bounded``, ``zero`` fails with any connection,
``untrusted``, ``error``); the governing check at the smallest failing flow (``governing_criterion``,
``governing_element``, ``governing_value``, ``governing_limit``, ``governing_unit``, ``governing_stopped_hr``); the screen's
element (``screen_element``) and a ``message``. ``status`` (0 missing, 1 done, 2 error, 3
untrusted) is written last, so a run killed at any moment resumes by recomputing exactly the cells
whose status is 0. The attribute ``headroom`` (JSON) identifies the run (model SHA-256, storms,
criteria, tolerance, flow bounds, remediations, method): a store whose ``headroom`` differs is
another run, never resumed.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
from pathlib import Path

import numpy as np

from capacitysim.errors import DataFileError
from capacitysim.files import atomic_write_text
from capacitysim.io.zarr_cells import (
    StatusLastWriter,
    create_empty_store,
    fill_value,
    load_store,
    open_identified,
)

#: Status codes of a cell.
MISSING, DONE, FAILED, UNTRUSTED = 0, 1, 2, 3
STATUS_NAMES = {MISSING: "missing", DONE: "done", FAILED: "error", UNTRUSTED: "untrusted"}
#: Characters kept of texts.
MESSAGE_CHARS = 240
CHECK_CHARS = 120

#: Variables of a cell: name -> (dtype, description).
VARIABLES = {
    "max_connection_gpd": ("float64", "gpd, largest average connection that passes every criterion (0: fails with any)"),
    "passing_gpd": ("float64", "gpd, a flow that passed (a real run)"),
    "failing_gpd": ("float64", "gpd, a flow that failed (a real run); NaN when bounded"),
    "bounded": ("int8", "1 when the largest flow searched (max_gpd) passes"),
    "runs": ("int32", "SWMM runs of this cell (the shared run before not counted)"),
    "runs_stopped": ("int32", "runs of this cell that stopped once their failure was certain"),
    "simulated_hr": ("float64", "hr, simulated by the runs of this cell"),
    "result": ("<U12", "ok | bounded | zero | untrusted | error"),
    "governing_criterion": (f"<U{CHECK_CHARS}", "criterion of the governing check at failing_gpd"),
    "governing_element": (f"<U{CHECK_CHARS}", "element of the governing check"),
    "governing_value": ("float64", "value of the governing check at failing_gpd"),
    "governing_limit": ("float64", "limit of the governing check"),
    "governing_unit": ("<U24", "unit of governing_value and governing_limit"),
    "governing_stopped_hr": ("float64", "hr, when the failing run stopped once its failure was certain (NaN: ran to its end)"),
    "screen_gpd": ("float64", "gpd, the screen's estimate from the run before"),
    "screen_element": (f"<U{CHECK_CHARS}", "the element (criterion|element) that gives the screen's estimate"),
    "message": (f"<U{MESSAGE_CHARS}", "why a cell is untrusted or failed"),
    "status": ("int8", "0 missing, 1 done, 2 error, 3 untrusted"),
}


def create_store(path: str | os.PathLike, nodes, storms, identity: dict, attrs: dict | None = None, chunk: int = 64) -> None:
    """Create the store: coordinates and attributes only, every cell missing."""
    nn, ns = len(nodes), len(storms)
    ch = (max(1, min(chunk, nn)), max(1, ns))
    data_vars = {name: (("node", "storm"), (nn, ns), dtype, None, ch, {"description": desc})
                 for name, (dtype, desc) in VARIABLES.items()}
    coords = {"node": np.asarray(list(nodes), dtype=str), "storm": np.asarray(list(storms), dtype=str)}
    create_empty_store(path, data_vars, coords,
                       {"headroom": json.dumps(identity, sort_keys=True), **{k: json.dumps(v) for k, v in (attrs or {}).items()}})


def store_status(path: str | os.PathLike, identity: dict) -> np.ndarray:
    """Status (node x storm) of an existing store, after checking it holds this run."""
    g, stored = open_identified(path, "headroom", "headroom results store",
                                "--resume continues a store that `capacitysim headroom --out` wrote")
    want = json.loads(json.dumps(identity, sort_keys=True))
    if stored != want:
        diff = sorted(k for k in set(stored) | set(want) if stored.get(k) != want.get(k))
        raise DataFileError(f"{path}: holds another headroom run ({', '.join(diff)} differ); use a new --out or remove it")
    return np.asarray(g["status"][:])


class StoreWriter(StatusLastWriter):
    """Writes finished cells (status last: a half-written cell stays missing); the writer shared with
    the sweep store (:class:`capacitysim.io.zarr_cells.StatusLastWriter`)."""

    def __init__(self, path):
        super().__init__(path, list(VARIABLES), sel_dims=2)

    def write(self, i: int, j: int, cell: dict) -> None:
        super().write((i, j), cell)

    def write_screen(self, j: int, rows, gpd, elements) -> None:
        """The screen's estimates of storm ``j`` at node indices ``rows`` (one column read and written once; the
        cells' status is left as it is: a screened cell is still missing, its figure unconfirmed)."""
        rows = np.asarray(list(rows), dtype=int)
        if rows.size == 0:
            return
        for name, values in (("screen_gpd", gpd), ("screen_element", elements)):
            arr = self.arrays.get(name)
            if arr is None:
                continue
            col = np.asarray(arr[:, j])
            vals = [fill_value(arr.dtype) if v is None else (v[: arr.dtype.itemsize // 4] if isinstance(v, str) else v)
                    for v in values]
            col[rows] = np.asarray(vals, dtype=arr.dtype)
            arr[:, j] = col


def cell_of(rec: dict) -> dict:
    """A node result (``NodeSearch.record``) as a store cell."""
    gov = rec.get("governing_check") or {}
    status = {"ok": DONE, "bounded": DONE, "zero": DONE, "untrusted": UNTRUSTED}.get(rec["status"], FAILED)
    return {"max_connection_gpd": rec.get("max_connection_gpd"), "passing_gpd": rec.get("passing_gpd"),
            "failing_gpd": rec.get("failing_gpd"), "bounded": int(bool(rec.get("bounded"))), "runs": int(rec.get("runs", 0)),
            "runs_stopped": int(rec.get("runs_stopped") or 0), "simulated_hr": rec.get("simulated_hr"),
            "governing_stopped_hr": gov.get("stopped_hr"), "result": rec["status"], "governing_criterion": gov.get("criterion") or "",
            "governing_element": gov.get("element") or "", "governing_value": gov.get("value"),
            "governing_limit": gov.get("limit"), "governing_unit": gov.get("unit") or "",
            "screen_gpd": rec.get("screen_gpd"), "screen_element": rec.get("screen_element") or "",
            "message": rec.get("message") or "", "status": status}


def _num(x):
    x = float(x)
    return x if math.isfinite(x) else None


def read_cells(path: str | os.PathLike) -> list[dict]:
    """Every cell of a store as a node result (``node``, ``storm``, the figures, ``governing_check``...),
    node-major; missing cells have ``status`` "missing" and no figures (a screened one ``screened``, its
    ``screen_gpd``, None when no element limits the node, and ``screen_element``)."""
    import zarr

    g = zarr.open_group(str(path), mode="r")
    nodes = [str(x) for x in g["node"][:]]
    storms = [str(x) for x in g["storm"][:]]
    a = {k: np.asarray(g[k][:]) for k in VARIABLES if k in g}
    out = []
    for i, n in enumerate(nodes):
        for j, s in enumerate(storms):
            st = int(a["status"][i, j])
            rec = {"node": n, "storm": s, "status": "missing" if st == MISSING else str(a["result"][i, j])}
            if st == MISSING and "screen_gpd" in a and (not np.isnan(a["screen_gpd"][i, j])
                                                         or str(a["screen_element"][i, j])):  # screened only
                rec.update({"screen_gpd": _num(a["screen_gpd"][i, j]), "screen_element": str(a["screen_element"][i, j]),
                            "screened": True})  # screen_gpd None: the screen found no element that limits the node
            if st != MISSING:
                crit = str(a["governing_criterion"][i, j])
                rec.update({
                    "max_connection_gpd": _num(a["max_connection_gpd"][i, j]), "passing_gpd": _num(a["passing_gpd"][i, j]),
                    "failing_gpd": _num(a["failing_gpd"][i, j]), "bounded": bool(a["bounded"][i, j]),
                    "governing_check": {"criterion": crit, "element": str(a["governing_element"][i, j]),
                                        "value": _num(a["governing_value"][i, j]), "limit": _num(a["governing_limit"][i, j]),
                                        "unit": str(a["governing_unit"][i, j]),
                                        "stopped_hr": _num(a["governing_stopped_hr"][i, j]) if "governing_stopped_hr" in a else None}
                    if crit else None,
                    "runs": int(a["runs"][i, j]),
                    "runs_stopped": int(a["runs_stopped"][i, j]) if "runs_stopped" in a else 0,
                    "simulated_hr": _num(a["simulated_hr"][i, j]) if "simulated_hr" in a else None, "screen_gpd": _num(a["screen_gpd"][i, j]),
                    "screen_element": str(a["screen_element"][i, j]), "message": str(a["message"][i, j])})
            out.append(rec)
    return out


def open_headroom(path: str | os.PathLike):
    """The store as an :class:`xarray.Dataset` (node x storm), ``status`` as text (missing, done, error, untrusted)."""
    ds = load_store(path, "headroom", "headroom results")
    st = np.asarray(ds.status.values).astype(int)
    ds["status"] = (("node", "storm"), np.vectorize(lambda c: STATUS_NAMES.get(int(c), "?"), otypes=[object])(st))
    return ds


#: Columns of the CSV export (units in the names).
CSV_COLUMNS = ("node", "storm", "status", "max_connection_gpd", "passing_gpd", "failing_gpd", "bounded",
               "governing_criterion", "governing_element", "governing_value", "governing_limit", "governing_unit",
               "governing_stopped_hr", "runs", "screen_gpd", "screen_element", "x", "y", "message")


def flat_row(rec: dict, xy=None) -> dict:
    """A node result as one flat row (the CSV line, the GeoJSON properties)."""
    gov = rec.get("governing_check") or {}
    row = {k: rec.get(k) for k in ("node", "storm", "status", "max_connection_gpd", "passing_gpd", "failing_gpd", "bounded",
                                   "runs", "screen_gpd", "screen_element", "message")}
    for k in ("criterion", "element", "value", "limit", "unit", "stopped_hr"):
        row[f"governing_{k}"] = gov.get(k)
    row["x"], row["y"] = (xy if xy is not None else (None, None))
    return row


def write_csv(records, path, coordinates: dict | None = None) -> Path:
    """One row per node and storm (:data:`CSV_COLUMNS`), written atomically; empty cells for none."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(CSV_COLUMNS), lineterminator="\n")
    w.writeheader()
    for r in records:
        row = flat_row(r, (coordinates or {}).get(r["node"]))
        w.writerow({k: ("" if row.get(k) is None else (repr(row[k]) if isinstance(row[k], float) else row[k])) for k in CSV_COLUMNS})
    return atomic_write_text(path, buf.getvalue())


def write_geojson(records, path, coordinates: dict, crs_note: str = "") -> Path:
    """A FeatureCollection of Points (one per node and storm, at the model's [COORDINATES]); properties = the row.

    Nodes without coordinates are left out (listed in the collection's ``missing_coordinates``). The
    coordinates are the model's own (its map units; GeoJSON readers take them as given).
    """
    feats, missing = [], []
    for r in records:
        xy = coordinates.get(r["node"])
        if xy is None:
            missing.append(r["node"])
            continue
        feats.append({"type": "Feature", "geometry": {"type": "Point", "coordinates": [float(xy[0]), float(xy[1])]},
                      "properties": flat_row(r, xy)})
    doc = {"type": "FeatureCollection", "features": feats, "missing_coordinates": sorted(set(missing))}
    if crs_note:
        doc["coordinates_note"] = crs_note
    return atomic_write_text(path, json.dumps(doc, indent=1, allow_nan=False, default=_none_for_nan))


def _none_for_nan(o):
    if isinstance(o, (np.floating, np.integer)):
        return o.item()
    raise TypeError(type(o).__name__)
