"""One verdict rule (issue 27, item 2): ``rules.capacity.verdict_of`` is ``rules.verdict.verdict_from_checks``
with the runs' continuity as the condition of trust, so a check the reviewer confirms (``passed`` None) is read
the same way by every workflow: it never fails the verdict."""

from __future__ import annotations

import math

import xarray as xr
from hypothesis import given
from hypothesis import strategies as st

from capacitysim.rules.capacity import Criteria, verdict_of
from capacitysim.rules.verdict import Check, verdict_from_checks


def _run(err_pct: float) -> xr.Dataset:
    return xr.Dataset(attrs={"runoff_continuity_error_pct": 0.0, "flow_routing_continuity_error_pct": err_pct})


def _check(passed) -> Check:
    return Check("max d/D <= 0.8 (gravity sewers)", "P1", 0.5, 0.7, 0.8, "-", passed)


@given(st.lists(st.sampled_from([True, False, None]), max_size=6),
       st.sampled_from([0.0, 0.5, -0.99, 1.5, -3.0, math.nan]), st.sampled_from([0.0, 2.0]))
def test_verdict_of_is_the_one_rule(passed, err_before, err_after):
    checks = [_check(p) for p in passed]
    c = Criteria()
    got = verdict_of(_run(err_before), _run(err_after), checks, c)
    untrusted = not (abs(err_before) <= c.continuity_limit_pct and abs(err_after) <= c.continuity_limit_pct)
    assert got == verdict_from_checks(checks, untrusted=untrusted)
    # by hand: untrusted first, then any False fails, and None never does
    assert got == ("untrusted" if untrusted else "fail" if False in passed else "pass")


def test_a_check_to_confirm_does_not_fail_the_verdict():
    assert verdict_from_checks([_check(None), _check(True)]) == "pass"
    assert verdict_of(_run(0.0), _run(0.0), [_check(None)], Criteria()) == "pass"
