"""Where the elements of a SWMM model are: node points, link polylines, map units and CRS.

Read from the model's map sections [1]_: ``[COORDINATES]`` (``node x y``), ``[VERTICES]`` (``link x y``,
the interior points of a link in order, from its inlet to its outlet) and ``[MAP]`` (``UNITS
Feet|Meters|Degrees|None``). A link's line is its from-node, its vertices, its to-node; a link one of
whose nodes has no coordinates has no line.

A SWMM file has no coordinate reference system of its own: ``[MAP] UNITS`` is only the unit of the map
(the engine ignores the map sections). The CRS is taken, in this order, from:

1. the ``crs`` argument (``--crs EPSG:2263`` on the command line);
2. a comment naming it anywhere in the file, as GIS tools that export SWMM write it
   (``;;CRS: EPSG:2263``, ``; Coordinate system = EPSG:2263``, ``;;EPSG:2263``);
3. ``[MAP] UNITS Degrees`` with every coordinate within longitude and latitude: ``OGC:CRS84``
   (WGS 84 longitude, latitude);

otherwise there is none, and the GeoJSON has no ``crs`` member (the coordinates are the model's map
coordinates, in ``map_units``). That is a named policy (:data:`CRS_POLICY`), shown in the export's
manifest.

References
----------
.. [1] Rossman, L.A. (2022). Storm Water Management Model User's Manual Version 5.2, EPA/600/R-22/030,
   Appendix D (``[MAP]``, ``[COORDINATES]``, ``[VERTICES]``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from capacitysim.errors import InputError
from capacitysim.network.model import (
    LINK_SECTIONS,
    SwmmInp,
    display_name,
    finite_number,
)

#: ``[MAP] UNITS`` -> the unit of the map coordinates (None: the model names none).
MAP_UNITS = {"FEET": "ft", "METERS": "m", "METRES": "m", "DEGREES": "deg", "NONE": None}

#: How the CRS of an export is decided (named policy: SWMM files state none).
CRS_POLICY = ("the CRS is the --crs option, else a comment of the model naming it (;;CRS: EPSG:NNNN), else "
              "OGC:CRS84 for [MAP] UNITS Degrees with coordinates within longitude/latitude; otherwise none is "
              "stated and the coordinates are the model's map coordinates")

_CRS_TOKEN = r"((?:EPSG|ESRI|OGC|IAU_2015):[A-Za-z0-9_.]+|urn:ogc:def:crs:[A-Za-z0-9_:.]+)"
#: A comment naming the CRS: ``;;CRS: EPSG:2263``, ``; coordinate system = EPSG:2263``, ``;;EPSG:2263``.
_CRS_COMMENT = re.compile(r"^\s*;+\s*(?:(?:CRS|SRS|projection|coordinate\s+(?:reference\s+)?system)\s*[:=]?\s*)?"
                          + _CRS_TOKEN + r"\s*$", re.IGNORECASE)
#: An explicit CRS as the --crs option takes it.
_CRS_ARG = re.compile(_CRS_TOKEN + r"$", re.IGNORECASE)


@dataclass
class ModelGeometry:
    """Node points and link lines of a model, in its map coordinates (names as a person reads them).

    Attributes
    ----------
    nodes : dict
        Node name -> (x, y) [map units].
    links : dict
        Link name -> [(x, y), ...]: from-node, vertices, to-node [map units].
    map_units : str or None
        ``ft``, ``m``, ``deg``, or None when the model names none.
    crs : str or None
        ``EPSG:2263`` ... when stated (see the module), else None.
    crs_source : str
        Where the CRS came from, or why there is none.
    """

    nodes: dict[str, tuple[float, float]] = field(default_factory=dict)
    links: dict[str, list[tuple[float, float]]] = field(default_factory=dict)
    map_units: str | None = None
    crs: str | None = None
    crs_source: str = "no coordinates"

    def to_dict(self) -> dict:
        """The ``geometry`` block of a result document (JSON: lists, not tuples)."""
        return {"map_units": self.map_units, "crs": self.crs, "crs_source": self.crs_source, "crs_policy": CRS_POLICY,
                "nodes": {k: [x, y] for k, (x, y) in self.nodes.items()},
                "links": {k: [[x, y] for x, y in line] for k, line in self.links.items()}}

    @classmethod
    def from_dict(cls, doc: dict | None) -> ModelGeometry:
        """The geometry of a result document's ``geometry`` block (empty when there is none)."""
        if not doc:
            return cls()
        return cls({k: (float(v[0]), float(v[1])) for k, v in (doc.get("nodes") or {}).items()},
                   {k: [(float(p[0]), float(p[1])) for p in line] for k, line in (doc.get("links") or {}).items()},
                   doc.get("map_units"), doc.get("crs"), doc.get("crs_source") or "")


def check_crs(crs: str | None) -> str | None:
    """An explicit CRS (``EPSG:2263``, ``OGC:CRS84``, ``urn:ogc:def:crs:...``) or InputError naming what is allowed."""
    if crs is None:
        return None
    text = str(crs).strip()
    if not _CRS_ARG.match(text):
        raise InputError(f"--crs {crs!r}: expected an authority code such as EPSG:2263, ESRI:102718 or OGC:CRS84")
    return text.upper() if not text.lower().startswith("urn:") else text


def _point(tokens: list[str]) -> tuple[float, float] | None:
    if len(tokens) < 3:
        return None
    x, y = finite_number(tokens[1]), finite_number(tokens[2])
    return None if x is None or y is None else (x, y)


def model_geometry(model: SwmmInp, crs: str | None = None) -> ModelGeometry:
    """Node points, link lines, map units and CRS of a parsed model (see the module for the CRS).

    Parameters
    ----------
    model : SwmmInp
        The model (:func:`capacitysim.network.model.parse_inp` or ``load_model``).
    crs : str, optional
        An explicit CRS, overriding what the file says (:func:`check_crs`).

    Returns
    -------
    ModelGeometry
        Names are display names (:func:`capacitysim.network.model.display_name`), as in the result
        documents. A node listed twice in ``[COORDINATES]`` keeps its last point (as SWMM's GUI).
    """
    canon = {}
    for nid in model.node_ids():
        canon[nid.upper()] = nid
    pts: dict[str, tuple[float, float]] = {}
    for r in model.rows("COORDINATES"):
        p = _point(r.tokens)
        n = canon.get(r.tokens[0].upper())
        if p is not None and n is not None:
            pts[n] = p
    verts: dict[str, list[tuple[float, float]]] = {}
    for r in model.rows("VERTICES"):
        p = _point(r.tokens)
        if p is not None:
            verts.setdefault(r.tokens[0].upper(), []).append(p)
    lines: dict[str, list[tuple[float, float]]] = {}
    for lid, sec, n1, n2, _ in model.links():
        if sec in LINK_SECTIONS and n1 in pts and n2 in pts:
            lines[display_name(lid)] = [pts[n1], *verts.get(lid.upper(), []), pts[n2]]
    units_tok = next((r.tokens[1] for r in model.rows("MAP") if len(r.tokens) >= 2 and r.tokens[0].upper() == "UNITS"), None)
    map_units = MAP_UNITS.get(units_tok.upper()) if units_tok else None
    geom = ModelGeometry({display_name(k): v for k, v in pts.items()}, lines, map_units)
    geom.crs, geom.crs_source = _crs(model, crs, geom)
    return geom


def _crs(model: SwmmInp, crs: str | None, geom: ModelGeometry) -> tuple[str | None, str]:
    if crs is not None:
        return check_crs(crs), "given (--crs)"
    for i, line in enumerate(model.lines, start=1):
        m = _CRS_COMMENT.match(line)
        if m:
            return check_crs(m.group(1)), f"comment on line {i} of {model.path.name}"
    if not geom.nodes:
        return None, "the model has no [COORDINATES]"
    if geom.map_units == "deg":
        xs = [p[0] for p in geom.nodes.values()]
        ys = [p[1] for p in geom.nodes.values()]
        if all(math.isfinite(v) and abs(v) <= 180 for v in xs) and all(abs(v) <= 90 for v in ys):
            return "OGC:CRS84", "[MAP] UNITS Degrees (longitude, latitude on WGS 84)"
        return None, "[MAP] UNITS Degrees but coordinates outside longitude/latitude: none stated"
    return None, "the model states no CRS (map coordinates" + (f" in {geom.map_units})" if geom.map_units else ", units not named)")
