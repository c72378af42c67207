"""Runs that stop once their failure is certain (policies FAIL_WHEN_CERTAIN and STORM_RESPONSE_WINDOW).

A stopped run must give the verdict, the governing check (value included) and the margins of the complete
run of the same connection; a run that passes is never stopped; a stop rule that never triggers leaves the
engine's statistics bit for bit as the complete run's (the same routing steps)."""

from __future__ import annotations

import json
import math

import pytest

from capacitysim.network.engine import run_inp
from capacitysim.workflows.headroom.tasks import point_task, simulated_hr

from .conftest import TINY

pytestmark = [pytest.mark.swmm]


def test_a_stop_rule_that_never_triggers_changes_nothing(tmp_path):
    plain = run_inp(TINY, tmp_path / "plain")
    never = run_inp(TINY, tmp_path / "never", stop_rule={"not_before_days": 0.0, "every_steps": 1,
                                                         "node_max_depth": [["MH0002", 1e9]], "link_max_flow": [["P0001", 1e9]],
                                                         "node_total_inflow": [["CSO1", 1e12]]})
    a, b = (json.loads(r.stats.read_text()) for r in (plain, never))
    assert b["stopped"] is None and a.get("stopped") is None
    for k in ("node_stats", "link_stats", "routing_totals", "flow_routing_continuity_error_pct", "pump_stats"):
        assert a[k] == b[k], k  # exactly: swmm_step one by one is swmm_run's loop


def test_a_triggered_rule_stops_the_run_and_says_where(tmp_path):
    r = run_inp(TINY, tmp_path / "low", stop_rule={"not_before_days": 0.25, "every_steps": 1, "node_max_inflow": [["PLANT", 0.0]]})
    st = json.loads(r.stats.read_text())["stopped"]
    assert st["kind"] == "node_max_inflow" and st["id"] == "PLANT" and st["value"] > 0.0 == st["threshold"]
    assert 0.25 <= st["elapsed_days"] < 0.26  # the first look at or after not_before_days


@pytest.mark.parametrize("node, gpd", [("MH0001", 12000.0), ("MH0005", 9000.0), ("MH0009", 4000.0), ("MH0010", 2200.0)])
def test_a_stopped_failing_run_reports_what_the_complete_run_reports(tiny_before, node, gpd):
    net, storm, before = tiny_before
    assert before["response_end_hr"] < simulated_hr(before["ds"])
    early = point_task(net, storm, before, node, gpd, None, True)
    full = point_task(net, storm, before, node, gpd, None, False)
    assert full["verdict"] == early["verdict"] == "fail", (early, full)
    assert full["stopped_hr"] is None and full["simulated_hr"] == simulated_hr(before["ds"])
    assert before["response_end_hr"] <= early["stopped_hr"] < full["simulated_hr"]
    g, h = early["governing"], full["governing"]
    assert (g["criterion"], g["element"], g["limit"]) == (h["criterion"], h["element"], h["limit"])
    assert g["value"] == pytest.approx(h["value"], rel=1e-9)  # the storm's peak had passed: the same value
    assert g["ratio"] == pytest.approx(h["ratio"], rel=1e-9)


def test_a_passing_run_runs_to_its_end(tiny_before):
    net, storm, before = tiny_before
    early = point_task(net, storm, before, "MH0009", 1000.0, None, True)
    full = point_task(net, storm, before, "MH0009", 1000.0, None, False)
    assert early["verdict"] == full["verdict"] == "pass" and early["stopped_hr"] is None
    assert early["ratios"] == full["ratios"] and math.isclose(early["simulated_hr"], full["simulated_hr"])
