"""The search of one node (no SWMM): brackets close within the tolerance in few runs on smooth responses,
0 and bounded at the ends of the range, untrusted runs stop the search, bisection as the brute force."""

from __future__ import annotations

import math

import pytest

from capacitysim.workflows.headroom.search import (
    NodeSearch,
    Point,
    element_estimate,
    round_sig,
)


def _drive(search: NodeSearch, response, limit: int = 40) -> NodeSearch:
    """Run the search against ``response(gpd) -> (verdict, ratios)`` until it stops."""
    for _ in range(limit):
        x = search.next_gpd()
        if x is None:
            return search
        verdict, ratios = response(x)
        search.add(Point(x, verdict, ratios, {"criterion": "c", "element": "e", "value": 1.0, "limit": 1.0, "unit": "-"}
                         if verdict == "fail" else None))
    raise AssertionError("the search did not stop")


def _linear(threshold, other=None):
    """Two elements: one reaching its limit at ``threshold`` linearly, one (optional) as a power law."""
    def response(g):
        r = {"peak|A": g / threshold}
        if other is not None:
            t2, b = other
            r["cso|B"] = (g / t2) ** b
        return ("fail" if max(r.values()) > 1 else "pass"), r
    return response


def _check_bracket(s: NodeSearch, threshold: float):
    assert s.status == "ok"
    assert s.lo <= threshold < s.hi  # the passing run passed and the failing one failed
    assert s.hi / s.lo <= 1 + s.tolerance + 1e-12
    assert s.record()["max_connection_gpd"] == s.lo


@pytest.mark.parametrize("screen_error", [1.0, 0.7, 1.5, 0.2, 5.0])
def test_linear_response_closes_in_few_runs(screen_error):
    t = 12_345.0
    s = _drive(NodeSearch("N", "S", 0.05, 100.0, 1e7, screen_gpd=t * screen_error, screen_key="peak|A"), _linear(t))
    _check_bracket(s, t)
    assert s.runs <= (2 if screen_error == 1.0 else 4)


def test_governing_element_changes_between_runs():
    """The screen names A; B (a convex power law) fails first: its share from the first run steers the second."""
    t = 20_000.0
    s = _drive(NodeSearch("N", "S", 0.05, 100.0, 1e7, screen_gpd=t), _linear(t, other=(9_000.0, 1.6)))
    _check_bracket(s, 9_000.0)
    assert s.runs <= 5


def test_step_response_falls_back_to_bisection():
    """A response with no useful ratios (a cliff) still closes, by bisection."""
    def response(g):
        return ("fail" if g > 3_210.0 else "pass"), {}
    s = _drive(NodeSearch("N", "S", 0.05, 100.0, 1e7, screen_gpd=50_000.0), response)
    _check_bracket(s, 3_210.0)


def test_zero_when_the_smallest_flow_fails():
    s = _drive(NodeSearch("N", "S", 0.05, 100.0, 1e7, screen_gpd=50.0), lambda g: ("fail", {"peak|A": 50.0}))
    rec = s.record()
    assert s.status == "zero" and rec["max_connection_gpd"] == 0.0 and rec["passing_gpd"] == 0.0
    assert rec["failing_gpd"] == 100.0 and rec["governing_check"]["criterion"] == "c" and s.runs == 1


def test_bounded_when_the_largest_flow_passes():
    s = _drive(NodeSearch("N", "S", 0.05, 100.0, 5_000.0, screen_gpd=math.inf), lambda g: ("pass", {}))
    rec = s.record()
    assert s.status == "bounded" and rec["bounded"] and rec["max_connection_gpd"] == 5_000.0
    assert rec["failing_gpd"] is None and rec["governing_check"] is None and s.runs == 1


def test_untrusted_run_stops_the_search_without_a_figure():
    s = NodeSearch("N", "S", 0.05, 100.0, 1e7, screen_gpd=1_000.0)
    s.add(Point(s.next_gpd(), "untrusted", {}, None, "connection at N: the engine received ... 3 % off"))
    assert s.next_gpd() is None and s.status == "untrusted"
    assert s.record()["max_connection_gpd"] is None and "not a capacity failure" in s.record()["message"]


def test_bisection_is_the_brute_force():
    t = 7_777.0
    s = _drive(NodeSearch("N", "S", 0.05, 100.0, 1e7, method="bisection"), _linear(t))
    _check_bracket(s, t)
    assert s.points[0].gpd == 1e7 and s.runs >= 8  # log2(ln(1e5) / ln(1.05)) ~ 7.9 halvings after the first run


def test_flows_are_rounded_and_stay_inside_the_bracket():
    assert round_sig(12_345.678) == 12_350.0 and round_sig(0.0123456) == 0.01235
    t = 1_234_567.0
    s = _drive(NodeSearch("N", "S", 0.01, 100.0, 1e7, screen_gpd=t * 3), _linear(t))
    _check_bracket(s, t)
    assert all(p.gpd == round_sig(p.gpd) for p in s.points)
    gs = [p.gpd for p in s.points]
    assert len(set(gs)) == len(gs)  # never the same flow twice


def test_element_estimate():
    assert element_estimate([(1000.0, 0.5)]) == pytest.approx(2000.0)
    # power law r = (g / 3000) ** 2 through two points: exact in log-log
    assert element_estimate([(1000.0, (1 / 3) ** 2), (2000.0, (2 / 3) ** 2)]) == pytest.approx(3000.0)
    # a falling or flat share never governs while it stays below 1
    assert element_estimate([(1000.0, 0.5), (2000.0, 0.4)]) == math.inf
    # regula falsi when a share is not positive (remediation lowers it at small flows)
    assert element_estimate([(1000.0, -0.5), (3000.0, 0.5)]) == pytest.approx(4000.0)
