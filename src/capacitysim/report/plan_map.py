"""The network plan map of a capacity demonstration, and the map furniture every report map shares.

:func:`capacity_plan_map` draws, from the result document alone (its ``geometry``, ``links``, ``nodes``,
``checks`` and ``scenario`` blocks):

* every link with a line, coloured and thickened by its maximum q/Qfull AFTER the change in four
  classes (below 0.5, 0.5-0.8, 0.8-1.0, 1.0 and above: at or beyond full-flow capacity) so that the
  classes stay apart on a grey-scale print; links without a full-flow capacity (pumps, weirs,
  orifices, outlets) thin grey dashes;
* links whose peak flow rose by more than :data:`CHANGED_PCT` black dots along the line (where the
  new flow goes);
* the connection(s) (star), the I/I remediation nodes (circles) and the disconnected inflow sources
  (squares), the plant (triangle);
* the elements of failed checks ringed and labelled in red;
* a north arrow and a scale bar (:func:`north_arrow`, :func:`scale_bar`).

North is up: SWMM map coordinates have no rotation ([MAP] has none), so the map's y axis is the
model's north. The scale bar is in the model's map units ([MAP] UNITS), or "map units" when the model
names none.
"""

from __future__ import annotations

import math

import numpy as np

from capacitysim.io.export.geometry import ModelGeometry

#: q/Qfull classes of the plan map: (upper bound, colour, line width [pt], legend text).
Q_CLASSES = ((0.5, "#9ecae1", 1.0, "q/Qfull < 0.5"), (0.8, "#2b7bba", 1.8, "0.5 - 0.8"),
             (1.0, "#f28e2b", 2.8, "0.8 - 1.0"), (math.inf, "#c0392b", 3.8, ">= 1.0 (at or over full flow)"))
#: A link's peak flow must rise by more than this to be marked as changed [%].
CHANGED_PCT = 1.0
#: Words of the map units of :class:`~capacitysim.io.export.geometry.ModelGeometry`.
UNIT_WORDS = {"ft": "ft", "m": "m", "deg": "degrees", None: "map units"}


def nice_length(span: float) -> float:
    """A round scale-bar length (1, 2 or 5 x 10^k) of about a fifth of ``span`` [map units]."""
    if not span > 0 or not math.isfinite(span):
        return 1.0
    target = span / 5.0
    k = math.floor(math.log10(target))
    for m in (5.0, 2.0, 1.0):
        if m * 10**k <= target:
            return m * 10**k
    return 10.0**k


def north_arrow(ax, x: float = 0.95, y: float = 0.90):
    """An arrow pointing up with an N, at (x, y) in axes fractions (the map's y axis is north); returns the annotation."""
    return ax.annotate("N", xy=(x, y), xytext=(x, y - 0.10), xycoords="axes fraction", textcoords="axes fraction",
                ha="center", va="center", fontsize=12, fontweight="bold",
                arrowprops={"facecolor": "black", "edgecolor": "black", "width": 4, "headwidth": 11, "headlength": 10})


def scale_bar(ax, map_units: str | None) -> float:
    """A black-and-white scale bar at the lower left, its length :func:`nice_length` of the x extent.

    Returns the bar's length [map units]. Degrees get no bar (a degree of longitude is no fixed length):
    0 is returned.
    """
    if map_units == "deg":
        return 0.0
    from matplotlib.offsetbox import (
        AnchoredOffsetbox,
        AuxTransformBox,
        HPacker,
        TextArea,
        VPacker,
    )
    from matplotlib.patches import Rectangle

    x0, x1 = ax.get_xlim()
    length = nice_length(abs(x1 - x0))
    box = AuxTransformBox(ax.transData)
    height = abs(ax.get_ylim()[1] - ax.get_ylim()[0]) * 0.012
    for i in range(4):
        box.add_artist(Rectangle((i * length / 4, 0), length / 4, height, facecolor="black" if i % 2 == 0 else "white",
                                 edgecolor="black", linewidth=0.8))
    text = TextArea(f"{length:,.0f} {UNIT_WORDS.get(map_units, map_units)}" if length >= 1 else f"{length:g} {UNIT_WORDS.get(map_units, map_units)}",
                    textprops={"fontsize": 9})
    zero = TextArea("0", textprops={"fontsize": 9})
    packed = VPacker(children=[box, HPacker(children=[zero, text], align="center", pad=0, sep=8)], align="left", pad=0, sep=3)
    ax.add_artist(AnchoredOffsetbox(loc="lower left", child=packed, pad=0.4, frameon=True, borderpad=0.6))
    return length


#: Where a label may go around its point [points]: (dx, dy, horizontal alignment, vertical alignment).
LABEL_SPOTS = ((6, 6, "left", "bottom"), (6, -6, "left", "top"), (-6, 6, "right", "bottom"), (-6, -6, "right", "top"),
                (0, 10, "center", "bottom"), (0, -10, "center", "top"))


def halo_text(ax, x, y, s, color="black", **kw):
    """A label with a white halo (readable over lines when printed); placed by :func:`place_labels`."""
    import matplotlib.patheffects as pe

    t = ax.annotate(s, (x, y), xytext=LABEL_SPOTS[0][:2], textcoords="offset points", fontsize=8, color=color, zorder=9,
                    ha=LABEL_SPOTS[0][2], va=LABEL_SPOTS[0][3], **kw)
    t.set_path_effects([pe.withStroke(linewidth=3, foreground="white")])
    return t


def settle_labels(labels, renderer, reserved, frame) -> list:
    """Keep each label (in priority order) where :func:`~capacitysim.report.plan_map.place_labels` put it when
    it lies inside ``frame`` (the map's axes: nothing drawn beside the map, such as the colour bar, covers it)
    and overlaps no label kept before it and no ``reserved`` box (the north arrow, the scale bar); else move it
    to the first spot around its point (:data:`capacitysim.report.plan_map.LABEL_SPOTS`) where it does; else
    remove it. Returns the labels removed."""

    def free(box):
        inside = box.x0 >= frame.x0 and box.x1 <= frame.x1 and box.y0 >= frame.y0 and box.y1 <= frame.y1
        return inside and not any(box.overlaps(b) for b in boxes)

    boxes, dropped = list(reserved), []
    for t in labels:
        box = t.get_window_extent(renderer)
        if not free(box):
            for dx, dy, ha, va in LABEL_SPOTS:
                t.xyann = (dx, dy)
                t.set_ha(ha)
                t.set_va(va)
                box = t.get_window_extent(renderer)
                if free(box):
                    break
            else:
                t.remove()
                dropped.append(t)
                continue
        boxes.append(box)
    return dropped


def place_labels(ax) -> int:
    """Move each label of ``ax`` to the first spot around its point (:data:`LABEL_SPOTS`) that overlaps no
    label placed before it (greedy, in drawing order); a label with no free spot keeps its first spot.

    Returns the number of labels left overlapping another.
    """
    fig = ax.figure
    renderer = fig.canvas.get_renderer()
    placed = []
    clashes = 0
    for t in [t for t in ax.texts if hasattr(t, "xyann")]:
        for dx, dy, ha, va in LABEL_SPOTS:
            t.xyann = (dx, dy)
            t.set_ha(ha)
            t.set_va(va)
            box = t.get_window_extent(renderer).expanded(1.05, 1.15)
            if not any(box.overlaps(b) for b in placed):
                break
        else:
            t.xyann = LABEL_SPOTS[0][:2]
            t.set_ha(LABEL_SPOTS[0][2])
            t.set_va(LABEL_SPOTS[0][3])
            box = t.get_window_extent(renderer)
            clashes += 1
        placed.append(box)
    return clashes


def map_figure(geom: ModelGeometry, legend_in: float = 1.4):
    """A figure in the map's own proportions (equal axes) on a 9 in wide page, 3.5 to 8 in high, with
    ``legend_in`` [in] below it for the legend: ``(fig, ax)``."""
    from capacitysim.report.html import new_figure

    pts_all = np.asarray(list(geom.nodes.values()) + [p for line in geom.links.values() for p in line], float)
    dx, dy = np.ptp(pts_all[:, 0]), np.ptp(pts_all[:, 1])
    return new_figure(9.0, float(np.clip(9.0 * dy / dx if dx > 0 else 6.0, 3.5, 8.0)) + legend_in)


def capacity_plan_map(doc: dict):
    """The plan map of a capacity demonstration document, or None when the model has no coordinates.

    Returns
    -------
    (figure, caption) or None
    """
    from matplotlib.lines import Line2D

    geom = ModelGeometry.from_dict(doc.get("geometry"))
    if not geom.links and not geom.nodes:
        return None
    links = {r["id"]: r for r in doc.get("links") or []}
    failed = {}
    for ch in doc.get("checks") or []:
        if ch.get("passed") is False:
            failed.setdefault(ch["element"], []).append(ch["criterion"])
    fig, ax = map_figure(geom)
    handles = []
    changed_any = False
    for lid, line in geom.links.items():
        pts = np.asarray(line, float)
        r = links.get(lid, {})
        q = r.get("max_q_over_qfull_after")
        if q is None:
            ax.plot(pts[:, 0], pts[:, 1], color="0.55", lw=1.0, ls=(0, (3, 2)), zorder=2)
        else:
            _, color, lw, _ = next(c for c in Q_CLASSES if q < c[0])
            ax.plot(pts[:, 0], pts[:, 1], color=color, lw=lw, solid_capstyle="round", zorder=3)
        b, a = r.get("peak_flow_cfs_before"), r.get("peak_flow_cfs_after")
        if b is not None and a is not None and a - b > abs(b) * CHANGED_PCT / 100.0 and a - b > 0:
            changed_any = True
            ax.plot(pts[:, 0], pts[:, 1], color="black", lw=1.0, ls=(0, (1, 2)), zorder=4)
        if lid in failed:
            ax.plot(pts[:, 0], pts[:, 1], color="#c0392b", lw=7, alpha=0.35, zorder=1)
            mid = pts[len(pts) // 2] if len(pts) > 2 else pts.mean(axis=0)
            halo_text(ax, mid[0], mid[1], f"{lid}: FAILS", color="#a21515", fontweight="bold")
    handles += [Line2D([], [], color=c, lw=w, label=t) for _, c, w, t in Q_CLASSES]
    handles.append(Line2D([], [], color="0.55", lw=1.0, ls=(0, (3, 2)), label="pump, weir, orifice (no q/Qfull)"))
    if changed_any:
        handles.append(Line2D([], [], color="black", lw=1.0, ls=(0, (1, 2)), label=f"peak flow up > {CHANGED_PCT:g} %"))
    if geom.nodes:
        xy = np.asarray(list(geom.nodes.values()), float)
        # manholes as dots, smaller on large networks so the pipes' colours stay visible
        ax.scatter(xy[:, 0], xy[:, 1], s=6.0 if len(xy) <= 100 else 1.5, color="0.25", zorder=5, linewidths=0)
    scen = doc.get("scenario") or {}

    def mark(nodes, marker, color, size, label):
        pts = [geom.nodes[n] for n in nodes if n in geom.nodes]
        if not pts:
            return
        p = np.asarray(pts, float)
        ax.scatter(p[:, 0], p[:, 1], marker=marker, s=size, facecolor=color, edgecolor="black", linewidth=0.8, zorder=7)
        handles.append(Line2D([], [], marker=marker, color="none", markerfacecolor=color, markeredgecolor="black",
                              markersize=math.sqrt(size) * 0.8, label=label))

    rem_nodes = sorted({n for r in scen.get("remediations", []) for n in r.get("nodes", [])})
    src_nodes = sorted({n for r in scen.get("removed_sources", []) for n in r.get("nodes", [])})
    mark(rem_nodes, "o", "#59a14f", 40, "I/I remediation (RDII reduced)")
    mark(src_nodes, "s", "#59a14f", 40, "inflow sources disconnected")
    conns = scen.get("connections", [])
    mark([c["node"] for c in conns], "*", "#f1c40f", 320, "new connection")
    for c in conns:
        if c["node"] in geom.nodes:
            x, y = geom.nodes[c["node"]]
            halo_text(ax, x, y, f"{c['node']}: +{c['flow_gpd']:,.0f} gpd", fontweight="bold")
    plant = doc.get("plant")
    if plant in geom.nodes:
        mark([plant], "^", "white", 140, "treatment plant")
        halo_text(ax, *geom.nodes[plant], f"plant {plant}")
    fail_nodes = [n for n in failed if n in geom.nodes]
    if fail_nodes:
        p = np.asarray([geom.nodes[n] for n in fail_nodes], float)
        ax.scatter(p[:, 0], p[:, 1], s=260, facecolor="none", edgecolor="#c0392b", linewidth=2.2, zorder=8)
        for n in fail_nodes:
            halo_text(ax, *geom.nodes[n], f"{n}: FAILS", color="#a21515", fontweight="bold")
        handles.append(Line2D([], [], marker="o", color="none", markerfacecolor="none", markeredgecolor="#c0392b",
                              markeredgewidth=2.2, markersize=13, label="element of a failed check"))
    ax.set_aspect("equal", adjustable="datalim")
    ax.margins(0.08)
    ax.set_xticks([])
    ax.set_yticks([])
    for side in ax.spines.values():
        side.set_color("0.6")
    fig.canvas.draw()  # the final limits, for the scale bar and the labels
    place_labels(ax)
    north_arrow(ax)
    length = scale_bar(ax, geom.map_units)
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.01), ncol=3, fontsize=8, frameon=False,
              title="links by their max q/Qfull after the change; marks", title_fontsize=9)
    units = UNIT_WORDS.get(geom.map_units, geom.map_units)
    where = (f"coordinates in {units}" if geom.map_units else "the model names no map units ([MAP] UNITS): the scale "
             "is in its map units") + (f"; CRS {geom.crs}" if geom.crs else "; no CRS stated")
    caption = (f"Network plan: links coloured by their maximum q/Qfull after the change; failed checks ringed in red; "
               f"north up ([COORDINATES], [VERTICES]: SWMM maps have no rotation); {where}"
               + (f"; scale bar {length:,.0f} {units}" if length else "") + ".")
    return fig, caption


def profile_labels(ax, x, ids, rim, crown, max_labels: int = 30) -> None:
    """Label the manholes of an HGL profile: a thin vertical line from crown to rim at each node, rim and
    crown ticks, and the node's name above its rim (every k-th node when there are more than
    ``max_labels``, the first and last always)."""
    import matplotlib.patheffects as pe

    x, rim, crown = np.asarray(x, float), np.asarray(rim, float), np.asarray(crown, float)
    ax.vlines(x, crown, rim, color="0.45", lw=0.7, zorder=2)
    ax.scatter(x, rim, marker="_", s=60, color="0.2", linewidth=1.4, zorder=3)
    ax.scatter(x, crown, marker="_", s=40, color="0.5", linewidth=1.2, zorder=3)
    # nodes at (nearly) one station (a pump's wet well and the manhole it lifts to) share one label
    span = float(np.nanmax(x) - np.nanmin(x)) if len(x) else 0.0
    groups: list[list[int]] = []
    for i in range(len(ids)):
        if groups and abs(x[i] - x[groups[-1][-1]]) <= 0.005 * span:
            groups[-1].append(i)
        else:
            groups.append([i])
    step = max(1, math.ceil(len(groups) / max_labels))
    top = np.nanmax(rim) if np.isfinite(rim).any() else 0.0
    for k, g in enumerate(groups):
        if k % step and k != len(groups) - 1:
            continue
        ys = [rim[i] for i in g if math.isfinite(rim[i])]
        y = max(ys) if ys else top
        t = ax.annotate(" / ".join(str(ids[i]) for i in g), (x[g[0]], y), xytext=(0, 4), textcoords="offset points",
                        rotation=90, ha="center", va="bottom", fontsize=7, zorder=6)
        t.set_path_effects([pe.withStroke(linewidth=2.5, foreground="white")])
