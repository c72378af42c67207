"""`capacitysim capacity` and `capacitysim basins` end to end (real SWMM runs, 50-node model)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.swmm]

ROOT = Path(__file__).resolve().parents[2]
SMALL = str(ROOT / "models" / "synthetic-50.inp")


def test_basins_json(run_cli):
    r = run_cli("basins", "--model", SMALL, "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    kinds = {b["kind"] for b in doc["basins"]}
    assert {"plant", "pump_station", "cso"} <= kinds
    plant = next(b for b in doc["basins"] if b["kind"] == "plant")
    assert plant["n_tributary_nodes"] == 49


def test_capacity_json_and_report(run_cli, tmp_path):
    report = tmp_path / "cap.html"
    r = run_cli("capacity", "--model", SMALL, "--connect", "MH0040=50000", "--remediate", "basin=MH0004,gpd=150000",
                "--json", "--report", str(report), "--work-dir", str(tmp_path / "w"))
    doc = json.loads(r.stdout)
    assert doc["verdict"] == "pass" and r.exit_code == 0
    assert set(doc["before"]) >= {"continuity_error_pct"} and set(doc["after"]) >= {"continuity_error_pct"}
    assert {"id", "peak_flow_cfs_before", "peak_flow_cfs_after", "max_q_over_qfull_before", "max_q_over_qfull_after"} <= set(doc["links"][0])
    assert {"id", "flooding_volume_cf_before", "flooding_volume_cf_after", "max_surcharge_ft_before",
            "max_surcharge_ft_after"} <= set(doc["nodes"][0])
    assert report.read_text().startswith("<!DOCTYPE html>")
    # the input model folder was not written to
    assert sorted(p.name for p in Path(SMALL).parent.glob("synthetic-50.*")) == ["synthetic-50.inp"]


def test_capacity_fail_exit_code(run_cli, tmp_path):
    r = run_cli("capacity", "--model", SMALL, "--connect", "MH0040=50000", "--work-dir", str(tmp_path))
    assert r.exit_code == 1
    assert "FAIL" in r.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["--connect", "NOPE=1000"], "node 'NOPE' is not a node"),
        (["--connect", "MH0040=-500"], "flow must be > 0 gpd"),
        (["--connect", "MH0040=lots"], "is not a number with a unit; allowed: gpd (a bare number), MGD, gpm"),
        (["--connect", "MH0040=1000", "--peaking", "0.5"], "--peaking"),
        (["--remediate", "basin=NOPE,fraction=0.2"], "is not a basin outlet"),
        (["--remediate", "basin=PLANT,fraction=2"], "fraction must be in (0, 1]"),
        (["--connect", "MH0040=1000", "--storm", "no-such-storm"], "no bundled storm"),
        (["--remediate", "nodes=MH0040,sump_pumps=-2"], "sump_pumps must be a number >= 0"),
        (["--remediate", "nodes=MH0040;NOPE,roof_sqft=5000"], "node 'NOPE' is not a node"),
    ],
)
def test_bad_input_exit_2(run_cli, args, message):
    r = run_cli("capacity", "--model", SMALL, *args)
    assert r.exit_code == 2
    assert message in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_malformed_model_exit_2(run_cli, tmp_path):
    """A model the engine rejects: exit 2 with the engine's error code and our reading of the line."""
    bad = tmp_path / "bad.inp"
    text = Path(SMALL).read_text()
    assert "P0001      MH0001     PLANT" in text
    bad.write_text(text.replace("P0001      MH0001     PLANT", "P0001      MH0001     NOWHERE", 1))
    r = run_cli("capacity", "--model", str(bad), "--connect", "MH0040=1000")
    assert r.exit_code == 2 and "ERROR 209" in r.stderr and "to node NOWHERE is not defined" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_model_the_engine_runs_is_run_as_the_engine_reads_it(run_cli, tmp_path):
    """The engine is the judge: it reads a header by its keyword as a prefix ([CONDUIT), so [CONDUITZ] is [CONDUITS]
    for SWMM and for capacitysim alike: the same checks as the model spelt [CONDUITS], no warning."""
    odd = tmp_path / "odd.inp"
    odd.write_text(Path(SMALL).read_text().replace("[CONDUITS]", "[CONDUITZ]"))
    docs = []
    for model in (SMALL, odd):
        r = run_cli("capacity", "--model", str(model), "--connect", "MH0040=1000", "--json")
        assert r.exit_code in (0, 1), r.stderr
        docs.append(json.loads(r.stdout))
    assert [(c["criterion"], c["element"], c["after"]) for c in docs[0]["checks"]] == \
        [(c["criterion"], c["element"], c["after"]) for c in docs[1]["checks"]]
    assert not any("unknown section" in w for w in docs[1]["warnings"])
    r = run_cli("basins", "--model", str(tmp_path / "missing.inp"))
    assert r.exit_code == 2 and "no such file" in r.stderr


def test_engine_input_error_names_users_line_exit_2(run_cli, tmp_path):
    """A model the validator passes but the engine rejects (a pump curve that does not exist): one line naming
    the object and the line of the user's file (not of the scenario copies the runs read), exit code 2."""
    text = Path(SMALL).read_text()
    pump = next(l for l in text.splitlines() if l.startswith("PS1_PUMP "))
    bad = tmp_path / "badcurve.inp"
    bad.write_text(text.replace(pump, pump.replace("PS1_CURVE", "NO_SUCH_CURVE")))
    line = next(i for i, l in enumerate(bad.read_text().splitlines(), 1) if "NO_SUCH_CURVE" in l)
    r = run_cli("capacity", "--model", str(bad), "--connect", "MH0040=5000", "--work-dir", str(tmp_path / "w"))
    assert r.exit_code == 2
    assert len(r.stderr.strip().splitlines()) == 1
    assert f"undefined object NO_SUCH_CURVE at badcurve.inp:{line}" in r.stderr


def _engine_children(marker: str) -> list[int]:
    """Pids of running engine children whose command line names ``marker`` (their work folder)."""
    pids = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if "_child.py" in cmd and marker in cmd:
                pids.append(int(d.name))
    return pids


@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_signal_stops_the_engine_runs_and_cleans_up(tmp_path, sig, code):
    """SIGTERM or Ctrl-C on `capacity` while SWMM runs: both engine children stop, the temporary folder
    is removed, the exit code is 143 / 130."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    exe = Path(sys.executable).with_name("capacitysim")
    env = dict(os.environ, TMPDIR=str(tmp))
    proc = subprocess.Popen([str(exe), "capacity", "--model", str(ROOT / "models" / "synthetic-500.inp"),
                             "--connect", "MH0020=1000"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 60
    while len(_engine_children(str(tmp))) < 2 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.1)
    assert len(_engine_children(str(tmp))) == 2, "the two engine runs did not start"
    proc.send_signal(sig)
    assert proc.wait(timeout=30) == code
    time.sleep(0.2)
    assert _engine_children(str(tmp)) == []
    assert list(tmp.iterdir()) == []
    assert "Traceback" not in proc.stderr.read().decode()
