"""A GeoPackage of the network written with the standard library (sqlite3): no GDAL needed.

Two feature tables, ``nodes`` (POINT) and ``links`` (LINESTRING), with the same attributes as
``nodes.csv`` and ``links.csv`` (column names with their units, quoted). The geometry of each row is a
GeoPackageBinary blob: the ``GP`` header with the SRS id and the envelope, then the OGC WKB geometry
(little endian).

The spatial reference system: a stated CRS ``AUTHORITY:CODE`` (:mod:`capacitysim.io.export.geometry`) gets
its row in ``gpkg_spatial_ref_sys`` with the WKT of its definition when pyproj (installed with swmmio) knows
it; without a stated CRS the tables use the GeoPackage's "undefined Cartesian SRS" (srs_id -1): the model's
map coordinates, as SWMM has them.

References
----------
.. [1] Open Geospatial Consortium (2021). OGC GeoPackage Encoding Standard, version 1.3.1, OGC 12-128r18:
   section 1.1.1.1 (``application_id`` 0x47504B47 "GPKG", ``user_version``), 1.1.2 (``gpkg_spatial_ref_sys``
   and its three required rows: 4326, -1 undefined Cartesian, 0 undefined geographic), 1.1.3
   (``gpkg_contents``), 2.1.3 (GeoPackageBinary: magic, version, flags, srs_id, envelope), 2.1.5
   (``gpkg_geometry_columns``).
.. [2] OGC (2011). Simple Feature Access - Part 1: Common Architecture, version 1.2.1, OGC 06-103r4,
   section 8.2 (Well-known Binary: byte order, geometry type 1 Point, 2 LineString, coordinates as doubles).
"""

from __future__ import annotations

import datetime as _dt
import math
import sqlite3
import struct

from capacitysim.io.export.quantities import column_name

#: ``application_id`` of a GeoPackage ("GPKG") and the version written (1.3.1 as 10301) [1]_.
APPLICATION_ID = 0x47504B47
USER_VERSION = 10301
#: WKB geometry type codes [2]_.
WKB_POINT, WKB_LINESTRING = 1, 2

_WGS84_WKT = ('GEOGCS["WGS 84",DATUM["WGS_1984",SPHEROID["WGS 84",6378137,298.257223563,AUTHORITY["EPSG","7030"]],'
              'AUTHORITY["EPSG","6326"]],PRIMEM["Greenwich",0,AUTHORITY["EPSG","8901"]],UNIT["degree",0.0174532925199433,'
              'AUTHORITY["EPSG","9122"]],AUTHORITY["EPSG","4326"]]')


def gpkg_geometry(kind: int, coords, srs_id: int) -> bytes:
    """GeoPackageBinary [1]_ of a point (``coords`` = (x, y)) or a line string (``coords`` = [(x, y), ...])."""
    pts = [tuple(coords)] if kind == WKB_POINT else [tuple(p) for p in coords]
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    flags = 0b0000_0011  # little endian (bit 0), envelope [minx, maxx, miny, maxy] (bits 1-3 = 1)
    header = b"GP" + struct.pack("<BBi4d", 0, flags, srs_id, min(xs), max(xs), min(ys), max(ys))
    if kind == WKB_POINT:
        wkb = struct.pack("<BI2d", 1, WKB_POINT, *pts[0])
    else:
        wkb = struct.pack("<BII", 1, WKB_LINESTRING, len(pts)) + b"".join(struct.pack("<2d", *p) for p in pts)
    return header + wkb


def _srs(crs: str | None) -> tuple[int, tuple | None]:
    """(srs_id, the gpkg_spatial_ref_sys row to add or None) of a stated CRS (-1: undefined Cartesian)."""
    if not crs or ":" not in crs or crs.lower().startswith("urn:"):
        return -1, None
    org, code = crs.split(":", 1)
    if org.upper() == "OGC" and code.upper() == "CRS84":
        return 4326, None  # longitude, latitude on WGS 84: the required row
    if not code.isdigit():
        return -1, None
    try:
        import pyproj

        wkt = pyproj.CRS.from_user_input(crs).to_wkt("WKT1_GDAL")
        name = pyproj.CRS.from_user_input(crs).name
    except Exception:  # noqa: BLE001 - an unknown code or no pyproj: the definition is not known here
        wkt, name = "undefined", crs
    srs_id = int(code) if org.upper() == "EPSG" else 100000 + int(code) % 900000
    return srs_id, (name, srs_id, org.upper(), int(code), wkt, f"{crs} (stated for the model's map coordinates)")


def _sql_value(v):
    if v is None:
        return None
    if isinstance(v, bool) or type(v).__name__ == "bool_":
        return "yes" if v else "no"
    if isinstance(v, (int, float)) or hasattr(v, "dtype"):
        x = float(v)
        return None if not math.isfinite(x) else (int(x) if isinstance(v, int) else x)
    return str(v)


def geopackage_bytes(node_rows: list[dict], link_rows: list[dict], geometry, *, node_columns: list[str],
                     link_columns: list[str], description: str = "") -> bytes:
    """A GeoPackage (bytes) of the rows that have coordinates: ``nodes`` points and ``links`` lines [1]_."""
    srs_id, srs_row = _srs(geometry.crs)
    con = sqlite3.connect(":memory:")
    try:
        con.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        con.execute(f"PRAGMA user_version = {USER_VERSION}")
        con.executescript("""
            CREATE TABLE gpkg_spatial_ref_sys (srs_name TEXT NOT NULL, srs_id INTEGER NOT NULL PRIMARY KEY,
                organization TEXT NOT NULL, organization_coordsys_id INTEGER NOT NULL, definition TEXT NOT NULL,
                description TEXT);
            CREATE TABLE gpkg_contents (table_name TEXT NOT NULL PRIMARY KEY, data_type TEXT NOT NULL,
                identifier TEXT UNIQUE, description TEXT DEFAULT '',
                last_change DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
                min_x DOUBLE, min_y DOUBLE, max_x DOUBLE, max_y DOUBLE, srs_id INTEGER,
                CONSTRAINT fk_gc_r_srs_id FOREIGN KEY (srs_id) REFERENCES gpkg_spatial_ref_sys(srs_id));
            CREATE TABLE gpkg_geometry_columns (table_name TEXT NOT NULL, column_name TEXT NOT NULL,
                geometry_type_name TEXT NOT NULL, srs_id INTEGER NOT NULL, z TINYINT NOT NULL, m TINYINT NOT NULL,
                CONSTRAINT pk_geom_cols PRIMARY KEY (table_name, column_name),
                CONSTRAINT fk_gc_tn FOREIGN KEY (table_name) REFERENCES gpkg_contents(table_name),
                CONSTRAINT fk_gc_srs FOREIGN KEY (srs_id) REFERENCES gpkg_spatial_ref_sys (srs_id));
        """)
        rows = [("WGS 84 geodetic", 4326, "EPSG", 4326, _WGS84_WKT, "longitude/latitude coordinates in decimal degrees on the WGS 84 spheroid"),
                ("Undefined cartesian SRS", -1, "NONE", -1, "undefined", "undefined cartesian coordinate reference system"),
                ("Undefined geographic SRS", 0, "NONE", 0, "undefined", "undefined geographic coordinate reference system")]
        if srs_row is not None and srs_row[1] not in (4326, -1, 0):
            rows.append(srs_row)
        con.executemany("INSERT INTO gpkg_spatial_ref_sys VALUES (?, ?, ?, ?, ?, ?)", rows)
        now = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")
        for table, kind, gtype, rows_, cols, where in (
                ("nodes", WKB_POINT, "POINT", node_rows, node_columns, geometry.nodes),
                ("links", WKB_LINESTRING, "LINESTRING", link_rows, link_columns, geometry.links)):
            names = [column_name(c) for c in cols]
            decl = ", ".join(f'"{n.replace(chr(34), chr(34) * 2)}" {_sql_type(rows_, c)}' for n, c in zip(names, cols))
            con.execute(f'CREATE TABLE "{table}" (fid INTEGER PRIMARY KEY AUTOINCREMENT, geom {gtype}'
                        + (f", {decl}" if decl else "") + ")")
            feats = [(where[r["id"]], r) for r in rows_ if r.get("id") in where]
            pts = [p for shape, _ in feats for p in ([shape] if kind == WKB_POINT else shape)]
            ext = ((min(p[0] for p in pts), min(p[1] for p in pts), max(p[0] for p in pts), max(p[1] for p in pts))
                   if pts else (None, None, None, None))
            con.execute("INSERT INTO gpkg_contents VALUES (?, 'features', ?, ?, ?, ?, ?, ?, ?, ?)",
                        (table, table, description, now, *ext, srs_id))
            con.execute("INSERT INTO gpkg_geometry_columns VALUES (?, 'geom', ?, ?, 0, 0)", (table, gtype, srs_id))
            marks = ", ".join("?" * (len(cols) + 1))
            con.executemany(f'INSERT INTO "{table}" (geom' + "".join(f', "{n}"' for n in names) + f") VALUES ({marks})",
                            [(gpkg_geometry(kind, shape, srs_id), *(_sql_value(r.get(c)) for c in cols)) for shape, r in feats])
        con.commit()
        return con.serialize()
    finally:
        con.close()


def _sql_type(rows: list[dict], col: str) -> str:
    vals = [r.get(col) for r in rows if r.get(col) is not None]
    if vals and all(isinstance(v, (int, float)) and not isinstance(v, bool) or hasattr(v, "dtype") and v.dtype.kind in "fiu"
                    for v in vals):
        return "REAL"
    return "TEXT"
