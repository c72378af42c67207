"""bench compare catches a perturbed reference value and an injected slow-down, not noise."""

from __future__ import annotations

import json
import subprocess
import sys
import time

from capacitysim.benchmarking.compare import compare
from capacitysim.benchmarking.registry import ReferenceCase, SpeedCase
from capacitysim.benchmarking.runner import run_cases
from capacitysim.hydrology import runoff_depth


def _case(coefficient: float) -> ReferenceCase:
    # A test double of a TR-55 case: runoff on CN 80, 3 in (1.25 in) scaled by a coefficient.
    return ReferenceCase(
        "double.runoff", lambda: {"q_in": coefficient * runoff_depth(3.0, 80)}, {"q_in": 1.25}, {"q_in": 1e-6}, "hand calculation"
    )


def test_perturbed_coefficient_is_caught():
    base = run_cases({"double.runoff": _case(1.0)}, {})
    cur = run_cases({"double.runoff": _case(1.001)}, {})
    findings = compare(base, cur)
    assert [f.kind for f in findings if f.regression] == ["reference", "reference"]  # off expected, moved from baseline
    assert compare(base, run_cases({"double.runoff": _case(1.0)}, {})) == []


def _sleeper(seconds):
    return SpeedCase("double.sleep", lambda: (lambda: time.sleep(seconds)), "sleep", repeats=3)


def test_injected_sleep_is_caught():
    base = run_cases({}, {"double.sleep": _sleeper(0.01)}, repeats=3)
    slow = run_cases({}, {"double.sleep": _sleeper(0.03)}, repeats=3)
    regressions = [f for f in compare(base, slow) if f.regression]
    assert [f.name for f in regressions] == ["double.sleep"]


def test_noise_within_the_spread_is_not_flagged():
    base = {"speed": {"c": {"ratio": 1.00, "spread_rel": 0.08}}}
    noisy = {"speed": {"c": {"ratio": 1.15, "spread_rel": 0.06}}}  # +15 %, but noise is 2 x 14 %
    assert [f for f in compare(base, noisy) if f.regression] == []
    steady = {"speed": {"c": {"ratio": 1.15, "spread_rel": 0.01}}}  # +15 % on quiet runs: flagged
    assert [f.name for f in compare({"speed": {"c": {"ratio": 1.0, "spread_rel": 0.01}}}, steady) if f.regression] == ["c"]
    faster = {"speed": {"c": {"ratio": 0.5, "spread_rel": 0.0}}}
    assert compare(base, faster) == []


CASES = '''
from capacitysim.benchmarking import reference_case, speed_case
COEF = {coef}

@reference_case("tiny.coef", expected={{"x": 2.0}}, tolerance={{"x": 1e-9}}, source="test double")
def _c():
    return {{"x": 2.0 * COEF}}

@speed_case("tiny.sleep", description="sleep", repeats=3)
def _s():
    import time
    return lambda: time.sleep({sleep})
'''


def _cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "capacitysim", "bench", *args], capture_output=True, text=True, cwd=cwd)


def test_cli_run_and_compare_end_to_end(tmp_path):
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "cases_tiny.py").write_text(CASES.format(coef=1.0, sleep=0.005))
    r = _cli("run", "--cases", str(cases), "--out", "base.json", "--repeats", "3", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "base.json").read_text())
    assert doc["reference"]["tiny.coef"]["passed"] and doc["speed"]["tiny.sleep"]["ratio"] > 0
    # Same code: nothing regressed. (A sleep does not scale with the machine as the reference
    # kernel does, so a loaded machine moves this ratio; a 50 % threshold keeps the test about
    # the mechanism. Noise handling itself is tested on fixed documents above.)
    r = _cli("compare", "base.json", "--cases", str(cases), "--threshold", "0.5", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    # A perturbed coefficient and a slower path: both reported, exit 1.
    (cases / "cases_tiny.py").write_text(CASES.format(coef=1.01, sleep=0.03))
    r = _cli("compare", "base.json", "--cases", str(cases), "--threshold", "0.5", cwd=tmp_path)
    assert r.returncode == 1
    assert "REGRESSION reference tiny.coef" in r.stdout
    assert "REGRESSION speed     tiny.sleep" in r.stdout
    r = _cli("compare", "missing.json", cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.strip() == "error: missing.json: file not found"


def test_history_report(tmp_path):
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "cases_tiny.py").write_text(CASES.format(coef=1.0, sleep=0.002))
    for _ in range(2):
        assert _cli("run", "--cases", str(cases), "--save", "--repeats", "3", cwd=tmp_path).returncode == 0
        time.sleep(1.1)
    r = _cli("report", "--history", str(cases / "history"), "--out", "h.html", cwd=tmp_path)
    assert r.returncode == 0 and "2 run(s)" in r.stdout
    html = (tmp_path / "h.html").read_text()
    assert "tiny.sleep" in html and "data:image/png;base64" in html
