"""Render tables, features and datasets as bytes (CSV, GeoJSON, NetCDF), and write a set of files.

Every file of an export is rendered in memory first (a failure there writes nothing), then each is
written atomically (:func:`capacitysim.files.atomic_write_bytes`), and ``manifest.json`` last, listing
every file with its SHA-256: an export whose manifest is missing or does not match is incomplete.

CSV cells that a spreadsheet would run as a formula (text starting with ``=``, ``+``, ``-``, ``@``, a tab or
a carriage return) get a leading ``'`` (:func:`csv_cell`, OWASP CSV injection); numbers are written in full
(``repr``), not-a-number as an empty cell, yes/no for booleans.

References
----------
.. [1] Butler, H. et al. (2016). The GeoJSON Format, IETF RFC 7946 (Point, LineString, FeatureCollection;
   section 4: coordinates are WGS 84 longitude, latitude unless producers and consumers agree otherwise).
.. [2] Butler, H. et al. (2008). The GeoJSON Format Specification, revision 1.0, section 3 (the named ``crs``
   member, ``urn:ogc:def:crs:EPSG::2263``), which GDAL and QGIS still read for projected coordinates.
.. [3] Eaton, B. et al. (2020). NetCDF Climate and Forecast (CF) Metadata Conventions, version 1.8.
.. [4] OWASP. CSV Injection (formula injection in exported spreadsheets).
"""

from __future__ import annotations

import csv
import datetime as _dt
import hashlib
import io
import json
import math
import re
from pathlib import Path

import numpy as np

from capacitysim.files import atomic_write_bytes, atomic_write_text
from capacitysim.io.export.quantities import cf_attrs, column_name

#: Text a spreadsheet reads as a plain number (kept as is in a CSV cell).
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
#: First characters that make a spreadsheet evaluate a cell [4]_.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value):
    """A value made safe for a spreadsheet [4]_: text starting a formula gets a leading ``'``.

    ``None`` and not-a-number are an empty cell; booleans are ``yes``/``no``; numbers and text that is a
    plain number (``-5``, ``-1.5e3``) are kept.
    """
    if value is None:
        return ""
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return "" if not math.isfinite(float(value)) else float(value)
    text = str(value)
    if text.startswith(_FORMULA_START) and not _NUMBER.fullmatch(text):
        return "'" + text
    return text


def csv_text(rows: list[dict], columns: list[str] | None = None, *, headers: list[str] | None = None) -> str:
    """CSV text of a table: a header row (``headers``, default the column names with their units,
    :func:`~capacitysim.io.export.quantities.column_name`), then one row per record."""
    columns = columns or (list(rows[0]) if rows else [])
    headers = headers or [column_name(c) for c in columns]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([csv_cell(h) for h in headers])
    for r in rows:
        w.writerow([csv_cell(r.get(c)) for c in columns])
    return buf.getvalue()


def _json_value(v):
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return float(v) if math.isfinite(float(v)) else None
    return v if v is None or isinstance(v, str) else str(v)


def crs_member(crs: str | None) -> dict | None:
    """The named ``crs`` member of GeoJSON 2008 [2]_ for ``EPSG:2263`` / ``OGC:CRS84`` / a URN (None: none)."""
    if not crs:
        return None
    if crs.lower().startswith("urn:"):
        name = crs
    elif crs.upper() == "OGC:CRS84":
        name = "urn:ogc:def:crs:OGC:1.3:CRS84"
    else:
        auth, code = crs.split(":", 1)
        name = f"urn:ogc:def:crs:{auth.upper()}::{code}"
    return {"type": "name", "properties": {"name": name}}


def geojson_text(node_rows: list[dict], link_rows: list[dict], geometry, *, id_key: str = "id",
                 node_columns: list[str] | None = None, link_columns: list[str] | None = None, extra: dict | None = None) -> str:
    """A FeatureCollection [1]_: a Point per node row, a LineString per link row that has a line.

    Properties are the rows' values under their column names (units in brackets, as the CSV headers),
    plus ``element`` (``node`` or ``link``). The ``crs`` member [2]_ is written only when ``geometry.crs``
    is stated (see :mod:`capacitysim.io.export.geometry`); ``map_units`` and ``crs_source`` are foreign
    members saying what the coordinates are.
    """
    feats = []
    for kind, rows, cols, where in (("node", node_rows, node_columns, geometry.nodes),
                                    ("link", link_rows, link_columns, geometry.links)):
        cols = cols or (list(rows[0]) if rows else [])
        for r in rows:
            shape = where.get(r.get(id_key))
            if shape is None:
                continue
            geom = ({"type": "Point", "coordinates": list(shape)} if kind == "node"
                    else {"type": "LineString", "coordinates": [list(p) for p in shape]})
            props = {"element": kind, **{column_name(c): _json_value(r.get(c)) for c in cols}}
            feats.append({"type": "Feature", "id": f"{kind}:{r.get(id_key)}", "geometry": geom, "properties": props})
    doc = {"type": "FeatureCollection"}
    member = crs_member(geometry.crs)
    if member:
        doc["crs"] = member
    doc.update({"map_units": geometry.map_units, "crs_source": geometry.crs_source, **(extra or {}), "features": feats})
    return json.dumps(doc, ensure_ascii=False, allow_nan=False) + "\n"


def _attr_value(v):
    """A NetCDF-3 attribute: text or a number (booleans yes/no; None and containers as JSON text)."""
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if isinstance(v, (int, np.integer)):  # NetCDF-3 has no 64-bit integers
        return np.int32(v) if -2**31 <= int(v) < 2**31 else float(v)
    if isinstance(v, (float, np.floating)):
        return float(v)
    if isinstance(v, str):
        return v
    return json.dumps(v, default=str)


#: Names scipy's NetCDF writer keeps as its own attributes: a global attribute of that name breaks the file
#: (``mode`` = "product" made ``netcdf_file.flush`` fail), so it is written as ``<name>_attr``.
_RESERVED_GLOBALS = frozenset({"mode", "fp", "filename", "use_mmap", "version_byte", "maskandscale", "dimensions",
                               "variables", "_dims", "_recs", "_recsize", "_mm", "_mm_buf", "_attributes"})


def cf_dataset(ds, *, title: str, extra_attrs: dict | None = None):
    """A copy of ``ds`` with CF-1.8 attributes [3]_: ``units`` and ``long_name`` of every variable and
    coordinate from its name (:func:`~capacitysim.io.export.quantities.cf_attrs`), the global
    ``Conventions``, ``title``, ``source``, ``history``; attributes made NetCDF-3 safe."""
    from capacitysim.version import __version__

    out = ds.copy()
    for name in list(out.variables):
        attrs = {k: _attr_value(v) for k, v in out[name].attrs.items() if v is not None and k != "long_name"}
        attrs.update(cf_attrs(str(name)))  # the unit of the name wins; a unit given otherwise (x, y) is kept
        if name in ("scenario",):
            attrs = {"long_name": "run: before or after the change"}
        elif name in ("node", "link", "outfall", "outlet") or out[name].dtype == object and "units" in attrs:
            attrs.pop("units", None)
        out[name].attrs = attrs
    now = _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat()
    glob = {(f"{k}_attr" if k in _RESERVED_GLOBALS else k): _attr_value(v)
            for k, v in {**ds.attrs, **(extra_attrs or {})}.items() if v is not None}
    glob.pop("units", None)  # the prose of read_results: every variable has its own units now
    out.attrs = {"Conventions": "CF-1.8", "title": title, "source": f"capacitysim {__version__}",
                 "history": f"{now} written by capacitysim {__version__}", **glob}
    return out


def netcdf_bytes(ds) -> bytes:
    """A Dataset as NetCDF-3 (64-bit offset) bytes, written by xarray's scipy backend (no C library needed)."""
    return bytes(ds.to_netcdf(engine="scipy", format="NETCDF3_64BIT"))


def write_files(out_dir: str | Path, files: dict[str, bytes], *, what: str, notes: dict | None = None) -> dict[str, Path]:
    """Write rendered files into ``out_dir``, each atomically, then ``manifest.json`` with their SHA-256.

    Returns ``{file name: path}`` including the manifest.
    """
    from capacitysim.version import __version__

    out = Path(out_dir)
    paths = {name: atomic_write_bytes(out / name, data) for name, data in files.items()}
    manifest = {"what": what, "capacitysim": __version__,
                "written": _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat(),
                "files": [{"name": n, "bytes": len(d), "sha256": hashlib.sha256(d).hexdigest()} for n, d in files.items()],
                **(notes or {})}
    paths["manifest.json"] = atomic_write_text(out / "manifest.json", json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    return paths
