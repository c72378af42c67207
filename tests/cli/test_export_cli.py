"""``--export DIR`` on ``detention`` and ``sweep summarize``: real designs, a real SWMM sweep, files read back."""

from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from capacitysim.io.bundled import model_path
from capacitysim.network.model import parse_inp
from tests.report.report_text import BOOL_WORD, RAW_KEY, read_report

SITES = Path(model_path("synthetic-50")).parent / "sites"


def _csv(path):
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _manifest_ok(folder: Path) -> dict:
    man = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    for f in man["files"]:
        assert hashlib.sha256((folder / f["name"]).read_bytes()).hexdigest() == f["sha256"], f["name"]
    assert sorted(p.name for p in folder.iterdir()) == sorted([f["name"] for f in man["files"]] + ["manifest.json"])
    return man


@pytest.mark.swmm
def test_detention_export_design_steps_hydrographs_netcdf(run_cli, tmp_path):
    out = tmp_path / "det"
    r = run_cli("detention", str(SITES / "open-bottom-infiltration.toml"), "--export", str(out), "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["export"]["files"] == ["design.csv", "hydrographs.csv", "manifest.json", "results.nc", "steps.csv"]
    _manifest_ok(out)
    design = {row["quantity"]: row for row in _csv(out / "design.csv")}
    # every number of the document, with its unit
    assert float(design["release_rate_cfs"]["value"]) == doc["release_rate_cfs"] and design["release_rate_cfs"]["unit"] == "cfs"
    assert design["required_volume_cf"]["unit"] == "ft3" and design["required_volume_cf"]["label"] == "required volume [ft3]"
    hyd = _csv(out / "hydrographs.csv")
    assert list(hyd[0]) == ["time [min]", "inflow [cfs]", "sewer [cfs]", "stage [ft]", "storage [ft3]", "losses [cfs]"]
    # the routed peak release is the document's peak outflow; the volumes close (inflow = release + losses + stored)
    assert max(float(h["sewer [cfs]"]) for h in hyd) == pytest.approx(doc["peak_outflow_cfs"], rel=1e-9)
    ds = xr.open_dataset(out / "results.nc")
    try:
        assert ds.inflow_cfs.attrs["units"] == "ft3 s-1" and ds.stage_ft.attrs["units"] == "ft"
        assert ds.time_min.attrs["units"] == "min" and ds.sizes["time_min"] == len(hyd)
        dt_s = float(np.diff(ds.time_min.values[:2])[0]) * 60.0
        v_in = np.trapezoid(ds.inflow_cfs.values) * dt_s
        v_out = np.trapezoid(ds.sewer_cfs.values + ds.losses_cfs.values) * dt_s + float(ds.storage_cf.values[-1])
        assert v_out == pytest.approx(v_in, rel=1e-3)
        assert float(ds.release_rate_cfs) == doc["release_rate_cfs"]
    finally:
        ds.close()
    steps = _csv(out / "steps.csv")
    assert len(steps) >= 8 and all(s["citation"] for s in steps)


@pytest.fixture(scope="module")
def swmm_sweep(tmp_path_factory, run_cli):
    tmp = tmp_path_factory.mktemp("sweep")
    (tmp / "tiny.toml").write_text('name = "tiny"\nkind = "swmm"\nmodel = "synthetic-50"\nstorm = "binghamton-1yr-24h"\n\n'
                                   '[grid]\nconnect_node = ["MH0003", "MH0017"]\nconnect_gpd = [10000, 200000]\n')
    r = run_cli("sweep", "run", tmp / "tiny.toml", "--out", tmp / "tiny.zarr", "--workers", "0", "--no-progress")
    assert r.exit_code in (0, 1), r.output
    r = run_cli("sweep", "summarize", tmp / "tiny.zarr", "--export", tmp / "exp", "--report", tmp / "tiny.html", "--json")
    assert r.exit_code == 0, r.output
    return {"tmp": tmp, "out": tmp / "exp", "summary": json.loads(r.stdout)}


@pytest.mark.swmm
def test_sweep_export_one_row_per_scenario_and_per_node(swmm_sweep):
    out, s = swmm_sweep["out"], swmm_sweep["summary"]
    man = _manifest_ok(out)
    assert man["grid_mode"] == "product" and man["scenarios"] == 4
    rows = _csv(out / "scenarios.csv")
    assert len(rows) == s["scenarios"] == 4
    assert {(r["connect_node"], float(r["connect [gpd]"])) for r in rows} == {(n, g) for n in ("MH0003", "MH0017")
                                                                              for g in (10000.0, 200000.0)}
    assert sum(r["verdict"] == "pass" for r in rows) == s["pass"] and sum(r["verdict"] == "fail" for r in rows) == s["fail"]
    assert "outlet_peak_inflow[PLANT] [cfs]" in rows[0] and "outfall_volume[CSO1] [ft3]" in rows[0]
    nodes = _csv(out / "nodes.csv")
    assert [n["id"] for n in nodes] == [r["connect_node"] for r in s["largest_passing"]]
    for n, r in zip(nodes, s["largest_passing"]):
        assert (n["largest_passing [gpd]"] or None) == (None if r["largest_passing_gpd"] is None else str(float(r["largest_passing_gpd"])))
        if r.get("governing_check"):
            assert n["governing_check_criterion"] == r["governing_check"]["criterion"]
    g = json.loads((out / "network.geojson").read_text(encoding="utf-8"))
    coords = {r.tokens[0]: [float(r.tokens[1]), float(r.tokens[2])] for r in parse_inp(model_path("synthetic-50")).rows("COORDINATES")}
    assert [f["geometry"]["type"] for f in g["features"]] == ["Point", "Point"]
    for f in g["features"]:
        assert f["geometry"]["coordinates"] == coords[f["properties"]["id"]]
        assert "largest_passing [gpd]" in f["properties"]
    assert "crs" not in g, "synthetic-50 states no CRS"
    ds = xr.open_dataset(out / "results.nc")
    try:
        assert ds.plant_peak_inflow_cfs.attrs["units"] == "ft3 s-1" and ds.max_q_over_qfull.attrs["units"] == "1"
        assert ds.attrs["grid_mode_attr" if "grid_mode_attr" in ds.attrs else "grid_mode"] == "product"
        assert "/" not in ds.attrs["inputs"], "file names only, no machine paths"
        assert sorted(ds.verdict.values.ravel().tolist()) == sorted(r["verdict"] for r in rows)
    finally:
        ds.close()


@pytest.mark.swmm
def test_sweep_report_prints_labels_not_field_names(swmm_sweep):
    text, tables = read_report((swmm_sweep["tmp"] / "tiny.html").read_text(encoding="utf-8"))
    assert not BOOL_WORD.search(text)
    labels = [h for t in tables for h in t["header"]] + [r[0] for t in tables for r in t["rows"] if r]
    assert not [x for x in labels if RAW_KEY.search(x)]
    crit = text[text.index("Verdict criteria"):]
    assert "freeboard [ft] = 1.000" in crit and "max d/D = 0.800" in crit and not RAW_KEY.search(crit)


@pytest.mark.swmm
def test_sweep_export_refuses_the_store_itself(swmm_sweep, run_cli):
    r = run_cli("sweep", "summarize", str(swmm_sweep["tmp"] / "tiny.zarr"), "--export", str(swmm_sweep["tmp"] / "tiny.zarr" / "x"))
    assert r.exit_code == 2 and "--export" in r.output


@pytest.mark.parametrize("mode", ["product", "zip"])
def test_detention_sweep_export_rows_are_scenarios(run_cli, tmp_path, mode):
    """A vectorized detention sweep (no network): scenarios.csv and results.nc only, one row per scenario."""
    grid = ("site_area_sf = [10000, 20000]\norifice_diameter_in = [1.5, 3.0]\n" if mode == "product"
            else "site_area_sf = [10000, 20000, 30000]\norifice_diameter_in = [1.5, 3.0, 2.0]\n")
    sweep = tmp_path / "family.toml"
    sweep.write_text(f'name = "family"\nkind = "detention"\nmode = "{mode}"\nsite = "{SITES / "new-building.toml"}"\n\n[grid]\n{grid}',
                     encoding="utf-8")
    r = run_cli("sweep", "run", str(sweep), "--out", str(tmp_path / "f.zarr"), "--workers", "0", "--no-progress")
    assert r.exit_code in (0, 1), r.output
    r = run_cli("sweep", "summarize", str(tmp_path / "f.zarr"), "--export", str(tmp_path / "exp"), "--json")
    assert r.exit_code == 0, r.output
    s = json.loads(r.stdout)
    assert s["export"]["files"] == ["manifest.json", "results.nc", "scenarios.csv"]
    _manifest_ok(tmp_path / "exp")
    rows = _csv(tmp_path / "exp" / "scenarios.csv")
    assert len(rows) == s["scenarios"] == (4 if mode == "product" else 3)
    pairs = [(float(r["site_area [ft2]"]), float(r["orifice_diameter [in]"])) for r in rows]
    expect = ([(a, d) for a in (10000.0, 20000.0) for d in (1.5, 3.0)] if mode == "product"
              else [(10000.0, 1.5), (20000.0, 3.0), (30000.0, 2.0)])
    assert pairs == expect
    assert sum(r["verdict"] == "pass" for r in rows) == s["pass"]
    ds = xr.open_dataset(tmp_path / "exp" / "results.nc")
    try:
        assert ds.required_volume_cf.attrs["units"] == "ft3" and ds.release_rate_cfs.attrs["units"] == "ft3 s-1"
        vol = np.asarray(ds.required_volume_cf.values).ravel()
        assert sorted(vol.tolist()) == pytest.approx(sorted(float(r["required_volume [ft3]"]) for r in rows))
    finally:
        ds.close()
