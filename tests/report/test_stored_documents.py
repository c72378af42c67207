"""``capacitysim report DOC.json --out X.html``: reports from the stored document alone (issue 27, item 3)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from capacitysim.cli import cli

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "data" / "golden"


@pytest.mark.parametrize("name, expected", [
    ("capacity", ["Sewer capacity demonstration", "synthetic-50.inp", "MH0017", "FAIL",
                  "035af5bd100447c5"]),
    ("headroom", ["synthetic-50.inp", "MH0017", "MH0020", "FAIL_WHEN_CERTAIN"]),
    ("capacity-register", ["Capacity register", "synthetic-50.inp", "commitment_average"]),
])
def test_a_stored_document_renders_its_report(name, expected, tmp_path):
    out = tmp_path / "r.html"
    res = CliRunner().invoke(cli, ["report", str(GOLDEN / f"{name}.json"), "--out", str(out)])
    assert res.exit_code == 0, res.output
    html = out.read_text(encoding="utf-8")
    for text in expected:
        assert text in html, f"{name}: {text!r} not in the report"


@pytest.mark.parametrize("name", ["sweep-run", "credits-connection", "credits-quantification"])
def test_a_kind_without_a_stored_report_is_refused_by_name(name, tmp_path):
    res = CliRunner().invoke(cli, ["report", str(GOLDEN / f"{name}.json"), "--out", str(tmp_path / "r.html")])
    assert res.exit_code == 2
    # the golden sweep and connection documents predate their kind: refused as documents of no kind
    assert "allowed: capacity-demonstration, headroom" in res.output and res.output.startswith("error: kind: ")
    assert "Traceback" not in res.output and not (tmp_path / "r.html").exists()


@pytest.mark.parametrize("text, field", [('{"kind": "nonsense"}', "kind: 'nonsense'"), ("[1, 2]", "document: must be"),
                                         ("{not json", "not a JSON document"),
                                         ('{"kind": "headroom"}', "document: a headroom document without the field")])
def test_a_bad_document_exits_2_naming_the_field(text, field, tmp_path):
    doc = tmp_path / "doc.json"
    doc.write_text(text)
    res = CliRunner().invoke(cli, ["report", str(doc), "--out", str(tmp_path / "r.html")])
    assert res.exit_code == 2, res.output
    assert field in res.output and "Traceback" not in res.output


@pytest.mark.swmm
def test_the_stored_report_is_the_workflows_own(tmp_path):
    """The register's --report and ``capacitysim report`` of its --json are the same HTML."""
    env = {**os.environ, "CAPACITYSIM_ACTOR": "Jane Q. Clerk"}
    db = str(tmp_path / "bank.sqlite")

    def run(*argv):
        done = subprocess.run([sys.executable, "-m", "capacitysim", "bank", "--db", db, *argv], cwd=ROOT, env=env,
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout

    run("init", "--administrator", "Ann B. Administrator")
    run("add-entity", "Village of Johnson City", "--municipal")
    run("add-basin", "Johnson City CSO 4", "--outlet", "MH0012", "--model", "models/synthetic-50.inp", "--plant",
        "NY0024414", "--actor", "Ann B. Administrator")
    (tmp_path / "reg.json").write_text(run("register", "--no-headroom", "--json", "--report", str(tmp_path / "own.html")))
    res = CliRunner().invoke(cli, ["report", str(tmp_path / "reg.json"), "--out", str(tmp_path / "stored.html")])
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "reg.json").read_text())["kind"] == "capacity-register"
    assert (tmp_path / "stored.html").read_text() == (tmp_path / "own.html").read_text()
