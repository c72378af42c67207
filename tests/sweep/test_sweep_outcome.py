"""What a sweep concludes (issue 11, failure class 8): `sweep run` exits 1 with the count when any
scenario failed, was untrusted or raised (0 only when all passed); `sweep summarize` prints the
largest passing flow as a lower bound ("≥ 2,000 gpd") when no larger swept flow fails, and otherwise
the bracket with the check that governs it (criterion and element of the first failing scenario's
first failed check), in the text, the JSON and the HTML report. Real SWMM runs of the tiny network
(about 0.5 s each), in process (--workers 0)."""

from __future__ import annotations

import json
import shutil

import pytest

from capacitysim.workflows.sweep import open_results, summarize

from .conftest import TINY

pytestmark = [pytest.mark.swmm]

SWEEP = """name = "outcome"
model = "{tiny}"
storm = "binghamton-1yr-24h"
{head}
[grid]
{grid}
"""
# MH0005 passes 2,000 gpd and fails 10,000 gpd (its basin outlet's peak rises over 1 %)
BRACKET = ("", 'connect_node = ["MH0005"]\nconnect_gpd = [2000, 10000]')
ALL_PASS = ("", 'connect_node = ["MH0005"]\nconnect_gpd = [0, 1000, 2000]')
# three scenarios side by side: a pass, a fail, and one that raises (remediation of the basin of CSO1,
# a node in no basin: errored)
MIXED = ('mode = "zip"', 'connect_node = ["MH0005", "MH0005", "CSO1"]\nconnect_gpd = [2000, 10000, 0]\n'
                        "remediation_fraction = [0.0, 0.0, 0.5]")
# the tiny network's flow-routing continuity error is about 0.4 %: over this limit every run is untrusted
UNTRUSTED = ("[criteria]\ncontinuity_limit_pct = 0.1", 'connect_node = ["MH0005"]\nconnect_gpd = [0, 2000]')


@pytest.fixture(scope="module")
def swept(tmp_path_factory, run_cli):
    """`capacitysim sweep run` of a grid, once per module: (CLI result, store path, sweep file)."""
    cache: dict = {}

    def _run(grid, *extra: str):
        head, lines = grid
        key = (grid, extra)
        if key not in cache:
            folder = tmp_path_factory.mktemp("outcome")
            p = folder / "sweep.toml"
            p.write_text(SWEEP.format(tiny=TINY, head=head, grid=lines), encoding="utf-8")
            out = folder / "r.zarr"
            r = run_cli("sweep", "run", str(p), "--out", str(out), "--workers", "0", "--no-progress", *extra)
            cache[key] = (r, out, p)
        return cache[key]

    return _run


def test_sweep_run_exits_1_with_the_count_when_scenarios_fail(swept, run_cli):
    r, out, sweep_file = swept(MIXED, "--json")
    assert r.exit_code == 1, r.stderr
    assert r.stderr.strip().splitlines()[-1] == "2 of 3 scenarios failed (1 fail, 1 errored)"
    doc = json.loads(r.stdout)  # stdout stays one JSON document
    assert doc["outcome"] == {"scenarios": 3, "pass": 1, "fail": 1, "untrusted": 0, "errored": 1, "missing": 0,
                              "no_verdict": 0, "not_passed": 2}
    assert list(open_results(out).status.values) == ["done", "done", "failed"]
    # a resumed sweep is judged on the whole store, not only on what it computed now (nothing here)
    again = run_cli("sweep", "run", str(sweep_file), "--out", str(out), "--workers", "0", "--no-progress", "--resume")
    assert again.exit_code == 1, again.stderr
    assert "2 of 3 scenarios failed (1 fail, 1 errored)" in again.stderr
    assert "computed now             0" in again.stdout


def test_sweep_run_exits_1_when_every_scenario_is_untrusted(swept):
    r, out, _ = swept(UNTRUSTED)
    assert r.exit_code == 1, r.stderr
    assert r.stderr.strip().splitlines()[-1] == "2 of 2 scenarios failed (2 untrusted)"
    assert set(open_results(out).verdict.values.ravel()) == {"untrusted"}


def test_sweep_run_exits_0_when_every_scenario_passes(swept):
    r, out, _ = swept(ALL_PASS)
    assert r.exit_code == 0, r.stderr
    assert "failed (" not in r.stderr
    assert "pass / fail / untrusted  3 / 0 / 0" in r.stdout


def test_summarize_marks_a_passing_top_of_the_grid_as_a_lower_bound(swept, tmp_path, run_cli):
    _, out, _ = swept(ALL_PASS)
    r = run_cli("sweep", "summarize", str(out), "--report", str(tmp_path / "s.html"))
    assert r.exit_code == 0, r.stderr
    assert "  MH0005: ≥ 2,000 gpd" in r.stdout.splitlines()
    assert "≥ 2,000 gpd" in (tmp_path / "s.html").read_text(encoding="utf-8")
    doc = json.loads(run_cli("sweep", "summarize", str(out), "--json").stdout)
    (row,) = doc["largest_passing"]
    assert row["largest_passing_gpd"] == 2000.0 and row["lower_bound"] is True
    assert row["smallest_failing_gpd"] is None and row["governing_check"] is None


def test_summarize_brackets_the_capacity_and_names_the_governing_check(swept, tmp_path, run_cli):
    from capacitysim.network.basins import basin_of, find_basins
    from capacitysim.network.model import load_model

    r, out, _ = swept(BRACKET)
    assert r.exit_code == 1 and "1 of 2 scenarios failed (1 fail)" in r.stderr
    outlet = basin_of("MH0005", find_basins(load_model(TINY))).outlet
    ds = open_results(out)
    failing = ds.sel(connect_node="MH0005", connect_gpd=10000)
    assert failing.verdict.item() == "fail"
    # the store records the scenario's first failed check, the first of its message
    criterion, element = failing.failed_criterion.item(), failing.failed_element.item()
    assert (criterion, element) == ("peak inflow at the basin outlet within +1 %", outlet)
    assert failing.message.item().startswith(f"{criterion} at {element}: ")
    assert ds.failed_criterion.sel(connect_node="MH0005", connect_gpd=2000).item() == ""

    doc = json.loads(run_cli("sweep", "summarize", str(out), "--json").stdout)
    (mh,) = doc["largest_passing"]
    assert mh["largest_passing_gpd"] == 2000.0 and mh["smallest_failing_gpd"] == 10000.0 and mh["lower_bound"] is False
    assert mh["governing_check"] == {"criterion": criterion, "element": outlet, "message": failing.message.item()}

    r = run_cli("sweep", "summarize", str(out), "--report", str(tmp_path / "s.html"))
    assert r.exit_code == 0, r.stderr
    line = f"  MH0005: 2,000 gpd (10,000 gpd fails); governed by: {criterion} at {outlet}"
    assert line in r.stdout.splitlines()
    html = (tmp_path / "s.html").read_text(encoding="utf-8")
    assert "2,000 gpd (10,000 gpd fails)" in html and f"{criterion} at {outlet}" in html


def test_summarize_a_store_without_recorded_checks_names_the_message(swept, tmp_path):
    """A store of an older capacitysim (no failed_criterion / failed_element): the governing check is
    the failing scenario's message."""
    _, out, _ = swept(BRACKET)
    old = tmp_path / "old.zarr"
    shutil.copytree(out, old)
    for name in ("failed_criterion", "failed_element"):
        shutil.rmtree(old / name)
    ds = open_results(old)
    assert "failed_criterion" not in ds
    (row,) = summarize(ds)["largest_passing"]
    g = row["governing_check"]
    assert g["criterion"] is None and g["element"] is None
    assert g["message"] == ds.message.sel(connect_node="MH0005", connect_gpd=10000).item()
