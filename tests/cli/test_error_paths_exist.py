"""Issue 26, 8: an exit-2 message never points to a file in a temporary folder that is already gone."""

from __future__ import annotations

import os
import re
from pathlib import Path

from capacitysim.cli import without_gone_files

MODELS = Path(__file__).resolve().parents[1] / "data" / "models"


def _paths(text: str) -> list[str]:
    return re.findall(r"(?<![\w.])(/[^\s():;,]+)", text)


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
    kept = tmp_path / "work" / "before.rpt"
    kept.parent.mkdir()
    kept.write_text("ERROR 209")
    gone = tmp_path / "gone" / "before.rpt"
    msg = "m.inp: SWMM failed: ERROR 209: undefined object X at m.inp:3 ([INFLOWS] section) (and 4 more engine error(s) in {})"
    assert without_gone_files(msg.format(kept)) == msg.format(kept)
    out = without_gone_files(msg.format(gone))
    assert str(gone) not in out and out.endswith("(and 4 more engine error(s): correct this one and run again to see the next)")
    copy = "m.inp: SWMM failed: ERROR 211: invalid number x at line 7 of the run's copy {} ([XSECT] section): C1"
    out = without_gone_files(copy.format(tmp_path / "gone" / "before.inp"))
    assert "gone" not in out and "line 7 of the engine's copy of the model (removed with the run's temporary folder) ([XSECT]" in out
    assert without_gone_files(copy.format(kept)) == copy.format(kept)
