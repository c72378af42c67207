"""CI runs every reference case of benchmarks/ on every commit (the speed cases run on demand)."""

from __future__ import annotations

import pytest

from capacitysim.benchmarking.registry import load_cases
from capacitysim.io.files import bundled_dir

REFERENCE, _SPEED = load_cases(bundled_dir("benchmarks"))


def test_there_are_reference_cases_and_speed_cases():
    assert len(REFERENCE) >= 5
    assert len(_SPEED) >= 2


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_reference_case_passes(name):
    result = REFERENCE[name].evaluate()
    assert result["passed"], result
