"""The hydrology commands: tables by default, --json, one-line errors with exit code 2."""

from __future__ import annotations

import json
import resource
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
        (["runoff", "--precip-in", "-2", "--cn", "80"], "error: precip_in must be in [0, 200] in, got -2.0"),
        (["runoff", "--precip-in", "2", "--cn", "nan"], "error: cn must not be NaN"),
        (["runoff", "--precip-in", "2", "--cover", "lawn", "--soil", "B"], "error: cover 'lawn' is not in TR-55"),
        (["runoff", "--precip-in", "2"], "error: give --cn, or --cover with --soil"),
        (["peak", "--area-ac", "-3", "--cn", "80", "--tc-hr", "1"], "error: --area-ac must be > 0 acres and <= 6,400,000 acres; got -3"),
        (["peak", "--area-ac", "3", "--area-mi2", "1", "--cn", "80", "--tc-hr", "1"], "error: give the drainage area once"),
        (["hydrograph", "--area-ac", "3", "--cn", "80", "--tc-hr", "1", "--storm", "nope"], "error: storm 'nope': no such file"),
        (["peak", "--area-ac", "nan", "--cn", "80", "--tc-hr", "1"], "error: --area-ac must be > 0 acres and <= 6,400,000 acres; got nan"),
        (["peak", "--area-ac", "3", "--cn", "80", "--tc-hr", "-1"], "error: tc_hr must be in (0, 240] h, got -1.0"),
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


# --- issue 12: no runaway, no traceback, no nonsense accepted ----------------------------------------
#: Address space of a command run in a child [bytes]: 2 GiB is plenty for any real hydrograph; a
#: runaway allocation fails there instead of taking the machine down.
CHILD_MEMORY_BYTES = 2 * 1024**3
CHILD_TIMEOUT_S = 120


def _run_capped(*args: str, cwd=None) -> subprocess.CompletedProcess:
    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (CHILD_MEMORY_BYTES, CHILD_MEMORY_BYTES))

    return subprocess.run([sys.executable, "-m", "capacitysim", *args], capture_output=True, text=True,
                          timeout=CHILD_TIMEOUT_S, preexec_fn=cap, cwd=cwd)


def _one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), stderr
    return lines[0]


@pytest.mark.parametrize(
    "args, needle",
    [
        (["hydrograph", "--area-ac", "40", "--cn", "80", "--tc-hr", "1e9"], "tc_hr must be in (0, 240] h, got 1000000000.0"),
        (["hydrograph", "--area-ac", "40", "--cn", "80", "--tc-hr", "240", "--peak-rate-factor", "100.001"], None),
    ],
)
def test_hydrograph_runaway_tc_refused_before_allocating(tmp_path, args, needle):
    """--tc-hr 1e9 asked for 224 GiB; now one line and exit 2 in a child capped at 2 GiB."""
    r = _run_capped(*args, cwd=tmp_path)
    if needle is None:  # the longest Tc allowed, with the longest recession: runs within the cap
        assert r.returncode == 0, r.stderr[-2000:]
        return
    assert r.returncode == 2, r.stderr[-2000:]
    assert needle in _one_line(r.stderr)


def test_storm_file_with_a_nanosecond_step_refused_before_allocating(tmp_path):
    """dt_min = 1e-9 asked for 1.44 x 10^12 steps; now one line naming the step and the limit."""
    p = tmp_path / "fine.toml"
    p.write_text('depth_in = 2.0\ndistribution = "II"\nsource = "x"\ndt_min = 1e-9\n')
    for cmd in (["storm", str(p)], ["hydrograph", "--area-ac", "40", "--cn", "80", "--tc-hr", "1", "--storm", str(p)]):
        r = _run_capped(*cmd, cwd=tmp_path)
        assert r.returncode == 2, r.stderr[-2000:]
        line = _one_line(r.stderr)
        assert "1,440,000,000,000 time steps" in line and "dt_min = 1e-09 min" in line and "at most 1,000,000" in line


@pytest.mark.parametrize(
    "args, message",
    [
        # Q = inf printed in the table, and a ValueError traceback with --json
        (["runoff", "--precip-in", "1e308", "--cn", "80", "--json"], "error: precip_in must be in [0, 200] in, got 1e+308"),
        (["runoff", "--precip-in", "1e308", "--cn", "80"], "error: precip_in must be in [0, 200] in, got 1e+308"),
        (["runoff", "--precip-in", "inf", "--cn", "80", "--json"], "error: precip_in must be in [0, 200] in, got inf"),
        (["peak", "--area-ac", "40", "--cn", "80", "--tc-hr", "1", "--precip-in", "1e308", "--json"],
         "error: precip_in must be in [0, 200] in, got 1e+308"),
        # NaN hydrograph and a 3e307 cfs peak
        (["hydrograph", "--area-ac", "1e308", "--cn", "80", "--tc-hr", "1", "--json"],
         "error: --area-ac must be > 0 acres and <= 6,400,000 acres; got 1e+308"),
        (["peak", "--area-mi2", "1e308", "--cn", "80", "--tc-hr", "1"], "error: --area-mi2 must be > 0 mi2 and <= 10,000 mi2; got 1e+308"),
        (["peak", "--area-mi2", "inf", "--cn", "80", "--tc-hr", "1"], "error: --area-mi2 must be > 0 mi2 and <= 10,000 mi2; got inf"),
        # S = 1000/CN - 10 and Ia = ratio x S overflow
        (["runoff", "--precip-in", "2", "--cn", "5e-324", "--json"], "error: S = 1000/CN - 10 is not a finite number"),
        (["runoff", "--precip-in", "2", "--cn", "80", "--ia-ratio", "1e308", "--json"], "error: Ia = ia_ratio x S is not a finite number"),
    ],
)
def test_results_that_would_overflow_are_refused(run_cli, args, message):
    r = run_cli(*args)
    assert r.exit_code == 2, r.output
    assert _one_line(r.stderr).startswith(message)
    assert r.stdout == ""


def test_json_output_is_finite_json_for_tiny_inputs(run_cli):
    """P = 5e-324 in: Ia/P overflows; the ratio is reported as undefined (null), never Infinity."""
    r = run_cli("peak", "--area-ac", "40", "--cn", "80", "--tc-hr", "1", "--precip-in", "5e-324", "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout, parse_constant=lambda name: pytest.fail(f"non-finite {name} in the JSON"))
    assert doc["ia_over_p"] is None and doc["peak_cfs"] == 0.0


def test_dumps_json_refuses_non_finite_numbers_with_one_line():
    import numpy as np

    from capacitysim.errors import InputError
    from capacitysim.io.files import dumps_json

    with pytest.raises(InputError, match=r"result flow_cfs\[1\] = inf is not a finite number"):
        dumps_json({"peak_cfs": 1.0, "flow_cfs": np.array([0.0, np.inf])})
    with pytest.raises(InputError, match=r"result runoff_in = nan"):
        dumps_json({"runoff_in": float("nan")})


def test_invalid_utf8_storm_file_is_one_line(run_cli, tmp_path):
    p = tmp_path / "storm.toml"
    p.write_bytes(b'depth_in = 2.0\ndistribution = "II"\nsource = "Caf\xe9"\n')
    r = run_cli("storm", str(p))
    assert r.exit_code == 2
    assert "not UTF-8" in _one_line(r.stderr)
    r = run_cli("hydrograph", "--area-ac", "40", "--cn", "80", "--tc-hr", "1", "--storm", str(p))
    assert r.exit_code == 2 and "not UTF-8" in _one_line(r.stderr)
