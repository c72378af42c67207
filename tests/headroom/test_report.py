"""The headroom report (issue 15, report conventions of issue 17) from a real headroom run's document.

One real run on the bundled ``synthetic-50`` (its [MAP] stated as feet), three nodes, two storms, the flows
searched set so that the cells are bracketed, bounded and zero (about 14 SWMM runs). The report is read back
as a reader sees it (:mod:`tests.report.report_text`) and its inline SVG maps are parsed as XML: the scale
bar is measured against the node markers' positions, the labels' boxes are checked on the figure.
"""

from __future__ import annotations

import copy
import json
import math
import re
import xml.etree.ElementTree as ET

import pytest

from capacitysim.io.bundled import model_path
from capacitysim.report.format import number
from capacitysim.report.headroom import (
    color_scale,
    headroom_map,
    map_geometry,
    write_report,
)
from capacitysim.workflows.headroom import headroom
from tests.report.report_text import read_report
from tests.report.test_rendered_reports import check_report

pytestmark = [pytest.mark.swmm]

STORM = "binghamton-1yr-24h"
TEN = "ten-year"
NODES = ["MH0003", "MH0017", "MH0030"]
MIN_GPD = 3700
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """(document as stored, HTML, the result) of the real run; the document through JSON, as a stored one."""
    import tomllib

    from capacitysim.io.export.geometry import model_geometry
    from capacitysim.io.storms import resolve_storm_path
    from capacitysim.network.model import parse_inp

    tmp = tmp_path_factory.mktemp("headroom-report")
    model = tmp / "synthetic-50-feet.inp"  # the bundled model, its map units stated: [MAP] UNITS Feet
    model.write_text(model_path("synthetic-50").read_text(encoding="utf-8") + "\n[MAP]\nUNITS Feet\n", encoding="utf-8")
    storm = tomllib.loads(resolve_storm_path(STORM).read_text(encoding="utf-8"))
    storm.update(depth_in=3.2, name="Binghamton 10-year 24-hour (test)", return_period_yr=10)
    ten = tmp / f"{TEN}.toml"
    ten.write_text("".join(f"{k} = {json.dumps(v)}\n" for k, v in storm.items()), encoding="utf-8")
    # MH0017 takes about 3,400 gpd under the 1-year storm (zero from MIN_GPD) and 3,900 under the 10-year
    # (bracketed); MH0003 and MH0030 about 27,000 (bracketed) and over MAX_GPD under the 10-year (bounded)
    res = headroom(model, [STORM, ten], NODES, workers=0, min_gpd=MIN_GPD, max_gpd=30000)
    doc = res.to_dict()
    # the capacity document's geometry block; a no-op once the headroom document carries it itself
    doc.setdefault("geometry", model_geometry(parse_inp(model)).to_dict())
    doc = json.loads(json.dumps(doc))
    assert {r["status"] for r in doc["nodes"]} == {"ok", "bounded", "zero"}, doc["nodes"]  # every kind of cell
    assert doc["geometry"]["map_units"] == "ft"
    html = write_report(doc, tmp / "headroom.html").read_text(encoding="utf-8")
    return doc, html, res


def _cell(doc, node, storm):
    return next(r for r in doc["nodes"] if r["node"] == node and r["storm"] == storm)


def _svgs(html: str) -> list[ET.Element]:
    """Every inline SVG of the page, parsed as XML (a malformed one fails here)."""
    return [ET.fromstring(m.group(0)) for m in re.finditer(r"<svg\b.*?</svg>", html, re.DOTALL)]


def _by_id(svg: ET.Element, suffix: str) -> ET.Element:
    found = [e for e in svg.iter() if e.get("id", "").endswith("-" + suffix)]
    assert len(found) == 1, (suffix, [e.get("id") for e in found])
    return found[0]


def _numbers(d: str) -> list[float]:
    return [float(x) for x in re.findall(r"-?\d+(?:\.\d+)?", d)]


def _node_xy(svg, node) -> tuple[float, float]:
    use = _by_id(svg, f"node-{node}").find(f".//{SVG}use")
    return float(use.get("x")), float(use.get("y"))


def _texts(svg) -> list[str]:
    return ["".join(t.itertext()).strip() for t in svg.iter(f"{SVG}text")]


def _table(tables, first_header: str, n_cols: int | None = None):
    return next(t for t in tables if t["header"] and t["header"][0] == first_header
                and (n_cols is None or len(t["header"]) == n_cols))


# ----------------------------------------------------------------------------------------------
# the map: north arrow, scale bar, labels, colour scale
# ----------------------------------------------------------------------------------------------
def test_one_inline_svg_map_per_storm_and_nothing_fetched(run):
    doc, html, _ = run
    svgs = _svgs(html)
    assert len(svgs) == len(doc["storms"]) == 2 and html.count("<h2>Map: ") == 2
    assert "<script" not in html and "<link" not in html and not re.search(r"""(src|href)=["']https?:""", html)
    ids = re.findall(r'\sid="([^"]+)"', html)
    assert len(ids) == len(set(ids)), "two elements of the page share an id"


def test_scale_bar_length_in_ft_matches_the_model_coordinates(run):
    """Measured in the SVG: the node markers give the drawing's points per ft; the bar's drawn length
    divided by it is the length its label states, in ft."""
    doc, html, _ = run
    xy = doc["geometry"]["nodes"]
    (a, b) = ("MH0003", "MH0017")
    assert abs(xy[b][0] - xy[a][0]) > 1000  # far enough apart to measure the scale
    for svg in _svgs(html):
        (xa, ya), (xb, yb) = _node_xy(svg, a), _node_xy(svg, b)
        per_ft = (xb - xa) / (xy[b][0] - xy[a][0])
        assert per_ft > 0
        if abs(xy[b][1] - xy[a][1]) > 100:  # equal scales, north up (the SVG's y runs down)
            assert -(yb - ya) / (xy[b][1] - xy[a][1]) == pytest.approx(per_ft, rel=1e-3)
        segments = [_numbers(_by_id(svg, f"scale-bar-{i}").find(f"{SVG}path").get("d"))[0::2] for i in range(4)]
        drawn_ft = (max(segments[3]) - min(segments[0])) / per_ft
        (label,) = ["".join(_by_id(svg, "scale-bar-text").itertext()).strip()]
        m = re.fullmatch(r"([\d,]+) ft", label)
        assert m, label
        stated_ft = float(m.group(1).replace(",", ""))
        assert drawn_ft == pytest.approx(stated_ft, rel=2e-3)
        for i in range(4):  # four equal segments
            assert max(segments[i]) - min(segments[i]) == pytest.approx(stated_ft * per_ft / 4, rel=2e-3)
        assert 0.05 < stated_ft / (max(v[0] for v in xy.values()) - min(v[0] for v in xy.values())) < 0.5


def test_north_arrow_points_up(run):
    _, html, _ = run
    for svg in _svgs(html):
        assert "".join(_by_id(svg, "north-arrow").itertext()).strip() == "N"
        text = _by_id(svg, "north-arrow").find(f"{SVG}text")
        pts = _numbers(_by_id(svg, "north-arrow-arrow").find(f"{SVG}path").get("d"))
        xs, ys = pts[0::2], pts[1::2]
        tip = min(range(len(ys)), key=ys.__getitem__)
        assert max(ys) - min(ys) > 1.5 * (max(xs) - min(xs))  # taller than wide
        assert xs[tip] == pytest.approx(float(text.get("x")), abs=0.5) == (max(xs) + min(xs)) / 2  # a point straight above the N
        assert ys[tip] < float(text.get("y")) and max(ys) < float(text.get("y"))


@pytest.mark.parametrize("storm", [STORM, TEN])
def test_labels_do_not_overlap(run, storm):
    """Each label's box (on the figure): inside the map, clear of every other label, the north arrow and the
    scale bar; and the case is not trivial: with every label at its first spot, two overlap."""
    import matplotlib.pyplot as plt

    doc, _, _ = run
    fig, _caption, info = headroom_map(doc, storm, map_geometry(doc))
    try:
        ax = fig.axes[0]
        renderer = fig.canvas.get_renderer()
        labels = [t for t in ax.texts if t.get_gid() != "north-arrow"]
        assert [t.get_text() for t in labels] == info["labels"] and not info["labels_left_out"]
        boxes = [t.get_window_extent(renderer) for t in labels]
        frame = ax.get_window_extent(renderer)
        arrow = next(t for t in ax.texts if t.get_gid() == "north-arrow")
        reserved = [arrow.get_window_extent(renderer), arrow.arrow_patch.get_window_extent(renderer),
                    next(a for a in ax.artists if a.get_gid() == "scale-bar").get_window_extent(renderer)]
        for i, b in enumerate(boxes):
            assert frame.x0 <= b.x0 and b.x1 <= frame.x1 and frame.y0 <= b.y0 and b.y1 <= frame.y1, labels[i].get_text()
            assert not any(b.overlaps(r) for r in reserved), labels[i].get_text()
            for j in range(i):
                assert not b.overlaps(boxes[j]), (labels[i].get_text(), labels[j].get_text())
        # the governing elements and the lowest figure are among the labels
        gov = {_cell(doc, n, storm)["governing_check"]["element"] for n in NODES
               if _cell(doc, n, storm)["status"] in ("ok", "zero")}
        for el in gov:
            assert any(t.startswith((f"{el}: governs", f"plant {el}: governs")) for t in info["labels"]), (el, info["labels"])
        low = min((_cell(doc, n, storm) for n in NODES if _cell(doc, n, storm)["status"] in ("ok", "zero")),
                  key=lambda r: r["max_connection_gpd"])
        assert f"{low['node']}: {number(low['max_connection_gpd'], 'gpd')} gpd" in info["labels"]
        if storm != STORM:
            return
        # not trivial: at the first spot around their points, some labels would overlap (MH0003 and MH0030
        # are neighbours under the storm where both have a figure)
        for t in labels:
            t.xyann = (6, 6)
            t.set_ha("left")
            t.set_va("bottom")
        first = [t.get_window_extent(renderer) for t in labels]
        assert any(first[i].overlaps(first[j]) for i in range(len(first)) for j in range(i))
    finally:
        plt.close(fig)


def test_nodes_coloured_by_headroom_and_told_apart_by_shape(run):
    doc, html, _ = run
    norm, cmap, ticks = color_scale(doc)
    import matplotlib.colors as mcolors

    svgs = dict(zip([s["label"] for s in doc["storms"]], _svgs(html)))
    shapes = {}
    for n in NODES:
        for storm, svg in svgs.items():
            rec = _cell(doc, n, storm)
            g = _by_id(svg, f"node-{n}")
            use = g.find(f".//{SVG}use")
            ref = use.get("{http://www.w3.org/1999/xlink}href").lstrip("#")
            marker = next(e for e in svg.iter(f"{SVG}path") if e.get("id") == ref)  # defined once per figure
            shapes.setdefault(rec["status"], set()).add(marker.get("d"))
            fill = re.search(r"fill: (#[0-9a-f]{6})", use.get("style")).group(1)
            if rec["status"] in ("ok", "bounded"):
                assert fill == mcolors.to_hex(cmap(norm(rec["max_connection_gpd"]))), (n, storm)
    # bracketed, bounded and zero cells have three different marker outlines, not only colours
    assert len(shapes) == 3 and all(len(v) == 1 for v in shapes.values())
    assert len({next(iter(v)) for v in shapes.values()}) == 3
    # the colour bar: its unit, and its ticks as format.number prints gpd
    lo, hi = norm.vmin, norm.vmax
    assert lo < 10_000 < hi
    for svg in svgs.values():
        texts = _texts(svg)
        assert "largest connection that passes [gpd] (log scale)" in texts
        assert number(10_000.0, "gpd") == "10,000" and "10,000" in texts
        assert all(number(t, "gpd") in texts for t in ticks)
    # the legend names every kind of mark
    assert "0: fails with the smallest flow searched" in _texts(svgs[STORM])
    assert "bounded: the largest flow searched passes (the headroom is at least it)" in _texts(svgs[TEN])


# ----------------------------------------------------------------------------------------------
# the tables and the header block
# ----------------------------------------------------------------------------------------------
def test_report_prints_one_format_per_quantity(run):
    _, html, _ = run
    assert check_report(html) == []


def test_table_sorted_by_headroom_with_governing_check_bracket_and_runs(run):
    doc, html, _ = run
    _, tables = read_report(html)
    t = _table(tables, "node", 11)
    assert t["header"][:6] == ["node", "storm", "largest connection [gpd]", "passing [gpd]", "failing [gpd]",
                               "governing check at the failing flow"]
    assert len(t["rows"]) == len(doc["nodes"])
    recs = [_cell(doc, row[0], row[1]) for row in t["rows"]]
    figures = [r["max_connection_gpd"] for r in recs]
    assert figures == sorted(figures) and recs[0]["status"] == "zero"  # the tightest first
    for row, r in zip(t["rows"], recs):
        g = r["governing_check"]
        head = number(r["max_connection_gpd"], "gpd")
        assert row[2] == (f">= {head}" if r["status"] == "bounded" else head)
        assert row[3] == number(r["passing_gpd"], "gpd") and row[4] == number(r["failing_gpd"], "gpd")
        assert row[9] == number(r["runs"])
        if g is None:
            assert r["status"] == "bounded" and row[5:9] == ["-", "-", "-", "-"]
            continue
        assert row[5] == g["criterion"] and row[6] == g["element"]
        unit = "" if g["unit"] == "-" else f" {g['unit']}"
        assert row[8] == number(g["limit"], g["unit"]) + unit
        assert row[7].startswith(number(g["value"], g["unit"]) + unit)
    # a gpd figure as format.number prints it: thousands separator, whole gallons
    mh3 = _cell(doc, "MH0003", STORM)
    assert number(mh3["max_connection_gpd"], "gpd") == f"{mh3['max_connection_gpd']:,.0f}"
    row = next(r for r in t["rows"] if r[:2] == ["MH0003", STORM])
    assert row[2] == number(mh3["max_connection_gpd"], "gpd") and "," in row[2]


def test_a_value_just_above_its_limit_says_so(run, tmp_path):
    """A d/D that fails by less than its last printed digit says that it is above its limit (the report renders
    the stored document: the governing check is set so, as a 0.8 limit failed by 1e-9)."""
    doc, _, _ = run
    d = json.loads(json.dumps(doc))
    cell = next(r for r in d["nodes"] if r["status"] == "zero")
    cell["governing_check"] = {**cell["governing_check"], "criterion": "max d/D <= 0.8 (gravity sewers)",
                               "element": "P0044", "unit": "-", "limit": 0.8, "value": 0.8 + 1e-9}
    _, tables = read_report(write_report(d, tmp_path / "h.html").read_text(encoding="utf-8"))
    t = _table(tables, "node", 11)
    row = next(r for r in t["rows"] if r[:2] == [cell["node"], cell["storm"]])
    assert number(0.8 + 1e-9, "-") == number(0.8, "-")
    assert row[7] == f"{number(0.8 + 1e-9, '-')} (just above the limit)"


def test_return_period_matrix_node_by_storm(run):
    doc, html, _ = run
    _, tables = read_report(html)
    t = _table(tables, "node", 3)
    assert t["header"] == ["node", f"{STORM} [gpd]", f"{TEN} [gpd]"]
    m = doc["matrix"]
    assert m["storms"] == [STORM, TEN] and sorted(m["nodes"]) == sorted(NODES)
    grid = {(n, s): m["max_connection_gpd"][i][j] for i, n in enumerate(m["nodes"]) for j, s in enumerate(m["storms"])}
    for row in t["rows"]:
        for s, text in zip([STORM, TEN], row[1:]):
            rec = _cell(doc, row[0], s)
            v = grid[(row[0], s)]
            assert text == (f">= {number(v, 'gpd')}" if rec["bounded"] else number(v, "gpd")), (row, s)
    lowest = [min(grid[(r[0], s)] for s in (STORM, TEN)) for r in t["rows"]]
    assert lowest == sorted(lowest) and t["rows"][0][0] == "MH0017"


def test_header_block_has_counts_and_policies(run, tmp_path):
    doc, html, _ = run
    _, tables = read_report(html)
    kv = {r[0]: r[1] for t in tables if t["header"] == ["item", "value"] for r in t["rows"]}
    assert kv["SWMM runs"] == number(doc["runs_total"]) and doc["runs_total"] > len(NODES) * 2
    assert kv["runs stopped once their failure was certain"] == number(doc["runs_stopped"])
    assert kv["cells (node x storm)"] == number(len(doc["nodes"]))
    assert kv["bracketed"] == number(doc["counts"]["ok"]) and kv["zero"] == number(doc["counts"]["zero"])
    if doc["full_run_equivalents"] is not None:
        assert kv["full-run equivalents (what the runs cost, in complete runs)"] == number(doc["full_run_equivalents"])
    assert kv["largest flow searched [gpd]"] == "30,000" and kv["smallest flow searched [gpd]"] == "3,700"
    assert kv["bracket tolerance [%]"] == number(5.0, "%")
    assert kv[f"storm {TEN}"].startswith("Binghamton 10-year 24-hour (test), 3.200 in, ")
    pol = _table(tables, "policy")
    names = [r[0] for r in pol["rows"]]
    assert doc["method"] == "screen"
    assert names == ["FIRST_RUN_ABOVE", "FAIL_WHEN_CERTAIN", "STORM_RESPONSE_WINDOW", "capacity criteria"]
    # policies the document names itself are the ones shown
    named = dict(doc, policies=[{"name": "SOME_POLICY", "value": 3, "text": "what it decides"}])
    _, tables = read_report(write_report(named, tmp_path / "named.html").read_text(encoding="utf-8"))
    assert _table(tables, "policy")["rows"] == [["SOME_POLICY", "3", "what it decides"]]


# ----------------------------------------------------------------------------------------------
# escaping, and the document alone
# ----------------------------------------------------------------------------------------------
def test_user_and_model_strings_are_escaped(run, tmp_path):
    """A node named ``<b>x</b>`` and a storm label with markup and quotes show as text, never as markup."""
    doc, _, _ = run
    bad_node, bad_storm = "<b>x</b>", 'ten <i>"year"</i> & more'
    d = copy.deepcopy(doc)
    for r in d["nodes"]:
        r["node"] = bad_node if r["node"] == "MH0017" else r["node"]
        r["storm"] = bad_storm if r["storm"] == TEN else r["storm"]
    d["matrix"]["nodes"] = [bad_node if n == "MH0017" else n for n in d["matrix"]["nodes"]]
    d["matrix"]["storms"] = [bad_storm if s == TEN else s for s in d["matrix"]["storms"]]
    for s in d["storms"]:
        s["label"] = bad_storm if s["label"] == TEN else s["label"]
    d["geometry"]["nodes"][bad_node] = d["geometry"]["nodes"].pop("MH0017")
    html = write_report(d, tmp_path / "esc.html").read_text(encoding="utf-8")
    assert bad_node not in html and "<i>" not in html
    assert "&lt;b&gt;x&lt;/b&gt;" in html
    text, tables = read_report(html)
    assert bad_node in text and f"Map: {bad_storm}" in text
    assert any(r[0] == bad_node for r in _table(tables, "node", 11)["rows"])
    svgs = _svgs(html)  # still well-formed XML
    assert len(svgs) == 2 and _node_xy(svgs[1], bad_node)
    assert _table(tables, "node", 3)["header"] == ["node", f"{STORM} [gpd]", f"{bad_storm} [gpd]"]


def test_the_document_alone_renders_the_report(run, tmp_path):
    """The stored JSON renders the same report; without any geometry the report says there is no map;
    a document without a geometry block takes the run's coordinates and link lines (as the CLI passes them)."""
    doc, html, res = run
    again = write_report(json.loads(json.dumps(doc)), tmp_path / "again.html").read_text(encoding="utf-8")
    assert again.split("Generated by")[1].split("</p>", 1)[1] == html.split("Generated by")[1].split("</p>", 1)[1]
    bare = {k: v for k, v in doc.items() if k != "geometry"}
    none = write_report(bare, tmp_path / "none.html").read_text(encoding="utf-8")
    assert none.count("No map: the model has no [COORDINATES] for the nodes searched.") == 2 and "<svg" not in none
    legacy = write_report(bare, tmp_path / "legacy.html", res.coordinates, res.link_lines).read_text(encoding="utf-8")
    svgs = _svgs(legacy)
    assert len(svgs) == 2
    # no map units in the coordinates alone: the scale bar says so
    assert any(re.fullmatch(r"[\d,]+ map units", t) for t in _texts(svgs[0]))
    a, b = _node_xy(svgs[0], "MH0003"), _node_xy(svgs[0], "MH0017")
    assert math.isfinite(a[0] + b[0]) and a != b
