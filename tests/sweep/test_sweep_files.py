"""Sweep files: the grid as written, product and zip modes, and every bad input named with key and value."""

from __future__ import annotations

import numpy as np
import pytest

from capacitysim.errors import DataFileError
from capacitysim.io.sweep_files import load_sweep

SWMM = """
model = "@TINY@"
[grid]
connect_node = ["MH0005", "MH0007"]
connect_gpd = [0, 10000, 50000]
remediation_fraction = [0.0, 0.25]
"""


@pytest.mark.swmm
def test_product_grid_is_c_order_over_the_file_order(write_sweep):
    s = load_sweep(write_sweep(SWMM))
    assert s.kind == "swmm" and s.mode == "product"
    assert s.dims == ["connect_node", "connect_gpd", "remediation_fraction"]
    assert s.shape == (2, 3, 2) and s.n_scenarios == 12
    # scenario i is np.unravel_index(i, shape) over the lists, last parameter fastest
    assert s.scenario(0) == {"connect_node": "MH0005", "connect_gpd": 0.0, "remediation_fraction": 0.0}
    assert s.scenario(1) == {"connect_node": "MH0005", "connect_gpd": 0.0, "remediation_fraction": 0.25}
    assert s.scenario(11) == {"connect_node": "MH0007", "connect_gpd": 50000.0, "remediation_fraction": 0.25}
    cols = s.columns(3, 9)
    for j, i in enumerate(range(3, 9)):
        assert {k: v[j] for k, v in cols.items()} == s.scenario(i)


@pytest.mark.swmm
def test_zip_mode_pairs_values(write_sweep):
    s = load_sweep(write_sweep(SWMM.replace("[grid]", 'mode = "zip"\n[grid]').replace('"MH0005", "MH0007"', '"MH0005", "MH0007", "MH0005"')
                               .replace("remediation_fraction = [0.0, 0.25]", "remediation_fraction = [0.0, 0.25, 0.5]")))
    assert s.dims == ["scenario"] and s.n_scenarios == 3
    assert s.scenario(2) == {"connect_node": "MH0005", "connect_gpd": 50000.0, "remediation_fraction": 0.5}


def test_detention_and_runoff_kinds(write_sweep):
    d = load_sweep(write_sweep('site = "@ROOT@/models/sites/new-building.toml"\n[grid]\nlength_ft = [20, 40]\norifice_diameter_in = [1.5, 2.0, 3.0]\n'))
    assert d.kind == "detention" and d.shape == (2, 3)
    r = load_sweep(write_sweep('kind = "runoff"\n[grid]\ncn = [60, 80]\nstorm_depth_in = [2.1, 3.0]\n'))
    assert r.kind == "runoff" and r.storm is not None and r.storm.depth_in == 2.1


@pytest.mark.swmm
@pytest.mark.parametrize(
    "text, expected",
    [
        (SWMM.replace("connect_gpd", "connect_flow"), "'connect_flow' is not a parameter of swmm sweeps"),
        (SWMM.replace("[0, 10000, 50000]", "[0, -5, 50000]"), "connect_gpd = -5 is outside [0, inf)"),
        (SWMM.replace("[0.0, 0.25]", "[0.0, 1.0]"), "remediation_fraction = 1.0 is outside [0, 1)"),
        (SWMM.replace("[0.0, 0.25]", '[0.0, "a"]'), "remediation_fraction values must be finite numbers"),
        (SWMM.replace("[0.0, 0.25]", "[]"), "remediation_fraction must be a non-empty list"),
        (SWMM.replace("[0.0, 0.25]", "0.25"), "remediation_fraction must be a non-empty list of values; got 0.25"),
        (SWMM.replace("[0, 10000, 50000]", "[0, 10000, 10000]"), "connect_gpd lists 10000.0 twice"),
        (SWMM.replace('"MH0007"', '"MH9999"'), "connect_node 'MH9999' is not a node of tiny.inp"),
        (SWMM.replace("[grid]", 'mode = "zip"\n[grid]'), 'mode = "zip" needs lists of one length'),
        (SWMM.replace("[grid]", 'mode = "latin"\n[grid]'), "mode must be one of product, zip; got 'latin'"),
        (SWMM.replace("[grid]", 'kind = "pumps"\n[grid]'), "kind must be one of swmm, detention, runoff; got 'pumps'"),
        (SWMM.replace("[grid]", "[criteria]\nfreeboard = 2\n[grid]"), "unknown key(s) freeboard"),
        (SWMM.replace("[grid]", "[criteria]\nfreeboard_ft = -2\n[grid]"), "criteria.freeboard_ft must be in [0, inf), got -2"),
        (SWMM.replace("[grid]", "chunk_size = 0\n[grid]"), "chunk_size must be an integer >= 1; got 0"),
        (SWMM.replace('model = "@TINY@"', 'model = "nowhere.inp"'), "model = 'nowhere.inp' not found"),
        ('model = "@TINY@"\n[grid]\nconnect_gpd = [1000]\n', "need connect_node"),
        ('model = "@TINY@"\n', "missing key(s) grid"),
        ('site = "@ROOT@/models/sites/new-building.toml"\n[grid]\nroof_area_sf = [1000]\n', "roof_area_sf is not a dimension of the site's tank"),
        ('site = "@ROOT@/models/sites/new-building.toml"\n[grid]\ncn = [70]\n', 'need a site with [design] hydrograph = "scs"'),
        ('site = "@ROOT@/models/sites/new-building.toml"\n[grid]\norifice_diameter_in = [0]\n', "orifice_diameter_in = 0 is outside (0, inf)"),
    ],
)
def test_bad_sweep_files_name_key_and_value(write_sweep, text, expected):
    with pytest.raises(DataFileError) as exc:
        load_sweep(write_sweep(text))
    assert expected in str(exc.value)
    assert "sweep.toml" in str(exc.value) or "tiny.inp" in str(exc.value)


def test_cli_bad_sweep_file_exits_2_with_one_line(write_sweep, run_cli, tmp_path):
    r = run_cli("sweep", "run", str(write_sweep(SWMM.replace("[0.0, 0.25]", "[0.0, 2]"))), "--out", str(tmp_path / "r.zarr"))
    assert r.exit_code == 2
    assert r.stderr.count("\n") == 1 and "remediation_fraction = 2 is outside [0, 1)" in r.stderr
    assert not (tmp_path / "r.zarr").exists()


@pytest.mark.swmm
def test_bundled_example_sweeps_load():
    from pathlib import Path

    folder = Path(__file__).resolve().parents[2] / "models" / "sweeps"
    files = sorted(folder.glob("*.toml"))
    assert len(files) >= 2
    kinds = {load_sweep(f).kind for f in files}
    assert {"swmm", "detention"} <= kinds
    for f in files:
        assert load_sweep(f).n_scenarios >= 1 and np.isfinite(load_sweep(f).n_scenarios)


@pytest.mark.swmm
def test_a_bundled_model_name_is_a_sweep_model(write_sweep):
    """model = "synthetic-50" names the bundled model, as --model synthetic-50 does."""
    spec = load_sweep(write_sweep('model = "synthetic-50"\n[grid]\nconnect_node = ["MH0017"]\nconnect_gpd = [0, 1000]\n'))
    assert spec.model.name == "synthetic-50.inp" and spec.model.is_file()
