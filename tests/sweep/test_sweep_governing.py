"""The check that governs each scenario of a sweep, the scenario table and the stores' consolidated metadata
(issue 28, item 6).

A SWMM scenario's governing check is the failed check that used the most of its margin (headroom's
``margin_ratios``), stored as ``governing_*`` beside the first failed check (``failed_*``, unchanged); the
summary's scenario table shows it in the text, ``--json`` and the HTML report, in the columns of
``SCENARIO_COLUMNS`` (docs/workflows/sweeps.md lists them). A store written before holds no governing check:
it is summarised without, and says so.
"""

from __future__ import annotations

import json
import math
import shutil
import warnings

import pytest
import xarray as xr
import zarr

from capacitysim.io.sweep_files import load_sweep
from capacitysim.io.sweep_store import GOVERNING_VARS
from capacitysim.report.format import label
from capacitysim.report.sweep import write_summary_report
from capacitysim.rules.capacity import LIMIT_KINDS
from capacitysim.rules.verdict import Check
from capacitysim.workflows.headroom.margins import check_key
from capacitysim.workflows.sweep import network_tasks, open_results, run_sweep, summarize
from capacitysim.workflows.sweep.network_tasks import governing_check, ratio_key
from capacitysim.workflows.sweep.summary import (
    GOVERNING_NOT_RECORDED,
    GOVERNING_RECORDED,
    SCENARIO_COLUMNS,
    scenario_table_lines,
)

from .conftest import ROOT, TINY

# two scenarios (zip): 150,000 gpd at MH0005 fails the basin outlet's peak first and most; 1,500,000 gpd at
# MH0003 fails surcharge at MH0003 first, but the CSO volume at CSO1 uses far more of its margin
GOV = """
name = "governing"
model = "@TINY@"
storm = "binghamton-1yr-24h"
mode = "zip"
[grid]
connect_node = ["MH0005", "MH0003"]
connect_gpd = [150000, 1500000]
"""


def _check(criterion, element, after=2.0, limit=1.0):
    return Check(criterion, element, 0.5, after, limit, "cfs", False)


def test_governing_check_is_the_failed_check_with_the_largest_ratio():
    first = _check("no new surcharge within 1 ft of the rim", "MH0003")
    cso = _check("CSO volume not increased beyond tolerance", "CSO1", after=9.0, limit=5.0)
    run = _check("flow routing continuity error within 10 %", "after run")
    ratios = {check_key(first): 1.5, check_key(cso): 20.0}
    g = governing_check([first, run, cso], ratios)
    assert (g["governing_criterion"], g["governing_element"], g["governing_ratio"]) == (cso.criterion, "CSO1", 20.0)
    assert (g["governing_value"], g["governing_limit"], g["governing_unit"]) == (9.0, 5.0, "cfs")
    # equal ratios: the first in the judgement's order; only checks without a ratio: the first, ratio NaN
    assert governing_check([first, cso], {check_key(first): 3.0, check_key(cso): 3.0})["governing_element"] == "MH0003"
    g = governing_check([run, first], {})
    assert g["governing_element"] == "after run" and math.isnan(g["governing_ratio"])
    assert governing_check([], {})["governing_criterion"] == ""


@pytest.mark.parametrize("criterion", [
    "no new or increased flooding", "no new surcharge within 1 ft of the rim", "no new pressure within 1 ft of the limit",
    "storage max depth <= 0.9 of full depth", "max d/D <= 0.8 (gravity sewers)", "force main max q/Qfull <= 1",
    "pump time off its curve <= 5 %", "peak inflow at the basin outlet within +1 %", "peak inflow at the plant within +1 %",
    "CSO volume not increased beyond tolerance", "flow routing continuity error within 10 %", "injected volume as intended"])
def test_the_sweeps_ratio_key_is_headrooms(criterion):
    ch = _check(criterion, "X1")
    assert ratio_key(ch) == check_key(ch)
    assert ratio_key(ch) is None or ratio_key(ch).split("|")[0] in LIMIT_KINDS


def test_columns_are_documented_in_their_order():
    doc = (ROOT / "docs" / "workflows" / "sweeps.md").read_text(encoding="utf-8")
    assert ", ".join(f"`{c}`" for c in SCENARIO_COLUMNS) in doc
    assert set(GOVERNING_VARS) <= set(SCENARIO_COLUMNS)


def test_a_fresh_store_opens_in_xarray_without_a_warning(write_sweep, tmp_path):
    spec = load_sweep(write_sweep('kind = "runoff"\n[grid]\ncn = [70, 85]\ntc_min = [15, 60]\n'))
    run_sweep(spec, tmp_path / "q.zarr", workers=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ds = xr.open_zarr(str(tmp_path / "q.zarr"))
        assert int(ds.status.sum()) == 4  # the data written after the metadata was consolidated
    s = summarize(open_results(tmp_path / "q.zarr"))
    assert s["scenario_table"]["columns"] == ["cn", "tc_min", *SCENARIO_COLUMNS]
    assert s["scenario_table"]["governing"] == GOVERNING_NOT_RECORDED and len(s["scenario_table"]["rows"]) == 4


@pytest.fixture(scope="module")
def governed(tmp_path_factory):
    """The two-scenario SWMM sweep, run in this process, with every governing_check call's failed checks and
    margin ratios recorded."""
    folder = tmp_path_factory.mktemp("gov")
    p = folder / "sweep.toml"
    p.write_text(GOV.replace("@TINY@", str(TINY)))
    calls = []
    real = network_tasks.governing_check

    def spy(failed, ratios):
        calls.append((list(failed), dict(ratios)))
        return real(failed, ratios)

    mp = pytest.MonkeyPatch()
    mp.setattr(network_tasks, "governing_check", spy)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            run_sweep(load_sweep(p), folder / "r.zarr", workers=0)
            xr.open_zarr(str(folder / "r.zarr"))  # consolidated metadata: no warning
    finally:
        mp.undo()
    return folder / "r.zarr", calls


@pytest.mark.swmm
def test_governing_check_is_the_failed_check_using_most_of_its_margin(governed):
    path, calls = governed
    ds = open_results(path)
    assert list(ds.status.values) == ["done", "done"] and list(ds.verdict.values) == ["fail", "fail"]
    assert len(calls) == 2
    for i, (failed, ratios) in enumerate(calls):
        keyed = [ch for ch in failed if check_key(ch) in ratios]
        best = max(keyed, key=lambda ch: ratios[check_key(ch)])
        assert ds.governing_criterion.values[i] == best.criterion
        assert ds.governing_element.values[i] == best.element
        assert float(ds.governing_ratio.values[i]) == pytest.approx(ratios[check_key(best)]) and ratios[check_key(best)] > 1
        assert float(ds.governing_value.values[i]) == pytest.approx(float(best.after))
        # the first failed check is kept as it was
        assert (ds.failed_criterion.values[i], ds.failed_element.values[i]) == (failed[0].criterion, failed[0].element)
    # at MH0003 with 1,500,000 gpd the first failed check is not the one that governs
    assert ds.failed_element.values[1] != ds.governing_element.values[1]
    assert ds.governing_element.values[1] == "CSO1"


@pytest.mark.swmm
def test_scenario_table_in_text_json_and_report(governed, run_cli, tmp_path):
    path, _ = governed
    ds = open_results(path)
    r = run_cli("sweep", "summarize", path, "--json")
    assert r.exit_code == 0, r.output
    table = json.loads(r.stdout)["scenario_table"]
    assert table["columns"] == ["connect_node", "connect_gpd", *SCENARIO_COLUMNS]
    assert table["governing"] == GOVERNING_RECORDED
    rows = [dict(zip(table["columns"], row)) for row in table["rows"]]
    assert [(x["connect_node"], x["connect_gpd"]) for x in rows] == [("MH0005", 150000), ("MH0003", 1500000)]
    for i, x in enumerate(rows):
        assert x["governing_criterion"] == ds.governing_criterion.values[i]
        assert x["governing_element"] == ds.governing_element.values[i]
        assert x["governing_ratio"] == pytest.approx(float(ds.governing_ratio.values[i]))
        assert x["failed_element"] == ds.failed_element.values[i]

    text = run_cli("sweep", "summarize", path).stdout
    lines = text.splitlines()
    head = next(i for i, ln in enumerate(lines) if ln.strip().startswith("connect_node"))
    assert lines[head].split() == ["connect_node", "connect_gpd", *SCENARIO_COLUMNS]
    assert "CSO1" in lines[head + 2] and ds.governing_criterion.values[1] in lines[head + 2]

    html = write_summary_report(ds, tmp_path / "r.html").read_text()
    assert "Scenarios and the check that governs each" in html
    cols = [html.index(f">{label(c)}<") for c in ("status", "governing_criterion", "governing_ratio", "failed_element")]
    assert list(cols) == sorted(cols)
    assert str(ds.governing_criterion.values[1]) in html
    # the report from the document alone is the same table
    doc = tmp_path / "s.json"
    doc.write_text(r.stdout)
    r2 = run_cli("report", doc, "--out", tmp_path / "d.html")
    assert r2.exit_code == 0, r2.output
    assert "Scenarios and the check that governs each" in (tmp_path / "d.html").read_text()


@pytest.mark.swmm
def test_a_store_written_before_is_summarised_without_the_governing_check(governed, run_cli, tmp_path):
    path, _ = governed
    old = tmp_path / "old.zarr"
    shutil.copytree(path, old)
    g = zarr.open_group(str(old), mode="r+", use_consolidated=False)
    for name in GOVERNING_VARS:
        del g[name]
    (old / ".zmetadata").unlink()  # as the stores were written before: no consolidated index
    ds = open_results(old)
    assert not any(name in ds for name in GOVERNING_VARS)
    s = summarize(ds)
    table = s["scenario_table"]
    assert table["columns"] == ["connect_node", "connect_gpd", *SCENARIO_COLUMNS]
    assert table["governing"] == GOVERNING_NOT_RECORDED
    rows = [dict(zip(table["columns"], row)) for row in table["rows"]]
    assert all(x["governing_criterion"] is None and x["governing_ratio"] is None for x in rows)
    assert [x["failed_element"] for x in rows] == list(ds.failed_element.values)
    r = run_cli("sweep", "summarize", old)
    assert r.exit_code == 0 and "not recorded" in r.stdout
    assert write_summary_report(ds, tmp_path / "o.html").read_text().count("not recorded") >= 1
    assert scenario_table_lines(table)[0].split()[:2] == ["connect_node", "connect_gpd"]
