"""Issue 12 for sweeps: no input clobbered, no verdict spoofed, no traceback, no runaway.

* ``sweep summarize --report`` never writes into the results store or over the sweep file;
  ``sweep run --out`` is never the sweep file, the model or a symbolic link.
* The number of scenarios is a Python integer (64^12 is not "0 scenarios"); a sweep above the size
  limit needs ``--yes-large`` and is refused with its size and estimated run time; a hard limit
  (memory of the store) holds even with ``--yes-large``.
* ``--scheduler garbage://x``, an unreachable scheduler, ``--x A --y A``: one line, exit 2, fast.
* A scenario an interrupted sweep never computed is missing, not "fail": the largest passing value
  and its bracket use computed scenarios only.

Real SWMM runs of the tiny network and real vectorized detention sweeps, in process (--workers 0).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time

import pytest

from capacitysim.errors import InputError
from capacitysim.io.sweep_files import MAX_SCENARIOS, SweepSpec, load_sweep
from capacitysim.workflows.sweep import (
    LARGE_SWMM_SCENARIOS,
    LARGE_VECTOR_SCENARIOS,
    SCHEDULER_PROBE_TIMEOUT_S,
    check_sweep_size,
    open_results,
    run_sweep,
    summarize,
)

from .conftest import ROOT, TINY

SITE = ROOT / "models" / "sites" / "new-building.toml"
SCS_SITE = ROOT / "models" / "sweeps" / "sites" / "scs-tank.toml"
DETENTION = f'site = "{SITE}"\n[grid]\nlength_ft = [20.0, 40.0]\norifice_diameter_in = [1.5, 2.5, 4.0]\n'
#: Seconds a refusal may take in a child process (Python start, imports, reading the model).
REFUSAL_DEADLINE_S = 60
#: Every detention parameter of a tank site with SCS hydrographs: 12 dimensions.
TWELVE = ("site_area_sf", "drainage_plan_c", "weighted_c", "length_ft", "width_ft", "height_ft", "orifice_diameter_in",
          "orifice_invert_ft", "discharge_coefficient", "tc_min", "cn", "storm_depth_in")


def _one_line_exit_2(r) -> None:
    assert r.exit_code == 2, (r.exit_code, r.output)
    assert r.stderr.startswith("error: ") and r.stderr.count("\n") == 1, r.stderr
    assert "Traceback" not in r.output


def _tree(folder) -> dict:
    """Every file under a folder with its bytes (a store left untouched compares equal)."""
    return {os.path.relpath(os.path.join(d, f), folder): open(os.path.join(d, f), "rb").read()
            for d, _, files in os.walk(folder) for f in files}


@pytest.fixture
def detention_store(tmp_path, run_cli):
    """A finished detention sweep (6 designs, vectorized): (sweep file, store)."""
    sweep = tmp_path / "sweep.toml"
    sweep.write_text(DETENTION, encoding="utf-8")
    store = tmp_path / "r.zarr"
    r = run_cli("sweep", "run", str(sweep), "--out", str(store), "--workers", "0", "--no-progress")
    assert r.exit_code in (0, 1), r.stderr
    return sweep, store


# ----------------------------------------------------------------------------------------------
# 1. data loss
# ----------------------------------------------------------------------------------------------
def test_summarize_report_inside_the_store_or_over_the_sweep_file_is_refused(detention_store, run_cli):
    sweep, store = detention_store
    before, text = _tree(store), sweep.read_text(encoding="utf-8")
    for report in (store / "report.html", store / "status" / "report.html", sweep):
        r = run_cli("sweep", "summarize", str(store), "--report", str(report))
        _one_line_exit_2(r)
    assert _tree(store) == before and sweep.read_text(encoding="utf-8") == text
    r = run_cli("sweep", "summarize", str(store), "--report", str(store / "report.html"))
    assert "lies inside the input" in r.stderr
    r = run_cli("sweep", "summarize", str(store), "--report", str(sweep))
    assert "is an input of this command" in r.stderr
    # beside the store is fine
    r = run_cli("sweep", "summarize", str(store), "--report", str(store.parent / "report.html"))
    assert r.exit_code == 0, r.stderr


@pytest.mark.swmm
def test_run_out_that_is_the_sweep_file_the_model_or_a_link_is_refused(tmp_path, run_cli):
    model = tmp_path / "tiny.inp"
    shutil.copyfile(TINY, model)  # a copy: whatever the code does, the repository's model is safe
    sweep = tmp_path / "sweep.toml"
    sweep.write_text(f'model = "{model}"\n[grid]\nconnect_node = ["MH0005"]\nconnect_gpd = [0, 1000]\n', encoding="utf-8")
    texts = {p: p.read_bytes() for p in (model, sweep)}
    for out, why in ((sweep, "is an input of this sweep"), (model, "is an input of this sweep"),
                     (tmp_path, "holds the input")):
        for extra in ((), ("--resume",)):
            r = run_cli("sweep", "run", str(sweep), "--out", str(out), "--workers", "0", "--no-progress", *extra)
            _one_line_exit_2(r)
            assert why in r.stderr, r.stderr
    assert {p: p.read_bytes() for p in texts} == texts
    # a symbolic link, dangling or to a folder, is never followed
    target = tmp_path / "elsewhere.zarr"
    (tmp_path / "dangling.zarr").symlink_to(target)
    (tmp_path / "folder").mkdir()
    (tmp_path / "to-folder.zarr").symlink_to(tmp_path / "folder")
    for link in ("dangling.zarr", "to-folder.zarr"):
        r = run_cli("sweep", "run", str(sweep), "--out", str(tmp_path / link), "--workers", "0", "--no-progress")
        _one_line_exit_2(r)
        assert "is a symbolic link" in r.stderr
    assert not target.exists() and not any((tmp_path / "folder").iterdir())


# ----------------------------------------------------------------------------------------------
# 2. runaway inputs
# ----------------------------------------------------------------------------------------------
def test_the_number_of_scenarios_never_overflows():
    spec = SweepSpec(name="big", kind="detention", mode="product", grid={k: list(range(64)) for k in TWELVE}, path="x")
    assert spec.n_scenarios == 64 ** 12 == 4_722_366_482_869_645_213_696
    assert isinstance(spec.n_scenarios, int)


def _big_detention(tmp_path, n_values: int = 64) -> str:
    lines = [f'site = "{SCS_SITE}"', "[grid]"]
    for k in TWELVE:
        lo, step = {"cn": (30.0, 1.0)}.get(k, (0.01, 0.01) if k in ("drainage_plan_c", "weighted_c", "discharge_coefficient") else (1.0, 0.5))
        lines.append(f"{k} = [{', '.join(repr(round(lo + i * step, 4)) for i in range(n_values))}]")
    p = tmp_path / "big.toml"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(p)


def test_a_grid_of_64_to_the_12_is_refused_even_with_yes_large(tmp_path, run_cli):
    sweep = _big_detention(tmp_path)
    for extra in ((), ("--yes-large",)):
        t0 = time.perf_counter()
        r = run_cli("sweep", "run", sweep, "--out", str(tmp_path / "big.zarr"), "--workers", "0", *extra)
        _one_line_exit_2(r)
        assert time.perf_counter() - t0 < 30
        assert "4,722,366,482,869,645,213,696 scenarios exceed the hard limit" in r.stderr
        assert f"{MAX_SCENARIOS:,}" in r.stderr and "--yes-large does not lift" in r.stderr
    assert not (tmp_path / "big.zarr").exists()


def _swmm_grid(tmp_path, n_flows: int, n_fractions: int) -> str:
    flows = ", ".join(str(1000 * (i + 1)) for i in range(n_flows))
    fractions = ", ".join(repr(i / n_fractions) for i in range(n_fractions))
    p = tmp_path / "swmm.toml"
    p.write_text(f'model = "{TINY}"\n[grid]\nconnect_node = ["MH0005"]\nconnect_gpd = [{flows}]\n'
                 f"remediation_fraction = [{fractions}]\n", encoding="utf-8")
    return str(p)


@pytest.mark.swmm
def test_a_million_swmm_scenarios_need_yes_large_and_are_told_how_long(tmp_path):
    """In a child process with a deadline: a sweep that starts running instead is stopped, and fails the test."""
    sweep = _swmm_grid(tmp_path, 1000, 1000)
    try:
        r = subprocess.run([sys.executable, "-m", "capacitysim", "sweep", "run", sweep, "--out", str(tmp_path / "s.zarr"),
                            "--workers", "0", "--no-progress"], capture_output=True, text=True, timeout=REFUSAL_DEADLINE_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f"a 1,000,000-scenario SWMM sweep was still running after {REFUSAL_DEADLINE_S} s instead of being refused")
    assert r.returncode == 2, r.stdout + r.stderr
    msg = r.stderr
    assert msg.startswith("error: ") and msg.count("\n") == 1, msg
    assert "1,000,000 scenarios exceed the limit of" in msg and f"{LARGE_SWMM_SCENARIOS:,}" in msg
    assert "1,000,001 SWMM runs of ~" in msg and "(14-node model)" in msg and "days on one core" in msg
    assert "add --yes-large" in msg
    assert not (tmp_path / "s.zarr").exists()
    # the estimate over local workers
    with pytest.raises(InputError, match=r"days on one core, about .* days on 2 workers"):
        check_sweep_size(load_sweep(sweep), workers=2)


@pytest.mark.swmm
def test_yes_large_lifts_the_size_limit_not_the_hard_limit(tmp_path):
    swmm = load_sweep(_swmm_grid(tmp_path, 100, 60))  # 6,000 SWMM scenarios
    assert LARGE_SWMM_SCENARIOS < swmm.n_scenarios <= MAX_SCENARIOS
    with pytest.raises(InputError, match="6,000 scenarios exceed the limit"):
        check_sweep_size(swmm)
    check_sweep_size(swmm, yes_large=True)
    runoff = tmp_path / "runoff.toml"
    runoff.write_text('kind = "runoff"\n[grid]\n'
                      f"cn = [{', '.join(repr(40 + i * 0.05) for i in range(1000))}]\n"
                      f"tc_min = [{', '.join(str(5 + i) for i in range(600))}]\n", encoding="utf-8")
    spec = load_sweep(runoff)  # 600,000 vectorized designs
    assert spec.n_scenarios == 600_000 > LARGE_VECTOR_SCENARIOS
    with pytest.raises(InputError, match=r"600,000 scenarios exceed the limit .* runoff designs of ~"):
        check_sweep_size(spec)
    check_sweep_size(spec, yes_large=True)


# ----------------------------------------------------------------------------------------------
# 3. tracebacks -> one line, exit 2
# ----------------------------------------------------------------------------------------------
def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("address, expected", [
    ("garbage://x", "unknown scheme 'garbage'"),
    ("tcp://127.0.0.1", "not HOST:PORT"),
    ("tcp://127.0.0.1:notaport", "not HOST:PORT"),
    ("tcp://127.0.0.1:70000", "port in 1..65535"),
    ("closed", "cannot reach 127.0.0.1:"),
])
def test_a_bad_or_unreachable_scheduler_fails_fast_in_one_line(tmp_path, run_cli, address, expected):
    sweep = tmp_path / "sweep.toml"
    sweep.write_text(DETENTION, encoding="utf-8")
    if address == "closed":
        address = f"tcp://127.0.0.1:{_closed_port()}"
    t0 = time.perf_counter()
    r = run_cli("sweep", "run", str(sweep), "--out", str(tmp_path / "r.zarr"), "--scheduler", address, "--no-progress")
    _one_line_exit_2(r)
    assert expected in r.stderr, r.stderr
    assert time.perf_counter() - t0 < SCHEDULER_PROBE_TIMEOUT_S + 10
    assert not (tmp_path / "r.zarr").exists()  # nothing written before the scheduler is reached


@pytest.mark.parametrize("args, expected", [
    (("--x", "length_ft", "--y", "length_ft"), "--x and --y both name 'length_ft'"),
    (("--x", "orifice_diameter_in", "--y", "orifice_diameter_in"), "both name 'orifice_diameter_in'"),
    (("--x", "cn"), "--x 'cn' is not a swept parameter"),
    (("--y", "status"), "--y 'status' is not a swept parameter"),
])
def test_summarize_axes_that_are_not_two_swept_parameters(detention_store, run_cli, tmp_path, args, expected):
    _, store = detention_store
    for report in ((), ("--report", str(tmp_path / "s.html"))):
        r = run_cli("sweep", "summarize", str(store), *report, *args)
        _one_line_exit_2(r)
        assert expected in r.stderr, r.stderr
    assert not (tmp_path / "s.html").exists()


# ----------------------------------------------------------------------------------------------
# 4. missing is not fail
# ----------------------------------------------------------------------------------------------
@pytest.mark.swmm
def test_missing_scenarios_of_an_interrupted_swmm_sweep_are_not_fails(tmp_path, run_cli):
    """MH0005 passes 2,000 gpd and fails 10,000 gpd (tests/sweep/test_sweep_outcome.py). The sweep
    stops after its first scenario (2,000 gpd): 10,000 and 50,000 gpd are missing, so the capacity
    is only known to be at least 2,000 gpd -- never bracketed by a scenario nobody computed."""
    sweep = tmp_path / "sweep.toml"
    sweep.write_text(f'model = "{TINY}"\nstorm = "binghamton-1yr-24h"\n[grid]\n'
                     'connect_node = ["MH0005"]\nconnect_gpd = [2000, 10000, 50000]\n', encoding="utf-8")
    store = tmp_path / "r.zarr"
    run_sweep(load_sweep(sweep), store, workers=0, max_scenarios=1)
    ds = open_results(store)
    assert list(ds.status.values.ravel()) == ["done", "missing", "missing"]
    assert list(ds.verdict.values.ravel()) == ["pass", "", ""]
    s = summarize(ds)
    assert (s["done"], s["missing"], s["computed"], s["complete"]) == (1, 2, 1, False)
    assert (s["pass"], s["fail"], s["untrusted"]) == (1, 0, 0)
    (row,) = s["largest_passing"]
    assert row["largest_passing_gpd"] == 2000.0
    assert row["smallest_failing_gpd"] is None and row["governing_check"] is None and row["lower_bound"] is True
    assert row["missing"] == 2 and row["monotone"] is True
    r = run_cli("sweep", "summarize", str(store), "--report", str(tmp_path / "s.html"))
    assert r.exit_code == 0, r.stderr
    assert "  MH0005: ≥ 2,000 gpd" in r.stdout.splitlines()
    assert "2 of 3 scenarios are missing" in r.stdout
    html = (tmp_path / "s.html").read_text(encoding="utf-8")
    assert "2 of 3 scenarios are missing" in html and "10,000 gpd fails" not in html
    doc = json.loads(run_cli("sweep", "summarize", str(store), "--json").stdout)
    assert doc["fail"] == 0 and doc["missing"] == 2


def test_missing_designs_of_an_interrupted_detention_sweep_are_not_fails(tmp_path):
    """A detention sweep stopped after 2 of 6 designs: the row of length 40 ft has nothing computed
    (no pass, no fail), and counts hold only what was computed."""
    sweep = tmp_path / "sweep.toml"
    sweep.write_text(DETENTION, encoding="utf-8")
    store = tmp_path / "r.zarr"
    run_sweep(load_sweep(sweep), store, workers=0, max_scenarios=2)
    ds = open_results(store)
    s = summarize(ds)
    assert (s["done"], s["missing"]) == (2, 4)
    assert s["pass"] + s["fail"] + s["untrusted"] == 2
    rows = {r["length_ft"]: r for r in s["largest_passing_orifice"]}
    empty = rows[40.0]
    assert empty["largest_passing_orifice_diameter_in"] is None and empty["smallest_failing_orifice_diameter_in"] is None
    assert empty["governing_check"] is None and empty["missing"] == 3
    computed = rows[20.0]
    assert computed["missing"] == 1  # 4.0 in was never computed: it bounds nothing
    assert computed["smallest_failing_orifice_diameter_in"] in (None, 1.5, 2.5)
