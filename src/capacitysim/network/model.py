"""Load and validate a SWMM 5 ``.inp`` file; the network as a directed graph.

The reader keeps every data line with its line number, so each problem found names the element,
the section and the line. It is deliberately small and fast (no swmmio import, no quadratic
``model.network``: ../shared/reference/swmm-notes.md); scenario edits go through swmmio
(:mod:`capacitysim.network.scenario`).

References
----------
.. [1] Rossman, L.A. (2022). Storm Water Management Model User's Manual Version 5.2,
   EPA/600/R-22/030, Appendix D (the sections of the input file and their fields).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import networkx as nx

from capacitysim.errors import DataFileError, ModelError

#: Every section SWMM 5.2 reads [1]_ (map and tag sections included: the engine skips them).
KNOWN_SECTIONS = frozenset(
    """TITLE OPTIONS REPORT FILES RAINGAGES EVAPORATION TEMPERATURE ADJUSTMENTS SUBCATCHMENTS SUBAREAS
    INFILTRATION LID_CONTROLS LID_USAGE AQUIFERS GROUNDWATER GWF SNOWPACKS JUNCTIONS OUTFALLS DIVIDERS
    STORAGE CONDUITS PUMPS ORIFICES WEIRS OUTLETS XSECTIONS TRANSECTS STREETS INLETS INLET_USAGE LOSSES
    CONTROLS POLLUTANTS LANDUSES COVERAGES LOADINGS BUILDUP WASHOFF TREATMENT INFLOWS DWF RDII HYDROGRAPHS
    CURVES TIMESERIES PATTERNS MAP POLYGONS COORDINATES VERTICES LABELS SYMBOLS BACKDROP TAGS PROFILES
    EVENTS""".split()
)
NODE_SECTIONS = ("JUNCTIONS", "OUTFALLS", "DIVIDERS", "STORAGE")
LINK_SECTIONS = ("CONDUITS", "PUMPS", "ORIFICES", "WEIRS", "OUTLETS")
#: Link kinds that need a [XSECTIONS] line [1]_ (pumps and outlets have none).
XSECTION_LINKS = ("CONDUITS", "ORIFICES", "WEIRS")
#: Shapes whose first geometry value is not a positive depth (given by a curve or a transect).
_NO_GEOM1 = {"DUMMY", "CUSTOM", "IRREGULAR", "STREET", "FORCE_MAIN"}

_TOKEN = re.compile(r'"[^"]*"|\S+')
_SECTION = re.compile(r"^\s*\[([^\]]*)\]")


@dataclass
class Row:
    """One data line of a section: its 1-based line number and its tokens (quotes removed)."""

    line: int
    tokens: list[str]


@dataclass
class SwmmInp:
    """A parsed ``.inp``: rows by section (upper-case names), in file order."""

    path: Path
    sections: dict[str, list[Row]] = field(default_factory=dict)
    section_lines: dict[str, int] = field(default_factory=dict)

    def rows(self, section: str) -> list[Row]:
        return self.sections.get(section, [])

    def option(self, name: str, default: str | None = None) -> str | None:
        for r in self.rows("OPTIONS"):
            if r.tokens and r.tokens[0].upper() == name.upper() and len(r.tokens) > 1:
                return r.tokens[1]
        return default

    @property
    def flow_units(self) -> str:
        return (self.option("FLOW_UNITS", "CFS") or "CFS").upper()

    def node_ids(self) -> dict[str, tuple[str, int]]:
        """Node id -> (section, line)."""
        out = {}
        for sec in NODE_SECTIONS:
            for r in self.rows(sec):
                out.setdefault(r.tokens[0], (sec, r.line))
        return out

    def links(self) -> list[tuple[str, str, str, str, int]]:
        """(link id, kind section, from node, to node, line) for every link."""
        return [(r.tokens[0], sec, r.tokens[1], r.tokens[2], r.line)
                for sec in LINK_SECTIONS for r in self.rows(sec) if len(r.tokens) >= 3]

    def dwf_baseline(self) -> dict[str, float]:
        """Average dry-weather FLOW per node [model flow units] from [DWF]."""
        out: dict[str, float] = {}
        for r in self.rows("DWF"):
            if len(r.tokens) >= 3 and r.tokens[1].upper() == "FLOW":
                try:
                    out[r.tokens[0]] = float(r.tokens[2])
                except ValueError:
                    pass
        return out


def parse_inp(path: str | os.PathLike) -> SwmmInp:
    """Read a ``.inp`` into sections of numbered rows (no checks beyond readable text)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        raise DataFileError(f"{p}: SWMM input file not found") from None
    except IsADirectoryError:
        raise DataFileError(f"{p}: is a folder, expected a SWMM .inp file") from None
    model = SwmmInp(p)
    section = None
    for i, line in enumerate(text.splitlines(), start=1):
        m = _SECTION.match(line)
        if m:
            section = m.group(1).strip().upper()
            model.sections.setdefault(section, [])
            model.section_lines.setdefault(section, i)
            continue
        if section in ("TITLE",):
            continue
        body = line.split(";", 1)[0] if section != "CONTROLS" else line.split(";", 1)[0]
        toks = [t.strip('"') if t.startswith('"') else t for t in _TOKEN.findall(body)]
        if not toks:
            continue
        if section is None:
            raise ModelError(f"{p.name}:{i}: data before the first [SECTION] header: {line.strip()[:60]!r}")
        model.sections[section].append(Row(i, toks))
    return model


def _num(tok: str) -> float | None:
    try:
        return float(tok)
    except ValueError:
        return None


def validate(model: SwmmInp) -> list[str]:
    """Problems that would stop the engine or make its results meaningless, each naming the line.

    Checks: unknown sections; missing [OPTIONS]/node/link sections; duplicate node or link ids;
    links whose end nodes are not defined (dangling references); conduits, orifices and weirs
    without a [XSECTIONS] line, and cross sections of unknown links; non-numeric or non-positive
    geometry (conduit length and roughness, cross-section depth, junction depth < 0); [DWF],
    [INFLOWS] and [RDII] lines at unknown nodes; negative DWF baselines; [RDII] with an undefined
    unit hydrograph or a negative sewer area; subcatchments draining to nothing defined.
    """
    name = model.path.name
    problems: list[str] = []

    def bad(line: int, msg: str) -> None:
        problems.append(f"{name}:{line}: {msg}")

    for sec, line in model.section_lines.items():
        if sec not in KNOWN_SECTIONS:
            bad(line, f"unknown section [{sec}] (SWMM 5.2 sections: {', '.join(sorted(KNOWN_SECTIONS)[:6])}, ...)")
    nodes: dict[str, tuple[str, int]] = {}
    for sec in NODE_SECTIONS:
        for r in model.rows(sec):
            nid = r.tokens[0]
            if nid in nodes:
                bad(r.line, f"node {nid} defined again (first in [{nodes[nid][0]}] line {nodes[nid][1]})")
            else:
                nodes[nid] = (sec, r.line)
            if sec == "JUNCTIONS":
                if len(r.tokens) < 3:
                    bad(r.line, f"junction {nid}: expected at least name, invert elevation and max depth")
                    continue
                if _num(r.tokens[1]) is None:
                    bad(r.line, f"junction {nid}: invert elevation {r.tokens[1]!r} is not a number")
                d = _num(r.tokens[2])
                if d is None or d < 0:
                    bad(r.line, f"junction {nid}: max depth {r.tokens[2]!r} must be a number >= 0 ft")
    if not nodes:
        problems.append(f"{name}: no nodes ([JUNCTIONS], [OUTFALLS], [STORAGE] or [DIVIDERS] are empty or missing)")
    links: dict[str, tuple[str, int]] = {}
    for lid, sec, n1, n2, line in model.links():
        if lid in links:
            bad(line, f"link {lid} defined again (first in [{links[lid][0]}] line {links[lid][1]})")
        links[lid] = (sec, line)
        kind = sec[:-1].lower()
        for end, nid in (("from", n1), ("to", n2)):
            if nid not in nodes:
                bad(line, f"{kind} {lid}: {end} node {nid} is not defined in {', '.join('[' + s + ']' for s in NODE_SECTIONS)}")
    for sec in LINK_SECTIONS:
        for r in model.rows(sec):
            if len(r.tokens) < 3:
                bad(r.line, f"{sec[:-1].lower()} {r.tokens[0]}: expected name, from node and to node")
    for r in model.rows("CONDUITS"):
        lid = r.tokens[0]
        if len(r.tokens) < 5:
            bad(r.line, f"conduit {lid}: expected name, from node, to node, length and roughness")
            continue
        length, n = _num(r.tokens[3]), _num(r.tokens[4])
        if length is None or length <= 0:
            bad(r.line, f"conduit {lid}: length {r.tokens[3]!r} must be a number > 0")
        if n is None or n <= 0:
            bad(r.line, f"conduit {lid}: roughness {r.tokens[4]!r} must be a number > 0")
    xs: dict[str, int] = {}
    for r in model.rows("XSECTIONS"):
        lid = r.tokens[0]
        xs[lid] = r.line
        if lid not in links:
            bad(r.line, f"cross section of link {lid}, which is not defined")
        if len(r.tokens) < 3:
            bad(r.line, f"cross section of {lid}: expected link, shape and geometry")
            continue
        shape = r.tokens[1].upper()
        if shape in _NO_GEOM1:
            continue
        g1 = _num(r.tokens[2])
        if g1 is None or g1 <= 0:
            bad(r.line, f"cross section of {lid}: {shape} depth (Geom1) {r.tokens[2]!r} must be a number > 0")
    for sec in XSECTION_LINKS:
        for r in model.rows(sec):
            if r.tokens[0] not in xs:
                bad(r.line, f"{sec[:-1].lower()} {r.tokens[0]} has no cross section in [XSECTIONS]")
    for sec in ("DWF", "INFLOWS", "RDII"):
        for r in model.rows(sec):
            if r.tokens[0] not in nodes:
                bad(r.line, f"[{sec}] refers to node {r.tokens[0]}, which is not defined")
    for r in model.rows("DWF"):
        if len(r.tokens) >= 3 and (_num(r.tokens[2]) is None or _num(r.tokens[2]) < 0):
            bad(r.line, f"[DWF] at {r.tokens[0]}: baseline {r.tokens[2]!r} must be a number >= 0")
    hydrographs = {r.tokens[0] for r in model.rows("HYDROGRAPHS")}
    for r in model.rows("RDII"):
        if len(r.tokens) < 3:
            bad(r.line, f"[RDII] at {r.tokens[0]}: expected node, unit hydrograph and sewer area")
            continue
        if r.tokens[1] not in hydrographs:
            bad(r.line, f"[RDII] at {r.tokens[0]}: unit hydrograph {r.tokens[1]} is not defined in [HYDROGRAPHS]")
        a = _num(r.tokens[2])
        if a is None or a < 0:
            bad(r.line, f"[RDII] at {r.tokens[0]}: sewer area {r.tokens[2]!r} must be a number >= 0")
    subcatch = {r.tokens[0] for r in model.rows("SUBCATCHMENTS")}
    for r in model.rows("SUBCATCHMENTS"):
        if len(r.tokens) >= 3 and r.tokens[2] not in nodes and r.tokens[2] not in subcatch:
            bad(r.line, f"subcatchment {r.tokens[0]}: outlet {r.tokens[2]} is neither a node nor a subcatchment")
    return problems


def load_model(path: str | os.PathLike, *, max_listed: int = 8) -> SwmmInp:
    """Parse and validate a ``.inp``; raise :class:`~capacitysim.errors.ModelError` listing the problems.

    Raises
    ------
    capacitysim.errors.DataFileError
        The file is missing.
    capacitysim.errors.ModelError
        The model fails :func:`validate`; the message lists up to ``max_listed`` problems, each
        with file, line and element.
    """
    model = parse_inp(path)
    problems = validate(model)
    if problems:
        shown = "; ".join(problems[:max_listed])
        more = f" (and {len(problems) - max_listed} more)" if len(problems) > max_listed else ""
        raise ModelError(f"{len(problems)} problem(s) in the model: {shown}{more}")
    return model


def network_graph(model: SwmmInp) -> nx.MultiDiGraph:
    """The network as a directed multigraph, edges from each link's from-node to its to-node.

    Built directly from [CONDUITS]/[PUMPS]/[ORIFICES]/[WEIRS]/[OUTLETS] in one pass (swmmio's
    ``model.network`` is quadratic in the number of links). Node attribute ``kind`` is the
    section (``JUNCTIONS``...); edge attributes are ``id``, ``kind`` and ``line``; the edge key is
    the link id.
    """
    g = nx.MultiDiGraph()
    for nid, (sec, line) in model.node_ids().items():
        g.add_node(nid, kind=sec, line=line)
    for lid, sec, n1, n2, line in model.links():
        g.add_edge(n1, n2, key=lid, id=lid, kind=sec, line=line)
    return g


def path_between(g: nx.MultiDiGraph, start: str, end: str) -> list[tuple[str, str, str]]:
    """The links (from, to, link id) along the shortest directed path from ``start`` to ``end``."""
    nodes = nx.shortest_path(g, start, end)
    out = []
    for a, b in zip(nodes[:-1], nodes[1:]):
        key = next(iter(g[a][b]))
        out.append((a, b, key))
    return out
