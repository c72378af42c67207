"""CI runs every reference case of benchmarks/ on every commit (the speed cases run on demand), and
checks each against its expected value and against the committed baseline (benchmarks/baseline.json)."""

from __future__ import annotations

import json

import pytest

from capacitysim.benchmarking.compare import compare
from capacitysim.benchmarking.registry import count_cases, load_cases
from capacitysim.io.files import bundled_dir

REFERENCE, _SPEED = load_cases(bundled_dir("benchmarks"))
BASELINE = json.loads((bundled_dir("benchmarks") / "baseline.json").read_text())


def test_there_are_reference_cases_and_speed_cases():
    assert len(REFERENCE) >= 10
    assert len(_SPEED) >= 5


def test_the_baseline_covers_every_case():
    assert set(BASELINE["reference"]) == set(REFERENCE)
    assert set(BASELINE["speed"]) == set(_SPEED)
    assert set(BASELINE["count"]) == set(count_cases())
    measured = {k: s for k, s in BASELINE["speed"].items() if "skipped" not in s}
    assert len(measured) >= 5
    # every sample stored, not only the median (issue 17), with its CPU and wall time and the load average; at least
    # 5, or the case's own minimum where a sample is minutes long (issue 30's scaling cases: 3)
    for k, s in measured.items():
        assert s["ratio"] > 0 and s["spread_rel"] >= 0, k
        assert len(s["samples"]["ratio"]) == len(s["samples"]["load1"]) == s["n_samples"], k
        assert s["n_samples"] >= min(5, _SPEED[k].min_samples), k


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.swmm) if n.startswith("swmm.") else n
                                  for n in sorted(REFERENCE)])
def test_reference_case_passes_and_matches_the_baseline(name):
    result = REFERENCE[name].evaluate()
    assert result["passed"], result
    base = {"reference": {name: BASELINE["reference"][name]}}
    findings = [f for f in compare(base, {"reference": {name: result}}) if f.regression]
    assert findings == [], findings


#: What each speed case starts (the test tier markers): the engine, a server; the rest runs in the fast tier.
_SPEED_MARKS = {"capacity.": pytest.mark.swmm, "corpus.": pytest.mark.swmm, "network.": pytest.mark.swmm,
                "service.": pytest.mark.server, "sweep.": pytest.mark.slow, "scaling.": pytest.mark.dask}


@pytest.mark.parametrize("name", [pytest.param(n, marks=[m for p, m in _SPEED_MARKS.items() if n.startswith(p)])
                                  for n in sorted(_SPEED)])
def test_every_speed_case_sets_up_and_runs_once(name):
    """A speed case that no longer runs (issue 30: bank.withdrawals.100 deposited without the quantification the
    bank has required since, and `bench run` crashed at its end) is found here, not by the one who stores a baseline."""
    from capacitysim.benchmarking.registry import Paired, SkipCase

    try:
        made = _SPEED[name].setup()
    except SkipCase as why:
        pytest.skip(str(why))
    calls = (made.case, made.reference) if isinstance(made, Paired) else (made,)
    try:
        for call in calls:
            call()
    finally:
        if isinstance(made, Paired) and made.close is not None:
            made.close()


@pytest.mark.swmm
@pytest.mark.parametrize("name", sorted(count_cases()))
def test_count_case_is_not_above_the_baseline(name):
    """A count that grew (more SWMM runs per headroom search) is a regression of make test, not a surprise for the
    next one to store a baseline (issue 30: runs_total had grown from 16 to 18 unrecorded)."""
    result = count_cases()[name].evaluate()
    findings = [f for f in compare({"count": {name: BASELINE["count"][name]}}, {"count": {name: result}})
                if f.regression]
    assert findings == [], findings
