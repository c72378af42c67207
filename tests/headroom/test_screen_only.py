"""Screening (issue 30): ``headroom(screen_only=True)`` / ``capacitysim headroom --screen-only`` makes the runs before
and the screen only, whatever the number of nodes; every cell carries the screen's estimate and stays missing (no
figure is claimed); the same store resumed without it confirms the figures, equal to a search from scratch."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import zarr

from capacitysim.io.headroom_store import StoreWriter, create_store, read_cells
from capacitysim.workflows.headroom import headroom

from .conftest import STORM, TINY

pytestmark = [pytest.mark.swmm]

FIGURES = ("max_connection_gpd", "passing_gpd", "failing_gpd", "bounded", "governing_check", "runs", "status")


@pytest.fixture(scope="module")
def searched(tmp_path_factory):
    """Every junction of tiny.inp searched from scratch (in this process)."""
    return headroom(TINY, STORM, workers=0, out=tmp_path_factory.mktemp("searched") / "out")


def test_screening_runs_only_the_runs_before_and_claims_no_figure(searched, tmp_path):
    res = headroom(TINY, STORM, workers=0, out=tmp_path / "out", screen_only=True)
    doc = res.to_dict()
    assert res.runs_total == res.before_runs_total == res.runs_now == 1  # the run before: no noise measure to judge by
    assert doc["counts"]["missing"] == len(res.nodes) == 11 and doc["nodes_confirmed"] == 0
    assert doc["screen_only"] is True and doc["nodes_screened"] == 11 and all(r["screened"] for r in doc["nodes"])
    assert all(r["max_connection_gpd"] is None and r["passing_gpd"] is None and "bracket" not in r for r in doc["nodes"])
    # the estimate is the one the search starts from, to the last digit
    full = {r["node"]: r for r in searched.nodes}
    for r in res.nodes:
        s = full[r["node"]]
        assert r.get("screen_gpd") == s.get("screen_gpd") and (r.get("screen_element") or "") == (s.get("screen_element") or "")


def test_a_screened_store_resumed_without_it_confirms_the_same_figures(searched, tmp_path):
    out = tmp_path / "out"
    headroom(TINY, STORM, workers=0, out=out, screen_only=True)
    again = headroom(TINY, STORM, workers=0, out=out, resume=True)
    assert again.computed_now == 11 and again.counts()["missing"] == 0
    assert {r["node"]: tuple(r.get(k) for k in FIGURES) for r in again.nodes} == \
        {r["node"]: tuple(r.get(k) for k in FIGURES) for r in searched.nodes}
    assert "screen_only" not in again.to_dict()  # a search's document keeps its form


def test_the_command_exits_0_and_prints_each_estimate_as_not_confirmed(run_cli, tmp_path):
    text = run_cli("headroom", "--model", str(TINY), "--storm", STORM, "--workers", "0", "--no-progress",
                   "--screen-only", "--report", tmp_path / "screen.html")
    assert text.exit_code == 0, text.stderr
    assert "11 screened only" in text.stdout and text.stdout.count("not confirmed") == 11, text.stdout
    page = (tmp_path / "screen.html").read_text()
    assert page.count("not confirmed") == 11 and "This run is a screening" in page
    js = run_cli("headroom", "--model", str(TINY), "--storm", STORM, "--workers", "0", "--no-progress",
                 "--screen-only", "--nodes", "MH0002", "--json")
    assert js.exit_code == 0, js.stderr
    doc = json.loads(js.stdout)
    assert doc["nodes_screened"] == 1 and doc["nodes"][0]["status"] == "missing" and doc["runs_total"] == 1


def test_the_screen_is_written_into_missing_cells_only_and_leaves_their_status(tmp_path):
    store = tmp_path / "s.zarr"
    create_store(store, ["A", "B", "C"], ["s1", "s2"], {"t": 1})
    w = StoreWriter(store)
    w.write_screen(1, [0, 2], [1500.0, math.inf], ["cso|CSO1", ""])
    g = zarr.open_group(str(store), mode="r")
    assert np.asarray(g["status"][:]).tolist() == [[0, 0], [0, 0], [0, 0]]
    gpd = np.asarray(g["screen_gpd"][:])
    assert gpd[0, 1] == 1500.0 and gpd[2, 1] == math.inf and all(math.isnan(x) for x in (gpd[0, 0], gpd[1, 1]))
    cells = {(r["node"], r["storm"]): r for r in read_cells(store)}
    assert cells[("A", "s2")] == {"node": "A", "storm": "s2", "status": "missing", "screen_gpd": 1500.0,
                                  "screen_element": "cso|CSO1", "screened": True}
    # screened, and no element limits it: no number is claimed
    assert cells[("C", "s2")] == {"node": "C", "storm": "s2", "status": "missing", "screen_gpd": None,
                                  "screen_element": "", "screened": True}
    assert cells[("B", "s2")] == {"node": "B", "storm": "s2", "status": "missing"}  # not screened
    # a screen that gives no number for an element (NaN) is screened, and says so without a number
    w.write_screen(0, [1], [math.nan], ["peak|PLANT"])
    cell = next(r for r in read_cells(store) if (r["node"], r["storm"]) == ("B", "s1"))
    assert cell["screened"] and cell["screen_gpd"] is None
    from capacitysim.report.headroom import screen_text
    assert screen_text(cell) == "the screen gave no estimate (peak|PLANT), not confirmed"


def test_a_large_map_draws_one_mark_per_node_in_one_artist_per_kind(searched, tmp_path, monkeypatch):
    """Above MAP_NODE_IDS_MAX nodes the map groups its marks (a 10,000-node screening's map took 40 s and 8 MB with one
    artist per node); every node is still drawn, once."""
    import re

    import capacitysim.report.headroom as rh

    res = headroom(TINY, STORM, workers=0, nodes=["MH0002", "MH0003", "MH0004", "MH0005"], screen_only=True)
    pages = {}
    for cap in (500, 3):
        monkeypatch.setattr(rh, "MAP_NODE_IDS_MAX", cap)
        pages[cap] = rh.write_report(res.to_dict(), tmp_path / f"map{cap}.html").read_text(encoding="utf-8")
    assert len(re.findall(r'id="[^"]*node-MH000[2-5]"', pages[500])) == 4 and "nodes-other" not in pages[500]
    assert not re.findall(r'id="[^"]*node-MH', pages[3])
    groups = re.findall(r'<g id="[^"]*nodes-other-\d+">(.*?)</g>\s*</g>', pages[3], re.DOTALL)
    assert len(groups) == 1 and len(re.findall(r"<use ", groups[0])) == 4, groups
    # figures: one artist per kind and colour, every node once, coloured as the per-node map colours it
    monkeypatch.setattr(rh, "MAP_NODE_IDS_MAX", 3)
    full = rh.write_report(searched.to_dict(), tmp_path / "full.html").read_text(encoding="utf-8")
    groups = re.findall(r'<g id="[^"]*nodes-(ok|bounded|zero|other)-\d+">(.*?)</g>\s*</g>', full, re.DOTALL)
    assert sum(len(re.findall(r"<use ", g)) for _, g in groups) == 11 and not re.findall(r'id="[^"]*node-MH', full)
    monkeypatch.setattr(rh, "MAP_NODE_IDS_MAX", 500)
    one = rh.write_report(searched.to_dict(), tmp_path / "one.html").read_text(encoding="utf-8")
    fills = lambda page: sorted(re.findall(r"<use [^>]*style=\"fill: (#[0-9a-f]{6})", page))  # noqa: E731
    assert fills(full) == fills(one)


def test_a_large_table_keeps_the_tightest_rows_and_says_where_the_rest_are(tmp_path, monkeypatch):
    import re

    import capacitysim.report.headroom as rh

    res = headroom(TINY, STORM, workers=0, screen_only=True)
    monkeypatch.setattr(rh, "TABLE_ROWS_MAX", 3)
    page = rh.write_report(res.to_dict(), tmp_path / "t.html").read_text(encoding="utf-8")
    assert "The 3 tightest of 11 cells, and every untrusted or erroneous one" in page and "headroom.csv" in page
    shown = re.findall(r"screen estimate ([\d,]+) gpd", page)
    lowest = sorted(r["screen_gpd"] for r in res.nodes if r.get("screen_gpd") is not None)[:3]
    assert [float(x.replace(",", "")) for x in shown] == pytest.approx(lowest, abs=0.5)  # by the screen's estimate
    # an untrusted or erroneous cell is never cut, wherever it sorts
    doc = res.to_dict()
    doc["nodes"][-1] = {**doc["nodes"][-1], "status": "error", "screened": None, "message": "the run raised: boom"}
    page = rh.write_report(doc, tmp_path / "e.html").read_text(encoding="utf-8")
    assert "the run raised: boom" in page and len(re.findall(r"screen estimate ([\d,]+) gpd", page)) == 3


def test_the_progress_of_a_screening_of_two_storms_reaches_every_cell():
    seen = []
    res = headroom(TINY, [STORM, "type2:3.2in"], workers=0, screen_only=True,
                   progress=lambda done, total, runs: seen.append((done, total)))
    assert res.to_dict()["nodes_screened"] == 22 and res.runs_total == 2
    assert seen[-1] == (22, 22) and [d for d, _ in seen] == sorted(d for d, _ in seen)
