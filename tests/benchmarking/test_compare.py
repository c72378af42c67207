"""bench compare catches a perturbed reference value, an injected slow-down (on the fake clock), a grown\ncount; reads the former baseline format; the CLI end to end."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from capacitysim.benchmarking.compare import compare
from capacitysim.benchmarking.registry import ReferenceCase
from capacitysim.benchmarking.runner import run_cases
from capacitysim.errors import InputError
from capacitysim.hydrology import runoff_depth

from .timer_double import FakeClock, fake_doc, fake_speed_case

pytestmark = [pytest.mark.slow]


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


def test_injected_slowdown_is_caught_through_run_cases():
    """run_cases with the fake clock: a case made 40 % slower is the one regression; the same case is not."""
    def run(seed, case_s):
        clock = FakeClock(seed)
        return run_cases({}, {"double.fake": fake_speed_case(clock, "double.fake", case_s=case_s)}, timer=clock)

    base = run(1, 0.1)
    assert base["speed"]["double.fake"]["reference"] == "fake reference"
    assert [f.name for f in compare(base, run(2, 0.14)) if f.regression] == ["double.fake"]
    assert compare(base, run(3, 0.1)).outcome == "ok"


def test_a_baseline_in_the_former_format_is_still_compared_and_says_so():
    """Schema 1 (a median ratio per case, no samples): the current run's median interval against it."""
    old = {"schema": 1, "speed": {"fake.case": {"ratio": 1.0, "spread_rel": 0.02, "median_s": 0.1}}}
    for slowdown, outcome in ((1.0, "ok"), (1.3, "regression")):
        res = compare(old, fake_doc(4, case_s=0.1, ref_s=0.1, slowdown=slowdown))
        (f,) = res.findings
        assert f.outcome == outcome, f.message
        assert "former format" in f.message and "bench run --out NEW.json" in f.message
    # and two documents without samples cannot be ranked: inconclusive, never "no regression"
    res = compare(old, {"speed": {"fake.case": {"ratio": 1.0}}})
    assert res.outcome == "inconclusive" and "no samples" in res.findings[0].message


def test_counts_higher_is_worse():
    base = {"count": {"h": {"version": 1, "values": {"runs_per_node": 2.0}, "tolerance": {"runs_per_node": 0.0}}}}
    more = {"count": {"h": {"version": 1, "values": {"runs_per_node": 2.5}, "tolerance": {"runs_per_node": 0.0}}}}
    fewer = {"count": {"h": {"version": 1, "values": {"runs_per_node": 1.5}, "tolerance": {"runs_per_node": 0.0}}}}
    assert [f.outcome for f in compare(base, more)] == ["regression"]
    assert "grew from 2 to 2.5" in compare(base, more).findings[0].message
    assert [f.outcome for f in compare(base, fewer)] == ["note"] and compare(base, fewer).exit_code == 0
    assert compare(base, base).outcome == "ok"


def test_a_skipped_case_is_a_note_and_never_compared():
    doc = fake_doc(5, case_s=0.1, ref_s=0.1)
    skipped = {"speed": {"fake.case": {"version": 1, "description": "d", "skipped": "corpus absent"}}}
    with pytest.raises(InputError, match="nothing to compare: every case in common was skipped"):
        compare(doc, skipped)
    both = json.loads(json.dumps(doc))
    both["speed"]["other"] = {"version": 1, "skipped": "hook"}
    res = compare(doc, both)
    assert {(f.name, f.kind, f.outcome) for f in res} == {("fake.case", "speed", "ok"), ("other", "skipped", "note")}


CASES = '''
from capacitysim.benchmarking import reference_case, speed_case
COEF = {coef}

@reference_case("tiny.coef", expected={{"x": 2.0}}, tolerance={{"x": 1e-9}}, source="test double")
def _c():
    return {{"x": 2.0 * COEF}}

@speed_case("tiny.sleep", description="sleep", repeats=3, basis="wall")
def _s():
    import time
    return lambda: time.sleep({sleep})
'''


def _cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "capacitysim", "bench", *args], capture_output=True, text=True, cwd=cwd, check=False)


def test_cli_run_and_compare_end_to_end(tmp_path):
    """Real `bench run` / `bench compare` in a child process. The speed case is timed for real, so
    nothing is asserted on its figures beyond their shape; the outcomes are the reference case's."""
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "cases_tiny.py").write_text(CASES.format(coef=1.0, sleep=0.001))
    r = _cli("run", "--cases", str(cases), "--out", "base.json", "--repeats", "6", "--budget", "1", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "base.json").read_text())
    assert doc["schema"] == 2 and doc["reference"]["tiny.coef"]["passed"]
    speed = doc["speed"]["tiny.sleep"]
    assert speed["n_samples"] >= 6 and len(speed["samples"]["ratio"]) == speed["n_samples"] and speed["ratio"] > 0
    assert len(doc["environment"]["loadavg_start"]) == 3 and "ratio" in r.stdout and "reference" in r.stdout
    r = _cli("compare", "base.json", "--cases", str(cases), "--kind", "reference", cwd=tmp_path)
    assert r.returncode == 0 and "outcome: no regression (exit 0)" in r.stdout, r.stdout + r.stderr
    # A perturbed coefficient: reported, exit 1.
    (cases / "cases_tiny.py").write_text(CASES.format(coef=1.01, sleep=0.001))
    r = _cli("compare", "base.json", "--cases", str(cases), "--kind", "reference", cwd=tmp_path)
    assert r.returncode == 1 and "REGRESSION   reference tiny.coef" in r.stdout, r.stdout
    r = _cli("compare", "missing.json", cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.strip() == "error: missing.json: file not found"


def _docs(tmp_path, base_load: float = 0.5, **current):
    base, cur = tmp_path / "base.json", tmp_path / "cur.json"
    base.write_text(json.dumps(fake_doc(1, case_s=0.1, ref_s=0.1, load=base_load)))
    cur.write_text(json.dumps(fake_doc(2, case_s=0.1, ref_s=0.1, **current)))
    return str(base), str(cur)


def test_cli_exit_codes_0_1_4_2(tmp_path, run_cli):
    from .timer_double import LOADED_NOISE

    r = run_cli("bench", "compare", *_docs(tmp_path))
    assert r.exit_code == 0 and "outcome: no regression (exit 0)" in r.stdout, r.output
    r = run_cli("bench", "compare", *_docs(tmp_path, slowdown=1.10))
    assert r.exit_code == 1 and "REGRESSION   speed     fake.case: slower by +" in r.stdout, r.output
    assert "99 % interval" in r.stdout and "outcome: REGRESSION (exit 1)" in r.stdout
    # a noisy run in the baseline's regime (oversubscribed both): too noisy
    r = run_cli("bench", "compare", *_docs(tmp_path, base_load=3.8, noise=LOADED_NOISE, inflation=1.25, load=3.8))
    assert r.exit_code == 4 and "INCONCLUSIVE speed     fake.case: too noisy to decide" in r.stdout, r.output
    assert "--repeats" in r.stdout and "outcome: INCONCLUSIVE (exit 4)" in r.stdout
    # the same run against a quiet baseline: another regime, never a regression (issue 30)
    r = run_cli("bench", "compare", *_docs(tmp_path, noise=LOADED_NOISE, inflation=1.25, load=3.8))
    assert r.exit_code == 4 and "fake.case: not judged: the runs were made in different load regimes" in r.stdout
    assert "different load regimes" in r.stdout.splitlines()[-1]
    r = run_cli("bench", "compare", *_docs(tmp_path, slowdown=1.10), "--json")
    out = json.loads(r.stdout)
    assert r.exit_code == 1 and out["outcome"] == "regression" and out["exit_code"] == 1 and "Hodges-Lehmann" in out["rule"]
    # an empty comparison is an error (2), not "no regression"
    base, _ = _docs(tmp_path)
    other = tmp_path / "other.json"
    other.write_text(json.dumps(fake_doc(3, name="other.case", case_s=0.1, ref_s=0.1)))
    r = run_cli("bench", "compare", base, str(other))
    assert r.exit_code == 2 and "nothing to compare" in r.stderr, r.output


def test_help_explains_ratio_and_the_exit_codes(run_cli):
    for args in (("bench", "--help"), ("bench", "compare", "--help"), ("bench", "report", "--help")):
        text = " ".join(run_cli(*args).stdout.split())
        assert "ratio is its time divided by the time of a reference" in text
        assert "ratio is its time divided by the time of a reference" in text
        if args[-2] != "report":
            assert "4" in text and "inconclusive" in text and "--repeats" in text


def test_history_report(tmp_path, run_cli):
    history = tmp_path / "history"
    history.mkdir()
    for k in range(3):
        (history / f"r{k}.json").write_text(json.dumps(fake_doc(k + 1, case_s=0.1, ref_s=0.1, slowdown=1 + 0.1 * k)))
    old = {"schema": 1, "environment": {"timestamp": "2025-01-01T00:00:00+00:00"},
           "speed": {"fake.case": {"ratio": 1.0, "spread_rel": 0.01}}}
    (history / "old.json").write_text(json.dumps(old))
    r = run_cli("bench", "report", "--history", str(history), "--out", str(tmp_path / "h.html"))
    assert r.exit_code == 0 and "4 run(s)" in r.stdout, r.output
    html = (tmp_path / "h.html").read_text()
    assert "fake.case" in html and "data:image/png;base64" in html
    assert "ratio is its time divided by the time of a reference" in html and "95 % interval" in html


def test_a_paired_case_is_closed_once_measured_even_when_it_raises():
    """What a case's setup starts (a dask cluster, a server) is stopped once the case is measured, never left running
    beside the cases after it (issue 30's scaling cases start clusters of 1-4 workers)."""
    from capacitysim.benchmarking.registry import Paired, SpeedCase

    clock = FakeClock(seed=7)
    closed = []

    def setup(fail):
        def boom():
            raise RuntimeError("the case crashed")
        return Paired(boom if fail else clock.call(0.3, 0.01), clock.call(0.3, 0.01), "fake", lambda: closed.append(fail))

    doc = run_cases({}, {"fake.ok": SpeedCase("fake.ok", lambda: setup(False), "fake", min_samples=3)}, timer=clock)
    assert doc["speed"]["fake.ok"]["n_samples"] >= 3 and closed == [False]
    with pytest.raises(RuntimeError, match="crashed"):
        run_cases({}, {"fake.bad": SpeedCase("fake.bad", lambda: setup(True), "fake", min_samples=3)}, timer=clock)
    assert closed == [False, True]
