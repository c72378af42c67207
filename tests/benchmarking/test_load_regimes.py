"""Issue 30: speed ratios and the machine's load, on a pair measured on the 2-core development machine.

``tests/data/bench/pair-*.json`` are real ``capacitysim bench run --kind speed --only "hydrology.*"`` documents of
one session (2026-12-02), no code changed between them: ``q1`` and ``q2`` on the quiet machine, ``l1`` with three
busy processes (``while True: pass``) started 50 s before; ``old`` with the np.sort reference the hydrology cases
had until then, ``new`` with each case's own reference (the same formula in plain numpy; the FFT convolution of
the unit hydrograph's shape). Both ran with the heap kept for reuse (:func:`~capacitysim.benchmarking.runner.
keep_freed_memory`).

What the pair shows, and these tests hold:

* a load moves a ratio beyond the 5 % threshold with no code change: ``hydrology.runoff_depth.1e6`` +30 % against
  np.sort and +12 % against its own reference (a kernel streaming memory slows more than one in cache);
* so runs of different load regimes are never a regression (inconclusive, naming both regimes);
* two quiet runs of the same code agree: no regression on either case.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from capacitysim.benchmarking.compare import DEFAULT_THRESHOLD, compare
from capacitysim.benchmarking.runner import keep_freed_memory, run_cases

from .timer_double import FakeClock, fake_speed_case

PAIR = Path(__file__).resolve().parents[1] / "data" / "bench"


def _doc(name: str) -> dict:
    return json.loads((PAIR / f"pair-{name}.json").read_text())


def test_the_measured_runs_are_in_the_regimes_they_were_made_in():
    for name, regimes in (("old-q1", {"quiet"}), ("new-q1", {"quiet"}), ("new-q2", {"quiet"}),
                          ("old-l1", {"shared", "oversubscribed"}), ("new-l1", {"shared"})):
        doc = _doc(name)
        assert doc["environment"]["load_regime"]["regime"] in regimes, name
        assert all(c["load_regime"]["regime"] in regimes for c in doc["speed"].values()), name
        assert doc["environment"]["allocator"].startswith("glibc heap kept for reuse")


@pytest.mark.parametrize("kind, moved_pct", [("old", 25.0), ("new", 10.0)])
def test_a_load_moves_a_ratio_and_the_comparison_says_inconclusive(kind, moved_pct):
    res = compare(_doc(f"{kind}-q1"), _doc(f"{kind}-l1"))
    f = {x.name: x for x in res.findings}["hydrology.runoff_depth.1e6"]
    assert f.detail["change_pct"] > moved_pct > 100 * DEFAULT_THRESHOLD  # moved, by more than the threshold
    assert f.detail["interval_pct"][0] > 100 * DEFAULT_THRESHOLD  # beyond doubt: a regression but for the regimes
    assert f.outcome == "inconclusive" and "different load regimes" in f.message
    assert "the baseline quiet (1-min load 0." in f.message
    assert "this run shared (1-min load" in f.message or "this run oversubscribed (1-min load" in f.message
    assert not res.of("regression") and res.exit_code == 4


def test_two_quiet_runs_of_the_same_code_agree():
    res = compare(_doc("new-q1"), _doc("new-q2"))
    assert res.outcome == "ok", [f.message for f in res.findings]
    assert {f.name for f in res.of("ok")} == {"hydrology.runoff_depth.1e6", "hydrology.unit_hydrograph.1e4"}


def test_the_case_with_its_own_reference_moves_less_than_against_np_sort():
    old = {f.name: f.detail["change_pct"] for f in compare(_doc("old-q1"), _doc("old-l1")).findings}
    new = {f.name: f.detail["change_pct"] for f in compare(_doc("new-q1"), _doc("new-l1")).findings}
    assert abs(new["hydrology.runoff_depth.1e6"]) < abs(old["hydrology.runoff_depth.1e6"]) / 2


def test_a_run_records_its_load_regime_and_allocator():
    clock = FakeClock(11, load=3.4)
    doc = run_cases({}, {"fake.case": fake_speed_case(clock)}, timer=clock)
    case = doc["speed"]["fake.case"]
    assert case["load_regime"]["load1_median"] == 3.4 and case["load_regime"]["regime"] in ("shared", "oversubscribed")
    assert doc["environment"]["load_regime"]["regime"] in ("quiet", "shared", "oversubscribed")
    assert doc["environment"]["allocator"] == keep_freed_memory()
