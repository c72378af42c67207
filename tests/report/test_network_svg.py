"""The network maps as SVG (capacitysim.report.network_svg): well-formed XML, one circle per node and one polyline
per link, names escaped, d/D classes from the document's limit, failed checks ringed, models without coordinates.
No server, no engine (result documents are the golden capacity document or built here)."""

from __future__ import annotations

import json
import re
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from capacitysim.io.export.geometry import model_geometry
from capacitysim.network.model import parse_inp
from capacitysim.processes.base import bundled
from capacitysim.report import network_svg as ns

SVG = "{http://www.w3.org/2000/svg}"
GOLDEN = Path(__file__).parents[1] / "data" / "golden" / "capacity.json"
EVIL = '<script>"x'


def _parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg" and ns.ROOT_CLASS in root.get("class").split()
    return root


def _nodes(root) -> dict[str, ET.Element]:
    return {c.get("data-node"): c for c in root.iter(f"{SVG}circle") if c.get("data-node") is not None}


def _links(root) -> dict[str, ET.Element]:
    return {p.get("data-link"): p for p in root.iter(f"{SVG}polyline") if p.get("data-link") is not None}


def _group(root, cls: str) -> ET.Element:
    """The map's group of that class (``links``, ``nodes``, ``under``, ``marks``, ``legend``)."""
    (g,) = [g for g in root.iter(f"{SVG}g") if g.get("class") == cls]
    return g


def _style(root) -> str:
    return "".join(s.text or "" for s in root.iter(f"{SVG}style"))


def _model(tmp_path, *, coordinates: bool = True, name: str = EVIL) -> Path:
    text = f"""[TITLE]
tiny
[OPTIONS]
FLOW_UNITS CFS
[JUNCTIONS]
J1 100 10 0 0 0
{name} 99 10 0 0 0
Bad\x01Name 98 10 0 0 0
[OUTFALLS]
O1 90 FREE NO
[STORAGE]
S1 95 10 0 FUNCTIONAL 1000 0 0 0 0
[CONDUITS]
C1 J1 {name} 400 0.013 0 0 0 0
C2 {name} Bad\x01Name 400 0.013 0 0 0 0
C3 Bad\x01Name O1 400 0.013 0 0 0 0
[PUMPS]
P1 S1 J1 * ON 0 0
[XSECTIONS]
C1 CIRCULAR 1 0 0 0 1
C2 CIRCULAR 1 0 0 0 1
C3 CIRCULAR 1 0 0 0 1
"""
    if coordinates:
        text += f"""[COORDINATES]
J1 0 1000
{name} 400 1000
Bad\x01Name 800 900
O1 1200 800
S1 0 0
[VERTICES]
C3 1000 950
"""
    p = tmp_path / "tiny.inp"
    p.write_bytes(text.encode("latin-1"))
    return p


def test_model_svg_one_circle_per_node_one_polyline_per_link():
    path = bundled("model")["synthetic-50"]
    geom = model_geometry(parse_inp(path))
    svg = ns.model_svg(path)
    root = _parse(svg)
    nodes, links = _nodes(root), _links(root)
    assert set(nodes) == set(geom.nodes) and len(nodes) == len(list(_group(root, "nodes").iter(f"{SVG}circle")))
    assert set(links) == set(geom.links) and len(links) == len(list(_group(root, "links").iter(f"{SVG}polyline")))
    for nid, c in nodes.items():
        assert c.find(f"{SVG}title").text.startswith(nid)
        assert float(c.get("cx")) >= 0 and float(c.get("cy")) >= 0
    # outfalls are drawn apart; the pump and the weir dashed
    assert "out" in nodes["PLANT"].get("class").split() and "out" in nodes["CSO1"].get("class").split()
    assert "other" in links["PS1_PUMP"].get("class").split() and "other" not in links["P0001"].get("class").split()
    # north up: a larger y is higher on the map (a smaller SVG y)
    y_of = {n: float(c.get("cy")) for n, c in nodes.items()}
    assert (geom.nodes["MH0011"][1] > geom.nodes["MH0006"][1]) and y_of["MH0011"] < y_of["MH0006"]
    # strokes in screen units; no script, no event attribute, no id
    assert "vector-effect:non-scaling-stroke" in _style(root)
    assert not re.search(r"<script|\son[a-z]+=|\sid=", svg)


def test_names_are_escaped_and_kept_as_text(tmp_path):
    svg = ns.model_svg(_model(tmp_path))
    assert "<script>" not in svg and "&lt;script&gt;&quot;x" in svg
    root = _parse(svg)  # a control character in a name does not break the XML
    nodes, links = _nodes(root), _links(root)
    assert EVIL in nodes and nodes[EVIL].find(f"{SVG}title").text.startswith(EVIL)
    assert "Bad\ufffdName" in nodes
    assert set(nodes) == {"J1", EVIL, "Bad\ufffdName", "O1", "S1"} and set(links) == {"C1", "C2", "C3", "P1"}
    assert "sto" in nodes["S1"].get("class").split() and "out" in nodes["O1"].get("class").split()
    assert len(links["C3"].get("points").split()) == 3  # from-node, the vertex, to-node
    # the same name in a result document
    doc = {"geometry": {"nodes": {EVIL: [0, 0], "N2": [10, 0]}, "links": {EVIL: [[0, 0], [10, 0]]}},
           "nodes": [{"id": EVIL, "max_surcharge_ft_after": 0.0}], "links": [{"id": EVIL, "max_d_over_d_after": 0.3}],
           "checks": [{"element": EVIL, "criterion": "<b>bad</b>", "passed": False}],
           "scenario": {"connections": [{"node": EVIL, "flow_gpd": 1000}]}, "model_file": "<i>.inp"}
    svg = ns.result_svg(doc)
    assert "<script>" not in svg and "<b>" not in svg and "<i>" not in svg
    root = _parse(svg)
    assert EVIL in _nodes(root) and EVIL in _links(root)
    assert "<b>bad</b>" in _nodes(root)[EVIL].find(f"{SVG}title").text


def _doc(values: dict[str, float], limit: float | None = 0.8) -> dict:
    n = len(values)
    doc = {"kind": "capacity-demonstration", "verdict": "pass",
           "geometry": {"nodes": {f"N{i}": [i * 100.0, 0.0] for i in range(n + 1)},
                        "links": {lid: [[i * 100.0, 0.0], [(i + 1) * 100.0, 0.0]] for i, lid in enumerate(values)}},
           "links": [{"id": lid, "max_d_over_d_after": v, "max_d_over_d_before": v} for lid, v in values.items()],
           "nodes": [], "checks": []}
    if limit is not None:
        doc["criteria"] = {"max_d_over_d": limit}
    return doc


@pytest.mark.parametrize("limit, expected", [
    (0.8, {"A": 0, "B": 1, "C": 1, "D": 1, "E": 2, "F": 3}),
    (0.7, {"A": 0, "B": 1, "C": 1, "D": 2, "E": 2, "F": 3}),
    (None, {"A": 0, "B": 1, "C": 1, "D": 1, "E": 2, "F": 3}),  # no criteria: Criteria's default, 0.8
])
def test_links_are_coloured_by_the_class_breaks_of_the_documents_limit(limit, expected):
    values = {"A": 0.3, "B": 0.5, "C": 0.7, "D": 0.8, "E": 0.85, "F": 1.0}
    root = _parse(ns.result_svg(_doc(values, limit)))
    links, style = _links(root), _style(root)
    for lid, k in expected.items():
        assert f"d{k}" in links[lid].get("class").split(), (lid, values[lid], limit)
        assert f".csmap .lk.d{k}{{stroke:{ns.DD_COLOURS[k]};" in style
    legend = " ".join(t.text or "" for t in root.iter(f"{SVG}text"))
    assert f"limit {limit or 0.8:g}" in legend and "[-]" in legend and "[ft]" in legend


def test_failed_checks_ringed_existing_deficiencies_and_connections_marked():
    doc = json.loads(GOLDEN.read_text())
    failed = {c["element"] for c in doc["checks"] if c.get("passed") is False}
    assert failed == {"PS1_WW"}  # the golden document fails at the wet well
    doc["checks"].append({"criterion": "max d/D <= 0.8 (gravity sewers)", "element": "P0003", "kind": "link",
                          "passed": False})
    doc.setdefault("margins", {})["existing_deficiencies"] = [
        {"element": "P0012", "kind": "link", "quantity": "d/D", "before": 0.88, "limit": 0.8},
        {"element": "MH0020", "kind": "node", "quantity": "freeboard_ft", "before": 0.5, "limit": 1.0}]
    root = _parse(ns.result_svg(doc))
    nodes, links = _nodes(root), _links(root)
    assert set(nodes) == set(doc["geometry"]["nodes"]) and set(links) == set(doc["geometry"]["links"])
    rings = [c for c in _group(root, "marks").iter(f"{SVG}circle") if c.get("class") == "fail"]
    ww = nodes["PS1_WW"]
    assert any(r.get("cx") == ww.get("cx") and r.get("cy") == ww.get("cy") for r in rings)
    halos = [p.get("points") for p in _group(root, "under").iter(f"{SVG}polyline") if p.get("class") == "halo"]
    assert links["P0003"].get("points") in halos
    assert "FAILS" in ww.find(f"{SVG}title").text and "FAILS" in links["P0003"].find(f"{SVG}title").text
    pre = [p.get("points") for p in _group(root, "under").iter(f"{SVG}polyline") if p.get("class") == "prel"]
    assert pre == [links["P0012"].get("points")]
    pre_rings = [(c.get("cx"), c.get("cy")) for c in _group(root, "marks").iter(f"{SVG}circle") if c.get("class") == "pre"]
    assert pre_rings == [(nodes["MH0020"].get("cx"), nodes["MH0020"].get("cy"))]
    conns = [p.get("data-connection") for p in _group(root, "marks").iter(f"{SVG}polygon")]
    assert conns == [c["node"] for c in doc["scenario"]["connections"]]


def test_nodes_by_surcharge_after_and_flooding():
    doc = _doc({"A": 0.3, "B": 0.3, "C": 0.3, "D": 0.3})
    doc["nodes"] = [{"id": "N0", "max_surcharge_ft_after": 0.0}, {"id": "N1", "max_surcharge_ft_after": 0.4},
                    {"id": "N2", "max_surcharge_ft_after": 1.5}, {"id": "N3", "max_surcharge_ft_after": 5.0},
                    {"id": "N4", "max_surcharge_ft_after": 5.0, "flooding_volume_cf_after": 12.0}]
    nodes = _nodes(_parse(ns.result_svg(doc)))
    assert [n for n in ("N0", "N1", "N2", "N3", "N4")
            if not ({"s1", "s2", "s3", "fl"} & set(nodes[n].get("class").split()))] == ["N0"]
    assert "s1" in nodes["N1"].get("class") and "s2" in nodes["N2"].get("class") and "s3" in nodes["N3"].get("class")
    assert nodes["N4"].get("class").split()[-1] == "fl"


def test_a_model_without_coordinates_gives_the_message(tmp_path):
    svg = ns.model_svg(_model(tmp_path, coordinates=False))
    root = _parse(svg)
    assert root.get("data-empty") == "1" and not _nodes(root)
    assert "has no coordinates" in "".join(root.itertext())
    doc = json.loads(GOLDEN.read_text())
    doc["geometry"] = {"nodes": {}, "links": {}, "crs": None, "map_units": None}
    root = _parse(ns.result_svg(doc))
    assert root.get("data-empty") == "1" and "has no coordinates" in "".join(root.itertext())


def test_two_thousand_elements_build_time_and_size_reported(tmp_path, capsys):
    """The build time is printed (measured, not asserted: speed is judged in the benchmarks); the size and the
    element counts are asserted (deterministic)."""
    from capacitysim.network.synthetic import generate

    path = tmp_path / "synthetic-1000.inp"
    path.write_text(generate(1000, seed=3))
    geom = model_geometry(parse_inp(path))
    assert len(geom.nodes) + len(geom.links) >= 1990
    ns.model_svg(path)  # imports warmed
    t = time.perf_counter()
    svg = ns.model_svg(path)
    model_ms = (time.perf_counter() - t) * 1e3
    root = _parse(svg)
    assert len(_nodes(root)) == len(geom.nodes) and len(_links(root)) == len(geom.links)
    doc = {"kind": "capacity-demonstration", "verdict": "fail", "criteria": {"max_d_over_d": 0.8},
           "geometry": {"nodes": {k: list(v) for k, v in geom.nodes.items()},
                        "links": {k: [list(p) for p in line] for k, line in geom.links.items()}},
           "links": [{"id": k, "max_d_over_d_after": (i % 11) / 10, "max_d_over_d_before": (i % 11) / 10,
                      "max_q_over_qfull_after": 0.5} for i, k in enumerate(geom.links)],
           "nodes": [{"id": k, "max_surcharge_ft_after": (i % 7) * 0.6, "max_surcharge_ft_before": 0.0,
                      "flooding_volume_cf_after": 0.0, "freeboard_ft_after": 3.0} for i, k in enumerate(geom.nodes)],
           "checks": [{"element": k, "criterion": "max d/D <= 0.8 (gravity sewers)", "passed": False}
                      for k in list(geom.links)[:50]],
           "scenario": {"connections": [{"node": next(iter(geom.nodes)), "flow_gpd": 5000.0}]}}
    t = time.perf_counter()
    rsvg = ns.result_svg(doc)
    result_ms = (time.perf_counter() - t) * 1e3
    _parse(rsvg)
    n = len(geom.nodes) + len(geom.links)
    with capsys.disabled():
        print(f"\nnetwork SVG of {len(geom.nodes)} nodes + {len(geom.links)} links = {n} elements: model map "
              f"{len(svg.encode()):,} bytes in {model_ms:.0f} ms (parse + draw), result map {len(rsvg.encode()):,} bytes "
              f"in {result_ms:.0f} ms")
    assert len(svg.encode()) < 400 * n and len(rsvg.encode()) < 600 * n  # about 110 and 200 bytes an element
