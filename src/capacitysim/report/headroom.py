"""The HTML report of a headroom run (``capacitysim headroom --report``).

It reads the result document only (:meth:`capacitysim.workflows.headroom.HeadroomResult.to_dict`), so a
stored document (``headroom.json``, a service job's results) renders the same report:

* a header block: the inputs, the counts (cells, SWMM runs, runs stopped, full-run equivalents) and
  the policies in force (the document's ``policies``, else those its ``method`` implies);
* a network map per storm, inline SVG (:func:`headroom_map`): the links, the nodes coloured by
  ``max_connection_gpd`` on a log scale with a colour bar in gpd, bracketed nodes as circles, bounded
  ones as squares, zero as crosses, cells without a figure as hollow diamonds; the governing elements
  ringed and labelled, the lowest figures labelled (:func:`capacitysim.report.plan_map.place_labels`,
  labels that would still overlap left out and counted in the caption), a north arrow and a scale bar
  in the model's map units (:mod:`capacitysim.report.plan_map`);
* the return-period matrix (node x storm) when there are several storms;
* the table of every cell sorted by its figure (the tightest first) with its bracket, its runs and the
  governing check (criterion, element, value at the failing flow and limit, with units).

Every number goes through :mod:`capacitysim.report.format`; every string of the user or the model is
escaped (:class:`capacitysim.report.html.HtmlReport`; matplotlib escapes the text of the SVG, and the
map's labels are drawn as outlines).

The map's geometry is the document's ``geometry`` block
(:meth:`capacitysim.io.export.geometry.ModelGeometry.to_dict`, as the capacity document has it), else
its ``coordinates`` and ``link_lines``, else those passed to :func:`write_report` (documents written
before the geometry was part of them).
"""

from __future__ import annotations

import html
import io
import math
import re
from pathlib import Path

import numpy as np

from capacitysim.io.export.geometry import ModelGeometry
from capacitysim.network.model import display_name
from capacitysim.report.format import label, number
from capacitysim.report.html import HtmlReport, file_label
from capacitysim.report.plan_map import (
    UNIT_WORDS,
    halo_text,
    map_figure,
    north_arrow,
    place_labels,
    scale_bar,
    settle_labels,
)
from capacitysim.rules.capacity import CAPACITY_CITATION

#: Nodes labelled on a map: the lowest figures (zero first), at most this many per storm.
LABEL_LOWEST = 8
#: Colour map of the figures (low = dark red, high = pale yellow; its lightness is monotone, so the order
#: survives a grey-scale print), cut before its near-white end so that every node shows on white paper.
CMAP = "YlOrRd_r"
CMAP_RANGE = (0.0, 0.82)
#: Marks of the cells by status: (marker, fill (None: the colour of the figure), edge colour, edge width [pt],
#: legend text). The shape and the outline tell the status without the colour.
MARKS = {"ok": ("o", None, "black", 0.7, "bracketed: the figure passed, a flow at most the tolerance above it failed"),
         "bounded": ("s", None, "black", 1.6, "bounded: the largest flow searched passes (the headroom is at least it)"),
         "zero": ("X", "#5b0a0a", "white", 0.6, "0: fails with the smallest flow searched"),
         "other": ("D", "none", "0.35", 1.2, "no figure: untrusted run, error or not computed")}
#: The fill of a coloured mark in the legend (a colour of the middle of the scale).
LEGEND_FILL = "#f08c3c"
# ----------------------------------------------------------------------------------------------
# words of one cell (also the CLI's text output)
# ----------------------------------------------------------------------------------------------
def _with_unit(value, unit) -> str:
    """``4.9384 cfs``: :func:`~capacitysim.report.format.number` and the unit (none for ratios)."""
    text = number(value, unit)
    return text if not unit or unit == "-" or text == "-" else f"{text} {unit}"


def screen_text(r: dict) -> str:
    """A screened cell's estimate as text (``--screen-only``), "" for any other cell: never a figure."""
    if r.get("status") != "missing" or not r.get("screened"):
        return ""
    if r.get("screen_gpd") is None:
        if r.get("screen_element"):
            return f"the screen gave no estimate ({r['screen_element']}), not confirmed"
        return "the screen found no element that limits it, not confirmed"
    return f"screen estimate {r['screen_gpd']:,.0f} gpd ({r.get('screen_element') or '-'}), not confirmed"


def governing_text(rec: dict) -> str:
    """``criterion at element: value (limit L unit)`` of a node's governing check, or ``-``."""
    g = rec.get("governing_check")
    if not g:
        return "-"
    value, limit = _check_values(g)
    return f"{g['criterion']} at {g['element']}: {value} (limit {limit})"


def _check_values(g: dict) -> tuple[str, str]:
    """The governing value and limit with their unit; a value that rounds to its limit says so (it failed)."""
    unit = g.get("unit")
    value, limit = _with_unit(g.get("value"), unit), _with_unit(g.get("limit"), unit)
    if value == limit and value != "-" and g.get("value") != g.get("limit"):
        value += " (just above the limit)"
    return value, limit


def headroom_text(rec: dict) -> str:
    """A node's headroom in words: a number [gpd], ``>= max`` (bounded), ``0`` or the status."""
    st = rec.get("status")
    if st == "bounded":
        return f">= {number(rec['max_connection_gpd'], 'gpd')}"
    if st in ("ok", "zero"):
        return number(rec["max_connection_gpd"], "gpd")
    return st or "-"


def _headroom_cell(rec: dict):
    """The figure as a table cell: the number itself (formatted by its column's unit), else words."""
    if rec.get("status") in ("ok", "zero") and rec.get("max_connection_gpd") is not None:
        return float(rec["max_connection_gpd"])
    return headroom_text(rec)


def _sort_key(rec: dict):
    """Figures first, smallest first; then cells without one, a screened cell by its estimate (``--screen-only``)."""
    v = rec.get("max_connection_gpd")
    if v is None:
        est = rec.get("screen_gpd") if rec.get("screened") else None
        return (True, math.inf if est is None else est, rec["node"], rec["storm"])
    return (False, v, rec["node"], rec["storm"])


# ----------------------------------------------------------------------------------------------
# the map
# ----------------------------------------------------------------------------------------------
def map_geometry(doc: dict, coordinates: dict | None = None, link_lines: list | None = None) -> ModelGeometry:
    """The map's geometry: the document's ``geometry`` block, else its ``coordinates``/``link_lines``
    (and ``map_units``), else the arguments (node -> (x, y); ``[{"link", "points"}]``)."""
    if doc.get("geometry"):
        return ModelGeometry.from_dict(doc["geometry"])
    coords = doc.get("coordinates") or coordinates or {}
    lines = doc.get("link_lines") or link_lines or []
    return ModelGeometry({str(k): (float(v[0]), float(v[1])) for k, v in coords.items()},
                         {str(ln["link"]): [(float(p[0]), float(p[1])) for p in ln["points"]] for ln in lines},
                         doc.get("map_units"), doc.get("crs"), doc.get("crs_source") or "")


def color_scale(doc: dict):
    """(norm, colormap, ticks [gpd]) of the figures of every storm (one scale, so maps compare), or None
    when no cell has a positive figure. Log scale; ticks at 1, 2, 5 x 10^k within the range, else its ends."""
    import matplotlib.colors as mcolors
    from matplotlib import colormaps

    vals = [float(r["max_connection_gpd"]) for r in doc["nodes"]
            if r.get("status") in ("ok", "bounded") and (r.get("max_connection_gpd") or 0) > 0]
    if not vals:
        return None
    lo, hi = min(vals), max(vals)
    if hi <= lo * 1.0001:
        lo, hi = lo / 2.0, hi * 2.0
    base = colormaps[CMAP]
    cmap = mcolors.LinearSegmentedColormap.from_list("headroom", base(np.linspace(*CMAP_RANGE, 256)))
    decades = range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)
    for steps in ((1, 2, 5), (1, 3), (1,)):
        ticks = [m * 10.0**k for k in decades for m in steps if lo <= m * 10.0**k <= hi]
        if len(ticks) <= 6:
            break
    if len(ticks) < 2:
        ticks = [lo, hi]
    return mcolors.LogNorm(vmin=lo, vmax=hi), cmap, ticks


def _aliased(table: dict, names) -> dict:
    """``table`` (the geometry's, keyed by names as a person reads them,
    :func:`capacitysim.network.model.display_name`) also under the document's spelling of ``names``."""
    out = dict(table)
    for n in names:
        if n is not None and n not in out and display_name(str(n)) in out:
            out[n] = out[display_name(str(n))]
    return out


def _link_mid(line) -> tuple[float, float]:
    pts = np.asarray(line, float)
    return tuple(pts[len(pts) // 2]) if len(pts) > 2 else tuple(pts.mean(axis=0))


#: Above this many nodes searched, a map draws its node marks per kind (one artist each) instead of one per node with
#: its own id (``node-MH0001``): a 10,000-node map took 40 s and 8 MB that way.
MAP_NODE_IDS_MAX = 500
#: Rows of the table of nodes: the tightest cells (a 10,000-node screening's table was 110,000 cells of a page that
#: took 11 to 14 s to open in Chromium); the CSV and the JSON hold every cell.
TABLE_ROWS_MAX = 1000


def headroom_map(doc: dict, storm: str, geom: ModelGeometry):
    """The map of one storm's figures, or None when none of its nodes has coordinates.

    Returns
    -------
    (figure, caption, info) or None
        ``info``: ``scale_length`` (the scale bar [map units], 0 for degrees), ``map_units``,
        ``labels`` (the texts drawn) and ``labels_left_out`` (would have overlapped).
    """
    import matplotlib.colors as mcolors
    from matplotlib.collections import LineCollection
    from matplotlib.lines import Line2D

    recs = [r for r in doc["nodes"] if r["storm"] == storm]
    named = [r["node"] for r in recs] + [(r.get("governing_check") or {}).get("element") for r in recs] + [doc.get("plant")]
    nodes, links = _aliased(geom.nodes, named), _aliased(geom.links, named)
    on_map = [r for r in recs if r["node"] in nodes]
    if not on_map:
        return None
    scale = color_scale(doc)
    fig, ax = map_figure(geom, legend_in=1.6)
    # every link in one artist (one per link took most of a 10,000-node map's drawing)
    ax.add_collection(LineCollection([np.asarray(line, float) for line in geom.links.values()], colors="0.62",
                                     linewidths=0.9, zorder=1, capstyle="round", gid="links"))
    searched = {r["node"] for r in recs} | {display_name(str(r["node"])) for r in recs}
    rest = np.asarray([xy for n, xy in geom.nodes.items() if n not in searched], float).reshape(-1, 2)
    handles = [Line2D([], [], color="0.62", lw=0.9, label="link")]
    if len(rest):
        ax.plot(rest[:, 0], rest[:, 1], ls="none", marker="o", ms=2.0, color="0.55", zorder=2, gid="nodes-not-searched")
        handles.append(Line2D([], [], ls="none", marker="o", ms=2.0, color="0.55", label="node not searched"))
    size = 7.5 if len(on_map) <= 100 else 4.5
    shown = set()
    by_kind: dict[tuple, list] = {}

    def mark_size(kind: str) -> float:  # a hollow mark (zero, other) a quarter larger, to read as the filled ones
        return size * (1.25 if kind in ("zero", "other") else 1.0)

    for r in on_map:
        st = r.get("status")
        kind = st if st in ("ok", "bounded", "zero") else "other"
        marker, face, edge, ew, _ = MARKS[kind]
        v = r.get("max_connection_gpd")
        if face is None:
            face = scale[1](scale[0](float(v))) if scale is not None and v else "none"
        shown.add(kind)
        if len(on_map) > MAP_NODE_IDS_MAX:
            by_kind.setdefault((kind, face if isinstance(face, str) else mcolors.to_hex(face)), []).append(nodes[r["node"]])
            continue
        ax.plot(*nodes[r["node"]], ls="none", marker=marker, ms=mark_size(kind),
                markerfacecolor=face, markeredgecolor=edge, markeredgewidth=ew, zorder=5 if kind == "ok" else 6,
                gid=f"node-{r['node']}")
    # a large map: one artist per kind of mark and colour (at most the colour scale's 256), no id per node
    for k, ((kind, face), pts) in enumerate(by_kind.items()):
        marker, _, edge, ew, _ = MARKS[kind]
        xy = np.asarray(pts, float)
        ax.plot(xy[:, 0], xy[:, 1], ls="none", marker=marker, ms=mark_size(kind),
                markerfacecolor=face, markeredgecolor=edge, markeredgewidth=ew, zorder=5 if kind == "ok" else 6,
                gid=f"nodes-{kind}-{k}")
    for kind, (marker, face, edge, ew, text) in MARKS.items():
        if kind in shown:
            handles.append(Line2D([], [], ls="none", marker=marker, ms=size, markerfacecolor=face or LEGEND_FILL,
                                  markeredgecolor=edge, markeredgewidth=ew, label=text))
    # the governing elements (a node, or the middle of a link), ringed, with the number of cells they govern
    governs: dict[str, list[str]] = {}
    for r in recs:
        g = r.get("governing_check")
        if g and r.get("status") in ("ok", "zero"):
            governs.setdefault(str(g["element"]), []).append(r["node"])
    plant = doc.get("plant")
    ringed = False
    labels = []
    for el, governed in sorted(governs.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        if el in nodes:
            x, y = nodes[el]
        elif el in links:
            pts = np.asarray(links[el], float)
            ax.plot(pts[:, 0], pts[:, 1], color="#1f4e79", lw=6, alpha=0.35, zorder=1.5, solid_capstyle="round")
            x, y = _link_mid(links[el])
        else:
            continue
        ax.plot([x], [y], ls="none", marker="o", ms=16, markerfacecolor="none", markeredgecolor="#1f4e79",
                markeredgewidth=2.0, zorder=7, gid=f"governing-{el}")
        ringed = True
        what = "plant " if el == plant else ""
        labels.append(halo_text(ax, x, y, f"{what}{el}: governs {len(governed)}", color="#1f4e79", fontweight="bold"))
    if ringed:
        handles.append(Line2D([], [], ls="none", marker="o", ms=12, markerfacecolor="none", markeredgecolor="#1f4e79",
                              markeredgewidth=2.0, label="governing element (number of nodes it governs)"))
    if plant in nodes:
        ax.plot(*nodes[plant], ls="none", marker="^", ms=11, markerfacecolor="white", markeredgecolor="black",
                markeredgewidth=1.0, zorder=6, gid="plant")
        handles.append(Line2D([], [], ls="none", marker="^", ms=9, markerfacecolor="white", markeredgecolor="black",
                              label="treatment plant"))
        if plant not in governs:
            labels.append(halo_text(ax, *nodes[plant], f"plant {plant}"))
    lowest = sorted((r for r in on_map if r.get("status") in ("ok", "zero")), key=_sort_key)[:LABEL_LOWEST]
    for r in lowest:
        labels.append(halo_text(ax, *nodes[r["node"]], f"{r['node']}: {headroom_text(r)} gpd"))
    if scale is not None:
        import matplotlib.cm as mcm
        from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

        sm = mcm.ScalarMappable(norm=scale[0], cmap=scale[1])
        cb = fig.colorbar(sm, ax=ax, shrink=0.8, pad=0.02, fraction=0.04)
        cb.set_label("largest connection that passes [gpd] (log scale)")
        cb.ax.yaxis.set_major_locator(FixedLocator(scale[2]))
        cb.ax.yaxis.set_minor_locator(NullLocator())
        cb.ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: number(v, "gpd")))
    ax.set_aspect("equal", adjustable="datalim")
    ax.margins(0.08)
    ax.set_xticks([])
    ax.set_yticks([])
    for side in ax.spines.values():
        side.set_color("0.6")
    fig.canvas.draw()  # the final limits, for the labels and the scale bar
    place_labels(ax)
    arrow = north_arrow(ax)
    arrow.set_gid("north-arrow")
    if arrow.arrow_patch is not None:
        arrow.arrow_patch.set_gid("north-arrow-arrow")
    length = scale_bar(ax, geom.map_units)
    bar = ax.artists[-1] if length else None
    if bar is not None:
        _tag_scale_bar(bar)
    renderer = fig.canvas.get_renderer()
    reserved = [arrow.get_window_extent(renderer)]
    if arrow.arrow_patch is not None:
        reserved.append(arrow.arrow_patch.get_window_extent(renderer))
    if bar is not None:
        reserved.append(bar.get_window_extent(renderer))
    left_out = settle_labels(labels, renderer, reserved, ax.get_window_extent(renderer))
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.01), ncol=2, fontsize=8, frameon=False)
    units = UNIT_WORDS.get(geom.map_units, geom.map_units)
    where = (f"coordinates in {units}" if geom.map_units else "the model names no map units ([MAP] UNITS): the scale "
             "is in its map units") + (f"; CRS {geom.crs}" if geom.crs else "; no CRS stated")
    kept = [t.get_text() for t in labels if t.axes is not None]
    caption = (f"Headroom under {storm}: nodes coloured by the largest average connection that passes every criterion "
               f"[gpd, log scale], shaped by status (circle bracketed, square bounded, cross 0, hollow diamond no figure); "
               f"governing elements ringed; the {min(LABEL_LOWEST, len(lowest))} lowest figures labelled"
               + (f" ({len(left_out)} label(s) left out where they would overlap another)" if left_out else "")
               + f"; links from [COORDINATES] and [VERTICES]; north up (SWMM maps have no rotation); {where}"
               + (f"; scale bar {number(int(length) if length == int(length) else length)} {units}" if length else "") + ".")
    return fig, caption, {"scale_length": length, "map_units": geom.map_units, "labels": kept,
                          "labels_left_out": [t.get_text() for t in left_out]}


def _tag_scale_bar(bar) -> None:
    """Name the scale bar's parts in the SVG (``scale-bar-0`` ... the segments, ``scale-bar-text`` its length)."""
    from matplotlib.patches import Rectangle
    from matplotlib.text import Text

    bar.set_gid("scale-bar")
    segments = [a for a in _walk(bar) if isinstance(a, Rectangle)]
    for i, a in enumerate(segments):
        a.set_gid(f"scale-bar-{i}")
    texts = [a for a in _walk(bar) if isinstance(a, Text) and a.get_text() != "0"]
    for a in texts:
        a.set_gid("scale-bar-text")


def _walk(artist):
    for child in artist.get_children():
        yield child
        yield from _walk(child)


_SVG_ID = re.compile(r'(\sid=)"')
_SVG_REF = re.compile(r'(xlink:href="|url\()#')


def svg_figure(fig, caption: str, salt: str) -> str:
    """A figure as an inline SVG ``<figure>`` (text kept as text, ids unique per ``salt``), and close it."""
    import matplotlib
    import matplotlib.pyplot as plt

    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": salt}):
        fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    svg = buf.getvalue()
    svg = svg[svg.index("<svg"):]
    # one page holds several figures: every id of this one (matplotlib numbers its groups text_1 ... in each
    # figure) and every reference to it gets the figure's own prefix, so no two elements of the page share an id
    prefix = html.escape(salt, quote=True) + "-"
    svg = _SVG_ID.sub(lambda m: f'{m.group(1)}"{prefix}', svg)
    svg = _SVG_REF.sub(lambda m: f"{m.group(1)}#{prefix}", svg)
    cap = html.escape(caption)
    svg = svg.replace("<svg ", f'<svg role="img" aria-label="{cap}" style="max-width:100%;height:auto" ', 1)
    return f"<figure>{svg}<figcaption>{cap}</figcaption></figure>"


# ----------------------------------------------------------------------------------------------
# the report
# ----------------------------------------------------------------------------------------------
def policies_of(doc: dict) -> list[dict]:
    """The policies in force: the document's ``policies`` (``name``, ``text``, optional ``value``), else the
    search policies of its method and the criteria's."""
    from capacitysim.workflows.headroom import policies_for

    if doc.get("policies"):
        return list(doc["policies"])
    return policies_for(doc.get("method"))


def _storm_text(s: dict) -> str:
    parts = [s.get("name") or s["label"]]
    if s.get("depth_in") is not None:
        parts.append(_with_unit(s["depth_in"], "in"))
    if s.get("duration_hr") is not None:
        parts.append(_with_unit(s["duration_hr"], "h"))
    if s.get("return_period_yr") is not None:
        rp = float(s["return_period_yr"])
        parts.append(f"{number(int(rp) if rp.is_integer() else rp)}-year")
    if s.get("file"):
        parts.append(file_label(s["file"], s.get("sha256")))
    return ", ".join(parts)


def _header(rep: HtmlReport, doc: dict) -> None:
    c = doc["counts"]
    peaking = doc.get("peaking")
    items = [
        ("model", file_label(doc["model_file"], doc.get("model_sha256"))),
        *((f"storm {s['label']}", _storm_text(s)) for s in doc["storms"]),
        ("plant", doc.get("plant") or "none (no outfall receives dry-weather flow)"),
        ("remediations in every run", "; ".join(doc.get("remediations") or []) or "none"),
        ("connection shape", "the model's diurnal pattern (mean 1)" if peaking == "pattern"
         else f"constant, peaking factor {number(peaking, '-')}"),
        ("bracket tolerance [%]", doc["tolerance_pct"]),
        ("smallest flow searched [gpd]", doc["min_gpd"]),
        ("largest flow searched [gpd]", doc["max_gpd"]),
        ("search method", doc["method"]),
    ]
    if doc.get("spinup_hr") is not None:
        items.append(("spin-up [h]", doc["spinup_hr"]))
    rep.key_values(items)
    rep.heading("Counts", 3)
    counts = [
        ("cells (node x storm)", len(doc["nodes"])),
        *((w, c.get(k, 0)) for k, w in (("ok", "bracketed"), ("bounded", "bounded"), ("zero", "zero"),
                                         ("untrusted", "untrusted"), ("error", "error"), ("missing", "not computed"))),
        ("screened only (an estimate from the run before, not a figure)", doc.get("nodes_screened")),
        ("figures confirmed by real runs", doc.get("nodes_confirmed")),
        ("SWMM runs", doc["runs_total"]),
        ("runs before (one per storm and its two finer-step runs for the noise, shared by every node)", doc.get("runs_before")),
        ("SWMM runs per cell", doc.get("runs_per_node")),
        ("runs stopped once their failure was certain", doc.get("runs_stopped") or 0),
        ("full-run equivalents (what the runs cost, in complete runs)", doc.get("full_run_equivalents")),
        ("full-run equivalents per cell", doc.get("full_run_equivalents_per_node")),
        ("simulated [h]", doc.get("simulated_hr")),
    ]
    rep.key_values([(k, v) for k, v in counts if v is not None])
    rep.heading("Policies in force", 3)
    rep.table(["policy", "value", "what it decides"],
              [[p["name"], "-" if p.get("value") is None else p["value"], p["text"]] for p in policies_of(doc)])


def write_report(doc: dict, path, coordinates: dict | None = None, link_lines: list | None = None) -> Path:
    """Write the HTML report of a headroom result document (one file, the maps inline SVG).

    Parameters
    ----------
    doc : dict
        :meth:`~capacitysim.workflows.headroom.HeadroomResult.to_dict` (or the stored ``headroom.json``).
    path : path
        The HTML file (written atomically).
    coordinates, link_lines : optional
        Node coordinates and link polylines (:func:`capacitysim.workflows.headroom.model_geometry`), for a
        document without a ``geometry`` block (:func:`map_geometry`); without any, no map.
    """
    geom = map_geometry(doc, coordinates, link_lines)
    tol = doc["tolerance_pct"]
    rep = HtmlReport(f"Capacity headroom: {doc['model_file']}",
                     "The largest new connection each node can take, each verified by SWMM runs at both ends of its bracket")
    rep.submittal(doc.get("submittal"))
    rep.heading("Run")
    _header(rep, doc)
    rep.paragraph("Each figure is the largest average connection [gpd], shaped as `capacitysim capacity` shapes it, that "
                  "passed every criterion in a real SWMM run; the next flow up the bracket (at most "
                  f"{_with_unit(tol, '%')} larger) failed in a real run, and its governing check is the failed check "
                  "that used the most of its margin. Reproduce any of them with "
                  "`capacitysim capacity --model M --storm S --connect NODE=GPD`.")
    c = doc["counts"]
    if doc.get("screen_only"):
        rep.paragraph("This run is a screening (`--screen-only`): the run before and the screen only. Each node's "
                      "estimate (its note below) chooses where to look and is no figure; the same store resumed without "
                      "`--screen-only` confirms the figures with runs.", "untrusted")
    elif c.get("untrusted") or c.get("error") or c.get("missing"):
        rep.paragraph("Some cells have no figure: an untrusted run (a mass balance or an injected volume off) is no "
                      "capacity failure and is reported as such; errors and cells not computed are listed below.", "untrusted")
    labels = [s["label"] for s in doc["storms"]]
    for i, s in enumerate(labels):
        rep.heading(f"Map: {s}")
        drawn = headroom_map(doc, s, geom)
        if drawn is None:
            rep.paragraph("No map: the model has no [COORDINATES] for the nodes searched.")
        else:
            rep.raw(svg_figure(drawn[0], drawn[1], f"capacitysim-headroom-map-{i}"))
    if len(labels) > 1:
        rep.heading("Return-period matrix: largest connection [gpd]")
        by = {(r["node"], r["storm"]): r for r in doc["nodes"]}
        names = list(doc.get("matrix", {}).get("nodes") or dict.fromkeys(r["node"] for r in doc["nodes"]))
        names.sort(key=lambda n: min((_sort_key(by[(n, s)]) for s in labels if (n, s) in by),
                                     default=(True, math.inf, n, "")))
        rep.table(["node"] + [f"{s} [gpd]" for s in labels],
                  [[n] + [_headroom_cell(by[(n, s)]) if (n, s) in by else "-" for s in labels] for n in names])
        rep.paragraph("Rows sorted by the node's lowest figure over the storms; columns in the order the storms were given.")
    rep.heading("Nodes by headroom (tightest first)")
    rows, classes = [], []
    ordered = sorted(doc["nodes"], key=_sort_key)
    if len(ordered) > TABLE_ROWS_MAX:  # the tightest, and every untrusted or erroneous cell (never cut)
        cut = [r for r in ordered[TABLE_ROWS_MAX:] if r.get("status") in ("untrusted", "error")]
        rep.paragraph(f"The {TABLE_ROWS_MAX:,} tightest of {len(ordered):,} cells, and every untrusted or erroneous "
                      "one; every cell is in the run's headroom.csv and headroom.json (`--out`) and in the JSON "
                      "document (`--json`).")
        ordered = ordered[:TABLE_ROWS_MAX] + cut
    for r in ordered:
        g = r.get("governing_check") or {}
        value, limit = _check_values(g) if g else ("-", "-")
        note = r.get("message") or screen_text(r)
        if g.get("stopped_hr") is not None:
            note = (note + "; " if note else "") + f"failing run stopped at {_with_unit(g['stopped_hr'], 'h')} (FAIL_WHEN_CERTAIN)"
        if r.get("status") == "bounded" and not note:
            note = "the largest flow searched passes"
        rows.append([r["node"], r["storm"], _headroom_cell(r), r.get("passing_gpd"), r.get("failing_gpd"),
                     g.get("criterion") or "-", g.get("element") or "-", value, limit, int(r.get("runs") or 0), note])
        classes.append({"zero": "fail", "untrusted": "untrusted", "error": "untrusted", "missing": "untrusted"}.get(r["status"], ""))
    rep.table(["node", "storm", "largest connection [gpd]", "passing [gpd]", "failing [gpd]", "governing check at the failing flow",
               "element", "value at the failing flow", "limit", "runs", "note"], rows, classes)
    rep.heading("Criteria")
    rep.key_values([(label(k), v) for k, v in doc["criteria"].items()])
    rep.citation(CAPACITY_CITATION)
    return rep.write(path)
