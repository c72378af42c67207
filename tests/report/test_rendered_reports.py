"""Every report prints one format per quantity, human labels, yes/no, dates without microseconds; the
capacity report has a network plan map and a labelled HGL profile.

Real runs: a capacity demonstration (SWMM, before and after), a detention design with its SWMM check,
a SPDES check of the bundled plant record, a credit bank on SQLite driven through the CLI, a vectorized
detention sweep. Each report is read back as a reader sees it (:mod:`tests.report.report_text`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from capacitysim.io.bundled import model_path
from capacitysim.report.format import DECIMALS, canonical_unit
from tests.bank_support import quantification
from tests.report.report_text import (
    BOOL_WORD,
    MICROSECONDS,
    NUMBER,
    RAW_KEY,
    UNIT_IN_HEADER,
    read_report,
)

MODELS = Path(model_path("synthetic-50")).parent


def check_report(html: str) -> list[str]:
    """What a report prints wrong: True/False, microseconds, raw field names as labels, a number of a
    unit column without that unit's decimals."""
    text, tables = read_report(html)
    problems = [f"boolean word: {m.group(0)!r} near {text[max(0, m.start() - 40):m.end() + 10]!r}" for m in BOOL_WORD.finditer(text)]
    problems += [f"microseconds: {m.group(0)}" for m in MICROSECONDS.finditer(text)]
    for t in tables:
        labels = list(t["header"]) + [r[0] for r in t["rows"] if r and t["header"][:2] in (["item", "value"], ["quantity", "value"])]
        problems += [f"raw field name as a label: {x!r}" for x in labels if RAW_KEY.search(x)]
        for j, h in enumerate(t["header"]):
            m = UNIT_IN_HEADER.search(h)
            unit = canonical_unit(m.group(1)) if m else None
            if unit not in DECIMALS:
                continue
            for r in t["rows"]:
                if j < len(r) and (n := NUMBER.match(r[j])) and len(n.group(1) or "") != DECIMALS[unit]:
                    problems.append(f"{h}: {r[j]!r} has not {DECIMALS[unit]} decimals")
    return problems


@pytest.fixture(scope="module")
def capacity(tmp_path_factory, run_cli):
    tmp = tmp_path_factory.mktemp("capacity")
    r = run_cli("capacity", "--model", "synthetic-50", "--storm", "binghamton-1yr-24h", "--connect", "MH0017=60000",
                "--remediate", "basin=PS1_WW,fraction=0.2", "--report", tmp / "capacity.html", "--json")
    assert r.exit_code in (0, 1), r.output
    return {"doc": json.loads(r.stdout), "html": (tmp / "capacity.html").read_text(encoding="utf-8"), "tmp": tmp}


@pytest.mark.swmm
def test_capacity_report_formats(capacity):
    assert check_report(capacity["html"]) == []


@pytest.mark.swmm
def test_capacity_report_has_the_network_plan_map(capacity):
    html = capacity["html"]
    assert "<h2>Network plan</h2>" in html
    plan = html.split("<h2>Network plan</h2>", 1)[1].split("<h2>", 1)[0]
    assert '<img alt="Network plan: links coloured by their maximum q/Qfull after the change' in plan
    assert "no CRS stated" in plan and "map units" in plan  # synthetic-50 names neither


@pytest.mark.swmm
def test_plan_map_marks_the_connection_remediation_plant_and_failures(capacity):
    import matplotlib.pyplot as plt

    from capacitysim.report.plan_map import capacity_plan_map

    doc = capacity["doc"]
    fig, _caption = capacity_plan_map(doc)
    try:
        ax = fig.axes[0]
        texts = [t.get_text() for t in ax.texts]
        legend = [t.get_text() for t in ax.get_legend().get_texts()]
        failed = {c["element"] for c in doc["checks"] if c["passed"] is False and c["element"] in doc["geometry"]["nodes"]}
        assert failed, "the 60,000 gpd connection fails checks at mapped elements"
        for el in failed:
            assert f"{el}: FAILS" in texts
        assert "MH0017: +60,000 gpd" in texts and f"plant {doc['plant']}" in texts and "N" in texts
        for item in ("new connection", "I/I remediation (RDII reduced)", "treatment plant", "element of a failed check",
                     ">= 1.0 (at or over full flow)"):
            assert item in legend
        # one line per link that has coordinates, each in the class of its q/Qfull after
        assert len(doc["geometry"]["links"]) == len(doc["links"])
        scale = [c for c in ax.artists if type(c).__name__ == "AnchoredOffsetbox"]
        assert scale, "a scale bar"
    finally:
        plt.close(fig)


@pytest.mark.swmm
def test_plan_map_without_coordinates_says_so(capacity, tmp_path):
    from capacitysim.report.capacity import write_report

    doc = dict(capacity["doc"], geometry={"nodes": {}, "links": {}, "map_units": None, "crs": None, "crs_source": ""})
    html = write_report(doc, tmp_path / "r.html").read_text(encoding="utf-8")
    assert "No plan map: the model has no [COORDINATES]." in html


@pytest.mark.swmm
def test_hgl_profile_labels_every_manhole(capacity):
    import matplotlib.pyplot as plt
    import numpy as np

    from capacitysim.report.html import new_figure
    from capacitysim.report.plan_map import profile_labels

    prof = capacity["doc"]["profile"]
    assert prof and len(prof) > 3
    fig, ax = new_figure()
    try:
        x = [p["distance_ft"] for p in prof]
        profile_labels(ax, x, [p["node"] for p in prof], [p["rim_ft"] for p in prof], [p["crown_ft"] for p in prof])
        labelled = {n for t in ax.texts for n in t.get_text().split(" / ")}
        assert labelled == {p["node"] for p in prof}
        # rims and crowns are marked at every node
        marks = [c for c in ax.collections if len(c.get_offsets()) == len(prof)]
        ys = sorted(tuple(np.round(np.asarray(c.get_offsets())[:, 1], 6)) for c in marks)
        assert tuple(np.round([p["rim_ft"] for p in prof], 6)) in ys and tuple(np.round([p["crown_ft"] for p in prof], 6)) in ys
    finally:
        plt.close(fig)


@pytest.mark.swmm
def test_detention_report_formats(tmp_path, run_cli):
    r = run_cli("detention", MODELS / "sites" / "open-bottom-infiltration.toml", "--report", tmp_path / "d.html")
    assert r.exit_code == 0, r.output
    html = (tmp_path / "d.html").read_text(encoding="utf-8")
    assert check_report(html) == []
    text, tables = read_report(html)
    summary = next(t for t in tables if t["header"] == ["quantity", "value"])
    values = {row[0]: row[1] for row in summary["rows"]}
    assert values["release rate [cfs]"] == "0.2975"  # the same 4 decimals as the steps and the checks
    assert "borings at system location" in text and "yes" in text


def test_spdes_report_formats(tmp_path, run_cli):
    r = run_cli("spdes", "check", "--flows", "sample-wwtp", "--limit-mgd", "0.5", "--added-gpd", "80000", "--watershed",
                "--as-of", "2024-12-31", "--report", tmp_path / "s.html")
    assert r.exit_code in (0, 1), r.output
    assert check_report((tmp_path / "s.html").read_text(encoding="utf-8")) == []


def test_bank_report_formats(tmp_path, run_cli):
    db = tmp_path / "bank.sqlite"
    clerk = "Cal Clerk"

    def bank(*args):
        res = run_cli("bank", "--db", db, "--actor", clerk, *args)
        assert res.exit_code == 0, res.output
        return res

    bank("init", "--administrator", clerk)
    bank("add-administrator", "Cora Checker")  # signs off what the clerk records (program policy signoff_separation)
    bank("add-entity", "Village of Johnson City", "--municipal")
    bank("add-basin", "JC CSO 4")
    bank("deposit", "--basin", "JC CSO 4", "--owner", "Village of Johnson City", "--gpd", "9000", "--project", "P1",
         "--quantification", quantification(tmp_path, "P1", 9000))
    for p in json.loads(bank("pending", "--json").stdout)["pending"]:
        bank("sign-off", p["txn"], "--actor", "Cora Checker")
    bank("report", "--out", tmp_path / "rep")
    html = (tmp_path / "rep" / "report.html").read_text(encoding="utf-8")
    assert check_report(html) == []
    _, tables = read_report(html)
    assert any("balance [gpd]" in t["header"] for t in tables)
    head = json.loads(bank("head", "--json").stdout)
    assert f'datetime="{head["last_at"]}"' in html  # the exact time kept for the record, shown without microseconds


def test_sweep_report_formats(tmp_path, run_cli):
    sweep = tmp_path / "family.toml"
    sweep.write_text('name = "small family"\nkind = "detention"\nsite = "' + str(MODELS / "sites" / "new-building.toml")
                     + '"\n\n[grid]\nsite_area_sf = [10000, 20000]\norifice_diameter_in = [1.5, 3.0]\n', encoding="utf-8")
    r = run_cli("sweep", "run", sweep, "--out", tmp_path / "f.zarr", "--workers", "0", "--no-progress")
    assert r.exit_code in (0, 1), r.output
    r = run_cli("sweep", "summarize", tmp_path / "f.zarr", "--report", tmp_path / "f.html")
    assert r.exit_code == 0, r.output
    html = (tmp_path / "f.html").read_text(encoding="utf-8")
    assert check_report(html) == []
    _, tables = read_report(html)
    grid = next(t for t in tables if t["header"][:2] == ["parameter", "name in the sweep file"])
    assert ["site area [ft2]", "site_area_sf", "10,000, 20,000"] in grid["rows"]


def test_the_check_finds_what_it_looks_for():
    """The checker is not blind: raw names, True/False, microseconds and stray decimals are each reported."""
    bad = ("<table><thead><tr><th>balance_gpd</th><th>peak flow [cfs]</th></tr></thead><tbody>"
           "<tr><td>True</td><td>4.88</td></tr></tbody></table><p>at 2026-11-30 21:53:26.123456</p>")
    problems = check_report(bad)
    assert any("raw field name" in p for p in problems) and any("boolean" in p for p in problems)
    assert any("microseconds" in p for p in problems) and any("decimals" in p for p in problems)
