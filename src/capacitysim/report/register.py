"""The capacity register as text (``bank register``) and as one HTML file (``bank register --report``).

Both read the register document only (:meth:`capacitysim.workflows.register.Register.to_dict`, the
``--json`` output and the stored ``BANK.register.json``'s ``document``), so a stored register renders
the same:

* the bank, its head, the as-of date and how fresh the figures are;
* the plants: permitted flow, the 12-month figure, committed flow, remaining treatment headroom;
* per registered model: its committed flows, a plan map (inline SVG: the links, the commitments as
  stars labelled with their application and average flow, the basin outlets as triangles, the
  manholes searched labelled with their headroom; north arrow and scale bar of
  :mod:`capacitysim.report.plan_map`), and the remaining headroom per manhole with the commitments
  in place (bracket, governing check, runs), each figure with its freshness;
* the program policies and the definitions.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from capacitysim.io.export.geometry import ModelGeometry
from capacitysim.report.format import number
from capacitysim.report.headroom import governing_text, headroom_text, svg_figure
from capacitysim.report.html import HtmlReport, file_label
from capacitysim.report.plan_map import UNIT_WORDS, halo_text, map_figure, north_arrow, place_labels, scale_bar

#: Colours of the map's marks (they differ in shape too, for a grey-scale print).
COMMITMENT_COLOUR = "#f1c40f"
OUTLET_COLOUR = "white"
SEARCHED_COLOUR = "#2b7bba"


def _gpd(v) -> str:
    return "-" if v is None else f"{number(float(v), 'gpd')} gpd"


def _cells(sec: dict) -> list[dict]:
    return list((sec.get("headroom") or {}).get("nodes") or [])


def _bracket(r: dict) -> str:
    p, f = r.get("passing_gpd"), r.get("failing_gpd")
    if p is None:
        return "-"
    return f"{number(p, 'gpd')}-{number(f, 'gpd')}" if f is not None else f">= {number(p, 'gpd')}"


def plant_rows(p: dict) -> list[tuple[str, str]]:
    """A plant of the register as label/value rows."""
    f = p.get("figures")
    rows = [("basins", ", ".join(p["basins"])),
            ("committed", f"{_gpd(p['committed_gpd'])} average ({len(p['flows'])} commitment(s)"
                          + (f": {', '.join(p['flows'])}" if p["flows"] else "") + ")")]
    if f is None:
        rows.append(("remaining", p["freshness"]["text"]))
        return rows
    rows[0:0] = [("plant", f"{f.get('plant_name') or '-'}" + (f", SPDES permit {f['spdes_permit']}" if f.get("spdes_permit") else ""))]
    lw = f["lookback_window"]
    rows += [
        ("permitted flow", f"{_gpd(f['permitted_flow_gpd'])} ({f['limit_mgd']:g} MGD, {f['basis']} basis)"),
        ("12-month figure", f"{_gpd(f['twelve_month_gpd'])}: the highest {f['basis']} average ending in ({lw['start_exclusive']}, "
                            f"{lw['end_inclusive']}] ({f['twelve_month_period']})"),
        ("remaining", f"{_gpd(f['remaining_gpd'])} (permitted - 12-month figure - committed; as `spdes check --committed` "
                      "with no added flow)"),
        ("record", f"{p['given']['flows']['name']} ends {f['record_end']} ({f['record_age_days']} days before {f['as_of']})"),
        ("figures", p["freshness"]["text"]),
    ]
    rows += [("warning", w) for w in f.get("warnings") or []]
    return rows


def text_lines(doc: dict) -> list[str]:
    """The register as the lines ``bank register`` prints."""
    out = []

    def table(rows, title=None):
        if title:
            out.extend([title, "-" * len(title)])
        width = max((len(k) for k, _ in rows), default=0)
        out.extend(f"{k:<{width}}  {v}" for k, v in rows)

    cache = doc.get("cache") or {}
    head_rows = [("bank", doc["bank"]), ("bank head", f"{doc['bank_head']} ({doc.get('bank_rows', '-')} journal rows)"),
                 ("as of", doc["as_of"]), ("computed at", str(doc["computed_at"]).replace("T", " ").replace("Z", " UTC")),
                 ("figures", doc["freshness"]["text"])]
    if doc.get("bank_head_now") and doc["bank_head_now"] != doc["bank_head"]:
        head_rows.insert(2, ("bank head now", doc["bank_head_now"]))
    if cache.get("path"):
        what = ("shown from the store, nothing computed" if cache.get("shown_from_store")
                else f"{cache.get('computed', 0)} computed now, {cache.get('reused', 0)} re-used")
        head_rows.append(("stored", f"{cache['path']} ({what})"))
    if cache.get("note"):
        head_rows.append(("note", cache["note"]))
    if not cache.get("shown_from_store"):
        head_rows.append(("engine runs", f"{doc.get('runs_total', 0):,} in {doc.get('seconds', 0.0):.1f} s"))
    table(head_rows, "capacity register")
    for p in doc["plants"]:
        out.append("")
        table(plant_rows(p), f"plant {p['plant']}")
    if not doc["plants"]:
        out += ["", "plants: none registered (`bank add-basin --plant`, `bank register-model --plant`)"]
    for m in doc["models"]:
        out.append("")
        basins = "; ".join(f"{b['basin']} v{b['version']} outlet {b['outlet']}" for b in m["basins"])
        c = m["commitments"]
        table([("model", f"{m['path']} (SHA-256 {m['model_sha256'][:12]}...)"), ("basins", basins),
               ("committed", f"{_gpd(c['total_gpd'])} average, {_gpd(c['total_peak_gpd'])} peak "
                             f"({len(c['flows'])} commitment(s))"),
               ("headroom", m["freshness"]["text"])], f"model {m['file']}")
        for f in c["flows"]:
            out.append(f"  {f['application']:<14} {str(f.get('basin') or '-'):<10} {str(f.get('node') or '-'):<10} "
                       f"{number(f['average_gpd'], 'gpd'):>10} gpd avg {number(f['peak_gpd'], 'gpd'):>10} gpd peak  {f['status']}")
        for u in c.get("unplaced") or []:
            out.append(f"  not in the runs: {u['application']} ({u['reason']})")
        for n in m.get("notes") or []:
            out.append(f"  note: {n}")
        cells = _cells(m)
        if cells:
            hd = m["headroom"]
            out.append(f"  remaining headroom per manhole with the commitments in place ({hd['runs_total']:,} engine runs, "
                       f"{hd['seconds']:.1f} s):")
            out.append(f"  {'node':<10} {'storm':<16} {'max connection [gpd]':>21} {'bracket [gpd]':>17}  why; governing check")
            for r in cells:
                gov = governing_text(r) if r.get("status") in ("ok", "zero") else (r.get("message") or r.get("status"))
                out.append(f"  {r['node']:<10} {str(r['storm'])[:16]:<16} {headroom_text(r):>21} {_bracket(r):>17}  "
                           f"{', '.join(r.get('why') or [])}; {gov}")
    if not doc["models"]:
        out += ["", "models: none registered (`bank add-basin --model`, `bank register-model`)"]
    for s in doc.get("registered_since") or []:
        out.append(f"registered since this register was computed: {s}")
    return out


# ----------------------------------------------------------------------------------------------------
# the map
# ----------------------------------------------------------------------------------------------------
def register_map(sec: dict):
    """The plan map of a registered model's commitments and headroom, or None without coordinates.

    Returns
    -------
    (figure, caption) or None
    """
    from matplotlib.lines import Line2D

    geom = ModelGeometry.from_dict(sec.get("geometry"))
    flows = [f for f in sec["commitments"]["flows"] if f.get("node") in geom.nodes]
    cells = [r for r in _cells(sec) if r["node"] in geom.nodes]
    outlets = [b["outlet"] for b in sec["basins"] if b.get("outlet") in geom.nodes]
    if not geom.nodes or not (flows or cells or outlets):
        return None
    fig, ax = map_figure(geom)
    for line in geom.links.values():
        p = np.asarray(line, float)
        ax.plot(p[:, 0], p[:, 1], color="0.62", lw=0.9, zorder=1, solid_capstyle="round")
    xy = np.asarray(list(geom.nodes.values()), float)
    ax.scatter(xy[:, 0], xy[:, 1], s=6.0 if len(xy) <= 100 else 1.5, color="0.45", zorder=2, linewidths=0)
    handles = [Line2D([], [], color="0.62", lw=0.9, label="link")]
    # the manholes searched, labelled with their figure (the tightest first: labels placed in that order)
    by_node: dict[str, list[dict]] = {}
    for r in cells:
        by_node.setdefault(r["node"], []).append(r)
    if by_node:
        p = np.asarray([geom.nodes[n] for n in by_node], float)
        ax.scatter(p[:, 0], p[:, 1], marker="o", s=60, facecolor=SEARCHED_COLOUR, edgecolor="black", linewidth=0.7, zorder=5)
        handles.append(Line2D([], [], ls="none", marker="o", markersize=7, markerfacecolor=SEARCHED_COLOUR,
                              markeredgecolor="black", label="manhole searched: remaining headroom [gpd]"))

    def lowest(rs):
        v = [r.get("max_connection_gpd") for r in rs if r.get("max_connection_gpd") is not None]
        return min(v) if v else math.inf

    for n, rs in sorted(by_node.items(), key=lambda kv: lowest(kv[1])):
        text = "; ".join(headroom_text(r) for r in rs)
        halo_text(ax, *geom.nodes[n], f"{n}: {text} gpd", color="#1f4e79", fontweight="bold")
    if outlets:
        p = np.asarray([geom.nodes[o] for o in outlets], float)
        ax.scatter(p[:, 0], p[:, 1], marker="^", s=150, facecolor=OUTLET_COLOUR, edgecolor="black", linewidth=1.0, zorder=6)
        handles.append(Line2D([], [], ls="none", marker="^", markersize=9, markerfacecolor=OUTLET_COLOUR,
                              markeredgecolor="black", label="basin outlet"))
        for b in sec["basins"]:
            if b.get("outlet") in geom.nodes and b["outlet"] not in by_node:
                halo_text(ax, *geom.nodes[b["outlet"]], f"outlet {b['outlet']} ({b['basin']})")
    if flows:
        p = np.asarray([geom.nodes[f["node"]] for f in flows], float)
        ax.scatter(p[:, 0], p[:, 1], marker="*", s=320, facecolor=COMMITMENT_COLOUR, edgecolor="black", linewidth=0.8,
                   zorder=7)
        handles.append(Line2D([], [], ls="none", marker="*", markersize=15, markerfacecolor=COMMITMENT_COLOUR,
                              markeredgecolor="black", label="commitment (application, average flow)"))
        for f in flows:
            halo_text(ax, *geom.nodes[f["node"]], f"{f['application']}: {number(f['average_gpd'], 'gpd')} gpd")
    ax.set_aspect("equal", adjustable="datalim")
    ax.margins(0.08)
    ax.set_xticks([])
    ax.set_yticks([])
    for side in ax.spines.values():
        side.set_color("0.6")
    fig.canvas.draw()
    place_labels(ax)
    north_arrow(ax)
    length = scale_bar(ax, geom.map_units)
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.01), ncol=2, fontsize=8, frameon=False)
    units = UNIT_WORDS.get(geom.map_units, geom.map_units)
    where = (f"coordinates in {units}" if geom.map_units else "the model names no map units ([MAP] UNITS): the scale is "
             "in its map units") + (f"; CRS {geom.crs}" if geom.crs else "; no CRS stated")
    caption = (f"{sec['file']}: the committed flows (stars), the basin outlets (triangles) and the manholes searched "
               "(circles, labelled with the largest average connection that passes with the commitments in place); "
               f"north up ([COORDINATES], [VERTICES]: SWMM maps have no rotation); {where}"
               + (f"; scale bar {number(length)} {units}" if length else "") + ".")
    return fig, caption


# ----------------------------------------------------------------------------------------------------
# the report
# ----------------------------------------------------------------------------------------------------
def write_report(doc: dict, path) -> Path:
    """Write the HTML capacity register of a register document (one file, the maps inline SVG).

    Parameters
    ----------
    doc : dict
        :meth:`capacitysim.workflows.register.Register.to_dict`.
    path : path
        The HTML file (written atomically).
    """
    rep = HtmlReport("Capacity register", f"Credit bank {Path(doc['bank']).name}: what each plant and each registered "
                                          "model can still take, with every commitment in place")
    items = [("bank", Path(doc["bank"]).name), ("bank head (SHA-256)", doc["bank_head"]),
             ("journal rows", doc.get("bank_rows")), ("as of", doc["as_of"]),
             ("computed at", doc["computed_at"]), ("figures", doc["freshness"]["text"])]
    if doc.get("bank_head_now") and doc["bank_head_now"] != doc["bank_head"]:
        items.insert(2, ("bank head now", doc["bank_head_now"]))
    rep.key_values(items)
    if doc["freshness"]["status"] == "stale":
        rep.paragraph("Some figures are stale: the commitments they were computed for changed since. Run `capacitysim bank "
                      "register` to compute them again.", "untrusted")
    rep.heading("Plants")
    if not doc["plants"]:
        rep.paragraph("No basin of the bank is registered as draining to a plant.")
    else:
        rows, classes = [], []
        for p in doc["plants"]:
            f = p.get("figures") or {}
            rows.append([p["plant"], ", ".join(p["basins"]), f.get("permitted_flow_gpd"), f.get("twelve_month_gpd"),
                         f.get("twelve_month_period") or "-", p["committed_gpd"],
                         f.get("remaining_gpd") if f else "not computed", p["freshness"]["text"]])
            classes.append("fail" if f and f["remaining_gpd"] < 0 else ("untrusted" if p["freshness"]["status"] == "stale" else ""))
        rep.table(["plant", "basins", "permitted flow [gpd]", "12-month figure [gpd]", "period", "committed [gpd]",
                   "remaining [gpd]", "freshness"], rows, classes)
        rep.citation("12-month figure: the highest period average (the permit's basis) ending in the prior twelve months "
                     "(15 RCNY § 18-37(b)); remaining = permitted - 12-month figure - committed, the headroom_gpd of "
                     "`capacitysim spdes check --committed BANK` with no added flow.")
        for p in doc["plants"]:
            if p.get("figures"):
                rep.heading(f"Plant {p['plant']}", 3)
                rep.key_values(plant_rows(p))
    for i, m in enumerate(doc["models"]):
        rep.heading(f"Model {m['file']}")
        c = m["commitments"]
        rep.key_values([("model", file_label(m["file"], m["model_sha256"])),
                        ("basins", "; ".join(f"{b['basin']} (version {b['version']}, outlet {b['outlet']}, plant "
                                             f"{b.get('plant') or '-'})" for b in m["basins"])),
                        ("committed [gpd]", c["total_gpd"]), ("committed peak [gpd]", c["total_peak_gpd"]),
                        ("headroom", m["freshness"]["text"])])
        rep.heading("Committed flows", 3)
        if c["flows"]:
            rep.table(["application", "basin", "node", "average [gpd]", "peak [gpd]", "status", "average basis", "expires on"],
                      [[f["application"], f.get("basin") or "-", f.get("node") or "-", f["average_gpd"], f["peak_gpd"],
                        f["status"], f.get("average_basis") or "-", f.get("expires_on") or "-"] for f in c["flows"]])
        else:
            rep.paragraph("No commitment on this model.")
        for u in c.get("unplaced") or []:
            rep.paragraph(f"Not in the runs: {u['application']} ({u['reason']}).", "untrusted")
        for n in m.get("notes") or []:
            rep.paragraph(f"Note: {n}.")
        drawn = register_map(m)
        if drawn is not None:
            rep.raw(svg_figure(drawn[0], drawn[1], f"capacitysim-register-map-{i}"))
        cells = _cells(m)
        rep.heading("Remaining headroom per manhole, commitments in place", 3)
        if not cells:
            rep.paragraph(f"Not computed: {m.get('headroom_status')}.")
            continue
        hd = m["headroom"]
        rep.paragraph(f"Each figure is the largest average connection that passes every criterion together with the "
                      f"{len(c['flows'])} commitment(s) above (placed as `capacity --committed` places them); its bracket's "
                      f"ends are real runs (tolerance {number(hd['tolerance_pct'])} %). `capacitysim capacity --model {m['file']} --connect NODE=GPD "
                      "--committed BANK` passes at the passing flow and fails at the failing flow. "
                      f"{hd['runs_total']:,} engine runs, {hd['seconds']:.1f} s.")
        rows, classes = [], []
        for r in cells:
            g = r.get("governing_check") or {}
            rows.append([r["node"], ", ".join(r.get("why") or []), r["storm"],
                         r["max_connection_gpd"] if r.get("status") in ("ok", "zero") else headroom_text(r),
                         r.get("passing_gpd"), r.get("failing_gpd"), governing_text(r) if g else (r.get("message") or "-"),
                         int(r.get("runs") or 0)])
            classes.append({"zero": "fail", "untrusted": "untrusted", "error": "untrusted"}.get(r.get("status"), ""))
        rep.table(["node", "searched because", "storm", "remaining headroom [gpd]", "passing [gpd]", "failing [gpd]",
                   "governing check at the failing flow", "runs"], rows, classes)
    if not doc["models"]:
        rep.heading("Models")
        rep.paragraph("No model of record is registered.")
    for s in doc.get("registered_since") or []:
        rep.paragraph(f"Registered since this register was computed, not in it: {s}.", "untrusted")
    rep.heading("Program policies")
    rep.table(["policy", "value", "text"], [[p["name"], "-" if p.get("value") is None else str(p["value"]), p["text"]]
                                            for p in doc.get("policies") or []])
    rep.heading("Definitions")
    rep.key_values(list((doc.get("definitions") or {}).items()))
    return rep.write(path)
