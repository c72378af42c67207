"""Issue 26, 8: an exit-2 message never points to a file in a temporary folder that is already gone."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pickle
import shutil

import pytest

from capacitysim.network.engine import RunFiles, _engine_error, report_errors, scenario_rejected

MODELS = Path(__file__).resolve().parents[1] / "data" / "models"


def _paths(text: str) -> list[str]:
    return re.findall(r"(?<![\w.])(/[^\s():;,]+)", text)


@pytest.mark.swmm
def test_engine_errors_beyond_the_first_do_not_name_the_removed_report(run_cli, tmp_path):
    text = (MODELS / "population-dwf.inp").read_text()
    for old, new in (("FLOW_UNITS           CFS", "FLOW_UNITS XYZ"), ("INFILTRATION         HORTON", "INFILTRATION BOGUS"),
                     ("ROUTING_STEP         5", "ROUTING_STEP xx")):
        assert old in text
        text = text.replace(old, new, 1)
    p = tmp_path / "three errors.inp"
    p.write_text(text)
    r = run_cli("capacity", "--model", str(p), "--connect", "J2=1000")
    assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "ERROR 205" in r.stderr and "(and 2 more engine error(s): correct this one and run again" in r.stderr
    assert ".rpt" not in r.stderr and "capacitysim-probe-" not in r.stderr
    assert all(os.path.exists(q) for q in _paths(r.stderr)), r.stderr


def test_a_file_that_still_exists_stays_named_and_a_gone_one_is_dropped(tmp_path):
    """The engine's error renders its run files when read: named while they exist, dropped once removed."""
    work = tmp_path / "work"
    work.mkdir()
    inp, rpt = work / "before.inp", work / "before.rpt"
    lines = (MODELS / "population-dwf.inp").read_text().splitlines()
    lines.insert(5, "FLOW_UNITS XYZ")            # two engine errors, one on a line of the run's copy only
    lines.insert(6, "INFILTRATION BOGUS")
    inp.write_text("\n".join(lines) + "\n")
    rpt.write_text("ERROR 205: invalid keyword XYZ at line 6 of [OPTIONS] section:\n"
                   "ERROR 205: invalid keyword BOGUS at line 7 of [OPTIONS] section:\n")
    run = RunFiles(inp, rpt, work / "before.out")
    exc = _engine_error(run, report_errors(rpt), source=None)
    kept = str(exc)
    assert str(rpt) in kept and f"line 6 of the run's copy {inp}" in kept
    again = pickle.loads(pickle.dumps(exc))      # across a process boundary (a service job) with its files
    assert str(again) == kept and type(again) is type(exc)
    one = _flag(_engine_error(run, ["ERROR 205: invalid keyword XYZ at line 6 of [OPTIONS] section"], None))
    shutil.rmtree(work)
    gone = str(exc)
    assert str(tmp_path) not in gone, gone
    assert gone.endswith("(and 1 more engine error(s): correct this one and run again to see the next)")
    assert "line 6 of the engine's copy of the model (removed with the run's temporary folder) ([OPTIONS] section)" in gone
    rejected = scenario_rejected(one, "m.inp", "after", ["a connection"])
    assert "removed with the run's temporary folder" in str(rejected)


def _flag(exc):
    exc.rejected = True
    return exc
