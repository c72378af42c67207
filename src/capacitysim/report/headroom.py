"""The HTML report of a headroom run (``capacitysim headroom --report``).

Reads the result document (:meth:`capacitysim.workflows.headroom.HeadroomResult.to_dict`) and the
model's geometry (node coordinates, link polylines): the inputs, a network map per storm with the
nodes coloured by their headroom, the node x storm matrix when there are several storms, and the
table of every node sorted by headroom (the tightest first) with the check that governs it.
"""

from __future__ import annotations

import math
from pathlib import Path

from capacitysim.report.html import HtmlReport, file_label, new_figure
from capacitysim.rules.capacity import CAPACITY_CITATION


def governing_text(rec: dict) -> str:
    """``criterion at element: value (limit L unit)`` of a node's governing check, or ``-``."""
    g = rec.get("governing_check")
    if not g:
        return "-"

    def num(x):
        return "-" if x is None else f"{x:,.5g}"

    return f"{g['criterion']} at {g['element']}: {num(g.get('value'))} (limit {num(g.get('limit'))} {g.get('unit') or ''})".strip()


def headroom_text(rec: dict) -> str:
    """A node's headroom in words: a number, ``>= max`` (bounded), ``0`` or the status."""
    st = rec.get("status")
    if st == "bounded":
        return f">= {rec['max_connection_gpd']:,.0f}"
    if st in ("ok", "zero"):
        return f"{rec['max_connection_gpd']:,.0f}"
    return st or "-"


def _sort_key(rec: dict):
    v = rec.get("max_connection_gpd")
    return (v is None, math.inf if v is None else v, rec["node"], rec["storm"])


def _map(rep: HtmlReport, doc: dict, storm: str, coordinates: dict, link_lines: list) -> None:
    import matplotlib.colors as mcolors
    import numpy as np

    recs = [r for r in doc["nodes"] if r["storm"] == storm and r["node"] in coordinates]
    if not recs:
        rep.paragraph("No map: the model has no [COORDINATES] for the nodes searched.")
        return
    fig, ax = new_figure(8.0, 6.0)
    for ln in link_lines:
        pts = np.asarray(ln["points"], float)
        ax.plot(pts[:, 0], pts[:, 1], color="#9aa3ab", linewidth=0.8, zorder=1)
    vals = [r["max_connection_gpd"] for r in recs if r["status"] in ("ok", "bounded") and r["max_connection_gpd"]]
    norm = mcolors.LogNorm(vmin=min(vals), vmax=max(vals) * (1.0001 if len(set(vals)) == 1 else 1.0)) if vals else None
    cmap = "RdYlGn"
    pos = [r for r in recs if r["status"] in ("ok", "bounded") and r["max_connection_gpd"]]
    if pos:
        xy = np.asarray([coordinates[r["node"]] for r in pos], float)
        sc = ax.scatter(xy[:, 0], xy[:, 1], c=[r["max_connection_gpd"] for r in pos], cmap=cmap, norm=norm, s=28,
                        edgecolors="#333333", linewidths=0.4, zorder=3)
        from matplotlib.ticker import FuncFormatter

        cb = fig.colorbar(sc, ax=ax, label="largest connection that passes [gpd]")
        gpd = FuncFormatter(lambda v, _: f"{v:,.0f}")
        cb.ax.yaxis.set_major_formatter(gpd)
        cb.ax.yaxis.set_minor_formatter(gpd)
        b = [r for r in pos if r["status"] == "bounded"]
        if b:
            xy = np.asarray([coordinates[r["node"]] for r in b], float)
            ax.scatter(xy[:, 0], xy[:, 1], marker="s", facecolors="none", edgecolors="#11602b", s=70, zorder=4,
                       label="bounded (max flow searched passes)")
    z = [r for r in recs if r["status"] == "zero"]
    if z:
        xy = np.asarray([coordinates[r["node"]] for r in z], float)
        ax.scatter(xy[:, 0], xy[:, 1], marker="X", color="#a21515", s=60, zorder=4, label="0: fails with any connection")
    other = [r for r in recs if r["status"] in ("untrusted", "error", "missing")]
    if other:
        xy = np.asarray([coordinates[r["node"]] for r in other], float)
        ax.scatter(xy[:, 0], xy[:, 1], marker="x", color="#555555", s=40, zorder=4, label="untrusted, error or missing")
    plant = doc.get("plant")
    if plant and plant in coordinates:
        ax.scatter([coordinates[plant][0]], [coordinates[plant][1]], marker="^", color="#1f4e79", s=80, zorder=4,
                   label=f"plant ({plant})")
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_xticks([])
    ax.set_yticks([])
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="best", fontsize=8)
    rep.figure(fig, f"Headroom under {storm}: nodes coloured by the largest average connection that passes every "
                    "criterion (log scale); links from [COORDINATES] and [VERTICES].")


def write_report(doc: dict, path, coordinates: dict | None = None, link_lines: list | None = None) -> Path:
    """Write the HTML report of a headroom result document.

    Parameters
    ----------
    doc : dict
        :meth:`~capacitysim.workflows.headroom.HeadroomResult.to_dict`.
    path : path
        The HTML file.
    coordinates, link_lines : optional
        The model's node coordinates and link polylines
        (:func:`capacitysim.workflows.headroom.model_geometry`); without them, no map.
    """
    coordinates = coordinates or {}
    link_lines = link_lines or []
    rep = HtmlReport(f"Capacity headroom: {doc['model_file']}",
                     "The largest new connection each node can take, each verified by SWMM runs at both ends of its bracket")
    rep.submittal(doc.get("submittal"))
    rep.heading("Inputs")
    c = doc["counts"]
    rep.key_values([
        ("model", file_label(doc["model_file"], doc.get("model_sha256"))),
        ("storms", "; ".join(f"{s['label']} ({s.get('depth_in', '-')} in)" if s.get("depth_in") else s["label"]
                             for s in doc["storms"])),
        ("plant", doc.get("plant") or "none (no outfall receives dry-weather flow)"),
        ("remediations in every run", "; ".join(doc["remediations"]) or "none"),
        ("connection shape", "the model's diurnal pattern (mean 1)" if doc["peaking"] == "pattern"
         else f"constant, peaking factor {doc['peaking']}"),
        ("tolerance", f"failing / passing <= {1 + doc['tolerance_pct'] / 100:g}"),
        ("flows searched [gpd]", f"{doc['min_gpd']:,.0f} to {doc['max_gpd']:,.0f}"),
        ("search", doc["method"]),
        ("cells (node x storm)", f"{len(doc['nodes']):,}: {c['ok']:,} bracketed, {c['bounded']:,} bounded, {c['zero']:,} zero, "
                                 f"{c['untrusted']:,} untrusted, {c['error']:,} error, {c['missing']:,} missing"),
        ("SWMM runs", f"{doc['runs_total']:,} ({doc['runs_per_node']:.2f} per cell, and {doc['runs_before']} run(s) before)"
         if doc.get("runs_per_node") is not None else f"{doc['runs_total']:,}"),
        ("runs stopped once their failure was certain",
         f"{doc.get('runs_stopped') or 0:,}" + (f"; the runs cost {doc['full_run_equivalents_per_node']:.2f} complete runs per cell"
                                                if doc.get("full_run_equivalents_per_node") is not None else "")),
    ])
    rep.paragraph("Each figure is the largest average connection [gpd], shaped as `capacitysim capacity` shapes it, that "
                  "passed every criterion in a real SWMM run; the next flow up the bracket (at most "
                  f"{doc['tolerance_pct']:g} % larger) failed in a real run, and its governing check is the failed check "
                  "that used the most of its margin (policy FAIL_WHEN_CERTAIN: a failing run stops once a statistic that "
                  "never decreases during a run has passed its limit, after the storm's response; its values are then "
                  "those at the stop). Reproduce any of them with "
                  "`capacitysim capacity --model M --storm S --connect NODE=GPD`.")
    if c["untrusted"] or c["error"] or c["missing"]:
        rep.paragraph("Some cells have no figure: an untrusted run (a mass balance or an injected volume off) is no "
                      "capacity failure and is reported as such; errors and missing cells are listed below.", "untrusted")
    labels = [s["label"] for s in doc["storms"]]
    for s in labels:
        rep.heading(f"Map: {s}")
        _map(rep, doc, s, coordinates, link_lines)
    if len(labels) > 1:
        rep.heading("Return-period matrix: largest connection [gpd]")
        by = {(r["node"], r["storm"]): r for r in doc["nodes"]}
        rows = [[n] + [headroom_text(by[(n, s)]) if (n, s) in by else "-" for s in labels] for n in doc["matrix"]["nodes"]]
        rep.table(["node"] + labels, rows)
    rep.heading("Nodes by headroom (tightest first)")
    recs = sorted(doc["nodes"], key=_sort_key)
    rows, classes = [], []
    for r in recs:
        rows.append([r["node"], r["storm"], headroom_text(r), "-" if r.get("passing_gpd") is None else r["passing_gpd"],
                     "-" if r.get("failing_gpd") is None else r["failing_gpd"], governing_text(r), r.get("runs") or 0,
                     r.get("message") or ""])
        classes.append({"zero": "fail", "untrusted": "untrusted", "error": "untrusted", "missing": "untrusted"}.get(r["status"], ""))
    rep.table(["node", "storm", "largest connection [gpd]", "passing [gpd]", "failing [gpd]", "governing check at failing",
               "runs", "note"], rows, classes)
    rep.heading("Criteria")
    rep.key_values([(k, v) for k, v in doc["criteria"].items()])
    rep.citation(CAPACITY_CITATION)
    return rep.write(path)
