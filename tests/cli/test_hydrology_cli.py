"""The hydrology commands: tables by default, --json, one-line errors with exit code 2."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from capacitysim import __version__


def test_version(run_cli):
    r = run_cli("--version")
    assert r.exit_code == 0 and __version__ in r.stdout


def test_runoff_json_matches_the_core(run_cli):
    r = run_cli("runoff", "--precip-in", "3", "--cn", "80", "--json")
    assert r.exit_code == 0
    doc = json.loads(r.stdout)
    assert doc["runoff_in"] == pytest.approx(1.25)
    assert doc["s_in"] == pytest.approx(2.5)


def test_runoff_by_cover_lookup(run_cli):
    r = run_cli("runoff", "--precip-in", "2.1", "--cover", "impervious", "--soil", "B", "--cn-table", "BJC 174-19.3")
    assert r.exit_code == 0
    assert "98" in r.stdout and "1.874" in r.stdout


def test_storm_table_and_json(run_cli):
    r = run_cli("storm")
    assert r.exit_code == 0 and "Binghamton" in r.stdout and "2.1 in" in r.stdout
    doc = json.loads(run_cli("storm", "binghamton-1yr-24h", "--json").stdout)
    assert sum(doc["precip_in"]) == pytest.approx(2.1)
    assert len(doc["time_hr"]) == 240


def test_peak_example_4_1(run_cli):
    doc = json.loads(run_cli("peak", "--area-ac", "250", "--cn", "75", "--tc-hr", "1.53", "--precip-in", "6", "--json").stdout)
    assert doc["peak_cfs"] == pytest.approx(345, rel=0.01)


def test_hydrograph_json_conserves_volume(run_cli):
    doc = json.loads(run_cli("hydrograph", "--area-ac", "40", "--cn", "83", "--tc-hr", "0.5", "--json").stdout)
    expected_cf = doc["runoff_in"] * doc["area_mi2"] * 27878400 / 12
    assert doc["volume_cf"] == pytest.approx(expected_cf, rel=1e-9)
    assert max(doc["flow_cfs"]) == pytest.approx(doc["peak_cfs"])


@pytest.mark.parametrize(
    "args, message",
    [
        (["runoff", "--precip-in", "2", "--cn", "120"], "error: cn must be in (0, 100], got 120.0"),
        (["runoff", "--precip-in", "-2", "--cn", "80"], "error: precip_in must be in [0, inf) in, got -2.0"),
        (["runoff", "--precip-in", "2", "--cn", "nan"], "error: cn must not be NaN"),
        (["runoff", "--precip-in", "2", "--cover", "lawn", "--soil", "B"], "error: cover 'lawn' is not in TR-55"),
        (["runoff", "--precip-in", "2"], "error: give --cn, or --cover with --soil"),
        (["peak", "--area-ac", "-3", "--cn", "80", "--tc-hr", "1"], "error: --area-ac must be > 0 acres; got -3"),
        (["peak", "--area-ac", "3", "--area-mi2", "1", "--cn", "80", "--tc-hr", "1"], "error: give the drainage area once"),
        (["hydrograph", "--area-ac", "3", "--cn", "80", "--tc-hr", "1", "--storm", "nope"], "error: storm 'nope': no such file"),
        (["peak", "--area-ac", "nan", "--cn", "80", "--tc-hr", "1"], "error: --area-ac must be > 0 acres; got nan"),
        (["peak", "--area-ac", "3", "--cn", "80", "--tc-hr", "-1"], "error: tc_hr must be in (0, inf) h, got -1.0"),
        (["peak", "--area-ac", "3", "--cn", "80", "--tc-hr", "1", "--pond-swamp-pct", "7"], "error: pond_swamp_pct must be in [0, 5] %, got 7.0"),
        (["peak", "--area-ac", "3", "--cn", "80", "--tc-hr", "1", "--precip-in", "nan"], "error: precip_in must not be NaN"),
        (["hydrograph", "--area-mi2", "1", "--cn", "0", "--tc-hr", "1"], "error: cn must be in (0, 100], got 0.0"),
        (["hydrograph", "--area-mi2", "1", "--cn", "80", "--tc-hr", "1", "--peak-rate-factor", "50"], "error: peak_rate_factor must be in (100, 600], got 50.0"),
        (["runoff", "--precip-in", "2", "--cover", "impervious", "--soil", "E"], "error: soil_group must be one of A, B, C, D; got 'E'"),
        (["runoff", "--precip-in", "2", "--cn", "80", "--ia-ratio", "-0.1"], "error: ia_ratio must be in [0, inf), got -0.1"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(run_cli, args, message):
    r = run_cli(*args)
    assert r.exit_code == 2
    assert r.stderr.strip().splitlines() == [message] or r.stderr.startswith(message)
    assert len(r.stderr.strip().splitlines()) == 1
    assert "Traceback" not in r.stderr + r.stdout


def test_clamping_warning_goes_to_stderr(run_cli):
    r = run_cli("peak", "--area-ac", "100", "--cn", "80", "--tc-hr", "0.05", "--precip-in", "3")
    assert r.exit_code == 0
    assert r.stderr.startswith("warning: Tc outside 0.1-10 h")


def test_console_script_exit_code_without_traceback(tmp_path):
    """The installed entry point, in a real process: exit 2, one line, no traceback."""
    proc = subprocess.run(
        [sys.executable, "-m", "capacitysim", "runoff", "--precip-in", "1", "--cn", "0"],
        capture_output=True, text=True, cwd=tmp_path,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip() == "error: cn must be in (0, 100], got 0.0"


def test_unwritable_output_path_is_one_line(run_cli, tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("x")
    r = run_cli("bench", "run", "--kind", "reference", "--only", "example_6_1", "--out", str(blocked / "sub" / "r.json"))
    assert r.exit_code == 2
    assert len(r.stderr.strip().splitlines()) == 1 and r.stderr.startswith("error: ")
