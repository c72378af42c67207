"""Issue 12 for ``capacitysim bench``: no input clobbered, no verdict spoofed, no traceback.

* ``bench run --out`` / ``bench report --out`` never overwrite a case file, a baseline or a stored run.
* A results file that is not JSON, not an object, or lacks keys / has values of the wrong type is
  one line and exit 2, never a traceback.
* Two documents with no case in common are an error (exit 2), not "0 regressions".
* A crash inside a bench command exits 2 (an error), never 1 (a regression).

Commands that load case files run in a child process (the case registry is global to a process);
the others run in-process through click's CliRunner.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from capacitysim.benchmarking.compare import check_results, compare
from capacitysim.errors import DataFileError, InputError

from .test_compare import CASES

pytestmark = [pytest.mark.slow]

GOOD = {
    "schema": 1,
    "environment": {"timestamp": "2026-01-01T00:00:00+00:00"},
    "reference": {"c.ref": {"version": 1, "source": "s", "values": {"x": 2.0}, "expected": {"x": 2.0},
                            "tolerance": {"x": 1e-9}, "passed": True}},
    "speed": {"c.speed": {"median_s": 0.01, "spread_rel": 0.01, "ratio": 1.0, "description": "d"}},
}


def _child(*args, cwd):
    return subprocess.run([sys.executable, "-m", "capacitysim", "bench", *args], capture_output=True, text=True, cwd=cwd, check=False)


def _one_line(stderr: str) -> bool:
    return stderr.startswith("error: ") and stderr.count("\n") == 1 and "Traceback" not in stderr


def _write(path, doc) -> str:
    path.write_text(json.dumps(doc), encoding="utf-8")
    return str(path)


# ----------------------------------------------------------------------------------------------
# malformed results files
# ----------------------------------------------------------------------------------------------
def _with(**changes):
    doc = json.loads(json.dumps(GOOD))
    for path, value in changes.items():
        *parents, last = path.split("__")
        node = doc
        for k in parents:
            node = node[k.replace("_DOT_", ".")]
        if value is KeyError:
            del node[last.replace("_DOT_", ".")]
        else:
            node[last.replace("_DOT_", ".")] = value
    return doc


MALFORMED = [
    (b"this is not json", "not a JSON results file"),
    (b"\xff\xfe\x00binary", "not a JSON results file (not UTF-8 text"),
    (b"[1, 2, 3]", "is a JSON object with reference and speed cases; got a list"),
    (b'"text"', "got a string"),
    (b"{}", "no reference and no speed cases"),
    (b'{"reference": [1]}', "reference must be an object of cases; got a list"),
    (json.dumps(_with(reference__c_DOT_ref__values=KeyError)).encode(), "reference case 'c.ref': missing key(s) values"),
    (json.dumps(_with(reference__c_DOT_ref__values={"x": "two"})).encode(), "values.x must be a finite number; got 'two'"),
    (json.dumps(_with(reference__c_DOT_ref__tolerance={"y": 1.0})).encode(), "expected and tolerance must name the same quantities"),
    (json.dumps(_with(reference__c_DOT_ref__passed="yes")).encode(), "passed must be true or false"),
    (json.dumps(_with(reference__c_DOT_ref="oops")).encode(), "reference case 'c.ref': must be an object; got a string"),
    (json.dumps(_with(speed__c_DOT_speed__ratio=KeyError)).encode(), "speed case 'c.speed': missing key ratio"),
    (json.dumps(_with(speed__c_DOT_speed__ratio=0)).encode(), "ratio must be a finite number > 0; got 0"),
    (json.dumps(_with(speed__c_DOT_speed__ratio=[1])).encode(), "ratio must be a finite number > 0; got [1]"),
    (b'{"speed": {"c.speed": {"ratio": NaN}}}', "ratio must be a finite number > 0; got nan"),
    (json.dumps(_with(environment=[1])).encode(), "environment must be an object"),
    (json.dumps(_with(environment__timestamp=5)).encode(), "environment.timestamp must be a string"),
    (json.dumps(_with(speed__c_DOT_speed__samples=[1.0])).encode(), "samples must be an object of lists; got a list"),
    (json.dumps(_with(speed__c_DOT_speed__samples={"load1": [1.0]})).encode(), "samples has no ratio"),
    (json.dumps(_with(speed__c_DOT_speed__samples={"ratio": [1.0, -2.0]})).encode(), "samples.ratio must hold finite numbers > 0; got -2.0"),
    (json.dumps(_with(speed__c_DOT_speed__samples={"ratio": [1.0, 2.0], "load1": [1.0]})).encode(), "the lists of samples differ in length (1, 2)"),
    (json.dumps(_with(speed__c_DOT_speed__ratio_ci=[1.0])).encode(), "ratio_ci must be two finite numbers > 0 or null"),
    (json.dumps(_with(speed__c_DOT_speed__basis="gpu")).encode(), "basis must be one of cpu, wall; got 'gpu'"),
    (json.dumps(_with(speed__c_DOT_speed__skipped=3)).encode(), "skipped must be a string"),
    (b'{"count": {"h": {"values": {"runs": "x"}}}}', "count case 'h': values.runs must be a finite number"),
    (b'{"count": {"h": {"tolerance": {}}}}', "count case 'h': missing key values"),
]


@pytest.mark.parametrize("content, expected", MALFORMED)
def test_compare_on_a_malformed_results_file_is_one_line_exit_2(tmp_path, run_cli, content, expected):
    bad = tmp_path / "bad.json"
    bad.write_bytes(content)
    good = _write(tmp_path / "good.json", GOOD)
    for args in ((str(bad), good), (good, str(bad))):
        r = run_cli("bench", "compare", *args)
        assert r.exit_code == 2, r.output
        assert _one_line(r.stderr) and expected in r.stderr, r.stderr
        assert "bad.json" in r.stderr


def test_report_on_a_malformed_stored_run_is_one_line_exit_2(tmp_path, run_cli):
    history = tmp_path / "history"
    history.mkdir()
    _write(history / "a.json", GOOD)
    (history / "b.json").write_text("[]", encoding="utf-8")
    r = run_cli("bench", "report", "--history", str(history), "--out", str(tmp_path / "h.html"))
    assert r.exit_code == 2 and _one_line(r.stderr) and "b.json" in r.stderr, r.output
    assert not (tmp_path / "h.html").exists()


def test_check_results_accepts_what_bench_run_writes():
    assert check_results(GOOD, "g.json") is GOOD
    errored = _with(reference__c_DOT_ref={"version": 1, "source": "s", "passed": False, "error": "ValueError: x"})
    assert check_results(errored, "e.json") is errored
    with pytest.raises(DataFileError, match="e.json: reference case 'c.ref': error must be a string"):
        check_results(_with(reference__c_DOT_ref={"passed": False, "error": 3}), "e.json")


# ----------------------------------------------------------------------------------------------
# no case in common: an error, not "0 regressions"
# ----------------------------------------------------------------------------------------------
def test_no_case_in_common_is_an_error_not_zero_regressions(tmp_path, run_cli):
    other = {"reference": {"other.ref": GOOD["reference"]["c.ref"]}, "speed": {"other.speed": GOOD["speed"]["c.speed"]}}
    r = run_cli("bench", "compare", _write(tmp_path / "base.json", GOOD), _write(tmp_path / "cur.json", other))
    assert r.exit_code == 2, r.output
    assert _one_line(r.stderr) and "nothing to compare: no case in common" in r.stderr
    assert "regression" not in r.stdout
    with pytest.raises(InputError, match="no case in common"):
        compare({"reference": {}, "speed": {}}, {"reference": {}, "speed": {}})
    # a case in common whose definition changed is not compared either
    bumped = _with(reference__c_DOT_ref__version=2)
    del bumped["speed"]
    base = json.loads(json.dumps(GOOD))
    del base["speed"]
    with pytest.raises(InputError, match="every case in common was skipped or changed its definition"):
        compare(base, bumped)
    # one case in common is enough
    r = run_cli("bench", "compare", _write(tmp_path / "b2.json", base), _write(tmp_path / "c2.json", base))
    assert r.exit_code == 0 and "0 regression(s)" in r.stdout, r.output
    # a skipped case is not compared: nothing else in common is an error too
    skipped = {"speed": {"c.speed": {"skipped": "corpus absent"}}}
    r = run_cli("bench", "compare", _write(tmp_path / "b3.json", GOOD), _write(tmp_path / "c3.json", skipped))
    assert r.exit_code == 2 and "nothing to compare: every case in common was skipped" in r.stderr, r.output


# ----------------------------------------------------------------------------------------------
# a crash exits 2, a regression 1
# ----------------------------------------------------------------------------------------------
CRASHING_SPEED = '''
from capacitysim.benchmarking import speed_case

@speed_case("crash.setup", description="setup raises", repeats=3)
def _s():
    raise RuntimeError("setup exploded")
'''


def test_a_crash_inside_bench_run_or_compare_exits_2_not_1(tmp_path):
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "cases_crash.py").write_text(CRASHING_SPEED, encoding="utf-8")
    r = _child("run", "--cases", str(cases), "--repeats", "3", cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert _one_line(r.stderr) and "bench run crashed: RuntimeError: setup exploded" in r.stderr
    base = _write(tmp_path / "base.json", {"speed": {"crash.setup": {"ratio": 1.0}}})
    r = _child("compare", base, "--cases", str(cases), cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert _one_line(r.stderr) and "bench compare crashed: RuntimeError: setup exploded" in r.stderr
    # a case file that does not even import
    (cases / "cases_crash.py").write_text("import no_such_module_anywhere\n", encoding="utf-8")
    r = _child("run", "--cases", str(cases), cwd=tmp_path)
    assert r.returncode == 2 and _one_line(r.stderr) and "ModuleNotFoundError" in r.stderr, r.stderr


# ----------------------------------------------------------------------------------------------
# outputs never overwrite inputs
# ----------------------------------------------------------------------------------------------
def test_run_out_that_is_a_case_file_or_the_baseline_is_refused(tmp_path):
    cases = tmp_path / "cases"
    cases.mkdir()
    case_file = cases / "cases_tiny.py"
    case_file.write_text(CASES.format(coef=1.0, sleep=0.001), encoding="utf-8")
    baseline = cases / "baseline.json"
    baseline.write_text(json.dumps(GOOD), encoding="utf-8")
    (cases / "history").mkdir()
    stored = cases / "history" / "20260101T000000Z.json"
    stored.write_text(json.dumps(GOOD), encoding="utf-8")
    before = {p: p.read_bytes() for p in (case_file, baseline, stored)}
    for out in (case_file, baseline, stored):
        r = _child("run", "--cases", str(cases), "--kind", "reference", "--out", str(out), cwd=tmp_path)
        assert r.returncode == 2, r.stdout + r.stderr
        assert _one_line(r.stderr) and "is an input of this command" in r.stderr, r.stderr
    assert {p: p.read_bytes() for p in before} == before
    r = _child("run", "--cases", str(cases), "--kind", "reference", "--out", str(tmp_path / "new.json"), cwd=tmp_path)
    assert r.returncode == 0 and json.loads((tmp_path / "new.json").read_text())["reference"]["tiny.coef"]["passed"], r.stderr


def test_report_out_that_is_a_stored_run_or_a_bundled_input_is_refused(tmp_path, run_cli, monkeypatch):
    # the project's benchmarks folder, as $CAPACITYSIM_BENCHMARKS points it elsewhere (the repository's stays out of reach)
    bundled = tmp_path / "benchmarks"
    bundled.mkdir()
    _write(bundled / "baseline.json", GOOD)
    (bundled / "cases_tiny.py").write_text(CASES.format(coef=1.0, sleep=0.001), encoding="utf-8")
    monkeypatch.setenv("CAPACITYSIM_BENCHMARKS", str(bundled))
    history = tmp_path / "history"
    history.mkdir()
    stored = history / "a.json"
    _write(stored, GOOD)
    text = stored.read_bytes()
    protected = [stored, bundled / "baseline.json", bundled / "cases_tiny.py"]
    snapshot = {p: p.read_bytes() for p in protected}
    for out in protected:
        r = run_cli("bench", "report", "--history", str(history), "--out", str(out))
        assert r.exit_code == 2, r.output
        assert _one_line(r.stderr) and "is an input of this command" in r.stderr, r.stderr
    assert {p: p.read_bytes() for p in protected} == snapshot and stored.read_bytes() == text
    r = run_cli("bench", "report", "--history", str(history), "--out", str(tmp_path / "h.html"))
    assert r.exit_code == 0 and (tmp_path / "h.html").exists(), r.output
