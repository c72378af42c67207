"""Exports of results where engineers use them: CSV tables, GeoJSON, NetCDF (``--export DIR``).

:func:`export_network` is the one writer of a network result (the capacity demonstration, and any
workflow with per-node and per-link results, e.g. headroom): into ``DIR`` it writes

* ``nodes.csv`` and ``links.csv``: one row per element, static columns once and every result of a run
  as ``<quantity>_before [unit]``, ``<quantity>_after [unit]`` and ``<quantity>_change [unit]``
  (after minus before), units in the header names (:func:`~capacitysim.io.export.quantities.column_name`);
* ``network.geojson``: a Point per node and a LineString per link that has coordinates (from-node,
  ``[VERTICES]``, to-node), with the same attributes; the ``crs`` member only when the model states a
  CRS (:mod:`capacitysim.io.export.geometry`; otherwise the coordinates are the model's map coordinates,
  in the ``map_units`` the file names, and no CRS is written);
* ``results.nc``: the results as an xarray Dataset in NetCDF (dimension ``scenario`` = before, after),
  with CF attributes ``units`` and ``long_name`` on every variable;
* ``network.gpkg`` (when the model has coordinates): the same points, lines and attributes as a GeoPackage
  written with sqlite3 (:mod:`capacitysim.io.export.gpkg`; no GDAL);
* ``manifest.json``: every file with its SHA-256, written last (:func:`~capacitysim.io.export.writers.write_files`).

:func:`export_detention` and :func:`export_sweep` write the design and the sweep the same way.
All files are rendered before any is written; each is written atomically.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from capacitysim.io.export.geometry import (
    CRS_POLICY,
    ModelGeometry,
    check_crs,
    model_geometry,
)
from capacitysim.io.export.gpkg import geopackage_bytes
from capacitysim.io.export.quantities import (
    cf_attrs,
    column_name,
    human_label,
    split_key,
    unit_of,
)
from capacitysim.io.export.writers import (
    cf_dataset,
    csv_cell,
    csv_text,
    geojson_text,
    netcdf_bytes,
    write_files,
)

__all__ = [
    "CRS_POLICY",
    "NETWORK_FILES",
    "ModelGeometry",
    "cf_attrs",
    "check_crs",
    "column_name",
    "csv_cell",
    "csv_text",
    "dataset_rows",
    "export_demonstration",
    "export_detention",
    "export_network",
    "export_node_table",
    "export_sweep",
    "human_label",
    "model_geometry",
    "network_dataset",
    "split_key",
    "unit_of",
]

#: The files :func:`export_network` writes.
NETWORK_FILES = ("nodes.csv", "links.csv", "network.geojson", "results.nc", "network.gpkg", "manifest.json")

#: Variables of a SWMM run that describe the element, not the run (written once, without ``scenario``).
STATIC_VARIABLES = frozenset({"node_type", "invert_elev_ft", "rim_depth_ft", "crown_depth_ft", "surcharge_limit_ft",
                              "link_type", "from_node", "to_node", "full_flow_cfs", "full_depth_ft", "link_shape",
                              "length_ft", "x", "y"})
#: Dimensions whose elements become rows of a table.
ELEMENT_DIMS = ("node", "link")


def _display(names) -> np.ndarray:
    from capacitysim.network.model import display_name

    return np.array([display_name(str(n)) for n in names], dtype=object)


def network_dataset(before, after=None, *, checks: Sequence[Mapping] = (), geometry: ModelGeometry | None = None):
    """One Dataset of the runs before and after: per-run variables along ``scenario``, the others once.

    Parameters
    ----------
    before, after : xarray.Dataset
        Results of :func:`capacitysim.network.engine.read_results` (``after`` may be None: one run).
    checks : sequence of mapping
        Check records (``criterion``, ``element``, ``passed``) of the result document: each element gets
        ``failed`` (yes/no) and ``failed_criteria`` (the criteria it failed, ``; ``-joined).
    geometry : ModelGeometry, optional
        Adds ``x`` and ``y`` [map units] of each node.

    Returns
    -------
    xarray.Dataset
        Element names as a person reads them (``display_name``); run attributes that are numbers
        (continuity errors, routing totals) become variables along ``scenario``.
    """
    from capacitysim.xarray_setup import xr

    runs = [("before", before)] + ([("after", after)] if after is not None else [])
    names = [k for k, _ in runs]
    out = xr.Dataset(coords={"scenario": np.array(names, dtype=object)})
    for dim in ("node", "link", "outfall"):
        if dim in before.dims:
            out = out.assign_coords({dim: _display(before[dim].values)})
    for var in before.data_vars:
        v0 = before[var]
        if var in STATIC_VARIABLES or v0.dtype == object:
            vals = v0.values
            if v0.dtype == object:
                vals = _display(vals) if var in ("from_node", "to_node") else np.array([str(x) for x in vals], dtype=object)
            out[var] = (v0.dims, vals)
        else:
            out[var] = (("scenario", *v0.dims), np.stack([np.asarray(ds[var].values, float) for _, ds in runs]))
    for key in sorted(before.attrs):
        if isinstance(before.attrs[key], (int, float, np.integer, np.floating)) and not isinstance(before.attrs[key], bool):
            if key in ("routing", "n_subcatchments"):
                continue
            out[key] = ("scenario", np.array([float(ds.attrs.get(key, math.nan)) for _, ds in runs]))
    for key in ("flow_units", "simulation_start", "simulation_end", "report_start"):
        if key in before.attrs:
            out.attrs[key] = str(before.attrs[key])
    if geometry is not None and "node" in out.dims:
        pts = [geometry.nodes.get(n, (math.nan, math.nan)) for n in out.node.values]
        out["x"] = ("node", np.array([p[0] for p in pts], float))
        out["y"] = ("node", np.array([p[1] for p in pts], float))
        unit = {"ft": "ft", "m": "m", "deg": "degree"}.get(geometry.map_units or "")
        for c in ("x", "y"):
            out[c].attrs["map_units"] = geometry.map_units or "not named by the model"
            if unit:
                out[c].attrs["units"] = unit
    failed: dict[str, list[str]] = {}
    for ch in checks:
        if ch.get("passed") is False:
            failed.setdefault(str(ch.get("element")), []).append(str(ch.get("criterion")))
    for dim in ELEMENT_DIMS:
        if dim in out.dims:
            ids = out[dim].values
            out[f"{dim}_failed"] = (dim, np.array([ "yes" if str(i) in failed else "no" for i in ids], dtype=object))
            out[f"{dim}_failed_criteria"] = (dim, np.array(["; ".join(dict.fromkeys(failed.get(str(i), []))) for i in ids], dtype=object))
    return out


def dataset_rows(ds, dim: str) -> tuple[list[dict], list[str]]:
    """Rows of one element dimension of :func:`network_dataset`: ``id``, static values, then each
    per-run variable as ``<var>_before``, ``<var>_after`` and (numbers) ``<var>_change`` = after - before.

    Returns
    -------
    (rows, columns)
        One dict per element, and the column order.
    """
    ids = [str(i) for i in ds[dim].values]
    cols, data = ["id"], {"id": ids}
    scenarios = [str(s) for s in ds.scenario.values] if "scenario" in ds.dims else []
    for name, var in ds.data_vars.items():
        if dim not in var.dims or len(var.dims) > (2 if "scenario" in var.dims else 1):
            continue
        key = name[len(dim) + 1:] if name.startswith(f"{dim}_failed") else name
        if "scenario" not in var.dims:
            cols.append(key)
            data[key] = list(var.transpose(dim).values)
            continue
        v = var.transpose("scenario", dim).values
        for k, s in enumerate(scenarios):
            cols.append(f"{name}_{s}")
            data[f"{name}_{s}"] = list(v[k])
        if scenarios == ["before", "after"] and np.issubdtype(v.dtype, np.number):
            cols.append(f"{name}_change")
            data[f"{name}_change"] = list(v[1] - v[0])
    rows = [{c: data[c][i] for c in cols} for i in range(len(ids))]
    return rows, cols


def export_network(out_dir: str | Path, ds, *, geometry: ModelGeometry | None = None, title: str,
                   attrs: Mapping | None = None, node_rows: tuple[list[dict], list[str]] | None = None,
                   link_rows: tuple[list[dict], list[str]] | None = None,
                   tables: Mapping[str, tuple[list[dict], list[str]]] | None = None) -> dict[str, Path]:
    """Write ``nodes.csv``, ``links.csv``, ``network.geojson``, ``results.nc`` and ``manifest.json`` into ``out_dir``.

    Parameters
    ----------
    out_dir : path
        The folder (created when missing; files of the same names are replaced, each atomically).
    ds : xarray.Dataset
        The results, with dimensions ``node`` and/or ``link`` (and optionally ``scenario``), e.g. from
        :func:`network_dataset`. Variable names carry their units (``peak_flow_cfs``).
    geometry : ModelGeometry, optional
        Points and lines of the elements (:func:`model_geometry`); without it the GeoJSON has no features.
    title : str
        The NetCDF ``title`` and the manifest's ``what``.
    attrs : mapping, optional
        Global attributes of the NetCDF and entries of the manifest (model file, its SHA-256, verdict...).
    node_rows, link_rows : (rows, columns), optional
        Tables to write instead of :func:`dataset_rows` of ``ds`` (a workflow whose rows are not its
        Dataset's elements, e.g. one row per node and storm). Rows need an ``id`` (the element's name).
    tables : mapping, optional
        More CSV files: file name -> (rows, columns) (the demonstration's ``hydrographs.csv``, ``profile.csv``).

    Returns
    -------
    dict
        File name -> path written.
    """
    geometry = geometry or ModelGeometry(crs_source="no coordinates given")
    nodes = node_rows or (dataset_rows(ds, "node") if "node" in ds.dims else ([], ["id"]))
    links = link_rows or (dataset_rows(ds, "link") if "link" in ds.dims else ([], ["id"]))
    attrs = dict(attrs or {})
    notes = {"crs": geometry.crs, "crs_source": geometry.crs_source, "crs_policy": CRS_POLICY,
             "map_units": geometry.map_units, "nodes": len(nodes[0]), "links": len(links[0]),
             "links_with_lines": sum(1 for r in links[0] if r["id"] in geometry.links), **attrs}
    files = {
        "nodes.csv": csv_text(*nodes).encode("utf-8"),
        "links.csv": csv_text(*links).encode("utf-8"),
        "network.geojson": geojson_text(nodes[0], links[0], geometry, node_columns=nodes[1], link_columns=links[1],
                                        extra={"title": title}).encode("utf-8"),
        "results.nc": netcdf_bytes(cf_dataset(ds, title=title, extra_attrs={**attrs, "crs": geometry.crs or "none stated",
                                                                              "crs_source": geometry.crs_source})),
    }
    for name, (rows, cols) in (tables or {}).items():
        files[name] = csv_text(rows, cols).encode("utf-8")
    if geometry.nodes or geometry.links:
        files["network.gpkg"] = geopackage_bytes(nodes[0], links[0], geometry, node_columns=nodes[1], link_columns=links[1],
                                                 description=title)
    return write_files(out_dir, files, what=title, notes=notes)


def export_node_table(out_dir: str | Path, rows: Sequence[Mapping], *, id_key: str = "node",
                      index: Sequence[str] = ("node",), geometry: ModelGeometry | None = None, title: str,
                      attrs: Mapping | None = None) -> dict[str, Path]:
    """Export per-node rows of a result document (e.g. headroom: one row per node and storm).

    Writes ``nodes.csv`` (the rows, ``id`` = ``row[id_key]`` first, nested records spread into columns,
    units in the headers), ``network.geojson`` (a Point per row at its node, the model's links as
    LineStrings without attributes for context), ``results.nc`` (the rows as a Dataset over the ``index``
    dimensions, e.g. node x storm; CF units) and ``manifest.json``. There are no per-link results, so no
    ``links.csv``.

    Parameters
    ----------
    rows : sequence of mapping
        The document's rows (``max_connection_gpd``...: names carry their units).
    id_key : str
        The key naming the node of a row.
    index : sequence of str
        The keys that identify a row (the Dataset's dimensions), ``id_key`` among them.
    geometry : ModelGeometry, optional
        :func:`model_geometry` of the model.
    """
    from capacitysim.xarray_setup import xr

    flat = _flat_rows(rows)
    keys = list(dict.fromkeys(k for r in flat for k in r))
    table = [{"id": r.get(id_key), **{k: v for k, v in r.items() if k != id_key}} for r in flat]
    cols = ["id", *[k for k in keys if k != id_key]]
    levels = {k: list(dict.fromkeys(r.get(k) for r in flat)) for k in index}
    shape = tuple(len(v) for v in levels.values())
    pos = {k: {v: i for i, v in enumerate(vals)} for k, vals in levels.items()}
    dims = [("node" if k == id_key else k) for k in index]
    data = {}
    for k in keys:
        if k in index:
            continue
        vals = [r.get(k) for r in flat]
        numeric = all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in vals)
        arr = np.full(shape, np.nan) if numeric else np.full(shape, "", dtype=object)
        for r, v in zip(flat, vals):
            at = tuple(pos[i][r.get(i)] for i in index)
            arr[at] = (np.nan if v is None else float(v)) if numeric else ("" if v is None else
                                                                          ("yes" if v is True else "no" if v is False else str(v)))
        data[k] = (dims, arr)
    ds = xr.Dataset(data, coords={d: np.array([str(v) for v in levels[k]], dtype=object) for d, k in zip(dims, index)})
    geometry = geometry or ModelGeometry(crs_source="no coordinates given")
    attrs = {k: v for k, v in dict(attrs or {}).items() if v is not None}
    links = [{"id": lid} for lid in geometry.links]
    files = {
        "nodes.csv": csv_text(table, cols).encode("utf-8"),
        "network.geojson": geojson_text(table, links, geometry, node_columns=cols, link_columns=["id"],
                                        extra={"title": title}).encode("utf-8"),
        "results.nc": netcdf_bytes(cf_dataset(ds, title=title, extra_attrs={**attrs, "crs": geometry.crs or "none stated",
                                                                              "crs_source": geometry.crs_source})),
    }
    notes = {"crs": geometry.crs, "crs_source": geometry.crs_source, "crs_policy": CRS_POLICY,
             "map_units": geometry.map_units, "rows": len(table), **attrs}
    return write_files(out_dir, files, what=title, notes=notes)


def _doc_dataset(doc: Mapping):
    """A Dataset of a capacity document's ``nodes`` and ``links`` rows (a stored document, no runs at hand)."""
    from capacitysim.xarray_setup import xr

    out = xr.Dataset(coords={"scenario": np.array(["before", "after"], dtype=object)})
    for dim in ELEMENT_DIMS:
        rows = doc.get(f"{dim}s") or []
        if not rows:
            continue
        out = out.assign_coords({dim: np.array([r["id"] for r in rows], dtype=object)})
        stems = dict.fromkeys(k[: -len("_before")] for k in rows[0] if k.endswith("_before"))
        for s in stems:
            vals = [[math.nan if r.get(f"{s}_{w}") is None else float(r[f"{s}_{w}"]) for r in rows] for w in ("before", "after")]
            out[s] = (("scenario", dim), np.array(vals, float))
    failed: dict[str, list[str]] = {}
    for ch in doc.get("checks") or []:
        if ch.get("passed") is False:
            failed.setdefault(str(ch.get("element")), []).append(str(ch.get("criterion")))
    for dim in ELEMENT_DIMS:
        if dim in out.dims:
            ids = [str(i) for i in out[dim].values]
            out[f"{dim}_failed"] = (dim, np.array(["yes" if i in failed else "no" for i in ids], dtype=object))
            out[f"{dim}_failed_criteria"] = (dim, np.array(["; ".join(dict.fromkeys(failed.get(i, []))) for i in ids], dtype=object))
    return out


def export_demonstration(out_dir: str | Path, doc: Mapping, before=None, after=None) -> dict[str, Path]:
    """Export a capacity demonstration (:meth:`capacitysim.workflows.demonstration.Demonstration.to_dict`).

    With the runs' Datasets (``before``, ``after``) every statistic of each element is exported; with
    the document alone (a stored job's results) the document's ``nodes`` and ``links`` columns. The
    points and lines are the document's ``geometry`` block.
    """
    geometry = ModelGeometry.from_dict(doc.get("geometry"))
    if before is not None and after is not None:
        ds = network_dataset(before, after, checks=doc.get("checks") or (), geometry=geometry)
    else:
        ds = _doc_dataset(doc)
    attrs = {"model_file": doc.get("model_file"), "model_sha256": doc.get("model_sha256"), "verdict": doc.get("verdict"),
             "storm": doc.get("storm"), "plant": doc.get("plant"), "kind": doc.get("kind")}
    return export_network(out_dir, ds, geometry=geometry, title="capacity demonstration: before and after",
                          attrs={k: v for k, v in attrs.items() if v is not None}, tables=_demonstration_tables(doc))


def _demonstration_tables(doc: Mapping) -> dict[str, tuple[list[dict], list[str]]]:
    """``hydrographs.csv`` (total inflow at the connection, its basin outlet and the plant, before and after,
    one row per time step) and ``profile.csv`` (the HGL profile from the connection to the plant)."""
    out = {}
    hyd = []
    for h in doc.get("hydrographs") or []:
        for run in ("before", "after"):
            for t, q in zip(h.get(f"elapsed_hr_{run}") or [], h.get(f"total_inflow_cfs_{run}") or []):
                hyd.append({"node": h["node"], "point": h["label"], "run": run, "elapsed_hr": t, "total_inflow_cfs": q})
    if hyd:
        out["hydrographs.csv"] = (hyd, ["node", "point", "run", "elapsed_hr", "total_inflow_cfs"])
    prof = doc.get("profile") or []
    if prof:
        out["profile.csv"] = (list(prof), ["node", "link", "distance_ft", "invert_ft", "crown_ft", "rim_ft",
                                           "max_hgl_before_ft", "max_hgl_after_ft"])
    return out


def export_detention(out_dir: str | Path, doc: Mapping, series: Mapping, steps: Sequence[Mapping] = ()) -> dict[str, Path]:
    """Export a detention design: ``design.csv`` (every number of the document: quantity, value, unit),
    ``steps.csv`` (the calculation steps with their citations), ``hydrographs.csv`` (the critical design
    hydrograph routed: time, inflow, release, stage, storage) and ``results.nc`` (the same series along
    ``time`` and the design numbers as scalars, CF attributes), then ``manifest.json``.

    There is no network: no ``nodes.csv``, ``links.csv`` or GeoJSON.
    """
    from capacitysim.xarray_setup import xr

    numbers = [(k, v) for k, v in doc.items() if isinstance(v, (int, float)) and not isinstance(v, bool)]
    design = [{"quantity": k, "label": human_label(k), "value": v, "unit": unit_of(k) or ""} for k, v in numbers]
    design += [{"quantity": k, "label": human_label(k), "value": v, "unit": ""} for k, v in doc.items()
               if isinstance(v, (str, bool)) and k not in ("site_file",)]
    t_min = np.asarray(series["time_min"], float)
    cols = [k for k, v in series.items() if np.ndim(v) == 1 and len(v) == t_min.size]
    hyd = [{c: float(series[c][i]) for c in cols} for i in range(t_min.size)]
    ds = xr.Dataset({c: ("time_min", np.asarray(series[c], float)) for c in cols if c != "time_min"},
                    coords={"time_min": t_min})
    for k, v in numbers:
        ds[k] = ((), float(v))
    for k, v in series.items():
        if np.ndim(v) == 0 and isinstance(v, (int, float, np.floating)):
            ds[k if k not in ds.variables else f"series_{k}"] = ((), float(v))
    attrs = {"site": doc.get("site"), "site_sha256": doc.get("site_sha256"), "rule_set": doc.get("rule_set"),
             "verdict": doc.get("verdict_qualified") or doc.get("verdict"), "kind": doc.get("kind")}
    attrs = {k: v for k, v in attrs.items() if v is not None}
    steps_rows = [{"step": s.get("step"), "formula": s.get("formula"), "value": s.get("value"), "unit": s.get("unit"),
                   "citation": s.get("citation")} for s in steps]
    files = {
        "design.csv": csv_text(design, ["quantity", "label", "value", "unit"], headers=["quantity", "label", "value", "unit"]).encode("utf-8"),
        "steps.csv": csv_text(steps_rows, ["step", "formula", "value", "unit", "citation"],
                              headers=["step", "formula", "value", "unit", "citation"]).encode("utf-8"),
        "hydrographs.csv": csv_text(hyd, cols).encode("utf-8"),
        "results.nc": netcdf_bytes(cf_dataset(ds, title="detention design: critical design hydrograph routed", extra_attrs=attrs)),
    }
    return write_files(out_dir, files, what="detention design", notes=attrs)


def export_sweep(out_dir: str | Path, ds, summary: Mapping, geometry: ModelGeometry | None = None) -> dict[str, Path]:
    """Export a sweep (:func:`capacitysim.io.sweep_store.open_results` and its summary).

    Writes ``scenarios.csv`` (one row per scenario: the swept parameters, status, verdict, every result;
    a result per outlet or outfall as ``<name>[<element>]``), ``results.nc`` (the store's Dataset with
    CF attributes) and, for a SWMM sweep whose summary has the largest passing connection per node,
    ``nodes.csv`` (one row per connection node and condition) and ``network.geojson`` (those rows as
    Points at the model's coordinates, when ``geometry`` is given); then ``manifest.json``.
    """
    flat = ds
    grid_dims = [d for d in ds.dims if d not in ("outlet", "outfall")]
    if len(grid_dims) > 1:
        flat = ds.stack(scenario=grid_dims)
    sdim = "scenario" if len(grid_dims) > 1 else (grid_dims[0] if grid_dims else None)
    n = flat.sizes.get(sdim, 1) if sdim else 1
    params = list(summary.get("grid") or {})
    cols: list[str] = []
    data: dict[str, list] = {}
    for p in params:
        if p in flat.coords:
            cols.append(p)
            data[p] = [_item(v) for v in np.asarray(flat[p].values).reshape(-1)]
    for name, var in flat.data_vars.items():
        extra = [d for d in var.dims if d != sdim]
        if not extra:
            cols.append(name)
            data[name] = [_item(v) for v in np.asarray(var.transpose(sdim).values).reshape(-1)] if sdim else [_item(var.values)]
        elif len(extra) == 1:
            for j, el in enumerate(flat[extra[0]].values):
                key = f"{name}[{el}]"
                cols.append(key)
                data[key] = [_item(v) for v in np.asarray(var.transpose(sdim, extra[0]).values)[:, j]]
    rows = [{c: data[c][i] for c in cols} for i in range(n)]
    headers = [_sweep_header(c) for c in cols]
    plain = ds.copy()
    for name in list(plain.variables):
        if plain[name].dtype.kind == "U":
            plain[name] = plain[name].astype(object)
    if "inputs" in plain.attrs:  # file names only: never the paths of the machine that ran the sweep
        try:
            plain.attrs["inputs"] = json.dumps([Path(p).name for p in json.loads(plain.attrs["inputs"])])
        except (TypeError, ValueError):
            del plain.attrs["inputs"]
    attrs = {"sweep": summary.get("name"), "kind": summary.get("kind"), "grid_mode": summary.get("mode"),
             "scenarios": summary.get("scenarios")}
    files = {"scenarios.csv": csv_text(rows, cols, headers=headers).encode("utf-8"),
             "results.nc": netcdf_bytes(cf_dataset(plain, title=f"scenario sweep {summary.get('name')}",
                                                   extra_attrs={k: v for k, v in attrs.items() if v is not None}))}
    lp = _flat_rows(summary.get("largest_passing") or [])
    if lp:
        keys = ["id", *[k for k in dict.fromkeys(k for r in lp for k in r) if k != "connect_node"]]
        node_rows = [{"id": r.get("connect_node"), **r} for r in lp]
        files["nodes.csv"] = csv_text(node_rows, keys).encode("utf-8")
        if geometry is not None:
            files["network.geojson"] = geojson_text(node_rows, [], geometry, node_columns=keys,
                                                    extra={"title": f"largest connection that passes: sweep {summary.get('name')}"}).encode("utf-8")
    notes = {k: v for k, v in attrs.items() if v is not None}
    if geometry is not None:
        notes.update({"crs": geometry.crs, "crs_source": geometry.crs_source, "map_units": geometry.map_units})
    return write_files(out_dir, files, what="scenario sweep", notes=notes)


def _flat(row: Mapping) -> dict:
    """A summary row with its nested records spread into columns (``governing_check`` ->
    ``governing_check_criterion``, ``governing_check_element``, ``governing_check_message``)."""
    out = {}
    for k, v in row.items():
        if isinstance(v, Mapping):
            out.update({f"{k}_{kk}": vv for kk, vv in v.items()})
        else:
            out[k] = v
    return out


def _flat_rows(rows: Sequence[Mapping]) -> list[dict]:
    """:func:`_flat` of every row; a nested record that is None in some rows leaves no column of its own."""
    flat = [_flat(r) for r in rows]
    keys = {k for r in flat for k in r}
    spread = {k for k in keys if any(o.startswith(k + "_") for o in keys) and all(r.get(k) is None for r in flat)}
    return [{k: v for k, v in r.items() if k not in spread} for r in flat]


def _item(v):
    if isinstance(v, np.generic):
        return v.item()
    return v


def _sweep_header(col: str) -> str:
    if "[" in col:
        name, el = col.split("[", 1)
        h = column_name(name)
        return h.replace(" [", f"[{el} [", 1) if " [" in h else f"{h}[{el}"
    return column_name(col)
