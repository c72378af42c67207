"""Network maps as SVG text, for the web pages: a model's plan to pick connection nodes on
(:func:`model_svg`) and a capacity demonstration's result on that plan (:func:`result_svg`).

Both are pure functions returning SVG (text, UTF-8 when encoded), drawn from the model's map sections
(``[COORDINATES]``, ``[VERTICES]``, read by :func:`capacitysim.io.export.geometry.model_geometry`) or from the
``geometry`` block of a result document (the same reading, stored with the result). North is up: SWMM map
coordinates have no rotation (SWMM 5.2 User's Manual, EPA/600/R-22/030, Appendix D: ``[MAP]``,
``[COORDINATES]``, ``[VERTICES]``), so the model's y axis, which points up, is turned into SVG's, which points
down. The coordinates are scaled into a viewBox :data:`WIDTH` units wide (the map's own proportions), so the
sizes of circles and of text are about screen pixels at that width; strokes are in screen units
(``vector-effect: non-scaling-stroke``) and keep their width when the map is zoomed.

Every name is user data (a model's node and link names): it goes into the SVG only escaped
(:func:`_attr`, :func:`_text`), and characters XML 1.0 does not allow (control characters a model's bytes may
hold) are replaced, so any name stays text and the SVG stays well-formed XML. The SVG holds no script, no
event attribute, no link and no ``id`` (two maps may share a page): elements carry ``data-node`` and
``data-link`` (the names as a person reads them, as the result documents give them), and a ``<title>`` that a
browser shows on hover. Its CSS (a ``<style>`` element, allowed by the pages' ``style-src 'unsafe-inline'``) is
scoped to the map's root class :data:`ROOT_CLASS`.
"""

from __future__ import annotations

import math
import re
from xml.sax.saxutils import escape

#: Width of the map area of the viewBox [SVG user units, about px when shown at that width].
WIDTH = 1000.0
#: Margin around the network in the viewBox [user units].
PAD = 16.0
#: The class of every map's root ``<svg>``: its CSS applies under it only.
ROOT_CLASS = "csmap"

#: d/D display classes below the criterion's limit: (upper bound, colour, legend text). The 0.5 break
#: (half full) is a display break, not a criterion; the limit between the classes that follow is the
#: document's ``criteria.max_d_over_d`` (see :func:`dd_classes`).
DD_LOW = 0.5
#: Colours of the d/D classes: below 0.5, 0.5 to the limit, past the limit and below full, full (d/D = 1: the
#: conduit flowed full, surcharged). Distinct on a grey-scale print (light to dark).
DD_COLOURS = ("#9ecae1", "#2b7bba", "#f28e2b", "#b2182b")
#: Stroke widths of the d/D classes [screen px].
DD_WIDTHS = (1.5, 2.2, 3.2, 4.2)
#: A link without a d/D (pumps, weirs, orifices, outlets: SWMM reports no max/full depth for them).
NO_DD_COLOUR = "#8c8c8c"

#: Surcharge display classes of the nodes after the change (SWMM's Node Surcharge Summary, "Max Height Above
#: Crown" [ft]; SWMM 5.2 User's Manual, EPA/600/R-22/030, section 10 (Viewing Results, the status report)):
#: (lower bound [ft], fill colour, legend text). A display scale, not a criterion: the criteria judge freeboard
#: to the rim (``criteria.freeboard_ft``) and flooding.
SURCHARGE_CLASSES = ((0.0, "#ffffff", "none"), (1e-9, "#fdd49e", "> 0 to 1 ft"), (1.0, "#fc8d59", "1 to 3 ft"),
                     (3.0, "#d7301f", "3 ft or more"))
#: Fill of a node that floods after the change (``flooding_volume_cf_after`` > 0 [ft3]).
FLOOD_COLOUR = "#54278f"
#: Red of the rings of failed checks.
FAIL_COLOUR = "#d62728"
#: Colour of the marks of existing deficiencies (past their limit before the change).
EXISTING_COLOUR = "#7b3294"
#: Colour of the connection marks.
CONNECTION_COLOUR = "#f1c40f"

_STYLE = (
    ".csmap{font:12px sans-serif;background:#fff}"
    ".csmap polyline{fill:none;stroke-linecap:round;stroke-linejoin:round;vector-effect:non-scaling-stroke}"
    ".csmap circle,.csmap polygon,.csmap rect,.csmap line{vector-effect:non-scaling-stroke}"
    ".csmap .nd{fill:#fff;stroke:#333;stroke-width:1;cursor:pointer}"
    ".csmap .nd:hover{stroke:#000;stroke-width:2.5}"
    ".csmap .nd.out{fill:#1f4e79;stroke:#000}"
    ".csmap .nd.sto{fill:#6baed6;stroke:#08306b;stroke-width:1.5}"
    ".csmap .nd.sel{fill:#f1c40f;stroke:#000;stroke-width:2.5}"
    ".csmap .lk{stroke:#555;stroke-width:1.5}"
    ".csmap .lk.other{stroke:#8c8c8c;stroke-dasharray:4 3}"
    f".csmap .fail{{fill:none;stroke:{FAIL_COLOUR};stroke-width:2.5;pointer-events:none}}"
    f".csmap .halo{{stroke:{FAIL_COLOUR};stroke-opacity:.45;stroke-width:11;pointer-events:none}}"
    f".csmap .pre{{fill:none;stroke:{EXISTING_COLOUR};stroke-width:2;stroke-dasharray:3 2;pointer-events:none}}"
    f".csmap .prel{{stroke:{EXISTING_COLOUR};stroke-opacity:.6;stroke-width:8;stroke-dasharray:2 4;pointer-events:none}}"
    f".csmap .conn{{fill:{CONNECTION_COLOUR};stroke:#000;stroke-width:1.2;pointer-events:none}}"
    ".csmap .lbl{font-weight:bold;paint-order:stroke;stroke:#fff;stroke-width:3;pointer-events:none}"
    ".csmap .lg{font-size:12px}.csmap .lgh{font-weight:bold}"
    + "".join(f".csmap .lk.d{i}{{stroke:{c};stroke-width:{w:g}}}" for i, (c, w) in enumerate(zip(DD_COLOURS, DD_WIDTHS)))
    + "".join(f".csmap .nd.s{i}{{fill:{c}}}" for i, (_, c, _) in enumerate(SURCHARGE_CLASSES) if i)
    + f".csmap .nd.fl{{fill:{FLOOD_COLOUR}}}"
)

# XML 1.0 Char: #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF]
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _clean(s) -> str:
    """``s`` as text XML 1.0 can hold: characters it does not allow become U+FFFD."""
    return _NOT_XML.sub("\ufffd", str(s))


def _text(s) -> str:
    """Escaped element text (``&``, ``<``, ``>``)."""
    return escape(_clean(s))


def _attr(s) -> str:
    """An escaped attribute value for ``attr="..."`` (``&``, ``<``, ``>``, ``"``, tab and line breaks kept as
    text)."""
    return escape(_clean(s), {'"': "&quot;", "\t": "&#9;", "\n": "&#10;", "\r": "&#13;"})


def _num(v: float) -> str:
    """A coordinate in the viewBox, to 0.1 unit (0.1 px at the map's width): short text."""
    s = f"{v:.1f}"
    return s[:-2] if s.endswith(".0") else s


class _Frame:
    """The map's transform: model coordinates -> viewBox units (uniform scale, y flipped, centred)."""

    def __init__(self, points):
        xs = [p[0] for p in points]
        ys = [p[1] for p in points]
        self.x0, self.y1 = min(xs), max(ys)
        dx, dy = max(xs) - self.x0, self.y1 - min(ys)
        inner = WIDTH - 2 * PAD
        self.k = inner / dx if dx > 0 else inner / dy if dy > 0 else 1.0
        if dy * self.k > 1.5 * inner:  # never taller than 1.5 x the width
            self.k = 1.5 * inner / dy
        self.xoff = PAD + (inner - dx * self.k) / 2.0
        self.height = dy * self.k + 2 * PAD

    def xy(self, p) -> tuple[float, float]:
        return self.xoff + (p[0] - self.x0) * self.k, PAD + (self.y1 - p[1]) * self.k

    def pts(self, line) -> str:
        out = []
        for p in line:
            x, y = self.xy(p)
            out.append(f"{_num(x)},{_num(y)}")
        return " ".join(out)


def node_radius(n_nodes: int) -> float:
    """The radius of a node's circle [user units ~ px]: smaller on larger networks so the links stay visible."""
    return 5.0 if n_nodes <= 150 else 3.5 if n_nodes <= 600 else 2.5


def message_svg(message: str) -> str:
    """An SVG that says ``message`` (no map): a model without coordinates, a result without geometry."""
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="{ROOT_CLASS}" data-empty="1" viewBox="0 0 {WIDTH:g} 60"'
            f' width="100%" role="img"><title>{_text(message)}</title><style>{_STYLE}</style>'
            f'<rect x="0" y="0" width="{WIDTH:g}" height="60" fill="#f7f7f7" stroke="#bbb"/>'
            f'<text x="16" y="35" font-size="15">{_text(message)}</text></svg>')


def _svg_open(frame: _Frame, legend_h: float, label: str, kind: str) -> str:
    h = frame.height + legend_h
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="{ROOT_CLASS}" data-map="{kind}" '
            f'viewBox="0 0 {WIDTH:g} {_num(h)}" width="100%" preserveAspectRatio="xMidYMin meet" role="img" '
            f'data-map-height="{_num(frame.height)}"><title>{_text(label)}</title><style>{_STYLE}</style>'
            f'<rect x="0" y="0" width="{WIDTH:g}" height="{_num(h)}" fill="#fff"/>')


def _legend(y0: float, rows: list[tuple[str, str]], heading: list[str]) -> tuple[list[str], float]:
    """Legend rows (swatch SVG drawn at (0, 0) within 30 x 14, text) under the ``heading`` lines, in two columns
    from ``y0``; returns the parts and the height used."""
    out = ['<g class="legend">'] + [f'<text class="lg lgh" x="{PAD:g}" y="{_num(y0 + 14 + 16 * i)}">{_text(h)}</text>' for i, h in enumerate(heading)]
    top = y0 + 8 + 16 * len(heading)
    col_w = (WIDTH - 2 * PAD) / 2
    for i, (swatch, text) in enumerate(rows):
        x = PAD + (i % 2) * col_w
        y = top + (i // 2) * 20
        out.append(f'<g transform="translate({_num(x)},{_num(y)})">{swatch}'
                   f'<text class="lg" x="38" y="11">{_text(text)}</text></g>')
    out.append("</g>")
    return out, top - y0 + ((len(rows) + 1) // 2) * 20 + 6


def _line_swatch(cls: str, style: str = "") -> str:
    return f'<polyline class="{cls}" points="2,7 30,7"{style}/>'


def _dot_swatch(cls: str, fill: str | None = None) -> str:
    style = f' style="fill:{fill}"' if fill else ""
    return f'<circle class="{cls}" cx="16" cy="7" r="5"{style}/>'


def _star(x: float, y: float, r: float) -> str:
    """A five-pointed star's points around (x, y), outer radius ``r``."""
    pts = []
    for i in range(10):
        a = -math.pi / 2 + i * math.pi / 5
        rr = r if i % 2 == 0 else r * 0.45
        pts.append(f"{_num(x + rr * math.cos(a))},{_num(y + rr * math.sin(a))}")
    return " ".join(pts)


def _scale_text(map_units, crs) -> str:
    units = {"ft": "feet", "m": "metres", "deg": "degrees"}.get(map_units, map_units) if map_units else None
    return ("north up; coordinates in " + units if units else "north up; map coordinates (the model names no units)") \
        + (f"; CRS {crs}" if crs else "")


# --- the model's plan --------------------------------------------------------------------------------------


def model_svg(model_path) -> str:
    """The plan of a SWMM model (``.inp``) for picking nodes: SVG text.

    Every node with coordinates is a ``<circle data-node="NAME">`` with a ``<title>`` (its name and kind),
    junctions white, outfalls dark, storage units blue (class ``nd`` and ``out``/``sto``); every link whose two
    nodes have coordinates is a ``<polyline data-link="NAME">`` through its vertices, conduits solid, pumps,
    weirs, orifices and outlets grey dashes. A model without ``[COORDINATES]`` gives :func:`message_svg`.

    Parameters
    ----------
    model_path : path
        A SWMM input file (read as text: :func:`capacitysim.network.model.parse_inp`; no engine).

    Raises
    ------
    capacitysim.errors.InputError
        The file is not a readable model (:func:`~capacitysim.network.model.parse_inp`).
    """
    from capacitysim.io.export.geometry import model_geometry
    from capacitysim.network.model import display_name, parse_inp

    model = parse_inp(model_path)
    geom = model_geometry(model)
    kinds = {display_name(n): sec for n, (sec, _) in model.node_ids().items()}
    link_kind = {display_name(lid): sec for lid, sec, _, _, _ in model.links()}
    name = getattr(model_path, "name", None) or str(model_path).replace("\\", "/").rsplit("/", 1)[-1]
    if not geom.nodes:
        return message_svg(f"The model {name} has no coordinates ([COORDINATES]): no map can be drawn; "
                           "type the connection nodes by name.")
    frame = _Frame(list(geom.nodes.values()) + [p for line in geom.links.values() for p in line])
    r = node_radius(len(geom.nodes))
    rows = [(_line_swatch("lk"), "conduit"), (_line_swatch("lk other"), "pump, weir, orifice, outlet"),
            (_dot_swatch("nd"), "junction (click to pick)"), (_dot_swatch("nd out"), "outfall"),
            (_dot_swatch("nd sto"), "storage unit"), (_dot_swatch("nd sel"), "picked")]
    legend, lh = _legend(frame.height, rows, [f"{name}: {len(geom.nodes):,} nodes, {len(geom.links):,} links",
                                              _scale_text(geom.map_units, geom.crs)])
    parts = [_svg_open(frame, lh, f"Network map of {name}", "model"), '<g class="links">']
    for lid, line in geom.links.items():
        cls = "lk" if link_kind.get(lid) == "CONDUITS" else "lk other"
        kind = (link_kind.get(lid) or "link").lower().rstrip("s")
        parts.append(f'<polyline class="{cls}" data-link="{_attr(lid)}" points="{frame.pts(line)}">'
                     f'<title>{_text(lid)} ({kind})</title></polyline>')
    parts.append('</g><g class="nodes">')
    node_cls = {"OUTFALLS": "nd out", "STORAGE": "nd sto"}
    for nid, p in geom.nodes.items():
        x, y = frame.xy(p)
        sec = kinds.get(nid, "")
        kind = {"JUNCTIONS": "junction", "OUTFALLS": "outfall", "STORAGE": "storage", "DIVIDERS": "divider"}.get(sec, "node")
        parts.append(f'<circle class="{node_cls.get(sec, "nd")}" data-node="{_attr(nid)}" cx="{_num(x)}" cy="{_num(y)}"'
                     f' r="{r:g}"><title>{_text(nid)} ({kind})</title></circle>')
    parts.append("</g>")
    parts += legend
    parts.append("</svg>")
    return "".join(parts)


# --- a capacity demonstration's result --------------------------------------------------------------------


def dd_limit(doc: dict) -> float:
    """The d/D limit of gravity sewers the document was judged by: its ``criteria.max_d_over_d``, else the
    default of :class:`capacitysim.rules.capacity.Criteria` (a named program policy; the regulations, BJC I/I
    offset program H(1) and 15 RCNY § 18-36, ask for "hydraulic capacity" without a number)."""
    crit = doc.get("criteria")
    v = crit.get("max_d_over_d") if isinstance(crit, dict) else None
    if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0:
        return float(v)
    from capacitysim.rules.capacity import Criteria

    return float(Criteria.max_d_over_d)


def dd_classes(limit: float) -> list[tuple[float, str, float, str]]:
    """The d/D classes of links for a limit: ``(upper bound (exclusive, except the limit's own class), colour,
    width [px], legend)``: below 0.5; 0.5 to the limit (within it: the check is ``d/D <= limit``); past the limit
    and below 1; 1.0, full (surcharged)."""
    lo = min(DD_LOW, limit)
    return [(lo, DD_COLOURS[0], DD_WIDTHS[0], f"d/D < {lo:g}"),
            (limit, DD_COLOURS[1], DD_WIDTHS[1], f"{lo:g} to {limit:g} (within the limit)"),
            (1.0, DD_COLOURS[2], DD_WIDTHS[2], f"> {limit:g} to < 1 (past the limit)"),
            (math.inf, DD_COLOURS[3], DD_WIDTHS[3], "1.0: flowed full (surcharged)")]


def dd_class(value: float, limit: float) -> int:
    """The index of ``value``'s class in :func:`dd_classes` (the limit belongs to the class within it)."""
    if value < min(DD_LOW, limit):
        return 0
    if value <= limit and value < 1.0:
        return 1
    if value < 1.0:
        return 2
    return 3


def surcharge_class(value: float) -> int:
    """The index of a surcharge [ft] in :data:`SURCHARGE_CLASSES`."""
    i = 0
    for k, (low, _, _) in enumerate(SURCHARGE_CLASSES):
        if value >= low:
            i = k
    return i


def _finite(v) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None


def _fmt(v, spec: str = ".3g") -> str:
    return "n/a" if v is None else format(v, spec)


def result_svg(doc: dict) -> str:
    """The result map of a capacity demonstration document (``capacitysim capacity --json``): SVG text.

    Drawn from the document alone: its ``geometry`` (node points and link lines), ``links`` (each link's
    ``max_d_over_d_after`` colours and widens it in the classes of :func:`dd_classes`, whose limit is the
    document's ``criteria.max_d_over_d``: :func:`dd_limit`), ``nodes`` (``max_surcharge_ft_after`` fills each node
    in :data:`SURCHARGE_CLASSES`; ``flooding_volume_cf_after`` > 0: :data:`FLOOD_COLOUR`), ``checks`` (the element
    of every failed check ringed red: a red ring around a node, a red halo under a link),
    ``margins.existing_deficiencies`` (elements past their limit in the run before the change: the system's, not
    the change's, marked with purple dashes) and ``scenario.connections`` (a yellow star and the flow). A legend
    with the scales and units is drawn below the map. A document without geometry gives :func:`message_svg`.
    """
    geom = doc.get("geometry") if isinstance(doc.get("geometry"), dict) else {}
    gnodes = {str(k): (float(v[0]), float(v[1])) for k, v in (geom.get("nodes") or {}).items()
              if isinstance(v, (list, tuple)) and len(v) >= 2 and _finite(v[0]) is not None and _finite(v[1]) is not None}
    glinks = {}
    for k, line in (geom.get("links") or {}).items():
        pts = [(float(p[0]), float(p[1])) for p in line or []
               if isinstance(p, (list, tuple)) and len(p) >= 2 and _finite(p[0]) is not None and _finite(p[1]) is not None]
        if len(pts) >= 2:
            glinks[str(k)] = pts
    model = str(doc.get("model_file") or "the model")
    if not gnodes:
        return message_svg(f"The model {model} has no coordinates ([COORDINATES]): the result has no map.")
    limit = dd_limit(doc)
    classes = dd_classes(limit)
    links = {str(r.get("id")): r for r in doc.get("links") or [] if isinstance(r, dict)}
    nodes = {str(r.get("id")): r for r in doc.get("nodes") or [] if isinstance(r, dict)}
    failed: dict[str, list[str]] = {}
    for ch in doc.get("checks") or []:
        if isinstance(ch, dict) and ch.get("passed") is False:
            failed.setdefault(str(ch.get("element")), []).append(str(ch.get("criterion", "")))
    margins = doc.get("margins") if isinstance(doc.get("margins"), dict) else {}
    existing: dict[str, list[str]] = {}
    for m in margins.get("existing_deficiencies") or []:
        if isinstance(m, dict):
            existing.setdefault(str(m.get("element")), []).append(
                f"{m.get('quantity')} {_fmt(_finite(m.get('before')))} before (limit {_fmt(_finite(m.get('limit')))})")
    before = doc.get("before") if isinstance(doc.get("before"), dict) else {}
    outfalls = {str(k) for k in (before.get("outfall_volume_cf") or {})}
    storage = {str(ch.get("element")) for ch in doc.get("checks") or [] if isinstance(ch, dict) and ch.get("kind") == "storage"}
    scen = doc.get("scenario") if isinstance(doc.get("scenario"), dict) else {}
    conns = [c for c in scen.get("connections") or [] if isinstance(c, dict)]

    frame = _Frame(list(gnodes.values()) + [p for line in glinks.values() for p in line])
    r = node_radius(len(gnodes))
    parts_l, parts_under, parts_n, parts_over = [], [], [], []
    used_nodd = False
    for lid, line in glinks.items():
        rec = links.get(lid, {})
        pts = frame.pts(line)
        a, b = _finite(rec.get("max_d_over_d_after")), _finite(rec.get("max_d_over_d_before"))
        qa = _finite(rec.get("max_q_over_qfull_after"))
        if lid in failed:
            parts_under.append(f'<polyline class="halo" points="{pts}"/>')
        if lid in existing:
            parts_under.append(f'<polyline class="prel" points="{pts}"/>')
        title = f"{lid}: d/D {_fmt(a, '.3f')} after, {_fmt(b, '.3f')} before; q/Qfull {_fmt(qa, '.3f')} after"
        if lid in failed:
            title += "; FAILS: " + "; ".join(failed[lid])
        if lid in existing:
            title += "; existing deficiency: " + "; ".join(existing[lid])
        if a is None:
            used_nodd = True
            parts_l.append(f'<polyline class="lk other" data-link="{_attr(lid)}" points="{pts}">'
                           f'<title>{_text(title)}</title></polyline>')
            continue
        i = dd_class(a, limit)
        parts_l.append(f'<polyline class="lk d{i}" data-link="{_attr(lid)}" data-dd="{a:.3f}" points="{pts}">'
                       f'<title>{_text(title)}</title></polyline>')
    for nid, p in gnodes.items():
        x, y = frame.xy(p)
        rec = nodes.get(nid, {})
        s, sb = _finite(rec.get("max_surcharge_ft_after")), _finite(rec.get("max_surcharge_ft_before"))
        fl = _finite(rec.get("flooding_volume_cf_after"))
        fb = _finite(rec.get("freeboard_ft_after"))
        cls = "nd" + (" out" if nid in outfalls else " sto" if nid in storage else "")
        if nid not in outfalls and nid not in storage:
            if fl is not None and fl > 0:
                cls += " fl"
            elif s is not None and surcharge_class(s):
                cls += f" s{surcharge_class(s)}"
        title = (f"{nid}: surcharge {_fmt(s, '.2f')} ft after, {_fmt(sb, '.2f')} before; flooding {_fmt(fl, ',.0f')} "
                 f"ft3, freeboard {_fmt(fb, '.2f')} ft after")
        if nid in failed:
            title += "; FAILS: " + "; ".join(failed[nid])
            parts_over.append(f'<circle class="fail" cx="{_num(x)}" cy="{_num(y)}" r="{r + 5:g}"/>')
        if nid in existing:
            title += "; existing deficiency: " + "; ".join(existing[nid])
            parts_over.append(f'<circle class="pre" cx="{_num(x)}" cy="{_num(y)}" r="{r + 3:g}"/>')
        parts_n.append(f'<circle class="{cls}" data-node="{_attr(nid)}" cx="{_num(x)}" cy="{_num(y)}" r="{r:g}">'
                       f'<title>{_text(title)}</title></circle>')
    for c in conns:
        n = str(c.get("node"))
        if n in gnodes:
            x, y = frame.xy(gnodes[n])
            gpd = _fmt(_finite(c.get("flow_gpd")), ",.0f")
            parts_over.append(f'<polygon class="conn" data-connection="{_attr(n)}" points="{_star(x, y, r + 8)}">'
                              f'<title>{_text(n)}: new connection, {gpd} gpd</title></polygon>')
            left = x > 0.7 * WIDTH  # near the right edge: the label to the left of the star
            lx, anchor = (x - r - 10, ' text-anchor="end"') if left else (x + r + 10, "")
            parts_over.append(f'<text class="lbl" x="{_num(lx)}" y="{_num(y - r - 6)}"{anchor}>{_text(n)} +{gpd} gpd</text>')

    rows = [(_line_swatch(f"lk d{i}"), text) for i, (_, _, _, text) in enumerate(classes)]
    if used_nodd:
        rows.append((_line_swatch("lk other"), "no d/D (pump, weir, orifice, outlet)"))
    rows += [(_dot_swatch("nd", SURCHARGE_CLASSES[k][1]), f"surcharge {SURCHARGE_CLASSES[k][2]}")
             for k in range(len(SURCHARGE_CLASSES))]
    rows += [(_dot_swatch("nd", FLOOD_COLOUR), "floods after the change (volume > 0 ft3)"),
             (_dot_swatch("nd out"), "outfall"),
             ('<circle class="fail" cx="16" cy="7" r="6"/>', "element of a failed check (ringed red)"),
             (_line_swatch("halo"), "link of a failed check"),
             ('<circle class="pre" cx="16" cy="7" r="6"/>', "existing deficiency (past its limit before the change)"),
             (_line_swatch("prel"), "link past its limit before the change"),
             (f'<polygon class="conn" points="{_star(16, 7, 7)}"/>', "new connection (flow in gpd)")]
    heading = [f"links: max d/D after the change [-], depth over full depth (limit {limit:g}: the document's "
               "criteria.max_d_over_d)", "nodes: max surcharge above the crown after the change [ft]",
               _scale_text(geom.get("map_units"), geom.get("crs"))]
    legend, lh = _legend(frame.height, rows, heading)
    verdict = str(doc.get("verdict") or "").upper()
    n_failed = sum(len(v) for v in failed.values())
    label = f"Result map of {model}: {verdict or 'no verdict'}, {n_failed} failed check(s)"
    parts = [_svg_open(frame, lh, label, "result"),
             '<g class="under">', *parts_under, '</g><g class="links">', *parts_l, '</g><g class="nodes">', *parts_n,
             '</g><g class="marks">', *parts_over, "</g>", *legend, "</svg>"]
    return "".join(parts)
