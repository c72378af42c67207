"""capacitysim detention: JSON keys, report, and bad input as exit 2 with one line."""

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SITES = ROOT / "models" / "sites"
BASE = (SITES / "new-building.toml").read_text()


def test_json_keys(run_cli, tmp_path):
    r = run_cli("detention", str(SITES / "new-building.toml"), "--json", "--report", str(tmp_path / "r.html"))
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    for key in ("allowable_flow_cfs", "release_rate_cfs", "required_volume_cf", "orifice_diameter_in",
                "peak_outflow_cfs", "max_depth_ft", "swmm_peak_outflow_cfs"):
        assert isinstance(out[key], float), key
    assert out["release_rate_cfs"] == pytest.approx(0.25)
    assert out["peak_outflow_cfs"] <= 0.25
    assert abs(out["swmm_peak_outflow_cfs"] - out["peak_outflow_cfs"]) <= 0.02 * out["peak_outflow_cfs"]
    assert (tmp_path / "r.html").stat().st_size > 10000


def test_table_output(run_cli):
    r = run_cli("detention", str(SITES / "alteration.toml"), "--no-swmm")
    assert r.exit_code == 0
    assert "release rate" in r.stdout and "PASS" in r.stdout


OPEN = (SITES / "open-bottom-infiltration.toml").read_text()


@pytest.mark.parametrize(
    "text, needle",
    [
        (BASE.replace("roof = 14000", "roof = -14000"), "roof must be > 0"),
        (BASE.replace("grass = 2000", "grass = 0"), "grass must be > 0"),
        (BASE.replace("site_area_sf = 20000", "site_area_sf = 0"), "site_area_sf must be > 0"),
        (BASE.replace("roof = 14000", "roof = 13000"), "sum to 19,000 ft2 but site_area_sf is 20,000"),
        (BASE.replace("drainage_plan_c = 0.60", "drainage_plan_c = 1.2"), "drainage_plan_c must be <= 1"),
        (BASE.replace("drainage_plan_c = 0.60", "drainage_plan_c = -0.1"), "drainage_plan_c must be > 0"),
        (BASE.replace("roof = 14000", "lawn = 14000"), "unknown surface type 'lawn'"),
        (OPEN.replace('soil_borings = ["B-3", "B-4"]\n', ""), "missing: soil_borings"),
        (OPEN.replace('permeability_test = "in-situ"\n', ""), "missing: permeability_test"),
        (BASE + '\n[infiltration]\ninfiltration_rate_in_hr = 1.0\n', "only for open-bottom systems"),
    ],
)
def test_bad_input_exit_2_one_line(run_cli, tmp_path, text, needle):
    p = tmp_path / "bad.toml"
    p.write_text(text)
    r = run_cli("detention", str(p), "--no-swmm")
    assert r.exit_code == 2, r.output
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert needle in lines[0]


def test_laboratory_test_refused_exit_3(run_cli, tmp_path):
    p = tmp_path / "lab.toml"
    p.write_text(OPEN.replace('"in-situ"', '"laboratory"'))
    r = run_cli("detention", str(p), "--no-swmm")
    assert r.exit_code == 3
    assert "in situ" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_missing_file_and_unknown_rule(run_cli, tmp_path):
    r = run_cli("detention", str(tmp_path / "nope.toml"))
    assert r.exit_code == 2 and "file not found" in r.stderr
    r = run_cli("detention", str(SITES / "new-building.toml"), "--rule", "nyc-1999")
    assert r.exit_code == 2 and "bundled" in r.stderr


ALT = (SITES / "alteration.toml").read_text()


@pytest.mark.parametrize(
    "text, needle",
    [
        (ALT.replace("new_points_of_discharge = 0", "new_points_of_discharge = 1"), "no new points of discharge are permitted"),
        (BASE.replace('receiving_sewer = "combined"', 'receiving_sewer = "storm"'), "connections to combined sewers"),
    ],
)
def test_rule_refusals_exit_3(run_cli, tmp_path, text, needle):
    p = tmp_path / "refused.toml"
    p.write_text(text)
    r = run_cli("detention", str(p), "--no-swmm")
    assert r.exit_code == 3, r.output
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and "31-03" in lines[0]


@pytest.mark.parametrize(
    "text, needle",
    [
        (ALT.replace("new_points_of_discharge = 0", "new_points_of_discharge = -1"), "new_points_of_discharge must be a whole number"),
        (BASE.replace('receiving_sewer = "combined"', 'receiving_sewer = "csos"'), "receiving_sewer must be one of"),
    ],
)
def test_bad_site_keys_exit_2(run_cli, tmp_path, text, needle):
    p = tmp_path / "bad.toml"
    p.write_text(text)
    r = run_cli("detention", str(p), "--no-swmm")
    assert r.exit_code == 2 and needle in r.stderr


def test_unstated_points_of_discharge_is_a_condition_not_a_pass(run_cli, tmp_path):
    p = tmp_path / "alt.toml"
    p.write_text(ALT.replace("new_points_of_discharge = 0", ""))
    r = run_cli("detention", str(p), "--no-swmm", "--json")
    assert r.exit_code == 0
    out = json.loads(r.stdout)
    row = next(c for c in out["checks"] if c["check"] == "New points of discharge")
    assert row["result"] == "confirm"
    assert any("no new points of discharge" in c for c in out["conditions"])
