"""A PASS shows the margins (issue 28, item 2): the tightest elements downstream of the connection with their margin
to the absolute limit, and the deficiencies the system had before the change apart from the verdict (synthetic-50's
P0012 runs at d/D 0.85 before any connection: the system's, not the change's)."""

from __future__ import annotations

import json

import networkx as nx
import pytest

from capacitysim.network.model import load_model
from capacitysim.io.bundled import model_path

pytestmark = pytest.mark.swmm


@pytest.fixture(scope="module")
def doc(run_cli):
    r = run_cli("capacity", "--model", "synthetic-50", "--storm", "binghamton-1yr-24h", "--connect", "MH0017=1000", "--json")
    return json.loads(r.stdout)


def test_the_tightest_elements_are_downstream_and_ordered(doc):
    assert doc["verdict"] == "pass"
    m = doc["margins"]
    g = nx.DiGraph()
    for lid, _s, n1, n2, _l in load_model(model_path("synthetic-50")).links():
        g.add_edge(n1, n2, link=lid)
    down = {"MH0017"} | nx.descendants(g, "MH0017")
    down_links = {d["link"] for u, _v, d in g.edges(data=True) if u in down}
    assert 0 < len(m["tightest"]) <= 10
    for r in m["tightest"]:
        assert r["element"] in (down_links if r["kind"] == "link" else down), r
        if r["quantity"] == "d/D":  # by hand: the margin is the limit less the value after
            assert r["margin"] == pytest.approx(r["limit"] - r["after"]) and r["used"] == pytest.approx(r["after"] / r["limit"])
    used = [r["used"] for r in m["tightest"]]
    assert used == sorted(used, reverse=True)


def test_a_deficiency_before_the_change_is_listed_apart_from_the_verdict(doc):
    (p12,) = [r for r in doc["margins"]["existing_deficiencies"] if r["element"] == "P0012"]
    assert p12["before"] > p12["limit"] == 0.8 and p12["before"] == pytest.approx(0.85, abs=0.01)
    assert not any(c["element"] == "P0012" and c["passed"] is False for c in doc["checks"])  # not the change's


def test_the_command_prints_them(run_cli):
    r = run_cli("capacity", "--model", "synthetic-50", "--storm", "binghamton-1yr-24h", "--connect", "MH0017=1000")
    lines = r.stdout.splitlines()
    assert sum(line.startswith("margin ") for line in lines) == 5
    assert "deficient before the change: P0012 d/D 0.85 -> 0.85 (limit 0.8)" in lines


def test_the_report_shows_them(doc, tmp_path):
    from capacitysim.report.capacity import write_report
    from tests.report.report_text import read_report

    _, tables = read_report(write_report(doc, tmp_path / "r.html").read_text(encoding="utf-8"))
    margins = next(t for t in tables if t["header"] == ["element", "quantity", "before", "after", "limit", "margin"])
    assert [r[0] for r in margins["rows"]] == [r["element"] for r in doc["margins"]["tightest"]]
    before = next(t for t in tables if t["header"] == ["element", "quantity", "before", "after", "limit"])
    assert ["P0012", "d/D", "0.85", "0.85", "0.8"] in before["rows"]
