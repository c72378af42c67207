"""The continuous measure of a run (share of each element's margin used) agrees with judge's verdict,
element by element, for every criterion, on runs perturbed on both sides of each limit."""

from __future__ import annotations

import numpy as np
import pytest

from capacitysim.rules.capacity import Criteria, judge
from capacitysim.workflows.headroom.margins import check_key, margin_ratios

pytestmark = [pytest.mark.swmm]


def _failed_keys(before, after, c, **judged):
    return {check_key(ch) for ch in judge(before, after, c, **judged) if ch.passed is False and check_key(ch)}


def _agree(before, after, c, **judged):
    r = margin_ratios(before, after, c, **judged)
    failed = _failed_keys(before, after, c, **judged)
    over = {k for k, v in r.items() if v > 1}
    assert failed == over, (failed ^ over, {k: r.get(k) for k in failed ^ over})
    return r


@pytest.mark.parametrize("scale", [0.5, 0.99, 1.01, 2.0])
def test_ratios_agree_with_judge_on_every_criterion(tiny_before, scale):
    net, _, before = tiny_before
    b = before["ds"]
    c = Criteria()
    judged = {"outlets": ["MH0002"], "plant": "PLANT", "cso_outfalls": ["CSO1"]}
    a = b.copy(deep=True)
    # move every judged quantity to `scale` of the way to its limit
    qb = b.max_inflow_cfs.values
    a["max_inflow_cfs"].values[:] = qb + scale * (qb * c.outlet_peak_tol_pct / 100.0)
    vb = b.volume_cf.values
    a["volume_cf"].values[:] = vb + scale * np.maximum(vb * c.cso_volume_tol_pct / 100.0, c.cso_volume_tol_cf)
    rb = b.max_d_over_d.values
    lim = np.where(rb <= c.max_d_over_d, c.max_d_over_d, rb + c.d_over_d_tol)
    a["max_d_over_d"].values[:] = rb + scale * (lim - rb)
    a["flooding_volume_cf"].values[:] = b.flooding_volume_cf.values + scale * c.flooding_tol_cf
    db, top = b.max_depth_ft.values, b.rim_depth_ft.values
    dlim = np.maximum(top - c.freeboard_ft, db + c.depth_tol_ft)
    a["max_depth_ft"].values[:] = db + scale * (dlim - db)
    r = _agree(b, a, c, **judged)
    assert r["peak|PLANT"] == pytest.approx(scale, rel=1e-6) and r["cso|CSO1"] == pytest.approx(scale)
    assert any(k.startswith("dD|") for k in r) and any(k.startswith("freeboard|") for k in r)


def test_an_element_already_over_its_limit_is_judged_on_the_tolerance(tiny_before):
    _, _, before = tiny_before
    b = before["ds"].copy(deep=True)
    c = Criteria()
    b["max_d_over_d"].values[0] = 0.9  # over 0.8 before: fails only beyond 0.9 + 0.005
    a = b.copy(deep=True)
    for v, over in ((0.9049, False), (0.9051, True)):
        a["max_d_over_d"].values[0] = v
        r = _agree(b, a, c)
        assert (r[f"dD|{b.link.values[0]}"] > 1) is over


def test_values_that_are_not_numbers(tiny_before):
    """A peak or CSO volume that is not a number is not shown within its limit: it fails; an infinite depth or
    flooded volume is an exceedance; NaN elsewhere (an element without the quantity) and an infinite ratio are
    no values: never failed. The margin ratios agree wherever they are defined."""
    _, _, before = tiny_before
    b = before["ds"]
    c = Criteria()
    judged = {"outlets": ["MH0002"], "plant": "PLANT", "cso_outfalls": ["CSO1"]}
    node0, link0 = str(b.node.values[0]), str(b.link.values[0])

    def failed_with(var, index, value):
        a = b.copy(deep=True)
        a[var].values[index] = value
        return {check_key(ch) for ch in judge(b, a, c, **judged) if ch.passed is False and check_key(ch)}

    cso = list(b.outfall.values).index("CSO1")
    plant = list(b.node.values).index("PLANT")
    assert "cso|CSO1" in failed_with("volume_cf", cso, np.nan)
    assert "peak|PLANT" in failed_with("max_inflow_cfs", plant, np.nan)
    assert "peak|PLANT" in failed_with("max_inflow_cfs", plant, np.inf)
    assert f"flood|{node0}" in failed_with("flooding_volume_cf", 0, np.inf)
    assert f"flood|{node0}" not in failed_with("flooding_volume_cf", 0, np.nan)
    assert f"dD|{link0}" not in failed_with("max_d_over_d", 0, np.inf)
    assert f"dD|{link0}" not in failed_with("max_d_over_d", 0, np.nan)
    # the run before lacking the CSO volume: the check cannot be shown to pass
    b2 = b.copy(deep=True)
    b2["volume_cf"].values[cso] = np.nan
    assert any(ch.element == "CSO1" and ch.passed is False for ch in judge(b2, b.copy(deep=True), c, **judged))
    a = b.copy(deep=True)
    a["flooding_volume_cf"].values[0] = np.inf
    assert margin_ratios(b, a, c, **judged)[f"flood|{node0}"] == np.inf
