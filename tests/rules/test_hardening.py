"""Issue 12: the I/I offset rules refuse what the program does not allow (ratios below one to one,
fractional counts) and figures whose products overflow; the credits commands say so in one line."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from capacitysim.errors import InputError, RefusedError
from capacitysim.rules import ii_offset as r


@pytest.mark.parametrize("ratio", [0.5, 0.999, 0.0, -1.0])
def test_offset_ratio_below_one_to_one_is_refused(ratio):
    """Section F fixes one to one: a ratio of 0.5 would let a connection add twice the flow removed.
    Issue 14: a refusal by the rules (RefusedError, exit 3), no longer bad input."""
    with pytest.raises(RefusedError, match=r"below the one-to-one offset ratio of section F"):
        r.credits_required_gpd(3000.0, offset_ratio=ratio)


@pytest.mark.parametrize("ratio", [math.nan, math.inf, 11.0, "2", None, True])
def test_offset_ratio_not_a_finite_number_up_to_ten_is_bad_input(ratio):
    with pytest.raises(InputError, match=r"offset_ratio must (be in \[1, 10\]|be a finite number in \[1, 10\]|be a number in)"):
        r.credits_required_gpd(3000.0, offset_ratio=ratio)


def test_offset_ratio_one_and_above_accepted():
    assert r.credits_required_gpd(3000.0) == 3000.0
    assert r.credits_required_gpd(3000.0, offset_ratio=r.MIN_OFFSET_RATIO) == 3000.0
    assert r.credits_required_gpd(3000.0, offset_ratio=4) == 12000.0
    assert r.credits_required_gpd(2000.0, offset_ratio=4) == 0.0  # under the threshold: no offset


@pytest.mark.parametrize("ratio, ok", [("0.5", False), ("1", True), ("2", True)])
def test_credits_connection_offset_ratio(run_cli, ratio, ok):
    r_ = run_cli("credits", "connection", "--use", "residence_bedroom=30", "--offset-ratio", ratio, "--json")
    if ok:
        assert r_.exit_code == 0, r_.output
        doc = json.loads(r_.stdout)
        assert doc["credits_required_gpd"] == pytest.approx(doc["peak_flow_gpd"] * float(ratio))
        return
    assert r_.exit_code == 3  # issue 14: refused by section F, not bad input
    lines = r_.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: offset_ratio 0.5 is below the one-to-one offset ratio of section F")


@pytest.mark.parametrize("count", [2.5, -1, 1e12, math.inf])
def test_counts_are_whole_numbers(count):
    with pytest.raises(InputError, match="count"):
        r.sump_pump_gpd(count)
    with pytest.raises(InputError, match="count"):
        r.manhole_joint_leak_gpd("paved", "heavy", count)
    with pytest.raises(InputError, match="count"):
        r.quantify_item({"type": "sump_pump", "count": count})


def test_whole_counts_still_vectorise():
    np.testing.assert_allclose(r.sump_pump_gpd([0, 1, 4]), [0.0, 7200.0, 28800.0])


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: r.tr55_inflow_gpd(1e308, 98.0), r"area_ac must be in \[0, 100000\] ac"),
        (lambda: r.case_by_case_gpd(gpm=1e308, justification="m", engineer="A, PE"), r"item.gpm must be in \[0, "),
        (lambda: r.case_by_case_gpd(gpd=1e308, justification="m", engineer="A, PE"), r"item.gpd must be in \[0, 1e\+09\] gpd"),
        (lambda: r.average_design_flow_gpd([1e308, 1e308], [110.0, 110.0]), "average design flow is not a finite number"),
        (lambda: r.peak_sewage_flow_gpd(1e300, peaking_factor=1e300), "peak sewage flow is not a finite number"),
        (lambda: r.quantify_item({"type": "roof_drain", "area_ac": 1.0, "cover": ["impervious"], "soil": "C"}),
         r"item.cover must be a name"),
    ],
)
def test_products_that_would_overflow_are_refused(call, match):
    with pytest.raises(InputError, match=match):
        call()


def test_credits_connection_with_absurd_counts_is_one_line(run_cli):
    r_ = run_cli("credits", "connection", "--use", "residence_bedroom=1e308", "--json")
    assert r_.exit_code == 2
    assert len(r_.stderr.strip().splitlines()) == 1 and "not a finite number" in r_.stderr
